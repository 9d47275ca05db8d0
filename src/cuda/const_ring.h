/* Constant memory without a race.
 *
 * A __constant__ array is one per process and device. If two calls on two streams copied
 * their masks into the same array, one kernel could read the other's mask (the bug class
 * DESIGN.md warns about). A ring splits the array into slots; a call takes the next slot,
 * makes its stream wait until the slot's previous kernel has finished (an event), copies
 * its mask in on its own stream, launches, and records the slot's event. Everything stays
 * asynchronous; a mutex orders the host-side steps of concurrent callers. */
#ifndef MH_CONST_RING_H
#define MH_CONST_RING_H

#include "common.cuh"

#include <pthread.h>

enum { MH_CONST_RING_SLOTS = 3, MH_CONST_RING_MAX_DEVICES = 64 };

typedef struct mh_const_ring {
    pthread_mutex_t lock;
    const void *symbol; /* the __constant__ array: MH_CONST_RING_SLOTS slots of slot_bytes */
    size_t slot_bytes;
    int next[MH_CONST_RING_MAX_DEVICES];
    cudaEvent_t done[MH_CONST_RING_MAX_DEVICES][MH_CONST_RING_SLOTS];
} mh_const_ring;

/* Takes a slot and queues the copy of `bytes` bytes of device memory `src` into it. On
 * MH_OK the ring is locked: call mh_const_ring_end, whatever the launch does. */
mh_status mh_const_ring_begin(mh_const_ring *ring, mh_context *ctx, const void *src, size_t bytes,
                              int *slot);
/* Records that the slot's kernel was queued, and unlocks. */
void mh_const_ring_end(mh_const_ring *ring, mh_context *ctx, int slot);

/* begin, launch(ctx, a, slot), end: a launch whose kernel reads the ring's slot. */
typedef mh_status (*mh_slot_launch)(mh_context *ctx, const mh_args *a, int slot);
mh_status mh_const_ring_launch(mh_const_ring *ring, mh_context *ctx, const void *src, size_t bytes,
                               mh_slot_launch launch, const mh_args *a);

#endif

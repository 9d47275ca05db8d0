#include "const_ring.h"

static mh_status slot_event(mh_const_ring *r, mh_context *ctx, int slot, cudaEvent_t *ev)
{
    cudaEvent_t *e = &r->done[ctx->device][slot];
    if (!*e) MH_CUDA_TRY(ctx, cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    *ev = *e;
    return MH_OK;
}

mh_status mh_const_ring_begin(mh_const_ring *r, mh_context *ctx, const void *src, size_t bytes,
                              int *slot)
{
    if (ctx->device >= MH_CONST_RING_MAX_DEVICES)
        return mh_fail(ctx, MH_ERR_UNSUPPORTED, "constant-memory ring: device %d >= %d",
                       ctx->device, MH_CONST_RING_MAX_DEVICES);
    if (bytes > r->slot_bytes)
        return mh_fail(ctx, MH_ERR_INTERNAL, "constant-memory ring: %zu bytes > slot of %zu",
                       bytes, r->slot_bytes);
    pthread_mutex_lock(&r->lock);
    int s = r->next[ctx->device];
    r->next[ctx->device] = (s + 1) % MH_CONST_RING_SLOTS;
    cudaEvent_t ev;
    mh_status st = slot_event(r, ctx, s, &ev);
    if (st == MH_OK)
        st = mh_cuda_status(ctx, cudaStreamWaitEvent(mh_stream(ctx), ev, 0),
                            "waiting for the constant-memory slot");
    if (st == MH_OK)
        st = mh_cuda_status(ctx,
                            cudaMemcpyToSymbolAsync(r->symbol, src, bytes, (size_t)s * r->slot_bytes,
                                                    cudaMemcpyDeviceToDevice, mh_stream(ctx)),
                            "copying the mask to constant memory");
    if (st != MH_OK) {
        pthread_mutex_unlock(&r->lock);
        return st;
    }
    *slot = s;
    return MH_OK;
}

void mh_const_ring_end(mh_const_ring *r, mh_context *ctx, int slot)
{
    /* Even after a failed launch the event is recorded, so the slot never waits forever. */
    cudaEventRecord(r->done[ctx->device][slot], mh_stream(ctx));
    pthread_mutex_unlock(&r->lock);
}

mh_status mh_const_ring_launch(mh_const_ring *r, mh_context *ctx, const void *src, size_t bytes, mh_slot_launch launch,
                               const mh_args *a)
{
    int slot = 0;
    mh_status s = mh_const_ring_begin(r, ctx, src, bytes, &slot);
    if (s != MH_OK) return s;
    s = launch(ctx, a, slot);
    mh_const_ring_end(r, ctx, slot);
    return s;
}

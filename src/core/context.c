/* Contexts: one per device (or MH_CPU), holding the stream, a reusable device workspace,
 * lazily created vendor resources and the lock that serializes calls on it. The detail of a
 * failure is kept per thread, so that threads sharing a context each read their own. */
#include "internal.h"
#include "kernel_loading.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The calling thread's last failure: on which context, and its detail. */
static _Thread_local struct {
    const mh_context *ctx;
    char text[1024];
} last_error;

mh_status mh_fail(mh_context *ctx, mh_status s, const char *fmt, ...)
{
    if (ctx) {
        char text[sizeof last_error.text]; /* fmt's arguments may be the old detail itself */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        memcpy(last_error.text, text, sizeof text);
        last_error.ctx = ctx;
    }
    return s;
}

void mh_clear_error(mh_context *ctx)
{
    if (ctx && last_error.ctx == ctx) last_error.text[0] = '\0';
}


int mh_is_cpu(const mh_context *ctx) { return ctx->device == MH_CPU; }

int mh_cuda_device_count(void)
{
    static int cached = -1;
    if (cached < 0) {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) {
            count = 0;
            cudaGetLastError(); /* a machine without a driver is not an error state */
        }
        cached = count;
    }
    return cached;
}

mh_status mh_context_create(mh_context **ctx, int device) { return mh_context_create_ex(ctx, device, 0); }

/* The context's device facts: SM count, compute capability and name. The CPU backend asks CUDA
 * nothing: any runtime call (cudaGetLastError too) starts CUDA's runtime, which loads its driver,
 * and a CPU call's buffer check then starts the driver (a fifth of a second a process on the H200
 * machine, where the CLI's CPU calls are the oracles' hundreds of processes). */
static void read_device(mh_context *c)
{
    if (c->device == MH_CPU) {
        snprintf(c->name, sizeof c->name, "CPU");
        return;
    }
    if (cudaDeviceGetAttribute(&c->sm_count, cudaDevAttrMultiProcessorCount, c->device) != cudaSuccess) {
        cudaGetLastError();
        c->sm_count = 0; /* mh_resident_blocks falls back to a default */
    }
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, c->device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, c->device) != cudaSuccess) {
        cudaGetLastError();
        major = minor = 0; /* rows that need a capability refuse with the reason */
    }
    c->cc = 10 * major + minor;
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, c->device) == cudaSuccess) {
        snprintf(c->name, sizeof c->name, "%s", prop.name);
    } else {
        cudaGetLastError();
        snprintf(c->name, sizeof c->name, "unknown CUDA device");
    }
}

mh_status mh_context_create_ex(mh_context **ctx, int device, unsigned flags)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    *ctx = NULL;
    if (flags & ~(unsigned)MH_CONTEXT_LAZY_LOADING) return MH_ERR_INVALID_ARGUMENT;
    if (device != MH_CPU && (device < 0 || device >= mh_cuda_device_count()))
        return MH_ERR_NO_DEVICE;
    mh_context *c = calloc(1, sizeof *c);
    if (!c) return MH_ERR_OUT_OF_MEMORY;
    c->device = device;
    read_device(c);
    c->rules = mh_auto_rules_for(device == MH_CPU ? NULL : c->name);
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return MH_ERR_INTERNAL;
    }
    mh_device_guard guard; /* kernels loaded now: a first launch would wait for the device */
    if (device != MH_CPU && !(flags & MH_CONTEXT_LAZY_LOADING) && mh_device_enter(c, &guard) == MH_OK) {
        mh_load_kernels(device, c->cc);
        mh_device_leave(&guard);
    }
    *ctx = c;
    return MH_OK;
}

void mh_context_destroy(mh_context *ctx)
{
    if (!ctx) return;
    mh_device_guard guard;
    int on_device = !mh_is_cpu(ctx) && mh_device_enter(ctx, &guard) == MH_OK;
    for (int i = 0; i < MH_SLOT_COUNT; ++i)
        if (ctx->slots[i].data && ctx->slots[i].destroy) ctx->slots[i].destroy(ctx->slots[i].data);
    if (ctx->workspace) cudaFree(ctx->workspace);
    if (ctx->fence) cudaEventDestroy((cudaEvent_t)ctx->fence);
    if (on_device) mh_device_leave(&guard);
    if (last_error.ctx == ctx) last_error.ctx = NULL; /* a later context may reuse the address */
    mh_forget_select(ctx);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

mh_status mh_context_set_stream(mh_context *ctx, void *cuda_stream)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (mh_is_cpu(ctx) && cuda_stream)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "cuda_stream = %p: a CPU context has no stream", cuda_stream);
    if (cuda_stream) {
        int dev = -1;
        if (cudaStreamGetDevice((cudaStream_t)cuda_stream, &dev) != cudaSuccess) {
            cudaGetLastError();
            return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "cuda_stream = %p is not a valid stream",
                           cuda_stream);
        }
        if (dev != ctx->device)
            return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                           "cuda_stream = %p belongs to device %d, the context to device %d",
                           cuda_stream, dev, ctx->device);
    }
    mh_context_lock(ctx);
    ctx->stream = cuda_stream;
    mh_context_unlock(ctx);
    return MH_OK;
}

mh_status mh_context_set_precision(mh_context *ctx, mh_precision precision)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if ((unsigned)precision > MH_PRECISION_PER_ELEMENT)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "precision = %d is not normwise (%d) or per-element (%d)",
                       (int)precision, MH_PRECISION_NORMWISE, MH_PRECISION_PER_ELEMENT);
    mh_context_lock(ctx);
    ctx->precision = precision;
    mh_context_unlock(ctx);
    return MH_OK;
}

mh_precision mh_context_precision(const mh_context *ctx)
{
    if (!ctx) return MH_PRECISION_NORMWISE;
    mh_context_lock((mh_context *)ctx);
    const mh_precision p = ctx->precision;
    mh_context_unlock((mh_context *)ctx);
    return p;
}

void *mh_context_stream(mh_context *ctx)
{
    mh_context_lock(ctx);
    void *stream = ctx->stream;
    mh_context_unlock(ctx);
    return stream;
}

mh_status mh_context_synchronize(mh_context *ctx)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (mh_is_cpu(ctx)) return MH_OK;
    mh_device_guard guard;
    mh_status s = mh_device_enter(ctx, &guard);
    if (s != MH_OK) return s;
    /* the lock is not held while this thread waits: others may queue work */
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)mh_context_stream(ctx));
    mh_device_leave(&guard);
    if (e != cudaSuccess)
        return mh_fail(ctx, MH_ERR_CUDA, "cudaStreamSynchronize: %s (%s)", cudaGetErrorString(e),
                       cudaGetErrorName(e));
    return MH_OK;
}

int mh_context_device(const mh_context *ctx) { return ctx ? ctx->device : MH_CPU; }

const char *mh_context_error(const mh_context *ctx)
{
    if (!ctx) return "ctx is NULL";
    return last_error.ctx == ctx ? last_error.text : "";
}

void mh_context_lock(mh_context *ctx) { pthread_mutex_lock(&ctx->lock); }
void mh_context_unlock(mh_context *ctx) { pthread_mutex_unlock(&ctx->lock); }

/* Devices whose primary context this thread has made current (cudaSetDevice), by index. */
static _Thread_local unsigned char made_current[64];

mh_status mh_device_enter(mh_context *ctx, mh_device_guard *guard)
{
    guard->switched = 0;
    guard->previous = 0;
    cudaError_t e = cudaGetDevice(&guard->previous);
    /* Set also where it is already the current device, once per thread: on a thread that has
     * made no CUDA call yet this makes the primary context current, without which the driver's
     * queries (the allocation-size check) fail and would be skipped. */
    const int known = ctx->device < 64 && made_current[ctx->device];
    if (e == cudaSuccess && (guard->previous != ctx->device || !known)) {
        e = cudaSetDevice(ctx->device);
        guard->switched = e == cudaSuccess && guard->previous != ctx->device;
        if (e == cudaSuccess && ctx->device < 64) made_current[ctx->device] = 1;
    }
    if (e != cudaSuccess)
        return mh_fail(ctx, MH_ERR_CUDA, "selecting device %d: %s", ctx->device,
                       cudaGetErrorString(e));
    return MH_OK;
}

void mh_device_leave(const mh_device_guard *guard)
{
    if (guard->switched) cudaSetDevice(guard->previous);
}

/* Orders the call in progress after the last call that used shared state, when that one ran
 * on another stream: the new stream waits for the event recorded after it (mh_shared_release).
 * Nothing waits on the host. */
static mh_status fence_shared(mh_context *ctx)
{
    if (mh_is_cpu(ctx)) return MH_OK;
    if (!ctx->fence) { /* the first use: nothing to wait for */
        cudaEvent_t ev;
        cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return mh_fail(ctx, MH_ERR_CUDA, "creating the context's stream fence: %s", cudaGetErrorString(e));
        }
        ctx->fence = ev;
    } else if (ctx->shared_stream != ctx->stream) {
        cudaError_t e = cudaStreamWaitEvent((cudaStream_t)ctx->stream, (cudaEvent_t)ctx->fence, 0);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return mh_fail(ctx, MH_ERR_CUDA, "ordering the call after the context's work on another stream: %s",
                           cudaGetErrorString(e));
        }
    }
    ctx->shared_stream = ctx->stream;
    ctx->shared_touched = 1;
    return MH_OK;
}

void mh_shared_release(mh_context *ctx)
{
    if (mh_is_cpu(ctx) || !ctx->shared_touched) return;
    ctx->shared_touched = 0;
    if (cudaEventRecord((cudaEvent_t)ctx->fence, (cudaStream_t)ctx->stream) != cudaSuccess) {
        cudaGetLastError();
        /* without the record the next stream could overtake this call: wait instead */
        cudaStreamSynchronize((cudaStream_t)ctx->stream);
        cudaGetLastError();
    }
}

mh_slot *mh_context_slot(mh_context *ctx, mh_slot_id id)
{
    return fence_shared(ctx) == MH_OK ? &ctx->slots[id] : NULL;
}

/* *data, device memory of *have bytes, grown to at least `bytes` in stream order: the old block
 * freed and the new one allocated on the call's stream, after every earlier use (the caller's
 * fence), so nothing waits on the host. `what` names it in errors. */
static mh_status grow_on_stream(mh_context *ctx, const char *what, size_t bytes, void **data, size_t *have)
{
    if (bytes <= *have) return MH_OK;
    cudaStream_t stream = (cudaStream_t)ctx->stream;
    if (*data) cudaFreeAsync(*data, stream);
    *data = NULL, *have = 0;
    const cudaError_t e = cudaMallocAsync(data, bytes, stream);
    if (e != cudaSuccess) {
        cudaGetLastError();
        *data = NULL;
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "%s: cudaMallocAsync(%zu bytes): %s", what, bytes,
                       cudaGetErrorString(e));
    }
    *have = bytes;
    return MH_OK;
}

/* A slot's buffer: its memory, bytes and device (MH_CPU: host memory). */
typedef struct slot_buffer {
    void *data;
    size_t bytes;
    int device;
} slot_buffer;

static void free_slot_buffer(void *p)
{
    slot_buffer *b = (slot_buffer *)p;
    mh_free_on(b->device, b->data);
    free(b);
}

mh_status mh_slot_buffer(mh_context *ctx, mh_slot_id id, const char *what, size_t bytes, void **ptr)
{
    mh_slot *slot = mh_context_slot(ctx, id);
    if (!slot) return mh_is_cpu(ctx) ? MH_ERR_INTERNAL : MH_ERR_CUDA; /* the fence's detail is on ctx */
    slot_buffer *b = (slot_buffer *)slot->data;
    if (!b) {
        if (!(b = (slot_buffer *)calloc(1, sizeof *b))) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "%s", what);
        b->device = ctx->device;
        slot->data = b, slot->destroy = free_slot_buffer;
    }
    if (b->bytes < bytes && mh_is_cpu(ctx)) {
        void *grown = realloc(b->data, bytes);
        if (!grown) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "%s: %zu bytes", what, bytes);
        b->data = grown, b->bytes = bytes;
    } else if (!mh_is_cpu(ctx)) {
        const mh_status s = grow_on_stream(ctx, what, bytes, &b->data, &b->bytes);
        if (s != MH_OK) return s;
    }
    *ptr = b->data;
    return MH_OK;
}

mh_status mh_workspace(mh_context *ctx, size_t bytes, void **ptr)
{
    mh_status s = fence_shared(ctx);
    if (s == MH_OK) s = grow_on_stream(ctx, "workspace", bytes, &ctx->workspace, &ctx->workspace_bytes);
    if (s == MH_OK) *ptr = ctx->workspace;
    return s;
}

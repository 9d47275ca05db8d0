/* Contexts: one per device (or MH_CPU), holding the stream, the error detail, a reusable
 * device workspace and lazily created vendor resources. */
#include "internal.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mh_status mh_fail(mh_context *ctx, mh_status s, const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
        va_end(ap);
    }
    return s;
}

void mh_clear_error(mh_context *ctx)
{
    if (ctx) ctx->error[0] = '\0';
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

mh_status mh_context_create(mh_context **ctx, int device)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    *ctx = NULL;
    if (device != MH_CPU && (device < 0 || device >= mh_cuda_device_count()))
        return MH_ERR_NO_DEVICE;
    mh_context *c = calloc(1, sizeof *c);
    if (!c) return MH_ERR_OUT_OF_MEMORY;
    c->device = device;
    if (device != MH_CPU && cudaDeviceGetAttribute(&c->sm_count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        cudaGetLastError();
        c->sm_count = 0; /* mh_resident_blocks falls back to a default */
    }
    int major = 0, minor = 0;
    if (device != MH_CPU && (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
                             cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)) {
        cudaGetLastError();
        major = minor = 0; /* rows that need a capability refuse with the reason */
    }
    c->cc = 10 * major + minor;
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
    if (on_device) mh_device_leave(&guard);
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
    ctx->stream = cuda_stream;
    return MH_OK;
}

mh_status mh_context_synchronize(mh_context *ctx)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (mh_is_cpu(ctx)) return MH_OK;
    mh_device_guard guard;
    mh_status s = mh_device_enter(ctx, &guard);
    if (s != MH_OK) return s;
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)ctx->stream);
    mh_device_leave(&guard);
    if (e != cudaSuccess)
        return mh_fail(ctx, MH_ERR_CUDA, "cudaStreamSynchronize: %s (%s)", cudaGetErrorString(e),
                       cudaGetErrorName(e));
    return MH_OK;
}

int mh_context_device(const mh_context *ctx) { return ctx ? ctx->device : MH_CPU; }

const char *mh_context_error(const mh_context *ctx)
{
    return ctx ? ctx->error : "ctx is NULL";
}

mh_status mh_device_enter(mh_context *ctx, mh_device_guard *guard)
{
    guard->switched = 0;
    guard->previous = 0;
    cudaError_t e = cudaGetDevice(&guard->previous);
    if (e == cudaSuccess && guard->previous != ctx->device) {
        e = cudaSetDevice(ctx->device);
        guard->switched = e == cudaSuccess;
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

mh_status mh_workspace(mh_context *ctx, size_t bytes, void **ptr)
{
    if (bytes <= ctx->workspace_bytes) {
        *ptr = ctx->workspace;
        return MH_OK;
    }
    /* The old buffer may still be read by work queued on the stream. */
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)ctx->stream);
    if (e != cudaSuccess)
        return mh_fail(ctx, MH_ERR_CUDA, "workspace: cudaStreamSynchronize: %s",
                       cudaGetErrorString(e));
    if (ctx->workspace) cudaFree(ctx->workspace);
    ctx->workspace = NULL;
    ctx->workspace_bytes = 0;
    e = cudaMalloc(&ctx->workspace, bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        ctx->workspace = NULL;
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "workspace: cudaMalloc(%zu bytes): %s", bytes,
                       cudaGetErrorString(e));
    }
    ctx->workspace_bytes = bytes;
    *ptr = ctx->workspace;
    return MH_OK;
}

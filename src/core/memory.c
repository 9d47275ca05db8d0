/* Allocation and copies in the context's memory, for callers without CUDA headers. */
#include "internal.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

mh_status mh_alloc(mh_context *ctx, size_t bytes, void **ptr)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (!ptr) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "ptr is NULL");
    *ptr = NULL;
    if (bytes == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "bytes = 0");
    if (mh_is_cpu(ctx)) {
        *ptr = malloc(bytes);
        return *ptr ? MH_OK : mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "malloc(%zu) failed", bytes);
    }
    mh_device_guard g;
    mh_status s = mh_device_enter(ctx, &g);
    if (s != MH_OK) return s;
    cudaError_t e = cudaMalloc(ptr, bytes);
    mh_device_leave(&g);
    if (e != cudaSuccess) {
        cudaGetLastError();
        *ptr = NULL;
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "cudaMalloc(%zu bytes) on device %d: %s", bytes, ctx->device,
                       cudaGetErrorString(e));
    }
    return MH_OK;
}

void mh_free(mh_context *ctx, void *ptr)
{
    if (!ctx || !ptr) return;
    if (mh_is_cpu(ctx)) {
        free(ptr);
        return;
    }
    mh_device_guard g;
    if (mh_device_enter(ctx, &g) != MH_OK) return;
    cudaFree(ptr);
    mh_device_leave(&g);
}

static mh_status copy(mh_context *ctx, void *dst, const void *src, size_t bytes, int to_device)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (!dst || !src) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s is NULL", dst ? "src" : "dst");
    if (bytes == 0) return MH_OK;
    if (mh_is_cpu(ctx)) {
        memmove(dst, src, bytes);
        return MH_OK;
    }
    mh_device_guard g;
    mh_status s = mh_device_enter(ctx, &g); /* first: the buffer check asks the driver */
    if (s != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, to_device ? "dst" : "src", to_device ? dst : src, bytes)) != MH_OK) {
        mh_device_leave(&g);
        return s;
    }
    cudaStream_t st = (cudaStream_t)mh_context_stream(ctx);
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    mh_device_leave(&g);
    if (e != cudaSuccess)
        return mh_fail(ctx, MH_ERR_CUDA, "copying %zu bytes %s the device: %s", bytes, to_device ? "to" : "from",
                       cudaGetErrorString(e));
    return MH_OK;
}

void mh_free_on(int device, void *ptr)
{
    if (!ptr) return;
    if (device == MH_CPU) {
        free(ptr);
        return;
    }
    int current = -1;
    const int switched =
        cudaGetDevice(&current) == cudaSuccess && current != device && cudaSetDevice(device) == cudaSuccess;
    cudaFree(ptr);
    if (switched) cudaSetDevice(current);
    cudaGetLastError();
}

mh_status mh_upload(mh_context *ctx, void *dst, const void *host_src, size_t bytes)
{
    return copy(ctx, dst, host_src, bytes, 1);
}

mh_status mh_download(mh_context *ctx, void *host_dst, const void *src, size_t bytes)
{
    return copy(ctx, host_dst, src, bytes, 0);
}

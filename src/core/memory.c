/* Allocation and copies in the context's memory, for callers without CUDA headers. */
#include "internal.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* memhier's pool of stream-ordered memory on each device (CUDA's allocator of cudaMallocAsync),
 * made at its first use and kept for the process, or NULL where the device has no memory pools.
 * Its own pool rather than the device's default one: it keeps up to POOL_KEEP bytes of freed
 * buffers for the next ones through synchronizations (the default pool gives everything back at
 * each one, so every call would map its memory again), without changing a pool other libraries
 * use. Devices past POOLS_MAX take cudaMalloc, as devices without pools do. */
enum { POOLS_MAX = 64 };
#define POOL_KEEP ((unsigned long long)256 << 20)

static cudaMemPool_t pool_of(int device)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static cudaMemPool_t pools[POOLS_MAX];
    static int asked[POOLS_MAX];
    if (device < 0 || device >= POOLS_MAX) return NULL;
    pthread_mutex_lock(&lock);
    if (!asked[device]) {
        asked[device] = 1;
        struct cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        unsigned long long keep = POOL_KEEP;
        int supported = 0;
        if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess && supported &&
            cudaMemPoolCreate(&pools[device], &props) == cudaSuccess)
            cudaMemPoolSetAttribute(pools[device], cudaMemPoolAttrReleaseThreshold, &keep);
        else
            pools[device] = NULL;
        cudaGetLastError();
    }
    const cudaMemPool_t pool = pools[device];
    pthread_mutex_unlock(&lock);
    return pool;
}

/* bytes of the context's memory: malloc on a CPU context; cudaMalloc, or in the order of the
 * context's stream from memhier's pool (in_stream_order, where the device has pools). */
static mh_status alloc(mh_context *ctx, size_t bytes, void **ptr, int in_stream_order)
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
    const cudaMemPool_t pool = in_stream_order ? pool_of(ctx->device) : NULL;
    cudaError_t e = pool ? cudaMallocFromPoolAsync(ptr, bytes, pool, (cudaStream_t)mh_context_stream(ctx))
                         : cudaMalloc(ptr, bytes);
    mh_device_leave(&g);
    if (e != cudaSuccess) {
        cudaGetLastError();
        *ptr = NULL;
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "%s(%zu bytes) on device %d: %s",
                       pool ? "cudaMallocFromPoolAsync" : "cudaMalloc", bytes, ctx->device,
                       cudaGetErrorString(e));
    }
    return MH_OK;
}

/* alloc's bytes back: free, cudaFree (which waits for the device), or to memhier's pool once the
 * work queued on the context's stream before is done. */
static void release(mh_context *ctx, void *ptr, int in_stream_order)
{
    if (!ctx || !ptr) return;
    if (mh_is_cpu(ctx)) {
        free(ptr);
        return;
    }
    mh_device_guard g;
    if (mh_device_enter(ctx, &g) != MH_OK) return;
    const cudaError_t e = in_stream_order && pool_of(ctx->device)
                              ? cudaFreeAsync(ptr, (cudaStream_t)mh_context_stream(ctx))
                              : cudaFree(ptr);
    if (e != cudaSuccess) cudaGetLastError();
    mh_device_leave(&g);
}

mh_status mh_alloc(mh_context *ctx, size_t bytes, void **ptr) { return alloc(ctx, bytes, ptr, 0); }
void mh_free(mh_context *ctx, void *ptr) { release(ctx, ptr, 0); }
mh_status mh_alloc_async(mh_context *ctx, size_t bytes, void **ptr) { return alloc(ctx, bytes, ptr, 1); }
void mh_free_async(mh_context *ctx, void *ptr) { release(ctx, ptr, 1); }

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

/* Device-side random fill, the same values as the host's mh_fill_uniform. */
#include "../core/random.h"
#include "common.cuh"

#include <string.h>

static __global__ void fill_uniform_kernel(float *p, size_t n, uint64_t seed, float scale)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = mh_hash_uniform(seed, i) * scale;
}

extern "C" int mh_cuda_fill_uniform(float *p, size_t n, uint64_t seed, float scale, void *stream)
{
    unsigned blocks = (unsigned)(n / 256 + 1 < 65536 ? n / 256 + 1 : 65536);
    fill_uniform_kernel<<<blocks, 256, 0, (cudaStream_t)stream>>>(p, n, seed, scale);
    return (int)cudaGetLastError();
}

/* Host values carried to the device in kernel parameters, PARAM_FLOATS a launch: a copy queued
 * on the stream with neither pinned staging nor an allocation of it (either may make the host
 * wait for the device). */
enum { PARAM_FLOATS = 960 };
typedef struct param_chunk {
    float v[PARAM_FLOATS];
} param_chunk;

static __global__ void copy_params_kernel(float *dst, const param_chunk c, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = c.v[i];
}

extern "C" int mh_cuda_upload_by_params(float *dst, const float *src, size_t n, void *stream)
{
    param_chunk c;
    for (size_t i = 0; i < n; i += PARAM_FLOATS) {
        const int m = (int)(n - i < PARAM_FLOATS ? n - i : PARAM_FLOATS);
        memcpy(c.v, src + i, (size_t)m * sizeof(float));
        copy_params_kernel<<<1, 256, 0, (cudaStream_t)stream>>>(dst + i, c, m);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return (int)e;
    }
    return (int)cudaSuccess;
}

/* Device-side random fill, the same values as the host's mh_fill_uniform. */
#include "../core/random.h"
#include "common.cuh"

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

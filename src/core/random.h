/* Counter-based random numbers: value i of stream `seed` is a pure function of (seed, i),
 * so the host and a kernel produce the same inputs without copying them, and a failing
 * test can be replayed from its printed seed. */
#ifndef MH_RANDOM_H
#define MH_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MH_HD __host__ __device__ __forceinline__
#else
#define MH_HD static inline
#endif

MH_HD uint64_t mh_mix64(uint64_t x) /* splitmix64's finalizer */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Uniform in [-1, 1) with 24 random bits: exactly representable, never zero-only. */
MH_HD float mh_hash_uniform(uint64_t seed, uint64_t i)
{
    uint64_t h = mh_mix64(seed * 0x9e3779b97f4a7c15ULL ^ mh_mix64(i + 0x632be59bd9b4e019ULL));
    return (float)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

#ifdef __cplusplus
extern "C" {
#endif
/* Host: p[i] = mh_hash_uniform(seed, i) * scale for i < n (OpenMP). */
void mh_fill_uniform(float *p, size_t n, uint64_t seed, float scale);
/* Device (src/cuda/fill.cu), on `stream`; returns a cudaError_t as int. */
int mh_cuda_fill_uniform(float *p, size_t n, uint64_t seed, float scale, void *stream);
#ifdef __cplusplus
}
#endif

#endif

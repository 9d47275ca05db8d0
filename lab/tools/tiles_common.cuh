/* What the staged-tile harnesses share (stack_tiles_bench.cu, sep_tiles_bench.cu,
 * rgb_tiles_bench.cu): error checks, scipy's reflect, event timing, a copy kernel for the floor,
 * scipy's Gaussian taps and test data with dark values beside bright ones. */
#ifndef TILES_COMMON_CUH
#define TILES_COMMON_CUH

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK_CUDA(x)                                                                                         \
    do {                                                                                                      \
        cudaError_t e_ = (x);                                                                                 \
        if (e_ != cudaSuccess) {                                                                              \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                \
            exit(1);                                                                                          \
        }                                                                                                     \
    } while (0)

/* scipy's reflect (d c b a | a b c d | d c b a) for i in [-n, 2n) */
static __host__ __device__ inline int reflect(int i, int n) { return i < 0 ? -i - 1 : i >= n ? 2 * n - i - 1 : i; }

#ifdef __CUDACC__ /* the launches: lab/scripts/tiles_on_host.py builds the rest with a host compiler */
/* The best of 5 rounds of `reps` launches back to back, ms a launch (CUDA events). */
template <typename F> static float best_ms(F launch, int reps = 20)
{
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    launch();
    float best = 1e30f;
    for (int round = 0; round < 5; ++round) {
        CHECK_CUDA(cudaEventRecord(a));
        for (int i = 0; i < reps; ++i) launch();
        CHECK_CUDA(cudaEventRecord(b));
        CHECK_CUDA(cudaEventSynchronize(b));
        float ms;
        CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
        best = fminf(best, ms / reps);
    }
    CHECK_CUDA(cudaGetLastError());
    return best;
}

/* out = in, 16 bytes a thread a step: the floor the kernels are measured against */
static __global__ void copy_kernel(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n16)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x)
        __stcs(out + i, __ldg(in + i));
}

/* The copy kernel's ms for `bytes` (a multiple of 16) from in to out. */
static float copy_ms_of(const void *in, void *out, size_t bytes)
{
    return best_ms([&] { copy_kernel<<<132 * 8, 512>>>((const uint4 *)in, (uint4 *)out, bytes / 16); });
}
#endif

/* scipy's gaussian_filter1d taps of sigma: radius int(4 sigma + 0.5), normalized in double. */
static std::vector<float> gaussian_taps(double sigma)
{
    const int radius = (int)(4.0 * sigma + 0.5), k = 2 * radius + 1;
    std::vector<float> w(k);
    double sum = 0.0;
    for (int j = 0; j < k; ++j) sum += exp(-0.5 * (j - radius) * (j - radius) / (sigma * sigma));
    for (int j = 0; j < k; ++j) w[j] = (float)(exp(-0.5 * (j - radius) * (j - radius) / (sigma * sigma)) / sum);
    return w;
}

/* values of magnitudes 1e-3 to 1e3 with random signs: dark beside bright */
static std::vector<float> dark_beside_bright(size_t values)
{
    std::vector<float> x(values);
    uint64_t s = 12345;
    for (auto &v : x) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double u = (double)(s >> 11) / 9007199254740992.0;
        v = (float)((s & 1 ? 1.0 : -1.0) * pow(10.0, 6.0 * u - 3.0));
    }
    return x;
}

#endif

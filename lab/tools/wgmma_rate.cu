/* wgmma_rate: the tensor cores' TF32 rate for wgmma m64nNk8 with A from registers (the form
 * conv2d/tc and conv1d/tc issue), by N, by warpgroups a SM, and in the pattern of a conv2d/tc
 * input row: C partial sums of D wgmma each, issued, committed, waited for (wait_group 0), then
 * added to accumulators in registers. No global or shared-memory traffic besides B, read by the
 * tensor cores from one small panel: the ceiling of that loop on its own, against the H100's
 * dense TF32 rate (494.7 TFLOP/s). Not part of the library; sm_90a only.
 *
 * usage: wgmma_rate [rounds]   (prints one line a case) */
#include "cuda/common.cuh"
#include "cuda/wgmma_ops.cuh"
#include "cuda/wgmma_util.cuh"

#include <stdio.h>
#include <stdlib.h>

namespace {

constexpr double DENSE_TF32_TFLOPS = 494.7; /* H100 SXM, NVIDIA's figure */

/* One round: C chains of D wgmma into fresh partial sums, waited for, added to acc, as conv2d/tc's
 * multiply_groups (partials declared here, left undefined: the first wgmma of a chain ignores
 * them). Each chain reads B 16 bytes further on, as conv2d/tc's groups read other filter rows:
 * with one descriptor for all, ptxas injected a warpgroup wait between the chains (C7517) and
 * serialized the wgmma (C7514). */
template <int N, int C, int D>
__device__ __forceinline__ void run_round(const unsigned (&a)[4], unsigned long long desc, float (&acc)[C][N / 2])
{
    float part[C][N / 2];
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
        for (int d = 0; d < D; ++d) wgmma_rs(part[c], a, desc + c, d > 0); /* chain c 16 c bytes on, as groups are */
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
    for (int c = 0; c < C; ++c) {
        fence_operands(part[c]);
#pragma unroll
        for (int i = 0; i < N / 2; ++i) acc[c][i] += part[c][i];
    }
}

/* One warpgroup a block: rounds of C chains x D wgmma m64nNk8, as conv2d/tc runs an input row
 * (C groups, D = products x slices), two rounds a turn as its row loop does. */
template <int N, int C, int D> __global__ void __launch_bounds__(128) rate_kernel(int rounds, float *sink)
{
#ifndef MH_WGMMA_ABSENT
    __shared__ __align__(128) float b[2 * N * 4 + 4 * C]; /* two k-halves of N columns, 16 bytes a column */
    for (int i = threadIdx.x; i < 2 * N * 4 + 4 * C; i += 128) b[i] = 1.0f / (1 + i % 7);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    const unsigned long long desc = wgmma_desc(b, N * 16, 128);
    unsigned a[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) a[q] = __float_as_uint(1.0f + (threadIdx.x * 4 + q) * 1e-3f);
    float acc[C][N / 2];
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
        for (int i = 0; i < N / 2; ++i) acc[c][i] = 0.0f;
    for (int r = 0; r < rounds; r += 2) {
        run_round<N, C, D>(a, desc, acc);
        run_round<N, C, D>(a, desc, acc);
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
        for (int i = 0; i < N / 2; ++i) s += acc[c][i];
    sink[blockIdx.x * 128 + threadIdx.x] = s;
#endif
}

int sms;
float *sink;

#define CHECK(call)                                                                                           \
    do {                                                                                                      \
        cudaError_t e_ = (call);                                                                              \
        if (e_ != cudaSuccess) {                                                                              \
            fprintf(stderr, "wgmma_rate: %s: %s\n", #call, cudaGetErrorString(e_));                            \
            exit(1);                                                                                          \
        }                                                                                                     \
    } while (0)

/* TFLOP/s (2 per multiply-add) of one case, best of 3 launches */
template <int N, int C, int D> void run_case(const char *label, int per_sm, int rounds)
{
    const int blocks = sms * per_sm;
    int fit = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, rate_kernel<N, C, D>, 128, 0));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    float best = 1e30f;
    for (int rep = 0; rep < 4; ++rep) { /* the first is a warm-up */
        CHECK(cudaEventRecord(t0));
        rate_kernel<N, C, D><<<blocks, 128>>>(rounds, sink);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(t1));
        CHECK(cudaEventSynchronize(t1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, t0, t1));
        if (rep > 0 && ms < best) best = ms;
    }
    CHECK(cudaEventDestroy(t0));
    CHECK(cudaEventDestroy(t1));
    const double flops = 2.0 * 64 * N * 8 * (double)C * D * (rounds + rounds % 2) * blocks;
    const double tflops = flops / (best * 1e-3) / 1e12;
    printf("%-26s N=%-3d C=%d D=%-2d warpgroups/SM=%d (fit %2d)  %7.3f ms  %6.1f TFLOP/s  %5.1f%% of dense TF32\n",
           label, N, C, D, per_sm, fit, best, tflops, 100.0 * tflops / DENSE_TF32_TFLOPS);
}

} // namespace

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 4000;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        fprintf(stderr, "wgmma_rate: no CUDA device\n");
        return 77;
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9) {
        fprintf(stderr, "wgmma_rate: %s is not sm_90 (wgmma)\n", prop.name);
        return 77;
    }
    sms = prop.multiProcessorCount;
    CHECK(cudaMalloc(&sink, (size_t)sms * 16 * 128 * sizeof(float)));
    printf("%s, %d SMs, %d rounds a warpgroup\n", prop.name, sms, rounds);
    const int per_sm[] = {1, 2, 4, 6, 8};
    for (int w : per_sm) run_case<8, 4, 3>("stream, 12 a wait", w, rounds);
    for (int w : per_sm) run_case<16, 4, 3>("stream, 12 a wait", w, rounds);
    for (int w : per_sm) run_case<32, 4, 3>("stream, 12 a wait", w, rounds);
    for (int w : per_sm) run_case<64, 2, 6>("stream, 12 a wait", w, rounds);
    for (int w : per_sm) run_case<64, 1, 32>("stream, 32 a wait", w, rounds);
    for (int w : per_sm) run_case<16, 2, 6>("15x15 row (S2 Q8, 2 groups)", w, rounds);
    for (int w : per_sm) run_case<32, 2, 6>("11x11 row (S4 Q8, 2 groups)", w, rounds);
    for (int w : per_sm) run_case<32, 1, 12>("31x31 row (S2 Q16)", w, rounds);
    CHECK(cudaFree(sink));
    return 0;
}

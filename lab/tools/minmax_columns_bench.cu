/* rank/minmax's column walk alone (issue 64: minimum_filter1d along axis 0), float32 8192^2,
 * window 5, reflect, in variants of its shape, each timed with events (least of 5 runs of 20
 * calls) and checked bit for bit against the first:
 *   R        outputs a strip (16: the product's)
 *   COLS     columns a thread (1: the product's; 2 and 4 load float2 and float4 groups)
 *   MINB     __launch_bounds__'s blocks an SM (0: none, the product's)
 *   slots    the segment rule's resident threads a core's slot (2: the product's; more segments
 *            of fewer rows shorten the last wave)
 * beside the same walk with a window of 1 (a copy down the columns) and cudaMemcpyAsync.
 *
 * usage: nvcc -O3 -arch=sm_90 -std=c++17 lab/tools/minmax_columns_bench.cu -o build/minmax_columns_bench
 *        build/minmax_columns_bench [N] */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

static __device__ __forceinline__ uint32_t key_of(float v)
{
    uint32_t bits = __float_as_uint(v);
    return (bits ^ ((uint32_t)((int32_t)bits >> 31) | 0x80000000u)) - 0x7fffffu;
}

static __device__ __forceinline__ float value_of(uint32_t key)
{
    const uint32_t ordered = key + 0x7fffffu, bits = ordered >> 31 ? ordered & 0x7fffffffu : ~ordered;
    return __uint_as_float(bits);
}

static __device__ __forceinline__ long long reflect(long long i, long long n)
{
    while (i < 0 || i >= n) i = i < 0 ? -i - 1 : 2 * n - 1 - i;
    return i;
}

template <int COLS> struct vec;
template <> struct vec<1> { typedef float t; };
template <> struct vec<2> { typedef float2 t; };
template <> struct vec<4> { typedef float4 t; };

template <int COLS> static __device__ __forceinline__ void unpack(const typename vec<COLS>::t &v, float *f)
{
    memcpy(f, &v, sizeof v);
}

template <int R, int KMAX, int COLS, int MINB>
static __global__ void __launch_bounds__(128, MINB ? MINB : 1)
    walk(const float *in, float *out, long long n, long long width, int k, int anchor, long long seg)
{
    typedef typename vec<COLS>::t V;
    const long long t = ((long long)blockIdx.x * 128 + threadIdx.x) * COLS;
    if (t >= width) return;
    const long long y_begin = (long long)blockIdx.y * seg, y_end = y_begin + seg < n ? y_begin + seg : n;
    constexpr int W = R + KMAX - 1;
    for (long long y0 = y_begin; y0 < y_end; y0 += R) {
        const int need = R + k - 1;
        const long long first = y0 - anchor;
        uint32_t w[W][COLS], o[R][COLS];
        if (first >= 0 && first + need <= n) { /* the product's inside path: no mapping between loads */
            const float *at = in + first * width + t;
#pragma unroll
            for (int d = 0; d < W; ++d)
                if (d < need) {
                    float f[COLS];
                    unpack<COLS>(__ldg((const V *)(at + (size_t)d * width)), f);
#pragma unroll
                    for (int c = 0; c < COLS; ++c) w[d][c] = key_of(f[c]);
                }
        } else {
#pragma unroll
            for (int d = 0; d < W; ++d)
                if (d < need) {
                    float f[COLS];
                    unpack<COLS>(__ldg((const V *)(in + reflect(first + d, n) * width + t)), f);
#pragma unroll
                    for (int c = 0; c < COLS; ++c) w[d][c] = key_of(f[c]);
                }
        }
#pragma unroll
        for (int q = 0; q < R; ++q)
#pragma unroll
            for (int c = 0; c < COLS; ++c) o[q][c] = w[q][c];
#pragma unroll
        for (int i = 1; i < KMAX; ++i) {
            if (i >= k) break;
#pragma unroll
            for (int q = 0; q < R; ++q)
#pragma unroll
                for (int c = 0; c < COLS; ++c) o[q][c] = w[q + i][c] < o[q][c] ? w[q + i][c] : o[q][c];
        }
#pragma unroll
        for (int q = 0; q < R; ++q) {
            if (y0 + q >= y_end) break;
            float f[COLS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) f[c] = value_of(o[q][c]);
            V v;
            memcpy(&v, f, sizeof v);
            *(V *)(out + (y0 + q) * width + t) = v;
        }
    }
}

static long long segment_rows(long long rows, long long threads, int strip, int slots)
{
    long long segs = (slots * 2048LL * 132 + threads - 1) / threads;
    const long long strips = (rows + strip - 1) / strip;
    if (segs > strips) segs = strips;
    return (strips + segs - 1) / segs * strip;
}

static long long N = 8192;
static float *d_in, *d_out;
static std::vector<float> first;
static float copy_us;

template <class F> static float timed(F f)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    f();
    float best = 1e30f;
    for (int r = 0; r < 5; ++r) {
        cudaEventRecord(a);
        for (int i = 0; i < 20; ++i) f();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        if (ms / 20 < best) best = ms / 20;
    }
    return best * 1e3f;
}

template <int R, int KMAX, int COLS, int MINB> static void variant(int k, int slots)
{
    const long long threads = (N / COLS + 127) / 128 * 128;
    const long long seg = segment_rows(N, threads, R, slots);
    const dim3 grid((unsigned)((N / COLS + 127) / 128), (unsigned)((N + seg - 1) / seg));
    cudaMemset(d_out, 0xff, N * N * 4);
    const float us = timed([&] { walk<R, KMAX, COLS, MINB><<<grid, 128>>>(d_in, d_out, N, N, k, k / 2, seg); });
    cudaFuncAttributes attr;
    cudaFuncGetAttributes(&attr, walk<R, KMAX, COLS, MINB>);
    std::vector<float> got(N * N);
    cudaMemcpy(got.data(), d_out, N * N * 4, cudaMemcpyDeviceToHost);
    const char *check = "";
    if (k > 1) {
        if (first.empty()) first = got, check = "(the reference)";
        else check = memcmp(first.data(), got.data(), N * N * 4) ? "DIFFERS" : "same bits";
    }
    printf("k %d R %2d COLS %d MINB %d slots %2d: %3d regs, grid %u x %u, %8.1f us, %.2fx cudaMemcpy  %s\n", k, R, COLS,
           MINB, slots, attr.numRegs, grid.x, grid.y, us, us / copy_us, check);
}

int main(int argc, char **argv)
{
    if (argc > 1) N = atoll(argv[1]);
    cudaMalloc(&d_in, N * N * 4), cudaMalloc(&d_out, N * N * 4);
    std::vector<float> h(N * N);
    srand(5);
    for (auto &v : h) v = (float)rand() / RAND_MAX * 255.0f;
    cudaMemcpy(d_in, h.data(), N * N * 4, cudaMemcpyHostToDevice);
    const float copy = copy_us = timed([&] { cudaMemcpyAsync(d_out, d_in, N * N * 4, cudaMemcpyDeviceToDevice); });
    printf("cudaMemcpyAsync %lld^2 float32: %.1f us (%.0f GB/s)\n", N, copy, 2.0 * N * N * 4 / copy / 1e3);
    variant<16, 8, 1, 0>(5, 2);
    variant<16, 8, 1, 0>(5, 8);
    variant<16, 8, 1, 0>(5, 32);
    variant<8, 8, 1, 0>(5, 2);
    variant<8, 8, 1, 0>(5, 8);
    variant<32, 8, 1, 0>(5, 8);
    variant<16, 8, 2, 0>(5, 2);
    variant<16, 8, 2, 0>(5, 8);
    variant<8, 8, 2, 0>(5, 8);
    variant<8, 8, 4, 0>(5, 8);
    variant<8, 8, 4, 0>(5, 32);
    variant<16, 8, 4, 0>(5, 8);
    variant<16, 8, 1, 0>(1, 2);
    variant<16, 8, 1, 0>(1, 8);
    variant<16, 8, 2, 0>(1, 8);
    variant<8, 8, 4, 0>(1, 8);
    return 0;
}

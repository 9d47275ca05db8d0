/* A separable filter of two axes over a float32 image in staged tiles, alone (issue 64:
 * gaussian_filter sigma 2 at 8192^2 runs 0.338 ms through sepfilter/walk, 2.6x the copy floor,
 * issue-bound at ~109 instructions an output for 34 FMAs).
 *
 * A block stages a tile of TR x TC outputs with its K - 1 halo rows and columns (rows and, at the
 * image's edges, columns mapped by the mode), runs the vertical pass (scipy's first axis) over
 * every staged column into a second shared buffer (4 columns x 8 rows an item, the window's rows
 * read as float4s), then the horizontal pass from there (8 outputs an item from a register window
 * of 8 + K - 1 values read as float4s), storing an item's outputs as two float4. Sums from 0 with
 * fmaf in tap order, as the library's rows sum. Per output: K FMAs of the horizontal pass,
 * K (TC + K - 1) / TC of the vertical, ~2 shared loads: ~43 instructions (walk: ~109), so
 * ~0.12-0.2 ms at 8192^2 if the SMs issue at 2-3 a clock (the copy floor is 0.13). For the
 * constant mode the vertical pass's halo columns would take cval instead (the mode's extension
 * of the first pass's result); the harness runs reflect.
 *
 * Checks: outputs poisoned with NaN first; rows at the top, middle and bottom (every column)
 * against a double reference within (2K + 2) eps32 sum |w_i||w_j||x| (two passes of K FMAs); every
 * output finite. Taps: scipy's Gaussian of sigma (radius int(4 sigma + 0.5)), mode reflect.
 *   nvcc -O3 -arch=sm_90 lab/tools/sep_tiles_bench.cu -o sep_tiles_bench
 *   ./sep_tiles_bench [side] [sigma]        (8192 2 by default; side a multiple of 4, >= 64) */
#include <algorithm>
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

enum { THREADS = 256, KMAX = 33 };
__constant__ float taps[KMAX];

/* scipy's reflect (d c b a | a b c d | d c b a) for i in [-n, 2n) */
static __host__ __device__ inline int reflect(int i, int n) { return i < 0 ? -i - 1 : i >= n ? 2 * n - i - 1 : i; }

/* Shared layout: staged input rows of IW values (image column x0 - H + c at column c, IW a
 * multiple of 4 past TC + K - 1), then the vertical pass's TR rows of IW values. */
template <int K, int TR, int TC> struct shape {
    static constexpr int H = K / 2, ROWS = TR + K - 1, IW = (TC + K - 1 + 3) / 4 * 4, WINDOW = 8 + K - 1;
    static constexpr int LOADS = (WINDOW + 3) / 4; /* float4s a horizontal item reads */
    static constexpr int IN_FLOATS = ROWS * (IW + 4), MID_FLOATS = TR * (IW + 4); /* +4: the last item's spill */
    static constexpr size_t BYTES = (size_t)(IN_FLOATS + MID_FLOATS) * sizeof(float);
    static_assert(H % 4 == 0, "x0 - H on a 16-byte boundary: radius a multiple of 4 (K = 9, 17, 25, 33)");
    static_assert(TC % 8 == 0 && TR % 8 == 0, "items of 8");
};

template <int K, int TR, int TC>
__global__ void __launch_bounds__(THREADS) sep_tile_kernel(const float *__restrict__ in, float *__restrict__ out, int n)
{
    using S = shape<K, TR, TC>;
    extern __shared__ __align__(16) float smem[];
    float *in_s = smem, *mid_s = smem + S::IN_FLOATS;
    constexpr int STRIDE = S::IW + 4;
    const int x0 = blockIdx.x * TC, y0 = blockIdx.y * TR;
    const int rows_here = min(TR, n - y0), cols_here = min(TC, n - x0);
    /* stage: rows y0 - H .. y0 + TR + H - 1, columns x0 - H .. x0 - H + IW - 1 */
    const bool inside = x0 - S::H >= 0 && x0 - S::H + S::IW <= n;
    constexpr int GROUPS = S::IW / 4;
    for (int e = threadIdx.x; e < S::ROWS * GROUPS; e += THREADS) {
        const int r = e / GROUPS, g = e - r * GROUPS;
        const float *row = in + (size_t)reflect(y0 - S::H + r, n) * n;
        float4 v;
        if (inside) {
            v = __ldg(reinterpret_cast<const float4 *>(row + x0 - S::H) + g);
        } else {
            const int x = x0 - S::H + 4 * g;
            v.x = __ldg(row + reflect(min(x, 2 * n - 1), n));
            v.y = __ldg(row + reflect(min(x + 1, 2 * n - 1), n));
            v.z = __ldg(row + reflect(min(x + 2, 2 * n - 1), n));
            v.w = __ldg(row + reflect(min(x + 3, 2 * n - 1), n));
        }
        *reinterpret_cast<float4 *>(in_s + r * STRIDE + 4 * g) = v;
    }
    __syncthreads();
    /* vertical (scipy's first axis): every staged column, 4 columns x 8 rows an item, into mid_s
     * (TR rows of IW: the horizontal pass's halo columns are vertical sums of mapped columns, which
     * is the mode's extension of the vertical pass for every mode but constant) */
    constexpr int VITEMS = GROUPS * (TR / 8);
    for (int it = threadIdx.x; it < VITEMS; it += THREADS) {
        const int c = (it % GROUPS) * 4, oy = (it / GROUPS) * 8;
        float acc[8][4];
#pragma unroll
        for (int o = 0; o < 8; ++o)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[o][q] = 0.0f;
#pragma unroll
        for (int r = 0; r < 8 + K - 1; ++r) {
            const float4 f = *reinterpret_cast<const float4 *>(in_s + (oy + r) * STRIDE + c);
#pragma unroll
            for (int o = 0; o < 8; ++o) {
                const int i = r - o;
                if (i < 0 || i >= K) continue;
                acc[o][0] = fmaf(f.x, taps[i], acc[o][0]);
                acc[o][1] = fmaf(f.y, taps[i], acc[o][1]);
                acc[o][2] = fmaf(f.z, taps[i], acc[o][2]);
                acc[o][3] = fmaf(f.w, taps[i], acc[o][3]);
            }
        }
#pragma unroll
        for (int o = 0; o < 8; ++o)
            *reinterpret_cast<float4 *>(mid_s + (oy + o) * STRIDE + c) = make_float4(acc[o][0], acc[o][1], acc[o][2], acc[o][3]);
    }
    __syncthreads();
    /* horizontal: 8 outputs an item, stored as two float4 */
    constexpr int HITEMS = TR * (TC / 8);
    for (int it = threadIdx.x; it < HITEMS; it += THREADS) {
        const int r = it / (TC / 8), c = (it - r * (TC / 8)) * 8;
        if (r >= rows_here || c >= cols_here) continue;
        const float4 *src = reinterpret_cast<const float4 *>(mid_s + r * STRIDE + c);
        float v[S::LOADS * 4];
#pragma unroll
        for (int q = 0; q < S::LOADS; ++q) {
            const float4 f = src[q];
            v[4 * q] = f.x, v[4 * q + 1] = f.y, v[4 * q + 2] = f.z, v[4 * q + 3] = f.w;
        }
        float acc[8];
#pragma unroll
        for (int o = 0; o < 8; ++o) acc[o] = 0.0f;
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int o = 0; o < 8; ++o) acc[o] = fmaf(v[o + j], taps[j], acc[o]);
        float4 *dst = reinterpret_cast<float4 *>(out + (size_t)(y0 + r) * n + x0 + c);
        __stcs(dst, make_float4(acc[0], acc[1], acc[2], acc[3]));
        if (c + 4 < cols_here) __stcs(dst + 1, make_float4(acc[4], acc[5], acc[6], acc[7]));
    }
}

__global__ void copy_kernel(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n4)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
        __stcs(out + i, __ldg(in + i));
}

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

/* Output rows [r0, r1) against the double reference; returns the outputs out of bound. */
static size_t check_rows(const std::vector<float> &x, const std::vector<float> &y, const std::vector<float> &w, int n,
                         int r0, int r1)
{
    const int k = (int)w.size(), h = k / 2;
    size_t bad = 0;
    std::vector<double> hs(n), hm(n);
    for (int r = r0; r < r1; ++r)
        for (int c = 0; c < n; ++c) {
            double ref = 0.0, mag = 0.0;
            for (int i = 0; i < k; ++i) {
                const float *row = x.data() + (size_t)reflect(r + i - h, n) * n;
                double s = 0.0, m = 0.0;
                for (int j = 0; j < k; ++j) {
                    const double v = row[reflect(c + j - h, n)];
                    s += (double)w[j] * v, m += fabs((double)w[j] * v);
                }
                ref += (double)w[i] * s, mag += fabs((double)w[i]) * m;
            }
            const double g = y[(size_t)r * n + c];
            if (!(fabs(g - ref) <= (2 * k + 2) * 0x1p-24 * mag)) {
                if (bad < 3) fprintf(stderr, "(%d, %d): %.9g, reference %.9g\n", r, c, g, ref);
                ++bad;
            }
        }
    return bad;
}

template <int K, int TR, int TC>
static void run(const float *din, float *dout, int n, const std::vector<float> &x, const std::vector<float> &w,
                double copy_ms)
{
    using S = shape<K, TR, TC>;
    if ((int)w.size() != K) return;
    auto fn = sep_tile_kernel<K, TR, TC>;
    CHECK_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::BYTES));
    int resident = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, fn, THREADS, S::BYTES));
    const dim3 grid((unsigned)((n + TC - 1) / TC), (unsigned)((n + TR - 1) / TR));
    auto launch = [&] { fn<<<grid, THREADS, S::BYTES>>>(din, dout, n); };
    const size_t values = (size_t)n * n;
    CHECK_CUDA(cudaMemset(dout, 0xff, values * sizeof(float)));
    launch();
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> y(values);
    CHECK_CUDA(cudaMemcpy(y.data(), dout, values * sizeof(float), cudaMemcpyDeviceToHost));
    size_t nonfinite = 0;
    for (float v : y) nonfinite += !std::isfinite(v);
    const int band = std::min(n, 24);
    const size_t bad = check_rows(x, y, w, n, 0, band) + check_rows(x, y, w, n, n / 2 - band / 2, n / 2 + band / 2) +
                       check_rows(x, y, w, n, n - band, n);
    const float ms = best_ms(launch);
    printf("K %2d, tiles %3d x %3d (%6zu B shared, %d blocks an SM): %.4f ms, %.3fx the copy; %zu non-finite, %zu over "
           "the bound%s\n",
           K, TR, TC, S::BYTES, resident, ms, ms / copy_ms, nonfinite, bad, nonfinite || bad ? "  FAILED" : "");
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 8192;
    const double sigma = argc > 2 ? atof(argv[2]) : 2.0;
    const int radius = (int)(4.0 * sigma + 0.5), k = 2 * radius + 1;
    if (n < 64 || n % 4 || n > 32768 || k > KMAX || radius % 4) {
        fprintf(stderr, "usage: sep_tiles_bench [side: a multiple of 4, 64..32768] [sigma: a radius int(4 sigma + 0.5) "
                        "of 4 or 8: 1, 2]\n");
        return 2;
    }
    std::vector<float> w(k);
    double sum = 0.0;
    for (int j = 0; j < k; ++j) sum += exp(-0.5 * (j - radius) * (j - radius) / (sigma * sigma));
    for (int j = 0; j < k; ++j) w[j] = (float)(exp(-0.5 * (j - radius) * (j - radius) / (sigma * sigma)) / sum);
    CHECK_CUDA(cudaMemcpyToSymbol(taps, w.data(), k * sizeof(float)));
    const size_t values = (size_t)n * n;
    std::vector<float> x(values);
    uint64_t s = 12345;
    for (auto &v : x) { /* dark beside bright: magnitudes 1e-3 to 1e3 with random signs */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double u = (double)(s >> 11) / 9007199254740992.0;
        v = (float)((s & 1 ? 1.0 : -1.0) * pow(10.0, 6.0 * u - 3.0));
    }
    float *din, *dout;
    CHECK_CUDA(cudaMalloc(&din, values * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dout, values * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(din, x.data(), values * sizeof(float), cudaMemcpyHostToDevice));
    const float copy_ms = best_ms([&] { copy_kernel<<<132 * 8, 512>>>((const float4 *)din, (float4 *)dout, values / 4); });
    printf("%d^2 float32, Gaussian sigma %g (%d taps a pass), reflect: copy kernel %.4f ms (%.0f GB/s)\n", n, sigma, k,
           copy_ms, 2.0 * values * sizeof(float) / copy_ms / 1e6);
    run<17, 32, 128>(din, dout, n, x, w, copy_ms);
    run<17, 64, 128>(din, dout, n, x, w, copy_ms);
    run<17, 32, 256>(din, dout, n, x, w, copy_ms);
    run<9, 32, 128>(din, dout, n, x, w, copy_ms);
    run<9, 64, 128>(din, dout, n, x, w, copy_ms);
    CHECK_CUDA(cudaFree(din));
    CHECK_CUDA(cudaFree(dout));
    return 0;
}

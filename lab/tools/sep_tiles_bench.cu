/* gaussian_filter over an image's two axes in staged tiles, alone: float32 gray (issue 64:
 * sigma 2 at 8192^2 runs 0.338 ms through sepfilter/walk, 2.6x the copy floor, issue-bound at
 * ~109 instructions an output for 34 FMAs) and 8-bit RGB over (0, 1) (issue 66: 1.32 ms, 13.5x
 * the uint8 copy floor; target 0.30).
 *
 * An image row is a run of C n values (C = 1 gray, 3 RGB, interleaved); a tap along a row steps C
 * values. A block stages a tile of TR rows by TCP pixels with its K - 1 halo rows and pixels (rows,
 * and pixels at the image's edges, mapped by the mode), each value converted to float once; runs
 * the vertical pass (scipy's first axis) over every staged value into a second shared buffer (4
 * values x 8 rows an item, the window's rows read as float4s), each sum cast as the library casts
 * into the output's type (uint8: truncated, wrapped); then the horizontal pass from there (8
 * values an item from a register window of 8 + C (K - 1) values read as float4s), storing an
 * item's values as two 16-byte (float) or 4-byte (uint8) stores. Sums from 0 with fmaf in tap
 * order, vertical first, as the library's rows sum. Per output: K FMAs of the horizontal pass,
 * K (TCP + K - 1) / TCP of the vertical, ~2 shared loads (float32 at 17 taps, nvdisasm: ~43
 * instructions, walk ~109): ~0.12-0.2 ms at 8192^2 gray and 0.4-0.5 ms RGB if the SMs issue 2-3
 * a clock. The constant mode would need the first pass's halo columns to be cval (the mode's
 * extension of its result), not sums of cval columns; the harness runs reflect.
 *
 * Checks: outputs filled with a marker first (NaN for float); rows at the top, middle and bottom,
 * every value: float32 against a double reference within (2K + 2) eps32 sum |w_i||w_j||x| (two
 * passes of K FMAs; values of 1e-3 to 1e3, dark beside bright) and every output finite; uint8 bit
 * for bit against the two passes emulated on the host (std::fmaf, the same casts; runs of 0 and
 * 255 among random bytes). Taps: scipy's Gaussian of sigma (radius int(4 sigma + 0.5)).
 *   nvcc -O3 -arch=sm_90 lab/tools/sep_tiles_bench.cu -o sep_tiles_bench
 *   ./sep_tiles_bench [side] [sigma] [gray|rgb]     (8192 2 gray by default; side a multiple of 4) */
#include "tiles_common.cuh"

#include <algorithm>
#include <cstring>

enum { THREADS = 256, KMAX = 33 };
__constant__ float taps[KMAX];

/* the library's cast of a float32 sum into uint8: truncated toward zero, wrapped */
static __host__ __device__ inline float cast_u8(float v)
{
#ifdef __CUDA_ARCH__
    const int i = fabsf(v) < 2147483648.0f ? __float2int_rz(v) : 0;
#else
    const int i = fabsf(v) < 2147483648.0f ? (int)v : 0;
#endif
    return (float)(i & 0xff);
}

/* Loads, casts and stores of the image's type. */
template <typename T> struct io;
template <> struct io<float> {
    static __device__ float4 load4(const float *p) { return __ldg(reinterpret_cast<const float4 *>(p)); }
    static __device__ float cast(float v) { return v; }
    static __device__ void store8(float *dst, const float *a, bool both)
    {
        __stcs(reinterpret_cast<float4 *>(dst), make_float4(a[0], a[1], a[2], a[3]));
        if (both) __stcs(reinterpret_cast<float4 *>(dst) + 1, make_float4(a[4], a[5], a[6], a[7]));
    }
};
template <> struct io<uint8_t> {
    static __device__ float4 load4(const uint8_t *p)
    {
        const uchar4 b = __ldg(reinterpret_cast<const uchar4 *>(p));
        return make_float4(b.x, b.y, b.z, b.w);
    }
    static __device__ float cast(float v) { return cast_u8(v); }
    static __device__ uint32_t word(const float *a)
    {
        return (uint32_t)a[0] | (uint32_t)a[1] << 8 | (uint32_t)a[2] << 16 | (uint32_t)a[3] << 24;
    }
    static __device__ void store8(uint8_t *dst, const float *a, bool both)
    {
        float c[8];
#pragma unroll
        for (int q = 0; q < 8; ++q) c[q] = cast_u8(a[q]);
        __stcs(reinterpret_cast<uint32_t *>(dst), word(c));
        if (both) __stcs(reinterpret_cast<uint32_t *>(dst) + 1, word(c + 4));
    }
};

/* Shared layout: staged rows of IW values (the tile's TCP pixels and H either side, value v of
 * the staged row at column v), then the vertical pass's TR rows of IW values. */
template <int C, int K, int TR, int TCP> struct shape {
    static constexpr int H = K / 2, ROWS = TR + K - 1, TV = C * TCP, IW = C * (TCP + 2 * H);
    static constexpr int WINDOW = 8 + C * (K - 1), LOADS = (WINDOW + 3) / 4; /* float4s a row item reads */
    static constexpr int STRIDE = IW + 4, IN_FLOATS = ROWS * STRIDE, MID_FLOATS = TR * STRIDE;
    static constexpr size_t BYTES = (size_t)(IN_FLOATS + MID_FLOATS) * sizeof(float);
    static_assert(H % 4 == 0 && TCP % 4 == 0, "the staged row's first value on a 4-value boundary");
    static_assert(TV % 8 == 0 && TR % 8 == 0 && IW % 4 == 0, "items of 8 values, groups of 4");
    static_assert(4 * (TV / 8 - 1) * 2 + 4 * LOADS <= STRIDE, "a row item's window inside its row");
};

template <typename T, int C, int K, int TR, int TCP>
__global__ void __launch_bounds__(THREADS) sep_tile_kernel(const T *__restrict__ in, T *__restrict__ out, int n)
{
    using S = shape<C, K, TR, TCP>;
    extern __shared__ __align__(16) float smem[];
    float *in_s = smem, *mid_s = smem + S::IN_FLOATS;
    const int x0 = blockIdx.x * TCP, y0 = blockIdx.y * TR;
    const int rows_here = min(TR, n - y0), values_here = C * min(TCP, n - x0);
    const size_t row_values = (size_t)C * n;
    /* stage: rows y0 - H .. y0 + TR + H - 1; pixels x0 - H .. x0 + TCP + H - 1, 4 values a group */
    const bool inside = x0 - S::H >= 0 && x0 + TCP + S::H <= n;
    constexpr int GROUPS = S::IW / 4;
    for (int e = threadIdx.x; e < S::ROWS * GROUPS; e += THREADS) {
        const int r = e / GROUPS, g = e - r * GROUPS;
        const T *row = in + (size_t)reflect(y0 - S::H + r, n) * row_values;
        float4 v;
        if (inside) {
            v = io<T>::load4(row + C * (x0 - S::H) + 4 * g);
        } else {
            float f[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int value = C * (x0 - S::H) + 4 * g + q;
                const int pixel = value >= 0 ? value / C : -((-value + C - 1) / C), channel = value - pixel * C;
                f[q] = (float)__ldg(row + C * reflect(min(pixel, 2 * n - 1), n) + channel);
            }
            v = make_float4(f[0], f[1], f[2], f[3]);
        }
        *reinterpret_cast<float4 *>(in_s + r * S::STRIDE + 4 * g) = v;
    }
    __syncthreads();
    /* vertical: every staged value, 4 values x 8 rows an item, cast as stored */
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
            const float4 f = *reinterpret_cast<const float4 *>(in_s + (oy + r) * S::STRIDE + c);
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
            *reinterpret_cast<float4 *>(mid_s + (oy + o) * S::STRIDE + c) = make_float4(
                io<T>::cast(acc[o][0]), io<T>::cast(acc[o][1]), io<T>::cast(acc[o][2]), io<T>::cast(acc[o][3]));
    }
    __syncthreads();
    /* horizontal: 8 values an item, taps C values apart; the tile's value v at mid column v + C H */
    constexpr int HITEMS = TR * (S::TV / 8);
    for (int it = threadIdx.x; it < HITEMS; it += THREADS) {
        const int r = it / (S::TV / 8), c = (it - r * (S::TV / 8)) * 8;
        if (r >= rows_here || c >= values_here) continue;
        const float4 *src = reinterpret_cast<const float4 *>(mid_s + r * S::STRIDE + c);
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
            for (int o = 0; o < 8; ++o) acc[o] = fmaf(v[o + C * j], taps[j], acc[o]);
        io<T>::store8(out + (size_t)(y0 + r) * row_values + C * x0 + c, acc, c + 4 < values_here);
    }
}

/* Output rows [r0, r1) of a float32 image against the double reference; the values out of bound. */
static size_t check_rows(const std::vector<float> &x, const std::vector<float> &y, const std::vector<float> &w, int n,
                         int r0, int r1)
{
    const int k = (int)w.size(), h = k / 2;
    size_t bad = 0;
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

/* Output rows [r0, r1) of an RGB uint8 image against the two passes emulated on the host; the bytes
 * that differ. */
static size_t check_rows(const std::vector<uint8_t> &x, const std::vector<uint8_t> &y, const std::vector<float> &w,
                         int n, int r0, int r1)
{
    const int k = (int)w.size(), h = k / 2, C = 3;
    size_t bad = 0;
    std::vector<float> mid((size_t)C * n);
    for (int r = r0; r < r1; ++r) {
        for (int v = 0; v < C * n; ++v) { /* the vertical pass of row r, every value */
            float acc = 0.0f;
            for (int i = 0; i < k; ++i) acc = std::fmaf((float)x[(size_t)reflect(r + i - h, n) * C * n + v], w[i], acc);
            mid[v] = cast_u8(acc);
        }
        for (int p = 0; p < n; ++p)
            for (int ch = 0; ch < C; ++ch) {
                float acc = 0.0f;
                for (int j = 0; j < k; ++j) acc = std::fmaf(mid[C * reflect(p + j - h, n) + ch], w[j], acc);
                const uint8_t want = (uint8_t)cast_u8(acc), got = y[(size_t)r * C * n + C * p + ch];
                if (got != want) {
                    if (bad < 3) fprintf(stderr, "(%d, %d, %d): %d, emulated %d\n", r, p, ch, got, want);
                    ++bad;
                }
            }
    }
    return bad;
}

template <typename T, int C, int K, int TR, int TCP>
static void run(const T *din, T *dout, int n, const std::vector<T> &x, const std::vector<float> &w, double copy_ms)
{
    using S = shape<C, K, TR, TCP>;
    if ((int)w.size() != K) return;
    auto fn = sep_tile_kernel<T, C, K, TR, TCP>;
    CHECK_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::BYTES));
    int resident = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, fn, THREADS, S::BYTES));
    const dim3 grid((unsigned)((n + TCP - 1) / TCP), (unsigned)((n + TR - 1) / TR));
    auto launch = [&] { fn<<<grid, THREADS, S::BYTES>>>(din, dout, n); };
    const size_t values = (size_t)C * n * n;
    CHECK_CUDA(cudaMemset(dout, 0xff, values * sizeof(T))); /* float: NaN; uint8: 255 where unwritten */
    launch();
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<T> y(values);
    CHECK_CUDA(cudaMemcpy(y.data(), dout, values * sizeof(T), cudaMemcpyDeviceToHost));
    size_t nonfinite = 0;
    for (T v : y) nonfinite += !std::isfinite((float)v);
    const int band = std::min(n, 16);
    const size_t bad = check_rows(x, y, w, n, 0, band) + check_rows(x, y, w, n, n / 2 - band / 2, n / 2 + band / 2) +
                       check_rows(x, y, w, n, n - band, n);
    const float ms = best_ms(launch);
    printf("%s K %2d, tiles %2d rows x %3d pixels (%6zu B shared, %d blocks an SM): %.4f ms, %.2fx the copy; %zu "
           "non-finite, %zu checked values wrong%s\n",
           C == 1 ? "gray" : "rgb ", K, TR, TCP, S::BYTES, resident, ms, ms / copy_ms, nonfinite, bad,
           nonfinite || bad ? "  FAILED" : "");
}

template <typename T, int C> static void run_all(int n, const std::vector<T> &x, const std::vector<float> &w)
{
    const size_t bytes = x.size() * sizeof(T);
    T *din, *dout;
    CHECK_CUDA(cudaMalloc(&din, bytes));
    CHECK_CUDA(cudaMalloc(&dout, bytes));
    CHECK_CUDA(cudaMemcpy(din, x.data(), bytes, cudaMemcpyHostToDevice));
    const float copy_ms = copy_ms_of(din, dout, bytes);
    printf("%d^2 %s, Gaussian of %zu taps a pass over both axes, reflect: copy kernel %.4f ms (%.0f GB/s)\n", n,
           C == 1 ? "float32" : "RGB uint8", w.size(), copy_ms, 2.0 * bytes / copy_ms / 1e6);
    if constexpr (C == 1) {
        run<T, C, 17, 32, 128>(din, dout, n, x, w, copy_ms);
        run<T, C, 17, 64, 128>(din, dout, n, x, w, copy_ms);
        run<T, C, 17, 32, 256>(din, dout, n, x, w, copy_ms);
        run<T, C, 9, 32, 128>(din, dout, n, x, w, copy_ms);
        run<T, C, 9, 64, 128>(din, dout, n, x, w, copy_ms);
    } else {
        run<T, C, 17, 32, 64>(din, dout, n, x, w, copy_ms);
        run<T, C, 17, 16, 128>(din, dout, n, x, w, copy_ms);
        run<T, C, 9, 32, 64>(din, dout, n, x, w, copy_ms);
        run<T, C, 9, 16, 128>(din, dout, n, x, w, copy_ms);
    }
    CHECK_CUDA(cudaFree(din));
    CHECK_CUDA(cudaFree(dout));
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 8192;
    const double sigma = argc > 2 ? atof(argv[2]) : 2.0;
    const bool rgb = argc > 3 && strcmp(argv[3], "rgb") == 0;
    const int radius = (int)(4.0 * sigma + 0.5);
    if (n < 64 || n % 4 || n > 32768 || 2 * radius + 1 > KMAX || radius % 4) {
        fprintf(stderr, "usage: sep_tiles_bench [side: a multiple of 4, 64..32768] [sigma: a radius int(4 sigma + 0.5) "
                        "of 4 or 8: 1, 2] [gray|rgb]\n");
        return 2;
    }
    const std::vector<float> w = gaussian_taps(sigma);
    CHECK_CUDA(cudaMemcpyToSymbol(taps, w.data(), w.size() * sizeof(float)));
    if (!rgb) {
        run_all<float, 1>(n, dark_beside_bright((size_t)n * n), w);
        return 0;
    }
    std::vector<uint8_t> x((size_t)3 * n * n);
    uint64_t s = 12345;
    for (auto &v : x) { /* dark beside bright: runs of 0 and 255 among random bytes */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const unsigned kind = (unsigned)(s >> 60);
        v = kind < 3 ? 0 : kind < 6 ? 255 : (uint8_t)(s >> 40);
    }
    run_all<uint8_t, 3>(n, x, w);
    return 0;
}

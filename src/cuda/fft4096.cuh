/* A 4096-point complex FFT held in registers by 256 threads: three radix-16 passes, each a
 * 16-point DFT per thread in registers, with two exchanges through shared memory between them.
 *
 * Why: the Stockham FFT of fft-fused's L2048/L4096/L8192 rows moves all L points through
 * shared memory at each of its six radix-4 passes (and twiddles through L1); here the data
 * crosses shared memory twice per transform, and twiddles are computed, not loaded.
 *
 * Indices: a point's index is n = 256 n2 + 16 n1 + n0 on input and k = k0 + 16 k1 + 256 k2
 * on output (decimation in frequency). fft4096_forward takes thread t's registers holding
 * x[256 j + t] (j = 0..15: coalesced loads) and leaves X[(t >> 4) + 16 (t & 15) + 256 j] in
 * register j: the spectrum in a digit-reversed order that callers keep (the mask's spectrum
 * is made by the same function, so a pointwise product needs no reordering).
 *
 * fft4096_from_digit_reversed is the forward DFT again, but of a vector given in that
 * digit-reversed layout, producing natural order: x[256 j + t] in register j. It is the DIF
 * transform's stages transposed in reverse order (the DFT matrix is symmetric), so it too
 * uses forward butterflies and twiddles; with conj() around it, it is the inverse.
 *
 * Shared memory: FFT4096_SMEM_FLOATS2 float2 (34,816 bytes). Rows of 16 are padded to 17 in
 * the second exchange, where a thread reads a 16-point column (stride 17: no bank conflicts;
 * every other access is 16 consecutive float2 per half-warp).
 *
 * Twiddles come from a policy: both take w = exp(-2 pi i j / N) and w^4 and make the other
 * powers by at most two complex products (a few ulp); fft4096_computed_twiddles gets w and
 * w^4 from sincospif, fft4096_table_twiddles from a 4 KB table computed in double precision
 * by the compiler (fft4096_twiddles), which saves the four sincospif pairs of a convolution
 * block's threads: that kernel is issue-bound (ncu on the H100: 82% issue active). */
#ifndef MH_FFT4096_CUH
#define MH_FFT4096_CUH

#include <cuda_runtime.h>

#define FFT4096_THREADS 256
#define FFT4096_SMEM_FLOATS2 (256 * 17)

static __device__ __forceinline__ float2 fft_cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
static __device__ __forceinline__ float2 fft_cadd(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
static __device__ __forceinline__ float2 fft_csub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }

/* 4-point DFT of (a, b, c, d) in place. */
static __device__ __forceinline__ void fft_dft4(float2 &a, float2 &b, float2 &c, float2 &d)
{
    const float2 s0 = fft_cadd(a, c), d0 = fft_csub(a, c), s1 = fft_cadd(b, d), e = fft_csub(b, d);
    const float2 d1 = make_float2(e.y, -e.x); /* (b - d) * -i */
    a = fft_cadd(s0, s1), c = fft_csub(s0, s1), b = fft_cadd(d0, d1), d = fft_csub(d0, d1);
}

/* exp(-2 pi i e / 16) for e = b c, b, c in 1..3 (compile-time after unrolling). */
static __device__ __forceinline__ float2 fft_w16(int e)
{
    const float c1 = 0.92387953251128674f, s1 = 0.38268343236508977f, h = 0.70710678118654752f;
    switch (e) {
    case 1: return make_float2(c1, -s1);
    case 2: return make_float2(h, -h);
    case 3: return make_float2(s1, -c1);
    case 4: return make_float2(0.0f, -1.0f);
    case 6: return make_float2(-h, -h);
    default: return make_float2(-c1, s1); /* 9 */
    }
}

/* 16-point DFT of v in place, natural order in and out: n = 4 a + b, k = c + 4 d. */
static __device__ __forceinline__ void fft_dft16(float2 (&v)[16])
{
#pragma unroll
    for (int b = 0; b < 4; ++b) fft_dft4(v[b], v[4 + b], v[8 + b], v[12 + b]); /* now v[b + 4 c] */
#pragma unroll
    for (int b = 1; b < 4; ++b)
#pragma unroll
        for (int c = 1; c < 4; ++c) { /* w^4 = -i: a swap and a sign, no multiply */
            const float2 x = v[b + 4 * c];
            v[b + 4 * c] = b * c == 4 ? make_float2(x.y, -x.x) : fft_cmul(x, fft_w16(b * c));
        }
    float2 o[16];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        float2 p = v[4 * c], q = v[1 + 4 * c], r = v[2 + 4 * c], s = v[3 + 4 * c];
        fft_dft4(p, q, r, s);
        o[c] = p, o[c + 4] = q, o[c + 8] = r, o[c + 12] = s;
    }
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = o[i];
}

/* v[e] *= w^e for e = 1..15, given w and w^4: the other powers by at most two complex
 * products each. */
static __device__ __forceinline__ void fft_twiddle_powers(float2 (&v)[16], float2 w1, float2 w4)
{
    float2 w[16];
    w[1] = w1, w[4] = w4;
    w[2] = fft_cmul(w[1], w[1]), w[3] = fft_cmul(w[2], w[1]);
    w[8] = fft_cmul(w[4], w[4]), w[12] = fft_cmul(w[8], w[4]);
#pragma unroll
    for (int a = 4; a < 16; a += 4)
#pragma unroll
        for (int b = 1; b < 4; ++b) w[a + b] = fft_cmul(w[a], w[b]);
#pragma unroll
    for (int e = 1; e < 16; ++e) v[e] = fft_cmul(v[e], w[e]);
}

/* v[e] *= exp(-2 pi i j e / n) for e = 0..15 (j / n taken exactly: j < n <= 4096). */
static __device__ __forceinline__ void fft_twiddle(float2 (&v)[16], int j, int n)
{
    float s1, c1, s4, c4;
    sincospif(-2.0f * (float)j / (float)n, &s1, &c1);
    sincospif(-8.0f * (float)j / (float)n, &s4, &c4);
    fft_twiddle_powers(v, make_float2(c1, s1), make_float2(c4, s4));
}

/* outer: v[e] *= w^(t e), w = exp(-2 pi i / 4096), t = threadIdx.x;
 * inner: v[e] *= w^(lo e), w = exp(-2 pi i / 256), lo = threadIdx.x & 15. */
struct fft4096_computed_twiddles {
    __device__ __forceinline__ void outer(float2 (&v)[16], int t) const { fft_twiddle(v, t, 4096); }
    __device__ __forceinline__ void inner(float2 (&v)[16], int lo) const { fft_twiddle(v, lo, 256); }
};

#define FFT4096_TWIDDLE_FLOATS2 (2 * 256 + 2 * 16)

/* The same twiddles with w and w^4 read from a table (fft4096_twiddles; the caller copies
 * it to shared memory) instead of two sincospif: outer w^t at t, w^(4 t) at 256 + t;
 * inner w^lo at 512 + lo, w^(4 lo) at 528 + lo. Read from global memory, the table's 64-bit
 * pointer and early loads pushed the kernel past 80 registers (~120 bytes spilled). */
struct fft4096_table_twiddles {
    const float2 *table; /* shared memory */
    __device__ __forceinline__ void outer(float2 (&v)[16], int t) const
    {
        fft_twiddle_powers(v, table[t], table[256 + t]);
    }
    __device__ __forceinline__ void inner(float2 (&v)[16], int lo) const
    {
        fft_twiddle_powers(v, table[512 + lo], table[528 + lo]);
    }
};

/* exp(-2 pi i m / n) rounded from double, at compile time (no sincospi in constant
 * expressions): the angle reduced to a quadrant and then to [0, pi/4] by the circle's
 * symmetries, where 12 Taylor terms leave an error under 1e-17. */
constexpr double fft_taylor_sin(double x)
{
    double term = x, sum = x;
    for (int i = 1; i < 12; ++i) term *= -x * x / ((2.0 * i) * (2.0 * i + 1.0)), sum += term;
    return sum;
}
constexpr double fft_taylor_cos(double x)
{
    double term = 1.0, sum = 1.0;
    for (int i = 1; i < 12; ++i) term *= -x * x / ((2.0 * i - 1.0) * (2.0 * i)), sum += term;
    return sum;
}
constexpr float2 fft_root(long long m, long long n)
{
    const double half_pi = 1.57079632679489661923;
    m %= n;
    const long long q = 4 * m / n, r = 4 * m - q * n; /* angle = (q + r / n) pi / 2 */
    const bool low = 2 * r <= n;                        /* r / n <= 1/2: theta <= pi / 4 */
    const double x = half_pi * (double)(low ? r : n - r) / (double)n;
    const double c0 = low ? fft_taylor_cos(x) : fft_taylor_sin(x), s0 = low ? fft_taylor_sin(x) : fft_taylor_cos(x);
    const double c = q == 0 ? c0 : q == 1 ? -s0 : q == 2 ? -c0 : s0;
    const double s = q == 0 ? s0 : q == 1 ? c0 : q == 2 ? -s0 : -c0;
    return float2{(float)c, (float)-s};
}

/* fft4096_table_twiddles' table, made by the compiler: a constant in global memory that
 * kernels copy to shared memory (no kernel has to write it first). */
struct fft4096_twiddle_values {
    float2 w[FFT4096_TWIDDLE_FLOATS2];
};
constexpr fft4096_twiddle_values fft4096_make_twiddles()
{
    fft4096_twiddle_values t{};
    for (int i = 0; i < 256; ++i) t.w[i] = fft_root(i, 4096), t.w[256 + i] = fft_root(4 * i, 4096);
    for (int i = 0; i < 16; ++i) t.w[512 + i] = fft_root(i, 256), t.w[528 + i] = fft_root(4 * i, 256);
    return t;
}
static __device__ const fft4096_twiddle_values fft4096_twiddles = fft4096_make_twiddles();

/* Copies n float2 of a twiddle table into shared memory; every thread of the block (the
 * caller syncs before reading it). */
static __device__ __forceinline__ void fft_load_table(float2 *table, const float2 *from, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x) table[i] = from[i];
}

/* fft4096_twiddles copied into table (shared memory, FFT4096_TWIDDLE_FLOATS2 float2) by the
 * whole block, then a barrier: the twiddles of a kernel's transforms. */
static __device__ __forceinline__ fft4096_table_twiddles fft4096_shared_twiddles(float2 *table)
{
    fft_load_table(table, fft4096_twiddles.w, FFT4096_TWIDDLE_FLOATS2);
    __syncthreads();
    return fft4096_table_twiddles{table};
}

/* Registers x[256 j + t] -> X[(t >> 4) + 16 (t & 15) + 256 j], t in 0..255 (threadIdx.x for
 * a block of 256; fft8192.cuh runs two of these side by side), every thread of the block.
 * It writes s first and reads it last: a caller syncs before it when s was in use, and
 * after it before writing s again, except where thread t writes only its own row s[17 t ..
 * 17 t + 15], which is all it read last (fft4096_from_digit_reversed's first writes). */
template <class Twiddles>
static __device__ __forceinline__ void fft4096_forward(float2 (&v)[16], float2 *s, const Twiddles &tw, int t)
{
    const int hi = t >> 4, lo = t & 15;
    fft_dft16(v); /* over n2 -> k0 */
    tw.outer(v, t);
#pragma unroll
    for (int j = 0; j < 16; ++j) s[j * 256 + t] = v[j]; /* row k0, column t = 16 n1 + n0 */
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = s[hi * 256 + j * 16 + lo]; /* thread (k0, n0), over n1 */
    __syncthreads();
    fft_dft16(v); /* over n1 -> k1 */
    tw.inner(v, lo);
#pragma unroll
    for (int j = 0; j < 16; ++j) s[(hi * 16 + j) * 17 + lo] = v[j]; /* row 16 k0 + k1, column n0 */
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = s[t * 17 + j]; /* thread (k0, k1), over n0 */
    fft_dft16(v); /* over n0 -> k2 */
}

/* The forward DFT of a vector held as fft4096_forward leaves its output; the result in
 * natural order, x[256 j + t] in register j. Same shared-memory contract. */
template <class Twiddles>
static __device__ __forceinline__ void fft4096_from_digit_reversed(float2 (&v)[16], float2 *s, const Twiddles &tw,
                                                                   int t)
{
    const int hi = t >> 4, lo = t & 15;
    fft_dft16(v);
#pragma unroll
    for (int j = 0; j < 16; ++j) s[t * 17 + j] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = s[(hi * 16 + j) * 17 + lo];
    __syncthreads();
    tw.inner(v, lo);
    fft_dft16(v);
#pragma unroll
    for (int j = 0; j < 16; ++j) s[hi * 256 + j * 16 + lo] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = s[j * 256 + t];
    tw.outer(v, t);
    fft_dft16(v);
}

#endif

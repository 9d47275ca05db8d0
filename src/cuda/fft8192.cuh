/* An 8192-point complex FFT held in registers by 512 threads: one radix-2 step around two
 * 4096-point FFTs (fft4096.cuh), the block's two halves of 256 threads each running one.
 *
 * Why: at k = 2047 a 4096-point segment gives hop = 2050 outputs per 4096 points
 * transformed, an 8192-point one 6146 per 8192: 25% less FFT work per output, and masks up
 * to k = 4097 stay on chip in registers (the Stockham L8192 moved every point through shared
 * memory at each of seven passes).
 *
 * Thread t = 256 h + u (half h, lane u). With m = 256 j + u (j = 0..15):
 *   forward (decimation in frequency): half 0 takes a_m = x[m] + x[m + 4096], half 1
 *   b_m = (x[m] - x[m + 4096]) w^m, w = exp(-2 pi i / 8192); then X[2 f] = FFT4096(a)[f] and
 *   X[2 f + 1] = FFT4096(b)[f]: each half runs fft4096_forward and keeps its 4096 outputs
 *   in that function's digit-reversed order. The caller hands each thread x[m] and
 *   x[m + 4096] (fused8192_kernel loads both from global memory: no exchange).
 *   from_split (the forward DFT of a vector held in that layout, natural order out):
 *   P = DFT4096 of the even-indexed half, Q of the odd one (fft4096_from_digit_reversed in
 *   each half), then y[m] = P[m] + w^m Q[m] and y[m + 4096] = P[m] - w^m Q[m]: one
 *   exchange through shared memory, half 0 ending with y[m], half 1 with y[m + 4096].
 *
 * Shared memory: FFT8192_SMEM_FLOATS2 float2 (69,632 bytes: one fft4096 area per half).
 * Twiddles: fft4096_table_twiddles' table followed by w^u for u = 0..255
 * (FFT8192_TWIDDLE_FLOATS2 in all, fft8192_twiddles); w^m = w^u exp(-2 pi i j / 32). */
#ifndef MH_FFT8192_CUH
#define MH_FFT8192_CUH

#include "fft4096.cuh"

#define FFT8192_THREADS 512
#define FFT8192_SMEM_FLOATS2 (2 * FFT4096_SMEM_FLOATS2)
#define FFT8192_TWIDDLE_FLOATS2 (FFT4096_TWIDDLE_FLOATS2 + 256)

/* exp(-2 pi i j / 32), j = 0..15 (compile-time after unrolling). */
static __device__ __forceinline__ float2 fft_w32(int j)
{
    const float c[9] = {1.0f,
                        0.98078528040323043f,
                        0.92387953251128674f,
                        0.83146961230254524f,
                        0.70710678118654752f,
                        0.55557023301960218f,
                        0.38268343236508977f,
                        0.19509032201612826f,
                        0.0f}; /* cos(pi j / 16) */
    return j <= 8 ? make_float2(c[j], -c[8 - j]) : make_float2(-c[16 - j], -c[j - 8]);
}

/* The table: fft4096_twiddles' entries, then exp(-2 pi i u / 8192) for u < 256; made by the
 * compiler, as fft4096_twiddles. */
struct fft8192_twiddle_values {
    float2 w[FFT8192_TWIDDLE_FLOATS2];
};
constexpr fft8192_twiddle_values fft8192_make_twiddles()
{
    fft8192_twiddle_values t{};
    const fft4096_twiddle_values inner = fft4096_make_twiddles();
    for (int i = 0; i < FFT4096_TWIDDLE_FLOATS2; ++i) t.w[i] = inner.w[i];
    for (int u = 0; u < 256; ++u) t.w[FFT4096_TWIDDLE_FLOATS2 + u] = fft_root(u, 8192);
    return t;
}
static __device__ const fft8192_twiddle_values fft8192_twiddles = fft8192_make_twiddles();

/* v[j] *= w^(256 j + u), given wu = w^u. */
static __device__ __forceinline__ void fft8192_twiddle(float2 (&v)[16], float2 wu)
{
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = fft_cmul(v[j], j ? fft_cmul(wu, fft_w32(j)) : wu);
}

/* The radix-2 step's first half, one point at a time as the caller loads them: a = x[m],
 * b = x[m + 4096] -> a + b in half 0, a - b in half 1 (fft8192_forward twiddles the latter). */
static __device__ __forceinline__ float2 fft8192_fold(float2 a, float2 b)
{
    return threadIdx.x >> 8 ? fft_csub(a, b) : fft_cadd(a, b);
}

/* v[j] = fft8192_fold(x[256 j + u], x[4096 + 256 j + u]) -> half h's 4096 outputs in
 * fft4096_forward's order. s: this block's FFT8192_SMEM_FLOATS2 area; the same barrier
 * contract as fft4096_forward. */
template <class Twiddles>
static __device__ __forceinline__ void fft8192_forward(float2 (&v)[16], float2 *s, const Twiddles &tw,
                                                       const float2 *table)
{
    const int h = threadIdx.x >> 8, u = threadIdx.x & 255;
    if (h) fft8192_twiddle(v, table[FFT4096_TWIDDLE_FLOATS2 + u]);
    fft4096_forward(v, s + h * FFT4096_SMEM_FLOATS2, tw, u);
}

/* The forward DFT of a vector held as fft8192_forward leaves its output: half 0 ends with
 * y[256 j + u] in v[j], half 1 with y[4096 + 256 j + u]. Same shared-memory contract. */
template <class Twiddles>
static __device__ __forceinline__ void fft8192_from_split(float2 (&v)[16], float2 *s, const Twiddles &tw,
                                                          const float2 *table)
{
    const int h = threadIdx.x >> 8, u = threadIdx.x & 255;
    fft4096_from_digit_reversed(v, s + h * FFT4096_SMEM_FLOATS2, tw, u);
    if (h) fft8192_twiddle(v, table[FFT4096_TWIDDLE_FLOATS2 + u]); /* w^m Q[m] */
    __syncthreads(); /* both halves' last reads of s are done */
#pragma unroll
    for (int j = 0; j < 16; ++j) s[h * FFT4096_SMEM_FLOATS2 + j * 256 + u] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const float2 other = s[(1 - h) * FFT4096_SMEM_FLOATS2 + j * 256 + u];
        v[j] = h ? fft_csub(other, v[j]) : fft_cadd(v[j], other);
    }
}

#endif

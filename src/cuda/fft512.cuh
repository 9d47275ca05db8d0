/* A 512-point complex FFT held in the registers of one warp, 16 points a lane: a 16-point DFT,
 * an exchange through shared memory, a 16-point DFT, and a 2-point DFT between neighbouring
 * lanes by shuffles. Each warp transforms on its own (no block barrier): conv2d/fft-3pass runs
 * eight of these side by side in a block, one row or column pair each.
 *
 * Indices: n = 32 n2 + 2 n1 + n0 on input, k = k0 + 16 k1 + 256 k2 on output (n2, n1, k0,
 * k1 < 16; n0, k2 < 2). fft512_forward takes lane t's registers holding x[32 j + t] (j =
 * 0..15: coalesced loads) and leaves X[k0 + 16 j + 256 k2] in register j of lane 2 k0 + k2:
 * the spectrum in a digit-reversed order that callers keep (a filter's spectrum made by the
 * same function lies in the same order, so a pointwise product needs no reordering).
 *
 *   exp(-2 pi i n k / 512) = w16^(n2 k0) w512^((2 n1 + n0) k0) w16^(n1 k1) w32^(n0 k1) w2^(n0 k2)
 *
 * fft512_from_digit_reversed is the forward DFT of a vector given in that digit-reversed
 * layout, with the result in natural order (x[32 j + t] in register j of lane t): the stages
 * transposed in reverse order (the DFT matrix is symmetric). With conj() around it, it is the
 * inverse times 512.
 *
 * Shared memory: FFT512_WARP_FLOAT2 float2 a warp. The exchange writes row k0 (16 rows of 32,
 * padded to 34) and reads 16 values 2 apart; with the padding the 16 lanes of a half-warp meet
 * 16 different banks of 8 bytes both ways. Twiddles: w512^m for m < 128 rounded from double
 * at compile time; a lane's powers come from two of them by fft_twiddle_powers. */
#ifndef MH_FFT512_CUH
#define MH_FFT512_CUH

#include "fft4096.cuh"

#define FFT512_LINE 34
#define FFT512_WARP_FLOAT2 (16 * FFT512_LINE)

struct fft512_twiddle_values {
    float2 w[128];
};
constexpr fft512_twiddle_values fft512_make_twiddles()
{
    fft512_twiddle_values t{};
    for (int m = 0; m < 128; ++m) t.w[m] = fft_root(m, 512);
    return t;
}
static __device__ const fft512_twiddle_values fft512_twiddles = fft512_make_twiddles();

static __device__ __forceinline__ float2 fft512_w(int m) { return __ldg(fft512_twiddles.w + m); }

/* v[j] *= w32^(n0 j): n0 = 0 or 1 (a multiply by one on the even lanes keeps the warp together). */
static __device__ __forceinline__ void fft512_twiddle32(float2 (&v)[16], int n0)
{
    fft_twiddle_powers(v, fft512_w(16 * n0), fft512_w(64 * n0));
}

/* The 2-point DFT across lanes l and l ^ 1, register by register: the even lane keeps the sum,
 * the odd one the difference. */
static __device__ __forceinline__ void fft512_pair_dft2(float2 (&v)[16], int n0)
{
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const float2 o = make_float2(__shfl_xor_sync(0xffffffffu, v[j].x, 1), __shfl_xor_sync(0xffffffffu, v[j].y, 1));
        v[j] = n0 ? fft_csub(o, v[j]) : fft_cadd(v[j], o);
    }
}

/* Registers x[32 j + lane] -> X[k0 + 16 j + 256 k2] in lane 2 k0 + k2. s: the warp's
 * FFT512_WARP_FLOAT2, free on entry (a caller that used it last syncs the warp first); it is
 * free again on return. */
static __device__ __forceinline__ void fft512_forward(float2 (&v)[16], float2 *s, int lane)
{
    const int k0 = lane >> 1, n0 = lane & 1;
    fft_dft16(v); /* over n2 -> k0, for t = 2 n1 + n0 = lane */
    fft_twiddle_powers(v, fft512_w(lane), fft512_w(4 * lane));
#pragma unroll
    for (int j = 0; j < 16; ++j) s[j * FFT512_LINE + lane] = v[j];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = s[k0 * FFT512_LINE + 2 * j + n0]; /* lane (k0, n0), over n1 */
    __syncwarp();
    fft_dft16(v); /* over n1 -> k1 */
    fft512_twiddle32(v, n0);
    fft512_pair_dft2(v, n0); /* over n0 -> k2 */
}

/* The forward DFT of a vector held as fft512_forward leaves its output; the result in natural
 * order, x[32 j + lane] in register j. Same shared-memory contract. */
static __device__ __forceinline__ void fft512_from_digit_reversed(float2 (&v)[16], float2 *s, int lane)
{
    const int k0 = lane >> 1, n0 = lane & 1;
    fft512_pair_dft2(v, n0); /* over k2 -> n0 */
    fft512_twiddle32(v, n0);
    fft_dft16(v); /* over k1 -> n1 */
    const float2 c = fft512_w(n0 * k0); /* w512^((2 j + n0) k0) = w512^(n0 k0) (w512^(2 k0))^j */
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = fft_cmul(v[j], c);
    fft_twiddle_powers(v, fft512_w(2 * k0), fft512_w(8 * k0));
#pragma unroll
    for (int j = 0; j < 16; ++j) s[k0 * FFT512_LINE + 2 * j + n0] = v[j];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = s[j * FFT512_LINE + lane]; /* lane t = 2 n1 + n0, over k0 */
    __syncwarp();
    fft_dft16(v); /* over k0 -> n2 */
}

#endif

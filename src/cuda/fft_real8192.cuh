/* A real 8192-point correlation on chip through one 4096-point complex FFT (fft4096.cuh).
 *
 * Why: reg4096 fits two real 4096-point segments into one complex FFT (x_a + i x_b), so at
 * k = 2047 it gets 2 x 2050 outputs from two 4096-point transforms. Packing one real
 * 8192-point segment as z[m] = x[2m] + i x[2m+1] instead gets ~6144 outputs from the same
 * two transforms (1.5x) at the price of one exchange between frequencies f and -f, and its
 * loads are 8 bytes wide (half the load instructions).
 *
 * The algebra (N = 4096, M = 8192, Z = FFT_N(z), Zp[f] = Z[-f mod N], W = exp(-2 pi i / M)):
 *   the even and odd samples' spectra  Xe = (Z + conj Zp) / 2,  Xo = (Z - conj Zp) / (2 i),
 *   the real signal's  X[f] = Xe + W^f Xo,  X[f + N] = Xe - W^f Xo.
 * Multiplying by the correlation's filter H = conj(FFT_M(mask)) and packing the product's
 * even and odd samples back into one complex vector Z' (so that IFFT_N(Z') = y[2m] + i y[2m+1])
 * is, for every f, a map of Z[f] and Zp[f] alone:
 *   Z' = A Z + B conj Zp,  A = P - sin(t) Q,  B = i cos(t) Q,  t = 2 pi f / M,
 *   P = (H[f] + H[f + N]) / 2 = conj Xe_m,  Q = (H[f] - H[f + N]) / 2 = conj(W^f Xo_m)
 * with Xe_m, Xo_m the mask's. The convolution kernel reads (conj A / N, conj B / N) per f
 * and takes the inverse as a forward FFT of conj(Z') / N (fft4096_from_digit_reversed),
 * which gives conj(z'): y[2m] is its real part, y[2m+1] minus its imaginary part.
 * (Checked in double against a direct correlation before it was written.)
 *
 * Where -f lives: fft4096_forward leaves Z[f], f = (t >> 4) + 16 (t & 15) + 256 j, in
 * register j of thread t, and fft4096_publish writes it to row t, column j of the padded
 * layout (s[17 t + j]). Z[-f] is in row t' = 271 - t for t >= 16, 16 - t for 0 < t < 16, 0 for
 * t = 0, column 15 - j, except (16 - j) mod 16 for t = 0 (the borrow of -f stops at a different
 * digit in each case): one base address a thread, then a constant offset per register. */
#ifndef MH_FFT_REAL8192_CUH
#define MH_FFT_REAL8192_CUH

#include "fft4096.cuh"

/* Writes thread t's 16 spectrum values for fft4096_partner where fft4096_forward's last step
 * read them (row t of the padded layout): no other thread has touched those addresses since,
 * so no barrier is needed before; the caller syncs after. */
static __device__ __forceinline__ void fft4096_publish(const float2 (&v)[16], float2 *s, int t)
{
#pragma unroll
    for (int j = 0; j < 16; ++j) s[t * 17 + j] = v[j];
}

/* The address fft4096_partner counts down from for thread t (16 only for t = 0). */
static __device__ __forceinline__ int fft4096_partner_base(int t)
{
    return t >= 16 ? (271 - t) * 17 + 15 : t ? (16 - t) * 17 + 15 : 16;
}

/* Z[-f mod 4096] for the f that register j of the thread holds (base: its partner base). */
static __device__ __forceinline__ float2 fft4096_partner(const float2 *s, int base, int j)
{
    return s[j || base != 16 ? base - j : 0];
}

/* The filter pair (conj A / N, conj B / N) at f from the mask's Z and Zp (see above). */
static __device__ __forceinline__ float4 real8192_filter(float2 z, float2 zp, int f)
{
    const float2 xe = make_float2(0.5f * (z.x + zp.x), 0.5f * (z.y - zp.y));  /* (Z + conj Zp) / 2 */
    const float2 xo = make_float2(0.5f * (z.y + zp.y), -0.5f * (z.x - zp.x)); /* (Z - conj Zp) / 2i */
    float s, c;
    sincospif((float)f / 4096.0f, &s, &c); /* t = pi f / 4096 (f / 4096 exact) */
    const float n = 1.0f / 4096.0f;
    const float2 wxo = fft_cmul(make_float2(c, -s), xo); /* W^f Xo */
    /* conj A = Xe - sin(t) W^f Xo;  conj B = -i cos(t) W^f Xo */
    return make_float4(n * (xe.x - s * wxo.x), n * (xe.y - s * wxo.y), n * c * wxo.y, -n * c * wxo.x);
}

/* conj(Z') / N at f from the signal's Z, Zp and the filter pair: the inverse transform's input. */
static __device__ __forceinline__ float2 real8192_apply(float2 z, float2 zp, float4 ab)
{
    const float2 za = fft_cmul(make_float2(ab.x, ab.y), make_float2(z.x, -z.y)); /* conj A conj Z */
    const float2 zb = fft_cmul(make_float2(ab.z, ab.w), zp);                      /* conj B Zp */
    return fft_cadd(za, zb);
}

#endif

/* The 3xTF32 split, one definition for matmul/tf32x3 (matmul_tensor.cu) and
 * matmul/tf32x3-wgmma (matmul_wgmma.cu): x = big + small, big = tf32(x) rounded to nearest,
 * small = tf32(x - big) (x - big is exact in FP32), together within ~2^-22 of |x|
 * (docs/matmul.md "The accuracy contract"). */
#ifndef MH_TF32_SPLIT_CUH
#define MH_TF32_SPLIT_CUH

/* x rounded to TF32 (10 explicit mantissa bits), as the bits an mma operand takes. */
static __device__ __forceinline__ unsigned tf32_round(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

/* small = tf32(x - big); an infinite x keeps small = 0 (x - big would be NaN). */
static __device__ __forceinline__ unsigned tf32_small(float x, unsigned big)
{
    const float rest = x - __uint_as_float(big);
    return tf32_round(isinf(x) ? 0.0f : rest);
}

/* |x| within 2^-11 of FLT_MAX rounds big to Inf: this form is for splits inside a product's
 * loop (matmul/tf32x3, conv2d/tc), where a guard costs 18-30% of tf32x3's time. */
static __device__ __forceinline__ void tf32_split(float x, unsigned &big, unsigned &small)
{
    big = tf32_round(x);
    small = tf32_small(x, big);
}

/* The same where rounding to nearest would pass FLT_MAX, big truncated instead, so that big +
 * small stays x and the products stay as finite as FP32's: for splits done once, in a pass over
 * the operands (matmul/tf32x3-wgmma), where the guard costs nothing measurable. */
static __device__ __forceinline__ void tf32_split_finite(float x, unsigned &big, unsigned &small)
{
    big = tf32_round(x);
    if (isinf(__uint_as_float(big)) && !isinf(x)) big = __float_as_uint(x) & 0xFFFFE000u;
    small = tf32_small(x, big);
}

/* x = big + small + rest exactly, for short sums (conv2d/tc below 121 terms): x - big and
 * (x - big) - small are exact in FP32, and rest keeps at most 2 significant bits, so it is a TF32
 * value as it is. Six products of the parts (all but small*rest, rest*small, rest*rest) leave
 * each product within ~2^-33 of itself, where big + small alone leaves ~2^-22. */
static __device__ __forceinline__ void tf32_split3(float x, unsigned &big, unsigned &small, unsigned &rest)
{
    tf32_split(x, big, small);
    rest = isinf(x) ? 0u : __float_as_uint((x - __uint_as_float(big)) - __uint_as_float(small));
}

/* The same split in integer arithmetic, for kernels that split every element they load
 * (conv1d/tc): cvt.rna.tf32.f32 is emulated on sm_90, about 9 instructions a value (ncu on
 * conv2d/tc). Adding half of the 13 dropped bits' range and clearing them rounds the magnitude
 * to nearest, ties away, as cvt.rna does; a carry moves into the exponent as it should. Where
 * that rounding would pass FLT_MAX, big is truncated instead, so that big + small stays x.
 * Inf keeps small = 0; a NaN becomes the canonical NaN, whose TF32 bits are still a NaN (the
 * tensor cores drop the low 13 bits, which may be all a NaN's payload). */
static __device__ __forceinline__ unsigned tf32_round_bits(unsigned bits) { return (bits + 0x1000u) & 0xFFFFE000u; }

static __device__ __forceinline__ void tf32_split_int(float x, unsigned &big, unsigned &small)
{
    const unsigned bits = __float_as_uint(x);
    if (!isfinite(x)) {
        big = isnan(x) ? 0x7FFFFFFFu : bits, small = 0u;
        return;
    }
    big = tf32_round_bits(bits);
    if ((big & 0x7F800000u) == 0x7F800000u) big = bits & 0xFFFFE000u;
    small = tf32_round_bits(__float_as_uint(x - __uint_as_float(big)));
}

#endif

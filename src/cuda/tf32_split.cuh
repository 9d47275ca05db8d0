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

/* An infinite x keeps small = 0 (x - big would be NaN). */
static __device__ __forceinline__ void tf32_split(float x, unsigned &big, unsigned &small)
{
    big = tf32_round(x);
    const float rest = x - __uint_as_float(big);
    small = tf32_round(isinf(x) ? 0.0f : rest);
}

#endif

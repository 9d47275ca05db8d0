/* Element types (mh_dtype, include/memhier.h): reading a value as float32 and scipy.ndimage's
 * store of a float result into a type, for the CPU rows and the CUDA kernels alike, so that
 * every row stores the same bits.
 *
 * scipy computes in float64 and stores with a C cast, on x86-64 through a 32-bit integer:
 * truncated toward zero, then wrapped modulo 2^bits; NaN and values past +-2^31 become the
 * integer 0x80000000, whose low bits are 0. Floats round to nearest even. */
#ifndef MH_DTYPE_H
#define MH_DTYPE_H

#include "memhier.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#include <cuda_fp16.h>
#define MH_DTYPE_FN __host__ __device__ __forceinline__
#else
#define MH_DTYPE_FN static inline
#endif

/* Whether t's values need float64 (their integers pass 2^24, or float64 itself): a sepfilter call
 * reading or writing one computes in float64, as scipy does (its every filter does). */
MH_DTYPE_FN int mh_dtype_is_wide(mh_dtype t)
{
    return t == MH_I32 || t == MH_I64 || t == MH_U32 || t == MH_U64 || t == MH_F64;
}

/* Bytes of one element of type t; 0 for a value outside the enum (mh_dtype_size's answer). */
MH_DTYPE_FN size_t mh_dtype_bytes(mh_dtype t)
{
    switch (t) {
    case MH_I64: case MH_U64: case MH_F64: return 8;
    case MH_F32: case MH_I32: case MH_U32: return 4;
    case MH_F16: case MH_U16: case MH_I16: case MH_BF16: return 2;
    case MH_U8: case MH_I8: return 1;
    }
    return 0;
}

/* float16 bits to float32: exact. */
MH_DTYPE_FN float mh_half_to_float(uint16_t h)
{
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(h));
#else
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint32_t bits;
    if (e == 0) { /* zero or subnormal: m * 2^-24, exact in float32 */
        const float v = (float)m * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    bits = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112u) << 23) | (m << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
#endif
}

/* float32 to float16 bits, rounded to nearest even (overflow to infinity, NaN kept NaN). */
MH_DTYPE_FN uint16_t mh_float_to_half(float f)
{
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(f));
#else
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and up: past the largest, 65504 */
    if (ax < 0x38800000u) { /* below 2^-14: a subnormal, |f| * 2^24 rounded (exact scaling) */
        float a;
        memcpy(&a, &ax, sizeof a);
        return (uint16_t)(sign | (uint32_t)nearbyintf(a * 16777216.0f));
    }
    const uint32_t mant = ax & 0x7fffffu, rest = mant & 0x1fffu;
    uint32_t h = (((ax >> 23) - 112u) << 10) | (mant >> 13);
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h; /* a carry moves into the exponent */
    return (uint16_t)(sign | h);
#endif
}

/* bfloat16 bits to float32: exact (the top half of a float32). */
MH_DTYPE_FN float mh_bf16_to_float(uint16_t h)
{
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* float32 to bfloat16 bits, rounded to nearest even (overflow to infinity, NaN kept NaN). */
MH_DTYPE_FN uint16_t mh_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* a quiet NaN */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* The value a float result takes once stored into type t (as a float: every stored value of
 * these types is exact in float32). */
MH_DTYPE_FN float mh_cast_value(float v, mh_dtype t)
{
    if (t == MH_F32) return v;
    if (t == MH_F16) return mh_half_to_float(mh_float_to_half(v));
    if (t == MH_BF16) return mh_bf16_to_float(mh_float_to_bf16(v));
    /* truncated toward zero where it fits 32 bits; NaN fails the test too */
#ifdef __CUDA_ARCH__
    const int32_t i = fabsf(v) < 2147483648.0f ? __float2int_rz(v) : 0;
#else
    const int32_t i = fabsf(v) < 2147483648.0f ? (int32_t)v : 0;
#endif
    switch (t) {
    case MH_U8: return (float)(i & 0xff);
    case MH_I8: return (float)(((i & 0xff) ^ 0x80) - 0x80);
    case MH_U16: return (float)(i & 0xffff);
    case MH_I16: return (float)(((i & 0xffff) ^ 0x8000) - 0x8000);
    default: return v;
    }
}

/* A separable pass's stored value: its float32 sum divided by the pass's divisor where that is not
 * 1 (scipy's uniform filter divides an exact sum), cast into type t. */
MH_DTYPE_FN float mh_finish_value(float sum, float divisor, mh_dtype t)
{
    return mh_cast_value(divisor != 1.0f ? sum / divisor : sum, t);
}

/* Element i of an array of type t, as float32 (exact for every type). */
MH_DTYPE_FN float mh_load_value(const void *p, size_t i, mh_dtype t)
{
    switch (t) {
    case MH_F16: return mh_half_to_float(((const uint16_t *)p)[i]);
    case MH_BF16: return mh_bf16_to_float(((const uint16_t *)p)[i]);
    case MH_U8: return (float)((const uint8_t *)p)[i];
    case MH_I8: return (float)((const int8_t *)p)[i];
    case MH_U16: return (float)((const uint16_t *)p)[i];
    case MH_I16: return (float)((const int16_t *)p)[i];
    default: return ((const float *)p)[i];
    }
}

/* Stores v, a value of type t already (mh_cast_value's result), as element i. */
MH_DTYPE_FN void mh_store_value(void *p, size_t i, mh_dtype t, float v)
{
    switch (t) {
    case MH_F16: ((uint16_t *)p)[i] = mh_float_to_half(v); break;
    case MH_BF16: ((uint16_t *)p)[i] = mh_float_to_bf16(v); break;
    case MH_U8: ((uint8_t *)p)[i] = (uint8_t)(int32_t)v; break;
    case MH_I8: ((int8_t *)p)[i] = (int8_t)(int32_t)v; break;
    case MH_U16: ((uint16_t *)p)[i] = (uint16_t)(int32_t)v; break;
    case MH_I16: ((int16_t *)p)[i] = (int16_t)(int32_t)v; break;
    default: ((float *)p)[i] = v; break;
    }
}

/* ---- the same in float64, for the calls computed in float64 (mh_dtype_is_wide) ---------------
 * scipy's store of a double into t as gcc compiles its C cast on x86-64: through cvttsd2si, which
 * truncates toward zero and gives the "integer indefinite" (the least value) for NaN and values
 * out of its range; 8- and 16-bit types through int32, uint32 through int64, uint64 through int64
 * below 2^63 and as x - 2^63 with the top bit set above. */

/* cvttsd2si's 32- and 64-bit results. */
MH_DTYPE_FN int32_t mh_double_to_i32(double v)
{
    return v > -2147483649.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN; /* NaN fails both */
}
MH_DTYPE_FN int64_t mh_double_to_i64(double v)
{
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}

MH_DTYPE_FN uint64_t mh_double_to_u64(double v)
{
    if (!(v >= 9223372036854775808.0)) return (uint64_t)mh_double_to_i64(v); /* NaN too */
    return (uint64_t)mh_double_to_i64(v - 9223372036854775808.0) ^ 0x8000000000000000ull;
}

/* Element i of an array of type t as float64 (exact but for int64 and uint64 past 2^53, rounded
 * to nearest as numpy's and scipy's conversions round). */
MH_DTYPE_FN double mh_load_double(const void *p, size_t i, mh_dtype t)
{
    switch (t) {
    case MH_F64: return ((const double *)p)[i];
    case MH_I32: return (double)((const int32_t *)p)[i];
    case MH_U32: return (double)((const uint32_t *)p)[i];
    case MH_I64: return (double)((const int64_t *)p)[i];
    case MH_U64: return (double)((const uint64_t *)p)[i];
    default: return (double)mh_load_value(p, i, t);
    }
}

/* Stores the double v as element i of type t with scipy's cast (float16 is not met here: a
 * float64 call with float16 is refused). */
MH_DTYPE_FN void mh_store_double(void *p, size_t i, mh_dtype t, double v)
{
    switch (t) {
    case MH_F64: ((double *)p)[i] = v; break;
    case MH_F32: ((float *)p)[i] = (float)v; break;
    case MH_I32: ((int32_t *)p)[i] = mh_double_to_i32(v); break;
    case MH_U32: ((uint32_t *)p)[i] = (uint32_t)mh_double_to_i64(v); break;
    case MH_I64: ((int64_t *)p)[i] = mh_double_to_i64(v); break;
    case MH_U64: ((uint64_t *)p)[i] = mh_double_to_u64(v); break;
    case MH_U8: ((uint8_t *)p)[i] = (uint8_t)mh_double_to_i32(v); break;
    case MH_I8: ((int8_t *)p)[i] = (int8_t)mh_double_to_i32(v); break;
    case MH_U16: ((uint16_t *)p)[i] = (uint16_t)mh_double_to_i32(v); break;
    case MH_I16: ((int16_t *)p)[i] = (int16_t)mh_double_to_i32(v); break;
    default: break;
    }
}

/* The value v takes once stored into t and read back as float64: what scipy's next pass, or
 * generic_laplace's sum, reads of a stored value (mh_store_double's cast, one slot wide). */
MH_DTYPE_FN double mh_cast_double(double v, mh_dtype t)
{
    double slot = 0.0; /* 8 bytes, aligned for every type */
    mh_store_double(&slot, 0, t, v);
    return mh_load_double(&slot, 0, t);
}

/* out[i] += term[i] in t's own arithmetic, as numpy's `output += term` adds two arrays of a wide
 * type (integers wrap modulo 2^bits, exact past 2^53; floats round once). */
MH_DTYPE_FN void mh_add_wide(void *out, const void *term, size_t i, mh_dtype t)
{
    switch (t) {
    case MH_F64: ((double *)out)[i] += ((const double *)term)[i]; break;
    case MH_I32: case MH_U32: ((uint32_t *)out)[i] += ((const uint32_t *)term)[i]; break;
    case MH_I64: case MH_U64: ((uint64_t *)out)[i] += ((const uint64_t *)term)[i]; break;
    default: break;
    }
}

/* A float64 pass's stored value (mh_finish_value's rule), read back as float64. */
MH_DTYPE_FN double mh_finish_double(double sum, double divisor, mh_dtype t)
{
    return mh_cast_double(divisor != 1.0 ? sum / divisor : sum, t);
}

#endif

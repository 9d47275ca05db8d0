/* The order every rank row selects in (mh_rank): a float64 value as an unsigned 64-bit key whose
 * order is numpy's sort order (NaN above every number, every NaN one key), -0.0 just below +0.0;
 * and the value a key stands for (NaN as the quiet NaN). Shared by the CPU rows and the kernels,
 * so that every row selects the same bits. */
#ifndef MH_RANK_KEY_H
#define MH_RANK_KEY_H

#include "dtype.h"

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define MH_RANK_FN __host__ __device__ __forceinline__
#else
#define MH_RANK_FN static inline
#endif

#define MH_RANK_NAN_KEY UINT64_MAX

MH_RANK_FN uint64_t mh_rank_key(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (v != v) return MH_RANK_NAN_KEY;
    /* negatives: every bit flipped (a larger magnitude sorts lower); the others above them */
    return bits >> 63 ? ~bits : bits | 0x8000000000000000ull;
}

MH_RANK_FN double mh_rank_value(uint64_t key)
{
    const uint64_t bits = key == MH_RANK_NAN_KEY ? 0x7ff8000000000000ull
                          : key >> 63             ? key & 0x7fffffffffffffffull
                                                  : ~key;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* scipy.ndimage's sum of a window element and the structure's value s on an image of type t, the
 * footprint's first set element excepted (scipy adds that one in float64): s cast to t as C casts
 * it (an integer truncated, then wrapped to t's width; float32 rounded), added in t's own
 * arithmetic (integers wrap), read back as float64. The element is in[i], or cval (a value of t)
 * where `outside`. The caller has checked s (mh_rank: finite, below 2^31 or 2^63). */
MH_RANK_FN double mh_rank_sum_in_type(const void *in, size_t i, int outside, double cval, mh_dtype t, double s)
{
    if (t == MH_F64) return (outside ? cval : ((const double *)in)[i]) + s;
    if (t == MH_F32) return (double)((outside ? (float)cval : ((const float *)in)[i]) + (float)s);
    const int64_t s64 = (int64_t)s; /* truncated */
    if (t == MH_U64) {
        const uint64_t v = outside ? (uint64_t)(int64_t)cval : ((const uint64_t *)in)[i]; /* wrapped, not undefined */
        return (double)(v + (uint64_t)s64);
    }
    if (t == MH_I64) {
        const uint64_t v = (uint64_t)(outside ? (int64_t)cval : ((const int64_t *)in)[i]);
        return (double)(int64_t)(v + (uint64_t)s64);
    }
    /* the narrower integers: the sum of two values within 2^32 in 64 bits, then wrapped */
    const uint64_t sum = (uint64_t)((int64_t)(outside ? cval : mh_load_double(in, i, t)) + s64);
    switch (t) {
    case MH_U8: return (double)(uint8_t)sum;
    case MH_I8: return (double)(int8_t)(uint8_t)sum;
    case MH_U16: return (double)(uint16_t)sum;
    case MH_I16: return (double)(int16_t)(uint16_t)sum;
    case MH_U32: return (double)(uint32_t)sum;
    default: return (double)(int32_t)(uint32_t)sum; /* MH_I32 */
    }
}

#endif

/* What the CUDA rank rows share (rank.cu, rank_network.cu, rank_median.cu): keys in the input's
 * own width and the choice between them and 64-bit keys. */
#ifndef MH_CUDA_RANK_KEYS_CUH
#define MH_CUDA_RANK_KEYS_CUH

#include "common.cuh"
#include "../core/rank_key.h"

#include <float.h>
#include <limits>
#include <math.h>
#include <string.h>
#include <type_traits>

/* Keys in the input's own width (minmax and network): a type of up to 32 bits ranks by a 32-bit
 * key in mh_rank_key's order (unsigned values as they are, signed ones with the sign bit flipped,
 * float32 by its bits, NaN above all), read and turned back with no float64 conversion. T = void:
 * the input read as float64 whatever its type, 64-bit keys (the wide types, a structure, a cval
 * its type does not hold).
 * float32's key is three instructions, the cost of a key in the median networks' loops: the bits
 * ordered (a negative value's flipped, a positive one's sign bit set: -inf 2^23 - 1 up to +inf
 * 2^32 - 2^23), then moved down by 2^23 - 1, which takes the NaNs of either sign above +inf (every
 * key above FLOAT_INF_KEY is a NaN). */
enum : uint32_t { FLOAT_INF_KEY = 0xff800000u - 0x7fffffu };
template <typename T> static __host__ __device__ __forceinline__ uint32_t narrow_key(T v)
{
    if constexpr (std::is_same<T, float>::value) {
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        return (bits ^ ((uint32_t)((int32_t)bits >> 31) | 0x80000000u)) - 0x7fffffu;
    } else if constexpr (std::is_signed<T>::value) {
        return (uint32_t)(int32_t)v ^ 0x80000000u;
    } else {
        return (uint32_t)v;
    }
}

/* The value of T whose narrow_key is key (NaN: mh_rank_value's NaN). */
template <typename T> static __device__ __forceinline__ T key_value(uint32_t key)
{
    if constexpr (std::is_same<T, float>::value) {
        if (key > FLOAT_INF_KEY) return (float)mh_rank_value(MH_RANK_NAN_KEY);
        const uint32_t ordered = key + 0x7fffffu, bits = ordered >> 31 ? ordered & 0x7fffffffu : ~ordered;
        float v;
        memcpy(&v, &bits, sizeof v);
        return v;
    } else if constexpr (std::is_signed<T>::value) {
        return (T)(int32_t)(key ^ 0x80000000u);
    } else {
        return (T)key;
    }
}

template <typename T> static __device__ __forceinline__ double narrow_value(uint32_t key)
{
    return (double)key_value<T>(key);
}

/* Whether cval is a value of T (NaN is one of float32's), so that its key is narrow_key's. */
template <typename T> static bool holds(double cval)
{
    if (std::is_same<T, float>::value) /* NaN, or a finite float32 value (no cast from outside its range) */
        return cval != cval || (fabs(cval) <= FLT_MAX && (double)(float)cval == cval) || isinf(cval);
    return cval == cval && cval >= (double)std::numeric_limits<T>::min() &&
           cval <= (double)std::numeric_limits<T>::max() && (double)(T)cval == cval;
}

/* f(T{}, K{}) for the call's input type and key width: 32-bit keys where the input's type has at
 * most 32 bits, no structure is added and cval (where the mode reads it) is a value of that type;
 * otherwise T = void (the input read as float64) and 64-bit keys. */
template <typename F> static auto with_keys(const mh_rank_desc *d, F &&f) -> decltype(f((void *)NULL, (uint64_t)0))
{
    const bool plain = !d->structure;
    const bool constant = d->mode == MH_MODE_CONSTANT;
#define MH_RANK_NARROW(type)                                                                                           \
    if (plain && (!constant || holds<type>(d->cval))) return f((type *)NULL, (uint32_t)0);                            \
    break
    switch (d->in_type) {
    case MH_F32: MH_RANK_NARROW(float);
    case MH_U8: MH_RANK_NARROW(uint8_t);
    case MH_I8: MH_RANK_NARROW(int8_t);
    case MH_U16: MH_RANK_NARROW(uint16_t);
    case MH_I16: MH_RANK_NARROW(int16_t);
    case MH_I32: MH_RANK_NARROW(int32_t);
    case MH_U32: MH_RANK_NARROW(uint32_t);
    default: break;
    }
#undef MH_RANK_NARROW
    return f((void *)NULL, (uint64_t)0);
}

static inline size_t key_bytes(const mh_rank_desc *d)
{
    return with_keys(d, [](auto, auto key) { return sizeof key; });
}

/* The key of cval, as with_keys picked the key for T and K (0 where cval is not one of T's
 * values: the mode does not read it then). */
template <typename T, typename K> static uint64_t cval_key(double cval)
{
    if constexpr (std::is_void<T>::value) return mh_rank_key(cval);
    else return holds<T>(cval) ? narrow_key((T)cval) : 0;
}

#endif

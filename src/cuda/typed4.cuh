/* Groups of four values of an image type (mh_dtype: float32, float16, uint8, int8, uint16,
 * int16) moving between global memory and float32 registers with one load or store of 4, 8 or
 * 16 bytes, for the kernels that read and write typed images (sepfilter, conv2d/walk). The type
 * is a run-time value, uniform across the grid: one branch a group.
 *
 * Integers move to and from float32 through the bits of floats of one exponent, not through the
 * conversion instructions (a quarter of the FMA pipe's rate on sm_90, and the busiest unit of a
 * uint8 filter otherwise): the float whose bits are 0x4b000000 | n is 2^23 + n for n < 2^23, so
 * a byte permute that writes n's bytes under that exponent and one subtraction give float(n);
 * and v + 1.5 * 2^23 holds an integer-valued v of |v| < 2^22 as a two's-complement integer in its
 * low mantissa bits, whose low 8 or 16 bits are v's as a (u)int8 or (u)int16. */
#ifndef MH_TYPED4_CUH
#define MH_TYPED4_CUH

#include "../core/dtype.h"

#include <stdint.h>

/* float(n) from 0x4b000000 | n, n < 2^23 (the top comment). */
static __device__ __forceinline__ float mh_float_of_bits23(uint32_t bits) { return __uint_as_float(bits) - 8388608.0f; }

/* Byte e (0-3) of x as a uint8's float, and half h (0-1) of x as a uint16's. */
static __device__ __forceinline__ float mh_u8_float(uint32_t x, unsigned e)
{
    return mh_float_of_bits23(__byte_perm(x, 0x4b000000u, 0x7540u | e));
}

static __device__ __forceinline__ float mh_u16_float(uint32_t x, unsigned h)
{
    return mh_float_of_bits23(__byte_perm(x, 0x4b000000u, h ? 0x7432u : 0x7410u));
}

/* An integer-valued v of |v| < 2^22 as two's-complement bits, exact in the low 22 (the top
 * comment): every value of an 8- or 16-bit integer type. */
static __device__ __forceinline__ uint32_t mh_integer_bits(float v) { return __float_as_uint(v + 12582912.0f); }

/* Four consecutive values from aligned global memory, their bits as loaded (4, 8 or 16 bytes):
 * the load is issued here and waited for only where unpack4 reads it. */
static __device__ __forceinline__ uint4 load4_raw(const void *base, long long i, int type)
{
    uint4 q = make_uint4(0, 0, 0, 0);
    if (type == MH_F32) q = *reinterpret_cast<const uint4 *>((const float *)base + i);
    else if (type == MH_U8 || type == MH_I8) q.x = *reinterpret_cast<const uint32_t *>((const uint8_t *)base + i);
    else {
        const uint2 h = *reinterpret_cast<const uint2 *>((const uint16_t *)base + i);
        q.x = h.x, q.y = h.y;
    }
    return q;
}

static __device__ __forceinline__ void unpack4(uint4 q, int type, float *o)
{
    switch (type) {
    case MH_F32: o[0] = __uint_as_float(q.x), o[1] = __uint_as_float(q.y), o[2] = __uint_as_float(q.z), o[3] = __uint_as_float(q.w); break;
    case MH_U8:
        for (int e = 0; e < 4; ++e) o[e] = mh_u8_float(q.x, e);
        break;
    case MH_I8:
        for (int e = 0; e < 4; ++e) o[e] = (float)(int8_t)((q.x >> (8 * e)) & 0xffu);
        break;
    case MH_U16:
        o[0] = mh_u16_float(q.x, 0), o[1] = mh_u16_float(q.x, 1), o[2] = mh_u16_float(q.y, 0), o[3] = mh_u16_float(q.y, 1);
        break;
    default: {
        const uint16_t h[4] = {(uint16_t)(q.x & 0xffff), (uint16_t)(q.x >> 16), (uint16_t)(q.y & 0xffff),
                               (uint16_t)(q.y >> 16)};
        for (int e = 0; e < 4; ++e)
            o[e] = type == MH_F16 ? mh_half_to_float(h[e]) : type == MH_U16 ? (float)h[e] : (float)(int16_t)h[e];
    }
    }
}

/* Stores four values (each already of the type) to aligned global memory. */
static __device__ __forceinline__ void store4_typed(void *base, long long i, int type, const float *v)
{
    if (type == MH_F32) {
        *reinterpret_cast<float4 *>((float *)base + i) = make_float4(v[0], v[1], v[2], v[3]);
        return;
    }
    if (type == MH_F16) {
        uint16_t h[4];
        for (int e = 0; e < 4; ++e) h[e] = mh_float_to_half(v[e]);
        *reinterpret_cast<uint2 *>((uint16_t *)base + i) =
            make_uint2((uint32_t)h[0] | (uint32_t)h[1] << 16, (uint32_t)h[2] | (uint32_t)h[3] << 16);
        return;
    }
    uint32_t n[4]; /* each value's two's-complement bits in the low ones */
    for (int e = 0; e < 4; ++e) n[e] = mh_integer_bits(v[e]);
    if (type == MH_U8 || type == MH_I8)
        *reinterpret_cast<uint32_t *>((uint8_t *)base + i) =
            __byte_perm(__byte_perm(n[0], n[1], 0x0040u), __byte_perm(n[2], n[3], 0x0040u), 0x5410u);
    else
        *reinterpret_cast<uint2 *>((uint16_t *)base + i) =
            make_uint2(__byte_perm(n[0], n[1], 0x5410u), __byte_perm(n[2], n[3], 0x5410u));
}

#endif

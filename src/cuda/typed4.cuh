/* Groups of four values of an image type (mh_dtype: float32, float16, uint8, int8, uint16,
 * int16) moving between global memory and float32 registers with one load or store of 4, 8 or
 * 16 bytes, for the kernels that read and write typed images (sepfilter, conv2d/walk). The type
 * is a run-time value, uniform across the grid: one branch a group. */
#ifndef MH_TYPED4_CUH
#define MH_TYPED4_CUH

#include "../core/dtype.h"

#include <stdint.h>

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
        for (int e = 0; e < 4; ++e) o[e] = (float)((q.x >> (8 * e)) & 0xffu);
        break;
    case MH_I8:
        for (int e = 0; e < 4; ++e) o[e] = (float)(int8_t)((q.x >> (8 * e)) & 0xffu);
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
    switch (type) {
    case MH_U8:
        *reinterpret_cast<uchar4 *>((uint8_t *)base + i) =
            make_uchar4((uint8_t)(int)v[0], (uint8_t)(int)v[1], (uint8_t)(int)v[2], (uint8_t)(int)v[3]);
        break;
    case MH_I8:
        *reinterpret_cast<char4 *>((int8_t *)base + i) =
            make_char4((signed char)(int)v[0], (signed char)(int)v[1], (signed char)(int)v[2], (signed char)(int)v[3]);
        break;
    case MH_F32: *reinterpret_cast<float4 *>((float *)base + i) = make_float4(v[0], v[1], v[2], v[3]); break;
    default: {
        uint16_t h[4];
        for (int e = 0; e < 4; ++e)
            h[e] = type == MH_F16 ? mh_float_to_half(v[e]) : (uint16_t)(int)v[e];
        *reinterpret_cast<uint2 *>((uint16_t *)base + i) =
            make_uint2((uint32_t)h[0] | (uint32_t)h[1] << 16, (uint32_t)h[2] | (uint32_t)h[3] << 16);
    }
    }
}

#endif

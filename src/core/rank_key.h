/* The order every rank row selects in (mh_rank): a float64 value as an unsigned 64-bit key whose
 * order is numpy's sort order (NaN above every number, every NaN one key), -0.0 just below +0.0;
 * and the value a key stands for (NaN as the quiet NaN). Shared by the CPU rows and the kernels,
 * so that every row selects the same bits. */
#ifndef MH_RANK_KEY_H
#define MH_RANK_KEY_H

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

#endif

/* Boundary modes (mh_mode, include/memhier.h): where an index past an image's edge reads, for
 * the CPU rows, the reference and the CUDA tile loaders alike, so that every row extends an
 * image the same way scipy.ndimage does. */
#ifndef MH_BORDER_H
#define MH_BORDER_H

#include "memhier.h"

#ifdef __CUDACC__
#define MH_BORDER_FN __host__ __device__ __forceinline__
#else
#define MH_BORDER_FN static inline
#endif

/* mh_border_index's answer where position i lies within one reflection of the line (reflect and
 * wrap: -n <= i < 2n; mirror: -n < i < 2n - 1 and n > 1; nearest and constant: any i), with no
 * division: what a kernel that reads only such positions inlines, without the general case's
 * 64-bit remainders (calls on a GPU). */
MH_BORDER_FN long long mh_border_index_near(long long i, long long n, int mode)
{
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case MH_MODE_REFLECT: return i < 0 ? -1 - i : 2 * n - 1 - i;
    case MH_MODE_MIRROR: return i < 0 ? -i : 2 * n - 2 - i;
    case MH_MODE_WRAP: return i < 0 ? i + n : i - n;
    case MH_MODE_NEAREST: return i < 0 ? 0 : n - 1;
    default: return -1;
    }
}

/* The index in [0, n) that position i (any integer) reads under `mode`, or -1 where it reads
 * the constant (MH_MODE_CONSTANT). The extensions repeat: reflect has period 2n, mirror 2n - 2
 * (an image of one pixel mirrors onto itself), wrap n. */
MH_BORDER_FN long long mh_border_index(long long i, long long n, int mode)
{
    if (i >= 0 && i < n) return i;
    long long period, m;
    /* one reflection covers every filter that is not wider than the image: no division */
    const int one_reflection = mode == MH_MODE_REFLECT || mode == MH_MODE_WRAP ? i >= -n && i < 2 * n
                               : mode == MH_MODE_MIRROR                        ? n > 1 && i > -n && i < 2 * n - 1
                                                                               : 1;
    if (one_reflection) return mh_border_index_near(i, n, mode);
    switch (mode) {
    case MH_MODE_WRAP: m = i % n; return m < 0 ? m + n : m;
    case MH_MODE_REFLECT:
        period = 2 * n, m = i % period;
        if (m < 0) m += period;
        return m < n ? m : period - 1 - m;
    case MH_MODE_MIRROR:
        if (n == 1) return 0;
        period = 2 * n - 2, m = i % period;
        if (m < 0) m += period;
        return m < n ? m : period - m;
    default: return -1;
    }
}

#endif

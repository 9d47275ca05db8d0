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

/* The index in [0, n) that position i (any integer) reads under `mode`, or -1 where it reads
 * the constant (MH_MODE_CONSTANT). The extensions repeat: reflect has period 2n, mirror 2n - 2
 * (an image of one pixel mirrors onto itself), wrap n. */
MH_BORDER_FN long long mh_border_index(long long i, long long n, int mode)
{
    if (i >= 0 && i < n) return i;
    long long period, m;
    /* one reflection covers every filter that is not wider than the image: no division */
    if (mode == MH_MODE_REFLECT && i >= -n && i < 2 * n) return i < 0 ? -1 - i : 2 * n - 1 - i;
    if (mode == MH_MODE_MIRROR && n > 1 && i > -n && i < 2 * n - 1) return i < 0 ? -i : 2 * n - 2 - i;
    if (mode == MH_MODE_WRAP && i >= -n && i < 2 * n) return i < 0 ? i + n : i - n;
    switch (mode) {
    case MH_MODE_NEAREST: return i < 0 ? 0 : n - 1;
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

/* The register window of conv2d's regtile, stream and separable kernels: one input row's
 * values for a thread's RX consecutive outputs, loaded once from shared memory and
 * multiplied by one filter row. Both are force-inlined and unrolled over compile-time
 * bounds, so the arrays stay in registers (ptxas -v: no stack frame, no spills). */
#pragma once

#include "../core/internal.h"

#include <stdint.h>

/* Every row of an image of `cols` elements of type t at p starts on a group of 4 elements:
 * where one 4-, 8- or 16-byte access may move each group. */
static inline int conv2d_rows_on_groups(const void *p, size_t cols, mh_dtype t)
{
    return cols % 4 == 0 && (uintptr_t)p % (4 * mh_dtype_size(t)) == 0;
}

/* Window loads are 16 bytes, so a block's input tile must start on a 16-byte boundary: the
 * first block starts xshift outputs early so that (block origin - lpc) is a multiple of 4.
 * Rows that are not a multiple of 4 elements (or an image not aligned to a group of 4) cannot
 * all be aligned: no shift, and the tile loads fall back to one element at a time. */
static inline int conv2d_xshift(const mh_conv2d_args *a)
{
    if (!conv2d_rows_on_groups(a->in, a->cols, a->in_type)) return 0;
    return (4 - a->lpc % 4) % 4;
}

/* w[0 .. 4 * nload) = src[0 .. 4 * nload), 16-byte shared loads (src 16-byte aligned).
 * W, a multiple of 4, bounds the unrolled loop; nload <= W / 4 is the part in use. */
template <int W>
static __device__ __forceinline__ void load_window(float (&w)[W], const float *src, int nload)
{
#pragma unroll
    for (int v = 0; v < W / 4; ++v)
        if (v < nload) {
            const float4 q = *reinterpret_cast<const float4 *>(src + 4 * v);
            w[4 * v] = q.x, w[4 * v + 1] = q.y, w[4 * v + 2] = q.z, w[4 * v + 3] = q.w;
        }
}

/* acc[r] += sum over j < kc of w[r + S + j] * f[j]: one filter row (in shared memory, padded
 * to a multiple of 4, read as broadcast float4s) over the window shifted by S. CHUNKS * 4
 * >= kc bounds the unrolled loop; only real taps are multiplied, so an Inf in the image
 * never meets a padded zero. */
template <int RX, int W, int CHUNKS, int S>
static __device__ __forceinline__ void accumulate_filter_row(float (&acc)[RX], const float (&w)[W], const float *f,
                                                             int kc)
{
#pragma unroll
    for (int c4 = 0; c4 < CHUNKS; ++c4) {
        if (4 * c4 >= kc) break;
        const float4 fv = *reinterpret_cast<const float4 *>(f + 4 * c4);
        const float ff[4] = {fv.x, fv.y, fv.z, fv.w};
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            if (4 * c4 + u >= kc) break;
#pragma unroll
            for (int r = 0; r < RX; ++r) acc[r] = fmaf(w[r + S + 4 * c4 + u], ff[u], acc[r]);
        }
    }
}

/* Moving tiles between global and shared memory, for the register-tiled kernels (conv1d
 * and conv2d regtile, conv2d separable).
 *
 * Loads go through cp.async (global -> shared without a register round trip): 16 bytes at
 * a time where source and destination are aligned and the group of four is inside the
 * array, element by element at the edges, and outside the array the border's value (zeros, a
 * boundary mode's source element, or its constant: tile_border). No copy
 * names a byte outside its array: compute-sanitizer counts a 16-byte cp.async with a shorter
 * source size as a 16-byte read. Stores leave as 16-byte writes aligned to global memory,
 * gathered from shared memory at whatever offset the tile has.
 *
 * Every helper takes the calling thread's index and the thread count, so any block shape
 * can share the work; callers wait with cp_async_wait_all() and a barrier. */
#ifndef MH_TILE_IO_CUH
#define MH_TILE_IO_CUH

#include "../core/border.h"
#include "typed4.cuh"

#include <stdint.h>

static __device__ __forceinline__ void cp_async16(float *dst, const float *src)
{
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
}

static __device__ __forceinline__ void cp_async4(float *dst, const float *src)
{
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src));
}

static __device__ __forceinline__ void cp_async8(float2 *dst, const float2 *src)
{
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(d), "l"(src));
}

static __device__ __forceinline__ void cp_async_wait_all()
{
    asm volatile("cp.async.commit_group;\ncp.async.wait_all;\n" ::: "memory");
}

/* Pipelined copies: commit the copies issued so far as a group; wait until at most N
 * groups are still in flight. */
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
static __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static __device__ __forceinline__ bool aligned16(const float *p) { return mh_aligned16(p); }

/* How a load extends the array past its edges: a boundary mode (src/core/border.h) and the
 * constant of MH_MODE_CONSTANT. The default is zeros. */
struct tile_border {
    int mode;
    float cval;
};
static constexpr tile_border zero_border = {MH_MODE_CONSTANT, 0.0f};

/* dst[0..4) = src[p..p+4), positions outside [0, n) read where the border sends them (or its
 * constant); src + p 16-byte aligned when p % 4 matches (the caller's `aligned`). */
static __device__ __forceinline__ void load_group(float *dst, const float *src, long long n, long long p, bool aligned,
                                                  tile_border b = zero_border)
{
    if (aligned && p >= 0 && p + 4 <= n) {
        cp_async16(dst, src + p);
        return;
    }
    for (int e = 0; e < 4; ++e) {
        const long long q = mh_border_index(p + e, n, b.mode);
        if (q >= 0) cp_async4(dst + e, src + q);
        else dst[e] = b.cval;
    }
}

/* x[p] for p in [0, n); past the ends the element the border sends p to, or its constant
 * (a plain load: the FFT rows' register and segment loaders). */
static __device__ __forceinline__ float border_ldg(const float *x, long long n, long long p, tile_border b)
{
    const long long q = mh_border_index(p, n, b.mode);
    return q >= 0 ? __ldg(x + q) : b.cval;
}

/* dst[t] = src[start + t] where 0 <= start + t < n, else the border's value (zeros by
 * default), for t < len (len % 4 == 0, dst 16-byte aligned). */
static __device__ __forceinline__ void load_span(float *dst, const float *src, size_t n, long long start, int len,
                                                 int tid, int nthreads, tile_border b = zero_border)
{
    const long long nn = (long long)n;
    if (!aligned16(src + start)) { /* a misaligned start (same/full paddings): 4-byte copies, coalesced */
        for (int t = tid; t < len; t += nthreads) {
            const long long q = mh_border_index(start + t, nn, b.mode);
            if (q >= 0) cp_async4(dst + t, src + q);
            else dst[t] = b.cval;
        }
        return;
    }
    for (int g = tid; 4 * g < len; g += nthreads) load_group(dst + 4 * g, src, nn, start + 4LL * g, true, b);
}

/* dst[rr * stride + t] = in[(y0 + rr) * cols + x0 + t] for rr < nrows, t < ncols (ncols and
 * stride multiples of 4, dst 16-byte aligned), the rows x cols image extended by the border
 * (zeros by default). */
static __device__ __forceinline__ void load_rows(float *dst, int stride, const float *in, size_t rows, size_t cols,
                                                 long long y0, long long x0, int nrows, int ncols, int tid, int nthreads,
                                                 tile_border b = zero_border)
{
    const int groups = ncols / 4;
    for (int item = tid; item < nrows * groups; item += nthreads) {
        const int rr = item / groups, g = item - rr * groups;
        float *d = dst + rr * stride + 4 * g;
        const long long y = mh_border_index(y0 + rr, (long long)rows, b.mode);
        if (y < 0) {
            *reinterpret_cast<float4 *>(d) = make_float4(b.cval, b.cval, b.cval, b.cval);
            continue;
        }
        const float *row = in + (size_t)y * cols;
        load_group(d, row, (long long)cols, x0 + 4LL * g, aligned16(row + x0), b);
    }
}

/* load_rows for a typed image (mh_dtype `type`; zeros or a mode past the edges): cp.async cannot
 * convert, so each group of four goes through registers, one 4-, 8- or 16-byte load where it lies
 * whole inside the image and on a group boundary (`vec`: the rows start on one, cols % 4 == 0),
 * element by element elsewhere. A thread issues the loads of up to 4 groups before it unpacks
 * the first. */
static __device__ __forceinline__ void load_rows_typed(float *dst, int stride, const void *in, int type, bool vec,
                                                       size_t rows, size_t cols, long long y0, long long x0,
                                                       int nrows, int ncols, int tid, int nthreads, tile_border b)
{
    constexpr int U = 4;
    const int groups = ncols / 4, total = nrows * groups;
    const long long nr = (long long)rows, nc = (long long)cols;
    for (int first = tid; first < total; first += U * nthreads) {
        uint4 bits[U];
        bool whole[U];
        int rr[U], gg[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int item = first + u * nthreads;
            rr[u] = item / groups, gg[u] = item - rr[u] * groups;
            const long long y = mh_border_index(y0 + rr[u], nr, b.mode), x = x0 + 4LL * gg[u];
            whole[u] = vec && item < total && y >= 0 && x >= 0 && x + 4 <= nc && (x & 3) == 0;
            if (whole[u]) bits[u] = load4_raw(in, y * nc + x, type);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (first + u * nthreads >= total) break;
            float v[4];
            if (whole[u]) {
                unpack4(bits[u], type, v);
            } else {
                const long long y = mh_border_index(y0 + rr[u], nr, b.mode), x = x0 + 4LL * gg[u];
                for (int e = 0; e < 4; ++e) {
                    const long long q = mh_border_index(x + e, nc, b.mode);
                    v[e] = y < 0 || q < 0 ? b.cval : mh_load_value(in, (size_t)(y * nc + q), (mh_dtype)type);
                }
            }
            *reinterpret_cast<float4 *>(dst + rr[u] * stride + 4 * gg[u]) = make_float4(v[0], v[1], v[2], v[3]);
        }
    }
}

/* out[first + t] = src[t] for t < len while first + t < out_n (1-D). */
static __device__ __forceinline__ void store_span(float *out, size_t out_n, size_t first, const float *src, int len,
                                                  int tid, int nthreads)
{
    if (aligned16(out + first)) {
        for (int g = tid; 4 * g < len; g += nthreads) {
            const size_t i = first + 4 * (size_t)g;
            if (i + 4 <= out_n)
                *reinterpret_cast<float4 *>(out + i) = *reinterpret_cast<const float4 *>(src + 4 * g);
            else
                for (int e = 0; e < 4 && i + e < out_n; ++e) out[i + e] = src[4 * g + e];
        }
    } else {
        for (int t = tid; t < len && first + t < out_n; t += nthreads) out[first + t] = src[t];
    }
}

/* out[(y0 + rr) * out_cols + x0 + t] = src[rr * stride + t] for rr < nrows, t < ncols,
 * inside the out_rows x out_cols output (x0 may be negative). 16-byte stores aligned to
 * global memory wherever the output's rows are, whatever the tile's offset. */
static __device__ __forceinline__ void store_rows(float *out, size_t out_rows, size_t out_cols, long long y0,
                                                  long long x0, const float *src, int stride, int nrows, int ncols,
                                                  int tid, int nthreads)
{
    const long long lo = x0 > 0 ? x0 : 0;
    const long long hi = x0 + ncols < (long long)out_cols ? x0 + ncols : (long long)out_cols;
    if (lo >= hi) return;
    const long long g0 = lo / 4, groups = (hi + 3) / 4 - g0; /* global groups of four covering [lo, hi) */
    for (long long item = tid; item < (long long)nrows * groups; item += nthreads) {
        const int rr = (int)(item / groups);
        const long long y = y0 + rr, c = 4 * (g0 + item - (long long)rr * groups);
        if (y >= (long long)out_rows) continue;
        float *row = out + (size_t)y * out_cols;
        const float *s = src + rr * stride - x0;
        if (aligned16(row) && c >= lo && c + 4 <= hi) {
            /* one 16-byte shared load where the tile is aligned as the output is, else four */
            *reinterpret_cast<float4 *>(row + c) = aligned16(s + c) ? *reinterpret_cast<const float4 *>(s + c)
                                                                    : make_float4(s[c], s[c + 1], s[c + 2], s[c + 3]);
        } else {
            for (int e = 0; e < 4; ++e)
                if (c + e >= lo && c + e < hi) row[c + e] = s[c + e];
        }
    }
}

/* store_rows into a typed output: each value cast into `type` as scipy stores it (mh_cast_value),
 * four at a time with one 4-, 8- or 16-byte store where the group is whole and `vec` (the rows
 * start on a group boundary: out_cols % 4 == 0 and out aligned to a group). */
static __device__ __forceinline__ void store_rows_typed(void *out, int type, bool vec, size_t out_rows,
                                                        size_t out_cols, long long y0, long long x0, const float *src,
                                                        int stride, int nrows, int ncols, int tid, int nthreads)
{
    const long long lo = x0 > 0 ? x0 : 0;
    const long long hi = x0 + ncols < (long long)out_cols ? x0 + ncols : (long long)out_cols;
    if (lo >= hi) return;
    const long long g0 = lo / 4, groups = (hi + 3) / 4 - g0;
    for (long long item = tid; item < (long long)nrows * groups; item += nthreads) {
        const int rr = (int)(item / groups);
        const long long y = y0 + rr, c = 4 * (g0 + item - (long long)rr * groups);
        if (y >= (long long)out_rows) continue;
        const size_t at = (size_t)y * out_cols + (size_t)c;
        const float *s = src + rr * stride - x0;
        float v[4];
        for (int e = 0; e < 4; ++e) v[e] = c + e >= lo && c + e < hi ? mh_cast_value(s[c + e], (mh_dtype)type) : 0.0f;
        if (vec && c >= lo && c + 4 <= hi) {
            store4_typed(out, (long long)at, type, v);
        } else {
            for (int e = 0; e < 4; ++e)
                if (c + e >= lo && c + e < hi) mh_store_value(out, at + e, (mh_dtype)type, v[e]);
        }
    }
}

#endif

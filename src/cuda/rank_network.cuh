/* rank/network's kernels and launch (rank_network.cu has the row; the 49 keys' kernels compile in
 * rank_network49.cu, so that a parallel build takes them beside the others): a thread an output
 * for footprints of at most 49 set elements, the window's keys in registers (offsets, distances
 * and structure in kernel parameters), sorted by Batcher's odd-even merge network unrolled at
 * compile time for 9, 25 or 49 keys, the rank read off. */
#ifndef MH_CUDA_RANK_NETWORK_CUH
#define MH_CUDA_RANK_NETWORK_CUH

#include "rank_keys.cuh"
#include "../core/border.h"
#include "../core/dtype.h"

#include <stdio.h>

/* ---- network ----------------------------------------------------------------------------
 * A thread an output on a grid of (values along a row, rows, images): no division but the
 * column's from its value where channels interleave; away from the edges each window element is
 * its output's address plus a distance worked out on the host; the input read in its own type. */
enum { NETWORK_THREADS = 256 };

template <int N> struct network_params {
    const void *in;
    void *out;
    long long rows, cols;
    size_t batch;
    unsigned inner, channels;        /* a row's values (cols x channels), the interleaved ones */
    mh_dtype in_type, out_type;
    int mode, count, rank, has_structure, structure_in_type;
    int front, back, above, below, before, after; /* the window's reach from the output, each >= 0 */
    long long depth;                 /* a volume's planes (1: images) */
    double cval;
    uint64_t cval_key;
    int planes[N];                   /* the plane of each set element from the output's */
    int2 offsets[N];                 /* (row, column) of each set element from the output */
    long long deltas[N];             /* the same as distances between elements (0 past the count) */
    double structure[N];
};

template <int N, typename K> static __device__ __forceinline__ void order(K (&k)[N], int i, int j)
{
    const K a = k[i], b = k[j];
    k[i] = a < b ? a : b;
    k[j] = a < b ? b : a;
}

/* Batcher's odd-even merge sort of N keys (any N): its comparators' levels p and q (powers of
 * two), their groups j and members i, each a template argument, so that every index is known at
 * compile time and the keys stay in registers. */
template <int N, int P, int Q, int J, int I, typename K> static __device__ __forceinline__ void network_members(K (&k)[N])
{
    if constexpr (I < Q && I + J + Q < N) {
        if constexpr ((I + J) / (2 * P) == (I + J + Q) / (2 * P)) order(k, I + J, I + J + Q);
        network_members<N, P, Q, J, I + 1, K>(k);
    }
}
template <int N, int P, int Q, int J, typename K> static __device__ __forceinline__ void network_groups(K (&k)[N])
{
    if constexpr (J + Q < N) {
        network_members<N, P, Q, J, 0, K>(k);
        network_groups<N, P, Q, J + 2 * Q, K>(k);
    }
}
template <int N, int P, int Q, typename K> static __device__ __forceinline__ void network_level(K (&k)[N])
{
    if constexpr (Q >= 1) {
        network_groups<N, P, Q, Q % P, K>(k);
        network_level<N, P, Q / 2, K>(k);
    }
}
template <int N, int P = 1, typename K> static __device__ __forceinline__ void sort_network(K (&k)[N])
{
    if constexpr (P < N) {
        network_level<N, P, P, K>(k);
        sort_network<N, 2 * P, K>(k);
    }
}

/* The key of window element k: the input's element i, or cval's where the element is outside
 * the image and the mode reads cval (a constant in the interior's loop, where no check is made). */
template <int N, typename T, typename K>
static __device__ __forceinline__ K element_key(const network_params<N> &p, int k, long long i, bool outside)
{
    if constexpr (std::is_void<T>::value) {
        const double v = outside ? p.cval : mh_load_double(p.in, (size_t)i, p.in_type);
        return mh_rank_key(!p.has_structure ? v
                           : p.structure_in_type && k > 0 /* scipy's: the first element in float64 */
                               ? mh_rank_sum_in_type(p.in, (size_t)(outside ? 0 : i), outside, p.cval, p.in_type,
                                                     p.structure[k])
                               : v + p.structure[k]);
    } else {
        return outside ? (K)p.cval_key : narrow_key(((const T *)p.in)[i]);
    }
}

/* The input's index of window element k of the output at (image, z, y, x, ch) near an edge, by
 * the mode (-1: cval). */
template <int N>
static __device__ __forceinline__ long long border_element(const network_params<N> &p, int k, size_t image, long long z,
                                                           long long y, unsigned x, unsigned ch)
{
    const long long v = mh_border_index(z + p.planes[k], p.depth, p.mode);
    const long long r = mh_border_index(y + p.offsets[k].x, p.rows, p.mode);
    const long long c = mh_border_index((long long)x + p.offsets[k].y, p.cols, p.mode);
    return v < 0 || r < 0 || c < 0
               ? -1
               : (long long)(((image * (size_t)p.depth + (size_t)v) * (size_t)p.rows + (size_t)r) * p.inner +
                             (size_t)c * p.channels + ch);
}

template <int N, typename T, typename K>
static __global__ void __launch_bounds__(NETWORK_THREADS, N <= 9 ? 4 : N <= 25 ? 2 : 1) rank_network_kernel(const network_params<N> p)
{
    for (size_t image = blockIdx.z; image < p.batch; image += gridDim.z)
        for (long long line = blockIdx.y; line < p.depth * p.rows; line += gridDim.y)
            for (unsigned q = blockIdx.x * NETWORK_THREADS + threadIdx.x; q < p.inner; q += gridDim.x * NETWORK_THREADS) {
                const long long z = p.depth == 1 ? 0 : line / p.rows, y = line - z * p.rows;
                const unsigned x = p.channels == 1 ? q : q / p.channels, ch = q - x * p.channels;
                const size_t at = (image * (size_t)(p.depth * p.rows) + (size_t)line) * p.inner + q;
                const bool inside = z >= p.front && z + p.back < p.depth && y >= p.above && y + p.below < p.rows &&
                                    (long long)x >= p.before && (long long)x + p.after < p.cols;
                /* keys past the footprint's count rank above every rank asked. Inside the image
                 * each element is at its distance from the output and every load is made (the
                 * distances past the count are 0: the output's own element, its key then
                 * replaced), with no branch between them, so that they are in flight together;
                 * near an edge the mode maps each element. */
                K keys[N];
                if (inside) {
#pragma unroll
                    for (int k = 0; k < N; ++k) {
                        const K key = element_key<N, T, K>(p, k, (long long)at + p.deltas[k], false);
                        keys[k] = k < p.count ? key : (K)~(K)0;
                    }
                } else {
#pragma unroll
                    for (int k = 0; k < N; ++k) {
                        const long long i = k < p.count ? border_element(p, k, image, z, y, x, ch) : 0;
                        keys[k] = k < p.count ? element_key<N, T, K>(p, k, i, i < 0) : (K)~(K)0;
                    }
                }
                sort_network(keys);
                /* the rank's key picked by masks: a select on a run-time index would put the keys
                 * in local memory */
                K chosen = 0;
#pragma unroll
                for (int k = 0; k < N; ++k) chosen |= keys[k] & ((K)0 - (K)(k == p.rank));
                double value;
                if constexpr (std::is_void<T>::value) value = mh_rank_value(chosen);
                else value = narrow_value<T>((uint32_t)chosen);
                mh_store_double(p.out, at, p.out_type, value);
            }
}

template <int N> static mh_status network_typed(mh_context *ctx, const mh_rank_args *a)
{
    const mh_rank_desc *d = &a->d;
    network_params<N> p = {};
    p.in = a->in, p.out = a->out, p.rows = (long long)d->rows, p.cols = (long long)d->cols, p.batch = d->batch;
    p.inner = (unsigned)(d->cols * d->channels), p.channels = (unsigned)d->channels;
    p.in_type = d->in_type, p.out_type = d->out_type;
    p.mode = (int)d->mode, p.count = (int)a->count, p.rank = (int)d->rank, p.has_structure = d->structure != NULL;
    p.structure_in_type = d->structure_in_type, p.cval = d->cval;
    p.depth = (long long)d->depth;
    const long long anchor_p = (long long)(d->kdepth / 2) + d->origin_depth;
    const long long anchor_r = (long long)(d->krows / 2) + d->origin_row, anchor_c = (long long)(d->kcols / 2) + d->origin_col;
    int n = 0;
    size_t e = 0;
    for (size_t v = 0; v < d->kdepth; ++v)
        for (size_t r = 0; r < d->krows; ++r)
            for (size_t c = 0; c < d->kcols; ++c, ++e)
                if (d->footprint[e]) {
                    const int dp = (int)((long long)v - anchor_p), dr = (int)((long long)r - anchor_r);
                    const int dc = (int)((long long)c - anchor_c);
                    p.planes[n] = dp, p.offsets[n] = make_int2(dr, dc);
                    p.deltas[n] = (((long long)dp * (long long)d->rows + dr) * (long long)d->cols + dc) *
                                  (long long)d->channels;
                    if (d->structure) p.structure[n] = d->structure[e];
                    p.front = max(p.front, -dp), p.back = max(p.back, dp);
                    p.above = max(p.above, -dr), p.below = max(p.below, dr);
                    p.before = max(p.before, -dc), p.after = max(p.after, dc);
                    ++n;
                }
    const size_t x_blocks = mh_ceil_div(p.inner, NETWORK_THREADS);
    const size_t lines = d->depth * d->rows;
    const dim3 grid((unsigned)(x_blocks < 65535 ? x_blocks : 65535), (unsigned)(lines < 65535 ? lines : 65535),
                    (unsigned)(d->batch < 65535 ? d->batch : 65535));
    return with_keys(d, [&](auto type, auto key) {
        using T = std::remove_pointer_t<decltype(type)>;
        using K = decltype(key);
        p.cval_key = cval_key<T, K>(d->cval);
        rank_network_kernel<N, T, K><<<grid, NETWORK_THREADS, 0, mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "rank/network");
    });
}

/* the 49 keys' launch, compiled apart */
mh_status mh_rank_network49(mh_context *ctx, const mh_rank_args *a);

#endif

/* rank on CUDA (mh_rank: scipy.ndimage's selection filters): the rows of this file.
 *   naive  a thread an output: its window's keys gathered from global memory into a local array
 *          (up to RANK_NAIVE_MAX set elements) by insertion as they load, the rank read off; the
 *          ladder's first rung
 *   bisect  a thread an output for any footprint and rank: the rank's key by bisection between the
 *          window's least and greatest keys; auto's past network's 49 set elements
 *   minmax the minimum or maximum over a line (a footprint of one row or one column, every element
 *          set, no structure: each of scipy's separable passes; a rectangle as a pass along its
 *          rows into the workspace and one down its columns) by doubling in shared memory: a
 *          tile's keys, then log2(k) steps that each take the least of two windows half as long,
 *          then every output the least of two overlapping windows (a sparse table's query); a
 *          line down the columns of a wide image with a window of up to 32 keys of 32 bits walks
 *          the columns in registers instead (rank_minmax_columns.cu)
 *   vanherk the minimum or maximum over a rectangle in one pass: running extremes down each
 *          column (a ring of keys in shared memory), then along the rows from a buffer of them
 * rank_network.cu has network (a thread an output, its window sorted in registers), rank_median.cu
 * the medians of full 3 x 3, 5 x 5 and 7 x 7 windows, rank_histogram.cu any rank of an 8-bit
 * rectangle by a running histogram; each its own file so that the build compiles them side by
 * side. minmax, vanherk, network and the median rows rank keys of the input's own width where
 * they can (with_keys, rank_keys.cuh). */
#include "rank_keys.cuh"
#include "rank_minmax.cuh"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/rank_line.h"

#include <stdio.h>
#include <stdlib.h>

enum { RANK_NAIVE_MAX = 255, RANK_THREADS = 256 };

struct rank_params {
    const void *in;
    void *out;
    long long rows, cols;
    size_t channels, values;
    mh_dtype in_type, out_type;
    int mode, count, rank, has_structure, structure_in_type;
    double cval;
    const int2 *offsets;     /* (row, column) of each set element from the output, C order */
    const int *planes;       /* each set element's plane from the output's (volumes) */
    const double *structure; /* count values, after the offsets and planes (has_structure) */
    uint64_t cval_key;       /* cval's key where the keys are 32-bit (bisect's narrow form) */
    long long depth;         /* a volume's planes (1: images) */
};

/* Output i's place: image (or volume), plane, row, column and channel. Volume: the kernel's
 * footprint reaches over planes (images take the planes of a volume as images of a batch, so
 * their kernels keep no plane). */
struct output_place {
    size_t image, ch;
    long long z, y, x;
};

template <bool Volume> static __device__ __forceinline__ output_place place_of(const rank_params &p, size_t i)
{
    const size_t pixel = i / p.channels, line = pixel / (size_t)p.cols, plane = line / (size_t)p.rows;
    const long long y = (long long)(line % (size_t)p.rows), x = (long long)(pixel % (size_t)p.cols);
    if constexpr (Volume) return {plane / (size_t)p.depth, i % p.channels, (long long)(plane % (size_t)p.depth), y, x};
    else return {plane, i % p.channels, 0, y, x};
}

/* The key of window element k of output o: 64-bit keys of the value read as float64, the
 * structure added as the call asks (T = void); or a 32-bit key of the input's own type (no
 * structure, cval one of its values). */
template <typename T, typename K, bool Volume>
static __device__ __forceinline__ K window_key(const rank_params &p, int k, const output_place &o)
{
    const int2 w = p.offsets[k];
    const long long q = Volume ? mh_border_index(o.z + p.planes[k], p.depth, p.mode) : 0;
    const long long r = mh_border_index(o.y + w.x, p.rows, p.mode), c = mh_border_index(o.x + w.y, p.cols, p.mode);
    const int outside = q < 0 || r < 0 || c < 0;
    const size_t image_plane = Volume ? o.image * (size_t)p.depth + (size_t)q : o.image;
    const size_t at = outside ? 0 : ((image_plane * (size_t)p.rows + (size_t)r) * (size_t)p.cols + (size_t)c) * p.channels + o.ch;
    if constexpr (std::is_void<T>::value) {
        const double v = outside ? p.cval : mh_load_double(p.in, at, p.in_type);
        return mh_rank_key(!p.has_structure ? v
                           : p.structure_in_type && k > 0 /* scipy's: the first element in float64 */
                               ? mh_rank_sum_in_type(p.in, at, outside, p.cval, p.in_type, p.structure[k])
                               : v + p.structure[k]);
    } else {
        return outside ? (K)p.cval_key : (K)narrow_key(((const T *)p.in)[at]);
    }
}

template <bool Volume> static __global__ void __launch_bounds__(RANK_THREADS) rank_naive_kernel(const rank_params p)
{
    uint64_t keys[RANK_NAIVE_MAX];
    for (size_t i = blockIdx.x * (size_t)RANK_THREADS + threadIdx.x; i < p.values;
         i += (size_t)gridDim.x * RANK_THREADS) {
        const output_place o = place_of<Volume>(p, i);
        for (int k = 0; k < p.count; ++k) {
            const uint64_t key = window_key<void, uint64_t, Volume>(p, k, o);
            int j = k;
            for (; j > 0 && keys[j - 1] > key; --j) keys[j] = keys[j - 1];
            keys[j] = key;
        }
        mh_store_double(p.out, i, p.out_type, mh_rank_value(keys[p.rank]));
    }
}

static int naive_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    if (args->rank.count <= RANK_NAIVE_MAX) return 1;
    snprintf(why, len, "a footprint of %zu set elements: naive keeps at most %d a thread", args->rank.count,
             RANK_NAIVE_MAX);
    return 0;
}

/* The footprint's set elements as offsets from the output, then the structure's values at them,
 * copied into the workspace on the call's stream in kernel parameters (mh_cuda_upload_by_params
 * moves 32-bit words and never waits for the stream, which a pageable cudaMemcpyAsync may). */
static mh_status upload_window(mh_context *ctx, const mh_rank_args *a, rank_params *p)
{
    const mh_rank_desc *d = &a->d;
    const size_t offsets_bytes = mh_align_up(a->count * sizeof(int2), 16);
    const size_t planes_bytes = mh_align_up(a->count * sizeof(int), 16);
    const size_t bytes = offsets_bytes + planes_bytes + (d->structure ? a->count * sizeof(double) : 0);
    unsigned char *host = (unsigned char *)malloc(bytes);
    if (!host) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "rank: out of host memory for the window's offsets");
    int2 *offsets = (int2 *)host;
    int *planes = (int *)(host + offsets_bytes);
    double *structure = (double *)(host + offsets_bytes + planes_bytes);
    const long long anchor_p = (long long)(d->kdepth / 2) + d->origin_depth;
    const long long anchor_r = (long long)(d->krows / 2) + d->origin_row, anchor_c = (long long)(d->kcols / 2) + d->origin_col;
    size_t n = 0, e = 0;
    for (size_t q = 0; q < d->kdepth; ++q)
        for (size_t r = 0; r < d->krows; ++r)
            for (size_t c = 0; c < d->kcols; ++c, ++e)
                if (d->footprint[e]) {
                    offsets[n] = make_int2((int)((long long)r - anchor_r), (int)((long long)c - anchor_c));
                    planes[n] = (int)((long long)q - anchor_p);
                    if (d->structure) structure[n] = d->structure[e];
                    ++n;
                }
    void *ws = NULL;
    mh_status s = mh_workspace(ctx, bytes, &ws);
    if (s == MH_OK)
        s = mh_cuda_status(ctx, (cudaError_t)mh_cuda_upload_by_params((float *)ws, (const float *)host,
                                                                      bytes / sizeof(float), mh_stream(ctx)),
                           "rank: copying the window's offsets");
    free(host);
    p->offsets = (const int2 *)ws;
    p->planes = (const int *)((unsigned char *)ws + offsets_bytes);
    p->structure = (const double *)((unsigned char *)ws + offsets_bytes + planes_bytes);
    return s;
}

/* The call's parameters (cval_key: bisect's narrow keys' cval) with the window uploaded. */
static mh_status window_params(mh_context *ctx, const mh_rank_args *a, uint64_t cval_key, rank_params *p)
{
    const mh_rank_desc *d = &a->d;
    *p = {a->in, a->out, (long long)d->rows, (long long)d->cols, d->channels, a->values, d->in_type, d->out_type,
          (int)d->mode, (int)a->count, (int)d->rank, d->structure != NULL, d->structure_in_type, d->cval,
          NULL, NULL, NULL, cval_key, (long long)d->depth};
    return upload_window(ctx, a, p);
}

static mh_status naive_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    rank_params p;
    MH_TRY(window_params(ctx, a, 0, &p));
    const size_t blocks = mh_resident_blocks(ctx, a->values, RANK_THREADS);
    if (d->kdepth > 1) rank_naive_kernel<true><<<(unsigned)blocks, RANK_THREADS, 0, mh_stream(ctx)>>>(p);
    else rank_naive_kernel<false><<<(unsigned)blocks, RANK_THREADS, 0, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "rank/naive");
}

/* ---- bisect ---------------------------------------------------------------------------------
 * A thread an output for a footprint of any size and any rank: the window's least and greatest
 * keys, then the rank's key by bisection between them, each step counting the window's keys at
 * most the middle one (the window read again each step, from L1 and L2). A window of k elements
 * costs k (1 + log2(greatest - least + 1)) reads: 8-bit images at most 9 passes, 16-bit 17, the
 * others up to 33 (32-bit keys, with_keys) or 65. A footprint over planes (Volume) takes the
 * 64-bit keys whatever the type: images keep the kernels they had, volumes add one. */
template <typename T, typename K, bool Volume>
static __global__ void __launch_bounds__(RANK_THREADS) rank_bisect_kernel(const rank_params p)
{
    for (size_t i = blockIdx.x * (size_t)RANK_THREADS + threadIdx.x; i < p.values;
         i += (size_t)gridDim.x * RANK_THREADS) {
        const output_place o = place_of<Volume>(p, i);
        K lo = (K)~(K)0, hi = 0;
        for (int k = 0; k < p.count; ++k) {
            const K key = window_key<T, K, Volume>(p, k, o);
            lo = key < lo ? key : lo;
            hi = key > hi ? key : hi;
        }
        while (lo < hi) { /* the least key with more than `rank` keys at most it lies in [lo, hi] */
            const K mid = lo + (hi - lo) / 2;
            int at_most = 0;
            for (int k = 0; k < p.count; ++k) at_most += window_key<T, K, Volume>(p, k, o) <= mid;
            if (at_most > p.rank) hi = mid;
            else lo = mid + 1;
        }
        double value;
        if constexpr (std::is_void<T>::value) value = mh_rank_value(lo);
        else value = narrow_value<T>((uint32_t)lo);
        mh_store_double(p.out, i, p.out_type, value);
    }
}

static int bisect_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    if (args->rank.count <= (size_t)INT32_MAX) return 1;
    snprintf(why, len, "a footprint of %zu set elements: bisect counts a window's keys in 32 bits", args->rank.count);
    return 0;
}

static mh_status bisect_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    char why[200];
    if (!bisect_supports(ctx, args, why, sizeof why)) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "rank/bisect: %s", why);
    const size_t blocks = mh_resident_blocks(ctx, a->values, RANK_THREADS);
    if (d->kdepth > 1) { /* volumes: 64-bit keys, one kernel for every type (images keep theirs narrow) */
        rank_params p;
        MH_TRY(window_params(ctx, a, 0, &p));
        rank_bisect_kernel<void, uint64_t, true><<<(unsigned)blocks, RANK_THREADS, 0, mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "rank/bisect");
    }
    return with_keys(d, [&](auto type, auto key) {
        using T = std::remove_pointer_t<decltype(type)>;
        using K = decltype(key);
        rank_params p;
        MH_TRY(window_params(ctx, a, cval_key<T, K>(d->cval), &p));
        rank_bisect_kernel<T, K, false><<<(unsigned)blocks, RANK_THREADS, 0, mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "rank/bisect");
    });
}

/* ---- minmax ---------------------------------------------------------------------------------
 * The images as [outer][n positions][inner]: the line runs along the positions (a footprint
 * column: outer = batch, n = rows, inner = cols x channels; a footprint row: outer = batch x
 * rows, n = cols, inner = channels). A tile is `lines` consecutive inner indices of one outer
 * index by `outputs` positions, its keys in shared memory position-major, so that a warp reads
 * consecutive addresses on either axis. A maximum runs as the minimum of the keys' complements. */
enum { MINMAX_THREADS = 256, MINMAX_WIDE_LINES = 32, MINMAX_TILE_OUTPUTS = 4096,
       MINMAX_SMEM_MAX = 160 * 1024, MINMAX_BATCH = 8 };

struct minmax_shape {
    int lines, outputs;
    size_t smem;
};

static size_t minmax_smem(int lines, int outputs, size_t k, size_t key_bytes)
{
    return 2 * (size_t)lines * (outputs + k - 1) * key_bytes;
}

/* The tile for inner values a position and a window of k: up to 32 lines (all of inner where it
 * has fewer) by outputs enough for MINMAX_TILE_OUTPUTS a tile (at least 64), two buffers of keys
 * (the doubling's source and destination). Where shared memory would not hold it, fewer lines
 * (down to 8: a warp still reads 64 bytes or more a row), then fewer outputs, then fewer lines. */
static minmax_shape minmax_tile(size_t inner, size_t k, size_t key_bytes)
{
    minmax_shape t;
    t.lines = inner < MINMAX_WIDE_LINES ? (int)inner : MINMAX_WIDE_LINES;
    t.outputs = MINMAX_TILE_OUTPUTS / t.lines < 64 ? 64 : MINMAX_TILE_OUTPUTS / t.lines;
    while (minmax_smem(t.lines, t.outputs, k, key_bytes) > MINMAX_SMEM_MAX) {
        if (t.lines > 8) t.lines = (t.lines + 1) / 2;
        else if (t.outputs > 64) t.outputs /= 2;
        else if (t.lines > 1) t.lines = (t.lines + 1) / 2;
        else break;
    }
    t.smem = minmax_smem(t.lines, t.outputs, k, key_bytes);
    return t;
}

/* A thread's walk over a tile's elements e = threadIdx.x + j * MINMAX_THREADS: e's position
 * (e / lines) and line (its remainder), moved a stride at a time without a division. */
struct tile_walk {
    int pos, line;
    __device__ tile_walk(int lines) : pos((int)threadIdx.x / lines), line((int)threadIdx.x % lines) {}
    __device__ __forceinline__ void next(int lines)
    {
        pos += MINMAX_THREADS / lines;
        line += MINMAX_THREADS % lines;
        if (line >= lines) line -= lines, ++pos;
    }
};

template <typename T, typename K> static __device__ __forceinline__ K minmax_key(const minmax_params &p, size_t i)
{
    if constexpr (std::is_void<T>::value) return (K)mh_rank_key(mh_load_double(p.in, i, p.in_type)) ^ (K)p.flip;
    else return (K)narrow_key(((const T *)p.in)[i]) ^ (K)p.flip;
}

/* The tile's keys into a, Batch of a thread's elements loaded before any is stored, so that their
 * loads are in flight together: one at a time, the resident blocks hold a few KB an SM in flight,
 * a third of what HBM needs to stream. Inside: every source position of the tile in its line and
 * every line in inner, read without the mode's mapping or a check between the loads. The types
 * read as float64 (a switch over the dtypes a load) take one at a time: eight copies of the switch
 * would multiply the file's compile time. */
template <typename T, typename K, bool Inside>
static __device__ __forceinline__ void minmax_load(const minmax_params &p, K *a, size_t base, long long first,
                                                   size_t inner0)
{
    constexpr int Batch = std::is_void<T>::value ? 1 : MINMAX_BATCH;
    const int lines = p.lines, elements = (p.outputs + p.k - 1) * lines;
    tile_walk w(lines);
    for (int e0 = threadIdx.x; e0 < elements; e0 += Batch * MINMAX_THREADS) {
        K keys[Batch];
#pragma unroll
        for (int j = 0; j < Batch; ++j, w.next(lines)) {
            const bool in_tile = e0 + j * MINMAX_THREADS < elements;
            if (Inside) {
                const size_t i = base + (size_t)(first + w.pos - p.anchor) * p.inner + w.line;
                keys[j] = in_tile ? minmax_key<T, K>(p, i) : (K)p.cval_key;
            } else {
                const long long src = mh_border_index(first + w.pos - p.anchor, p.n, p.mode);
                const bool read = in_tile && src >= 0 && inner0 + w.line < p.inner;
                keys[j] = read ? minmax_key<T, K>(p, base + (size_t)src * p.inner + w.line) : (K)p.cval_key;
            }
        }
#pragma unroll
        for (int j = 0; j < Batch; ++j)
            if (e0 + j * MINMAX_THREADS < elements) a[e0 + j * MINMAX_THREADS] = keys[j];
    }
}

template <typename T, typename K>
static __global__ void __launch_bounds__(MINMAX_THREADS) rank_minmax_kernel(const minmax_params p)
{
    extern __shared__ __align__(8) unsigned char minmax_bytes[];
    K *const minmax_keys = (K *)minmax_bytes;
    const int span = p.outputs + p.k - 1, lines = p.lines, elements = span * lines;
    for (size_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
        const size_t line_tile = t % p.line_tiles, rest = t / p.line_tiles;
        const long long first = (long long)(rest % p.position_tiles) * p.outputs;
        const size_t outer = rest / p.position_tiles, inner0 = line_tile * (size_t)lines;
        const size_t base = outer * (size_t)p.n * p.inner + inner0;
        K *a = minmax_keys, *b = minmax_keys + elements;
        if (first >= p.anchor && first - p.anchor + span <= p.n && inner0 + lines <= p.inner)
            minmax_load<T, K, true>(p, a, base, first, inner0);
        else
            minmax_load<T, K, false>(p, a, base, first, inner0);
        __syncthreads();
        /* after a step of width w, a[pos] holds the least of the 2w keys from pos: valid wherever
         * they lie in the tile; the last step's windows are the largest power of two <= k */
        int w = 1;
        for (; 2 * w <= p.k; w *= 2) {
            const int valid = (span - w) * lines;
            for (int e = threadIdx.x; e < valid; e += MINMAX_THREADS) {
                const K x = a[e], y = a[e + w * lines];
                b[e] = y < x ? y : x;
            }
            __syncthreads();
            K *swap = a;
            a = b, b = swap;
        }
        const int shift = (p.k - w) * lines;
        tile_walk at(lines);
        for (int e = threadIdx.x; e < p.outputs * lines; e += MINMAX_THREADS, at.next(lines)) {
            if (first + at.pos >= p.n || inner0 + at.line >= p.inner) continue;
            const K x = a[e], y = a[e + shift], least = (y < x ? y : x) ^ (K)p.flip;
            double value;
            if constexpr (std::is_void<T>::value) value = mh_rank_value(least);
            else value = narrow_value<T>((uint32_t)least);
            mh_store_double(p.out, base + (size_t)(first + at.pos) * p.inner + at.line, p.out_type, value);
        }
        __syncthreads();
    }
}

static int line_fits(const mh_rank_desc *d, const mh_rank_line *l, char *why, size_t len)
{
    const minmax_shape t = minmax_tile(l->inner, l->k, key_bytes(d));
    if (t.smem <= MINMAX_SMEM_MAX) return 1;
    snprintf(why, len, "a window of %zu: minmax's tile of %d lines would need %zu bytes of shared memory (at most %d)",
             l->k, t.lines, t.smem, MINMAX_SMEM_MAX);
    return 0;
}

static int minmax_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    if (!mh_rank_extreme(a, why, len)) return 0;
    if (d->krows == 1 || d->kcols == 1) {
        const mh_rank_line l = mh_rank_line_along(d, d->kcols == 1);
        return line_fits(d, &l, why, len);
    }
    if (!mh_rank_passes_hold(d, why, len)) return 0;
    const mh_rank_line horizontal = mh_rank_line_along(d, 0), vertical = mh_rank_line_along(d, 1);
    return line_fits(d, &horizontal, why, len) && line_fits(d, &vertical, why, len);
}

/* One line pass from in (of d's input type) into out (of out_type). */
static mh_status minmax_pass(mh_context *ctx, const mh_rank_desc *d, const mh_rank_line *l, const void *in, void *out,
                             mh_dtype out_type)
{
    return with_keys(d, [&](auto type, auto key) {
        using T = std::remove_pointer_t<decltype(type)>;
        using K = decltype(key);
        const minmax_shape t = minmax_tile(l->inner, l->k, sizeof(K));
        const uint64_t flip = d->rank == 0 ? 0 : ~0ull;
        minmax_params p = {in, out, d->in_type, out_type, (long long)l->n, l->outer, l->inner, (int)l->k,
                           (int)l->anchor, (int)d->mode, flip, cval_key<T, K>(d->cval) ^ flip, t.lines, t.outputs,
                           mh_ceil_div(l->inner, (size_t)t.lines),
                           mh_ceil_div(l->n, (size_t)t.outputs), 0};
        p.tiles = l->outer * p.line_tiles * p.position_tiles;
        if constexpr (!std::is_void<T>::value)
            if (mh_minmax_columns_take(l, d->in_type, out_type)) return mh_minmax_columns<T>(ctx, p);
        const void *kernel = (const void *)rank_minmax_kernel<T, K>;
        MH_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)t.smem));
        size_t per_sm = 0;
        MH_TRY(mh_blocks_per_sm(ctx, kernel, MINMAX_THREADS, t.smem, &per_sm));
        const size_t most = per_sm * mh_sm_count(ctx) * 4;
        const size_t blocks = p.tiles < most ? p.tiles : most;
        rank_minmax_kernel<T, K><<<(unsigned)blocks, MINMAX_THREADS, t.smem, mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "rank/minmax");
    });
}

/* A line in one pass; a rectangle as a pass along its rows into the workspace (in a type that
 * holds every value and cval exactly: mh_rank_between_passes) and one down its columns from it,
 * whose minimum is the rectangle's. */
static mh_status minmax_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    char why[200];
    if (!minmax_supports(ctx, args, why, sizeof why)) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "rank/minmax: %s", why);
    if (d->krows == 1 || d->kcols == 1) {
        const mh_rank_line l = mh_rank_line_along(d, d->kcols == 1);
        return minmax_pass(ctx, d, &l, a->in, a->out, d->out_type);
    }
    mh_rank_desc second = *d;
    second.in_type = (mh_dtype)mh_rank_between_passes(d);
    void *ws = NULL;
    MH_TRY(mh_workspace(ctx, a->values * mh_dtype_size(second.in_type), &ws));
    const mh_rank_line horizontal = mh_rank_line_along(d, 0), vertical = mh_rank_line_along(d, 1);
    MH_TRY(minmax_pass(ctx, d, &horizontal, a->in, ws, second.in_type));
    return minmax_pass(ctx, &second, &vertical, ws, a->out, d->out_type);
}

/* ---- vanherk ---------------------------------------------------------------------------
 * The minimum or maximum over a krows x kcols rectangle in one pass over the image (van Herk's
 * and Gil and Werman's running extremes: about three comparisons an output whatever the window).
 * A block owns a strip of output columns (VANHERK_THREADS / channels input pixels, kcols - 1 of
 * them the halo) and walks down a segment of rows. Each thread owns one input column: its keys
 * arrive a group of G rows at a time, and the vertical extreme comes from a ring
 * of krows keys in shared memory (the window's part in the block of krows rows before, as suffix
 * extremes, and a running prefix extreme of the current block). A group's keys land in a buffer
 * of rows (the loads of a group inside the image all in flight at once), its vertical results
 * replace them there, where G lanes take the G rows (a lane each) of `chunk`
 * consecutive outputs: a window's part in the chunk as suffix extremes in registers, the part
 * common to the chunk's windows, and a running prefix past it; then a buffer of outputs, stored
 * a row at a time. The loops over a group's positions stay rolled, the kernel's code short. Keys
 * of 32 bits only (the ring of a 64-bit key would hold half the window). Groups of 16 rows (half
 * the buffers, 80 registers) where three blocks an SM fit beside their rings, or where a ring
 * leaves no room for 32; else groups of 32 (two blocks an SM at most, 117 registers): on the
 * H200 16 rows were 10% faster at sizes 3-15 and 15% slower at 101, one block an SM either way. */
enum { VANHERK_THREADS = 256, VANHERK_LD = VANHERK_THREADS + 1, VANHERK_MIN_OUTPUTS = 96,
       VANHERK_SMEM_MAX = 227 * 1024, VANHERK_SMEM_SM = 228 * 1024, VANHERK_SMEM_RESERVED = 1024 };

struct vanherk_params {
    const void *in;
    void *out;
    mh_dtype out_type;
    int same_type;                 /* the output in the input's type: stored as it is */
    long long rows, cols;
    int channels, krows, kcols, anchor_row, anchor_col, mode;
    uint32_t flip, cval_key;       /* 0 or ~0 (a maximum as the minimum of complements); cval's key, flipped */
    int strip, chunk;              /* output pixels a strip; outputs a lane's chunk (a power of two <= kcols, <= 16) */
    long long segment;             /* output rows a block walks, a multiple of the group */
    size_t strips, segments, tiles;
};

static size_t vanherk_smem(size_t krows, int group)
{
    return (krows * VANHERK_THREADS + 2 * (size_t)group * VANHERK_LD) * sizeof(uint32_t);
}

/* The rows of a group for a window of krows rows: 16 where three blocks an SM fit, or where a
 * group of 32 leaves the ring no room; else 32. */
static int vanherk_group(size_t krows)
{
    const int three = 3 * (vanherk_smem(krows, 16) + VANHERK_SMEM_RESERVED) <= VANHERK_SMEM_SM;
    return three || vanherk_smem(krows, 32) > VANHERK_SMEM_MAX ? 16 : 32;
}

/* One position of a thread's column: x's key into the ring at m (the block of krows positions it
 * walks), the extreme of the krows positions ending here returned (meaningful from the ring's
 * first full block on). */
static __device__ __forceinline__ uint32_t vanherk_step(uint32_t x, uint32_t *ring, int krows, int &m, uint32_t &prefix)
{
    prefix = m == 0 ? x : min(prefix, x);
    if (m == krows - 1) { /* the block is whole: its suffix extremes, for the next block's windows */
        uint32_t run = x;
        ring[m * VANHERK_THREADS] = x;
        for (int s = krows - 2; s >= 0; --s) {
            run = min(run, ring[s * VANHERK_THREADS]);
            ring[s * VANHERK_THREADS] = run;
        }
        m = 0;
        return run;
    }
    const uint32_t window = min(ring[(m + 1) * VANHERK_THREADS], prefix); /* read before slot m is reused */
    ring[m * VANHERK_THREADS] = x;
    ++m;
    return window;
}

/* The horizontal extremes of the buffered rows into the output buffer: a lane a row, a warp
 * 32 / G chunks at once. */
template <int G, int R>
static __device__ __forceinline__ void vanherk_rows(const vanherk_params &p, const uint32_t *hbuf, uint32_t *obuf,
                                                    int outputs)
{
    enum { SHARE = 32 / G };
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, C = p.channels, kc = p.kcols;
    const int line = lane % G, chunks = (outputs + R - 1) / R;
    for (int item = warp * SHARE + lane / G; item < chunks * C; item += VANHERK_THREADS / 32 * SHARE) {
        const int chunk = item / C, ch = item - chunk * C, u0 = chunk * R;
        const uint32_t *row = hbuf + line * VANHERK_LD + ch + u0 * C; /* pixel i of the chunk at row[i * C] */
        uint32_t *orow = obuf + line * VANHERK_LD + ch + u0 * C;
        uint32_t suffix[R];
        suffix[R - 1] = UINT32_MAX;
#pragma unroll
        for (int t = R - 2; t >= 0; --t) suffix[t] = min(suffix[t + 1], row[t * C]);
        uint32_t common = UINT32_MAX; /* pixels R - 1 to kc - 1: in every window of the chunk */
        for (int i = R - 1; i < kc; ++i) common = min(common, row[i * C]);
        uint32_t prefix = UINT32_MAX;
#pragma unroll
        for (int t = 0; t < R; ++t) {
            if (u0 + t < outputs) { /* past the strip's outputs nothing is read (the row's end) */
                if (t > 0) prefix = min(prefix, row[(t + kc - 1) * C]);
                orow[t * C] = min(min(suffix[t], common), prefix);
            }
        }
    }
}

template <typename T>
static __device__ __forceinline__ void vanherk_store(const vanherk_params &p, size_t i, uint32_t key)
{
    if (p.same_type) ((T *)p.out)[i] = key_value<T>(key);
    else mh_store_double(p.out, i, p.out_type, narrow_value<T>(key));
}

/* A group of n positions from input row r0 on into this thread's slots of the row buffer (slot
 * i * VANHERK_LD for position i), as keys: a whole group inside the image by 32 loads in flight
 * before the first store, the others one at a time through the border's mapping. */
template <typename T, int G>
static __device__ __forceinline__ void vanherk_load(const vanherk_params &p, const T *in, bool inside, long long r0,
                                                    int n, size_t row_values, uint32_t *slot)
{
    if (inside && n == G && r0 >= 0 && r0 + G <= p.rows) {
        uint32_t x[G];
#pragma unroll
        for (int i = 0; i < G; ++i) x[i] = narrow_key(in[(size_t)(r0 + i) * row_values]) ^ p.flip;
#pragma unroll
        for (int i = 0; i < G; ++i) slot[i * VANHERK_LD] = x[i];
        return;
    }
    for (int i = 0; i < n; ++i) {
        const long long src = mh_border_index(r0 + i, p.rows, p.mode);
        slot[i * VANHERK_LD] = inside && src >= 0 ? narrow_key(in[(size_t)src * row_values]) ^ p.flip : p.cval_key;
    }
}

template <typename T, int G>
static __global__ void __launch_bounds__(VANHERK_THREADS, G == 16 ? 3 : 2) rank_vanherk_kernel(const vanherk_params p)
{
    extern __shared__ uint32_t vanherk_keys[];
    const int tid = threadIdx.x, C = p.channels, lane = tid % 32, warp = tid / 32;
    uint32_t *const ring = vanherk_keys + tid, *const hbuf = vanherk_keys + (size_t)p.krows * VANHERK_THREADS;
    uint32_t *const obuf = hbuf + G * VANHERK_LD, *const slot = hbuf + tid;
    const size_t row_values = (size_t)p.cols * C;
    for (size_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
        const size_t strip = tile % p.strips, segment = tile / p.strips % p.segments, image = tile / p.strips / p.segments;
        const long long y0 = (long long)segment * p.segment, x0 = (long long)strip * p.strip;
        const long long out_rows = min(p.segment, p.rows - y0);
        const int outputs = (int)min((long long)p.strip, p.cols - x0), loaded = (outputs + p.kcols - 1) * C;
        /* this thread's column: pixel x0 - anchor + tid / C, channel tid % C */
        const long long col = tid < loaded ? mh_border_index(x0 - p.anchor_col + tid / C, p.cols, p.mode) : -1;
        const T *const in = (const T *)p.in + image * p.rows * row_values + (col < 0 ? 0 : (size_t)col * C + tid % C);
        const long long first = y0 - p.anchor_row, positions = out_rows + p.krows - 1, warm = p.krows - 1;
        int m = 0;
        uint32_t prefix = 0;
        for (long long base = 0; base < positions; base += G) {
            /* the warm-up's groups end where the first output's window does, so that each later
             * group of positions gives G output rows (the last one fewer) */
            const long long end = base < warm ? min(base + G, warm) : min(base + G, positions);
            const int n = (int)(end - base);
            vanherk_load<T, G>(p, in, col >= 0, first + base, n, row_values, slot);
            for (int i = 0; i < n; ++i) /* in place: a thread's own slots */
                slot[i * VANHERK_LD] = vanherk_step(slot[i * VANHERK_LD], ring, p.krows, m, prefix);
            if (base < warm) {
                if (end == warm) base = warm - G; /* the next group starts at warm */
                continue;
            }
            __syncthreads();
            switch (p.chunk) {
            case 1: vanherk_rows<G, 1>(p, hbuf, obuf, outputs); break;
            case 2: vanherk_rows<G, 2>(p, hbuf, obuf, outputs); break;
            case 4: vanherk_rows<G, 4>(p, hbuf, obuf, outputs); break;
            case 8: vanherk_rows<G, 8>(p, hbuf, obuf, outputs); break;
            default: vanherk_rows<G, 16>(p, hbuf, obuf, outputs); break;
            }
            __syncthreads();
            const long long y = y0 + (base - warm);
            for (int g = warp; g < n; g += VANHERK_THREADS / 32) {
                const size_t at = ((size_t)image * p.rows + (size_t)(y + g)) * row_values + (size_t)x0 * C;
                for (int v = lane; v < outputs * C; v += 32) vanherk_store<T>(p, at + v, obuf[g * VANHERK_LD + v] ^ p.flip);
            }
        }
        __syncthreads(); /* the next tile's first group rewrites the buffers */
    }
}

/* The chunk of outputs a lane takes along a row: the largest power of two <= kcols, at most 16
 * (a window then spans the chunk, so its extreme is the chunk's suffix, a common part and a
 * prefix past it: kcols + chunk - 1 reads for chunk outputs). */
static int vanherk_chunk(size_t kcols)
{
    int r = 1;
    while (r < 16 && (size_t)(2 * r) <= kcols) r *= 2;
    return r;
}

/* Output pixels a strip: the input pixels a block's threads hold, less the window's halo. */
static long long vanherk_strip(const mh_rank_desc *d)
{
    const long long pixels = d->channels <= VANHERK_THREADS ? (long long)(VANHERK_THREADS / d->channels) : 0;
    return pixels - (long long)d->kcols + 1;
}

static int vanherk_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    if (!mh_rank_extreme(a, why, len)) return 0;
    const long long strip = vanherk_strip(d);
    if (d->krows == 1 || d->kcols == 1)
        snprintf(why, len, "a footprint of one line: vanherk takes rectangles (minmax the lines)");
    else if (key_bytes(d) != 4)
        snprintf(why, len, "%s%s: vanherk keeps 32-bit keys (inputs of up to 32 bits, cval one of their values)",
                 mh_dtype_name(d->in_type), d->mode == MH_MODE_CONSTANT ? " with its cval" : "");
    else if (strip * (long long)d->channels < VANHERK_MIN_OUTPUTS)
        snprintf(why, len, "%zu columns of %zu channels: a strip of %d threads would give %lld outputs (at least %d)",
                 d->kcols, d->channels, VANHERK_THREADS, strip < 0 ? 0 : strip * (long long)d->channels,
                 VANHERK_MIN_OUTPUTS);
    else if (vanherk_smem(d->krows, vanherk_group(d->krows)) > VANHERK_SMEM_MAX)
        snprintf(why, len, "%zu rows: vanherk's ring would need %zu bytes of shared memory (at most %d)", d->krows,
                 vanherk_smem(d->krows, vanherk_group(d->krows)), VANHERK_SMEM_MAX);
    else return 1;
    return 0;
}

/* Segments of rows such that there are about eight tiles a resident block (the last wave's
 * idle blocks then cost little), none shorter than four windows (the krows - 1 rows a segment
 * reads ahead are a pass over them more). */
static long long vanherk_segment(const mh_rank_desc *d, size_t strips, size_t resident, int group)
{
    const size_t columns = d->batch * strips, want = 8 * resident;
    const size_t segments = columns >= want ? 1 : mh_ceil_div(want, columns);
    long long segment = (long long)mh_align_up(mh_ceil_div(d->rows, segments), (size_t)group);
    const long long least = (long long)mh_align_up(4 * (d->krows - 1), (size_t)group);
    segment = segment > least ? segment : least;
    const long long all = (long long)mh_align_up(d->rows, (size_t)group);
    return segment < all ? segment : all;
}

static mh_status vanherk_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    char why[200];
    if (!vanherk_supports(ctx, args, why, sizeof why)) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "rank/vanherk: %s", why);
    return with_keys(d, [&](auto type, auto) {
        using T = std::remove_pointer_t<decltype(type)>;
        if constexpr (std::is_void<T>::value) {
            return mh_fail(ctx, MH_ERR_INTERNAL, "rank/vanherk: 64-bit keys");
        } else {
            const uint32_t flip = d->rank == 0 ? 0u : ~0u;
            const int group = vanherk_group(d->krows);
            const size_t smem = vanherk_smem(d->krows, group);
            const void *kernel = group == 16 ? (const void *)rank_vanherk_kernel<T, 16> : (const void *)rank_vanherk_kernel<T, 32>;
            MH_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
            size_t resident = 0;
            MH_TRY(mh_resident_grid(ctx, kernel, VANHERK_THREADS, smem, &resident));
            vanherk_params p = {a->in, a->out, d->out_type, d->out_type == d->in_type, (long long)d->rows,
                                (long long)d->cols, (int)d->channels, (int)d->krows, (int)d->kcols,
                                (int)(d->krows / 2 + d->origin_row), (int)(d->kcols / 2 + d->origin_col), (int)d->mode,
                                flip, (uint32_t)cval_key<T, uint32_t>(d->cval) ^ flip, (int)vanherk_strip(d),
                                vanherk_chunk(d->kcols), 0, 0, 0, 0};
            p.strips = mh_ceil_div(d->cols, (size_t)p.strip);
            p.segment = vanherk_segment(d, p.strips, resident, group);
            p.segments = mh_ceil_div(d->rows, (size_t)p.segment);
            p.tiles = d->batch * p.segments * p.strips;
            const size_t blocks = p.tiles < resident ? p.tiles : resident; /* each walks its tiles in turn */
            if (group == 16) rank_vanherk_kernel<T, 16><<<(unsigned)blocks, VANHERK_THREADS, smem, mh_stream(ctx)>>>(p);
            else rank_vanherk_kernel<T, 32><<<(unsigned)blocks, VANHERK_THREADS, smem, mh_stream(ctx)>>>(p);
            return MH_LAUNCH_CHECK(ctx, "rank/vanherk");
        }
    });
}

static const mh_row rows[] = {
    {{"rank/naive", MH_OP_RANK, MH_BACKEND_CUDA, 1, "global+local", "ours",
      "a thread an output, its window's keys sorted in a local array as they load"},
     naive_supports, naive_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_VOLUMES},
    {{"rank/bisect", MH_OP_RANK, MH_BACKEND_CUDA, 2, "global+L1", "ours",
      "a thread an output, any footprint: the rank's key by bisection between the window's extremes, counting each step"},
     bisect_supports, bisect_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_VOLUMES},
    {{"rank/minmax", MH_OP_RANK, MH_BACKEND_CUDA, 3, "shared+registers", "ours",
      "the minimum or maximum over a line (a rectangle: two passes): a tile's keys in shared memory, log2(k) doubling "
      "steps; lines down wide images' columns walked in registers"},
     minmax_supports, minmax_run, NULL, 0},
    {{"rank/vanherk", MH_OP_RANK, MH_BACKEND_CUDA, 4, "registers+shared", "ours",
      "the minimum or maximum over a rectangle in one pass: running extremes down each column, then along rows"},
     vanherk_supports, vanherk_run, NULL, 0},
};

MH_ROW_GROUP(mh_rank_cuda_rows, rows)

/* rank on CUDA (mh_rank: scipy.ndimage's selection filters).
 *   naive  a thread an output: its window's keys gathered from global memory into a local array
 *          (up to RANK_NAIVE_MAX set elements) by insertion as they load, the rank read off; the
 *          ladder's first rung, and auto's row past network's 49 set elements
 *   minmax the minimum or maximum over a line (a footprint of one row or one column, every element
 *          set, no structure: each of scipy's separable passes) by doubling in shared memory: a
 *          tile's keys, then log2(k) steps that each take the least of two windows half as long,
 *          then every output the least of two overlapping windows (a sparse table's query)
 *   network a thread an output for footprints of at most 49 set elements: the window's keys in
 *          registers (offsets, distances and structure in kernel parameters), sorted by Batcher's
 *          odd-even merge network unrolled at compile time for 9, 25 or 49 keys, the rank read off
 * minmax and network rank keys of the input's own width where they can (with_keys). */
#include "common.cuh"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/rank_key.h"

#include <float.h>
#include <limits>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <type_traits>

enum { RANK_NAIVE_MAX = 255, RANK_THREADS = 256 };

/* Keys in the input's own width (minmax and network): a type of up to 32 bits ranks by a 32-bit
 * key in mh_rank_key's order (unsigned values as they are, signed ones with the sign bit flipped,
 * float32 by mh_rank_key's map of its bits, NaN above all), read and turned back with no float64
 * conversion. T = void: the input read as float64 whatever its type, 64-bit keys (the wide types,
 * a structure, a cval its type does not hold). */
template <typename T> static __host__ __device__ __forceinline__ uint32_t narrow_key(T v)
{
    if constexpr (std::is_same<T, float>::value) {
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        if (v != v) return UINT32_MAX;
        return bits >> 31 ? ~bits : bits | 0x80000000u;
    } else if constexpr (std::is_signed<T>::value) {
        return (uint32_t)(int32_t)v ^ 0x80000000u;
    } else {
        return (uint32_t)v;
    }
}

template <typename T> static __device__ __forceinline__ double narrow_value(uint32_t key)
{
    if constexpr (std::is_same<T, float>::value) {
        if (key == UINT32_MAX) return mh_rank_value(MH_RANK_NAN_KEY);
        const uint32_t bits = key >> 31 ? key & 0x7fffffffu : ~key;
        float v;
        memcpy(&v, &bits, sizeof v);
        return (double)v;
    } else if constexpr (std::is_signed<T>::value) {
        return (double)(int32_t)(key ^ 0x80000000u);
    } else {
        return (double)key;
    }
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

static size_t key_bytes(const mh_rank_desc *d)
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

struct rank_params {
    const void *in;
    void *out;
    long long rows, cols;
    size_t channels, values;
    mh_dtype in_type, out_type;
    int mode, count, rank, has_structure, structure_in_type;
    double cval;
    const int2 *offsets;     /* (row, column) of each set element from the output, C order */
    const double *structure; /* count values, after the offsets (has_structure) */
};

static __global__ void __launch_bounds__(RANK_THREADS) rank_naive_kernel(const rank_params p)
{
    uint64_t keys[RANK_NAIVE_MAX];
    for (size_t i = blockIdx.x * (size_t)RANK_THREADS + threadIdx.x; i < p.values;
         i += (size_t)gridDim.x * RANK_THREADS) {
        const size_t ch = i % p.channels, pixel = i / p.channels;
        const long long x = (long long)(pixel % (size_t)p.cols), y = (long long)(pixel / (size_t)p.cols % (size_t)p.rows);
        const size_t image = pixel / (size_t)p.cols / (size_t)p.rows;
        for (int k = 0; k < p.count; ++k) {
            const int2 o = p.offsets[k];
            const long long r = mh_border_index(y + o.x, p.rows, p.mode), c = mh_border_index(x + o.y, p.cols, p.mode);
            const int outside = r < 0 || c < 0;
            const size_t at = outside ? 0 : ((image * (size_t)p.rows + (size_t)r) * (size_t)p.cols + (size_t)c) * p.channels + ch;
            const double v = outside ? p.cval : mh_load_double(p.in, at, p.in_type);
            const uint64_t key =
                mh_rank_key(!p.has_structure ? v
                            : p.structure_in_type && k > 0 /* scipy's: the first element in float64 */
                                ? mh_rank_sum_in_type(p.in, at, outside, p.cval, p.in_type, p.structure[k])
                                : v + p.structure[k]);
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
    const size_t bytes = offsets_bytes + (d->structure ? a->count * sizeof(double) : 0);
    unsigned char *host = (unsigned char *)malloc(bytes);
    if (!host) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "rank: out of host memory for the window's offsets");
    int2 *offsets = (int2 *)host;
    double *structure = (double *)(host + offsets_bytes);
    const long long anchor_r = (long long)(d->krows / 2) + d->origin_row, anchor_c = (long long)(d->kcols / 2) + d->origin_col;
    size_t n = 0;
    for (size_t r = 0; r < d->krows; ++r)
        for (size_t c = 0; c < d->kcols; ++c)
            if (d->footprint[r * d->kcols + c]) {
                offsets[n] = make_int2((int)((long long)r - anchor_r), (int)((long long)c - anchor_c));
                if (d->structure) structure[n] = d->structure[r * d->kcols + c];
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
    p->structure = (const double *)((unsigned char *)ws + offsets_bytes);
    return s;
}

static mh_status naive_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    rank_params p = {a->in, a->out, (long long)d->rows, (long long)d->cols, d->channels, a->values, d->in_type,
                     d->out_type, (int)d->mode, (int)a->count, (int)d->rank, d->structure != NULL,
                     d->structure_in_type, d->cval, NULL, NULL};
    MH_TRY(upload_window(ctx, a, &p));
    const size_t blocks = mh_resident_blocks(ctx, a->values, RANK_THREADS);
    rank_naive_kernel<<<(unsigned)blocks, RANK_THREADS, 0, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "rank/naive");
}

/* ---- minmax ---------------------------------------------------------------------------------
 * The images as [outer][n positions][inner]: the line runs along the positions (a footprint
 * column: outer = batch, n = rows, inner = cols x channels; a footprint row: outer = batch x
 * rows, n = cols, inner = channels). A tile is `lines` consecutive inner indices of one outer
 * index by `outputs` positions, its keys in shared memory position-major, so that a warp reads
 * consecutive addresses on either axis. A maximum runs as the minimum of the keys' complements. */
enum { MINMAX_THREADS = 256, MINMAX_WIDE_LINES = 32, MINMAX_TILE_OUTPUTS = 4096,
       MINMAX_SMEM_MAX = 160 * 1024 };

struct minmax_params {
    const void *in;
    void *out;
    mh_dtype in_type, out_type;
    long long n;                 /* positions a line */
    size_t outer, inner;
    int k, anchor, mode;         /* window length, its element over the output */
    uint64_t flip;               /* 0 for the minimum, ~0 for the maximum */
    uint64_t cval_key;           /* cval's key, flipped */
    int lines, outputs;          /* a tile's */
    float inverse;               /* 1 / lines, a little above */
    size_t line_tiles, position_tiles, tiles;
};

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

/* e / lines and its remainder for the tile's element e (below 2^24) without an integer division:
 * a float quotient, corrected by one either way. */
static __device__ __forceinline__ int tile_position(int e, int lines, float inverse, int *line)
{
    int pos = __float2int_rz(__int2float_rn(e) * inverse);
    pos -= pos * lines > e;
    pos += (pos + 1) * lines <= e;
    *line = e - pos * lines;
    return pos;
}

template <typename T, typename K>
static __global__ void __launch_bounds__(MINMAX_THREADS) rank_minmax_kernel(const minmax_params p)
{
    extern __shared__ __align__(8) unsigned char minmax_bytes[];
    K *const minmax_keys = (K *)minmax_bytes;
    const K flip = (K)p.flip;
    const int span = p.outputs + p.k - 1, lines = p.lines, elements = span * lines;
    for (size_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
        const size_t line_tile = t % p.line_tiles, rest = t / p.line_tiles;
        const long long first = (long long)(rest % p.position_tiles) * p.outputs;
        const size_t outer = rest / p.position_tiles, inner0 = line_tile * (size_t)lines;
        const size_t base = outer * (size_t)p.n * p.inner + inner0;
        K *a = minmax_keys, *b = minmax_keys + elements;
        for (int e = threadIdx.x; e < elements; e += MINMAX_THREADS) {
            int line;
            const int pos = tile_position(e, lines, p.inverse, &line);
            const long long src = mh_border_index(first + pos - p.anchor, p.n, p.mode);
            K key = (K)p.cval_key;
            if (inner0 + line < p.inner && src >= 0) {
                const size_t i = base + (size_t)src * p.inner + line;
                if constexpr (std::is_void<T>::value) key = (K)mh_rank_key(mh_load_double(p.in, i, p.in_type)) ^ flip;
                else key = (K)narrow_key(((const T *)p.in)[i]) ^ flip;
            }
            a[e] = key;
        }
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
        for (int e = threadIdx.x; e < p.outputs * lines; e += MINMAX_THREADS) {
            int line;
            const int pos = tile_position(e, lines, p.inverse, &line);
            if (first + pos >= p.n || inner0 + line >= p.inner) continue;
            const K x = a[e], y = a[e + shift], least = (y < x ? y : x) ^ flip;
            double value;
            if constexpr (std::is_void<T>::value) value = mh_rank_value(least);
            else value = narrow_value<T>((uint32_t)least);
            mh_store_double(p.out, base + (size_t)(first + pos) * p.inner + line, p.out_type, value);
        }
        __syncthreads();
    }
}

/* The line a minmax call runs along, or 0 (and why) where the footprint is not one. */
static int minmax_line(const mh_rank_args *a, size_t *k, size_t *outer, size_t *n, size_t *inner, long long *anchor,
                       char *why, size_t len)
{
    const mh_rank_desc *d = &a->d;
    const char *what = d->structure                             ? "a structure"
                       : a->count != d->krows * d->kcols        ? "a footprint with holes"
                       : d->krows > 1 && d->kcols > 1           ? "a footprint of two axes"
                       : d->rank != 0 && d->rank + 1 != a->count ? "a rank other than the least or the greatest"
                                                                 : NULL;
    if (what) {
        snprintf(why, len, "%s: minmax takes the minimum or maximum over a whole line", what);
        return 0;
    }
    const int column = d->kcols == 1;
    *k = column ? d->krows : d->kcols;
    *outer = column ? d->batch : d->batch * d->rows;
    *n = column ? d->rows : d->cols;
    *inner = column ? d->cols * d->channels : d->channels;
    *anchor = (long long)(*k / 2) + (column ? d->origin_row : d->origin_col);
    return 1;
}

static int minmax_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    size_t k, outer, n, inner;
    long long anchor;
    if (!minmax_line(&args->rank, &k, &outer, &n, &inner, &anchor, why, len)) return 0;
    const minmax_shape t = minmax_tile(inner, k, key_bytes(&args->rank.d));
    if (t.smem <= MINMAX_SMEM_MAX) return 1;
    snprintf(why, len, "a window of %zu: minmax's tile of %d lines would need %zu bytes of shared memory (at most %d)",
             k, t.lines, t.smem, MINMAX_SMEM_MAX);
    return 0;
}

static mh_status minmax_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    size_t k, outer, n, inner;
    long long anchor;
    char why[160];
    if (!minmax_line(a, &k, &outer, &n, &inner, &anchor, why, sizeof why))
        return mh_fail(ctx, MH_ERR_UNSUPPORTED, "rank/minmax: %s", why);
    return with_keys(d, [&](auto type, auto key) {
        using T = std::remove_pointer_t<decltype(type)>;
        using K = decltype(key);
        const minmax_shape t = minmax_tile(inner, k, sizeof(K));
        const uint64_t flip = d->rank == 0 ? 0 : ~0ull;
        minmax_params p = {a->in, a->out, d->in_type, d->out_type, (long long)n, outer, inner, (int)k, (int)anchor,
                           (int)d->mode, flip, cval_key<T, K>(d->cval) ^ flip, t.lines, t.outputs,
                           (1.0f + 1e-6f) / (float)t.lines, mh_ceil_div(inner, (size_t)t.lines),
                           mh_ceil_div(n, (size_t)t.outputs), 0};
        p.tiles = outer * p.line_tiles * p.position_tiles;
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
    int above, below, before, after; /* the window's reach from the output, each >= 0 */
    double cval;
    uint64_t cval_key;
    int2 offsets[N];                 /* (row, column) of each set element from the output */
    long long deltas[N];             /* the same as distances between elements */
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

template <int N, typename T, typename K>
static __global__ void __launch_bounds__(NETWORK_THREADS, N <= 9 ? 4 : N <= 25 ? 2 : 1) rank_network_kernel(const network_params<N> p)
{
    for (size_t image = blockIdx.z; image < p.batch; image += gridDim.z)
        for (long long y = blockIdx.y; y < p.rows; y += gridDim.y)
            for (unsigned q = blockIdx.x * NETWORK_THREADS + threadIdx.x; q < p.inner; q += gridDim.x * NETWORK_THREADS) {
                const unsigned x = p.channels == 1 ? q : q / p.channels, ch = q - x * p.channels;
                const size_t at = (image * (size_t)p.rows + (size_t)y) * p.inner + q;
                const bool inside = y >= p.above && y + p.below < p.rows && (long long)x >= p.before &&
                                    (long long)x + p.after < p.cols;
                K keys[N];
#pragma unroll
                for (int k = 0; k < N; ++k) {
                    keys[k] = (K)~(K)0; /* past the footprint's count: above every rank asked */
                    if (k < p.count) {
                        long long i = (long long)at + p.deltas[k];
                        if (!inside) {
                            const long long r = mh_border_index(y + p.offsets[k].x, p.rows, p.mode);
                            const long long c = mh_border_index((long long)x + p.offsets[k].y, p.cols, p.mode);
                            i = r < 0 || c < 0 ? -1
                                               : (long long)((image * (size_t)p.rows + (size_t)r) * p.inner +
                                                             (size_t)c * p.channels + ch);
                        }
                        if constexpr (std::is_void<T>::value) {
                            const double v = i < 0 ? p.cval : mh_load_double(p.in, (size_t)i, p.in_type);
                            keys[k] = mh_rank_key(
                                !p.has_structure ? v
                                : p.structure_in_type && k > 0 /* scipy's: the first element in float64 */
                                    ? mh_rank_sum_in_type(p.in, (size_t)(i < 0 ? 0 : i), i < 0, p.cval, p.in_type,
                                                          p.structure[k])
                                    : v + p.structure[k]);
                        } else {
                            keys[k] = i < 0 ? (K)p.cval_key : narrow_key(((const T *)p.in)[i]);
                        }
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

static const int network_sizes[] = {9, 25, 49};

static int network_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    const mh_rank_args *a = &args->rank;
    if (a->count > (size_t)network_sizes[2]) {
        snprintf(why, len, "a footprint of %zu set elements: network sorts at most %d in registers", a->count,
                 network_sizes[2]);
        return 0;
    }
    if (a->d.cols * a->d.channels > UINT32_MAX) {
        snprintf(why, len, "rows of %zu x %zu values: network counts a row's values in 32 bits", a->d.cols,
                 a->d.channels);
        return 0;
    }
    return 1;
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
    const long long anchor_r = (long long)(d->krows / 2) + d->origin_row, anchor_c = (long long)(d->kcols / 2) + d->origin_col;
    int n = 0;
    for (size_t r = 0; r < d->krows; ++r)
        for (size_t c = 0; c < d->kcols; ++c)
            if (d->footprint[r * d->kcols + c]) {
                const int dr = (int)((long long)r - anchor_r), dc = (int)((long long)c - anchor_c);
                p.offsets[n] = make_int2(dr, dc);
                p.deltas[n] = ((long long)dr * (long long)d->cols + dc) * (long long)d->channels;
                if (d->structure) p.structure[n] = d->structure[r * d->kcols + c];
                p.above = max(p.above, -dr), p.below = max(p.below, dr);
                p.before = max(p.before, -dc), p.after = max(p.after, dc);
                ++n;
            }
    const size_t x_blocks = mh_ceil_div(p.inner, NETWORK_THREADS);
    const dim3 grid((unsigned)(x_blocks < 65535 ? x_blocks : 65535), (unsigned)(d->rows < 65535 ? d->rows : 65535),
                    (unsigned)(d->batch < 65535 ? d->batch : 65535));
    return with_keys(d, [&](auto type, auto key) {
        using T = std::remove_pointer_t<decltype(type)>;
        using K = decltype(key);
        p.cval_key = cval_key<T, K>(d->cval);
        rank_network_kernel<N, T, K><<<grid, NETWORK_THREADS, 0, mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "rank/network");
    });
}

static mh_status network_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    if (a->count <= (size_t)network_sizes[0]) return network_typed<9>(ctx, a);
    if (a->count <= (size_t)network_sizes[1]) return network_typed<25>(ctx, a);
    return network_typed<49>(ctx, a);
}

static const mh_row rows[] = {
    {{"rank/naive", MH_OP_RANK, MH_BACKEND_CUDA, 1, "global+local", "ours",
      "a thread an output, its window's keys sorted in a local array as they load"},
     naive_supports, naive_run, NULL, 0},
    {{"rank/network", MH_OP_RANK, MH_BACKEND_CUDA, 2, "registers", "ours",
      "a thread an output, its window's keys sorted in registers by an odd-even merge network (up to 49)"},
     network_supports, network_run, NULL, 0},
    {{"rank/minmax", MH_OP_RANK, MH_BACKEND_CUDA, 3, "shared", "ours",
      "the minimum or maximum over a line: a tile's keys in shared memory, log2(k) doubling steps"},
     minmax_supports, minmax_run, NULL, 0},
};

MH_ROW_GROUP(mh_rank_cuda_rows, rows)

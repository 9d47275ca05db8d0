/* reduce along an axis on CUDA: every reduction of mh_reduce (sum, mean, min, max, argmin,
 * argmax of float32, float64 and 8- to 64-bit integers, outer x len x inner reduced over len),
 * with the operators of reduce_ops.cuh.
 *
 *   axis-naive  a thread per lane (o, i), its len values read one after another, inner apart:
 *               coalesced across a warp when inner > 1 (neighbouring threads, neighbouring
 *               columns); along the fast axis (inner = 1) each thread walks its own row and a
 *               warp's loads land len values apart (seed 004's coalescing lesson, again)
 *   axis        ours, by the layout:
 *               rows (inner = 1): a lane is a contiguous row. Rows of at most 4096 values go
 *                 to groups of 1, 8 or 32 threads (short rows: a thread each, its 16-byte loads
 *                 next to its neighbours'); longer rows to whole blocks, in 16 KB tiles
 *               columns (inner > 1): a block holds a tile of rb rows x cb columns, each thread
 *                 one column (or four, by 16-byte loads when inner is a multiple of 4; two, by
 *                 8-byte loads, for argmin and argmax), and walks down the axis rb rows at a
 *                 time, so a warp reads whole row segments
 *               Where the lanes are too few to fill the GPU, the tiles along each axis are
 *               dealt to several blocks in turn. A block's partial results meet in a fixed
 *               pairwise tree; the blocks' partials go to the context's workspace and a
 *               finishing pass combines them in block order. No atomics: the same bits on every
 *               run for the same shape, alignment and device.
 * Float32 sums and means accumulate in double (rounded once), integer sums in int64 or uint64
 * (exact, wrapping as numpy's). The 8- and 16-bit integers move 4 (or 2) values a load, 4 or 8
 * bytes, where the wider types move 16. */
#include "reduce_ops.cuh"

#include <stdio.h>

enum { BLOCK = 256, UNROLL = 4, GROUP_MAX_LEN = 4096, ROW_TILE = 4 * UNROLL * BLOCK };

/* ---- kernels --------------------------------------------------------------------------- */

template <typename Op>
static __global__ void __launch_bounds__(BLOCK)
    axis_naive_kernel(const typename Op::value *in, size_t len, size_t inner, size_t lanes, void *out, bool mean)
{
    for (size_t lane = (size_t)blockIdx.x * BLOCK + threadIdx.x; lane < lanes; lane += (size_t)gridDim.x * BLOCK) {
        const size_t o = lane / inner, i = lane % inner;
        const typename Op::value *p = in + o * len * inner + i;
        typename Op::acc a = Op::identity();
        for (size_t l = 0; l < len; ++l) Op::add(a, p[l * inner], (long long)l);
        Op::store(out, lane, a, len, mean);
    }
}

/* A vec4's values (float4, int4, or a quad of 8-byte values), indices i .. i + 3. */
template <typename Op, typename V> static __device__ __forceinline__ void add4(typename Op::acc &a, V v, long long i)
{
    Op::add(a, v.x, i), Op::add(a, v.y, i + 1), Op::add(a, v.z, i + 2), Op::add(a, v.w, i + 3);
}

/* Thread t of n adds p[0 .. count) (indices first + 0 ..) to a, in increasing index: the values
 * before p's first 16-byte boundary one each, then 16-byte vectors, UNROLL loads in flight,
 * then the tail. */
template <typename Op>
static __device__ __forceinline__ void add_range(typename Op::acc &a, const typename Op::value *p, size_t count,
                                                 long long first, unsigned t, unsigned n)
{
    typedef typename Op::value T;
    typedef typename vec4<T>::type V;
    size_t head = (16 - ((uintptr_t)p & 15)) % 16 / sizeof(T);
    if (head > count) head = count;
    for (size_t e = t; e < head; e += n) Op::add(a, p[e], first + (long long)e);
    const V *v = reinterpret_cast<const V *>(p + head);
    const size_t nv = (count - head) / 4;
    const long long body = first + (long long)head;
    size_t k = t;
    for (; k + (UNROLL - 1) * (size_t)n < nv; k += UNROLL * (size_t)n) {
        V x[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) x[u] = load_vec(v + k + u * n);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) add4<Op>(a, x[u], body + 4 * (long long)(k + u * n));
    }
    for (; k < nv; k += n) add4<Op>(a, load_vec(v + k), body + 4 * (long long)k);
    for (size_t e = head + 4 * nv + t; e < count; e += n) Op::add(a, p[e], first + (long long)e);
}

/* Rows (inner = 1) of at most GROUP_MAX_LEN values, G threads a row (G divides 32). The loop
 * runs while the warp's first row exists, so a warp's shuffles see all of it. */
template <typename Op, int G>
static __global__ void __launch_bounds__(BLOCK)
    axis_row_groups_kernel(const typename Op::value *in, size_t len, size_t lanes, void *out, bool mean)
{
    const unsigned g = threadIdx.x % G;
    const size_t stride = (size_t)gridDim.x * (BLOCK / G);
    const size_t warp_first = ((size_t)blockIdx.x * BLOCK + threadIdx.x / 32 * 32) / G;
    for (size_t base = warp_first; base < lanes; base += stride) {
        const size_t lane = base + threadIdx.x % 32 / G;
        typename Op::acc a = Op::identity();
        if (lane < lanes) add_range<Op>(a, in + lane * len, len, 0, g, G);
        for (int d = G / 2; d > 0; d /= 2) a = Op::combine(a, shfl_down(a, d));
        if (g == 0 && lane < lanes) Op::store(out, lane, a, len, mean);
    }
}

/* Thread 0 gets the block's combine of every thread's a: warps by shuffles, then the BLOCK / 32
 * warp results by a fixed pairwise tree. */
template <typename Op> static __device__ typename Op::acc block_combine(typename Op::acc a)
{
    __shared__ typename Op::acc warp_acc[BLOCK / 32];
    for (int d = 16; d > 0; d /= 2) a = Op::combine(a, shfl_down(a, d));
    if (threadIdx.x % 32 == 0) warp_acc[threadIdx.x / 32] = a;
    __syncthreads();
    if (threadIdx.x < 32) {
        a = threadIdx.x < BLOCK / 32 ? warp_acc[threadIdx.x] : Op::identity();
        for (int d = BLOCK / 64; d > 0; d /= 2) a = Op::combine(a, shfl_down(a, d));
    }
    return a;
}

/* Rows (inner = 1) longer than GROUP_MAX_LEN, in tiles of ROW_TILE values (UNROLL 16-byte loads
 * a thread) dealt to the row's `splits` blocks in turn: block b of row b / splits takes tiles
 * b % splits, + splits, ... (the blocks running together sweep the row side by side: a
 * contiguous range a block reads slower). One block a row: the result; else its partial, for
 * reduce_finish_kernel. */
template <typename Op>
static __global__ void __launch_bounds__(BLOCK)
    axis_row_tiles_kernel(const typename Op::value *in, size_t len, size_t splits, void *out, typename Op::acc *partials,
                          size_t lanes, bool mean)
{
    const size_t lane = blockIdx.x / splits, s = blockIdx.x % splits;
    const typename Op::value *row = in + lane * len;
    typename Op::acc a = Op::identity();
    for (size_t first = s * ROW_TILE; first < len; first += splits * ROW_TILE)
        add_range<Op>(a, row + first, len - first < ROW_TILE ? len - first : ROW_TILE, (long long)first, threadIdx.x, BLOCK);
    a = block_combine<Op>(a);
    if (threadIdx.x != 0) return;
    if (splits == 1) Op::store(out, lane, a, len, mean);
    else partials[s * lanes + lane] = a;
}

template <typename T, int V> struct column_values {
    T v[V];
};

/* V neighbouring values from p: a vec4 (V = 4, p on a 16-byte boundary: one 16-byte load, two
 * for 8-byte values), a vec2 (V = 2, p on a boundary of its size) or one value. */
template <typename T, int V> static __device__ __forceinline__ column_values<T, V> load_columns(const T *p)
{
    column_values<T, V> x;
    if constexpr (V == 4) {
        const typename vec4<T>::type q = load_vec(reinterpret_cast<const typename vec4<T>::type *>(p));
        x.v[0] = q.x, x.v[1] = q.y, x.v[2] = q.z, x.v[3] = q.w;
    } else if constexpr (V == 2) {
        const typename vec2<T>::type q = load_vec(reinterpret_cast<const typename vec2<T>::type *>(p));
        x.v[0] = q.x, x.v[1] = q.y;
    } else {
        x.v[0] = __ldg(p);
    }
    return x;
}

/* Columns (inner > 1), V = 4 (inner a multiple of 4, in on a 16-byte boundary: 16-byte loads of
 * four columns), 2 (8-byte loads of two) or 1. Block b: column tile b % tiles (cb column groups
 * of V), outer index b / (tiles * splits), and of the axis the row tiles (UNROLL x rb rows)
 * dealt to it in turn,
 * (b / tiles) % splits, + splits, ... Thread t walks rows t / cb, + rb, ... in column group
 * t % cb, UNROLL rows in flight; the rb partial results of a column meet in a fixed pairwise
 * tree in shared memory. */
template <typename Op, int V>
static __global__ void __launch_bounds__(BLOCK)
    axis_columns_kernel(const typename Op::value *in, size_t len, size_t inner, unsigned cb, unsigned rb, size_t tiles,
                        size_t splits, void *out, typename Op::acc *partials, size_t lanes, bool mean)
{
    typedef typename Op::value T;
    typedef typename Op::acc A;
    __shared__ A tree[V][BLOCK];
    const size_t tile = blockIdx.x % tiles, s = blockIdx.x / tiles % splits, o = blockIdx.x / tiles / splits;
    const unsigned r = threadIdx.x / cb, c = threadIdx.x % cb;
    const size_t col = (tile * cb + c) * V, tile_rows = (size_t)UNROLL * rb;
    A a[V];
#pragma unroll
    for (int j = 0; j < V; ++j) a[j] = Op::identity();
    if (r < rb && col < inner) {
        const T *p = in + o * len * inner + col;
        for (size_t base = s * tile_rows; base < len; base += splits * tile_rows) {
            const size_t l = base + r;
            if (base + tile_rows <= len) {
                column_values<T, V> x[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) x[u] = load_columns<T, V>(p + (l + u * rb) * inner);
#pragma unroll
                for (int u = 0; u < UNROLL; ++u)
#pragma unroll
                    for (int j = 0; j < V; ++j) Op::add(a[j], x[u].v[j], (long long)(l + u * rb));
            } else {
                for (size_t q = l; q < len; q += rb) {
                    const column_values<T, V> x = load_columns<T, V>(p + q * inner);
#pragma unroll
                    for (int j = 0; j < V; ++j) Op::add(a[j], x.v[j], (long long)q);
                }
            }
        }
    }
#pragma unroll
    for (int j = 0; j < V; ++j) tree[j][threadIdx.x] = a[j];
    __syncthreads();
    unsigned w = 1;
    while (w < rb) w *= 2;
    for (w /= 2; w > 0; w /= 2) {
        if (r < w && r + w < rb)
#pragma unroll
            for (int j = 0; j < V; ++j)
                tree[j][threadIdx.x] = Op::combine(tree[j][threadIdx.x], tree[j][threadIdx.x + w * cb]);
        __syncthreads();
    }
    if (r != 0 || col >= inner) return;
#pragma unroll
    for (int j = 0; j < V; ++j) {
        const size_t lane = o * inner + col + j;
        if (splits == 1) Op::store(out, lane, tree[j][c], len, mean);
        else partials[s * lanes + lane] = tree[j][c];
    }
}

/* Few lanes, many splits: a block a lane, thread t combining partials t, t + BLOCK, ... in
 * order, then the block's fixed tree. */
template <typename Op>
static __global__ void __launch_bounds__(BLOCK)
    reduce_finish_blocks_kernel(const typename Op::acc *partials, size_t splits, size_t lanes, size_t len, void *out,
                                bool mean)
{
    const size_t lane = blockIdx.x;
    typename Op::acc a = Op::identity();
    for (size_t s = threadIdx.x; s < splits; s += BLOCK) a = Op::combine(a, partials[s * lanes + lane]);
    a = block_combine<Op>(a);
    if (threadIdx.x == 0) Op::store(out, lane, a, len, mean);
}

/* A thread a lane, its partials combined in split order. The loads go out FINISH_BATCH at a
 * time before any is combined: the extremes' combine branches on NaN, and loads issued one per
 * branch would each wait out the memory's latency (a 16384-column max has 33 splits).
 * splits = 0 (an empty axis): the identity's result, 0 for sums and NaN for means. */
enum { FINISH_BATCH = 8 };
template <typename Op>
static __global__ void __launch_bounds__(BLOCK)
    reduce_finish_kernel(const typename Op::acc *partials, size_t splits, size_t lanes, size_t len, void *out, bool mean)
{
    typedef typename Op::acc A;
    for (size_t lane = (size_t)blockIdx.x * BLOCK + threadIdx.x; lane < lanes; lane += (size_t)gridDim.x * BLOCK) {
        A a = splits ? partials[lane] : Op::identity();
        for (size_t s = 1; s < splits; s += FINISH_BATCH) {
            A x[FINISH_BATCH];
#pragma unroll
            for (int u = 0; u < FINISH_BATCH; ++u) x[u] = s + u < splits ? partials[(s + u) * lanes + lane] : a;
#pragma unroll
            for (int u = 0; u < FINISH_BATCH; ++u)
                if (s + u < splits) a = Op::combine(a, x[u]);
        }
        Op::store(out, lane, a, len, mean);
    }
}

/* ---- plans ------------------------------------------------------------------------------ */

/* How `axis` cuts a problem: the kernel, its blocks, and the blocks that share an axis. */
typedef enum { PLAN_ROW_GROUPS, PLAN_ROW_TILES, PLAN_COLUMNS } plan_kind;
typedef struct axis_plan {
    plan_kind kind;
    int group;        /* PLAN_ROW_GROUPS: threads a row */
    int v;            /* PLAN_COLUMNS: columns a thread (4, 2 or 1) */
    unsigned cb, rb;  /* PLAN_COLUMNS: column groups and rows of a block's tile */
    size_t tiles;     /* PLAN_COLUMNS: column tiles of one outer index */
    size_t splits;    /* blocks sharing one lane's (or one column tile's) axis */
    size_t blocks;
} axis_plan;

/* Blocks that fill the GPU twice over: where there are fewer, blocks share an axis. */
static size_t wanted_blocks(const mh_context *ctx) { return 2 * 8 * mh_sm_count(ctx); }

/* Blocks to share an axis of `tiles` tiles when `blocks` blocks are too few to fill the GPU. */
static size_t splits_for(const mh_context *ctx, size_t blocks, size_t tiles)
{
    const size_t want = wanted_blocks(ctx), splits = blocks < want ? mh_ceil_div(want, blocks) : 1;
    return splits < tiles ? splits : tiles ? tiles : 1;
}

static axis_plan plan_of(const mh_context *ctx, const mh_reduce_args *a)
{
    axis_plan p = {};
    const size_t lanes = a->outer * a->inner;
    if (a->inner == 1 && a->len <= GROUP_MAX_LEN) {
        p.kind = PLAN_ROW_GROUPS;
        p.group = a->len <= 32 ? 1 : a->len <= 256 ? 8 : 32;
        p.splits = 1;
        p.blocks = mh_ceil_div(lanes, BLOCK / p.group);
        const size_t most = 64 * wanted_blocks(ctx);
        if (p.blocks > most) p.blocks = most;
        return p;
    }
    if (a->inner == 1) {
        p.kind = PLAN_ROW_TILES;
        p.splits = splits_for(ctx, lanes, mh_ceil_div(a->len, ROW_TILE));
        p.blocks = lanes * p.splits; /* may pass the grid's limit: axis_supports checks */
        return p;
    }
    p.kind = PLAN_COLUMNS;
    /* the arg forms keep a (value, index) pair a column: two columns a thread, not four, hold
     * their registers where four cost occupancy */
    const int arg = a->kind == MH_REDUCE_ARGMIN || a->kind == MH_REDUCE_ARGMAX;
    const size_t size = mh_dtype_size(a->dtype); /* a pair's load is on a boundary of its size */
    p.v = !arg && a->inner % 4 == 0 && mh_aligned16(a->in) ? 4 : a->inner % 2 == 0 && (uintptr_t)a->in % (2 * size) == 0 ? 2 : 1;
    const size_t groups = mh_ceil_div(a->inner, (size_t)p.v);
    p.cb = groups < 64 ? (unsigned)groups : 64;
    p.rb = BLOCK / p.cb;
    p.tiles = mh_ceil_div(groups, p.cb);
    p.splits = splits_for(ctx, a->outer * p.tiles, mh_ceil_div(a->len, (size_t)UNROLL * p.rb * 4));
    p.blocks = a->outer * p.tiles * p.splits;
    return p;
}

/* ---- launch ----------------------------------------------------------------------------- */

static bool is_mean(const mh_reduce_args *a) { return a->kind == MH_REDUCE_MEAN; }

template <typename Op> static mh_status launch_finish(mh_context *ctx, const mh_reduce_args *a, const void *partials, size_t splits)
{
    const size_t lanes = a->outer * a->inner, blocks = mh_ceil_div(lanes, BLOCK);
    if (lanes < wanted_blocks(ctx) && splits >= BLOCK) {
        reduce_finish_blocks_kernel<Op><<<(unsigned)lanes, BLOCK, 0, mh_stream(ctx)>>>(
            (const typename Op::acc *)partials, splits, lanes, a->len, a->out, is_mean(a));
        return MH_LAUNCH_CHECK(ctx, "reduce_finish_blocks_kernel");
    }
    reduce_finish_kernel<Op><<<(unsigned)(blocks < 65536 ? blocks : 65536), BLOCK, 0, mh_stream(ctx)>>>(
        (const typename Op::acc *)partials, splits, lanes, a->len, a->out, is_mean(a));
    return MH_LAUNCH_CHECK(ctx, "reduce_finish_kernel");
}

template <typename Op> static mh_status launch_axis(mh_context *ctx, const mh_reduce_args *a, const axis_plan &p)
{
    typedef typename Op::value T;
    typedef typename Op::acc A;
    const T *in = (const T *)a->in;
    const size_t lanes = a->outer * a->inner;
    A *partials = NULL;
    if (p.splits > 1) {
        void *ws = NULL;
        MH_TRY(mh_workspace(ctx, p.splits * lanes * sizeof(A), &ws));
        partials = (A *)ws;
    }
    const cudaStream_t st = mh_stream(ctx);
    const unsigned grid = (unsigned)p.blocks;
    switch (p.kind) {
    case PLAN_ROW_GROUPS:
        if (p.group == 1) axis_row_groups_kernel<Op, 1><<<grid, BLOCK, 0, st>>>(in, a->len, lanes, a->out, is_mean(a));
        else if (p.group == 8) axis_row_groups_kernel<Op, 8><<<grid, BLOCK, 0, st>>>(in, a->len, lanes, a->out, is_mean(a));
        else axis_row_groups_kernel<Op, 32><<<grid, BLOCK, 0, st>>>(in, a->len, lanes, a->out, is_mean(a));
        return MH_LAUNCH_CHECK(ctx, "axis_row_groups_kernel");
    case PLAN_ROW_TILES:
        axis_row_tiles_kernel<Op><<<grid, BLOCK, 0, st>>>(in, a->len, p.splits, a->out, partials, lanes, is_mean(a));
        MH_TRY(MH_LAUNCH_CHECK(ctx, "axis_row_tiles_kernel"));
        break;
    default:
        if (p.v == 4)
            axis_columns_kernel<Op, 4><<<grid, BLOCK, 0, st>>>(in, a->len, a->inner, p.cb, p.rb, p.tiles, p.splits,
                                                              a->out, partials, lanes, is_mean(a));
        else if (p.v == 2)
            axis_columns_kernel<Op, 2><<<grid, BLOCK, 0, st>>>(in, a->len, a->inner, p.cb, p.rb, p.tiles, p.splits,
                                                              a->out, partials, lanes, is_mean(a));
        else
            axis_columns_kernel<Op, 1><<<grid, BLOCK, 0, st>>>(in, a->len, a->inner, p.cb, p.rb, p.tiles, p.splits,
                                                              a->out, partials, lanes, is_mean(a));
        MH_TRY(MH_LAUNCH_CHECK(ctx, "axis_columns_kernel"));
    }
    return p.splits > 1 ? launch_finish<Op>(ctx, a, partials, p.splits) : MH_OK;
}

template <typename Op> static mh_status launch_naive(mh_context *ctx, const mh_reduce_args *a)
{
    const size_t lanes = a->outer * a->inner, blocks = mh_resident_blocks(ctx, lanes, BLOCK);
    axis_naive_kernel<Op><<<(unsigned)blocks, BLOCK, 0, mh_stream(ctx)>>>((const typename Op::value *)a->in, a->len,
                                                                          a->inner, lanes, a->out, is_mean(a));
    return MH_LAUNCH_CHECK(ctx, "axis_naive_kernel");
}

/* ---- the dtypes by translation unit --------------------------------------------------------
 * Each dtype's kernels (every kind, plan and vector width) are built in one unit: this one the
 * four CUB's row takes (float32, float64, int32, int64) and the host code; reduce_axis_narrow.cu
 * the 8- and 16-bit integers and reduce_axis_unsigned.cu uint32 and uint64, which include this
 * file with MH_REDUCE_AXIS_UNIT set to 1 or 2 (one unit of all ten compiled for ~60 s, the
 * library's critical path). */
enum reduce_job { JOB_NAIVE, JOB_AXIS, JOB_FINISH };

template <typename T>
static mh_status run_job(mh_context *ctx, const mh_reduce_args *a, reduce_job job, const void *partials, size_t splits)
{
    return with_reduce_op_of<T>(a->kind, [&](auto op) {
        typedef decltype(op) Op;
        if (job == JOB_NAIVE) return launch_naive<Op>(ctx, a);
        if (job == JOB_FINISH) return launch_finish<Op>(ctx, a, partials, splits);
        return launch_axis<Op>(ctx, a, plan_of(ctx, a));
    });
}

mh_status mh_reduce_axis_narrow_job(mh_context *ctx, const mh_reduce_args *a, int job, const void *partials,
                                    size_t splits);
mh_status mh_reduce_axis_unsigned_job(mh_context *ctx, const mh_reduce_args *a, int job, const void *partials,
                                      size_t splits);
#if MH_REDUCE_AXIS_UNIT == 1
mh_status mh_reduce_axis_narrow_job(mh_context *ctx, const mh_reduce_args *a, int job, const void *partials, size_t splits)
{
    const reduce_job j = (reduce_job)job;
    switch (a->dtype) {
    case MH_I8: return run_job<signed char>(ctx, a, j, partials, splits);
    case MH_U8: return run_job<unsigned char>(ctx, a, j, partials, splits);
    case MH_I16: return run_job<short>(ctx, a, j, partials, splits);
    default: return run_job<unsigned short>(ctx, a, j, partials, splits);
    }
}
#elif MH_REDUCE_AXIS_UNIT == 2
mh_status mh_reduce_axis_unsigned_job(mh_context *ctx, const mh_reduce_args *a, int job, const void *partials,
                                      size_t splits)
{
    const reduce_job j = (reduce_job)job;
    return a->dtype == MH_U32 ? run_job<unsigned>(ctx, a, j, partials, splits)
                              : run_job<unsigned long long>(ctx, a, j, partials, splits);
}
#else
static mh_status reduce_job_of(mh_context *ctx, const mh_reduce_args *a, reduce_job job, const void *partials = NULL,
                               size_t splits = 0)
{
    switch (a->dtype) {
    case MH_F32: return run_job<float>(ctx, a, job, partials, splits);
    case MH_F64: return run_job<double>(ctx, a, job, partials, splits);
    case MH_I32: return run_job<int>(ctx, a, job, partials, splits);
    case MH_I64: return run_job<long long>(ctx, a, job, partials, splits);
    case MH_U32:
    case MH_U64: return mh_reduce_axis_unsigned_job(ctx, a, job, partials, splits);
    default: return mh_reduce_axis_narrow_job(ctx, a, job, partials, splits);
    }
}

mh_status mh_reduce_finish(mh_context *ctx, const mh_reduce_args *a, const void *partials, size_t splits)
{
    return reduce_job_of(ctx, a, JOB_FINISH, partials, splits);
}

static mh_status axis_run(mh_context *ctx, const mh_args *x)
{
    const mh_reduce_args *a = &x->reduce;
    if (a->outer * a->inner == 0) return MH_OK;
    if (a->len == 0) return mh_reduce_finish(ctx, a, NULL, 0); /* sums 0, means NaN */
    return reduce_job_of(ctx, a, JOB_AXIS);
}

static mh_status naive_run(mh_context *ctx, const mh_args *x)
{
    const mh_reduce_args *a = &x->reduce;
    if (a->outer * a->inner == 0) return MH_OK;
    return reduce_job_of(ctx, a, JOB_NAIVE);
}

/* A thread a lane: with fewer lanes than a warp per SM, a few threads would walk whole axes
 * alone (the 2^28-value sum: one thread, ~a minute); axis takes those. */
static int naive_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    const mh_reduce_args *a = &x->reduce;
    const size_t lanes = a->outer * a->inner, fewest = 32 * mh_sm_count(ctx);
    if (lanes >= fewest || a->len <= 4096) return 1;
    snprintf(why, len, "%zu results of %zu values each: a thread a result leaves the GPU idle below %zu results (axis "
             "takes it)", lanes, a->len, fewest);
    return 0;
}

static int axis_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    const mh_reduce_args *a = &x->reduce;
    if (a->len == 0 || a->outer * a->inner == 0) return 1;
    if (plan_of(ctx, a).blocks <= MH_MAX_GRID_X) return 1;
    snprintf(why, len, "%zu x %zu x %zu needs more than 2^31-1 blocks", a->outer, a->len, a->inner);
    return 0;
}

static const mh_row rows[] = {
    {{"reduce/axis-naive", MH_OP_REDUCE, MH_BACKEND_CUDA, 8, "global", "ours",
      "a thread per result, reading down its axis"},
     naive_supports, naive_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_ANY_REDUCTION},
    {{"reduce/axis", MH_OP_REDUCE, MH_BACKEND_CUDA, 9, "global+registers+shuffle+shared", "ours",
      "rows by thread groups or blocks, columns by tiles, 16-byte loads, a fixed order"},
     axis_supports, axis_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_ANY_REDUCTION},
};

MH_ROW_GROUP(mh_reduce_axis_rows, rows)
#endif

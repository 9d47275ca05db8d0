/* conv2d/walk: ours, for 3 x 3 and 5 x 5 filters, where conv2d is a copy with a little
 * arithmetic and every byte of staging costs, and for 7 x 7 ones (float32 5 x 5 and 7 x 7:
 * strips streamed, below).
 *
 * regtile and stream stage the input in shared memory and wait on barriers; at K = 3 both
 * stop near 89% of the copy ceiling. Here there is no shared memory and no barrier: each
 * thread owns 4 adjacent output columns of a strip of R rows. It loads the float4 of input
 * under those columns for every input row the strip needs (R + K - 1 of them, all issued
 * before the first is used, so a warp has R + K - 1 16-byte loads in flight), takes the
 * up to 4 columns on either side from its neighbouring lanes by shuffle (lanes 0 and 31
 * load theirs), and stores each output row as one float4: a warp reads and writes whole
 * 512-byte runs of a row. The halo rows are read again by the strip below: (K - 1) / R more
 * L2 reads, from L2.
 *
 * K and the column anchor LPC are compile-time, so every window index folds into a
 * register; the row anchor stays a run-time offset.
 *
 * A stack of images runs in one launch (blockIdx.z is the image).
 *
 * Boundary modes (mh_conv2d_mode): the kernel pads with zeros, which is right for every output
 * whose window lies inside the image; a second kernel then recomputes the ring of outputs whose
 * window meets the border (K - 1 rows and columns an image at most), mapping each index by the
 * mode, in the same order of operations. On a small image (the rules' walk_one_kernel_max_outputs), where a
 * call's cost is its launches, that second kernel alone computes every output. The walking
 * kernel keeps its registers: a mapping in its loads slowed zero-padded 3 x 3 from 0.185 to
 * 0.244 ms on the H100, and a second bordered instance of it ran 5 x 5 at 0.36-0.38 ms (its 120
 * registers and the mapping's). */
#include "common.cuh"
#include "conv2d_window.cuh"
#include "typed4.cuh"
#include "const_ring.h"
#include "../core/border.h"

#include <stdio.h>

enum { WARPS = 4, LANES = 32, BLOCK_COLS = WARPS * LANES * 4 };

struct walk_params {
    const float *in, *filter; /* TYPED instances: in holds in_type elements, out out_type ones */
    float *out;
    size_t rows, cols, out_rows, out_cols;
    int lpr;
    int vec_in, vec_out; /* rows of in / out start aligned to 4 elements: groups of 4 move as one access */
    int in_type, out_type, in_bytes, out_bytes;
    int reversed; /* mh_conv2d_mode_reversed: the filter read from its end (no reversed copy made) */
};

/* Tap t of a K x K filter: reversing it along both axes is reading its K * K values from the end. */
template <int K>
static __device__ __forceinline__ float walk_tap(const walk_params &p, int t)
{
    return __ldg(p.filter + (p.reversed ? K * K - 1 - t : t));
}

/* in[y][x .. x + 3], zero outside the image; x is a multiple of 4. */
static __device__ __forceinline__ float4 load4(const walk_params &p, long long y, long long x)
{
    if (y < 0 || y >= (long long)p.rows || x + 4 <= 0 || x >= (long long)p.cols) return make_float4(0.f, 0.f, 0.f, 0.f);
    const float *src = p.in + (size_t)y * p.cols + x;
    if (p.vec_in && x >= 0 && x + 4 <= (long long)p.cols) return __ldg(reinterpret_cast<const float4 *>(src));
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = x + e >= 0 && x + e < (long long)p.cols ? __ldg(src + e) : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

static __device__ __forceinline__ void store4(const walk_params &p, size_t y, size_t x, const float *v)
{
    float *dst = p.out + y * p.out_cols + x;
    if (p.vec_out && x + 4 <= p.out_cols) {
        /* __stcs (streaming: the output is not read again here): a plain float4 assignment
         * was merged with the element-wise stores below into four 4-byte stores */
        __stcs(reinterpret_cast<float4 *>(dst), make_float4(v[0], v[1], v[2], v[3]));
        return;
    }
#pragma unroll
    for (int e = 0; e < 4; ++e)
        if (x + e < p.out_cols) dst[e] = v[e];
}

/* ---- typed images (mh_conv2d_typed): the TYPED instances' loads and stores ---- */

/* in[y][x .. x + 3] is one aligned group inside the image: one load of 4, 8 or 16 bytes. */
static __device__ __forceinline__ bool whole_group(const walk_params &p, long long y, long long x)
{
    return p.vec_in && y >= 0 && y < (long long)p.rows && x >= 0 && x + 4 <= (long long)p.cols;
}

static __device__ __forceinline__ float4 unpacked(uint4 bits, int type)
{
    float v[4];
    unpack4(bits, type, v);
    return make_float4(v[0], v[1], v[2], v[3]);
}

/* in[y][x .. x + 3] of a typed image as float32, zero outside, element by element (the groups
 * at the edges, or rows that are not aligned). Inlined: as a call, the registers live across it
 * took the TYPED kernels from 96 to 142 registers (3 x 3) with an 88-byte stack frame. */
static __device__ __forceinline__ float4 load4_typed_edge(const walk_params &p, long long y, long long x)
{
    float v[4] = {0.f, 0.f, 0.f, 0.f};
    if (y >= 0 && y < (long long)p.rows)
        for (int e = 0; e < 4; ++e)
            if (x + e >= 0 && x + e < (long long)p.cols)
                v[e] = mh_load_value(p.in, (size_t)y * p.cols + (size_t)(x + e), (mh_dtype)p.in_type);
    return make_float4(v[0], v[1], v[2], v[3]);
}

static __device__ __forceinline__ float4 load4_typed(const walk_params &p, long long y, long long x)
{
    if (!whole_group(p, y, x)) return load4_typed_edge(p, y, x);
    return unpacked(load4_raw(p.in, y * (long long)p.cols + x, p.in_type), p.in_type);
}

/* out[y][x .. x + 3] = v cast into out_type (scipy's store), inside the output. */
static __device__ __forceinline__ void store4_cast(const walk_params &p, size_t y, size_t x, const float *v)
{
    float c[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) c[e] = mh_cast_value(v[e], (mh_dtype)p.out_type);
    const size_t i = y * p.out_cols + x;
    if (p.vec_out && x + 4 <= p.out_cols) {
        store4_typed(p.out, (long long)i, p.out_type, c);
        return;
    }
    for (int e = 0; e < 4; ++e)
        if (x + e < p.out_cols) mh_store_value(p.out, i + e, (mh_dtype)p.out_type, c[e]);
}

template <bool TYPED>
static __device__ __forceinline__ float4 load4_any(const walk_params &p, long long y, long long x)
{
    return TYPED ? load4_typed(p, y, x) : load4(p, y, x);
}

static __device__ __forceinline__ float4 shfl4(float4 v, int src_lane)
{
    v.x = __shfl_sync(0xffffffffu, v.x, src_lane), v.y = __shfl_sync(0xffffffffu, v.y, src_lane);
    v.z = __shfl_sync(0xffffffffu, v.z, src_lane), v.w = __shfl_sync(0xffffffffu, v.w, src_lane);
    return v;
}

/* Input columns x0 - 4 .. x0 + 7 of one row: the left neighbour's float4, ours, the right's. */
struct window12 {
    float v[12];
};

template <bool TYPED>
static __device__ __forceinline__ window12 widen(const walk_params &p, float4 mine, long long y, long long x0, int lane,
                                                 bool need_left, bool need_right)
{
    float4 left = shfl4(mine, (lane + LANES - 1) % LANES), right = shfl4(mine, (lane + 1) % LANES);
    if (need_left && lane == 0) left = load4_any<TYPED>(p, y, x0 - 4);
    if (need_right && lane == LANES - 1) right = load4_any<TYPED>(p, y, x0 + 4);
    window12 w = {{left.x, left.y, left.z, left.w, mine.x, mine.y, mine.z, mine.w, right.x, right.y, right.z, right.w}};
    return w;
}

/* TYPED: in and out are typed images (mh_conv2d_typed), converted as they are loaded and
 * stored; the float32 instances keep their code. */
template <int K, int LPC, int R, bool TYPED>
static __global__ void __launch_bounds__(WARPS *LANES) conv2d_walk_kernel(walk_params p)
{
    static_assert(LPC <= 4 && K - 1 - LPC <= 4, "the window reaches one float4 to each side");
    constexpr int NR = R + K - 1;
    mh_let_next_grid_start(); /* the ring's kernel (walk_run) reads only the input before it waits */
    const int lane = threadIdx.x % LANES, warp = threadIdx.x / LANES;
    /* the block's warps: WARPS, or fewer on a narrow row (launch_walk); the first output column */
    const size_t ox = ((size_t)blockIdx.x * (blockDim.x / LANES) + warp) * (LANES * 4) + 4 * lane;
    const size_t oy0 = (size_t)blockIdx.y * R;
    const long long y0 = (long long)oy0 - p.lpr; /* the first input row */
    const long long x0 = (long long)ox;          /* input column of window index 4 (LPC folded below) */
    /* a stack: blockIdx.z is the image */
    p.in = (const float *)((const char *)p.in + (size_t)blockIdx.z * p.rows * p.cols * (TYPED ? p.in_bytes : 4));
    p.out = (float *)((char *)p.out + (size_t)blockIdx.z * p.out_rows * p.out_cols * (TYPED ? p.out_bytes : 4));

    float4 raw[NR];
    if (TYPED) { /* every load issued before the first is unpacked */
        uint4 bits[NR];
#pragma unroll
        for (int t = 0; t < NR; ++t)
            if (whole_group(p, y0 + t, x0)) bits[t] = load4_raw(p.in, (y0 + t) * (long long)p.cols + x0, p.in_type);
#pragma unroll
        for (int t = 0; t < NR; ++t)
            raw[t] = whole_group(p, y0 + t, x0) ? unpacked(bits[t], p.in_type) : load4_typed_edge(p, y0 + t, x0);
    } else {
#pragma unroll
        for (int t = 0; t < NR; ++t) raw[t] = load4(p, y0 + t, x0);
    }

    float f[K * K];
#pragma unroll
    for (int t = 0; t < K * K; ++t) f[t] = walk_tap<K>(p, t);

    window12 w[NR];
#pragma unroll
    for (int t = 0; t < NR; ++t) w[t] = widen<TYPED>(p, raw[t], y0 + t, x0, lane, LPC > 0, K - 1 - LPC > 0);

#pragma unroll
    for (int r = 0; r < R; ++r) {
        if (oy0 + r >= p.out_rows || ox >= p.out_cols) break;
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int i = 0; i < K; ++i)
#pragma unroll
            for (int j = 0; j < K; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[q] = fmaf(w[r + i].v[4 + q - LPC + j], f[i * K + j], acc[q]);
        if (TYPED) store4_cast(p, oy0 + r, ox, acc);
        else store4(p, oy0 + r, ox, acc);
    }
}

/* ---- 5 x 5 and 7 x 7 on float32: strips streamed through registers ---------------------------- *
 *
 * From 5 x 5 the arithmetic (25 and 49 FMAs an output) is no longer small beside the copy, and the
 * kernel above costs three ways: its filter takes K^2 registers, its R + K - 1 input rows an R-row
 * strip are all loaded before the first is used (the warp waits on them, then computes, then
 * stores), and the first and last K - 1 rows feed accumulators of outputs outside the strip. Here
 * a thread streams a strip of K - 1 + K GROUPS output rows: input row t is shuffled into its
 * 12-column window, feeds the K outputs t - K + 1 .. t it touches (K accumulators, slot o mod K for
 * output o), and output t - K + 1, now complete, is stored. Rows arrive K rows ahead in a ring of
 * registers (row t in ring[t mod K]), and the strip's first and last K - 1 rows only feed the
 * outputs inside it. The loop walks groups of K rows, so every ring index and accumulator slot is
 * a compile-time constant. (Unrolled whole, the 7 x 7 strip's code ran 2.9x slower on the H100;
 * the loop keeps it in the instruction cache, at the cost of the taps held in registers across
 * it.) A 7 x 7 filter is read from constant memory as an operand (a slot of a mh_const_ring, the
 * slot compiled in, so each tap is an immediate address: 49 registers less); a 5 x 5 one is
 * loaded into 25 registers once a thread, so that its calls copy nothing into constant memory (a
 * copy, an event and a wait on the host, a launch of the everyday call's size).
 *
 * The columns either side of a warp's 128 (lanes 0 and 31 need up to 4 each) arrive once a group:
 * lane u < K loads the float4 left of the warp in the group's row u, lane 16 + u the one right of
 * it, and one shuffle a row hands them to lanes 0 and 31.
 *
 * On an image whose rows are aligned for 16-byte access a load or store is one predicate on its row
 * and column, so the strips along the edges run the same code; other images take the checked
 * loads and stores of the kernel above. (Checked loads for the edge strips alone, in a kernel of
 * aligned interior strips, cost 7 x 7 at 8192^2 0.30 ms against 0.23 on the H100: a block waits
 * for its slowest warp.) */
static __constant__ float c_walk7[MH_CONST_RING_SLOTS][7 * 7];

static mh_const_ring walk7_ring = {PTHREAD_MUTEX_INITIALIZER, c_walk7, 7 * 7 * sizeof(float), {0}, {{0}}};

/* Groups of K rows a strip: 34 output rows at 7 x 7 and 29 at 5 x 5 (40 and 33 input rows). */
template <int K>
struct strip_shape {
    static constexpr int GROUPS = K == 7 ? 4 : 5;
    static constexpr int ROWS = K - 1 + K * GROUPS; /* output rows a strip */
};
enum { TAPS_IN_REGISTERS = -1 };

/* SLOT: the constant-memory slot holding the K x K taps (7 x 7), or TAPS_IN_REGISTERS (5 x 5).
 * ALIGNED: every row of the image and of the output starts on 16 bytes and holds a multiple of 4
 * floats, so a float4 is wholly inside or wholly outside; a load or store is then one predicate on
 * its row and column. Else each goes through load4 and store4. */
template <int K, int LPC, int SLOT, bool ALIGNED>
struct walk_strip {
    static_assert(LPC <= 4 && K - 1 - LPC <= 4, "the window reaches one float4 to each side");
    static_assert(SLOT == TAPS_IN_REGISTERS || K == 7, "constant memory holds 7 x 7 taps");
    static constexpr int GROUPS = strip_shape<K>::GROUPS, ROWS = strip_shape<K>::ROWS;
    const walk_params &p;
    int lane;
    long long y0, xw, ox; /* first input row, the warp's and the thread's first column */
    size_t oy0;           /* first output row */
    float4 ring[K];       /* input row t in ring[t % K] */
    float4 edge, next_edge; /* lane u < K: left of the warp in the group's row u; lane 16 + u: right */
    float acc[K][4];      /* output o's 4 columns in acc[o % K] */
    float f[SLOT == TAPS_IN_REGISTERS ? K * K : 1];

    __device__ __forceinline__ walk_strip(const walk_params &params, int lane_, long long xw_, size_t oy0_)
        : p(params), lane(lane_), y0((long long)oy0_ - params.lpr), xw(xw_), ox(xw_ + 4 * lane_), oy0(oy0_)
    {
    }

    __device__ __forceinline__ float tap(int i, int j) const
    {
        if constexpr (SLOT == TAPS_IN_REGISTERS) return f[i * K + j];
        else return c_walk7[SLOT][i * K + j];
    }

    __device__ __forceinline__ float4 load_at(long long y, long long x) const
    {
        if (!ALIGNED) return load4(p, y, x);
        if ((unsigned long long)y >= p.rows || (unsigned long long)x >= p.cols) return make_float4(0.f, 0.f, 0.f, 0.f);
        return __ldg(reinterpret_cast<const float4 *>(p.in + (size_t)y * p.cols + (size_t)x));
    }

    __device__ __forceinline__ float4 load_row(int t) const { return load_at(y0 + t, ox); }

    /* the edges of rows first .. first + count - 1 */
    __device__ __forceinline__ float4 load_edges(int first, int count) const
    {
        const int u = lane & 15;
        if (u >= count) return make_float4(0.f, 0.f, 0.f, 0.f);
        return load_at(y0 + first + u, lane < 16 ? xw - 4 : xw + LANES * 4);
    }

    __device__ __forceinline__ void store_row(size_t o, const float *v) const
    {
        if (oy0 + o >= p.out_rows || (size_t)ox >= p.out_cols) return;
        if (ALIGNED)
            __stcs(reinterpret_cast<float4 *>(p.out + (oy0 + o) * p.out_cols + ox), make_float4(v[0], v[1], v[2], v[3]));
        else
            store4(p, oy0 + o, (size_t)ox, v);
    }

    /* Input row t (t % K == T), the U-th of its group: filter rows FIRST .. LAST (those whose output
     * lies in the strip), then output t - K + 1 stored where LAST is K - 1; row t + K requested
     * where `ahead` holds. */
    template <int T, int U, int FIRST, int LAST>
    __device__ __forceinline__ void row(int t, bool ahead)
    {
        const float4 mine = ring[T];
        float4 left = shfl4(mine, (lane + LANES - 1) % LANES), right = shfl4(mine, (lane + 1) % LANES);
        const float4 e = shfl4(edge, lane == 0 ? U : 16 + U);
        if (lane == 0) left = e;
        if (lane == LANES - 1) right = e;
        const float w[12] = {left.x, left.y, left.z, left.w, mine.x, mine.y, mine.z, mine.w,
                             right.x, right.y, right.z, right.w};
        if (ahead) ring[T] = load_row(t + K);
#pragma unroll
        for (int i = FIRST; i <= LAST; ++i) {
            float *a = acc[(T - i + K) % K];
#pragma unroll
            for (int j = 0; j < K; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) a[q] = fmaf(w[4 + q - LPC + j], tap(i, j), a[q]);
        }
        if (LAST == K - 1) {
            float *done = acc[(T + 1) % K];
            store_row((size_t)(t - (K - 1)), done);
#pragma unroll
            for (int q = 0; q < 4; ++q) done[q] = 0.0f;
        }
    }

    /* rows 0 .. K - 2: output t - i is in the strip for i <= t */
    template <int U>
    __device__ __forceinline__ void head()
    {
        if constexpr (U < K - 1) {
            row<U, U, 0, U>(U, true);
            head<U + 1>();
        }
    }
    /* a group of K rows from t0 (t0 % K == K - 1): every filter row */
    template <int U>
    __device__ __forceinline__ void middle(int t0)
    {
        if constexpr (U < K) {
            row<(K - 1 + U) % K, U, 0, K - 1>(t0 + U, t0 + U + K < ROWS + K - 1);
            middle<U + 1>(t0);
        }
    }
    /* rows ROWS .. ROWS + K - 2: output t - i is in the strip for i >= t - ROWS + 1 */
    template <int U>
    __device__ __forceinline__ void tail()
    {
        if constexpr (U < K - 1) {
            row<(K - 1 + U) % K, U, U + 1, K - 1>(ROWS + U, false);
            tail<U + 1>();
        }
    }

    __device__ __forceinline__ void run()
    {
#pragma unroll
        for (int u = 0; u < K; ++u) ring[u] = load_row(u);
        if constexpr (SLOT == TAPS_IN_REGISTERS) {
#pragma unroll
            for (int t = 0; t < K * K; ++t) f[t] = walk_tap<K>(p, t);
        }
#pragma unroll
        for (int a = 0; a < K; ++a)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[a][q] = 0.0f;
        edge = load_edges(0, K - 1);
        next_edge = load_edges(K - 1, K);
        head<0>();
#pragma unroll 1
        for (int g = 0; g < GROUPS; ++g) {
            const int t0 = K - 1 + K * g;
            edge = next_edge;
            next_edge = load_edges(t0 + K, g + 1 < GROUPS ? K : K - 1);
            middle<0>(t0);
        }
        edge = next_edge;
        tail<0>();
    }
};

/* Images whose rows are not aligned, out of line, so that the aligned strips keep their own code
 * and registers (7 x 7: 154, three blocks an SM; 168 with both inlined). */
template <int K, int LPC, int SLOT>
static __device__ __noinline__ void walk_strip_unaligned(const walk_params p, int lane, long long xw, size_t oy0)
{
    walk_strip<K, LPC, SLOT, false>(p, lane, xw, oy0).run();
}

/* float32, K x K (5 or 7): blockIdx.x a group of up to 4 warps of 128 columns, blockIdx.y a strip
 * of strip_shape<K>::ROWS rows, blockIdx.z the image. */
template <int K, int LPC, int SLOT>
static __global__ void __launch_bounds__(WARPS *LANES, K == 7 ? 3 : 4) conv2d_walk_strip_kernel(walk_params p)
{
    mh_let_next_grid_start(); /* the ring's kernel (walk_run) reads only the input before it waits */
    const int lane = threadIdx.x % LANES, warp = threadIdx.x / LANES;
    p.in += (size_t)blockIdx.z * p.rows * p.cols;
    p.out += (size_t)blockIdx.z * p.out_rows * p.out_cols;
    const long long xw = (long long)((size_t)blockIdx.x * (blockDim.x / LANES) + warp) * (LANES * 4);
    const size_t oy0 = (size_t)blockIdx.y * strip_shape<K>::ROWS;
    if (p.vec_in && p.vec_out) walk_strip<K, LPC, SLOT, true>(p, lane, xw, oy0).run();
    else walk_strip_unaligned<K, LPC, SLOT>(p, lane, xw, oy0);
}

/* The outputs of an image whose window meets its border (mh_conv2d_mode: the output is the
 * image's size), as four regions: the top band, the bottom band, and between them the left and
 * right columns. Each region is cut into tiles of at most RING_TILE outputs, a block a tile: the
 * bands into tiles a few rows high and many columns wide (coalesced), the columns into tiles one
 * column group wide and many rows high. */
enum { RING_TILE = 256, RING_SIDE_MAX = 16, RING_WINDOW_MAX = 7 };
/* a tile's window in shared memory: (th + K - 1) x (tw + K - 1) values, th x tw <= RING_TILE */
enum { RING_STAGED = (1 + RING_WINDOW_MAX - 1) * (RING_TILE + RING_WINDOW_MAX - 1) };

struct ring_region {
    long long y0, x0, h, w; /* the region's outputs */
    long long th, tw;       /* a tile's outputs */
    long long across;       /* tiles a row of tiles */
    long long first;        /* the region's first tile (blockIdx.x) */
};

struct walk_ring {
    ring_region region[4];
    long long tiles; /* an image's */
    int lpc, mode;
    float cval;
};

#ifndef MH_WALK_TYPED_UNIT /* host code: conv2d_walk.cu's unit alone */
/* Tiles of at most RING_TILE outputs: a wide region's at most RING_SIDE_MAX rows high and as wide
 * as the rest allows, a tall one's the transpose. */
static ring_region region_of(long long y0, long long x0, long long h, long long w, long long first)
{
    ring_region r = {y0, x0, h, w, 1, 1, 0, first};
    if (h <= 0 || w <= 0) return r;
    if (h <= w) r.th = h < RING_SIDE_MAX ? h : RING_SIDE_MAX, r.tw = RING_TILE / r.th;
    else r.tw = w < RING_SIDE_MAX ? w : RING_SIDE_MAX, r.th = RING_TILE / r.tw;
    r.across = (w + r.tw - 1) / r.tw;
    return r;
}

static long long region_tiles(const ring_region &r)
{
    return r.h <= 0 || r.w <= 0 ? 0 : r.across * ((r.h + r.th - 1) / r.th);
}

/* The regions of bands `top` and `bottom` rows high and columns `left` and `right` wide. */
static walk_ring ring_with(const mh_conv2d_args *a, long long top, long long bottom, long long left, long long right)
{
    const long long rows = (long long)a->rows, cols = (long long)a->cols, mid = rows - top - bottom;
    const long long yx[4][4] = {{0, 0, top, cols}, {rows - bottom, 0, bottom, cols}, {top, 0, mid, left},
                                {top, cols - right, mid, right}};
    walk_ring g;
    g.tiles = 0;
    for (int r = 0; r < 4; ++r) {
        g.region[r] = region_of(yx[r][0], yx[r][1], yx[r][2], yx[r][3], g.tiles);
        g.tiles += region_tiles(g.region[r]);
    }
    g.lpc = a->lpc, g.mode = (int)a->mode, g.cval = a->cval;
    return g;
}

static walk_ring ring_of(const mh_conv2d_args *a)
{
    const long long rows = (long long)a->rows, cols = (long long)a->cols, k = a->krows;
    const long long top = a->lpr < rows ? a->lpr : rows, left = a->lpc < cols ? a->lpc : cols;
    const long long bottom = k - 1 - a->lpr < rows - top ? k - 1 - a->lpr : rows - top;
    const long long right = k - 1 - a->lpc < cols - left ? k - 1 - a->lpc : cols - left;
    return ring_with(a, top, bottom, left, right);
}

/* Every output of the image as the ring: the top band is the whole image. */
static walk_ring whole_image_of(const mh_conv2d_args *a)
{
    return ring_with(a, (long long)a->rows, 0, 0, 0);
}
#endif

/* Ring outputs a block a tile (walk_ring): the tile's window is mapped by the mode
 * (mh_border_index: its rows and columns once each) and staged in shared memory with the taps, so
 * that each input is read from global memory once a tile, not once a tap; then each output
 * is summed there in the walking kernel's order (filter rows, then columns, from 0), so that it
 * equals what the walking kernel computes for an image padded by the mode. The constant mode's
 * mapping gives -1 outside the image, where cval is staged. blockIdx.y is the image. TYPED: typed
 * images, each load converted and the sum cast as it is stored. */
template <int K, bool TYPED>
static __global__ void __launch_bounds__(RING_TILE) conv2d_walk_ring_kernel(const walk_params p, const walk_ring g)
{
    static_assert(K <= RING_WINDOW_MAX, "the staged window holds filters of up to RING_WINDOW_MAX taps a side");
    __shared__ float staged[RING_STAGED], taps[K * K];
    __shared__ long long row_at[RING_TILE + K], col_at[RING_TILE + K]; /* row offsets and columns, -1 outside */
    int r = 3;
    while ((long long)blockIdx.x < g.region[r].first) --r; /* a region of no tiles shares the next one's first */
    const ring_region &R = g.region[r];
    const long long t = (long long)blockIdx.x - R.first, ty = t / R.across;
    const long long y0 = R.y0 + ty * R.th, x0 = R.x0 + (t - ty * R.across) * R.tw;
    const int th = (int)min(R.th, R.y0 + R.h - y0), tw = (int)min(R.tw, R.x0 + R.w - x0);
    const int sh = th + K - 1, sw = tw + K - 1;
    const long long rows = (long long)p.rows, cols = (long long)p.cols;
    for (int i = threadIdx.x; i < sh + sw + K * K; i += blockDim.x) {
        if (i < sh) {
            const long long yy = mh_border_index(y0 + i - p.lpr, rows, g.mode);
            row_at[i] = yy < 0 ? -1 : yy * cols;
        } else if (i < sh + sw) {
            col_at[i - sh] = mh_border_index(x0 + (i - sh) - g.lpc, cols, g.mode);
        } else {
            taps[i - sh - sw] = walk_tap<K>(p, i - sh - sw);
        }
    }
    __syncthreads();
    const void *in = (const char *)p.in + (size_t)blockIdx.y * p.rows * p.cols * (TYPED ? p.in_bytes : 4);
    /* element e = i sw + j of the window, stepped by the block's size without a division a step */
    const int step_rows = blockDim.x / sw, step_cols = blockDim.x - step_rows * sw;
    for (int e = threadIdx.x, i = e / sw, j = e - i * sw; e < sh * sw; e += blockDim.x) {
        const long long row = row_at[i], xx = col_at[j];
        staged[e] = row < 0 || xx < 0 ? g.cval
                    : TYPED           ? mh_load_value(in, (size_t)(row + xx), (mh_dtype)p.in_type)
                                      : __ldg((const float *)in + (row + xx));
        i += step_rows, j += step_cols;
        if (j >= sw) ++i, j -= sw;
    }
    __syncthreads();
    if ((int)threadIdx.x >= th * tw) return;
    const int oy = threadIdx.x / tw, ox = threadIdx.x - oy * tw;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i)
#pragma unroll
        for (int j = 0; j < K; ++j) acc = fmaf(staged[(oy + i) * sw + ox + j], taps[i * K + j], acc);
    mh_wait_for_previous_grid(); /* the walking kernel's store of this output comes first */
    const size_t at = (size_t)(y0 + oy) * p.out_cols + (size_t)(x0 + ox);
    void *out = (char *)p.out + (size_t)blockIdx.y * p.out_rows * p.out_cols * (TYPED ? p.out_bytes : 4);
    if (TYPED) mh_store_value(out, at, (mh_dtype)p.out_type, mh_cast_value(acc, (mh_dtype)p.out_type));
    else ((float *)out)[at] = acc;
}

/* ---- instances, launch, registry ----------------------------------------------------------- */

typedef void (*kernel_fn)(walk_params);
typedef void (*ring_fn)(const walk_params, const walk_ring);

/* "r<output rows per thread>"; [0] is the default, the fastest on the H100 at 3 x 3 and
 * 5 x 5 (docs/conv2d.md): fewer rows hold fewer registers and leave room for more warps. In
 * [0], float32 5 x 5 and 7 x 7 filters stream strips instead (walk_strip; streams_strips). */
static const char *const walk_configs[] = {"r8", "r4", "r16", "r32", NULL};
static const int rows_per_thread[] = {8, 4, 16, 32};

/* one instance a column anchor LPC = 0 .. K - 1 (valid, same and full, and every origin) */
#define MH_WALK_3(R, T) {conv2d_walk_kernel<3, 0, R, T>, conv2d_walk_kernel<3, 1, R, T>, conv2d_walk_kernel<3, 2, R, T>}
#define MH_WALK_5(R, T)                                                                                       \
    {conv2d_walk_kernel<5, 0, R, T>, conv2d_walk_kernel<5, 1, R, T>, conv2d_walk_kernel<5, 2, R, T>,          \
     conv2d_walk_kernel<5, 3, R, T>, conv2d_walk_kernel<5, 4, R, T>}
#define MH_WALK_ALL_3(T) {MH_WALK_3(8, T), MH_WALK_3(4, T), MH_WALK_3(16, T), MH_WALK_3(32, T)}
#define MH_WALK_ALL_5(T) {MH_WALK_5(8, T), MH_WALK_5(4, T), MH_WALK_5(16, T)}
#define MH_WALK_ALL_5_STREAMED(T) {{}, MH_WALK_5(4, T), MH_WALK_5(16, T)} /* [0]: walk_strip */

/* The instances are built in three translation units, so that no compile is long (all 67 in one
 * took 65-100 s, the library's critical path; the typed ones convert every load and store and
 * weigh most): conv2d_walk_typed3.cu and conv2d_walk_typed5.cu include this file with
 * MH_WALK_TYPED_UNIT set to 3 or 5 and build the typed instances of that size; this unit builds
 * the float32 ones, 7 x 7's and the host code.
 * [K 3 / 5][config][column anchor]; 5 x 5 at 32 rows spills registers and is not built, nor is
 * float32 5 x 5 in [0] (its strips are streamed). Streamed strips: 5 x 5 [column anchor],
 * 7 x 7 [column anchor - 2][constant-memory slot]. */
static_assert(MH_CONST_RING_SLOTS == 3, "one 7 x 7 instance a slot");
#define MH_WALK7(LPC) \
    {conv2d_walk_strip_kernel<7, LPC, 0>, conv2d_walk_strip_kernel<7, LPC, 1>, conv2d_walk_strip_kernel<7, LPC, 2>}
#define MH_WALK5_STRIP(LPC) conv2d_walk_strip_kernel<5, LPC, TAPS_IN_REGISTERS>
extern const kernel_fn mh_walk_typed3_kernels[4][5], mh_walk_typed5_kernels[4][5];
extern const ring_fn mh_walk_typed3_ring_kernel, mh_walk_typed5_ring_kernel, mh_walk7_ring_kernel;
extern const kernel_fn mh_walk7_kernels[3][MH_CONST_RING_SLOTS];
#if MH_WALK_TYPED_UNIT == 3
const kernel_fn mh_walk_typed3_kernels[4][5] = MH_WALK_ALL_3(true);
const ring_fn mh_walk_typed3_ring_kernel = conv2d_walk_ring_kernel<3, true>;
#elif MH_WALK_TYPED_UNIT == 5
const kernel_fn mh_walk_typed5_kernels[4][5] = MH_WALK_ALL_5(true);
const ring_fn mh_walk_typed5_ring_kernel = conv2d_walk_ring_kernel<5, true>;
#else
static const kernel_fn float_kernels[2][4][5] = {MH_WALK_ALL_3(false), MH_WALK_ALL_5_STREAMED(false)};
static const kernel_fn walk5_strip_kernels[5] = {MH_WALK5_STRIP(0), MH_WALK5_STRIP(1), MH_WALK5_STRIP(2),
                                                  MH_WALK5_STRIP(3), MH_WALK5_STRIP(4)};
static const ring_fn float_ring_kernels[2] = {conv2d_walk_ring_kernel<3, false>, conv2d_walk_ring_kernel<5, false>};
const ring_fn mh_walk7_ring_kernel = conv2d_walk_ring_kernel<7, false>;
const kernel_fn mh_walk7_kernels[3][MH_CONST_RING_SLOTS] = {MH_WALK7(2), MH_WALK7(3), MH_WALK7(4)};

static int walk7_supports(const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    if (mh_conv2d_is_typed(a)) {
        snprintf(why, len, "walk converts typed images at 3 x 3 and 5 x 5; at 7 x 7 it reads and writes float32");
        return 0;
    }
    if (a->lpc < 2 || a->lpc > 4) {
        snprintf(why, len, "walk at 7 x 7 takes filters anchored within a column of their centre (pad = same, or a "
                 "column origin of -1 to 1), not %d columns from their left", a->lpc);
        return 0;
    }
    if (x->config != 0) {
        snprintf(why, len, "walk at 7 x 7 streams strips of %d rows, in its default configuration (%s) only",
                 (int)strip_shape<7>::ROWS,
                 walk_configs[0]);
        return 0;
    }
    return 1;
}

/* Whether the call streams strips (walk_strip): float32 5 x 5 and 7 x 7 in the default configuration
 * (7 x 7 takes no other: walk7_supports). */
static int streams_strips(const mh_args *x)
{
    return x->conv2d.krows >= 5 && !mh_conv2d_is_typed(&x->conv2d) && x->config == 0;
}

/* Output rows a block covers: a streamed strip, else the configuration's rows a thread. */
static size_t strip_rows_of(const mh_args *x)
{
    if (!streams_strips(x)) return (size_t)rows_per_thread[x->config];
    return x->conv2d.krows == 7 ? (size_t)strip_shape<7>::ROWS : (size_t)strip_shape<5>::ROWS;
}

static int walk_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    const int k = a->krows;
    if (k != a->kcols || (k != 3 && k != 5 && k != 7)) {
        snprintf(why, len, "walk is compiled for 3 x 3, 5 x 5 and 7 x 7 filters, not %d x %d", a->krows, a->kcols);
        return 0;
    }
    if (k == 7 && !walk7_supports(x, why, len)) return 0;
    if (k == 5 && rows_per_thread[x->config] > 16) {
        snprintf(why, len, "walk with 5 x 5 filters walks at most 16 rows (more spill registers)");
        return 0;
    }
    if (mh_ceil_div(a->out_cols, BLOCK_COLS) > MH_MAX_GRID_X) {
        snprintf(why, len, "%zu output columns need more than 2^31-1 blocks", a->out_cols);
        return 0;
    }
    if (a->bordered && ring_of(a).tiles > (long long)MH_MAX_GRID_X) {
        snprintf(why, len, "the border of a %zu x %zu image needs more than 2^31-1 blocks", a->rows, a->cols);
        return 0;
    }
    return mh_grid_rows_fit(a->out_rows, strip_rows_of(x), why, len);
}

/* A bordered call of at most the device's conv2d_walk_one_kernel_max_outputs runs in one launch:
 * the ring's kernel computes every output (whole_image_of), the walking kernel is not launched,
 * and at 7 x 7 the filter is not copied into constant memory. Where a call's cost is its launches
 * one launch less wins; past the bound the walking kernel's register windows beat the staged
 * tiles. */
static int one_kernel(const mh_auto_rules *r, const mh_conv2d_args *a)
{
    return a->bordered && (double)(a->batch * a->out_rows * a->out_cols) <= r->conv2d_walk_one_kernel_max_outputs;
}

/* Up to 65535 images a launch (gridDim.z for the walk, gridDim.y for the ring), the ring's
 * kernel after the walk's on the same stream, as a programmatic dependent launch: its blocks
 * start as the walk's last ones run, read their windows, and wait for the walk's grid before they
 * store (the ring's launch and reads were ~6 us of a 0.19 ms 8192^2 3 x 3 call on the H100).
 * kernel NULL: the ring's kernel alone computes every output (one_kernel), launched as any kernel
 * is (its first reads are of the input, which the work before it in the stream may write). */
static mh_status launch_walk(mh_context *ctx, const mh_conv2d_args *a, kernel_fn kernel, size_t strip_rows,
                             ring_fn ring_kernel)
{
    walk_params p;
    p.filter = a->filter;
    p.reversed = a->reversed;
    p.rows = a->rows, p.cols = a->cols, p.out_rows = a->out_rows, p.out_cols = a->out_cols;
    p.lpr = a->lpr;
    p.in_type = (int)a->in_type, p.out_type = (int)a->out_type;
    p.in_bytes = (int)mh_dtype_size(a->in_type), p.out_bytes = (int)mh_dtype_size(a->out_type);
    /* a group of 4 elements moves as one access where every row starts aligned to one */
    p.vec_in = conv2d_rows_on_groups(a->in, a->cols, a->in_type);
    p.vec_out = conv2d_rows_on_groups(a->out, a->out_cols, a->out_type);
    const walk_ring ring = kernel ? ring_of(a) : whole_image_of(a);
    const size_t in_image = a->rows * a->cols * p.in_bytes, out_image = a->out_rows * a->out_cols * p.out_bytes;
    return mh_per_grid_slice(a->batch, [&](size_t first, unsigned images) { /* gridDim.z (the ring's y): images */
        p.in = (const float *)((const char *)a->in + first * in_image), p.out = (float *)((char *)a->out + first * out_image);
        if (kernel) {
            /* a block of as many warps as the row needs, at most WARPS: no warp without a column */
            const size_t needed = mh_ceil_div(a->out_cols, LANES * 4), warps = needed < WARPS ? needed : WARPS;
            dim3 grid((unsigned)mh_ceil_div(a->out_cols, warps * LANES * 4), (unsigned)mh_ceil_div(a->out_rows, strip_rows),
                      images);
            kernel<<<grid, (unsigned)(warps * LANES), 0, mh_stream(ctx)>>>(p);
            MH_TRY(MH_LAUNCH_CHECK(ctx, "conv2d_walk_kernel"));
        }
        if (!a->bordered || ring.tiles == 0) return MH_OK;
        void *args[] = {&p, (void *)&ring};
        return mh_launch(ctx, (const void *)ring_kernel, (unsigned)ring.tiles, images, RING_TILE,
                         0, args, "conv2d_walk_ring_kernel", kernel != NULL);
    });
}

/* 7 x 7: the filter in a slot of walk7_ring's constant memory while the kernels of that slot run */
static mh_status walk7_launch(mh_context *ctx, const mh_args *x, int slot)
{
    const mh_conv2d_args *a = &x->conv2d;
    return launch_walk(ctx, a, mh_walk7_kernels[a->lpc - 2][slot], strip_rows_of(x), mh_walk7_ring_kernel);
}

/* 7 x 7 outside one kernel: the filter goes to constant memory as the call reads it (reversed
 * into the context's copy first where the call reverses it); every other call's kernels read it
 * in place (walk_tap). */
static mh_status walk7_run(mh_context *ctx, const mh_args *x)
{
    const mh_args *call = x;
    mh_args reversed;
    if (x->conv2d.reversed) {
        reversed = *x;
        MH_TRY(mh_conv2d_reverse_cuda(ctx, x->conv2d.filter, 7 * 7, &reversed.conv2d.filter));
        reversed.conv2d.reversed = 0;
        call = &reversed;
    }
    return mh_const_ring_launch(&walk7_ring, ctx, call->conv2d.filter, 7 * 7 * sizeof(float), walk7_launch, call);
}

static mh_status walk_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    const int typed = mh_conv2d_is_typed(a);
    const int k5 = a->krows == 5;
    const ring_fn ring = a->krows == 7 ? mh_walk7_ring_kernel
                         : !typed      ? float_ring_kernels[k5]
                         : k5          ? mh_walk_typed5_ring_kernel
                                       : mh_walk_typed3_ring_kernel;
    if (one_kernel(ctx->rules, a)) return launch_walk(ctx, a, NULL, 0, ring);
    if (a->krows == 7) return walk7_run(ctx, x);
    if (streams_strips(x)) return launch_walk(ctx, a, walk5_strip_kernels[a->lpc], strip_rows_of(x), ring);
    const kernel_fn kernel = !typed ? float_kernels[k5][x->config][a->lpc]
                             : k5   ? mh_walk_typed5_kernels[x->config][a->lpc]
                                    : mh_walk_typed3_kernels[x->config][a->lpc];
    return launch_walk(ctx, a, kernel, strip_rows_of(x), ring);
}

static const mh_row rows[] = {
    {{"conv2d/walk", MH_OP_CONV2D, MH_BACKEND_CUDA, 9, "global+registers+shuffle", "ours",
      "3x3, 5x5 and 7x7: threads walk down 4 columns, rows in registers, no shared memory or barrier (float32 5x5 "
      "and 7x7: strips streamed, 7x7's filter in constant memory); any mode (the border's outputs in a second kernel); typed images "
      "converted as they are loaded and stored (3x3, 5x5)"},
     walk_supports, walk_run, walk_configs, 1, MH_LIB_NONE, NULL,
     MH_ROW_IMAGE_DTYPES | MH_ROW_BORDER_MODES | MH_ROW_READS_REVERSED},
};

MH_ROW_GROUP(mh_conv2d_walk_rows, rows)
#endif

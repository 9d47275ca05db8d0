/* sepfilter/walk: ours, for float32 images of one channel (memhier.ndimage's float32 gray
 * gaussian_filter, uniform_filter, sobel, prewitt, laplace and correlate1d along the rows), up to
 * 32 taps a pass.
 *
 * A block owns 128 columns of an image and walks down a segment of its rows, 16 at a step. The
 * rows the vertical pass reads stay in a ring of 64 shared-memory rows (row Y in slot Y - Y1 mod
 * 64, Y1 the first row the block's first window reads), so each value is loaded once a segment,
 * and each step adds 16 rows and leaves with 16 rows of
 * outputs: a vertical pass first sums the ring's input rows down the columns into 16 rows of mid
 * (the 128 columns and the horizontal halo) and mid along the rows into the outputs; a
 * horizontal pass first sums 16 input rows of a buffer along the rows into the ring and the ring
 * down the columns into the outputs; summed passes (laplace) read both from the ring of input
 * rows. The loads are cp.async copies into shared memory, a step ahead: while a step runs its
 * passes the next step's rows are in flight (into the ring, which holds both, or the other of two
 * buffers), with no register holding them, so the copies never wait on the passes' registers.
 * A shared row of input holds image column X at X - x0 + ah + pad, where x0 is the block's first
 * column and pad = (4 - ah mod 4) mod 4 (a kernel template, PAD) puts columns on 16 bytes where
 * the image's are: a row arrives in 16-byte
 * copies, a lane a group of 4 columns, and only the groups the image's edge cuts or its mode maps
 * are copied a column at a time.
 *
 * Each output sums its taps from 0.0f in the order fused and the CPU row sum them, divides and
 * applies the constant mode's cval between the passes as they do: the three rows agree bit for
 * bit. A vertical pass sums 8 rows of one column from a register window; a horizontal pass 8
 * neighbouring outputs of one row from a window read as 16-byte groups (a step's 16 rows are one
 * round of the block's threads; a quarter warp's lanes read 256 neighbouring bytes, two
 * wavefronts), each tap's compare and shared load shared by 8 multiply-adds.
 *
 * Two terms of a sum (mh_sepfilter_sum: gaussian_laplace's two second derivatives) of one
 * geometry in the vertical-first order run as one launch: both vertical passes read the one ring
 * (into the two buffers of mid, which this order leaves free) and each output is the first term's
 * float32 value plus the second's, as the terms added by the output's `+=` are, with the image
 * read once and no term buffer. */
#include "common.cuh"
#include "tile_io.cuh"

#include <string.h>

enum {
    WALK_THREADS = 256, WALK_COLS = 128, WALK_STEP = 16, WALK_RV = 8, WALK_HO = 8, WALK_MAX_TAPS = 32,
    WALK_MIN_SEGMENT = 32
};

struct walk_params {
    const float *in;
    float *out;
    long long rows, cols, image_values;
    long long seg; /* rows a block walks: a multiple of WALK_STEP */
    int kv, kh, av, ah; /* taps and anchors (ntaps / 2 + origin) */
    int mode_v, mode_h;
    int order; /* mh_sepfilter_run_order's */
    int vec;   /* every row of the image starts on 16 bytes: whole groups of 4 columns copy at once */
    float cval, div_v, div_h;
    const float *dev_u, *dev_v; /* device taps, or NULL: u, v */
    int rev_u, rev_v, rev_u2, rev_v2; /* device taps read from their end (mh_sepfilter_axis.reversed) */
    float u[WALK_MAX_TAPS], v[WALK_MAX_TAPS]; /* vertical, horizontal taps */
    const float *dev_u2, *dev_v2; /* a second term's taps (walk_kernel's TERMS = 2) */
    float u2[WALK_MAX_TAPS], v2[WALK_MAX_TAPS];
};

/* Shared memory for taps up to KMAX a pass: two terms' taps, the ring of RING rows and two buffers of
 * WALK_STEP rows, each row SW floats (up to 3 of pad, the 128 columns, a halo of up to KMAX - 1
 * and the 16-byte groups a horizontal window reads past it). The ring holds the rows a step's
 * vertical windows span (WALK_STEP + KMAX - 1) and the next step's rows, in flight while the step
 * runs. */
template <int KMAX>
struct walk_shape {
    static constexpr int SW = WALK_COLS + KMAX + 4;
    static constexpr int RING = 64;
    static_assert(2 * WALK_STEP + KMAX - 1 <= RING, "a step's windows and the next step's rows fit the ring");
    /* the taps, the ring and buffers, and the row's columns mapped (walk_kernel: SW long longs) */
    static constexpr int FLOATS = 4 * KMAX + (RING + 2 * WALK_STEP) * SW + 2 * SW;
    static constexpr int BLOCKS = KMAX <= 8 ? 4 : 3; /* resident an SM: registers' bound */
};

/* Row Y's slot in the ring: counted from the block's first ring row, base (y_begin - av), so that a
 * vertical window, which starts a multiple of WALK_RV rows below it, starts on a slot that is one
 * of RING / WALK_RV constants (vertical_item's cases). */
template <int KMAX>
static __device__ __forceinline__ int ring_slot(long long Y, long long base)
{
    return (int)(Y - base) & (walk_shape<KMAX>::RING - 1);
}

/* The 16-byte groups of a shared input row a copy fills: PAD, the 128 columns and the halo. */
template <int PAD>
static __device__ __forceinline__ int row_groups(const walk_params &p)
{
    return (PAD + WALK_COLS + p.kh - 1 + 3) / 4;
}

/* Rows Y0 .. Y0 + n - 1 of the input, each extended by its axis's mode (cval where the constant
 * mode reaches), into shared rows: ring slot ring_slot(Y, base), or buffer row Y - Y0. The copies are
 * asynchronous (cp.async, global to shared memory without a register): a step issues its next
 * rows before it runs its passes, and waits for them at the next step. A warp copies a row at a
 * time, lane l its groups of 4 columns l and l + 32 (shared values 4 g .. 4 g + 3, image columns
 * x0 - ah - pad + 4 g on) where the row (pad, the 128 columns and the halo) has them: one 16-byte
 * copy where the group lies inside an aligned image, else a column at a time from colmap (each
 * shared value's image column extended by the horizontal mode, -1 for cval; found once a block, so
 * that the copy loop holds no mapping's registers: with one, walk<8> and walk<16> spilled). */
template <int KMAX, int PAD>
static __device__ __forceinline__ void issue_rows(const walk_params &p, const float *img, long long x0,
                                                  const long long *colmap, bool whole, float *dst, bool ring,
                                                  long long base, long long Y0, int n, int tid)
{
    using S = walk_shape<KMAX>;
    const int warp = tid / 32, lane = tid % 32, groups = row_groups<PAD>(p);
    for (int r = warp; r < n; r += WALK_THREADS / 32) {
        const long long Y = Y0 + r;
        const long long y = (unsigned long long)Y < (unsigned long long)p.rows ? Y : mh_border_index(Y, p.rows, p.mode_v);
        float *d = dst + (ring ? ring_slot<KMAX>(Y, base) : r) * S::SW;
        const float *row = img + (y < 0 ? 0 : y) * p.cols;
        if (whole && y >= 0) { /* every group of the row inside an aligned image: no column's mapping */
            const float *src = row + (x0 - p.ah - PAD);
            if (lane < groups) cp_async16(d + 4 * lane, src + 4 * lane);
            if (lane + 32 < groups) cp_async16(d + 4 * lane + 128, src + 4 * lane + 128);
            continue;
        }
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int g = lane + 32 * k;
            if (g >= groups) break;
            /* whole: its first column unmapped (x0 - ah - PAD + 4 g: found here, as the kernel's first
             * column kept live across the passes spilled walk<32>), its last inside */
            const long long x = colmap[4 * g];
            if (p.vec && y >= 0 && x >= 0 && x == x0 - p.ah - PAD + 4 * g && x + 4 <= p.cols) {
                cp_async16(d + 4 * g, row + x);
                continue;
            }
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const long long c = colmap[4 * g + e];
                if (y >= 0 && c >= 0) cp_async4(d + 4 * g + e, row + c);
                else d[4 * g + e] = p.cval;
            }
        }
    }
}

/* w[d] = the ring's column col at slot S0 + d, for the d < n a window sums: each slot's offset a
 * constant of the case (vertical_item), so that a row costs one shared load. Rows past n (the
 * next step's, in flight) are not read. */
template <int KMAX, int S0>
static __device__ __forceinline__ void window_rows(const float *col, int n, float *w)
{
    using S = walk_shape<KMAX>;
#pragma unroll
    for (int d = 0; d < WALK_RV + KMAX - 1; ++d)
        if (d < n) w[d] = col[((S0 + d) & (S::RING - 1)) * S::SW];
}

/* window_rows from slot s0 (a multiple of WALK_RV: ring_slot): one case a slot it can be. */
template <int KMAX, int CASE = 0>
static __device__ __forceinline__ void window_from(int s0, const float *col, int n, float *w)
{
    if constexpr (CASE < walk_shape<KMAX>::RING / WALK_RV) {
        if (s0 == CASE * WALK_RV) return window_rows<KMAX, CASE * WALK_RV>(col, n, w);
        window_from<KMAX, CASE + 1>(s0, col, n, w);
    }
}

/* o[q] = sum_i src row (Y0 + q + i)[t] u[i], q < WALK_RV, from the ring, divided as a pass is. */
template <int KMAX>
static __device__ __forceinline__ void vertical_item(const walk_params &p, const float *su, const float *ring,
                                                     long long base, long long Y0, int t, float *o)
{
    constexpr int W = WALK_RV + KMAX - 1;
    float w[W];
    window_from<KMAX>(ring_slot<KMAX>(Y0, base), ring + t, WALK_RV + p.kv - 1, w);
#pragma unroll
    for (int q = 0; q < WALK_RV; ++q) o[q] = 0.0f;
#pragma unroll
    for (int i = 0; i < KMAX; ++i) {
        if (i >= p.kv) break;
        const float u = su[i];
#pragma unroll
        for (int q = 0; q < WALK_RV; ++q) o[q] = fmaf(w[q + i], u, o[q]);
    }
    if (p.div_v != 1.0f)
#pragma unroll
        for (int q = 0; q < WALK_RV; ++q) o[q] = o[q] / p.div_v;
}

/* o[e] = sum_j row[WALK_HO s + PAD + e + j] v[j], e < WALK_HO, divided as a pass is (row 16-byte
 * aligned; PAD: the row's pad, compiled in so that the window's indices are). The window's every
 * 16-byte group is read, the kh the call sums or not: a row of SW values holds the last item's
 * groups, and its values past the taps' reach are never summed (nor written while a pass reads
 * the row), so that no load waits on a compare. */
template <int KMAX, int PAD>
static __device__ __forceinline__ void horizontal_item(const walk_params &p, const float *sv, const float *row, int s,
                                                       float *o)
{
    constexpr int G = (PAD + WALK_HO + KMAX - 1 + 3) / 4;
    static_assert(4 * (WALK_COLS / 4 - WALK_HO / 4 + G) <= walk_shape<KMAX>::SW, "the last item's window fits its row");
    float w[4 * G];
#pragma unroll
    for (int m = 0; m < G; ++m) {
        const float4 g = reinterpret_cast<const float4 *>(row)[(WALK_HO / 4) * s + m];
        w[4 * m] = g.x, w[4 * m + 1] = g.y, w[4 * m + 2] = g.z, w[4 * m + 3] = g.w;
    }
#pragma unroll
    for (int e = 0; e < WALK_HO; ++e) o[e] = 0.0f;
#pragma unroll
    for (int j = 0; j < KMAX; ++j) {
        if (j >= p.kh) break;
        const float v = sv[j];
#pragma unroll
        for (int e = 0; e < WALK_HO; ++e) o[e] = fmaf(w[PAD + e + j], v, o[e]);
    }
    if (p.div_h != 1.0f)
#pragma unroll
        for (int e = 0; e < WALK_HO; ++e) o[e] = o[e] / p.div_h;
}

/* The horizontal pass over n shared rows of input (src row r: image row Y0 + r) into
 * the ring (the horizontal pass first: output column x0 + t at t, cval for rows past the constant
 * mode's edges, as the vertical pass reads them) or into the outputs of rows below y_end; where
 * src2 is not NULL, a second term's pass over its rows (taps sv2) added to each output. */
template <int KMAX, int PAD>
static __device__ void horizontal_rows(const walk_params &p, const float *sv, const float *src, float *ring,
                                       long long base, float *out, long long Y0, int n, long long y_end, long long x0,
                                       int tid, const float *sv2 = nullptr, const float *src2 = nullptr)
{
    using S = walk_shape<KMAX>;
    constexpr int ITEMS = WALK_COLS / WALK_HO; /* a row's */
#pragma unroll 1
    for (int item = tid; item < n * ITEMS; item += WALK_THREADS) {
        const int r = item / ITEMS, s = item % ITEMS;
        const long long Y = Y0 + r;
        float o[WALK_HO];
        horizontal_item<KMAX, PAD>(p, sv, src + r * S::SW, s, o);
        if (src2) {
            float o2[WALK_HO];
            horizontal_item<KMAX, PAD>(p, sv2, src2 + r * S::SW, s, o2);
#pragma unroll
            for (int e = 0; e < WALK_HO; ++e) o[e] += o2[e];
        }
        if (ring) {
            const bool outside = p.mode_v == MH_MODE_CONSTANT && (Y < 0 || Y >= p.rows);
            float4 *dst = reinterpret_cast<float4 *>(ring + ring_slot<KMAX>(Y, base) * S::SW + WALK_HO * s);
#pragma unroll
            for (int e = 0; e < WALK_HO; e += 4)
                dst[e / 4] = outside ? make_float4(p.cval, p.cval, p.cval, p.cval)
                                     : make_float4(o[e], o[e + 1], o[e + 2], o[e + 3]);
            continue;
        }
        if (Y >= y_end) continue;
        const long long x = x0 + WALK_HO * s;
        float *dst = out + Y * p.cols + x;
        if (x + WALK_HO <= p.cols && mh_aligned16(dst)) {
            /* __stcs: a plain float4 assignment was merged with the element-wise stores below into
             * 4-byte stores (the output is not read again here) */
#pragma unroll
            for (int e = 0; e < WALK_HO; e += 4)
                __stcs(reinterpret_cast<float4 *>(dst + e), make_float4(o[e], o[e + 1], o[e + 2], o[e + 3]));
            continue;
        }
        for (int e = 0; e < WALK_HO && x + e < p.cols; ++e) dst[e] = o[e];
    }
}

/* The vertical pass of outputs y0 .. y0 + WALK_STEP - 1 from the ring, a thread WALK_RV rows of a
 * column: into mid (the vertical pass first: all of mid's columns, cval past the constant mode's
 * edges as the horizontal pass reads them), or into the outputs with the horizontal pass of the
 * same ring rows added (summed passes), or into the outputs alone. */
template <int KMAX, int PAD>
static __device__ void vertical_rows(const walk_params &p, const float *su, const float *sv, const float *ring,
                                     long long base, float *mid, float *out, long long y0, long long y_end,
                                     long long x0, int tid)
{
    using S = walk_shape<KMAX>;
    const int width = mid ? WALK_COLS + p.kh - 1 : WALK_COLS;
    /* item t's column in the ring: input rows hold column X at X - x0 + ah + pad (a vertical pass
     * first: mid's column t is x0 - ah + t; summed passes: output column x0 + t); a horizontal
     * pass first left output column x0 + t at t */
    const int off = p.order == MH_SEPFILTER_HORIZONTAL_FIRST ? 0 : PAD + (p.order == MH_SEPFILTER_SUM ? p.ah : 0);
    static_assert(WALK_STEP == 2 * WALK_RV, "a step's rows are two groups of a column's outputs");
#pragma unroll 1
    for (int item = tid; item < 2 * width; item += WALK_THREADS) {
        const int g = item >= width, t = g ? item - width : item;
        const long long yb = y0 + g * WALK_RV;
        float o[WALK_RV];
        vertical_item<KMAX>(p, su, ring, base, yb - p.av, t + off, o);
        if (mid) {
            const long long x = x0 - p.ah + t;
            const bool outside = p.mode_h == MH_MODE_CONSTANT && (x < 0 || x >= p.cols);
#pragma unroll
            for (int q = 0; q < WALK_RV; ++q) mid[(g * WALK_RV + q) * S::SW + t + PAD] = outside ? p.cval : o[q];
            continue;
        }
        if (x0 + t >= p.cols) continue;
#pragma unroll
        for (int q = 0; q < WALK_RV; ++q) {
            if (yb + q >= y_end) break;
            float r = o[q];
            if (p.order == MH_SEPFILTER_SUM) {
                const float *row = ring + ring_slot<KMAX>(yb + q, base) * S::SW + t + PAD;
                float h = 0.0f;
                for (int j = 0; j < p.kh; ++j) h = fmaf(row[j], sv[j], h);
                r += p.div_h != 1.0f ? h / p.div_h : h;
            }
            out[(yb + q) * p.cols + x0 + t] = r;
        }
    }
}

/* PAD: (4 - ah mod 4) mod 4, compiled in so that the horizontal window's indices are. TERMS: 2
 * for two terms added (their own instances: the second term's windows would cost the one-term
 * kernels registers). */
template <int KMAX, int PAD, int TERMS>
static __global__ void __launch_bounds__(WALK_THREADS, walk_shape<KMAX>::BLOCKS) walk_kernel(const __grid_constant__ walk_params p)
{
    using S = walk_shape<KMAX>;
    extern __shared__ __align__(16) float smem[];
    float *su = smem, *sv = smem + KMAX, *su2 = smem + 2 * KMAX, *sv2 = smem + 3 * KMAX, *ring = smem + 4 * KMAX;
    float *bufs = ring + S::RING * S::SW;
    long long *colmap = reinterpret_cast<long long *>(bufs + 2 * WALK_STEP * S::SW);
    const int tid = threadIdx.x;
    for (int i = tid; i < p.kv; i += WALK_THREADS) su[i] = p.dev_u ? p.dev_u[p.rev_u ? p.kv - 1 - i : i] : p.u[i];
    for (int j = tid; j < p.kh; j += WALK_THREADS) sv[j] = p.dev_v ? p.dev_v[p.rev_v ? p.kh - 1 - j : j] : p.v[j];
    if (TERMS == 2) {
        for (int i = tid; i < p.kv; i += WALK_THREADS) su2[i] = p.dev_u2 ? p.dev_u2[p.rev_u2 ? p.kv - 1 - i : i] : p.u2[i];
        for (int j = tid; j < p.kh; j += WALK_THREADS) sv2[j] = p.dev_v2 ? p.dev_v2[p.rev_v2 ? p.kh - 1 - j : j] : p.v2[j];
    }
    const long long x0 = (long long)blockIdx.x * WALK_COLS;
    const size_t image = (size_t)blockIdx.z * (size_t)p.image_values;
    const float *in = p.in + image;
    float *out = p.out + image;
    const long long y_begin = (long long)blockIdx.y * p.seg;
    const long long y_end = y_begin + p.seg < p.rows ? y_begin + p.seg : p.rows;
    const int order = p.order;
    const long long first_col = x0 - p.ah - PAD; /* shared value 0's image column */
    for (int t = tid; t < S::SW; t += WALK_THREADS) colmap[t] = mh_border_index(first_col + t, p.cols, p.mode_h);
    /* every group a row copies inside an aligned image (issue_rows' 16-byte copies need no colmap) */
    const bool whole = p.vec && first_col >= 0 && first_col + 4 * row_groups<PAD>(p) <= p.cols;
    const long long base = y_begin - p.av; /* ring_slot's first row: the first window's */
    __syncthreads(); /* colmap before the first copies */

    float *const buf0 = bufs, *const buf1 = bufs + WALK_STEP * S::SW; /* no array: its index would be local memory */
    if (order == MH_SEPFILTER_HORIZONTAL_ONLY) {
        issue_rows<KMAX, PAD>(p, in, x0, colmap, whole, buf0, false, base, y_begin, WALK_STEP, tid);
        cp_async_commit();
        int n = 0;
        for (long long y0 = y_begin; y0 < y_end; y0 += WALK_STEP, ++n) {
            if (y0 + WALK_STEP < y_end)
                issue_rows<KMAX, PAD>(p, in, x0, colmap, whole, ((n + 1) & 1 ? buf1 : buf0), false, base,
                                      y0 + WALK_STEP, WALK_STEP, tid);
            cp_async_commit();
            cp_async_wait<1>();
            __syncthreads();
            horizontal_rows<KMAX, PAD>(p, sv, (n & 1 ? buf1 : buf0), NULL, base, out, y0, WALK_STEP, y_end, x0, tid);
            __syncthreads(); /* before the step after next replaces the buffer read here */
        }
        return;
    }
    /* the rows of the first pass that the first step's vertical windows reach above its own: base on */
    const bool h_first = order == MH_SEPFILTER_HORIZONTAL_FIRST;
    for (int c = 0; c < p.kv - 1; c += WALK_STEP) {
        const int n = p.kv - 1 - c < WALK_STEP ? p.kv - 1 - c : WALK_STEP;
        issue_rows<KMAX, PAD>(p, in, x0, colmap, whole, h_first ? buf0 : ring, !h_first, base, base + c, n, tid);
        if (!h_first) continue; /* the vertical pass reads them: they arrive with the first step's */
        cp_async_wait_all();
        __syncthreads();
        horizontal_rows<KMAX, PAD>(p, sv, buf0, ring, base, NULL, base + c, n, y_end, x0, tid);
        __syncthreads();
    }
    /* each step's new rows of the first pass: Y0 = y0 - av + kv - 1 on */
    issue_rows<KMAX, PAD>(p, in, x0, colmap, whole, h_first ? buf0 : ring, !h_first, base, base + p.kv - 1, WALK_STEP,
                          tid);
    cp_async_commit();
    int n = 0;
    for (long long y0 = y_begin; y0 < y_end; y0 += WALK_STEP, ++n) {
        const long long Y0 = y0 - p.av + p.kv - 1;
        if (y0 + WALK_STEP < y_end)
            issue_rows<KMAX, PAD>(p, in, x0, colmap, whole, h_first ? ((n + 1) & 1 ? buf1 : buf0) : ring, !h_first,
                                  base, Y0 + WALK_STEP, WALK_STEP, tid);
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        if (h_first) {
            horizontal_rows<KMAX, PAD>(p, sv, (n & 1 ? buf1 : buf0), ring, base, NULL, Y0, WALK_STEP, y_end, x0, tid);
            __syncthreads();
            vertical_rows<KMAX, PAD>(p, su, sv, ring, base, NULL, out, y0, y_end, x0, tid);
            continue; /* the next step's rows go to the other buffer */
        }
        if (order == MH_SEPFILTER_SUM) {
            vertical_rows<KMAX, PAD>(p, su, sv, ring, base, NULL, out, y0, y_end, x0, tid);
            __syncthreads(); /* the step after next replaces ring rows read here */
            continue;
        }
        vertical_rows<KMAX, PAD>(p, su, sv, ring, base, buf0, NULL, y0, y_end, x0, tid);
        if (TERMS == 2) vertical_rows<KMAX, PAD>(p, su2, sv2, ring, base, buf1, NULL, y0, y_end, x0, tid);
        __syncthreads();
        horizontal_rows<KMAX, PAD>(p, sv, buf0, NULL, base, out, y0, WALK_STEP, y_end, x0, tid, sv2,
                                   TERMS == 2 ? buf1 : nullptr);
    }
}

/* ---- launch, registry -------------------------------------------------------------------- */

typedef void (*walk_fn)(const walk_params);

/* The kernel for taps up to kmax a pass, PAD pad and TERMS terms. The two terms' instances are
 * built in a translation unit of their own, so that neither compile is long (all 24 in one unit
 * compiled in twice the time of the 12): sepfilter_walk_pairs.cu includes this file with
 * MH_SEPFILTER_WALK_PAIRS_UNIT set and builds them; this unit builds the others and the host
 * code. */
template <int KMAX, int TERMS>
static walk_fn kernel_of(int pad, size_t *smem)
{
    static const walk_fn pads[4] = {walk_kernel<KMAX, 0, TERMS>, walk_kernel<KMAX, 1, TERMS>,
                                    walk_kernel<KMAX, 2, TERMS>, walk_kernel<KMAX, 3, TERMS>};
    *smem = walk_shape<KMAX>::FLOATS * sizeof(float);
    return pads[pad];
}

template <int TERMS>
static walk_fn kernel_for_terms(int kmax, int pad, size_t *smem)
{
    return kmax <= 8    ? kernel_of<8, TERMS>(pad, smem)
           : kmax <= 16 ? kernel_of<16, TERMS>(pad, smem)
                        : kernel_of<WALK_MAX_TAPS, TERMS>(pad, smem);
}

walk_fn mh_sepfilter_walk_pair_kernel(int kmax, int pad, size_t *smem);
#ifdef MH_SEPFILTER_WALK_PAIRS_UNIT
walk_fn mh_sepfilter_walk_pair_kernel(int kmax, int pad, size_t *smem) { return kernel_for_terms<2>(kmax, pad, smem); }
#else

static walk_fn kernel_for(int kmax, int pad, int terms, size_t *smem)
{
    return terms == 2 ? mh_sepfilter_walk_pair_kernel(kmax, pad, smem) : kernel_for_terms<1>(kmax, pad, smem);
}

static int walk_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    if (!mh_sepfilter_float32_gray(d, why, len)) return 0;
    if (d->vertical.ntaps > WALK_MAX_TAPS || d->horizontal.ntaps > WALK_MAX_TAPS) {
        snprintf(why, len, "its windows hold at most %d taps a pass (this call has %zu and %zu)", (int)WALK_MAX_TAPS,
                 d->vertical.ntaps, d->horizontal.ntaps);
        return 0;
    }
    if (mh_ceil_div(d->cols, WALK_COLS) > 0x7fffffff) {
        snprintf(why, len, "%zu columns: more than a grid's 2^31 - 1 blocks of %d", d->cols, (int)WALK_COLS);
        return 0;
    }
    return 1;
}

/* Rows a block walks: enough segments that the grid holds ~16 blocks an SM (two rounds of eight
 * resident), each at least WALK_MIN_SEGMENT rows (the rows above a segment that its vertical
 * windows reach are loaded again by the block that walks it). At most 16 x the SMs segments:
 * gridDim.y's 65535 holds them. */
static long long segment_rows(const mh_context *ctx, const mh_sepfilter_desc *d)
{
    const size_t images = d->batch < MH_MAX_GRID_YZ ? d->batch : MH_MAX_GRID_YZ;
    const size_t blocks = mh_ceil_div(d->cols, WALK_COLS) * images;
    size_t segs = mh_ceil_div(16 * mh_sm_count(ctx), blocks);
    const size_t most = mh_ceil_div(d->rows, WALK_MIN_SEGMENT);
    if (segs > most) segs = most;
    return (long long)(mh_ceil_div(mh_ceil_div(d->rows, segs), WALK_STEP) * WALK_STEP);
}

/* One launch of a's filter, and where b is not NULL b's added (a term of a sum of a's geometry:
 * mh_sepfilter_walk_pairs). */
static mh_status walk_launch(mh_context *ctx, const mh_sepfilter_args *a, const mh_sepfilter_args *b)
{
    const mh_sepfilter_desc *d = &a->d;
    walk_params p = {};
    p.rows = (long long)d->rows, p.cols = (long long)d->cols, p.image_values = p.rows * p.cols;
    p.seg = segment_rows(ctx, d);
    p.kv = (int)d->vertical.ntaps, p.kh = (int)d->horizontal.ntaps;
    p.av = mh_sepfilter_anchor(&d->vertical), p.ah = mh_sepfilter_anchor(&d->horizontal);
    p.mode_v = (int)d->vertical.mode, p.mode_h = (int)d->horizontal.mode;
    p.order = mh_sepfilter_run_order(a);
    p.vec = (uintptr_t)a->in % 16 == 0 && d->cols % 4 == 0;
    p.cval = (float)d->cval, p.div_v = (float)d->vertical.divisor, p.div_h = (float)d->horizontal.divisor;
    p.dev_u = mh_sepfilter_kernel_taps(&d->vertical, a->vtaps_on_device, p.u);
    p.dev_v = mh_sepfilter_kernel_taps(&d->horizontal, a->htaps_on_device, p.v);
    p.rev_u = d->vertical.reversed, p.rev_v = d->horizontal.reversed; /* host taps come reversed already */
    if (b) {
        p.dev_u2 = mh_sepfilter_kernel_taps(&b->d.vertical, b->vtaps_on_device, p.u2);
        p.dev_v2 = mh_sepfilter_kernel_taps(&b->d.horizontal, b->htaps_on_device, p.v2);
        p.rev_u2 = b->d.vertical.reversed, p.rev_v2 = b->d.horizontal.reversed;
    }
    size_t smem = 0;
    const walk_fn kernel = kernel_for(p.kv > p.kh ? p.kv : p.kh, (4 - p.ah % 4) % 4, b ? 2 : 1, &smem);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    return mh_per_grid_slice(d->batch, [&](size_t first, unsigned images) { /* gridDim.z: images */
        walk_params q = p;
        q.in = (const float *)a->in + first * (size_t)p.image_values;
        q.out = (float *)a->out + first * (size_t)p.image_values;
        const dim3 grid((unsigned)mh_ceil_div(d->cols, WALK_COLS), (unsigned)mh_ceil_div(d->rows, (size_t)p.seg),
                        images);
        kernel<<<grid, WALK_THREADS, smem, mh_stream(ctx)>>>(q);
        return MH_LAUNCH_CHECK(ctx, "sepfilter walk_kernel");
    });
}

static mh_status walk_run(mh_context *ctx, const mh_args *x) { return walk_launch(ctx, &x->sepfilter, NULL); }

static const mh_row rows[] = {
    {{"sepfilter/walk", MH_OP_SEPFILTER, MH_BACKEND_CUDA, 12, "global+shared+registers", "ours",
      "float32 gray: a block walks down 128 columns, the rows its vertical pass reads in a shared ring"},
     walk_supports, walk_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_READS_REVERSED},
};

MH_ROW_GROUP(mh_sepfilter_walk_rows, rows)

/* Two axes' geometry alike: taps' counts, origins, modes and divisors. */
static int same_axis(const mh_sepfilter_axis *x, const mh_sepfilter_axis *y)
{
    return x->ntaps == y->ntaps && x->origin == y->origin && x->mode == y->mode && x->divisor == y->divisor;
}

/* cval is compared by its bits: a NaN cval, which == never matches, pairs with the same NaN. */
int mh_sepfilter_walk_pairs(const mh_row *ra, const mh_row *rb, const mh_sepfilter_args *a, const mh_sepfilter_args *b)
{
    return ra == &rows[0] && rb == &rows[0] && mh_sepfilter_run_order(a) == MH_SEPFILTER_VERTICAL_FIRST &&
           mh_sepfilter_run_order(b) == MH_SEPFILTER_VERTICAL_FIRST && same_axis(&a->d.vertical, &b->d.vertical) &&
           same_axis(&a->d.horizontal, &b->d.horizontal) && !memcmp(&a->d.cval, &b->d.cval, sizeof a->d.cval);
}

mh_status mh_sepfilter_walk_pair(mh_context *ctx, const mh_sepfilter_args *a, const mh_sepfilter_args *b)
{
    return walk_launch(ctx, a, b);
}
#endif

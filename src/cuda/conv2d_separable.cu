/* conv2d/separable and conv2d/lowrank: ours, for filters that are sums of r outer products,
 * filter = sum_t u_t v_t^T (Gaussian, box, Sobel's factors: r = 1; a difference of Gaussians, a
 * Laplacian of Gaussian: r = 2), where the 2-D correlation is, term by term, a horizontal pass
 * with v_t then a vertical one with u_t: r (krows + kcols) FMAs per output instead of
 * krows * kcols. separable takes r = 1, lowrank up to MH_LOWRANK_MAX_RANK.
 *
 * Each block owns a strip of BW output columns and walks down a segment of its rows, RY
 * input rows (a band) at a time: the band arrives by cp.async while the one before it is
 * filtered, its horizontal passes (one a term) go into rings of rows in shared memory, and
 * once krows - 1 rows are ahead of it, each band's step takes RY output rows from the rings by
 * the vertical passes and stores them. The image crosses device memory once, as in a direct
 * kernel (separate passes would write and reread a full intermediate image, which costs more
 * than the FMAs saved whenever the filter is small), and every horizontal row is computed once
 * a segment: r (krows + kcols) FMAs an output, plus the krows - 1 rows a segment reads ahead.
 * The segments are cut so that the blocks fill one resident grid: one wave.
 *
 * The rank and the factors come from the filter's SVD in double on the host
 * (mh_lowrank_factor: the smallest r that keeps every output within the per-element bound):
 * from a plan (mh_conv2d_planned), or, in a plain call, from the filter read back, which
 * waits for the context's stream. A filter that needs more terms is refused at run time with
 * MH_ERR_UNSUPPORTED, nothing written. The factors travel by value as a kernel parameter, so
 * no constant memory is shared between calls. */
#include "common.cuh"
#include "tile_io.cuh"
#include "conv2d_window.cuh"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* A block: THREADS threads, BW output columns (a thread each in the vertical pass). */
enum { THREADS = 128, BW = THREADS, RING_LD = BW + 4 };
/* input bands in shared memory: the one being filtered and BANDS - 1 on their way */
enum { BANDS = 2 };

/* An instance's band: RY rows a step (8 or 16). In the horizontal pass a thread takes RY outputs
 * of one band row (RY rows of BW / RY strips: a thread each), in the vertical pass RY outputs of
 * its column. RY = 16 halves, an output, what a step costs beside its FMAs (the barriers, the
 * loop, the band's copies, the overlap of the windows), at more registers: the zero-padded
 * one-term instances of 17 to 31 taps a side take it, and the symmetric two-term ones to 23 on
 * large images (symmetric16_kernels). The others spill at 16 (held to 80 registers, or carrying
 * two to four terms, or the border's mapping) and take 8. */
static __host__ __device__ constexpr int band_rows(bool exact, bool bordered, int terms)
{
    return exact && !bordered && terms == 1 ? 16 : 8;
}

struct separable_params {
    const float *in;
    float *out;
    size_t rows, cols, out_rows, out_cols;
    int krows, kcols, lpr, lpc, xshift;
    long long segment; /* output rows a block walks, a multiple of the instance's RY */
    tile_border border; /* zeros, or mh_conv2d_mode's mode and cval */
    /* term t's column factor u[t] (krows) and row factor v[t] (kcols) */
    float u[MH_LOWRANK_MAX_RANK][MH_CONV2D_DIRECT_MAX_K + 1], v[MH_LOWRANK_MAX_RANK][MH_CONV2D_DIRECT_MAX_K + 1];
    int cols32; /* cols where a band's offsets (RY rows of cols, and a strip) fit an int; else 0 */
};

/* Shared memory: BANDS input bands of RY rows (ncols loaded, sw apart) and a ring of horizontal
 * results a term (RING_LD apart). Strides are 4 floats past a multiple of 32, so that the 8
 * threads of a 16-byte access phase (8 band rows at one column) hit distinct banks. A ring holds
 * ahead + 1 groups of RY rows, each row once; a vertical step's rows wrap around it a group at
 * a time, so a step works out one offset a group and reads the rows within a group at offsets
 * known at compile time. (Writing the first krows - 1 rows a second time past the end, so that a
 * step's rows never wrap, costs a block 30 more rows a term at 31 x 31, and at 21 x 21 with
 * two terms leaves shared memory for three blocks an SM where the registers allow four.) */
struct separable_layout {
    int ncols, sw;
    int ahead; /* bands computed before the first vertical step: ceil((krows - 1) / RY) */
    int ring;  /* RY (ahead + 1) rows: every row one vertical step reads, and the band after */
    int floats;
};

/* The kernel instance's bound on the filter's sides (its unrolled loops). */
static __host__ __device__ int kmax_of(int krows, int kcols)
{
    const int k = krows > kcols ? krows : kcols;
    return k <= 8 ? 8 : k <= 16 ? 16 : 32;
}

/* 16-byte loads of a horizontal window: RX outputs of kcols taps */
static __host__ __device__ constexpr int window_loads(int rx, int kcols) { return (rx + kcols - 1 + 3) / 4; }

static __host__ __device__ separable_layout layout_for(int ry, int krows, int kcols, int terms)
{
    separable_layout l;
    l.ncols = BW - ry + 4 * window_loads(ry, kcols);
    l.sw = l.ncols + (36 - l.ncols % 32) % 32;
    l.ahead = (krows - 1 + ry - 1) / ry;
    l.ring = ry * (l.ahead + 1);
    l.floats = BANDS * ry * l.sw + terms * l.ring * RING_LD;
    return l;
}

/* Term t's RX horizontal results of band row y, strip x, into ring_t[slot + y][x .. x + RX). */
template <int RX, int R>
static __device__ __forceinline__ void store_ring_rows(const separable_layout &l, float *ring, int slot, int y, int x,
                                                       const float (&o)[R][RX])
{
#pragma unroll
    for (int t = 0; t < R; ++t) {
        float *dst = ring + (t * l.ring + slot + y) * RING_LD + x;
#pragma unroll
        for (int r = 0; r < RX; r += 4)
            *reinterpret_cast<float4 *>(dst + r) = make_float4(o[t][r], o[t][r + 1], o[t][r + 2], o[t][r + 3]);
    }
}

/* Horizontal passes of one band: thread (band row y, strip x) loads its window once and writes
 * ring_t[slot + y][x .. x + RX) = sum_j band[y][x + r + j] v_t[j] for every term t. */
template <int RY, int KMAX, bool EXACT, int R>
static __device__ __forceinline__ void horizontal(const separable_params &p, const separable_layout &l,
                                                  const float *band, float *ring, int slot, int tid)
{
    constexpr int RX = RY, W = (RX + KMAX - 1 + 3) / 4 * 4;
    const int y = tid % RY, x = tid / RY * RX, kcols = EXACT ? KMAX : p.kcols;
    float w[W], o[R][RX];
    load_window(w, band + y * l.sw + x, window_loads(RX, kcols));
#pragma unroll
    for (int t = 0; t < R; ++t)
#pragma unroll
        for (int r = 0; r < RX; ++r) o[t][r] = 0.0f;
#pragma unroll
    for (int j = 0; j < KMAX; ++j) {
        if (j >= kcols) break;
#pragma unroll
        for (int t = 0; t < R; ++t)
#pragma unroll
            for (int r = 0; r < RX; ++r) o[t][r] = fmaf(w[r + j], p.v[t][j], o[t][r]);
    }
    store_ring_rows<RX, R>(l, ring, slot, y, x, o);
}

/* The same passes for row factors that read the same from either end (rows_symmetric: a filter
 * symmetric left to right, as a difference of Gaussians), KMAX odd and exact: the two taps
 * j and KMAX - 1 - j share a factor, so a thread adds their inputs once for all its terms,
 * sum_j<H v_t[j] (w[r + j] + w[r + KMAX - 1 - j]) + v_t[H] w[r + H]. At two terms of 21 that is
 * 10 adds and 22 FMAs an output in place of 42 FMAs. */
template <int RY, int KMAX, int R>
static __device__ __forceinline__ void horizontal_symmetric(const separable_params &p, const separable_layout &l,
                                                            const float *band, float *ring, int slot, int tid)
{
    static_assert(KMAX % 2 == 1, "a middle tap");
    constexpr int RX = RY, W = (RX + KMAX - 1 + 3) / 4 * 4, H = KMAX / 2;
    const int y = tid % RY, x = tid / RY * RX;
    float w[W], o[R][RX];
    load_window(w, band + y * l.sw + x, window_loads(RX, KMAX));
#pragma unroll
    for (int t = 0; t < R; ++t)
#pragma unroll
        for (int r = 0; r < RX; ++r) o[t][r] = w[r + H] * p.v[t][H];
#pragma unroll
    for (int j = 0; j < H; ++j)
#pragma unroll
        for (int r = 0; r < RX; ++r) {
            const float pair = w[r + j] + w[r + KMAX - 1 - j];
#pragma unroll
            for (int t = 0; t < R; ++t) o[t][r] = fmaf(pair, p.v[t][j], o[t][r]);
        }
    store_ring_rows<RX, R>(l, ring, slot, y, x, o);
}

/* A vertical step's window: RY + KMAX - 1 rows from the oldest, in groups of RY rows. */
template <int RY, int KMAX>
struct step_window {
    static constexpr int W = RY + KMAX - 1, GROUPS = (W + RY - 1) / RY;
    int at[GROUPS]; /* group g's first row in a term's ring, times RING_LD */
};

/* The step's groups from the ring's row `oldest`, wrapping at l.ring rows (more than once where
 * the window, unrolled to KMAX, is longer than the ring: those rows are loaded and not used). */
template <int RY, int KMAX>
static __device__ __forceinline__ step_window<RY, KMAX> window_of(const separable_layout &l, int oldest)
{
    step_window<RY, KMAX> s;
    int row = oldest;
#pragma unroll
    for (int g = 0; g < step_window<RY, KMAX>::GROUPS; ++g) {
        s.at[g] = row * RING_LD;
        row = row + RY < l.ring ? row + RY : 0;
    }
    return s;
}

/* Vertical pass of one term: acc[q] += sum_i row(q + i)[col] u[i], rows counted from the step's
 * oldest, col the thread's column of the term's ring. The window loads RY + KMAX - 1 rows,
 * those past RY + krows - 1 unused. */
template <int RY, int KMAX, bool EXACT>
static __device__ __forceinline__ void vertical(const separable_params &p, const float *u, const float *col,
                                                const step_window<RY, KMAX> &s, float (&acc)[RY])
{
    constexpr int W = step_window<RY, KMAX>::W;
    const int krows = EXACT ? KMAX : p.krows;
    float w[W];
#pragma unroll
    for (int d = 0; d < W; ++d) w[d] = col[s.at[d / RY] + d % RY * RING_LD];
#pragma unroll
    for (int i = 0; i < KMAX; ++i) {
        if (i >= krows) break;
#pragma unroll
        for (int q = 0; q < RY; ++q) acc[q] = fmaf(w[q + i], u[i], acc[q]);
    }
}

/* A thread's part of every band: the same groups of 4 columns each band (at most GROUPS: a band
 * of RY rows at 32 taps a side), placed once; a band moves only the rows. A group inside the
 * image's columns, on a 16-byte boundary, of a row inside the image is one 16-byte copy; the rest
 * goes through load_group and the border. */
template <int RY>
struct band_part {
    static constexpr int GROUPS = (RY * (BW - RY + 4 * window_loads(RY, 32)) + 4 * THREADS - 1) / (4 * THREADS);
    long long x0;            /* the band's first column in the image */
    int n;                   /* groups this thread moves */
    int at[GROUPS];          /* group u: 4 g (its first column past x0) | band row << 16 */
    unsigned whole;          /* bit u: group u inside the columns, on a 16-byte boundary */
};

template <int RY>
static __device__ __forceinline__ band_part<RY> band_part_of(const separable_params &p, const separable_layout &l,
                                                             long long x0, int tid)
{
    constexpr int BAND_GROUPS = band_part<RY>::GROUPS;
    band_part<RY> b;
    const int groups = l.ncols / 4;
    const bool vec = aligned16(p.in) && p.cols % 4 == 0 && (x0 & 3) == 0;
    b.x0 = x0, b.n = 0, b.whole = 0;
#pragma unroll
    for (int u = 0; u < BAND_GROUPS; ++u) {
        const int item = tid + u * THREADS, r = item / groups, c = 4 * (item - r * groups);
        b.at[u] = c | r << 16;
        if (vec && x0 + c >= 0 && x0 + c + 4 <= (long long)p.cols) b.whole |= 1u << u;
        if (item < RY * groups) b.n = u + 1;
    }
    return b;
}

/* Band rows y .. y + RY (image rows, the border's past its ends) into dst (sw floats a row).
 * Zero-padded, a band inside the image's rows (every band but the first and last few of an
 * image) takes one 64-bit offset, its first row's, and a 32-bit one a group: no row checks and
 * no 64-bit product a group, which otherwise take most of the instructions a band's copies cost
 * (the bordered instances keep the general path: with both, ptxas spills at their 80 registers).
 * It is a loop of its own, not a case in the general one: in one loop the zero-padded instances
 * lose most of what it saves. */
template <int RY, bool BORDERED>
static __device__ __forceinline__ void send_rows(const separable_params &p, const band_part<RY> &part, float *dst,
                                                 int sw, long long y, tile_border border)
{
    constexpr int BAND_GROUPS = band_part<RY>::GROUPS;
    if (!BORDERED && p.cols32 && y >= 0 && y + RY <= (long long)p.rows) {
        const long long first = y * p.cols32 + part.x0; /* may be negative: only whole groups add to it */
#pragma unroll
        for (int u = 0; u < BAND_GROUPS; ++u) {
            if (u >= part.n) break;
            const int c = part.at[u] & 0xffff, row = part.at[u] >> 16;
            float *d = dst + row * sw + c;
            if (part.whole >> u & 1) cp_async16(d, p.in + (first + (row * p.cols32 + c)));
            else load_group(d, p.in + (size_t)(y + row) * p.cols, (long long)p.cols, part.x0 + c, false, border);
        }
        return;
    }
#pragma unroll
    for (int u = 0; u < BAND_GROUPS; ++u) {
        if (u >= part.n) break;
        const int c = part.at[u] & 0xffff, row = part.at[u] >> 16;
        const long long r = y + row, x = part.x0 + c;
        const bool whole = part.whole >> u & 1;
        float *d = dst + row * sw + c;
        if (whole && r >= 0 && r < (long long)p.rows) {
            cp_async16(d, p.in + (size_t)r * p.cols + (size_t)x);
            continue;
        }
        const long long q = mh_border_index(r, (long long)p.rows, border.mode);
        if (q < 0) *reinterpret_cast<float4 *>(d) = make_float4(border.cval, border.cval, border.cval, border.cval);
        else load_group(d, p.in + (size_t)q * p.cols, (long long)p.cols, x, whole, border);
    }
}

/* A vertical step's RY outputs down a column from dst, rows_left of them inside the image, a row
 * apart. WHOLE: a step with all its rows inside (every step but an image's last) stores without a
 * test a row. The instances of three and four terms keep the test and work the address out each
 * step: the carried values and the second loop cost them registers, and spills (at 16 taps). */
template <int RY, bool WHOLE>
static __device__ __forceinline__ void store_step(float *dst, size_t out_cols, long long rows_left,
                                                  const float (&acc)[RY])
{
    if (WHOLE && rows_left >= RY) {
#pragma unroll
        for (int q = 0; q < RY; ++q, dst += out_cols) *dst = acc[q];
        return;
    }
#pragma unroll
    for (int q = 0; q < RY; ++q, dst += out_cols)
        if (q < rows_left) *dst = acc[q];
}

/* BORDERED: the loader extends the image by mh_conv2d_mode's mode (an instance of its own, so
 * that the zero-padded one keeps a loader without the mapping, as regtile's). R: the terms.
 * SYMMETRIC: row factors that read the same from either end (horizontal_symmetric; instances
 * of their own, as one kernel with both passes took up to 128 registers and spilled at 31).
 * Step b: band b's rows arrive (and band b + 1's are sent for), its horizontal passes fill the
 * rings, and from b = ahead on, output rows RY (b - ahead) .. + RY of the segment. Two
 * barriers a step: the band and the rings written before they are read, the rings read before
 * the next step overwrites the oldest band.
 * Blocks an SM the registers must allow: up to 16 a side the rings leave room for six (80
 * registers, no spills). Past 16, five (102) for one term on 8-row bands (ptxas then takes 64 to
 * 72 registers; on the H100 the bordered 31 x 31 instance ran 6% faster than at 116, the
 * 32-tap one as fast), else four (128: two terms at 21 x 21 ran 2% slower held to five, and the
 * 16-row bands need the registers), and three for two terms on 16-row bands (168: their rings
 * and bands take 72 KB, three blocks an SM; at 128 they spilled). */
template <int KMAX, bool EXACT, bool BORDERED, int R, bool SYMMETRIC = false, int RY = band_rows(EXACT, BORDERED, R)>
static __global__ void __launch_bounds__(THREADS, KMAX <= 16 ? 6 : RY == 8 && R == 1 ? 5 : RY == 16 && R == 2 ? 3 : 4)
    conv2d_separable_kernel(const __grid_constant__ separable_params p)
{
    static_assert(RY * (BW / RY) == THREADS, "one horizontal item a thread a band");
    extern __shared__ __align__(16) float smem[];
    const separable_layout l = layout_for(RY, p.krows, p.kcols, R);
    float *ring = smem + BANDS * RY * l.sw;
    const int tid = threadIdx.x;
    const long long y0 = (long long)blockIdx.y * p.segment, x0 = (long long)blockIdx.x * BW - p.xshift;
    const long long left = (long long)p.out_rows - y0;
    const long long steps = ((left < p.segment ? left : p.segment) + RY - 1) / RY + l.ahead;
    const long long x = x0 + tid;
    const bool column = x >= 0 && x < (long long)p.out_cols;
    const band_part<RY> part = band_part_of<RY>(p, l, x0 - p.lpc, tid);
    /* band b goes to buffer b mod BANDS; a group of copies a band, empty past the last */
    auto send_band = [&](long long b) {
        if (b < steps)
            send_rows<RY, BORDERED>(p, part, smem + b % BANDS * RY * l.sw, l.sw, y0 - p.lpr + (long long)RY * b,
                                    BORDERED ? p.border : zero_border);
        cp_async_commit();
    };
    for (int b = 0; b < BANDS - 1; ++b) send_band(b);
    /* the next step's first output, and the rows from it to the image's end (up to two terms) */
    size_t out_at = column ? (size_t)y0 * p.out_cols + (size_t)x : 0;
    long long out_left = (long long)p.out_rows - y0;
    /* band b's ring slot, RY b mod ring; the oldest row a vertical step reads follows it */
    for (long long b = 0, slot = 0; b < steps; ++b, slot = slot + RY < l.ring ? slot + RY : 0) {
        cp_async_wait<BANDS - 2>();
        __syncthreads(); /* band b is in; step b - 1 has read its band's buffer and the rings */
        send_band(b + BANDS - 1);
        const float *band = smem + b % BANDS * RY * l.sw;
        if constexpr (SYMMETRIC) horizontal_symmetric<RY, KMAX, R>(p, l, band, ring, (int)slot, tid);
        else horizontal<RY, KMAX, EXACT, R>(p, l, band, ring, (int)slot, tid);
        if (b < l.ahead) continue;
        __syncthreads(); /* the rings hold the rows of this step's outputs */
        const step_window<RY, KMAX> window = window_of<RY, KMAX>(l, slot + RY < l.ring ? (int)slot + RY : 0);
        float acc[RY];
#pragma unroll
        for (int q = 0; q < RY; ++q) acc[q] = 0.0f;
#pragma unroll
        for (int t = 0; t < R; ++t)
            vertical<RY, KMAX, EXACT>(p, p.u[t], ring + t * l.ring * RING_LD + tid, window, acc);
        if (R <= 2) { /* the address and the rows left carried from step to step */
            if (column) store_step<RY, true>(p.out + out_at, p.out_cols, out_left, acc);
            out_at += (size_t)RY * p.out_cols, out_left -= RY;
        } else if (column) { /* worked out again each step: two fewer 64-bit values held */
            const long long y = y0 + (long long)RY * (b - l.ahead);
            store_step<RY, false>(p.out + (size_t)y * p.out_cols + (size_t)x, p.out_cols, (long long)p.out_rows - y, acc);
        }
    }
}

/* ---- factors, launch, registry ---------------------------------------------------------- */

/* Whether every term's row factor reads the same from either end, as mh_lowrank_factor's are, to
 * the bit, for a filter symmetric left to right (its rotations treat mirrored columns alike): the
 * instances that use it then add mirrored inputs before their FMAs (horizontal_symmetric). */
static int rows_symmetric(const separable_params *p, int rank, int kcols)
{
    for (int t = 0; t < rank; ++t)
        for (int j = 0; j < kcols / 2; ++j)
            if (p->v[t][j] != p->v[t][kcols - 1 - j]) return 0;
    return 1;
}

/* The call's factors into p: the plan's, or the filter read back (waiting for the stream) and
 * factored. MH_ERR_UNSUPPORTED, with the tap that misses, where the filter needs more than
 * max_rank terms. */
static mh_status factors_of(mh_context *ctx, const mh_conv2d_args *a, const char *name, int max_rank,
                            separable_params *p, int *rank)
{
    float own_u[MH_LOWRANK_MAX_RANK * MH_CONV2D_DIRECT_MAX_K], own_v[MH_LOWRANK_MAX_RANK * MH_CONV2D_DIRECT_MAX_K];
    const float *u = own_u, *v = own_v;
    mh_lowrank_fit fit;
    int r;
    if (a->plan) {
        r = a->plan->rank, fit = a->plan->fit, u = a->plan->u, v = a->plan->v;
    } else {
        float f[MH_CONV2D_DIRECT_MAX_K * MH_CONV2D_DIRECT_MAX_K];
        const size_t fbytes = (size_t)a->krows * a->kcols * sizeof(float);
        MH_CUDA_TRY(ctx, cudaMemcpyAsync(f, a->filter, fbytes, cudaMemcpyDeviceToHost, mh_stream(ctx)));
        MH_CUDA_TRY(ctx, cudaStreamSynchronize(mh_stream(ctx)));
        r = mh_lowrank_factor(f, a->krows, a->kcols, max_rank, own_u, own_v, &fit);
    }
    if (r < 1 || r > max_rank) {
        if (r > max_rank)
            return mh_fail(ctx, MH_ERR_UNSUPPORTED, "%s: the %d x %d filter needs %d terms (its plan's rank); %s takes "
                           "at most %d", name, a->krows, a->kcols, r, name, max_rank);
        return mh_fail(ctx, MH_ERR_UNSUPPORTED,
                       "%s: the %d x %d filter is not %s%d within FP32 accuracy (the per-element bound): "
                       "filter[%d][%d] = %.9g comes out as %.9g, %.3g times its share of the bound (singular values "
                       "%.3g, the first left out %.3g); use a direct variant",
                       name, a->krows, a->kcols, max_rank == 1 ? "rank " : "of rank at most ", max_rank, fit.row,
                       fit.col, fit.tap, fit.fitted, fit.ratio,
                       fit.sigma1, fit.dropped);
    }
    for (int t = 0; t < r; ++t) {
        memcpy(p->u[t], u + t * a->krows, (size_t)a->krows * sizeof(float));
        memcpy(p->v[t], v + t * a->kcols, (size_t)a->kcols * sizeof(float));
    }
    *rank = r;
    return MH_OK;
}

/* The shared memory of `terms` rings fits a block (lowrank is checked for its most terms), with
 * 8-row bands, and of up to two rings with 16-row bands. */
static int fits_terms(const mh_args *x, int terms, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    const int eight = layout_for(8, a->krows, a->kcols, terms).floats;
    const int sixteen = layout_for(16, a->krows, a->kcols, terms < 2 ? terms : 2).floats;
    const size_t bytes = (size_t)(eight > sixteen ? eight : sixteen) * sizeof(float);
    if (bytes <= mh_smem_optin()) return 1;
    snprintf(why, len, "its bands and rings need %zu bytes of shared memory, more than a block may use", bytes);
    return 0;
}

static int separable_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return fits_terms(x, 1, why, len);
}

static int lowrank_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return fits_terms(x, MH_LOWRANK_MAX_RANK, why, len);
}

typedef void (*kernel_fn)(const separable_params);
#define MH_SEPARABLE_R(B, R) {conv2d_separable_kernel<8, false, B, R>, conv2d_separable_kernel<16, false, B, R>, \
                              conv2d_separable_kernel<32, false, B, R>}
#define MH_SEPARABLE_B(B) {MH_SEPARABLE_R(B, 1), MH_SEPARABLE_R(B, 2), MH_SEPARABLE_R(B, 3), MH_SEPARABLE_R(B, 4)}
/* [bordered][terms - 1][KMAX = 8, 16, 32]: any filter, the taps bounded at run time */
static const kernel_fn kernels[2][MH_LOWRANK_MAX_RANK][3] = {MH_SEPARABLE_B(false), MH_SEPARABLE_B(true)};
static_assert(MH_LOWRANK_MAX_RANK == 4, "one instance a number of terms");

/* Square odd filters from 17 to 31 of one or two terms (auto's planned Gaussians and their
 * differences) have instances of their own size: a bound known at compile time drops each tap's
 * check from the loops unrolled to 32 (a seventh of the instructions at 31 x 31: 18% of the time
 * on the H100 at 31 x 31 and 21 x 21; at 15 and below, where the loops unroll to 8 or 16, no
 * gain was measured). */
#define MH_EXACT(K, B, R) conv2d_separable_kernel<K, true, B, R>
#define MH_EXACT_R(B, R) {MH_EXACT(17, B, R), MH_EXACT(19, B, R), MH_EXACT(21, B, R), MH_EXACT(23, B, R), \
                          MH_EXACT(25, B, R), MH_EXACT(27, B, R), MH_EXACT(29, B, R), MH_EXACT(31, B, R)}
enum { EXACT_FIRST = 17, EXACT_TERMS = 2, EXACT_SIZES = 8 };
/* [bordered][terms - 1][(K - EXACT_FIRST) / 2] */
static const kernel_fn exact_kernels[2][EXACT_TERMS][EXACT_SIZES] = {{MH_EXACT_R(false, 1), MH_EXACT_R(false, 2)},
                                                                     {MH_EXACT_R(true, 1), MH_EXACT_R(true, 2)}};
/* The same sizes at two terms with symmetric row factors, [bordered][(K - EXACT_FIRST) / 2], and
 * the zero-padded ones to 23 a side on 16-row bands (SYMMETRIC16_LAST), taken from the rules'
 * conv2d_lowrank_symmetric16_from_outputs: past 23 a side 16-row bands hold three blocks an SM
 * where 8-row bands keep four (their rings take 72 KB, their registers 168), and on small images
 * their longer segments fill fewer of the resident slots (docs/auto.md has the H100's
 * measurements). */
#define MH_SYMMETRIC(K, B, RY) conv2d_separable_kernel<K, true, B, 2, true, RY>
#define MH_SYMMETRIC_B(B) {MH_SYMMETRIC(17, B, 8), MH_SYMMETRIC(19, B, 8), MH_SYMMETRIC(21, B, 8), \
                           MH_SYMMETRIC(23, B, 8), MH_SYMMETRIC(25, B, 8), MH_SYMMETRIC(27, B, 8), \
                           MH_SYMMETRIC(29, B, 8), MH_SYMMETRIC(31, B, 8)}
static const kernel_fn symmetric_kernels[2][EXACT_SIZES] = {MH_SYMMETRIC_B(false), MH_SYMMETRIC_B(true)};
enum { SYMMETRIC16_LAST = 23 };
static const kernel_fn symmetric16_kernels[(SYMMETRIC16_LAST - EXACT_FIRST) / 2 + 1] = {
    MH_SYMMETRIC(17, false, 16), MH_SYMMETRIC(19, false, 16), MH_SYMMETRIC(21, false, 16),
    MH_SYMMETRIC(23, false, 16)};

MH_EXTERN_C int mh_conv2d_lowrank_own_instance(int krows, int kcols, int terms)
{
    return krows == kcols && krows % 2 == 1 && krows >= EXACT_FIRST && krows < EXACT_FIRST + 2 * EXACT_SIZES &&
           terms >= 1 && terms <= EXACT_TERMS;
}

/* The call's instance and its band's rows. */
static kernel_fn kernel_for(const mh_auto_rules *r, const mh_conv2d_args *a, int rank, int symmetric, int *ry)
{
    const int k = a->krows;
    const bool exact = mh_conv2d_lowrank_own_instance(k, a->kcols, rank);
    *ry = band_rows(exact, a->bordered, rank);
    if (exact && rank == 2 && symmetric) {
        if (!a->bordered && k <= SYMMETRIC16_LAST &&
            (double)a->out_rows * a->out_cols >= r->conv2d_lowrank_symmetric16_from_outputs) {
            *ry = 16;
            return symmetric16_kernels[(k - EXACT_FIRST) / 2];
        }
        return symmetric_kernels[a->bordered][(k - EXACT_FIRST) / 2];
    }
    if (exact) return exact_kernels[a->bordered][rank - 1][(k - EXACT_FIRST) / 2];
    const int kmax = kmax_of(a->krows, a->kcols);
    return kernels[a->bordered][rank - 1][kmax == 8 ? 0 : kmax == 16 ? 1 : 2];
}

/* Output rows a block walks: as many blocks as one resident grid holds cover the image (no
 * second, partial wave), and no more than gridDim.y allows; a multiple of the band's rows. With
 * one wave the call takes as long as its longest walk, so short segments win on small images
 * though each repeats the krows - 1 rows it reads ahead.
 * Where one wave's segments are at least the rules' conv2d_lowrank_waves_from_ahead times the rows
 * a segment reads ahead, as many waves as an SM holds blocks, of segments that much shorter: the
 * SMs run the same blocks at different speeds, and the hardware hands each later wave's blocks to
 * the SMs that finish first, for the rows read ahead again (docs/auto.md has the H100's
 * measurements). */
static mh_status segment_rows(mh_context *ctx, const void *kernel, size_t bytes, int ry, int ahead_rows,
                              size_t strips, size_t out_rows, long long *segment)
{
    size_t per_sm = 0;
    MH_TRY(mh_blocks_per_sm(ctx, kernel, THREADS, bytes, &per_sm));
    const size_t slots = per_sm * mh_sm_count(ctx);
    size_t rows = mh_ceil_div(out_rows, slots > strips ? slots / strips : 1);
    if ((double)rows >= ctx->rules->conv2d_lowrank_waves_from_ahead * (double)ahead_rows) {
        const size_t waves = per_sm > 2 ? per_sm : 2;
        rows = mh_ceil_div(out_rows, waves * slots > strips ? waves * slots / strips : 1);
    }
    if (rows < mh_ceil_div(out_rows, 65535)) rows = mh_ceil_div(out_rows, 65535);
    *segment = (long long)(mh_ceil_div(rows, (size_t)ry) * ry);
    return MH_OK;
}

static mh_status run_terms(mh_context *ctx, const mh_args *x, const char *name, int max_rank)
{
    const mh_conv2d_args *a = &x->conv2d;
    separable_params p = {};
    int rank = 0;
    MH_TRY(factors_of(ctx, a, name, max_rank, &p, &rank));
    p.in = a->in, p.out = a->out;
    p.rows = a->rows, p.cols = a->cols, p.out_rows = a->out_rows, p.out_cols = a->out_cols;
    p.krows = a->krows, p.kcols = a->kcols, p.lpr = a->lpr, p.lpc = a->lpc;
    p.xshift = conv2d_xshift(a);
    p.border = {(int)a->mode, a->cval};
    p.cols32 = a->cols <= (size_t)(INT_MAX / 17) ? (int)a->cols : 0; /* bands of up to 16 rows */
    int ry = 8;
    const kernel_fn kernel = kernel_for(ctx->rules, a, rank, rows_symmetric(&p, rank, a->kcols), &ry);
    const separable_layout l = layout_for(ry, a->krows, a->kcols, rank);
    const size_t bytes = (size_t)l.floats * sizeof(float), strips = mh_ceil_div(a->out_cols + p.xshift, BW);
    if (a->out_rows == 0 || strips == 0) return MH_OK;
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    MH_TRY(segment_rows(ctx, (const void *)kernel, bytes, ry, l.ahead * ry, strips, a->out_rows, &p.segment));
    dim3 grid((unsigned)strips, (unsigned)mh_ceil_div(a->out_rows, (size_t)p.segment));
    kernel<<<grid, THREADS, bytes, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "conv2d_separable_kernel");
}

static mh_status separable_run(mh_context *ctx, const mh_args *x) { return run_terms(ctx, x, "conv2d/separable", 1); }

static mh_status lowrank_run(mh_context *ctx, const mh_args *x)
{
    return run_terms(ctx, x, "conv2d/lowrank", MH_LOWRANK_MAX_RANK);
}

static const mh_row rows[] = {
    {{"conv2d/separable", MH_OP_CONV2D, MH_BACKEND_CUDA, 10, "global+shared+registers", "ours",
      "rank-1 filters: blocks walk down column strips, each row's horizontal pass into a ring in shared memory, "
      "the vertical pass from it (refuses other filters)"},
     separable_supports, separable_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_BORDER_MODES},
    {{"conv2d/lowrank", MH_OP_CONV2D, MH_BACKEND_CUDA, 11, "global+shared+registers", "ours",
      "filters of rank up to 4 (SVD in double on the host): separable's walk, a ring and a pass pair a term, the "
      "terms summed in registers (refuses filters that need more)"},
     lowrank_supports, lowrank_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_BORDER_MODES},
};

MH_ROW_GROUP(mh_conv2d_separable_rows, rows)

/* conv2d/tiles: ours, for float32 3 x 3 and 5 x 5 filters in any mode, on a single image or a
 * stack of images, in one launch.
 *
 * walk runs a bordered call as two launches: its walking kernel pads with zeros, then the
 * ring's kernel recomputes the outputs whose window meets the border. Here a block stages a
 * tile of R output rows by up to 256 columns of one image, with the rows and columns its windows
 * reach, in shared memory, mapping each row and column by the mode as it is copied (cval where
 * the constant mode reaches; zeros for an unbordered call), so one launch writes every output
 * once: the image is read (R + K - 1) / R times (the halo rows from L2) and written once. Each
 * thread sums 4 columns x 8 rows from register windows of 16-byte shared loads and stores a
 * 16-byte group a row.
 *
 * Tiles run along an image's row of tiles, then down its strips, then through the images, so a
 * strip's halo rows are still in L2 when the strip below reads them. In the default
 * configuration a resident grid walks the tiles with the next tile's copies (cp.async) in flight
 * into the other of two buffers while this one is summed; in t16 each block owns one tile.
 *
 * K and the column anchor LPC are compile-time, so every window index folds into a register and
 * the taps (read once a thread from the device filter, from its end where the call reverses it)
 * stay in registers; the row anchor is a run-time offset. Each output sums its K x K products
 * from 0.0f, filter rows then columns, with fmaf: walk's and its ring kernel's order, so the rows
 * agree bit for bit. */
#include "common.cuh"
#include "conv2d_window.cuh"
#include "tile_io.cuh"
#include "../core/border.h"

enum {
    TILES_COLS = 256,            /* a tile's output columns: 64 threads of 4 */
    TILES_THREADS_A_ROW = TILES_COLS / 4,
    TILES_ROWS_A_THREAD = 8,
    TILES_LEAD = 4,              /* staged columns left of the tile's first output column */
    TILES_GROUPS = (TILES_LEAD + TILES_COLS + 4) / 4, /* a staged row's 16-byte groups */
    TILES_STRIDE = 4 * TILES_GROUPS,
    TILES_MAX_K = 5,
};
static_assert(TILES_MAX_K - 1 <= TILES_LEAD && TILES_MAX_K - 1 <= 4, "a window reaches one group to each side");

struct tiles_params {
    const float *in, *filter;
    float *out;
    long long rows, cols, out_rows, out_cols;
    long long across, strips, items; /* tiles along an image's row of tiles, down an image, in all */
    int lpr, mode, vec_in, vec_out, reversed;
    float cval;
};

/* The outputs of tile `item`: its image, first output row and column, rows and columns. */
struct tile_at {
    long long image, y0, x0;
    int rows, cols;
};

template <int R>
static __device__ __forceinline__ tile_at tile_of(const tiles_params &p, long long item)
{
    const long long per_image = p.across * p.strips;
    long long strip, across;
    tile_at t;
    if (p.items <= 0xffffffffLL) { /* unsigned 32-bit divisions: a few instructions, not a 64-bit division's ~60 */
        const unsigned i = (unsigned)item, image = i / (unsigned)per_image, rest = i - image * (unsigned)per_image;
        t.image = image, strip = rest / (unsigned)p.across, across = rest - (unsigned)strip * (unsigned)p.across;
    } else {
        t.image = item / per_image;
        const long long rest = item - t.image * per_image;
        strip = rest / p.across, across = rest - strip * p.across;
    }
    t.y0 = strip * R, t.x0 = across * TILES_COLS;
    t.rows = (int)min((long long)R, p.out_rows - t.y0), t.cols = (int)min((long long)TILES_COLS, p.out_cols - t.x0);
    return t;
}

/* Staged row r is input row y0 - lpr + r, staged column s input column x0 - TILES_LEAD + s, each
 * mapped by the mode as it is copied, by cp.async (the caller commits and waits). First the
 * groups of 4 under the tile's output columns (staged groups 1 on): 16 bytes a copy where the
 * group lies inside an image whose rows start on 16 bytes, cval (4 of them) where the row is the
 * constant's, else a value at a time; then, a value a thread, the columns the windows reach on
 * either side (LPC on the left, up to K - 1 - LPC on the right past the last group), so that no
 * warp of the groups' loop waits on an edge's mapping. */
template <int K, int LPC>
static __device__ __forceinline__ void stage(const tiles_params &p, float *tile, const tile_at &t)
{
    const float *img = p.in + t.image * p.rows * p.cols;
    const int groups = (t.cols + 3) / 4, staged = t.rows + K - 1;
    /* a thread keeps its group (at most TILES_THREADS_A_ROW of them) and steps down the rows */
    const int phases = blockDim.x / TILES_THREADS_A_ROW;
    for (int g = threadIdx.x % TILES_THREADS_A_ROW; g < groups; g += TILES_THREADS_A_ROW) {
        const long long c = t.x0 + 4 * g;
        const bool whole = p.vec_in && c + 4 <= p.cols;
        for (int r = threadIdx.x / TILES_THREADS_A_ROW; r < staged; r += phases) {
            const long long y = mh_border_index(t.y0 - p.lpr + r, p.rows, p.mode);
            float *to = tile + r * TILES_STRIDE + TILES_LEAD + 4 * g;
            if (y >= 0 && whole) {
                cp_async16(to, img + y * p.cols + c);
            } else if (y < 0) {
                *reinterpret_cast<float4 *>(to) = make_float4(p.cval, p.cval, p.cval, p.cval);
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const long long m = mh_border_index(c + q, p.cols, p.mode);
                    if (m >= 0) cp_async4(to + q, img + y * p.cols + m);
                    else to[q] = p.cval;
                }
            }
        }
    }
    /* staged columns [TILES_LEAD - LPC, TILES_LEAD) and [right, TILES_LEAD + cols + K - 1 - LPC) */
    const int right = TILES_LEAD + 4 * groups, past = TILES_LEAD + t.cols + K - 1 - LPC;
    const int side = LPC + (past > right ? past - right : 0);
    for (int e = threadIdx.x; e < staged * side; e += blockDim.x) {
        const int r = e / side, h = e - r * side, s = h < LPC ? TILES_LEAD - LPC + h : right + h - LPC;
        const long long y = mh_border_index(t.y0 - p.lpr + r, p.rows, p.mode);
        const long long m = mh_border_index(t.x0 - TILES_LEAD + s, p.cols, p.mode);
        float *to = tile + r * TILES_STRIDE + s;
        if (y >= 0 && m >= 0) cp_async4(to, img + y * p.cols + m);
        else *to = p.cval;
    }
}

/* The K x K sums of a staged tile: each thread 4 output columns x TILES_ROWS_A_THREAD rows. A
 * thread's window of staged columns x .. x + 11 (three 16-byte loads; the ones no tap reads are
 * dropped at compile time) covers its outputs' windows, which start at staged column
 * TILES_LEAD + x - LPC. */
template <int K, int LPC>
static __device__ __forceinline__ void sum_tile(const tiles_params &p, const float (&w)[K * K], const float *tile,
                                                const tile_at &t)
{
    constexpr int ROWS = TILES_ROWS_A_THREAD, FIRST = TILES_LEAD - LPC;
    const int x = 4 * (threadIdx.x % TILES_THREADS_A_ROW), oy0 = (threadIdx.x / TILES_THREADS_A_ROW) * ROWS;
    if (x >= t.cols || oy0 >= t.rows) return;
    float acc[ROWS][4];
#pragma unroll
    for (int o = 0; o < ROWS; ++o)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[o][c] = 0.0f;
#pragma unroll
    for (int r = 0; r < ROWS + K - 1; ++r) {
        const float4 *row = reinterpret_cast<const float4 *>(tile + (oy0 + r) * TILES_STRIDE + x);
        float v[12];
#pragma unroll
        for (int q = 0; q < 3; ++q) {
            const float4 f = row[q];
            v[4 * q] = f.x, v[4 * q + 1] = f.y, v[4 * q + 2] = f.z, v[4 * q + 3] = f.w;
        }
#pragma unroll
        for (int o = 0; o < ROWS; ++o) {
            const int i = r - o;
            if (i < 0 || i >= K) continue;
#pragma unroll
            for (int j = 0; j < K; ++j)
#pragma unroll
                for (int c = 0; c < 4; ++c) acc[o][c] = fmaf(v[FIRST + c + j], w[i * K + j], acc[o][c]);
        }
    }
    float *dst = p.out + t.image * p.out_rows * p.out_cols + (t.y0 + oy0) * p.out_cols + t.x0 + x;
    const bool whole = p.vec_out && t.x0 + x + 4 <= p.out_cols;
#pragma unroll
    for (int o = 0; o < ROWS; ++o) {
        if (oy0 + o >= t.rows) break;
        float *at = dst + o * p.out_cols;
        if (whole) {
            __stcs(reinterpret_cast<float4 *>(at), make_float4(acc[o][0], acc[o][1], acc[o][2], acc[o][3]));
            continue;
        }
        for (int c = 0; c < 4 && t.x0 + x + c < p.out_cols; ++c) at[c] = acc[o][c];
    }
}

/* Blocks walk the tiles from blockIdx.x by gridDim.x. PIPELINED: the next tile's copies are in
 * flight into the other buffer while this one is summed (a resident grid); else one buffer,
 * staged, waited for and summed a tile at a time (a grid of one tile a block). */
template <int K, int LPC, int R, bool PIPELINED>
static __global__ void __launch_bounds__((R / TILES_ROWS_A_THREAD) * TILES_THREADS_A_ROW, PIPELINED ? 3 : 6)
    tiles_kernel(const __grid_constant__ tiles_params p)
{
    extern __shared__ __align__(16) float smem[];
    constexpr int TILE_FLOATS = (R + K - 1) * TILES_STRIDE;
    long long item = blockIdx.x;
    if (item >= p.items) return;
    float w[K * K];
#pragma unroll
    for (int t = 0; t < K * K; ++t) w[t] = __ldg(p.filter + (p.reversed ? K * K - 1 - t : t));
    tile_at here = tile_of<R>(p, item);
    stage<K, LPC>(p, smem, here);
    cp_async_commit();
    for (int k = 0; item < p.items; ++k, item += gridDim.x) {
        const long long next = item + gridDim.x;
        const tile_at after = next < p.items ? tile_of<R>(p, next) : here;
        float *tile = smem + (PIPELINED ? (k & 1) * TILE_FLOATS : 0);
        if (PIPELINED) {
            if (next < p.items) stage<K, LPC>(p, smem + ((k + 1) & 1) * TILE_FLOATS, after);
            cp_async_commit(); /* an empty group at the last tile keeps the count */
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads(); /* this tile's copies, every thread's, have landed */
        sum_tile<K, LPC>(p, w, tile, here);
        __syncthreads(); /* read before the next copies into this buffer */
        if (!PIPELINED && next < p.items) {
            stage<K, LPC>(p, smem, after);
            cp_async_commit();
        }
        here = after;
    }
}

/* ---- instances, launch, registry ----------------------------------------------------------- */

typedef void (*tiles_fn)(const tiles_params);

/* "p32": a resident grid of 32-row tiles, the next tile's copies in flight; "t16": a block a tile
 * of 16 rows. [0] is the default, the faster on the H200's stacks of images and single images
 * from 4096^2 (docs/conv2d.md). */
static const char *const tiles_configs[] = {"p32", "t16", NULL};
static const int tiles_rows[] = {32, 16};

#define MH_TILES_3(R, P) {tiles_kernel<3, 0, R, P>, tiles_kernel<3, 1, R, P>, tiles_kernel<3, 2, R, P>}
#define MH_TILES_5(R, P)                                                                                        \
    {tiles_kernel<5, 0, R, P>, tiles_kernel<5, 1, R, P>, tiles_kernel<5, 2, R, P>, tiles_kernel<5, 3, R, P>, \
     tiles_kernel<5, 4, R, P>}
/* [config][K 3 / 5][column anchor] */
static const tiles_fn tiles_kernels[2][2][5] = {{MH_TILES_3(32, true), MH_TILES_5(32, true)},
                                                {MH_TILES_3(16, false), MH_TILES_5(16, false)}};

static int tiles_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    if (mh_conv2d_is_typed(a) || mh_conv2d_is_float64(a)) {
        snprintf(why, len, "tiles reads and writes float32 images");
        return 0;
    }
    if (a->krows != a->kcols || (a->krows != 3 && a->krows != 5)) {
        snprintf(why, len, "tiles is compiled for 3 x 3 and 5 x 5 filters, not %d x %d", a->krows, a->kcols);
        return 0;
    }
    return 1;
}

static mh_status tiles_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    const int R = tiles_rows[x->config], pipelined = x->config == 0;
    tiles_params p = {};
    p.in = a->in, p.filter = a->filter, p.out = a->out;
    p.rows = (long long)a->rows, p.cols = (long long)a->cols;
    p.out_rows = (long long)a->out_rows, p.out_cols = (long long)a->out_cols;
    p.across = (long long)mh_ceil_div(a->out_cols, TILES_COLS), p.strips = (long long)mh_ceil_div(a->out_rows, R);
    p.items = p.across * p.strips * (long long)a->batch;
    p.lpr = a->lpr, p.reversed = a->reversed;
    /* an unbordered call reads zeros outside the image: the constant mode's */
    p.mode = a->bordered ? (int)a->mode : (int)MH_MODE_CONSTANT;
    p.cval = a->bordered ? a->cval : 0.0f;
    p.vec_in = conv2d_rows_on_groups(a->in, a->cols, MH_F32);
    p.vec_out = conv2d_rows_on_groups(a->out, a->out_cols, MH_F32);
    if (p.items == 0) return MH_OK;
    const tiles_fn kernel = tiles_kernels[x->config][a->krows == 5][a->lpc];
    const int threads = (R / TILES_ROWS_A_THREAD) * TILES_THREADS_A_ROW;
    const size_t smem = (size_t)(pipelined ? 2 : 1) * (R + a->krows - 1) * TILES_STRIDE * sizeof(float);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    size_t grid = MH_MAX_GRID_X;
    if (pipelined) MH_TRY(mh_resident_grid(ctx, (const void *)kernel, threads, smem, &grid));
    if ((size_t)p.items < grid) grid = (size_t)p.items;
    kernel<<<(unsigned)grid, threads, smem, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "conv2d tiles_kernel");
}

static const mh_row rows[] = {
    {{"conv2d/tiles", MH_OP_CONV2D, MH_BACKEND_CUDA, 17, "global+shared+registers", "ours",
      "3x3 and 5x5 float32: a block stages 32 x 256 outputs' inputs, mapped by the mode as they are copied, the next "
      "tile's copies in flight; any mode, images and stacks in one launch"},
     tiles_supports, tiles_run, tiles_configs, 1, MH_LIB_NONE, NULL, MH_ROW_BORDER_MODES | MH_ROW_READS_REVERSED},
};

MH_ROW_GROUP(mh_conv2d_tiles_rows, rows)

/* conv2d/separable and conv2d/lowrank: ours, for filters that are sums of r outer products,
 * filter = sum_t u_t v_t^T (Gaussian, box, Sobel's factors: r = 1; a difference of Gaussians, a
 * Laplacian of Gaussian: r = 2), where the 2-D correlation is, term by term, a horizontal pass
 * with v_t then a vertical one with u_t: r (krows + kcols) FMAs per output instead of
 * krows * kcols. separable takes r = 1, lowrank up to MH_LOWRANK_MAX_RANK.
 *
 * All passes run inside one block through shared memory (input tile -> horizontal ->
 * vertical, accumulated in registers over the terms -> output), so the image crosses device
 * memory once, as in a direct kernel: separate passes would write and reread a full
 * intermediate image, which costs more than the FMAs saved whenever the filter is small.
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

#include <stdio.h>
#include <string.h>

enum { RX = 12, TX = 16, TY = 8, THREADS = TX * TY, BH = 32, BW = TX * RX, RYV = 8 };
/* vertical work items (RYV rows of one column) a thread: its outputs' accumulators */
enum { ITEMS = BH / RYV * BW / THREADS };
static_assert(BH / RYV * BW % THREADS == 0, "every thread has ITEMS vertical items");

struct separable_params {
    const float *in;
    float *out;
    size_t rows, cols, out_rows, out_cols;
    int krows, kcols, lpr, lpc, xshift;
    tile_border border; /* zeros, or mh_conv2d_mode's mode and cval */
    /* term t's column factor u[t] (krows) and row factor v[t] (kcols) */
    float u[MH_LOWRANK_MAX_RANK][MH_CONV2D_DIRECT_MAX_K + 1], v[MH_LOWRANK_MAX_RANK][MH_CONV2D_DIRECT_MAX_K + 1];
};

struct separable_layout {
    int th, sw; /* input tile rows and stride; the horizontal result is th x BW */
    int floats;
};

static __host__ __device__ separable_layout layout_for(int krows, int kcols)
{
    separable_layout l;
    l.th = BH + krows - 1;
    l.sw = BW + ((kcols + 2 + 3) & ~3);
    l.floats = l.th * l.sw + l.th * BW;
    return l;
}

/* Horizontal pass: mid[y][x] = sum_j tile[y][x + j] v[j] for the tile's rows, RX outputs per
 * work item from one register window (compile-time indices, real taps only). */
template <int KMAX>
static __device__ __forceinline__ void horizontal(const separable_params &p, const float *v, const separable_layout &l,
                                                  const float *tile, float *mid, int tid)
{
    constexpr int STRIPS = BW / RX, W = RX + KMAX;
    const int nload = (RX + p.kcols - 1 + 3) / 4;
    for (int item = tid; item < l.th * STRIPS; item += THREADS) {
        const int y = item / STRIPS, x = (item - y * STRIPS) * RX;
        const float *src = tile + y * l.sw + x;
        float w[W], o[RX];
        load_window(w, src, nload);
#pragma unroll
        for (int r = 0; r < RX; ++r) o[r] = 0.0f;
#pragma unroll
        for (int j = 0; j < KMAX; ++j) {
            if (j >= p.kcols) break;
#pragma unroll
            for (int r = 0; r < RX; ++r) o[r] = fmaf(w[r + j], v[j], o[r]);
        }
#pragma unroll
        for (int r = 0; r < RX; r += 4)
            *reinterpret_cast<float4 *>(mid + y * BW + x + r) = make_float4(o[r], o[r + 1], o[r + 2], o[r + 3]);
    }
}

/* Vertical pass: acc[it][q] += sum_i mid[yb + q + i][x] u[i] for the thread's items it (RYV
 * rows yb.. of column x each). */
template <int KMAX>
static __device__ __forceinline__ void vertical(const separable_params &p, const float *u, const float *mid,
                                                float (&acc)[ITEMS][RYV], int tid)
{
    constexpr int W = RYV + KMAX - 1;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        const int item = tid + it * THREADS, yb = item / BW * RYV, x = item % BW;
        float w[W];
#pragma unroll
        for (int d = 0; d < W; ++d)
            if (d < RYV + p.krows - 1) w[d] = mid[(yb + d) * BW + x];
#pragma unroll
        for (int i = 0; i < KMAX; ++i) {
            if (i >= p.krows) break;
#pragma unroll
            for (int q = 0; q < RYV; ++q) acc[it][q] = fmaf(w[q + i], u[i], acc[it][q]);
        }
    }
}

/* BORDERED: the loader extends the image by mh_conv2d_mode's mode (an instance of its own, so
 * that the zero-padded one keeps a loader without the mapping, as regtile's). R: the terms. */
template <int KMAX, bool BORDERED, int R>
static __global__ void __launch_bounds__(THREADS) conv2d_separable_kernel(const __grid_constant__ separable_params p)
{
    extern __shared__ __align__(16) float smem[];
    const separable_layout l = layout_for(p.krows, p.kcols);
    float *tile = smem, *mid = smem + l.th * l.sw;
    const int tid = threadIdx.x;
    const long long y0 = (long long)blockIdx.y * BH, x0 = (long long)blockIdx.x * BW - p.xshift;
    load_rows(tile, l.sw, p.in, p.rows, p.cols, y0 - p.lpr, x0 - p.lpc, l.th, l.sw, tid, THREADS,
              BORDERED ? p.border : zero_border);
    cp_async_wait_all();
    float acc[ITEMS][RYV];
#pragma unroll
    for (int it = 0; it < ITEMS; ++it)
#pragma unroll
        for (int q = 0; q < RYV; ++q) acc[it][q] = 0.0f;
#pragma unroll
    for (int t = 0; t < R; ++t) {
        __syncthreads(); /* the tile has arrived; or the last term's vertical pass has read mid */
        horizontal<KMAX>(p, p.v[t], l, tile, mid, tid);
        __syncthreads();
        vertical<KMAX>(p, p.u[t], mid, acc, tid);
    }
    __syncthreads(); /* the input tile is free: it becomes the output stage */
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        const int item = tid + it * THREADS, yb = item / BW * RYV, x = item % BW;
#pragma unroll
        for (int q = 0; q < RYV; ++q) tile[(yb + q) * BW + x] = acc[it][q];
    }
    __syncthreads();
    store_rows(p.out, p.out_rows, p.out_cols, y0, x0, tile, BW, BH, BW, tid, THREADS);
}

/* ---- factors, launch, registry ---------------------------------------------------------- */

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

static int separable_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    return mh_tile_fits((size_t)layout_for(a->krows, a->kcols).floats * sizeof(float), a->out_rows, BH, why, len);
}

typedef void (*kernel_fn)(const separable_params);
#define MH_SEPARABLE_R(B, R) {conv2d_separable_kernel<8, B, R>, conv2d_separable_kernel<16, B, R>, \
                              conv2d_separable_kernel<32, B, R>}
#define MH_SEPARABLE_B(B) {MH_SEPARABLE_R(B, 1), MH_SEPARABLE_R(B, 2), MH_SEPARABLE_R(B, 3), MH_SEPARABLE_R(B, 4)}
/* [bordered][terms - 1][KMAX = 8, 16, 32] */
static const kernel_fn kernels[2][MH_LOWRANK_MAX_RANK][3] = {MH_SEPARABLE_B(false), MH_SEPARABLE_B(true)};
static_assert(MH_LOWRANK_MAX_RANK == 4, "one instance a number of terms");

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
    const int kmax = a->krows > a->kcols ? a->krows : a->kcols;
    const kernel_fn kernel = kernels[a->bordered][rank - 1][kmax <= 8 ? 0 : kmax <= 16 ? 1 : 2];
    const size_t bytes = (size_t)layout_for(a->krows, a->kcols).floats * sizeof(float);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    dim3 grid((unsigned)mh_ceil_div(a->out_cols + p.xshift, BW), (unsigned)mh_ceil_div(a->out_rows, BH));
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
      "rank-1 filters: horizontal then vertical 1-D pass fused in one block (refuses other filters)"},
     separable_supports, separable_run, NULL},
    {{"conv2d/lowrank", MH_OP_CONV2D, MH_BACKEND_CUDA, 11, "global+shared+registers", "ours",
      "filters of rank up to 4 (SVD in double on the host): a horizontal and a vertical pass a term, fused in one "
      "block, the terms summed in registers (refuses filters that need more)"},
     separable_supports, lowrank_run, NULL},
};

MH_ROW_GROUP(mh_conv2d_separable_rows, rows)

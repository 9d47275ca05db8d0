/* conv2d/separable: ours, for filters of rank 1 (Gaussian, box, Sobel's factors), where
 * filter = u v^T and the 2-D correlation is a horizontal pass with v then a vertical one
 * with u: krows + kcols FMAs per output instead of krows * kcols.
 *
 * Both passes run inside one block through shared memory (input tile -> horizontal ->
 * vertical -> output), so the image crosses device memory once, as in a direct kernel: two
 * separate passes would write and reread a full intermediate image, which costs more than
 * the FMAs saved whenever the filter is small.
 *
 * The filter is read back and factored on the host (mh_rank1_factor), so a call waits for
 * the context's stream; a filter whose rank-1 fit misses any tap by more than a few float32
 * epsilons of that tap is refused at run time with MH_ERR_UNSUPPORTED, nothing written. The
 * factors travel by value as a kernel parameter, so no constant memory
 * is shared between calls. */
#include "common.cuh"
#include "tile_io.cuh"
#include "conv2d_window.cuh"

#include <stdio.h>

enum { RX = 12, TX = 16, TY = 8, THREADS = TX * TY, BH = 32, BW = TX * RX, RYV = 8 };

struct separable_params {
    const float *in;
    float *out;
    size_t rows, cols, out_rows, out_cols;
    int krows, kcols, lpr, lpc, xshift;
    tile_border border; /* zeros, or mh_conv2d_mode's mode and cval */
    float u[MH_CONV2D_MAX_K + 1], v[MH_CONV2D_MAX_K + 1]; /* column and row factors */
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
static __device__ __forceinline__ void horizontal(const separable_params &p, const separable_layout &l, const float *tile,
                                                  float *mid, int tid)
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
            for (int r = 0; r < RX; ++r) o[r] = fmaf(w[r + j], p.v[j], o[r]);
        }
#pragma unroll
        for (int r = 0; r < RX; r += 4)
            *reinterpret_cast<float4 *>(mid + y * BW + x + r) = make_float4(o[r], o[r + 1], o[r + 2], o[r + 3]);
    }
}

/* Vertical pass: out[y][x] = sum_i mid[y + i][x] u[i], RYV rows of one column per item. */
template <int KMAX>
static __device__ __forceinline__ void vertical(const separable_params &p, const float *mid, float *stage, int tid)
{
    constexpr int W = RYV + KMAX - 1;
    for (int item = tid; item < (BH / RYV) * BW; item += THREADS) {
        const int yb = item / BW * RYV, x = item % BW;
        float w[W], o[RYV];
#pragma unroll
        for (int d = 0; d < W; ++d)
            if (d < RYV + p.krows - 1) w[d] = mid[(yb + d) * BW + x];
#pragma unroll
        for (int q = 0; q < RYV; ++q) o[q] = 0.0f;
#pragma unroll
        for (int i = 0; i < KMAX; ++i) {
            if (i >= p.krows) break;
#pragma unroll
            for (int q = 0; q < RYV; ++q) o[q] = fmaf(w[q + i], p.u[i], o[q]);
        }
#pragma unroll
        for (int q = 0; q < RYV; ++q) stage[(yb + q) * BW + x] = o[q];
    }
}

/* BORDERED: the loader extends the image by mh_conv2d_mode's mode (an instance of its own, so
 * that the zero-padded one keeps a loader without the mapping, as regtile's). */
template <int KMAX, bool BORDERED>
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
    __syncthreads();
    horizontal<KMAX>(p, l, tile, mid, tid);
    __syncthreads();
    vertical<KMAX>(p, mid, tile, tid); /* the input tile is free: it becomes the output stage */
    __syncthreads();
    store_rows(p.out, p.out_rows, p.out_cols, y0, x0, tile, BW, BH, BW, tid, THREADS);
}

/* ---- launch, registry -------------------------------------------------------------------- */

static int separable_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    return mh_tile_fits((size_t)layout_for(a->krows, a->kcols).floats * sizeof(float), a->out_rows, BH, why, len);
}

static mh_status separable_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    separable_params p = {};
    float f[MH_CONV2D_MAX_K * MH_CONV2D_MAX_K];
    const size_t fbytes = (size_t)a->krows * a->kcols * sizeof(float);
    MH_CUDA_TRY(ctx, cudaMemcpyAsync(f, a->filter, fbytes, cudaMemcpyDeviceToHost, mh_stream(ctx)));
    MH_CUDA_TRY(ctx, cudaStreamSynchronize(mh_stream(ctx)));
    mh_rank1_fit fit;
    if (!mh_rank1_factor(f, a->krows, a->kcols, p.u, p.v, &fit))
        return mh_fail(ctx, MH_ERR_UNSUPPORTED,
                       "conv2d/separable: the %d x %d filter is not rank 1 within FP32 accuracy: its rank-1 fit "
                       "gives filter[%d][%d] = %.9g as %.9g, off by %.3g float32 epsilons of the tap (the limit is "
                       "%g, so that no output moves past the FP32 bound); use a direct variant",
                       a->krows, a->kcols, fit.row, fit.col, fit.tap, fit.fitted, fit.eps, MH_RANK1_TAP_EPS);
    p.in = a->in, p.out = a->out;
    p.rows = a->rows, p.cols = a->cols, p.out_rows = a->out_rows, p.out_cols = a->out_cols;
    p.krows = a->krows, p.kcols = a->kcols, p.lpr = a->lpr, p.lpc = a->lpc;
    p.xshift = conv2d_xshift(a);
    p.border = {(int)a->mode, a->cval};
    const int kmax = a->krows > a->kcols ? a->krows : a->kcols;
    typedef void (*kernel_fn)(const separable_params);
    static const kernel_fn kernels[2][3] = {
        {conv2d_separable_kernel<8, false>, conv2d_separable_kernel<16, false>, conv2d_separable_kernel<32, false>},
        {conv2d_separable_kernel<8, true>, conv2d_separable_kernel<16, true>, conv2d_separable_kernel<32, true>}};
    const kernel_fn kernel = kernels[a->bordered][kmax <= 8 ? 0 : kmax <= 16 ? 1 : 2];
    const size_t bytes = (size_t)layout_for(a->krows, a->kcols).floats * sizeof(float);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    dim3 grid((unsigned)mh_ceil_div(a->out_cols + p.xshift, BW), (unsigned)mh_ceil_div(a->out_rows, BH));
    kernel<<<grid, THREADS, bytes, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "conv2d_separable_kernel");
}

static const mh_row rows[] = {
    {{"conv2d/separable", MH_OP_CONV2D, MH_BACKEND_CUDA, 10, "global+shared+registers", "ours",
      "rank-1 filters: horizontal then vertical 1-D pass fused in one block (refuses other filters)"},
     separable_supports, separable_run, NULL},
};

MH_ROW_GROUP(mh_conv2d_separable_rows, rows)

/* conv2d/float64: ours, for mh_conv2d_float64's calls (scipy.ndimage.correlate on images whose
 * values float32 does not hold: float64, 32- and 64-bit integers, or an integer output whose
 * truncation must see scipy's exact sum).
 *
 * scipy adds an output's products in the filter's C order, each product rounded before the add;
 * an integer output truncates the sum, so a sum one rounding below a whole number stores one less
 * (nine 5s times 1/9 sum to 4.999999999999999 and store 4). Any other order, or a fused
 * multiply-add, lands on the other side of whole numbers for a few percent of a box filter's
 * outputs. So a thread sums each of its outputs in that order (mh_mul_rn then mh_add_rn, which the
 * compiler never contracts) and stores it with scipy's cast: one pass over the image, where
 * adding a shifted copy of the image for each tap took as many passes as taps.
 *
 * A block computes a tile of W_ROWS x W_TW outputs from the tile's window of the input, read once
 * (each index mapped by the mode, cval outside in constant mode) and widened to double in shared
 * memory. A warp's lanes take neighbouring rows (rows an odd number of doubles apart, so that a
 * half warp's 8-byte loads fall in distinct banks) and a thread W_R neighbouring outputs of its
 * row: for each filter row it loads the W_R + kcols - 1 values under them into registers once and
 * adds every tap of that row to each of its W_R sums (rows, then columns: each output's own C
 * order). The weights travel in the kernel's parameters, dense, with a bit a weight for scipy's
 * footprint (past DBL_EPSILON in magnitude), read at indices the whole block shares. The sums are
 * staged in shared memory and stored a row at a time with scipy's cast. */
#include "common.cuh"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/rounded.h"

#include <float.h>
#include <math.h>

enum { W_THREADS = 256, W_ROWS = 32, W_R = 8, W_TW = W_THREADS / 32 * W_R, W_STAGE = W_TW + 1 };
enum { W_MAX_K = MH_CONV2D_DIRECT_MAX_K };

struct f64w_params {
    const void *in;
    void *out;
    long long rows, cols, image_values, col_tiles;
    int in_type, out_type, mode, krows, kcols, lpr, lpc;
    double cval;
    double w[W_MAX_K * W_MAX_K]; /* C order, krows x kcols */
    unsigned keep[W_MAX_K];      /* bit j of keep[i]: weight (i, j) is in scipy's footprint */
};

/* Shared memory of a tile, in doubles: th rows of tw values, stride sw (odd). */
static inline __host__ __device__ int tile_stride(int kcols) { return (W_TW + kcols - 1) | 1; }

static inline __host__ __device__ size_t tile_doubles(int krows, int kcols)
{
    const size_t tile = (size_t)(W_ROWS + krows - 1) * (size_t)tile_stride(kcols), stage = (size_t)W_ROWS * W_STAGE;
    return tile > stage ? tile : stage;
}

/* BATCH rows of the tile's window from their source rows (NULL: cval), a warp's lanes along them;
 * MAPPED: the window crosses the left or right edge, so each column is mapped by the mode. */
template <typename T, int BATCH, bool MAPPED>
static __device__ __forceinline__ void load_rows(const f64w_params &p, const T *const *src, double *tile, int r0,
                                                 int th, long long left)
{
    constexpr int WARPS = W_THREADS / 32;
    const int tw = W_TW + p.kcols - 1, sw = tile_stride(p.kcols);
    for (int t = threadIdx.x % 32; t < tw; t += 32) {
        const long long x = MAPPED ? mh_border_index(left + t, p.cols, (mh_mode)p.mode) : left + t;
        T v[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; ++b)
            if (src[b] && x >= 0) v[b] = src[b][x];
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            const int rr = r0 + b * WARPS;
            if (rr < th) tile[rr * sw + t] = src[b] && x >= 0 ? (double)v[b] : p.cval;
        }
    }
}

/* The tile's window: value (rr, t) is the input at row y0 - lpr + rr, column x0 - lpc + t, each
 * index mapped by the mode (cval where a constant mode reaches), widened to double. A warp copies
 * rows, BATCH of them in flight before any is stored, each row's source found once; the columns
 * are mapped only in the blocks whose window crosses the left or right edge. */
template <typename T>
static __device__ void load_window(const f64w_params &p, const T *in, double *tile, long long y0, long long x0)
{
    constexpr int WARPS = W_THREADS / 32, BATCH = 4;
    const int th = W_ROWS + p.krows - 1, tw = W_TW + p.kcols - 1;
    const long long top = y0 - p.lpr, left = x0 - p.lpc;
    const bool cols_inside = left >= 0 && left + tw <= p.cols;
    for (int r0 = threadIdx.x / 32; r0 < th; r0 += BATCH * WARPS) {
        const T *src[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            const int rr = r0 + b * WARPS;
            const long long y = rr < th ? mh_border_index(top + rr, p.rows, (mh_mode)p.mode) : -1;
            src[b] = y >= 0 ? in + y * p.cols : nullptr;
        }
        if (cols_inside) load_rows<T, BATCH, false>(p, src, tile, r0, th, left);
        else load_rows<T, BATCH, true>(p, src, tile, r0, th, left);
    }
}

/* A thread's W_R sums: each filter row's values under them in registers, each tap of the row
 * (those of the footprint) added to every sum, the product rounded on its own (rounded.h: never a
 * fused multiply-add). KMAX bounds kcols. */
template <int KMAX>
static __device__ __forceinline__ void window_sums(const f64w_params &p, const double *tile, int row, int c0,
                                                   double *sum)
{
    const int sw = tile_stride(p.kcols);
    for (int di = 0; di < p.krows; ++di) {
        const double *s = tile + (row + di) * sw + c0;
        double x[W_R + KMAX - 1];
#pragma unroll
        for (int m = 0; m < W_R + KMAX - 1; ++m) x[m] = m < W_R + p.kcols - 1 ? s[m] : 0.0;
        const unsigned keep = p.keep[di];
#pragma unroll
        for (int dj = 0; dj < KMAX; ++dj) {
            if (dj >= p.kcols) break;
            if (!((keep >> dj) & 1u)) continue;
            const double w = p.w[di * p.kcols + dj];
#pragma unroll
            for (int q = 0; q < W_R; ++q) sum[q] = mh_add_rn(sum[q], mh_mul_rn(x[q + dj], w));
        }
    }
}

/* The staged sums stored, a warp a row, with scipy's cast into OUT (a constant: no switch an output). */
template <int OUT>
static __device__ __forceinline__ void store_rows(const f64w_params &p, const double *stage, size_t base, long long y0,
                                                  long long x0)
{
    for (int r = threadIdx.x / 32; r < W_ROWS && y0 + r < p.rows; r += W_THREADS / 32)
        for (int c = threadIdx.x % 32; c < W_TW && x0 + c < p.cols; c += 32)
            mh_store_double(p.out, base + (size_t)((y0 + r) * p.cols + x0 + c), (mh_dtype)OUT, stage[r * W_STAGE + c]);
}

static __device__ void store_tile(const f64w_params &p, const double *stage, size_t base, long long y0, long long x0)
{
    switch ((mh_dtype)p.out_type) {
    case MH_F64: store_rows<MH_F64>(p, stage, base, y0, x0); break;
    case MH_F32: store_rows<MH_F32>(p, stage, base, y0, x0); break;
    case MH_I64: store_rows<MH_I64>(p, stage, base, y0, x0); break;
    case MH_U64: store_rows<MH_U64>(p, stage, base, y0, x0); break;
    case MH_I32: store_rows<MH_I32>(p, stage, base, y0, x0); break;
    case MH_U32: store_rows<MH_U32>(p, stage, base, y0, x0); break;
    case MH_I16: store_rows<MH_I16>(p, stage, base, y0, x0); break;
    case MH_U16: store_rows<MH_U16>(p, stage, base, y0, x0); break;
    case MH_I8: store_rows<MH_I8>(p, stage, base, y0, x0); break;
    default: store_rows<MH_U8>(p, stage, base, y0, x0); break; /* MH_U8: float16 and bfloat16 are refused */
    }
}

template <typename T, int KMAX>
static __global__ void __launch_bounds__(W_THREADS) window_kernel(const __grid_constant__ f64w_params p)
{
    extern __shared__ double smem_w[];
    const unsigned col_tiles = (unsigned)p.col_tiles; /* at most blocks_of: a grid's 2^31 - 1 */
    const long long y0 = (long long)(blockIdx.x / col_tiles) * W_ROWS;
    const long long x0 = (long long)(blockIdx.x % col_tiles) * W_TW;
    const size_t base = (size_t)blockIdx.y * (size_t)p.image_values;
    load_window(p, (const T *)p.in + base, smem_w, y0, x0);
    __syncthreads();
    const int row = threadIdx.x % 32, c0 = threadIdx.x / 32 * W_R;
    double sum[W_R];
#pragma unroll
    for (int q = 0; q < W_R; ++q) sum[q] = 0.0;
    window_sums<KMAX>(p, smem_w, row, c0, sum);
    __syncthreads(); /* the tile read: its memory stages the sums */
#pragma unroll
    for (int q = 0; q < W_R; ++q) smem_w[row * W_STAGE + c0 + q] = sum[q];
    __syncthreads();
    store_tile(p, smem_w, base, y0, x0);
}

typedef void (*f64w_kernel)(const f64w_params);

template <typename T>
static f64w_kernel kernel_of(int kcols)
{
    return kcols <= 4 ? window_kernel<T, 4> : kcols <= 8 ? window_kernel<T, 8> : kcols <= 16 ? window_kernel<T, 16>
                                                                                             : window_kernel<T, 32>;
}

/* The kernel reading the input's type (bool arrives as uint8) for the filter's columns. */
static f64w_kernel kernel_for(mh_dtype t, int kcols)
{
    switch (t) {
    case MH_F64: return kernel_of<double>(kcols);
    case MH_F32: return kernel_of<float>(kcols);
    case MH_I64: return kernel_of<long long>(kcols);
    case MH_U64: return kernel_of<unsigned long long>(kcols);
    case MH_I32: return kernel_of<int>(kcols);
    case MH_U32: return kernel_of<unsigned>(kcols);
    case MH_I16: return kernel_of<short>(kcols);
    case MH_U16: return kernel_of<unsigned short>(kcols);
    case MH_I8: return kernel_of<signed char>(kcols);
    default: return kernel_of<unsigned char>(kcols); /* MH_U8: float16 and bfloat16 are refused */
    }
}

/* The weights, dense, and scipy's footprint: the weights past DBL_EPSILON in magnitude. */
static void weights_of(const mh_conv2d_args *a, f64w_params *p)
{
    for (int i = 0; i < a->krows; ++i) {
        p->keep[i] = 0;
        for (int j = 0; j < a->kcols; ++j) {
            const double w = a->filter64[i * a->kcols + j];
            p->w[i * a->kcols + j] = w;
            if (fabs(w) > DBL_EPSILON) p->keep[i] |= 1u << j;
        }
    }
}

static size_t blocks_of(const mh_conv2d_args *a)
{
    return mh_ceil_div(a->rows, W_ROWS) * mh_ceil_div(a->cols, W_TW);
}

static int float64_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    if (!mh_conv2d_is_float64(a)) {
        snprintf(why, len, "it computes mh_conv2d_float64's calls only");
        return 0;
    }
    if (blocks_of(a) > 0x7fffffff) {
        snprintf(why, len, "%zu blocks an image: more than a grid's 2^31 - 1", blocks_of(a));
        return 0;
    }
    return 1; /* row_accepts refuses the filters past MH_CONV2D_DIRECT_MAX_K a side */
}

static mh_status float64_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    f64w_params p;
    weights_of(a, &p);
    p.rows = (long long)a->rows, p.cols = (long long)a->cols, p.image_values = p.rows * p.cols;
    p.col_tiles = (long long)mh_ceil_div(a->cols, W_TW);
    p.in_type = (int)a->in_type, p.out_type = (int)a->out_type, p.mode = (int)a->mode;
    p.krows = a->krows, p.kcols = a->kcols, p.lpr = a->lpr, p.lpc = a->lpc, p.cval = a->cval64;
    const f64w_kernel kernel = kernel_for(a->in_type, a->kcols);
    const size_t smem = tile_doubles(a->krows, a->kcols) * sizeof(double);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    const size_t in_size = mh_dtype_size(a->in_type), out_size = mh_dtype_size(a->out_type);
    return mh_per_grid_slice(a->batch, [&](size_t first, unsigned images) { /* gridDim.y: images */
        p.in = (const char *)a->in + first * (size_t)p.image_values * in_size;
        p.out = (char *)a->out + first * (size_t)p.image_values * out_size;
        kernel<<<dim3((unsigned)blocks_of(a), images), W_THREADS, smem, mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "conv2d window_kernel");
    });
}

static const mh_row rows[] = {
    {{"conv2d/float64", MH_OP_CONV2D, MH_BACKEND_CUDA, 16, "global+shared+registers", "ours",
      "a float64 call: scipy's sums in its order, the tile's window in shared memory as double"},
     float64_supports, float64_run, NULL, 1, MH_LIB_NONE, NULL, MH_ROW_FLOAT64 | MH_ROW_BORDER_MODES},
};

MH_ROW_GROUP(mh_conv2d_float64_rows, rows)

/* conv2d/float64: ours, for mh_conv2d_float64's calls (scipy.ndimage.correlate on images whose
 * values float32 does not hold: float64, 32- and 64-bit integers, or an integer output whose
 * truncation must see scipy's exact sum).
 *
 * scipy adds an output's products in the filter's C order, each product rounded before the add;
 * an integer output truncates the sum, so a sum one rounding below a whole number stores one less
 * (nine 5s times 1/9 sum to 4.999999999999999 and store 4). Any other order, or a fused
 * multiply-add, lands on the other side of whole numbers for a few percent of a box filter's
 * outputs. So a thread sums each of its outputs in that order (__dmul_rn then __dadd_rn, which the
 * compiler never contracts) and stores it with scipy's cast: one pass over the image, where
 * adding a shifted copy of the image for each tap took as many passes as taps.
 *
 * The weights past DBL_EPSILON in magnitude (scipy's footprint) travel in the kernel's parameters
 * with their row and column in the filter and their offset in the image: every thread of a warp
 * reads the same tap at the same time, a broadcast from the constant bank. A warp covers 32
 * neighbouring outputs of a row, so each tap's loads are coalesced and the window's rows stay in
 * L1 between taps; a thread computes F64C_R outputs of a column, F64C_TY rows apart, so each
 * tap's weight and offset are read once for them. A block whose windows all lie inside the image
 * reads at the taps' offsets; a block at the border maps each index by the mode (cval in
 * constant mode). */
#include "common.cuh"
#include "../core/border.h"
#include "../core/dtype.h"

#include <float.h>
#include <math.h>

enum { F64C_TX = 32, F64C_TY = 8, F64C_R = 4, F64C_BH = F64C_TY * F64C_R };
enum { F64C_MAX_TAPS = MH_CONV2D_DIRECT_MAX_K * MH_CONV2D_DIRECT_MAX_K };

struct f64c_params {
    const void *in;
    void *out;
    long long rows, cols, image_values, col_blocks;
    int in_type, out_type, mode, krows, kcols, lpr, lpc, ntaps;
    double cval;
    double w[F64C_MAX_TAPS];
    long long off[F64C_MAX_TAPS];                       /* the tap's offset from its window's corner */
    unsigned char di[F64C_MAX_TAPS], dj[F64C_MAX_TAPS]; /* the tap's row and column in the filter */
};

/* A product rounded on its own (__dmul_rn) and added (__dadd_rn): never contracted into a fused
 * multiply-add. */
static __device__ __forceinline__ double add_product(double sum, double value, double w)
{
    return __dadd_rn(sum, __dmul_rn(value, w));
}

/* The F64C_R outputs of a thread in a block inside the image: each tap's weight and offset read
 * once for them. */
template <typename T>
static __device__ __forceinline__ void inside_sums(const f64c_params &p, const T *corner, double *sum)
{
    const size_t step = (size_t)F64C_TY * (size_t)p.cols;
#pragma unroll 2
    for (int t = 0; t < p.ntaps; ++t) {
        const T *at = corner + p.off[t];
        const double w = p.w[t];
#pragma unroll
        for (int q = 0; q < F64C_R; ++q) sum[q] = add_product(sum[q], (double)__ldg(at + q * step), w);
    }
}

/* One output at the border: each index mapped by the mode, cval outside in constant mode. */
template <typename T>
static __device__ double border_sum(const f64c_params &p, const T *in, long long r, long long c)
{
    double sum = 0.0;
    for (int t = 0; t < p.ntaps; ++t) {
        const long long y = mh_border_index(r - p.lpr + p.di[t], p.rows, (mh_mode)p.mode);
        const long long x = mh_border_index(c - p.lpc + p.dj[t], p.cols, (mh_mode)p.mode);
        const double v = y < 0 || x < 0 ? p.cval : (double)__ldg(in + (size_t)y * (size_t)p.cols + (size_t)x);
        sum = add_product(sum, v, p.w[t]);
    }
    return sum;
}

template <typename T>
static __global__ void __launch_bounds__(F64C_TX *F64C_TY) float64_kernel(const __grid_constant__ f64c_params p)
{
    const long long r0 = (long long)(blockIdx.x / p.col_blocks) * F64C_BH;
    const long long c0 = (long long)(blockIdx.x % p.col_blocks) * F64C_TX;
    const long long r = r0 + threadIdx.y, c = c0 + threadIdx.x;
    const T *in = (const T *)p.in + (size_t)blockIdx.y * (size_t)p.image_values;
    const size_t out_base = (size_t)blockIdx.y * (size_t)p.image_values;
    /* every window of the block inside the image */
    const bool inside = r0 - p.lpr >= 0 && c0 - p.lpc >= 0 && r0 + F64C_BH - p.lpr + p.krows <= p.rows + 1 &&
                        c0 + F64C_TX - p.lpc + p.kcols <= p.cols + 1;
    if (inside) {
        double sum[F64C_R];
#pragma unroll
        for (int q = 0; q < F64C_R; ++q) sum[q] = 0.0;
        inside_sums(p, in + (size_t)(r - p.lpr) * (size_t)p.cols + (size_t)(c - p.lpc), sum);
#pragma unroll
        for (int q = 0; q < F64C_R; ++q)
            mh_store_double(p.out, out_base + (size_t)(r + q * F64C_TY) * (size_t)p.cols + (size_t)c,
                            (mh_dtype)p.out_type, sum[q]);
        return;
    }
    if (c >= p.cols) return;
    for (int q = 0; q < F64C_R && r + q * F64C_TY < p.rows; ++q) {
        const long long rq = r + q * F64C_TY;
        mh_store_double(p.out, out_base + (size_t)rq * (size_t)p.cols + (size_t)c, (mh_dtype)p.out_type,
                        border_sum(p, in, rq, c));
    }
}

typedef void (*f64c_kernel)(const f64c_params);

/* The kernel reading the input's type (bool arrives as uint8). */
static f64c_kernel kernel_for(mh_dtype t)
{
    switch (t) {
    case MH_F64: return float64_kernel<double>;
    case MH_F32: return float64_kernel<float>;
    case MH_I64: return float64_kernel<long long>;
    case MH_U64: return float64_kernel<unsigned long long>;
    case MH_I32: return float64_kernel<int>;
    case MH_U32: return float64_kernel<unsigned>;
    case MH_I16: return float64_kernel<short>;
    case MH_U16: return float64_kernel<unsigned short>;
    case MH_I8: return float64_kernel<signed char>;
    default: return float64_kernel<unsigned char>; /* MH_U8: float16 and bfloat16 are refused */
    }
}

/* scipy's footprint: the weights past DBL_EPSILON in magnitude, in C order (at most
 * F64C_MAX_TAPS: the sides are at most MH_CONV2D_DIRECT_MAX_K). */
static void footprint(const mh_conv2d_args *a, f64c_params *p)
{
    p->ntaps = 0;
    for (int i = 0; i < a->krows; ++i)
        for (int j = 0; j < a->kcols; ++j) {
            const double w = a->filter64[i * a->kcols + j];
            if (!(fabs(w) > DBL_EPSILON)) continue;
            p->w[p->ntaps] = w, p->di[p->ntaps] = (unsigned char)i, p->dj[p->ntaps] = (unsigned char)j;
            p->off[p->ntaps] = (long long)i * (long long)a->cols + j;
            ++p->ntaps;
        }
}

static size_t blocks_of(const mh_conv2d_args *a)
{
    return mh_ceil_div(a->rows, F64C_BH) * mh_ceil_div(a->cols, F64C_TX);
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
    f64c_params p;
    footprint(a, &p);
    p.rows = (long long)a->rows, p.cols = (long long)a->cols, p.image_values = p.rows * p.cols;
    p.col_blocks = (long long)mh_ceil_div(a->cols, F64C_TX);
    p.in_type = (int)a->in_type, p.out_type = (int)a->out_type, p.mode = (int)a->mode;
    p.krows = a->krows, p.kcols = a->kcols, p.lpr = a->lpr, p.lpc = a->lpc, p.cval = a->cval64;
    const f64c_kernel kernel = kernel_for(a->in_type);
    const size_t in_size = mh_dtype_size(a->in_type), out_size = mh_dtype_size(a->out_type);
    return mh_per_grid_slice(a->batch, [&](size_t first, unsigned images) { /* gridDim.y: images */
        p.in = (const char *)a->in + first * (size_t)p.image_values * in_size;
        p.out = (char *)a->out + first * (size_t)p.image_values * out_size;
        kernel<<<dim3((unsigned)blocks_of(a), images), dim3(F64C_TX, F64C_TY), 0, mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "conv2d float64_kernel");
    });
}

static const mh_row rows[] = {
    {{"conv2d/float64", MH_OP_CONV2D, MH_BACKEND_CUDA, 16, "global+L1", "ours",
      "a float64 call: scipy's sums in its order, a thread four outputs of a column"},
     float64_supports, float64_run, NULL, 1, MH_LIB_NONE, NULL, MH_ROW_FLOAT64 | MH_ROW_BORDER_MODES},
};

MH_ROW_GROUP(mh_conv2d_float64_rows, rows)

/* sepfilter/lines: ours, for a filter of the vertical axis alone (correlate1d, gaussian_filter1d
 * and each pass scipy runs alone along any axis but an array's last): the horizontal axis the
 * single tap 1, so each output is one 1-D correlation down its column of values, cast once to
 * the output's type. (Along the rows, sepfilter/fused's tiles serve.)
 *
 * No shared-memory tile: a thread owns one column of values and a segment of its rows, and walks
 * down it R rows at a time, loading the R + ntaps - 1 values a strip needs straight into a
 * register window and summing R outputs from it. A warp's lanes hold 32 neighbouring columns,
 * so every load and store is coalesced; the rows a strip shares with the one before it were
 * just loaded by the same thread and come from L1. DRAM sees each value read once and written
 * once, the copy's traffic, and no block waits on a shared-memory tile to fill before it
 * computes, nor runs the identity pass that sepfilter/fused, built for two axes, would.
 *
 * Each output sums its taps in the same order from 0.0f as fused's vertical pass and is
 * finished by the same cast, so the two rows agree bit for bit (the CPU row too); the other
 * axis's cast (of the input, where the identity pass runs first) is applied as values load.
 * A call with a wide type (mh_sepfilter_in_double) runs the same walk in double: a window of
 * doubles, float64 taps, scipy's casts from double, as the CPU row's float64 pass sums. */
#include "common.cuh"
#include "../core/border.h"
#include "../core/dtype.h"

#include <type_traits>

enum { LINES_THREADS = 128, LINES_SEGMENT_SLOTS = 2 /* mh_column_segment_rows' */ };

struct lines_params {
    const void *in;
    void *out;
    long long rows, width; /* width: the values a row holds (cols x channels), each a column */
    long long image_values, seg; /* seg: rows a thread walks, a multiple of its strip */
    int in_type, out_type;
    int in_bytes, out_bytes; /* their element sizes, found once on the host */
    int cast_in; /* the identity pass runs first: values cast to out_type as loaded */
    int ntaps, anchor, mode;
    double cval, divisor;
    const float *dev_taps; /* device taps, or NULL: taps (a float64 call: taps64) */
    int rev; /* device taps read from their end (mh_sepfilter_axis.reversed) */
    float taps[MH_SEPFILTER_MAX_TAPS + 1];
    double taps64[MH_SEPFILTER_MAX_TAPS + 1];
};

/* What a kernel reads and computes in: float32 images, other narrow types (in float32), or a call
 * with a wide type (in float64). */
enum { LINES_F32, LINES_TYPED, LINES_WIDE };
template <int KIND>
using lines_value = typename std::conditional<KIND == LINES_WIDE, double, float>::type;

template <int KIND>
static __device__ __forceinline__ lines_value<KIND> load_value(const lines_params &p, const void *in, long long i)
{
    if constexpr (KIND == LINES_F32) {
        return __ldg((const float *)in + i);
    } else if constexpr (KIND == LINES_WIDE) {
        const double v = mh_load_double(in, (size_t)i, (mh_dtype)p.in_type);
        return p.cast_in ? mh_cast_double(v, (mh_dtype)p.out_type) : v;
    } else {
        const float v = mh_load_value(in, (size_t)i, (mh_dtype)p.in_type);
        return p.cast_in ? mh_cast_value(v, (mh_dtype)p.out_type) : v;
    }
}

/* fma in the window's type (CUDA's overloads: float's fmaf for float) */
template <class V> static __device__ __forceinline__ V fused_multiply_add(V a, V b, V c) { return fma(a, b, c); }

/* Output i, the sum o finished (divided, cast) and stored in the output's type. */
template <int KIND>
static __device__ __forceinline__ void store_value(const lines_params &p, void *out, long long i, lines_value<KIND> o)
{
    if constexpr (KIND == LINES_WIDE) {
        mh_store_double(out, (size_t)i, (mh_dtype)p.out_type, p.divisor != 1.0 ? o / p.divisor : o);
    } else {
        const float v = mh_finish_value(o, (float)p.divisor, KIND == LINES_F32 ? MH_F32 : (mh_dtype)p.out_type);
        if (KIND == LINES_F32) ((float *)out)[i] = v;
        else mh_store_value(out, (size_t)i, (mh_dtype)p.out_type, v);
    }
}

/* R outputs down column t from row y0: the register window w[d] = the column's value at row
 * y0 - anchor + d, extended past the edges by the mode (cval, uncast, for constant). */
template <int R, int KMAX, int KIND>
static __device__ __forceinline__ void strip(const lines_params &p, const lines_value<KIND> *taps, const void *in,
                                             void *out, long long t, long long y0, long long y_end)
{
    using V = lines_value<KIND>;
    constexpr int W = R + KMAX - 1;
    const int need = R + p.ntaps - 1;
    const long long first = y0 - p.anchor;
    V w[W], o[R];
    if (first >= 0 && first + need <= p.rows) {
        const long long at = first * p.width + t;
#pragma unroll
        for (int d = 0; d < W; ++d)
            if (d < need) w[d] = load_value<KIND>(p, in, at + d * p.width);
    } else {
#pragma unroll
        for (int d = 0; d < W; ++d)
            if (d < need) {
                const long long q = mh_border_index(first + d, p.rows, p.mode);
                w[d] = q < 0 ? (V)p.cval : load_value<KIND>(p, in, q * p.width + t);
            }
    }
#pragma unroll
    for (int q = 0; q < R; ++q) o[q] = 0;
#pragma unroll
    for (int i = 0; i < KMAX; ++i) {
        if (i >= p.ntaps) break;
        const V u = taps[i];
#pragma unroll
        for (int q = 0; q < R; ++q) o[q] = fused_multiply_add(w[q + i], u, o[q]);
    }
#pragma unroll
    for (int q = 0; q < R; ++q)
        if (y0 + q < y_end) store_value<KIND>(p, out, (y0 + q) * p.width + t, o[q]);
}

template <int R, int KMAX, int KIND>
static __global__ void __launch_bounds__(LINES_THREADS) column_kernel(const __grid_constant__ lines_params p)
{
    __shared__ lines_value<KIND> taps[KMAX];
    for (int i = threadIdx.x; i < p.ntaps; i += LINES_THREADS)
        taps[i] = p.dev_taps ? (lines_value<KIND>)p.dev_taps[p.rev ? p.ntaps - 1 - i : i]
                  : KIND == LINES_WIDE ? p.taps64[i] : p.taps[i];
    __syncthreads();
    const long long t = (long long)blockIdx.x * LINES_THREADS + threadIdx.x;
    if (t >= p.width) return;
    const size_t image = (size_t)blockIdx.z * (size_t)p.image_values;
    const void *in = (const char *)p.in + image * (size_t)p.in_bytes;
    void *out = (char *)p.out + image * (size_t)p.out_bytes;
    const long long y_begin = (long long)blockIdx.y * p.seg;
    const long long y_end = y_begin + p.seg < p.rows ? y_begin + p.seg : p.rows;
    for (long long y0 = y_begin; y0 < y_end; y0 += R) strip<R, KMAX, KIND>(p, taps, in, out, t, y0, y_end);
}

/* ---- launch, registry -------------------------------------------------------------------- */

typedef void (*lines_fn)(const lines_params);

enum { LINES_MAX_TAPS = 64 };

/* A kind's instances by the taps their windows hold: 8, 16, 32 (strips of 16 rows) and
 * LINES_MAX_TAPS (strips of 8). They are built in three translation units, so that no compile is
 * long (all twelve in one took 105 s on 16 jobs, the library's critical path; the typed and wide
 * ones convert every load and store, unrolled over the window): sepfilter_lines_typed.cu and
 * sepfilter_lines_wide.cu include this file with MH_LINES_UNIT set to 1 or 2 and build that
 * kind's; this unit builds float32's and the host code. */
#define MH_LINES_KERNELS(KIND)                                                                           \
    {column_kernel<16, 8, KIND>, column_kernel<16, 16, KIND>, column_kernel<16, 32, KIND>,                \
     column_kernel<8, LINES_MAX_TAPS, KIND>}
extern const lines_fn mh_lines_typed_kernels[4], mh_lines_wide_kernels[4];
#if MH_LINES_UNIT == 1
const lines_fn mh_lines_typed_kernels[4] = MH_LINES_KERNELS(LINES_TYPED);
#elif MH_LINES_UNIT == 2
const lines_fn mh_lines_wide_kernels[4] = MH_LINES_KERNELS(LINES_WIDE);
#else
static const lines_fn f32_kernels[4] = MH_LINES_KERNELS(LINES_F32);

/* A strip of 16 rows where the window stays small; 8 where it holds up to 64 taps. */
static lines_fn kernel_of_kind(int kind, int ntaps, int *strip_rows)
{
    *strip_rows = ntaps <= 32 ? 16 : 8;
    const lines_fn *of_kind = kind == LINES_F32 ? f32_kernels : kind == LINES_WIDE ? mh_lines_wide_kernels
                                                                                   : mh_lines_typed_kernels;
    return of_kind[ntaps <= 8 ? 0 : ntaps <= 16 ? 1 : ntaps <= 32 ? 2 : 3];
}

static int lines_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    if (!mh_sepfilter_is_identity(&d->horizontal, a->htaps_on_device)) {
        snprintf(why, len, "it filters the vertical axis alone (the horizontal one the single tap 1)");
        return 0;
    }
    if (d->order == MH_SEPFILTER_SUM) {
        snprintf(why, len, "it runs one pass, not the sum of two (laplace)");
        return 0;
    }
    if (d->vertical.ntaps > LINES_MAX_TAPS) {
        snprintf(why, len, "its register windows hold at most %d taps (this call has %zu)", (int)LINES_MAX_TAPS,
                 d->vertical.ntaps);
        return 0;
    }
    if (mh_ceil_div(d->cols * d->channels, LINES_THREADS) > 0x7fffffff) {
        snprintf(why, len, "%zu values a row: more than a grid's 2^31 - 1 blocks of %d", d->cols * d->channels,
                 (int)LINES_THREADS);
        return 0;
    }
    return 1;
}

static mh_status lines_run(mh_context *ctx, const mh_args *x)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    const mh_sepfilter_axis *v = &d->vertical;
    lines_params p = {};
    p.rows = (long long)d->rows, p.width = (long long)(d->cols * d->channels);
    p.image_values = p.rows * p.width;
    p.in_type = (int)d->in_type, p.out_type = (int)d->out_type;
    p.in_bytes = (int)mh_dtype_size(d->in_type), p.out_bytes = (int)mh_dtype_size(d->out_type);
    /* the identity pass first: the input cast, unless the vertical pass is the identity too (its one
     * pass then stores once: a uint64 cast, read back as float64 and stored again, is not itself) */
    p.cast_in = d->order == MH_SEPFILTER_HORIZONTAL_FIRST && !mh_sepfilter_second_is_identity(a);
    p.ntaps = (int)v->ntaps, p.anchor = mh_sepfilter_anchor(v), p.mode = (int)v->mode;
    p.cval = d->cval, p.divisor = (double)v->divisor;
    const int kind = mh_sepfilter_in_double(d) ? LINES_WIDE
                     : d->in_type == MH_F32 && d->out_type == MH_F32 ? LINES_F32 : LINES_TYPED;
    if (kind == LINES_WIDE) p.dev_taps = mh_sepfilter_kernel_taps64(v, p.taps64);
    else p.cval = (float)d->cval, p.dev_taps = mh_sepfilter_kernel_taps(v, a->vtaps_on_device, p.taps);
    p.rev = v->reversed; /* host taps come reversed already */
    int strip_rows = 0;
    const lines_fn kernel = kernel_of_kind(kind, p.ntaps, &strip_rows);
    const size_t images = d->batch < MH_MAX_GRID_YZ ? d->batch : MH_MAX_GRID_YZ;
    p.seg = mh_column_segment_rows(ctx, d->rows, mh_ceil_div((size_t)p.width, LINES_THREADS) * LINES_THREADS * images,
                                   strip_rows, LINES_SEGMENT_SLOTS);
    return mh_per_grid_slice(d->batch, [&](size_t first, unsigned images) { /* gridDim.z: images */
        lines_params q = p;
        q.in = (const char *)a->in + first * (size_t)p.image_values * (size_t)p.in_bytes;
        q.out = (char *)a->out + first * (size_t)p.image_values * (size_t)p.out_bytes;
        const dim3 grid((unsigned)mh_ceil_div((size_t)p.width, LINES_THREADS),
                        (unsigned)mh_ceil_div(d->rows, (size_t)p.seg), images);
        kernel<<<grid, LINES_THREADS, 0, mh_stream(ctx)>>>(q);
        return MH_LAUNCH_CHECK(ctx, "sepfilter lines' column_kernel");
    });
}

static const mh_row rows[] = {
    {{"sepfilter/lines", MH_OP_SEPFILTER, MH_BACKEND_CUDA, 11, "global+registers", "ours",
      "a filter of the vertical axis alone: a thread a column, its rows in register windows"},
     lines_supports, lines_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_READS_REVERSED},
};

MH_ROW_GROUP(mh_sepfilter_lines_rows, rows)
#endif

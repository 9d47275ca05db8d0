/* sepfilter on the CPU: the two 1-D passes as scipy.ndimage runs them, the first into a
 * float32 buffer of values already cast to the output's type, the second into the output
 * (from that buffer, or in MH_SEPFILTER_SUM from the input, added to the buffer's values).
 *   cpu-omp  OpenMP over the lines of each pass (a vertical pass's in groups of neighbouring
 *            columns); each output's taps summed in order with fmaf, as the CUDA row sums them,
 *            so both store the same bits. A filter of one axis runs its pass alone. */
#include "../core/internal.h"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/scipy_sum.h"

#include <omp.h>
#include <stdlib.h>

/* One pass along an axis of length n, whose lines are `step` values apart (the values of one
 * line: base + i * step), over every line of the stack. */
typedef struct pass {
    const void *src;
    mh_dtype src_type;
    float *dst_float; /* the first pass's buffer, or NULL: dst of dst_type */
    void *dst;
    mh_dtype dst_type;
    const float *add; /* NULL, or values each output adds (in dst_type) before its store */
    const mh_sepfilter_axis *axis;
    float cval;
} pass;

/* out[i] = sum_j ext[i + j] taps[j] for i < n, each sum in order with fmaf: the same bits as
 * the CUDA row's. Eight outputs at a time, a tap at a time across them, so that the compiler
 * makes one vector FMA of the eight (each output's sum keeps its order). Where the CPU has FMA
 * instructions a copy compiled for them runs (fmaf is exact either way; the library call is
 * what it saves). */
#define SUM_TAPS_BODY                                                                           \
    size_t i = 0;                                                                               \
    for (; i + 8 <= n; i += 8) {                                                                \
        float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};                        \
        for (size_t j = 0; j < k; ++j)                                                          \
            for (int e = 0; e < 8; ++e) acc[e] = fmaf(ext[i + e + j], taps[j], acc[e]);        \
        for (int e = 0; e < 8; ++e) out[i + e] = acc[e];                                        \
    }                                                                                           \
    for (; i < n; ++i) {                                                                        \
        float acc = 0.0f;                                                                       \
        for (size_t j = 0; j < k; ++j) acc = fmaf(ext[i + j], taps[j], acc);                    \
        out[i] = acc;                                                                           \
    }

static void sum_taps_plain(const float *ext, const float *taps, size_t k, size_t n, float *out) { SUM_TAPS_BODY }

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("fma"))) static void sum_taps_fma(const float *ext, const float *taps, size_t k, size_t n,
                                                         float *out)
{
    SUM_TAPS_BODY
}
static void sum_taps(const float *ext, const float *taps, size_t k, size_t n, float *out)
{
    static int has_fma = -1;
    if (has_fma < 0) has_fma = __builtin_cpu_supports("fma") ? 1 : 0;
    (has_fma ? sum_taps_fma : sum_taps_plain)(ext, taps, k, n, out);
}
#else
#define sum_taps sum_taps_plain
#endif

/* Along the rows axis (vertical: lines are columns, step cols * channels) or the columns axis
 * (horizontal: step channels). Each line is read once into a buffer extended past its ends by the
 * mode (cval for constant), then every output sums its taps from there. A vertical pass takes
 * LINE_GROUP neighbouring columns at once, so that each row's read and write of them is one run of
 * memory (a column alone touched a cache line, and a page, a value). */
enum { LINE_GROUP = 16 };

/* The values of a thread's buffer: a group's lines, each extended past its ends (n + k values)
 * and their sums (n): up to LINE_GROUP columns of a vertical pass, or one row of a horizontal one. */
static size_t line_floats(const mh_sepfilter_desc *d)
{
    const size_t across = d->cols * d->channels, width = across < LINE_GROUP ? across : LINE_GROUP;
    const size_t columns = width * (2 * d->rows + MH_SEPFILTER_MAX_TAPS), row = 2 * d->cols + MH_SEPFILTER_MAX_TAPS;
    return columns > row ? columns : row;
}

/* A pass's lines: each of n values `step` apart, the taps (k) anchored at anchor; `groups` groups
 * of at most LINE_GROUP lines side by side (vertical; horizontal, a line a group), `across` the
 * lines side by side in an image (vertical: its columns' values; horizontal: 1), `per_image` the
 * groups an image's lines make. */
typedef struct lines_of {
    size_t n, k, step, across, per_image;
    long long groups, anchor;
} lines_of;

static lines_of lines_for(const mh_sepfilter_desc *d, const mh_sepfilter_axis *x, int vertical)
{
    const size_t C = d->channels;
    lines_of g = {vertical ? d->rows : d->cols, x->ntaps, vertical ? d->cols * C : C, vertical ? d->cols * C : 1,
                  0, 0, 0};
    g.per_image = vertical ? (g.across + LINE_GROUP - 1) / LINE_GROUP : d->rows * C;
    g.groups = (long long)(d->batch * g.per_image);
    g.anchor = (long long)(x->ntaps / 2) + x->origin;
    return g;
}

/* Group i of a pass: where its first line starts, and its lines (each one value after the one
 * before). Vertical: image b's column values c0 .. c0 + width - 1; horizontal: image row br
 * (b * rows + r), channel ch, alone. */
typedef struct line_group {
    size_t base, width;
} line_group;

static line_group group_at(const mh_sepfilter_desc *d, const lines_of *g, int vertical, long long i)
{
    const size_t C = d->channels;
    if (vertical) {
        const size_t b = (size_t)i / g->per_image, c0 = ((size_t)i % g->per_image) * LINE_GROUP, left = g->across - c0;
        return (line_group){b * d->rows * g->across + c0, left < LINE_GROUP ? left : LINE_GROUP};
    }
    const size_t br = (size_t)i / C, ch = (size_t)i % C;
    return (line_group){br * d->cols * C + ch, 1};
}

static void run_pass(const pass *p, const mh_sepfilter_desc *d, int vertical, float *buffers)
{
    const mh_sepfilter_axis *x = p->axis;
    const lines_of g = lines_for(d, x, vertical);
    const size_t n = g.n, k = g.k, step = g.step, span = n + k; /* a line's extended values, and room */
#pragma omp parallel
    {
        float *ext = buffers + (size_t)omp_get_thread_num() * line_floats(d);
#pragma omp for schedule(static)
        for (long long i = 0; i < g.groups; ++i) {
            const line_group l = group_at(d, &g, vertical, i);
            for (size_t e = 0; e + 1 < span; ++e) { /* ext[w span + e]: position e - anchor of line w */
                const long long q = mh_border_index((long long)e - g.anchor, (long long)n, (int)x->mode);
                for (size_t w = 0; w < l.width; ++w)
                    ext[w * span + e] =
                        q < 0 ? p->cval : mh_load_value(p->src, l.base + (size_t)q * step + w, p->src_type);
            }
            float *sums = ext + l.width * span;
            for (size_t w = 0; w < l.width; ++w) sum_taps(ext + w * span, x->taps, k, n, sums + w * n);
            for (size_t o = 0; o < n; ++o)
                for (size_t w = 0; w < l.width; ++w) {
                    const size_t at = l.base + o * step + w;
                    float v = mh_finish_value(sums[w * n + o], (float)x->divisor, p->dst_type);
                    if (p->add) v = mh_cast_value(v + p->add[at], p->dst_type);
                    if (p->dst_float) p->dst_float[at] = v;
                    else mh_store_value(p->dst, at, p->dst_type, v);
                }
        }
    }
}

/* The first pass's buffer (mid_size bytes a value) and each thread's line of values_size bytes a
 * value; both freed by the caller. */
static mh_status take_buffers(mh_context *ctx, const mh_sepfilter_args *a, size_t mid_size, size_t value_size,
                              void **mid, void **buffers)
{
    size_t mid_bytes = 0, buffer_bytes = 0;
    *mid = *buffers = NULL;
    if (mh_mul_ok(a->values, mid_size, &mid_bytes)) *mid = malloc(mid_bytes);
    if (mh_mul_ok((size_t)omp_get_max_threads(), line_floats(&a->d), &buffer_bytes) &&
        mh_mul_ok(buffer_bytes, value_size, &buffer_bytes))
        *buffers = malloc(buffer_bytes);
    if (*mid && *buffers) return MH_OK;
    free(*mid), free(*buffers);
    return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "sepfilter/cpu-omp: %zu bytes for the first pass and %zu for the "
                   "threads' lines", mid_bytes, buffer_bytes);
}

/* ---- in float64 (a wide type on either side: mh_sepfilter_in_double) ------------------------
 * The same passes in double: the first into a double buffer of values already cast to the output's
 * type (as scipy's second pass reads them back); summed, the second into its own buffer of the
 * output's type, added to the first's in that type's arithmetic (numpy's `+=`, exact for int64). A
 * filter of one axis runs its pass alone (mh_sepfilter_second_is_identity). */

static void sum_taps64(const double *ext, const double *taps, size_t k, size_t n, mh_sepfilter_sums sums, double *out)
{
    if (sums == MH_SEPFILTER_SUMS_SCIPY) {
        const int fold = mh_scipy_fold(taps, (int)k);
        for (size_t i = 0; i < n; ++i) out[i] = mh_scipy_sum(ext + i, 1, taps, (int)k, fold);
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        double acc = 0.0;
        for (size_t j = 0; j < k; ++j) acc = fma(ext[i + j], taps[j], acc);
        out[i] = acc;
    }
}

static void run_pass64(const void *src, mh_dtype src_type, double *dst_double, void *dst, const mh_sepfilter_axis *x,
                       const mh_sepfilter_desc *d, int vertical, double *buffers)
{
    const lines_of g = lines_for(d, x, vertical);
    const size_t n = g.n, k = g.k, step = g.step, span = n + k;
#pragma omp parallel
    {
        double *ext = buffers + (size_t)omp_get_thread_num() * line_floats(d);
#pragma omp for schedule(static)
        for (long long i = 0; i < g.groups; ++i) {
            const line_group l = group_at(d, &g, vertical, i);
            for (size_t e = 0; e + 1 < span; ++e) {
                const long long q = mh_border_index((long long)e - g.anchor, (long long)n, (int)x->mode);
                for (size_t w = 0; w < l.width; ++w)
                    ext[w * span + e] = q < 0 ? d->cval : mh_load_double(src, l.base + (size_t)q * step + w, src_type);
            }
            double *sums = ext + l.width * span;
            for (size_t w = 0; w < l.width; ++w) sum_taps64(ext + w * span, x->taps64, k, n, d->sums, sums + w * n);
            for (size_t o = 0; o < n; ++o)
                for (size_t w = 0; w < l.width; ++w) {
                    const size_t at = l.base + o * step + w;
                    const double v = x->divisor != 1 ? sums[w * n + o] / (double)x->divisor : sums[w * n + o];
                    if (dst_double) dst_double[at] = mh_cast_double(v, d->out_type);
                    else mh_store_double(dst, at, d->out_type, v);
                }
        }
    }
}

static mh_status omp_run64(mh_context *ctx, const mh_sepfilter_args *a)
{
    const mh_sepfilter_desc *d = &a->d;
    const int first_vertical = d->order != MH_SEPFILTER_HORIZONTAL_FIRST, sum = d->order == MH_SEPFILTER_SUM;
    /* summed: the first pass into out, the second into a buffer of out's type */
    void *mid;
    double *buffers;
    const mh_status s = take_buffers(ctx, a, sum ? mh_dtype_size(d->out_type) : sizeof(double), sizeof(double), &mid,
                                     (void **)&buffers);
    if (s != MH_OK) return s;
    const mh_sepfilter_axis *one = first_vertical ? &d->vertical : &d->horizontal;
    const mh_sepfilter_axis *two = first_vertical ? &d->horizontal : &d->vertical;
    if (mh_sepfilter_second_is_identity(a)) {
        run_pass64(a->in, d->in_type, NULL, a->out, one, d, first_vertical, buffers);
    } else if (sum) {
        run_pass64(a->in, d->in_type, NULL, a->out, one, d, first_vertical, buffers);
        run_pass64(a->in, d->in_type, NULL, mid, two, d, !first_vertical, buffers);
        mh_sepfilter_add_cpu(ctx, a->out, mid, a->values, d->out_type);
    } else {
        run_pass64(a->in, d->in_type, mid, NULL, one, d, first_vertical, buffers);
        run_pass64(mid, MH_F64, NULL, a->out, two, d, !first_vertical, buffers);
    }
    free(mid), free(buffers);
    return MH_OK;
}

static mh_status omp_run32(mh_context *ctx, const mh_sepfilter_args *a)
{
    const mh_sepfilter_desc *d = &a->d;
    float *mid, *buffers;
    const mh_status s = take_buffers(ctx, a, sizeof(float), sizeof(float), (void **)&mid, (void **)&buffers);
    if (s != MH_OK) return s;
    const int first_vertical = d->order != MH_SEPFILTER_HORIZONTAL_FIRST, sum = d->order == MH_SEPFILTER_SUM;
    const float cval = (float)d->cval;
    const int horizontal_only = mh_sepfilter_run_order(a) == MH_SEPFILTER_HORIZONTAL_ONLY;
    if (horizontal_only || mh_sepfilter_second_is_identity(a)) {
        /* a filter of one axis: its pass alone, into the output (the identity pass changes no value
         * there; its lines across the image's rows cost more than the filter's own pass) */
        const int vertical = !horizontal_only && first_vertical;
        const pass only = {a->in, d->in_type, NULL, a->out, d->out_type, NULL, vertical ? &d->vertical : &d->horizontal,
                           cval};
        run_pass(&only, d, vertical, buffers);
    } else {
        const pass first = {a->in, d->in_type, mid, NULL, d->out_type, NULL,
                            first_vertical ? &d->vertical : &d->horizontal, cval};
        run_pass(&first, d, first_vertical, buffers);
        const pass second = {sum ? a->in : mid, sum ? d->in_type : MH_F32, NULL, a->out, d->out_type, sum ? mid : NULL,
                             first_vertical ? &d->horizontal : &d->vertical, cval};
        run_pass(&second, d, !first_vertical, buffers);
    }
    free(mid), free(buffers);
    return MH_OK;
}

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    return (mh_sepfilter_in_double(&args->sepfilter.d) ? omp_run64 : omp_run32)(ctx, &args->sepfilter);
}

mh_status mh_sepfilter_add_cpu(mh_context *ctx, void *out, const void *term, size_t values, mh_dtype t)
{
    (void)ctx;
    if (mh_dtype_is_wide(t)) {
#pragma omp parallel for schedule(static)
        for (long long i = 0; i < (long long)values; ++i) mh_add_wide(out, term, (size_t)i, t);
        return MH_OK;
    }
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)values; ++i)
        mh_store_value(out, (size_t)i, t, mh_cast_value(mh_load_value(out, (size_t)i, t) + mh_load_value(term, (size_t)i, t), t));
    return MH_OK;
}

static const mh_row rows[] = {
    {{"sepfilter/cpu-omp", MH_OP_SEPFILTER, MH_BACKEND_CPU, 0, "host", "ours",
      "two 1-D passes as scipy.ndimage runs them, OpenMP over the lines"},
     mh_supports_any, omp_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_SCIPY_SUMS},
};

MH_ROW_GROUP(mh_sepfilter_cpu_rows, rows)

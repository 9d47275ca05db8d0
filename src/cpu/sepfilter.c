/* sepfilter on the CPU: the two 1-D passes as scipy.ndimage runs them, the first into a
 * float32 buffer of values already cast to the output's type, the second into the output
 * (from that buffer, or in MH_SEPFILTER_SUM from the input, added to the buffer's values).
 *   cpu-omp  OpenMP over the lines of each pass; each output's taps summed in order with
 *            fmaf, as the CUDA row sums them, so both store the same bits */
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
 * the CUDA row's. Where the CPU has FMA instructions a copy compiled for them runs (fmaf is
 * exact either way; the library call is what it saves). */
#define SUM_TAPS_BODY                                                                           \
    for (size_t i = 0; i < n; ++i) {                                                            \
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
 * (horizontal: step channels). Each line is read once into a float buffer extended past its
 * ends by the mode (cval for constant), then every output sums its taps from there. */
/* The floats of a thread's buffer: a line with its extension, and its sums. */
static size_t line_floats(const mh_sepfilter_desc *d) { return 2 * (d->rows + d->cols + MH_SEPFILTER_MAX_TAPS); }

/* Where line l of a pass starts: vertical, image b's column value cc; horizontal, image row br
 * (b * rows + r), channel ch. */
static size_t line_base(const mh_sepfilter_desc *d, int vertical, size_t l)
{
    const size_t C = d->channels;
    if (vertical) {
        const size_t per = d->cols * C, b = l / per, cc = l % per;
        return b * d->rows * per + cc;
    }
    const size_t br = l / C, ch = l % C;
    return br * d->cols * C + ch;
}

/* A pass's lines: each of n values `step` apart, `lines` of them, the taps (k) anchored at anchor. */
typedef struct lines_of {
    size_t n, k, step;
    long long lines, anchor;
} lines_of;

static lines_of lines_for(const mh_sepfilter_desc *d, const mh_sepfilter_axis *x, int vertical)
{
    const size_t C = d->channels;
    lines_of g = {vertical ? d->rows : d->cols, x->ntaps, vertical ? d->cols * C : C, 0, 0};
    g.lines = (long long)(d->batch * (vertical ? d->cols * C : d->rows * C));
    g.anchor = (long long)(x->ntaps / 2) + x->origin;
    return g;
}

static void run_pass(const pass *p, const mh_sepfilter_desc *d, int vertical, float *buffers)
{
    const mh_sepfilter_axis *x = p->axis;
    const lines_of g = lines_for(d, x, vertical);
    const size_t n = g.n, k = g.k, step = g.step;
    const long long lines = g.lines, anchor = g.anchor;
#pragma omp parallel
    {
        float *ext = buffers + (size_t)omp_get_thread_num() * line_floats(d);
#pragma omp for schedule(static)
        for (long long l = 0; l < lines; ++l) {
            const size_t base = line_base(d, vertical, (size_t)l);
            for (size_t e = 0; e + 1 < n + k; ++e) { /* ext[e]: position e - anchor of the line */
                const long long q = mh_border_index((long long)e - anchor, (long long)n, (int)x->mode);
                ext[e] = q < 0 ? p->cval : mh_load_value(p->src, base + (size_t)q * step, p->src_type);
            }
            float *sums = ext + n + k;
            sum_taps(ext, x->taps, k, n, sums);
            for (size_t i = 0; i < n; ++i) {
                float v = mh_finish_value(sums[i], (float)x->divisor, p->dst_type);
                if (p->add) v = mh_cast_value(v + p->add[base + i * step], p->dst_type);
                if (p->dst_float) p->dst_float[base + i * step] = v;
                else mh_store_value(p->dst, base + i * step, p->dst_type, v);
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
    const size_t n = g.n, k = g.k, step = g.step;
    const long long lines = g.lines, anchor = g.anchor;
#pragma omp parallel
    {
        double *ext = buffers + (size_t)omp_get_thread_num() * line_floats(d);
#pragma omp for schedule(static)
        for (long long l = 0; l < lines; ++l) {
            const size_t base = line_base(d, vertical, (size_t)l);
            for (size_t e = 0; e + 1 < n + k; ++e) {
                const long long q = mh_border_index((long long)e - anchor, (long long)n, (int)x->mode);
                ext[e] = q < 0 ? d->cval : mh_load_double(src, base + (size_t)q * step, src_type);
            }
            double *sums = ext + n + k;
            sum_taps64(ext, x->taps64, k, n, d->sums, sums);
            for (size_t i = 0; i < n; ++i) {
                const double v = x->divisor != 1 ? sums[i] / (double)x->divisor : sums[i];
                if (dst_double) dst_double[base + i * step] = mh_cast_double(v, d->out_type);
                else mh_store_double(dst, base + i * step, d->out_type, v);
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
    const pass first = {a->in, d->in_type, mid, NULL, d->out_type, NULL,
                        first_vertical ? &d->vertical : &d->horizontal, cval};
    run_pass(&first, d, first_vertical, buffers);
    const pass second = {sum ? a->in : mid, sum ? d->in_type : MH_F32, NULL, a->out, d->out_type, sum ? mid : NULL,
                         first_vertical ? &d->horizontal : &d->vertical, cval};
    run_pass(&second, d, !first_vertical, buffers);
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

/* sepfilter on the CPU: the two 1-D passes as scipy.ndimage runs them, the first into a
 * float32 buffer of values already cast to the output's type, the second into the output
 * (from that buffer, or in MH_SEPFILTER_SUM from the input, added to the buffer's values).
 *   cpu-omp  OpenMP over the lines of each pass; each output's taps summed in order with
 *            fmaf, as the CUDA row sums them, so both store the same bits */
#include "../core/internal.h"
#include "../core/border.h"
#include "../core/dtype.h"

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

static void run_pass(const pass *p, const mh_sepfilter_desc *d, int vertical, float *buffers)
{
    const mh_sepfilter_axis *x = p->axis;
    const size_t C = d->channels, n = vertical ? d->rows : d->cols, k = x->ntaps;
    const size_t step = vertical ? d->cols * C : C;
    const long long lines = (long long)(d->batch * (vertical ? d->cols * C : d->rows * C));
    const long long anchor = (long long)(k / 2) + x->origin;
#pragma omp parallel
    {
        float *ext = buffers + (size_t)omp_get_thread_num() * line_floats(d);
#pragma omp for schedule(static)
        for (long long l = 0; l < lines; ++l) {
            size_t base;
            if (vertical) { /* line l: image b, column value cc */
                const size_t per = d->cols * C, b = (size_t)l / per, cc = (size_t)l % per;
                base = b * d->rows * per + cc;
            } else { /* line l: image row br (b * rows + r), channel ch */
                const size_t br = (size_t)l / C, ch = (size_t)l % C;
                base = br * d->cols * C + ch;
            }
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

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    const mh_sepfilter_args *a = &args->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    size_t mid_bytes = 0, buffer_bytes = 0;
    float *mid = NULL, *buffers = NULL;
    if (mh_mul_ok(a->values, sizeof(float), &mid_bytes)) mid = malloc(mid_bytes);
    if (mh_mul_ok((size_t)omp_get_max_threads(), line_floats(d), &buffer_bytes) &&
        mh_mul_ok(buffer_bytes, sizeof(float), &buffer_bytes))
        buffers = malloc(buffer_bytes);
    if (!mid || !buffers) {
        free(mid), free(buffers);
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "sepfilter/cpu-omp: %zu bytes for the first pass and %zu for the "
                       "threads' lines", mid_bytes, buffer_bytes);
    }
    const int first_vertical = d->order != MH_SEPFILTER_HORIZONTAL_FIRST, sum = d->order == MH_SEPFILTER_SUM;
    const pass first = {a->in, d->in_type, mid, NULL, d->out_type, NULL,
                        first_vertical ? &d->vertical : &d->horizontal, d->cval};
    run_pass(&first, d, first_vertical, buffers);
    const pass second = {sum ? a->in : mid, sum ? d->in_type : MH_F32, NULL, a->out, d->out_type, sum ? mid : NULL,
                         first_vertical ? &d->horizontal : &d->vertical, d->cval};
    run_pass(&second, d, !first_vertical, buffers);
    free(mid), free(buffers);
    return MH_OK;
}

mh_status mh_sepfilter_add_cpu(mh_context *ctx, void *out, const void *term, size_t values, mh_dtype t)
{
    (void)ctx;
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)values; ++i)
        mh_store_value(out, (size_t)i, t, mh_cast_value(mh_load_value(out, (size_t)i, t) + mh_load_value(term, (size_t)i, t), t));
    return MH_OK;
}

static const mh_row rows[] = {
    {{"sepfilter/cpu-omp", MH_OP_SEPFILTER, MH_BACKEND_CPU, 0, "host", "ours",
      "two 1-D passes as scipy.ndimage runs them, OpenMP over the lines"},
     mh_supports_any, omp_run, NULL, 0},
};

MH_ROW_GROUP(mh_sepfilter_cpu_rows, rows)

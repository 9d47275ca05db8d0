/* sepfilter front-end: the op's registry table, its argument checks and `auto`. */
#include "../core/internal.h"
#include "../core/dtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static mh_status check_axis(mh_context *ctx, const char *name, const mh_sepfilter_axis *x)
{
    if (!x->taps) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s.taps is NULL", name);
    if (x->ntaps == 0 || x->ntaps > MH_SEPFILTER_MAX_TAPS)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s.ntaps = %zu: a pass has 1 to %d taps", name, x->ntaps,
                       MH_SEPFILTER_MAX_TAPS);
    char field[32];
    snprintf(field, sizeof field, "%s.origin", name);
    mh_status s = mh_check_origin(ctx, field, x->origin, x->ntaps, "pass");
    snprintf(field, sizeof field, "%s.mode", name);
    if (s == MH_OK) s = mh_check_mode(ctx, field, x->mode);
    if (s != MH_OK) return s;
    if (x->divisor == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s.divisor = 0: 1 divides by nothing", name);
    if (x->reversed != 0 && x->reversed != 1)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s.reversed = %d: taps read from the first (0) or the last (1)",
                       name, x->reversed);
    return MH_OK;
}

static mh_status check_dtype(mh_context *ctx, const char *name, mh_dtype t)
{
    if ((unsigned)t <= MH_U64) return MH_OK;
    return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = %d is not a dtype of mh_dtype (0 to %d)", name, (int)t,
                   (int)MH_U64);
}

int mh_sepfilter_in_double(const mh_sepfilter_desc *d)
{
    return mh_dtype_is_wide(d->in_type) || mh_dtype_is_wide(d->out_type);
}

static mh_status check_sizes(mh_context *ctx, const mh_sepfilter_desc *d, size_t *values)
{
    const size_t dims[4] = {d->batch, d->rows, d->cols, d->channels};
    static const char *const names[4] = {"batch", "rows", "cols", "channels"};
    for (int i = 0; i < 4; ++i)
        if (dims[i] == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = 0: the images are empty", names[i]);
    if (d->channels > MH_SEPFILTER_MAX_CHANNELS)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "channels = %zu: sepfilter takes 1 to %d interleaved channels",
                       d->channels, MH_SEPFILTER_MAX_CHANNELS);
    mh_status s = check_dtype(ctx, "in_type", d->in_type);
    if (s == MH_OK) s = check_dtype(ctx, "out_type", d->out_type);
    if (s != MH_OK) return s;
    if (mh_sepfilter_in_double(d) && (d->in_type == MH_F16 || d->out_type == MH_F16))
        return mh_fail(ctx, MH_ERR_UNSUPPORTED,
                       "in_type %s, out_type %s: float16 beside a type computed in float64 (scipy.ndimage takes no "
                       "float16; convert it to float32 first)", mh_dtype_name(d->in_type), mh_dtype_name(d->out_type));
    size_t n, bytes;
    /* a 4-element group read past a row's end stays inside the index range too */
    if (!mh_mul_ok(d->batch, d->rows, &n) || !mh_mul_ok(n, d->cols, &n) || !mh_mul_ok(n, d->channels, &n) ||
        !mh_mul_ok(n, 4, &bytes) || n > (size_t)INT64_MAX / 8)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "batch = %zu, rows = %zu, cols = %zu, channels = %zu: the images' size overflows", d->batch,
                       d->rows, d->cols, d->channels);
    *values = n;
    return MH_OK;
}

/* On a CPU context, the host memory an axis's field (name.what) points to, checked before it is
 * read (device memory refused by name). */
static mh_status check_on_cpu(mh_context *ctx, const char *name, const char *what, const void *p, size_t bytes)
{
    if (!mh_is_cpu(ctx)) return MH_OK;
    char field[32];
    snprintf(field, sizeof field, "%s.%s", name, what);
    return mh_check_buffer(ctx, field, p, bytes);
}

/* An axis's taps: host memory, copied into the arguments (the kernels take them by value),
 * reversed where the axis is; or, on a CUDA context, device memory, left where it is for the
 * kernels to read (check_buffers checks its device and size; a reversed axis's are reversed by
 * prepare). A CPU context refuses device memory before reading it. */
static mh_status take_taps(mh_context *ctx, const char *name, const mh_sepfilter_axis *x, float *copy, int *on_device)
{
    *on_device = mh_is_device_memory(ctx, x->taps);
    if (*on_device) return MH_OK;
    const mh_status s = check_on_cpu(ctx, name, "taps", x->taps, x->ntaps * sizeof(float));
    if (s != MH_OK) return s;
    for (size_t i = 0; i < x->ntaps; ++i) copy[i] = x->taps[x->reversed ? x->ntaps - 1 - i : i];
    return MH_OK;
}

/* A call computed in float64: an axis's taps64 (host memory) copied into the arguments, or where
 * it has none its host taps widened; device taps without taps64 are widened by the kernels as
 * they read them. */
static mh_status take_taps64(mh_context *ctx, const char *name, const mh_sepfilter_axis *x, const float *taps,
                             int on_device, double *copy)
{
    if (!x->taps64) {
        if (!on_device)
            for (size_t i = 0; i < x->ntaps; ++i) copy[i] = (double)taps[i];
        return MH_OK;
    }
    if (mh_is_device_memory(ctx, x->taps64))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s.taps64 = %p is device memory; taps64 is read from the host",
                       name, (const void *)x->taps64);
    const mh_status s = check_on_cpu(ctx, name, "taps64", x->taps64, x->ntaps * sizeof(double));
    if (s != MH_OK) return s;
    for (size_t i = 0; i < x->ntaps; ++i) copy[i] = x->taps64[x->reversed ? x->ntaps - 1 - i : i];
    return MH_OK;
}

mh_status mh_sepfilter_args_init(mh_context *ctx, mh_args *args, const mh_sepfilter_desc *d, const void *in, void *out)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_SEPFILTER;
    if (!d) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "desc is NULL");
    mh_sepfilter_args *a = &args->sepfilter;
    mh_status s;
    if ((s = check_sizes(ctx, d, &a->values)) != MH_OK) return s;
    if ((s = check_axis(ctx, "vertical", &d->vertical)) != MH_OK) return s;
    if ((s = check_axis(ctx, "horizontal", &d->horizontal)) != MH_OK) return s;
    if ((unsigned)d->order > MH_SEPFILTER_SUM)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "order = %d: the vertical pass first (0), the horizontal first (1) or their sum (2)",
                       (int)d->order);
    if ((unsigned)d->sums > MH_SEPFILTER_SUMS_SCIPY)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "sums = %d: fused multiply-adds (0) or scipy's order (1)",
                       (int)d->sums);
    if (d->sums == MH_SEPFILTER_SUMS_SCIPY && !mh_sepfilter_in_double(d))
        return mh_fail(ctx, MH_ERR_UNSUPPORTED,
                       "sums = 1 (scipy's order) on %s into %s: only a call computed in float64 (a wide type on "
                       "either side) adds in scipy's order", mh_dtype_name(d->in_type), mh_dtype_name(d->out_type));
    a->d = *d;
    if ((s = take_taps(ctx, "vertical", &d->vertical, a->vtaps, &a->vtaps_on_device)) != MH_OK) return s;
    if ((s = take_taps(ctx, "horizontal", &d->horizontal, a->htaps, &a->htaps_on_device)) != MH_OK) return s;
    if (!a->vtaps_on_device) a->d.vertical.taps = a->vtaps, a->d.vertical.reversed = 0;
    if (!a->htaps_on_device) a->d.horizontal.taps = a->htaps, a->d.horizontal.reversed = 0;
    a->d.vertical.taps64 = a->d.horizontal.taps64 = NULL;
    if (mh_sepfilter_in_double(d)) {
        if ((s = take_taps64(ctx, "vertical", &d->vertical, a->vtaps, a->vtaps_on_device, a->vtaps64)) != MH_OK ||
            (s = take_taps64(ctx, "horizontal", &d->horizontal, a->htaps, a->htaps_on_device, a->htaps64)) != MH_OK)
            return s;
        if (d->vertical.taps64 || !a->vtaps_on_device) a->d.vertical.taps64 = a->vtaps64;
        if (d->horizontal.taps64 || !a->htaps_on_device) a->d.horizontal.taps64 = a->htaps64;
    }
    if (d->sums == MH_SEPFILTER_SUMS_SCIPY && (a->vtaps_on_device || a->htaps_on_device))
        return mh_fail(ctx, MH_ERR_UNSUPPORTED, "sums = 1 (scipy's order) with %s taps in device memory: scipy's "
                       "order adds host taps (taps64)", a->vtaps_on_device ? "vertical" : "horizontal");
    a->in = in, a->out = out;
    return MH_OK;
}

int mh_sepfilter_is_identity(const mh_sepfilter_axis *x, int on_device)
{
    return !on_device && x->ntaps == 1 && x->taps[0] == 1.0f && (!x->taps64 || x->taps64[0] == 1.0) &&
           x->divisor == 1;
}

/* The call's order, or MH_SEPFILTER_HORIZONTAL_ONLY where the vertical axis is the identity and
 * its pass changes no value: after the horizontal pass it casts a cast value; before it, on a
 * float32 output, it stores each input as it is (its sum from 0.0f turns -0 into +0, which the
 * horizontal sums, also from 0.0f, do too). A vertical pass first onto another output type stays:
 * its cast comes before the horizontal taps. */
int mh_sepfilter_run_order(const mh_sepfilter_args *a)
{
    const mh_sepfilter_desc *d = &a->d;
    if (d->order == MH_SEPFILTER_SUM || !mh_sepfilter_is_identity(&d->vertical, a->vtaps_on_device)) return (int)d->order;
    const int vertical_changes = d->order == MH_SEPFILTER_VERTICAL_FIRST && d->out_type != MH_F32;
    return vertical_changes ? (int)d->order : (int)MH_SEPFILTER_HORIZONTAL_ONLY;
}

int mh_sepfilter_second_is_identity(const mh_sepfilter_args *a)
{
    const mh_sepfilter_desc *d = &a->d;
    if (d->order == MH_SEPFILTER_VERTICAL_FIRST) return mh_sepfilter_is_identity(&d->horizontal, a->htaps_on_device);
    if (d->order == MH_SEPFILTER_HORIZONTAL_FIRST) return mh_sepfilter_is_identity(&d->vertical, a->vtaps_on_device);
    return 0;
}

int mh_sepfilter_anchor(const mh_sepfilter_axis *x) { return (int)((long long)(x->ntaps / 2) + x->origin); }

int mh_sepfilter_float32_gray(const mh_sepfilter_desc *d, char *why, size_t len)
{
    if (d->in_type == MH_F32 && d->out_type == MH_F32 && d->channels == 1) return 1;
    snprintf(why, len, "it filters float32 images of one channel into float32 (this call: %s, %zu channels, into %s)",
             mh_dtype_name(d->in_type), d->channels, mh_dtype_name(d->out_type));
    return 0;
}

const float *mh_sepfilter_kernel_taps(const mh_sepfilter_axis *x, int on_device, float *taps)
{
    if (on_device) return x->taps;
    memcpy(taps, x->taps, x->ntaps * sizeof(float));
    return NULL;
}

const float *mh_sepfilter_kernel_taps64(const mh_sepfilter_axis *x, double *taps)
{
    if (!x->taps64) return x->taps;
    memcpy(taps, x->taps64, x->ntaps * sizeof(double));
    return NULL;
}

static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_sepfilter_args *a = &args->sepfilter;
    const size_t in_bytes = a->values * mh_dtype_size(a->d.in_type);
    const size_t out_bytes = a->values * mh_dtype_size(a->d.out_type);
    mh_status s;
    if ((s = mh_check_buffer(ctx, "in", a->in, in_bytes)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, "out", a->out, out_bytes)) != MH_OK) return s;
    if (a->vtaps_on_device &&
        (s = mh_check_buffer(ctx, "vertical.taps", a->d.vertical.taps, a->d.vertical.ntaps * sizeof(float))) != MH_OK)
        return s;
    if (a->htaps_on_device &&
        (s = mh_check_buffer(ctx, "horizontal.taps", a->d.horizontal.taps, a->d.horizontal.ntaps * sizeof(float))) !=
            MH_OK)
        return s;
    return mh_check_disjoint(ctx, "out", a->out, out_bytes, "in", a->in, in_bytes);
}

/* walk before fused for float32 gray images whose passes are at most the device's
 * sepfilter_walk_max_taps (on the H200 walk's own limit: its ring of shared rows ran every filter
 * it takes at least as fast as fused's tiles, and far faster on small images, where fused's tiles
 * are too few to fill the GPU). A filter along the rows alone runs no vertical window: every
 * filter walk takes goes to it. Where why is not NULL, the rule with this call's numbers. */
static int walk_first(const mh_auto_rules *r, const mh_args *a, char *why, size_t len)
{
    const mh_sepfilter_desc *d = &a->sepfilter.d;
    if (mh_sepfilter_run_order(&a->sepfilter) == MH_SEPFILTER_HORIZONTAL_ONLY) {
        if (why) snprintf(why, len, "a filter along the rows alone: walk before fused wherever walk takes it");
        return 1;
    }
    const size_t most = (size_t)r->sepfilter_walk_max_taps;
    const int walk = d->vertical.ntaps <= most && d->horizontal.ntaps <= most;
    if (why)
        snprintf(why, len, "passes of %zu and %zu taps, %s sepfilter_walk_max_taps (%zu): tiles first where it takes "
                 "the call, %s", d->vertical.ntaps, d->horizontal.ntaps, walk ? "within" : "past", most,
                 walk ? "walk before fused" : "fused, no walk");
    return walk;
}

/* On a GPU the lines kernel for a filter of the vertical axis alone (it refuses two); tiles for
 * float32 gray images filtered over both axes one after the other, with one count of taps of up
 * to 33 on both (it refuses the others; on the H200 its one launch of staged tiles, the taps' count
 * compiled in, ran a Gaussian of sigma 2 1.3-1.4x faster than walk from 2048^2 to 8192^2, and
 * sobel, prewitt and a uniform filter of 5 as fast, launch-bound below); walk for float32
 * gray images of filters it takes or along the rows alone (walk_first); the fused kernel for the
 * others; a call computed in float64, which walk and fused refuse, on fused64, one axis or two
 * (lines where fused64 refuses a filter of the vertical axis alone: device taps; two-pass where
 * its tile does not fit, past 64 taps and for summed passes); the OpenMP loops on the CPU. */
static const char *const *auto_order(mh_context *ctx, const mh_args *a, char *why, size_t len)
{
    static const char *const cpu[] = {"cpu-omp", NULL};
    static const char *const gpu[] = {"lines", "tiles", "walk", "fused", "fused64", "two-pass", NULL};
    static const char *const gpu_long[] = {"lines", "tiles", "fused", "fused64", "two-pass", NULL};
    static const char *const wide[] = {"fused64", "lines", "two-pass", NULL};
    if (mh_is_cpu(ctx)) return cpu;
    if (mh_sepfilter_in_double(&a->sepfilter.d)) {
        if (why) snprintf(why, len, "a call computed in float64: fused64 first, then lines, then two-pass");
        return wide;
    }
    return walk_first(ctx->rules, a, why, len) ? gpu : gpu_long;
}

/* A call asking for scipy's sums needs a row flagged for them. */
static int row_accepts(const mh_row *row, const mh_args *args, char *why, size_t len)
{
    if (args->sepfilter.d.sums != MH_SEPFILTER_SUMS_SCIPY || (row->flags & MH_ROW_SCIPY_SUMS)) return 1;
    char takers[256];
    snprintf(why, len, "it adds with fused multiply-adds, not in scipy's order (sums = 1 runs on %s)",
             mh_rows_with(MH_OP_SEPFILTER, MH_ROW_SCIPY_SUMS, takers, sizeof takers));
    return 0;
}

static const mh_row_group groups[] = {mh_sepfilter_cpu_rows, mh_sepfilter_cuda_rows, mh_sepfilter_lines_rows,
                                      mh_sepfilter_walk_rows, mh_sepfilter_fused64_rows, mh_sepfilter_tiles_rows};

static void describe(const mh_args *args, char *buf, size_t len)
{
    const mh_sepfilter_desc *d = &args->sepfilter.d;
    static const char *const orders[] = {"vertical first", "horizontal first", "summed"};
    snprintf(buf, len, "%zu x %zu x %zu x %zu %s -> %s, %zu x %zu taps (%s, %s), %s%s", d->batch, d->rows, d->cols,
             d->channels, mh_dtype_name(d->in_type), mh_dtype_name(d->out_type), d->vertical.ntaps,
             d->horizontal.ntaps, mh_mode_name(d->vertical.mode), mh_mode_name(d->horizontal.mode),
             orders[d->order], d->sums == MH_SEPFILTER_SUMS_SCIPY ? ", scipy's sums" : "");
}

/* Whether a call reads device taps reversed: mh_sepfilter_args_init clears the flag of host taps,
 * which it reversed as it copied them, so an axis still flagged holds device taps. */
static int reverses_device_taps(const mh_sepfilter_args *a)
{
    return a->d.vertical.reversed || a->d.horizontal.reversed;
}

/* Device taps read from their end reversed into the context's copy (the vertical axis's first,
 * then the horizontal's) on its stream, which the rows then read as any device taps: one small
 * launch before the row's, in stream order; a row flagged MH_ROW_READS_REVERSED reads them from
 * their end itself and gets the call as it is. */
static mh_status prepare(mh_context *ctx, const mh_row *row, const mh_args *args, mh_args *prepared)
{
    *prepared = *args;
    if (!reverses_device_taps(&args->sepfilter) || (row->flags & MH_ROW_READS_REVERSED)) return MH_OK;
    mh_sepfilter_axis *axes[2] = {&prepared->sepfilter.d.vertical, &prepared->sepfilter.d.horizontal};
    size_t n = 0;
    for (int i = 0; i < 2; ++i) n += axes[i]->reversed ? axes[i]->ntaps : 0;
    float *copy;
    mh_status s =
        mh_slot_buffer(ctx, MH_SLOT_REVERSED_FILTER, "the reversed taps' copy", n * sizeof(float), (void **)&copy);
    for (int i = 0; s == MH_OK && i < 2; ++i) {
        if (!axes[i]->reversed) continue;
        s = mh_reverse_cuda(ctx, axes[i]->taps, axes[i]->ntaps, copy);
        axes[i]->taps = copy, axes[i]->reversed = 0;
        copy += axes[i]->ntaps;
    }
    return s;
}

const mh_op_table mh_sepfilter_table = {
    .op = MH_OP_SEPFILTER,
    .name = "sepfilter",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .row_accepts = row_accepts,
    .check_buffers = check_buffers,
    .describe = describe,
    .prepare = prepare,
};

mh_status mh_sepfilter(mh_context *ctx, const char *variant, const mh_sepfilter_desc *desc, const void *in, void *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_sepfilter_args_init(ctx, &a, desc, in, out);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_sepfilter_select(mh_context *ctx, const mh_sepfilter_desc *desc, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_sepfilter_args_init(ctx, &a, desc, NULL, NULL);
    return s == MH_OK ? mh_select(ctx, &a, chosen) : s;
}

mh_status mh_sepfilter_supports(mh_context *ctx, const char *variant, const mh_sepfilter_desc *desc)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_sepfilter_args_init(ctx, &a, desc, NULL, NULL);
    return s == MH_OK ? mh_supports(ctx, variant, &a) : s;
}

/* ---- mh_sepfilter_sum ----------------------------------------------------------------------- */

/* s with the context's error prefixed by `prefix` (which term it is about). */
static mh_status about_term(mh_context *ctx, mh_status s, const char *prefix)
{
    char detail[480];
    snprintf(detail, sizeof detail, "%s", mh_context_error(ctx));
    return mh_fail(ctx, s, "%s%s", prefix, detail);
}

/* Term i's arguments (out: the caller's output; a later term's is replaced by the context's
 * buffer when it runs), its images terms[0]'s; an error names the term. */
static mh_status term_args(mh_context *ctx, const mh_sepfilter_desc *terms, size_t i, const void *in, void *out,
                           mh_args *a)
{
    mh_status s = mh_sepfilter_args_init(ctx, a, &terms[i], in, out);
    if (s != MH_OK) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "terms[%zu].", i);
        return about_term(ctx, s, prefix);
    }
    const mh_sepfilter_desc *t = &terms[i], *f = &terms[0];
    static const char *const names[4] = {"batch", "rows", "cols", "channels"};
    const size_t got[4] = {t->batch, t->rows, t->cols, t->channels}, want[4] = {f->batch, f->rows, f->cols, f->channels};
    for (int k = 0; k < 4; ++k)
        if (got[k] != want[k])
            return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "terms[%zu].%s = %zu: every term filters terms[0]'s images (%zu)",
                           i, names[k], got[k], want[k]);
    if (t->in_type != f->in_type || t->out_type != f->out_type)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "terms[%zu] reads %s into %s: every term reads terms[0]'s type into its output's (%s into %s)", i,
                       mh_dtype_name(t->in_type), mh_dtype_name(t->out_type), mh_dtype_name(f->in_type),
                       mh_dtype_name(f->out_type));
    return MH_OK;
}

/* The context's buffer of a term's output, taken again before each use so that its fence covers
 * the use. */
static mh_status term_buffer(mh_context *ctx, const mh_sepfilter_args *first, void **buffer)
{
    return mh_slot_buffer(ctx, MH_SLOT_SEPFILTER_TERM, "sepfilter's term buffer",
                          first->values * mh_dtype_size(first->d.out_type), buffer);
}

/* Two terms that walk runs as a pair (mh_sepfilter_walk_pairs), where neither reads device taps
 * reversed (the pair's launch has no prepare). */
static int walk_pairs(const mh_row *const *rows, const mh_args *args)
{
    const mh_sepfilter_args *a = &args[0].sepfilter, *b = &args[1].sepfilter;
    return !reverses_device_taps(a) && !reverses_device_taps(b) && mh_sepfilter_walk_pairs(rows[0], rows[1], a, b);
}

/* Whether auto runs two terms as walk's pair: where the call leaves the rows to auto, auto's rule
 * puts walk before fused for both (walk_first) and walk pairs them, its one launch (the image read
 * once, no term buffer) runs before any row's two launches and the add, whichever row auto would
 * pick for each term alone. */
static int auto_walk_pair(mh_context *ctx, const char *variant, const mh_args *args, size_t nterms)
{
    if (nterms != 2 || (variant && strcmp(variant, "auto") != 0) || mh_is_cpu(ctx)) return 0;
    const mh_row *rows[2];
    for (int i = 0; i < 2; ++i)
        if (!walk_first(ctx->rules, &args[i], NULL, 0)) return 0;
    for (int i = 0; i < 2; ++i)
        if (mh_resolve(ctx, "walk", &args[i], &rows[i]) != MH_OK) {
            mh_clear_error(ctx); /* walk's refusal is not the call's */
            return 0;
        }
    return walk_pairs(rows, args);
}

/* Under the context's lock, on its device: every term's buffers checked and a row found for it
 * (sepfilter's rows choose by the desc alone, so the row found with the caller's out runs the term
 * into the buffer too), then the first term into out and each later one into the buffer, added to
 * out; two terms that walk runs together in one launch instead (walk_pairs; on auto,
 * auto_walk_pair). */
static mh_status sum_terms(mh_context *ctx, const char *variant, mh_args *args, size_t nterms)
{
    const mh_row *rows[MH_SEPFILTER_MAX_TERMS];
    mh_status s = MH_OK;
    for (size_t i = 0; s == MH_OK && i < nterms; ++i) s = mh_sepfilter_table.check_buffers(ctx, &args[i]);
    const mh_sepfilter_args *first = &args[0].sepfilter;
    int pair = s == MH_OK && auto_walk_pair(ctx, variant, args, nterms);
    for (size_t i = 0; s == MH_OK && !pair && i < nterms; ++i)
        if ((s = mh_resolve(ctx, variant, &args[i], &rows[i])) != MH_OK) {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "terms[%zu]: ", i);
            s = about_term(ctx, s, prefix);
        }
    if (s == MH_OK && !pair) pair = nterms == 2 && walk_pairs(rows, args);
    if (s == MH_OK && pair) {
        s = mh_sepfilter_walk_pair(ctx, first, &args[1].sepfilter);
        mh_shared_release(ctx);
        return s;
    }
    void *buffer = NULL;
    if (s == MH_OK && nterms > 1) s = term_buffer(ctx, first, &buffer); /* grown before out is written */
    if (s == MH_OK) s = mh_dispatch_resolved(ctx, variant, &args[0], rows[0]);
    for (size_t i = 1; s == MH_OK && i < nterms; ++i) {
        args[i].sepfilter.out = buffer;
        s = mh_dispatch_resolved(ctx, variant, &args[i], rows[i]);
        if (s == MH_OK) s = term_buffer(ctx, first, &buffer);
        if (s == MH_OK)
            s = (mh_is_cpu(ctx) ? mh_sepfilter_add_cpu : mh_sepfilter_add_cuda)(ctx, first->out, buffer, first->values,
                                                                                first->d.out_type);
        mh_shared_release(ctx);
    }
    return s;
}

mh_status mh_sepfilter_sum(mh_context *ctx, const char *variant, const mh_sepfilter_desc *terms, size_t nterms,
                           const void *in, void *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (!terms) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "terms is NULL");
    if (nterms == 0 || nterms > MH_SEPFILTER_MAX_TERMS)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "nterms = %zu: a sum of 1 to %d terms", nterms,
                       MH_SEPFILTER_MAX_TERMS);
    mh_args args[MH_SEPFILTER_MAX_TERMS];
    for (size_t i = 0; i < nterms; ++i) {
        const mh_status s = term_args(ctx, terms, i, in, out, &args[i]);
        if (s != MH_OK) return s;
    }
    mh_context_lock(ctx);
    mh_device_guard guard;
    mh_status s = mh_is_cpu(ctx) ? MH_OK : mh_device_enter(ctx, &guard);
    if (s == MH_OK) {
        s = sum_terms(ctx, variant, args, nterms);
        if (!mh_is_cpu(ctx)) mh_device_leave(&guard);
    }
    mh_context_unlock(ctx);
    return s;
}

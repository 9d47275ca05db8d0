/* histogram front-end: the op's registry table, its argument checks and `auto`. */
#include "../core/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

mh_status mh_histogram_args_init(mh_context *ctx, mh_args *args, const void *in, int kind, size_t n, int lo, int hi,
                                 int width, unsigned long long *bins, unsigned long long *outside)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_HISTOGRAM;
    const int bytes = kind == MH_HISTOGRAM_BYTES;
    size_t total;
    if (!mh_mul_ok(n, bytes ? 1 : kind == MH_HISTOGRAM_INT64 ? sizeof(int64_t) : sizeof(int32_t), &total))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "n = %zu: the input's size in bytes overflows size_t", n);
    if (width <= 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "width = %d: a bucket holds at least one value", width);
    if (bytes && (lo < 0 || hi > 255 || lo > hi))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "lo = %d, hi = %d: byte buckets need 0 <= lo <= hi <= 255", lo, hi);
    const long long bins_wanted = ((long long)hi - lo) / width + 1;
    if (hi < lo || bins_wanted < 1 || bins_wanted > MH_HISTOGRAM_MAX_BINS)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "num_bins = %lld: it must be 1 .. %d", hi < lo ? 0 : bins_wanted,
                       MH_HISTOGRAM_MAX_BINS);
    args->histogram = (mh_histogram_args){
        .in = in, .bytes = bytes, .int64 = kind == MH_HISTOGRAM_INT64, .n = n, .lo = lo, .hi = hi, .width = width,
        .num_bins = (int)bins_wanted, .bins = bins, .outside = outside};
    return MH_OK;
}

/* Uniform bins over [lo, hi] as numpy.linspace makes them (core/histogram_rule.h). */
static mh_hist_float uniform_bins(double lo, double hi, int num_bins)
{
    mh_hist_float f = {0};
    if (lo == hi) lo -= 0.5, hi += 0.5; /* numpy's widening of an empty range */
    f.first = lo, f.last = hi;
    f.delta = hi - lo;
    f.step = f.delta / num_bins;
    f.step_zero = f.step == 0.0;
    f.guess = num_bins / f.delta;
    if (!isfinite(f.guess)) f.guess = 0.0; /* every guess 0: the kernels search */
    f.lo = (float)lo, f.hi = (float)hi;
    f.gscale = isfinite((float)f.guess) ? (float)f.guess : 0.0f;
    f.margin = f.gscale > 0.0f ? mh_hist_uniform_margin(lo, hi, num_bins) : 1.0f;
    return f;
}

mh_status mh_histogram_float_args_init(mh_context *ctx, mh_args *args, const float *in, size_t n, int num_bins, double lo,
                                       double hi, const float *edges, unsigned long long *bins,
                                       unsigned long long *outside)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_HISTOGRAM;
    size_t total;
    if (!mh_mul_ok(n, sizeof(float), &total))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "n = %zu: the input's size in bytes overflows size_t", n);
    if (num_bins < 1 || num_bins > MH_HISTOGRAM_MAX_BINS)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "num_bins = %d: it must be 1 .. %d", num_bins, MH_HISTOGRAM_MAX_BINS);
    mh_hist_float f = {0};
    if (edges) f.edges = edges;
    else if (!isfinite(lo) || !isfinite(hi))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "range [%g, %g]: it must be finite", lo, hi);
    else if (lo > hi)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "range [%g, %g]: lo must be at most hi", lo, hi);
    else f = uniform_bins(lo, hi, num_bins);
    args->histogram = (mh_histogram_args){
        .in = in, .floats = 1, .n = n, .width = 1, .num_bins = num_bins, .f = f, .bins = bins, .outside = outside};
    return MH_OK;
}

void mh_histogram_write_edges(const mh_histogram_args *a)
{
    if (!a->edges_out) return;
    for (int i = 0; i <= a->num_bins; ++i) a->edges_out[i] = mh_hist_uniform_edge(&a->f, a->num_bins, i);
}

void mh_histogram_reference(const mh_histogram_args *a, unsigned long long *bins, unsigned long long *outside)
{
    memset(bins, 0, (size_t)a->num_bins * sizeof *bins);
    unsigned long long out = 0;
    for (size_t i = 0; i < a->n; ++i) {
        const int b = mh_histogram_bin_at(a, i);
        if (b < 0) ++out;
        else ++bins[b];
    }
    *outside = out;
}

mh_status mh_histogram_weighted_args_init(mh_context *ctx, mh_args *args, int kind, const void *in, const float *weights,
                                          size_t n, int num_bins, double lo, double hi, const float *edges, double *sums,
                                          double *outside)
{
    mh_status s;
    if (kind == MH_HISTOGRAM_INT32) {
        if (num_bins < 1 || num_bins > MH_HISTOGRAM_MAX_BINS)
            return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "num_bins = %d: it must be 1 .. %d", num_bins, MH_HISTOGRAM_MAX_BINS);
        s = mh_histogram_args_init(ctx, args, in, MH_HISTOGRAM_INT32, n, 0, num_bins - 1, 1, NULL, NULL);
    } else if (kind == MH_HISTOGRAM_FLOAT_UNIFORM || kind == MH_HISTOGRAM_FLOAT_EDGES) {
        if (kind == MH_HISTOGRAM_FLOAT_EDGES && !edges) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "edges is NULL");
        s = mh_histogram_float_args_init(ctx, args, in, n, num_bins, lo, hi, kind == MH_HISTOGRAM_FLOAT_EDGES ? edges : NULL,
                                         NULL, NULL);
    } else {
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "kind = %d: weighted histograms take int32 values (0) or float32 "
                       "values in uniform bins (2) or between edges (3)", kind);
    }
    if (s != MH_OK) return s;
    args->histogram.weighted = 1, args->histogram.weights = weights, args->histogram.sums = sums, args->histogram.outside_sum = outside;
    return MH_OK;
}

void mh_histogram_weighted_reference(const mh_histogram_args *a, double *sums, double *outside)
{
    memset(sums, 0, (size_t)a->num_bins * sizeof *sums);
    double out = 0.0;
    for (size_t i = 0; i < a->n; ++i) {
        const int b = mh_histogram_bin_at(a, i);
        if (b < 0) out += a->weights[i];
        else sums[b] += a->weights[i];
    }
    *outside = out;
}

/* The weighted form's buffers: in, weights, edges read; sums and outside written, apart from
 * every other. */
static mh_status check_weighted_buffers(mh_context *ctx, const mh_histogram_args *a)
{
    const size_t in_bytes = a->n * 4, sum_bytes = (size_t)a->num_bins * 8, edge_bytes = ((size_t)a->num_bins + 1) * 4;
    const struct {
        const char *name;
        const void *p;
        size_t bytes;
    } read[] = {{"in", a->in, a->n ? in_bytes : 0}, {"weights", a->weights, a->n ? in_bytes : 0},
                {"edges", a->f.edges, a->f.edges ? edge_bytes : 0}},
      written[] = {{"sums", a->sums, sum_bytes}, {"outside", a->outside_sum, a->outside_sum ? 8 : 0}};
    mh_status s;
    for (int r = 0; r < 3; ++r)
        if (read[r].bytes && (s = mh_check_buffer(ctx, read[r].name, read[r].p, read[r].bytes)) != MH_OK) return s;
    for (int w = 0; w < 2; ++w) {
        if (!written[w].bytes) continue;
        if ((s = mh_check_buffer(ctx, written[w].name, written[w].p, written[w].bytes)) != MH_OK) return s;
        for (int r = 0; r < 3; ++r)
            if (read[r].bytes && (s = mh_check_disjoint(ctx, written[w].name, written[w].p, written[w].bytes, read[r].name,
                                                        read[r].p, read[r].bytes)) != MH_OK)
                return s;
    }
    return written[1].bytes ? mh_check_disjoint(ctx, "outside", a->outside_sum, 8, "sums", a->sums, sum_bytes) : MH_OK;
}

/* mh_histogram_range's edges: written, apart from the input and the counts. */
static mh_status check_edges_out(mh_context *ctx, const mh_histogram_args *a, size_t in_bytes, size_t bin_bytes,
                                 size_t edge_bytes)
{
    mh_status s;
    if ((s = mh_check_buffer(ctx, "edges", a->edges_out, edge_bytes)) != MH_OK ||
        (a->n && (s = mh_check_disjoint(ctx, "edges", a->edges_out, edge_bytes, "in", a->in, in_bytes)) != MH_OK) ||
        (s = mh_check_disjoint(ctx, "edges", a->edges_out, edge_bytes, "bins", a->bins, bin_bytes)) != MH_OK)
        return s;
    return a->outside ? mh_check_disjoint(ctx, "edges", a->edges_out, edge_bytes, "outside", a->outside, 8) : MH_OK;
}

static const char *values_of(const mh_histogram_args *a)
{
    if (a->weighted)
        return a->floats ? (a->f.edges ? "weighted float32 values between edges" : "weighted float32 values in uniform bins")
                         : "weighted int32 values";
    return a->floats ? (a->f.edges ? "float32 values between edges" : "float32 values in uniform bins")
                     : a->bytes ? "bytes" : a->int64 ? "int64 values" : "int32 values";
}

static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_histogram_args *a = &args->histogram;
    if (a->weighted) return check_weighted_buffers(ctx, a);
    const size_t in_bytes = a->n * mh_histogram_value_bytes(a), bin_bytes = (size_t)a->num_bins * 8;
    const size_t edge_bytes = ((size_t)a->num_bins + 1) * sizeof(float);
    mh_status s;
    if (a->n && (s = mh_check_buffer(ctx, "in", a->in, in_bytes)) != MH_OK) return s;
    if (a->n && (uintptr_t)a->in % mh_histogram_value_bytes(a))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "in = %p: %s are read whole, from an address that is a multiple of %zu",
                       a->in, values_of(a), mh_histogram_value_bytes(a));
    if ((s = mh_check_buffer(ctx, "bins", a->bins, bin_bytes)) != MH_OK) return s;
    if (a->n && (s = mh_check_disjoint(ctx, "bins", a->bins, bin_bytes, "in", a->in, in_bytes)) != MH_OK) return s;
    if (a->f.edges && ((s = mh_check_buffer(ctx, "edges", a->f.edges, edge_bytes)) != MH_OK ||
                       (s = mh_check_disjoint(ctx, "bins", a->bins, bin_bytes, "edges", a->f.edges, edge_bytes)) != MH_OK))
        return s;
    if (a->f.edges && a->outside &&
        (s = mh_check_disjoint(ctx, "outside", a->outside, 8, "edges", a->f.edges, edge_bytes)) != MH_OK)
        return s;
    if (a->outside && ((s = mh_check_buffer(ctx, "outside", a->outside, 8)) != MH_OK ||
                       (s = mh_check_disjoint(ctx, "outside", a->outside, 8, "bins", a->bins, bin_bytes)) != MH_OK ||
                       (a->n && (s = mh_check_disjoint(ctx, "outside", a->outside, 8, "in", a->in, in_bytes)) != MH_OK)))
        return s;
    return a->edges_out ? check_edges_out(ctx, a, in_bytes, bin_bytes, edge_bytes) : MH_OK;
}

/* `auto`, by the device's rules (docs/histogram.md has the H100's figures): bytes over more than
 * histogram_lane_private_above_bins bins take lane-private (no bank conflicts: 82% of the copy
 * ceiling on uniform bytes against vector's 73%); int32
 * values and few bins (every slot its own bank already) take vector (87% on LeetGPU's int32,
 * 83% on seed 004's a-z buckets, 95% on one-bin bytes). racy is a demonstration, never a
 * candidate. Where why is not NULL, the rule with this problem's numbers. */
static const char *const *auto_order(mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    static const char *const cpu[] = {"cpu-omp", NULL};
    static const char *const weighted[] = {"weighted-shared", "weighted", "weighted-atomic", NULL};
    static const char *const many_byte_bins[] = {"lane-private", "vector", "coarse-interleaved", "global-atomic", NULL};
    static const char *const cuda[] = {"vector", "lane-private", "coarse-interleaved", "global-atomic", NULL};
    if (mh_is_cpu(ctx)) return cpu;
    const mh_histogram_args *a = &args->histogram;
    if (a->weighted) {
        if (why)
            snprintf(why, len, "%s, %d bins: weighted-shared first (up to 2048 bins), else weighted-atomic",
                     values_of(a), a->num_bins);
        return weighted;
    }
    const int above = ctx->rules->histogram_lane_private_above_bins, lane_private = a->bytes && a->num_bins > above;
    if (why)
        snprintf(why, len, "%s, %d bins: %s first (bytes over more than %d bins, histogram_lane_private_above_bins, "
                 "take lane-private)", values_of(a), a->num_bins, lane_private ? "lane-private" : "vector", above);
    return lane_private ? many_byte_bins : cuda;
}

static const mh_row_group groups[] = {mh_histogram_cpu_rows, mh_histogram_cuda_rows, mh_histogram_weighted_rows,
                                      mh_histogram_cub_rows};

/* Weighted calls go to the rows flagged MH_ROW_WEIGHTS (the weighted-only rows refuse the rest
 * in their own supports, which the bench and the tests ask directly). */
static int row_accepts(const mh_row *row, const mh_args *args, char *why, size_t len)
{
    if (!args->histogram.weighted || (row->flags & MH_ROW_WEIGHTS)) return 1;
    snprintf(why, len, "it counts; weighted histograms run on the weighted rows and the CPU rows");
    return 0;
}

static void describe(const mh_args *args, char *buf, size_t len)
{
    const mh_histogram_args *a = &args->histogram;
    snprintf(buf, len, "n = %zu %s, %d bins", a->n, values_of(a), a->num_bins);
}

const mh_op_table mh_histogram_table = {
    .op = MH_OP_HISTOGRAM,
    .name = "histogram",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .describe = describe,
    .row_accepts = row_accepts,
};

static mh_status run(mh_context *ctx, const char *variant, const void *in, int kind, size_t n, int lo, int hi,
                     int width, uint64_t *bins, uint64_t *outside)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_histogram_args_init(ctx, &x, in, kind, n, lo, hi, width, (unsigned long long *)bins,
                                         (unsigned long long *)outside);
    return s == MH_OK ? mh_dispatch(ctx, variant, &x) : s;
}

/* bincount's forms: values 0 .. num_bins - 1 of int32 or int64 */
static mh_status run_values(mh_context *ctx, const char *variant, const void *in, int kind, size_t n, int num_bins,
                            uint64_t *bins, uint64_t *outside)
{
    if (ctx && num_bins <= 0) {
        mh_clear_error(ctx);
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "num_bins = %d: it must be 1 .. %d", num_bins, MH_HISTOGRAM_MAX_BINS);
    }
    return run(ctx, variant, in, kind, n, 0, num_bins - 1, 1, bins, outside);
}

mh_status mh_histogram(mh_context *ctx, const char *variant, const int32_t *in, size_t n, int num_bins, uint64_t *bins,
                       uint64_t *outside)
{
    return run_values(ctx, variant, in, MH_HISTOGRAM_INT32, n, num_bins, bins, outside);
}

mh_status mh_histogram_int64(mh_context *ctx, const char *variant, const int64_t *in, size_t n, int num_bins,
                             uint64_t *bins, uint64_t *outside)
{
    return run_values(ctx, variant, in, MH_HISTOGRAM_INT64, n, num_bins, bins, outside);
}

mh_status mh_histogram_bytes(mh_context *ctx, const char *variant, const uint8_t *in, size_t n, int lo, int hi, int width,
                             uint64_t *bins, uint64_t *outside)
{
    return run(ctx, variant, in, MH_HISTOGRAM_BYTES, n, lo, hi, width, bins, outside);
}

/* The float32 forms: uniform bins over [lo, hi] (edges NULL; their edges written to edges_out
 * where it is not NULL) or between the edges given. */
static mh_status run_floats(mh_context *ctx, const char *variant, const float *in, size_t n, int num_bins, double lo,
                            double hi, const float *edges, uint64_t *bins, uint64_t *outside, float *edges_out)
{
    mh_args x;
    mh_status s = mh_histogram_float_args_init(ctx, &x, in, n, num_bins, lo, hi, edges, (unsigned long long *)bins,
                                               (unsigned long long *)outside);
    x.histogram.edges_out = edges_out;
    return s == MH_OK ? mh_dispatch(ctx, variant, &x) : s;
}

mh_status mh_histogram_float(mh_context *ctx, const char *variant, const float *in, size_t n, int num_bins, double lo,
                             double hi, uint64_t *bins, uint64_t *outside)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    return run_floats(ctx, variant, in, n, num_bins, lo, hi, NULL, bins, outside, NULL);
}

mh_status mh_histogram_range(mh_context *ctx, const char *variant, const float *in, size_t n, int num_bins, double lo,
                             double hi, uint64_t *bins, uint64_t *outside, float *edges)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (!edges) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "edges is NULL: mh_histogram_float counts alone");
    return run_floats(ctx, variant, in, n, num_bins, lo, hi, NULL, bins, outside, edges);
}

mh_status mh_histogram_edges(mh_context *ctx, const char *variant, const float *in, size_t n, const float *edges,
                             int num_bins, uint64_t *bins, uint64_t *outside)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (!edges) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "edges is NULL");
    return run_floats(ctx, variant, in, n, num_bins, 0.0, 0.0, edges, bins, outside, NULL);
}

mh_status mh_histogram_weighted(mh_context *ctx, const char *variant, int kind, const void *in, const float *weights,
                                size_t n, int num_bins, double lo, double hi, const float *edges, double *sums,
                                double *outside)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (n && !weights) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "weights is NULL");
    mh_args x;
    mh_status s = mh_histogram_weighted_args_init(ctx, &x, kind, in, weights, n, num_bins, lo, hi, edges, sums, outside);
    return s == MH_OK ? mh_dispatch(ctx, variant, &x) : s;
}

/* The edges a selection stands for: never read (selection reads no data), only not NULL. */
static const float no_edges[1];

static mh_status resolve(mh_context *ctx, const char *variant, size_t n, int num_bins, int kind,
                         const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (num_bins <= 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "num_bins = %d: it must be 1 .. %d", num_bins, MH_HISTOGRAM_MAX_BINS);
    if (kind < MH_HISTOGRAM_INT32 || kind > MH_HISTOGRAM_INT64)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "kind = %d: it must be 0 (int32), 1 (bytes), 2 (float32, uniform "
                       "bins), 3 (float32, edges) or 4 (int64)", kind);
    if (kind == MH_HISTOGRAM_BYTES && num_bins > 256)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "num_bins = %d: bytes have 256 values", num_bins);
    mh_args x;
    const int floats = kind == MH_HISTOGRAM_FLOAT_UNIFORM || kind == MH_HISTOGRAM_FLOAT_EDGES;
    mh_status s = floats ? mh_histogram_float_args_init(ctx, &x, NULL, n, num_bins, 0.0, 1.0,
                                                     kind == MH_HISTOGRAM_FLOAT_EDGES ? no_edges : NULL, NULL, NULL)
                      : mh_histogram_args_init(ctx, &x, NULL, kind, n, 0, num_bins - 1, 1, NULL, NULL);
    if (s != MH_OK) return s;
    return chosen ? mh_select(ctx, &x, chosen) : mh_supports(ctx, variant, &x);
}

mh_status mh_histogram_select(mh_context *ctx, size_t n, int num_bins, int kind, const mh_variant_info **chosen)
{
    if (!chosen) return ctx ? mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "chosen is NULL") : MH_ERR_INVALID_ARGUMENT;
    return resolve(ctx, NULL, n, num_bins, kind, chosen);
}

mh_status mh_histogram_supports(mh_context *ctx, const char *variant, size_t n, int num_bins, int kind)
{
    return resolve(ctx, variant, n, num_bins, kind, NULL);
}

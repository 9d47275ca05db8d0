/* rank front-end: the op's registry table, its argument checks and `auto`. */
#include "../core/internal.h"
#include "../core/dtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static mh_status check_dtype(mh_context *ctx, const char *name, mh_dtype t)
{
    if ((unsigned)t <= MH_U64 && t != MH_F16) return MH_OK;
    return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                   "%s = %d (%s): rank filters read and write every mh_dtype but float16 and bfloat16 (a selection "
                   "is exact in float32: widen them to it)", name, (int)t, mh_dtype_name(t));
}

/* d: depth and kdepth at least 1 (mh_rank_args_init). */
static mh_status check_sizes(mh_context *ctx, const mh_rank_desc *d, size_t *values)
{
    const size_t dims[4] = {d->batch, d->rows, d->cols, d->channels};
    static const char *const names[4] = {"batch", "rows", "cols", "channels"};
    for (int i = 0; i < 4; ++i)
        if (dims[i] == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = 0: the images are empty", names[i]);
    mh_status s = check_dtype(ctx, "in_type", d->in_type);
    if (s == MH_OK) s = check_dtype(ctx, "out_type", d->out_type);
    if (s != MH_OK) return s;
    size_t n, bytes;
    if (!mh_mul_ok(d->batch, d->depth, &n) || !mh_mul_ok(n, d->rows, &n) || !mh_mul_ok(n, d->cols, &n) ||
        !mh_mul_ok(n, d->channels, &n) || !mh_mul_ok(n, 8, &bytes) || n > (size_t)INT64_MAX / 8)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "batch = %zu, depth = %zu, rows = %zu, cols = %zu, channels = %zu: the images' size overflows",
                       d->batch, d->depth, d->rows, d->cols, d->channels);
    *values = n;
    return MH_OK;
}

/* The footprint's elements (kdepth x krows x kcols; d's kdepth at least 1), checked for size. */
static mh_status footprint_elements(mh_context *ctx, const mh_rank_desc *d, size_t *elements)
{
    if (d->krows == 0 || d->kcols == 0)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "krows = %zu, kcols = %zu: the footprint is empty", d->krows,
                       d->kcols);
    size_t bytes;
    if (!mh_mul_ok(d->kdepth, d->krows, elements) || !mh_mul_ok(*elements, d->kcols, elements) ||
        !mh_mul_ok(*elements, sizeof(double), &bytes) || d->kdepth > (size_t)INT32_MAX ||
        d->krows > (size_t)INT32_MAX || d->kcols > (size_t)INT32_MAX)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "kdepth = %zu, krows = %zu, kcols = %zu: the footprint's size overflows", d->kdepth, d->krows,
                       d->kcols);
    return MH_OK;
}

/* The footprint (host memory): its sides, its set elements counted into *count (at least one). */
static mh_status check_footprint(mh_context *ctx, const mh_rank_desc *d, size_t *count)
{
    if (!d->footprint) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "footprint is NULL");
    size_t elements;
    mh_status s = footprint_elements(ctx, d, &elements);
    if (s != MH_OK) return s;
    const size_t bytes = elements * sizeof(double);
    if (mh_is_device_memory(ctx, d->footprint))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "footprint = %p is device memory; it is read from the host",
                       (const void *)d->footprint);
    if (d->structure && mh_is_device_memory(ctx, d->structure))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "structure = %p is device memory; it is read from the host",
                       (const void *)d->structure);
    if (mh_is_cpu(ctx)) {
        s = mh_check_buffer(ctx, "footprint", d->footprint, elements);
        if (s == MH_OK && d->structure) s = mh_check_buffer(ctx, "structure", d->structure, bytes);
        if (s != MH_OK) return s;
    }
    size_t set = 0;
    for (size_t i = 0; i < elements; ++i) set += d->footprint[i] != 0;
    if (set == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "footprint: no element is set (nothing to select from)");
    *count = set;
    return MH_OK;
}

/* structure_in_type: 0 or 1; with it, on an integer image, every set element's structure value
 * finite and within what C's cast to the image's type defines (below 2^31, 2^63 for the 64-bit
 * integers, in magnitude). */
static mh_status check_structure(mh_context *ctx, const mh_rank_desc *d)
{
    if (d->structure_in_type != 0 && d->structure_in_type != 1)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "structure_in_type = %d: 0 (float64 sums) or 1 (scipy's)",
                       d->structure_in_type);
    const int integer = d->in_type != MH_F32 && d->in_type != MH_F64;
    if (!d->structure || !d->structure_in_type || !integer) return MH_OK;
    const double limit = d->in_type == MH_I64 || d->in_type == MH_U64 ? 0x1p63 : 0x1p31;
    if (d->mode == MH_MODE_CONSTANT && !(fabs(d->cval) < limit))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "cval = %g: a structure added in %s's arithmetic takes a cval of that type (below %g in "
                       "magnitude)", d->cval, mh_dtype_name(d->in_type), limit);
    for (size_t i = 0; i < d->kdepth * d->krows * d->kcols; ++i)
        if (d->footprint[i] && !(fabs(d->structure[i]) < limit))
            return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                           "structure[%zu] = %g: a structure added in %s's arithmetic takes finite values below %g in "
                           "magnitude (C's cast, which scipy makes, is undefined past them)", i, d->structure[i],
                           mh_dtype_name(d->in_type), limit);
    return MH_OK;
}

/* The desc with depth and kdepth at least 1 (0 means 1). */
static mh_rank_desc rows_view(const mh_rank_desc *d)
{
    mh_rank_desc v = *d;
    v.depth = v.depth ? v.depth : 1, v.kdepth = v.kdepth ? v.kdepth : 1;
    return v;
}

mh_status mh_rank_args_init(mh_context *ctx, mh_args *args, const mh_rank_desc *desc, const void *in, void *out)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_RANK;
    if (!desc) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "desc is NULL");
    mh_rank_args *a = &args->rank;
    const mh_rank_desc view = rows_view(desc), *d = &view;
    mh_status s;
    if ((s = check_sizes(ctx, d, &a->values)) != MH_OK) return s;
    if ((s = check_footprint(ctx, d, &a->count)) != MH_OK) return s;
    if ((s = check_structure(ctx, d)) != MH_OK) return s;
    if (d->rank >= a->count)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "rank = %zu: the footprint has %zu set elements (ranks 0 to %zu)",
                       d->rank, a->count, a->count - 1);
    if ((s = mh_check_origin(ctx, "origin_depth", d->origin_depth, d->kdepth, "footprint side")) != MH_OK ||
        (s = mh_check_origin(ctx, "origin_row", d->origin_row, d->krows, "footprint side")) != MH_OK ||
        (s = mh_check_origin(ctx, "origin_col", d->origin_col, d->kcols, "footprint side")) != MH_OK ||
        (s = mh_check_mode(ctx, "mode", d->mode)) != MH_OK)
        return s;
    a->d = view;
    /* a footprint of one plane filters each plane as an image (no overflow: check_sizes) */
    if (a->d.kdepth == 1) a->d.batch *= a->d.depth, a->d.depth = 1;
    a->in = in, a->out = out;
    return MH_OK;
}

static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const size_t in_bytes = a->values * mh_dtype_size(a->d.in_type);
    const size_t out_bytes = a->values * mh_dtype_size(a->d.out_type);
    mh_status s;
    if ((s = mh_check_buffer(ctx, "in", a->in, in_bytes)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, "out", a->out, out_bytes)) != MH_OK) return s;
    return mh_check_disjoint(ctx, "out", a->out, out_bytes, "in", a->in, in_bytes);
}

/* On the CPU cpu-minmax where it takes the call (the minimum or maximum over a line or a
 * rectangle), cpu-median3x3 and cpu-median5x5 for the median of a full 3 x 3 and 5 x 5 window
 * (8-bit images too: at 5 x 5 1.6x cpu-histogram's speed at 2048^2), cpu-histogram for any rank
 * under any footprint of an 8-bit image (at 7 x 7 1.4x cpu-median7x7's speed), cpu-median7x7 for
 * the median of a full 7 x 7 window of the other types, cpu-median3x3x3 for a volume's full
 * 3 x 3 x 3, else cpu-omp; on a GPU vanherk where it takes the call (the minimum or maximum over a
 * rectangle in one pass), minmax (over a line: scipy's separable passes; a rectangle in two),
 * median3x3, median5x5, median7x7 and median3x3x3 for the median of a full 3 x 3, 5 x 5, 7 x 7 and
 * 3 x 3 x 3 window (their networks pruned to the median), sorted-rows for any other rank of a full
 * 3 x 3, 5 x 5 or 7 x 7 window (on the H200 at 8192^2 a 5 x 5 rank 6 of float32 0.61 ms against
 * network's 3.77; a 7 x 7 rank 12 of uint8 1.11 against network's 12.7), network (up to 49 set elements) and histogram (any rank of a full rectangle
 * of an 8-bit image) in network_before_histogram's order, else bisect (past 49 set elements
 * 4.5-23x faster than naive, which stays the ladder's first rung). */
enum { NETWORK_BEFORE_HISTOGRAM_UP_TO = 25 };

/* Network sorts 9, 25 or 49 keys: up to 25 its sort is cheaper than histogram's walk, whose
 * rank moves as far as the window's keys differ (a 5 x 5 rank of uniform bytes on the H200 at
 * 8192^2: network 4.4 ms, histogram 5.3-6.5); a sort of 49 costs network 27 ms there, histogram
 * 6.5-12.5 ms at any window up to 31 x 31. */
static int network_before_histogram(const mh_args *a, char *why, size_t len)
{
    const int first = a->rank.count <= NETWORK_BEFORE_HISTOGRAM_UP_TO;
    if (why)
        snprintf(why, len, "a footprint of %zu set elements: %s before %s (network first up to %d)", a->rank.count,
                 first ? "network" : "histogram", first ? "histogram" : "network", NETWORK_BEFORE_HISTOGRAM_UP_TO);
    return first;
}

static const char *const *auto_order(mh_context *ctx, const mh_args *a, char *why, size_t len)
{
    static const char *const cpu[] = {"cpu-minmax", "cpu-median3x3",  "cpu-median5x5", "cpu-histogram",
                                      "cpu-median7x7", "cpu-median3x3x3", "cpu-omp",       NULL};
    static const char *const gpu_network[] = {"vanherk",     "minmax",      "median3x3", "median5x5", "median7x7",
                                              "median3x3x3", "sorted-rows", "network",   "histogram", "bisect", NULL};
    static const char *const gpu_histogram[] = {"vanherk",     "minmax",      "median3x3", "median5x5", "median7x7",
                                                "median3x3x3", "sorted-rows", "histogram", "network",   "bisect", NULL};
    if (mh_is_cpu(ctx)) return cpu;
    return network_before_histogram(a, why, len) ? gpu_network : gpu_histogram;
}

/* A footprint over three axes needs a row flagged for volumes. */
static int row_accepts(const mh_row *row, const mh_args *args, char *why, size_t len)
{
    const mh_rank_desc *d = &args->rank.d;
    if (d->kdepth == 1 || (row->flags & MH_ROW_VOLUMES)) return 1;
    char takers[256];
    snprintf(why, len, "a footprint of %zu planes: it takes footprints of one plane (volumes run on %s)", d->kdepth,
             mh_rows_with(MH_OP_RANK, MH_ROW_VOLUMES, takers, sizeof takers));
    return 0;
}

static const mh_row_group groups[] = {mh_rank_cpu_rows, mh_rank_cuda_rows, mh_rank_network_rows, mh_rank_median_rows,
                                      mh_rank_histogram_rows};

static void describe(const mh_args *args, char *buf, size_t len)
{
    const mh_rank_desc *d = &args->rank.d;
    char planes[64] = "", kplanes[64] = "";
    if (d->depth > 1) snprintf(planes, sizeof planes, "%zu x ", d->depth);
    if (d->kdepth > 1) snprintf(kplanes, sizeof kplanes, "%zu x ", d->kdepth);
    snprintf(buf, len, "%zu x %s%zu x %zu x %zu %s -> %s, rank %zu of a %s%zu x %zu footprint of %zu, mode %s%s",
             d->batch, planes, d->rows, d->cols, d->channels, mh_dtype_name(d->in_type), mh_dtype_name(d->out_type),
             d->rank, kplanes, d->krows, d->kcols, args->rank.count, mh_mode_name(d->mode),
             !d->structure ? "" : d->structure_in_type ? ", a structure added as scipy adds it" : ", a structure");
}

const mh_op_table mh_rank_table = {
    .op = MH_OP_RANK,
    .name = "rank",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .row_accepts = row_accepts,
    .describe = describe,
};

mh_status mh_rank(mh_context *ctx, const char *variant, const mh_rank_desc *desc, const void *in, void *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_rank_args_init(ctx, &a, desc, in, out);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_rank_select(mh_context *ctx, const mh_rank_desc *desc, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_rank_args_init(ctx, &a, desc, NULL, NULL);
    return s == MH_OK ? mh_select(ctx, &a, chosen) : s;
}

mh_status mh_rank_supports(mh_context *ctx, const char *variant, const mh_rank_desc *desc)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_rank_args_init(ctx, &a, desc, NULL, NULL);
    return s == MH_OK ? mh_supports(ctx, variant, &a) : s;
}

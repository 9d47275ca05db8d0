/* reduce front-end: the op's registry table, its argument checks and `auto`. */
#include "../core/internal.h"

#include <stdio.h>

#include <math.h>
#include <string.h>

/* mh_reduce_sum's problem: the whole float32 sum within the float sum's bound (mh_sum_rtol), which
 * every row takes. mh_reduce's sum of a 1 x n x 1 array is the same problem but promises the
 * double sum rounded once: auto takes it to the rows that keep that (rounded_once). */
mh_status mh_reduce_args_init(mh_context *ctx, mh_args *args, const float *in, size_t n, float *sum)
{
    const mh_status s = mh_reduce_axis_args_init(ctx, args, in, MH_F32, 1, n, 1, MH_REDUCE_SUM, sum);
    args->reduce.rounded_once = 0;
    return s;
}

static const char *kind_name(mh_reduce_kind k)
{
    static const char *const names[] = {"sum", "mean", "min", "max", "argmin", "argmax"};
    return names[k];
}

/* min and max: the dtype; float32 sums and means: float32; the arg forms, float64's sums and
 * means, integers' sums (int64, uint64) and means (float64): 8 bytes */
size_t mh_reduce_out_size(mh_dtype dtype, mh_reduce_kind kind)
{
    if (kind == MH_REDUCE_MIN || kind == MH_REDUCE_MAX) return mh_dtype_size(dtype);
    if (kind == MH_REDUCE_ARGMIN || kind == MH_REDUCE_ARGMAX) return 8;
    return dtype == MH_F32 ? 4 : 8;
}

mh_status mh_reduce_axis_args_init(mh_context *ctx, mh_args *args, const void *in, mh_dtype dtype, size_t outer, size_t len,
                                   size_t inner, mh_reduce_kind kind, void *out)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_REDUCE;
    size_t lanes, count, bytes;
    if ((int)dtype < MH_F32 || (int)dtype > MH_U64 || dtype == MH_F16)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "dtype = %d: reductions take float32 (MH_F32), float64 (MH_F64) and the 8- to 64-bit integers "
                       "(MH_I8 .. MH_I64, MH_U8 .. MH_U64), not float16",
                       (int)dtype);
    if ((int)kind < MH_REDUCE_SUM || (int)kind > MH_REDUCE_ARGMAX)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "kind = %d: it must be MH_REDUCE_SUM .. MH_REDUCE_ARGMAX", (int)kind);
    if (!mh_mul_ok(outer, inner, &lanes) || !mh_mul_ok(lanes, len, &count) || !mh_mul_ok(count, 8, &bytes) ||
        !mh_mul_ok(lanes, 8, &bytes))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "outer = %zu, len = %zu, inner = %zu: the input's size in bytes overflows size_t",
                       outer, len, inner);
    if (len == 0 && kind != MH_REDUCE_SUM && kind != MH_REDUCE_MEAN)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "len = 0: %s of an empty axis has no value (numpy raises)",
                       kind_name(kind));
    const int whole_sum = dtype == MH_F32 && kind == MH_REDUCE_SUM && outer == 1 && inner == 1;
    args->reduce = (mh_reduce_args){.in = in, .n = len, .sum = out, .whole_sum = whole_sum, .rounded_once = 1,
                                    .dtype = dtype, .kind = kind, .outer = outer, .len = len, .inner = inner, .out = out};
    return MH_OK;
}

void mh_reduce_reference(const float *in, size_t n, double *sum, double *mag)
{
    double s = 0.0, g = 0.0;
    for (size_t i = 0; i < n; ++i) s += (double)in[i], g += fabs((double)in[i]);
    *sum = s, *mag = g;
}

/* in is checked only when there is something to read: len = 0 takes a NULL input. The whole
 * sum's output is named `sum`, as mh_reduce_sum names it. */
static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_reduce_args *a = &args->reduce;
    const size_t bytes = a->outer * a->len * a->inner * mh_dtype_size(a->dtype), lanes = a->outer * a->inner;
    const size_t out_bytes = lanes * mh_reduce_out_size(a->dtype, a->kind);
    const char *name = a->whole_sum ? "sum" : "out";
    mh_status s;
    if (bytes && (s = mh_check_buffer(ctx, "in", a->in, bytes)) != MH_OK) return s;
    if (!lanes) return MH_OK;
    if ((s = mh_check_buffer(ctx, name, a->out, out_bytes)) != MH_OK) return s;
    return bytes ? mh_check_disjoint(ctx, name, a->out, out_bytes, "in", a->in, bytes) : MH_OK;
}

/* Rows not flagged MH_ROW_ANY_REDUCTION sum a whole float32 array and nothing else. */
static int row_accepts(const mh_row *row, const mh_args *args, char *why, size_t len)
{
    const mh_reduce_args *a = &args->reduce;
    if (a->whole_sum || (row->flags & MH_ROW_ANY_REDUCTION)) return 1;
    snprintf(why, len, "it sums a whole float32 array; the %s of %s over %zu x %zu x %zu runs on axis, axis-naive, cub "
             "and the CPU rows", kind_name(a->kind), mh_dtype_name(a->dtype), a->outer, a->len, a->inner);
    return 0;
}

/* `auto`, from the H100 (docs/reduce.md): for the whole float32 sum vector is level with CUB at
 * 2^28 (both ~3.07 TB/s) and 1.7x faster at LeetGPU's 4M (one launch and a memset against CUB's
 * two kernels); every other reduction goes to axis. */
static const char *const *auto_order(mh_context *ctx, const mh_args *a, char *why, size_t len)
{
    static const char *const cpu[] = {"cpu-omp", NULL};
    static const char *const whole_sum[] = {"vector", "shuffle", "cub", "consecutive", NULL};
    static const char *const any[] = {"axis", "cub", "axis-naive", NULL};
    if (mh_is_cpu(ctx)) return cpu;
    return a->reduce.whole_sum && !a->reduce.rounded_once ? whole_sum : any;
}

static const mh_row_group groups[] = {mh_reduce_cpu_rows, mh_reduce_cuda_rows, mh_reduce_axis_rows, mh_reduce_cub_rows};

static void describe(const mh_args *args, char *buf, size_t len)
{
    const mh_reduce_args *a = &args->reduce;
    if (a->whole_sum) snprintf(buf, len, "n = %zu", a->n);
    else
        snprintf(buf, len, "%s of %s, %zu x %zu x %zu over the middle axis", kind_name(a->kind),
                 mh_dtype_name(a->dtype), a->outer, a->len, a->inner);
}

const mh_op_table mh_reduce_table = {
    .op = MH_OP_REDUCE,
    .name = "reduce",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .describe = describe,
    .row_accepts = row_accepts,
};

mh_status mh_reduce_sum(mh_context *ctx, const char *variant, const float *in, size_t n, float *sum)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_reduce_args_init(ctx, &x, in, n, sum);
    return s == MH_OK ? mh_dispatch(ctx, variant, &x) : s;
}

mh_status mh_reduce_sum_select(mh_context *ctx, size_t n, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_reduce_args_init(ctx, &x, NULL, n, NULL);
    return s == MH_OK ? mh_select(ctx, &x, chosen) : s;
}

mh_status mh_reduce_sum_supports(mh_context *ctx, const char *variant, size_t n)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_reduce_args_init(ctx, &x, NULL, n, NULL);
    return s == MH_OK ? mh_supports(ctx, variant, &x) : s;
}

mh_status mh_reduce(mh_context *ctx, const char *variant, const void *in, mh_dtype dtype, size_t outer, size_t len,
                    size_t inner, mh_reduce_kind kind, void *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_reduce_axis_args_init(ctx, &x, in, dtype, outer, len, inner, kind, out);
    return s == MH_OK ? mh_dispatch(ctx, variant, &x) : s;
}

mh_status mh_reduce_select(mh_context *ctx, mh_dtype dtype, size_t outer, size_t len, size_t inner, mh_reduce_kind kind,
                           const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_reduce_axis_args_init(ctx, &x, NULL, dtype, outer, len, inner, kind, NULL);
    return s == MH_OK ? mh_select(ctx, &x, chosen) : s;
}

mh_status mh_reduce_supports(mh_context *ctx, const char *variant, mh_dtype dtype, size_t outer, size_t len,
                             size_t inner, mh_reduce_kind kind)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_reduce_axis_args_init(ctx, &x, NULL, dtype, outer, len, inner, kind, NULL);
    return s == MH_OK ? mh_supports(ctx, variant, &x) : s;
}

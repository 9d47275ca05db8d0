/* reduce front-end: the op's registry table, its argument checks and `auto`. */
#include "../core/internal.h"

#include <stdio.h>

#include <math.h>
#include <string.h>

mh_status mh_reduce_args_init(mh_context *ctx, mh_args *args, const float *in, size_t n, float *sum)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_REDUCE;
    size_t bytes;
    if (!mh_mul_ok(n, sizeof(float), &bytes))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "n = %zu: the input's size in bytes overflows size_t", n);
    args->reduce = (mh_reduce_args){in, n, sum};
    return MH_OK;
}

void mh_reduce_reference(const float *in, size_t n, double *sum, double *mag)
{
    double s = 0.0, g = 0.0;
    for (size_t i = 0; i < n; ++i) s += (double)in[i], g += fabs((double)in[i]);
    *sum = s, *mag = g;
}

/* in is checked only when there is something to read: n = 0 takes a NULL input. */
static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_reduce_args *a = &args->reduce;
    const size_t bytes = a->n * sizeof(float);
    mh_status s;
    if (a->n && (s = mh_check_buffer(ctx, "in", a->in, bytes)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, "sum", a->sum, sizeof(float))) != MH_OK) return s;
    return a->n ? mh_check_disjoint(ctx, "sum", a->sum, sizeof(float), "in", a->in, bytes) : MH_OK;
}

/* `auto`, from the H100 (docs/reduce.md): vector is level with CUB at 2^28 (both ~3.07 TB/s)
 * and 1.7x faster at LeetGPU's 4M (one launch and a memset against CUB's two kernels). */
static const char *const *auto_order(mh_context *ctx, const mh_args *a)
{
    static const char *const cpu[] = {"cpu-omp", NULL};
    static const char *const cuda[] = {"vector", "shuffle", "cub", "consecutive", NULL};
    (void)a;
    return mh_is_cpu(ctx) ? cpu : cuda;
}

static const mh_row_group groups[] = {mh_reduce_cpu_rows, mh_reduce_cuda_rows, mh_reduce_cub_rows};

static void describe(const mh_args *a, char *buf, size_t len) { snprintf(buf, len, "n = %zu", a->reduce.n); }

const mh_op_table mh_reduce_table = {
    .op = MH_OP_REDUCE,
    .name = "reduce",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .describe = describe,
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

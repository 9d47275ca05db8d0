/* transpose front-end: the op's registry table, its argument checks and `auto`. */
#include "../core/internal.h"

#include <stdio.h>

#include <string.h>

mh_status mh_transpose_args_init(mh_context *ctx, mh_args *args, const float *in, size_t rows, size_t cols, float *out)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_TRANSPOSE;
    size_t count, bytes;
    if (rows == 0 || cols == 0)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = 0: the matrix is empty", rows == 0 ? "rows" : "cols");
    if (!mh_mul_ok(rows, cols, &count) || !mh_mul_ok(count, sizeof(float), &bytes))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "rows = %zu, cols = %zu: the matrix's size in bytes overflows size_t",
                       rows, cols);
    args->transpose = (mh_transpose_args){in, rows, cols, out};
    return MH_OK;
}

static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_transpose_args *a = &args->transpose;
    const size_t bytes = a->rows * a->cols * sizeof(float);
    mh_status s;
    if ((s = mh_check_buffer(ctx, "in", a->in, bytes)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, "out", a->out, bytes)) != MH_OK) return s;
    return mh_check_disjoint(ctx, "out", a->out, bytes, "in", a->in, bytes);
}

/* `auto`, from the H100 figures in docs/transpose.md: coarse moves every 2-D shape fastest
 * (94% of the copy ceiling at 8192 x 8192, 93% at 7000 x 6000); a single row or column is
 * its own transpose in memory, and vector copies it (93%, where the tiled rungs reach 6-7%). */
static const char *const *auto_order(mh_context *ctx, const mh_args *a, char *why, size_t len)
{
    static const char *const cpu[] = {"cpu-omp", NULL};
    static const char *const matrix[] = {"coarse", "vector", "padded", "naive", NULL};
    static const char *const line[] = {"vector", "coarse", "naive", NULL};
    if (mh_is_cpu(ctx)) return cpu;
    return a->transpose.rows == 1 || a->transpose.cols == 1 ? line : matrix;
}

static const mh_row_group groups[] = {mh_transpose_cpu_rows, mh_transpose_cuda_rows, mh_transpose_cublas_rows};

static void describe(const mh_args *a, char *buf, size_t len)
{
    snprintf(buf, len, "a %zu x %zu matrix", a->transpose.rows, a->transpose.cols);
}

const mh_op_table mh_transpose_table = {
    .op = MH_OP_TRANSPOSE,
    .name = "transpose",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .describe = describe,
};

mh_status mh_transpose(mh_context *ctx, const char *variant, const float *in, size_t rows, size_t cols, float *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_transpose_args_init(ctx, &a, in, rows, cols, out);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_transpose_select(mh_context *ctx, size_t rows, size_t cols, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_transpose_args_init(ctx, &a, NULL, rows, cols, NULL);
    return s == MH_OK ? mh_select(ctx, &a, chosen) : s;
}

mh_status mh_transpose_supports(mh_context *ctx, const char *variant, size_t rows, size_t cols)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_transpose_args_init(ctx, &a, NULL, rows, cols, NULL);
    return s == MH_OK ? mh_supports(ctx, variant, &a) : s;
}

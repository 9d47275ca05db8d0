/* matmul front-end: the op's registry table, its argument checks and `auto`. */
#include "../core/internal.h"

#include <stdio.h>

#include <math.h>
#include <string.h>

/* A matmul's arguments over arrays of `type` (float32, float64, float16 or bfloat16), their sizes
 * checked. */
static mh_status args_init_typed(mh_context *ctx, mh_args *args, mh_dtype type, const void *ma, const void *mb,
                                 void *mc, size_t m, size_t k, size_t n)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_MATMUL;
    if (type != MH_F32 && type != MH_F64 && type != MH_F16 && type != MH_BF16)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "type = %d (%s): matmul takes float32, float64, float16 or bfloat16",
                       (int)type, mh_dtype_name(type));
    if (m == 0 || k == 0 || n == 0)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = 0: the product is empty", m == 0 ? "m" : k == 0 ? "k" : "n");
    const size_t dims[3][2] = {{m, k}, {k, n}, {m, n}};
    const char *names[3] = {"a (m x k)", "b (k x n)", "c (m x n)"};
    for (int i = 0; i < 3; ++i) {
        size_t count, bytes;
        if (!mh_mul_ok(dims[i][0], dims[i][1], &count) || !mh_mul_ok(count, mh_dtype_size(type), &bytes))
            return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "m = %zu, k = %zu, n = %zu: the size of %s overflows size_t", m,
                           k, n, names[i]);
    }
    args->matmul = (mh_matmul_args){(const float *)ma, (const float *)mb, (float *)mc, m, k, n, type};
    return MH_OK;
}

mh_status mh_matmul_args_init(mh_context *ctx, mh_args *args, const float *ma, const float *mb, float *mc, size_t m,
                              size_t k, size_t n)
{
    return args_init_typed(ctx, args, MH_F32, ma, mb, mc, m, k, n);
}

void mh_matmul_reference_at(const float *a, const float *b, size_t k, size_t n, size_t i, size_t j, double *ref,
                            double *mag)
{
    double s = 0.0, g = 0.0;
    for (size_t p = 0; p < k; ++p) {
        const double t = (double)a[i * k + p] * (double)b[p * n + j];
        s += t, g += fabs(t);
    }
    *ref = s, *mag = g;
}

static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_matmul_args *x = &args->matmul;
    const size_t size = mh_dtype_size(x->type);
    const size_t abytes = x->m * x->k * size, bbytes = x->k * x->n * size, cbytes = x->m * x->n * size;
    mh_status s;
    if ((s = mh_check_buffer(ctx, "a", x->a, abytes)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, "b", x->b, bbytes)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, "c", x->c, cbytes)) != MH_OK) return s;
    if ((s = mh_check_disjoint(ctx, "c", x->c, cbytes, "a", x->a, abytes)) != MH_OK) return s;
    return mh_check_disjoint(ctx, "c", x->c, cbytes, "b", x->b, bbytes);
}

/* `auto`: tf32x3-wgmma where it is both faster than cublasSgemm and within 1.5x of its largest
 * error, else cuBLAS; warptile takes what cuBLAS's int dimensions refuse. The device's rules
 * (src/core/auto_rules.h) say where: speed from matmul_tc_min_k and matmul_tc_min_work (the
 * H100's tune sweep: from k >= 512 and m k n >= 4e8), accuracy up to matmul_tc_max_k and from
 * matmul_tc_min_outputs (lab/scripts/matmul_accuracy.py: within 0.64x and 1.20x of cuBLAS's
 * largest error wherever m n >= 896^2 up to k = 262144, the longest measured; with fewer outputs
 * cuBLAS sums shorter chains, the ratio grows past 1.5x, and cuBLAS is faster there too;
 * docs/matmul.md). tf32x3-wgmma refuses devices other than sm_90 and a failed workspace
 * allocation passes the call on. */
static int tf32x3_favoured(const mh_auto_rules *r, const mh_matmul_args *x)
{
    const double work = (double)x->m * (double)x->k * (double)x->n, outputs = (double)x->m * (double)x->n;
    const double k = (double)x->k;
    return k >= r->matmul_tc_min_k && k <= r->matmul_tc_max_k && work >= r->matmul_tc_min_work &&
           outputs >= r->matmul_tc_min_outputs;
}

/* The row flag a product of `type` needs; 0 for float32 (whose rows refuse it in supports). */
static unsigned type_flag(mh_dtype type)
{
    return type == MH_F64 ? MH_ROW_FLOAT64 : type == MH_F16 ? MH_ROW_FLOAT16 : type == MH_BF16 ? MH_ROW_BFLOAT16 : 0;
}

/* Float64, float16 and bfloat16 products run on the rows flagged for their type alone. */
static int row_accepts(const mh_row *row, const mh_args *args, char *why, size_t len)
{
    const unsigned need = type_flag(args->matmul.type);
    if (!need || (row->flags & need)) return 1;
    char rows[256];
    snprintf(why, len, "it does not compute %s products; %s do", mh_dtype_name(args->matmul.type),
             mh_rows_with(MH_OP_MATMUL, need, rows, sizeof rows));
    return 0;
}

/* A GPU's candidates for a float64, float16 or bfloat16 product (its vendor row); NULL for float32. */
static const char *const *typed_gpu_order(mh_dtype type)
{
    static const char *const dgemm[] = {"cublas-dgemm", NULL};
    static const char *const f16[] = {"cublas-f16", NULL};
    static const char *const bf16[] = {"cublas-bf16", NULL};
    return type == MH_F64 ? dgemm : type == MH_F16 ? f16 : type == MH_BF16 ? bf16 : NULL;
}

/* auto's order: a typed product on its cuBLAS row; float32 on tf32x3-wgmma first where
 * tf32x3_favoured holds, else cuBLAS first; and (why not NULL) the rule with this problem's numbers. */
static const char *const *auto_order(mh_context *ctx, const mh_args *a, char *why, size_t len)
{
    static const char *const cpu[] = {"cpu-omp", NULL};
    static const char *const cuda[] = {"cublas", "warptile", "vector", "regblock-2d", "tiled", "naive", NULL};
    static const char *const tensor[] = {"tf32x3-wgmma", "cublas", "warptile", "vector", "regblock-2d", "tiled", "naive", NULL};
    if (mh_is_cpu(ctx)) return cpu;
    const mh_auto_rules *r = ctx->rules;
    const mh_matmul_args *x = &a->matmul;
    const char *const *typed = typed_gpu_order(x->type);
    if (typed) {
        if (why) snprintf(why, len, "a %s product: %s on a GPU, cpu-omp on the CPU", mh_dtype_name(x->type), typed[0]);
        return typed;
    }
    const int tensor_first = tf32x3_favoured(r, x);
    if (why) {
        const double work = (double)x->m * (double)x->k * (double)x->n, outputs = (double)x->m * (double)x->n;
        snprintf(why, len,
                 "tf32x3-wgmma first where k is in [%.0f, %.0f] (matmul_tc_min_k, _max_k), m k n >= %.3g "
                 "(matmul_tc_min_work) and m n >= %.3g (matmul_tc_min_outputs); here k = %zu, m k n = %.3g, m n = "
                 "%.3g: %s",
                 r->matmul_tc_min_k, r->matmul_tc_max_k, r->matmul_tc_min_work, r->matmul_tc_min_outputs, x->k, work,
                 outputs, tensor_first ? "tf32x3-wgmma first" : "cuBLAS first");
    }
    return tensor_first ? tensor : cuda;
}

static const mh_row_group groups[] = {mh_matmul_cpu_rows,    mh_matmul_cuda_rows,  mh_matmul_regtile_rows,
                                      mh_matmul_tensor_rows, mh_matmul_wgmma_rows, mh_matmul_cublas_rows};

static void describe(const mh_args *a, char *buf, size_t len)
{
    snprintf(buf, len, "m = %zu, k = %zu, n = %zu%s%s", a->matmul.m, a->matmul.k, a->matmul.n,
             a->matmul.type == MH_F32 ? "" : ", ", a->matmul.type == MH_F32 ? "" : mh_dtype_name(a->matmul.type));
}

const mh_op_table mh_matmul_table = {
    .op = MH_OP_MATMUL,
    .name = "matmul",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .row_accepts = row_accepts,
    .describe = describe,
};

mh_status mh_matmul(mh_context *ctx, const char *variant, const float *a, const float *b, float *c, size_t m, size_t k,
                    size_t n)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_matmul_args_init(ctx, &x, a, b, c, m, k, n);
    return s == MH_OK ? mh_dispatch(ctx, variant, &x) : s;
}

mh_status mh_matmul_typed(mh_context *ctx, const char *variant, mh_dtype type, const void *a, const void *b, void *c,
                          size_t m, size_t k, size_t n)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = args_init_typed(ctx, &x, type, a, b, c, m, k, n);
    return s == MH_OK ? mh_dispatch(ctx, variant, &x) : s;
}

mh_status mh_matmul_typed_select(mh_context *ctx, mh_dtype type, size_t m, size_t k, size_t n,
                                 const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = args_init_typed(ctx, &x, type, NULL, NULL, NULL, m, k, n);
    return s == MH_OK ? mh_select(ctx, &x, chosen) : s;
}

mh_status mh_matmul_typed_supports(mh_context *ctx, const char *variant, mh_dtype type, size_t m, size_t k, size_t n)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = args_init_typed(ctx, &x, type, NULL, NULL, NULL, m, k, n);
    return s == MH_OK ? mh_supports(ctx, variant, &x) : s;
}

mh_status mh_matmul_select(mh_context *ctx, size_t m, size_t k, size_t n, const mh_variant_info **chosen)
{
    return mh_matmul_typed_select(ctx, MH_F32, m, k, n, chosen);
}

mh_status mh_matmul_supports(mh_context *ctx, const char *variant, size_t m, size_t k, size_t n)
{
    return mh_matmul_typed_supports(ctx, variant, MH_F32, m, k, n);
}

/* matmul front-end: the op's registry table, its argument checks and `auto`. */
#include "../core/internal.h"

#include <stdio.h>

#include <math.h>
#include <string.h>

mh_status mh_matmul_args_init(mh_context *ctx, mh_args *args, const float *ma, const float *mb, float *mc, size_t m,
                              size_t k, size_t n)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_MATMUL;
    if (m == 0 || k == 0 || n == 0)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = 0: the product is empty", m == 0 ? "m" : k == 0 ? "k" : "n");
    const size_t dims[3][2] = {{m, k}, {k, n}, {m, n}};
    const char *names[3] = {"a (m x k)", "b (k x n)", "c (m x n)"};
    for (int i = 0; i < 3; ++i) {
        size_t count, bytes;
        if (!mh_mul_ok(dims[i][0], dims[i][1], &count) || !mh_mul_ok(count, sizeof(float), &bytes))
            return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "m = %zu, k = %zu, n = %zu: the size of %s overflows size_t", m,
                           k, n, names[i]);
    }
    args->matmul = (mh_matmul_args){ma, mb, mc, m, k, n};
    return MH_OK;
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
    const size_t abytes = x->m * x->k * sizeof(float), bbytes = x->k * x->n * sizeof(float),
                 cbytes = x->m * x->n * sizeof(float);
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

static void explain(const mh_context *ctx, const mh_args *args, char *buf, size_t len)
{
    const mh_auto_rules *r = ctx->rules;
    const mh_matmul_args *x = &args->matmul;
    const double work = (double)x->m * (double)x->k * (double)x->n, outputs = (double)x->m * (double)x->n;
    snprintf(buf, len,
             "tf32x3-wgmma first where k is in [%.0f, %.0f] (matmul_tc_min_k, _max_k), m k n >= %.3g "
             "(matmul_tc_min_work) and m n >= %.3g (matmul_tc_min_outputs); here k = %zu, m k n = %.3g, m n = %.3g: "
             "%s",
             r->matmul_tc_min_k, r->matmul_tc_max_k, r->matmul_tc_min_work, r->matmul_tc_min_outputs, x->k, work, outputs,
             tf32x3_favoured(r, x) ? "tf32x3-wgmma first" : "cuBLAS first");
}

static const char *const *auto_order(mh_context *ctx, const mh_args *a)
{
    static const char *const cpu[] = {"cpu-omp", NULL};
    static const char *const cuda[] = {"cublas", "warptile", "vector", "regblock-2d", "tiled", "naive", NULL};
    static const char *const tensor[] = {"tf32x3-wgmma", "cublas", "warptile", "vector", "regblock-2d", "tiled", "naive", NULL};
    if (mh_is_cpu(ctx)) return cpu;
    return tf32x3_favoured(ctx->rules, &a->matmul) ? tensor : cuda;
}

static const mh_row_group groups[] = {mh_matmul_cpu_rows,    mh_matmul_cuda_rows,  mh_matmul_regtile_rows,
                                      mh_matmul_tensor_rows, mh_matmul_wgmma_rows, mh_matmul_cublas_rows};

static void describe(const mh_args *a, char *buf, size_t len)
{
    snprintf(buf, len, "m = %zu, k = %zu, n = %zu", a->matmul.m, a->matmul.k, a->matmul.n);
}

const mh_op_table mh_matmul_table = {
    .op = MH_OP_MATMUL,
    .name = "matmul",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .explain = explain,
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

mh_status mh_matmul_select(mh_context *ctx, size_t m, size_t k, size_t n, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_matmul_args_init(ctx, &x, NULL, NULL, NULL, m, k, n);
    return s == MH_OK ? mh_select(ctx, &x, chosen) : s;
}

mh_status mh_matmul_supports(mh_context *ctx, const char *variant, size_t m, size_t k, size_t n)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args x;
    mh_status s = mh_matmul_args_init(ctx, &x, NULL, NULL, NULL, m, k, n);
    return s == MH_OK ? mh_supports(ctx, variant, &x) : s;
}

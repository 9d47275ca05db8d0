/* matmul/cublas: the vendor baseline, cublasSgemm in FP32 (CUBLAS_DEFAULT_MATH: no TF32).
 * cuBLAS is column-major: row-major c = a . b is column-major c^T = b^T . a^T, so the call
 * passes b first: (n x k) . (k x m) with leading dimensions n, k, n. */
#include "../core/internal.h"

#include <cublas_v2.h>
#include <limits.h>
#include <stdio.h>

static int cublas_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    (void)ctx;
    const mh_matmul_args *a = &x->matmul;
    if (a->m <= INT_MAX && a->k <= INT_MAX && a->n <= INT_MAX) return 1;
    snprintf(why, len, "m = %zu, k = %zu, n = %zu exceed cuBLAS's int dimensions", a->m, a->k, a->n);
    return 0;
}

static mh_status cublas_run(mh_context *ctx, const mh_args *x)
{
    const mh_matmul_args *a = &x->matmul;
    void *handle = NULL;
    mh_status s = mh_cublas_handle(ctx, &handle);
    if (s != MH_OK) return s;
    const float one = 1.0f, zero = 0.0f;
    const int m = (int)a->m, k = (int)a->k, n = (int)a->n;
    cublasStatus_t st = cublasSgemm((cublasHandle_t)handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, a->b, n, a->a, k,
                                    &zero, a->c, n);
    return st == CUBLAS_STATUS_SUCCESS ? MH_OK
                                       : mh_fail(ctx, MH_ERR_VENDOR, "cuBLAS cublasSgemm: %s", cublasGetStatusString(st));
}

static const mh_row rows[] = {
    {{"matmul/cublas", MH_OP_MATMUL, MH_BACKEND_VENDOR, 20, "vendor", "cuBLAS", "cublasSgemm, FP32 (TF32 off)"},
     cublas_supports, cublas_run, NULL, 0},
};

MH_ROW_GROUP(mh_matmul_cublas_rows, rows)

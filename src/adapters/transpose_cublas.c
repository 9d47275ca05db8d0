/* transpose/cublas: the vendor baseline, cublasSgeam (C = alpha op(A) + beta op(B)) with
 * op(A) = A^T and beta = 0. cuBLAS is column-major: our row-major rows x cols input is its
 * cols x rows matrix (lda = cols), and our cols x rows output its rows x cols (ldc = rows).
 * The handle lives in the context (cublas_handle.c). */
#define MH_VENDOR_CUBLAS_API
#include "vendor_lib.h"

#include <cuda_runtime_api.h>
#include <limits.h>
#include <stdio.h>

static int cublas_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    (void)ctx;
    if (x->transpose.rows <= INT_MAX && x->transpose.cols <= INT_MAX) return 1;
    snprintf(why, len, "a %zu x %zu matrix exceeds cuBLAS's int dimensions", x->transpose.rows, x->transpose.cols);
    return 0;
}

static mh_status cublas_run(mh_context *ctx, const mh_args *x)
{
    const mh_transpose_args *a = &x->transpose;
    void *handle = NULL;
    mh_status s = mh_cublas_handle(ctx, &handle);
    if (s != MH_OK) return s;
    cublasHandle_t h = handle;
    const float one = 1.0f, zero = 0.0f;
    const int m = (int)a->rows, n = (int)a->cols;
    /* B is not read when beta = 0; C itself is passed, as cuBLAS allows (ldb = ldc, no transpose) */
    cublasStatus_t st = mh_cublas.cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, a->in, n, &zero, a->out, m, a->out, m);
    return st == CUBLAS_STATUS_SUCCESS ? MH_OK
                                       : mh_fail(ctx, MH_ERR_VENDOR, "cuBLAS cublasSgeam: %s", mh_cublas.cublasGetStatusString(st));
}

static const mh_row rows[] = {
    {{"transpose/cublas", MH_OP_TRANSPOSE, MH_BACKEND_VENDOR, 10, "vendor", "cuBLAS", "cublasSgeam with op(A) = A^T"},
     cublas_supports, cublas_run, NULL, 0, MH_LIB_CUBLAS},
};

MH_ROW_GROUP(mh_transpose_cublas_rows, rows)

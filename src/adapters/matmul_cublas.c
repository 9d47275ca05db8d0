/* matmul/cublas: the vendor baseline, cublasSgemm in FP32 (CUBLAS_DEFAULT_MATH: no TF32).
 * cuBLAS is column-major: row-major c = a . b is column-major c^T = b^T . a^T, so the call
 * passes b first: (n x k) . (k x m) with leading dimensions n, k, n. */
#define MH_VENDOR_CUBLAS_API
#include "vendor_lib.h"

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

/* A cuBLAS call's status as the library's: MH_OK, or a vendor error naming the call. */
static mh_status cublas_result(mh_context *ctx, cublasStatus_t st, const char *call)
{
    return st == CUBLAS_STATUS_SUCCESS ? MH_OK
                                       : mh_fail(ctx, MH_ERR_VENDOR, "cuBLAS %s: %s", call, mh_cublas.cublasGetStatusString(st));
}

static mh_status cublas_run(mh_context *ctx, const mh_args *x)
{
    const mh_matmul_args *a = &x->matmul;
    void *handle = NULL;
    mh_status s = mh_cublas_handle(ctx, &handle);
    if (s != MH_OK) return s;
    const float one = 1.0f, zero = 0.0f;
    const int m = (int)a->m, k = (int)a->k, n = (int)a->n;
    return cublas_result(ctx, mh_cublas.cublasSgemm_v2((cublasHandle_t)handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, a->b,
                                                       n, a->a, k, &zero, a->c, n),
                         "cublasSgemm");
}

/* cublasGemmEx on a, b and c of one data type with a compute type: float32 data with FAST_TF32
 * (TF32 products, reduced precision) or EMULATED_16BFX9 (FP32 emulated with three BF16 products,
 * the strategy set to EAGER so that cuBLAS emulates wherever it can, and put back after); float16
 * and bfloat16 data with 32F (FP32 accumulation). */
static mh_status gemm_ex(mh_context *ctx, const mh_args *x, cudaDataType data, cublasComputeType_t type, const char *what)
{
    const mh_matmul_args *a = &x->matmul;
    void *handle = NULL;
    mh_status s = mh_cublas_handle(ctx, &handle);
    if (s != MH_OK) return s;
    cublasHandle_t h = (cublasHandle_t)handle;
    const int emulated = type == CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
    cublasStatus_t st = emulated ? mh_cublas.cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER) : CUBLAS_STATUS_SUCCESS;
    const float one = 1.0f, zero = 0.0f;
    const int m = (int)a->m, k = (int)a->k, n = (int)a->n;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = mh_cublas.cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, a->b, data, n, a->a, data, k, &zero, a->c, data,
                                    n, type, CUBLAS_GEMM_DEFAULT);
    if (emulated) mh_cublas.cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_DEFAULT);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED)
        return mh_fail(ctx, MH_ERR_UNSUPPORTED, "cuBLAS cublasGemmEx (%s) is not supported on this device: %s", what,
                       mh_cublas.cublasGetStatusString(st));
    return st == CUBLAS_STATUS_SUCCESS ? MH_OK
                                       : mh_fail(ctx, MH_ERR_VENDOR, "cuBLAS cublasGemmEx (%s): %s", what, mh_cublas.cublasGetStatusString(st));
}

static mh_status cublas_tf32_run(mh_context *ctx, const mh_args *x)
{
    return gemm_ex(ctx, x, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "CUBLAS_COMPUTE_32F_FAST_TF32");
}

/* cuBLAS documents the BF16x9 emulation for Blackwell; on the H100 (CUDA 13.0) ... */
static int cublas_bf16x9_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    if (ctx->cc < 100) {
        snprintf(why, len, "cuBLAS's BF16x9 FP32 emulation needs compute capability 10.0 or later (this device: %d.%d)",
                 ctx->cc / 10, ctx->cc % 10);
        return 0;
    }
    return cublas_supports(ctx, x, why, len);
}

static mh_status cublas_bf16x9_run(mh_context *ctx, const mh_args *x)
{
    return gemm_ex(ctx, x, CUDA_R_32F, CUBLAS_COMPUTE_32F_EMULATED_16BFX9, "CUBLAS_COMPUTE_32F_EMULATED_16BFX9");
}

/* A row of one element type: it refuses the others (the op's row_accepts sends it only the
 * float32 calls besides its own). */
static int takes_type(const mh_context *ctx, const mh_args *x, mh_dtype type, char *why, size_t len)
{
    if (x->matmul.type != type) {
        snprintf(why, len, "it computes %s products; this one is %s", mh_dtype_name(type), mh_dtype_name(x->matmul.type));
        return 0;
    }
    return cublas_supports(ctx, x, why, len);
}

/* matmul/cublas-dgemm: a float64 product (mh_matmul_typed) by cublasDgemm, FP64 throughout. */
static int cublas_dgemm_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    return takes_type(ctx, x, MH_F64, why, len);
}

static mh_status cublas_dgemm_run(mh_context *ctx, const mh_args *x)
{
    const mh_matmul_args *a = &x->matmul;
    void *handle = NULL;
    mh_status s = mh_cublas_handle(ctx, &handle);
    if (s != MH_OK) return s;
    const double one = 1.0, zero = 0.0;
    const int m = (int)a->m, k = (int)a->k, n = (int)a->n;
    return cublas_result(ctx, mh_cublas.cublasDgemm_v2((cublasHandle_t)handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
                                                       mh_matmul_b64(a), n, mh_matmul_a64(a), k, &zero, mh_matmul_c64(a), n),
                         "cublasDgemm");
}

/* matmul/cublas-f16: a float16 product (float16 a, b and c) by cublasGemmEx with FP32
 * accumulation (CUBLAS_COMPUTE_32F: tensor cores, each product exact in float32), c rounded to
 * float16 once. */
static int cublas_f16_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    return takes_type(ctx, x, MH_F16, why, len);
}

static mh_status cublas_f16_run(mh_context *ctx, const mh_args *x)
{
    return gemm_ex(ctx, x, CUDA_R_16F, CUBLAS_COMPUTE_32F, "float16, CUBLAS_COMPUTE_32F");
}

/* matmul/cublas-bf16: a bfloat16 product the same way (CUDA_R_16BF). */
static int cublas_bf16_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    return takes_type(ctx, x, MH_BF16, why, len);
}

static mh_status cublas_bf16_run(mh_context *ctx, const mh_args *x)
{
    return gemm_ex(ctx, x, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "bfloat16, CUBLAS_COMPUTE_32F");
}

static const mh_row rows[] = {
    {{"matmul/cublas", MH_OP_MATMUL, MH_BACKEND_VENDOR, 20, "vendor", "cuBLAS", "cublasSgemm, FP32 (TF32 off)"},
     cublas_supports, cublas_run, NULL, 0, MH_LIB_CUBLAS},
    {{"matmul/cublas-tf32", MH_OP_MATMUL, MH_BACKEND_VENDOR, 21, "vendor", "cuBLAS",
      "REDUCED PRECISION: cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 (TF32 tensor-core products)"},
     cublas_supports, cublas_tf32_run, NULL, 0, MH_LIB_CUBLAS, NULL, MH_ROW_REDUCED_PRECISION},
    {{"matmul/cublas-bf16x9", MH_OP_MATMUL, MH_BACKEND_VENDOR, 22, "vendor", "cuBLAS",
      "cublasGemmEx with CUBLAS_COMPUTE_32F_EMULATED_16BFX9: FP32 emulated by three BF16 products"},
     cublas_bf16x9_supports, cublas_bf16x9_run, NULL, 0, MH_LIB_CUBLAS},
    {{"matmul/cublas-dgemm", MH_OP_MATMUL, MH_BACKEND_VENDOR, 23, "vendor", "cuBLAS",
      "cublasDgemm: a float64 product in FP64"},
     cublas_dgemm_supports, cublas_dgemm_run, NULL, 0, MH_LIB_CUBLAS, NULL, MH_ROW_FLOAT64},
    {{"matmul/cublas-f16", MH_OP_MATMUL, MH_BACKEND_VENDOR, 24, "vendor", "cuBLAS",
      "cublasGemmEx: float16 a, b and c, FP32 accumulation"},
     cublas_f16_supports, cublas_f16_run, NULL, 0, MH_LIB_CUBLAS, NULL, MH_ROW_FLOAT16},
    {{"matmul/cublas-bf16", MH_OP_MATMUL, MH_BACKEND_VENDOR, 25, "vendor", "cuBLAS",
      "cublasGemmEx: bfloat16 a, b and c, FP32 accumulation"},
     cublas_bf16_supports, cublas_bf16_run, NULL, 0, MH_LIB_CUBLAS, NULL, MH_ROW_BFLOAT16},
};

MH_ROW_GROUP(mh_matmul_cublas_rows, rows)

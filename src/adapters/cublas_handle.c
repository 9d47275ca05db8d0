/* The context's cuBLAS handle, shared by the transpose and matmul vendor rows: created on
 * first use, destroyed with the context, set to the context's stream and to FP32 math on
 * every call (the default mode, stated so that no TF32 creeps in). */
#define MH_VENDOR_CUBLAS_API
#include "vendor_lib.h"

#include <cuda_runtime_api.h>

static void destroy_handle(void *h) { mh_cublas.cublasDestroy_v2((cublasHandle_t)h); }

static mh_status blas_fail(mh_context *ctx, cublasStatus_t st, const char *what)
{
    return mh_fail(ctx, st == CUBLAS_STATUS_ALLOC_FAILED ? MH_ERR_OUT_OF_MEMORY : MH_ERR_VENDOR, "cuBLAS %s: %s", what,
                   mh_cublas.cublasGetStatusString(st));
}

mh_status mh_cublas_handle(mh_context *ctx, void **handle)
{
    mh_slot *slot = mh_context_slot(ctx, MH_SLOT_CUBLAS);
    if (!slot) return MH_ERR_CUDA;
    if (!slot->data) {
        cublasHandle_t created;
        cublasStatus_t st = mh_cublas.cublasCreate_v2(&created);
        if (st != CUBLAS_STATUS_SUCCESS) return blas_fail(ctx, st, "cublasCreate");
        slot->data = created;
        slot->destroy = destroy_handle;
    }
    cublasHandle_t h = slot->data;
    cublasStatus_t st = mh_cublas.cublasSetStream_v2(h, (cudaStream_t)ctx->stream);
    if (st != CUBLAS_STATUS_SUCCESS) return blas_fail(ctx, st, "cublasSetStream");
    st = mh_cublas.cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) return blas_fail(ctx, st, "cublasSetMathMode");
    *handle = h;
    return MH_OK;
}

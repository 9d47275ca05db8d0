/* The vendor libraries, opened on first use. memhier links none of them: a program that never
 * runs a vendor row never maps cuBLAS, cuFFT, cuDNN or NPP (hundreds of MB between them), and
 * a machine without one still runs every other row. A row that calls one names it in its
 * `needs` field; the dispatcher opens it before the row's supports() and refuses the row, with
 * the loader's reason, where it cannot be opened.
 *
 * Each library's functions are reached through a table filled from dlsym: mh_cublas.fn(...)
 * calls cuBLAS's fn. The tables are filled once, before any row that needs them runs. */
#ifndef MH_VENDOR_LIB_H
#define MH_VENDOR_LIB_H

#include "../core/internal.h"

#ifdef __cplusplus
#define MH_VENDOR_FN(f) decltype(&f) f;
#else
#define MH_VENDOR_FN(f) __typeof__(&f) f;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Opens lib if no earlier call did: 1 when it is ready, else 0 and the reason in why. */
int mh_vendor_open(mh_vendor_lib lib, char *why, size_t len);
/* The same, the reason recorded on ctx: MH_OK or MH_ERR_UNSUPPORTED. */
mh_status mh_vendor_need(mh_context *ctx, mh_vendor_lib lib);
/* "cuBLAS", "cuFFT", ... */
const char *mh_vendor_name(mh_vendor_lib lib);

#ifdef MH_VENDOR_CUBLAS_API
#include <cublas_v2.h>
#define MH_CUBLAS_FUNCTIONS(X)                                                                  \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetMathMode)           \
    X(cublasGetStatusString) X(cublasSgemm_v2) X(cublasGemmEx) X(cublasSetEmulationStrategy)    \
    X(cublasSgeam) X(cublasDgemm_v2)
typedef struct mh_cublas_api { MH_CUBLAS_FUNCTIONS(MH_VENDOR_FN) } mh_cublas_api;
extern mh_cublas_api mh_cublas;
#endif

#ifdef MH_VENDOR_CUFFT_API
#include <cufft.h>
#define MH_CUFFT_FUNCTIONS(X)                                                                   \
    X(cufftCreate) X(cufftDestroy) X(cufftSetStream) X(cufftMakePlanMany64) X(cufftExecR2C)     \
    X(cufftExecC2R) X(cufftExecC2C) X(cufftSetWorkArea) X(cufftSetAutoAllocation)
typedef struct mh_cufft_api { MH_CUFFT_FUNCTIONS(MH_VENDOR_FN) } mh_cufft_api;
extern mh_cufft_api mh_cufft;
#endif

#ifdef MH_VENDOR_CUDNN_API
#include <cudnn.h>
#define MH_CUDNN_FUNCTIONS(X)                                                                   \
    X(cudnnCreate) X(cudnnDestroy) X(cudnnSetStream) X(cudnnGetErrorString)                     \
    X(cudnnCreateTensorDescriptor) X(cudnnDestroyTensorDescriptor) X(cudnnSetTensor4dDescriptor) \
    X(cudnnCreateFilterDescriptor) X(cudnnDestroyFilterDescriptor) X(cudnnSetFilter4dDescriptor) \
    X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyConvolutionDescriptor)                    \
    X(cudnnSetConvolution2dDescriptor) X(cudnnSetConvolutionMathType)                           \
    X(cudnnGetConvolution2dForwardOutputDim) X(cudnnGetConvolutionForwardAlgorithm_v7)         \
    X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward)
typedef struct mh_cudnn_api { MH_CUDNN_FUNCTIONS(MH_VENDOR_FN) } mh_cudnn_api;
extern mh_cudnn_api mh_cudnn;
#endif

#ifdef MH_VENDOR_NPP_API
#include <nppi_filtering_functions.h>
#define MH_NPP_FUNCTIONS(X) X(nppiFilter_32f_C1R_Ctx)
typedef struct mh_npp_api { MH_NPP_FUNCTIONS(MH_VENDOR_FN) } mh_npp_api;
extern mh_npp_api mh_npp;
#endif

#ifdef __cplusplus
}
#endif

#endif

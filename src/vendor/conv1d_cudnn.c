/* conv1d/cudnn: the vendor baseline a deep-learning user reaches for, cuDNN's convolution
 * on a 1 x 1 x 1 x n tensor with a 1 x 1 x 1 x k filter, FP32 with TF32 off
 * (CUDNN_FMA_MATH). The algorithm is cuDNN's fastest for the shape as cudnnFind measures it
 * (what torch.backends.cudnn.benchmark=True does), found once per shape and kept in the
 * context: the heuristics' first pick ran 7x slower than PyTorch's anchor at n = 16M.
 *
 * cuDNN pads symmetrically; `same` with an even k needs one more zero on the right than on
 * the left, so that case runs with the larger pad into the workspace and copies the n
 * outputs that `same` keeps. */
#include "../core/internal.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* The context's cuDNN handle and the algorithm found for the last shape. */
typedef struct cudnn_state {
    cudnnHandle_t handle;
    size_t n, k;
    int pad, have_algo;
    cudnnConvolutionFwdAlgo_t algo;
    size_t workspace;
} cudnn_state;

static void destroy_state(void *p)
{
    cudnn_state *st = p;
    cudnnDestroy(st->handle);
    free(st);
}

static mh_status vendor_fail(mh_context *ctx, cudnnStatus_t st, const char *what)
{
    mh_status s = st == CUDNN_STATUS_NOT_SUPPORTED ? MH_ERR_UNSUPPORTED
                  : st == CUDNN_STATUS_ALLOC_FAILED ? MH_ERR_OUT_OF_MEMORY
                                                     : MH_ERR_VENDOR;
    return mh_fail(ctx, s, "cuDNN %s: %s", what, cudnnGetErrorString(st));
}

#define CUDNN_TRY(ctx, call, what)                                                              \
    do {                                                                                        \
        cudnnStatus_t st_ = (call);                                                             \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                      \
            s = vendor_fail((ctx), st_, (what));                                                \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

static mh_status get_state(mh_context *ctx, cudnn_state **out)
{
    mh_slot *slot = &ctx->slots[MH_SLOT_CUDNN];
    if (!slot->data) {
        cudnn_state *st = calloc(1, sizeof *st);
        if (!st) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "cuDNN state");
        cudnnStatus_t r = cudnnCreate(&st->handle);
        if (r != CUDNN_STATUS_SUCCESS) {
            free(st);
            return vendor_fail(ctx, r, "cudnnCreate");
        }
        slot->data = st;
        slot->destroy = destroy_state;
    }
    *out = slot->data;
    cudnnStatus_t r = cudnnSetStream((*out)->handle, (cudaStream_t)ctx->stream);
    return r == CUDNN_STATUS_SUCCESS ? MH_OK : vendor_fail(ctx, r, "cudnnSetStream");
}

/* cuDNN's fastest FP32 (non tensor-core) algorithm for this shape, measured once. */
static mh_status find_algo(mh_context *ctx, cudnn_state *st, const mh_conv1d_args *a, cudnnTensorDescriptor_t x,
                           cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y)
{
    if (st->have_algo && st->n == a->n && st->k == a->k && st->pad == (int)a->pad) return MH_OK;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    cudnnStatus_t r = cudnnFindConvolutionForwardAlgorithm(st->handle, x, w, conv, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                           &found, perf);
    if (r != CUDNN_STATUS_SUCCESS) return vendor_fail(ctx, r, "cudnnFindConvolutionForwardAlgorithm");
    for (int i = 0; i < found; ++i) /* sorted fastest first */
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType != CUDNN_TENSOR_OP_MATH) {
            st->algo = perf[i].algo;
            st->workspace = perf[i].memory;
            st->n = a->n, st->k = a->k, st->pad = (int)a->pad, st->have_algo = 1;
            return MH_OK;
        }
    return mh_fail(ctx, MH_ERR_UNSUPPORTED, "cuDNN offers no FP32 FMA algorithm for n = %zu, k = %zu", a->n, a->k);
}

static int cudnn_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    (void)ctx;
    const mh_conv1d_args *a = &args->conv1d;
    if (a->n + a->k <= INT_MAX) return 1;
    snprintf(why, len, "n + k = %zu exceeds cuDNN's int tensor dimensions", a->n + a->k);
    return 0;
}

static size_t align256(size_t b) { return (b + 255) / 256 * 256; }

static mh_status cudnn_run(mh_context *ctx, const mh_args *args)
{
    const mh_conv1d_args *a = &args->conv1d;
    const int rpad = (int)(a->k - 1 - a->lpad);
    const int pad = rpad > (int)a->lpad ? rpad : (int)a->lpad; /* symmetric, the larger side */
    const int shift = pad - (int)a->lpad;                     /* outputs to skip: 0 or 1 */
    cudnn_state *st = NULL;
    cudnnTensorDescriptor_t x = NULL, y = NULL;
    cudnnFilterDescriptor_t w = NULL;
    cudnnConvolutionDescriptor_t conv = NULL;
    mh_status s = get_state(ctx, &st);
    if (s != MH_OK) return s;
    CUDNN_TRY(ctx, cudnnCreateTensorDescriptor(&x), "create tensor");
    CUDNN_TRY(ctx, cudnnCreateTensorDescriptor(&y), "create tensor");
    CUDNN_TRY(ctx, cudnnCreateFilterDescriptor(&w), "create filter");
    CUDNN_TRY(ctx, cudnnCreateConvolutionDescriptor(&conv), "create convolution");
    CUDNN_TRY(ctx, cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, (int)a->n),
              "input descriptor");
    CUDNN_TRY(ctx, cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 1, (int)a->k),
              "filter descriptor");
    CUDNN_TRY(ctx, cudnnSetConvolution2dDescriptor(conv, 0, pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                   CUDNN_DATA_FLOAT),
              "convolution descriptor");
    CUDNN_TRY(ctx, cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH), "math type");
    int on, oc, oh, ow;
    CUDNN_TRY(ctx, cudnnGetConvolution2dForwardOutputDim(conv, x, w, &on, &oc, &oh, &ow), "output size");
    CUDNN_TRY(ctx, cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, ow),
              "output descriptor");

    if ((s = find_algo(ctx, st, a, x, w, conv, y)) != MH_OK) goto done;
    size_t y_bytes = shift ? align256((size_t)ow * sizeof(float)) : 0;
    void *ws = NULL;
    if ((s = mh_workspace(ctx, y_bytes + st->workspace + 256, &ws)) != MH_OK) goto done;
    float *yp = shift ? (float *)ws : a->out;
    const float one = 1.0f, zero = 0.0f;
    CUDNN_TRY(ctx, cudnnConvolutionForward(st->handle, &one, x, a->in, w, a->mask, conv, st->algo,
                                           (char *)ws + y_bytes, st->workspace, &zero, y, yp),
              "cudnnConvolutionForward");
    if (shift) {
        cudaError_t e = cudaMemcpyAsync(a->out, yp + shift, a->out_n * sizeof(float),
                                        cudaMemcpyDeviceToDevice, (cudaStream_t)ctx->stream);
        if (e != cudaSuccess) s = mh_fail(ctx, MH_ERR_CUDA, "copying cuDNN's output: %s", cudaGetErrorString(e));
    }
done:
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
    return s;
}

static const mh_row rows[] = {
    {{"conv1d/cudnn", MH_OP_CONV1D, MH_BACKEND_VENDOR, 10, "vendor", "cuDNN",
      "cudnnConvolutionForward, 1-row 2-D convolution, FP32 (TF32 off), fastest algorithm by cudnnFind"},
     cudnn_supports, cudnn_run, NULL},
};

const mh_row *mh_conv1d_cudnn_rows(size_t *count)
{
    *count = sizeof rows / sizeof rows[0];
    return rows;
}

/* cuDNN's convolution as the vendor baseline: FP32 with TF32 off (CUDNN_FMA_MATH), and the
 * algorithm that runs fastest for the shape, the Winograd ones aside (fp32_accurate below), as
 * PyTorch picks with torch.backends.cudnn.benchmark=True: the heuristics' first pick ran 7x
 * slower than PyTorch's anchor for a 1 x 16M image. Found once per shape, kept in the context.
 *
 * The search is memhier's, not cudnnFind's: cudnnFind times every algorithm at the full shape,
 * and one can take minutes there (FFT_TILING, 32 x 32 tiles, ran past 60 s on an 8192^2 image
 * with a 31 x 31 filter where GEMM takes 29 ms; cuDNN 9.14 on an H100, measured with
 * lab/tools/cudnn_algo_times.c). memhier times each candidate first on a proxy of at most
 * 2^19 pixels with the same filter and pads, then at the full shape only those within 4x of
 * the proxy's fastest.
 *
 * cuDNN pads symmetrically; where memhier's padding is lopsided ('same' with an even filter
 * side) it runs with the larger pad into the workspace and copies out the part kept. */
#define MH_VENDOR_CUDNN_API
#include "cudnn_conv.h"
#include "vendor_lib.h"

#include <cuda_runtime_api.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* The context's cuDNN handle, and the descriptors and algorithm of the last shape: set up
 * once per shape, so that a timed call is the convolution alone. */
typedef struct cudnn_state {
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    size_t rows, cols;
    int krows, kcols, pad_h, pad_w, oh, ow, have_algo;
    cudnnConvolutionFwdAlgo_t algo;
    size_t workspace;
} cudnn_state;

static void destroy_state(void *p)
{
    cudnn_state *st = p; /* also a partly created one */
    if (st->conv) mh_cudnn.cudnnDestroyConvolutionDescriptor(st->conv);
    if (st->w) mh_cudnn.cudnnDestroyFilterDescriptor(st->w);
    if (st->y) mh_cudnn.cudnnDestroyTensorDescriptor(st->y);
    if (st->x) mh_cudnn.cudnnDestroyTensorDescriptor(st->x);
    if (st->handle) mh_cudnn.cudnnDestroy(st->handle);
    free(st);
}

static mh_status vendor_fail(mh_context *ctx, cudnnStatus_t st, const char *what)
{
    mh_status s = st == CUDNN_STATUS_NOT_SUPPORTED ? MH_ERR_UNSUPPORTED
                  : st == CUDNN_STATUS_ALLOC_FAILED ? MH_ERR_OUT_OF_MEMORY
                                                     : MH_ERR_VENDOR;
    return mh_fail(ctx, s, "cuDNN %s: %s", what, mh_cudnn.cudnnGetErrorString(st));
}

#define CUDNN_TRY(call, what)                                                                   \
    do {                                                                                        \
        cudnnStatus_t st_ = (call);                                                             \
        if (st_ != CUDNN_STATUS_SUCCESS) return vendor_fail(ctx, st_, (what));                  \
    } while (0)

static mh_status create_state(mh_context *ctx, cudnn_state *st)
{
    CUDNN_TRY(mh_cudnn.cudnnCreate(&st->handle), "cudnnCreate");
    CUDNN_TRY(mh_cudnn.cudnnCreateTensorDescriptor(&st->x), "create tensor");
    CUDNN_TRY(mh_cudnn.cudnnCreateTensorDescriptor(&st->y), "create tensor");
    CUDNN_TRY(mh_cudnn.cudnnCreateFilterDescriptor(&st->w), "create filter");
    CUDNN_TRY(mh_cudnn.cudnnCreateConvolutionDescriptor(&st->conv), "create convolution");
    return MH_OK;
}

static mh_status get_state(mh_context *ctx, cudnn_state **out)
{
    mh_slot *slot = mh_context_slot(ctx, MH_SLOT_CUDNN);
    if (!slot) return MH_ERR_CUDA;
    if (!slot->data) {
        cudnn_state *st = calloc(1, sizeof *st);
        if (!st) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "cuDNN state");
        mh_status s = create_state(ctx, st);
        if (s != MH_OK) {
            destroy_state(st);
            return s;
        }
        slot->data = st;
        slot->destroy = destroy_state;
    }
    *out = slot->data;
    CUDNN_TRY(mh_cudnn.cudnnSetStream((*out)->handle, (cudaStream_t)ctx->stream), "cudnnSetStream");
    return MH_OK;
}

static int same_shape(const cudnn_state *st, size_t rows, size_t cols, int kr, int kc, int ph, int pw)
{
    return st->have_algo && st->rows == rows && st->cols == cols && st->krows == kr && st->kcols == kc &&
           st->pad_h == ph && st->pad_w == pw;
}

/* The Winograd algorithms run FMA math in FP32 but lose about three decimal digits: on a 5 x 5
 * filter WINOGRAD_NONFUSED's rel_l2 against a double reference is 3.9e-4 where the GEMM and FFT
 * algorithms give 1e-7 (cuDNN 9.14, lab/tools/cudnn_alignment.c), and a timed search ranks it
 * first when it happens to run fastest. The vendor row is the FP32 baseline, so it never takes them. */
static int fp32_accurate(cudnnConvolutionFwdAlgo_t a)
{
    return a != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD && a != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}

enum { PROXY_PIXELS = 1 << 19, PROXY_ROWS = 512, MAX_CANDIDATES = CUDNN_CONVOLUTION_FWD_ALGO_COUNT };
static const size_t max_algo_workspace = (size_t)2 << 30; /* cudnnFind allocates what each asks */
static const float proxy_margin = 4.0f;

typedef struct candidate {
    cudnnConvolutionFwdAlgo_t algo;
    size_t workspace; /* at the full shape */
    float ms;         /* the proxy's time, then the full shape's; < 0 where it failed */
} candidate;

/* The timing's setting: the call's stream, data and scratch, two events. */
typedef struct search {
    cudnn_state *st;
    cudaStream_t stream;
    const float *in, *filter;
    float *y;   /* scratch as large as the full output */
    void *ws;   /* scratch for the largest candidate's workspace */
    size_t ws_bytes;
    cudaEvent_t ev[2];
} search;

/* The FP32-accurate FMA algorithms cuDNN offers for the state's shape, with workspaces under
 * the cap; their count. */
static int list_candidates(const cudnn_state *st, candidate *c)
{
    cudnnConvolutionFwdAlgoPerf_t perf[MAX_CANDIDATES];
    int found = 0, n = 0;
    if (mh_cudnn.cudnnGetConvolutionForwardAlgorithm_v7(st->handle, st->x, st->w, st->conv, st->y, MAX_CANDIDATES,
                                                        &found, perf) != CUDNN_STATUS_SUCCESS)
        return 0;
    for (int i = 0; i < found; ++i) {
        size_t need = 0;
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
            !fp32_accurate(perf[i].algo) ||
            mh_cudnn.cudnnGetConvolutionForwardWorkspaceSize(st->handle, st->x, st->w, st->conv, st->y, perf[i].algo,
                                                             &need) != CUDNN_STATUS_SUCCESS ||
            need > max_algo_workspace)
            continue;
        c[n++] = (candidate){perf[i].algo, need, -1.0f};
    }
    return n;
}

/* One algorithm's time on x -> y: a warm-up run, then the faster of two; -1 where it fails. */
static float time_algo(search *se, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo)
{
    cudnn_state *st = se->st;
    size_t need = 0;
    if (mh_cudnn.cudnnGetConvolutionForwardWorkspaceSize(st->handle, x, st->w, st->conv, y, algo, &need) !=
            CUDNN_STATUS_SUCCESS ||
        need > se->ws_bytes)
        return -1.0f;
    const float one = 1.0f, zero = 0.0f;
    float best = -1.0f;
    for (int rep = 0; rep < 3; ++rep) {
        float ms = 0.0f;
        cudaEventRecord(se->ev[0], se->stream);
        cudnnStatus_t s = mh_cudnn.cudnnConvolutionForward(st->handle, &one, x, se->in, st->w, se->filter, st->conv,
                                                           algo, se->ws, need, &zero, y, se->y);
        cudaEventRecord(se->ev[1], se->stream);
        if (s != CUDNN_STATUS_SUCCESS || cudaEventSynchronize(se->ev[1]) != cudaSuccess ||
            cudaEventElapsedTime(&ms, se->ev[0], se->ev[1]) != cudaSuccess) {
            cudaGetLastError();
            return -1.0f;
        }
        if (rep > 0 && (best < 0 || ms < best)) best = ms;
    }
    return best;
}

/* The proxy round: each candidate on a leading block of the image of at most PROXY_PIXELS
 * (the same filter and pads); the candidates more than proxy_margin slower than the fastest
 * drop out (their ms stays < 0). Returns 0 where the image is no larger than the proxy. */
static int proxy_round(search *se, candidate *c, int n)
{
    const cudnn_state *st = se->st;
    const int prows = st->rows < PROXY_ROWS ? (int)st->rows : PROXY_ROWS;
    const size_t wide = PROXY_PIXELS / (size_t)prows;
    const int pcols = st->cols < wide ? (int)st->cols : (int)wide;
    if ((size_t)prows * pcols >= st->rows * st->cols) return 0;
    cudnnTensorDescriptor_t x = NULL, y = NULL;
    int on, oc, oh, ow, ok = mh_cudnn.cudnnCreateTensorDescriptor(&x) == CUDNN_STATUS_SUCCESS &&
                             mh_cudnn.cudnnCreateTensorDescriptor(&y) == CUDNN_STATUS_SUCCESS;
    ok = ok && mh_cudnn.cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, prows, pcols) ==
                   CUDNN_STATUS_SUCCESS;
    ok = ok && mh_cudnn.cudnnGetConvolution2dForwardOutputDim(st->conv, x, st->w, &on, &oc, &oh, &ow) ==
                   CUDNN_STATUS_SUCCESS;
    ok = ok && mh_cudnn.cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, oh, ow) ==
                   CUDNN_STATUS_SUCCESS;
    float best = -1.0f;
    for (int i = 0; ok && i < n; ++i) {
        c[i].ms = time_algo(se, x, y, c[i].algo);
        if (c[i].ms >= 0 && (best < 0 || c[i].ms < best)) best = c[i].ms;
    }
    if (x) mh_cudnn.cudnnDestroyTensorDescriptor(x);
    if (y) mh_cudnn.cudnnDestroyTensorDescriptor(y);
    if (best < 0) return 0; /* no candidate ran on the proxy: all go to the full round */
    for (int i = 0; i < n; ++i)
        if (c[i].ms > proxy_margin * best) c[i].ms = -1.0f;
    return 1;
}

/* The fastest candidate at the full shape, among those the proxy round kept. */
static mh_status find_algo(mh_context *ctx, cudnn_state *st, const float *in, const float *filter)
{
    candidate c[MAX_CANDIDATES];
    const int n = list_candidates(st, c);
    size_t ws_bytes = 0;
    for (int i = 0; i < n; ++i) ws_bytes = c[i].workspace > ws_bytes ? c[i].workspace : ws_bytes;
    const size_t y_bytes = mh_align_up((size_t)st->oh * st->ow * sizeof(float), 256);
    void *scratch = NULL;
    mh_status s = n ? mh_workspace(ctx, y_bytes + ws_bytes + 256, &scratch) : MH_OK;
    if (s != MH_OK) return s;
    search se = {st, (cudaStream_t)ctx->stream, in, filter, scratch, (char *)scratch + y_bytes, ws_bytes, {NULL, NULL}};
    if (n && (cudaEventCreate(&se.ev[0]) != cudaSuccess || cudaEventCreate(&se.ev[1]) != cudaSuccess)) {
        if (se.ev[0]) cudaEventDestroy(se.ev[0]);
        cudaGetLastError();
        return mh_fail(ctx, MH_ERR_CUDA, "cuDNN's algorithm search: cudaEventCreate failed");
    }
    const int proxied = n && proxy_round(&se, c, n);
    int pick = -1;
    for (int i = 0; i < n; ++i) {
        if (proxied && c[i].ms < 0) continue;
        c[i].ms = time_algo(&se, st->x, st->y, c[i].algo);
        if (c[i].ms >= 0 && (pick < 0 || c[i].ms < c[pick].ms)) pick = i;
    }
    if (n) cudaEventDestroy(se.ev[0]), cudaEventDestroy(se.ev[1]);
    if (pick < 0) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "cuDNN offers no FP32-accurate algorithm for this shape");
    st->algo = c[pick].algo;
    st->workspace = c[pick].workspace;
    st->have_algo = 1;
    return MH_OK;
}

/* Describes a 1-channel rows x cols image, a krows x kcols filter and symmetric pads to
 * cuDNN, and finds the algorithm on the call's data; the state keeps them until the shape
 * changes. */
static mh_status set_shape(mh_context *ctx, cudnn_state *st, size_t rows, size_t cols, int krows, int kcols, int pad_h,
                           int pad_w, const float *in, const float *filter)
{
    st->have_algo = 0;
    CUDNN_TRY(mh_cudnn.cudnnSetTensor4dDescriptor(st->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, (int)rows, (int)cols),
              "input descriptor");
    CUDNN_TRY(mh_cudnn.cudnnSetFilter4dDescriptor(st->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, krows, kcols),
              "filter descriptor");
    CUDNN_TRY(mh_cudnn.cudnnSetConvolution2dDescriptor(st->conv, pad_h, pad_w, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT),
              "convolution descriptor");
    CUDNN_TRY(mh_cudnn.cudnnSetConvolutionMathType(st->conv, CUDNN_FMA_MATH), "math type");
    int on, oc;
    CUDNN_TRY(mh_cudnn.cudnnGetConvolution2dForwardOutputDim(st->conv, st->x, st->w, &on, &oc, &st->oh, &st->ow), "output size");
    CUDNN_TRY(mh_cudnn.cudnnSetTensor4dDescriptor(st->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, st->oh, st->ow),
              "output descriptor");
    st->rows = rows, st->cols = cols;
    mh_status s = find_algo(ctx, st, in, filter);
    if (s != MH_OK) return s;
    st->krows = krows, st->kcols = kcols, st->pad_h = pad_h, st->pad_w = pad_w;
    return MH_OK;
}

int mh_cudnn_fits(size_t rows, size_t cols, size_t krows, size_t kcols, char *why, size_t len)
{
    if (rows + krows <= INT_MAX && cols + kcols <= INT_MAX && (rows + krows) * (cols + kcols) <= INT_MAX)
        return 1;
    snprintf(why, len, "%zu x %zu elements exceed cuDNN's int tensor sizes", rows, cols);
    return 0;
}

mh_status mh_cudnn_correlate(mh_context *ctx, const float *in, size_t rows, size_t cols, const float *filter,
                             int krows, int kcols, int lpr, int lpc, float *out, size_t out_rows, size_t out_cols)
{
    /* symmetric pads, the larger side; the lopsided case skips the first row/column */
    const int pad_h = krows - 1 - lpr > lpr ? krows - 1 - lpr : lpr, pad_w = kcols - 1 - lpc > lpc ? kcols - 1 - lpc : lpc;
    const int skip_r = pad_h - lpr, skip_c = pad_w - lpc;
    cudnn_state *st = NULL;
    mh_status s = get_state(ctx, &st);
    if (s == MH_OK && !same_shape(st, rows, cols, krows, kcols, pad_h, pad_w))
        s = set_shape(ctx, st, rows, cols, krows, kcols, pad_h, pad_w, in, filter);
    if (s != MH_OK) return s;
    const int lopsided = skip_r || skip_c;
    const size_t y_bytes = lopsided ? mh_align_up((size_t)st->oh * st->ow * sizeof(float), 256) : 0;
    void *ws = NULL;
    if ((s = mh_workspace(ctx, y_bytes + st->workspace + 256, &ws)) != MH_OK) return s;
    float *yp = lopsided ? (float *)ws : out;
    const float one = 1.0f, zero = 0.0f;
    CUDNN_TRY(mh_cudnn.cudnnConvolutionForward(st->handle, &one, st->x, in, st->w, filter, st->conv, st->algo,
                                      (char *)ws + y_bytes, st->workspace, &zero, st->y, yp),
              "cudnnConvolutionForward");
    if (!lopsided) return MH_OK;
    cudaError_t e = cudaMemcpy2DAsync(out, out_cols * sizeof(float), yp + (size_t)skip_r * st->ow + skip_c,
                                      (size_t)st->ow * sizeof(float), out_cols * sizeof(float), out_rows,
                                      cudaMemcpyDeviceToDevice, (cudaStream_t)ctx->stream);
    return e == cudaSuccess ? MH_OK : mh_fail(ctx, MH_ERR_CUDA, "copying cuDNN's output: %s", cudaGetErrorString(e));
}

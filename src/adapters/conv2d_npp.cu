/* conv2d/npp: NPP's general 2-D filter (nppiFilter_32f_C1R), the image-processing library
 * a CUDA user has at hand. Built only where NPP is installed.
 *
 * NPP applies its kernel as a convolution (coefficients "stored in reverse order", the
 * source read backwards from the anchor), so the filter is reversed into the workspace and
 * the source pointer offset so that each output's window starts at its own position. Its bordered variant offers replicate borders
 * only, so zero padding (same, full) is done the plain way: the image is copied into a
 * zeroed, padded workspace image and filtered there, that copy counted in the row's time. */
#include "../cuda/common.cuh"
#define MH_VENDOR_NPP_API
#include "vendor_lib.h"
#include "vendor_rows.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static __global__ void reverse_kernel(float *dst, const float *src, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[n - 1 - i];
}

/* NPP's description of the stream and device. Attributes one by one: cudaGetDeviceProperties
 * fills the whole property struct and is far slower, and this runs inside the timed call. */
static mh_status stream_context(mh_context *ctx, NppStreamContext *sc)
{
    memset(sc, 0, sizeof *sc); /* the workspace handle (or reserved field) must be zero */
    sc->hStream = mh_stream(ctx);
    sc->nCudaDeviceId = ctx->device;
    const struct {
        cudaDeviceAttr attr;
        int *field;
    } attrs[] = {
        {cudaDevAttrMultiProcessorCount, &sc->nMultiProcessorCount},
        {cudaDevAttrMaxThreadsPerMultiProcessor, &sc->nMaxThreadsPerMultiProcessor},
        {cudaDevAttrMaxThreadsPerBlock, &sc->nMaxThreadsPerBlock},
        {cudaDevAttrComputeCapabilityMajor, &sc->nCudaDevAttrComputeCapabilityMajor},
        {cudaDevAttrComputeCapabilityMinor, &sc->nCudaDevAttrComputeCapabilityMinor},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; ++i)
        MH_CUDA_TRY(ctx, cudaDeviceGetAttribute(attrs[i].field, attrs[i].attr, ctx->device));
    int smem = 0;
    MH_CUDA_TRY(ctx, cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlock, ctx->device));
    sc->nSharedMemPerBlock = (size_t)smem;
    MH_CUDA_TRY(ctx, cudaStreamGetFlags(mh_stream(ctx), &sc->nStreamFlags));
    return MH_OK;
}

static int npp_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    if (!mh_conv2d_zero_pad_only(a, why, len)) return 0;
    /* NPP 13.0's own 3x3 and 5x5 kernels gave wrong edge columns in our tests, with the anchor
     * at the centre and at the corner alike (other sizes agree with the reference): refused
     * rather than timed wrong. docs/conv2d.md has the measurements. */
    if (a->krows == a->kcols && (a->krows == 3 || a->krows == 5)) {
        snprintf(why, len, "NPP's special %dx%d filter path gives wrong edge columns (seen with CUDA 13.0's NPP)",
                 a->krows, a->kcols);
        return 0;
    }
    const size_t pw = a->out_cols + a->kcols - 1, ph = a->out_rows + a->krows - 1;
    if (pw * sizeof(float) < (size_t)INT_MAX && ph < (size_t)INT_MAX) return 1;
    snprintf(why, len, "a %zu x %zu image exceeds NPP's int-sized steps and ROIs", a->rows, a->cols);
    return 0;
}

static mh_status npp_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    const int taps = a->krows * a->kcols;
    const int padded = a->pad != MH_PAD_VALID;
    const size_t pw = a->out_cols + a->kcols - 1, ph = a->out_rows + a->krows - 1;
    const size_t fbytes = mh_align_up((size_t)taps * sizeof(float), 256), pbytes = padded ? pw * ph * sizeof(float) : 0;
    NppStreamContext sc;
    void *ws;
    mh_status s = stream_context(ctx, &sc);
    if (s == MH_OK) s = mh_workspace(ctx, fbytes + pbytes, &ws);
    if (s != MH_OK) return s;
    float *rev = (float *)ws, *src = (float *)a->in;
    size_t src_cols = a->cols;
    reverse_kernel<<<(taps + 255) / 256, 256, 0, mh_stream(ctx)>>>(rev, a->filter, taps);
    if ((s = MH_LAUNCH_CHECK(ctx, "reverse_kernel")) != MH_OK) return s;
    if (padded) { /* the image inside a zeroed frame: lpr rows above, lpc columns left */
        src = (float *)((char *)ws + fbytes);
        src_cols = pw;
        MH_CUDA_TRY(ctx, cudaMemsetAsync(src, 0, pbytes, mh_stream(ctx)));
        MH_CUDA_TRY(ctx, cudaMemcpy2DAsync(src + (size_t)a->lpr * pw + a->lpc, pw * sizeof(float), a->in,
                                           a->cols * sizeof(float), a->cols * sizeof(float), a->rows,
                                           cudaMemcpyDeviceToDevice, mh_stream(ctx)));
    }
    const NppiSize roi = {(int)a->out_cols, (int)a->out_rows}, ksize = {a->kcols, a->krows};
    /* NPP convolves: output (x, y) reads source (x + anchor.x - j, y + anchor.y - i) with tap
     * (i, j) of its kernel; with the kernel reversed that is a correlation whose window starts
     * at source (x + anchor.x - kcols + 1, y + anchor.y - krows + 1). The anchor stays at the
     * kernel's centre (NPP's special 3x3 and 5x5 paths got the right-hand columns wrong with a
     * corner anchor) and the source pointer moves instead, so the window starts at (x, y). */
    const NppiPoint anchor = {(a->kcols - 1) / 2, (a->krows - 1) / 2};
    src += (size_t)(a->krows - 1 - anchor.y) * src_cols + (size_t)(a->kcols - 1 - anchor.x);
    NppStatus st = mh_npp.nppiFilter_32f_C1R_Ctx(src, (Npp32s)(src_cols * sizeof(float)), a->out,
                                          (Npp32s)(a->out_cols * sizeof(float)), roi, rev, ksize, anchor, sc);
    if (st != NPP_SUCCESS) return mh_fail(ctx, MH_ERR_VENDOR, "nppiFilter_32f_C1R_Ctx returned NppStatus %d", (int)st);
    return MH_OK;
}

static const mh_row rows[] = {
    {MH_CONV2D_NPP_INFO, npp_supports, npp_run, NULL, 0, MH_LIB_NPP, NULL, MH_CONV2D_NPP_FLAGS},
};

MH_ROW_GROUP(mh_conv2d_npp_rows, rows)

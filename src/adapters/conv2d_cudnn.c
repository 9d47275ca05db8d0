/* conv2d/cudnn: cuDNN's convolution on one 1-channel image (cudnn_conv.c: FP32, TF32 off,
 * the fastest algorithm for the shape by a timed search). */
#include "cudnn_conv.h"
#include "vendor_rows.h"

static int cudnn_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    (void)ctx;
    if (!mh_conv2d_zero_pad_only(&x->conv2d, why, len)) return 0;
    return mh_cudnn_fits(x->conv2d.rows, x->conv2d.cols, x->conv2d.krows, x->conv2d.kcols, why, len);
}

static mh_status cudnn_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    return mh_cudnn_correlate(ctx, a->in, a->rows, a->cols, a->filter, a->krows, a->kcols, a->lpr, a->lpc, a->out,
                              a->out_rows, a->out_cols);
}

static const mh_row rows[] = {
    {MH_CONV2D_CUDNN_INFO, cudnn_supports, cudnn_run, NULL, 0, MH_LIB_CUDNN, NULL, MH_CONV2D_CUDNN_FLAGS},
};

MH_ROW_GROUP(mh_conv2d_cudnn_rows, rows)

/* conv1d/cudnn: the vendor baseline a deep-learning user reaches for, cuDNN's convolution
 * on a 1 x n image with a 1 x k filter (cudnn_conv.c: FP32, TF32 off, the fastest by a timed search). */
#include "cudnn_conv.h"
#include "vendor_rows.h"

static int cudnn_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    (void)ctx;
    return mh_conv1d_zero_pad_only(&x->conv1d, why, len) && mh_cudnn_fits(1, x->conv1d.n, 1, x->conv1d.k, why, len);
}

static mh_status cudnn_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv1d_args *a = &x->conv1d;
    return mh_cudnn_correlate(ctx, a->in, 1, a->n, a->mask, 1, (int)a->k, 0, (int)a->lpad, a->out, 1, a->out_n);
}

static const mh_row rows[] = {
    {MH_CONV1D_CUDNN_INFO, cudnn_supports, cudnn_run, NULL, 0, MH_LIB_CUDNN, NULL, MH_CONV1D_CUDNN_FLAGS},
};

MH_ROW_GROUP(mh_conv1d_cudnn_rows, rows)

/* Cross-correlation through cuDNN, shared by the conv1d and conv2d vendor rows. */
#ifndef MH_CUDNN_CONV_H
#define MH_CUDNN_CONV_H

#include "../core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when cuDNN's int-sized tensors can hold the problem; else 0 and why. */
int mh_cudnn_fits(size_t rows, size_t cols, size_t krows, size_t kcols, char *why, size_t len);

/* out (out_rows x out_cols) = in (rows x cols) correlated with filter (krows x kcols), with
 * lpr rows and lpc columns of zeros before the image, through cuDNN's fastest FP32 FMA
 * algorithm for the shape (timed once per shape, kept in the context; the search waits for
 * the stream). */
mh_status mh_cudnn_correlate(mh_context *ctx, const float *in, size_t rows, size_t cols, const float *filter,
                             int krows, int kcols, int lpr, int lpc, float *out, size_t out_rows, size_t out_cols);

#ifdef __cplusplus
}
#endif

#endif

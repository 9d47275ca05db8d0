/* The outputs whose window meets the border, computed directly: the FFT rows' way of giving a
 * non-finite cval (MH_MODE_CONSTANT) its exact effect. Their tiles take 0 for it (a NaN or Inf
 * in a transform would spread to every output of the tile); this kernel then rewrites the
 * outputs that read the border, every padded value times its tap, summed in float as the direct
 * rows sum (NaN or Inf exactly where they give it). */
#ifndef MH_CONV2D_BORDER_DIRECT_CUH
#define MH_CONV2D_BORDER_DIRECT_CUH

#include "common.cuh"
#include "tile_io.cuh"

#include <math.h>

/* An image's shape and its windows: out (r, c) reads rows r - lpr .. r - lpr + krows - 1. */
struct direct_window {
    long long rows, cols, out_rows, out_cols;
    int lpr, lpc, krows, kcols;
};

/* out[b][r][c] where the window meets the border, for the images from blockIdx.y; rows of
 * outputs stride over blockIdx.x, the edge outputs of a row over threadIdx.x. */
static __global__ void direct_border_kernel(float *out, const float *in, const float *f, direct_window g,
                                            long long batch, float cval)
{
    const long long c_lo = min(g.out_cols, (long long)g.lpc), c_hi = max(c_lo, g.cols - g.kcols + 1 + g.lpc);
    for (long long b = blockIdx.y; b < batch; b += gridDim.y) {
        const float *x = in + (size_t)b * (size_t)(g.rows * g.cols);
        float *o = out + (size_t)b * (size_t)(g.out_rows * g.out_cols);
        for (long long r = blockIdx.x; r < g.out_rows; r += gridDim.x) {
            const bool whole_row = r - g.lpr < 0 || r - g.lpr + g.krows > g.rows;
            const long long edge = whole_row ? g.out_cols : c_lo + (g.out_cols - min(c_hi, g.out_cols));
            for (long long i = threadIdx.x; i < edge; i += blockDim.x) {
                const long long c = whole_row || i < c_lo ? i : min(c_hi, g.out_cols) + (i - c_lo);
                float sum = 0.0f;
                for (int u = 0; u < g.krows; ++u) {
                    const long long y = r - g.lpr + u;
                    for (int v = 0; v < g.kcols; ++v) {
                        const long long xx = c - g.lpc + v;
                        const float p = y >= 0 && y < g.rows && xx >= 0 && xx < g.cols ? __ldg(x + y * g.cols + xx) : cval;
                        sum = fmaf(p, __ldg(f + u * g.kcols + v), sum);
                    }
                }
                o[r * g.out_cols + c] = sum;
            }
        }
    }
}

/* A constant border whose value is NaN or Inf: the FFT rows' tiles take 0 for it, and
 * mh_conv2d_fix_nonfinite_border then rewrites the outputs that read it. */
static inline int mh_conv2d_nonfinite_cval(const mh_conv2d_args *a)
{
    return a->bordered && a->mode == MH_MODE_CONSTANT && !isfinite(a->cval);
}

/* What the FFT rows' tiles read past the image: zeros, or a's boundary mode with its cval (0
 * for a non-finite one). */
static inline tile_border mh_conv2d_fft_border(const mh_conv2d_args *a)
{
    return a->bordered ? tile_border{(int)a->mode, mh_conv2d_nonfinite_cval(a) ? 0.0f : a->cval} : zero_border;
}

/* Launches direct_border_kernel over a's stack when a's cval is not finite; else nothing. */
static inline mh_status mh_conv2d_fix_nonfinite_border(mh_context *ctx, const mh_conv2d_args *a, const char *who)
{
    if (!mh_conv2d_nonfinite_cval(a)) return MH_OK;
    const direct_window g = {(long long)a->rows, (long long)a->cols, (long long)a->out_rows, (long long)a->out_cols,
                             a->lpr, a->lpc, a->krows, a->kcols};
    const unsigned row_blocks = (unsigned)(a->out_rows < 1024 ? a->out_rows : 1024);
    const unsigned images = (unsigned)(a->batch < 65535 ? a->batch : 65535);
    direct_border_kernel<<<dim3(row_blocks, images), 256, 0, mh_stream(ctx)>>>(a->out, a->in, a->filter, g,
                                                                             (long long)a->batch, a->cval);
    return mh_cuda_status(ctx, cudaGetLastError(), who);
}

#endif

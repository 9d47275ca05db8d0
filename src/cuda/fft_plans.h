/* cuFFT plans for the overlap-save rows (conv1d/fft-os, conv2d/fft-os): made once per shape and
 * kept in the context, least recently used evicted past MH_FFT_PLAN_CACHE, all destroyed at
 * mh_context_destroy. Every plan leaves its work area to the caller (auto-allocation off), so a
 * call's device memory is the one workspace it sizes. */
#ifndef MH_FFT_PLANS_H
#define MH_FFT_PLANS_H

#include "common.cuh"
#define MH_VENDOR_CUFFT_API
#include "../adapters/vendor_lib.h"

enum { MH_FFT_PLAN_CACHE = 16 };

/* a conj(w) scale: the overlap-save rows' pointwise product (correlation, not convolution) */
static __device__ __forceinline__ float2 mh_times_conj(float2 a, float2 w, float scale)
{
    return make_float2((a.x * w.x + a.y * w.y) * scale, (a.y * w.x - a.x * w.y) * scale);
}

typedef struct mh_fft_plan {
    int rank;              /* 1 or 2 */
    long long dims[2];     /* the transform's sizes (dims[0] alone for rank 1) */
    long long count;       /* transforms per exec; 0: an empty entry */
    long long idist;       /* rank 1 R2C reading inputs idist apart (overlapping); 0: the default layout */
    cufftType type;
    cufftHandle handle;
    size_t work_bytes;
    unsigned long long used;
} mh_fft_plan;

/* The plan of `count` transforms of rank 1 or 2 (dims) and `type`, in cuFFT's default layout
 * (real rows of n, complex rows of n / 2 + 1 along the last axis), or for rank 1 with idist > 0
 * an R2C whose inputs start idist apart. `who` names the row in errors. */
mh_status mh_fft_plan_get(mh_context *ctx, const char *who, int rank, const long long *dims, long long count,
                          cufftType type, long long idist, mh_fft_plan **out);

/* Runs the plan on the context's stream with `work` (at least p->work_bytes) as its work area;
 * dir (CUFFT_FORWARD or CUFFT_INVERSE) for C2C plans. */
mh_status mh_fft_exec(mh_context *ctx, const char *who, const mh_fft_plan *p, void *work, void *in, void *out,
                      int dir);

#endif

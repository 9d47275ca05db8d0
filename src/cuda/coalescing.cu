/* coalescing: seed 004's two access-pattern kernels, out[i] = in[i] + 100 for one element
 * per thread, to measure what a warp's addresses cost.
 *   offset  i = t + offset: a warp's 128 bytes straddle two 128-byte lines unless the
 *           offset is a multiple of 32 floats
 *   stride  i = t * stride: from stride 2 on, a warp's 32 floats spread over more lines and
 *           sectors, up to one sector (32 bytes) per float from stride 8 and one line per
 *           float from stride 32
 * Bounds are checked (the seed assumed exact sizes); the bench reports bandwidth as the
 * useful bytes (4 read + 4 written per thread) over time. */
#include "common.cuh"

#include <stdio.h>

enum { THREADS = 256 };

static __global__ void offset_add_kernel(const float *in, float *out, size_t n, int offset)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    i += (size_t)offset;
    out[i] = in[i] + 100.0f;
}

static __global__ void strided_add_kernel(const float *in, float *out, size_t n, int stride)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    i *= (size_t)stride;
    out[i] = in[i] + 100.0f;
}

/* Each row takes its own pattern; asked about the other one it declines without a reason,
 * which the bench takes as "not this row's workload". */
static int pattern_supports(const mh_args *x, mh_access_pattern mine, char *why, size_t len)
{
    const mh_coalescing_args *a = &x->coalescing;
    if (a->pattern != mine) return (why[0] = '\0', 0);
    if (a->param < (mine == MH_PATTERN_OFFSET ? 0 : 1) || mh_ceil_div(a->n, THREADS) > MH_MAX_GRID_X) {
        snprintf(why, len, "%s %d with %zu threads is out of range", mine == MH_PATTERN_OFFSET ? "offset" : "stride",
                 a->param, a->n);
        return 0;
    }
    return 1;
}

static int offset_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return pattern_supports(x, MH_PATTERN_OFFSET, why, len);
}

static int stride_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return pattern_supports(x, MH_PATTERN_STRIDE, why, len);
}

static mh_status offset_run(mh_context *ctx, const mh_args *x)
{
    const mh_coalescing_args *a = &x->coalescing;
    offset_add_kernel<<<(unsigned)mh_ceil_div(a->n, THREADS), THREADS, 0, mh_stream(ctx)>>>(a->in, a->out, a->n, a->param);
    return MH_LAUNCH_CHECK(ctx, "offset_add_kernel");
}

static mh_status stride_run(mh_context *ctx, const mh_args *x)
{
    const mh_coalescing_args *a = &x->coalescing;
    strided_add_kernel<<<(unsigned)mh_ceil_div(a->n, THREADS), THREADS, 0, mh_stream(ctx)>>>(a->in, a->out, a->n, a->param);
    return MH_LAUNCH_CHECK(ctx, "strided_add_kernel");
}

static const mh_row rows[] = {
    {{"coalescing/offset", MH_OP_COALESCING, MH_BACKEND_CUDA, 1, "global", "seed 004",
      "offset_add: each warp's addresses shifted by an offset"},
     offset_supports, offset_run, NULL},
    {{"coalescing/stride", MH_OP_COALESCING, MH_BACKEND_CUDA, 2, "global", "seed 004",
      "strided_add: each thread's address a stride apart"},
     stride_supports, stride_run, NULL},
};

MH_ROW_GROUP(mh_coalescing_cuda_rows, rows)

/* mh_sepfilter_sum on a GPU: the kernel that adds a term (in the context's buffer) to the
 * output, in the output's type as scipy's `output += term` adds (src/api/sepfilter.c runs the
 * terms). */
#include "common.cuh"
#include "../core/dtype.h"

static __global__ void add_kernel(void *out, const void *term, size_t values, mh_dtype t)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < values; i += stride) {
        if (mh_dtype_is_wide(t)) mh_add_wide(out, term, i, t); /* float64, or integers wrapping in their width */
        else mh_store_value(out, i, t, mh_cast_value(mh_load_value(out, i, t) + mh_load_value(term, i, t), t));
    }
}

mh_status mh_sepfilter_add_cuda(mh_context *ctx, void *out, const void *term, size_t values, mh_dtype t)
{
    const unsigned threads = 256;
    add_kernel<<<(unsigned)mh_resident_blocks(ctx, values, threads), threads, 0, mh_stream(ctx)>>>(out, term, values, t);
    return MH_LAUNCH_CHECK(ctx, "sepfilter's term sum");
}

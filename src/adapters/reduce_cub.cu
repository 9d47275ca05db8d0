/* reduce/cub: the vendor baseline, cub::DeviceReduce::Sum, its temporary storage in the
 * context's workspace. */
#include "../cuda/common.cuh"

#include <cub/device/device_reduce.cuh>

static int cub_supports(const mh_context *, const mh_args *, char *, size_t) { return 1; }

static mh_status cub_run(mh_context *ctx, const mh_args *x)
{
    const mh_reduce_args *a = &x->reduce;
    if (a->n == 0) return mh_cuda_status(ctx, cudaMemsetAsync(a->sum, 0, sizeof(float), mh_stream(ctx)), "zeroing the sum");
    size_t bytes = 0;
    MH_CUDA_TRY(ctx, cub::DeviceReduce::Sum(nullptr, bytes, a->in, a->sum, a->n, mh_stream(ctx)));
    void *temp = NULL;
    MH_TRY(mh_workspace(ctx, bytes ? bytes : 1, &temp));
    MH_CUDA_TRY(ctx, cub::DeviceReduce::Sum(temp, bytes, a->in, a->sum, a->n, mh_stream(ctx)));
    return MH_OK;
}

static const mh_row rows[] = {
    {{"reduce/cub", MH_OP_REDUCE, MH_BACKEND_VENDOR, 20, "vendor", "CUB", "cub::DeviceReduce::Sum"},
     cub_supports, cub_run, NULL},
};

MH_ROW_GROUP(mh_reduce_cub_rows, rows)

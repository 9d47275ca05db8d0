/* reduce/cub: the vendor baseline. The whole float32 sum is cub::DeviceReduce::Sum; every other
 * reduction is cub::DeviceSegmentedReduce::Reduce, a segment a lane, over an iterator that
 * reads lane (o, i)'s l-th value at in[(o * len + l) * inner + i] and lifts it to the operator's
 * accumulator (reduce_ops.cuh: double sums, NaN-aware extremes, (value, index) pairs), then
 * mh_reduce_finish writes the results in mh_reduce's types. Temporary storage and the lanes'
 * accumulators share the context's workspace. */
#include "../cuda/reduce_ops.cuh"

#include <stdio.h>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

/* The vendor baseline on numpy's most common dtypes; the narrower and unsigned integers run on
 * axis, axis-naive and the CPU rows. */
static int cub_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_dtype t = x->reduce.dtype;
    if (t == MH_F32 || t == MH_F64 || t == MH_I32 || t == MH_I64) return 1;
    snprintf(why, len, "cub reduces float32, float64, int32 and int64 here, not %s", mh_dtype_name(t));
    return 0;
}

static mh_status whole_sum(mh_context *ctx, const mh_reduce_args *a)
{
    if (a->n == 0) return mh_cuda_status(ctx, cudaMemsetAsync(a->sum, 0, sizeof(float), mh_stream(ctx)), "zeroing the sum");
    size_t bytes = 0;
    MH_CUDA_TRY(ctx, cub::DeviceReduce::Sum(nullptr, bytes, a->in, a->sum, a->n, mh_stream(ctx)));
    void *temp = NULL;
    MH_TRY(mh_workspace(ctx, bytes ? bytes : 1, &temp));
    MH_CUDA_TRY(ctx, cub::DeviceReduce::Sum(temp, bytes, a->in, a->sum, a->n, mh_stream(ctx)));
    return MH_OK;
}

/* Position k of the segmented sequence (lane k / len, its value k % len) as an accumulator. */
template <typename Op> struct lane_value {
    const typename Op::value *in;
    long long len, inner;
    __device__ typename Op::acc operator()(long long k) const
    {
        const long long lane = k / len, l = k % len;
        const long long at = inner == 1 ? k : ((lane / inner) * len + l) * inner + lane % inner;
        return Op::lift(in[at], l);
    }
};

struct segment_start {
    long long len;
    __device__ long long operator()(long long s) const { return s * len; }
};

template <typename Op> struct combine_fn {
    __device__ typename Op::acc operator()(const typename Op::acc &a, const typename Op::acc &b) const
    {
        return Op::combine(a, b);
    }
};

template <typename Op> static mh_status segmented(mh_context *ctx, const mh_reduce_args *a)
{
    typedef typename Op::acc A;
    const long long lanes = (long long)(a->outer * a->inner);
    const auto values = thrust::make_transform_iterator(
        thrust::counting_iterator<long long>(0),
        lane_value<Op>{(const typename Op::value *)a->in, (long long)a->len, (long long)a->inner});
    const auto starts = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), segment_start{(long long)a->len});
    size_t bytes = 0;
    MH_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Reduce(nullptr, bytes, values, (A *)nullptr, lanes, starts, starts + 1,
                                                        combine_fn<Op>{}, Op::identity(), mh_stream(ctx)));
    const size_t acc_bytes = (size_t)lanes * sizeof(A), at = mh_ceil_div(acc_bytes, 256) * 256;
    void *ws = NULL;
    MH_TRY(mh_workspace(ctx, at + (bytes ? bytes : 1), &ws));
    A *acc = (A *)ws;
    MH_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Reduce((char *)ws + at, bytes, values, acc, lanes, starts, starts + 1,
                                                        combine_fn<Op>{}, Op::identity(), mh_stream(ctx)));
    return mh_reduce_finish(ctx, a, acc, 1);
}

static mh_status cub_run(mh_context *ctx, const mh_args *x)
{
    const mh_reduce_args *a = &x->reduce;
    if (a->whole_sum && !a->rounded_once) return whole_sum(ctx, a); /* DeviceReduce::Sum adds in float */
    if (a->outer * a->inner == 0) return MH_OK;
    if (a->len == 0) return mh_reduce_finish(ctx, a, NULL, 0);
    return with_reduce_op(a->dtype, a->kind, [&](auto op) { return segmented<decltype(op)>(ctx, a); });
}

static const mh_row rows[] = {
    {{"reduce/cub", MH_OP_REDUCE, MH_BACKEND_VENDOR, 20, "vendor", "CUB",
      "cub::DeviceReduce::Sum; along an axis cub::DeviceSegmentedReduce::Reduce"},
     cub_supports, cub_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_ANY_REDUCTION},
};

MH_ROW_GROUP(mh_reduce_cub_rows, rows)

/* histogram/cub: the vendor baseline, cub::DeviceHistogram::HistogramRange with levels
 * lo, lo + width, ..., and hi + 1 (the last bucket may be narrower, as 'y'..'z' is for width
 * 4). Float32 values: the levels are numpy.histogram's float32 edges (core/histogram_rule.h),
 * the last one moved up to the next float so that CUB's half-open last bin holds e[num_bins]
 * as numpy's closed one does (an infinite last edge stays infinite: a value of +Inf is then
 * left out where numpy counts it). CUB counts in int: those counts go to the workspace and are
 * widened into bins; the values outside are n minus their sum. */
#include "../cuda/common.cuh"

#include <climits>
#include <type_traits>
#include <cub/device/device_histogram.cuh>
#include <stdio.h>

template <typename LevelT>
static __global__ void fill_levels(LevelT *levels, int lo, int hi, int width, int num_bins)
{
    for (int i = threadIdx.x; i <= num_bins; i += blockDim.x) levels[i] = i < num_bins ? lo + i * width : hi + 1;
}

/* The float32 edges as CUB's levels, the last one closed (above). One block. */
static __global__ void float_levels(float *levels, mh_hist_float f, int num_bins)
{
    for (int i = threadIdx.x; i <= num_bins; i += blockDim.x) {
        const float e = mh_hist_edge(&f, num_bins, i);
        levels[i] = i < num_bins ? e : nextafterf(e, INFINITY);
    }
}

/* bins[b] = counts[b]; *outside = n - sum (one block). */
static __global__ void widen_counts(const int *counts, int num_bins, unsigned long long n, unsigned long long *bins,
                                    unsigned long long *outside)
{
    __shared__ unsigned long long part[256];
    unsigned long long s = 0;
    for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
        bins[b] = (unsigned long long)counts[b];
        s += (unsigned long long)counts[b];
    }
    part[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0 && outside) {
        unsigned long long total = 0;
        for (int t = 0; t < 256; ++t) total += part[t];
        *outside = n - total;
    }
}

static int cub_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    if (x->histogram.n <= INT_MAX) return 1;
    snprintf(why, len, "n = %zu: CUB's counters here are int", x->histogram.n);
    return 0;
}

/* Levels: the samples' own type for float32 and int64 (CUB converts a sample to the levels' type
 * before it compares: int levels would wrap an int64 value into a bin), int for the others. */
template <typename SampleT>
using level_t = typename std::conditional<std::is_same<SampleT, float>::value || std::is_same<SampleT, long long>::value,
                                          SampleT, int>::type;

template <typename SampleT>
static mh_status cub_histogram(mh_context *ctx, const mh_histogram_args *a)
{
    using LevelT = level_t<SampleT>;
    const int nb = a->num_bins, n = (int)a->n;
    const size_t levels_bytes = mh_align_up(((size_t)nb + 1) * sizeof(LevelT), 256);
    const size_t head = levels_bytes + mh_align_up((size_t)nb * sizeof(int), 256);
    size_t bytes = 0;
    const SampleT *in = static_cast<const SampleT *>(a->in);
    MH_CUDA_TRY(ctx, cub::DeviceHistogram::HistogramRange(nullptr, bytes, in, (int *)nullptr, nb + 1,
                                                          (const LevelT *)nullptr, n, mh_stream(ctx)));
    void *ws = NULL;
    MH_TRY(mh_workspace(ctx, head + bytes, &ws));
    LevelT *levels = static_cast<LevelT *>(ws);
    int *counts = reinterpret_cast<int *>(static_cast<char *>(ws) + levels_bytes);
    if constexpr (std::is_same<SampleT, float>::value)
        float_levels<<<1, 256, 0, mh_stream(ctx)>>>(levels, a->f, nb);
    else
        fill_levels<<<1, 256, 0, mh_stream(ctx)>>>(levels, a->lo, a->hi, a->width, nb);
    MH_TRY(MH_LAUNCH_CHECK(ctx, "filling CUB's levels"));
    MH_CUDA_TRY(ctx, cub::DeviceHistogram::HistogramRange(static_cast<char *>(ws) + head, bytes, in, counts, nb + 1, levels,
                                                          n, mh_stream(ctx)));
    widen_counts<<<1, 256, 0, mh_stream(ctx)>>>(counts, nb, a->n, a->bins, a->outside);
    return MH_LAUNCH_CHECK(ctx, "widen_counts");
}

static mh_status cub_run(mh_context *ctx, const mh_args *x)
{
    const mh_histogram_args *a = &x->histogram;
    /* no values: the counts zeroed; mh_histogram_range's edges: written by our start kernel too */
    if (a->n == 0 || a->edges_out) MH_TRY(mh_histogram_cuda_start(ctx, a));
    if (a->n == 0) return MH_OK;
    if (a->floats) return cub_histogram<float>(ctx, a);
    if (a->int64) return cub_histogram<long long>(ctx, a);
    return a->bytes ? cub_histogram<unsigned char>(ctx, a) : cub_histogram<int>(ctx, a);
}

static const mh_row rows[] = {
    {{"histogram/cub", MH_OP_HISTOGRAM, MH_BACKEND_VENDOR, 20, "vendor", "CUB", "cub::DeviceHistogram::HistogramRange"},
     cub_supports, cub_run, NULL},
};

MH_ROW_GROUP(mh_histogram_cub_rows, rows)

/* rank/histogram on CUDA: any rank of a full rectangle of an 8-bit image, a thread walking down a
 * column of outputs with its window's 256 counts in shared memory, a row out and a row in a
 * step. */
#include "rank_keys.cuh"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/rank_line.h"

#include <stdio.h>

/* ---- histogram ------------------------------------------------------------------------------
 * Any rank of a full krows x kcols window of an 8-bit image (no structure; cval in constant mode
 * one of its values): a thread walks down a column of outputs (one channel of one pixel) with its
 * window's 256 counts in shared memory. A step down removes the window's top row (kcols keys) and
 * adds the row below it, and the rank's key moves from the last output's, with the count of keys
 * below it kept as keys cross it: 2 kcols counts updated an output, whatever krows. A thread's
 * counts are bin-major ([bin][thread]), so a warp's 32 threads read 32 banks whatever their keys.
 * A walk starts by counting its first window (krows x kcols keys), so walks are long: about four
 * windows, at least 64 rows. */
enum { HISTOGRAM_THREADS = 128, HISTOGRAM_BINS = 256, HISTOGRAM_SEGMENT_MIN = 64, HISTOGRAM_SEGMENT_MAX = 1024 };

struct histogram_params {
    const void *in;
    void *out;
    mh_dtype out_type;
    long long rows, cols, channels;
    int krows, kcols, anchor_row, anchor_col, mode;
    uint32_t rank, cval_key; /* cval's byte key */
    size_t row_values, batch, segment, segments;
};

static size_t histogram_smem() { return (size_t)HISTOGRAM_BINS * HISTOGRAM_THREADS * sizeof(uint16_t); }

/* An 8-bit value's byte key (int8 with its sign bit flipped) and back. */
template <typename T> static __device__ __forceinline__ uint32_t byte_key(T v)
{
    return std::is_signed<T>::value ? (uint32_t)(uint8_t)v ^ 0x80u : (uint32_t)(uint8_t)v;
}
template <typename T> static __device__ __forceinline__ T byte_value(uint32_t key)
{
    return (T)(std::is_signed<T>::value ? key ^ 0x80u : key);
}

/* Adds (step 1) or removes (step -1) input row r's kcols keys at the thread's columns (first:
 * its window's first column; inside: every column inside the image) from its counts, and from
 * below, the count of keys under the current key m. */
template <typename T>
static __device__ __forceinline__ void histogram_row(const histogram_params &p, const T *in, uint16_t *counts, long long r,
                                                     long long first, long long ch, bool inside, int step, uint32_t m,
                                                     int &below)
{
    const long long mr = mh_border_index(r, p.rows, p.mode);
    const T *const row = in + (mr < 0 ? 0 : (size_t)mr * p.row_values);
    for (int e = 0; e < p.kcols; ++e) {
        const long long c = inside ? first + e : mh_border_index(first + e, p.cols, p.mode);
        const uint32_t key = mr >= 0 && c >= 0 ? byte_key(row[c * p.channels + ch]) : p.cval_key;
        counts[key * HISTOGRAM_THREADS] = (uint16_t)(counts[key * HISTOGRAM_THREADS] + step);
        below += key < m ? step : 0;
    }
}

template <typename T, bool Same>
static __global__ void __launch_bounds__(HISTOGRAM_THREADS) rank_histogram_kernel(const histogram_params p)
{
    extern __shared__ uint16_t histogram_counts[];
    const size_t v = blockIdx.x * (size_t)HISTOGRAM_THREADS + threadIdx.x;
    if (v >= p.row_values) return; /* no barrier below: each thread's counts are its own */
    uint16_t *const counts = histogram_counts + threadIdx.x;
    const long long x = (long long)(v / (size_t)p.channels), ch = (long long)(v % (size_t)p.channels);
    const long long first = x - p.anchor_col;
    const bool inside = first >= 0 && first + p.kcols <= p.cols;
    for (size_t tile = blockIdx.y; tile < p.batch * p.segments; tile += gridDim.y) {
        const size_t image = tile / p.segments;
        const long long y0 = (long long)(tile % p.segments * p.segment), top = y0 - p.anchor_row;
        const long long outputs = min((long long)p.segment, p.rows - y0);
        const T *const in = (const T *)p.in + image * (size_t)p.rows * p.row_values;
        size_t out = (image * (size_t)p.rows + (size_t)y0) * p.row_values + v;
        for (int b = 0; b < HISTOGRAM_BINS; ++b) counts[b * HISTOGRAM_THREADS] = 0;
        int below = 0; /* keys under m: none while m is 0 */
        uint32_t m = 0;
        for (int i = 0; i < p.krows; ++i) histogram_row<T>(p, in, counts, top + i, first, ch, inside, 1, m, below);
        for (long long n = 0; n < outputs; ++n, out += p.row_values) {
            if (n > 0) {
                histogram_row<T>(p, in, counts, top + n - 1, first, ch, inside, -1, m, below);
                histogram_row<T>(p, in, counts, top + n - 1 + p.krows, first, ch, inside, 1, m, below);
            }
            while (below > (int)p.rank) below -= counts[--m * HISTOGRAM_THREADS]; /* m too high */
            while (below + counts[m * HISTOGRAM_THREADS] <= (int)p.rank) below += counts[m++ * HISTOGRAM_THREADS];
            const T value = byte_value<T>(m);
            if constexpr (Same) ((T *)p.out)[out] = value;
            else mh_store_double(p.out, out, p.out_type, (double)value);
        }
    }
}

static int histogram_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    const bool bytes = d->in_type == MH_U8 || d->in_type == MH_I8;
    const char *what = !bytes                            ? "an input of more than 8 bits"
                       : d->structure                    ? "a structure"
                       : a->count != d->krows * d->kcols ? "a footprint with holes"
                       : a->count > UINT16_MAX           ? "a window of more than 65535 elements"
                       : d->mode == MH_MODE_CONSTANT && !(mh_cast_double(d->cval, d->in_type) == d->cval)
                           ? "a cval that is not one of the image's values"
                           : NULL;
    if (what) snprintf(why, len, "%s: histogram takes any rank of a full rectangle of an 8-bit image", what);
    return !what;
}

/* Walks of about four windows, at least HISTOGRAM_SEGMENT_MIN rows (a walk counts its first
 * window whole: krows x kcols updates, over the walk's outputs). */
static size_t histogram_segment(const mh_rank_desc *d)
{
    const size_t want = 4 * d->krows;
    return want < HISTOGRAM_SEGMENT_MIN ? HISTOGRAM_SEGMENT_MIN : want > HISTOGRAM_SEGMENT_MAX ? HISTOGRAM_SEGMENT_MAX : want;
}

static mh_status histogram_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    char why[200];
    if (!histogram_supports(ctx, args, why, sizeof why)) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "rank/histogram: %s", why);
    const size_t segment = histogram_segment(d);
    const uint32_t cval = d->mode != MH_MODE_CONSTANT ? 0u
                          : d->in_type == MH_I8 ? (uint32_t)(uint8_t)(int8_t)d->cval ^ 0x80u
                                                : (uint32_t)(uint8_t)d->cval;
    histogram_params p = {a->in, a->out, d->out_type, (long long)d->rows, (long long)d->cols, (long long)d->channels,
                          (int)d->krows, (int)d->kcols, (int)(d->krows / 2 + d->origin_row),
                          (int)(d->kcols / 2 + d->origin_col), (int)d->mode, (uint32_t)d->rank, cval,
                          d->cols * d->channels, d->batch, segment, mh_ceil_div(d->rows, segment)};
    const size_t x_blocks = mh_ceil_div(p.row_values, (size_t)HISTOGRAM_THREADS), tiles = d->batch * p.segments;
    if (x_blocks > INT32_MAX) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "rank/histogram: rows of %zu values", p.row_values);
    const dim3 grid((unsigned)x_blocks, (unsigned)(tiles < 65535 ? tiles : 65535));
    const bool same = d->out_type == d->in_type;
    const void *kernel = d->in_type == MH_U8 ? (same ? (const void *)rank_histogram_kernel<uint8_t, true>
                                                     : (const void *)rank_histogram_kernel<uint8_t, false>)
                                             : (same ? (const void *)rank_histogram_kernel<int8_t, true>
                                                     : (const void *)rank_histogram_kernel<int8_t, false>);
    MH_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)histogram_smem()));
    if (d->in_type == MH_U8) {
        if (same) rank_histogram_kernel<uint8_t, true><<<grid, HISTOGRAM_THREADS, histogram_smem(), mh_stream(ctx)>>>(p);
        else rank_histogram_kernel<uint8_t, false><<<grid, HISTOGRAM_THREADS, histogram_smem(), mh_stream(ctx)>>>(p);
    } else {
        if (same) rank_histogram_kernel<int8_t, true><<<grid, HISTOGRAM_THREADS, histogram_smem(), mh_stream(ctx)>>>(p);
        else rank_histogram_kernel<int8_t, false><<<grid, HISTOGRAM_THREADS, histogram_smem(), mh_stream(ctx)>>>(p);
    }
    return MH_LAUNCH_CHECK(ctx, "rank/histogram");
}

static const mh_row rows[] = {
    {{"rank/histogram", MH_OP_RANK, MH_BACKEND_CUDA, 11, "shared", "ours",
      "any rank of a full rectangle of an 8-bit image: a thread walks down a column with its window's 256 counts"},
     histogram_supports, histogram_run, NULL, 0},
};

MH_ROW_GROUP(mh_rank_histogram_rows, rows)

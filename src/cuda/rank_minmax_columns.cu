/* rank/minmax's column walk, in a file of its own for a parallel build. A line whose inner values
 * fill a warp (a footprint column of an image: inner = cols x channels) with a window of at most
 * COLUMNS_MAX_K keys of 32 bits runs here, without a tile. A thread owns one inner value (a column)
 * and a segment of its positions, and walks down it COLUMNS_R outputs at a time, the R + k - 1
 * keys of a strip loaded into registers at once (their loads in flight together, a warp's 32
 * columns coalesced; the k - 1 rows a strip shares with the one before come from L1), each output
 * the least of its k keys there. No shared memory and no barrier, so one warp's loads overlap the
 * others' compares and stores (sepfilter/lines walks its columns the same way). */
#include "rank_keys.cuh"
#include "rank_minmax.cuh"
#include "../core/border.h"
#include "../core/dtype.h"

enum { COLUMNS_THREADS = 128, COLUMNS_R = 16, COLUMNS_MAX_K = 32 };

struct columns_params {
    minmax_params m;
    long long seg; /* positions a thread walks, a multiple of COLUMNS_R */
};

/* R outputs down inner value t of line base from position y0 (keys flipped for a maximum). */
template <typename T, int KMAX>
static __device__ __forceinline__ void columns_strip(const minmax_params &p, const T *in, T *out_same, size_t base,
                                                     long long y0, long long y_end)
{
    constexpr int W = COLUMNS_R + KMAX - 1;
    const int need = COLUMNS_R + p.k - 1;
    const long long first = y0 - p.anchor;
    uint32_t w[W], o[COLUMNS_R];
    if (first >= 0 && first + need <= p.n) {
        const T *at = in + base + (size_t)first * p.inner;
#pragma unroll
        for (int d = 0; d < W; ++d)
            if (d < need) w[d] = narrow_key(__ldg(at + (size_t)d * p.inner)) ^ (uint32_t)p.flip;
    } else {
#pragma unroll
        for (int d = 0; d < W; ++d)
            if (d < need) {
                const long long q = mh_border_index(first + d, p.n, p.mode);
                w[d] = q < 0 ? (uint32_t)p.cval_key : narrow_key(__ldg(in + base + (size_t)q * p.inner)) ^ (uint32_t)p.flip;
            }
    }
#pragma unroll
    for (int q = 0; q < COLUMNS_R; ++q) o[q] = w[q];
#pragma unroll
    for (int i = 1; i < KMAX; ++i) {
        if (i >= p.k) break;
#pragma unroll
        for (int q = 0; q < COLUMNS_R; ++q) o[q] = w[q + i] < o[q] ? w[q + i] : o[q];
    }
#pragma unroll
    for (int q = 0; q < COLUMNS_R; ++q) {
        if (y0 + q >= y_end) break;
        const size_t i = base + (size_t)(y0 + q) * p.inner;
        const T v = key_value<T>(o[q] ^ (uint32_t)p.flip);
        if (out_same) out_same[i] = v;
        else mh_store_double(p.out, i, p.out_type, (double)v);
    }
}

template <typename T, int KMAX>
static __global__ void __launch_bounds__(COLUMNS_THREADS) rank_minmax_columns_kernel(const columns_params c)
{
    const minmax_params &p = c.m;
    const size_t t = (size_t)blockIdx.x * COLUMNS_THREADS + threadIdx.x;
    if (t >= p.inner) return;
    const size_t base = (size_t)blockIdx.z * (size_t)p.n * p.inner + t;
    T *const out_same = p.out_type == p.in_type ? (T *)p.out : NULL;
    const long long y_begin = (long long)blockIdx.y * c.seg;
    const long long y_end = y_begin + c.seg < p.n ? y_begin + c.seg : p.n;
    for (long long y0 = y_begin; y0 < y_end; y0 += COLUMNS_R)
        columns_strip<T, KMAX>(p, (const T *)p.in, out_same, base, y0, y_end);
}

bool mh_minmax_columns_take(const mh_rank_line *l)
{
    return l->inner >= 32 && l->k <= COLUMNS_MAX_K &&
           mh_ceil_div(l->inner, COLUMNS_THREADS) <= MH_MAX_GRID_X;
}

template <typename T> mh_status mh_minmax_columns(mh_context *ctx, const minmax_params &p)
{
    typedef void (*columns_fn)(const columns_params);
    const columns_fn kernel = p.k <= 8 ? rank_minmax_columns_kernel<T, 8>
                              : p.k <= 16 ? rank_minmax_columns_kernel<T, 16> : rank_minmax_columns_kernel<T, 32>;
    const size_t blocks_x = mh_ceil_div(p.inner, COLUMNS_THREADS);
    const size_t images = p.outer < MH_MAX_GRID_YZ ? p.outer : MH_MAX_GRID_YZ;
    columns_params c = {p, mh_column_segment_rows(ctx, (size_t)p.n, blocks_x * COLUMNS_THREADS * images, COLUMNS_R)};
    const size_t segs = mh_ceil_div((size_t)p.n, (size_t)c.seg);
    const size_t line_values = (size_t)p.n * p.inner;
    return mh_per_grid_slice(p.outer, [&](size_t first, unsigned count) { /* gridDim.z: outer values */
        columns_params q = c;
        q.m.in = (const T *)p.in + first * line_values;
        q.m.out = (char *)p.out + first * line_values * mh_dtype_size(p.out_type);
        kernel<<<dim3((unsigned)blocks_x, (unsigned)segs, count), COLUMNS_THREADS, 0, mh_stream(ctx)>>>(q);
        return MH_LAUNCH_CHECK(ctx, "rank/minmax's column walk");
    });
}

template mh_status mh_minmax_columns<float>(mh_context *, const minmax_params &);
template mh_status mh_minmax_columns<uint8_t>(mh_context *, const minmax_params &);
template mh_status mh_minmax_columns<int8_t>(mh_context *, const minmax_params &);
template mh_status mh_minmax_columns<uint16_t>(mh_context *, const minmax_params &);
template mh_status mh_minmax_columns<int16_t>(mh_context *, const minmax_params &);
template mh_status mh_minmax_columns<int32_t>(mh_context *, const minmax_params &);
template mh_status mh_minmax_columns<uint32_t>(mh_context *, const minmax_params &);

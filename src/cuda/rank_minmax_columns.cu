/* rank/minmax's column walk, in a file of its own for a parallel build. A line whose inner values
 * fill a warp (a footprint column of an image: inner = cols x channels) with a window of at most
 * COLUMNS_MAX_K keys of 32 bits, into an output of the input's type, runs here without a tile. A
 * thread owns two neighbouring inner values (columns; one where pairs would not be aligned) and a
 * segment of its positions, and walks down them COLUMNS_R outputs at a time, the R + k - 1 rows of
 * a strip loaded into registers at once (their loads in flight together, a warp's coalesced; the
 * k - 1 rows a strip shares with the one before come from L1), each output the least of its k keys
 * there. No shared memory and no barrier, so one warp's loads overlap the others' compares and
 * stores (sepfilter/lines walks its columns the same way). */
#include "rank_keys.cuh"
#include "rank_minmax.cuh"
#include "../core/border.h"

enum { COLUMNS_THREADS = 128, COLUMNS_R = 8, COLUMNS_MAX_K = 32, COLUMNS_SEGMENT_SLOTS = 8 };

struct columns_params {
    minmax_params m;
    long long seg; /* positions a thread walks, a multiple of COLUMNS_R */
};

/* C neighbouring values of a row, loaded and stored as one access of C x sizeof(T) bytes. */
template <typename T, int C> struct alignas(C * sizeof(T)) columns_group {
    T v[C];
};

/* CUDA's vector of two T, for __ldg's read-only loads of a pair (plain loads, which the stores
 * might alias for all the compiler knows, made the file's compile three times as long). */
template <typename T> struct pair_of;
template <> struct pair_of<float> { typedef float2 type; };
template <> struct pair_of<uint8_t> { typedef uchar2 type; };
template <> struct pair_of<int8_t> { typedef char2 type; };
template <> struct pair_of<uint16_t> { typedef ushort2 type; };
template <> struct pair_of<int16_t> { typedef short2 type; };
template <> struct pair_of<int32_t> { typedef int2 type; };
template <> struct pair_of<uint32_t> { typedef uint2 type; };

template <typename T, int C> static __device__ __forceinline__ columns_group<T, C> load_group(const T *at)
{
    if constexpr (C == 1) {
        return {__ldg(at)};
    } else {
        const typename pair_of<T>::type v = __ldg((const typename pair_of<T>::type *)at);
        return {{(T)v.x, (T)v.y}};
    }
}

/* COLUMNS_R outputs down the C columns of line base from position y0 (keys flipped for a
 * maximum). */
template <typename T, int KMAX, int C>
static __device__ __forceinline__ void columns_strip(const minmax_params &p, const T *in, T *out, size_t base,
                                                     long long y0, long long y_end)
{
    typedef columns_group<T, C> group;
    constexpr int R = COLUMNS_R, W = R + KMAX - 1;
    const int need = R + p.k - 1;
    const long long first = y0 - p.anchor;
    const uint32_t flip = (uint32_t)p.flip;
    uint32_t w[W][C], o[R][C];
    if (first >= 0 && first + need <= p.n) {
        const T *at = in + base + (size_t)first * p.inner;
#pragma unroll
        for (int d = 0; d < W; ++d)
            if (d < need) {
                const group g = load_group<T, C>(at + (size_t)d * p.inner);
#pragma unroll
                for (int c = 0; c < C; ++c) w[d][c] = narrow_key(g.v[c]) ^ flip;
            }
    } else {
#pragma unroll
        for (int d = 0; d < W; ++d)
            if (d < need) {
                const long long q = mh_border_index(first + d, p.n, p.mode);
                group g;
                if (q >= 0) g = load_group<T, C>(in + base + (size_t)q * p.inner);
#pragma unroll
                for (int c = 0; c < C; ++c) w[d][c] = q < 0 ? (uint32_t)p.cval_key : narrow_key(g.v[c]) ^ flip;
            }
    }
#pragma unroll
    for (int q = 0; q < R; ++q)
#pragma unroll
        for (int c = 0; c < C; ++c) o[q][c] = w[q][c];
#pragma unroll
    for (int i = 1; i < KMAX; ++i) {
        if (i >= p.k) break;
#pragma unroll
        for (int q = 0; q < R; ++q)
#pragma unroll
            for (int c = 0; c < C; ++c) o[q][c] = w[q + i][c] < o[q][c] ? w[q + i][c] : o[q][c];
    }
#pragma unroll
    for (int q = 0; q < R; ++q) {
        if (y0 + q >= y_end) break;
        const size_t i = base + (size_t)(y0 + q) * p.inner;
        group g;
#pragma unroll
        for (int c = 0; c < C; ++c) g.v[c] = key_value<T>(o[q][c] ^ flip);
        *(group *)(out + i) = g;
    }
}

/* A thread the C columns from C x its index of line blockIdx.z, the positions of segment
 * blockIdx.y. */
template <typename T, int KMAX, int C>
static __global__ void __launch_bounds__(COLUMNS_THREADS) rank_minmax_columns_kernel(const columns_params c)
{
    const minmax_params &p = c.m;
    const size_t t = ((size_t)blockIdx.x * COLUMNS_THREADS + threadIdx.x) * C;
    if (t >= p.inner) return;
    const size_t base = (size_t)blockIdx.z * (size_t)p.n * p.inner + t;
    const long long y_begin = (long long)blockIdx.y * c.seg;
    const long long y_end = y_begin + c.seg < p.n ? y_begin + c.seg : p.n;
#pragma unroll 1 /* a strip's code once: unrolled copies multiply the compile time, not the speed */
    for (long long y0 = y_begin; y0 < y_end; y0 += COLUMNS_R)
        columns_strip<T, KMAX, C>(p, (const T *)p.in, (T *)p.out, base, y0, y_end);
}

bool mh_minmax_columns_take(const mh_rank_line *l, mh_dtype in_type, mh_dtype out_type)
{
    return in_type == out_type && l->inner >= 32 && l->k <= COLUMNS_MAX_K &&
           mh_ceil_div(l->inner, COLUMNS_THREADS) <= MH_MAX_GRID_X;
}

typedef void (*columns_fn)(const columns_params);

template <typename T, int C> static columns_fn columns_kernel(int k)
{
    return k <= 8 ? rank_minmax_columns_kernel<T, 8, C>
           : k <= 16 ? rank_minmax_columns_kernel<T, 16, C> : rank_minmax_columns_kernel<T, 32, C>;
}

/* Two columns a thread (one access of 2 x sizeof(T) bytes a row: float32 8192^2 with a window of
 * 5 ran 1.14x cudaMemcpy's time against one column's 1.30x, lab/tools/minmax_columns_bench.cu)
 * where every row of pairs lies on such a boundary: an even count of inner values, both arrays
 * aligned to a pair. Segments for 8 threads a core's slot (the last wave shorter than at 2). */
template <typename T> mh_status mh_minmax_columns(mh_context *ctx, const minmax_params &p)
{
    const size_t pair_bytes = 2 * sizeof(T);
    const bool pairs = p.inner % 2 == 0 && (uintptr_t)p.in % pair_bytes == 0 && (uintptr_t)p.out % pair_bytes == 0;
    const columns_fn kernel = pairs ? columns_kernel<T, 2>(p.k) : columns_kernel<T, 1>(p.k);
    const size_t blocks_x = mh_ceil_div(mh_ceil_div(p.inner, pairs ? 2 : 1), COLUMNS_THREADS);
    const size_t images = p.outer < MH_MAX_GRID_YZ ? p.outer : MH_MAX_GRID_YZ;
    columns_params c = {p, mh_column_segment_rows(ctx, (size_t)p.n, blocks_x * COLUMNS_THREADS * images, COLUMNS_R,
                                                  COLUMNS_SEGMENT_SLOTS)};
    const size_t segs = mh_ceil_div((size_t)p.n, (size_t)c.seg);
    const size_t line_values = (size_t)p.n * p.inner;
    return mh_per_grid_slice(p.outer, [&](size_t first, unsigned count) { /* gridDim.z: outer values */
        columns_params q = c;
        q.m.in = (const T *)p.in + first * line_values;
        q.m.out = (T *)p.out + first * line_values;
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

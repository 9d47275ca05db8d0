/* sepfilter/fused: ours. Both 1-D passes of a separable filter inside one block, the image
 * crossing device memory once in its own type: a tile of BH rows x TILE interleaved values
 * (TILE / channels pixels) and its halo is read and converted to float32 in shared memory
 * (the border's mode applied there, per axis), the first pass runs over the whole tile height
 * or width it needs, its results are cast to the output's type in shared memory (scipy stores
 * its first pass in the output's dtype: a uint8 Gaussian truncates after each axis), the
 * second pass runs, and the block stores its outputs converted to their type. Summed passes
 * (MH_SEPFILTER_SUM) both read the tile: the horizontal one its middle rows, the vertical one
 * its middle columns, adding to the first's cast values.
 *
 * Memory: for uint8 RGB the kernel reads and writes one byte a value, where a float32
 * pipeline (convert, pass, cast, pass, cast) moves 4 to 8 bytes a value through several
 * kernels. Work: ntaps_v + ntaps_h FMAs a value, register windows as in conv2d/separable, each
 * window value read from shared memory at the first tap that needs it (no predicated reads); the
 * tile's rows read a warp a row as 4-byte words where the type allows, the integers converted and
 * cast through float bits (typed4.cuh), not the conversion unit.
 *
 * Channels are interleaved: the horizontal taps of a value are `channels` values apart, and a
 * horizontal border maps the pixel, keeping the channel. The kernel is instantiated per channel
 * count (1 to 4) and tap bucket (8, 16, 24, 32, 64, and 128 with 16-row tiles, built in
 * sepfilter_long.cu); the types are read at run time (one uniform branch per group of four
 * values). Host taps travel by value as a kernel parameter: no
 * constant memory, no wait for the stream. Device taps (an array library's weights) are read by
 * each block into shared memory as it starts, in a second instantiation of the kernel, so that
 * a call with host taps keeps its taps as constant operands of its FMAs. */
#include "common.cuh"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/scipy_sum.h"
#include "typed4.cuh"

enum { TILE = 192, THREADS = 256, RX = 8, FUSED_MAX_TAPS = 128 };

/* Output rows a tile: 32, and 16 past 64 taps, whose halo of up to 127 rows beside 32 rows of
 * outputs would not fit shared memory (RGB at sigma 10: 81 taps, 249 KB; at 16 rows 194 KB). */
static constexpr __host__ __device__ int tile_rows_for(int kmax)
{
    return kmax > 64 ? 16 : 32;
}

/* Rows a vertical work item sums: 16 (the window's reads and the taps' tests shared by more
 * outputs) while the window and the sums fit the registers of three blocks an SM, 8 past 32 taps.
 * A tile's rows are a multiple of both. */
template <int KMAX>
static constexpr __host__ __device__ int rows_an_item()
{
    return KMAX <= 32 ? 16 : 8;
}

struct sep_params {
    const void *in;
    void *out;
    long long rows, cols; /* pixels */
    long long image_values; /* rows * cols * channels */
    long long col_tiles;
    int in_type, out_type;
    int in_bytes, out_bytes; /* their element sizes, found once on the host */
    int kv, kh, av, ah; /* taps and anchors (ntaps / 2 + origin) */
    int mode_v, mode_h;
    float cval, div_v, div_h;
    int order; /* mh_sepfilter_run_order's */
    const float *dev_u, *dev_v; /* device taps, or NULL: u, v */
    float u[MH_SEPFILTER_MAX_TAPS + 1], v[MH_SEPFILTER_MAX_TAPS + 1]; /* vertical, horizontal taps */
};

/* Shared memory of a tile: the input (th rows, stride sw), the first pass's result (mid, stride
 * ms) and the stage of the outputs, which reuses the input's floats (BH rows, stride ss). */
struct sep_layout {
    int th, tw; /* rows, interleaved values a row holds */
    int sw, ms, ss; /* row strides (floats) */
    int mid_at, mid_floats; /* where mid starts, after the input and the stage */
    int floats;
};

/* The strides, for the 32 banks of 4 bytes. One channel: the horizontal pass gives a warp's
 * lanes 32 neighbouring rows at one column (horizontal_item), and rows an odd number of floats
 * apart lie in 32 different banks (at TILE, a multiple of 32, 8 lanes' windows would share one);
 * the stage is read as 16-byte groups, so its rows stay 16-byte aligned (TILE + 4: 4 lanes a
 * bank where the horizontal pass writes it). Interleaved channels: lanes take neighbouring
 * strips and channels of a row, and the tile stays as small as it can be (the float padding
 * of odd strides would cost a Gaussian of 17 taps on RGB its third block an SM). */
static inline __host__ __device__ sep_layout layout_for(int C, int kv, int kh, int order, int BH)
{
    sep_layout l;
    l.th = BH + kv - 1;
    l.tw = TILE + C * (kh - 1);
    l.sw = C == 1 ? l.tw | 1 : (l.tw + 3) & ~3;
    l.ss = C == 1 ? TILE + 4 : TILE;
    /* summed passes and the rows alone: mid is the stage (BH rows of outputs, read as 16-byte groups) */
    l.ms = order == MH_SEPFILTER_VERTICAL_FIRST                                    ? l.sw
           : order == MH_SEPFILTER_SUM || order == MH_SEPFILTER_HORIZONTAL_ONLY ? l.ss
           : C == 1                                                               ? TILE + 1
                                                                                  : TILE;
    l.mid_floats = order == MH_SEPFILTER_HORIZONTAL_FIRST ? l.th * l.ms : BH * l.ms;
    const int input = l.th * l.sw, stage = BH * l.ss;
    l.mid_at = ((input > stage ? input : stage) + 3) & ~3; /* 16-byte aligned: it may be the stage */
    l.floats = l.mid_at + l.mid_floats;
    return l;
}

/* A horizontal work item's row y, strip s and channel c (layout_for says why lanes walk down
 * the rows for one channel and along a row for several). */
template <int C>
static __device__ __forceinline__ void horizontal_item(int item, int nrows, int &y, int &s, int &c)
{
    constexpr int STRIPS = TILE / C / RX;
    if (C == 1) {
        s = item / nrows, y = item - s * nrows, c = 0;
        return;
    }
    y = item / (STRIPS * C);
    const int rest = item - y * STRIPS * C;
    s = rest / C, c = rest - s * C;
}

/* Element i of an array of `bytes`-wide elements at base starts a group of four on its own width. */
static __device__ __forceinline__ bool aligned_for(const void *base, long long i, int bytes)
{
    return (i & 3) == 0 && ((uintptr_t)base & (uintptr_t)(4 * bytes - 1)) == 0;
}

/* A group of four tile values at the image's edges or misaligned, element by element, each axis
 * extended by its mode: kept out of line, so that the hot loops stay small in the instruction
 * cache. */
template <int C>
static __device__ __noinline__ void load_edge_group(const sep_params &p, const sep_layout &l, float *dst,
                                                    const void *in, long long y, long long base, long long x0, int t)
{
    for (int e = 0; e < 4; ++e) {
        const int te = t + e;
        if (te < 0 || te >= l.tw) continue;
        const long long px = mh_border_index(x0 - p.ah + te / C, p.cols, p.mode_h);
        dst[te] = (y < 0 || px < 0) ? p.cval : mh_load_value(in, (size_t)(base + px * C + te % C), (mh_dtype)p.in_type);
    }
}

/* The tile and its halo, as float32: tile[rr][t] holds pixel x0 - ah + t / C, channel t % C, of
 * row y0 - av + rr, each axis extended by its mode (cval where a constant mode reaches). Groups of
 * four aligned in global memory move with one load where they lie inside the row; each thread
 * issues BATCH such loads before it converts any, so their latencies overlap. */
template <int C>
static __device__ void load_tile_groups(const sep_params &p, const sep_layout &l, float *tile, const void *in,
                                        long long y0, long long x0, int tid)
{
    constexpr int BATCH = 4;
    const long long row_values = p.cols * C, t0 = (x0 - p.ah) * C; /* interleaved index of t = 0 */
    const int groups = (l.tw + 3 + 3) / 4; /* per row, whatever its alignment shift (0 to 3) */
    const int total = l.th * groups;
    for (int first_item = tid; first_item < total; first_item += BATCH * THREADS) {
        uint4 raw[BATCH];
        int at[BATCH]; /* where the group goes in the tile; -1: none, or done element by element */
#pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            const int item = first_item + u * THREADS;
            at[u] = -1;
            if (item >= total) continue;
            const int rr = item / groups, g = item - rr * groups;
            const long long y = mh_border_index(y0 - p.av + rr, p.rows, p.mode_v);
            const long long base = y < 0 ? 0 : y * row_values;
            const int t = 4 * g - (int)((t0 + base) & 3); /* t = -shift starts a group aligned in memory */
            if (t >= l.tw) continue;
            const long long first = t0 + t;
            if (y >= 0 && t >= 0 && t + 4 <= l.tw && first >= 0 && first + 4 <= row_values &&
                aligned_for(in, base + first, p.in_bytes)) {
                raw[u] = load4_raw(in, base + first, p.in_type);
                at[u] = rr * l.sw + t;
                continue;
            }
            load_edge_group<C>(p, l, tile + rr * l.sw, in, y, base, x0, t);
        }
#pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            if (at[u] < 0) continue;
            float o[4];
            unpack4(raw[u], p.in_type, o);
#pragma unroll
            for (int e = 0; e < 4; ++e) tile[at[u] + e] = o[e];
        }
    }
}

/* Row rr of the tile from image row y >= 0, for a tile whose columns lie inside the image's rows
 * and a type of 1, 2 or 4 bytes without sign (uint8, uint16, float32): the 4-byte words of memory
 * that hold its values, a lane a word, WORDS of a lane's loaded before any is converted; a word
 * that reaches past the image's first or last byte is read value by value. The row's border mode
 * is the caller's (one index a row, not one a group). */
template <int C>
static __device__ __forceinline__ void load_row_words(const sep_params &p, const sep_layout &l, float *dst,
                                                      const void *in, long long y, long long x0, int lane)
{
    constexpr int WORDS = 4;
    const int bytes = p.in_bytes, log_per = 2 - bytes / 2, per = 1 << log_per; /* values a word: 4, 2, 1 */
    const long long first = (y * p.cols + x0 - p.ah) * C; /* tile value 0's index in the image */
    const uintptr_t image = (uintptr_t)in, end = image + (uintptr_t)p.image_values * (uintptr_t)bytes;
    const uintptr_t at = image + (uintptr_t)first * (uintptr_t)bytes, word0 = at & ~(uintptr_t)3;
    const int shift = (int)(at & 3) >> (bytes / 2); /* tile value of word 0's first value: -shift */
    const int words = (shift + l.tw + per - 1) >> log_per;
    for (int k0 = lane; k0 < words; k0 += 32 * WORDS) {
        uint32_t raw[WORDS] = {};
#pragma unroll
        for (int u = 0; u < WORDS; ++u) {
            const uintptr_t w = word0 + 4 * (uintptr_t)(k0 + 32 * u);
            if (k0 + 32 * u < words && w >= image && w + 4 <= end) raw[u] = __ldg(reinterpret_cast<const uint32_t *>(w));
        }
#pragma unroll
        for (int u = 0; u < WORDS; ++u) {
            const int k = k0 + 32 * u, t = k * per - shift;
            if (k >= words) break;
            const uintptr_t w = word0 + 4 * (uintptr_t)k;
            if (w < image || w + 4 > end) {
                for (int e = t < 0 ? -t : 0; e < per && t + e < l.tw; ++e)
                    dst[t + e] = mh_load_value(in, (size_t)(first + t + e), (mh_dtype)p.in_type);
                continue;
            }
            if (bytes == 4) {
                if ((unsigned)t < (unsigned)l.tw) dst[t] = __uint_as_float(raw[u]);
                continue;
            }
            const uint32_t x = raw[u];
            const float v0 = bytes == 1 ? mh_u8_float(x, 0) : mh_u16_float(x, 0);
            const float v1 = bytes == 1 ? mh_u8_float(x, 1) : mh_u16_float(x, 1);
            if ((unsigned)t < (unsigned)l.tw) dst[t] = v0;
            if ((unsigned)(t + 1) < (unsigned)l.tw) dst[t + 1] = v1;
            if (bytes == 2) continue;
            const float v2 = mh_u8_float(x, 2), v3 = mh_u8_float(x, 3);
            if ((unsigned)(t + 2) < (unsigned)l.tw) dst[t + 2] = v2;
            if ((unsigned)(t + 3) < (unsigned)l.tw) dst[t + 3] = v3;
        }
    }
}

/* The tile (load_tile_groups says what it holds): a warp a row, its words (load_row_words) where
 * the type has them and the tile's columns lie inside the rows, else in groups of four. */
template <int C>
static __device__ void load_tile(const sep_params &p, const sep_layout &l, float *tile, const void *in, long long y0,
                                 long long x0, int tid)
{
    const bool words = (p.in_type == MH_U8 || p.in_type == MH_U16 || p.in_type == MH_F32) &&
                       (uintptr_t)in % (uintptr_t)p.in_bytes == 0 && x0 - p.ah >= 0 &&
                       (x0 - p.ah) * C + l.tw <= p.cols * C;
    if (!words) {
        load_tile_groups<C>(p, l, tile, in, y0, x0, tid);
        return;
    }
    const int warp = tid / 32, lane = tid % 32;
    for (int rr = warp; rr < l.th; rr += THREADS / 32) {
        const long long y = mh_border_index(y0 - p.av + rr, p.rows, p.mode_v);
        float *dst = tile + rr * l.sw;
        if (y < 0) {
            for (int t = lane; t < l.tw; t += 32) dst[t] = p.cval;
            continue;
        }
        load_row_words<C>(p, l, dst, in, y, x0, lane);
    }
}

/* mh_finish_value over n sums in place: nothing to do for float32 without a divisor (the common case,
 * tested once for the whole strip rather than per value). */
template <int N, int TYPE>
static __device__ __forceinline__ void cast_all(float *o)
{
#pragma unroll
    for (int q = 0; q < N; ++q) o[q] = mh_cast_value(o[q], (mh_dtype)TYPE);
}

/* cast_all into an unsigned type of `mask`'s bits, without the conversion unit where every sum
 * lies in [0, 2^22) (a filter of non-negative taps, the common case): v + 1.5 * 2^23 rounded toward
 * zero holds trunc(v) in its low mantissa bits (typed4.cuh's top comment); else value by value. */
template <int N, int TYPE>
static __device__ __forceinline__ void cast_all_unsigned(float *o)
{
    constexpr uint32_t mask = TYPE == MH_U8 ? 0xffu : 0xffffu;
    bool fast = true;
#pragma unroll
    for (int q = 0; q < N; ++q) fast &= __float_as_uint(o[q]) < 0x4a800000u; /* +0.0 <= v < 2^22; not NaN */
    if (!fast) {
        cast_all<N, TYPE>(o);
        return;
    }
#pragma unroll
    for (int q = 0; q < N; ++q) o[q] = mh_float_of_bits23((__float_as_uint(__fadd_rz(o[q], 12582912.0f)) & mask) | 0x4b000000u);
}

template <int N>
static __device__ __forceinline__ void finish_all(float *o, float divisor, int type)
{
    if (divisor != 1.0f)
#pragma unroll
        for (int q = 0; q < N; ++q) o[q] = o[q] / divisor;
    switch (type) { /* one uniform branch a strip, each case a short unrolled loop */
    case MH_F16: cast_all<N, MH_F16>(o); break;
    case MH_U8: cast_all_unsigned<N, MH_U8>(o); break;
    case MH_I8: cast_all<N, MH_I8>(o); break;
    case MH_U16: cast_all_unsigned<N, MH_U16>(o); break;
    case MH_I16: cast_all<N, MH_I16>(o); break;
    default: break;
    }
}

/* Vertical pass: dst[y][t] = cast(sum_i src[y + i][t] u[i]) for y < out_rows, t < width (with
 * `add`: cast(that + dst[y][t])); RV rows of one column a work item (out_rows a multiple of RV).
 * The taps: p.u, or su in shared memory (SHARED). A window's value is read at the first tap that
 * needs it, behind that tap's test, so no read is predicated and none reaches past the rows the
 * call has; a thread's items go along the columns, then down a group of RV rows, counted without
 * a division. */
template <int KMAX, bool SHARED>
static __device__ void vertical(const sep_params &p, const float *su, const float *src, int src_stride, float *dst,
                                int dst_stride, int out_rows, int width, int tid, bool add = false)
{
    constexpr int RV = rows_an_item<KMAX>(), W = RV + KMAX - 1;
    int g = 0, t = tid;
    for (; g < out_rows / RV; t += THREADS) {
        while (t >= width) t -= width, ++g;
        if (g >= out_rows / RV) break;
        const int yb = g * RV;
        const float *col = src + yb * src_stride + t;
        float w[W], o[RV];
#pragma unroll
        for (int d = 0; d < RV; ++d) w[d] = col[d * src_stride];
#pragma unroll
        for (int q = 0; q < RV; ++q) o[q] = 0.0f;
#pragma unroll
        for (int i = 0; i < KMAX; ++i) {
            if (i >= p.kv) break;
            if (i > 0) w[RV - 1 + i] = col[(RV - 1 + i) * src_stride];
#pragma unroll
            for (int q = 0; q < RV; ++q) o[q] = fmaf(w[q + i], SHARED ? su[i] : p.u[i], o[q]);
        }
        finish_all<RV>(o, p.div_v, p.out_type);
        if (add) {
#pragma unroll
            for (int q = 0; q < RV; ++q) o[q] += dst[(yb + q) * dst_stride + t];
            finish_all<RV>(o, 1.0f, p.out_type);
        }
#pragma unroll
        for (int q = 0; q < RV; ++q) dst[(yb + q) * dst_stride + t] = o[q];
    }
}

/* Horizontal pass over `nrows` rows: dst[y][(x + r) C + c] = cast(sum_j src[y][(x + r + j) C + c] v[j]),
 * RX pixels of one channel a work item. The taps: p.v, or sv in shared memory (SHARED); the window
 * read as vertical's is. */
template <int C, int KMAX, bool SHARED>
static __device__ void horizontal(const sep_params &p, const float *sv, const float *src, int src_stride, float *dst,
                                  int dst_stride, int nrows, int tid)
{
    constexpr int W = RX + KMAX - 1, STRIPS = TILE / C / RX;
    for (int item = tid; item < nrows * STRIPS * C; item += THREADS) {
        int y, s, c;
        horizontal_item<C>(item, nrows, y, s, c);
        const float *row = src + y * src_stride + s * RX * C + c;
        float w[W], o[RX];
#pragma unroll
        for (int d = 0; d < RX; ++d) w[d] = row[d * C];
#pragma unroll
        for (int r = 0; r < RX; ++r) o[r] = 0.0f;
#pragma unroll
        for (int j = 0; j < KMAX; ++j) {
            if (j >= p.kh) break;
            if (j > 0) w[RX - 1 + j] = row[(RX - 1 + j) * C];
#pragma unroll
            for (int r = 0; r < RX; ++r) o[r] = fmaf(w[r + j], SHARED ? sv[j] : p.v[j], o[r]);
        }
        finish_all<RX>(o, p.div_h, p.out_type);
#pragma unroll
        for (int r = 0; r < RX; ++r) dst[y * dst_stride + (s * RX + r) * C + c] = o[r];
    }
}

/* Up to four values at a row's end, or misaligned, one by one (out of line, as load_edge_group). */
static __device__ __noinline__ void store_edge(void *out, long long i, int n, int type, const float *s)
{
    for (int e = 0; e < n; ++e) mh_store_value(out, (size_t)(i + e), (mh_dtype)type, s[e]);
}

/* The block's outputs, stage[y][t] for BH rows and TILE values (rows ss floats apart, 16-byte
 * aligned), into out (inside the image); each group of four read from the stage at once. */
template <int C, int BH>
static __device__ void store_tile(const sep_params &p, const float *stage, int ss, void *out, long long y0, long long x0,
                                  int tid)
{
    const long long row_values = p.cols * C, first = x0 * C; /* x0 * C = blockIdx * TILE: a multiple of 4 */
    for (int item = tid; item < BH * (TILE / 4); item += THREADS) {
        const int y = item / (TILE / 4), t = 4 * (item - y * (TILE / 4));
        if (y0 + y >= p.rows || first + t >= row_values) continue;
        const long long i = (y0 + y) * row_values + first + t;
        const float4 group = *reinterpret_cast<const float4 *>(stage + y * ss + t);
        const float s[4] = {group.x, group.y, group.z, group.w};
        if (first + t + 4 <= row_values && aligned_for(out, i, p.out_bytes)) {
            store4_typed(out, i, p.out_type, s);
            continue;
        }
        store_edge(out, i, (int)(row_values - first - t < 4 ? row_values - first - t : 4), p.out_type, s);
    }
}

enum { SHARED_TAPS_FLOATS = 2 * (MH_SEPFILTER_MAX_TAPS + 1) }; /* after the tile, where taps are read there */

template <int C, int KMAX, bool DEVICE_TAPS>
static __global__ void __launch_bounds__(THREADS, KMAX <= 32 ? 3 : KMAX <= 64 ? 2 : 1) sepfilter_kernel(const __grid_constant__ sep_params p)
{
    extern __shared__ __align__(16) float smem[];
    constexpr int BH = tile_rows_for(KMAX);
    const sep_layout l = layout_for(C, p.kv, p.kh, p.order, BH);
    float *tile = smem, *mid = smem + l.mid_at;
    float *su = smem + l.floats, *sv = su + MH_SEPFILTER_MAX_TAPS + 1;
    const int tid = threadIdx.x;
    if (DEVICE_TAPS) { /* read before the tile's __syncthreads */
        for (int i = tid; i < p.kv; i += THREADS) su[i] = p.dev_u ? p.dev_u[i] : p.u[i];
        for (int j = tid; j < p.kh; j += THREADS) sv[j] = p.dev_v ? p.dev_v[j] : p.v[j];
    }
    const long long row_tile = (long long)blockIdx.x / p.col_tiles, col_tile = (long long)blockIdx.x % p.col_tiles;
    const long long y0 = row_tile * BH, x0 = col_tile * (TILE / C);
    const size_t image = (size_t)blockIdx.z * (size_t)p.image_values;
    const void *in = (const char *)p.in + image * (size_t)p.in_bytes;
    void *out = (char *)p.out + image * (size_t)p.out_bytes;

    load_tile<C>(p, l, tile, in, y0, x0, tid);
    __syncthreads();
    if (p.order == MH_SEPFILTER_SUM) { /* the tile holds cval past the edges: no pass reads a filtered cval */
        horizontal<C, KMAX, DEVICE_TAPS>(p, sv, tile + p.av * l.sw, l.sw, mid, l.ms, BH, tid);
        __syncthreads();
        vertical<KMAX, DEVICE_TAPS>(p, su, tile + C * p.ah, l.sw, mid, l.ms, BH, TILE, tid, true);
        __syncthreads();
        store_tile<C, BH>(p, mid, l.ms, out, y0, x0, tid);
        return;
    }
    if (p.order == MH_SEPFILTER_HORIZONTAL_ONLY) { /* the identity pass left out: the horizontal one's outputs are stored */
        horizontal<C, KMAX, DEVICE_TAPS>(p, sv, tile, l.sw, mid, l.ms, BH, tid);
        __syncthreads();
        store_tile<C, BH>(p, mid, l.ms, out, y0, x0, tid);
        return;
    }
    if (p.order == MH_SEPFILTER_VERTICAL_FIRST) {
        vertical<KMAX, DEVICE_TAPS>(p, su, tile, l.sw, mid, l.ms, BH, l.tw, tid);
        __syncthreads();
        if (p.mode_h == MH_MODE_CONSTANT) /* the second pass reads cval past the edges, not a filtered cval */
            for (int item = tid; item < BH * l.tw; item += THREADS) {
                const int y = item / l.tw, t = item - y * l.tw;
                const long long px = x0 - p.ah + t / C;
                if (px < 0 || px >= p.cols) mid[y * l.ms + t] = p.cval;
            }
        __syncthreads();
        horizontal<C, KMAX, DEVICE_TAPS>(p, sv, mid, l.ms, tile, l.ss, BH, tid); /* the input tile becomes the stage */
    } else {
        horizontal<C, KMAX, DEVICE_TAPS>(p, sv, tile, l.sw, mid, l.ms, l.th, tid);
        __syncthreads();
        if (p.mode_v == MH_MODE_CONSTANT)
            for (int item = tid; item < l.th * TILE; item += THREADS) {
                const int rr = item / TILE;
                const long long y = y0 - p.av + rr;
                if (y < 0 || y >= p.rows) mid[rr * l.ms + item - rr * TILE] = p.cval;
            }
        __syncthreads();
        vertical<KMAX, DEVICE_TAPS>(p, su, mid, l.ms, tile, l.ss, BH, TILE, tid);
    }
    __syncthreads();
    store_tile<C, BH>(p, tile, l.ss, out, y0, x0, tid);
}

/* The kernel for C channels and taps up to kmax a pass. The instances are built in four
 * translation units, so that no compile is long (all 40 up to 64 taps in one were the library's
 * longest compile, 88 s on the H200 machine's build; the eight of 128 taps take two minutes):
 * sepfilter_device_taps.cu includes this file with MH_SEPFILTER_DEVICE_TAPS_UNIT set and builds
 * the device-taps ones up to 64 taps, sepfilter_long.cu and sepfilter_long_device_taps.cu with
 * MH_SEPFILTER_LONG_UNIT the 128-tap ones; this unit builds the others and the host code. */
typedef void (*sep_kernel)(const sep_params);
sep_kernel mh_sepfilter_long_kernel(int C);        /* host taps */
sep_kernel mh_sepfilter_long_device_kernel(int C); /* device taps */

template <int C, bool DEVICE_TAPS>
static sep_kernel kernel_for(int kmax)
{
    return kmax <= 8    ? sepfilter_kernel<C, 8, DEVICE_TAPS>
           : kmax <= 16 ? sepfilter_kernel<C, 16, DEVICE_TAPS>
           : kmax <= 24 ? sepfilter_kernel<C, 24, DEVICE_TAPS>
           : kmax <= 32 ? sepfilter_kernel<C, 32, DEVICE_TAPS>
           : kmax <= 64 ? sepfilter_kernel<C, 64, DEVICE_TAPS>
                        : DEVICE_TAPS ? mh_sepfilter_long_device_kernel(C) : mh_sepfilter_long_kernel(C);
}

template <bool DEVICE_TAPS>
static sep_kernel pick_for(int C, int kmax)
{
    switch (C) {
    case 1: return kernel_for<1, DEVICE_TAPS>(kmax);
    case 2: return kernel_for<2, DEVICE_TAPS>(kmax);
    case 3: return kernel_for<3, DEVICE_TAPS>(kmax);
    default: return kernel_for<4, DEVICE_TAPS>(kmax);
    }
}

sep_kernel mh_sepfilter_device_taps_kernel(int C, int kmax);
#if defined(MH_SEPFILTER_LONG_UNIT)
/* MH_SEPFILTER_LONG_UNIT: 1 host taps, 2 device taps (a unit each: four 128-tap kernels compile
 * in about a minute, eight in two) */
template <int C>
static sep_kernel long_kernel()
{
    return sepfilter_kernel<C, FUSED_MAX_TAPS, MH_SEPFILTER_LONG_UNIT == 2>;
}

#if MH_SEPFILTER_LONG_UNIT == 2
sep_kernel mh_sepfilter_long_device_kernel(int C)
#else
sep_kernel mh_sepfilter_long_kernel(int C)
#endif
{
    return C == 1 ? long_kernel<1>() : C == 2 ? long_kernel<2>() : C == 3 ? long_kernel<3>() : long_kernel<4>();
}
#elif defined(MH_SEPFILTER_DEVICE_TAPS_UNIT)
sep_kernel mh_sepfilter_device_taps_kernel(int C, int kmax) { return pick_for<true>(C, kmax); }
#else

/* ---- two-pass: the baseline ----------------------------------------------------------------
 * One thread a value, one launch a pass, the first pass's cast values in float32 device scratch
 * between them: what a float32 pipeline of 1-D filters (scipy's structure) costs on a GPU. */

struct pass_params {
    const void *src;
    int src_type, dst_type, cast_type; /* cast_type: the type whose values the pass stores */
    void *dst;
    long long values, n, step, period; /* line length n, values step apart; a line every period * n */
    int ntaps, anchor, mode;
    float cval, divisor;
    const float *add; /* NULL, or values each output adds (of cast_type) before its store */
    const float *dev_taps; /* device taps, or NULL: taps */
    float taps[MH_SEPFILTER_MAX_TAPS + 1];
};

static __global__ void pass_kernel(const __grid_constant__ pass_params p)
{
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < p.values; v += (long long)gridDim.x * blockDim.x) {
        const long long i = v / p.step % p.n; /* position along the line */
        const long long base = v - i * p.step;
        float acc = 0.0f;
        for (int j = 0; j < p.ntaps; ++j) {
            const long long q = mh_border_index(i + j - p.anchor, p.n, p.mode);
            const float x = q < 0 ? p.cval : mh_load_value(p.src, (size_t)(base + q * p.step), (mh_dtype)p.src_type);
            acc = fmaf(x, p.dev_taps ? p.dev_taps[j] : p.taps[j], acc);
        }
        float r = mh_finish_value(acc, p.divisor, (mh_dtype)p.cast_type);
        if (p.add) r = mh_cast_value(r + p.add[v], (mh_dtype)p.cast_type);
        mh_store_value(p.dst, (size_t)v, (mh_dtype)p.dst_type, r);
    }
}

static mh_status run_pass(mh_context *ctx, const mh_sepfilter_args *a, const mh_sepfilter_axis *x, int vertical,
                          const void *src, int src_type, void *dst, int dst_type, int cast_type, const float *add)
{
    const mh_sepfilter_desc *d = &a->d;
    pass_params p = {};
    p.src = src, p.src_type = src_type, p.dst = dst, p.dst_type = dst_type, p.cast_type = cast_type, p.add = add;
    p.values = (long long)a->values;
    p.n = (long long)(vertical ? d->rows : d->cols);
    p.step = (long long)(vertical ? d->cols * d->channels : d->channels);
    p.ntaps = (int)x->ntaps, p.anchor = mh_sepfilter_anchor(x), p.mode = (int)x->mode;
    p.cval = (float)d->cval, p.divisor = (float)x->divisor;
    p.dev_taps = mh_sepfilter_kernel_taps(x, vertical ? a->vtaps_on_device : a->htaps_on_device, p.taps);
    pass_kernel<<<(unsigned)mh_resident_blocks(ctx, a->values, 256), 256, 0, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "pass_kernel");
}

/* ---- two-pass in float64: a wide type on either side (mh_sepfilter_in_double) ----------------
 * The same passes in double, the first's cast values in double scratch (as scipy's second pass
 * reads them back); summed, the second into scratch of the output's type, added to the first's in
 * that type's arithmetic (mh_sepfilter_add_cuda: numpy's `+=`, exact for int64). A filter of
 * one axis runs its pass alone (mh_sepfilter_second_is_identity). */

struct pass64_params {
    const void *src;
    void *dst;
    int src_type, dst_type;
    int dst_double; /* dst holds doubles: the cast values, as the next pass reads them */
    long long values, n, step;
    int ntaps, anchor, mode;
    double cval, divisor;
    const float *dev_taps; /* device float32 taps widened as read, or NULL: taps */
    int scipy_sums, fold; /* MH_SEPFILTER_SUMS_SCIPY (host taps), mh_scipy_fold of the taps */
    double taps[MH_SEPFILTER_MAX_TAPS + 1];
};

/* The value of src at index i + j - anchor of the line at base (the mode applied). */
static __device__ __forceinline__ double pass64_value(const pass64_params &p, long long base, long long i, int j)
{
    const long long q = mh_border_index(i + j - p.anchor, p.n, p.mode);
    return q < 0 ? p.cval : mh_load_double(p.src, (size_t)(base + q * p.step), (mh_dtype)p.src_type);
}

/* scipy's sum of output i: the taps' values gathered first (mh_scipy_sum's order is not theirs). */
static __device__ double pass64_scipy_sum(const pass64_params &p, long long base, long long i)
{
    double x[MH_SEPFILTER_MAX_TAPS];
    for (int j = 0; j < p.ntaps; ++j) x[j] = pass64_value(p, base, i, j);
    return mh_scipy_sum(x, 1, p.taps, p.ntaps, p.fold);
}

static __global__ void pass64_kernel(const __grid_constant__ pass64_params p)
{
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < p.values; v += (long long)gridDim.x * blockDim.x) {
        const long long i = v / p.step % p.n;
        const long long base = v - i * p.step;
        double acc = 0.0;
        if (p.scipy_sums)
            acc = pass64_scipy_sum(p, base, i);
        else
            for (int j = 0; j < p.ntaps; ++j)
                acc = fma(pass64_value(p, base, i, j), p.dev_taps ? (double)p.dev_taps[j] : p.taps[j], acc);
        const double r = p.divisor != 1.0 ? acc / p.divisor : acc;
        if (p.dst_double) ((double *)p.dst)[v] = mh_cast_double(r, (mh_dtype)p.dst_type);
        else mh_store_double(p.dst, (size_t)v, (mh_dtype)p.dst_type, r);
    }
}

/* One float64 pass from src (of src_type) into dst: doubles cast to out_type where dst_double,
 * else values of out_type. */
static mh_status run_pass64(mh_context *ctx, const mh_sepfilter_args *a, const mh_sepfilter_axis *x, int vertical,
                            const void *src, int src_type, void *dst, int dst_double)
{
    const mh_sepfilter_desc *d = &a->d;
    pass64_params p = {};
    p.src = src, p.src_type = src_type, p.dst = dst, p.dst_type = (int)d->out_type, p.dst_double = dst_double;
    p.values = (long long)a->values;
    p.n = (long long)(vertical ? d->rows : d->cols);
    p.step = (long long)(vertical ? d->cols * d->channels : d->channels);
    p.ntaps = (int)x->ntaps, p.anchor = mh_sepfilter_anchor(x), p.mode = (int)x->mode;
    p.cval = d->cval, p.divisor = (double)x->divisor;
    p.dev_taps = mh_sepfilter_kernel_taps64(x, p.taps);
    p.scipy_sums = d->sums == MH_SEPFILTER_SUMS_SCIPY, p.fold = mh_scipy_fold(p.taps, p.ntaps);
    pass64_kernel<<<(unsigned)mh_resident_blocks(ctx, a->values, 256), 256, 0, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "pass64_kernel");
}

static mh_status two_pass64_run(mh_context *ctx, const mh_sepfilter_args *a)
{
    const mh_sepfilter_desc *d = &a->d;
    const int vfirst = d->order != MH_SEPFILTER_HORIZONTAL_FIRST;
    const mh_sepfilter_axis *one = vfirst ? &d->vertical : &d->horizontal, *two = vfirst ? &d->horizontal : &d->vertical;
    if (mh_sepfilter_second_is_identity(a)) return run_pass64(ctx, a, one, vfirst, a->in, (int)d->in_type, a->out, 0);
    void *mid;
    if (d->order == MH_SEPFILTER_SUM) {
        MH_TRY(mh_workspace(ctx, a->values * mh_dtype_size(d->out_type), &mid));
        MH_TRY(run_pass64(ctx, a, one, vfirst, a->in, (int)d->in_type, a->out, 0));
        MH_TRY(run_pass64(ctx, a, two, !vfirst, a->in, (int)d->in_type, mid, 0));
        return mh_sepfilter_add_cuda(ctx, a->out, mid, a->values, d->out_type);
    }
    MH_TRY(mh_workspace(ctx, a->values * sizeof(double), &mid));
    MH_TRY(run_pass64(ctx, a, one, vfirst, a->in, (int)d->in_type, mid, 1));
    return run_pass64(ctx, a, two, !vfirst, mid, MH_F64, a->out, 0);
}

static mh_status two_pass_run(mh_context *ctx, const mh_args *x)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    if (mh_sepfilter_in_double(d)) return two_pass64_run(ctx, a);
    float *mid;
    MH_TRY(mh_workspace(ctx, a->values * sizeof(float), (void **)&mid));
    const int vfirst = d->order != MH_SEPFILTER_HORIZONTAL_FIRST, sum = d->order == MH_SEPFILTER_SUM;
    /* the first pass stores values of the output's type, held as float32; summed, the second
     * reads the input and adds them */
    MH_TRY(run_pass(ctx, a, vfirst ? &d->vertical : &d->horizontal, vfirst, a->in, (int)d->in_type, mid, MH_F32,
                    (int)d->out_type, NULL));
    return run_pass(ctx, a, vfirst ? &d->horizontal : &d->vertical, !vfirst, sum ? a->in : mid,
                    sum ? (int)d->in_type : MH_F32, a->out, (int)d->out_type, (int)d->out_type, sum ? mid : NULL);
}

/* ---- launch, registry -------------------------------------------------------------------- */

static int device_taps(const mh_sepfilter_args *a) { return a->vtaps_on_device || a->htaps_on_device; }

static sep_kernel pick(int C, int kmax, int device_taps)
{
    return device_taps ? mh_sepfilter_device_taps_kernel(C, kmax) : pick_for<false>(C, kmax);
}

/* The longer pass's taps: they pick the kernel's bucket and its tile's rows. */
static int kmax_of(const mh_sepfilter_desc *d)
{
    return (int)(d->vertical.ntaps > d->horizontal.ntaps ? d->vertical.ntaps : d->horizontal.ntaps);
}

static size_t smem_bytes(const mh_sepfilter_args *a)
{
    const mh_sepfilter_desc *d = &a->d;
    const size_t floats = (size_t)layout_for((int)d->channels, (int)d->vertical.ntaps, (int)d->horizontal.ntaps,
                                             mh_sepfilter_run_order(a), tile_rows_for(kmax_of(d)))
                              .floats;
    return (floats + (device_taps(a) ? SHARED_TAPS_FLOATS : 0)) * sizeof(float);
}

static size_t tiles(const mh_sepfilter_desc *d)
{
    return mh_ceil_div(d->rows, (size_t)tile_rows_for(kmax_of(d))) * mh_ceil_div(d->cols, TILE / d->channels);
}

/* 1, with the reason in why, for a call computed in float64: fused's tile holds float32. */
static int refuses_double(const mh_sepfilter_desc *d, char *why, size_t len)
{
    if (!mh_sepfilter_in_double(d)) return 0;
    snprintf(why, len, "it computes in float32, and %s into %s computes in float64 (fused64, two-pass, lines and cpu-omp do)",
             mh_dtype_name(d->in_type), mh_dtype_name(d->out_type));
    return 1;
}

static int fused_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    if (refuses_double(d, why, len)) return 0;
    if (smem_bytes(a) > mh_smem_optin()) {
        snprintf(why, len, "its tile needs %zu bytes of shared memory; this GPU gives a block %zu", smem_bytes(a),
                 mh_smem_optin());
        return 0;
    }
    if (tiles(d) > 0x7fffffff) {
        snprintf(why, len, "%zu tiles an image: more than a grid's 2^31 - 1 blocks", tiles(d));
        return 0;
    }
    return 1;
}

static mh_status fused_run(mh_context *ctx, const mh_args *x)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    sep_params p = {};
    p.rows = (long long)d->rows, p.cols = (long long)d->cols;
    p.image_values = (long long)(d->rows * d->cols * d->channels);
    p.col_tiles = (long long)mh_ceil_div(d->cols, TILE / d->channels);
    p.in_type = (int)d->in_type, p.out_type = (int)d->out_type;
    p.in_bytes = (int)mh_dtype_size(d->in_type), p.out_bytes = (int)mh_dtype_size(d->out_type);
    p.kv = (int)d->vertical.ntaps, p.kh = (int)d->horizontal.ntaps;
    p.av = mh_sepfilter_anchor(&d->vertical), p.ah = mh_sepfilter_anchor(&d->horizontal);
    p.mode_v = (int)d->vertical.mode, p.mode_h = (int)d->horizontal.mode;
    p.cval = (float)d->cval, p.div_v = (float)d->vertical.divisor, p.div_h = (float)d->horizontal.divisor;
    p.order = mh_sepfilter_run_order(a);
    p.dev_u = mh_sepfilter_kernel_taps(&d->vertical, a->vtaps_on_device, p.u);
    p.dev_v = mh_sepfilter_kernel_taps(&d->horizontal, a->htaps_on_device, p.v);
    sep_kernel kernel = pick((int)d->channels, kmax_of(d), device_taps(a));
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    const size_t in_size = mh_dtype_size(d->in_type), out_size = mh_dtype_size(d->out_type);
    return mh_per_grid_slice(d->batch, [&](size_t first, unsigned images) { /* gridDim.z: images */
        p.in = (const char *)a->in + first * (size_t)p.image_values * in_size;
        p.out = (char *)a->out + first * (size_t)p.image_values * out_size;
        const dim3 grid((unsigned)tiles(d), 1, images);
        kernel<<<grid, THREADS, smem_bytes(a), mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "sepfilter_kernel");
    });
}

static const mh_row rows[] = {
    {{"sepfilter/two-pass", MH_OP_SEPFILTER, MH_BACKEND_CUDA, 1, "global", "ours",
      "a thread a value, a launch a pass, the first pass in float32 scratch"},
     mh_supports_any, two_pass_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_SCIPY_SUMS},
    {{"sepfilter/fused", MH_OP_SEPFILTER, MH_BACKEND_CUDA, 10, "global+shared+registers", "ours",
      "both passes in one block through shared memory, read and written in the images' own types"},
     fused_supports, fused_run, NULL, 0},
};

MH_ROW_GROUP(mh_sepfilter_cuda_rows, rows)
#endif

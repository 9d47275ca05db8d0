/* sepfilter/fused64: ours, for the calls computed in float64 (mh_sepfilter_in_double: a float64
 * or 32- or 64-bit integer image on either side), up to 64 taps a pass, the passes in sequence.
 *
 * Both passes of a tile inside one block, as sepfilter/fused runs them in float32: a tile of BH
 * rows x TP pixels (all their channels) and its halo is read once and widened to double in shared
 * memory (each axis extended by its mode), the first pass leaves its values there cast to the
 * output's type (scipy stores its first pass in the output), the second pass sums them, and the
 * block stores its outputs with scipy's casts. Device memory sees the image read once and written
 * once, where two-pass moves a float64 scratch image between two launches and maps a border
 * index and a type for every tap it reads.
 *
 * Each output sums its taps from 0.0 in order with fma, or in scipy's order where the call asks
 * (mh_scipy_sum), divides and casts as two-pass and the CPU row do: the three agree bit for bit.
 * The first pass's values at positions its border mode leaves outside the image are cval, as the
 * second pass of two-pass reads them. A vertical pass sums R = 8 rows of one column from each
 * value it loads (a warp's lanes on neighbouring columns); a horizontal pass R pixels of one row
 * and channel (lanes on neighbouring rows, rows an odd number of doubles apart, so that a half
 * warp's 8-byte loads fall in distinct banks). Both keep their R values in registers that turn as
 * the taps go by (window_sums), so one kernel serves every tap count. Every tile's outputs are
 * staged in shared memory and stored a row at a time by a loop typed for the output. Host taps
 * travel in the kernel's parameters. */
#include "common.cuh"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/scipy_sum.h"
#include "tile_io.cuh"

enum { F64_THREADS = 256, F64_BH = 32, F64_TW = 64, F64_R = 8, F64_MAX_TAPS = 64 };

struct f64_params {
    const void *in;
    void *out;
    long long rows, cols, image_values, col_tiles;
    int channels, tp; /* channels; pixels a tile row outputs, F64_TW / channels */
    int in_type, out_type;
    int kv, kh, av, ah, mode_v, mode_h; /* taps and anchors of each pass; the identity's 1 and 0 */
    int vertical_first, single; /* single: the second pass is the identity, the first one stores */
    int scipy_sums, fold_v, fold_h; /* MH_SEPFILTER_SUMS_SCIPY, each pass's mh_scipy_fold */
    double cval, div_v, div_h;
    double u[F64_MAX_TAPS], v[F64_MAX_TAPS]; /* vertical, horizontal taps */
};

/* Shared memory of a tile, in doubles: the input (th rows of tw values, stride sw) and mid, the
 * first pass's values (mid_rows of mw values, stride ms); strides odd for the horizontal pass. */
struct f64_layout {
    int th, tw, sw;
    int mid_rows, mw, ms;
    int doubles;
};

static inline __host__ __device__ f64_layout layout64(int C, int tp, int kv, int kh, int vertical_first)
{
    f64_layout l;
    l.th = F64_BH + kv - 1;
    l.tw = (tp + kh - 1) * C;
    l.sw = l.tw | 1;
    l.mid_rows = vertical_first ? F64_BH : l.th;
    l.mw = vertical_first ? l.tw : tp * C;
    l.ms = l.mw | 1;
    l.doubles = l.th * l.sw + l.mid_rows * l.ms;
    return l;
}

/* The tile and its halo as doubles: tile[rr][t] holds pixel x0 - ah + t / C, channel t % C, of row
 * y0 - av + rr, each axis extended by its mode (cval where a constant mode reaches). A warp takes
 * 32 neighbouring values of a row at a time, coalesced where the row lies inside the image; each
 * row's source is found once, and the columns are mapped by the mode (and divided into pixel and
 * channel) only in the blocks whose halo crosses the left or right edge: inside, a tile row is
 * one run of the image row. The tile's reads must be in flight together to keep the copy rate (a
 * load and its store to shared memory in turn would wait out each load's latency): float64
 * values are cp.async copies, all of a thread's issued before it waits; other types are read
 * BATCH rows at a time into registers and widened there. */
template <bool MAPPED>
static __device__ __forceinline__ long long tile_column(const f64_params &p, long long left, int t)
{
    if (!MAPPED) return left * p.channels + t;
    const long long px = mh_border_index(left + t / p.channels, p.cols, p.mode_h);
    return px < 0 ? -1 : px * p.channels + t % p.channels;
}

/* Row rr of the tile: its source row in the image (NULL: cval). */
template <typename T>
static __device__ __forceinline__ const T *tile_row(const f64_params &p, const T *in, size_t base, long long y0, int rr)
{
    const long long y = mh_border_index(y0 - p.av + rr, p.rows, p.mode_v);
    return y < 0 ? nullptr : in + base + (size_t)y * (size_t)(p.cols * p.channels);
}

template <bool MAPPED>
static __device__ void load_tile_f64(const f64_params &p, const f64_layout &l, double *tile, size_t base, long long y0,
                                     long long x0)
{
    const long long left = x0 - p.ah;
    for (int rr = threadIdx.x / 32; rr < l.th; rr += F64_THREADS / 32) {
        const double *row = tile_row(p, (const double *)p.in, base, y0, rr);
        for (int t = threadIdx.x % 32; t < l.tw; t += 32) {
            const long long x = tile_column<MAPPED>(p, left, t);
            double *dst = tile + rr * l.sw + t;
            if (!row || x < 0) *dst = p.cval;
            else cp_async8((float2 *)dst, (const float2 *)(row + x));
        }
    }
    cp_async_wait_all();
}

template <typename T, bool MAPPED>
static __device__ void load_tile_as(const f64_params &p, const f64_layout &l, double *tile, size_t base, long long y0,
                                    long long x0)
{
    constexpr int WARPS = F64_THREADS / 32, BATCH = 4;
    const long long left = x0 - p.ah;
    for (int r0 = threadIdx.x / 32; r0 < l.th; r0 += BATCH * WARPS) {
        const T *row[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; ++b)
            row[b] = r0 + b * WARPS < l.th ? tile_row(p, (const T *)p.in, base, y0, r0 + b * WARPS) : nullptr;
        for (int t = threadIdx.x % 32; t < l.tw; t += 32) {
            const long long x = tile_column<MAPPED>(p, left, t);
            T v[BATCH];
#pragma unroll
            for (int b = 0; b < BATCH; ++b)
                if (row[b] && x >= 0) v[b] = row[b][x];
#pragma unroll
            for (int b = 0; b < BATCH; ++b) {
                const int rr = r0 + b * WARPS;
                if (rr < l.th) tile[rr * l.sw + t] = row[b] && x >= 0 ? (double)v[b] : p.cval;
            }
        }
    }
}

/* The tile for one input type, the columns mapped where the halo crosses an edge. */
template <typename T>
static __device__ void load_tile_typed(const f64_params &p, const f64_layout &l, double *tile, size_t base,
                                       long long y0, long long x0)
{
    const long long left = x0 - p.ah;
    const bool inside = left >= 0 && left * p.channels + l.tw <= p.cols * p.channels;
    if (inside) load_tile_as<T, false>(p, l, tile, base, y0, x0);
    else load_tile_as<T, true>(p, l, tile, base, y0, x0);
}

/* The tile for the input's type (each value widened as mh_load_double widens it). */
static __device__ void load_tile64(const f64_params &p, const f64_layout &l, double *tile, size_t base, long long y0,
                                   long long x0)
{
    switch ((mh_dtype)p.in_type) {
    case MH_F64: {
        const long long left = x0 - p.ah;
        if (left >= 0 && left * p.channels + l.tw <= p.cols * p.channels) load_tile_f64<false>(p, l, tile, base, y0, x0);
        else load_tile_f64<true>(p, l, tile, base, y0, x0);
        break;
    }
    case MH_F32: load_tile_typed<float>(p, l, tile, base, y0, x0); break;
    case MH_I64: load_tile_typed<long long>(p, l, tile, base, y0, x0); break;
    case MH_U64: load_tile_typed<unsigned long long>(p, l, tile, base, y0, x0); break;
    case MH_I32: load_tile_typed<int>(p, l, tile, base, y0, x0); break;
    case MH_U32: load_tile_typed<unsigned>(p, l, tile, base, y0, x0); break;
    case MH_I16: load_tile_typed<short>(p, l, tile, base, y0, x0); break;
    case MH_U16: load_tile_typed<unsigned short>(p, l, tile, base, y0, x0); break;
    case MH_I8: load_tile_typed<signed char>(p, l, tile, base, y0, x0); break;
    default: load_tile_typed<unsigned char>(p, l, tile, base, y0, x0); break; /* MH_U8: float16 is not computed in float64 */
    }
}

/* acc[i] = the sum over j < k of taps[j] x(i + j), for each i < F64_R, added from 0.0 in order of
 * j with fma (two-pass's and the CPU row's order), where x(m) = load(m) for m < F64_R + k - 1, each
 * loaded once. The F64_R values in use turn in registers: after tap j, x(j) leaves and x(j + F64_R)
 * takes its register, so the taps are a run-time loop of F64_R-tap steps with every register
 * index known when it compiles (one kernel for every tap count, no tap tested against a bound). */
template <typename Load>
static __device__ __forceinline__ void window_sums(const double *taps, int k, Load load, double (&acc)[F64_R])
{
    double x[F64_R];
#pragma unroll
    for (int i = 0; i < F64_R; ++i) acc[i] = 0.0, x[i] = load(i);
    for (int j = 0; j < k; j += F64_R) {
#pragma unroll
        for (int s = 0; s < F64_R; ++s) {
            if (j + s < k) {
                const double w = taps[j + s];
#pragma unroll
                for (int i = 0; i < F64_R; ++i) acc[i] = fma(x[(i + s) % F64_R], w, acc[i]);
                if (j + s + 1 < k) x[s] = load(j + s + F64_R);
            }
        }
    }
}

/* Down the columns: for each of the first ncols columns of src (stride ss) and each of the F64_BH
 * rows, the sum of kv values from that row down, divided; emit(row, column, value) takes it. */
template <typename Emit>
static __device__ __forceinline__ void vertical_fma(const f64_params &p, const double *src, int ss, int ncols, Emit emit)
{
    const int items = F64_BH / F64_R * ncols;
    for (int item = threadIdx.x; item < items; item += F64_THREADS) {
        const int g = item / ncols, col = item - g * ncols;
        const double *s = src + g * F64_R * ss + col;
        double acc[F64_R];
        window_sums(p.u, p.kv, [&](int m) { return s[m * ss]; }, acc);
#pragma unroll
        for (int i = 0; i < F64_R; ++i) emit(g * F64_R + i, col, p.div_v != 1.0 ? acc[i] / p.div_v : acc[i]);
    }
}

/* Along the rows: for each of the first nrows rows of src (stride ss, width values of it read) and
 * each of the tp pixels of every channel, the sum of kh values from that pixel on, divided;
 * emit(row, value index, value) takes it. */
template <typename Emit>
static __device__ __forceinline__ void horizontal_fma(const f64_params &p, const double *src, int ss, int nrows,
                                                      int width, Emit emit)
{
    const int C = p.channels, strips = (p.tp + F64_R - 1) / F64_R;
    const int items = nrows * C * strips;
    /* a strip of F64_R pixels reads kh - 1 past its last: past the row's width only where tp
     * is not a whole number of strips */
    const bool tested = p.tp % F64_R != 0;
    for (int item = threadIdx.x; item < items; item += F64_THREADS) {
        const int r = item % nrows, rest = item / nrows; /* a warp's lanes on neighbouring rows */
        const int c = rest % C, first = rest / C * F64_R;
        const double *s = src + r * ss + c;
        double acc[F64_R];
        if (tested) /* past the width: only outputs past tp read it */
            window_sums(p.v, p.kh, [&](int m) { return (first + m) * C < width ? s[(first + m) * C] : 0.0; }, acc);
        else
            window_sums(p.v, p.kh, [&](int m) { return s[(first + m) * C]; }, acc);
#pragma unroll
        for (int i = 0; i < F64_R; ++i)
            if (first + i < p.tp) emit(r, (first + i) * C + c, p.div_h != 1.0 ? acc[i] / p.div_h : acc[i]);
    }
}

/* The two passes above in scipy's order (MH_SEPFILTER_SUMS_SCIPY): each output summed from its own
 * taps' values in shared memory (mh_scipy_sum), a warp's lanes on neighbouring columns down the
 * columns, on neighbouring rows along them. */
static __device__ __forceinline__ double divided(double sum, double divisor)
{
    return divisor != 1.0 ? sum / divisor : sum;
}

template <typename Emit>
static __device__ void vertical_scipy(const f64_params &p, const double *src, int ss, int ncols, Emit emit)
{
    for (int item = threadIdx.x; item < F64_BH * ncols; item += F64_THREADS) {
        const int row = item / ncols, col = item - row * ncols;
        emit(row, col, divided(mh_scipy_sum(src + row * ss + col, ss, p.u, p.kv, p.fold_v), p.div_v));
    }
}

template <typename Emit>
static __device__ void horizontal_scipy(const f64_params &p, const double *src, int ss, int nrows, Emit emit)
{
    const int width = p.tp * p.channels;
    for (int item = threadIdx.x; item < nrows * width; item += F64_THREADS) {
        const int r = item % nrows, col = item / nrows;
        emit(r, col, divided(mh_scipy_sum(src + r * ss + col, p.channels, p.v, p.kh, p.fold_h), p.div_h));
    }
}

/* The value a pass leaves in the output's type, read back as float64 (scipy stores its first pass
 * in the output): a float64 output keeps it as it is, without mh_cast_double's switch. */
static __device__ __forceinline__ double as_stored(const f64_params &p, double r)
{
    return p.out_type == MH_F64 ? r : mh_cast_double(r, (mh_dtype)p.out_type);
}

/* The tile's F64_BH rows of tp pixels staged (stride ss) stored with scipy's cast into an output of
 * type OUT, a warp a row, the rows and pixels past the image's edge left out. */
template <int OUT>
static __device__ void store_stage_as(const f64_params &p, const double *stage, int ss, size_t base, long long y0,
                                      long long x0)
{
    const long long left = p.rows - y0, past = p.cols - x0;
    const int rows = left < F64_BH ? (int)left : F64_BH;
    const int width = (past < p.tp ? (int)past : p.tp) * p.channels;
    const size_t row_values = (size_t)(p.cols * p.channels);
    for (int row = threadIdx.x / 32; row < rows; row += F64_THREADS / 32) {
        const size_t at = base + (size_t)(y0 + row) * row_values + (size_t)(x0 * p.channels);
        for (int col = threadIdx.x % 32; col < width; col += 32)
            mh_store_double(p.out, at + (size_t)col, (mh_dtype)OUT, stage[row * ss + col]);
    }
}

/* store_stage_as for the output's type, chosen once a tile. */
static __device__ void store_stage64(const f64_params &p, const double *stage, int ss, size_t base, long long y0,
                                     long long x0)
{
    switch ((mh_dtype)p.out_type) {
    case MH_F64: store_stage_as<MH_F64>(p, stage, ss, base, y0, x0); break;
    case MH_F32: store_stage_as<MH_F32>(p, stage, ss, base, y0, x0); break;
    case MH_I64: store_stage_as<MH_I64>(p, stage, ss, base, y0, x0); break;
    case MH_U64: store_stage_as<MH_U64>(p, stage, ss, base, y0, x0); break;
    case MH_I32: store_stage_as<MH_I32>(p, stage, ss, base, y0, x0); break;
    case MH_U32: store_stage_as<MH_U32>(p, stage, ss, base, y0, x0); break;
    case MH_I16: store_stage_as<MH_I16>(p, stage, ss, base, y0, x0); break;
    case MH_U16: store_stage_as<MH_U16>(p, stage, ss, base, y0, x0); break;
    case MH_I8: store_stage_as<MH_I8>(p, stage, ss, base, y0, x0); break;
    default: store_stage_as<MH_U8>(p, stage, ss, base, y0, x0); break; /* MH_U8: float16 is not computed in float64 */
    }
}

/* A pass in the call's order of additions. */
template <typename Emit>
static __device__ __forceinline__ void vertical_pass(const f64_params &p, const double *src, int ss, int ncols, Emit emit)
{
    if (p.scipy_sums) vertical_scipy(p, src, ss, ncols, emit);
    else vertical_fma(p, src, ss, ncols, emit);
}

template <typename Emit>
static __device__ __forceinline__ void horizontal_pass(const f64_params &p, const double *src, int ss, int nrows,
                                                       int width, Emit emit)
{
    if (p.scipy_sums) horizontal_scipy(p, src, ss, nrows, emit);
    else horizontal_fma(p, src, ss, nrows, width, emit);
}

/* Four blocks an SM, 64 registers a thread: each warp waits on its loads and dependent FMAs far
 * longer than it issues (ncu: ~10 cycles an issued instruction at three blocks), so a fourth
 * block's warps are worth more than the registers; what spills there (a few words) lies off the
 * float64 path, in the integer tiles' widening loads and a constant mode's border test. */
static __global__ void __launch_bounds__(F64_THREADS, 4) fused64_kernel(const __grid_constant__ f64_params p)
{
    extern __shared__ double smem64[];
    const f64_layout l = layout64(p.channels, p.tp, p.kv, p.kh, p.vertical_first);
    double *tile = smem64, *mid = smem64 + l.th * l.sw;
    const size_t base = (size_t)blockIdx.z * (size_t)p.image_values;
    const long long y0 = (long long)(blockIdx.x / p.col_tiles) * F64_BH;
    const long long x0 = (long long)(blockIdx.x % p.col_tiles) * p.tp;
    const int C = p.channels, width = p.tp * C;
    load_tile64(p, l, tile, base, y0, x0);
    __syncthreads();
    /* a first pass's values outside the image are cval, which only a constant mode leaves there */
    if (p.vertical_first) {
        if (p.single) { /* outputs staged in mid (F64_BH rows of width values) */
            vertical_pass(p, tile, l.sw, width, [&](int row, int col, double r) { mid[row * l.ms + col] = r; });
            __syncthreads();
            store_stage64(p, mid, l.ms, base, y0, x0);
            return;
        }
        vertical_pass(p, tile, l.sw, l.tw, [&](int row, int col, double r) {
            const bool outside = p.mode_h == MH_MODE_CONSTANT && mh_border_index(x0 - p.ah + col / C, p.cols, p.mode_h) < 0;
            mid[row * l.ms + col] = outside ? p.cval : as_stored(p, r);
        });
        __syncthreads();
        horizontal_pass(p, mid, l.ms, F64_BH, l.tw, [&](int row, int col, double r) { tile[row * l.ms + col] = r; });
        __syncthreads();
        store_stage64(p, tile, l.ms, base, y0, x0);
        return;
    }
    if (p.single) { /* the tile is F64_BH rows: its outputs staged in mid */
        horizontal_pass(p, tile, l.sw, F64_BH, l.tw, [&](int row, int col, double r) { mid[row * l.ms + col] = r; });
        __syncthreads();
        store_stage64(p, mid, l.ms, base, y0, x0);
        return;
    }
    horizontal_pass(p, tile, l.sw, l.th, l.tw, [&](int row, int col, double r) {
        const bool outside = p.mode_v == MH_MODE_CONSTANT && mh_border_index(y0 - p.av + row, p.rows, p.mode_v) < 0;
        mid[row * l.ms + col] = outside ? p.cval : as_stored(p, r);
    });
    __syncthreads(); /* the tile is read: the outputs are staged in it */
    vertical_pass(p, mid, l.ms, width, [&](int row, int col, double r) { tile[row * l.sw + col] = r; });
    __syncthreads();
    store_stage64(p, tile, l.sw, base, y0, x0);
}

/* ---- launch, registry -------------------------------------------------------------------- */

/* The call's passes as the kernel runs them: the second's axis reduced to its one tap where it is
 * the identity (two-pass runs the first pass alone there). */
static void passes64(const mh_sepfilter_args *a, f64_params *p)
{
    const mh_sepfilter_desc *d = &a->d;
    p->vertical_first = d->order != MH_SEPFILTER_HORIZONTAL_FIRST;
    p->single = mh_sepfilter_second_is_identity(a);
    p->kv = (int)d->vertical.ntaps, p->kh = (int)d->horizontal.ntaps;
    p->av = mh_sepfilter_anchor(&d->vertical), p->ah = mh_sepfilter_anchor(&d->horizontal);
    if (p->single && p->vertical_first) p->kh = 1, p->ah = 0;
    if (p->single && !p->vertical_first) p->kv = 1, p->av = 0;
    p->channels = (int)d->channels, p->tp = F64_TW / p->channels;
}

static size_t smem64_bytes(const f64_params *p)
{
    return (size_t)layout64(p->channels, p->tp, p->kv, p->kh, p->vertical_first).doubles * sizeof(double);
}

static size_t tiles64(const mh_sepfilter_desc *d)
{
    return mh_ceil_div(d->rows, F64_BH) * mh_ceil_div(d->cols, F64_TW / d->channels);
}

static int fused64_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    if (!mh_sepfilter_in_double(d)) {
        snprintf(why, len, "it computes in float64, and %s into %s computes in float32 (fused, walk and lines do)",
                 mh_dtype_name(d->in_type), mh_dtype_name(d->out_type));
        return 0;
    }
    if (d->order == MH_SEPFILTER_SUM) {
        snprintf(why, len, "it runs the passes in sequence, not summed (two-pass sums them)");
        return 0;
    }
    if (!d->vertical.taps64 || !d->horizontal.taps64) { /* device float32 taps, widened as read */
        snprintf(why, len, "it takes float64 taps from the host (two-pass and lines widen device taps)");
        return 0;
    }
    f64_params p = {};
    passes64(a, &p);
    if (p.kv > F64_MAX_TAPS || p.kh > F64_MAX_TAPS) {
        snprintf(why, len, "its register windows take at most %d taps a pass (this call has %d and %d)", F64_MAX_TAPS,
                 p.kv, p.kh);
        return 0;
    }
    if (smem64_bytes(&p) > mh_smem_optin()) {
        snprintf(why, len, "its tile needs %zu bytes of shared memory; this GPU gives a block %zu", smem64_bytes(&p),
                 mh_smem_optin());
        return 0;
    }
    if (tiles64(d) > 0x7fffffff) {
        snprintf(why, len, "%zu tiles an image: more than a grid's 2^31 - 1 blocks", tiles64(d));
        return 0;
    }
    return 1;
}

static mh_status fused64_run(mh_context *ctx, const mh_args *x)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    f64_params p = {};
    passes64(a, &p);
    p.rows = (long long)d->rows, p.cols = (long long)d->cols;
    p.image_values = (long long)(d->rows * d->cols * d->channels);
    p.col_tiles = (long long)mh_ceil_div(d->cols, (size_t)p.tp);
    p.in_type = (int)d->in_type, p.out_type = (int)d->out_type;
    p.mode_v = (int)d->vertical.mode, p.mode_h = (int)d->horizontal.mode;
    p.cval = d->cval, p.div_v = (double)d->vertical.divisor, p.div_h = (double)d->horizontal.divisor;
    mh_sepfilter_kernel_taps64(&d->vertical, p.u); /* host taps64: fused64_supports */
    mh_sepfilter_kernel_taps64(&d->horizontal, p.v);
    p.scipy_sums = d->sums == MH_SEPFILTER_SUMS_SCIPY;
    p.fold_v = mh_scipy_fold(p.u, p.kv), p.fold_h = mh_scipy_fold(p.v, p.kh);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)fused64_kernel));
    const size_t in_size = mh_dtype_size(d->in_type), out_size = mh_dtype_size(d->out_type);
    return mh_per_grid_slice(d->batch, [&](size_t first, unsigned images) { /* gridDim.z: images */
        p.in = (const char *)a->in + first * (size_t)p.image_values * in_size;
        p.out = (char *)a->out + first * (size_t)p.image_values * out_size;
        const dim3 grid((unsigned)tiles64(d), 1, images);
        fused64_kernel<<<grid, F64_THREADS, smem64_bytes(&p), mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "fused64_kernel");
    });
}

static const mh_row rows[] = {
    {{"sepfilter/fused64", MH_OP_SEPFILTER, MH_BACKEND_CUDA, 13, "global+shared+registers", "ours",
      "a call computed in float64: both passes in one block through shared memory, in double"},
     fused64_supports, fused64_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_SCIPY_SUMS},
};

MH_ROW_GROUP(mh_sepfilter_fused64_rows, rows)

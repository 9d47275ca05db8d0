/* sepfilter/tiles: ours, for float32 images of one channel filtered over both axes, one pass
 * after the other in either order (memhier.ndimage's float32 gray gaussian_filter,
 * uniform_filter, sobel and prewitt), with the same count of taps on both axes, 2 to 33,
 * compiled in.
 *
 * A block owns a tile of TILES_ROWS x TILES_COLS outputs of one image. It stages the tile's
 * input with its halo (the rows and columns its windows reach, mapped by each axis's mode as
 * they are copied: cval where the constant mode reaches) in shared memory, converted once; runs
 * the first pass over every staged value it needs into a second shared buffer, then the second
 * pass from there into the outputs. The vertical pass first: every staged column, 4 columns x 8
 * rows an item (the window's rows read as 16-byte groups), the columns past the image's edges in
 * the constant mode cval, as scipy extends the first pass's result; then 8 neighbouring outputs
 * of a row an item, from a register window read as 16-byte groups, stored as two 16-byte stores.
 * The horizontal pass first: every staged row, 8 values an item, the rows past the edges in the
 * constant mode cval; then 4 columns x 8 rows an item, stored a 16-byte group a row. One launch,
 * the image read once from device memory (the halo a second time from L2) and written once.
 *
 * The taps' count is a template parameter, so both passes' loops unroll whole: each tap a
 * constant operand of its multiply-adds (the taps travel by value in the kernel's parameters), no
 * compare and no branch for a count known only at run time. A staged row's first column lies on
 * 16 bytes (image column x0 - ah - PAD, PAD = (4 - ah mod 4) mod 4), which the horizontal window
 * indexes with PAD compiled in: the row takes horizontal anchors of K / 2 mod 4 (origins that
 * are multiples of 4, 0 among them).
 *
 * Each output sums its taps from 0.0f in tap order with fmaf, divides each pass's sum where its
 * divisor is not 1 and applies cval between the passes exactly as the CPU row, walk and fused do:
 * the rows agree bit for bit. */
#include "common.cuh"
#include "../core/border.h"

enum { TILES_THREADS = 256, TILES_ROWS = 32, TILES_COLS = 128, TILES_MIN_TAPS = 2, TILES_MAX_TAPS = 33 };

struct tiles_params {
    const float *in;
    float *out;
    long long rows, cols, image_values;
    int av, ah; /* anchors (ntaps / 2 + origin) */
    int mode_v, mode_h;
    int vec; /* every row of the image starts on 16 bytes: whole groups of 4 columns load at once */
    float cval, div_v, div_h;
    float u[TILES_MAX_TAPS], v[TILES_MAX_TAPS]; /* vertical, horizontal taps */
};

/* Shared memory of a tile of K taps a pass: ROWS staged rows of STRIDE floats (PAD, the tile's
 * columns and the halo, rounded up to 16 bytes; the horizontal windows' last 16-byte groups read
 * past the halo, never summed), then the first pass's values: the vertical pass first, TILES_ROWS
 * rows of STRIDE floats (every staged column); the horizontal first, ROWS rows of MID_STRIDE (the
 * tile's columns). */
template <int K, bool HFIRST>
struct tiles_shape {
    static constexpr int H = K / 2;
    static constexpr int PAD = (4 - H % 4) % 4;
    static constexpr int ROWS = TILES_ROWS + K - 1;
    static constexpr int GROUPS = (PAD + TILES_COLS + K - 1 + 3) / 4; /* a staged row's 16-byte groups */
    static constexpr int LOADS = (PAD + 8 + K - 1 + 3) / 4;          /* the groups a horizontal item reads */
    static constexpr int STRIDE = 4 * GROUPS + 4;
    static constexpr int MID_STRIDE = HFIRST ? TILES_COLS + 4 : STRIDE;
    static constexpr int IN_FLOATS = ROWS * STRIDE, MID_FLOATS = (HFIRST ? ROWS : TILES_ROWS) * MID_STRIDE;
    static constexpr size_t BYTES = (size_t)(IN_FLOATS + MID_FLOATS) * sizeof(float);
    static_assert(TILES_COLS - 8 + 4 * LOADS <= STRIDE, "the last horizontal item's window inside its row");
    static_assert(TILES_ROWS % 8 == 0 && TILES_COLS % 8 == 0, "items of 8 rows and of 8 columns");
};

/* Staged row r (image row y0 - av + r, mapped by the vertical mode) and its columns from x (on 16
 * bytes), converted to float: 16-byte loads where the group lies inside an image whose rows start
 * on 16 bytes, else a column at a time mapped by the horizontal mode. */
template <int K, bool HFIRST>
static __device__ __forceinline__ void stage(const tiles_params &p, const float *img, float *in_s, long long y0,
                                             long long x, int tid)
{
    using S = tiles_shape<K, HFIRST>;
    for (int e = tid; e < S::ROWS * S::GROUPS; e += TILES_THREADS) {
        const int r = e / S::GROUPS, g = e - r * S::GROUPS;
        const long long y = mh_border_index(y0 - p.av + r, p.rows, p.mode_v);
        const long long c = x + 4 * g;
        float4 f;
        if (y >= 0 && p.vec && c >= 0 && c + 4 <= p.cols) {
            f = __ldg(reinterpret_cast<const float4 *>(img + y * p.cols + c));
        } else {
            float w[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const long long m = mh_border_index(c + q, p.cols, p.mode_h);
                w[q] = y >= 0 && m >= 0 ? __ldg(img + y * p.cols + m) : p.cval;
            }
            f = make_float4(w[0], w[1], w[2], w[3]);
        }
        *reinterpret_cast<float4 *>(in_s + r * S::STRIDE + 4 * g) = f;
    }
}

/* acc[o][q] = sum_i src[(o + i) * stride + q] u[i]: 8 rows x 4 columns of a vertical pass from
 * rows of `stride` floats (col on 16 bytes), divided as a pass is. */
template <int K>
static __device__ __forceinline__ void vertical_sums(const tiles_params &p, const float *col, int stride,
                                                     float (&acc)[8][4])
{
#pragma unroll
    for (int o = 0; o < 8; ++o)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[o][q] = 0.0f;
#pragma unroll
    for (int r = 0; r < 8 + K - 1; ++r) {
        const float4 f = *reinterpret_cast<const float4 *>(col + r * stride);
#pragma unroll
        for (int o = 0; o < 8; ++o) {
            const int i = r - o;
            if (i < 0 || i >= K) continue;
            acc[o][0] = fmaf(f.x, p.u[i], acc[o][0]);
            acc[o][1] = fmaf(f.y, p.u[i], acc[o][1]);
            acc[o][2] = fmaf(f.z, p.u[i], acc[o][2]);
            acc[o][3] = fmaf(f.w, p.u[i], acc[o][3]);
        }
    }
    if (p.div_v != 1.0f)
#pragma unroll
        for (int o = 0; o < 8; ++o)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[o][q] = acc[o][q] / p.div_v;
}

/* o[e] = sum_j row[PAD + e + j] v[j]: 8 neighbouring outputs of a horizontal pass from a staged
 * row (row on 16 bytes), divided as a pass is. The window's every 16-byte group is read, so that
 * no load waits on a compare. */
template <int K, bool HFIRST>
static __device__ __forceinline__ void horizontal_sums(const tiles_params &p, const float *row, float (&o)[8])
{
    using S = tiles_shape<K, HFIRST>;
    float w[4 * S::LOADS];
#pragma unroll
    for (int m = 0; m < S::LOADS; ++m) {
        const float4 f = reinterpret_cast<const float4 *>(row)[m];
        w[4 * m] = f.x, w[4 * m + 1] = f.y, w[4 * m + 2] = f.z, w[4 * m + 3] = f.w;
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) o[e] = 0.0f;
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
        for (int e = 0; e < 8; ++e) o[e] = fmaf(w[S::PAD + e + j], p.v[j], o[e]);
    if (p.div_h != 1.0f)
#pragma unroll
        for (int e = 0; e < 8; ++e) o[e] = o[e] / p.div_h;
}

/* n values of an output row from x on: two 16-byte stores where all 8 (or one where 4) lie inside
 * the row on 16 bytes, else one at a time. */
template <int N>
static __device__ __forceinline__ void store_outputs(const tiles_params &p, float *dst, long long x, const float *o)
{
    if (x + N <= p.cols && mh_aligned16(dst)) {
#pragma unroll
        for (int e = 0; e < N; e += 4)
            __stcs(reinterpret_cast<float4 *>(dst + e), make_float4(o[e], o[e + 1], o[e + 2], o[e + 3]));
        return;
    }
    for (int e = 0; e < N && x + e < p.cols; ++e) dst[e] = o[e];
}

/* The vertical pass first: every staged column, 4 columns x 8 rows an item, into mid (cval in the
 * columns the horizontal mode leaves to the constant); then the horizontal pass from mid, 8
 * neighbouring outputs an item, into the image's rows y0 on (rows_here of them) and columns x0
 * on. */
template <int K>
static __device__ __forceinline__ void vertical_first(const tiles_params &p, const float *in_s, float *mid_s,
                                                      float *out, long long y0, long long x0, long long x,
                                                      int rows_here, int tid)
{
    using S = tiles_shape<K, false>;
    for (int it = tid; it < S::GROUPS * (TILES_ROWS / 8); it += TILES_THREADS) {
        const int g = it % S::GROUPS, oy = (it / S::GROUPS) * 8;
        float acc[8][4];
        vertical_sums<K>(p, in_s + oy * S::STRIDE + 4 * g, S::STRIDE, acc);
        const long long c = x + 4 * g;
        if (c < 0 || c + 4 > p.cols) /* only the halo's groups past the edges take the mode's test */
#pragma unroll
            for (int q = 0; q < 4; ++q)
                if (mh_border_index(c + q, p.cols, p.mode_h) < 0)
#pragma unroll
                    for (int o = 0; o < 8; ++o) acc[o][q] = p.cval;
#pragma unroll
        for (int o = 0; o < 8; ++o)
            *reinterpret_cast<float4 *>(mid_s + (oy + o) * S::STRIDE + 4 * g) =
                make_float4(acc[o][0], acc[o][1], acc[o][2], acc[o][3]);
    }
    __syncthreads();
    constexpr int PER_ROW = TILES_COLS / 8;
    for (int it = tid; it < TILES_ROWS * PER_ROW; it += TILES_THREADS) {
        const int r = it / PER_ROW, c = (it - r * PER_ROW) * 8;
        if (r >= rows_here || x0 + c >= p.cols) continue;
        float o[8];
        horizontal_sums<K, false>(p, mid_s + r * S::STRIDE + c, o);
        store_outputs<8>(p, out + (y0 + r) * p.cols + x0 + c, x0 + c, o);
    }
}

/* The horizontal pass first: every staged row, 8 neighbouring values an item, into mid (cval in
 * the rows the vertical mode leaves to the constant); then the vertical pass from mid, 4 columns x
 * 8 rows an item, into the image's rows y0 on (rows_here of them) and columns x0 on. */
template <int K>
static __device__ __forceinline__ void horizontal_first(const tiles_params &p, const float *in_s, float *mid_s,
                                                        float *out, long long y0, long long x0, int rows_here, int tid)
{
    using S = tiles_shape<K, true>;
    constexpr int PER_ROW = TILES_COLS / 8;
    for (int it = tid; it < S::ROWS * PER_ROW; it += TILES_THREADS) {
        const int r = it / PER_ROW, c = (it - r * PER_ROW) * 8;
        float o[8];
        horizontal_sums<K, true>(p, in_s + r * S::STRIDE + c, o);
        if (mh_border_index(y0 - p.av + r, p.rows, p.mode_v) < 0)
#pragma unroll
            for (int e = 0; e < 8; ++e) o[e] = p.cval;
#pragma unroll
        for (int e = 0; e < 8; e += 4)
            *reinterpret_cast<float4 *>(mid_s + r * S::MID_STRIDE + c + e) =
                make_float4(o[e], o[e + 1], o[e + 2], o[e + 3]);
    }
    __syncthreads();
    constexpr int GROUPS = TILES_COLS / 4;
    for (int it = tid; it < GROUPS * (TILES_ROWS / 8); it += TILES_THREADS) {
        const int g = it % GROUPS, oy = (it / GROUPS) * 8;
        if (oy >= rows_here || x0 + 4 * g >= p.cols) continue;
        float acc[8][4];
        vertical_sums<K>(p, mid_s + oy * S::MID_STRIDE + 4 * g, S::MID_STRIDE, acc);
#pragma unroll
        for (int o = 0; o < 8; ++o)
            if (oy + o < rows_here) store_outputs<4>(p, out + (y0 + oy + o) * p.cols + x0 + 4 * g, x0 + 4 * g, acc[o]);
    }
}

/* HFIRST: the horizontal pass first (scipy's order for axes (1, 0), and sobel's and prewitt's
 * along the rows), else the vertical. */
template <int K, bool HFIRST>
static __global__ void __launch_bounds__(TILES_THREADS) tiles_kernel(const __grid_constant__ tiles_params p)
{
    using S = tiles_shape<K, HFIRST>;
    extern __shared__ __align__(16) float smem[];
    float *in_s = smem, *mid_s = smem + S::IN_FLOATS;
    const size_t image = (size_t)blockIdx.z * (size_t)p.image_values;
    const long long y0 = (long long)blockIdx.y * TILES_ROWS, x0 = (long long)blockIdx.x * TILES_COLS;
    const long long x = x0 - p.ah - S::PAD; /* staged column 0's image column, on 16 bytes */
    const int rows_here = p.rows - y0 < TILES_ROWS ? (int)(p.rows - y0) : TILES_ROWS;
    stage<K, HFIRST>(p, p.in + image, in_s, y0, x, threadIdx.x);
    __syncthreads();
    if (HFIRST)
        horizontal_first<K>(p, in_s, mid_s, p.out + image, y0, x0, rows_here, threadIdx.x);
    else
        vertical_first<K>(p, in_s, mid_s, p.out + image, y0, x0, x, rows_here, threadIdx.x);
}

/* ---- launch, registry -------------------------------------------------------------------- */

typedef void (*tiles_fn)(const tiles_params);

/* The kernel for k taps a pass, from K up, in the order HFIRST says. The horizontal-first
 * instances are built in a translation unit of their own (sepfilter_tiles_hfirst.cu includes this
 * file with MH_SEPFILTER_TILES_HFIRST_UNIT set), so that neither compile is long. */
template <int K, bool HFIRST>
static tiles_fn kernel_from(int k, size_t *smem)
{
    if constexpr (K > TILES_MAX_TAPS) {
        return NULL;
    } else {
        if (k != K) return kernel_from<K + 1, HFIRST>(k, smem);
        *smem = tiles_shape<K, HFIRST>::BYTES;
        return tiles_kernel<K, HFIRST>;
    }
}

tiles_fn mh_sepfilter_tiles_hfirst_kernel(int k, size_t *smem);
#ifdef MH_SEPFILTER_TILES_HFIRST_UNIT
tiles_fn mh_sepfilter_tiles_hfirst_kernel(int k, size_t *smem) { return kernel_from<TILES_MIN_TAPS, true>(k, smem); }
#else

static int tiles_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    if (!mh_sepfilter_float32_gray(d, why, len)) return 0;
    const int order = mh_sepfilter_run_order(a);
    if (order != MH_SEPFILTER_VERTICAL_FIRST && order != MH_SEPFILTER_HORIZONTAL_FIRST) {
        snprintf(why, len, "it runs two passes one after the other (this call: %s)",
                 order == MH_SEPFILTER_SUM ? "summed passes" : "one axis's pass alone");
        return 0;
    }
    const size_t k = d->vertical.ntaps;
    if (k != d->horizontal.ntaps || k < TILES_MIN_TAPS || k > TILES_MAX_TAPS) {
        snprintf(why, len, "its passes have one count of taps, %d to %d, compiled in (this call: %zu and %zu)",
                 (int)TILES_MIN_TAPS, (int)TILES_MAX_TAPS, k, d->horizontal.ntaps);
        return 0;
    }
    if (a->vtaps_on_device || a->htaps_on_device) {
        snprintf(why, len, "its taps travel in the kernel's parameters: host taps (this call's are on the device)");
        return 0;
    }
    if (d->horizontal.origin % 4 != 0) {
        snprintf(why, len,
                 "a staged row starts on 16 bytes: horizontal origins that are multiples of 4 (this call: %lld)",
                 (long long)d->horizontal.origin);
        return 0;
    }
    if (mh_ceil_div(d->cols, TILES_COLS) > 0x7fffffff || mh_ceil_div(d->rows, TILES_ROWS) > 65535) {
        snprintf(why, len, "%zu x %zu: more than a grid's 2^31 - 1 x 65535 tiles of %d x %d", d->rows, d->cols,
                 (int)TILES_ROWS, (int)TILES_COLS);
        return 0;
    }
    return 1;
}

static mh_status tiles_run(mh_context *ctx, const mh_args *x)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    tiles_params p = {};
    p.rows = (long long)d->rows, p.cols = (long long)d->cols, p.image_values = p.rows * p.cols;
    p.av = mh_sepfilter_anchor(&d->vertical), p.ah = mh_sepfilter_anchor(&d->horizontal);
    p.mode_v = (int)d->vertical.mode, p.mode_h = (int)d->horizontal.mode;
    p.vec = (uintptr_t)a->in % 16 == 0 && d->cols % 4 == 0;
    p.cval = (float)d->cval, p.div_v = (float)d->vertical.divisor, p.div_h = (float)d->horizontal.divisor;
    mh_sepfilter_kernel_taps(&d->vertical, 0, p.u);
    mh_sepfilter_kernel_taps(&d->horizontal, 0, p.v);
    size_t smem = 0;
    const int k = (int)d->vertical.ntaps;
    const tiles_fn kernel = mh_sepfilter_run_order(a) == MH_SEPFILTER_HORIZONTAL_FIRST
                                ? mh_sepfilter_tiles_hfirst_kernel(k, &smem)
                                : kernel_from<TILES_MIN_TAPS, false>(k, &smem);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    return mh_per_grid_slice(d->batch, [&](size_t first, unsigned images) { /* gridDim.z: images */
        tiles_params q = p;
        q.in = (const float *)a->in + first * (size_t)p.image_values;
        q.out = (float *)a->out + first * (size_t)p.image_values;
        const dim3 grid((unsigned)mh_ceil_div(d->cols, TILES_COLS), (unsigned)mh_ceil_div(d->rows, TILES_ROWS), images);
        kernel<<<grid, TILES_THREADS, smem, mh_stream(ctx)>>>(q);
        return MH_LAUNCH_CHECK(ctx, "sepfilter tiles_kernel");
    });
}

static const mh_row rows[] = {
    {{"sepfilter/tiles", MH_OP_SEPFILTER, MH_BACKEND_CUDA, 14, "global+shared+registers", "ours",
      "float32 gray: a block stages a 32 x 128 tile and its halo, both passes from shared memory, the taps' count "
      "compiled in"},
     tiles_supports, tiles_run, NULL, 0, MH_LIB_NONE, NULL, 0},
};

MH_ROW_GROUP(mh_sepfilter_tiles_rows, rows)
#endif

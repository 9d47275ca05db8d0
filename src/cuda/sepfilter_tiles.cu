/* sepfilter/tiles: ours, for float32 images of one channel filtered over both axes, the vertical
 * pass first (memhier.ndimage's float32 gray gaussian_filter, uniform_filter, sobel and prewitt),
 * with the same count of taps on both axes, 2 to 33, compiled in.
 *
 * A block owns a tile of TILES_ROWS x TILES_COLS outputs of one image. It stages the tile's
 * input with its halo (the rows and columns its windows reach, mapped by each axis's mode as
 * they are copied: cval where the constant mode reaches) in shared memory, converted once; runs
 * the vertical pass over every staged column into a second shared buffer (4 columns x 8 rows an
 * item, the window's rows read as 16-byte groups), whose columns past the image's edges in the
 * constant mode are cval, as scipy extends the first pass's result; then the horizontal pass from
 * there (8 neighbouring outputs an item from a register window read as 16-byte groups), stored
 * as two 16-byte stores. One launch, the image read once from device memory (the halo columns a
 * second time from L2) and written once.
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

/* Shared memory of a tile of K taps a pass: ROWS staged rows, then the vertical pass's TILES_ROWS
 * rows, each STRIDE floats (PAD, the tile's columns and the halo, rounded up to 16 bytes; the
 * horizontal windows' last 16-byte groups read past the halo, never summed). */
template <int K>
struct tiles_shape {
    static constexpr int H = K / 2;
    static constexpr int PAD = (4 - H % 4) % 4;
    static constexpr int ROWS = TILES_ROWS + K - 1;
    static constexpr int GROUPS = (PAD + TILES_COLS + K - 1 + 3) / 4; /* a staged row's 16-byte groups */
    static constexpr int LOADS = (PAD + 8 + K - 1 + 3) / 4;          /* the groups a horizontal item reads */
    static constexpr int STRIDE = 4 * GROUPS + 4;
    static constexpr int IN_FLOATS = ROWS * STRIDE, MID_FLOATS = TILES_ROWS * STRIDE;
    static constexpr size_t BYTES = (size_t)(IN_FLOATS + MID_FLOATS) * sizeof(float);
    static_assert(TILES_COLS - 8 + 4 * LOADS <= STRIDE, "the last horizontal item's window inside its row");
    static_assert(TILES_ROWS % 8 == 0 && TILES_COLS % 8 == 0, "items of 8 rows and of 8 columns");
};

/* Staged row r (image row y0 - av + r, mapped by the vertical mode) and its columns from x (on 16
 * bytes), converted to float: 16-byte loads where the group lies inside an image whose rows start
 * on 16 bytes, else a column at a time mapped by the horizontal mode. */
template <int K>
static __device__ __forceinline__ void stage(const tiles_params &p, const float *img, float *in_s, long long y0,
                                             long long x, int tid)
{
    using S = tiles_shape<K>;
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

/* The vertical pass over every staged column, 4 columns x 8 rows an item, into mid (divided as a
 * pass is; cval in the columns the horizontal mode leaves to the constant). */
template <int K>
static __device__ __forceinline__ void vertical_pass(const tiles_params &p, const float *in_s, float *mid_s,
                                                     long long x, int tid)
{
    using S = tiles_shape<K>;
    constexpr int ITEMS = S::GROUPS * (TILES_ROWS / 8);
    for (int it = tid; it < ITEMS; it += TILES_THREADS) {
        const int g = it % S::GROUPS, oy = (it / S::GROUPS) * 8;
        float acc[8][4];
#pragma unroll
        for (int o = 0; o < 8; ++o)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[o][q] = 0.0f;
#pragma unroll
        for (int r = 0; r < 8 + K - 1; ++r) {
            const float4 f = *reinterpret_cast<const float4 *>(in_s + (oy + r) * S::STRIDE + 4 * g);
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
}

/* The horizontal pass from mid, 8 neighbouring outputs of a row an item, into the image's rows
 * y0 on (of which rows_here exist) and columns x0 on. */
template <int K>
static __device__ __forceinline__ void horizontal_pass(const tiles_params &p, const float *mid_s, float *out,
                                                       long long y0, long long x0, int rows_here, int tid)
{
    using S = tiles_shape<K>;
    constexpr int PER_ROW = TILES_COLS / 8;
    for (int it = tid; it < TILES_ROWS * PER_ROW; it += TILES_THREADS) {
        const int r = it / PER_ROW, c = (it - r * PER_ROW) * 8;
        if (r >= rows_here || x0 + c >= p.cols) continue;
        const float4 *src = reinterpret_cast<const float4 *>(mid_s + r * S::STRIDE + c);
        float w[4 * S::LOADS];
#pragma unroll
        for (int m = 0; m < S::LOADS; ++m) {
            const float4 f = src[m];
            w[4 * m] = f.x, w[4 * m + 1] = f.y, w[4 * m + 2] = f.z, w[4 * m + 3] = f.w;
        }
        float o[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) o[e] = 0.0f;
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int e = 0; e < 8; ++e) o[e] = fmaf(w[S::PAD + e + j], p.v[j], o[e]);
        if (p.div_h != 1.0f)
#pragma unroll
            for (int e = 0; e < 8; ++e) o[e] = o[e] / p.div_h;
        const long long x = x0 + c;
        float *dst = out + (y0 + r) * p.cols + x;
        if (x + 8 <= p.cols && mh_aligned16(dst)) {
            __stcs(reinterpret_cast<float4 *>(dst), make_float4(o[0], o[1], o[2], o[3]));
            __stcs(reinterpret_cast<float4 *>(dst) + 1, make_float4(o[4], o[5], o[6], o[7]));
            continue;
        }
        for (int e = 0; e < 8 && x + e < p.cols; ++e) dst[e] = o[e];
    }
}

template <int K>
static __global__ void __launch_bounds__(TILES_THREADS) tiles_kernel(const __grid_constant__ tiles_params p)
{
    using S = tiles_shape<K>;
    extern __shared__ __align__(16) float smem[];
    float *in_s = smem, *mid_s = smem + S::IN_FLOATS;
    const size_t image = (size_t)blockIdx.z * (size_t)p.image_values;
    const long long y0 = (long long)blockIdx.y * TILES_ROWS, x0 = (long long)blockIdx.x * TILES_COLS;
    const long long x = x0 - p.ah - S::PAD; /* staged column 0's image column, on 16 bytes */
    const int rows_here = p.rows - y0 < TILES_ROWS ? (int)(p.rows - y0) : TILES_ROWS;
    stage<K>(p, p.in + image, in_s, y0, x, threadIdx.x);
    __syncthreads();
    vertical_pass<K>(p, in_s, mid_s, x, threadIdx.x);
    __syncthreads();
    horizontal_pass<K>(p, mid_s, p.out + image, y0, x0, rows_here, threadIdx.x);
}

/* ---- launch, registry -------------------------------------------------------------------- */

typedef void (*tiles_fn)(const tiles_params);

template <int K>
static tiles_fn kernel_from(int k, size_t *smem)
{
    if constexpr (K > TILES_MAX_TAPS) {
        return NULL;
    } else {
        if (k != K) return kernel_from<K + 1>(k, smem);
        *smem = tiles_shape<K>::BYTES;
        return tiles_kernel<K>;
    }
}

static int tiles_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_sepfilter_args *a = &x->sepfilter;
    const mh_sepfilter_desc *d = &a->d;
    if (d->in_type != MH_F32 || d->out_type != MH_F32 || d->channels != 1) {
        snprintf(why, len,
                 "it filters float32 images of one channel into float32 (this call: %s, %zu channels, into %s)",
                 mh_dtype_name(d->in_type), d->channels, mh_dtype_name(d->out_type));
        return 0;
    }
    if (mh_sepfilter_run_order(a) != MH_SEPFILTER_VERTICAL_FIRST) {
        snprintf(why, len, "it runs two passes, the vertical first (this call: %s)",
                 d->order != MH_SEPFILTER_VERTICAL_FIRST ? "another order" : "one axis's pass alone");
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
    const tiles_fn kernel = kernel_from<TILES_MIN_TAPS>((int)d->vertical.ntaps, &smem);
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
      "float32 gray, vertical first: a block stages a 32 x 128 tile and its halo, both passes from shared memory, "
      "the taps' count compiled in"},
     tiles_supports, tiles_run, NULL, 0, MH_LIB_NONE, NULL, 0},
};

MH_ROW_GROUP(mh_sepfilter_tiles_rows, rows)

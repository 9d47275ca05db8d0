/* conv2d/walk: ours, for 3 x 3 and 5 x 5 filters, where conv2d is a copy with a little
 * arithmetic and every byte of staging costs.
 *
 * regtile and stream stage the input in shared memory and wait on barriers; at K = 3 both
 * stop near 89% of the copy ceiling. Here there is no shared memory and no barrier: each
 * thread owns 4 adjacent output columns of a strip of R rows. It loads the float4 of input
 * under those columns for every input row the strip needs (R + K - 1 of them, all issued
 * before the first is used, so a warp has R + K - 1 16-byte loads in flight), takes the
 * up to 4 columns on either side from its neighbouring lanes by shuffle (lanes 0 and 31
 * load theirs), and stores each output row as one float4: a warp reads and writes whole
 * 512-byte runs of a row. The halo rows are read again by the strip below: (K - 1) / R more
 * L2 reads, from L2.
 *
 * K and the column anchor LPC are compile-time, so every window index folds into a
 * register; the row anchor stays a run-time offset.
 *
 * Boundary modes (mh_conv2d_mode) run in a second instance of each kernel (BORDERED), so that
 * the zero-padded one keeps its code: one kernel checking a flag slowed zero-padded 3 x 3 from
 * 0.185 to 0.244 ms on the H100, and mapping with the general border function (a division
 * past one reflection) took the bordered one to 0.34. A window reaches at most 4 pixels past
 * an edge, so on images of at least 5 x 5 one reflection or period is all the mapping there is
 * (walk_border); smaller images go to regtile. Bordered instances exist for 3 x 3 (every
 * origin); a bordered 5 x 5 goes to regtile. */
#include "common.cuh"

#include <stdio.h>

enum { WARPS = 4, LANES = 32, BLOCK_COLS = WARPS * LANES * 4 };

struct walk_params {
    const float *in, *filter;
    float *out;
    size_t rows, cols, out_rows, out_cols;
    int lpr;
    int vec_in, vec_out; /* rows of in / out start 16-byte aligned: float4 accesses allowed */
    int mode;            /* BORDERED instances: the boundary mode and its constant */
    float cval;
};

/* The index position i of an axis of n >= 5 reads under a boundary mode, for i within 4 of the
 * axis (one reflection or period); -1 for the constant, and for positions farther out (loads
 * for outputs past the image's last column or row, which are never stored). */
static __device__ __forceinline__ long long walk_border(long long i, long long n, int mode)
{
    if (i >= 0 && i < n) return i;
    if (i < -4 || i >= n + 4) return -1;
    switch (mode) {
    case MH_MODE_REFLECT: return i < 0 ? -1 - i : 2 * n - 1 - i;
    case MH_MODE_MIRROR: return i < 0 ? -i : 2 * n - 2 - i;
    case MH_MODE_NEAREST: return i < 0 ? 0 : n - 1;
    case MH_MODE_WRAP: return i < 0 ? i + n : i - n;
    default: return -1;
    }
}

/* in[y][x .. x + 3] with the image extended by the mode; x is a multiple of 4. */
static __device__ __forceinline__ float4 load4_bordered(const walk_params &p, long long y, long long x)
{
    const long long yy = walk_border(y, (long long)p.rows, p.mode);
    if (yy < 0) return make_float4(p.cval, p.cval, p.cval, p.cval);
    const float *row = p.in + (size_t)yy * p.cols;
    if (p.vec_in && x >= 0 && x + 4 <= (long long)p.cols) return __ldg(reinterpret_cast<const float4 *>(row + x));
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const long long xx = walk_border(x + e, (long long)p.cols, p.mode);
        v[e] = xx >= 0 ? __ldg(row + xx) : p.cval;
    }
    return make_float4(v[0], v[1], v[2], v[3]);
}

/* in[y][x .. x + 3], zero outside the image (BORDERED: extended by the mode); x is a multiple
 * of 4. */
template <bool BORDERED>
static __device__ __forceinline__ float4 load4(const walk_params &p, long long y, long long x)
{
    if (BORDERED) return load4_bordered(p, y, x);
    if (y < 0 || y >= (long long)p.rows || x + 4 <= 0 || x >= (long long)p.cols) return make_float4(0.f, 0.f, 0.f, 0.f);
    const float *src = p.in + (size_t)y * p.cols + x;
    if (p.vec_in && x >= 0 && x + 4 <= (long long)p.cols) return __ldg(reinterpret_cast<const float4 *>(src));
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = x + e >= 0 && x + e < (long long)p.cols ? __ldg(src + e) : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

static __device__ __forceinline__ void store4(const walk_params &p, size_t y, size_t x, const float *v)
{
    float *dst = p.out + y * p.out_cols + x;
    if (p.vec_out && x + 4 <= p.out_cols) {
        /* __stcs (streaming: the output is not read again here): a plain float4 assignment
         * was merged with the element-wise stores below into four 4-byte stores */
        __stcs(reinterpret_cast<float4 *>(dst), make_float4(v[0], v[1], v[2], v[3]));
        return;
    }
#pragma unroll
    for (int e = 0; e < 4; ++e)
        if (x + e < p.out_cols) dst[e] = v[e];
}

static __device__ __forceinline__ float4 shfl4(float4 v, int src_lane)
{
    v.x = __shfl_sync(0xffffffffu, v.x, src_lane), v.y = __shfl_sync(0xffffffffu, v.y, src_lane);
    v.z = __shfl_sync(0xffffffffu, v.z, src_lane), v.w = __shfl_sync(0xffffffffu, v.w, src_lane);
    return v;
}

/* Input columns x0 - 4 .. x0 + 7 of one row: the left neighbour's float4, ours, the right's. */
struct window12 {
    float v[12];
};

template <bool BORDERED>
static __device__ __forceinline__ window12 widen(const walk_params &p, float4 mine, long long y, long long x0, int lane,
                                                 bool need_left, bool need_right)
{
    float4 left = shfl4(mine, (lane + LANES - 1) % LANES), right = shfl4(mine, (lane + 1) % LANES);
    if (need_left && lane == 0) left = load4<BORDERED>(p, y, x0 - 4);
    if (need_right && lane == LANES - 1) right = load4<BORDERED>(p, y, x0 + 4);
    window12 w = {{left.x, left.y, left.z, left.w, mine.x, mine.y, mine.z, mine.w, right.x, right.y, right.z, right.w}};
    return w;
}

template <int K, int LPC, int R, bool BORDERED>
static __global__ void __launch_bounds__(WARPS *LANES) conv2d_walk_kernel(const walk_params p)
{
    static_assert(LPC <= 4 && K - 1 - LPC <= 4, "the window reaches one float4 to each side");
    constexpr int NR = R + K - 1;
    const int lane = threadIdx.x % LANES, warp = threadIdx.x / LANES;
    const size_t ox = ((size_t)blockIdx.x * WARPS + warp) * (LANES * 4) + 4 * lane; /* first output column */
    const size_t oy0 = (size_t)blockIdx.y * R;
    const long long y0 = (long long)oy0 - p.lpr; /* the first input row */
    const long long x0 = (long long)ox;          /* input column of window index 4 (LPC folded below) */

    float4 raw[NR];
#pragma unroll
    for (int t = 0; t < NR; ++t) raw[t] = load4<BORDERED>(p, y0 + t, x0);

    float f[K * K];
#pragma unroll
    for (int t = 0; t < K * K; ++t) f[t] = __ldg(p.filter + t);

    window12 w[NR];
#pragma unroll
    for (int t = 0; t < NR; ++t) w[t] = widen<BORDERED>(p, raw[t], y0 + t, x0, lane, LPC > 0, K - 1 - LPC > 0);

#pragma unroll
    for (int r = 0; r < R; ++r) {
        if (oy0 + r >= p.out_rows || ox >= p.out_cols) break;
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int i = 0; i < K; ++i)
#pragma unroll
            for (int j = 0; j < K; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[q] = fmaf(w[r + i].v[4 + q - LPC + j], f[i * K + j], acc[q]);
        store4(p, oy0 + r, ox, acc);
    }
}

/* ---- instances, launch, registry ----------------------------------------------------------- */

typedef void (*kernel_fn)(const walk_params);

/* "r<output rows per thread>"; [0] is the default, the fastest on the H100 at 3 x 3 and
 * 5 x 5 (docs/conv2d.md): fewer rows hold fewer registers and leave room for more warps. */
static const char *const walk_configs[] = {"r8", "r4", "r16", "r32", NULL};
static const int rows_per_thread[] = {8, 4, 16, 32};

#define MH_WALK_PADS(K, R, B)                                                                             \
    {conv2d_walk_kernel<K, 0, R, B>, conv2d_walk_kernel<K, (K - 1) / 2, R, B>, conv2d_walk_kernel<K, K - 1, R, B>}
#define MH_WALK_3X3(B) {MH_WALK_PADS(3, 8, B), MH_WALK_PADS(3, 4, B), MH_WALK_PADS(3, 16, B), MH_WALK_PADS(3, 32, B)}

/* [bordered][K 3 / 5][config][column anchor 0, (K - 1) / 2, K - 1]; 5 x 5 at 32 rows spills
 * registers and is not built; nor is a bordered 5 x 5, which ran slower than regtile (the
 * mapping's registers on top of 5 x 5's 120: 8192^2 reflect 0.36-0.38 ms against 0.24). */
static const kernel_fn kernels[2][2][4][3] = {
    {MH_WALK_3X3(false), {MH_WALK_PADS(5, 8, false), MH_WALK_PADS(5, 4, false), MH_WALK_PADS(5, 16, false)}},
    {MH_WALK_3X3(true), {}}};

static int walk_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    if (a->krows != a->kcols || (a->krows != 3 && a->krows != 5)) {
        snprintf(why, len, "walk is compiled for 3 x 3 and 5 x 5 filters, not %d x %d", a->krows, a->kcols);
        return 0;
    }
    if (a->bordered && a->krows != 3) {
        snprintf(why, len, "walk takes boundary modes at 3 x 3 only (a bordered 5 x 5 runs faster on regtile)");
        return 0;
    }
    if (a->bordered && (a->rows < 5 || a->cols < 5)) {
        snprintf(why, len, "walk maps a boundary mode by one reflection: images of 5 x 5 and more, not %zu x %zu "
                 "(regtile takes them)", a->rows, a->cols);
        return 0;
    }
    if (a->krows == 5 && rows_per_thread[x->config] > 16) {
        snprintf(why, len, "walk with 5 x 5 filters walks at most 16 rows (more spill registers)");
        return 0;
    }
    if (mh_ceil_div(a->out_cols, BLOCK_COLS) > MH_MAX_GRID_X) {
        snprintf(why, len, "%zu output columns need more than 2^31-1 blocks", a->out_cols);
        return 0;
    }
    return mh_grid_rows_fit(a->out_rows, (size_t)rows_per_thread[x->config], why, len);
}

static int pad_slot(const mh_conv2d_args *a)
{
    return a->lpc == 0 ? 0 : a->lpc == (a->kcols - 1) / 2 ? 1 : 2; /* valid, same, full */
}

static mh_status walk_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    walk_params p;
    p.in = a->in, p.filter = a->filter, p.out = a->out;
    p.rows = a->rows, p.cols = a->cols, p.out_rows = a->out_rows, p.out_cols = a->out_cols;
    p.lpr = a->lpr;
    p.vec_in = a->cols % 4 == 0 && mh_aligned16(a->in);
    p.vec_out = a->out_cols % 4 == 0 && mh_aligned16(a->out);
    p.mode = a->mode, p.cval = a->cval;
    const int r = rows_per_thread[x->config];
    dim3 grid((unsigned)mh_ceil_div(a->out_cols, BLOCK_COLS), (unsigned)mh_ceil_div(a->out_rows, (size_t)r));
    kernels[a->bordered][a->krows == 5][x->config][pad_slot(a)]<<<grid, WARPS * LANES, 0, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "conv2d_walk_kernel");
}

static const mh_row rows[] = {
    {{"conv2d/walk", MH_OP_CONV2D, MH_BACKEND_CUDA, 9, "global+registers+shuffle", "ours",
      "3x3 and 5x5: threads walk down 4 columns, rows in registers, no shared memory or barrier; any mode"},
     walk_supports, walk_run, walk_configs},
};

MH_ROW_GROUP(mh_conv2d_walk_rows, rows)

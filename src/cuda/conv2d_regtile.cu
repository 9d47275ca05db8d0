/* conv2d/regtile: ours. Each thread computes an RY x RX block of outputs (RY rows, RX
 * consecutive columns) from registers; a block of TY x TX threads covers BH x BW outputs.
 *
 * Why it is faster than the seeds' kernels:
 *  - Reuse in both directions. For every input row the thread loads one window of
 *    RX + kcols - 1 values into registers (16-byte shared loads) and uses it for every one
 *    of its RY output rows that this input row touches: each loaded value feeds up to
 *    RY * kcols FMAs, and each filter value (a broadcast float4 from shared memory) RX.
 *  - No bank conflicts: thread x reads its window at float offset x * RX, and with RX / 4
 *    odd the 8 lanes of a 16-byte wavefront land in 8 distinct bank groups.
 *  - Register arrays indexed only by compile-time constants: the taps loop is unrolled to
 *    KMAX (8, 16 or 32, the kernel instance is chosen by the filter's width) and guarded by
 *    the real width, so there is no shifting and nothing spills to local memory; only real
 *    taps are multiplied (an Inf in the image never meets a padded zero).
 *  - The tile arrives by cp.async (tile_io.cuh), 16 bytes at a time: the block's origin
 *    is shifted by up to 3 columns so that the input tile starts on a 16-byte boundary
 *    whatever the padding; outputs are staged in shared memory and leave as aligned
 *    16-byte stores.
 * Typed images (mh_conv2d_typed) are converted as the tile is loaded and cast as it is stored:
 * the arithmetic is the float32 kernel's, so a typed result is the float32 result cast. */
#include "common.cuh"
#include "tile_io.cuh"
#include "conv2d_window.cuh"

#include <stdio.h>

struct regtile2d_params {
    const float *in, *filter;
    float *out;
    size_t rows, cols, out_rows, out_cols;
    int krows, kcols, lpr, lpc;
    int xshift; /* output columns the first block starts left of 0, to align its loads */
    tile_border border; /* zeros, or mh_conv2d_mode's mode and cval */
    int in_type, out_type; /* TYPED_MODE: in and out hold elements of these types (mh_conv2d_typed) */
    int vec_in, vec_out;   /* TYPED_MODE: rows of in / out start on a group of 4 elements */
};

/* How the tile loader extends the image and what it reads: zeros (the paddings), a boundary mode
 * (mh_conv2d_mode), or a mode on typed images converted as they are loaded and stored. */
enum regtile_loader { ZEROS, MODE, TYPED_MODE };

/* Shared memory of one block, in floats. */
struct regtile2d_layout {
    int kc4;      /* filter row stride: kcols rounded up to 4 */
    int th, sw;   /* input tile rows and row stride */
    int floats;   /* filter + tile (the tile region is reused as the output stage) */
};

static __host__ __device__ regtile2d_layout layout_for(int bh, int bw, int krows, int kcols)
{
    regtile2d_layout l;
    l.kc4 = (kcols + 3) & ~3;
    l.th = bh + krows - 1;
    l.sw = bw + ((kcols + 2 + 3) & ~3); /* the last thread's last 16-byte window load */
    l.floats = krows * l.kc4 + l.th * l.sw;
    return l;
}

/* KC > 0: the filter width is that compile-time constant (its guards fold away, the window
 * is exactly as wide as needed); KC = 0: the width is p.kcols, at most KMAX. LOADER: MODE's tile
 * loader extends the image by mh_conv2d_mode's mode; the zero-padded instances keep a loader
 * without the mapping (inlined, it doubled the kernel's code and slowed zero-padded calls 4-11%
 * on the H100); TYPED_MODE's converts through registers (load_rows_typed) and casts its stores. */
template <int RX, int RY, int TX, int TY, int KMAX, int KC, int LOADER>
static __global__ void __launch_bounds__(TX *TY) conv2d_regtile_kernel(const regtile2d_params p)
{
    constexpr int BH = TY * RY, BW = TX * RX;
    constexpr int W = KC ? 4 * ((RX + KC - 1 + 3) / 4) : RX + KMAX, CHUNKS = KC ? (KC + 3) / 4 : KMAX / 4;
    const int kc = KC ? KC : p.kcols;
    extern __shared__ __align__(16) float smem[];
    const regtile2d_layout l = layout_for(BH, BW, p.krows, kc);
    float *sf = smem, *tile = smem + p.krows * l.kc4;
    const int tid = threadIdx.y * TX + threadIdx.x;
    const long long y0 = (long long)blockIdx.y * BH, x0 = (long long)blockIdx.x * BW - p.xshift;

    for (int t = tid; t < p.krows * l.kc4; t += TX * TY) {
        const int i = t / l.kc4, j = t - i * l.kc4;
        sf[t] = j < kc ? p.filter[i * kc + j] : 0.0f;
    }
    /* a stack of images: blockIdx.z is the image */
    const size_t in_bytes = LOADER == TYPED_MODE ? mh_dtype_bytes((mh_dtype)p.in_type) : sizeof(float);
    const size_t out_bytes = LOADER == TYPED_MODE ? mh_dtype_bytes((mh_dtype)p.out_type) : sizeof(float);
    const void *in = (const char *)p.in + (size_t)blockIdx.z * p.rows * p.cols * in_bytes;
    void *out = (char *)p.out + (size_t)blockIdx.z * p.out_rows * p.out_cols * out_bytes;
    if (LOADER == TYPED_MODE) {
        load_rows_typed(tile, l.sw, in, p.in_type, p.vec_in, p.rows, p.cols, y0 - p.lpr, x0 - p.lpc, l.th, l.sw, tid,
                        TX * TY, p.border);
    } else {
        load_rows(tile, l.sw, (const float *)in, p.rows, p.cols, y0 - p.lpr, x0 - p.lpc, l.th, l.sw, tid, TX * TY,
                  LOADER == MODE ? p.border : zero_border);
        cp_async_wait_all();
    }
    __syncthreads();

    float acc[RY][RX];
#pragma unroll
    for (int q = 0; q < RY; ++q)
#pragma unroll
        for (int r = 0; r < RX; ++r) acc[q][r] = 0.0f;

    const int nload = (RX + kc - 1 + 3) / 4;
    const float *base = tile + threadIdx.y * RY * l.sw + threadIdx.x * RX;
    for (int d = 0; d < RY + p.krows - 1; ++d) { /* input rows, relative to the thread's first output row */
        float w[W];
        load_window(w, base + d * l.sw, nload);
#pragma unroll
        for (int q = 0; q < RY; ++q) {
            const int i = d - q; /* the filter row joining input row d to output row q */
            if (i < 0 || i >= p.krows) continue;
            accumulate_filter_row<RX, W, CHUNKS, 0>(acc[q], w, sf + i * l.kc4, kc);
        }
    }

    __syncthreads(); /* every window is read: the tile becomes the output stage (BH x BW) */
#pragma unroll
    for (int q = 0; q < RY; ++q)
#pragma unroll
        for (int r = 0; r < RX; r += 4)
            *reinterpret_cast<float4 *>(tile + (threadIdx.y * RY + q) * BW + threadIdx.x * RX + r) =
                make_float4(acc[q][r], acc[q][r + 1], acc[q][r + 2], acc[q][r + 3]);
    __syncthreads();
    if (LOADER == TYPED_MODE)
        store_rows_typed(out, p.out_type, p.vec_out, p.out_rows, p.out_cols, y0, x0, tile, BW, BH, BW, tid, TX * TY);
    else store_rows((float *)out, p.out_rows, p.out_cols, y0, x0, tile, BW, BH, BW, tid, TX * TY);
}

/* ---- configurations, launch, registry -------------------------------------------------- */

/* "rx<RX>-ry<RY>-tx<TX>-ty<TY>"; [0] is the default, the fastest measured on the H100.
 * The default has instances compiled for the odd filter widths 5..15 (11-14% faster than
 * the generic kernel at K = 7, 11, 15 on the H100; at K = 3, memory-bound, the generic one
 * measured 4% faster); its "-generic" twin takes the width at run time, for comparison. */
static const char *const regtile_configs[] = {"rx20-ry2-tx16-ty8", "rx20-ry2-tx16-ty8-generic", "rx12-ry2-tx16-ty8",
                                              "rx12-ry4-tx16-ty8", "rx4-ry8-tx32-ty4", NULL};

typedef void (*kernel_fn)(const regtile2d_params);

struct regtile2d_instance {
    int rx, ry, tx, ty;
    kernel_fn generic[3][3]; /* [regtile_loader][KMAX = 8, 16, 32], NULL where not built */
    kernel_fn exact[3][8];   /* [regtile_loader][filter widths 1, 3, ..., 15 (odd)], NULL where the generic one is used */
};

#define MH_GENERIC_L(RX, RY, TX, TY, L)                                                                     \
    {conv2d_regtile_kernel<RX, RY, TX, TY, 8, 0, L>, conv2d_regtile_kernel<RX, RY, TX, TY, 16, 0, L>,       \
     conv2d_regtile_kernel<RX, RY, TX, TY, 32, 0, L>}
#define MH_GENERIC(RX, RY, TX, TY) {MH_GENERIC_L(RX, RY, TX, TY, ZEROS), MH_GENERIC_L(RX, RY, TX, TY, MODE), {NULL}}
#define MH_EXACT(RX, RY, TX, TY, K, L) conv2d_regtile_kernel<RX, RY, TX, TY, ((K) + 3) & ~3, K, L>
#define MH_EXACT_5_15(RX, RY, TX, TY, L)                                                                    \
    {NULL, NULL, MH_EXACT(RX, RY, TX, TY, 5, L), MH_EXACT(RX, RY, TX, TY, 7, L), MH_EXACT(RX, RY, TX, TY, 9, L), \
     MH_EXACT(RX, RY, TX, TY, 11, L), MH_EXACT(RX, RY, TX, TY, 13, L), MH_EXACT(RX, RY, TX, TY, 15, L)}

/* Typed images are compiled for the default configuration only. */
static const regtile2d_instance instances[] = {
    {20, 2, 16, 8,
     {MH_GENERIC_L(20, 2, 16, 8, ZEROS), MH_GENERIC_L(20, 2, 16, 8, MODE), MH_GENERIC_L(20, 2, 16, 8, TYPED_MODE)},
     {MH_EXACT_5_15(20, 2, 16, 8, ZEROS), MH_EXACT_5_15(20, 2, 16, 8, MODE), MH_EXACT_5_15(20, 2, 16, 8, TYPED_MODE)}},
    {20, 2, 16, 8, MH_GENERIC(20, 2, 16, 8), {{NULL}}},
    {12, 2, 16, 8, MH_GENERIC(12, 2, 16, 8), {{NULL}}},
    {12, 4, 16, 8, MH_GENERIC(12, 4, 16, 8), {{NULL}}},
    {4, 8, 32, 4, MH_GENERIC(4, 8, 32, 4), {{NULL}}},
};

/* Configuration i is instance i (same order as regtile_configs). */
static const regtile2d_instance &instance_of(int config) { return instances[config]; }

static int loader_of(const mh_conv2d_args *a)
{
    return mh_conv2d_is_typed(a) ? TYPED_MODE : a->bordered ? MODE : ZEROS;
}

static kernel_fn kernel_for(const regtile2d_instance &in, int kcols, int loader)
{
    if (kcols % 2 && kcols <= 15 && in.exact[loader][kcols / 2]) return in.exact[loader][kcols / 2];
    return in.generic[loader][kcols <= 8 ? 0 : kcols <= 16 ? 1 : 2];
}

static int regtile_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    const regtile2d_instance &in = instance_of(x->config);
    if (!kernel_for(in, a->kcols, loader_of(a))) {
        snprintf(why, len, "regtile converts typed images in its default configuration (%s) only", regtile_configs[0]);
        return 0;
    }
    const size_t bytes = (size_t)layout_for(in.ty * in.ry, in.tx * in.rx, a->krows, a->kcols).floats * sizeof(float);
    return mh_tile_fits(bytes, a->out_rows, (size_t)in.ty * in.ry, why, len);
}

static mh_status regtile_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    const regtile2d_instance &in = instance_of(x->config);
    const int bh = in.ty * in.ry, bw = in.tx * in.rx;
    const kernel_fn kernel = kernel_for(in, a->kcols, loader_of(a));
    regtile2d_params p;
    p.in = a->in, p.filter = a->filter, p.out = a->out;
    p.rows = a->rows, p.cols = a->cols, p.out_rows = a->out_rows, p.out_cols = a->out_cols;
    p.krows = a->krows, p.kcols = a->kcols, p.lpr = a->lpr, p.lpc = a->lpc, p.xshift = conv2d_xshift(a);
    p.border = {(int)a->mode, a->cval};
    p.in_type = (int)a->in_type, p.out_type = (int)a->out_type;
    p.vec_in = conv2d_rows_on_groups(a->in, a->cols, a->in_type);
    p.vec_out = conv2d_rows_on_groups(a->out, a->out_cols, a->out_type);
    const size_t bytes = (size_t)layout_for(bh, bw, a->krows, a->kcols).floats * sizeof(float);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    /* a stack: one launch for up to 65535 images (gridDim.z), each image's blocks in z */
    const size_t batch = a->batch, in_image = a->rows * a->cols * mh_dtype_size(a->in_type);
    const size_t out_image = a->out_rows * a->out_cols * mh_dtype_size(a->out_type);
    return mh_per_grid_slice(batch, [&](size_t first, unsigned images) {
        p.in = (const float *)((const char *)a->in + first * in_image), p.out = (float *)((char *)a->out + first * out_image);
        dim3 grid((unsigned)mh_ceil_div(a->out_cols + p.xshift, bw), (unsigned)mh_ceil_div(a->out_rows, bh), images);
        kernel<<<grid, dim3(in.tx, in.ty), bytes, mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "conv2d_regtile_kernel");
    });
}

static const mh_row rows[] = {
    {{"conv2d/regtile", MH_OP_CONV2D, MH_BACKEND_CUDA, 7, "global+shared+registers", "ours",
      "RY x RX outputs per thread from register windows, conflict-free 16-byte loads, cp.async tiles; typed "
      "images converted as the tile is loaded and stored"},
     regtile_supports, regtile_run, regtile_configs, 1, MH_LIB_NONE, NULL, MH_ROW_IMAGE_DTYPES | MH_ROW_BORDER_MODES},
};

MH_ROW_GROUP(mh_conv2d_regtile_rows, rows)

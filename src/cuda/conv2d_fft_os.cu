/* conv2d/fft-os: ours, 2-D overlap-save on cuFFT, for filters of any size up to
 * MH_CONV2D_MAX_K a side (the direct rows stop at MH_CONV2D_DIRECT_MAX_K).
 *
 * Output (r, c) is sum_{i,j} X[r + i - lpr][c + j - lpc] f[i][j], X the image past its edges
 * zeros (mh_conv2d) or its boundary mode (mh_conv2d_mode). Cut the outputs into tiles of
 * vr x vc; the tile at output (r0, c0) reads the nr x nc inputs from (r0 - lpr, c0 - lpc), with
 * nr = vr + krows - 1 and nc = vc + kcols - 1. The 2-D circular correlation of those inputs with
 * the filter zero-padded to nr x nc, IFFT2(FFT2(x) . conj(FFT2(f))), equals the true outputs at
 * its first vr x vc positions: i + y <= nr - 1 and j + x <= nc - 1 never wrap. So a batched R2C
 * over every tile, a pointwise product with the filter's spectrum, a batched C2R, and the first
 * vr x vc values of each tile are the outputs: O(log nr + log nc) work an output instead of
 * krows x kcols.
 *
 * Passes (each a kernel or a cuFFT call on the context's stream):
 *   gather    the tiles (with zeros or the mode's values past the edges) into a real buffer
 *   R2C       batched 2-D, out of place into the spectrum buffer
 *   multiply  by conj(filter spectrum) / (nr nc)
 *   C2R       batched, back into the real buffer
 *   compact   the first vr x vc values of each tile into out
 * The filter's spectrum is made in the same call (gather + R2C of the zero-padded filter).
 * A stack's images are tiles of one batch: chunks run across image boundaries.
 *
 * Bounded workspace: tiles run in chunks of at most MAX_CHUNK_BYTES of buffers; cuFFT's work
 * area comes from the context's workspace too (fft_plans.h).
 *
 * Accuracy: FFT rounding, ~eps log2(nr nc) times the norms of the tile's inputs and the filter,
 * spread over every output of the tile (docs/conv2d.md, "fft-os"): within a normwise bound, not
 * the per-element bound of the direct rows; a dark pixel beside bright ones carries an error of
 * the bright ones' size. A NaN or Inf input spreads to every output of the tiles that read it.
 * A non-finite cval (MH_MODE_CONSTANT) would do the same from the border: the tiles take 0 for it
 * and conv2d_border_direct.cuh then computes directly the outputs whose window meets the border
 * (NaN or Inf there as the direct rows give them, exact elsewhere). */
#include "conv2d_border_direct.cuh"
#include "fft_plans.h"
#include "tile_io.cuh"

#include <math.h>
#include <string.h>

static const size_t MAX_CHUNK_BYTES = (size_t)256 << 20;
static const long long MAX_TILE = 8192;
static const char *const WHO = "conv2d/fft-os";

/* ---- tile sizes ------------------------------------------------------------------------ */

/* "auto": each axis's transform length n, a power of two from 16 to MAX_TILE, that transforms
 * the fewest samples along it (tiles x n; the shorter on a tie). Powers of two only: on the H100
 * at 4096^2 with a 63 x 63 filter, 7-smooth lengths chosen the same way (fewer samples: 1.15x
 * less waste allowed) made the call 1.87x slower (1.289 against 0.691 ms), cuFFT's mixed-radix
 * kernels being that much slower than its power-of-two ones. "-chunk3" caps a chunk at 3 tiles
 * (the tests' way through every chunking path on small problems). */
static const char *const fos_configs[] = {"auto", "auto-chunk3", NULL};

/* The transform length along an axis of `out` outputs and a filter of k taps. */
static long long tile_length(long long out, long long k)
{
    long long best = 0, best_cost = 0;
    for (long long n = 16; n <= MAX_TILE; n *= 2) {
        if (n < k + 1) continue;
        const long long v = n - k + 1, cost = (out + v - 1) / v * n;
        if (!best || cost < best_cost) best = n, best_cost = cost;
        if (n >= out + k - 1) break; /* one tile holds the axis: longer ones cost more */
    }
    return best;
}

typedef struct fos_geometry {
    long long nr, nc;       /* the transform: nr x nc real samples */
    long long vr, vc;       /* outputs a tile, along each axis */
    long long tr, tc;       /* tiles an image, along each axis */
    long long tiles;        /* tr tc */
    long long rows, cols, out_rows, out_cols;
    int lpr, lpc, krows, kcols;
    long long bins;         /* nr (nc / 2 + 1) */
    long long er, ec;       /* the inputs the windows read, from (-lpr, -lpc): zeros past them */
    tile_border border;     /* what the tiles read past the image (a non-finite cval: 0) */
} fos_geometry;

static fos_geometry geometry_of(const mh_conv2d_args *a)
{
    fos_geometry g;
    g.nr = tile_length((long long)a->out_rows, a->krows);
    g.nc = tile_length((long long)a->out_cols, a->kcols);
    g.vr = g.nr - a->krows + 1, g.vc = g.nc - a->kcols + 1;
    g.tr = ((long long)a->out_rows + g.vr - 1) / g.vr, g.tc = ((long long)a->out_cols + g.vc - 1) / g.vc;
    g.tiles = g.tr * g.tc;
    g.rows = (long long)a->rows, g.cols = (long long)a->cols;
    g.out_rows = (long long)a->out_rows, g.out_cols = (long long)a->out_cols;
    g.lpr = a->lpr, g.lpc = a->lpc, g.krows = a->krows, g.kcols = a->kcols;
    g.bins = g.nr * (g.nc / 2 + 1);
    g.er = g.out_rows + a->krows - 1, g.ec = g.out_cols + a->kcols - 1;
    g.border = mh_conv2d_fft_border(a);
    return g;
}

/* ---- kernels: blockIdx.y is the tile within the chunk, blockIdx.x strides its rows ----- */

/* seg[t][y][x] = X[r0 + y][c0 + x] of the tile's image, the border's value outside it, zero
 * past the inputs the windows read (the last tiles' tails: the FFT's error grows with the norm of
 * what it transforms). */
static __global__ void gather_kernel(float *seg, const float *in, fos_geometry g, long long first)
{
    const long long gt = first + blockIdx.y, b = gt / g.tiles, t = gt % g.tiles;
    const long long e_r = (t / g.tc) * g.vr, e_c = (t % g.tc) * g.vc; /* from (-lpr, -lpc) */
    const long long r0 = e_r - g.lpr, c0 = e_c - g.lpc;
    const float *x = in + (size_t)b * (size_t)(g.rows * g.cols);
    float *dst = seg + (size_t)blockIdx.y * (size_t)(g.nr * g.nc);
    for (long long y = blockIdx.x; y < g.nr; y += gridDim.x) {
        const bool row_read = e_r + y < g.er;
        const long long r = mh_border_index(r0 + y, g.rows, g.border.mode);
        float *d = dst + y * g.nc;
        for (long long c = threadIdx.x; c < g.nc; c += blockDim.x) {
            const long long q = r < 0 ? -1 : mh_border_index(c0 + c, g.cols, g.border.mode);
            const float v = q >= 0 ? __ldg(x + r * g.cols + q) : g.border.cval;
            d[c] = row_read && e_c + c < g.ec ? v : 0.0f;
        }
    }
}

/* seg[y][x] = f[y][x], zero past the filter. */
static __global__ void filter_gather_kernel(float *seg, const float *f, fos_geometry g)
{
    for (long long y = blockIdx.x; y < g.nr; y += gridDim.x)
        for (long long x = threadIdx.x; x < g.nc; x += blockDim.x)
            seg[y * g.nc + x] = y < g.krows && x < g.kcols ? __ldg(f + y * g.kcols + x) : 0.0f;
}

/* spec[t][f] *= conj(fspec[f]) scale: correlation, not convolution. */
static __global__ void multiply_kernel(float2 *spec, const float2 *fspec, long long bins, float scale)
{
    float2 *x = spec + (size_t)blockIdx.y * (size_t)bins;
    for (long long f = (long long)blockIdx.x * blockDim.x + threadIdx.x; f < bins; f += (long long)gridDim.x * blockDim.x) {
        x[f] = mh_times_conj(x[f], __ldg(fspec + f), scale);
    }
}

/* out[b][tile's outputs] = y[t][0 .. vr)[0 .. vc), inside the image's outputs. */
static __global__ void compact_kernel(float *out, const float *seg, fos_geometry g, long long first)
{
    const long long gt = first + blockIdx.y, b = gt / g.tiles, t = gt % g.tiles;
    const long long o_r = (t / g.tc) * g.vr, o_c = (t % g.tc) * g.vc;
    const long long nrows = min(g.vr, g.out_rows - o_r), ncols = min(g.vc, g.out_cols - o_c);
    const float *src = seg + (size_t)blockIdx.y * (size_t)(g.nr * g.nc);
    float *dst = out + (size_t)b * (size_t)(g.out_rows * g.out_cols) + (size_t)(o_r * g.out_cols + o_c);
    for (long long y = blockIdx.x; y < nrows; y += gridDim.x)
        for (long long x = threadIdx.x; x < ncols; x += blockDim.x) dst[y * g.out_cols + x] = src[y * g.nc + x];
}

/* ---- the call ---------------------------------------------------------------------------- */

typedef struct fos_call {
    mh_context *ctx;
    const mh_conv2d_args *a;
    fos_geometry g;
    long long chunk;  /* tiles a chunk */
    float *seg;
    float2 *spec, *fspec;
    void *work;
} fos_call;

static unsigned row_blocks(long long rows) { return (unsigned)(rows < 1024 ? rows : 1024); }

static long long chunk_tiles(const fos_geometry *g, long long total, int config)
{
    const size_t per_tile = (size_t)(g->nr * g->nc) * sizeof(float) + (size_t)g->bins * sizeof(float2);
    long long cap = (long long)(MAX_CHUNK_BYTES / per_tile);
    if (strstr(fos_configs[config], "-chunk3") && cap > 3) cap = 3;
    if (cap > 65535) cap = 65535; /* grid.y bounds a chunk */
    if (cap < 1) cap = 1;
    return cap < total ? cap : total;
}

static mh_status plan(fos_call *c, long long count, cufftType type, mh_fft_plan **p)
{
    const long long dims[2] = {c->g.nr, c->g.nc};
    return mh_fft_plan_get(c->ctx, WHO, 2, dims, count, type, 0, p);
}

/* Every plan the call uses (filter, full chunks, the last chunk), made before the workspace is
 * sized: their work areas share its tail. */
static mh_status plan_all(fos_call *c, long long total, size_t *work_bytes)
{
    const long long counts[3] = {1, c->chunk, total % c->chunk};
    *work_bytes = 0;
    for (int i = 0; i < 3; ++i)
        for (int d = 0; d < 2 && counts[i]; ++d) {
            mh_fft_plan *p = NULL;
            mh_status s = plan(c, counts[i], d ? CUFFT_C2R : CUFFT_R2C, &p);
            if (s != MH_OK) return s;
            if (p->work_bytes > *work_bytes) *work_bytes = p->work_bytes;
        }
    return MH_OK;
}

static mh_status filter_spectrum(fos_call *c)
{
    mh_fft_plan *p = NULL;
    mh_status s = plan(c, 1, CUFFT_R2C, &p);
    if (s != MH_OK) return s;
    filter_gather_kernel<<<row_blocks(c->g.nr), 256, 0, mh_stream(c->ctx)>>>(c->seg, c->a->filter, c->g);
    if ((s = MH_LAUNCH_CHECK(c->ctx, "conv2d/fft-os filter_gather_kernel")) != MH_OK) return s;
    return mh_fft_exec(c->ctx, WHO, p, c->work, c->seg, c->fspec, CUFFT_FORWARD);
}

/* Tiles first .. first + count - 1 of the whole stack. */
static mh_status run_chunk(fos_call *c, long long first, long long count)
{
    const cudaStream_t st = mh_stream(c->ctx);
    mh_fft_plan *fwd = NULL, *inv = NULL;
    mh_status s = plan(c, count, CUFFT_R2C, &fwd);
    if (s == MH_OK) s = plan(c, count, CUFFT_C2R, &inv);
    if (s != MH_OK) return s;
    const dim3 grid(row_blocks(c->g.nr), (unsigned)count);
    gather_kernel<<<grid, 256, 0, st>>>(c->seg, c->a->in, c->g, first);
    if ((s = MH_LAUNCH_CHECK(c->ctx, "conv2d/fft-os gather_kernel")) != MH_OK) return s;
    if ((s = mh_fft_exec(c->ctx, WHO, fwd, c->work, c->seg, c->spec, CUFFT_FORWARD)) != MH_OK) return s;
    const long long bins = c->g.bins;
    const unsigned bin_blocks = (unsigned)((bins + 255) / 256 < 128 ? (bins + 255) / 256 : 128);
    multiply_kernel<<<dim3(bin_blocks, (unsigned)count), 256, 0, st>>>(c->spec, c->fspec, bins,
                                                                      1.0f / (float)(c->g.nr * c->g.nc));
    if ((s = MH_LAUNCH_CHECK(c->ctx, "conv2d/fft-os multiply_kernel")) != MH_OK) return s;
    if ((s = mh_fft_exec(c->ctx, WHO, inv, c->work, c->spec, c->seg, CUFFT_INVERSE)) != MH_OK) return s;
    compact_kernel<<<dim3(row_blocks(c->g.vr), (unsigned)count), 256, 0, st>>>(c->a->out, c->seg, c->g, first);
    return MH_LAUNCH_CHECK(c->ctx, "conv2d/fft-os compact_kernel");
}

static mh_status fos_run(mh_context *ctx, const mh_args *args)
{
    const mh_conv2d_args *a = &args->conv2d;
    fos_call c = {ctx, a, geometry_of(a), 0, NULL, NULL, NULL, NULL};
    const long long total = c.g.tiles * (long long)a->batch;
    c.chunk = chunk_tiles(&c.g, total, args->config);
    size_t work_bytes;
    mh_status s = plan_all(&c, total, &work_bytes);
    if (s != MH_OK) return s;
    const size_t seg_bytes = mh_align_up((size_t)c.chunk * (size_t)(c.g.nr * c.g.nc) * sizeof(float), 256);
    const size_t spec_bytes = mh_align_up((size_t)c.chunk * (size_t)c.g.bins * sizeof(float2), 256);
    const size_t fspec_bytes = mh_align_up((size_t)c.g.bins * sizeof(float2), 256);
    void *ws;
    if ((s = mh_workspace(ctx, seg_bytes + spec_bytes + fspec_bytes + work_bytes, &ws)) != MH_OK) return s;
    c.seg = (float *)ws;
    c.spec = (float2 *)((char *)ws + seg_bytes);
    c.fspec = (float2 *)((char *)ws + seg_bytes + spec_bytes);
    c.work = (char *)ws + seg_bytes + spec_bytes + fspec_bytes;
    if ((s = filter_spectrum(&c)) != MH_OK) return s;
    for (long long first = 0; first < total; first += c.chunk)
        if ((s = run_chunk(&c, first, total - first < c.chunk ? total - first : c.chunk)) != MH_OK) return s;
    return mh_conv2d_fix_nonfinite_border(ctx, a, "launching conv2d/fft-os direct_border_kernel");
}

static const mh_row rows[] = {
    {{"conv2d/fft-os", MH_OP_CONV2D, MH_BACKEND_CUDA, 13, "global (cuFFT)", "ours",
      "2-D overlap-save on cuFFT: batched R2C of tiles, conj filter spectrum, C2R; filters up to 255 x 255, stacks"},
     mh_supports_any, fos_run, fos_configs, 1, MH_LIB_CUFFT, NULL,
     MH_ROW_LARGE_FILTERS | MH_ROW_NORMWISE | MH_ROW_BORDER_MODES},
};

MH_ROW_GROUP(mh_conv2d_fft_os_rows, rows)

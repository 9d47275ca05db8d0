/* conv2d on CUDA: the seeds' ladder (004 and 001), each rung as the seeds wrote it,
 * generalised to any image, any filter up to 31 x 31 (not only square or odd), every
 * padding, and 64-bit indexing. One thread per output, 32 x 32 blocks, as in the seeds.
 *
 *   basic       global memory, bounds checks on every tap (004's conv2D_basic)
 *   const       the filter in constant memory (004's conv2D_constant_mem)
 *   shared      the input tile with its halo in shared memory (004's conv2D_shared_mem);
 *               configurations: 004's linear load loop, or 001's block-strided 2-D load
 *   cache-halo  only the tile's interior in shared memory, the halo read through the caches
 *               (004's last kernel)
 *   shuffle     the shared tile read once per filter row; the row's taps reach the lanes by
 *               warp shuffles (001's, which took 3 x 3 filters only: here any width up to 31)
 * As in seed 004 (`#define K 11`), square odd filters up to 15 x 15 run kernels with K
 * compiled in (loops unrolled, constant indices); any other filter takes the same kernels with
 * K read at run time (K = 0 below). The texture rung is in conv2d_texture.cu, ours in
 * conv2d_regtile.cu, conv2d_stream.cu and conv2d_separable.cu. Constant memory is reached
 * through the guarded ring (const_ring.h). */
#include "common.cuh"
#include "const_ring.h"
#include "conv2d_seed_k.cuh"
#include "../core/border.h"

#include <stdio.h>

enum { MAX_TAPS = MH_CONV2D_DIRECT_MAX_K * MH_CONV2D_DIRECT_MAX_K, BLOCK = 32 };

static __constant__ float c_filter[MH_CONST_RING_SLOTS][MAX_TAPS];

static mh_const_ring filter_ring = {PTHREAD_MUTEX_INITIALIZER, c_filter, MAX_TAPS * sizeof(float), {0}, {{0}}};

/* What every kernel of this file takes. */
struct conv2d_params {
    const float *in, *filter;
    float *out;
    size_t rows, cols, out_rows, out_cols;
    int krows, kcols, lpr, lpc, slot;
    int mode; /* basic's bordered calls: mh_conv2d_mode's mode and cval (zeros otherwise) */
    float cval;
};

template <bool CONST>
static __device__ __forceinline__ float tap(const conv2d_params &p, int idx)
{
    return CONST ? c_filter[p.slot][idx] : p.filter[idx];
}

/* X[y][x]: zero outside the image, or (BORDERED: basic's and const's mh_conv2d_mode calls)
 * the image extended by the call's mode. The zero-padded kernels keep the seeds' code. */
template <bool BORDERED = false>
static __device__ __forceinline__ float pixel(const conv2d_params &p, long long y, long long x)
{
    const bool inside = y >= 0 && y < (long long)p.rows && x >= 0 && x < (long long)p.cols;
    if (!BORDERED) return inside ? p.in[(size_t)y * p.cols + (size_t)x] : 0.0f;
    if (inside) return p.in[(size_t)y * p.cols + (size_t)x];
    const long long my = mh_border_index(y, (long long)p.rows, p.mode), mx = mh_border_index(x, (long long)p.cols, p.mode);
    return my < 0 || mx < 0 ? p.cval : p.in[(size_t)my * p.cols + (size_t)mx];
}

template <bool CONST, int K, bool BORDERED = false>
static __global__ void conv2d_basic_kernel(const conv2d_params p)
{
    const size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y, col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float res = 0.0f;
#pragma unroll
    for (int i = 0; i < KR(K, p); ++i)
#pragma unroll
        for (int j = 0; j < KC(K, p); ++j)
            res += pixel<BORDERED>(p, (long long)row - p.lpr + i, (long long)col - p.lpc + j) *
                   tap<CONST>(p, i * KC(K, p) + j);
    if (row < p.out_rows && col < p.out_cols) p.out[row * p.out_cols + col] = res;
}

/* The block's input tile, (32 + krows - 1) x (32 + kcols - 1), into shared memory.
 * STRIDED: seed 001's block-strided 2-D loop; else seed 004's linear loop. */
template <bool STRIDED>
static __device__ __forceinline__ void load_halo_tile(const conv2d_params &p, float *tile, int th, int tw)
{
    const long long y0 = (long long)blockIdx.y * BLOCK - p.lpr, x0 = (long long)blockIdx.x * BLOCK - p.lpc;
    if (STRIDED) {
        for (int ty = threadIdx.y; ty < th; ty += BLOCK)
            for (int tx = threadIdx.x; tx < tw; tx += BLOCK) tile[ty * tw + tx] = pixel(p, y0 + ty, x0 + tx);
    } else {
        for (int i = threadIdx.y * BLOCK + threadIdx.x; i < th * tw; i += BLOCK * BLOCK)
            tile[i] = pixel(p, y0 + i / tw, x0 + i % tw);
    }
}

template <bool STRIDED, int K>
static __global__ void conv2d_shared_kernel(const conv2d_params p)
{
    extern __shared__ float tile[];
    const int th = BLOCK + KR(K, p) - 1, tw = BLOCK + KC(K, p) - 1;
    load_halo_tile<STRIDED>(p, tile, th, tw);
    __syncthreads();
    const size_t row = (size_t)blockIdx.y * BLOCK + threadIdx.y, col = (size_t)blockIdx.x * BLOCK + threadIdx.x;
    float res = 0.0f;
#pragma unroll
    for (int i = 0; i < KR(K, p); ++i)
#pragma unroll
        for (int j = 0; j < KC(K, p); ++j)
            res += tile[(threadIdx.y + i) * tw + threadIdx.x + j] * tap<true>(p, i * KC(K, p) + j);
    if (row < p.out_rows && col < p.out_cols) p.out[row * p.out_cols + col] = res;
}

/* Seed 004's last kernel: the tile holds the input under the block's own outputs, no
 * halo; taps that fall outside it read global memory (and, one hopes, hit in L1/L2). */
template <int K>
static __global__ void conv2d_cache_halo_kernel(const conv2d_params p)
{
    __shared__ float tile[BLOCK * BLOCK];
    const long long row = (long long)blockIdx.y * BLOCK + threadIdx.y, col = (long long)blockIdx.x * BLOCK + threadIdx.x;
    tile[threadIdx.y * BLOCK + threadIdx.x] = pixel(p, row, col);
    __syncthreads();
    float res = 0.0f;
#pragma unroll
    for (int i = 0; i < KR(K, p); ++i)
#pragma unroll
        for (int j = 0; j < KC(K, p); ++j) {
            const int u = (int)threadIdx.y - p.lpr + i, v = (int)threadIdx.x - p.lpc + j; /* tile coordinates */
            const float f = tap<true>(p, i * KC(K, p) + j);
            if (u >= 0 && u < BLOCK && v >= 0 && v < BLOCK) res += tile[u * BLOCK + v] * f;
            else res += pixel(p, row - p.lpr + i, col - p.lpc + j) * f;
        }
    if (row < (long long)p.out_rows && col < (long long)p.out_cols) p.out[(size_t)row * p.out_cols + (size_t)col] = res;
}

/* Seed 001's warp-shuffle kernel for any filter width: lane l holds row elements l and
 * l + 32 of the shared tile; tap j of lane l is element l + j, which lane (l + j) mod 32
 * sends from the first or the second of its values. One shared load per lane and filter
 * row instead of one per tap. */
template <int K>
static __global__ void conv2d_shuffle_kernel(const conv2d_params p)
{
    extern __shared__ float tile[];
    const int th = BLOCK + KR(K, p) - 1, tw = BLOCK + KC(K, p) - 1, lane = threadIdx.x;
    load_halo_tile<true>(p, tile, th, tw);
    __syncthreads();
    const size_t row = (size_t)blockIdx.y * BLOCK + threadIdx.y, col = (size_t)blockIdx.x * BLOCK + lane;
    float res = 0.0f;
#pragma unroll
    for (int i = 0; i < KR(K, p); ++i) {
        const float *line = tile + (threadIdx.y + i) * tw;
        const float a = line[lane], b = lane + BLOCK < tw ? line[lane + BLOCK] : 0.0f;
#pragma unroll
        for (int j = 0; j < KC(K, p); ++j) {
            const float v = __shfl_sync(0xffffffffu, lane >= j ? a : b, (lane + j) & (BLOCK - 1));
            res += v * tap<true>(p, i * KC(K, p) + j);
        }
    }
    if (row < p.out_rows && col < p.out_cols) p.out[row * p.out_cols + col] = res;
}

/* ---- launchers ----------------------------------------------------------------------- */

static conv2d_params params_of(const mh_conv2d_args *a, int slot)
{
    conv2d_params p;
    p.in = a->in, p.filter = a->filter, p.out = a->out;
    p.rows = a->rows, p.cols = a->cols, p.out_rows = a->out_rows, p.out_cols = a->out_cols;
    p.krows = a->krows, p.kcols = a->kcols, p.lpr = a->lpr, p.lpc = a->lpc, p.slot = slot;
    p.mode = (int)a->mode, p.cval = a->cval;
    return p;
}

static dim3 grid_of(const mh_conv2d_args *a)
{
    return dim3((unsigned)mh_ceil_div(a->out_cols, BLOCK), (unsigned)mh_ceil_div(a->out_rows, BLOCK));
}

static size_t halo_tile_bytes(const mh_conv2d_args *a)
{
    return (size_t)(BLOCK + a->krows - 1) * (BLOCK + a->kcols - 1) * sizeof(float);
}

static mh_status with_const_filter(mh_context *ctx, const mh_args *x, mh_slot_launch launch)
{
    const mh_conv2d_args *a = &x->conv2d;
    return mh_const_ring_launch(&filter_ring, ctx, a->filter, (size_t)a->krows * a->kcols * sizeof(float), launch, x);
}

static const dim3 block2d(BLOCK, BLOCK);

typedef void (*kernel_fn)(const conv2d_params);

static const kernel_fn basic_kernels[2][8] = {MH_SEED_K(conv2d_basic_kernel, false, ),
                                              MH_SEED_K(conv2d_basic_kernel, true, )};
static const kernel_fn shared_kernels[2][8] = {MH_SEED_K(conv2d_shared_kernel, false, ),
                                               MH_SEED_K(conv2d_shared_kernel, true, )};
static const kernel_fn cache_halo_kernels[8] = MH_SEED_K(conv2d_cache_halo_kernel, );
static const kernel_fn shuffle_kernels[8] = MH_SEED_K(conv2d_shuffle_kernel, );

static mh_status launch(mh_context *ctx, const mh_args *x, int slot, kernel_fn kernel, size_t smem, const char *name)
{
    if (smem) MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    kernel<<<grid_of(&x->conv2d), block2d, smem, mh_stream(ctx)>>>(params_of(&x->conv2d, slot));
    return mh_cuda_status(ctx, cudaGetLastError(), name);
}

/* mh_conv2d_mode's calls: the filter's size read at run time, every pixel through the border */
static const kernel_fn bordered_basic_kernels[2] = {conv2d_basic_kernel<false, 0, true>,
                                                    conv2d_basic_kernel<true, 0, true>};

template <bool CONST>
static mh_status basic_launch(mh_context *ctx, const mh_args *x, int slot)
{
    const kernel_fn kernel =
        x->conv2d.bordered ? bordered_basic_kernels[CONST] : basic_kernels[CONST][mh_seed_k_slot(&x->conv2d)];
    return launch(ctx, x, slot, kernel, 0, "launching conv2d_basic_kernel");
}

/* Tuning configurations of `shared`: the seeds' two ways of loading the tile. [0] is the
 * default: 001's block-strided load, 15-35% faster than 004's linear loop on the H100 with K
 * compiled in (docs/conv2d.md); with K read at run time the linear loop is the faster. */
static const char *const shared_configs[] = {"strided", "linear", NULL};

static mh_status shared_launch(mh_context *ctx, const mh_args *x, int slot)
{
    return launch(ctx, x, slot, shared_kernels[x->config == 0][mh_seed_k_slot(&x->conv2d)], halo_tile_bytes(&x->conv2d),
                  "launching conv2d_shared_kernel");
}

static mh_status cache_halo_launch(mh_context *ctx, const mh_args *x, int slot)
{
    return launch(ctx, x, slot, cache_halo_kernels[mh_seed_k_slot(&x->conv2d)], 0, "launching conv2d_cache_halo_kernel");
}

static mh_status shuffle_launch(mh_context *ctx, const mh_args *x, int slot)
{
    return launch(ctx, x, slot, shuffle_kernels[mh_seed_k_slot(&x->conv2d)], halo_tile_bytes(&x->conv2d),
                  "launching conv2d_shuffle_kernel");
}

/* ---- registry rows ------------------------------------------------------------------- */

/* gridDim.y is at most 65535: 32-row blocks cover images of up to 2,097,120 output rows. */
static int grid_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return mh_grid_rows_fit(x->conv2d.out_rows, BLOCK, why, len);
}

/* basic and const read every pixel through the border; the tiled rungs keep the seeds' zero
 * padding. */
static int zero_pad_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    return mh_conv2d_zero_pad_only(&x->conv2d, why, len) && grid_supports(ctx, x, why, len);
}

static mh_status basic_run(mh_context *ctx, const mh_args *x) { return basic_launch<false>(ctx, x, 0); }
static mh_status const_run(mh_context *ctx, const mh_args *x) { return with_const_filter(ctx, x, basic_launch<true>); }
static mh_status shared_run(mh_context *ctx, const mh_args *x) { return with_const_filter(ctx, x, shared_launch); }
static mh_status cache_halo_run(mh_context *ctx, const mh_args *x) { return with_const_filter(ctx, x, cache_halo_launch); }
static mh_status shuffle_run(mh_context *ctx, const mh_args *x) { return with_const_filter(ctx, x, shuffle_launch); }

/* ---- reversed filters on a GPU: mh_conv2d_mode_reversed's, sepfilter's reversed taps ---------- */

/* The filter read from its end: reversing a row-major krows x kcols array along both axes is
 * reversing its krows * kcols values. */
static __global__ void reverse_kernel(const float *__restrict__ in, float *__restrict__ out, unsigned n)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[n - 1 - i];
}

mh_status mh_reverse_cuda(mh_context *ctx, const float *values, size_t n, float *out)
{
    const unsigned threads = 256;
    reverse_kernel<<<(unsigned)mh_ceil_div(n, threads), threads, 0, mh_stream(ctx)>>>(values, out, (unsigned)n);
    return MH_LAUNCH_CHECK(ctx, "the filter's reversal");
}

mh_status mh_conv2d_reverse_cuda(mh_context *ctx, const float *filter, size_t n, const float **copy)
{
    float *values;
    MH_TRY(mh_slot_buffer(ctx, MH_SLOT_REVERSED_FILTER, "the reversed filter's copy", n * sizeof(float), (void **)&values));
    MH_TRY(mh_reverse_cuda(ctx, filter, n, values));
    *copy = values;
    return MH_OK;
}

static const mh_row rows[] = {
    {{"conv2d/basic", MH_OP_CONV2D, MH_BACKEND_CUDA, 1, "global", "seed 004",
      "one thread per output, bounds check on every tap (conv2D_basic); any filter size"},
     grid_supports, basic_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_LARGE_FILTERS | MH_ROW_BORDER_MODES},
    {{"conv2d/const", MH_OP_CONV2D, MH_BACKEND_CUDA, 2, "global+constant", "seed 004",
      "basic with the filter in constant memory (conv2D_constant_mem)"},
     grid_supports, const_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_BORDER_MODES},
    {{"conv2d/shared", MH_OP_CONV2D, MH_BACKEND_CUDA, 3, "global+shared+constant", "seed 004, 001",
      "input tile with halo in shared memory (conv2D_shared_mem; 001's block-strided load)"},
     zero_pad_supports, shared_run, shared_configs},
    {{"conv2d/cache-halo", MH_OP_CONV2D, MH_BACKEND_CUDA, 4, "global+shared+constant+L1", "seed 004",
      "tile without halo in shared memory, halo read through the caches"},
     zero_pad_supports, cache_halo_run, NULL},
    {{"conv2d/shuffle", MH_OP_CONV2D, MH_BACKEND_CUDA, 5, "global+shared+constant+shuffle", "seed 001",
      "one shared load per lane and filter row, taps passed along the warp by shuffles"},
     zero_pad_supports, shuffle_run, NULL},
};

MH_ROW_GROUP(mh_conv2d_cuda_rows, rows)

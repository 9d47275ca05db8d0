/* transpose on CUDA: out[c][r] = in[r][c]. Seed 002's two kernels as written, then the
 * rungs that fix what they leave on the table. Any sizes (seed 002 assumed multiples of
 * 16), 64-bit indexing; tiles are numbered along one grid dimension so that 16M x 1 and
 * 1 x 16M matrices fit the grid.
 *
 *   naive    seed 002's transposeMatrixSlow: reads coalesced, every write a whole row apart
 *   shared   seed 002's transposeMatrixFast: a 16 x 16 tile through shared memory so that
 *            both sides are coalesced; reading the tile by columns hits 8 lanes per bank
 *   padded   the same tile with one spare column: the column reads spread over all banks
 *   coarse   64 x 8 threads move a 64 x 64 tile, 8 elements each: fewer, fuller blocks,
 *            8 loads in flight per thread (other tiles and thread rows: tuning configurations)
 *   vector   16-byte loads and stores: each thread moves a float4 in and a float4 out; a
 *            single row or column is laid out as its own transpose and is simply copied */
#include "common.cuh"

#include <stdio.h>

struct transpose_params {
    const float *in;
    float *out;
    size_t rows, cols;
    unsigned tiles_x; /* tiles along a row of the input */
};

/* The tile this block moves: (first row, first column) of the input. */
template <int TH, int TW>
static __device__ __forceinline__ void tile_origin(const transpose_params &p, size_t &r0, size_t &c0)
{
    const unsigned bx = blockIdx.x % p.tiles_x, by = blockIdx.x / p.tiles_x;
    r0 = (size_t)by * TH, c0 = (size_t)bx * TW;
}

enum { SEED_TILE = 16 };

static __global__ void transpose_naive_kernel(const transpose_params p)
{
    size_t r0, c0;
    tile_origin<SEED_TILE, SEED_TILE>(p, r0, c0);
    const size_t x = c0 + threadIdx.x, y = r0 + threadIdx.y;
    if (x < p.cols && y < p.rows) p.out[x * p.rows + y] = p.in[y * p.cols + x];
}

/* Seed 002's transposeMatrixFast (PAD = 0), or with the tile's rows one float longer. */
template <int PAD>
static __global__ void transpose_shared_kernel(const transpose_params p)
{
    __shared__ float temp[SEED_TILE][SEED_TILE + PAD];
    size_t r0, c0;
    tile_origin<SEED_TILE, SEED_TILE>(p, r0, c0);
    size_t x = c0 + threadIdx.x, y = r0 + threadIdx.y;
    if (x < p.cols && y < p.rows) temp[threadIdx.y][threadIdx.x] = p.in[y * p.cols + x];
    __syncthreads();
    x = r0 + threadIdx.x, y = c0 + threadIdx.y; /* output column and row */
    if (x < p.rows && y < p.cols) p.out[y * p.rows + x] = temp[threadIdx.x][threadIdx.y];
}

enum { TILE = 32 };

/* A T x T tile (padded by one column) moved by T x RPP threads, T / RPP elements each:
 * every warp row of loads and of stores is a full 128-byte line (T = 32) or two (T = 64),
 * and each thread has T / RPP independent loads in flight before the barrier. */
template <int T, int RPP>
static __global__ void __launch_bounds__(T * RPP) transpose_coarse_kernel(const transpose_params p)
{
    __shared__ float tile[T][T + 1];
    size_t r0, c0;
    tile_origin<T, T>(p, r0, c0);
    const size_t x = c0 + threadIdx.x;
#pragma unroll
    for (int j = 0; j < T; j += RPP) {
        const size_t y = r0 + threadIdx.y + j;
        if (x < p.cols && y < p.rows) tile[threadIdx.y + j][threadIdx.x] = p.in[y * p.cols + x];
    }
    __syncthreads();
    const size_t ox = r0 + threadIdx.x;
#pragma unroll
    for (int j = 0; j < T; j += RPP) {
        const size_t oy = c0 + threadIdx.y + j;
        if (ox < p.rows && oy < p.cols) p.out[oy * p.rows + ox] = tile[threadIdx.x][threadIdx.y + j];
    }
}

/* A 32 x 32 tile by 8 x 32 threads, one float4 in and one float4 out each. With the tile
 * padded by one column, both the row-wise writes and the column-wise reads of shared
 * memory touch 32 distinct banks per warp. Edges and unaligned matrices go element-wise. */
static __global__ void transpose_vector_kernel(const transpose_params p)
{
    __shared__ float tile[TILE][TILE + 1];
    size_t r0, c0;
    tile_origin<TILE, TILE>(p, r0, c0);
    const int tx = threadIdx.x, ty = threadIdx.y; /* tx: which float4 of the row, ty: the row */
    const size_t y = r0 + ty, x = c0 + 4 * tx;
    const float *src = p.in + y * p.cols + x;
    if (y < p.rows && x + 4 <= p.cols && mh_aligned16(src)) {
        const float4 v = *reinterpret_cast<const float4 *>(src);
        tile[ty][4 * tx] = v.x, tile[ty][4 * tx + 1] = v.y, tile[ty][4 * tx + 2] = v.z, tile[ty][4 * tx + 3] = v.w;
    } else if (y < p.rows) {
        for (int e = 0; e < 4; ++e)
            if (x + e < p.cols) tile[ty][4 * tx + e] = src[e];
    }
    __syncthreads();
    const size_t oy = c0 + ty, ox = r0 + 4 * tx; /* output row and first column */
    if (oy >= p.cols) return;
    float *dst = p.out + oy * p.rows + ox;
    if (ox + 4 <= p.rows && mh_aligned16(dst)) {
        /* __stcs, not a plain float4 assignment: nvcc merged that with the element-wise
         * branch below into four 4-byte stores (PTX st.global.f32 x 4; ncu: 4x the sectors) */
        __stcs(reinterpret_cast<float4 *>(dst),
               make_float4(tile[4 * tx][ty], tile[4 * tx + 1][ty], tile[4 * tx + 2][ty], tile[4 * tx + 3][ty]));
    } else {
        for (int e = 0; e < 4; ++e)
            if (ox + e < p.rows) dst[e] = tile[4 * tx + e][ty];
    }
}

/* ---- launch, registry ---------------------------------------------------------------------- */

static transpose_params params_of(const mh_transpose_args *a, int tile)
{
    transpose_params p;
    p.in = a->in, p.out = a->out, p.rows = a->rows, p.cols = a->cols;
    p.tiles_x = (unsigned)mh_ceil_div(a->cols, (size_t)tile);
    return p;
}

static size_t tiles_of(const mh_transpose_args *a, int tile) { return mh_ceil_div(a->rows, tile) * mh_ceil_div(a->cols, tile); }

static int tiles_fit(const mh_transpose_args *a, int tile, char *why, size_t len)
{
    if (tiles_of(a, tile) <= MH_MAX_GRID_X && mh_ceil_div(a->cols, tile) <= 0xffffffffu) return 1;
    snprintf(why, len, "a %zu x %zu matrix has more than 2^31-1 tiles of %d x %d", a->rows, a->cols, tile, tile);
    return 0;
}

static int seed_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return tiles_fit(&x->transpose, SEED_TILE, why, len);
}

static int tile32_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return tiles_fit(&x->transpose, TILE, why, len);
}

typedef void (*kernel_fn)(const transpose_params);

static mh_status launch(mh_context *ctx, const mh_args *x, kernel_fn kernel, int tile, dim3 block, const char *name)
{
    const mh_transpose_args *a = &x->transpose;
    kernel<<<(unsigned)tiles_of(a, tile), block, 0, mh_stream(ctx)>>>(params_of(a, tile));
    return mh_cuda_status(ctx, cudaGetLastError(), name);
}

static mh_status naive_run(mh_context *ctx, const mh_args *x)
{
    return launch(ctx, x, transpose_naive_kernel, SEED_TILE, dim3(SEED_TILE, SEED_TILE), "launching transpose_naive_kernel");
}

static mh_status shared_run(mh_context *ctx, const mh_args *x)
{
    return launch(ctx, x, transpose_shared_kernel<0>, SEED_TILE, dim3(SEED_TILE, SEED_TILE), "launching transpose_shared_kernel");
}

static mh_status padded_run(mh_context *ctx, const mh_args *x)
{
    return launch(ctx, x, transpose_shared_kernel<1>, SEED_TILE, dim3(SEED_TILE, SEED_TILE), "launching transpose_shared_kernel");
}

/* Tuning configurations of `coarse`: "t<tile side>-r<thread rows>" (T / r elements per
 * thread). [0] is the default, the fastest on the H100 (docs/transpose.md). */
static const char *const coarse_configs[] = {"t64-r8", "t32-r8", "t32-r4", "t32-r16", "t64-r16", NULL};
static const struct {
    kernel_fn kernel;
    int tile, rows;
} coarse_shapes[] = {{transpose_coarse_kernel<64, 8>, 64, 8},
                     {transpose_coarse_kernel<32, 8>, 32, 8},
                     {transpose_coarse_kernel<32, 4>, 32, 4},
                     {transpose_coarse_kernel<32, 16>, 32, 16},
                     {transpose_coarse_kernel<64, 16>, 64, 16}};

static int coarse_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return tiles_fit(&x->transpose, coarse_shapes[x->config].tile, why, len);
}

static mh_status coarse_run(mh_context *ctx, const mh_args *x)
{
    const int t = coarse_shapes[x->config].tile;
    return launch(ctx, x, coarse_shapes[x->config].kernel, t, dim3(t, coarse_shapes[x->config].rows),
                  "launching transpose_coarse_kernel");
}

static mh_status vector_run(mh_context *ctx, const mh_args *x)
{
    const mh_transpose_args *a = &x->transpose;
    if (a->rows == 1 || a->cols == 1) { /* a single row or column is laid out as its transpose: a copy */
        MH_CUDA_TRY(ctx, cudaMemcpyAsync(a->out, a->in, a->rows * a->cols * sizeof(float), cudaMemcpyDeviceToDevice,
                                         mh_stream(ctx)));
        return MH_OK;
    }
    return launch(ctx, x, transpose_vector_kernel, TILE, dim3(TILE / 4, TILE), "launching transpose_vector_kernel");
}

static const mh_row rows[] = {
    {{"transpose/naive", MH_OP_TRANSPOSE, MH_BACKEND_CUDA, 1, "global", "seed 002",
      "transposeMatrixSlow: coalesced reads, writes a row apart"},
     seed_supports, naive_run, NULL},
    {{"transpose/shared", MH_OP_TRANSPOSE, MH_BACKEND_CUDA, 2, "global+shared", "seed 002",
      "transposeMatrixFast: 16 x 16 shared tile, bank conflicts on the column reads"},
     seed_supports, shared_run, NULL},
    {{"transpose/padded", MH_OP_TRANSPOSE, MH_BACKEND_CUDA, 3, "global+shared", "ours",
      "the 16 x 16 tile padded by one column: no bank conflicts"},
     seed_supports, padded_run, NULL},
    {{"transpose/coarse", MH_OP_TRANSPOSE, MH_BACKEND_CUDA, 4, "global+shared", "ours",
      "64 x 8 threads move a padded 64 x 64 tile, 8 elements each"},
     coarse_supports, coarse_run, coarse_configs},
    {{"transpose/vector", MH_OP_TRANSPOSE, MH_BACKEND_CUDA, 5, "global+shared", "ours",
      "16-byte loads and stores through a padded 32 x 32 tile; 1 x n and n x 1 copied"},
     tile32_supports, vector_run, NULL},
};

MH_ROW_GROUP(mh_transpose_cuda_rows, rows)

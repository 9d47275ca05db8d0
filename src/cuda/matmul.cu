/* matmul on CUDA, seed 004's rungs as written, generalised to any m, k, n (bounds checks
 * where the seed assumed multiples) and 64-bit indexing: c[m x n] = a[m x k] . b[k x n].
 *
 *   naive     cuda_mul: one thread per output, a row of a against a column of b; by default
 *             verbatim with the seed's int indices (2x faster than with size_t on the H100,
 *             docs/matmul.md), the 64-bit kernel past 2^31 elements and as configurations
 *   bt-naive  cuda_mul_bt: the same with b read transposed (b_t[col][i], a stride of k
 *             between neighbouring threads): what uncoalesced reads cost
 *   tiled     32 x 32 tiles of a and b through shared memory (the seed's "previous part")
 *   bt-tiled  cuda_mul_bt_tiled: tiles, b read transposed from global memory and stored
 *             transposed in shared memory (Nds[tx][ty]: 32-way bank conflicts, as written)
 *   coarse    cuda_mul_coarsened: bt-tiled with each thread computing COARSE_FACTOR outputs
 *             of a row; configurations: factors 4 (the seed's), 2, 8, 16
 *
 * The seed's bt kernels compute a . b_t for a b_t given transposed; memhier's b is k x n, so
 * those rungs first transpose b into the context's workspace (transpose/coarse, counted in
 * their time: about 0.05 ms at 4096 x 4096, against tens of milliseconds of kernel). */
#include "common.cuh"

#include <limits.h>

#include <stdio.h>

enum { SEED_BLOCK = 16, TILE = 32 };

struct matmul_params {
    const float *a, *b; /* b: k x n, or n x k (b_t) for the bt rungs */
    float *c;
    size_t m, k, n;
};

static __global__ void matmul_naive_kernel(const matmul_params p)
{
    const size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y, col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= p.m || col >= p.n) return;
    float res = 0.0f;
    for (size_t i = 0; i < p.k; ++i) res += p.a[row * p.k + i] * p.b[i * p.n + col];
    p.c[row * p.n + col] = res;
}

/* cuda_mul as seed 004 wrote it, int indices and all, for products under 2^31 elements: with
 * int indices nvcc unrolls the k loop 16 deep (4 deep with size_t), twice the loads in flight:
 * 21.6 ms at 4096^3 with 32 x 32 blocks, ANCHORS' figure, against 44.3 for the 64-bit kernel. */
static __global__ void matmul_naive_i32_kernel(const matmul_params p)
{
    const float *a = p.a, *b = p.b;
    float *c = p.c;
    const int n = (int)p.m, m = (int)p.k, pp = (int)p.n;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < pp) {
        float res = 0.0;
        for (int i = 0; i < m; i++) res += a[row * m + i] * b[i * pp + col];
        c[row * pp + col] = res;
    }
}

static __global__ void matmul_bt_naive_kernel(const matmul_params p)
{
    const size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y, col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= p.m || col >= p.n) return;
    float res = 0.0f;
    for (size_t i = 0; i < p.k; ++i) res += p.a[row * p.k + i] * p.b[col * p.k + i];
    p.c[row * p.n + col] = res;
}

/* a's tile: Mds[ty][tx] = a[row][ph * TILE + tx], zero outside. */
static __device__ __forceinline__ float a_at(const matmul_params &p, size_t row, size_t kk)
{
    return row < p.m && kk < p.k ? p.a[row * p.k + kk] : 0.0f;
}

static __global__ void matmul_tiled_kernel(const matmul_params p)
{
    __shared__ float Mds[TILE][TILE], Nds[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const size_t row = (size_t)blockIdx.y * TILE + ty, col = (size_t)blockIdx.x * TILE + tx;
    float res = 0.0f;
    for (size_t k0 = 0; k0 < p.k; k0 += TILE) {
        Mds[ty][tx] = a_at(p, row, k0 + tx);
        Nds[ty][tx] = k0 + ty < p.k && col < p.n ? p.b[(k0 + ty) * p.n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) res += Mds[ty][i] * Nds[i][tx];
        __syncthreads();
    }
    if (row < p.m && col < p.n) p.c[row * p.n + col] = res;
}

/* cuda_mul_bt_tiled and, with CF > 1, cuda_mul_coarsened: b_t is n x k. For every phase,
 * the a tile once, then for each of the CF column tiles the b_t tile stored transposed. */
template <int CF>
static __global__ void __launch_bounds__(TILE * TILE) matmul_bt_tiled_kernel(const matmul_params p)
{
    __shared__ float Mds[TILE * TILE], Nds[TILE * TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const size_t row = (size_t)blockIdx.y * TILE + ty, col_start = (size_t)blockIdx.x * TILE * CF + tx;
    float pval[CF];
#pragma unroll
    for (int r = 0; r < CF; ++r) pval[r] = 0.0f;
    for (size_t k0 = 0; k0 < p.k; k0 += TILE) {
        Mds[ty * TILE + tx] = a_at(p, row, k0 + tx);
#pragma unroll
        for (int r = 0; r < CF; ++r) {
            const size_t col = col_start + (size_t)r * TILE;
            /* the seed's uncoalesced read: neighbouring threads (tx) a row of b_t (k floats) apart */
            Nds[tx * TILE + ty] = k0 + ty < p.k && col < p.n ? p.b[col * p.k + k0 + ty] : 0.0f;
            __syncthreads();
            for (int i = 0; i < TILE; ++i) pval[r] += Mds[ty * TILE + i] * Nds[tx * TILE + i];
            __syncthreads();
        }
    }
#pragma unroll
    for (int r = 0; r < CF; ++r) {
        const size_t col = col_start + (size_t)r * TILE;
        if (row < p.m && col < p.n) p.c[row * p.n + col] = pval[r];
    }
}

/* ---- launch, registry ------------------------------------------------------------------- */

typedef void (*kernel_fn)(const matmul_params);

static int grid_fits(const mh_matmul_args *a, size_t block_rows, size_t block_cols, char *why, size_t len)
{
    if (mh_ceil_div(a->m, block_rows) <= 65535 && mh_ceil_div(a->n, block_cols) <= MH_MAX_GRID_X) return 1;
    snprintf(why, len, "m = %zu needs more than 65535 blocks of %zu rows", a->m, block_rows);
    return 0;
}

static int seed_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return grid_fits(&x->matmul, SEED_BLOCK, SEED_BLOCK, why, len);
}

static int tile_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return grid_fits(&x->matmul, TILE, TILE, why, len);
}

static matmul_params params_of(const mh_matmul_args *a, const float *b)
{
    matmul_params p;
    p.a = a->a, p.b = b, p.c = a->c, p.m = a->m, p.k = a->k, p.n = a->n;
    return p;
}

/* b_t (n x k) in the context's workspace, by transpose/coarse. */
static mh_status transposed_b(mh_context *ctx, const mh_matmul_args *a, const float **bt)
{
    void *ws = NULL;
    MH_TRY(mh_workspace(ctx, a->k * a->n * sizeof(float), &ws));
    mh_args t;
    MH_TRY(mh_transpose_args_init(ctx, &t, a->b, a->k, a->n, (float *)ws));
    const mh_row *row = mh_row_of(mh_variant_lookup(MH_OP_TRANSPOSE, "coarse"));
    char why[256] = "";
    if (!row->supports(ctx, &t, why, sizeof why)) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "transposing b: %s", why);
    MH_TRY(row->run(ctx, &t));
    *bt = (const float *)ws;
    return MH_OK;
}

static dim3 grid_for(const mh_matmul_args *a, size_t rows, size_t cols)
{
    return dim3((unsigned)mh_ceil_div(a->n, cols), (unsigned)mh_ceil_div(a->m, rows));
}

/* One launch over blocks of rows x cols outputs; the bt rungs (B_T) read b transposed first. */
enum b_layout { B_AS_GIVEN, B_T };

static mh_status launch(mh_context *ctx, const mh_matmul_args *a, kernel_fn kernel, size_t rows, size_t cols, dim3 block,
                        b_layout layout, const char *name)
{
    const float *b = a->b;
    if (layout == B_T) MH_TRY(transposed_b(ctx, a, &b));
    kernel<<<grid_for(a, rows, cols), block, 0, mh_stream(ctx)>>>(params_of(a, b));
    return mh_cuda_status(ctx, cudaGetLastError(), name);
}

/* naive's block side and index width: "b32-i32" (the default: the seed's kernel as written with
 * 32 x 32 blocks, ANCHORS' 21.6 ms), "b16-i32", and "b16" / "b32", 64-bit indices throughout. The
 * -i32 configurations take the 64-bit kernel for products past 2^31 elements. */
static const char *const naive_configs[] = {"b32-i32", "b16-i32", "b16", "b32", NULL};
static const struct {
    unsigned side;
    bool i32;
} naive_shapes[] = {{32, true}, {SEED_BLOCK, true}, {SEED_BLOCK, false}, {32, false}}; /* naive_configs' order */

static int naive_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const unsigned side = naive_shapes[x->config].side;
    return grid_fits(&x->matmul, side, side, why, len);
}

static int fits_int(const mh_matmul_args *a)
{
    return a->m * a->k <= INT_MAX && a->k * a->n <= INT_MAX && a->m * a->n <= INT_MAX;
}

static mh_status naive_run(mh_context *ctx, const mh_args *x)
{
    const unsigned side = naive_shapes[x->config].side;
    const bool i32 = naive_shapes[x->config].i32 && fits_int(&x->matmul);
    return launch(ctx, &x->matmul, i32 ? matmul_naive_i32_kernel : matmul_naive_kernel, side, side, dim3(side, side),
                  B_AS_GIVEN, "launching matmul_naive_kernel");
}

static mh_status bt_naive_run(mh_context *ctx, const mh_args *x)
{
    return launch(ctx, &x->matmul, matmul_bt_naive_kernel, SEED_BLOCK, SEED_BLOCK, dim3(SEED_BLOCK, SEED_BLOCK), B_T,
                  "launching matmul_bt_naive_kernel");
}

static mh_status tiled_run(mh_context *ctx, const mh_args *x)
{
    return launch(ctx, &x->matmul, matmul_tiled_kernel, TILE, TILE, dim3(TILE, TILE), B_AS_GIVEN,
                  "launching matmul_tiled_kernel");
}

static mh_status bt_tiled_run(mh_context *ctx, const mh_args *x)
{
    return launch(ctx, &x->matmul, matmul_bt_tiled_kernel<1>, TILE, TILE, dim3(TILE, TILE), B_T,
                  "launching matmul_bt_tiled_kernel");
}

/* "cf<COARSE_FACTOR>"; [0] is seed 004's 4. */
static const char *const coarse_configs[] = {"cf4", "cf2", "cf8", "cf16", NULL};
static const struct {
    kernel_fn kernel;
    int factor;
} coarse_kernels[] = {{matmul_bt_tiled_kernel<4>, 4},
                      {matmul_bt_tiled_kernel<2>, 2},
                      {matmul_bt_tiled_kernel<8>, 8},
                      {matmul_bt_tiled_kernel<16>, 16}};

static mh_status coarse_run(mh_context *ctx, const mh_args *x)
{
    const size_t cols = (size_t)TILE * coarse_kernels[x->config].factor;
    return launch(ctx, &x->matmul, coarse_kernels[x->config].kernel, TILE, cols, dim3(TILE, TILE), B_T,
                  "launching matmul_bt_tiled_kernel (coarsened)");
}

static const mh_row rows[] = {
    {{"matmul/naive", MH_OP_MATMUL, MH_BACKEND_CUDA, 1, "global", "seed 004", "cuda_mul: one thread per output"},
     naive_supports, naive_run, naive_configs},
    {{"matmul/bt-naive", MH_OP_MATMUL, MH_BACKEND_CUDA, 2, "global", "seed 004",
      "cuda_mul_bt: b read transposed, uncoalesced on purpose"},
     seed_supports, bt_naive_run, NULL},
    {{"matmul/tiled", MH_OP_MATMUL, MH_BACKEND_CUDA, 3, "global+shared", "seed 004",
      "32 x 32 tiles of a and b in shared memory"},
     tile_supports, tiled_run, NULL},
    {{"matmul/bt-tiled", MH_OP_MATMUL, MH_BACKEND_CUDA, 4, "global+shared", "seed 004",
      "cuda_mul_bt_tiled: tiles, b read transposed and stored transposed"},
     tile_supports, bt_tiled_run, NULL},
    {{"matmul/coarse", MH_OP_MATMUL, MH_BACKEND_CUDA, 5, "global+shared", "seed 004",
      "cuda_mul_coarsened: bt-tiled, COARSE_FACTOR outputs per thread"},
     tile_supports, coarse_run, coarse_configs},
};

MH_ROW_GROUP(mh_matmul_cuda_rows, rows)

/* conv1d on CUDA: the seeds' ladder (000 and 003), each rung as the seeds wrote it,
 * generalised to any n, k and padding with 64-bit indexing.
 *
 *   naive        one thread per output, input and mask read from global memory (000, 003)
 *   const        naive, with the mask in constant memory: every lane of a warp reads the
 *                same tap, which the constant cache broadcasts
 *   smem         the block's input tile plus its halo staged in shared memory (000)
 *   smem+const   both (seed 000's final kernel)
 *   regblock     R outputs per thread, a window of R inputs shifted through registers, so
 *                one shared load feeds R FMAs (003)
 *   regblock-ldg regblock with seed 003's micro-optimisations: __ldg tile loads, the mask
 *                aligned to 64 bytes
 *   vec4         regblock-ldg with 16-byte global loads and stores (003 found no gain)
 *
 * Outputs are out[i] = sum_j X[i + j - lpad] * mask[j], X zero outside [0, n).
 * Constant memory is shared by the process, so it is reached only through a guarded ring
 * of slots (const_ring.h): concurrent calls on different streams each see their own mask. */
#include "common.cuh"
#include "const_ring.h"

#include <stdio.h>

enum { CONST_TAPS = 4096 }; /* per slot: 16 KB, 3 slots = 48 KB of the 64 KB bank */

static __constant__ __align__(64) float c_mask[MH_CONST_RING_SLOTS][CONST_TAPS];

static mh_const_ring mask_ring = {PTHREAD_MUTEX_INITIALIZER, c_mask, CONST_TAPS * sizeof(float),
                                  {0}, {{0}}};

/* ---- kernels ------------------------------------------------------------------------- */

/* PADDED: the window can leave [0, n), so each tap is bounds-checked (same/full). The
 * valid form keeps the seeds' unchecked inner loop. MASK_CONST: taps from c_mask[slot]. */
template <bool PADDED, bool MASK_CONST>
static __global__ void conv1d_naive_kernel(const float *in, const float *mask, float *out, size_t n,
                                           int k, size_t lpad, size_t out_n, int slot)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= out_n) return;
    const long long p0 = (long long)i - (long long)lpad;
    float sum = 0.0f;
    for (int j = 0; j < k; ++j) {
        const float m = MASK_CONST ? c_mask[slot][j] : mask[j];
        const long long p = p0 + j;
        if (!PADDED || (p >= 0 && p < (long long)n)) sum += in[p] * m;
    }
    out[i] = sum;
}

/* tile[t] = X[start + t] for t < len, cooperatively and coalesced. */
template <bool LDG>
static __device__ __forceinline__ void load_tile(float *tile, const float *in, size_t n,
                                                 long long start, int len)
{
    for (int t = threadIdx.x; t < len; t += blockDim.x) {
        const long long p = start + t;
        float v = 0.0f;
        if (p >= 0 && p < (long long)n) v = LDG ? __ldg(in + p) : in[p];
        tile[t] = v;
    }
}

template <bool MASK_CONST>
static __global__ void conv1d_smem_kernel(const float *in, const float *mask, float *out, size_t n,
                                          int k, size_t lpad, size_t out_n, int slot)
{
    extern __shared__ float tile[];
    const size_t block_first = (size_t)blockIdx.x * blockDim.x;
    load_tile<false>(tile, in, n, (long long)block_first - (long long)lpad, blockDim.x + k - 1);
    __syncthreads();
    const size_t i = block_first + threadIdx.x;
    if (i >= out_n) return;
    float sum = 0.0f;
    for (int j = 0; j < k; ++j) sum += tile[threadIdx.x + j] * (MASK_CONST ? c_mask[slot][j] : mask[j]);
    out[i] = sum;
}

/* The tile holds blockDim*R + k - 1 inputs plus R spare zeros: seed 003's loop loads one
 * element past its window on the last tap, which ran off the end of its tile. */
static __host__ __device__ int regblock_tile_len(int threads, int r, int k) { return threads * r + k - 1 + r; }

/* tile[t] = X[start + t] with 16-byte loads wherever the group of four is aligned and in range. */
static __device__ __forceinline__ void load_tile_vec4(float *tile, const float *in, size_t n,
                                                      long long start, int len)
{
    const bool aligned = (((uintptr_t)in + 4 * start) & 15) == 0; /* start may be negative: no pointer */
    for (int g = threadIdx.x; 4 * g < len; g += blockDim.x) {
        const long long p = start + 4LL * g;
        if (aligned && p >= 0 && p + 4 <= (long long)n && 4 * g + 4 <= len) {
            *reinterpret_cast<float4 *>(tile + 4 * g) = __ldg(reinterpret_cast<const float4 *>(in + p));
        } else {
            for (int e = 0; e < 4 && 4 * g + e < len; ++e)
                tile[4 * g + e] = (p + e >= 0 && p + e < (long long)n) ? __ldg(in + p + e) : 0.0f;
        }
    }
}

/* Seed 003's register blocking: R consecutive outputs per thread; per tap, one new input
 * from shared memory and one constant tap feed R FMAs. LOAD: 0 plain, 1 __ldg, 2 float4. */
template <int R, int LOAD>
static __global__ void conv1d_regblock_kernel(const float *in, float *out, size_t n, int k,
                                              size_t lpad, size_t out_n, int slot)
{
    extern __shared__ __align__(16) float tile[];
    const size_t block_first = (size_t)blockIdx.x * blockDim.x * R;
    const long long start = (long long)block_first - (long long)lpad;
    const int len = regblock_tile_len(blockDim.x, R, k);
    if (LOAD == 2)
        load_tile_vec4(tile, in, n, start, len);
    else
        load_tile<LOAD == 1>(tile, in, n, start, len);
    __syncthreads();
    const size_t first = block_first + (size_t)threadIdx.x * R;
    if (first >= out_n) return;

    const float *s = tile + threadIdx.x * R;
    float acc[R], win[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        acc[r] = 0.0f;
        win[r] = s[r];
    }
    for (int j = 0; j < k; ++j) {
        const float m = c_mask[slot][j];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] += m * win[r];
#pragma unroll
        for (int r = 0; r < R - 1; ++r) win[r] = win[r + 1];
        win[R - 1] = s[j + R];
    }
    if (LOAD == 2 && first + R <= out_n && mh_aligned16(out + first)) {
#pragma unroll
        for (int r = 0; r < R; r += 4)
            *reinterpret_cast<float4 *>(out + first + r) = make_float4(acc[r], acc[r + 1], acc[r + 2], acc[r + 3]);
        return;
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (first + r < out_n) out[first + r] = acc[r];
}

/* ---- launchers ----------------------------------------------------------------------- */

typedef struct launch_shape {
    int threads;
    int per_thread; /* outputs per thread */
} launch_shape;

static size_t blocks_for(const mh_conv1d_args *a, launch_shape s)
{
    return mh_ceil_div(a->out_n, (size_t)s.threads * s.per_thread);
}

static int grid_fits(const mh_conv1d_args *a, launch_shape s, char *why, size_t len)
{
    if (blocks_for(a, s) <= MH_MAX_GRID_X) return 1;
    snprintf(why, len, "%zu outputs need more than 2^31-1 blocks of %d", a->out_n,
             s.threads * s.per_thread);
    return 0;
}

static int k_fits_int(const mh_conv1d_args *a, char *why, size_t len)
{
    if (a->k <= (1u << 30)) return 1;
    snprintf(why, len, "k = %zu exceeds 2^30 taps", a->k);
    return 0;
}

static int k_fits_const(const mh_conv1d_args *a, char *why, size_t len)
{
    if (a->k <= CONST_TAPS) return 1;
    snprintf(why, len, "k = %zu taps exceed a constant-memory slot of %d floats (%d of the 64 KB "
             "are split into %d slots so that concurrent calls cannot race)",
             a->k, CONST_TAPS, CONST_TAPS * MH_CONST_RING_SLOTS * 4 / 1024, MH_CONST_RING_SLOTS);
    return 0;
}

static int smem_fits(size_t floats, char *why, size_t len)
{
    size_t bytes = floats * sizeof(float), limit = mh_smem_optin();
    if (bytes <= limit) return 1;
    snprintf(why, len, "its shared-memory tile of %zu bytes exceeds the %zu bytes a block may use",
             bytes, limit);
    return 0;
}

/* Launches under the constant-memory ring when the kernel reads c_mask. */
static mh_status with_const_mask(mh_context *ctx, const mh_args *x, mh_slot_launch launch)
{
    return mh_const_ring_launch(&mask_ring, ctx, x->conv1d.mask, x->conv1d.k * sizeof(float), launch, x);
}

static const launch_shape naive_shape = {512, 1}; /* seed 003's best block size */
static const launch_shape smem_shape = {256, 1};  /* seed 000's */

template <bool MASK_CONST>
static mh_status naive_launch(mh_context *ctx, const mh_args *x, int slot)
{
    const mh_conv1d_args *a = &x->conv1d;
    dim3 grid((unsigned)blocks_for(a, naive_shape));
    if (a->lpad || a->pad != MH_PAD_VALID)
        conv1d_naive_kernel<true, MASK_CONST><<<grid, naive_shape.threads, 0, mh_stream(ctx)>>>(
            a->in, a->mask, a->out, a->n, (int)a->k, a->lpad, a->out_n, slot);
    else
        conv1d_naive_kernel<false, MASK_CONST><<<grid, naive_shape.threads, 0, mh_stream(ctx)>>>(
            a->in, a->mask, a->out, a->n, (int)a->k, a->lpad, a->out_n, slot);
    return MH_LAUNCH_CHECK(ctx, "conv1d_naive_kernel");
}

template <bool MASK_CONST>
static mh_status smem_launch(mh_context *ctx, const mh_args *x, int slot)
{
    const mh_conv1d_args *a = &x->conv1d;
    size_t bytes = (smem_shape.threads + a->k - 1) * sizeof(float);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)conv1d_smem_kernel<MASK_CONST>));
    conv1d_smem_kernel<MASK_CONST><<<(unsigned)blocks_for(a, smem_shape), smem_shape.threads, bytes,
                                     mh_stream(ctx)>>>(a->in, a->mask, a->out, a->n, (int)a->k,
                                                       a->lpad, a->out_n, slot);
    return MH_LAUNCH_CHECK(ctx, "conv1d_smem_kernel");
}

/* Tuning configurations of the regblock rungs: "r<outputs per thread>-t<threads>".
 * Index 0 is the default, the fastest measured on the H100 (docs/conv1d.md). */
static const char *const regblock_configs[] = {"r16-t256", "r8-t128", "r8-t256", "r8-t512",
                                               "r16-t128", "r16-t512", NULL};

static launch_shape regblock_shape(int config)
{
    int r = 16, t = 256;
    sscanf(regblock_configs[config], "r%d-t%d", &r, &t);
    return launch_shape{t, r};
}

template <int R, int LOAD>
static mh_status regblock_launch_r(mh_context *ctx, const mh_conv1d_args *a, int slot, launch_shape s)
{
    size_t bytes = (size_t)regblock_tile_len(s.threads, R, (int)a->k) * sizeof(float);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)conv1d_regblock_kernel<R, LOAD>));
    conv1d_regblock_kernel<R, LOAD><<<(unsigned)blocks_for(a, s), s.threads, bytes, mh_stream(ctx)>>>(
        a->in, a->out, a->n, (int)a->k, a->lpad, a->out_n, slot);
    return MH_LAUNCH_CHECK(ctx, "conv1d_regblock_kernel");
}

template <int LOAD>
static mh_status regblock_launch(mh_context *ctx, const mh_args *x, int slot)
{
    const mh_conv1d_args *a = &x->conv1d;
    launch_shape s = regblock_shape(x->config);
    return s.per_thread == 8 ? regblock_launch_r<8, LOAD>(ctx, a, slot, s)
                             : regblock_launch_r<16, LOAD>(ctx, a, slot, s);
}

/* ---- registry rows ------------------------------------------------------------------- */

static int naive_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv1d_args *a = &x->conv1d;
    return mh_conv1d_zero_pad_only(a, why, len) && k_fits_int(a, why, len) && grid_fits(a, naive_shape, why, len);
}

static int const_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    return k_fits_const(&x->conv1d, why, len) && naive_supports(ctx, x, why, len);
}

static int smem_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv1d_args *a = &x->conv1d;
    return mh_conv1d_zero_pad_only(a, why, len) && k_fits_int(a, why, len) && grid_fits(a, smem_shape, why, len) &&
           smem_fits(smem_shape.threads + a->k - 1, why, len);
}

static int smem_const_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    return k_fits_const(&x->conv1d, why, len) && smem_supports(ctx, x, why, len);
}

static int regblock_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv1d_args *a = &x->conv1d;
    launch_shape s = regblock_shape(x->config);
    return mh_conv1d_zero_pad_only(a, why, len) && k_fits_const(a, why, len) && grid_fits(a, s, why, len) &&
           smem_fits((size_t)regblock_tile_len(s.threads, s.per_thread, (int)a->k), why, len);
}

static mh_status naive_run(mh_context *ctx, const mh_args *a) { return naive_launch<false>(ctx, a, 0); }
static mh_status const_run(mh_context *ctx, const mh_args *a) { return with_const_mask(ctx, a, naive_launch<true>); }
static mh_status smem_run(mh_context *ctx, const mh_args *a) { return smem_launch<false>(ctx, a, 0); }
static mh_status smem_const_run(mh_context *ctx, const mh_args *a) { return with_const_mask(ctx, a, smem_launch<true>); }
static mh_status regblock_run(mh_context *ctx, const mh_args *a) { return with_const_mask(ctx, a, regblock_launch<0>); }
static mh_status regblock_ldg_run(mh_context *ctx, const mh_args *a) { return with_const_mask(ctx, a, regblock_launch<1>); }
static mh_status vec4_run(mh_context *ctx, const mh_args *a) { return with_const_mask(ctx, a, regblock_launch<2>); }

static const mh_row rows[] = {
    {{"conv1d/naive", MH_OP_CONV1D, MH_BACKEND_CUDA, 1, "global", "seed 000, 003",
      "one thread per output; input and mask from global memory"},
     naive_supports, naive_run, NULL},
    {{"conv1d/const", MH_OP_CONV1D, MH_BACKEND_CUDA, 2, "global+constant", "seed 000",
      "naive with the mask in constant memory (broadcast taps)"},
     const_supports, const_run, NULL},
    {{"conv1d/smem", MH_OP_CONV1D, MH_BACKEND_CUDA, 3, "global+shared", "seed 000",
      "input tile plus halo staged in shared memory"},
     smem_supports, smem_run, NULL},
    {{"conv1d/smem+const", MH_OP_CONV1D, MH_BACKEND_CUDA, 4, "global+shared+constant", "seed 000",
      "shared-memory tile and constant-memory mask (seed 000's final kernel)"},
     smem_const_supports, smem_const_run, NULL},
    {{"conv1d/regblock", MH_OP_CONV1D, MH_BACKEND_CUDA, 5, "global+shared+constant+registers",
      "seed 003", "R outputs per thread from a register window shifted one tap at a time"},
     regblock_supports, regblock_run, regblock_configs},
    {{"conv1d/regblock-ldg", MH_OP_CONV1D, MH_BACKEND_CUDA, 6, "global+shared+constant+registers",
      "seed 003", "regblock with __ldg tile loads and a 64-byte aligned mask"},
     regblock_supports, regblock_ldg_run, regblock_configs},
    {{"conv1d/vec4", MH_OP_CONV1D, MH_BACKEND_CUDA, 7, "global+shared+constant+registers",
      "seed 003", "regblock-ldg with 16-byte global loads and stores"},
     regblock_supports, vec4_run, regblock_configs},
};

MH_ROW_GROUP(mh_conv1d_cuda_rows, rows)

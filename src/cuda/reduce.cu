/* reduce (sum of float32) on CUDA: seed 004's reduction trees as written, generalised to
 * any n and 64-bit indexing, then ours.
 *
 *   atomic         one atomicAdd per element into the sum (seed 004's first vector_sum)
 *   tree           vector_sum_red_tree: 1024 threads, pairs summed in shared memory by a
 *                  divergent tree (threads t % stride == 0 stay active), a block's sum added
 *                  atomically
 *   consecutive    vector_sum_red_tree_consecutive: the active threads stay contiguous
 *   coarse         vector_sum_red_tree_coarsened: each thread first sums 2 x COARSE_FACTOR
 *                  inputs a block apart; configurations: factors 2 (the seed's), 4, 8, 16
 *   shuffle        ours: a grid of a few blocks per SM strides over the input, each thread
 *                  summing in a register; warps reduce by shuffles, one atomicAdd per block
 *   vector         shuffle with 16-byte loads (the unaligned head and the tail element-wise),
 *                  UNROLL of them issued before any is summed, in strip-mined 16 KB tiles per
 *                  block (the default); configurations: 4, 8 or 1 in flight, grid-stride,
 *                  streaming (evict-first) loads or 256-byte L2 fetches. One launch: each block
 *                  leaves its sum in the workspace and the last block to finish adds them in
 *                  block order (no zeroing first, the same bits on a device every call)
 *   deterministic  ours: two passes in a fixed order. Pass 1 cuts the input into chunks of
 *                  16384 and each chunk into 256 slices (slice s: elements s, s + 256, ...,
 *                  summed in order), then adds the 256 slice sums by a fixed pairwise tree;
 *                  pass 2 does the same over the chunk sums. The order depends on n alone,
 *                  not on the device, the grid or the block size (64, 128 or 256 threads are
 *                  configurations): the same bits every time.
 * Every atomic variant (atomic to shuffle) zeroes the sum first (cudaMemsetAsync on the context's
 * stream); their order of additions, hence their last bits, varies from run to run. vector's
 * order is its grid's (the device's and n's): the same bits on a device every run. */
#include "common.cuh"

#include <stdio.h>

enum { SEED_TILE = 1024, THREADS = 256, SLICES = 256, CHUNK = 16384 };

static __global__ void reduce_atomic_kernel(const float *in, size_t n, float *sum)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, in[i]);
}

static __global__ void reduce_tree_kernel(const float *in, size_t n, float *sum)
{
    __shared__ float out_s[2 * SEED_TILE];
    const unsigned t = threadIdx.x;
    const size_t idx = 2 * (size_t)blockIdx.x * blockDim.x + 2 * t;
    out_s[2 * t] = idx + 1 < n ? in[idx] + in[idx + 1] : idx < n ? in[idx] : 0.0f;
    __syncthreads();
    for (unsigned stride = 2; stride < 2 * SEED_TILE; stride *= 2) {
        if (t % stride == 0 && 2 * t + stride < 2 * SEED_TILE) out_s[2 * t] += out_s[2 * t + stride];
        __syncthreads();
    }
    if (t == 0) atomicAdd(sum, out_s[0]);
}

/* vector_sum_red_tree_consecutive (CF = 1) and vector_sum_red_tree_coarsened (CF > 1). */
template <int CF>
static __global__ void reduce_consecutive_kernel(const float *in, size_t n, float *sum)
{
    __shared__ float out_s[SEED_TILE];
    const unsigned t = threadIdx.x;
    const size_t first = 2 * (size_t)CF * blockIdx.x * blockDim.x, end = first + 2 * (size_t)CF * blockDim.x;
    float s = 0.0f;
    for (size_t i = first + t; i < end; i += SEED_TILE)
        if (i < n) s += in[i];
    out_s[t] = s;
    __syncthreads();
    for (unsigned stride = SEED_TILE / 2; stride >= 1; stride /= 2) {
        if (t < stride) out_s[t] += out_s[t + stride];
        __syncthreads();
    }
    if (t == 0) atomicAdd(sum, out_s[0]);
}

/* The block's sum of every thread's v, in thread 0 (THREADS threads). */
static __device__ __forceinline__ float block_sum(float v)
{
    __shared__ float warp_sums[THREADS / 32];
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0f;
    if (threadIdx.x < 32)
        for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

static __global__ void __launch_bounds__(THREADS) reduce_shuffle_kernel(const float *in, size_t n, float *sum)
{
    const size_t stride = (size_t)gridDim.x * THREADS;
    float s = 0.0f;
    for (size_t i = (size_t)blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) s += in[i];
    s = block_sum(s);
    if (threadIdx.x == 0) atomicAdd(sum, s);
}

/* How the 16-byte body is read: the read-only path (LDG.NC); streaming (evict first: the input
 * is read once, so it need not displace anything in L2); or the read-only path asking L2 to
 * fetch the whole 256-byte block around each access (fewer, larger DRAM requests). */
enum load_kind { LOAD_NC, LOAD_STREAM, LOAD_L2_256 };

template <load_kind L>
static __device__ __forceinline__ float4 body_load(const float4 *p)
{
    if (L == LOAD_STREAM) return __ldcs(p);
    if (L == LOAD_NC) return __ldg(p);
    float4 v;
    asm("ld.global.nc.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
    return v;
}

static __device__ __forceinline__ float sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

/* head: elements before the first 16-byte boundary; nv: float4s after it. UNROLL loads are
 * issued before any is added (UNROLL x 16 bytes in flight per thread), into UNROLL independent
 * sums. Dealt grid-stride (thread g takes float4s g, g + G, ... for G threads in all, its UNROLL
 * loads G apart), or TILE: in tiles of UNROLL x THREADS float4s, tile t to block t mod grid, a
 * block's UNROLL loads contiguous (16 KB per block and step at UNROLL 4, as CUB's strip-mined
 * tiles; a contiguous range per block measured 6% slower). */
template <int UNROLL, load_kind L, bool TILE>
static __global__ void __launch_bounds__(THREADS) reduce_vector_kernel(const float *in, size_t n, size_t head,
                                                                       size_t nv, float *partials, unsigned *ticket,
                                                                       float *sum)
{
    const size_t stride = (size_t)gridDim.x * THREADS, gid = (size_t)blockIdx.x * THREADS + threadIdx.x;
    const float4 *v4 = reinterpret_cast<const float4 *>(in + head);
    float part[UNROLL] = {};
    size_t i = gid; /* where the grid-stride remainder starts */
    if (TILE) {
        const size_t tile = (size_t)UNROLL * THREADS, tiles = nv / tile;
        for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
            const float4 *p = v4 + t * tile + threadIdx.x;
            float4 v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) v[u] = body_load<L>(p + u * THREADS);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) part[u] += sum4(v[u]);
        }
        i = tiles * tile + gid;
    } else {
        for (; i + (UNROLL - 1) * stride < nv; i += UNROLL * stride) {
            float4 v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) v[u] = body_load<L>(v4 + i + u * stride);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) part[u] += sum4(v[u]);
        }
    }
    for (; i < nv; i += stride) part[0] += sum4(body_load<L>(v4 + i));
    float s = 0.0f;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) s += part[u];
    /* the head and the tail, element-wise */
    const size_t tail = head + 4 * nv;
    if (gid < head) s += in[gid];
    for (size_t k = tail + gid; k < n; k += stride) s += in[k];
    s = block_sum(s);
    /* The ticket counts the blocks done and wraps to 0 as the last takes it (atomicInc's limit),
     * so each launch finds it at 0; the last block reads the others' sums from L2. */
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s;
        __threadfence();
        last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    float t = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += THREADS) t += __ldcg(partials + b);
    t = block_sum(t);
    if (threadIdx.x == 0) *sum = t;
}

/* The deterministic order over in[0 .. count): 256 slices summed in index order, then a fixed
 * pairwise tree over the slice sums; T threads share the slices. Result in slot 0. */
template <int T>
static __device__ float fixed_order_sum(const float *in, size_t count, float *slots)
{
    for (int s = threadIdx.x; s < SLICES; s += T) {
        float acc = 0.0f;
        for (size_t i = s; i < count; i += SLICES) acc += in[i];
        slots[s] = acc;
    }
    __syncthreads();
    for (int w = SLICES / 2; w >= 1; w /= 2) {
        for (int s = threadIdx.x; s < w; s += T) slots[s] += slots[s + w];
        __syncthreads();
    }
    return slots[0];
}

template <int T>
static __global__ void __launch_bounds__(T) reduce_chunks_kernel(const float *in, size_t n, float *partials)
{
    __shared__ float slots[SLICES];
    const size_t first = (size_t)blockIdx.x * CHUNK, count = n - first < CHUNK ? n - first : CHUNK;
    const float s = fixed_order_sum<T>(in + first, count, slots);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

template <int T>
static __global__ void __launch_bounds__(T) reduce_final_kernel(const float *partials, size_t count, float *sum)
{
    __shared__ float slots[SLICES];
    const float s = fixed_order_sum<T>(partials, count, slots);
    if (threadIdx.x == 0) *sum = s;
}

/* ---- launch, registry ------------------------------------------------------------------- */

static mh_status zero_sum(mh_context *ctx, const mh_reduce_args *a)
{
    return mh_cuda_status(ctx, cudaMemsetAsync(a->sum, 0, sizeof(float), mh_stream(ctx)), "zeroing the sum");
}

static int blocks_fit(const mh_args *x, size_t per_block, char *why, size_t len)
{
    if (mh_ceil_div(x->reduce.n, per_block) <= MH_MAX_GRID_X) return 1;
    snprintf(why, len, "n = %zu needs more than 2^31-1 blocks of %zu elements", x->reduce.n, per_block);
    return 0;
}

static int atomic_supports(const mh_context *, const mh_args *x, char *why, size_t len) { return blocks_fit(x, 256, why, len); }
static int seed_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return blocks_fit(x, 2 * SEED_TILE, why, len);
}
static int any_supports(const mh_context *, const mh_args *, char *, size_t) { return 1; }
static int chunk_supports(const mh_context *, const mh_args *x, char *why, size_t len) { return blocks_fit(x, CHUNK, why, len); }

typedef void (*sum_kernel)(const float *, size_t, float *);

/* What the atomic variants share: zero the sum, then (when there is input) one launch. */
static mh_status zero_then_launch(mh_context *ctx, const mh_reduce_args *a, sum_kernel k, size_t blocks, int threads,
                                  const char *name)
{
    MH_TRY(zero_sum(ctx, a));
    if (a->n == 0) return MH_OK;
    k<<<(unsigned)blocks, threads, 0, mh_stream(ctx)>>>(a->in, a->n, a->sum);
    return mh_cuda_status(ctx, cudaGetLastError(), name);
}

static mh_status atomic_run(mh_context *ctx, const mh_args *x)
{
    return zero_then_launch(ctx, &x->reduce, reduce_atomic_kernel, mh_ceil_div(x->reduce.n, 256), 256,
                            "launching reduce_atomic_kernel");
}

static mh_status tree_run(mh_context *ctx, const mh_args *x)
{
    return zero_then_launch(ctx, &x->reduce, reduce_tree_kernel, mh_ceil_div(x->reduce.n, 2 * SEED_TILE), SEED_TILE,
                            "launching reduce_tree_kernel");
}

static mh_status consecutive_run(mh_context *ctx, const mh_args *x)
{
    return zero_then_launch(ctx, &x->reduce, reduce_consecutive_kernel<1>, mh_ceil_div(x->reduce.n, 2 * SEED_TILE),
                            SEED_TILE, "launching reduce_consecutive_kernel");
}

/* "cf<COARSE_FACTOR>"; [0] is seed 004's 2. */
static const char *const coarse_configs[] = {"cf2", "cf4", "cf8", "cf16", NULL};
static const struct {
    sum_kernel kernel;
    int factor;
} coarse_kernels[] = {{reduce_consecutive_kernel<2>, 2},
                      {reduce_consecutive_kernel<4>, 4},
                      {reduce_consecutive_kernel<8>, 8},
                      {reduce_consecutive_kernel<16>, 16}};

static size_t coarse_per_block(const mh_args *x) { return 2 * (size_t)coarse_kernels[x->config].factor * SEED_TILE; }

static int coarse_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return blocks_fit(x, coarse_per_block(x), why, len);
}

static mh_status coarse_run(mh_context *ctx, const mh_args *x)
{
    return zero_then_launch(ctx, &x->reduce, coarse_kernels[x->config].kernel, mh_ceil_div(x->reduce.n, coarse_per_block(x)),
                            SEED_TILE, "launching reduce_consecutive_kernel (coarsened)");
}

static mh_status shuffle_run(mh_context *ctx, const mh_args *x)
{
    return zero_then_launch(ctx, &x->reduce, reduce_shuffle_kernel, mh_resident_blocks(ctx, x->reduce.n, THREADS), THREADS,
                            "launching reduce_shuffle_kernel");
}

/* "u<loads in flight per thread>[-tile: strip-mined tiles][-cs: streaming loads][-l2: 256-byte
 * L2 fetches]"; [0] is the default: on the H100 at 2^28 u4-tile reads at 3.12 TB/s, 2% ahead of
 * CUB and of every grid-stride configuration, which all run at CUB's rate (docs/reduce.md). */
static const char *const vector_configs[] = {"u4-tile", "u4", "u8-tile", "u4-tile-l2", "u4-l2", "u4-cs", "u1", NULL};
typedef void (*vector_kernel)(const float *, size_t, size_t, size_t, float *, unsigned *, float *);
static const vector_kernel vector_kernels[] = {
    reduce_vector_kernel<4, LOAD_NC, true>,     reduce_vector_kernel<4, LOAD_NC, false>,
    reduce_vector_kernel<8, LOAD_NC, true>,     reduce_vector_kernel<4, LOAD_L2_256, true>,
    reduce_vector_kernel<4, LOAD_L2_256, false>, reduce_vector_kernel<4, LOAD_STREAM, false>,
    reduce_vector_kernel<1, LOAD_NC, false>};

/* The context's ticket for vector's last block: zeroed once, when the slot is made; every launch
 * leaves it at 0 (reduce_vector_kernel). */
static mh_status vector_ticket(mh_context *ctx, unsigned **ticket)
{
    const mh_slot *slot = mh_context_slot(ctx, MH_SLOT_REDUCE_TICKET);
    if (!slot) return MH_ERR_CUDA; /* the fence's detail is on ctx */
    const int made_now = slot->data == NULL;
    void *p = NULL;
    MH_TRY(mh_slot_buffer(ctx, MH_SLOT_REDUCE_TICKET, "reduce's ticket", sizeof(unsigned), &p));
    *ticket = (unsigned *)p;
    if (!made_now) return MH_OK;
    return mh_cuda_status(ctx, cudaMemsetAsync(p, 0, sizeof(unsigned), mh_stream(ctx)), "zeroing reduce's ticket");
}

static mh_status vector_run(mh_context *ctx, const mh_args *x)
{
    const mh_reduce_args *a = &x->reduce;
    if (a->n == 0) return zero_sum(ctx, a);
    size_t head = mh_head_to_16(a->in, sizeof(float));
    if (head > a->n) head = a->n;
    const size_t nv = (a->n - head) / 4, blocks = mh_resident_blocks(ctx, a->n, THREADS * 4);
    unsigned *ticket = NULL;
    void *partials = NULL;
    MH_TRY(vector_ticket(ctx, &ticket));
    MH_TRY(mh_workspace(ctx, blocks * sizeof(float), &partials));
    vector_kernels[x->config]<<<(unsigned)blocks, THREADS, 0, mh_stream(ctx)>>>(a->in, a->n, head, nv,
                                                                                  (float *)partials, ticket, a->sum);
    return MH_LAUNCH_CHECK(ctx, "reduce_vector_kernel");
}

/* "t<threads per block>": the order of additions, hence the bits, are the same for all. */
static const char *const deterministic_configs[] = {"t256", "t128", "t64", NULL};

template <int T>
static mh_status deterministic_passes(mh_context *ctx, const mh_reduce_args *a, float *partials, size_t chunks)
{
    reduce_chunks_kernel<T><<<(unsigned)chunks, T, 0, mh_stream(ctx)>>>(a->in, a->n, partials);
    MH_TRY(MH_LAUNCH_CHECK(ctx, "reduce_chunks_kernel"));
    reduce_final_kernel<T><<<1, T, 0, mh_stream(ctx)>>>(partials, chunks, a->sum);
    return MH_LAUNCH_CHECK(ctx, "reduce_final_kernel");
}

static mh_status deterministic_run(mh_context *ctx, const mh_args *x)
{
    const mh_reduce_args *a = &x->reduce;
    if (a->n == 0) return zero_sum(ctx, a);
    const size_t chunks = mh_ceil_div(a->n, CHUNK);
    void *ws = NULL;
    MH_TRY(mh_workspace(ctx, chunks * sizeof(float), &ws));
    float *partials = (float *)ws;
    switch (x->config) {
    case 1: return deterministic_passes<128>(ctx, a, partials, chunks);
    case 2: return deterministic_passes<64>(ctx, a, partials, chunks);
    default: return deterministic_passes<256>(ctx, a, partials, chunks);
    }
}

static const mh_row rows[] = {
    {{"reduce/atomic", MH_OP_REDUCE, MH_BACKEND_CUDA, 1, "global", "seed 004", "one atomicAdd per element"},
     atomic_supports, atomic_run, NULL},
    {{"reduce/tree", MH_OP_REDUCE, MH_BACKEND_CUDA, 2, "global+shared", "seed 004",
      "vector_sum_red_tree: divergent shared-memory tree"},
     seed_supports, tree_run, NULL},
    {{"reduce/consecutive", MH_OP_REDUCE, MH_BACKEND_CUDA, 3, "global+shared", "seed 004",
      "vector_sum_red_tree_consecutive: convergent tree"},
     seed_supports, consecutive_run, NULL},
    {{"reduce/coarse", MH_OP_REDUCE, MH_BACKEND_CUDA, 4, "global+shared", "seed 004",
      "vector_sum_red_tree_coarsened: 2 x COARSE_FACTOR inputs per thread first"},
     coarse_supports, coarse_run, coarse_configs},
    {{"reduce/shuffle", MH_OP_REDUCE, MH_BACKEND_CUDA, 5, "global+registers+shuffle", "ours",
      "grid-stride sums in registers, warp shuffles, one atomic per block"},
     any_supports, shuffle_run, NULL},
    {{"reduce/vector", MH_OP_REDUCE, MH_BACKEND_CUDA, 6, "global+registers+shuffle", "ours",
      "shuffle with 16-byte loads, 4 in flight per thread, 16 KB tiles per block, the last block adds"},
     any_supports, vector_run, vector_configs},
    {{"reduce/deterministic", MH_OP_REDUCE, MH_BACKEND_CUDA, 7, "global+shared", "ours",
      "two passes in a fixed order: the same bits on every run and configuration"},
     chunk_supports, deterministic_run, deterministic_configs},
};

MH_ROW_GROUP(mh_reduce_cuda_rows, rows)

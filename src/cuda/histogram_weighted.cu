/* Weighted histograms on CUDA (mh_histogram_weighted): each counted value adds its float32
 * weight to its bin, in double; int32 values 0 .. num_bins - 1, or float32 values in numpy's
 * bins (core/histogram_rule.h).
 *
 *   weighted-atomic  one global double atomicAdd per value (the seed's global-atomic histogram
 *                    with weights): the order of additions, hence the last bits, varies
 *   weighted-shared  ours: as weighted below, but the weights off the warp's integer grid
 *                    (see "limbs") added to its copy by a shared-memory double atomicAdd (the
 *                    order within a warp's step varies), and one resident grid of blocks, its
 *                    chunks as large as that needs
 *   weighted         ours, deterministic: the input cut into chunks whose size depends on n
 *                    alone, a block a chunk; each warp keeps its own copy of the bins in
 *                    shared memory (num_bins + 1 doubles, the last for the values not
 *                    counted), so no two warps touch one copy. Up to 1024 bins each weight
 *                    goes to the warp's integer words where it can (exact, in any order);
 *                    the rest, and every weight past 1024 bins, go in lane order: in each
 *                    step a warp's lanes that share a bin find each other (__match_any_sync),
 *                    the lowest of them adds their weights in lane order and writes the sum,
 *                    no atomics. The warps' copies are added in warp order into the chunk's
 *                    partial sums, and a finishing pass adds the chunks' in a fixed order: the
 *                    same bits on every run, whatever the device. Up to 2048 bins (8 copies of
 *                    2049 doubles: 131 KB of shared memory; to 1024 bins the words double it).
 * Between explicit edges the chunk rows stage the bins in shared memory after the copies
 * (histogram_table.cuh), as the counting rows do; uniform bins take the rule's float32 guess,
 * which reads no memory: a table load a value costs more in the shared pipe than the guess's
 * arithmetic. */
#include "common.cuh"
#include "histogram_table.cuh"

#include <stdio.h>

enum { WBLOCK = 256, WARPS = WBLOCK / 32, WEIGHTED_MAX_BINS = 2048 };

/* The values of a chunks kernel: int32, float32 binned by the rule, float32 through the table. */
enum { INTS = 0, RULE = 1, TABLE = 2 };

/* The bin of an int32 value, or nb where it is not counted. */
static __device__ __forceinline__ int int_bin(int v, int nb) { return v >= 0 && v < nb ? v : nb; }

/* Value i's bin, or nb where it is not counted. */
template <bool FLOATS>
static __device__ __forceinline__ int bin_of(const void *in, size_t i, int nb, const mh_hist_float &f)
{
    if (FLOATS) return mh_hist_float_bin(&f, nb, __ldg((const float *)in + i));
    return int_bin(__ldg((const int *)in + i), nb);
}

/* A float32 value's bin in a chunks kernel: through the staged table, or by the rule. */
template <int VALUES>
static __device__ __forceinline__ int float_bin(const mh_hist_table &t, const mh_hist_float &f, int nb, float x)
{
    return VALUES == TABLE ? mh_hist_table_bin(&t, x) : mh_hist_float_bin(&f, nb, x);
}

template <bool FLOATS>
static __global__ void weighted_atomic_kernel(const void *in, const float *w, size_t n, int nb, mh_hist_float f,
                                              double *sums, double *outside)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const int b = bin_of<FLOATS>(in, i, nb, f);
        double *slot = b < nb ? sums + b : outside;
        if (slot) atomicAdd(slot, (double)__ldg(w + i));
    }
}

/* Adds lane's weight (when it has one) to bin b of the warp's copy: the lanes sharing b add
 * their weights in lane order, the lowest of them writes. Every lane runs the same rounds (the
 * largest group's size), fetching its group's k-th weight in round k: the warp stays converged
 * (a loop per group would run the groups one after another). */
static __device__ __forceinline__ void add_in_lane_order(double *copy, bool have, int b, float wt, unsigned lane)
{
    const int key = have ? b : -1;
    const unsigned group = __match_any_sync(0xffffffffu, key);
    const unsigned rounds = __reduce_max_sync(0xffffffffu, (unsigned)__popc(group));
    double s = 0.0;
    unsigned rest = group;
    for (unsigned k = 0; k < rounds; ++k) {
        const float v = __shfl_sync(0xffffffffu, wt, rest ? __ffs(rest) - 1 : (int)lane);
        if (rest) s += (double)v;
        rest &= rest - 1;
    }
    if (have && lane == (unsigned)(__ffs(group) - 1)) copy[b] += s;
    __syncwarp();
}

/* ---- exact integer sums ("limbs") -------------------------------------------------------
 * Shared memory has native 32-bit integer atomics but no double add (that is a compare-and-
 * swap loop, whose retries on random bins fill the shared pipe). So each warp places its
 * weights on a grid of 2^(top - 150 - RANGE), top the largest float32 exponent field the warp
 * has seen: a weight within RANGE binades of it is an integer q below 2^(24 + RANGE) on that
 * grid, added as hi = q >> LO_BITS and lo = q mod 2^LO_BITS (the weight's sign on both) to its
 * bin's two int32 words. Every PERIOD_STEPS steps, and before top rises, the warp moves its
 * words into its double copy: hi * 2^LO_BITS + lo is below 2^53, so each period's sum is exact
 * and rounds once. Integer sums do not depend on order, so the deterministic row keeps its
 * bits. Weights further below top, subnormal, Inf or NaN are added in double as before. */
enum { LO_BITS = 21, RANGE = 18, PERIOD_STEPS = 8, LIMB_MAX_BINS = 1024 };

/* Shared memory a bin slot takes, in doubles, for each warp: its double copy, and with LIMBS its
 * two int32 words (the room of one more double). */
static __host__ __device__ constexpr int doubles_a_slot(bool limbs) { return limbs ? 2 : 1; }

/* The most one warp adds to one bin's word in a period: 4 values a lane a step. */
static_assert((((1LL << (24 + RANGE - LO_BITS)) - 1) * 128 * PERIOD_STEPS) < (1LL << 31), "hi word overflows");
static_assert((((1LL << LO_BITS) - 1) * 128 * PERIOD_STEPS) < (1LL << 31), "lo word overflows");
static_assert((1LL << (24 + RANGE)) * 128 * PERIOD_STEPS <= (1LL << 53), "a period's sum is not exact in double");

/* One warp's words (hi[slots], then lo[slots]), its grid's top (0: none yet) and the steps of
 * the period so far. */
struct warp_limbs {
    int *hi, *lo;
    unsigned top;
    int steps;
};

/* The warp moves every nonzero pair of words into its double copy and zeroes them. */
static __device__ void limbs_flush(warp_limbs &L, double *copy, int slots, unsigned lane)
{
    __syncwarp();
    if (L.top) {
        const double unit = __longlong_as_double((long long)((int)L.top - 150 - RANGE + 1023) << 52);
        for (int k = (int)lane; k < slots; k += 32) {
            const int hi = L.hi[k], lo = L.lo[k];
            if (!(hi | lo)) continue;
            copy[k] += (double)((long long)hi * (1LL << LO_BITS) + lo) * unit;
            L.hi[k] = 0, L.lo[k] = 0;
        }
    }
    L.steps = 0;
    __syncwarp();
}

/* Adds weight w (its bits) to bin b's words when it lies on the grid; returns whether it did. */
static __device__ __forceinline__ bool limbs_add(const warp_limbs &L, int b, unsigned bits)
{
    const unsigned field = (bits >> 23) & 0xffu;
    const int s = (int)field - ((int)L.top - RANGE);
    if (field == 0 || field == 0xffu || s < 0) return false;
    const unsigned m = (bits & 0x7fffffu) | 0x800000u;
    int lo = (int)((m << s) & ((1u << LO_BITS) - 1)), hi = (int)(m >> (LO_BITS - s));
    if (bits >> 31) lo = -lo, hi = -hi;
    atomicAdd(L.hi + b, hi);
    atomicAdd(L.lo + b, lo);
    return true;
}

/* One step's four values a lane (b < 0: none) through the warp's words; the rest in double:
 * IN_ORDER in lane order, else by the shared double atomic. */
template <bool IN_ORDER>
static __device__ __forceinline__ void limbs_step(warp_limbs &L, double *copy, int slots, const int b[4],
                                                  const float wt[4], unsigned lane)
{
    unsigned bits[4], most = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        bits[j] = __float_as_uint(wt[j]);
        const unsigned field = (bits[j] >> 23) & 0xffu;
        if (b[j] >= 0 && field != 0xffu) most = max(most, field);
    }
    most = __reduce_max_sync(0xffffffffu, most);
    if (most > L.top) {
        limbs_flush(L, copy, slots, lane);
        L.top = most;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const bool counted = b[j] >= 0;
        const bool rest = counted && !limbs_add(L, b[j], bits[j]) && (bits[j] << 1) != 0;
        if (IN_ORDER) {
            if (__any_sync(0xffffffffu, rest)) add_in_lane_order(copy, rest, b[j], wt[j], lane);
        } else if (rest) {
            atomicAdd(copy + b[j], (double)wt[j]);
        }
    }
    if (++L.steps == PERIOD_STEPS) limbs_flush(L, copy, slots, lane);
}

/* One step's four values a lane (b < 0: none) straight into the warp's double copy: IN_ORDER in
 * lane order, else by the shared double atomic. */
template <bool IN_ORDER>
static __device__ __forceinline__ void double_step(double *copy, const int b[4], const float wt[4], unsigned lane)
{
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if (IN_ORDER) add_in_lane_order(copy, b[j] >= 0, b[j], wt[j], lane);
        else if (b[j] >= 0) atomicAdd(copy + b[j], (double)wt[j]);
    }
}

/* Block b sums chunk b (values [b * chunk, (b + 1) * chunk) of n) into partials[b * (nb + 1) ..]:
 * 4 values a thread a step (16-byte loads where both arrays allow). IN_ORDER: each step's values
 * added in the order value 4t + j, j = 0 .. 3, then the lanes (add_in_lane_order); else by
 * shared double atomics, in whatever order they land. LIMBS: the weights on the warp's grid
 * go to its integer words first (up to LIMB_MAX_BINS bins). VALUES: int32, float32 by the rule,
 * or float32 through the table staged after the copies and words (cells cells). */
template <int VALUES, bool IN_ORDER, bool LIMBS>
static __global__ void __launch_bounds__(WBLOCK)
    weighted_chunks_kernel(const void *in, const float *w, size_t n, size_t chunk, int nb, mh_hist_float f, bool vec,
                           double *partials, int cells)
{
    extern __shared__ double copies[];
    const int slots = nb + 1;
    for (int k = threadIdx.x; k < doubles_a_slot(LIMBS) * WARPS * slots; k += WBLOCK) copies[k] = 0.0;
    mh_hist_table t = {};
    if (VALUES == TABLE) /* ends with a barrier */
        t = mh_hist_stage_table(f, nb, cells, copies + doubles_a_slot(LIMBS) * WARPS * slots);
    else __syncthreads();
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    double *copy = copies + warp * slots;
    warp_limbs L = {};
    if (LIMBS) L.hi = reinterpret_cast<int *>(copies + WARPS * slots) + 2 * warp * slots, L.lo = L.hi + slots;
    const size_t first = (size_t)blockIdx.x * chunk, end = n - first < chunk ? n : first + chunk;
    for (size_t base = first; base < end; base += 4 * WBLOCK) {
        const size_t i = base + 4 * threadIdx.x;
        int b[4];
        float wt[4];
        if (vec && base + 4 * WBLOCK <= end) {
            const float4 w4 = __ldg(reinterpret_cast<const float4 *>(w + i));
            wt[0] = w4.x, wt[1] = w4.y, wt[2] = w4.z, wt[3] = w4.w;
            if (VALUES == INTS) {
                const int4 x = __ldg(reinterpret_cast<const int4 *>((const int *)in + i));
                b[0] = int_bin(x.x, nb), b[1] = int_bin(x.y, nb), b[2] = int_bin(x.z, nb), b[3] = int_bin(x.w, nb);
            } else {
                const float4 x = __ldg(reinterpret_cast<const float4 *>((const float *)in + i));
                b[0] = float_bin<VALUES>(t, f, nb, x.x), b[1] = float_bin<VALUES>(t, f, nb, x.y);
                b[2] = float_bin<VALUES>(t, f, nb, x.z), b[3] = float_bin<VALUES>(t, f, nb, x.w);
            }
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const bool have = i + j < end;
                if (VALUES == INTS) b[j] = have ? int_bin(__ldg((const int *)in + i + j), nb) : -1;
                else b[j] = have ? float_bin<VALUES>(t, f, nb, __ldg((const float *)in + i + j)) : -1;
                wt[j] = have ? __ldg(w + i + j) : 0.0f;
            }
        }
        if (LIMBS) limbs_step<IN_ORDER>(L, copy, slots, b, wt, lane);
        else double_step<IN_ORDER>(copy, b, wt, lane);
    }
    if (LIMBS) limbs_flush(L, copy, slots, lane);
    __syncthreads();
    for (int k = threadIdx.x; k < slots; k += WBLOCK) {
        double s = 0.0;
        for (int c = 0; c < WARPS; ++c) s += copies[c * slots + k];
        partials[(size_t)blockIdx.x * slots + k] = s;
    }
}

/* A block a slot (FINISH threads): thread t adds chunks t, t + FINISH, ... in order, then a fixed
 * tree in shared memory. With ~1000 chunks each thread issues a handful of independent loads, so
 * the pass costs about one round trip to L2 and spreads over as many SMs as there are slots. */
enum { FINISH = 128 };

static __global__ void __launch_bounds__(FINISH)
    weighted_finish_kernel(const double *partials, size_t chunks, int nb, double *sums, double *outside)
{
    __shared__ double part[FINISH];
    const int slot = blockIdx.x;
    double s = 0.0;
    for (size_t c = threadIdx.x; c < chunks; c += FINISH) s += partials[c * (nb + 1) + slot];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int d = FINISH / 2; d > 0; d /= 2) {
        if ((int)threadIdx.x < d) part[threadIdx.x] += part[threadIdx.x + d];
        __syncthreads();
    }
    if (threadIdx.x) return;
    if (slot < nb) sums[slot] = part[0];
    else if (outside) *outside = part[0];
}

/* ---- launch, registry ------------------------------------------------------------------- */

static int weighted_only(const mh_args *x, char *why, size_t len)
{
    if (x->histogram.weighted) return 1;
    snprintf(why, len, "it sums weights: weighted histograms only (mh_histogram_weighted)");
    return 0;
}

static int atomic_supports(const mh_context *, const mh_args *x, char *why, size_t len) { return weighted_only(x, why, len); }

/* Every sum (and the outside one, when asked for) set to 0 on the context's stream. */
static mh_status zero_sums(mh_context *ctx, const mh_histogram_args *a)
{
    const cudaStream_t st = mh_stream(ctx);
    MH_CUDA_TRY(ctx, cudaMemsetAsync(a->sums, 0, (size_t)a->num_bins * sizeof(double), st));
    if (a->outside_sum) MH_CUDA_TRY(ctx, cudaMemsetAsync(a->outside_sum, 0, sizeof(double), st));
    return MH_OK;
}

static mh_status atomic_run(mh_context *ctx, const mh_args *x)
{
    const mh_histogram_args *a = &x->histogram;
    MH_TRY(zero_sums(ctx, a));
    if (a->n == 0) return MH_OK;
    const cudaStream_t st = mh_stream(ctx);
    const unsigned blocks = (unsigned)mh_resident_blocks(ctx, a->n, WBLOCK);
    if (a->floats)
        weighted_atomic_kernel<true><<<blocks, WBLOCK, 0, st>>>(a->in, a->weights, a->n, a->num_bins, a->f, a->sums,
                                                                a->outside_sum);
    else
        weighted_atomic_kernel<false><<<blocks, WBLOCK, 0, st>>>(a->in, a->weights, a->n, a->num_bins, a->f, a->sums,
                                                                 a->outside_sum);
    return MH_LAUNCH_CHECK(ctx, "weighted_atomic_kernel");
}

/* The chunk of a block, from n alone (the order of additions must not depend on the device):
 * about 2048 chunks, each a power of two from 4096 to 2^20 values. */
static size_t chunk_of(size_t n)
{
    size_t c = 4096;
    while (c < ((size_t)1 << 20) && c * 2048 < n) c *= 2;
    return c;
}

static int weighted_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    if (!weighted_only(x, why, len)) return 0;
    if (x->histogram.num_bins <= WEIGHTED_MAX_BINS) return 1;
    snprintf(why, len, "num_bins = %d: a warp's copy of the bins in shared memory holds at most %d (weighted-atomic "
             "takes more)", x->histogram.num_bins, WEIGHTED_MAX_BINS);
    return 0;
}

/* weighted-shared's chunks: as many blocks as the SMs hold of this kernel at once (no second,
 * partial wave), each chunk a multiple of 1024 values. */
static mh_status resident_chunk_of(mh_context *ctx, const void *kernel, size_t smem, size_t n, size_t *chunk)
{
    size_t blocks = 0;
    MH_TRY(mh_resident_grid(ctx, kernel, WBLOCK, smem, &blocks));
    *chunk = mh_ceil_div(mh_ceil_div(n, blocks), 4 * WBLOCK) * 4 * WBLOCK;
    return MH_OK;
}

template <bool IN_ORDER> static mh_status chunks_run(mh_context *ctx, const mh_args *x)
{
    static const void *const kernels[2][3] = {
        {(const void *)weighted_chunks_kernel<INTS, IN_ORDER, false>,
         (const void *)weighted_chunks_kernel<RULE, IN_ORDER, false>,
         (const void *)weighted_chunks_kernel<TABLE, IN_ORDER, false>},
        {(const void *)weighted_chunks_kernel<INTS, IN_ORDER, true>,
         (const void *)weighted_chunks_kernel<RULE, IN_ORDER, true>,
         (const void *)weighted_chunks_kernel<TABLE, IN_ORDER, true>}};
    const mh_histogram_args *a = &x->histogram;
    const cudaStream_t st = mh_stream(ctx);
    if (a->n == 0) return zero_sums(ctx, a);
    const bool limbs = a->num_bins <= LIMB_MAX_BINS;
    size_t slots = (size_t)a->num_bins + 1, smem = doubles_a_slot(limbs) * WARPS * slots * sizeof(double);
    /* explicit edges staged: beside at most WEIGHTED_MAX_BINS bins' copies they always fit */
    int cells = a->floats && a->f.edges ? mh_hist_table_cells(a, smem) : 0;
    smem += cells ? mh_hist_table_bytes(a->num_bins, cells) : 0;
    const void *kernel = kernels[limbs][cells ? TABLE : a->floats ? RULE : INTS];
    MH_CUDA_TRY(ctx, mh_allow_smem(kernel));
    size_t chunk = chunk_of(a->n);
    if (!IN_ORDER) MH_TRY(resident_chunk_of(ctx, kernel, smem, a->n, &chunk));
    const size_t chunks = mh_ceil_div(a->n, chunk);
    void *ws = NULL;
    MH_TRY(mh_workspace(ctx, chunks * slots * sizeof(double), &ws));
    double *partials = (double *)ws;
    bool vec = mh_aligned16(a->in) && mh_aligned16(a->weights);
    void *args[] = {(void *)&a->in, (void *)&a->weights, (void *)&a->n,  &chunk,   (void *)&a->num_bins,
                    (void *)&a->f,  &vec,                &partials,      &cells};
    MH_TRY(mh_cuda_status(ctx, cudaLaunchKernel(kernel, dim3((unsigned)chunks), dim3(WBLOCK), args, smem, st),
                          "launching weighted_chunks_kernel"));
    weighted_finish_kernel<<<(unsigned)slots, FINISH, 0, st>>>(partials, chunks, a->num_bins, a->sums, a->outside_sum);
    return MH_LAUNCH_CHECK(ctx, "weighted_finish_kernel");
}

static mh_status shared_run(mh_context *ctx, const mh_args *x) { return chunks_run<false>(ctx, x); }
static mh_status deterministic_run(mh_context *ctx, const mh_args *x) { return chunks_run<true>(ctx, x); }

static const mh_row rows[] = {
    {{"histogram/weighted-atomic", MH_OP_HISTOGRAM, MH_BACKEND_CUDA, 9, "global", "seed 004",
      "weighted: one global double atomicAdd per value"},
     atomic_supports, atomic_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_WEIGHTS | MH_ROW_WEIGHTED_ONLY},
    {{"histogram/weighted-shared", MH_OP_HISTOGRAM, MH_BACKEND_CUDA, 10, "global+shared", "ours",
      "weighted: a copy of the bins per warp in shared memory, exact int32 words, double atomics off the grid"},
     weighted_supports, shared_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_WEIGHTS | MH_ROW_WEIGHTED_ONLY},
    {{"histogram/weighted", MH_OP_HISTOGRAM, MH_BACKEND_CUDA, 11, "global+shared+shuffle", "ours",
      "weighted: a copy of the bins per warp, exact int32 words, off-grid weights in lane order; deterministic"},
     weighted_supports, deterministic_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_WEIGHTS | MH_ROW_WEIGHTED_ONLY},
};

MH_ROW_GROUP(mh_histogram_weighted_rows, rows)

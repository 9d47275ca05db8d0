/* histogram on CUDA: seed 004's privatization and coarsening ladder, any n (64-bit indexing),
 * int32 or int64 values or bytes, exact 64-bit counts in global memory.
 *
 *   racy                seed 004's first cuda_histogram: `bins[b] += 1` with no atomics. Kept as
 *                       a demonstration (mh_variant_is_demonstration): it loses counts when threads
 *                       collide, auto never picks it, the bench shows its wrong counts
 *   global-atomic       one 64-bit atomicAdd in global memory per element
 *   shared-private      cuda_histogram_privatization: one element per thread, the block's bins
 *                       (32-bit) in shared memory, added to the global ones at the end
 *   coarse-contiguous   each thread counts 16 consecutive elements (the partitioning seed 004
 *                       warns is uncoalesced), shared private bins
 *   coarse-interleaved  cuda_histogram_privatization_coarsening: a grid of a few blocks per SM
 *                       strides over the input, coalesced, shared private bins
 *   vector              coarse-interleaved with 16-byte loads (16 bytes or 4 int32 per load); up
 *                       to ONE_LAUNCH_SLOTS bins the whole call is one launch: the blocks add
 *                       into the context's running sums and the last one hands them over
 *   warp-private        ours: one sub-histogram per warp (contention on skewed data falls from
 *                       a block's threads to a warp's); configuration "match": lanes that hit the
 *                       same bin in a step add once (__match_any_sync)
 *   lane-private        ours: vector with 32 copies of the bins, one per lane index, interleaved
 *                       so that a warp's shared atomics never meet in a bank
 * Every kernel also counts the values outside [lo, hi] (slot num_bins of the private bins).
 * bins and outside are zeroed first on the context's stream (mh_histogram_cuda_start, which also
 * writes mh_histogram_range's edges), but in vector's one launch. Each kernel is compiled for four
 * kinds of values: int32, bytes, int64 (compared at full width), and float32 binned by numpy.histogram's rule
 * (core/histogram_rule.h: uniform edges computed where they are needed, or explicit edges
 * searched in global memory, through L1). vector and lane-private stage float32 bins in shared
 * memory first (histogram_table.cuh: the edges and a cell table that gives most values their
 * bin with one shared load): the double arithmetic of the edges and its conversions (16 an SM
 * a clock on the H100) would otherwise bound them, not the loads. */
#include "common.cuh"
#include "histogram_table.cuh"

#include <stdio.h>
#include <type_traits>

enum { THREADS = 256, SEED_THREADS = 1024, CONTIG = 16 };

struct hist_params {
    const void *in;
    size_t n;
    int lo, hi, width, num_bins;
    unsigned span;  /* hi - lo */
    unsigned magic; /* ceil(2^32 / width): for bytes, d / width = __umulhi(d, magic) exactly (d <= 255) */
    unsigned long long *bins, *outside;
};

/* The float32 kernels' parameters: the bins' rule besides. A struct of its own, so that the
 * integer kernels keep their 56-byte parameters: nvcc reads a kernel's parameters from a
 * pointer into parameter space once the struct grows past ~128 bytes, which cost the byte
 * histograms 15-25% on the H100. */
struct float_params : hist_params {
    mh_hist_float f;
    int cells; /* vector and lane-private: the bins staged in shared memory with this many cells
                  (histogram_table.cuh); 0: the rule per value */
};

/* The kinds of values a kernel is compiled for (the template argument KIND), and their
 * parameters. */
enum { INT32 = 0, BYTES = 1, FLOAT32 = 2, INT64 = 3 };
template <int KIND> using params_t = typename std::conditional<KIND == FLOAT32, float_params, hist_params>::type;

/* bin of an integer v, num_bins for the values outside [lo, hi]. 32-bit arithmetic throughout:
 * v - lo as unsigned wraps values under lo past span, so one compare tests both ends; no 64-bit
 * division (~20 instructions per element, which would make it the bytes' bottleneck). */
template <int KIND>
static __device__ __forceinline__ int int_slot(const hist_params &p, int v)
{
    const unsigned d = (unsigned)v - (unsigned)p.lo;
    if (d > p.span) return p.num_bins;
    if (p.width == 1) return (int)d;
    return (int)(KIND == BYTES ? __umulhi(d, p.magic) : d / (unsigned)p.width);
}

/* bin of an int64 v: v - lo compared at 64 bits (a value 2^32 past a bin is outside, not in it),
 * then the 32-bit arithmetic above on what lies within the span. */
static __device__ __forceinline__ int int64_slot(const hist_params &p, long long v)
{
    const unsigned long long d = (unsigned long long)v - (unsigned long long)(long long)p.lo;
    if (d > p.span) return p.num_bins;
    return p.width == 1 ? (int)d : (int)((unsigned)d / (unsigned)p.width);
}

/* The slot of a 32-bit word (an int32 or a float32's bits). */
template <int KIND>
static __device__ __forceinline__ int slot_of(const params_t<KIND> &p, unsigned word)
{
    if constexpr (KIND == FLOAT32) return mh_hist_float_bin(&p.f, p.num_bins, __uint_as_float(word));
    else return int_slot<KIND>(p, (int)word);
}

/* The slot of element i. */
template <int KIND>
static __device__ __forceinline__ int slot_at(const params_t<KIND> &p, size_t i)
{
    if constexpr (KIND == BYTES) return int_slot<KIND>(p, (int)static_cast<const unsigned char *>(p.in)[i]);
    else if constexpr (KIND == INT64) return int64_slot(p, static_cast<const long long *>(p.in)[i]);
    else return slot_of<KIND>(p, static_cast<const unsigned *>(p.in)[i]);
}

static __device__ __forceinline__ unsigned long long *global_slot(const hist_params &p, int s)
{
    return s < p.num_bins ? p.bins + s : p.outside;
}

template <int KIND>
static __global__ void hist_racy_kernel(const params_t<KIND> p)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n) return;
    unsigned long long *g = global_slot(p, slot_at<KIND>(p, i));
    if (g) *g += 1; /* the seed's race, on purpose */
}

template <int KIND>
static __global__ void hist_global_atomic_kernel(const params_t<KIND> p)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n) return;
    unsigned long long *g = global_slot(p, slot_at<KIND>(p, i));
    if (g) atomicAdd(g, 1ULL);
}

/* The block's private slots (num_bins + 1, 32-bit) zeroed, and later added to global memory. */
static __device__ __forceinline__ void private_zero(unsigned *priv, int slots)
{
    for (int s = threadIdx.x; s < slots; s += blockDim.x) priv[s] = 0;
    __syncthreads();
}

static __device__ __forceinline__ void private_flush(const hist_params &p, const unsigned *priv, int slots)
{
    __syncthreads();
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
        unsigned long long *g = global_slot(p, s);
        if (priv[s] && g) atomicAdd(g, (unsigned long long)priv[s]);
    }
}

template <int KIND>
static __global__ void hist_shared_private_kernel(const params_t<KIND> p)
{
    extern __shared__ unsigned priv[];
    private_zero(priv, p.num_bins + 1);
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) atomicAdd(&priv[slot_at<KIND>(p, i)], 1u);
    private_flush(p, priv, p.num_bins + 1);
}

template <int KIND>
static __global__ void hist_contiguous_kernel(const params_t<KIND> p)
{
    extern __shared__ unsigned priv[];
    private_zero(priv, p.num_bins + 1);
    const size_t first = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * CONTIG;
    for (size_t i = first; i < first + CONTIG && i < p.n; ++i) atomicAdd(&priv[slot_at<KIND>(p, i)], 1u);
    private_flush(p, priv, p.num_bins + 1);
}

template <int KIND>
static __global__ void hist_interleaved_kernel(const params_t<KIND> p)
{
    extern __shared__ unsigned priv[];
    private_zero(priv, p.num_bins + 1);
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride)
        atomicAdd(&priv[slot_at<KIND>(p, i)], 1u);
    private_flush(p, priv, p.num_bins + 1);
}

/* Stages the float32 table after `bins_end` (the block's private bins) where the launch says it
 * fits; false for the integer kinds and where it does not: those compute the rule per value. */
template <int KIND>
static __device__ __forceinline__ bool stage_if_float(const params_t<KIND> &p, unsigned *bins_end, mh_hist_table &t)
{
    if constexpr (KIND == FLOAT32)
        if (p.cells) return t = mh_hist_stage_table(p.f, p.num_bins, p.cells, bins_end), true;
    return false;
}

/* A word's slot, and element k's: float32 through the staged table where there is one (STAGED;
 * the int kinds compile none of it). */
template <int KIND, bool STAGED>
static __device__ __forceinline__ int word_slot(const params_t<KIND> &p, const mh_hist_table &t, unsigned w)
{
    if constexpr (KIND == FLOAT32 && STAGED) return mh_hist_table_bin(&t, __uint_as_float(w));
    else return slot_of<KIND>(p, w);
}

template <int KIND, bool STAGED>
static __device__ __forceinline__ int element_slot(const params_t<KIND> &p, const mh_hist_table &t, size_t k)
{
    if constexpr (KIND == FLOAT32 && STAGED) return mh_hist_table_bin(&t, static_cast<const float *>(p.in)[k]);
    else return slot_at<KIND>(p, k);
}

/* Calls f(slot) for every value this thread owns in a grid-stride pass with 16-byte loads (16
 * bytes, 4 int32 or 2 int64 per load); head: elements before the first 16-byte boundary, visited
 * element-wise with the tail. The next 16 bytes are loaded before the current ones are counted,
 * so that their DRAM latency hides behind the counting instead of following it. */
template <int KIND, bool STAGED, class F>
static __device__ __forceinline__ void for_each_slot_in(const params_t<KIND> &p, size_t head, size_t nv,
                                                        const mh_hist_table &t, F f)
{
    constexpr int ELEM = KIND == BYTES ? 1 : KIND == INT64 ? 8 : 4, PER = 16 / ELEM;
    const size_t stride = (size_t)gridDim.x * blockDim.x, gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint4 *body = reinterpret_cast<const uint4 *>(static_cast<const char *>(p.in) + head * ELEM);
    size_t i = gid;
    uint4 w = i < nv ? __ldg(body + i) : make_uint4(0u, 0u, 0u, 0u);
    while (i < nv) {
        const size_t j = i + stride;
        const uint4 next = j < nv ? __ldg(body + j) : w;
        const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int q = 0; q < PER; ++q) {
            if constexpr (KIND == BYTES) f(int_slot<KIND>(p, (int)((words[q / 4] >> (8 * (q % 4))) & 0xffu)));
            else if constexpr (KIND == INT64)
                f(int64_slot(p, (long long)(((unsigned long long)words[2 * q + 1] << 32) | words[2 * q])));
            else f(word_slot<KIND, STAGED>(p, t, words[q]));
        }
        w = next, i = j;
    }
    if (gid < head) f(element_slot<KIND, STAGED>(p, t, gid));
    for (size_t k = head + nv * PER + gid; k < p.n; k += stride) f(element_slot<KIND, STAGED>(p, t, k));
}

/* for_each_slot_in, float32 through the staged table where the block staged one. */
template <int KIND, class F>
static __device__ __forceinline__ void for_each_slot(const params_t<KIND> &p, size_t head, size_t nv,
                                                     const mh_hist_table &t, bool staged, F f)
{
    if (KIND == FLOAT32 && staged) for_each_slot_in<KIND, true>(p, head, nv, t, f);
    else for_each_slot_in<KIND, false>(p, head, nv, t, f);
}

/* vector's call in one launch (at most ONE_LAUNCH_SLOTS slots): the blocks add their counts
 * into the context's running sums (p.bins and p.outside point there), which are 0 at every
 * launch's start and end, and the last block to finish moves them into the caller's counts,
 * zeroing each as it reads it; the grid writes mh_histogram_range's edges too. No start kernel. */
struct hist_done {
    unsigned *ticket;                   /* blocks done; back to 0 as the last takes it */
    unsigned long long *bins, *outside; /* the caller's (outside NULL: not wanted) */
    float *edges;                       /* mh_histogram_range's, or NULL */
};

template <int KIND>
static __device__ __forceinline__ void write_edges(const params_t<KIND> &p, float *edges)
{
    if constexpr (KIND == FLOAT32)
        if (edges)
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i <= p.num_bins; i += gridDim.x * blockDim.x)
                edges[i] = mh_hist_uniform_edge(&p.f, p.num_bins, i);
}

/* After every block's flush: the last block moves the running sums into the caller's counts.
 * The block's verdict travels by __syncthreads_or, not a static shared variable, which would
 * leave less than the whole opt-in shared memory to the dynamic slots and tables. */
static __device__ __forceinline__ void hand_over(const hist_params &p, const hist_done &d)
{
    __threadfence(); /* this thread's flush reaches the sums before the block counts itself done */
    __syncthreads();
    const int last = threadIdx.x == 0 && atomicInc(d.ticket, gridDim.x - 1) == gridDim.x - 1;
    if (!__syncthreads_or(last)) return;
    for (int s = threadIdx.x; s <= p.num_bins; s += blockDim.x) {
        const unsigned long long v = atomicExch(s < p.num_bins ? p.bins + s : p.outside, 0ULL);
        if (s < p.num_bins) d.bins[s] = v;
        else if (d.outside) *d.outside = v;
    }
}

/* coarse-interleaved with 16-byte loads, one shared atomic per value; with d.ticket, the whole
 * call in one launch (hist_done). */
template <int KIND>
static __global__ void hist_vector_kernel(const params_t<KIND> p, size_t head, size_t nv, const hist_done d)
{
    extern __shared__ unsigned priv[];
    write_edges<KIND>(p, d.edges);
    private_zero(priv, p.num_bins + 1);
    mh_hist_table t = {};
    const bool staged = stage_if_float<KIND>(p, priv + p.num_bins + 1, t);
    for_each_slot<KIND>(p, head, nv, t, staged, [&](int s) { atomicAdd(&priv[s], 1u); });
    private_flush(p, priv, p.num_bins + 1);
    if (d.ticket) hand_over(p, d);
}

/* One sub-histogram per warp. MATCH: in each step the lanes holding the same slot add once
 * (__match_any_sync); otherwise every lane adds 1 to its warp's copy. */
template <int KIND, bool MATCH>
static __global__ void __launch_bounds__(THREADS) hist_warp_private_kernel(const params_t<KIND> p)
{
    extern __shared__ unsigned priv[];
    const int slots = p.num_bins + 1, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    private_zero(priv, slots * (THREADS / 32));
    unsigned *mine = priv + (size_t)warp * slots;
    const size_t stride = (size_t)gridDim.x * THREADS;
    /* every lane of a warp runs the same number of steps, so that __match_any_sync sees them all */
    const size_t warp_first = ((size_t)blockIdx.x * THREADS) + (size_t)warp * 32;
    for (size_t base = warp_first; base < p.n; base += stride) {
        const size_t i = base + lane;
        const int s = i < p.n ? slot_at<KIND>(p, i) : -1;
        if (!MATCH) {
            if (s >= 0) atomicAdd(&mine[s], 1u);
            continue;
        }
        const unsigned same = __match_any_sync(0xffffffffu, s);
        if (s >= 0 && lane == __ffs(same) - 1) atomicAdd(&mine[s], (unsigned)__popc(same));
    }
    __syncthreads();
    for (int s = threadIdx.x; s < slots; s += THREADS) {
        unsigned long long total = 0;
        for (int w = 0; w < THREADS / 32; ++w) total += priv[(size_t)w * slots + s];
        unsigned long long *g = global_slot(p, s);
        if (total && g) atomicAdd(g, total);
    }
}

/* lane-private: 32 copies of the bins in shared memory, one per lane index (lane l of every
 * warp of the block shares copy l), interleaved so that copy l of slot s is word s * 32 + l:
 * bank l. A warp's 32 atomics then always touch 32 different banks, whatever the data; with one
 * copy (vector) uniform bytes put ~3 lanes on a bank (ncu: 3.2 wavefronts per shared atomic,
 * the shared pipe busy 94% of the time). The flush adds the 32 copies of a slot, thread t
 * starting at copy t % 32 so that a warp's reads stay in distinct banks too. */
enum { LANES = 32 };

template <int KIND>
static __global__ void __launch_bounds__(THREADS) hist_lane_private_kernel(const params_t<KIND> p, size_t head, size_t nv)
{
    extern __shared__ unsigned copies[];
    const int slots = p.num_bins + 1;
    private_zero(copies, slots * LANES);
    unsigned *mine = copies + threadIdx.x % LANES;
    mh_hist_table t = {};
    const bool staged = stage_if_float<KIND>(p, copies + (size_t)slots * LANES, t);
    for_each_slot<KIND>(p, head, nv, t, staged, [&](int s) { atomicAdd(&mine[s * LANES], 1u); });
    __syncthreads();
    for (int s = threadIdx.x; s < slots; s += THREADS) {
        unsigned long long total = 0;
        for (int l = 0; l < LANES; ++l) total += copies[(size_t)s * LANES + ((l + s) % LANES)];
        unsigned long long *g = global_slot(p, s);
        if (total && g) atomicAdd(g, total);
    }
}

/* ---- launch, registry ------------------------------------------------------------------- */

/* A launch's parameters: float_params, whose first part (its hist_params base) is all the
 * integer kernels read; args[0] points at it for every kind. */
struct launch_params {
    float_params p;
    void *args[4];
};

static void params_of(const mh_histogram_args *a, launch_params *l)
{
    float_params &p = l->p;
    p.in = a->in, p.n = a->n, p.lo = a->lo, p.hi = a->hi, p.width = a->width, p.num_bins = a->num_bins;
    p.span = (unsigned)((long long)a->hi - a->lo);
    p.magic = a->width > 1 ? (unsigned)((((unsigned long long)1 << 32) + (unsigned)a->width - 1) / (unsigned)a->width) : 0u;
    p.bins = a->bins, p.outside = a->outside;
    p.f = a->f;
    p.cells = 0;
    l->args[0] = &p;
}

/* The start of an unweighted call: the counts zeroed (slot num_bins: outside) and, for
 * mh_histogram_range, the uniform edges written, in one launch where two memsets and a copy of
 * the edges would be three operations. */
static __global__ void hist_start_kernel(unsigned long long *bins, unsigned long long *outside, int num_bins,
                                         float *edges, const mh_hist_float f)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i <= num_bins; i += gridDim.x * blockDim.x) {
        if (i < num_bins) bins[i] = 0;
        else if (outside) *outside = 0;
        if (edges) edges[i] = mh_hist_uniform_edge(&f, num_bins, i);
    }
}

mh_status mh_histogram_cuda_start(mh_context *ctx, const mh_histogram_args *a)
{
    const size_t blocks = mh_ceil_div((size_t)a->num_bins + 1, THREADS);
    hist_start_kernel<<<(unsigned)(blocks < 1024 ? blocks : 1024), THREADS, 0, mh_stream(ctx)>>>(
        a->bins, a->outside, a->num_bins, a->edges_out, a->f);
    return MH_LAUNCH_CHECK(ctx, "hist_start_kernel");
}

static int grid_fits(const mh_args *x, size_t per_block, char *why, size_t len)
{
    if (mh_ceil_div(x->histogram.n, per_block) <= MH_MAX_GRID_X) return 1;
    snprintf(why, len, "n = %zu needs more than 2^31-1 blocks of %zu elements", x->histogram.n, per_block);
    return 0;
}

/* Shared bytes of `copies` private copies of the bins (num_bins + 1 slots, 32-bit). */
static size_t slots_bytes(const mh_args *x, size_t copies) { return ((size_t)x->histogram.num_bins + 1) * 4 * copies; }

static int smem_fits(const mh_args *x, size_t copies, const char *name, char *why, size_t len)
{
    const size_t bytes = slots_bytes(x, copies);
    if (bytes <= mh_smem_optin()) return 1;
    snprintf(why, len, "%s keeps %zu cop%s of %d bins in shared memory: %zu bytes, more than a block may use", name, copies,
             copies == 1 ? "y" : "ies", x->histogram.num_bins, bytes);
    return 0;
}

static int per_thread_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return grid_fits(x, SEED_THREADS, why, len);
}
static int shared_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return grid_fits(x, SEED_THREADS, why, len) && smem_fits(x, 1, "shared-private", why, len);
}
static int contiguous_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return grid_fits(x, (size_t)THREADS * CONTIG, why, len) && smem_fits(x, 1, "coarse-contiguous", why, len);
}
static int interleaved_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return smem_fits(x, 1, "this variant", why, len);
}
static int warp_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return smem_fits(x, THREADS / 32, "warp-private", why, len);
}

/* The kind of the call's values: the index of its kernel instance. */
static int kind_of(const mh_histogram_args *a) { return a->floats ? FLOAT32 : a->bytes ? BYTES : a->int64 ? INT64 : INT32; }

/* A kernel's instances for each kind, indexed by kind_of (their parameters differ: params_t). */
#define INSTANCES(kernel, ...)                                                                                      \
    {(const void *)kernel<INT32 __VA_ARGS__>, (const void *)kernel<BYTES __VA_ARGS__>,                              \
     (const void *)kernel<FLOAT32 __VA_ARGS__>, (const void *)kernel<INT64 __VA_ARGS__>}

typedef const void *kernel_set[4];

/* Launches k over `blocks` blocks with the call's parameters (args[0]) and l->args[1..]. */
static mh_status launch_with(mh_context *ctx, const void *k, size_t blocks, int threads, size_t smem, launch_params *l,
                             const char *name)
{
    if (smem > 48 * 1024) MH_CUDA_TRY(ctx, mh_allow_smem(k));
    const cudaError_t e = cudaLaunchKernel(k, dim3((unsigned)blocks), dim3((unsigned)threads), l->args, smem, mh_stream(ctx));
    return mh_cuda_status(ctx, e != cudaSuccess ? e : cudaGetLastError(), name);
}

/* Zeroes the outputs, then (when there is input) launches the instance for the call's values. */
static mh_status launch(mh_context *ctx, const mh_args *x, const kernel_set ks, size_t blocks, int threads, size_t smem,
                        const char *name)
{
    const mh_histogram_args *a = &x->histogram;
    MH_TRY(mh_histogram_cuda_start(ctx, a));
    if (a->n == 0) return MH_OK;
    launch_params l;
    params_of(a, &l);
    return launch_with(ctx, ks[kind_of(a)], blocks, threads, smem, &l, name);
}

static mh_status racy_run(mh_context *ctx, const mh_args *x)
{
    static const kernel_set ks = INSTANCES(hist_racy_kernel);
    return launch(ctx, x, ks, mh_ceil_div(x->histogram.n, SEED_THREADS), SEED_THREADS, 0, "launching hist_racy_kernel");
}

static mh_status global_run(mh_context *ctx, const mh_args *x)
{
    static const kernel_set ks = INSTANCES(hist_global_atomic_kernel);
    return launch(ctx, x, ks, mh_ceil_div(x->histogram.n, SEED_THREADS), SEED_THREADS, 0,
                  "launching hist_global_atomic_kernel");
}

static mh_status shared_run(mh_context *ctx, const mh_args *x)
{
    static const kernel_set ks = INSTANCES(hist_shared_private_kernel);
    return launch(ctx, x, ks, mh_ceil_div(x->histogram.n, SEED_THREADS), SEED_THREADS, slots_bytes(x, 1),
                  "launching hist_shared_private_kernel");
}

static mh_status contiguous_run(mh_context *ctx, const mh_args *x)
{
    static const kernel_set ks = INSTANCES(hist_contiguous_kernel);
    return launch(ctx, x, ks, mh_ceil_div(x->histogram.n, (size_t)THREADS * CONTIG), THREADS, slots_bytes(x, 1),
                  "launching hist_contiguous_kernel");
}

static mh_status interleaved_run(mh_context *ctx, const mh_args *x)
{
    static const kernel_set ks = INSTANCES(hist_interleaved_kernel);
    return launch(ctx, x, ks, mh_resident_blocks(ctx, x->histogram.n, THREADS), THREADS, slots_bytes(x, 1),
                  "launching hist_interleaved_kernel");
}

/* The 16-byte-load kernels (vector, lane-private): the outputs zeroed by the start kernel, or,
 * given the running sums (vector's one launch), the kernel adding into them and handing them
 * over (done); then one resident grid over the body after the unaligned head (one block where
 * there are no values: it hands over zeros); `copies` private copies of the bins per block, and
 * float32 bins staged after them where they fit. */
static mh_status launch_wide(mh_context *ctx, const mh_args *x, const kernel_set ks, size_t copies,
                             unsigned long long *sums, const hist_done *done, const char *name)
{
    const mh_histogram_args *a = &x->histogram;
    if (!sums) MH_TRY(mh_histogram_cuda_start(ctx, a));
    if (a->n == 0 && !sums) return MH_OK;
    const size_t elem = mh_histogram_value_bytes(a), per = 16 / elem;
    launch_params l;
    params_of(a, &l);
    if (sums) l.p.bins = sums, l.p.outside = sums + a->num_bins;
    size_t smem = slots_bytes(x, copies);
    l.p.cells = mh_hist_table_cells(a, smem);
    if (l.p.cells) smem += mh_hist_table_bytes(a->num_bins, l.p.cells);
    size_t head = mh_head_to_16(a->in, elem);
    if (head > a->n) head = a->n;
    size_t nv = (a->n - head) / per;
    hist_done none = {};
    l.args[1] = &head, l.args[2] = &nv, l.args[3] = (void *)(done ? done : &none);
    const size_t blocks = a->n ? mh_resident_blocks(ctx, a->n, THREADS * per) : 1;
    return launch_with(ctx, ks[kind_of(a)], blocks, THREADS, smem, &l, name);
}

/* Slots (bins and outside) up to which vector hands its counts over in its own launch: the last
 * block's reads of the running sums stay a few per thread. */
enum { ONE_LAUNCH_SLOTS = 4096 };

/* The context's ticket and running sums for vector's one launch (ONE_LAUNCH_SLOTS of them),
 * zeroed once, when the slot is made; every launch leaves them at 0 (hand_over). */
static mh_status running_sums(mh_context *ctx, unsigned **ticket, unsigned long long **sums)
{
    const mh_slot *slot = mh_context_slot(ctx, MH_SLOT_HISTOGRAM_SUMS);
    if (!slot) return MH_ERR_CUDA; /* the fence's detail is on ctx */
    const int made_now = slot->data == NULL;
    const size_t bytes = 8 + (size_t)ONE_LAUNCH_SLOTS * 8;
    void *p = NULL;
    MH_TRY(mh_slot_buffer(ctx, MH_SLOT_HISTOGRAM_SUMS, "histogram's running sums", bytes, &p));
    *ticket = (unsigned *)p, *sums = (unsigned long long *)((char *)p + 8);
    if (!made_now) return MH_OK;
    return mh_cuda_status(ctx, cudaMemsetAsync(p, 0, bytes, mh_stream(ctx)), "zeroing histogram's running sums");
}

static mh_status vector_run(mh_context *ctx, const mh_args *x)
{
    static const kernel_set ks = INSTANCES(hist_vector_kernel);
    const mh_histogram_args *a = &x->histogram;
    hist_done done = {}; /* no ticket: the kernel adds into the caller's counts, zeroed first */
    unsigned long long *sums = NULL;
    if ((size_t)a->num_bins + 1 <= ONE_LAUNCH_SLOTS) {
        MH_TRY(running_sums(ctx, &done.ticket, &sums));
        done.bins = a->bins, done.outside = a->outside, done.edges = a->edges_out;
    }
    return launch_wide(ctx, x, ks, 1, sums, &done, "launching hist_vector_kernel");
}

/* "atomic": every lane adds to its warp's copy; "match": equal lanes aggregated first. */
static const char *const warp_configs[] = {"atomic", "match", NULL};

static mh_status warp_run(mh_context *ctx, const mh_args *x)
{
    static const kernel_set atomic = INSTANCES(hist_warp_private_kernel, , false);
    static const kernel_set match = INSTANCES(hist_warp_private_kernel, , true);
    return launch(ctx, x, x->config == 1 ? match : atomic, mh_resident_blocks(ctx, x->histogram.n, THREADS), THREADS,
                  slots_bytes(x, THREADS / 32), "launching hist_warp_private_kernel");
}

static int lane_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    return smem_fits(x, LANES, "lane-private", why, len);
}

static mh_status lane_run(mh_context *ctx, const mh_args *x)
{
    static const kernel_set ks = INSTANCES(hist_lane_private_kernel);
    return launch_wide(ctx, x, ks, LANES, NULL, NULL, "launching hist_lane_private_kernel");
}

#define HIST_ROW(name, rung, memory, source, summary, sup, run)                                                         \
    {{"histogram/" name, MH_OP_HISTOGRAM, MH_BACKEND_CUDA, rung, memory, source, summary}, sup, run, NULL}

static const mh_row rows[] = {
    {{"histogram/racy", MH_OP_HISTOGRAM, MH_BACKEND_CUDA, 1, "global", "seed 004",
      "DEMONSTRATION: unsynchronized increments, counts lost on collisions"},
     per_thread_supports, racy_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_DEMONSTRATION},
    HIST_ROW("global-atomic", 2, "global", "seed 004", "one 64-bit atomicAdd per element", per_thread_supports,
             global_run),
    HIST_ROW("shared-private", 3, "global+shared", "seed 004", "per-block bins in shared memory, one element per thread",
             shared_supports, shared_run),
    HIST_ROW("coarse-contiguous", 4, "global+shared", "seed 004", "16 consecutive elements per thread (uncoalesced)",
             contiguous_supports, contiguous_run),
    HIST_ROW("coarse-interleaved", 5, "global+shared", "seed 004", "grid-stride over the input, coalesced",
             interleaved_supports, interleaved_run),
    HIST_ROW("vector", 6, "global+shared", "ours", "coarse-interleaved with 16-byte loads", interleaved_supports,
             vector_run),
    {{"histogram/warp-private", MH_OP_HISTOGRAM, MH_BACKEND_CUDA, 7, "global+shared", "ours",
      "a sub-histogram per warp (equal lanes aggregated in the match configuration)"},
     warp_supports, warp_run, warp_configs},
    HIST_ROW("lane-private", 8, "global+shared", "ours",
             "32 interleaved copies of the bins, one per lane: shared atomics free of bank conflicts", lane_supports,
             lane_run),
};

MH_ROW_GROUP(mh_histogram_cuda_rows, rows)

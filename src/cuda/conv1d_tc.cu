/* conv1d/tc, ours: the convolution as matrix products on Hopper's tensor cores (wgmma), 3xTF32
 * so that the result keeps FP32 accuracy (tf32_split.cuh, docs/matmul.md).
 *
 * The Toeplitz formulation. Cut the outputs into windows of 64: window m holds outputs
 * o0 + 64 m + c, c = 0..63. Output c of window m is
 *     out[o0 + 64 m + c] = sum_s mask[s - c] x[64 m + s]      (x[s] = in[o0 - lpad + s])
 * over s = 0 .. 62 + k (mask = 0 outside 0..k-1): one column of the product D = A B with
 *     A[c][s] = mask[s - c]      a 64 x KT Toeplitz matrix of the mask, the same for every window
 *     B[s][m] = x[64 m + s]      the windows of the signal, 64 apart and KT long (KT = k + 63
 *                                rounded up to wgmma's k step of 8)
 * so a block's WINDOWS windows are one m64nNkKT product per warpgroup (N windows each). The
 * work done is KT multiply-adds per output against k useful ones (k = 255: 320 / 255 = 1.25;
 * 127: 1.51; 63: 2.03; 2047: 1.03), times 3 for the split.
 * Worked example, mask (a, b, c), 4 outputs a window instead of 64 (KT = 6): rows c = 0..3 of A are
 *     (a b c 0 0 0), (0 a b c 0 0), (0 0 a b c 0), (0 0 0 a b c)
 * and column m of B is x[4 m .. 4 m + 5].
 *
 * Neither matrix is stored as such. wgmma reads K-major operands as core matrices of 8 rows of
 * 16 bytes (4 values of k) with two byte offsets: `lead` to the next 4 of k, `stride` to the
 * next 8 rows (wgmma_util.cuh), and those may overlap.
 *   A: rows in reverse (row r = 63 - c: A'[r][s] = mask[s - 63 + r]) so that the next row is the
 *      same values one further on. A 16-byte unit u holds mask[u - 63 .. u - 60]; row r, k 4j..4j+3
 *      is unit r + 4 j: lead 64 bytes, stride 128. k + 127 units (16 (k + 127) bytes a part)
 *      stand for the 64 x KT matrix.
 *   B: the tile's signal as 16 planes, plane p holding x[64 R + 4 p .. + 3] for every row R of
 *      64 in 16 consecutive bytes: window m's k 4j..4j+3 is plane j % 16, row m + j / 16, so
 *      stride 128 (8 windows) and lead one plane. The plane length is an odd number of 16-byte
 *      rows, so the split stores of a warp (8 planes, 4 values each) hit 32 distinct banks.
 * Both parts (big and small TF32) of both are split as they are stored, with integer rounding
 * (tf32_split_int): every element of the tile is split once.
 *
 * How it runs: one kernel of persistent blocks (conv1d_tc_kernel: three tiles in flight). A
 * block stores the mask's units once; a tile is WINDOWS + (KT - 1) / 64 + 1 rows of 64. Each
 * warpgroup runs small*big, big*small, big*big per 8-deep slice (three m64nNk8 wgmma) into a
 * partial sum per chunk of 1 to 8 slices (chunk_for: shorter for short masks), added to the
 * accumulator with round-to-nearest after wgmma.wait_group 0 (the tensor cores' own
 * accumulation truncates: matmul_wgmma.cu).
 * Per-signal masks cost nothing extra: every block reads its signal's mask. Measured in
 * docs/conv1d.md: faster than regtile from k = 255, 2.4x to 10.8x slower than fft-fused.
 * A NaN or Inf in the signal meets A's zeros (0 * Inf = NaN): outputs of the windows whose
 * KT-long span holds it can turn NaN, where the direct rows give Inf or a finite value; no
 * other window and no other signal.
 *
 * Built for sm_90a only (wgmma): CMake compiles this file with -gencode arch=compute_90a,code=sm_90a;
 * the row refuses other devices. */
#include "common.cuh"
#include "tf32_split.cuh"
#include "tile_io.cuh"
#include "wgmma_ops.cuh"
#include "wgmma_util.cuh"

#include <stdio.h>

namespace {

constexpr int PHASES = 64;         /* outputs a window: wgmma's m */
constexpr int PLANES = PHASES / 4; /* 16-byte units a window row */
constexpr int ROW_SLICES = PLANES / 2; /* 8-deep slices a 64-value row of B's planes */
constexpr int MAX_K = 8191;        /* keeps the layout's ints small; shared memory refuses from k = 2778 (n64) */

/* A warpgroup multiplies NW windows (wgmma's n: 64 or 128); a block holds WG warpgroups side
 * by side on one tile. */
template <int NW, int WG> struct tc1_shape {
    static constexpr int THREADS = 128 * WG;
    static constexpr int WINDOWS = NW * WG;
    static constexpr int OUTPUTS = PHASES * WINDOWS;
    static constexpr int PART = NW / 2; /* accumulators a thread */
};

/* A block's shared memory, in floats: the mask's units (big, then small), two buffers of the
 * signal's planes (16 big, then 16 small): the tile being multiplied and the next, and the tile
 * after that as it arrives (cp.async), unsplit. */
struct tc1_layout {
    int slices; /* KT / 8 */
    int units;  /* 16-byte units of A a part: every row r + 4 j the slices reach */
    int rows;   /* signal rows of 64 a plane, odd */
    __host__ __device__ tc1_layout(int k, int windows)
        : slices((k + PHASES - 1 + 7) / 8), units(8 * slices + PHASES), rows((windows + (slices - 1) / 8 + 1) | 1)
    {
    }
    __host__ __device__ int plane() const { return 4 * rows; }
    __host__ __device__ int tile() const { return PHASES * rows; } /* a tile's elements */
    __host__ __device__ int chunks(int chunk) const { return (slices + chunk - 1) / chunk; }
    __host__ __device__ int units_at(int part) const { return part * 4 * units; }
    __host__ __device__ int plane_at(int buf, int part, int p) const
    {
        return 8 * units + ((buf * 2 + part) * PLANES + p) * plane();
    }
    __host__ __device__ int raw_at() const { return plane_at(2, 0, 0); } /* the next tile as it arrives */
    __host__ __device__ size_t bytes() const { return (size_t)(raw_at() + tile()) * sizeof(float); }
};

struct tc1_params {
    const float *in, *mask;
    float *out;
    size_t n, out_n, mask_stride, tiles; /* tiles: blocks of OUTPUTS outputs a signal */
    long long lpad;
    int k;
};

#ifndef MH_WGMMA_ABSENT

/* Unit u = mask[u - 63 .. u - 60], zero outside the mask. */
__device__ __forceinline__ void store_units(const tc1_layout &l, const float *mask, int k, float *smem)
{
    for (int e = threadIdx.x; e < 4 * l.units; e += blockDim.x) {
        const int j = e / 4 - (PHASES - 1) + e % 4;
        unsigned big, small;
        tf32_split_int(j >= 0 && j < k ? __ldg(mask + j) : 0.0f, big, small);
        smem[l.units_at(0) + e] = __uint_as_float(big);
        smem[l.units_at(1) + e] = __uint_as_float(small);
    }
}

/* Elements begin .. end - 1 of the arrived tile, split into the planes of buffer buf: element
 * e = (R, q) at plane q / 4, 16-byte row R, place q % 4. */
__device__ __forceinline__ void split_signal(const tc1_layout &l, float *smem, int buf, int begin, int end)
{
    const float *raw = smem + l.raw_at();
    float *big_at = smem + l.plane_at(buf, 0, 0), *small_at = smem + l.plane_at(buf, 1, 0);
#pragma unroll 4
    for (int e = begin + threadIdx.x; e < end; e += blockDim.x) {
        const int at = e % PHASES / 4 * l.plane() + 4 * (e / PHASES) + e % 4;
        unsigned big, small;
        tf32_split_int(raw[e], big, small);
        big_at[at] = __uint_as_float(big);
        small_at[at] = __uint_as_float(small);
    }
}

/* Slices i0 .. i0 + C - 1 of the product into part (fresh: part = the product). A's units start
 * at 8 i (128 bytes a slice); B's k 8 i at plane 2 i % 16, row i / 8 (16 bytes a row).
 * Descriptor addresses count 16-byte units. */
template <int C, int NW>
__device__ __forceinline__ void issue_slices(float (&part)[NW / 2], int i0, bool fresh, unsigned plane_bytes,
                                             const unsigned long long (&a)[2], const unsigned long long (&b)[2])
{
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int i = i0 + c;
        const unsigned long long da = 8 * i, db = (2 * (i % ROW_SLICES) * plane_bytes + 16 * (i / ROW_SLICES)) >> 4;
        wgmma_ss(part, a[1] + da, b[0] + db, c > 0 || !fresh); /* small * big */
        wgmma_ss(part, a[0] + da, b[1] + db, 1);              /* big * small */
        wgmma_ss(part, a[0] + da, b[0] + db, 1);              /* big * big */
    }
}

/* Ends a chunk: overlap(c) runs while its products are in flight, then they are added to acc
 * with round-to-nearest. */
template <int NW, typename F>
__device__ __forceinline__ void finish_chunk(float (&part)[NW / 2], float (&acc)[NW / 2], int c, F &overlap)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    overlap(c);
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    fence_operands(part);
#pragma unroll
    for (int i = 0; i < NW / 2; ++i) acc[i] += part[i];
}

/* The warpgroup's NW windows (from window w0 of the tile in buffer buf) times A, into acc:
 * CHUNK slices a partial sum (chunk_for). While chunk c's products run, overlap(c) does other
 * work (the next tile's loads). Each branch has its own partial sum and finishes it: a partial
 * sum that two branches write makes ptxas copy it where they join, and wait for its wgmma
 * there, before overlap(c). The last, shorter chunk runs as 4 + 2 + 1 slices (ptxas waits
 * between those). */
template <int NW, int CHUNK, typename F>
__device__ __forceinline__ void multiply(const tc1_layout &l, const float *smem, int buf, int w0, float (&acc)[NW / 2],
                                         F overlap)
{
    const unsigned plane_bytes = 4 * l.plane();
    const unsigned long long a[2] = {wgmma_desc(smem + l.units_at(0), 64, 128), wgmma_desc(smem + l.units_at(1), 64, 128)};
    const unsigned long long b[2] = {wgmma_desc(smem + l.plane_at(buf, 0, 0) + 4 * w0, plane_bytes, 128),
                                     wgmma_desc(smem + l.plane_at(buf, 1, 0) + 4 * w0, plane_bytes, 128)};
    for (int i0 = 0; i0 < l.slices; i0 += CHUNK) {
        const int count = min(CHUNK, l.slices - i0);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        if (count == CHUNK) {
            float part[NW / 2];
            issue_slices<CHUNK, NW>(part, i0, true, plane_bytes, a, b);
            finish_chunk<NW>(part, acc, i0 / CHUNK, overlap);
        } else {
            float part[NW / 2];
            int i = i0;
            if (count & 4) issue_slices<4, NW>(part, i, i == i0, plane_bytes, a, b), i += 4;
            if (count & 2) issue_slices<2, NW>(part, i, i == i0, plane_bytes, a, b), i += 2;
            if (count & 1) issue_slices<1, NW>(part, i, i == i0, plane_bytes, a, b);
            finish_chunk<NW>(part, acc, i0 / CHUNK, overlap);
        }
    }
}

/* acc[i]: A row r = 16 warp + lane / 4 + 8 (i % 4 / 2), that is output c = 63 - r, of window
 * w0 + 8 (i / 4) + 2 (lane % 4) + i % 2 (wgmma's accumulator layout). A warp's store of one i
 * is 4 runs of 8 consecutive outputs, 32 bytes each. */
template <int NW>
__device__ __forceinline__ void store_outputs(float *out, size_t out_n, size_t o0, int w0, const float (&acc)[NW / 2])
{
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < NW / 2; ++i) {
        const int r = 16 * warp + lane / 4 + 8 * (i % 4 / 2), m = w0 + 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        const size_t o = o0 + (size_t)PHASES * m + (PHASES - 1 - r);
        if (o < out_n) out[o] = acc[i];
    }
}

#endif /* MH_WGMMA_ABSENT */

/* A block walks the tiles blockIdx.x, + gridDim.x, ... of signal blockIdx.y. Three tiles are
 * in flight: the tensor cores multiply tile t from one buffer of planes while the threads split
 * tile t + 1 (arrived in the staging area) into the other, chunk by chunk, and tile t + 2 is
 * copied into the staging area by cp.async, issued as soon as t + 1 has left it. Without the
 * staging area (each thread loading 16 elements into registers, then splitting them) too few
 * bytes are in flight: DRAM 19% busy at k = 255 (ncu), ~15% slower. */
template <int NW, int WG, int C>
__global__ void __launch_bounds__(128 * WG) conv1d_tc_kernel(const tc1_params p)
{
#ifndef MH_WGMMA_ABSENT
    using S = tc1_shape<NW, WG>;
    extern __shared__ __align__(128) float smem[];
    const tc1_layout l(p.k, S::WINDOWS);
    const size_t signal = blockIdx.y, step = gridDim.x;
    const float *in = p.in + signal * p.n;
    float *out = p.out + signal * p.out_n;
    const auto fetch = [&](size_t tile) { /* tile's signal into the staging area, asynchronously */
        load_span(smem + l.raw_at(), in, p.n, (long long)(tile * S::OUTPUTS) - p.lpad, l.tile(), threadIdx.x,
                  S::THREADS);
        cp_async_commit();
    };
    size_t t = blockIdx.x;
    store_units(l, p.mask + signal * p.mask_stride, p.k, smem);
    fetch(t);
    cp_async_wait<0>();
    __syncthreads();
    split_signal(l, smem, 0, 0, l.tile());
    __syncthreads();
    if (t + step < p.tiles) fetch(t + step);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); /* the planes, read by wgmma */
    __syncthreads();

    /* tile t + 1 is split in the chunks from `first` on (the copy has had a chunk's time to land),
     * a whole number of rounds of the block's threads each */
    const int chunks = l.chunks(C), first = chunks > 1 ? 1 : 0;
    const int share = (l.tile() + (chunks - first) * S::THREADS - 1) / ((chunks - first) * S::THREADS) * S::THREADS;
    const int w0 = NW * (threadIdx.x / 128);
    for (int buf = 0; t < p.tiles; t += step, buf ^= 1) {
        const bool more = t + step < p.tiles;
        float acc[S::PART];
#pragma unroll
        for (int i = 0; i < S::PART; ++i) acc[i] = 0.0f;
        multiply<NW, C>(l, smem, buf, w0, acc, [&](int c) {
            if (!more || c < first) return;
            if (c == first) {
                cp_async_wait<0>();
                __syncthreads(); /* every thread's copies have landed */
            }
            const int b = (c - first) * share;
            split_signal(l, smem, buf ^ 1, b, min(l.tile(), b + share));
        });
        store_outputs<NW>(out, p.out_n, t * S::OUTPUTS, w0, acc);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads(); /* tile t + 1 is split and the staging area free; this tile's buffer is read */
        if (t + 2 * step < p.tiles) fetch(t + 2 * step);
    }
#endif
}

/* ---- configurations, launch, registry -------------------------------------------------- */

/* "n<windows a warpgroup>[x<warpgroups>]". n64 holds 2 blocks an SM (98 KB of shared memory at
 * k = 255), n128 and n64x2 one (178 KB). [0] "auto": n64x2 for k from 768 while it fits (k <=
 * 1177), n64 elsewhere (H100, n = 16M valid, ms: k = 255 n64 0.156, n128 0.217, n64x2 0.160;
 * k = 1023 0.489, 0.411, 0.362). */
const char *const tc1_configs[] = {"auto", "n64", "n128", "n64x2", NULL};

template <int NW_, int WG_> struct tc1_instance {
    static constexpr int NW = NW_, WG = WG_;
};

template <typename F> auto with_instance(const mh_args *x, F f)
{
    const size_t k = x->conv1d.k;
    switch (x->config) {
    case 1: return f(tc1_instance<64, 1>{});
    case 2: return f(tc1_instance<128, 1>{});
    case 3: return f(tc1_instance<64, 2>{});
    default: return k >= 768 && k <= 1177 ? f(tc1_instance<64, 2>{}) : f(tc1_instance<64, 1>{});
    }
}

/* Blocks a signal: enough to fill the GPU once (blocks walk the rest), at most one a tile. */
template <int NW, int WG, int C> mh_status grid_width(mh_context *ctx, const tc1_layout &l, size_t tiles, size_t signals, unsigned *width)
{
    size_t resident = 0;
    MH_TRY(mh_resident_grid(ctx, (const void *)conv1d_tc_kernel<NW, WG, C>, 128 * WG, l.bytes(), &resident));
    const size_t want = mh_ceil_div(resident, signals);
    *width = (unsigned)(want < tiles ? want : tiles);
    return MH_OK;
}

template <int NW, int WG, int C> mh_status run_chunk(mh_context *ctx, const mh_conv1d_args *a)
{
    using S = tc1_shape<NW, WG>;
    const tc1_layout l((int)a->k, S::WINDOWS);
    const void *kernel = (const void *)conv1d_tc_kernel<NW, WG, C>;
    MH_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)l.bytes()));
    tc1_params p;
    p.n = a->n, p.out_n = a->out_n, p.mask_stride = a->mask_stride, p.lpad = (long long)a->lpad, p.k = (int)a->k;
    p.tiles = mh_ceil_div(a->out_n, (size_t)S::OUTPUTS);
    return mh_per_grid_slice(a->batch, [&](size_t b, unsigned signals) { /* grid.y: signals of the batch */
        unsigned width;
        MH_TRY((grid_width<NW, WG, C>(ctx, l, p.tiles, signals, &width)));
        p.in = a->in + b * a->n, p.mask = a->mask + b * a->mask_stride, p.out = a->out + b * a->out_n;
        conv1d_tc_kernel<NW, WG, C><<<dim3(width, signals), S::THREADS, l.bytes(), mh_stream(ctx)>>>(p);
        return MH_LAUNCH_CHECK(ctx, "conv1d_tc_kernel");
    });
}

/* Slices a partial sum for a mask k long. The tensor cores' accumulation truncates, and each
 * wgmma into a partial sum rounds it toward zero again: short sums need short partial sums to
 * stay within 2x regtile's error (H100, n = 200003 same, wide data, tc's error over regtile's,
 * normwise: k = 63 3.0x with 8 slices a partial, 1.4x with 1; k = 255 2.2x with 8, 1.4x with 4),
 * but each partial ends in wgmma.wait_group 0, so shorter partials idle the tensor cores (k = 255:
 * 9% slower with 4 slices than 8, 60% with 1). A power of two up to 8, at most a tenth of the
 * slices. */
int chunk_for(int k)
{
    const int tenth = tc1_layout(k, 64).slices / 10;
    return tenth >= 8 ? 8 : tenth >= 4 ? 4 : tenth >= 2 ? 2 : 1;
}

template <int NW, int WG> mh_status run_shape(mh_context *ctx, const mh_conv1d_args *a)
{
    switch (chunk_for((int)a->k)) {
    case 1: return run_chunk<NW, WG, 1>(ctx, a);
    case 2: return run_chunk<NW, WG, 2>(ctx, a);
    case 4: return run_chunk<NW, WG, 4>(ctx, a);
    default: return run_chunk<NW, WG, 8>(ctx, a);
    }
}

int tc1_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    const mh_conv1d_args *a = &x->conv1d;
    if (!mh_conv1d_zero_pad_only(a, why, len) || !mh_wgmma_device(ctx, why, len)) return 0;
    if (a->k > MAX_K) {
        snprintf(why, len, "k = %zu: the mask's units and the signal tiles live in shared memory, which holds k <= 2777 (n64)", a->k);
        return 0;
    }
    const size_t bytes = with_instance(x, [a](auto i) { return tc1_layout((int)a->k, i.NW * i.WG).bytes(); });
    if (bytes > mh_smem_optin()) {
        snprintf(why, len, "k = %zu: the mask's units and the signal tile need %zu bytes of shared memory, more than a block may use",
                 a->k, bytes);
        return 0;
    }
    return 1;
}

mh_status tc1_run(mh_context *ctx, const mh_args *x)
{
    return with_instance(x, [ctx, x](auto i) { return run_shape<i.NW, i.WG>(ctx, &x->conv1d); });
}

const mh_row rows[] = {
    {{"conv1d/tc", MH_OP_CONV1D, MH_BACKEND_CUDA, 14, "global+shared+tensor", "ours",
      "3xTF32 wgmma: 64-output windows of the signal times one Toeplitz matrix of the mask; k <= 2777"},
     tc1_supports, tc1_run, tc1_configs, 1},
};

} // namespace

MH_ROW_GROUP(mh_conv1d_tc_rows, rows)

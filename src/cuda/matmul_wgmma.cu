/* matmul/tf32x3-wgmma and matmul/tf32-wgmma, ours: 3xTF32 (matmul_tensor.cu's split), and one
 * TF32 product, on Hopper's warpgroup MMA.
 *
 * Why a second kernel: mma.sync runs TF32 on the H100 at about a third of the rate cuBLAS's TF32
 * reaches with wgmma, and tf32x3 needs three products. wgmma reads b from shared memory through a descriptor, K-major
 * for TF32, so b's split cannot happen on the way into registers. a's could (wgmma takes a from
 * registers too), but splitting a in every block is ~8% slower at 4096^3 than splitting it once,
 * although a block then copies 15% fewer bytes a k-step (docs/matmul.md).
 *
 * Two kernels:
 *   split_tiles_kernel  a and b once, into big and small TF32 parts, cut into the tiles the
 *                       product reads (128 rows of 32 k: a as it is, b transposed to K-major),
 *                       each tile a contiguous image of its shared-memory layout (128-byte
 *                       swizzle: row r's 16-byte chunk c at c ^ (r % 8)), zero-padded
 *   the product         a block per 128 x BN of c (BN 64, 128 or 256), two warpgroups of 64
 *                       rows multiplying; per k-step of 32 the four tiles (a big, a small, b big,
 *                       b small) arrive verbatim; then three m64nNk8 wgmma (N = min(BN, 128)) per
 *                       8-deep slice and piece of N columns, small*big, big*small, big*big, into
 *                       a partial sum added to the accumulator with round-to-nearest (the tensor
 *                       cores' adds truncate: matmul_tensor.cu). Two ways to feed it:
 *     matmul_wgmma_kernel     (plain) every thread copies its share of a stage by cp.async, as
 *                             many steps ahead as the stages allow, and a k-step starts with
 *                             cp.async.wait and __syncthreads
 *     matmul_wgmma_ws_kernel  (warp specialized, configurations -ws) a third warpgroup copies
 *                             with the bulk copy engine onto full/empty mbarriers; no block-wide
 *                             barrier: a multiplying warpgroup starts a k-step as soon as its
 *                             bytes are in, where the plain kernel's warps spend half their
 *                             stalls at the barrier (ncu at 4096^3; ~20% faster here).
 *                             -c2: in clusters of two blocks (rows of tiles mt, mt + 1) that
 *                             multicast half of each b tile each into both, so that b crosses
 *                             L2 once per pair (tf32-wgmma's auto at n256: 7% faster).
 * 128 x 256 blocks copy 25% fewer bytes per product than 128 x 128 (L2: 6.6 GB against 9.0 at
 * 4096^3). tf32-wgmma is the same product with big*big alone, accumulated on the tensor cores
 * directly (one m64n{BN}k8 per slice): the reduced-precision rung beside cuBLAS's TF32.
 * The split is a pass of its own, over a and b once: split inside the product's loop (every
 * thread splitting raw tiles while the last k-step's wgmma run) the kernel is issue-bound at
 * 4x the instructions.
 * Workspace: 2 (a + b) floats (tf32-wgmma: a + b), padded to whole tiles.
 *
 * Built for sm_90a only (wgmma, setmaxnreg): CMake compiles this file with -gencode
 * arch=compute_90a,code=sm_90a; the rows refuse other devices. */
#include "common.cuh"
#include "tf32_split.cuh"
#include "tile_io.cuh"
#include "wgmma_ops.cuh"

#include <stdio.h>

namespace {

constexpr int BM = 128, BK = 32, THREADS = 256;
constexpr int WS_THREADS = THREADS + 128; /* + the copying warpgroup (registers are granted by warpgroups) */
constexpr int A_TILE = BM * BK;           /* floats: 16 KB, 128 rows of 128 bytes */
constexpr int STAGE_BUDGET = 192 * 1024;  /* bytes of stages: a block may take 227 KB */

/* SPLIT: 3xTF32, FP32-accurate (tf32x3-wgmma). ONE: one TF32 product (tf32-wgmma). */
enum wg_kind { SPLIT, ONE };

/* A block computes 128 x BN of c (BN = 64, 128, 256) with 3 (SPLIT) or 1 (ONE) products per 8-deep slice. A
 * warpgroup's 64 x BN is computed in PIECES of N columns, one m64nNk8 wgmma each. SPLIT collects
 * each piece's k-step in a partial sum (the accumulation on the tensor cores truncates) and adds
 * it to acc with round-to-nearest after wgmma.wait_group 0; 128 accumulators and a 64-float
 * partial sum fit a thread's 255 registers at BN = 256, two 128-float sums would not, so N <= 128
 * there. ONE accumulates into acc on the tensor cores, one m64n{BN}k8 per slice, and leaves one
 * k-step's wgmma in flight (wait_group 1). */
template <int BN, int KIND> struct wg_shape {
    static constexpr int B_TILE = BN * BK;                      /* floats */
    static constexpr int N = KIND == ONE || BN < 128 ? BN : 128; /* one wgmma's n */
    static constexpr int PIECES = BN / N;
    static constexpr int PART = N / 2;                          /* a piece's floats a thread */
    static constexpr int PARTS = KIND == SPLIT ? 2 : 1;         /* big and small, or big */
    static constexpr int A_FLOATS = PARTS * A_TILE;             /* a's floats in a stage */
    static constexpr int STAGE_BYTES = PARTS * (A_TILE + B_TILE) * 4;
    static constexpr int STAGES = STAGE_BUDGET / STAGE_BYTES < 6 ? STAGE_BUDGET / STAGE_BYTES : 6;
    /* Steps the plain kernel loads ahead. The stage refilled at step s was last read by step
     * s + AHEAD - STAGES; at step s's barrier every warpgroup has waited for step s - 1's wgmma
     * (SPLIT: wait_group 0) or s - 2's (ONE: wait_group 1). */
    static constexpr int AHEAD = KIND == SPLIT ? STAGES - 1 : STAGES - 2;
    static constexpr int SMEM = STAGES * STAGE_BYTES + 1024;    /* + alignment to 1024 */
    static constexpr int WS_SMEM = SMEM + 2 * STAGES * 8;       /* + the full and empty barriers */
    static_assert(AHEAD >= 1, "a stage must be in flight");
};

/* Tile i of k-step kt at (i * kt_count + kt) * tile floats: a block of the product reads its
 * tiles in order, and the split pass's concurrent blocks (consecutive kt of one i: blockIdx.x
 * is kt) read whole rows of a and write consecutive tiles. With blockIdx.x the tile, they would
 * read a 128-byte column strip of a from every row at once, a DRAM page opened per 128 bytes. */
struct wg_tiles {
    float *a_big, *a_small, *b_big, *b_small; /* the small parts NULL for tf32-wgmma */
    size_t kt_count;
};

__device__ __forceinline__ size_t tile_at(size_t i, size_t kt, size_t kt_count, int tile_floats)
{
    return (i * kt_count + kt) * tile_floats;
}

struct split_params {
    const float *a, *b;
    size_t m, k, n;
    size_t mt_count, nt_count;
    wg_tiles t;
};

#ifndef MH_WGMMA_ABSENT

/* big and small of four values (big alone where small is NULL: tf32-wgmma), as the 16-byte chunk
 * c of row r of two tile images. */
__device__ __forceinline__ void store_split(float *big, float *small, int r, int c, const float (&v)[4])
{
    unsigned hi[4], lo[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) tf32_split_finite(v[q], hi[q], lo[q]);
    const int at = r * 32 + ((c ^ (r & 7)) << 2);
    *reinterpret_cast<uint4 *>(big + at) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
    if (small) *reinterpret_cast<uint4 *>(small + at) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
}

/* Four consecutive floats of a row from p (row_len floats long) at col; zeros past the end.
 * One 16-byte load where the row's start and col allow it. */
__device__ __forceinline__ void load4(const float *row, size_t col, size_t row_len, bool vec_ok, float (&v)[4])
{
    if (vec_ok && col + 4 <= row_len) {
        const float4 q = __ldg(reinterpret_cast<const float4 *>(row + col));
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
        return;
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] = col + q < row_len ? __ldg(row + col + q) : 0.0f;
}

/* Tile (i, kt) of a: 128 rows of 32 k. Thread e holds row e / 8, chunk e % 8: a warp reads
 * four whole 128-byte row pieces and writes 512 contiguous bytes of the image. */
__device__ __forceinline__ void split_a_tile(const split_params &p, size_t i, size_t kt)
{
    const size_t at = tile_at(i, kt, p.t.kt_count, A_TILE), k0 = kt * BK;
    const bool vec_ok = p.k % 4 == 0 && mh_aligned16(p.a);
    float v[A_TILE / 4 / THREADS][4];
#pragma unroll
    for (int j = 0; j < A_TILE / 4 / THREADS; ++j) {
        const int e = j * THREADS + threadIdx.x;
        const size_t row = i * BM + e / 8;
        if (row < p.m) load4(p.a + row * p.k, k0 + 4 * (e % 8), p.k, vec_ok, v[j]);
        else v[j][0] = v[j][1] = v[j][2] = v[j][3] = 0.0f;
    }
#pragma unroll
    for (int j = 0; j < A_TILE / 4 / THREADS; ++j) {
        const int e = j * THREADS + threadIdx.x;
        store_split(p.t.a_big + at, p.t.a_small ? p.t.a_small + at : NULL, e / 8, e % 8, v[j]);
    }
}

/* Tile (i, kt) of b, transposed to K-major through shared memory: 32 rows of b, BN columns,
 * read a 4 BN-byte row piece per warp; written as a's are. The row stride of BN + 1 floats keeps
 * the column reads free of bank conflicts (4 c + r spans the 32 banks of a warp). */
template <int BN>
__device__ __forceinline__ void split_b_tile(const split_params &p, size_t i, size_t kt, float (*s)[BN + 1])
{
    constexpr int B_TILE = BN * BK;
    const size_t at = tile_at(i, kt, p.t.kt_count, B_TILE), k0 = kt * BK, n0 = i * BN;
    const bool vec_ok = p.n % 4 == 0 && mh_aligned16(p.b);
#pragma unroll
    for (int j = 0; j < B_TILE / 4 / THREADS; ++j) {
        const int e = j * THREADS + threadIdx.x, kk = e / (BN / 4), x = 4 * (e % (BN / 4));
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (k0 + kk < p.k && n0 + x < p.n) load4(p.b + (k0 + kk) * p.n + n0, x, p.n - n0, vec_ok, v);
#pragma unroll
        for (int q = 0; q < 4; ++q) s[kk][x + q] = v[q];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < B_TILE / 4 / THREADS; ++j) {
        const int e = j * THREADS + threadIdx.x, r = e / 8, c = (e % 8) ^ (r & 7);
        const float v[4] = {s[4 * c][r], s[4 * c + 1][r], s[4 * c + 2][r], s[4 * c + 3][r]};
        store_split(p.t.b_big + at, p.t.b_small ? p.t.b_small + at : NULL, r, c, v);
    }
}

#endif /* MH_WGMMA_ABSENT */

/* blockIdx.y: an a tile (i < mt_count) or a b tile (i - mt_count); blockIdx.x: kt, so that
 * concurrent blocks read neighbouring pieces of the same rows and write consecutive tiles.
 * Loads are 16 bytes a thread and every warp stores 512 contiguous bytes (b transposed through
 * shared memory): scalar loads and b's transposed stores scattered over 32 lines a warp would
 * keep the load/store queue full at a fifth of DRAM bandwidth. */
template <int BN> __global__ void __launch_bounds__(THREADS) split_tiles_kernel(const split_params p)
{
#ifndef MH_WGMMA_ABSENT
    __shared__ float s[BK][BN + 1];
    const size_t kt = blockIdx.x;
    if (blockIdx.y < p.mt_count) split_a_tile(p, blockIdx.y, kt);
    else split_b_tile<BN>(p, blockIdx.y - p.mt_count, kt, s);
#endif
}

#ifndef MH_WGMMA_ABSENT

/* K-major, 128-byte swizzle, 8-row groups 1024 bytes apart. */
__device__ __forceinline__ unsigned long long descriptor(const void *smem)
{
    const unsigned addr = (unsigned)__cvta_generic_to_shared(smem);
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ULL << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ULL << 62);
}

/* Keeps the compiler from moving accesses of d across the asynchronous wgmma. A "+f" operand,
 * not wgmma_util.cuh's "+r": the two give different code for the ONE kernels (not measured). */
template <int N> __device__ __forceinline__ void fence_operands(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/* One k-step's products into piece h of c's columns: d = (fresh ? 0 : d) + the sum over the 4
 * slices of the products (3 or 1), a and b from the stage at sp. */
template <int BN, int KIND>
__device__ __forceinline__ void issue_piece(const char *sp, int wg, int h, bool fresh, float (&d)[wg_shape<BN, KIND>::PART])
{
    using S = wg_shape<BN, KIND>;
    const unsigned long long a_big = descriptor(sp + wg * 64 * 128);
    const unsigned long long a_small = descriptor(sp + (S::PARTS - 1) * A_TILE * 4 + wg * 64 * 128);
    const char *b = sp + S::A_FLOATS * 4 + h * S::N * 128; /* row h N of the K-major b tile */
    const unsigned long long b_big = descriptor(b), b_small = descriptor(b + (S::PARTS - 1) * S::B_TILE * 4);
    fence_operands(d);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) { /* 32 bytes of k per slice: 2 in the descriptor's 16-byte units */
        const int acc_in = kk > 0 || !fresh;
        if (KIND == SPLIT) {
            wgmma_ss(d, a_small + 2 * kk, b_big + 2 * kk, acc_in);
            wgmma_ss(d, a_big + 2 * kk, b_small + 2 * kk, 1);
            wgmma_ss(d, a_big + 2 * kk, b_big + 2 * kk, 1);
        } else {
            wgmma_ss(d, a_big + 2 * kk, b_big + 2 * kk, acc_in);
        }
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

#endif /* MH_WGMMA_ABSENT */

struct wg_params {
    wg_tiles t;
    float *c;
    size_t m, n;
};

#ifndef MH_WGMMA_ABSENT
template <int BN, int KIND> using wg_acc = float[wg_shape<BN, KIND>::PIECES][wg_shape<BN, KIND>::PART];

template <int BN, int KIND> __device__ __forceinline__ void zero(wg_acc<BN, KIND> &acc)
{
#pragma unroll
    for (int h = 0; h < wg_shape<BN, KIND>::PIECES; ++h)
#pragma unroll
        for (int i = 0; i < wg_shape<BN, KIND>::PART; ++i) acc[h][i] = 0.0f;
}

/* The stages start 1024-aligned: the 128-byte swizzle repeats every 8 rows of 128 bytes. */
__device__ __forceinline__ char *stages_of(char *smem_raw)
{
    return (char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
}

/* The block's 128 x BN of c from the accumulators. d[i] of piece h: row 16 warp + g + 8 (i % 4 /
 * 2), column h N + 8 (i / 4) + 2 t + i % 2 of the warpgroup's 64 x BN. */
template <int BN, int KIND>
__device__ __forceinline__ void store_c(const wg_params &p, size_t mt, size_t nt, const wg_acc<BN, KIND> &acc)
{
    using S = wg_shape<BN, KIND>;
    const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int h = 0; h < S::PIECES; ++h)
#pragma unroll
        for (int i = 0; i < S::PART; i += 2) {
            const size_t row = mt * BM + wg * 64 + warp * 16 + g + 8 * ((i % 4) / 2);
            const size_t col = nt * BN + h * S::N + 8 * (i / 4) + 2 * t;
            if (row >= p.m) continue;
            float *c = p.c + row * p.n;
            if (col < p.n) c[col] = acc[h][i];
            if (col + 1 < p.n) c[col + 1] = acc[h][i + 1];
        }
}

/* A k-step of SPLIT: each piece's products into a fresh partial sum, waited for and added to acc
 * with round-to-nearest. acc += part only after wait_group 0: a read of a wgmma's accumulators
 * while any wgmma is in flight (two partial sums in turn, one read after wait_group 1) makes ptxas
 * serialize every wgmma (warning C7514). done() runs once the step's last wgmma are complete (the
 * stage may be refilled). */
template <int BN, typename Done>
__device__ __forceinline__ void split_step(const char *sp, int wg, wg_acc<BN, SPLIT> &acc,
                                           float (&part)[wg_shape<BN, SPLIT>::PART], Done done)
{
    using S = wg_shape<BN, SPLIT>;
#pragma unroll
    for (int h = 0; h < S::PIECES; ++h) {
        issue_piece<BN, SPLIT>(sp, wg, h, true, part);
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        fence_operands(part);
        if (h == S::PIECES - 1) done();
#pragma unroll
        for (int i = 0; i < S::PART; ++i) acc[h][i] += part[i];
    }
}

/* A k-step of ONE: its products into acc, then wait until only this step's wgmma are in flight;
 * done() runs once the previous step's are complete (its stage may be refilled). */
template <int BN, typename Done>
__device__ __forceinline__ void one_step(const char *sp, int wg, wg_acc<BN, ONE> &acc, Done done)
{
    issue_piece<BN, ONE>(sp, wg, 0, false, acc[0]);
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); /* step - 1's done */
    done();
}

/* After ONE's last k-step: every wgmma complete before acc is read. */
template <int BN> __device__ __forceinline__ void one_finish(wg_acc<BN, ONE> &acc)
{
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    fence_operands(acc[0]);
}

/* ---- the plain kernel: every thread copies, a barrier a k-step ---------------------------- */

/* count floats from src to dst, 16 bytes a copy. */
template <int COUNT> __device__ __forceinline__ void copy_tile(float *dst, const float *src)
{
#pragma unroll
    for (int i = 0; i < COUNT / 4 / THREADS; ++i) {
        const int e = (i * THREADS + threadIdx.x) * 4;
        cp_async16(dst + e, src + e);
    }
}

/* The tiles of k-step kt into a stage: a big[, a small], b big[, b small] (the same list as
 * request_stage's bulk copies). */
template <int BN, int KIND>
__device__ __forceinline__ void load_stage(const wg_tiles &t, char *stage, size_t mt, size_t nt, size_t kt)
{
    using S = wg_shape<BN, KIND>;
    const size_t a_at = tile_at(mt, kt, t.kt_count, A_TILE), b_at = tile_at(nt, kt, t.kt_count, S::B_TILE);
    float *dst = (float *)stage;
    copy_tile<A_TILE>(dst, t.a_big + a_at);
    if (S::PARTS == 2) copy_tile<A_TILE>(dst + A_TILE, t.a_small + a_at);
    copy_tile<S::B_TILE>(dst + S::A_FLOATS, t.b_big + b_at);
    if (S::PARTS == 2) copy_tile<S::B_TILE>(dst + S::A_FLOATS + S::B_TILE, t.b_small + b_at);
}

/* Waits for k-step `step`'s tiles, then asks for step + AHEAD's (a group is committed every
 * step, empty past the end, so that wait_group counts steps). */
template <int BN, int KIND>
__device__ __forceinline__ const char *next_stage(const wg_tiles &t, char *base, size_t mt, size_t nt, size_t step,
                                                  size_t steps)
{
    using S = wg_shape<BN, KIND>;
    cp_async_wait<S::AHEAD - 1>();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); /* cp.async's writes, read by wgmma */
    __syncthreads();
    if (step + S::AHEAD < steps)
        load_stage<BN, KIND>(t, base + ((step + S::AHEAD) % S::STAGES) * S::STAGE_BYTES, mt, nt, step + S::AHEAD);
    cp_async_commit();
    return base + (step % S::STAGES) * S::STAGE_BYTES;
}
#endif

template <int BN, int KIND> __global__ void __launch_bounds__(THREADS, 1) matmul_wgmma_kernel(const wg_params p)
{
#ifndef MH_WGMMA_ABSENT
    using S = wg_shape<BN, KIND>;
    extern __shared__ __align__(16) char smem_raw[];
    char *base = stages_of(smem_raw);
    const int wg = threadIdx.x / 128;
    const size_t mt = blockIdx.y, nt = blockIdx.x, steps = p.t.kt_count;
    wg_acc<BN, KIND> acc;
    zero<BN, KIND>(acc);
    for (int s = 0; s < S::AHEAD; ++s) {
        if ((size_t)s < steps) load_stage<BN, KIND>(p.t, base + s * S::STAGE_BYTES, mt, nt, s);
        cp_async_commit();
    }
    if constexpr (KIND == SPLIT) {
        float part[S::PART];
        for (size_t step = 0; step < steps; ++step)
            split_step<BN>(next_stage<BN, KIND>(p.t, base, mt, nt, step, steps), wg, acc, part, [] {});
    } else {
        for (size_t step = 0; step < steps; ++step)
            one_step<BN>(next_stage<BN, KIND>(p.t, base, mt, nt, step, steps), wg, acc, [] {});
        one_finish<BN>(acc);
    }
    store_c<BN, KIND>(p, mt, nt, acc);
#endif
}

/* ---- the warp-specialized kernel: a copying warpgroup, mbarriers, no block-wide barrier ----
 * One thread of the third warpgroup moves each k-step's tile images with the bulk copy engine
 * (cp.async.bulk, two or four instructions a step), announcing their bytes on the stage's `full`
 * barrier; each multiplying warp waits there, and once its wgmma that read the stage are done
 * arrives on the stage's `empty` barrier (8 arrivals) before the copier refills it. Every stage
 * is in flight at once. */
#ifndef MH_WGMMA_ABSENT
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_bytes(uint64_t *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=;\n}\n" ::"r"(smem_u32(bar)),
                 "r"(parity)
                 : "memory");
}

__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}

/* bulk_copy into the same offsets of dst and bar in both blocks of a cluster of two. */
__device__ __forceinline__ void bulk_copy_both(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1], %2, [%3], %4;\n" ::"r"(smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar)), "h"((unsigned short)3)
                 : "memory");
}

/* An arrival on the barrier at bar's offset in block `rank` of the cluster. Default semantics
 * (release at CTA scope), as for a local arrival: what it publishes is that this warp's wgmma
 * finished reading the stage. .release.cluster would order every earlier write of the block
 * against the cluster, which makes 4096^3 about 1.7x slower than no cluster at all. */
__device__ __forceinline__ void mbar_arrive_in(uint64_t *bar, unsigned rank)
{
    asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
                 "r"(rank)
                 : "memory");
}

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

/* Every thread of both blocks of the cluster. */
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/* One thread: k-step kt's tile images into stage, completing on full (the same list as the plain
 * kernel's load_stage). In a cluster of two (CL = 2: blocks of rows mt and mt + 1 of tiles,
 * the same b tiles), block `rank` copies half `rank` of each b image into both blocks' stages,
 * so that the pair reads b from L2 once. */
template <int BN, int KIND, int CL>
__device__ __forceinline__ void request_stage(const wg_tiles &t, char *stage, uint64_t *full, size_t mt, size_t nt,
                                              size_t kt, unsigned rank)
{
    using S = wg_shape<BN, KIND>;
    const size_t a_at = tile_at(mt, kt, t.kt_count, A_TILE), b_at = tile_at(nt, kt, t.kt_count, S::B_TILE);
    mbar_expect_bytes(full, S::STAGE_BYTES);
    bulk_copy(stage, t.a_big + a_at, A_TILE * 4, full);
    if (S::PARTS == 2) bulk_copy(stage + A_TILE * 4, t.a_small + a_at, A_TILE * 4, full);
    char *b_stage = stage + S::A_FLOATS * 4;
    if constexpr (CL == 1) {
        bulk_copy(b_stage, t.b_big + b_at, S::B_TILE * 4, full);
        if (S::PARTS == 2) bulk_copy(b_stage + S::B_TILE * 4, t.b_small + b_at, S::B_TILE * 4, full);
    } else {
        constexpr int HALF = S::B_TILE / 2; /* floats: BN / 2 rows of the K-major image */
        bulk_copy_both(b_stage + rank * HALF * 4, t.b_big + b_at + rank * HALF, HALF * 4, full);
        if (S::PARTS == 2)
            bulk_copy_both(b_stage + (S::B_TILE + rank * HALF) * 4, t.b_small + b_at + rank * HALF, HALF * 4, full);
    }
}

/* A multiplying warp's release of a stage: to its own block, or (CL = 2) to both blocks, since
 * either block's copier writes into both. */
template <int CL> __device__ __forceinline__ void release_stage(uint64_t *empty)
{
    if constexpr (CL == 1) {
        mbar_arrive(empty);
    } else {
        mbar_arrive(empty);
        mbar_arrive_in(empty, cluster_rank() ^ 1);
    }
}

/* The two multiplying warpgroups: each k-step's stage as soon as its bytes are in, released
 * warp by warp once the warp's wgmma that read it are done. */
template <int BN, int KIND, int CL>
__device__ __forceinline__ void multiply_ws(const wg_params &p, const char *base, uint64_t *full, uint64_t *empty,
                                            size_t mt, size_t nt, size_t steps)
{
    using S = wg_shape<BN, KIND>;
    const int wg = threadIdx.x / 128;
    const bool leader = threadIdx.x % 32 == 0;
    wg_acc<BN, KIND> acc;
    zero<BN, KIND>(acc);
    if constexpr (KIND == SPLIT) {
        float part[S::PART];
        for (size_t step = 0; step < steps; ++step) {
            const int s = (int)(step % S::STAGES);
            mbar_wait(&full[s], (unsigned)(step / S::STAGES) & 1);
            split_step<BN>(base + s * S::STAGE_BYTES, wg, acc, part, [&] {
                if (leader) release_stage<CL>(&empty[s]);
            });
        }
    } else {
        for (size_t step = 0; step < steps; ++step) {
            const int s = (int)(step % S::STAGES);
            mbar_wait(&full[s], (unsigned)(step / S::STAGES) & 1);
            one_step<BN>(base + s * S::STAGE_BYTES, wg, acc, [&] {
                if (step > 0 && leader) release_stage<CL>(&empty[(step - 1) % S::STAGES]);
            });
        }
        one_finish<BN>(acc);
    }
    store_c<BN, KIND>(p, mt, nt, acc);
}
#endif

/* CL = 2: launched in clusters of two blocks along y (rows of tiles mt and mt + 1), which share
 * their b tiles (request_stage); a stage is free once the multiplying warps of both blocks
 * released it (16 arrivals), and neither block leaves while the other may still write to it. */
template <int BN, int KIND, int CL>
__global__ void __launch_bounds__(WS_THREADS, 1) matmul_wgmma_ws_kernel(const wg_params p)
{
#ifndef MH_WGMMA_ABSENT
    using S = wg_shape<BN, KIND>;
    extern __shared__ __align__(16) char smem_raw[];
    char *base = stages_of(smem_raw);
    uint64_t *full = (uint64_t *)(base + S::STAGES * S::STAGE_BYTES), *empty = full + S::STAGES;
    const size_t mt = blockIdx.y, nt = blockIdx.x, steps = p.t.kt_count;
    const unsigned rank = CL == 1 ? 0 : cluster_rank();
    if (threadIdx.x == 0) {
        for (int s = 0; s < S::STAGES; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], CL * THREADS / 32);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    if constexpr (CL == 1) __syncthreads();
    else cluster_sync(); /* the peer's barriers exist before anything arrives on them */
    /* 384 threads get 168 registers each at entry; at BN = 256 the copier hands most of its own to
     * the multiplying warpgroups (128 accumulators and a 64-float partial sum: ~216 registers) */
    if (threadIdx.x >= THREADS) { /* the copying warpgroup */
        if (BN == 256) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (threadIdx.x == THREADS)
            for (size_t step = 0; step < steps; ++step) {
                const int s = (int)(step % S::STAGES);
                if (step >= (size_t)S::STAGES) mbar_wait(&empty[s], (unsigned)(step / S::STAGES - 1) & 1);
                request_stage<BN, KIND, CL>(p.t, base + s * S::STAGE_BYTES, &full[s], mt, nt, step, rank);
            }
    } else {
        if (BN == 256) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        multiply_ws<BN, KIND, CL>(p, base, full, empty, mt, nt, steps);
    }
    if constexpr (CL == 2) {
        __syncwarp();
        cluster_sync();
    }
#endif
}

/* Configurations: "auto", then block widths, plain or warp specialized (-ws). auto takes the -ws
 * width with the least weighted rounds of blocks over the SMs, a round's weight its time against
 * a round of 128 x 128 blocks, from the device's rules (matmul_wgmma_round_*; on the H100,
 * measured over 12 shapes: 128 x 256 1.85 (1.68-2.01), 128 x 64 0.6 (0.54-0.69); docs/matmul.md
 * "How auto chooses"); ties go to the wider block.
 * The plain kernel is slower than -ws at every width and shape but the skinny k = 64 one.
 * -ws-c2 pairs blocks (request_stage); tf32-wgmma's auto takes it at 128 x 256 (config_of). */
struct wg_config {
    int width;
    bool specialized;
    int cluster; /* 2: -ws in clusters of two blocks sharing b (-c2), for an even count of rows of tiles */
};
const char *const config_names[] = {"auto",   "n128",   "n64",        "n256",       "n256-ws",
                                    "n128-ws", "n64-ws", "n256-ws-c2", "n128-ws-c2", NULL};
const wg_config configs[] = {{0, false, 1},  {128, false, 1}, {64, false, 1},  {256, false, 1}, {256, true, 1},
                             {128, true, 1}, {64, true, 1},   {256, true, 2},  {128, true, 2}};
static_assert(sizeof configs / sizeof configs[0] + 1 == sizeof config_names / sizeof config_names[0],
              "a configuration for every name");

/* The configuration that runs: the one named, or auto's. kind: SPLIT or ONE (the rows share
 * supports(), which asks with SPLIT: pairing needs nothing it checks beyond an even row count). */
wg_config config_of(const mh_context *ctx, const mh_args *x, int kind)
{
    if (x->config > 0) return configs[x->config];
    const size_t sms = mh_sm_count(ctx);
    const mh_matmul_args *a = &x->matmul;
    const size_t mt = mh_ceil_div(a->m, (size_t)BM);
    const wg_config choices[] = {{256, true, 1}, {128, true, 1}, {64, true, 1}};
    const mh_auto_rules *r = ctx->rules;
    const double weight[] = {r->matmul_wgmma_round_256, r->matmul_wgmma_round_128, r->matmul_wgmma_round_64};
    int best = 0;
    double best_cost = 0;
    for (int i = 0; i < 3; ++i) {
        const double cost = weight[i] * (double)mh_ceil_div(mt * mh_ceil_div(a->n, (size_t)choices[i].width), sms);
        if (i == 0 || cost < best_cost) best = i, best_cost = cost;
    }
    wg_config c = choices[best];
    /* 128 x 256 for one TF32 product: in pairs where the rows of tiles pair up, which is ~7%
     * faster on the H100 (4096^3, 8192 x 4096 x 6144); tf32x3 gains nothing from pairs and
     * keeps single blocks. Short k (8192 x 64 x 8192) is ~10% slower in pairs: single there. */
    if (kind == ONE && c.width == 256 && mt % 2 == 0 && (double)a->k >= r->matmul_wgmma_pairs_min_k) c.cluster = 2;
    return c;
}

int wgmma_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    const mh_matmul_args *a = &x->matmul;
    if (!mh_wgmma_device(ctx, why, len)) return 0;
    const wg_config c = config_of(ctx, x, SPLIT);
    const size_t bn = (size_t)c.width;
    const size_t mt = mh_ceil_div(a->m, (size_t)BM), nt = mh_ceil_div(a->n, bn);
    if (c.cluster == 2 && mt % 2) {
        snprintf(why, len, "m = %zu is %zu rows of %d: clusters of two need an even count", a->m, mt, BM);
        return 0;
    }
    if (mt <= MH_MAX_GRID_YZ && nt <= MH_MAX_GRID_X && mt + nt <= MH_MAX_GRID_YZ) return 1;
    snprintf(why, len, "m = %zu, n = %zu need more than 65535 tiles of %d rows and %zu columns", a->m, a->n, BM, bn);
    return 0;
}

/* The warp-specialized kernel, in clusters of CL blocks along y. */
template <int BN, int KIND, int CL> mh_status launch_ws(mh_context *ctx, const wg_params &p, dim3 grid)
{
    using S = wg_shape<BN, KIND>;
    const void *kernel = (const void *)matmul_wgmma_ws_kernel<BN, KIND, CL>;
    MH_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::WS_SMEM));
    cudaLaunchConfig_t launch = {};
    cudaLaunchAttribute cluster[1];
    cluster[0].id = cudaLaunchAttributeClusterDimension;
    cluster[0].val.clusterDim.x = 1, cluster[0].val.clusterDim.y = CL, cluster[0].val.clusterDim.z = 1;
    launch.gridDim = grid, launch.blockDim = dim3(WS_THREADS), launch.dynamicSmemBytes = S::WS_SMEM;
    launch.stream = mh_stream(ctx), launch.attrs = cluster, launch.numAttrs = 1;
    return mh_cuda_status(ctx, cudaLaunchKernelEx(&launch, matmul_wgmma_ws_kernel<BN, KIND, CL>, p),
                          "launching matmul_wgmma_ws_kernel");
}

template <int BN, int KIND> mh_status run_shape(mh_context *ctx, const mh_matmul_args *a, wg_config c)
{
    using S = wg_shape<BN, KIND>;
    split_params sp;
    sp.a = a->a, sp.b = a->b, sp.m = a->m, sp.k = a->k, sp.n = a->n;
    sp.mt_count = mh_ceil_div(a->m, (size_t)BM), sp.nt_count = mh_ceil_div(a->n, (size_t)BN);
    sp.t.kt_count = mh_ceil_div(a->k, (size_t)BK);
    const size_t a_floats = sp.mt_count * sp.t.kt_count * A_TILE, b_floats = sp.nt_count * sp.t.kt_count * S::B_TILE;
    void *ws;
    MH_TRY(mh_workspace(ctx, S::PARTS * (a_floats + b_floats) * sizeof(float), &ws));
    float *f = (float *)ws;
    sp.t.a_big = f, sp.t.b_big = f + a_floats;
    sp.t.a_small = S::PARTS == 2 ? sp.t.b_big + b_floats : NULL;
    sp.t.b_small = S::PARTS == 2 ? sp.t.a_small + a_floats : NULL;
    split_tiles_kernel<BN><<<dim3((unsigned)sp.t.kt_count, (unsigned)(sp.mt_count + sp.nt_count)), THREADS, 0,
                             mh_stream(ctx)>>>(sp);
    MH_TRY(mh_cuda_status(ctx, cudaGetLastError(), "launching split_tiles_kernel"));
    wg_params p;
    p.t = sp.t, p.c = a->c, p.m = a->m, p.n = a->n;
    const dim3 grid((unsigned)sp.nt_count, (unsigned)sp.mt_count);
    if constexpr (BN >= 128) /* pairs come in n128 and n256 alone: no 64-wide paired kernels */
        if (c.specialized && c.cluster == 2) return launch_ws<BN, KIND, 2>(ctx, p, grid);
    if (c.specialized) return launch_ws<BN, KIND, 1>(ctx, p, grid);
    MH_CUDA_TRY(ctx, cudaFuncSetAttribute((const void *)matmul_wgmma_kernel<BN, KIND>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, S::SMEM));
    matmul_wgmma_kernel<BN, KIND><<<grid, THREADS, S::SMEM, mh_stream(ctx)>>>(p);
    return mh_cuda_status(ctx, cudaGetLastError(), "launching matmul_wgmma_kernel");
}

template <int KIND> mh_status run_kind(mh_context *ctx, const mh_args *x)
{
    const wg_config c = config_of(ctx, x, KIND);
    switch (c.width) {
    case 256: return run_shape<256, KIND>(ctx, &x->matmul, c);
    case 64: return run_shape<64, KIND>(ctx, &x->matmul, c);
    default: return run_shape<128, KIND>(ctx, &x->matmul, c);
    }
}

template <int KIND> const char *config_for_kind(const mh_context *ctx, const mh_args *x)
{
    const wg_config c = config_of(ctx, x, KIND);
    for (size_t i = 1; i < sizeof configs / sizeof configs[0]; ++i)
        if (configs[i].width == c.width && configs[i].specialized == c.specialized && configs[i].cluster == c.cluster)
            return config_names[i];
    return config_names[0];
}

const mh_row rows[] = {
    {{"matmul/tf32x3-wgmma", MH_OP_MATMUL, MH_BACKEND_CUDA, 12, "global+shared+tensor", "ours",
      "tf32x3 on Hopper's wgmma: a and b split once into swizzled TF32 big/small tiles, then 3 wgmma per k-slice"},
     wgmma_supports, run_kind<SPLIT>, config_names, 0, MH_LIB_NONE, config_for_kind<SPLIT>},
    {{"matmul/tf32-wgmma", MH_OP_MATMUL, MH_BACKEND_CUDA, 13, "global+shared+tensor", "ours",
      "REDUCED PRECISION: one TF32 wgmma product (10-bit mantissas), the unit's rate beside tf32x3-wgmma"},
     wgmma_supports, run_kind<ONE>, config_names, 0, MH_LIB_NONE, config_for_kind<ONE>, MH_ROW_REDUCED_PRECISION},
};

} // namespace

MH_ROW_GROUP(mh_matmul_wgmma_rows, rows)

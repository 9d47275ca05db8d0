/* matmul/tf32x3-wgmma, ours: 3xTF32 (matmul_tensor.cu's split) on Hopper's warpgroup MMA.
 *
 * Why a second kernel: mma.sync runs TF32 on the H100 at a fraction of the tensor cores' rate
 * (one TF32 product, 4096^3: 1.36 ms against cuBLAS's TF32 0.39 ms, which issues wgmma), and
 * tf32x3 needs three products. wgmma reads both operands from shared memory through
 * descriptors, K-major for TF32, so the split cannot happen on the way into registers.
 *
 * Two kernels:
 *   split_tiles_kernel  a and b once, into big and small TF32 parts, cut into the tiles the
 *                       product reads (a: 128 rows of 32 k as it is; b: BN rows, transposed to
 *                       K-major), each tile a contiguous image of its shared-memory layout
 *                       (128-byte swizzle: row r's 16-byte chunk c at c ^ (r % 8)), zero-padded
 *   matmul_wgmma_kernel a block per 128 x BN of c (BN 128 or 64), two warpgroups of 64 rows; per
 *                       k-step of 32 the four tiles (a big, a small, b big, b small) arrive by
 *                       16-byte cp.async, verbatim, one step ahead, three stages; then three
 *                       m64nBNk8 wgmma per 8-deep slice, small*big, big*small, big*big, into a
 *                       partial sum added to the accumulator with round-to-nearest (the tensor
 *                       cores' adds truncate: matmul_tensor.cu)
 *   matmul_wgmma_pair_kernel  the same in clusters of two blocks sharing b's tiles through the
 *                       bulk copy engine's multicast (configurations -pair; below)
 * Splitting inside the product's loop instead (raw fp32 tiles split by every thread into
 * shared memory while the last k-step's wgmma ran) took 1.2 G warp instructions at 4096^3,
 * issue-bound at 3.03 ms; done once, the split is a pass over a and b.
 * Workspace: 2 (a + b) floats, padded to whole tiles.
 *
 * Built for sm_90a only (wgmma): CMake compiles this file with -gencode arch=compute_90a,
 * code=sm_90a; the row refuses other devices. */
#include "common.cuh"
#include "tf32_split.cuh"
#include "tile_io.cuh"

#include <stdio.h>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WG_ABSENT 1 /* a device pass for another target: empty kernels */
#endif

namespace {

constexpr int BM = 128, BK = 32, THREADS = 256, STAGES = 3;
constexpr int PROMOTE_STEPS = 1;     /* k-steps of 32 summed on the tensor cores before acc */
constexpr int A_TILE = BM * BK;      /* floats: 16 KB, 128 rows of 128 bytes */

/* A block computes 128 x BN of c: BN = 128 (m64n128k8 per warpgroup), or 64 (m64n64k8) where
 * 128 x 128 tiles would leave SMs idle (1000^3: 64 tiles for 132 SMs). */
template <int BN> struct wg_shape {
    static constexpr int B_TILE = BN * BK;                         /* floats */
    static constexpr int STAGE_BYTES = (2 * A_TILE + 2 * B_TILE) * 4; /* a big, a small, b big, b small */
    static constexpr int SMEM = STAGES * STAGE_BYTES + 1024 + 2 * STAGES * 8; /* + alignment, pairs' barriers */
    static constexpr int ACC = BN / 2; /* accumulators a thread: 64 x BN over 128 threads */
};

/* Tile i of k-step kt at (i * kt_count + kt) * tile floats: a block of the product reads its
 * tiles in order, and the split pass's concurrent blocks (consecutive kt of one i: blockIdx.x
 * is kt) read whole rows of a and write consecutive tiles. With blockIdx.x the tile, they read
 * a 128-byte column strip of a from every row at once, a DRAM page opened per 128 bytes: the
 * pass took 0.83 ms at 4096^3 (0.71 with the tiles laid out k-step-major). */
struct wg_tiles {
    float *a_big, *a_small, *b_big, *b_small;
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

#ifndef WG_ABSENT

/* big and small of four values, as the 16-byte chunk c of row r of two tile images. */
__device__ __forceinline__ void store_split(float *big, float *small, int r, int c, const float (&v)[4])
{
    unsigned hi[4], lo[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) tf32_split(v[q], hi[q], lo[q]);
    const int at = r * 32 + ((c ^ (r & 7)) << 2);
    *reinterpret_cast<uint4 *>(big + at) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
    *reinterpret_cast<uint4 *>(small + at) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
}

#endif /* WG_ABSENT */

#ifndef WG_ABSENT

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
        store_split(p.t.a_big + at, p.t.a_small + at, e / 8, e % 8, v[j]);
    }
}

/* Tile (i, kt) of b, transposed to K-major through shared memory: 32 rows of b, BN columns,
 * read a 4 BN-byte row piece per warp; written as a's are. The row stride of BN + 1 floats keeps
 * the column reads free of bank conflicts (4 c + r spans the 32 banks of a warp). */
template <int BN>
__device__ __forceinline__ void split_b_tile(const split_params &p, size_t i, size_t kt, float (*s)[BN + 1])
{
    const size_t at = tile_at(i, kt, p.t.kt_count, wg_shape<BN>::B_TILE), k0 = kt * BK, n0 = i * BN;
    const bool vec_ok = p.n % 4 == 0 && mh_aligned16(p.b);
#pragma unroll
    for (int j = 0; j < wg_shape<BN>::B_TILE / 4 / THREADS; ++j) {
        const int e = j * THREADS + threadIdx.x, kk = e / (BN / 4), x = 4 * (e % (BN / 4));
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (k0 + kk < p.k && n0 + x < p.n) load4(p.b + (k0 + kk) * p.n + n0, x, p.n - n0, vec_ok, v);
#pragma unroll
        for (int q = 0; q < 4; ++q) s[kk][x + q] = v[q];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < wg_shape<BN>::B_TILE / 4 / THREADS; ++j) {
        const int e = j * THREADS + threadIdx.x, r = e / 8, c = (e % 8) ^ (r & 7);
        const float v[4] = {s[4 * c][r], s[4 * c + 1][r], s[4 * c + 2][r], s[4 * c + 3][r]};
        store_split(p.t.b_big + at, p.t.b_small + at, r, c, v);
    }
}

#endif /* WG_ABSENT */

/* blockIdx.y: an a tile (i < mt_count) or a b tile (i - mt_count); blockIdx.x: kt, so that
 * concurrent blocks read neighbouring pieces of the same rows and write consecutive tiles.
 * Scalar loads of a and b, and b's transposed 16-byte stores scattered over 32 lines a warp,
 * kept the load/store queue full (lg_throttle 69% of stalls): 0.69 ms at 4096^3, 20% of
 * DRAM bandwidth. */
template <int BN> __global__ void __launch_bounds__(THREADS) split_tiles_kernel(const split_params p)
{
#ifndef WG_ABSENT
    __shared__ float s[BK][BN + 1];
    const size_t kt = blockIdx.x;
    if (blockIdx.y < p.mt_count) split_a_tile(p, blockIdx.y, kt);
    else split_b_tile<BN>(p, blockIdx.y - p.mt_count, kt, s);
#endif
}

#ifndef WG_ABSENT

/* K-major, 128-byte swizzle, 8-row groups 1024 bytes apart. */
__device__ __forceinline__ unsigned long long descriptor(const void *smem)
{
    const unsigned addr = (unsigned)__cvta_generic_to_shared(smem);
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ULL << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ULL << 62);
}

/* d += a b (scale_d 0: d = a b), m64nNk8, a and b from shared memory by descriptor. */
__device__ __forceinline__ void wgmma(float (&d)[64], unsigned long long da, unsigned long long db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wgmma(float (&d)[32], unsigned long long da, unsigned long long db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db), "r"(scale_d));
}

/* Keeps the compiler from moving accesses of d across the asynchronous wgmma. */
template <int N> __device__ __forceinline__ void fence_operands(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}


/* count floats from src to dst, 16 bytes a copy. */
template <int COUNT> __device__ __forceinline__ void copy_tile(float *dst, const float *src)
{
#pragma unroll
    for (int i = 0; i < COUNT / 4 / THREADS; ++i) {
        const int e = (i * THREADS + threadIdx.x) * 4;
        cp_async16(dst + e, src + e);
    }
}

/* The four tiles of k-step kt into a stage (a big, a small, b big, b small), verbatim. */
template <int BN>
__device__ __forceinline__ void load_stage(const wg_tiles &t, char *stage, size_t mt, size_t nt, size_t kt)
{
    constexpr int B_TILE = wg_shape<BN>::B_TILE;
    const size_t a_at = tile_at(mt, kt, t.kt_count, A_TILE), b_at = tile_at(nt, kt, t.kt_count, B_TILE);
    float *dst = (float *)stage;
    copy_tile<A_TILE>(dst, t.a_big + a_at);
    copy_tile<A_TILE>(dst + A_TILE, t.a_small + a_at);
    copy_tile<B_TILE>(dst + 2 * A_TILE, t.b_big + b_at);
    copy_tile<B_TILE>(dst + 2 * A_TILE + B_TILE, t.b_small + b_at);
}

#endif /* WG_ABSENT */

#ifndef WG_ABSENT
/* The 12 wgmma of one k-step on a stage's tiles, into part (adding to it unless `fresh`),
 * committed as one group: per 8-deep slice small*big, big*small, big*big. */
template <int BN>
__device__ __forceinline__ void issue_products(const char *stage, int wg, bool fresh, float (&part)[wg_shape<BN>::ACC])
{
    const unsigned long long a_big = descriptor(stage + wg * 64 * 128);
    const unsigned long long a_small = descriptor(stage + A_TILE * 4 + wg * 64 * 128);
    const unsigned long long b_big = descriptor(stage + 2 * A_TILE * 4);
    const unsigned long long b_small = descriptor(stage + (2 * A_TILE + wg_shape<BN>::B_TILE) * 4);
    fence_operands(part);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) { /* 32 bytes of k per slice: 2 in the descriptor's 16-byte units */
        wgmma(part, a_small + 2 * kk, b_big + 2 * kk, kk > 0 || !fresh);
        wgmma(part, a_big + 2 * kk, b_small + 2 * kk, 1);
        wgmma(part, a_big + 2 * kk, b_big + 2 * kk, 1);
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* The tensor cores' adds truncate, so part collects PROMOTE_STEPS k-steps and is then added to
 * acc with round-to-nearest; acc += part only after wait_group 0: a read of a wgmma's
 * accumulators while any wgmma is in flight (two partial sums in turn, one read after
 * wait_group 1) makes ptxas serialize every wgmma (warning C7514). Returns with every wgmma
 * of the warpgroup done, or with step's still in flight and step - 1's done. */
template <int N>
__device__ __forceinline__ void finish_step(size_t step, size_t steps, float (&part)[N], float (&acc)[N])
{
    if ((step + 1) % PROMOTE_STEPS == 0 || step + 1 == steps) {
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        fence_operands(part);
#pragma unroll
        for (int i = 0; i < N; ++i) acc[i] += part[i];
    } else {
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    }
}
#endif

struct wg_params {
    wg_tiles t;
    float *c;
    size_t m, n;
};

#ifndef WG_ABSENT
/* acc to c. d[i]: row 16 warp + g + 8 (i % 4 / 2), column 8 (i / 4) + 2 t + i % 2 of the
 * warpgroup's 64 x BN. */
template <int BN, int N> __device__ __forceinline__ void store_c(const wg_params &p, size_t mt, size_t nt, const float (&acc)[N])
{
    const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        const size_t row = mt * BM + wg * 64 + warp * 16 + g + 8 * ((i % 4) / 2), col = nt * BN + 8 * (i / 4) + 2 * t;
        if (row >= p.m) continue;
        float *c = p.c + row * p.n;
        if (col < p.n) c[col] = acc[i];
        if (col + 1 < p.n) c[col + 1] = acc[i + 1];
    }
}

__device__ __forceinline__ char *align1024(char *p) { return (char *)(((uintptr_t)p + 1023) & ~(uintptr_t)1023); }
#endif

/* Per k-step: wait for its stage's cp.async copies, barrier, request step + 1's tiles into the
 * stage step - 2 used (its wgmma were waited for at the end of step - 1), run step's wgmma. */
template <int BN> __global__ void __launch_bounds__(THREADS, 1) matmul_wgmma_kernel(const wg_params p)
{
#ifndef WG_ABSENT
    constexpr int ACC = wg_shape<BN>::ACC, STAGE_BYTES = wg_shape<BN>::STAGE_BYTES;
    extern __shared__ __align__(16) char smem_raw[];
    char *base = align1024(smem_raw);
    const int wg = threadIdx.x / 128;
    const size_t mt = blockIdx.y, nt = blockIdx.x, steps = p.t.kt_count;
    float acc[ACC], part[ACC];
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[i] = part[i] = 0.0f;
    load_stage<BN>(p.t, base, mt, nt, 0);
    cp_async_commit();
    for (size_t step = 0; step < steps; ++step) {
        cp_async_wait<0>();
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); /* cp.async's writes, read by wgmma */
        __syncthreads();
        if (step + 1 < steps) load_stage<BN>(p.t, base + ((step + 1) % STAGES) * STAGE_BYTES, mt, nt, step + 1);
        cp_async_commit();
        issue_products<BN>(base + (step % STAGES) * STAGE_BYTES, (int)wg, step % PROMOTE_STEPS == 0, part);
        finish_step(step, steps, part, acc);
    }
    store_c<BN>(p, mt, nt, acc);
#endif
}

#ifndef WG_ABSENT
/* ---- pairs of blocks sharing b's tiles (configurations n128-pair, n64-pair) ----------------
 * Two blocks of a cluster compute vertically neighbouring tiles of c (the same columns), so
 * they read the same b tiles: each copies its own a tiles and one of the two b tiles (rank 0
 * b big, rank 1 b small) with the bulk copy engine, multicast into both blocks' shared memory.
 * A k-step's stage then costs L2 48 KB a block instead of 64 (n128). Stage reuse: `full[s]`
 * (one arrival with the expected bytes, then the copies' bytes) says a stage's tiles are in;
 * `empty[s]` (16 arrivals: each warp of both blocks, once its wgmma are done) says both blocks
 * have finished reading it, before either refills it. */
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_bytes(uint64_t *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=;\n}\n" ::"r"(smem_u32(bar)),
                 "r"(parity)
                 : "memory");
}

/* An arrival on the barrier at bar's offset in block `rank` of the cluster. */
__device__ __forceinline__ void mbar_arrive_in(uint64_t *bar, unsigned rank)
{
    asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
                 "r"(rank)
                 : "memory");
}

__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}

/* The same copy into both blocks of the pair, at dst's and bar's offsets in each. */
__device__ __forceinline__ void bulk_copy_to_pair(void *dst, const void *src, unsigned bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, "
                 "[%3], %4;\n" ::"r"(smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar)), "h"((unsigned short)3)
                 : "memory");
}

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/* One thread: k-step kt's tiles into its stage, the block's a tiles and its share of b's. */
template <int BN>
__device__ __forceinline__ void request_stage(const wg_tiles &t, char *stage, uint64_t *full, size_t mt, size_t nt,
                                              size_t kt, unsigned rank)
{
    constexpr int B_TILE = wg_shape<BN>::B_TILE;
    const size_t a_at = tile_at(mt, kt, t.kt_count, A_TILE), b_at = tile_at(nt, kt, t.kt_count, B_TILE);
    mbar_expect_bytes(full, wg_shape<BN>::STAGE_BYTES);
    bulk_copy(stage, t.a_big + a_at, A_TILE * 4, full);
    bulk_copy(stage + A_TILE * 4, t.a_small + a_at, A_TILE * 4, full);
    if (rank == 0) bulk_copy_to_pair(stage + 2 * A_TILE * 4, t.b_big + b_at, B_TILE * 4, full);
    else bulk_copy_to_pair(stage + (2 * A_TILE + B_TILE) * 4, t.b_small + b_at, B_TILE * 4, full);
}
#endif

/* Warp specialized: warps 0-7 (two warpgroups) multiply, warp 8 copies. With thread 0 of the
 * multiplying warps waiting for the pair to free a stage before its refill, every k-step waited
 * on the slower block of the pair: 2.18 ms at 4096^3 against 1.59 for the plain kernel. */
constexpr int PAIR_THREADS = THREADS + 32;

template <int BN> __global__ void __launch_bounds__(PAIR_THREADS, 1) matmul_wgmma_pair_kernel(const wg_params p)
{
#ifndef WG_ABSENT
    constexpr int ACC = wg_shape<BN>::ACC, STAGE_BYTES = wg_shape<BN>::STAGE_BYTES;
    extern __shared__ __align__(16) char smem_raw[];
    char *base = align1024(smem_raw);
    uint64_t *full = (uint64_t *)(base + STAGES * STAGE_BYTES), *empty = full + STAGES;
    const unsigned rank = cluster_rank();
    const size_t mt = blockIdx.y, nt = blockIdx.x, steps = p.t.kt_count;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], 2 * THREADS / 32);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    cluster_sync(); /* both blocks' barriers exist before either copies or arrives */
    if (threadIdx.x >= THREADS) { /* the copying warp */
        if (threadIdx.x == THREADS)
            for (size_t step = 0; step < steps; ++step) {
                const int s = (int)(step % STAGES);
                if (step >= STAGES) mbar_wait(&empty[s], (unsigned)(step / STAGES - 1) & 1);
                request_stage<BN>(p.t, base + s * STAGE_BYTES, &full[s], mt, nt, step, rank);
            }
        __syncwarp();
    } else {
        float acc[ACC], part[ACC];
#pragma unroll
        for (int i = 0; i < ACC; ++i) acc[i] = part[i] = 0.0f;
        for (size_t step = 0; step < steps; ++step) {
            const int s = (int)(step % STAGES);
            mbar_wait(&full[s], (unsigned)(step / STAGES) & 1);
            issue_products<BN>(base + s * STAGE_BYTES, (int)(threadIdx.x / 128), step % PROMOTE_STEPS == 0, part);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); /* this warp's reads of stage s are done */
            if (threadIdx.x % 32 == 0) mbar_arrive_in(&empty[s], 0), mbar_arrive_in(&empty[s], 1);
            finish_step(step, steps, part, acc);
        }
        store_c<BN>(p, mt, nt, acc);
    }
    cluster_sync(); /* no block leaves while its pair may still copy into it or arrive on it */
#endif
}

/* "auto": the shape with the fewer rounds of blocks over the SMs, a round of 128 x 64 blocks
 * costing 0.65 of one of 128 x 128 (their products per byte copied are fewer: 4096^3 ran 2.07 ms
 * in 16 rounds against 1.59 in 8). 1000^3: one round either way, n64 (0.040 against 0.059 ms);
 * 1536^3: 3 rounds against 2, n64 (0.157 against 0.165); 2048^3: 4 against 2, n128. */
const char *const wg_configs[] = {"auto", "n128", "n64", "n128-pair", "n64-pair", NULL};

struct wg_choice {
    int bn;   /* 128 or 64 columns of c a block */
    bool pair; /* blocks in clusters of two sharing b's tiles */
};

wg_choice choice_of(const mh_context *ctx, const mh_args *x)
{
    switch (x->config) {
    case 1: return {128, false};
    case 2: return {64, false};
    case 3: return {128, true};
    case 4: return {64, true};
    default: break;
    }
    const size_t sms = ctx->sm_count > 0 ? (size_t)ctx->sm_count : 132;
    const mh_matmul_args *a = &x->matmul;
    const size_t mt = mh_ceil_div(a->m, (size_t)BM);
    const size_t rounds128 = mh_ceil_div(mt * mh_ceil_div(a->n, (size_t)128), sms);
    const size_t rounds64 = mh_ceil_div(mt * mh_ceil_div(a->n, (size_t)64), sms);
    return {13 * rounds64 < 20 * rounds128 ? 64 : 128, false};
}

int wgmma_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    const mh_matmul_args *a = &x->matmul;
    if (ctx->cc != 90) {
        snprintf(why, len, "wgmma is built for sm_90a, compute capability 9.0 only (this device: %d.%d)", ctx->cc / 10,
                 ctx->cc % 10);
        return 0;
    }
    const size_t bn = (size_t)choice_of(ctx, x).bn;
    const size_t mt = mh_ceil_div(a->m, (size_t)BM) + 1, nt = mh_ceil_div(a->n, bn); /* + 1: a pair's padding */
    if (mt <= MH_MAX_GRID_YZ && nt <= MH_MAX_GRID_X && mt + nt <= MH_MAX_GRID_YZ) return 1;
    snprintf(why, len, "m = %zu, n = %zu need more than 65535 tiles of %d rows and %zu columns", a->m, a->n, BM, bn);
    return 0;
}

/* The product kernel: plain, or in clusters of two blocks along m (grid rows padded to even:
 * the split pass makes the extra row of a tiles zeros, and its block stores nothing). */
template <int BN>
mh_status launch_product(mh_context *ctx, const wg_params &p, size_t mt_count, size_t nt_count, bool pair)
{
    constexpr int SMEM = wg_shape<BN>::SMEM;
    const void *kernel = pair ? (const void *)matmul_wgmma_pair_kernel<BN> : (const void *)matmul_wgmma_kernel<BN>;
    MH_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    if (!pair) {
        matmul_wgmma_kernel<BN><<<dim3((unsigned)nt_count, (unsigned)mt_count), THREADS, SMEM, mh_stream(ctx)>>>(p);
        return mh_cuda_status(ctx, cudaGetLastError(), "launching matmul_wgmma_kernel");
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)nt_count, (unsigned)mt_count);
    cfg.blockDim = dim3(PAIR_THREADS);
    cfg.dynamicSmemBytes = SMEM;
    cfg.stream = (cudaStream_t)mh_stream(ctx);
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 1, cluster.val.clusterDim.y = 2, cluster.val.clusterDim.z = 1;
    cfg.attrs = &cluster, cfg.numAttrs = 1;
    return mh_cuda_status(ctx, cudaLaunchKernelEx(&cfg, matmul_wgmma_pair_kernel<BN>, p),
                          "launching matmul_wgmma_pair_kernel");
}

template <int BN> mh_status run_shape(mh_context *ctx, const mh_matmul_args *a, bool pair)
{
    constexpr int B_TILE = wg_shape<BN>::B_TILE;
    split_params sp;
    sp.a = a->a, sp.b = a->b, sp.m = a->m, sp.k = a->k, sp.n = a->n;
    sp.mt_count = mh_ceil_div(a->m, (size_t)BM), sp.nt_count = mh_ceil_div(a->n, (size_t)BN);
    if (pair) sp.mt_count += sp.mt_count % 2;
    sp.t.kt_count = mh_ceil_div(a->k, (size_t)BK);
    const size_t a_floats = sp.mt_count * sp.t.kt_count * A_TILE, b_floats = sp.nt_count * sp.t.kt_count * B_TILE;
    void *ws;
    MH_TRY(mh_workspace(ctx, 2 * (a_floats + b_floats) * sizeof(float), &ws));
    sp.t.a_big = (float *)ws, sp.t.a_small = sp.t.a_big + a_floats;
    sp.t.b_big = sp.t.a_small + a_floats, sp.t.b_small = sp.t.b_big + b_floats;
    split_tiles_kernel<BN><<<dim3((unsigned)sp.t.kt_count, (unsigned)(sp.mt_count + sp.nt_count)), THREADS, 0,
                             mh_stream(ctx)>>>(sp);
    MH_TRY(mh_cuda_status(ctx, cudaGetLastError(), "launching split_tiles_kernel"));
    wg_params p;
    p.t = sp.t, p.c = a->c, p.m = a->m, p.n = a->n;
    return launch_product<BN>(ctx, p, sp.mt_count, sp.nt_count, pair);
}

mh_status wgmma_run(mh_context *ctx, const mh_args *x)
{
    const wg_choice c = choice_of(ctx, x);
    return c.bn == 128 ? run_shape<128>(ctx, &x->matmul, c.pair) : run_shape<64>(ctx, &x->matmul, c.pair);
}

const mh_row rows[] = {
    {{"matmul/tf32x3-wgmma", MH_OP_MATMUL, MH_BACKEND_CUDA, 12, "global+shared+tensor", "ours",
      "tf32x3 on Hopper's wgmma: a and b split once into swizzled TF32 big/small tiles, then 3 wgmma per k-slice"},
     wgmma_supports, wgmma_run, wg_configs, 0},
};

} // namespace

MH_ROW_GROUP(mh_matmul_wgmma_rows, rows)

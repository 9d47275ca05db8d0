/* matmul/tf32x3-wgmma and matmul/tf32-wgmma, ours: 3xTF32 (matmul_tensor.cu's split), and one
 * TF32 product, on Hopper's warpgroup MMA.
 *
 * Why a second kernel: mma.sync runs TF32 on the H100 at a fraction of the tensor cores' rate
 * (one TF32 product, 4096^3: 1.36 ms against cuBLAS's TF32 0.39 ms, which issues wgmma), and
 * tf32x3 needs three products. wgmma reads both operands from shared memory through
 * descriptors, K-major for TF32, so the split cannot happen on the way into registers.
 *
 * Two kernels:
 *   split_tiles_kernel  a and b once, into big and small TF32 parts, cut into the tiles the
 *                       product reads (128 rows of 32 k: a as it is, b transposed to K-major),
 *                       each tile a contiguous 16 KB image of its shared-memory layout (128-
 *                       byte swizzle: row r's 16-byte chunk c at c ^ (r % 8)), zero-padded
 *   matmul_wgmma_kernel a block per 128 x BN of c (BN 64, 128 or 256), two warpgroups of 64
 *                       rows; per k-step of 32 the four tiles (a big, a small, b big, b small)
 *                       arrive by 16-byte cp.async, verbatim, as many steps ahead as the
 *                       stages allow; then three m64nNk8 wgmma (N = min(BN, 128)) per 8-deep
 *                       slice and piece of N columns, small*big, big*small, big*big, into a
 *                       partial sum added to the accumulator with round-to-nearest (the tensor
 *                       cores' adds truncate: matmul_tensor.cu)
 * The product is bound by L2 bandwidth (ncu at 4096^3, 128 x 128 blocks: 9.0 GB through L2 in
 * 1.39 ms): a block copies 4 (BM + BN) BK floats a k-step for BM BN BK products, so 128 x 256
 * blocks copy 25% fewer bytes per product than 128 x 128 (96 KB a step for twice the work).
 * tf32-wgmma (TERMS = 1) is the same kernel with big*big alone, accumulated on the tensor cores
 * directly: the reduced-precision rung beside cuBLAS's TF32.
 * Splitting inside the product's loop instead (raw fp32 tiles split by every thread into
 * shared memory while the last k-step's wgmma ran) took 1.2 G warp instructions at 4096^3,
 * issue-bound at 3.03 ms; done once, the split is a pass over a and b.
 * Workspace: 2 (a + b) floats (tf32-wgmma: a + b), padded to whole tiles.
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

constexpr int BM = 128, BK = 32, THREADS = 256;
constexpr int A_TILE = BM * BK;            /* floats: 16 KB, 128 rows of 128 bytes */
constexpr int STAGE_BUDGET = 192 * 1024;   /* bytes of stages: a block may take 227 KB */

/* A block computes 128 x BN of c (BN = 64, 128, 256) with TERMS products per 8-deep slice: 3
 * (small*big, big*small, big*big: FP32-accurate) or 1 (big*big: TF32). A warpgroup's 64 x BN is
 * computed in PIECES of N columns, one m64nNk8 wgmma each. TERMS = 3 collects each piece's k-step
 * in a partial sum (the accumulation on the tensor cores truncates) and adds it to acc with
 * round-to-nearest after wgmma.wait_group 0; 128 accumulators and a 64-float partial sum fit a
 * thread's 255 registers at BN = 256, two 128-float sums would not. TERMS = 1 accumulates into
 * acc on the tensor cores and leaves one k-step's wgmma in flight (wait_group 1). */
template <int BN, int TERMS> struct wg_shape {
    static constexpr int B_TILE = BN * BK;                                   /* floats */
    static constexpr int N = BN < 128 ? BN : 128;                            /* one wgmma's n */
    static constexpr int PIECES = BN / N;
    static constexpr int PART = N / 2;                                       /* a piece's floats a thread */
    static constexpr int PARTS = TERMS == 3 ? 2 : 1;                         /* big and small, or big */
    static constexpr int STAGE_BYTES = PARTS * (A_TILE + B_TILE) * 4;
    static constexpr int STAGES = STAGE_BUDGET / STAGE_BYTES < 6 ? STAGE_BUDGET / STAGE_BYTES : 6;
    /* Steps loaded ahead. The stage refilled at step s was last read by step s + AHEAD - STAGES;
     * at step s's barrier every warpgroup has waited for step s - 1's wgmma (TERMS 3: wait_group
     * 0) or s - 2's (TERMS 1: wait_group 1). */
    static constexpr int AHEAD = TERMS == 3 ? STAGES - 1 : STAGES - 2;
    static constexpr int SMEM = STAGES * STAGE_BYTES + 1024;
    static_assert(AHEAD >= 1, "a stage must be in flight");
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

/* big and small of four values (big alone where small is NULL: tf32-wgmma), as the 16-byte chunk
 * c of row r of two tile images. */
__device__ __forceinline__ void store_split(float *big, float *small, int r, int c, const float (&v)[4])
{
    unsigned hi[4], lo[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) tf32_split(v[q], hi[q], lo[q]);
    const int at = r * 32 + ((c ^ (r & 7)) << 2);
    *reinterpret_cast<uint4 *>(big + at) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
    if (small) *reinterpret_cast<uint4 *>(small + at) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
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

/* The tiles of k-step kt into a stage (a big, [a small,] b big[, b small]), verbatim. */
template <int BN, int TERMS>
__device__ __forceinline__ void load_stage(const wg_tiles &t, char *stage, size_t mt, size_t nt, size_t kt)
{
    constexpr int B_TILE = wg_shape<BN, TERMS>::B_TILE, PARTS = wg_shape<BN, TERMS>::PARTS;
    const size_t a_at = tile_at(mt, kt, t.kt_count, A_TILE), b_at = tile_at(nt, kt, t.kt_count, B_TILE);
    float *dst = (float *)stage;
    copy_tile<A_TILE>(dst, t.a_big + a_at);
    if (PARTS == 2) copy_tile<A_TILE>(dst + A_TILE, t.a_small + a_at);
    copy_tile<B_TILE>(dst + PARTS * A_TILE, t.b_big + b_at);
    if (PARTS == 2) copy_tile<B_TILE>(dst + 2 * A_TILE + B_TILE, t.b_small + b_at);
}

/* Waits for k-step `step`'s tiles, then asks for step + AHEAD's (a group is committed every
 * step, empty past the end, so that wait_group counts steps). */
template <int BN, int TERMS>
__device__ __forceinline__ const char *next_stage(const wg_tiles &t, char *base, size_t mt, size_t nt, size_t step,
                                                  size_t steps)
{
    using S = wg_shape<BN, TERMS>;
    cp_async_wait<S::AHEAD - 1>();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); /* cp.async's writes, read by wgmma */
    __syncthreads();
    if (step + S::AHEAD < steps)
        load_stage<BN, TERMS>(t, base + ((step + S::AHEAD) % S::STAGES) * S::STAGE_BYTES, mt, nt, step + S::AHEAD);
    cp_async_commit();
    return base + (step % S::STAGES) * S::STAGE_BYTES;
}

/* One k-step's products into piece h of c's columns: d = (fresh ? 0 : d) + sum over the 4 slices
 * of the TERMS products, a and b from the stage at sp. */
template <int BN, int TERMS>
__device__ __forceinline__ void issue_piece(const char *sp, int wg, int h, bool fresh,
                                            float (&d)[wg_shape<BN, TERMS>::PART])
{
    using S = wg_shape<BN, TERMS>;
    const unsigned long long a_big = descriptor(sp + wg * 64 * 128);
    const unsigned long long a_small = descriptor(sp + (S::PARTS - 1) * A_TILE * 4 + wg * 64 * 128); /* TERMS 1: unused */
    const char *b = sp + S::PARTS * A_TILE * 4 + h * S::N * 128; /* row h N of the K-major b tile */
    const unsigned long long b_big = descriptor(b), b_small = descriptor(b + (S::PARTS - 1) * S::B_TILE * 4);
    fence_operands(d);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) { /* 32 bytes of k per slice: 2 in the descriptor's 16-byte units */
        if (TERMS == 3) {
            wgmma(d, a_small + 2 * kk, b_big + 2 * kk, kk > 0 || !fresh);
            wgmma(d, a_big + 2 * kk, b_small + 2 * kk, 1);
            wgmma(d, a_big + 2 * kk, b_big + 2 * kk, 1);
        } else {
            wgmma(d, a_big + 2 * kk, b_big + 2 * kk, kk > 0 || !fresh);
        }
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

#endif /* WG_ABSENT */

struct wg_params {
    wg_tiles t;
    float *c;
    size_t m, n;
};

template <int BN, int TERMS> __global__ void __launch_bounds__(THREADS, 1) matmul_wgmma_kernel(const wg_params p)
{
#ifndef WG_ABSENT
    using S = wg_shape<BN, TERMS>;
    extern __shared__ __align__(16) char smem_raw[];
    char *base = (char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const size_t mt = blockIdx.y, nt = blockIdx.x, steps = p.t.kt_count;
    float acc[S::PIECES][S::PART];
#pragma unroll
    for (int h = 0; h < S::PIECES; ++h)
#pragma unroll
        for (int i = 0; i < S::PART; ++i) acc[h][i] = 0.0f;
    for (int s = 0; s < S::AHEAD; ++s) {
        if ((size_t)s < steps) load_stage<BN, TERMS>(p.t, base + s * S::STAGE_BYTES, mt, nt, s);
        cp_async_commit();
    }
    if (TERMS == 3) {
        /* acc += part only after wait_group 0: a read of a wgmma's accumulators while any wgmma
         * is in flight (two partial sums in turn, one read after wait_group 1) makes ptxas
         * serialize every wgmma (warning C7514). */
        float part[S::PART];
        for (size_t step = 0; step < steps; ++step) {
            const char *sp = next_stage<BN, TERMS>(p.t, base, mt, nt, step, steps);
#pragma unroll
            for (int h = 0; h < S::PIECES; ++h) {
                issue_piece<BN, TERMS>(sp, wg, h, true, part);
                asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
                fence_operands(part);
#pragma unroll
                for (int i = 0; i < S::PART; ++i) acc[h][i] += part[i];
            }
        }
    } else {
        for (size_t step = 0; step < steps; ++step) {
            const char *sp = next_stage<BN, TERMS>(p.t, base, mt, nt, step, steps);
#pragma unroll
            for (int h = 0; h < S::PIECES; ++h) issue_piece<BN, TERMS>(sp, wg, h, false, acc[h]);
            asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(S::PIECES) : "memory"); /* step - 1's done */
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
        for (int h = 0; h < S::PIECES; ++h) fence_operands(acc[h]);
    }
    /* d[i] of piece h: row 16 warp + g + 8 (i % 4 / 2), column h N + 8 (i / 4) + 2 t + i % 2 of
     * the warpgroup's 64 x BN */
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
#endif
}

/* Configurations: "auto", then the block widths. auto takes the width with the least weighted
 * rounds of blocks over the SMs, a round's weight its bytes copied per k-step against 128 x 128's
 * as measured (docs/matmul.md "How auto chooses"): 128 x 64 0.65, 128 x 256 1.6. Ties go to the
 * wider block. */
const char *const wg_configs[] = {"auto", "n128", "n64", "n256", NULL};
const int config_width[] = {0, 128, 64, 256};

int block_n(const mh_context *ctx, const mh_args *x)
{
    if (x->config > 0) return config_width[x->config];
    const size_t sms = ctx->sm_count > 0 ? (size_t)ctx->sm_count : 132;
    const mh_matmul_args *a = &x->matmul;
    const size_t mt = mh_ceil_div(a->m, (size_t)BM);
    const int widths[] = {256, 128, 64};
    const double weight[] = {1.6, 1.0, 0.65};
    int best = 128;
    double best_cost = 0;
    for (int i = 0; i < 3; ++i) {
        const double cost = weight[i] * (double)mh_ceil_div(mt * mh_ceil_div(a->n, (size_t)widths[i]), sms);
        if (i == 0 || cost < best_cost) best = widths[i], best_cost = cost;
    }
    return best;
}

int wgmma_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    const mh_matmul_args *a = &x->matmul;
    if (ctx->cc != 90) {
        snprintf(why, len, "wgmma is built for sm_90a, compute capability 9.0 only (this device: %d.%d)", ctx->cc / 10,
                 ctx->cc % 10);
        return 0;
    }
    const size_t bn = (size_t)block_n(ctx, x);
    const size_t mt = mh_ceil_div(a->m, (size_t)BM), nt = mh_ceil_div(a->n, bn);
    if (mt <= MH_MAX_GRID_YZ && nt <= MH_MAX_GRID_X && mt + nt <= MH_MAX_GRID_YZ) return 1;
    snprintf(why, len, "m = %zu, n = %zu need more than 65535 tiles of %d rows and %zu columns", a->m, a->n, BM, bn);
    return 0;
}

template <int BN, int TERMS> mh_status run_shape(mh_context *ctx, const mh_matmul_args *a)
{
    using S = wg_shape<BN, TERMS>;
    split_params sp;
    sp.a = a->a, sp.b = a->b, sp.m = a->m, sp.k = a->k, sp.n = a->n;
    sp.mt_count = mh_ceil_div(a->m, (size_t)BM), sp.nt_count = mh_ceil_div(a->n, (size_t)BN);
    sp.t.kt_count = mh_ceil_div(a->k, (size_t)BK);
    const size_t a_floats = sp.mt_count * sp.t.kt_count * A_TILE, b_floats = sp.nt_count * sp.t.kt_count * S::B_TILE;
    void *ws;
    MH_TRY(mh_workspace(ctx, S::PARTS * (a_floats + b_floats) * sizeof(float), &ws));
    float *f = (float *)ws;
    sp.t.a_big = f, sp.t.b_big = f + a_floats;
    sp.t.a_small = S::PARTS == 2 ? f + a_floats + b_floats : NULL;
    sp.t.b_small = S::PARTS == 2 ? sp.t.a_small + a_floats : NULL;
    split_tiles_kernel<BN><<<dim3((unsigned)sp.t.kt_count, (unsigned)(sp.mt_count + sp.nt_count)), THREADS, 0,
                             mh_stream(ctx)>>>(sp);
    MH_TRY(mh_cuda_status(ctx, cudaGetLastError(), "launching split_tiles_kernel"));
    wg_params p;
    p.t = sp.t, p.c = a->c, p.m = a->m, p.n = a->n;
    MH_CUDA_TRY(ctx, cudaFuncSetAttribute((const void *)matmul_wgmma_kernel<BN, TERMS>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, S::SMEM));
    matmul_wgmma_kernel<BN, TERMS>
        <<<dim3((unsigned)sp.nt_count, (unsigned)sp.mt_count), THREADS, S::SMEM, mh_stream(ctx)>>>(p);
    return mh_cuda_status(ctx, cudaGetLastError(), "launching matmul_wgmma_kernel");
}

template <int TERMS> mh_status run_terms(mh_context *ctx, const mh_args *x)
{
    switch (block_n(ctx, x)) {
    case 256: return run_shape<256, TERMS>(ctx, &x->matmul);
    case 64: return run_shape<64, TERMS>(ctx, &x->matmul);
    default: return run_shape<128, TERMS>(ctx, &x->matmul);
    }
}

mh_status tf32x3_run(mh_context *ctx, const mh_args *x) { return run_terms<3>(ctx, x); }
mh_status tf32_run(mh_context *ctx, const mh_args *x) { return run_terms<1>(ctx, x); }

const mh_row rows[] = {
    {{"matmul/tf32x3-wgmma", MH_OP_MATMUL, MH_BACKEND_CUDA, 12, "global+shared+tensor", "ours",
      "tf32x3 on Hopper's wgmma: a and b split once into swizzled TF32 big/small tiles, then 3 wgmma per k-slice"},
     wgmma_supports, tf32x3_run, wg_configs, 0},
    {{"matmul/tf32-wgmma", MH_OP_MATMUL, MH_BACKEND_CUDA, 13, "global+shared+tensor", "ours",
      "REDUCED PRECISION: one TF32 wgmma product (10-bit mantissas), the unit's rate beside tf32x3-wgmma"},
     wgmma_supports, tf32_run, wg_configs, 0},
};

} // namespace

MH_ROW_GROUP(mh_matmul_wgmma_rows, rows)

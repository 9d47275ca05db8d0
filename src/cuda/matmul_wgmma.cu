/* matmul/tf32x3-wgmma, ours: 3xTF32 (matmul_tensor.cu's split) on Hopper's warpgroup MMA.
 *
 * Why a second kernel: mma.sync runs TF32 on the H100 at a fraction of the tensor cores' rate
 * (one TF32 product, 4096^3: 1.36 ms against cuBLAS's TF32 0.41 ms, which issues wgmma), and
 * tf32x3 needs three products. wgmma reads both operands from shared memory through
 * descriptors, K-major for TF32, so the split cannot happen on the way into registers: each
 * k-step's tiles land in shared memory as they are (cp.async, two stages), then every thread
 * splits its share into big and small tiles in wgmma's layout (b transposed to K-major) while
 * the previous k-step's wgmma run; then three m64n128k8 wgmma per 8-deep slice, small*big,
 * big*small, big*big, into a partial sum that is added to the accumulator in FP32 with
 * round-to-nearest (the tensor cores' adds truncate: matmul_tensor.cu).
 *
 * Block: 128 x 128 of c, k-steps of 32, two warpgroups of 64 rows. Shared memory: three raw
 * stages (32 KB each) and two split stages (a big, a small, b big, b small: 64 KB each), 1024-
 * byte aligned, 224 KB: one block per SM. (With two raw stages, loads had one k-step to land:
 * 4096^3 ran 3.03 ms.) Split tiles use the 128-byte swizzle: row r (an m
 * or n index) holds 32 TF32 values of k in 128 bytes, its 16-byte chunk c at c ^ (r % 8); a
 * descriptor's start moves 32 bytes per 8-deep slice.
 *
 * Built for sm_90a only (wgmma): CMake compiles this file with -gencode arch=compute_90a,
 * code=sm_90a; the row refuses other devices. */
#include "common.cuh"
#include "tile_io.cuh"

#include <stdio.h>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WG_ABSENT 1 /* a device pass for another target: an empty kernel */
#endif

namespace {

constexpr int BM = 128, BN = 128, BK = 32, THREADS = 256;
constexpr int RAW_FLOATS = BM * BK + BK * BN;        /* a row-major, then b row-major */
constexpr int TILE_BYTES = 128 * 128;                 /* one split tile: 128 rows of 128 bytes */
constexpr int SPLIT_BYTES = 4 * TILE_BYTES;           /* a big, a small, b big, b small */
constexpr int RAW_STAGES = 3; /* k-steps of raw tiles in flight: loads get two steps to land */
constexpr int SMEM = RAW_STAGES * RAW_FLOATS * 4 + 2 * SPLIT_BYTES + 1024;

struct wg_params {
    const float *a, *b;
    float *c;
    size_t m, k, n;
    bool vec_a, vec_b;
};

#ifndef WG_ABSENT

__device__ __forceinline__ void raw_stage(const wg_params &p, float *raw, size_t row0, size_t col0, size_t k0)
{
    float *As = raw, *Bs = raw + BM * BK;
    for (int e = threadIdx.x; e < BM * BK / 4; e += THREADS) {
        const int r = e / (BK / 4), c = (e % (BK / 4)) * 4;
        float *dst = As + r * BK + c;
        if (row0 + r < p.m) load_group(dst, p.a + (row0 + r) * p.k, (long long)p.k, (long long)(k0 + c), p.vec_a);
        else *reinterpret_cast<float4 *>(dst) = make_float4(0, 0, 0, 0);
    }
    for (int e = threadIdx.x; e < BK * BN / 4; e += THREADS) {
        const int r = e / (BN / 4), c = (e % (BN / 4)) * 4;
        float *dst = Bs + r * BN + c;
        if (k0 + r < p.k) load_group(dst, p.b + (k0 + r) * p.n, (long long)p.n, (long long)(col0 + c), p.vec_b);
        else *reinterpret_cast<float4 *>(dst) = make_float4(0, 0, 0, 0);
    }
}

__device__ __forceinline__ unsigned tf32_of(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

/* big and small of four values, as the 16-byte chunks stored at row r, chunk c. */
__device__ __forceinline__ void store_split(char *big, char *small, int r, int c, const float (&v)[4])
{
    unsigned hi[4], lo[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        hi[q] = tf32_of(v[q]);
        lo[q] = tf32_of(isinf(v[q]) ? 0.0f : v[q] - __uint_as_float(hi[q]));
    }
    const int at = r * 128 + ((c ^ (r & 7)) << 4);
    *reinterpret_cast<uint4 *>(big + at) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
    *reinterpret_cast<uint4 *>(small + at) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
}

/* raw -> split: a row by row, b transposed (row n of the split tile holds b[0..32)[n]). */
__device__ __forceinline__ void split_stage(const float *raw, char *split)
{
    const float *As = raw, *Bs = raw + BM * BK;
    for (int e = threadIdx.x; e < BM * BK / 4; e += THREADS) {
        const int r = e / 8, c = e % 8;
        const float4 x = *reinterpret_cast<const float4 *>(As + r * BK + 4 * c);
        const float v[4] = {x.x, x.y, x.z, x.w};
        store_split(split, split + TILE_BYTES, r, c, v);
    }
    for (int e = threadIdx.x; e < BN * BK / 4; e += THREADS) {
        const int n = e % BN, c = e / BN;
        float v[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) v[q] = Bs[(4 * c + q) * BN + n];
        store_split(split + 2 * TILE_BYTES, split + 3 * TILE_BYTES, n, c, v);
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); /* generic stores, read by wgmma */
}

/* K-major, 128-byte swizzle, 8-row groups 1024 bytes apart. */
__device__ __forceinline__ unsigned long long descriptor(const void *smem)
{
    const unsigned addr = (unsigned)__cvta_generic_to_shared(smem);
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ULL << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ULL << 62);
}

__device__ __forceinline__ void wgmma(float (&d)[64], unsigned long long da, unsigned long long db, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "r"(scale_d));
}

/* Keeps the compiler from moving accesses of d across the asynchronous wgmma. */
__device__ __forceinline__ void fence_operands(float (&d)[64])
{
#pragma unroll
    for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#endif /* WG_ABSENT */

__global__ void __launch_bounds__(THREADS, 1) matmul_wgmma_kernel(const wg_params p)
{
#ifndef WG_ABSENT
    extern __shared__ __align__(16) char smem_raw[];
    char *base = (char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    /* stage s (0 or 1) of each: arithmetic, not an array indexed at run time (local memory) */
    auto split = [base](size_t s) { return base + s * SPLIT_BYTES; };
    auto raw = [base](size_t s) { return (float *)(base + 2 * SPLIT_BYTES) + s * RAW_FLOATS; };
    const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const size_t row0 = (size_t)blockIdx.y * BM, col0 = (size_t)blockIdx.x * BN;
    const size_t steps = (p.k + BK - 1) / BK;
    float acc[64], part[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = part[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < RAW_STAGES; ++s) {
        if ((size_t)s < steps) raw_stage(p, raw(s), row0, col0, (size_t)s * BK);
        cp_async_commit();
    }
    cp_async_wait<RAW_STAGES - 1>();
    __syncthreads();
    split_stage(raw(0), split(0));
    __syncthreads();
    for (size_t step = 0; step < steps; ++step) {
        const char *sp = split(step & 1);
        const unsigned long long a_big = descriptor(sp + wg * 64 * 128), a_small = descriptor(sp + TILE_BYTES + wg * 64 * 128);
        const unsigned long long b_big = descriptor(sp + 2 * TILE_BYTES), b_small = descriptor(sp + 3 * TILE_BYTES);
        fence_operands(part);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) { /* 32 bytes of k per slice: 2 in the descriptor's 16-byte units */
            wgmma(part, a_small + 2 * kk, b_big + 2 * kk, kk > 0);
            wgmma(part, a_big + 2 * kk, b_small + 2 * kk, 1);
            wgmma(part, a_big + 2 * kk, b_big + 2 * kk, 1);
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        /* raw stage step % 3 was split in the last iteration: refill it with step + 3 */
        if (step + RAW_STAGES < steps) raw_stage(p, raw(step % RAW_STAGES), row0, col0, (step + RAW_STAGES) * BK);
        cp_async_commit();
        cp_async_wait<RAW_STAGES - 1>();
        __syncthreads(); /* step + 1's raw tiles are in */
        if (step + 1 < steps) split_stage(raw((step + 1) % RAW_STAGES), split((step + 1) & 1));
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        fence_operands(part);
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] += part[i];
        __syncthreads(); /* the next split is written; this raw stage may be refilled */
    }
    cp_async_wait<0>();
    /* d[i]: row 16 warp + g + 8 (i % 4 / 2), column 8 (i / 4) + 2 t + i % 2 of the warpgroup's 64 x 128 */
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < 64; i += 2) {
        const size_t row = row0 + wg * 64 + warp * 16 + g + 8 * ((i % 4) / 2), col = col0 + 8 * (i / 4) + 2 * t;
        if (row >= p.m) continue;
        float *c = p.c + row * p.n;
        if (col < p.n) c[col] = acc[i];
        if (col + 1 < p.n) c[col + 1] = acc[i + 1];
    }
#endif
}

int wgmma_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    const mh_matmul_args *a = &x->matmul;
    if (ctx->cc != 90) {
        snprintf(why, len, "wgmma is built for sm_90a, compute capability 9.0 only (this device: %d.%d)", ctx->cc / 10,
                 ctx->cc % 10);
        return 0;
    }
    if (mh_ceil_div(a->m, (size_t)BM) <= MH_MAX_GRID_YZ && mh_ceil_div(a->n, (size_t)BN) <= MH_MAX_GRID_X) return 1;
    snprintf(why, len, "m = %zu needs more than 65535 blocks of %d rows", a->m, BM);
    return 0;
}

mh_status wgmma_run(mh_context *ctx, const mh_args *x)
{
    const mh_matmul_args *a = &x->matmul;
    wg_params p;
    p.a = a->a, p.b = a->b, p.c = a->c, p.m = a->m, p.k = a->k, p.n = a->n;
    p.vec_a = a->k % 4 == 0 && mh_aligned16(a->a);
    p.vec_b = a->n % 4 == 0 && mh_aligned16(a->b);
    MH_CUDA_TRY(ctx, cudaFuncSetAttribute((const void *)matmul_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    const dim3 grid((unsigned)mh_ceil_div(a->n, (size_t)BN), (unsigned)mh_ceil_div(a->m, (size_t)BM));
    matmul_wgmma_kernel<<<grid, THREADS, SMEM, mh_stream(ctx)>>>(p);
    return mh_cuda_status(ctx, cudaGetLastError(), "launching matmul_wgmma_kernel");
}

const mh_row rows[] = {
    {{"matmul/tf32x3-wgmma", MH_OP_MATMUL, MH_BACKEND_CUDA, 12, "global+shared+tensor", "ours",
      "tf32x3 on Hopper's wgmma: raw tiles split into swizzled big/small tiles while the last k-step multiplies"},
     wgmma_supports, wgmma_run, NULL, 0},
};

} // namespace

MH_ROW_GROUP(mh_matmul_wgmma_rows, rows)

/* matmul on the tensor cores, ours: TF32 mma.sync at FP32 accuracy (3xTF32), and one TF32 product.
 *
 *   tf32x3   each operand x is split where the tile leaves shared memory for registers:
 *            big = tf32(x) (round to nearest), small = tf32(x - big); the product accumulates
 *            small*big + big*small + big*big in FP32 (three m16n8k8 mma per step). The term
 *            dropped, small*small, is ~2^-22 of |a||b|; each split loses ~2^-22 of |x|: the
 *            result is as accurate as FP32 FMAs (docs/matmul.md "Accuracy on the tensor cores")
 *   tf32     one product of tf32(a) and tf32(b): 10-bit mantissas, errors ~1e-3 of |a||b|.
 *            Reduced precision on purpose (mh_variant_is_reduced_precision): listed, benched
 *            with its error shown, never chosen by auto, tested against the TF32 bound.
 *
 * Tiles: a block computes BM x BN of c from k-steps of BK, STAGES deep in shared memory,
 * filled by cp.async (16 bytes where rows are aligned and k, n multiples of 4; element-wise
 * with zero fill elsewhere: any m, k, n). Warps own WM x WN sub-tiles, each a grid of 16 x 8
 * mma tiles. a's tile rows are padded to BK + 4 floats and b's to BN + 8 so that the
 * fragment loads (lane = 4 g + t reads a[g][t], b[t][g]) hit 32 different banks.
 *
 * Fragments of mma.m16n8k8 with tf32 operands (lane = 4 g + t): a0 = A[g][t],
 * a1 = A[g + 8][t], a2 = A[g][t + 4], a3 = A[g + 8][t + 4]; b0 = B[t][g], b1 = B[t + 4][g];
 * c0, c1 = C[g][2 t, 2 t + 1], c2, c3 = C[g + 8][2 t, 2 t + 1]. */
#include "common.cuh"
#include "tf32_split.cuh"
#include "tile_io.cuh"

#include <stdio.h>
#include <string.h>

struct tc_params {
    const float *a, *b;
    float *c;
    size_t m, k, n;
    bool vec_a, vec_b; /* 16-byte copies: k % 4 == 0 and a aligned; n % 4 == 0 and b aligned */
    bool pair_c;       /* 8-byte stores of c: n even and c 8-byte aligned */
};

template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_>
struct tc_shape {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
    static constexpr int MT = WM / 16, NT = WN / 8; /* mma tiles per warp */
    static constexpr int A_STRIDE = BK + 4, B_STRIDE = BN + 8;
    static constexpr int STAGE_FLOATS = BM * A_STRIDE + BK * B_STRIDE;
    static constexpr int SMEM = STAGES * STAGE_FLOATS * (int)sizeof(float);
};

/* ---- the split and the mma ------------------------------------------------------------------ */

/* tf32x3: both parts (tf32_split.cuh); tf32: big alone. */
template <int PASSES>
static __device__ __forceinline__ void split(float x, unsigned &big, unsigned &small)
{
    if (PASSES == 3) tf32_split(x, big, small);
    else big = tf32_round(x);
}

static __device__ __forceinline__ void mma_tf32(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* ---- tiles into shared memory ---------------------------------------------------------------- */

static __device__ __forceinline__ void zero4(float *dst) { *reinterpret_cast<float4 *>(dst) = make_float4(0, 0, 0, 0); }

/* Stage of k-step `step`: a[row0 .., k0 ..] and b[k0 .., col0 ..], zero outside the matrices. */
template <class S>
static __device__ __forceinline__ void load_stage(const tc_params &p, float *stage, size_t row0, size_t col0, size_t k0)
{
    float *As = stage, *Bs = stage + S::BM * S::A_STRIDE;
    for (int e = threadIdx.x; e < S::BM * S::BK / 4; e += S::THREADS) {
        const int r = e / (S::BK / 4), c = (e % (S::BK / 4)) * 4;
        float *dst = As + r * S::A_STRIDE + c;
        if (row0 + r < p.m) load_group(dst, p.a + (row0 + r) * p.k, (long long)p.k, (long long)(k0 + c), p.vec_a);
        else zero4(dst);
    }
    for (int e = threadIdx.x; e < S::BK * S::BN / 4; e += S::THREADS) {
        const int r = e / (S::BN / 4), c = (e % (S::BN / 4)) * 4;
        float *dst = Bs + r * S::B_STRIDE + c;
        if (k0 + r < p.k) load_group(dst, p.b + (k0 + r) * p.n, (long long)p.n, (long long)(col0 + c), p.vec_b);
        else zero4(dst);
    }
}

/* ---- one k-step on a stage -------------------------------------------------------------------- */

template <class S, int PASSES>
static __device__ __forceinline__ void compute_stage(const float *stage, int wm, int wn, int g, int t,
                                                     float (&acc)[S::MT][S::NT][4])
{
    const float *As = stage + (wm * S::WM) * S::A_STRIDE, *Bs = stage + S::BM * S::A_STRIDE + wn * S::WN;
#pragma unroll
    for (int kk = 0; kk < S::BK; kk += 8) {
        unsigned bb[S::NT][2], bs[S::NT][2];
#pragma unroll
        for (int j = 0; j < S::NT; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) split<PASSES>(Bs[(kk + t + 4 * h) * S::B_STRIDE + j * 8 + g], bb[j][h], bs[j][h]);
#pragma unroll
        for (int i = 0; i < S::MT; ++i) {
            unsigned ab[4], as[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) /* q = 0: (g, t), 1: (g + 8, t), 2: (g, t + 4), 3: (g + 8, t + 4) */
                split<PASSES>(As[(i * 16 + g + 8 * (q & 1)) * S::A_STRIDE + kk + t + 4 * (q >> 1)], ab[q], as[q]);
#pragma unroll
            for (int j = 0; j < S::NT; ++j) {
                if (PASSES == 3) { /* the small terms first: they are the ones rounding can lose */
                    mma_tf32(acc[i][j], as, bb[j]);
                    mma_tf32(acc[i][j], ab, bs[j]);
                }
                mma_tf32(acc[i][j], ab, bb[j]);
            }
        }
    }
}

/* ---- the kernel --------------------------------------------------------------------------------- */

template <class S>
static __device__ __forceinline__ void store_c(const tc_params &p, size_t row0, size_t col0, int wm, int wn, int g,
                                               int t, const float (&acc)[S::MT][S::NT][4])
{
#pragma unroll
    for (int i = 0; i < S::MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const size_t row = row0 + wm * S::WM + i * 16 + g + 8 * h;
            if (row >= p.m) continue;
            float *crow = p.c + row * p.n;
#pragma unroll
            for (int j = 0; j < S::NT; ++j) {
                const size_t col = col0 + wn * S::WN + j * 8 + 2 * t;
                const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
                if (p.pair_c && col + 2 <= p.n) {
                    *reinterpret_cast<float2 *>(crow + col) = make_float2(v0, v1);
                } else {
                    if (col < p.n) crow[col] = v0;
                    if (col + 1 < p.n) crow[col + 1] = v1;
                }
            }
        }
}

template <class S, int PASSES>
static __global__ void __launch_bounds__(S::THREADS) matmul_tc_kernel(const tc_params p)
{
    extern __shared__ __align__(16) float smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wm = warp / S::WARPS_N, wn = warp % S::WARPS_N;
    const size_t row0 = (size_t)blockIdx.y * S::BM, col0 = (size_t)blockIdx.x * S::BN;
    const size_t steps = (p.k + S::BK - 1) / S::BK;
    float acc[S::MT][S::NT][4] = {};
    /* the pipeline: STAGES - 1 k-steps in flight while one is computed */
#pragma unroll
    for (int s = 0; s < S::STAGES - 1; ++s) {
        if ((size_t)s < steps) load_stage<S>(p, smem + s * S::STAGE_FLOATS, row0, col0, (size_t)s * S::BK);
        cp_async_commit();
    }
    for (size_t step = 0; step < steps; ++step) {
        cp_async_wait<S::STAGES - 2>();
        __syncthreads(); /* step's stage is in; every warp is done with the stage refilled next */
        const size_t next = step + S::STAGES - 1;
        if (next < steps) load_stage<S>(p, smem + (next % S::STAGES) * S::STAGE_FLOATS, row0, col0, next * S::BK);
        cp_async_commit();
        const float *stage = smem + (step % S::STAGES) * S::STAGE_FLOATS;
        if (PASSES == 1) {
            compute_stage<S, PASSES>(stage, wm, wn, g, t, acc);
            continue;
        }
        /* tf32x3: the tensor cores add in FP32 but truncate (round toward zero), so a k-step's
         * products go to a fresh partial sum, added to acc with round-to-nearest. Into acc
         * directly, 4096^3's 1536 truncating adds per output gave rel_l2 2.9e-5, 25x cuBLAS's. */
        float part[S::MT][S::NT][4] = {};
        compute_stage<S, PASSES>(stage, wm, wn, g, t, part);
#pragma unroll
        for (int i = 0; i < S::MT; ++i)
#pragma unroll
            for (int j = 0; j < S::NT; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[i][j][q] += part[i][j][q];
    }
    cp_async_wait<0>();
    store_c<S>(p, row0, col0, wm, wn, g, t, acc);
}

/* ---- shapes, launch, registry --------------------------------------------------------------- */

typedef tc_shape<128, 128, 32, 64, 32, 3> tc_large; /* 256 threads, 105 KB */
typedef tc_shape<128, 64, 32, 64, 32, 3> tc_mid;    /* 128 threads, 79 KB */
typedef tc_shape<64, 64, 32, 32, 32, 4> tc_small;   /* 128 threads, 71 KB */
typedef tc_shape<128, 128, 16, 64, 32, 4> tc_k16;   /* 256 threads, 89 KB */
typedef tc_shape<128, 128, 32, 32, 32, 3> tc_w32;   /* 512 threads, 105 KB: half the registers a thread */

typedef void (*tc_kernel_fn)(const tc_params);

struct tc_launch {
    tc_kernel_fn kernel;
    int bm, bn, threads, smem;
};

#define TC_LAUNCH(S, P) {matmul_tc_kernel<S, P>, S::BM, S::BN, S::THREADS, S::SMEM}
/* per row: the shapes in tc_configs' order after "auto" */
static const tc_launch tf32x3_launches[] = {TC_LAUNCH(tc_large, 3), TC_LAUNCH(tc_mid, 3), TC_LAUNCH(tc_small, 3),
                                            TC_LAUNCH(tc_k16, 3), TC_LAUNCH(tc_w32, 3)};
static const tc_launch tf32_launches[] = {TC_LAUNCH(tc_large, 1), TC_LAUNCH(tc_mid, 1), TC_LAUNCH(tc_small, 1),
                                          TC_LAUNCH(tc_k16, 1), TC_LAUNCH(tc_w32, 1)};

/* "auto" takes the largest tile that still gives every SM a block: 128 x 128 where that makes
 * at least as many blocks as SMs, 128 x 64, then 64 x 64 (1000^3 makes 64 blocks of 128 x 128
 * on the H100's 132 SMs). */
static const char *const tc_configs[] = {"auto",           "b128x128-k32-s3", "b128x64-k32-s3",        "b64x64-k32-s4",
                                         "b128x128-k16-s4", "b128x128-k32-w32x32-s3", NULL};

static size_t blocks_of(const mh_matmul_args *a, const tc_launch &l)
{
    return mh_ceil_div(a->m, (size_t)l.bm) * mh_ceil_div(a->n, (size_t)l.bn);
}

static const tc_launch &launch_of(const mh_context *ctx, const mh_args *x, const tc_launch *launches)
{
    if (x->config > 0) return launches[x->config - 1];
    const size_t sms = mh_sm_count(ctx);
    if (blocks_of(&x->matmul, launches[0]) >= sms) return launches[0];
    if (blocks_of(&x->matmul, launches[1]) >= sms) return launches[1];
    return launches[2];
}

static int tc_supports(const mh_context *ctx, const mh_args *x, const tc_launch *launches, char *why, size_t len)
{
    const mh_matmul_args *a = &x->matmul;
    const tc_launch &l = launch_of(ctx, x, launches);
    if (ctx->cc < 80) {
        snprintf(why, len, "TF32 mma needs compute capability 8.0 or later (this device: %d.%d)", ctx->cc / 10,
                 ctx->cc % 10);
        return 0;
    }
    if (mh_ceil_div(a->m, (size_t)l.bm) <= MH_MAX_GRID_YZ && mh_ceil_div(a->n, (size_t)l.bn) <= MH_MAX_GRID_X) return 1;
    snprintf(why, len, "m = %zu needs more than 65535 blocks of %d rows", a->m, l.bm);
    return 0;
}

static mh_status tc_run(mh_context *ctx, const mh_args *x, const tc_launch *launches, const char *what)
{
    const mh_matmul_args *a = &x->matmul;
    const tc_launch &l = launch_of(ctx, x, launches);
    tc_params p;
    p.a = a->a, p.b = a->b, p.c = a->c, p.m = a->m, p.k = a->k, p.n = a->n;
    p.vec_a = a->k % 4 == 0 && mh_aligned16(a->a);
    p.vec_b = a->n % 4 == 0 && mh_aligned16(a->b);
    p.pair_c = a->n % 2 == 0 && ((uintptr_t)a->c & 7) == 0;
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)l.kernel));
    const dim3 grid((unsigned)mh_ceil_div(a->n, (size_t)l.bn), (unsigned)mh_ceil_div(a->m, (size_t)l.bm));
    l.kernel<<<grid, l.threads, l.smem, mh_stream(ctx)>>>(p);
    return mh_cuda_status(ctx, cudaGetLastError(), what);
}

static int tf32x3_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    return tc_supports(ctx, x, tf32x3_launches, why, len);
}
static mh_status tf32x3_run(mh_context *ctx, const mh_args *x)
{
    return tc_run(ctx, x, tf32x3_launches, "launching matmul_tc_kernel (tf32x3)");
}
static int tf32_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    return tc_supports(ctx, x, tf32_launches, why, len);
}
static mh_status tf32_run(mh_context *ctx, const mh_args *x)
{
    return tc_run(ctx, x, tf32_launches, "launching matmul_tc_kernel (tf32)");
}

static const mh_row rows[] = {
    {{"matmul/tf32x3", MH_OP_MATMUL, MH_BACKEND_CUDA, 10, "global+shared+registers+tensor", "ours",
      "tensor cores at FP32 accuracy: a, b split into TF32 big + small, three mma.sync products, cp.async stages"},
     tf32x3_supports, tf32x3_run, tc_configs, 0},
    {{"matmul/tf32", MH_OP_MATMUL, MH_BACKEND_CUDA, 11, "global+shared+registers+tensor", "ours",
      "REDUCED PRECISION: one TF32 mma.sync product (10-bit mantissas), the unit without the split"},
     tf32_supports, tf32_run, tc_configs, 0, MH_LIB_NONE, NULL, MH_ROW_REDUCED_PRECISION},
};

MH_ROW_GROUP(mh_matmul_tensor_rows, rows)

/* matmul on CUDA, ours: register tiling, from a column per thread up to warp tiles.
 *
 *   regblock-1d  64 x 64 block tile, k-steps of 8; each thread computes 8 outputs of one
 *                column, reusing one b value from a register for all 8
 *   regblock-2d  128 x 128 block tile; each thread computes an 8 x 8 block of c from 8 values
 *                of a and 8 of b per k (16 shared loads for 64 FMAs)
 *   vector       regblock-2d with 16-byte global loads, and a's tile stored transposed so
 *                that a thread's 8 values of a are two 16-byte shared loads
 *   warptile     block tiles split into warp tiles, each warp's tile into sub-tiles in which
 *                every lane owns TM x TN outputs, laid out so that a warp's shared loads are
 *                broadcasts or one contiguous run; two shared stages, one barrier per k-step.
 *                Interior blocks walk plain pointers two k-steps ahead (two register stages);
 *                edge blocks load one k-step ahead with bounds checks. Default: 256 x 128 x 8
 *                over 8 warps of 64 x 64, 2 x 2 sub-tiles of 8 x 4 per lane (16 x 8
 *                outputs); other shapes are configurations
 *
 * Any m, k, n: a block whose tiles lie wholly inside the matrices, with k and n multiples of
 * 4 and 16-byte aligned rows, takes the 16-byte paths; any other block loads element-wise
 * with zero fill. Every shared tile of a is stored transposed (As[kk][row]). */
#include "common.cuh"

#include <stdio.h>

struct mm_params {
    const float *a, *b;
    float *c;
    size_t m, k, n;
    int vec_a, vec_b, vec_c; /* k % 4 == 0 and a 16-byte aligned, n % 4 == 0 and b / c aligned */
};

/* ---- tile loads ---------------------------------------------------------------------------- */

/* mat[r][c .. c + 3] of a rows x cols row-major matrix, zero outside; the 16-byte path when
 * the caller's block lies inside (and the rows are 16-byte aligned). */
static __device__ __forceinline__ float4 load4(const float *mat, size_t rows, size_t cols, size_t r, size_t c, bool inside)
{
    if (inside) return __ldg(reinterpret_cast<const float4 *>(mat + r * cols + c));
    float v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] = r < rows && c + q < cols ? mat[r * cols + c + q] : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

static __device__ __forceinline__ float4 a4(const mm_params &p, size_t row, size_t kk, bool inside)
{
    return load4(p.a, p.m, p.k, row, kk, inside);
}

static __device__ __forceinline__ float4 b4(const mm_params &p, size_t kk, size_t col, bool inside)
{
    return load4(p.b, p.k, p.n, kk, col, inside);
}

static __device__ __forceinline__ void store4(const mm_params &p, size_t row, size_t col, const float *v, bool inside)
{
    if (inside) {
        __stcs(reinterpret_cast<float4 *>(p.c + row * p.n + col), make_float4(v[0], v[1], v[2], v[3]));
        return;
    }
    if (row >= p.m) return;
#pragma unroll
    for (int q = 0; q < 4; ++q)
        if (col + q < p.n) p.c[row * p.n + col + q] = v[q];
}

/* The tile position of a thread's e-th float4 in a tile `cols` floats wide: row r, column c4. */
static __device__ __forceinline__ void float4_at(int e, int cols, int &r, int &c4)
{
    r = e / (cols / 4), c4 = (e % (cols / 4)) * 4;
}

/* ---- regblock-1d, regblock-2d, vector: one kernel, TN = 1 for the 1-D tiling ---------------- */

template <int BM, int BN, int BK, int TM, int TN, bool VEC>
static __global__ void __launch_bounds__((BM / TM) * (BN / TN)) matmul_blocktile_kernel(const mm_params p)
{
    constexpr int THREADS = (BM / TM) * (BN / TN), PAD = 4;
    __shared__ __align__(16) float As[BK][BM + PAD];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
    const size_t row0 = (size_t)blockIdx.y * BM, col0 = (size_t)blockIdx.x * BN;
    float acc[TM][TN] = {};

    for (size_t k0 = 0; k0 < p.k; k0 += BK) {
        if (VEC) {
            const bool a_in = p.vec_a && row0 + BM <= p.m && k0 + BK <= p.k;
            const bool b_in = p.vec_b && k0 + BK <= p.k && col0 + BN <= p.n;
            for (int e = tid; e < BM * BK / 4; e += THREADS) {
                int r, c4;
                float4_at(e, BK, r, c4);
                const float4 v = a4(p, row0 + r, k0 + c4, a_in);
                As[c4][r] = v.x, As[c4 + 1][r] = v.y, As[c4 + 2][r] = v.z, As[c4 + 3][r] = v.w;
            }
            for (int e = tid; e < BK * BN / 4; e += THREADS) {
                int r, c4;
                float4_at(e, BN, r, c4);
                *reinterpret_cast<float4 *>(&Bs[r][c4]) = b4(p, k0 + r, col0 + c4, b_in);
            }
        } else {
            for (int e = tid; e < BM * BK; e += THREADS) {
                const int r = e / BK, c = e % BK;
                As[c][r] = row0 + r < p.m && k0 + c < p.k ? p.a[(row0 + r) * p.k + k0 + c] : 0.0f;
            }
            for (int e = tid; e < BK * BN; e += THREADS) {
                const int r = e / BN, c = e % BN;
                Bs[r][c] = k0 + r < p.k && col0 + c < p.n ? p.b[(k0 + r) * p.n + col0 + c] : 0.0f;
            }
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float ra[TM], rb[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) ra[i] = As[kk][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) rb[j] = Bs[kk][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i) {
        const size_t row = row0 + ty * TM + i;
        for (int j = 0; j < TN; ++j) {
            const size_t col = col0 + tx * TN + j;
            if (row < p.m && col < p.n) p.c[row * p.n + col] = acc[i][j];
        }
    }
}

/* ---- warptile ---------------------------------------------------------------------------- */

/* A warptile shape: block tile BM x BN x BK; warps of WM x WN, each as WMITER x WNITER
 * sub-tiles in which the 32 lanes hold TM x TN outputs each; MINB blocks per SM asked of
 * ptxas (register cap). */
template <int BM_, int BN_, int BK_, int WM_, int WN_, int WMITER_, int WNITER_, int TM_, int TN_, int MINB_>
struct wt_shape {
    enum {
        BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, WMITER = WMITER_, WNITER = WNITER_, TM = TM_, TN = TN_,
        MINB = MINB_, THREADS = (BM / WM) * (BN / WN) * 32, WSUBM = WM / WMITER, WSUBN = WN / WNITER, PAD = 4,
        A4 = BM * BK / 4 / THREADS, B4 = BK * BN / 4 / THREADS, /* float4s per thread and k-step */
        SMEM = 2 * BK * (BM + PAD + BN) * 4                   /* two stages of both tiles, bytes */
    };
    static_assert((WSUBM / TM) * (WSUBN / TN) == 32, "a sub-tile is one warp's 32 lanes");
    static_assert(A4 >= 1 && B4 >= 1 && A4 * 4 * THREADS == BM * BK && B4 * 4 * THREADS == BK * BN, "whole float4s");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "16-byte shared loads");
};

template <class S>
struct wt_stage {
    float4 a[S::A4], b[S::B4];
};

template <class S>
static __device__ __forceinline__ void wt_fetch(const mm_params &p, size_t row0, size_t col0, size_t k0, wt_stage<S> &st)
{
    const int tid = threadIdx.x;
    const bool a_in = p.vec_a && row0 + S::BM <= p.m && k0 + S::BK <= p.k;
    const bool b_in = p.vec_b && k0 + S::BK <= p.k && col0 + S::BN <= p.n;
#pragma unroll
    for (int t = 0; t < S::A4; ++t) {
        int r, c4;
        float4_at(tid + t * S::THREADS, S::BK, r, c4);
        st.a[t] = a4(p, row0 + r, k0 + c4, a_in);
    }
#pragma unroll
    for (int t = 0; t < S::B4; ++t) {
        int r, c4;
        float4_at(tid + t * S::THREADS, S::BN, r, c4);
        st.b[t] = b4(p, k0 + r, col0 + c4, b_in);
    }
}

template <class S>
static __device__ __forceinline__ void wt_store(const wt_stage<S> &st, float (*As)[S::BM + S::PAD], float (*Bs)[S::BN])
{
    const int tid = threadIdx.x;
#pragma unroll
    for (int t = 0; t < S::A4; ++t) {
        int r, c4;
        float4_at(tid + t * S::THREADS, S::BK, r, c4);
        As[c4][r] = st.a[t].x, As[c4 + 1][r] = st.a[t].y, As[c4 + 2][r] = st.a[t].z, As[c4 + 3][r] = st.a[t].w;
    }
#pragma unroll
    for (int t = 0; t < S::B4; ++t) {
        int r, c4;
        float4_at(tid + t * S::THREADS, S::BN, r, c4);
        *reinterpret_cast<float4 *>(&Bs[r][c4]) = st.b[t];
    }
}

/* A lane's operands for one kk: its TM rows of a in each of WMITER sub-tiles, its TN columns of
 * b in each of WNITER sub-tiles; 16-byte shared loads (broadcast within the warp for a, one
 * contiguous run for b). */
template <class S>
struct wt_frag {
    float a[S::WMITER * S::TM], b[S::WNITER * S::TN];
};

/* The lane's place: its warp's tile (wrow, wcol) and its TM x TN in a sub-tile (trow, tcol). */
struct wt_lane {
    int wrow, wcol, trow, tcol;
};

template <class S>
static __device__ __forceinline__ wt_lane wt_lane_of()
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    return {warp / (S::BN / S::WN), warp % (S::BN / S::WN), lane / (S::WSUBN / S::TN), lane % (S::WSUBN / S::TN)};
}

/* dst[0 .. ITER * T) = the lane's T values in each of ITER sub-tiles of a shared row: sub-tile
 * i starts at first + i * sub, 16 bytes per load. */
template <int ITER, int T>
static __device__ __forceinline__ void wt_load_row(float *dst, const float *row, int first, int sub)
{
#pragma unroll
    for (int i = 0; i < ITER; ++i)
#pragma unroll
        for (int q = 0; q < T; q += 4) {
            const float4 v = *reinterpret_cast<const float4 *>(row + first + i * sub + q);
            float *d = dst + i * T + q;
            d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
        }
}

template <class S>
static __device__ __forceinline__ void wt_load_frag(const float (*As)[S::BM + S::PAD], const float (*Bs)[S::BN], int kk,
                                                    const wt_lane &l, wt_frag<S> &f)
{
    wt_load_row<S::WMITER, S::TM>(f.a, As[kk], l.wrow * S::WM + l.trow * S::TM, S::WSUBM);
    wt_load_row<S::WNITER, S::TN>(f.b, Bs[kk], l.wcol * S::WN + l.tcol * S::TN, S::WSUBN);
}

/* A kk's FMAs, column by column, every other column bottom to top: consecutive FFMAs share b[j]
 * (taken from the operand reuse cache), and at a column change a[i]. It is 2-5% faster than row
 * orders on the H100 at 4096^3 (docs/matmul.md): in the SASS (scripts/sass_ffma.py) it leaves
 * 30% of FFMAs reading two registers of the same parity (the register file's two banks, by the
 * Volta-era model) against 85% for the row orders. */
template <class S>
static __device__ __forceinline__ void wt_fma(const wt_frag<S> &f, float (&acc)[S::WMITER * S::TM][S::WNITER * S::TN])
{
    constexpr int M = S::WMITER * S::TM, N = S::WNITER * S::TN;
#pragma unroll
    for (int j = 0; j < N; ++j)
#pragma unroll
        for (int ii = 0; ii < M; ++ii) {
            const int i = j % 2 ? M - 1 - ii : ii;
            acc[i][j] = fmaf(f.a[i], f.b[j], acc[i][j]);
        }
}

template <class S>
static __device__ __forceinline__ void wt_store_c(const mm_params &p, size_t row0, size_t col0, const wt_lane &l,
                                                  const float (&acc)[S::WMITER * S::TM][S::WNITER * S::TN])
{
    const bool inside = p.vec_c && row0 + S::BM <= p.m && col0 + S::BN <= p.n;
#pragma unroll
    for (int wm = 0; wm < S::WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < S::TM; ++i) {
            const size_t row = row0 + l.wrow * S::WM + wm * S::WSUBM + l.trow * S::TM + i;
#pragma unroll
            for (int wn = 0; wn < S::WNITER; ++wn)
#pragma unroll
                for (int q = 0; q < S::TN; q += 4)
                    store4(p, row, col0 + l.wcol * S::WN + wn * S::WSUBN + l.tcol * S::TN + q,
                           &acc[wm * S::TM + i][wn * S::TN + q], inside);
        }
}

/* The interior blocks' loads (tiles wholly inside, 16-byte rows, k a multiple of BK: all but
 * the edge blocks) walk one pointer per float4, with no bounds checks. wt_fetch's checks cost
 * ~170 integer, compare and branch instructions per k-step, many with fixed-latency stalls of
 * 2-13 cycles (sm_90 SASS), against 1024 FFMAs. */
template <class S>
struct wt_walk {
    const float *a[S::A4], *b[S::B4];
};

template <class S>
static __device__ __forceinline__ void wt_walk_start(const mm_params &p, size_t row0, size_t col0, wt_walk<S> &w)
{
    const int tid = threadIdx.x;
#pragma unroll
    for (int t = 0; t < S::A4; ++t) {
        int r, c4;
        float4_at(tid + t * S::THREADS, S::BK, r, c4);
        w.a[t] = p.a + (row0 + r) * p.k + c4;
    }
#pragma unroll
    for (int t = 0; t < S::B4; ++t) {
        int r, c4;
        float4_at(tid + t * S::THREADS, S::BN, r, c4);
        w.b[t] = p.b + (size_t)r * p.n + col0 + c4;
    }
}

template <class S>
static __device__ __forceinline__ void wt_walk_fetch(wt_walk<S> &w, size_t n, wt_stage<S> &st)
{
#pragma unroll
    for (int t = 0; t < S::A4; ++t) st.a[t] = __ldg(reinterpret_cast<const float4 *>(w.a[t])), w.a[t] += S::BK;
#pragma unroll
    for (int t = 0; t < S::B4; ++t) st.b[t] = __ldg(reinterpret_cast<const float4 *>(w.b[t])), w.b[t] += S::BK * n;
}

/* One k-step's FMAs from one shared stage. The kk loop is unrolled whole; each kk loads its
 * operands, then computes, and ptxas overlaps the loads of kk + 1 with the FMAs of kk by itself:
 * an explicit register double buffer, a partial unroll of the kk loop and cp.async tiles
 * instead of the register prefetch are each slower on the H100 (2-33%; lab/notes/matmul.md). */
template <class S>
static __device__ __forceinline__ void wt_step(const float (*As)[S::BM + S::PAD], const float (*Bs)[S::BN], const wt_lane &l,
                                               float (&acc)[S::WMITER * S::TM][S::WNITER * S::TN])
{
#pragma unroll
    for (int kk = 0; kk < S::BK; ++kk) {
        wt_frag<S> f;
        wt_load_frag<S>(As, Bs, kk, l, f);
        wt_fma<S>(f, acc);
    }
}

template <class S>
struct wt_smem {
    float (*As)[S::BK][S::BM + S::PAD]; /* [stage][kk][row], a transposed */
    float (*Bs)[S::BK][S::BN];          /* [stage][kk][col] */
    __device__ explicit wt_smem(float *smem)
        : As(reinterpret_cast<float(*)[S::BK][S::BM + S::PAD]>(smem)),
          Bs(reinterpret_cast<float(*)[S::BK][S::BN]>(smem + 2 * S::BK * (S::BM + S::PAD)))
    {
    }
};

/* Any block: bounds-checked loads of the next k-step in flight while this one computes
 * (two shared stages, one barrier per k-step). */
template <class S>
static __device__ __forceinline__ void wt_checked_loop(const mm_params &p, size_t row0, size_t col0, float *smem,
                                                       const wt_lane &l, float (&acc)[S::WMITER * S::TM][S::WNITER * S::TN])
{
    const wt_smem<S> sm(smem);
    wt_stage<S> next;
    wt_fetch<S>(p, row0, col0, 0, next);
    wt_store<S>(next, sm.As[0], sm.Bs[0]);
    __syncthreads();
    int cur = 0;
    for (size_t k0 = 0; k0 < p.k; k0 += S::BK) {
        const bool more = k0 + S::BK < p.k;
        if (more) wt_fetch<S>(p, row0, col0, k0 + S::BK, next);
        wt_step<S>(sm.As[cur], sm.Bs[cur], l, acc);
        if (more) wt_store<S>(next, sm.As[cur ^ 1], sm.Bs[cur ^ 1]); /* the other stage: nobody reads it now */
        __syncthreads();
        cur ^= 1;
    }
}

/* Interior blocks, two k-steps ahead: step s + 2's tiles are loaded into registers while step s
 * computes and stored to shared memory at the end of step s + 1, so the loads have a whole
 * k-step (and a barrier ptxas does not move them across) to arrive. One step ahead, ptxas sank
 * the loads to ~280 instructions before the stores that consume them: 10% of the warps' time
 * in long-scoreboard stalls (ncu), 0.2% two steps ahead. Two register stages, r[0]
 * for even steps and r[1] for odd ones, the loop unrolled by two to name them statically. */
template <class S>
static __device__ __forceinline__ void wt_walk_loop(const mm_params &p, size_t row0, size_t col0, float *smem,
                                                     const wt_lane &l, float (&acc)[S::WMITER * S::TM][S::WNITER * S::TN])
{
    const wt_smem<S> sm(smem);
    wt_walk<S> w;
    wt_walk_start<S>(p, row0, col0, w);
    const size_t steps = p.k / S::BK;
    wt_stage<S> r[2];
    wt_walk_fetch<S>(w, p.n, r[0]);
    if (steps > 1) wt_walk_fetch<S>(w, p.n, r[1]);
    wt_store<S>(r[0], sm.As[0], sm.Bs[0]);
    __syncthreads();
    for (size_t s = 0; s < steps; s += 2) {
#pragma unroll
        for (int half = 0; half < 2; ++half) { /* step s + half, from stage `half` */
            if (half == 1 && s + 1 >= steps) break;
            if (s + half + 2 < steps) wt_walk_fetch<S>(w, p.n, r[half]);
            wt_step<S>(sm.As[half], sm.Bs[half], l, acc);
            if (s + half + 1 < steps) wt_store<S>(r[half ^ 1], sm.As[half ^ 1], sm.Bs[half ^ 1]);
            __syncthreads();
        }
    }
}

template <class S>
static __global__ void __launch_bounds__(S::THREADS, S::MINB) matmul_warptile_kernel(const mm_params p)
{
    /* dynamic, so that a shape past the static 48 KB needs no other change (today's take 33 KB at most) */
    extern __shared__ __align__(16) float smem[];
    const wt_lane l = wt_lane_of<S>();
    const size_t row0 = (size_t)blockIdx.y * S::BM, col0 = (size_t)blockIdx.x * S::BN;
    float acc[S::WMITER * S::TM][S::WNITER * S::TN] = {};
    const bool interior = p.vec_a && p.vec_b && p.k % S::BK == 0 && row0 + S::BM <= p.m && col0 + S::BN <= p.n;
    if (interior)
        wt_walk_loop<S>(p, row0, col0, smem, l, acc);
    else
        wt_checked_loop<S>(p, row0, col0, smem, l, acc);
    wt_store_c<S>(p, row0, col0, l, acc);
}

/* warptile's configurations, "bBMxBN-kBK-wWMxWN-tTMxTN[-occ2]". */
typedef wt_shape<256, 128, 8, 64, 64, 2, 2, 8, 4, 1> wt_tall;  /* 256 threads, 16 x 8 per lane */
typedef wt_shape<128, 256, 8, 64, 64, 2, 2, 8, 4, 1> wt_wide;  /* 256 threads, 16 x 8 per lane */
typedef wt_shape<128, 128, 16, 64, 32, 2, 2, 4, 4, 1> wt_sq;   /* 256 threads, 8 x 8 per lane */
typedef wt_shape<128, 128, 16, 32, 64, 1, 2, 8, 4, 1> wt_sq32; /* 256 threads, 8 x 8, warps of 32 x 64 */
typedef wt_shape<128, 128, 8, 64, 32, 2, 2, 4, 4, 2> wt_occ2;  /* 256 threads, 8 x 8, 128 registers */
/* [0] is the default, the fastest at 4096^3 and LeetGPU's shape on the H100 (docs/matmul.md).
 * No 16-deep k-steps with 16 x 8 outputs a lane, nor 128 x 128 x 16 under a 128-register cap:
 * both spill with two register stages. */
static const char *const warptile_configs[] = {"b256x128-k8-w64x64-t8x4",  "b128x256-k8-w64x64-t8x4",
                                               "b128x128-k16-w64x32-t4x4", "b128x128-k16-w32x64-t8x4",
                                               "b128x128-k8-w64x32-t4x4-occ2", NULL};

/* ---- launch, registry ---------------------------------------------------------------------- */

typedef void (*kernel_fn)(const mm_params);

struct shape {
    kernel_fn kernel;
    int bm, bn, threads;
    int smem; /* dynamic shared bytes (warptile) */
};

static const shape shapes[] = {
    {matmul_blocktile_kernel<64, 64, 8, 8, 1, false>, 64, 64, 512},   /* regblock-1d */
    {matmul_blocktile_kernel<128, 128, 8, 8, 8, false>, 128, 128, 256}, /* regblock-2d */
    {matmul_blocktile_kernel<128, 128, 8, 8, 8, true>, 128, 128, 256},  /* vector */
#define MH_WT(S) {matmul_warptile_kernel<S>, S::BM, S::BN, S::THREADS, S::SMEM}
    /* warptile, in warptile_configs' order */
    MH_WT(wt_tall), MH_WT(wt_wide), MH_WT(wt_sq), MH_WT(wt_sq32), MH_WT(wt_occ2),
};

static int shape_fits(const mh_matmul_args *a, const shape &s, char *why, size_t len)
{
    if (mh_ceil_div(a->m, (size_t)s.bm) <= 65535 && mh_ceil_div(a->n, (size_t)s.bn) <= MH_MAX_GRID_X) return 1;
    snprintf(why, len, "m = %zu needs more than 65535 blocks of %d rows", a->m, s.bm);
    return 0;
}

static mh_status run_shape(mh_context *ctx, const mh_args *x, const shape &s, const char *name)
{
    const mh_matmul_args *a = &x->matmul;
    mm_params p;
    p.a = a->a, p.b = a->b, p.c = a->c, p.m = a->m, p.k = a->k, p.n = a->n;
    p.vec_a = a->k % 4 == 0 && mh_aligned16(a->a);
    p.vec_b = a->n % 4 == 0 && mh_aligned16(a->b);
    p.vec_c = a->n % 4 == 0 && mh_aligned16(a->c);
    const dim3 grid((unsigned)mh_ceil_div(a->n, (size_t)s.bn), (unsigned)mh_ceil_div(a->m, (size_t)s.bm));
    if (s.smem > 48 * 1024) MH_CUDA_TRY(ctx, mh_allow_smem((const void *)s.kernel));
    s.kernel<<<grid, s.threads, s.smem, mh_stream(ctx)>>>(p);
    return mh_cuda_status(ctx, cudaGetLastError(), name);
}

/* Each row's shapes[] index; a row with configurations takes shapes[first + config]. */
#define MM_ROW(id, first, launch_name)                                                                                \
    static int supports_##id(const mh_context *, const mh_args *x, char *why, size_t len)                            \
    {                                                                                                                 \
        return shape_fits(&x->matmul, shapes[(first) + x->config], why, len);                                         \
    }                                                                                                                 \
    static mh_status run_##id(mh_context *ctx, const mh_args *x)                                                      \
    {                                                                                                                 \
        return run_shape(ctx, x, shapes[(first) + x->config], launch_name);                                           \
    }

MM_ROW(1d, 0, "launching matmul_blocktile_kernel (1-D)")
MM_ROW(2d, 1, "launching matmul_blocktile_kernel (2-D)")
MM_ROW(vector, 2, "launching matmul_blocktile_kernel (vector)")
MM_ROW(warptile, 3, "launching matmul_warptile_kernel")

static const mh_row rows[] = {
    {{"matmul/regblock-1d", MH_OP_MATMUL, MH_BACKEND_CUDA, 6, "global+shared+registers", "ours",
      "64 x 64 tiles, 8 outputs of a column per thread"},
     supports_1d, run_1d, NULL},
    {{"matmul/regblock-2d", MH_OP_MATMUL, MH_BACKEND_CUDA, 7, "global+shared+registers", "ours",
      "128 x 128 tiles, an 8 x 8 block of c per thread"},
     supports_2d, run_2d, NULL},
    {{"matmul/vector", MH_OP_MATMUL, MH_BACKEND_CUDA, 8, "global+shared+registers", "ours",
      "regblock-2d with 16-byte loads, a's tile transposed"},
     supports_vector, run_vector, NULL},
    {{"matmul/warptile", MH_OP_MATMUL, MH_BACKEND_CUDA, 9, "global+shared+registers", "ours",
      "warp tiles of 64 x 64, 16 x 8 outputs per lane, register-prefetched k-steps"},
     supports_warptile, run_warptile, warptile_configs},
};

MH_ROW_GROUP(mh_matmul_regtile_rows, rows)

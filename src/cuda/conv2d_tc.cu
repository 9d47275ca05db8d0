/* conv2d/tc, ours: the convolution as small matrix products on Hopper's tensor cores (wgmma),
 * 3xTF32 so that the result keeps FP32 accuracy (tf32_split.cuh, docs/matmul.md).
 *
 * The Toeplitz formulation. Take one input row x (a row of the block's tile) and one output
 * row r it feeds through filter row i. Four consecutive outputs of r starting at column 4m are
 *     out[r][4m + c] += sum_t x[4m + t] f[i][t - c]        (c = 0..3, t = 0..L-1)
 * a row of a matrix A (A[m][t] = x[4m + t], the window of input row x at 4m) times a Toeplitz
 * matrix T_i (T_i[t][c] = f[i][t - c], zero outside the filter). With Q = 4 output rows
 * r0..r0+3 and input row x = r0 + rho, output row r0 + q uses filter row rho - q, so the
 * columns (q, c) of one L x 16 matrix B_rho = [T_rho | T_rho-1 | T_rho-2 | T_rho-3] give all
 * four rows' contributions at once: 64 A rows (256 outputs wide) times B_rho is one
 * m64n16kL product, and summing it over rho = 0 .. krows + 2 gives the 256 x 4 outputs.
 * Worked example, 3-wide filter row (a, b, c), L = 8: T's columns are
 *     (a b c 0 0 0 0 0), (0 a b c 0 0 0 0), (0 0 a b c 0 0 0), (0 0 0 a b c 0 0)
 * so window x[4m..4m+7] gives outputs 4m..4m+3 of that row.
 * With groups of Q output rows (Q = 4 above; 8 and 16 are configurations) B_rho has N = 4 Q
 * columns and rho runs over krows + Q - 1 input rows. L is kcols + 3 rounded up to the tensor
 * cores' k step of 8 (8, 16, 24, 32 or 40), so the work done is (krows + Q - 1) L multiply-adds
 * per output against krows kcols useful ones (Q = 4: 11 x 11 14 x 16 / 121 = 1.85, 31 x 31
 * 34 x 40 / 961 = 1.42, 5 x 5 8 x 8 / 25 = 2.56; Q = 8: 2.38, 1.58, 3.84), times 3 for the split.
 * The same holds with S outputs an A row instead of 4 (windows S apart, T_i S columns wide, L =
 * kcols + S - 1 rounded up): S = 2 where that saves a slice, at kcols = 7, 15, 23 and 31 (31 x 31,
 * Q = 16: 46 x 32 / 961 = 1.53 instead of 46 x 40 / 961 = 1.91), at twice the A loads an output.
 *
 * How it runs:
 *   toeplitz_kernel   per call: the Toeplitz columns (tc_panels), split into big and small TF32
 *                     parts, in the K-major no-swizzle layout wgmma reads, into the workspace
 *   conv2d_tc_kernel  one or two warpgroups a block (WG), each 64 S output columns by Q G rows,
 *                     under one another. The panels arrive by cp.async; the input tile (Q G WG +
 *                     krows - 1 rows of 64 S + L) is split once as it is loaded, each element's
 *                     big and small parts side by side. A comes from the tile into registers
 *                     (wgmma's A-from-registers form; the tensor cores read only B from shared
 *                     memory): thread (warp w, lane) holds A rows 16 w + lane / 4 (+ 8), columns
 *                     lane % 4 (+ 4) of each 8-deep slice, with S = 4 x[64 w + lane + 8 j + {0,
 *                     4, 32, 36}]:
 *                     consecutive lanes read consecutive 8-byte pairs. A warpgroup walks its input
 *                     rows r: row r feeds group g through B_(r - Q g), so one A load serves every
 *                     group it reaches. Per row and group: small*big, big*small, big*big (six
 *                     products of three parts below 121 taps, parts_for), each over every slice,
 *                     into a partial sum, added to the accumulators with round-to-nearest after
 *                     wgmma.wait_group 0 (the tensor cores' own accumulation truncates, and
 *                     reading one partial while another is in flight makes ptxas serialize every
 *                     wgmma: matmul_wgmma.cu); the next row's A is loaded while they run.
 * A is split once, as the tile is stored: split in registers at every use the loop is
 * issue-bound, since cvt.rna.tf32 is emulated (about 9 instructions a value with the Inf
 * guard: 373 instructions per 24 wgmma at 11 x 11, the tensor pipe 22% active in ncu).
 * Every A row covers real outputs, so the only waste is T's zeros. A NaN or Inf in the image
 * meets those zeros (0 * Inf = NaN): outputs up to L - 1 columns and Q - 1 rows beyond the ones
 * it really reaches can turn NaN, where the direct rows give Inf or a finite value.
 *
 * Built for sm_90a only (wgmma): CMake compiles this file with -gencode arch=compute_90a,code=sm_90a;
 * the row refuses other devices. */
#include "common.cuh"
#include "tf32_split.cuh"
#include "tile_io.cuh"
#include "wgmma_ops.cuh"
#include "wgmma_util.cuh"

#include <stdio.h>
#include <type_traits>

namespace {

/* S outputs per A row (A rows are windows S columns apart: 4, or 2 where kcols + 1 fits in a
 * slice fewer than kcols + 3: kcols = 7, 15, 23, 31 run L = 8, 16, 24, 32 instead of 16 .. 40);
 * SL 8-deep slices of k (L = 8 SL, at least kcols + S - 1); groups of Q output rows (4, 8 or 16:
 * B has N = S Q columns (q, c), one m64nNk8 product per slice). A warpgroup holds G groups, one
 * under the other, and a block WG warpgroups, one under the other, sharing the tile. Each
 * group's accumulators and partial sums stay in registers (N registers a group), and A's
 * fragments for two input rows (16 SL), so G shrinks as the slices grow. */
template <int SL, int Q, int WG, int S> struct tc_shape {
    static constexpr int L = 8 * SL;
    static constexpr int STRIP = 64 * S; /* output columns per block (a warpgroup's 64 A rows) */
    static constexpr int N = S * Q;     /* B's columns */
    static constexpr int PART = N / 2;  /* a group's accumulators a thread */
    static constexpr int G = Q == 16 ? 1 : (Q == 4 ? 4 : 2) / (SL <= 3 ? 1 : 2);
    static constexpr int WROWS = Q * G; /* output rows per warpgroup */
    static constexpr int ROWS = WROWS * WG; /* output rows per block */
    static constexpr int THREADS = 128 * WG;
    /* tile row length in elements, a multiple of 8: the windows reach S 63 + L + d of it (d <= 3,
     * the tile's start left of the first window) */
    static constexpr int TW = STRIP + L + (S < 4 ? 8 : 0);
};

/* The Toeplitz columns. B_rho's column (q, c) is column c of T_(rho - q), so B_rho + 1 is B_rho
 * shifted by S columns: one sequence of columns U[S a + c] = T_(top - a)[.][c], top = krows +
 * Q - 2, a = 0 .. krows + 2 Q - 3 (T_i = 0 outside the filter), holds every B_rho as the N
 * columns from U[S (top - rho)]. It is stored as panels, one per part (big, small), slice j and
 * k-half h: U's columns one after another, 16 bytes (4 k) each. A descriptor then reads B_rho's
 * slice with the k-halves a panel apart (leading offset) and 8-column groups 128 bytes apart
 * (stride offset). 31 x 31, Q = 8: 57.6 KB, against 390 KB for every B_rho apart. With PARTS = 3
 * (short sums) a third set of panels holds the rest. */
struct tc_panels {
    int columns; /* U's columns: S (krows + 2 Q - 2) */
    __host__ __device__ int panel_floats() const { return columns * 4; }
    __host__ __device__ int total_floats(int sl, int parts) const { return parts * sl * 2 * panel_floats(); }
    /* float offset of U's column u, k = kk of half h of slice j, part (0 big, 1 small, 2 rest) */
    __host__ __device__ int at(int sl, int part, int j, int h, int u, int kk) const
    {
        return ((part * sl + j) * 2 + h) * panel_floats() + u * 4 + kk;
    }
};

__host__ __device__ inline tc_panels panels_for(int krows, int q, int s) { return {s * (krows + 2 * q - 2)}; }

struct tc_params {
    const float *in, *toeplitz;
    float *out;
    size_t rows, cols, out_rows, out_cols;
    int krows, lpr, lpc; /* the filter's width lives in the Toeplitz columns */
};

/* U's panels, split into PARTS TF32 parts (big, small and, for short sums, the rest). */
template <int SL, int Q, int S, int PARTS>
__global__ void toeplitz_kernel(const float *filter, int krows, int kcols, float *b)
{
#ifndef MH_WGMMA_ABSENT
    const tc_panels pn = panels_for(krows, Q, S);
    const int top = krows + Q - 2, total = pn.columns * 8 * SL;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int u = e / (8 * SL), k = e % (8 * SL); /* column u, depth k */
        const int i = top - u / S, col = k - u % S;
        const float v = i >= 0 && i < krows && col >= 0 && col < kcols ? filter[i * kcols + col] : 0.0f;
        unsigned part[3];
        tf32_split3(v, part[0], part[1], part[2]);
#pragma unroll
        for (int q = 0; q < PARTS; ++q) b[pn.at(SL, q, k / 8, k % 8 / 4, u, k % 4)] = __uint_as_float(part[q]);
    }
#endif
}

#ifndef MH_WGMMA_ABSENT

/* Four consecutive elements of the image from (y, x), zero outside it: one 16-byte load where
 * the row allows it (vec: rows and x 16-byte aligned). */
__device__ __forceinline__ float4 load_four(const tc_params &p, long long y, long long x, bool vec)
{
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (y >= 0 && y < (long long)p.rows) {
        const float *row = p.in + (size_t)y * p.cols;
        if (vec && x >= 0 && x + 4 <= (long long)p.cols) return __ldg(reinterpret_cast<const float4 *>(row + x));
#pragma unroll
        for (int e = 0; e < 4; ++e)
            if (x + e >= 0 && x + e < (long long)p.cols) v[e] = __ldg(row + x + e);
    }
    return make_float4(v[0], v[1], v[2], v[3]);
}

/* A tile element: its PARTS TF32 parts side by side (big, small; big, small, rest, unused). */
template <int PARTS> using tile_elem = typename std::conditional<PARTS == 3, uint4, uint2>::type;

/* The block's input tile, split once: element (r, t) as its tile_elem, zero outside the image.
 * A thread takes 4 consecutive elements an item and loads BATCH items before it splits and
 * stores any: one load at a time left the tile's ~10 loads a thread waiting on each other's
 * latency while the SM's other block alone kept the tensor cores busy. */
template <int TW, int THREADS, int PARTS, int BATCH = 8>
__device__ __forceinline__ void load_split_tile(const tc_params &p, tile_elem<PARTS> *tile, long long y0, long long x0,
                                                int th)
{
    const bool vec = p.cols % 4 == 0 && mh_aligned16(p.in) && (x0 % 4 + 4) % 4 == 0;
    const int items = th * (TW / 4);
    for (int first = threadIdx.x; first < items; first += THREADS * BATCH) {
        float4 v[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            const int item = first + b * THREADS;
            v[b] = item < items ? load_four(p, y0 + item / (TW / 4), x0 + 4 * (item % (TW / 4)), vec) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
        for (int b = 0; b < BATCH; ++b) {
            const int item = first + b * THREADS;
            if (item >= items) break;
            tile_elem<PARTS> *d = tile + item / (TW / 4) * TW + 4 * (item % (TW / 4));
            if constexpr (PARTS == 2) {
                unsigned big[4], small[4];
                tf32_split(v[b].x, big[0], small[0]), tf32_split(v[b].y, big[1], small[1]);
                tf32_split(v[b].z, big[2], small[2]), tf32_split(v[b].w, big[3], small[3]);
                reinterpret_cast<uint4 *>(d)[0] = make_uint4(big[0], small[0], big[1], small[1]);
                reinterpret_cast<uint4 *>(d)[1] = make_uint4(big[2], small[2], big[3], small[3]);
            } else {
                const float x[4] = {v[b].x, v[b].y, v[b].z, v[b].w};
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    unsigned big, small, rest;
                    tf32_split3(x[e], big, small, rest);
                    d[e] = make_uint4(big, small, rest, 0u);
                }
            }
        }
    }
}

/* A's fragments of one input row, each part (big, small, rest): thread (warp w, lane) holds A
 * rows 16 w + lane / 4 (+ 8), columns lane % 4 (+ 4) of each slice, x[S (16 w + lane / 4) +
 * lane % 4 + 8 j + {0, 8 S, 4, 8 S + 4}] (x: the row at the thread's column, xw; with S = 4,
 * consecutive lanes read consecutive elements). */
template <int SL, int PARTS> struct a_row {
    unsigned part[PARTS][SL][4];
};

template <int SL, int S, int PARTS>
__device__ __forceinline__ void load_a(const tile_elem<PARTS> *x, a_row<SL, PARTS> &a)
{
#pragma unroll
    for (int j = 0; j < SL; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const tile_elem<PARTS> v = x[8 * j + 8 * S * (q % 2) + 4 * (q / 2)];
            a.part[0][j][q] = v.x, a.part[1][j][q] = v.y;
            if constexpr (PARTS == 3) a.part[2][j][q] = v.z;
        }
}

/* The products, smallest first, each over every slice before the next (each wgmma into a
 * partial sum rounds it toward zero, so the small ones go in while the partial is small, and
 * the big ones round it SL times, not 3 SL - 2): A's part and B's part of product i. PARTS = 3
 * runs i = 0 .. 5: rest*big, big*rest, small*small, small*big, big*small, big*big; PARTS = 2
 * the last three. */
__device__ constexpr int a_part(int i) { return i == 0 ? 2 : i == 2 || i == 3 ? 1 : 0; }
__device__ constexpr int b_part(int i) { return i == 1 ? 2 : i == 2 || i == 4 ? 1 : 0; }
template <int PARTS> constexpr int first_product = PARTS == 3 ? 0 : 3;

/* acc + p for a partial sum p as the tensor cores leave it, rounded toward zero: its exact
 * value lies between p and p + one ulp away from zero, so half an ulp of p goes in with it (the
 * midpoint: unbiased, within half an ulp). Half first: where acc is small beside p, the second
 * add then rounds p + half + acc, not the exact tie p + half. H100, 5 x 5 wide data, 40 seeds x
 * 7 configurations, tc's error over regtile's, p90 / worst: 1.78x / 2.59x -> 1.37x / 1.84x; the
 * same as adding all three exactly (TwoSum: 1.28x / 1.84x, but twice the time); it costs ~15%
 * of the time. Only the short sums (PARTS = 3) take it: from 121 taps the sum's own
 * rounding hides the bias (11 x 11: 1.75x worst without it). */
[[maybe_unused]] __device__ __forceinline__ float add_partial(float acc, float p)
{
    const float half = __uint_as_float(__float_as_uint(p) & 0xFF800000u) * 0x1p-24f;
    return __fadd_rn(__fadd_rn(acc, half), p);
}

/* Where B_rho's slices are: descriptors of rho = 0, one a part; rho + 1 is U's columns S on
 * to the left, 16 S bytes, S in the descriptor's address field (16-byte units). */
template <int S, int PARTS> struct b_desc {
    unsigned long long part[PARTS];
    unsigned slice_step;
    __device__ unsigned long long at(unsigned long long d0, int rho, int j) const { return d0 - S * rho + slice_step * j; }
};

/* Input row r of the warpgroup's tile (a: its A fragments) feeds output groups LO .. HI through
 * filter rows rho = r - Q g (the groups whose rho lies in 0 .. krows + Q - 2): the products
 * (a_part, b_part), each over every slice, into each group's fresh partial sum, added to acc[g]
 * with round-to-nearest (add_partial for short sums) after wgmma.wait_group 0 (the tensor
 * cores' own accumulation truncates, and reading one partial while another is in flight makes
 * ptxas serialize every wgmma: matmul_wgmma.cu). One A load serves all the groups; the next
 * row's A (next, from next_x) is loaded while the products run. The groups are template
 * arguments because a group skipped by a run-time test inside the stage makes ptxas serialize
 * the wgmma too. */
template <int SL, int Q, int WG, int S, int PARTS, int LO, int HI, typename T = tc_shape<SL, Q, WG, S>>
__device__ __forceinline__ void multiply_groups(int r, a_row<SL, PARTS> &a, const b_desc<S, PARTS> &b,
                                                const tile_elem<PARTS> *next_x, a_row<SL, PARTS> &next,
                                                float (&acc)[T::G][T::PART])
{
    float part[HI + 1][T::PART];
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int g = LO; g <= HI; ++g)
#pragma unroll
        for (int i = first_product<PARTS>; i < 6; ++i)
#pragma unroll
            for (int j = 0; j < SL; ++j) {
                const bool accumulate = i > first_product<PARTS> || j > 0;
                wgmma_rs(part[g], a.part[a_part(i)][j], b.at(b.part[b_part(i)], r - Q * g, j), accumulate);
            }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    load_a<SL, S, PARTS>(next_x, next);
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
    for (int q = 0; q < PARTS; ++q) fence_operands(a.part[q]); /* read until the wait */
#pragma unroll
    for (int g = LO; g <= HI; ++g) {
        fence_operands(part[g]);
#pragma unroll
        for (int i = 0; i < T::PART; ++i) {
            if constexpr (PARTS == 3) acc[g][i] = add_partial(acc[g][i], part[g][i]);
            else acc[g][i] += part[g][i];
        }
    }
}

/* multiply_groups for the groups lo .. hi that input row r feeds, chosen among the instances
 * (LO, HI) with LO <= HI < G. */
template <int SL, int Q, int WG, int S, int PARTS, int LO = 0, int HI = 0, typename T = tc_shape<SL, Q, WG, S>>
__device__ __forceinline__ void multiply_row(int r, int lo, int hi, a_row<SL, PARTS> &a, const b_desc<S, PARTS> &b,
                                             const tile_elem<PARTS> *next_x, a_row<SL, PARTS> &next,
                                             float (&acc)[T::G][T::PART])
{
    if (lo == LO && hi == HI) return multiply_groups<SL, Q, WG, S, PARTS, LO, HI>(r, a, b, next_x, next, acc);
    if constexpr (HI + 1 < T::G)
        multiply_row<SL, Q, WG, S, PARTS, LO, HI + 1>(r, lo, hi, a, b, next_x, next, acc);
    else if constexpr (LO + 1 < T::G)
        multiply_row<SL, Q, WG, S, PARTS, LO + 1, LO + 1>(r, lo, hi, a, b, next_x, next, acc);
}

/* acc[g][i]: output row Q g + q of the warpgroup, column S m + c of the block, with m = 16 warp
 * + lane / 4 + 8 (i % 4 / 2) and n = S q + c = 8 (i / 4) + 2 (lane % 4) + i % 2 (wgmma's
 * accumulator layout); i and i + 1 are neighbouring columns of one row. */
template <int SL, int Q, int WG, int S, typename T = tc_shape<SL, Q, WG, S>>
__device__ __forceinline__ void store_outputs(const tc_params &p, long long y0, long long x0,
                                              const float (&acc)[T::G][T::PART])
{
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int g = 0; g < T::G; ++g)
#pragma unroll
        for (int i = 0; i < T::PART; i += 2) {
            const int n = 8 * (i / 4) + 2 * (lane % 4);
            const long long y = y0 + Q * g + n / S;
            const long long x = x0 + S * (16 * warp + lane / 4 + 8 * (i % 4 / 2)) + n % S;
            if (y >= (long long)p.out_rows) continue;
            float *o = p.out + (size_t)y * p.out_cols;
            if (x >= 0 && x + 2 <= (long long)p.out_cols && ((uintptr_t)(o + x) & 7) == 0) {
                *reinterpret_cast<float2 *>(o + x) = make_float2(acc[g][i], acc[g][i + 1]);
                continue;
            }
            if (x >= 0 && x < (long long)p.out_cols) o[x] = acc[g][i];
            if (x + 1 >= 0 && x + 1 < (long long)p.out_cols) o[x + 1] = acc[g][i + 1];
        }
}

/* The groups input row r feeds: g with 0 <= r - Q g < nrho. */
template <int Q> __device__ __forceinline__ int lowest_group(int r, int nrho) { return r < nrho ? 0 : (r - nrho) / Q + 1; }
template <int Q, int G> __device__ __forceinline__ int highest_group(int r) { return min(G - 1, r / Q); }

#endif /* MH_WGMMA_ABSENT */

/* One block: WG warpgroups, each WROWS output rows of the block's 64 S columns, under one
 * another; they share the tile and the panels. */
template <int SL, int Q, int WG, int S, int PARTS>
__global__ void __launch_bounds__(128 * WG) conv2d_tc_kernel(const tc_params p)
{
#ifndef MH_WGMMA_ABSENT
    using T = tc_shape<SL, Q, WG, S>;
    extern __shared__ __align__(128) float smem[];
    const int tid = threadIdx.x, wg = tid / 128, nrho = p.krows + Q - 1;
    const tc_panels pn = panels_for(p.krows, Q, S);
    float *sb = smem;
    tile_elem<PARTS> *tile = reinterpret_cast<tile_elem<PARTS> *>(smem + pn.total_floats(SL, PARTS));
    const long long y0 = (long long)blockIdx.y * T::ROWS, x0 = (long long)blockIdx.x * T::STRIP;
    /* The tile starts d columns left of the block's first window, on a multiple of 4 so that its
     * loads can be 16 bytes (TW leaves room for d <= 3). */
    const int d = (int)(((x0 - p.lpc) % 4 + 4) % 4);
    for (int e = 4 * tid; e < pn.total_floats(SL, PARTS); e += 4 * T::THREADS) cp_async16(sb + e, p.toeplitz + e);
    load_split_tile<T::TW, T::THREADS, PARTS>(p, tile, y0 - p.lpr, x0 - p.lpc - d, T::ROWS + p.krows - 1);
    cp_async_wait_all();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); /* cp.async's writes, read by wgmma */
    __syncthreads();

    float acc[T::G][T::PART];
#pragma unroll
    for (int g = 0; g < T::G; ++g)
#pragma unroll
        for (int i = 0; i < T::PART; ++i) acc[g][i] = 0.0f;

    const tile_elem<PARTS> *xw = tile + (size_t)wg * T::WROWS * T::TW + d + S * (16 * (tid % 128 / 32) + tid % 32 / 4) + tid % 4;
    const unsigned lead = pn.panel_floats() * 4; /* a slice: two panels */
    const float *b0 = sb + 4 * S * (p.krows + Q - 2); /* B_0: U's column S (krows + Q - 2), 16 bytes a column */
    b_desc<S, PARTS> b;
#pragma unroll
    for (int q = 0; q < PARTS; ++q) b.part[q] = wgmma_desc(b0 + pn.at(SL, q, 0, 0, 0, 0), lead, 128);
    b.slice_step = 2 * lead / 16;
    const int nr = T::WROWS + p.krows - 1; /* input rows of the warpgroup */
    a_row<SL, PARTS> a0, a1;
    load_a<SL, S, PARTS>(xw, a0);
    /* two rows a turn, the A buffers trading places; past the last row the load of "the next"
     * repeats the last (a condition on it made the compiler copy every fragment) */
    for (int r = 0; r < nr; r += 2) {
        multiply_row<SL, Q, WG, S, PARTS>(r, lowest_group<Q>(r, nrho), highest_group<Q, T::G>(r), a0, b,
                                xw + min(r + 1, nr - 1) * T::TW, a1, acc);
        if (r + 1 < nr)
            multiply_row<SL, Q, WG, S, PARTS>(r + 1, lowest_group<Q>(r + 1, nrho), highest_group<Q, T::G>(r + 1), a1, b,
                                    xw + min(r + 2, nr - 1) * T::TW, a0, acc);
    }
    store_outputs<SL, Q, WG, S>(p, y0 + (long long)wg * T::WROWS, x0, acc);
#endif
}

/* ---- launch and registry ------------------------------------------------------------- */

/* outputs per A row for a filter kcols wide: 2 where that saves a slice (kcols = 7, 15, 23, 31:
 * 8 (S - 1) fewer of B's zeros for each output), else 4 (twice the outputs per A load) */
int slices_for(int kcols, int s) { return (kcols + s - 1 + 7) / 8; }
int outputs_per_row(int kcols) { return slices_for(kcols, 2) < slices_for(kcols, 4) ? 2 : 4; }
int slices_for(int kcols) { return slices_for(kcols, outputs_per_row(kcols)); }

/* Configurations: groups of Q = 4, 8 or 16 output rows (B S Q columns wide: fewer products and
 * A loads per output as Q grows, and more of B's zeros), one warpgroup a block or two sharing
 * the tile ("x2": less of the tile is halo, and twice the warps to cover each other's waits).
 * [0] "auto", from the H100's sweep (docs/conv2d.md has the table): q8 at one slice, q8x2 at two
 * or three, q16x2 from four; and q16x2 at one or three slices of S = 2 (kcols 6, 7 and 23) from
 * 13 filter rows. Why the last: with S = 2, Q = 8 makes B 16 columns wide, and wgmma m64n16k8
 * runs at 57% of the tensor rate where m64n32k8 (Q = 16) runs at 90% or more, which pays for
 * Q = 16's (krows + 15) / (krows + 7) more rows once krows passes ~12 (10-20% faster at 23 x 23
 * and 31 x 7). At two slices (kcols 14, 15) it does not: there q8x2 ties or wins by up to 7%. */
const char *const tc_configs[] = {"auto", "q4", "q8", "q16", "q4x2", "q8x2", "q16x2", NULL};

struct tc_choice {
    int q, wg;
};

/* the named configurations, tc_configs[1 ..] */
const tc_choice named_choices[] = {{4, 1}, {8, 1}, {16, 1}, {4, 2}, {8, 2}, {16, 2}};
static_assert(sizeof named_choices / sizeof named_choices[0] + 2 == sizeof tc_configs / sizeof tc_configs[0],
              "a choice for every name but auto");

/* auto's configuration for a krows x kcols filter, by the device's rules */
tc_choice auto_choice(const mh_auto_rules *r, int krows, int kcols)
{
    const int sl = slices_for(kcols);
    const bool wide_b = sl >= r->conv2d_tc_q16_from_slices ||
                        (sl != 2 && outputs_per_row(kcols) == 2 && krows >= r->conv2d_tc_q16_s2_from_rows);
    return wide_b ? tc_choice{16, 2} : sl >= 2 ? tc_choice{8, 2} : tc_choice{8, 1};
}

tc_choice choice_for(const mh_auto_rules *r, const mh_args *x)
{
    return x->config > 0 ? named_choices[x->config - 1] : auto_choice(r, (int)x->conv2d.krows, (int)x->conv2d.kcols);
}

/* Shared memory of a block: U's panels, then the split tile (8 or 16 bytes an element). */
template <int SL, int Q, int WG, int S, int PARTS> size_t smem_bytes(const mh_conv2d_args *a)
{
    using T = tc_shape<SL, Q, WG, S>;
    return (size_t)panels_for(a->krows, Q, S).total_floats(SL, PARTS) * sizeof(float) +
           (size_t)(T::ROWS + a->krows - 1) * T::TW * sizeof(tile_elem<PARTS>);
}

template <int SL, int Q, int S, int PARTS> size_t panels_bytes(int krows)
{
    return (size_t)panels_for(krows, Q, S).total_floats(SL, PARTS) * sizeof(float);
}

/* U's panels of the filter into `panels` (panels_bytes of them), queued on `stream`. */
template <int SL, int Q, int S, int PARTS>
cudaError_t make_panels(void *panels, const float *filter, int krows, int kcols, cudaStream_t stream)
{
    const tc_panels pn = panels_for(krows, Q, S);
    toeplitz_kernel<SL, Q, S, PARTS><<<(unsigned)mh_ceil_div((size_t)pn.columns * 8 * SL, 256), 256, 0, stream>>>(
        filter, krows, kcols, (float *)panels);
    return cudaGetLastError();
}

template <int SL, int Q, int WG, int S, int PARTS> mh_status run_shape(mh_context *ctx, const mh_conv2d_args *a)
{
    using T = tc_shape<SL, Q, WG, S>;
    tc_params p;
    p.in = a->in, p.out = a->out;
    p.rows = a->rows, p.cols = a->cols, p.out_rows = a->out_rows, p.out_cols = a->out_cols;
    p.krows = a->krows, p.lpr = a->lpr, p.lpc = a->lpc;
    const size_t smem = smem_bytes<SL, Q, WG, S, PARTS>(a);
    if (a->plan && a->plan->tc_panels && a->plan->tc_q == Q) { /* made with the plan, for this Q */
        p.toeplitz = (const float *)a->plan->tc_panels;
    } else {
        void *ws;
        MH_TRY(mh_workspace(ctx, panels_bytes<SL, Q, S, PARTS>(a->krows), &ws));
        MH_TRY(mh_cuda_status(ctx, make_panels<SL, Q, S, PARTS>(ws, a->filter, a->krows, a->kcols, mh_stream(ctx)),
                              "launching conv2d/tc toeplitz_kernel"));
        p.toeplitz = (const float *)ws;
    }
    const void *kernel = (const void *)conv2d_tc_kernel<SL, Q, WG, S, PARTS>;
    MH_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const dim3 grid((unsigned)mh_ceil_div(a->out_cols, T::STRIP), (unsigned)mh_ceil_div(a->out_rows, T::ROWS));
    conv2d_tc_kernel<SL, Q, WG, S, PARTS><<<grid, T::THREADS, smem, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "conv2d_tc_kernel");
}

/* Parts a value is split into: 3 (six products, tf32_split3) where the filter has fewer than
 * 121 taps, else 2 (three products). In a short sum the sum's own rounding does not hide each
 * product's 3xTF32 error (~2^-22 of it). H100, 517 x 300 same, wide data, 40 seeds, tc's error
 * over regtile's, p90 / worst: 5 x 5 2.93x / 4.04x with three products, 1.78x / 2.59x with six;
 * 8 x 15 1.54x / 1.98x and 1.05x / 1.71x; 11 x 11 with three 1.37x / 1.75x. Six products take
 * twice the time, and conv2d's auto never picks tc with six
 * (mh_conv2d_tc_favoured). */
int parts_for(const mh_conv2d_args *a) { return a->krows * a->kcols < 121 ? 3 : 2; }

/* The instance for a problem: S and SL from the filter's width, PARTS from its taps, Q and WG
 * from the configuration. f gets an empty tc_instance<SL, Q, WG, S, PARTS> and is called
 * once, in the branch that matches. */
template <int SL_, int Q_, int WG_, int S_, int PARTS_> struct tc_instance {
    static constexpr int SL = SL_, Q = Q_, WG = WG_, S = S_, PARTS = PARTS_;
};

template <int Q, int WG, int S, int PARTS, typename F> auto with_slices(int sl, F f)
{
    switch (sl) {
    case 1: return f(tc_instance<1, Q, WG, S, PARTS>{});
    case 2: return f(tc_instance<2, Q, WG, S, PARTS>{});
    case 3: return f(tc_instance<3, Q, WG, S, PARTS>{});
    case 4: return f(tc_instance<4, Q, WG, S, PARTS>{});
    default: return f(tc_instance<S == 2 ? 4 : 5, Q, WG, S, PARTS>{}); /* S = 2 needs 4 slices at most */
    }
}

template <int WG, int S, int PARTS, typename F> auto with_groups(int q, int sl, F f)
{
    switch (q) {
    case 4: return with_slices<4, WG, S, PARTS>(sl, f);
    case 16: return with_slices<16, WG, S, PARTS>(sl, f);
    default: return with_slices<8, WG, S, PARTS>(sl, f);
    }
}

template <int S, int PARTS, typename F> auto with_warpgroups(const tc_choice &c, int sl, F f)
{
    return c.wg == 2 ? with_groups<2, S, PARTS>(c.q, sl, f) : with_groups<1, S, PARTS>(c.q, sl, f);
}

template <int PARTS, typename F> auto with_outputs_per_row(int kcols, const tc_choice &c, F f)
{
    const int sl = slices_for(kcols);
    return outputs_per_row(kcols) == 2 ? with_warpgroups<2, PARTS>(c, sl, f) : with_warpgroups<4, PARTS>(c, sl, f);
}

template <typename F> auto with_instance(const mh_auto_rules *rules, const mh_args *x, F f)
{
    const tc_choice c = choice_for(rules, x);
    return parts_for(&x->conv2d) == 3 ? with_outputs_per_row<3>(x->conv2d.kcols, c, f)
                                      : with_outputs_per_row<2>(x->conv2d.kcols, c, f);
}

int tc_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    if (!mh_conv2d_zero_pad_only(a, why, len)) return 0;
    if (!mh_wgmma_device(ctx, why, len)) return 0;
    const size_t smem =
        with_instance(ctx->rules, x, [a](auto i) { return smem_bytes<i.SL, i.Q, i.WG, i.S, i.PARTS>(a); });
    const int rows = with_instance(ctx->rules, x, [](auto i) { return tc_shape<i.SL, i.Q, i.WG, i.S>::ROWS; });
    return mh_tile_fits(smem, a->out_rows, (size_t)rows, why, len);
}

/* The run of a problem of PARTS parts (parts_for). */
template <int PARTS> mh_status run_parts(mh_context *ctx, const mh_args *x)
{
    return with_outputs_per_row<PARTS>(x->conv2d.kcols, choice_for(ctx->rules, x), [ctx, x](auto i) {
        return run_shape<i.SL, i.Q, i.WG, i.S, i.PARTS>(ctx, &x->conv2d);
    });
}

} // namespace

/* The kernels are built in two translation units, so that no compile is long (all of them in one
 * were the library's longest compile, 92 s on the H200 machine's build): conv2d_tc_parts3.cu
 * includes this file with MH_CONV2D_TC_PARTS3_UNIT set and builds the instances of three parts;
 * this unit builds those of two and the host code. */
mh_status mh_conv2d_tc_run_parts3(mh_context *ctx, const mh_args *x);
#ifdef MH_CONV2D_TC_PARTS3_UNIT
mh_status mh_conv2d_tc_run_parts3(mh_context *ctx, const mh_args *x) { return run_parts<3>(ctx, x); }
#else

namespace {

mh_status tc_run(mh_context *ctx, const mh_args *x)
{
    return parts_for(&x->conv2d) == 3 ? mh_conv2d_tc_run_parts3(ctx, x) : run_parts<2>(ctx, x);
}

} // namespace

/* conv2d's auto puts tc first where this holds (src/api/conv2d.c). Of the multiply-adds tc's
 * auto configuration runs, (krows + Q - 1) L an output, the useful krows kcols make a share,
 * and the device's rules (src/core/auto_rules.h) say how large it must be:
 * - from conv2d_tc_any_taps_outputs outputs, no share: every filter of 121 taps or more (from
 *   the size where fft-tile comes first for such filters, this no longer decides anything);
 * - from conv2d_tc_min_outputs, at least conv2d_tc_min_taps taps (a filter of one slice at
 *   S = 2, 6 or 7 columns, conv2d_tc_one_slice_min_taps: its tall ones run 1.06x to 1.39x
 *   faster than regtile on the H100 from 256^2 to 512^2) and a share that depends on the
 *   configuration: with S = 4 outputs an A row conv2d_tc_share_s4_q8 or _s4_q16 (Q = 16's
 *   products run nearer the tensor rate), with S = 2 (twice the A loads an output) _s2_q8,
 *   _s2_q16, _s2_q16_one_slice;
 * - below conv2d_tc_min_outputs, or below 121 taps (six products, parts_for: they lose by 2x to
 *   4x on the H100), never.
 * docs/conv2d.md "How auto chooses" has the H100's sweeps and what each threshold separates. */
static double share_needed(const mh_auto_rules *r, int s, int q, int sl)
{
    if (s == 4) return q == 16 ? r->conv2d_tc_share_s4_q16 : r->conv2d_tc_share_s4_q8;
    if (q == 16) return sl == 1 ? r->conv2d_tc_share_s2_q16_one_slice : r->conv2d_tc_share_s2_q16;
    return r->conv2d_tc_share_s2_q8;
}

MH_EXTERN_C int mh_conv2d_tc_favoured(const mh_auto_rules *r, const mh_conv2d_args *a, char *why, size_t len)
{
    const double outputs = (double)a->out_rows * (double)a->out_cols, taps = (double)(a->krows * a->kcols);
    if (parts_for(a) == 3) {
        if (why) snprintf(why, len, "%.0f taps, under 121: tc would run six products a slice and loses by 2x to 4x", taps);
        return 0;
    }
    if (outputs < r->conv2d_tc_min_outputs) {
        if (why) snprintf(why, len, "%.0f outputs, under %.0f (conv2d_tc_min_outputs)", outputs, r->conv2d_tc_min_outputs);
        return 0;
    }
    if (outputs >= r->conv2d_tc_any_taps_outputs) {
        if (why)
            snprintf(why, len, "%.0f outputs, at least %.0f (conv2d_tc_any_taps_outputs), and %.0f taps, at least 121",
                     outputs, r->conv2d_tc_any_taps_outputs, taps);
        return 1;
    }
    const int sl = slices_for((int)a->kcols), s = outputs_per_row((int)a->kcols);
    const bool one_slice = sl == 1 && s == 2;
    const double min_taps = one_slice ? r->conv2d_tc_one_slice_min_taps : r->conv2d_tc_min_taps;
    if (taps < min_taps) {
        if (why)
            snprintf(why, len, "%.0f outputs, under %.0f (conv2d_tc_any_taps_outputs), and %.0f taps, under %.0f (%s)",
                     outputs, r->conv2d_tc_any_taps_outputs, taps, min_taps,
                     one_slice ? "conv2d_tc_one_slice_min_taps" : "conv2d_tc_min_taps");
        return 0;
    }
    const tc_choice c = auto_choice(r, (int)a->krows, (int)a->kcols);
    const double share = taps / ((double)(a->krows + c.q - 1) * 8 * sl), needed = share_needed(r, s, c.q, sl);
    if (why)
        snprintf(why, len, "tc's useful share of its tensor work at S = %d, Q = %d, %d slice%s: %.2f, %s the %.2f needed",
                 s, c.q, sl, sl == 1 ? "" : "s", share, share >= needed ? "at least" : "under", needed);
    return share >= needed;
}

namespace {

const char *tc_config_for(const mh_context *ctx, const mh_args *x)
{
    const tc_choice c = choice_for(ctx->rules, x);
    for (size_t i = 0; i < sizeof named_choices / sizeof named_choices[0]; ++i)
        if (named_choices[i].q == c.q && named_choices[i].wg == c.wg) return tc_configs[i + 1];
    return tc_configs[0];
}

const mh_row rows[] = {
    {{"conv2d/tc", MH_OP_CONV2D, MH_BACKEND_CUDA, 12, "global+shared+registers+tensor", "ours",
      "3xTF32 wgmma: 64 input-row windows times a Toeplitz matrix of Q filter rows, summed over input rows"},
     tc_supports, tc_run, tc_configs, 0, MH_LIB_NONE, tc_config_for},
};

} // namespace

/* The panels of auto's configuration, for a plan. */
static mh_args auto_problem(int krows, int kcols)
{
    mh_args x = {};
    x.config = 0, x.conv2d.krows = (size_t)krows, x.conv2d.kcols = (size_t)kcols;
    return x;
}

size_t mh_conv2d_tc_panels_bytes(const mh_auto_rules *r, int krows, int kcols, int *q)
{
    const mh_args x = auto_problem(krows, kcols);
    *q = choice_for(r, &x).q;
    return with_instance(r, &x, [krows](auto i) { return panels_bytes<i.SL, i.Q, i.S, i.PARTS>(krows); });
}

int mh_conv2d_tc_panels(const mh_auto_rules *r, void *panels, const float *filter, int krows, int kcols, void *stream)
{
    const mh_args x = auto_problem(krows, kcols);
    return (int)with_instance(r, &x, [=](auto i) {
        return make_panels<i.SL, i.Q, i.S, i.PARTS>(panels, filter, krows, kcols, (cudaStream_t)stream);
    });
}

MH_ROW_GROUP(mh_conv2d_tc_rows, rows)
#endif

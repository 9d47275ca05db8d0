/* conv1d/fft-fused: ours, overlap-save with the FFT done on chip, no cuFFT.
 *
 * fft-os moves every segment through global memory five times (gather, R2C, multiply, C2R,
 * compact). Here one block owns two consecutive segments of one signal and does everything
 * in shared memory: global traffic is the input (read about L / hop times, mostly from L2)
 * and the outputs, once.
 *
 *  - Two real segments in one complex FFT: z = x_a + i x_b. The mask is real, so
 *    IFFT(FFT(z) . conj(M)) = y_a + i y_b with y_a, y_b the two real correlations.
 *  - Stockham FFT in place in shared memory: radix-4 passes (a radix-2 pass last when
 *    log2 L is odd); each pass reads its four inputs into registers, waits at a barrier,
 *    writes its four outputs in sorted order, waits again. Twiddles come from a table made
 *    once per call in double precision (exp(-2 pi i m / L), m < L), read through L1.
 *  - The inverse as conj(FFT(conj(.))): the product with H = conj(M) / L and the conj fuse
 *    into one sweep between the two forward FFTs.
 *  - H, the masks' spectra, are made by the same block FFT in a small kernel per call.
 *
 * L is 2048, 4096 or 8192 complex samples (16, 32, 64 KB of shared memory); a mask longer
 * than L / 2 + 1 of the longest is refused (fft-os takes it).
 *
 * "reg4096" keeps the 4096 points in registers instead: three radix-16 passes with two
 * shared-memory exchanges per transform (fft4096.cuh), the product with H taken in the
 * forward transform's digit-reversed order, and the inverse reading that order directly. Per
 * block it moves 256 KB through shared memory where the Stockham L4096 moves 768 KB plus 96
 * KB of twiddle loads. "reg8192" runs two of those transforms side by side in a block of 512
 * threads, joined by a radix-2 step (fft8192.cuh). "real8192" packs one real 8192-point
 * segment into the same 4096-point complex transform (z[m] = x[2m] + i x[2m+1]) and pairs
 * frequencies f and -f in one more exchange (fft_real8192.cuh): 1.5x reg4096's outputs per
 * transform at k = 2047. "auto" chooses among them by k and size (resolved()).
 *
 * Edge blocks read past the signal's ends through edge_load: zeros for mh_conv1d, the
 * boundary mode's values (border_ldg, tile_io.cuh) for mh_conv1d_mode, each convolve kernel
 * instantiated both ways; blocks away from the ends take the unguarded loads either way.
 *
 * The register kernels start while their spectrum kernel runs (programmatic dependent
 * launch, below). As with any FFT method a NaN or Inf input spreads over the segments of its
 * block, never into another signal. */
#include "common.cuh"
#include "fft4096.cuh"
#include "fft8192.cuh"
#include "fft_real8192.cuh"
#include "tile_io.cuh"

#include <stdio.h>
#include <string.h>

static const size_t MAX_SPECTRA_BYTES = (size_t)256 << 20; /* masks' spectra per launch */

/* L = 8192 runs 1024 threads (two butterflies each per pass): 64 registers, no spills. Two
 * 512-thread blocks would fit shared memory too, but at 68 registers only one did, and
 * bounding them to 64 spilled 168 bytes. */

static __device__ __forceinline__ float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

static __device__ __forceinline__ float2 cadd(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
static __device__ __forceinline__ float2 csub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }

/* One Stockham pass of radix R (4 or 2) over L points with sub-transform size ns. Butterfly j
 * reads z[j + r L / R], twiddles input r by w^(r (j mod ns) L / (ns R)), and writes output r
 * to z[(j - j mod ns) R + j mod ns + r ns]. */
template <int L, int T, int R>
static __device__ __forceinline__ void stockham_pass(float2 *z, const float2 *__restrict__ tw, int ns)
{
    constexpr int B = L / R / T; /* butterflies per thread */
    float2 v[B][R];
#pragma unroll
    for (int q = 0; q < B; ++q)
#pragma unroll
        for (int r = 0; r < R; ++r) v[q][r] = z[threadIdx.x + q * T + r * (L / R)];
    __syncthreads();
#pragma unroll
    for (int q = 0; q < B; ++q) {
        const int j = threadIdx.x + q * T, jm = j & (ns - 1), step = jm * (L / (ns * R));
#pragma unroll
        for (int r = 1; r < R; ++r) v[q][r] = cmul(v[q][r], __ldg(tw + r * step));
        float2 o[R];
        if constexpr (R == 4) {
            const float2 a0 = cadd(v[q][0], v[q][2]), a1 = csub(v[q][0], v[q][2]);
            const float2 a2 = cadd(v[q][1], v[q][3]), d = csub(v[q][1], v[q][3]);
            const float2 a3 = make_float2(d.y, -d.x); /* (v1 - v3) * -i */
            o[0] = cadd(a0, a2), o[2] = csub(a0, a2), o[1] = cadd(a1, a3), o[3] = csub(a1, a3);
        } else {
            o[0] = cadd(v[q][0], v[q][1]), o[1] = csub(v[q][0], v[q][1]);
        }
        const int base = (j - jm) * R + jm;
#pragma unroll
        for (int r = 0; r < R; ++r) z[base + r * ns] = o[r];
    }
    __syncthreads();
}

/* Forward DFT of the L points in z (shared memory), in place; every thread of the block. */
template <int LOG2L, int T>
static __device__ void block_fft(float2 *z, const float2 *__restrict__ tw)
{
    constexpr int L = 1 << LOG2L;
    int ns = 1;
#pragma unroll
    for (int p = 0; p < LOG2L / 2; ++p, ns *= 4) stockham_pass<L, T, 4>(z, tw, ns);
    if constexpr (LOG2L & 1) stockham_pass<L, T, 2>(z, tw, ns);
}

/* tw[m] = exp(-2 pi i m / len), in double. */
static __global__ void twiddle_kernel(float2 *tw, int len)
{
    for (int m = blockIdx.x * blockDim.x + threadIdx.x; m < len; m += gridDim.x * blockDim.x) {
        double s, c;
        sincospi(-2.0 * (double)m / (double)len, &s, &c);
        tw[m] = make_float2((float)c, (float)s);
    }
}

/* h[b] = conj(FFT(mask b zero-padded to L)) / L for the masks of this launch (blockIdx.x). */
template <int LOG2L, int T>
static __global__ void __launch_bounds__(T) spectrum_kernel(float2 *h, const float *mask, size_t k, size_t mask_stride,
                                                            const float2 *__restrict__ tw)
{
    constexpr int L = 1 << LOG2L;
    extern __shared__ __align__(16) float2 z[];
    const float *m = mask + (size_t)blockIdx.x * mask_stride;
    for (int t = threadIdx.x; t < L; t += T) z[t] = make_float2(t < (int)k ? m[t] : 0.0f, 0.0f);
    __syncthreads();
    block_fft<LOG2L, T>(z, tw);
    float2 *out = h + (size_t)blockIdx.x * L;
    for (int f = threadIdx.x; f < L; f += T) out[f] = make_float2(z[f].x / L, -z[f].y / L);
}

typedef struct fused_geometry {
    size_t n, out_n, lpad, mask_step; /* mask_step: L for one spectrum per signal, 0 for one in all */
    long long hop, segs;
    long long extent;   /* samples the windows read, from -lpad: out_n + k - 1 (zeros past them) */
    tile_border border; /* what the loads read past the signal's ends: zeros or a boundary mode */
} fused_geometry;

/* x[p] in an edge block: past the signal's ends zero, or (BORDERED, mh_conv1d_mode) the boundary
 * mode's value where a window reads it and zero elsewhere, so that a segment longer than a short
 * signal's extension (or real8192's one sample of alignment before it) holds no value the
 * outputs do not need: the transform's error scales with the segment's norm, the normwise bound
 * with the norm of what the windows read (a constant of 2.5 beside one sample of 0.007 cost that
 * sample 500 ulp). Every convolve kernel is instantiated both ways, so that the mode's mapping
 * adds no code to the zero-padded kernels (in real8192 it cost a spill and ~20% of the time). */
template <bool BORDERED>
static __device__ __forceinline__ float edge_load(const float *x, const fused_geometry &g, long long p)
{
    if (BORDERED) {
        const long long from_first = p + (long long)g.lpad; /* 0 at the first sample a window reads */
        return from_first >= 0 && from_first < g.extent ? border_ldg(x, (long long)g.n, p, g.border) : 0.0f;
    }
    return p >= 0 && p < (long long)g.n ? __ldg(x + p) : 0.0f;
}

/* Segments 2 blockIdx.x and 2 blockIdx.x + 1 of signal blockIdx.y (of this launch). */
template <int LOG2L, int T, bool BORDERED>
static __global__ void __launch_bounds__(T) fused_kernel(const float *in, float *out, const float2 *h,
                                                         const float2 *__restrict__ tw, fused_geometry g)
{
    constexpr int L = 1 << LOG2L;
    extern __shared__ __align__(16) float2 z[];
    const float *x = in + blockIdx.y * g.n;
    float *y = out + blockIdx.y * g.out_n;
    const float2 *hb = h + blockIdx.y * g.mask_step;
    const long long s0 = 2LL * blockIdx.x, start_a = s0 * g.hop - (long long)g.lpad, start_b = start_a + g.hop;
    const bool has_b = s0 + 1 < g.segs;
    for (int t = threadIdx.x; t < L; t += T) {
        const long long pa = start_a + t, pb = start_b + t;
        const float a = edge_load<BORDERED>(x, g, pa);
        const float b = has_b ? edge_load<BORDERED>(x, g, pb) : 0.0f;
        z[t] = make_float2(a, b);
    }
    __syncthreads();
    block_fft<LOG2L, T>(z, tw);
    for (int f = threadIdx.x; f < L; f += T) { /* conj(Z H): the inverse through a forward FFT */
        const float2 p = cmul(z[f], __ldg(hb + f));
        z[f] = make_float2(p.x, -p.y);
    }
    __syncthreads();
    block_fft<LOG2L, T>(z, tw);
    /* y = conj(W): segment a is W's real part, segment b minus its imaginary part */
    const long long oa = s0 * g.hop, ob = oa + g.hop;
    for (int i = threadIdx.x; i < g.hop; i += T) {
        if (oa + i < (long long)g.out_n) y[oa + i] = z[i].x;
        if (has_b && ob + i < (long long)g.out_n) y[ob + i] = -z[i].y;
    }
}

/* ---- the register kernels' shared step (reg4096, reg8192): 16 values a thread, lane `lane`
 * of a 256-wide slice of the transform. (Their product with the mask's spectrum stays written
 * out in each kernel: as a shared function it moved fused8192_kernel from 86 to 89 registers,
 * and its spills, in a kernel tuned on the H100 that could not be re-measured.) ---------------- */

/* Programmatic dependent launch (common.cuh: mh_let_next_grid_start, mh_wait_for_previous_grid):
 * a spectrum kernel lets the convolution kernel after it start at once, whose blocks load their
 * input and run the forward transform before they wait (the spectrum grid complete, its writes
 * visible) and read the spectra. Why: one mask's spectrum is one block on one SM, and every call
 * used to wait for it (~4-8 us on the H100 against a 75-90 us convolution at n = 16M). Nothing
 * the convolution kernel reads before the wait is written by the spectrum kernel: the twiddle
 * tables are compile-time constants (fft4096_twiddles, fft8192_twiddles). The spectra are read
 * after the wait with ld.global.cg (__ldcg), not __ldg: a non-coherent load promises data
 * that no one writes while the kernel runs, which is not so here, and with __ldg the H100
 * returned stale spectra at n >= 16M (wrong outputs in the bench, mid-signal too). */

/* A mask's spectrum as the convolution kernels read it: conj(v) / L. */
static __device__ __forceinline__ void store_mask_spectrum(float2 *out, const float2 (&v)[16], int lane, float L)
{
#pragma unroll
    for (int j = 0; j < 16; ++j) out[j * 256 + lane] = make_float2(v[j].x / L, -v[j].y / L);
}

/* The spectrum kernels' start: let the convolution kernel launch (it waits before reading the
 * spectra), start copying the twiddle table (the kernel's barrier comes after its mask loads),
 * and return this block's mask. */
static __device__ __forceinline__ const float *start_spectrum(float2 *table, const float *mask, size_t mask_stride)
{
    mh_let_next_grid_start();
    fft_load_table(table, fft4096_twiddles.w, FFT4096_TWIDDLE_FLOATS2);
    return mask + (size_t)blockIdx.x * mask_stride;
}

/* ---- reg4096: the 4096-point FFT in registers ------------------------------------------- */

/* h[b] = conj(FFT(mask b zero-padded to 4096)) / 4096, in fft4096_forward's order. */
static __global__ void __launch_bounds__(FFT4096_THREADS) spectrum4096_kernel(float2 *h, const float *mask, size_t k,
                                                                              size_t mask_stride)
{
    __shared__ float2 s[FFT4096_SMEM_FLOATS2], table[FFT4096_TWIDDLE_FLOATS2];
    const float *m = start_spectrum(table, mask, mask_stride);
    const int t = threadIdx.x;
    float2 v[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = make_float2(j * 256 + t < (int)k ? m[j * 256 + t] : 0.0f, 0.0f);
    __syncthreads(); /* the table */
    fft4096_forward(v, s, fft4096_table_twiddles{table}, t);
    float2 *out = h + (size_t)blockIdx.x * 4096;
    store_mask_spectrum(out, v, t, 4096.0f);
}

/* Segments 2 blockIdx.x and 2 blockIdx.x + 1 of signal blockIdx.y, as fused_kernel. MINB
 * blocks per SM: 4 (64 registers, no spills) is about 3.5% faster than 3 (79 registers) at
 * n = 16M, k = 2047 on the H100: the extra block hides more of the shared-memory latency. */
template <int MINB, bool BORDERED>
static __global__ void __launch_bounds__(FFT4096_THREADS, MINB) fused4096_kernel(const float *in, float *out,
                                                                                 const float2 *h,
                                                                                 fused_geometry g)
{
    __shared__ float2 s[FFT4096_SMEM_FLOATS2], table[FFT4096_TWIDDLE_FLOATS2];
    const fft4096_table_twiddles tw = fft4096_shared_twiddles(table);
    const float *x = in + blockIdx.y * g.n;
    float *y = out + blockIdx.y * g.out_n;
    const float2 *hb = h + blockIdx.y * g.mask_step;
    const long long s0 = 2LL * blockIdx.x, start_a = s0 * g.hop - (long long)g.lpad, start_b = start_a + g.hop;
    const bool has_b = s0 + 1 < g.segs;
    const int t = threadIdx.x;
    float2 v[16];
    if (has_b && start_a >= 0 && start_b + 4096 <= (long long)g.n) { /* most blocks: no edge */
#pragma unroll
        for (int j = 0; j < 16; ++j) v[j] = make_float2(__ldg(x + start_a + j * 256 + t), __ldg(x + start_b + j * 256 + t));
    } else {
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const long long pa = start_a + j * 256 + t, pb = start_b + j * 256 + t;
            v[j].x = edge_load<BORDERED>(x, g, pa);
            v[j].y = has_b ? edge_load<BORDERED>(x, g, pb) : 0.0f;
        }
    }
    fft4096_forward(v, s, tw, t);
    mh_wait_for_previous_grid(); /* the spectra */
#pragma unroll
    for (int j = 0; j < 16; ++j) { /* conj(Z H): the inverse through a forward FFT */
        const float2 p = fft_cmul(v[j], __ldcg(hb + j * 256 + t));
        v[j] = make_float2(p.x, -p.y);
    }
    /* no barrier: the inverse first writes where this thread last read (its row of s) */
    fft4096_from_digit_reversed(v, s, tw, t);
    const long long oa = s0 * g.hop, ob = oa + g.hop;
    const bool whole = has_b && ob + g.hop <= (long long)g.out_n;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const long long i = j * 256 + t;
        if (i >= g.hop) break;
        if (whole) {
            y[oa + i] = v[j].x, y[ob + i] = -v[j].y;
        } else {
            if (oa + i < (long long)g.out_n) y[oa + i] = v[j].x;
            if (has_b && ob + i < (long long)g.out_n) y[ob + i] = -v[j].y;
        }
    }
}

/* ---- reg8192: 8192 points in registers, two fft4096 halves (fft8192.cuh) ------------------ */

enum { FUSED8192_SMEM_BYTES = (FFT8192_SMEM_FLOATS2 + FFT8192_TWIDDLE_FLOATS2) * sizeof(float2) };

/* h[b] = conj(FFT(mask b zero-padded to 8192)) / 8192 in fft8192_forward's layout (half h,
 * register j, lane u at 4096 h + 256 j + u). */
static __global__ void __launch_bounds__(FFT8192_THREADS) spectrum8192_kernel(float2 *h, const float *mask, size_t k,
                                                                              size_t mask_stride)
{
    extern __shared__ __align__(16) float2 s[];
    float2 *table = s + FFT8192_SMEM_FLOATS2;
    mh_let_next_grid_start();
    fft_load_table(table, fft8192_twiddles.w, FFT8192_TWIDDLE_FLOATS2);
    __syncthreads();
    const fft4096_table_twiddles tw = {table};
    const float *m = mask + (size_t)blockIdx.x * mask_stride;
    const int half = threadIdx.x >> 8, u = threadIdx.x & 255;
    float2 v[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const int i = j * 256 + u;
        v[j] = fft8192_fold(make_float2(i < (int)k ? m[i] : 0.0f, 0.0f),
                            make_float2(i + 4096 < (int)k ? m[i + 4096] : 0.0f, 0.0f));
    }
    fft8192_forward(v, s, tw, table);
    float2 *out = h + (size_t)blockIdx.x * 8192 + half * 4096;
    store_mask_spectrum(out, v, u, 8192.0f);
}

/* Segments 2 blockIdx.x and 2 blockIdx.x + 1 of signal blockIdx.y, as fused4096_kernel;
 * MINB blocks per SM. */
template <int MINB, bool BORDERED>
static __global__ void __launch_bounds__(FFT8192_THREADS, MINB) fused8192_kernel(const float *in, float *out,
                                                                                 const float2 *h,
                                                                                 fused_geometry g)
{
    extern __shared__ __align__(16) float2 s[];
    float2 *table = s + FFT8192_SMEM_FLOATS2;
    fft_load_table(table, fft8192_twiddles.w, FFT8192_TWIDDLE_FLOATS2);
    __syncthreads();
    const fft4096_table_twiddles tw = {table};
    const float *x = in + blockIdx.y * g.n;
    float *y = out + blockIdx.y * g.out_n;
    const int half = threadIdx.x >> 8, u = threadIdx.x & 255;
    const float2 *hb = h + blockIdx.y * g.mask_step + half * 4096;
    const long long s0 = 2LL * blockIdx.x, start_a = s0 * g.hop - (long long)g.lpad, start_b = start_a + g.hop;
    const bool has_b = s0 + 1 < g.segs;
    /* Every thread loads both x[m] and x[m + 4096] of both segments itself: 64 loads a
     * thread, the load queue throttling (ncu at n = 16M, k = 2047: lg_throttle 15% of stalls,
     * issue active 53%). Staging the input through shared memory to load each float once
     * moves the stall to mio_throttle and is ~6% slower at 64 x 1M, k = 4095. */
    float2 v[16];
    if (has_b && start_a >= 0 && start_b + 8192 <= (long long)g.n) { /* most blocks: no edge */
        const float *xa = x + start_a + u, *xb = x + start_b + u;
#pragma unroll
        for (int j = 0; j < 16; ++j)
            v[j] = fft8192_fold(make_float2(__ldg(xa + j * 256), __ldg(xb + j * 256)),
                                make_float2(__ldg(xa + 4096 + j * 256), __ldg(xb + 4096 + j * 256)));
    } else { /* through shared memory: guarding 64 loads in registers spilled */
        for (int t = threadIdx.x; t < 8192; t += FFT8192_THREADS) {
            const long long pa = start_a + t, pb = start_b + t;
            s[t] = make_float2(edge_load<BORDERED>(x, g, pa), has_b ? edge_load<BORDERED>(x, g, pb) : 0.0f);
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < 16; ++j) v[j] = fft8192_fold(s[j * 256 + u], s[4096 + j * 256 + u]);
        __syncthreads(); /* fft8192_forward writes s first */
    }
    fft8192_forward(v, s, tw, table);
    mh_wait_for_previous_grid(); /* the spectra */
#pragma unroll
    for (int j = 0; j < 16; ++j) { /* conj(Z H): the inverse through a forward FFT */
        const float2 p = fft_cmul(v[j], __ldcg(hb + j * 256 + u));
        v[j] = make_float2(p.x, -p.y);
    }
    /* no barrier: the inverse first writes where this thread last read (its row of its half) */
    fft8192_from_split(v, s, tw, table);
    /* outputs i = 4096 half + 256 j + u < hop of both segments */
    const long long first = s0 * g.hop + half * 4096 + u;
    const long long count_a = min(g.hop, (long long)g.out_n - s0 * g.hop) - half * 4096 - u;
    const long long count_b = has_b ? min(g.hop, (long long)g.out_n - (s0 + 1) * g.hop) - half * 4096 - u : 0;
    float *ya = y + first, *yb = ya + g.hop;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        if (j * 256 < count_a) ya[j * 256] = v[j].x;
        if (j * 256 < count_b) yb[j * 256] = -v[j].y;
    }
}

/* ---- real8192: one real 8192-point segment a block, one 4096-point complex FFT each way
 * (fft_real8192.cuh) ---------------------------------------------------------------------- */

/* The filter pairs (conj A / 4096, conj B / 4096) of each mask zero-padded to 8192, in
 * fft4096_forward's order (float4 at 256 j + t). */
static __global__ void __launch_bounds__(FFT4096_THREADS) spectrum_real8192_kernel(float2 *h, const float *mask,
                                                                                   size_t k, size_t mask_stride)
{
    __shared__ float2 s[FFT4096_SMEM_FLOATS2], table[FFT4096_TWIDDLE_FLOATS2];
    const float *m = start_spectrum(table, mask, mask_stride);
    const int t = threadIdx.x;
    float2 v[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const int i = 2 * (j * 256 + t);
        v[j] = make_float2(i < (int)k ? m[i] : 0.0f, i + 1 < (int)k ? m[i + 1] : 0.0f);
    }
    __syncthreads(); /* the table */
    fft4096_forward(v, s, fft4096_table_twiddles{table}, t);
    fft4096_publish(v, s, t);
    __syncthreads();
    const int base = fft4096_partner_base(t);
    float4 *out = reinterpret_cast<float4 *>(h + (size_t)blockIdx.x * 8192);
#pragma unroll
    for (int j = 0; j < 16; ++j)
        out[j * 256 + t] = real8192_filter(v[j], fft4096_partner(s, base, j), (t >> 4) + 16 * (t & 15) + 256 * j);
}

/* Segment blockIdx.x of signal blockIdx.y: input from out0 - lpad, outputs out0 .. out0 + hop
 * (hop even, so every block of a signal sees the same alignment). The segment starts `shift`
 * (0 or 1) samples early so that x[2m], x[2m + 1] is one 8-byte load; circular position p
 * then holds output out0 + p - shift, hence hop <= 8192 - k. BORDERED: as edge_load; with it
 * the kernel runs 3 blocks an SM (80 registers), where 4 spilled. */
template <bool BORDERED>
static __global__ void __launch_bounds__(FFT4096_THREADS, BORDERED ? 3 : 4) real8192_kernel(const float *in, float *out,
                                                                             const float2 *h,
                                                                             fused_geometry g)
{
    __shared__ float2 s[FFT4096_SMEM_FLOATS2], table[FFT4096_TWIDDLE_FLOATS2];
    fft_load_table(table, fft4096_twiddles.w, FFT4096_TWIDDLE_FLOATS2);
    __syncthreads();
    const fft4096_table_twiddles tw = {table};
    const float *x = in + blockIdx.y * g.n;
    float *y = out + blockIdx.y * g.out_n;
    const float4 *hb = reinterpret_cast<const float4 *>(h + blockIdx.y * g.mask_step);
    const long long out0 = (long long)blockIdx.x * g.hop, start = out0 - (long long)g.lpad;
    const int shift = (int)(((uintptr_t)x / sizeof(float) + (unsigned long long)start) & 1);
    const long long first = start - shift; /* x[first] is 8-byte aligned */
    const int t = threadIdx.x;
    float2 v[16];
    if (first >= 0 && first + 8192 <= (long long)g.n) { /* most blocks: no edge */
        const float2 *xz = reinterpret_cast<const float2 *>(x + first) + t;
#pragma unroll
        for (int j = 0; j < 16; ++j) v[j] = __ldg(xz + j * 256);
    } else { /* samples lo .. hi - 1 of the segment exist (32-bit: 64-bit guards spilled) */
        const int lo = (int)max(-first, 0LL), hi = (int)min((long long)g.n - first, 8192LL);
        const float *xs = x + first;
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const int q = 2 * (j * 256 + t);
            if (BORDERED) {
                v[j].x = q >= lo && q < hi ? __ldg(xs + q) : edge_load<true>(x, g, first + q);
                v[j].y = q + 1 >= lo && q + 1 < hi ? __ldg(xs + q + 1) : edge_load<true>(x, g, first + q + 1);
            } else {
                v[j].x = q >= lo && q < hi ? __ldg(xs + q) : 0.0f;
                v[j].y = q + 1 >= lo && q + 1 < hi ? __ldg(xs + q + 1) : 0.0f;
            }
        }
    }
    fft4096_forward(v, s, tw, t);
    fft4096_publish(v, s, t);
    __syncthreads();
    const int base = fft4096_partner_base(t);
    mh_wait_for_previous_grid(); /* the filter */
#pragma unroll
    for (int j = 0; j < 16; ++j) v[j] = real8192_apply(v[j], fft4096_partner(s, base, j), __ldcg(hb + j * 256 + t));
    __syncthreads(); /* every partner read is done before the inverse writes s */
    fft4096_from_digit_reversed(v, s, tw, t);
    /* register j holds conj(z'[m]), m = 256 j + t: outputs out0 + 2m - shift and the next */
    const int count = (int)min(g.hop, (long long)g.out_n - out0);
    const bool paired = (((uintptr_t)y / sizeof(float) + (unsigned long long)(out0 - shift)) & 1) == 0;
    float *yb = y + out0;
    if (paired && shift == 0 && count == g.hop) { /* most blocks: whole pairs, 8-byte stores */
        float2 *yz = reinterpret_cast<float2 *>(yb) + t;
#pragma unroll
        for (int j = 0; j < 16; ++j)
            if (2 * (j * 256 + t) < count) yz[j * 256] = make_float2(v[j].x, -v[j].y);
        return;
    }
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const int i = 2 * (j * 256 + t) - shift;
        if (paired && i >= 0 && i + 1 < count) {
            *reinterpret_cast<float2 *>(yb + i) = make_float2(v[j].x, -v[j].y);
        } else {
            if (i >= 0 && i < count) yb[i] = v[j].x;
            if (i + 1 >= 0 && i + 1 < count) yb[i + 1] = -v[j].y;
        }
    }
}

/* ---- lengths, launch, registry ----------------------------------------------------------- */

/* Configurations: "reg4096" (fft4096.cuh), "reg8192" (fft8192.cuh), "real8192"
 * (fft_real8192.cuh), or the Stockham FFT at L = 2048, 4096, 8192; "auto": resolved(). The
 * Stockham kernels are 2.6x slower than reg4096; the smaller segment wins over the larger one at
 * k = 2047 although 8192 does 22% less FFT work per output: 4096's blocks are a quarter the size,
 * more of them fit an SM, and 16M / 12292 outputs per reg8192 block leave a last wave 17% full
 * (docs/conv1d.md), so reg8192 runs only where reg4096 cannot hold the mask and real8192 does
 * not apply. "-occN": N blocks per SM in the launch bounds. */
static const char *const fused_configs[] = {"auto",  "reg4096", "reg4096-occ3", "L2048",    "L4096",
                                            "L8192", "reg8192", "reg8192-occ1", "real8192", NULL};
enum { CONFIG_AUTO, CONFIG_REG4096, CONFIG_REG4096_OCC3, CONFIG_L2048, CONFIG_L4096, CONFIG_L8192, CONFIG_REG8192,
       CONFIG_REG8192_OCC1, CONFIG_REAL8192 };

static int fits(const mh_conv1d_args *a, int log2l) { return a->k <= ((size_t)1 << log2l) / 2 + 1; }

/* The configuration "auto" stands for here, by the device's rules (conv1d_real8192_from_k; the
 * H100's from a grid of reg4096, reg8192 and real8192):
 *   k > 2049    real8192: it beats reg8192 in every cell of the grid (0.82x at n = 2^12 .. 0.98x
 *               at 2^20)
 *   k <= 2049   real8192 for one mask from the k the rule gives for the problem's samples: fewer
 *               blocks (hop 8192 - k against 2 (4097 - k)), each ~6% more work; reg4096
 *               elsewhere: its spectrum kernel is cheaper, which bounds small problems (9
 *               against 11 us), and per-signal masks pay that kernel per signal. */
static int resolved(const mh_auto_rules *r, const mh_conv1d_args *a, int config)
{
    if (config != CONFIG_AUTO) return config;
    if (!fits(a, 12)) return CONFIG_REAL8192;
    const double samples = (double)a->batch * (double)a->n;
    const double k_min = mh_auto_step(&r->conv1d_real8192_from_k, samples);
    return a->mask_stride == 0 && (double)a->k >= k_min ? CONFIG_REAL8192 : CONFIG_REG4096;
}

/* log2 of the segment length of this configuration */
static int log2_len(const mh_auto_rules *r, const mh_conv1d_args *a, int config)
{
    switch (resolved(r, a, config)) {
    case CONFIG_L2048: return 11;
    case CONFIG_REG4096: case CONFIG_REG4096_OCC3: case CONFIG_L4096: return 12;
    default: return 13;
    }
}

enum fused_fft { STOCKHAM, REG4096, REG8192, REAL8192 };

/* The FFT a (resolved) configuration runs. */
static fused_fft fft_of(int config)
{
    switch (config) {
    case CONFIG_REG4096: case CONFIG_REG4096_OCC3: return REG4096;
    case CONFIG_REG8192: case CONFIG_REG8192_OCC1: return REG8192;
    case CONFIG_REAL8192: return REAL8192;
    default: return STOCKHAM;
    }
}

/* Outputs per segment: L - k + 1, or for REAL8192 L - k rounded down to even (its segments
 * may start one sample early, and an even hop gives every block of a signal one alignment). */
static long long segment_hop(fused_fft fft, int log2l, size_t k)
{
    const long long room = (1LL << log2l) - (long long)k;
    return fft == REAL8192 ? room & ~1LL : room + 1;
}

/* Segments per block: REAL8192 transforms one real segment, the others two as one complex. */
static int segments_per_block(fused_fft fft) { return fft == REAL8192 ? 1 : 2; }

/* The kernels of one configuration: FFT kind, LOG2L, T threads, MINB blocks per SM. */
template <fused_fft FFT, int LOG2L, int T, int MINB>
static void fused_kernels(bool bordered, const void **spectrum, const void **convolve, size_t *smem)
{
    if constexpr (FFT == REG4096) {
        *spectrum = (const void *)spectrum4096_kernel, *smem = 0;
        *convolve = bordered ? (const void *)fused4096_kernel<MINB, true> : (const void *)fused4096_kernel<MINB, false>;
    } else if constexpr (FFT == REAL8192) {
        *spectrum = (const void *)spectrum_real8192_kernel, *smem = 0;
        *convolve = bordered ? (const void *)real8192_kernel<true> : (const void *)real8192_kernel<false>;
    } else if constexpr (FFT == REG8192) {
        *spectrum = (const void *)spectrum8192_kernel, *smem = FUSED8192_SMEM_BYTES;
        *convolve = bordered ? (const void *)fused8192_kernel<MINB, true> : (const void *)fused8192_kernel<MINB, false>;
    } else {
        *spectrum = (const void *)spectrum_kernel<LOG2L, T>, *smem = ((size_t)1 << LOG2L) * sizeof(float2);
        *convolve = bordered ? (const void *)fused_kernel<LOG2L, T, true> : (const void *)fused_kernel<LOG2L, T, false>;
    }
}

template <fused_fft FFT, int LOG2L, int T, int MINB = 1>
static mh_status fused_launch(mh_context *ctx, const mh_conv1d_args *a)
{
    constexpr int L = 1 << LOG2L;
    const void *spectrum, *convolve;
    size_t smem;
    fused_kernels<FFT, LOG2L, T, MINB>(a->bordered, &spectrum, &convolve, &smem);
    const size_t spectrum_bytes = (size_t)L * sizeof(float2);
    const size_t masks = a->mask_stride ? a->batch : 1;
    size_t per_launch = MAX_SPECTRA_BYTES / spectrum_bytes; /* signals (and spectra) per launch */
    if (per_launch > MH_MAX_GRID_YZ) per_launch = MH_MAX_GRID_YZ;
    const size_t spectra = masks < per_launch ? masks : per_launch;
    void *ws;
    /* the Stockham twiddle table first (the register FFTs' tables are compile-time constants) */
    const size_t table = FFT == STOCKHAM ? L : 0;
    MH_TRY(mh_workspace(ctx, spectrum_bytes * spectra + table * sizeof(float2), &ws));
    float2 *tw = (float2 *)ws, *h = tw + table;
    if (smem > 48 * 1024) {
        MH_CUDA_TRY(ctx, mh_allow_smem(spectrum));
        MH_CUDA_TRY(ctx, mh_allow_smem(convolve));
    }
    if constexpr (FFT == STOCKHAM) {
        twiddle_kernel<<<L / 256, 256, 0, mh_stream(ctx)>>>(tw, L);
        MH_TRY(MH_LAUNCH_CHECK(ctx, "fft-fused twiddle_kernel"));
    }
    fused_geometry g;
    g.n = a->n, g.out_n = a->out_n, g.lpad = a->lpad, g.mask_step = a->mask_stride ? (size_t)L : 0;
    g.border = a->bordered ? tile_border{(int)a->mode, a->cval} : zero_border;
    g.extent = (long long)(a->out_n + a->k - 1);
    g.hop = segment_hop(FFT, LOG2L, a->k);
    g.segs = ((long long)a->out_n + g.hop - 1) / g.hop;
    const unsigned blocks_x = (unsigned)((g.segs + segments_per_block(FFT) - 1) / segments_per_block(FFT));
    size_t k = a->k, mask_stride = a->mask_stride;
    for (size_t b0 = 0; b0 < a->batch; b0 += per_launch) {
        const size_t count = a->batch - b0 < per_launch ? a->batch - b0 : per_launch;
        const float *in = a->in + b0 * a->n, *mask = a->mask + b0 * a->mask_stride;
        float *out = a->out + b0 * a->out_n;
        if (a->mask_stride || b0 == 0) { /* one mask: its spectrum once */
            const unsigned blocks = (unsigned)(a->mask_stride ? count : 1);
            void *reg_args[] = {&h, &mask, &k, &mask_stride}, *stockham_args[] = {&h, &mask, &k, &mask_stride, &tw};
            MH_TRY(mh_launch(ctx, spectrum, blocks, 1, T, smem, FFT == STOCKHAM ? stockham_args : reg_args,
                          "fft-fused spectrum kernel"));
        }
        void *reg_args[] = {&in, &out, &h, &g}, *stockham_args[] = {&in, &out, &h, &tw, &g};
        MH_TRY(mh_launch(ctx, convolve, blocks_x, (unsigned)count, T, smem, FFT == STOCKHAM ? stockham_args : reg_args,
                      "fft-fused kernel", FFT != STOCKHAM));
    }
    return MH_OK;
}

static mh_status fused_run(mh_context *ctx, const mh_args *args)
{
    const mh_conv1d_args *a = &args->conv1d;
    switch (resolved(ctx->rules, a, args->config)) {
    case CONFIG_REG4096: return fused_launch<REG4096, 12, FFT4096_THREADS, 4>(ctx, a);
    case CONFIG_REG4096_OCC3: return fused_launch<REG4096, 12, FFT4096_THREADS, 3>(ctx, a);
    case CONFIG_REG8192: return fused_launch<REG8192, 13, FFT8192_THREADS, 2>(ctx, a);
    case CONFIG_REG8192_OCC1: return fused_launch<REG8192, 13, FFT8192_THREADS, 1>(ctx, a);
    case CONFIG_REAL8192: return fused_launch<REAL8192, 13, FFT4096_THREADS>(ctx, a);
    case CONFIG_L2048: return fused_launch<STOCKHAM, 11, 128>(ctx, a);
    case CONFIG_L4096: return fused_launch<STOCKHAM, 12, 256>(ctx, a);
    default: return fused_launch<STOCKHAM, 13, 1024>(ctx, a);
    }
}

static int fused_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    const mh_conv1d_args *a = &args->conv1d;
    if (!mh_conv1d_finite_border(a, why, len)) return 0;
    const int l = log2_len(ctx->rules, a, args->config);
    if (!fits(a, l)) {
        snprintf(why, len, "k = %zu is longer than %d + 1, half the %d-sample segment that fits on chip (fft-os takes it)",
                 a->k, (1 << l) / 2, 1 << l);
        return 0;
    }
    const fused_fft fft = fft_of(resolved(ctx->rules, a, args->config));
    const long long hop = segment_hop(fft, l, a->k), per_block = segments_per_block(fft);
    if (((long long)a->out_n / hop + per_block) / per_block > (long long)MH_MAX_GRID_X) {
        snprintf(why, len, "%zu outputs need more than 2^31-1 blocks", a->out_n);
        return 0;
    }
    return 1;
}

static const char *fused_config_for(const mh_context *ctx, const mh_args *x)
{
    return fused_configs[resolved(ctx->rules, &x->conv1d, x->config)];
}

static const mh_row rows[] = {
    {{"conv1d/fft-fused", MH_OP_CONV1D, MH_BACKEND_CUDA, 13, "global+shared", "ours",
      "overlap-save with the FFT on chip, in registers: a real 8192-point segment or two real 4096-point ones per "
      "complex FFT, k <= 4097"},
     fused_supports, fused_run, fused_configs, 1, MH_LIB_NONE, fused_config_for, MH_ROW_NORMWISE | MH_ROW_BORDER_MODES},
};

MH_ROW_GROUP(mh_conv1d_fft_fused_rows, rows)

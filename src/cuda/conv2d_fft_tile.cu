/* conv2d/fft-tile: ours, 2-D overlap-save with the tiles' transforms on chip, for filters up to
 * MH_CONV2D_DIRECT_MAX_K a side.
 *
 * As conv2d/fft-os (its header explains the overlap-save), with 64 x 64 tiles whose transforms
 * never leave shared memory: a block loads two tiles of inputs, A into the real parts and B into
 * the imaginary parts of one complex 64 x 64 tile z = a + i b (the filter is real, so the
 * correlation of z is that of a plus i times that of b: two real tiles for one complex
 * transform), transforms it, multiplies by the filter's spectrum, transforms back and stores the
 * real parts as A's outputs and the imaginary parts as B's. A tile gives (65 - krows) x
 * (65 - kcols) outputs: 34 x 34 with a 31 x 31 filter, 54 x 54 with an 11 x 11. One kernel reads
 * every input it needs (from L2 where tiles overlap) and writes every output once: no pass
 * through DRAM between the transforms, which is what bounds fft-os.
 *
 * Only forward transforms: y = IDFT2(Z . conj(F)) = conj(DFT2(conj(Z) . F)) / 64^2, F the
 * spectrum of the filter zero-padded to 64 x 64 (made by spectrum_kernel, 1 / 64^2 folded in:
 * once per call, or once per plan, which keeps it). So A's outputs are the real parts of
 * DFT2(conj(Z) . F), B's minus its imaginary parts.
 *
 * The 2-D DFT is 64-point DFTs along the rows, then along the columns (dft64_lines). A 64-point
 * DFT splits n = 4 n2 + n1, k = k1 + 16 k2: for each n1 a 16-point DFT over n2 (one thread's
 * registers, fft_dft16), twiddles w64^(n1 k1), then for each k1 a 4-point DFT over n1. 256
 * threads: thread t takes line t % 64 and part t / 64 (n1 in the first step, four k1 in the
 * second), so a warp reads 32 lines at one position: along rows the padded row stride (65
 * float2) spreads them over the banks, along columns they are consecutive.
 *
 * Accuracy: as fft-os (a normwise bound over the tile, log2(64^2) = 12 in place of fft-os's
 * longer transforms). NaN and Inf as the direct rows give them: a block whose inputs hold one
 * sums its two tiles' outputs directly (direct_tile) instead of transforming them. A non-finite
 * cval: the tiles take 0 and conv2d_border_direct.cuh computes the outputs that read the
 * border. */
#include "conv2d_border_direct.cuh"
#include "fft4096.cuh"
#include "tile_io.cuh"

#include <math.h>

namespace {

constexpr int N = 64;       /* the tile's side */
constexpr int LD = N + 1;   /* shared-memory row stride, float2 */
constexpr int THREADS = 256;
constexpr int POINTS = N * N;

/* w64^m = exp(-2 pi i m / 64), m < 64, rounded from double at compile time. The index n1 k1 is
 * the same across a warp (n1 = t / 64): constant memory broadcasts it. */
struct twiddles64 {
    float2 w[N];
};
constexpr twiddles64 make_twiddles64()
{
    twiddles64 t{};
    for (int m = 0; m < N; ++m) t.w[m] = fft_root(m, N);
    return t;
}
__constant__ twiddles64 w64 = make_twiddles64();

/* Element `pos` of line `line`: along rows, s[line][pos]; along columns, s[pos][line]. */
template <bool ALONG_ROWS>
__device__ __forceinline__ int at(int line, int pos)
{
    return ALONG_ROWS ? line * LD + pos : pos * LD + line;
}

/* Stage B's default: results go back to s unchanged. */
struct keep_result {
    __device__ __forceinline__ void operator()(int, int, float2 &) const {}
};

/* 64-point DFTs of every row (ALONG_ROWS) or column of the tile s, in place, natural order in
 * and out; all 256 threads. Each result passes through finish(line, pos, v) first, which may
 * change it (the product with the filter's spectrum) or store it elsewhere (the outputs); with
 * KEEP false it does not return to s and the pass ends without a barrier. Callers sync before it
 * (its first reads); with KEEP it ends with a sync. */
template <bool ALONG_ROWS, bool KEEP = true, class Finish = keep_result>
__device__ __forceinline__ void dft64_lines(float2 *s, const Finish &finish = Finish())
{
    const int line = threadIdx.x & (N - 1), part = threadIdx.x / N;
    float2 v[16];
#pragma unroll
    for (int n2 = 0; n2 < 16; ++n2) v[n2] = s[at<ALONG_ROWS>(line, 4 * n2 + part)];
    fft_dft16(v); /* v[k1] = sum over n2 of x[4 n2 + n1] w16^(n2 k1), n1 = part */
#pragma unroll
    for (int k1 = 1; k1 < 16; ++k1) v[k1] = fft_cmul(v[k1], w64.w[part * k1]);
    __syncthreads(); /* every x read before Y overwrites it */
#pragma unroll
    for (int k1 = 0; k1 < 16; ++k1) s[at<ALONG_ROWS>(line, 16 * part + k1)] = v[k1];
    __syncthreads();
    /* X[k1 + 16 k2] = sum over n1 of Y[n1][k1] w4^(n1 k2), for k1 = 4 part + q: this thread reads
     * and writes the same 16 positions, so no barrier between. */
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const int k1 = 4 * part + q;
        float2 x[4];
#pragma unroll
        for (int k2 = 0; k2 < 4; ++k2) x[k2] = s[at<ALONG_ROWS>(line, 16 * k2 + k1)];
        fft_dft4(x[0], x[1], x[2], x[3]);
#pragma unroll
        for (int k2 = 0; k2 < 4; ++k2) {
            finish(line, 16 * k2 + k1, x[k2]);
            if (KEEP) s[at<ALONG_ROWS>(line, 16 * k2 + k1)] = x[k2];
        }
    }
    if (KEEP) __syncthreads();
}

__device__ __forceinline__ void dft2(float2 *s)
{
    dft64_lines<true>(s);
    dft64_lines<false>(s);
}

struct geometry {
    long long rows, cols, out_rows, out_cols; /* an image */
    long long image, out_image;               /* rows cols, out_rows out_cols */
    int lpr, lpc, krows, kcols;
    int vr, vc;                 /* outputs a tile along each axis: 65 - krows, 65 - kcols */
    long long tc, tiles;        /* tiles along a row of tiles; tiles an image */
    long long total;            /* tiles in the stack */
    long long er, ec;           /* the inputs the windows read, from (-lpr, -lpc): zeros past them */
    tile_border border;         /* what the tiles read past the image (a non-finite cval: 0) */
};

/* Where tile t sits, worked out once per block (the divisions stay out of the loops). Its
 * first output is (o_r, o_c) of image b, whose window starts at input (o_r - lpr, o_c - lpc).
 * An absent tile (past the stack) reads zeros and writes nothing. */
struct tile_place {
    bool present;
    bool inside;          /* its 64 x 64 inputs all in the image and all read by its windows */
    long long in_off;     /* image b's first input */
    long long o_r, o_c;
    const float *corner;  /* input (o_r - lpr, o_c - lpc) where inside */
    float *first;         /* output (o_r, o_c) */
    int out_r, out_c;     /* outputs it writes along each axis: at most vr, vc */
};

__device__ __forceinline__ tile_place place_of(const geometry &g, const float *in, float *out, long long t)
{
    tile_place p = {t < g.total, false, 0, 0, 0, NULL, NULL, 0, 0};
    if (!p.present) return p;
    const long long b = t / g.tiles, i = t % g.tiles;
    p.in_off = b * g.image;
    p.o_r = (i / g.tc) * g.vr, p.o_c = (i % g.tc) * g.vc;
    const long long r0 = p.o_r - g.lpr, c0 = p.o_c - g.lpc;
    p.inside = r0 >= 0 && c0 >= 0 && r0 + N <= g.rows && c0 + N <= g.cols && p.o_r + N <= g.er && p.o_c + N <= g.ec;
    p.corner = p.inside ? in + p.in_off + r0 * g.cols + c0 : NULL;
    p.first = out + b * g.out_image + p.o_r * g.out_cols + p.o_c;
    p.out_r = (int)min((long long)g.vr, g.out_rows - p.o_r), p.out_c = (int)min((long long)g.vc, g.out_cols - p.o_c);
    return p;
}

/* Input (y, x) of a tile: the image's value, the border's, or zero past the inputs the windows
 * read (the last tiles' tails) and for an absent tile. */
__device__ __forceinline__ float tile_input(const float *in, const geometry &g, const tile_place &p, int y, int x)
{
    if (p.inside) return __ldg(p.corner + y * g.cols + x);
    const long long e_r = p.o_r + y, e_c = p.o_c + x;
    if (!p.present || e_r >= g.er || e_c >= g.ec) return 0.0f;
    const long long r = mh_border_index(e_r - g.lpr, g.rows, g.border.mode);
    const long long c = r < 0 ? -1 : mh_border_index(e_c - g.lpc, g.cols, g.border.mode);
    return c < 0 ? g.border.cval : __ldg(in + p.in_off + r * g.cols + c);
}

/* The column pass of the first transform ends with the product: conj(Z) F at (pos, line). */
struct times_spectrum {
    const float2 *fspec;
    __device__ __forceinline__ void operator()(int line, int pos, float2 &z) const
    {
        const float2 f = __ldg(fspec + pos * N + line);
        z = make_float2(z.x * f.x + z.y * f.y, z.x * f.y - z.y * f.x);
    }
};

/* The column pass of the second ends with the outputs: A's the real parts, B's minus the
 * imaginary parts, at (pos, line) of each tile where it has an output. */
struct store_outputs {
    const tile_place *ab; /* shared memory */
    long long out_cols;
    __device__ __forceinline__ void operator()(int line, int pos, float2 &v) const
    {
        if (pos < ab[0].out_r && line < ab[0].out_c) ab[0].first[pos * out_cols + line] = v.x;
        if (pos < ab[1].out_r && line < ab[1].out_c) ab[1].first[pos * out_cols + line] = -v.y;
    }
};

/* fspec = DFT2(filter zero-padded to 64 x 64) / 64^2, natural order: one block. */
__global__ void __launch_bounds__(THREADS) spectrum_kernel(float2 *fspec, const float *f, int krows, int kcols)
{
    __shared__ float2 s[N * LD];
    for (int p = threadIdx.x; p < POINTS; p += THREADS) {
        const int y = p / N, x = p % N;
        s[y * LD + x] = make_float2(y < krows && x < kcols ? __ldg(f + y * kcols + x) : 0.0f, 0.0f);
    }
    __syncthreads();
    dft2(s);
    const float scale = 1.0f / (float)POINTS;
    for (int p = threadIdx.x; p < POINTS; p += THREADS) {
        const float2 v = s[(p / N) * LD + p % N];
        fspec[p] = make_float2(v.x * scale, v.y * scale);
    }
}

/* A tile's outputs summed directly, tap by tap in float as the direct rows sum: for tiles whose
 * inputs hold a NaN or an Inf, which a transform would spread over every output of the tile
 * (and turn every Inf into NaN). Outputs stride over the block's threads. */
__device__ void direct_tile(const float *in, const float *f, const geometry &g, const tile_place &p)
{
    for (int o = threadIdx.x; o < p.out_r * g.vc; o += THREADS) {
        const int y = o / g.vc, x = o % g.vc;
        if (x >= p.out_c) continue;
        float sum = 0.0f;
        for (int i = 0; i < g.krows; ++i)
            for (int j = 0; j < g.kcols; ++j) sum = fmaf(tile_input(in, g, p, y + i, x + j), __ldg(f + i * g.kcols + j), sum);
        p.first[(long long)y * g.out_cols + x] = sum;
    }
}

/* Tiles 2 blockIdx.x (real parts) and 2 blockIdx.x + 1 (imaginary parts). MIN_BLOCKS: blocks an
 * SM must hold at once, the registers capped to fit: 4 (64 registers, ~100 bytes spilled) ran
 * 5-15% faster on the H100 than 3 (80 registers, no spill): the kernel is latency-bound (no unit
 * near its peak), and more resident blocks hide more than the spill costs. */
template <int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) tile_kernel(float *out, const float *in, const float *f, const float2 *fspec,
                                                                   geometry g)
{
    __shared__ float2 s[N * LD];
    __shared__ tile_place place[2]; /* in shared memory, not in every thread's registers */
    if (threadIdx.x < 2) place[threadIdx.x] = place_of(g, in, out, 2 * (long long)blockIdx.x + threadIdx.x);
    __syncthreads();
    const int x = threadIdx.x % N, y0 = threadIdx.x / N; /* this thread's column; rows y0 + 4 j */
    bool finite = true;
#pragma unroll 1
    for (int y = y0; y < N; y += THREADS / N) {
        const float2 v = make_float2(tile_input(in, g, place[0], y, x), tile_input(in, g, place[1], y, x));
        finite = finite && isfinite(v.x) && isfinite(v.y);
        s[y * LD + x] = v;
    }
    if (__syncthreads_or(!finite)) { /* the whole block: both tiles summed directly */
        if (place[0].present) direct_tile(in, f, g, place[0]);
        if (place[1].present) direct_tile(in, f, g, place[1]);
        return;
    }
    dft64_lines<true>(s);
    dft64_lines<false>(s, times_spectrum{fspec});
    dft64_lines<true>(s);
    dft64_lines<false, false>(s, store_outputs{place, g.out_cols});
}

geometry geometry_of(const mh_conv2d_args *a)
{
    geometry g;
    g.rows = (long long)a->rows, g.cols = (long long)a->cols;
    g.out_rows = (long long)a->out_rows, g.out_cols = (long long)a->out_cols;
    g.image = g.rows * g.cols, g.out_image = g.out_rows * g.out_cols;
    g.lpr = a->lpr, g.lpc = a->lpc, g.krows = a->krows, g.kcols = a->kcols;
    g.vr = N + 1 - a->krows, g.vc = N + 1 - a->kcols;
    g.tc = (g.out_cols + g.vc - 1) / g.vc;
    g.tiles = (g.out_rows + g.vr - 1) / g.vr * g.tc;
    g.total = g.tiles * (long long)a->batch;
    g.er = g.out_rows + a->krows - 1, g.ec = g.out_cols + a->kcols - 1;
    g.border = mh_conv2d_fft_border(a);
    return g;
}

/* A grid of one block a tile pair: 2^31 - 1 blocks, ~2.9e11 outputs at the smallest tile. */
int ft_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    (void)ctx;
    const geometry g = geometry_of(&args->conv2d);
    if ((g.total + 1) / 2 <= 0x7fffffffLL) return 1;
    snprintf(why, len, "%lld tiles of 64 x 64 exceed one launch's grid", g.total);
    return 0;
}

mh_status ft_run(mh_context *ctx, const mh_args *args)
{
    const mh_conv2d_args *a = &args->conv2d;
    const geometry g = geometry_of(a);
    const cudaStream_t st = mh_stream(ctx);
    const float2 *fspec = a->plan ? (const float2 *)a->plan->spectrum : NULL; /* a plan's: made, ready */
    if (!fspec) {
        void *ws = NULL;
        MH_TRY(mh_workspace(ctx, mh_conv2d_fft_tile_spectrum_bytes(), &ws));
        MH_TRY(mh_cuda_status(ctx, (cudaError_t)mh_conv2d_fft_tile_spectrum(ws, a->filter, a->krows, a->kcols, st),
                              "launching conv2d/fft-tile spectrum_kernel"));
        fspec = (const float2 *)ws;
    }
    if (g.total) {
        const unsigned blocks = (unsigned)((g.total + 1) / 2);
        if (args->config == 1) tile_kernel<3><<<blocks, THREADS, 0, st>>>(a->out, a->in, a->filter, fspec, g);
        else tile_kernel<4><<<blocks, THREADS, 0, st>>>(a->out, a->in, a->filter, fspec, g);
        MH_TRY(MH_LAUNCH_CHECK(ctx, "conv2d/fft-tile tile_kernel"));
    }
    return mh_conv2d_fix_nonfinite_border(ctx, a, "launching conv2d/fft-tile direct_border_kernel");
}

/* "auto": four blocks an SM; "occ3": three, with 80 registers (tile_kernel's comment). */
const char *const ft_configs[] = {"auto", "occ3", NULL};

const mh_row rows[] = {
    {{"conv2d/fft-tile", MH_OP_CONV2D, MH_BACKEND_CUDA, 14, "shared (2-D FFT tiles)", "ours",
      "2-D overlap-save in shared memory: two 64 x 64 real tiles as one complex tile, 2-D FFT, filter spectrum, FFT "
      "again; filters up to 31 x 31, stacks"},
     ft_supports, ft_run, ft_configs, 1, MH_LIB_NONE, NULL, 0},
};

} // namespace

size_t mh_conv2d_fft_tile_spectrum_bytes(void) { return POINTS * sizeof(float2); }

int mh_conv2d_fft_tile_spectrum(void *spectrum, const float *filter, int krows, int kcols, void *stream)
{
    spectrum_kernel<<<1, THREADS, 0, (cudaStream_t)stream>>>((float2 *)spectrum, filter, krows, kcols);
    return (int)cudaGetLastError();
}

MH_ROW_GROUP(mh_conv2d_fft_tile_rows, rows)

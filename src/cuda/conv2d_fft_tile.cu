/* conv2d/fft-tile: ours, 2-D overlap-save with the tiles' transforms on chip, for filters up to
 * MH_CONV2D_DIRECT_MAX_K a side.
 *
 * As conv2d/fft-os (its header explains the overlap-save), with 64 x 64 tiles whose transforms
 * never leave the block: a block loads two tiles of inputs, A into the real parts and B into the
 * imaginary parts of one complex 64 x 64 tile z = a + i b (the filter is real, so the
 * correlation of z is that of a plus i times that of b: two real tiles for one complex
 * transform), transforms it, multiplies by the filter's spectrum, transforms back and stores the
 * real parts as A's outputs and the imaginary parts as B's. A tile gives (65 - krows) x
 * (65 - kcols) outputs: 34 x 34 with a 31 x 31 filter, 54 x 54 with an 11 x 11. One kernel reads
 * every input it needs (from L2 where tiles overlap) and writes every output once: no pass
 * through DRAM between the transforms, which is what bounds fft-os.
 *
 * Only forward transforms: y = IDFT2(Z . conj(F)) = conj(DFT2(conj(Z) . F)) / 64^2, F the
 * spectrum of the filter zero-padded to 64 x 64 (made by spectrum_kernel with the same
 * transform, 1 / 64^2 folded in: once per call, or once per plan, which keeps it; a plain call's
 * tile_kernel starts while spectrum_kernel runs and waits for it just before the product). So A's
 * outputs are the real parts of DFT2(conj(Z) . F), B's minus its imaginary parts.
 *
 * The 2-D DFT (dft2_64) keeps the tile in registers, 16 points a thread, and crosses shared
 * memory twice: the 4096 points split into three 16-point stages, a 16-point DFT along rows, a
 * 4 x 4 DFT (4 points along rows by 4 along columns) and a 16-point DFT along columns (see
 * dft2_64 for the indices). A transform along rows then along columns, each split 16 x 4 with
 * its own exchange, crosses shared memory four times; shared-memory bandwidth is what the
 * transforms spend most, so the tile's round trips through it set the kernel's speed. Inputs
 * load straight into the registers and outputs store from them; the output comes back with
 * the axes exchanged in the registers, which the second transform, applied to it as it lies,
 * exchanges back (the DFT of a transposed tile is the transposed DFT).
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
constexpr int THREADS = 256;
constexpr int POINTS = N * N;
constexpr int VALUES = POINTS / THREADS; /* a thread's points: 16 */
constexpr int LINE = 17;                 /* the second exchange's padded line of 16, float2 */
constexpr int SMEM_FLOAT2 = 4 * N * LINE; /* the second exchange's 4 x 64 lines; the first uses 4096 */

/* w64^m = exp(-2 pi i m / 64), m < 64, rounded from double at compile time. */
struct twiddles64 {
    float2 w[N];
};
constexpr twiddles64 make_twiddles64()
{
    twiddles64 t{};
    for (int m = 0; m < N; ++m) t.w[m] = fft_root(m, N);
    return t;
}
__device__ const twiddles64 w64 = make_twiddles64();

/* v[4 a + b] *= w64^(m a) (ROWS) or w64^(m b), a, b < 4: the twiddles between a 16-point and a
 * 4-point stage, three values a thread, loaded where they are used. The index looks unknown to
 * the compiler (zero from asm): a kernel's two transforms read the same twiddles, which it would
 * otherwise keep in registers from the first to the second, past the 64 registers that four
 * blocks an SM allow. */
template <bool ROWS>
__device__ __forceinline__ void twiddle_4x4(float2 (&v)[VALUES], int m)
{
    int zero;
    asm volatile("mov.u32 %0, 0;" : "=r"(zero));
    const float2 *w = w64.w + zero;
    const float2 w1 = __ldg(w + m), w2 = __ldg(w + 2 * m), w3 = __ldg(w + 3 * m);
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        float2 &x1 = ROWS ? v[4 + a] : v[4 * a + 1], &x2 = ROWS ? v[8 + a] : v[4 * a + 2],
               &x3 = ROWS ? v[12 + a] : v[4 * a + 3];
        x1 = fft_cmul(x1, w1), x2 = fft_cmul(x2, w2), x3 = fft_cmul(x3, w3);
    }
}

/* The 2-D DFT of a 64 x 64 tile in the block's registers, all 256 threads. On entry thread t's
 * v[j] holds point (4 j + hi, lo), hi = t / 64, lo = t % 64 (a warp holds 32 consecutive points
 * of a row: coalesced loads); on return frequency (lo, 4 j + hi): the same layout, axes
 * exchanged. The caller may use s before and after: it syncs first, and s is last read before
 * the final 16-point stage.
 *
 * Indices: row y = 4 ya + yb, frequency ky = yc + 16 yd (a 16-point DFT over ya, twiddles
 * w64^(yb yc), a 4-point DFT over yb); column x = 16 xb + xa, kx = 4 xc + xd (a 4-point DFT
 * over xb, twiddles w64^(xa xd), a 16-point DFT over xa). The stages: (1) thread (yb, x) = (hi,
 * lo), a 16-point DFT over ya = j; (2) thread (yc, xa) = (t / 16, t % 16), 16 points: the row
 * twiddles, the 4-point DFTs over yb and xb, the column twiddles; (3) thread (ky, xd) = (lo, hi),
 * a 16-point DFT over xa, leaving xc = j. Both exchanges read and write 16 consecutive float2
 * a half-warp, or a stride of 17: no bank conflicts. */
__device__ __forceinline__ void dft2_64(float2 (&v)[VALUES], float2 *s)
{
    const int t = threadIdx.x, hi = t / N, lo = t % N, p = t / 16, q = t % 16;
    fft_dft16(v);
    __syncthreads(); /* the caller's last reads of s */
#pragma unroll
    for (int c = 0; c < 16; ++c) s[c * THREADS + t] = v[c]; /* (yc, yb, x) */
    __syncthreads();
#pragma unroll
    for (int h = 0; h < 4; ++h)
#pragma unroll
        for (int g = 0; g < 4; ++g) v[4 * h + g] = s[p * THREADS + h * N + g * 16 + q]; /* yb = h, xb = g */
    twiddle_4x4<true>(v, p); /* w64^(yb yc) */
#pragma unroll
    for (int g = 0; g < 4; ++g) fft_dft4(v[g], v[4 + g], v[8 + g], v[12 + g]); /* now yd = h */
#pragma unroll
    for (int d = 0; d < 4; ++d) fft_dft4(v[4 * d], v[4 * d + 1], v[4 * d + 2], v[4 * d + 3]); /* now xd = g */
    twiddle_4x4<false>(v, q); /* w64^(xa xd) */
    __syncthreads(); /* every read of the first exchange */
#pragma unroll
    for (int d = 0; d < 4; ++d)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[(e * N + p + 16 * d) * LINE + q] = v[4 * d + e]; /* (xd, ky, xa) */
    __syncthreads();
#pragma unroll
    for (int a = 0; a < 16; ++a) v[a] = s[(hi * N + lo) * LINE + a];
    fft_dft16(v);
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
    /* t < 2^32 (ft_supports bounds the grid): 32-bit divisions, a few instructions where 64-bit
     * ones are a called routine, while the whole block waits at the barrier after this */
    const unsigned tt = (unsigned)t, tiles = (unsigned)g.tiles, tc = (unsigned)g.tc;
    const unsigned b = tt / tiles, i = tt - b * tiles, ty = i / tc, tx = i - ty * tc;
    p.in_off = (long long)b * g.image;
    p.o_r = (long long)ty * g.vr, p.o_c = (long long)tx * g.vc;
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

/* fspec = DFT2(filter zero-padded to 64 x 64) / 64^2 in dft2_64's output layout (thread t's
 * register j at fspec[j * 256 + t]), which the tiles' spectra have too: one block. */
__global__ void __launch_bounds__(THREADS) spectrum_kernel(float2 *fspec, const float *f, int krows, int kcols)
{
    __shared__ float2 s[SMEM_FLOAT2];
    mh_let_next_grid_start(); /* a plain call's tile_kernel loads and transforms its tiles meanwhile */
    const int hi = threadIdx.x / N, lo = threadIdx.x % N;
    float2 v[VALUES];
#pragma unroll
    for (int j = 0; j < VALUES; ++j) {
        const int y = 4 * j + hi;
        v[j] = make_float2(y < krows && lo < kcols ? __ldg(f + y * kcols + lo) : 0.0f, 0.0f);
    }
    dft2_64(v, s);
    const float scale = 1.0f / (float)POINTS;
#pragma unroll
    for (int j = 0; j < VALUES; ++j) fspec[j * THREADS + threadIdx.x] = make_float2(v[j].x * scale, v[j].y * scale);
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

/* What a bordered tile's row y or column x reads (edge_tables): an offset into `in` (rows: the
 * image's and the row's, columns: the column), or one of these. */
constexpr long long EDGE_CVAL = -1; /* the border's constant */
constexpr long long EDGE_ZERO = -2; /* zero: past the inputs the windows read, or an absent tile */

/* Rows then columns of tiles A and B, 64 entries each, one a thread (all 256), as tile_input maps
 * them; the caller syncs before it reads them. */
__device__ __forceinline__ void edge_tables(long long *table, const geometry &g, const tile_place *place)
{
    const int t = threadIdx.x, is_col = t >> 7, k = (t >> 6) & 1, y = t % N;
    const tile_place &p = place[k];
    const long long e = (is_col ? p.o_c : p.o_r) + y, end = is_col ? g.ec : g.er;
    long long at = EDGE_ZERO;
    if (p.present && e < end) {
        const long long q = is_col ? mh_border_index(e - g.lpc, g.cols, g.border.mode)
                                   : mh_border_index(e - g.lpr, g.rows, g.border.mode);
        at = q < 0 ? EDGE_CVAL : is_col ? q : p.in_off + q * g.cols;
    }
    table[t] = at;
}

/* Point (4 j + hi, lo) of tiles A and B where either reaches past its image, into v[j]: the
 * places' rows and columns mapped once (edge_tables, in s), then every load of the thread at once,
 * as the inside tiles' are. Mapping each point as it is loaded keeps one load in flight at a time:
 * the blocks of the image's first and last rows and columns of tiles (2-5% of them at 4096^2 to
 * 8192^2, every block at small sizes) then take about twice a block's time. */
__device__ __forceinline__ void load_with_edges(float2 (&v)[VALUES], float2 *s, const float *in, const geometry &g,
                                                const tile_place *place)
{
    long long *table = reinterpret_cast<long long *>(s);
    edge_tables(table, g, place);
    __syncthreads();
    const int hi = threadIdx.x / N, lo = threadIdx.x % N;
    const long long col_a = table[2 * N + lo], col_b = table[3 * N + lo];
    const float cval = g.border.cval;
#pragma unroll
    for (int j = 0; j < VALUES; ++j) {
        const long long row_a = table[4 * j + hi], row_b = table[N + 4 * j + hi];
        float a = row_a == EDGE_ZERO || col_a == EDGE_ZERO ? 0.0f : cval;
        float b = row_b == EDGE_ZERO || col_b == EDGE_ZERO ? 0.0f : cval;
        if (row_a >= 0 && col_a >= 0) a = __ldg(in + (row_a + col_a));
        if (row_b >= 0 && col_b >= 0) b = __ldg(in + (row_b + col_b));
        v[j] = make_float2(a, b);
    }
}

/* The block's two tiles into dft2_64's layout: point (4 j + hi, lo) of tile A in v[j].x, of B in
 * v[j].y, straight from global memory where both are inside their images. False where a point is
 * NaN or Inf. */
__device__ __forceinline__ bool load_tiles(float2 (&v)[VALUES], float2 *s, const float *in, const geometry &g,
                                           const tile_place *place)
{
    const int hi = threadIdx.x / N, lo = threadIdx.x % N;
    if (place[0].inside && place[1].inside) {
        const float *a = place[0].corner + hi * g.cols + lo, *b = place[1].corner + hi * g.cols + lo;
#pragma unroll
        for (int j = 0; j < VALUES; ++j) v[j] = make_float2(__ldg(a + 4 * j * g.cols), __ldg(b + 4 * j * g.cols));
    } else {
        load_with_edges(v, s, in, g, place);
    }
    /* x * 0 is 0 for every finite x and NaN for NaN and +-Inf: one FMA a value, one test. */
    float nan_if_any = 0.0f;
#pragma unroll
    for (int j = 0; j < VALUES; ++j) nan_if_any = fmaf(v[j].x, 0.0f, fmaf(v[j].y, 0.0f, nan_if_any));
    return nan_if_any == 0.0f;
}

/* Tiles 2 blockIdx.x (real parts) and 2 blockIdx.x + 1 (imaginary parts). MIN_BLOCKS: blocks an
 * SM must hold at once, the registers capped to fit (4: 64 registers; 3: 80). */
template <int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) tile_kernel(float *out, const float *in, const float *f, const float2 *fspec,
                                                                   geometry g)
{
    __shared__ float2 s[SMEM_FLOAT2];
    __shared__ tile_place place[2]; /* in shared memory, not in every thread's registers */
    if (threadIdx.x < 2) place[threadIdx.x] = place_of(g, in, out, 2 * (long long)blockIdx.x + threadIdx.x);
    __syncthreads();
    float2 v[VALUES];
    if (__syncthreads_or(!load_tiles(v, s, in, g, place))) { /* the whole block: both tiles summed directly */
        if (place[0].present) direct_tile(in, f, g, place[0]);
        if (place[1].present) direct_tile(in, f, g, place[1]);
        return;
    }
    dft2_64(v, s);
    mh_wait_for_previous_grid(); /* a plain call's spectrum_kernel (a no-op after a plan's) */
    /* The spectrum by ld.global.cg (__ldcg), not __ldg: a non-coherent load promises data no one
     * writes while the kernel runs, and ptxas moved one of these loads above the wait. */
#pragma unroll
    for (int j = 0; j < VALUES; ++j) { /* conj(Z) F */
        const float2 z = v[j], f = __ldcg(fspec + j * THREADS + threadIdx.x);
        v[j] = make_float2(z.x * f.x + z.y * f.y, z.x * f.y - z.y * f.x);
    }
    dft2_64(v, s);
    /* Output (4 j + hi, lo): A's the real part, B's minus the imaginary part. The places are read
     * into registers first: a store through a generic pointer could alias them in shared memory,
     * so the compiler would read them again after every store. */
    const int hi = threadIdx.x / N, lo = threadIdx.x % N;
    const int rows_a = lo < place[0].out_c ? place[0].out_r : 0, rows_b = lo < place[1].out_c ? place[1].out_r : 0;
    const long long step = 4 * g.out_cols;
    float *a = place[0].first + hi * g.out_cols + lo, *b = place[1].first + hi * g.out_cols + lo;
#pragma unroll
    for (int j = 0; j < VALUES; ++j, a += step, b += step) {
        const int y = 4 * j + hi;
        if (y < rows_a) *a = v[j].x;
        if (y < rows_b) *b = -v[j].y;
    }
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
    const bool made_here = !fspec;
    if (made_here) {
        void *ws = NULL;
        MH_TRY(mh_workspace(ctx, mh_conv2d_fft_tile_spectrum_bytes(), &ws));
        MH_TRY(mh_cuda_status(ctx, (cudaError_t)mh_conv2d_fft_tile_spectrum(ws, a->filter, a->krows, a->kcols, st),
                              "launching conv2d/fft-tile spectrum_kernel"));
        fspec = (const float2 *)ws;
    }
    if (g.total) { /* after our own spectrum_kernel, overlapping it (a programmatic dependent launch) */
        const void *kernel = args->config == 1 ? (const void *)tile_kernel<3> : (const void *)tile_kernel<4>;
        void *params[] = {(void *)&a->out, (void *)&a->in, (void *)&a->filter, (void *)&fspec, (void *)&g};
        MH_TRY(mh_launch(ctx, kernel, (unsigned)((g.total + 1) / 2), 1, THREADS, 0, params,
                         "launching conv2d/fft-tile tile_kernel", made_here));
    }
    return mh_conv2d_fix_nonfinite_border(ctx, a, "launching conv2d/fft-tile direct_border_kernel");
}

/* "auto": four blocks an SM; "occ3": three, with 80 registers (tile_kernel's comment). */
const char *const ft_configs[] = {"auto", "occ3", NULL};

const mh_row rows[] = {
    {{"conv2d/fft-tile", MH_OP_CONV2D, MH_BACKEND_CUDA, 14, "shared (2-D FFT tiles)", "ours",
      "2-D overlap-save in shared memory: two 64 x 64 real tiles as one complex tile, 2-D FFT, filter spectrum, FFT "
      "again; filters up to 31 x 31, stacks"},
     ft_supports, ft_run, ft_configs, 1, MH_LIB_NONE, NULL, MH_ROW_NORMWISE | MH_ROW_BORDER_MODES},
};

} // namespace

size_t mh_conv2d_fft_tile_spectrum_bytes(void) { return POINTS * sizeof(float2); }

int mh_conv2d_fft_tile_spectrum(void *spectrum, const float *filter, int krows, int kcols, void *stream)
{
    spectrum_kernel<<<1, THREADS, 0, (cudaStream_t)stream>>>((float2 *)spectrum, filter, krows, kcols);
    return (int)cudaGetLastError();
}

MH_ROW_GROUP(mh_conv2d_fft_tile_rows, rows)

/* conv2d/fft-3pass: ours, 2-D overlap-save for filters up to MH_CONV2D_MAX_K a side, with 512 x
 * 512 tiles whose 1-D transforms run on chip, in three passes through global memory.
 *
 * As conv2d/fft-os (its header explains the overlap-save: a tile gives (513 - krows) x (513 -
 * kcols) outputs). fft-os runs five passes (gather, cuFFT's R2C, product, C2R, compaction), and
 * cuFFT's 2-D transforms of 512 x 512 each pass through DRAM twice: about nine reads and writes
 * of a tile. Here a tile crosses DRAM three times, as its half spectrum (512 rows of 257 bins):
 *
 *   rows_forward    reads the tile's inputs (the border's values past the image, zeros past the
 *                   inputs the windows read) and writes each row's spectrum: two real rows as
 *                   one complex 512-point transform z = a + i b, split by A[k] = Z[k] + conj(Z[-k]),
 *                   B[k] = -i (Z[k] - conj(Z[-k])) (twice the rows' spectra);
 *   columns         per bin column: the 512-point transform along the column, the product with
 *                   the filter's spectrum, the inverse; only the rows that hold outputs go back;
 *   rows_inverse    two rows' half spectra as one Hermitian-extended complex vector Y_a + i Y_b,
 *                   its inverse transform holds the outputs of row a (real parts) and row b
 *                   (imaginary parts), stored in place.
 *
 * The transforms are fft512.cuh's, one warp each: forward in natural order to a digit-reversed
 * spectrum, and the forward DFT from that order back to natural order, conj() around it for the
 * inverse. The filter's spectrum is made by the same two kernels (rows_forward on the filter,
 * columns without the product), conjugated and scaled by 1 / (4 512^2) (the factor 2 of each
 * row split, and the two unnormalised inverses), and kept in the digit-reversed order the
 * columns kernel holds: the product is one complex multiply a value. A plan of a filter past
 * MH_CONV2D_DIRECT_MAX_K a side keeps it (large_spectrum): its calls run the three passes alone.
 *
 * The spectra of a chunk of tiles live in the context's workspace (MAX_CHUNK_BYTES at most);
 * a stack's images are tiles of one sequence, chunks run across image boundaries.
 *
 * Accuracy: as fft-os (a normwise bound over the tile, log2(512^2) = 18). A NaN or Inf input
 * spreads to every output of its tile; a non-finite cval: the tiles take 0 and
 * conv2d_border_direct.cuh computes the outputs that read the border. */
#include "conv2d_border_direct.cuh"
#include "fft512.cuh"

namespace {

constexpr int N = 512;
constexpr int BINS = N / 2 + 1;        /* a real row's half spectrum */
constexpr int PITCH = 264;             /* float2 a spectrum row: 257 used, rows 32-byte aligned */
constexpr int WARPS = 8, THREADS = 32 * WARPS;
constexpr int BLOCK_ROWS = 2 * WARPS;  /* rows a block of the row passes: two a warp */
constexpr int COLS = 16;               /* bin columns a block of the columns pass */
constexpr int COL_LINE = 545;          /* float2 a column in shared memory: odd, so a half-warp
                                          storing 16 columns of one row meets 16 banks */
constexpr size_t TILE_FLOAT2 = (size_t)N * PITCH;
constexpr size_t SPECTRUM_FLOAT2 = (size_t)BINS * N; /* the filter's, digit-reversed by column */
constexpr size_t COLUMNS_SMEM = (size_t)COLS * COL_LINE * sizeof(float2);
constexpr size_t MAX_CHUNK_BYTES = (size_t)256 << 20;
constexpr float SCALE = 1.0f / (4.0f * N * N);
static_assert(MH_CONV2D_MAX_K < N, "a tile must hold a filter and at least one output along each axis");

struct geometry {
    long long rows, cols, out_rows, out_cols;
    int lpr, lpc, krows, kcols;
    long long vr, vc;   /* outputs a tile, along each axis */
    long long tc;       /* tiles along a row of tiles */
    long long tiles;    /* tiles an image */
    long long er, ec;   /* the inputs the windows read, from (-lpr, -lpc): zeros past them */
    tile_border border; /* what the tiles read past the image (a non-finite cval: 0) */
};

geometry geometry_of(const mh_conv2d_args *a)
{
    geometry g;
    g.rows = (long long)a->rows, g.cols = (long long)a->cols;
    g.out_rows = (long long)a->out_rows, g.out_cols = (long long)a->out_cols;
    g.lpr = a->lpr, g.lpc = a->lpc, g.krows = a->krows, g.kcols = a->kcols;
    g.vr = N + 1 - a->krows, g.vc = N + 1 - a->kcols;
    g.tc = (g.out_cols + g.vc - 1) / g.vc;
    g.tiles = (g.out_rows + g.vr - 1) / g.vr * g.tc;
    g.er = g.out_rows + a->krows - 1, g.ec = g.out_cols + a->kcols - 1;
    g.border = mh_conv2d_fft_border(a);
    return g;
}

/* ---- what the row transforms read --------------------------------------------------------- */

/* The filter zero-padded to N x N. */
struct filter_source {
    const float *f;
    int krows, kcols;
    __device__ float at(long long y, long long c) const
    {
        return y < krows && c < kcols ? __ldg(f + y * kcols + c) : 0.0f;
    }
    __device__ bool load_plainly(float2 (&)[16], long long, int) const { return false; }
};

/* A tile's inputs: X[r0 + y][c0 + c] of its image, the border's value outside it, zero past the
 * inputs the windows read (the last tiles' tails: the FFT's error grows with the norm of what it
 * transforms). A tile inside both reads plainly. */
struct tile_source {
    const float *x;
    long long r0, c0;           /* the tile's first input */
    long long read_r, read_c;   /* inputs the windows read from (r0, c0): zeros past them */
    long long rows, cols;
    tile_border border;
    bool inside;                /* the whole N x N inside the image and read */
    __device__ float at(long long y, long long c) const
    {
        if (y >= read_r || c >= read_c) return 0.0f;
        const long long r = mh_border_index(r0 + y, rows, border.mode);
        const long long q = r < 0 ? -1 : mh_border_index(c0 + c, cols, border.mode);
        return q >= 0 ? __ldg(x + r * cols + q) : border.cval;
    }
    /* rows y and y + 1 of a tile inside both: all 32 loads in flight at once */
    __device__ bool load_plainly(float2 (&v)[16], long long y, int lane) const
    {
        if (!inside) return false;
        const float *a = x + (r0 + y) * cols + c0 + lane, *b = a + cols;
#pragma unroll
        for (int j = 0; j < 16; ++j) v[j] = make_float2(__ldg(a + 32 * j), __ldg(b + 32 * j));
        return true;
    }
};

/* ---- the passes --------------------------------------------------------------------------- */

/* Rows y and y + 1 of a tile (or of the padded filter) -> their half spectra, twice over. The
 * rows load as a + i b, x[32 j + lane] in register j. */
template <class Source>
__device__ __forceinline__ void row_pair_forward(float2 *spec, const Source &src, long long y, float2 *s, int lane)
{
    float2 v[16];
    if (!src.load_plainly(v, y, lane))
#pragma unroll
        for (int j = 0; j < 16; ++j) v[j] = make_float2(src.at(y, 32 * j + lane), src.at(y + 1, 32 * j + lane));
    fft512_forward(v, s, lane);
    /* natural order, 8 float2 of padding after the first 256: each half-warp's 16 stores
       (k0 = 0..7, k2 = 0..1) meet 16 banks */
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const int k = (lane >> 1) + 16 * j + 256 * (lane & 1);
        s[k + 8 * (lane & 1)] = v[j];
    }
    __syncwarp();
    float2 *a = spec + y * PITCH, *b = a + PITCH;
    for (int k = lane; k < BINS; k += 32) {
        const int m = (N - k) & (N - 1);
        const float2 z = s[k + 8 * (k >> 8)], zm = s[m + 8 * (m >> 8)];
        a[k] = make_float2(z.x + zm.x, z.y - zm.y);
        b[k] = make_float2(z.y + zm.y, zm.x - z.x);
    }
    __syncwarp();
}

/* The row kernels are held to 64 registers, four blocks an SM: they wait on DRAM, and more warps
 * keep more loads in flight (rows_forward spills 64 bytes at that bound; ptxas -v). */
template <bool FILTER>
__global__ void __launch_bounds__(THREADS, 4) rows_forward_kernel(float2 *spec, const float *in, geometry g,
                                                               long long first)
{
    __shared__ float2 scratch[WARPS][FFT512_WARP_FLOAT2];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long y = (long long)blockIdx.x * BLOCK_ROWS + 2 * warp;
    float2 *tile = spec + (size_t)blockIdx.y * TILE_FLOAT2;
    if (FILTER) {
        row_pair_forward(tile, filter_source{in, g.krows, g.kcols}, y, scratch[warp], lane);
        return;
    }
    const long long gt = first + blockIdx.y, b = gt / g.tiles, t = gt % g.tiles;
    const long long e_r = (t / g.tc) * g.vr, e_c = (t % g.tc) * g.vc;
    tile_source src;
    src.x = in + (size_t)b * (size_t)(g.rows * g.cols);
    src.r0 = e_r - g.lpr, src.c0 = e_c - g.lpc, src.read_r = g.er - e_r, src.read_c = g.ec - e_c;
    src.rows = g.rows, src.cols = g.cols, src.border = g.border;
    src.inside = src.r0 >= 0 && src.c0 >= 0 && src.r0 + N <= g.rows && src.c0 + N <= g.cols && src.read_r >= N &&
                 src.read_c >= N;
    row_pair_forward(tile, src, y, scratch[warp], lane);
}

/* Bin columns kb .. kb + COLS - 1 of a tile (blockIdx.y; fewer in the last block): each warp
 * transforms columns, multiplies by the filter's spectrum and transforms back, and rows 0 ..
 * vr - 1 go back to spec. SPECTRUM: the filter's own row spectra in, its conjugated, scaled
 * spectrum out to fspec (digit-reversed: bin k's value of register j of lane l at k N + 32 j + l).
 * Three blocks an SM (70 KB of shared memory each; 80 registers, 20 bytes spilled). */
template <bool SPECTRUM>
__global__ void __launch_bounds__(THREADS, 3) columns_kernel(float2 *spec, float2 *fspec, long long vr)
{
    extern __shared__ float2 columns[]; /* COLS columns of N, COL_LINE apart */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int kb = blockIdx.x * COLS, nk = min(COLS, BINS - kb);
    float2 *tile = spec + (size_t)blockIdx.y * TILE_FLOAT2;
    for (int i = threadIdx.x; i < N * COLS; i += THREADS) { /* every copy in flight at once */
        const int y = i / COLS, c = i % COLS;
        if (c < nk) cp_async8(columns + c * COL_LINE + y, tile + y * PITCH + kb + c);
    }
    cp_async_wait_all();
    __syncthreads();
    for (int c = warp; c < nk; c += WARPS) {
        float2 *col = columns + c * COL_LINE, *h = fspec + (size_t)(kb + c) * N;
        float2 v[16];
#pragma unroll
        for (int j = 0; j < 16; ++j) v[j] = col[32 * j + lane];
        __syncwarp();
        fft512_forward(v, col, lane);
        if constexpr (SPECTRUM) {
#pragma unroll
            for (int j = 0; j < 16; ++j) h[32 * j + lane] = make_float2(v[j].x * SCALE, -v[j].y * SCALE);
        } else {
#pragma unroll
            for (int j = 0; j < 16; ++j) { /* conj(X H): the inverse as conj(DFT(conj(.))) */
                const float2 p = fft_cmul(v[j], __ldg(h + 32 * j + lane));
                v[j] = make_float2(p.x, -p.y);
            }
            fft512_from_digit_reversed(v, col, lane);
#pragma unroll
            for (int j = 0; j < 16; ++j) col[32 * j + lane] = make_float2(v[j].x, -v[j].y);
        }
    }
    if (SPECTRUM) return;
    __syncthreads();
    for (int i = threadIdx.x; i < vr * COLS; i += THREADS) {
        const int y = i / COLS, c = i % COLS;
        if (c < nk) tile[y * PITCH + kb + c] = columns[c * COL_LINE + y];
    }
}

/* Rows y and y + 1 of a tile's outputs from their half spectra (y + 1 past the tile's outputs:
 * zeros in its place, never the unfinished spectrum the columns pass left there). */
__global__ void __launch_bounds__(THREADS, 4) rows_inverse_kernel(float *out, const float2 *spec, geometry g,
                                                               long long first)
{
    __shared__ float2 scratch[WARPS][FFT512_WARP_FLOAT2];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long gt = first + blockIdx.y, b = gt / g.tiles, t = gt % g.tiles;
    const long long o_r = (t / g.tc) * g.vr, o_c = (t % g.tc) * g.vc;
    const long long nrows = min(g.vr, g.out_rows - o_r), ncols = min(g.vc, g.out_cols - o_c);
    const long long y = (long long)blockIdx.x * BLOCK_ROWS + 2 * warp;
    if (y >= nrows) return; /* the warp's rows: no barrier below but the warp's own */
    const bool second = y + 1 < nrows;
    const float2 *ra = spec + (size_t)blockIdx.y * TILE_FLOAT2 + y * PITCH, *rb = ra + PITCH;
    const int k0 = lane >> 1, k2 = lane & 1;
    float2 v[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) { /* register j of lane (k0, k2): bin k0 + 16 j + 256 k2 */
        const int m = k0 + 16 * j, at = k2 ? (m ? N / 2 - m : N / 2) : m;
        float2 a = ra[at], bb = second ? rb[at] : make_float2(0.0f, 0.0f);
        if (k2 && m) a.y = -a.y, bb.y = -bb.y;      /* Y[512 - k] = conj(Y[k]) */
        if (m == 0) a.y = 0.0f, bb.y = 0.0f;        /* bins 0 and 256 of a real row are real */
        v[j] = make_float2(a.x - bb.y, -(a.y + bb.x)); /* conj(Y_a + i Y_b) */
    }
    fft512_from_digit_reversed(v, scratch[warp], lane);
    float *oa = out + (size_t)b * (size_t)(g.out_rows * g.out_cols) + (size_t)((o_r + y) * g.out_cols + o_c);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const int c = 32 * j + lane;
        if (c >= ncols) continue;
        oa[c] = v[j].x;
        if (second) oa[g.out_cols + c] = -v[j].y;
    }
}

/* ---- the call ----------------------------------------------------------------------------- */

/* The filter's spectrum into fspec, its row spectra through scratch (TILE_FLOAT2), on stream. */
cudaError_t make_spectrum(float2 *fspec, float2 *scratch, const float *filter, int krows, int kcols,
                          cudaStream_t stream)
{
    cudaError_t e = mh_allow_smem((const void *)columns_kernel<true>);
    if (e != cudaSuccess) return e;
    geometry g{};
    g.krows = krows, g.kcols = kcols;
    rows_forward_kernel<true><<<N / BLOCK_ROWS, THREADS, 0, stream>>>(scratch, filter, g, 0);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    columns_kernel<true><<<(BINS + COLS - 1) / COLS, THREADS, COLUMNS_SMEM, stream>>>(scratch, fspec, N);
    return cudaGetLastError();
}

mh_status f3_run(mh_context *ctx, const mh_args *args)
{
    const mh_conv2d_args *a = &args->conv2d;
    const geometry g = geometry_of(a);
    const cudaStream_t st = mh_stream(ctx);
    const long long total = g.tiles * (long long)a->batch;
    if (total) {
        const long long cap = (long long)(MAX_CHUNK_BYTES / (TILE_FLOAT2 * sizeof(float2)));
        const long long chunk = total < cap ? total : cap;
        const size_t tiles_bytes = (size_t)chunk * TILE_FLOAT2 * sizeof(float2);
        const float2 *planned = a->plan ? (const float2 *)a->plan->large_spectrum : NULL; /* made, ready */
        void *ws = NULL;
        MH_TRY(mh_workspace(ctx, tiles_bytes + (planned ? 0 : SPECTRUM_FLOAT2 * sizeof(float2)), &ws));
        float2 *spec = (float2 *)ws, *fspec = (float2 *)((char *)ws + tiles_bytes);
        if (planned) fspec = (float2 *)planned;
        else MH_TRY(mh_cuda_status(ctx, make_spectrum(fspec, spec, a->filter, a->krows, a->kcols, st),
                                   "launching conv2d/fft-3pass's filter spectrum"));
        MH_CUDA_TRY(ctx, mh_allow_smem((const void *)columns_kernel<false>));
        const unsigned col_blocks = (BINS + COLS - 1) / COLS;
        for (long long first = 0; first < total; first += chunk) {
            const unsigned count = (unsigned)(total - first < chunk ? total - first : chunk);
            rows_forward_kernel<false><<<dim3(N / BLOCK_ROWS, count), THREADS, 0, st>>>(spec, a->in, g, first);
            MH_TRY(MH_LAUNCH_CHECK(ctx, "conv2d/fft-3pass rows_forward_kernel"));
            columns_kernel<false><<<dim3(col_blocks, count), THREADS, COLUMNS_SMEM, st>>>(spec, fspec, g.vr);
            MH_TRY(MH_LAUNCH_CHECK(ctx, "conv2d/fft-3pass columns_kernel"));
            const unsigned out_blocks = (unsigned)((g.vr + BLOCK_ROWS - 1) / BLOCK_ROWS);
            rows_inverse_kernel<<<dim3(out_blocks, count), THREADS, 0, st>>>(a->out, spec, g, first);
            MH_TRY(MH_LAUNCH_CHECK(ctx, "conv2d/fft-3pass rows_inverse_kernel"));
        }
    }
    return mh_conv2d_fix_nonfinite_border(ctx, a, "launching conv2d/fft-3pass direct_border_kernel");
}

const char *const f3_configs[] = {"auto", NULL};

const mh_row rows[] = {
    {{"conv2d/fft-3pass", MH_OP_CONV2D, MH_BACKEND_CUDA, 15, "global (3 passes, 1-D FFTs on chip)", "ours",
      "2-D overlap-save with 512 x 512 tiles: row transforms, column transforms with the filter's spectrum, inverse "
      "row transforms, each pass one kernel; filters up to 255 x 255, stacks"},
     mh_supports_any, f3_run, f3_configs, 1, MH_LIB_NONE, NULL,
     MH_ROW_LARGE_FILTERS | MH_ROW_NORMWISE | MH_ROW_BORDER_MODES},
};

} // namespace

size_t mh_conv2d_fft_3pass_spectrum_bytes(void) { return SPECTRUM_FLOAT2 * sizeof(float2); }
size_t mh_conv2d_fft_3pass_scratch_bytes(void) { return TILE_FLOAT2 * sizeof(float2); }

int mh_conv2d_fft_3pass_spectrum(void *spectrum, void *scratch, const float *filter, int krows, int kcols, void *stream)
{
    return (int)make_spectrum((float2 *)spectrum, (float2 *)scratch, filter, krows, kcols, (cudaStream_t)stream);
}

MH_ROW_GROUP(mh_conv2d_fft_3pass_rows, rows)

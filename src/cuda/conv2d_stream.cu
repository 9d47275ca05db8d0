/* conv2d/stream: ours, for the memory-bound end (small filters on large images).
 *
 * regtile loads a fresh tile with its halo for every block of 16 output rows, so the
 * (krows - 1) halo rows cross L2 again and again: at K = 3 on 8192 x 8192 ncu found L2 94.6%
 * busy and DRAM only 69%. Here a block walks down a tall strip (BHS output rows) instead,
 * keeping the last RB + krows - 1 input rows in a shared-memory ring and prefetching the
 * next RB rows with cp.async while it computes the current ones: each input row is read
 * once per strip, and the only halo left is a few columns at the strip's sides.
 *
 * Each thread computes RX consecutive outputs of one row per step from a register window
 * (16-byte shared loads, conflict-free as RX / 4 is odd). A step's outputs are staged in
 * shared memory and leave as coalesced 16-byte stores: stored straight from registers, each
 * warp store scattered 32 pieces over two rows and the kernel ran at half the speed.
 * Strips start on multiples of 4 columns, so loads and stores are both aligned; the
 * padding's misalignment becomes a compile-time shift S of the window instead. */
#include "common.cuh"
#include "tile_io.cuh"
#include "conv2d_window.cuh"

#include <stdio.h>

enum { RX = 20, TX = 16, TY = 8, THREADS = TX * TY, BW = TX * RX, RB = TY };

struct stream_params {
    const float *in, *filter;
    float *out;
    size_t rows, cols, out_rows, out_cols;
    int krows, kcols, lpr, lpc, bhs; /* bhs: output rows per strip, a multiple of RB */
};

struct stream_layout {
    int kc4, sw, nr; /* filter row stride, ring row stride, ring rows */
    int floats;
};

static __host__ __device__ stream_layout layout_for(int krows, int kcols, int shift)
{
    stream_layout l;
    l.kc4 = (kcols + 3) & ~3;
    l.sw = BW + ((shift + kcols + 2 + 3) & ~3); /* the last thread's last 16-byte window load */
    l.nr = 2 * RB + krows - 1;                   /* the rows of one step, and the next step's new ones */
    l.floats = krows * l.kc4 + l.nr * l.sw + RB * BW; /* filter, ring, output stage */
    return l;
}

/* Input rows rel0 .. rel0 + count - 1 of the strip (rel 0 = input row y_first) into their
 * ring slots (rel mod nr), columns ts .. ts + sw - 1, zero outside the image. */
static __device__ __forceinline__ void load_ring(const stream_params &p, const stream_layout &l, float *ring,
                                                 long long y_first, long long ts, int rel0, int count, int tid)
{
    const int groups = l.sw / 4;
    for (int item = tid; item < count * groups; item += THREADS) {
        const int t = item / groups, g = item - t * groups;
        float *d = ring + ((rel0 + t) % l.nr) * l.sw + 4 * g;
        const long long y = y_first + rel0 + t;
        if (y < 0 || y >= (long long)p.rows) {
            *reinterpret_cast<float4 *>(d) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            continue;
        }
        const float *row = p.in + (size_t)y * p.cols;
        load_group(d, row, (long long)p.cols, ts + 4LL * g, aligned16(row + ts));
    }
}

/* KC > 0: compile-time filter width (guards fold away); 0: p.kcols, at most KMAX.
 * S: window shift, (4 - lpc % 4) % 4, so that the strip's input starts 16-byte aligned. */
template <int KMAX, int KC, int S>
static __global__ void __launch_bounds__(THREADS) conv2d_stream_kernel(const stream_params p)
{
    constexpr int W = 4 * ((RX + S + (KC ? KC : KMAX) - 1 + 3) / 4), CHUNKS = KC ? (KC + 3) / 4 : KMAX / 4;
    const int kc = KC ? KC : p.kcols, kr = p.krows;
    extern __shared__ __align__(16) float smem[];
    const stream_layout l = layout_for(kr, kc, S);
    float *sf = smem, *ring = smem + kr * l.kc4, *stage = ring + l.nr * l.sw;
    const int tid = threadIdx.y * TX + threadIdx.x;
    const long long x0 = (long long)blockIdx.x * BW, ts = x0 - p.lpc - S; /* ts % 4 == 0 */
    const long long yb = (long long)blockIdx.y * p.bhs, y_first = yb - p.lpr;
    const long long rows_left = (long long)p.out_rows - yb;
    const int steps = (int)(((rows_left < p.bhs ? rows_left : p.bhs) + RB - 1) / RB);

    for (int t = tid; t < kr * l.kc4; t += THREADS) {
        const int i = t / l.kc4, j = t - i * l.kc4;
        sf[t] = j < kc ? p.filter[i * kc + j] : 0.0f;
    }
    load_ring(p, l, ring, y_first, ts, 0, RB + kr - 1, tid);
    cp_async_commit();

    const int nload = (RX + S + kc - 1 + 3) / 4;
    for (int s = 0; s < steps; ++s) {
        if (s + 1 < steps) { /* the next step's new rows, while this one computes */
            load_ring(p, l, ring, y_first, ts, (s + 1) * RB + kr - 1, RB, tid);
            cp_async_commit();
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();

        float acc[RX];
#pragma unroll
        for (int r = 0; r < RX; ++r) acc[r] = 0.0f;
        const int rel = s * RB + threadIdx.y; /* this thread's output row, relative to the strip */
        for (int i = 0; i < kr; ++i) {
            const float *src = ring + ((rel + i) % l.nr) * l.sw + threadIdx.x * RX;
            float w[W];
            load_window(w, src, nload);
            accumulate_filter_row<RX, W, CHUNKS, S>(acc, w, sf + i * l.kc4, kc);
        }

#pragma unroll
        for (int r = 0; r < RX; r += 4)
            *reinterpret_cast<float4 *>(stage + threadIdx.y * BW + threadIdx.x * RX + r) =
                make_float4(acc[r], acc[r + 1], acc[r + 2], acc[r + 3]);
        __syncthreads();
        store_rows(p.out, p.out_rows, p.out_cols, yb + s * RB, x0, stage, BW, RB, BW, tid, THREADS);
        __syncthreads(); /* this step's rows and stage are read: the next step may overwrite them */
    }
}

/* ---- instances, launch, registry ----------------------------------------------------------- */

typedef void (*kernel_fn)(const stream_params);

/* Per window shift S: compile-time widths 3, 5, 7, then generic up to 16 and 32. */
#define MH_STREAM_SET(S)                                                                                   \
    {conv2d_stream_kernel<4, 3, S>, conv2d_stream_kernel<8, 5, S>, conv2d_stream_kernel<8, 7, S>,           \
     conv2d_stream_kernel<16, 0, S>, conv2d_stream_kernel<32, 0, S>}

static const kernel_fn kernels[4][5] = {MH_STREAM_SET(0), MH_STREAM_SET(1), MH_STREAM_SET(2), MH_STREAM_SET(3)};

static kernel_fn kernel_for(int kcols, int shift)
{
    const int which = kcols == 3 ? 0 : kcols == 5 ? 1 : kcols == 7 ? 2 : kcols <= 16 ? 3 : 4;
    return kernels[shift][which];
}

/* "h<output rows per strip>"; [0] is the default, the fastest measured on the H100. */
static const char *const stream_configs[] = {"h64", "h128", NULL};

static int strip_rows(int config)
{
    int h = 64;
    sscanf(stream_configs[config], "h%d", &h);
    return h;
}

static int shift_of(const mh_conv2d_args *a) { return (4 - a->lpc % 4) % 4; }

static int stream_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    if (!mh_conv2d_zero_pad_only(a, why, len)) return 0;
    const size_t bytes = (size_t)layout_for(a->krows, a->kcols, shift_of(a)).floats * sizeof(float);
    return mh_tile_fits(bytes, a->out_rows, (size_t)strip_rows(x->config), why, len);
}

static mh_status stream_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    const int shift = shift_of(a);
    stream_params p;
    p.in = a->in, p.filter = a->filter, p.out = a->out;
    p.rows = a->rows, p.cols = a->cols, p.out_rows = a->out_rows, p.out_cols = a->out_cols;
    p.krows = a->krows, p.kcols = a->kcols, p.lpr = a->lpr, p.lpc = a->lpc, p.bhs = strip_rows(x->config);
    const kernel_fn kernel = kernel_for(a->kcols, shift);
    const size_t bytes = (size_t)layout_for(a->krows, a->kcols, shift).floats * sizeof(float);
    MH_CUDA_TRY(ctx, mh_allow_smem((const void *)kernel));
    dim3 grid((unsigned)mh_ceil_div(a->out_cols, BW), (unsigned)mh_ceil_div(a->out_rows, (size_t)p.bhs));
    kernel<<<grid, dim3(TX, TY), bytes, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "conv2d_stream_kernel");
}

static const mh_row rows[] = {
    {{"conv2d/stream", MH_OP_CONV2D, MH_BACKEND_CUDA, 8, "global+shared+registers", "ours",
      "strips streamed through a shared-memory row ring: each input row read once (small filters)"},
     stream_supports, stream_run, stream_configs},
};

MH_ROW_GROUP(mh_conv2d_stream_rows, rows)

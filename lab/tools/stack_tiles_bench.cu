/* Images and stacks of images, 5 x 5 correlate in reflect mode, in one kernel of staged tiles
 * (issue 64: a stack of 1000 x 256^2 runs 1.50x its copy through conv2d/walk, target 1.3x; and a
 * single image past 2^18 outputs takes walk's two launches, ~3 us more of the host a call).
 *
 * walk runs a bordered call as two launches: the walking kernel pads with zeros, then the ring's
 * kernel recomputes the outputs whose window meets the border (staging each ring tile's window).
 * Here a block stages a tile of R output rows by up to 256 columns of one image, with its K - 1
 * halo rows and columns, in shared memory, mapping the rows and columns by the mode as it copies
 * them, so one launch writes every output once: the image is read (R + K - 1) / R times (the
 * halo columns from L2) and written once. Each thread sums 4 columns x 8 rows from register
 * windows, filter rows then columns from 0 as walk and its ring kernel sum (the results should
 * match theirs bit for bit). Two kernels: a tile a block (stage, one barrier, sum and store), and
 * a resident grid walking the tiles with the next tile's cp.async copies in flight while this one
 * is summed.
 *
 * Checks: outputs poisoned with NaN before each kernel's first run; every output of three images
 * (first, middle, last; of an image past 1024^2, 16 rows at its top, middle and bottom) against a
 * double reference within K^2 eps32 sum |w||x| (the bound of a sum of K^2 FMAs; dark pixels
 * beside bright ones); every output of the stack finite.
 *   nvcc -O3 -arch=sm_90 lab/tools/stack_tiles_bench.cu -o stack_tiles_bench
 *   ./stack_tiles_bench [images] [side]      (1000 256 by default; side a multiple of 4, >= 8) */
#include "tiles_common.cuh"

#include <algorithm>

enum { K = 5, HALF = K / 2, ROWS_A_THREAD = 8, TILE_COLS = 256, LEAD = 4, STRIDE = TILE_COLS + 2 * LEAD };
__constant__ float taps[K * K];

/* Tile `item` of the stack: image, first output row and column, rows and columns (a multiple of
 * 4). Tiles run along an image's rows of tiles, then down its strips, then through the images. */
struct tile_at {
    int image, y0, x0, rows, cols;
};
template <int R> static __device__ __forceinline__ tile_at tile_of(int item, int side)
{
    const int across = (side + TILE_COLS - 1) / TILE_COLS, strips = (side + R - 1) / R;
    tile_at t;
    t.image = item / (across * strips);
    const int rest = item - t.image * across * strips, strip = rest / across;
    t.y0 = strip * R, t.x0 = (rest - strip * across) * TILE_COLS;
    t.rows = min(R, side - t.y0), t.cols = min((int)TILE_COLS, side - t.x0);
    return t;
}

/* Shared layout: image column x0 + c at tile column LEAD + c (rows of 16-byte groups), the K - 1
 * halo rows above and below, HALF columns either side. */
static __device__ __forceinline__ void cp_async16(void *dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src));
}
static __device__ __forceinline__ void cp_async4(void *dst, const void *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src));
}
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
static __device__ __forceinline__ void cp_async_wait_all_but_last() { asm volatile("cp.async.wait_group 1;\n" ::); }

/* The tile's inputs into shared memory, rows and columns mapped by the mode: by cp.async (ASYNC,
 * waited for by the caller) or plain loads. */
template <bool ASYNC>
static __device__ __forceinline__ void stage(float *tile, const float *in, int side, const tile_at &t)
{
    const float *src = in + (size_t)t.image * side * side;
    const int groups = t.cols / 4, staged = t.rows + 2 * HALF;
    for (int e = threadIdx.x; e < staged * groups; e += blockDim.x) {
        const int r = e / groups, g = e - r * groups;
        const float *from = src + (size_t)reflect(t.y0 - HALF + r, side) * side + t.x0 + 4 * g;
        float *to = tile + r * STRIDE + LEAD + 4 * g;
        if (ASYNC) cp_async16(to, from);
        else *reinterpret_cast<float4 *>(to) = __ldg(reinterpret_cast<const float4 *>(from));
    }
    for (int e = threadIdx.x; e < staged * 2 * HALF; e += blockDim.x) { /* the columns either side */
        const int r = e / (2 * HALF), c = e - r * 2 * HALF;
        const int x = c < HALF ? c - HALF : t.cols + c - HALF; /* from the tile's first column */
        const float *from = src + (size_t)reflect(t.y0 - HALF + r, side) * side + reflect(t.x0 + x, side);
        float *to = tile + r * STRIDE + LEAD + x;
        if (ASYNC) cp_async4(to, from);
        else *to = __ldg(from);
    }
}

/* The K x K sums of a staged tile: each thread 4 columns x ROWS_A_THREAD rows from register
 * windows, summed filter rows then columns from 0. A thread's window, tile columns LEAD + x - HALF
 * .. + 7, is read as float2 pairs (LEAD - HALF even: 8-byte aligned); its outputs are stored as
 * one float4 a row. */
template <int R>
static __device__ __forceinline__ void sum_tile(const float *tile, float *out, int side, const tile_at &t)
{
    static_assert((LEAD - HALF) % 2 == 0, "the windows' float2 reads start on 8 bytes");
    const int x = 4 * (threadIdx.x % 64), oy0 = (threadIdx.x / 64) * ROWS_A_THREAD;
    if (x >= t.cols || oy0 >= t.rows) return;
    float acc[ROWS_A_THREAD][4];
#pragma unroll
    for (int o = 0; o < ROWS_A_THREAD; ++o)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[o][c] = 0.0f;
#pragma unroll
    for (int r = 0; r < ROWS_A_THREAD + K - 1; ++r) {
        const float2 *row = reinterpret_cast<const float2 *>(tile + (oy0 + r) * STRIDE + LEAD + x - HALF);
        float v[8];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const float2 pair = row[q];
            v[2 * q] = pair.x, v[2 * q + 1] = pair.y;
        }
#pragma unroll
        for (int o = 0; o < ROWS_A_THREAD; ++o) {
            const int i = r - o;
            if (i < 0 || i >= K) continue;
#pragma unroll
            for (int j = 0; j < K; ++j)
#pragma unroll
                for (int c = 0; c < 4; ++c) acc[o][c] = fmaf(v[c + j], taps[i * K + j], acc[o][c]);
        }
    }
    float *dst = out + (size_t)t.image * side * side + (size_t)(t.y0 + oy0) * side + t.x0 + x;
#pragma unroll
    for (int o = 0; o < ROWS_A_THREAD; ++o)
        if (oy0 + o < t.rows)
            __stcs(reinterpret_cast<float4 *>(dst + (size_t)o * side), make_float4(acc[o][0], acc[o][1], acc[o][2], acc[o][3]));
}

/* A tile a block: staged with plain loads, one barrier, summed. */
template <int R>
__global__ void __launch_bounds__((R / ROWS_A_THREAD) * 64) tile_kernel(const float *__restrict__ in,
                                                                         float *__restrict__ out, int side)
{
    extern __shared__ __align__(16) float tile[];
    const tile_at t = tile_of<R>(blockIdx.x, side);
    stage<false>(tile, in, side, t);
    __syncthreads();
    sum_tile<R>(tile, out, side, t);
}

/* A resident grid walking the tiles: the next tile's copies in flight (cp.async, the other of two
 * buffers) while this one is summed and stored. */
template <int R>
__global__ void __launch_bounds__((R / ROWS_A_THREAD) * 64) tile_pipelined(const float *__restrict__ in,
                                                                            float *__restrict__ out, int side, int items)
{
    extern __shared__ __align__(16) float smem[];
    constexpr int TILE_FLOATS = (R + 2 * HALF) * STRIDE;
    int item = blockIdx.x;
    if (item >= items) return;
    stage<true>(smem, in, side, tile_of<R>(item, side));
    cp_async_commit();
    for (int k = 0; item < items; ++k, item += gridDim.x) {
        const int next = item + gridDim.x;
        if (next < items) stage<true>(smem + ((k + 1) & 1) * TILE_FLOATS, in, side, tile_of<R>(next, side));
        cp_async_commit(); /* an empty group at the last tile keeps the count */
        cp_async_wait_all_but_last();
        __syncthreads(); /* this tile's copies, every thread's, have landed */
        sum_tile<R>(smem + (k & 1) * TILE_FLOATS, out, side, tile_of<R>(item, side));
        __syncthreads(); /* read before the iteration after next stages into it */
    }
}

/* Every output of image b against the double reference; returns the outputs out of bound. */
static size_t check_image(const std::vector<float> &x, const std::vector<float> &y, const float *w, int side, size_t b)
{
    size_t bad = 0;
    const float *in = x.data() + b * side * side;
    const float *got = y.data() + b * side * side;
    const int band = side <= 1024 ? side : 16; /* a large image: 16 rows at its top, middle and bottom */
    for (int k = 0, r = 0; k < side; ++k, ++r) {
        if (band < side && k == band) r = side / 2 - band / 2;
        if (band < side && k == 2 * band) r = side - band;
        if (band < side && k == 3 * band) break;
        for (int c = 0; c < side; ++c) {
            double ref = 0.0, mag = 0.0;
            for (int i = 0; i < K; ++i)
                for (int j = 0; j < K; ++j) {
                    const double v = in[reflect(r + i - HALF, side) * side + reflect(c + j - HALF, side)];
                    ref += (double)w[i * K + j] * v;
                    mag += fabs((double)w[i * K + j] * v);
                }
            const double g = got[(size_t)r * side + c];
            if (!(fabs(g - ref) <= K * K * 0x1p-24 * mag)) {
                if (bad < 3) fprintf(stderr, "image %zu (%d, %d): %.9g, reference %.9g\n", b, r, c, g, ref);
                ++bad;
            }
        }
    }
    return bad;
}

/* Runs one kernel: checked on its first launch (outputs poisoned with NaN), then timed. */
template <int R, bool PIPELINED>
static void run(const float *din, float *dout, size_t images, int side, const std::vector<float> &x, const float *w,
                double copy_ms)
{
    const size_t smem = (size_t)(PIPELINED ? 2 : 1) * (R + 2 * HALF) * STRIDE * sizeof(float);
    const void *fn = PIPELINED ? (const void *)tile_pipelined<R> : (const void *)tile_kernel<R>;
    const dim3 block((R / ROWS_A_THREAD) * 64);
    CHECK_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    /* below 2^31: images < 2^16, tiles an image at most (16384 / 256) x (16384 / 8) = 2^17 */
    const long long tiles = (long long)((side + TILE_COLS - 1) / TILE_COLS) * ((side + R - 1) / R) * (long long)images;
    if (tiles > INT32_MAX) {
        printf("%lld tiles: past this harness's int indices\n", tiles);
        return;
    }
    const int items = (int)tiles;
    int resident = 0, sms = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, fn, (int)block.x, smem));
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int grid = PIPELINED ? std::min(items, resident * sms) : items;
    auto launch = [&] {
        if (PIPELINED) tile_pipelined<R><<<grid, block, smem>>>(din, dout, side, items);
        else tile_kernel<R><<<grid, block, smem>>>(din, dout, side);
    };
    const size_t values = images * side * side;
    CHECK_CUDA(cudaMemset(dout, 0xff, values * sizeof(float))); /* NaN: an output never written fails */
    launch();
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> y(values);
    CHECK_CUDA(cudaMemcpy(y.data(), dout, values * sizeof(float), cudaMemcpyDeviceToHost));
    size_t nonfinite = 0, bad = 0;
    for (float v : y) nonfinite += !std::isfinite(v);
    for (size_t b : {(size_t)0, images / 2, images - 1}) /* each image once */
        if (b == 0 || (b == images / 2 && b != 0) || (b == images - 1 && b != images / 2)) bad += check_image(x, y, w, side, b);
    const float ms = best_ms(launch);
    printf("%s R = %2d (%3u threads, %5zu B shared, %2d blocks an SM): %.4f ms, %.3fx the copy; %zu non-finite, %zu "
           "over the bound in 3 images%s\n",
           PIPELINED ? "pipelined" : "a tile a block", R, block.x, smem, resident, ms, ms / copy_ms, nonfinite, bad,
           nonfinite || bad ? "  FAILED" : "");
}

int main(int argc, char **argv)
{
    const size_t images = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000;
    const int side = argc > 2 ? atoi(argv[2]) : 256;
    if (images < 1 || images > 65535 || side < 8 || side % 4 || side > 16384) {
        fprintf(stderr, "usage: stack_tiles_bench [images 1..65535] [side: a multiple of 4, 8..16384]\n");
        return 2;
    }
    const size_t values = images * side * side;
    const std::vector<float> x = dark_beside_bright(values);
    float w[K * K];
    for (int t = 0; t < K * K; ++t) w[t] = (float)(0.5 + 0.5 * sin(1.0 + t)) * (t % 3 ? 1.0f : -1.0f);
    CHECK_CUDA(cudaMemcpyToSymbol(taps, w, sizeof w));
    float *din, *dout;
    CHECK_CUDA(cudaMalloc(&din, values * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dout, values * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(din, x.data(), values * sizeof(float), cudaMemcpyHostToDevice));
    const float copy_ms = copy_ms_of(din, dout, values * sizeof(float));
    const float memcpy_ms = best_ms([&] { CHECK_CUDA(cudaMemcpyAsync(dout, din, values * sizeof(float), cudaMemcpyDeviceToDevice)); });
    printf("%zu images of %d^2 float32, 5 x 5 reflect: copy kernel %.4f ms (%.0f GB/s), cudaMemcpy %.4f ms\n", images,
           side, copy_ms, 2.0 * values * sizeof(float) / copy_ms / 1e6, memcpy_ms);
    run<16, false>(din, dout, images, side, x, w, copy_ms);
    run<32, false>(din, dout, images, side, x, w, copy_ms);
    run<8, true>(din, dout, images, side, x, w, copy_ms);
    run<16, true>(din, dout, images, side, x, w, copy_ms);
    run<32, true>(din, dout, images, side, x, w, copy_ms);
    CHECK_CUDA(cudaFree(din));
    CHECK_CUDA(cudaFree(dout));
    return 0;
}

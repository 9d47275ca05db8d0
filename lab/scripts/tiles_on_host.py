#!/usr/bin/env python3
"""The staged-tile harnesses' kernels (lab/tools/sep_tiles_bench.cu, lab/tools/stack_tiles_bench.cu)
and the library's sepfilter/tiles kernel (src/cuda/sepfilter_tiles.cu, its device code) run on the
host, so that their index arithmetic (staging, the passes, partial tiles at the
image's right and bottom edges, the RGB layout, the resident grid's walk over the tiles and its
two buffers) is checked against the harnesses' own checks on a machine without a GPU. Each block
runs as blockDim host threads that meet at a barrier where the kernel calls __syncthreads; the
blocks run one after another, sharing one buffer for shared memory. The CUDA built-ins the
kernels use are mapped to host code (loads and stores plain, fmaf the C library's, cp.async a
copy made at once: the walk's indexing is checked, not its overlap). tiles_common.cuh's launches
are left out (__CUDACC__), its taps, data and reflect kept. sepfilter/tiles is checked bit for bit
against scipy's two passes written here in float (each pass from 0.0f with fmaf in tap order,
divided, the first pass's result extended by the horizontal mode): every mode per axis, origins,
cval NaN and not, divisors, rows of 16 bytes and not, partial tiles, a stack.
  python3 lab/scripts/tiles_on_host.py      (g++ with C++20 and the CUDA headers; a line a shape)"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "lab", "tools")
CUDA_INCLUDE = os.environ.get("CUDA_INCLUDE", "/usr/local/cuda/include")

SHIM = r'''
#include <cuda_runtime.h>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __forceinline__
#define __forceinline__ inline
#undef __constant__
#define __constant__
#define __launch_bounds__(...)
static dim3 blockIdx, blockDim, gridDim;
static thread_local dim3 threadIdx;
static std::barrier<> *block_barrier;
alignas(16) static float g_smem[1 << 18];
template <typename T> static T __ldg(const T *p) { return *p; }
template <typename T> static void __stcs(T *p, T v) { *p = v; }
static void __syncthreads() { block_barrier->arrive_and_wait(); }
static int __float2int_rz(float v) { return (int)v; }
static int min(int a, int b) { return a < b ? a : b; }
/* the blocks of a grid one after another, each as blockDim host threads */
static void launch(dim3 grid, unsigned threads, const std::function<void()> &kernel)
{
    gridDim = grid, blockDim = dim3(threads);
    for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
            for (unsigned x = 0; x < grid.x; ++x) {
                blockIdx = dim3(x, y, z);
                std::barrier<> bar((std::ptrdiff_t)threads);
                block_barrier = &bar;
                std::vector<std::thread> pool;
                for (unsigned t = 0; t < threads; ++t)
                    pool.emplace_back([&, t] { threadIdx = dim3(t); kernel(); });
                for (auto &th : pool) th.join();
            }
}
'''

CP_ASYNC = r'''static void cp_async16(void *dst, const void *src) { memcpy(dst, src, 16); }
static void cp_async4(void *dst, const void *src) { memcpy(dst, src, 4); }
static void cp_async_commit() {}
static void cp_async_wait_all_but_last() {}
'''

SEP_DRIVER = r'''
template <typename T, int C, int K, int TR, int TCP> static void emulate(int n, double sigma)
{
    const std::vector<float> w = gaussian_taps(sigma);
    if ((int)w.size() != K) return;
    memcpy(taps, w.data(), K * sizeof(float));
    std::vector<T> x((size_t)C * n * n), y((size_t)C * n * n, (T)255);
    uint64_t s = 7;
    for (auto &v : x) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v = sizeof(T) == 1 ? (T)(s >> 56) : (T)(((double)(s >> 11) / 9007199254740992.0 - 0.5) * 100.0);
    }
    if (sizeof(T) == 4) for (auto &v : y) v = (T)NAN;
    const dim3 grid((unsigned)((n + TCP - 1) / TCP), (unsigned)((n + TR - 1) / TR));
    launch(grid, THREADS, [&] { sep_tile_kernel<T, C, K, TR, TCP>(x.data(), y.data(), n); });
    size_t nonfinite = 0;
    for (T v : y) nonfinite += !std::isfinite((float)v);
    const size_t bad = check_rows(x, y, w, n, 0, n);
    printf("sep_tiles %s n=%d K=%d TR=%d TCP=%d: %zu non-finite, %zu wrong%s\n", C == 1 ? "gray" : "rgb", n, K, TR, TCP,
           nonfinite, bad, nonfinite || bad ? "  FAILED" : "");
}
int main()
{
    emulate<float, 1, 17, 32, 128>(200, 2.0);
    emulate<float, 1, 17, 64, 128>(136, 2.0);
    emulate<float, 1, 9, 32, 128>(260, 1.0);
    emulate<float, 1, 17, 32, 256>(300, 2.0);
    emulate<uint8_t, 3, 17, 32, 64>(100, 2.0);
    emulate<uint8_t, 3, 17, 16, 128>(140, 2.0);
    emulate<uint8_t, 3, 9, 32, 64>(68, 1.0);
    return 0;
}
'''

STACK_DRIVER = r'''
template <int R, bool PIPELINED> static void emulate(size_t images, int side)
{
    float w[K * K];
    for (int t = 0; t < K * K; ++t) w[t] = (float)(0.5 + 0.5 * sin(1.0 + t)) * (t % 3 ? 1.0f : -1.0f);
    memcpy(taps, w, sizeof w);
    const std::vector<float> x = dark_beside_bright(images * side * side);
    std::vector<float> y(x.size(), NAN);
    const int items = (int)(((side + TILE_COLS - 1) / TILE_COLS) * ((side + R - 1) / R) * images);
    const unsigned threads = (R / ROWS_A_THREAD) * 64;
    if (PIPELINED) /* fewer blocks than tiles: each walks several, through both buffers */
        launch(dim3((unsigned)std::min(items, 5)), threads, [&] { tile_pipelined<R>(x.data(), y.data(), side, items); });
    else
        launch(dim3((unsigned)items), threads, [&] { tile_kernel<R>(x.data(), y.data(), side); });
    size_t nonfinite = 0, bad = 0;
    for (float v : y) nonfinite += !std::isfinite(v);
    for (size_t b = 0; b < images; ++b) bad += check_image(x, y, w, side, b);
    printf("stack_tiles %s R=%d %zu x %d^2: %zu non-finite, %zu wrong%s\n", PIPELINED ? "pipelined" : "a tile a block",
           R, images, side, nonfinite, bad, nonfinite || bad ? "  FAILED" : "");
}
int main()
{
    emulate<16, false>(3, 64);
    emulate<32, false>(2, 260);
    emulate<8, true>(3, 64);
    emulate<16, true>(2, 260);
    emulate<32, true>(1, 520);
    return 0;
}
'''

ROW_DRIVER = r'''
/* scipy's two passes over one image, float32 as the library's rows sum them: the vertical first
 * (the horizontal pass reads its result extended by the horizontal mode) or the horizontal */
static void reference(const tiles_params &p, int k, bool hfirst, const float *x, float *y)
{
    const long long R = p.rows, C = p.cols;
    std::vector<float> mid(R * C);
    /* one pass from src into dst: along the columns (vertical) or the rows, each sum from 0 in tap
     * order, the input extended by that axis's mode, divided */
    auto pass = [&](bool vertical, const float *src, float *dst) {
        const long long n = vertical ? R : C, step = vertical ? C : 1;
        const int anchor = vertical ? p.av : p.ah, mode = vertical ? p.mode_v : p.mode_h;
        const float *taps = vertical ? p.u : p.v, div = vertical ? p.div_v : p.div_h;
        for (long long r = 0; r < R; ++r)
            for (long long c = 0; c < C; ++c) {
                const long long at = vertical ? r : c, line = r * C + c - at * step;
                float acc = 0.0f;
                for (int i = 0; i < k; ++i) {
                    const long long m = mh_border_index(at - anchor + i, n, mode);
                    acc = fmaf(m >= 0 ? src[line + m * step] : p.cval, taps[i], acc);
                }
                dst[r * C + c] = div != 1.0f ? acc / div : acc;
            }
    };
    pass(!hfirst, x, mid.data());
    pass(hfirst, mid.data(), y);
}
template <int K, bool HF> static int emulate(long long batch, long long rows, long long cols, unsigned seed)
{
    tiles_params p = {};
    p.rows = rows, p.cols = cols, p.image_values = rows * cols;
    p.mode_v = seed % 5, p.mode_h = (seed / 5 + seed) % 5;
    p.av = K / 2 + (seed % 2 ? -(K / 2) : (K - 1) / 2);
    p.ah = K / 2 + (seed % 4 < 2 || K < 8 ? 0 : (seed % 8 < 6 ? 4 : -4));
    p.cval = seed % 7 == 0 ? NAN : -1.5f, p.div_v = seed % 5 == 2 ? 3.0f : 1.0f, p.div_h = seed % 5 == 1 ? 5.0f : 1.0f;
    uint64_t s = seed * 2654435761u + 1;
    auto next = [&] { s = s * 6364136223846793005ull + 1442695040888963407ull; return (double)(s >> 11) / 9007199254740992.0; };
    for (int i = 0; i < K; ++i) p.u[i] = (float)(next() - 0.3), p.v[i] = (float)(next() - 0.3);
    std::vector<float> x(batch * rows * cols + 4), y(batch * rows * cols, NAN), want(batch * rows * cols);
    for (auto &v : x) v = next() < 0.5 ? (float)(next() * 1e-3) : (float)(next() * 1e3); /* dark beside bright */
    const int offset = cols % 4 == 0 && seed % 3 ? 0 : 1; /* rows off 16 bytes too */
    p.in = x.data() + offset, p.out = y.data();
    p.vec = ((uintptr_t)p.in % 16 == 0) && cols % 4 == 0;
    for (long long b = 0; b < batch; ++b) {
        tiles_params q = p;
        q.in = p.in + b * p.image_values;
        reference(q, K, HF, q.in, want.data() + b * p.image_values);
    }
    const dim3 grid((unsigned)((cols + TILES_COLS - 1) / TILES_COLS), (unsigned)((rows + TILES_ROWS - 1) / TILES_ROWS),
                    (unsigned)batch);
    launch(grid, TILES_THREADS, [&] { tiles_kernel<K, HF>(p); });
    size_t bad = 0;
    for (size_t i = 0; i < y.size(); ++i)
        if (memcmp(&y[i], &want[i], 4) != 0 && !(std::isnan(y[i]) && std::isnan(want[i]))) {
            if (bad < 3) fprintf(stderr, "  value %zu: %.9g, want %.9g\n", i, y[i], want[i]);
            ++bad;
        }
    printf("sepfilter/tiles %s K=%d %lld x %lld x %lld modes %d/%d anchors %d/%d%s%s: %zu wrong%s\n",
           HF ? "hfirst" : "vfirst", K, batch, rows, cols,
           p.mode_v, p.mode_h, p.av, p.ah, p.vec ? "" : " (rows off 16 bytes)", std::isnan(p.cval) ? " cval NaN" : "",
           bad, bad ? "  FAILED" : "");
    return bad != 0;
}
int main()
{
    static const long long shapes[][3] = {{1, 1, 1}, {1, 5, 3}, {1, 37, 517}, {2, 33, 129}, {1, 70, 260}, {3, 2, 9}};
    int rc = 0;
    unsigned seed = 1;
    for (const auto &sh : shapes) {
        rc |= emulate<2, false>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<2, true>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<3, false>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<3, true>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<5, false>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<5, true>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<8, false>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<8, true>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<17, false>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<17, true>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<33, false>(sh[0], sh[1], sh[2], seed++);
        rc |= emulate<33, true>(sh[0], sh[1], sh[2], seed++);
    }
    return rc;
}
'''


def sep_source():
    src = open(os.path.join(TOOLS, "sep_tiles_bench.cu")).read()
    kernel = src[:src.index("template <typename T, int C, int K, int TR, int TCP>\nstatic void run(")]
    return kernel.replace("extern __shared__ __align__(16) float smem[];", "float *smem = g_smem;") + SEP_DRIVER


def stack_source():
    src = open(os.path.join(TOOLS, "stack_tiles_bench.cu")).read()
    kernel = src[:src.index("/* Runs one kernel: checked on its first launch")]
    first = kernel.index("static __device__ __forceinline__ void cp_async16(")
    last = kernel.index("static __device__ __forceinline__ void cp_async_wait_all_but_last()")
    last = kernel.index("\n", last) + 1
    kernel = kernel[:first] + CP_ASYNC + kernel[last:]
    kernel = kernel.replace("extern __shared__ __align__(16) float tile[];", "float *tile = g_smem;")
    kernel = kernel.replace("extern __shared__ __align__(16) float smem[];", "float *smem = g_smem;")
    return kernel + STACK_DRIVER


def row_source():
    """sepfilter/tiles's device code, between its includes and its launch."""
    src = open(os.path.join(ROOT, "src", "cuda", "sepfilter_tiles.cu")).read()
    kernel = src[src.index("enum { TILES_THREADS"):src.index("/* ---- launch, registry")]
    kernel = kernel.replace("extern __shared__ __align__(16) float smem[];", "float *smem = g_smem;")
    head = '#include "core/border.h"\n#define __grid_constant__\nstatic bool mh_aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }\n'
    return head + kernel + ROW_DRIVER


def main():
    rc = 0
    with tempfile.TemporaryDirectory() as work:
        for name, source in (("sep_tiles", sep_source()), ("stack_tiles", stack_source()), ("sepfilter_tiles", row_source())):
            cpp, exe = os.path.join(work, name + ".cpp"), os.path.join(work, name)
            with open(cpp, "w") as f:
                f.write(SHIM + source)
            subprocess.run(["g++", "-O1", "-std=c++20", "-w", "-pthread", "-I", CUDA_INCLUDE, "-I", TOOLS, "-I",
                            os.path.join(ROOT, "src"), "-I", os.path.join(ROOT, "include"), cpp, "-o", exe],
                           check=True)
            rc |= subprocess.run([exe]).returncode
    return rc


if __name__ == "__main__":
    sys.exit(main())

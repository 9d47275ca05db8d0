#!/usr/bin/env python3
"""The staged-tile harnesses' kernels (lab/tools/sep_tiles_bench.cu, lab/tools/stack_tiles_bench.cu)
run on the host, so that their index arithmetic (staging, the passes, partial tiles at the
image's right and bottom edges, the RGB layout, the resident grid's walk over the tiles and its
two buffers) is checked against the harnesses' own checks on a machine without a GPU. Each block
runs as blockDim host threads that meet at a barrier where the kernel calls __syncthreads; the
blocks run one after another, sharing one buffer for shared memory. The CUDA built-ins the
kernels use are mapped to host code (loads and stores plain, fmaf the C library's, cp.async a
copy made at once: the walk's indexing is checked, not its overlap). tiles_common.cuh's launches
are left out (__CUDACC__), its taps, data and reflect kept.
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


def main():
    rc = 0
    with tempfile.TemporaryDirectory() as work:
        for name, source in (("sep_tiles", sep_source()), ("stack_tiles", stack_source())):
            cpp, exe = os.path.join(work, name + ".cpp"), os.path.join(work, name)
            with open(cpp, "w") as f:
                f.write(SHIM + source)
            subprocess.run(["g++", "-O1", "-std=c++20", "-w", "-pthread", "-I", CUDA_INCLUDE, "-I", TOOLS, cpp, "-o", exe],
                           check=True)
            rc |= subprocess.run([exe]).returncode
    return rc


if __name__ == "__main__":
    sys.exit(main())

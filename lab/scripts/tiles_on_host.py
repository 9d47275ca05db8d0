#!/usr/bin/env python3
"""The staged-tile Gaussian's kernel (lab/tools/sep_tiles_bench.cu) run on the host, one block at a
time and one thread a block, so that its index arithmetic (staging, both passes, partial tiles at
the image's right and bottom edges, the RGB layout) is checked against the harness's own checks
on a machine without a GPU. Every loop of the kernel strides by THREADS, so with THREADS = 1 a
block's single thread does each phase's items in order and __syncthreads has nothing to wait
for. The CUDA built-ins it uses are mapped to host code (loads and stores plain, fmaf the C
library's); shared memory is a static buffer; tiles_common.cuh's launches are left out
(__CUDACC__), its taps, data and reflect kept.
  python3 lab/scripts/tiles_on_host.py      (g++ and the CUDA headers; prints one line a shape)"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "lab", "tools", "sep_tiles_bench.cu")
CUDA_INCLUDE = os.environ.get("CUDA_INCLUDE", "/usr/local/cuda/include")

SHIM = r'''
#include <cuda_runtime.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
struct emu_idx { unsigned x, y, z; };
static emu_idx blockIdx, threadIdx;
alignas(16) static float g_smem[1 << 20];
template <typename T> static T __ldg(const T *p) { return *p; }
template <typename T> static void __stcs(T *p, T v) { *p = v; }
static void __syncthreads() {}
static int __float2int_rz(float v) { return (int)v; }
static int min(int a, int b) { return a < b ? a : b; }
'''

DRIVER = r'''template <typename T, int C, int K, int TR, int TCP> static void emulate(int n, double sigma)
{
    std::vector<float> w = gaussian_taps(sigma);
    if ((int)w.size() != K) { printf("skip\n"); return; }
    memcpy(taps, w.data(), K * sizeof(float));
    std::vector<T> x((size_t)C * n * n), y((size_t)C * n * n, (T)255);
    uint64_t s = 7;
    for (auto &v : x) { s = s * 6364136223846793005ull + 1442695040888963407ull;
        v = sizeof(T) == 1 ? (T)(s >> 56) : (T)(((double)(s >> 11) / 9007199254740992.0 - 0.5) * 100.0); }
    if (sizeof(T) == 4) for (auto &v : y) v = (T)NAN;
    for (unsigned by = 0; by < (unsigned)((n + TR - 1) / TR); ++by)
        for (unsigned bx = 0; bx < (unsigned)((n + TCP - 1) / TCP); ++bx) {
            blockIdx = {bx, by, 0}, threadIdx = {0, 0, 0};
            sep_tile_kernel<T, C, K, TR, TCP>(x.data(), y.data(), n);
        }
    size_t nonfinite = 0; for (T v : y) nonfinite += !std::isfinite((float)v);
    const size_t bad = check_rows(x, y, w, n, 0, n);
    printf("emulated %s n=%d K=%d TR=%d TCP=%d: %zu non-finite, %zu wrong\n", C == 1 ? "gray" : "rgb", n, K, TR, TCP, nonfinite, bad);
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


def main():
    src = open(SOURCE).read()
    kernel = src[:src.index("template <typename T, int C, int K, int TR, int TCP>\nstatic void run(")]
    kernel = kernel.replace("extern __shared__ __align__(16) float smem[];", "float *smem = g_smem;")
    kernel = kernel.replace("enum { THREADS = 256, KMAX = 33 };", "enum { THREADS = 1, KMAX = 33 };")
    with tempfile.TemporaryDirectory() as work:
        cpp, exe = os.path.join(work, "tiles.cpp"), os.path.join(work, "tiles")
        with open(cpp, "w") as f:
            f.write(SHIM + kernel + DRIVER)
        subprocess.run(["g++", "-O1", "-std=c++17", "-w", "-I", CUDA_INCLUDE, "-I", os.path.dirname(SOURCE), cpp, "-o",
                        exe], check=True)
        return subprocess.run([exe]).returncode


if __name__ == "__main__":
    sys.exit(main())

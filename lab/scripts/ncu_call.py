#!/usr/bin/env python3
"""One memhier.ndimage call, warmed up, then made once between cudaProfilerStart and Stop, so that
`ncu --profile-from-start off` profiles that call's kernels alone (issue 66's photographs and the
float32 gray filters beside them; issue 65's float64 filters).

usage: ncu --profile-from-start off --clock-control none [sections] python3 ncu_call.py NAME [N]
NAME: rgb_gauss2, rgb_gauss5, u16_rgb_gauss2, gray_u8_corr3, gray_u8_corr7, gray_f32_gauss2,
      gray_f32_sobel, gray_f32_uniform5,
      gray_f32_corr7, f64_gauss2, f64_uniform5, f64_sobel, f64_corr7, f64_corr1d9_axis0,
      u8_median3, f32_median3, f32_minimum3, f32_minimum15, f32_minimum101 (issue 68's rank filters),
      f32_minimum1d5_axis0, f32_minimum1d5_axis1 (rank/minmax's line pass), f32_rank6_5x5
      (rank/sorted-rows) (N x N images, default 8192); f32_median3x3x3, u8_median3x3x3 (N x N x N
      volumes)"""
import functools
import sys

import cupy as cp
import numpy as np

import memhier.ndimage as mnd


def image(n, dtype, channels=0):
    shape = (n, n, channels) if channels else (n, n)
    rng = np.random.default_rng(5)
    if np.dtype(dtype).kind == "f":
        return cp.asarray(rng.uniform(0, 255, shape).astype(dtype))
    return cp.asarray(rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True))


@functools.cache
def volume(n, dtype):
    """An N x N x N volume, made at its first call only (the 2-D calls never make one)."""
    rng = np.random.default_rng(6)
    if np.dtype(dtype).kind == "f":
        return cp.asarray(rng.standard_normal((n, n, n), dtype))
    return cp.asarray(rng.integers(0, 256, (n, n, n), dtype))


def calls(n):
    w3 = np.random.default_rng(2).uniform(0, 1, (3, 3)).astype(np.float32)
    w7 = np.random.default_rng(3).uniform(0, 1, (7, 7)).astype(np.float32)
    rgb, rgb16 = image(n, np.uint8, 3), image(n, np.uint16, 3)
    u8, f32, f64 = image(n, np.uint8), image(n, np.float32), image(n, np.float64)
    return {"rgb_gauss2": lambda: mnd.gaussian_filter(rgb, (2, 2, 0)),
            "rgb_gauss5": lambda: mnd.gaussian_filter(rgb, (5, 5, 0)),
            "u16_rgb_gauss2": lambda: mnd.gaussian_filter(rgb16, (2, 2, 0)),
            "gray_u8_corr3": lambda: mnd.correlate(u8, w3),
            "gray_u8_corr7": lambda: mnd.correlate(u8, w7),
            "gray_f32_gauss2": lambda: mnd.gaussian_filter(f32, 2.0),
            "gray_f32_sobel": lambda: mnd.sobel(f32),
            "gray_f32_uniform5": lambda: mnd.uniform_filter(f32, 5),
            "gray_f32_corr7": lambda: mnd.correlate(f32, w7),
            "f64_gauss2": lambda: mnd.gaussian_filter(f64, 2.0),
            "f64_uniform5": lambda: mnd.uniform_filter(f64, 5),
            "f64_sobel": lambda: mnd.sobel(f64, axis=0),
            "f64_corr7": lambda: mnd.correlate(f64, w7.astype(np.float64)),
            "f64_corr1d9_axis0": lambda: mnd.correlate1d(f64, w7[0].repeat(2)[:9].astype(np.float64), axis=0),
            "u8_median3": lambda: mnd.median_filter(u8, 3),
            "f32_median3": lambda: mnd.median_filter(f32, 3),
            "f32_minimum3": lambda: mnd.minimum_filter(f32, 3),
            "f32_minimum15": lambda: mnd.minimum_filter(f32, 15),
            "f32_minimum101": lambda: mnd.minimum_filter(f32, 101),
            "f32_minimum1d5_axis0": lambda: mnd.minimum_filter1d(f32, 5, axis=0),
            "f32_minimum1d5_axis1": lambda: mnd.minimum_filter1d(f32, 5, axis=1),
            "f32_rank6_5x5": lambda: mnd.rank_filter(f32, 6, size=5),
            "f32_median3x3x3": lambda: mnd.median_filter(volume(n, np.float32), 3),
            "u8_median3x3x3": lambda: mnd.median_filter(volume(n, np.uint8), 3)}


def main():
    name, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8192
    call = calls(n)[name]
    for _ in range(3):
        call()
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.runtime.profilerStart()
    call()
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.runtime.profilerStop()


if __name__ == "__main__":
    main()

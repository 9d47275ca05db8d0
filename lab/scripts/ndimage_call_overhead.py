#!/usr/bin/env python3
"""One-off probe: what a memhier.ndimage call costs on the host, on a tiny CuPy image (the
kernel is negligible, so the host is the bound): microseconds a call over back-to-back calls
with no synchronization, for correlate, gaussian_filter and the cupyx equivalents, then a
cProfile of correlate's calls (top functions by cumulative time).

usage: ndimage_call_overhead.py"""
import cProfile
import pstats
import time

import cupy as cp
import cupyx.scipy.ndimage as cnd
import numpy as np

from memhier import ndimage as mnd


def host_us(fn, n=500):
    for _ in range(20):
        fn()
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    host = (time.perf_counter() - t) / n * 1e6
    cp.cuda.Device().synchronize()
    return host


def main():
    x = cp.random.default_rng(1).uniform(-1, 1, (64, 64), dtype=cp.float32)
    w = cp.asarray(np.random.default_rng(2).uniform(-1, 1, (3, 3)).astype(np.float32))
    u8 = (x * 100 + 100).astype(cp.uint8)
    cases = {
        "memhier correlate 3x3 (device weights)": lambda: mnd.correlate(x, w),
        "cupyx correlate 3x3": lambda: cnd.correlate(x, w),
        "memhier gaussian_filter sigma 2": lambda: mnd.gaussian_filter(x, 2.0),
        "cupyx gaussian_filter sigma 2": lambda: cnd.gaussian_filter(x, 2.0),
        "memhier gaussian_filter uint8": lambda: mnd.gaussian_filter(u8, 2.0),
    }
    for name, fn in cases.items():
        print(f"{name:42s} {host_us(fn):8.1f} us a call (host)")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(200):
        mnd.correlate(x, w)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()

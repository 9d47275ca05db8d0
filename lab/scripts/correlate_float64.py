#!/usr/bin/env python3
"""One-off probe (issue 65): correlate with 2-D weights on images computed in float64
(mh_conv2d_float64: scipy's sums in its order, one pass) against cupyx.scipy.ndimage, GPU ms a call
(CUDA events around 20 calls after a warm-up), the copy floor (reading the input and writing the
output once at the measured device copy rate), and whether each agrees with scipy bit for bit on
a 256^2 crop.

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/correlate_float64.py [N]"""
import sys

import cupy as cp
import cupyx.scipy.ndimage as cnd
import numpy as np
import scipy.ndimage as snd

import memhier.ndimage as mnd
from cupy_timing import gpu_ms


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    rng = np.random.default_rng(0)
    big = cp.empty((n, n), dtype=cp.float64)
    copy_gbps = 2 * big.nbytes / gpu_ms(lambda: big.copy()) / 1e6
    for dtype in (np.int32, np.int64, np.float64):
        x = cp.asarray(rng.integers(0, 1000, (n, n)).astype(dtype))
        x[n // 4:n // 2, n // 4:n // 2] = 5  # a flat patch: a box's sums one rounding below whole numbers
        crop = cp.asnumpy(x[:256, :256])
        for k in (3, 5, 7, 15):
            box = np.ones((k, k)) / (k * k)
            dbox = cp.asarray(box)
            ours = gpu_ms(lambda: mnd.correlate(x, box))
            theirs = gpu_ms(lambda: cnd.correlate(x, dbox))
            floor = 2 * x.nbytes / copy_gbps / 1e6
            want = snd.correlate(crop, box)
            same_ours = np.array_equal(cp.asnumpy(mnd.correlate(cp.asarray(crop), box)), want)
            same_theirs = np.array_equal(cp.asnumpy(cnd.correlate(cp.asarray(crop), cp.asarray(box))), want)
            print(f"{np.dtype(dtype).name:8s} {n}^2 box {k:2d}x{k:<2d} memhier {ours:8.4f} ms ({ours / floor:5.2f}x the "
                  f"copy floor {floor:.4f})  cupyx {theirs:8.4f} ms  x {theirs / ours:5.2f}  scipy's bits: memhier "
                  f"{same_ours}, cupyx {same_theirs}")


main()

#!/usr/bin/env python3
"""One-off probe (issue 65): what the calls added for every dtype cost on a GPU, beside CuPy, in
one run. GPU ms a call (the median of 10 after 3 warm-ups, the stream synchronized after each).

  ndimage on int32 images into int32 outputs, summed in scipy's order (conv2d/float64 for 2-D
  weights, sepfilter's scipy sums for 1-D passes) or, for whole-number weights, on sepfilter with
  fused multiply-adds: correlate 3x3 and 5x5 of 1/K^2, gaussian_filter sigma 2,
  gaussian_filter1d sigma 2 along each axis, sobel, uniform_filter 5 (the Gaussian and the
  uniform filter on int64 too); against cupyx.scipy.ndimage, and whether the two agree bit for
  bit (scipy's own result on a 512^2 crop: memhier's equal by construction, cupyx's not).
  reductions of 8-, 16- and 64-bit integers (sum, max, argmax along each axis and whole) against
  cupy's, and the 8-bit copy floor.
  histogram and bincount with float64 and int64 weights (float32 parts) against float32 ones.

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/typed_costs.py [N]"""
import sys

import cupy as cp
import cupyx.scipy.ndimage as cnd
import numpy as np
import scipy.ndimage as snd

import memhier
from memhier import ndimage as mnd


def ms(f, reps=10):
    for _ in range(3):
        f()
    cp.cuda.get_current_stream().synchronize()
    times = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        f()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return sorted(times)[len(times) // 2]


def ndimage_rows(n, rng, dtype=np.int32, only=None):
    x = cp.asarray(rng.integers(0, 1000, (n, n)).astype(dtype))
    x[n // 4:n // 2, n // 4:n // 2] = 37  # a flat patch
    crop = cp.asnumpy(x[:512, :512])
    def box(m, k):  # cupyx takes weights on the device only
        return (cp if m is cnd else np).ones((k, k)) / (k * k)
    cases = [("correlate 3x3 of 1/9", lambda m, a: m.correlate(a, box(m, 3))),
             ("correlate 5x5 of 1/25", lambda m, a: m.correlate(a, box(m, 5))),
             ("gaussian_filter sigma 2", lambda m, a: m.gaussian_filter(a, 2.0)),
             ("gaussian_filter1d axis 0", lambda m, a: m.gaussian_filter1d(a, 2.0, axis=0)),
             ("gaussian_filter1d axis 1", lambda m, a: m.gaussian_filter1d(a, 2.0, axis=1)),
             ("sobel", lambda m, a: m.sobel(a)),
             ("uniform_filter 5", lambda m, a: m.uniform_filter(a, 5))]
    for name, run in cases:
        if only and name not in only:
            continue
        ours, theirs = ms(lambda: run(mnd, x)), ms(lambda: run(cnd, x))
        want = run(snd, crop)
        same_ours = np.array_equal(cp.asnumpy(run(mnd, cp.asarray(crop))), want)
        same_theirs = np.array_equal(cp.asnumpy(run(cnd, cp.asarray(crop))), want)
        print(f"{np.dtype(dtype).name} {n}^2 {name:24s} memhier {ours:8.4f} ms  cupyx {theirs:8.4f} ms  x {theirs / ours:5.2f}  "
              f"scipy's bits: memhier {same_ours}, cupyx {same_theirs}")


def reduce_rows(n, rng):
    copy = memhier.info(0, ceilings=True)["copy_gbps"]
    for dtype in (np.uint8, np.int16, np.uint64):
        x = cp.asarray(rng.integers(0, 200, (n, n)).astype(dtype))
        floor = x.nbytes / (copy * 1e9) * 1e3
        for name, axis in (("sum", None), ("sum", 0), ("sum", 1), ("max", 1), ("argmax", 0)):
            ours = ms(lambda: getattr(memhier, name)(x, axis=axis))
            theirs = ms(lambda: getattr(cp, name)(x, axis=axis))
            print(f"{np.dtype(dtype).name:7s} {n}^2 {name:6s} axis={axis!s:4s} memhier {ours:8.4f} ms "
                  f"({ours / floor:5.2f}x the read floor {floor:.4f})  cupy {theirs:8.4f} ms")


def weights_rows(rng):
    x = cp.asarray(rng.uniform(-1, 1, 1 << 24).astype(np.float32))
    v = cp.asarray(rng.integers(0, 256, 1 << 24).astype(np.int32))
    for dtype in (np.float32, np.float64, np.int64):
        w = cp.asarray(rng.integers(-1000, 1000, 1 << 24).astype(dtype))
        h = ms(lambda: memhier.histogram(x, 256, (-1.0, 1.0), weights=w))
        b = ms(lambda: memhier.bincount(v, 256, weights=w))
        ref = ms(lambda: cp.histogram(x, 256, (-1.0, 1.0), weights=w))
        print(f"2^24 values, {np.dtype(dtype).name:7s} weights: histogram {h:8.4f} ms  bincount {b:8.4f} ms  "
              f"cupy.histogram {ref:8.4f} ms")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    rng = np.random.default_rng(1)
    ndimage_rows(n, rng)
    ndimage_rows(n, rng, np.int64, ("gaussian_filter sigma 2", "uniform_filter 5"))
    reduce_rows(n, rng)
    weights_rows(rng)


if __name__ == "__main__":
    main()

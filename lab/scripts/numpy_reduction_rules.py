#!/usr/bin/env python3
"""Probe for issue 39: numpy's rules for min, max, argmin, argmax and sum/mean that a GPU kernel
must follow, checked against a plain C-style rule on adversarial float32 and int32 data.

Rules checked (C-style, one pass):
  max / min: NaN when any element is NaN, else the largest / smallest (-0.0 and +0.0 equal);
  argmax / argmin: the index of the first NaN when there is one, else the first index holding
  the extreme value (ties: the first, -0.0 and +0.0 tie);
  int32 sum: exact in int64 (numpy's default for int32 on a 64-bit platform);
  along an axis of a C-contiguous array the same per lane.
Prints each case and whether numpy agrees; also the sign numpy gives max(-0.0, +0.0).
usage: numpy_reduction_rules.py [SEED]"""
import sys

import numpy as np


def c_argext(x, larger):
    best, at = None, 0
    for i, v in enumerate(x.tolist()):
        if v != v:  # NaN: the first one wins outright
            return i
        if best is None or (v > best if larger else v < best):
            best, at = v, i
    return at


def c_ext(x, larger):
    if np.isnan(x).any():
        return np.nan
    return x.max() if larger else x.min()


def cases(rng):
    yield "random", rng.standard_normal(1000).astype(np.float32)
    t = rng.integers(0, 5, 1000).astype(np.float32)
    yield "many ties", t
    z = np.array([0.0, -0.0, -0.0, 0.0], np.float32)
    yield "signed zeros", z
    n = rng.standard_normal(1000).astype(np.float32)
    n[[500, 700]] = np.nan
    yield "NaN at 500 and 700", n
    i = np.full(1000, -np.inf, np.float32)
    i[[3, 900]] = np.inf
    yield "infinities", i
    yield "one element", np.array([2.5], np.float32)


def main():
    rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    bad = 0
    for name, x in cases(rng):
        ok = (np.argmax(x) == c_argext(x, True) and np.argmin(x) == c_argext(x, False)
              and np.array_equal(np.max(x), c_ext(x, True), equal_nan=True)
              and np.array_equal(np.min(x), c_ext(x, False), equal_nan=True))
        bad += not ok
        print(f"{name:22s} argmax {np.argmax(x):4d} argmin {np.argmin(x):4d} max {np.max(x)!r:>12} "
              f"{'agrees' if ok else 'DIFFERS'}")
    m = rng.standard_normal((64, 37)).astype(np.float32)
    m[5, 7] = np.nan
    for axis in (0, 1):
        want = np.argmax(m, axis=axis)
        got = np.array([c_argext(v, True) for v in (m.T if axis == 0 else m)])
        ok = np.array_equal(want, got)
        bad += not ok
        print(f"argmax along axis {axis} of 64 x 37 with a NaN: {'agrees' if ok else 'DIFFERS'}")
    ints = rng.integers(-2**31, 2**31, 1 << 16, dtype=np.int64).astype(np.int32)
    ok = np.sum(ints).dtype == np.int64 and int(np.sum(ints)) == sum(int(v) for v in ints.tolist())
    bad += not ok
    print(f"int32 sum in int64, exact: {'agrees' if ok else 'DIFFERS'} ({np.sum(ints).dtype})")
    print(f"max(-0.0, +0.0) in numpy: {np.max(np.array([-0.0, 0.0], np.float32))!r}, "
          f"max(+0.0, -0.0): {np.max(np.array([0.0, -0.0], np.float32))!r} (signed zeros compare equal: either is a max)")
    print(f"{bad} case(s) differ (numpy {np.__version__})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

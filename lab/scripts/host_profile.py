#!/usr/bin/env python3
"""Where the host time of memhier.ndimage's kept calls goes (issue 64): each call timed in a
loop on a CuPy image of 256^2, then profiled (cProfile, the functions of most own time), and
the pieces of correlate1d's and convolve's device-weights paths timed alone; memhier.histogram
and bincount of the 256^2 values too (latency.py's "histogram 256" and "bincount 256").

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/host_profile.py"""
import cProfile
import ctypes
import pstats

import cupy
from cupy_timing import per_call_us as _per_call_us
import numpy as np

import memhier
import memhier.ndimage as mnd
from memhier import _arrays, _native, ndimage
from memhier._call import context_in_place
from memhier._context import context_at

N = 256


def per_call_us(fn, loops=10000):
    return _per_call_us(fn, loops, warmup=200)


def profile(name, fn, loops=3000):
    print(f"\n## {name}: {per_call_us(fn):.2f} us a call")
    p = cProfile.Profile()
    p.enable()
    for _ in range(loops):
        fn()
    p.disable()
    pstats.Stats(p).sort_stats("tottime").print_stats(14)


def main():
    x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (N, N)).astype(np.float32))
    w = cupy.asarray(np.random.default_rng(2).uniform(-1, 1, (5, 5)).astype(np.float32))
    w9 = cupy.asarray(np.hanning(9).astype(np.float32))
    h9 = np.hanning(9).astype(np.float32)
    values = cupy.asarray(np.random.default_rng(3).integers(0, 256, N * N).astype(np.int32))
    calls = [("correlate 5x5 device weights", lambda: mnd.correlate(x, w)),
             ("convolve 5x5 device weights", lambda: mnd.convolve(x, w)),
             ("correlate1d 9 device weights axis 0", lambda: mnd.correlate1d(x, w9, axis=0)),
             ("correlate1d 9 NumPy weights axis 0", lambda: mnd.correlate1d(x, h9, axis=0)),
             ("gaussian_filter1d 2 axis 0", lambda: mnd.gaussian_filter1d(x, 2.0, axis=0)),
             ("gaussian_laplace 2", lambda: mnd.gaussian_laplace(x, 2.0)),
             ("histogram 256 range (-1, 1)", lambda: memhier.histogram(x, bins=256, range=(-1.0, 1.0))),
             ("bincount 256", lambda: memhier.bincount(values, 256)),
             ("bincount 256 through Python", lambda: memhier.bincount.__wrapped__(values, 256))]
    for name, fn in calls:
        print(f"{name:50} {per_call_us(fn):7.2f} us")
    src = _arrays.Operand(x, "input")
    pieces = [("Operand(cupy 1-D weights)", lambda: _arrays.Operand(w9, "weights")),
              ("_device_taps(w9, src)", lambda: ndimage._device_taps(w9, src)),
              ("_reversed_on_device(w, src)", lambda: ndimage._reversed_on_device(w, src)),
              ("cupy w[::-1, ::-1]", lambda: w[::-1, ::-1]),
              ("cupy.ascontiguousarray(w[::-1, ::-1])", lambda: cupy.ascontiguousarray(w[::-1, ::-1])),
              ("cupy.empty((256, 256))", lambda: cupy.empty((N, N), cupy.float32)),
              ("x += y (cupy, 256^2)", lambda: x.__iadd__(x)),
              ("context_at(0)", lambda: context_at(0)),
              ("context_in_place(src) (each replay's)", lambda: context_in_place(src)),
              ("cupy.cuda.get_current_stream(0).ptr", lambda: cupy.cuda.get_current_stream(0).ptr),
              ("cupy.empty(257) (histogram's edges)", lambda: cupy.empty(257, cupy.float32)),
              ("x.shape, x.dtype, x._c_contiguous, x.data.ptr", lambda: (x.shape, x.dtype, x._c_contiguous,
                                                                         x.data.ptr))]
    for name, fn in pieces:
        print(f"{name:50} {per_call_us(fn):7.2f} us")
    for name, fn in calls:
        profile(name, fn)


if __name__ == "__main__":
    main()

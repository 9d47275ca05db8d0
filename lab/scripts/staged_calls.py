#!/usr/bin/env python3
"""What a NumPy array run on a GPU (device=0: staged through device buffers) costs a call, with
the staging buffers from memhier's pool (mh_alloc_async / mh_free_async, the package's way)
beside cudaMalloc / cudaFree (the way before it, restored here by pointing the binding's two
names at mh_alloc and mh_free), and beside the same call on CuPy arrays in place and on the CPU
backend (issue 64). us a call: the median of single calls, each returning its NumPy result.
The two staging ways alternate in rounds, so a slow stretch of the host hits both.

usage (a GPU machine): MEMHIER_LIBRARY=$ROOT/build/libmemhier.so PYTHONPATH=$ROOT/build/python \\
    python3 staged_calls.py [--calls 200] [--rounds 3]"""
import argparse
import statistics
import time

import cupy
import numpy as np

import memhier
import memhier.ndimage as mnd
from memhier._native import lib


def calls(put):
    """The calls on arrays made by put (NumPy as they are, or cupy.asarray), made once."""
    rng = np.random.default_rng(3)
    v = put(rng.uniform(-1, 1, 100003).astype(np.float32))
    small, large = (put(rng.uniform(-1, 1, (n, n)).astype(np.float32)) for n in (256, 2048))
    w = put(rng.uniform(0, 1, (5, 5)).astype(np.float32))
    return {"histogram 100003 values, 256 bins": lambda **k: memhier.histogram(v, 256, (-1, 1), **k),
            "correlate 5x5 256^2": lambda **k: mnd.correlate(small, w, **k),
            "correlate 5x5 2048^2": lambda **k: mnd.correlate(large, w, **k),
            "gaussian_filter 2 2048^2": lambda **k: mnd.gaussian_filter(large, 2.0, **k)}


def median_us(fn, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    pool_alloc, pool_free = lib.mh_alloc_async, lib.mh_free_async
    ways = {"pool": (pool_alloc, pool_free), "cudaMalloc": (lib.mh_alloc, lib.mh_free)}
    host, device = calls(lambda x: x), calls(cupy.asarray)
    best = {}

    def keep(key, us):
        best[key] = min(best.get(key, us), us)
    for _ in range(a.rounds):
        for name, call in host.items():
            for way, (alloc, free) in ways.items():
                lib.mh_alloc_async, lib.mh_free_async = alloc, free
                call(device=0)  # warm: the context, plans, the pool
                keep((name, way), median_us(lambda: call(device=0), a.calls))
            lib.mh_alloc_async, lib.mh_free_async = pool_alloc, pool_free

            def in_place():
                device[name]()
                cupy.cuda.get_current_stream().synchronize()
            in_place()
            keep((name, "cupy"), median_us(in_place, a.calls))
            call()
            keep((name, "cpu"), median_us(call, a.calls))
    for name in host:
        print(f"{name:36} staged: pool {best[name, 'pool']:8.1f} us, cudaMalloc {best[name, 'cudaMalloc']:8.1f};"
              f"  CuPy in place (synchronized) {best[name, 'cupy']:8.1f}, CPU backend {best[name, 'cpu']:8.1f}",
              flush=True)


if __name__ == "__main__":
    main()

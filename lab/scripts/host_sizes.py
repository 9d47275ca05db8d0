#!/usr/bin/env python3
"""Why a memhier call's host time grows with the image (issue 64: latency.py's host_us of one
call, 11-20 us at 256^2-2048^2, 28-42 us at 8192^2 for the separable filters) and whether a
process's CPU sets it (processes that run every figure ~1.5x slower than others).

Host time as latency.py takes it (the median of single calls, each made with the GPU idle), in
three rounds over the sizes so that a drift shows as a round, not as a size; with cupy.empty of
the output alone beside each call (what the output's allocation costs at that size). Prints the
CPU the process runs on (first and last) and its affinity.

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/host_sizes.py
       [--sizes 256,2048,8192] [--rounds 3] [--calls 100] [--only NAME,...]"""
import argparse
import os
import sys

import cupy
import numpy as np

import memhier
import memhier.ndimage as mnd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import latency  # noqa: E402  (scripts/latency.py: its host_us, the figure this probes)


def cpu_now():
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


def host_us(fn, calls):
    return latency.host_us(fn, cupy.cuda.get_current_stream().synchronize, calls)


def workloads(x):
    w5 = cupy.asarray(np.random.default_rng(2).uniform(-1, 1, (5, 5)).astype(np.float32))
    w9 = cupy.asarray(np.hanning(9).astype(np.float32))
    n = x.shape[0]
    return {"cupy.empty": lambda: cupy.empty((n, n), cupy.float32),
            "correlate 5x5": lambda: mnd.correlate(x, w5),
            "convolve 5x5": lambda: mnd.convolve(x, w5),
            "correlate1d 9": lambda: mnd.correlate1d(x, w9, axis=0),
            "gaussian_filter1d 2": lambda: mnd.gaussian_filter1d(x, 2.0, axis=0),
            "gaussian_filter 2": lambda: mnd.gaussian_filter(x, 2.0),
            "uniform_filter 5": lambda: mnd.uniform_filter(x, 5),
            "gaussian_laplace 2": lambda: mnd.gaussian_laplace(x, 2.0),
            "conv2d 5x5 same": lambda: memhier.conv2d(x, w5, pad="same"),
            "histogram 256": lambda: memhier.histogram(x, bins=256, range=(-1.0, 1.0))}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="256,2048,8192")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--only", default="")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    only = [s for s in args.only.split(",") if s]
    print(f"cpu {cpu_now()}, affinity {sorted(os.sched_getaffinity(0))}", flush=True)
    images = {n: cupy.asarray(np.random.default_rng(n).uniform(-1, 1, (n, n)).astype(np.float32)) for n in sizes}
    calls = {n: workloads(images[n]) for n in sizes}
    names = [k for k in calls[sizes[0]] if not only or k in only or k == "cupy.empty"]
    table = {}
    for r in range(args.rounds):
        for n in sizes:
            for name in names:
                fn = calls[n][name]
                for _ in range(5):
                    fn()
                table.setdefault((name, n), []).append(host_us(fn, args.calls))
    print(f"{'host us (rounds)':24}" + "".join(f"{n:>24}" for n in sizes))
    for name in names:
        print(f"{name:24}" + "".join(f"{' '.join(f'{t:5.1f}' for t in table[(name, n)]):>24}" for n in sizes))
    print(f"cpu {cpu_now()} at the end", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Why the stack of 1000 x 256^2 (correlate 5x5 reflect, CuPy) times 1.33-1.37x its copy in
scripts/latency.py and 1.26x in conv2d_tiles_sizes.py (issue 64): the two differ in how they
time (host clock around a loop and a synchronize, or CUDA events), in the output (a new array a
call, or the caller's `output=`) and in the variant (auto, or tiles named). Each combination in
one process, the least of 5 rounds of 50 calls, beside the copy timed both ways.

usage: cd lab/scripts && MEMHIER_LIBRARY=../../build/libmemhier.so PYTHONPATH=../../python \
       python3 stack_timing.py"""
import cupy
import numpy as np

import memhier.ndimage as mnd
from cupy_timing import gpu_ms, until_done_us

CALLS, ROUNDS = 50, 5


def host_loop_us(fn):
    """latency.py's figure: from the loop's start until the GPU finishes, over the calls."""
    fn()
    return until_done_us(fn, CALLS)


def events_us(fn):
    """conv2d_tiles_sizes.py's figure: CUDA events around the calls."""
    return gpu_ms(fn, CALLS) * 1e3


def main():
    x = cupy.asarray(np.random.default_rng(7).uniform(-1, 1, (1000, 256, 256)).astype(np.float32))
    w = cupy.asarray(np.random.default_rng(8).uniform(-1, 1, (5, 5)).astype(np.float32))
    y = cupy.empty_like(x)
    calls = {"copy": lambda: y.__setitem__(Ellipsis, x)}
    for variant in ("auto", "tiles", "walk"):
        calls[f"{variant}, new output"] = lambda v=variant: mnd.correlate(x, w, axes=(1, 2), variant=v)
        calls[f"{variant}, output=y"] = lambda v=variant: mnd.correlate(x, w, axes=(1, 2), variant=v, output=y)
    best = {(name, how): float("inf") for name in calls for how in ("host loop", "events")}
    for _ in range(ROUNDS):  # rounds spread over the sweep: a slow stretch of the host spoils one
        for name, fn in calls.items():
            best[name, "host loop"] = min(best[name, "host loop"], host_loop_us(fn))
            best[name, "events"] = min(best[name, "events"], events_us(fn))
    copy = {how: best["copy", how] for how in ("host loop", "events")}
    print(f"{'call':24} {'host loop us':>13} {'x copy':>7} {'events us':>10} {'x copy':>7}")
    for name in calls:
        h, e = best[name, "host loop"], best[name, "events"]
        print(f"{name:24} {h:13.1f} {h / copy['host loop']:7.3f} {e:10.1f} {e / copy['events']:7.3f}")


if __name__ == "__main__":
    main()

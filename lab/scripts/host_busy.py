#!/usr/bin/env python3
"""Does a call's host time in a loop grow because the GPU is busy, or because the image is
larger? latency.py's loop figure (until the last of 100 calls returns) grows for memhier from
256^2 to 8192^2 by 3-10 us a call, more than cupyx's. Here each call runs 100 times back to
back two ways: the GPU idle at the loop's start, and behind a 20 ms spin kernel queued on the
stream first (every call of the loop queues behind it, the GPU busy throughout), on images of
256^2 (busy without size) and 4096^2; the least of 5 rounds.

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/host_busy.py"""
import cupy
import cupyx.scipy.ndimage as cnd
import numpy as np

import memhier.ndimage as mnd
from host_after_wait import SPIN, returned_us


def loop_us(fn, busy, calls=100):
    return returned_us(fn, calls, (lambda: SPIN((1,), (1,), (np.uint64(20_000_000),))) if busy else None)


def calls_on(x):
    w = cupy.asarray(np.random.default_rng(2).uniform(-1, 1, (5, 5)).astype(np.float32))
    y = cupy.empty_like(x)
    return {"memhier correlate 5x5": lambda: mnd.correlate(x, w),
            "memhier correlate 5x5 output=": lambda: mnd.correlate(x, w, output=y),
            "memhier gaussian_filter 2": lambda: mnd.gaussian_filter(x, 2.0),
            "memhier gaussian_filter 2 output=": lambda: mnd.gaussian_filter(x, 2.0, output=y),
            "cupyx correlate 5x5": lambda: cnd.correlate(x, w),
            "cupy x * 2": lambda: x * 2,
            "cupy.empty_like": lambda: cupy.empty_like(x)}


def main():
    print("== host us a call, loop of 100 (least of 5 rounds): GPU idle at the start | behind a 20 ms kernel")
    for n in (256, 4096):
        x = cupy.asarray(np.random.default_rng(n).uniform(-1, 1, (n, n)).astype(np.float32))
        for name, fn in calls_on(x).items():
            for _ in range(10):
                fn()
            idle = min(loop_us(fn, False) for _ in range(5))
            busy = min(loop_us(fn, True) for _ in range(5))
            print(f"{n:5}^2 {name:36} {idle:8.1f} {busy:8.1f}", flush=True)


if __name__ == "__main__":
    main()

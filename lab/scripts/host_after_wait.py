#!/usr/bin/env python3
"""Does a call's host time grow with the image, or with how long the caller waited on the GPU
before it? latency.py times a call with the GPU idle (a synchronize before each), and there
memhier's and cupyx's host times grow from 256^2 to 8192^2, though neither does more host work
on a larger image. Here the image stays 256^2 and only the wait before each call changes: a
spin kernel of 0 to 1000 us on the stream, synchronized, then the timed call; and the same
waits spent on the host (time.sleep) with the GPU idle. Then the 8192^2 calls both ways:
one after a synchronize, and 100 back to back (the time until the last returns, the GPU still
busy: what a loop's caller pays a call).

Then the stack of 1000 x 256^2 (5 x 5 reflect) through memhier.ndimage.correlate, timed as
latency.py times it (wall clock around 50 calls, a new output each call) and as
conv2d_tiles_sizes.py does (CUDA events, output=), each with the other's options, to reconcile
the two scripts' figures.

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/host_after_wait.py"""
import os
import sys
import time

import cupy
import cupyx.scipy.ndimage as cnd
import numpy as np

import memhier.ndimage as mnd
from cupy_timing import gpu_ms, until_done_us

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from latency import host_idle_us  # noqa: E402

SPIN = cupy.RawKernel(r'''
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}''', "spin")
WAITS_US = (0, 20, 100, 300, 1000)


def sync():
    cupy.cuda.get_current_stream().synchronize()


def after_gpu_wait(fn, wait_us, calls=200):
    """latency.py's host_idle_us with a spin of wait_us on the stream before each synchronize."""
    def wait_then_sync():
        if wait_us:
            SPIN((1,), (1,), (np.uint64(wait_us * 1000),))
        sync()
    return host_idle_us(fn, wait_then_sync, calls)


def after_host_wait(fn, wait_us, calls=200):
    """latency.py's host_idle_us with a sleep of wait_us on the host after each synchronize."""
    def sync_then_wait():
        sync()
        if wait_us:
            time.sleep(wait_us * 1e-6)
    return host_idle_us(fn, sync_then_wait, calls)


def returned_us(fn, calls=100, before=None):
    """us a call until the last of `calls` back-to-back calls returns (the GPU still at work),
    from a synchronize and then before() (work queued ahead of the calls), if given."""
    sync()
    if before is not None:
        before()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t = time.perf_counter() - t0
    sync()
    return t / calls * 1e6


def in_a_loop(fn, calls=100):
    """returned_us after 10 calls, which leave the GPU at work."""
    for _ in range(10):
        fn()
    return returned_us(fn, calls)


def calls_on(x):
    w = cupy.asarray(np.random.default_rng(2).uniform(-1, 1, (5, 5)).astype(np.float32))
    return {"memhier correlate 5x5": lambda: mnd.correlate(x, w),
            "memhier gaussian_filter 2": lambda: mnd.gaussian_filter(x, 2.0),
            "memhier gaussian_laplace 2": lambda: mnd.gaussian_laplace(x, 2.0),
            "cupyx correlate 5x5": lambda: cnd.correlate(x, w),
            "cupy x * 2": lambda: x * 2,
            "cupy.empty_like": lambda: cupy.empty_like(x)}


def waits():
    x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (256, 256)).astype(np.float32))
    print("== host us a call at 256^2, after a wait of W us on the GPU (spin kernel, synchronized) | on the host (sleep)")
    print(f"{'call':28}" + "".join(f"{'gpu ' + str(w):>9}" for w in WAITS_US) + "".join(f"{'host ' + str(w):>10}" for w in WAITS_US))
    for name, fn in calls_on(x).items():
        for _ in range(20):
            fn()
        g = [min(after_gpu_wait(fn, w) for _ in range(2)) for w in WAITS_US]
        h = [min(after_host_wait(fn, w) for _ in range(2)) for w in WAITS_US]
        print(f"{name:28}" + "".join(f"{v:9.1f}" for v in g) + "".join(f"{v:10.1f}" for v in h), flush=True)


def sizes():
    print("== host us a call: after a synchronize (latency.py's) | in a loop of 100 (the GPU busy)")
    for n in (256, 4096, 8192):
        x = cupy.asarray(np.random.default_rng(n).uniform(-1, 1, (n, n)).astype(np.float32))
        for name, fn in calls_on(x).items():
            for _ in range(5):
                fn()
            single = min(after_gpu_wait(fn, 0, 100) for _ in range(2))
            loop = min(in_a_loop(fn) for _ in range(2))
            print(f"{n:5}^2 {name:28} {single:8.1f} {loop:8.1f}", flush=True)


def stack():
    print("== the stack 1000 x 256^2, 5 x 5 reflect: us a call (least of 3)")
    rng = np.random.default_rng(7)
    uniform = cupy.asarray(rng.uniform(-1, 1, (1000, 256, 256)).astype(np.float32))
    wide = cupy.asarray((rng.standard_normal((1000, 256, 256)) * np.exp2(rng.integers(-8, 8, (1000, 256, 256))))
                        .astype(np.float32))
    w = cupy.asarray(np.random.default_rng(8).uniform(-1, 1, (5, 5)).astype(np.float32))
    y = cupy.empty_like(uniform)
    copy = lambda: y.__setitem__(Ellipsis, uniform)  # noqa: E731
    print(f"copy: wall {min(until_done_us(copy, 50) for _ in range(3)):.1f}, events {min(gpu_ms(copy, 50) for _ in range(3)) * 1e3:.1f}")
    for data_name, x in (("uniform", uniform), ("wide", wide)):
        for label, kwargs in (("new output", {}), ("output=", {"output": y}), ("variant tiles", {"variant": "tiles"}),
                              ("variant walk", {"variant": "walk"}), ("variant auto, output=", {"variant": "auto", "output": y})):
            fn = lambda: mnd.correlate(x, w, axes=(1, 2), **kwargs)  # noqa: E731
            fn()
            wall = min(until_done_us(fn, 50) for _ in range(3))
            events = min(gpu_ms(fn, 50) for _ in range(3)) * 1e3
            print(f"{data_name:8} {label:24} wall {wall:7.1f}  events {events:7.1f}", flush=True)


if __name__ == "__main__":
    waits()
    sizes()
    stack()

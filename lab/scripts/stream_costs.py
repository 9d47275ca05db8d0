#!/usr/bin/env python3
"""Where a streamed task's time goes (issue 69: memhier.dask.pipeline_histogram(on_gpu=True) ran a
100000^2 float32 host image at 13x its host-to-device copy time): one band of ROWS x SIDE float32
values, each host step a task of memhier.dask's streamed path takes, timed alone (ms, best of 3):
dask's overlap (the band and its neighbours' rows concatenated into the window), a pinned buffer
from CuPy's pool (the first of its size and a reused one), the window copied into it, the copy to
the GPU, the pipeline's GPU work (Gaussian sigma 4, the gradient's magnitude, a 256-bin
histogram); then the host copies run by THREADS threads at once (their aggregate GB/s), and a
pageable window copied straight to the GPU.

usage: PYTHONPATH=python python3 lab/scripts/stream_costs.py [SIDE] [ROWS] [THREADS]   (100000 1024 8)"""
import sys
import threading
import time

import cupy as cp
import numpy as np

import memhier
import memhier.ndimage as mnd


def best_ms(fn, reps=3):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return min(times)


def threaded_gbps(fn, threads, nbytes):
    """Aggregate GB/s of fn run by `threads` threads at once, each moving nbytes."""
    pool = [threading.Thread(target=fn) for _ in range(threads)]
    t0 = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return threads * nbytes / (time.perf_counter() - t0) / 1e9


def main():
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    halo = 9  # sigma 4's 16 rows of reach a side (truncate 4) and sobel's 1, rounded up
    rng = np.random.default_rng(1)
    above, band, below = (rng.random((r, side), dtype=np.float32) for r in (halo, rows, halo))
    window = np.concatenate([above, band, below])
    nbytes = window.nbytes
    print(f"window {window.shape[0]} x {side} float32, {nbytes / 1e6:.0f} MB")
    print(f"  overlap's concatenate        {best_ms(lambda: np.concatenate([above, band, below])):8.1f} ms")
    t0 = time.perf_counter()
    mem = cp.cuda.alloc_pinned_memory(nbytes)
    print(f"  first pinned buffer          {(time.perf_counter() - t0) * 1e3:8.1f} ms")
    del mem
    print(f"  pinned buffer from the pool  {best_ms(lambda: cp.cuda.alloc_pinned_memory(nbytes)):8.3f} ms")
    staged = np.frombuffer(cp.cuda.alloc_pinned_memory(nbytes), np.float32, window.size).reshape(window.shape)
    print(f"  copy into pinned             {best_ms(lambda: np.copyto(staged, window)):8.1f} ms")
    dev = cp.empty(window.shape, np.float32)
    print(f"  pinned to the GPU            {best_ms(lambda: dev.set(staged)):8.1f} ms")
    print(f"  pageable to the GPU          {best_ms(lambda: dev.set(window)):8.1f} ms")

    def gpu_work():
        g = mnd.gaussian_filter(dev, 4.0)
        m = cp.hypot(mnd.sobel(g, 0), mnd.sobel(g, 1))
        return memhier.histogram(m, 256, (0.0, 6.0))[0]
    gpu_work()
    print(f"  the pipeline on the GPU      {best_ms(gpu_work):8.1f} ms")
    for t in (1, 2, 4, threads):
        bufs = [(np.empty_like(window), np.frombuffer(cp.cuda.alloc_pinned_memory(nbytes), np.float32,
                                                      window.size).reshape(window.shape)) for _ in range(t)]
        it = iter(bufs)
        lock = threading.Lock()

        def one():
            with lock:
                _, dst = next(it)
            np.copyto(dst, window)
        print(f"  {t} threads copying into pinned: {threaded_gbps(one, t, nbytes):6.1f} GB/s")
        it2 = iter(bufs)

        def cat():
            with lock:
                dst, _ = next(it2)
            np.concatenate([above, band, below], out=dst)
        print(f"  {t} threads concatenating:       {threaded_gbps(cat, t, nbytes):6.1f} GB/s")
        del bufs


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A host image streamed through the GPUs (issue 69): a SIDE x SIDE float32 image in the workers'
host memory (NumPy chunks of ROWS rows), memhier.dask.pipeline(on_gpu=True) running a Gaussian
(sigma 4) and the gradient's magnitude a window at a time on a LocalCUDACluster of 1 and then 2
GPUs (THREADS threads a worker), against the copy-bound time: the image's bytes in and out at the
pinned copy rate measured on GPU 0 in the same run. Prints one JSON line a cluster, with each
worker's CuPy pool size after the run (its GPU's high-water mark).

With a fourth argument `histogram`, the pipeline is issue 69's target: the Gaussian, the
gradient's magnitude and a 256-bin histogram of it counted in each task
(memhier.dask.pipeline_histogram), nothing copied back but the counts: the copy-bound time is
the image's bytes in alone.

usage: python3 lab/scripts/dask_stream.py [SIDE] [ROWS] [THREADS] [histogram]   (default 32768 2048 4;
       cupy, dask, distributed, dask-cuda)"""
import json
import sys
import time

import cupy as cp
import dask.array as da
import numpy as np
from dask_cuda import LocalCUDACluster
from distributed import Client, futures_of, wait

import memhier.dask as mdask
import memhier.ndimage as mnd


def magnitude(window):
    return cp.hypot(mnd.sobel(window, 0), mnd.sobel(window, 1))


def pinned_rate(nbytes=1 << 30):
    """GB/s of a host-to-device and a device-to-host copy from and to pinned memory on GPU 0."""
    host = np.frombuffer(cp.cuda.alloc_pinned_memory(nbytes), np.uint8, nbytes)
    dev = cp.empty(nbytes, np.uint8)
    rates = []
    for copy in (lambda: dev.set(host), lambda: dev.get(out=host)):
        copy()
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        for _ in range(3):
            copy()
        cp.cuda.Device().synchronize()
        rates.append(3 * nbytes / (time.perf_counter() - t0) / 1e9)
    return rates


def high_water():
    pool = cp.get_default_memory_pool()
    return pool.total_bytes()


def main():
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 32768
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 2048
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    counted = len(sys.argv) > 4 and sys.argv[4] == "histogram"
    h2d, d2h = pinned_rate()
    nbytes = side * side * 4
    floor = nbytes / (h2d * 1e9) + (0 if counted else nbytes / (d2h * 1e9))
    for gpus in (1, 2):
        devices = ",".join(str(g) for g in range(gpus))
        with LocalCUDACluster(CUDA_VISIBLE_DEVICES=devices, threads_per_worker=threads) as cluster, \
                Client(cluster) as client:
            # the image made in the workers' host memory (NumPy chunks), as a reader of a file would
            image = da.random.RandomState(seed=1).random_sample((side, side), chunks=(rows, side))
            image = image.astype(np.float32).persist()
            wait(image)
            steps = [("gaussian_filter", {"sigma": 4.0}), (magnitude, (), 1)]
            times = []
            for _ in range(2):
                t0 = time.perf_counter()
                if counted:
                    out = mdask.pipeline_histogram(image, steps, 256, (0.0, 6.0), on_gpu=True)[0].persist()
                else:
                    out = mdask.pipeline(image, steps, on_gpu=True).persist()
                wait(out)
                failed = [f for f in futures_of(out) if f.status != "finished"]
                if failed:
                    sys.exit(f"dask_stream: {len(failed)} tasks failed: {failed[0].exception()!r}")
                times.append(time.perf_counter() - t0)
                del out
            pools = client.run(high_water)
            print(json.dumps({"side": side, "rows": rows, "threads": threads, "gpus": gpus, "histogram": counted,
                              "seconds": [round(t, 3) for t in times], "copy_floor_s": round(floor / gpus, 3),
                              "h2d_gbps": round(h2d, 1), "d2h_gbps": round(d2h, 1),
                              "pool_bytes": {k: v for k, v in pools.items()}}), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A filter pipeline over every GPU of the machine: a Gaussian (sigma 4), then the gradient's
magnitude (two Sobel filters), then a 256-bin histogram of it, on a SIDE x SIDE float32 image in
chunks; the filters and the chunk's counts run in one task a chunk
(memhier.dask.pipeline_histogram), so each task carries the chunk's whole work and returns its
counts alone. Run on one GPU, then on all of them (dask-cuda's LocalCUDACluster, one worker per
GPU), with dask's progress bar; the filtered image equals the calls made in turn on the whole
image, bit for bit (docs/python.md, "Dask"). The image lives on the GPUs, or with --host in the
workers' host memory, each task's window streamed through its worker's GPU (on_gpu); with
--file=PATH each task reads its band of a raw float32 file (written first where it is missing),
so that the image need not fit in memory at all.

usage: python3 examples/dask_pipeline.py [--host | --file=PATH] [SIDE]   (cupy, dask, distributed, dask-cuda)
       python3 examples/dask_pipeline.py --numpy [--file=PATH] [SIDE]    (NumPy chunks on this machine's CPU)"""
import os
import sys
import time

import dask.array as da
import numpy as np

import memhier.dask as mdask
import memhier.ndimage as mnd

SIGMA, BINS = 4.0, 256


def magnitude(window):
    """The gradient's magnitude of a window (NumPy or CuPy): its two Sobel filters' hypotenuse."""
    xp = sys.modules["cupy"] if type(window).__module__.startswith("cupy") else np
    return xp.hypot(mnd.sobel(window, 0), mnd.sobel(window, 1))


STEPS = [("gaussian_filter", {"sigma": SIGMA}), (magnitude, (), 1)]  # the Sobel filters' reach: 1


def histogram(image, on_gpu=False):
    # the magnitude of a Gaussian of values in [0, 1) stays below 4 sqrt(2)
    return mdask.pipeline_histogram(image, STEPS, BINS, range=(0.0, 6.0), on_gpu=on_gpu)[0]


def check(image, on_gpu=False):
    """The pipeline's result on a corner of the image against the calls in turn on that corner
    (on the GPU where the pipeline streams through it)."""
    corner = image[:1024, :1024].rechunk(256)
    got, whole = mdask.pipeline(corner, STEPS, on_gpu=on_gpu).compute(), corner.compute()
    if on_gpu:
        import cupy as cp
        return bool((got == cp.asnumpy(magnitude(mnd.gaussian_filter(cp.asarray(whole), SIGMA)))).all())
    want = magnitude(mnd.gaussian_filter(whole, SIGMA))
    return bool((got == want).all())


def from_file(path, side, rows):
    """A SIDE x SIDE float32 image held in the raw file `path` as NumPy chunks of `rows` rows, each
    read by the task that needs it (np.fromfile at its band's offset): the file's bytes never pass
    through the client. A missing file is written first, a band at a time, with uniform values."""
    if not os.path.exists(path):
        rng = np.random.default_rng(1)
        with open(path, "wb") as f:
            for r0 in range(0, side, rows):
                rng.random((min(rows, side - r0), side), dtype=np.float32).tofile(f)
    if os.path.getsize(path) != side * side * 4:
        sys.exit(f"{path}: {os.path.getsize(path)} bytes, not a {side} x {side} float32 image")

    def band(block_info=None):
        (r0, r1), _ = block_info[None]["array-location"]
        return np.fromfile(path, np.float32, count=(r1 - r0) * side, offset=r0 * side * 4).reshape(r1 - r0, side)
    bands = tuple(min(rows, side - r0) for r0 in range(0, side, rows))
    return da.map_blocks(band, chunks=(bands, (side,)), dtype=np.float32, meta=np.empty((0, 0), np.float32))


def band_rows(side, gpus):
    """Rows a chunk: four chunks a GPU at least, each of at most 512 MiB of float32 (a task's
    window and the filters' outputs beside it stay a few GB on the GPU however large the image)."""
    return max(min(side // (4 * gpus), (512 << 20) // (4 * side)), 256)


def on_gpus(side, gpus, host, path=None):
    import cupy as cp
    from dask_cuda import LocalCUDACluster
    from distributed import Client, progress, wait

    devices = ",".join(str(g) for g in range(gpus))
    with LocalCUDACluster(CUDA_VISIBLE_DEVICES=devices) as cluster, Client(cluster) as client:
        chunks = (band_rows(side, gpus), side)
        if path:  # read by the tasks as they run: streamed from the file
            image = from_file(path, side, chunks[0])
        elif host:  # NumPy chunks in the workers' memory, as a reader of a file would leave them
            image = da.random.RandomState(seed=1).uniform(0, 1, size=(side, side), chunks=chunks).astype(np.float32)
        else:
            rs = da.random.RandomState(RandomState=cp.random.RandomState, seed=1)
            image = rs.uniform(0, 1, size=(side, side), chunks=chunks, dtype=cp.float32)
        if not path:
            image = image.persist()
            wait(image)
        counts = histogram(image, on_gpu=host)
        t0 = time.perf_counter()
        counts = counts.persist()
        progress(counts)
        wait(counts)
        seconds = time.perf_counter() - t0
        equal = check(image, on_gpu=host)
        return seconds, int(counts.sum().compute()), equal


def on_numpy(side, path=None):
    if path:
        image = from_file(path, side, side // 4)
    else:
        image = da.random.RandomState(seed=1).uniform(0, 1, size=(side, side), chunks=(side // 4, side)).astype(np.float32)
    t0 = time.perf_counter()
    counts = histogram(image).compute(scheduler="threads")
    return time.perf_counter() - t0, int(counts.sum()), check(image)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--file=")), None)
    if "--numpy" in sys.argv:
        side = int(args[0]) if args else 2048
        seconds, counted, equal = on_numpy(side, path)
        print(f"{side} x {side} on NumPy chunks: {seconds * 1e3:.1f} ms, {counted} values counted, "
              f"equal to the calls in turn: {equal}")
        return
    import cupy as cp
    side = int(args[0]) if args else 32768
    host = "--host" in sys.argv or path is not None
    where = f" streamed from {path}" if path else " streamed from host memory" if host else ""
    gpus = int(os.environ.get("GPUS", cp.cuda.runtime.getDeviceCount()))
    one = on_gpus(side, 1, host, path)
    print(f"{side} x {side}{where}, 1 GPU: {one[0] * 1e3:.1f} ms, {one[1]} values counted, equal to the calls: {one[2]}")
    if gpus > 1:
        many = on_gpus(side, gpus, host, path)
        print(f"{side} x {side}{where}, {gpus} GPUs: {many[0] * 1e3:.1f} ms ({one[0] / many[0]:.2f}x one GPU), "
              f"{many[1]} values counted, equal to the calls: {many[2]}")


if __name__ == "__main__":
    main()

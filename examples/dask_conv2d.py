#!/usr/bin/env python3
"""A 32768 x 32768 image filtered by an 11 x 11 filter over every GPU of the machine: memhier's
conv2d on CuPy chunks through Dask (dask-cuda, one worker per GPU), each chunk's halo copied
from its neighbours. The result equals one memhier.conv2d call on the whole image, bit for
bit (docs/python.md, "Dask").

usage: python3 examples/dask_conv2d.py [SIDE]   (needs cupy, dask, distributed, dask-cuda)"""
import sys
import time

import cupy as cp
import dask.array as da
import numpy as np
from dask_cuda import LocalCUDACluster
from distributed import Client, wait

import memhier.dask as mdask


def main():
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 32768
    with LocalCUDACluster() as cluster, Client(cluster) as client:
        gpus = len(client.scheduler_info()["workers"])
        rs = da.random.RandomState(RandomState=cp.random.RandomState, seed=1)
        image = rs.uniform(0, 1, size=(side, side), chunks=(side // (2 * gpus), side), dtype=cp.float32).persist()
        filt = cp.asarray(np.outer(np.hanning(11), np.hanning(11)).astype(np.float32) + 0.01)  # full rank
        t0 = time.perf_counter()
        out = mdask.conv2d(image, filt, pad="same").persist()
        wait(out)
        client.run(lambda: cp.cuda.runtime.deviceSynchronize())  # the calls return once queued
        ms = (time.perf_counter() - t0) * 1e3
        print(f"{side} x {side}, 11 x 11 same, on {gpus} GPU(s) through Dask: {ms:.1f} ms; "
              f"out[0, :4] = {out[0, :4].compute()}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Issue 66's photographs on one GPU: memhier.ndimage's Gaussian, uniform and Sobel filters on
uint8 and uint16 images (RGB interleaved over axes (0, 1), and gray), ms a call and pipelined
(scripts/ndimage_bench.py's gpu_ms; lab/results/NVIDIA_H200.fused-lean-6543f64.txt's figures are
the median of 15 calls timed alone, before the script used it) beside a device-to-device copy of
the same array (its bytes read and written once, the floor; CuPy's x.copy() of uint8 runs ~10x
slower), one JSON line a workload with the label given.

usage: photo_filters.py LABEL [--quick]   (MEMHIER_LIBRARY picks the library)"""
import json
import os
import sys

import cupy as cp
import numpy as np

import memhier.ndimage as mnd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from ndimage_bench import gpu_ms  # noqa: E402  (per call: median of 20; pipelined: 20 back to back)


def image(shape, dtype):
    rng = np.random.default_rng(11)
    return cp.asarray(rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True))


def workloads(quick):
    rgb = image((8192, 8192, 3), np.uint8)
    out = [(f"gaussian uint8 8192x8192x3 sigma={s}", rgb, lambda x, s=s: mnd.gaussian_filter(x, (s, s, 0)))
           for s in ((2,) if quick else (1.2, 2, 5, 10))]
    if quick:
        return out
    rgb16 = image((8192, 8192, 3), np.uint16)
    gray = image((8192, 8192), np.uint8)
    batch = image((64, 1080, 1920, 3), np.uint8)
    out += [("gaussian uint16 8192x8192x3 sigma=2", rgb16, lambda x: mnd.gaussian_filter(x, (2, 2, 0))),
            ("gaussian uint8 8192x8192 sigma=2", gray, lambda x: mnd.gaussian_filter(x, 2)),
            ("uniform_filter uint8 8192x8192 size=15", gray, lambda x: mnd.uniform_filter(x, 15)),
            ("sobel uint8 8192x8192 axis=0", gray, lambda x: mnd.sobel(x, axis=0)),
            ("sobel uint8 8192x8192 axis=-1", gray, lambda x: mnd.sobel(x, axis=-1))]
    out += [(f"gaussian uint8 64x1080x1920x3 sigma={s}", batch, lambda x, s=s: mnd.gaussian_filter(x, (0, s, s, 0)))
            for s in (1.2, 5)]
    return out


def main():
    label, quick = sys.argv[1], "--quick" in sys.argv
    for name, x, call in workloads(quick):
        ms, pipelined = gpu_ms(lambda: call(x))
        y = cp.empty_like(x)
        floor = gpu_ms(lambda: cp.cuda.runtime.memcpyAsync(y.data.ptr, x.data.ptr, x.nbytes,
                                                           cp.cuda.runtime.memcpyDeviceToDevice,
                                                           cp.cuda.get_current_stream().ptr))[1]
        print(json.dumps({"label": label, "workload": name, "ms": round(ms, 4), "ms_pipelined": round(pipelined, 4),
                          "copy_ms": round(floor, 4), "x_copy": round(pipelined / floor, 2)}), flush=True)


if __name__ == "__main__":
    main()

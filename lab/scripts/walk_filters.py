#!/usr/bin/env python3
"""GPU time of memhier.ndimage's float32 filters of two axes (issue 64's ">= 2x cupyx from 2048^2
up") on sepfilter/walk, sepfilter/fused and auto, beside cupyx.scipy.ndimage and the image's copy
(into an array of its shape: the floor a filter that reads and writes it once can reach), ms a
call from CUDA events around back-to-back calls. Several builds of the library time in one run
when MEMHIER_LIBRARY names each in turn (one process a build: `--label` names the lines).

usage (a GPU machine, from lab/scripts, where cupy_timing.py is):
  MEMHIER_LIBRARY=$ROOT/build/libmemhier.so PYTHONPATH=$ROOT/python python3 walk_filters.py \
      [--label NAME] [--sizes 2048,4096,8192] [--variants auto,sepfilter/walk] [--peers]"""
import argparse

import cupy
import cupyx.scipy.ndimage as cnd
import numpy as np

import memhier.ndimage as mnd
from cupy_timing import gpu_ms

FILTERS = {
    "gaussian 1": (lambda m, x, **k: m.gaussian_filter(x, 1.0, **k)),
    "gaussian 2": (lambda m, x, **k: m.gaussian_filter(x, 2.0, **k)),
    "gaussian 3": (lambda m, x, **k: m.gaussian_filter(x, 3.0, **k)),
    "uniform 5": (lambda m, x, **k: m.uniform_filter(x, 5, **k)),
    "sobel": (lambda m, x, **k: m.sobel(x, **k)),
    "laplace": (lambda m, x, **k: m.laplace(x, **k)),
    "gaussian_laplace 2": (lambda m, x, **k: m.gaussian_laplace(x, 2.0, **k)),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="memhier")
    ap.add_argument("--sizes", default="2048,4096,8192")
    ap.add_argument("--variants", default="auto,sepfilter/walk,sepfilter/fused")
    ap.add_argument("--filters", default=",".join(FILTERS))
    ap.add_argument("--peers", action="store_true", help="cupyx and the copy too")
    a = ap.parse_args()
    warm = cupy.zeros((8192, 8192), np.float32)  # clocks up before the first size's times
    for _ in range(300):
        mnd.uniform_filter(warm, 5)
    cupy.cuda.Device().synchronize()
    for n in map(int, a.sizes.split(",")):
        x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (n, n)).astype(np.float32))
        if a.peers:  # into an array kept across calls: x.copy() allocates each call and ran 2.5x longer
            y = cupy.empty_like(x)
            print(f"copy {n:5}^2 {gpu_ms(lambda: y.__setitem__(Ellipsis, x), reps=20):.4f}", flush=True)
        for name in a.filters.split(","):
            fn = FILTERS[name]
            line = f"{a.label:10} {name:18} {n:5}^2"
            for v in a.variants.split(","):
                try:
                    line += f"  {v.split('/')[-1]} {gpu_ms(lambda: fn(mnd, x, variant=v), reps=20):.4f}"
                except Exception as e:  # a row that refuses the call says so on the line
                    line += f"  {v.split('/')[-1]} refused ({str(e)[:40]})"
            if a.peers:
                line += f"  cupyx {gpu_ms(lambda: fn(cnd, x), reps=10):.4f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()

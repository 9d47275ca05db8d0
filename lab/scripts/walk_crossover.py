#!/usr/bin/env python3
"""Whether sepfilter/walk stops beating sepfilter/fused on large float32 images (issue 64: walk
was auto's first past 8 taps only up to 4096^2, where small_kernels.py had measured): gaussian_filter and gaussian_laplace at
sigma 1, 2 and 3 (9, 17 and 25 taps a pass) from 2048^2 to 8192^2, each on auto, walk and fused
(gaussian_laplace on walk: its two terms in one launch; on fused: two launches and an add), GPU
ms a call from CUDA events around back-to-back calls (the calls are GPU-bound at these sizes).

usage (a GPU machine, from lab/scripts, where cupy_timing.py is):
  MEMHIER_LIBRARY=$ROOT/build/libmemhier.so PYTHONPATH=$ROOT/python python3 walk_crossover.py"""
import cupy
import numpy as np

import memhier.ndimage as mnd
from cupy_timing import gpu_ms


def main():
    for n in (2048, 4096, 5793, 8192):
        x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (n, n)).astype(np.float32))
        for name, fn in (("gaussian_filter", mnd.gaussian_filter), ("gaussian_laplace", mnd.gaussian_laplace)):
            for sigma in (1.0, 2.0, 3.0):
                line = f"{name:16} sigma {sigma:.0f} {n:5}^2"
                for v in ("auto", "sepfilter/walk", "sepfilter/fused"):
                    line += f"  {v.split('/')[-1]} {gpu_ms(lambda: fn(x, sigma, variant=v), reps=20):.4f}"
                print(line, flush=True)


if __name__ == "__main__":
    main()

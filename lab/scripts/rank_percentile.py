#!/usr/bin/env python3
"""Why memhier.ndimage.percentile_filter(x, 25, size=5) loses to cupyx and cuCIM per call from
512^2 up in scripts/latency.py (issue 64: every ndimage function at least as fast as both): GPU
ms a call of a 5 x 5 rank other than the median (rank 6 of 25, as percentile 25 gives), the
median (rank 12), and 3 x 3 and 7 x 7 ranks, through each GPU row that takes them (auto, network,
bisect, sorted-rows; median5x5 and median7x7 for the medians), beside cupyx.scipy.ndimage and
cuCIM's vendored ndimage, on float32 and uint8 images of 512^2, 2048^2 and 8192^2. A line a call: the median of 10 timed calls after
3 warm-ups, CUDA events around each (typed_costs.ms; the figures of its first run, 2026-12-03, are
the median of 5 after one warm-up).

usage: cd lab/scripts && MEMHIER_LIBRARY=../../build/libmemhier.so PYTHONPATH=../../python \
       python3 rank_percentile.py
       (ncu: RANK_PERCENTILE_ONE=N runs one auto call of the N^2 float32 5 x 5 rank 6 alone, N = 1:
       8192)"""
import importlib
import importlib.util
import os

import cupy as cp
import cupyx.scipy.ndimage as cnd
import numpy as np

import memhier.ndimage as mnd
from typed_costs import ms  # GPU ms a call: the median of 10 after 3 warm-ups, events around each


def peers():
    """cupyx's ndimage and, where installed, cuCIM's vendored copy of it."""
    found = {"cupyx": cnd}
    if importlib.util.find_spec("cucim") is not None:
        found["cucim"] = importlib.import_module("cucim.skimage._vendored.ndimage")
    return found


def image(n, dtype):
    v = np.random.default_rng(n).uniform(0, 255, (n, n))
    return cp.asarray(v.astype(dtype))


def main():
    if os.environ.get("RANK_PERCENTILE_ONE"):
        n = int(os.environ["RANK_PERCENTILE_ONE"])
        x = image(8192 if n == 1 else n, np.float32)
        mnd.rank_filter(x, 6, size=5)
        cp.cuda.get_current_stream().synchronize()
        return
    cases = [("5x5 rank 6 (percentile 25)", 5, 6, ("network", "bisect", "sorted-rows")),
             ("5x5 rank 12 (the median)", 5, 12, ("network", "bisect", "median5x5", "sorted-rows")),
             ("3x3 rank 2", 3, 2, ("network", "bisect", "sorted-rows")),
             ("7x7 rank 12", 7, 12, ("network", "bisect", "sorted-rows")),
             ("7x7 rank 24 (the median)", 7, 24, ("network", "median7x7", "sorted-rows"))]
    others = peers()
    for dtype in (np.float32, np.uint8):
        for n in (512, 2048, 8192):
            x = image(n, dtype)
            for name, size, rank, rows in cases:
                line = f"{np.dtype(dtype).name:8} {n:5}^2 {name:28}"
                for row in ("auto",) + rows:
                    line += f"  {row} {ms(lambda: mnd.rank_filter(x, rank, size=size, variant=row)):7.3f}"
                for lib, mod in others.items():
                    line += f"  {lib} {ms(lambda: mod.rank_filter(x, rank, size=size)):7.3f}"
                print(line + " ms", flush=True)


if __name__ == "__main__":
    main()

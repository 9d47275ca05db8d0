#!/usr/bin/env python3
"""What auto's choice costs the host (issue 64): memhier.ndimage.correlate 5 x 5 reflect on CuPy
images of 256^2 to 8192^2, variant "auto" against the row auto takes named ("conv2d/walk"), host
time a call (median of single calls, the GPU idle before each) in turns, three rounds.
usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/auto_host_cost.py"""

import cupy
import numpy as np

import memhier.ndimage as mnd
from memhier import _fast
from cupy_timing import single_call_us


def main():
    print("compiled entry:", _fast._entry is not None)
    rng = np.random.default_rng(5)
    w = cupy.asarray(rng.uniform(-1, 1, (5, 5)).astype(np.float32))
    for n in (256, 512, 1024, 2048, 4096, 8192):
        x = cupy.asarray(rng.uniform(-1, 1, (n, n)).astype(np.float32))
        calls = {v: (lambda v=v: mnd.correlate(x, w, variant=v)) for v in ("auto", "conv2d/walk")}
        for fn in calls.values():
            for _ in range(5):
                fn()
        got = {v: [] for v in calls}
        for _ in range(3):
            for v, fn in calls.items():
                got[v].append(single_call_us(fn))
        line = " ".join(f"{v} {' '.join(f'{t:5.1f}' for t in ts)}" for v, ts in got.items())
        print(f"{n:5}^2  {line}", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""conv2d/walk's border (issue 64): GPU time a call of memhier.ndimage.correlate on CuPy images
through conv2d/walk (float32 3 x 3, 5 x 5 and 7 x 7; uint8 3 x 3 and 5 x 5; reflect and constant),
a stack of 1000 images of 256^2 beside its copy floor, and the host time of the everyday call
(float32 5 x 5 reflect, 256^2 to 8192^2), one JSON line a case. Run once a library
(MEMHIER_LIBRARY) and compare the lines: how the border's outputs are computed (the ring's kernel
after the walking one, as a programmatic dependent launch or a plain one; or the walking kernel's
own warps at the border, lab/tools/conv2d_walk_border_in_warps.patch) against the call's time.
usage: MEMHIER_LIBRARY=... PYTHONPATH=python python3 lab/scripts/walk_border.py LABEL"""
import json
import sys

import cupy
import numpy as np

import memhier.ndimage as mnd
from cupy_timing import gpu_ms, single_call_us
from memhier import _fast


def gpu_us(fn, reps):
    """GPU us a call of fn(): the least of three gpu_ms timings."""
    return min(gpu_ms(fn, reps) for _ in range(3)) * 1e3


def main():
    label = sys.argv[1]
    # host time compares only between libraries that both have the compiled entry beside them (the
    # Python path costs ~20 us more a call)
    entry = _fast._entry is not None
    rng = np.random.default_rng(3)
    for dtype in ("float32", "uint8"):
        for k in ((3, 5, 7) if dtype == "float32" else (3, 5)):
            w = cupy.asarray(rng.uniform(-1, 1, (k, k)).astype(np.float32))
            for n in ((256, 512, 1024, 4096, 8192) if dtype == "float32" and k == 5 else (1024, 4096, 8192)):
                x = rng.uniform(0, 255, (n, n)).astype(dtype)
                x = cupy.asarray(x)
                for mode in ("reflect", "constant"):
                    fn = lambda: mnd.correlate(x, w, mode=mode, variant="conv2d/walk")
                    row = {"label": label, "entry": entry, "dtype": dtype, "k": k, "n": n, "mode": mode,
                           "gpu_us": gpu_us(fn, max(5, int(200 * 1024 * 1024 / (n * n))))}
                    if mode == "reflect" and dtype == "float32" and k == 5:
                        row["host_us"] = single_call_us(fn)
                    print(json.dumps(row), flush=True)
    x = cupy.asarray(rng.uniform(-1, 1, (1000, 256, 256)).astype(np.float32))
    w = cupy.asarray(rng.uniform(-1, 1, (5, 5)).astype(np.float32))
    y = cupy.empty_like(x)
    filt = gpu_us(lambda: mnd.correlate(x, w, axes=(1, 2)), 50)
    copy = gpu_us(lambda: y.__setitem__(Ellipsis, x), 50)
    print(json.dumps({"label": label, "entry": entry, "stack": "1000 x 256^2 5x5 reflect", "gpu_us": filt, "copy_us": copy,
                      "x_copy_floor": filt / copy}), flush=True)


if __name__ == "__main__":
    main()

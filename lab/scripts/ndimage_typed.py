#!/usr/bin/env python3
"""One-off probe: correlate on uint8 (and uint16) CuPy images through memhier.ndimage, typed
(mh_conv2d_typed: walk and regtile convert in their loaders) against the same call on float32 with the casts
on CuPy (the path before typed rows existed) and cupyx.scipy.ndimage.correlate; timed as
scripts/ndimage_bench.py times (a call alone, and pipelined); ms and the ratio to the copy
floor of the typed arrays.

usage: ndimage_typed.py [N]   (default 8192: N x N images)"""
import os
import sys

import cupy as cp
import cupyx.scipy.ndimage as cnd
import numpy as np

import memhier
from memhier import ndimage as mnd
from memhier._convert import store

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from ndimage_bench import gpu_ms as ms  # noqa: E402  (per call: median of 20; pipelined: 20 back to back)


def float_path(x, w):
    y = mnd.correlate(x.astype(cp.float32), w)
    out = cp.empty(x.shape, x.dtype)
    store(y, out, "cupy")
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    copy = memhier.info(0, ceilings=True)["copy_gbps"]
    rng = np.random.default_rng(1)
    for dtype in (np.uint8, np.uint16):
        x = cp.asarray(rng.integers(0, np.iinfo(dtype).max, (n, n), endpoint=True).astype(dtype))
        floor = 2 * x.nbytes / (copy * 1e9) * 1e3
        for k in (3, 5, 7, 11):
            w = rng.uniform(0, 1, (k, k))
            w = cp.asarray((w / w.sum()).astype(np.float32))
            same = bool((mnd.correlate(x, w) == float_path(x, w)).all())
            rows = [("typed", lambda: mnd.correlate(x, w)), ("float32 + casts", lambda: float_path(x, w)),
                    ("cupyx", lambda: cnd.correlate(x, w))]
            for name, fn in rows:
                one, piped = ms(fn)
                print(f"{np.dtype(dtype).name} {n}^2 {k}x{k} {name:16s} {one:8.4f} ms, pipelined {piped:8.4f} "
                      f"({piped / floor:5.2f}x the copy floor {floor:.4f})" + (f"  equal: {same}" if name == "typed" else ""))


if __name__ == "__main__":
    main()

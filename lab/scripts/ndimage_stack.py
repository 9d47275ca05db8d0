#!/usr/bin/env python3
"""One-off probe: a stack of float32 images filtered in one call, memhier.ndimage against
cupyx.scipy.ndimage, timed as scripts/ndimage_bench.py times (per call: the median of 20, the
stream synchronized after each; pipelined: 20 calls back to back, the best of 3); prints ms and
the ratio to the copy floor (reading and writing the stack once at the copy ceiling memhier measures).

usage: ndimage_stack.py [N H W K MODE]   (default 256 512 512 5 reflect)"""
import os
import sys

import cupy as cp
import cupyx.scipy.ndimage as cnd
import numpy as np

import memhier
from memhier import ndimage as mnd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from ndimage_bench import gpu_ms as ms  # noqa: E402


def main():
    n, h, w, k = (int(v) for v in (sys.argv[1:5] if len(sys.argv) > 4 else (256, 512, 512, 5)))
    mode = sys.argv[5] if len(sys.argv) > 5 else "reflect"
    x = cp.random.default_rng(1).uniform(-1, 1, (n, h, w), dtype=cp.float32)
    f = np.random.default_rng(2).uniform(-1, 1, (k, k)).astype(np.float32)
    fd = cp.asarray(f)
    ours, ours_p = ms(lambda: mnd.correlate(x, fd, mode=mode, axes=(1, 2)))
    theirs, theirs_p = ms(lambda: cnd.correlate(x, fd[None], mode=mode))
    err = float(cp.abs(mnd.correlate(x, fd, mode=mode, axes=(1, 2)) - cnd.correlate(x, fd[None], mode=mode)).max())
    copy = memhier.info(0, ceilings=True)["copy_gbps"]
    floor = 2 * x.nbytes / (copy * 1e9) * 1e3
    print(f"{n} x {h} x {w}, {k} x {k}, {mode}: memhier {ours:.4f} ms ({ours / floor:.2f}x the copy floor "
          f"{floor:.4f} ms at {copy:.0f} GB/s), cupyx {theirs:.4f} ms ({theirs / ours:.1f}x), largest difference {err:.2e}")
    print(f"  pipelined: memhier {ours_p:.4f} ms ({ours_p / floor:.2f}x the floor), cupyx {theirs_p:.4f} ms "
          f"({theirs_p / ours_p:.1f}x)")


if __name__ == "__main__":
    main()

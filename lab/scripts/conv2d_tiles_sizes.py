#!/usr/bin/env python3
"""conv2d/tiles against conv2d/walk through memhier.ndimage.correlate (CuPy arrays): GPU time per
call in a loop at 256^2 to 8192^2 and on stacks of small images, beside the copy floor (a
device-to-device copy of the same bytes), and host time per call, for 3 x 3 and 5 x 5 filters in
reflect mode; every output of tiles equal to walk's bit for bit in every mode (both sum in the
same order).

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/conv2d_tiles_sizes.py"""
import cupy
import numpy as np

import memhier.ndimage as mnd
from cupy_timing import gpu_ms, single_call_us

MODES = ("reflect", "mirror", "nearest", "wrap", "constant")


def gpu_us(call, calls):
    """GPU time per call over `calls` back-to-back calls, the least of 3 rounds."""
    return min(gpu_ms(call, calls) for _ in range(3)) * 1e3


def main():
    rng = np.random.default_rng(5)
    shapes = [(s, s) for s in (256, 512, 1024, 2048, 4096, 8192)] + [(1000, 256, 256), (256, 512, 512), (64, 1024, 1024),
                                                                 (16, 2048, 2048), (64, 1080, 1920), (4, 4096, 4096)]
    print(f"{'shape':>18} {'k':>2} {'copy us':>9} {'walk us':>9} {'tiles us':>9} {'auto us':>9}  walk/copy tiles/copy"
          f"  host us: walk tiles")
    for shape in shapes:
        x = cupy.asarray((rng.standard_normal(shape) * np.exp2(rng.integers(-8, 8, shape))).astype(np.float32))
        axes = (1, 2) if len(shape) == 3 else None
        y = cupy.empty_like(x)
        calls = max(20, min(200, int(4e9 / x.nbytes)))
        copy = gpu_us(lambda: y.__setitem__(Ellipsis, x), calls)
        for k in (3, 5):
            w = cupy.asarray(rng.uniform(-1, 1, (k, k)).astype(np.float32))
            calls_of = {v: (lambda v=v: mnd.correlate(x, w, mode="reflect", axes=axes, variant=v, output=y))
                        for v in ("walk", "tiles", "auto")}
            times = {v: gpu_us(c, calls) for v, c in calls_of.items()}
            host = {v: single_call_us(calls_of[v], 50) for v in ("walk", "tiles")}
            print(f"{'x'.join(map(str, shape)):>18} {k:>2} {copy:9.1f} {times['walk']:9.1f} {times['tiles']:9.1f} "
                  f"{times['auto']:9.1f}  {times['walk'] / copy:9.3f} {times['tiles'] / copy:10.3f}"
                  f"  {host['walk']:10.1f} {host['tiles']:5.1f}")
            if x.size <= 1 << 24:
                for mode in MODES:
                    for origin in ((0, 0), (-(k // 2), (k - 1) // 2)):
                        a = mnd.correlate(x, w, mode=mode, cval=0.5, origin=origin, axes=axes, variant="walk")
                        b = mnd.correlate(x, w, mode=mode, cval=0.5, origin=origin, axes=axes, variant="tiles")
                        if not cupy.array_equal(a, b):
                            bad = int(cupy.sum(a != b))
                            print(f"  DIFFER: {shape} {k}x{k} {mode} origin {origin}: {bad} outputs")


if __name__ == "__main__":
    main()

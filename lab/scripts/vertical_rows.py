#!/usr/bin/env python3
"""Which sepfilter row should take a filter of the vertical axis alone computed in float64
(issue 65: auto sends it to lines, which runs correlate1d(9) along axis 0 of a float64 8192^2
image at 3.1x its copy floor, where fused64 runs the same filter along the last axis at 1.6x):
correlate1d along axis 0 forced onto lines, fused64 and two-pass, and auto, for float64 and int32
images of 512^2 to 8192^2 and 3, 9 and 33 taps, GPU ms a call (the median of 10 after three
warm-ups, events around each; typed_costs.ms), with the copy floor of each image.

usage: PYTHONPATH=python:lab/scripts python3 lab/scripts/vertical_rows.py [SIZES]   (e.g. 512,2048,8192)"""
import sys

import cupy as cp
import numpy as np

import memhier.ndimage as mnd
from typed_costs import ms

ROWS = ("lines", "fused64", "two-pass", "auto")


def copy_ms(x):
    y = cp.empty_like(x)
    return ms(lambda: y.__setitem__(Ellipsis, x))


def main():
    sizes = [int(s) for s in sys.argv[1].split(",")] if len(sys.argv) > 1 else [512, 2048, 8192]
    rng = np.random.default_rng(5)
    print(f"{'image':>18} {'taps':>4} " + " ".join(f"{r:>9}" for r in ROWS) + "      copy  best/copy")
    for n in sizes:
        for dtype in (np.float64, np.int32):
            x = cp.asarray(rng.integers(-1000, 1000, (n, n)).astype(dtype))
            floor = copy_ms(x)
            for k in (3, 9, 33):
                w = rng.uniform(0, 1, k)
                got = {}
                for row in ROWS:
                    try:
                        got[row] = ms(lambda: mnd.correlate1d(x, w, axis=0, variant=row))
                    except Exception as e:  # noqa: BLE001 - a row that refuses the call: its reason in short
                        got[row] = None
                        print(f"  {row} refuses {n}^2 {np.dtype(dtype).name} {k} taps: {str(e)[:90]}")
                times = " ".join(f"{got[r]:9.4f}" if got[r] is not None else f"{'-':>9}" for r in ROWS)
                best = min(v for v in got.values() if v is not None)
                print(f"{n:>6}^2 {np.dtype(dtype).name:>9} {k:>4} {times} {floor:9.4f}  {best / floor:8.2f}")


if __name__ == "__main__":
    main()

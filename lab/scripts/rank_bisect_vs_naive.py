#!/usr/bin/env python3
"""rank/naive against rank/bisect on median_filter at 4096^2, uint8 and float32, 7x7 to 25x25
(GPU ms a call; "same" where both rows take the call and agree): auto's order between them
(issue 68).

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/rank_bisect_vs_naive.py"""
import cupy as cp
import numpy as np

import memhier
import memhier.ndimage as mnd
from rank_targets import ms  # the median of timed calls after a warm-up


def main():
    rng = np.random.default_rng(1)
    images = {"uint8": cp.asarray(rng.integers(0, 256, (4096, 4096)).astype(np.uint8)),
              "float32": cp.asarray(rng.standard_normal((4096, 4096), np.float32))}
    for name, x in images.items():
        for size in (7, 9, 11, 13, 15, 17, 25):
            line, outputs = f"{name:8s} {size:2d}x{size:<2d} ({size * size:4d})", {}
            for variant in ("naive", "bisect"):
                try:
                    outputs[variant] = mnd.median_filter(x, size=size, variant=variant)
                except memhier.Unsupported:
                    line += f"  {variant} refused"
                    continue
                line += f"  {variant} {ms(lambda: mnd.median_filter(x, size=size, variant=variant)):9.3f} ms"
            if len(outputs) == 2:
                line += "  same" if bool(cp.array_equal(outputs["naive"], outputs["bisect"])) else "  DIFFER"
            print(line, flush=True)


if __name__ == "__main__":
    main()

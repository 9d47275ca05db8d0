#!/usr/bin/env python3
"""conv2d/tiles' kernels under compute-sanitizer (memcheck, racecheck): both configurations' shapes
through memhier.ndimage.correlate on CuPy arrays, 3 x 3 and 5 x 5, every mode, origins at their
limits, rows off 16 bytes, partial tiles, a stack; each result checked against walk's.

usage: compute-sanitizer --tool racecheck python3 lab/scripts/conv2d_tiles_sanitize.py"""
import cupy
import numpy as np

import memhier.ndimage as mnd

rng = np.random.default_rng(3)
bad = 0
for shape in [(3, 70, 300), (600, 517), (1, 1030)]:
    x = cupy.asarray(rng.standard_normal(shape).astype(np.float32))
    axes = (1, 2) if len(shape) == 3 else None
    for k in (3, 5):
        w = cupy.asarray(rng.standard_normal((k, k)).astype(np.float32))
        for mode in ("reflect", "mirror", "nearest", "wrap", "constant"):
            for origin in ((0, 0), (-(k // 2), (k - 1) // 2)):
                a = mnd.correlate(x, w, mode=mode, cval=0.5, origin=origin, axes=axes, variant="tiles")
                b = mnd.correlate(x, w, mode=mode, cval=0.5, origin=origin, axes=axes, variant="walk")
                bad += int(not cupy.array_equal(a, b))
print(f"{bad} results differ from walk's")

#!/usr/bin/env python3
"""Issue 68's GPU targets in one run (H200, CuPy arrays, cupyx beside): GPU ms a call of
memhier.ndimage's rank filters against cupyx.scipy.ndimage's and the copy floor of the image's
dtype (a device-to-device copy of the image), a line each.

  minimum_filter / maximum_filter float32 8192^2, square sizes 3 to 101 (target <= 1.5x copy);
  median_filter uint8 8192^2 3x3 (<= 1.5x copy), 5x5 (<= 3x), 7x7 (>= 10x cupyx), 15x15 and
  31x31 (>= 20x cupyx); float32 3x3 (<= 2x copy); grey_opening float32 size 15 (<= 3x copy);
  the first median_filter of a fresh process (<= 0.5 s, import excluded).

A call slower than 50 ms is timed on 2 runs after one warm-up, one slower than 500 ms by its
warm-up alone (cupyx's large medians take seconds); cupyx is left out past `CUPYX_MAX_WINDOW`
elements a window (its sort per output).

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/rank_targets.py [N] [names]
names: minmax, median, opening, first, rungs, volumes (default: all but rungs and volumes); RANK_QUICK=1: three sizes of each"""
import os
import subprocess
import sys
import time

import cupy as cp
import cupyx.scipy.ndimage as cnd
import numpy as np

import memhier
import memhier.ndimage as mnd

CUPYX_MAX_WINDOW = 15 * 15


def ms(f):
    a, b = cp.cuda.Event(), cp.cuda.Event()
    a.record()
    f()
    b.record()
    b.synchronize()
    if cp.cuda.get_elapsed_time(a, b) > 500:  # a call of seconds: its first run is the figure
        return cp.cuda.get_elapsed_time(a, b)
    times = []
    for _ in range(10):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        f()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
        if times[0] > 50 and len(times) == 2:
            break
    return sorted(times)[len(times) // 2]


def copy_ms(x):
    y = cp.empty_like(x)
    return ms(lambda: cp.cuda.runtime.memcpyAsync(y.data.ptr, x.data.ptr, x.nbytes, cp.cuda.runtime.memcpyDeviceToDevice,
                                                  cp.cuda.get_current_stream().ptr))


def row(name, call, x, size, target, window, variant="auto", **kw):
    """Time memhier (its variant) and (small windows) cupyx on one call; check they agree; print
    the line."""
    try:
        got = getattr(mnd, call)(x, size=size, variant=variant, **kw)
    except memhier.Unsupported as e:
        print(f"{name:44s} refused: {e}", flush=True)
        return
    ours = ms(lambda: getattr(mnd, call)(x, size=size, variant=variant, **kw))
    floor = copy_ms(x)
    text = f"{name:44s} {ours:9.3f} ms  {ours / floor:6.2f}x copy"
    if window <= CUPYX_MAX_WINDOW:
        want = getattr(cnd, call)(x, size=size, **kw)
        same = bool(cp.array_equal(got, want))
        theirs = ms(lambda: getattr(cnd, call)(x, size=size, **kw))
        text += f"  cupyx {theirs:9.3f} (x{theirs / ours:6.2f}){'' if same else '  DIFFERS from cupyx'}"
    print(f"{text}  target {target}", flush=True)


QUICK = os.environ.get("RANK_QUICK") == "1"  # a few sizes each, for a short run


def minmax(n, rng):
    x = cp.asarray(rng.standard_normal((n, n), np.float32))
    for size in (3, 15, 101) if QUICK else (3, 7, 15, 31, 101):
        for call in ("minimum_filter", "maximum_filter"):
            row(f"{call} float32 {n}^2 size {size}", call, x, size, "<= 1.5x copy", 2 * size)
        row(f"  minmax's two passes, size {size}", "minimum_filter", x, size, "(the rung below)", 2 * size,
            variant="minmax")
    u8 = cp.asarray(rng.integers(0, 256, (n, n), np.uint8))
    for size in (3, 15):
        row(f"minimum_filter uint8 {n}^2 size {size}", "minimum_filter", u8, size, "<= 1.5x copy", 2 * size)


def median(n, rng):
    u8 = cp.asarray(rng.integers(0, 256, (n, n), np.uint8))
    sizes = ((3, "<= 1.5x copy"), (5, "<= 3x copy"), (7, ">= 10x cupyx"), (15, ">= 20x cupyx"), (31, ">= 20x cupyx"))
    for size, target in sizes[:3] if QUICK else sizes:
        row(f"median_filter uint8 {n}^2 {size}x{size}", "median_filter", u8, size, target, size * size)
        if size == 3:
            row("  network's sort of nine, 3x3", "median_filter", u8, 3, "(the rung below)", 9, variant="network")
    f32 = cp.asarray(rng.standard_normal((n, n), np.float32))
    row(f"median_filter float32 {n}^2 3x3", "median_filter", f32, 3, "<= 2x copy", 9)
    row("  network's sort of nine, 3x3", "median_filter", f32, 3, "(the rung below)", 9, variant="network")


def rungs(n, rng):
    """Each median and rank rung beside the rungs auto would take without it, on the same image."""
    u8 = cp.asarray(rng.integers(0, 256, (n, n), np.uint8))
    f32 = cp.asarray(rng.standard_normal((n, n), np.float32))
    for x, dtype in ((u8, "uint8"), (f32, "float32")):
        for size, ours in ((5, "median5x5"), (7, "median7x7")):
            row(f"median_filter {dtype} {n}^2 {size}x{size} {ours}", "median_filter", x, size, "", size * size,
                variant=ours)
            for below in ("network", "bisect") if size == 5 or dtype == "uint8" else ("bisect",):
                row(f"  {below}", "median_filter", x, size, "(below)", 10**9, variant=below)
    for size in (5, 15, 31):
        for kw in ({"rank": size * size // 2}, {"rank": size * size // 10}):
            row(f"rank_filter uint8 {n}^2 {size}x{size} rank {kw['rank']} histogram", "rank_filter", u8, size, "",
                size * size if size < 15 else 10**9, variant="histogram", **kw)
            row("  bisect", "rank_filter", u8, size, "(below)", 10**9, variant="bisect", **kw)


def volumes(n, rng):
    """Issue 68's volume targets: a 256^3 float32 3x3x3 median (>= 10x cupyx) and a 512^3 float32
    minimum of size 7 (<= 2x copy: scipy's three separable passes), whatever n says."""
    v = cp.asarray(rng.standard_normal((256, 256, 256), np.float32))
    row("median_filter float32 256^3 3x3x3", "median_filter", v, 3, ">= 10x cupyx", 27)
    for below in ("network", "bisect"):
        row(f"  {below}", "median_filter", v, 3, "(below)", 10**9, variant=below)
    u8 = cp.asarray(rng.integers(0, 256, (256, 256, 256), np.uint8))
    row("median_filter uint8 256^3 3x3x3", "median_filter", u8, 3, "", 27)
    big = cp.asarray(rng.standard_normal((512, 512, 512), np.float32))
    row("minimum_filter float32 512^3 size 7", "minimum_filter", big, 7, "<= 2x copy", 14)


def opening(n, rng):
    x = cp.asarray(rng.standard_normal((n, n), np.float32))
    row(f"grey_opening float32 {n}^2 size 15", "grey_opening", x, 15, "<= 3x copy", 30)


FIRST = """import time, cupy as cp, memhier.ndimage as mnd
x = cp.asarray(cp.random.default_rng(1).integers(0, 256, (2048, 2048), dtype=cp.uint8)); cp.cuda.Device().synchronize()
t = time.perf_counter(); mnd.median_filter(x, size=5); cp.cuda.Device().synchronize()
print(f"{time.perf_counter() - t:.3f}")"""


def first(n, rng):
    seconds = subprocess.run([sys.executable, "-c", FIRST], capture_output=True, text=True, check=True).stdout.strip()
    print(f"{'first median_filter 5x5 uint8 2048^2, fresh process':44s} {seconds} s  target <= 0.5 s", flush=True)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else ["first", "median", "minmax", "opening"]
    rng = np.random.default_rng(68)
    started = time.perf_counter()
    for name in names:
        globals()[name](n, rng)
    print(f"({time.perf_counter() - started:.0f} s)")

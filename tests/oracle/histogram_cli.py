#!/usr/bin/env python3
"""The oracle for histogram: `memhier run histogram` against numpy (bincount, exact), int32,
int64 (values 2^32 past a bin and near the extremes: outside) and uint8 input, seed 004's a-z buckets, float32 values against numpy.histogram itself (--bins with
--range and without, --edges), with auto and every variant this machine can run (racy only
runs: its counts are wrong by design); --weights against numpy's float64 sums with every row
that takes them; refusals; a small CPU bench's JSON.

usage: histogram_cli.py MEMHIER_BINARY WORK_DIR
"""
import json
import os
import re
import tempfile

import numpy as np
from common import WORK, fail, finish, has_gpu, memhier, path, reference, registry, submit, on_gpu_too


def expected(x, lo, hi, width):
    return reference.histogram(x, lo, hi, width)


def run_histogram(x, flags, variant, device, weights=None):
    """`memhier run histogram` on x with flags (and --weights), its files in a folder of its own;
    (the process, the output's path)."""
    folder = tempfile.mkdtemp(prefix="histogram-", dir=WORK)
    np.save(os.path.join(folder, "x.npy"), x)
    out = os.path.join(folder, "h.npy")
    if weights is not None:
        np.save(os.path.join(folder, "w.npy"), weights)
        flags = ["--weights", os.path.join(folder, "w.npy"), *flags]
    args = ["run", "histogram", "--in", os.path.join(folder, "x.npy"), "--out", out, *flags]
    args += ["--variant", variant] if variant else []
    args += ["--device", device] if device else []
    return memhier(*args), out


def check_run(x, flags, lo, hi, width, variant=None, device=None, edges=None):
    r, out = run_histogram(x, flags, variant, device)
    what = f"{variant or 'auto'} {x.dtype} n={x.size} {' '.join(flags)} on {device or 'default'}"
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    if variant and variant.endswith("racy"):
        return
    if x.dtype == np.float32:  # flags hold --bins and --range, or edges --edges
        rng_ = tuple(float(v) for v in flags[3].split(",")) if "--range" in flags else None
        bins_arg = edges if edges is not None else int(flags[1])
        bins, _ = np.histogram(x, bins_arg, rng_)
        kept = np.histogram_bin_edges(x[~np.isnan(x)], bins_arg, rng_)
        outside = int(np.count_nonzero(~((x >= kept[0]) & (x <= kept[-1]))))
    else:
        bins, outside = expected(x, lo, hi, width)
    h = np.load(out)
    m = re.search(r"(\d+) outside( or NaN)?$", r.stdout.strip())
    if h.dtype != np.int64 or not np.array_equal(h, bins):
        fail(f"{what}: counts differ from numpy")
    if not m or int(m.group(1)) != outside or bool(m.group(2)) != (x.dtype == np.float32):
        fail(f"{what}: printed {r.stdout.strip()!r}, numpy counts {outside} outside")


def check_weighted(x, w, flags, variant=None, device=None, edges=None):
    """--weights: float64 sums against numpy's (bincount for int32 values, histogram for float32)."""
    r, out = run_histogram(x, flags, variant, device, w)
    what = f"weighted {variant or 'auto'} {x.dtype} {' '.join(flags)} on {device or 'default'}"
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    w64 = w.astype(np.float64)
    if x.dtype == np.float32:
        rng_ = tuple(float(v) for v in flags[3].split(",")) if "--range" in flags else None
        want, e = np.histogram(x, edges if edges is not None else int(flags[1]), rng_, weights=w64)
        outside = w64[~((x >= e[0]) & (x <= e[-1]))].sum()
    else:
        bins = int(flags[1])
        inside = (x >= 0) & (x < bins)
        want, outside = np.bincount(x[inside], w64[inside], minlength=bins), w64[~inside].sum()
    h = np.load(out)
    m = re.search(r"weight (\S+) outside", r.stdout)
    if h.dtype != np.float64 or not np.allclose(h, want, rtol=1e-12, atol=1e-9):
        fail(f"{what}: sums differ from numpy's")
    if not m or not np.isclose(float(m.group(1)), outside, rtol=1e-12, atol=1e-9):
        fail(f"{what}: printed {r.stdout.strip()!r}, numpy's weight outside {outside!r}")


def check_refusals():
    out = path("refused.npy")
    f32, i32 = path("f32.npy"), path("i32.npy")
    np.save(f32, np.zeros(4, np.float32))
    np.save(i32, np.zeros(4, np.int32))
    np.save(path("u8.npy"), np.zeros(4, np.uint8))
    np.save(path("i64.npy"), np.zeros(4, np.int64))
    np.save(path("i16.npy"), np.zeros(4, np.int16))
    # data whose own range gives no finite bins: numpy raises, memhier must not count zeros
    inf, wide, narrow = path("inf.npy"), path("wide.npy"), path("narrow.npy")
    np.save(inf, np.array([1, 2, -np.inf], np.float32))
    np.save(wide, np.array([-3e38, 0, 3e38], np.float32))
    np.save(narrow, np.array([1, np.nextafter(np.float32(1), np.float32(2))], np.float32))
    cases = [
        (["run", "histogram", "--in", inf, "--bins", "4", "--out", out], "the data hold -inf"),
        (["run", "histogram", "--in", wide, "--bins", "4", "--out", out], "no 4 finite, increasing bins"),
        (["run", "histogram", "--in", narrow, "--bins", "10", "--out", out], "no 10 finite, increasing bins"),
        (["run", "histogram", "--in", f32, "--out", out], "--bins (and --range) or --edges"),
        (["run", "histogram", "--in", f32, "--bins", "4", "--range", "1,0", "--out", out], "LO <= HI"),
        (["run", "histogram", "--in", f32, "--bins", "4", "--range", "0,inf", "--out", out], "two finite"),
        (["run", "histogram", "--in", f32, "--edges", i32, "--out", out], "1-D float32"),
        (["run", "histogram", "--in", i32, "--bins", "4", "--range", "0,1", "--out", out], "for float32 values"),
        (["run", "histogram", "--in", i32, "--out", out], "needs --bins"),
        (["run", "histogram", "--in", i32, "--bins", "0", "--out", out], "--bins '0'"),
        (["run", "histogram", "--in", i32, "--lo", "3", "--bins", "4", "--out", out], "uint8"),
        (["run", "histogram", "--in", i32, "--bins", "4"], "needs --in and --out"),
        (["run", "histogram", "--in", i32, "--bins", "4", "--weights", i32, "--out", out], "float32 (<f4) weights"),
        (["run", "histogram", "--in", path("u8.npy"), "--weights", f32, "--out", out], "not uint8"),
        (["run", "histogram", "--in", path("i64.npy"), "--out", out], "int64 values needs --bins"),
        (["run", "histogram", "--in", path("i64.npy"), "--bins", "4", "--weights", f32, "--out", out], "not int64"),
        (["run", "histogram", "--in", path("i16.npy"), "--bins", "4", "--out", out], "int64 (<i8)"),
    ]
    for args, phrase in cases:
        if os.path.exists(out):
            os.remove(out)
        r = memhier(*args)
        if r.returncode == 0 or phrase not in r.stderr:
            fail(f"`memhier {' '.join(os.path.basename(a) for a in args)}`: exit {r.returncode}, stderr {r.stderr.strip()!r}")
        if os.path.exists(out):
            fail(f"`memhier {' '.join(args)}` left its output behind")


def check_bench():
    out = path("bench.json")
    r = memhier("bench", "histogram", "--n", "100003", "--k", "37", "--device", "cpu", "--json", out)
    if r.returncode != 0:
        return fail(f"bench histogram on the CPU: exit {r.returncode}: {r.stdout[-1500:]}")
    rows = json.load(open(out))["rows"]
    if not rows or any(row["status"] != "ok" for row in rows):
        fail(f"bench rows: {rows}")


def main():
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    gpu = has_gpu()
    ints = rng.integers(-20, 300, 100003).astype(np.int32)
    longs = ints.astype(np.int64)
    longs[1::5] += 2**32  # a bin's low 32 bits with high ones set
    longs[2::7], longs[3::11] = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    data = rng.integers(0, 256, 70001).astype(np.uint8)
    text = np.frombuffer(("".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz {|"), 50000))).encode(), np.uint8)
    floats = rng.uniform(-1.3, 1.3, (301, 337)).astype(np.float32)
    floats.ravel()[::11] = np.nan
    dense = np.nan_to_num(floats, nan=0.25)
    edges = np.sort(rng.uniform(-1, 1, 41)).astype(np.float32)
    edges[7] = edges[6]
    np.save(path("edges.npy"), edges)
    runs = [(ints, ["--bins", "256"], 0, 255, 1, None), (longs, ["--bins", "300"], 0, 299, 1, None),
            (data, [], 0, 255, 1, None),
            (data, ["--bins", "100"], 0, 99, 1, None), (text, ["--lo", "97", "--hi", "122", "--width", "4"], 97, 122, 4, None),
            (floats, ["--bins", "64", "--range", "-1,1.0001"], 0, 0, 1, None), (dense, ["--bins", "97"], 0, 0, 1, None),
            (floats, ["--edges", path("edges.npy")], 0, 0, 1, edges)]
    for x, flags, lo, hi, width, e in runs:
        submit(check_run, x, flags, lo, hi, width, edges=e)
        submit(check_run, x, flags, lo, hi, width, device="cpu", edges=e)
    weights = rng.uniform(-1, 1, floats.shape).astype(np.float32)
    weighted_runs = [(ints, rng.uniform(-1, 1, ints.size).astype(np.float32), ["--bins", "256"], None),
                     (floats, weights, ["--bins", "64", "--range", "-1,1.0001"], None),
                     (floats, weights, ["--edges", path("edges.npy")], edges)]
    for name, backend in registry("histogram"):
        if name.startswith("histogram/weighted"):  # weights only
            if gpu:
                for x, w, flags, e in weighted_runs:
                    submit(check_weighted, x, w, flags, name, "0", edges=e)
            continue
        if backend == "cpu" or gpu:
            device = "cpu" if backend == "cpu" else "0"
            for i, (x, flags, lo, hi, width, e) in enumerate(runs):
                if on_gpu_too(device, i):
                    submit(check_run, x, flags, lo, hi, width, name, device, edges=e)
    for x, w, flags, e in weighted_runs:
        submit(check_weighted, x, w, flags, edges=e)
        submit(check_weighted, x, w, flags, "cpu-reference", "cpu", edges=e)
        submit(check_weighted, x, w, flags, "cpu-omp", "cpu", edges=e)
    check_refusals()
    check_bench()
    return finish()


if __name__ == "__main__":
    raise SystemExit(main())

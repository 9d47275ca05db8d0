#!/usr/bin/env python3
"""The oracle for rank: `memhier run rank` against scipy.ndimage.rank_filter, exactly (a rank
filter selects one of its window's values), with auto and every variant this machine can run, on
dtypes, footprints with holes, every mode, origins at their limits; refusals, none leaving an
output behind.

usage: rank_cli.py MEMHIER_BINARY WORK_DIR
"""
import sys

import numpy as np
import scipy.ndimage as ndi
from common import check_named, check_refused, fail, finish, has_gpu, path, registry, run_op, submit

MODES = ("reflect", "mirror", "nearest", "wrap", "constant")
DTYPES = (np.float32, np.float64, np.uint8, np.int32, np.int64)


def values(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape) * 50
        x[rng.random(shape) < 0.1] = 0.0  # ties, dark beside bright
        return x.astype(dtype)
    return rng.integers(0, 200, shape).astype(dtype)


def check_case(x, select, footprint, mode, cval, origin, variant, device):
    count = int(footprint.sum())
    rank = {"min": 0, "max": count - 1, "median": count // 2}.get(select, None)
    rank = int(select) if rank is None else rank
    options = ["--select", select, "--mode", mode, "--cval", repr(cval), "--origin", f"{origin[0]},{origin[1]}"]
    inputs = [("--in", "x.npy", x)]
    if footprint.all():
        options += ["--size", f"{footprint.shape[0]},{footprint.shape[1]}"]
    else:
        inputs.append(("--footprint", "f.npy", footprint.astype(np.uint8)))
    r, out = run_op("rank", inputs, options, variant, device)
    what = f"{variant or 'auto'} on {device}: {x.dtype} {x.shape}, {select} of {footprint.shape} ({count}), {mode}"
    if r.returncode != 0:
        if variant and f"{variant} refuses " in r.stderr:
            return  # a row that refuses the case by name (its supports())
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    check_named(what, r, "rank", variant)
    y = np.load(out)
    want = ndi.rank_filter(x, rank, footprint=footprint, mode=mode, cval=cval, origin=origin)
    if y.dtype != x.dtype or not np.array_equal(y, want):
        fail(f"{what}: differs from scipy ({y.dtype}, {int(np.sum(y != want))} values)")


def sweep(rng):
    devices = ["cpu"] + (["0"] if has_gpu() else [])
    names = {device: [None] + [n for n, b in registry("rank") if (b == "cpu") == (device == "cpu")] for device in devices}
    for i in range(24):
        dtype = DTYPES[i % len(DTYPES)]
        x = values(rng, (int(rng.integers(1, 40)), int(rng.integers(1, 40))), dtype)
        fp = rng.random((int(rng.integers(1, 6)), int(rng.integers(1, 6)))) > 0.3
        fp.flat[0] = True
        if i % 3 == 0:
            fp[:] = True
        select = ("min", "max", "median", str(int(rng.integers(0, fp.sum()))))[i % 4]
        mode = MODES[(i + i // len(DTYPES)) % len(MODES)]  # every dtype beside every mode, not the same one
        cval = float(x.flat[0]) if np.dtype(dtype).kind != "f" else -1.5
        origin = (int(rng.integers(-(fp.shape[0] // 2), (fp.shape[0] - 1) // 2 + 1)),
                  int(rng.integers(-(fp.shape[1] // 2), (fp.shape[1] - 1) // 2 + 1)))
        # auto on every case on the CPU; auto and each row on every seventh case, on a GPU only
        # those (a GPU process starts in seconds beside the gate's others; test_rank checks the
        # rows bit for bit on many more cases). Seven, prime to the four selections and the five
        # dtypes: every fourth case was always a minimum, and a GPU row never met scipy's median.
        every_row = i % 7 == 0
        for device in devices:
            if every_row or device == "cpu":
                for variant in names[device] if every_row else [None]:
                    submit(check_case, x, select, fp, mode, cval, origin, variant, device)


def check_refusals():
    out = path("refused.npy")
    x, one_d, f16, fp0, fpf = (path(n) for n in ("x.npy", "one_d.npy", "f16.npy", "fp0.npy", "fpf.npy"))
    np.save(x, np.zeros((4, 5), np.float32))
    np.save(one_d, np.zeros(10, np.float32))
    np.save(fp0, np.zeros((3, 3), np.uint8))
    np.save(fpf, np.ones((3, 3), np.float32))
    cases = [
        (["run", "rank", "--in", x, "--out", out, "--select", "min"], "one of --size and --footprint"),
        (["run", "rank", "--in", x, "--out", out, "--size", "3", "--footprint", fp0, "--select", "min"],
         "one of --size and --footprint"),
        (["run", "rank", "--in", x, "--out", out, "--size", "3"], "needs --in, --out, --select"),
        (["run", "rank", "--in", x, "--out", out, "--size", "3", "--select", "9"], "rank from 0 to 8"),
        (["run", "rank", "--in", x, "--out", out, "--size", "3", "--select", "middle"], "--select 'middle'"),
        (["run", "rank", "--in", x, "--out", out, "--size", "0,3", "--select", "min"], "--size '0,3'"),
        (["run", "rank", "--in", x, "--out", out, "--size", "3", "--select", "min", "--origin", "2"], "origin_row = 2"),
        (["run", "rank", "--in", x, "--out", out, "--size", "3", "--select", "min", "--mode", "edge"], "edge"),
        (["run", "rank", "--in", x, "--out", out, "--size", "3", "--select", "min", "--cval", "x"], "--cval 'x'"),
        (["run", "rank", "--in", x, "--out", out, "--footprint", fp0, "--select", "min"], "no element is set"),
        (["run", "rank", "--in", x, "--out", out, "--footprint", fpf, "--select", "min"], "2-D uint8"),
        (["run", "rank", "--in", one_d, "--out", out, "--size", "3", "--select", "min"], "a 2-D array"),
        (["run", "rank", "--in", path("missing.npy"), "--out", out, "--size", "3", "--select", "min"], "No such file"),
    ]
    check_refused(cases, out, "--device", "cpu")


def main():
    rng = np.random.default_rng(68)
    check_refusals()
    sweep(rng)
    return finish()


if __name__ == "__main__":
    sys.exit(main())

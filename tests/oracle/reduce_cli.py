#!/usr/bin/env python3
"""The oracle for reduce: `memhier run reduce` against numpy's float64 sum, with auto and every
variant this machine can run; the printed sum and the --out file agree; --op and --axis against
numpy's sum, mean, min, max, argmin and argmax of float32, float64 and integer arrays, on the CPU
backend
and on the GPU's auto (axis); refusals; a small CPU bench's JSON.

usage: reduce_cli.py MEMHIER_BINARY WORK_DIR
"""
import json
import os
import tempfile

import numpy as np
from common import WORK, fail, finish, has_gpu, memhier, path, reference, registry, submit, on_gpu_too


def check_run(x, variant=None, device=None):
    folder = tempfile.mkdtemp(prefix="reduce-", dir=WORK)
    np.save(os.path.join(folder, "x.npy"), x)
    out = os.path.join(folder, "s.npy")
    args = ["run", "reduce", "--in", os.path.join(folder, "x.npy"), "--out", out]
    args += ["--variant", variant] if variant else []
    args += ["--device", device] if device else []
    r = memhier(*args)
    what = f"{variant or 'auto'} n={x.size} on {device or 'default'}"
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    s = np.load(out)
    printed = float(r.stdout.strip().rsplit("=", 1)[1])
    ref, mag = reference.reduce_sum(x)
    bound = reference.rtol(x.size) * mag
    if s.dtype != np.float32 or s.shape != (1,) or abs(float(s[0]) - ref) > bound:
        fail(f"{what}: sum {s!r}, numpy {ref!r} (bound {bound:.3g})")
    if np.float32(printed) != s[0]:  # 9 significant digits name a float32 exactly
        fail(f"{what}: printed {printed!r}, wrote {float(s[0])!r}")


def check_axes(rng, device):
    x = rng.uniform(-9, 9, (30, 41, 5)).astype(np.float32)
    x[3, 4, 1] = np.nan
    xi = rng.integers(-1000, 1000, (17, 9)).astype(np.int32)
    xl = rng.integers(-2**40, 2**40, (6, 7, 3))
    xl[0, 0, 0] = xl[0, 1, 0] = xl[0, 2, 0] = 2**62  # an int64 sum that wraps, as numpy's
    xd = rng.standard_normal((13, 8, 3)) * np.exp2(rng.integers(-40, 40, (13, 8, 3)))
    xd[2, 5, 1] = np.nan
    xb = rng.integers(-128, 128, (9, 11)).astype(np.int8)
    xu = rng.integers(0, 65536, (5, 12, 2)).astype(np.uint16)
    xw = rng.integers(0, 2**32, (7, 6)).astype(np.uint32)  # sums past 2^32
    xq = rng.integers(0, 2**63, (4, 5), dtype=np.uint64) * np.uint64(2)  # past 2^63: sums that wrap
    for a, ops in ((x, ["sum", "mean", "min", "max", "argmin", "argmax"]), (xi, ["sum", "mean", "min", "max", "argmax"]),
                   (xl, ["sum", "mean", "max", "argmin"]), (xd, ["sum", "mean", "min", "max", "argmin", "argmax"]),
                   (xb, ["sum", "min", "argmax"]), (xu, ["sum", "mean", "max"]), (xw, ["sum", "min", "argmin"]),
                   (xq, ["sum", "max", "argmax"])):
        for i, op in enumerate(ops):
            for j, axis in enumerate([None, *range(-a.ndim, a.ndim)]):
                if on_gpu_too(device, i + j):
                    submit(check_axis, a, op, axis, device)


def check_axis(a, op, axis, device):
    folder = tempfile.mkdtemp(prefix="reduce-axis-", dir=WORK)
    src, out = os.path.join(folder, "a.npy"), os.path.join(folder, "r.npy")
    np.save(src, a)
    args = ["run", "reduce", "--device", device, "--in", src, "--out", out, "--op", op]
    args += ["--axis", str(axis)] if axis is not None else []
    r = memhier(*args)
    what = f"{op} {a.dtype} {a.shape} axis={axis} on {device}"
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    got, want = np.load(out), np.asarray(getattr(np, op)(a, axis=axis))
    want = want.reshape(want.shape or (1,))
    # int32 means: the exact int64 sum over the count, numpy's a float64 pairwise sum
    close = (np.allclose(got, want, rtol=2e-6, atol=1e-3, equal_nan=True) if op in ("sum", "mean")
             and (a.dtype.kind == "f" or op == "mean")
             else np.array_equal(got, want, equal_nan=a.dtype.kind == "f"))
    if got.dtype != want.dtype or got.shape != want.shape or not close:
        fail(f"{what}: {got.dtype} {got.shape} differs from numpy's {want.dtype} {want.shape}")


def check_refusals():
    f64, i32 = path("f64.npy"), path("i32.npy")
    np.save(f64, np.zeros(4))
    np.save(i32, np.zeros((3, 3), np.int32))
    np.save(path("f16.npy"), np.zeros(4, np.float16))
    cases = [
        (["run", "reduce", "--in", path("f16.npy")], "dtype '<f2' is not supported"),
        (["run", "reduce", "--in", i32, "--op", "median"], "--op 'median'"),
        (["run", "reduce", "--in", i32, "--axis", "2"], "--axis '2'"),
        (["run", "reduce"], "needs --in"),
        (["run", "reduce", "--in", path("missing.npy")], "No such file"),
        (["run", "reduce", "--in", f64, "--pad", "same"], "--pad"),
    ]
    for args, phrase in cases:
        r = memhier(*args)
        if r.returncode == 0 or phrase not in r.stderr:
            fail(f"`memhier {' '.join(os.path.basename(a) for a in args)}`: exit {r.returncode}, stderr {r.stderr.strip()!r}")


def check_bench():
    out = path("bench.json")
    r = memhier("bench", "reduce", "--n", "100003", "--device", "cpu", "--json", out)
    if r.returncode != 0:
        return fail(f"bench reduce on the CPU: exit {r.returncode}: {r.stdout[-1500:]}")
    rows = json.load(open(out))["rows"]
    if not rows or any(row["status"] != "ok" or row["workload"] != "n=100003 range=1" for row in rows):
        fail(f"bench rows: {rows}")


def main():
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    gpu = has_gpu()
    for n in (0, 1, 7, 2049, 100003):
        x = rng.uniform(-1000, 1000, n).astype(np.float32)
        submit(check_run, x)
        submit(check_run, x, device="cpu")
    x = rng.uniform(-1, 1, 50001).astype(np.float32)
    for name, backend in registry("reduce"):
        if backend == "cpu" or gpu:  # axis-naive, a thread a result, takes a whole array of <= 4096 alone
            submit(check_run, x[:4000] if name.endswith("axis-naive") else x, name, "cpu" if backend == "cpu" else "0")
    for device in ["cpu"] + (["0"] if gpu else []):
        check_axes(rng, device)
    check_refusals()
    check_bench()
    return finish()


if __name__ == "__main__":
    raise SystemExit(main())

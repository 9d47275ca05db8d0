#!/usr/bin/env python3
"""The oracle for reduce: `memhier run reduce` against numpy's float64 sum, with auto and every
variant this machine can run; the printed sum and the --out file agree; refusals; a small CPU
bench's JSON.

usage: reduce_cli.py MEMHIER_BINARY WORK_DIR
"""
import json
import os

import numpy as np
from common import fail, finish, has_gpu, memhier, path, reference, registry


def check_run(x, variant=None, device=None):
    np.save(path("x.npy"), x)
    out = path("s.npy")
    if os.path.exists(out):
        os.remove(out)
    args = ["run", "reduce", "--in", path("x.npy"), "--out", out]
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


def check_refusals():
    two_d, f64 = path("two_d.npy"), path("f64.npy")
    np.save(two_d, np.zeros((3, 3), np.float32))
    np.save(f64, np.zeros(4))
    cases = [
        (["run", "reduce", "--in", two_d], "1-D float32"),
        (["run", "reduce", "--in", f64], "dtype '<f8'"),
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
        check_run(x)
        check_run(x, device="cpu")
    x = rng.uniform(-1, 1, 50001).astype(np.float32)
    for name, backend in registry("reduce"):
        if backend == "cpu" or gpu:
            check_run(x, name, "cpu" if backend == "cpu" else "0")
    check_refusals()
    check_bench()
    return finish()


if __name__ == "__main__":
    raise SystemExit(main())

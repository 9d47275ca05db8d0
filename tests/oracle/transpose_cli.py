#!/usr/bin/env python3
"""The oracle for transpose: `memhier run transpose` against numpy's .T, exactly, with auto
and every variant this machine can run; refusals; a small CPU bench's JSON.

usage: transpose_cli.py MEMHIER_BINARY WORK_DIR
"""
import json
import os
import sys

import numpy as np
from common import check_named, check_refused, fail, finish, has_gpu, memhier, path, registry, run_op, submit


def check_run(x, variant=None, device=None):
    r, out = run_op("transpose", [("--in", "x.npy", x)], [], variant, device)
    what = f"{variant or 'auto'} {x.shape}"
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    check_named(what, r, "transpose", variant)
    y = np.load(out)
    if y.dtype != np.float32 or not np.array_equal(y, x.T):
        fail(f"{what}: the output is not x.T ({y.dtype} {y.shape})")


def check_refusals(rng):
    out = path("refused.npy")
    one_d, f64 = path("one_d.npy"), path("f64.npy")
    np.save(one_d, np.zeros(10, np.float32))
    np.save(f64, np.zeros((3, 3)))
    cases = [
        (["run", "transpose", "--in", one_d, "--out", out], "2-D float32"),
        (["run", "transpose", "--in", f64, "--out", out], "2-D float32 (<f4) array; found <f8"),
        (["run", "transpose", "--in", path("missing.npy"), "--out", out], "No such file"),
        (["run", "transpose", "--in", f64], "needs --in and --out"),
        (["run", "transpose", "--in", one_d, "--out", out, "--variant", "nope"], "2-D float32"),
    ]
    check_refused(cases, out)
    x = path("x2.npy")
    np.save(x, rng.uniform(-1, 1, (4, 5)).astype(np.float32))
    r = memhier("run", "transpose", "--in", x, "--out", out, "--variant", "nope")
    if r.returncode == 0 or "variant = 'nope'" not in r.stderr:
        fail(f"unknown variant: {r.stderr!r}")


def check_bench():
    out = path("bench.json")
    r = memhier("bench", "transpose", "--rows", "300", "--cols", "211", "--device", "cpu", "--json", out)
    if r.returncode != 0:
        return fail(f"bench transpose on the CPU: exit {r.returncode}: {r.stdout[-1500:]}")
    rows = json.load(open(out))["rows"]
    if not rows or any(row["status"] != "ok" or row["workload"] != "rows=300 cols=211" for row in rows):
        fail(f"bench rows: {rows}")


def main():
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    gpu = has_gpu()
    shapes = [(1, 1), (1, 9), (9, 1), (16, 16), (33, 17), (70, 129), (257, 64)]
    for shape in shapes:
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        submit(check_run, x)
        submit(check_run, x, device="cpu")
    x = rng.uniform(-1, 1, (45, 77)).astype(np.float32)
    for name, backend in registry("transpose"):
        if backend == "cpu" or gpu:
            submit(check_run, x, name, "cpu" if backend == "cpu" else "0")
    check_refusals(rng)
    check_bench()
    return finish()


if __name__ == "__main__":
    sys.exit(main())

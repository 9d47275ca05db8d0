#!/usr/bin/env python3
"""The oracle for matmul: `memhier run matmul` against numpy's a @ b in float64, with auto and
every variant this machine can run; refusals (shapes that do not chain, wrong dtypes, 1-D
arrays, c aliasing is the library's test); a small CPU bench's JSON.

usage: matmul_cli.py MEMHIER_BINARY WORK_DIR
"""
import json
import os

import numpy as np
from common import check_close, check_refused, fail, finish, has_gpu, memhier, path, reference, registry, run_op, submit


def check_run(a, b, variant=None, device=None, tf32=False, vendor=False):
    r, out = run_op("matmul", [("--a", "a.npy", a), ("--b", "b.npy", b)], [], variant, device)
    what = f"{variant or 'auto'} {a.shape} @ {b.shape} on {device or 'default'}"
    if r.returncode != 0 and vendor and " refuses " in r.stderr:  # cublas-bf16x9 below sm_100
        return print(f"{what}: refused: {r.stderr.strip()}")
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    check_close(what, np.load(out), *reference.matmul(a64, b64), a.shape[1], tf32)


def check_run64(a, b, variant=None, device=None):
    """A float64 product: float64 out, each output within k + 2 float64 epsilons of sum |a||b|."""
    r, out = run_op("matmul", [("--a", "a.npy", a), ("--b", "b.npy", b)], [], variant, device)
    what = f"float64 {variant or 'auto'} {a.shape} @ {b.shape} on {device or 'default'}"
    if r.returncode != 0:
        return fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    got = np.load(out)
    la, lb = a.astype(np.longdouble), b.astype(np.longdouble)
    err = np.abs(got.astype(np.longdouble) - la @ lb) / (np.abs(la) @ np.abs(lb))
    if got.dtype != np.float64 or got.shape != (a.shape[0], b.shape[1]) or err.max() > (a.shape[1] + 2) * np.finfo(np.float64).eps:
        fail(f"{what}: {got.dtype} {got.shape}, largest error {float(err.max()):.3g} of sum |a||b|")


def check_refusals(rng):
    out = path("refused.npy")
    a, b, b_bad, one_d, f64 = (path(n) for n in ("ra.npy", "rb.npy", "rb_bad.npy", "one_d.npy", "f64.npy"))
    np.save(a, rng.uniform(-1, 1, (4, 5)).astype(np.float32))
    np.save(b, rng.uniform(-1, 1, (5, 3)).astype(np.float32))
    np.save(b_bad, rng.uniform(-1, 1, (6, 3)).astype(np.float32))
    np.save(one_d, np.zeros(10, np.float32))
    np.save(f64, np.zeros((5, 3)))
    cases = [
        (["run", "matmul", "--a", a, "--b", b_bad, "--out", out], "b needs 5 rows"),
        (["run", "matmul", "--a", a, "--b", f64, "--out", out], "--a holds <f4, --b <f8: give both of one dtype"),
        (["run", "matmul", "--a", one_d, "--b", b, "--out", out], "2-D float32"),
        (["run", "matmul", "--a", a, "--out", out], "needs --a, --b and --out"),
        (["run", "matmul", "--a", a, "--b", b, "--out", out, "--pad", "same"], "takes no --pad"),
        (["run", "matmul", "--a", a, "--b", b, "--out", out, "--variant", "nope"], "variant = 'nope'"),
    ]
    check_refused(cases, out)


def check_bench():
    out = path("bench.json")
    r = memhier("bench", "matmul", "--rows", "70", "--k", "33", "--cols", "51", "--device", "cpu", "--json", out)
    if r.returncode != 0:
        return fail(f"bench matmul on the CPU: exit {r.returncode}: {r.stdout[-1500:]}")
    rows = json.load(open(out))["rows"]
    if not rows or any(row["status"] != "ok" or row["workload"] != "m=70 k=33 n=51" for row in rows):
        fail(f"bench rows: {rows}")


def main():
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    gpu = has_gpu()
    for m, k, n in [(1, 1, 1), (3, 7, 2), (33, 17, 65), (130, 129, 127)]:
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        submit(check_run, a, b)
        submit(check_run, a, b, device="cpu")
    a = rng.uniform(-1, 1, (45, 77)).astype(np.float32)
    b = rng.uniform(-1, 1, (77, 131)).astype(np.float32)
    for name, backend, tf32 in registry("matmul", reduced=True):
        if backend == "cpu" or gpu:
            submit(check_run, a, b, name, "cpu" if backend == "cpu" else "0", tf32, backend == "vendor")
    a64 = rng.standard_normal((45, 77)) * np.exp2(rng.integers(-30, 30, (45, 77)))
    b64 = rng.standard_normal((77, 131)) * np.exp2(rng.integers(-30, 30, (77, 131)))
    submit(check_run64, a64, b64)
    submit(check_run64, a64, b64, "cpu-reference", "cpu")
    if gpu:
        submit(check_run64, a64, b64, "cublas-dgemm", "0")
    check_refusals(rng)
    check_bench()
    return finish()


if __name__ == "__main__":
    raise SystemExit(main())

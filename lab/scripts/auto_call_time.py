"""What conv2d's `auto` costs the caller on a busy stream: the host time of one call (auto, then
the row auto picks, named) while the caller's stream still has ~50 ms of queued work, and the
GPU time of each row on an idle stream. A call that waited for the stream would take the queued
work's time; one that only queues takes microseconds. Rank-1 filters also time the separable
row, which reads the filter back (and so waits) but computes fewer products.

usage: python3 lab/scripts/auto_call_time.py OUT.json   (a CUDA device, CuPy, and the memhier
package importable: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python)"""
import json
import sys
import time

import cupy as cp
import numpy as np

import memhier

CASES = [  # rows, cols, filter
    (700, 700, "gaussian 9x9"), (1999, 3001, "random 5x29"), (1999, 3001, "random 29x5"),
    (8192, 8192, "gaussian 31x31"), (4096, 4096, "random 31x31"),
]


def make_filter(spec, rng):
    kind, size = spec.split()
    kr, kc = (int(x) for x in size.split("x"))
    if kind == "random":
        return cp.asarray(rng.uniform(-1, 1, (kr, kc)).astype(np.float32))
    g = np.exp(-0.5 * ((np.arange(kr) - (kr - 1) / 2) / (kr / 6)) ** 2)
    return cp.asarray(np.outer(g / g.sum(), g / g.sum()).astype(np.float32))


def gpu_ms(fn, reps=10):
    fn()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(reps):
        fn()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / reps


def host_ms_on_busy_stream(fn, busy):
    """The host time of fn() while the current stream holds queued work."""
    a = cp.ones((4096, 4096), cp.float32)
    with busy:
        for _ in range(20):  # about 50 ms of matmuls on the H100
            a = a @ a * 1e-4
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        busy.synchronize()
    return 1e3 * dt


def main(out):
    rng = np.random.default_rng(14)
    busy = cp.cuda.Stream(non_blocking=True)
    rows = []
    for r, c, spec in CASES:
        img = cp.asarray(rng.uniform(0, 1, (r, c)).astype(np.float32))
        f = make_filter(spec, rng)
        o = cp.empty_like(img)
        chosen = memhier.select("conv2d", rows=r, cols=c, krows=f.shape[0], kcols=f.shape[1], pad="same")
        entry = {"rows": r, "cols": c, "filter": spec, "auto": chosen}
        for name, variant in (("auto", "auto"), ("named", chosen)):
            fn = (lambda v=variant: memhier.conv2d(img, f, pad="same", variant=v, out=o))
            with busy:
                fn()  # plans and workspaces made before timing
            busy.synchronize()
            entry[f"{name}_host_ms_busy"] = host_ms_on_busy_stream(fn, busy)
            entry[f"{name}_gpu_ms"] = gpu_ms(fn)
        if spec.startswith("gaussian"):
            fn = (lambda: memhier.conv2d(img, f, pad="same", variant="separable", out=o))
            entry["separable_host_ms_busy"] = host_ms_on_busy_stream(fn, busy)
            entry["separable_gpu_ms"] = gpu_ms(fn)
        rows.append(entry)
        print(json.dumps(entry), flush=True)
    json.dump({"device": memhier.info(0)["name"], "rows": rows}, open(out, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])

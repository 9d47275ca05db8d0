"""matmul's 3xTF32 rows against cublasSgemm, per shape class: the largest error of each row over
every output (against a float64 product of the same float32 inputs), as a ratio to cuBLAS's, on
uniform data in [-1, 1] and on exponent-spread data (|x| from 2^-16 to 2^17); the median time of
each row; and what `auto` picks. Shapes with few outputs are repeated over seeds until they have
65536, so that a ratio of largest errors compares distributions, not two samples.

usage: python3 lab/scripts/matmul_accuracy.py OUT.json   (a CUDA device, CuPy, and the memhier
package importable: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python)"""
import json
import sys

import cupy as cp
import numpy as np

import memhier

ROWS = ("matmul/tf32x3-wgmma", "matmul/tf32x3", "matmul/cublas")
# (m, k, n, class): shapes with k >= 512 and m k n >= 4e8 (auto's before its accuracy rule), then
# shapes only a caller who names the row sends there
SHAPES = [
    (768, 768, 768, "square"), (896, 896, 896, "square"), (1000, 1000, 1000, "square"),
    (1024, 1024, 1024, "square"), (1536, 1536, 1536, "square"), (4096, 4096, 4096, "square"),
    (2000, 1000, 500, "rectangular"), (1000, 4096, 1000, "rectangular"), (8192, 512, 8192, "short k"),
    (2048, 16384, 2048, "long k"), (1024, 65536, 1024, "long k"), (2048, 65536, 2048, "long k"),
    (1024, 131072, 1024, "long k"), (1024, 262144, 1024, "very long k"), (2048, 262144, 2048, "very long k"),
    (512, 131072, 512, "long k, few outputs"), (512, 262144, 512, "very long k, few outputs"),
    (256, 1048576, 256, "very long k, few outputs"), (64, 131072, 64, "very long k, skinny"),
    (64, 65536, 64, "named: skinny"), (1, 4096, 1, "named: dot product"), (4096, 1, 4096, "named: outer product"),
    (300, 64, 200, "named: small"),
]


def data(rng, shape, kind):
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    if kind == "spread":
        x = (np.sign(x) * rng.uniform(1, 2, shape) * 2.0 ** rng.integers(-16, 17, shape)).astype(np.float32)
    return cp.asarray(x)


def timed(fn, reps=5):
    fn()
    times = []
    for _ in range(reps):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def measure(m, k, n, kind, rng):
    seeds = max(1, min(256, 65536 // (m * n)))
    worst = {r: 0.0 for r in ROWS}
    ms = {}
    for s in range(seeds):
        a, b = data(rng, (m, k), kind), data(rng, (k, n), kind)
        ref = a.astype(cp.float64) @ b.astype(cp.float64)
        for r in ROWS:
            c = memhier.matmul(a, b, variant=r)
            worst[r] = max(worst[r], float(cp.max(cp.abs(c.astype(cp.float64) - ref))))
            if s == 0:
                ms[r] = timed(lambda: memhier.matmul(a, b, variant=r, out=c))
        del a, b, ref
    base = worst["matmul/cublas"]
    return {"max_err": worst, "ratio": {r: worst[r] / base if base else None for r in ROWS}, "ms": ms,
            "outputs": seeds * m * n}


def near_flt_max():
    """Entries within 2^-11 of FLT_MAX times small ones: products cuBLAS keeps finite."""
    rng = np.random.default_rng(7)
    a = cp.asarray((rng.uniform(0.9999, 1.0, (64, 128)) * np.finfo(np.float32).max).astype(np.float32))
    b = cp.asarray(rng.uniform(-1e-3, 1e-3, (128, 64)).astype(np.float32))
    return {r: int(cp.count_nonzero(~cp.isfinite(memhier.matmul(a, b, variant=r)))) for r in ROWS}


def main(out):
    rng = np.random.default_rng(2026)
    results = []
    for m, k, n, cls in SHAPES:
        auto = memhier.select("matmul", m=m, k=k, n=n)
        for kind in ("uniform", "spread"):
            r = measure(m, k, n, kind, rng)
            r.update(m=m, k=k, n=n, shape_class=cls, data=kind, auto=auto)
            results.append(r)
            print(f"{m:>5} x {k:>7} x {n:<5} {kind:<7} auto={auto:<20} "
                  + "  ".join(f"{x.split('/')[1]} {r['ratio'][x]:.2f}x {r['ms'][x]:.3f}ms" for x in ROWS[:2])
                  + f"  cublas {r['ms']['matmul/cublas']:.3f}ms err {r['max_err']['matmul/cublas']:.2e}", flush=True)
    flt_max = near_flt_max()
    print("non-finite outputs near FLT_MAX (64 x 128 x 64):", flt_max, flush=True)
    json.dump({"device": memhier.info(0)["name"], "rows": results, "near_flt_max_nonfinite": flt_max},
              open(out, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])

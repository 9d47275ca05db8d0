#!/usr/bin/env python3
"""memhier under Dask on the GPUs of one machine (issue 18): each workload timed as one plain
call on one GPU (CuPy arrays), then through memhier.dask on a dask-cuda LocalCUDACluster of 1
and of every GPU, data resident on the workers' GPUs (persisted before timing); the results
checked against the plain call (conv2d bit for bit; batched conv1d on a sample of rows).

Workloads (the issue's): conv2d 32768 x 32768, 11 x 11, same; batched conv1d 8192 x 1,048,576,
k = 2047, one mask, valid. Sizes shrink with --scale (0.25: a quarter of each side or batch).

usage: python3 scripts/dask_scaling.py OUT.json [--scale S] [--reps R]
(needs cupy, dask, distributed, dask-cuda; MEMHIER_LIBRARY and PYTHONPATH as for the package)"""
import argparse
import json
import statistics
import time

import cupy as cp
import numpy as np

import memhier


def median_ms(fn, reps):
    fn()  # warm-up: plans, workspaces, worker imports
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def plain_ms(op, args, reps):
    def run():
        op(*args)
        cp.cuda.get_current_stream().synchronize()
    return median_ms(run, reps)


def dask_ms(client, make, reps):
    from distributed import wait

    def run():
        result = make().persist()
        wait(result)
        del result
    return median_ms(run, reps)


def workloads(scale):
    side = int(32768 * scale)
    batch = int(8192 * scale)
    return [
        {"name": f"conv2d {side}^2 11x11 same", "kind": "conv2d", "shape": (side, side), "chunks": (max(side // 8, 64), side),
         "filter": (11, 11), "pad": "same"},
        {"name": f"conv1d batched {batch} x 1048576 k=2047 valid", "kind": "conv1d", "shape": (batch, 1 << 20),
         "chunks": (max(batch // 16, 1), 1 << 20), "filter": (2047,), "pad": "valid"},
    ]


def run_workload(w, gpus, reps):
    import dask.array as da
    from dask_cuda import LocalCUDACluster
    from distributed import Client

    import memhier.dask as mdask

    rng = np.random.default_rng(1)
    filt = cp.asarray(rng.uniform(-1, 1, w["filter"]).astype(np.float32))
    out = {"workload": w["name"], "chunks": list(w["chunks"])}
    for n in (1, gpus) if gpus > 1 else (1,):
        with LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(str(i) for i in range(n))) as cluster, Client(cluster) as client:
            rs = da.random.RandomState(RandomState=cp.random.RandomState, seed=7)
            x = rs.uniform(-1, 1, size=w["shape"], chunks=w["chunks"], dtype=cp.float32).persist()
            if w["kind"] == "conv2d":
                def make():
                    return mdask.conv2d(x, filt, pad=w["pad"])
            else:
                def make():
                    return mdask.conv1d(x, filt, pad=w["pad"])
            out[f"dask_{n}gpu_ms"] = dask_ms(client, make, reps)
            if n == 1:  # the plain call on the client's GPU, on the same data, and the check
                if w["kind"] == "conv2d":
                    xs = x.compute()
                    out["plain_ms"] = plain_ms(lambda a: memhier.conv2d(a, filt, pad=w["pad"]), (xs,), reps)
                    ref = memhier.conv2d(xs, filt, pad=w["pad"])
                    got = make().compute()
                    out["bit_for_bit"] = bool(cp.array_equal(got, ref))
                    del xs, ref, got
                else:
                    rows = x[:4].compute()
                    full = x.compute() if x.nbytes <= (8 << 30) else None
                    if full is not None:
                        out["plain_ms"] = plain_ms(lambda a: memhier.conv1d(a, filt, pad=w["pad"]), (full,), reps)
                        del full
                    else:  # a batch too big for the client's copy: time the plain call on the first worker's share
                        share = x[: w["chunks"][0] * 4].compute()
                        scale = x.shape[0] / share.shape[0]
                        out["plain_ms"] = scale * plain_ms(lambda a: memhier.conv1d(a, filt, pad=w["pad"]), (share,), reps)
                        out["plain_ms_note"] = f"{share.shape[0]} rows timed, scaled by {scale:g}"
                        del share
                    ref = memhier.conv1d(rows, filt, pad=w["pad"])
                    got = make()[:4].compute()
                    out["rows_checked"] = 4
                    out["max_abs_diff_rows"] = float(cp.abs(got - ref).max())
            cp.get_default_memory_pool().free_all_blocks()
    out["dask_1gpu_overhead"] = out["dask_1gpu_ms"] / out["plain_ms"] - 1
    if gpus > 1:
        out[f"speedup_{gpus}gpu_over_1gpu_dask"] = out["dask_1gpu_ms"] / out[f"dask_{gpus}gpu_ms"]
        out[f"speedup_{gpus}gpu_over_plain"] = out["plain_ms"] / out[f"dask_{gpus}gpu_ms"]
    print(json.dumps(out), flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    gpus = cp.cuda.runtime.getDeviceCount()
    doc = {"device": memhier.info(0)["name"], "gpus": gpus, "scale": a.scale, "results": []}
    for w in workloads(a.scale):
        doc["results"].append(run_workload(w, gpus, a.reps))
        json.dump(doc, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()

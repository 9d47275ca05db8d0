#!/usr/bin/env python3
"""memhier under Dask on the GPUs of one machine (issue 18): each workload timed as one plain
call on one GPU (CuPy arrays), then through memhier.dask on a dask-cuda LocalCUDACluster of 1
and of every GPU; the results checked against the plain call (conv2d whole, batched conv1d on
its first 2048 signals).

How it is timed:
- the input is resident on the workers' GPUs before timing, in contiguous bands of chunks, an
  equal share on each worker (so that halos cross between workers only where bands meet);
- a Dask run is persist(), wait(), then every worker's device synchronized (client.run): memhier's
  calls return once their work is queued, so wait() alone can return before the GPUs are done;
- the floor of a run is timed the same way on a graph of one empty task a chunk ('floor_ms'),
  and client.run's synchronize alone ('sync_ms'); one run's task stream is summarized per worker
  (tasks, when the first began and the last ended after the submit, time inside tasks).

Workloads (the issue's): conv2d 32768 x 32768, 11 x 11, same; batched conv1d 8192 x 1,048,576,
k = 2047, one mask, valid; each in two chunk sizes, and the batched conv1d 8 times in a row as
one graph. Sizes shrink with --scale (0.25: a quarter of each side or batch).

usage: python3 scripts/dask_scaling.py OUT.json [--scale S] [--reps R] [--only NAME-PART]
(needs cupy, dask, distributed, dask-cuda; MEMHIER_LIBRARY and PYTHONPATH as for the package)"""
import argparse
import collections
import json
import statistics
import time

import cupy as cp
import dask.array as da
import numpy as np
from dask.graph_manipulation import clone
from dask_cuda import LocalCUDACluster
from distributed import Client, get_task_stream, wait

import memhier
import memhier.dask as mdask


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


def _synchronize_device():
    cp.cuda.runtime.deviceSynchronize()


def _empty_block(block):
    return cp.empty((1,) * block.ndim, dtype=block.dtype)


def run_to_done(client, make, inputs):
    """One Dask run: persisted, waited for, and every worker's GPU idle again. The graph is
    cloned (new names for every task but the inputs'): the last run's result, still held while
    its release travels to the scheduler, would otherwise stand in for this one's."""
    result = clone(make(), omit=inputs).persist()
    wait(result)
    client.run(_synchronize_device)
    del result


def task_stream_summary(client, make, inputs):
    """Per worker: tasks run, the first start and last end (ms after the submit), and the time
    spent inside tasks, for one run."""
    with get_task_stream(client) as stream:
        t0 = time.time()
        run_to_done(client, make, inputs)
    per_worker = {}
    for task in stream.data:
        for span in task.get("startstops", ()):
            if span.get("action") != "compute":
                continue
            w = per_worker.setdefault(task["worker"], {"tasks": 0, "first_ms": 1e18, "last_ms": 0.0, "busy_ms": 0.0})
            w["tasks"] += 1
            w["first_ms"] = min(w["first_ms"], (span["start"] - t0) * 1e3)
            w["last_ms"] = max(w["last_ms"], (span["stop"] - t0) * 1e3)
            w["busy_ms"] += (span["stop"] - span["start"]) * 1e3
    return {worker: {key: round(value, 2) for key, value in w.items()} for worker, w in sorted(per_worker.items())}


def resident_input(client, shape, chunks):
    """A random float32 dask array on the workers' GPUs: contiguous bands of chunks along axis
    0, one band a worker, equal shares (as equal as the chunk count allows)."""
    rs = da.random.RandomState(RandomState=cp.random.RandomState, seed=7)
    lazy = rs.uniform(-1, 1, size=shape, chunks=chunks, dtype=cp.float32)
    workers = sorted(client.scheduler_info()["workers"])
    starts = np.concatenate(([0], np.cumsum(lazy.chunks[0])))
    bands = np.array_split(np.arange(lazy.numblocks[0]), len(workers))
    parts = [client.persist(lazy[int(starts[b[0]]):int(starts[b[-1] + 1])], workers=[w])
             for w, b in zip(workers, bands) if len(b)]
    x = da.concatenate(parts, axis=0).persist()  # the joins run once, where the bands are
    wait(x)
    return x, dict(collections.Counter(w for holders in client.who_has(x).values() for w in holders))


def workloads(scale):
    """The issue's two workloads in the chunks of the first run (8 and 16) and in fewer, larger
    chunks (2 and 4), and a pipeline of 8 batched convolutions persisted as one graph: more
    work per graph against Dask's fixed cost per graph (floor_ms)."""
    side = int(32768 * scale)
    batch = int(8192 * scale)
    image = {"kind": "conv2d", "shape": (side, side), "filter": (11, 11), "pad": "same", "stages": 1}
    signals = {"kind": "conv1d", "shape": (batch, 1 << 20), "filter": (2047,), "pad": "valid", "stages": 1}
    found = []
    for parts in (8, 2):
        found.append(dict(image, name=f"conv2d {side}^2 11x11 same", chunks=(max(side // parts, 64), side)))
    for parts in (16, 4):
        found.append(dict(signals, name=f"conv1d batched {batch} x 1048576 k=2047 valid",
                          chunks=(max(batch // parts, 1), 1 << 20)))
    found.append(dict(signals, name=f"conv1d batched {batch} x 1048576 k=2047 valid, 8 in a row", stages=8,
                      chunks=(max(batch // 4, 1), 1 << 20)))
    return found


def chained(w, filt, batch):
    """The workload as plain calls: w["stages"] convolutions in a row, each batched conv1d with
    the variant memhier.dask runs (auto's pick for the whole batch, which a share of it might
    not get)."""
    if w["kind"] == "conv2d":
        return lambda a: memhier.conv2d(a, filt, pad=w["pad"])

    def run(a):
        for _ in range(w["stages"]):
            variant = memhier.select("conv1d", device=0, batch=batch, n=a.shape[1], k=filt.shape[0], pad=w["pad"],
                                     per_signal_masks=False)
            a = memhier.conv1d(a, filt, pad=w["pad"], variant=variant)
        return a
    return run


def check_against_plain(w, x, make, filt, reps, out):
    """The plain calls on the client's GPU (device 0) on the same data, and the check: conv2d
    whole, batched conv1d on its first 2048 signals (timed and scaled: the whole batch and its
    result would not fit beside the worker's copies), those signals checked against Dask's.
    Why 2048 and not a handful: fft-fused picks its segment length by the call's samples (batch
    x n; at k = 2047 real8192 from 2^22 samples, reg4096 below), so a call on 4 signals
    rounds differently from one on the whole batch; 2048 signals of ~2^20 samples make the same
    pick as the whole batch and as each chunk."""
    plain = chained(w, filt, x.shape[0])
    if w["kind"] == "conv2d":
        xs = x.compute()
        out["plain_ms"] = plain_ms(plain, (xs,), reps)
        out["bit_for_bit"] = bool(cp.array_equal(make().compute(), plain(xs)))
        return
    share = x[:min(2048, x.shape[0])].compute()
    scale = x.shape[0] / share.shape[0]
    out["plain_ms"] = scale * plain_ms(plain, (share,), reps)
    out["plain_ms_note"] = f"{share.shape[0]} signals timed, scaled by {scale:g}"
    ref = plain(share)
    del share
    got = make()[:ref.shape[0]].compute()
    out["rows_checked"] = int(ref.shape[0])
    out["bit_for_bit"] = bool(cp.array_equal(got, ref))
    out["max_abs_diff_rows"] = float(cp.abs(got - ref).max())
    out["max_abs_rows"] = float(cp.abs(ref).max())


def run_workload(w, gpus, reps):
    rng = np.random.default_rng(1)
    filt = cp.asarray(rng.uniform(-1, 1, w["filter"]).astype(np.float32))
    op = mdask.conv2d if w["kind"] == "conv2d" else mdask.conv1d
    out = {"workload": w["name"], "chunks": list(w["chunks"]), "stages": w["stages"]}
    for n in (1, gpus) if gpus > 1 else (1,):
        with LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(str(i) for i in range(n))) as cluster, Client(cluster) as client:
            x, out[f"placement_{n}gpu"] = resident_input(client, w["shape"], w["chunks"])

            def make():
                y = x
                for _ in range(w["stages"]):
                    y = op(y, filt, pad=w["pad"])
                return y

            def floor():
                return x.map_blocks(_empty_block, chunks=tuple((1,) * len(c) for c in x.chunks), dtype=np.float32)
            out[f"dask_{n}gpu_ms"] = median_ms(lambda: run_to_done(client, make, x), reps)
            out[f"floor_{n}gpu_ms"] = median_ms(lambda: run_to_done(client, floor, x), reps)
            out[f"sync_{n}gpu_ms"] = median_ms(lambda: client.run(_synchronize_device), reps)
            out[f"tasks_{n}gpu"] = task_stream_summary(client, make, x)
            if n == 1:
                check_against_plain(w, x, make, filt, reps, out)
            del x
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
    ap.add_argument("--only", default="", help="run the workloads whose name contains this")
    a = ap.parse_args()
    gpus = cp.cuda.runtime.getDeviceCount()
    doc = {"device": memhier.info(0)["name"], "gpus": gpus, "scale": a.scale, "reps": a.reps,
           "timing": "persist + wait + every worker's device synchronized; median of reps", "results": []}
    for w in (w for w in workloads(a.scale) if a.only in w["name"]):
        doc["results"].append(run_workload(w, gpus, a.reps))
        json.dump(doc, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()

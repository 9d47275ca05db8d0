#!/usr/bin/env python3
"""What the Python binding adds to a call (issue 15): reduce_sum of 4,194,304 floats held by a
CuPy array, on the GPU, three ways in one run:

  c_call   mh_reduce_sum itself, through ctypes with every argument prepared once (the C call
           plus one ctypes crossing, ~1 us: the floor any binding pays)
  memhier  memhier.reduce_sum(x): argument checks, context and stream lookup, output allocation
  cupy     cupy.sum(x), the peer

Two figures each: host_us, the time a call takes to return (the caller's cost: the GPU runs
asynchronously), as the median of 2,000 single calls with the GPU kept idle enough not to
back-pressure; and per_call_us, back-to-back calls until the GPU finishes (what a loop of calls
sustains). Writes JSON to argv[1] (default: stdout only).

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 scripts/python_overhead.py [OUT.json]"""
import ctypes
import json
import statistics
import sys
import time

import cupy
import numpy as np

import memhier
from memhier import _native
from latency import per_call_us

N = 4_194_304


def host_times(fn, sync, calls=2000):
    times = []
    for i in range(calls):
        if i % 64 == 0:
            sync()  # keep the launch queue short: a full queue would make the call itself wait
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    sync()
    return statistics.median(times) * 1e6


def main():
    x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, N).astype(np.float32))
    ctx = memhier.Context(0)
    out = cupy.empty((), cupy.float32)
    ctx.set_stream(cupy.cuda.get_current_stream().ptr)
    args = (ctx.handle, None, ctypes.c_void_p(x.data.ptr), N, ctypes.c_void_p(out.data.ptr))
    c_reduce = _native.lib.mh_reduce_sum

    def c_call():
        c_reduce(*args)

    def via_memhier():
        memhier.reduce_sum(x, context=ctx)

    def via_cupy():
        cupy.sum(x)

    sync = cupy.cuda.get_current_stream().synchronize
    for fn in (c_call, via_memhier, via_cupy):  # warm-up: plans, workspaces, CuPy's kernel cache
        for _ in range(50):
            fn()
    sync()
    ref = float(np.asarray(cupy.asnumpy(x), np.float64).sum())
    c_call()
    got_c = float(out.get())
    got_py = float(memhier.reduce_sum(x, context=ctx).get())
    result = {"n": N, "device": memhier.info(0)["name"], "variant": memhier.select("reduce", n=N),
              "sums": {"c_call": got_c, "memhier": got_py, "float64": ref}}
    for name, fn in (("c_call", c_call), ("memhier", via_memhier), ("cupy", via_cupy)):
        result[name] = {"host_us": host_times(fn, sync), "per_call_us": per_call_us(fn, sync, 2000)}
    result["binding_adds_host_us"] = result["memhier"]["host_us"] - result["c_call"]["host_us"]
    result["binding_adds_per_call_us"] = result["memhier"]["per_call_us"] - result["c_call"]["per_call_us"]
    text = json.dumps(result, indent=1)
    print(text)
    if len(sys.argv) > 1:
        open(sys.argv[1], "w").write(text + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Where Dask's time goes on the GPUs (issue 18): a 32768^2 float32 array in 8 row bands on a
LocalCUDACluster of 1 and of 2 GPUs, each step persisted and waited for: a copy per chunk
(map_blocks), memhier's conv2d per chunk without halos, map_overlap of an identity with dask's
zero boundary and with boundary 'none', and memhier.dask.conv2d; the graph's size.
usage: python3 lab/scripts/dask_overhead.py OUT.json   (cupy, dask, distributed, dask-cuda)"""
import time, statistics, json, sys
import cupy as cp, numpy as np, dask.array as da
from dask_cuda import LocalCUDACluster
from distributed import Client, wait
import memhier, memhier.dask as mdask

def t(make, reps=2):
    r = make().persist(); wait(r); del r
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); r = make().persist(); wait(r); ts.append((time.perf_counter() - t0) * 1e3); del r
    return round(statistics.median(ts), 2)

def main():
  filt = cp.asarray(np.random.default_rng(1).uniform(-1, 1, (11, 11)).astype(np.float32))
  res = {}
  for n in (1, 2):
      with LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(map(str, range(n)))) as c, Client(c):
          rs = da.random.RandomState(RandomState=cp.random.RandomState, seed=7)
          x = rs.uniform(-1, 1, size=(32768, 32768), chunks=(4096, 32768), dtype=cp.float32).persist(); wait(x)
          r = {}
          r["map_blocks_copy"] = t(lambda: x.map_blocks(lambda b: b.copy(), dtype=np.float32))
          r["map_blocks_conv_valid"] = t(lambda: x.map_blocks(lambda b: memhier.conv2d(b, filt, pad="valid", variant="regtile"), chunks=((4086,)*8, (32758,)), dtype=np.float32))
          r["overlap_identity_b0"] = t(lambda: x.map_overlap(lambda b: b[5:-5, 5:-5].copy(), depth={0: 5, 1: 5}, boundary=0, trim=False, dtype=np.float32, chunks=x.chunks))
          r["overlap_identity_none"] = t(lambda: x.map_overlap(lambda b: b.copy(), depth={0: 5, 1: 0}, boundary="none", trim=True, dtype=np.float32))
          r["memhier_dask_conv2d"] = t(lambda: mdask.conv2d(x, filt, pad="same"))
          t0 = time.perf_counter(); g = mdask.conv2d(x, filt, pad="same"); r["graph_build_ms"] = round((time.perf_counter()-t0)*1e3, 2)
          r["tasks"] = len(g.__dask_graph__())
          res[f"{n}gpu"] = r
          print(n, r, flush=True)
  json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
  main()

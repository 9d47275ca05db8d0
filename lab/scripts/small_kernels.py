#!/usr/bin/env python3
"""Which kernels memhier's everyday calls launch at 256^2 and what each takes on the GPU (issue
64: gaussian_filter's 27 us and gaussian_laplace's 57 us a call in a loop, where one pass over
256^2 floats should take a few). Each call is made 50 times to warm up, then twice between
cudaProfilerStart and cudaProfilerStop; run under ncu, which lists every kernel of the second
window with its duration.

usage (a GPU machine):
  MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python ncu --profile-from-start off \
      --cache-control none --clock-control none --metrics gpu__time_duration.sum --csv \
      python3 lab/scripts/small_kernels.py > kernels.csv
  python3 lab/scripts/small_kernels.py --table kernels.csv
  (SMALL_KERNELS_N=8192 for calls() on images of 8192^2)
  (ncu ... python3 lab/scripts/small_kernels.py --variants > v.csv 2> v.windows;
   python3 lab/scripts/small_kernels.py --windows v.csv v.windows)"""
import csv
import os
import sys

N = int(os.environ.get("SMALL_KERNELS_N", "256"))  # the image side of calls()


def calls():
    import cupy
    import numpy as np

    import memhier
    import memhier.ndimage as mnd
    x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (N, N)).astype(np.float32))
    w = cupy.asarray(np.random.default_rng(2).uniform(-1, 1, (5, 5)).astype(np.float32))
    values = cupy.asarray(np.random.default_rng(3).integers(0, 256, N * N).astype(np.int32))
    return [("correlate 5x5", lambda: mnd.correlate(x, w)),
            ("correlate1d 9", lambda: mnd.correlate1d(x, np.hanning(9).astype(np.float32), axis=0)),
            ("gaussian_filter 2", lambda: mnd.gaussian_filter(x, 2.0)),
            ("uniform_filter 5", lambda: mnd.uniform_filter(x, 5)),
            ("sobel", lambda: mnd.sobel(x)),
            ("laplace", lambda: mnd.laplace(x)),
            ("gaussian_laplace 2", lambda: mnd.gaussian_laplace(x, 2.0)),
            ("reduce_sum", lambda: memhier.reduce_sum(x)),
            ("histogram 256", lambda: memhier.histogram(x, bins=256, range=(-1.0, 1.0))),
            ("bincount 256", lambda: memhier.bincount(values, 256))]


def run():
    import cupy
    for name, fn in calls():
        for _ in range(50):
            fn()
        cupy.cuda.runtime.deviceSynchronize()
        cupy.cuda.profiler.start()
        fn()
        fn()
        cupy.cuda.runtime.deviceSynchronize()
        cupy.cuda.profiler.stop()
        print(f"# window: {name}", file=sys.stderr, flush=True)


def variants():
    """gaussian_filter sigma 1 and 2, uniform_filter 5 and sobel on each sepfilter row, a window
    a call; the windows' names on stderr in order."""
    import cupy
    import numpy as np

    import memhier.ndimage as mnd
    marker = cupy.ElementwiseKernel("float32 x", "float32 y", "y = x", "window_marker")
    dot = cupy.zeros(1, cupy.float32)
    filters = [("gaussian_filter 1", lambda x, v: mnd.gaussian_filter(x, 1.0, variant=v)),
               ("gaussian_filter 2", lambda x, v: mnd.gaussian_filter(x, 2.0, variant=v)),
               ("uniform_filter 5", lambda x, v: mnd.uniform_filter(x, 5, variant=v)),
               ("sobel", lambda x, v: mnd.sobel(x, variant=v))]
    for n in (256, 512, 1024, 2048, 4096):
        x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (n, n)).astype(np.float32))
        for name, fn in filters:
            for v in ("auto", "sepfilter/fused", "sepfilter/two-pass", "sepfilter/walk"):
                try:
                    for _ in range(5):
                        fn(x, v)
                except Exception as e:  # a row that refuses the call
                    print(f"# refused: {name} {n} {v}: {e}", file=sys.stderr, flush=True)
                    continue
                cupy.cuda.runtime.deviceSynchronize()
                cupy.cuda.profiler.start()
                marker(dot, dot)
                fn(x, v)
                cupy.cuda.runtime.deviceSynchronize()
                cupy.cuda.profiler.stop()
                print(f"window\t{name}\t{n}\t{v}", file=sys.stderr, flush=True)


def stack():
    import cupy
    import numpy as np

    import memhier.ndimage as mnd
    x = cupy.asarray(np.random.default_rng(7).uniform(-1, 1, (1000, 256, 256)).astype(np.float32))
    w = cupy.asarray(np.random.default_rng(8).uniform(-1, 1, (5, 5)).astype(np.float32))
    for _ in range(3):
        mnd.correlate(x, w, axes=(1, 2))
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.profiler.start()
    mnd.correlate(x, w, axes=(1, 2))
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.profiler.stop()


def windows(csv_path, names_path):
    """Each window's kernels and their total, from ncu's CSV and the windows' names."""
    rows = [r for r in csv.DictReader(line for line in open(csv_path) if line.startswith('"'))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    names = [line.rstrip("\n").split("\t")[1:] for line in open(names_path) if line.startswith("window\t")]
    groups, current = [], None
    for r in rows:
        if "window_marker" in r["Kernel Name"]:
            current = []
            groups.append(current)
        elif current is not None:
            scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}[r["Metric Unit"]]
            current.append((f"{r['Kernel Name'].split('(')[0][:40]} {r['Grid Size']}",
                            float(r["Metric Value"].replace(",", "")) * scale))
    for (name, n, v), kernels in zip(names, groups):
        total = sum(t for _, t in kernels)
        print(f"{name:18} {n:>5}^2 {v:20} {total:8.2f} us  " + ", ".join(f"{k} {t:.2f}" for k, t in kernels))


def table(path):
    """ncu's CSV in launch order: each call's kernels twice, in calls()'s order."""
    rows = [r for r in csv.DictReader(line for line in open(path) if line.startswith('"'))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    print(f"{len(rows)} kernel launches")
    for r in rows:
        print(f"{r['Kernel Name'][:100]:100} {r['Metric Value']:>10} {r['Metric Unit']}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        table(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "--windows":
        windows(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 2 and sys.argv[1] == "--variants":
        variants()
    elif len(sys.argv) == 2 and sys.argv[1] == "--stack":
        stack()
    else:
        run()

#!/usr/bin/env python3
"""The everyday call: time per call of memhier's Python functions on CuPy images of 256^2 to
8192^2 (conv1d: their values as one signal of 64K to 64M samples), beside cupyx.scipy.ndimage
and cupyx.scipy.signal, cuCIM's vendored ndimage, CuPy and torch where they have the op, all in
one run on one GPU.

Three figures a call, from a loop of back-to-back calls and from single calls:
  host_us       the time until the loop's last call returns, over the number of calls: what a
                loop's caller pays a call (the GPU runs asynchronously, busy or not)
  per_call_us   the same loop until the GPU finishes, over the number of calls (what a loop
                sustains: the larger of the host cost and the GPU time)
  host_idle_us  the median of single calls, each after a synchronize (the GPU idle). This one
                grows with the wait before the call, not with the call's own work: a synchronize
                that waits long leaves the host slower for the next ~10-40 us of work, every
                library's alike (lab/scripts/host_after_wait.py), so at large images it tells the
                caller's wait more than the call
each the least of --rounds rounds (3), a round timing every call once, so that a call's rounds lie
minutes apart: a shared host runs stretches of seconds ~1.5x slower (the H200's: every figure in
them, pure Python too), and the least of the rounds is the call's own cost, for memhier and its
peers alike. A loop has --calls calls (100) at every size, so that the synchronize before it (which
leaves the host slow for its first calls) weighs alike at every size; single calls are fewer from
2048^2 up (single_calls). Each loop is timed after one call of its own, untimed: a loop of one
call, as a user's loop runs it. Between two rounds of one loop the sweep makes hundreds of other
calls, more than memhier keeps records of (the 64 most recently made); the "new shape each call"
workloads time that case on purpose: every call on an image of another shape, more shapes than
memhier keeps.

Beside the sweep (not with --quick): a stack of 1000 images in one call against its copy, and the
host's floors a call's host cost sits on (host_floors: a CUDA operation queued from Python, a new
CuPy array), timed in the same process.

Writes JSON to --out; prints a table (memhier's per_call_us over the best peer's).
usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 scripts/latency.py
       [--sizes 256,512,...] [--only NAME,...] [--calls N] [--rounds R] [--out FILE.json] [--profile NAME]
       [--quick]"""
import argparse
import cProfile
import itertools
import json
import pstats
import statistics
import subprocess
import sys
import time

import cupy
import numpy as np

import memhier
import memhier.ndimage as mnd
from memhier._kept import KEPT

SIZES = (256, 512, 1024, 2048, 4096, 8192)
# --quick (the README's main job, which has 3 minutes in all): two functions at a small and a
# large size, 50 calls each (each peer compiles its kernels on first use: seconds)
QUICK = {"sizes": "256,2048", "only": "correlate 5x5,gaussian_filter 2", "calls": 50}
# the "new shape each call" workloads cycle through twice as many image shapes as memhier keeps
# records of, so that no call finds a record made for its own shape
NEW_SHAPES = 2 * KEPT


def peers():
    """name -> the scipy.ndimage-like module, for the peers this machine has."""
    import cupyx.scipy.ndimage as cnd
    found = {"cupyx": cnd}
    try:
        from cucim.skimage._vendored import ndimage as cucim_nd
        found["cucim"] = cucim_nd
    except ImportError:
        pass
    return found


def workloads():
    """(name, make(x) -> {library: callable}) for every call the sweep times. x is a float32 CuPy
    image; weights are made once outside the timed calls, as a loop would hold them."""
    w5 = np.random.default_rng(2).uniform(-1, 1, (5, 5)).astype(np.float32)
    w5_dev = cupy.asarray(w5)
    w9 = cupy.asarray(np.hanning(9).astype(np.float32))
    nd = peers()

    def same(fn_name, *args, kept_output=False, **kwargs):
        """Each library's fn_name on x; kept_output: into an output array each library makes once,
        as a loop that reuses its output calls it (scipy's output=)."""
        def make(x):
            def call(mod):
                into = {"output": cupy.empty_like(x)} if kept_output else {}
                return lambda: getattr(mod, fn_name)(x, *args, **kwargs, **into)
            return {lib: call(mod) for lib, mod in {"memhier": mnd, **nd}.items() if hasattr(mod, fn_name)}
        return make

    def new_shape_each_call(fn_name, *args):
        """Each library's fn_name on another image each call: x cut to one of NEW_SHAPES heights
        in turn (each C-contiguous), as a loop over photographs of many sizes calls it."""
        def make(x):
            images = [x[:x.shape[0] - k] for k in range(NEW_SHAPES)]
            def call(mod):
                fn, each = getattr(mod, fn_name), itertools.cycle(images)
                return lambda: fn(next(each), *args)
            return {lib: call(mod) for lib, mod in {"memhier": mnd, **nd}.items()}
        return make

    def numpy_weights(x):
        return {"memhier": lambda: mnd.correlate(x, w5)}

    def conv2d(x):
        return {"memhier": lambda: memhier.conv2d(x, w5_dev, pad="same")}

    def torch_calls(x, memhier_fn, torch_fn):
        calls = {"memhier": lambda: memhier_fn(x)}
        try:
            import torch
            t = torch.as_tensor(x, device="cuda")
            calls["torch"] = lambda: torch_fn(t)
        except ImportError:
            pass
        return calls

    k31_dev = cupy.asarray(np.random.default_rng(3).uniform(-1, 1, 31).astype(np.float32))

    def conv1d(x):  # the image's n^2 values as one signal: 64K to 64M samples
        import cupyx.scipy.signal as csignal
        line = x.ravel()
        calls = {"memhier": lambda: memhier.conv1d(line, k31_dev, pad="same"),
                 "cupyx": lambda: csignal.correlate(line, k31_dev, mode="same")}
        try:
            import torch
            t, kt = (torch.as_tensor(a, device="cuda").view(1, 1, -1) for a in (line, k31_dev))
            calls["torch"] = lambda: torch.nn.functional.conv1d(t, kt, padding=15)
        except ImportError:
            pass
        return calls

    def reduce_sum(x):
        calls = torch_calls(x, memhier.reduce_sum, lambda t: t.sum())
        calls["cupy"] = lambda: cupy.sum(x)
        return calls

    def histogram(x):
        calls = {"memhier": lambda: memhier.histogram(x, bins=256, range=(-1.0, 1.0)),
                 "cupy": lambda: cupy.histogram(x, bins=256, range=(-1.0, 1.0))}
        return calls

    def bincount(x):
        labels = (cupy.abs(x) * 255).astype(cupy.int32).ravel()
        return {"memhier": lambda: memhier.bincount(labels, 256),
                "cupy": lambda: cupy.bincount(labels, minlength=256)}

    return [("correlate 5x5", same("correlate", w5_dev)),
            ("correlate 5x5 output=", same("correlate", w5_dev, kept_output=True)),
            ("correlate 5x5 new shape each call", new_shape_each_call("correlate", w5_dev)),
            ("correlate 5x5 numpy weights", numpy_weights),
            ("convolve 5x5", same("convolve", w5_dev)),
            ("correlate1d 9", same("correlate1d", w9, axis=0)),
            ("correlate1d 9 last axis", same("correlate1d", w9, axis=-1)),
            ("convolve1d 9", same("convolve1d", w9, axis=0)),
            ("uniform_filter1d 5", same("uniform_filter1d", 5, axis=0)),
            ("gaussian_filter1d 2", same("gaussian_filter1d", 2.0, axis=0)),
            ("gaussian_filter 2", same("gaussian_filter", 2.0)),
            ("gaussian_filter 2 output=", same("gaussian_filter", 2.0, kept_output=True)),
            ("gaussian_filter 2 new shape each call", new_shape_each_call("gaussian_filter", 2.0)),
            ("uniform_filter 5", same("uniform_filter", 5)),
            ("sobel", same("sobel", axis=0)),
            ("prewitt", same("prewitt", axis=0)),
            ("laplace", same("laplace")),
            ("gaussian_laplace 2", same("gaussian_laplace", 2.0)),
            ("minimum_filter 5", same("minimum_filter", 5)),
            ("median_filter 3", same("median_filter", 3)),
            ("median_filter 3 new shape each call", new_shape_each_call("median_filter", 3)),
            ("maximum_filter 5", same("maximum_filter", 5)),
            ("minimum_filter1d 5", same("minimum_filter1d", 5, axis=0)),
            ("maximum_filter1d 5", same("maximum_filter1d", 5, axis=0)),
            ("rank_filter 3 rank 4", same("rank_filter", 4, size=3)),
            ("percentile_filter 5 25%", same("percentile_filter", 25, size=5)),
            ("grey_erosion 5", same("grey_erosion", size=5)),
            ("grey_dilation 5", same("grey_dilation", size=5)),
            ("grey_opening 5", same("grey_opening", 5)),
            ("grey_closing 5", same("grey_closing", size=5)),
            ("morphological_gradient 5", same("morphological_gradient", size=5)),
            ("white_tophat 5", same("white_tophat", size=5)),
            ("black_tophat 5", same("black_tophat", size=5)),
            ("conv2d 5x5 same", conv2d),
            ("conv1d 31 same", conv1d),
            ("reduce_sum", reduce_sum),
            ("histogram 256", histogram),
            ("bincount 256", bincount)]


def host_idle_us(fn, sync, calls):
    times = []
    for _ in range(calls):
        sync()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    sync()
    return statistics.median(times) * 1e6


def loop_us(fn, sync, calls):
    """(host_us, per_call_us) of `calls` back-to-back calls: until the last returns, and until
    the GPU finishes, each over the number of calls."""
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    returned = time.perf_counter()
    sync()
    done = time.perf_counter()
    return (returned - t0) / calls * 1e6, (done - t0) / calls * 1e6


def per_call_us(fn, sync, calls):
    return loop_us(fn, sync, calls)[1]


def least_over_rounds(calls_of, rounds, time_of):
    """Each call's least figure (time_of(fn)) over `rounds` rounds, the calls taking turns in each,
    each timed after one untimed call of its own."""
    best = {name: float("inf") for name in calls_of}
    for _ in range(rounds):
        for name, fn in calls_of.items():
            fn()
            best[name] = min(best[name], time_of(fn))
    return best


def stack_against_copy(sync, rounds, calls=50):
    """A stack of 1000 images of 256^2 through one correlate call (5x5, reflect): GPU time per
    call beside the copy floor (a device-to-device copy of the stack, which reads and writes
    it once, as the filter must), each the least of `rounds` loops, the two taking turns."""
    x = cupy.asarray(np.random.default_rng(7).uniform(-1, 1, (1000, 256, 256)).astype(np.float32))
    w = cupy.asarray(np.random.default_rng(8).uniform(-1, 1, (5, 5)).astype(np.float32))
    y = cupy.empty_like(x)
    best = least_over_rounds({"filter": lambda: mnd.correlate(x, w, axes=(1, 2)),
                              "copy": lambda: y.__setitem__(Ellipsis, x)},
                             rounds, lambda fn: per_call_us(fn, sync, calls))
    filt, copy = best["filter"], best["copy"]
    row = {"function": "correlate 5x5 stack 1000 x 256^2", "size": 256, "library": "memhier", "per_call_us": filt,
           "copy_us": copy, "x_copy_floor": filt / copy}
    print(f"{row['function']}: {filt:.1f} us a call, the copy {copy:.1f} us: {row['x_copy_floor']:.2f}x the floor",
          flush=True)
    return row


def host_floors(sync, rounds, calls=200):
    """What any call that returns new CuPy arrays pays on this host, in a loop as the sweep times
    the calls (the least of `rounds` loops): one CUDA operation queued on the stream from Python
    (cudaMemsetAsync of 4 bytes, CuPy's thin wrapper: a launch's host cost, less a kernel's
    arguments), and one new CuPy array (cupy.ndarray, as memhier makes its outputs) of 256^2
    float32 values and of 257 (a histogram's edges). A call that queues one launch and returns
    k new arrays costs at least the first plus k of the others."""
    buf = cupy.empty(1, np.float32)
    stream = cupy.cuda.get_current_stream()
    pieces = {"one stream operation": lambda: cupy.cuda.runtime.memsetAsync(buf.data.ptr, 0, 4, stream.ptr),
              "new array 256^2": lambda: cupy.ndarray((256, 256), np.float32),
              "new array 257": lambda: cupy.ndarray((257,), np.float32)}
    best = least_over_rounds(pieces, rounds, lambda fn: loop_us(fn, sync, calls)[0])
    print("host floors: " + ", ".join(f"{name} {us:.2f} us" for name, us in best.items()), flush=True)
    return best


def image(n):
    return cupy.asarray(np.random.default_rng(n).uniform(-1, 1, (n, n)).astype(np.float32))


def sweep(args, save):
    """Every workload at every size, --rounds times over: each round times every call once, so
    that a call's rounds lie minutes apart and a slow stretch of the host spoils at most one of
    them; a row keeps the least of its rounds. save(rows) after each round, so that a run cut
    short keeps what it measured."""
    sync = cupy.cuda.get_current_stream().synchronize
    images = {n: image(n) for n in args.sizes}
    cases = []  # (name, n, {library: call}, calls a timing)
    for name, make in workloads():
        if args.only and name not in args.only:
            continue
        for n in args.sizes:
            libs = make(images[n])
            for fn in libs.values():
                for _ in range(5):  # warm-up: plans, workspaces, the peers' kernel caches
                    fn()
            cases.append((name, n, libs, args.calls, single_calls(args.calls, n)))
    timed = {}
    for r in range(args.rounds):
        for name, n, libs, calls, singles in cases:
            for lib, fn in libs.items():
                fn()  # the loop's own first call, untimed (the module's docstring)
                timing = (*loop_us(fn, sync, calls), host_idle_us(fn, sync, singles))
                timed.setdefault((name, n, lib), []).append(timing)
        rows = [{"function": name, "size": n, "library": lib, "host_us": min(f[0] for f in figures),
                 "per_call_us": min(f[1] for f in figures), "host_idle_us": min(f[2] for f in figures)}
                for (name, n, lib), figures in timed.items()]
        print(f"round {r + 1} of {args.rounds} done", flush=True)
        save(rows)
    for name, n, *_ in cases:
        print_size(rows, name, n)
    return rows


def single_calls(calls, n):
    """How many single calls host_idle_us takes the median of at n^2: `calls` up to 1024^2, fewer
    (at least 20) as the image grows, each waiting for the GPU."""
    return max(20, min(calls, int(calls * 1024 * 1024 / (n * n))))


def print_size(rows, name, n):
    here = [r for r in rows if r["function"] == name and r["size"] == n]
    ours = next(r for r in here if r["library"] == "memhier")
    others = [r for r in here if r["library"] != "memhier"]
    line = f"{name:38} {n:5}^2  memhier {ours['host_us']:8.1f} / {ours['per_call_us']:8.1f} us"
    for r in others:
        line += f"   {r['library']} {r['host_us']:7.1f} / {r['per_call_us']:8.1f}"
    if others:
        best = min(r["per_call_us"] for r in others)
        line += f"   x best {best / ours['per_call_us']:5.2f}"
    print(line, flush=True)


def profile(name, n, calls):
    """cProfile of memhier's call in `name` at n^2: where the host time goes."""
    make = dict(workloads())[name]
    fn = make(image(n))["memhier"]
    for _ in range(20):
        fn()
    cupy.cuda.get_current_stream().synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    cupy.cuda.get_current_stream().synchronize()
    print(f"== cProfile of memhier's {name} at {n}^2, {calls} calls")
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def host_probe_us():
    """A fixed piece of pure Python, the least of five timings: how fast this process's host
    runs. A shared host's slow stretches (every figure ~1.5x) show here first; the results
    record it at the sweep's start and end, so that runs compare."""
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        sum(i * i for i in range(20000))
        best = min(best, time.perf_counter() - t0)
    return best * 1e6


def version(module):
    """A peer's version, or None where it is not installed."""
    try:
        return __import__(module).__version__
    except ImportError:
        return None


def commit():
    """The working tree's commit (with -dirty where it has changes), or None outside git."""
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except OSError:
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default=",".join(map(str, SIZES)))
    p.add_argument("--only", default="", help="comma-separated workload names")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out")
    p.add_argument("--profile", default="", help="comma-separated workload names to profile at 256^2")
    p.add_argument("--commit", default=None,
                   help="the commit measured, as the results record it (default: git describe here; a copy of "
                        "a working tree whose git metadata is older than its files needs it given)")
    p.add_argument("--quick", action="store_true",
                   help=f"--sizes {QUICK['sizes']} --only '{QUICK['only']}' --calls {QUICK['calls']}, no stack")
    args = p.parse_args()
    if args.quick:
        args.sizes, args.only, args.calls = QUICK["sizes"], QUICK["only"], QUICK["calls"]
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.only = [s for s in args.only.split(",") if s]
    for name in filter(None, args.profile.split(",")):
        profile(name, 256, 2000)
    result = {"device": memhier.info(0)["name"], "date": time.strftime("%Y-%m-%d"), "commit": args.commit or commit(),
              "calls": args.calls, "rounds": args.rounds, "cupy": cupy.__version__, "cucim": version("cucim"),
              "torch": version("torch"), "loops_after_a_call": True,
              "loop_calls_every_size": True}

    def save(rows):
        if args.out:
            with open(args.out, "w") as f:
                json.dump({**result, "rows": rows}, f, indent=1)
                f.write("\n")
    result["host_probe_us"] = [host_probe_us()]
    print(f"host probe: {result['host_probe_us'][0]:.0f} us", flush=True)
    rows = sweep(args, save)
    if not args.quick:
        result["stack"] = stack_against_copy(cupy.cuda.get_current_stream().synchronize, args.rounds)
        result["host_floors_us"] = host_floors(cupy.cuda.get_current_stream().synchronize, args.rounds)
    result["host_probe_us"].append(host_probe_us())
    print(f"host probe at the end: {result['host_probe_us'][1]:.0f} us", flush=True)
    save(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

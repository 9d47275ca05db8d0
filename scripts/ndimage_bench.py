#!/usr/bin/env python3
"""memhier.ndimage against what its users run instead, on the same GPU in one run:
cupyx.scipy.ndimage on the GPU (and, on the uint8 RGB Gaussians, torchvision's gaussian_blur and
cuCIM's skimage gaussian where they are installed), scipy.ndimage and OpenCV (filter2D,
GaussianBlur; all CPU cores) on the host, each on the same workload, with the copy floor of the
GPU (reading the input and writing the output once at the copy ceiling memhier measures).

usage: ndimage_bench.py [--quick] [--only linear|rank] [OUT_JSON]
  OUT_JSON defaults to ndimage.json. --quick: small sizes, one repetition (a smoke test).
  --only: the linear filters' workloads, or the rank filters' (median, minimum, grey opening);
  where OUT_JSON holds a run already, its other rows stay and the new ones replace the kind's
  (the file records the kind's run apart: "runs_by_kind").

GPU calls, two ways: per call (CUDA events around each call, the stream synchronized after
it: the host's work before the launch counts; the median of 20, after two warm-ups) and
pipelined (20 calls back to back between two events, the best of 3: the host's work hides
behind the GPU's); 3 calls in place of 20 where one takes over 20 ms. CPU calls: wall time, the
median of 3 (one when a call takes over a second); scipy's median filters past 3 x 3 at 8192^2
take minutes and are not run.
Each peer's result is compared with memhier's: the largest difference (and for integer outputs
the share of outputs that differ) goes in its row; OpenCV rounds (GaussianBlur in fixed point,
filter2D to nearest), so its uint8 results differ from scipy's truncation by design."""
import json
import os
import statistics
import sys
import time

import numpy as np

import memhier
from latency import commit
from report import RANK_CALLS
from memhier import ndimage as mnd

try:
    import cupy as cp
    import cupyx.scipy.ndimage as cnd
except Exception as e:  # noqa: BLE001 - no CuPy: nothing on the GPU to compare
    sys.exit(f"ndimage_bench: CuPy unavailable ({e.__class__.__name__}); it times CuPy arrays on a GPU")
import scipy.ndimage as snd
try:
    import cv2
except Exception:  # noqa: BLE001
    cv2 = None
    print("ndimage_bench: OpenCV unavailable: its rows are skipped")

CV_NAMES = {"gaussian": "GaussianBlur", "gaussian2d": "GaussianBlur", "uniform2d": "blur",
            "median_filter": "medianBlur", "minimum_filter": "erode", "grey_opening": "morphologyEx"}
CV_BORDER = {"reflect": "BORDER_REFLECT", "mirror": "BORDER_REFLECT_101", "nearest": "BORDER_REPLICATE",
             "constant": "BORDER_CONSTANT"}


def gpu_ms(fn, reps=20):
    """(per call, pipelined): the median ms of a call timed alone (events around it, the stream
    synchronized after each: the host's work before the launch counts), and the ms a call of 20
    issued back to back (the host's work hidden behind the GPU's, as in a pipeline)."""
    start, stop, times = cp.cuda.Event(), cp.cuda.Event(), []
    for _ in range(2):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
    if cp.cuda.get_elapsed_time(start, stop) > 20:
        reps = 3
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    runs = []
    for _ in range(3):
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        stop.synchronize()
        runs.append(cp.cuda.get_elapsed_time(start, stop) / reps)
    return statistics.median(times), min(runs)


def cpu_ms(fn, reps=3):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
        if times[-1] > 1000:
            break
    return statistics.median(times)


def differences(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    d = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    out = {"max_abs_diff": float(d.max())}
    if np.dtype(ref.dtype).kind in "iu":
        out["share_differing"] = float(np.mean(d != 0))
    return out


def rank_workloads(quick):
    """The rank filters on the images their users hold: medians of uint8 (3 x 3 to 15 x 15) and
    float32 images (3 x 3 to 7 x 7) and of a float32 volume (3 x 3 x 3), a low rank of 5 x 5 and a
    high percentile of 15 x 15 on uint8, a minimum and a grey opening of 15 x 15 on float32,
    reflect mode."""
    big = 1024 if quick else 8192
    rng = np.random.default_rng(4)
    gray = rng.integers(0, 256, (big, big), dtype=np.uint8)
    image = rng.uniform(-1, 1, (big, big)).astype(np.float32)
    out = []
    for x, sizes in ((gray, (3, 5, 7, 15)), (image, (3, 5, 7))):
        for k in sizes:
            out.append(dict(name=f"median_filter {x.dtype} {big}x{big} size={k} reflect", x=x, size=k,
                            kind="median_filter", cpu=quick or k == 3))
    side = 64 if quick else 256
    volume = rng.uniform(-1, 1, (side, side, side)).astype(np.float32)
    out.append(dict(name=f"median_filter float32 {side}x{side}x{side} size=3 reflect", x=volume, size=3,
                    kind="median_filter", cpu=quick))
    for fn, arg, k in (("rank_filter", 2, 5), ("percentile_filter", 90, 15)):
        what = "rank" if fn == "rank_filter" else "percentile"
        out.append(dict(name=f"{fn} uint8 {big}x{big} size={k} {what}={arg} reflect", x=gray, size=k, kind=fn,
                        args=(arg,), cpu=quick))
    for fn in ("minimum_filter", "grey_opening"):
        out.append(dict(name=f"{fn} float32 {big}x{big} size=15 reflect", x=image, size=15, kind=fn, cpu=True))
    return out


def rank_calls(wl):
    """(memhier, cupyx, scipy, opencv) callables of a rank workload. OpenCV's medianBlur extends
    the image by replicating its edge (scipy's 'nearest'), and takes float32 at sizes 3 and 5
    only; its erode and morphologyEx take reflect."""
    x, k, fn, args = wl["x"], wl["size"], wl["kind"], wl.get("args", ())
    xd = cp.asarray(x)
    ours = lambda: getattr(mnd, fn)(xd, *args, size=k)  # noqa: E731
    theirs = lambda: getattr(cnd, fn)(xd, *args, size=k)  # noqa: E731
    host = (lambda: getattr(snd, fn)(x, *args, size=k)) if wl["cpu"] else None
    cv = None
    if cv2 is not None and fn == "median_filter" and x.ndim == 2 and (x.dtype == np.uint8 or k <= 5):
        cv = lambda: cv2.medianBlur(x, k)  # noqa: E731
    elif cv2 is not None and fn in ("minimum_filter", "grey_opening"):
        box = np.ones((k, k), np.uint8)
        cv = (lambda: cv2.erode(x, box, borderType=cv2.BORDER_REFLECT)) if fn == "minimum_filter" else \
            (lambda: cv2.morphologyEx(x, cv2.MORPH_OPEN, box, borderType=cv2.BORDER_REFLECT))
    return ours, theirs, host, cv, xd


def workloads(quick, only=None):
    if only == "rank":
        return rank_workloads(quick)
    big = 1024 if quick else 8192
    rng = np.random.default_rng(1)
    image = rng.uniform(-1, 1, (big, big)).astype(np.float32)
    rgb = rng.integers(0, 256, (big, big, 3), dtype=np.uint8)
    stack = rng.uniform(-1, 1, (16 if quick else 256, 512, 512)).astype(np.float32)
    out = []
    for k in (3, 7, 11):
        w = rng.uniform(-1, 1, (k, k)).astype(np.float32)
        out.append(dict(name=f"correlate float32 {big}x{big} {k}x{k} reflect", x=image, w=w, kind="correlate"))
    gray = rng.integers(0, 256, (big, big), dtype=np.uint8)
    for k in (3, 7):
        wk = rng.uniform(0, 1, (k, k))
        wk = (wk / wk.sum()).astype(np.float32)  # a blur: uint8 results in range
        out.append(dict(name=f"correlate uint8 {big}x{big} {k}x{k} reflect", x=gray, w=wk, kind="correlate"))
    for sigma in (2.0, 5.0):
        out.append(dict(name=f"gaussian_filter uint8 {big}x{big}x3 sigma={sigma:g} axes=(0,1) reflect", x=rgb,
                        sigma=sigma, kind="gaussian"))
    wide = rng.standard_normal((big, big))  # numpy's default dtype: computed in float64
    out.append(dict(name=f"gaussian_filter float64 {big}x{big} sigma=2 reflect", x=wide, sigma=2.0, kind="gaussian2d"))
    out.append(dict(name=f"uniform_filter float64 {big}x{big} size=5 reflect", x=wide, size=5, kind="uniform2d"))
    w5 = rng.uniform(-1, 1, (5, 5)).astype(np.float32)
    out.append(dict(name=f"correlate float32 stack {stack.shape[0]}x512x512 5x5 reflect axes=(1,2)", x=stack, w=w5,
                    kind="stack"))
    return out if only == "linear" else out + rank_workloads(quick)


def calls(wl):
    """(memhier, cupyx, scipy, opencv) callables of a workload: GPU ones on device arrays."""
    x, kind = wl["x"], wl["kind"]
    if "size" in wl and kind != "uniform2d":
        return rank_calls(wl)
    xd = cp.asarray(x)
    if kind == "gaussian":
        s = wl["sigma"]
        ours = lambda: mnd.gaussian_filter(xd, s, axes=(0, 1))  # noqa: E731
        theirs = lambda: cnd.gaussian_filter(xd, (s, s, 0))  # noqa: E731
        host = lambda: snd.gaussian_filter(x, (s, s, 0))  # noqa: E731
        r = int(4.0 * s + 0.5)
        cv = (lambda: cv2.GaussianBlur(x, (2 * r + 1, 2 * r + 1), s, borderType=cv2.BORDER_REFLECT)) if cv2 else None
        return ours, theirs, host, cv, xd
    if kind == "gaussian2d":
        s = wl["sigma"]
        r = int(4.0 * s + 0.5)
        cv = (lambda: cv2.GaussianBlur(x, (2 * r + 1, 2 * r + 1), s, borderType=cv2.BORDER_REFLECT)) if cv2 else None
        return (lambda: mnd.gaussian_filter(xd, s)), (lambda: cnd.gaussian_filter(xd, s)), \
            (lambda: snd.gaussian_filter(x, s)), cv, xd
    if kind == "uniform2d":
        k = wl["size"]
        cv = (lambda: cv2.blur(x, (k, k), borderType=cv2.BORDER_REFLECT)) if cv2 else None
        return (lambda: mnd.uniform_filter(xd, k)), (lambda: cnd.uniform_filter(xd, k)), \
            (lambda: snd.uniform_filter(x, k)), cv, xd
    w, wd = wl["w"], cp.asarray(wl["w"])
    if kind == "stack":
        ours = lambda: mnd.correlate(xd, wd, axes=(1, 2))  # noqa: E731
        theirs = lambda: cnd.correlate(xd, wd[None])  # noqa: E731
        host = lambda: snd.correlate(x, w, axes=(1, 2))  # noqa: E731
        cv = (lambda: [cv2.filter2D(im, -1, w, borderType=cv2.BORDER_REFLECT) for im in x]) if cv2 else None
        return ours, theirs, host, cv, xd
    ours = lambda: mnd.correlate(xd, wd)  # noqa: E731
    theirs = lambda: cnd.correlate(xd, wd)  # noqa: E731
    host = lambda: snd.correlate(x, w)  # noqa: E731
    cv = (lambda: cv2.filter2D(x, -1, w, borderType=cv2.BORDER_REFLECT)) if cv2 else None
    return ours, theirs, host, cv, xd


def gpu_peers(wl, xd):
    """The GPU peers beside cupyx that take a workload, as (name, call, its result as a NumPy
    array): on the uint8 RGB Gaussians torchvision's gaussian_blur (its border is scipy's
    'mirror', not 'reflect': the rows' difference shows it) and cuCIM's skimage gaussian (a float64
    result, scipy's reflect); on the medians cuCIM's skimage median (its sorting and histogram
    algorithms; cupyx's kernel where it picks neither); none on the others. A peer that is not
    installed is left out."""
    if wl["kind"] == "median_filter":
        try:
            import cucim
            from cucim.skimage.filters import median
            box = cp.ones((wl["size"],) * xd.ndim, dtype=bool)
            return [(f"cucim {cucim.__version__} skimage.filters.median", lambda: median(xd, box, mode="reflect"),
                     cp.asnumpy)]
        except Exception as e:  # noqa: BLE001
            print(f"ndimage_bench: cuCIM unavailable ({e.__class__.__name__}): its rows are skipped")
            return []
    if wl["kind"] != "gaussian":
        return []
    s = wl["sigma"]
    side = 2 * int(4.0 * s + 0.5) + 1
    peers = []
    try:
        import torch
        import torchvision
        import torchvision.transforms.v2.functional as tvf
        chw = torch.as_tensor(xd, device="cuda").permute(2, 0, 1)
        peers.append((f"torchvision {torchvision.__version__} gaussian_blur", lambda: tvf.gaussian_blur(chw, [side, side], [s, s]),
                      lambda y: y.permute(1, 2, 0).cpu().numpy()))
    except Exception as e:  # noqa: BLE001 - not installed, or no CUDA build
        print(f"ndimage_bench: torchvision unavailable ({e.__class__.__name__}): its rows are skipped")
    try:
        import cucim
        from cucim.skimage.filters import gaussian
        peers.append((f"cucim {cucim.__version__} skimage.filters.gaussian",
                      lambda: gaussian(xd, sigma=s, mode="reflect", truncate=4.0, channel_axis=-1, preserve_range=True),
                      cp.asnumpy))
    except Exception as e:  # noqa: BLE001
        print(f"ndimage_bench: cuCIM unavailable ({e.__class__.__name__}): its rows are skipped")
    return peers


def run(wl, copy_gbps, quick):
    ours, theirs, host, cv, xd = calls(wl)
    mine = cp.asnumpy(ours())
    floor = 2 * xd.nbytes / (copy_gbps * 1e9) * 1e3
    ms, piped = gpu_ms(ours)
    rows = [dict(workload=wl["name"], variant="memhier.ndimage", backend="ours", ms=ms, ms_pipelined=round(piped, 4),
                 x_copy_floor=ms / floor, x_copy_floor_pipelined=round(piped / floor, 3))]
    ms, piped = gpu_ms(theirs)
    rows.append(dict(workload=wl["name"], variant="cupyx.scipy.ndimage", backend="peer", ms=ms,
                     ms_pipelined=round(piped, 4), vs_memhier_pipelined=round(piped / rows[0]["ms_pipelined"], 2),
                     **differences(cp.asnumpy(theirs()), mine)))
    for name, call, as_numpy in gpu_peers(wl, xd):
        try:
            ms, piped = gpu_ms(call)
            rows.append(dict(workload=wl["name"], variant=name, backend="peer", ms=ms, ms_pipelined=round(piped, 4),
                             vs_memhier_pipelined=round(piped / rows[0]["ms_pipelined"], 2),
                             **differences(as_numpy(call()), mine)))
        except Exception as e:  # noqa: BLE001 - a peer that fails on the workload: said, not fatal
            print(f"  {wl['name']}: {name} failed ({e.__class__.__name__}: {e})")
    got = mine  # OpenCV's reference where scipy is not run
    if host is not None:
        got = host()
        rows.append(dict(workload=wl["name"], variant="scipy.ndimage (CPU)", backend="peer",
                         ms=cpu_ms(host, 1 if quick else 3), **differences(mine, got)))
    if cv is not None:
        res = cv()
        res = np.stack(res) if isinstance(res, list) else res
        rows.append(dict(workload=wl["name"], variant=f"opencv.{CV_NAMES.get(wl['kind'], 'filter2D')}"
                         f" (CPU, {cv2.getNumThreads()} threads)", backend="peer", ms=cpu_ms(cv, 1 if quick else 3),
                         **differences(res, got)))
    for r in rows:
        r["ms"] = round(r["ms"], 4)
        r["vs_memhier"] = round(r["ms"] / rows[0]["ms"], 2)
        piped = f" (pipelined {r['ms_pipelined']:.4f})" if "ms_pipelined" in r else ""
        print(f"  {r['workload']:62s} {r['variant']:36s} {r['ms']:10.4f} ms{piped} {r['vs_memhier']:8.2f}x"
              + (f"  ({r['x_copy_floor']:.2f}x copy floor {floor:.4f} ms)" if "x_copy_floor" in r else
                 f"  max diff {r.get('max_abs_diff', 0):.3g}" + (f", {r['share_differing']:.2%} differ"
                                                                  if "share_differing" in r else "")), flush=True)
    rows[0]["copy_floor_ms"] = round(floor, 4)
    return rows


def merged(whole, part, kind):
    """whole's rows with part's in place of whole's rows of kind ("rank": the rank filters'; else the
    linear ones), part's run (date, commit, copy ceiling) kept under runs_by_kind[kind]."""
    rank = kind == "rank"
    keep = [r for r in whole["rows"] if (r["workload"].split()[0] in RANK_CALLS) != rank]
    runs = dict(whole.get("runs_by_kind", {}))
    runs[kind] = {k: part[k] for k in ("date", "commit", "copy_gbps")}
    return {**whole, "rows": keep + part["rows"], "runs_by_kind": runs}


def main():
    args = [a for a in sys.argv[1:] if a != "--quick"]
    quick = "--quick" in sys.argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1] if i + 1 < len(args) else None
        if only not in ("linear", "rank"):
            sys.exit(f"ndimage_bench: --only takes linear or rank, not {only!r}")
        del args[i:i + 2]
    out = args[0] if args else "ndimage.json"
    info = memhier.info(0, ceilings=True)
    doc = {"device": info["name"], "date": time.strftime("%Y-%m-%d"), "commit": commit(), "copy_gbps": info["copy_gbps"],
           "memhier": memhier.__version__, "cupy": cp.__version__, "scipy": __import__("scipy").__version__,
           "opencv": cv2.__version__ if cv2 else None, "cpu_threads": cv2.getNumThreads() if cv2 else None,
           "rows": []}
    for wl in workloads(quick, only):
        doc["rows"] += run(wl, info["copy_gbps"], quick)
        cp.get_default_memory_pool().free_all_blocks()
    if only and os.path.exists(out):
        doc = merged(json.load(open(out)), doc, only)
    json.dump(doc, open(out, "w"), indent=1)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

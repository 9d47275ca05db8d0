#!/usr/bin/env python3
"""Peers: what a user would run instead of memhier, timed on the bench's own workloads on
the same GPU, in the same device call, and added to the bench's JSON as rows with
"backend": "peer" and names like "cupy/oaconvolve".

usage: peers.py BENCH_JSON [OUT_JSON]   (OUT_JSON defaults to BENCH_JSON: rows are added)

Each peer's output is checked against a float64 reference (CuPy in double precision on the
GPU) before its time counts: rel_l2 <= 1e-5, else the row is recorded as "wrong" and untimed.
Timing: CUDA events around back-to-back calls on the current stream after two warm-up calls,
median of at least 20 runs or ~0.3 s. CuPy or PyTorch missing: their peers are skipped with a
line saying so, and the script still succeeds.

Covered now: conv1d (cupyx.scipy.signal.oaconvolve, fftconvolve, correlate; PyTorch
conv1d through cuDNN, TF32 off). The workloads are parsed from the bench rows' names."""
import json
import re
import sys
import time

try:
    import cupy as cp
    import cupyx.scipy.signal as cps
except Exception as e:  # noqa: BLE001 - any import failure means "no CuPy here"
    cp = None
    print(f"peers: CuPy unavailable ({e.__class__.__name__}): its peers are skipped")
try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001
    torch = None
    print(f"peers: PyTorch unavailable ({e.__class__.__name__}): its peers are skipped")


def time_ms(fn, sync, event_pair):
    """Median ms of fn() over >= 20 back-to-back runs (~0.3 s), after two warm-ups."""
    fn(), fn()
    sync()
    start, stop = event_pair()
    t0 = time.perf_counter()
    fn()
    sync()
    each = max(time.perf_counter() - t0, 1e-5)
    reps = int(min(1000, max(20, 0.3 / each)))
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start_stop_ms(start, stop))
    times.sort()
    return times[len(times) // 2], times[0], reps


def start_stop_ms(start, stop):
    if cp is not None and isinstance(start, cp.cuda.Event):
        return cp.cuda.get_elapsed_time(start, stop)
    return start.elapsed_time(stop)


def cupy_events():
    return cp.cuda.Event(), cp.cuda.Event()


def torch_events():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def parse_conv1d(workload):
    """'batch=1024 n=16384 k=2047 masks=per-signal pad=same' -> dict."""
    kv = dict(re.findall(r"(\w+)=([\w-]+)", workload))
    return {"batch": int(kv.get("batch", 1)), "n": int(kv["n"]), "k": int(kv["k"]),
            "per_signal": kv.get("masks") == "per-signal", "pad": kv.get("pad", "valid")}


def conv1d_inputs(w):
    rng = cp.random.default_rng(1)
    x = rng.uniform(-1, 1, (w["batch"], w["n"]), dtype=cp.float32)
    m = rng.uniform(-1, 1, (w["batch"] if w["per_signal"] else 1, w["k"]), dtype=cp.float32)
    return x, m


def conv1d_window(full, k, n, pad):
    """The bench's padding from a 'full' correlation: lpad = 0, (k-1)//2 or k-1."""
    lpad = {"valid": 0, "same": (k - 1) // 2, "full": k - 1}[pad]
    out_n = {"valid": n - k + 1, "same": n, "full": n + k - 1}[pad]
    start = k - 1 - lpad
    return full[..., start:start + out_n]


def conv1d_peers(w):
    """[(name, fn)] for each peer of this workload (fn runs it and returns its output in the
    bench's layout), and the float64 reference."""
    x, m = conv1d_inputs(w)
    k, n, pad = w["k"], w["n"], w["pad"]
    flipped = m[:, ::-1].copy()  # correlation = convolution with the reversed mask
    peers = []
    if cp is not None:
        for name, f in (("oaconvolve", cps.oaconvolve), ("fftconvolve", cps.fftconvolve)):
            peers.append((f"cupy/{name}", lambda f=f: conv1d_window(f(x, flipped, mode="full", axes=-1), k, n, pad)))
        if w["batch"] == 1:
            peers.append(("cupy/correlate", lambda: conv1d_window(cps.correlate(x[0], m[0], mode="full"), k, n, pad)[None]))
    if torch is not None:
        tx, tm = torch.as_tensor(x, device="cuda"), torch.as_tensor(m, device="cuda")
        lpad = {"valid": 0, "same": (k - 1) // 2, "full": k - 1}[pad]
        rpad = {"valid": 0, "same": k - 1 - (k - 1) // 2, "full": k - 1}[pad]
        if w["per_signal"]:  # depthwise: one channel per signal
            inp, weight, groups = F.pad(tx[None], (lpad, rpad)), tm[:, None, :], w["batch"]
            peers.append(("torch/conv1d", lambda: F.conv1d(inp, weight, groups=groups)[0]))
        else:
            inp, weight = F.pad(tx[:, None, :], (lpad, rpad)), tm[:1, None, :]
            peers.append(("torch/conv1d", lambda: F.conv1d(inp, weight)[:, 0]))
    ref = conv1d_window(cps.oaconvolve(x.astype(cp.float64), flipped.astype(cp.float64), mode="full", axes=-1), k, n, pad)
    return peers, ref


def rel_l2(out, ref):
    out = cp.asarray(out).astype(cp.float64)
    return float(cp.linalg.norm(out - ref) / cp.linalg.norm(ref))


def main():
    src = sys.argv[1]
    dst = sys.argv[2] if len(sys.argv) > 2 else src
    doc = json.load(open(src))
    if cp is None:
        json.dump(doc, open(dst, "w"), indent=1)
        return 0
    if torch is not None:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    workloads = sorted({r["workload"] for r in doc["rows"] if r["op"] == "conv1d" and r["backend"] != "peer"})
    rows = [r for r in doc["rows"] if r["backend"] != "peer"]
    for wl in workloads:
        w = parse_conv1d(wl)
        peers, ref = conv1d_peers(w)
        flops = 2.0 * w["batch"] * ref.shape[-1] * w["k"]
        for name, fn in peers:
            row = {"op": "conv1d", "workload": wl, "variant": name, "backend": "peer"}
            try:
                err = rel_l2(fn(), ref)
                if not err <= 1e-5:
                    row.update(status="wrong", rel_l2=err)
                else:
                    is_torch = name.startswith("torch")
                    sync = torch.cuda.synchronize if is_torch else cp.cuda.Device().synchronize
                    ms, ms_min, reps = time_ms(fn, sync, torch_events if is_torch else cupy_events)
                    row.update(status="ok", ms=round(ms, 5), ms_min=round(ms_min, 5), reps=reps,
                               gflops=round(flops / ms / 1e6, 1), rel_l2=err)
            except Exception as e:  # noqa: BLE001 - a peer that fails is recorded, not fatal
                row.update(status="failed", note=f"{e.__class__.__name__}: {e}"[:300])
            print(f"  {wl:55s} {name:20s} {row['status']:6s} {row.get('ms', float('nan')):9.4f} ms"
                  f"  rel_l2 {row.get('rel_l2', float('nan')):.2e}", flush=True)
            rows.append(row)
        del peers, ref
        cp.get_default_memory_pool().free_all_blocks()
        if torch is not None:
            torch.cuda.empty_cache()
    doc["rows"] = rows
    json.dump(doc, open(dst, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

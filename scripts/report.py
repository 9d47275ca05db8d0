#!/usr/bin/env python3
"""The report: the README's and docs' measured tables, and the plots, made from one results
file (`memhier bench` JSON with the peers' rows), so that no figure is typed by hand.

usage:
  report.py [--results FILE]               rewrite the tables between markers in README.md and
                                           docs/*.md, and draw docs/plots/OP-roofline.png and
                                           OP-ladder.png for every op
  report.py --check [--results FILE]       exit 1, naming each table, where README.md or docs/*.md
                                           differ from what FILE gives (CI runs this; no plots)
  report.py --outdir DIR [--results FILE]  write DIR/tables.md and DIR/plots/ only (gpu-check.sh)

Markers, each closed by <!-- /report -->:
  <!-- report:OP -->        every row of OP: ms per workload and, in brackets, % of the roofline
                            floor (the copy or FP32 FMA ceiling, whichever binds)
  <!-- report:OP:peers -->  per workload: our fastest FP32-accurate row, the vendor, the best peer
  <!-- report:OP:floors --> per workload: work, bytes and the roofline floor
  <!-- report:reduce:axis -->  reduce's ladder over its reductions along an axis (report:reduce:
                            the whole-array sums)
  <!-- report:histogram:weighted -->  histogram's ladder over its weighted workloads
                            (report:histogram: the counts)
  <!-- report:OP:rungs -->  OP's rows as the registry of the library built beside this checkout
                            names them (build/libmemhier.so, or MEMHIER_LIBRARY): memory, source
                            and what each changes; bold where auto picked it in FILE
  <!-- report:OP:takes-WHAT -->  the rows of OP that take WHAT ("border-modes", "float64",
                            "scipy-sums", ...: mh_takes_name's names) and the ones that refuse it,
                            from the same registry
  <!-- report:KIND -->      tables of other result files: auto-rules, python-overhead, latency, dask-scaling,
                            dask-one-gpu, matmul-wgmma-sizes, conv2d-tc-sweep, transpose-ncu; explain
                            (`memhier explain` as a GPU machine printed it)
FILE defaults to bench/results/NVIDIA_H100_80GB_HBM3.json."""
import argparse
import functools
import json
import math
import os
import re
import sys
from pathlib import Path

from results import bench_log, is_ours, load, ncu_sections, reduced, reduced_variants, timed, workload_fields, workloads

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RESULTS = ROOT / "bench/results/NVIDIA_H100_80GB_HBM3.json"
OPS = ("conv1d", "conv2d", "transpose", "matmul", "reduce", "histogram")
MARKER = re.compile(r"<!-- report:([a-z0-9-]+)(:peers|:floors|:axis|:weighted|:rungs|:takes-[a-z0-9-]+)? -->\n.*?"
                    r"<!-- /report -->", re.S)

# Ladder tables cut in two where other rows run the other part: reduce's whole-array sums
# (report:reduce) apart from its reductions along an axis (report:reduce:axis); histogram's
# counts (report:histogram) apart from its weighted sums (report:histogram:weighted).
LADDER_PARTS = {("reduce", ""): lambda w: not w.startswith("kind="), ("reduce", ":axis"): lambda w: w.startswith("kind="),
                ("histogram", ""): lambda w: "weights=" not in w, ("histogram", ":weighted"): lambda w: "weights=" in w}


# ---- names -----------------------------------------------------------------------------------

def count(v):
    """4096 stays, 16777216 is 16Mi, 1000000 is 1M."""
    n = int(v)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}Mi"
    if n >= 1_000_000 and n % 100_000 == 0:
        return f"{n / 1e6:g}M"
    return str(n)


def label(op, workload):
    """A workload's column heading, short enough for a README table."""
    f = workload_fields(workload)
    if op == "conv1d":
        head = f"{f['batch']} × {count(f['n'])}" if "batch" in f else f"n={count(f['n'])}"
        if "mode" in f:
            return f"{head} k={f['k']} {f['mode']}"
        return f"{head} k={f['k']}" + ("" if f.get("pad", "valid") == "valid" else f" {f['pad']}")
    if op == "conv2d":
        side = f"{f['rows']}²" if f["rows"] == f["cols"] else f"{f['rows']}×{f['cols']}"
        return f"{side} {f['krows']}×{f['kcols']} {f['pad']}" + (f" {f['filter']}" if "filter" in f else "")
    if op in ("transpose",):
        return f"{f['rows']}²" if f["rows"] == f["cols"] else f"{count(f['rows'])} × {count(f['cols'])}"
    if op == "matmul":
        return f"{f['m']}³" if f["m"] == f["k"] == f["n"] else f"{f['m']}×{f['k']}×{f['n']}"
    if op == "reduce":
        if "kind" in f:
            shape = "×".join(count(int(s)) for s in f["shape"].split("x"))
            return f"{f['kind']} {shape}" + ("" if f["axis"] == "none" else f" axis {f['axis']}")
        return f"n={count(f['n'])}"
    if op == "histogram":
        return f"{f['form']} {count(f['n'])}, {f['bins']} bins, {f['data']}" + (", weighted" if "weights" in f else "")
    if op == "sepfilter":
        b, r, c, ch = f["shape"].split("x")
        image = (f"{b} × " if b != "1" else "") + (f"{r}²" if r == c else f"{r}×{c}") + (f"×{ch}" if ch != "1" else "")
        return f"{f['filter']} {f['dtype']} {image} {f['mode']}"
    return workload


# The workloads the pictures show (at most four an op), by their column headings; the tables show all.
MAIN = {"conv1d": ("n=16Mi k=2047", "n=64Mi k=31", "n=16Mi k=65535", "64 × 1Mi k=4095"),
        "conv2d": ("8192² 3×3", "8192² 11×11", "4096² 31×31", "3072² 15×15")}


# Ops that only move data (a reduce does one add per 4 bytes): their roofline picture is the
# bandwidth each row reaches against the copy ceiling.
STREAMS = ("transpose", "reduce", "histogram")


def main_workloads(op, rows):
    wls = workloads(rows, op)
    chosen = [w for w in wls if any(label(op, w).startswith(m) for m in MAIN.get(op, ()))]
    return chosen or wls[:4]


def short(variant):
    return variant.split("/", 1)[1] if "/" in variant and not variant.startswith(("cupy", "torch")) else variant


def ms_text(ms):
    return f"{ms:.4g}"


# ---- tables ----------------------------------------------------------------------------------

def run_date(doc, op):
    """The date of the run op's rows come from (plots name the run by its date; the file names its commit)."""
    return doc.get("date_by_op", {}).get(op, doc["date"])


def run_of(doc, op):
    """The commit and ceilings of the run op's rows come from (a merged file keeps them per op)."""
    return doc.get("commit_by_op", {}).get(op, doc["commit"]), doc.get("ceilings_by_op", {}).get(op, doc["ceilings"])


def provenance(doc, op):
    """Which run a table comes from."""
    c = run_of(doc, op)[1]
    date = run_date(doc, op)
    return (f"_{doc['device']}, run of {date} (`bench/results/{DEFAULT_RESULTS.name}`, which names its "
            f"commit); ceilings measured in that run: copy "
            f"{c['copy_gbps']:.0f} GB/s, FP32 FMA {c['fma_gflops'] / 1000:.1f} TFLOP/s. ms, median._")


def cell(r, best):
    if r is None:
        return "–"
    if r.get("status") == "wrong (demonstration)":
        return f"{ms_text(r['ms'])} (wrong)"
    if not timed(r):
        return r.get("status", "")
    text = ms_text(r["ms"]) + (f" ({r['roofline_pct']:.0f}%)" if r.get("roofline_pct") else "")
    return f"**{text}**" if r is best else text


LADDER_ORDER = {"cpu": 0, "cuda": 1, "vendor": 2, "peer": 3}  # the ladder, then the vendor, then the peers


def fastest(rows, pick):
    chosen = [r for r in rows if timed(r) and pick(r)]
    return min(chosen, key=lambda r: r["ms"]) if chosen else None


def ladder_table(doc, op, kind=""):
    part = LADDER_PARTS.get((op, kind), lambda w: True)
    rows = [r for r in doc["rows"] if r["op"] == op and part(r["workload"])]
    wls = workloads(rows, op)
    at = {(r["variant"], r["workload"]): r for r in rows}
    variants = sorted(dict.fromkeys(r["variant"] for r in rows),
                      key=lambda v: LADDER_ORDER[next(r["backend"] for r in rows if r["variant"] == v)])
    best = {w: fastest([r for r in rows if r["workload"] == w], is_ours) for w in wls}
    tf32 = reduced_variants(rows)
    lines = [provenance(doc, op), "",
             "| variant | backend | " + " | ".join(label(op, w) for w in wls) + " |",
             "| --- | --- |" + " --- |" * len(wls)]
    for v in variants:
        backend = next(r["backend"] for r in rows if r["variant"] == v)
        name = short(v) + (" †" if v in tf32 else "")
        lines.append(f"| {name} | {backend} | " + " | ".join(cell(at.get((v, w)), best[w]) for w in wls) + " |")
    for title, pick in (("vendor ÷ ours", lambda r: r["backend"] == "vendor" and not reduced(r)),
                        ("best peer ÷ ours", lambda r: r["backend"] == "peer")):
        ratios = []
        for w in wls:
            other = fastest([r for r in rows if r["workload"] == w], pick)
            ratios.append(f"{other['ms'] / best[w]['ms']:.2f}x" if other and best[w] else "")
        if any(ratios):
            lines.append(f"| *{title}* | | " + " | ".join(ratios) + " |")
    notes = ["**bold**: our fastest FP32-accurate row", "in brackets: % of the roofline floor",
             "–: not run (the variant refuses the problem, or the bench leaves a slow rung out)"]
    if any((r.get("roofline_pct") or 0) > 100 for r in rows):
        notes.append("above 100%: fewer operations than the direct formula the floor counts (FFT, tensor cores)")
    if tf32:
        notes.append("†: reduced precision (TF32), never auto's")
    lines += ["", "_" + "; ".join(notes) + "._"]
    return "\n".join(lines)


def peers_table(doc, op):
    rows = [r for r in doc["rows"] if r["op"] == op]
    lines = [provenance(doc, op), "", "| workload | ours (fastest) | vendor | best peer |", "| --- | --- | --- | --- |"]
    for w in workloads(rows, op):
        here = [r for r in rows if r["workload"] == w]
        ours = fastest(here, is_ours)
        if ours is None:
            continue
        vendor = fastest(here, lambda r: r["backend"] == "vendor" and not reduced(r))
        peer = fastest(here, lambda r: r["backend"] == "peer")

        def versus(r):
            return f"{short(r['variant'])} {ms_text(r['ms'])} ({r['ms'] / ours['ms']:.2f}x)" if r else "-"
        lines.append(f"| {label(op, w)} | {short(ours['variant'])} {ms_text(ours['ms'])} | {versus(vendor)} | {versus(peer)} |")
    lines += ["", "_Ratios: the other's time over ours (above 1: ours is faster); reduced-precision rows left out._"]
    return "\n".join(lines)


# Tables of other committed result files than the bench's (docs/python.md)
OVERHEAD_RESULTS = ROOT / "bench/results/NVIDIA_H100_80GB_HBM3.python-overhead.json"
DASK_RESULTS = ROOT / "bench/results/NVIDIA_H200-x2.dask-scaling.json"  # 2 GPUs: the workloads
DASK_ONE_GPU_RESULTS = ROOT / "bench/results/NVIDIA_H100_80GB_HBM3.dask-pipeline-check.json"  # the pipeline's check


def python_overhead_table():
    d = load(OVERHEAD_RESULTS)
    rows = [("C call (ctypes, prepared arguments)", d["c_call"]), ("`memhier.reduce_sum(x)`", d["memhier"]),
            ("`cupy.sum(x)`", d["cupy"])]
    lines = [f"_{d['device']}, reduce_sum of {d['n']:,} floats on a CuPy array (auto ran {d['variant']}); "
             f"`bench/results/{OVERHEAD_RESULTS.name}`._", "", "| | host µs | per call µs |", "| --- | --- | --- |"]
    lines += [f"| {name} | {r['host_us']:.1f} | {r['per_call_us']:.1f} |" for name, r in rows]
    lines += ["", f"_The binding adds {d['binding_adds_host_us']:.1f} µs a call (host time)._"]
    return "\n".join(lines)


def dask_table(path):
    """memhier.dask against the plain call (scripts/dask_scaling.py): each run persisted, waited
    for and every GPU synchronized; floor: the same for one empty task a chunk."""
    d = load(path)
    two = d["gpus"] > 1
    lines = [f"_{d['gpus']} × {d['device']}, data resident on the GPUs, median of {d.get('reps', 5)} runs, each until every "
             f"GPU is done; floor: one empty task a chunk, timed the same way; `bench/results/{path.name}`._", "",
             "| workload | chunks | plain call | Dask, 1 GPU (floor) |"
             + (" Dask, 2 GPUs (floor) | 2 GPUs ÷ 1 | 2 GPUs ÷ plain |" if two else "") + " check |",
             "| --- | --- | --- | --- |" + (" --- | --- | --- |" if two else "") + " --- |"]
    for r in d["results"]:
        if r.get("bit_for_bit"):
            check = "bit for bit" + (f", {r['rows_checked']} signals" if "rows_checked" in r else "")
        else:
            size = f" on outputs up to {r['max_abs_rows']:.3g}" if "max_abs_rows" in r else ""
            check = f"{r.get('rows_checked', 0)} signals, max diff {r.get('max_abs_diff_rows', 0):g}{size}"
        note = " (scaled)" if not r.get("plain_ms_note", "scaled by 1").endswith("scaled by 1") else ""
        row = (f"| {r['workload']} | {r['chunks'][0]} × {r['chunks'][1]} | {r['plain_ms']:.2f} ms{note} | "
               f"{r['dask_1gpu_ms']:.1f} ms ({r['floor_1gpu_ms']:.1f}) |")
        if two:
            row += (f" {r['dask_2gpu_ms']:.1f} ms ({r['floor_2gpu_ms']:.1f}) | "
                    f"{r['speedup_2gpu_over_1gpu_dask']:.2f}x | {r['speedup_2gpu_over_plain']:.2f}x |")
        lines.append(row + f" {check} |")
    return "\n".join(lines)


TC_SWEEP_RESULTS = ROOT / "bench/results/NVIDIA_H100_80GB_HBM3.conv2d-tc-sweep.json"


def tc_sweep_table():
    """conv2d/tc against the fastest direct row (regtile, or walk at 3 x 3 and 5 x 5) over K x K
    filters and image sizes (scripts/conv2d_tc_sweep.sh): the measurements behind conv2d's auto."""
    ms = {}
    for r in load(TC_SWEEP_RESULTS)["rows"]:
        if timed(r):
            f = workload_fields(r["workload"])
            ms.setdefault((int(f["krows"]), int(f["rows"])), {})[r["variant"].split("[")[0]] = r["ms"]
    sizes = sorted({n for _, n in ms})
    lines = [f"_From `bench/results/{TC_SWEEP_RESULTS.name}` (H100, same padding, ms); each cell: tc, "
             "the fastest direct row, and tc's time over it; **bold** where tc is faster._", "",
             "| K × K | " + " | ".join(f"{n}²" for n in sizes) + " |", "| --- |" + " --- |" * len(sizes)]
    for k in sorted({k for k, _ in ms}):
        cells = []
        for n in sizes:
            t = ms.get((k, n), {})
            direct = min((v for name, v in t.items() if name != "conv2d/tc"), default=None)
            tc = t.get("conv2d/tc")
            if tc is None or direct is None:
                cells.append("—")
                continue
            text = f"{ms_text(tc)} / {ms_text(direct)} ({tc / direct:.2f})"
            cells.append(f"**{text}**" if tc < direct else text)
        lines.append(f"| {k} × {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


SIZES_RESULTS = ROOT / "bench/results/NVIDIA_H100_80GB_HBM3.matmul-wgmma-sizes.txt"


def wgmma_sizes_table():
    """matmul's auto rule: tf32x3-wgmma's configurations against cublasSgemm over a sweep of sizes."""
    cfgs = ["n64-ws", "n128-ws", "n256-ws", "n64", "n128", "n256"]
    lines = [f"_From `bench/results/{SIZES_RESULTS.name}` (memhier bench --tune, H100); ms; -ws: warp specialized, "
             "the others plain; ratio: cuBLAS's time over auto's; **bold**: the fastest configuration._", "",
             "| m × k × n | cublas | tf32x3-wgmma auto | " + " | ".join(cfgs) + " | ratio |",
             "| --- | --- | --- | " + " | ".join("---" for _ in cfgs) + " | --- |"]
    for workload, t in bench_log(SIZES_RESULTS)[0].items():
        wg = t.get("matmul/tf32x3-wgmma[auto]")
        cub = t.get("matmul/cublas")
        if wg is None or cub is None:
            continue
        times = {c: t.get(f"matmul/tf32x3-wgmma[{c}]") for c in cfgs}
        best = min(v for v in times.values() if v is not None)
        cells = [ms_text(cub), ms_text(wg)] + [("—" if v is None else f"**{ms_text(v)}**" if v == best else ms_text(v))
                                               for v in times.values()]
        lines.append(f"| {label('matmul', workload)} | " + " | ".join(cells) + f" | {cub / wg:.2f}x |")
    return "\n".join(lines)


TRANSPOSE_NCU = ROOT / "bench/results/NVIDIA_H100_80GB_HBM3.transpose-ncu.txt"


def transpose_ncu_table():
    """docs/transpose.md's counters: each rung at 8192^2, one launch under ncu."""
    def mega(v):
        return "0" if v == 0 else f"{v / 1e6:.3g} M" if v >= 1e5 else f"{v / 1e6:.2f} M"
    lines = [f"_From `bench/results/{TRANSPOSE_NCU.name}` (ncu --clock-control none, one launch a rung, "
             "H100); sectors per request: 4 is the least for a warp's 4-byte stores, 16 for its 16-byte ones._", "",
             "| variant | time (ncu) | DRAM | global store sectors | shared-load conflicts | shared-store conflicts "
             "| instructions |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for variant, m in ncu_sections(TRANSPOSE_NCU).items():
        sectors = m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
        per_req = sectors / m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"]
        cells = [variant.split("/")[-1], f"{m['gpu__time_duration.sum']:.0f} µs",
                 f"{m['dram__throughput.avg.pct_of_peak_sustained_elapsed']:.0f}%",
                 f"{mega(sectors)} ({per_req:.0f} per request)",
                 mega(m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]),
                 mega(m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]),
                 f"{m['smsp__inst_executed.sum'] / 1e6:.0f} M"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


NDIMAGE_RESULTS = ROOT / "bench/results/NVIDIA_H200.ndimage.json"


RANK_CALLS = ("median_filter", "rank_filter", "percentile_filter", "minimum_filter", "maximum_filter",
              "grey_erosion", "grey_dilation", "grey_opening", "grey_closing")


def ndimage_table(rank=False):
    """memhier.ndimage against cupyx.scipy.ndimage, the other GPU peers the bench found
    (torchvision, cuCIM: pipelined ms), scipy.ndimage and OpenCV in one run
    (scripts/ndimage_bench.py): ms a call, timed alone and pipelined; ratios: the peer's time
    over memhier's, the same way timed. rank: the rank filters' workloads, else the others'."""
    d = load(NDIMAGE_RESULTS)
    by = {}
    for r in d["rows"]:
        if (r["workload"].split()[0] in RANK_CALLS) == rank:
            by.setdefault(r["workload"], {})[r["variant"].split(" (")[0]] = r
    run = d.get("runs_by_kind", {}).get("rank" if rank else "linear", d)  # rows re-timed alone (--only)
    lines = [f"_{d['device']}, run of {run['date']} at {run['commit']} (`bench/results/{NDIMAGE_RESULTS.name}`); "
             f"CuPy {d['cupy']}, scipy {d['scipy']}, OpenCV {d['opencv']} on {d.get('cpu_threads', 16)} host "
             f"threads. ms: a call timed alone (the host's work included) / pipelined (20 calls back to back); in "
             f"brackets the peer's time over memhier's, or memhier's over the copy floor (reading and writing the "
             f"array once at {run['copy_gbps']:.0f} GB/s)._", "",
             "| workload | memhier.ndimage | cupyx.scipy.ndimage | other GPU peers | scipy.ndimage (CPU) | OpenCV (CPU) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for wl, rows in by.items():
        ours = rows["memhier.ndimage"]
        cupyx = rows.get("cupyx.scipy.ndimage")

        def host(prefix):
            r = next((v for k, v in rows.items() if k.startswith(prefix)), None)
            return f"{r['ms']:.4g} ({ratio(r['ms'] / ours['ms'])}x)" if r else "–"
        mine = (f"{ours['ms']:.4g} / {ours['ms_pipelined']:.4g} ({ours['x_copy_floor']:.2f}x / "
                f"{ours['x_copy_floor_pipelined']:.2f}x floor)")
        theirs = (f"{cupyx['ms']:.4g} / {cupyx['ms_pipelined']:.4g} ({cupyx['ms'] / ours['ms']:.2f}x / "
                  f"{cupyx['ms_pipelined'] / ours['ms_pipelined']:.2f}x)") if cupyx else "–"
        others = "; ".join(f"{name} {r['ms_pipelined']:.4g} ({r['ms_pipelined'] / ours['ms_pipelined']:.2f}x)"
                           for name, r in rows.items() if r.get("backend") == "peer" and "ms_pipelined" in r
                           and name != "cupyx.scipy.ndimage") or "–"
        lines.append(f"| {wl} | {mine} | {theirs} | {others} | {host('scipy')} | {host('opencv')} |")
    if rank:
        lines += ["", "_scipy's medians past 3 × 3 at 8192² and on the 256³ volume take minutes and are not run; "
                      "OpenCV's medianBlur replicates the edge (scipy's 'nearest', so its borders differ), takes "
                      "float32 at sizes 3 and 5 only and no volumes._"]
    return "\n".join(lines)


def ratio(x):
    """A time ratio as the tables print it: whole numbers from 10 up, two digits below."""
    return f"{x:.0f}" if x >= 10 else f"{x:.2g}"


LATENCY_RESULTS = ROOT / "bench/results/NVIDIA_H200.latency.json"
LATENCY_PEERS = ("cupyx", "cucim", "torch", "cupy")  # the libraries beside memhier, in this order


EXPLAIN_RESULTS = ROOT / "bench/results/NVIDIA_H200.explain.txt"


def explain_example():
    """`memhier explain` as a GPU machine printed it: the command, then its text
    (scripts/gpu-check.sh's bench phase writes the file)."""
    return "```\n" + EXPLAIN_RESULTS.read_text() + "```"


def latency_rows():
    """{function: {size: {library: row}}} of the latency sweep (scripts/latency.py)."""
    d = load(LATENCY_RESULTS)
    by = {}
    for r in d["rows"]:
        by.setdefault(r["function"], {}).setdefault(r["size"], {})[r["library"]] = r
    return d, by


def latency_table():
    """Time per call of each function on CuPy images, memhier beside the peers, in one run: the
    host's cost of a call in a loop (host µs) and what the loop sustains (per call µs); in
    brackets the best peer's per call time over memhier's."""
    d, by = latency_rows()
    sizes = sorted({r["size"] for r in d["rows"]})
    lines = [f"_{d['device']}, run of {d['date']} (`bench/results/{LATENCY_RESULTS.name}`), CuPy {d['cupy']}"
             + "".join(f", {name} {d[name]}" for name in ("cucim", "torch") if d.get(name)) +
             f"; float32 images of n × n; µs a call in a loop of "
             + (f"{d['calls']} calls at every size" if d.get("loop_calls_every_size") else f"up to {d['calls']} calls")
             + ": host (until the "
             f"last call returns) / per call (until the GPU finishes)"
             + (f", each the least of {d['rounds']} rounds over the sweep" if d.get("rounds") else "")
             + (", each loop timed after an untimed call of its own" if d.get("loops_after_a_call") else
                ", each loop timed from its first call, which for memhier rebuilds what the sweep's other "
                "calls displaced (it keeps the records of 64 calls; from 2048² up a loop has 20-25 calls, each "
                "carrying a twentieth of that first one)")
             + (", the host's pure-Python probe {:.0f} µs at the start and {:.0f} at the end".format(*d["host_probe_us"])
                if d.get("host_probe_us") else "") +
             "; in brackets the fastest peer's per call time over memhier's._", "",
             "| function | " + " | ".join(f"{n}²" for n in sizes) + " |", "| --- |" + " --- |" * len(sizes)]
    for fn, per_size in by.items():
        cells = []
        for n in sizes:
            libs = per_size.get(n, {})
            ours = libs.get("memhier")
            if ours is None:
                cells.append("–")
                continue
            peers = [libs[p]["per_call_us"] for p in LATENCY_PEERS if p in libs]
            ratio = f" ({min(peers) / ours['per_call_us']:.2f}x)" if peers else ""
            cells.append(f"{ours['host_us']:.0f} / {ours['per_call_us']:.0f}{ratio}")
        lines.append(f"| {fn} | " + " | ".join(cells) + " |")
    for rerun in d.get("reruns", []):
        lines += ["", f"_{rerun['function']}: a second run at {rerun['commit']} ({rerun['calls']} calls, "
                      f"{rerun['rounds']} rounds): {rerun['why']}._"]
    if d.get("stack"):
        st = d["stack"]
        lines += ["", f"_{st['function']} in one call: {st['per_call_us']:.0f} µs a call in a loop, "
                      f"{st['x_copy_floor']:.2f}x the copy of the stack ({st['copy_us']:.0f} µs)._"]
    if d.get("host_floors_us"):
        lines += ["", "_The host's floors in the same run, µs in a loop: " +
                  ", ".join(f"{name} {us:.1f}" for name, us in d["host_floors_us"].items()) +
                  " (a call that queues one launch and returns k new arrays pays at least the first and k of "
                  "the others)._"]
    return "\n".join(lines)


def rule_value(v, kind):
    """An auto rule's value as docs/auto.md shows it: a number, or its steps by problem size."""
    def number(x):
        if x is None:
            return "never"
        return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"
    if kind != "steps":
        return number(v)
    parts = [f"{number(value)} below {number(bound)}" for bound, value in v if bound is not None]
    return ", ".join(parts + [f"{number(v[-1][1])} {'from there' if parts else 'at every size'}"])


def auto_rules_table():
    """Every field of src/core/auto_rules.def: each GPU's value (bench/results/<GPU>.auto.json),
    what it decides (the field's meaning there) and where each GPU's number comes from (its line
    of provenance in the file)."""
    import tune
    docs = [json.loads(f.read_text()) for f in sorted(tune.auto_files().values())]
    head = (["field"] + [d["device"] + (" (fallback)" if d.get("fallback") else "") for d in docs]
            + ["what it decides"] + [f"where {d['device']}'s number comes from" for d in docs])
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for section, key, field, kind, meaning in tune.rules():
        values = [rule_value(d[section][key], kind) for d in docs]
        sources = [d.get("provenance", {}).get(f"{section}.{key}", "–") for d in docs]
        lines.append(f"| `{field}` | " + " | ".join(values) + f" | {meaning} | " + " | ".join(sources) + " |")
    return "\n".join(lines)


def fallback_rules():
    """The rules a GPU without its own measured ones runs (bench/results/<GPU>.auto.json with
    "fallback": true)."""
    import tune
    return next(d for d in (json.loads(f.read_text()) for f in tune.auto_files().values()) if d.get("fallback"))


def outputs_text(n):
    """A count of outputs as the README says it: side² where it is a square."""
    side = math.isqrt(int(n))
    return f"{side}²" if side * side == n else f"{int(n):,} outputs"


def auto_summary(op):
    """The README's sentence on what `auto` runs for op, its numbers read from the fallback's rules
    (docs/auto.md has every field, with where each number comes from)."""
    r = fallback_rules()
    rules = f"the rules of the GPU it runs on ({r['device']}'s where none were measured there: [docs/auto.md](docs/auto.md))"

    def n(section, key):
        return rule_value(r[section][key], "n")
    if op == "conv1d":
        return (f"`auto` reads {rules}: regtile for short masks; fft-fused from a k that falls as the problem "
                f"grows (by batch × n: k from {rule_value(r['conv1d']['fused_from_k'], 'steps')}) and for every k "
                f"past {n('conv1d', 'fused_above_k')}; fft-os past k = {n('conv1d', 'fft_os_above_k')}. The grid, its "
                "picture, auto's regret and the FFT error bound are in "
                "[docs/conv1d.md](docs/conv1d.md#past-the-fma-ceiling-fft-overlap-save-issue-13); batched signals: "
                "`mh_conv1d_batched`.")
    if op == "conv2d":
        taps = r["conv2d"]["fft_tile_min_taps"]
        fft_tile = (f"from {rule_value(taps[0][1], 'n')} taps on every image size" if len(taps) == 1
                    else f"from ({rule_value(taps, 'steps')}) taps by outputs")
        return (f"`auto` decides from the shapes alone (it never reads the filter, so it never waits for the "
                f"stream), by {rules}: walk for 3 × 3 and 5 × 5 filters and for 7 × 7 ones from "
                f"{outputs_text(r['conv2d']['walk7_min_outputs'])}, fft-tile {fft_tile} (its accuracy is the FFT "
                "rows' normwise bound; the per-element contract skips it), regtile for the rest, and "
                "fft-3pass past 31 a side; a planned filter (`mh_conv2d_plan_create`) of few terms runs on lowrank; "
                "name `separable` for a filter known to be rank 1. The seed rungs take K compiled in for square odd "
                "filters up to 15 × 15, as seed 004 wrote them.")
    if op == "matmul":
        return (f"`auto` reads {rules}: tf32x3-wgmma where k ≥ {n('matmul', 'tc_min_k')} and m·k·n ≥ "
                f"{n('matmul', 'tc_min_work')} (speed), m·n ≥ {n('matmul', 'tc_min_outputs')} and k ≤ "
                f"{n('matmul', 'tc_max_k')} (accuracy: within 1.5x of cublasSgemm's largest error), cuBLAS "
                "elsewhere, warptile where cuBLAS's int dimensions refuse; reduced-precision rows never.")
    return (f"`auto`, by {rules}: reduce runs vector for whole float32 sums and axis for everything else; "
            f"histogram runs lane-private for bytes over more than {n('histogram', 'lane_private_above_bins')} bins, "
            "vector otherwise; never racy.")


SIDE_TABLES = {"python-overhead": python_overhead_table, "auto-rules": auto_rules_table, "latency": latency_table, "ndimage": ndimage_table,
               "ndimage-rank": functools.partial(ndimage_table, rank=True), "dask-scaling": lambda: dask_table(DASK_RESULTS),
               "dask-one-gpu": lambda: dask_table(DASK_ONE_GPU_RESULTS),
               "matmul-wgmma-sizes": wgmma_sizes_table, "conv2d-tc-sweep": tc_sweep_table,
               "transpose-ncu": transpose_ncu_table, "explain": explain_example,
               **{f"auto-{op}": functools.partial(auto_summary, op) for op in ("conv1d", "conv2d", "matmul", "histogram")}}


def floors_table(doc, op):
    """Each workload's work, bytes and roofline floor, from any timed row (gflops x ms is the
    work, gbps x ms the bytes; the floor is the larger of bytes over the copy ceiling and work
    over the FMA ceiling of that run)."""
    c = run_of(doc, op)[1]
    date = doc.get("date_by_op", {}).get(op, doc["date"])
    lines = [f"_From the results file's run of {date} (its ceilings: copy {c['copy_gbps']:.0f} GB/s, "
             f"FP32 FMA {c['fma_gflops'] / 1000:.1f} TFLOP/s)._", "",
             "| workload | work | bytes read + written | floor |", "| --- | --- | --- | --- |"]
    rows = [r for r in doc["rows"] if r["op"] == op]
    for w in workloads(rows, op):
        r = next((r for r in rows if r["workload"] == w and timed(r) and r.get("gbps") and r["backend"] != "peer"), None)
        if r is None:
            continue
        gflop, mbytes = r["gflops"] * r["ms"] / 1e3, r["gbps"] * r["ms"]
        copy_ms, fma_ms = mbytes / c["copy_gbps"], gflop / c["fma_gflops"] * 1e3  # MB / (GB/s) is ms
        bound = f"{max(copy_ms, fma_ms):.3g} ms ({'copy' if copy_ms >= fma_ms else 'FMA'})"
        work = f"{gflop:.0f}" if gflop >= 100 else f"{gflop:.3g}"
        lines.append(f"| {label(op, w)} | {work} GFLOP | {mbytes:.0f} MB | {bound} |")
    return "\n".join(lines)


BACKENDS = ("cpu", "cuda", "vendor")


def registry(op):
    """op's rows as the registry of the library built beside this checkout names them
    (memhier.variants), CPU rows first, then the GPU's by rung, then the vendors'."""
    os.environ.setdefault("MEMHIER_LIBRARY", str(ROOT / "build/libmemhier.so"))
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    try:
        import memhier
    except (ImportError, OSError) as e:  # OSError: no library at MEMHIER_LIBRARY's path
        sys.exit(f"report: the rungs tables read the library's registry: build it first "
                 f"(cmake --build build) or set MEMHIER_LIBRARY ({e})")
    return sorted(memhier.variants(op), key=lambda v: (BACKENDS.index(v.backend), v.rung))


def row_name(v):
    """A registry row's name without its op ("regtile" for "conv2d/regtile")."""
    return v.name.split("/", 1)[1]


def rungs_table(doc, op):
    """The ladder's rungs from the registry: what the rows are, where the measured tables say
    how fast; bold where auto picked the row on a workload of the results file."""
    picked = {a["chose"] for a in doc.get("auto", []) if a["op"] == op}
    lines = ["| variant | backend | memory | from | what the rung changes |", "| --- | --- | --- | --- | --- |"]
    for v in registry(op):
        name = row_name(v)
        what = v.summary + (" (normwise accuracy)" if v.precision == "normwise" else "")
        lines.append(f"| {f'**{name}**' if v.name in picked else name} | {v.backend} | {v.memory} | {v.source} | "
                     f"{what} |")
    lines += ["", f"_The registry's rows (`memhier list {op}`); **bold**: auto's pick on a workload of "
              f"{doc['device']}'s results file._"]
    return "\n".join(lines)


def takers_text(op, what):
    """Which rows of op take `what` (a name of mh_takes_name's) and which refuse it, as the
    registry's flags say."""
    rows = registry(op)
    taking = [row_name(v) for v in rows if what in v.takes]
    others = [row_name(v) for v in rows if what not in v.takes]
    if not taking:
        sys.exit(f"report: no row of {op} takes '{what}': a marker names a flag no row has")
    return (f"_The rows of {op} that take {what}: {', '.join(taking)}; the others ({', '.join(others)}) refuse "
            "such a call and name these (the registry's flags: `memhier.variants()`'s `takes`)._")


def table(doc, op, kind):
    if op in SIDE_TABLES:
        return SIDE_TABLES[op]()
    if kind == ":rungs":
        return rungs_table(doc, op)
    if kind.startswith(":takes-"):
        return takers_text(op, kind[len(":takes-"):].replace("-", " "))
    if kind == ":floors":
        return floors_table(doc, op)
    return peers_table(doc, op) if kind == ":peers" else ladder_table(doc, op, kind)


def render(text, doc):
    """text with every marked block regenerated; also the names of the blocks."""
    names = []

    def one(m):
        op, kind = m.group(1), m.group(2) or ""
        names.append(f"report:{op}{kind}")
        return f"<!-- report:{op}{kind} -->\n{table(doc, op, kind)}\n<!-- /report -->"
    return MARKER.sub(one, text), names


def documents():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def update(doc, check):
    """Rewrites (or, with check, compares) every marked block; returns the drifted ones."""
    drifted = []
    for path in documents():
        text = path.read_text()
        new, names = render(text, doc)
        if new == text:
            continue
        for name, old, fresh in zip(names, MARKER.finditer(text), MARKER.finditer(new)):
            if old.group(0) != fresh.group(0):
                drifted.append(f"{path.relative_to(ROOT)}: {name}")
        if not check:
            path.write_text(new)
    return drifted


# ---- plots -----------------------------------------------------------------------------------

def plots(doc, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir.mkdir(parents=True, exist_ok=True)
    for op in OPS:
        rows = [r for r in doc["rows"] if r["op"] == op and timed(r)]
        if not rows:
            continue
        if op in STREAMS:
            bandwidth(plt, doc, op, rows, outdir / f"{op}-roofline.png")
        else:
            roofline(plt, doc, op, rows, outdir / f"{op}-roofline.png")
        ladder(plt, doc, op, rows, outdir / f"{op}-ladder.png")
    if LATENCY_RESULTS.exists():
        latency_plot(plt, outdir / "latency.png")


def latency_plot(plt, path):
    """One panel a function: per call µs against the image's side, log-log, memhier and each peer."""
    d, by = latency_rows()
    cols = 4
    rows = (len(by) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    colour = dict(zip(("memhier",) + LATENCY_PEERS, ("C0", "C1", "C2", "C3", "C4")))
    sizes = sorted({r["size"] for r in d["rows"]})
    for ax, (fn, per_size) in zip(axes.flat, by.items()):
        for lib in ("memhier",) + LATENCY_PEERS:
            points = sorted((n, libs[lib]["per_call_us"]) for n, libs in per_size.items() if lib in libs)
            if points:
                ax.plot(*zip(*points), marker="o", label=lib, color=colour[lib],
                        linewidth=2.5 if lib == "memhier" else 1.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes, [str(n) for n in sizes], fontsize=7)
        log_axis(ax, "y")
        ax.set_title(fn, fontsize=9)
        ax.set_xlabel("n (n × n image)", fontsize=8)
        ax.set_ylabel("µs per call", fontsize=8)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(by):]:
        ax.axis("off")
    fig.suptitle(f"Time per call in a loop, CuPy images, {d['device']}", fontsize=10)
    finish(plt, fig, path, top=0.985)


def colours(plt, names):
    """Distinct colours: tab20's dark shades first, then its light ones."""
    cmap = plt.get_cmap("tab20")
    order = list(range(0, 20, 2)) + list(range(1, 20, 2))
    return {n: cmap(order[i % 20]) for i, n in enumerate(names)}


def bar_colour(row, best=None):
    """Orange the vendor, green the peers, red our fastest FP32-accurate row (where marked), blue ours."""
    if row["backend"] == "vendor":
        return "tab:orange"
    if row["backend"] == "peer":
        return "tab:green"
    return "tab:red" if row is best else "tab:blue"


def finish(plt, fig, path, top=1.0):
    """Lays the panels out below `top` (a fraction of the figure's height: room for a suptitle
    that tight_layout does not keep clear) and writes the figure."""
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def log_axis(ax, which):
    """Plain-number labels on a log axis, called once the data are drawn: at 1, 2 and 5 of each
    decade where the axis spans at most two decades (so a range inside one decade still gets
    labels), else at the decades alone (their labels would overlap); none in between."""
    import math
    import matplotlib.ticker as ticker
    axis = ax.xaxis if which == "x" else ax.yaxis
    lo, hi = ax.get_xlim() if which == "x" else ax.get_ylim()
    subs = (1.0, 2.0, 5.0) if math.log10(hi / lo) <= 2 else (1.0,)
    axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())


def roofline(plt, doc, op, rows, path):
    """Arithmetic intensity against achieved rate, every row a point (colour: variant, marker:
    workload), the ceilings of that run as lines."""
    import numpy as np
    c = run_of(doc, op)[1]
    copy, fma = c["copy_gbps"], c["fma_gflops"]
    mains = main_workloads(op, rows)
    pts = [r for r in rows if r.get("gflops") and r.get("gbps") and r["backend"] != "peer" and r["workload"] in mains]
    names = list(dict.fromkeys(r["variant"] for r in pts))
    col = colours(plt, names)
    marks = dict(zip(workloads(pts, op), "osD^vP*X<>"))
    fig, ax = plt.subplots(figsize=(10, 6))
    intensities = [r["gflops"] / r["gbps"] for r in pts]
    ai = np.logspace(np.log10(min(intensities) / 4), np.log10(max(intensities) * 4), 200)
    ax.plot(ai, np.minimum(copy * ai, fma), "k-", lw=1.5, label=f"ceilings: copy {copy:.0f} GB/s, FP32 FMA {fma / 1000:.1f} TFLOP/s")
    tf32 = [r["gflops"] for r in pts if r["variant"] == "matmul/cublas-tf32"]
    if tf32:
        ax.axhline(max(tf32), color="grey", ls="--", lw=1, label=f"TF32 tensor cores as cuBLAS reaches them ({max(tf32) / 1000:.0f} TFLOP/s)")
    for r in pts:
        ax.loglog(r["gflops"] / r["gbps"], r["gflops"], marks[r["workload"]], color=col[r["variant"]], ms=7, mec="k", mew=0.4)
    for v in names:
        ax.plot([], [], "s", color=col[v], label=short(v) + (" (TF32)" if v in reduced_variants(pts) else ""))
    for w, m in marks.items():
        ax.plot([], [], m, color="white", mec="k", label=label(op, w))
    ax.set_xscale("log"), ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP of the direct formula per byte of input and output)")
    ax.set_ylabel("GFLOP/s of the direct formula (FFT and 3xTF32 rows: effective)")
    log_axis(ax, "x"), log_axis(ax, "y")
    ax.set_title(f"{op}: roofline ({doc['device']}, run of {run_date(doc, op)})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    finish(plt, fig, path)


def bandwidth(plt, doc, op, rows, path):
    """Ops that stream (STREAMS): achieved GB/s per row and workload against the copy ceiling
    (a reduce or histogram only reads, so it can pass the ceiling, which counts a read and a write)."""
    c = run_of(doc, op)[1]
    copy = c["copy_gbps"]
    wls = main_workloads(op, rows)
    fig, axes = plt.subplots(1, len(wls), figsize=(max(3.6 * len(wls), 9), 5), squeeze=False)
    for ax, w in zip(axes[0], wls):
        here = [r for r in rows if r["workload"] == w and r["backend"] != "cpu"]
        moved = next((r["gbps"] * r["ms"] for r in here if r.get("gbps")), None)  # bytes / 1e6, the same for every row
        here = [r for r in here if r.get("gbps") or (moved and r["backend"] == "peer")]
        ax.barh([short(r["variant"]) for r in here], [r.get("gbps") or moved / r["ms"] for r in here],
                color=[bar_colour(r) for r in here])
        ax.axvline(copy, color="k", lw=1.2)
        ax.set_title(label(op, w), fontsize=9)
        ax.set_xlabel("GB/s (read + written)")
        ax.invert_yaxis()
        ax.tick_params(labelsize=7)
    fig.suptitle(f"{op}: bandwidth ({doc['device']}, run of {run_date(doc, op)})\nblack line: the copy ceiling, {copy:.0f} GB/s; "
                 "blue ours, orange vendor, green peers", fontsize=9)
    finish(plt, fig, path)


def ladder(plt, doc, op, rows, path):
    """Time per rung, log scale, one panel per workload (at most four); vendor and peers marked."""
    wls = main_workloads(op, rows)
    fig, axes = plt.subplots(1, len(wls), figsize=(max(3.9 * len(wls), 9), 5.4), squeeze=False)
    for ax, w in zip(axes[0], wls):
        here = sorted((r for r in rows if r["workload"] == w and r["backend"] != "cpu"),
                      key=lambda r: LADDER_ORDER[r["backend"]])
        best = fastest(here, is_ours)
        ax.barh([short(r["variant"]) + (" †" if reduced(r) else "") for r in here], [r["ms"] for r in here],
                color=[bar_colour(r, best) for r in here])
        ax.set_xscale("log")
        log_axis(ax, "x")
        ax.set_title(label(op, w), fontsize=9)
        ax.set_xlabel("ms (log)")
        ax.invert_yaxis()
        ax.tick_params(labelsize=7)
        ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.suptitle(f"{op}: the ladder ({doc['device']}, run of {run_date(doc, op)})\nred: our fastest FP32-accurate, "
                 "blue the rest of ours, orange vendor, green peers, †: TF32", fontsize=9)
    finish(plt, fig, path)


# ---- main ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=str(DEFAULT_RESULTS))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--outdir")
    a = ap.parse_args()
    doc = load(a.results)
    if a.outdir:
        out = Path(a.outdir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "tables.md").write_text("\n\n".join(f"## {op}\n\n{ladder_table(doc, op)}\n\n{peers_table(doc, op)}"
                                                   for op in OPS) + "\n")
        plots(doc, out / "plots")
        return 0
    drifted = update(doc, a.check)
    if a.check:
        for d in drifted:
            print(f"report: {d} differs from what scripts/report.py makes of {os.path.relpath(a.results, ROOT)}; "
                  "run `python3 scripts/report.py` and commit", file=sys.stderr)
        return 1 if drifted else 0
    plots(doc, ROOT / "docs/plots")
    for d in drifted:
        print(f"report: rewrote {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Tables of the matmul experiments that lab/notes/matmul.md walks through, made from the sweeps
that measured them (lab/results), so that their figures were not typed by hand either. The notes
keep them as they were made; `python3 lab/scripts/report_experiments.py` prints them again. Each row names the configuration it reads; a figure in brackets after a
4096^3 time is LeetGPU's 8192 x 6144 x 4096 from the same sweep."""
import json
import sys
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))
import results  # noqa: E402  (the product's readers of bench logs)

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "lab/results"


def result_file(name):
    """A results file by its name after the GPU's: in the lab, or in bench/results where the product reads it."""
    lab = RESULTS / f"{GPU}.{name}"
    return lab if lab.exists() else ROOT / "bench/results" / f"{GPU}.{name}"
GPU = "NVIDIA_H100_80GB_HBM3"
W4096, WLEET = "m=4096 k=4096 n=4096", "m=8192 k=6144 n=4096"


@lru_cache(maxsize=None)
def tune_json(name):
    """A `memhier bench --tune --json` file as {variant: {workload: ms}}."""
    out = {}
    for r in json.loads(result_file(name).read_text())["rows"]:
        out.setdefault(r["variant"], {})[r["workload"]] = r["ms"]
    return out


@lru_cache(maxsize=None)
def bench_log(name):
    """A text log of `memhier bench` runs as [{workload: {variant: ms}}], one dict per section."""
    return results.bench_log(result_file(name))


def ms(v):
    if v is None:
        return "–"
    return f"{v:.4g}" if v < 1 else f"{v:.3f}"


def fig(file, variant, workload, section=0):
    """A measured figure: variant's ms at workload in file (section: of a text log); None where the
    sweep did not run it."""
    if file.endswith(".json"):
        return tune_json(file)[variant][workload]
    return bench_log(file)[section].get(workload, {}).get(variant)


def both(refs):
    """'4096^3 (LeetGPU)' of one or more warptile configurations: 'a / b (c / d)'."""
    if not refs:
        return ""
    big = " / ".join(ms(fig(f, f"matmul/warptile[{c}]", W4096)) for f, c in refs)
    leet = " / ".join(ms(fig(f, f"matmul/warptile[{c}]", WLEET)) for f, c in refs)
    return f"{big} ({leet})"


def table(header, rows):
    return "\n".join(["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"] +
                     ["| " + " | ".join(r) + " |" for r in rows])


def matmul_first_session():
    """warptile, 870b0d2 .. 3ab3eba: the changes that measured slower than the then default."""
    base = ("matmul-tune-async.json", "b128x256-k8-w64x64-t8x4")
    rows = [("(the then default)", "", [base]),
            ("register double buffer: kk + 1's operands loaded during kk's FMAs (-pipe)", "≤ 2.9 ms",
             [("matmul-tune.json", "b128x256-k8-w64x64-t8x4-pipe")]),
            ("the kk loop unrolled 4 (-u4) or 2 (-u2) instead of 8 (instruction cache)", "a few %",
             [("matmul-tune-unroll.json", "b128x256-k8-w64x64-t8x4-u4"),
              ("matmul-tune-unroll.json", "b128x256-k8-w64x64-t8x4-u2")]),
            ("cp.async tiles instead of the 12-register prefetch (-async)", "a few % (registers freed)",
             [("matmul-tune-async.json", "b128x256-k8-w64x64-t8x4-async")]),
            ("k-steps of 16 (half the barriers)", "a few %", [("matmul-tune-unroll.json", "b128x256-k16-w64x64-t8x4")])]
    b = fig(base[0], f"matmul/warptile[{base[1]}]", W4096)
    out = []
    for what, pred, refs in rows:
        big = [fig(f, f"matmul/warptile[{c}]", W4096) for f, c in refs]
        change = "" if refs == [base] else " (" + " / ".join(f"{(v / b - 1) * 100:+.1f}%" for v in big) + ")"
        leet = " / ".join(ms(fig(f, f"matmul/warptile[{c}]", WLEET)) for f, c in refs)
        out.append([what, pred, " / ".join(ms(v) for v in big) + change, leet])
    return (f"_From `{GPU}.matmul-tune.json` (84d2090), `...matmul-tune-unroll.json` (870b0d2) and "
            "`...matmul-tune-async.json` (3ab3eba); ms; in brackets the change against the then default._\n\n" +
            table(["change", "prediction", "4096³", "LeetGPU"], out))


def matmul_second_session():
    """warptile's walk (5f78703, 3c84036): bounds checks, loads two steps ahead, FMA order."""
    walk, walk2 = "matmul-tune-walk.json", "matmul-tune-walk2.json"
    k8 = "b128x256-k8-w64x64-t8x4"
    rows = [("128 × 256, row order", [(walk, k8 + "-checked-rows")], [(walk, k8 + "-rows")], [(walk2, k8 + "-rows")]),
            ("128 × 256, row serpentine", [(walk, k8 + "-checked")], [(walk, k8)], [(walk2, k8 + "-serp")]),
            ("128 × 256, column serpentine", [], [(walk, k8 + "-colserp"), (walk2, k8 + "-walk1")], [(walk2, k8)]),
            ("**256 × 128, column serpentine**", [], [], [(walk2, "b256x128-k8-w64x64-t8x4")]),
            ("128 × 128 × 8, 128 registers (2 blocks per SM)", [], [(walk2, "b128x128-k8-w64x32-t4x4-occ2-walk1")],
             [(walk2, "b128x128-k8-w64x32-t4x4-occ2")])]
    out = [[what] + [both(c) for c in cells] for what, *cells in rows]
    return (f"_From `{GPU}.matmul-tune-walk.json` (5f78703) and `...matmul-tune-walk2.json` (3c84036); ms at "
            "4096³ (LeetGPU); two figures in a cell: the two sweeps, the same code._\n\n" +
            table(["4096³ (LeetGPU)", "checked", "walk, 1 ahead", "walk, 2 ahead"], out))


def matmul_third_session():
    """tf32x3-wgmma, ef5e977 .. 3dcafe1: wider blocks, a from registers, warp specialization."""
    exp, sizes = "matmul-wgmma-experiments.txt", "matmul-wgmma-sizes-b5b309b.txt"
    leet = "m=8192 k=4096 n=6144"  # the sweeps' large shape: LeetGPU's, a and b exchanged
    rows = [("128 × 128, plain (b5b309b)", "", (sizes, "n128", 0)),
            ("stages loaded two steps ahead at 128 × 128 (ef5e977)", "latency hidden: a few %", (exp, "n128", 0)),
            ("128 × 256 blocks, two m64n128k8 pieces a warpgroup (ef5e977)", "25% fewer L2 bytes; if L2-bound, the "
             "product ~1.05 ms", (exp, "n256", 0)),
            ("a from registers, split by each thread into its wgmma fragments (244fbaa)", "shared-memory traffic "
             "-25%, L2 bytes -6%: the product ~1.0 ms if shared memory binds", (exp, "n256-ra", 1)),
            ("warp specialized, 128 × 256 (620f3ea)", "the barrier's idle tensor time gone", (exp, "n256-ws", 2)),
            ("the same, auto's weights (3dcafe1)", "", ("matmul-wgmma-sizes.txt", "n256-ws", 0))]
    out = []
    for what, pred, (f, cfg, sec) in rows:
        v = f"matmul/tf32x3-wgmma[{cfg}]"
        out.append([what, pred, ms(fig(f, v, W4096, sec)), ms(fig(f, v, leet, sec))])
    return (f"_From `{GPU}.matmul-wgmma-experiments.txt` (one section per device call) and the sizes sweeps at "
            "b5b309b and 3dcafe1; ms, bench median, the split pass included; the product kernel alone (ncu) is "
            "in the text; –: not in that sweep._\n\n" + table(["change (commit)", "prediction", "4096³", "8192 × 4096 × 6144"], out))


TABLES = {"matmul-first-session": matmul_first_session, "matmul-second-session": matmul_second_session,
          "matmul-third-session": matmul_third_session}


TRANSPOSE_NCU = "transpose-ncu.txt"


def ncu_sections(name):
    """An ncu log of gpu-check as {variant: {metric: value}}."""
    return results.ncu_sections(result_file(name))


def transpose_ncu():
    """docs/transpose.md's counters: each rung at 8192^2, one launch under ncu."""
    def mega(v):
        return "0" if v == 0 else f"{v / 1e6:.3g} M" if v >= 1e5 else f"{v / 1e6:.2f} M"
    rows = []
    for variant, m in ncu_sections(TRANSPOSE_NCU).items():
        sectors = m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
        per_req = sectors / m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"]
        rows.append([variant.split("/")[-1], f"{m['gpu__time_duration.sum']:.0f} µs",
                     f"{m['dram__throughput.avg.pct_of_peak_sustained_elapsed']:.0f}%",
                     f"{mega(sectors)} ({per_req:.0f} per request)",
                     mega(m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]),
                     mega(m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]),
                     f"{m['smsp__inst_executed.sum'] / 1e6:.0f} M"])
    return (f"_From `bench/results/{GPU}.{TRANSPOSE_NCU}` (ncu --clock-control none, one launch a rung, "
            "H100); sectors per request: 4 is the least for a warp's 4-byte stores, 16 for its 16-byte ones._\n\n" + table(["variant", "time (ncu)", "DRAM", "global store sectors", "shared-load conflicts",
                                   "shared-store conflicts", "instructions"], rows))


TABLES["transpose-ncu"] = transpose_ncu

if __name__ == "__main__":
    for name, make in TABLES.items():
        print(f"## {name}\n\n{make()}\n")

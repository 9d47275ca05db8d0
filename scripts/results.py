"""What the scripts that read `memhier bench` JSON files share: which rows are ours, which are
reduced precision, and the rows grouped by workload."""
import json

# memhier's reduced-precision rows (mh_variant_is_reduced_precision): they race neither the
# vendor's FP32 row nor the FP32 peers
REDUCED = {"matmul/tf32", "matmul/tf32-wgmma", "matmul/cublas-tf32"}


def load(path):
    return json.load(open(path))


def workload_fields(workload):
    """A workload's fields: "rows=2048 krows=3 pad=same" -> {"rows": "2048", "krows": "3", "pad": "same"}."""
    return dict(kv.split("=", 1) for kv in workload.split())


def is_ours(row):
    """A CUDA row of ours in its default configuration that computes in full precision."""
    return row["backend"] == "cuda" and "[" not in row["variant"] and row["variant"] not in REDUCED


def timed(row):
    return row.get("status") == "ok" and bool(row.get("ms"))


def workloads(rows, op):
    """op's workloads in the order the bench ran them."""
    seen = []
    for r in rows:
        if r["op"] == op and r["workload"] not in seen:
            seen.append(r["workload"])
    return seen

"""What the scripts that read `memhier bench` results share: which rows are ours, which are
reduced precision, the rows grouped by workload, and the readers of text logs (a bench run's
printout, an ncu log)."""
import json
import re



def load(path):
    return json.load(open(path))


def workload_fields(workload):
    """A workload's fields: "rows=2048 krows=3 pad=same" -> {"rows": "2048", "krows": "3", "pad": "same"}."""
    return dict(kv.split("=", 1) for kv in workload.split())


def reduced(row):
    """A reduced-precision row (the bench marks it: mh_variant_is_reduced_precision): it races
    neither the vendor's FP32 row nor the FP32 peers."""
    return bool(row.get("reduced"))


def reduced_variants(rows):
    """The names of the reduced-precision rows among rows."""
    return {r["variant"] for r in rows if reduced(r)}


def is_ours(row):
    """A CUDA row of ours in its default configuration that computes in full precision."""
    return row["backend"] == "cuda" and "[" not in row["variant"] and not reduced(row)


def timed(row):
    return row.get("status") == "ok" and bool(row.get("ms"))


def workloads(rows, op):
    """op's workloads in the order the bench ran them."""
    seen = []
    for r in rows:
        if r["op"] == op and r["workload"] not in seen:
            seen.append(r["workload"])
    return seen


def bench_log(path):
    """A text log of `memhier bench` runs as [{workload: {variant: ms}}], one dict per section
    ("## ..." lines start a section; a file without them is one section)."""
    sections, workload = [{}], None
    for line in open(path).read().splitlines():
        if line.startswith("## ") and sections[-1]:
            sections.append({})
        head = re.match(r"\[\w+ \d+/\d+\] (.*?)  \(", line)
        if head:
            workload = head.group(1)
            sections[-1].setdefault(workload, {})
        row = re.match(r"\s+(\S+)\s+(cuda|vendor|cpu)\s+([0-9.]+)\s", line)
        if row and workload:
            sections[-1][workload][row.group(1)] = float(row.group(3))
    return [s for s in sections if s]


def ncu_sections(path):
    """An ncu log of gpu-check (## VARIANT, then `metric unit value` lines) as {variant: {metric: value}}."""
    out, cur = {}, None
    for line in open(path).read().splitlines():
        if line.startswith("## "):
            cur = out.setdefault(line[3:].strip(), {})
        elif cur is not None and line.strip():
            parts = line.split()
            cur[parts[0]] = float(parts[-1].replace(",", ""))
    return out

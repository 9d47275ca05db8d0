#!/usr/bin/env python3
"""Where a kernel's instructions and stalls go, from an ncu report's SASS source page: the runs of
instructions executed the same number of times (a basic block, or blocks that run together) that
execute the most warp instructions, each with its share of the kernel's instructions and stall
samples, its count, its length and its commonest opcodes; then the totals by opcode. A run's
count over the launch's warps says how often each warp runs it (a loop's trips).

usage: ncu --import REP --page source --csv --print-source sass > page.csv
       python3 ncu_hot.py page.csv [--top N]
The csv's columns are found by name (ncu versions order them differently)."""
import collections
import csv
import sys


def number(text):
    try:
        return float((text or "").replace(",", "").strip())
    except ValueError:
        return 0.0


def opcode(instruction):
    words = instruction.split()
    word = words[1] if words and words[0].startswith("@") and len(words) > 1 else words[0] if words else "?"
    return word.split(".")[0]


def runs(body, executed, stalls, source):
    """Consecutive instructions with one execution count, as dicts."""
    out, cur = [], None
    for i, r in enumerate(body):
        n = number(r[executed])
        if n == 0:
            cur = None
            continue
        if cur is None or cur["count"] != n:
            cur = {"count": n, "at": i, "ops": [], "stalls": 0.0}
            out.append(cur)
        cur["ops"].append(opcode(r[source].strip()))
        cur["stalls"] += number(r[stalls])
    return out


def main():
    args = sys.argv[1:]
    top = int(args[args.index("--top") + 1]) if "--top" in args else 25
    with open(args[0], newline="") as f:
        rows = list(csv.reader(f))
    start = next(i for i, r in enumerate(rows) if "Instructions Executed" in r)
    header = rows[start]
    executed, source = header.index("Instructions Executed"), header.index("Source")
    stalls = header.index("Warp Stall Sampling (All Samples)")
    body = [r for r in rows[start + 1:] if len(r) > executed]
    total = sum(number(r[executed]) for r in body) or 1.0
    total_stalls = sum(number(r[stalls]) for r in body) or 1.0
    print(f"{len(body)} instructions, {total:.4g} warp instructions executed, {total_stalls:.4g} stall samples")
    cumulative = 0.0
    for run in sorted(runs(body, executed, stalls, source), key=lambda b: -b["count"] * len(b["ops"]))[:top]:
        share = run["count"] * len(run["ops"]) / total
        cumulative += share
        ops = " ".join(f"{k}{v}" for k, v in collections.Counter(run["ops"]).most_common(7))
        print(f"{share:6.1%} (to {cumulative:5.1%}) stalls {run['stalls'] / total_stalls:5.1%} at {run['at']:6d} "
              f"x{run['count']:.0f} len {len(run['ops'])}: {ops}")
    by_op, stall_op = collections.Counter(), collections.Counter()
    for r in body:
        op = opcode(r[source].strip())
        by_op[op] += number(r[executed])
        stall_op[op] += number(r[stalls])
    print("by opcode (instructions, stall samples):")
    for op, n in by_op.most_common(20):
        print(f"  {op:10} {n / total:6.1%} {stall_op[op] / total_stalls:6.1%}")


if __name__ == "__main__":
    main()

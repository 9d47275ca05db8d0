#!/usr/bin/env python3
"""Merges the per-op JSONs of one device call (memhier bench OP --json bench-OP.json, peers
added) into one results file: rows and auto choices concatenated, the first file's device,
commit and date, and each op's ceilings (measured by its own bench invocation) under
"ceilings_by_op"; "ceilings" is the first file's.

usage: merge_bench.py OUT_JSON IN_JSON...   (exit 1 when the inputs disagree on commit or device)
       merge_bench.py --replace RESULTS_JSON IN_JSON
           the ops IN_JSON holds replace their rows and auto choices in RESULTS_JSON (the same
           device), each op's commit, date and ceilings recorded under *_by_op
       merge_bench.py --replace-rows RESULTS_JSON IN_JSON...
           a grid's rows measured again (a changed row on the grid's cells): each row of the
           IN_JSONs replaces the row of the same workload and variant in RESULTS_JSON (the same
           device), or joins it; the variants, commit, date and row count appended to
           "remeasured", in order, a later entry's rows replacing an earlier's of the same cells
           (the file's own commit and date stay those of the rest)
       merge_bench.py --median OUT_JSON IN_JSON...
           the IN_JSONs are repeats of one run (the same workloads and variants): each row of OUT
           is the repeat whose ms is the median of that workload and variant's (the lower middle
           of an even count), and auto the first file's; for calls of a few microseconds, whose
           median of back-to-back calls moves with the host from run to run"""
import json
import sys


def check_device(doc, results_path, new, new_path):
    """Exits where new was measured on another device than the results file."""
    if doc["device"] != new["device"]:
        sys.exit(f"{new_path}: measured on {new['device']}, {results_path} on {doc['device']}")


def replace(results_path, new_path):
    doc, new = json.load(open(results_path)), json.load(open(new_path))
    check_device(doc, results_path, new, new_path)
    ops = {r["op"] for r in new["rows"]}
    doc["rows"] = [r for r in doc["rows"] if r["op"] not in ops] + new["rows"]
    doc["auto"] = [a for a in doc.get("auto", []) if a.get("op") not in ops] + new.get("auto", [])
    for op in ops:
        for key, value in (("commit_by_op", new["commit"]), ("date_by_op", new["date"]),
                           ("ceilings_by_op", new["ceilings"])):
            doc.setdefault(key, {})[op] = value
    json.dump(doc, open(results_path, "w"), indent=1)
    print(f"{results_path}: {', '.join(sorted(ops))} replaced ({len(new['rows'])} rows)")


def replace_rows(results_path, new_paths):
    doc = json.load(open(results_path))
    for path in new_paths:
        new = json.load(open(path))
        check_device(doc, results_path, new, path)
        keys = {(r["workload"], r["variant"]) for r in new["rows"]}
        doc["rows"] = [r for r in doc["rows"] if (r["workload"], r["variant"]) not in keys] + new["rows"]
        doc.setdefault("remeasured", []).append({"variants": sorted({v for _, v in keys}), "commit": new["commit"],
                                                 "date": new["date"], "rows": len(new["rows"])})
    json.dump(doc, open(results_path, "w"), indent=1)
    print(f"{results_path}: {sum(r['rows'] for r in doc['remeasured'][-len(new_paths):])} rows measured again")


def median_of(out_path, paths):
    docs = [json.load(open(p)) for p in paths]
    first = docs[0]
    for p, d in zip(paths, docs):
        check_device(first, paths[0], d, p)
    repeats = {}
    for d in docs:
        for r in d["rows"]:
            repeats.setdefault((r["workload"], r["variant"]), []).append(r)
    out = dict(first)
    out["rows"] = []
    for key in [(r["workload"], r["variant"]) for r in first["rows"]]:
        runs = sorted(repeats[key], key=lambda r: r["ms"] if r.get("ms") is not None else float("inf"))
        out["rows"].append(dict(runs[(len(runs) - 1) // 2], repeats=len(runs)))
    json.dump(out, open(out_path, "w"), indent=1)
    print(f"{out_path}: {len(out['rows'])} rows, the median of {len(docs)} repeats")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--median":
        return median_of(sys.argv[2], sys.argv[3:])
    if len(sys.argv) == 4 and sys.argv[1] == "--replace":
        return replace(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 4 and sys.argv[1] == "--replace-rows":
        return replace_rows(sys.argv[2], sys.argv[3:])
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    docs = [json.load(open(p)) for p in sys.argv[2:]]
    first = docs[0]
    for p, d in zip(sys.argv[2:], docs):
        if (d["commit"], d["device"]) != (first["commit"], first["device"]):
            sys.exit(f"{p}: commit {d['commit']} on {d['device']}, not {first['commit']} on {first['device']}")
    out = {k: first[k] for k in ("device", "backend", "date", "commit", "ceilings") if k in first}
    out["ceilings_by_op"] = {}
    out["rows"], out["auto"] = [], []
    for d in docs:
        for op in sorted({r["op"] for r in d["rows"]}):
            out["ceilings_by_op"][op] = d["ceilings"]
        out["rows"] += d["rows"]
        out["auto"] += d.get("auto", [])
    json.dump(out, open(sys.argv[1], "w"), indent=1)
    print(f"{sys.argv[1]}: {len(out['rows'])} rows from {len(docs)} files")


if __name__ == "__main__":
    main()

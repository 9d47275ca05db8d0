#!/usr/bin/env python3
"""Merges the per-op JSONs of one device call (memhier bench OP --json bench-OP.json, peers
added) into one results file: rows and auto choices concatenated, the first file's device,
commit and date, and each op's ceilings (measured by its own bench invocation) under
"ceilings_by_op"; "ceilings" is the first file's.

usage: merge_bench.py OUT_JSON IN_JSON...   (exit 1 when the inputs disagree on commit or device)"""
import json
import sys


def main():
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

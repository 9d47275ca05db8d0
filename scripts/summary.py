#!/usr/bin/env python3
"""The closing table of the README's main job: per op and workload of a `memhier bench` JSON
(with the peers' rows where scripts/peers.py added them), the row auto runs, its time and its
share of the roofline floor, against the fastest full-precision vendor row (the one-thread
CPU reference in a CPU run) and the fastest peer. A ratio above 1 means memhier is faster.

usage: summary.py BENCH_JSON"""
import sys

from results import load, reduced, timed


def fastest(rows):
    return min(rows, key=lambda r: r["ms"]) if rows else None


def ratio(other, ours):
    return f"{other['ms'] / ours['ms']:.2f}x" if other else "-"


def ms(row):
    return f"{row['ms']:.4f}" if row else "-"


def name(row):
    return row["variant"][:26] if row else "-"


def pct(value):
    return f"{value:.0f}%" if value is not None else "-"


def summary(doc):
    """The table's lines."""
    picks = {(c["op"], c["workload"]): c["chose"] for c in doc.get("auto", [])}
    by = {}
    for r in doc["rows"]:
        if timed(r):
            by.setdefault((r["op"], r["workload"]), []).append(r)
    head = (f"{'op':9s} {'workload':50s} {'auto runs':24s} {'ms':>8s} {'roof':>6s} {'vendor ms':>9s} {'x vendor':>8s} "
            f"{'best peer':26s} {'ms':>8s} {'x peer':>7s}")
    lines = [head, "-" * len(head)]
    for (op, wl), rows in by.items():
        ours = [r for r in rows if r["variant"] == picks.get((op, wl))]
        if not ours:
            continue
        mine = ours[0]
        if doc.get("backend") == "cpu":  # no vendor rows on the CPU: the one-thread reference instead
            vendor = fastest([r for r in rows if r["variant"] == f"{op}/cpu-reference" and r is not mine])
        else:
            vendor = fastest([r for r in rows if r["backend"] == "vendor" and not reduced(r)
                              and r is not mine])
        peer = fastest([r for r in rows if r["backend"] == "peer"])
        roof = mine.get("roofline_pct")
        lines.append(f"{op:9s} {wl[:50]:50s} {mine['variant'][:24]:24s} {mine['ms']:8.4f} "
                     f"{pct(roof):>6s} {ms(vendor):>9s} {ratio(vendor, mine):>8s} "
                     f"{name(peer):26s} {ms(peer):>8s} {ratio(peer, mine):>7s}")
    return lines


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    doc = load(sys.argv[1])
    print(f"\nmemhier on {doc['device']} (commit {doc['commit']}): auto's pick against the vendor and the peers")
    print("\n".join(summary(doc)))
    if doc.get("backend") == "cpu":
        print("(the CPU backend: 'vendor' is the one-thread CPU reference; peers run on a GPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

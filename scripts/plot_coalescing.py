#!/usr/bin/env python3
"""Draws bandwidth against offset and against stride from a `memhier bench` JSON file
(the coalescing rows), as docs/coalescing.svg shows it.

usage: python3 scripts/plot_coalescing.py bench/results/NVIDIA_H100_80GB_HBM3.json docs/coalescing.svg
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(rows, pattern):
    points = []
    for r in rows:
        if r["op"] != "coalescing" or r["status"] != "ok":
            continue
        fields = dict(kv.split("=") for kv in r["workload"].split())
        if fields["pattern"] == pattern:
            points.append((int(fields[pattern]), r["gbps"]))
    return sorted(points)


def main(src, dst):
    doc = json.load(open(src))
    rows, copy = doc["rows"], doc["ceilings"]["copy_gbps"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, pattern, label in ((axes[0], "offset", "offset (floats)"), (axes[1], "stride", "stride (floats)")):
        pts = series(rows, pattern)
        if not pts:
            sys.exit(f"{src}: no coalescing rows with pattern={pattern}")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3)
        ax.axhline(copy, color="grey", linestyle="--", linewidth=1, label=f"device copy {copy:.0f} GB/s")
        ax.set_xlabel(label)
        ax.set_ylabel("useful GB/s (4 B read + 4 B written per thread)")
        ax.set_ylim(0, copy * 1.1)
        ax.grid(alpha=0.3)
        ax.legend()
    if pts:
        axes[1].set_xscale("log", base=2)
    axes[0].set_title("offset_add: out[t + k] = in[t + k] + 100")
    axes[1].set_title("strided_add: out[t * s] = in[t * s] + 100")
    fig.suptitle(f"{doc['device']}, run of {doc['date']}")
    fig.tight_layout()
    fig.savefig(dst)
    print(f"wrote {dst}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

#!/usr/bin/env python3
"""conv1d's n x k grid (memhier bench conv1d --grid --json GRID): which row wins where, and
auto's regret (the time of the row auto chose over the fastest row's), as one PNG and a
Markdown table.

usage: plot_conv1d_grid.py GRID_JSON OUT_PNG [OUT_MD]

Only rows that passed validation count; peers (backend "peer") are left out: auto chooses
among memhier's rows. Exit status 1 when a cell has no choice recorded or its chosen row has
no time (the regret cannot be computed)."""
import json
import math
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

COLOURS = {"conv1d/regtile": "#4c72b0", "conv1d/fft-fused": "#dd8452", "conv1d/fft-os": "#55a868",
           "conv1d/cufft": "#c44e52"}


def cells(doc):
    """{(n, k): {"times": {variant: ms}, "chose": variant}}"""
    out = {}
    for r in doc["rows"]:
        if r.get("backend") == "peer" or r.get("status") != "ok":
            continue
        m = re.match(r"n=(\d+) k=(\d+) pad=valid$", r["workload"])
        if m:
            out.setdefault((int(m[1]), int(m[2])), {"times": {}})["times"][r["variant"]] = r["ms"]
    for c in doc.get("auto", []):
        m = re.match(r"n=(\d+) k=(\d+) pad=valid$", c["workload"])
        if m and (int(m[1]), int(m[2])) in out:
            out[(int(m[1]), int(m[2]))]["chose"] = c["chose"]
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    doc = json.load(open(sys.argv[1]))
    grid = cells(doc)
    ns = sorted({n for n, _ in grid})
    ks = sorted({k for _, k in grid})
    variants = sorted({v for c in grid.values() for v in c["times"]}, key=lambda v: list(COLOURS).index(v)
                      if v in COLOURS else 99)
    fig, (ax_win, ax_reg) = plt.subplots(1, 2, figsize=(13, 6.2), constrained_layout=True)
    cmap = ListedColormap([COLOURS.get(v, "#999999") for v in variants])
    win = [[math.nan] * len(ns) for _ in ks]
    reg = [[math.nan] * len(ns) for _ in ks]
    worst, missing, lines = 1.0, [], []
    for (n, k), c in sorted(grid.items()):
        i, j = ks.index(k), ns.index(n)
        best = min(c["times"], key=c["times"].get)
        second = sorted(c["times"].values())[1] if len(c["times"]) > 1 else math.nan
        win[i][j] = variants.index(best)
        ax_win.text(j, i, f"{second / c['times'][best]:.1f}x", ha="center", va="center", fontsize=7, color="white")
        chose = c.get("chose")
        if chose not in c["times"]:
            missing.append(f"n={n} k={k}: auto chose {chose}, which has no time")
            continue
        r = c["times"][chose] / c["times"][best]
        reg[i][j] = r
        worst = max(worst, r)
        ax_reg.text(j, i, f"{r:.2f}", ha="center", va="center", fontsize=7,
                    color="black" if r < 1.35 else "white")
        lines.append((n, k, best, c["times"][best], chose, r))
    ax_win.imshow(win, cmap=cmap, vmin=-0.5, vmax=len(variants) - 0.5, origin="lower", aspect="auto")
    im = ax_reg.imshow(reg, cmap="Reds", vmin=1.0, vmax=1.5, origin="lower", aspect="auto")  # 1.5 and over: darkest
    for ax in (ax_win, ax_reg):
        ax.set_xticks(range(len(ns)), [f"2^{int(math.log2(n))}" for n in ns])
        ax.set_yticks(range(len(ks)), [str(k) for k in ks])
        ax.set_xlabel("signal length n (samples)")
        ax.set_ylabel("mask length k (valid padding)")
    ax_win.set_title("fastest row (label: its lead over the runner-up)")
    ax_reg.set_title(f"auto's regret: chosen row's time / fastest row's (max {worst:.2f})")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS.get(v, "#999999")) for v in variants]
    ax_win.legend(handles, [v.split("/")[1] for v in variants], loc="upper center", bbox_to_anchor=(0.5, -0.1),
                  ncol=len(variants), fontsize=9, frameon=False)
    fig.colorbar(im, ax=ax_reg, shrink=0.8, label="regret (1.00 = auto chose the fastest; 1.5 and over darkest)")
    fig.suptitle(f"conv1d on {doc['device']}, run of {doc['date']}")
    fig.savefig(sys.argv[2], dpi=110)
    print(f"wrote {sys.argv[2]}; max regret {worst:.3f} over {len(lines)} cells")
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as f:
            f.write(f"| n | k | fastest | ms | auto chose | regret |\n|---|---|---|---|---|---|\n")
            for n, k, best, ms, chose, r in lines:
                f.write(f"| {n} | {k} | {best.split('/')[1]} | {ms:.4f} | {chose.split('/')[1]} | {r:.2f} |\n")
    for m in missing:
        print("missing:", m)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()

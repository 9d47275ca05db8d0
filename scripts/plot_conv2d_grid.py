#!/usr/bin/env python3
"""conv2d's auto grid (scripts/conv2d_auto_grid.sh): which row is fastest where, and auto's
regret (the time of the row auto chose over the fastest row's), one panel pair per filter kind
(random, Gaussian, difference of Gaussians), as one PNG and a Markdown table.

usage: plot_conv2d_grid.py GRID_JSON OUT_PNG [OUT_MD] [--picks AUTO_PICKS]

Only memhier's rows that passed validation count (no peers, no reduced-precision rows): auto
chooses among them. Prints the largest regret and every cell above 1.10. Exit status 1 when a
cell has no choice recorded or its chosen row has no time.

--picks tests/data/auto_picks.txt replays the rules as they are now on the grid's times: each
cell's pick is the first row of auto's list there (test_auto_picks writes the lists of the
grid's cells, "grid KIND SIDE^2 RxC") that has a time in the cell (a row with none refused the
shape), in place of the pick the run recorded."""
import json
import math
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

COLOURS = {"walk": "#8172b3", "regtile": "#4c72b0", "stream": "#64b5cd", "tc": "#c44e52", "separable": "#ccb974",
           "lowrank": "#937860", "fft-tile": "#dd8452", "fft-3pass": "#da8bc3", "fft-os": "#55a868",
           "cpu-omp": "#999999"}
KINDS = ["random", "gaussian", "dog"]
WORKLOAD = re.compile(r"rows=(\d+) cols=(\d+) krows=(\d+) kcols=(\d+) pad=same(?: filter=(\w+)[:\d.]*)?$")


def key(workload):
    m = WORKLOAD.match(workload)
    return (m[5] or "random", int(m[1]), f"{m[3]}x{m[4]}") if m and m[1] == m[2] else None


def cells(doc):
    """{(kind, side, shape): {"times": {row: ms}, "chose": row}}"""
    out = {}
    for r in doc["rows"]:
        k = key(r["workload"])
        if k and r.get("backend") != "peer" and r.get("status") == "ok" and not r.get("reduced"):
            out.setdefault(k, {"times": {}})["times"][r["variant"].split("/")[1]] = r["ms"]
    for c in doc.get("auto", []):
        k = key(c["workload"])
        if k in out:
            out[k]["chose"] = c["chose"].split("/")[1]
    return out


def replay(grid, path):
    """Each cell's pick under the lists in an auto_picks file (see the usage)."""
    lists, picks = {}, {}
    for text in open(path):
        head, _, rest = text.partition(" = ")
        if head.startswith("conv2d L") and rest:
            lists[head.split()[1]] = rest.split()
        m = re.match(r"grid (\w+) (\d+)\^2 (\d+x\d+): (L\d+)", text)
        if m:
            picks[(m[1], int(m[2]), m[3])] = lists[m[4]]
    for k, c in grid.items():
        order = picks.get(k, [])
        c["chose"] = next((row for row in order if row in c["times"]), None)


def shape_order(shape):
    kr, kc = map(int, shape.split("x"))
    return (kr != kc, max(kr, kc), kr)


def main():
    args = sys.argv[1:]
    picks = None
    if "--picks" in args:
        at = args.index("--picks")
        picks = args[at + 1] if at + 1 < len(args) else sys.exit(__doc__)
        del args[at:at + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    doc = json.load(open(args[0]))
    grid = cells(doc)
    if picks:
        replay(grid, picks)
    kinds = [k for k in KINDS if any(c[0] == k for c in grid)]
    sides = sorted({c[1] for c in grid})
    shapes = sorted({c[2] for c in grid}, key=shape_order)
    rows = sorted({v for c in grid.values() for v in c["times"]}, key=lambda v: list(COLOURS).index(v)
                  if v in COLOURS else 99)
    cmap = ListedColormap([COLOURS.get(v, "#cccccc") for v in rows])
    fig, axes = plt.subplots(len(kinds), 2, figsize=(12, 4.6 * len(kinds)), constrained_layout=True, squeeze=False)
    worst, missing, lines = 1.0, [], []
    for (ax_win, ax_reg), kind in zip(axes, kinds):
        win = [[math.nan] * len(sides) for _ in shapes]
        reg = [[math.nan] * len(sides) for _ in shapes]
        for (kd, n, shape), c in sorted(grid.items()):
            if kd != kind:
                continue
            i, j = shapes.index(shape), sides.index(n)
            best = min(c["times"], key=c["times"].get)
            win[i][j] = rows.index(best)
            chose = c.get("chose")
            if chose not in c["times"]:
                missing.append(f"{kind} {n}^2 {shape}: auto chose {chose}, which has no time")
                continue
            r = c["times"][chose] / c["times"][best]
            reg[i][j], worst = r, max(worst, r)
            ax_reg.text(j, i, f"{r:.2f}", ha="center", va="center", fontsize=7, color="black" if r < 1.35 else "white")
            ax_win.text(j, i, chose, ha="center", va="center", fontsize=6, color="white")
            lines.append((kind, n, shape, best, c["times"][best], chose, r))
        ax_win.imshow(win, cmap=cmap, vmin=-0.5, vmax=len(rows) - 0.5, origin="lower", aspect="auto")
        ax_reg.imshow(reg, cmap="Reds", vmin=1.0, vmax=1.5, origin="lower", aspect="auto")
        for ax in (ax_win, ax_reg):
            ax.set_xticks(range(len(sides)), [f"{n}²" for n in sides])
            ax.set_yticks(range(len(shapes)), shapes)
            ax.set_xlabel("image (same padding)")
            ax.set_ylabel(f"{kind} filter")
        ax_win.set_title(f"{kind}: fastest row (colour), auto's pick (label)")
        ax_reg.set_title(f"{kind}: auto's regret, chosen / fastest")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS.get(v, "#cccccc")) for v in rows]
    fig.legend(handles, rows, loc="lower center", ncol=len(rows), fontsize=9, frameon=False, bbox_to_anchor=(0.5, -0.02))
    rules = "the rules of " + picks if picks else "auto's picks as run"
    fig.suptitle(f"conv2d on {doc['device']}, run of {doc['date']} ({rules}): max regret {worst:.2f}")
    fig.savefig(args[1], dpi=100, bbox_inches="tight")
    over = [x for x in lines if x[6] > 1.10]
    print(f"wrote {args[1]}; max regret {worst:.3f} over {len(lines)} cells, {len(over)} above 1.10")
    for kind, n, shape, best, ms, chose, r in over:
        print(f"  {kind} {n}^2 {shape}: auto {chose} {r:.2f}x the fastest ({best}, {ms:.4f} ms)")
    if len(args) > 2:
        with open(args[2], "w") as f:
            f.write("| filter | image | shape | fastest | ms | auto chose | regret |\n|---|---|---|---|---|---|---|\n")
            for kind, n, shape, best, ms, chose, r in lines:
                f.write(f"| {kind} | {n}² | {shape} | {best} | {ms:.4f} | {chose} | {r:.2f} |\n")
    for m in missing:
        print("missing:", m)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()

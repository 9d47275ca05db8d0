#!/usr/bin/env python3
"""The cost of the 5 x 5 and 7 x 7 medians by sorted rows (issue 68; scripts/gen_median_rows.py
builds and checks the networks, src/core/rank_median_rows.h holds them): two-input minimum and
maximum operations an output, by part, against a sort of all the window's keys (rank/network's
way, the rank chosen at run time) and against one merge tree with no part shared between outputs.

usage: python3 lab/scripts/median_rows_cost.py"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from gen_median_rows import SIDES, Net, check, window  # noqa: E402


def operations(net, outs, stop=()):
    return sum(1 for w in net.cone(outs, stop=set(stop)) if net.ops[w][0] != "in" and w not in stop)


def main():
    for side in SIDES:
        check(side)
        net, rows, pairs, middle, median = window(side)
        needed = [w for w in middle if w in net.cone([median])]
        sort = Net()
        sort_ops = operations(sort, sort.sort(sort.inputs("k", side)))
        pair_ops = operations(net, pairs[0])
        middle_ops = operations(net, needed, stop=[w for p in pairs for w in p])
        select_ops = operations(net, [median], stop=needed)
        # a step of two outputs: two new rows sorted, one new pair, one middle, two selections
        per_output = (2 * sort_ops + pair_ops + middle_ops + 2 * select_ops) / 2
        whole = Net()
        all_keys = operations(whole, whole.sort(whole.inputs("k", side * side)))
        alone = operations(net, [median]) + side * sort_ops  # every part made for this output alone
        print(f"{side} x {side}: sort {sort_ops}, pair {pair_ops}, middle {middle_ops} ({len(needed)} of "
              f"{len(middle)} keys read), select {select_ops}: {per_output:.1f} an output; one output alone "
              f"{alone}; a sort of all {side * side} keys {all_keys}")


if __name__ == "__main__":
    main()

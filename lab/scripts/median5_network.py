#!/usr/bin/env python3
"""The cost of the 5 x 5 median by sorted rows (issue 68; scripts/gen_median5.py builds and checks
the network, src/core/rank_median5.h holds it): two-input minimum and maximum operations a step
of two outputs, by part, and an output, beside the same median without the shared quad and
beside a sort of all 25 keys (rank/network's way).

usage: python3 lab/scripts/median5_network.py"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from gen_median5 import RANK, SORT5, Net, check  # noqa: E402


def count(net, outs, inside):
    return sum(1 for w in net.cone(outs) if net.ops[w][0] != "in" and w in inside)


def main():
    check()
    net = Net()
    ops = {}
    r = {name: net.inputs(name, 5) for name in "abcdef"}
    for part, make in (("pair", lambda: net.merge(r["b"], r["c"])), ("second pair", lambda: net.merge(r["d"], r["e"]))):
        start = len(net.ops)
        ops[part] = (make(), set(range(start, len(net.ops))))
    start = len(net.ops)
    quad = net.merge(ops["pair"][0], ops["second pair"][0])
    quad_ops = set(range(start, len(net.ops)))
    start = len(net.ops)
    outs = [net.merge(r["a"], quad)[RANK], net.merge(r["f"], quad)[RANK]]
    final_ops = set(range(start, len(net.ops)))
    needed = [quad[i] for i, w in enumerate(quad) if w in net.cone(outs)]
    per_step = {"two row sorts": 2 * 2 * len(SORT5), "a pair merge": count(net, ops["pair"][0], ops["pair"][1]),
                "a quad merge (the keys read)": count(net, needed, quad_ops), "two selections": count(net, outs, final_ops)}
    print(f"checked (scripts/gen_median5.py); the quad's keys the medians read: {len(needed)} of 20")
    for what, n in per_step.items():
        print(f"  {what:30s} {n:4d} two-input operations a step")
    print(f"  {'an output':30s} {sum(per_step.values()) / 2:6.1f}")
    direct = Net()
    rows = [direct.inputs(name, 5) for name in "abcde"]
    median = direct.merge(direct.merge(rows[0], rows[1]), direct.merge(direct.merge(rows[2], rows[3]), rows[4]))[RANK]
    print(f"  without the shared quad: {len(direct.cone([median])) - 25 + 2 * len(SORT5)} an output")
    whole = Net()

    def merge_sort(w):
        return w if len(w) < 2 else whole.merge(merge_sort(w[:len(w) // 2]), merge_sort(w[len(w) // 2:]))
    print(f"  a sort of all 25 keys (rank/network's way): {len(whole.cone(merge_sort(whole.inputs('k', 25)))) - 25}")


if __name__ == "__main__":
    main()

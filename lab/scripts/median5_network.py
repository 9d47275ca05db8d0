#!/usr/bin/env python3
"""The 5 x 5 median by sorted rows (issue 68): a design for a rank/median5x5 row, built from
minimum and maximum operations, pruned to what the median reads, checked by the 0-1 principle,
and its cost an output counted.

A thread walks down a column of outputs as rank/median3x3 does. Each input row's five keys around
the column are sorted once (r_k, a sort of five). Outputs go in pairs: outputs 2m and 2m+1 (window
tops at rows 2m and 2m+1) share Q = rows 2m+1 .. 2m+4 sorted (20 keys, the merge of two pairs
p_{2m+1} = merge(r_{2m+1}, r_{2m+2}) and p_{2m+3}); output 2m is the 13th key of merge(r_{2m}, Q),
output 2m+1 of merge(Q, r_{2m+5}). A step of two outputs sorts two new rows, merges one new pair
(p_{2m+5}: the next step's second pair), one Q and two final selections.

Selection networks of minimum and maximum commute with every monotone map, so a network that
selects the rank of every 0/1 input selects it of every input (the 0-1 principle): each part is
checked on every 0/1 input it can receive (rows sorted: 6^5 inputs for five rows).

usage: python3 lab/scripts/median5_network.py"""
import itertools

import numpy as np


class Net:
    """A network as a list of operations: ("in", name), ("min", a, b), ("max", a, b)."""

    def __init__(self):
        self.ops = []

    def add(self, *op):
        self.ops.append(op)
        return len(self.ops) - 1

    def inputs(self, name, n):
        return [self.add("in", (name, i)) for i in range(n)]

    def exchange(self, a, b):
        return self.add("min", a, b), self.add("max", a, b)

    def merge(self, a, b):
        """Batcher's odd-even merge of two sorted lists of any lengths."""
        if not a or not b:
            return list(a or b)
        if len(a) == 1 and len(b) == 1:
            return list(self.exchange(a[0], b[0]))
        even, odd = self.merge(a[0::2], b[0::2]), self.merge(a[1::2], b[1::2])
        out = [even[0]]
        for i in range(max(len(odd), len(even) - 1)):
            if i < len(odd) and i + 1 < len(even):
                out += self.exchange(odd[i], even[i + 1])
            else:
                out.append(odd[i] if i < len(odd) else even[i + 1])
        return out

    def cone(self, outs):
        """The operations the wires outs read, themselves included."""
        keep, todo = set(), list(outs)
        while todo:
            w = todo.pop()
            if w not in keep:
                keep.add(w)
                if self.ops[w][0] != "in":
                    todo += self.ops[w][1:]
        return keep

    def count(self, outs, inside=None):
        """Two-input operations in the cone of outs (those in `inside` only, where given)."""
        return sum(1 for w in self.cone(outs) if self.ops[w][0] != "in" and (inside is None or w in inside))

    def run(self, outs, values):
        """Evaluate outs on 0/1 inputs given as boolean arrays by input name."""
        val = {}
        for w in sorted(self.cone(outs)):
            op = self.ops[w]
            val[w] = values[op[1]] if op[0] == "in" else \
                (val[op[1]] & val[op[2]]) if op[0] == "min" else (val[op[1]] | val[op[2]])
        return [val[o] for o in outs]


SORT5 = ((0, 1), (3, 4), (2, 4), (2, 3), (0, 3), (0, 2), (1, 4), (1, 3), (1, 2))  # nine exchanges


def sort5(net, keys):
    w = list(keys)
    for i, j in SORT5:
        w[i], w[j] = net.exchange(w[i], w[j])
    return w


def sorted_rows(rows, n=5):
    """Every 0/1 input of `rows` sorted rows of n: {(name, i): bool array}."""
    zeros = np.array(list(itertools.product(range(n + 1), repeat=len(rows))))
    return {(name, i): zeros[:, k] <= i for k, name in enumerate(rows) for i in range(n)}, zeros


def build():
    """The pair step's network: rows a (2m), b..e (2m+1..2m+4), f (2m+5), already sorted."""
    net = Net()
    r = {name: net.inputs(name, 5) for name in "abcdef"}
    start = len(net.ops)
    pair1 = net.merge(r["b"], r["c"])
    pair1_ops = set(range(start, len(net.ops)))
    pair2 = net.merge(r["d"], r["e"])
    start = len(net.ops)
    quad = net.merge(pair1, pair2)
    quad_ops = set(range(start, len(net.ops)))
    start = len(net.ops)
    first = net.merge(r["a"], quad)[12]
    second = net.merge(quad, r["f"])[12]
    final_ops = set(range(start, len(net.ops)))
    return net, r, pair1, pair1_ops, quad, quad_ops, (first, second), final_ops


def check():
    net = Net()
    keys = net.inputs("k", 5)
    out = sort5(net, keys)
    bits = np.array(list(itertools.product((0, 1), repeat=5)), bool)
    got = np.stack(net.run(out, {("k", i): bits[:, i] for i in range(5)}), axis=1)
    assert (got == np.sort(bits, axis=1)).all(), "sort5 does not sort"
    net, r, pair1, pair1_ops, quad, quad_ops, outs, final_ops = build()
    values, zeros = sorted_rows("abcdef")
    first, second = net.run(list(outs), values)
    z_first, z_second = zeros[:, :5].sum(axis=1), zeros[:, 1:].sum(axis=1)
    assert (first == (z_first <= 12)).all(), "the first output is not the median"
    assert (second == (z_second <= 12)).all(), "the second output is not the median"
    # a wrong rank fails: the check can fail
    wrong = net.merge(r["a"], quad)[11]
    assert not (net.run([wrong], values)[0] == (z_first <= 12)).all()
    return net, pair1, pair1_ops, quad, quad_ops, outs, final_ops


def report():
    net, pair1, pair1_ops, quad, quad_ops, outs, final_ops = check()
    quad_needed = [i for i, w in enumerate(quad) if w in net.cone(outs)]
    per_step = {"two row sorts": 2 * 2 * len(SORT5), "a pair merge": net.count(pair1, pair1_ops),
                "a quad merge (its needed keys)": net.count([quad[i] for i in quad_needed], quad_ops),
                "two selections": net.count(list(outs), final_ops)}
    print("checked on every 0/1 input: sort5, both outputs of the pair step, and a wrong rank fails")
    print(f"the quad's keys the selections read: {len(quad_needed)} of 20 ({quad_needed})")
    for what, n in per_step.items():
        print(f"  {what:34s} {n:4d} two-input operations a step")
    total = sum(per_step.values())
    print(f"  {'an output':34s} {total / 2:6.1f} (a step is two outputs)")
    direct = Net()
    rows = [direct.inputs(name, 5) for name in "abcde"]
    m = direct.merge(direct.merge(rows[0], rows[1]), direct.merge(direct.merge(rows[2], rows[3]), rows[4]))[12]
    print(f"  without the shared quad: {direct.count([m]) + 2 * len(SORT5)} an output (sorted rows, one merge tree)")
    whole = Net()
    keys = whole.inputs("k", 25)

    def merge_sort(w):
        return w if len(w) < 2 else whole.merge(merge_sort(w[:len(w) // 2]), merge_sort(w[len(w) // 2:]))
    print(f"  a sort of all 25 keys (rank/network's way, the rank chosen at run time): {whole.count(merge_sort(keys))}")
    return net, quad, quad_needed, outs


if __name__ == "__main__":
    report()

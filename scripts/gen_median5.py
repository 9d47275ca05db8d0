#!/usr/bin/env python3
"""Writes src/core/rank_median5.h: the 5 x 5 median by sorted rows, as minimum and maximum
operations generated from Batcher's odd-even merges, pruned to what the median reads and checked
by the 0-1 principle before anything is written.

The rows that use it walk down a column of outputs. Each input row's five keys around the column
are sorted once (sort5). Outputs go in pairs: outputs y and y + 1 (their windows' top rows y and
y + 1) share the four rows both windows hold, sorted: the quad, merged from two pairs of sorted
rows (pair: rows y + 1 and y + 2, and rows y + 3 and y + 4; the second pair is the next step's
first). Output y is the 13th key of row y with the quad (select), output y + 1 of row y + 5 with
it.

Selection networks of minimum and maximum commute with every monotone map of the keys, so a
network that selects its rank on every input of 0s and 1s selects it on every input (the 0-1
principle). Every input of sorted 0/1 rows is tried (6^6 for the six rows of a step), and a
wrong rank is shown to fail.

usage: python3 scripts/gen_median5.py          write src/core/rank_median5.h
       python3 scripts/gen_median5.py --check  exit 1 where the file differs from what it writes"""
import itertools
import pathlib
import sys

import numpy as np

HEADER = pathlib.Path(__file__).resolve().parent.parent / "src/core/rank_median5.h"
SORT5 = ((0, 1), (3, 4), (2, 4), (2, 3), (0, 3), (0, 2), (1, 4), (1, 3), (1, 2))  # nine exchanges
RANK = 12  # the median of 25, counted from 0


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

    def sort5(self, keys):
        w = list(keys)
        for i, j in SORT5:
            w[i], w[j] = self.exchange(w[i], w[j])
        return w

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

    def cone(self, outs, stop=()):
        """The operations the wires outs read, themselves included, not past the wires in stop."""
        keep, todo = set(), list(outs)
        while todo:
            w = todo.pop()
            if w not in keep:
                keep.add(w)
                if self.ops[w][0] != "in" and w not in stop:
                    todo += self.ops[w][1:]
        return keep

    def run(self, outs, values):
        """outs on 0/1 inputs, given as boolean arrays by input name."""
        val = {}
        for w in sorted(self.cone(outs)):
            op = self.ops[w]
            val[w] = values[op[1]] if op[0] == "in" else \
                (val[op[1]] & val[op[2]]) if op[0] == "min" else (val[op[1]] | val[op[2]])
        return [val[o] for o in outs]


def step():
    """A step's network on six sorted rows a-f (a: row y, f: row y + 5): its parts' wires."""
    net = Net()
    r = {name: net.inputs(name, 5) for name in "abcdef"}
    first, second = net.merge(r["b"], r["c"]), net.merge(r["d"], r["e"])
    quad = net.merge(first, second)
    outs = (net.merge(r["a"], quad)[RANK], net.merge(r["f"], quad)[RANK])
    return net, r, first, second, quad, outs


def check():
    """Raises where sort5 does not sort or a step's outputs are not their windows' medians."""
    net = Net()
    keys = net.inputs("k", 5)
    bits = np.array(list(itertools.product((0, 1), repeat=5)), bool)
    got = np.stack(net.run(net.sort5(keys), {("k", i): bits[:, i] for i in range(5)}), axis=1)
    assert (got == np.sort(bits, axis=1)).all(), "sort5 does not sort"
    net, r, first, second, quad, outs = step()
    zeros = np.array(list(itertools.product(range(6), repeat=6)))  # each row's 0s, then 1s
    values = {(name, i): zeros[:, k] <= i for k, name in enumerate("abcdef") for i in range(5)}
    medians = net.run(list(outs), values)
    for out, rows in zip(medians, (slice(0, 5), slice(1, 6))):
        assert (out == (zeros[:, rows].sum(axis=1) <= RANK)).all(), "a step's output is not its median"
    wrong = net.merge(r["a"], quad)[RANK - 1]
    assert not (net.run([wrong], values)[0] == (zeros[:, :5].sum(axis=1) <= RANK)).all(), "the check cannot fail"


def body(net, params, outs, key):
    """C statements computing outs from the wires in params ({wire: C expression})."""
    lines, names = [], dict(params)
    for w in sorted(net.cone(outs, stop=set(params)) - set(params)):
        kind, a, b = net.ops[w]
        names[w] = f"t{w}"
        lines.append(f"    const {key} t{w} = MH_MEDIAN5_{'LO' if kind == 'min' else 'HI'}({names[a]}, {names[b]});")
    return lines, names


def functions(key="MH_MEDIAN5_KEY"):
    net, r, first, second, quad, outs = step()
    needed = [i for i, w in enumerate(quad) if w in net.cone([outs[0]])]
    pair_needed = [i for i, w in enumerate(first) if w in net.cone([quad[i] for i in needed])]
    assert pair_needed == list(range(10)), "every key of a pair is read"
    text = []
    sort_net = Net()
    k = sort_net.inputs("k", 5)
    w = sort_net.sort5(k)
    lines, names = body(sort_net, {k[i]: f"k[{i}]" for i in range(5)}, w, key)
    text += [f"/* The five keys in k sorted in place. */",
             f"MH_MEDIAN5_FN void mh_median5_sort({key} k[5])", "{", *lines,
             "    " + " ".join(f"k[{i}] = {names[w[i]]};" for i in range(5)), "}", ""]
    lines, names = body(net, {**{r['b'][i]: f"a[{i}]" for i in range(5)}, **{r['c'][i]: f"b[{i}]" for i in range(5)}},
                        first, key)
    text += [f"/* Two sorted rows' ten keys merged, in order. */",
             f"MH_MEDIAN5_FN void mh_median5_pair(const {key} a[5], const {key} b[5], {key} p[10])", "{",
             *lines, *(f"    p[{i}] = {names[first[i]]};" for i in range(10)), "}", ""]
    params = {**{first[i]: f"p[{i}]" for i in range(10)}, **{second[i]: f"q[{i}]" for i in range(10)}}
    lines, names = body(net, params, [quad[i] for i in needed], key)
    text += ["/* Two pairs merged: the keys of the four rows' twenty that a median reads, in order (places",
             f" * {', '.join(map(str, needed))} of the twenty). */",
             f"MH_MEDIAN5_FN void mh_median5_quad(const {key} p[10], const {key} q[10], "
             f"{key} m[{len(needed)}])", "{",
             *lines, *(f"    m[{j}] = {names[quad[i]]};" for j, i in enumerate(needed)), "}", ""]
    params = {**{r["a"][i]: f"r[{i}]" for i in range(5)}, **{quad[i]: f"m[{j}]" for j, i in enumerate(needed)}}
    lines, names = body(net, params, [outs[0]], key)
    text += [f"/* The median of a sorted row's five keys and a quad's twenty. */",
             f"MH_MEDIAN5_FN {key} mh_median5_select(const {key} r[5], const {key} m[{len(needed)}])", "{",
             *lines, f"    return {names[outs[0]]};", "}", ""]
    return text, len(needed)


def header():
    parts, quad_keys = functions()
    return "\n".join([
        "/* Generated by scripts/gen_median5.py: do not edit. The median of a full 5 x 5 window by",
        " * sorted rows, for rows that walk down a column of outputs two at a time: each input row's",
        " * five keys sorted once (sort), two sorted rows merged (pair), two pairs merged into the",
        " * keys of four rows a median reads (quad), and each of the two outputs the median of its own",
        " * fifth row with the quad (select). Minimum and maximum only, checked by the 0-1 principle",
        " * on every input of sorted 0/1 rows. The includer defines MH_MEDIAN5_KEY, the keys' type",
        " * (the CPU's rows 64 bits, the GPU's 32). */",
        "#ifndef MH_RANK_MEDIAN5_H", "#define MH_RANK_MEDIAN5_H", "", "#ifndef MH_MEDIAN5_KEY",
        "#error \"define MH_MEDIAN5_KEY, the keys' type, before including rank_median5.h\"", "#endif", "",
        "#ifdef __CUDACC__", "#define MH_MEDIAN5_FN static __host__ __device__ __forceinline__", "#else",
        "#define MH_MEDIAN5_FN static inline", "#endif",
        "#define MH_MEDIAN5_LO(a, b) ((b) < (a) ? (b) : (a))", "#define MH_MEDIAN5_HI(a, b) ((a) < (b) ? (b) : (a))",
        f"enum {{ MH_MEDIAN5_QUAD = {quad_keys} }}; /* the keys of a quad that a median reads */", "",
        *parts, "#endif", ""])


def main():
    check()
    text = header()
    if sys.argv[1:] == ["--check"]:
        if HEADER.read_text() != text:
            sys.exit(f"gen_median5: {HEADER} differs from what scripts/gen_median5.py writes")
        return
    HEADER.write_text(text)


if __name__ == "__main__":
    main()

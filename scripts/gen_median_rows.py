#!/usr/bin/env python3
"""Writes src/core/rank_median_rows.h: the medians of full 5 x 5 and 7 x 7 windows by sorted rows, and
of full 3 x 3 x 3 windows by sorted planes, as minimum and maximum operations generated from
Batcher's odd-even merges, pruned to what the median reads and checked by the 0-1 principle before
anything is written; and for any rank of a full 3 x 3, 5 x 5 or 7 x 7 window the middle merged in
full (the rows that use it pick the rank's key from it and an output's own row at run time).

The rows that use it walk down a column of outputs, two at a time. Each input row's side keys
around the column are sorted once (sort). Outputs y and y + 1 (their windows' top rows y and
y + 1) share the side - 1 rows both windows hold, merged from pairs of sorted rows (pair: rows
y + 1 and y + 2, y + 3 and y + 4, ...; a step makes one new pair, the others are the last step's)
into the keys of those rows that a median reads (middle); output y is the median of row y with
them (select), output y + 1 of row y + side with them.

Selection networks of minimum and maximum commute with every monotone map of the keys, so a
network that selects its rank on every input of 0s and 1s selects it on every input (the 0-1
principle). sort is tried on every 0/1 input; select(middle(pairs)) on every input of side sorted
0/1 rows ((side + 1)^side: a row's 0s, then its 1s), which covers both outputs (the second is the
same function of its own row); a wrong rank is shown to fail; a full middle is sorted on every
such input.

A 3 x 3 x 3 window is the same walk over planes: a "row" is a plane's nine keys (sort sorts nine),
the outputs of a step share the two planes both windows hold (one pair, so middle merges two sorted
planes, and no pair function is written).

usage: python3 scripts/gen_median_rows.py          write src/core/rank_median_rows.h
       python3 scripts/gen_median_rows.py --check  exit 1 where the file differs from what it writes"""
import itertools
import pathlib
import sys
import textwrap

import numpy as np

HEADER = pathlib.Path(__file__).resolve().parent.parent / "src/core/rank_median_rows.h"
# (the functions' name, the rows a window spans, the keys a row holds): 5 x 5, 7 x 7 and 3 x 3 x 3
WINDOWS = (("5", 5, 5), ("7", 7, 7), ("3x3x3", 3, 9))
# the sides of the squares whose middles are written in full, for any rank
RANKED = (3, 5, 7)


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

    def sort(self, keys):
        """Batcher's merge sort (for 5 and 7 keys as few exchanges as any network: 9 and 16; for 9,
        26, one more than the least known)."""
        if len(keys) < 2:
            return list(keys)
        half = len(keys) // 2
        return self.merge(self.sort(keys[:half]), self.sort(keys[half:]))

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
        """outs on 0/1 inputs, given as packed bit arrays (numpy uint8) by input name."""
        val = {}
        for w in sorted(self.cone(outs)):
            op = self.ops[w]
            val[w] = values[op[1]] if op[0] == "in" else \
                (val[op[1]] & val[op[2]]) if op[0] == "min" else (val[op[1]] | val[op[2]])
        return [val[o] for o in outs]


def window(side, width):
    """The first output's network on side sorted rows of width keys (row 0 its own, rows
    1 .. side - 1 the ones it shares with the next output): the rows, the pairs, the middle and
    the median."""
    net = Net()
    rows = [net.inputs(k, width) for k in range(side)]
    pairs = [net.merge(rows[k], rows[k + 1]) for k in range(1, side, 2)]
    middle = pairs[0]
    for pair in pairs[1:]:
        middle = net.merge(middle, pair)
    median = net.merge(rows[0], middle)[side * width // 2]
    return net, rows, pairs, middle, median


def check(side, width):
    """Raises where sort does not sort or select(middle(pairs)) is not the window's median."""
    net = Net()
    keys = net.inputs("k", width)
    bits = np.array(list(itertools.product((0, 1), repeat=width)), bool)
    got = np.stack([np.unpackbits(w)[:len(bits)].astype(bool) for w in
                    net.run(net.sort(keys), {("k", i): np.packbits(bits[:, i]) for i in range(width)})], axis=1)
    assert (got == np.sort(bits, axis=1)).all(), f"sort of {width} does not sort"
    net, rows, pairs, middle, median = window(side, width)
    zeros = np.array(list(itertools.product(range(width + 1), repeat=side)), np.int8)  # each row's 0s, then 1s
    values = {(k, i): np.packbits(zeros[:, k] <= i) for k in range(side) for i in range(width)}
    want = np.packbits(zeros.sum(axis=1, dtype=np.int32) <= side * width // 2)
    assert (net.run([median], values)[0] == want).all(), f"the median of {side} rows of {width} is not the median"
    wrong = net.merge(rows[0], middle)[side * width // 2 - 1]
    assert (net.run([wrong], values)[0] != want).any(), "the check cannot fail"


def check_full_middle(side):
    """Raises where a full middle is not the side - 1 shared rows' keys in order."""
    net, rows, pairs, middle, _ = window(side, side)
    zeros = np.array(list(itertools.product(range(side + 1), repeat=side - 1)), np.int8)  # rows 1 .. side - 1
    values = {(k + 1, i): np.packbits(zeros[:, k] <= i) for k in range(side - 1) for i in range(side)}
    got = np.stack([np.unpackbits(w)[:len(zeros)] for w in net.run(middle, values)], axis=1)
    ones = side * (side - 1) - zeros.sum(axis=1, dtype=np.int32)  # a row of z zeros holds side - z ones
    want = np.arange(len(middle))[None, :] >= (len(middle) - ones)[:, None]
    assert (got.astype(bool) == want).all(), f"the full middle of {side} x {side} is not in order"


def body(net, params, outs, key):
    """C statements computing outs from the wires in params ({wire: C expression})."""
    lines, names = [], dict(params)
    for w in sorted(net.cone(outs, stop=set(params)) - set(params)):
        kind, a, b = net.ops[w]
        names[w] = f"t{w}"
        lines.append(f"    const {key} t{w} = MH_MEDIAN_{'LO' if kind == 'min' else 'HI'}({names[a]}, {names[b]});")
    return lines, names


def function(comment, signature, lines, tail):
    return [f"/* {comment} */", f"MH_MEDIAN_FN {signature}", "{", *lines, *tail, "}", ""]


def functions(label, side, width, key="MH_MEDIAN_KEY"):
    """The C functions of one window: sort, pair (more than one pair), middle, select."""
    net, rows, pairs, middle, median = window(side, width)
    read = net.cone([median])
    needed = [i for i, w in enumerate(middle) if w in read]
    n, pair_keys, name = len(needed), 2 * width, f"mh_median{label}"
    shape = " x ".join([str(side)] * (3 if width > side else 2))
    unit = "plane" if width > side else "row"
    sort_net = Net()
    k = sort_net.inputs("k", width)
    out = sort_net.sort(k)
    lines, names = body(sort_net, {k[i]: f"k[{i}]" for i in range(width)}, out, key)
    text = function(f"The {width} keys in k sorted in place.", f"void {name}_sort({key} k[{width}])", lines,
                    [f"    k[{i}] = {names[out[i]]};" for i in range(width)])
    places = "\n * ".join(textwrap.wrap(", ".join(map(str, needed)) + ").", 96))
    if len(pairs) == 1:  # the middle straight from the two sorted planes both windows hold
        lines, names = body(net, {**{rows[1][i]: f"a[{i}]" for i in range(width)},
                                  **{rows[2][i]: f"b[{i}]" for i in range(width)}}, [middle[i] for i in needed], key)
        text += function(f"Two sorted {unit}s merged: the {n} of their {len(middle)} keys that a median reads, in "
                         f"order (places\n * {places}",
                         f"void {name}_middle(const {key} a[{width}], const {key} b[{width}], {key} m[{n}])", lines,
                         [f"    m[{j}] = {names[middle[i]]};" for j, i in enumerate(needed)])
    else:
        assert all(w in net.cone([middle[i] for i in needed]) for w in pairs[0]), "every key of a pair is read"
        lines, names = body(net, {**{rows[1][i]: f"a[{i}]" for i in range(width)},
                                  **{rows[2][i]: f"b[{i}]" for i in range(width)}}, pairs[0], key)
        text += function(f"Two sorted rows' {pair_keys} keys merged, in order.",
                         f"void {name}_pair(const {key} a[{width}], const {key} b[{width}], {key} p[{pair_keys}])",
                         lines, [f"    p[{i}] = {names[pairs[0][i]]};" for i in range(pair_keys)])
        letters = "pqu"[:len(pairs)]
        params = {pairs[j][i]: f"{letters[j]}[{i}]" for j in range(len(pairs)) for i in range(pair_keys)}
        lines, names = body(net, params, [middle[i] for i in needed], key)
        count = {2: "Two", 3: "Three"}[len(pairs)]
        text += function(f"{count} pairs merged: the {n} of their {len(middle)} keys that a median reads, in order "
                         f"(places\n * {places}",
                         f"void {name}_middle(" + ", ".join(f"const {key} {c}[{pair_keys}]" for c in letters) +
                         f",\n{' ' * (len(name) + 25)}{key} m[{n}])", lines,
                         [f"    m[{j}] = {names[middle[i]]};" for j, i in enumerate(needed)])
    params = {**{rows[0][i]: f"r[{i}]" for i in range(width)}, **{middle[i]: f"m[{j}]" for j, i in enumerate(needed)}}
    lines, names = body(net, params, [median], key)
    text += function(f"The median of a sorted {unit}'s {width} keys and the {unit}s of a middle ({side - 1} {unit}s: "
                     f"the {n} keys of m).",
                     f"{key} {name}_select(const {key} r[{width}], const {key} m[{n}])", lines,
                     [f"    return {names[median]};"])
    return [f"enum {{ MH_MEDIAN{label.upper()}_MIDDLE = {n} }}; /* the keys of the middle that a {shape} median "
            "reads */", "", *text]


def ranked_functions(side, key="MH_MEDIAN_KEY"):
    """Any rank's C functions of a side x side square: for 3 the sort of a row's three keys and the
    middle from the two shared rows, for 5 and 7 the middle from the pairs (the medians' sort and
    pair, which are whole, serve them)."""
    net, rows, pairs, middle, _ = window(side, side)
    name, n = f"mh_rank{side}", len(middle)
    text = []
    if side == 3:
        sort_net = Net()
        k = sort_net.inputs("k", side)
        out = sort_net.sort(k)
        lines, names = body(sort_net, {k[i]: f"k[{i}]" for i in range(side)}, out, key)
        text += function(f"The {side} keys in k sorted in place.", f"void {name}_sort({key} k[{side}])", lines,
                         [f"    k[{i}] = {names[out[i]]};" for i in range(side)])
        params, sources = {**{rows[1][i]: f"a[{i}]" for i in range(side)},
                           **{rows[2][i]: f"b[{i}]" for i in range(side)}}, ("a", "b")
        width = side
    else:
        letters = "pqu"[:len(pairs)]
        params = {pairs[j][i]: f"{letters[j]}[{i}]" for j in range(len(pairs)) for i in range(2 * side)}
        sources, width = letters, 2 * side
    lines, names = body(net, params, middle, key)
    text += function(f"The {side - 1} rows both outputs of a step hold, all {n} keys in order (any rank of a full "
                     f"{side} x {side} window).",
                     f"void {name}_middle(" + ", ".join(f"const {key} {c}[{width}]" for c in sources) +
                     f", {key} m[{n}])", lines, [f"    m[{i}] = {names[middle[i]]};" for i in range(n)])
    return [f"enum {{ MH_RANK{side}_MIDDLE = {n} }}; /* the keys of a {side} x {side} window's full middle */", "",
            *text]


def header():
    parts = [line for window_ in WINDOWS for line in functions(*window_)]
    parts += [line for side in RANKED for line in ranked_functions(side)]
    return "\n".join([
        "/* Generated by scripts/gen_median_rows.py: do not edit. The medians of full 5 x 5 and 7 x 7",
        " * windows by sorted rows, for rows that walk down a column of outputs two at a time: each",
        " * input row's keys sorted once (sort), two sorted rows merged (pair), the pairs of the rows",
        " * both outputs' windows hold merged into the keys a median reads (middle), and each of the",
        " * two outputs the median of its own last row with them (select); and of full 3 x 3 x 3",
        " * windows the same way over planes of nine keys; for any rank of a full 3 x 3, 5 x 5 or 7 x 7",
        " * window, the middle merged in full. Minimum and maximum only, checked by the 0-1 principle",
        " * on every input of sorted 0/1 rows. The includer defines MH_MEDIAN_KEY, the",
        " * keys' type (the CPU's rows 64 bits, the GPU's 32). */",
        "#ifndef MH_RANK_MEDIAN_ROWS_H", "#define MH_RANK_MEDIAN_ROWS_H", "", "#ifndef MH_MEDIAN_KEY",
        "#error \"define MH_MEDIAN_KEY, the keys' type, before including rank_median_rows.h\"", "#endif", "",
        "#ifdef __CUDACC__", "#define MH_MEDIAN_FN static __host__ __device__ __forceinline__", "#else",
        "#define MH_MEDIAN_FN static inline", "#endif",
        "#define MH_MEDIAN_LO(a, b) ((b) < (a) ? (b) : (a))", "#define MH_MEDIAN_HI(a, b) ((a) < (b) ? (b) : (a))", "",
        *parts, "#endif", ""])


def main():
    for _, side, width in WINDOWS:
        check(side, width)
    for side in RANKED:
        check_full_middle(side)
    text = header()
    if sys.argv[1:] == ["--check"]:
        if HEADER.read_text() != text:
            sys.exit(f"gen_median_rows: {HEADER} differs from what scripts/gen_median_rows.py writes")
        return
    HEADER.write_text(text)


if __name__ == "__main__":
    main()

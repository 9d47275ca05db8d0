#!/usr/bin/env python3
"""Probe for issue 39: a rule a GPU kernel can follow that gives numpy.histogram's counts
exactly for float32 data with uniform bins (numpy 2.x, NEP 50 promotion).

The rule (for float32 x, bins n, range (lo, hi) given as Python floats, or the data's min and
max, themselves float32): edges = numpy.linspace's arithmetic in double for a given range, in
float32 for the data's (rule_edges), then float32; x counts when float32(first) <= x <=
float32(last) (NaN never), in bin i with e[i] <= x < e[i + 1], the last bin also x == e[n]: an
upper-bound search over the float32 edges.
numpy computes an estimate in float32 and corrects it by one edge either way; the check below
says where that equals the search. Prints one line per case and the mismatches.
usage: numpy_histogram_rule.py [SEED]"""
import sys

import numpy as np


def rule_edges(first, last, n, dtype):
    """numpy.linspace(first, last, n + 1) as numpy computes it, written as a C kernel would: in
    `dtype` arithmetic (double for a range given as Python floats, float32 for the data's own
    float32 min and max), step = (last - first) / n, e[i] = i * step + first rounded twice (no
    fused multiply-add), e[n] = last; then float32."""
    first, last = dtype(first), dtype(last)
    if first == last:
        first, last = dtype(first - dtype(0.5)), dtype(last + dtype(0.5))
    step = dtype(dtype(last - first) / dtype(n))
    i = np.arange(n + 1).astype(dtype)
    e = (i * step).astype(dtype)
    e = (e + first).astype(dtype)
    e[-1] = last
    return e.astype(np.float32), first, last


def rule_counts(x, n, rng_=None):
    if rng_ is None:
        e, first, last = rule_edges(x.min(), x.max(), n, np.float32)
    else:
        e, first, last = rule_edges(rng_[0], rng_[1], n, np.float64)
    keep = (x >= np.float32(first)) & (x <= np.float32(last))
    idx = np.searchsorted(e, x[keep], side="right") - 1
    idx = np.clip(idx, 0, n - 1)
    return np.bincount(idx, minlength=n), e, int(x.size - keep.sum())


def cases(rng):
    u = rng.uniform(-1, 1, 200_000).astype(np.float32)
    yield "uniform, range None", u, 10, None
    yield "uniform, 256 bins, (-1, 1)", u, 256, (-1.0, 1.0)
    yield "uniform, 1000 bins, (0.1, 0.7)", u, 1000, (0.1, 0.7)
    yield "uniform, 65536 bins, (-0.3, 0.9)", u, 65536, (-0.3, 0.9)
    e = rule_edges(0.1, 0.7, 1000, np.float64)[0]
    on = np.concatenate([e, np.nextafter(e, np.float32(-2)), np.nextafter(e, np.float32(2))])
    yield "on and beside every edge, 1000 bins", on, 1000, (0.1, 0.7)
    e = rule_edges(-3.3, 7.1, 65536, np.float64)[0]
    on = np.concatenate([e, np.nextafter(e, np.float32(-9)), np.nextafter(e, np.float32(9))])
    yield "on and beside every edge, 65536 bins", on, 65536, (-3.3, 7.1)
    w = (rng.standard_normal(100_000) * 10.0 ** rng.uniform(-30, 30, 100_000)).astype(np.float32)
    yield "wide range, 4096 bins, (-1e20, 1e25)", w, 4096, (-1e20, 1e25)
    c = np.full(1000, 3.25, np.float32)
    yield "constant data, range None (expanded by 0.5)", c, 7, None
    nan = u.copy()
    nan[::7] = np.nan
    yield "NaN every 7th, (-1, 1)", nan, 100, (-1.0, 1.0)
    big = rng.uniform(1e6, 1e6 + 1, 100_000).astype(np.float32)
    yield "narrow range near 1e6 (float32 spacing 0.0625), 10 bins", big, 10, None
    yield "range None, 65536 bins", u, 65536, None


def main():
    rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    bad = 0
    for name, x, n, r in cases(rng):
        want, want_edges = np.histogram(x, bins=n, range=r)
        got, edges, outside = rule_counts(x, n, r)
        same_edges = np.array_equal(edges, want_edges)
        same = np.array_equal(got, want)
        bad += not (same and same_edges)
        diff = np.flatnonzero(got != want)
        print(f"{name:58s} edges {'equal' if same_edges else 'DIFFER'}, counts {'equal' if same else 'DIFFER'}"
              f" (outside {outside}{'' if same else f', first bins differing {diff[:5].tolist()}'})")
    print(f"{bad} case(s) differ (numpy {np.__version__})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

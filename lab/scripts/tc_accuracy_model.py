#!/usr/bin/env python3
"""A numpy model of the tensor-core rows' arithmetic (conv1d/tc and conv2d/tc, issue 16), to
tell which of their error sources matters against regtile's sequential FMAs.

Modelled: the TF32 split (round to nearest on 10 explicit bits, as tf32_split does), the
products (exact, TF32 x TF32 fits a double), and each wgmma's add of 8 products into its
accumulator, either exact then rounded to nearest ("exact") or, as the tensor cores do,
aligned to the largest term with GUARD extra bits, truncated, and the sum truncated to FP32
("trunc"). Partial sums are added to FP32 accumulators with round-to-nearest, as the kernels
do. regtile: one FMA a term in order, rounded to nearest. Not modelled: the hardware's exact
alignment width (GUARD is a guess; H100 figures fall between 0 and 3).

Outputs tc's error over regtile's (max |out - ref|, normwise) on wide data (|values| 2^-20 to
2^20, test_widen) for each scheme.
  lab/scripts/tc_accuracy_model.py [conv1d|conv2d] [--seeds N] [--guard G]
"""
import argparse

import numpy as np


def widen(x):
    return np.copysign(np.exp2(40.0 * np.abs(x) - 20.0), x).astype(np.float32)


def tf32(x):
    """x rounded to TF32, ties away (tf32_round_bits)."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def split(x, parts):
    """parts TF32 values summing to x (3 parts: exactly)."""
    out, rest = [], np.asarray(x, np.float32)
    for _ in range(parts - 1):
        out.append(tf32(rest))
        rest = (rest - out[-1]).astype(np.float32)
    return out + [rest if parts == 3 else tf32(rest)]


def to_f32(x, toward_zero=False):
    f = x.astype(np.float32)
    if toward_zero:
        over = np.abs(f.astype(np.float64)) > np.abs(x)
        f[over] = np.nextafter(f[over], np.float32(0))
    return f.astype(np.float64)


def wgmma_add(acc, terms, mode, guard):
    """acc + the 8 products of one k8 step, as the tensor cores add them (mode trunc) or exactly."""
    if mode == "exact":
        return to_f32(acc + terms.sum(1))
    every = np.concatenate([acc[:, None], terms], 1)
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.abs(every).max(1)))
    quantum = np.exp2(np.where(np.isfinite(e), e, 0) - 23 - guard)[:, None]
    return to_f32((np.trunc(every / quantum) * quantum).sum(1), toward_zero=True)


# The products a slice runs, smallest first (conv2d_tc.cu's a_part, b_part); 2 parts: the last 3.
PRODUCTS = [(2, 0), (0, 2), (1, 1), (1, 0), (0, 1), (0, 0)]


def tc_sum(x, w, parts, slices_a_partial, mode, guard, product_major):
    """sum_t x[:, t] w[:, t] over t in k8 slices, partial sums of slices_a_partial slices."""
    n, k = x.shape
    xs, ws = split(x, parts), split(w, parts)
    products = PRODUCTS[3:] if parts == 2 else PRODUCTS
    out = np.zeros(n)
    for c0 in range(0, k, 8 * slices_a_partial):
        starts = range(c0, min(k, c0 + 8 * slices_a_partial), 8)
        order = [(p, s) for p in products for s in starts] if product_major else [(p, s) for s in starts for p in products]
        part = np.zeros(n)
        for (a, b), s in order:
            part = wgmma_add(part, xs[a][:, s:s + 8].astype(np.float64) * ws[b][:, s:s + 8], mode, guard)
        out = to_f32(out + part)
    return out


def fma_sum(x, w):
    acc = np.zeros(x.shape[0])
    for t in range(x.shape[1]):
        acc = to_f32(acc + x[:, t].astype(np.float64) * w[:, t])
    return acc


def errors(out, ref):
    return np.abs(out - ref).max(), np.sqrt(((out - ref) ** 2).sum() / (ref ** 2).sum())


def conv1d_terms(rng, n, k):
    """Each output's Toeplitz row against its window, as conv1d/tc lays them out: k + 63 rounded
    up to 8 columns, the mask at the output's phase c = 0..63 (zeros elsewhere); and c."""
    kt = (k + 63 + 7) // 8 * 8
    mask = widen(rng.uniform(-1, 1, k).astype(np.float32))
    x = widen(rng.uniform(-1, 1, (n, kt)).astype(np.float32))
    c = rng.integers(0, 64, n)
    j = np.arange(kt)[None, :] - c[:, None]
    w = np.where((j >= 0) & (j < k), mask[np.clip(j, 0, k - 1)], np.float32(0))
    return x, w, c


def conv2d_terms(rng, n, kr, kc):
    """One output's filter rows, each padded to L = kc + 3 rounded up to 8 (S = 4)."""
    ell = (kc + 3 + 7) // 8 * 8
    f = widen(rng.uniform(-1, 1, (kr, kc)).astype(np.float32))
    x = np.zeros((n, kr, ell), np.float32)
    x[:, :, :kc] = widen(rng.uniform(-1, 1, (n, kr, kc)).astype(np.float32))
    w = np.zeros((kr, ell), np.float32)
    w[:, :kc] = f
    return x, np.broadcast_to(w, x.shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("op", nargs="?", default="conv1d", choices=["conv1d", "conv2d"])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--guard", type=int, default=3)
    ap.add_argument("--n", type=int, default=20000)
    args = ap.parse_args()
    for mode in ("exact", "trunc"):
        if args.op == "conv1d":
            for k in (63, 255):
                for chunk in (8, 4, 2, 1):
                    worst = [0.0, 0.0]
                    for seed in range(args.seeds):
                        x, w, c = conv1d_terms(np.random.default_rng(seed), args.n, k)
                        ref = (x.astype(np.float64) * w).sum(1)
                        taps = c[:, None] + np.arange(k)  # the mask's columns, in regtile's order
                        base = errors(fma_sum(np.take_along_axis(x, taps, 1), np.take_along_axis(w, taps, 1)), ref)
                        tc = errors(tc_sum(x, w, 2, chunk, mode, args.guard, False), ref)
                        worst = [max(worst[i], tc[i] / base[i]) for i in range(2)]
                    print(f"conv1d k={k} {mode} chunk {chunk}: tc/regtile worst max {worst[0]:.2f}, normwise {worst[1]:.2f}")
        else:
            for kr, kc in ((3, 3), (5, 5), (7, 13), (11, 11)):
                for parts in (2, 3):
                    worst = [0.0, 0.0]
                    for seed in range(args.seeds):
                        x, w = conv2d_terms(np.random.default_rng(seed), args.n, kr, kc)
                        ref = (x.astype(np.float64) * w).sum((1, 2))
                        base = errors(fma_sum(x[:, :, :kc].reshape(args.n, -1), w[:, :, :kc].reshape(args.n, -1)), ref)
                        out = np.zeros(args.n)
                        for i in range(kr):  # a fresh partial a filter row, every slice in it
                            out = to_f32(out + tc_sum(x[:, i], w[:, i], parts, 8, mode, args.guard, True))
                        tc = errors(out, ref)
                        worst = [max(worst[i], tc[i] / base[i]) for i in range(2)]
                    print(f"conv2d {kr}x{kc} {mode} {parts} parts: tc/regtile worst max {worst[0]:.2f}, normwise {worst[1]:.2f}")


if __name__ == "__main__":
    main()

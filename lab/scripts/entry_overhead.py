#!/usr/bin/env python3
"""What the compiled entry (memhier._entry) costs and saves on CuPy images of 256^2 (issue 64):
each call through the entry and through the Python function it stands for (fn.__wrapped__),
interleaved in one process, host us a call in a loop of back-to-back calls: replayed calls
(correlate, gaussian_filter, gaussian_laplace's image case, conv2d, conv1d, reduce_sum, bincount,
histogram; convolve, whose device weights the library reverses), a call it keys but cannot
replay (an output dtype given as a string on correlate), and a call it does not key (an output
array).

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/entry_overhead.py"""

import cupy
from cupy_timing import per_call_us as _per_call_us
import numpy as np

import memhier
import memhier.ndimage as mnd
from memhier import _fast

N, LOOPS, ROUNDS = 256, 2000, 5


def per_call_us(fn):
    return _per_call_us(fn, LOOPS)


def main():
    x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (N, N)).astype(np.float32))
    w = cupy.asarray(np.random.default_rng(2).uniform(-1, 1, (5, 5)).astype(np.float32))
    out = cupy.empty_like(x)
    line, k5 = x.ravel(), w.ravel()[:5].copy()
    values = cupy.asarray(np.random.default_rng(3).integers(0, 256, N * N).astype(np.int32))
    cases = [("correlate (replayed)", mnd.correlate, (x, w), {}),
             ("gaussian_filter (replayed)", mnd.gaussian_filter, (x, 2.0), {}),
             ("gaussian_laplace image (replayed)", mnd._gaussian_laplace,
              (x, 2.0, None, "reflect", 0.0, 4.0, None, None), {"variant": "auto", "device": None, "context": None}),
             ("conv2d same (replayed)", memhier.conv2d, (x, w), {"pad": "same"}),
             ("conv1d same (replayed)", memhier.conv1d, (line, k5), {"pad": "same"}),
             ("reduce_sum (replayed)", memhier.reduce_sum, (x,), {}),
             ("bincount 256 (replayed)", memhier.bincount, (values, 256), {}),
             ("histogram 256 over (-1, 1) (replayed)", memhier.histogram, (x, 256, (-1.0, 1.0)), {}),
             ("convolve, device weights (replayed)", mnd.convolve, (x, w), {}),
             ("correlate, output='float32' (keyed, not replayed)", mnd.correlate, (x, w), {"output": "float32"}),
             ("correlate, output=array (not keyed)", mnd.correlate, (x, w), {"output": out})]
    print(f"entry loaded: {_fast._entry is not None}; host us a call, {LOOPS} calls, best of {ROUNDS} rounds")
    for name, fn, args, kwargs in cases:
        entry, python = [], []
        for _ in range(ROUNDS):
            entry.append(per_call_us(lambda: fn(*args, **kwargs)))
            python.append(per_call_us(lambda: fn.__wrapped__(*args, **kwargs)))
        print(f"{name:52} entry {min(entry):6.2f}  python {min(python):6.2f}  saved {min(python) - min(entry):6.2f}")
    print(_fast.stats())


if __name__ == "__main__":
    main()

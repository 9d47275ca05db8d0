#!/usr/bin/env python3
"""Where a replayed call's host time goes (issue 64): memhier.ndimage.correlate (5 x 5, device
weights) and memhier.reduce_sum on a CuPy image of 256^2, replayed by the compiled entry, beside
the pieces the replay calls into Python for (the context, the output) and the library call
itself, each timed in a loop on the caller's stream. What the replay spends in its own C (the
key, the addresses) is the call less the pieces.

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/replay_split.py"""
import ctypes

import cupy
from cupy_timing import per_call_us
import numpy as np

import memhier
import memhier.ndimage as mnd
from memhier import _arrays, _call, _convert, _fast, _native
from memhier._context import context_at

N, LOOPS = 256, 20000


def show(name, us):
    print(f"{name:60} {us:7.2f} us", flush=True)


def main():
    x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (N, N)).astype(np.float32))
    w = cupy.asarray(np.random.default_rng(2).uniform(-1, 1, (5, 5)).astype(np.float32))
    y = cupy.empty_like(x)
    total = cupy.empty((), cupy.float32)
    place, f32 = _arrays.Place("cupy", 0), np.dtype(np.float32)
    ctx = context_at(0)
    ctx.set_stream(cupy.cuda.get_current_stream().ptr)
    lib = _native.lib
    conv_args = (ctx.handle, None, ctypes.c_void_p(x.data.ptr), N, N, ctypes.c_void_p(w.data.ptr), 5, 5,
                 _native.MODES["reflect"], 0.0, 0, 0, ctypes.c_void_p(y.data.ptr))
    sum_args = (ctx.handle, None, ctypes.c_void_p(x.data.ptr), N * N, ctypes.c_void_p(total.data.ptr))
    print("entry:", "compiled" if _fast._entry is not None else "absent (the Python path)")
    show("memhier.ndimage.correlate(x, w), replayed", per_call_us(lambda: mnd.correlate(x, w), LOOPS))
    show("memhier.reduce_sum(x), replayed", per_call_us(lambda: memhier.reduce_sum(x), LOOPS))
    show("  mh_conv2d_mode through ctypes (13 arguments converted)", per_call_us(lambda: lib.mh_conv2d_mode(*conv_args),
                                                                               LOOPS))
    show("  mh_reduce_sum through ctypes", per_call_us(lambda: lib.mh_reduce_sum(*sum_args), LOOPS))
    show("  context_in_place(place, None, 'normwise')", per_call_us(lambda: _call.context_in_place(place, None,
                                                                                                   "normwise"), LOOPS))
    show("  ctx.handle.value", per_call_us(lambda: ctx.handle.value, LOOPS))
    show("  empty_like_kind(place, (256, 256), float32)", per_call_us(
        lambda: _convert.empty_like_kind(place, (N, N), f32), LOOPS))
    show("  cupy.empty((256, 256), float32)", per_call_us(lambda: cupy.empty((N, N), f32), LOOPS))
    show("  cupy.empty((), float32)", per_call_us(lambda: cupy.empty((), f32), LOOPS))
    show("  cupy.cuda.get_current_stream(0).ptr", per_call_us(lambda: cupy.cuda.get_current_stream(0).ptr, LOOPS))
    show("  x.data.ptr, x.data.device_id", per_call_us(lambda: (x.data.ptr, x.data.device_id), LOOPS))
    print("entry stats:", _fast.stats())


if __name__ == "__main__":
    main()

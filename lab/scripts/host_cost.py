#!/usr/bin/env python3
"""Where a memhier call's host time goes (issue 64): the CUDA runtime and driver calls the
library makes on every call, one ctypes crossing, the C entry point alone with its arguments
prepared, and the Python functions above it, each timed in a loop on a CuPy image of 256^2
(the GPU work of a 5x5 filter there is ~3 us, so what is timed is the host).

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/host_cost.py"""
import ctypes

import cupy
from cupy_timing import per_call_us as _per_call_us
import numpy as np

import memhier
import memhier.ndimage as mnd
from memhier import _native
from memhier._context import context_at

N = 256
LOOPS = 20000


def per_call_us(fn, loops=LOOPS):
    return _per_call_us(fn, loops)


def show(name, us):
    print(f"{name:58} {us:7.2f} us", flush=True)


def main():
    x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (N, N)).astype(np.float32))
    y = cupy.empty_like(x)
    w5 = np.random.default_rng(2).uniform(-1, 1, (5, 5)).astype(np.float32)
    w = cupy.asarray(w5)
    cudart = _first_library("libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13", "libcudart.so")
    libcuda = ctypes.CDLL("libcuda.so.1")
    dev = ctypes.c_int()
    # struct cudaPointerAttributes is 88 bytes in CUDA 13 (two ints, two pointers, eight reserved
    # longs): a smaller buffer is overrun on every call
    attrs = ctypes.create_string_buffer(256)
    base, size = ctypes.c_ulonglong(), ctypes.c_size_t()
    xp = ctypes.c_void_p(x.data.ptr)
    # cuMemGetAddressRange needs a current context: cupy made one
    show("ctypes crossing (cudaGetDevice)", per_call_us(lambda: cudart.cudaGetDevice(ctypes.byref(dev))))
    show("cudaSetDevice(0) (current already)", per_call_us(lambda: cudart.cudaSetDevice(0)))
    show("cudaPointerGetAttributes", per_call_us(lambda: cudart.cudaPointerGetAttributes(attrs, xp)))
    show("cudaGetLastError", per_call_us(lambda: cudart.cudaGetLastError()))
    show("cuMemGetAddressRange_v2", per_call_us(lambda: libcuda.cuMemGetAddressRange_v2(ctypes.byref(base),
                                                                                       ctypes.byref(size), xp)))
    stream = cupy.cuda.get_current_stream()
    ev = cupy.cuda.Event(disable_timing=True)
    show("cupy Event.record", per_call_us(lambda: ev.record(stream)))
    show("cupy get_current_stream().ptr", per_call_us(lambda: cupy.cuda.get_current_stream().ptr))
    show("cupy.empty((256, 256), float32)", per_call_us(lambda: cupy.empty((N, N), cupy.float32)))
    show("cupy reshape (1, 256, 256)", per_call_us(lambda: x.reshape(1, N, N)))

    ctx = context_at(0)
    lib = _native.lib
    lib_args = (ctx.handle, None, xp, N, N, ctypes.c_void_p(w.data.ptr), 5, 5, _native.MODES["reflect"], 0.0, 0, 0,
                ctypes.c_void_p(y.data.ptr))
    ctx.set_stream(stream.ptr)
    show("mh_context_set_stream (ctypes)", per_call_us(lambda: lib.mh_context_set_stream(ctx.handle, stream.ptr)))
    show("mh_context_set_precision (ctypes)", per_call_us(lambda: lib.mh_context_set_precision(ctx.handle, 0)))
    show("mh_conv2d_mode, arguments prepared (auto)", per_call_us(lambda: lib.mh_conv2d_mode(*lib_args)))
    print("auto runs", memhier.select("conv2d", rows=N, cols=N, krows=5, kcols=5, mode="reflect"))
    for row in (b"conv2d/walk", b"conv2d/regtile", b"conv2d/basic"):
        named = lib_args[:1] + (row,) + lib_args[2:]
        show(f"mh_conv2d_mode, arguments prepared ({row.decode()})", per_call_us(lambda: lib.mh_conv2d_mode(*named)))
    out = cupy.empty((), cupy.float32)
    sum_args = (ctx.handle, None, xp, N * N, ctypes.c_void_p(out.data.ptr))
    show("mh_reduce_sum, arguments prepared (auto)", per_call_us(lambda: lib.mh_reduce_sum(*sum_args)))
    show("memhier.conv2d(x, w, mode='reflect')", per_call_us(lambda: memhier.conv2d(x, w, mode="reflect")))
    show("memhier.ndimage.correlate(x, w) (device weights)", per_call_us(lambda: mnd.correlate(x, w)))
    show("memhier.ndimage.correlate(x, w5) (NumPy weights)", per_call_us(lambda: mnd.correlate(x, w5)))
    show("memhier.ndimage.correlate1d(x, w5[0], axis=0)", per_call_us(lambda: mnd.correlate1d(x, w[0], axis=0)))
    show("memhier.ndimage.gaussian_filter(x, 2)", per_call_us(lambda: mnd.gaussian_filter(x, 2.0), 5000))
    show("memhier.reduce_sum(x)", per_call_us(lambda: memhier.reduce_sum(x)))
    import cupyx.scipy.ndimage as cnd
    show("cupyx.scipy.ndimage.correlate(x, w)", per_call_us(lambda: cnd.correlate(x, w)))
    show("cupyx.scipy.ndimage.gaussian_filter(x, 2)", per_call_us(lambda: cnd.gaussian_filter(x, 2.0), 5000))


def _first_library(*names):
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    raise OSError(f"none of {names} loads")


if __name__ == "__main__":
    main()

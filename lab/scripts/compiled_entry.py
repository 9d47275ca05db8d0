#!/usr/bin/env python3
"""What a compiled entry for kept ndimage.correlate calls would save (issue 64): builds
lab/scripts/compiled_entry.c (a CPython extension, not part of the product), checks that its
call gives memhier.ndimage.correlate's bits, and times in one run, per call:
  ndimage.correlate     the binding's kept path (weights on the image's device: in place)
  compiled entry        the same call through the prototype (one CPython call into C)
  C call (ctypes)       mh_conv2d_mode with every argument prepared once
  empty                 the array library's allocation of the output alone
On a machine with CuPy and a GPU: CuPy images of 256^2 on the GPU; else NumPy images of 8 x 8
on the CPU backend (one thread), where the C call's own work is small.

usage: MEMHIER_LIBRARY=build/libmemhier.so PYTHONPATH=python python3 lab/scripts/compiled_entry.py"""
import ctypes
import importlib.util
import os
import subprocess
import sys
import sysconfig
import tempfile
import time

import numpy as np

import memhier.ndimage as mnd
from memhier import _native
from memhier._context import context_at

LOOPS = 20000


def build():
    """The prototype, compiled into a temporary directory and imported."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(tempfile.mkdtemp(), "_compiled_entry" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"], "-o", out,
                    os.path.join(here, "compiled_entry.c")], check=True)
    spec = importlib.util.spec_from_file_location("_compiled_entry", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_call_us(fn, sync):
    for _ in range(200):
        fn()
    sync()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(LOOPS):
            fn()
        best = min(best, (time.perf_counter() - t0) / LOOPS * 1e6)
        sync()
    return best


def main():
    entry = build()
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        xp, n, kind = cupy, 256, "cupy"
    except Exception:  # no CuPy or no GPU: the CPU backend
        xp, n, kind = np, 8, "numpy"
    rng = np.random.default_rng(1)
    x = xp.asarray(rng.uniform(-1, 1, (n, n)).astype(np.float32))
    w = xp.asarray(rng.uniform(-1, 1, (5, 5)).astype(np.float32))
    lib = _native.lib
    ctx = context_at(0 if kind == "cupy" else _native.CPU)
    address = (lambda a: a.data.ptr) if kind == "cupy" else (lambda a: a.ctypes.data)
    sync = cupy.cuda.get_current_stream().synchronize if kind == "cupy" else (lambda: None)
    fn = ctypes.cast(lib.mh_conv2d_mode, ctypes.c_void_p).value
    set_stream = ctypes.cast(lib.mh_context_set_stream, ctypes.c_void_p).value
    stream_of = cupy.cuda.get_current_stream if kind == "cupy" else None
    kept = entry.kept(fn, set_stream, ctx.handle.value, address(w), 5, 5, _native.MODES["reflect"], 0.0, 0, 0,
                      xp.empty, np.dtype(np.float32), stream_of, kind == "cupy")
    want = mnd.correlate(x, w, mode="reflect")
    got = kept(x)
    assert (got == want).all(), "the prototype's bits differ from ndimage.correlate's"
    y = xp.empty((n, n), np.float32)
    args = (ctx.handle, None, ctypes.c_void_p(address(x)), n, n, ctypes.c_void_p(address(w)), 5, 5,
            _native.MODES["reflect"], 0.0, 0, 0, ctypes.c_void_p(address(y)))
    rows = [("ndimage.correlate", lambda: mnd.correlate(x, w, mode="reflect")),
            ("compiled entry", lambda: kept(x)),
            ("C call (ctypes)", lambda: lib.mh_conv2d_mode(*args)),
            ("empty", lambda: xp.empty((n, n), np.float32))]
    print(f"{kind} images of {n}^2, 5 x 5 weights on the image's device, best of 5 loops of {LOOPS} calls")
    for name, call in rows:
        print(f"{name:22} {per_call_us(call, sync):7.2f} us a call", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""memhier.sum, mean, min, max, argmin, argmax: numpy's reductions over the whole array or one
axis of a C-contiguous array of any real dtype (mh_reduce, include/memhier.h; float16 as a float32
copy, its results rounded back to float16, as numpy's float16 reductions accumulate in float32).
Results as numpy gives them: sums of signed integers and bools in int64 and of unsigned integers
in uint64 (wrapping past 64 bits), means of integers in float64, float64 in float64, min and max
in the array's dtype, the arg forms int64; NaN wins min and max, and the arg forms take the
first NaN, else the first extreme. The float32 sum of a whole array runs on every row (the GPU
ladder); the other reductions on axis, axis-naive and (float32, float64, int32, int64) cub on a
GPU (auto: axis) and on the CPU rows (docs/reduce.md)."""
import builtins

import numpy as np

from . import _arrays
from ._call import Call, int_arg, variant_arg
from ._convert import astype, on_device
from ._native import lib

KINDS = {"sum": 0, "mean": 1, "min": 2, "max": 3, "argmin": 4, "argmax": 5}
# mh_dtype's codes; a bool array is reduced as its bytes (uint8): its sums are counts, its
# extremes 0 or 1, written into numpy's result dtypes (int64, bool) as they are
DTYPE_CODES = {"float32": 0, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "float64": 8,
               "uint32": 9, "uint64": 10, "bool": 2}


def _operand(a):
    op = a if isinstance(a, _arrays.Operand) else _arrays.Operand(a, "a")
    name = str(op.dtype)
    if name == "float16":
        return _arrays.operand(op, "a", name)
    if name not in DTYPE_CODES:
        raise TypeError(f"a: dtype {op.dtype}, memhier reduces float16, float32, float64, bool and 8- to 64-bit integers "
                        f"(convert it first, e.g. a.astype(numpy.float32))")
    return _arrays.operand(op, "a", name)


def _out_dtype(kind, dtype):
    """numpy's result dtype of `kind` over an array of `dtype`."""
    if kind in ("argmin", "argmax"):
        return "int64"
    if dtype in ("float16", "float32", "float64") or kind in ("min", "max"):
        return dtype
    if kind == "mean":
        return "float64"
    return "uint64" if dtype.startswith("uint") else "int64"  # sums; bool's count in int64


def _geometry(shape, axis):
    """(outer, len, inner, the result's shape) for axis (None: the whole array)."""
    if axis is None:
        size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        return 1, size, 1, ()
    if isinstance(axis, tuple):
        raise TypeError(f"axis = {axis}: one axis or None (memhier reduces one axis a call)")
    ndim = len(shape)
    # this module's min, max and sum are numpy's: Python's are builtins.*
    k = int_arg("axis", axis, -builtins.max(ndim, 1), builtins.max(ndim, 1) - 1)
    if ndim == 0:
        raise ValueError(f"axis = {axis}: a 0-d array has no axis")
    k %= ndim
    outer = int(np.prod(shape[:k], dtype=np.int64)) if k else 1
    inner = int(np.prod(shape[k + 1:], dtype=np.int64)) if k + 1 < ndim else 1
    return outer, int(shape[k]), inner, tuple(shape[:k]) + tuple(shape[k + 1:])


def _as_float32(op):
    """A float16 operand as a float32 copy on its device (exact), as numpy's float16 reductions
    accumulate in float32 too."""
    with on_device(op):
        x = astype(op.obj, op.kind, np.float32)
    return _arrays.Operand(x, "a")


def _reduce(kind, a, axis, variant, out, device, context):
    ai = _operand(a)
    if ai.dtype == np.float16:  # numpy's result dtypes: float16 but for the arg forms (int64)
        result = _reduce(kind, _as_float32(ai), axis, variant, None, device, context)
        if kind in ("argmin", "argmax"):
            final = result
        else:
            with on_device(ai):
                final = astype(result, ai.kind, np.float16)
        if out is None:
            return final
        os_ = _arrays.output(out, ai, "out", tuple(getattr(final, "shape", ())), _out_dtype(kind, "float16"))
        with on_device(ai):
            os_.obj[...] = final
        return os_.obj
    dtype = str(ai.dtype)
    outer, length, inner, shape = _geometry(tuple(ai.shape), axis)
    if length == 0 and kind not in ("sum", "mean"):
        raise ValueError(f"zero-size array to reduction operation {kind} which has no identity")
    call = Call([ai], device, context)
    os_ = _arrays.output(out, ai, "out", shape, _out_dtype(kind, dtype))
    if outer * inner:
        call.run(lib.mh_reduce(call.ctx, variant_arg(variant), call.ptr(ai) if ai.size else None, DTYPE_CODES[dtype],
                               outer, length, inner, KINDS[kind], call.out_ptr(os_)))
    return os_.obj[()] if ai.kind == "numpy" and out is None and shape == () else os_.obj


def sum(a, axis=None, variant="auto", out=None, device=None, context=None):  # noqa: A001 - numpy's name
    """numpy.sum(a, axis): float32 in float32 (summed in double, rounded once), float64 in float64,
    signed integers and bools in int64, unsigned integers in uint64."""
    return _reduce("sum", a, axis, variant, out, device, context)


def mean(a, axis=None, variant="auto", out=None, device=None, context=None):
    """numpy.mean(a, axis): float32 in float32 (the double sum over the count), float64, bools and
    integers in float64."""
    return _reduce("mean", a, axis, variant, out, device, context)


def min(a, axis=None, variant="auto", out=None, device=None, context=None):  # noqa: A001
    """numpy.min(a, axis): NaN where the reduced values hold one."""
    return _reduce("min", a, axis, variant, out, device, context)


def max(a, axis=None, variant="auto", out=None, device=None, context=None):  # noqa: A001
    """numpy.max(a, axis): NaN where the reduced values hold one."""
    return _reduce("max", a, axis, variant, out, device, context)


def argmin(a, axis=None, variant="auto", out=None, device=None, context=None):
    """numpy.argmin(a, axis), int64: the first NaN's index, else the first minimum's (the index
    into the flattened array for axis=None)."""
    return _reduce("argmin", a, axis, variant, out, device, context)


def argmax(a, axis=None, variant="auto", out=None, device=None, context=None):
    """numpy.argmax(a, axis), int64: the first NaN's index, else the first maximum's."""
    return _reduce("argmax", a, axis, variant, out, device, context)

"""memhier.sum, mean, min, max, argmin, argmax: numpy's reductions over the whole array or one
axis of a C-contiguous float32, float64, int32 or int64 array (mh_reduce, include/memhier.h).
Results as numpy gives them: sums of integers in int64 (wrapping past 2^63), means of integers in
float64, float64 in float64, the arg forms int64; NaN wins min and max, and the arg forms take the
first NaN, else the first extreme. The float32 sum of a
whole array runs on every row (the GPU ladder); the other reductions on axis, axis-naive and cub
on a GPU (auto: axis) and on the CPU rows (docs/reduce.md)."""
import builtins

import numpy as np

from . import _arrays
from ._call import Call, int_arg, variant_arg
from ._native import lib

KINDS = {"sum": 0, "mean": 1, "min": 2, "max": 3, "argmin": 4, "argmax": 5}
DTYPE_CODES = {"float32": 0, "int32": 6, "int64": 7, "float64": 8}  # MH_F32, MH_I32, MH_I64, MH_F64


def _operand(a):
    op = _arrays.Operand(a, "a")
    name = str(op.dtype)
    if name not in DTYPE_CODES:
        raise TypeError(f"a: dtype {op.dtype}, memhier reduces float32, float64, int32 or int64 (convert it "
                        f"first, e.g. a.astype(numpy.int64))")
    return _arrays.operand(op, "a", name)


def _out_dtype(kind, dtype):
    if kind in ("argmin", "argmax"):
        return "int64"
    if dtype in ("int32", "int64"):
        return {"sum": "int64", "mean": "float64"}.get(kind, dtype)
    return dtype


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


def _reduce(kind, a, axis, variant, out, device, context):
    ai = _operand(a)
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
    int32 and int64 in int64."""
    return _reduce("sum", a, axis, variant, out, device, context)


def mean(a, axis=None, variant="auto", out=None, device=None, context=None):
    """numpy.mean(a, axis): float32 in float32 (the double sum over the count), float64, int32 and
    int64 in float64."""
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

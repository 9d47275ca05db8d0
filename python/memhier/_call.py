"""Where a call runs and on which stream.

- CuPy arrays and PyTorch CUDA tensors: on their device, in place, on the caller's current
  stream (CuPy's, or torch.cuda.current_stream()); the call returns once the work is queued,
  like the frameworks' own operations.
- NumPy arrays: on the CPU backend; or, with device=N (or a GPU context), copied to that GPU
  into buffers of memhier's pool on the device (mh_alloc_async: no cudaMalloc, and no
  cudaFree's wait for the device), run there and copied back (three explicit steps a call: in,
  out, and a synchronize).
- precision: the accuracy contract auto keeps for the call ('normwise' or 'per-element'), set on
  the context before it."""
import ctypes
import math

import numpy as np

from . import _native
from ._arrays import current_stream
from ._context import Context, context_at, _device_index
from ._native import lib, check


DEFAULT_PRECISION = "normwise"  # a call's contract where its function takes none (the library's default)


class Call:
    """One library call: call.ctx is the context, call.ptr(op) the address the library gets
    for an operand (a staging buffer for a NumPy array run on a GPU), call.run(status) checks
    the status and finishes the call (copies back, frees)."""

    def __init__(self, operands, device=None, context=None, precision=DEFAULT_PRECISION):
        first = operands[0]
        self._staged = {}
        self._buffers = []
        if context is not None and not isinstance(context, Context):
            raise TypeError(f"context: expected a memhier.Context, got {type(context).__name__}")
        if first.on_gpu:
            self.context = self._gpu_context(first, device, context)
            self.context.set_stream(current_stream(first))
        else:
            where = context.device if context is not None else _device_index(device)
            if device is not None and context is not None and _device_index(device) != context.device:
                raise ValueError(f"device = {device!r} but context is on {context!r}")
            self.context = context if context is not None else context_at(where)
            if not self.context.is_cpu:
                self.context.set_stream(0)
        self.context.set_precision(precision)
        self.ctx = self.context.handle

    @staticmethod
    def _gpu_context(first, device, context):
        if device is not None and _device_index(device) != first.device:
            raise ValueError(f"device = {device!r}, but {first.name} lives on cuda:{first.device}")
        if context is not None and context.device != first.device:
            raise ValueError(f"context is on {'cpu' if context.is_cpu else f'cuda:{context.device}'}, "
                             f"but {first.name} lives on cuda:{first.device}")
        return context if context is not None else context_at(first.device)

    def ptr(self, op, upload=True):
        if op.device == self.context.device:  # in place: the library takes the address as it is
            return op.ptr
        if op.name not in self._staged:
            nbytes = max(op.obj.nbytes, 1)
            buf = ctypes.c_void_p()
            check(lib.mh_alloc_async(self.ctx, nbytes, ctypes.byref(buf)), self.ctx)
            self._buffers.append(buf)
            if upload and op.obj.nbytes:
                check(lib.mh_upload(self.ctx, buf, ctypes.c_void_p(op.ptr), op.obj.nbytes), self.ctx)
            self._staged[op.name] = (op, buf, upload)
        return self._staged[op.name][1]

    def out_ptr(self, op):
        """An output's address; None for an output not asked for (the library's NULL)."""
        return None if op is None else self.ptr(op, upload=False)

    def run(self, status):
        """Checks a call's status; for staged NumPy outputs waits and copies them back. The
        staging buffers go back to memhier's pool either way, in the stream's order (after
        the call's work: no wait for the device)."""
        try:
            check(status, self.ctx)
            staged_outputs = [(op, buf) for op, buf, uploaded in self._staged.values() if not uploaded]
            if staged_outputs:
                check(lib.mh_context_synchronize(self.ctx), self.ctx)
            for op, buf in staged_outputs:
                check(lib.mh_download(self.ctx, ctypes.c_void_p(op.ptr), buf, op.obj.nbytes), self.ctx)
        finally:
            self._release()

    def _release(self):
        for buf in self._buffers:
            lib.mh_free_async(self.ctx, buf)
        self._buffers = []

    def __del__(self):
        """A call given up before run (a later operand refused, or its staging failed) gives back
        the buffers staged so far."""
        self._release()


def in_place(op, device, context):
    """Whether a call on op runs where op lives with nothing staged: no device asked for, and no
    context or a Context on op's device (anything else goes through Call, which refuses it by
    name)."""
    return device is None and (context is None or (isinstance(context, Context) and context.device == op.device))


def context_in_place(op, context=None, precision=DEFAULT_PRECISION):
    """The context of a call on op's own device (in_place): `context`, or the calling thread's for
    op's device, on the caller's current stream where op is on a GPU, with the call's precision;
    what Call sets up for such a call, less the checks."""
    ctx = context if context is not None else context_at(op.device)
    if op.device != _native.CPU:
        ctx.set_stream(current_stream(op))
    ctx.set_precision(precision)
    return ctx


C_INT_MIN, C_INT_MAX, SIZE_MAX = -2**31, 2**31 - 1, 2**64 - 1


def int_arg(name, value, lo=C_INT_MIN, hi=C_INT_MAX):
    """value as a Python int, checked at full width before ctypes narrows it: refused, naming
    the argument and the value, unless it is an integer (not a bool) in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an int, got {value!r}")
    v = int(value)
    if not lo <= v <= hi:
        raise _native.InvalidArgument("invalid argument", f"{name} = {v}: out of range, expected {lo} .. {hi}")
    return v


def size_arg(name, value):
    """A size (a C size_t): an int from 0 to 2^64 - 1."""
    return int_arg(name, value, 0, SIZE_MAX)


def variant_arg(variant):
    if variant is None or variant == "auto":
        return None
    if not isinstance(variant, str):
        raise TypeError(f"variant: expected a name such as 'auto' or 'conv1d/regtile', got {variant!r}")
    if "\0" in variant:
        raise ValueError(f"variant: {variant!r} holds a NUL character")
    return variant.encode()


class ScipyArgumentError(ValueError, RuntimeError):
    """An argument scipy.ndimage refuses with a RuntimeError (a per-axis sequence of the wrong
    length, weights of another rank than the filtered axes, a sequence of modes where one mode is
    taken): a ValueError, as memhier's other argument errors are, and scipy's RuntimeError."""


def mode_arg(mode):
    """scipy.ndimage's boundary mode (or one of its aliases) as the library's code."""
    if isinstance(mode, (list, tuple)):
        raise ScipyArgumentError(f"mode: {mode!r}; this filter takes one mode for every axis (scipy: a sequence "
                                 f"of modes is not supported by non-separable filters)")
    if not isinstance(mode, str) or mode not in _native.MODES:
        raise ValueError(f"mode: {mode!r} is not one of {', '.join(repr(m) for m in _native.MODES)}")
    return _native.MODES[mode]


FLT_MAX = float(np.finfo(np.float32).max)


def cval_arg(cval, in_float64=False):
    """A constant as a float: for a call computed in float32 a finite value past float32's range is
    refused (it would turn into +-inf on its way to the library); inf and nan are taken, as scipy
    takes them. in_float64: the call computes in float64, which holds any float."""
    if isinstance(cval, bool) or not isinstance(cval, (int, float, np.integer, np.floating)):
        raise TypeError(f"cval: expected a number, got {cval!r}")
    value = float(cval)
    if not in_float64 and math.isfinite(value) and abs(value) > FLT_MAX:
        raise ValueError(f"cval = {cval!r}: past float32's range (+-{FLT_MAX:.7g}); the filters compute in float32")
    return value


def axis_arg(axis, ndim):
    """An axis of an ndim-D array as a non-negative int (scipy's errors: TypeError for a value
    that is no integer, ValueError for one out of range)."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis: {axis!r} cannot be interpreted as an integer")
    if not -ndim <= int(axis) < ndim:
        raise ValueError(f"axis: {axis!r} is out of range: a {ndim}-D input has axes 0 .. {ndim - 1} "
                         f"(or -{ndim} .. -1)")
    return int(axis) % ndim


def filtered_axes(axes, ndim):
    """scipy's `axes` of the separable filters: every axis when None, else distinct axes."""
    if axes is None:
        return list(range(ndim))
    if isinstance(axes, np.ndarray):
        axes = axes.tolist()
    ax = [axis_arg(a, ndim) for a in (axes if isinstance(axes, (list, tuple)) else (axes,))]
    if len(set(ax)) != len(ax):
        raise ValueError(f"axes: {axes!r} names an axis twice (axes must be unique)")
    return ax


def origin_list(origin, n):
    """scipy's origin: one int for every filtered axis, or a sequence of n ints."""
    origins = list(origin) if isinstance(origin, (list, tuple, np.ndarray)) else [origin] * n
    if len(origins) != n:
        raise ScipyArgumentError(f"origin: {origin!r}; a {n}-D filter takes one origin or {n} (scipy: sequence "
                                 f"argument must have length equal to input rank)")
    for o in origins:
        if isinstance(o, bool) or not isinstance(o, (int, np.integer)):
            raise TypeError(f"origin: expected ints, got {o!r}")
    return [int(o) for o in origins]


def pad_arg(pad):
    if not isinstance(pad, str) or pad not in _native.PADS:
        raise ValueError(f"pad: expected 'valid', 'same' or 'full', got {pad!r}")
    return _native.PADS[pad]

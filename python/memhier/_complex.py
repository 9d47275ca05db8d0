"""Complex data through memhier.ndimage's real filters, as scipy.ndimage takes it: a filter is
linear, so a complex input or complex weights filter as real filters of their parts,
    (a + ib) * (c + id) = (a * c - b * d) + i (a * d + b * c),
each part a real call (per-element accurate as any), combined in the output's dtype. A correlation
conjugates its complex weights, as numpy.correlate and scipy do; a convolution does not. A complex
cval gives its real part to the real parts and its imaginary part to the imaginary ones. NumPy
and CuPy arrays: complex64 as float32 parts, complex128 as float64 parts (computed in float64
where the real filter computes float64)."""
import functools
import inspect
import warnings

import numpy as np

from . import _arrays
from ._convert import empty_like_kind
from ._native import Unsupported

TAKEN = {np.dtype(np.complex64), np.dtype(np.complex128)}  # parts float32 and float64


def _is_complex(a):
    dtype = getattr(a, "dtype", None)
    return getattr(dtype, "kind", None) == "c"


def by_parts(weights_at=None, conjugate=False):
    """Wraps a filter whose argument 0 is `input` (and `weights_at` its weights): where either is
    complex, the filter runs on their real parts (_complex_call); real data pass straight
    through."""
    def wrap(fn):
        signature = inspect.signature(fn)
        rest = [n for n, p in signature.parameters.items() if p.kind is inspect.Parameter.VAR_KEYWORD]

        @functools.wraps(fn)
        def call(*args, **kwargs):
            x = args[0] if args else kwargs.get("input")
            w = None
            if weights_at is not None:
                w = args[weights_at] if len(args) > weights_at else kwargs.get("weights")
            if not (_is_complex(x) or _is_complex(w)):
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            for name in rest:  # **kwargs passed on as keywords
                arguments.update(arguments.pop(name))
            return _complex_call(fn, arguments, weights_at is not None, conjugate)
        return call
    return wrap


def _complex_output(output, x, dtype):
    """scipy's complex output: a new array of `dtype` (output None, or a real dtype promoted with
    a warning), or the caller's complex array."""
    if output is None:
        return empty_like_kind(x, tuple(x.shape), dtype)
    if isinstance(output, str):
        if np.dtype(output).kind != "c":
            raise RuntimeError(f"output: {output!r}; a complex input or weights need a complex output")
        return empty_like_kind(x, tuple(x.shape), np.dtype(output))
    if isinstance(output, (type, np.dtype)):
        named = np.dtype(output)
        if named.kind != "c":
            # scipy's words, which callers match
            warnings.warn(f"output: {named}; promoting specified output dtype to complex", stacklevel=4)
            named = np.promote_types(named, np.complex64)
        return empty_like_kind(x, tuple(x.shape), named)
    if not _is_complex(output):
        raise RuntimeError(f"output: dtype {output.dtype}; a complex input or weights need a complex output")
    return output


def _check_taken(dtype, name):
    if np.dtype(dtype) not in TAKEN:
        raise Unsupported("unsupported", f"{name}: dtype {np.dtype(dtype)}; memhier.ndimage computes complex "
                          "data as float32 parts (complex64) or float64 parts (complex128)")


def _complex_call(fn, arguments, has_weights, conjugate):
    x, output, cval = arguments["input"], arguments["output"], arguments.get("cval", 0.0)
    weights = arguments.get("weights") if has_weights else None
    op = _arrays.Operand(x, "input")
    if op.kind not in ("numpy", "cupy"):
        raise Unsupported("unsupported", f"input: a {op.kind} array with complex data or weights; memhier.ndimage "
                          "takes complex data with NumPy and CuPy arrays")
    complex_input, complex_weights = op.dtype.kind == "c", _is_complex(weights)
    if np.iscomplexobj(cval) and not complex_input:
        raise ValueError(f"cval: {cval!r}; a complex cval needs a complex input")
    if complex_input:
        _check_taken(op.dtype, "input")
    out = _complex_output(output, op, np.promote_types(op.dtype, np.complex64))
    _check_taken(out.dtype, "output")
    if complex_weights:
        weights = weights.conj() if conjugate else weights

    def run(data, w, dst, c):
        args = dict(arguments, input=data, output=dst, cval=c)
        if has_weights:
            args["weights"] = w
        return fn(**args)

    cr, ci = float(np.real(cval)), float(np.imag(cval))
    if complex_input and complex_weights:
        run(x.real, weights.real, out.real, cr)
        out.real -= run(x.imag, weights.imag, None, ci)
        run(x.real, weights.imag, out.imag, cr)
        out.imag += run(x.imag, weights.real, None, ci)
    elif complex_input:
        run(x.real, weights, out.real, cr)
        run(x.imag, weights, out.imag, ci)
    else:
        run(x, weights.real, out.real, cval)
        run(x, weights.imag, out.imag, cval)
    return out

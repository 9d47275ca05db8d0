"""Arrays of other libraries for memhier.ndimage: anything with __cuda_array_interface__ (Numba,
a CuPy-compatible producer) or DLPack (JAX, PyTorch CPU tensors, NumPy-compatible producers) is
viewed, without a copy, as a CuPy array (device memory) or a NumPy array (host memory), filtered
as one, and the result handed back through the producer's library where it has from_dlpack
(jax.numpy, torch) or as_cuda_array (numba.cuda); else as the CuPy or NumPy array. An `output`
of such a kind is written in place through its view."""
import functools
import importlib
import inspect

import numpy as np

from . import _arrays

KDL_CPU, KDL_CUDA = 1, 2


def _native_kind(obj):
    """The kinds memhier takes as they are: NumPy arrays, CuPy arrays, PyTorch CUDA tensors."""
    if isinstance(obj, np.ndarray):
        return True
    module = type(obj).__module__.split(".")[0]
    if module == "cupy":
        return True
    return module == "torch" and getattr(getattr(obj, "device", None), "type", None) == "cuda"


def _cupy(name):
    cupy = _arrays._cupy()
    if cupy is None:
        try:
            import cupy
        except ImportError:
            raise TypeError(f"{name}: an array in GPU memory of a library memhier reads through CuPy; install "
                            "CuPy, or pass a CuPy array or a PyTorch CUDA tensor") from None
    return cupy


def view(obj, name):
    """(the array memhier filters, a function handing a result back as obj's kind), or None where
    obj is not a foreign array (memhier's own kinds, or something it will refuse by name)."""
    if obj is None or isinstance(obj, (type, np.dtype, str)) or _native_kind(obj):
        return None
    module = type(obj).__module__.split(".")[0]
    if hasattr(obj, "__cuda_array_interface__") and not hasattr(obj, "__dlpack_device__"):
        return _cupy(name).asarray(obj), _hand_back(module)
    if not hasattr(obj, "__dlpack__") or not hasattr(obj, "__dlpack_device__"):
        return None
    device_type = int(obj.__dlpack_device__()[0])
    if device_type == KDL_CPU:
        return np.from_dlpack(obj), _hand_back(module)
    if device_type == KDL_CUDA:
        return _cupy(name).from_dlpack(obj), _hand_back(module)
    raise TypeError(f"{name}: a DLPack array on device type {device_type}; memhier reads host memory (1) and CUDA "
                    "memory (2)")


def _hand_back(module):
    """How a result (NumPy or CuPy) goes back to the producer's library, without a copy."""
    try:
        lib = importlib.import_module(module)
    except ImportError:
        return lambda result: result
    if module == "jax":
        return lambda result: importlib.import_module("jax.numpy").from_dlpack(result)
    if module == "numba":
        return lambda result: importlib.import_module("numba.cuda").as_cuda_array(result)
    if hasattr(lib, "from_dlpack"):
        return lambda result: lib.from_dlpack(result)
    return lambda result: result


def accepts_foreign_arrays(fn):
    """Wraps one of memhier.ndimage's functions: a foreign `input` or `output` is viewed as a NumPy
    or CuPy array; the result comes back as the input's kind (the caller's own `output` object when
    one was given). memhier's own kinds pass straight through (a type test or two a call)."""
    signature = inspect.signature(fn)
    out_at = list(signature.parameters).index("output")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        first = args[0] if args else kwargs.get("input")
        out = args[out_at] if len(args) > out_at else kwargs.get("output")
        if _native_kind(first) and (out is None or isinstance(out, (type, np.dtype, str)) or _native_kind(out)):
            return fn(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        seen_in, seen_out = view(first, "input"), view(out, "output")
        if seen_in is not None:
            bound.arguments["input"] = seen_in[0]
        if seen_out is not None:
            bound.arguments["output"] = seen_out[0]
        result = fn(*bound.args, **bound.kwargs)
        if seen_out is not None:
            return out
        return seen_in[1](result) if seen_in is not None else result
    return wrapper

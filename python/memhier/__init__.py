"""memhier: GPU kernels that climb the CUDA memory hierarchy (conv1d, conv2d, transpose,
matmul, reduce, histogram), each a ladder of variants behind one registry, from Python.

NumPy arrays run on the CPU backend (or on a GPU with device=N, copied there and back);
CuPy arrays and PyTorch CUDA tensors are used in place on the caller's current stream, and the
result is the same kind of array on the same device. Errors raise memhier.Error subclasses
whose message names the argument and value. docs/python.md has the rules.

`import memhier` loads the C library and nothing else: the ops and the registry (and NumPy,
which they use) are imported on their first use, so that a program that imports memhier and
never calls it pays ~20 ms, not NumPy's import."""
import importlib

from ._native import (Error, InvalidArgument, Unsupported, NoDevice, OutOfMemory, CudaError, VendorError,
                      InternalError)
from ._context import Context

__version__ = "0.1.0"

# name -> the module that defines it, imported on first use (PEP 562)
_LAZY = {**{name: "._ops" for name in ("conv1d", "conv2d", "transpose", "matmul", "reduce_sum", "bincount",
                                       "histogram_bytes")},
         "histogram": "._histogram",
         **{name: "._reduce" for name in ("sum", "mean", "min", "max", "argmin", "argmax")},
         **{name: "._registry" for name in ("Variant", "variants", "select", "info")}}

__all__ = ["Error", "InvalidArgument", "Unsupported", "NoDevice", "OutOfMemory", "CudaError", "VendorError",
           "InternalError", "Context", "ndimage", *_LAZY]


def __getattr__(name):
    if name == "ndimage":  # the submodule, also loaded on first use
        value = importlib.import_module(".ndimage", __name__)
        globals()[name] = value
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memhier' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"ndimage"})

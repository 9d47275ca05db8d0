"""memhier: GPU kernels that climb the CUDA memory hierarchy (conv1d, conv2d, transpose,
matmul, reduce, histogram), each a ladder of variants behind one registry, from Python.

NumPy arrays run on the CPU backend (or on a GPU with device=N, copied there and back);
CuPy arrays and PyTorch CUDA tensors are used in place on the caller's current stream, and the
result is the same kind of array on the same device. Errors raise memhier.Error subclasses
whose message names the argument and value. docs/python.md has the rules."""
from ._native import (Error, InvalidArgument, Unsupported, NoDevice, OutOfMemory, CudaError, VendorError,
                      InternalError)
from ._context import Context
from ._ops import conv1d, conv2d, transpose, matmul, reduce_sum, histogram, histogram_bytes
from ._registry import Variant, variants, select, info

__version__ = "0.1.0"
__all__ = ["Error", "InvalidArgument", "Unsupported", "NoDevice", "OutOfMemory", "CudaError", "VendorError",
           "InternalError", "Context", "conv1d", "conv2d", "transpose", "matmul", "reduce_sum", "histogram",
           "histogram_bytes", "Variant", "variants", "select", "info"]

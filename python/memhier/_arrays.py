"""Arrays in and out: NumPy arrays (host memory), CuPy arrays and PyTorch CUDA tensors (device
memory, used in place). Each argument is checked for its kind, dtype, shape and layout, and
refused with a TypeError or ValueError that names it; nothing is converted or copied behind
the caller's back."""
import sys

import numpy as np

from . import _native


def _torch():
    return sys.modules.get("torch")


def _cupy():
    return sys.modules.get("cupy")


class Operand:
    """One array argument: its kind ('numpy', 'cupy' or 'torch'), the address of its first
    element, shape, NumPy dtype and device (_native.CPU for host memory)."""

    def __init__(self, obj, name):
        self.obj, self.name = obj, name
        torch, cupy = _torch(), _cupy()
        if isinstance(obj, np.ndarray):
            self.kind, self.device, self.ptr = "numpy", _native.CPU, obj.ctypes.data
            self.shape, self.dtype, self.contiguous = obj.shape, obj.dtype, obj.flags.c_contiguous
        elif cupy is not None and isinstance(obj, cupy.ndarray):
            self.kind, self.device, self.ptr = "cupy", obj.device.id, obj.data.ptr
            self.shape, self.dtype, self.contiguous = obj.shape, obj.dtype, obj.flags.c_contiguous
        elif torch is not None and isinstance(obj, torch.Tensor):
            if obj.device.type != "cuda":
                raise TypeError(f"{name}: a torch.Tensor on {obj.device}; memhier takes PyTorch CUDA tensors "
                                f"(for the CPU, pass {name}.numpy())")
            self.kind, self.device, self.ptr = "torch", obj.device.index, obj.data_ptr()
            self.shape, self.contiguous = tuple(obj.shape), obj.is_contiguous()
            self.dtype = _torch_dtype(obj)
        else:
            raise TypeError(f"{name}: expected a numpy.ndarray, cupy.ndarray or torch CUDA tensor, "
                            f"got {type(obj).__module__}.{type(obj).__name__}")

    @property
    def on_gpu(self):
        return self.device != _native.CPU

    def describe(self):
        where = "host" if not self.on_gpu else f"cuda:{self.device}"
        return f"{self.kind} array of shape {self.shape} and dtype {self.dtype} on {where}"


def _torch_dtype(t):
    """A tensor's dtype as NumPy names it; bfloat16 and others NumPy lacks stay torch's."""
    name = str(t.dtype).split(".")[-1]
    try:
        return np.dtype(name)
    except TypeError:
        return t.dtype


def operand(obj, name, dtype, ndims):
    """obj as an Operand, refused unless its dtype is `dtype`, its number of dimensions one of
    `ndims` and it is C-contiguous."""
    op = Operand(obj, name)
    if op.dtype != np.dtype(dtype):
        raise TypeError(f"{name}: dtype {op.dtype}, memhier needs {np.dtype(dtype)} here (convert it first, "
                        f"e.g. {name}.astype({np.dtype(dtype).name}))")
    if len(op.shape) not in ndims:
        want = " or ".join(f"{d}-D" for d in ndims)
        raise ValueError(f"{name}: {len(op.shape)}-D array of shape {op.shape}, expected {want}")
    if not op.contiguous:
        raise ValueError(f"{name}: not C-contiguous (a strided view); pass a contiguous copy "
                         f"(numpy.ascontiguousarray, cupy.ascontiguousarray or .contiguous())")
    return op


def same_place(first, *others):
    """Refuses operands of different kinds or devices: a call runs in one place."""
    for o in others:
        if o.kind != first.kind or o.device != first.device:
            raise TypeError(f"{o.name} is a {o.describe()} but {first.name} is a {first.describe()}: "
                            f"give every array of a call as the same kind, on the same device")


def empty(like, shape, dtype):
    """A new C-contiguous array of `like`'s kind on its device."""
    if like.kind == "numpy":
        return np.empty(shape, dtype)
    if like.kind == "cupy":
        cupy = _cupy()
        with cupy.cuda.Device(like.device):
            return cupy.empty(shape, dtype)
    torch = _torch()
    return torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name), device=f"cuda:{like.device}")


def output(out, like, name, shape, dtype):
    """The caller's `out` checked against the shape and dtype the call writes, or a new array."""
    if out is None:
        return operand(empty(like, shape, dtype), name, dtype, (len(shape),))
    op = operand(out, name, dtype, (len(shape),))
    same_place(like, op)
    if tuple(op.shape) != tuple(shape):
        raise ValueError(f"{name}: shape {tuple(op.shape)}, the call writes {tuple(shape)}")
    return op


def current_stream(op):
    """The handle of the caller's current stream for op's device (0: the default stream)."""
    if op.kind == "cupy":
        cupy = _cupy()
        with cupy.cuda.Device(op.device):
            return cupy.cuda.get_current_stream().ptr
    if op.kind == "torch":
        return _torch().cuda.current_stream(op.device).cuda_stream
    return 0

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
    element, shape, element count, NumPy dtype and device (_native.CPU for host memory).
    Written for speed: it runs on every call (docs/python.md, "What the binding costs")."""

    __slots__ = ("obj", "name", "kind", "device", "ptr", "shape", "size", "dtype", "contiguous")

    def __init__(self, obj, name):
        self.obj, self.name = obj, name
        reader = _READERS.get(type(obj)) or _reader_for(obj, name)
        reader(self, obj)

    @property
    def on_gpu(self):
        return self.device != _native.CPU

    def describe(self):
        where = "host" if not self.on_gpu else f"cuda:{self.device}"
        return f"{self.kind} array of shape {tuple(self.shape)} and dtype {self.dtype} on {where}"


def _read_numpy(op, a):
    op.kind, op.device, op.ptr = "numpy", _native.CPU, a.__array_interface__["data"][0]
    op.shape, op.size, op.dtype, op.contiguous = a.shape, a.size, a.dtype, a.flags.c_contiguous


def _read_cupy(op, a):
    op.kind, op.device, op.ptr = "cupy", a.data.device_id, a.data.ptr
    op.shape, op.size, op.dtype, op.contiguous = a.shape, a.size, a.dtype, a.flags.c_contiguous


def _read_torch(op, t):
    if t.device.type != "cuda":
        raise TypeError(f"{op.name}: a torch.Tensor on {t.device}; memhier takes PyTorch CUDA tensors "
                        f"(for the CPU, pass {op.name}.numpy())")
    op.kind, op.device, op.ptr = "torch", t.device.index, t.data_ptr()
    op.shape, op.size, op.contiguous = tuple(t.shape), t.numel(), t.is_contiguous()
    op.dtype = _torch_dtype(t)


_READERS = {np.ndarray: _read_numpy}
_READER_OF = {"numpy": _read_numpy, "cupy": _read_cupy, "torch": _read_torch}
KINDS = {np.ndarray: "numpy"}  # type -> kind_of(type), as it is met (the compiled entry reads it: _fast)


# ndarray subclasses whose data alone would lose what they mean: refused by name
_MEANS_MORE = ((np.ma.MaskedArray, "masked array", "mask", "a.filled(value)"),
               (np.matrix, "numpy.matrix", "matrix semantics", "numpy.asarray(a)"))


def kind_of(cls):
    """The kind of the arrays of a type ('numpy', 'cupy' or 'torch'), or None for any other type
    (masked arrays and matrices among them); remembered in KINDS."""
    kind = KINDS.get(cls, False)
    if kind is False:
        torch, cupy = _torch(), _cupy()
        if issubclass(cls, np.ndarray):
            kind = None if issubclass(cls, tuple(c for c, *_ in _MEANS_MORE)) else "numpy"
        elif cupy is not None and issubclass(cls, cupy.ndarray):
            kind = "cupy"
        elif torch is not None and issubclass(cls, torch.Tensor):
            kind = "torch"
        else:
            kind = None
        KINDS[cls] = kind
    return kind


def _reader_for(obj, name):
    """The reader of a type met for the first time (subclasses, CuPy, PyTorch), remembered."""
    for cls, kind, dropped, instead in _MEANS_MORE:
        if isinstance(obj, cls):
            raise TypeError(f"{name}: a {kind}; memhier takes plain arrays and would ignore its {dropped} "
                            f"(pass {instead})")
    kind = kind_of(type(obj))
    if kind is None:
        raise TypeError(f"{name}: expected a numpy.ndarray, cupy.ndarray or torch CUDA tensor, "
                        f"got {type(obj).__module__}.{type(obj).__name__}")
    _READERS[type(obj)] = reader = _READER_OF[kind]
    return reader


def _torch_dtype(t):
    """A tensor's dtype as NumPy names it; bfloat16 and others NumPy lacks stay torch's."""
    name = str(t.dtype).split(".")[-1]
    try:
        return np.dtype(name)
    except TypeError:
        return t.dtype


_DTYPES = {name: np.dtype(name) for name in ("float32", "float16", "int32", "uint8", "int8", "uint16", "int16", "int64",
                                            "uint32", "uint64", "float64", "bool")}


def dtype_name(dtype):
    """A dtype's name as NumPy gives it, for NumPy's dtypes and the ones it lacks (PyTorch's
    torch.bfloat16: 'bfloat16')."""
    return dtype.name if isinstance(dtype, np.dtype) else str(dtype).split(".")[-1]


def operand(obj, name, dtype, ndims=None):
    """obj (or an Operand of it) checked: refused unless its dtype is `dtype`, its number of
    dimensions one of `ndims` (None: any) and it is C-contiguous."""
    op = obj if isinstance(obj, Operand) else Operand(obj, name)
    want = _DTYPES.get(dtype)  # None: a dtype NumPy lacks (bfloat16), compared by name
    if (op.dtype != want) if want is not None else dtype_name(op.dtype) != dtype:
        raise TypeError(f"{name}: dtype {op.dtype}, memhier needs {dtype} here (convert it first, "
                        f"e.g. {name}.astype({dtype}))")
    if ndims is not None and len(op.shape) not in ndims:
        expected = " or ".join(f"{d}-D" for d in ndims)
        raise ValueError(f"{name}: {len(op.shape)}-D array of shape {tuple(op.shape)}, expected {expected}")
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
    if dtype not in _DTYPES and like.kind != "torch" and dtype_name(like.dtype) == dtype:
        dtype = like.dtype  # a dtype NumPy names only once its package is imported (ml_dtypes' bfloat16)
    if like.kind == "numpy":
        return np.empty(shape, dtype)
    if like.kind == "cupy":
        cupy = _cupy()
        if cupy.cuda.runtime.getDevice() == like.device:
            return cupy.empty(shape, dtype)
        with cupy.cuda.Device(like.device):
            return cupy.empty(shape, dtype)
    torch = _torch()
    return torch.empty(shape, dtype=getattr(torch, dtype), device=like.obj.device)


def maker(kind):
    """(make, device_now): the constructor empty() ends in for a NumPy or CuPy array, make(shape,
    dtype), and for CuPy the function that reads the current device, which must be the array's
    for make to place it there (None for NumPy); the compiled entry's records make their outputs
    with these, without empty()'s Python layers."""
    if kind == "cupy":
        cupy = _cupy()
        return cupy.ndarray, cupy.cuda.runtime.getDevice
    return np.empty, None


class Place:
    """Where a call runs, as empty() and the context read it from an Operand: a kind and a
    device (the compiled entry's records hold one in place of an array)."""
    __slots__ = ("kind", "device", "obj")

    def __init__(self, kind, device):
        self.kind, self.device, self.obj = kind, device, None


def address(kind, obj):
    """The address of the first element of an array of `kind` made by this package (empty)."""
    if kind == "numpy":
        return obj.__array_interface__["data"][0]
    if kind == "cupy":
        return obj.data.ptr
    return obj.data_ptr()


def made(obj, name, like, shape, dtype):
    """The Operand of an array just made by empty(like, shape, dtype): what a reader would find,
    known without asking the array (a C-contiguous array of like's kind on its device)."""
    op = Operand.__new__(Operand)
    op.obj, op.name, op.kind, op.device, op.ptr = obj, name, like.kind, like.device, address(like.kind, obj)
    made_dtype = _DTYPES.get(dtype) or (_torch_dtype(obj) if like.kind == "torch" else obj.dtype)
    op.shape, op.dtype, op.contiguous = tuple(shape), made_dtype, True
    op.size = 1
    for n in op.shape:
        op.size *= n
    return op


def output(out, like, name, shape, dtype):
    """The caller's `out` checked against the shape and dtype the call writes, or a new array."""
    if out is None:
        return made(empty(like, shape, dtype), name, like, shape, dtype)
    op = operand(out, name, dtype)
    if op.kind == "numpy" and not op.obj.flags.writeable:
        raise ValueError(f"{name}: a read-only array (its flags.writeable is False); pass a writable one")
    same_place(like, op)
    if tuple(op.shape) != tuple(shape):
        raise ValueError(f"{name}: shape {tuple(op.shape)}, the call writes {tuple(shape)}")
    return op


def current_stream(op):
    """The handle of the caller's current stream for op's device (0: the default stream)."""
    if op.kind == "cupy":
        return _cupy().cuda.get_current_stream(op.device).ptr
    if op.kind == "torch":
        return _torch().cuda.current_stream(op.device).cuda_stream
    return 0

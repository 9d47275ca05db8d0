"""Array operations memhier.ndimage needs on the caller's own library (NumPy, CuPy or PyTorch),
so that a conversion runs where the array lives, on the caller's current stream: a float32
contiguous copy, scipy's cast of float results into an output dtype, axis moves, index takes.

scipy.ndimage computes in float64 and stores a result into an integer output with a C cast: the
value truncated toward zero, then wrapped modulo 2^bits (on x86-64, through a 32-bit integer, so
that NaN and values beyond +-2^31 store as 0). store() does exactly that from float32."""
import contextlib

import numpy as np

from . import _arrays

F32 = np.dtype("float32")
INT_LIMIT = 2.0 ** 31


def _xp(kind):
    """numpy or cupy for an array kind other than PyTorch's (whose calls differ)."""
    return np if kind == "numpy" else _arrays._cupy()


def on_device(op):
    """A context in which CuPy allocates and launches on op's device (nothing for the others, or
    when that device is current already: entering a cupy.cuda.Device costs microseconds)."""
    if op.kind == "cupy":
        cupy = _arrays._cupy()
        if cupy.cuda.runtime.getDevice() != op.device:
            return cupy.cuda.Device(op.device)
    return _NOTHING


_NOTHING = contextlib.nullcontext()


def float32_contiguous(op):
    """op's array as a C-contiguous float32 array of its kind: itself when it is one already."""
    if op.dtype == F32 and op.contiguous:
        return op.obj
    with on_device(op):
        if op.kind == "torch":
            return op.obj.to(_arrays._torch().float32).contiguous()
        return _xp(op.kind).ascontiguousarray(op.obj, dtype=F32)


def astype(obj, kind, dtype):
    """A copy of an array of `kind` converted to `dtype` (NumPy's name or dtype), on its device."""
    if kind == "torch":
        return obj.to(getattr(_arrays._torch(), np.dtype(dtype).name))
    return obj.astype(dtype)


def empty_like_kind(op, shape, dtype):
    """A new C-contiguous array of op's kind on its device (_arrays.empty checks the device)."""
    name = _NAMES.get(dtype) or _NAMES.setdefault(dtype, np.dtype(dtype).name)
    return _arrays.empty(op, shape, name)


_NAMES = {}  # dtype -> its name: numpy's dtype.name is a slow property


def empty_like(obj, kind):
    if kind == "torch":
        return _arrays._torch().empty_like(obj)
    return _xp(kind).empty_like(obj)


def assign(dst, src, kind):
    """dst[...] = src, with the library's own conversion (dst may be strided)."""
    if kind == "torch":
        dst.copy_(src)
    else:
        dst[...] = src


def store(src, dst, kind):
    """dst[...] = src (float32, same shape or broadcastable) with scipy's cast into dst's dtype."""
    torch = _arrays._torch() if kind == "torch" else None
    dtype = np.dtype(str(dst.dtype).split(".")[-1])
    if dtype.kind == "f":
        assign(dst, src, kind)
        return
    if torch is not None:
        t = torch.trunc(src)
        whole = torch.where(torch.abs(t) < INT_LIMIT, t, torch.zeros_like(t)).to(torch.int64)
        dst.copy_(whole)  # int64 to a narrower integer: modulo 2^bits
        return
    xp = _xp(kind)
    t = xp.trunc(src)
    whole = xp.where(xp.abs(t) < INT_LIMIT, t, 0).astype(np.int64)
    dst[...] = whole.astype(dtype)  # modulo 2^bits, as a C cast of the 32-bit integer


def moveaxes_last(obj, kind, axes):
    """A view of obj with `axes` moved to the end, in their order."""
    if kind == "torch":
        return obj.movedim(tuple(axes), tuple(range(obj.dim() - len(axes), obj.dim())))
    xp = _xp(kind)
    return xp.moveaxis(obj, tuple(axes), tuple(range(obj.ndim - len(axes), obj.ndim)))


def contiguous(obj, kind):
    if kind == "torch":
        return obj.contiguous()
    return _xp(kind).ascontiguousarray(obj)


def take(obj, kind, index, axis):
    """obj's slices `index` (a host int64 array) along `axis`, as a new array."""
    if kind == "torch":
        torch = _arrays._torch()
        return torch.index_select(obj, axis, torch.as_tensor(index, device=obj.device))
    xp = _xp(kind)
    return xp.take(obj, xp.asarray(index), axis=axis)


def fill_slices(obj, kind, where, axis, value):
    """Sets obj's slices along `axis` where the host bool array `where` is true to `value`."""
    if not where.any():
        return
    index = [slice(None)] * len(obj.shape)
    index[axis] = np.flatnonzero(where) if kind == "numpy" else list(np.flatnonzero(where))
    obj[tuple(index)] = value


def overlaps(a, b):
    """Whether two operands may share memory (then a result goes through a temporary first)."""
    if a.kind != b.kind or a.device != b.device:
        return False
    if a.kind == "torch":
        return a.obj.untyped_storage().data_ptr() == b.obj.untyped_storage().data_ptr()
    return bool(_xp(a.kind).may_share_memory(a.obj, b.obj))

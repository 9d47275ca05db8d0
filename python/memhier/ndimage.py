"""memhier.ndimage: scipy.ndimage's correlation filters on memhier's conv2d kernels, with
scipy's signatures, defaults and results: `correlate` and `convolve` of a 2-D float32 image
with any 2-D weights of sides 1 to 31, every boundary mode (scipy's default 'reflect',
'constant' with cval, 'nearest', 'mirror', 'wrap' and the 'grid-' aliases) and `origin`.

The image may be a NumPy array (the CPU backend, or a GPU with device=N), a CuPy array or a
PyTorch CUDA tensor (in place, on the caller's current stream); the result is the same kind of
array. Weights may be given as any array-like: they are converted to float32 (the precision of
the computation) and, for an image on a GPU, copied to its device by the image's own library.

What scipy.ndimage takes and this module does not yet (each refused with a message that says
so, never computed differently): images other than 2-D float32 (float64 is refused rather than
computed in float32: pass input.astype(numpy.float32)), `axes` other than both axes in order,
and an `output` of another dtype.

docs/python.md ("memhier.ndimage") has the table of modes and the names other libraries give
them."""
import numpy as np

from . import _arrays
from ._call import Call, variant_arg
from ._native import lib, check, InvalidArgument, MODES, Unsupported

F32 = np.dtype("float32")


def _mode_arg(mode):
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode: {mode!r} is not one of {', '.join(repr(m) for m in MODES)}")
    return MODES[mode]


def _origin_args(origin, weights_shape):
    """(origin_r, origin_c) as ints, each within scipy's range for its side."""
    origins = list(origin) if isinstance(origin, (list, tuple, np.ndarray)) else [origin, origin]
    if len(origins) != 2:
        raise ValueError(f"origin: {origin!r}; a 2-D filter takes one origin or two")
    out = []
    for axis, (o, side) in enumerate(zip(origins, weights_shape)):
        if isinstance(o, bool) or not isinstance(o, (int, np.integer)):
            raise TypeError(f"origin: expected ints, got {o!r}")
        o, lo, hi = int(o), -(side // 2), (side - 1) // 2
        if not lo <= o <= hi:
            raise InvalidArgument("invalid argument",
                                  f"origin = {o} on axis {axis}: a {side}-tap side takes origins {lo} .. {hi}")
        out.append(o)
    return out


def _cval_arg(cval):
    if isinstance(cval, bool) or not isinstance(cval, (int, float, np.integer, np.floating)):
        raise TypeError(f"cval: expected a number, got {cval!r}")
    return float(cval)


def _image(input):
    im = _arrays.Operand(input, "input")
    if im.dtype != F32:
        hint = " (memhier does not compute it in float32 behind your back)" if im.dtype == np.float64 else ""
        raise Unsupported("unsupported", f"input: dtype {im.dtype}; memhier.ndimage takes float32 images for now"
                          f"{hint}: pass input.astype(numpy.float32)")
    if len(im.shape) != 2:
        raise Unsupported("unsupported", f"input: {len(im.shape)}-D array of shape {tuple(im.shape)}; "
                          "memhier.ndimage filters 2-D images for now")
    return _arrays.operand(im, "input", "float32", (2,))


def _weights(weights, im):
    """The weights as a float32 array of the image's kind on its device, checked for rank and size."""
    host = np.asarray(weights.get() if hasattr(weights, "get") and not isinstance(weights, np.ndarray) else
                      (weights.detach().cpu().numpy() if hasattr(weights, "detach") else weights))
    if host.ndim != 2:
        raise ValueError(f"weights: {host.ndim}-D of shape {host.shape}; a 2-D input takes 2-D weights")
    if host.size == 0:
        raise ValueError(f"weights: shape {host.shape} holds no filter weights")
    if not np.issubdtype(host.dtype, np.number) or np.issubdtype(host.dtype, np.complexfloating):
        raise TypeError(f"weights: dtype {host.dtype}; expected real numbers")
    host = np.ascontiguousarray(host, dtype=F32)
    if im.kind == "numpy":
        return _arrays.operand(host, "weights", "float32", (2,))
    if im.kind == "cupy":
        cupy = _arrays._cupy()
        with cupy.cuda.Device(im.device):
            dev = cupy.asarray(host)
    else:
        dev = _arrays._torch().as_tensor(host, device=im.obj.device)
    return _arrays.operand(dev, "weights", "float32", (2,))


def _output(output, im):
    """scipy's `output`: None, a dtype (float32 only, for now) or an array to write."""
    if output is None:
        return None
    if isinstance(output, (type, np.dtype, str)):
        if np.dtype(output) != F32:
            raise Unsupported("unsupported", f"output: dtype {np.dtype(output)}; memhier.ndimage writes float32 "
                              "for now")
        return None
    return output


def _axes_arg(axes):
    if axes is None:
        return
    ax = tuple(int(a) for a in axes) if isinstance(axes, (list, tuple)) else (axes,)
    if tuple(a % 2 for a in ax) != (0, 1):
        raise Unsupported("unsupported", f"axes: {axes!r}; memhier.ndimage filters both axes of a 2-D image, in "
                          "order, for now (axes=None or (0, 1))")


def _correlate(input, weights, output, mode, cval, origin, axes, variant, device, context, flip):
    im = _image(input)
    _axes_arg(axes)
    mode_code, cval = _mode_arg(mode), _cval_arg(cval)
    fi = _weights(weights, im)
    krows, kcols = fi.shape
    origin_r, origin_c = _origin_args(origin, (krows, kcols))
    if flip:  # scipy's convolve: the weights reversed, each origin mirrored (and moved by one on an even side)
        fi = _arrays.operand(fi.obj[::-1, ::-1].copy() if fi.kind != "torch" else fi.obj.flip((0, 1)).contiguous(),
                             "weights", "float32", (2,))
        origin_r, origin_c = -origin_r - (1 - krows % 2), -origin_c - (1 - kcols % 2)
    rows, cols = im.shape
    os_ = _arrays.output(_output(output, im), im, "output", (rows, cols), "float32")
    if rows == 0 or cols == 0:
        return os_.obj
    call = Call([im, fi], device, context)
    call.run(lib.mh_conv2d_mode(call.ctx, variant_arg(variant), call.ptr(im), rows, cols, call.ptr(fi), krows, kcols,
                                mode_code, cval, origin_r, origin_c, call.out_ptr(os_)))
    return os_.obj


def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None, variant="auto",
              device=None, context=None):
    """scipy.ndimage.correlate: out[r, c] = sum_{i,j} X[r + i - (kr // 2 + origin_r), c + j - (kc // 2 +
    origin_c)] * weights[i, j], X the input extended past its edges by `mode`. variant, device
    and context as in memhier.conv2d."""
    return _correlate(input, weights, output, mode, cval, origin, axes, variant, device, context, flip=False)


def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None, variant="auto",
             device=None, context=None):
    """scipy.ndimage.convolve: correlate with the weights reversed along each axis (and each
    origin mirrored, as scipy does)."""
    return _correlate(input, weights, output, mode, cval, origin, axes, variant, device, context, flip=True)

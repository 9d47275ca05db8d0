"""memhier.ndimage: scipy.ndimage's correlation filters on memhier's conv2d kernels, with
scipy's signatures, defaults and results, for float32 arrays: correlate and convolve of 2-D
images and stacks of them ((N, H, W) with axes=(1, 2), one call; any 2-D weights of sides 1 to
31), correlate1d and convolve1d along any axis of an array of any rank, and the filters scipy
builds from them, any rank: gaussian_filter(1d) (orders 0 to 2), uniform_filter(1d), sobel,
prewitt, laplace and gaussian_laplace. Every boundary mode (scipy's default 'reflect',
'constant' with cval, 'nearest', 'mirror', 'wrap' and the 'grid-' aliases) and `origin`.
The separable filters run as scipy runs them, one 1-D pass per axis (each pass float32).

The image may be a NumPy array (the CPU backend, or a GPU with device=N), a CuPy array or a
PyTorch CUDA tensor (in place, on the caller's current stream); the result is the same kind of
array. Weights already on the image's device as float32 are used in place; any other array-like
is converted to float32 (the precision of the computation) and, for an image on a GPU, copied
to its device by the image's own library.

What scipy.ndimage takes and this module does not yet (each refused with a message that says
so, never computed differently): arrays other than float32 (float64 is refused rather than
computed in float32: pass input.astype(numpy.float32)), correlate's `axes` other than an
image's two or a stack's last two,
an `output` of another dtype, 1-D filters longer than 31 taps (a Gaussian of sigma above 3.6
at the default truncate of 4), and Gaussian derivatives of order above 2.

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


def _image(input, axes=None):
    """The input checked: a float32 image, or a stack of them (N, H, W) filtered over axes (1, 2)."""
    im = _array(input)
    if len(im.shape) not in (2, 3):
        raise Unsupported("unsupported", f"input: {len(im.shape)}-D array of shape {tuple(im.shape)}; "
                          "memhier.ndimage filters 2-D images and stacks of them (N, H, W) for now")
    _axes_arg(axes, len(im.shape))
    return im


def _to_host(weights):
    """Any array-like of weights as a NumPy array (CuPy's .get(), PyTorch's .cpu())."""
    if isinstance(weights, np.ndarray):
        return weights
    if hasattr(weights, "detach"):
        return weights.detach().cpu().numpy()
    if hasattr(weights, "get") and hasattr(weights, "shape"):
        return weights.get()
    return np.asarray(weights)


def _weights(weights, im):
    """The weights as a float32 array of the image's kind on its device, checked for rank and size.
    Weights already there (float32, 2-D, contiguous, of the image's kind and device) are used as
    they are: no copy, no wait for the stream; others go through the host."""
    try:
        given = _arrays.Operand(weights, "weights")
    except TypeError:
        given = None
    if (given is not None and given.kind == im.kind and given.device == im.device and given.dtype == F32 and
            len(given.shape) == 2 and given.contiguous and given.size):
        return _arrays.operand(given, "weights", "float32", (2,))
    host = _to_host(weights)
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


def _axes_arg(axes, ndim=2):
    """The two axes filtered: the last two, in order; a stack (N, H, W) names them (axes=(1, 2))."""
    if axes is None and ndim == 2:
        return (0, 1)
    ax = tuple(int(a) for a in axes) if isinstance(axes, (list, tuple)) else (None if axes is None else (axes,))
    if ax is None or tuple(a % ndim for a in ax) != (ndim - 2, ndim - 1):
        raise Unsupported("unsupported", f"axes: {axes!r} on a {ndim}-D input; memhier.ndimage filters the last two "
                          "axes in order, for now: axes=None or (0, 1) for an image, axes=(1, 2) for a stack (N, H, W)")
    return (ndim - 2, ndim - 1)


def _correlate(input, weights, output, mode, cval, origin, axes, variant, device, context, flip):
    im = _image(input, axes)
    mode_code, cval = _mode_arg(mode), _cval_arg(cval)
    fi = _weights(weights, im)
    krows, kcols = fi.shape
    origin_r, origin_c = _origin_args(origin, (krows, kcols))
    if flip:  # scipy's convolve: the weights reversed, each origin mirrored (and moved by one on an even side)
        fi = _arrays.operand(fi.obj[::-1, ::-1].copy() if fi.kind != "torch" else fi.obj.flip((0, 1)).contiguous(),
                             "weights", "float32", (2,))
        origin_r, origin_c = -origin_r - (1 - krows % 2), -origin_c - (1 - kcols % 2)
    rows, cols = im.shape[-2:]
    os_ = _arrays.output(_output(output, im), im, "output", tuple(im.shape), "float32")
    if im.size == 0:
        return os_.obj
    call = Call([im, fi], device, context)
    if len(im.shape) == 3:  # a stack: one call (regtile filters it in one launch)
        call.run(lib.mh_conv2d_mode_batched(call.ctx, variant_arg(variant), call.ptr(im), im.shape[0], rows, cols,
                                            call.ptr(fi), krows, kcols, mode_code, cval, origin_r, origin_c,
                                            call.out_ptr(os_)))
    else:
        call.run(lib.mh_conv2d_mode(call.ctx, variant_arg(variant), call.ptr(im), rows, cols, call.ptr(fi), krows,
                                    kcols, mode_code, cval, origin_r, origin_c, call.out_ptr(os_)))
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


# ---- 1-D filters along an axis, and the filters scipy composes from them ----------------------

def _axis_arg(axis, ndim):
    """An axis of an ndim-D array as a non-negative int."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -ndim <= int(axis) < ndim:
        raise ValueError(f"axis: {axis!r}; a {ndim}-D input has axes 0 .. {ndim - 1} (or -{ndim} .. -1)")
    return int(axis) % ndim


def _array(input):
    """A float32, C-contiguous array of any shape (the 1-D filters run along any axis of it)."""
    op = _arrays.Operand(input, "input")
    if op.dtype != F32:
        hint = " (memhier does not compute it in float32 behind your back)" if op.dtype == np.float64 else ""
        raise Unsupported("unsupported", f"input: dtype {op.dtype}; memhier.ndimage takes float32 arrays for now"
                          f"{hint}: pass input.astype(numpy.float32)")
    if len(op.shape) == 0:
        raise ValueError("input: a 0-d array; filters need at least one axis")
    return _arrays.operand(op, "input", "float32")


def _weights1d(weights):
    w = _to_host(weights)
    if w.ndim != 1:
        raise ValueError(f"weights: {w.ndim}-D of shape {w.shape}; a 1-D filter takes 1-D weights")
    if w.size == 0:
        raise ValueError("weights: no filter weights given")
    return w


def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *, variant="auto",
                device=None, context=None):
    """scipy.ndimage.correlate1d along any axis of a float32 array of any rank: every line along
    `axis` filtered alone. The array is viewed without a copy as lines the conv2d kernels take:
    (A, L) with the filter along its columns for the last axis, else a stack (A, L, B) with the
    filter along its rows (L the axis's length, A and B the products of the axes before and after)."""
    im = _array(input)
    w, shape = _weights1d(weights), tuple(im.shape)
    axis = _axis_arg(axis, len(shape))
    out = _arrays.output(_output(output, im), im, "output", shape, "float32")
    if im.size == 0:
        return out.obj
    before, length = int(np.prod(shape[:axis], dtype=np.int64)), shape[axis]
    after = int(np.prod(shape[axis + 1:], dtype=np.int64))
    if axis == len(shape) - 1:
        lines, w2, origins, axes = (before, length), w.reshape(1, -1), (0, origin), None
    else:
        lines, w2, origins, axes = (before, length, after), w.reshape(-1, 1), (origin, 0), (1, 2)
    _correlate(im.obj.reshape(lines), w2, out.obj.reshape(lines), mode, cval, origins, axes, variant, device, context,
               flip=False)
    return out.obj


def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *, variant="auto",
               device=None, context=None):
    """scipy.ndimage.convolve1d: correlate1d with the weights reversed (and the origin mirrored)."""
    w = _weights1d(weights)
    if isinstance(origin, bool) or not isinstance(origin, (int, np.integer)):
        raise TypeError(f"origin: expected an int, got {origin!r}")
    return correlate1d(input, w[::-1], axis, output, mode, cval, -int(origin) - (1 - w.size % 2), variant=variant,
                       device=device, context=context)


def _per_axis(value, name, n=2):
    """scipy's per-axis arguments: one value for every axis filtered, or a sequence of one each."""
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != n:
            raise ValueError(f"{name}: {value!r}; {n} axes are filtered: one value or {n}")
        return list(value)
    return [value] * n


def _filtered_axes(axes, ndim):
    """scipy's `axes` of the separable filters: every axis when None, else distinct axes."""
    if axes is None:
        return list(range(ndim))
    ax = [_axis_arg(a, ndim) for a in (axes if isinstance(axes, (list, tuple)) else (axes,))]
    if len(set(ax)) != len(ax):
        raise ValueError(f"axes: {axes!r} names an axis twice")
    return ax


def _gaussian_weights(sigma, order, radius):
    """The sampled Gaussian of standard deviation sigma on -radius .. radius, normalised to sum 1,
    or its exact derivative of order 1 or 2 (the normalised samples times the derivative of the
    exponent's polynomial), as scipy's gaussian_filter1d defines it."""
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    phi = np.exp(-0.5 * x * x / (sigma * sigma))
    phi /= phi.sum()
    if order == 0:
        return phi
    if order == 1:
        return -x / (sigma * sigma) * phi
    return (x * x / sigma ** 4 - 1.0 / (sigma * sigma)) * phi


def _radius(sigma, truncate, radius):
    if radius is not None:
        if isinstance(radius, bool) or not isinstance(radius, (int, np.integer)) or radius < 0:
            raise ValueError(f"radius: {radius!r}; expected a non-negative int")
        return int(radius)
    return int(float(truncate) * float(sigma) + 0.5)


def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *,
                      radius=None, variant="auto", device=None, context=None):
    """scipy.ndimage.gaussian_filter1d: orders 0 (smoothing) to 2, radius int(truncate * sigma + 0.5)
    unless given; at most 31 taps (radius 15)."""
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or not 0 <= order <= 2:
        raise Unsupported("unsupported", f"order = {order!r}; memhier.ndimage takes Gaussian orders 0, 1 and 2")
    if not float(sigma) > 0:
        raise ValueError(f"sigma = {sigma!r}; expected a positive number")
    r = _radius(sigma, truncate, radius)
    if 2 * r + 1 > 31:
        raise Unsupported("unsupported", f"sigma = {sigma}, truncate = {truncate}: a {2 * r + 1}-tap Gaussian; "
                          "memhier's filters have at most 31 taps (radius 15)")
    return correlate1d(input, _gaussian_weights(float(sigma), int(order), r)[::-1], axis, output, mode, cval, 0,
                       variant=variant, device=device, context=context)


def _separable(input, output, passes):
    """Runs 1-D passes (each a function of (input, output)) one after another, the last into
    `output`, as scipy's separable filters do; no pass: a copy of the input."""
    im = _array(input)
    if len(passes) == 0:
        out = _arrays.output(_output(output, im), im, "output", tuple(im.shape), "float32")
        out.obj[...] = input
        return out.obj
    current = input
    for i, run in enumerate(passes):
        current = run(current, output if i == len(passes) - 1 else None)
    return current


def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *, radius=None,
                    axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.gaussian_filter: one gaussian_filter1d per axis (every axis, or `axes`); sigma,
    order, mode and radius per axis or one for all. An axis of sigma 0 is left as it is (as
    scipy does), so an RGB image (H, W, 3) takes sigma=(s, s, 0) or axes=(0, 1)."""
    ax = _filtered_axes(axes, len(_array(input).shape))
    sigmas, orders = _per_axis(sigma, "sigma", len(ax)), _per_axis(order, "order", len(ax))
    modes, radii = _per_axis(mode, "mode", len(ax)), _per_axis(radius, "radius", len(ax))
    passes = [(lambda x, out, i=i: gaussian_filter1d(x, sigmas[i], ax[i], orders[i], out, modes[i], cval, truncate,
                                                     radius=radii[i], variant=variant, device=device,
                                                     context=context))
              for i in range(len(ax)) if float(sigmas[i]) > 0]
    return _separable(input, output, passes)


def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *, variant="auto",
                     device=None, context=None):
    """scipy.ndimage.uniform_filter1d: the mean over `size` samples along `axis`."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size = {size!r}; expected a positive int")
    return correlate1d(input, np.full(int(size), 1.0 / int(size)), axis, output, mode, cval, origin,
                       variant=variant, device=device, context=context)


def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None, variant="auto",
                   device=None, context=None):
    """scipy.ndimage.uniform_filter: one uniform_filter1d per axis (every axis, or `axes`; an axis
    of size 1 is skipped)."""
    ax = _filtered_axes(axes, len(_array(input).shape))
    sizes, modes = _per_axis(size, "size", len(ax)), _per_axis(mode, "mode", len(ax))
    origins = _per_axis(origin, "origin", len(ax))
    passes = [(lambda x, out, i=i: uniform_filter1d(x, sizes[i], ax[i], out, modes[i], cval, origins[i],
                                                    variant=variant, device=device, context=context))
              for i in range(len(ax)) if sizes[i] != 1]
    return _separable(input, output, passes)


def _derivative_and_smooth(input, axis, output, mode, cval, smooth, variant, device, context):
    """The central difference along `axis`, then `smooth` along every other axis (scipy's sobel, prewitt)."""
    ndim = len(_array(input).shape)
    axis, modes = _axis_arg(axis, ndim), _per_axis(mode, "mode", ndim)
    passes = [lambda x, out: correlate1d(x, [-1.0, 0.0, 1.0], axis, out, modes[axis], cval, variant=variant,
                                         device=device, context=context)]
    passes += [(lambda x, out, a=a: correlate1d(x, smooth, a, out, modes[a], cval, variant=variant, device=device,
                                                context=context)) for a in range(ndim) if a != axis]
    return _separable(input, output, passes)


def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0, *, variant="auto", device=None, context=None):
    """scipy.ndimage.sobel: the central difference along `axis`, smoothed by [1, 2, 1] across it."""
    return _derivative_and_smooth(input, axis, output, mode, cval, [1.0, 2.0, 1.0], variant, device, context)


def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0, *, variant="auto", device=None, context=None):
    """scipy.ndimage.prewitt: the central difference along `axis`, smoothed by [1, 1, 1] across it."""
    return _derivative_and_smooth(input, axis, output, mode, cval, [1.0, 1.0, 1.0], variant, device, context)


def _sum_over_axes(input, output, per_axis):
    """scipy's generic_laplace: the sum over every axis of a second derivative along that axis."""
    im = _array(input)
    out = _arrays.output(_output(output, im), im, "output", tuple(im.shape), "float32")
    per_axis(0, out.obj)
    for a in range(1, len(im.shape)):
        out.obj += per_axis(a, None)
    return out.obj


def laplace(input, output=None, mode="reflect", cval=0.0, *, variant="auto", device=None, context=None):
    """scipy.ndimage.laplace: the sum of [1, -2, 1] along each axis."""
    modes = _per_axis(mode, "mode", len(_array(input).shape))
    return _sum_over_axes(input, output, lambda a, out: correlate1d(input, [1.0, -2.0, 1.0], a, out, modes[a], cval,
                                                                    variant=variant, device=device, context=context))


def gaussian_laplace(input, sigma, output=None, mode="reflect", cval=0.0, *, variant="auto", device=None,
                     context=None, **kwargs):
    """scipy.ndimage.gaussian_laplace: the sum over axes of the Gaussian's second derivative along
    each (smoothing along the others); truncate and radius pass on to gaussian_filter."""
    ndim = len(_array(input).shape)

    def along(a, out):
        orders = [2 if b == a else 0 for b in range(ndim)]
        return gaussian_filter(input, sigma, orders, out, mode, cval, variant=variant, device=device,
                               context=context, **kwargs)
    return _sum_over_axes(input, output, along)

"""memhier.ndimage: scipy.ndimage's correlation filters on memhier's conv2d kernels, with
scipy's signatures, defaults and results: correlate and convolve with weights of any rank over
any axes (over the last two axes one launch for the whole array: images, stacks (N, H, W), the
lines of a volume), correlate1d and convolve1d along any axis, and the filters scipy builds from
them: gaussian_filter(1d) (derivatives of any order), uniform_filter(1d), sobel, prewitt, laplace and
gaussian_laplace; and the selection filters on memhier's rank op (_rank.py: median, rank,
percentile, minimum and maximum filters, grey morphology). Every boundary mode (scipy's default 'reflect', 'constant' with cval,
'nearest', 'mirror', 'wrap' and the 'grid-' aliases) and `origin`, matched to `axes` as scipy
matches them.

correlate1d, convolve1d and the separable filters run on memhier's sepfilter op, which reads
and writes the arrays in their own dtypes and runs two passes over neighbouring axes in one
launch; a pass of more than 127 taps runs alone on conv1d's direct rows (regtile, cpu-omp) in
float32, with the mode applied in their loaders; correlate and convolve run on the conv2d rows
in float32.

dtypes: uint8, int8, uint16, int16, float16 and float32 in and out (the output is the input's
dtype unless `output` says otherwise), computed in float32 and stored as scipy stores: into an
integer output truncated toward zero and wrapped modulo 2^bits (scipy's C cast on x86-64; NaN
and values past +-2^31 store as 0), so a 3x3 sum of uint8 pixels wraps as scipy's does. The
separable filters store each pass in the output's dtype, as scipy does. An integer result
equals scipy's unless the exact value lies within float32 rounding of a whole number (scipy
truncates its float64 sum; the two sums may fall on either side). float64, int32, int64, uint32
and uint64 (in or out) are computed in float64, never in float32; into an integer output of
those types every sum is added in scipy's order (correlate's weights in C order, correlate1d's
symmetric and antisymmetric folds, scipy's own Gaussian weights), so the result is scipy's bit
for bit, truncation included. A bool array is read and written as its bytes, as scipy's C code
reads a bool as an unsigned char and casts its float64 sum into one: a Gaussian over a flat True
patch sums one rounding below 1 and stores 0 (False), a negative sum wraps to a byte such as 254
(a True that is not 1, as scipy stores it), and laplace's terms combine as numpy adds bools.

The input may be a NumPy array (the CPU backend, or a GPU with device=N), a CuPy array or a
PyTorch CUDA tensor (on the caller's current stream), or any array with __cuda_array_interface__
or DLPack (JAX, Numba, PyTorch CPU tensors), viewed without a copy; the result is the same kind
of array.
Strided inputs and outputs are taken (a contiguous float32 copy is made where needed), and an
output that shares memory with the input is written through a temporary. Weights already on the
image's device as float32 are used in place; any other array-like is converted to float32 (the
precision of the computation) and, for an image on a GPU, copied to its device by the image's
own library.

Complex input or complex weights (NumPy and CuPy arrays) run as real filters of their parts
(_complex.py), as in scipy. What scipy.ndimage takes and this module does not is refused with a
message that says so, never computed differently.

docs/python.md ("memhier.ndimage") has the table of modes and the names other libraries give
them."""
import collections
import ctypes
import functools
import math

import numpy as np

from . import _arrays, _complex, _fast
from ._interop import accepts_foreign_arrays
from ._call import DEFAULT_PRECISION, Call, ScipyArgumentError, context_in_place, in_place, variant_arg, \
    axis_arg as _axis_arg, cval_arg as _cval_arg, filtered_axes as _filtered_axes, \
    mode_arg as _mode_arg, origin_list as _origin_list
from ._kept import kept as _kept, on_kind as _on_kind
from ._convert import F32, assign, astype, contiguous, empty_like, empty_like_kind, fill_slices, float32_contiguous, \
    moveaxes_last, on_device, overlaps, store, take
from ._native import lib, check, DTYPES as _NATIVE_DTYPES, InvalidArgument, MODES, SepfilterAxis, SepfilterDesc, \
    Unsupported, SEPFILTER_VERTICAL_FIRST, SEPFILTER_HORIZONTAL_FIRST, SEPFILTER_SUM, SEPFILTER_SUMS_FMA, \
    SEPFILTER_SUMS_SCIPY

NARROW = tuple(np.dtype(n) for n in ("float32", "float16", "uint8", "int8", "uint16", "int16"))  # computed in float32
# in float64, as scipy computes; bool as its bytes (scipy reads an unsigned char and casts into one)
WIDE = tuple(np.dtype(n) for n in ("float64", "int32", "int64", "uint32", "uint64", "bool"))
DTYPES = NARROW + WIDE
CONSTANT, REFLECT, MIRROR, NEAREST, WRAP = 0, 1, 2, 3, 4


def _check_origin(o, side, axis):
    lo, hi = -(side // 2), (side - 1) // 2
    if not lo <= o <= hi:
        raise InvalidArgument("invalid argument",
                              f"origin = {o} on axis {axis}: a {side}-tap side takes origins {lo} .. {hi}")


def _origin_args(origin, weights_shape):
    """The origins of weights filtering every axis of an input of their rank, checked."""
    origins = _origin_list(origin, len(weights_shape))
    for axis, (o, side) in enumerate(zip(origins, weights_shape)):
        _check_origin(o, int(side), axis)
    return origins


def _dtype_arg(dtype, name):
    """A dtype memhier.ndimage reads and writes, or a refusal that names it and says what to do."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name}: {dtype!r} is not a dtype") from None
    if dt not in DTYPES:
        raise Unsupported("unsupported", f"{name}: dtype {dt}; memhier.ndimage reads and writes "
                          f"{', '.join(d.name for d in NARROW)} (computing in float32) and "
                          f"{', '.join(d.name for d in WIDE)} (computing in float64)")
    return dt


def _array(input):
    """The input checked: an array of any rank and of a dtype in DTYPES, strided or not (an
    Operand this function made is returned as it is)."""
    if isinstance(input, _arrays.Operand):
        return input
    if isinstance(input, (list, tuple)):  # scipy's numpy.asarray: numpy's dtypes (int64, float64)
        input = np.asarray(input)
    op = _arrays.Operand(input, "input")
    if not isinstance(op.dtype, np.dtype) or op.dtype not in DTYPES:
        _dtype_arg(op.dtype if isinstance(op.dtype, np.dtype) else str(op.dtype).split(".")[-1], "input")
    if len(op.shape) == 0:
        raise ValueError("input: a 0-d array; filters need at least one axis")
    return op


def _output_dtype(output, src):
    """The dtype scipy's `output` names: the input's for None, else the dtype or the array's."""
    if output is None:
        return src.dtype
    if isinstance(output, (type, np.dtype, str)):
        return _dtype_arg(output, "output")
    return _arrays.Operand(output, "output").dtype


def _result(output, src):
    """scipy's `output`: None (the input's dtype), a dtype, or an array of the input's kind,
    device and shape to write (strided or not)."""
    shape = tuple(src.shape)
    if output is None or isinstance(output, (type, np.dtype, str)):
        dtype = _output_dtype(output, src)
        return _arrays.made(empty_like_kind(src, shape, dtype), "output", src, shape, dtype)
    op = _arrays.Operand(output, "output")
    _dtype_arg(op.dtype, "output")
    if op.kind == "numpy" and not op.obj.flags.writeable:
        raise ValueError("output: a read-only array (its flags.writeable is False); pass a writable one")
    _arrays.same_place(src, op)
    if tuple(op.shape) != shape:
        raise ValueError(f"output: shape {tuple(op.shape)}, the call writes {shape}")
    return op


def _filtered(src, output, run, out=None):
    """The frame of correlate: the input (src, checked by _array) read as float32 (itself when it
    is float32 and contiguous), run(x, y) computing into a float32 array y, y stored into
    `output` with scipy's cast; y is the output itself when that is float32, contiguous and apart
    from the input. `out`: _result(output, src) when the caller has made it already."""
    out = _result(output, src) if out is None else out
    if src.size == 0:
        return out.obj
    x = float32_contiguous(src)
    direct = out.dtype == F32 and out.contiguous and (output is None or not overlaps(out, src))
    y = out.obj if direct else empty_like_kind(src, tuple(src.shape), F32)
    run(src if x is src.obj else _arrays.Operand(x, "input"), out if direct else _arrays.Operand(y, "output"))
    if not direct:
        with on_device(src):
            store(y, out.obj, src.kind)
    return out.obj


def _in_float64(*dtypes):
    """Whether a call reading or writing these dtypes computes in float64: a wide type among them
    (sepfilter's rule, mh_sepfilter_in_double)."""
    return any(d in WIDE for d in dtypes)


def _stored_once(total, output, options):
    """float64 sums stored into `output` (an array, or a dtype) with scipy's cast, once: sepfilter's
    pass of the single tap 1 along the last axis."""
    return _correlate1d(_arrays.Operand(total, "input"), np.ones(1), len(total.shape) - 1, output, "nearest", 0.0, 0,
                        options, keep=False)


def _real(w):
    """Host weights of real numbers (bool as 0 and 1, as scipy reads them), or TypeError."""
    if w.dtype != np.bool_ and (not np.issubdtype(w.dtype, np.number) or np.issubdtype(w.dtype, np.complexfloating)):
        raise TypeError(f"weights: dtype {w.dtype}; expected real numbers")
    return w


def _to_host(weights):
    """Any array-like of weights as a NumPy array (CuPy's .get(), PyTorch's .cpu())."""
    if isinstance(weights, np.ndarray):
        return weights
    if hasattr(weights, "detach"):
        return weights.detach().cpu().numpy()
    if hasattr(weights, "get") and hasattr(weights, "shape"):
        return weights.get()
    return np.asarray(weights)


def _usable_in_place(given, src):
    """Whether weights (an Operand) are read where they are: float32 and contiguous on the input's
    device, as the kernels take them."""
    return given.kind == src.kind and given.device == src.device and given.dtype == F32 and given.contiguous


def _weights(weights, src):
    """(w, None) for weights already on the input's device as float32 and contiguous, used as
    they are (no copy, no wait for the stream); (None, host) for others: a float32 C-contiguous
    NumPy array, for _plan to shape and then bring to the device (_on_kind)."""
    try:
        given = _arrays.Operand(weights, "weights")
    except TypeError:
        given = None
    host = None
    if given is not None and _usable_in_place(given, src):
        w = given.obj
    else:
        host = np.ascontiguousarray(_real(_to_host(weights)), dtype=F32)
        w = None
    shape = tuple((w if host is None else host).shape)
    if 0 in shape or len(shape) == 0:
        raise ValueError(f"weights: shape {shape} holds no filter weights")
    return w, host


def _flip(w, kind):
    if kind == "torch":
        return w.flip(tuple(range(w.dim()))).contiguous()
    return contiguous(w[(slice(None, None, -1),) * w.ndim], kind)


def _reversed_on_device(w, src):
    """Weights the kernels read on src's device, reversed along every axis into a new array there
    (convolve's where the library does not read the filter reversed itself, each call: a new
    array, so calls on other streams never share one)."""
    with on_device(src):
        return _flip(w, src.kind)


class _LibraryPlan:
    """An mh_conv2d_plan of host weights (mh_conv2d_plan_create: its rank and factors found once,
    the device copy queued on the caller's stream without waiting), destroyed with the object."""

    def __init__(self, context, host):
        self.handle = ctypes.c_void_p()
        check(lib.mh_conv2d_plan_create(context.handle, host.ctypes.data, host.shape[0], host.shape[1],
                                        ctypes.byref(self.handle)), context.handle)
        self._destroy = lib.mh_conv2d_plan_destroy

    def __del__(self):
        if self.handle:
            self._destroy(self.handle)


_PLANS = collections.OrderedDict()  # (context device, shape, bytes) -> _LibraryPlan


def _library_plan(context, host):
    """The plan of these host weights on the context's device, kept by content (_kept.KEPT of them)."""
    return _kept(_PLANS, (context.device, host.shape, host.tobytes()), lambda: _LibraryPlan(context, host))


def _runs_planned(host_w, kshape):
    """Whether a call runs through the library plan of its host weights (mh_conv2d_planned_mode):
    where they came from the host in the filter's own shape. No row then reads them back, and
    auto may take lowrank."""
    return host_w is not None and tuple(host_w.shape) == tuple(kshape)


def _library_conv2d(h, variant, shape, x, w, kshape, tail, y, library_plan=None, reversed_=False):
    """The library's call (its status) for an image (H, W) or a stack (N, H, W) of `shape` at
    address x into y: through library_plan where there is one, else with the weights at w (read
    reversed along both axes where reversed_ is set: convolve's). tail: (mode code, cval, row
    origin, column origin)."""
    images, rows, cols = _fast.view_sizes(_fast.trailing_spans(len(shape), 2), shape)
    if library_plan is not None:
        return lib.mh_conv2d_planned_mode(h, variant, library_plan.handle, x, images, rows, cols, *tail, y)
    if reversed_:
        return lib.mh_conv2d_mode_reversed(h, variant, x, images, rows, cols, w, *kshape, *tail, y)
    if len(shape) == 3:  # a stack: one call (regtile filters it in one launch)
        return lib.mh_conv2d_mode_batched(h, variant, x, images, rows, cols, w, *kshape, *tail, y)
    return lib.mh_conv2d_mode(h, variant, x, rows, cols, w, *kshape, *tail, y)


def _conv2d(x, w, y, mode_code, cval, origins, variant, device, context, precision, host_w=None):
    """The library's call on float32 contiguous arrays: x and y one image (H, W) or a stack
    (N, H, W) of them, w the 2-D weights on x's device, host_w the host array they came from
    (_runs_planned)."""
    im = _arrays.operand(x, "input", "float32", (2, 3))
    fi = _arrays.operand(w, "weights", "float32", (2,))
    os_ = _arrays.operand(y, "output", "float32", (2, 3))
    call = Call([im, fi], device, context, precision)
    plan = _library_plan(call.context, host_w) if _runs_planned(host_w, fi.shape) else None
    call.run(_library_conv2d(call.ctx, variant_arg(variant), im.shape, call.ptr(im), None if plan else call.ptr(fi),
                             fi.shape, (mode_code, cval, origins[0], origins[1]), call.out_ptr(os_), plan))


def _array_of(a):
    """The array of an Operand, or a itself."""
    return a.obj if isinstance(a, _arrays.Operand) else a


class _Plan:
    """One correlation of float32 arrays: the weights (squeezed of their sides of 1) along
    `axes` of the input, with an origin each, in a mode; run(x, y) runs it on arrays of the
    input's kind. Past two axes, the slow axes are a loop of 2-D correlations of gathered slices."""

    def __init__(self, src, w, axes, origins, mode_code, cval, options, host_w=None):
        self.kind, self.w, self.axes, self.origins = src.kind, w, list(axes), list(origins)
        self.mode, self.cval, self.options, self.host_w = mode_code, cval, options, host_w
        self.kept_call = None  # a kept plan's _KeptCall, where its calls take one

    def run(self, x, y, w=None):
        """x, y: Operands of float32 contiguous arrays of the input's shape; w: weights to run
        in place of the plan's (a kept plan's call with its own weights of the same shape)."""
        if len(self.axes) == 1:
            self._along_one_axis(x.obj, y.obj)
        elif len(self.axes) == 2:
            self._over_two_axes(x, y, self.w if w is None else w, self.axes, self.origins, self.host_w)
        else:
            self._over_more_axes(x.obj, y.obj)

    def _along_one_axis(self, x, y):
        """Lines along the axis, viewed without a copy: (A, L) with the filter along the columns
        for the last axis, else a stack (A, L, B) filtered along its rows."""
        shape, axis = tuple(x.shape), self.axes[0]
        before, length = math.prod(shape[:axis]), shape[axis]
        after = math.prod(shape[axis + 1:])
        k = int(self.w.shape[0])
        if axis == len(shape) - 1:
            lines, w2, origins = (before, length), self.w.reshape(1, k), (0, self.origins[0])
        else:
            lines, w2, origins = (before, length, after), self.w.reshape(k, 1), (self.origins[0], 0)
        _conv2d(x.reshape(lines), w2, y.reshape(lines), self.mode, self.cval, origins, *self.options)

    def _over_two_axes(self, x, y, w2, axes, origins, host_w=None):
        """An image (H, W) or a stack (A, H, W) when the axes are the last two (x and y: arrays or
        their Operands, taken as they are); else those axes moved last (a copy in and a store
        out). host_w: w2 as the host array it came from, where it did."""
        shape, (a, b) = tuple(x.shape), axes
        if (a, b) == (len(shape) - 2, len(shape) - 1):
            if len(shape) > 3:
                stack = (math.prod(shape[:a]), shape[a], shape[b])
                x, y = _array_of(x).reshape(stack), _array_of(y).reshape(stack)
            _conv2d(x, w2, y, self.mode, self.cval, origins, *self.options, host_w)
            return
        x, y = _array_of(x), _array_of(y)
        xm = contiguous(moveaxes_last(x, self.kind, (a, b)), self.kind)
        ym = empty_like(xm, self.kind)
        stack = (math.prod(xm.shape[:-2]), shape[a], shape[b])
        _conv2d(xm.reshape(stack), w2, ym.reshape(stack), self.mode, self.cval, origins, *self.options, host_w)
        store(ym, moveaxes_last(y, self.kind, (a, b)), self.kind)

    def _over_more_axes(self, x, y):
        """The sum over the weights' slow indices of 2-D correlations over the last two filtered
        axes of the input's slices gathered at those offsets (the mode applied to the indices)."""
        slow, slow_origins = self.axes[:-2], self.origins[:-2]
        sides = tuple(int(s) for s in self.w.shape[:-2])
        y[...] = 0
        part = empty_like(y, self.kind)
        for offsets in np.ndindex(*sides):
            xs = _gathered(x, self.kind, zip(slow, offsets, sides, slow_origins), self.mode, self.cval)
            self._over_two_axes(contiguous(xs, self.kind), part, contiguous(self.w[offsets], self.kind),
                                self.axes[-2:], self.origins[-2:])
            y += part


def _gathered(x, kind, shifts, mode_code, cval):
    """x read at a tap's offset along each of some axes (shifts: (axis, tap j, side, origin)), the
    mode applied to the indices (cval where 'constant' reaches past the edge): a new array."""
    for axis, j, side, o in shifts:
        n = x.shape[axis]
        index, outside = border_index(np.arange(n) + j - (side // 2 + o), n, mode_code)
        x = take(x, kind, index, axis)
        if mode_code == CONSTANT:
            fill_slices(x, kind, outside, axis, cval)
    return x


def border_index(pos, n, mode_code):
    """Where each position (a host int array, possibly outside 0 .. n-1) reads in the input, and
    which positions lie outside it (their reads stand for cval in 'constant')."""
    outside = (pos < 0) | (pos >= n)
    if mode_code in (CONSTANT, NEAREST):
        return np.clip(pos, 0, n - 1), outside
    if mode_code == WRAP:
        return pos % n, outside
    if mode_code == MIRROR and n == 1:
        return np.zeros_like(pos), outside
    period = 2 * n if mode_code == REFLECT else 2 * n - 2
    p = pos % period
    return np.where(p < n, p, period - 1 - p if mode_code == REFLECT else period - p), outside


def _matched_axes(ndim, wshape, axes, origin, flip):
    """The filtered axes in increasing order and their origins, checked, as scipy matches weights
    of shape wshape to them: the weights' axes to the filtered axes in increasing order, the
    origins to the axes as `axes` lists them (when it names fewer axes than the input has; else to
    the axes in order); for convolve each origin mirrored (moved by one on an even side)."""
    ax = _filtered_axes(axes, ndim)
    if len(wshape) != len(ax):
        raise ScipyArgumentError(f"weights: {len(wshape)}-D of shape {wshape}; the input's filtered axes {tuple(ax)} "
                                 f"take {len(ax)}-D weights (scipy: weights.ndim ({len(wshape)}) must match "
                                 f"len(axes) ({len(ax)}))")
    given = _origin_list(origin, len(ax))
    origin_of = dict(zip(ax, given)) if len(ax) < ndim else dict(enumerate(given))
    ax = sorted(ax)
    origins = [origin_of[a] for a in ax]
    for o, side, a in zip(origins, wshape, ax):
        _check_origin(o, side, a)
    if flip:
        origins = [-o - (1 - s % 2) for o, s in zip(origins, wshape)]
    return ax, origins


def _plan(src, weights, axes, mode, cval, origin, flip, options):
    """The weights brought to the input's device and matched to the filtered axes as scipy
    matches them: the weights' axes to the filtered axes in increasing order, the origins to the
    axes as `axes` lists them (when it names fewer axes than the input has; else to the axes in
    order). For convolve the weights reversed and each origin mirrored (moved by one on an even
    side). Sides of 1 are dropped: they only scale."""
    ndim = len(src.shape)
    _filtered_axes(axes, ndim)
    mode_code, cval = _mode_arg(mode), _cval_arg(cval)
    w, host = _weights(weights, src)
    wshape = tuple(int(s) for s in (w if host is None else host).shape)
    ax, origins = _matched_axes(ndim, wshape, axes, origin, flip)
    if flip:  # host weights flipped on the host, before their one copy to the device
        if host is None:
            w = _reversed_on_device(w, src)
        else:
            host = np.ascontiguousarray(host[(slice(None, None, -1),) * host.ndim])
    keep = [i for i, s in enumerate(wshape) if s > 1] or [len(wshape) - 1]
    kept = tuple(wshape[i] for i in keep)
    if host is None:
        w = w if kept == wshape else w.reshape(kept)
    else:
        host = host.reshape(kept)
        w = _on_kind(host, src)
    return _Plan(src, w, [ax[i] for i in keep], [origins[i] for i in keep], mode_code, cval, options,
                 host if len(keep) == 2 else None)


def _typed(src, out, output, plan):
    """Whether the library filtered src into out in their own dtypes (mh_conv2d_typed: the
    loaders convert, no float32 copies): for other dtypes than float32 over the last two axes
    of contiguous arrays apart from each other, where a row takes them (walk and regtile on a
    GPU, cpu-omp); otherwise False and nothing written."""
    ndim = len(src.shape)
    if (src.dtype == F32 and out.dtype == F32) or plan.axes != [ndim - 2, ndim - 1] or src.size == 0:
        return False
    if not (src.contiguous and out.contiguous) or (output is not None and overlaps(out, src)):
        return False
    fi = _arrays.operand(plan.w, "weights", "float32", (2,))
    rows, cols = (int(n) for n in src.shape[-2:])
    variant, device, context, precision = plan.options
    call = Call([src, fi, out], device, context, precision)
    try:
        call.run(lib.mh_conv2d_typed(call.ctx, variant_arg(variant), call.ptr(src), _NATIVE_DTYPES[src.dtype.name],
                                     math.prod(src.shape[:-2]), rows, cols, call.ptr(fi), *fi.shape, plan.mode,
                                     plan.cval, plan.origins[0], plan.origins[1], call.out_ptr(out),
                                     _NATIVE_DTYPES[out.dtype.name]))
    except Unsupported:
        return False
    return True


_PREPARED = collections.OrderedDict()  # a correlate call's signature -> (_Plan, how a call passes its weights)

# How a kept plan gets its weights each call: its own copy (NumPy weights, kept by content), the
# call's device weights as they are, or the call's device weights reversed (convolve): the plan
# holds none of the caller's arrays, whose content may change between calls.
OWN, IN_PLACE, FLIPPED = "own", "in place", "flipped"


def _direct_output(output, src):
    """The caller's output array where a correlate call writes it directly (_filtered's direct
    case): float32, contiguous, of the input's kind, device and shape, writable and apart from the
    input; else None (no array, or one the general path converts into or refuses)."""
    if output is None or isinstance(output, (type, np.dtype, str)):
        return None
    try:
        out = _result(output, src)
    except (TypeError, ValueError):
        return None
    return out if out.dtype == F32 and out.contiguous and not overlaps(out, src) else None


def _signature(src, weights, into_given, mode, cval, origin, axes, flip, options):
    """What the plan of a correlate call depends on, for the calls whose plan is kept: a float32
    contiguous input (its kind, device and number of axes: the plan serves every shape, so a loop
    over images of many sizes plans once), a new output or the caller's written directly
    (into_given, _direct_output), and weights that are a NumPy array (keyed by content) or the
    input's kind of array (keyed by place, dtype and shape: the kernel reads them, the binding
    never does). (key, the weights' Operand: None for NumPy weights, whose content the key
    holds), or None for other calls, planned anew."""
    if src.dtype != F32 or not src.contiguous or src.size == 0:
        return None
    if type(weights) is np.ndarray:  # read from the array itself: an Operand would ask NumPy for its address too
        given = None
        key = ("numpy",) + _content_key(weights)
    elif src.kind == "numpy":
        return None
    else:
        try:
            given = _arrays.Operand(weights, "weights")
        except TypeError:
            return None
        key = (given.kind, given.device, given.dtype, given.contiguous, given.shape)
    variant, device, context, precision = options
    try:  # numbers with their types: a key equal for False and 0 would skip the check refusing False
        key = (src.kind, src.device, len(src.shape), key, _typed_key((cval, origin, axes, device)), mode, variant,
               precision, context, flip, into_given)
        hash(key)
    except TypeError:  # an unkeyable argument (a refusal, or a form kept calls do not cover)
        return None
    return key, given


def _correlate(input, weights, output, mode, cval, origin, axes, variant, device, context, flip, precision):
    """correlate and convolve: the plan (weights checked, matched to the axes, on the device)
    made once for a signature that _signature keys and kept (_kept.KEPT of them), so that a loop of
    calls pays for the launch, the output and the checks of its arrays alone."""
    src = _array(input)
    if _in_float64(src.dtype, src.dtype if output is None else np.dtype(_output_dtype(output, src))):
        return _correlate_wide(src, weights, output, mode, cval, origin, axes, flip, (variant, device, context))
    options = (variant, device, context, precision)
    given_out = _direct_output(output, src)
    signature = _signature(src, weights, given_out is not None, mode, cval, origin, axes, flip, options) \
        if output is None or given_out is not None else None
    kept = _PREPARED.get(signature[0]) if signature is not None else None
    if kept is not None:
        try:
            _PREPARED.move_to_end(signature[0])
        except KeyError:  # dropped by another thread since: this call still has its plan
            pass
        plan, weights_from = kept
        if plan.kept_call is not None:
            y = plan.kept_call(src, signature[1], given_out)
            plan.kept_call.offer(src, signature[1], y)
            return y
        out = given_out if given_out is not None else _arrays.Operand(empty_like_kind(src, tuple(src.shape), F32),
                                                                        "output")
        plan.run(src, out, _call_weights(weights_from, signature[1], src))
        return out.obj
    by_content = signature is not None and signature[1] is None
    # a plan kept by its weights' content is made from a copy of them: nothing in it is the
    # caller's array, which may change after this call
    plan = _plan(src, weights.copy() if by_content else weights, axes, mode, cval, origin, flip, options)
    out = given_out if given_out is not None else _result(output, src)
    if _typed(src, out, output, plan):
        return out.obj
    result = _filtered(src, output, plan.run, out)
    weights_from = _weights_from(signature, src, plan, flip) if len(plan.axes) == 2 else None
    if weights_from is not None:
        # a plan's own copy is read once; a caller's device weights never stay in it
        if weights_from == OWN:
            plan.w = _arrays.Operand(plan.w, "weights")
        plan.kept_call = _KeptCall.of(src, plan, weights_from)
        if weights_from != OWN:
            plan.w = None
        _kept(_PREPARED, signature[0], lambda: (plan, weights_from))
        if plan.kept_call is not None:  # this call ran as its kept call will
            plan.kept_call.offer(src, signature[1], result)
    return result


def _correlate_wide(src, weights, output, mode, cval, origin, axes, flip, options):
    """correlate and convolve on a type computed in float64 (input or output), as scipy computes
    them: 2-D weights over the last two axes in one library call in scipy's order
    (_correlate_in_one_call); otherwise the weights in float64 on the host, one 1-D correlation in float64 (sepfilter) along the
    filtered axis of the longest side for each index of the others, read at that index's offset
    (_gathered: the mode applied to the indices), the terms added in float64 and the sum stored once
    in the output's dtype with scipy's cast. A row whose every weight is within DBL_EPSILON of 0 is
    skipped, as scipy's footprint skips such weights (a NaN it would meet stays out); a zero inside
    a row meets NaN as correlate1d's does. A filter of one axis is one correlate1d."""
    w = _real(np.asarray(_to_host(weights))).astype(np.float64)
    if w.size == 0:
        raise ValueError("weights: no filter weights given")
    ndim = len(src.shape)
    ax, origins = _matched_axes(ndim, tuple(w.shape), axes, origin, flip)
    if flip:
        w = w[(slice(None, None, -1),) * w.ndim]
    mode_code, cval = _mode_arg(mode), _cval_arg(cval, in_float64=True)
    done = _correlate_in_one_call(src, w, ax, origins, mode_code, cval, output, options)
    if done is not None:
        return done
    out_dtype = np.dtype(_output_dtype(output, src))
    if out_dtype.kind in "iub" and w.ndim > 1 and not _exact_in_any_order(w, src.dtype, out_dtype):
        total = _correlate_in_scipys_order(src, w, ax, origins, mode_code, cval)
        return _stored_once(total, src.dtype if output is None else output, options)
    along = len(ax) - 1 - int(np.argmax(w.shape[::-1]))  # the longest side's (the last of equal ones)
    w = np.moveaxis(w, along, -1)  # the others' sides first, in their order
    others = [(ax[i], origins[i]) for i in range(len(ax)) if i != along]
    if not others:
        return _correlate1d(src, w, ax[along], output, mode, cval, origins[along], options, keep=False)
    with on_device(src):
        x = contiguous(src.obj, src.kind)
    total = None
    for index in np.ndindex(*w.shape[:-1]):
        row = w[index]
        if not np.any(np.abs(row) > np.finfo(np.float64).eps):
            continue
        shifts = [(a, j, int(side), o) for (a, o), j, side in zip(others, index, w.shape[:-1])]
        xs = _gathered(x, src.kind, shifts, mode_code, cval)
        term = _correlate1d(_arrays.Operand(xs, "input"), row, ax[along], np.float64, mode, cval, origins[along],
                            options, keep=False)
        if total is None:
            total = term
        else:
            with on_device(src):
                total += term
    if total is None:  # every weight within DBL_EPSILON of 0: scipy reads no input
        with on_device(src):
            total = empty_like_kind(src, tuple(src.shape), np.float64)
            total[...] = 0
    out_dtype = np.dtype(_output_dtype(output, src))
    if out_dtype == np.float64 and (output is None or isinstance(output, (type, np.dtype, str))):
        return total
    return _stored_once(total, src.dtype if output is None else output, options)


def _correlate_in_one_call(src, w, ax, origins, mode_code, cval, output, options):
    """A correlation of 2-D float64 weights (flipped already for convolve) over an image's or a
    stack's last two axes, computed by the library as scipy computes it (mh_conv2d_float64: each
    output's products added in the weights' C order in float64, stored with scipy's cast): the
    output, or None where the call does not fit it (other axes, float16 on either side, a variant
    naming another op's row, a row refusing it: on a GPU, sides past 31) and nothing is written.
    A strided input is read from a contiguous copy (a complex array's parts); a strided output,
    or one overlapping the input, is written from the call's own."""
    ndim = len(src.shape)
    variant, device, context = options
    if w.ndim != 2 or list(ax) != [ndim - 2, ndim - 1] or src.size == 0 or not _names_conv2d(variant):
        return None
    in_name, out_name = (str(getattr(d, "name", d)) for d in (src.dtype, _output_dtype(output, src)))
    if not {in_name, out_name} <= _FLOAT64_CALL_DTYPES:
        return None
    out = _result(output, src)
    shape = tuple(src.shape)
    with on_device(src):
        x = src if src.contiguous else _arrays.made(contiguous(src.obj, src.kind), "input", src, shape, src.dtype)
        direct = out.contiguous and (output is None or not overlaps(out, src))
        y = out if direct else _arrays.made(empty_like_kind(src, shape, out.dtype), "output", src, shape, out.dtype)
    w = np.ascontiguousarray(w, dtype=np.float64)
    call = Call([x, y], device, context)
    try:
        call.run(lib.mh_conv2d_float64(call.ctx, variant_arg(variant), call.ptr(x), _NATIVE_DTYPES[in_name],
                                       math.prod(shape[:-2]), *shape[-2:], w.ctypes.data, *w.shape, mode_code, cval,
                                       origins[0], origins[1], call.out_ptr(y), _NATIVE_DTYPES[out_name]))
    except Unsupported:
        return None
    if not direct:
        with on_device(src):
            assign(out.obj, y.obj, src.kind)
    return out.obj


# The types mh_conv2d_float64 reads and writes (bool as its bytes): all the library's but the
# 16-bit floats.
_FLOAT64_CALL_DTYPES = set(_NATIVE_DTYPES) - {"float16", "bfloat16"}


def _names_conv2d(variant):
    """Whether a variant leaves conv2d's row to auto or names one (not sepfilter's rows, which a
    float64 call's passes run on)."""
    return variant in (None, "auto") or str(variant).startswith("conv2d/")


def _correlate_in_scipys_order(src, w, ax, origins, mode_code, cval):
    """The float64 sums of an N-D correlation added as scipy's NI_Correlate adds them: for each
    output 0.0, then value times weight for each weight in C order of (flipped, for convolve)
    weights, skipping those within DBL_EPSILON of 0, each product rounded and then added (no fused
    multiply-add). An integer output truncates the sum, so a sum one rounding below a whole number
    stores one less: with weights 1/9 over nine 5s scipy's sum is 4.999999999999999 and it stores
    4. Adding the rows' 1-D correlations (_correlate_wide's faster order) landed on the other side
    of whole numbers for ~5% of a box filter's outputs. The input extended by the mode once
    (_extended); then a tap a pass over the whole array: a view of the extension, a multiply and
    an add."""
    with on_device(src):
        x = _float64_of(src.obj, src.kind)
        sides = [(ax[d], int(side), origins[d]) for d, side in enumerate(w.shape)]
        wide = _extended(x, src.kind, sides, mode_code, cval)
        total = None
        for index in np.ndindex(*w.shape):
            weight = float(w[index])
            if not abs(weight) > np.finfo(np.float64).eps:
                continue
            term = _tap_view(wide, x.shape, [(a, j) for (a, _, _), j in zip(sides, index)]) * weight
            if total is None:
                total = term
            else:
                total += term
        if total is None:  # every weight within DBL_EPSILON of 0: scipy reads no input
            total = empty_like_kind(src, tuple(src.shape), np.float64)
            total[...] = 0
    return total


def _float64_of(obj, kind):
    """A contiguous float64 copy of an array, a bool array's bytes as their values (scipy reads a
    bool as an unsigned char: a byte of 254 that an earlier cast stored reads as 254.0)."""
    x = contiguous(obj, kind)
    if str(x.dtype).endswith("bool"):  # NumPy's and CuPy's 'bool', PyTorch's 'torch.bool'
        x = x.view(_arrays._torch().uint8 if kind == "torch" else np.uint8)
    return astype(x, kind, np.float64)


def _extended(x, kind, sides, mode_code, cval):
    """x extended along each filtered axis by the mode (sides: (axis, filter side, origin)), so
    that tap j of an output at i reads position i + j: the values _gathered reads, in one array."""
    for axis, side, origin in sides:
        n = x.shape[axis]
        index, outside = border_index(np.arange(n + side - 1) - (side // 2 + origin), n, mode_code)
        x = take(x, kind, index, axis)
        if mode_code == CONSTANT:
            fill_slices(x, kind, outside, axis, cval)
    return x


def _tap_view(wide, shape, taps):
    """The view of an extension (_extended) that tap j along each axis (taps: (axis, j)) reads."""
    index = [slice(None)] * len(shape)
    for axis, j in taps:
        index[axis] = slice(j, j + shape[axis])
    return wide[tuple(index)]


def _weights_from(signature, src, plan, flip):
    """How a kept plan of this call would get its weights (OWN, IN_PLACE, FLIPPED), or None where
    the plan is not kept: a call _signature does not key, or a plan holding its own copy of device
    weights (a conversion, a reshape or a copy from another device: their content is not in the
    key)."""
    if signature is None:
        return None
    given = signature[1]
    if given is None:
        return OWN
    if plan.w is given.obj:
        return IN_PLACE
    if flip and _usable_in_place(given, src) and tuple(plan.w.shape) == tuple(given.shape):
        return FLIPPED  # _plan reversed them: a copy of the same shape, and nothing else
    return None


class _KeptCall:
    """A kept plan's library call, for the plans whose every call is one mh_conv2d_* call over
    the input's last two axes (an image, or a stack of them) on the input's own device, with the
    plan's own weights, the call's weights in place, or the call's weights read reversed
    (convolve: mh_conv2d_mode_reversed, the library reversing them into its own copy): the function and
    every argument but the arrays' addresses fixed when the plan is kept. A call then takes its
    thread's context on the caller's stream, allocates its output and calls the library: what
    _Plan.run and _conv2d do for it, less what the kept signature's key already holds (the
    input's kind, device, dtype, number of axes and contiguity, the weights' kind, device and shape, the
    options: what _conv2d's checks read, and the first call passed them). A call into the caller's
    output array writes it instead (_direct_output checks it each call). The input's shape is the
    call's own: the key holds its number of axes, so images of every shape share the plan."""

    __slots__ = ("context", "precision", "variant", "tail", "kshape", "own_w", "host_w", "library_plan", "flip")

    @classmethod
    def of(cls, src, plan, weights_from):
        """The plan's kept call, or None where its calls take _Plan.run: axes other than the last
        two, more than three axes, or arrays staged to another device (an explicit device, or a
        context elsewhere)."""
        variant, device, context, precision = plan.options
        last_two = plan.axes == [len(src.shape) - 2, len(src.shape) - 1]
        if not last_two or len(src.shape) > 3 or not in_place(src, device, context):
            return None
        return cls(src, plan, weights_from)

    def __init__(self, src, plan, weights_from):
        """plan.w: the Operand of the plan's own weights (OWN), or the call's weights (IN_PLACE), or
        their reversed copy (FLIPPED, which has their shape)."""
        variant, _, self.context, self.precision = plan.options
        self.variant = variant_arg(variant)
        self.tail = (plan.mode, plan.cval, plan.origins[0], plan.origins[1])
        self.kshape = tuple(int(k) for k in plan.w.shape)
        self.own_w = plan.w if weights_from == OWN else None
        planned = weights_from == OWN and _runs_planned(plan.host_w, self.kshape)
        self.host_w, self.library_plan = (plan.host_w if planned else None), None
        self.flip = weights_from == FLIPPED

    def __call__(self, src, given, out=None):
        """The call on src with the call's weights `given` (or the plan's own) into `out`, the
        caller's output array (_direct_output), or a new one."""
        context = context_in_place(src, self.context, self.precision)
        shape = tuple(src.shape)
        y = out.obj if out is not None else empty_like_kind(src, shape, F32)
        if self.host_w is not None and self.library_plan is None:
            self.library_plan = _library_plan(context, self.host_w)
        w = None if self.host_w is not None else given.ptr if given is not None else self.own_w.ptr
        check(_library_conv2d(context.handle, self.variant, shape, src.ptr, w, self.kshape, self.tail,
                              _arrays.address(src.kind, y), self.library_plan, self.flip), context.handle)
        return y

    def offer(self, src, given, y):
        """Offers this call (just made into y, with the call's weights `given`) to the compiled
        entry, which replays it for the next call of equal arguments (_fast)."""
        if not _fast.recording():
            return
        context = context_in_place(src, self.context, self.precision)
        if self.host_w is not None and self.library_plan is None:
            self.library_plan = _library_plan(context, self.host_w)
        shape = tuple(src.shape)
        nd = len(shape)  # 2 or 3 (_KeptCall.of): the call is made alike for every shape of nd axes
        spans = _fast.trailing_spans(nd, 2)  # images, rows, cols
        images, rows, cols = _fast.view_sizes(spans, shape)
        kernel = self.kshape + self.tail
        out = _arrays.made(y, "output", src, shape, F32)
        if self.library_plan is not None:
            _fast.offer("CONV2D_PLANNED_MODE", lib.mh_conv2d_planned_mode, self.variant, (images, rows, cols),
                        self.library_plan.handle.value, src, self.context, self.precision, out, self.library_plan,
                        kernel, view=(spans, nd))
            return
        w = given if given is not None else self.own_w
        if self.flip:
            form, fn = "CONV2D_MODE_REVERSED", lib.mh_conv2d_mode_reversed
        elif len(shape) == 3:
            form, fn = "CONV2D_MODE_BATCHED", lib.mh_conv2d_mode_batched
        else:
            form, fn = "CONV2D_MODE", lib.mh_conv2d_mode
        _fast.offer(form, fn, self.variant, (images, rows, cols), w.ptr, src, self.context, self.precision, out,
                    self.own_w, kernel, view=(spans, nd))


def _call_weights(weights_from, given, src):
    """The weights a kept plan runs with in this call (None: the plan's own)."""
    if weights_from == IN_PLACE:
        return given
    if weights_from == FLIPPED:
        return _arrays.Operand(_reversed_on_device(given.obj, src), "weights")
    return None


@_fast.entry("weights")
@accepts_foreign_arrays
@_complex.by_parts(1, conjugate=True)
def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None, variant="auto",
              device=None, context=None, precision="per-element"):
    """scipy.ndimage.correlate: out[p] = sum_i X[p + i - (k // 2 + origin)] * weights[i] over the
    filtered axes (every axis, or `axes`), X the input extended past its edges by `mode`.
    Weights of any rank: over the last two axes one launch for the whole array; over two other
    axes, those moved last first (a copy); over three or more, a 2-D correlation per weight
    index of the slower axes. variant, device and context as in memhier.conv2d. precision:
    'per-element' (the default, scipy's accuracy: every output within c eps32 sum |w| |x| of its
    own terms, a dark pixel beside bright ones included), or 'normwise' to let auto take the FFT
    rows (faster for many taps; an output's error then follows its tile's brightest inputs)."""
    return _correlate(input, weights, output, mode, cval, origin, axes, variant, device, context, False, precision)


@_fast.entry("weights")
@accepts_foreign_arrays
@_complex.by_parts(1)
def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None, variant="auto",
             device=None, context=None, precision="per-element"):
    """scipy.ndimage.convolve: correlate with the weights reversed along each axis (and each
    origin mirrored, as scipy does); precision as in correlate."""
    return _correlate(input, weights, output, mode, cval, origin, axes, variant, device, context, True, precision)


# ---- 1-D filters along an axis, and the filters scipy composes from them ----------------------

def _weights1d(weights):
    w = _to_host(weights)
    if w.ndim != 1:
        raise ValueError(f"weights: {w.ndim}-D of shape {w.shape}; a 1-D filter takes 1-D weights")
    if w.size == 0:
        raise ValueError("weights: no filter weights given")
    return w


@_fast.entry("weights")
@accepts_foreign_arrays
@_complex.by_parts(1, conjugate=True)
def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *, variant="auto",
                device=None, context=None):
    """scipy.ndimage.correlate1d along any axis of an array of any rank: every line along `axis`
    filtered alone, in one launch (sepfilter, reading and writing the arrays' own dtypes)."""
    return _correlate1d(_array(input), weights, axis, output, mode, cval, origin, (variant, device, context))


def _correlate1d(src, weights, axis, output, mode, cval, origin, options, keep=True):
    """correlate1d's passes, kept by the weights' content (host weights) or place (weights that
    sepfilter reads on the input's device) where keep is set, then run."""
    taps = _device_taps(weights, src)

    def make():  # from a copy (or an address): a kept pass holds none of the caller's arrays
        w = taps if taps is not None else np.array(_weights1d(weights), copy=True)
        return [_pass(w, _axis_arg(axis, len(src.shape)), mode, origin)]
    if taps is not None:  # a name of its own: no host weights' key can equal this one
        name, key = "correlate1d on the device", _taps_key(taps)
    else:
        name, key = "correlate1d", _content_key(weights)
    if key is None or not keep:
        passes = make()
    else:
        passes = _kept_passes(name, (len(src.shape), key, axis, mode, origin), make)
    # the compiled entry keys device weights by their address: a call whose passes hold a host
    # copy of them (weights not float32, or not contiguous) would replay that copy after the
    # caller has changed what the address holds
    replayable = keep and (taps is not None or key is not None)
    return _run_passes(src, output, passes, cval, options, replayable=replayable)


class _DeviceTaps:
    """Taps in device memory, which sepfilter's kernels read when they run: their address and
    count, never the array (a pass kept by the address holds none of the caller's arrays, and
    reads what the address holds at each call); reversed: read from the last (convolve1d's, which
    the library reverses on the stream each call: mh_sepfilter_axis.reversed)."""
    __slots__ = ("ptr", "size", "reversed")

    def __init__(self, ptr, size, reversed=False):
        self.ptr, self.size, self.reversed = ptr, size, reversed


def _device_taps(weights, src):
    """weights as _DeviceTaps where sepfilter can read them in place: a contiguous 1-D float32
    array on the input's device of 1 to MAX_TAPS taps (or _DeviceTaps already); else None (read to
    the host)."""
    if isinstance(weights, _DeviceTaps):
        return weights
    if src.kind == "numpy" or isinstance(weights, (np.ndarray, list, tuple)):
        return None
    try:
        given = _arrays.Operand(weights, "weights")
    except TypeError:
        return None
    if not _usable_in_place(given, src) or len(given.shape) != 1 or not 1 <= given.size <= MAX_TAPS:
        return None
    return _DeviceTaps(given.ptr, given.size)


def _taps_key(taps):
    """A pass's taps in a key: host taps by content, device taps by address and count."""
    return ("device", taps.ptr, taps.size, taps.reversed) if isinstance(taps, _DeviceTaps) else taps.tobytes()


def _content_key(weights):
    """A key of host weights by their content: a NumPy array's dtype, shape and bytes, or a list or
    tuple as it is (_typed_key takes numbers alone); None for anything else, above all arrays in
    device memory, whose content the binding does not read to make a key."""
    if type(weights) is np.ndarray:  # scalars alone, the shape's sides among them (_typed_key)
        return (weights.dtype.str,) + weights.shape + (weights.tobytes(),)
    return tuple(weights) if isinstance(weights, (list, tuple)) else None


@_fast.entry("weights")
@accepts_foreign_arrays
@_complex.by_parts(1)
def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *, variant="auto",
               device=None, context=None):
    """scipy.ndimage.convolve1d: correlate1d with the weights reversed (and the origin mirrored);
    weights sepfilter reads on the device are read reversed by the library, which reverses them on
    the stream each call (their pass kept by address, as correlate1d's); host weights are reversed
    here. Both replay from the compiled entry."""
    src = _array(input)
    if isinstance(origin, bool) or not isinstance(origin, (int, np.integer)):
        raise TypeError(f"origin: expected an int, got {origin!r}")
    options = (variant, device, context)
    taps = _device_taps(weights, src)
    if taps is not None:
        mirrored = -int(origin) - (1 - taps.size % 2)
        return _correlate1d(src, _DeviceTaps(taps.ptr, taps.size, reversed=True), axis, output, mode, cval, mirrored,
                            options)
    # device weights read to the host are not kept: the compiled entry keys them by their address,
    # and a replay would run this call's copy after the caller has changed what the address holds
    w = _weights1d(weights)
    return _correlate1d(src, w[::-1], axis, output, mode, cval, -int(origin) - (1 - w.size % 2), options,
                        keep=_content_key(weights) is not None)


# ---- the 1-D passes of scipy's separable filters, on sepfilter ----------------------------------

class _Pass:
    """One 1-D correlation: float32 taps (host, or _DeviceTaps), the same taps in float64 for calls
    computed in float64 (host; None for _DeviceTaps, which the kernels widen), the axis, origin,
    mode code and the divisor of its sum (scipy's uniform filter divides an exact sum)."""
    __slots__ = ("taps", "taps64", "axis", "origin", "mode", "divisor")

    def __init__(self, taps, taps64, axis, origin, mode, divisor):
        self.taps, self.taps64, self.axis, self.origin, self.mode, self.divisor = taps, taps64, axis, origin, mode, divisor


IDENTITY = _Pass(np.ones(1, np.float32), np.ones(1), None, 0, MODES["reflect"], 1)
MAX_TAPS = 127  # MH_SEPFILTER_MAX_TAPS: longer passes run on conv1d (_long_pass)


def _pass(weights, axis, mode, origin, divisor=1, weights64=None):
    """A pass checked: real weights (host weights, or _DeviceTaps), an int origin in scipy's
    range, a known mode. weights64: the weights in float64 where the float32 taps are rounded from
    other weights than `weights` hold (the Gaussian's), else None: weights as they are."""
    if isinstance(weights, _DeviceTaps):
        taps, taps64 = weights, None
    else:
        w = _real(np.asarray(weights))
        taps = np.ascontiguousarray(w, dtype=np.float32)
        taps64 = np.ascontiguousarray(w if weights64 is None else weights64, dtype=np.float64)
    if isinstance(origin, bool) or not isinstance(origin, (int, np.integer)):
        raise TypeError(f"origin: expected an int, got {origin!r}")
    _check_origin(int(origin), taps.size, axis)
    return _Pass(taps, taps64, axis, int(origin), _mode_arg(mode), int(divisor))


def _groups(passes, shape):
    """Consecutive passes over neighbouring axes, the later axis followed by at most 4 values
    (an image's channels), run as one fused call; the others (and passes of more than MAX_TAPS
    taps) one call each."""
    groups, i = [], 0
    while i < len(passes):
        if i + 1 < len(passes) and max(passes[i].taps.size, passes[i + 1].taps.size) <= MAX_TAPS:
            a, b = sorted((passes[i].axis, passes[i + 1].axis))
            if b == a + 1 and math.prod(shape[b + 1:]) <= 4:
                groups.append(passes[i:i + 2])
                i += 2
                continue
        groups.append(passes[i:i + 1])
        i += 1
    return groups


def _axis_struct(step, keep):
    keep.extend((step.taps, step.taps64))
    taps = step.taps
    pointer = ctypes.cast(taps.ptr, ctypes.POINTER(ctypes.c_float)) if isinstance(taps, _DeviceTaps) else \
        taps.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    pointer64 = step.taps64.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) if step.taps64 is not None else None
    reversed_ = isinstance(taps, _DeviceTaps) and taps.reversed
    return SepfilterAxis(pointer, taps.size, step.origin, step.mode, step.divisor, pointer64, int(reversed_))


def _group_view(group, ndim):
    """How sepfilter sees an array of ndim axes for a group: (spans, fixed), its (batch, rows,
    cols, channels) each the product of the sides of a span of axes (_fast.view_sizes), the
    group's vertical pass along rows and its horizontal one along cols (_describe), and the
    first axis whose side decides how the passes group (_groups: the values after a fused pair's
    axes), ndim where none does."""
    if len(group) == 2:
        a = min(group[0].axis, group[1].axis)
        return ((0, a), (a, a + 1), (a + 1, a + 2), (a + 2, ndim)), a + 2
    if group[0].axis == ndim - 1:  # along the last axis: the lines are rows
        return ((0, 0), (0, ndim - 1), (ndim - 1, ndim), (ndim, ndim)), ndim
    a = group[0].axis  # along another: the lines are the columns of (before, axis, after)
    return ((0, a), (a, a + 1), (a + 1, ndim), (ndim, ndim)), ndim


def _view(group, shape):
    """The array of `shape` as sepfilter sees it for a group: (batch, rows, cols, channels)."""
    return _fast.view_sizes(_group_view(group, len(shape))[0], shape)


def _describe(group, shape, in_type, out_type, cval, keep, summed=False):
    """The mh_sepfilter_desc of a group: the array viewed as (batch, rows, cols, channels) with
    the passes along rows (vertical) and cols (horizontal); summed: a group of two passes each
    from the input, added (laplace). Passes into an integer output whose truncation needs scipy's
    own sums ask for them (_library_adds_in_scipys_order)."""
    if len(group) == 2:
        a = min(group[0].axis, group[1].axis)
        vertical, horizontal = (group[0], group[1]) if group[0].axis == a else (group[1], group[0])
        order = SEPFILTER_SUM if summed else SEPFILTER_HORIZONTAL_FIRST if group[0].axis == a + 1 else \
            SEPFILTER_VERTICAL_FIRST
    elif group[0].axis == len(shape) - 1:
        vertical, horizontal, order = IDENTITY, group[0], SEPFILTER_HORIZONTAL_FIRST
    else:
        vertical, horizontal, order = group[0], IDENTITY, SEPFILTER_VERTICAL_FIRST
    view = _view(group, shape)
    scipys = not summed and _in_scipys_order(group, in_type, out_type) and \
        _library_adds_in_scipys_order(group, out_type)
    sums = SEPFILTER_SUMS_SCIPY if scipys else SEPFILTER_SUMS_FMA
    return SepfilterDesc(*view, _NATIVE_DTYPES[in_type.name], _NATIVE_DTYPES[out_type.name],
                         _axis_struct(vertical, keep), _axis_struct(horizontal, keep), order, cval, sums)


_DESCS = collections.OrderedDict()  # a group's passes by content, axes, dtypes, cval -> (desc, its taps)


def _kept_desc(group, shape, in_type, out_type, cval, summed):
    """(_describe's mh_sepfilter_desc of a group for `shape`, the taps it points into), kept by
    the passes' content and the number of axes (_kept.KEPT of them): a loop of calls with the same
    filter builds it once, for images of every shape; another shape gets a copy of the kept desc
    with its own view (_view). The desc points into copies of the taps, which the pair holds
    (keep the pair while the desc is used), so no later change to a caller's weights array
    reaches it."""
    key = (tuple((_taps_key(p.taps), None if p.taps64 is None else p.taps64.tobytes(), p.axis, p.origin, p.mode,
                  p.divisor) for p in group), len(shape), in_type, out_type, cval, summed)

    def make():
        keep = []
        own = [_Pass(p.taps if isinstance(p.taps, _DeviceTaps) else p.taps.copy(),
                     None if p.taps64 is None else p.taps64.copy(), p.axis, p.origin, p.mode, p.divisor)
               for p in group]
        return _describe(own, shape, in_type, out_type, cval, keep, summed), keep
    desc, keep = _kept(_DESCS, key, make)
    view = _view(group, shape)
    if (desc.batch, desc.rows, desc.cols, desc.channels) == view:
        return desc, keep
    shaped = SepfilterDesc.from_buffer_copy(desc)  # the kept desc is shared: never written
    shaped.batch, shaped.rows, shaped.cols, shaped.channels = view
    return shaped, keep


class _Passes(list):
    """A filter's kept passes, which never change once made, and the steps of the calls made with
    them (by shape, dtypes, cval and summing: each group of passes and its kept descriptor), so
    that a loop of calls finds its descriptors without keying the taps again."""

    def __init__(self, passes):
        super().__init__(passes)
        self.steps = {}


STEPS_KEPT = 16  # a kept filter's steps for this many kinds of call (shapes, dtypes) at most


_PASSES = collections.OrderedDict()  # a filter's name and typed arguments -> its passes


_KEYABLE = (int, float, str, bytes, type(None), np.generic)  # values a key holds as they are
_KEYABLE_EXACTLY = frozenset((int, float, str, bytes, type(None), bool))  # the common ones, found by type


def _key_part(value):
    """A value with its type (True is not 1, 2 is not 2.0); TypeError for any other kind of value
    (an array: its content may change while the key holds it)."""
    kind = type(value)
    if kind not in _KEYABLE_EXACTLY and not isinstance(value, _KEYABLE):
        raise TypeError(f"{kind.__name__} makes no key")
    return kind, value


def _typed_key(args):
    """args as a key that tells apart what the argument checks tell apart, scalars alone or in a
    list or tuple (which stay apart too); TypeError for anything else."""
    return tuple([(type(a),) + tuple(map(_key_part, a)) if isinstance(a, (list, tuple)) else _key_part(a)
                  for a in args])


def _kept_passes(name, args, make):
    """make()'s passes (checked and built from the filter's arguments: taps, axes, modes, origins)
    kept by the filter's name and its arguments (_kept.KEPT of them) for a loop of calls; made each call
    where an argument is unhashable. A refusal is made again each call: nothing is kept of it."""
    try:
        key = (name, _typed_key(args))
    except TypeError:
        return make()
    return _kept(_PASSES, key, lambda: _Passes(make()))


def _steps(passes, shape, in_type, out_type, cval, summed):
    """[(group, its (desc, taps) pair, or None for a pass past MAX_TAPS)] in call order: the first
    group reads the input's dtype, later ones the output's; from the kept passes' own steps where
    a call of this kind made them before."""
    made = getattr(passes, "steps", None)
    key = (shape, in_type, out_type, cval, summed)
    steps = made.get(key) if made is not None else None
    if steps is None:
        groups = [passes] if summed else _groups(passes, shape)
        steps = [(g, None if g[0].taps.size > MAX_TAPS else
                  _kept_desc(g, shape, in_type if i == 0 else out_type, out_type, cval, summed))
                 for i, g in enumerate(groups)]
        if made is not None:
            if len(made) >= STEPS_KEPT:
                made.clear()
            made[key] = steps
    return steps


def _run_passes(input, output, passes, cval, options, summed=False, replayable=True):
    """scipy's separable filters: the passes one after another, each stored in the output's dtype
    (so an integer output truncates after each, as scipy's does), the last into `output`; no
    pass: a copy. Arrays are read and written in their own dtypes by sepfilter, two passes a
    call where the axes allow. summed: two passes over the axes (0, 1) of a 2-D array, each
    from the input, added in the output's dtype (laplace), in one call. replayable: whether a call
    of one library call may be offered to the compiled entry (not where its passes read a copy
    made for this call alone)."""
    src = _array(input)
    out = _result(output, src)
    cval = _cval_arg(cval, in_float64=_in_float64(src.dtype, out.dtype))
    if src.size == 0:
        return out.obj
    if not passes:  # scipy's output[...] = input: a wide type copied as numpy converts it
        with on_device(src):
            if _in_float64(src.dtype, out.dtype):
                assign(out.obj, src.obj, src.kind)
            else:
                store(float32_contiguous(src), out.obj, src.kind)
        return out.obj
    if not summed and _in_scipys_order(passes, src.dtype, out.dtype) and \
            not _library_adds_in_scipys_order(passes, out.dtype):
        return _run_passes_in_scipys_order(src, out, passes, cval, options)
    variant, device, context = options
    shape = tuple(int(n) for n in src.shape)
    x = src if src.contiguous else _arrays.Operand(contiguous(src.obj, src.kind), "input")
    steps = _steps(passes, shape, src.dtype, out.dtype, cval, summed)
    for i, (group, described) in enumerate(steps):
        last = i == len(steps) - 1
        if last and out.contiguous and not (x is src and overlaps(out, src)):
            dst = out
        else:
            dst = _arrays.Operand(empty_like_kind(src, shape, out.dtype), "output")
        if described is None:
            _long_pass(x, dst, group[0], cval, src, device, context)
        elif in_place(x, device, context):  # nothing to stage: the library takes the arrays' addresses
            ctx = context_in_place(x, context)
            check(lib.mh_sepfilter(ctx.handle, variant_arg(variant), ctypes.byref(described[0]), x.ptr, dst.ptr),
                  ctx.handle)
            if replayable and len(steps) == 1 and x is src and dst is out and _fast.recording():
                _fast.offer("SEPFILTER", lib.mh_sepfilter, variant_arg(variant), (0, 0, 0),
                            ctypes.addressof(described[0]), src, context, DEFAULT_PRECISION, out, described,
                            view=_group_view(group, len(shape)))
        else:
            call = Call([x], device, context)
            call.run(lib.mh_sepfilter(call.ctx, variant_arg(variant), ctypes.byref(described[0]), call.ptr(x),
                                      call.out_ptr(dst)))
        x = dst
    if x is not out:
        with on_device(src):
            assign(out.obj, x.obj, src.kind)
    return out.obj


def _in_scipys_order(passes, in_dtype, out_dtype):
    """Whether passes computed in float64 into an integer output run in scipy's order of additions
    (_correlate1d_in_scipys_order): correlations (no divisor: scipy's uniform filter keeps a
    running sum, which sepfilter's divided sums match) of host taps, one of them of more than one
    tap (a single tap's product is the same in any order; scipy's cast of a float64 sum is such a
    pass, _stored_once)."""
    if np.dtype(out_dtype).kind not in "iub" or not _in_float64(in_dtype, out_dtype):
        return False
    if any(p.divisor != 1 or p.taps64 is None for p in passes):
        return False
    if all(_exact_in_any_order(p.taps64, in_dtype, out_dtype) for p in passes):
        return False
    return any(p.taps64.size > 1 for p in passes)


def _library_adds_in_scipys_order(passes, out_dtype):
    """Whether sepfilter can add these passes in scipy's order itself (MH_SEPFILTER_SUMS_SCIPY),
    where they need it (_in_scipys_order): passes of up to MAX_TAPS taps into an output the library
    computes in float64 on its own, since a later call reads it (int32, int64, uint32, uint64; a
    bool or 8- and 16-bit output after a float64 input would send a second call to float32: it
    runs in Python)."""
    native_wide = np.dtype(out_dtype) in WIDE and np.dtype(out_dtype) != np.bool_
    return native_wide and all(p.taps.size <= MAX_TAPS for p in passes)


def _exact_in_any_order(w, in_dtype, out_dtype):
    """Whether every float64 sum of w's products with values of in_dtype and out_dtype (what the
    passes read) is exact, so that any order of additions gives scipy's bits: whole-number weights
    (sobel, prewitt, laplace) summing to at most 2^20 in magnitude over integers of at most 32 bits
    (each partial sum below 2^52)."""
    small = all(np.dtype(t).kind in "iub" and np.dtype(t).itemsize <= 4 for t in (in_dtype, out_dtype))
    return small and bool(np.all(np.floor(w) == w)) and float(np.sum(np.abs(w))) <= 2.0 ** 20


def _run_passes_in_scipys_order(src, out, passes, cval, options):
    """The passes one after another as scipy runs them into an integer output, where sepfilter does
    not (_library_adds_in_scipys_order: a pass longer than MAX_TAPS, a bool or narrow output): each summed in
    float64 in scipy's order (_correlate1d_in_scipys_order) and stored in the output's dtype with
    scipy's cast (_stored_once), the next reading that."""
    x = src
    for p in passes:
        with on_device(src):
            total = _correlate1d_in_scipys_order(_float64_of(x.obj, x.kind), x.kind, p.taps64, p.axis, p.mode, cval,
                                                 p.origin)
        x = _arrays.Operand(_stored_once(total, out.dtype, options), "output")
    with on_device(src):
        assign(out.obj, x.obj, src.kind)
    return out.obj


def _correlate1d_in_scipys_order(x, kind, w, axis, mode_code, cval, origin):
    """The float64 sums of a 1-D correlation of float64 x added as scipy's NI_Correlate1D adds
    them, each product rounded and then added: an odd filter symmetric within DBL_EPSILON as
    x[c] w[c] + (x[c - j] + x[c + j]) w[c - j] for j = c .. 1, an antisymmetric one the same with
    x[c - j] - x[c + j]; any other as x[n - 1] w[n - 1] + x[0] w[0] + ... + x[n - 2] w[n - 2]
    (x[j]: the input at tap j's offset, the mode applied). An integer output truncates the sum, so
    the order decides on which side of a whole number it lands (a box filter's 1/3 weights over
    three equal values: scipy's sum is one rounding below or above the value)."""
    n = int(w.size)
    c, eps = n // 2, np.finfo(np.float64).eps
    wide = _extended(x, kind, [(axis, n, origin)], mode_code, cval)

    def at(j):
        return _tap_view(wide, x.shape, [(axis, j)])
    fold = 0
    if n % 2:
        if all(abs(w[c + i] - w[c - i]) <= eps for i in range(1, c + 1)):
            fold = 1
        elif all(abs(w[c + i] + w[c - i]) <= eps for i in range(1, c + 1)):
            fold = -1
    if fold:
        total = at(c) * float(w[c])
        for j in range(c, 0, -1):
            pair = at(c - j) + at(c + j) if fold > 0 else at(c - j) - at(c + j)
            total += pair * float(w[c - j])
        return total
    total = at(n - 1) * float(w[n - 1])
    for j in range(n - 1):
        total += at(j) * float(w[j])
    return total


def _run_sum(input, output, terms, cval, options):
    """scipy's generic_laplace over terms that are each one sepfilter call on the input (its
    passes over two neighbouring axes or one, at most MAX_TAPS taps each), in one library call
    (mh_sepfilter_sum: each term in the output's dtype, added in it); None, having written
    nothing, where a term is not or the input or output is not contiguous or apart: the caller
    then adds term by term. terms: _Passes of _Passes, whose steps keep the terms' descs (a list
    where an argument made no key)."""
    src = _array(input)
    if src.size == 0 or not src.contiguous:
        return None
    shape = tuple(int(n) for n in src.shape)
    out_dtype = np.dtype(_output_dtype(output, src))
    cval = _cval_arg(cval, in_float64=_in_float64(src.dtype, out_dtype))
    key = (shape, src.dtype, out_dtype, cval)
    made = getattr(terms, "steps", None)  # None: terms made for this call alone (an unkeyable argument)
    described = made.get(key) if made is not None else None
    if described is None:
        steps = [_steps(t, shape, src.dtype, out_dtype, cval, False) for t in terms]
        if any(len(s) != 1 or s[0][1] is None for s in steps):
            described = False
        else:
            described = ((SepfilterDesc * len(steps))(*(s[0][1][0] for s in steps)), steps)
        if made is not None:
            if len(made) >= STEPS_KEPT:
                made.clear()
            made[key] = described
    if described is False:
        return None
    out = _result(output, src)
    if not out.contiguous or overlaps(out, src):
        return None
    descs = described[0]
    variant, device, context = options
    if in_place(src, device, context):
        ctx = context_in_place(src, context)
        check(lib.mh_sepfilter_sum(ctx.handle, variant_arg(variant), descs, len(descs), src.ptr, out.ptr), ctx.handle)
        if _fast.recording():
            views = [_group_view(s[0][0], len(shape)) for s in described[1]]
            _fast.offer("SEPFILTER_SUM", lib.mh_sepfilter_sum, variant_arg(variant), (0, 0, 0), ctypes.addressof(descs),
                        src, context, DEFAULT_PRECISION, out, described, kernel=(len(descs), 0, 0, 0.0, 0, 0),
                        view=(sum((spans for spans, _ in views), ()), min(fixed for _, fixed in views)))
    else:
        call = Call([src], device, context)
        call.run(lib.mh_sepfilter_sum(call.ctx, variant_arg(variant), descs, len(descs), call.ptr(src),
                                      call.out_ptr(out)))
    return out.obj


def _long_pass(x, dst, step, cval, src, device, context):
    """A pass of more than MAX_TAPS taps: conv1d with the boundary mode on float32 lines (the
    axis moved last where it is not: a copy each way), its direct rows (regtile, cpu-omp), whose
    error is bounded per output as sepfilter's is (the FFT rows' is bounded over the signal
    only); then stored in dst's dtype with scipy's cast, the divisor applied."""
    if _in_float64(x.dtype, dst.dtype):
        _long_pass_wide(x, dst, step, cval, src, device, context)
        return
    kind, shape, axis = src.kind, tuple(int(n) for n in x.shape), step.axis
    last = axis == len(shape) - 1
    xf = float32_contiguous(x)
    with on_device(src):
        xm = xf if last else contiguous(moveaxes_last(xf, kind, (axis,)), kind)
        direct = last and dst.dtype == F32 and step.divisor == 1
        ym = dst.obj if direct else empty_like(xm, kind)
    xs, ys = _arrays.Operand(xm, "input"), _arrays.Operand(ym, "output")
    mask = _arrays.Operand(_on_kind(step.taps, src), "weights")
    call = Call([xs, mask], device, context)
    row = b"conv1d/cpu-omp" if call.context.is_cpu else b"conv1d/regtile"
    n = shape[axis]
    call.run(lib.mh_conv1d_mode(call.ctx, row, call.ptr(xs), xs.size // n, n, call.ptr(mask), 0, step.taps.size,
                                step.mode, cval, step.origin, call.out_ptr(ys)))
    if direct:
        return
    with on_device(src):
        if step.divisor != 1:
            ym /= step.divisor
        store(ym, dst.obj if last else moveaxes_last(dst.obj, kind, (axis,)), kind)


def _long_pass_wide(x, dst, step, cval, src, device, context):
    """A pass of more than MAX_TAPS taps computed in float64: each line extended by the mode once
    (its indices mapped by border_index: any distance past the edge, exactly), then the taps in
    chunks of MAX_TAPS, each a float64 correlate1d over the extended lines whose outputs are read at
    the chunk's offset (no read past the extension: the mode is never applied twice), the chunks
    added in float64, the divisor applied, and the sum stored once in dst's dtype (scipy's cast)."""
    kind, axis, k = src.kind, step.axis, step.taps64.size
    n = int(x.shape[axis])
    index, outside = border_index(np.arange(n + k - 1) - (k // 2 + step.origin), n, step.mode)
    with on_device(src):
        extended = take(x.obj, kind, index, axis)
        if step.mode == CONSTANT:
            fill_slices(extended, kind, outside, axis, cval)
    whole = [slice(None)] * len(x.shape)
    total = None
    options = ("auto", device, context)
    for c0 in range(0, k, MAX_TAPS):
        chunk = step.taps64[c0:c0 + MAX_TAPS]
        y = _correlate1d(_arrays.Operand(extended, "input"), chunk, axis, np.float64, "nearest", cval,
                         -(chunk.size // 2), options, keep=False)
        part = y[tuple(whole[:axis] + [slice(c0, c0 + n)] + whole[axis + 1:])]
        with on_device(src):
            total = contiguous(part, kind) if total is None else total + part
    with on_device(src):
        if step.divisor != 1:
            total /= step.divisor
    _stored_once(total, dst.obj, options)


def _per_axis(value, name, n=2):
    """scipy's per-axis arguments: one value for every axis filtered, or a sequence of one each."""
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != n:
            raise ScipyArgumentError(f"{name}: {value!r}; {n} axes are filtered: one value or {n} (scipy: sequence "
                                     f"argument must have length equal to input rank)")
        return list(value)
    return [value] * n


KEPT_TAPS = 4096  # filters of at most this many taps are made once for a loop of calls


@functools.lru_cache(maxsize=256)
def _kept_taps(make, *args):
    return make(*args)


def _taps_once(make, size, *args):
    """make(*args): read-only taps (an array, or a tuple of them), made once for each args where
    there are at most KEPT_TAPS of them (size), so that a loop of calls with the same filter
    computes them once and no caller can change what later calls get."""
    taps = _kept_taps(make, *args) if size <= KEPT_TAPS else make(*args)
    for t in taps if isinstance(taps, tuple) else (taps,):
        t.flags.writeable = False
    return taps


def _gaussian_taps(sigma, order, radius):
    """The taps of a Gaussian pass: its weights reversed, as correlate1d takes them, in float64 (as
    scipy's) and in float32, each within one float32 step of its weight and their sum nearest the
    weights' (_float32_keeping_sum)."""
    exact = np.ascontiguousarray(_gaussian_weights(sigma, order, radius)[::-1])
    return np.ascontiguousarray(_float32_keeping_sum(exact)), exact


def _float32_keeping_sum(w):
    """w rounded to float32, then taps moved one float32 step to the other side of their weight
    (mirrored taps together: symmetry kept), the largest moves first, each where it brings the
    taps' exact sum nearer the weights'. Rounded to nearest alone, a Gaussian's taps of sigma 1 sum
    to 1 + 2e-8: every output of a pass scaled by that, 1e-4 on average over an image of values up
    to 1e4, a bias that scipy's float64 weights do not have (its test_gauss03 sums the image)."""
    t = w.astype(F32)
    err = math.fsum(t.astype(np.float64)) - math.fsum(w)
    n = len(w)
    groups = [[i, n - 1 - i] if i != n - 1 - i and w[i] == w[n - 1 - i] else [i]
              for i in range(n) if i <= n - 1 - i or w[i] != w[n - 1 - i]]
    moves = []
    for g in groups:
        i = g[0]
        other = np.nextafter(t[i], np.float32(np.inf) if t[i] <= w[i] else np.float32(-np.inf))
        moves.append((g, other, len(g) * (float(other) - float(t[i]))))
    for g, other, delta in sorted(moves, key=lambda m: (-abs(m[2]), m[0][0])):
        if abs(err + delta) < abs(err):
            t[g], err = other, err + delta
    return t


@functools.lru_cache(maxsize=1)
def _scipys_gaussian_kernel():
    """The installed scipy's own sampled Gaussian (scipy.ndimage._filters._gaussian_kernel1d, a
    private name), or None where scipy lacks it."""
    try:
        from scipy.ndimage._filters import _gaussian_kernel1d
    except ImportError:
        return None
    return _gaussian_kernel1d


SCIPYS_KERNEL_MAX_ORDER = 64  # scipy's derivative multiplies (order + 1)^2 matrices order times


def _gaussian_weights(sigma, order, radius):
    """The sampled Gaussian of standard deviation sigma on -radius .. radius, normalised to sum 1,
    or its exact derivative of any order, as scipy's gaussian_filter1d defines it. Where the
    installed scipy has its kernel function, its weights, bit for bit: a weight one rounding apart
    moves a sum over a flat patch of integers (v times weights summing to 1) to the other side of
    v, where an integer output truncates it. Else (and where sigma's square underflows) our own:
    the normalised samples times q(x), where q_0 = 1 and q_{n+1} = q_n' - x q_n / sigma^2 (the
    derivative of q_n(x) exp(-x^2 / 2 sigma^2) over the exponential), x / sigma taken first, so
    that a sigma whose square underflows gives the limit (1 at the centre, 0 elsewhere: the
    identity, as scipy gives it) rather than 0 / 0."""
    scipys, square = _scipys_gaussian_kernel(), float(sigma) * float(sigma)
    if scipys is not None and order <= SCIPYS_KERNEL_MAX_ORDER and square > 0 and math.isfinite(0.5 / square):
        w = np.asarray(scipys(float(sigma), int(order), int(radius)), dtype=np.float64)
        if np.all(np.isfinite(w)):
            return w
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    z = x / sigma
    phi = np.exp(-0.5 * z * z)
    phi /= phi.sum()
    q = np.polynomial.Polynomial([1.0])
    for _ in range(order):
        q = q.deriv() + q * np.polynomial.Polynomial([0.0, -1.0 / (sigma * sigma)])
    return q(x) * phi


def _radius(sigma, truncate, radius):
    if radius is not None:
        if isinstance(radius, bool) or not isinstance(radius, (int, np.integer)) or radius < 0:
            raise ValueError(f"radius: {radius!r}; expected a non-negative int")
        return int(radius)
    return int(float(truncate) * float(sigma) + 0.5)


MAX_ORDER = 1024  # the derivative's polynomial takes order^2 steps to build (scipy's an (order + 1)^2 matrix)


def _gaussian_pass(sigma, axis, order, mode, truncate, radius):
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or not 0 <= order <= MAX_ORDER:
        raise ValueError(f"order = {order!r}: a Gaussian's derivative order is an int from 0 to {MAX_ORDER}")
    if not float(sigma) > 0:
        raise ValueError(f"sigma = {sigma!r}; expected a positive number")
    r = _radius(sigma, truncate, radius)
    taps, exact = _taps_once(_gaussian_taps, 2 * r + 1, float(sigma), int(order), r)
    return _pass(taps, axis, mode, 0, weights64=exact)


@_fast.entry()
@accepts_foreign_arrays
@_complex.by_parts()
def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *,
                      radius=None, variant="auto", device=None, context=None):
    """scipy.ndimage.gaussian_filter1d: order 0 (smoothing) or a derivative of any order, radius
    int(truncate * sigma + 0.5) unless given. Up to 127 taps (radius 63: sigma 15.7 at the default
    truncate) on sepfilter, longer on conv1d's direct rows."""
    src = _array(input)
    passes = _kept_passes("gaussian_filter1d", (len(src.shape), sigma, axis, order, mode, truncate, radius),
                          lambda: [_gaussian_pass(sigma, _axis_arg(axis, len(src.shape)), order, mode, truncate, radius)])
    return _run_passes(src, output, passes, cval, (variant, device, context))


@_fast.entry()
@accepts_foreign_arrays
@_complex.by_parts()
def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *, radius=None,
                    axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.gaussian_filter: one gaussian_filter1d per axis (every axis, or `axes`); sigma,
    order, mode and radius per axis or one for all. An axis of sigma 0 is left as it is (as
    scipy does), so an RGB image (H, W, 3) takes sigma=(s, s, 0) or axes=(0, 1): both axes in
    one call that reads and writes the image once."""
    src = _array(input)
    passes = _kept_passes("gaussian_filter", (len(src.shape), sigma, order, mode, truncate, radius, axes),
                          lambda: _gaussian_passes(len(src.shape), sigma, order, mode, truncate, radius, axes))
    return _run_passes(src, output, passes, cval, (variant, device, context))


IDENTITY_SIGMA = 1e-15  # gaussian_filter leaves an axis of sigma at most this as it is, whatever its order (scipy's)


def _gaussian_passes(ndim, sigma, order, mode, truncate, radius, axes):
    """gaussian_filter's passes: one an axis filtered, sigma, order, mode and radius per axis or
    one for all, none along an axis of sigma at most IDENTITY_SIGMA (scipy leaves it as it is,
    a derivative's order too)."""
    ax = _filtered_axes(axes, ndim)
    sigmas, orders = _per_axis(sigma, "sigma", len(ax)), _per_axis(order, "order", len(ax))
    modes, radii = _per_axis(mode, "mode", len(ax)), _per_axis(radius, "radius", len(ax))
    return [_gaussian_pass(sigmas[i], ax[i], orders[i], modes[i], truncate, radii[i])
            for i in range(len(ax)) if float(sigmas[i]) > IDENTITY_SIGMA]


def _size_arg(size):
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"size = {size!r}; expected a non-negative int")
    return int(size)


def _uniform_pass(size, axis, mode, origin, integer_output):
    size = _size_arg(size)
    if size < 1:
        raise ValueError(f"size = {size}: a mean over no samples")
    taps, exact = _taps_once(_uniform_taps, size, size, integer_output)
    return _pass(taps, axis, mode, origin, divisor=size if integer_output else 1, weights64=exact)


def _uniform_taps(size, integer_output):
    """A uniform pass's taps in float32 and float64: for an integer output ones (then one division:
    scipy divides an exact sum), else 1 / size each."""
    exact = np.ones(size) if integer_output else np.full(size, 1.0 / size)
    return exact.astype(F32), exact


def _integer_output(output, src):
    return np.dtype(_output_dtype(output, src)).kind in "iu"


@_fast.entry()
@accepts_foreign_arrays
@_complex.by_parts()
def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *, variant="auto",
                     device=None, context=None):
    """scipy.ndimage.uniform_filter1d: the mean over `size` samples along `axis`."""
    src = _array(input)
    integer = _integer_output(output, src)
    passes = _kept_passes("uniform_filter1d", (len(src.shape), size, axis, mode, origin, integer),
                          lambda: [_uniform_pass(size, _axis_arg(axis, len(src.shape)), mode, origin, integer)])
    return _run_passes(src, output, passes, cval, (variant, device, context))


@_fast.entry()
@accepts_foreign_arrays
@_complex.by_parts()
def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None, variant="auto",
                   device=None, context=None):
    """scipy.ndimage.uniform_filter: one uniform_filter1d per axis (every axis, or `axes`; an axis
    of size 1 is skipped)."""
    src = _array(input)
    integer = _integer_output(output, src)

    def make():
        ax = _filtered_axes(axes, len(src.shape))
        sizes, modes = _per_axis(size, "size", len(ax)), _per_axis(mode, "mode", len(ax))
        origins = _per_axis(origin, "origin", len(ax))
        return [_uniform_pass(sizes[i], ax[i], modes[i], origins[i], integer) for i in range(len(ax))
                if _size_arg(sizes[i]) > 1]  # scipy skips sizes of 0 and 1
    passes = _kept_passes("uniform_filter", (len(src.shape), size, mode, origin, axes, integer), make)
    return _run_passes(src, output, passes, cval, (variant, device, context))


def _taps(*values):
    """Fixed float32 taps (read-only)."""
    taps = np.array(values, F32)
    taps.flags.writeable = False
    return taps


CENTRAL_DIFFERENCE, SOBEL_SMOOTH, PREWITT_SMOOTH = _taps(-1, 0, 1), _taps(1, 2, 1), _taps(1, 1, 1)
SECOND_DIFFERENCE = _taps(1, -2, 1)


def _derivative_and_smooth(input, axis, output, mode, cval, smooth, variant, device, context):
    """The central difference along `axis`, then `smooth` along every other axis (scipy's sobel, prewitt)."""
    src = _array(input)
    ndim = len(src.shape)

    def make():
        along, modes = _axis_arg(axis, ndim), _per_axis(mode, "mode", ndim)
        return [_pass(CENTRAL_DIFFERENCE, along, modes[along], 0)] + \
            [_pass(smooth, a, modes[a], 0) for a in range(ndim) if a != along]
    passes = _kept_passes("derivative", (ndim, axis, mode, smooth.tobytes()), make)
    return _run_passes(src, output, passes, cval, (variant, device, context))


@_fast.entry()
@accepts_foreign_arrays
@_complex.by_parts()
def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0, *, variant="auto", device=None, context=None):
    """scipy.ndimage.sobel: the central difference along `axis`, smoothed by [1, 2, 1] across it."""
    return _derivative_and_smooth(input, axis, output, mode, cval, SOBEL_SMOOTH, variant, device, context)


@_fast.entry()
@accepts_foreign_arrays
@_complex.by_parts()
def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0, *, variant="auto", device=None, context=None):
    """scipy.ndimage.prewitt: the central difference along `axis`, smoothed by [1, 1, 1] across it."""
    return _derivative_and_smooth(input, axis, output, mode, cval, PREWITT_SMOOTH, variant, device, context)


def _terms_added_as_integers(src, output):
    """Whether scipy's generic_laplace adds the terms as 64-bit (or 32-bit) integers that float64
    does not hold: an integer output of a call computed in float64, whose terms _sum_over_axes adds
    in the output's dtype, wrapping exactly (sepfilter's summed passes add in float64)."""
    out_dtype = np.dtype(_output_dtype(output, src))
    return out_dtype.kind in "iub" and _in_float64(src.dtype, out_dtype)


def _sum_over_axes(input, output, count, term):
    """scipy's generic_laplace: the sum of `count` terms (term(i, out): the i-th filtered axis's
    second derivative, written into out, an array or a dtype), each in the output's dtype (integer
    sums wrap, as scipy's do), added in order; with no axis filtered, the input as it is."""
    src = _array(input)
    out = _result(output, src)
    if count == 0:
        with on_device(src):
            assign(out.obj, src.obj, src.kind)
        return out.obj
    term(0, out.obj)
    for i in range(1, count):
        t = term(i, out.dtype)
        with on_device(src):
            out.obj += t
    return out.obj


@_fast.entry()
@accepts_foreign_arrays
@_complex.by_parts()
def laplace(input, output=None, mode="reflect", cval=0.0, *, axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.laplace: the sum of [1, -2, 1] along each axis (every axis, or `axes`; mode
    one for all or one an axis filtered); on an image (2-D) both terms in one call (sepfilter's
    summed passes), on other ranks a call an axis."""
    src = _array(input)
    ndim = len(src.shape)
    ax = _filtered_axes(axes, ndim)
    modes = _per_axis(mode, "mode", len(ax))
    if ndim == 2 and len(ax) == 2 and not _terms_added_as_integers(src, output):
        def make():
            return [_pass(SECOND_DIFFERENCE, a, m, 0) for a, m in sorted(zip(ax, modes))]
        passes = _kept_passes("laplace", (ndim, mode, tuple(ax)), make)
        return _run_passes(src, output, passes, cval, (variant, device, context), summed=True)
    return _sum_over_axes(input, output, len(ax),
                          lambda i, out: correlate1d(input, SECOND_DIFFERENCE, ax[i], out, modes[i], cval,
                                                     variant=variant, device=device, context=context))


@_fast.entry()
@accepts_foreign_arrays
@_complex.by_parts()
def gaussian_laplace(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None, truncate=4.0, radius=None,
                     variant="auto", device=None, context=None):
    """scipy.ndimage.gaussian_laplace: the sum over the filtered axes (every axis, or `axes`) of the
    Gaussian's second derivative along each, smoothing along the other filtered axes; truncate and
    radius (scipy's keyword arguments for gaussian_filter) as gaussian_filter takes them. On an
    image (2-D) both terms added in one call (mh_sepfilter_sum) where _run_sum takes them, on other
    ranks a call a term."""
    src = _array(input)
    ndim = len(src.shape)
    terms = _kept_passes("gaussian_laplace", (ndim, sigma, mode, truncate, radius, axes),
                         lambda: _gaussian_laplace_terms(ndim, sigma, mode, truncate, radius, axes))
    options = (variant, device, context)
    if ndim == 2 and len(terms) == 2 and not _terms_added_as_integers(src, output):
        result = _run_sum(src, output, terms, cval, options)
        if result is not None:
            return result
    return _sum_over_axes(src, output, len(terms), lambda i, out: _run_passes(src, out, terms[i], cval, options))


def _gaussian_laplace_terms(ndim, sigma, mode, truncate, radius, axes):
    """gaussian_laplace's terms as scipy makes them: for the i-th filtered axis a gaussian_filter of
    every axis with order 2 along it, sigma one a filtered axis (0 along the others: left as they
    are) and the whole term in the i-th mode (scipy's generic_laplace hands each term one mode).
    Where every axis is filtered, sigma's i-th value is axis i's, whatever the order of `axes`, as
    in scipy."""
    ax = _filtered_axes(axes, ndim)
    sigmas, modes = _per_axis(sigma, "sigma", len(ax)), _per_axis(mode, "mode", len(ax))
    if len(ax) < ndim:
        full = [0.0] * ndim
        for s, a in zip(sigmas, ax):
            full[a] = s
        sigmas = full
    return [_Passes(_gaussian_passes(ndim, sigmas, [2 if b == a else 0 for b in range(ndim)], modes[i], truncate,
                                     radius, None)) for i, a in enumerate(ax)]




from ._rank import black_tophat, grey_closing, grey_dilation, grey_erosion, grey_opening, maximum_filter, \
    maximum_filter1d, median_filter, minimum_filter, minimum_filter1d, morphological_gradient, percentile_filter, \
    rank_filter, white_tophat  # noqa: E402 - the selection filters, one module of their own

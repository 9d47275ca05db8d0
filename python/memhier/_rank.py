"""scipy.ndimage's selection filters on memhier's rank op (mh_rank): minimum_filter(1d),
maximum_filter(1d), rank_filter, median_filter, percentile_filter and the grey morphology built
from them, with scipy's signatures, arguments and errors. memhier.ndimage exports them.

Each output is a value of its window (or cval, or with a structure a value minus or plus the
structure's), read as float64 as scipy reads it and stored with scipy's cast, so that a result
equals scipy's bit for bit wherever its window holds no NaN. Windows are ordered as numpy sorts
(NaN above every number): the minimum of a window holding NaN and numbers is its least number,
the maximum NaN, where scipy's answer depends on where the NaN sits. A minimum or maximum over a
whole rectangle runs as scipy runs it, one 1-D pass an axis (each stored in the output's dtype,
a mode an axis); other footprints reach over at most three of the input's axes (the others:
batches of lines or interleaved values; three axes a volume's, on the rows that take them). float16 is computed in float32, bool as its bytes:
both exact for a selection."""
import collections
import ctypes
import functools
import math
import numbers
import warnings

import numpy as np

from . import _arrays, _fast
from ._call import (DEFAULT_PRECISION, Call, ScipyArgumentError, context_in_place, cval_arg, filtered_axes, in_place,
                    mode_arg, origin_list, variant_arg)
from ._convert import assign, contiguous, empty_like_kind, on_device, overlaps
from ._native import DTYPES as NATIVE_DTYPES, RankDesc, Unsupported, check, lib

__all__ = ["minimum_filter1d", "maximum_filter1d", "minimum_filter", "maximum_filter", "rank_filter",
           "median_filter", "percentile_filter", "grey_erosion", "grey_dilation", "grey_opening", "grey_closing",
           "morphological_gradient", "white_tophat", "black_tophat"]


# One library call: the footprint (2-D, or 3-D over three axes) over `axes` (one to three of the
# input's, in order), their origins, the rank, the mode's code, the structure (or None), and
# whether cval is held in the input's dtype (scipy's footprint and rank paths) or as a float64
# (its separable 1-D passes' line buffers).
Step = collections.namedtuple("Step", "footprint axes origins rank mode structure cval_in_dtype")


# dtype -> (the dtype the library reads or writes for it, that dtype's mh_dtype code), kept as
# dtypes are met: working them out (dtype names, byte orders) cost more than the call's C side.
_LIBRARY_DTYPES = {}


def _library_types(dtype):
    """(_library_dtype(dtype), its mh_dtype code), worked out once a dtype."""
    dtype = np.dtype(dtype)
    known = _LIBRARY_DTYPES.get(dtype)
    if known is None:
        library = _library_dtype_of(dtype)
        known = _LIBRARY_DTYPES[dtype] = (library, NATIVE_DTYPES[library.name])
    return known


def _library_dtype(dtype):
    """The dtype the library reads or writes for an array of `dtype` (in the machine's byte order,
    float16 widened to float32, bool read as its bytes), or a refusal naming it."""
    return _library_types(dtype)[0]


def _library_code(dtype):
    """The mh_dtype code of _library_dtype(dtype)."""
    return _library_types(dtype)[1]


def _library_dtype_of(dtype):
    if dtype.kind == "c":
        raise TypeError("Complex type not supported")
    dtype = dtype.newbyteorder("=")
    if dtype == np.float16:
        return np.dtype(np.float32)
    if dtype.name not in NATIVE_DTYPES or dtype.name == "bfloat16":
        raise Unsupported("unsupported", f"dtype {dtype}: the rank filters read and write bool, 8- to 64-bit "
                                         "integers, float16, float32 and float64")
    return dtype


def _input(input):
    if isinstance(input, (list, tuple)):
        input = np.asarray(input)
    op = _arrays.Operand(input, "input")
    _library_dtype(op.dtype)
    if len(op.shape) == 0:
        raise ValueError("input: a 0-d array; filters need at least one axis")
    return op


def _output(output, src):
    """scipy's `output` (None: the input's dtype; a dtype; an array of the input's shape)."""
    shape = tuple(src.shape)
    if output is None or isinstance(output, (type, np.dtype, str)):
        dtype = src.dtype if output is None else np.dtype(output)
        _library_dtype(dtype)
        return _arrays.made(empty_like_kind(src, shape, dtype), "output", src, shape, dtype)
    op = _arrays.Operand(output, "output")
    _library_dtype(op.dtype)
    if op.kind == "numpy" and not op.obj.flags.writeable:
        raise ValueError("output: a read-only array (its flags.writeable is False); pass a writable one")
    _arrays.same_place(src, op)
    if tuple(op.shape) != shape:
        raise ValueError(f"output: shape {tuple(op.shape)}, the call writes {shape}")
    return op


def _per_axis(value, n, name):
    """One value for each of n axes: a sequence of n, or one repeated."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        return [value] * n
    values = list(value)
    if len(values) != n:
        raise ScipyArgumentError(f"{name}: {value!r}; {n} filtered axes take one {name} or {n} (scipy: sequence "
                                 "argument must have length equal to input rank)")
    return values


def _check_origin(origin, side, axis):
    if not 0 <= side // 2 + origin < side:
        raise ValueError(f"invalid origin: origin {origin} on axis {axis} with a side of {side} (a side of {side} "
                         f"takes origins {-(side // 2)} .. {(side - 1) // 2})")


def _planes_rows_cols(per_axis, missing=1):
    """A value for each of one to three filtered axes as (planes, rows, cols): one axis is rows,
    two rows and cols; `missing` where an axis is not filtered."""
    if len(per_axis) == 3:
        return list(per_axis)
    return [missing] + (list(per_axis) + [missing, missing])[:2]


def _desc_spans(axes, ndim):
    """The array as mh_rank_desc sees it, (batch, rows, cols, channels, depth) as spans of its
    axes (_fast.view_sizes): (lines before, planes, rows, cols, values after), of the filtered
    axes (consecutive) the last cols, the one before it rows, a third planes; one axis is rows
    (cols 1), none a line. The call is made alike for every shape of ndim axes."""
    a = axes[0] if axes else ndim
    last = axes[-1] if axes else a
    depth, rows, cols = _planes_rows_cols([(i, i + 1) for i in axes], missing=(ndim, ndim))
    return (0, a), rows, cols, (min(last + 1, ndim), ndim), depth


class _Call:
    """One library call on x (contiguous, of the library's dtype) into y (the same) for a Step, its
    footprint over axes (a, b, c) (a volume's), (a, b), a < b, (a) (a column), or none (one
    element)."""

    def __init__(self, options):
        self.variant, self.device, self.context = options

    def __call__(self, x, y, step, cval, offer=False):
        """offer: this call is the whole of the function's (one library call from the caller's
        input into its output), so the compiled entry may replay it (_fast.offer)."""
        shape, axes = tuple(int(n) for n in x.shape), step.axes
        if axes and list(axes) != list(range(axes[0], axes[0] + len(axes))):
            moved = [i for i in range(len(shape)) if i not in axes[1:]]  # the others brought beside the first
            moved[axes[0] + 1:axes[0] + 1] = axes[1:]
            xm = _arrays.Operand(contiguous(x.obj.transpose(moved), x.kind), "input")
            ym = _arrays.Operand(empty_like_kind(x, tuple(shape[i] for i in moved), y.dtype), "output")
            self(xm, ym, step._replace(axes=list(range(axes[0], axes[0] + len(axes)))), cval)
            with on_device(x):
                assign(y.obj, ym.obj.transpose(np.argsort(moved)), x.kind)
            return
        spans = _desc_spans(axes, len(shape))
        batch, rows, cols, values, depth = _fast.view_sizes(spans, shape)
        origins = _planes_rows_cols(list(step.origins), 0)
        fp = np.ascontiguousarray(step.footprint, dtype=np.uint8)
        st = None if step.structure is None else np.ascontiguousarray(step.structure, dtype=np.float64)
        desc = RankDesc(batch, rows, cols, values, _library_code(x.dtype), _library_code(y.dtype),
                        fp.ctypes.data, fp.shape[-2], fp.shape[-1], None if st is None else st.ctypes.data, step.rank,
                        origins[1], origins[2], step.mode, cval,
                        st is not None,  # a structure added as scipy adds it to an image of its dtype
                        depth, fp.shape[0] if fp.ndim == 3 else 1, origins[0])
        variant = variant_arg(self.variant)
        if not in_place(x, self.device, self.context):
            call = Call([x], self.device, self.context)
            call.run(lib.mh_rank(call.ctx, variant, ctypes.byref(desc), call.ptr(x), call.out_ptr(y)))
            return
        ctx = context_in_place(x, self.context)  # nothing to stage: the library takes the arrays' addresses
        check(lib.mh_rank(ctx.handle, variant, ctypes.byref(desc), x.ptr, y.ptr), ctx.handle)
        if offer and _fast.recording():
            _fast.offer("RANK", lib.mh_rank, variant, (0, 0, 0), ctypes.addressof(desc), x, self.context,
                        DEFAULT_PRECISION, y, (desc, fp, st), view=(spans, len(shape)))


def _library_array(op):
    """op as the library reads it: contiguous, in the machine's byte order, float16 widened to
    float32, bool as uint8."""
    obj = op.obj
    if not op.dtype.isnative:
        obj = obj.astype(op.dtype.newbyteorder("="))
        op = _arrays.Operand(obj, op.name)
    if op.dtype == np.float16:
        obj = obj.astype(np.float32)
    elif op.dtype == np.bool_:
        obj = obj.view(np.uint8) if op.contiguous else contiguous(obj, op.kind).view(np.uint8)
    elif not op.contiguous:
        obj = contiguous(obj, op.kind)
    return op if obj is op.obj else _arrays.Operand(obj, op.name)


def _filter(src, output, steps, options, cval):
    """steps (footprint, axes, origins, rank, mode, structure) run in turn, each from the last's
    result, each stored in the output's dtype (scipy's separable minimum and maximum); none: a
    copy. The result lands in `output`."""
    out = _output(output, src)
    if src.size == 0:
        return out.obj
    if not steps:
        with on_device(src):
            assign(out.obj, src.obj, src.kind)
        return out.obj
    run = _Call(options)
    x = _library_array(src)
    lib_out = _library_dtype(out.dtype)
    steps = _one_rectangle(steps, x, lib_out, cval)
    direct = out.contiguous and out.dtype == lib_out and not overlaps(out, src)
    # one library call from the caller's own input into the output (made here, or the caller's
    # written directly): the whole function
    whole = direct and len(steps) == 1 and x is src
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        y = out if last and direct else \
            _arrays.Operand(empty_like_kind(src, tuple(src.shape), lib_out), "output")
        run(x, y, step, _in_dtype(cval, x.dtype) if step.cval_in_dtype else cval, offer=whole)
        x = y
    if x is not out:
        with on_device(src):
            assign(out.obj, x.obj.view(np.bool_) if out.dtype == np.bool_ else x.obj, src.kind)
    return out.obj


def _one_rectangle(steps, x, lib_out, cval):
    """scipy's separable minimum or maximum with two of its passes as one library call over their
    rectangle (one pass over the image on a GPU, rank/vanherk; cpu-minmax's two passes on the CPU,
    one call from Python): the latest two axes of one mode (a volume's rows and columns), the
    other passes as they are. The values are the same when every pass's results hold exactly or
    are cast monotonically: a cast into the output's type that numpy calls safe (monotone, so it
    keeps the extreme and the passes' order does not matter) and cval, where the mode reads it, a
    value of the input's type and the output's."""
    if len(steps) < 2 or any(s.cval_in_dtype or len(s.axes) != 1 for s in steps):
        return steps
    if not np.can_cast(x.dtype, lib_out, "safe"):
        return steps
    ordered = sorted(steps, key=lambda s: s.axes[0])
    for i in range(len(ordered) - 2, -1, -1):
        first, second = ordered[i], ordered[i + 1]
        if first.mode != second.mode:
            continue
        if first.mode == mode_arg("constant") and not (_holds(cval, x.dtype) and _holds(cval, lib_out)):
            return steps
        rows, cols = len(first.footprint), len(second.footprint)
        rectangle = Step(np.ones((rows, cols), bool), [first.axes[0], second.axes[0]],
                         [first.origins[0], second.origins[0]], 0 if first.rank == 0 else rows * cols - 1, first.mode,
                         None, False)
        return ordered[:i] + ordered[i + 2:] + [rectangle]
    return steps


def _holds(cval, dtype):
    """Whether cval is a value of dtype (NaN: of a float type)."""
    return dtype.kind == "f" if math.isnan(cval) else _in_dtype(cval, dtype) == cval


@functools.lru_cache(maxsize=256)
def _in_dtype(cval, dtype):
    """cval as scipy's footprint and rank paths hold it: cast to the input's dtype as the library
    reads it (C's cast: an integer truncated and wrapped; a bool as its byte, so 0.3 is 0), read
    back as a float."""
    with np.errstate(all="ignore"):
        return float(np.array([cval], np.float64).astype(dtype)[0])


def _full_footprint(footprint, ndim, axes):
    """The footprint over every axis of the input (scipy's _expand_footprint), as bool."""
    fp = np.asarray(footprint, dtype=bool)
    if len(axes) < ndim:
        if fp.ndim != len(axes):
            raise ScipyArgumentError(f"footprint.ndim ({fp.ndim}) must match len(axes) ({len(axes)})")
        fp = np.expand_dims(fp, tuple(a for a in range(ndim) if a not in axes))
    if fp.ndim != ndim:
        raise ScipyArgumentError(f"footprint.ndim ({fp.ndim}) must match len(axes) ({len(axes)})")
    return fp


def _full_origins(origin, shape, axes):
    """scipy's origins matched to `axes` (0 on the others), each checked against the footprint's
    side along its axis (`shape`: the full footprint's)."""
    given = origin_list(origin, len(axes))
    origins = [0] * len(shape)
    for o, a in zip(given, axes):
        origins[a] = o
    for a, (o, side) in enumerate(zip(origins, shape)):
        _check_origin(o, side, a)
    return origins


def _window_step(fp, origins, rank, mode, structure=None):
    """One library step for a footprint over every axis (size-1 axes dropped), its origins checked
    (_full_origins): refused past three axes."""
    axes = [a for a, side in enumerate(fp.shape) if side > 1]
    if len(axes) > 3:
        raise Unsupported("unsupported", f"footprint of shape {fp.shape}: it reaches over {len(axes)} axes; "
                                         "memhier's rank filters take footprints over one to three axes")
    squeezed = fp.reshape([fp.shape[a] for a in axes] if len(axes) == 3 else ([fp.shape[a] for a in axes] + [1, 1])[:2])
    st = None if structure is None else np.asarray(structure, np.float64).reshape(squeezed.shape)
    return Step(squeezed, axes, [origins[a] for a in axes] or [0], rank, mode_arg(mode), st, True)


def _separable_steps(sizes, axes, origins, modes, minimum):
    """scipy's separable minimum or maximum: a 1-D pass along each axis of size past 1, in `axes`
    order, each with its own mode and origin."""
    steps = []
    for a, size, o, mode in zip(axes, sizes, origins, modes):
        size = int(size)
        if size < 1:
            raise ScipyArgumentError(f"size: {size} along axis {a}; a filter size is at least 1 (scipy: incorrect "
                                     "filter size)")
        _check_origin(int(o), size, a)
        if size > 1:
            steps.append(Step(np.ones((size, 1), bool), [a], [int(o)], 0 if minimum else size - 1, mode_arg(mode), None,
                              False))
    return steps


def _size_beside_footprint(size, footprint):
    """scipy's warning where a size is given beside a footprint (it warns on every call, so such a
    call is never replayed)."""
    if size is not None and footprint is not None:
        warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=4)
        _fast.decline()


def _min_or_max(input, size, footprint, structure, output, mode, cval, origin, minimum, axes, options):
    """scipy's _min_or_max_filter."""
    _size_beside_footprint(size, footprint)
    src = _input(input)
    ndim = len(src.shape)
    ax = filtered_axes(axes, ndim)
    if structure is None and footprint is not None:
        footprint = np.asarray(footprint, dtype=bool)
        if not footprint.any():
            raise ValueError("All-zero footprint is not supported.")
        if footprint.all():
            size, footprint = footprint.shape, None
    if structure is None and footprint is None:
        if size is None:
            raise ScipyArgumentError("no footprint provided: give size or footprint (scipy: no footprint provided)")
        sizes = _per_axis(size, len(ax), "size")
        steps = _separable_steps(sizes, ax, _per_axis(origin, len(ax), "origin"), _per_axis(mode, len(ax), "mode"),
                                 minimum)
    else:
        if structure is not None:
            structure = np.asarray(structure, dtype=np.float64)
        footprint = np.ones(structure.shape, bool) if footprint is None else np.asarray(footprint, dtype=bool)
        fp = _full_footprint(footprint, ndim, ax)
        if structure is not None:
            if src.dtype == np.float16:
                raise Unsupported("unsupported", "structure on a float16 image: scipy adds a structure in the "
                                                 "image's dtype and takes no float16 image")
            if structure.ndim != len(ax):
                raise ScipyArgumentError("structure array has incorrect shape")
            structure = np.expand_dims(structure, tuple(a for a in range(ndim) if a not in ax))
            if structure.shape != fp.shape:
                raise ScipyArgumentError(f"structure array has incorrect shape: {structure.shape}, the footprint's "
                                         f"{fp.shape}")
        rank = 0 if minimum else int(fp.sum()) - 1
        added = None if structure is None else -structure if minimum else structure  # the library adds it
        steps = [_window_step(fp, _full_origins(origin, fp.shape, ax), rank, mode, added)]
    return _filter(src, output, steps, options, cval_arg(cval, in_float64=True))


def _rank(input, rank, size, footprint, output, mode, cval, origin, operation, axes, options):
    """scipy's _rank_filter: rank, median or percentile over the footprint."""
    _size_beside_footprint(size, footprint)
    src = _input(input)
    ndim = len(src.shape)
    ax = filtered_axes(axes, ndim)
    if footprint is None:
        if size is None:
            raise ScipyArgumentError("no footprint or filter size provided")
        footprint = np.ones([int(s) for s in _per_axis(size, len(ax), "size")], dtype=bool)
    fp = _full_footprint(footprint, ndim, ax)
    origins = _full_origins(origin, fp.shape, ax)
    count = int(fp.sum())
    if operation == "median":
        rank = count // 2
    elif operation == "percentile":
        percentile = float(rank)
        if percentile < 0.0:
            percentile += 100.0
        if not 0.0 <= percentile <= 100.0:
            raise ScipyArgumentError(f"invalid percentile: {rank!r} (from -100 to 100)")
        rank = count - 1 if percentile == 100.0 else int(float(count) * percentile / 100.0)
    elif isinstance(rank, bool) or not isinstance(rank, (numbers.Integral, np.integer)):
        raise TypeError(f"rank: expected an int, got {rank!r}")
    rank = int(rank)
    if rank < 0:
        rank += count
    if not 0 <= rank < count:
        raise ScipyArgumentError(f"rank not within filter footprint size: rank {rank} of {count} elements")
    if rank in (0, count - 1):  # scipy's minimum or maximum filter with the footprint
        return _min_or_max(input, None, fp, None, output, mode, cval, origins, rank == 0, None, options)
    return _filter(src, output, [_window_step(fp, origins, rank, mode)], options, cval_arg(cval, in_float64=True))


@_fast.entry()
def minimum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *, variant="auto",
                     device=None, context=None):
    """scipy.ndimage.minimum_filter1d: the least value of each window of `size` along `axis`."""
    return _filter1d(input, size, axis, output, mode, cval, origin, True, (variant, device, context))


@_fast.entry()
def maximum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *, variant="auto",
                     device=None, context=None):
    """scipy.ndimage.maximum_filter1d: the largest value of each window of `size` along `axis`."""
    return _filter1d(input, size, axis, output, mode, cval, origin, False, (variant, device, context))


def _filter1d(input, size, axis, output, mode, cval, origin, minimum, options):
    src = _input(input)
    ndim = len(src.shape)
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, np.integer)):
        raise TypeError(f"axis: {axis!r} cannot be interpreted as an integer")
    if not -ndim <= int(axis) < ndim:
        raise ValueError(f"axis: {axis} is out of range for a {ndim}-D input")
    if isinstance(mode, (list, tuple)):
        raise ScipyArgumentError(f"mode: {mode!r}; a 1-D filter takes one mode")
    steps = _separable_steps([size], [int(axis) % ndim], [origin], [mode], minimum)
    return _filter(src, output, steps, options, cval_arg(cval, in_float64=True))


@_fast.entry("footprint")
def minimum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None,
                   variant="auto", device=None, context=None):
    """scipy.ndimage.minimum_filter: the least value under the footprint (a size: a rectangle, run
    as 1-D passes)."""
    return _min_or_max(input, size, footprint, None, output, mode, cval, origin, True, axes,
                       (variant, device, context))


@_fast.entry("footprint")
def maximum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None,
                   variant="auto", device=None, context=None):
    """scipy.ndimage.maximum_filter: the largest value under the footprint."""
    return _min_or_max(input, size, footprint, None, output, mode, cval, origin, False, axes,
                       (variant, device, context))


@_fast.entry("footprint")
def rank_filter(input, rank, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *,
                axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.rank_filter: the value of rank `rank` (negative: from the end) under the
    footprint."""
    return _rank(input, rank, size, footprint, output, mode, cval, origin, "rank", axes, (variant, device, context))


@_fast.entry("footprint")
def median_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None,
                  variant="auto", device=None, context=None):
    """scipy.ndimage.median_filter: the value of rank count // 2 under the footprint."""
    return _rank(input, 0, size, footprint, output, mode, cval, origin, "median", axes, (variant, device, context))


@_fast.entry("footprint")
def percentile_filter(input, percentile, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0,
                      *, axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.percentile_filter: the value of rank int(count p / 100) (the last at 100; a
    negative p counts from 100)."""
    return _rank(input, percentile, size, footprint, output, mode, cval, origin, "percentile", axes,
                 (variant, device, context))


def _morphology_args(size, footprint, structure):
    if size is None and footprint is None and structure is None:
        raise ValueError("size, footprint, or structure must be specified")


@_fast.entry("footprint", content="structure")
def grey_erosion(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0,
                 *, axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.grey_erosion: the minimum over the footprint of the input minus the structure."""
    _morphology_args(size, footprint, structure)
    return _min_or_max(input, size, footprint, structure, output, mode, cval, origin, True, axes,
                       (variant, device, context))


@_fast.entry("footprint", content="structure")
def grey_dilation(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0,
                  *, axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.grey_dilation: the maximum over the mirrored footprint of the input plus the
    mirrored structure, each origin negated (one less on an axis of even size), as scipy does."""
    _morphology_args(size, footprint, structure)
    if structure is not None:
        structure = np.asarray(structure)
        structure = structure[(slice(None, None, -1),) * structure.ndim]
    if footprint is not None:
        footprint = np.asarray(footprint)
        footprint = footprint[(slice(None, None, -1),) * footprint.ndim]
    ax = filtered_axes(axes, len(_input(input).shape))
    origins = origin_list(origin, len(ax))
    for i in range(len(origins)):
        side = footprint.shape[i] if footprint is not None else structure.shape[i] if structure is not None \
            else _per_axis(size, len(ax), "size")[i]
        origins[i] = -origins[i] - (0 if int(side) & 1 else 1)
    return _min_or_max(input, size, footprint, structure, output, mode, cval, origins, False, axes,
                       (variant, device, context))


def _in_turn(first, second, input, size, footprint, structure, output, mode, cval, origin, options):
    """first, then second on its result into `output` (grey opening and closing, as scipy makes them)."""
    _size_beside_footprint(size, footprint)
    tmp = first(input, size, footprint, structure, None, mode, cval, origin, **options)
    return second(tmp, size, footprint, structure, output, mode, cval, origin, **options)


def grey_opening(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0,
                 *, axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.grey_opening: grey_erosion, then grey_dilation."""
    return _in_turn(grey_erosion, grey_dilation, input, size, footprint, structure, output, mode, cval, origin,
                    dict(axes=axes, variant=variant, device=device, context=context))


def grey_closing(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0,
                 *, axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.grey_closing: grey_dilation, then grey_erosion."""
    return _in_turn(grey_dilation, grey_erosion, input, size, footprint, structure, output, mode, cval, origin,
                    dict(axes=axes, variant=variant, device=device, context=context))


def morphological_gradient(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0,
                           origin=0, *, axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.morphological_gradient: grey_dilation minus grey_erosion, in the dtype's own
    arithmetic (integers wrap) as scipy subtracts them."""
    options = dict(axes=axes, variant=variant, device=device, context=context)
    tmp = grey_dilation(input, size, footprint, structure, None, mode, cval, origin, **options)
    if output is not None and not isinstance(output, (type, np.dtype, str)):
        grey_erosion(input, size, footprint, structure, output, mode, cval, origin, **options)
        return np.subtract(tmp, output, output)
    return tmp - grey_erosion(input, size, footprint, structure, None, mode, cval, origin, **options)


def _tophat(input, size, footprint, structure, output, mode, cval, origin, options, white):
    first, second = (grey_erosion, grey_dilation) if white else (grey_dilation, grey_erosion)
    tmp = _in_turn(first, second, input, size, footprint, structure, output, mode, cval, origin, options)
    x = np.asarray(input) if isinstance(input, (list, tuple)) else input
    a, b = (x, tmp) if white else (tmp, x)
    if x.dtype == np.bool_ and tmp.dtype == np.bool_:
        np.bitwise_xor(a, b, out=tmp)
    else:
        np.subtract(a, b, out=tmp)
    return tmp


def white_tophat(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0,
                 *, axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.white_tophat: the input minus its grey opening."""
    return _tophat(input, size, footprint, structure, output, mode, cval, origin,
                   dict(axes=axes, variant=variant, device=device, context=context), True)


def black_tophat(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0,
                 *, axes=None, variant="auto", device=None, context=None):
    """scipy.ndimage.black_tophat: the grey closing minus the input."""
    return _tophat(input, size, footprint, structure, output, mode, cval, origin,
                   dict(axes=axes, variant=variant, device=device, context=context), False)

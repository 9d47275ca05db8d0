"""The compiled entry (memhier._entry, built beside the library where Python's headers are):
memhier.ndimage's filters, conv1d, conv2d, reduce_sum, bincount and histogram called again with arguments equal
to an earlier call's, where that call was one library call into its output (a new one, or the caller's
`output` array), replay that call from C, on an input of the same shape or, where the Python path
offered a view (offer), of any shape the view serves
(docs/python.md, "What the binding costs"). The Python functions stay the one statement of what
a call does: the entry keys a call's arguments, and a record is offered only by the Python path,
from the call it has just made, at the places that know that call is the whole of the function's
work (offer). Without the extension every function is its Python self."""
import collections
import ctypes
import glob
import importlib.machinery
import importlib.util
import inspect
import math
import os

import numpy as np

from . import _arrays, _native
from ._call import context_in_place
from ._context import Context
from ._convert import empty_like_kind
from ._kept import KEPT


def _load():
    """The extension: installed in the package (a wheel), else built beside the library
    (MEMHIER_LIBRARY's directory: a CMake build tree); None where it is in neither, or where
    MEMHIER_ENTRY=0 asks for the Python path alone."""
    if os.environ.get("MEMHIER_ENTRY", "1") == "0":
        return None
    try:
        from . import _entry
        return _entry
    except ImportError:
        pass
    where = os.path.dirname(os.path.realpath(_native.library_path()))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        for path in glob.glob(os.path.join(where, "_entry" + suffix)):
            spec = importlib.util.spec_from_file_location("memhier._entry", path)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except ImportError:  # built for another interpreter: the Python path runs
                continue
            return module
    return None


_entry = _load()
RECORDS = collections.OrderedDict()  # a call's key -> its Record, the KEPT most recently made

if _entry is not None:
    _entry.configure(_arrays.KINDS, _arrays.kind_of, RECORDS, Context, np.dtype, context_in_place, empty_like_kind,
                     _native.check, KEPT)


def entry(weights=None, content=None):
    """A decorator: the function with the compiled entry in front (the function itself without
    the extension). weights: the parameter keyed as weights (by content for NumPy arrays, by
    place for device arrays), or None; content: a parameter keyed by content alone (a NumPy array
    the record copies; a device array makes no key), or None. A parameter named `output` (scipy's)
    is keyed as the input is where it is an array: a call that wrote it replays into the caller's
    next output array of the same kind, dtype and shape (or, where its record has a view, of
    every shape the view serves)."""
    def wrap(fn):
        if _entry is None:
            return fn
        params = list(inspect.signature(fn).parameters.values())
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY) for p in params):
            raise TypeError(f"{fn.__name__}: the entry binds named parameters alone")
        names = tuple(p.name for p in params)
        defaults = tuple(_entry.REQUIRED if p.default is p.empty else p.default for p in params)
        positional = sum(p.kind == p.POSITIONAL_OR_KEYWORD for p in params)
        return _entry.Entry(fn, names, defaults, positional, names.index(weights) if weights else -1,
                            names.index(content) if content else -1,
                            names.index("output") if "output" in names else -1)
    return wrap


def offer(form, fn, variant, sizes, fixed, place, context, precision, out, keep, kernel=(0, 0, 0, 0.0, 0, 0),
          stride=0, weights_in_call=False, second=None, view=None, view_output_fixed=False):
    """Offers the library call just made as the whole of the entry call in progress on this
    thread (nothing where no entry call is recording). form: the call's form as _entry names it
    ('CONV2D_MODE', 'SEPFILTER', 'CONV1D', 'REDUCE_SUM' ...), fn its library function (a ctypes
    function), variant its bytes or None, sizes (batch, rows or n, cols), fixed the address of
    what the call reads besides the input (weights, plan, desc), or weights_in_call where the
    call reads the caller's weights argument (its address then read each call), place the
    input's Operand, context and precision as the call set them, out the output's Operand (an
    array the call made, or the caller's `output` array, written whole by this call), keep what
    fixed points into, kernel (krows, kcols, mode or pad, cval, origin_r, origin_c; a 1-D call's
    k in kcols and its origin in origin_r), stride conv1d's mask
    stride, second None or the Operand of a second output the call made (mh_histogram_range's
    edges: the function returns the tuple of the two). view: None (the record serves the input's
    shape alone), or (spans, fixed) where the Python path makes this call alike for every input
    of the same number of axes whose sides from axis `fixed` on are this one's, its sizes
    view_sizes(spans, shape) (conv2d's forms: batch, rows, cols; conv1d's: batch, n; sepfilter's:
    each desc's batch, rows, cols, channels; rank's: its desc's batch, rows, cols, channels,
    depth; reduce_sum's and the histograms': 1, n) and its output of the input's shape, or with
    view_output_fixed its outputs of their own shapes (a sum, counts): the record then serves
    those shapes too."""
    if _entry is None:
        return
    pending = _entry.pending()
    if pending is None:
        return
    if pending[0] is not None:
        pending[1] = True  # a second library call: the function did more than one
        return
    if place.kind not in ("numpy", "cupy"):
        return
    krows, kcols, mode, cval, origin_r, origin_c = kernel
    make, device_now = _arrays.maker(place.kind)
    seconds = (None, None, None) if second is None else (tuple(second.shape), second.dtype, second.obj)
    spans, view_fixed = (None, 0) if view is None else (sum(view[0], ()), view[1])
    pending[0] = _entry.Record(getattr(_entry, form), ctypes.cast(fn, ctypes.c_void_p).value, variant, *sizes,
                               fixed or 0, weights_in_call, krows, kcols, stride, mode, cval, origin_r, origin_c,
                               _arrays.Place(place.kind, place.device), make, device_now, context, precision,
                               tuple(out.shape), out.dtype, keep, out.obj, *seconds, tuple(place.shape), spans,
                               view_fixed, view_output_fixed)


def trailing_spans(ndim, k):
    """Spans of an array of ndim axes as a batch of its last k axes: (the axes before them,
    then each of the k), whose view_sizes are (batch, *sides): a stack of images (k = 2) or of
    signals (k = 1), the batch 1 where there are no axes before."""
    return ((0, ndim - k),) + tuple((a, a + 1) for a in range(ndim - k, ndim))


def element_spans(ndim):
    """Spans of an array of ndim axes read as its elements in a line: view_sizes (1, size)."""
    return (0, 0), (0, ndim)


def view_sizes(spans, shape):
    """The sizes a view's spans give for an array of `shape`: size i the product of
    shape[lo:hi] for spans[i] = (lo, hi) (offer's view; the compiled entry computes them alike)."""
    return tuple(math.prod(shape[lo:hi]) for lo, hi in spans)


def decline():
    """The entry call in progress on this thread leaves no record: its function does something a
    replay would not (a warning scipy gives on every call)."""
    if _entry is None:
        return
    pending = _entry.pending()
    if pending is not None:
        pending[1] = True


def stats():
    """{'hits', 'misses', 'recorded'}: calls the entry replayed, ran in Python, records kept;
    None without the extension."""
    return _entry.stats() if _entry is not None else None


def recording():
    """Whether an entry call on this thread awaits its record (an offer now would be taken)."""
    if _entry is None:
        return False
    pending = _entry.pending()
    return pending is not None and pending[0] is None and not pending[1]

"""memhier.histogram: numpy.histogram for float32 data and integers of every width and float64,
its counts exactly (mh_histogram_range, which writes numpy's edges too, and mh_histogram_edges;
8-bit data mh_histogram_bytes, folded; wider data searched and counted by mh_histogram;
include/memhier.h).

How each form of `bins` meets numpy's rule (docs/histogram.md, "Float data as numpy counts it"):
- an int with a range: uniform bins, the library computing numpy's float32 edges itself;
- an int without a range: numpy's edges over the data's min and max (float32 arithmetic, made
  here by numpy.histogram_bin_edges from the two values), then searched as explicit edges;
- a string ('auto', 'fd', ...): numpy.histogram_bin_edges on the data, on the host;
- an array of edges: numpy compares float32 data with them in their own dtype (float64 for a
  list). For float32 x, x >= e holds exactly when x >= e rounded up to float32, and x <= e when
  x <= e rounded down: the library gets the lower edges rounded up and the last one rounded
  down, and the counts are numpy's."""
import ctypes
import functools
import math
import numbers

import numpy as np

from . import _arrays, _fast, _ops, _weights
from ._call import DEFAULT_PRECISION, Call, in_place, int_arg, variant_arg
from ._convert import astype, on_device
from ._kept import on_kind
from ._native import lib

MAX_BINS = 1 << 20  # MH_HISTOGRAM_MAX_BINS


def _to_host(op):
    """A host NumPy copy of an operand's array."""
    if op.kind == "numpy":
        return op.obj
    if op.kind == "cupy":
        return op.obj.get()
    return op.obj.detach().cpu().numpy()


def _range_edges(n, lo, hi):
    """numpy's edges of n uniform bins over (lo, hi), made once for a loop of calls (read-only:
    each call returns a copy), with the range as the library takes it (two doubles, for a replay
    of the call). numpy's own checks refuse a bad range. Kept by the range's signs too: -0.0
    equals 0.0, but numpy's last edge of (-1, -0.0) is -0.0."""
    return _kept_range_edges(n, lo, hi, math.copysign(1.0, lo), math.copysign(1.0, hi))


@functools.lru_cache(maxsize=64)
def _kept_range_edges(n, lo, hi, lo_sign, hi_sign):
    edges = np.histogram_bin_edges(np.empty(0, np.float32), n, (lo, hi))
    edges.flags.writeable = False
    return _RangeEdges(edges, (ctypes.c_double * 2)(lo, hi))


class _RangeEdges:
    """numpy's edges of uniform bins and their range as two C doubles."""

    def __init__(self, edges, lo_hi):
        self.edges, self.lo_hi = edges, lo_hi


_KEPT_EDGES = 4097  # edges kept on a GPU by content, at most this many


def _edges_like(op, edges):
    """numpy's edges as a new array of op's kind on its device: for a GPU, a device copy of a kept
    one (at most _KEPT_EDGES edges: _kept.on_kind, complete when it returns), not a
    copy from pageable host memory each call."""
    if op.kind == "numpy":
        return edges.copy()
    if edges.size > _KEPT_EDGES:
        return _like(op, edges)
    kept = on_kind(edges, op)
    if op.kind == "torch":
        return kept.clone()
    with on_device(op):
        return kept.copy()


def _like(op, host):
    """A host NumPy array as op's kind, on its device."""
    if op.kind == "numpy":
        return host
    if op.kind == "cupy":
        cupy = _arrays._cupy()
        with cupy.cuda.Device(op.device):
            return cupy.asarray(host)
    torch = _arrays._torch()
    # torch warns on a read-only array (numpy's edges of a range are kept read-only)
    return torch.as_tensor(host if host.flags.writeable else host.copy(), device=op.obj.device)


def _data_min_max(op):
    """The data's min and max as float32 (NaN where it holds one), read on the device."""
    if op.kind == "numpy":
        return op.obj.min(), op.obj.max()
    if op.kind == "cupy":
        return np.float32(op.obj.min().get()), np.float32(op.obj.max().get())
    lo, hi = _arrays._torch().aminmax(op.obj)
    return np.float32(lo.item()), np.float32(hi.item())


def _rounded(edges):
    """float32 edges that give float32 data the comparisons numpy makes with `edges`: the lower
    edges rounded up, the last rounded down."""
    e = np.asarray(edges, dtype=np.float64)
    with np.errstate(over="ignore"):
        f = e.astype(np.float32)
    low = f.astype(np.float64) < e
    f[low] = np.nextafter(f[low], np.float32(np.inf))
    if f[-1].astype(np.float64) > e[-1]:
        f[-1] = np.nextafter(f[-1], np.float32(-np.inf))
    return f


def _explicit(bins):
    """An array of edges checked as numpy checks it (1-D, increasing), NaN refused."""
    e = np.asarray(bins)
    if e.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if e.dtype.kind not in "fiub":
        raise TypeError(f"bins: dtype {e.dtype}, expected numbers")
    if e.dtype.kind == "f" and np.isnan(e).any():
        raise ValueError("bins: the edges hold NaN")
    if np.any(e[:-1] > e[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    if e.size - 1 > MAX_BINS:
        raise ValueError(f"bins: {e.size} edges, memhier takes at most {MAX_BINS + 1}")
    return e


def _edges(op, bins, range_):
    """(edges numpy returns, float32 edges for the library or None for uniform bins, lo, hi)."""
    if isinstance(bins, str):
        e = np.histogram_bin_edges(_to_host(op).ravel(), bins, range_)
        return e, _rounded(e), 0.0, 0.0
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        n = int_arg("bins", bins, 1, MAX_BINS)
        if range_ is not None:
            lo, hi = (float(v) for v in range_)
            # numpy's own edges for the range (its messages for a bad range, too)
            return _range_edges(n, lo, hi).edges, None, lo, hi
        if op.size == 0:
            e = np.histogram_bin_edges(np.empty(0, np.float32), n)
        else:
            e = np.histogram_bin_edges(np.array(_data_min_max(op), np.float32), n)
        return e, e.astype(np.float32), 0.0, 0.0
    e = _explicit(bins)  # numpy ignores a range given with edges
    return e, _rounded(e) if e.size else None, 0.0, 0.0


def _weighted(ai, wi, num_bins, edges32, lo, hi, variant, device, context):
    """The weighted sums, float64 as the library adds them."""
    call = Call([ai, wi], device, context)
    os_ = _arrays.output(None, ai, "hist", (num_bins,), "float64")
    eo = None if edges32 is None else _arrays.operand(np.ascontiguousarray(edges32), "bins", "float32")
    kind = 2 if eo is None else 3  # MH_HISTOGRAM_FLOAT_UNIFORM, MH_HISTOGRAM_FLOAT_EDGES
    data = (call.ptr(ai), call.ptr(wi)) if ai.size else (None, None)
    call.run(lib.mh_histogram_weighted(call.ctx, variant_arg(variant), kind, data[0], data[1], ai.size, num_bins, lo, hi,
                                       None if eo is None else call.ptr(eo), call.out_ptr(os_), None))
    return os_.obj


def _weights_dtype(op, sums, dtype):
    """float64 sums in numpy.histogram's dtype for weights of `dtype` (the weights' own, cast as
    numpy casts its float64 sums), as op's kind."""
    with on_device(op):
        return astype(sums, op.kind, dtype)


def _weighted_parts(ai, w, num_bins, edges32, lo, hi, variant, device, context):
    """The float64 sums of WeightParts w: each part's sums (_weighted), combined."""
    return w.combine([_weighted(ai, p, num_bins, edges32, lo, hi, variant, device, context) for p in w.parts], ai)


def _result_dtype(weights):
    return getattr(weights, "dtype", None) or np.asarray(weights).dtype


def _refuse_bool(weights):
    if getattr(getattr(weights, "dtype", None), "kind", None) == "b":  # numpy.histogram raises too
        raise TypeError("weights: dtype bool; numpy.histogram cannot add bool weights (convert them, e.g. "
                        "weights.astype(numpy.int64))")


def weighted_sums(a, weights, bins, range=None, variant="auto"):
    """(float64 sums, numpy's edges) of memhier.histogram(a, bins, range, weights): memhier.dask's
    chunks, whose sums are added before the one rounding to the weights' dtype."""
    ai = _arrays.operand(a, "a", "float32")
    w = _weights.parts_of(weights, ai)
    bin_edges, edges32, lo, hi = _edges(ai, bins, range)
    return _weighted_parts(ai, w, bin_edges.size - 1, edges32, lo, hi, variant, None, None), bin_edges.copy()


SMALL_INTEGERS = {np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.uint16), np.dtype(np.int16)}
WIDE = {np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64, np.float64)}


def _wide(op, weights, bins, range_, density, variant, device, context):
    """numpy.histogram of 32- and 64-bit integers and float64 (NumPy and CuPy data): each value's
    bin found by a search of numpy's edges in the dtype numpy compares them in (v in bin i where
    edges[i] <= v < edges[i + 1], the last bin closed; outside and NaN: none), then the bins
    counted by memhier.bincount. numpy's uniform bins agree: its index arithmetic is corrected
    against the same edges."""
    edges = _integer_edges(op, op, bins, range_, _native_min_max)
    n = edges.size - 1
    if n < 1:
        return _like(op, np.zeros(0, np.int64 if weights is None else _result_dtype(weights))), _edges_like(op, edges)
    xp = np if op.kind == "numpy" else _arrays._cupy()
    common = np.result_type(op.dtype, edges.dtype)
    with on_device(op):
        v = op.obj.ravel().astype(common)
        e = on_kind(np.ascontiguousarray(edges, dtype=common), op)
        at = xp.searchsorted(e, v, side="right") - 1
        at = xp.where(v == e[-1], n - 1, at)
        at = xp.where((at >= 0) & (at < n), at, -1).astype(np.int32)
    if weights is None:
        counts = _ops.bincount(at, n, variant=variant, device=device, context=context).astype(np.int64)
    else:
        _refuse_bool(weights)
        w = _arrays.Operand(weights, "weights")
        if tuple(w.shape) != tuple(op.shape):
            raise ValueError(f"weights: shape {tuple(w.shape)}, it must be the values' shape {tuple(op.shape)}")
        with on_device(op):
            flat = _arrays.Operand(w.obj.ravel(), "weights")
        sums = _ops.bincount(at, n, flat, variant=variant, device=device, context=context)
        counts = sums if density else _weights_dtype(op, sums, w.dtype)
    return _result(op, counts, edges, density)


def _native_min_max(op):
    """The data's min and max in its own dtype (NaN where it holds one), read on the device."""
    if op.kind == "numpy":
        return op.obj.min(), op.obj.max()
    return op.obj.min().get()[()], op.obj.max().get()[()]


def _small_integers(op, weights, bins, range_, density, variant, device, context):
    """numpy.histogram of 8- and 16-bit integers. numpy's edges for the
    data (_integer_edges) are handed on as explicit edges: each value is exact in float32, so the
    data converted to float32 give numpy's counts on the float path (a variant named: that float
    row); unweighted 8-bit NumPy and CuPy data under auto instead take the byte histogram (256
    counts, at the copy floor) folded into the bins (_folded)."""
    if op.dtype.itemsize == 1 and weights is None and variant == "auto" and op.kind != "torch" and op.contiguous:
        return _folded(op, _integer_edges(op, op, bins, range_, _data_min_max), density, variant, device, context)
    with on_device(op):  # PyTorch's min and max skip some integer types: read them from the floats
        x = astype(op.obj, op.kind, np.float32)
    edges = _integer_edges(op, _arrays.Operand(x, "a"), bins, range_, _data_min_max)
    return histogram(x, edges, None, weights, density, variant, device, context)


def _integer_edges(op, same_values, bins, range_, min_max):
    """numpy's edges for op's data: from the data (a string), its min and max (a count without a
    range, in the data's dtype as numpy takes them; min_max(same_values), op or a float32 copy
    that holds its values exactly), the range, or the edges given."""
    if isinstance(bins, str):
        return np.histogram_bin_edges(_to_host(same_values).ravel().astype(op.dtype), bins, range_)
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        n = int_arg("bins", bins, 1, MAX_BINS)
        if range_ is not None:
            try:
                lo, hi = range_
                return _count_edges(op.dtype, n, lo, hi)
            except TypeError:  # a range numpy takes but a cache cannot key (unhashable): made each call
                pass
        if range_ is not None or op.size == 0:
            return np.histogram_bin_edges(np.empty(0, op.dtype), n, range_)
        return np.histogram_bin_edges(np.array(min_max(same_values)).astype(op.dtype), n)
    return _explicit(bins)


@functools.lru_cache(maxsize=64, typed=True)
def _count_edges(dtype, n, lo, hi):
    """numpy's edges of n bins over (lo, hi) for data of dtype, read-only, kept by the arguments
    (typed: 1 and 1.0 are different keys, as numpy may type the edges by them): a loop of calls
    pays for numpy's linspace once."""
    edges = np.histogram_bin_edges(np.empty(0, dtype), n, (lo, hi))
    edges.flags.writeable = False
    return edges


def _folded(op, edges, density, variant, device, context):
    """The byte histogram of 8-bit data folded into numpy's bins: each bin gathers a run of
    consecutive values (bins are intervals), so its count is a difference of the prefix sums of
    the 256 counts in the values' order (int8: bytes 128-255 first). uint8 bins that are runs of
    one width from a first value on (the last one may be shorter: bins=256 over (0, 256), or 64)
    are the byte histogram's own buckets: one call, nothing folded."""
    buckets = _byte_buckets(op.dtype.str, edges.dtype.str, edges.tobytes())
    if buckets is not None:
        counts = _ops.histogram_bytes(op.obj, *buckets, variant=variant, device=device, context=context)
        return _result(op, counts.view(np.int64) if counts.dtype == np.uint64 else counts, edges, density)
    starts, ends = _byte_runs(op.dtype.str, edges.dtype.str, edges.tobytes())
    data = op.obj.view(np.uint8) if op.dtype == np.int8 else op.obj
    by_byte = _ops.histogram_bytes(data, variant=variant, device=device, context=context)
    xp = np if op.kind == "numpy" else _arrays._cupy()
    with on_device(op):
        ordered = xp.roll(by_byte, 128) if op.dtype == np.int8 else by_byte
        prefix = xp.concatenate([xp.zeros(1, np.int64), xp.cumsum(ordered.astype(np.int64))])
        counts = prefix[on_kind(ends, op)] - prefix[on_kind(starts, op)]
    return _result(op, counts, edges, density)


def _result(op, counts, edges, density, edges_out=None):
    """(counts, edges) as numpy.histogram returns them, as op's kind: with density, the counts
    divided by each bin's width and their total. edges_out: numpy's edges as op's kind where the
    call wrote them (mh_histogram_range), else a copy of `edges` is made."""
    if edges_out is None:
        edges_out = _edges_like(op, edges)
    if not density:
        return counts, edges_out
    widths = _like(op, np.diff(edges).astype(float))
    return counts / widths / counts.sum(), edges_out


@functools.lru_cache(maxsize=64)
def _byte_buckets(dtype, edges_dtype, edges_bytes):
    """(lo, hi, width) of memhier.histogram_bytes whose buckets are numpy's bins of uint8 data
    with these edges, or None: every bin a run of `width` values from lo on, the last one 1 to
    width values ending at hi."""
    if dtype != "|u1":
        return None
    starts, ends = _byte_runs(dtype, edges_dtype, edges_bytes)
    width = int(ends[0] - starts[0])
    if width < 1 or not (np.all(starts[1:] == ends[:-1]) and np.all(ends[:-1] - starts[:-1] == width)):
        return None
    last = int(ends[-1] - starts[-1])
    if not 1 <= last <= width:
        return None
    return int(starts[0]), int(ends[-1]) - 1, width


@functools.lru_cache(maxsize=64)
def _byte_runs(dtype, edges_dtype, edges_bytes):
    """Each bin's first and end index among the 256 values of dtype in order: numpy's own
    histogram of the 256 values with the edges counts each bin's run, and its sums of the values'
    indices place it (a run of c from i sums c i + c (c - 1) / 2)."""
    values = np.arange(256, dtype=np.uint8) if dtype == "|u1" else np.arange(-128, 128, dtype=np.int8)
    edges = np.frombuffer(edges_bytes, np.dtype(edges_dtype))
    counts, _ = np.histogram(values, edges)
    sums, _ = np.histogram(values, edges, weights=np.arange(256, dtype=np.float64))
    c = counts.astype(np.int64)
    starts = ((sums - c * (c - 1) / 2) / np.maximum(c, 1)).astype(np.int64)
    ends = starts + c
    starts.flags.writeable, ends.flags.writeable = False, False
    return starts, ends


@_fast.entry()
def histogram(a, bins=10, range=None, weights=None, density=False, variant="auto", device=None, context=None):
    """numpy.histogram(a, bins, range, density=density) for float32 data, 8- and 16-bit integers
    (numpy's float64 edges for them, _small_integers) and, on NumPy and CuPy, 32- and 64-bit
    integers and float64 (_wide), any shape (flattened), NumPy, CuPy or PyTorch CUDA: (hist,
    bin_edges) with numpy's counts exactly, int64 (float64 with density=True), both as a's kind
    on its device. bins: a count (1 .. 2^20), a string
    numpy.histogram_bin_edges knows (computed from the data on the host), or increasing edges.
    Values outside the edges and NaN are not counted, as numpy leaves them out. weights (any real
    dtype but bool, which numpy refuses too; a's shape, on its device): each value adds its
    weight instead of 1, summed in double (mh_histogram_weighted; float64 and integer weights as
    float32 parts, _weights.py; float64 weights' largest magnitude is read on the host, so on a
    GPU such a call waits for the caller's stream) and returned in the weights' dtype as numpy
    returns it (its float64 sum cast as numpy casts it); with density=True, float64, normalized
    by the float64 total. On CuPy or PyTorch data, a count
    without a range and a string need the data's min and max (or the data) on the host to make
    numpy's edges: those calls wait for the caller's stream; a count with a range and explicit
    edges do not."""
    op = a if isinstance(a, _arrays.Operand) else _arrays.Operand(a, "a")
    dtype = op.dtype if isinstance(op.dtype, np.dtype) else None  # PyTorch's bfloat16 and kin: none of these
    if dtype in SMALL_INTEGERS:
        return _small_integers(op, weights, bins, range, density, variant, device, context)
    if dtype in WIDE and op.kind != "torch":
        return _wide(op, weights, bins, range, density, variant, device, context)
    ai = _arrays.operand(op, "a", "float32")
    if weights is not None:
        _refuse_bool(weights)
    wi = None if weights is None else _weights.parts_of(weights, ai)
    bin_edges, edges32, lo, hi = _edges(ai, bins, range)
    num_bins = bin_edges.size - 1
    counts_dtype = "int64"  # the library's uint64 counts, below 2^63: numpy's int64 bit for bit
    if num_bins < 1:  # one edge: no bins
        counts = _like(ai, np.zeros(0, np.int64 if wi is None else wi.dtype))
    elif wi is not None:
        sums = _weighted_parts(ai, wi, num_bins, edges32, lo, hi, variant, device, context)
        # density from the float64 sums: a total in the weights' dtype (float32, integers) loses digits
        counts = sums if density else _weights_dtype(ai, sums, wi.dtype)
    elif edges32 is None:
        return _uniform(ai, num_bins, lo, hi, bin_edges, density, variant, device, context)
    else:
        call = Call([ai], device, context)
        os_ = _arrays.output(None, ai, "hist", (num_bins,), counts_dtype)
        eo = _arrays.operand(np.ascontiguousarray(edges32), "bins", "float32")
        call.run(lib.mh_histogram_edges(call.ctx, variant_arg(variant), call.ptr(ai) if ai.size else None, ai.size,
                                        call.ptr(eo), num_bins, call.out_ptr(os_), None))
        counts = os_.obj
    return _result(ai, counts, bin_edges, density)


def _uniform(ai, num_bins, lo, hi, bin_edges, density, variant, device, context):
    """numpy.histogram(a, num_bins, range=(lo, hi)) of float32 data: counts and edges from one
    library call (mh_histogram_range, which writes numpy's float32 edges beside the counts);
    bin_edges, numpy's own edges of the range, gives density its widths."""
    call = Call([ai], device, context)
    os_ = _arrays.output(None, ai, "hist", (num_bins,), "int64")
    eo = _arrays.output(None, ai, "bin_edges", (num_bins + 1,), "float32")
    name = variant_arg(variant)
    call.run(lib.mh_histogram_range(call.ctx, name, call.ptr(ai) if ai.size else None, ai.size, num_bins, lo, hi,
                                    call.out_ptr(os_), None, call.out_ptr(eo)))
    if ai.size and not density and in_place(ai, device, context):
        kept = _range_edges(num_bins, lo, hi)
        _fast.offer("HISTOGRAM_RANGE", lib.mh_histogram_range, name, (1, ai.size, 0), ctypes.addressof(kept.lo_hi),
                    ai, context, DEFAULT_PRECISION, os_, kept, kernel=(0, num_bins, 0, 0.0, 0, 0), second=eo,
                    view=(_fast.element_spans(len(ai.shape)), len(ai.shape)), view_output_fixed=True)
    return _result(ai, os_.obj, bin_edges, density, eo.obj)

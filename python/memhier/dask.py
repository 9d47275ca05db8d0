"""memhier on Dask arrays: each op runs chunk by chunk with memhier's kernels, giving what one
call on the whole array gives. Chunks may be NumPy arrays (the CPU backend) or CuPy arrays
(each on its worker's GPU: dask-cuda's LocalCUDACluster, one worker per GPU).

- conv2d, conv1d: halo pieces copied out of the neighbouring chunks, each chunk's window
  (zeros past the edges) convolved in 'valid' mode; the variant is the one `auto` picks for the whole
  problem, so on a direct row every output is computed by the same kernel from the same inputs in
  the same order as in one call: bit for bit the same; on an FFT row (conv2d's fft-tile from 49
  taps, fft-3pass past 31 a side) within its normwise bound, a chunk's tiles falling elsewhere
  than the whole image's (docs/python.md, "Dask").
- correlate, convolve, correlate1d, convolve1d, gaussian_filter, uniform_filter, sobel, prewitt,
  laplace, gaussian_laplace: memhier.ndimage's on 2-D arrays of its dtypes
  (dask-image's ndfilters names), the part of each window past the array's edge extended by
  the mode, results cast into the image's dtype as scipy casts: equal to memhier.ndimage's call
  on the whole image, bit for bit, the dtypes memhier.ndimage computes in float64 included.
- batched conv1d (2-D x, one row a signal): chunks along the batch, whole signals each.
- histogram (float32, numpy.histogram's counts: a range or explicit edges, as
  dask.array.histogram needs), bincount, histogram_bytes: per-chunk counts added as integers:
  exact; with weights, per-chunk float64 sums added in float64.
- reduce_sum: per-chunk float32 sums added in float64, then rounded to float32 once.
- sum, mean, min, max, argmin, argmax (float32, float64, int32 or int64, one axis or the whole
  array): each chunk reduced by memhier, the chunk results combined along the axis: sums as
  reduce_sum's (float64 in float64; integers in int64, exact), min and max exact, the arg forms
  numpy's index exactly.
- transpose: each chunk transposed, the chunk grid transposed with it.
- minimum_filter, maximum_filter, median_filter, rank_filter, percentile_filter (dask-image's
  ndfilters names) and grey_erosion, grey_dilation, grey_opening, grey_closing,
  morphological_gradient, white_tophat, black_tophat (scipy.ndimage's): memhier.ndimage's
  selection filters on each chunk's window of an image or a volume (2-D, 3-D), the compositions
  made of whole-array steps as scipy makes them: equal to the call on the whole image, bit for
  bit.
- pipeline: several of memhier.ndimage's separable filters in one task a chunk (gaussian_filter
  then sobel, say), each chunk's window wide enough for all of them: equal, bit for bit, to the
  calls made in turn on the whole image; with on_gpu, a host image's chunks streamed through the
  GPU a window at a time. pipeline_histogram: the histogram of a pipeline's result, each chunk
  counted in the task that filters it (exact).

Every function returns a lazy dask array; .compute() or .persist() runs it. This module's sum,
min and max are the reductions: Python's own are builtins.*."""
import builtins
import functools
import inspect
import itertools
import math
import threading

import numpy as np

import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _complex, _histogram, _ops, _reduce, ndimage
from ._convert import store
from ._call import C_INT_MAX, int_arg, mode_arg
from ._native import MODES, PADS, Unsupported
from ._registry import select

__all__ = ["conv1d", "conv2d", "histogram", "bincount", "histogram_bytes", "reduce_sum", "sum", "mean", "min", "max",
           "argmin", "argmax", "transpose", "correlate", "convolve",
           "correlate1d", "convolve1d", "gaussian_filter", "uniform_filter", "sobel", "prewitt", "laplace",
           "gaussian_laplace", "minimum_filter", "maximum_filter", "median_filter", "rank_filter", "percentile_filter",
           "grey_erosion", "grey_dilation", "grey_opening", "grey_closing", "morphological_gradient", "white_tophat",
           "black_tophat", "pipeline", "pipeline_histogram"]


def _xp(block):
    """The array module of a chunk: cupy for CuPy chunks, numpy otherwise."""
    module = type(block).__module__.split(".")[0]
    if module == "cupy":
        import cupy
        return cupy
    return np


def _contiguous(block):
    return _xp(block).ascontiguousarray(block)


def _device_of(darr):
    """'cpu' for NumPy chunks, else 0: select() asks device 0 what auto would run, the same
    model of GPU as every worker's (one kind of GPU per machine)."""
    return "cpu" if isinstance(darr._meta, np.ndarray) else 0


def _pads(k, pad):
    """(zeros before, zeros after) of each axis for `pad`, as the C API places them."""
    if pad not in PADS:
        raise ValueError(f"pad: expected 'valid', 'same' or 'full', got {pad!r}")
    before = {"valid": 0, "same": (k - 1) // 2, "full": k - 1}[pad]
    return before, {"valid": 0, "same": k - 1 - before, "full": k - 1}[pad]


def _chunk_for(n, halo):
    """A chunk size along an axis of n whose chunks, the last included, all hold at least halo
    (about 1024 or the halo, whichever is larger); -1 (one chunk) where no split does."""
    for parts in range(n // builtins.max(halo, 1024), 1, -1):
        size = -(-n // parts)
        last = n - (-(-n // size) - 1) * size
        if last >= halo:
            return size
    return -1


def _check_halo(darr, axis, halo, name):
    small = builtins.min(darr.chunks[axis])
    if halo > 0 and small < halo:
        raise ValueError(f"{name}: chunks of {small} along axis {axis} are smaller than the filter's halo ({halo}); "
                         f"rechunk so that every chunk, the last too, holds at least {halo} "
                         f"(e.g. {name}.rechunk({{{axis}: {_chunk_for(darr.shape[axis], halo)}}}))")


def _out_shape(shape, ks, pad, name):
    """The result's shape along the filtered axes; refused where there is none."""
    out = [n + b + a - k + 1 for n, (b, a), k in zip(shape, (_pads(k, pad) for k in ks), ks)]
    if any(n <= 0 for n in out):
        raise ValueError(f"{name}: shape {tuple(shape)} against a filter of {tuple(ks)} gives no output with pad={pad!r}")
    return out


class _Slicer:
    """A halo piece: the part of a neighbour's chunk that a window reads, copied so that only
    those elements travel to the window's worker (a view would carry its whole chunk)."""

    def __init__(self, src):
        self.src = src

    def __call__(self, block):
        return block[self.src].copy()


# a boundary mode (its mh_mode code) as numpy.pad (and cupy.pad) name it
_NUMPY_PAD = {MODES["constant"]: "constant", MODES["reflect"]: "symmetric", MODES["mirror"]: "reflect",
              MODES["nearest"]: "edge", MODES["wrap"]: "wrap"}


class _Window:
    """One chunk's task: its window (the chunk, the halo pieces from its neighbours, zeros where
    the window passes the array's edge) assembled in one copy, then convolved by run() in
    'valid' mode, which gives exactly the chunk's outputs. With a border (mode, cval), the part
    past the array's edge is the in-array part extended by numpy.pad in the mode's way: the edge
    chunk holds every pixel a reflection reads (chunks of at least the filter's side); along an
    axis of several chunks, wrap's part is read from the chunks at the far end instead."""

    def __init__(self, shape, own, pieces, zeros, run, border=None, extents=None):
        self.shape, self.own, self.pieces, self.zeros, self.run = shape, own, pieces, zeros, run
        self.border, self.extents = border, extents

    def __call__(self, block, halos):
        xp = _xp(block)
        window = xp.empty(self.shape, dtype=block.dtype)
        src, dst = self.own
        window[dst] = block[src]
        for dst, piece in zip(self.pieces, halos):
            window[dst] = piece
        for slab in self.zeros:
            window[slab] = 0
        if self.border is not None and any(b or a for b, a in self.extents):
            mode, cval = self.border
            core = window[tuple(slice(b, n - a) for (b, a), n in zip(self.extents, self.shape))]
            kw = {"constant_values": cval} if mode == MODES["constant"] else {}
            window = xp.ascontiguousarray(xp.pad(core, self.extents, mode=_NUMPY_PAD[mode], **kw))
        return self.run(window)


def _axis_plan(starts, i, k, before, extra, wrap=False):
    """Along one axis, for chunk i (starts: the chunk boundaries): the window's length, the
    (neighbour offset, source slice, destination slice) of each chunk it reads, and the
    destination slices that lie past the array's edge (zeros). With wrap, the window's part past
    an edge reads the chunks at the other end instead (no zeros)."""
    last = i == len(starts) - 2
    w0 = starts[i] - before  # the window's first input, in the array's coordinates
    w1 = starts[i + 1] + (extra if last else 0) - before + k - 1
    if wrap:
        return w1 - w0, _wrapped_reads(starts, i, w0, w1), []
    reads = []
    for offset in (-1, 0, 1):
        j = i + offset
        if 0 <= j < len(starts) - 1:
            lo, hi = builtins.max(w0, starts[j]), builtins.min(w1, starts[j + 1])
            if lo < hi:
                reads.append((offset, slice(lo - starts[j], hi - starts[j]), slice(lo - w0, hi - w0)))
    n = starts[-1]
    zeros = [slice(0, builtins.min(-w0, w1 - w0))] if w0 < 0 else []
    if w1 > n:
        zeros.append(slice(builtins.max(n - w0, 0), w1 - w0))
    return w1 - w0, reads, zeros


def _wrapped_reads(starts, i, w0, w1):
    """The reads of a window [w0, w1) of an axis whose positions wrap modulo its length: each
    piece from the chunk that holds it, as an offset from chunk i."""
    n, reads, p = starts[-1], [], w0
    while p < w1:
        q = p % n
        j = int(np.searchsorted(starts, q, side="right")) - 1
        length = builtins.min(w1 - p, starts[j + 1] - q)
        reads.append((j - i, slice(q - starts[j], q - starts[j] + length), slice(p - w0, p - w0 + length)))
        p += length
    return reads


def _windowed(darr, ks, pad, name, run, border=None, dtype=np.float32):
    """The convolution of darr (axes 0..len(ks)-1) by a filter of sides ks, as a graph of two
    levels: small tasks that copy the halo pieces (k - 1 along each axis cut into several
    chunks) out of the neighbours, then one task a chunk that assembles its window and
    convolves it (_Window). The last chunk of each axis gives out_len - n outputs more ('full')
    or fewer ('valid') than it holds. (dask's map_overlap takes three levels and two copies of
    every chunk (concatenate, then pad), and its zero boundary made a 32768^2 image 13x slower on the H200s; each
    level costs a round trip through the scheduler.)"""
    if border is None:
        pads = [_pads(k, pad) for k in ks]
        out_len = _out_shape(darr.shape, ks, pad, name)
    else:  # pad: the filter's leading pads (k // 2 + origin), the output as large as the array
        pads = [(lead, k - 1 - lead) for lead, k in zip(pad, ks)]
        out_len = list(darr.shape)
    extra = [o - n for o, n in zip(out_len, darr.shape)]
    for axis, k in enumerate(ks):
        if len(darr.chunks[axis]) > 1:
            _check_halo(darr, axis, k - 1 if border is None else k, name)
        if darr.chunks[axis][-1] + extra[axis] < 1:
            raise ValueError(f"{name}: the last chunk along axis {axis} ({darr.chunks[axis][-1]}) holds no output of "
                             f"pad={pad!r} with a filter of {k}; rechunk so that it holds more than {k - 1}")
    starts = [np.concatenate(([0], np.cumsum(c))).tolist() for c in darr.chunks]
    # wrap across chunks: the window's part past an edge is read from the other end's chunks
    wrap = border is not None and border[0] == MODES["wrap"]
    token = tokenize(darr, ks, pad, run, border)  # run's closure holds the filter and the variant
    out_name, halo_name = f"memhier-{name}-conv-{token}", f"memhier-{name}-halo-{token}"
    graph = {}
    for index in itertools.product(*(range(n) for n in darr.numblocks)):
        plans = [_axis_plan(starts[axis], i, k, before, extra[axis], wrap and len(darr.chunks[axis]) > 1)
                 for axis, (i, k, (before, _)) in enumerate(zip(index, ks, pads))]
        shape = tuple(length for length, _, _ in plans)
        own, pieces, halo_keys = None, [], []
        for reads in itertools.product(*(reads for _, reads, _ in plans)):
            offsets = tuple(offset for offset, _, _ in reads)
            src, dst = tuple(s for _, s, _ in reads), tuple(d for _, _, d in reads)
            if not any(offsets):
                own = (src, dst)
                continue
            key = (halo_name,) + index + (len(pieces),)
            neighbour = (darr.name,) + tuple(i + o for i, o in zip(index, offsets))
            graph[key] = (_Slicer(src), neighbour)
            pieces.append(dst)
            halo_keys.append(key)
        zeros = [tuple(slab if a == axis else slice(None) for a in range(len(ks)))
                 for axis, (_, _, slabs) in enumerate(plans) for slab in slabs]
        extents = [tuple(next((sl.stop - sl.start for sl in slabs if (sl.start == 0) == first), 0)
                         for first in (True, False)) for _, _, slabs in plans]
        graph[(out_name,) + index] = (_Window(shape, own, pieces, zeros, run, border, extents), (darr.name,) + index,
                                      halo_keys)
    chunks = tuple(c[:-1] + (c[-1] + e,) for c, e in zip(darr.chunks, extra))
    hlg = HighLevelGraph.from_collections(out_name, graph, dependencies=[darr])
    return da.Array(hlg, out_name, chunks, dtype=dtype, meta=darr._meta.astype(dtype))


def conv2d(image, filter, pad="valid", variant="auto", precision="normwise"):
    """memhier.conv2d of a 2-D dask array of float32 by a small filter (a NumPy or CuPy array
    of the chunks' kind), halos copied from the neighbouring chunks; precision as memhier.conv2d's."""
    if image.ndim != 2 or len(filter.shape) != 2:
        raise ValueError(f"image, filter: {image.ndim}-D and {len(filter.shape)}-D; memhier.dask.conv2d takes a 2-D "
                         "image and a 2-D filter")
    krows, kcols = filter.shape
    _out_shape(image.shape, (krows, kcols), pad, "image")
    if variant == "auto":
        variant = select("conv2d", device=_device_of(image), precision=precision, rows=image.shape[0],
                         cols=image.shape[1], krows=krows, kcols=kcols, pad=pad)
    return _windowed(image, (krows, kcols), pad, "image",
                     lambda window: _ops.conv2d(window, filter, pad="valid", variant=variant))


def conv1d(x, mask, pad="valid", variant="auto", precision="normwise"):
    """memhier.conv1d of a dask array. 1-D x: one long signal in chunks, halos copied from
    the neighbouring chunks. 2-D x (batch, n): chunks along the batch only (each chunk whole signals);
    mask 1-D (one for all) or 2-D (batch, k), one per signal, chunked as x along the batch."""
    k = mask.shape[-1]
    if x.ndim == 1:
        _out_shape(x.shape, (k,), pad, "x")
        if variant == "auto":
            variant = select("conv1d", device=_device_of(x), precision=precision, n=x.shape[0], k=k, pad=pad)
        return _windowed(x, (k,), pad, "x", lambda window: _ops.conv1d(window, mask, pad="valid", variant=variant))
    if x.ndim != 2:
        raise ValueError(f"x: {x.ndim}-D, expected 1-D (one signal) or 2-D (batch, n)")
    if len(x.chunks[1]) != 1:
        raise ValueError(f"x: chunked along the signal ({len(x.chunks[1])} chunks of axis 1); batched conv1d takes "
                         f"chunks along the batch only: x.rechunk({{1: -1}})")
    batch, n = x.shape
    before, after = _pads(k, pad)
    out_n = n + before + after - k + 1
    if variant == "auto":
        variant = select("conv1d", device=_device_of(x), batch=batch, n=n, k=k, pad=pad,
                         per_signal_masks=getattr(mask, "ndim", 1) == 2)
    chunks = (x.chunks[0], (out_n,))
    if getattr(mask, "ndim", 1) == 2:
        if not isinstance(mask, da.Array):
            mask = da.from_array(mask, chunks=(x.chunks[0], -1), asarray=False)
        mask = mask.rechunk((x.chunks[0], -1))
        return da.map_blocks(lambda b, m: _ops.conv1d(_contiguous(b), _contiguous(m), pad=pad, variant=variant),
                             x, mask, chunks=chunks, dtype=np.float32, meta=x._meta)
    return x.map_blocks(lambda b: _ops.conv1d(_contiguous(b), mask, pad=pad, variant=variant),
                        chunks=chunks, dtype=np.float32, meta=x._meta)


def _counts(darr, count_chunk, bins, dtype, weights=None):
    """Per-chunk counts (or weighted sums: count_chunk(values, weights)), one row each, added as
    integers (or in float64)."""
    flat = darr.ravel() if darr.ndim != 1 else darr
    chunks = ((1,) * flat.numblocks[0], (bins,))
    if weights is None:
        per_chunk = flat.map_blocks(lambda b: count_chunk(_contiguous(b))[None, :], new_axis=1, chunks=chunks, dtype=dtype,
                                    meta=darr._meta)
    else:
        if tuple(weights.shape) != tuple(darr.shape):
            raise ValueError(f"weights: shape {tuple(weights.shape)}, it must be the values' shape {tuple(darr.shape)}")
        wflat = (weights.ravel() if weights.ndim != 1 else weights).rechunk(flat.chunks)
        per_chunk = da.map_blocks(lambda b, w: count_chunk(_contiguous(b), _contiguous(w))[None, :], flat, wflat,
                                  new_axis=1, chunks=chunks, dtype=dtype, meta=darr._meta)
    return per_chunk.sum(axis=0, dtype=dtype)


def _fixed_edges(bins, range, dtype):
    """numpy.histogram's edges for data of dtype, known before any chunk is read: explicit edges,
    or a count with its range (a count alone would need the data's extremes)."""
    if isinstance(bins, (int, np.integer)) and range is None:
        raise ValueError("range: needed with a bin count (the edges must not depend on the data); "
                         "give range=(lo, hi) or explicit edges")
    return _histogram.histogram(np.empty(0, dtype), bins, range)[1]


def histogram(a, bins, range=None, weights=None, variant="auto"):
    """memhier.histogram of a float32 dask array: (hist, bin_edges) as dask.array.histogram
    returns them, hist a lazy int64 array of numpy.histogram's counts exactly, bin_edges a NumPy
    array. bins: a count with a range, or explicit edges (the edges must not depend on the data,
    so a count needs the range). weights (a dask array of a's shape, of any real dtype but bool,
    as memhier.histogram takes them): each chunk's float64 sums added in float64, stored once in
    the weights' dtype (numpy's)."""
    edges = _fixed_edges(bins, range, np.float32)

    def host(x):
        return x if type(x).__module__.startswith("cupy") else np.asarray(x)

    if weights is not None:
        def chunk_sums(b, w):
            return host(_histogram.weighted_sums(b, w, bins, range, variant=variant)[0])
        _histogram._refuse_bool(weights)
        return _counts(a, chunk_sums, edges.size - 1, np.float64, weights).astype(weights.dtype), edges

    def chunk_counts(b):
        return host(_histogram.histogram(b, bins, range, variant=variant)[0])
    return _counts(a, chunk_counts, edges.size - 1, np.int64), edges


def bincount(values, bins, weights=None, variant="auto"):
    """memhier.bincount of an int32 dask array: exact counts (uint64; int64 for PyTorch), or with
    weights (a dask array of the values' shape, any real dtype) their sums in float64."""
    bins = _ops.histogram_bins(bins)
    if weights is not None:
        return _counts(values, lambda b, w: _ops.bincount(b, bins, weights=w, variant=variant), bins, np.float64, weights)
    return _counts(values, lambda b: _ops.bincount(b, bins, variant=variant), bins, np.uint64)


def histogram_bytes(data, lo=0, hi=255, width=1, variant="auto"):
    """memhier.histogram_bytes of a uint8 dask array: exact counts."""
    lo, hi, width, bins = _ops.byte_bins(lo, hi, width)
    return _counts(data, lambda b: _ops.histogram_bytes(b, lo, hi, width, variant=variant), bins, np.uint64)


def reduce_sum(x, variant="auto"):
    """The sum of a float32 dask array: each chunk summed by memhier in float32, the chunk sums
    added in float64 and the total rounded to float32 once (a 0-d dask array)."""
    def chunk_sum(b):
        xp = _xp(b)
        s = _ops.reduce_sum(_contiguous(b), variant=variant)
        return xp.asarray(s, dtype=xp.float64).reshape((1,) * b.ndim)
    parts = x.map_blocks(chunk_sum, chunks=tuple((1,) * n for n in x.numblocks), dtype=np.float64, meta=x._meta)
    return parts.sum(dtype=np.float64).astype(np.float32)


def _one_axis(x, axis):
    """axis as an int in [0, ndim), or None for the whole array."""
    if axis is None:
        return None
    if isinstance(axis, tuple):
        raise TypeError(f"axis = {axis}: one axis or None (memhier reduces one axis a call)")
    ndim = x.ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis = {axis}: out of range for a {ndim}-d array")
    return int(axis) % ndim


def _chunk_reduction(x, name, axis, keep_dtype, variant):
    """Each chunk reduced by memhier along axis (or whole), one value a chunk where the axis
    was, as a lazy array of the chunk results' dtype."""
    fn = getattr(_reduce, name)
    axes = tuple(range(x.ndim)) if axis is None else (axis,)

    def chunk(b):
        r = fn(_contiguous(b), axis=axis, variant=variant)
        return _xp(b).asarray(r, dtype=keep_dtype).reshape(tuple(1 if k in axes else n for k, n in enumerate(b.shape)))
    chunks = tuple((1,) * len(c) if k in axes else c for k, c in enumerate(x.chunks))
    return x.map_blocks(chunk, chunks=chunks, dtype=keep_dtype, meta=x._meta), axes


def _wide(dtype):
    """What numpy sums a dtype in (float64 for floats here: float32 chunks' sums are added in it),
    and what a chunk's value and index travel in together (_arg): float64 holds every float32 and
    float64 value, int64 and uint64 every integer of their kind and every index, exactly."""
    kind = np.dtype(dtype).kind
    return np.float64 if kind == "f" else np.uint64 if kind == "u" else np.int64


def _sums(x, axis, variant):
    """Per-chunk sums (float32 chunks summed in double and rounded to float32, float64 in double;
    signed integers and bools in int64, unsigned ones in uint64, exact) added in float64, int64 or
    uint64."""
    wide = _wide(x.dtype)
    if x.dtype == np.float16:  # its chunks summed as float32 (each chunk's sum not rounded to float16)
        x = x.astype(np.float32)
    parts, axes = _chunk_reduction(x, "sum", axis, wide, variant)
    return parts.sum(axis=axes, dtype=wide)


def sum(x, axis=None, variant="auto"):  # noqa: A001 - numpy's name
    """memhier.sum of a dask array of any dtype memhier.sum takes, along one axis or whole: float32
    (and float16, as a float32 copy) sums each chunk's in double, rounded to float32, the chunks'
    added in float64 and rounded once into the dtype; float64 in float64; signed integers and bools
    in int64, unsigned ones in uint64, exact."""
    axis = _one_axis(x, axis)
    total = _sums(x, axis, variant)
    return total.astype(x.dtype) if x.dtype in (np.float16, np.float32) else total


def mean(x, axis=None, variant="auto"):
    """memhier.mean of a dask array: the sum as in sum(), over the count; float32 for float32,
    float64 for the others."""
    axis = _one_axis(x, axis)
    count = x.size if axis is None else x.shape[axis]
    m = _sums(x, axis, variant).astype(np.float64) / count if count else _sums(x, axis, variant) * np.nan
    return m.astype(x.dtype if x.dtype in (np.float16, np.float32) else np.float64)


def _extreme(x, name, axis, variant):
    axis = _one_axis(x, axis)
    parts, axes = _chunk_reduction(x, name, axis, x.dtype, variant)
    return getattr(da, name)(parts, axis=axes)  # NaN in any chunk's result wins, as in one call


def min(x, axis=None, variant="auto"):  # noqa: A001
    """memhier.min of a dask array: exact (NaN where the reduced values hold one)."""
    return _extreme(x, "min", axis, variant)


def max(x, axis=None, variant="auto"):  # noqa: A001
    """memhier.max of a dask array: exact (NaN where the reduced values hold one)."""
    return _extreme(x, "max", axis, variant)


def _arg(x, name, axis, variant):
    """Each chunk's index of its first NaN or first extreme (memhier.argmin or argmax) and the
    value there (NaN where the chunk holds one, else its extreme), the index made global (the
    chunk's offset added; for axis=None the flat index in the whole array); then along the
    chunks numpy's own arg reduction over those values (the first NaN, else the first extreme:
    chunks in order, so the lowest index) picks whose index to take."""
    axis = _one_axis(x, axis)
    if x.size == 0 or (axis is not None and x.shape[axis] == 0):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    flat = x.ravel() if axis is None else x
    k = 0 if axis is None else axis
    starts = np.cumsum((0,) + flat.chunks[k][:-1])

    def chunk(b, block_info=None):
        xp = _xp(b)
        b = _contiguous(b)
        at = block_info[0]["chunk-location"][k]
        i = xp.expand_dims(xp.asarray(getattr(_reduce, name)(b, axis=k, variant=variant)), k)
        v = xp.take_along_axis(b, i, axis=k)
        return xp.stack([v.astype(pair), (i + int(starts[at])).astype(pair)])

    pair = _wide(x.dtype)  # values compared exactly: int64 past 2^53 apart in float64 would tie
    chunks = ((2,),) + tuple((1,) * len(c) if d == k else c for d, c in enumerate(flat.chunks))
    pairs = flat.map_blocks(chunk, chunks=chunks, new_axis=0, dtype=pair, meta=flat._meta.astype(pair))
    pairs = pairs.rechunk({0: 2, k + 1: -1})

    def pick(p):
        xp = _xp(p)
        which = xp.expand_dims(getattr(xp, name)(p[0], axis=k), k)
        return xp.take_along_axis(p[1], which, axis=k).squeeze(k).astype(xp.int64)
    return pairs.map_blocks(pick, drop_axis=[0, k + 1], dtype=np.int64, meta=flat._meta.astype(np.int64))


def argmin(x, axis=None, variant="auto"):
    """memhier.argmin of a dask array, int64: numpy's index (the first NaN, else the first minimum;
    the flat index for axis=None)."""
    return _arg(x, "argmin", axis, variant)


def argmax(x, axis=None, variant="auto"):
    """memhier.argmax of a dask array, int64: numpy's index (the first NaN, else the first maximum)."""
    return _arg(x, "argmax", axis, variant)


def transpose(a, variant="auto"):
    """memhier.transpose of a 2-D float32 dask array: chunk (i, j) transposed becomes chunk (j, i)."""
    if a.ndim != 2:
        raise ValueError(f"a: {a.ndim}-D, expected 2-D")
    return da.blockwise(lambda b: _ops.transpose(_contiguous(b), variant=variant), "ji", a, "ij",
                        dtype=np.float32, meta=a._meta)


# ---- memhier.ndimage's filters (dask-image's ndfilters names) --------------------------------

def _host_weights(weights):
    from .ndimage import _to_host
    return np.asarray(_to_host(weights))


def _image_dtype(image):
    """The image's dtype where memhier.dask's filters take it: memhier.ndimage's real dtypes."""
    return ndimage._dtype_arg(image.dtype, "image")


def _border_held(dtype, mode, cval):
    """Refuses a constant border an integer window cannot hold: scipy extends each line by cval
    as a double, and a window extended in the image's integer dtype would hold cval cast."""
    if np.dtype(dtype).kind not in "iub" or mode != MODES["constant"]:
        return
    info = np.iinfo(np.uint8) if np.dtype(dtype).kind == "b" else np.iinfo(dtype)  # a bool window holds bytes
    if not (math.isfinite(cval) and cval == int(cval) and info.min <= int(cval) <= info.max):
        raise Unsupported("unsupported", f"cval: {cval!r} with a {np.dtype(dtype).name} image in mode 'constant'; "
                          f"memhier.dask extends each chunk's window in the image's dtype, which holds integers "
                          f"{info.min} .. {info.max} (memhier.ndimage takes it on whole arrays)")


def _stored_as(result, dtype):
    """A float32 dask array stored into `dtype` chunk by chunk with scipy's cast (memhier.ndimage's)."""
    if np.dtype(dtype) == np.float32:
        return result

    def cast(b):
        xp = _xp(b)
        out = xp.empty(b.shape, dtype)
        store(b, out, "cupy" if xp is not np else "numpy")
        return out
    return result.map_blocks(cast, dtype=dtype, meta=result._meta.astype(dtype))


def _by_parts(weights_at=False, conjugate=False):
    """A filter of complex images or weights (complex64, complex128) as real filters of their
    parts, combined as memhier.ndimage's single call combines them (_complex.py: a correlation
    conjugates complex weights, a convolution does not; a complex cval gives its parts to the
    parts), so that each output equals the single call's; real ones pass straight through."""
    def wrap(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            given = dict(bound.arguments)
            image, cval = given["image"], given.get("cval", 0.0)
            w = _host_weights(given["weights"]) if weights_at else None
            complex_image, complex_weights = np.dtype(image.dtype).kind == "c", w is not None and np.iscomplexobj(w)
            if not (complex_image or complex_weights):
                return fn(**given)
            if complex_image and np.dtype(image.dtype) not in _complex.TAKEN:
                raise Unsupported("unsupported", f"image: dtype {image.dtype}; memhier.dask filters complex64 and "
                                  "complex128 images")
            if np.iscomplexobj(cval) and not complex_image:
                raise ValueError(f"cval: {cval!r}; a complex cval needs a complex image")

            def run(x, weights, c):
                return fn(**dict(given, image=x, cval=c, **({"weights": weights} if weights_at else {})))
            cr, ci = float(np.real(cval)), float(np.imag(cval))
            if complex_weights:
                w = w.conj() if conjugate else w
            if complex_image and complex_weights:
                real = run(image.real, w.real, cr) - run(image.imag, w.imag, ci)
                imag = run(image.real, w.imag, cr) + run(image.imag, w.real, ci)
            elif complex_image:
                real, imag = run(image.real, w, cr), run(image.imag, w, ci)
            else:
                real, imag = run(image, w.real, cval), run(image, w.imag, cval)
            return _joined(real, imag, np.promote_types(image.dtype, np.complex64))
        return call
    return wrap


def _joined(real, imag, dtype):
    """The complex dask array of two real ones of the same chunks, each part stored as it is."""
    def join(r, i):
        out = _xp(r).empty(r.shape, dtype)
        out.real, out.imag = r, i
        return out
    return da.map_blocks(join, real, imag, dtype=dtype, meta=real._meta.astype(dtype))


@_by_parts(weights_at=True, conjugate=True)
def correlate(image, weights, mode="reflect", cval=0.0, origin=0, variant="auto", precision="per-element"):
    """memhier.ndimage.correlate of a 2-D dask array (NumPy or CuPy chunks of memhier.ndimage's
    dtypes; the result in the image's dtype, cast as scipy casts): halos copied from the
    neighbours, the array's edges extended by the mode (wrap: read from the far end's chunks);
    chunks of at least the filter's side; precision as memhier.ndimage.correlate's."""
    dtype = _image_dtype(image)
    w = _host_weights(weights)
    if image.ndim != 2 or w.ndim != 2:
        raise ValueError(f"image, weights: {image.ndim}-D and {w.ndim}-D; memhier.dask filters 2-D images with "
                         "2-D weights")
    if dtype in ndimage.WIDE:
        return _correlate_wide(image, w, mode, cval, origin, dtype)
    if dtype != np.float32:
        return _stored_as(correlate(image.astype(np.float32), weights, mode, cval, origin, variant, precision), dtype)
    code, cval = ndimage._mode_arg(mode), ndimage._cval_arg(cval)
    ks = tuple(int(k) for k in w.shape)
    origins = ndimage._origin_args(origin, ks)
    if variant == "auto":
        variant = select("conv2d", device=_device_of(image), precision=precision, rows=image.shape[0],
                         cols=image.shape[1], krows=ks[0], kcols=ks[1], mode=mode, origin=tuple(origins))
    leads = [k // 2 + o for k, o in zip(ks, origins)]
    w32 = np.ascontiguousarray(w, dtype=np.float32)

    def run(window):
        xp = _xp(window)
        return _ops.conv2d(window, xp.asarray(w32), pad="valid", variant=variant)
    return _windowed(image, ks, leads, "image", run, border=(code, cval))


def _correlate_wide(image, w, mode, cval, origin, dtype):
    """correlate of an image memhier.ndimage computes in float64: each chunk's window filtered by
    memhier.ndimage.correlate itself (float64 terms, each output from the inputs under its
    weights alone), the window's valid part kept."""
    code, cval = ndimage._mode_arg(mode), ndimage._cval_arg(cval, in_float64=True)
    _border_held(dtype, code, cval)
    ks = tuple(int(k) for k in w.shape)
    origins = ndimage._origin_args(origin, ks)
    leads = [k // 2 + o for k, o in zip(ks, origins)]

    def run(window):
        full = ndimage.correlate(window, w, mode="constant", origin=origins)
        return full[tuple(slice(lead, lead + n - k + 1) for lead, n, k in zip(leads, window.shape, ks))]
    return _windowed(image, ks, leads, "image", run, border=(code, cval), dtype=dtype)


@_by_parts(weights_at=True)
def convolve(image, weights, mode="reflect", cval=0.0, origin=0, variant="auto", precision="per-element"):
    """memhier.ndimage.convolve on a dask array: correlate with the weights reversed and each
    origin mirrored, as scipy does."""
    w = _host_weights(weights)
    origins = ndimage._origin_args(origin, w.shape)
    flipped = [-o - (1 - k % 2) for o, k in zip(origins, w.shape)]
    return correlate(image, w[::-1, ::-1], mode, cval, flipped, variant, precision)


@_by_parts(weights_at=True, conjugate=True)
def correlate1d(image, weights, axis=-1, mode="reflect", cval=0.0, origin=0, variant="auto"):
    """memhier.ndimage.correlate1d on a 2-D dask array of memhier.ndimage's dtypes: each chunk's
    window (halos from the neighbours, the array's edges extended by the mode) filtered by the
    single call's kernel, in the image's dtype."""
    w, axis = ndimage._weights1d(_host_weights(weights)), ndimage._axis_arg(axis, 2)
    return _pass_windows(image, ndimage._pass(w, axis, mode, origin), cval, variant)


def _pass_windows(image, step, cval, variant):
    """One 1-D pass (memhier.ndimage's) of a 2-D dask array, chunk by chunk: the window's valid
    part, whose outputs read inside the window only, so the window's own border never shows."""
    dtype = _image_dtype(image)
    if image.ndim != 2:
        raise ValueError(f"image: {image.ndim}-D; memhier.dask filters 2-D images")
    cval = ndimage._cval_arg(cval, in_float64=dtype in ndimage.WIDE)
    _border_held(dtype, step.mode, cval)
    k = step.taps.size
    ks = (k, 1) if step.axis == 0 else (1, k)
    lead = k // 2 + step.origin
    leads = (lead, 0) if step.axis == 0 else (0, lead)
    inner = ndimage._Pass(step.taps, step.taps64, step.axis, step.origin, MODES["constant"], step.divisor)

    def run(window):
        full = ndimage._run_passes(window, None, [inner], 0.0, (variant, None, None))
        keep = [slice(None), slice(None)]
        keep[step.axis] = slice(lead, lead + window.shape[step.axis] - k + 1)
        return full[tuple(keep)]
    return _windowed(image, ks, leads, "image", run, border=(step.mode, cval), dtype=dtype)


@_by_parts(weights_at=True)
def convolve1d(image, weights, axis=-1, mode="reflect", cval=0.0, origin=0, variant="auto"):
    """memhier.ndimage.convolve1d on a dask array."""
    w = ndimage._weights1d(_host_weights(weights))
    return correlate1d(image, w[::-1], axis, mode, cval, -int(origin) - (1 - w.size % 2), variant)


@_by_parts()
def gaussian_filter(image, sigma, order=0, mode="reflect", cval=0.0, truncate=4.0, radius=None, variant="auto"):
    """memhier.ndimage.gaussian_filter on a dask array: one correlate1d per axis, as the single call
    makes them (memhier.ndimage's passes: none along an axis scipy leaves as it is)."""
    out = image
    for step in ndimage._gaussian_passes(2, sigma, order, mode, truncate, radius, None):
        out = _pass_windows(out, step, cval, variant)
    return out


def _uniform_filter1d(image, size, axis, mode, cval, origin, variant):
    """A mean along an axis, as memhier.ndimage computes it for the image's dtype."""
    step = ndimage._uniform_pass(size, ndimage._axis_arg(axis, 2), mode, origin, np.dtype(image.dtype).kind in "iu")
    return _pass_windows(image, step, cval, variant)


@_by_parts()
def uniform_filter(image, size=3, mode="reflect", cval=0.0, origin=0, variant="auto"):
    """memhier.ndimage.uniform_filter on a dask array: one mean along each axis."""
    sizes, modes, origins = (ndimage._per_axis(v, n) for v, n in ((size, "size"), (mode, "mode"), (origin, "origin")))
    out = image
    for a in range(2):
        if sizes[a] != 1:
            out = _uniform_filter1d(out, int(sizes[a]), a, modes[a], cval, origins[a], variant)
    return out


def _derivative_and_smooth(image, axis, mode, cval, smooth, variant):
    axis, modes = ndimage._axis_arg(axis, 2), ndimage._per_axis(mode, "mode")
    first = correlate1d(image, [-1.0, 0.0, 1.0], axis, modes[axis], cval, 0, variant)
    return correlate1d(first, smooth, 1 - axis, modes[1 - axis], cval, 0, variant)


@_by_parts()
def sobel(image, axis=-1, mode="reflect", cval=0.0, variant="auto"):
    """memhier.ndimage.sobel on a dask array: the difference along `axis`, [1, 2, 1] across it."""
    return _derivative_and_smooth(image, axis, mode, cval, [1.0, 2.0, 1.0], variant)


@_by_parts()
def prewitt(image, axis=-1, mode="reflect", cval=0.0, variant="auto"):
    """memhier.ndimage.prewitt on a dask array: the difference along `axis`, [1, 1, 1] across it."""
    return _derivative_and_smooth(image, axis, mode, cval, [1.0, 1.0, 1.0], variant)


@_by_parts()
def laplace(image, mode="reflect", cval=0.0, variant="auto"):
    """memhier.ndimage.laplace on a dask array: [1, -2, 1] along each axis, the two summed in float32."""
    modes = ndimage._per_axis(mode, "mode")
    return (correlate1d(image, [1.0, -2.0, 1.0], 0, modes[0], cval, 0, variant) +
            correlate1d(image, [1.0, -2.0, 1.0], 1, modes[1], cval, 0, variant))


@_by_parts()
def gaussian_laplace(image, sigma, mode="reflect", cval=0.0, truncate=4.0, radius=None, variant="auto"):
    """memhier.ndimage.gaussian_laplace on a dask array: the Gaussian's second derivative along
    each axis (smoothing along the other), the two summed in float32; a term takes one mode of a
    sequence of two for both its axes, as scipy's generic_laplace hands them out."""
    modes = ndimage._per_axis(mode, "mode")
    return (gaussian_filter(image, sigma, (2, 0), modes[0], cval, truncate, radius, variant) +
            gaussian_filter(image, sigma, (0, 2), modes[1], cval, truncate, radius, variant))


# ---- memhier.ndimage's selection filters and grey morphology ---------------------------------

def _window_sides(size, footprint, structure, ndim):
    """The sides of the selection filter's window on an image (2-D) or a volume (3-D) of ndim
    axes: its footprint's, else its structure's, else its size's (one for every axis, or one
    each)."""
    if footprint is not None:
        sides = np.shape(footprint)
    elif structure is not None:
        sides = np.shape(structure)
    elif size is not None:
        sides = tuple(int(s) for s in ndimage._per_axis(size, "size", ndim))
    else:
        raise ValueError("size, footprint, or structure must be specified")
    if len(sides) != ndim:
        raise ValueError(f"footprint: {len(sides)}-D on a {ndim}-D image; memhier.dask's selection filters take a "
                         "footprint of the image's axes")
    return sides


def _selection(image, sides, mode, cval, origin, check, call):
    """A selection filter of a 2-D or 3-D dask array chunk by chunk: each chunk's window reaches as far
    as the footprint reaches either way from an output (max(lead, side - 1 - lead) a side, lead =
    side // 2 + origin, so that grey_dilation's mirrored footprint is covered too), the part past
    the array's edges extended by the mode, then call(window) (memhier.ndimage's function on
    it), whose outputs that read inside the window only are kept. The arguments are checked
    first by check (the same call) on a one-element array of the image's dtype."""
    dtype, ndim = _image_dtype(image), len(sides)
    modes = ndimage._per_axis(mode, "mode", ndim)
    if any(m != modes[0] for m in modes):
        raise Unsupported("unsupported", f"mode: {mode!r}; memhier.dask extends each chunk's window by one mode")
    check(np.zeros((1,) * ndim, dtype))
    mode, cval = mode_arg(modes[0]), float(cval)
    _border_held(dtype, mode, cval)
    origins = [int(o) for o in ndimage._per_axis(origin, "origin", ndim)]
    reach = [builtins.max(k // 2 + o, k - 1 - (k // 2 + o)) for k, o in zip(sides, origins)]

    def run(window):
        return call(window)[tuple(slice(r, n - r) for r, n in zip(reach, window.shape))]
    return _windowed(image, [2 * r + 1 for r in reach], reach, "image", run, border=(mode, cval), dtype=dtype)


def _selected(fn, image, size, footprint, structure, mode, cval, origin, variant, **kw):
    """memhier.ndimage's `fn` (a selection filter) of a dask array, through _selection (its
    arguments checked with auto's variant: a GPU row named would refuse the check's NumPy array)."""
    if image.ndim not in (2, 3):
        raise ValueError(f"image: {image.ndim}-D; memhier.dask's selection filters take images and volumes (2-D, 3-D)")
    sides = _window_sides(size, footprint, structure, image.ndim)
    args = dict(size=size, footprint=footprint, mode=mode, cval=cval, origin=origin, **kw)
    if structure is not None:
        args["structure"] = structure
    return _selection(image, sides, mode, cval, origin, lambda x: fn(x, **args),
                      lambda x: fn(x, variant=variant, **args))


def minimum_filter(image, size=None, footprint=None, mode="reflect", cval=0.0, origin=0, variant="auto"):
    """memhier.ndimage.minimum_filter on a 2-D or 3-D dask array: bit for bit the call on the
    whole image."""
    return _selected(ndimage.minimum_filter, image, size, footprint, None, mode, cval, origin,
                     variant)


def maximum_filter(image, size=None, footprint=None, mode="reflect", cval=0.0, origin=0, variant="auto"):
    """memhier.ndimage.maximum_filter on a 2-D or 3-D dask array."""
    return _selected(ndimage.maximum_filter, image, size, footprint, None, mode, cval, origin,
                     variant)


def median_filter(image, size=None, footprint=None, mode="reflect", cval=0.0, origin=0, variant="auto"):
    """memhier.ndimage.median_filter on a 2-D or 3-D dask array."""
    return _selected(ndimage.median_filter, image, size, footprint, None, mode, cval, origin,
                     variant)


def rank_filter(image, rank, size=None, footprint=None, mode="reflect", cval=0.0, origin=0, variant="auto"):
    """memhier.ndimage.rank_filter on a 2-D or 3-D dask array."""
    return _selected(ndimage.rank_filter, image, size, footprint, None, mode, cval, origin, variant,
                     rank=rank)


def percentile_filter(image, percentile, size=None, footprint=None, mode="reflect", cval=0.0, origin=0,
                      variant="auto"):
    """memhier.ndimage.percentile_filter on a 2-D or 3-D dask array."""
    return _selected(ndimage.percentile_filter, image, size, footprint, None, mode, cval, origin,
                     variant, percentile=percentile)


def grey_erosion(image, size=None, footprint=None, structure=None, mode="reflect", cval=0.0, origin=0,
                 variant="auto"):
    """memhier.ndimage.grey_erosion on a 2-D or 3-D dask array."""
    return _selected(ndimage.grey_erosion, image, size, footprint, structure, mode, cval, origin,
                     variant)


def grey_dilation(image, size=None, footprint=None, structure=None, mode="reflect", cval=0.0, origin=0,
                  variant="auto"):
    """memhier.ndimage.grey_dilation on a 2-D or 3-D dask array."""
    return _selected(ndimage.grey_dilation, image, size, footprint, structure, mode, cval, origin,
                     variant)


def grey_opening(image, size=None, footprint=None, structure=None, mode="reflect", cval=0.0, origin=0,
                 variant="auto"):
    """memhier.ndimage.grey_opening on a dask array: grey_erosion, then grey_dilation of the whole
    erosion (each extended at the array's edges by the mode, as scipy's two calls are)."""
    args = (size, footprint, structure, mode, cval, origin, variant)
    return grey_dilation(grey_erosion(image, *args), *args)


def grey_closing(image, size=None, footprint=None, structure=None, mode="reflect", cval=0.0, origin=0,
                 variant="auto"):
    """memhier.ndimage.grey_closing on a dask array: grey_dilation, then grey_erosion."""
    args = (size, footprint, structure, mode, cval, origin, variant)
    return grey_erosion(grey_dilation(image, *args), *args)


def morphological_gradient(image, size=None, footprint=None, structure=None, mode="reflect", cval=0.0, origin=0,
                           variant="auto"):
    """memhier.ndimage.morphological_gradient on a dask array: the dilation minus the erosion in
    the dtype's own arithmetic, as scipy subtracts them."""
    args = (size, footprint, structure, mode, cval, origin, variant)
    return grey_dilation(image, *args) - grey_erosion(image, *args)


def _difference(a, b):
    """a - b as scipy's top-hats take it (bool images: exclusive or)."""
    return a ^ b if a.dtype == np.bool_ and b.dtype == np.bool_ else a - b


def white_tophat(image, size=None, footprint=None, structure=None, mode="reflect", cval=0.0, origin=0,
                 variant="auto"):
    """memhier.ndimage.white_tophat on a dask array: the image minus its grey opening."""
    return _difference(image, grey_opening(image, size, footprint, structure, mode, cval, origin, variant))


def black_tophat(image, size=None, footprint=None, structure=None, mode="reflect", cval=0.0, origin=0,
                 variant="auto"):
    """memhier.ndimage.black_tophat on a dask array: its grey closing minus the image."""
    return _difference(grey_closing(image, size, footprint, structure, mode, cval, origin, variant), image)


# ---- pipeline: several filters in one task a chunk ------------------------------------------


def _most(value):
    """The largest of a number or of a sequence of them (one a axis)."""
    return float(np.max(np.abs(np.atleast_1d(np.asarray(value, dtype=float)))))


def _gaussian_reach(kw):
    """A Gaussian's radius, scipy's: the radius given, else truncate sigma + 0.5 truncated."""
    if kw.get("radius") is not None:
        return int(_most(kw["radius"]))
    return int(float(kw.get("truncate", 4.0)) * _most(kw["sigma"]) + 0.5)


def _weights_reach(kw):
    return int(np.asarray(_host_weights(kw["weights"])).size) // 2 + int(_most(kw.get("origin", 0)))


# memhier.ndimage's filters a pipeline step may name, with the most rows or columns an output
# reads away from its own pixel (a bound: a wider halo costs work, never bits). Each is a sum of
# 1-D passes whose rows all add in one order (sepfilter's rows agree bit for bit), so a window's
# outputs equal the whole image's wherever the window holds their reach.
_REACH = {
    "gaussian_filter": _gaussian_reach,
    "gaussian_filter1d": _gaussian_reach,
    "gaussian_laplace": _gaussian_reach,
    "uniform_filter": lambda kw: int(_most(kw.get("size", 3))) // 2 + int(_most(kw.get("origin", 0))),
    "uniform_filter1d": lambda kw: int(_most(kw["size"])) // 2 + int(_most(kw.get("origin", 0))),
    "sobel": lambda kw: 1,
    "prewitt": lambda kw: 1,
    "laplace": lambda kw: 1,
    "correlate1d": _weights_reach,
    "convolve1d": _weights_reach,
}

_WRAPPING = {"wrap", "grid-wrap"}


def _step(step, variant):
    """A pipeline step as (function, its keyword arguments, its reach or None): a memhier.ndimage
    filter of _REACH or its name, with a dict of arguments or a tuple of its positional ones
    after the image (the reach from them); or any callable of a window, alone, with its
    arguments, or with them and its reach (fn, args, reach)."""
    if callable(step) or isinstance(step, str):
        step = (step, {})
    fn, args, reach = (tuple(step) + (None,))[:3]
    if isinstance(fn, str):
        if fn not in _REACH:
            raise ValueError(f"steps: {fn!r} is not one of the filters a pipeline names ({', '.join(sorted(_REACH))})")
        fn = getattr(ndimage, fn)
    name = fn.__name__ if getattr(ndimage, getattr(fn, "__name__", ""), None) is fn and fn.__name__ in _REACH else None
    if isinstance(args, (tuple, list)):  # named as the function names them, after its image
        kw = dict(list(inspect.signature(fn).bind_partial(None, *args).arguments.items())[1:])
    else:
        kw = dict(args)
    if kw.get("output") is not None:
        raise ValueError(f"steps: {getattr(fn, '__name__', fn)!r} is given output=; a pipeline's steps return "
                         "their windows, and the result is the pipeline's dask array")
    if name is not None:
        kw.setdefault("variant", variant)
        if reach is None:
            reach = _REACH[name](kw)
    return fn, kw, None if reach is None else int_arg("reach", reach, 0, C_INT_MAX)


def _boundary(steps):
    """dask's boundary for the steps' modes: 'none' (each window ends at the array's edge, where
    each step extends it by its own mode), or 'periodic' where every step wraps (the window
    then holds the far side's pixels, as the whole image's wrap reads them). Modes of both kinds
    in one pipeline have no window that is right for both, and are refused."""
    modes = set()
    for _, kw, _ in steps:
        mode = kw.get("mode", "reflect")
        modes.update([mode] if isinstance(mode, str) else mode)
    wrapping = modes & _WRAPPING
    if wrapping and modes - _WRAPPING:
        raise ValueError(f"steps: modes {sorted(modes)} mix a wrapping one with others; one pipeline takes either "
                         "kind (run the others as a second pipeline)")
    return "periodic" if wrapping else "none"


_THREAD_LOCAL = threading.local()  # a worker thread's stream and pinned buffers on each GPU


def _thread_stream(cupy):
    """The calling thread's own non-blocking stream on the current GPU, made at its first task and
    kept: CuPy's pool reuses a stream's freed blocks on that stream alone, so a new stream for
    each task would leave each task's device memory cached after it ends."""
    streams = _THREAD_LOCAL.__dict__.setdefault("streams", {})
    device = cupy.cuda.Device().id
    if device not in streams:
        streams[device] = cupy.cuda.Stream(non_blocking=True)
    return streams[device]


def _thread_pinned(cupy, role, shape, dtype):
    """A NumPy array of `shape` in the calling thread's page-locked buffer `role` ('in' or 'out'),
    made at its first task and grown where a window needs more. Page-locked memory is what a copy
    to or from the GPU runs at the bus's rate from; making it costs about as long as copying the
    same bytes twenty times, so a thread keeps its own (a task reuses it once its stream has
    finished with it: each task waits for its stream before it returns)."""
    buffers = _THREAD_LOCAL.__dict__.setdefault("pinned", {})  # role: (memory, its bytes)
    dtype = np.dtype(dtype)
    nbytes = builtins.max(math.prod(shape) * dtype.itemsize, 1)
    if role not in buffers or buffers[role][1] < nbytes:
        buffers[role] = (cupy.cuda.alloc_pinned_memory(nbytes), nbytes)
    return np.frombuffer(buffers[role][0], np.uint8, nbytes).view(dtype)[:math.prod(shape)].reshape(shape)


class _PipelineTask:
    """One chunk's task of a pipeline: its window (the chunk and its neighbours' pieces out to the
    pipeline's depth, as _overlap_plan places them) assembled with each element copied once, then
    fn(window, core), core the chunk's own part of the window. With on_gpu, the window is assembled
    straight in the worker thread's pinned buffer (no window in pageable memory first: a new
    array's first touch runs at about a third of the copy's rate), copied to the GPU on the
    thread's stream, fn run there, its result copied back through pinned memory and returned as
    NumPy once it has arrived; a worker's threads copy while each other's kernels run."""

    def __init__(self, shape, dtype, places, core, fn, on_gpu):
        self.shape, self.dtype, self.places, self.core, self.fn, self.on_gpu = shape, dtype, places, core, fn, on_gpu

    def _assemble(self, window, pieces):
        for (src, dst), piece in zip(self.places, pieces):
            window[dst] = piece[src]
        return window

    def __call__(self, *pieces):
        if not self.on_gpu:
            window = _xp(pieces[0]).empty(self.shape, self.dtype)
            return self.fn(self._assemble(window, pieces), self.core)
        import cupy
        stream = _thread_stream(cupy)
        staged = self._assemble(_thread_pinned(cupy, "in", self.shape, self.dtype), pieces)
        with stream:
            window = cupy.empty(self.shape, self.dtype)
            window.set(staged, stream=stream)
            result = cupy.ascontiguousarray(self.fn(window, self.core))
            back = _thread_pinned(cupy, "out", result.shape, result.dtype)
            result.get(stream=stream, out=back)
            stream.synchronize()
        return back.copy()  # the pinned buffer serves the thread's next task: the result is pageable


def _overlap_plan(starts, i, depth, periodic):
    """Along one axis, chunk i's window as a pipeline reads it (starts: the chunk boundaries):
    `depth` more on each side, none past the array's edge, or with periodic the far side's: the
    window's length, the (chunk offset, source slice, destination slice) of each piece, and the
    chunk's own part of the window. Neighbours narrower than the depth are read through."""
    n = starts[-1]
    w0, w1 = starts[i] - depth, starts[i + 1] + depth
    if not periodic:
        w0, w1 = builtins.max(w0, 0), builtins.min(w1, n)
    return w1 - w0, _wrapped_reads(starts, i, w0, w1), slice(starts[i] - w0, starts[i + 1] - w0)


def _pipeline_map(image, depth, boundary, fn, on_gpu, name, out_chunks, dtype, meta, new_axis=()):
    """fn(window, core) for every chunk of a 2-D image (_PipelineTask), as a graph of two levels:
    small tasks copying the halo pieces out of the neighbours (a view would carry its whole
    chunk), then one task a chunk. (dask's overlap makes three levels and concatenates a new
    window before the task copies it again.) new_axis: the trailing block indices of fn's
    result (pipeline_histogram's counts)."""
    periodic = boundary == "periodic"
    starts = [np.concatenate(([0], np.cumsum(c))).tolist() for c in image.chunks]
    token = tokenize(image, depth, boundary, fn, on_gpu)
    out_name, halo_name = f"memhier-{name}-{token}", f"memhier-{name}-halo-{token}"
    graph = {}
    for index in itertools.product(*(range(n) for n in image.numblocks)):
        plans = [_overlap_plan(starts[axis], i, depth[axis], periodic) for axis, i in enumerate(index)]
        places, args = [], []
        for reads in itertools.product(*(reads for _, reads, _ in plans)):
            offsets = tuple(offset for offset, _, _ in reads)
            src, dst = tuple(s for _, s, _ in reads), tuple(d for _, _, d in reads)
            block = (image.name,) + tuple(i + o for i, o in zip(index, offsets))
            if any(offsets):
                key = (halo_name,) + index + (len(args),)
                graph[key] = (_Slicer(src), block)
                places.append((Ellipsis, dst))
                args.append(key)
            else:  # the chunk itself (or, periodic on one chunk, its far side): read in place
                places.append((src, dst))
                args.append(block)
        shape = tuple(length for length, _, _ in plans)
        core = tuple(own for _, _, own in plans)
        graph[(out_name,) + index + new_axis] = (_PipelineTask(shape, image.dtype, places, core, fn, on_gpu),) + \
            tuple(args)
    hlg = HighLevelGraph.from_collections(out_name, graph, dependencies=[image])
    return da.Array(hlg, out_name, out_chunks, dtype=dtype, meta=meta)


def _pipeline_run(image, steps, depth, variant, on_gpu):
    """pipeline's steps checked and made one function of a window: (run, (depth of each axis),
    dask's boundary, the result's dtype)."""
    dtype = _image_dtype(image)
    if image.ndim != 2:
        raise ValueError(f"image: {image.ndim}-D; memhier.dask filters 2-D images")
    steps = [_step(s, variant) for s in steps]
    if not steps:
        raise ValueError("steps: no step given")
    if depth is None:
        unknown = [getattr(fn, "__name__", repr(fn)) for fn, _, reach in steps if reach is None]
        if unknown:
            raise ValueError(f"steps: {', '.join(unknown)} not among memhier.ndimage's filters a pipeline knows the "
                             "reach of; give the step's reach, (fn, args, reach), or the pipeline's depth (the rows "
                             "and columns its outputs read on each side)")
        depth = builtins.sum(reach for _, _, reach in steps)
    depths = tuple(depth) if isinstance(depth, (tuple, list)) else (depth, depth)
    if len(depths) != 2:
        raise ValueError(f"depth: {depth!r}; one number, or one for each of the image's two axes")
    depth = tuple(int_arg("depth", d, 0, C_INT_MAX) for d in depths)

    def run(window):
        out = window
        for fn, kw, _ in steps:
            out = fn(out, **kw)
        return out
    if on_gpu and _xp(image._meta) is not np:
        raise ValueError("on_gpu: the image's chunks are on a GPU already; on_gpu streams NumPy chunks through one")
    return run, depth, _boundary(steps), dtype


def pipeline(image, steps, depth=None, variant="auto", on_gpu=False):
    """Several memhier.ndimage filters applied in turn to a 2-D dask array, in one task a chunk:
    a chunk's window (its neighbours' pixels out to the steps' reaches added, `depth`) goes
    through every step, and the chunk's part of the last result is kept. Equal, bit for bit, to
    calling the steps in turn on the whole image, at every seam and at the array's edges in
    every mode (each step extends the window's edge there by its own mode; wrapping modes read
    the far side, and a pipeline takes either wrapping modes or the others).

    steps: a sequence of steps, each a filter of _REACH (the function, e.g.
    memhier.ndimage.gaussian_filter, or its name) with its arguments as a dict, or a tuple of the
    ones after the image, e.g. [("gaussian_filter", {"sigma": 4}), ("sobel", {"axis": 0})] or
    [(memhier.ndimage.uniform_filter, (5,))]; or any other callable of a window (an array of the
    chunks' kind) with its arguments and its reach, the rows and columns its outputs read on each
    side: (fn, args, reach). depth: the whole pipeline's halo on each side (one number, or one an
    axis), in place of the steps' reaches added. The result keeps the image's dtype, as each
    filter's does (a callable's result must too); chunks at least `depth` on each side (dask
    rechunks smaller ones). variant: each filter's, where its step gives none.

    on_gpu: for an image of NumPy chunks (a host array, a memmap, an image larger than a GPU's
    memory), each task runs its window's steps on the GPU current in its worker (dask-cuda's
    LocalCUDACluster: the worker's own), copying the window in and the result out through pinned
    memory on its worker thread's stream; the result is an image of NumPy chunks, equal bit for bit to
    the steps run on the GPU on the whole image. A GPU holds only the windows in flight."""
    run, depth, boundary, dtype = _pipeline_run(image, steps, depth, variant, on_gpu)

    def own_part(window, core):
        return _contiguous(run(window)[core])
    return _pipeline_map(image, depth, boundary, own_part, on_gpu, "pipeline", image.chunks, dtype,
                         da.utils.meta_from_array(image, ndim=2, dtype=dtype))


def pipeline_histogram(image, steps, bins, range=None, depth=None, variant="auto", on_gpu=False):
    """memhier.histogram of pipeline(image, steps, depth)'s result, each chunk counted in the task
    that filters it (the filtered image is never stored: a task returns its chunk's counts):
    (hist, bin_edges) as histogram returns them, hist a lazy int64 array of numpy.histogram's
    counts of the whole result exactly, bin_edges a NumPy array. bins: a count with a range, or
    explicit edges (as histogram takes them). on_gpu: as pipeline's, only the counts copied back."""
    run, depth, boundary, dtype = _pipeline_run(image, steps, depth, variant, on_gpu)
    edges = _fixed_edges(bins, range, dtype)
    nbins = edges.size - 1

    def counts_of(window, core):
        counts = _histogram.histogram(_contiguous(run(window)[core]), bins, range, variant=variant)[0]
        return counts.reshape(1, 1, nbins)
    chunks = ((1,) * image.numblocks[0], (1,) * image.numblocks[1], (nbins,))
    per_chunk = _pipeline_map(image, depth, boundary, counts_of, on_gpu, "pipeline-histogram", chunks, np.int64,
                              da.utils.meta_from_array(image, ndim=3, dtype=np.int64), new_axis=(0,))
    return per_chunk.sum(axis=(0, 1), dtype=np.int64), edges

"""memhier on Dask arrays: each op runs chunk by chunk with memhier's kernels, giving what one
call on the whole array gives. Chunks may be NumPy arrays (the CPU backend) or CuPy arrays
(each on its worker's GPU: dask-cuda's LocalCUDACluster, one worker per GPU).

- conv2d, conv1d: halos through dask.array.map_overlap (zeros past the edges), each chunk
  convolved in 'valid' mode over its halo; the variant is the one `auto` picks for the whole
  problem, so every output is computed by the same kernel from the same inputs in the same order
  as in one call: bit for bit the same (docs/python.md, "Dask").
- batched conv1d (2-D x, one row a signal): chunks along the batch, whole signals each.
- histogram, histogram_bytes: per-chunk counts added as integers: exact.
- reduce_sum: per-chunk float32 sums added in float64, then rounded to float32 once.
- transpose: each chunk transposed, the chunk grid transposed with it.

Every function returns a lazy dask array; .compute() or .persist() runs it."""
import numpy as np

import dask.array as da

from . import _ops
from ._native import PADS
from ._registry import select

__all__ = ["conv1d", "conv2d", "histogram", "histogram_bytes", "reduce_sum", "transpose"]


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


def _check_halo(darr, axis, halo, name):
    small = min(darr.chunks[axis])
    if halo > 0 and small < halo:
        raise ValueError(f"{name}: chunks of {small} along axis {axis} are smaller than the filter's halo ({halo}); "
                         f"rechunk to at least {halo} (e.g. {name}.rechunk({{{axis}: {max(halo, 1024)}}}))")


def _out_shape(shape, ks, pad, name):
    """The result's shape along the filtered axes; refused where there is none."""
    out = [n + b + a - k + 1 for n, (b, a), k in zip(shape, (_pads(k, pad) for k in ks), ks)]
    if any(n <= 0 for n in out):
        raise ValueError(f"{name}: shape {tuple(shape)} against a filter of {tuple(ks)} gives no output with pad={pad!r}")
    return out


def _windowed(darr, ks, pad, name, run):
    """The convolution of darr (axes 0..len(ks)-1) by a filter of sides ks. Each chunk gets a
    halo of k - 1 from its neighbours along the axes cut into several chunks (map_overlap,
    boundary 'none'); zeros are added only where a chunk's window passes the array's edge, and
    run(window) convolves in 'valid' mode, giving exactly the chunk's outputs. The last chunk
    of each axis gives out_len - n outputs more ('full') or fewer ('valid') than it holds.
    (dask's own zero boundary made a 32768^2 map_overlap 13x slower on the H200s.)"""
    axes = range(len(ks))
    pads = [_pads(k, pad) for k in ks]
    out_len = _out_shape(darr.shape, ks, pad, name)
    extra = [o - n for o, n in zip(out_len, darr.shape)]
    multi = [len(darr.chunks[axis]) > 1 for axis in axes]
    for axis, k in zip(axes, ks):
        if multi[axis]:
            _check_halo(darr, axis, k - 1, name)
        if darr.chunks[axis][-1] + extra[axis] < 1:
            raise ValueError(f"{name}: the last chunk along axis {axis} ({darr.chunks[axis][-1]}) holds no output of "
                             f"pad={pad!r} with a filter of {k}; rechunk so that it holds more than {k - 1}")
    depth = {axis: (k - 1 if multi[axis] else 0) for axis, k in zip(axes, ks)}
    chunks = tuple(c[:-1] + (c[-1] + e,) for c, e in zip(darr.chunks, extra))
    numblocks = darr.numblocks

    def window(block, block_id=None):
        """block (with what halo it has) cut or zero-extended to the inputs its outputs read."""
        xp = _xp(block)
        cut, widen = [], []
        for axis, k, (before, _) in zip(axes, ks, pads):
            i, last = block_id[axis], block_id[axis] == numblocks[axis] - 1
            have_before = depth[axis] if i > 0 else 0
            have_after = depth[axis] if not last else 0
            own = block.shape[axis] - have_before - have_after
            need_end = own + (extra[axis] if last else 0) - before + k - 1  # from the chunk's first element
            start = have_before - before
            end = have_before + need_end
            cut.append(slice(max(start, 0), min(end, block.shape[axis])))
            widen.append((max(-start, 0), max(end - block.shape[axis], 0)))
        piece = block[tuple(cut)]
        if any(w != (0, 0) for w in widen):
            piece = xp.pad(piece, widen)
        return run(_contiguous(piece))
    return darr.map_overlap(window, depth=depth, boundary="none", trim=False, chunks=chunks, dtype=np.float32,
                            meta=darr._meta)


def conv2d(image, filter, pad="valid", variant="auto"):
    """memhier.conv2d of a 2-D dask array of float32 by a small filter (a NumPy or CuPy array
    of the chunks' kind), halos through map_overlap."""
    krows, kcols = filter.shape
    _out_shape(image.shape, (krows, kcols), pad, "image")
    if variant == "auto":
        variant = select("conv2d", device=_device_of(image), rows=image.shape[0], cols=image.shape[1], krows=krows,
                         kcols=kcols, pad=pad)
    return _windowed(image, (krows, kcols), pad, "image",
                     lambda window: _ops.conv2d(window, filter, pad="valid", variant=variant))


def conv1d(x, mask, pad="valid", variant="auto"):
    """memhier.conv1d of a dask array. 1-D x: one long signal in chunks, halos through
    map_overlap. 2-D x (batch, n): chunks along the batch only (each chunk whole signals);
    mask 1-D (one for all) or 2-D (batch, k), one per signal, chunked as x along the batch."""
    k = mask.shape[-1]
    if x.ndim == 1:
        _out_shape(x.shape, (k,), pad, "x")
        if variant == "auto":
            variant = select("conv1d", device=_device_of(x), n=x.shape[0], k=k, pad=pad)
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


def _counts(darr, count_chunk, bins, dtype):
    """Per-chunk counts, one row each, added as integers."""
    flat = darr.ravel() if darr.ndim != 1 else darr
    per_chunk = flat.map_blocks(lambda b: count_chunk(_contiguous(b))[None, :], new_axis=1,
                                chunks=((1,) * flat.numblocks[0], (bins,)), dtype=dtype, meta=darr._meta)
    return per_chunk.sum(axis=0, dtype=dtype)


def histogram(values, bins, variant="auto"):
    """memhier.histogram of an int32 dask array: exact counts (uint64; int64 for PyTorch)."""
    return _counts(values, lambda b: _ops.histogram(b, bins, variant=variant), bins, np.uint64)


def histogram_bytes(data, lo=0, hi=255, width=1, variant="auto"):
    """memhier.histogram_bytes of a uint8 dask array: exact counts."""
    bins = (hi - lo) // width + 1 if width > 0 and hi >= lo else 0
    if bins <= 0:
        raise ValueError(f"lo = {lo}, hi = {hi}, width = {width}: no bins (need width >= 1 and hi >= lo)")
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


def transpose(a, variant="auto"):
    """memhier.transpose of a 2-D float32 dask array: chunk (i, j) transposed becomes chunk (j, i)."""
    if a.ndim != 2:
        raise ValueError(f"a: {a.ndim}-D, expected 2-D")
    return da.blockwise(lambda b: _ops.transpose(_contiguous(b), variant=variant), "ji", a, "ij",
                        dtype=np.float32, meta=a._meta)

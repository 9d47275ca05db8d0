"""The operations, mirroring the C API (include/memhier.h). Each takes arrays of one kind
(NumPy, CuPy or PyTorch CUDA) and returns the result as that kind, on the same device;
`out=` is written in place and returned. variant: 'auto' or a registry name ('conv1d/regtile'
or 'regtile'); memhier.variants() lists them."""
import ctypes

import numpy as np

from . import _arrays, _fast, _weights
from ._call import DEFAULT_PRECISION, Call, cval_arg, in_place, int_arg, mode_arg, origin_list, pad_arg, \
    variant_arg
from ._convert import on_device
from ._native import lib, check, DTYPES as NATIVE_DTYPES, InvalidArgument

F32 = "float32"


def _placement(pad, mode, cval, origin, axes):
    """(pad code, mode code or None, cval, origins): zeros by `pad`, or scipy.ndimage's `mode`
    with its cval and origin (one int for every axis, or one per axis)."""
    if mode is None:
        if cval != 0.0 or origin != 0:
            raise ValueError(f"{'cval' if cval != 0.0 else 'origin'} is given without a mode: zero padding "
                             "(pad=) has neither")
        return pad_arg("valid" if pad is None else pad), None, 0.0, (0,) * axes
    if pad is not None:
        raise ValueError(f"pad = {pad!r} and mode = {mode!r} both place the filter; give one")
    origins = tuple(int_arg("origin", o, -2**63, 2**63 - 1) for o in origin_list(origin, axes))
    return None, mode_arg(mode), cval_arg(cval), origins


PRECISION_DOC = """precision: the accuracy auto keeps. 'normwise' (the default, as
    scipy.signal.convolve's method='auto'): auto may take an FFT row, whose error is bounded by
    the norms of a tile's inputs (rel_l2 <= 2e-6), so an output that nearly cancels beside bright
    ones carries their error; 'per-element': every output within c eps32 sum |w| |x| of its own
    terms (the direct rows, as scipy.ndimage computes). A variant named explicitly runs whatever
    the contract."""


def _offer(out, x, device, context, precision, form, fn, variant, sizes, out_op, weights=True, spans=None,
           output_fixed=False, **form_args):
    """Offers a call just made into a new output, on x's own device with nothing staged, to the
    compiled entry (_fast.offer), which replays it for the next call of equal arguments; the
    weights (mask, filter) are the call's own, their address read each call. spans: where the
    call is made alike for every shape of x's number of axes, its sizes as spans of x's axes
    (_fast.view_sizes): the record then serves inputs of other shapes, whose output has their
    own shape, or with output_fixed the record's (a sum, counts)."""
    if out is None and _fast.recording() and in_place(x, device, context):
        ndim = len(x.shape)
        alike = spans is not None and (output_fixed or tuple(out_op.shape) == tuple(x.shape))
        _fast.offer(form, fn, variant, sizes, None, x, context, precision, out_op, None, weights_in_call=weights,
                    view=(spans, ndim) if alike else None, view_output_fixed=output_fixed, **form_args)


@_fast.entry("mask")
def conv1d(x, mask, pad=None, variant="auto", out=None, device=None, context=None, *, mode=None, cval=0.0, origin=0,
           precision="normwise"):
    """out[..., i] = sum_j x[..., i + j - lpad] * mask[..., j] (cross-correlation, as
    scipy.signal.correlate). x: 1-D (n,) or 2-D (batch, n); mask: 1-D (k,), one mask for every
    signal, or 2-D (batch, k), one per signal. pad: 'valid' (the default: n - k + 1 outputs),
    'same' (n, the mask's anchor at (k - 1) // 2) or 'full' (n + k - 1), zeros past the ends.
    mode (instead of pad): scipy.ndimage.correlate1d's 'reflect', 'mirror', 'nearest', 'wrap' or
    'constant' (with cval), n outputs, the anchor at k // 2 + origin; any k. precision: see
    PRECISION_DOC."""
    xs = _arrays.operand(x, "x", F32, (1, 2))
    ms = _arrays.operand(mask, "mask", F32, (1, 2))
    _arrays.same_place(xs, ms)
    pad_code, mode_code, cval, (origin,) = _placement(pad, mode, cval, origin, 1)
    name = variant_arg(variant)
    batched = len(xs.shape) == 2
    batch, n = (xs.shape if batched else (1, xs.shape[0]))
    k = ms.shape[-1]
    if len(ms.shape) == 2 and (not batched or ms.shape[0] != batch):
        raise ValueError(f"mask: shape {ms.shape}; a 2-D mask holds one mask per signal of a 2-D x "
                         f"(x has shape {xs.shape})")
    call = Call([xs, ms], device, context, precision)
    stride = k if len(ms.shape) == 2 else 0
    if mode_code is not None:
        os_ = _arrays.output(out, xs, "out", tuple(xs.shape), F32)
        call.run(lib.mh_conv1d_mode(call.ctx, name, call.ptr(xs), batch, n, call.ptr(ms), stride, k, mode_code, cval,
                                    origin, call.out_ptr(os_)))
        _offer(out, xs, device, context, precision, "CONV1D_MODE", lib.mh_conv1d_mode, name, (batch, n, 0), os_,
               spans=None if stride else _fast.trailing_spans(len(xs.shape), 1),
               kernel=(0, k, mode_code, cval, origin, 0), stride=stride)
        return os_.obj
    out_len = lib.mh_conv1d_out_len(n, k, pad_code)
    if out_len == 0:  # the library's own detail names the size it refuses
        check(lib.mh_conv1d_supports(call.ctx, name, n, k, pad_code), call.ctx)
    shape = (batch, out_len) if batched else (out_len,)
    os_ = _arrays.output(out, xs, "out", shape, F32)
    if batched:
        status = lib.mh_conv1d_batched(call.ctx, name, call.ptr(xs), batch, n, call.ptr(ms), stride, k, pad_code,
                                       call.out_ptr(os_))
    else:
        status = lib.mh_conv1d(call.ctx, name, call.ptr(xs), n, call.ptr(ms), k, pad_code, call.out_ptr(os_))
    call.run(status)
    form, fn = ("CONV1D_BATCHED", lib.mh_conv1d_batched) if batched else ("CONV1D", lib.mh_conv1d)
    _offer(out, xs, device, context, precision, form, fn, name, (batch, n, 0), os_,
           spans=None if stride else _fast.trailing_spans(len(xs.shape), 1), kernel=(0, k, pad_code, 0.0, 0, 0),
           stride=stride)
    return os_.obj


@_fast.entry("filter")
def conv2d(image, filter, pad=None, variant="auto", out=None, device=None, context=None, *, mode=None, cval=0.0,
           origin=0, precision="normwise"):
    """out[r, c] = sum_{i,j} image[r + i - lpr, c + j - lpc] * filter[i, j], filter sides 1 to
    255 (past 31: fft-3pass, fft-os, basic, cudnn and the CPU rows), any shape; pad per dimension
    as in conv1d (default 'valid'). mode (instead of pad): scipy.ndimage.correlate's boundary
    modes, cval and origin (one int or (rows, cols)), the image's size out;
    memhier.ndimage.correlate is the full scipy signature (per-element by default). precision:
    see PRECISION_DOC."""
    im = _arrays.operand(image, "image", F32, (2,))
    fi = _arrays.operand(filter, "filter", F32, (2,))
    _arrays.same_place(im, fi)
    pad_code, mode_code, cval, origins = _placement(pad, mode, cval, origin, 2)
    name = variant_arg(variant)
    (rows, cols), (krows, kcols) = im.shape, fi.shape
    out_rows, out_cols = ctypes.c_size_t(), ctypes.c_size_t()
    call = Call([im, fi], device, context, precision)
    if mode_code is not None:
        os_ = _arrays.output(out, im, "out", (rows, cols), F32)
        call.run(lib.mh_conv2d_mode(call.ctx, name, call.ptr(im), rows, cols, call.ptr(fi), krows, kcols, mode_code,
                                    cval, origins[0], origins[1], call.out_ptr(os_)))
        _offer(out, im, device, context, precision, "CONV2D_MODE", lib.mh_conv2d_mode, name, (1, rows, cols), os_,
               spans=_fast.trailing_spans(2, 2), kernel=(krows, kcols, mode_code, cval, origins[0], origins[1]))
        return os_.obj
    status = lib.mh_conv2d_out_dims(rows, cols, krows, kcols, pad_code, ctypes.byref(out_rows), ctypes.byref(out_cols))
    if status != 0:  # the library's own detail names the size it refuses
        check(lib.mh_conv2d_supports(call.ctx, name, rows, cols, krows, kcols, pad_code), call.ctx)
    os_ = _arrays.output(out, im, "out", (out_rows.value, out_cols.value), F32)
    call.run(lib.mh_conv2d(call.ctx, name, call.ptr(im), rows, cols, call.ptr(fi), krows, kcols, pad_code,
                           call.out_ptr(os_)))
    _offer(out, im, device, context, precision, "CONV2D", lib.mh_conv2d, name, (1, rows, cols), os_,
           spans=_fast.trailing_spans(2, 2), kernel=(krows, kcols, pad_code, 0.0, 0, 0))
    return os_.obj


def transpose(a, variant="auto", out=None, device=None, context=None):
    """out[c, r] = a[r, c] for a 2-D float32 array (a new array, not a view)."""
    ai = _arrays.operand(a, "a", F32, (2,))
    rows, cols = ai.shape
    call = Call([ai], device, context)
    os_ = _arrays.output(out, ai, "out", (cols, rows), F32)
    call.run(lib.mh_transpose(call.ctx, variant_arg(variant), call.ptr(ai), rows, cols, call.out_ptr(os_)))
    return os_.obj


def matmul(a, b, variant="auto", out=None, device=None, context=None):
    """a (m, k) @ b (k, n): float32 in FP32 (auto picks FP32-accurate variants only); float64 in
    FP64 (cuBLAS's DGEMM on a GPU); float16 and bfloat16 (PyTorch's, or NumPy arrays of
    ml_dtypes' bfloat16) with the products summed in FP32 and each output rounded to the type once
    (cublasGemmEx on a GPU); both operands of one dtype, the result (or `out`) of it too
    (mh_matmul_typed)."""
    given = a if isinstance(a, _arrays.Operand) else _arrays.Operand(a, "a")
    name = _arrays.dtype_name(given.dtype)
    dtype = name if name in ("float64", "float16", "bfloat16") else F32
    ai = _arrays.operand(given, "a", dtype, (2,))
    bi = _arrays.operand(b, "b", dtype, (2,))
    _arrays.same_place(ai, bi)
    (m, k), (k2, n) = ai.shape, bi.shape
    if k != k2:
        raise ValueError(f"b: shape {bi.shape} does not chain with a's {ai.shape} (a has {k} columns, b {k2} rows)")
    call = Call([ai, bi], device, context)
    os_ = _arrays.output(out, ai, "out", (m, n), dtype)
    if dtype == F32:
        status = lib.mh_matmul(call.ctx, variant_arg(variant), call.ptr(ai), call.ptr(bi), call.out_ptr(os_), m, k, n)
    else:
        status = lib.mh_matmul_typed(call.ctx, variant_arg(variant), NATIVE_DTYPES[dtype], call.ptr(ai), call.ptr(bi),
                                     call.out_ptr(os_), m, k, n)
    call.run(status)
    return os_.obj


@_fast.entry()
def reduce_sum(x, variant="auto", out=None, device=None, context=None):
    """The float32 sum of every element of x (any number of dimensions, C-contiguous). NumPy:
    a numpy.float32; CuPy / PyTorch: a 0-d array on x's device, not read back to the host."""
    xi = _arrays.operand(x, "x", F32)
    n = xi.size
    call = Call([xi], device, context)
    os_ = _arrays.output(out, xi, "out", (), F32)
    call.run(lib.mh_reduce_sum(call.ctx, variant_arg(variant), call.ptr(xi) if n else None, n, call.out_ptr(os_)))
    if xi.kind == "numpy" and out is None:
        return os_.obj[()]
    if n:
        _offer(out, xi, device, context, DEFAULT_PRECISION, "REDUCE_SUM", lib.mh_reduce_sum, variant_arg(variant),
               (1, n, 0), os_, weights=False, spans=_fast.element_spans(len(xi.shape)), output_fixed=True)
    return os_.obj


MAX_BINS = 1 << 20  # MH_HISTOGRAM_MAX_BINS


def histogram_bins(bins):
    """The int32 histogram's bin count, checked at full width."""
    return int_arg("bins", bins, 1, MAX_BINS)


def byte_bins(lo, hi, width):
    """The byte histogram's bin count for (lo, hi, width), each checked at full width."""
    lo, hi = int_arg("lo", lo, 0, 255), int_arg("hi", hi, 0, 255)
    width = int_arg("width", width, 1)
    if hi < lo:
        raise InvalidArgument("invalid argument", f"lo = {lo}, hi = {hi}: byte buckets need lo <= hi")
    return lo, hi, width, (hi - lo) // width + 1


def _counts_dtype(like):
    # PyTorch's uint64 tensors support few operations: counts come back as int64 there (same
    # bits: a count never reaches 2^63).
    return "int64" if like.kind == "torch" else "uint64"


def _outside(like, dt, return_outside):
    """The count (or weight) of the values outside the bins, where the caller asked for it; None
    otherwise, and the library does not count it (one allocation less a call)."""
    return _arrays.output(None, like, "outside", (), dt) if return_outside else None


def _histogram_result(os_, outside, return_outside):
    if not return_outside:
        return os_.obj
    value = outside.obj
    return os_.obj, (value[()] if outside.kind == "numpy" else value)


def _weights_result(total, out, like):
    """Combined float64 sums into the caller's `out` (checked as the one-part call checks it), or
    as they are."""
    if out is None:
        return total
    os_ = _arrays.output(out, like, "out", tuple(total.shape), "float64")
    with on_device(like):
        os_.obj[...] = total
    return os_.obj


@_fast.entry()
def bincount(values, bins, weights=None, variant="auto", out=None, return_outside=False, device=None, context=None):
    """Counts of each int32 value v with 0 <= v < bins (1 .. 2^20 bins), exact, as uint64 (int64
    for PyTorch): numpy.bincount(values, minlength=bins) where every value is below bins; values
    outside [0, bins) are not counted (numpy raises for negative ones and grows the result for
    large ones). weights (any real dtype, the values' shape): numpy.bincount(values, weights,
    minlength=bins), the weights summed in double into float64 (mh_histogram_weighted; the
    `weighted` row adds in a fixed order: the same bits every run); float64 and integer weights
    as float32 parts summed apart and combined (_weights.py; float64 weights' largest magnitude is
    read on the host, so on a GPU such a call waits for the caller's stream). return_outside=True also
    returns how many values (or how much weight) fell outside. Integers of other dtypes (NumPy and
    CuPy) are counted alike, at full width: int64 and uint64 by the library in one pass
    (mh_histogram_int64; weighted, as the others, through int32 indices, _as_bin_indices). Float
    data: memhier.histogram."""
    bins = histogram_bins(bins)
    given = values if isinstance(values, _arrays.Operand) else _arrays.Operand(values, "values")
    wide = weights is None and _counted_as_int64(given)
    vi = _int64_values(given) if wide else _arrays.operand(_as_bin_indices(given, bins), "values", "int32")
    wi = None
    if weights is not None:
        w = _weights.parts_of(weights, vi)
        if len(w.parts) > 1:  # each part's sums, then combined (float64, as numpy's)
            parts = [bincount(vi, bins, p, variant, None, return_outside, device, context) for p in w.parts]
            sums = [p[0] if return_outside else p for p in parts]
            total = _weights_result(w.combine(sums, vi), out, vi)
            return (total, w.combine([p[1] for p in parts], vi)) if return_outside else total
        wi = w.parts[0]
    n = vi.size
    call = Call([vi] + ([wi] if wi is not None else []), device, context)
    dt = _counts_dtype(vi) if wi is None else "float64"
    os_ = _arrays.output(out, vi, "out", (bins,), dt)
    outside = _outside(vi, dt, return_outside)
    data = call.ptr(vi) if n else None
    if wi is None:
        count = lib.mh_histogram_int64 if wide else lib.mh_histogram
        status = count(call.ctx, variant_arg(variant), data, n, bins, call.out_ptr(os_), call.out_ptr(outside))
    else:
        status = lib.mh_histogram_weighted(call.ctx, variant_arg(variant), 0, data, call.ptr(wi) if n else None, n, bins,
                                           0.0, 0.0, None, call.out_ptr(os_), call.out_ptr(outside))
    call.run(status)
    if wi is None and not wide and not return_outside and n and vi is given:  # a replay reads the int32 values given
        _offer(out, vi, device, context, DEFAULT_PRECISION, "BINCOUNT", lib.mh_histogram, variant_arg(variant),
               (1, n, 0), os_, weights=False, spans=_fast.element_spans(len(vi.shape)), output_fixed=True,
               kernel=(0, bins, 0, 0.0, 0, 0))
    return _histogram_result(os_, outside, return_outside)


def _counted_as_int64(op):
    """int64 and uint64 values of NumPy or CuPy, contiguous: counted by mh_histogram_int64 at full
    width in one pass (uint64 as int64: a value from 2^63 on reads as negative, outside as it is)."""
    return (isinstance(op.dtype, np.dtype) and op.dtype in (np.int64, np.uint64) and op.kind != "torch"
            and op.contiguous)


def _int64_values(op):
    """op's int64 or uint64 values as the int64 operand mh_histogram_int64 reads."""
    return _arrays.Operand(op.obj.view(np.int64), "values") if op.dtype == np.uint64 else op


def _as_bin_indices(op, bins):
    """An operand of integers of a dtype other than int32 (NumPy or CuPy) as int32 bin indices, -1
    for each value outside [0, bins) (compared at the values' full width); any other as it is."""
    if not isinstance(op.dtype, np.dtype) or op.dtype.kind not in "iu" or op.dtype == np.int32 or op.kind == "torch":
        return op
    inside = op.obj < bins
    if op.dtype.kind == "i":
        inside &= op.obj >= 0
    xp = np if op.kind == "numpy" else _arrays._cupy()
    with on_device(op):
        return xp.where(inside, op.obj.astype(np.int64), -1).astype(np.int32)


def histogram_bytes(data, lo=0, hi=255, width=1, variant="auto", out=None, return_outside=False, device=None,
                    context=None):
    """Counts of uint8 values c with lo <= c <= hi in bins of `width`: (hi - lo) // width + 1
    bins, bin (c - lo) // width. (0, 255, 1) is the byte histogram."""
    di = _arrays.operand(data, "data", "uint8")
    lo, hi, width, num_bins = byte_bins(lo, hi, width)
    n = di.size
    call = Call([di], device, context)
    dt = _counts_dtype(di)
    os_ = _arrays.output(out, di, "out", (num_bins,), dt)
    outside = _outside(di, dt, return_outside)
    call.run(lib.mh_histogram_bytes(call.ctx, variant_arg(variant), call.ptr(di) if n else None, n, lo, hi, width,
                                    call.out_ptr(os_), call.out_ptr(outside)))
    return _histogram_result(os_, outside, return_outside)

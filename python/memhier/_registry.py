"""The registry (every variant of every op), auto's choice for a problem, and device facts."""
import ctypes
from typing import NamedTuple

import numpy as np

from . import _native
from ._call import int_arg, pad_arg, size_arg
from ._ops import histogram_bins
from ._context import default_context
from ._native import lib, check


class Variant(NamedTuple):
    name: str  # "conv1d/regtile": op, slash, variant
    op: str
    backend: str  # "cpu", "cuda" or "vendor"
    rung: int  # place on the op's ladder: 0 reference, higher is later
    memory: str  # memory spaces used, e.g. "global+shared+constant"
    source: str  # "seed 000", "ours", "cuDNN", ...
    summary: str
    demonstration: bool  # wrong by design (histogram/racy): auto never picks it
    reduced_precision: bool  # TF32 products (matmul/tf32): auto never picks it
    precision: str  # the contract its results keep: 'per-element', or 'normwise' (the FFT rows)
    takes: tuple  # the calls it takes past its op's plain float32 one ('border modes', 'float64', ...)


def _variant(info_ptr):
    v = info_ptr.contents
    return Variant(v.name.decode(), _native.OPS[v.op], _native.BACKENDS[v.backend], v.rung, v.memory.decode(),
                   v.source.decode(), v.summary.decode(), bool(lib.mh_variant_is_demonstration(info_ptr)),
                   bool(lib.mh_variant_is_reduced_precision(info_ptr)),
                   _PRECISION_NAMES[lib.mh_variant_precision(info_ptr)], _takes(lib.mh_variant_takes(info_ptr)))


def _takes(bits):
    """The names of the MH_TAKES_ bits set in bits, as the library names them."""
    return tuple(lib.mh_takes_name(1 << b).decode() for b in range(32) if bits >> b & 1)


_PRECISION_NAMES = {code: name for name, code in _native.PRECISIONS.items()}


def variants(op=None):
    """The registry's rows, of one op ('conv1d', 'conv2d', 'transpose', 'matmul', 'reduce',
    'histogram', 'coalescing') or of all."""
    if op is not None and op not in _native.OPS:
        raise ValueError(f"op: expected one of {', '.join(_native.OPS)}, got {op!r}")
    ops = [op] if op is not None else _native.OPS
    return [_variant(lib.mh_variant(_native.OPS.index(o), i))
            for o in ops for i in range(lib.mh_variant_count(_native.OPS.index(o)))]


def _selector(op, shape):
    """(C function, its size arguments) for select(op, **shape)."""
    def need(*names, optional=()):
        missing = [x for x in names if x not in shape]
        extra = [x for x in shape if x not in names and x not in optional]
        if missing or extra:
            raise TypeError(f"select({op!r}): needs {', '.join(names)}"
                            + (f" (optional: {', '.join(optional)})" if optional else "")
                            + (f"; missing {', '.join(missing)}" if missing else "")
                            + (f"; unknown {', '.join(extra)}" if extra else ""))
    pad = pad_arg(shape.get("pad", "valid"))
    sizes = {name: size_arg(name, v) for name, v in shape.items()
             if name not in ("pad", "per_signal_masks", "bytes", "mode", "origin", "taps", "dtype", "out_dtype",
                             "order")}
    shape = {**shape, **sizes}
    if op == "conv1d":
        need("n", "k", optional=("pad", "batch", "per_signal_masks"))
        if "batch" in shape:
            stride = shape["k"] if shape.get("per_signal_masks") else 0
            return lib.mh_conv1d_batched_select, (shape["batch"], shape["n"], stride, shape["k"], pad)
        return lib.mh_conv1d_select, (shape["n"], shape["k"], pad)
    if op == "conv2d":
        need("rows", "cols", "krows", "kcols", optional=("pad", "mode", "origin"))
        if "mode" in shape:  # memhier.ndimage's placement: the image extended by a boundary mode
            if "pad" in shape:
                raise ValueError("conv2d: give pad (zero padding) or mode (memhier.ndimage's), not both")
            mode = shape["mode"]
            if not isinstance(mode, str) or mode not in _native.MODES:
                raise ValueError(f"mode: {mode!r} is not one of {', '.join(repr(m) for m in _native.MODES)}")
            origin = shape.get("origin", 0)
            origins = tuple(origin) if isinstance(origin, (list, tuple)) else (origin, origin)
            if len(origins) != 2:
                raise ValueError(f"origin: {origin!r}; a 2-D filter takes one origin or two")
            return lib.mh_conv2d_mode_select, (shape["rows"], shape["cols"], shape["krows"], shape["kcols"],
                                               _native.MODES[mode], int_arg("origin", origins[0], -2**63, 2**63 - 1),
                                               int_arg("origin", origins[1], -2**63, 2**63 - 1))
        return lib.mh_conv2d_select, (shape["rows"], shape["cols"], shape["krows"], shape["kcols"], pad)
    if op == "transpose":
        need("rows", "cols")
        return lib.mh_transpose_select, (shape["rows"], shape["cols"])
    if op == "matmul":
        need("m", "k", "n")
        return lib.mh_matmul_select, (shape["m"], shape["k"], shape["n"])
    if op == "reduce":
        need("n")
        return lib.mh_reduce_sum_select, (shape["n"],)
    if op == "histogram":
        need("n", "bins", optional=("bytes", "floats", "edges"))
        # the kind of values (mh_histogram_kind): int32, bytes, float32 in uniform bins or between edges
        kind = 3 if shape.get("edges") else 2 if shape.get("floats") else int(bool(shape.get("bytes", False)))
        return lib.mh_histogram_select, (shape["n"], histogram_bins(shape["bins"]), kind)
    if op == "sepfilter":
        need("rows", "cols", "taps", optional=("batch", "channels", "dtype", "out_dtype", "order"))
        return lib.mh_sepfilter_select, (ctypes.byref(_sepfilter_desc(shape)),)
    raise ValueError(f"op: expected conv1d, conv2d, transpose, matmul, reduce, histogram or sepfilter, got {op!r}")


def _sepfilter_desc(shape):
    """select('sepfilter', ...)'s problem: taps=(vertical, horizontal) counts (ones stand in for
    the taps, which the choice does not read), dtypes by NumPy's names, order as mh_sepfilter_order
    (0: vertical first, 1: horizontal first, 2: summed)."""
    taps = shape["taps"]
    counts = tuple(taps) if isinstance(taps, (list, tuple)) else (taps, taps)
    if len(counts) != 2:
        raise ValueError(f"taps: {taps!r}; give the vertical and horizontal pass's counts, or one for both")
    counts = [int_arg("taps", t, 1, _native.SEPFILTER_MAX_TAPS) for t in counts]
    dtypes = []
    for name in ("dtype", "out_dtype"):
        dt = str(np.dtype(shape.get(name, shape.get("dtype", "float32"))))
        if dt not in _native.DTYPES:
            raise ValueError(f"{name}: {dt} is not one of {', '.join(_native.DTYPES)}")
        dtypes.append(_native.DTYPES[dt])
    ones = (ctypes.c_float * _native.SEPFILTER_MAX_TAPS)(*([1.0] * _native.SEPFILTER_MAX_TAPS))
    axes = [_native.SepfilterAxis(ones, n, 0, 1, 1) for n in counts]
    desc = _native.SepfilterDesc(shape.get("batch", 1), shape["rows"], shape["cols"], shape.get("channels", 1),
                                 dtypes[0], dtypes[1], axes[0], axes[1], int_arg("order", shape.get("order", 0), 0, 2),
                                 0.0)
    desc._keep = ones
    return desc


def select(op, device=0, context=None, explain=False, precision="normwise", **shape):
    """The variant `auto` runs for a problem on a device, e.g. select('conv1d', n=1 << 24,
    k=2047), select('matmul', m=4096, k=4096, n=4096, device='cpu'), under the accuracy contract
    `precision` ('normwise' or 'per-element'; memhier.variants() gives each row's). explain=True
    returns (variant, why): why is the text `memhier explain` prints (the contract, the device's
    rules, the rule with this problem's numbers, every candidate's answer)."""
    fn, args = _selector(op, shape)
    ctx = context if context is not None else default_context(device)
    ctx.set_precision(precision)
    chosen = ctypes.POINTER(_native.VariantInfo)()
    check(fn(ctx.handle, *args, ctypes.byref(chosen)), ctx.handle)
    name = chosen.contents.name.decode()
    return (name, lib.mh_context_explanation(ctx.handle).decode()) if explain else name


def info(device=0, ceilings=False, context=None):
    """Device facts as a dict; ceilings=True also measures the copy bandwidth (GB/s) and the FP32
    FMA rate (GFLOP/s) on it (a few hundred ms)."""
    ctx = context if context is not None else default_context(device)
    d = _native.DeviceInfo()
    check(lib.mh_device_info_get(ctx.handle, ctypes.byref(d)), ctx.handle)
    facts = {name: getattr(d, name) for name, _ in d._fields_}
    facts["name"] = d.name.decode()
    facts["device"] = "cpu" if d.device == _native.CPU else d.device
    if ceilings:
        c = _native.Ceilings()
        check(lib.mh_measure_ceilings(ctx.handle, ctypes.byref(c)), ctx.handle)
        facts["copy_gbps"], facts["fma_gflops"] = c.copy_gbps, c.fma_gflops
    return facts

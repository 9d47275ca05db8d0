"""Weights of any real dtype for the weighted histograms (memhier.histogram, memhier.bincount),
whose kernels (mh_histogram_weighted) read float32 weights and sum them in double: the weights
as float32 parts whose double sums, combined, give the sum of the weights.

  float32          itself
  float16, bool    converted to float32 (exactly)
  float64          three float32 parts, w = p0 + p1 + p2 + r with |r| <= 2^-72 |w| (each part
                   the float32 rounding of what the parts before leave): the sums within double
                   rounding, for weights of magnitude 2^-100 .. 2^127 (float32's range; a weight
                   past it is refused, a smaller one loses its low bits to float32's subnormals).
                   The largest magnitude is read on the host: on a GPU the call waits for the
                   caller's stream
  integers         limbs of 20 bits from the bottom (the top one signed for signed dtypes), each
                   exact in float32 and its double sum exact below 2^33 values; the limbs' sums
                   scaled by their places and added in float64 (numpy converts integer weights
                   to float64 and adds those: nothing wraps)

numpy's result dtypes are the callers': numpy.bincount float64; numpy.histogram the weights'
dtype, its float64 sum stored with numpy's astype (integers as numpy casts a float64 sum)."""
import numpy as np

from . import _arrays
from ._convert import astype, on_device

LIMB_BITS = 20
FLOAT32_SPAN = 2.0 ** 127  # a float64 weight's first part must be finite in float32


class WeightParts:
    """parts: float32 Operands of the weights' shape on their device; dtype: the weights' own
    (numpy's), integer: whether the parts are integer limbs or float parts."""
    __slots__ = ("parts", "dtype", "integer")

    def __init__(self, parts, dtype, integer):
        self.parts, self.dtype, self.integer = parts, dtype, integer

    def combine(self, sums, like):
        """The float64 sums of the weights from each part's float64 sums (arrays of like's kind):
        added from the last part (the smallest float part, the top limb) to the first, each limb's
        exact sum scaled by its place (numpy converts integer weights to float64 and adds those,
        without wrapping)."""
        with on_device(like):
            total = None
            for k in reversed(range(len(sums))):
                s = sums[k] * float(2 ** (LIMB_BITS * k)) if self.integer else sums[k]
                total = s if total is None else total + s
            return total


def _part(x, kind, name):
    return _arrays.Operand(astype(x, kind, "float32"), name)


def parts_of(weights, like, name="weights"):
    """weights (any real dtype, like's shape and place) as WeightParts."""
    given = weights if isinstance(weights, _arrays.Operand) else _arrays.Operand(weights, name)
    if tuple(given.shape) != tuple(like.shape):
        raise ValueError(f"{name}: shape {tuple(given.shape)}, it must be the values' shape {tuple(like.shape)}")
    dtype = given.dtype if isinstance(given.dtype, np.dtype) else None
    if dtype is None or dtype.kind not in "fiub" or dtype.itemsize > 8:
        raise TypeError(f"{name}: dtype {given.dtype}; expected real numbers")
    if dtype == np.float32:
        return WeightParts([_arrays.operand(given, name, "float32")], dtype, False)
    w, kind = given.obj, given.kind
    with on_device(given):
        if dtype.kind in "fb" and dtype != np.float64:  # float16 and bool: exact in float32
            return WeightParts([_part(w, kind, name)], dtype, False)
        if dtype == np.float64:
            return WeightParts(_float64_parts(w, kind, name), dtype, False)
        return WeightParts(_limbs(w, kind, dtype, name), dtype, True)


def _float64_parts(w, kind, name):
    """Three float32 parts of float64 weights, each the float32 rounding of what is left (a
    non-finite weight in the first part alone)."""
    xp = _arrays._torch() if kind == "torch" else (np if kind == "numpy" else _arrays._cupy())
    finite = xp.isfinite(w)
    big = float(xp.max(xp.where(finite, xp.abs(w), 0.0))) if w.size else 0.0
    if big >= FLOAT32_SPAN:
        raise ValueError(f"{name}: a float64 weight of magnitude {big:g}; memhier sums float64 weights as float32 "
                         f"parts, which hold magnitudes below 2^127 (scale the weights, or convert them)")
    parts, left = [], w
    for _ in range(3):
        p = astype(left, kind, "float32")
        parts.append(_arrays.Operand(p, name))
        rest = left - astype(p, kind, "float64")
        left = xp.where(finite, rest, xp.zeros_like(rest))
    return parts


def _limbs(w, kind, dtype, name):
    """Integer weights as limbs of LIMB_BITS bits from the bottom, the top one the rest (signed
    for signed dtypes), each exact in float32."""
    bits = dtype.itemsize * 8
    count = 1 if bits <= 16 else -(-bits // LIMB_BITS)
    if count == 1:
        return [_part(w, kind, name)]
    mask = (1 << LIMB_BITS) - 1
    return [_part((w >> (LIMB_BITS * k)) & mask if k < count - 1 else w >> (LIMB_BITS * k), kind, name)
            for k in range(count)]

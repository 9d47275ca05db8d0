"""The float64 references memhier's results are checked against, and the bound they are held
to: one home for the CLI oracles (tests/oracle) and the Python package's tests (python/tests).
Each reference returns the exact result and, per output, the sum of |terms| that made it (the
bound scales with it, as src/core/verify.c's does)."""
import math

import numpy as np
import scipy.signal


def rtol(terms, reduced=False):
    """As the C tests' mh_sum_rtol: 1e-5 (1 + log2 terms); 2^-10 more for a reduced-precision
    (TF32) row, whose operands keep 10-bit mantissas."""
    return 1e-5 * (1.0 + math.log2(max(terms, 1))) + (2.0**-10 if reduced else 0.0)


def worst_violation(got, ref, mag, terms, reduced=False, per_element=False):
    """None when every output is within rtol(terms) * (mag[i] + mean(mag)) (per_element: within
    rtol(terms) * mag[i], its own terms' bound, the per-element contract); else (index, got, ref,
    bound) of the output furthest past its bound."""
    got, ref, mag = (np.asarray(v, dtype=np.float64) for v in (got, ref, mag))
    bound = rtol(terms, reduced) * (mag + (mag.mean() if mag.size and not per_element else 0.0))
    err = np.abs(got - ref)
    err[~np.isfinite(got)] = np.inf
    if mag.size == 0 or np.all(err <= bound):
        return None
    i = np.unravel_index(np.argmax(err - bound), err.shape)
    return i, got[i], ref[i], bound[i]


def _cut(n, k, pad):
    """The valid, same or full part of a full correlation along one axis ('same' at PyTorch's
    anchor: (k - 1) // 2 outputs before the first sample)."""
    if pad == "full":
        return slice(0, n + k - 1)
    if pad == "valid":
        return slice(k - 1, n)
    start = k - 1 - (k - 1) // 2
    return slice(start, start + n)


def correlate1d(x, mask, pad):
    """conv1d's result (cross-correlation) and the sum of |terms| per output."""
    x, mask = np.asarray(x, np.float64), np.asarray(mask, np.float64)
    full = scipy.signal.correlate(x, mask, "full")
    mag = scipy.signal.correlate(np.abs(x), np.abs(mask), "full")
    s = _cut(x.size, mask.size, pad)
    return full[s], mag[s]


def correlate2d(image, filt, pad):
    """conv2d's result (cross-correlation) and the sum of |terms| per output."""
    im, f = np.asarray(image, np.float64), np.asarray(filt, np.float64)
    full = scipy.signal.correlate2d(im, f, "full")
    mag = scipy.signal.correlate2d(np.abs(im), np.abs(f), "full")
    rows = _cut(im.shape[0], f.shape[0], pad)
    cols = _cut(im.shape[1], f.shape[1], pad)
    return full[rows, cols], mag[rows, cols]


# scipy.ndimage's boundary modes as numpy.pad names them (numpy.pad extends repeatedly, as far
# as the pad reaches, which is what an image smaller than its filter needs)
NUMPY_PAD = {"reflect": "symmetric", "grid-mirror": "symmetric", "mirror": "reflect", "nearest": "edge",
             "wrap": "wrap", "grid-wrap": "wrap", "constant": "constant", "grid-constant": "constant"}


def correlate1d_mode(x, mask, mode, cval=0.0, origin=0):
    """scipy.ndimage.correlate1d's result along the last axis, computed as correlate2d_mode is
    (numpy.pad in the mode's way, then a valid correlation in float64), and the sum of |terms|."""
    x, m = np.asarray(x, np.float64), np.asarray(mask, np.float64)
    k = m.size
    lead = k // 2 + origin
    widths = [(0, 0)] * (x.ndim - 1) + [(lead, k - 1 - lead)]
    kw = {"constant_values": cval} if NUMPY_PAD[mode] == "constant" else {}
    padded = np.pad(x, widths, mode=NUMPY_PAD[mode], **kw)
    windows = np.lib.stride_tricks.sliding_window_view(padded, k, axis=-1)
    return windows @ m, np.abs(windows) @ np.abs(m)


def correlate2d_mode(image, filt, mode, cval=0.0, origin=(0, 0)):
    """scipy.ndimage.correlate's result, computed independently of scipy: the image padded by
    numpy.pad in the mode's way, then every window summed in float64; and the sum of |terms|.
    (scipy.ndimage.correlate itself reads uninitialised memory on some tiny images with extreme
    origins: a 2 x 3 image, an 11 x 1 filter at origin 5, mode 'reflect', gives NaN in
    scipy 1.17; its correlate1d agrees with this reference.)"""
    im, f = np.asarray(image, np.float64), np.asarray(filt, np.float64)
    kr, kc = f.shape
    lr, lc = kr // 2 + origin[0], kc // 2 + origin[1]
    widths = ((lr, kr - 1 - lr), (lc, kc - 1 - lc))
    kw = {"constant_values": cval} if NUMPY_PAD[mode] == "constant" else {}
    padded = np.pad(im, widths, mode=NUMPY_PAD[mode], **kw)
    out, mag = np.zeros(im.shape), np.zeros(im.shape)
    # a filter row at a time, its taps against each output's row of windows: a tap at a time made
    # kr kc passes over the image, the slowest part of the tests that call it
    abs_padded, abs_taps = np.abs(padded), np.abs(f)
    for i in range(kr):
        def windows(p):
            return np.lib.stride_tricks.sliding_window_view(p[i:i + im.shape[0]], kc, axis=1)
        out += windows(padded) @ f[i]
        mag += windows(abs_padded) @ abs_taps[i]
    return out, mag


def high_dynamic_range(rng, shape, bright=0.01, gain=1e6):
    """An image of values in [0, 1) with a share of its pixels `gain` times brighter (stars,
    highlights, fluorescence): the dark outputs beside bright ones are where a normwise error
    (an FFT tile's, which follows its brightest inputs) misses the per-element bound."""
    x = rng.uniform(0, 1, shape)
    x[rng.uniform(0, 1, shape) < bright] *= gain
    return x.astype(np.float32)


def matmul(a, b):
    """a @ b and the sum of |terms| per output."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a @ b, np.abs(a) @ np.abs(b)


def reduce_sum(x):
    """The sum and the sum of |x|."""
    x = np.asarray(x, np.float64)
    return x.sum(), np.abs(x).sum()


def histogram(values, lo, hi, width):
    """Counts of values in [lo, hi] by bins of width, and how many fell outside."""
    v = np.asarray(values).astype(np.int64).ravel()
    inside = (v >= lo) & (v <= hi)
    return np.bincount((v[inside] - lo) // width, minlength=(hi - lo) // width + 1), int((~inside).sum())

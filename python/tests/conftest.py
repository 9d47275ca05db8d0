"""Shared helpers: float64 references (NumPy/SciPy), the accuracy bound the C tests use, and
the GPU array kinds (CuPy, PyTorch) where a CUDA device and the package exist."""
import math

import numpy as np
import pytest
import scipy.signal

import memhier


def rtol(terms):
    """As the C tests' mh_sum_rtol: 1e-5 (1 + log2 terms)."""
    return 1e-5 * (1.0 + math.log2(max(terms, 1)))


def assert_close(got, ref, mag, terms, what=""):
    """Element i within rtol(terms) * (mag[i] + mean(mag)), mag being the sum of |terms| that
    made ref[i] (the bound scales with the conditioning, as in src/core/verify.c)."""
    got, ref, mag = (np.asarray(v, dtype=np.float64) for v in (got, ref, mag))
    assert got.shape == ref.shape, f"{what}: shape {got.shape}, expected {ref.shape}"
    assert np.all(np.isfinite(got)), f"{what}: non-finite outputs"
    tol = rtol(terms) * (mag + (mag.mean() if mag.size else 0.0))
    bad = np.abs(got - ref) > tol
    assert not bad.any(), f"{what}: {bad.sum()} of {bad.size} outside the bound, first at {np.argwhere(bad)[0]}"


def correlate1d(x, mask, pad):
    """float64 reference of conv1d and its sum of |terms|; 'same' anchors at (k - 1) // 2."""
    x, mask = np.asarray(x, np.float64), np.asarray(mask, np.float64)
    full = scipy.signal.correlate(x, mask, "full")
    mag = scipy.signal.correlate(np.abs(x), np.abs(mask), "full")
    n, k = x.size, mask.size
    if pad == "full":
        return full, mag
    if pad == "valid":
        return full[k - 1:n], mag[k - 1:n]
    start = k - 1 - (k - 1) // 2
    return full[start:start + n], mag[start:start + n]


def correlate2d(image, filt, pad):
    im, f = np.asarray(image, np.float64), np.asarray(filt, np.float64)
    full = scipy.signal.correlate2d(im, f, "full")
    mag = scipy.signal.correlate2d(np.abs(im), np.abs(f), "full")
    (r, c), (kr, kc) = im.shape, f.shape
    if pad == "full":
        return full, mag
    if pad == "valid":
        return full[kr - 1:r, kc - 1:c], mag[kr - 1:r, kc - 1:c]
    sr, sc = kr - 1 - (kr - 1) // 2, kc - 1 - (kc - 1) // 2
    return full[sr:sr + r, sc:sc + c], mag[sr:sr + r, sc:sc + c]


def has_cuda_device():
    try:
        memhier.Context(0).close()
        return True
    except memhier.NoDevice:
        return False


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy % (2**32)
    print(f"seed {seed}")  # pytest shows it when a test fails
    return np.random.default_rng(seed)

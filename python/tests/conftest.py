"""Shared helpers: the float64 references and the accuracy bound (tests/reference.py, shared with
the CLI oracles), and the GPU array kinds (CuPy, PyTorch) where a CUDA device and the package exist."""
import os
import sys

import numpy as np
import pytest

import memhier

# the float64 references, shared with the CLI oracles (tests/reference.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
from reference import correlate1d, correlate2d, rtol  # noqa: E402,F401  (the tests import them from here)
import reference  # noqa: E402


def assert_close(got, ref, mag, terms, what=""):
    """Element i within rtol(terms) * (mag[i] + mean(mag)), mag being the sum of |terms| that
    made ref[i] (tests/reference.py, as src/core/verify.c bounds them)."""
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == np.shape(ref), f"{what}: shape {got.shape}, expected {np.shape(ref)}"
    assert np.all(np.isfinite(got)), f"{what}: non-finite outputs"
    worst = reference.worst_violation(got, ref, mag, terms)
    assert worst is None, f"{what}: outside the bound, worst at {worst[0]}: {worst[1]!r} against {worst[2]!r} " \
                          f"(bound {worst[3]:.3g})"


def run_in_threads(work, count):
    """work(i) on `count` threads at once; the first exception any raised, re-raised here."""
    import threading
    errors = []

    def guarded(i):
        try:
            work(i)
        except Exception as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


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

"""The compiled entry (memhier._entry through memhier._fast): a call equal to an earlier one
replays that call's library call from C. Its results are the Python path's bit for bit, its key
tells apart what the Python path's checks tell apart, and it answers as the function it stands
for. NumPy arrays on the CPU backend here; CuPy in test_gpu.py."""
import inspect
import os
import pickle
import sysconfig

import numpy as np
import pytest

import memhier
from conftest import run_in_threads
from memhier import _fast
from memhier import ndimage as mnd

needs_entry = pytest.mark.skipif(_fast._entry is None, reason="the compiled entry is not built (no Python headers)")


def test_the_entry_is_built_where_python_headers_are():
    """Where this interpreter has its headers the build makes the entry and the package loads it:
    a build that silently left it out would run every call through Python."""
    if os.environ.get("MEMHIER_ENTRY") == "0":
        pytest.skip("MEMHIER_ENTRY=0 asks for the Python path")
    if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
        pytest.skip("this interpreter has no headers")
    assert _fast._entry is not None, "the compiled entry did not load"
    assert type(mnd.correlate).__name__ == "Entry"


def f32(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def _calls(rng):
    """(function, args, kwargs, replayed) for every function with an entry, with arguments the
    entry keys; replayed: whether the call is one library call (else it runs in Python each
    time: weights the entry does not key, a volume's call an axis)."""
    x, stack = f32(rng, 19, 23), f32(rng, 3, 11, 13)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    u8 = rng.integers(0, 256, (17, 21)).astype(np.uint8)
    return [(mnd.correlate, (x, w), {}, True),
            (mnd.correlate, (x, w.astype(np.float64)), {"mode": "constant", "cval": 2, "origin": [1, 0]}, True),
            (mnd.correlate, (stack, w), {"mode": "wrap", "axes": (1, 2)}, True),
            (mnd.convolve, (x, w), {"mode": "mirror", "origin": (0, -1)}, True),
            (mnd.correlate1d, (x, w[:, 0]), {"axis": 0, "mode": "nearest"}, False),  # a strided view
            (mnd.correlate1d, (x, w[:, 0].copy()), {"axis": 0, "mode": "nearest"}, True),
            (mnd.correlate1d, (u8, [1, 2, 1]), {"output": "float32"}, True),
            (mnd.convolve1d, (x, w[:, 0].copy()), {"axis": 0, "mode": "mirror", "origin": 1}, True),
            (mnd.convolve1d, (u8, [1, 2, 4]), {"output": "float32"}, True),
            (mnd.gaussian_filter1d, (x, 1.5), {"axis": 0, "order": 1}, True),
            (mnd.gaussian_filter, (x, (2.0, 1.0)), {"mode": ["reflect", "wrap"]}, True),
            (mnd.gaussian_filter, (u8, 1.2), {}, True),
            (mnd.uniform_filter1d, (x, 4), {"axis": -1}, True),
            (mnd.uniform_filter, (u8, 3), {"output": np.float32}, True),
            (mnd.uniform_filter, (u8, 3), {"output": np.dtype(np.int16)}, True),
            (mnd.sobel, (x,), {"axis": 0}, True),
            (mnd.prewitt, (x, 1), {"mode": "constant", "cval": 0.5}, True),
            (mnd.laplace, (x,), {}, True),
            (mnd.laplace, (stack,), {}, False),
            (mnd.gaussian_laplace, (x, 1.3), {}, True),
            (mnd.gaussian_laplace, (u8, (0.8, 1.6), "float32", ("constant", "wrap"), 2.0),
             {"truncate": 3.0, "radius": 2, "axes": (1, 0)}, True),
            (mnd.median_filter, (x,), {"size": 3}, True),
            (mnd.median_filter, (u8,), {"footprint": np.eye(3, dtype=bool), "mode": "constant", "cval": 7}, True),
            (mnd.rank_filter, (stack, -2), {"size": (1, 3, 2), "mode": "wrap", "origin": (0, 1, 0)}, True),
            (mnd.median_filter, (stack,), {"size": 3, "mode": "mirror"}, True),  # a volume's: depth from the shape
            (mnd.percentile_filter, (u8, 30), {"size": (2, 5), "axes": (1, 0)}, True),
            (mnd.minimum_filter1d, (x, 4), {"axis": 0, "origin": -1}, True),
            (mnd.maximum_filter, (u8,), {"footprint": w > 0}, True),
            (mnd.maximum_filter, (x,), {"size": 3}, True),  # scipy's two 1-D passes as one rectangle
            (mnd.maximum_filter, (x,), {"size": 3, "mode": ["reflect", "wrap"]}, False),  # two calls, a mode each
            (mnd.grey_dilation, (x,), {"footprint": w > 0, "mode": "nearest"}, True),
            (mnd.grey_erosion, (x.astype(np.float64),), {"structure": w.astype(np.float64)}, True),  # by content
            (mnd.grey_dilation, (x,), {"structure": [[1.0, 2.0], [0.5, 3.0]]}, False),  # a nested list: no key
            (mnd.median_filter, (x.astype(">f4"),), {"size": 3}, False),  # swapped into a copy first
            (memhier.conv1d, (x.ravel(), w[:, 0].copy()), {"pad": "same"}, True),
            (memhier.conv1d, (x, f32(rng, 19, 4)), {"pad": "full"}, True),  # a mask per signal
            (memhier.conv1d, (x, w[0].copy()), {"mode": "wrap", "origin": 1}, True),
            (memhier.conv2d, (x, w), {}, True),
            (memhier.conv2d, (x, w), {"mode": "mirror", "cval": 0.0, "origin": (1, 0)}, True),
            (memhier.reduce_sum, (x,), {}, False),  # NumPy's sum comes back as a scalar, not the output
            (memhier.bincount, (rng.integers(-3, 45, 300).astype(np.int32), 40), {}, True),
            (memhier.bincount, (rng.integers(0, 9, (4, 5)).astype(np.int32), 9), {"variant": "cpu-reference"}, True)]


@needs_entry
def test_replays_give_the_python_paths_bits(rng):
    for fn, args, kwargs, replayed in _calls(rng):
        want = fn.__wrapped__(*args, **kwargs)
        fn(*args, **kwargs)  # the first call, which leaves the record
        for _ in range(2):
            misses = _fast.stats()["misses"]
            got = fn(*args, **kwargs)
            assert (_fast.stats()["misses"] == misses) == replayed, f"{fn.__name__} {kwargs}: replayed {not replayed}"
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want, err_msg=f"{fn.__name__} {kwargs}")


# The functions whose records serve images of every shape of their number of axes (offer's view):
# correlate's kept call, the separable filters' desc and the rank filters', the sizes read from
# each input.
VIEWED = (mnd.correlate, mnd.convolve, mnd.correlate1d, mnd.convolve1d, mnd.gaussian_filter1d, mnd.gaussian_filter,
          mnd.uniform_filter1d, mnd.uniform_filter, mnd.sobel, mnd.prewitt, mnd.laplace, mnd.gaussian_laplace,
          mnd.median_filter, mnd.rank_filter, mnd.percentile_filter, mnd.minimum_filter1d, mnd.maximum_filter1d,
          mnd.minimum_filter, mnd.maximum_filter, mnd.grey_erosion, mnd.grey_dilation)


def _has_view(fn, args, kwargs):
    """Whether the call's record serves inputs of other shapes: memhier.ndimage's, conv1d's and
    conv2d's whose output is the input's shape (a boundary mode or pad 'same'), one mask for
    every signal, and bincount's counts."""
    if fn in (memhier.conv1d, memhier.conv2d):
        return ("mode" in kwargs or kwargs.get("pad") == "same") and (fn is memhier.conv2d or args[1].ndim == 1)
    return fn in VIEWED or fn is memhier.bincount


def _like(rng, x, shape):
    """An array of x's dtype and this shape: bright rows beside dark ones (floats); values a
    little past a histogram's bins on either side (integers)."""
    if x.dtype.kind == "u":
        return rng.integers(0, 256, shape).astype(x.dtype)
    if x.dtype.kind == "i":
        return rng.integers(-3, 45, shape).astype(x.dtype)
    y = rng.uniform(-1, 1, shape).astype(x.dtype)
    y[::2] *= 1e4
    return y


@needs_entry
def test_a_record_serves_every_shape_its_call_is_made_alike_for(rng):
    """A loop over images of many sizes replays one record where the Python path makes the call
    alike for every shape of the input's number of axes (_has_view), and makes each call again
    where it does not (conv1d and conv2d's other pads, a mask a signal: a record a shape): the
    Python path's bits or its error either way, for transposed and single-pixel images, single
    rows and columns, signals of other lengths, stacks of other lengths, back to the first."""
    others = {1: [(50,), (1,), (7,), (437,)],
              2: [(23, 19), (1, 1), (1, 40), (40, 1), (7, 64), (19, 23)],
              3: [(1, 11, 13), (5, 4, 3), (2, 1, 1), (4, 30, 2), (3, 11, 13)]}
    for fn, args, kwargs, replayed in _calls(rng):
        x = args[0]
        if not replayed:
            continue
        fn(*args, **kwargs)  # the first call, which leaves the record
        for shape in others[x.ndim]:
            y = _like(rng, x, shape)
            name = f"{fn.__name__} {kwargs} {shape}"
            misses = _fast.stats()["misses"]
            got, error = _outcome(fn, (y,) + args[1:], kwargs)
            if _has_view(fn, args, kwargs):
                assert error is None, f"{name}: {error}"
                assert _fast.stats()["misses"] == misses, f"{name}: not replayed"
            want, want_error = _outcome(fn.__wrapped__, (y,) + args[1:], kwargs)
            assert error == want_error, name
            if want is not None:
                assert got.dtype == want.dtype and got.shape == want.shape, name
                np.testing.assert_array_equal(got, want, err_msg=name)


@needs_entry
def test_a_record_keeps_the_sides_that_decide_its_call(rng):
    """A view holds fixed the sides that decide the call: an RGB image's two passes run as one
    call while its last axis has at most 4 values, so an image of 5 values a pixel (two calls)
    runs in Python beside a record of 3; an empty image makes no call, the caller's output must
    have the input's shape, and each answer is the Python path's."""
    rgb = rng.integers(0, 256, (30, 20, 3)).astype(np.uint8)
    mnd.gaussian_filter(rgb, (2.0, 1.5, 0))
    for shape, replayed in (((31, 22, 3), True), ((30, 20, 5), False), ((12, 9, 3), True), ((30, 20, 4), False)):
        y = rng.integers(0, 256, shape).astype(np.uint8)
        misses = _fast.stats()["misses"]
        got = mnd.gaussian_filter(y, (2.0, 1.5, 0))
        assert (_fast.stats()["misses"] == misses) == replayed, f"{shape}: replayed {not replayed}"
        np.testing.assert_array_equal(got, mnd.gaussian_filter.__wrapped__(y, (2.0, 1.5, 0)), err_msg=str(shape))
    w = f32(rng, 3, 3)
    mnd.correlate(f32(rng, 8, 9), w)
    for fn in (mnd.correlate, mnd.sobel):
        _fast.RECORDS.clear()  # the first call into output= below runs in Python, whatever ran before
        args = (w,) if fn is mnd.correlate else ()
        fn(f32(rng, 8, 9), *args)
        for empty in ((0, 9), (8, 0)):
            got = fn(np.zeros(empty, np.float32), *args)
            assert got.shape == empty and got.dtype == np.float32
        out = np.full((5, 6), np.nan, np.float32)
        x = f32(rng, 5, 6)
        misses = _fast.stats()["misses"]
        assert fn(x, *args, output=out) is out  # a first call into output=: recorded
        assert fn(f32(rng, 5, 6), *args, output=out) is out and _fast.stats()["misses"] == misses + 1
        x = f32(rng, 7, 4)
        out = np.full((7, 4), np.nan, np.float32)
        assert fn(x, *args, output=out) is out and _fast.stats()["misses"] == misses + 1, fn.__name__
        np.testing.assert_array_equal(out, fn.__wrapped__(x, *args))
        want = _outcome(fn.__wrapped__, (x,) + args, {"output": np.empty((4, 7), np.float32)})[1]
        assert want is not None and _outcome(fn, (x,) + args, {"output": np.empty((4, 7), np.float32)})[1] == want
    two = (f32(rng, 9, 10), f32(rng, 10, 9))  # a function without views keeps a record a shape
    w = f32(rng, 3, 3)
    for x in two:
        memhier.conv2d(x, w)
    misses = _fast.stats()["misses"]
    for x in two + two:
        np.testing.assert_array_equal(memhier.conv2d(x, w), memhier.conv2d.__wrapped__(x, w))
    assert _fast.stats()["misses"] == misses, "a loop over two shapes replays both records"


@needs_entry
def test_bincount_replays_only_the_counts_alone(rng):
    """The outside count and weights take the Python path (a second output, a weights argument
    the entry does not key); the counts alone replay, and equal numpy's."""
    v = rng.integers(-5, 70, 500).astype(np.int32)
    w = rng.standard_normal(500).astype(np.float32)
    want = np.bincount(v[(v >= 0) & (v < 64)], minlength=64)
    for kwargs, replayed in (({}, True), ({"return_outside": True}, False), ({"weights": w}, False)):
        first = memhier.bincount(v, 64, **kwargs)
        for _ in range(2):
            misses = _fast.stats()["misses"]
            got = memhier.bincount(v, 64, **kwargs)
            assert (_fast.stats()["misses"] == misses) == replayed, f"{kwargs}: replayed {not replayed}"
            if "weights" in kwargs:
                np.testing.assert_array_equal(got, first)
                continue
            counts = got[0] if kwargs else got
            np.testing.assert_array_equal(counts, want)
            if kwargs:
                assert got[1] == int(((v < 0) | (v >= 64)).sum())


@needs_entry
def test_histogram_replays_uniform_bins_of_a_range(rng):
    """A count of bins with a range replays: numpy's counts and edges, the edges a new array each
    call (a caller writing into one changes no later call's). Density, weights, bins without a
    range (the data's min and max) and explicit edges take the Python path."""
    x = rng.uniform(-1.2, 1.2, 3001).astype(np.float32)
    x[:5] = (np.nan, -1.0, 1.0, np.float32(np.nextafter(np.float32(1), np.float32(0))), 0.0)
    want_counts, want_edges = np.histogram(x, 40, (-1.0, 1.0))
    w = rng.uniform(0, 1, x.shape).astype(np.float32)
    cases = (({}, True), ({"density": True}, False), ({"weights": w}, False))
    for kwargs, replayed in cases:
        first = memhier.histogram(x, 40, (-1.0, 1.0), **kwargs)
        for _ in range(2):
            misses = _fast.stats()["misses"]
            counts, edges = memhier.histogram(x, 40, (-1.0, 1.0), **kwargs)
            assert (_fast.stats()["misses"] == misses) == replayed, f"{kwargs}: replayed {not replayed}"
            np.testing.assert_array_equal(counts, first[0])
            np.testing.assert_array_equal(edges, want_edges)
            if not kwargs:
                assert counts.dtype == np.int64 and edges.dtype == want_edges.dtype
                np.testing.assert_array_equal(counts, want_counts)
                assert edges is not first[1]
                edges[:] = 7.0  # the caller's own array
    np.testing.assert_array_equal(memhier.histogram(x, 40, (-1.0, 1.0))[1], want_edges)
    for range_ in ((-1.0, 0.0), (-1.0, -0.0), (-1.0, 0.0)):  # -0.0 equals 0.0, numpy's last edge keeps its sign
        for _ in range(2):
            edges = memhier.histogram(x, 8, range_)[1]
            np.testing.assert_array_equal(np.signbit(edges), np.signbit(np.histogram(x, 8, range_)[1]))
    finite = x[1:]  # numpy finds no range of data holding NaN
    for bins, range_ in ((40, None), (want_edges, None)):
        memhier.histogram(finite, bins, range_)
        misses = _fast.stats()["misses"]
        got = memhier.histogram(finite, bins, range_)
        assert _fast.stats()["misses"] > misses, f"bins {bins!r} replayed"
        np.testing.assert_array_equal(got[0], np.histogram(finite, bins, range_)[0])
    memhier.histogram(x, 40, (-1.0, 1.0))
    for n in (17, 1, 3000, 64 * 65):  # data of other sizes and shapes replay the record of a range
        y = rng.uniform(-1.2, 1.2, n).astype(np.float32).reshape((-1, 65) if n % 65 == 0 else (n,))
        misses = _fast.stats()["misses"]
        counts, edges = memhier.histogram(y, 40, (-1.0, 1.0))
        assert _fast.stats()["misses"] == misses or y.ndim != x.ndim, f"{y.shape}: not replayed"
        want = np.histogram(y, 40, (-1.0, 1.0))
        np.testing.assert_array_equal(counts, want[0], err_msg=str(y.shape))
        np.testing.assert_array_equal(edges, want[1], err_msg=str(y.shape))


@needs_entry
def test_one_library_call_is_replayed_and_the_rest_runs_in_python(rng):
    x, w = f32(rng, 15, 16), f32(rng, 3, 3)
    mnd.correlate(x, w, mode="nearest")
    before = _fast.stats()
    for _ in range(5):
        mnd.correlate(x, w, mode="nearest")
        mnd.gaussian_filter(x, 1.0)
    after = _fast.stats()
    assert after["hits"] - before["hits"] >= 9, (before, after)
    # laplace of a volume is a call an axis and a sum: itself never replayed, its parts may be
    v = f32(rng, 4, 5, 6)
    want = mnd.laplace.__wrapped__(v)
    for _ in range(3):
        misses = _fast.stats()["misses"]
        np.testing.assert_array_equal(mnd.laplace(v), want)
        assert _fast.stats()["misses"] > misses, "laplace of a volume replayed as one library call"


@needs_entry
def test_a_first_call_leaves_its_record_whatever_array_type_it_meets_first(rng):
    """An array type the package has not met yet (here a NumPy subclass; in a fresh process, the
    first CuPy array) is classed by the entry itself, so the first call already leaves a record."""
    class Image(np.ndarray):
        pass
    x = f32(rng, 10, 11).view(Image)
    made = _fast.stats()["recorded"]
    first = mnd.gaussian_filter(x, 1.0)
    assert _fast.stats()["recorded"] == made + 1
    hits = _fast.stats()["hits"]
    np.testing.assert_array_equal(mnd.gaussian_filter(x, 1.0), first)
    assert _fast.stats()["hits"] == hits + 1


@needs_entry
def test_weights_read_in_place_are_the_calls_own(rng):
    """conv1d and conv2d read the caller's mask where it is: a replay reads this call's array,
    never the array of the call that left the record."""
    x, mask = f32(rng, 500), f32(rng, 7)
    content = mask.copy()
    memhier.conv1d(x, mask)
    del mask  # the record holds no address of it
    for _ in range(3):
        again = content.copy()  # the same content (the same key) in an array of its own
        hits = _fast.stats()["hits"]
        got = memhier.conv1d(x, again)
        assert _fast.stats()["hits"] == hits + 1
        np.testing.assert_array_equal(got, memhier.conv1d.__wrapped__(x, content))


@needs_entry
def test_the_key_tells_apart_what_the_checks_tell_apart(rng):
    x, w = f32(rng, 12, 12), f32(rng, 3, 3)
    mnd.correlate(x, w, origin=1)
    mnd.correlate(x, w, origin=1)
    with pytest.raises(TypeError):  # True is not 1: refused, as the Python path refuses it
        mnd.correlate(x, w, origin=True)
    mnd.gaussian_filter(x, 2)
    np.testing.assert_array_equal(mnd.gaussian_filter(x, 2.0), mnd.gaussian_filter.__wrapped__(x, 2.0))
    mnd.correlate(x, w, mode="reflect")
    with pytest.raises(ValueError, match="mode"):
        mnd.correlate(x, w, mode="reflected")
    # the same weights' content under another array, and new content in the same array
    w2 = w.copy()
    np.testing.assert_array_equal(mnd.correlate(x, w2), mnd.correlate.__wrapped__(x, w))
    w2[1, 1] += 1.0
    np.testing.assert_array_equal(mnd.correlate(x, w2), mnd.correlate.__wrapped__(x, w2))
    # grey morphology's structure keyed by content: changed in place, it is a new structure
    structure = rng.random((3, 2)) * 4
    for _ in range(3):
        mnd.grey_erosion(x, structure=structure)
        np.testing.assert_array_equal(mnd.grey_erosion(x, structure=structure),
                                      mnd.grey_erosion.__wrapped__(x, structure=structure))
        structure[1, 0] += 1.5
    # convolve1d keys its weights as correlate1d does: changed in place, they are new weights
    taps = f32(rng, 5)
    for _ in range(3):
        mnd.convolve1d(x, taps, axis=0)
        np.testing.assert_array_equal(mnd.convolve1d(x, taps, axis=0), mnd.convolve1d.__wrapped__(x, taps, axis=0))
        taps[2] += 1.0
    # a different input dtype, shape or layout is a different call
    np.testing.assert_array_equal(mnd.correlate(x[:, :11], w), mnd.correlate.__wrapped__(x[:, :11], w))
    np.testing.assert_array_equal(mnd.correlate(x.T, w), mnd.correlate.__wrapped__(x.T, w))


@needs_entry
def test_arguments_bind_as_the_function_binds_them(rng):
    x, w = f32(rng, 10, 10), f32(rng, 3, 3)
    want = mnd.correlate.__wrapped__(x, w, None, "wrap")
    for _ in range(2):
        np.testing.assert_array_equal(mnd.correlate(x, w, None, "wrap"), want)
        np.testing.assert_array_equal(mnd.correlate(input=x, weights=w, mode="wrap"), want)
        np.testing.assert_array_equal(mnd.correlate(x, mode="wrap", weights=w), want)
    for bad in (lambda: mnd.correlate(x, w, colour=1), lambda: mnd.correlate(x), lambda: mnd.correlate(x, w, w=w),
                lambda: mnd.correlate(x, w, None, "wrap", 0.0, 0, None), lambda: mnd.sobel()):
        with pytest.raises(TypeError):
            bad()


def _with_output(fn, args, kwargs, output):
    """The call with scipy's `output` set to an array (positional where the call gives it so)."""
    names = list(inspect.signature(fn.__wrapped__).parameters)
    at = names.index("output")
    if len(args) > at:
        return fn(*args[:at], output, *args[at + 1:], **kwargs)
    return fn(*args, **dict(kwargs, output=output))


@needs_entry
def test_outputs_the_caller_gives_are_replayed_into(rng):
    """A call writing the caller's output array replays into the next call's array of the same
    kind, dtype and shape: the Python path's bits, the caller's array returned. An output that
    is the input, overlaps it, is read-only or strided runs the Python path (which copies, or
    says what is wrong)."""
    for fn, args, kwargs, replayed in _calls(rng):
        if "output" not in inspect.signature(fn.__wrapped__).parameters or not replayed:
            continue
        kwargs = {k: v for k, v in kwargs.items() if k != "output"}
        args = tuple(a for a in args if not isinstance(a, str))  # gaussian_laplace's positional output
        if fn is mnd.gaussian_laplace and len(args) > 2:
            args = args[:2]
        want = fn.__wrapped__(*args, **kwargs)
        name = f"{fn.__name__} {kwargs}"
        first = np.full_like(want, np.nan if want.dtype.kind == "f" else 3)
        assert _with_output(fn, args, kwargs, first) is first
        np.testing.assert_array_equal(first, want, err_msg=name)
        for _ in range(2):
            out = np.full_like(want, np.nan if want.dtype.kind == "f" else 3)
            misses = _fast.stats()["misses"]
            assert _with_output(fn, args, kwargs, out) is out
            assert _fast.stats()["misses"] == misses, f"{name}: not replayed into the caller's output"
            np.testing.assert_array_equal(out, want, err_msg=name)
        x = args[0]
        if want.dtype == x.dtype:  # the input as its own output: the Python path's answer, not a replay's
            alone = x.copy()
            fn.__wrapped__(alone, *args[1:], **dict(kwargs, output=alone))
            same = x.copy()
            misses = _fast.stats()["misses"]
            _with_output(fn, (same,) + args[1:], kwargs, same)
            assert _fast.stats()["misses"] == misses + 1, f"{name}: an output that is the input was replayed"
            np.testing.assert_array_equal(same, alone, err_msg=name)
        read_only = np.empty_like(want)
        read_only.flags.writeable = False
        with pytest.raises(ValueError, match="output"):
            _with_output(fn, args, kwargs, read_only)
        strided = np.full(want.shape[:-1] + (2 * want.shape[-1],), 5, want.dtype)[..., ::2]
        assert not strided.flags.c_contiguous and strided.shape == want.shape
        _with_output(fn, args, kwargs, strided)
        np.testing.assert_array_equal(strided, want, err_msg=name)


@needs_entry
def test_an_output_overlapping_the_input_is_not_replayed_into(rng):
    """The entry tells overlap by addresses: the same array shifted by one element overlaps."""
    buf, w = f32(rng, 2 * 9 * 14 + 1), f32(rng, 3, 3)
    x, y = buf[:126].reshape(9, 14), buf[126:252].reshape(9, 14)
    mnd.correlate(x, w, output=y)  # apart: recorded
    want = mnd.correlate.__wrapped__(x, w)
    shifted = buf[1:127].reshape(9, 14)
    misses = _fast.stats()["misses"]
    got = mnd.correlate(x, w, output=shifted)
    assert _fast.stats()["misses"] == misses + 1 and got is shifted
    np.testing.assert_array_equal(shifted, want)


@needs_entry
def test_a_replay_fails_as_the_python_path_fails(rng):
    x, w = f32(rng, 8, 8), f32(rng, 3, 3)
    ctx = memhier.Context("cpu")
    mnd.correlate(x, w, context=ctx)
    np.testing.assert_array_equal(mnd.correlate(x, w, context=ctx), mnd.correlate.__wrapped__(x, w))
    ctx.close()
    with pytest.raises(ValueError, match="closed"):
        mnd.correlate(x, w, context=ctx)
    with pytest.raises(TypeError, match="masked array"):  # an exception raised in Python passes through
        mnd.correlate(np.ma.masked_array(x), w)


@needs_entry
def test_the_entry_answers_as_its_function():
    fn = mnd.gaussian_filter
    assert fn.__name__ == "gaussian_filter" and fn.__module__ == "memhier.ndimage"
    assert fn.__doc__.startswith("scipy.ndimage.gaussian_filter")
    assert inspect.signature(fn) == inspect.signature(fn.__wrapped__)
    assert pickle.loads(pickle.dumps(fn)) is fn
    assert "gaussian_filter" in repr(fn)


@needs_entry
def test_threads_replay_their_own_calls(rng):
    images = [f32(rng, 30 + i, 40) for i in range(4)]
    wants = [mnd.gaussian_filter.__wrapped__(im, 1.0 + i) for i, im in enumerate(images)]

    def work(i):
        for _ in range(50):
            np.testing.assert_array_equal(mnd.gaussian_filter(images[i], 1.0 + i), wants[i])

    run_in_threads(work, 4)


def _outcome(fn, args, kwargs):
    """(result, None) or (None, the exception's type and text) of one call."""
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # compared below: the entry must fail as the Python path fails
        return None, (type(e), str(e))


@needs_entry
def test_a_call_that_warns_warns_every_time(rng):
    """scipy warns on every call given both a size and a footprint: such a call is never replayed."""
    x = f32(rng, 9, 12)
    for _ in range(3):
        with pytest.warns(UserWarning, match="ignoring size"):
            mnd.median_filter(x, size=3, footprint=np.eye(3, dtype=bool))


@needs_entry
@pytest.mark.filterwarnings("ignore:ignoring size because footprint is set")
def test_random_calls_fail_and_succeed_as_the_python_path(rng):
    """Calls of every function with an entry, from arguments drawn among valid and invalid ones
    (bools for ints, unknown modes, origins past the filter, wrong ranks, float64 images, empty
    footprints), on images of several shapes (a record with a view made on one replays the
    others), each made twice (the second may replay): the same result bits or the same
    exception as the Python function."""
    images = [f32(rng, 9, 12), f32(rng, 1, 7), f32(rng, 2, 5, 6), rng.uniform(-1, 1, (6, 6)),
              rng.integers(0, 255, (8, 8)).astype(np.uint8), f32(rng, 12, 9), f32(rng, 1, 1), f32(rng, 31, 2),
              f32(rng, 1, 5, 6), rng.integers(0, 255, (3, 17)).astype(np.uint8)]
    weights = [f32(rng, 3, 3), f32(rng, 1, 4), f32(rng, 5), np.ones((2, 2, 2), np.float32), [[1, 2], [3, 4]]]
    modes = ["reflect", "nearest", "wrap", "constant", "mirror", "reflekt", 3]
    scalars = [0, 1, -1, True, 2.0, None, (0, 1), [1, 0]]
    forms = [(mnd.correlate, True, ["mode", "cval", "origin"]), (mnd.convolve, True, ["mode", "origin"]),
             (mnd.correlate1d, True, ["axis", "mode", "origin"]), (mnd.gaussian_filter, False, ["mode", "order"]),
             (mnd.uniform_filter, False, ["mode", "origin"]), (mnd.sobel, False, ["axis", "mode"]),
             (mnd.laplace, False, ["mode", "cval"]), (memhier.conv2d, True, ["mode", "origin"]),
             (memhier.conv1d, True, ["pad"]), (mnd.median_filter, False, ["size", "footprint", "mode", "cval", "origin"]),
             (mnd.rank_filter, False, ["size", "footprint", "mode", "origin"]),
             (mnd.minimum_filter1d, False, ["axis", "mode", "cval", "origin"]),
             (mnd.grey_dilation, False, ["size", "footprint", "mode", "origin"])]
    pools = {"mode": modes, "pad": ["same", "full", "valid", "sane"], "size": [3, (2, 3), 0, True, None, [1, 2]],
             "footprint": [np.eye(3, dtype=bool), f32(rng, 2, 3), [[1, 0], [1, 1]], np.zeros((2, 2), bool), None]}
    for trial in range(400):
        fn, takes_weights, names = forms[rng.integers(len(forms))]
        x = images[rng.integers(len(images))]
        if fn is memhier.conv1d:
            x = x.ravel()
        args = [x]
        if takes_weights:
            w = weights[rng.integers(len(weights))]
            args.append(w[0] if fn in (mnd.correlate1d, memhier.conv1d) and np.ndim(w) == 2 else w)
        elif fn is mnd.gaussian_filter:
            args.append([1.0, 0.5, 0][rng.integers(3)])
        elif fn is mnd.rank_filter:
            args.append([0, -1, 2, 9, True, 1.5][rng.integers(6)])
        elif fn is mnd.minimum_filter1d:
            args.append([3, 1, 0, True][rng.integers(4)])
        kwargs = {}
        for name in names:
            if rng.random() < 0.5:
                pool = pools.get(name, scalars)
                kwargs[name] = pool[rng.integers(len(pool))]
        want, want_error = _outcome(fn.__wrapped__, args, kwargs)
        for _ in range(2):
            got, error = _outcome(fn, args, kwargs)
            assert error == want_error, (trial, fn.__name__, kwargs, error, want_error)
            if want_error is None:
                np.testing.assert_array_equal(got, want, err_msg=f"trial {trial} {fn.__name__} {kwargs}")


@needs_entry
def test_records_are_bounded_and_calls_stay_right_past_the_bound(rng):
    """More distinct calls than the entry keeps records: the oldest go, the table stays at
    2 _kept.KEPT keys (a record with a view is kept under two), and every call, replayed or made
    again, gives the Python path's bits."""
    from memhier._kept import KEPT
    x = f32(rng, 12, 13)
    sigmas = [0.5 + 0.01 * i for i in range(KEPT + 10)]
    for _ in range(2):
        for s in sigmas:
            np.testing.assert_array_equal(mnd.gaussian_filter(x, s), mnd.gaussian_filter.__wrapped__(x, s))
        assert len(_fast.RECORDS) <= 2 * KEPT

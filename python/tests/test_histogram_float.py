"""memhier.histogram against numpy.histogram itself: counts equal, edges equal, on the CPU
backend and (where a CUDA device exists) on NumPy data run on GPU 0, CuPy arrays and PyTorch
tensors, every row that takes float32 data. The cases are the ones numpy's rule is delicate on:
values on and beside every edge, NaN, empty and huge ranges, data whose own min and max make the
edges (float32 arithmetic), explicit float64 edges that float32 cannot hold, repeated edges,
string bins, density."""
import numpy as np
import pytest

import memhier

from conftest import has_cuda_device


def uniform_edges(lo, hi, n):
    return np.histogram_bin_edges(np.empty(0, np.float32), n, (lo, hi))


def beside(edges):
    """Every edge as float32 and its neighbours either side."""
    e = np.asarray(edges, np.float32)
    return np.concatenate([e, np.nextafter(e, np.float32(-np.inf)), np.nextafter(e, np.float32(np.inf))])


def cases(rng):
    u = rng.uniform(-1.2, 1.2, 100_003).astype(np.float32)
    yield "uniform, 10 bins, data range", u, 10, None
    yield "uniform, 256 bins, (-1, 1)", u, 256, (-1.0, 1.0)
    yield "1000 bins, (0.1, 0.7)", u, 1000, (0.1, 0.7)
    yield "on and beside every edge, 1000 bins", beside(uniform_edges(0.1, 0.7, 1000)), 1000, (0.1, 0.7)
    yield "on and beside every edge, 65536 bins", beside(uniform_edges(-3.3, 7.1, 65536)), 65536, (-3.3, 7.1)
    w = (rng.standard_normal(50_000) * 10.0 ** rng.uniform(-30, 30, 50_000)).astype(np.float32)
    yield "wide range, (-1e20, 1e25)", w, 4096, (-1e20, 1e25)
    yield "a range whose width overflows float32", w, 16, (-3e38, 3e38)
    yield "constant data, its range widened", np.full(1000, 3.25, np.float32), 7, None
    yield "empty range given, widened", u, 5, (0.5, 0.5)
    nan = u.copy()
    nan[::7] = np.nan
    yield "NaN every 7th, (-1, 1)", nan, 100, (-1.0, 1.0)
    yield "near 1e6 (float32 spacing 0.0625), data range", rng.uniform(1e6, 1e6 + 1, 10_000).astype(np.float32), 10, None
    yield "data range, on and beside its edges", beside(np.histogram_bin_edges(u, 64)), 64, None
    odd = [-1.0, -0.1, 0.1, 0.3, 1 / 3, 1.0 + 1e-9]
    yield "explicit float64 edges float32 cannot hold", np.concatenate([u, beside(odd)]), odd, None
    yield "explicit edges on the data", beside([0.0, 0.1, 0.2, 0.7]), np.array([0.0, 0.1, 0.2, 0.7]), None
    yield "explicit float32 edges with repeats", u, np.array([-1, -0.5, -0.5, 0, 0.25, 0.25, 1], np.float32), None
    yield "explicit int edges", np.float32(3.0) * u, [-3, -1, 0, 2, 3], None
    yield "explicit infinite edges", np.concatenate([u, [np.inf, -np.inf]]).astype(np.float32), [-np.inf, 0, np.inf], None
    yield "string bins 'auto'", u, "auto", None
    yield "string bins 'fd' with a range", u, "fd", (-0.5, 0.5)
    yield "empty data", np.empty(0, np.float32), 4, None
    yield "2-D data, flattened", u[:100_000].reshape(250, 400), 33, (-1.0, 1.0)


def compare(got, want, what):
    (h, e), (wh, we) = got, want
    assert h.dtype == np.int64, f"{what}: counts {h.dtype}"
    np.testing.assert_array_equal(h, wh, err_msg=f"{what}: counts")
    assert e.dtype == we.dtype, f"{what}: edges {e.dtype}, numpy {we.dtype}"
    np.testing.assert_array_equal(e, we, err_msg=f"{what}: edges")


def float_variants(device):
    names = [v.name for v in memhier.variants("histogram") if v.backend == ("cpu" if device == "cpu" else "cuda")
             and not v.demonstration and not v.name.startswith("histogram/weighted")]  # those: weights only
    return ["auto"] + names + (["histogram/cub"] if device != "cpu" else [])


@pytest.mark.parametrize("variant", float_variants("cpu"))
def test_counts_and_edges_are_numpys_cpu(rng, variant):
    for what, x, bins, range_ in cases(rng):
        compare(memhier.histogram(x, bins, range_, variant=variant), np.histogram(x, bins, range_),
                f"{variant}: {what}")


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@pytest.mark.parametrize("kind", ["numpy on device 0", "cupy", "torch"])
def test_counts_and_edges_are_numpys_gpu(rng, kind):
    put, get, kw = (lambda a: a), (lambda a: np.asarray(a)), {}
    if kind == "cupy":
        cp = pytest.importorskip("cupy")
        put, get = cp.asarray, cp.asnumpy
    elif kind == "torch":
        torch = pytest.importorskip("torch")
        put, get = (lambda a: torch.as_tensor(a, device="cuda")), (lambda t: t.cpu().numpy())
    else:
        kw = {"device": 0}
    # NumPy data run on a GPU goes through the same staging (upload, call, download) whatever the
    # row: auto and one named row check it, the rows themselves are checked on CuPy and PyTorch
    # data in place (a staged call waits for the device several times, each wait long beside
    # ctest's GPU processes in the test command)
    variants = float_variants("gpu")
    for variant in variants if kind != "numpy on device 0" else variants[:2]:
        for what, x, bins, range_ in cases(rng):
            if variant == "histogram/cub" and (np.isinf(x).any() or x.size > 2**31 - 1):
                continue  # CUB's last level at +Inf stays open (docs/histogram.md)
            try:
                h, e = memhier.histogram(put(x), bins, range_, variant=variant, **kw)
            except memhier.Unsupported as refusal:  # a row by name may refuse many bins; auto never does
                assert variant != "auto" and "shared memory" in str(refusal), f"{variant}: {what}: {refusal}"
                continue
            compare((get(h), get(e)), np.histogram(x, bins, range_), f"{kind} {variant}: {what}")


def range_cases(rng):
    """(bins, (lo, hi)): ranges whose edges numpy computes down each branch of linspace, the
    library's (mh_histogram_range) bit for bit against them, signed zeros included."""
    fixed = [(4, (0.0, 1.0)), (5, (-1.0, -0.0)), (3, (-0.0, 2.0)), (7, (3.0, 3.0)), (3, (0.0, 1e-323)),
             (9, (-3e38, 3e38)), (2**20, (-3.5, 1e7)), (1, (0.1, 0.7)), (10, (0.1, 0.7)), (255, (-1e-40, 1e-40))]
    for bins, range_ in fixed:
        yield bins, range_
    for _ in range(200):
        lo = float(rng.standard_normal() * 10.0 ** rng.integers(-30, 30))
        hi = lo + float(abs(rng.standard_normal()) * 10.0 ** rng.integers(-30, 30))
        yield int(rng.integers(1, 5000)), (lo, hi)


def same_bits(got, want, what):
    assert got.dtype == want.dtype == np.float32, f"{what}: {got.dtype}, numpy {want.dtype}"
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, f"{what}: {bad.size} edges differ, first at {bad[0]}: {got[bad[0]]!r} vs {want[bad[0]]!r}"


def check_range_edges(x, host, rng):
    for bins, range_ in range_cases(rng):
        try:
            want = np.histogram(host, bins, range_)[1]
        except ValueError as refusal:  # (0, 1e-323) in 3 bins: numpy's "too many bins", memhier's too
            with pytest.raises(ValueError, match=str(refusal)[:20]):
                memhier.histogram(x, bins, range_)
            continue
        for _ in range(2):  # the Python path, then a replay where the compiled entry is built
            got = memhier.histogram(x, bins, range_)[1]
            same_bits(got if isinstance(got, np.ndarray) else got.get(), want, f"{bins} {range_}")


def test_range_edges_bit_for_bit_cpu(rng):
    x = rng.uniform(-1, 1, 1000).astype(np.float32)
    check_range_edges(x, x, rng)


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
def test_range_edges_bit_for_bit_gpu(rng):
    cp = pytest.importorskip("cupy")
    x = rng.uniform(-1, 1, 1000).astype(np.float32)
    check_range_edges(cp.asarray(x), x, rng)


def test_edges_are_a_new_array_each_call(rng):
    """A loop's calls share numpy's edges of one range: each call returns its own array, so a
    caller that changes one changes no later call's."""
    x = rng.uniform(-1, 1, 1000).astype(np.float32)
    for _ in range(2):
        h, e = memhier.histogram(x, bins=8, range=(-1, 1))
        compare((h, e), np.histogram(x, 8, (-1, 1)), "range (-1, 1)")
        e[:] = 7.0


def test_density_is_numpys(rng):
    x = rng.standard_normal(10_000).astype(np.float32)
    for bins, range_ in [(20, None), (7, (-1.0, 2.0)), ([-3, -1, 0, 0.5, 3], None)]:
        got, edges = memhier.histogram(x, bins, range_, density=True)
        want, want_edges = np.histogram(x, bins, range_, density=True)
        np.testing.assert_allclose(got, want, rtol=1e-15)
        np.testing.assert_array_equal(edges, want_edges)


def test_bad_arguments_as_numpy_refuses_them():
    x = np.ones(10, np.float32)
    with pytest.raises(ValueError, match="max must be larger than min"):
        memhier.histogram(x, 4, (1.0, 0.0))
    with pytest.raises(ValueError, match="not finite"):
        memhier.histogram(x, 4, (0.0, np.inf))
    with pytest.raises(ValueError, match="not finite"):
        memhier.histogram(np.array([1, np.nan], np.float32), 4)
    with pytest.raises(ValueError, match="increase monotonically"):
        memhier.histogram(x, [0, 2, 1])
    with pytest.raises(ValueError, match="NaN"):
        memhier.histogram(x, [0, np.nan, 1])
    with pytest.raises(ValueError, match="bins = 0"):
        memhier.histogram(x, 0)
    with pytest.raises(ValueError, match="bins = 1048577"):
        memhier.histogram(x, 2**20 + 1)
    with pytest.raises(ValueError, match="bins = 18446744073709551617"):
        memhier.histogram(x, 2**64 + 1)
    with pytest.raises(TypeError, match="a: dtype bool"):  # numpy's subtraction refuses bool too
        memhier.histogram(np.ones(10, bool), 4)
    with pytest.raises(ValueError, match="weights: shape"):
        memhier.histogram(x, 4, weights=x[:5])
    with pytest.raises(TypeError, match="weights: dtype bool; numpy.histogram cannot add"):
        memhier.histogram(x, 4, weights=np.ones(10, bool))
    with pytest.raises(TypeError, match="weights: dtype complex64; expected real numbers"):
        memhier.histogram(x, 4, weights=np.ones(10, np.complex64))
    with pytest.raises(ValueError, match="a float64 weight of magnitude 1e\\+300"):
        memhier.histogram(x, 4, weights=np.full(10, 1e300))


def weighted_data(rng, n):
    x = rng.uniform(-1.2, 1.2, n).astype(np.float32)
    x[::97] = np.nan
    w = rng.uniform(-1, 1, n).astype(np.float32)
    return x, w


def check_weighted(x, w, got, edges, bins, range_, density):
    """Against numpy's float64 sums of the same float32 weights, rounded to float32."""
    want, want_edges = np.histogram(x, bins, range_, weights=w.astype(np.float64), density=density)
    np.testing.assert_array_equal(edges, want_edges)
    if not density:
        assert got.dtype == np.float32 and np.histogram(x, bins, range_, weights=w)[0].dtype == np.float32
        want = want.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("variant", ["auto", "cpu-reference", "cpu-omp"])
def test_weighted_histogram_is_numpys_cpu(rng, variant):
    x, w = weighted_data(rng, 100_003)
    for bins, range_ in [(256, (-1.0, 1.0)), (np.sort(rng.uniform(-1, 1, 65)), None), (30, None)]:
        for density in (False, True):
            got, edges = memhier.histogram(x[np.isfinite(x)] if range_ is None and np.ndim(bins) == 0 else x, bins, range_,
                                           weights=w[np.isfinite(x)] if range_ is None and np.ndim(bins) == 0 else w,
                                           density=density, variant=variant)
            xs, ws = (x[np.isfinite(x)], w[np.isfinite(x)]) if range_ is None and np.ndim(bins) == 0 else (x, w)
            check_weighted(xs, ws, got, edges, bins, range_, density)


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@pytest.mark.parametrize("variant", ["auto", "weighted", "weighted-shared", "weighted-atomic"])
def test_weighted_histogram_is_numpys_gpu(rng, variant):
    cp = pytest.importorskip("cupy")
    x, w = weighted_data(rng, 1_000_003)
    for bins, range_ in [(256, (-1.0, 1.0)), (np.sort(rng.uniform(-1, 1, 1025)), None), (3000, (-1.0, 1.0))]:
        try:
            got, edges = memhier.histogram(cp.asarray(x), bins, range_, weights=cp.asarray(w), variant=variant)
        except memhier.Unsupported as e:
            assert variant in ("weighted", "weighted-shared") and "2048" in str(e)
            continue
        check_weighted(x, w, cp.asnumpy(got), cp.asnumpy(edges), bins, range_, False)


WEIGHT_DTYPES = [np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def any_weights(rng, n, dtype):
    """Weights of dtype: floats over many binades (float16 over its own); 8- and 16-bit integers
    over their whole range (sums that wrap, as numpy's do); 32-bit ones whose sums fit the dtype
    (past it numpy's two bin rules disagree: a cast of the float64 sum, or a wrapping cumulative
    sum); 64-bit ones past 2^24 (several limbs), whose float64 sums round."""
    if np.dtype(dtype).kind == "f":
        spread = 6 if dtype == np.float16 else 40
        return (rng.standard_normal(n) * np.exp2(rng.integers(-spread, spread, n))).astype(dtype)
    info = np.iinfo(dtype)
    top = {1: info.max, 2: info.max, 4: 2**16, 8: 2**40}[np.dtype(dtype).itemsize]
    return rng.integers(max(info.min, -top), top, n, endpoint=True).astype(dtype)


def bin_sums(x, edges, w):
    """Each bin's sum of w in float64, one bin's values added in order (numpy's own sums over
    explicit edges are differences of one running sum, off by that sum's rounding), by numpy's
    rule: [e_i, e_i+1), the last bin closed."""
    at = np.searchsorted(edges, x, side="right") - 1
    at[x == edges[-1]] = edges.size - 2
    keep = (at >= 0) & (at < edges.size - 1) & ~np.isnan(x)
    return np.bincount(at[keep], w[keep], minlength=edges.size - 1)


def check_any_weights(got, x, w, bins, range_, density):
    """numpy.histogram's dtype; the sums within double rounding (4 n eps sum |w| a bin) of each
    bin's float64 sum, integer weights of at most 32 bits equal to numpy's, float16 within its
    rounding of the float64 sums; density (a division by the signed total) within that bound
    grown by sum |w| / |sum w|."""
    edges = np.histogram_bin_edges(x[~np.isnan(x)], bins, range_)
    wide = w.astype(np.float64)
    want, magnitude = bin_sums(x, edges, wide), bin_sums(x, edges, np.abs(wide))
    assert got.dtype == (np.float64 if density else w.dtype) == np.histogram(x, bins, range_, weights=w,
                                                                             density=density)[0].dtype
    if w.dtype.kind in "iu" and not density and w.dtype.itemsize < 8:
        np.testing.assert_array_equal(got, np.histogram(x, bins, range_, weights=w)[0])
        return
    if w.dtype == np.float16 and not density:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float16), rtol=2e-3, atol=1e-7)
        return
    e = 4 * x.size * np.finfo(np.float64).eps
    bound = e * magnitude
    if density:  # d = s / width / T: the sum's error over width |T|, and d's share of T's error
        total = want.sum()
        want = want / np.diff(edges) / total
        bound = e * (magnitude / np.diff(edges) / abs(total) + np.abs(want) * magnitude.sum() / abs(total))
    assert np.all(np.abs(got.astype(np.float64) - want) <= bound), (got, want)


@pytest.mark.parametrize("dtype", WEIGHT_DTYPES)
def test_weights_of_every_real_dtype(rng, dtype):
    """memhier.histogram and memhier.bincount with float64, float16 and integer weights (float32
    parts summed apart and combined): numpy's result dtypes and sums, on the CPU rows and, where
    a GPU is, on CuPy arrays through every weighted row."""
    x, _ = weighted_data(rng, 20_011)
    w = any_weights(rng, x.size, dtype)
    v = rng.integers(-3, 300, x.size).astype(np.int32)
    inside = (v >= 0) & (v < 256)
    places = [(np, None, ["auto", "cpu-reference", "cpu-omp"])]
    if has_cuda_device():
        cp = pytest.importorskip("cupy")
        places.append((cp, cp.asnumpy, ["auto", "weighted", "weighted-shared", "weighted-atomic"]))
    for xp, get, variants in places:
        get = get or (lambda a: a)
        for variant in variants:
            for bins, range_ in [(256, (-1.0, 1.0)), (np.sort(rng.uniform(-1, 1, 65)), None)]:
                for density in (False, True):
                    got, _ = memhier.histogram(xp.asarray(x), bins, range_, weights=xp.asarray(w), density=density,
                                               variant=variant)
                    check_any_weights(get(got), x, w, bins, range_, density)
            got, outside = memhier.bincount(xp.asarray(v), 256, weights=xp.asarray(w), return_outside=True,
                                            variant=variant)
            want = np.bincount(v[inside], w[inside].astype(np.float64), minlength=256)
            magnitude = np.bincount(v[inside], np.abs(w[inside].astype(np.float64)), minlength=256)
            assert get(got).dtype == np.float64
            assert np.all(np.abs(get(got) - want) <= 4 * v.size * np.finfo(np.float64).eps * magnitude)
            rest = w[~inside].astype(np.float64)
            assert abs(float(get(outside)) - rest.sum()) <= 4 * v.size * np.finfo(np.float64).eps * np.abs(rest).sum()


def test_weighted_bincount_is_numpys(rng):
    v = rng.integers(-3, 300, 200_001).astype(np.int32)
    w = rng.uniform(-1, 1, v.size).astype(np.float32)
    inside = (v >= 0) & (v < 256)
    want = np.bincount(v[inside], w[inside].astype(np.float64), minlength=256)
    got, outside = memhier.bincount(v, 256, weights=w, return_outside=True)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(outside, w[~inside].astype(np.float64).sum(), rtol=1e-12)
    if has_cuda_device():
        cp = pytest.importorskip("cupy")
        for variant in ("auto", "weighted", "weighted-shared", "weighted-atomic"):
            g = memhier.bincount(cp.asarray(v), 256, weights=cp.asarray(w), variant=variant)
            np.testing.assert_allclose(cp.asnumpy(g), want, rtol=1e-12, atol=1e-12)


def test_dask_histogram_is_numpys(rng):
    da = pytest.importorskip("dask.array")
    from memhier import dask as mdask
    x = rng.uniform(-1.2, 1.2, (300, 170)).astype(np.float32)
    x[::9, ::5] = np.nan
    for bins, range_ in [(64, (-1.0, 1.0)), ([-1.0, -0.2, 0.1, 1 / 3, 1.0], None)]:
        h, e = mdask.histogram(da.from_array(x, chunks=(70, 50)), bins, range_)
        want, want_edges = np.histogram(x, bins, range_)
        np.testing.assert_array_equal(h.compute(scheduler="sync"), want)
        np.testing.assert_array_equal(e, want_edges)
    with pytest.raises(ValueError, match="range: needed"):
        mdask.histogram(da.from_array(x, chunks=(70, 50)), 10)


# ---- 8- and 16-bit integers: numpy's float64 edges, the byte histogram folded for 8 bits ----

SMALL_INTEGERS = [np.uint8, np.int8, np.uint16, np.int16]


def integer_cases(rng, dtype):
    info = np.iinfo(dtype)
    full = rng.integers(info.min, info.max + 1, 20_011).astype(dtype)
    for what, bins, range_ in (("10 bins, the data's range", 10, None), ("256 bins, (0, 256)", 256, (0, 256)),
                               ("7 bins, (3.5, 200.25)", 7, (3.5, 200.25)),
                               ("64 bins, (0, 256)", 64, (0, 256)), ("2 bins, (0, 2.5): the last shorter", 2, (0, 2.5)), ("300 bins past the type", 300, (-1e3, 1e3)),
                               ("an empty range, widened", 5, (7, 7)), ("explicit edges", [-5, 0, 1, 2, 50, 127.5, 300], None),
                               ("integer edges", np.array([-128, -1, 0, 1, 255]), None), ("'auto'", "auto", None),
                               ("'fd'", "fd", None), ("one bin", 1, None)):
        yield f"{np.dtype(dtype).name} {what}", full, bins, range_
    yield f"{np.dtype(dtype).name} constant data", np.full(100, 7, dtype), 5, None
    yield f"{np.dtype(dtype).name} empty", np.zeros(0, dtype), 5, None
    yield f"{np.dtype(dtype).name} 2-D, its own range", full[:600].reshape(20, 30), 9, None


@pytest.mark.parametrize("dtype", SMALL_INTEGERS)
def test_small_integer_histograms_are_numpys(rng, dtype):
    """8- and 16-bit data: counts and edges (float64) equal numpy's for every form of bins, also
    under a named float row (the data converted to float32) and with density; weights summed as
    the float path sums them."""
    for what, x, bins, range_ in integer_cases(rng, dtype):
        want = np.histogram(x, bins, range_)
        compare(memhier.histogram(x, bins, range_), want, what)
        compare(memhier.histogram(x, bins, range_, variant="cpu-omp"), want, f"cpu-omp {what}")
        if x.size:
            got, edges = memhier.histogram(x, bins, range_, density=True)
            np.testing.assert_allclose(got, np.histogram(x, bins, range_, density=True)[0], rtol=1e-12, err_msg=what)
    x = rng.integers(0, 200, 5000).astype(dtype)
    w = rng.random(5000).astype(np.float32)
    got, edges = memhier.histogram(x, 13, weights=w)
    want, want_edges = np.histogram(x, 13, weights=w)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(edges, want_edges)


def test_small_integer_edges_kept_apart_from_the_caller(rng):
    """The edges of a count over a range are made once and kept: each call returns its own
    writable copy (a caller's change reaches no later call), and a range of ints and one of
    floats stay apart as numpy's edges of them do."""
    x = rng.integers(0, 256, 1000).astype(np.uint8)
    _, edges = memhier.histogram(x, 7, (0, 200))
    assert edges.flags.writeable
    edges[:] = -1
    np.testing.assert_array_equal(memhier.histogram(x, 7, (0, 200))[1], np.histogram(x, 7, (0, 200))[1])
    for range_ in ((0, 3), (0.0, 3.0), (np.int16(0), np.int16(3))):
        got, got_edges = memhier.histogram(x, 3, range_)
        want, want_edges = np.histogram(x, 3, range_)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got_edges, want_edges)
        assert got_edges.dtype == want_edges.dtype, range_


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@pytest.mark.parametrize("kind", ["cupy", "torch"])
def test_small_integer_histograms_are_numpys_gpu(rng, kind):
    if kind == "cupy":
        cp = pytest.importorskip("cupy")
        put, get = cp.asarray, cp.asnumpy
    else:
        torch = pytest.importorskip("torch")
        put, get = (lambda a: torch.as_tensor(a, device="cuda")), (lambda t: t.cpu().numpy())
    for dtype in SMALL_INTEGERS:
        for what, x, bins, range_ in integer_cases(rng, dtype):
            h, e = memhier.histogram(put(x), bins, range_)
            compare((get(h), get(e)), np.histogram(x, bins, range_), f"{kind} {what}")


# ---- 32- and 64-bit integers and float64: numpy's edges searched, memhier.bincount counting ----

WIDE = [np.int32, np.uint32, np.int64, np.uint64, np.float64]


def wide_cases(rng, dtype):
    name = np.dtype(dtype).name
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(20_011) * 100
        x[::97], x[::101], x[::103] = np.nan, np.inf, -np.inf
        on_edges = np.histogram_bin_edges(np.empty(0), 300, (-1000, 1000))
        x[:on_edges.size] = on_edges  # values on every edge
        finite = rng.standard_normal(1000)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 20_011, dtype=dtype, endpoint=True)
        x[:4] = [info.min, info.max, 0, min(info.max, 2**53 + 1)]  # past float64's integers
        finite = rng.integers(0, 50, 1000).astype(dtype)
    for what, data, bins, range_ in (("10 bins, the data's range", finite, 10, None),
                                     ("300 bins, (-1000, 1000)", x, 300, (-1000, 1000)),
                                     ("4 bins, (-2^62, 2^63)", x, 4, (-2.0**62, 2.0**63)),
                                     ("explicit edges", x, [-5, 0, 1, 2, 50, 127.5, 300], None),
                                     ("repeated integer edges", x, np.array([0, 10, 10, 20], np.int64), None),
                                     ("'sturges'", finite, "sturges", None), ("an empty range, widened", x, 5, (7, 7)),
                                     ("empty", x[:0], 5, None)):
        yield f"{name} {what}", data, bins, range_


@pytest.mark.parametrize("dtype", WIDE)
def test_wide_histograms_are_numpys(rng, dtype):
    """32- and 64-bit integers and float64 (NaN, infinities, values on the edges, integers past
    float64's): counts and edges equal numpy's, density too; weights as the float path sums them."""
    for what, x, bins, range_ in wide_cases(rng, dtype):
        with np.errstate(invalid="ignore"):
            want = np.histogram(x, bins, range_)
        compare(memhier.histogram(x, bins, range_), want, what)
    x = rng.integers(0, 200, (50, 100)).astype(dtype)  # 2-D data and weights
    w = rng.random((50, 100)).astype(np.float32)
    got, edges = memhier.histogram(x, 13, weights=w)
    want, want_edges = np.histogram(x, 13, weights=w)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(memhier.histogram(x, 13, density=True)[0], np.histogram(x, 13, density=True)[0],
                               rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.int64, np.uint64])
def test_bincount_of_every_integer_dtype(rng, dtype):
    """bincount of integers other than int32: values compared at full width, those outside
    [0, bins) (the type's extremes among them) not counted; weighted and return_outside alike."""
    info = np.iinfo(dtype)
    v = rng.integers(max(info.min, -50), min(info.max, 300), 5000, endpoint=True).astype(dtype)
    v[:2] = info.min, info.max
    if info.bits == 64:  # a bin's low 32 bits with high ones set; uint64 from 2^63 on (negative as int64)
        v[2:4] = 2**32 + 5, 2**63 + 7 if info.min == 0 else -(2**32) + 5
    inside = (v >= 0) & (v < 256) if info.min < 0 else v < 256
    w = rng.random(v.size).astype(np.float32)
    np.testing.assert_array_equal(memhier.bincount(v, 256), np.bincount(v[inside].astype(np.int64), minlength=256))
    np.testing.assert_allclose(memhier.bincount(v, 256, weights=w),
                               np.bincount(v[inside].astype(np.int64), w[inside].astype(np.float64), minlength=256))
    assert int(memhier.bincount(v, 256, return_outside=True)[1]) == int((~inside).sum())
    for _ in range(3):  # a loop of calls: the entry replays none of them as int32 data
        np.testing.assert_array_equal(memhier.bincount(v, 256), np.bincount(v[inside].astype(np.int64), minlength=256))


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
def test_wide_histograms_and_bincounts_on_cupy(rng):
    cp = pytest.importorskip("cupy")
    for dtype in WIDE:
        for what, x, bins, range_ in wide_cases(rng, dtype):
            h, e = memhier.histogram(cp.asarray(x), bins, range_)
            with np.errstate(invalid="ignore"):
                compare((cp.asnumpy(h), cp.asnumpy(e)), np.histogram(x, bins, range_), f"cupy {what}")
    v = rng.integers(-50, 300, 5000)
    v[:3] = 2**32 + 5, -(2**32) + 5, np.iinfo(np.int64).min  # outside at full width, inside by their low words
    inside = (v >= 0) & (v < 256)
    want = np.bincount(v[inside], minlength=256)
    np.testing.assert_array_equal(cp.asnumpy(memhier.bincount(cp.asarray(v), 256)), want)
    counts, outside = memhier.bincount(cp.asarray(v), 256, return_outside=True)
    assert int(outside) == int((~inside).sum())
    np.testing.assert_array_equal(cp.asnumpy(memhier.bincount(cp.asarray(v.astype(np.uint64)), 256)), want)
    strided = cp.asarray(np.stack([v, v], axis=1))[:, 0]  # not contiguous: through int32 indices
    np.testing.assert_array_equal(cp.asnumpy(memhier.bincount(strided, 256)), want)
    for offset in range(1, 4):  # every 16-byte alignment of the int64 loads
        np.testing.assert_array_equal(cp.asnumpy(memhier.bincount(cp.asarray(v)[offset:], 256)),
                                      np.bincount(v[offset:][inside[offset:]], minlength=256))

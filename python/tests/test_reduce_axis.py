"""memhier.sum, mean, min, max, argmin and argmax against numpy itself, over every axis and the
whole array, float32, float64, bool and every integer dtype, with NaN, ties and signed zeros; on
the CPU rows, and on a GPU every row that takes them (axis, axis-naive, cub and auto); the rows
that sum whole float32 arrays alone refuse the rest."""
import numpy as np
import pytest

import memhier

from conftest import has_cuda_device

NAMES = ["sum", "mean", "min", "max", "argmin", "argmax"]
DTYPES = [np.float32, np.int32, np.float64, np.int64, np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64,
          np.bool_]


def data(rng, shape, dtype):
    x = rng.uniform(-1000, 1000, shape)
    flat = x.reshape(-1)
    flat[::9] = flat[0]  # ties with the first value
    flat[5::13] = 0.0
    if dtype == np.int32:
        return (x * 1e5).astype(np.int32)
    if dtype == np.int64:  # values past 2^32 (sums past int32's range)
        return (x * 1e5).astype(np.int64) * 4099
    if dtype == np.uint64:  # values past 2^63: sums that wrap
        return ((x + 1000) * 1e6).astype(np.uint64) << np.uint64(33)
    if dtype == np.bool_:
        return x > 0
    if np.dtype(dtype).kind in "iu":  # over the type's range; uint32 sums past 2^32
        info = np.iinfo(dtype)
        return ((x + (1000 if info.min == 0 else 0)) * (info.max / 2000)).astype(dtype)
    x = x.astype(dtype)
    flat = x.reshape(-1)
    flat[6::13] = -0.0
    flat[3::101] = np.nan
    return x


def check(name, got, want, what, x=None, axis=None):
    """got against numpy's want; float64 sums and means (x and axis given) within count rounding
    steps of the sum of |x| over the axis, the two orders of adding apart by at most that."""
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.dtype == want.dtype or (name == "mean" and want.dtype == np.float32 and got.dtype == np.float32), \
        f"{what}: dtype {got.dtype}, numpy {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, numpy {want.shape}"
    if name in ("sum", "mean") and got.dtype == np.float64 and x is not None and x.dtype == np.float64:
        count = x.size if axis is None else x.shape[axis]
        bound = count * np.finfo(np.float64).eps * np.sum(np.abs(x), axis=axis) / (count if name == "mean" else 1)
        differ = ~((got == want) | (np.isnan(got) & np.isnan(want)) | (np.abs(got - want) <= bound))
        assert not np.any(differ), f"{what}: {got[differ] if got.ndim else got}, numpy {want[differ] if want.ndim else want}"
    elif name in ("sum", "mean") and got.dtype.kind == "f":
        # memhier sums in double and rounds once; numpy sums float32 pairwise in float32
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-3, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1000,), (7, 33), (3, 17, 40), (300, 4), (1, 1), (2, 65537)])
def test_reductions_are_numpys(rng, dtype, shape):
    x = data(rng, shape, dtype)
    for name in NAMES:
        for axis in [None, *range(-len(shape), len(shape))]:
            want = getattr(np, name)(x, axis=axis)
            if name == "mean" and dtype == np.float32:  # numpy's float32 mean, against float64's
                want = np.mean(x.astype(np.float64), axis=axis).astype(np.float32)
            check(name, getattr(memhier, name)(x, axis=axis), want, f"{name} {np.dtype(dtype)} {shape} axis={axis}",
                  x, axis)


@pytest.mark.parametrize("gpu", [False, True])
def test_float16_reductions(rng, gpu):
    """float16 as numpy reduces it (accumulating in float32): float16 results within half a float16
    ulp of the exact sum or mean (numpy's own adds in float16 along an outer axis, a few ulps off),
    NaN, min, max and the arg forms exactly numpy's; on the CPU rows and, where a GPU is, CuPy."""
    if gpu and not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy") if gpu else None
    put, get = (cp.asarray, cp.asnumpy) if gpu else ((lambda a: a), np.asarray)
    for shape in [(1000,), (7, 33), (3, 17, 40), (2, 65537)]:
        x = (rng.standard_normal(shape) * 10).astype(np.float16)
        x.reshape(-1)[3::501] = np.nan
        for name in NAMES:
            for axis in [None, *range(len(shape))]:
                got = np.asarray(get(getattr(memhier, name)(put(x), axis=axis)))
                want = np.asarray(getattr(np, name)(x, axis=axis))
                what = f"{name} float16 {shape} axis={axis}"
                assert got.dtype == want.dtype and got.shape == want.shape, what
                if name in ("sum", "mean"):
                    exact = getattr(np, name)(x.astype(np.float64), axis=axis)
                    count = x.size if axis is None else x.shape[axis]
                    magnitude = np.sum(np.abs(x.astype(np.float64)), axis=axis) / (count if name == "mean" else 1)
                    bound = 2.0 ** -11 * np.abs(exact) + 2.0 ** -24 * magnitude + 2.0 ** -25
                    assert np.all((np.abs(got - exact) <= bound) | (np.isnan(got) & np.isnan(exact))), what
                else:
                    np.testing.assert_array_equal(got, want, err_msg=what)


def test_empty_axes():
    x = np.zeros((3, 0, 4), np.float32)
    np.testing.assert_array_equal(memhier.sum(x, axis=1), np.zeros((3, 4), np.float32))
    assert np.isnan(memhier.mean(x, axis=1)).all()
    with pytest.raises(ValueError, match="zero-size array"):
        memhier.argmax(x, axis=1)
    assert memhier.sum(np.zeros((4, 0), np.float32), axis=0).shape == (0,)


def test_bad_arguments():
    x = np.ones((4, 5), np.float32)
    with pytest.raises(TypeError, match="float16, float32, float64, bool and 8- to 64-bit integers"):
        memhier.max(np.ones(4, np.complex64))
    wrapped = memhier.sum(np.full(3, 2**62, np.int64))  # numpy's int64 sum wraps
    assert wrapped == np.full(3, 2**62, np.int64).sum() and wrapped.dtype == np.int64
    with pytest.raises(ValueError, match="axis = 2"):
        memhier.max(x, axis=2)
    with pytest.raises(ValueError, match="axis = -3"):
        memhier.max(x, axis=-3)
    with pytest.raises(TypeError, match="one axis"):
        memhier.sum(x, axis=(0, 1))
    with pytest.raises(ValueError, match="shape"):
        memhier.sum(x, axis=0, out=np.empty(4, np.float32))


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@pytest.mark.parametrize("variant", ["auto", "axis", "axis-naive", "cub"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_reductions_are_numpys(rng, variant, dtype):
    cp = pytest.importorskip("cupy")
    for shape in [(1000,), (7, 33), (3, 17, 40), (300, 4), (2, 65537), (5, 5000)]:
        x = data(rng, shape, dtype)
        xg = cp.asarray(x)
        for name in NAMES:
            for axis in [None, *range(len(shape))]:
                what = f"{variant}: {name} {np.dtype(dtype)} {shape} axis={axis}"
                want = getattr(np, name)(x, axis=axis)
                if name == "mean" and dtype == np.float32:
                    want = np.mean(x.astype(np.float64), axis=axis).astype(np.float32)
                try:
                    got = getattr(memhier, name)(xg, axis=axis, variant=variant)
                except memhier.Unsupported as e:  # a thread a result: too few results for the GPU
                    assert (variant == "axis-naive" and "axis takes it" in str(e)) or \
                        (variant == "cub" and dtype not in DTYPES[:4] and "cub reduces float32" in str(e)), what
                    continue
                check(name, cp.asnumpy(got), want, what, x, axis)


@pytest.mark.parametrize("gpu", [False, True])
def test_float32_sums_round_once_from_double(rng, gpu):
    """memhier.sum of float32 is the double sum rounded once, the whole array's and a lane of one
    row or column too (auto and cub on a GPU, the CPU rows), on values of mixed magnitudes where a
    float32 accumulation lands several ulps away."""
    if gpu and not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy") if gpu else None
    x = (rng.uniform(-1, 1, 1000) * 10.0 ** rng.uniform(-3, 6, 1000)).astype(np.float32)
    for shape, axis in (((1000,), None), ((1, 1000), None), ((1000, 1), None), ((1, 1000), 1), ((1000, 1), 0)):
        a = x.reshape(shape)
        want = np.sum(a.astype(np.float64), axis=axis).astype(np.float32)
        for variant in (["auto", "cub"] if gpu else ["auto", "cpu-reference", "cpu-omp"]):
            got = memhier.sum(cp.asarray(a) if gpu else a, axis=axis, variant=variant)
            got = cp.asnumpy(got) if gpu else np.asarray(got)
            assert np.array_equal(np.asarray(got).reshape(-1), np.asarray(want).reshape(-1)), \
                f"{variant} {shape} axis={axis}: {got!r}, the double sum rounded once {want!r}"


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
def test_gpu_rows_that_sum_whole_arrays_refuse_the_rest(rng):
    cp = pytest.importorskip("cupy")
    # whole numbers of at most 1000: every partial sum of the 12000 is a float32 exactly, whatever the
    # order, so the sum is exact (a bound relative to the sum itself fails on cancellation)
    x = np.round(data(rng, (300, 40), np.float32))
    x[np.isnan(x)] = 1.0
    got = memhier.sum(cp.asarray(x), variant="vector")
    assert float(got) == float(np.sum(x.astype(np.float64)))
    with pytest.raises(memhier.Unsupported, match="runs on axis"):
        memhier.argmax(cp.asarray(x), axis=0, variant="vector")

"""memhier.ndimage's selection filters (rank op, CPU backend) against scipy.ndimage: bit for bit
on NaN-free data of every dtype, footprints with holes, sizes, origins, every mode, axes and
N-D arrays; numpy's order where a window holds NaN; the refusals, each naming what it refuses."""
import warnings

import numpy as np
import pytest
import scipy.ndimage as nd

import memhier
import memhier.ndimage as mnd

DTYPES = [np.float32, np.float64, np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32, np.int64, np.uint64,
          np.bool_]
MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-wrap", "grid-constant", "grid-mirror"]


def image(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind == "f":
        x = rng.random(shape) * 300 - 100
        x[rng.random(shape) < 0.1] = 0.0  # ties, and dark values beside bright ones
        x[rng.random(shape) < 0.05] = 1e30
        return x.astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype)


def same(fn, *args, **kw):
    """scipy's and memhier's results of fn: equal bits and dtype, or both raising the same error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = getattr(nd, fn)(*args, **kw)
        except TypeError as refused:  # scipy's (a bool image's subtraction): memhier's the same
            with pytest.raises(type(refused)):
                getattr(mnd, fn)(*args, **kw)
            return
        got = getattr(mnd, fn)(*args, **kw)
    assert got.dtype == want.dtype, (fn, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want, err_msg=f"{fn} {kw}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_filter_is_scipys(rng, dtype):
    x = image(rng, (19, 23), dtype)
    footprint = rng.random((4, 3)) > 0.4
    footprint[0, 0] = True
    same("median_filter", x, size=3)
    same("median_filter", x, size=5)
    same("median_filter", x, size=7)
    same("median_filter", x, footprint=footprint, mode="constant", cval=-2.7)
    same("rank_filter", x, -2, size=(2, 5), mode="wrap", origin=(0, -1))
    same("rank_filter", x, 1, footprint=footprint, mode="nearest", origin=(1, -1))
    same("percentile_filter", x, 30, size=5, mode="constant", cval=0.3)
    same("percentile_filter", x, -25.5, footprint=footprint)
    same("minimum_filter", x, size=(3, 4), mode=["wrap", "constant"], cval=7.5)
    same("maximum_filter", x, footprint=footprint, mode="mirror")
    same("minimum_filter1d", x, 5, axis=0, mode="constant", cval=-1.5, output=np.float32)
    same("maximum_filter1d", x, 4, origin=-2)
    same("grey_erosion", x, size=(2, 3), origin=(0, 1))
    same("grey_dilation", x, footprint=footprint, mode="reflect")
    same("grey_opening", x, size=3, mode="mirror")
    same("grey_closing", x, size=(3, 2), mode="nearest")
    same("morphological_gradient", x, size=(1, 4))
    same("white_tophat", x, size=3)
    same("black_tophat", x, footprint=np.eye(3, dtype=bool))


@pytest.mark.parametrize("mode", MODES)
def test_modes_origins_and_outputs(rng, mode):
    x = image(rng, (17, 13), np.float64)
    for origin in (-1, 0, 1):
        same("median_filter", x, size=(3, 4), mode=mode, cval=2.5, origin=origin)
        same("median_filter", x, size=5, mode=mode, cval=2.5, origin=(origin, -2 * origin))
        same("median_filter", x, size=7, mode=mode, cval=2.5, origin=(3 * origin, -2 * origin))
        same("minimum_filter", x, size=4, mode=mode, cval=2.5, origin=(origin, 0))
    same("median_filter", x, size=3, mode=mode, output=np.uint8)
    same("maximum_filter", x, size=3, mode=mode, output=np.int16)
    out = np.empty(x.shape, np.float32)
    assert mnd.median_filter(x, size=3, mode=mode, output=out) is out
    np.testing.assert_array_equal(out, nd.median_filter(x, size=3, mode=mode, output=np.float32))


def test_arrays_of_more_axes_and_axes(rng):
    x = image(rng, (3, 11, 12, 2), np.float32)
    same("median_filter", x, size=(1, 3, 3, 1))
    same("median_filter", x, size=3, axes=(1, 2))
    for side in (5, 7):  # bands of rows, an odd end
        same("median_filter", image(rng, (2, 71, 40, 3), np.float32), size=(1, side, side, 1))
    same("rank_filter", x, 2, size=(3, 2), axes=(0, 2))  # axes apart: moved beside each other
    same("rank_filter", x, 2, size=(3, 2), axes=(2, 0))
    same("percentile_filter", x, 60, footprint=np.ones((2, 3), bool), axes=(-1, 1))
    same("minimum_filter", x, size=(2, 3, 4, 2))  # separable: a pass an axis, each of the four
    same("maximum_filter1d", x, 3, axis=2, mode="wrap")
    same("grey_dilation", x, size=(3, 3), axes=(1, 2), origin=(1, -1))
    same("median_filter", image(rng, (40,), np.int64), size=7)  # 1-D: scipy's own 1-D path
    same("median_filter", np.float32(3.0) * np.ones((1, 1)), size=3)  # one element
    big = image(rng, (9, 10), np.float32)
    same("median_filter", big, size=15)  # a window past the image: reflected over and over


def test_holes_in_a_footprint_of_one_axis(rng):
    """scipy's 1-D rank code ranks a footprint's whole length, holes included; memhier applies the
    holes, as scipy's own path does on a (1, n) array of the same values."""
    y = rng.random(40)
    footprint = [1, 0, 1, 1]
    got = mnd.median_filter(y, footprint=footprint)
    np.testing.assert_array_equal(got, nd.median_filter(y[None], footprint=[footprint])[0])


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d is not np.float16])
def test_structures_are_scipys(rng, dtype):
    """Grey morphology with a structure, bit for bit scipy's on every dtype: the first set element
    summed in float64, the others in the image's own type (integers wrap: values near the type's
    ends, structures of fractions and of both signs)."""
    x = image(rng, (15, 14), dtype)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x.flat[::5] = info.max
        x.flat[1::7] = info.min
    structure = rng.random((3, 2)) * 400 - 200
    footprint = rng.random((3, 2)) > 0.3
    footprint[1, 0] = True
    for fn in ("grey_erosion", "grey_dilation", "grey_opening", "grey_closing", "white_tophat", "black_tophat",
               "morphological_gradient"):
        same(fn, x, structure=structure)
        same(fn, x, structure=structure, footprint=footprint, mode="wrap")
    one = np.zeros((3, 2), bool)
    one[1, 1] = True  # a single element: the minimum and maximum are the same rank
    same("grey_dilation", x, structure=structure, footprint=one)
    same("grey_erosion", x, structure=structure, footprint=one)


def test_windows_holding_nan_follow_numpys_order(rng):
    """A window's NaN ranks above every number (numpy's sort order): the minimum of numbers and
    NaN is the least number, the maximum NaN, a median its sorted window's middle."""
    x = rng.random((12, 11))
    x[rng.random(x.shape) < 0.2] = np.nan
    for size, rank in ((3, 4), (3, 0), (3, 8), ((2, 5), 6)):
        got = mnd.rank_filter(x, rank, size=size, mode="nearest")
        pad = [(s // 2, s - 1 - s // 2) for s in np.broadcast_to(size, 2)]
        windows = np.lib.stride_tricks.sliding_window_view(np.pad(x, pad, mode="edge"), np.broadcast_to(size, 2))
        want = np.sort(windows.reshape(*x.shape, -1), axis=-1)[..., rank]
        np.testing.assert_array_equal(got, want, err_msg=f"{size} {rank}")


def test_byte_order_and_float16(rng):
    x = image(rng, (9, 8), np.float32)
    np.testing.assert_array_equal(mnd.median_filter(x.astype(">f4"), size=3), nd.median_filter(x, size=3))
    half = x.astype(np.float16)  # scipy refuses float16; memhier ranks it exactly in float32
    got = mnd.median_filter(half, size=3)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, nd.median_filter(half.astype(np.float32), size=3).astype(np.float16))


def test_in_place_output_goes_through_a_copy(rng):
    x = image(rng, (10, 9), np.float64)
    want = nd.median_filter(x, size=3)
    assert mnd.median_filter(x, size=3, output=x) is x
    np.testing.assert_array_equal(x, want)


def test_refusals(rng):
    x = image(rng, (8, 7), np.float32)
    with pytest.raises(RuntimeError, match="rank not within"):
        mnd.rank_filter(x, 9, size=3)
    with pytest.raises(RuntimeError, match="invalid percentile"):
        mnd.percentile_filter(x, 101, size=3)
    with pytest.raises(ValueError, match="invalid origin"):
        mnd.median_filter(x, size=3, origin=2)
    with pytest.raises(ValueError, match="All-zero footprint"):
        mnd.minimum_filter(x, footprint=np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match="no footprint"):
        mnd.median_filter(x)
    with pytest.raises(RuntimeError, match="sequence of modes"):
        mnd.median_filter(x, size=3, mode=["reflect", "wrap"])
    with pytest.raises(ValueError, match="size, footprint, or structure"):
        mnd.grey_erosion(x)
    with pytest.raises(TypeError, match="Complex type not supported"):
        mnd.median_filter(x.astype(np.complex64), size=3)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        mnd.median_filter(x, size=3, axes=(1.5,))
    with pytest.raises(ValueError, match="out of range"):
        mnd.median_filter(x, size=3, axes=(2,))
    with pytest.raises(memhier.Unsupported, match="structure on a float16 image"):
        mnd.grey_erosion(np.zeros((5, 6), np.float16), structure=np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"structure\[0\] = 3e\+09"):
        mnd.grey_dilation(np.zeros((5, 6), np.int16), structure=np.full((2, 2), 3e9))
    with pytest.raises(memhier.Unsupported, match="reaches over 4 axes"):
        mnd.median_filter(image(rng, (2, 4, 5, 6), np.float32), size=3)
    with pytest.raises(ValueError, match="mode"):
        mnd.median_filter(x, size=3, mode="edge")


def test_gpu_rows_give_the_cpu_rows_bits(rng):
    """CuPy arrays on the rows auto picks (network up to 49 set elements, bisect past them, with
    holes and a structure): the CPU backend's bits for every function, dtype and mode."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    footprint = rng.random((4, 3)) > 0.4
    footprint[0, 0] = True
    wide = rng.random((17, 19)) > 0.3
    for dtype in (np.float32, np.float64, np.uint8, np.int64):
        x = image(rng, (37, 29), dtype)
        for fn, kw in (("median_filter", dict(size=3)), ("rank_filter", dict(rank=2, footprint=footprint, mode="wrap")),
                       ("minimum_filter", dict(size=(3, 4), mode="constant", cval=-1.5)),
                       ("grey_closing", dict(size=(2, 3), mode="mirror")),
                       ("grey_erosion", dict(structure=rng.random((3, 2)) * 90 - 40, mode="constant", cval=3)),
                       ("median_filter", dict(size=(9, 8), mode="nearest")),
                       ("percentile_filter", dict(percentile=30, footprint=wide, mode="reflect")),
                       ("grey_dilation", dict(structure=rng.random((7, 9)) * 90 - 40, mode="mirror"))):
            got = getattr(mnd, fn)(cp.asarray(x), **kw)
            assert isinstance(got, cp.ndarray)
            np.testing.assert_array_equal(cp.asnumpy(got), getattr(mnd, fn)(x, **kw), err_msg=f"{fn} {dtype}")


def test_gpu_medians_of_full_squares_give_the_cpu_rows_bits(rng):
    """CuPy arrays' 3 x 3, 5 x 5 and 7 x 7 medians (the median rows where they take them: a thread
    down a column over segments of 8 to 64 rows, longer on larger images): images of several
    segments and blocks, channels, stacks, every mode, origins, NaN beside values, cval, an output
    of another dtype: the CPU backend's bits; on an H200's 132 SMs 4200 x 1300 takes segments of
    32 rows and 4200 x 2200 of 64."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    for dtype in (np.uint8, np.int8, np.int16, np.uint32, np.float32, np.int64):
        for shape, size, kw in (((200, 300), 3, {}), ((130, 70, 3), (3, 3, 1), dict(mode="wrap", origin=(1, -1, 0))),
                                ((2, 65, 129), (1, 3, 3), dict(mode="constant", cval=7)), ((1, 5), 3, dict(mode="mirror")),
                                ((67, 1), 3, dict(mode="nearest")), ((64, 64), 3, dict(output=np.float64)),
                                ((70, 44, 4), (3, 3, 1), dict(origin=(0, 1, 0))), ((2, 66, 132), (1, 3, 3), dict(mode="constant", cval=7)),
                                ((131, 8), 3, dict(mode="mirror", origin=(-1, 0)))):
            x = image(rng, shape, dtype)
            if x.dtype.kind == "f":
                x[rng.random(x.shape) < 0.02] = np.nan
            got = cp.asnumpy(mnd.median_filter(cp.asarray(x), size=size, **kw))
            np.testing.assert_array_equal(got, mnd.median_filter(x, size=size, **kw), err_msg=f"{dtype} {shape} {kw}")
        if dtype in (np.uint8, np.float32):
            for shape in ((4200, 1300), (4200, 2200)):
                x = image(rng, shape, dtype)
                np.testing.assert_array_equal(cp.asnumpy(mnd.median_filter(cp.asarray(x), size=3)),
                                              mnd.median_filter(x, size=3), err_msg=f"{dtype} {shape}")
        for shape, size, kw in (((200, 300), 5, {}), ((70, 44, 3), (5, 5, 1), dict(mode="wrap", origin=(2, -1, 0))),
                                ((2, 67, 129), (1, 5, 5), dict(mode="constant", cval=7)), ((1, 5), 5, dict(mode="mirror")),
                                ((67, 2), 5, dict(mode="nearest", output=np.float64)), ((4200, 2200), 5, {}),
                                ((150, 90), 7, dict(mode="reflect", origin=(3, -3))), ((3, 41, 37), (1, 7, 7), {}),
                                ((4200, 2200), 7, dict(mode="mirror"))):
            if len(shape) == 2 and shape[0] == 4200 and dtype not in (np.uint8, np.float32):
                continue
            x = image(rng, shape, dtype)
            if x.dtype.kind == "f":
                x[rng.random(x.shape) < 0.02] = np.nan
            got = cp.asnumpy(mnd.median_filter(cp.asarray(x), size=size, **kw))
            np.testing.assert_array_equal(got, mnd.median_filter(x, size=size, **kw), err_msg=f"{size} {dtype} {shape} {kw}")
        # a view one element past an allocation's start (8-bit: not word-aligned)
        x = image(rng, (50, 64), dtype)
        flat = cp.empty(x.size + 1, dtype)
        view = flat[1:].reshape(x.shape)
        view[...] = cp.asarray(x)
        np.testing.assert_array_equal(cp.asnumpy(mnd.median_filter(view, size=3)), mnd.median_filter(x, size=3),
                                      err_msg=f"{dtype}, an offset view")


def test_gpu_ranks_of_bytes_give_the_cpu_rows_bits(rng):
    """CuPy uint8 and int8 images under full rectangles through auto and rank/histogram (a thread
    down a column with its window's 256 counts): medians of 9 x 9 to 31 x 31, other ranks
    and percentiles, every mode, origins, cval, channels, stacks, walks of several segments, an
    output of another dtype: the CPU backend's bits."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    for dtype in (np.uint8, np.int8):
        for fn, args, shape, kw in (("median_filter", (), (300, 200), dict(size=15)),
                                    ("median_filter", (), (150, 97), dict(size=31, mode="wrap")),
                                    ("median_filter", (), (2, 90, 70), dict(size=(1, 9, 11), mode="constant", cval=5)),
                                    ("rank_filter", (3,), (70, 50, 3), dict(size=(5, 4, 1), mode="nearest")),
                                    ("rank_filter", (-2,), (130, 60), dict(size=(13, 3), origin=(6, -1))),
                                    ("percentile_filter", (80,), (64, 64), dict(size=21, mode="mirror",
                                                                              output=np.float32)),
                                    ("median_filter", (), (600, 40), dict(size=(9, 1)))):
            x = image(rng, shape, dtype)
            want = getattr(mnd, fn)(x, *args, **kw)
            for variant in ("auto", "histogram"):
                got = cp.asnumpy(getattr(mnd, fn)(cp.asarray(x), *args, variant=variant, **kw))
                np.testing.assert_array_equal(got, want, err_msg=f"{fn} {dtype} {shape} {kw} {variant}")


def test_gpu_lines_give_the_cpu_rows_bits(rng):
    """CuPy arrays through rank/minmax (scipy's separable passes) on images and windows that span
    several of its tiles along and across the lines, stacks and channels: the CPU backend's bits."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    for shape, size, kw in (((300, 700), 51, {}), ((700, 90), (101, 3), dict(mode="wrap")),
                            ((3, 130, 75, 3), (1, 9, 5, 1), dict(mode="constant", cval=7.0)),
                            ((33, 1100), (1, 301), dict(mode="nearest", origin=(0, -150)))):
        for dtype in (np.float32, np.uint8, np.int64):
            x = image(rng, shape, dtype)
            for fn in ("minimum_filter", "maximum_filter"):
                got = cp.asnumpy(getattr(mnd, fn)(cp.asarray(x), size=size, **kw))
                np.testing.assert_array_equal(got, getattr(mnd, fn)(x, size=size, **kw),
                                              err_msg=f"{fn} {dtype} {shape} {size}")



def test_gpu_column_walks_give_the_cpu_rows_bits(rng):
    """CuPy arrays' minimum and maximum down axis 0 of images wide enough for rank/minmax's column
    walk (a thread a column, several strips of rows a segment) and windows in each of its register
    buckets (up to 8, 16 and 32 rows; 33 goes to the tiles): NaN beside values, constant, wrap and
    an origin at the window's end, an output of another type; the CPU backend's bits."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    for dtype in (np.float32, np.uint8, np.int16):
        x = image(rng, (3000, 3100), dtype)
        if x.dtype.kind == "f":
            x[rng.random(x.shape) < 0.01] = np.nan
        d = cp.asarray(x)
        for size, kw in ((5, {}), (12, dict(mode="constant", cval=3)), (32, dict(mode="wrap", origin=-16)),
                         (33, dict(mode="mirror")), (7, dict(output=np.float64, mode="nearest", origin=3))):
            for fn in ("minimum_filter1d", "maximum_filter1d"):
                got = cp.asnumpy(getattr(mnd, fn)(d, size, axis=0, **kw))
                np.testing.assert_array_equal(got, getattr(mnd, fn)(x, size, axis=0, **kw),
                                              err_msg=f"{fn} {dtype} {size} {kw}")

def test_rectangles_on_the_gpu_give_the_separable_passes_bits(rng):
    """CuPy arrays' minimum and maximum over two axes run as one rectangle (rank/vanherk where it
    takes it, else minmax's two passes): the CPU rows' separable passes bit for bit (scipy's where no
    window holds NaN), windows tall and wide past a strip and a segment, NaN beside values, an
    output of a wider type, the axes reversed."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    for dtype in (np.float32, np.uint8, np.int16, np.uint32, np.float64, np.int64):
        x = image(rng, (301, 347), dtype)
        if x.dtype.kind == "f":
            x[rng.random(x.shape) < 0.01] = np.nan
        for kw in (dict(size=3), dict(size=(101, 7), mode="constant", cval=5), dict(size=(4, 150), mode="wrap", origin=(1, -20)),
                   dict(size=(31, 31), mode="nearest"), dict(size=(170, 3), mode="mirror"),
                   dict(size=(2, 2), mode="constant", cval=np.nan if x.dtype.kind == "f" else 1.5)):
            for fn in ("minimum_filter", "maximum_filter"):
                got = getattr(mnd, fn)(cp.asarray(x), **kw)
                np.testing.assert_array_equal(cp.asnumpy(got), getattr(mnd, fn)(x, **kw), err_msg=f"{fn} {dtype} {kw}")
    vol = image(rng, (6, 40, 300), np.float32)
    for kw in (dict(size=(3, 5, 101)), dict(size=(2, 7, 7), mode=["nearest", "wrap", "wrap"])):
        np.testing.assert_array_equal(cp.asnumpy(mnd.minimum_filter(cp.asarray(vol), **kw)), mnd.minimum_filter(vol, **kw))
    x = image(rng, (3, 90, 200), np.uint16)
    got = mnd.maximum_filter(cp.asarray(x), size=(9, 5), axes=(2, 1), output=np.float64, mode="reflect")
    np.testing.assert_array_equal(cp.asnumpy(got), mnd.maximum_filter(x, size=(9, 5), axes=(2, 1), output=np.float64))


def test_volumes_are_scipys_separable_passes(rng):
    """A minimum or maximum over three axes: two of its passes as one rectangle (the latest two of
    one mode), the third a line, in any order scipy's values (monotone casts, cval held), and the
    passes as scipy makes them where the rectangle would not be the same (a cval the output's dtype
    does not hold)."""
    for dtype in (np.float32, np.uint8, np.int16, np.float64, np.int64):
        x = image(rng, (7, 19, 26), dtype)
        for kw in (dict(size=3), dict(size=(3, 5, 7), mode="wrap"), dict(size=(2, 4, 3), mode=["reflect", "nearest", "nearest"]),
                   dict(size=5, mode=["constant", "reflect", "constant"], cval=-2), dict(size=(3, 3, 3), origin=(1, -1, 0)),
                   dict(size=4, mode="constant", cval=0.5), dict(size=3, output=np.float64)):
            for fn in ("minimum_filter", "maximum_filter"):
                same(fn, x, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8, np.int16, np.int64, np.bool_])
def test_footprints_over_three_axes_are_scipys(rng, dtype):
    """Volumes (a footprint reaching over three axes: cpu-omp): medians, ranks and percentiles of
    cubes and boxes, footprints with holes, origins at their limits, every mode, a structure, axes
    apart (moved beside each other), a batch of volumes, channels, planes fewer than the window."""
    x = image(rng, (6, 9, 11), dtype)
    holes = rng.random((3, 2, 4)) > 0.4
    holes[0, 0, 0] = True
    same("median_filter", x, size=3)
    same("median_filter", x, size=(2, 3, 4), mode="wrap", origin=(0, -1, 1))
    same("rank_filter", x, 4, footprint=holes, mode="constant", cval=3)
    same("rank_filter", x, -2, footprint=holes, mode="mirror", origin=(1, 0, -2))
    same("percentile_filter", x, 70, size=(5, 2, 3), mode="nearest")
    same("minimum_filter", x, footprint=holes, mode="reflect")
    same("grey_dilation", x, structure=rng.integers(-3, 4, (3, 3, 2)).astype(np.float64), mode="constant", cval=1)
    for mode in MODES:
        same("median_filter", x, size=(3, 3, 3), mode=mode, cval=-1)
    same("median_filter", image(rng, (2, 5, 7, 8), dtype), size=3, axes=(1, 2, 3))  # a batch of volumes
    same("median_filter", image(rng, (5, 6, 7, 3), dtype), size=(3, 3, 3), axes=(0, 1, 2))  # channels
    same("rank_filter", image(rng, (5, 3, 6, 7), dtype), 5, size=(3, 2, 3), axes=(0, 2, 3))  # axes apart
    same("median_filter", image(rng, (2, 6, 5), dtype), size=(5, 3, 3))  # fewer planes than the window


def test_footprints_over_three_axes_on_a_gpu_give_the_cpu_rows_bits(rng):
    """CuPy volumes through auto (median3x3x3 for 3 x 3 x 3 medians of 32-bit keys, network up to 49
    set elements, bisect past them) and naive: the CPU backend's bits for cubes, boxes with holes,
    origins, every mode, a structure, a batch of volumes with channels, fewer planes than the
    window, volumes of many planes (several of median3x3x3's segments)."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    holes = rng.random((3, 2, 4)) > 0.4
    holes[0, 0, 0] = True
    for dtype in (np.float32, np.float64, np.uint8, np.int16, np.int64):
        x = image(rng, (6, 9, 11), dtype)
        for fn, args, kw in (("median_filter", (), dict(size=3)), ("median_filter", (), dict(size=(2, 3, 4), mode="wrap")),
                             ("rank_filter", (4,), dict(footprint=holes, mode="constant", cval=3, origin=(1, 0, -2))),
                             ("median_filter", (), dict(size=5, mode="mirror")),
                             ("grey_dilation", (), dict(structure=rng.integers(-3, 4, (3, 3, 2)).astype(np.float64)))):
            want = getattr(mnd, fn)(x, *args, **kw)
            for variant in ("auto", "naive") if fn != "median_filter" or kw.get("size") != 5 else ("auto",):
                got = cp.asnumpy(getattr(mnd, fn)(cp.asarray(x), *args, variant=variant, **kw))
                np.testing.assert_array_equal(got, want, err_msg=f"{fn} {dtype} {kw} {variant}")
        for shape, kw in (((2, 5, 7, 8, 2), dict(size=(1, 3, 3, 3, 1))), ((2, 6, 5), dict(size=(5, 3, 3))),
                          ((130, 7, 9), dict(size=3, mode="nearest")), ((70, 3, 40), dict(size=3, origin=(1, -1, 0))),
                          ((1, 4, 4), dict(size=3, mode="constant", cval=2))):
            y = image(rng, shape, dtype)
            np.testing.assert_array_equal(cp.asnumpy(mnd.median_filter(cp.asarray(y), **kw)), mnd.median_filter(y, **kw))

"""NumPy arrays on the CPU backend: every op against float64 NumPy/SciPy, the registry,
select, info, and the errors. Runs everywhere (CI has no GPU)."""
import numpy as np
import pytest

import scipy.ndimage as nd

import memhier
from conftest import assert_close, correlate1d, correlate2d, reference

PADS = ("valid", "same", "full")


def f32(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def cpu_variants(op):
    return ["auto"] + [v.name for v in memhier.variants(op) if v.backend == "cpu"]


@pytest.mark.parametrize("variant", cpu_variants("conv1d"))
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("n,k", [(1, 1), (7, 7), (100, 3), (1000, 31), (4097, 255)])
def test_conv1d(rng, variant, pad, n, k):
    x, m = f32(rng, n), f32(rng, k)
    ref, mag = correlate1d(x, m, pad)
    assert_close(memhier.conv1d(x, m, pad=pad, variant=variant), ref, mag, k, f"{variant} {pad} n={n} k={k}")


@pytest.mark.parametrize("per_signal", [False, True])
@pytest.mark.parametrize("pad", PADS)
def test_conv1d_batched(rng, per_signal, pad):
    batch, n, k = 5, 300, 17
    x = f32(rng, batch, n)
    m = f32(rng, batch, k) if per_signal else f32(rng, k)
    y = memhier.conv1d(x, m, pad=pad)
    assert y.shape[0] == batch
    for b in range(batch):
        ref, mag = correlate1d(x[b], m[b] if per_signal else m, pad)
        assert_close(y[b], ref, mag, k, f"signal {b}")


BORDER_MODES = ("reflect", "mirror", "nearest", "wrap", "constant")


@pytest.mark.parametrize("variant", cpu_variants("conv1d"))
@pytest.mark.parametrize("mode", BORDER_MODES)
def test_conv1d_modes(rng, variant, mode):
    """mode= is scipy.ndimage.correlate1d's placement: batches, masks longer than the signal,
    origins at their limits; the reference agrees with scipy itself."""
    for (batch, n), k, origin in (((3, 1000), 31, 0), ((2, 50), 300, -150), ((1, 1), 4, 1), ((4, 777), 8, 3)):
        x, m = f32(rng, batch, n), f32(rng, k)
        ref, mag = reference.correlate1d_mode(x, m, mode, -1.5, origin)
        want = nd.correlate1d(x.astype(np.float64), m.astype(np.float64), mode=mode, cval=-1.5, origin=origin)
        np.testing.assert_allclose(ref, want, atol=1e-9, err_msg="the reference is not scipy's correlate1d")
        got = memhier.conv1d(x, m, mode=mode, cval=-1.5, origin=origin, variant=variant)
        assert_close(got, ref, mag, k, f"{variant} {mode} {x.shape} k={k} origin={origin}")
    x, masks = f32(rng, 3, 500), f32(rng, 3, 41)  # one mask per signal
    got = memhier.conv1d(x, masks, mode=mode, origin=5, variant=variant)
    for b in range(3):
        ref, mag = reference.correlate1d_mode(x[b], masks[b], mode, 0.0, 5)
        assert_close(got[b], ref, mag, 41, f"{variant} {mode} per-signal mask {b}")


@pytest.mark.parametrize("mode", BORDER_MODES)
def test_conv2d_modes(rng, mode):
    im, f = f32(rng, 37, 53), f32(rng, 5, 4)
    for origin in (0, (-2, 1), (2, -2)):
        o = origin if isinstance(origin, tuple) else (origin, origin)
        ref, mag = reference.correlate2d_mode(im, f, mode, 0.75, o)
        assert_close(memhier.conv2d(im, f, mode=mode, cval=0.75, origin=origin), ref, mag, f.size, f"{mode} {o}")


def test_placement_refusals():
    x, m = np.ones(9, np.float32), np.ones(3, np.float32)
    with pytest.raises(ValueError, match="both place the filter"):
        memhier.conv1d(x, m, pad="same", mode="reflect")
    with pytest.raises(ValueError, match="cval is given without a mode"):
        memhier.conv1d(x, m, cval=2.0)
    with pytest.raises(ValueError, match="mode: 'symmetric'"):
        memhier.conv1d(x, m, mode="symmetric")
    with pytest.raises(memhier.InvalidArgument, match="origin = 2: a 3-tap mask takes origins from -1 to 1"):
        memhier.conv1d(x, m, mode="wrap", origin=2)
    with pytest.raises(memhier.InvalidArgument, match="origin"):
        memhier.conv1d(x, m, mode="wrap", origin=2**70)
    with pytest.raises(ValueError, match="origin"):
        memhier.conv2d(np.ones((4, 4), np.float32), np.ones((3, 3), np.float32), mode="wrap", origin=(1, 0, 0))


@pytest.mark.parametrize("variant", cpu_variants("conv2d"))
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("shape,fshape", [((1, 1), (1, 1)), ((37, 53), (3, 5)), ((64, 40), (7, 7)), ((40, 40), (31, 2))])
def test_conv2d(rng, variant, pad, shape, fshape):
    im, f = f32(rng, *shape), f32(rng, *fshape)
    ref, mag = correlate2d(im, f, pad)
    assert_close(memhier.conv2d(im, f, pad=pad, variant=variant), ref, mag, f.size, f"{variant} {pad}")


@pytest.mark.parametrize("variant", cpu_variants("transpose"))
@pytest.mark.parametrize("shape", [(1, 1), (1, 77), (33, 65), (300, 7)])
def test_transpose_exact(rng, variant, shape):
    a = f32(rng, *shape)
    np.testing.assert_array_equal(memhier.transpose(a, variant=variant), a.T)


@pytest.mark.parametrize("variant", cpu_variants("matmul"))
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 1, 5), (67, 129, 33), (128, 64, 130)])
def test_matmul(rng, variant, m, k, n):
    a, b = f32(rng, m, k), f32(rng, k, n)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert_close(memhier.matmul(a, b, variant=variant), ref, mag, k, variant)


def float64_product_error(a, b, got):
    """The largest error of a float64 product in float64 epsilons of sum |a||b| (long double
    reference)."""
    la, lb = a.astype(np.longdouble), b.astype(np.longdouble)
    return float(np.max(np.abs(got.astype(np.longdouble) - la @ lb) / (np.abs(la) @ np.abs(lb)) / np.finfo(np.float64).eps))


@pytest.mark.parametrize("variant", cpu_variants("matmul"))
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 1, 5), (67, 129, 33)])
def test_matmul_float64(rng, variant, m, k, n):
    """float64 products in FP64: each output within k + 2 float64 epsilons of sum |a||b|, on entries
    over 40 binades (values float32 would lose); a float32 operand beside a float64 one refused."""
    a = rng.standard_normal((m, k)) * np.exp2(rng.integers(-20, 20, (m, k)))
    b = rng.standard_normal((k, n)) * np.exp2(rng.integers(-20, 20, (k, n)))
    got = memhier.matmul(a, b, variant=variant)
    assert got.dtype == np.float64 and got.shape == (m, n)
    assert float64_product_error(a, b, got) <= k + 2
    with pytest.raises(TypeError, match="b: dtype float32"):
        memhier.matmul(a, b.astype(np.float32), variant=variant)


def float16_product_error(a, b, got):
    """The largest error of a float16 product (FP32 accumulation) past its bound: (k + 2) float32
    epsilons of sum |a||b| and the rounding to float16, as a multiple of that bound (<= 1 holds)."""
    la, lb = a.astype(np.longdouble), b.astype(np.longdouble)
    ref, mag = la @ lb, np.abs(la) @ np.abs(lb)
    bound = (a.shape[1] + 2) * np.finfo(np.float32).eps * mag + 2.0**-11 * np.abs(ref) + 2.0**-25
    return float(np.max(np.abs(got.astype(np.longdouble) - ref) / bound))


@pytest.mark.parametrize("variant", cpu_variants("matmul"))
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 1, 5), (67, 129, 33)])
def test_matmul_float16(rng, variant, m, k, n):
    """float16 products: float16 out, the products summed in FP32 and rounded to float16 once."""
    a = (rng.uniform(0.5, 1.5, (m, k)) * rng.choice([-1, 1], (m, k)) * np.exp2(rng.integers(-4, 1, (m, k)))).astype(np.float16)
    b = (rng.uniform(0.5, 1.5, (k, n)) * rng.choice([-1, 1], (k, n)) * np.exp2(rng.integers(-4, 1, (k, n)))).astype(np.float16)
    got = memhier.matmul(a, b, variant=variant)
    assert got.dtype == np.float16 and got.shape == (m, n)
    assert float16_product_error(a, b, got) <= 1


@pytest.mark.parametrize("variant", cpu_variants("reduce"))
@pytest.mark.parametrize("shape", [(0,), (1,), (1000,), (3, 333), (2, 3, 5)])
def test_reduce_sum(rng, variant, shape):
    x = f32(rng, *shape)
    got = memhier.reduce_sum(x, variant=variant)
    assert isinstance(got, np.float32)
    assert abs(float(got) - x.astype(np.float64).sum()) <= 1e-5 * (1 + np.log2(max(x.size, 1))) * np.abs(x).sum()


@pytest.mark.parametrize("variant", cpu_variants("histogram"))
def test_histogram_exact(rng, variant):
    values = rng.integers(-5, 40, 10_001).astype(np.int32)
    counts, outside = memhier.bincount(values, 32, variant=variant, return_outside=True)
    ref = np.bincount(values[(values >= 0) & (values < 32)], minlength=32)
    assert counts.dtype == np.uint64
    np.testing.assert_array_equal(counts, ref)
    assert outside == np.count_nonzero((values < 0) | (values >= 32))


def test_histogram_bytes_buckets():
    text = np.frombuffer(b"the quick brown fox jumps over the lazy dog, 42 TIMES", np.uint8)
    counts, outside = memhier.histogram_bytes(text, lo=ord("a"), hi=ord("z"), width=4, return_outside=True)
    letters = text[(text >= ord("a")) & (text <= ord("z"))]
    np.testing.assert_array_equal(counts, np.bincount((letters - ord("a")) // 4, minlength=7))
    assert outside == text.size - letters.size
    np.testing.assert_array_equal(memhier.histogram_bytes(text), np.bincount(text, minlength=256))


def test_out_written_in_place(rng):
    x, m = f32(rng, 100), f32(rng, 5)
    out = np.full(96, np.nan, np.float32)
    assert memhier.conv1d(x, m, out=out) is out
    ref, mag = correlate1d(x, m, "valid")
    assert_close(out, ref, mag, 5)


def test_registry_and_select():
    names = [v.name for v in memhier.variants("conv1d")]
    assert "conv1d/cpu-reference" in names and "conv1d/regtile" in names
    racy = [v for v in memhier.variants("histogram") if v.demonstration]
    assert [v.name for v in racy] == ["histogram/racy"]
    assert {v.name for v in memhier.variants("matmul") if v.reduced_precision} >= {"matmul/tf32"}
    takes = {v.name: v.takes for v in memhier.variants()}
    assert "border modes" in takes["conv2d/regtile"] and "border modes" not in takes["conv2d/shared"]
    assert "scipy sums" in takes["sepfilter/fused64"] and "scipy sums" not in takes["sepfilter/walk"]
    assert takes["conv2d/float64"] == ("float64", "border modes") and takes["transpose/naive"] == ()
    # the vendor rows whose libraries a build may lack are in every build's registry (refusing where absent)
    assert {"conv1d/cudnn", "conv2d/cudnn", "conv2d/npp"} <= set(takes)
    assert len(memhier.variants()) == sum(len(memhier.variants(op)) for op in
                                          ("conv1d", "conv2d", "transpose", "coalescing", "matmul", "reduce",
                                           "histogram", "sepfilter", "rank"))
    assert memhier.select("conv1d", n=1000, k=7, device="cpu").startswith("conv1d/cpu")
    assert memhier.select("matmul", m=64, k=64, n=64, device="cpu").startswith("matmul/cpu")
    assert memhier.select("histogram", n=100, bins=256, bytes=True, device="cpu").startswith("histogram/")
    with pytest.raises(TypeError, match="missing k"):
        memhier.select("conv1d", n=5, device="cpu")
    with pytest.raises(ValueError, match="op"):
        memhier.variants("fft")


def test_info_cpu():
    facts = memhier.info("cpu")
    assert facts["device"] == "cpu" and facts["sm_count"] >= 1 and facts["name"]


def test_explicit_context():
    with memhier.Context("cpu") as ctx:
        y = memhier.reduce_sum(np.ones(10, np.float32), context=ctx)
        assert y == 10
    with pytest.raises(ValueError, match="closed"):
        memhier.reduce_sum(np.ones(10, np.float32), context=ctx)


# ---- bad input: clear errors naming the argument, nothing written ----------------------------

def test_wrong_dtype_names_argument():
    with pytest.raises(TypeError, match="mask: dtype float64"):
        memhier.conv1d(np.ones(10, np.float32), np.ones(3))
    with pytest.raises(TypeError, match="values: dtype float32"):
        memhier.bincount(np.ones(10, np.float32), 4)


def test_not_an_array():
    with pytest.raises(TypeError, match="x: expected a numpy.ndarray"):
        memhier.conv1d([1.0, 2.0], np.ones(1, np.float32))


def test_strided_view_refused():
    x = np.ones(20, np.float32)[::2]
    with pytest.raises(ValueError, match="x: not C-contiguous"):
        memhier.conv1d(x, np.ones(3, np.float32))


def test_shapes_refused():
    with pytest.raises(memhier.InvalidArgument, match="k = 5"):
        memhier.conv1d(np.ones(3, np.float32), np.ones(5, np.float32))
    with pytest.raises(ValueError, match="does not chain"):
        memhier.matmul(np.ones((2, 3), np.float32), np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="expected 2-D"):
        memhier.conv2d(np.ones(9, np.float32), np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="pad"):
        memhier.conv1d(np.ones(9, np.float32), np.ones(3, np.float32), pad="reflect")
    with pytest.raises(ValueError, match="one mask per signal"):
        memhier.conv1d(np.ones((2, 9), np.float32), np.ones((3, 3), np.float32))


def test_library_detail_reaches_the_exception():
    with pytest.raises(memhier.InvalidArgument, match="variant = 'nope'"):
        memhier.conv1d(np.ones(9, np.float32), np.ones(3, np.float32), variant="nope")
    with pytest.raises(memhier.InvalidArgument, match="num_bins|bins"):
        memhier.bincount(np.ones(9, np.int32), 0)
    with pytest.raises(memhier.Unsupported):  # a CUDA row on a CPU context
        memhier.conv1d(np.ones(9, np.float32), np.ones(3, np.float32), variant="conv1d/regtile")


def test_failed_call_leaves_out_alone():
    out = np.full(7, 123.0, np.float32)
    with pytest.raises(memhier.Error):
        memhier.conv1d(np.ones(9, np.float32), np.ones(3, np.float32), variant="nope", out=out)
    assert np.all(out == 123.0)
    with pytest.raises(ValueError, match="out: shape"):
        memhier.conv1d(np.ones(9, np.float32), np.ones(3, np.float32), out=np.empty(8, np.float32))


def test_bad_device_and_context_arguments():
    for device in (-7, -1):  # -1 is the C API's MH_CPU, not a device a caller names
        with pytest.raises(ValueError, match="device"):
            memhier.conv1d(np.ones(9, np.float32), np.ones(3, np.float32), device=device)
        with pytest.raises(ValueError, match="device"):
            memhier.select("conv1d", n=9, k=3, device=device)
    with pytest.raises(TypeError, match="context"):
        memhier.conv1d(np.ones(9, np.float32), np.ones(3, np.float32), context="cpu")


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # numpy.matrix itself
def test_arrays_that_mean_more_than_their_data_are_refused():
    """A masked array's mask and a numpy.matrix's semantics would be dropped: refused by name."""
    x = np.ma.masked_array(np.ones(9, np.float32), mask=[0, 1] + [0] * 7)
    with pytest.raises(TypeError, match="x: a masked array"):
        memhier.conv1d(x, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="a: a numpy.matrix"):
        memhier.matmul(np.matrix(np.ones((2, 2), np.float32)), np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="input: a masked array"):
        memhier.ndimage.correlate(np.ma.masked_array(np.ones((5, 5), np.float32)), np.ones((3, 3)))


def test_cval_past_float32_is_refused():
    x, w = np.ones((5, 5), np.float32), np.ones((3, 3), np.float32)
    for cval in (1e39, -3.5e38):
        with pytest.raises(ValueError, match="cval = .*past float32's range"):
            memhier.ndimage.correlate(x, w, mode="constant", cval=cval)
    for cval in (np.inf, np.nan, 3.4e38):  # taken, as scipy takes them
        memhier.ndimage.correlate(x, w, mode="constant", cval=cval)


def test_missing_device():
    with pytest.raises(memhier.NoDevice, match="device = 10000"):
        memhier.Context(10_000)


@pytest.mark.parametrize("call,says", [
    (lambda: memhier.histogram_bytes(np.arange(256, dtype=np.uint8), 0, 255, 2**32 + 1), "width = 4294967297"),
    (lambda: memhier.bincount(np.arange(10, dtype=np.int32), -2**32 + 4096), "bins = -4294963200"),
    (lambda: memhier.bincount(np.arange(10, dtype=np.int32), 2**32 + 5), "bins = 4294967301"),
    (lambda: memhier.histogram_bytes(np.arange(256, dtype=np.uint8), 0, 255 - 2**32), "hi = -4294967041"),
    (lambda: memhier.histogram_bytes(np.arange(256, dtype=np.uint8), 2**32, 2**32 + 255), "lo = 4294967296"),
    (lambda: memhier.select("histogram", n=10, bins=2**32 + 1, device="cpu"), "bins = 4294967297"),
    (lambda: memhier.select("conv1d", n=2**64, k=3, device="cpu"), "n = 18446744073709551616"),
    (lambda: memhier.select("conv1d", n=-1, k=3, device="cpu"), "n = -1"),
])
def test_integer_arguments_checked_at_full_width(call, says):
    """Values past a C int (or size_t) are refused by name and value, never cut to fit."""
    with pytest.raises(memhier.InvalidArgument, match=rf"^invalid argument: {says}: out of range"):
        call()


def test_arguments_of_the_wrong_type_are_named():
    x, m = np.ones(9, np.float32), np.ones(3, np.float32)
    with pytest.raises(TypeError, match="^n: expected an int"):
        memhier.select("conv1d", n="10", k=3, device="cpu")
    with pytest.raises(ValueError, match="^pad: expected"):
        memhier.conv1d(x, m, pad=["same"])
    with pytest.raises(ValueError, match="^device: expected"):
        memhier.conv1d(x, m, device="cuda:x")
    with pytest.raises(ValueError, match="^variant: .* NUL"):
        memhier.conv1d(x, m, variant="regtile\0junk")
    with pytest.raises(ValueError, match="^variant: .* NUL"):
        memhier.conv1d(x, m, variant="cpu-omp\0")


def test_library_detail_for_sizes_it_refuses():
    with pytest.raises(memhier.InvalidArgument, match="krows = 256: filters are at most 255 x 255"):
        memhier.conv2d(np.ones((64, 64), np.float32), np.ones((256, 3), np.float32), pad="same")
    with pytest.raises(memhier.InvalidArgument, match="larger than the 2 x 10 image"):
        memhier.conv2d(np.ones((2, 10), np.float32), np.ones((3, 3), np.float32))
    with pytest.raises(memhier.InvalidArgument, match="k = 10 is longer than n = 9"):
        memhier.conv1d(np.ones(9, np.float32), np.ones(10, np.float32))


def test_read_only_out_is_refused():
    buf = bytes(7 * 4)
    out = np.frombuffer(buf, np.float32)
    with pytest.raises(ValueError, match="out: a read-only array"):
        memhier.conv1d(np.ones(9, np.float32), np.ones(3, np.float32), out=out)
    assert buf == bytes(7 * 4)


def test_import_maps_no_vendor_library():
    """`import memhier` and CPU calls open none of cuBLAS, cuFFT, cuDNN, NPP: they are opened
    on a vendor row's first call (a fresh interpreter, so that no other test has opened one)."""
    import subprocess
    import sys
    code = ("import numpy as np, memhier\n"
            "x = np.ones(1000, np.float32)\n"
            "memhier.conv1d(x, x[:9]); memhier.matmul(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32))\n"
            "print(open('/proc/self/maps').read())\n")
    maps = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "libmemhier" in maps
    for name in ("libcublas", "libcufft", "libcudnn", "libnpp"):
        assert name not in maps, f"{name} is mapped after import memhier and CPU calls"


def test_import_defers_the_ops():
    """`import memhier` loads the C library alone; the ops and NumPy come with the first use."""
    import subprocess
    import sys
    code = ("import sys, memhier\n"
            "assert 'numpy' not in sys.modules and 'memhier._ops' not in sys.modules, sorted(sys.modules)\n"
            "assert callable(memhier.conv1d) and 'memhier._ops' in sys.modules\n"
            "assert 'variants' in dir(memhier) and memhier.Context is not None\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError):
        memhier.no_such_function


def test_select_explain():
    name, why = memhier.select("conv2d", device="cpu", explain=True, rows=512, cols=512, krows=7, kcols=7, pad="same")
    assert name == memhier.select("conv2d", device="cpu", rows=512, cols=512, krows=7, kcols=7, pad="same")
    assert "conv2d a 512 x 512 image, a 7 x 7 filter, pad = same" in why
    assert f"{name} " in why and "RUNS IT" in why


def test_select_sepfilter():
    assert memhier.select("sepfilter", rows=100, cols=80, taps=17, channels=3, dtype="uint8", device="cpu") == \
        "sepfilter/cpu-omp"
    name, why = memhier.select("sepfilter", rows=10, cols=10, taps=(3, 5), out_dtype="float32", device="cpu",
                               explain=True)
    assert name == "sepfilter/cpu-omp" and "3 x 5 taps" in why
    with pytest.raises(memhier.InvalidArgument, match="taps = 200"):
        memhier.select("sepfilter", rows=10, cols=10, taps=200, device="cpu")
    with pytest.raises(memhier.InvalidArgument, match="channels = 5"):
        memhier.select("sepfilter", rows=10, cols=10, taps=3, channels=5, device="cpu")
    with pytest.raises(ValueError, match="dtype: complex64"):
        memhier.select("sepfilter", rows=10, cols=10, taps=3, dtype="complex64", device="cpu")
    assert memhier.select("sepfilter", rows=10, cols=10, taps=3, dtype="float64", device="cpu") == "sepfilter/cpu-omp"
    with pytest.raises(memhier.Unsupported, match="float16 beside a type computed in float64"):
        memhier.select("sepfilter", rows=10, cols=10, taps=3, dtype="float16", out_dtype="int64", device="cpu")


def made_matches_reader(like):
    """_arrays.made's Operand of a new array equals what the reader finds in that array, for
    every shape and dtype the ops make (shared with test_gpu.py)."""
    from memhier import _arrays
    for shape in [(), (1,), (3, 5), (2, 3, 4)]:
        for dtype in ("float32", "float64", "int64", "uint64", np.dtype("uint8"), np.dtype("float16")):
            if like.kind == "torch" and dtype == "uint64":
                continue  # the ops make int64 counts for PyTorch
            obj = _arrays.empty(like, shape, np.dtype(dtype).name)  # made takes a name or a dtype
            got, want = _arrays.made(obj, "out", like, shape, dtype), _arrays.Operand(obj, "out")
            assert got.obj is want.obj
            for slot in set(_arrays.Operand.__slots__) - {"obj"}:
                assert getattr(got, slot) == getattr(want, slot), (slot, shape, dtype)


def test_made_operands_match_the_reader():
    from memhier import _arrays
    made_matches_reader(_arrays.Operand(np.zeros(3, np.float32), "x"))

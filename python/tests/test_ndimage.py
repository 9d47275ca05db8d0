"""memhier.ndimage against scipy.ndimage's definitions: every mode (and scipy's aliases), odd and
even filter sides, origins at their limits, images smaller than the filter, a NaN cval,
convolve's flipped weights and origins, and the refusals, each by name. The reference is the
image padded by numpy.pad and summed in float64 (tests/reference.py); scipy.ndimage itself is
called too on the ordinary cases, so that a difference in definitions shows as a failure."""
import numpy as np
import pytest
import scipy.ndimage as nd

import memhier
from memhier import _fast
from memhier import ndimage as mnd
from conftest import assert_close, has_cuda_device, rtol  # noqa: F401
import reference

MODES = ["reflect", "mirror", "nearest", "wrap", "constant", "grid-mirror", "grid-wrap", "grid-constant"]
SHAPES = [(1, 1), (2, 3), (5, 1), (1, 7), (17, 33), (64, 45)]
FILTERS = [(1, 1), (3, 3), (4, 6), (7, 2), (1, 11), (11, 11)]


def origins(k):
    kr, kc = k
    return [(0, 0), (-(kr // 2), (kc - 1) // 2), ((kr - 1) // 2, -(kc // 2))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_correlate_modes(rng, mode, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    for k in FILTERS:
        w = rng.standard_normal(k).astype(np.float32)
        for o in origins(k):
            got = mnd.correlate(x, w, mode=mode, cval=1.5, origin=o)
            ref, mag = reference.correlate2d_mode(x, w, mode, 1.5, o)
            assert got.dtype == np.float32 and got.shape == x.shape
            assert_close(got, ref, mag, w.size, f"correlate {shape} {k} {mode} origin {o}")


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_convolve_flips_weights_and_origin(rng, mode):
    x = rng.standard_normal((23, 19)).astype(np.float32)
    for k in FILTERS:
        w = rng.standard_normal(k).astype(np.float32)
        for o in origins(k):
            got = mnd.convolve(x, w, mode=mode, cval=-2.0, origin=o)
            want = nd.convolve(x.astype(np.float64), w.astype(np.float64), mode=mode, cval=-2.0, origin=o)
            ref, mag = reference.correlate2d_mode(x, w[::-1, ::-1], mode, -2.0,
                                                  (-o[0] - (1 - k[0] % 2), -o[1] - (1 - k[1] % 2)))
            np.testing.assert_allclose(ref, want, atol=1e-9, err_msg="the reference is not scipy's convolve")
            assert_close(got, ref, mag, w.size, f"convolve {k} {mode} origin {o}")


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_scipy_itself_on_ordinary_images(rng, mode):
    """scipy.ndimage.correlate and convolve with their defaults on images larger than the filter."""
    x = rng.standard_normal((40, 57)).astype(np.float32)
    for k in [(3, 3), (5, 5), (2, 4), (9, 7)]:
        w = rng.standard_normal(k).astype(np.float32)
        for ours, theirs in ((mnd.correlate, nd.correlate), (mnd.convolve, nd.convolve)):
            want = theirs(x.astype(np.float64), w.astype(np.float64), mode=mode)
            _, mag = reference.correlate2d_mode(x, w, mode)
            assert_close(ours(x, w, mode=mode), want, mag, w.size, f"{theirs.__name__} {k} {mode}")
    assert_close(mnd.correlate(x, w), nd.correlate(x.astype(np.float64), w.astype(np.float64)),
                 reference.correlate2d_mode(x, w, "reflect")[1], w.size, "default mode")


def test_nan_cval_reaches_every_output_it_touches(rng):
    x = rng.standard_normal((9, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3)).astype(np.float32)
    got = mnd.correlate(x, w, mode="constant", cval=np.nan)
    want = nd.correlate(x.astype(np.float64), w.astype(np.float64), mode="constant", cval=np.nan)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    inner = ~np.isnan(want)
    np.testing.assert_allclose(got[inner], want[inner], rtol=1e-5, atol=1e-5)


def test_output_argument(rng):
    x = rng.standard_normal((12, 10)).astype(np.float32)
    w = np.ones((3, 3), np.float32) / 9
    out = np.full_like(x, np.nan)
    assert mnd.correlate(x, w, output=out) is out
    assert np.all(np.isfinite(out))
    assert mnd.correlate(x, w, output=np.float32).dtype == np.float32
    y64 = mnd.correlate(x, w, output=np.float64)  # computed in float64, as scipy computes it
    assert y64.dtype == np.float64
    np.testing.assert_allclose(y64, nd.correlate(x.astype(np.float64), w.astype(np.float64)), rtol=1e-12, atol=1e-12)
    with pytest.raises(memhier.Unsupported, match="output: dtype complex64"):
        mnd.correlate(x, w, output=np.zeros(x.shape, np.complex64))
    strided = np.full((12, 20), np.nan, np.float32)[:, ::2]
    assert mnd.correlate(x, w, output=strided) is strided
    np.testing.assert_array_equal(strided, mnd.correlate(x, w))
    y = x.copy()
    assert mnd.correlate(y, w, output=y) is y  # in place, as scipy allows: through a temporary
    np.testing.assert_array_equal(y, mnd.correlate(x, w))
    np.testing.assert_array_equal(mnd.correlate(x[:, ::-1], w), mnd.correlate(x[:, ::-1].copy(), w))
    with pytest.raises(ValueError, match="output"):
        mnd.correlate(x, w, output=np.empty((12, 11), np.float32))


def test_weights_as_lists_and_other_dtypes(rng):
    x = rng.standard_normal((8, 9)).astype(np.float32)
    want = nd.correlate(x.astype(np.float64), np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(mnd.correlate(x, [[1, 2], [3, 4]]), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mnd.correlate(x, np.array([[1, 2], [3, 4]], np.int64)), want, rtol=1e-5, atol=1e-5)


def test_refusals_name_the_argument(rng):
    x = rng.standard_normal((8, 9)).astype(np.float32)
    w = np.ones((3, 3), np.float32)
    with pytest.raises(ValueError, match="mode"):
        mnd.correlate(x, w, mode="symmetric")
    with pytest.raises(memhier.InvalidArgument, match="origin = 2 on axis 0"):
        mnd.correlate(x, w, origin=(2, 0))
    with pytest.raises(memhier.InvalidArgument, match="origin = -2 on axis 1"):
        mnd.correlate(x, w, origin=(0, -2))
    with pytest.raises(ValueError, match="origin"):
        mnd.correlate(x, w, origin=(0, 0, 0))
    with pytest.raises(TypeError, match="origin"):
        mnd.correlate(x, w, origin=0.5)
    with pytest.raises(ValueError, match="weights: 1-D"):
        mnd.correlate(x, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="no filter weights"):
        mnd.correlate(x, np.ones((0, 3), np.float32))
    with pytest.raises(memhier.InvalidArgument, match="krows = 256"):
        mnd.correlate(x, np.ones((256, 3), np.float32))
    with pytest.raises(memhier.Unsupported, match=f"input: dtype {np.dtype(np.longdouble).name}"):
        mnd.gaussian_filter(x.astype(np.longdouble), 1.0)
    with pytest.raises(RuntimeError, match=r"weights.ndim \(2\) must match len\(axes\) \(1\)"):
        mnd.correlate(x, w, axes=(0,))
    with pytest.raises(RuntimeError, match="sequence argument must have length equal to input rank"):
        mnd.correlate(x, w, origin=(0, 0, 0))
    with pytest.raises(RuntimeError, match="sequence of modes"):
        mnd.convolve(x, w, mode=["nearest", "reflect"])
    with pytest.raises(ValueError, match="take 4-D weights"):
        mnd.correlate(np.ones((2, 3, 4, 5), np.float32), np.ones((1, 1), np.float32))
    with pytest.raises(ValueError, match="names an axis twice"):
        mnd.correlate(x, w, axes=(1, 1))
    with pytest.raises(ValueError, match="axis"):
        mnd.correlate(x, w, axes=(0, 2))
    with pytest.raises(TypeError, match="cval"):
        mnd.correlate(x, w, cval="0")
    assert mnd.correlate(np.ones((0, 5), np.float32), w).shape == (0, 5)  # empty in, empty out, as scipy


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@pytest.mark.parametrize("variant", ["stream", "tc", "shared", "texture", "cudnn", "npp"])
def test_rows_without_modes_refuse_them(variant):
    """A row that pads with zeros only refuses a bordered call, saying so; auto runs another.
    A vendor row this build left out (NPP where the CUDA install has none) is not there to ask."""
    if f"conv2d/{variant}" not in {v.name for v in memhier.variants("conv2d")}:
        pytest.skip(f"this build has no conv2d/{variant}")
    x = np.ones((64, 64), np.float32)
    w = np.ones((7, 7), np.float32)
    with pytest.raises(memhier.Unsupported, match="pads with zeros only"):
        mnd.correlate(x, w, variant=variant, device=0)
    np.testing.assert_allclose(mnd.correlate(x, w, device=0), np.full_like(x, 49.0), rtol=1e-6)


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@pytest.mark.parametrize("variant", ["walk", "tiles"])
def test_stacks_every_origin(rng, variant):
    """walk and tiles filter a stack in one call, 3 x 3 and 5 x 5 at every origin (walk: 7 x 7 at
    every row origin and the column origins it takes, -1 to 1), in every mode, images smaller than
    the filter too; what they refuse (other sizes, 7 x 7 anchored further from the centre) they
    name."""
    for shape in [(3, 1, 1), (4, 2, 3), (5, 7, 130), (2, 40, 300)]:
        x = rng.standard_normal(shape).astype(np.float32)
        for k in (3, 5, 7) if variant == "walk" else (3, 5):
            w = rng.standard_normal((k, k)).astype(np.float32)
            cols = (-1, 0, 1) if k == 7 else (-(k // 2), 0, (k - 1) // 2)
            for o in [(a, b) for a in range(-(k // 2), (k - 1) // 2 + 1) for b in cols]:
                for mode in ["reflect", "mirror", "nearest", "wrap", "constant"]:
                    got = mnd.correlate(x, w, mode=mode, cval=0.5, origin=o, axes=(1, 2), variant=variant, device=0)
                    for i in range(shape[0]):
                        ref, mag = reference.correlate2d_mode(x[i], w, mode, 0.5, o)
                        assert_close(got[i], ref, mag, w.size, f"{variant} {shape} {k}x{k} {mode} origin {o} image {i}")
    sizes = "3 x 3, 5 x 5 and 7 x 7" if variant == "walk" else "3 x 3 and 5 x 5 filters"
    with pytest.raises(memhier.Unsupported, match=sizes):
        mnd.correlate(np.ones((8, 8), np.float32), np.ones((9, 9), np.float32), variant=variant, device=0)
    if variant == "tiles":
        return
    with pytest.raises(memhier.Unsupported, match="anchored within a column"):
        mnd.correlate(np.ones((8, 8), np.float32), np.ones((7, 7), np.float32), origin=(0, 3), variant="walk",
                      device=0)


HDR_SIDES = [(3, 3), (5, 5), (7, 7), (11, 11), (15, 15), (21, 21), (31, 31), (9, 31)]


@pytest.mark.parametrize("k", HDR_SIDES)
def test_high_dynamic_range_keeps_per_element_accuracy(rng, k):
    """scipy's accuracy by default: on an image with 1% of its pixels 1e6 times brighter, every
    output of correlate and convolve within its own terms' FP32 bound (no mean term), on the GPU
    (where auto would take an FFT row under the normwise contract) and on the CPU; the planned
    path (host weights) and device weights alike."""
    x = reference.high_dynamic_range(rng, (384, 416))
    w = rng.uniform(-1, 1, k).astype(np.float32)
    devices = [None] + ([0] if has_cuda_device() else [])
    ref, mag = reference.correlate2d_mode(x, w, "reflect")
    flipped, fmag = reference.correlate2d_mode(x, w[::-1, ::-1], "reflect", origin=tuple(-(1 - s % 2) for s in k))
    for device in devices:
        for got, want, m, what in ((mnd.correlate(x, w, device=device), ref, mag, "correlate"),
                                   (mnd.convolve(x, w, device=device), flipped, fmag, "convolve")):
            worst = reference.worst_violation(got, want, m, w.size, per_element=True)
            assert worst is None, f"{what} {k} on {device}: {worst}"
        normwise = memhier.conv2d(x, w, mode="reflect", device=device)  # memhier.conv2d's default contract
        assert reference.worst_violation(normwise, ref, mag, w.size) is None, f"conv2d {k} on {device}"
        if device is not None:
            picked = memhier.select("conv2d", device=device, precision="per-element", rows=384, cols=416, krows=k[0],
                                    kcols=k[1], mode="reflect")
            row = {v.name: v for v in memhier.variants("conv2d")}[picked]
            assert row.precision == "per-element", f"{k}: auto picks {picked} under per-element"


def test_precision_argument(rng):
    """precision is checked by name; 'normwise' lets auto take the FFT rows on a GPU, where the
    rows it may pick carry the contract memhier.variants() names."""
    x = rng.uniform(0, 1, (64, 64)).astype(np.float32)
    w = np.ones((5, 5), np.float32)
    for bad in ("elementwise", None, 1):
        with pytest.raises(ValueError, match="precision"):
            mnd.correlate(x, w, precision=bad)
        with pytest.raises(ValueError, match="precision"):
            memhier.conv2d(x, w, precision=bad)
    got = mnd.correlate(x, w, precision="normwise")
    assert_close(got, *reference.correlate2d_mode(x, w, "reflect"), w.size, "normwise on the CPU")
    precisions = {v.name: v.precision for v in memhier.variants()}
    assert precisions["conv2d/fft-tile"] == precisions["conv1d/fft-os"] == "normwise"
    assert precisions["conv2d/regtile"] == precisions["conv2d/lowrank"] == "per-element"
    if has_cuda_device():
        shape = dict(rows=2048, cols=2048, krows=15, kcols=15)
        assert precisions[memhier.select("conv2d", precision="normwise", **shape)] == "normwise"
        assert precisions[memhier.select("conv2d", precision="per-element", **shape)] == "per-element"
        name, why = memhier.select("conv2d", precision="per-element", explain=True, **shape)
        assert "contract: per-element" in why and "the context asks per-element" in why, why


@pytest.mark.parametrize("convolve", [False, True])
def test_kept_plans_follow_the_weights(rng, convolve):
    """correlate keeps a call's plan for the next call of the same signature (NumPy weights by
    content): a loop whose weights change in place between calls, then another array holding
    the first weights, gets each call's own filter: within the float64 reference's bound, and
    equal to a plan made anew."""
    from memhier import ndimage as internals
    fn, flip = (mnd.convolve, lambda w: w[::-1, ::-1]) if convolve else (mnd.correlate, lambda w: w)
    x = rng.standard_normal((40, 53)).astype(np.float32)
    w = rng.standard_normal((5, 5)).astype(np.float32)
    seen = []
    for step in range(4):
        seen.append((w.copy(), fn(x, w, mode="reflect"), f"step {step}"))
        w[step, 4 - step] += 3.0  # the caller changes its weights after the call
    first = seen[0][0].copy()
    seen.append((first, fn(x, first, mode="reflect"), "the first weights again, in another array"))
    for weights, got, what in seen:
        ref, mag = reference.correlate2d_mode(x, flip(weights).astype(np.float64), "reflect", 0.0, (0, 0))
        assert_close(got, ref, mag, weights.size, what)
        internals._PREPARED.clear()
        np.testing.assert_array_equal(got, fn(x, weights.copy(), mode="reflect"), err_msg=what)


@pytest.mark.parametrize("shape", [(40, 53), (3, 40, 53)])
def test_kept_calls_match_calls_planned_anew(rng, shape):
    """A kept plan whose calls are one library call over the last two axes takes its kept call
    (_KeptCall: the arguments fixed when it was kept): for an image and a stack, square and
    wide weights, each mode, origins, both precisions and an explicit context, the kept call's
    output is the bits of a call planned anew. Where a call takes more than one library call
    (weights over other axes, convolve's reversed device weights) the plan keeps no such call."""
    from memhier import ndimage as internals
    x = rng.standard_normal(shape).astype(np.float32)
    context = memhier.Context("cpu")
    cases = [(5, 5, "reflect", 0, {}), (3, 7, "constant", (1, -2), {"cval": 1.5}), (5, 5, "wrap", 0,
             {"precision": "normwise"}), (5, 3, "nearest", -1, {"context": context}), (2, 4, "mirror", 0, {})]
    for krows, kcols, mode, origin, options in cases:
        w = rng.standard_normal((krows, kcols)).astype(np.float32)
        what = f"{shape} {krows}x{kcols} {mode} origin {origin} {options}"
        internals._PREPARED.clear()
        anew = mnd.correlate(x, w, mode=mode, origin=origin, axes=(-2, -1), **options)
        kept = [mnd.correlate(x, w, mode=mode, origin=origin, axes=(-2, -1), **options) for _ in range(2)]
        plans = list(internals._PREPARED.values())
        assert len(plans) == 1 and plans[0][0].kept_call is not None, what
        for got in kept:
            np.testing.assert_array_equal(got, anew, err_msg=what)
    internals._PREPARED.clear()
    mnd.correlate(x, rng.standard_normal((3,) * len(shape)).astype(np.float32))  # every axis
    if len(shape) == 3:
        mnd.correlate(x, rng.standard_normal((3, 3)).astype(np.float32), axes=(0, 1))  # the first two
        assert all(plan.kept_call is None for plan, _ in internals._PREPARED.values())


def test_kept_plans_serve_images_of_every_shape(rng):
    """A loop over images of many shapes plans once: correlate keeps one plan for every shape of
    a number of axes (its kept call reads each call's shape), and the separable filters one
    descriptor a group of passes (a new shape gets a copy with its own view). Each result is
    the bits of a call planned anew, within the float64 reference's bound; square, wide, tall,
    single-pixel images and stacks of other lengths."""
    from memhier import ndimage as internals
    w = rng.standard_normal((5, 3)).astype(np.float32)
    shapes = [(40, 53), (53, 40), (1, 1), (1, 77), (77, 1), (6, 6), (40, 53)]
    stacks = [(3, 40, 53), (2, 7, 9), (1, 1, 1)]
    _fast.RECORDS.clear()  # the entry's records, which would replay calls without planning
    internals._PREPARED.clear()
    internals._PASSES.clear()
    internals._DESCS.clear()
    images = [rng.standard_normal(s).astype(np.float32) for s in shapes + stacks]
    got = [(mnd.correlate(x, w, mode="mirror", origin=(1, 0), axes=(-2, -1)), mnd.gaussian_filter(x, 1.3))
           for x in images]
    assert len(internals._PREPARED) == 2, "one correlate plan for images, one for stacks"
    assert all(plan.kept_call is not None for plan, _ in internals._PREPARED.values())
    # gaussian_filter: an image's two passes in one desc; a stack's first axis alone and its other
    # two together; 1 x 1 x 1's first two together (its last axis is at most 4 values: channels)
    # and its last alone
    assert len(internals._DESCS) == 5, list(internals._DESCS)
    for x, (c, g) in zip(images, got):
        what = f"shape {x.shape}"
        ref, mag = reference.correlate2d_mode(x.reshape((-1,) + x.shape[-2:])[0].astype(np.float64),
                                              w.astype(np.float64), "mirror", 0.0, (1, 0))
        assert_close(c.reshape((-1,) + x.shape[-2:])[0], ref, mag, w.size, what)
        _fast.RECORDS.clear()
        internals._PREPARED.clear()
        internals._PASSES.clear()
        internals._DESCS.clear()
        np.testing.assert_array_equal(c, mnd.correlate(x, w, mode="mirror", origin=(1, 0), axes=(-2, -1)),
                                      err_msg=what)
        np.testing.assert_array_equal(g, mnd.gaussian_filter(x, 1.3), err_msg=what)


def test_kept_plans_refuse_what_a_first_call_refuses(rng):
    """A kept plan's key tells arguments apart as their checks do: after a kept call with origin 0,
    cval 1.0 and no device, origin=False, cval=True and device=True are refused as they are in a
    first call, not run under the plan of 0, 1.0 or device 1."""
    x = rng.standard_normal((20, 30)).astype(np.float32)
    w = rng.standard_normal((3, 3)).astype(np.float32)
    for _ in range(2):
        mnd.correlate(x, w, mode="constant", cval=1.0, origin=0)
    with pytest.raises(TypeError, match="origin"):
        mnd.correlate(x, w, mode="constant", cval=1.0, origin=False)
    with pytest.raises(TypeError, match="cval"):
        mnd.correlate(x, w, mode="constant", cval=True, origin=0)
    with pytest.raises(ValueError, match="device"):
        mnd.correlate(x, w, mode="constant", cval=1.0, origin=0, device=True)


def test_a_context_that_is_not_one_is_refused_by_name(rng):
    """The calls that go straight to the library (kept calls, one-call separable filters) refuse
    a `context` that is not a memhier.Context as every call does, naming it."""
    x = rng.standard_normal((20, 30)).astype(np.float32)
    for call in (lambda: mnd.correlate1d(x, np.ones(3, np.float32), context="cpu"),
                 lambda: mnd.gaussian_filter(x, 1.0, context=0),
                 lambda: mnd.correlate(x, np.ones((3, 3), np.float32), context="cpu")):
        with pytest.raises(TypeError, match="context: expected a memhier.Context"):
            call()


def test_kept_passes_follow_the_arguments(rng):
    """The separable filters keep their passes by their arguments for a loop of calls: weights
    changed in place between correlate1d calls, and arguments that the checks tell apart (True
    is not 1) each get their own, as scipy computes them."""
    x = rng.standard_normal((30, 41)).astype(np.float32)
    x64, scale = x.astype(np.float64), 10 * float(np.abs(x).max())
    w = rng.standard_normal(7).astype(np.float32)
    first = w.copy()
    for step in range(3):
        want = nd.correlate1d(x64, w.astype(np.float64), axis=0)
        close_to_scipy(mnd.correlate1d(x, w, axis=0), want, scale * np.abs(w).sum(), f"correlate1d, step {step}")
        w[step] += 2.0  # the caller changes its weights after the call
    want = nd.correlate1d(x64, first.astype(np.float64), axis=0)
    close_to_scipy(mnd.correlate1d(x, first.copy(), axis=0), want, scale * np.abs(first).sum(), "the first weights")
    close_to_scipy(mnd.gaussian_filter1d(x, 1.5, order=1), nd.gaussian_filter1d(x64, 1.5, order=1), scale, "order 1")
    with pytest.raises(ValueError, match="order"):
        mnd.gaussian_filter1d(x, 1.5, order=True)  # equal to 1 as a key, refused as an argument
    for sigma in ([1.0, 2.0], (1.0, 2.0), [2.0, 1.0]):
        close_to_scipy(mnd.gaussian_filter(x, sigma), nd.gaussian_filter(x64, sigma), scale, f"sigma {sigma!r}")
    # a kept filter's steps (descriptors by shape, dtypes and cval) follow each call's own
    from memhier import ndimage as internals
    calls = [((30, 41), np.float32, 1.0), ((41, 30), np.float32, 1.0), ((30, 41), np.uint8, 1.0),
             ((30, 41), np.float32, 2.5), ((7, 5, 3), np.float32, 1.0), ((30, 41), np.float32, 1.0)] * 2
    images = [(rng.uniform(0, 200, shape).astype(dtype), cval) for shape, dtype, cval in calls]
    got = [mnd.gaussian_filter(a, 1.2, mode="constant", cval=cval) for a, cval in images]
    for (a, cval), g in zip(images, got):
        internals._PASSES.clear()
        internals._DESCS.clear()
        np.testing.assert_array_equal(g, mnd.gaussian_filter(a, 1.2, mode="constant", cval=cval),
                                      err_msg=f"{a.shape} {a.dtype} cval {cval}")


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_gpu_rows(rng, mode):
    """Every row that takes modes, on each problem against one float64 reference (computed once a
    problem: it is the test's slow part)."""
    variants = ["auto", "conv2d/regtile", "conv2d/separable", "conv2d/basic", "conv2d/const"]
    for shape in [(1, 1), (3, 2), (5, 5), (37, 517), (300, 1001)]:
        x = rng.standard_normal(shape).astype(np.float32)
        for k in [(3, 3), (5, 5), (4, 6), (11, 11), (31, 31)]:
            u, v = rng.standard_normal(k[0]), rng.standard_normal(k[1])
            w = np.outer(u, v).astype(np.float32)  # rank 1, so that separable takes it too
            walk = ["conv2d/walk", "conv2d/tiles"] if k in ((3, 3), (5, 5)) else []
            for o in origins(k):
                ref, mag = reference.correlate2d_mode(x, w, mode, 0.75, o)
                for variant in variants + walk:
                    got = mnd.correlate(x, w, mode=mode, cval=0.75, origin=o, variant=variant, device=0)
                    assert_close(got, ref, mag, w.size, f"{variant} {shape} {k} {mode} origin {o}")


# ---- the 1-D filters and those scipy composes from them: against scipy.ndimage in float64 ----

def close_to_scipy(got, want, scale, what):
    """Within float32 rounding of each pass: 1e-5 of the sum of |terms| (scale bounds it)."""
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape and np.all(np.isfinite(got)), what
    err = np.max(np.abs(got - want)) if got.size else 0.0
    assert err <= 1e-5 * scale, f"{what}: largest error {err:.3g}, bound {1e-5 * scale:.3g}"


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_correlate1d_convolve1d(rng, mode, axis):
    x = rng.standard_normal((29, 41)).astype(np.float32)
    for k in (1, 2, 5, 8, 31):
        w = rng.standard_normal(k).astype(np.float32)
        for origin in (-(k // 2), 0, (k - 1) // 2):
            for ours, theirs in ((mnd.correlate1d, nd.correlate1d), (mnd.convolve1d, nd.convolve1d)):
                want = theirs(x.astype(np.float64), w.astype(np.float64), axis, mode=mode, cval=0.5, origin=origin)
                close_to_scipy(ours(x, w, axis, mode=mode, cval=0.5, origin=origin), want,
                               np.abs(w).sum() * 4 * max(1.0, 0.5), f"{theirs.__name__} k={k} origin={origin}")


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_gaussian_filters(rng, mode):
    x = rng.standard_normal((40, 33)).astype(np.float32)
    x64 = x.astype(np.float64)
    for sigma in (0.5, 1.0, 2.0, (1.5, 3.0), (0, 2.0)):
        for order in (0, 1, 2, (0, 2), (1, 0)):
            want = nd.gaussian_filter(x64, sigma, order, mode=mode, cval=0.25)
            close_to_scipy(mnd.gaussian_filter(x, sigma, order, mode=mode, cval=0.25), want, 40.0,
                           f"gaussian_filter sigma={sigma} order={order}")
    for axis in (0, 1):
        want = nd.gaussian_filter1d(x64, 1.7, axis, order=1, mode=mode, truncate=3.0)
        close_to_scipy(mnd.gaussian_filter1d(x, 1.7, axis, order=1, mode=mode, truncate=3.0), want, 40.0,
                       "gaussian_filter1d")
    want = nd.gaussian_filter(x64, 2.0, mode=mode, radius=3)
    close_to_scipy(mnd.gaussian_filter(x, 2.0, mode=mode, radius=3), want, 40.0, "radius")
    want = nd.gaussian_laplace(x64, 1.3, mode=mode)
    close_to_scipy(mnd.gaussian_laplace(x, 1.3, mode=mode), want, 80.0, "gaussian_laplace")


def test_gaussian_laplace_on_an_image_adds_its_terms_as_scipy_does(rng):
    """On an image both terms run in one call (mh_sepfilter_sum): each the gaussian_filter of one
    axis's second derivative stored in the output's dtype, then `out += term` in that dtype, bit
    for bit, in every input and output dtype (integer sums wrap), mode, sigma per axis (0 too),
    truncate and radius; dark pixels beside bright ones. Outputs the sum cannot write (strided)
    and inputs it cannot read in place (strided) add term by term to the same bits."""
    def terms_added(x, sigma, output, **kw):
        out_dtype = np.dtype(output) if output is not None else x.dtype
        want = mnd.gaussian_filter(x, sigma, [2, 0], output=out_dtype, **kw)
        want += mnd.gaussian_filter(x, sigma, [0, 2], output=out_dtype, **kw)
        return want
    for dtype in (np.float32, np.float16, np.uint8, np.int8, np.uint16, np.int16):
        top = 100 if dtype == np.int8 else 250
        x = (rng.random((29, 41)) * top).astype(dtype)
        x[7, 8:12], x[8, 8:12] = 0, top  # a dark row above a bright one
        for mode, sigma, output, kw in (("reflect", 1.3, None, {}), ("constant", (0.8, 2.2), np.float32, {"cval": 3.0}),
                                        ("wrap", (0, 1.5), None, {"truncate": 2.0}), ("mirror", 0.9, np.int16, {}),
                                        ("nearest", 1.1, np.uint8, {"radius": 2})):
            got = mnd.gaussian_laplace(x, sigma, output=output, mode=mode, **kw)
            want = terms_added(x, sigma, output, mode=mode, **kw)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=f"{dtype} {mode} {sigma}")
    x = rng.standard_normal((30, 20)).astype(np.float32)
    x[10:12, 5:9] = 1000.0
    want = mnd.gaussian_laplace(x, 1.7)
    strided = np.zeros((30, 40), np.float32)[:, ::2]
    assert mnd.gaussian_laplace(x, 1.7, output=strided) is strided
    np.testing.assert_array_equal(strided, want)
    given = np.full((30, 20), np.nan, np.float32)  # a contiguous output the caller gives: written by the sum
    assert mnd.gaussian_laplace(x, 1.7, output=given) is given
    np.testing.assert_array_equal(given, want)
    wide = np.zeros((30, 40), np.float32)
    wide[:, ::2] = x
    np.testing.assert_array_equal(mnd.gaussian_laplace(wide[:, ::2], 1.7), want)
    np.testing.assert_array_equal(mnd.gaussian_laplace(x, 70.0), terms_added(x, 70.0, None))  # past MAX_TAPS
    sigmas = np.array([1.2, 0.6])  # an argument that makes no key: the terms are made for the call alone
    np.testing.assert_array_equal(mnd.gaussian_laplace(x, sigmas), terms_added(x, sigmas, None))


def test_laplacians_give_each_term_one_mode_as_scipy_does(rng):
    """scipy's generic_laplace hands the i-th term the i-th of a sequence of modes, whole: the
    gaussian_laplace term along axis 0 smooths along axis 1 in axis 0's mode too. 2-D (one call)
    and 3-D (a call a term), dark pixels beside bright ones."""
    for shape, modes in (((23, 30), ["reflect", "constant"]), ((23, 30), ("wrap", "nearest")),
                         ((9, 12, 7), ["reflect", "constant", "wrap"]), ((9, 12, 7), ["mirror", "nearest", "reflect"])):
        x = rng.standard_normal(shape).astype(np.float32)
        x[(slice(2, 4),) * len(shape)] = 50.0  # at the border: the modes' values
        x64 = x.astype(np.float64)
        close_to_scipy(mnd.gaussian_laplace(x, 1.4, mode=modes, cval=0.5),
                       nd.gaussian_laplace(x64, 1.4, mode=modes, cval=0.5), 40.0, f"gaussian_laplace {modes}")
        close_to_scipy(mnd.laplace(x, mode=modes, cval=0.5), nd.laplace(x64, mode=modes, cval=0.5), 10.0,
                       f"laplace {modes}")


def test_laplacians_over_axes(rng):
    """scipy's `axes` of laplace and gaussian_laplace (scipy 1.15 on): the sum over the axes given,
    in their order, sigma and mode one an axis given (sigma 0 along the others); all of an image's
    axes in either order take the one-call sum; no axis is the input as it is."""
    import inspect
    if "axes" not in inspect.signature(nd.gaussian_laplace).parameters:
        pytest.skip("this scipy's laplace and gaussian_laplace take no axes")
    x3 = rng.standard_normal((10, 13, 6)).astype(np.float32)
    x3[3:5, 4:6, :] = 50.0
    x2 = np.ascontiguousarray(x3[:, :, 0])
    for x, axes, sigma, mode in ((x3, (0, 1), 1.2, "reflect"), (x3, (2, 0), (0.8, 1.5), ["wrap", "constant"]),
                                 (x3, (-1,), 1.1, "mirror"), (x3, (1, 2, 0), 0.9, ["nearest", "reflect", "wrap"]),
                                 (x2, (1, 0), (1.3, 0.7), ["constant", "reflect"]), (x2, (0,), [1.6], "nearest"),
                                 (x2, (-1, -2), 1.0, "wrap")):
        x64 = x.astype(np.float64)
        close_to_scipy(mnd.gaussian_laplace(x, sigma, mode=mode, cval=0.25, axes=axes),
                       nd.gaussian_laplace(x64, sigma, mode=mode, cval=0.25, axes=axes), 40.0,
                       f"gaussian_laplace {x.shape} axes={axes}")
        close_to_scipy(mnd.laplace(x, mode=mode, cval=0.25, axes=axes), nd.laplace(x64, mode=mode, cval=0.25, axes=axes),
                       10.0, f"laplace {x.shape} axes={axes}")
    for fn, args in ((mnd.laplace, ()), (mnd.gaussian_laplace, (1.5,))):
        np.testing.assert_array_equal(fn(x2, *args, axes=()), x2)
        with pytest.raises(ValueError, match="axes"):
            fn(x2, *args, axes=(0, -2))
        with pytest.raises(ValueError, match="mode"):
            fn(x3, *args, axes=(0, 1), mode=["reflect"] * 3)
    with pytest.raises(TypeError, match="order"):
        mnd.gaussian_laplace(x2, 1.0, order=1)


def test_gaussian_limits(rng):
    """A sigma whose square underflows is the identity, as scipy gives it (not NaN, not zeros);
    gaussian_filter leaves an axis of sigma up to 1e-15 as it is whatever its order, as scipy does
    (a derivative there is not inf or zeros); a derivative order past MAX_ORDER (2**70, 10**7) is
    refused at once, naming it."""
    x = rng.uniform(0, 200, (9, 11)).astype(np.float32)
    for image in (x, x.astype(np.uint8), x.astype(np.int16)):
        for sigma in (1e-200, 1e-30, (1e-200, 2.0)):
            want = nd.gaussian_filter(image, sigma)
            got = mnd.gaussian_filter(image, sigma)
            assert got.dtype == want.dtype and np.allclose(got, want, rtol=1e-6, atol=1), (image.dtype, sigma)
    for sigma, order in ((1e-16, 2), (1e-15, 1), ((1e-16, 1.5), (1, 0)), ((0.9, 5e-16), (0, 2))):
        want = nd.gaussian_filter(x.astype(np.float64), sigma, order)
        close_to_scipy(mnd.gaussian_filter(x, sigma, order), want, 40.0, f"sigma={sigma} order={order}")
    np.testing.assert_array_equal(mnd.gaussian_laplace(x, 1e-16), nd.gaussian_laplace(x, 1e-16))  # x + x
    for order in (2**70, 10**7, mnd.MAX_ORDER + 1, -1):
        with pytest.raises(ValueError, match=f"order = {order}"):
            mnd.gaussian_filter(x, 1.0, order=order)
        with pytest.raises(ValueError, match=f"order = {order}"):
            mnd.gaussian_filter1d(x, 1.0, order=order)


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_uniform_and_edge_filters(rng, mode):
    x = rng.standard_normal((31, 26)).astype(np.float32)
    x64 = x.astype(np.float64)
    for size in (1, 2, 3, 4, (3, 5), (1, 6)):
        close_to_scipy(mnd.uniform_filter(x, size, mode=mode), nd.uniform_filter(x64, size, mode=mode), 8.0,
                       f"uniform_filter size={size}")
    for size, origin in ((5, -2), (4, 1), (6, -3)):
        close_to_scipy(mnd.uniform_filter1d(x, size, 0, mode=mode, origin=origin),
                       nd.uniform_filter1d(x64, size, 0, mode=mode, origin=origin), 8.0, "uniform_filter1d")
    for axis in (0, 1, -1):
        close_to_scipy(mnd.sobel(x, axis, mode=mode), nd.sobel(x64, axis, mode=mode), 64.0, f"sobel {axis}")
        close_to_scipy(mnd.prewitt(x, axis, mode=mode), nd.prewitt(x64, axis, mode=mode), 48.0, f"prewitt {axis}")
    close_to_scipy(mnd.laplace(x, mode=mode), nd.laplace(x64, mode=mode), 64.0, "laplace")


def test_filter_refusals(rng):
    x = rng.standard_normal((8, 9)).astype(np.float32)
    with pytest.raises(ValueError, match="order"):
        mnd.gaussian_filter1d(x, 1.0, order=-1)
    with pytest.raises(ValueError, match="sigma"):
        mnd.gaussian_filter(x, (1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="axis"):
        mnd.sobel(x, axis=2)
    with pytest.raises(ValueError, match="size"):
        mnd.uniform_filter1d(x, 0)
    with pytest.raises(ValueError, match="1-D weights"):
        mnd.correlate1d(x, np.ones((2, 2)))
    np.testing.assert_array_equal(mnd.gaussian_filter(x, 0), x)  # sigma 0: the image as it is, a copy


def gaussians_close_to_scipy(x, sigmas, mode):
    """gaussian_filter over axes (0, 1) of x at each sigma, against scipy's in float64."""
    for sigma in sigmas:
        close_to_scipy(mnd.gaussian_filter(x, sigma, mode=mode, axes=(0, 1)),
                       nd.gaussian_filter(x.astype(np.float64), sigma, mode=mode, axes=(0, 1)), 40.0,
                       f"sigma {sigma} {x.shape}")


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_long_one_dimensional_filters(rng, mode):
    """Gaussians of sigma 5 (41 taps: fused's 64-tap windows) and 15 (121 taps: past them, two-pass
    on a GPU), and 127 weights, against scipy, on images smaller and larger than the filter."""
    for shape in [(9, 300), (130, 70, 3)]:
        x = rng.standard_normal(shape).astype(np.float32)
        x64 = x.astype(np.float64)
        gaussians_close_to_scipy(x, (5.0, 15.0), mode)
        w = rng.standard_normal(127)
        close_to_scipy(mnd.correlate1d(x, w, axis=1, mode=mode, origin=-63),
                       nd.correlate1d(x64, w, axis=1, mode=mode, origin=-63), 8.0 * float(np.abs(w).sum()),
                       f"127 taps {shape}")
    u8 = rng.integers(0, 256, size=(70, 90, 3)).astype(np.uint8)
    got, want = mnd.uniform_filter(u8, (61, 61, 1)), nd.uniform_filter(u8, (61, 61, 1))
    np.testing.assert_array_equal(got, want)  # exact sums of 61 bytes, one division: equal


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_filters_past_127_taps(rng, mode):
    """Passes longer than sepfilter's 127 taps run on conv1d's direct rows: Gaussians of sigma 20
    and 40 (161 and 321 taps) along every axis, on images smaller and larger than the filter,
    float32 and uint8 (each pass stored as a byte, as scipy stores it), 300 weights along each
    axis, and a 201-wide uniform filter of bytes (exact sums: equal to scipy)."""
    for shape in [(9, 300), (400, 70, 3)]:
        x = rng.standard_normal(shape).astype(np.float32)
        x64 = x.astype(np.float64)
        gaussians_close_to_scipy(x, (20.0, 40.0), mode)
        w = rng.standard_normal(300)
        for axis in range(len(shape)):
            close_to_scipy(mnd.correlate1d(x, w, axis=axis, mode=mode, cval=0.5, origin=-150),
                           nd.correlate1d(x64, w, axis=axis, mode=mode, cval=0.5, origin=-150),
                           8.0 * float(np.abs(w).sum()), f"300 taps axis {axis} {shape}")
    u8 = rng.integers(0, 256, size=(90, 500)).astype(np.uint8)
    np.testing.assert_array_equal(mnd.uniform_filter(u8, (1, 201), mode=mode),
                                  nd.uniform_filter(u8, (1, 201), mode=mode))
    got, want = mnd.gaussian_filter(u8, 25.0, mode=mode), nd.gaussian_filter(u8, 25.0, mode=mode)
    assert np.max(np.abs(got.astype(int) - want.astype(int))) <= 1, f"uint8 sigma 25 {mode}"


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
def test_filters_past_127_taps_on_a_gpu(rng):
    """The same long passes on a GPU (regtile) against scipy, from NumPy arrays with device=0."""
    x = rng.standard_normal((300, 257)).astype(np.float32)
    x64 = x.astype(np.float64)
    for mode in ("reflect", "wrap", "constant"):
        close_to_scipy(mnd.gaussian_filter(x, 30.0, mode=mode, device=0), nd.gaussian_filter(x64, 30.0, mode=mode),
                       40.0, f"sigma 30 {mode}")
        w = rng.standard_normal(1000)
        close_to_scipy(mnd.correlate1d(x, w, axis=0, mode=mode, device=0), nd.correlate1d(x64, w, axis=0, mode=mode),
                       8.0 * float(np.abs(w).sum()), f"1000 taps {mode}")


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_weights_past_31_a_side(rng, mode):
    """2-D weights from 32 to 255 a side: cpu-omp on the host, conv2d/fft-3pass on a GPU (host weights
    through a plan, and device ones), against scipy in float64: an FFT's normwise error (rel_l2
    <= 2e-6) on the GPU, the per-output bound on the CPU; a stack, origins at their limits, and the
    typed path falling back to float32 with a cast as scipy stores."""
    x = rng.standard_normal((2, 90, 140)).astype(np.float32)
    x64 = x.astype(np.float64)
    for k, o in (((63, 63), 0), ((33, 48), (-16, 23)), ((127, 5), (63, -2)), ((1, 255), 0)):
        w = rng.standard_normal(k).astype(np.float32)
        want = nd.correlate(x64, w.astype(np.float64)[None], mode=mode, cval=0.5,
                            origin=(0,) + ((o, o) if isinstance(o, int) else o))
        got = mnd.correlate(x, w, mode=mode, cval=0.5, origin=o, axes=(1, 2))
        close_to_scipy(got, want, float(np.abs(w).sum()) * 8.0, f"cpu {k} {mode} origin {o}")
        if not has_cuda_device():
            continue
        for weights in ("host", "device"):
            cp = pytest.importorskip("cupy") if weights == "device" else None
            ww = cp.asarray(w) if cp is not None else w
            xx = cp.asarray(x) if cp is not None else x
            got = mnd.correlate(xx, ww, mode=mode, cval=0.5, origin=o, axes=(1, 2),
                                **({} if cp is not None else {"device": 0}))
            got = np.asarray(got.get() if cp is not None else got, np.float64)
            rel = np.linalg.norm(got - want) / np.linalg.norm(want)
            assert rel <= 2e-6, f"gpu {weights} weights {k} {mode} origin {o}: rel_l2 {rel:.3g}"
    u8 = rng.integers(0, 256, size=(80, 120)).astype(np.uint8)
    w = np.full((40, 40), 1.0 / 1600, np.float32)
    got = mnd.correlate(u8, w, mode=mode, **({"device": 0} if has_cuda_device() else {}))
    want = nd.correlate(u8.astype(np.float64), w.astype(np.float64), mode=mode)
    assert got.dtype == np.uint8 and np.max(np.abs(got.astype(float) - np.trunc(want))) <= 1, f"uint8 40x40 {mode}"


def test_stacks(rng):
    """(N, H, W) with axes=(1, 2): each image as scipy filters it (scipy with axes, one call)."""
    x = rng.standard_normal((4, 23, 31)).astype(np.float32)
    x64 = x.astype(np.float64)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    for mode in ("reflect", "wrap", "constant"):
        got = mnd.correlate(x, w, mode=mode, cval=0.5, axes=(1, 2))
        want = nd.correlate(x64, w.astype(np.float64), mode=mode, cval=0.5, axes=(1, 2))
        _, mag = reference.correlate2d_mode(x[0], w, mode, 0.5)
        for b in range(4):
            assert_close(got[b], want[b], reference.correlate2d_mode(x[b], w, mode, 0.5)[1], w.size, f"image {b}")
        close_to_scipy(mnd.gaussian_filter(x, (1.0, 2.0), mode=mode, axes=(1, 2)),
                       nd.gaussian_filter(x64, (1.0, 2.0), mode=mode, axes=(1, 2)), 40.0, "gaussian stack")
        close_to_scipy(mnd.uniform_filter(x, 3, mode=mode, axes=(-2, -1)),
                       nd.uniform_filter(x64, 3, mode=mode, axes=(-2, -1)), 8.0, "uniform stack")
        close_to_scipy(mnd.correlate1d(x, [1.0, 2.0, -1.0], axis=1, mode=mode),
                       nd.correlate1d(x64, [1.0, 2.0, -1.0], axis=1, mode=mode), 8.0, "correlate1d stack")
    with pytest.raises(ValueError, match="3-D weights"):
        mnd.correlate(x, w)  # a 3-D input filtered over every axis takes 3-D weights
    close_to_scipy(mnd.correlate1d(x, [1.0, 1.0], axis=0, mode="mirror"),
                   nd.correlate1d(x64, [1.0, 1.0], axis=0, mode="mirror"), 8.0, "correlate1d along the stack")


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_any_rank_separable_filters(rng, mode):
    """The 1-D filters along every axis of 1-D, 3-D (an RGB image, a volume) and 4-D arrays, and the
    separable filters over all axes or `axes`, as scipy."""
    for shape in [(37,), (23, 31, 3), (9, 11, 13), (3, 4, 5, 6)]:
        x = rng.standard_normal(shape).astype(np.float32)
        x64 = x.astype(np.float64)
        for axis in range(len(shape)):
            close_to_scipy(mnd.correlate1d(x, [0.5, -1.0, 2.0, 0.25], axis, mode=mode, origin=-1),
                           nd.correlate1d(x64, [0.5, -1.0, 2.0, 0.25], axis, mode=mode, origin=-1), 8.0,
                           f"correlate1d {shape} axis {axis}")
        sigma = [1.5] * len(shape)
        close_to_scipy(mnd.gaussian_filter(x, sigma, mode=mode), nd.gaussian_filter(x64, sigma, mode=mode), 40.0,
                       f"gaussian_filter {shape}")
        close_to_scipy(mnd.uniform_filter(x, 3, mode=mode), nd.uniform_filter(x64, 3, mode=mode), 8.0,
                       f"uniform_filter {shape}")
        close_to_scipy(mnd.sobel(x, 0, mode=mode), nd.sobel(x64, 0, mode=mode), 64.0, f"sobel {shape}")
        close_to_scipy(mnd.laplace(x, mode=mode), nd.laplace(x64, mode=mode), 64.0, f"laplace {shape}")
    rgb = rng.standard_normal((20, 30, 3)).astype(np.float32)
    want = nd.gaussian_filter(rgb.astype(np.float64), 2.0, mode=mode, axes=(0, 1))
    close_to_scipy(mnd.gaussian_filter(rgb, 2.0, mode=mode, axes=(0, 1)), want, 40.0, "RGB, axes (0, 1)")
    close_to_scipy(mnd.gaussian_filter(rgb, (2.0, 2.0, 0), mode=mode), want, 40.0, "RGB, sigma 0 on channels")


# ---- the cases of scipy.ndimage's own filter tests (its test_correlate* inputs), both libraries
# called on each; the 1-D cases as 1 x n images (memhier.ndimage filters 2-D images)

SCIPY_CASES_1D = [([1, 2], [2], 0), ([1, 2, 3], [1], 0), ([1], [1, 1], 0), ([1, 2], [1, 1], 0),
                  ([1, 2, 3], [1, 1], 0), ([1, 2, 3], [1, 2, 3], 0), ([1, 2, 3], [1, 2, 1], 0),
                  ([1, 2, 3], [1, 2, -1], 0), ([1, 2, 3], [1, 1], -1)]
SCIPY_CASES_2D = [([[1, 2, 3], [4, 5, 6]], [[1, 1], [1, 1]], 0), ([[1, 2, 3], [4, 5, 6]], [[1, 0], [0, 1]], 0),
                  ([[1, 2, 3], [4, 5, 6]], [[0.5, 0], [0, 0.5]], 0), ([[1, 2, 3], [4, 5, 6]], [[1, 0], [0, 1]], -1),
                  ([[1, 2, 3], [4, 5, 6]], [[1, 0], [0, 1]], (-1, 0))]


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
@pytest.mark.parametrize("case", range(len(SCIPY_CASES_1D) + len(SCIPY_CASES_2D)))
def test_scipy_filter_cases(case, mode):
    if case < len(SCIPY_CASES_1D):
        a, w, origin = SCIPY_CASES_1D[case]
        a64, w64 = np.asarray(a, np.float64), np.asarray(w, np.float64)
        for ours, theirs in ((mnd.correlate1d, nd.correlate1d), (mnd.convolve1d, nd.convolve1d)):
            want = theirs(a64, w64, mode=mode, origin=origin)
            got = ours(a64[None].astype(np.float32), w64, mode=mode, origin=origin)[0]
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{theirs.__name__} {a} {w}")
        for ours, theirs in ((mnd.correlate, nd.correlate), (mnd.convolve, nd.convolve)):
            want = theirs(a64, w64, mode=mode, origin=origin)
            got = ours(a64[None].astype(np.float32), w64[None], mode=mode, origin=(0, origin))[0]
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{theirs.__name__} {a} {w}")
    else:
        a, w, origin = SCIPY_CASES_2D[case - len(SCIPY_CASES_1D)]
        a64, w64 = np.asarray(a, np.float64), np.asarray(w, np.float64)
        for ours, theirs in ((mnd.correlate, nd.correlate), (mnd.convolve, nd.convolve)):
            want = theirs(a64, w64, mode=mode, origin=origin)
            got = ours(a64.astype(np.float32), w64, mode=mode, origin=origin)
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{theirs.__name__} {a} {w}")
    for axis in (0, 1):  # scipy's correlate1d/convolve1d along axis 0 of a 2 x 3 image, every mode
        img = np.asarray([[1, 2, 3], [2, 4, 6]], np.float64)
        for ours, theirs in ((mnd.correlate1d, nd.correlate1d), (mnd.convolve1d, nd.convolve1d)):
            np.testing.assert_allclose(ours(img.astype(np.float32), [1, 2, 1], axis, mode=mode),
                                       theirs(img, [1.0, 2.0, 1.0], axis, mode=mode), rtol=1e-6, atol=1e-6)


# ---- weights of any rank over any axes ----------------------------------------------------------

ND_CASES = [  # (input shape, weights shape, axes)
    ((37,), (5,), None),
    ((23, 31, 3), (5, 3), (0, 1)),      # an RGB image: its two image axes moved last, filtered, moved back
    ((23, 31, 3), (5, 3, 1), None),     # the same through a side of 1, as scipy users write it
    ((23, 31, 3), (3, 4), (1, 0)),      # axes out of order: scipy takes the weights' axes in increasing order
    ((23, 31), (3, 4), (1, 0)),
    ((9, 11, 13), (3, 5, 4), None),     # a volume: a 2-D correlation per slice of the slow axis
    ((3, 4, 5, 6), (2, 3, 1, 3), None),
    ((6, 7, 8), (1, 1, 1), None),       # a single weight: a scaling
]


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
@pytest.mark.parametrize("case", ND_CASES, ids=[f"{s}-{w}-{a}" for s, w, a in ND_CASES])
def test_weights_of_any_rank(rng, mode, case):
    shape, wshape, axes = case
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    scale = float(np.abs(w64).sum()) * 5.0
    lo = tuple(-(s // 2) for s in wshape)
    hi = tuple((s - 1) // 2 for s in wshape)
    for origin in (0, lo, hi):
        for ours, theirs in ((mnd.correlate, nd.correlate), (mnd.convolve, nd.convolve)):
            try:
                want = theirs(x64, w64, mode=mode, cval=1.5, origin=origin, axes=axes)
            except ValueError:  # scipy matches origins to `axes` in its order: out of range there
                with pytest.raises(ValueError, match="origin"):
                    ours(x, w, mode=mode, cval=1.5, origin=origin, axes=axes)
                continue
            got = ours(x, w, mode=mode, cval=1.5, origin=origin, axes=axes)
            close_to_scipy(got, want, scale, f"{theirs.__name__} {shape} {wshape} axes {axes} origin {origin}")
    nan = mnd.correlate(x, w, mode="constant", cval=np.nan, axes=axes)
    want = nd.correlate(x64, w64, mode="constant", cval=np.nan, axes=axes)
    assert np.array_equal(np.isnan(nan), np.isnan(want)), "a NaN cval reaches exactly the outputs it touches"


# ---- dtypes: read, computed in float32, stored with scipy's cast ---------------------------------

INT_DTYPES = [np.uint8, np.int8, np.uint16, np.int16]


def integer_image(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def c_cast(t, dtype):
    """scipy's store of a whole float64 into an integer dtype (x86-64): through a 32-bit integer."""
    t = np.where(np.abs(t) < 2.0 ** 31, t, 0.0)
    return t.astype(np.int64).astype(dtype)


def stored_as_scipy(got, want, exact, mag, taps, what):
    """got is scipy's cast of a value within float32 rounding of the exact one: exact +- taps *
    2^-24 * the sum of |terms| (mag), truncated, wrapped. scipy's own result must be in that set
    too (it rounds less), which checks the bound."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    bound = taps * 2.0 ** -24 * mag
    lo, hi = np.trunc(exact - bound), np.trunc(exact + bound)
    ok_got, ok_want = np.zeros(got.shape, bool), np.zeros(got.shape, bool)
    for k in range(int((hi - lo).max()) + 1):
        allowed = c_cast(np.minimum(lo + k, hi), got.dtype)
        ok_got |= got == allowed
        ok_want |= want == allowed
    assert ok_want.all(), f"{what}: the test's bound excludes scipy's own result"
    bad = ~ok_got
    assert not bad.any(), f"{what}: {bad.sum()} outputs differ from scipy, e.g. {got[bad][:5]} for {want[bad][:5]}"


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("mode", ["reflect", "wrap", "constant"])
def test_integer_images_one_pass(rng, dtype, mode):
    """correlate, correlate1d and uniform_filter1d on integer images: scipy's dtype, its truncation
    toward zero and its wrapping past the type's range, of a value within float32 rounding."""
    x = integer_image(rng, (29, 41), dtype)
    x64, a64 = x.astype(np.float64), np.abs(x.astype(np.float64))
    w = rng.standard_normal((3, 5))
    exact, mag = nd.correlate(x64, w, mode=mode, cval=3.0), nd.correlate(a64, np.abs(w), mode=mode, cval=3.0)
    stored_as_scipy(mnd.correlate(x, w, mode=mode, cval=3.0), nd.correlate(x, w, mode=mode, cval=3.0), exact, mag,
                    w.size, f"correlate {np.dtype(dtype)}")
    for axis in (0, 1):
        w1 = rng.standard_normal(4)
        exact, mag = nd.correlate1d(x64, w1, axis, mode=mode), nd.correlate1d(a64, np.abs(w1), axis, mode=mode)
        stored_as_scipy(mnd.correlate1d(x, w1, axis, mode=mode), nd.correlate1d(x, w1, axis, mode=mode), exact, mag,
                        w1.size, f"correlate1d {np.dtype(dtype)} axis {axis}")
        for size in (2, 3, 7):  # a mean: exact whole numbers stay whole, as scipy's running sum keeps them
            np.testing.assert_array_equal(mnd.uniform_filter1d(x, size, axis, mode=mode),
                                          nd.uniform_filter1d(x, size, axis, mode=mode))
    flat = np.full((9, 10), 100, dtype)
    np.testing.assert_array_equal(mnd.uniform_filter(flat, 5), flat)
    np.testing.assert_array_equal(mnd.correlate(x, np.array([[-1.0, 0.0, 1.0]]), mode=mode),
                                  nd.correlate(x, np.array([[-1.0, 0.0, 1.0]]), mode=mode))  # wraps as scipy's


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16", "float16"])
def test_typed_correlate_equals_the_float32_path_cast(rng, dtype):
    """correlate over the last two axes of an image dtype reads and writes the arrays' own dtype
    in the loaders (mh_conv2d_typed: cpu-omp; walk at 3 x 3 and 5 x 5 on CuPy arrays, regtile at
    7 x 7) and stores what the float32 path computes on the same row, cast as scipy casts, bit for
    bit. (auto's float32 pick at 7 x 7 is fft-tile or walk, which typed images do not take: the
    float32 call names regtile there.)"""
    dt = np.dtype(dtype)
    kinds = [("numpy", np.asarray, np.asarray)]
    if has_cuda_device():
        cupy = pytest.importorskip("cupy")
        kinds.append(("cupy", cupy.asarray, cupy.asnumpy))
    for kind, to, back in kinds:
        for shape in [(37, 517), (3, 64, 203), (1, 2)]:
            x = integer_image(rng, shape, dt) if dt.kind in "iu" else (rng.standard_normal(shape) * 50).astype(dt)
            xk = to(x)
            for k in (3, 5, 7):
                w = rng.standard_normal((k, k)).astype(np.float32)
                for mode, origin in (("reflect", 0), ("constant", (k // 2, -(k // 2)))):
                    got = back(mnd.correlate(xk, w, mode=mode, cval=2.5, origin=origin, axes=(-2, -1)))
                    same_row = "regtile" if kind == "cupy" and k == 7 else "auto"
                    y = back(mnd.correlate(to(x.astype(np.float32)), w, mode=mode, cval=2.5, origin=origin,
                                           axes=(-2, -1), variant=same_row)).astype(np.float64)
                    want = c_cast(np.trunc(y), dt) if dt.kind in "iu" else y.astype(dt)
                    assert got.dtype == dt and np.array_equal(got, want), f"{kind} {dtype} {shape} {k}x{k} {mode}"
            out = to(np.empty(shape, np.float32))  # an image dtype into a float32 output
            mnd.correlate(xk, np.ones((3, 3), np.float32), output=out, axes=(-2, -1))
            np.testing.assert_array_equal(back(out), back(mnd.correlate(to(x.astype(np.float32)),
                                                                        np.ones((3, 3), np.float32), axes=(-2, -1))))


def test_wrapping_and_truncation_as_scipy(rng):
    """The C cast scipy stores with: truncation toward zero, modulo 2^bits, NaN and values past
    +-2^31 as 0; each shown on values chosen for it."""
    u8 = np.array([[0, 100, 255, 255, 200]], np.uint8)
    for w in ([[0.5, 0.5]], [[0.6, 0.6]], [[-1.0, 0.0, 1.0]], [[-1e10, 0.0, 0.0]], [[1e10, 0.0, 0.0]]):
        np.testing.assert_array_equal(mnd.correlate(u8, np.array(w)), nd.correlate(u8, np.array(w)), err_msg=str(w))
    i16 = np.array([[0, 1, 3, 0, 0, 30000, 30000, 0]], np.int16)
    for w in ([[-0.5, 0.0, -0.5]], [[-0.7, 0.0, 0.0]], [[1.0, 1.0, 1.0]]):
        np.testing.assert_array_equal(mnd.correlate(i16, np.array(w)), nd.correlate(i16, np.array(w)), err_msg=str(w))
    got = mnd.correlate(np.ones((3, 3), np.uint8), np.ones((1, 1)), mode="constant", cval=np.nan)
    assert got.dtype == np.uint8


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_images_separable(rng, dtype):
    """The separable filters store every pass in the output's dtype, as scipy does; their results
    equal scipy's but for rare outputs next to a whole number in some pass (then off by a little).
    How rare grows with the passes stored: gaussian_laplace on a 3-D image stores nine (three
    terms of three passes), and on uint16 images up to 2.5% of its outputs differed over 150
    seeds (every other case at most 0.9%)."""
    x = integer_image(rng, (31, 27, 3), dtype)
    cases = [  # (the call, how far an output may be off, the share of outputs that may differ)
        (lambda f, a: f.gaussian_filter(a, 1.5, axes=(0, 1)), 2, 0.02),
        (lambda f, a: f.gaussian_filter(a, (2.0, 1.0, 0.0)), 2, 0.02),
        (lambda f, a: f.uniform_filter(a, (3, 5, 1)), 0, 0.02),
        (lambda f, a: f.sobel(a, 0), 8, 0.02),
        (lambda f, a: f.prewitt(a, 1), 6, 0.02),
        (lambda f, a: f.laplace(a), 0, 0.02),
        (lambda f, a: f.gaussian_laplace(a, 1.0), 6, 0.05),
    ]
    bits = 8 * np.dtype(dtype).itemsize
    for i, (run, slack, share) in enumerate(cases):
        got, want = run(mnd, x), run(nd, x)
        assert got.dtype == want.dtype == np.dtype(dtype), f"case {i}"
        d = np.abs(got.astype(np.int64) - want.astype(np.int64))
        d = np.minimum(d, 2 ** bits - d)  # a flip at the type's edge wraps
        assert d.max() <= slack, f"case {i}: off by {d.max()}"
        assert np.mean(d != 0) <= share, f"case {i}: {np.mean(d != 0):.3%} of outputs differ"


def test_float16_and_mixed_outputs(rng):
    """float16 (which scipy refuses) computed in float32 and rounded once; an integer input into a
    float32 output, and float32 into integer outputs."""
    x = rng.standard_normal((33, 47)).astype(np.float16)
    w = rng.standard_normal((5, 3))
    want = nd.correlate(x.astype(np.float64), w)
    got = mnd.correlate(x, w)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
    assert mnd.gaussian_filter(x, 1.0).dtype == np.float16
    u8 = integer_image(rng, (20, 30), np.uint8)
    got = mnd.gaussian_filter(u8, 2.0, output=np.float32)
    close_to_scipy(got, nd.gaussian_filter(u8, 2.0, output=np.float64), 255 * 3.0, "uint8 into float32")
    out = np.empty((20, 30), np.int16)
    assert mnd.correlate(u8, -np.ones((3, 3)), output=out) is out
    np.testing.assert_array_equal(out, nd.correlate(u8, -np.ones((3, 3)), output=np.int16))


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16", "float16", "float32"])
def test_gpu_separable_filters_equal_the_cpu_bit_for_bit(rng, dtype):
    """The separable filters on CuPy arrays and PyTorch tensors (sepfilter's fused row) store the
    same bits as on NumPy arrays (its CPU row): both sum the taps in order with FMA and cast alike."""
    cupy = pytest.importorskip("cupy")
    dt = np.dtype(dtype)
    for shape in [(37, 517), (64, 200, 3), (5, 33, 47), (300, 101, 4), (1, 1), (2049,)]:
        if dt.kind in "iu":
            info = np.iinfo(dt)
            x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dt)
        else:
            x = (rng.standard_normal(shape) * 50).astype(dt)
        xd = cupy.asarray(x)
        image_axes = (0, 1) if len(shape) > 1 else (0,)
        calls = [
            lambda f, a: f.gaussian_filter(a, 2.0, axes=image_axes, mode="reflect"),
            lambda f, a: f.gaussian_filter(a, 1.0, mode="constant", cval=np.nan),
            lambda f, a: f.uniform_filter(a, 5, mode="nearest"),
            lambda f, a: f.sobel(a, axis=0, mode="mirror"),
            lambda f, a: f.prewitt(a, axis=-1, mode="wrap"),
            lambda f, a: f.laplace(a),
            lambda f, a: f.laplace(a, mode=["constant", "wrap", "nearest"][:a.ndim], cval=3.0),
            lambda f, a: f.correlate1d(a, [0.25, -1.0, 2.0, 0.5], axis=0, origin=-2, mode="reflect"),
            lambda f, a: f.gaussian_filter(a, 1.5, output=np.float32),
            lambda f, a: f.gaussian_filter(a, 5.0, axes=image_axes),  # 41 taps: fused's 64-tap bucket
            lambda f, a: f.gaussian_filter1d(a, 15.0, axis=0, mode="mirror"),  # 121 taps: two-pass
        ]
        for i, run in enumerate(calls):
            want = run(mnd, x)
            got = cupy.asnumpy(run(mnd, xd))
            assert got.dtype == want.dtype, f"{shape} call {i}"
            assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), f"{dtype} {shape} call {i}"
    torch = pytest.importorskip("torch")
    x = rng.integers(0, 256, size=(40, 60, 3)).astype(np.uint8)
    t = torch.as_tensor(x, device="cuda")
    np.testing.assert_array_equal(mnd.gaussian_filter(t, 2.0, axes=(0, 1)).cpu().numpy(),
                                  mnd.gaussian_filter(x, 2.0, axes=(0, 1)))


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
def test_host_weights_do_not_wait_for_the_stream(rng):
    """With a CuPy image on a busy stream, host (NumPy) weights, new or seen before, and the
    separable filters' taps reach the GPU without the call waiting for the stream; the results
    are right once the stream catches up, also on a second stream."""
    cupy = pytest.importorskip("cupy")
    x = cupy.asarray(rng.standard_normal((64, 80)).astype(np.float32))
    # once on an idle stream: the first call makes the context, which loads the library's kernels
    # and may wait for the device while it does (include/memhier.h "Loading")
    mnd.correlate(x, np.ones((2, 2), np.float32), mode="nearest")
    mnd.gaussian_filter(x, 2.0)
    busy = cupy.ones((8192, 8192), cupy.float32)
    stream = cupy.cuda.get_current_stream()
    first, second = (rng.standard_normal((5, 3)).astype(np.float32) for _ in range(2))
    for call, w in enumerate([first, second, second]):  # new weights twice, then ones already on the GPU
        stream.synchronize()
        for _ in range(8):  # tens of ms of queued work
            busy = busy @ busy * 1e-4
        got = mnd.correlate(x, w, mode="nearest")
        gauss = mnd.gaussian_filter(x, 2.0)
        assert not stream.done, f"call {call}: the call waited for the stream"
        stream.synchronize()
        np.testing.assert_allclose(cupy.asnumpy(got), nd.correlate(cupy.asnumpy(x).astype(np.float64), w.astype(np.float64),
                                                                    mode="nearest"), rtol=1e-5, atol=1e-5)
        close_to_scipy(cupy.asnumpy(gauss), nd.gaussian_filter(cupy.asnumpy(x).astype(np.float64), 2.0), 40.0, "gauss")
    other = cupy.cuda.Stream(non_blocking=True)
    with other:
        got = mnd.correlate(x, w, mode="nearest")  # the cached upload, from another stream
        other.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(got), nd.correlate(cupy.asnumpy(x).astype(np.float64), w.astype(np.float64),
                                                                mode="nearest"), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
def test_kept_weights_are_ready_for_every_stream(rng):
    """NumPy weights first used on a busy stream are kept on the device for later calls: a call on
    another stream straight after (its kept plan, no upload of its own) reads them complete."""
    cupy = pytest.importorskip("cupy")
    x = cupy.asarray(rng.standard_normal((64, 80)).astype(np.float32))
    mnd.correlate(x, np.ones((2, 2), np.float32), mode="nearest")  # the context made on an idle stream
    busy = cupy.ones((8192, 8192), cupy.float32)
    other = cupy.cuda.Stream(non_blocking=True)
    for step in range(3):
        w = rng.standard_normal((5, 3)).astype(np.float32)
        cupy.cuda.get_current_stream().synchronize()
        for _ in range(8):  # tens of ms of queued work on the caller's stream
            busy = busy @ busy * 1e-4
        mnd.correlate(x, w, mode="nearest")  # plans and uploads w while the stream is busy
        with other:
            got = mnd.correlate(x, w, mode="nearest")  # the kept plan, on a stream that is free
            other.synchronize()
        want = nd.correlate(cupy.asnumpy(x).astype(np.float64), w.astype(np.float64), mode="nearest")
        np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=1e-5, atol=1e-5, err_msg=f"step {step}")
    cupy.cuda.get_current_stream().synchronize()


def low_rank_weights():
    """A difference of Gaussians, 21 x 21 (sigma 2 and 3.2): two terms for lowrank; float64."""
    r = np.arange(21) - 10.0
    a, b = np.exp(-r ** 2 / 8.0), np.exp(-r ** 2 / (2 * 3.2 ** 2))
    a, b = a / a.sum(), b / b.sum()
    return np.outer(a, a) - np.outer(b, b)


@pytest.mark.parametrize("where", ["numpy", "device 0", "cupy"])
def test_host_weights_run_through_plans(rng, where):
    """Weights converted on the host (float64 here, or NumPy weights for a GPU image) run through
    a library plan (mh_conv2d_planned_mode), kept by content: a difference of Gaussians (on a GPU
    auto takes lowrank for it at this size) and a random filter, convolve's flipped weights a plan of
    their own; every mode, origins, a stack, against the float64 reference; lowrank and fft-tile by
    name on a GPU too."""
    if where != "numpy" and not has_cuda_device():
        pytest.skip("no CUDA device")
    to, back, kw = (lambda a: a), (lambda a: a), ({"device": 0} if where == "device 0" else {})
    if where == "cupy":
        cupy = pytest.importorskip("cupy")
        to, back = cupy.asarray, cupy.asnumpy
    x = rng.standard_normal((2, 40, 57)).astype(np.float32)
    mnd._PLANS.clear()
    dog, rand = low_rank_weights(), rng.standard_normal((7, 9))
    variants = ["auto"] + (["lowrank", "fft-tile"] if where != "numpy" else [])
    for w in (dog, rand):
        w32 = w.astype(np.float32)
        for mode in ["reflect", "mirror", "nearest", "wrap", "constant"]:
            for variant in variants:
                if variant == "lowrank" and w is rand:
                    with pytest.raises(memhier.Unsupported, match="not of rank at most 4 within FP32 accuracy"):
                        mnd.correlate(to(x), w, mode=mode, axes=(1, 2), variant=variant, **kw)
                    continue
                got = back(mnd.correlate(to(x), w, mode=mode, cval=0.5, origin=(1, -1), axes=(1, 2), variant=variant,
                                         **kw))
                for i in range(x.shape[0]):
                    ref, mag = reference.correlate2d_mode(x[i], w32, mode, 0.5, (1, -1))
                    assert_close(got[i], ref, mag, w.size, f"{where} {variant} {w.shape} {mode} image {i}")
        got = back(mnd.convolve(to(x[0]), w, mode="reflect", **kw))
        want = nd.convolve(x[0].astype(np.float64), w32.astype(np.float64), mode="reflect")
        _, mag = reference.correlate2d_mode(x[0], w32[::-1, ::-1], "reflect", 0.0, (-(1 - w.shape[0] % 2),
                                                                                    -(1 - w.shape[1] % 2)))
        assert_close(got, want, mag, w.size, f"{where} convolve {w.shape}")
    assert len(mnd._PLANS) == 3, "one plan a content: the DoG (symmetric: its flip is itself), rand, rand flipped"


# ---- the cases of scipy's own filter tests (test_filters.py), both libraries called on each ----

SCIPY_DTYPES = ["int8", "uint8", "int16", "uint16", "float32"]


def test_scipy_gaussian_cases(rng):
    small = np.asarray([[1, 2, 3], [2, 4, 6]], np.float32)
    np.testing.assert_array_equal(mnd.gaussian_filter(small, 0), small)  # gauss01
    assert mnd.gaussian_filter(small, 1.0).dtype == np.float32  # gauss02
    ramp = np.arange(100 * 100, dtype=np.float32).reshape(100, 100)
    out = mnd.gaussian_filter(ramp, [1.0, 1.0])  # gauss03: reflect keeps the sum
    assert abs(float(out.sum(dtype=np.float64)) - float(ramp.sum(dtype=np.float64))) < 0.5 * 1e-6 * ramp.size * 1e4
    close_to_scipy(out, nd.gaussian_filter(ramp.astype(np.float64), [1.0, 1.0]), 1e4 * 8, "gauss03")
    close_to_scipy(mnd.gaussian_filter(ramp, [1.0, 1.0], order=1, output=np.float32),  # gauss05, float32 out
                   nd.gaussian_filter(ramp.astype(np.float64), [1.0, 1.0], order=1), 1e4 * 8, "gauss05")
    np.testing.assert_array_equal(mnd.gaussian_filter(ramp, [1.0, 1.0]), mnd.gaussian_filter(ramp, 1.0))  # gauss06
    overlap = ramp.copy()
    mnd.gaussian_filter(overlap, 1.0, output=overlap)  # gauss_memory_overlap
    np.testing.assert_array_equal(overlap, out)
    zero = np.zeros((1,), np.float32)  # test_orders_gauss: order 3 runs, a negative order is refused
    np.testing.assert_array_equal(mnd.gaussian_filter(zero, 1, order=3), zero)
    np.testing.assert_array_equal(mnd.gaussian_filter1d(zero, 1, axis=-1, order=3), zero)
    with pytest.raises(ValueError):
        mnd.gaussian_filter(zero, 1, -1)
    x = rng.standard_normal((31, 40)).astype(np.float32)
    for order in (3, 4, (5, 1)):
        close_to_scipy(mnd.gaussian_filter(x, 2.0, order), nd.gaussian_filter(x.astype(np.float64), 2.0, order),
                       400.0, f"order {order}")


SECOND = [1.0, -2.0, 1.0]


def test_laplace_terms_summed_in_one_call():
    """laplace on an image runs both terms in one sepfilter call (summed passes): each term cast
    to the output's dtype and their sum wrapping as scipy's do, modes per axis, and non-finite
    pixels reaching only the outputs whose terms read them (no zero corner taps)."""
    x = np.zeros((7, 9), np.float32)
    x[3, 4], x[1, 1], x[5, 7] = np.inf, np.nan, 1e30
    x[6, 0] = -3.5
    for mode in ("reflect", "constant", ["constant", "wrap"], ["nearest", "mirror"]):
        got, want = mnd.laplace(x, mode=mode, cval=2.0), nd.laplace(x, mode=mode, cval=2.0)
        np.testing.assert_array_equal(got, want, err_msg=f"mode {mode}")
    b = np.array([[0, 255, 0, 255], [255, 0, 255, 0], [7, 200, 13, 250]], np.uint8)
    for out in (None, np.int16, np.float32):
        np.testing.assert_array_equal(mnd.laplace(b, out), nd.laplace(b, out), err_msg=f"uint8 -> {out}")
    h = np.where(np.isfinite(x) & (np.abs(x) < 1e4), x, 6e4).astype(np.float16)  # terms past float16's range
    y = np.empty(h.shape, np.float16)
    mnd.laplace(h, y, mode="wrap")
    terms = mnd.correlate1d(h, SECOND, 0, mode="wrap") + mnd.correlate1d(h, SECOND, 1, mode="wrap")
    np.testing.assert_array_equal(y, terms)


@pytest.mark.parametrize("dtype", SCIPY_DTYPES)
def test_scipy_edge_filter_cases(dtype):
    """prewitt01-04, sobel01-04, laplace01-02, gaussian_laplace01-02: the filter against its own
    composition of 1-D passes, and both against scipy, in each dtype scipy's tests use that memhier takes."""
    a = np.asarray([[3, 2, 5, 1, 4], [5, 8, 3, 7, 1], [5, 6, 9, 3, 5]], dtype=dtype)
    for f, smooth in (("prewitt", [1.0, 1.0, 1.0]), ("sobel", [1.0, 2.0, 1.0])):
        for axis in (0, 1, -1):
            t = mnd.correlate1d(a, [-1.0, 0.0, 1.0], axis)
            t = mnd.correlate1d(t, smooth, 1 - axis % 2)
            got = getattr(mnd, f)(a, axis)
            np.testing.assert_array_equal(got, t, err_msg=f"{f} axis {axis}")
            np.testing.assert_array_equal(got, getattr(nd, f)(a, axis), err_msg=f"{f} axis {axis} against scipy")
        out = np.zeros(a.shape, dtype)
        getattr(mnd, f)(a, 0, out)  # the output argument
        np.testing.assert_array_equal(out, getattr(nd, f)(a, 0))
    np.testing.assert_array_equal(mnd.laplace(a), nd.laplace(a))
    tmp = mnd.correlate1d(a, [1.0, -2.0, 1.0], 0) + mnd.correlate1d(a, [1.0, -2.0, 1.0], 1)
    np.testing.assert_array_equal(mnd.laplace(a), tmp.astype(dtype))
    if dtype == "float32":
        close_to_scipy(mnd.gaussian_laplace(a, 1.0), nd.gaussian_laplace(a.astype(np.float64), 1.0), 100.0, "LoG")
        close_to_scipy(mnd.gaussian_laplace(a, [1.0, 2.0]), nd.gaussian_laplace(a.astype(np.float64), [1.0, 2.0]),
                       100.0, "LoG per axis")


@pytest.mark.parametrize("dtype_in", SCIPY_DTYPES)
@pytest.mark.parametrize("dtype_out", SCIPY_DTYPES)
def test_scipy_uniform_cases(dtype_in, dtype_out):
    """uniform01-06: origins, sizes 0 and 1 (the input itself), an empty array, and every dtype
    into every other."""
    np.testing.assert_array_equal(mnd.uniform_filter1d(np.asarray([2, 4, 6], np.int16), 2, origin=-1), [3, 5, 6])
    one = np.asarray([1, 2, 3], np.int16)
    np.testing.assert_array_equal(mnd.uniform_filter(one, [0]), one)
    np.testing.assert_array_equal(mnd.uniform_filter(one, [1]), one)
    np.testing.assert_array_equal(mnd.uniform_filter(np.asarray([2, 4, 6], np.int16), [2]), [2, 3, 5])
    assert mnd.uniform_filter(np.asarray([], np.float32), [1]).shape == (0,)
    a = np.asarray([[4, 8, 12], [16, 20, 24]], dtype=dtype_in)
    out = mnd.uniform_filter(a, [2, 2], output=dtype_out)
    assert out.dtype == np.dtype(dtype_out)
    np.testing.assert_array_equal(out, nd.uniform_filter(a, [2, 2], output=dtype_out))
    np.testing.assert_array_equal(out, np.asarray([[4, 6, 10], [10, 12, 16]], dtype=dtype_out))


def test_scipy_mode_and_origin_cases():
    """multiple_modes, multiple_modes_sequentially, bad_convolve_and_correlate_origins."""
    arr = np.asarray([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]], np.float32)
    for f, args, kwargs in ((mnd.gaussian_filter, [1], {}), (mnd.prewitt, [], {}), (mnd.sobel, [], {}),
                            (mnd.laplace, [], {}), (mnd.gaussian_laplace, [1], {}), (mnd.uniform_filter, [5], {})):
        np.testing.assert_array_equal(f(arr, *args, mode="reflect", **kwargs),
                                      f(arr, *args, mode=["reflect", "reflect"], **kwargs), err_msg=f.__name__)
    modes = ["reflect", "wrap"]
    expected = mnd.gaussian_filter1d(mnd.gaussian_filter1d(arr, 1, axis=0, mode=modes[0]), 1, axis=1, mode=modes[1])
    np.testing.assert_array_equal(expected, mnd.gaussian_filter(arr, 1, mode=modes))
    expected = mnd.uniform_filter1d(mnd.uniform_filter1d(arr, 5, axis=0, mode=modes[0]), 5, axis=1, mode=modes[1])
    np.testing.assert_array_equal(expected, mnd.uniform_filter(arr, 5, mode=modes))
    close_to_scipy(mnd.gaussian_filter(arr, 1, mode=modes), nd.gaussian_filter(arr.astype(np.float64), 1, mode=modes),
                   8.0, "modes per axis")
    with pytest.raises(ValueError):
        mnd.correlate1d(np.arange(6, dtype=np.float32), [1, 1, 2, 0], origin=2)
    with pytest.raises(ValueError):
        mnd.correlate(np.arange(6, dtype=np.float32), [0, 1, 2], origin=[2])
    with pytest.raises(ValueError):
        mnd.correlate(np.ones((3, 5), np.float32), np.ones((2, 2)), origin=[0, 1])
    with pytest.raises(ValueError):
        mnd.convolve1d(np.arange(10, dtype=np.float32), np.ones(3), origin=-2)
    with pytest.raises(ValueError):
        mnd.convolve(np.arange(10, dtype=np.float32), np.ones(3), origin=[-2])
    with pytest.raises(ValueError):
        mnd.convolve(np.ones((3, 5), np.float32), np.ones((2, 2)), origin=[0, -2])


# ---- arrays of other libraries: DLPack and __cuda_array_interface__ producers --------------------

class DLPackOnly:
    """An array known only through DLPack, as JAX's or a PyTorch CPU tensor are."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class CudaArrayInterfaceOnly:
    """A device array known only through __cuda_array_interface__, as Numba's are."""

    def __init__(self, a):
        self._a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__


def test_dlpack_host_arrays(rng):
    x = rng.standard_normal((23, 31)).astype(np.float32)
    w = rng.standard_normal((3, 5)).astype(np.float32)
    got = mnd.correlate(DLPackOnly(x), w, mode="wrap")
    np.testing.assert_array_equal(got, mnd.correlate(x, w, mode="wrap"))
    np.testing.assert_array_equal(mnd.gaussian_filter(DLPackOnly(x), 1.5), mnd.gaussian_filter(x, 1.5))
    out = np.zeros_like(x)
    assert mnd.sobel(DLPackOnly(x), 0, DLPackOnly(out)) is not None
    np.testing.assert_array_equal(out, mnd.sobel(x, 0))  # written in place through the view


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
def test_cuda_array_interface_and_dlpack_device_arrays(rng):
    cupy = pytest.importorskip("cupy")
    x = cupy.asarray(rng.standard_normal((40, 50, 3)).astype(np.float32))
    want = cupy.asnumpy(mnd.gaussian_filter(x, 2.0, axes=(0, 1)))
    for wrapped in (CudaArrayInterfaceOnly(x), DLPackOnly(x)):
        got = mnd.gaussian_filter(wrapped, 2.0, axes=(0, 1))
        np.testing.assert_array_equal(cupy.asnumpy(got), want)
    out = cupy.zeros_like(x)
    mnd.uniform_filter(CudaArrayInterfaceOnly(x), 3, CudaArrayInterfaceOnly(out))
    np.testing.assert_array_equal(cupy.asnumpy(out), cupy.asnumpy(mnd.uniform_filter(x, 3)))


# ---- complex data: real filters of the parts (memhier/_complex.py) ----

def _complex(rng, shape, dtype=np.complex64):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap"])
def test_complex_input_and_weights(rng, mode):
    """complex64 input, weights or both against scipy in complex128: correlate conjugates its
    weights, convolve does not; a complex cval's parts go to the input's parts; every function
    that takes complex input in scipy takes it here."""
    x, xr = _complex(rng, (23, 31)), rng.standard_normal((23, 31)).astype(np.float32)
    w, w1 = _complex(rng, (3, 4)), _complex(rng, (5,))
    cval = (0.5 - 2j) if mode == "constant" else 0.0
    wide = dict(mode=mode, cval=cval)
    for f, data, weights in (("correlate", x, w), ("convolve", x, w), ("correlate", xr, w), ("correlate", x, w.real),
                             ("correlate1d", x, w1), ("convolve1d", x, w1), ("correlate1d", xr, w1)):
        kw = wide if np.iscomplexobj(data) else dict(mode=mode, cval=0.5)
        got = getattr(mnd, f)(data, weights, **kw)
        want = getattr(nd, f)(data.astype(np.result_type(data, np.complex128)), weights.astype(np.complex128), **kw)
        assert got.dtype == np.complex64, f
        scale = np.abs(weights).sum() * (np.abs(data).max() + abs(cval)) * 4
        close_to_scipy(got.real, want.real, scale, f"{f} real part")
        close_to_scipy(got.imag, want.imag, scale, f"{f} imaginary part")
    for f, args in (("gaussian_filter", (1.5,)), ("gaussian_filter1d", (2.0,)), ("uniform_filter", (3,)),
                    ("uniform_filter1d", (4,)), ("sobel", ()), ("prewitt", ()), ("laplace", ()),
                    ("gaussian_laplace", (1.2,))):
        got, want = getattr(mnd, f)(x, *args, **wide), getattr(nd, f)(x.astype(np.complex128), *args, **wide)
        close_to_scipy(got.real, want.real, 20 * (np.abs(x).max() + abs(cval)), f"{f} real part")
        close_to_scipy(got.imag, want.imag, 20 * (np.abs(x).max() + abs(cval)), f"{f} imaginary part")


def test_complex_outputs_and_refusals(rng):
    """scipy's output rules for complex data: a complex array written in place, a real dtype
    promoted with scipy's warning, a real array or a real dtype's name refused, and a complex cval
    on a real input refused naming them; complex128 in float64 parts."""
    x, w = _complex(rng, (9, 11)), _complex(rng, (3, 3))
    out = np.zeros(x.shape, np.complex64)
    assert mnd.correlate(x, w, output=out) is out
    np.testing.assert_array_equal(out, mnd.correlate(x, w))
    with pytest.warns(UserWarning, match="promoting specified output dtype to complex"):
        assert mnd.correlate(x, w, output=np.float32).dtype == np.complex64
    for bad in ("float32", np.zeros(x.shape, np.float32)):
        with pytest.raises(RuntimeError, match="output"):
            mnd.correlate(x, w, output=bad)
    assert mnd.correlate(x, w, output=np.complex128).dtype == np.complex128
    z = x.astype(np.complex128) * 1e5 + 1e-5j  # parts float32 does not hold
    for fn, args in ((mnd.gaussian_filter, (1.5,)), (mnd.correlate1d, (w[0].astype(np.complex128),)),
                     (mnd.correlate, (w.astype(np.complex128),)), (mnd.convolve, (w,))):
        got = fn(z, *args, mode="wrap")
        want = getattr(nd, fn.__name__)(z, *args, mode="wrap")
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13 * np.abs(z).max())
    with pytest.raises(ValueError, match="cval"):
        mnd.correlate(x.real.copy(), w, mode="constant", cval=1j)


def test_gaussian_taps_keep_their_sum():
    """The float32 taps of a Gaussian pass: each within one float32 step of scipy's float64 weight,
    the (anti)symmetry of the weights kept, and their exact sum no farther from the weights' than
    rounding to nearest leaves it (sigma 1: 2e-8 before, the bias test_gauss03 saw)."""
    import math
    for sigma in (0.3, 0.5, 0.8, 1.0, 1.7, 2.0, 3.7, 5.0, 10.0, 15.0):
        for order in (0, 1, 2, 3):
            r = int(4.0 * sigma + 0.5)
            w = mnd._gaussian_weights(sigma, order, r)[::-1]
            t, nearest = mnd._float32_keeping_sum(w), w.astype(np.float32)
            assert t.dtype == np.float32
            assert np.all(np.abs(t.astype(np.float64) - w) <= np.spacing(np.abs(nearest)) * 1.0), (sigma, order)
            mirrored = t[::-1] if order % 2 == 0 else -t[::-1]
            np.testing.assert_array_equal(t, mirrored, err_msg=f"sigma {sigma} order {order}: symmetry")
            err = abs(math.fsum(t.astype(np.float64)) - math.fsum(w))
            assert err <= abs(math.fsum(nearest.astype(np.float64)) - math.fsum(w)), (sigma, order)
            if order == 0 and sigma >= 2.0:
                assert err <= 1e-9, (sigma, err)


def _wide_inputs(rng):
    """Arrays of the types computed in float64: dark values beside bright ones (float64 over 600
    decades), integers past float32's 2^24 and, for int64, past 2^53 (scipy reads them into
    float64 too), and negative results for the unsigned (scipy's casts wrap them)."""
    shape = (13, 37)
    f = rng.standard_normal(shape) * 10.0 ** rng.integers(-300, 300, shape)
    return {"float64": f,
            "int32": rng.integers(-2**31, 2**31, shape, dtype=np.int64).astype(np.int32),
            "uint32": rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32),
            "int64": rng.integers(-2**62, 2**62, shape, dtype=np.int64),
            "uint64": rng.integers(0, 2**63, shape, dtype=np.uint64) * np.uint64(2)}


def _small_integers(rng, dtype):
    """Integers whose every filter sum here is exact in float64 (below 2^40): scipy's results
    exactly, whatever the order of the sums."""
    return rng.integers(0 if np.dtype(dtype).kind == "u" else -2**20, 2**20, (11, 23)).astype(dtype)


def check_wide_dtypes(rng, put, get, variant="auto"):
    """memhier.ndimage on the types it computes in float64, against scipy: float64 within a few
    eps64 of sum |w| |x| per element (dark pixels beside bright ones), integer sums that are exact
    equal to scipy's, scipy's casts (truncation, wrapping, the least value for NaN and values out
    of range), cval in float64, mixed input and output types and the summed filters (laplace,
    gaussian_laplace) adding in the output's own arithmetic (int64 exact past 2^53). put and get move
    NumPy arrays to the arrays under test and back."""
    kw = {"variant": variant}
    # (memhier's call, the same as direct sums for scipy: its uniform filter's running sum is not
    # accurate for a dark value after bright ones)
    weights = np.array([0.25, -1.5, 3.0, 0.125])
    gauss = np.exp(-0.5 * (np.arange(-5, 6) / 1.3) ** 2)  # scipy's sigma 1.3: radius int(4 * 1.3 + 0.5)
    gauss /= gauss.sum()
    calls = [("gaussian_filter", lambda a: mnd.gaussian_filter(a, 1.3, mode="constant", cval=0.1, **kw),
              lambda a: nd.gaussian_filter(a, 1.3, mode="constant", cval=0.1),
              lambda a, w: nd.correlate(a, np.outer(w, w), mode="constant", cval=0.1), gauss),
             ("uniform_filter1d", lambda a: mnd.uniform_filter1d(a, 5, axis=0, mode="mirror", **kw),
              lambda a: nd.uniform_filter1d(a, 5, axis=0, mode="mirror"),
              lambda a, w: nd.correlate1d(a, w, axis=0, mode="mirror"), np.full(5, 0.2)),
             ("correlate1d", lambda a: mnd.correlate1d(a, weights, axis=-1, origin=1, **kw),
              lambda a: nd.correlate1d(a, weights, axis=-1, origin=1),
              lambda a, w: nd.correlate1d(a, w, axis=-1, origin=1), weights)]
    for name, x in _wide_inputs(rng).items():
        for what, ours, scipys, direct, w in calls:
            got = get(ours(put(x)))
            assert got.dtype == x.dtype, (what, name)
            xd = x.astype(np.float64)
            scale = direct(np.abs(xd), np.abs(w))
            if name == "float64":  # per element against direct sums
                err = np.abs(got - direct(xd, w)) / np.maximum(scale, np.finfo(np.float64).tiny)
                assert err.max() <= 64 * np.finfo(np.float64).eps, (what, float(err.max()))
            else:  # scipy's result (each pass truncated into the type), one step either way per pass
                want = scipys(x).astype(np.float64)
                near = np.abs(got.astype(np.float64) - want) <= 64 * np.finfo(np.float64).eps * scale + 2
                fits = (scale <= np.iinfo(x.dtype).max) & (np.abs(want) < 2.0 ** 52)
                assert np.all(near | ~fits), (what, name, np.argwhere(~(near | ~fits))[:3])
    for dtype in ("int32", "uint32", "int64", "uint64"):
        x = _small_integers(rng, dtype)
        # uint64's negative sums wrap past 2^63, where float64 sums round: its filters of one sign alone
        signed = dtype != "uint64"
        for fn, args in ((mnd.sobel, (0,)), (mnd.prewitt, (1,)), (mnd.laplace, ()), (mnd.uniform_filter, (3,)),
                         (mnd.correlate1d, (np.array([-1.0, 0.0, 1.0]), 0))) if signed else \
                ((mnd.uniform_filter, (3,)), (mnd.correlate1d, (np.array([1.0, 2.0, 1.0]), 0))):
            got, want = get(fn(put(x), *args, **kw)), getattr(nd, fn.__name__)(x, *args)
            np.testing.assert_array_equal(got, want, err_msg=f"{fn.__name__} {dtype}")
    big = np.array([[2**62, 2**62 + 1, 3], [1, 2**62 - 1, 7]], np.int64)  # exact sums past 2^53: laplace adds int64
    np.testing.assert_array_equal(get(mnd.laplace(put(big), mode="nearest", **kw)),
                                  nd.laplace(big, mode="nearest"))
    f = np.array([[1e10, -1e10, 2.5, -2.5, np.nan, 3e9], [-7.9, 7.9, 4e9, -4e9, 1e20, -1e20]])
    for out in ("int32", "uint32", "int64", "uint64", "uint8", "int16", "float32"):  # scipy's casts
        got = get(mnd.correlate1d(put(f), np.array([1.0]), output=np.dtype(out), **kw))
        with np.errstate(invalid="ignore"):
            want = nd.correlate1d(f, np.array([1.0]), output=np.dtype(out))
        np.testing.assert_array_equal(got, want, err_msg=f"float64 into {out}")
    x = _small_integers(rng, "int16")
    for out, fn, args in (("int64", mnd.gaussian_filter, (2.0,)), ("float64", mnd.gaussian_laplace, (1.5,)),
                          ("int32", mnd.gaussian_laplace, (1.5,))):
        got = get(fn(put(x), *args, output=np.dtype(out), **kw))
        want = getattr(nd, fn.__name__)(x, *args, output=np.dtype(out))
        assert got.dtype == np.dtype(out)
        tol = 0 if out == "float64" else 1  # a truncation at an integer: one step either way
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-12, atol=tol + 1e-9,
                                   err_msg=f"{fn.__name__} int16 into {out}")
    v = rng.standard_normal((4, 5, 6))
    got = get(mnd.gaussian_filter(put(v), (1.0, 0.0, 2.0), mode=("reflect", "nearest", "wrap"), **kw))
    np.testing.assert_allclose(got, nd.gaussian_filter(v, (1.0, 0.0, 2.0), mode=("reflect", "nearest", "wrap")),
                               rtol=1e-13, atol=1e-13)
    with pytest.raises(memhier.Unsupported, match="float16 beside a type computed in float64"):
        mnd.uniform_filter(put(x.astype(np.float16)), 3, output=np.float64, **kw)
    # correlate and convolve in float64: weights of 1 to 3 axes, their longest side carried by
    # correlate1d, the others gathered at their offsets; even sides, origins, every mode; a row
    # of zeros skipped as scipy's footprint skips it (the NaN it would meet stays out)
    img = rng.standard_normal((19, 23)) * 10.0 ** rng.integers(-100, 100, (19, 23))
    for fn in ("correlate", "convolve"):
        for w2, extra in ((rng.standard_normal((4, 3)), {"mode": "mirror", "origin": (1, -1)}),
                          (rng.standard_normal((3, 6)), {"mode": "constant", "cval": 0.3}),
                          (rng.standard_normal(5), {"mode": "wrap", "axes": (0,)}),
                          (rng.standard_normal((2, 3, 2)), {"mode": "nearest"})):
            data = v if w2.ndim == 3 else img
            got = get(getattr(mnd, fn)(put(data), w2, **extra, **kw))
            want = getattr(nd, fn)(data, w2, **extra)
            scale = getattr(nd, fn)(np.abs(data), np.abs(w2), **dict(extra, cval=abs(extra.get("cval", 0.0))))
            err = np.abs(got - want) / np.maximum(scale, np.finfo(np.float64).tiny)
            assert err.max() <= 64 * np.finfo(np.float64).eps, (fn, w2.shape, float(err.max()))
    i32 = _small_integers(rng, "int32")
    w3 = rng.integers(-3, 4, (3, 5)).astype(np.float64)
    np.testing.assert_array_equal(get(mnd.correlate(put(i32), w3, mode="reflect", **kw)),
                                  nd.correlate(i32, w3, mode="reflect"))
    np.testing.assert_array_equal(get(mnd.convolve(put(i32), w3, output=np.dtype("int16"), **kw)),
                                  nd.convolve(i32, w3, output=np.dtype("int16")))
    nan = np.ones((6, 7))
    nan[0, 3] = np.nan
    zero_row = np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(get(mnd.correlate(put(nan), zero_row, mode="nearest", **kw)),
                                  nd.correlate(nan, zero_row, mode="nearest"))
    # a cval past float32's range: refused where the call computes in float32, taken in float64
    big_cval = {"mode": "constant", "cval": 1e300}  # (scipy's uniform filter's running sum cancels it badly)
    for fn, wb in (("correlate1d", weights), ("correlate", w3)):
        got = get(getattr(mnd, fn)(put(img), wb, **big_cval, **kw))
        scale = getattr(nd, fn)(np.abs(img), np.abs(wb), **big_cval)
        err = np.abs(got - getattr(nd, fn)(img, wb, **big_cval)) / np.maximum(scale, np.finfo(np.float64).tiny)
        assert err.max() <= 64 * np.finfo(np.float64).eps, (fn, float(err.max()))
    with pytest.raises(ValueError, match="past float32's range"):
        mnd.uniform_filter(put(np.ones((5, 5), np.float32)), 3, **big_cval, **kw)
    # passes of more than 127 taps in float64 (sigma 20: 161 taps), in chunks over the extended lines
    for mode in ("reflect", "constant", "wrap", "mirror"):
        got = get(mnd.gaussian_filter1d(put(v[0]), 20.0, axis=1, mode=mode, cval=0.5, **kw))
        np.testing.assert_allclose(got, nd.gaussian_filter1d(v[0], 20.0, axis=1, mode=mode, cval=0.5),
                                   rtol=1e-12, atol=1e-13, err_msg=mode)
    ints = _small_integers(rng, "int64")
    np.testing.assert_array_equal(get(mnd.uniform_filter1d(put(ints), 131, axis=0, **kw)),
                                  nd.uniform_filter1d(ints, 131, axis=0))


def check_wide_integers_in_scipys_order(rng, put, get):
    """Integer outputs of the types computed in float64 (int32, int64, uint32, uint64, and bool as its
    bytes) equal scipy's bit for bit where the float64 sum lands one rounding from a whole number, as a box filter's
    does on every flat patch (weights 1/9 over nine 5s: scipy's sum 4.999999999999999 stores 4):
    correlate and convolve of N-D weights, correlate1d and convolve1d of symmetric, antisymmetric
    and other filters, every mode and origin, and the separable filters made of such passes
    (scipy's own Gaussian weights)."""
    boxes = (np.ones((3, 3)) / 9, np.ones((5, 5)) / 25, np.ones((1, 3)) / 3, np.ones((3, 3, 1)) / 9)
    lines = (np.ones(3) / 3, np.ones(7) / 7, np.array([-1.0, 0.0, 1.0]) / 3, np.array([0.1, 0.2, 0.3, 0.4]),
             np.ones(4) / 4)
    for dtype in ("int32", "int64", "uint32", "uint64"):
        flat = np.full((12, 14), 5, dtype)
        np.testing.assert_array_equal(get(mnd.correlate(put(flat), boxes[0])), nd.correlate(flat, boxes[0]),
                                      err_msg=f"{dtype}: a flat patch of 5s")
        assert get(mnd.correlate(put(flat), boxes[0]))[5, 5] == 4, dtype  # scipy's truncated sum
        x = (rng.random((30, 41)) * 60).astype(dtype)
        x[5:20, 8:30] = 37  # a flat patch: Gaussian weights summing one rounding off 1 move it to 36
        x3 = (rng.random((9, 11, 4)) * 60).astype(dtype)
        for mode in ("reflect", "constant", "nearest", "mirror", "wrap"):
            kw = {"mode": mode, "cval": 2.5}
            for w in boxes:
                image = x3 if w.ndim == 3 else x
                for fn in ("correlate", "convolve"):
                    np.testing.assert_array_equal(get(getattr(mnd, fn)(put(image), w, **kw)),
                                                  getattr(nd, fn)(image, w, **kw), err_msg=f"{fn} {dtype} {w.shape} {mode}")
            for w in lines:
                for axis, origin in ((0, 0), (1, -1), (1, 1)):
                    for fn in ("correlate1d", "convolve1d"):
                        np.testing.assert_array_equal(
                            get(getattr(mnd, fn)(put(x), w, axis=axis, origin=origin, **kw)),
                            getattr(nd, fn)(x, w, axis=axis, origin=origin, **kw),
                            err_msg=f"{fn} {dtype} {w} axis {axis} origin {origin} {mode}")
        for fn, args in (("gaussian_filter", (1.3,)), ("gaussian_filter", (0.8,)), ("gaussian_filter1d", (0.7,)),
                         ("gaussian_laplace", (0.8,)), ("laplace", ()), ("sobel", ()), ("prewitt", ())):
            np.testing.assert_array_equal(get(getattr(mnd, fn)(put(x), *args)), getattr(nd, fn)(x, *args),
                                          err_msg=f"{fn} {dtype}")
    # bool images: read and written as their bytes, as scipy's C code reads and casts an unsigned
    # char (a Gaussian over a flat True patch sums one rounding below 1 and stores 0; laplace's
    # terms combine as numpy adds bools)
    mask = rng.random((30, 41)) > 0.5
    mask[5:20, 8:30] = True
    for fn, args in (("correlate", (boxes[0],)), ("convolve", (np.ones((5, 5)) / 25,)), ("correlate1d", (lines[0],)),
                     ("gaussian_filter", (1.0,)), ("uniform_filter", (3,)), ("sobel", ()), ("prewitt", ()),
                     ("laplace", ()), ("gaussian_laplace", (1.0,))):
        for mode in ("reflect", "constant"):
            got, want = get(getattr(mnd, fn)(put(mask), *args, mode=mode)), getattr(nd, fn)(mask, *args, mode=mode)
            assert got.dtype == want.dtype == np.bool_, fn
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=f"{fn} bool {mode}")
    np.testing.assert_array_equal(get(mnd.gaussian_filter(put(mask.astype(np.float32)), 1.0, output=bool)).view(np.uint8),
                                  nd.gaussian_filter(mask.astype(np.float32), 1.0, output=bool).view(np.uint8))


def test_wide_integers_in_scipys_order(rng):
    """Integer outputs computed in float64 on the CPU backend (test_gpu.py runs the same on the GPU)."""
    check_wide_integers_in_scipys_order(rng, lambda a: a, lambda a: a)


def test_scipys_sums_in_the_library(rng, monkeypatch):
    """1-D passes into int32, int64 and uint32 outputs run as sepfilter calls asking for scipy's
    sums (MH_SEPFILTER_SUMS_SCIPY), not a tap a pass in Python, and give scipy's bits on 2-D and
    3-D images (flat patches where a Gaussian's sums land one rounding off a whole number); a
    float64 image into uint8 over three axes keeps the Python path, and scipy's bits."""
    def refused(*args):
        raise AssertionError("a tap a pass in Python")
    for dtype in ("int32", "int64", "uint32"):
        x = (rng.random((30, 41)) * 60).astype(dtype)
        x[5:20, 8:30] = 37
        x3 = (rng.random((9, 11, 12)) * 60).astype(dtype)
        x3[2:6, 3:9, 4:10] = 37
        with monkeypatch.context() as m:
            m.setattr(mnd, "_run_passes_in_scipys_order", refused)
            for image in (x, x3):
                for fn, args in (("gaussian_filter", (1.3,)), ("gaussian_filter1d", (0.7,)),
                                 ("correlate1d", (np.ones(3) / 3,)), ("convolve1d", (np.array([-1.0, 0.0, 1.0]) / 3,))):
                    np.testing.assert_array_equal(getattr(mnd, fn)(image, *args, mode="mirror"),
                                                  getattr(nd, fn)(image, *args, mode="mirror"),
                                                  err_msg=f"{fn} {dtype} {image.shape}")
    v = (rng.random((9, 11, 12)) * 200).round(1)
    v[2:6, 3:9, 4:10] = 37.0
    np.testing.assert_array_equal(mnd.gaussian_filter(v, 1.3, output=np.uint8), nd.gaussian_filter(v, 1.3, output=np.uint8))


def test_wide_dtypes(rng):
    """memhier.ndimage in float64 on the CPU backend (test_gpu.py runs the same on the GPU)."""
    check_wide_dtypes(rng, lambda a: a, lambda a: a)

"""memhier.dask with NumPy chunks on the CPU backend (runs everywhere, CI included): every
function against the single call, uneven chunks, and refusals; where there is a CUDA device,
CuPy chunks too, on one GPU and on dask-cuda's LocalCUDACluster (one worker per GPU).
scripts/dask_scaling.py times it on GPUs."""
import numpy as np
import pytest

import memhier
from conftest import assert_close, correlate1d

da = pytest.importorskip("dask.array")
mdask = pytest.importorskip("memhier.dask")

PADS = ("valid", "same", "full")


def f32(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("fshape", [(1, 1), (3, 3), (11, 5), (4, 7)])
def test_conv2d_bit_for_bit(rng, pad, fshape):
    image, filt = f32(rng, 301, 257), f32(rng, *fshape)
    darr = da.from_array(image, chunks=(70, (100, 57, 100)))  # uneven chunks, halos across them
    got = mdask.conv2d(darr, filt, pad=pad).compute(scheduler="sync")
    np.testing.assert_array_equal(got, memhier.conv2d(image, filt, pad=pad))


@pytest.mark.parametrize("pad", PADS)
def test_conv2d_chunks_as_small_as_the_halo(rng, pad):
    """Chunks of exactly k - 1 along both axes: every window reads its eight neighbours'
    pieces (corners included) and, at the edges, zeros; the last chunks are larger, to hold
    outputs of 'valid'."""
    image, filt = f32(rng, 27, 20), f32(rng, 5, 4)
    chunks = ((4,) * 5 + (7,), (3,) * 5 + (5,))
    got = mdask.conv2d(da.from_array(image, chunks=chunks), filt, pad=pad).compute(scheduler="sync")
    np.testing.assert_array_equal(got, memhier.conv2d(image, filt, pad=pad))


def test_conv2d_graph_is_two_levels(rng):
    """Halo copies, then one task a chunk: each level is a round trip through the scheduler."""
    darr = da.from_array(f32(rng, 64, 64), chunks=16)
    graph = dict(mdask.conv2d(darr, f32(rng, 3, 3), pad="same").__dask_graph__())
    mine = [key for key in graph if isinstance(key, tuple) and str(key[0]).startswith("memhier-")]
    assert sum("-conv-" in key[0] for key in mine) == 16
    assert {len(key) for key in mine if "-halo-" in key[0]} == {4}  # (name, i, j, piece)


def test_distributed_scheduler(rng):
    """The same graph through distributed (tasks pickled and sent to a worker), as on
    dask-cuda's clusters."""
    distributed = pytest.importorskip("distributed")
    image, filt = f32(rng, 200, 150), f32(rng, 7, 7)
    x, mask = f32(rng, 8, 300), f32(rng, 9)
    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        got = client.compute(mdask.conv2d(da.from_array(image, chunks=(50, 70)), filt, pad="same")).result()
        np.testing.assert_array_equal(got, memhier.conv2d(image, filt, pad="same"))
        # a result still held by the workers stands in for the same call only: not after the
        # filter changed in place (the tasks' names hash the filter's values)
        darr, dimage = da.from_array(x, chunks=(2, -1)), da.from_array(image, chunks=(50, 70))
        held = [mdask.conv1d(darr, mask).persist(), mdask.conv2d(dimage, filt).persist()]
        distributed.wait(held)
        mask *= 2
        filt *= 2
        np.testing.assert_array_equal(mdask.conv1d(darr, mask).compute(), memhier.conv1d(x, mask))
        np.testing.assert_array_equal(mdask.conv2d(dimage, filt).compute(), memhier.conv2d(image, filt))
        del held


@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("k", [1, 2, 31, 255])
def test_conv1d_long_signal(rng, pad, k):
    """Within the C tests' bound of the double reference (cpu-omp's order of additions depends
    on where an output falls in its block of 64, so chunks may move the last bit)."""
    x, m = f32(rng, 20_011), f32(rng, k)
    got = mdask.conv1d(da.from_array(x, chunks=3000), m, pad=pad).compute(scheduler="sync")
    assert got.shape == memhier.conv1d(x, m, pad=pad).shape
    ref, mag = correlate1d(x, m, pad)
    assert_close(got, ref, mag, k, f"{pad} k={k}")


@pytest.mark.parametrize("per_signal", [False, True])
def test_conv1d_batched(rng, per_signal):
    x = f32(rng, 10, 1000)
    m = f32(rng, 10, 17) if per_signal else f32(rng, 17)
    got = mdask.conv1d(da.from_array(x, chunks=(3, -1)), m, pad="same").compute(scheduler="sync")
    np.testing.assert_array_equal(got, memhier.conv1d(x, m, pad="same"))  # whole signals: the same calls


def test_histograms_exact(rng):
    values = rng.integers(-5, 300, (401, 77)).astype(np.int32)
    got = mdask.bincount(da.from_array(values, chunks=(50, 30)), 256).compute(scheduler="sync")
    np.testing.assert_array_equal(got, memhier.bincount(np.ascontiguousarray(values.ravel()), 256))
    data = rng.integers(0, 256, 100_003).astype(np.uint8)
    got = mdask.histogram_bytes(da.from_array(data, chunks=7000), ord("a"), ord("z"), 4).compute(scheduler="sync")
    np.testing.assert_array_equal(got, memhier.histogram_bytes(data, ord("a"), ord("z"), 4))


def test_reduce_sum_within_bound(rng):
    x = f32(rng, 1000, 333)
    got = mdask.reduce_sum(da.from_array(x, chunks=(128, 100))).compute(scheduler="sync")
    assert got.dtype == np.float32
    assert abs(float(got) - x.astype(np.float64).sum()) <= 1e-6 * np.abs(x).sum()


def test_transpose_exact(rng):
    a = f32(rng, 301, 123)
    got = mdask.transpose(da.from_array(a, chunks=(100, 50))).compute(scheduler="sync")
    np.testing.assert_array_equal(got, a.T)


def test_refusals(rng):
    with pytest.raises(ValueError, match="smaller than the filter's halo"):
        mdask.conv2d(da.from_array(f32(rng, 100, 100), chunks=5), f32(rng, 11, 11), pad="same")
    with pytest.raises(ValueError, match="chunks along the batch only"):
        mdask.conv1d(da.from_array(f32(rng, 4, 100), chunks=(2, 50)), f32(rng, 5))
    with pytest.raises(ValueError, match="no output"):
        mdask.conv2d(da.from_array(f32(rng, 5, 5), chunks=5), f32(rng, 7, 7), pad="valid")
    with pytest.raises(ValueError, match="pad"):
        mdask.conv1d(da.from_array(f32(rng, 100), chunks=50), f32(rng, 3), pad="circular")
    with pytest.raises(ValueError, match="takes a 2-D image"):  # a volume is not a stack of images here
        mdask.conv2d(da.from_array(f32(rng, 3, 40, 40), chunks=(1, 20, 20)), f32(rng, 3, 3), pad="same")


@pytest.mark.parametrize("rows, chunk, k", [(1030, 1024, 11), (3000, 7, 200), (2050, 1024, 255), (300, 50, 200)])
def test_suggested_rechunk_is_taken(rng, rows, chunk, k):
    """The rechunk a refusal suggests is one the same call then takes (wrap reads its halo from the
    far end's chunks, so every chunk, the last too, must hold it)."""
    import re
    image, w = f32(rng, rows, 8), f32(rng, k, 1)
    darr = da.from_array(image, chunks=(chunk, 8))
    with pytest.raises(ValueError, match="rechunk") as refused:
        mdask.correlate(darr, w, mode="wrap")
    suggested = int(re.search(r"rechunk\(\{0: (-?\d+)\}\)", str(refused.value)).group(1))
    got = mdask.correlate(darr.rechunk({0: suggested}), w, mode="wrap").compute(scheduler="sync")
    np.testing.assert_array_equal(got, memhier.ndimage.correlate(image, w, mode="wrap"))


def test_cupy_chunks_on_gpu(rng):
    """The same functions with CuPy chunks (dask's threaded scheduler, one GPU): conv2d on a direct
    row (an 11 x 4 filter: regtile) and the histogram bit for bit against single calls on the whole
    CuPy arrays; conv2d on fft-tile (11 x 5, 55 taps) within the FFT rows' normwise bound, since a
    chunk's tiles fall elsewhere than the whole image's."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    image, filt, fft_filt = cp.asarray(f32(rng, 1031, 777)), cp.asarray(f32(rng, 11, 4)), cp.asarray(f32(rng, 11, 5))
    darr = da.from_array(image, chunks=(300, 400), asarray=False)
    for pad in PADS:
        got = mdask.conv2d(darr, filt, pad=pad).compute(scheduler="threads")
        assert isinstance(got, cp.ndarray)
        assert bool(cp.array_equal(got, memhier.conv2d(image, filt, pad=pad))), pad
        got = mdask.conv2d(darr, fft_filt, pad=pad).compute(scheduler="threads")
        want = memhier.conv2d(image, fft_filt, pad=pad)
        assert float(cp.linalg.norm(got - want) / cp.linalg.norm(want)) <= 4e-6, pad  # each within 2e-6
    values = cp.asarray(rng.integers(-3, 300, 100_003).astype(np.int32))
    counts = mdask.bincount(da.from_array(values, chunks=9000, asarray=False), 256).compute(scheduler="threads")
    assert bool(cp.array_equal(counts, memhier.bincount(values, 256)))
    total = mdask.reduce_sum(da.from_array(image, chunks=(300, 400), asarray=False)).compute(scheduler="threads")
    assert abs(float(total) - float(image.astype(cp.float64).sum())) <= 1e-6 * float(cp.abs(image).sum())


def test_cupy_chunks_on_cuda_cluster(rng):
    """Every function with CuPy chunks on dask-cuda's LocalCUDACluster, one worker per GPU (both
    GPUs of the 2-GPU machine), each input placed in bands along axis 0, one band a worker, so
    that halos and partial results cross between GPUs; against single calls on the whole arrays
    on GPU 0: conv2d, batched conv1d, histograms and transpose bit for bit, one long signal's
    conv1d within the C tests' bound of the double reference (its windows are calls of their
    own), reduce_sum within its bound."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    with dask_cuda.LocalCUDACluster() as cluster, distributed.Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])
        held = set()

        def placed(a, chunks):
            lazy = da.from_array(a, chunks=chunks, asarray=False)
            starts = np.concatenate(([0], np.cumsum(lazy.chunks[0])))
            bands = np.array_split(np.arange(lazy.numblocks[0]), len(workers))
            parts = [client.persist(lazy[int(starts[b[0]]):int(starts[b[-1] + 1])], workers=[w])
                     for w, b in zip(workers, bands) if len(b)]
            x = da.concatenate(parts, axis=0).persist()
            distributed.wait(x)
            held.update(w for holders in client.who_has(x).values() for w in holders)
            return x

        def same(got, want, what):
            assert isinstance(got, cp.ndarray), what
            assert got.shape == want.shape and bool(cp.array_equal(got, want)), what

        image, filt = cp.asarray(f32(rng, 1031, 777)), cp.asarray(f32(rng, 11, 4))  # a direct row: regtile
        dimage = placed(image, (150, 400))
        for pad in PADS:
            same(client.compute(mdask.conv2d(dimage, filt, pad=pad)).result(), memhier.conv2d(image, filt, pad=pad),
                 f"conv2d {pad}")
        signals, mask = cp.asarray(f32(rng, 16, 50_000)), cp.asarray(f32(rng, 17))
        same(client.compute(mdask.conv1d(placed(signals, (3, -1)), mask, pad="same")).result(),
             memhier.conv1d(signals, mask, pad="same"), "batched conv1d")
        x, m = f32(rng, 200_003), f32(rng, 255)
        got = client.compute(mdask.conv1d(placed(cp.asarray(x), 30_000), cp.asarray(m), pad="full")).result()
        ref, mag = correlate1d(x, m, "full")
        assert_close(cp.asnumpy(got), ref, mag, 255, "conv1d full k=255")
        values = cp.asarray(rng.integers(-3, 300, (400, 251)).astype(np.int32))
        same(client.compute(mdask.bincount(placed(values, (60, 100)), 256)).result(),
             memhier.bincount(values.ravel(), 256), "histogram")
        data = cp.asarray(rng.integers(0, 256, 100_003).astype(np.uint8))
        same(client.compute(mdask.histogram_bytes(placed(data, 9000), ord("a"), ord("z"), 4)).result(),
             memhier.histogram_bytes(data, ord("a"), ord("z"), 4), "histogram_bytes")
        total = client.compute(mdask.reduce_sum(dimage)).result()
        assert abs(float(total) - float(image.astype(cp.float64).sum())) <= 1e-6 * float(cp.abs(image).sum())
        same(client.compute(mdask.transpose(dimage)).result(), image.T, "transpose")
        assert held == set(workers), f"input held by {sorted(held)}, not by every worker {workers}"


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "constant", "wrap"])
def test_ndimage_filters_equal_one_call(rng, mode):
    """memhier.dask's ndimage filters against memhier.ndimage on the whole image: bit for bit, at
    every seam and at the array's edges, with origins at both limits."""
    from memhier import ndimage as mnd
    x = rng.standard_normal((97, 131)).astype(np.float32)
    # wrap reads across the array: from the chunks at the other end, or within one chunk
    cases = [((40, 45), k) for k in [(3, 3), (5, 4), (1, 7), (9, 1)]]
    if mode == "wrap":
        cases += [((40, -1), (1, 7)), ((-1, 45), (9, 1)), ((-1, -1), (5, 4)), ((49, 66), (9, 9))]
    for chunks, k in cases:
        dx = da.from_array(x, chunks=chunks)
        w = rng.standard_normal(k).astype(np.float32)
        for o in [(0, 0), (-(k[0] // 2), (k[1] - 1) // 2), ((k[0] - 1) // 2, -(k[1] // 2))]:
            got = mdask.correlate(dx, w, mode=mode, cval=0.5, origin=o).compute()
            np.testing.assert_array_equal(got, mnd.correlate(x, w, mode=mode, cval=0.5, origin=o),
                                          err_msg=f"correlate {k} origin {o}")
        np.testing.assert_array_equal(mdask.convolve(dx, w, mode=mode).compute(), mnd.convolve(x, w, mode=mode))
    np.testing.assert_array_equal(mdask.gaussian_filter(dx, (1.5, 2.0), mode=mode).compute(),
                                  mnd.gaussian_filter(x, (1.5, 2.0), mode=mode))
    np.testing.assert_array_equal(mdask.gaussian_filter(dx, (1e-16, 2.0), (2, 1), mode=mode).compute(),
                                  mnd.gaussian_filter(x, (1e-16, 2.0), (2, 1), mode=mode))  # axis 0 left as it is
    np.testing.assert_array_equal(mdask.uniform_filter(dx, (3, 4), mode=mode).compute(),
                                  mnd.uniform_filter(x, (3, 4), mode=mode))
    np.testing.assert_array_equal(mdask.correlate1d(dx, [1.0, -2.0, 0.5], 0, mode=mode).compute(),
                                  mnd.correlate1d(x, [1.0, -2.0, 0.5], 0, mode=mode))
    for axis in (0, 1):
        np.testing.assert_array_equal(mdask.sobel(dx, axis, mode=mode).compute(), mnd.sobel(x, axis, mode=mode))
        np.testing.assert_array_equal(mdask.prewitt(dx, axis, mode=mode).compute(), mnd.prewitt(x, axis, mode=mode))
    np.testing.assert_array_equal(mdask.laplace(dx, mode=mode).compute(), mnd.laplace(x, mode=mode))
    np.testing.assert_array_equal(mdask.gaussian_laplace(dx, 1.2, mode=mode).compute(),
                                  mnd.gaussian_laplace(x, 1.2, mode=mode))
    modes = [mode, "reflect" if mode != "reflect" else "constant"]  # a term's one mode for both its axes
    np.testing.assert_array_equal(mdask.gaussian_laplace(dx, 1.2, mode=modes, cval=0.5).compute(),
                                  mnd.gaussian_laplace(x, 1.2, mode=modes, cval=0.5))
    np.testing.assert_array_equal(mdask.laplace(dx, mode=modes, cval=0.5).compute(),
                                  mnd.laplace(x, mode=modes, cval=0.5))


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "constant", "wrap"])
def test_ndimage_passes_past_127_taps_equal_one_call(rng, mode):
    """1-D passes longer than sepfilter's 127 taps (conv1d's direct rows): a Gaussian of sigma 40
    (321 taps) and 300 weights, chunked, bit for bit equal to one call: every output is computed
    the same way whichever block of the CPU row it falls in."""
    from memhier import ndimage as mnd
    x = rng.standard_normal((700, 650)).astype(np.float32)
    dx = da.from_array(x, chunks=(350, 325))
    np.testing.assert_array_equal(mdask.gaussian_filter(dx, 40.0, mode=mode).compute(),
                                  mnd.gaussian_filter(x, 40.0, mode=mode))
    w = rng.standard_normal(300)
    for axis in (0, 1):
        np.testing.assert_array_equal(mdask.correlate1d(dx, w, axis, mode=mode, cval=0.5).compute(),
                                      mnd.correlate1d(x, w, axis, mode=mode, cval=0.5), err_msg=f"axis {axis}")


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float16])
def test_ndimage_filters_of_image_dtypes(rng, dtype):
    """Integer and float16 images: the result in the image's dtype, cast as memhier.ndimage (and
    scipy) cast, bit for bit against the single call."""
    from memhier import ndimage as mnd
    x = (rng.standard_normal((67, 81)) * 300).astype(dtype)
    dx = da.from_array(x, chunks=(34, 41))
    w = rng.standard_normal((3, 5))
    cases = [(lambda f, a: f.correlate(a, w, mode="nearest")), (lambda f, a: f.gaussian_filter(a, 1.5)),
             (lambda f, a: f.uniform_filter(a, (3, 5))), (lambda f, a: f.sobel(a, 0)),
             (lambda f, a: f.laplace(a, mode="constant", cval=7.0))]
    for i, run in enumerate(cases):
        got = run(mdask, dx).compute()
        assert got.dtype == np.dtype(dtype), f"case {i}"
        np.testing.assert_array_equal(got, run(mnd, x), err_msg=f"case {i}")


def test_ndimage_dask_refusals(rng):
    x = da.from_array(rng.standard_normal((50, 60)).astype(np.float32), chunks=(25, 30))
    with pytest.raises(ValueError, match="rechunk"):
        mdask.correlate(da.from_array(np.ones((50, 60), np.float32), chunks=(4, 30)), np.ones((5, 5), np.float32))
    with pytest.raises(ValueError, match="mode"):
        mdask.correlate(x, np.ones((3, 3), np.float32), mode="symmetric")
    with pytest.raises(memhier.Unsupported, match="cval: 2.5 with a int32 image"):
        mdask.correlate(x.astype(np.int32), np.ones((3, 3)), mode="constant", cval=2.5)
    with pytest.raises(memhier.Unsupported, match="cval: 0.5 with a int64 image"):  # scipy's border holds 0.5
        mdask.gaussian_filter(x.astype(np.int64), 1.0, mode="constant", cval=0.5)
    with pytest.raises(memhier.Unsupported, match="cval: -1.0 with a uint32 image"):
        mdask.sobel(x.astype(np.uint32), mode="constant", cval=-1.0)


def _selection_cases(rng):
    """(function, args, keywords) of every selection filter: sizes and footprints with holes,
    even sides, origins at both limits, structures."""
    fp = rng.random((4, 5)) > 0.35
    fp[0, 0] = True
    structure = rng.integers(-3, 4, (3, 4)).astype(np.float64)
    for name in ("minimum_filter", "maximum_filter", "median_filter"):
        yield name, (), dict(size=(3, 4))
        yield name, (), dict(footprint=fp, origin=(-2, 2))
    yield "minimum_filter", (), dict(size=7, origin=(3, -3))
    yield "rank_filter", (-2,), dict(footprint=fp, origin=(1, -2))
    yield "percentile_filter", (30,), dict(size=(5, 2))
    for name in ("grey_erosion", "grey_dilation", "grey_opening", "grey_closing", "morphological_gradient",
                 "white_tophat", "black_tophat"):
        yield name, (), dict(size=(4, 3), origin=(-2, 1))
        yield name, (), dict(footprint=fp, origin=(1, -2))
        yield name, (), dict(structure=structure)


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "constant", "wrap"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.float64, np.int64])
def test_selection_filters_equal_one_call(rng, mode, dtype):
    """memhier.dask's rank filters and grey morphology against memhier.ndimage on the whole image:
    bit for bit at every seam and the array's edges, chunks as small as the window's reach."""
    from memhier import ndimage as mnd
    x = (rng.standard_normal((61, 83)) * 40).astype(dtype)
    for chunks in ((20, 30), (-1, 17), (9, -1)):
        dx = da.from_array(x, chunks=chunks)
        for name, args, kw in _selection_cases(rng):
            try:
                got = getattr(mdask, name)(dx, *args, mode=mode, cval=3.0, **kw)
            except ValueError as e:
                assert "rechunk" in str(e), e
                continue
            want = getattr(mnd, name)(x, *args, mode=mode, cval=3.0, **kw)
            np.testing.assert_array_equal(got.compute(), want, err_msg=f"{name} {kw} chunks {chunks}")
            assert got.dtype == want.dtype


@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap"])
def test_selection_filters_of_volumes_equal_one_call(rng, mode):
    """Volumes (3-D dask arrays, a footprint over the three axes: cpu-omp on each chunk's window):
    bit for bit against memhier.ndimage on the whole volume at every seam and edge."""
    from memhier import ndimage as mnd
    fp = rng.random((3, 2, 4)) > 0.4
    fp[0, 0, 0] = True
    for dtype in (np.float32, np.uint8, np.int64):
        x = (rng.standard_normal((15, 18, 21)) * 40).astype(dtype)
        dx = da.from_array(x, chunks=(5, 6, 7))
        for name, args, kw in (("median_filter", (), dict(size=3)), ("rank_filter", (-2,), dict(footprint=fp, origin=(1, 0, -2))),
                               ("grey_opening", (), dict(size=(2, 3, 3))),
                               ("grey_dilation", (), dict(structure=rng.integers(-3, 4, (3, 3, 2)).astype(np.float64)))):
            got = getattr(mdask, name)(dx, *args, mode=mode, cval=3.0, **kw)
            want = getattr(mnd, name)(x, *args, mode=mode, cval=3.0, **kw)
            np.testing.assert_array_equal(got.compute(), want, err_msg=f"{name} {dtype} {kw}")
    with pytest.raises(ValueError, match="footprint: 2-D on a 3-D image"):
        mdask.median_filter(da.from_array(x, chunks=(5, 6, 7)), footprint=np.ones((3, 3), bool))
    with pytest.raises(ValueError, match="images and volumes"):
        mdask.median_filter(da.from_array(np.zeros((2, 3, 4, 5)), chunks=2), size=3)


def test_selection_filters_of_cupy_chunks_on_gpu(rng):
    """CuPy chunks through the rank rows (a row named too: the arguments' check runs auto on the
    CPU): bit for bit against memhier.ndimage on the whole CuPy array."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    from memhier import ndimage as mnd
    x = cp.asarray((rng.standard_normal((301, 290)) * 40).astype(np.float32))
    dx = da.from_array(x, chunks=(101, 90), asarray=False)  # last chunks 99 and 20: past the halo of 15
    for name, kw in (("median_filter", dict(size=5, variant="network")), ("grey_opening", dict(size=(7, 3))),
                     ("maximum_filter", dict(size=15, mode="wrap"))):
        got = getattr(mdask, name)(dx, **kw).compute(scheduler="threads")
        assert isinstance(got, cp.ndarray)
        assert bool(cp.array_equal(got, getattr(mnd, name)(x, **kw))), name


def test_selection_filters_of_bool_images_and_refusals(rng):
    from memhier import ndimage as mnd
    x = rng.random((40, 50)) > 0.5
    dx = da.from_array(x, chunks=(15, 20))
    for name in ("grey_erosion", "white_tophat", "black_tophat", "median_filter"):
        np.testing.assert_array_equal(getattr(mdask, name)(dx, size=3).compute(), getattr(mnd, name)(x, size=3),
                                      err_msg=name)
    f = da.from_array(rng.standard_normal((40, 50)).astype(np.float32), chunks=(15, 20))
    with pytest.raises(memhier.Unsupported, match="structure on a float16 image"):
        mdask.grey_erosion(f.astype(np.float16), structure=np.ones((3, 3)))
    with pytest.raises(memhier.Unsupported, match="one mode"):
        mdask.minimum_filter(f, size=3, mode=["reflect", "wrap"])
    with pytest.raises(ValueError, match="size, footprint, or structure"):
        mdask.median_filter(f)
    with pytest.raises(ValueError, match="rank not within"):
        mdask.rank_filter(f, 9, size=3)
    with pytest.raises(ValueError, match="rechunk"):
        mdask.median_filter(f, size=(31, 3))
    with pytest.raises(memhier.Unsupported, match="cval: 2.5 with a uint8 image"):
        mdask.median_filter(f.astype(np.uint8), size=3, mode="constant", cval=2.5)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.uint32, np.uint64])
def test_ndimage_passes_of_wide_dtypes(rng, dtype):
    """Images memhier.ndimage computes in float64 (float64, the integers of 32 and 64 bits): the
    filters chunk by chunk, bit for bit against the single call, in every mode (a constant
    border the integer window holds), correlate's float64 terms, the sums of two terms as numpy
    adds them (integers wrapping), and a pass past 127 taps."""
    from memhier import ndimage as mnd
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal((70, 90)) * np.exp2(rng.integers(-30, 30, (70, 90)))
    else:
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -2**40), min(info.max, 2**40), (70, 90)).astype(dtype)
    dx = da.from_array(x, chunks=(25, 31))
    for mode in ("reflect", "mirror", "nearest", "constant", "wrap"):
        w = rng.standard_normal((3, 5)) * np.exp2(rng.integers(-20, 20, (3, 5)))
        cases = [(lambda f, a: f.correlate(a, w, mode=mode, cval=3, origin=(1, -2))),
                 (lambda f, a: f.convolve(a, w[:, :4], mode=mode, cval=3)),
                 (lambda f, a: f.gaussian_filter(a, 1.5, mode=mode, cval=3)),
                 (lambda f, a: f.uniform_filter(a, (3, 5), mode=mode, cval=3)),
                 (lambda f, a: f.sobel(a, 0, mode=mode, cval=3)),
                 (lambda f, a: f.correlate1d(a, [0.25, 0.5, 1.5, -1.0], 0, mode=mode, cval=3, origin=1)),
                 (lambda f, a: f.laplace(a, mode=mode, cval=3)),
                 (lambda f, a: f.gaussian_laplace(a, 1.2, mode=mode, cval=3))]
        for i, run in enumerate(cases):
            got = run(mdask, dx).compute()
            assert got.dtype == np.dtype(dtype), f"{mode} case {i}"
            np.testing.assert_array_equal(got, run(mnd, x), err_msg=f"{mode} case {i}")
    wide = np.concatenate([x] * 6, axis=1)[:40]  # 161 taps along rows of 540 in chunks of 270
    np.testing.assert_array_equal(mdask.correlate1d(da.from_array(wide, chunks=(40, 270)), np.ones(161) / 161, 1).compute(),
                                  mnd.correlate1d(wide, np.ones(161) / 161, 1))


def test_bool_images_equal_one_call(rng):
    """Bool images (masks) through memhier.dask's filters: their bytes bit for bit against the single
    call (scipy's bytes, test_ndimage), every mode; a constant border outside a byte refused."""
    from memhier import ndimage as mnd
    x = rng.random((60, 70)) > 0.5
    x[10:30, 10:40] = True
    dx = da.from_array(x, chunks=(25, 30))
    cases = [("correlate", (np.ones((3, 3)) / 9,)), ("gaussian_filter", (1.0,)), ("uniform_filter", (3,)),
             ("sobel", ()), ("laplace", ()), ("gaussian_laplace", (1.0,)), ("correlate1d", (np.ones(3) / 3,))]
    for name, args in cases:
        for mode in ("reflect", "constant", "wrap", "mirror", "nearest"):
            got = getattr(mdask, name)(dx, *args, mode=mode).compute(scheduler="sync")
            one = getattr(mnd, name)(x, *args, mode=mode)
            assert got.dtype == one.dtype == np.bool_, name
            np.testing.assert_array_equal(got.view(np.uint8), one.view(np.uint8), err_msg=f"{name} {mode}")
    with pytest.raises(memhier.Unsupported, match="cval: 2.5 with a bool image"):
        mdask.sobel(dx, mode="constant", cval=2.5)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_filters_equal_one_call(rng, dtype):
    """Complex images and complex weights through memhier.dask's filters as real filters of their
    parts: bit for bit against memhier.ndimage's single call (a correlation conjugating complex
    weights, a convolution not; a complex cval's parts to the parts), and near scipy's."""
    import scipy.ndimage as nd
    from memhier import ndimage as mnd
    part = np.float32 if dtype == np.complex64 else np.float64
    x = (rng.standard_normal((40, 50)) + 1j * rng.standard_normal((40, 50))).astype(dtype)
    real = rng.standard_normal((40, 50)).astype(part)
    w = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    w1 = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    cases = [("correlate", x, (w.real,), {}), ("correlate", x, (w,), {"mode": "constant", "cval": 1 - 2j}),
             ("correlate", real, (w,), {}), ("convolve", x, (w,), {}), ("correlate1d", x, (w1,), {"axis": 0}),
             ("convolve1d", x, (w1,), {}), ("gaussian_filter", x, (1.2,), {"mode": "constant", "cval": 1 + 2j}),
             ("uniform_filter", x, (3,), {}), ("sobel", x, (), {}), ("prewitt", x, (), {}), ("laplace", x, (), {}),
             ("gaussian_laplace", x, (1.0,), {})]
    for name, image, args, kw in cases:
        got = getattr(mdask, name)(da.from_array(image, chunks=(20, 25)), *args, **kw).compute(scheduler="sync")
        one = getattr(mnd, name)(image, *args, **kw)
        what = f"{name} {image.dtype} {kw}"
        assert got.dtype == one.dtype == np.promote_types(image.dtype, np.complex64), what
        np.testing.assert_array_equal(got, one, err_msg=what)
        np.testing.assert_allclose(got, getattr(nd, name)(image, *args, **kw), rtol=1e-4, atol=1e-4, err_msg=what)
    with pytest.raises(ValueError, match="a complex cval needs a complex image"):
        mdask.correlate(da.from_array(real, chunks=(20, 25)), w, cval=1j)
    with pytest.raises(TypeError, match="cval: expected a number"):  # as the single call refuses it
        mdask.sobel(da.from_array(real, chunks=(20, 25)), cval=1j)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64, np.int64, np.int8, np.uint8, np.uint16,
                                   np.uint32, np.uint64, np.bool_, np.float16])
def test_reductions_are_numpys(rng, dtype):
    """sum, mean, min, max, argmin, argmax over every axis and the whole array, chunks of uneven
    sizes, NaN and ties; exact but for float sums and means (per-chunk float32 rounding; float64
    sums in another order than numpy's). int64 and uint64 values 1 apart past 2^60 (one float64)
    in different chunks: the arg forms compare them exactly."""
    x = rng.uniform(-1000, 1000, (203, 57, 6))
    x.reshape(-1)[::11] = x.reshape(-1)[0]
    kind = np.dtype(dtype).kind
    if kind == "b":
        x = x > 0
    elif kind in "iu":
        info = np.iinfo(dtype)
        x = np.clip((x + (1000 if kind == "u" else 0)) * (info.max / 2000 if info.bits < 64 else 1e5),
                    info.min, info.max).astype(dtype)
        if info.bits == 64:
            x[0, 0, 0], x[150, 50, 5] = dtype(2 ** 60 + 1), dtype(2 ** 60 + 2)
    else:
        x = x.astype(dtype)
    if kind == "f":
        x[50, 3, 2] = x[170, 40, 1] = np.nan
    d = da.from_array(x, chunks=(64, 20, 4))
    for name in ("sum", "mean", "min", "max", "argmin", "argmax"):
        for axis in (None, 0, 1, 2, -1):
            got = getattr(mdask, name)(d, axis=axis).compute(scheduler="sync")
            want = getattr(np, name)(x, axis=axis)
            if name == "mean" and dtype == np.float32:
                want = np.mean(x.astype(np.float64), axis=axis).astype(np.float32)
            what = f"{name} {np.dtype(dtype)} axis={axis}"
            assert np.asarray(got).dtype == np.asarray(want).dtype, what
            if name in ("sum", "mean") and dtype == np.float16:  # numpy adds float16 rows in float16
                np.testing.assert_allclose(np.asarray(got, np.float64), getattr(np, name)(x.astype(np.float64), axis=axis),
                                           rtol=2e-3, atol=1e-2, equal_nan=True, err_msg=what)
            elif name in ("sum", "mean") and dtype == np.float32:
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-2, equal_nan=True, err_msg=what)
            elif (name in ("sum", "mean") and dtype == np.float64) or (name == "mean" and x.itemsize == 8):
                # 64-bit integers' means: the exact sum over the count, numpy's the values' double sum
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9, equal_nan=True, err_msg=what)
            else:
                np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("dtype", [np.float64, np.int16, np.uint32, np.int64])
def test_weighted_histograms_of_other_weight_dtypes(rng, dtype):
    """Weights of other dtypes (memhier.histogram's float32 parts): numpy's dtype, the chunks' sums
    near the single call's (integer sums exact where float64 holds them)."""
    x = rng.uniform(-1.2, 1.2, (300, 170)).astype(np.float32)
    w = (rng.standard_normal(x.shape) * 1e3).astype(dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(0, 30000, x.shape).astype(dtype)
    got, _ = mdask.histogram(da.from_array(x, chunks=(64, 50)), 64, (-1.0, 1.0), weights=da.from_array(w, chunks=(100, 170)))
    got = got.compute(scheduler="sync")
    one, _ = memhier.histogram(x, 64, (-1.0, 1.0), weights=w)
    assert got.dtype == one.dtype == np.dtype(dtype)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, one, rtol=1e-12)
    else:
        np.testing.assert_array_equal(got, one)


def test_weighted_histograms_within_bound(rng):
    x = rng.uniform(-1.2, 1.2, (300, 170)).astype(np.float32)
    w = rng.uniform(-1, 1, x.shape).astype(np.float32)
    dx, dw = da.from_array(x, chunks=(64, 50)), da.from_array(w, chunks=(100, 170))
    got, edges = mdask.histogram(dx, 64, (-1.0, 1.0), weights=dw)
    want, want_edges = np.histogram(x, 64, (-1.0, 1.0), weights=w.astype(np.float64))
    np.testing.assert_array_equal(edges, want_edges)
    got = got.compute(scheduler="sync")
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6, atol=1e-6)
    v = rng.integers(-2, 260, 100_003).astype(np.int32)
    wv = rng.uniform(-1, 1, v.size).astype(np.float32)
    inside = (v >= 0) & (v < 256)
    got = mdask.bincount(da.from_array(v, chunks=7000), 256, weights=da.from_array(wv, chunks=9000))
    np.testing.assert_allclose(got.compute(scheduler="sync"),
                               np.bincount(v[inside], wv[inside].astype(np.float64), minlength=256), rtol=1e-12, atol=1e-12)


# ---- pipeline: several filters in one task a chunk ----


def pipeline_steps(mode):
    from memhier import ndimage as mnd
    return [("gaussian_filter", {"sigma": 2.5, "mode": mode, "cval": 3.0}),
            (mnd.sobel, {"axis": 0, "mode": mode, "cval": -1.0}),
            ("uniform_filter", (4, None, mode, 0.5, -1)),  # even size, origin at its limit
            ("correlate1d", {"weights": [0.25, 0.5, 1.0, -0.75], "axis": 1, "mode": mode, "origin": 1})]


def one_call_after_another(image, steps):
    from memhier import ndimage as mnd
    out = image
    for fn, args in steps:
        fn = getattr(mnd, fn) if isinstance(fn, str) else fn
        out = fn(out, *args) if isinstance(args, tuple) else fn(out, **args)
    return out


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "constant", "grid-constant", "grid-mirror", "wrap",
                                  "grid-wrap"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.float64])
def test_pipeline_equals_the_calls_in_turn(rng, mode, dtype):
    """A pipeline of four filters (a Gaussian, a Sobel, an even uniform filter with an origin, a
    1-D correlation along the rows) against the four memhier.ndimage calls in turn on the whole
    image: bit for bit, at every seam of uneven chunks and at the array's edges, one task a chunk
    (the graph's one map_overlap layer)."""
    image = (rng.random((301, 257)) * 200).astype(dtype)
    steps = pipeline_steps(mode)
    darr = da.from_array(image, chunks=(70, (100, 57, 100)))
    got = mdask.pipeline(darr, steps)
    assert got.dtype == image.dtype
    layers = [name for name in got.dask.layers if not name.startswith("array-")]
    assert layers == [got.name] and got.name.startswith("memhier-pipeline-"), layers  # one task a chunk, every step
    np.testing.assert_array_equal(got.compute(scheduler="sync"), one_call_after_another(image, steps))


@pytest.mark.parametrize("mode", ["reflect", "wrap", "constant"])
def test_pipeline_reads_through_chunks_narrower_than_its_depth(rng, mode):
    """A window wider than its neighbours (chunks of 5 x 7 under a depth of 11): each window reads
    the chunks two and three away too (across the far edge with wrap); one chunk along an axis
    wraps onto itself. Bit for bit the calls in turn."""
    image = (rng.random((43, 50)) * 100).astype(np.float32)
    steps = [("gaussian_filter", {"sigma": 2.5, "mode": mode}), ("sobel", {"axis": 1, "mode": mode})]
    want = one_call_after_another(image, steps)
    for chunks in ((5, 7), (43, 9), (6, 50)):
        got = mdask.pipeline(da.from_array(image, chunks=chunks), steps)
        assert got.chunks == da.from_array(image, chunks=chunks).chunks
        np.testing.assert_array_equal(got.compute(scheduler="sync"), want, err_msg=f"{mode} {chunks}")


def test_pipeline_depth_decides_the_seams(rng):
    """depth given, or a callable's own reach. Too small a depth shows at the seams (the test can
    fail); the steps' own reach (depth None) and any larger one give the calls' result."""
    from memhier import ndimage as mnd
    image = rng.random((200, 180)).astype(np.float32)
    darr = da.from_array(image, chunks=(50, 60))
    want = mnd.laplace(mnd.gaussian_filter(image, 3.0))
    steps = [("gaussian_filter", {"sigma": 3.0}), "laplace"]
    np.testing.assert_array_equal(mdask.pipeline(darr, steps).compute(scheduler="sync"), want)
    np.testing.assert_array_equal(mdask.pipeline(darr, steps, depth=(20, 17)).compute(scheduler="sync"), want)
    assert not np.array_equal(mdask.pipeline(darr, steps, depth=5).compute(scheduler="sync"), want)
    own = mdask.pipeline(darr, [lambda w: mnd.laplace(mnd.gaussian_filter(w, 3.0))], depth=13)
    np.testing.assert_array_equal(own.compute(scheduler="sync"), want)
    # a callable with its own reach beside a named filter: a Gaussian's gradient magnitude
    def magnitude(w, mode):
        return np.hypot(mnd.sobel(w, 0, mode=mode), mnd.sobel(w, 1, mode=mode))
    got = mdask.pipeline(darr, [("gaussian_filter", {"sigma": 3.0}), (magnitude, ("nearest",), 1)])
    np.testing.assert_array_equal(got.compute(scheduler="sync"), magnitude(mnd.gaussian_filter(image, 3.0), "nearest"))


def test_pipeline_refusals(rng):
    from memhier import ndimage as mnd
    darr = da.from_array(rng.random((64, 64)).astype(np.float32), chunks=32)
    with pytest.raises(ValueError, match="wrapping one"):
        mdask.pipeline(darr, [("sobel", {"mode": "wrap"}), ("sobel", {"mode": "reflect"})])
    with pytest.raises(ValueError, match="give the step's reach"):
        mdask.pipeline(darr, [lambda w: w])
    with pytest.raises(ValueError, match="not one of the filters"):
        mdask.pipeline(darr, ["median_filter"])
    with pytest.raises(ValueError, match="output="):
        mdask.pipeline(darr, [(mnd.sobel, {"output": np.float64})])
    with pytest.raises(ValueError, match="no step"):
        mdask.pipeline(darr, [])
    with pytest.raises(ValueError, match="2-D"):
        mdask.pipeline(da.ones((4, 4, 4), dtype=np.float32), ["sobel"])
    with pytest.raises(memhier.InvalidArgument, match="depth = -1"):
        mdask.pipeline(darr, ["sobel"], depth=-1)
    with pytest.raises(TypeError, match="depth"):
        mdask.pipeline(darr, ["sobel"], depth=2.5)
    with pytest.raises(memhier.InvalidArgument, match="reach = -2"):
        mdask.pipeline(darr, [(lambda w: w, {}, -2)])


def test_pipeline_of_cupy_chunks_on_gpu(rng):
    """The pipeline with CuPy chunks on one GPU (dask's threaded scheduler): bit for bit the calls
    in turn on the whole CuPy image."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    for mode in ("reflect", "wrap"):
        image = cp.asarray((rng.random((1031, 777)) * 200).astype(np.float32))
        steps = pipeline_steps(mode)
        got = mdask.pipeline(da.from_array(image, chunks=(300, 400), asarray=False), steps).compute(scheduler="threads")
        assert isinstance(got, cp.ndarray)
        assert bool(cp.array_equal(got, one_call_after_another(image, steps))), mode


@pytest.mark.parametrize("mode", ["reflect", "constant", "mirror", "wrap"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_pipeline_histogram_counts_the_calls_in_turn(rng, mode, dtype):
    """pipeline_histogram: the histogram of the four filters' result, each chunk counted in the
    task that filters it (uneven chunks, some narrower than the halo: read through), equal
    to memhier.histogram of the calls in turn on the whole image, count for count; the graph
    stores no filtered image (its one per-chunk layer returns counts)."""
    image = (rng.random((301, 257)) * 200).astype(dtype)
    steps = pipeline_steps(mode)
    whole = one_call_after_another(image, steps)
    lo, hi = float(whole.min()), float(whole.max())
    want, want_edges = memhier.histogram(whole, 37, range=(lo, hi))
    darr = da.from_array(image, chunks=(70, (100, 57, 100)))
    counts, edges = mdask.pipeline_histogram(darr, steps, 37, range=(lo, hi))
    got = counts.compute(scheduler="sync")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(edges, want_edges)
    assert int(got.sum()) == image.size  # the range holds every value: none counted twice or missed
    per_chunk = [name for name in counts.dask.layers if name.startswith("memhier-pipeline-histogram-")]
    assert len(per_chunk) == 1, list(counts.dask.layers)
    with pytest.raises(ValueError, match="range"):
        mdask.pipeline_histogram(darr, steps, 37)


def test_pipeline_streams_numpy_chunks_through_the_gpu(rng):
    """on_gpu: a host image of NumPy chunks (a memmap's kind) streamed through the GPU a window at
    a time, four worker threads' copies and kernels in flight together: NumPy chunks back, bit
    for bit the calls in turn run on the GPU on the whole image, every mode's seams and edges, and
    pipeline_histogram's counts (only they copied back) those of that result; CuPy chunks refused
    by name (they are on a GPU already)."""
    from conftest import has_cuda_device
    if not has_cuda_device():
        pytest.skip("no CUDA device")
    cp = pytest.importorskip("cupy")
    for mode, dtype in (("reflect", np.float32), ("wrap", np.float32), ("constant", np.uint8), ("mirror", np.float64)):
        image = (rng.random((1031, 777)) * 200).astype(dtype)
        steps = pipeline_steps(mode)
        streamed = mdask.pipeline(da.from_array(image, chunks=(300, 400)), steps, on_gpu=True)
        got = streamed.compute(scheduler="threads", num_workers=4)
        assert type(got) is np.ndarray and got.dtype == image.dtype
        want = cp.asnumpy(one_call_after_another(cp.asarray(image), steps))
        np.testing.assert_array_equal(got, want, err_msg=f"{mode} {np.dtype(dtype).name}")
        lo, hi = float(want.min()), float(want.max())
        counts, _ = mdask.pipeline_histogram(da.from_array(image, chunks=(300, 400)), steps, 50, (lo, hi), on_gpu=True)
        np.testing.assert_array_equal(counts.compute(scheduler="threads", num_workers=4),
                                      memhier.histogram(want, 50, range=(lo, hi))[0], err_msg=f"{mode} histogram")
    with pytest.raises(ValueError, match="on_gpu"):
        mdask.pipeline(da.from_array(cp.asarray(image), chunks=300, asarray=False), ["sobel"], on_gpu=True)


def test_pipeline_example_runs_on_numpy_chunks(tmp_path):
    """examples/dask_pipeline.py's NumPy form: the Gaussian, the gradient's magnitude and its
    histogram, every value counted and the filtered corner equal to the calls in turn; and with
    --file, the image written to a raw file and read back a band a task."""
    import os
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "dask_pipeline.py")
    path = tmp_path / "image.raw"
    for extra in ([], [f"--file={path}"], [f"--file={path}"]):  # the file written, then read as it is
        done = subprocess.run([sys.executable, script, "--numpy", *extra, "1024"], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        assert "1048576 values counted, equal to the calls in turn: True" in done.stdout, done.stdout
    assert path.stat().st_size == 1024 * 1024 * 4

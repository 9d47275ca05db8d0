"""CuPy arrays and PyTorch CUDA tensors, used in place on the caller's stream; NumPy arrays run
on a GPU with device=0. Skipped only where there is no CUDA device, or no CuPy / PyTorch."""
import contextlib

import numpy as np
import pytest

import memhier
from conftest import assert_close, correlate1d, correlate2d, has_cuda_device, run_in_threads
import reference

pytestmark = pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")


class Kind:
    """What a test needs of CuPy or PyTorch: to and from NumPy, the device pointer, streams."""

    def __init__(self, name):
        self.name = name
        self.xp = pytest.importorskip(name)

    def put(self, a):
        return self.xp.asarray(a) if self.name == "cupy" else self.xp.from_numpy(np.ascontiguousarray(a)).cuda()

    def get(self, a):
        return self.xp.asnumpy(a) if self.name == "cupy" else a.cpu().numpy()

    def ptr(self, a):
        return a.data.ptr if self.name == "cupy" else a.data_ptr()

    def is_mine(self, a):
        return isinstance(a, self.xp.ndarray if self.name == "cupy" else self.xp.Tensor)

    def device_of(self, a):
        return a.device.id if self.name == "cupy" else a.device.index

    def new_stream(self):
        if self.name == "cupy":
            return self.xp.cuda.Stream(non_blocking=True)
        return self.xp.cuda.Stream()

    def on(self, stream):
        return stream if self.name == "cupy" else self.xp.cuda.stream(stream)

    def synchronize(self, stream):
        stream.synchronize()


@pytest.fixture(params=["cupy", "torch"])
def kind(request):
    return Kind(request.param)


def f32(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


@pytest.mark.parametrize("pad", ["valid", "same", "full"])
@pytest.mark.parametrize("n,k", [(1, 1), (1000, 7), (100_003, 2047), (70_001, 4095)])
def test_conv1d(kind, rng, pad, n, k):
    x, m = f32(rng, n), f32(rng, k)
    y = memhier.conv1d(kind.put(x), kind.put(m), pad=pad)
    assert kind.is_mine(y) and kind.device_of(y) == 0
    ref, mag = correlate1d(x, m, pad)
    assert_close(kind.get(y), ref, mag, k, f"{pad} n={n} k={k}")


@pytest.mark.parametrize("per_signal", [False, True])
def test_conv1d_batched(kind, rng, per_signal):
    batch, n, k = 6, 5000, 129
    x = f32(rng, batch, n)
    m = f32(rng, batch, k) if per_signal else f32(rng, k)
    y = kind.get(memhier.conv1d(kind.put(x), kind.put(m), pad="same"))
    for b in range(batch):
        ref, mag = correlate1d(x[b], m[b] if per_signal else m, "same")
        assert_close(y[b], ref, mag, k, f"signal {b}")


@pytest.mark.parametrize("variant", ["auto", "conv2d/regtile", "conv2d/cudnn"])
def test_conv2d(kind, rng, variant):
    im, f = f32(rng, 301, 517), f32(rng, 11, 5)
    try:
        y = memhier.conv2d(kind.put(im), kind.put(f), pad="same", variant=variant)
    except memhier.Unsupported as e:  # a vendor row this machine's library was built without
        pytest.skip(str(e))
    ref, mag = correlate2d(im, f, "same")
    assert_close(kind.get(y), ref, mag, f.size, variant)


def test_transpose_and_matmul(kind, rng):
    a, b = f32(rng, 333, 129), f32(rng, 129, 517)
    np.testing.assert_array_equal(kind.get(memhier.transpose(kind.put(a))), a.T)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert_close(kind.get(memhier.matmul(kind.put(a), kind.put(b))), ref, mag, 129, "matmul")


def test_matmul_float64(kind, rng):
    """A float64 product on the device in FP64 (cublas-dgemm), within k + 2 float64 epsilons of
    sum |a||b| on entries over 40 binades; the float32 rows refuse it by name."""
    from test_cpu import float64_product_error
    a = rng.standard_normal((333, 129)) * np.exp2(rng.integers(-20, 20, (333, 129)))
    b = rng.standard_normal((129, 517)) * np.exp2(rng.integers(-20, 20, (129, 517)))
    got = memhier.matmul(kind.put(a), kind.put(b))
    assert kind.is_mine(got)
    assert float64_product_error(a, b, kind.get(got)) <= 129 + 2
    with pytest.raises(memhier.Unsupported, match="does not compute float64 products"):
        memhier.matmul(kind.put(a), kind.put(b), variant="cublas")


def test_matmul_float16(kind, rng):
    """A float16 product on the device (cublas-f16: tensor cores, FP32 accumulation), float16 out,
    within the FP32 sum's bound and the final rounding."""
    from test_cpu import float16_product_error
    a = (rng.uniform(0.5, 1.5, (333, 129)) * rng.choice([-1, 1], (333, 129))).astype(np.float16)
    b = (rng.uniform(0.5, 1.5, (129, 517)) * rng.choice([-1, 1], (129, 517))).astype(np.float16)
    got = memhier.matmul(kind.put(a), kind.put(b))
    assert kind.is_mine(got)
    assert float16_product_error(a, b, kind.get(got)) <= 1


def test_matmul_bfloat16_torch(rng):
    """A bfloat16 product of PyTorch tensors (cublas-bf16: FP32 accumulation), bfloat16 out: each
    output within (k + 2) float32 epsilons of sum |a||b| plus half a bfloat16 ulp of the exact sum
    of the bfloat16 inputs' products."""
    torch = pytest.importorskip("torch")
    a = torch.from_numpy(rng.uniform(-1.5, 1.5, (333, 129)).astype(np.float32)).to("cuda", torch.bfloat16)
    b = torch.from_numpy(rng.uniform(-1.5, 1.5, (129, 517)).astype(np.float32)).to("cuda", torch.bfloat16)
    got = memhier.matmul(a, b)
    assert got.dtype == torch.bfloat16 and got.is_cuda
    a64, b64 = a.cpu().double().numpy(), b.cpu().double().numpy()
    exact, magnitude = a64 @ b64, np.abs(a64) @ np.abs(b64)
    bound = (129 + 2) * np.finfo(np.float32).eps * magnitude + 2.0 ** -8 * np.abs(exact)
    assert np.all(np.abs(got.cpu().double().numpy() - exact) <= bound)
    with pytest.raises(memhier.Unsupported, match="does not compute bfloat16 products"):
        memhier.matmul(a, b, variant="cublas")


def test_reduce_stays_on_device(kind, rng):
    x = f32(rng, 4_194_304)
    s = memhier.reduce_sum(kind.put(x))
    assert kind.is_mine(s) and tuple(s.shape) == () and kind.device_of(s) == 0
    assert abs(float(kind.get(s)) - x.astype(np.float64).sum()) <= 1e-4 * np.abs(x).sum()


def test_histograms(kind, rng):
    values = rng.integers(-3, 300, 200_001).astype(np.int32)
    counts, outside = memhier.bincount(kind.put(values), 256, return_outside=True)
    inside = values[(values >= 0) & (values < 256)]
    np.testing.assert_array_equal(kind.get(counts), np.bincount(inside, minlength=256))
    assert int(kind.get(outside)) == values.size - inside.size
    data = rng.integers(0, 256, 100_000).astype(np.uint8)
    np.testing.assert_array_equal(kind.get(memhier.histogram_bytes(kind.put(data))), np.bincount(data, minlength=256))


def test_out_in_place_and_no_input_copy(kind, rng):
    x, m = kind.put(f32(rng, 1 << 20)), kind.put(f32(rng, 31))
    out = kind.put(np.full((1 << 20) - 30, np.nan, np.float32))
    x_ptr, out_ptr = kind.ptr(x), kind.ptr(out)
    if kind.name == "cupy":
        pool = kind.xp.get_default_memory_pool()
        before = pool.used_bytes()
    y = memhier.conv1d(x, m, out=out)
    assert y is out and kind.ptr(out) == out_ptr and kind.ptr(x) == x_ptr
    if kind.name == "cupy":  # the binding allocated nothing: no copy of x, no staging
        assert pool.used_bytes() == before
    ref, mag = correlate1d(kind.get(x), kind.get(m), "valid")
    assert_close(kind.get(out), ref, mag, 31)


def _slow_fill(kind, n, value):
    """An array of n floats equal to `value`, written by a deliberately slow kernel (tens of ms)
    queued on the current stream: work on another stream would read it unfinished."""
    if kind.name == "cupy":
        spin = kind.xp.ElementwiseKernel("float32 v", "float32 y",
                                         "float a = v; for (int i = 0; i < 200000; ++i) a = a * 0.9999999f + 1e-7f * v;"
                                         "y = a == 12345.0f ? 0.0f : v;",
                                         "memhier_test_spin")
        return spin(kind.xp.full(n, value, kind.xp.float32))
    torch = kind.xp
    t = torch.zeros(n, device="cuda")
    junk = torch.randn(4096, 4096, device="cuda")
    for _ in range(20):  # ~20 matmuls of 4096^2 before the fill
        junk = junk @ junk * 1e-3
    return t.add_(value + 0.0 * junk[0, 0])


def test_callers_stream_is_used(kind):
    stream = kind.new_stream()
    n, k = 1 << 22, 3
    with kind.on(stream):
        x = _slow_fill(kind, n, 1.0)
        m = kind.put(np.ones(k, np.float32))
        y = memhier.conv1d(x, m)  # must queue behind the slow fill on this stream
        s = memhier.reduce_sum(y)
    kind.synchronize(stream)
    assert float(kind.get(s)) == pytest.approx(3.0 * (n - k + 1), rel=1e-6)
    assert np.all(kind.get(y) == 3.0)


def test_numpy_on_gpu_with_device(rng):
    x, m = f32(rng, 50_000), f32(rng, 255)
    y = memhier.conv1d(x, m, pad="full", device=0)
    assert isinstance(y, np.ndarray)
    ref, mag = correlate1d(x, m, "full")
    assert_close(y, ref, mag, 255)
    a = f32(rng, 100, 37)
    np.testing.assert_array_equal(memhier.transpose(a, device=0), a.T)
    assert memhier.reduce_sum(np.ones(1000, np.float32), device=0) == 1000


def test_gpu_errors(kind, rng):
    x = kind.put(f32(rng, 100))
    with pytest.raises(TypeError, match="mask is a numpy"):
        memhier.conv1d(x, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="device = 'cpu'"):
        memhier.conv1d(x, kind.put(np.ones(3, np.float32)), device="cpu")
    with pytest.raises(memhier.Unsupported):  # a CPU row given device memory
        memhier.conv1d(x, kind.put(np.ones(3, np.float32)), variant="conv1d/cpu-omp")
    out = kind.put(np.full(98, 5.0, np.float32))
    with pytest.raises(memhier.InvalidArgument, match="variant"):
        memhier.conv1d(x, kind.put(np.ones(3, np.float32)), variant="nope", out=out)
    assert np.all(kind.get(out) == 5.0)
    with pytest.raises(ValueError, match="not C-contiguous"):
        memhier.transpose(kind.put(f32(rng, 10, 10)).T)


def test_select_and_info_on_gpu():
    assert memhier.select("matmul", m=4096, k=4096, n=4096).startswith("matmul/")
    assert memhier.select("conv1d", n=1 << 24, k=2047).startswith("conv1d/")
    facts = memhier.info(0, ceilings=True)
    assert facts["cc_major"] >= 7 and facts["copy_gbps"] > 0 and facts["fma_gflops"] > 0


def _stream_jobs(kind, rng, count):
    """Per data set: calls that use the context's workspace (matmul's wgmma rows, the
    deterministic sum, conv1d's FFT rows) as closures returning their outputs."""
    jobs = []
    for _ in range(count):
        a, b = kind.put(f32(rng, 1024, 2048)), kind.put(f32(rng, 2048, 1024))
        x, m = kind.put(f32(rng, 1 << 22)), kind.put(f32(rng, 2047))
        jobs.append((lambda a=a, b=b: memhier.matmul(a, b),
                     lambda x=x: memhier.reduce_sum(x, variant="deterministic"),
                     lambda x=x, m=m: memhier.conv1d(x, m, pad="same")))
    return jobs


@pytest.mark.parametrize("nstreams", [2, 8])
def test_streams_alternated_without_synchronizing(kind, rng, nstreams):
    """Calls alternated over streams of one thread with nothing between them give each data set
    what it gives alone: the context's scratch is fenced between streams."""
    jobs = _stream_jobs(kind, rng, nstreams)
    alone = [[kind.get(f()) for f in fs] for fs in jobs]
    streams = [kind.new_stream() for _ in range(nstreams)]
    got = [None] * nstreams
    for _ in range(2):
        for s, fs in enumerate(jobs):
            with kind.on(streams[s]):
                got[s] = [f() for f in fs]
    for s in range(nstreams):
        kind.synchronize(streams[s])
        for ref, out in zip(alone[s], got[s]):
            np.testing.assert_allclose(kind.get(out), ref, rtol=1e-5, atol=1e-4 * float(np.max(np.abs(ref))))


def test_threads_with_their_own_streams(kind, rng):
    jobs = _stream_jobs(kind, rng, 4)
    alone = [[kind.get(f()) for f in fs] for fs in jobs]
    got = [None] * 4

    def work(s):
        stream = kind.new_stream()
        with kind.on(stream):
            for _ in range(2):
                got[s] = [f() for f in jobs[s]]
        kind.synchronize(stream)

    run_in_threads(work, 4)
    for s in range(4):
        for ref, out in zip(alone[s], got[s]):
            np.testing.assert_allclose(kind.get(out), ref, rtol=1e-5, atol=1e-4 * float(np.max(np.abs(ref))))


def test_histogram_edges_are_a_new_array_each_call(kind, rng):
    """numpy's edges of a range, kept on the device for a loop's calls: each call returns its own
    array, on any stream."""
    x = f32(rng, 5000)
    d = kind.put(x)
    for step in range(3):
        stream = kind.new_stream() if step == 2 else None
        with kind.on(stream) if stream is not None else contextlib.nullcontext():
            h, e = memhier.histogram(d, bins=16, range=(-1, 1))
            want_h, want_e = np.histogram(x, 16, (-1, 1))
            np.testing.assert_array_equal(kind.get(h), want_h)
            np.testing.assert_array_equal(kind.get(e), want_e)
        if kind.name == "torch":
            e.fill_(7.0)
        else:
            e.fill(7.0)


def test_histogram_arguments_past_a_c_int_on_gpu(kind):
    data = kind.put(np.arange(256, dtype=np.uint8))
    with pytest.raises(memhier.InvalidArgument, match="width = 4294967297"):
        memhier.histogram_bytes(data, 0, 255, 2**32 + 1)
    with pytest.raises(memhier.InvalidArgument, match="bins = "):
        memhier.bincount(kind.put(np.arange(10, dtype=np.int32)), 2**32 + 5)


def test_ndimage_on_device_arrays(kind, rng):
    """memhier.ndimage on CuPy and PyTorch arrays: in place on the device, the same kind back,
    host weights copied by the array's library; against scipy in float64."""
    import scipy.ndimage as nd
    from memhier import ndimage as mnd
    x = f32(rng, 300, 517)
    d = kind.put(x)
    w = rng.standard_normal((7, 5)).astype(np.float32)
    for mode in ("reflect", "mirror", "nearest", "wrap", "constant"):
        got = mnd.correlate(d, w, mode=mode, cval=0.5)
        assert kind.is_mine(got) and kind.device_of(got) == kind.device_of(d)
        want = nd.correlate(x.astype(np.float64), w.astype(np.float64), mode=mode, cval=0.5)
        np.testing.assert_allclose(kind.get(got), want, rtol=1e-5, atol=1e-5 * np.abs(w).sum())
        got = mnd.gaussian_filter(d, (1.5, 2.5), mode=mode)
        want = nd.gaussian_filter(x.astype(np.float64), (1.5, 2.5), mode=mode)
        np.testing.assert_allclose(kind.get(got), want, rtol=1e-5, atol=1e-5)
        got = mnd.sobel(d, 0, mode=mode)
        np.testing.assert_allclose(kind.get(got), nd.sobel(x.astype(np.float64), 0, mode=mode), rtol=1e-5, atol=1e-4)
        got = mnd.gaussian_laplace(d, (1.3, 0.9), mode=mode, cval=0.5)  # both terms in one call: the CPU's bits
        np.testing.assert_array_equal(kind.get(got), mnd.gaussian_laplace(x, (1.3, 0.9), mode=mode, cval=0.5))


def test_ndimage_complex_on_device_arrays(kind, rng):
    """complex64 data on the device: real filters of its parts, the result the same kind of
    complex array on the same device; against scipy in complex128."""
    import scipy.ndimage as nd
    from memhier import ndimage as mnd
    x = (rng.standard_normal((60, 70)) + 1j * rng.standard_normal((60, 70))).astype(np.complex64)
    w = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(np.complex64)
    d = kind.put(x)
    if kind.name == "torch":  # complex data from NumPy and CuPy arrays only: PyTorch's refused, naming it
        for weights in (w, w.real):
            with pytest.raises(memhier.Unsupported, match="input"):
                mnd.correlate(d, weights)
        return
    for got, want in ((mnd.correlate(d, w, mode="constant", cval=1 - 1j),
                       nd.correlate(x.astype(np.complex128), w, mode="constant", cval=1 - 1j)),
                      (mnd.convolve(d, kind.put(w)), nd.convolve(x.astype(np.complex128), w)),
                      (mnd.gaussian_filter(d, 1.5), nd.gaussian_filter(x.astype(np.complex128), 1.5))):
        assert kind.is_mine(got) and kind.device_of(got) == kind.device_of(d) and got.dtype == x.dtype
        np.testing.assert_allclose(kind.get(got), want, rtol=1e-5, atol=1e-5 * 4 * np.abs(w).sum())


def test_ndimage_kept_plans_follow_the_weights(kind, rng):
    """A loop of correlate calls keeps its plan: device weights changed in place between calls,
    NumPy weights changed in place, and a call on another stream each get this call's filter."""
    from memhier import ndimage as mnd
    mnd._PREPARED.clear()  # this test's plans alone (checked below)
    x = f32(rng, 48, 61)
    w = rng.standard_normal((5, 5)).astype(np.float32)
    d, dw = kind.put(x), kind.put(w)
    for step in range(3):
        want_device = correlate2d_mode_reference(x, kind.get(dw))
        assert_close(kind.get(mnd.correlate(d, dw, mode="reflect")), *want_device, 25, f"device weights, step {step}")
        dw += 1.0  # on the caller's stream, before the next call
        want_host = correlate2d_mode_reference(x, w)
        assert_close(kind.get(mnd.correlate(d, w, mode="reflect")), *want_host, 25, f"NumPy weights, step {step}")
        w[step, step] -= 2.0
    stream = kind.new_stream()
    with kind.on(stream):
        got = mnd.correlate(d, w, mode="reflect")
        stream.synchronize()
    assert_close(kind.get(got), *correlate2d_mode_reference(x, w), 25, "another stream")
    # convolve keeps the plan of device weights too, reversing this call's weights each call
    cw = kind.put(rng.standard_normal((3, 5)).astype(np.float32))
    for step in range(3):
        want = correlate2d_mode_reference(x, kind.get(cw)[::-1, ::-1].copy())
        assert_close(kind.get(mnd.convolve(d, cw, mode="reflect")), *want, 25, f"convolve, device weights, step {step}")
        cw[step % 3, 1] += 3.0
    assert any(how == mnd.FLIPPED for _, how in mnd._PREPARED.values()), "convolve's plan of device weights kept"
    # even weights (scipy mirrors their origin): the kept call gives the first call's bits
    ew = kind.put(rng.standard_normal((4, 6)).astype(np.float32))
    first = kind.get(mnd.convolve(d, ew, mode="mirror", origin=(1, -2)))
    kept = kind.get(mnd.convolve(d, ew, mode="mirror", origin=(1, -2)))
    np.testing.assert_array_equal(kept, first, err_msg="convolve's kept call, even weights")
    # every kept plan here runs its kept call (_KeptCall): weights in place, NumPy's, reversed
    assert all(plan.kept_call is not None for plan, _ in mnd._PREPARED.values())


def test_ndimage_kept_plans_serve_images_of_every_shape(kind, rng):
    """A loop over device images of many shapes keeps one correlate plan for device weights and
    one for NumPy weights (through the library's plan of them), and one gaussian_filter desc:
    each call within the float64 reference's bound and the bits of a call planned anew; shapes
    on either side of auto's row changes, single rows and columns, one pixel."""
    from memhier import _fast, ndimage as mnd
    w = rng.standard_normal((5, 5)).astype(np.float32)
    dw = kind.put(w)
    shapes = [(48, 61), (1, 1), (1, 300), (300, 1), (512, 520), (600, 700), (48, 61)]
    # the compiled entry's records too: an earlier test's, for weights at the address CuPy's pool
    # now gives dw, would replay these calls without the Python path that keeps the plans
    forget = [_fast.RECORDS.clear, mnd._PREPARED.clear, mnd._PASSES.clear, mnd._DESCS.clear]
    for f in forget:
        f()
    images = [f32(rng, *s) for s in shapes]
    got = [[kind.get(r) for r in (mnd.correlate(d, dw), mnd.correlate(d, w), mnd.gaussian_filter(d, 1.5))]
           for d in map(kind.put, images)]
    assert len(mnd._PREPARED) == 2 and all(plan.kept_call is not None for plan, _ in mnd._PREPARED.values())
    assert len(mnd._DESCS) == 1
    for x, results in zip(images, got):
        what = f"shape {x.shape}"
        for r in results[:2]:
            assert_close(r, *correlate2d_mode_reference(x, w), 25, what)
        for f in forget:
            f()
        d = kind.put(x)
        anew = [kind.get(r) for r in (mnd.correlate(d, dw), mnd.correlate(d, w), mnd.gaussian_filter(d, 1.5))]
        for r, a, how in zip(results, anew, ("device weights", "NumPy weights", "gaussian_filter")):
            np.testing.assert_array_equal(r, a, err_msg=f"{what}, {how}")


def test_ndimage_entry_serves_images_of_every_shape(rng):
    """A loop over device images of many shapes replays one record a call (the compiled entry's
    view: the sizes read from each input) where the Python path makes the call alike for every
    shape: correlate and convolve with device and NumPy weights, the separable filters, stacks;
    each call the Python path's bits, on either side of auto's row changes, single rows and
    columns, one pixel; the rank filters' desc too, conv1d and conv2d with a mode, reduce_sum and
    a histogram of a range (outputs of their own shapes)."""
    from memhier import _fast, ndimage as mnd
    if _fast._entry is None:
        pytest.skip("the compiled entry is not built")
    kind = Kind("cupy")
    w = rng.standard_normal((5, 5)).astype(np.float32)
    dw, taps = kind.put(w), kind.put(w[2].copy())
    last_two = (-2, -1)  # a stack's images
    calls = [(mnd.correlate, (dw,), {"mode": "reflect", "axes": last_two}),
             (mnd.correlate, (w,), {"mode": "constant", "cval": 1.5, "axes": last_two}),
             (mnd.convolve, (dw,), {"mode": "wrap", "axes": last_two}), (mnd.correlate1d, (taps,), {"axis": 0}),
             (mnd.convolve1d, (taps,), {"axis": -1, "mode": "mirror"}), (mnd.gaussian_filter, (1.5,), {}),
             (mnd.uniform_filter, (4,), {}), (mnd.sobel, (), {"axis": 0}), (mnd.laplace, (), {}),
             (mnd.gaussian_laplace, (1.3,), {}), (mnd.median_filter, (3,), {}), (mnd.minimum_filter, (5,), {}),
             (mnd.maximum_filter1d, (4,), {"axis": 0}), (memhier.conv1d, (taps,), {"mode": "reflect"}),
             (memhier.conv2d, (dw,), {"mode": "nearest"}), (memhier.reduce_sum, (), {}),
             (memhier.histogram, (64, (-3e4, 3e4)), {})]
    shapes = [(48, 61), (1, 1), (1, 300), (300, 1), (512, 520), (600, 700), (2048, 33), (48, 61)]
    stacks = [(3, 40, 53), (1, 7, 9), (6, 40, 53)]
    for fn, args, kwargs in calls:
        for group in (shapes, stacks) if fn in (mnd.correlate, mnd.convolve) else (shapes,):
            for i, shape in enumerate(group):
                x = f32(rng, *shape)
                x[::2] *= 1e4
                d = kind.put(x)
                misses = _fast.stats()["misses"]
                got = fn(d, *args, **kwargs)
                what = f"{fn.__name__} {kwargs} {shape}"
                if i > 0:
                    assert _fast.stats()["misses"] == misses, f"{what}: not replayed"
                want = fn.__wrapped__(d, *args, **kwargs)
                if fn is memhier.reduce_sum:  # auto's sum may add in another order each call
                    bound = 1e-6 * float(np.abs(x.astype(np.float64)).sum())
                    np.testing.assert_allclose(kind.get(got), kind.get(want), rtol=0, atol=bound, err_msg=what)
                    continue
                for g, v in zip(*((got, want) if fn is memhier.histogram else ((got,), (want,)))):
                    np.testing.assert_array_equal(kind.get(g), kind.get(v), err_msg=what)


def test_ndimage_device_taps_follow_the_weights(kind, rng):
    """correlate1d and convolve1d with weights on the image's device: sepfilter reads them in
    place, the same bits as host taps; a loop that changes them between calls gets each call's."""
    from memhier import ndimage as mnd
    nd = pytest.importorskip("scipy.ndimage")
    x = f32(rng, 37, 70)
    d, dw = kind.put(x), kind.put(rng.standard_normal(9).astype(np.float32))
    for step in range(3):
        w = kind.get(dw).astype(np.float64)
        for axis in (0, 1):
            got = kind.get(mnd.correlate1d(d, dw, axis=axis, mode="reflect"))
            want = nd.correlate1d(x.astype(np.float64), w, axis=axis, mode="reflect")
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"correlate1d step {step} axis {axis}")
            got = kind.get(mnd.convolve1d(d, dw, axis=axis, mode="wrap", origin=1))
            want = nd.convolve1d(x.astype(np.float64), w, axis=axis, mode="wrap", origin=1)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"convolve1d step {step} axis {axis}")
        dw[step] += 2.0  # on the caller's stream, before the next call
    np.testing.assert_array_equal(kind.get(mnd.correlate1d(d, dw, axis=0)),
                                  kind.get(mnd.correlate1d(d, kind.get(dw), axis=0)))
    # device weights read to the host (float64, or a strided view): each call reads their
    # content, though the array's address and shape stay (the compiled entry keys them so)
    for name, held in (("float64", kind.put(rng.standard_normal(5))),
                       ("strided", kind.put(rng.standard_normal(10).astype(np.float32))[::2])):
        for step in range(3):
            w = kind.get(held).astype(np.float64)
            for ours, theirs in ((mnd.correlate1d, nd.correlate1d), (mnd.convolve1d, nd.convolve1d)):
                got = kind.get(ours(d, held, axis=1, mode="nearest"))
                want = theirs(x.astype(np.float64), w, axis=1, mode="nearest")
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5,
                                           err_msg=f"{theirs.__name__}, {name} weights, step {step}")
            held[step] += 2.0


def test_ndimage_entry_replays_on_the_device(rng):
    """The compiled entry's replays of CuPy calls (test_entry.py has NumPy's): the Python path's
    bits, into new outputs and the caller's output arrays (not one that is the input), device
    weights read where they are at each call (changed in place, or another array), the caller's
    current stream, and threads on their own streams."""
    from memhier import _fast, ndimage as mnd
    if _fast._entry is None:
        pytest.skip("the compiled entry is not built")
    kind = Kind("cupy")
    x = f32(rng, 67, 130)
    d, dw = kind.put(x), kind.put(rng.standard_normal((5, 5)).astype(np.float32))
    u8 = kind.put(rng.integers(0, 256, (40, 50, 3)).astype(np.uint8))
    calls = [(mnd.correlate, (d, dw), {"mode": "nearest"}), (mnd.correlate, (d, kind.get(dw)), {}),
             (mnd.correlate1d, (d, dw[0].copy()), {"axis": 0}), (mnd.gaussian_filter, (u8, (2.0, 1.5, 0)), {}),
             (mnd.uniform_filter, (d, 4), {"output": np.float16}), (mnd.sobel, (d,), {"mode": "wrap"}),
             (memhier.conv1d, (d.ravel(), dw[0].copy()), {"pad": "same"}), (memhier.conv2d, (d, dw), {}),
             (memhier.conv2d, (d, dw), {"mode": "reflect", "origin": 1}), (memhier.reduce_sum, (d,), {}),
             (memhier.bincount, (kind.put(rng.integers(-2, 300, 5000).astype(np.int32)), 256), {}),
             (mnd.gaussian_laplace, (d, 1.3), {})]
    for fn, args, kwargs in calls:
        fn(*args, **kwargs)
        misses = _fast.stats()["misses"]
        got = kind.get(fn(*args, **kwargs))
        assert _fast.stats()["misses"] == misses, f"{fn.__name__} ran in Python"
        want = kind.get(fn.__wrapped__(*args, **kwargs))
        if fn is memhier.reduce_sum:  # auto's sum may add in another order each call
            np.testing.assert_allclose(got, want, rtol=1e-6)
        else:
            np.testing.assert_array_equal(got, want, err_msg=fn.__name__)
    for fn, args in [(mnd.correlate, (d, dw)), (mnd.gaussian_filter, (d, 2.0)), (mnd.sobel, (d,)),
                     (mnd.median_filter, (d, 3))]:  # replays into the caller's output array
        want = kind.get(fn.__wrapped__(*args))
        # no earlier record: one made by another test on an image of another shape (a view's),
        # with weights at the address CuPy's pool gives again, would serve the first call
        _fast.RECORDS.clear()
        for step in range(3):
            out = kind.put(np.full(x.shape, np.nan, np.float32))
            misses = _fast.stats()["misses"]
            assert fn(*args, output=out) is out
            assert (_fast.stats()["misses"] == misses) == (step > 0), f"{fn.__name__} into output= replays"
            np.testing.assert_array_equal(kind.get(out), want, err_msg=f"{fn.__name__} output= step {step}")
        same = d.copy()  # the input as its own output: the Python path (a copy first), not a replay
        misses = _fast.stats()["misses"]
        fn(same, *args[1:], output=same)
        assert _fast.stats()["misses"] == misses + 1, f"{fn.__name__}: an output that is the input was replayed"
        alone = d.copy()
        fn.__wrapped__(alone, *args[1:], output=alone)
        np.testing.assert_array_equal(kind.get(same), kind.get(alone), err_msg=f"{fn.__name__} in place")
    h = kind.put(rng.uniform(-1.2, 1.2, 5000).astype(np.float32))  # a histogram's replay: counts and new edges
    want = memhier.histogram.__wrapped__(h, 50, (-1.0, 1.0))
    _fast.RECORDS.clear()
    for step in range(3):
        misses = _fast.stats()["misses"]
        counts, edges = memhier.histogram(h, 50, (-1.0, 1.0))
        assert (_fast.stats()["misses"] == misses) == (step > 0), "histogram's second and later calls replay"
        assert kind.is_mine(counts) and kind.is_mine(edges) and edges is not want[1]
        np.testing.assert_array_equal(kind.get(counts), kind.get(want[0]))
        np.testing.assert_array_equal(kind.get(edges), kind.get(want[1]))
        edges[:] = 7.0
    flipped = kind.put(kind.get(dw)[::-1, ::-1].copy())
    _fast.RECORDS.clear()
    for step in range(3):  # convolve's device weights read reversed by the library (mh_conv2d_mode_reversed)
        misses = _fast.stats()["misses"]
        got = kind.get(mnd.convolve(d, dw, mode="wrap"))
        assert (_fast.stats()["misses"] == misses) == (step > 0), "convolve's second and later calls replay"
        np.testing.assert_array_equal(got, kind.get(mnd.correlate.__wrapped__(d, flipped, mode="wrap")))
    taps = dw[1].copy()  # 5 taps: convolve1d's mirrored origin is -origin
    flipped_taps = kind.put(kind.get(taps)[::-1].copy())
    _fast.RECORDS.clear()
    for step in range(3):  # convolve1d's device taps read reversed by the library, as they are then
        misses = _fast.stats()["misses"]
        got = kind.get(mnd.convolve1d(d, taps, axis=0, mode="mirror", origin=1))
        assert (_fast.stats()["misses"] == misses) == (step > 0), "convolve1d's second and later calls replay"
        want = kind.get(mnd.correlate1d.__wrapped__(d, flipped_taps, axis=0, mode="mirror", origin=-1))
        np.testing.assert_array_equal(got, want, err_msg=f"convolve1d step {step}")
        taps += 0.25  # on the caller's stream, before the next replay
        flipped_taps += 0.25
    for step in range(3):  # weights changed on the caller's stream between replays
        dw += 0.5
        np.testing.assert_array_equal(kind.get(mnd.correlate(d, dw, mode="nearest")),
                                      kind.get(mnd.correlate.__wrapped__(d, dw, mode="nearest")))
    other = dw.copy()
    other[2, 2] = 9.0
    np.testing.assert_array_equal(kind.get(mnd.correlate(d, other, mode="nearest")),
                                  kind.get(mnd.correlate.__wrapped__(d, other, mode="nearest")))
    stream = kind.new_stream()
    w = kind.get(dw)
    with kind.on(stream):
        ones = _slow_fill(kind, x.size, 1.0).reshape(x.shape)
        mnd.correlate(ones, dw, mode="nearest")  # records the call of this shape: the next replays it
        got = mnd.correlate(ones, dw, mode="nearest")  # must queue behind the slow fill on this stream
        total = memhier.reduce_sum(ones)  # replays the record of reduce_sum(d) above, on this stream
    kind.synchronize(stream)
    assert float(kind.get(total)) == x.size
    np.testing.assert_allclose(kind.get(got), np.full(x.shape, w.astype(np.float64).sum()), rtol=1e-5, atol=1e-5)
    images = [kind.put(f32(rng, 200 + 7 * i, 300)) for i in range(4)]
    wants = [kind.get(mnd.gaussian_filter.__wrapped__(im, 1.0 + i)) for i, im in enumerate(images)]
    # gaussian_laplace's second term goes through the context's buffer, which each thread's larger
    # image grows on its own stream while the others' sums may still read it
    laplace_wants = [mnd.gaussian_laplace(kind.get(im), 1.0 + i) for i, im in enumerate(images)]
    got, laplace_got = [None] * 4, [None] * 4

    def work(i):
        s = kind.new_stream()
        with kind.on(s):
            for _ in range(20):
                got[i] = mnd.gaussian_filter(images[i], 1.0 + i)
                laplace_got[i] = mnd.gaussian_laplace(images[i], 1.0 + i)
        kind.synchronize(s)

    run_in_threads(work, 4)
    for i in range(4):
        np.testing.assert_array_equal(kind.get(got[i]), wants[i])
        np.testing.assert_array_equal(kind.get(laplace_got[i]), laplace_wants[i])


def correlate2d_mode_reference(x, w):
    return reference.correlate2d_mode(x, w.astype(np.float64), "reflect", 0.0, (0, 0))


def test_ndimage_device_weights_and_stacks(kind, rng):
    """Weights already on the image's device are used in place; a stack (N, H, W) filters every
    image in one call, as each alone."""
    from memhier import ndimage as mnd
    x = f32(rng, 5, 64, 70)
    w = rng.standard_normal((5, 5)).astype(np.float32)
    d, dw = kind.put(x), kind.put(w)
    stack = kind.get(mnd.correlate(d, dw, mode="reflect", axes=(1, 2)))
    for b in range(5):
        np.testing.assert_array_equal(stack[b], kind.get(mnd.correlate(kind.put(x[b]), w, mode="reflect")))
    np.testing.assert_array_equal(kind.get(mnd.correlate(d, w, mode="reflect", axes=(1, 2))), stack)


def test_made_operands_match_the_reader(kind):
    """_arrays.made (the Operand of an output the binding makes) against the reader, on the GPU."""
    from memhier import _arrays
    from test_cpu import made_matches_reader
    made_matches_reader(_arrays.Operand(kind.put(np.zeros(3, np.float32)), "x"))


def test_ndimage_wide_integers_in_scipys_order_on_device(rng):
    """Integer outputs computed in float64 on CuPy arrays: scipy's bits (its order of additions),
    as on the CPU backend."""
    from test_ndimage import check_wide_integers_in_scipys_order
    kind = Kind("cupy")
    check_wide_integers_in_scipys_order(rng, kind.put, kind.get)


@pytest.mark.parametrize("variant", ["auto", "two-pass"])
def test_ndimage_wide_dtypes_on_device(rng, variant):
    """memhier.ndimage in float64 on CuPy arrays (float64, 32- and 64-bit integers: auto's rows,
    lines for one axis but the last and fused64 for the others, then two-pass for all), against
    scipy as on the CPU backend."""
    from test_ndimage import check_wide_dtypes
    kind = Kind("cupy")
    check_wide_dtypes(rng, kind.put, kind.get, variant)


def test_ndimage_wide_dtypes_torch(rng):
    """float64 and int64 PyTorch tensors through the float64 rows, against scipy."""
    from memhier import ndimage as mnd
    nd = pytest.importorskip("scipy.ndimage")
    kind = Kind("torch")
    x = rng.standard_normal((40, 33)) * 1e200
    got = kind.get(mnd.gaussian_filter(kind.put(x), 2.0, mode="nearest"))
    np.testing.assert_allclose(got, nd.gaussian_filter(x, 2.0, mode="nearest"), rtol=1e-13, atol=1e-13 * 1e200)
    i = rng.integers(-2**40, 2**40, (40, 33))
    np.testing.assert_array_equal(kind.get(mnd.sobel(kind.put(i), 0)), nd.sobel(i, 0))

# float64 through memhier.ndimage on the H200 against cupyx, one run: GPU time per call (events) and
# the float64 copy floor (read + write the image once at the measured copy rate); auto's row beside
# sepfilter/two-pass (the float64 baseline) and the largest difference between them
import cupy as cp, numpy as np, memhier.ndimage as mn, cupyx.scipy.ndimage as cn
def gpu_ms(f, reps=20):
    f(); cp.cuda.Device().synchronize()
    a, b = cp.cuda.Event(), cp.cuda.Event()
    a.record()
    for _ in range(reps): f()
    b.record(); b.synchronize()
    return cp.cuda.get_elapsed_time(a, b) / reps
for n in (1024, 2048, 4096, 8192):
    x = cp.random.standard_normal((n, n))
    y = cp.empty_like(x)
    copy = gpu_ms(lambda: y.__setitem__(Ellipsis, x))
    for name, ours, theirs in (
        ("gaussian_filter sigma 2", lambda v="auto": mn.gaussian_filter(x, 2.0, variant=v), lambda: cn.gaussian_filter(x, 2.0)),
        ("gaussian_filter sigma 4", lambda v="auto": mn.gaussian_filter(x, 4.0, variant=v), lambda: cn.gaussian_filter(x, 4.0)),
        ("uniform_filter 5", lambda v="auto": mn.uniform_filter(x, 5, variant=v), lambda: cn.uniform_filter(x, 5)),
        ("sobel", lambda v="auto": mn.sobel(x, variant=v), lambda: cn.sobel(x)),
        ("correlate1d 9 axis 0", lambda v="auto": mn.correlate1d(x, np.ones(9) / 9, 0, variant=v),
         lambda: cn.correlate1d(x, cp.ones(9) / 9, 0)),
        ("correlate1d 9 axis 1", lambda v="auto": mn.correlate1d(x, np.ones(9) / 9, 1, variant=v),
         lambda: cn.correlate1d(x, cp.ones(9) / 9, 1))):
        d = float(cp.abs(ours() - theirs()).max() / cp.abs(theirs()).max())
        same = bool((ours() == ours("two-pass")).all())
        m, c, t = gpu_ms(ours), gpu_ms(theirs), gpu_ms(lambda: ours("two-pass"))
        print(f"float64 {n}^2 {name:24s} memhier {m:8.4f} ms ({m / copy:5.2f}x the copy {copy:.4f})  two-pass {t:8.4f}"
              f"  cupyx {c:8.4f} ms  x{c / m:5.2f}  rel diff {d:.1e}  equal to two-pass {same}")
i = cp.random.randint(-2**40, 2**40, (8192, 8192), dtype=cp.int64)
m, c = gpu_ms(lambda: mn.sobel(i)), gpu_ms(lambda: cn.sobel(i))
print(f"int64 8192^2 sobel memhier {m:.4f} ms cupyx {c:.4f} ms equal {bool((mn.sobel(i) == cn.sobel(i)).all())}")

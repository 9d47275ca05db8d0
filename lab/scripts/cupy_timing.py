"""Host time of a call in a loop on CuPy arrays, for the lab's host-cost probes (host_cost.py,
host_profile.py, entry_overhead.py), host time of single calls (walk_border.py,
auto_host_cost.py), a loop's time until the GPU is done (stack_timing.py, host_after_wait.py),
and GPU time a call (correlate_float64.py, walk_border.py): imported from this folder, where
those scripts run."""
import time

import cupy


def per_call_us(fn, loops, warmup=100):
    """us a call of fn() over `loops` back-to-back calls after `warmup` more, the stream drained
    before and after (the host time of the loop; the GPU's queue left behind is not counted)."""
    for _ in range(warmup):
        fn()
    cupy.cuda.get_current_stream().synchronize()
    t0 = time.perf_counter()
    for _ in range(loops):
        fn()
    t = time.perf_counter() - t0
    cupy.cuda.get_current_stream().synchronize()
    return t / loops * 1e6


def until_done_us(fn, calls):
    """us a call of fn() over `calls` back-to-back calls, from a drained stream until the GPU
    finishes the last (latency.py's per call figure: the larger of the host cost and the GPU
    time)."""
    cupy.cuda.get_current_stream().synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    cupy.cuda.get_current_stream().synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def gpu_ms(fn, reps=20):
    """GPU ms a call of fn(): CUDA events around reps back-to-back calls after one warm-up."""
    fn()
    cupy.cuda.Device().synchronize()
    a, b = cupy.cuda.Event(), cupy.cuda.Event()
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    b.synchronize()
    return cupy.cuda.get_elapsed_time(a, b) / reps


def single_call_us(fn, calls=200):
    """us the host spends in one call of fn(), the GPU idle before each: the median of `calls`."""
    times = []
    for _ in range(calls):
        cupy.cuda.get_current_stream().synchronize()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    cupy.cuda.get_current_stream().synchronize()
    times.sort()
    return times[len(times) // 2] * 1e6

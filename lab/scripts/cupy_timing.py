"""Host time of a call in a loop on CuPy arrays, for the lab's host-cost probes (host_cost.py,
host_profile.py, entry_overhead.py): imported from this folder, where those scripts run."""
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

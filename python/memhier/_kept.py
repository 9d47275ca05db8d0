"""What a loop of calls makes once: values kept by a key (weights by content, plans, edges), and
host arrays brought to a GPU once and kept there by content."""
import collections

from . import _arrays
from ._convert import on_device

KEPT = 64  # entries each cache keeps, the most recently used


def kept(cache, key, make):
    """cache[key] (an OrderedDict), made by make() when absent; the KEPT most recently used stay."""
    entry = cache.pop(key, None)
    if entry is None:
        entry = make()
    cache[key] = entry
    while len(cache) > KEPT:
        cache.popitem(last=False)
    return entry


_UPLOADED = collections.OrderedDict()  # (kind, device, shape, bytes) -> (array, event, stream, pinned)


def on_kind(host, src):
    """A host array as an array of src's kind on its device, without making the host wait: the
    copy goes from pinned memory on the caller's current stream, and the device copy is kept,
    by content, for the next call with the same array (a stream that did not make it waits for
    the copy on the GPU, not on the host). The device copy is shared: callers do not write it."""
    if src.kind == "numpy":
        return host
    key = (src.kind, src.device, host.shape, host.tobytes())
    device_array, done, stream, _ = kept(_UPLOADED, key, lambda: _upload(host, src))
    current = _arrays.current_stream(src)
    if current != stream:
        _wait(src, done)
    return device_array


def _upload(host, src):
    """(device array, an event after the copy, the stream it ran on, the pinned source kept alive)."""
    stream = _arrays.current_stream(src)
    if src.kind == "cupy":
        cupy = _arrays._cupy()
        import cupyx
        with on_device(src):
            pinned = cupyx.empty_pinned(host.shape, host.dtype)
            pinned[...] = host
            dev = cupy.empty(host.shape, host.dtype)
            dev.set(pinned)
            done = cupy.cuda.Event(block=False, disable_timing=True)
            done.record()
        return dev, done, stream, pinned
    torch = _arrays._torch()
    # torch warns on a read-only array (kept host arrays are read-only)
    pinned = torch.tensor(host if host.flags.writeable else host.copy()).pin_memory()
    dev = pinned.to(src.obj.device, non_blocking=True)
    done = torch.cuda.Event()
    done.record(torch.cuda.current_stream(src.obj.device))
    return dev, done, stream, pinned


def _wait(src, event):
    """The caller's current stream waits (on the GPU) for an event."""
    if src.kind == "cupy":
        _arrays._cupy().cuda.get_current_stream(src.device).wait_event(event)
    else:
        _arrays._torch().cuda.current_stream(src.obj.device).wait_event(event)

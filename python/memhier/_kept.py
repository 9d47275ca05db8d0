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


_UPLOADED = collections.OrderedDict()  # (kind, device, shape, bytes) -> the device array
_STREAMS = {}  # (kind, device) -> the binding's own stream for uploads


def on_kind(host, src):
    """A host array as an array of src's kind on its device, kept by content for the next call
    with the same array. The copy runs on a stream of the binding's own, which the host waits
    for (the copy alone: never the caller's work), so the device copy is complete when this
    returns and any stream may read it, now or in a later call that kept it (a kept plan's
    weights) with no ordering to keep. The device copy is shared: callers do not write it."""
    if src.kind == "numpy":
        return host
    key = (src.kind, src.device, host.shape, host.tobytes())
    return kept(_UPLOADED, key, lambda: _upload(host, src))


def _upload(host, src):
    stream = _upload_stream(src)
    if src.kind == "cupy":
        cupy = _arrays._cupy()
        with on_device(src), stream:
            dev = cupy.empty(host.shape, host.dtype)
            dev.set(host, stream)
            stream.synchronize()
        return dev
    torch = _arrays._torch()
    with torch.cuda.stream(stream):
        # torch warns on a read-only array (kept host arrays are read-only)
        dev = torch.tensor(host if host.flags.writeable else host.copy()).to(src.obj.device, non_blocking=True)
    stream.synchronize()
    return dev


def _upload_stream(src):
    key = (src.kind, src.device)
    if key not in _STREAMS:
        if src.kind == "cupy":
            with on_device(src):
                _STREAMS[key] = _arrays._cupy().cuda.Stream(non_blocking=True)
        else:
            _STREAMS[key] = _arrays._torch().cuda.Stream(src.obj.device)
    return _STREAMS[key]

"""Contexts: one mh_context per device, made on first use and kept per thread (an
mh_context holds cuFFT plans and workspaces, costly to remake, and is not shared between
threads), or made explicitly with Context(device)."""
import ctypes
import threading

from . import _native
from ._native import lib, check


_DEVICE_MAX = 2**31 - 1  # a C int


def _device_index(device):
    """A caller's device ('cpu', None, an index >= 0 or 'cuda:N') as the library's index. -1, the
    C API's MH_CPU, is refused: a negative index is more likely a mistake than a request for the
    CPU."""
    if device is None or device == "cpu":
        return _native.CPU
    if isinstance(device, str) and (device == "cuda" or device.startswith("cuda:")):
        index = device.partition(":")[2] or "0"
        if index.isdigit() and int(index) <= _DEVICE_MAX:
            return int(index)
    elif isinstance(device, int) and not isinstance(device, bool) and 0 <= device <= _DEVICE_MAX:
        return device
    raise ValueError(f"device: expected 'cpu', None, a CUDA device index >= 0 or 'cuda:N', got {device!r}")


def precision_code(precision):
    """An accuracy contract's name ('per-element' or 'normwise') as the library's code."""
    if not isinstance(precision, str) or precision not in _native.PRECISIONS:
        raise ValueError(f"precision: expected 'per-element' or 'normwise', got {precision!r}")
    return _native.PRECISIONS[precision]


class Context:
    """An explicit memhier context on `device` ('cpu' or a CUDA device index). Calls given
    `context=` run on it; close() (or a with block) frees its plans and workspaces."""

    def __init__(self, device=0):
        self.device = _device_index(device)
        self._handle, self._stream, self._precision = None, 0, _native.PRECISIONS["normwise"]
        handle = ctypes.c_void_p()
        status = lib.mh_context_create(ctypes.byref(handle), self.device)
        if status != 0:  # no context, so no detail to read: say what was asked
            where = "the CPU backend" if self.device == _native.CPU else f"CUDA device {self.device}"
            raise _native.error_for(status, f"device = {device!r}: no context on {where}")
        self._handle = handle

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("context: this memhier.Context is closed")
        return self._handle

    @property
    def is_cpu(self):
        return self.device == _native.CPU

    def set_stream(self, stream_ptr):
        """Makes the context's calls run on a CUDA stream (a cudaStream_t as an int; 0: the
        default stream). The binding sets the caller's current stream before each call."""
        if stream_ptr != self._stream:
            check(lib.mh_context_set_stream(self.handle, ctypes.c_void_p(stream_ptr or None)), self.handle)
            self._stream = stream_ptr

    def set_precision(self, precision):
        """The accuracy contract auto keeps on this context: 'normwise' (a new context's: the FFT
        rows allowed) or 'per-element' (every output within its own terms' FP32 bound). The
        binding sets each call's before the call."""
        code = precision_code(precision)
        if code != self._precision:
            check(lib.mh_context_set_precision(self.handle, code), self.handle)
            self._precision = code

    def synchronize(self):
        """Waits for the context's stream (the stream of the last call's arrays)."""
        check(lib.mh_context_synchronize(self.handle), self.handle)

    def close(self):
        if self._handle is not None:
            lib.mh_context_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may already be gone
            pass

    def __repr__(self):
        where = "cpu" if self.is_cpu else f"cuda:{self.device}"
        return f"memhier.Context({where}{', closed' if self._handle is None else ''})"


_local = threading.local()


def default_context(device):
    """The calling thread's context for `device` (a caller's device, as _device_index takes it)."""
    return context_at(_device_index(device))


def context_at(index):
    """The calling thread's context for the library's device index (_native.CPU for the CPU), made
    on first use."""
    contexts = _local.__dict__.setdefault("contexts", {})
    if index not in contexts:
        contexts[index] = Context("cpu" if index == _native.CPU else index)
    return contexts[index]

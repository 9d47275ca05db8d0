"""The C library, loaded with ctypes, and its statuses as exceptions.

The prototypes below mirror include/memhier.h one for one; nothing here computes anything."""
import ctypes
import os
from pathlib import Path

c_size = ctypes.c_size_t
c_float_p = ctypes.c_void_p  # device or host pointers alike: the library checks which
c_ctx = ctypes.c_void_p


class Error(Exception):
    """A memhier call failed; `status` is the C status name, `detail` mh_context_error's text."""

    def __init__(self, status, detail):
        super().__init__(f"{status}: {detail}" if detail else status)
        self.status, self.detail = status, detail


class InvalidArgument(Error, ValueError):
    """MH_ERR_INVALID_ARGUMENT: a bad size, name, pointer or combination; the detail names it."""


class Unsupported(Error):
    """MH_ERR_UNSUPPORTED: the variant refuses this problem; the detail says why."""


class NoDevice(Error):
    """MH_ERR_NO_DEVICE: no CUDA device, or no device with that index."""


class OutOfMemory(Error, MemoryError):
    """MH_ERR_OUT_OF_MEMORY: a host or device allocation failed."""


class CudaError(Error):
    """MH_ERR_CUDA: a CUDA runtime call or a kernel launch failed."""


class VendorError(Error):
    """MH_ERR_VENDOR: cuDNN, cuFFT, cuBLAS or CUB returned an error."""


class InternalError(Error):
    """MH_ERR_INTERNAL (or MH_ERR_IO, which no array call returns)."""


_BY_STATUS = {1: InvalidArgument, 2: Unsupported, 3: NoDevice, 4: OutOfMemory, 5: CudaError, 6: VendorError}


class VariantInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("op", ctypes.c_int), ("backend", ctypes.c_int), ("rung", ctypes.c_int),
                ("memory", ctypes.c_char_p), ("source", ctypes.c_char_p), ("summary", ctypes.c_char_p)]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 256), ("device", ctypes.c_int), ("cc_major", ctypes.c_int),
                ("cc_minor", ctypes.c_int), ("sm_count", ctypes.c_int), ("global_bytes", c_size),
                ("l2_bytes", c_size), ("smem_per_sm", c_size), ("smem_per_block_optin", c_size),
                ("const_bytes", c_size), ("regs_per_sm", c_size)]


class Ceilings(ctypes.Structure):
    _fields_ = [("copy_gbps", ctypes.c_double), ("fma_gflops", ctypes.c_double)]


class SepfilterAxis(ctypes.Structure):
    _fields_ = [("taps", ctypes.POINTER(ctypes.c_float)), ("ntaps", c_size), ("origin", ctypes.c_longlong),
                ("mode", ctypes.c_int), ("divisor", ctypes.c_uint), ("taps64", ctypes.POINTER(ctypes.c_double)),
                ("reversed", ctypes.c_int)]


class SepfilterDesc(ctypes.Structure):
    _fields_ = [("batch", c_size), ("rows", c_size), ("cols", c_size), ("channels", c_size), ("in_type", ctypes.c_int),
                ("out_type", ctypes.c_int), ("vertical", SepfilterAxis), ("horizontal", SepfilterAxis),
                ("order", ctypes.c_int), ("cval", ctypes.c_double), ("sums", ctypes.c_int)]


class RankDesc(ctypes.Structure):
    _fields_ = [("batch", c_size), ("rows", c_size), ("cols", c_size), ("channels", c_size), ("in_type", ctypes.c_int),
                ("out_type", ctypes.c_int), ("footprint", ctypes.c_void_p), ("krows", c_size), ("kcols", c_size),
                ("structure", ctypes.c_void_p), ("rank", c_size), ("origin_row", ctypes.c_longlong),
                ("origin_col", ctypes.c_longlong), ("mode", ctypes.c_int), ("cval", ctypes.c_double),
                ("structure_in_type", ctypes.c_int), ("depth", c_size), ("kdepth", c_size),
                ("origin_depth", ctypes.c_longlong)]


# mh_sepfilter_order: the passes one after the other, or both from the input and summed
SEPFILTER_VERTICAL_FIRST, SEPFILTER_HORIZONTAL_FIRST, SEPFILTER_SUM = 0, 1, 2
# mh_sepfilter_sums: a float64 call's products added with fused multiply-adds, or in scipy's order
SEPFILTER_SUMS_FMA, SEPFILTER_SUMS_SCIPY = 0, 1


SEPFILTER_MAX_TAPS = 127  # MH_SEPFILTER_MAX_TAPS
# mh_dtype, by NumPy's names; a bool array is read and written as its bytes (uint8), as scipy's C
# code reads and casts it (an unsigned char)
DTYPES = {"float32": 0, "float16": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
          "float64": 8, "uint32": 9, "uint64": 10, "bool": 2, "bfloat16": 11}
BACKENDS = ("cpu", "cuda", "vendor")
PADS = {"valid": 0, "same": 1, "full": 2}
# mh_mode, with scipy.ndimage's aliases
MODES = {"constant": 0, "reflect": 1, "mirror": 2, "nearest": 3, "wrap": 4,
         "grid-constant": 0, "grid-mirror": 1, "grid-wrap": 4}
CPU = -1  # MH_CPU
# mh_precision: the accuracy contract auto keeps
PRECISIONS = {"normwise": 0, "per-element": 1}

_I, _S, _P, _C = ctypes.c_int, c_size, ctypes.c_void_p, ctypes.c_char_p
_VI_PP = ctypes.POINTER(ctypes.POINTER(VariantInfo))
_PROTOTYPES = {
    "mh_status_str": (_C, [_I]),
    "mh_context_create": (_I, [ctypes.POINTER(c_ctx), _I]),
    "mh_context_destroy": (None, [c_ctx]),
    "mh_context_set_stream": (_I, [c_ctx, _P]),
    "mh_context_set_precision": (_I, [c_ctx, _I]),
    "mh_variant_precision": (_I, [ctypes.POINTER(VariantInfo)]),
    "mh_context_synchronize": (_I, [c_ctx]),
    "mh_context_device": (_I, [c_ctx]),
    "mh_context_error": (_C, [c_ctx]),
    "mh_op_name": (_C, [_I]),
    "mh_context_explanation": (_C, [c_ctx]),
    "mh_alloc": (_I, [c_ctx, _S, ctypes.POINTER(_P)]),
    "mh_free": (None, [c_ctx, _P]),
    "mh_alloc_async": (_I, [c_ctx, _S, ctypes.POINTER(_P)]),
    "mh_free_async": (None, [c_ctx, _P]),
    "mh_upload": (_I, [c_ctx, _P, _P, _S]),
    "mh_download": (_I, [c_ctx, _P, _P, _S]),
    "mh_device_info_get": (_I, [c_ctx, ctypes.POINTER(DeviceInfo)]),
    "mh_measure_ceilings": (_I, [c_ctx, ctypes.POINTER(Ceilings)]),
    "mh_variant_is_demonstration": (_I, [ctypes.POINTER(VariantInfo)]),
    "mh_variant_is_reduced_precision": (_I, [ctypes.POINTER(VariantInfo)]),
    "mh_variant_takes": (ctypes.c_uint, [ctypes.POINTER(VariantInfo)]),
    "mh_takes_name": (_C, [ctypes.c_uint]),
    "mh_variant_count": (_S, [_I]),
    "mh_variant": (ctypes.POINTER(VariantInfo), [_I, _S]),
    "mh_conv1d_out_len": (_S, [_S, _S, _I]),
    "mh_conv1d": (_I, [c_ctx, _C, _P, _S, _P, _S, _I, _P]),
    "mh_conv1d_select": (_I, [c_ctx, _S, _S, _I, _VI_PP]),
    "mh_conv1d_supports": (_I, [c_ctx, _C, _S, _S, _I]),
    "mh_conv1d_batched": (_I, [c_ctx, _C, _P, _S, _S, _P, _S, _S, _I, _P]),
    "mh_conv1d_batched_select": (_I, [c_ctx, _S, _S, _S, _S, _I, _VI_PP]),
    "mh_conv1d_mode": (_I, [c_ctx, _C, _P, _S, _S, _P, _S, _S, _I, ctypes.c_float, ctypes.c_longlong, _P]),
    "mh_conv1d_mode_select": (_I, [c_ctx, _S, _S, _S, _S, _I, ctypes.c_longlong, _VI_PP]),
    "mh_conv1d_mode_supports": (_I, [c_ctx, _C, _S, _S, _S, _I, ctypes.c_longlong]),
    "mh_conv2d_out_dims": (_I, [_S, _S, _S, _S, _I, ctypes.POINTER(_S), ctypes.POINTER(_S)]),
    "mh_conv2d": (_I, [c_ctx, _C, _P, _S, _S, _P, _S, _S, _I, _P]),
    "mh_conv2d_select": (_I, [c_ctx, _S, _S, _S, _S, _I, _VI_PP]),
    "mh_conv2d_supports": (_I, [c_ctx, _C, _S, _S, _S, _S, _I]),
    "mh_conv2d_mode": (_I, [c_ctx, _C, _P, _S, _S, _P, _S, _S, _I, ctypes.c_float, ctypes.c_longlong,
                            ctypes.c_longlong, _P]),
    "mh_conv2d_mode_batched": (_I, [c_ctx, _C, _P, _S, _S, _S, _P, _S, _S, _I, ctypes.c_float, ctypes.c_longlong,
                                    ctypes.c_longlong, _P]),
    "mh_conv2d_mode_reversed": (_I, [c_ctx, _C, _P, _S, _S, _S, _P, _S, _S, _I, ctypes.c_float, ctypes.c_longlong,
                                     ctypes.c_longlong, _P]),
    "mh_conv2d_typed": (_I, [c_ctx, _C, _P, _I, _S, _S, _S, _P, _S, _S, _I, ctypes.c_float, ctypes.c_longlong,
                             ctypes.c_longlong, _P, _I]),
    "mh_conv2d_float64": (_I, [c_ctx, _C, _P, _I, _S, _S, _S, _P, _S, _S, _I, ctypes.c_double, ctypes.c_longlong,
                               ctypes.c_longlong, _P, _I]),
    "mh_conv2d_plan_create": (_I, [c_ctx, _P, _S, _S, ctypes.POINTER(_P)]),
    "mh_conv2d_plan_destroy": (None, [_P]),
    "mh_conv2d_plan_rank": (_I, [_P]),
    "mh_conv2d_planned_mode": (_I, [c_ctx, _C, _P, _P, _S, _S, _S, _I, ctypes.c_float, ctypes.c_longlong,
                                    ctypes.c_longlong, _P]),
    "mh_conv2d_mode_select": (_I, [c_ctx, _S, _S, _S, _S, _I, ctypes.c_longlong, ctypes.c_longlong, _VI_PP]),
    "mh_conv2d_mode_supports": (_I, [c_ctx, _C, _S, _S, _S, _S, _I, ctypes.c_longlong, ctypes.c_longlong]),
    "mh_transpose": (_I, [c_ctx, _C, _P, _S, _S, _P]),
    "mh_transpose_select": (_I, [c_ctx, _S, _S, _VI_PP]),
    "mh_matmul": (_I, [c_ctx, _C, _P, _P, _P, _S, _S, _S]),
    "mh_matmul_typed": (_I, [c_ctx, _C, _I, _P, _P, _P, _S, _S, _S]),
    "mh_matmul_select": (_I, [c_ctx, _S, _S, _S, _VI_PP]),
    "mh_reduce_sum": (_I, [c_ctx, _C, _P, _S, _P]),
    "mh_reduce_sum_select": (_I, [c_ctx, _S, _VI_PP]),
    "mh_reduce": (_I, [c_ctx, _C, _P, _I, _S, _S, _S, _I, _P]),
    "mh_histogram": (_I, [c_ctx, _C, _P, _S, _I, _P, _P]),
    "mh_histogram_bytes": (_I, [c_ctx, _C, _P, _S, _I, _I, _I, _P, _P]),
    "mh_histogram_int64": (_I, [c_ctx, _C, _P, _S, _I, _P, _P]),
    "mh_histogram_float": (_I, [c_ctx, _C, _P, _S, _I, ctypes.c_double, ctypes.c_double, _P, _P]),
    "mh_histogram_range": (_I, [c_ctx, _C, _P, _S, _I, ctypes.c_double, ctypes.c_double, _P, _P, _P]),
    "mh_histogram_edges": (_I, [c_ctx, _C, _P, _S, _P, _I, _P, _P]),
    "mh_histogram_weighted": (_I, [c_ctx, _C, _I, _P, _P, _S, _I, ctypes.c_double, ctypes.c_double, _P, _P, _P]),
    "mh_histogram_select": (_I, [c_ctx, _S, _I, _I, _VI_PP]),
    "mh_sepfilter": (_I, [c_ctx, _C, ctypes.POINTER(SepfilterDesc), _P, _P]),
    "mh_rank": (_I, [c_ctx, _C, ctypes.POINTER(RankDesc), _P, _P]),
    "mh_rank_select": (_I, [c_ctx, ctypes.POINTER(RankDesc), _VI_PP]),
    "mh_sepfilter_select": (_I, [c_ctx, ctypes.POINTER(SepfilterDesc), _VI_PP]),
    "mh_sepfilter_sum": (_I, [c_ctx, _C, ctypes.POINTER(SepfilterDesc), _S, _P, _P]),
}


def library_path():
    """The path of the libmemhier.so this package loads."""
    env = os.environ.get("MEMHIER_LIBRARY")
    if env:
        return env
    bundled = Path(__file__).with_name("libmemhier.so")
    if bundled.exists():
        return str(bundled)
    raise ImportError("memhier: libmemhier.so is not installed beside the package (install the package with "
                      "`pip install .` at the repository root) and MEMHIER_LIBRARY, the path of a built "
                      "libmemhier.so, is not set")


def _load():
    lib = ctypes.CDLL(library_path())
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


lib = _load()


def _ops():
    """The ops in mh_op order, as the library names them (its registry is the one list)."""
    names = []
    while len(names) < 64:
        name = lib.mh_op_name(len(names)).decode()
        if name == "unknown-op":
            break
        names.append(name)
    return tuple(names)


OPS = _ops()


def error_for(status, detail):
    """The exception for a non-zero mh_status."""
    return _BY_STATUS.get(status, InternalError)(lib.mh_status_str(status).decode(), detail)


def check(status, ctx=None):
    """Raises the exception for a non-zero mh_status, with the context's detail."""
    if status != 0:
        raise error_for(status, lib.mh_context_error(ctx).decode() if ctx else "")


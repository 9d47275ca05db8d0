/* Names of statuses, ops, backends and paddings. */
#include "internal.h"
#include "dtype.h"

#include <string.h>

const char *mh_status_str(mh_status s)
{
    switch (s) {
    case MH_OK: return "ok";
    case MH_ERR_INVALID_ARGUMENT: return "invalid argument";
    case MH_ERR_UNSUPPORTED: return "unsupported by this variant";
    case MH_ERR_NO_DEVICE: return "no such device";
    case MH_ERR_OUT_OF_MEMORY: return "out of memory";
    case MH_ERR_CUDA: return "CUDA error";
    case MH_ERR_VENDOR: return "vendor library error";
    case MH_ERR_IO: return "I/O error";
    case MH_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *mh_backend_name(mh_backend b)
{
    switch (b) {
    case MH_BACKEND_CPU: return "cpu";
    case MH_BACKEND_CUDA: return "cuda";
    case MH_BACKEND_VENDOR: return "vendor";
    }
    return "unknown-backend";
}

const char *mh_pad_name(mh_pad p)
{
    switch (p) {
    case MH_PAD_VALID: return "valid";
    case MH_PAD_SAME: return "same";
    case MH_PAD_FULL: return "full";
    }
    return "unknown-pad";
}

mh_status mh_pad_parse(const char *name, mh_pad *pad)
{
    static const mh_pad all[] = {MH_PAD_VALID, MH_PAD_SAME, MH_PAD_FULL};
    if (!name || !pad) return MH_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (strcmp(name, mh_pad_name(all[i])) == 0) {
            *pad = all[i];
            return MH_OK;
        }
    return MH_ERR_INVALID_ARGUMENT;
}

const char *mh_mode_name(mh_mode m)
{
    switch (m) {
    case MH_MODE_CONSTANT: return "constant";
    case MH_MODE_REFLECT: return "reflect";
    case MH_MODE_MIRROR: return "mirror";
    case MH_MODE_NEAREST: return "nearest";
    case MH_MODE_WRAP: return "wrap";
    }
    return "unknown-mode";
}

const char *mh_precision_name(mh_precision p)
{
    switch (p) {
    case MH_PRECISION_NORMWISE: return "normwise";
    case MH_PRECISION_PER_ELEMENT: return "per-element";
    }
    return "unknown-precision";
}

mh_status mh_precision_parse(const char *name, mh_precision *precision)
{
    static const mh_precision all[] = {MH_PRECISION_NORMWISE, MH_PRECISION_PER_ELEMENT};
    if (!name || !precision) return MH_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (strcmp(name, mh_precision_name(all[i])) == 0) {
            *precision = all[i];
            return MH_OK;
        }
    return MH_ERR_INVALID_ARGUMENT;
}

const char *mh_dtype_name(mh_dtype t)
{
    switch (t) {
    case MH_F32: return "float32";
    case MH_F16: return "float16";
    case MH_BF16: return "bfloat16";
    case MH_U8: return "uint8";
    case MH_I8: return "int8";
    case MH_U16: return "uint16";
    case MH_I16: return "int16";
    case MH_I32: return "int32";
    case MH_I64: return "int64";
    case MH_F64: return "float64";
    case MH_U32: return "uint32";
    case MH_U64: return "uint64";
    }
    return "unknown-dtype";
}

size_t mh_dtype_size(mh_dtype t) { return mh_dtype_bytes(t); }

mh_status mh_mode_parse(const char *name, mh_mode *mode)
{
    static const struct {
        const char *name;
        mh_mode mode;
    } all[] = {{"constant", MH_MODE_CONSTANT}, {"reflect", MH_MODE_REFLECT},       {"mirror", MH_MODE_MIRROR},
               {"nearest", MH_MODE_NEAREST},   {"wrap", MH_MODE_WRAP},             {"grid-constant", MH_MODE_CONSTANT},
               {"grid-mirror", MH_MODE_REFLECT}, {"grid-wrap", MH_MODE_WRAP}};
    if (!name || !mode) return MH_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        if (strcmp(name, all[i].name) == 0) {
            *mode = all[i].mode;
            return MH_OK;
        }
    return MH_ERR_INVALID_ARGUMENT;
}

/* .npy files: what the CLI reads and writes. Little-endian float32, int32, int64 and
 * uint8 (mh_dtype), C order; every other file is refused with a message that says what was found. */
#ifndef MH_NPY_H
#define MH_NPY_H

#include "memhier.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { MH_NPY_MAX_DIMS = 8, MH_NPY_MAX_HEADER = 10000 /* numpy's own limit */ };

typedef struct mh_array {
    mh_dtype dtype;
    int ndim;
    size_t shape[MH_NPY_MAX_DIMS];
    size_t count; /* product of shape */
    void *data;   /* malloc'd; mh_array_free releases it */
} mh_array;

/* "<f4", "<i4", "<i8", "|u1": the types .npy files hold here (mh_dtype, include/memhier.h). */
const char *mh_dtype_descr(mh_dtype t);
/* Bytes of one element of those types (0 for the others). */
size_t mh_npy_elem_size(mh_dtype t);

/* Reads path into a; on failure a is empty and err says why (path included). */
mh_status mh_npy_read(const char *path, mh_array *a, char *err, size_t errlen);
/* Parses a whole file image (what mh_npy_read does after reading the file). */
mh_status mh_npy_parse(const unsigned char *buf, size_t len, mh_array *a, char *err, size_t errlen);
/* Writes through a temporary file renamed into place: path is whole or untouched. */
mh_status mh_npy_write(const char *path, mh_dtype t, int ndim, const size_t *shape, const void *data,
                       char *err, size_t errlen);
void mh_array_free(mh_array *a);

#ifdef __cplusplus
}
#endif

#endif

/* Files in and out: inputs opened for reading (directories refused at once), and
 * whole-or-nothing writes through a temporary file beside the target, renamed into place. */
#ifndef MH_ATOMIC_H
#define MH_ATOMIC_H

#include "memhier.h"

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* path opened for binary reading; NULL with the reason in err (naming path) when it cannot be
 * opened or is a directory (which fopen accepts and whose size reads as huge). */
FILE *mh_open_input(const char *path, char *err, size_t errlen);

/* Calls write(f, state) on a temporary file beside path and renames it to path when write
 * returns 1; otherwise removes it, leaving path untouched. */
mh_status mh_write_atomically(const char *path, int (*write)(FILE *f, const void *state), const void *state,
                              char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif

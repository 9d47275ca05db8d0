/* Whole-or-nothing file writes: a temporary file beside the target, renamed into place. */
#ifndef MH_ATOMIC_H
#define MH_ATOMIC_H

#include "memhier.h"

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Calls write(f, state) on a temporary file beside path and renames it to path when write
 * returns 1; otherwise removes it, leaving path untouched. */
mh_status mh_write_atomically(const char *path, int (*write)(FILE *f, const void *state), const void *state,
                              char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif

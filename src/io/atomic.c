#include "atomic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

mh_status mh_write_atomically(const char *path, int (*write)(FILE *f, const void *state), const void *state,
                              char *err, size_t errlen)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp) {
        snprintf(err, errlen, "%s: out of memory", path);
        return MH_ERR_OUT_OF_MEMORY;
    }
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(tmp);
        return MH_ERR_IO;
    }
    mode_t mask = umask(0); /* mkstemp makes 0600; give the file the usual 0666 & ~umask */
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    errno = 0; /* so that a failure below reports its own cause, not an earlier one */
    FILE *f = fdopen(fd, "wb");
    int ok = f && write(f, state);
    if (f) ok = (fclose(f) == 0) && ok;
    else close(fd);
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write: %s", path, errno ? strerror(errno) : "write failed");
        remove(tmp);
    }
    free(tmp);
    return ok ? MH_OK : MH_ERR_IO;
}

/* Output files as a user expects them to be written:
 * - the content is made in memory first, so a failed writer touches nothing;
 * - "-" is standard output; a pipe, a terminal or a device is written in place;
 * - a symbolic link is followed: its target is replaced, the link stays; links that loop are
 *   refused, never replaced by a file;
 * - a file no one may write (no write bit in its mode) is refused, even where the process could
 *   write it (as root);
 * - a regular file (or a new one) is replaced whole: a temporary file beside the target gets
 *   the content and the target's mode (a new file: 0666 less the umask), is flushed to disk
 *   and renamed over it, so a reader sees the old content or the new, never a part;
 * - where no temporary file can be made beside it (a writable file in a read-only directory)
 *   the file is rewritten in place, its old content kept until the new one is ready. */
#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *mh_open_input(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        snprintf(err, errlen, "%s: is a directory", path);
        return NULL;
    }
    return f;
}

/* The writer's output in memory; 0 when it fails. */
static int render(int (*write)(FILE *f, const void *state), const void *state, char **data, size_t *size)
{
    *data = NULL, *size = 0;
    FILE *f = open_memstream(data, size);
    if (!f) return 0;
    const int ok = write(f, state) && !ferror(f);
    if (fclose(f) != 0 || !ok) {
        free(*data);
        *data = NULL;
        return 0;
    }
    return 1;
}

static int write_all(int fd, const char *data, size_t size)
{
    while (size) {
        const ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        data += n, size -= (size_t)n;
    }
    return 1;
}

/* The file a path names: the path itself, or a symbolic link's final target (which may not
 * exist yet). NULL when out of memory or the links loop. */
static char *resolve(const char *path)
{
    char *target = realpath(path, NULL);
    if (target) return target;
    struct stat st;
    char *cur = strdup(path);
    for (int hops = 0; cur && hops < 40 && lstat(cur, &st) == 0 && S_ISLNK(st.st_mode); ++hops) {
        char link[PATH_MAX];
        const ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) break;
        link[n] = '\0';
        char *next;
        if (link[0] == '/') {
            next = strdup(link);
        } else { /* relative to the link's directory */
            char *copy = strdup(cur);
            const char *dir = copy ? dirname(copy) : ".";
            next = malloc(strlen(dir) + strlen(link) + 2);
            if (next) sprintf(next, "%s/%s", dir, link);
            free(copy);
        }
        free(cur);
        cur = next;
    }
    return cur;
}

static mh_status fail(const char *path, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s: %s", path, what, errno ? strerror(errno) : "failed");
    return MH_ERR_IO;
}

/* In place: for standard output, pipes and devices, and for a file whose directory takes no
 * new files. */
static mh_status write_in_place(const char *path, const char *target, int fd, const char *data, size_t size,
                                char *err, size_t errlen)
{
    const int own = fd < 0;
    if (own && (fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
        return fail(path, "cannot open it for writing", err, errlen);
    errno = 0;
    int ok = write_all(fd, data, size);
    if (own) ok = close(fd) == 0 && ok;
    return ok ? MH_OK : fail(path, "cannot write", err, errlen);
}

/* Replaces target whole through a temporary file beside it; MH_ERR_IO with errno set when no
 * temporary file can be made there (the caller then writes in place). */
static mh_status replace(const char *path, const char *target, const struct stat *old, const char *data, size_t size,
                         char *err, size_t errlen, int *no_temp)
{
    const size_t n = strlen(target);
    char *tmp = malloc(n + 16);
    if (!tmp) return fail(path, "out of memory", err, errlen);
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", target);
    const int fd = mkstemp(tmp);
    if (fd < 0) {
        *no_temp = 1;
        free(tmp);
        return MH_ERR_IO;
    }
    mode_t mode;
    if (old) {
        mode = old->st_mode & 07777;
        /* the owner is not always ours to give; a failure leaves ours, and the mode still holds */
        (void)!fchown(fd, old->st_uid, old->st_gid);
    } else {
        const mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    errno = 0;
    int ok = fchmod(fd, mode) == 0 && write_all(fd, data, size) && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, target) != 0) ok = 0;
    mh_status s = ok ? MH_OK : fail(path, "cannot write", err, errlen);
    if (!ok) remove(tmp);
    free(tmp);
    return s;
}

mh_status mh_write_atomically(const char *path, int (*write)(FILE *f, const void *state), const void *state,
                              char *err, size_t errlen)
{
    char *data;
    size_t size;
    errno = 0;
    if (!render(write, state, &data, &size)) return fail(path, "cannot make its content", err, errlen);
    mh_status s;
    if (strcmp(path, "-") == 0) {
        fflush(stdout);
        s = write_in_place(path, path, STDOUT_FILENO, data, size, err, errlen);
        free(data);
        return s;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) { /* a pipe, a terminal, /dev/null */
        s = write_in_place(path, path, -1, data, size, err, errlen);
        free(data);
        return s;
    }
    char *target = resolve(path);
    if (!target) {
        free(data);
        return fail(path, "cannot follow its links", err, errlen);
    }
    const int exists = stat(target, &st) == 0;
    struct stat link;
    if (!exists && lstat(target, &link) == 0 && S_ISLNK(link.st_mode)) { /* still a link: they loop */
        errno = ELOOP;
        s = fail(path, "cannot follow its links", err, errlen);
    } else if (exists && !S_ISREG(st.st_mode)) {
        errno = EISDIR;
        s = fail(path, "cannot write", err, errlen);
    } else if (exists && !(st.st_mode & 0222)) {
        errno = EACCES;
        snprintf(err, errlen, "%s: is read-only (mode %04o): not replaced", path, (unsigned)(st.st_mode & 07777));
        s = MH_ERR_IO;
    } else {
        int no_temp = 0;
        s = replace(path, target, exists ? &st : NULL, data, size, err, errlen, &no_temp);
        if (no_temp && exists && access(target, W_OK) == 0)
            s = write_in_place(path, target, -1, data, size, err, errlen);
        else if (no_temp)
            s = fail(path, "cannot create a file beside it", err, errlen);
    }
    free(target);
    free(data);
    return s;
}

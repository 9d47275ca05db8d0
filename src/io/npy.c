/* .npy reader and writer (format versions 1.0, 2.0 and 3.0).
 * The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False,
 * 'shape': (3, 4), }. The parser accepts exactly that grammar, in any key order. */
#include "npy.h"

#include "atomic.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The dtypes read and written (each `run` command says which of them its op takes). */
static const struct {
    mh_dtype t;
    const char *descr, *alias;
    size_t size;
} dtypes[] = {
    {MH_F32, "<f4", NULL, 4},
    {MH_I32, "<i4", NULL, 4},
    {MH_I64, "<i8", NULL, 8},
    {MH_U8, "|u1", "<u1", 1},
    {MH_F64, "<f8", NULL, 8},
    {MH_I8, "|i1", "<i1", 1},
    {MH_U16, "<u2", NULL, 2},
    {MH_I16, "<i2", NULL, 2},
    {MH_U32, "<u4", NULL, 4},
    {MH_U64, "<u8", NULL, 8},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

size_t mh_npy_elem_size(mh_dtype t)
{
    for (size_t i = 0; i < NDTYPES; ++i)
        if (dtypes[i].t == t) return dtypes[i].size;
    return 0;
}

const char *mh_dtype_descr(mh_dtype t)
{
    for (size_t i = 0; i < NDTYPES; ++i)
        if (dtypes[i].t == t) return dtypes[i].descr;
    return "?";
}

#define FAIL(...)                                                                               \
    do {                                                                                        \
        snprintf(err, errlen, __VA_ARGS__);                                                     \
        return MH_ERR_IO;                                                                       \
    } while (0)

/* ---- header dict parsing ------------------------------------------------------------- */

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_space(cursor *c)
{
    while (c->p < c->end && isspace((unsigned char)*c->p)) ++c->p;
}

static int take(cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        ++c->p;
        return 1;
    }
    return 0;
}

/* A quoted string into out (no escapes: none of numpy's keys or descrs have them). */
static int take_string(cursor *c, char *out, size_t len)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (n + 1 >= len) return 0;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return 0;
    ++c->p;
    out[n] = '\0';
    return 1;
}

static int take_word(cursor *c, const char *w)
{
    skip_space(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && strncmp(c->p, w, n) == 0) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* (d0, d1, ...) with an optional trailing comma; () is a scalar. */
static int take_shape(cursor *c, mh_array *a)
{
    if (!take(c, '(')) return 0;
    a->ndim = 0;
    while (!take(c, ')')) {
        skip_space(c);
        if (c->p >= c->end || !isdigit((unsigned char)*c->p) || a->ndim == MH_NPY_MAX_DIMS) return 0;
        size_t v = 0;
        while (c->p < c->end && isdigit((unsigned char)*c->p)) {
            if (v > (SIZE_MAX - 9) / 10) return 0;
            v = v * 10 + (size_t)(*c->p++ - '0');
        }
        skip_space(c);
        if (c->p < c->end && *c->p == 'L') ++c->p; /* Python 2 longs */
        a->shape[a->ndim++] = v;
        if (!take(c, ',')) {
            if (!take(c, ')')) return 0;
            break;
        }
    }
    return 1;
}

static mh_status lookup_descr(const char *descr, mh_array *a, char *err, size_t errlen)
{
    for (size_t i = 0; i < NDTYPES; ++i)
        if (strcmp(descr, dtypes[i].descr) == 0 || (dtypes[i].alias && strcmp(descr, dtypes[i].alias) == 0)) {
            a->dtype = dtypes[i].t;
            return MH_OK;
        }
    const char *hint = descr[0] == '>' ? " (big-endian: convert with .astype(its '<' form))" : "";
    char known[128] = "";
    for (size_t i = 0, at = 0; i < NDTYPES && at < sizeof known; ++i)
        at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", i ? ", " : "", dtypes[i].descr);
    FAIL("dtype '%s' is not supported%s; memhier reads %s", descr, hint, known);
}

static mh_status parse_header(const char *h, size_t len, mh_array *a, char *err, size_t errlen)
{
    cursor c = {h, h + len};
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    char key[32], descr[32];
    /* h is not NUL-terminated: every quote of it is bounded by len. */
    if (len == 0) FAIL("header is empty (its length field is 0)");
    if (!take(&c, '{')) FAIL("header is not a dict: it starts with '%.*s'", (int)(len < 20 ? len : 20), h);
    while (!take(&c, '}')) {
        if (!take_string(&c, key, sizeof key) || !take(&c, ':')) FAIL("malformed header: '%.*s'", (int)len, h);
        if (strcmp(key, "descr") == 0) {
            if (!take_string(&c, descr, sizeof descr)) FAIL("malformed 'descr' in header '%.*s'", (int)len, h);
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (take_word(&c, "True")) fortran = 1;
            else if (!take_word(&c, "False")) FAIL("malformed 'fortran_order' in header '%.*s'", (int)len, h);
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (!take_shape(&c, a)) FAIL("malformed or over-%d-dimensional 'shape' in header '%.*s'",
                                         MH_NPY_MAX_DIMS, (int)len, h);
            have_shape = 1;
        } else {
            FAIL("unknown key '%s' in header", key);
        }
        if (!take(&c, ',')) {
            if (!take(&c, '}')) FAIL("malformed header: '%.*s'", (int)len, h);
            break;
        }
    }
    if (!have_descr || !have_order || !have_shape)
        FAIL("header lacks %s", !have_descr ? "'descr'" : !have_order ? "'fortran_order'" : "'shape'");
    if (fortran) FAIL("array is in Fortran order; memhier reads C order (numpy.ascontiguousarray)");
    return lookup_descr(descr, a, err, errlen);
}

/* ---- file image ---------------------------------------------------------------------- */

/* The elements and bytes of the data the header's shape and dtype describe, checked for overflow. */
static mh_status data_size(const mh_array *a, size_t *count, size_t *bytes, char *err, size_t errlen)
{
    *count = 1;
    for (int d = 0; d < a->ndim; ++d)
        if (a->shape[d] && *count > SIZE_MAX / a->shape[d]) FAIL("shape's element count overflows");
        else *count *= a->shape[d];
    if (*count > SIZE_MAX / mh_npy_elem_size(a->dtype)) FAIL("shape's size in bytes overflows");
    *bytes = *count * mh_npy_elem_size(a->dtype);
    return MH_OK;
}

mh_status mh_npy_parse(const unsigned char *buf, size_t len, mh_array *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) FAIL("bad magic: not a .npy file");
    const unsigned major = buf[6], minor = buf[7];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) FAIL("truncated header");
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        hstart = 12;
    } else {
        FAIL("unknown format version %u.%u (memhier reads 1.0, 2.0 and 3.0)", major, minor);
    }
    if (hlen > MH_NPY_MAX_HEADER) FAIL("header of %zu bytes is over the limit of %d", hlen, MH_NPY_MAX_HEADER);
    if (len - hstart < hlen) FAIL("truncated header: %zu bytes announced, %zu present", hlen, len - hstart);
    mh_status s = parse_header((const char *)buf + hstart, hlen, a, err, errlen);
    size_t count, bytes;
    if (s != MH_OK || (s = data_size(a, &count, &bytes, err, errlen)) != MH_OK) return s;
    const size_t have = len - hstart - hlen;
    if (have < bytes) FAIL("truncated data: the shape needs %zu bytes, the file holds %zu", bytes, have);
    if (have > bytes) FAIL("shape does not match the file size: it needs %zu bytes of data, the file holds %zu", bytes, have);
    a->count = count;
    a->data = malloc(bytes ? bytes : 1);
    if (!a->data) {
        snprintf(err, errlen, "out of memory for %zu bytes", bytes);
        return MH_ERR_OUT_OF_MEMORY;
    }
    memcpy(a->data, buf + hstart + hlen, bytes);
    return MH_OK;
}

/* The data of a .npy whose header said `bytes`, from f: for a regular file its size is checked
 * first (nothing allocated for a lying header); from a pipe the buffer grows as the data comes,
 * never past `bytes`. Then one more byte must be the end: a stream that goes on (/dev/zero, an
 * endless pipe) is refused after bytes + 1, not read without a limit. */
static mh_status read_data(FILE *f, mh_array *a, size_t bytes, size_t offset, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        const size_t have = (size_t)st.st_size > offset ? (size_t)st.st_size - offset : 0;
        if (have < bytes) FAIL("truncated data: the shape needs %zu bytes, the file holds %zu", bytes, have);
        if (have > bytes)
            FAIL("shape does not match the file size: it needs %zu bytes of data, the file holds %zu", bytes, have);
    }
    size_t cap = bytes < (1u << 24) ? bytes : (1u << 24), n = 0;
    unsigned char *buf = malloc(cap ? cap : 1);
    while (buf && n < bytes) {
        if (n == cap) {
            const size_t grown_cap = cap > bytes / 2 ? bytes : cap * 2;
            unsigned char *grown = realloc(buf, grown_cap);
            if (!grown) break;
            buf = grown, cap = grown_cap;
        }
        const size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    if (!buf || (n < bytes && !feof(f) && !ferror(f))) {
        free(buf);
        snprintf(err, errlen, "out of memory for %zu bytes", bytes);
        return MH_ERR_OUT_OF_MEMORY;
    }
    const int more = n == bytes && fgetc(f) != EOF;
    if (ferror(f) || n < bytes || more) {
        free(buf);
        if (ferror(f)) FAIL("cannot read the file");
        if (more) FAIL("shape does not match the data: it needs %zu bytes, and the data go on past them", bytes);
        FAIL("truncated data: the shape needs %zu bytes, the file holds %zu", bytes, n);
    }
    a->data = buf;
    return MH_OK;
}

/* The header from f: magic, version, length (at most MH_NPY_MAX_HEADER) and the dictionary;
 * *offset is where the data start. */
static mh_status read_header(FILE *f, mh_array *a, size_t *offset, char *err, size_t errlen)
{
    unsigned char head[12];
    size_t got = fread(head, 1, 10, f);
    if (got < 10 || memcmp(head, "\x93NUMPY", 6) != 0) FAIL("bad magic: not a .npy file");
    size_t hlen;
    if (head[6] == 1) {
        hlen = (size_t)head[8] | (size_t)head[9] << 8;
        *offset = 10;
    } else if (head[6] == 2 || head[6] == 3) {
        if (fread(head + 10, 1, 2, f) != 2) FAIL("truncated header");
        hlen = (size_t)head[8] | (size_t)head[9] << 8 | (size_t)head[10] << 16 | (size_t)head[11] << 24;
        *offset = 12;
    } else {
        FAIL("unknown format version %u.%u (memhier reads 1.0, 2.0 and 3.0)", head[6], head[7]);
    }
    if (hlen > MH_NPY_MAX_HEADER) FAIL("header of %zu bytes is over the limit of %d", hlen, MH_NPY_MAX_HEADER);
    char h[MH_NPY_MAX_HEADER];
    if ((got = fread(h, 1, hlen, f)) != hlen) FAIL("truncated header: %zu bytes announced, %zu present", hlen, got);
    *offset += hlen;
    return parse_header(h, hlen, a, err, errlen);
}

mh_status mh_npy_read(const char *path, mh_array *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    FILE *f = mh_open_input(path, err, errlen);
    if (!f) return MH_ERR_IO;
    char inner[512];
    size_t offset = 0, count = 0, bytes = 0;
    mh_status s = read_header(f, a, &offset, inner, sizeof inner);
    if (s == MH_OK) s = data_size(a, &count, &bytes, inner, sizeof inner);
    if (s == MH_OK) s = read_data(f, a, bytes, offset, inner, sizeof inner);
    fclose(f);
    if (s != MH_OK) {
        snprintf(err, errlen, "%s: %s", path, inner);
        mh_array_free(a);
        return s;
    }
    a->count = count;
    return MH_OK;
}

void mh_array_free(mh_array *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}

static size_t format_header(char *h, size_t cap, mh_dtype t, int ndim, const size_t *shape)
{
    char dims[MH_NPY_MAX_DIMS * 24 + 4] = "";
    size_t used = 0;
    for (int d = 0; d < ndim; ++d)
        used += (size_t)snprintf(dims + used, sizeof dims - used, "%zu%s", shape[d], ndim == 1 ? "," : d + 1 < ndim ? ", " : "");
    size_t n = (size_t)snprintf(h, cap, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                                mh_dtype_descr(t), dims);
    /* pad with spaces so that magic + length + header ends on a 64-byte boundary, '\n' last */
    while ((10 + n + 1) % 64 != 0 && n + 2 < cap) h[n++] = ' ';
    h[n++] = '\n';
    return n;
}

typedef struct npy_out {
    mh_dtype t;
    int ndim;
    const size_t *shape;
    const void *data;
} npy_out;

static int write_npy(FILE *f, const void *state)
{
    const npy_out *o = state;
    size_t count = 1;
    for (int d = 0; d < o->ndim; ++d) count *= o->shape[d];
    char header[512];
    size_t hlen = format_header(header, sizeof header, o->t, o->ndim, o->shape);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    return fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, hlen, f) == hlen &&
           fwrite(o->data, mh_npy_elem_size(o->t), count, f) == count;
}

mh_status mh_npy_write(const char *path, mh_dtype t, int ndim, const size_t *shape, const void *data, char *err,
                       size_t errlen)
{
    if (ndim < 0 || ndim > MH_NPY_MAX_DIMS) FAIL("%s: %d dimensions", path, ndim);
    const npy_out o = {t, ndim, shape, data};
    return mh_write_atomically(path, write_npy, &o, err, errlen);
}

/* .npy: round trips of every dtype, and every malformed file refused with a message that
 * says what was found; output files written as a user expects (through symbolic links, the
 * mode kept, to a pipe, never half-written); inputs from pipes, directories refused. */
#include "io/atomic.h"
#include "io/npy.h"
#include "testing.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A file image: magic, version, header padded as numpy pads it, then `data_bytes` bytes. */
static size_t image(unsigned char *buf, int major, const char *header, size_t data_bytes)
{
    size_t pre = major == 1 ? 10 : 12, h = strlen(header), len = h + 1;
    while ((pre + len) % 64) ++len;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t b = 0; b < pre - 8; ++b) buf[8 + b] = (unsigned char)(len >> (8 * b));
    memcpy(buf + pre, header, h);
    memset(buf + pre + h, ' ', len - h - 1);
    buf[pre + len - 1] = '\n';
    for (size_t i = 0; i < data_bytes; ++i) buf[pre + len + i] = (unsigned char)i;
    return pre + len + data_bytes;
}

static void expect_refused(const unsigned char *buf, size_t len, const char *phrase)
{
    mh_array a;
    char err[512] = "";
    mh_status s = mh_npy_parse(buf, len, &a, err, sizeof err);
    CHECK(s == MH_ERR_IO, "expected a refusal mentioning \"%s\", got status %d", phrase, (int)s);
    CHECK(strstr(err, phrase) != NULL, "message \"%s\" lacks \"%s\"", err, phrase);
    CHECK(a.data == NULL, "refused parse left data behind");
}

static void test_malformed(void)
{
    static unsigned char buf[1 << 16];
    const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
    size_t len = image(buf, 1, ok, 16);
    mh_array a;
    char err[256];
    CHECK(mh_npy_parse(buf, len, &a, err, sizeof err) == MH_OK, "well-formed file refused: %s", err);
    CHECK(a.count == 4 && a.ndim == 1 && a.dtype == MH_F32, "parsed shape/dtype wrong");
    mh_array_free(&a);

    buf[1] = 'X';
    expect_refused(buf, len, "bad magic");
    len = image(buf, 4, ok, 16);
    expect_refused(buf, len, "unknown format version 4.0");
    len = image(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", 32);
    CHECK(mh_npy_parse(buf, len, &a, err, sizeof err) == MH_OK && a.dtype == MH_F64 && a.count == 4,
          "a float64 file refused or misread: %s", err);
    mh_array_free(&a);
    len = image(buf, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", 8);
    expect_refused(buf, len, "dtype '<f2'");
    expect_refused(buf, len, "memhier reads <f4, <i4, <i8, |u1, <f8, |i1, <u2, <i2, <u4, <u8");
    len = image(buf, 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }", 8);
    CHECK(mh_npy_parse(buf, len, &a, err, sizeof err) == MH_OK && a.dtype == MH_U16 && a.count == 4,
          "<u2 refused or misread: %s", err);
    mh_array_free(&a);
    len = image(buf, 1, "{'descr': '<i1', 'fortran_order': False, 'shape': (4,), }", 4);
    CHECK(mh_npy_parse(buf, len, &a, err, sizeof err) == MH_OK && a.dtype == MH_I8, "<i1 (|i1's alias) refused: %s", err);
    mh_array_free(&a);
    len = image(buf, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", 16);
    expect_refused(buf, len, "big-endian");
    len = image(buf, 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (4,), }", 32);
    expect_refused(buf, len, "dtype '<c8'");
    len = image(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16);
    expect_refused(buf, len, "Fortran order");
    len = image(buf, 1, ok, 20);
    expect_refused(buf, len, "does not match the file size");
    len = image(buf, 1, ok, 12);
    expect_refused(buf, len, "truncated data");
    len = image(buf, 1, "{'descr': '<f4', 'shape': (4,), }", 16);
    expect_refused(buf, len, "lacks 'fortran_order'");
    len = image(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,, }", 16);
    expect_refused(buf, len, "'shape'");
    len = image(buf, 1, "[1, 2, 3]", 0);
    expect_refused(buf, len, "not a dict");
    len = image(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", 0);
    expect_refused(buf, len, "overflows");
    len = image(buf, 1, ok, 16);
    expect_refused(buf, 40, "truncated header");
    expect_refused(buf, 5, "bad magic");

    /* a header longer than numpy's limit */
    char big[12000];
    snprintf(big, sizeof big, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), %*s}", 11000, "");
    len = image(buf, 2, big, 16);
    expect_refused(buf, len, "over the limit");

    /* versions 2.0 and 3.0 have 4-byte header lengths */
    len = image(buf, 2, ok, 16);
    CHECK(mh_npy_parse(buf, len, &a, err, sizeof err) == MH_OK, "version 2.0 refused: %s", err);
    mh_array_free(&a);
    len = image(buf, 3, "{'shape': (2, 2), 'fortran_order': False, 'descr': '|u1'}", 4);
    CHECK(mh_npy_parse(buf, len, &a, err, sizeof err) == MH_OK, "version 3.0 refused: %s", err);
    CHECK(a.dtype == MH_U8 && a.ndim == 2 && a.count == 4, "v3 parse wrong");
    mh_array_free(&a);
    len = image(buf, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }", 4);
    CHECK(mh_npy_parse(buf, len, &a, err, sizeof err) == MH_OK && a.ndim == 0 && a.count == 1,
          "scalar refused: %s", err);
    mh_array_free(&a);
}

static void test_round_trip(const char *dir)
{
    char path[1024];
    const mh_dtype types[] = {MH_F32, MH_I32, MH_I64, MH_U8, MH_F64, MH_I8, MH_U16, MH_I16, MH_U32, MH_U64};
    const size_t shapes[][3] = {{5, 0, 0}, {3, 7, 0}, {2, 3, 4}, {0, 0, 0}, {4, 0, 0},
                                {2, 2, 0}, {3, 0, 0}, {1, 2, 3}, {6, 0, 0}, {2, 2, 2}};
    const int ndims[] = {1, 2, 3, 0, 1, 2, 1, 3, 1, 3};
    for (int t = 0; t < (int)(sizeof types / sizeof types[0]); ++t) {
        size_t count = 1;
        for (int d = 0; d < ndims[t]; ++d) count *= shapes[t][d];
        unsigned char data[256];
        for (size_t i = 0; i < sizeof data; ++i) data[i] = (unsigned char)(i * 7 + 1);
        snprintf(path, sizeof path, "%s/npy_round_trip_%d.npy", dir, t);
        char err[512];
        CHECK(mh_npy_write(path, types[t], ndims[t], shapes[t], data, err, sizeof err) == MH_OK, "write: %s", err);
        mh_array a;
        CHECK(mh_npy_read(path, &a, err, sizeof err) == MH_OK, "read back: %s", err);
        CHECK(a.dtype == types[t] && a.ndim == ndims[t] && a.count == count, "round trip of %s changed the header",
              mh_dtype_descr(types[t]));
        CHECK(a.data && memcmp(a.data, data, count * mh_npy_elem_size(types[t])) == 0, "round trip changed the data");
        mh_array_free(&a);
        FILE *f = fopen(path, "rb");
        unsigned char head[10];
        CHECK(f && fread(head, 1, 10, f) == 10, "cannot reread %s", path);
        size_t hlen = (size_t)head[8] | (size_t)head[9] << 8;
        CHECK((10 + hlen) % 64 == 0, "header not padded to 64 bytes");
        if (f) fclose(f);
        remove(path);
    }
    char err[512];
    size_t shape[1] = {1};
    float v = 1.0f;
    snprintf(path, sizeof path, "%s/no/such/dir/out.npy", dir);
    CHECK(mh_npy_write(path, MH_F32, 1, shape, &v, err, sizeof err) == MH_ERR_IO, "write into a missing folder");
    CHECK(access(path, F_OK) != 0, "failed write left a file");
    mh_array a;
    CHECK(mh_npy_read(path, &a, err, sizeof err) == MH_ERR_IO && strstr(err, path), "read of a missing file: %s", err);
}

/* Issue 12: a 17-byte file (header length 0, then 7 stray bytes) made the "not a dict"
 * message quote 20 bytes of a header that has none. The file ends a page and the next page
 * is PROT_NONE, so a read past its end crashes this test even without AddressSanitizer. */
static void test_empty_header_at_page_end(void)
{
    static const unsigned char file[17] = {0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x00,
                                           0x00, 0x13, 0x3c, 0x66, 0x38, 0x3a, 0x20, 0x27};
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(two != MAP_FAILED && mprotect(two + page, page, PROT_NONE) == 0, "guard page");
    if (two == MAP_FAILED) return;
    unsigned char *at = two + page - sizeof file;
    memcpy(at, file, sizeof file);
    expect_refused(at, sizeof file, "header is empty");
    /* the same with a header of 3 bytes that is not a dict: the quote stops at 3 */
    static const unsigned char three[13] = {0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x03, 0x00, '(', '1', ')'};
    at = two + page - sizeof three;
    memcpy(at, three, sizeof three);
    expect_refused(at, sizeof three, "it starts with '(1)'");
    munmap(two, 2 * page);
}

static int write_hello(FILE *f, const void *state) { return fputs((const char *)state, f) >= 0; }
static int write_nothing(FILE *f, const void *state) { return (void)f, (void)state, 0; }

static void slurp_text(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
}

static void test_output_files(const char *dir)
{
    char target[1024], link[1024], err[512], text[64];
    snprintf(target, sizeof target, "%s/out_target.txt", dir);
    snprintf(link, sizeof link, "%s/out_link.txt", dir);
    remove(target), remove(link);
    FILE *f = fopen(target, "w");
    fputs("old", f), fclose(f);
    chmod(target, 0600);
    CHECK(symlink("out_target.txt", link) == 0, "symlink");
    CHECK(mh_write_atomically(link, write_hello, "new", err, sizeof err) == MH_OK, "through a link: %s", err);
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced by a regular file");
    CHECK(stat(target, &st) == 0 && (st.st_mode & 0777) == 0600, "mode 0600 became %o", (unsigned)(st.st_mode & 0777));
    slurp_text(target, text, sizeof text);
    CHECK(strcmp(text, "new") == 0, "the link's target holds '%s'", text);
    /* a failing writer leaves the file as it was, and no temporary file beside it */
    CHECK(mh_write_atomically(target, write_nothing, NULL, err, sizeof err) == MH_ERR_IO, "a failed writer succeeded");
    slurp_text(target, text, sizeof text);
    CHECK(strcmp(text, "new") == 0, "a failed write changed the file to '%s'", text);
    /* a pipe */
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", fds[1]);
    CHECK(mh_write_atomically(fdpath, write_hello, "piped", err, sizeof err) == MH_OK, "to a pipe: %s", err);
    close(fds[1]);
    ssize_t n = read(fds[0], text, sizeof text - 1);
    text[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    CHECK(strcmp(text, "piped") == 0, "the pipe got '%s'", text);
    /* a directory is refused by name; /dev/null takes the bytes in place */
    CHECK(mh_write_atomically(dir, write_hello, "x", err, sizeof err) == MH_ERR_IO && strstr(err, "directory"),
          "a directory: %s", err);
    CHECK(mh_write_atomically("/dev/null", write_hello, "x", err, sizeof err) == MH_OK, "/dev/null: %s", err);
    remove(target), remove(link);

    /* reading: a directory is refused at once; a pipe is read whole */
    mh_array a;
    CHECK(mh_npy_read(dir, &a, err, sizeof err) == MH_ERR_IO && strstr(err, "is a directory"), "read a dir: %s", err);
    float v[3] = {1, 2, 3};
    const size_t shape[1] = {3};
    char npy[1024];
    snprintf(npy, sizeof npy, "%s/piped.npy", dir);
    CHECK(mh_npy_write(npy, MH_F32, 1, shape, v, err, sizeof err) == MH_OK, "write: %s", err);
    CHECK(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        int in = open(npy, O_RDONLY);
        char buf[4096];
        for (ssize_t k; (k = read(in, buf, sizeof buf)) > 0;)
            if (write(fds[1], buf, (size_t)k) != k) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", fds[0]);
    CHECK(mh_npy_read(fdpath, &a, err, sizeof err) == MH_OK && a.count == 3 && ((float *)a.data)[2] == 3.0f,
          "read from a pipe: %s", err);
    mh_array_free(&a);
    close(fds[0]);
    waitpid(pid, NULL, 0);
    remove(npy);
}

/* Streams that never end are refused after what a header allows, not read without a limit:
 * /dev/zero (no magic), and a pipe whose valid header of 10 floats is followed by zeros for
 * ever (written by a child until the reader closes the pipe). */
static void test_endless_inputs(void)
{
    mh_array a;
    char err[512] = "";
    CHECK(mh_npy_read("/dev/zero", &a, err, sizeof err) == MH_ERR_IO && strstr(err, "bad magic"), "/dev/zero: %s",
          err);
    static const char head[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }";
    unsigned char header[128];
    memset(header, ' ', sizeof header);
    memcpy(header, head, sizeof head - 1);
    header[127] = '\n';
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    const pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        static const unsigned char zeros[65536];
        if (write(fds[1], header, sizeof header) == (ssize_t)sizeof header)
            while (write(fds[1], zeros, sizeof zeros) > 0) {}
        _exit(0);
    }
    close(fds[1]);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    const mh_status s = mh_npy_read(path, &a, err, sizeof err);
    close(fds[0]);
    waitpid(child, NULL, 0);
    CHECK(s == MH_ERR_IO && strstr(err, "the data go on past them") && a.data == NULL, "endless pipe: %d %s", (int)s,
          err);
}

int main(int argc, char **argv)
{
    test_output_files(argc > 1 ? argv[1] : ".");
    test_endless_inputs();
    test_empty_header_at_page_end();
    test_malformed();
    test_round_trip(argc > 1 ? argv[1] : ".");
    return test_finish("test_npy");
}

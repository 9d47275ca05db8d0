/* Images for `memhier filter`: round trips of gray and RGB through PNG, PGM and PPM, and
 * every file the reader must refuse (or convert) with a message saying what it found. */
#include "io/image.h"
#include "testing.h"

#include <stdint.h>

#ifdef MEMHIER_HAVE_PNG
#include <png.h>
#include <zlib.h>
#endif

#include <sys/resource.h>
#include <sys/wait.h>

static char dir[1024];

static const char *path_of(const char *name)
{
    static char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void write_bytes(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(path_of(name), "wb");
    CHECK(f && fwrite(data, 1, len, f) == len, "writing %s", name);
    if (f) fclose(f);
}

static void expect_refused(const char *name, const char *phrase)
{
    mh_image img;
    char err[512] = "";
    mh_status s = mh_image_read(path_of(name), MH_IMAGE_DEFAULT_MAX_PIXELS, &img, err, sizeof err);
    CHECK(s == MH_ERR_IO && strstr(err, phrase), "%s: status %d, message \"%s\" lacks \"%s\"", name, (int)s, err, phrase);
    CHECK(img.data == NULL, "%s: refused read left pixels behind", name);
}

/* Written and read back unchanged: every sample value of the depth appears (16-bit values
 * spread over both bytes, so a byte-order slip shows). */
static void round_trip(const char *name, int channels, int depth)
{
    const size_t samples = 37 * 23 * (size_t)channels, bytes = samples * (depth == 16 ? 2 : 1);
    mh_image img = {37, 23, channels, MH_IMAGE_PNM, malloc(bytes), depth};
    for (size_t i = 0; i < samples; ++i) {
        if (depth == 16) ((uint16_t *)img.data)[i] = (uint16_t)(i * 2654435761u >> 7);
        else img.data[i] = (unsigned char)(i * 31 + 7);
    }
    char err[512];
    CHECK(mh_image_write(path_of(name), &img, err, sizeof err) == MH_OK, "write %s: %s", name, err);
    mh_image back;
    CHECK(mh_image_read(path_of(name), MH_IMAGE_DEFAULT_MAX_PIXELS, &back, err, sizeof err) == MH_OK, "read %s: %s", name, err);
    CHECK(back.width == 37 && back.height == 23 && back.channels == channels && back.depth == depth,
          "%s: shape changed (%d channels of %d bits)", name, back.channels, back.depth);
    CHECK(back.data && memcmp(back.data, img.data, bytes) == 0, "%s: pixels changed", name);
    mh_image_free(&back);
    mh_image_free(&img);
}

static void test_pnm(void)
{
    round_trip("gray.pgm", 1, 8);
    round_trip("rgb.ppm", 3, 8);
    round_trip("gray16.pgm", 1, 16);
    round_trip("rgb16.ppm", 3, 16);
    write_bytes("ascii.pgm", "P2\n2 2\n255\n1 2 3 4\n", 19);
    expect_refused("ascii.pgm", "ASCII PNM");
    write_bytes("bits.pbm", "P4\n8 1\n\xff", 9);
    expect_refused("bits.pbm", "bitmaps");
    /* 16-bit PNM: big-endian samples to host order; maxval 1000 scaled to 65535 */
    write_bytes("deep.pgm", "P5\n2 2\n65535\n\0\1\1\2\xff\xff\0\4", 21);
    mh_image deep;
    char derr[512];
    CHECK(mh_image_read(path_of("deep.pgm"), MH_IMAGE_DEFAULT_MAX_PIXELS, &deep, derr, sizeof derr) == MH_OK &&
              deep.depth == 16 && ((uint16_t *)deep.data)[0] == 1 && ((uint16_t *)deep.data)[1] == 0x0102 &&
              ((uint16_t *)deep.data)[2] == 65535,
          "deep.pgm: %s", derr);
    mh_image_free(&deep);
    write_bytes("k.pgm", "P5\n1 1\n1000\n\x01\xf4", 14); /* 500 of 1000 */
    CHECK(mh_image_read(path_of("k.pgm"), MH_IMAGE_DEFAULT_MAX_PIXELS, &deep, derr, sizeof derr) == MH_OK &&
              ((uint16_t *)deep.data)[0] == 32768,
          "k.pgm: %s (%u)", derr, deep.data ? ((uint16_t *)deep.data)[0] : 0);
    mh_image_free(&deep);
    write_bytes("huge_max.pgm", "P5\n1 1\n70000\n\0\0", 16);
    expect_refused("huge_max.pgm", "at most 16 bits");
    /* samples above maxval: refused, not wrapped by the scaling */
    write_bytes("over8.pgm", "P5\n2 1\n100\n\x05\xc8", 14);
    expect_refused("over8.pgm", "sample 1 is 200, above the header's maxval 100");
    write_bytes("over16.ppm", "P6\n1 1\n1000\n\0\1\x03\xe9\0\0", 18);
    expect_refused("over16.ppm", "sample 1 is 1001, above the header's maxval 1000");
    write_bytes("short.pgm", "P5\n4 4\n255\n0123456789", 21);
    expect_refused("short.pgm", "claims 4 x 4 x 1 = 16 pixel bytes, the file holds 10");
    write_bytes("header.ppm", "P6\n4 x\n255\n", 11);
    expect_refused("header.ppm", "malformed P6 header");
    write_bytes("noise.bin", "GIF89a....", 10);
    expect_refused("noise.bin", "not a PNG, PGM or PPM");
    expect_refused("missing.pgm", "No such file");
    /* a comment in the header, and maxval 15 scaled to the 8-bit range */
    write_bytes("comment.pgm", "P5\n# made by hand\n2 1\n15\n\x0f\x00", 27);
    mh_image img;
    char err[512];
    CHECK(mh_image_read(path_of("comment.pgm"), MH_IMAGE_DEFAULT_MAX_PIXELS, &img, err, sizeof err) == MH_OK && img.data[0] == 255 && img.data[1] == 0,
          "comment.pgm: %s", err);
    mh_image_free(&img);
}

/* Issue 12: a 20-byte P6 whose header claims 48000 x 48000 RGB pixels (6.9 GB) is refused
 * with the sizes named, before any allocation of the claimed size: the read runs in a child
 * whose address space is capped 1 GiB above what it uses, where such an allocation fails
 * ("out of memory") instead of reaching the size check. */
static void test_lying_header(void)
{
    write_bytes("huge.ppm", "P6\n48000 48000\n255\n\x01", 20);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        long pages = 0;
        FILE *statm = fopen("/proc/self/statm", "r");
        if (!statm || fscanf(statm, "%ld", &pages) != 1) _exit(3);
        fclose(statm);
        struct rlimit cap = {(rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)1 << 30), 0};
        cap.rlim_max = cap.rlim_cur;
        if (setrlimit(RLIMIT_AS, &cap) != 0) _exit(3);
        mh_image img;
        char err[512] = "";
        mh_status s = mh_image_read(path_of("huge.ppm"), SIZE_MAX, &img, err, sizeof err); /* no pixel budget */
        const int ok = s == MH_ERR_IO && img.data == NULL &&
                       strstr(err, "claims 48000 x 48000 x 3 = 6912000000 pixel bytes, the file holds 1");
        if (!ok) fprintf(stderr, "huge.ppm: status %d, \"%s\"\n", (int)s, err);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "huge.ppm: the lying header was not refused by its sizes (child status %d)", status);
    /* a pixel budget refuses from the header: 100 x 100 against 9999 */
    {
        mh_image img;
        char err[512] = "", pgm[11 + 10000] = "P5\n100 100\n255\n";
        mh_status s = mh_image_decode((const unsigned char *)pgm, sizeof pgm, "mem", 9999, &img, err, sizeof err);
        CHECK(s == MH_ERR_IO && img.data == NULL && strstr(err, "10000 pixels, more than the 9999 allowed"),
              "pixel budget: %s", err);
    }
    /* the same from memory, as the fuzzer reads it, and an empty buffer */
    mh_image img;
    char err[512] = "";
    CHECK(mh_image_decode((const unsigned char *)"P5\n2 1\n255\n\x07\x09", 13, "mem", MH_IMAGE_DEFAULT_MAX_PIXELS, &img, err, sizeof err) == MH_OK &&
              img.width == 2 && img.data[1] == 9,
          "decode from memory: %s", err);
    mh_image_free(&img);
    CHECK(mh_image_decode((const unsigned char *)"", 0, "mem", MH_IMAGE_DEFAULT_MAX_PIXELS, &img, err, sizeof err) == MH_ERR_IO &&
              strstr(err, "empty") && !img.data,
          "empty buffer: %s", err);
}

static void test_write_refusals(void)
{
    unsigned char px[3] = {1, 2, 3};
    mh_image rgb = {1, 1, 3, MH_IMAGE_PNM, px, 8}, gray = {1, 1, 1, MH_IMAGE_PNM, px, 8};
    mh_image rgba = {1, 1, 4, MH_IMAGE_PNG, px, 8};
    char e2[512];
    CHECK(mh_image_write(path_of("out.ppm"), &rgba, e2, sizeof e2) == MH_ERR_IO && strstr(e2, "RGBA image") &&
              strstr(e2, "use .png"),
          "rgba ppm: %s", e2);
    char err[512];
    CHECK(mh_image_write(path_of("out.gif"), &gray, err, sizeof err) == MH_ERR_IO && strstr(err, ".png, .jpg, .jpeg"),
          "gif: %s", err);
    CHECK(mh_image_write(path_of("out.pgm"), &rgb, err, sizeof err) == MH_ERR_IO && strstr(err, "RGB image"), "rgb pgm: %s",
          err);
    CHECK(mh_image_write(path_of("no/such/dir/out.pgm"), &gray, err, sizeof err) == MH_ERR_IO, "missing folder");
    CHECK(access(path_of("out.gif"), F_OK) != 0 && access(path_of("out.pgm"), F_OK) != 0, "a refused write left a file");
}

#ifdef MEMHIER_HAVE_PNG
/* A 4 x 2 PNG of any colour type and depth, written straight through libpng. */
static void write_png_raw(const char *name, int color_type, int depth)
{
    FILE *f = fopen(path_of(name), "wb");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_init_io(png, f);
    png_set_IHDR(png, info, 4, 2, depth, color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_color palette[4] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {9, 8, 7}};
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_PLTE(png, info, palette, 4);
    const png_byte alpha[4] = {255, 255, 255, 0};
    if (strstr(name, "trns")) png_set_tRNS(png, info, alpha, 4, NULL);
    png_write_info(png, info);
    unsigned char row[64] = {0};
    for (int i = 0; i < 64; ++i) row[i] = (unsigned char)(i % 4);
    if (depth == 2) row[0] = 0x1b; /* four 2-bit pixels: 0, 1, 2, 3 */
    for (int y = 0; y < 2; ++y) png_write_row(png, row);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    fclose(f);
}

/* A PNG whose header claims 100000 x 100000 gray pixels with a 12-byte IDAT: refused by
 * the deflate bound (10 GB of rows cannot come from ~70 bytes) before any allocation. */
static void test_png_lying_header(void)
{
    unsigned char file[128], *p = file;
    memcpy(p, "\x89PNG\r\n\x1a\n", 8), p += 8;
    const unsigned char ihdr[13] = {0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0, 8, 0, 0, 0, 0};
    const unsigned char idat[12] = {0x78, 0x9c, 0x63, 0, 0, 0, 0, 0x01, 0, 0x01, 0, 0};
    const struct { const char *kind; const unsigned char *data; unsigned len; } chunks[] = {
        {"IHDR", ihdr, 13}, {"IDAT", idat, 12}, {"IEND", NULL, 0}};
    for (int c = 0; c < 3; ++c) {
        const unsigned len = chunks[c].len;
        unsigned char *start = p + 4;
        *p++ = 0, *p++ = 0, *p++ = 0, *p++ = (unsigned char)len;
        memcpy(p, chunks[c].kind, 4), p += 4;
        if (len) memcpy(p, chunks[c].data, len), p += len;
        const unsigned long crc = crc32(crc32(0L, Z_NULL, 0), start, len + 4);
        for (int b = 3; b >= 0; --b) *p++ = (unsigned char)(crc >> (8 * b));
    }
    write_bytes("huge.png", file, (size_t)(p - file));
    expect_refused("huge.png", "claims 100000 x 100000 pixels");
}

static void test_png(void)
{
    for (int depth = 8; depth <= 16; depth += 8) {
        char name[32];
        static const char *const kinds[] = {"gray", "gray_alpha", "rgb", "rgba"};
        for (int channels = 1; channels <= 4; ++channels) {
            snprintf(name, sizeof name, "%s%d.png", kinds[channels - 1], depth);
            round_trip(name, channels, depth);
        }
    }
    /* tRNS (transparency by colour) becomes an alpha channel: the palette's entry 3 transparent */
    write_png_raw("trns.png", PNG_COLOR_TYPE_PALETTE, 8);
    mh_image img;
    char err[512];
    CHECK(mh_image_read(path_of("trns.png"), MH_IMAGE_DEFAULT_MAX_PIXELS, &img, err, sizeof err) == MH_OK &&
              img.channels == 4 && img.data[3] == 255 && img.data[15] == 0 && img.data[12] == 9,
          "trns.png: %s (%d channels)", err, img.channels);
    mh_image_free(&img);
    /* palette: expanded to RGB; pixel values 0,1,2,3 pick the palette's entries */
    write_png_raw("palette.png", PNG_COLOR_TYPE_PALETTE, 8);
    CHECK(mh_image_read(path_of("palette.png"), MH_IMAGE_DEFAULT_MAX_PIXELS, &img, err, sizeof err) == MH_OK && img.channels == 3 &&
              img.data[0] == 255 && img.data[4] == 255 && img.data[9] == 9,
          "palette.png: %s", err);
    mh_image_free(&img);
    /* 2-bit gray: expanded to 8 bits (0..3 -> 0, 85, 170, 255) */
    write_png_raw("gray2.png", PNG_COLOR_TYPE_GRAY, 2);
    CHECK(mh_image_read(path_of("gray2.png"), MH_IMAGE_DEFAULT_MAX_PIXELS, &img, err, sizeof err) == MH_OK && img.channels == 1 &&
              img.data[1] == 85 && img.data[3] == 255,
          "gray2.png: %s", err);
    mh_image_free(&img);
    /* truncated: the file cut in the middle of its data */
    FILE *f = fopen(path_of("rgb8.png"), "rb");
    unsigned char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    write_bytes("cut.png", buf, n / 2);
    expect_refused("cut.png", "malformed or truncated PNG");
    test_png_lying_header();
}
#endif

#ifdef MEMHIER_HAVE_JPEG
/* JPEG is lossy: a smooth image comes back within a few levels, gray and RGB; a file cut short
 * is refused (libjpeg itself only warns and fills in gray); alpha and 16-bit are not written. */
static void test_jpeg(void)
{
    char err[512];
    for (int channels = 1; channels <= 3; channels += 2) {
        mh_image img = {64, 48, channels, MH_IMAGE_PNM, malloc(64 * 48 * (size_t)channels), 8};
        for (int y = 0; y < 48; ++y)
            for (int x = 0; x < 64; ++x)
                for (int c = 0; c < channels; ++c) img.data[(y * 64 + x) * channels + c] = (unsigned char)(2 * x + y + 40 * c);
        const char *name = channels == 1 ? "gray.jpg" : "rgb.jpeg";
        CHECK(mh_image_write(path_of(name), &img, err, sizeof err) == MH_OK, "write %s: %s", name, err);
        mh_image back;
        CHECK(mh_image_read(path_of(name), MH_IMAGE_DEFAULT_MAX_PIXELS, &back, err, sizeof err) == MH_OK &&
                  back.width == 64 && back.height == 48 && back.channels == channels && back.depth == 8 &&
                  back.format == MH_IMAGE_JPEG,
              "read %s: %s", name, err);
        int worst = 0;
        for (size_t i = 0; back.data && i < 64 * 48 * (size_t)channels; ++i) {
            const int d = abs((int)back.data[i] - (int)img.data[i]);
            worst = d > worst ? d : worst;
        }
        CHECK(back.data && worst <= 6, "%s: a sample moved by %d levels", name, worst);
        mh_image_free(&back);
        mh_image_free(&img);
    }
    FILE *f = fopen(path_of("rgb.jpeg"), "rb");
    unsigned char buf[8192];
    const size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    write_bytes("cut.jpg", buf, n / 2);
    expect_refused("cut.jpg", "truncated JPEG");
    write_bytes("junk.jpg", "\xff\xd8\xff\xe0junk", 8);
    expect_refused("junk.jpg", "malformed or truncated JPEG");
    unsigned char px[8] = {0};
    mh_image rgba = {1, 1, 4, MH_IMAGE_PNG, px, 8}, deep = {1, 1, 1, MH_IMAGE_PNG, px, 16};
    CHECK(mh_image_write(path_of("a.jpg"), &rgba, err, sizeof err) == MH_ERR_IO && strstr(err, "alpha"), "rgba jpg: %s", err);
    CHECK(mh_image_write(path_of("d.jpg"), &deep, err, sizeof err) == MH_ERR_IO && strstr(err, "16-bit"), "16-bit jpg: %s", err);
}
#endif

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
    test_pnm();
    test_lying_header();
    test_write_refusals();
#ifdef MEMHIER_HAVE_PNG
    test_png();
#else
    printf("built without libpng: PNG cases not run\n");
#endif
#ifdef MEMHIER_HAVE_JPEG
    test_jpeg();
#else
    printf("built without libjpeg: JPEG cases not run\n");
#endif
    return test_finish("test_image");
}

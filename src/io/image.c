/* Images for `memhier filter`: PNG (libpng), JPEG (libjpeg-turbo) and binary PGM/PPM (P5, P6).
 *
 * Accepted: gray, gray + alpha, RGB and RGBA, 8 or 16 bits a sample (PNM: maxval up to 65535,
 * scaled to 255 or 65535); palette PNGs and grayscale PNGs of 1, 2 or 4 bits are expanded
 * losslessly to 8-bit RGB or gray, and a tRNS chunk (transparency by colour) to an alpha
 * channel. Refused with a message saying what was found: ASCII PNMs (P2, P3), bitmaps (P1,
 * P4), truncated or malformed files. Writes go through a temporary file renamed into place, so
 * a failed write leaves no half-written image; PGM/PPM hold no alpha (a .png is asked for).
 * JPEG: 8-bit gray and colour (YCbCr, read as RGB; CMYK refused), written at quality 95;
 * 16-bit and alpha images are not written as JPEG (which holds neither). */
#define _POSIX_C_SOURCE 200809L /* fmemopen, fseeko */
#include "image.h"

#include "atomic.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(MEMHIER_HAVE_PNG) || defined(MEMHIER_HAVE_JPEG)
#include <setjmp.h>
#endif
#ifdef MEMHIER_HAVE_PNG
#include <png.h>
#endif
#ifdef MEMHIER_HAVE_JPEG
#include <jpeglib.h>
#include <jerror.h>
#endif

#define FAIL(...)                                                                               \
    do {                                                                                        \
        snprintf(err, errlen, __VA_ARGS__);                                                     \
        return MH_ERR_IO;                                                                       \
    } while (0)

void mh_image_free(mh_image *img)
{
    free(img->data);
    memset(img, 0, sizeof *img);
}

static int has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcasecmp(path + n - m, suffix) == 0;
}

static size_t image_bytes(const mh_image *img)
{
    return (size_t)img->width * img->height * img->channels * mh_image_sample_bytes(img);
}

static mh_status alloc_pixels(mh_image *img, char *err, size_t errlen)
{
    size_t bytes = image_bytes(img);
    if (img->width <= 0 || img->height <= 0 || img->channels < 1 || img->channels > 4 ||
        bytes / mh_image_sample_bytes(img) / img->channels / img->width != (size_t)img->height)
        FAIL("image size %d x %d is not valid", img->width, img->height);
    if (!(img->data = malloc(bytes))) FAIL("out of memory for a %d x %d image", img->width, img->height);
    return MH_OK;
}

/* ---- PGM / PPM ------------------------------------------------------------------------- */

/* The next header number, skipping white space and # comments; -1 when there is none. */
static long pnm_number(FILE *f)
{
    int c;
    for (;;) {
        c = fgetc(f);
        if (c == '#')
            while (c != '\n' && c != EOF) c = fgetc(f);
        if (c == EOF) return -1;
        if (!isspace(c)) break;
    }
    if (!isdigit(c)) return -1;
    long v = 0;
    while (isdigit(c)) {
        if (v > 100000000) return -1;
        v = v * 10 + (c - '0');
        c = fgetc(f);
    }
    return isspace(c) ? v : -1; /* exactly one white-space character ends the header */
}

/* Bytes from the stream's position to its end, or -1 where it cannot seek. */
static long long bytes_left(FILE *f)
{
    const off_t here = ftello(f);
    if (here < 0 || fseeko(f, 0, SEEK_END) != 0) return -1;
    const off_t end = ftello(f);
    if (fseeko(f, here, SEEK_SET) != 0 || end < here) return -1;
    return (long long)(end - here);
}

/* Refuses an image larger than the caller's budget, before anything is allocated for it. */
static mh_status check_pixels(const char *path, unsigned long long w, unsigned long long h, size_t max_pixels,
                              char *err, size_t errlen)
{
    if (w * h > max_pixels) /* w, h <= 10^8: no overflow */
        FAIL("%s: %llu x %llu = %llu pixels, more than the %zu allowed (--max-pixels; memhier filter holds 14 to 24 "
             "bytes a pixel)", path, w, h, w * h, max_pixels);
    return MH_OK;
}

static mh_status read_pnm(FILE *f, const char *path, size_t max_pixels, mh_image *img, char *err, size_t errlen)
{
    char magic[2];
    if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P') FAIL("%s: not a PNG, PGM or PPM file", path);
    if (magic[1] == '2' || magic[1] == '3') FAIL("%s: ASCII PNM (P%c) is not supported; use binary P5/P6", path, magic[1]);
    if (magic[1] == '1' || magic[1] == '4') FAIL("%s: bitmaps (P%c) are not supported; use P5/P6", path, magic[1]);
    if (magic[1] != '5' && magic[1] != '6') FAIL("%s: unknown PNM type P%c", path, magic[1]);
    long w = pnm_number(f), h = pnm_number(f), maxval = pnm_number(f);
    if (w <= 0 || h <= 0 || maxval <= 0) FAIL("%s: malformed P%c header", path, magic[1]);
    if (maxval > 65535) FAIL("%s: maxval %ld: PNM samples are at most 16 bits (65535)", path, maxval);
    const int channels = magic[1] == '5' ? 1 : 3, depth = maxval > 255 ? 16 : 8;
    if (check_pixels(path, (unsigned long long)w, (unsigned long long)h, max_pixels, err, errlen) != MH_OK)
        return MH_ERR_IO;
    /* w, h <= 10^8: no overflow */
    const size_t samples = (size_t)w * (size_t)h * (size_t)channels, bytes = samples * (depth == 16 ? 2 : 1);
    /* The header's claim against what the file holds, before anything is allocated. */
    const long long left = bytes_left(f);
    if (left < 0) FAIL("%s: cannot tell the file's size (not a regular file?)", path);
    if ((unsigned long long)left < bytes)
        FAIL("%s: truncated: the P%c header claims %ld x %ld x %d = %zu pixel bytes, the file holds %lld", path,
             magic[1], w, h, channels, bytes, left);
    img->width = (int)w, img->height = (int)h, img->channels = channels, img->format = MH_IMAGE_PNM;
    img->depth = depth;
    mh_status s = alloc_pixels(img, err, errlen);
    if (s != MH_OK) return s;
    const size_t got = fread(img->data, 1, bytes, f);
    if (got != bytes) {
        mh_image_free(img);
        FAIL("%s: truncated: %zu of %zu pixel bytes", path, got, bytes);
    }
    /* A sample above maxval is malformed (netpbm refuses it); scaled, it would wrap. */
    for (size_t i = 0; i < samples; ++i) {
        const unsigned v = depth == 8 ? img->data[i] : (unsigned)img->data[2 * i] << 8 | img->data[2 * i + 1];
        if (v > (unsigned long)maxval) {
            mh_image_free(img);
            FAIL("%s: sample %zu is %u, above the header's maxval %ld", path, i, v, maxval);
        }
    }
    if (depth == 8) {
        if (maxval != 255) /* scale to the full 8-bit range */
            for (size_t i = 0; i < samples; ++i) img->data[i] = (unsigned char)((img->data[i] * 255 + maxval / 2) / maxval);
        return MH_OK;
    }
    /* 16-bit PNM samples are big-endian: to host order, scaled to the full 16-bit range */
    uint16_t *px = (uint16_t *)img->data;
    for (size_t i = 0; i < samples; ++i) {
        const unsigned v = (unsigned)img->data[2 * i] << 8 | img->data[2 * i + 1];
        px[i] = (uint16_t)(maxval == 65535 ? v : ((unsigned long)v * 65535 + (unsigned long)maxval / 2) / (unsigned long)maxval);
    }
    return MH_OK;
}

static int write_pnm(FILE *f, const mh_image *img)
{
    const size_t samples = (size_t)img->width * img->height * img->channels;
    if (fprintf(f, "P%c\n%d %d\n%u\n", img->channels == 1 ? '5' : '6', img->width, img->height,
                mh_image_max_value(img)) <= 0)
        return 0;
    if (img->depth != 16) return fwrite(img->data, 1, samples, f) == samples;
    const uint16_t *px = (const uint16_t *)img->data;
    for (size_t i = 0; i < samples; ++i) /* big-endian */
        if (fputc(px[i] >> 8, f) == EOF || fputc(px[i] & 0xff, f) == EOF) return 0;
    return 1;
}

/* ---- PNG -------------------------------------------------------------------------------- */

#ifdef MEMHIER_HAVE_PNG
static void png_error_fn(png_structp png, png_const_charp msg)
{
    char *buf = (char *)png_get_error_ptr(png);
    snprintf(buf, 256, "%s", msg);
    png_longjmp(png, 1);
}

static void png_warning_fn(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

static int host_little_endian(void)
{
    const uint16_t probe = 1;
    return *(const unsigned char *)&probe;
}

static mh_status read_png(FILE *f, const char *path, size_t max_pixels, mh_image *img, char *err, size_t errlen)
{
    char why[256] = "";
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, why, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *volatile rows = NULL; /* volatile: set after setjmp, freed after a longjmp */
    if (!png || !info) {
        png_destroy_read_struct(&png, &info, NULL);
        FAIL("%s: out of memory", path);
    }
    const long long file_bytes = bytes_left(f); /* the stream is at the signature */
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free((void *)rows);
        mh_image_free(img);
        FAIL("%s: malformed or truncated PNG: %s", path, why);
    }
    /* Sizes from the file are bounded before libpng allocates for them: image sides, and
     * the ancillary chunks (text, ICC profiles) it would otherwise buffer without limit. */
    png_set_user_limits(png, MH_IMAGE_MAX_SIDE, MH_IMAGE_MAX_SIDE);
    png_set_chunk_cache_max(png, 256);
    png_set_chunk_malloc_max(png, (png_alloc_size_t)8 << 20);
    /* Ancillary chunks the filter never reads are skipped unread: libpng sizes some buffers from
     * a chunk's length before it can see the file is shorter (an sPLT chunk claiming 1.9 GB in
     * a 98-byte file), and the chunk malloc limit does not cover them all. tRNS is kept: it is
     * the transparency that becomes the alpha channel. */
    static const png_byte ignored[] = "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0pCAL\0pHYs\0sBIT\0"
                                      "sCAL\0sPLT\0sRGB\0tEXt\0tIME\0zTXt";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, ignored, (int)(sizeof ignored / 5));
#ifdef MEMHIER_FUZZ_NO_CRC /* a fuzz build: reach the decoder past checksums the fuzzer cannot forge */
    png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
#endif
    png_init_io(png, f);
    png_read_info(png, info);
    const int depth = png_get_bit_depth(png, info), type = png_get_color_type(png, info);
    /* Deflate expands at most 1032:1, so the filtered rows cannot be more than ~1032 times
     * the file: a header claiming more is refused before the pixels are allocated. */
    const unsigned claimed_w = png_get_image_width(png, info), claimed_h = png_get_image_height(png, info);
    const double raw_bytes = (double)claimed_h * ((double)png_get_rowbytes(png, info) + 1.0);
    if (file_bytes >= 0 && raw_bytes > 1040.0 * (double)file_bytes) {
        png_destroy_read_struct(&png, &info, NULL);
        FAIL("%s: truncated: the PNG header claims %u x %u pixels (%.0f bytes of rows), more than its %lld bytes "
             "can hold (deflate expands at most 1032:1)", path, claimed_w, claimed_h, raw_bytes, file_bytes);
    }
    if (check_pixels(path, claimed_w, claimed_h, max_pixels, err, errlen) != MH_OK) {
        png_destroy_read_struct(&png, &info, NULL);
        return MH_ERR_IO;
    }
    if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);         /* lossless */
    if (type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png); /* transparency by colour */
    if (depth == 16 && host_little_endian()) png_set_swap(png); /* PNG is big-endian; samples in host order */
    png_read_update_info(png, info);
    img->width = (int)png_get_image_width(png, info);
    img->height = (int)png_get_image_height(png, info);
    img->channels = png_get_channels(png, info);
    img->depth = png_get_bit_depth(png, info) == 16 ? 16 : 8;
    img->format = MH_IMAGE_PNG;
    if (png_get_rowbytes(png, info) != (size_t)img->width * img->channels * mh_image_sample_bytes(img)) {
        png_destroy_read_struct(&png, &info, NULL);
        FAIL("%s: unexpected PNG layout (%d channels of %d bits)", path, img->channels, img->depth);
    }
    mh_status s = alloc_pixels(img, err, errlen);
    if (s == MH_OK && !(rows = malloc(sizeof *rows * (size_t)img->height))) s = MH_ERR_OUT_OF_MEMORY;
    if (s != MH_OK) {
        png_destroy_read_struct(&png, &info, NULL);
        mh_image_free(img);
        FAIL("%s: out of memory", path);
    }
    for (int y = 0; y < img->height; ++y)
        rows[y] = img->data + (size_t)y * img->width * img->channels * mh_image_sample_bytes(img);
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free((void *)rows);
    return MH_OK;
}

static int write_png(FILE *f, const mh_image *img)
{
    char why[256];
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, why, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        return 0;
    }
    if (setjmp(png_jmpbuf(png))) { /* C allows setjmp only as a whole condition */
        png_destroy_write_struct(&png, &info);
        return 0;
    }
    static const int types[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                PNG_COLOR_TYPE_RGB_ALPHA};
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, img->depth == 16 ? 16 : 8,
                 types[img->channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (img->depth == 16 && host_little_endian()) png_set_swap(png); /* host order to PNG's big-endian */
    const size_t row_bytes = (size_t)img->width * img->channels * mh_image_sample_bytes(img);
    for (int y = 0; y < img->height; ++y) png_write_row(png, img->data + (size_t)y * row_bytes);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 1;
}
#endif

/* ---- JPEG ------------------------------------------------------------------------------- */

#ifdef MEMHIER_HAVE_JPEG
/* libjpeg reports errors through a callback that must not return: it jumps back to the call. */
typedef struct jpeg_failure {
    struct jpeg_error_mgr mgr;
    jmp_buf back;
    char why[JMSG_LENGTH_MAX];
    int truncated; /* libjpeg met the end of the data and went on with gray: a warning only */
} jpeg_failure;

static void jpeg_fail(j_common_ptr cinfo)
{
    jpeg_failure *f = (jpeg_failure *)cinfo->err;
    f->mgr.format_message(cinfo, f->why);
    longjmp(f->back, 1);
}

static void jpeg_quiet(j_common_ptr cinfo, int level)
{
    jpeg_failure *f = (jpeg_failure *)cinfo->err;
    if (level < 0 && f->mgr.msg_code == JWRN_JPEG_EOF) f->truncated = 1;
}

static mh_status read_jpeg(FILE *f, const char *path, size_t max_pixels, mh_image *img, char *err, size_t errlen)
{
    struct jpeg_decompress_struct cinfo;
    jpeg_failure fail;
    cinfo.err = jpeg_std_error(&fail.mgr);
    fail.mgr.error_exit = jpeg_fail, fail.mgr.emit_message = jpeg_quiet;
    fail.why[0] = '\0', fail.truncated = 0;
    unsigned char *volatile rows_done = NULL; /* the pixels, freed after a longjmp */
    const long long file_bytes = bytes_left(f);
    if (setjmp(fail.back)) {
        jpeg_destroy_decompress(&cinfo);
        free((void *)rows_done);
        memset(img, 0, sizeof *img);
        FAIL("%s: malformed or truncated JPEG: %s", path, fail.why);
    }
    jpeg_create_decompress(&cinfo);
    /* a progressive file holds its coefficients for the whole image: bound libjpeg's memory */
    cinfo.mem->max_memory_to_use = (long)1 << 30;
    jpeg_stdio_src(&cinfo, f);
    jpeg_read_header(&cinfo, TRUE);
    const unsigned long long w = cinfo.image_width, h = cinfo.image_height;
    /* an 8 x 8 block takes at least a few bits: a header claiming ~1000 pixels a byte of file or
     * more is refused before anything is allocated for it */
    if (file_bytes >= 0 && (double)w * (double)h > 1024.0 * (double)file_bytes) {
        jpeg_destroy_decompress(&cinfo);
        FAIL("%s: truncated: the JPEG header claims %llu x %llu pixels, more than its %lld bytes can hold", path, w, h,
             file_bytes);
    }
    if (check_pixels(path, w, h, max_pixels, err, errlen) != MH_OK) {
        jpeg_destroy_decompress(&cinfo);
        return MH_ERR_IO;
    }
    if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
        jpeg_destroy_decompress(&cinfo);
        FAIL("%s: CMYK JPEG is not supported; convert it to RGB", path);
    }
    cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&cinfo);
    img->width = (int)cinfo.output_width, img->height = (int)cinfo.output_height;
    img->channels = cinfo.output_components, img->depth = 8, img->format = MH_IMAGE_JPEG;
    mh_status s = alloc_pixels(img, err, errlen);
    if (s != MH_OK) {
        jpeg_destroy_decompress(&cinfo);
        return s;
    }
    rows_done = img->data;
    const size_t row_bytes = (size_t)img->width * img->channels;
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = img->data + (size_t)cinfo.output_scanline * row_bytes;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    if (fail.truncated) {
        mh_image_free(img);
        FAIL("%s: malformed or truncated JPEG: the data ends before the image does", path);
    }
    return MH_OK;
}

static int write_jpeg(FILE *f, const mh_image *img)
{
    struct jpeg_compress_struct cinfo;
    jpeg_failure fail;
    cinfo.err = jpeg_std_error(&fail.mgr);
    fail.mgr.error_exit = jpeg_fail, fail.mgr.emit_message = jpeg_quiet;
    fail.truncated = 0;
    if (setjmp(fail.back)) {
        jpeg_destroy_compress(&cinfo);
        return 0;
    }
    jpeg_create_compress(&cinfo);
    jpeg_stdio_dest(&cinfo, f);
    cinfo.image_width = (JDIMENSION)img->width, cinfo.image_height = (JDIMENSION)img->height;
    cinfo.input_components = img->channels;
    cinfo.in_color_space = img->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, 95, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    const size_t row_bytes = (size_t)img->width * img->channels;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = img->data + (size_t)cinfo.next_scanline * row_bytes;
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return 1;
}
#endif

/* ---- dispatch by content and by name ---------------------------------------------------- */

/* Reads by content from a seekable stream at its start; name goes into the messages. */
static mh_status read_stream(FILE *f, const char *name, size_t max_pixels, mh_image *img, char *err, size_t errlen)
{
    unsigned char sig[8] = {0};
    const size_t got = fread(sig, 1, 8, f);
    if (fseeko(f, 0, SEEK_SET) != 0) FAIL("%s: cannot seek (not a regular file?)", name);
    if (got == 8 && memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0) {
#ifdef MEMHIER_HAVE_PNG
        return read_png(f, name, max_pixels, img, err, errlen);
#else
        FAIL("%s: this build of memhier has no PNG support (libpng was not found)", name);
#endif
    }
    if (got >= 3 && sig[0] == 0xff && sig[1] == 0xd8 && sig[2] == 0xff) {
#ifdef MEMHIER_HAVE_JPEG
        return read_jpeg(f, name, max_pixels, img, err, errlen);
#else
        FAIL("%s: this build of memhier has no JPEG support (libjpeg was not found)", name);
#endif
    }
    return read_pnm(f, name, max_pixels, img, err, errlen);
}

mh_status mh_image_read(const char *path, size_t max_pixels, mh_image *img, char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    FILE *f = mh_open_input(path, err, errlen);
    if (!f) return MH_ERR_IO;
    mh_status s = read_stream(f, path, max_pixels, img, err, errlen);
    fclose(f);
    return s;
}

mh_status mh_image_decode(const unsigned char *buf, size_t len, const char *name, size_t max_pixels, mh_image *img,
                          char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    if (len == 0) FAIL("%s: empty file", name);
    FILE *f = fmemopen((void *)buf, len, "rb");
    if (!f) FAIL("%s: %s", name, strerror(errno));
    mh_status s = read_stream(f, name, max_pixels, img, err, errlen);
    fclose(f);
    return s;
}

static int write_image(FILE *f, const void *state)
{
    const mh_image *img = state;
#ifdef MEMHIER_HAVE_PNG
    if (img->format == MH_IMAGE_PNG) return write_png(f, img);
#endif
#ifdef MEMHIER_HAVE_JPEG
    if (img->format == MH_IMAGE_JPEG) return write_jpeg(f, img);
#endif
    return write_pnm(f, img);
}

mh_status mh_image_write(const char *path, const mh_image *img, char *err, size_t errlen)
{
    const int to_stdout = strcmp(path, "-") == 0; /* standard output: the format the image was read in */
    const int png = has_suffix(path, ".png") || (to_stdout && img->format == MH_IMAGE_PNG);
    const int jpeg = has_suffix(path, ".jpg") || has_suffix(path, ".jpeg") || (to_stdout && img->format == MH_IMAGE_JPEG);
    const int pgm = has_suffix(path, ".pgm") || (to_stdout && !png && !jpeg && img->channels <= 2);
    const int ppm = has_suffix(path, ".ppm") || (to_stdout && !png && !jpeg && img->channels >= 3);
    if (!png && !jpeg && !pgm && !ppm)
        FAIL("%s: the output name must end in .png, .jpg, .jpeg, .pgm or .ppm (or be - for standard output)", path);
    if (jpeg && (mh_image_has_alpha(img) || img->depth == 16))
        FAIL("%s: JPEG holds 8-bit gray or colour, not %s; use .png", path,
             mh_image_has_alpha(img) ? "an alpha channel" : "16-bit samples");
#ifndef MEMHIER_HAVE_JPEG
    if (jpeg) FAIL("%s: this build of memhier has no JPEG support (libjpeg was not found)", path);
#endif
    if (mh_image_has_alpha(img) && (pgm || ppm))
        FAIL("%s: a %s image cannot be written as %s (no alpha channel there); use .png", path, mh_image_kind(img),
             pgm ? "PGM" : "PPM");
    if ((pgm && img->channels != 1) || (ppm && img->channels != 3))
        FAIL("%s: a %s image cannot be written as %s; use .%s or .png", path, mh_image_kind(img),
             pgm ? "PGM" : "PPM", img->channels == 1 ? "pgm" : "ppm");
#ifndef MEMHIER_HAVE_PNG
    if (png) FAIL("%s: this build of memhier has no PNG support (libpng was not found)", path);
#endif
    mh_image out = *img;
    out.format = png ? MH_IMAGE_PNG : jpeg ? MH_IMAGE_JPEG : MH_IMAGE_PNM;
    return mh_write_atomically(path, write_image, &out, err, errlen);
}

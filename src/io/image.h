/* Gray, gray + alpha, RGB and RGBA images of 8 or 16 bits a sample: PNG (with libpng), JPEG
 * (with libjpeg, 8-bit gray and colour), binary PGM (P5) and PPM (P6). */
#ifndef MH_IMAGE_H
#define MH_IMAGE_H

#include "memhier.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest side a PNG may claim (libpng's own default limit, set explicitly). */
enum { MH_IMAGE_MAX_SIDE = 1000000 };
/* `memhier filter`'s default --max-pixels: 64 Mpixels (8192 x 8192), about 0.9 GB of host
 * memory at the ~14 bytes a pixel the filter holds for 8-bit RGB (the image in and out, a float
 * plane and its result; 24 for 16-bit RGBA). Readers refuse a larger image from its header,
 * before allocating. */
#define MH_IMAGE_DEFAULT_MAX_PIXELS ((size_t)1 << 26)

typedef enum mh_image_format { MH_IMAGE_PNM = 0, MH_IMAGE_PNG, MH_IMAGE_JPEG } mh_image_format;

typedef struct mh_image {
    int width, height, channels; /* 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA (alpha last) */
    mh_image_format format;      /* what it was read from */
    unsigned char *data;         /* interleaved rows, malloc'd; 16-bit samples as host-order uint16_t */
    int depth;                   /* bits a sample: 8 (0 reads as 8) or 16 */
} mh_image;

/* 1 where the last channel is alpha (gray + alpha, RGBA). */
static inline int mh_image_has_alpha(const mh_image *img) { return img->channels == 2 || img->channels == 4; }
/* Bytes a sample: 1 or 2. */
static inline size_t mh_image_sample_bytes(const mh_image *img) { return img->depth == 16 ? 2 : 1; }
/* "gray", "gray + alpha", "RGB" or "RGBA". */
static inline const char *mh_image_kind(const mh_image *img)
{
    static const char *const kinds[] = {"gray", "gray + alpha", "RGB", "RGBA"};
    return img->channels >= 1 && img->channels <= 4 ? kinds[img->channels - 1] : "unknown";
}
/* The largest sample value: 255 or 65535. */
static inline unsigned mh_image_max_value(const mh_image *img) { return img->depth == 16 ? 65535u : 255u; }

/* Reads by content (PNG signature, else P5/P6); on failure err names the file and the cause.
 * An image of more than max_pixels pixels is refused before its pixels are allocated. */
mh_status mh_image_read(const char *path, size_t max_pixels, mh_image *img, char *err, size_t errlen);
/* The same from a whole file image in memory (the fuzzer's entry); name goes into messages. */
mh_status mh_image_decode(const unsigned char *buf, size_t len, const char *name, size_t max_pixels, mh_image *img,
                          char *err, size_t errlen);
/* Writes by the name's suffix (.png, .jpg or .jpeg, .pgm, .ppm), whole or not at all. */
mh_status mh_image_write(const char *path, const mh_image *img, char *err, size_t errlen);
void mh_image_free(mh_image *img);

#ifdef __cplusplus
}
#endif

#endif

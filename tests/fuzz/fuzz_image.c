/* libFuzzer harness: bytes into the image reader (PNG through libpng, P5, P6), built with
 * AddressSanitizer and UBSan. A refusal must leave no pixels and a NUL-terminated message;
 * an accepted image must have sane sides and every pixel byte readable. libFuzzer's
 * -malloc_limit_mb turns an allocation sized by a lying header into a reported crash. */
#include "io/image.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mh_image img;
    char err[512];
    memset(err, 'x', sizeof err);
    if (mh_image_decode(data, size, "fuzz", MH_IMAGE_DEFAULT_MAX_PIXELS, &img, err, sizeof err) != MH_OK) {
        if (img.data || !memchr(err, '\0', sizeof err) || err[0] == '\0') abort();
        return 0;
    }
    if (img.width <= 0 || img.height <= 0 || img.channels < 1 || img.channels > 4 || !img.data ||
        (img.depth != 8 && img.depth != 16))
        abort();
    const size_t bytes = (size_t)img.width * (size_t)img.height * (size_t)img.channels * mh_image_sample_bytes(&img);
    volatile unsigned char sum = 0;
    for (size_t i = 0; i < bytes; ++i) sum ^= img.data[i];
    (void)sum;
    mh_image_free(&img);
    return 0;
}

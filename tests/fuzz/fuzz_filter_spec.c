/* libFuzzer harness: bytes as `memhier filter --filter SPEC` (a NUL-terminated string), with
 * AddressSanitizer, UBSan and leak checking. An accepted spec gives a filter of 1 to 31 taps a
 * side, every tap finite; a refused one no filter and a NUL-terminated message. */
#include "filter_spec.h"
#include "memhier.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256 || memchr(data, '/', size)) return 0; /* no paths outside the working folder */
    char spec[257], err[512];
    memcpy(spec, data, size);
    spec[size] = '\0';
    memset(err, 'x', sizeof err);
    float *f = NULL;
    int kr = 0, kc = 0;
    if (!filter_from_spec(spec, &f, &kr, &kc, err, sizeof err)) {
        if (f || !memchr(err, '\0', sizeof err) || err[0] == '\0') abort();
        return 0;
    }
    if (!f || kr < 1 || kc < 1 || kr > MH_CONV2D_MAX_K || kc > MH_CONV2D_MAX_K) abort();
    for (int i = 0; i < kr * kc; ++i)
        if (!isfinite(f[i])) abort();
    free(f);
    return 0;
}

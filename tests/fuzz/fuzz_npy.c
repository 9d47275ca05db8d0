/* libFuzzer harness: bytes into mh_npy_parse, built with AddressSanitizer and UBSan.
 * Beyond "no crash" it checks the parser's contract: a refusal leaves no data behind and a
 * NUL-terminated message; an accepted file has count = product of its shape, and every byte
 * of its data is readable (ASan sees a short buffer). */
#include "io/npy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mh_array a;
    char err[512];
    memset(err, 'x', sizeof err);
    if (mh_npy_parse(data, size, &a, err, sizeof err) != MH_OK) {
        if (a.data || !memchr(err, '\0', sizeof err) || err[0] == '\0') abort();
        return 0;
    }
    size_t count = 1;
    for (int d = 0; d < a.ndim; ++d) count *= a.shape[d];
    if (count != a.count || !a.data) abort();
    const size_t bytes = count * mh_npy_elem_size(a.dtype);
    volatile unsigned char sum = 0;
    for (size_t i = 0; i < bytes; ++i) sum ^= ((const unsigned char *)a.data)[i];
    (void)sum;
    mh_array_free(&a);
    return 0;
}

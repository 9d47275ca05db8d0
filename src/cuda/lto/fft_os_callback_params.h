/* What fft-os's cuFFT callbacks (fft_os_callbacks.cu) read: one chunk's geometry. */
#ifndef MH_FFT_OS_CALLBACK_PARAMS_H
#define MH_FFT_OS_CALLBACK_PARAMS_H

#include <vector_types.h>

typedef struct fft_os_callback_params {
    const float2 *mask_spectra; /* conj is taken in the callback */
    float *out;                 /* the caller's output */
    unsigned long long bins, len, hop, segs, out_n; /* L / 2 + 1, L, outputs per segment, segments per signal, outputs per signal */
    unsigned long long first, mask_base; /* the chunk's first segment (of the batch), its first mask */
    int per_signal;
    float scale; /* 1 / L */
} fft_os_callback_params;

#endif

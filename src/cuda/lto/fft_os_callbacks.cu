/* fft-os's cuFFT callbacks, compiled to LTO-IR (not into the library: CMakeLists.txt embeds
 * the fatbin, and cuFFT links them into its C2R kernel at plan time through nvJitLink).
 *
 * load_product: the C2R reads its input through this, so the product of each segment's
 * spectrum with conj(mask spectrum) / L happens on the way in: no multiply pass.
 * store_valid: the C2R writes its output through this, only the first hop samples of each
 * segment, straight into the caller's output: no compaction pass.
 *
 * The parameters (fft_os_callback_params, shared with conv1d_fft_os.cu) live in device
 * memory owned by the plan; the host copies a chunk's values there before each transform. */
#include "fft_os_callback_params.h"

#include <cufftXt.h>

extern "C" __device__ cufftComplex memhier_fft_os_load_product(void *in, unsigned long long offset, void *info, void *)
{
    const fft_os_callback_params *p = (const fft_os_callback_params *)info;
    const unsigned long long c = offset / p->bins, f = offset - c * p->bins;
    const unsigned long long mask = p->per_signal ? (p->first + c) / p->segs - p->mask_base : 0;
    const cufftComplex a = ((const cufftComplex *)in)[offset];
    const float2 w = p->mask_spectra[mask * p->bins + f];
    return make_float2((a.x * w.x + a.y * w.y) * p->scale, (a.y * w.x - a.x * w.y) * p->scale);
}

extern "C" __device__ void memhier_fft_os_store_valid(void *, unsigned long long offset, cufftReal v, void *info, void *)
{
    const fft_os_callback_params *p = (const fft_os_callback_params *)info;
    const unsigned long long c = offset / p->len, i = offset - c * p->len;
    if (i >= p->hop) return;
    const unsigned long long g = p->first + c, b = g / p->segs, o = (g - b * p->segs) * p->hop + i;
    if (o < p->out_n) p->out[b * p->out_n + o] = v;
}

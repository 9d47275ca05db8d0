/* Named filters for `memhier filter`. */
#ifndef MEMHIER_FILTER_SPEC_H
#define MEMHIER_FILTER_SPEC_H

#include <stddef.h>

/* SPEC: gaussian:SIGMA (0 < SIGMA <= 5, size 2*ceil(3*SIGMA)+1), box:K (1..31), sobel-x,
 * sobel-y, laplacian, sharpen, or a .npy file holding a 2-D float32 filter up to 255 x 255.
 * Returns 1 with a malloc'd row-major filter, or 0 with the reason in err. */
int filter_from_spec(const char *spec, float **filter, int *krows, int *kcols, char *err, size_t errlen);

/* f = a krows x kcols Gaussian of standard deviation sigma around the middle, normalised,
 * as the outer product of two 1-D Gaussians (rank 1). krows, kcols <= MH_CONV2D_MAX_K. */
void filter_gaussian(float *f, int krows, int kcols, double sigma);

#endif

#include "filter_spec.h"

#include "io/npy.h"
#include "memhier.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    float taps[9];
} fixed[] = {
    {"sobel-x", {-1, 0, 1, -2, 0, 2, -1, 0, 1}},
    {"sobel-y", {-1, -2, -1, 0, 0, 0, 1, 2, 1}},
    {"laplacian", {0, 1, 0, 1, -4, 1, 0, 1, 0}},
    {"sharpen", {0, -1, 0, -1, 5, -1, 0, -1, 0}},
};

static const char forms[] = "gaussian:SIGMA, box:K, sobel-x, sobel-y, laplacian, sharpen or a .npy file";

static int make(float **f, int kr, int kc)
{
    *f = malloc((size_t)kr * kc * sizeof(float));
    return *f != NULL;
}

/* exp(-(d / sigma)^2 / 2) at distance d from the centre of n points; returns their sum. d /
 * sigma first, so that a tiny sigma gives the limit (1 at the centre, 0 elsewhere) instead of
 * 0 / 0 where sigma^2 underflows. */
static double gaussian_1d(double *g, int n, double sigma)
{
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        const double z = (i - (n - 1) / 2.0) / sigma;
        sum += g[i] = exp(-0.5 * z * z);
    }
    return sum;
}

void filter_gaussian(float *f, int krows, int kcols, double sigma)
{
    double gr[MH_CONV2D_MAX_K], gc[MH_CONV2D_MAX_K];
    const double sr = gaussian_1d(gr, krows, sigma), sc = gaussian_1d(gc, kcols, sigma);
    for (int i = 0; i < krows; ++i)
        for (int j = 0; j < kcols; ++j) f[i * kcols + j] = (float)(gr[i] / sr * gc[j] / sc);
}

/* gaussian:SIGMA: 3 sigma either side of the centre. */
static int gaussian(double sigma, float **f, int *kr, int *kc)
{
    const int n = 2 * (int)ceil(3.0 * sigma) + 1;
    if (!make(f, n, n)) return 0;
    filter_gaussian(*f, n, n, sigma);
    *kr = *kc = n;
    return 1;
}

static int from_spec(const char *spec, float **filter, int *krows, int *kcols, char *err, size_t errlen);

int filter_from_spec(const char *spec, float **filter, int *krows, int *kcols, char *err, size_t errlen)
{
    if (!from_spec(spec, filter, krows, kcols, err, errlen)) return 0;
    for (int i = 0; i < *krows * *kcols; ++i) /* a NaN or Inf tap would make every output NaN */
        if (!isfinite((*filter)[i])) {
            snprintf(err, errlen, "--filter %s: tap [%d][%d] is %g; filters must be finite", spec, i / *kcols,
                     i % *kcols, (double)(*filter)[i]);
            free(*filter);
            *filter = NULL;
            return 0;
        }
    return 1;
}

static int from_spec(const char *spec, float **filter, int *krows, int *kcols, char *err, size_t errlen)
{
    *filter = NULL;
    char *end;
    if (strncmp(spec, "gaussian:", 9) == 0) {
        double sigma = strtod(spec + 9, &end);
        if (end == spec + 9 || *end || !(sigma > 0.0) || sigma > 42.0) {
            snprintf(err, errlen, "--filter '%s': SIGMA must be a number in (0, 42] (the filter is at most 255 x 255)",
                     spec);
            return 0;
        }
        return gaussian(sigma, filter, krows, kcols) || (snprintf(err, errlen, "out of memory"), 0);
    }
    if (strncmp(spec, "box:", 4) == 0) {
        long k = strtol(spec + 4, &end, 10);
        if (end == spec + 4 || *end || k < 1 || k > MH_CONV2D_MAX_K) {
            snprintf(err, errlen, "--filter '%s': K must be a whole number from 1 to %d", spec, MH_CONV2D_MAX_K);
            return 0;
        }
        if (!make(filter, (int)k, (int)k)) return snprintf(err, errlen, "out of memory"), 0;
        for (long i = 0; i < k * k; ++i) (*filter)[i] = 1.0f / (float)(k * k);
        *krows = *kcols = (int)k;
        return 1;
    }
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i)
        if (strcmp(spec, fixed[i].name) == 0) {
            if (!make(filter, 3, 3)) return snprintf(err, errlen, "out of memory"), 0;
            memcpy(*filter, fixed[i].taps, sizeof fixed[i].taps);
            *krows = *kcols = 3;
            return 1;
        }
    size_t n = strlen(spec);
    if (n > 4 && strcmp(spec + n - 4, ".npy") == 0) {
        mh_array a;
        char why[512];
        if (mh_npy_read(spec, &a, why, sizeof why) != MH_OK) return snprintf(err, errlen, "--filter %s", why), 0;
        if (a.dtype != MH_F32 || a.ndim != 2 || a.shape[0] < 1 || a.shape[1] < 1 || a.shape[0] > MH_CONV2D_MAX_K ||
            a.shape[1] > MH_CONV2D_MAX_K) {
            snprintf(err, errlen, "--filter %s: a filter is a 2-D float32 array of at most %d x %d", spec,
                     MH_CONV2D_MAX_K, MH_CONV2D_MAX_K);
            mh_array_free(&a);
            return 0;
        }
        *filter = a.data;
        *krows = (int)a.shape[0], *kcols = (int)a.shape[1];
        return 1;
    }
    snprintf(err, errlen, "--filter '%s' is not a filter: use %s", spec, forms);
    return 0;
}

/* scipy.ndimage's order of additions in a 1-D correlation (NI_Correlate1D), for the float64 passes
 * asked to give scipy's own sums (MH_SEPFILTER_SUMS_SCIPY): an integer output truncates a sum, so
 * a sum one rounding below a whole number stores one less, and only scipy's order lands on
 * scipy's side of it. Shared by the CPU and CUDA rows so that all of them add the same way, each
 * product rounded before it is added (rounded.h). */
#ifndef MH_SCIPY_SUM_H
#define MH_SCIPY_SUM_H

#include "rounded.h"

#include <float.h>
#include <math.h>

#ifdef __CUDACC__
#define MH_SCIPY_FN __host__ __device__ __forceinline__
#else
#define MH_SCIPY_FN static inline
#endif

/* 1 where the k taps w are symmetric about their centre within DBL_EPSILON, else -1 where they
 * are antisymmetric so, else 0 (always 0 for an even k): scipy's test, in its order. */
MH_SCIPY_FN int mh_scipy_fold(const double *w, int k)
{
    if (k % 2 == 0) return 0;
    const int c = k / 2;
    int i = 1;
    while (i <= c && fabs(w[c + i] - w[c - i]) <= DBL_EPSILON) ++i;
    if (i > c) return 1;
    for (i = 1; i <= c; ++i)
        if (fabs(w[c + i] + w[c - i]) > DBL_EPSILON) return 0;
    return -1;
}

/* scipy's sum of one output of k taps w (fold: mh_scipy_fold's), the value under tap j at
 * x[j * stride]. */
MH_SCIPY_FN double mh_scipy_sum(const double *x, long stride, const double *w, int k, int fold)
{
    if (fold) {
        const int c = k / 2;
        double sum = mh_mul_rn(x[c * stride], w[c]);
        for (int j = c; j > 0; --j) {
            const double a = x[(c - j) * stride], b = x[(c + j) * stride];
            sum = mh_add_rn(sum, mh_mul_rn(fold > 0 ? mh_add_rn(a, b) : mh_add_rn(a, -b), w[c - j]));
        }
        return sum;
    }
    double sum = mh_mul_rn(x[(k - 1) * stride], w[k - 1]);
    for (int j = 0; j + 1 < k; ++j) sum = mh_add_rn(sum, mh_mul_rn(x[j * stride], w[j]));
    return sum;
}

#endif

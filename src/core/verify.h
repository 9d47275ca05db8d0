/* How every test and the benchmark decide that an output is right. */
#ifndef MH_VERIFY_H
#define MH_VERIFY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mh_error_stats {
    double rel_l2;       /* ||out - ref|| / ||ref|| */
    double max_abs;      /* max |out - ref| */
    size_t bad;          /* elements over their bound */
    size_t nonfinite;    /* NaN or Inf where the reference is finite (unwritten outputs) */
    size_t first_bad;    /* index of the first bad or non-finite element */
    double first_out, first_ref;
} mh_error_stats;

/* Element i passes when |out - ref| <= rtol * (mag[i] + mean(mag)), where mag[i] is the
 * sum of |terms| that made ref[i] (its condition: rounding scales with it) and the mean
 * covers methods such as the FFT whose error spreads evenly over all outputs. The whole
 * passes when every element does and, from MH_COMPARE_L2_MIN_COUNT outputs on, rel_l2 <= rtol.
 * Returns 1 on pass. */
#define MH_COMPARE_L2_MIN_COUNT 16
int mh_compare(const float *out, const double *ref, const double *mag, size_t count, double rtol,
               mh_error_stats *st);

/* The rtol for a sum of `terms` float products: 1e-5 (1 + log2 terms), about 100x what
 * float rounding gives in practice, far under what a dropped or doubled term gives. */
double mh_sum_rtol(size_t terms);
/* The same for products of TF32-rounded operands (unit roundoff 2^-11 each): 2^-10 more. */
double mh_tf32_rtol(size_t terms);

/* A sum of n floats against its double reference ref, mag = sum of |x|: passes (1) when within
 * mh_sum_rtol(n) of mag; the error relative to |ref| is not asked (cancellation). */
int mh_compare_sum(float got, double ref, double mag, size_t n, mh_error_stats *st);

#ifdef __cplusplus
}
#endif

#endif

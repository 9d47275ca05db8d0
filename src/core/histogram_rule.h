/* The bins of float32 data as numpy.histogram makes and fills them, in one place for the host
 * (the CPU rows, the reference) and the CUDA kernels.
 *
 * Uniform bins over a range given in double (numpy: a range of Python floats): the edges are
 * numpy.linspace(first, last, num_bins + 1) as numpy computes it, in double arithmetic,
 * e[i] = i * step + first with step = (last - first) / num_bins, each operation rounded on its
 * own (no fused multiply-add), e[num_bins] = last, then rounded to float32; where step
 * underflows to 0, e[i] = (i / num_bins) * (last - first) + first, as linspace does. An empty
 * range (first == last) is widened to (first - 0.5, last + 0.5) first. Explicit edges: the
 * caller's float32 values.
 *
 * A value x counts where e[0] <= x <= e[num_bins] (NaN never), in the last bin i with
 * e[i] <= x (an upper-bound search over the float32 edges), the last bin closed. This gives
 * numpy.histogram's counts exactly (lab/scripts/numpy_histogram_rule.py checks it against numpy
 * on values on and beside every edge, wide ranges, NaN and constant data).
 *
 * Uniform bins first take a float32 guess g = (x - e[0]) * num_bins / (last - first): where g
 * is farther than `margin` from a whole number its floor is the bin, with no edge read. The
 * margin bounds the guess's rounding and each float32 edge's distance from its place in
 * double, in bins: 2^-24 num_bins (2 M / (last - first) + 3), M = max(|first|, |last|), taken
 * twice over (mh_hist_uniform_margin). Nearer an edge (about 2 margins of the values: 2e-4 of them for
 * 256 bins over [-1, 1]) the guess is checked against e[i] and e[i + 1], and searched where
 * it fails (ranges whose width overflows, or whose bins are narrower than their values'
 * spacing). Edges are never read past e[num_bins] whatever the data:
 * the result is a bin in [0, num_bins) or num_bins for a value not counted. */
#ifndef MEMHIER_HISTOGRAM_RULE_H
#define MEMHIER_HISTOGRAM_RULE_H

#include "rounded.h"

#include <math.h>

#ifdef __CUDACC__
#define MH_HD __host__ __device__ __forceinline__
#else
#define MH_HD static inline
#endif

/* Float32 data's bins (mh_histogram_args.f). */
typedef struct mh_hist_float {
    const float *edges;    /* explicit: num_bins + 1 non-decreasing values; NULL: uniform */
    double first, last;    /* uniform: the range, an empty one widened */
    double step, delta;    /* (last - first) / num_bins and last - first */
    int step_zero;         /* step underflowed to 0 */
    double guess;          /* num_bins / (last - first), 0 where that overflows */
    float lo, hi;          /* uniform: e[0] and e[num_bins], the values counted */
    float gscale;          /* uniform: (float)guess, 0 where that overflows */
    float margin;          /* uniform: the float32 guess's margin, in bins (1: never trusted) */
} mh_hist_float;

/* The margin of the float32 guess for uniform bins over [first, last] (above). */
MH_HD float mh_hist_uniform_margin(double first, double last, int num_bins)
{
    const double delta = last - first, m = fabs(first) > fabs(last) ? fabs(first) : fabs(last);
    const double margin = 0x1p-22 * num_bins * (2.0 * m / delta + 3.0);
    return delta > 0.0 && margin < 0.25 ? (float)margin : 1.0f;
}

/* The float32 guess's answer for x in [e[0], e[num_bins]]: its bin, or -1 where x is too near a
 * whole g to tell. */
MH_HD int mh_hist_uniform_fast(const mh_hist_float *f, int num_bins, float x)
{
    if (!(f->margin < 1.0f)) return -1; /* then g stays under 2 num_bins: its floor fits an int */
    const float g = (x - f->lo) * f->gscale;
#ifdef __CUDA_ARCH__
    const float big = __fadd_rz(g, 8388608.0f); /* floor(g) in the low bits: g < 2^22 */
    const float whole = __fsub_rz(big, 8388608.0f);
    const int i = __float_as_int(big) - 0x4B000000;
#else
    const float whole = floorf(g);
    const int i = (int)whole;
#endif
    const float frac = g - whole;
    return frac > f->margin && frac < 1.0f - f->margin && i >= 0 && i < num_bins ? i : -1;
}

/* Edge i of uniform bins, 0 <= i <= num_bins. */
MH_HD float mh_hist_uniform_edge(const mh_hist_float *f, int num_bins, int i)
{
    if (i >= num_bins) return f->hi;
    const double y = f->step_zero ? mh_mul_rn((double)i / (double)num_bins, f->delta) : mh_mul_rn((double)i, f->step);
    return (float)mh_add_rn(y, f->first);
}

MH_HD float mh_hist_edge(const mh_hist_float *f, int num_bins, int i)
{
#ifdef __CUDA_ARCH__
    return f->edges ? __ldg(f->edges + i) : mh_hist_uniform_edge(f, num_bins, i);
#else
    return f->edges ? f->edges[i] : mh_hist_uniform_edge(f, num_bins, i);
#endif
}

/* The last bin i in [lo, hi] with e[i] <= x, given e[lo] <= x. */
MH_HD int mh_hist_search(const mh_hist_float *f, int num_bins, float x, int lo, int hi)
{
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (mh_hist_edge(f, num_bins, mid) <= x) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* x's bin, or num_bins where it is not counted (outside [e[0], e[num_bins]], or NaN). */
MH_HD int mh_hist_float_bin(const mh_hist_float *f, int num_bins, float x)
{
    const float lo = f->edges ? mh_hist_edge(f, num_bins, 0) : f->lo;
    const float hi = f->edges ? mh_hist_edge(f, num_bins, num_bins) : f->hi;
    if (!(x >= lo && x <= hi)) return num_bins;
    if (f->edges) return mh_hist_search(f, num_bins, x, 0, num_bins - 1);
    const int fast = mh_hist_uniform_fast(f, num_bins, x);
    if (fast >= 0) return fast;
    double t = mh_mul_rn((double)x - f->first, f->guess);
    int i = t <= 0.0 ? 0 : t >= (double)(num_bins - 1) ? num_bins - 1 : (int)t;
    if (mh_hist_uniform_edge(f, num_bins, i) <= x && (i == num_bins - 1 || x < mh_hist_uniform_edge(f, num_bins, i + 1)))
        return i;
    return mh_hist_search(f, num_bins, x, 0, num_bins - 1);
}

#endif

/* What rows of every backend take: the minmax rows the least or the greatest value over a whole
 * line (scipy's separable passes) or rectangle, the images seen as lines, and the type a
 * rectangle's first pass stores its results in; the median rows the median of a full square or
 * cube. */
#ifndef MH_RANK_LINE_H
#define MH_RANK_LINE_H

#include "internal.h"
#include "dtype.h"

#include <math.h>
#include <stdio.h>

/* Whether the call takes the minimum or the maximum over its whole footprint, every element set
 * and no structure (0, and why, where not). */
static inline int mh_rank_extreme(const mh_rank_args *a, char *why, size_t len)
{
    const mh_rank_desc *d = &a->d;
    const char *what = d->structure                             ? "a structure"
                       : a->count != d->krows * d->kcols        ? "a footprint with holes"
                       : d->rank != 0 && d->rank + 1 != a->count ? "a rank other than the least or the greatest"
                                                                 : NULL;
    if (what) snprintf(why, len, "%s: takes the minimum or maximum over a whole line or rectangle", what);
    return !what;
}

/* Whether the call takes the median of a full window of `planes` (1: an image's footprint)
 * by side x side with no structure (0, and why, where not). */
static inline int mh_rank_full_median_of(const mh_rank_args *a, size_t planes, size_t side, char *why, size_t len)
{
    const mh_rank_desc *d = &a->d;
    const size_t keys = planes * side * side;
    const char *what = d->kdepth != planes || d->krows != side || d->kcols != side || a->count != keys
                           ? "another footprint"
                       : d->rank != keys / 2 ? "a rank other than the median"
                       : d->structure        ? "a structure"
                                             : NULL;
    if (what && planes > 1) snprintf(why, len, "%s: takes the median of a full %zu x %zu x %zu window", what, planes, side, side);
    else if (what) snprintf(why, len, "%s: takes the median of a full %zu x %zu window", what, side, side);
    return !what;
}

/* Whether the call takes the median of a full side x side window of an image. */
static inline int mh_rank_full_median(const mh_rank_args *a, size_t side, char *why, size_t len)
{
    return mh_rank_full_median_of(a, 1, side, why, len);
}

/* The median3x3 rows' calls on both backends. */
static inline int mh_rank_median3(const mh_rank_args *a, char *why, size_t len)
{
    return mh_rank_full_median(a, 3, why, len);
}

/* A line pass: the minimum or maximum over k positions of images seen as [outer][n][inner]
 * (anchor: the window's position over its output). */
typedef struct mh_rank_line {
    size_t k, outer, n, inner;
    long long anchor;
} mh_rank_line;

/* The pass down the columns (column: a krows x 1 window) or along the rows (a 1 x kcols one) of a
 * krows x kcols window, its position over the output at the origins'. */
static inline mh_rank_line mh_rank_line_along(const mh_rank_desc *d, int column)
{
    mh_rank_line l;
    l.k = column ? d->krows : d->kcols;
    l.outer = column ? d->batch : d->batch * d->rows;
    l.n = column ? d->rows : d->cols;
    l.inner = column ? d->cols * d->channels : d->channels;
    l.anchor = (long long)(l.k / 2) + (column ? d->origin_row : d->origin_col);
    return l;
}

/* The type of a rectangle's first pass's results (a pass along the rows, then one down the
 * columns from them, whose extreme is the rectangle's): the input's where it holds cval (or the
 * mode reads none), else float64, which holds every value of the types up to 32 bits and any
 * cval; -1 where neither holds them all (a 64-bit integer image beside a cval not its own). */
static inline int mh_rank_between_passes(const mh_rank_desc *d)
{
    const int wide = d->in_type == MH_I64 || d->in_type == MH_U64, floating = d->in_type == MH_F32 || d->in_type == MH_F64;
    const int held = d->mode != MH_MODE_CONSTANT || (isnan(d->cval) ? floating : mh_cast_double(d->cval, d->in_type) == d->cval);
    return held ? (int)d->in_type : wide ? -1 : (int)MH_F64;
}

/* Whether a rectangle's first pass can store its results (mh_rank_between_passes; 0, and why,
 * where not). */
static inline int mh_rank_passes_hold(const mh_rank_desc *d, char *why, size_t len)
{
    if (mh_rank_between_passes(d) >= 0) return 1;
    snprintf(why, len, "cval %g, not a value of %s: a rectangle's first pass stores it", d->cval,
             mh_dtype_name(d->in_type));
    return 0;
}

#endif

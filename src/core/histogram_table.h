/* The cell table of float32 bins, for the host and the CUDA kernels alike: the kernels that count
 * many values a block stage it in shared memory (cuda/histogram_table.cuh), and the tests build
 * it on the host to check it against numpy's rule (core/histogram_rule.h) wherever CI runs.
 *
 * The table holds the edges e[0 .. B] and, for each of C cells, the first and last bin a value
 * of that cell can fall in. A value x in [e[0], e[B]] falls in cell
 * c(x) = min(floor((x - e[0]) * cscale), C - 1), computed in float32 with each operation rounded
 * on its own. c is non-decreasing in x (every rounded step is), so the values of one cell form an
 * interval of floats, and the bins those values fall in run from the bin of its first value to
 * the bin of its last. Both are worked out exactly from the edges:
 *   first bin of cell c = max { i : e[i] <= the cell's first value } = max { i : c(prev(e[i])) < c }
 *   last bin of cell c  = max { i : e[i] <= the cell's last value }  = max { i : c(e[i]) <= c }
 * (prev: the next float below; e[i] <= e[0] counts as below every cell). So a value's bin is the
 * cell's only bin, or one compare with the edge between its two bins, or a search among its few
 * bins. No rounding case falls outside, whatever the range (a width that overflows, bins narrower
 * than their values' spacing only make the cells wider in bins).
 *
 * The table is filled edge by edge (mh_hist_table_fill_bin writes bin i into the cells between
 * its edge and the next) after every cell is set to the full range [0, B - 1]: edges that are not
 * sorted (which the API documents as invalid) leave cells there, never past it. Bins are 16-bit
 * in the table (B <= MH_HIST_TABLE_MAX_BINS). */
#ifndef MEMHIER_HISTOGRAM_TABLE_H
#define MEMHIER_HISTOGRAM_TABLE_H

#include "histogram_rule.h"

enum { MH_HIST_TABLE_MAX_BINS = 65535 };

typedef struct mh_hist_table {
    const float *e;       /* e[0 .. nb] */
    const unsigned *cell; /* cells words: first bin | last bin << 16 */
    float lo, hi;         /* e[0], e[nb]: the values counted (held in registers on the GPU) */
    float cscale;         /* cells / (e[nb] - e[0]) */
    unsigned last_cell;   /* cells - 1 */
    int nb;
} mh_hist_table;

/* The cell of x, for x >= lo: g = (x - lo) * cscale, each step rounded on its own (no fused
 * multiply-add on either side; the host files build with -ffp-contract=off), then floor(g) where
 * g < 2^23; larger g and NaN (from an overflowing or empty width) go past every cell, hence to the
 * last: still non-decreasing in x. */
MH_HD unsigned mh_hist_cell(const mh_hist_table *t, float x)
{
#ifdef __CUDA_ARCH__
    const float g = __fmul_rn(__fsub_rn(x, t->lo), t->cscale);
    /* 2^23 added toward zero leaves floor(g) in the low bits, with no conversion instruction;
     * from 2^23 up, and for NaN, the bits are past any cell as on the host */
    const unsigned whole = (unsigned)__float_as_int(__fadd_rz(g, 8388608.0f)) - 0x4B000000u;
    return min(whole, t->last_cell);
#else
    const float g = (x - t->lo) * t->cscale;
    const unsigned whole = g < 8388608.0f ? (unsigned)floorf(g) : 0xFFFFFFFFu;
    return whole < t->last_cell ? whole : t->last_cell;
#endif
}

/* The cell of the float just below e, or -1 where e <= lo (below every cell). */
MH_HD int mh_hist_cell_below(const mh_hist_table *t, float e)
{
    return e <= t->lo ? -1 : (int)mh_hist_cell(t, nextafterf(e, -INFINITY));
}

/* The last bin i in [a, b] with e[i] <= x. */
MH_HD int mh_hist_table_search(const float *e, float x, int a, int b)
{
    while (a < b) {
        const int mid = a + (b - a + 1) / 2;
        if (e[mid] <= x) a = mid;
        else b = mid - 1;
    }
    return a;
}

/* The table's scalars, once e[0 .. nb] hold the edges. */
MH_HD mh_hist_table mh_hist_table_of(const float *e, const unsigned *cell, int nb, int cells)
{
    mh_hist_table t;
    t.e = e, t.cell = cell, t.lo = e[0], t.hi = e[nb], t.nb = nb;
#ifdef __CUDA_ARCH__
    t.cscale = __fdiv_rn((float)cells, __fsub_rn(t.hi, t.lo));
#else
    t.cscale = (float)cells / (t.hi - t.lo);
#endif
    t.last_cell = (unsigned)cells - 1;
    return t;
}

/* The cell word before filling: the full range of bins. */
MH_HD unsigned mh_hist_table_full(int nb) { return (unsigned)(nb - 1) << 16; }

/* Writes bin i (0 <= i < nb) into the cells it is first or last bin of: first of the cells
 * (below(e[i]), below(e[i + 1])], last of [c(e[i]), c(e[i + 1])), bin 0 from the first cell and
 * bin nb - 1 to the last. halves: the cell words as 16-bit halves ([2c]: first, [2c + 1]: last). */
MH_HD void mh_hist_table_fill_bin(const mh_hist_table *t, unsigned short *halves, int i, int cells)
{
    const int nb = t->nb;
    const int first_from = i == 0 ? 0 : mh_hist_cell_below(t, t->e[i]) + 1;
    const int first_to = i == nb - 1 ? cells - 1 : mh_hist_cell_below(t, t->e[i + 1]);
    const int last_from = i == 0 ? 0 : (int)mh_hist_cell(t, t->e[i]);
    const int last_to = i == nb - 1 ? cells - 1 : (int)mh_hist_cell(t, t->e[i + 1]) - 1;
    for (int c = first_from > 0 ? first_from : 0; c <= first_to; ++c) halves[2 * c] = (unsigned short)i;
    for (int c = last_from; c <= last_to; ++c) halves[2 * c + 1] = (unsigned short)i;
}

/* x's bin by the table, or nb where it is not counted: mh_hist_float_bin's answer. */
MH_HD int mh_hist_table_bin(const mh_hist_table *t, float x)
{
    if (!(x >= t->lo && x <= t->hi)) return t->nb;
    const unsigned w = t->cell[mh_hist_cell(t, x)];
    const int a = (int)(w & 0xFFFFu), b = (int)(w >> 16);
    if (b > a + 1) return mh_hist_table_search(t->e, x, a, b);
    return b > a && t->e[b] <= x ? b : a; /* the edge read only where the cell holds two bins */
}

#endif

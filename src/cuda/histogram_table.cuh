/* Float32 bins staged in a block's shared memory, for the histogram kernels that count many
 * values a block (histogram.cu's vector and lane-private; histogram_weighted.cu's chunks
 * between explicit edges).
 *
 * The table holds the edges e[0 .. B] (numpy's, core/histogram_rule.h: computed from the rule for
 * uniform bins, copied for explicit ones) and a cell table. A value x in [e[0], e[B]] falls in
 * cell c(x) = min(floor((x - e[0]) * cscale), cells - 1), computed in float32 with each
 * operation rounded on its own. c is a non-decreasing function of x (every rounded step is), so
 * the values of one cell form an interval of floats, and the bins those values fall in run from
 * the bin of its first value to the bin of its last. The table holds both, for every cell,
 * worked out exactly from the edges:
 *   first bin of cell c = max { i : e[i] <= the cell's first value } = max { i : c(prev(e[i])) < c }
 *   last bin of cell c  = max { i : e[i] <= the cell's last value }  = max { i : c(e[i]) <= c }
 * (prev: the next float below; e[i] <= e[0] counts as below every cell). So a value's bin is the
 * cell's only bin, or one compare with the edge between its two bins, or a search among its few
 * bins: with 8 cells a bin, one value in about 8 reads an edge. No rounding case falls outside,
 * whatever the range (a width that overflows, bins narrower than their values' spacing only
 * make the cells wider in bins).
 *
 * The table is filled edge by edge: the lanes of a warp take 32 edges, each lane writing bin i
 * into the cells between its edge and the next. Where a bin spans many cells (one wide bin
 * among narrow ones) its lane writes them all; edges that are not sorted (which the API
 * documents as invalid) leave cells at the full range [0, B - 1], never past it. */
#ifndef MEMHIER_HISTOGRAM_TABLE_CUH
#define MEMHIER_HISTOGRAM_TABLE_CUH

#include "common.cuh"

/* Shared bytes of the table for num_bins bins and `cells` cells. */
static inline size_t mh_hist_table_bytes(int num_bins, int cells)
{
    return ((size_t)num_bins + 1) * sizeof(float) + (size_t)cells * sizeof(unsigned);
}

/* Bins are 16-bit in the cell table. */
enum { MH_HIST_TABLE_MAX_BINS = 65535 };

/* Cells of the table for a float32 call whose kernel keeps `smem` other bytes of shared memory:
 * 8 a bin, from 8 to 16384 (64 KB), halved until they fit; 0 where the edges alone do not fit,
 * the bins pass 16 bits or the values are not float32 (the kernel then computes the rule per
 * value). */
static inline int mh_hist_table_cells(const mh_histogram_args *a, size_t smem)
{
    if (!a->floats || a->num_bins > MH_HIST_TABLE_MAX_BINS) return 0;
    for (int cells = a->num_bins > 2048 ? 16384 : 8 * a->num_bins; cells >= 1; cells /= 2)
        if (smem + mh_hist_table_bytes(a->num_bins, cells) <= mh_smem_optin()) return cells;
    return 0;
}

struct mh_hist_table {
    const float *e;       /* e[0 .. nb], in shared memory */
    const unsigned *cell; /* cells words: first bin | last bin << 16 */
    float lo, hi;         /* e[0], e[nb]: the values counted, held in registers */
    float cscale;         /* cells / (e[nb] - e[0]) */
    unsigned last_cell;   /* cells - 1 */
    int nb;
};

/* The cell of x, for x >= lo (NaN products go to the last cell: still non-decreasing). */
static __device__ __forceinline__ unsigned mh_hist_cell(const mh_hist_table &t, float x)
{
    const float g = __fmul_rn(__fsub_rn(x, t.lo), t.cscale);
    const unsigned whole = (unsigned)__float_as_int(__fadd_rz(g, 8388608.0f)) - 0x4B000000u; /* floor(g) below 2^23 */
    return min(whole, t.last_cell);
}

/* The cell of the float just below e, or -1 where e <= lo (below every cell). */
static __device__ __forceinline__ int mh_hist_cell_below(const mh_hist_table &t, float e)
{
    return e <= t.lo ? -1 : (int)mh_hist_cell(t, nextafterf(e, -INFINITY));
}

/* The last bin i in [a, b] with e[i] <= x. */
static __device__ __forceinline__ int mh_hist_table_search(const float *e, float x, int a, int b)
{
    while (a < b) {
        const int mid = a + (b - a + 1) / 2;
        if (e[mid] <= x) a = mid;
        else b = mid - 1;
    }
    return a;
}

/* Stages the table for nb bins by rule f in smem (mh_hist_table_bytes(nb, cells) bytes, 4-byte
 * aligned) with all threads of the block; ends with a barrier. nb <= MH_HIST_TABLE_MAX_BINS. */
static __device__ mh_hist_table mh_hist_stage_table(const mh_hist_float &f, int nb, int cells, void *smem)
{
    float *e = static_cast<float *>(smem);
    unsigned *cell = reinterpret_cast<unsigned *>(e + nb + 1);
    for (int i = threadIdx.x; i <= nb; i += blockDim.x) e[i] = mh_hist_edge(&f, nb, i);
    for (int c = threadIdx.x; c < cells; c += blockDim.x) cell[c] = (unsigned)(nb - 1) << 16;
    __syncthreads();
    mh_hist_table t;
    t.e = e, t.cell = cell, t.lo = e[0], t.hi = e[nb], t.nb = nb;
    t.cscale = __fdiv_rn((float)cells, __fsub_rn(t.hi, t.lo));
    t.last_cell = (unsigned)cells - 1;
    unsigned short *halves = reinterpret_cast<unsigned short *>(cell); /* [2c]: first bin, [2c + 1]: last */
    for (int i = threadIdx.x; i < nb; i += blockDim.x) {
        /* bin i is the first bin of cells (below(e[i]), below(e[i + 1])] and the last of
         * [c(e[i]), c(e[i + 1])), with bin 0 from the first cell and bin nb - 1 to the last */
        const int first_from = i == 0 ? 0 : mh_hist_cell_below(t, e[i]) + 1;
        const int first_to = i == nb - 1 ? cells - 1 : mh_hist_cell_below(t, e[i + 1]);
        const int last_from = i == 0 ? 0 : (int)mh_hist_cell(t, e[i]);
        const int last_to = i == nb - 1 ? cells - 1 : (int)mh_hist_cell(t, e[i + 1]) - 1;
        for (int c = max(first_from, 0); c <= first_to; ++c) halves[2 * c] = (unsigned short)i;
        for (int c = last_from; c <= last_to; ++c) halves[2 * c + 1] = (unsigned short)i;
    }
    __syncthreads();
    return t;
}

/* x's bin by the table, or nb where it is not counted: mh_hist_float_bin's answer. */
static __device__ __forceinline__ int mh_hist_table_bin(const mh_hist_table &t, float x)
{
    if (!(x >= t.lo && x <= t.hi)) return t.nb;
    const unsigned w = t.cell[mh_hist_cell(t, x)];
    const int a = (int)(w & 0xFFFFu), b = (int)(w >> 16);
    if (b > a + 1) return mh_hist_table_search(t.e, x, a, b);
    return b > a && t.e[b] <= x ? b : a; /* the edge read only where the cell holds two bins */
}

#endif

/* Float32 bins staged in a block's shared memory, for the histogram kernels that count many
 * values a block (histogram.cu's vector and lane-private; histogram_weighted.cu's chunks
 * between explicit edges): the cell table of core/histogram_table.h, which says how it gives a
 * value its bin with one shared load. The lanes of a warp fill it 32 edges at a time, each lane
 * writing its bin into the cells between its edge and the next; where a bin spans many cells
 * (one wide bin among narrow ones) its lane writes them all. */
#ifndef MEMHIER_HISTOGRAM_TABLE_CUH
#define MEMHIER_HISTOGRAM_TABLE_CUH

#include "common.cuh"
#include "../core/histogram_table.h"

/* Shared bytes of the table for num_bins bins and `cells` cells. */
static inline size_t mh_hist_table_bytes(int num_bins, int cells)
{
    return ((size_t)num_bins + 1) * sizeof(float) + (size_t)cells * sizeof(unsigned);
}

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

/* Stages the table for nb bins by rule f in smem (mh_hist_table_bytes(nb, cells) bytes, 4-byte
 * aligned) with all threads of the block; ends with a barrier. nb <= MH_HIST_TABLE_MAX_BINS. */
static __device__ mh_hist_table mh_hist_stage_table(const mh_hist_float &f, int nb, int cells, void *smem)
{
    float *e = static_cast<float *>(smem);
    unsigned *cell = reinterpret_cast<unsigned *>(e + nb + 1);
    for (int i = threadIdx.x; i <= nb; i += blockDim.x) e[i] = mh_hist_edge(&f, nb, i);
    for (int c = threadIdx.x; c < cells; c += blockDim.x) cell[c] = mh_hist_table_full(nb);
    __syncthreads();
    const mh_hist_table t = mh_hist_table_of(e, cell, nb, cells);
    unsigned short *halves = reinterpret_cast<unsigned short *>(cell);
    for (int i = threadIdx.x; i < nb; i += blockDim.x) mh_hist_table_fill_bin(&t, halves, i, cells);
    __syncthreads();
    return t;
}

#endif

/* histogram on the CPU.
 *   cpu-reference  one pass, exact 64-bit counts: the oracle
 *   cpu-omp        each thread counts a slice into its own bins, merged after
 * Both take weighted histograms too: sums in double, in index order (cpu-omp: a thread's slice
 * in order, the threads' sums added in thread order). */
#include "../core/internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

static mh_status reference_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_histogram_args *a = &args->histogram;
    if (a->weighted) {
        double outside;
        mh_histogram_weighted_reference(a, a->sums, &outside);
        if (a->outside_sum) *a->outside_sum = outside;
        return MH_OK;
    }
    unsigned long long outside;
    mh_histogram_reference(a, a->bins, &outside);
    if (a->outside) *a->outside = outside;
    mh_histogram_write_edges(a);
    return MH_OK;
}

/* Weighted: each thread sums a contiguous slice into its own bins in double, the threads'
 * sums added in thread order (the same bits for the same thread count). */
static mh_status omp_weighted(mh_context *ctx, const mh_histogram_args *a)
{
    const int nb = a->num_bins, threads = omp_get_max_threads();
    double *priv = calloc((size_t)threads * (size_t)(nb + 1), sizeof *priv);
    if (!priv) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "cpu-omp: %d x %d private sums", threads, nb + 1);
#pragma omp parallel num_threads(threads)
    {
        double *mine = priv + (size_t)omp_get_thread_num() * (size_t)(nb + 1);
#pragma omp for schedule(static)
        for (long long i = 0; i < (long long)a->n; ++i) {
            const int b = mh_histogram_bin_at(a, (size_t)i);
            mine[b < 0 ? nb : b] += a->weights[i];
        }
    }
    for (int b = 0; b <= nb; ++b) {
        double s = 0.0;
        for (int t = 0; t < threads; ++t) s += priv[(size_t)t * (size_t)(nb + 1) + (size_t)b];
        if (b < nb) a->sums[b] = s;
        else if (a->outside_sum) *a->outside_sum = s;
    }
    free(priv);
    return MH_OK;
}

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    const mh_histogram_args *a = &args->histogram;
    if (a->weighted) return omp_weighted(ctx, a);
    const int nb = a->num_bins;
    const int threads = omp_get_max_threads();
    /* each thread's bins, and its outside count in slot nb */
    unsigned long long *priv = calloc((size_t)threads * (size_t)(nb + 1), sizeof *priv);
    if (!priv) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "cpu-omp: %d x %d private counts", threads, nb + 1);
#pragma omp parallel num_threads(threads)
    {
        unsigned long long *mine = priv + (size_t)omp_get_thread_num() * (size_t)(nb + 1);
#pragma omp for schedule(static)
        for (long long i = 0; i < (long long)a->n; ++i) {
            const int b = mh_histogram_bin_at(a, (size_t)i);
            ++mine[b < 0 ? nb : b];
        }
    }
    memset(a->bins, 0, (size_t)nb * sizeof *a->bins);
    unsigned long long outside = 0;
    for (int t = 0; t < threads; ++t) {
        const unsigned long long *mine = priv + (size_t)t * (size_t)(nb + 1);
        for (int b = 0; b < nb; ++b) a->bins[b] += mine[b];
        outside += mine[nb];
    }
    if (a->outside) *a->outside = outside;
    free(priv);
    mh_histogram_write_edges(a);
    return MH_OK;
}

static const mh_row rows[] = {
    {{"histogram/cpu-reference", MH_OP_HISTOGRAM, MH_BACKEND_CPU, 0, "host", "ours", "one pass, exact counts"},
     mh_supports_any, reference_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_WEIGHTS},
    {{"histogram/cpu-omp", MH_OP_HISTOGRAM, MH_BACKEND_CPU, 1, "host", "ours", "OpenMP, private bins per thread"},
     mh_supports_any, omp_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_WEIGHTS},
};

MH_ROW_GROUP(mh_histogram_cpu_rows, rows)

/* reduce on the CPU.
 *   cpu-reference  one pass in double, rounded once to float: the oracle
 *   cpu-omp        OpenMP threads each sum a contiguous slice in double; the slices' sums are
 *                  added in thread order (the same bits for the same thread count) */
#include "../core/internal.h"

#include <omp.h>
#include <stdlib.h>

static mh_status reference_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_reduce_args *a = &args->reduce;
    double sum, mag;
    mh_reduce_reference(a->in, a->n, &sum, &mag);
    *a->sum = (float)sum;
    return MH_OK;
}

enum { MAX_THREADS = 1024 };

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    const mh_reduce_args *a = &args->reduce;
    double part[MAX_THREADS] = {0};
    int used = 1;
#pragma omp parallel
    {
        const int t = omp_get_thread_num(), count = omp_get_num_threads();
        if (count <= MAX_THREADS) {
            const size_t lo = a->n / (size_t)count * (size_t)t, hi = t + 1 == count ? a->n : a->n / (size_t)count * (size_t)(t + 1);
            double s = 0.0;
            for (size_t i = lo; i < hi; ++i) s += (double)a->in[i];
            part[t] = s;
        }
#pragma omp single
        used = count;
    }
    if (used > MAX_THREADS) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "cpu-omp: %d threads, at most %d", used, MAX_THREADS);
    double total = 0.0;
    for (int t = 0; t < used; ++t) total += part[t];
    *a->sum = (float)total;
    return MH_OK;
}

static const mh_row rows[] = {
    {{"reduce/cpu-reference", MH_OP_REDUCE, MH_BACKEND_CPU, 0, "host", "ours", "one pass in double"},
     mh_supports_any, reference_run, NULL, 0},
    {{"reduce/cpu-omp", MH_OP_REDUCE, MH_BACKEND_CPU, 1, "host", "ours", "OpenMP slices in double, added in order"},
     mh_supports_any, omp_run, NULL, 0},
};

MH_ROW_GROUP(mh_reduce_cpu_rows, rows)

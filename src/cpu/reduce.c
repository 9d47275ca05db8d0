/* reduce on the CPU.
 *   cpu-reference  one pass in double, rounded once to float: the oracle
 *   cpu-omp        OpenMP threads each sum a contiguous slice in double; the slices' sums are
 *                  added in thread order (the same bits for the same thread count)
 * Both take every reduction along an axis (mh_reduce): each lane in one pass by
 * mh_reduce_lane, cpu-omp's threads taking lanes. */
#include "../core/internal.h"

#include <omp.h>
#include <stdlib.h>

/* Every lane of an axis reduction, in order (threads: lanes spread over OpenMP threads). */
static void reduce_lanes(const mh_reduce_args *a, int threads)
{
    const size_t lanes = a->outer * a->inner, size = mh_reduce_out_size(a->dtype, a->kind);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (long long k = 0; k < (long long)lanes; ++k)
        mh_reduce_lane(a, (size_t)k / a->inner, (size_t)k % a->inner, (char *)a->out + (size_t)k * size);
}

static mh_status reference_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_reduce_args *a = &args->reduce;
    if (!a->whole_sum) {
        reduce_lanes(a, 1);
        return MH_OK;
    }
    double sum, mag;
    mh_reduce_reference(a->in, a->n, &sum, &mag);
    *a->sum = (float)sum;
    return MH_OK;
}

enum { MAX_THREADS = 1024 };

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    const mh_reduce_args *a = &args->reduce;
    if (!a->whole_sum) {
        reduce_lanes(a, omp_get_max_threads());
        return MH_OK;
    }
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
     mh_supports_any, reference_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_ANY_REDUCTION},
    {{"reduce/cpu-omp", MH_OP_REDUCE, MH_BACKEND_CPU, 1, "host", "ours", "OpenMP slices in double, added in order"},
     mh_supports_any, omp_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_ANY_REDUCTION},
};

MH_ROW_GROUP(mh_reduce_cpu_rows, rows)

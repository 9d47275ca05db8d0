/* reduce on the CPU.
 *   cpu-reference  one pass in double, rounded once to float: the oracle
 *   cpu-omp        OpenMP threads each sum a contiguous slice in double; the slices' sums are
 *                  added in thread order (the same bits for the same thread count)
 * Both take every reduction along an axis (mh_reduce) by numpy's rules (NaN wins min and max;
 * the arg forms take the first NaN, else the first extreme; sums in double, int64 or uint64), each
 * lane's values added in index order: rows (inner = 1) a lane at a time, columns (inner > 1) a
 * block of lanes at a time down the axis, reading whole row segments in memory order;
 * cpu-omp's threads take lanes or blocks of them. */
#include "../core/internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* One lane's reduction so far: float sums in double; integer sums in 64 bits (wrapping, as
 * numpy's: kept as unsigned, whose overflow C defines) and, for a 64-bit integer mean, in double
 * too (numpy's mean converts before it adds); the extreme in double, or exactly for integers (in
 * int64, or in uint64 for uint64). */
typedef struct lane_acc {
    double sum, best;
    unsigned long long isum, ubest;
    long long ibest;
    size_t at;
    int nan;
} lane_acc;

static inline __attribute__((always_inline)) long long signed_at(const void *in, mh_dtype t, size_t k)
{
    switch (t) {
    case MH_I8: return ((const int8_t *)in)[k];
    case MH_I16: return ((const int16_t *)in)[k];
    case MH_I32: return ((const int32_t *)in)[k];
    case MH_U8: return ((const uint8_t *)in)[k];
    case MH_U16: return ((const uint16_t *)in)[k];
    case MH_U32: return ((const uint32_t *)in)[k];
    default: return ((const int64_t *)in)[k];
    }
}

static inline int is_integer(mh_dtype t) { return t != MH_F32 && t != MH_F64; }

/* Element k of the input, the lane's l-th value, added. Integers below 64 bits, signed or not, are
 * held exactly in int64; uint64 is compared as itself. */
static inline __attribute__((always_inline)) void lane_add(lane_acc *s, const mh_reduce_args *a, size_t k, size_t l,
                                                       int want_max)
{
    if (a->dtype == MH_U64) {
        const unsigned long long v = ((const uint64_t *)a->in)[k];
        s->isum += v;
        s->sum += (double)v;
        if (l == 0 || (want_max ? v > s->ubest : v < s->ubest)) s->ubest = v, s->at = l;
        return;
    }
    if (is_integer(a->dtype)) {
        const long long v = signed_at(a->in, a->dtype, k);
        s->isum += (unsigned long long)v;
        s->sum += (double)v;
        if (l == 0 || (want_max ? v > s->ibest : v < s->ibest)) s->ibest = v, s->at = l;
        return;
    }
    const double v = a->dtype == MH_F32 ? (double)((const float *)a->in)[k] : ((const double *)a->in)[k];
    s->sum += v;
    if (s->nan) return;
    if (v != v) s->nan = 1, s->at = l, s->best = v;
    else if (l == 0 || (want_max ? v > s->best : v < s->best)) s->best = v, s->at = l;
}

/* The mean's sum: floats' and 64-bit integers' in double (numpy's mean converts before it adds);
 * narrower integers' exact sum, converted once. */
static double mean_sum(const lane_acc *s, mh_dtype t)
{
    if (t == MH_F32 || t == MH_F64 || t == MH_I64 || t == MH_U64) return s->sum;
    return t == MH_U32 ? (double)s->isum : (double)(long long)s->isum;
}

/* An extreme of an integer dtype below 64 bits (or int64), in that dtype. */
static void store_integer(void *out, mh_dtype t, long long v)
{
    switch (t) {
    case MH_I8: *(int8_t *)out = (int8_t)v; break;
    case MH_U8: *(uint8_t *)out = (uint8_t)v; break;
    case MH_I16: *(int16_t *)out = (int16_t)v; break;
    case MH_U16: *(uint16_t *)out = (uint16_t)v; break;
    case MH_I32: *(int32_t *)out = (int32_t)v; break;
    case MH_U32: *(uint32_t *)out = (uint32_t)v; break;
    default: *(int64_t *)out = v;
    }
}

/* s by value: a row's state, whose address never escapes, stays in registers */
static void lane_store(lane_acc s, const mh_reduce_args *a, void *out)
{
    const mh_dtype t = a->dtype;
    switch (a->kind) {
    case MH_REDUCE_SUM:
        if (t == MH_F32) *(float *)out = (float)s.sum;
        else if (t == MH_F64) *(double *)out = s.sum;
        else *(unsigned long long *)out = s.isum; /* int64 or uint64: the same bits */
        break;
    case MH_REDUCE_MEAN: {
        const double mean = a->len ? mean_sum(&s, t) / (double)a->len : NAN;
        if (t == MH_F32) *(float *)out = (float)mean;
        else *(double *)out = mean;
        break;
    }
    case MH_REDUCE_MIN:
    case MH_REDUCE_MAX:
        if (t == MH_F32) *(float *)out = (float)s.best;
        else if (t == MH_F64) *(double *)out = s.best;
        else if (t == MH_U64) *(uint64_t *)out = s.ubest;
        else store_integer(out, t, s.ibest);
        break;
    default: *(long long *)out = (long long)s.at;
    }
}

enum { COLUMN_BLOCK = 256 };

/* Task t: a row (inner = 1), or a block of COLUMN_BLOCK lanes of one outer index walked down
 * the axis together. */
static void reduce_task(const mh_reduce_args *a, size_t t, size_t blocks_per_outer)
{
    const size_t size = mh_reduce_out_size(a->dtype, a->kind);
    const int want_max = a->kind == MH_REDUCE_MAX || a->kind == MH_REDUCE_ARGMAX;
    if (a->inner == 1) { /* a row: its state a local, kept in registers */
        lane_acc row = {0};
        for (size_t l = 0; l < a->len; ++l) lane_add(&row, a, t * a->len + l, l, want_max);
        lane_store(row, a, (char *)a->out + t * size);
        return;
    }
    lane_acc acc[COLUMN_BLOCK];
    const size_t o = t / blocks_per_outer, i0 = t % blocks_per_outer * COLUMN_BLOCK;
    const size_t i1 = a->inner - i0 < COLUMN_BLOCK ? a->inner : i0 + COLUMN_BLOCK;
    memset(acc, 0, (i1 - i0) * sizeof *acc);
    for (size_t l = 0; l < a->len; ++l) {
        const size_t row = (o * a->len + l) * a->inner;
        for (size_t i = i0; i < i1; ++i) lane_add(&acc[i - i0], a, row + i, l, want_max);
    }
    for (size_t i = i0; i < i1; ++i) lane_store(acc[i - i0], a, (char *)a->out + (o * a->inner + i) * size);
}

/* Every lane of an axis reduction (threads: tasks spread over OpenMP threads). */
static void reduce_lanes(const mh_reduce_args *a, int threads)
{
    const size_t blocks_per_outer = (a->inner + COLUMN_BLOCK - 1) / COLUMN_BLOCK, tasks = a->outer * blocks_per_outer;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (long long t = 0; t < (long long)tasks; ++t) reduce_task(a, (size_t)t, blocks_per_outer);
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

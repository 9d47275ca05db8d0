/* The reduce driver of memhier bench: whole float32 sums against a double reference, and
 * reductions along an axis (mh_reduce: sum, max, argmax of float32 matrices along either axis,
 * argmax of a whole array) against a reference worked out here in one pass in memory order;
 * sums within the sum bound, max and argmax exact. The outputs are poisoned with NaN first (a
 * result never written fails). */
#include "bench.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reduce_case {
    size_t n;
    float scale;          /* inputs uniform in [-scale, scale) */
    int axis_form;        /* 0: the whole float32 sum (mh_reduce_sum); 1: mh_reduce */
    mh_reduce_kind kind;  /* axis_form: the reduction of outer x len x inner over len */
    size_t outer, len, inner, lanes;
    float *h_in, *d_in, h_sum, *d_sum;
    double ref, mag;
    void *h_out, *d_out;       /* axis_form: lanes results */
    double *lane_ref, *lane_mag; /* sums: each lane's double sum and sum of |x| */
    void *want;                /* max, argmax: the exact results */
} reduce_case;

typedef struct reduce_default {
    size_t rows, cols; /* a rows x cols matrix; cols = 0: a whole array of rows values */
    int axis;          /* -1: the whole array */
    mh_reduce_kind kind;
    float scale;
} reduce_default;

/* 2^28 floats; LeetGPU's 4,194,304 values in [-1000, 1000]; a 16384^2 matrix's sum, max and
 * argmax along each axis; 4 long rows and 2^26 short ones; the argmax of 2^28 values. */
static const reduce_default gpu_defaults[] = {
    {(size_t)1 << 28, 0, -1, MH_REDUCE_SUM, 1.0f},   {4194304, 0, -1, MH_REDUCE_SUM, 1000.0f},
    {16384, 16384, 0, MH_REDUCE_SUM, 1.0f},          {16384, 16384, 1, MH_REDUCE_SUM, 1.0f},
    {16384, 16384, 0, MH_REDUCE_MAX, 1.0f},          {16384, 16384, 1, MH_REDUCE_MAX, 1.0f},
    {16384, 16384, 0, MH_REDUCE_ARGMAX, 1.0f},       {16384, 16384, 1, MH_REDUCE_ARGMAX, 1.0f},
    {4, (size_t)1 << 26, 1, MH_REDUCE_SUM, 1.0f},    {(size_t)1 << 26, 4, 0, MH_REDUCE_SUM, 1.0f},
    {(size_t)1 << 28, 0, -1, MH_REDUCE_ARGMAX, 1.0f},
};
static const reduce_default cpu_defaults[] = {
    {(size_t)1 << 24, 0, -1, MH_REDUCE_SUM, 1.0f}, {4194304, 0, -1, MH_REDUCE_SUM, 1000.0f},
    {4096, 4096, 0, MH_REDUCE_SUM, 1.0f},          {4096, 4096, 1, MH_REDUCE_SUM, 1.0f},
    {4096, 4096, 1, MH_REDUCE_ARGMAX, 1.0f},
};

static const char *kind_name(mh_reduce_kind k)
{
    static const char *const names[] = {"sum", "mean", "min", "max", "argmin", "argmax"};
    return names[k];
}

static void describe(bench_workload *w, const reduce_default *d)
{
    reduce_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    c->n = d->cols ? d->rows * d->cols : d->rows, c->scale = d->scale, c->kind = d->kind;
    c->axis_form = d->cols || d->kind != MH_REDUCE_SUM;
    c->outer = d->axis == 1 ? d->rows : 1, c->inner = d->axis == 0 ? d->cols : 1;
    c->len = d->axis == 0 ? d->rows : d->axis == 1 ? d->cols : c->n;
    c->lanes = c->outer * c->inner;
    if (!c->axis_form) snprintf(w->desc, sizeof w->desc, "n=%zu range=%g", c->n, (double)d->scale);
    else if (d->cols)
        snprintf(w->desc, sizeof w->desc, "kind=%s shape=%zux%zu axis=%d range=%g", kind_name(d->kind), d->rows, d->cols,
                 d->axis, (double)d->scale);
    else snprintf(w->desc, sizeof w->desc, "kind=%s shape=%zu axis=none range=%g", kind_name(d->kind), c->n, (double)d->scale);
    w->flops = (double)c->n;
    w->bytes = 4.0 * (double)c->n;
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    if (o->any_size) {
        const reduce_default d = {bench_size_or(o, BENCH_N, (size_t)1 << 28), 0, -1, MH_REDUCE_SUM, 1.0f};
        describe(&w[0], &d);
        return 1;
    }
    const size_t count = gpu ? sizeof gpu_defaults / sizeof gpu_defaults[0] : sizeof cpu_defaults / sizeof cpu_defaults[0];
    for (size_t i = 0; i < count && i < max; ++i) describe(&w[i], gpu ? &gpu_defaults[i] : &cpu_defaults[i]);
    return count;
}

/* Every lane's reference in one pass over the input in memory order. */
static int axis_reference(reduce_case *c)
{
    const size_t size = mh_reduce_out_size(MH_F32, c->kind);
    c->lane_ref = calloc(c->lanes, sizeof(double)), c->lane_mag = calloc(c->lanes, sizeof(double));
    c->want = malloc(c->lanes * size);
    if (!c->lane_ref || !c->lane_mag || !c->want) return 0;
    double *best = c->lane_ref; /* max and argmax keep the best value there */
    long long *at = calloc(c->lanes, sizeof *at);
    if (!at) return 0;
    const int extreme = c->kind != MH_REDUCE_SUM;
    for (size_t o = 0; o < c->outer; ++o)
        for (size_t l = 0; l < c->len; ++l) {
            const float *row = c->h_in + (o * c->len + l) * c->inner;
            for (size_t i = 0; i < c->inner; ++i) {
                const size_t lane = o * c->inner + i;
                const double v = row[i];
                if (!extreme) c->lane_ref[lane] += v, c->lane_mag[lane] += fabs(v);
                else if (l == 0 || v > best[lane]) best[lane] = v, at[lane] = (long long)l;
            }
        }
    for (size_t lane = 0; extreme && lane < c->lanes; ++lane) {
        if (c->kind == MH_REDUCE_MAX) ((float *)c->want)[lane] = (float)best[lane];
        else ((long long *)c->want)[lane] = at[lane];
    }
    free(at);
    return 1;
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    reduce_case *c = w->state;
    if (!c) return snprintf(err, len, "out of memory"), 0;
    c->h_in = malloc((c->n ? c->n : 1) * sizeof(float));
    if (!c->h_in) return snprintf(err, len, "out of host memory"), 0;
    mh_fill_uniform(c->h_in, c->n, 21, c->scale);
    const size_t out_floats = c->axis_form ? c->lanes * mh_reduce_out_size(MH_F32, c->kind) / 4 : 1;
    if (c->axis_form) {
        c->h_out = malloc(out_floats * 4);
        if (!c->h_out || !axis_reference(c)) return snprintf(err, len, "out of host memory"), 0;
    } else {
        mh_reduce_reference(c->h_in, c->n, &c->ref, &c->mag);
    }
    if (gpu && (!bench_device_copy(&c->d_in, c->h_in, c->n, err, len) || !bench_device_copy(&c->d_sum, NULL, out_floats, err, len)))
        return 0;
    c->d_out = c->d_sum;
    return 1;
}

static void teardown(bench_workload *w)
{
    reduce_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in), cudaFree(c->d_sum);
    free(c->h_in), free(c->h_out), free(c->lane_ref), free(c->lane_mag), free(c->want), free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    reduce_case *c = w->state;
    const int cpu = mh_context_device(ctx) == MH_CPU;
    if (!c->axis_form) mh_reduce_args_init(ctx, a, cpu ? c->h_in : c->d_in, c->n, cpu ? &c->h_sum : c->d_sum);
    else
        mh_reduce_axis_args_init(ctx, a, cpu ? c->h_in : c->d_in, MH_F32, c->outer, c->len, c->inner, c->kind,
                                 cpu ? c->h_out : c->d_out);
}

static void poison(bench_workload *w, mh_context *ctx)
{
    reduce_case *c = w->state;
    if (c->axis_form) bench_poison(ctx, c->h_out, c->d_out, c->lanes * mh_reduce_out_size(MH_F32, c->kind) / 4);
    else bench_poison(ctx, &c->h_sum, c->d_sum, 1);
}

static int check_axis(reduce_case *c, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    const size_t size = mh_reduce_out_size(MH_F32, c->kind);
    if (!bench_fetch(ctx, c->h_out, c->d_out, c->lanes * size / 4, why, len)) return 0;
    if (c->kind == MH_REDUCE_SUM) {
        const int ok = mh_compare(c->h_out, c->lane_ref, c->lane_mag, c->lanes, mh_sum_rtol(c->len), st);
        if (!ok)
            snprintf(why, len, "wrong: lane %zu sum %.9g, reference %.12g (%zu lanes over the bound, %zu not finite)",
                     st->first_bad, (double)st->first_out, st->first_ref, st->bad, st->nonfinite);
        return ok;
    }
    memset(st, 0, sizeof *st);
    for (size_t lane = 0; lane < c->lanes; ++lane)
        if (memcmp((const char *)c->h_out + lane * size, (const char *)c->want + lane * size, size)) {
            if (c->kind == MH_REDUCE_MAX)
                snprintf(why, len, "wrong: lane %zu max %.9g, reference %.9g", lane, (double)((const float *)c->h_out)[lane],
                         (double)((const float *)c->want)[lane]);
            else
                snprintf(why, len, "wrong: lane %zu argmax %lld, reference %lld", lane, ((const long long *)c->h_out)[lane],
                         ((const long long *)c->want)[lane]);
            return 0;
        }
    return 1;
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    reduce_case *c = w->state;
    if (c->axis_form) return check_axis(c, ctx, st, why, len);
    if (!bench_fetch(ctx, &c->h_sum, c->d_sum, 1, why, len)) return 0;
    if (isnan(c->h_sum)) return snprintf(why, len, "the sum is NaN (never written)"), 0;
    const int ok = mh_compare_sum(c->h_sum, c->ref, c->mag, c->n, st);
    if (!ok) snprintf(why, len, "wrong: sum %.9g, reference %.12g (sum of |x| %.6g)", c->h_sum, c->ref, c->mag);
    return ok;
}

/* The headline: the whole 2^28 sum and the 16384^2 sum down the columns (axis 0). */
const bench_driver bench_reduce_driver = {
    MH_OP_REDUCE, "reduce/atomic", "reduce/cpu-reference", "reduce/cub", 0, plan, setup, teardown, make_args, poison, check,
    (1u << 0) | (1u << 2), (1u << 0) | (1u << 2),
};

/* The reduce driver of memhier bench: sums of float32 against a double reference, the NaN
 * poison included (a sum never written fails). */
#include "bench.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct reduce_case {
    size_t n;
    float scale; /* inputs uniform in [-scale, scale) */
    float *h_in, *d_in, h_sum, *d_sum;
    double ref, mag;
} reduce_case;

/* 2^28 floats; LeetGPU's 4,194,304 values in [-1000, 1000] */
static const struct {
    size_t n;
    float scale;
} gpu_defaults[] = {{(size_t)1 << 28, 1.0f}, {4194304, 1000.0f}}, cpu_defaults[] = {{(size_t)1 << 24, 1.0f}, {4194304, 1000.0f}};

static void describe(bench_workload *w, size_t n, float scale)
{
    reduce_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    c->n = n, c->scale = scale;
    snprintf(w->desc, sizeof w->desc, "n=%zu range=%g", n, (double)scale);
    w->flops = (double)n;
    w->bytes = 4.0 * (double)n;
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    if (o->any_size) {
        describe(&w[0], bench_size_or(o, BENCH_N, (size_t)1 << 28), 1.0f);
        return 1;
    }
    const size_t count = gpu ? sizeof gpu_defaults / sizeof gpu_defaults[0] : sizeof cpu_defaults / sizeof cpu_defaults[0];
    for (size_t i = 0; i < count && i < max; ++i)
        describe(&w[i], gpu ? gpu_defaults[i].n : cpu_defaults[i].n, gpu ? gpu_defaults[i].scale : cpu_defaults[i].scale);
    return count;
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    reduce_case *c = w->state;
    if (!c) return snprintf(err, len, "out of memory"), 0;
    c->h_in = malloc((c->n ? c->n : 1) * sizeof(float));
    if (!c->h_in) return snprintf(err, len, "out of host memory"), 0;
    mh_fill_uniform(c->h_in, c->n, 21, c->scale);
    mh_reduce_reference(c->h_in, c->n, &c->ref, &c->mag);
    if (gpu && (!bench_device_copy(&c->d_in, c->h_in, c->n, err, len) || !bench_device_copy(&c->d_sum, NULL, 1, err, len)))
        return 0;
    return 1;
}

static void teardown(bench_workload *w)
{
    reduce_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in), cudaFree(c->d_sum);
    free(c->h_in), free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    reduce_case *c = w->state;
    const int cpu = mh_context_device(ctx) == MH_CPU;
    mh_reduce_args_init(ctx, a, cpu ? c->h_in : c->d_in, c->n, cpu ? &c->h_sum : c->d_sum);
}

static void poison(bench_workload *w, mh_context *ctx)
{
    reduce_case *c = w->state;
    bench_poison(ctx, &c->h_sum, c->d_sum, 1);
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    reduce_case *c = w->state;
    if (!bench_fetch(ctx, &c->h_sum, c->d_sum, 1, why, len)) return 0;
    if (isnan(c->h_sum)) return snprintf(why, len, "the sum is NaN (never written)"), 0;
    const int ok = mh_compare_sum(c->h_sum, c->ref, c->mag, c->n, st);
    if (!ok) snprintf(why, len, "wrong: sum %.9g, reference %.12g (sum of |x| %.6g)", c->h_sum, c->ref, c->mag);
    return ok;
}

const bench_driver bench_reduce_driver = {
    MH_OP_REDUCE, "reduce/atomic", "reduce/cpu-reference", "reduce/cub", 0, plan, setup, teardown, make_args, poison, check, 1u << 0, 1u << 0,
};

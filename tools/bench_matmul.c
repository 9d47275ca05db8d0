/* The matmul driver of memhier bench: workloads, inputs uniform in [-1, 1), and a double
 * reference at a sample of outputs (bench_samples); every output is checked for NaN. */
#include "bench.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct matmul_case {
    size_t m, k, n;
    float *h_a, *h_b, *h_c, *d_a, *d_b, *d_c;
    bench_sampled check;
} matmul_case;

/* 4096^3; LeetGPU's A 8192 x 6144 times B 6144 x 4096; a skinny product (k = 64);
 * 1000^3, a multiple of no tile */
static const size_t gpu_defaults[][3] = {{4096, 4096, 4096}, {8192, 6144, 4096}, {8192, 64, 8192}, {1000, 1000, 1000}};
static const size_t cpu_defaults[][3] = {{256, 256, 256}, {300, 200, 500}};

static void describe(bench_workload *w, size_t m, size_t k, size_t n)
{
    matmul_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    c->m = m, c->k = k, c->n = n;
    snprintf(w->desc, sizeof w->desc, "m=%zu k=%zu n=%zu", m, k, n);
    w->flops = 2.0 * (double)m * (double)k * (double)n;
    w->bytes = 4.0 * ((double)m * k + (double)k * n + (double)m * n);
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    if (o->any_size) {
        /* --rows m --k k --cols n, or --n for a square product */
        const size_t sq = bench_size_or(o, BENCH_N, 4096);
        describe(&w[0], bench_size_or(o, BENCH_ROWS, sq), bench_size_or(o, BENCH_K, sq), bench_size_or(o, BENCH_COLS, sq));
        return 1;
    }
    const size_t(*list)[3] = gpu ? gpu_defaults : cpu_defaults;
    const size_t count = gpu ? sizeof gpu_defaults / sizeof gpu_defaults[0] : sizeof cpu_defaults / sizeof cpu_defaults[0];
    for (size_t i = 0; i < count && i < max; ++i) describe(&w[i], list[i][0], list[i][1], list[i][2]);
    return count;
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    matmul_case *c = w->state;
    if (!c) return snprintf(err, len, "out of memory"), 0;
    const size_t na = c->m * c->k, nb = c->k * c->n, nc = c->m * c->n;
    c->h_a = malloc(na * sizeof(float));
    c->h_b = malloc(nb * sizeof(float));
    c->h_c = malloc(nc * sizeof(float));
    if (!c->h_a || !c->h_b || !c->h_c || !bench_sampled_alloc(&c->check, nc))
        return snprintf(err, len, "out of host memory"), 0;
    mh_fill_uniform(c->h_a, na, 11, 1.0f);
    mh_fill_uniform(c->h_b, nb, 12, 1.0f);
    bench_sampled *sm = &c->check;
#pragma omp parallel for schedule(dynamic, 16)
    for (long long s = 0; s < (long long)sm->count; ++s)
        mh_matmul_reference_at(c->h_a, c->h_b, c->k, c->n, sm->at[s] / c->n, sm->at[s] % c->n, &sm->ref[s], &sm->mag[s]);
    if (gpu && (!bench_device_copy(&c->d_a, c->h_a, na, err, len) || !bench_device_copy(&c->d_b, c->h_b, nb, err, len) ||
                !bench_device_copy(&c->d_c, NULL, nc, err, len)))
        return 0;
    return 1;
}

static void teardown(bench_workload *w)
{
    matmul_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_a), cudaFree(c->d_b), cudaFree(c->d_c);
    free(c->h_a), free(c->h_b), free(c->h_c);
    bench_sampled_free(&c->check);
    free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    const matmul_case *c = w->state;
    const int cpu = mh_context_device(ctx) == MH_CPU;
    mh_matmul_args_init(ctx, a, cpu ? c->h_a : c->d_a, cpu ? c->h_b : c->d_b, cpu ? c->h_c : c->d_c, c->m, c->k, c->n);
}

static void poison(bench_workload *w, mh_context *ctx)
{
    matmul_case *c = w->state;
    bench_poison(ctx, c->h_c, c->d_c, c->m * c->n);
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    matmul_case *c = w->state;
    const size_t nc = c->m * c->n;
    size_t unwritten = 0;
    if (!bench_fetch(ctx, c->h_c, c->d_c, nc, why, len)) return 0;
    const double rtol = w->reduced ? mh_tf32_rtol(c->k) : mh_sum_rtol(c->k); /* TF32 rows: their own bound */
    int ok = bench_sampled_compare_rtol(&c->check, c->h_c, nc, rtol, st, &unwritten);
    if (unwritten) return snprintf(why, len, "%zu of %zu outputs are NaN (never written)", unwritten, nc), 0;
    if (!ok)
        snprintf(why, len, "wrong: c[%zu] = %.7g, reference %.7g; rel_l2 %.2e, %zu samples over the bound",
                 c->check.at[st->first_bad], st->first_out, st->first_ref, st->rel_l2, st->bad);
    return ok;
}

const bench_driver bench_matmul_driver = {
    MH_OP_MATMUL, "matmul/naive", "matmul/cpu-reference", "matmul/cublas", 0, plan, setup, teardown, make_args, poison, check, 1u << 0, 1u << 0,
};

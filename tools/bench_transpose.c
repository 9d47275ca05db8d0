/* The transpose driver of memhier bench: workloads, inputs, and an exact check of every
 * output element (the NaN poison included). The CPU rows run in GPU runs too: seed 002's
 * CPU against GPU comparison. */
#include "bench.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct transpose_case {
    size_t rows, cols;
    float *h_in, *h_out, *d_in, *d_out;
} transpose_case;

static const size_t gpu_defaults[][2] = {{8192, 8192}, {7000, 6000}, {1, 16777216}, {16777216, 1}, {4096, 4096}};
static const size_t cpu_defaults[][2] = {{2048, 2048}, {1000, 3000}, {1, 1048576}, {1048576, 1}};

static void describe(bench_workload *w, size_t rows, size_t cols)
{
    transpose_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    c->rows = rows, c->cols = cols;
    snprintf(w->desc, sizeof w->desc, "rows=%zu cols=%zu", rows, cols);
    w->flops = 0.0;
    w->bytes = 8.0 * (double)rows * (double)cols;
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    if (o->any_size) {
        describe(&w[0], bench_size_or(o, BENCH_ROWS, 8192), bench_size_or(o, BENCH_COLS, 8192));
        return 1;
    }
    const size_t(*list)[2] = gpu ? gpu_defaults : cpu_defaults;
    size_t count = gpu ? sizeof gpu_defaults / sizeof gpu_defaults[0] : sizeof cpu_defaults / sizeof cpu_defaults[0];
    for (size_t i = 0; i < count && i < max; ++i) describe(&w[i], list[i][0], list[i][1]);
    return count;
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    transpose_case *c = w->state;
    if (!c) return snprintf(err, len, "out of memory"), 0;
    const size_t n = c->rows * c->cols;
    c->h_in = malloc(n * sizeof(float));
    c->h_out = malloc(n * sizeof(float));
    if (!c->h_in || !c->h_out) return snprintf(err, len, "out of host memory"), 0;
    mh_fill_uniform(c->h_in, n, 5, 1.0f);
    if (gpu && (!bench_device_copy(&c->d_in, c->h_in, n, err, len) || !bench_device_copy(&c->d_out, NULL, n, err, len)))
        return 0;
    return 1;
}

static void teardown(bench_workload *w)
{
    transpose_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in), cudaFree(c->d_out);
    free(c->h_in), free(c->h_out), free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    const transpose_case *c = w->state;
    const int cpu = mh_context_device(ctx) == MH_CPU;
    mh_transpose_args_init(ctx, a, cpu ? c->h_in : c->d_in, c->rows, c->cols, cpu ? c->h_out : c->d_out);
}

static void poison(bench_workload *w, mh_context *ctx)
{
    transpose_case *c = w->state;
    bench_poison(ctx, c->h_out, c->d_out, c->rows * c->cols);
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    transpose_case *c = w->state;
    const size_t n = c->rows * c->cols;
    memset(st, 0, sizeof *st);
    if (!bench_fetch(ctx, c->h_out, c->d_out, n, why, len)) return 0;
    size_t wrong = 0, first = 0;
    for (size_t y = 0; y < c->rows; ++y)
        for (size_t x = 0; x < c->cols; ++x)
            if (memcmp(&c->h_out[x * c->rows + y], &c->h_in[y * c->cols + x], sizeof(float)) != 0 && !wrong++)
                first = x * c->rows + y;
    if (!wrong) return 1;
    snprintf(why, len, "%zu of %zu elements differ (first at out[%zu][%zu])", wrong, n, first / c->rows, first % c->rows);
    st->rel_l2 = (double)wrong / (double)n;
    return 0;
}

const bench_driver bench_transpose_driver = {
    MH_OP_TRANSPOSE, "transpose/naive", "transpose/cpu-reference", "transpose/cublas", 1,
    plan,            setup,             teardown,                  make_args,          poison, check, 1u << 0, 1u << 0,
};

/* The rank driver of memhier bench: median filters of float32 images, every output checked bit
 * for bit against rank/cpu-reference's (the NaN poison included). Only CPU rows exist so far. */
#include "bench.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rank_case {
    size_t rows, cols, side;
    unsigned char footprint[49];
    float *h_in, *h_out, *h_ref, *d_in, *d_out;
} rank_case;

static const size_t defaults[][3] = {{1024, 1024, 3}, {1024, 1024, 5}, {512, 512, 7}};

static mh_rank_desc desc_of(const rank_case *c)
{
    mh_rank_desc d = {1, c->rows, c->cols, 1, MH_F32, MH_F32, c->footprint, c->side, c->side, NULL, 0, 0, 0,
                      MH_MODE_REFLECT, 0.0, 0, 1, 1, 0};
    d.rank = c->side * c->side / 2; /* the median */
    return d;
}

static void describe(bench_workload *w, size_t rows, size_t cols, size_t side)
{
    rank_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    c->rows = rows, c->cols = cols, c->side = side;
    memset(c->footprint, 1, side * side);
    snprintf(w->desc, sizeof w->desc, "rows=%zu cols=%zu median=%zux%zu mode=reflect", rows, cols, side, side);
    w->flops = 0.0;
    w->bytes = 8.0 * (double)rows * (double)cols;
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    (void)gpu;
    if (o->any_size) {
        const size_t side = bench_size_or(o, BENCH_KROWS, 3);
        describe(&w[0], bench_size_or(o, BENCH_ROWS, 1024), bench_size_or(o, BENCH_COLS, 1024), side > 7 ? 7 : side);
        return 1;
    }
    const size_t count = sizeof defaults / sizeof defaults[0];
    for (size_t i = 0; i < count && i < max; ++i) describe(&w[i], defaults[i][0], defaults[i][1], defaults[i][2]);
    return count;
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    rank_case *c = w->state;
    if (!c) return snprintf(err, len, "out of memory"), 0;
    const size_t n = c->rows * c->cols;
    c->h_in = malloc(n * sizeof(float)), c->h_out = malloc(n * sizeof(float)), c->h_ref = malloc(n * sizeof(float));
    if (!c->h_in || !c->h_out || !c->h_ref) return snprintf(err, len, "out of host memory"), 0;
    mh_fill_uniform(c->h_in, n, 7, 1.0f);
    mh_context *cpu = NULL;
    const mh_rank_desc d = desc_of(c);
    if (mh_context_create(&cpu, MH_CPU) != MH_OK || mh_rank(cpu, "cpu-reference", &d, c->h_in, c->h_ref) != MH_OK) {
        snprintf(err, len, "the reference: %s", cpu ? mh_context_error(cpu) : "no CPU context");
        mh_context_destroy(cpu);
        return 0;
    }
    mh_context_destroy(cpu);
    if (gpu && (!bench_device_copy(&c->d_in, c->h_in, n, err, len) || !bench_device_copy(&c->d_out, NULL, n, err, len)))
        return 0;
    return 1;
}

static void teardown(bench_workload *w)
{
    rank_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in), cudaFree(c->d_out);
    free(c->h_in), free(c->h_out), free(c->h_ref), free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    const rank_case *c = w->state;
    const int cpu = mh_context_device(ctx) == MH_CPU;
    const mh_rank_desc d = desc_of(c);
    mh_rank_args_init(ctx, a, &d, cpu ? c->h_in : c->d_in, cpu ? c->h_out : c->d_out);
}

static void poison(bench_workload *w, mh_context *ctx)
{
    rank_case *c = w->state;
    bench_poison(ctx, c->h_out, c->d_out, c->rows * c->cols);
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    rank_case *c = w->state;
    const size_t n = c->rows * c->cols;
    memset(st, 0, sizeof *st);
    if (!bench_fetch(ctx, c->h_out, c->d_out, n, why, len)) return 0;
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (memcmp(&c->h_out[i], &c->h_ref[i], sizeof(float)) != 0 && !wrong++) first = i;
    if (!wrong) return 1;
    snprintf(why, len, "%zu of %zu outputs differ from rank/cpu-reference's (first at %zu)", wrong, n, first);
    st->rel_l2 = (double)wrong / (double)n;
    return 0;
}

const bench_driver bench_rank_driver = {
    MH_OP_RANK, NULL, "rank/cpu-reference", NULL, 0, plan, setup, teardown, make_args, poison, check, 0u, 0u,
};

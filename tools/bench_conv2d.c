/* The conv2d driver of memhier bench: its workloads, inputs, reference and checks.
 * Images and random filters are uniform in [-1, 1); the Gaussian workload uses a 5 x 5
 * Gaussian (sigma 1, rank 1) to compare the separable path with the direct ones. The
 * reference is computed in double at sampled outputs (bench_samples), every output is
 * checked for NaN. */
#include "bench.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct conv2d_case {
    mh_conv2d_args shape; /* sizes and paddings (pointers unused) */
    int gaussian;
    float *h_in, *h_filter, *h_out;
    float *d_in, *d_filter, *d_out;
    size_t *samples, nsamples;
    double *ref, *mag;
    float *got;
} conv2d_case;

static const struct {
    size_t rows, cols, k;
    mh_pad pad;
    int gaussian;
} gpu_defaults[] = {{8192, 8192, 3, MH_PAD_SAME, 0},  {8192, 8192, 7, MH_PAD_SAME, 0},   {8192, 8192, 11, MH_PAD_SAME, 0},
                    {3072, 3072, 15, MH_PAD_VALID, 0}, {4096, 4096, 31, MH_PAD_SAME, 0}, {8192, 8192, 5, MH_PAD_SAME, 1}},
  cpu_defaults[] = {{1024, 1024, 3, MH_PAD_SAME, 0}, {1024, 1024, 11, MH_PAD_SAME, 0}, {1024, 1024, 5, MH_PAD_SAME, 1}};

static void describe(bench_workload *w, size_t rows, size_t cols, size_t kr, size_t kc, mh_pad pad, int gaussian)
{
    conv2d_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    mh_args a;
    if (mh_conv2d_args_init(NULL, &a, NULL, rows, cols, NULL, kr, kc, pad, NULL) != MH_OK) {
        snprintf(w->desc, sizeof w->desc, "rows=%zu cols=%zu krows=%zu kcols=%zu pad=%s (invalid)", rows, cols, kr, kc,
                 mh_pad_name(pad));
        return;
    }
    c->shape = a.conv2d;
    c->gaussian = gaussian;
    snprintf(w->desc, sizeof w->desc, "rows=%zu cols=%zu krows=%zu kcols=%zu pad=%s%s", rows, cols, kr, kc,
             mh_pad_name(pad), gaussian ? " filter=gaussian" : "");
    const double outs = (double)c->shape.out_rows * (double)c->shape.out_cols;
    w->flops = 2.0 * outs * (double)kr * (double)kc;
    w->bytes = 4.0 * ((double)rows * (double)cols + (double)(kr * kc) + outs);
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    if (o->any_size) {
        const size_t k = bench_size_or(o, BENCH_K, 3);
        describe(&w[0], bench_size_or(o, BENCH_ROWS, 4096), bench_size_or(o, BENCH_COLS, 4096),
                 bench_size_or(o, BENCH_KROWS, k), bench_size_or(o, BENCH_KCOLS, k), o->have_pad ? o->pad : MH_PAD_SAME, 0);
        return 1;
    }
    size_t count = gpu ? sizeof gpu_defaults / sizeof gpu_defaults[0] : sizeof cpu_defaults / sizeof cpu_defaults[0];
    for (size_t i = 0; i < count && i < max; ++i) {
        if (gpu)
            describe(&w[i], gpu_defaults[i].rows, gpu_defaults[i].cols, gpu_defaults[i].k, gpu_defaults[i].k,
                     gpu_defaults[i].pad, gpu_defaults[i].gaussian);
        else
            describe(&w[i], cpu_defaults[i].rows, cpu_defaults[i].cols, cpu_defaults[i].k, cpu_defaults[i].k,
                     cpu_defaults[i].pad, cpu_defaults[i].gaussian);
    }
    return count;
}

/* A krows x kcols Gaussian with sigma 1, normalised, as an outer product: rank 1. */
static void gaussian_filter(float *f, int kr, int kc)
{
    double gr[MH_CONV2D_MAX_K], gc[MH_CONV2D_MAX_K], sr = 0.0, sc = 0.0;
    for (int i = 0; i < kr; ++i) sr += gr[i] = exp(-0.5 * (i - (kr - 1) / 2.0) * (i - (kr - 1) / 2.0));
    for (int j = 0; j < kc; ++j) sc += gc[j] = exp(-0.5 * (j - (kc - 1) / 2.0) * (j - (kc - 1) / 2.0));
    for (int i = 0; i < kr; ++i)
        for (int j = 0; j < kc; ++j) f[i * kc + j] = (float)(gr[i] / sr * gc[j] / sc);
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    conv2d_case *c = w->state;
    if (!c || !c->shape.rows) return snprintf(err, len, "invalid workload"), 0;
    const mh_conv2d_args *s = &c->shape;
    const size_t pixels = s->rows * s->cols, taps = (size_t)s->krows * s->kcols, outs = s->out_rows * s->out_cols;
    const size_t cap = outs < BENCH_MAX_SAMPLES ? outs : BENCH_MAX_SAMPLES;
    c->h_in = malloc(pixels * sizeof(float));
    c->h_filter = malloc(taps * sizeof(float));
    c->h_out = malloc(outs * sizeof(float));
    c->samples = malloc(cap * sizeof(size_t));
    c->ref = malloc(cap * sizeof(double));
    c->mag = malloc(cap * sizeof(double));
    c->got = malloc(cap * sizeof(float));
    if (!c->h_in || !c->h_filter || !c->h_out || !c->samples || !c->ref || !c->mag || !c->got)
        return snprintf(err, len, "out of host memory"), 0;
    mh_fill_uniform(c->h_in, pixels, 3, 1.0f);
    if (c->gaussian) gaussian_filter(c->h_filter, s->krows, s->kcols);
    else mh_fill_uniform(c->h_filter, taps, 4, 1.0f);
    c->nsamples = bench_samples(outs, c->samples);
#pragma omp parallel for schedule(dynamic, 64)
    for (long long i = 0; i < (long long)c->nsamples; ++i)
        mh_conv2d_reference_at(s, c->h_in, c->h_filter, c->samples[i] / s->out_cols, c->samples[i] % s->out_cols,
                               &c->ref[i], &c->mag[i]);
    if (gpu && (!bench_device_copy(&c->d_in, c->h_in, pixels, err, len) ||
                !bench_device_copy(&c->d_filter, c->h_filter, taps, err, len) ||
                !bench_device_copy(&c->d_out, NULL, outs, err, len)))
        return 0;
    return 1;
}

static void teardown(bench_workload *w)
{
    conv2d_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in), cudaFree(c->d_filter), cudaFree(c->d_out);
    free(c->h_in), free(c->h_filter), free(c->h_out);
    free(c->samples), free(c->ref), free(c->mag), free(c->got);
    free(c);
    w->state = NULL;
}

static int on_cpu(const mh_context *ctx) { return mh_context_device(ctx) == MH_CPU; }

static void make_args(const conv2d_case *c, mh_context *ctx, int config, mh_args *a)
{
    const int cpu = on_cpu(ctx);
    const mh_conv2d_args *s = &c->shape;
    mh_conv2d_args_init(ctx, a, cpu ? c->h_in : c->d_in, s->rows, s->cols, cpu ? c->h_filter : c->d_filter,
                        (size_t)s->krows, (size_t)s->kcols, s->pad, cpu ? c->h_out : c->d_out);
    a->config = config;
}

static int supports(bench_workload *w, mh_context *ctx, size_t row, int config, char *why, size_t len)
{
    mh_args a;
    make_args(w->state, ctx, config, &a);
    return mh_row_at(MH_OP_CONV2D, row)->supports(ctx, &a, why, len);
}

static mh_status run(bench_workload *w, mh_context *ctx, size_t row, int config, int via_api)
{
    const mh_row *r = mh_row_at(MH_OP_CONV2D, row);
    mh_args a;
    make_args(w->state, ctx, config, &a);
    return via_api ? mh_dispatch(ctx, r->info.name, &a) : mh_run_row(ctx, r, &a);
}

static void poison(bench_workload *w, mh_context *ctx, size_t row)
{
    conv2d_case *c = w->state;
    const size_t outs = c->shape.out_rows * c->shape.out_cols;
    if (on_cpu(ctx))
        for (size_t i = 0; i < outs; ++i) c->h_out[i] = NAN;
    else
        cudaMemsetAsync(c->d_out, 0xff, outs * sizeof(float), (cudaStream_t)ctx->stream); /* NaN */
}

static int check(bench_workload *w, mh_context *ctx, size_t row, mh_error_stats *st, char *why, size_t len)
{
    conv2d_case *c = w->state;
    const size_t outs = c->shape.out_rows * c->shape.out_cols;
    if (!on_cpu(ctx) && cudaMemcpy(c->h_out, c->d_out, outs * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)
        return snprintf(why, len, "copying the output back failed"), 0;
    size_t unwritten = 0;
    for (size_t i = 0; i < outs; ++i) unwritten += isnan(c->h_out[i]);
    for (size_t i = 0; i < c->nsamples; ++i) c->got[i] = c->h_out[c->samples[i]];
    int ok = mh_compare(c->got, c->ref, c->mag, c->nsamples, mh_sum_rtol((size_t)c->shape.krows * c->shape.kcols), st);
    if (unwritten) return snprintf(why, len, "%zu of %zu outputs are NaN (never written)", unwritten, outs), 0;
    if (!ok) {
        const size_t at = c->samples[st->first_bad];
        snprintf(why, len, "wrong: out[%zu][%zu] = %.7g, reference %.7g; rel_l2 %.2e, %zu samples over the bound",
                 at / c->shape.out_cols, at % c->shape.out_cols, st->first_out, st->first_ref, st->rel_l2, st->bad);
    }
    return ok;
}

static const char *const *configs(size_t row) { return mh_row_at(MH_OP_CONV2D, row)->configs; }

const bench_driver bench_conv2d_driver = {
    MH_OP_CONV2D, "conv2d/basic", "conv2d/cpu-reference", "conv2d/cudnn", 0,
    plan,         setup,          teardown,               supports,       run,
    poison,       check,          configs,
};

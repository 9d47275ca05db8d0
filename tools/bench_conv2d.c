/* The conv2d driver of memhier bench: its workloads, inputs, reference and checks.
 * Images and random filters are uniform in [-1, 1); the low-rank workloads use Gaussians (5 x 5
 * sigma 1 and 31 x 31 sigma 5: rank 1) and a difference of Gaussians (21 x 21, sigma 2 and
 * 3.2: rank 2) to compare separable and lowrank with the direct rows, and --filter terms:R a sum
 * of R outer products of vectors uniform in [0.5, 1) (rank R: every tap positive, so the factors
 * hold each tap's bound and lowrank takes R terms); these filters are planned
 * (mh_conv2d_plan_create) once, so no row reads them back in the timed calls and auto may take
 * lowrank. The reference is computed in double at sampled outputs (bench_samples), every
 * output is checked for NaN. */
#include "bench.h"
#include "filter_spec.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* filters: uniform, a Gaussian of sigma, sigma minus sigma2, a sum of `terms` outer products */
enum { RANDOM, GAUSSIAN, DOG, TERMS };

typedef struct conv2d_case {
    mh_conv2d_args shape; /* sizes and paddings (pointers unused) */
    int filter;
    double sigma, sigma2;
    mh_conv2d_plan *plan; /* the low-rank filters' plan on the GPU context */
    float *h_in, *h_filter, *h_out;
    float *d_in, *d_filter, *d_out;
    bench_sampled check;
    char invalid[160]; /* why the sizes make no workload, for setup to say; "" when they do */
} conv2d_case;

static const struct {
    size_t rows, cols, k;
    mh_pad pad;
    int filter;
    double sigma, sigma2;
} gpu_defaults[] = {{8192, 8192, 3, MH_PAD_SAME, RANDOM, 0, 0},    {8192, 8192, 7, MH_PAD_SAME, RANDOM, 0, 0},
                    {8192, 8192, 11, MH_PAD_SAME, RANDOM, 0, 0},   {3072, 3072, 15, MH_PAD_VALID, RANDOM, 0, 0},
                    {4096, 4096, 31, MH_PAD_SAME, RANDOM, 0, 0},   {8192, 8192, 5, MH_PAD_SAME, GAUSSIAN, 1, 0},
                    {8192, 8192, 31, MH_PAD_SAME, GAUSSIAN, 5, 0}, {8192, 8192, 21, MH_PAD_SAME, DOG, 2, 3.2},
                    {4096, 4096, 63, MH_PAD_SAME, RANDOM, 0, 0},   {4096, 4096, 127, MH_PAD_SAME, RANDOM, 0, 0}},
  cpu_defaults[] = {{1024, 1024, 3, MH_PAD_SAME, RANDOM, 0, 0}, {1024, 1024, 11, MH_PAD_SAME, RANDOM, 0, 0},
                    {1024, 1024, 5, MH_PAD_SAME, GAUSSIAN, 1, 0}};

/* A workload: zero padding `pad`, or (mode >= 0) mh_conv2d_mode's extension by that mode. */
static void describe(bench_workload *w, size_t rows, size_t cols, size_t kr, size_t kc, mh_pad pad, int mode,
                     int filter, double sigma, double sigma2)
{
    conv2d_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    mh_args a;
    char placement[32];
    if (mode >= 0) snprintf(placement, sizeof placement, "mode=%s", mh_mode_name((mh_mode)mode));
    else snprintf(placement, sizeof placement, "pad=%s", mh_pad_name(pad));
    const mh_status s = mode >= 0 ? mh_conv2d_mode_args_init(NULL, &a, NULL, rows, cols, NULL, kr, kc, (mh_mode)mode,
                                                             0.0f, 0, 0, NULL)
                                  : mh_conv2d_args_init(NULL, &a, NULL, rows, cols, NULL, kr, kc, pad, NULL);
    if (s != MH_OK) {
        snprintf(w->desc, sizeof w->desc, "rows=%zu cols=%zu krows=%zu kcols=%zu %s (invalid)", rows, cols, kr, kc,
                 placement);
        snprintf(c->invalid, sizeof c->invalid, "a %zu x %zu filter on a %zu x %zu image with %s gives no output%s",
                 kr, kc, rows, cols, placement,
                 kr > rows || kc > cols ? "" : " (a side of 0, or sizes past the library's limits)");
        return;
    }
    c->shape = a.conv2d;
    c->filter = filter, c->sigma = sigma, c->sigma2 = sigma2;
    char what[64] = ""; /* the Gaussian of sigma 1 keeps its name of before the others */
    if (filter == GAUSSIAN && sigma == 1.0) snprintf(what, sizeof what, " filter=gaussian");
    else if (filter == GAUSSIAN) snprintf(what, sizeof what, " filter=gaussian:%g", sigma);
    if (filter == DOG) snprintf(what, sizeof what, " filter=dog:%g:%g", sigma, sigma2);
    if (filter == TERMS) snprintf(what, sizeof what, " filter=terms:%g", sigma);
    snprintf(w->desc, sizeof w->desc, "rows=%zu cols=%zu krows=%zu kcols=%zu %s%s", rows, cols, kr, kc, placement,
             what);
    const double outs = (double)c->shape.out_rows * (double)c->shape.out_cols;
    w->flops = 2.0 * outs * (double)kr * (double)kc;
    w->bytes = 4.0 * ((double)rows * (double)cols + (double)(kr * kc) + outs);
}

int bench_conv2d_filter(const char *spec, int *kind, double *sigma, double *sigma2)
{
    char tail;
    *kind = RANDOM, *sigma = *sigma2 = 0.0;
    if (!strcmp(spec, "random")) return 1;
    if (sscanf(spec, "gaussian:%lf%c", sigma, &tail) == 1) *kind = GAUSSIAN;
    else if (sscanf(spec, "dog:%lf:%lf%c", sigma, sigma2, &tail) == 2) *kind = DOG;
    else if (sscanf(spec, "terms:%lf%c", sigma, &tail) == 1) /* sigma holds the terms */
        return *kind = TERMS, *sigma >= 1.0 && *sigma <= MH_LOWRANK_MAX_RANK && *sigma == floor(*sigma);
    else return 0;
    const int ok1 = *sigma > 0.0 && *sigma <= 1000.0, ok2 = *kind != DOG || (*sigma2 > 0.0 && *sigma2 <= 1000.0);
    return ok1 && ok2;
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    const int mode = o->have_mode ? (int)o->mode : -1;
    if (o->any_size) {
        const size_t k = bench_size_or(o, BENCH_K, 3);
        int kind = RANDOM;
        double s1 = 0.0, s2 = 0.0;
        if (o->filter) bench_conv2d_filter(o->filter, &kind, &s1, &s2);
        describe(&w[0], bench_size_or(o, BENCH_ROWS, 4096), bench_size_or(o, BENCH_COLS, 4096),
                 bench_size_or(o, BENCH_KROWS, k), bench_size_or(o, BENCH_KCOLS, k), o->have_pad ? o->pad : MH_PAD_SAME,
                 mode, kind, s1, s2);
        return 1;
    }
    size_t count = gpu ? sizeof gpu_defaults / sizeof gpu_defaults[0] : sizeof cpu_defaults / sizeof cpu_defaults[0];
    for (size_t i = 0; i < count && i < max; ++i) {
        if (gpu)
            describe(&w[i], gpu_defaults[i].rows, gpu_defaults[i].cols, gpu_defaults[i].k, gpu_defaults[i].k,
                     gpu_defaults[i].pad, mode, gpu_defaults[i].filter, gpu_defaults[i].sigma, gpu_defaults[i].sigma2);
        else
            describe(&w[i], cpu_defaults[i].rows, cpu_defaults[i].cols, cpu_defaults[i].k, cpu_defaults[i].k,
                     cpu_defaults[i].pad, mode, cpu_defaults[i].filter, cpu_defaults[i].sigma, cpu_defaults[i].sigma2);
    }
    return count;
}

/* f = sum over t < terms of a_t b_t^T, a_t and b_t uniform in [0.5, 1), summed in double. */
static void filter_terms(float *f, int krows, int kcols, int terms)
{
    float a[MH_LOWRANK_MAX_RANK][MH_CONV2D_MAX_K], b[MH_LOWRANK_MAX_RANK][MH_CONV2D_MAX_K];
    for (int t = 0; t < terms; ++t) {
        mh_fill_uniform(a[t], (size_t)krows, 40 + 2 * (unsigned long long)t, 0.25f);
        mh_fill_uniform(b[t], (size_t)kcols, 41 + 2 * (unsigned long long)t, 0.25f);
    }
    for (int i = 0; i < krows; ++i)
        for (int j = 0; j < kcols; ++j) {
            double sum = 0.0;
            for (int t = 0; t < terms; ++t) sum += (0.75 + a[t][i]) * (0.75 + b[t][j]);
            f[i * kcols + j] = (float)sum;
        }
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    conv2d_case *c = w->state;
    if (!c) return snprintf(err, len, "out of memory"), 0;
    if (c->invalid[0]) return snprintf(err, len, "%s", c->invalid), 0;
    const mh_conv2d_args *s = &c->shape;
    const size_t pixels = s->rows * s->cols, taps = (size_t)s->krows * s->kcols, outs = s->out_rows * s->out_cols;
    c->h_in = malloc(pixels * sizeof(float));
    c->h_filter = malloc(taps * sizeof(float));
    c->h_out = malloc(outs * sizeof(float));
    if (!c->h_in || !c->h_filter || !c->h_out || !bench_sampled_alloc(&c->check, outs))
        return snprintf(err, len, "out of host memory"), 0;
    mh_fill_uniform(c->h_in, pixels, 3, 1.0f);
    if (c->filter == RANDOM) mh_fill_uniform(c->h_filter, taps, 4, 1.0f);
    else if (c->filter == TERMS) filter_terms(c->h_filter, s->krows, s->kcols, (int)c->sigma);
    else filter_gaussian(c->h_filter, s->krows, s->kcols, c->sigma);
    if (c->filter == DOG) {
        float wide[MH_CONV2D_MAX_K * MH_CONV2D_MAX_K];
        filter_gaussian(wide, s->krows, s->kcols, c->sigma2);
        for (size_t i = 0; i < taps; ++i) c->h_filter[i] -= wide[i];
    }
    bench_sampled *sm = &c->check;
#pragma omp parallel for schedule(dynamic, 64)
    for (long long i = 0; i < (long long)sm->count; ++i)
        mh_conv2d_reference_at(s, c->h_in, c->h_filter, sm->at[i] / s->out_cols, sm->at[i] % s->out_cols, &sm->ref[i],
                               &sm->mag[i]);
    if (gpu && (!bench_device_copy(&c->d_in, c->h_in, pixels, err, len) ||
                !bench_device_copy(&c->d_filter, c->h_filter, taps, err, len) ||
                !bench_device_copy(&c->d_out, NULL, outs, err, len)))
        return 0;
    if (gpu && c->filter != RANDOM && mh_conv2d_plan_create(gpu, c->h_filter, s->krows, s->kcols, &c->plan) != MH_OK)
        return snprintf(err, len, "plan: %s", mh_context_error(gpu)), 0;
    return 1;
}

static void teardown(bench_workload *w)
{
    conv2d_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in), cudaFree(c->d_filter), cudaFree(c->d_out);
    mh_conv2d_plan_destroy(c->plan);
    free(c->h_in), free(c->h_filter), free(c->h_out);
    bench_sampled_free(&c->check);
    free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    const conv2d_case *c = w->state;
    const int cpu = mh_context_device(ctx) == MH_CPU;
    const mh_conv2d_args *s = &c->shape;
    const float *in = cpu ? c->h_in : c->d_in, *filter = cpu ? c->h_filter : c->d_filter;
    float *out = cpu ? c->h_out : c->d_out;
    if (s->bordered)
        mh_conv2d_mode_args_init(ctx, a, in, s->rows, s->cols, filter, (size_t)s->krows, (size_t)s->kcols, s->mode,
                                 s->cval, s->lpr - s->krows / 2, s->lpc - s->kcols / 2, out);
    else
        mh_conv2d_args_init(ctx, a, in, s->rows, s->cols, filter, (size_t)s->krows, (size_t)s->kcols, s->pad, out);
    if (!cpu) a->conv2d.plan = c->plan; /* the same filter's analysis: no row reads it back */
}

static void poison(bench_workload *w, mh_context *ctx)
{
    conv2d_case *c = w->state;
    bench_poison(ctx, c->h_out, c->d_out, c->shape.out_rows * c->shape.out_cols);
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    conv2d_case *c = w->state;
    const size_t outs = c->shape.out_rows * c->shape.out_cols;
    size_t unwritten = 0;
    if (!bench_fetch(ctx, c->h_out, c->d_out, outs, why, len)) return 0;
    int ok = bench_sampled_compare(&c->check, c->h_out, outs, (size_t)c->shape.krows * c->shape.kcols, st, &unwritten);
    if (unwritten) return snprintf(why, len, "%zu of %zu outputs are NaN (never written)", unwritten, outs), 0;
    if (!ok) {
        const size_t at = c->check.at[st->first_bad];
        snprintf(why, len, "wrong: out[%zu][%zu] = %.7g, reference %.7g; rel_l2 %.2e, %zu samples over the bound",
                 at / c->shape.out_cols, at % c->shape.out_cols, st->first_out, st->first_ref, st->rel_l2, st->bad);
    }
    return ok;
}

const bench_driver bench_conv2d_driver = {
    MH_OP_CONV2D, "conv2d/basic", "conv2d/cpu-reference", "conv2d/cudnn", 0, plan, setup, teardown, make_args, poison, check, 1u << 1 | 1u << 2, 1u << 1,
};

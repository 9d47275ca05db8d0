/* The histogram driver of memhier bench: int32 values, bytes or float32 values (uniform bins
 * over [-1, 1] or sorted explicit edges there, the data spread 10% past both ends), exact counts
 * checked bin by bin against the host's, after a poison of all-ones (a bin never written
 * fails). Weighted workloads (mh_histogram_weighted: weights uniform in [-1, 1)) check each
 * double sum, the outside one included, within 1e-12 of its sum of |w| against the host's. */
#include "bench.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { DATA_UNIFORM, DATA_ONE_BIN, DATA_AZ } data_kind;
/* The values: int32, bytes, float32 in uniform bins, float32 between explicit edges. */
typedef enum { FORM_INT32, FORM_BYTES, FORM_FLOAT32, FORM_FLOAT32_EDGES } form_kind;

typedef struct hist_case {
    size_t n;
    int weighted;
    float *h_w, *d_w;  /* weighted: n weights */
    double *mag;       /* weighted: each slot's sum of |w| */
    form_kind form;
    int lo, hi, width, num_bins;
    data_kind data;
    void *h_in, *d_in;
    float *h_edges, *d_edges; /* FORM_FLOAT32_EDGES: num_bins + 1 */
    unsigned long long *h_bins, *d_bins, *ref; /* num_bins + 1: the last is outside */
} hist_case;

typedef struct hist_default {
    size_t n;
    form_kind form;
    int lo, hi, width; /* floats: hi + 1 bins over [-1, 1] */
    data_kind data;
    int weighted;
} hist_default;

static const hist_default gpu_defaults[] = {
    {(size_t)1 << 28, FORM_BYTES, 0, 255, 1, DATA_UNIFORM, 0}, /* the 256-bin byte histogram, uniform bytes */
    {(size_t)1 << 28, FORM_BYTES, 0, 255, 1, DATA_ONE_BIN, 0}, /* every byte the same */
    {50000000, FORM_INT32, 0, 255, 1, DATA_UNIFORM, 0},        /* LeetGPU: 50,000,000 int32 in 256 bins */
    {(size_t)1 << 28, FORM_BYTES, 'a', 'z', 4, DATA_AZ, 0},    /* seed 004: a-z in buckets of 4 */
    {(size_t)1 << 28, FORM_FLOAT32, 0, 255, 1, DATA_UNIFORM, 0},        /* numpy.histogram(x, 256, (-1, 1)) */
    {(size_t)1 << 28, FORM_FLOAT32_EDGES, 0, 1023, 1, DATA_UNIFORM, 0}, /* ... and 1024 bins between edges */
    {50000000, FORM_INT32, 0, 255, 1, DATA_UNIFORM, 1},              /* numpy.bincount(x, weights=w), 256 bins */
    {(size_t)1 << 26, FORM_FLOAT32, 0, 255, 1, DATA_UNIFORM, 1},     /* numpy.histogram(x, 256, (-1, 1), weights=w) */
};
static const hist_default cpu_defaults[] = {
    {(size_t)1 << 24, FORM_BYTES, 0, 255, 1, DATA_UNIFORM, 0},
    {4000000, FORM_INT32, 0, 255, 1, DATA_UNIFORM, 0},
    {(size_t)1 << 24, FORM_BYTES, 'a', 'z', 4, DATA_AZ, 0},
    {(size_t)1 << 24, FORM_FLOAT32, 0, 255, 1, DATA_UNIFORM, 0},
    {(size_t)1 << 24, FORM_FLOAT32_EDGES, 0, 1023, 1, DATA_UNIFORM, 0},
    {4000000, FORM_INT32, 0, 255, 1, DATA_UNIFORM, 1},
};

static const char *data_name(data_kind d) { return d == DATA_ONE_BIN ? "one-bin" : d == DATA_AZ ? "a-z" : "uniform"; }
static const char *form_name(form_kind f)
{
    static const char *const names[] = {"int32", "bytes", "float32", "float32-edges"};
    return names[f];
}
static int is_float(const hist_case *c) { return c->form >= FORM_FLOAT32; }

static void describe(bench_workload *w, size_t n, form_kind form, int lo, int hi, int width, data_kind data, int weighted)
{
    hist_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    c->n = n, c->form = form, c->lo = lo, c->hi = hi, c->width = width, c->data = data, c->weighted = weighted;
    c->num_bins = (hi - lo) / width + 1;
    snprintf(w->desc, sizeof w->desc, "form=%s n=%zu bins=%d data=%s%s", form_name(form), n, c->num_bins,
             data_name(data), weighted ? " weights=uniform" : "");
    w->flops = 0.0;
    w->bytes = (double)n * (form == FORM_BYTES ? 1 : 4) * (weighted ? 2 : 1) + 8.0 * (c->num_bins + 1);
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    if (o->any_size) { /* --n N [--k BINS]: int32 values uniform over BINS bins */
        const int bins = (int)bench_size_or(o, BENCH_K, 256);
        describe(&w[0], bench_size_or(o, BENCH_N, 50000000), FORM_INT32, 0, bins - 1, 1, DATA_UNIFORM, 0);
        return 1;
    }
    const size_t count = gpu ? sizeof gpu_defaults / sizeof gpu_defaults[0] : sizeof cpu_defaults / sizeof cpu_defaults[0];
    for (size_t i = 0; i < count && i < max; ++i) {
        const hist_default *d = gpu ? &gpu_defaults[i] : &cpu_defaults[i];
        describe(&w[i], d->n, d->form, d->lo, d->hi, d->width, d->data, d->weighted);
    }
    return count;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Float32 inputs over [-1.1, 1.1] (10% outside each end of the bins); explicit edges sorted
 * from the same generator over [-1, 1], the ends at -1 and 1. */
static void fill_floats(hist_case *c, const float *u)
{
    for (size_t i = 0; i < c->n; ++i) ((float *)c->h_in)[i] = u ? u[i] * 1.1f : 0.0f;
    if (c->form != FORM_FLOAT32_EDGES) return;
    mh_fill_uniform(c->h_edges, (size_t)c->num_bins + 1, 37, 1.0f);
    qsort(c->h_edges, (size_t)c->num_bins + 1, sizeof *c->h_edges, cmp_float);
    c->h_edges[0] = -1.0f, c->h_edges[c->num_bins] = 1.0f;
}

/* Inputs from the same generator as every op: uniform over [lo, hi], 7s, or 'a'..'z'. */
static void fill(hist_case *c)
{
    float *u = malloc(c->n * sizeof(float));
    if (u) mh_fill_uniform(u, c->n, 31, 1.0f);
    if (is_float(c)) {
        fill_floats(c, u);
        free(u);
        return;
    }
    const int span = c->data == DATA_AZ ? 26 : c->hi - c->lo + 1, base = c->data == DATA_AZ ? 'a' : c->lo;
    for (size_t i = 0; i < c->n; ++i) {
        int v = c->data == DATA_ONE_BIN ? 7 : base + (int)floorf((u ? (u[i] + 1.0f) * 0.5f : 0.5f) * (float)span);
        if (v > base + span - 1) v = base + span - 1;
        if (c->form == FORM_BYTES) ((unsigned char *)c->h_in)[i] = (unsigned char)v;
        else ((int *)c->h_in)[i] = v;
    }
    free(u);
}

static void args_of(const hist_case *c, mh_context *ctx, mh_args *a, const void *in, const float *edges,
                    unsigned long long *bins, const float *weights)
{
    if (c->weighted) {
        const int kind = is_float(c) ? (c->form == FORM_FLOAT32_EDGES ? MH_HISTOGRAM_FLOAT_EDGES : MH_HISTOGRAM_FLOAT_UNIFORM)
                                     : MH_HISTOGRAM_INT32;
        mh_histogram_weighted_args_init(ctx, a, kind, in, weights, c->n, c->num_bins, -1.0, 1.0, edges, (double *)bins,
                                        (double *)bins + c->num_bins);
        return;
    }
    if (is_float(c))
        mh_histogram_float_args_init(ctx, a, in, c->n, c->num_bins, -1.0, 1.0, c->form == FORM_FLOAT32_EDGES ? edges : NULL,
                                     bins, bins + c->num_bins);
    else mh_histogram_args_init(ctx, a, in, c->form == FORM_BYTES, c->n, c->lo, c->hi, c->width, bins, bins + c->num_bins);
}

/* Weights uniform in [-1, 1) and each slot's sum of |w| (the check's bound). */
static int weights_setup(hist_case *c)
{
    c->h_w = malloc(c->n * sizeof *c->h_w);
    c->mag = malloc(((size_t)c->num_bins + 1) * sizeof *c->mag);
    float *abs_w = malloc(c->n * sizeof *abs_w);
    if (!c->h_w || !c->mag || !abs_w) return free(abs_w), 0;
    mh_fill_uniform(c->h_w, c->n, 43, 1.0f);
    for (size_t i = 0; i < c->n; ++i) abs_w[i] = fabsf(c->h_w[i]);
    mh_args a;
    args_of(c, NULL, &a, c->h_in, c->h_edges, NULL, abs_w);
    mh_histogram_weighted_reference(&a.histogram, c->mag, c->mag + c->num_bins);
    free(abs_w);
    return 1;
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    hist_case *c = w->state;
    if (!c) return snprintf(err, len, "out of memory"), 0;
    const size_t in_bytes = c->n * (c->form == FORM_BYTES ? 1 : 4), bin_bytes = ((size_t)c->num_bins + 1) * 8;
    const size_t edge_bytes = ((size_t)c->num_bins + 1) * sizeof(float);
    c->h_in = malloc(in_bytes ? in_bytes : 1);
    c->h_bins = malloc(bin_bytes);
    c->ref = malloc(bin_bytes);
    c->h_edges = malloc(edge_bytes);
    if (!c->h_in || !c->h_bins || !c->ref || !c->h_edges) return snprintf(err, len, "out of host memory"), 0;
    fill(c);
    if (c->weighted && !weights_setup(c)) return snprintf(err, len, "out of host memory"), 0;
    mh_args a;
    args_of(c, NULL, &a, c->h_in, c->h_edges, c->ref, c->h_w);
    if (c->weighted) mh_histogram_weighted_reference(&a.histogram, (double *)c->ref, (double *)c->ref + c->num_bins);
    else mh_histogram_reference(&a.histogram, c->ref, &c->ref[c->num_bins]);
    if (!gpu) return 1;
    if (c->weighted && !bench_device_copy(&c->d_w, c->h_w, c->n, err, len)) return 0;
    if (cudaMalloc(&c->d_in, in_bytes ? in_bytes : 1) != cudaSuccess ||
        cudaMemcpy(c->d_in, c->h_in, in_bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMalloc((void **)&c->d_edges, edge_bytes) != cudaSuccess ||
        cudaMemcpy(c->d_edges, c->h_edges, edge_bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMalloc((void **)&c->d_bins, bin_bytes) != cudaSuccess) {
        cudaGetLastError();
        return snprintf(err, len, "device memory for %zu input bytes", in_bytes), 0;
    }
    return 1;
}

static void teardown(bench_workload *w)
{
    hist_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in), cudaFree(c->d_bins), cudaFree(c->d_edges), cudaFree(c->d_w);
    free(c->h_in), free(c->h_bins), free(c->ref), free(c->h_edges), free(c->h_w), free(c->mag), free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    hist_case *c = w->state;
    const int cpu = mh_context_device(ctx) == MH_CPU;
    args_of(c, ctx, a, cpu ? c->h_in : c->d_in, cpu ? c->h_edges : c->d_edges, cpu ? c->h_bins : c->d_bins,
            cpu ? c->h_w : c->d_w);
}

static void poison(bench_workload *w, mh_context *ctx)
{
    hist_case *c = w->state;
    const size_t bin_bytes = ((size_t)c->num_bins + 1) * 8;
    if (mh_context_device(ctx) == MH_CPU) memset(c->h_bins, 0xff, bin_bytes);
    else cudaMemsetAsync(c->d_bins, 0xff, bin_bytes, (cudaStream_t)ctx->stream);
}

/* Weighted: every double sum within 1e-12 of its sum of |w| (NaN: never written). */
static int check_sums(const hist_case *c, mh_error_stats *st, char *why, size_t len)
{
    const double *got = (const double *)c->h_bins, *ref = (const double *)c->ref;
    const size_t slots = (size_t)c->num_bins + 1;
    size_t wrong = 0, first = 0;
    double diff2 = 0.0, ref2 = 0.0;
    for (size_t s = 0; s < slots; ++s) {
        const double d = got[s] - ref[s];
        diff2 += d * d, ref2 += ref[s] * ref[s];
        if (!(fabs(d) <= 1e-12 * c->mag[s]) && !wrong++) first = s;
        st->max_abs = fabs(d) > st->max_abs ? fabs(d) : st->max_abs;
    }
    st->rel_l2 = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    if (!wrong) return 1;
    st->bad = wrong;
    snprintf(why, len, "%zu of %zu sums wrong; %s %zu: %.17g, host %.17g", wrong, slots,
             first == (size_t)c->num_bins ? "outside" : "bin", first, got[first], ref[first]);
    return 0;
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    hist_case *c = w->state;
    const size_t slots = (size_t)c->num_bins + 1;
    memset(st, 0, sizeof *st);
    if (mh_context_device(ctx) != MH_CPU &&
        cudaMemcpy(c->h_bins, c->d_bins, slots * 8, cudaMemcpyDeviceToHost) != cudaSuccess) {
        cudaGetLastError();
        return snprintf(why, len, "copying the bins back failed"), 0;
    }
    if (c->weighted) return check_sums(c, st, why, len);
    size_t wrong = 0, first = 0;
    double diff2 = 0.0, ref2 = 0.0;
    for (size_t s = 0; s < slots; ++s) {
        const double d = (double)c->h_bins[s] - (double)c->ref[s];
        diff2 += d * d, ref2 += (double)c->ref[s] * (double)c->ref[s];
        if (c->h_bins[s] != c->ref[s] && !wrong++) first = s;
    }
    st->rel_l2 = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    if (!wrong) return 1;
    st->bad = wrong;
    snprintf(why, len, "%zu of %zu counts wrong; %s %zu: %llu, exact %llu", wrong, slots,
             first == (size_t)c->num_bins ? "outside" : "bin", first, c->h_bins[first], c->ref[first]);
    return 0;
}

const bench_driver bench_histogram_driver = {
    MH_OP_HISTOGRAM, "histogram/global-atomic", "histogram/cpu-reference", "histogram/cub", 0, plan, setup, teardown,
    make_args,       poison,                    check, 1u << 0 | 1u << 2, 1u << 0,
};

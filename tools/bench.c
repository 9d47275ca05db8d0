/* memhier bench: for each workload of each op, every registry row is validated against the
 * reference (outputs poisoned with NaN first) and only then timed: CUDA events around each
 * of at least 20 back-to-back runs after warm-up, or the host clock for CPU rows. Rows
 * print as they are measured; --json writes them all with the ceilings of the same run. */
#include "bench.h"
#include "build_info.h"
#include "core/random.h"
#include "io/atomic.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const bench_driver *const drivers[MH_OP_COUNT] = {
    [MH_OP_CONV1D] = &bench_conv1d_driver,
    [MH_OP_CONV2D] = &bench_conv2d_driver,
    [MH_OP_TRANSPOSE] = &bench_transpose_driver,
    [MH_OP_COALESCING] = &bench_coalescing_driver,
    [MH_OP_MATMUL] = &bench_matmul_driver,
    [MH_OP_REDUCE] = &bench_reduce_driver,
    [MH_OP_HISTOGRAM] = &bench_histogram_driver,
    [MH_OP_SEPFILTER] = &bench_sepfilter_driver,
    [MH_OP_RANK] = &bench_rank_driver,
};

size_t bench_size_or(const bench_opts *o, bench_size s, size_t fallback) { return o->have[s] ? o->size[s] : fallback; }

int bench_device_copy(float **dst, const float *src, size_t count, char *err, size_t len)
{
    cudaError_t e = cudaMalloc((void **)dst, count * sizeof(float));
    if (e == cudaSuccess && src) e = cudaMemcpy(*dst, src, count * sizeof(float), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaGetLastError();
        snprintf(err, len, "device buffer of %zu floats: %s", count, cudaGetErrorString(e));
        return 0;
    }
    return 1;
}

size_t bench_samples(size_t count, size_t *samples)
{
    if (count <= BENCH_MAX_SAMPLES) {
        for (size_t i = 0; i < count; ++i) samples[i] = i;
        return count;
    }
    size_t s = 0;
    for (size_t i = 0; i < 512; ++i) samples[s++] = i;
    for (size_t i = 0; i < 512; ++i) samples[s++] = count - 512 + i;
    for (size_t i = 0; i < 7168; ++i) samples[s++] = mh_mix64(0xbe5c4ULL + i) % count;
    return s;
}

int bench_sampled_alloc(bench_sampled *s, size_t outputs)
{
    const size_t cap = outputs < BENCH_MAX_SAMPLES ? outputs : BENCH_MAX_SAMPLES;
    s->at = malloc(cap * sizeof *s->at);
    s->ref = malloc(cap * sizeof *s->ref);
    s->mag = malloc(cap * sizeof *s->mag);
    s->got = malloc(cap * sizeof *s->got);
    if (!s->at || !s->ref || !s->mag || !s->got) return 0;
    s->count = bench_samples(outputs, s->at);
    return 1;
}

void bench_sampled_free(bench_sampled *s)
{
    free(s->at), free(s->ref), free(s->mag), free(s->got);
    memset(s, 0, sizeof *s);
}

int bench_sampled_compare(bench_sampled *s, const float *out, size_t outputs, size_t terms, mh_error_stats *st,
                          size_t *unwritten)
{
    return bench_sampled_compare_rtol(s, out, outputs, mh_sum_rtol(terms), st, unwritten);
}

int bench_sampled_compare_rtol(bench_sampled *s, const float *out, size_t outputs, double rtol, mh_error_stats *st,
                               size_t *unwritten)
{
    size_t nan = 0;
    for (size_t i = 0; i < outputs; ++i) nan += isnan(out[i]);
    *unwritten = nan;
    for (size_t i = 0; i < s->count; ++i) s->got[i] = out[s->at[i]];
    return mh_compare(s->got, s->ref, s->mag, s->count, rtol, st);
}

void bench_poison(mh_context *ctx, float *host, float *dev, size_t count)
{
    if (mh_context_device(ctx) == MH_CPU)
        for (size_t i = 0; i < count; ++i) host[i] = NAN;
    else
        cudaMemsetAsync(dev, 0xff, count * sizeof(float), (cudaStream_t)ctx->stream); /* all ones: NaN */
}

int bench_fetch(mh_context *ctx, float *host, const float *dev, size_t count, char *why, size_t len)
{
    if (mh_context_device(ctx) == MH_CPU || cudaMemcpy(host, dev, count * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess)
        return 1;
    cudaGetLastError();
    snprintf(why, len, "copying the output back failed");
    return 0;
}

/* ---- a registry row on a workload's arguments ------------------------------------------ */

static void row_args(const bench_driver *d, bench_workload *w, mh_context *ctx, int config, mh_args *a)
{
    d->make_args(w, ctx, a);
    a->config = config;
}

static int row_supports(const bench_driver *d, bench_workload *w, mh_context *ctx, size_t row, int config, char *why,
                        size_t len)
{
    mh_args a;
    row_args(d, w, ctx, config, &a);
    return mh_row_at(d->op, row)->supports(ctx, &a, why, len);
}

/* via_api: through the public path, with all its checks (the validation run); else the row
 * alone (the timed runs). */
static mh_status row_run(const bench_driver *d, bench_workload *w, mh_context *ctx, size_t row, int config, int via_api)
{
    const mh_row *r = mh_row_at(d->op, row);
    mh_args a;
    row_args(d, w, ctx, config, &a);
    return via_api ? mh_dispatch(ctx, r->info.name, &a) : mh_run_row(ctx, r, &a);
}

typedef struct bench_row {
    const char *op;
    char workload[192], variant[96], note[320];
    const char *backend;
    int ok, reps;
    int wrong_on_purpose; /* a demonstration row whose check failed, as it should: timed, not a failure */
    int reduced;          /* a reduced-precision row (the JSON says so: the report marks it) */
    double ms, ms_min, gflops, gbps, roofline_pct, vs_naive, vs_vendor, rel_l2, max_abs;
} bench_row;

/* What `auto` chose for a workload (the GPU context's choice; its regret is that row's
 * time over the fastest row's, computed from the JSON). */
typedef struct bench_choice {
    const char *op;
    char workload[192], chose[96];
} bench_choice;

typedef struct bench_state {
    bench_opts o;
    bench_choice *choices;
    size_t nchoices;
    mh_context *gpu, *cpu;
    mh_device_info info;
    mh_ceilings ceil, cpu_ceil;
    int have_cpu_ceil;
    bench_row *rows;
    size_t nrows, cap;
    const char *pick; /* auto's choice for the workload being measured, NULL when it has none */
} bench_state;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- selection and order ------------------------------------------------------------- */

/* Whether word is one of list's comma-separated words. */
static int listed(const char *list, const char *word)
{
    const size_t want = strlen(word);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == want && !strncmp(p, word, len)) return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

static int named(const char *list, const mh_variant_info *v)
{
    return list && (listed(list, v->name) || listed(list, strchr(v->name, '/') + 1));
}

/* --headline: auto's pick beside the baselines a user compares it with (the vendor rows in
 * full precision on a GPU, the CPU reference on the CPU). */
static int headline_row(const bench_state *b, const bench_driver *d, const mh_variant_info *v)
{
    if (b->pick && !strcmp(v->name, b->pick)) return 1;
    if (!b->gpu) return d->cpu_naive && !strcmp(v->name, d->cpu_naive);
    return v->backend == MH_BACKEND_VENDOR && !mh_variant_is_reduced_precision(v) && !mh_variant_is_demonstration(v);
}

static int wanted(const bench_state *b, const bench_driver *d, const mh_variant_info *v)
{
    if (b->o.variants) return named(b->o.variants, v);
    if (b->o.headline) return headline_row(b, d, v);
    if (!b->gpu) return v->backend == MH_BACKEND_CPU;
    return v->backend != MH_BACKEND_CPU || d->cpu_rows_on_gpu;
}

/* Registry indices in the order they run: the naive rung, the vendor baseline, the rest. */
static size_t run_order(const bench_state *b, const bench_driver *d, size_t *order)
{
    const char *first[2] = {b->gpu ? d->naive : d->cpu_naive, d->vendor};
    size_t count = mh_variant_count(d->op), n = 0;
    for (int f = 0; f < 2; ++f)
        for (size_t i = 0; i < count; ++i)
            if (first[f] && !strcmp(mh_variant(d->op, i)->name, first[f])) order[n++] = i;
    for (size_t i = 0; i < count; ++i) {
        const char *name = mh_variant(d->op, i)->name;
        if (!(first[0] && !strcmp(name, first[0])) && !(first[1] && !strcmp(name, first[1]))) order[n++] = i;
    }
    return n;
}

/* ---- timing ------------------------------------------------------------------------- */

static int is_cpu_row(const mh_variant_info *v) { return v->backend == MH_BACKEND_CPU; }

/* Fills t[0..reps) with the milliseconds of each run; 0 on success, else a failed status. */
static mh_status time_runs(const bench_driver *d, bench_workload *w, mh_context *ctx, size_t row, int config,
                           int reps, double *t)
{
    mh_status s = MH_OK;
    if (mh_context_device(ctx) == MH_CPU) {
        for (int r = 0; r < reps && s == MH_OK; ++r) {
            double t0 = now_s();
            s = row_run(d, w, ctx, row, config, 0);
            t[r] = (now_s() - t0) * 1e3;
        }
        return s;
    }
    cudaEvent_t *ev = malloc((size_t)(reps + 1) * sizeof *ev);
    if (!ev) return MH_ERR_OUT_OF_MEMORY;
    int made = 0;
    while (made <= reps && cudaEventCreate(&ev[made]) == cudaSuccess) ++made;
    cudaStream_t stream = (cudaStream_t)ctx->stream;
    if (made <= reps) s = mh_fail(ctx, MH_ERR_CUDA, "cudaEventCreate failed");
    /* back to back: each run's stop event is the next run's start */
    if (s == MH_OK) cudaEventRecord(ev[0], stream);
    for (int r = 0; r < reps && s == MH_OK; ++r) {
        s = row_run(d, w, ctx, row, config, 0);
        cudaEventRecord(ev[r + 1], stream);
    }
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    for (int r = 0; r < reps && s == MH_OK; ++r) {
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, ev[r], ev[r + 1]);
        t[r] = ms;
    }
    for (int i = 0; i < made; ++i) cudaEventDestroy(ev[i]);
    free(ev);
    return s;
}

/* ---- one row ------------------------------------------------------------------------ */

static bench_row *new_row(bench_state *b)
{
    if (b->nrows == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        bench_row *r = realloc(b->rows, cap * sizeof *r);
        if (!r) return NULL;
        b->rows = r;
        b->cap = cap;
    }
    bench_row *r = &b->rows[b->nrows++];
    memset(r, 0, sizeof *r);
    r->vs_naive = r->vs_vendor = NAN;
    return r;
}

static const mh_ceilings *ceilings_for(bench_state *b, const mh_variant_info *v)
{
    if (!b->gpu || !is_cpu_row(v)) return &b->ceil;
    if (!b->have_cpu_ceil) {
        mh_measure_ceilings(b->cpu, &b->cpu_ceil);
        b->have_cpu_ceil = 1;
    }
    return &b->cpu_ceil;
}

static void print_row(const bench_row *r)
{
    if (!r->ok) {
        printf("  %-30s %-6s FAILED  %s\n", r->variant, r->backend, r->note);
    } else {
        char xn[16] = "-", xv[16] = "-";
        if (isfinite(r->vs_naive)) snprintf(xn, sizeof xn, "%.2fx", r->vs_naive);
        if (isfinite(r->vs_vendor)) snprintf(xv, sizeof xv, "%.2fx", r->vs_vendor);
        printf("  %-30s %-6s %9.4f %9.4f %10.1f %8.1f %6.1f%% %8s %8s %9.2e %9.2e\n", r->variant, r->backend,
               r->ms, r->ms_min, r->gflops, r->gbps, r->roofline_pct, xn, xv, r->rel_l2, r->max_abs);
        if (r->wrong_on_purpose) printf("  %-30s WRONG, as this demonstration means to be: %s\n", "", r->note);
    }
    fflush(stdout);
}

/* Validates, then times; returns the row (NULL when the variant refuses the workload). */
static bench_row *bench_one(bench_state *b, const bench_driver *d, bench_workload *w, size_t row, int config,
                            const char *label)
{
    const mh_variant_info *v = mh_variant(d->op, row);
    mh_context *ctx = is_cpu_row(v) ? b->cpu : b->gpu;
    char why[320] = "";
    if (!row_supports(d, w, ctx, row, config, why, sizeof why)) {
        if (why[0]) printf("  %-30s %-6s skipped: %s\n", label, mh_backend_name(v->backend), why);
        return NULL; /* no reason: the row does not take this kind of workload at all */
    }
    bench_row *r = new_row(b);
    if (!r) return NULL;
    r->op = mh_op_name(d->op);
    memcpy(r->workload, w->desc, sizeof r->workload);
    snprintf(r->variant, sizeof r->variant, "%s", label);
    r->backend = mh_backend_name(v->backend);
    r->reduced = mh_variant_is_reduced_precision(v);

    mh_error_stats st;
    d->poison(w, ctx);
    mh_status s = row_run(d, w, ctx, row, config, config == 0);
    if (s == MH_ERR_UNSUPPORTED) { /* refused on the data itself (separable: not rank 1) */
        printf("  %-30s %-6s skipped: %s\n", label, mh_backend_name(v->backend), mh_context_error(ctx));
        --b->nrows;
        return NULL;
    }
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    if (s != MH_OK) {
        snprintf(r->note, sizeof r->note, "%s: %s", mh_status_str(s), mh_context_error(ctx));
        print_row(r);
        return r;
    }
    w->reduced = mh_variant_is_reduced_precision(v);
    if (!d->check(w, ctx, &st, r->note, sizeof r->note)) {
        r->rel_l2 = st.rel_l2;
        r->max_abs = st.max_abs;
        if (!mh_variant_is_demonstration(v)) {
            print_row(r);
            return r;
        }
        r->wrong_on_purpose = 1; /* shown wrong, and timed like the others */
    }
    r->rel_l2 = st.rel_l2;
    r->max_abs = st.max_abs;

    /* warm-up, then enough runs for ~0.3 s of timing, at least min_reps */
    double probe[2];
    s = time_runs(d, w, ctx, row, config, 2, probe);
    int reps = b->o.min_reps;
    if (s == MH_OK) {
        double each = probe[1] > 1e-4 ? probe[1] : 1e-4;
        double want = 300.0 / each;
        if (want > reps) reps = want > 1000 ? 1000 : (int)want;
    }
    double *t = malloc((size_t)reps * sizeof *t);
    if (s == MH_OK && !t) s = MH_ERR_OUT_OF_MEMORY;
    if (s == MH_OK) s = time_runs(d, w, ctx, row, config, reps, t);
    if (s != MH_OK) {
        snprintf(r->note, sizeof r->note, "timing: %s: %s", mh_status_str(s), mh_context_error(ctx));
        free(t);
        print_row(r);
        return r;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    r->ok = 1;
    r->reps = reps;
    r->ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    r->ms_min = t[0];
    free(t);
    const mh_ceilings *c = ceilings_for(b, v);
    const double sec = r->ms * 1e-3;
    r->gflops = w->flops / sec / 1e9;
    r->gbps = w->bytes / sec / 1e9;
    double floor_s = fmax(w->flops / (c->fma_gflops * 1e9), w->bytes / (c->copy_gbps * 1e9));
    r->roofline_pct = 100.0 * floor_s / sec;
    return r;
}

static const bench_row *find_row(const bench_state *b, size_t from, const char *name)
{
    for (size_t i = from; name && i < b->nrows; ++i)
        if (!strcmp(b->rows[i].variant, name) && b->rows[i].ok) return &b->rows[i];
    return NULL;
}

static void bench_workload_rows(bench_state *b, const bench_driver *d, bench_workload *w)
{
    size_t order[256], n = run_order(b, d, order), first_row = b->nrows;
    const char *naive = b->gpu ? d->naive : d->cpu_naive;
    printf("  %-30s %-6s %9s %9s %10s %8s %7s %8s %8s %9s %9s\n", "variant", "backend", "ms", "ms_min",
           "GFLOP/s", "GB/s", "roof", "x naive", "x vendor", "rel_l2", "max_abs");
    for (size_t o = 0; o < n; ++o) {
        const mh_variant_info *v = mh_variant(d->op, order[o]);
        if (!wanted(b, d, v)) continue;
        const char *const *configs = mh_row_at(d->op, order[o])->configs;
        int is_base = (naive && !strcmp(v->name, naive)) || (d->vendor && !strcmp(v->name, d->vendor));
        if (b->o.tune && !configs && !is_base) continue;
        int nconf = 1;
        if (b->o.tune && configs)
            for (nconf = 0; configs[nconf]; ++nconf) {}
        for (int c = 0; c < nconf; ++c) {
            if (b->o.tune && configs && b->o.configs && !listed(b->o.configs, configs[c])) continue;
            char label[96];
            if (b->o.tune && configs) snprintf(label, sizeof label, "%s[%s]", v->name, configs[c]);
            else snprintf(label, sizeof label, "%s", v->name);
            bench_row *r = bench_one(b, d, w, order[o], c, label);
            if (!r || !r->ok) continue;
            const bench_row *rn = find_row(b, first_row, naive), *rv = find_row(b, first_row, d->vendor);
            if (rn) r->vs_naive = rn->ms / r->ms;
            if (rv) r->vs_vendor = rv->ms / r->ms;
            print_row(r);
        }
    }
}

/* Records (and prints) the variant `auto` picks for w on the main context, and keeps it in
 * b->pick while w is measured. */
static void record_choice(bench_state *b, const bench_driver *d, bench_workload *w)
{
    mh_context *ctx = b->gpu ? b->gpu : b->cpu;
    mh_args a;
    row_args(d, w, ctx, 0, &a);
    const mh_variant_info *chosen = NULL;
    b->pick = NULL;
    if (mh_select(ctx, &a, &chosen) != MH_OK || !chosen) return;
    b->pick = chosen->name;
    bench_choice *c = realloc(b->choices, (b->nchoices + 1) * sizeof *c);
    if (!c) return;
    b->choices = c;
    c += b->nchoices++;
    c->op = mh_op_name(d->op);
    memcpy(c->workload, w->desc, sizeof c->workload);
    snprintf(c->chose, sizeof c->chose, "%s", chosen->name);
    printf("  auto chooses %s\n", chosen->name);
}

/* Keeps the driver's headline workloads among the nw planned, in order; returns how many. */
static size_t keep_headline(const bench_state *b, const bench_driver *d, bench_workload *w, size_t nw)
{
    const unsigned mask = b->gpu ? d->headline_gpu : d->headline_cpu;
    size_t kept = 0;
    for (size_t i = 0; i < nw; ++i) {
        if (i < 32 && (mask >> i & 1u)) w[kept++] = w[i];
        else d->teardown(&w[i]);
    }
    return kept;
}

static int bench_op(bench_state *b, const bench_driver *d)
{
    bench_workload w[BENCH_MAX_WORKLOADS];
    memset(w, 0, sizeof w);
    size_t nw = d->plan(&b->o, b->gpu != NULL, w, BENCH_MAX_WORKLOADS);
    if (b->o.headline) nw = keep_headline(b, d, w, nw);
    int failures = 0;
    for (size_t i = 0; i < nw; ++i) {
        const double floor_ms = 1e3 * fmax(w[i].flops / (b->ceil.fma_gflops * 1e9), w[i].bytes / (b->ceil.copy_gbps * 1e9));
        printf("\n[%s %zu/%zu] %s  (%.2f GFLOP, %.1f MB; roofline floor %.4f ms)\n", mh_op_name(d->op), i + 1, nw,
               w[i].desc, w[i].flops / 1e9, w[i].bytes / 1e6, floor_ms);
        printf("  preparing inputs and the reference...\n");
        fflush(stdout);
        char err[512] = "";
        if (!d->setup(&w[i], b->gpu, err, sizeof err)) {
            printf("  setup failed: %s\n", err);
            ++failures;
            d->teardown(&w[i]);
            continue;
        }
        size_t before = b->nrows;
        if (!b->o.tune) record_choice(b, d, &w[i]);
        bench_workload_rows(b, d, &w[i]);
        for (size_t r = before; r < b->nrows; ++r) failures += !b->rows[r].ok;
        d->teardown(&w[i]);
    }
    return failures;
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, const char *key, double v, const char *fmt)
{
    fprintf(f, ", \"%s\": ", key);
    if (isfinite(v)) fprintf(f, fmt, v);
    else fputs("null", f);
}

static int json_body(FILE *f, const void *state)
{
    const bench_state *b = (const bench_state *)state;
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    fputs("{\"device\": ", f);
    json_string(f, b->info.name);
    fprintf(f, ", \"backend\": \"%s\", \"date\": \"%s\", \"commit\": ", b->gpu ? "cuda" : "cpu", date);
    json_string(f, MEMHIER_COMMIT);
    fprintf(f, ",\n \"ceilings\": {\"copy_gbps\": %.1f, \"fma_gflops\": %.1f}", b->ceil.copy_gbps, b->ceil.fma_gflops);
    if (b->gpu && b->have_cpu_ceil)
        fprintf(f, ",\n \"cpu_ceilings\": {\"copy_gbps\": %.1f, \"fma_gflops\": %.1f}", b->cpu_ceil.copy_gbps,
                b->cpu_ceil.fma_gflops);
    fputs(",\n \"rows\": [", f);
    for (size_t i = 0; i < b->nrows; ++i) {
        const bench_row *r = &b->rows[i];
        fprintf(f, "%s\n  {\"op\": \"%s\", \"workload\": ", i ? "," : "", r->op);
        json_string(f, r->workload);
        fputs(", \"variant\": ", f);
        json_string(f, r->variant);
        fprintf(f, ", \"backend\": \"%s\", \"status\": \"%s\"", r->backend,
                r->wrong_on_purpose ? "wrong (demonstration)" : r->ok ? "ok" : "failed");
        if (r->reduced) fputs(", \"reduced\": true", f);
        if (r->ok) {
            json_number(f, "ms", r->ms, "%.5f");
            json_number(f, "ms_min", r->ms_min, "%.5f");
            json_number(f, "gflops", r->gflops, "%.1f");
            json_number(f, "gbps", r->gbps, "%.1f");
            json_number(f, "roofline_pct", r->roofline_pct, "%.1f");
            json_number(f, "vs_naive", r->vs_naive, "%.3f");
            json_number(f, "vs_vendor", r->vs_vendor, "%.3f");
            fprintf(f, ", \"reps\": %d", r->reps);
            if (r->wrong_on_purpose) {
                fputs(", \"error\": ", f);
                json_string(f, r->note);
            }
        } else {
            fputs(", \"error\": ", f);
            json_string(f, r->note);
        }
        json_number(f, "rel_l2", r->rel_l2, "%.3e");
        json_number(f, "max_abs_err", r->max_abs, "%.3e");
        fputc('}', f);
    }
    fputs("\n ],\n \"auto\": [", f);
    for (size_t i = 0; i < b->nchoices; ++i) {
        fprintf(f, "%s\n  {\"op\": \"%s\", \"workload\": ", i ? "," : "", b->choices[i].op);
        json_string(f, b->choices[i].workload);
        fputs(", \"chose\": ", f);
        json_string(f, b->choices[i].chose);
        fputc('}', f);
    }
    fputs("\n]}\n", f);
    return 1;
}

static int write_json(const bench_state *b, const char *path)
{
    char err[512];
    if (mh_write_atomically(path, json_body, b, err, sizeof err) != MH_OK)
        return cli_error(CLI_FAILED, "--json %s", err);
    return CLI_OK;
}

/* ---- command ---------------------------------------------------------------------------- */

static int size_flag(const char *flag)
{
    static const char *const flags[BENCH_SIZES] = {"--n", "--k", "--rows", "--cols", "--krows", "--kcols"};
    for (int i = 0; i < BENCH_SIZES; ++i)
        if (!strcmp(flag, flags[i])) return i;
    return -1;
}

/* Every buffer a bench workload allocates holds at most this many elements (256 GiB of
 * floats: more than any device's memory), so that no size product wraps. */
#define BENCH_MAX_ELEMENTS (1ULL << 36)

/* Each size the command line gave, and the products that size buffers (an image, a matrix
 * operand), within BENCH_MAX_ELEMENTS, checked without overflow. */
static int check_sizes(const bench_opts *o)
{
    static const char *const flags[BENCH_SIZES] = {"--n", "--k", "--rows", "--cols", "--krows", "--kcols"};
    for (int z = 0; z < BENCH_SIZES; ++z)
        if (o->have[z] && o->size[z] > BENCH_MAX_ELEMENTS)
            return cli_error(CLI_USAGE, "%s %zu: at most %llu (2^36) elements", flags[z], o->size[z],
                             BENCH_MAX_ELEMENTS);
    static const int pairs[][2] = {{BENCH_ROWS, BENCH_COLS}, {BENCH_ROWS, BENCH_K}, {BENCH_K, BENCH_COLS},
                                   {BENCH_KROWS, BENCH_KCOLS}};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; ++p) {
        const int x = pairs[p][0], y = pairs[p][1];
        size_t product;
        if (o->have[x] && o->have[y] &&
            (!mh_mul_ok(o->size[x], o->size[y], &product) || product > BENCH_MAX_ELEMENTS))
            return cli_error(CLI_USAGE, "%s %zu with %s %zu: more than %llu (2^36) elements in one buffer", flags[x],
                             o->size[x], flags[y], o->size[y], BENCH_MAX_ELEMENTS);
    }
    return CLI_OK;
}

/* matmul's operands when --n stands for the sides the command line left out (m x k, k x n and
 * m x n, as tools/bench_matmul.c takes them), within BENCH_MAX_ELEMENTS: --n 2^32 alone would
 * make each a 2^64-element product that wraps. */
static int check_matmul_sizes(const bench_opts *o, const int *ops, int nops)
{
    int matmul = nops == 0;
    for (int i = 0; i < nops; ++i) matmul |= ops[i] == MH_OP_MATMUL;
    if (!matmul || !o->have[BENCH_N]) return CLI_OK;
    const size_t sq = o->size[BENCH_N], m = bench_size_or(o, BENCH_ROWS, sq), k = bench_size_or(o, BENCH_K, sq),
                 n = bench_size_or(o, BENCH_COLS, sq);
    const size_t sides[][2] = {{m, k}, {k, n}, {m, n}};
    for (size_t i = 0; i < 3; ++i) {
        size_t product;
        if (!mh_mul_ok(sides[i][0], sides[i][1], &product) || product > BENCH_MAX_ELEMENTS)
            return cli_error(CLI_USAGE, "--n %zu: matmul's %zu x %zu operand is more than %llu (2^36) elements", sq,
                             sides[i][0], sides[i][1], BENCH_MAX_ELEMENTS);
    }
    return CLI_OK;
}

/* Every word of --variants names a row of the ops run, and every word of --configs a tuning
 * configuration of one: a selection that matches nothing is a mistake, never an empty run. */
static int check_names(const bench_opts *o, const int *ops, int nops)
{
    const char *lists[2] = {o->variants, o->configs};
    for (int l = 0; l < 2; ++l)
        for (const char *p = lists[l]; p && *p;) {
            const size_t len = strcspn(p, ",");
            char word[128]; /* longer than any name: then it matches nothing, as it should */
            snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
            int found = 0;
            for (int i = 0; i < nops && !found; ++i)
                for (size_t r = 0; r < mh_variant_count((mh_op)ops[i]) && !found; ++r) {
                    const mh_variant_info *v = mh_variant((mh_op)ops[i], r);
                    found = l == 0 && named(word, v);
                    for (const char *const *c = mh_row_of(v)->configs; l == 1 && c && *c && !found; ++c)
                        found = listed(word, *c);
                }
            if (!found)
                return cli_error(CLI_USAGE, "%s: '%.*s' matches no %s of the ops run (memhier list)",
                                 l ? "--configs" : "--variants", (int)len, p, l ? "tuning configuration" : "variant");
            p += len + (p[len] == ',');
        }
    return CLI_OK;
}

static int parse_bench(int argc, char **argv, bench_opts *o, int *ops, int *nops)
{
    int rc;
    const char *v;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        if (a[0] != '-') {
            mh_op op;
            if ((rc = cli_parse_op(a, &op)) != CLI_OK) return rc;
            if (*nops == MH_OP_COUNT) return cli_error(CLI_USAGE, "bench: name each op once");
            ops[(*nops)++] = (int)op;
            continue;
        }
        if (!strcmp(a, "--tune")) {
            o->tune = 1;
            continue;
        }
        if (!strcmp(a, "--grid")) {
            o->grid = 1;
            continue;
        }
        if (!strcmp(a, "--headline")) {
            o->headline = 1;
            continue;
        }
        for (int j = 0; j < i; ++j) /* a valued flag given twice would keep its last value: refused */
            if (!strcmp(argv[j], a))
                return cli_error(CLI_USAGE, "bench: %s given twice", a);
        if (!(v = cli_value(argc, argv, &i))) return CLI_USAGE;
        if (!strcmp(a, "--device")) rc = cli_device(v, &o->device);
        else if (!strcmp(a, "--variants")) o->variants = v, rc = CLI_OK;
        else if (!strcmp(a, "--configs")) o->configs = v, o->tune = 1, rc = CLI_OK;
        else if (!strcmp(a, "--json")) o->json = v, rc = CLI_OK;
        else if (size_flag(a) >= 0) {
            const int z = size_flag(a);
            rc = cli_parse_count(a, v, &o->size[z]);
            o->have[z] = o->any_size = 1;
        } else if (!strcmp(a, "--pad")) rc = cli_parse_pad(v, &o->pad), o->have_pad = o->any_size = 1;
        else if (!strcmp(a, "--mode")) rc = cli_parse_mode(v, &o->mode), o->have_mode = 1;
        else if (!strcmp(a, "--filter")) o->filter = v, rc = CLI_OK;
        else if (!strcmp(a, "--reps")) {
            size_t reps;
            rc = cli_parse_count(a, v, &reps);
            if (rc == CLI_OK && (reps < 20 || reps > 100000))
                rc = cli_error(CLI_USAGE, "--reps %zu: from 20 to 100000 runs are timed", reps);
            o->min_reps = (int)reps;
        } else rc = cli_error(CLI_USAGE, "bench: unknown argument '%s'", a);
        if (rc != CLI_OK) return rc;
    }
    return CLI_OK;
}

/* Standard output onto file descriptor fd, what was printed so far flushed first. */
static void stdout_to(int fd)
{
    fflush(stdout);
    dup2(fd, STDOUT_FILENO);
}

int bench_parse_args(int argc, char **argv, bench_opts *o, int *ops, int *nops)
{
    o->min_reps = 20;
    int rc;
    if ((rc = cli_device(NULL, &o->device)) != CLI_OK) return rc;
    if ((rc = parse_bench(argc, argv, o, ops, nops)) != CLI_OK) return rc;
    if (o->grid && (*nops != 1 || ops[0] != MH_OP_CONV1D || o->any_size))
        return cli_error(CLI_USAGE, "--grid: conv1d alone has a grid, and it sets n and k (memhier bench conv1d --grid)");
    if (o->have_mode && (*nops != 1 || (ops[0] != MH_OP_CONV1D && ops[0] != MH_OP_CONV2D && ops[0] != MH_OP_SEPFILTER) ||
                         o->have_pad))
        return cli_error(CLI_USAGE, "--mode: conv1d, conv2d and sepfilter take a boundary mode, one op at a time and "
                                    "in place of --pad (memhier bench conv2d --mode reflect)");
    int kind;
    double s1, s2;
    if (o->filter && (*nops != 1 || ops[0] != MH_OP_CONV2D || !o->any_size ||
                      !bench_conv2d_filter(o->filter, &kind, &s1, &s2)))
        return cli_error(CLI_USAGE, "--filter '%s': conv2d with sizes takes random, gaussian:SIGMA, "
                                    "dog:SIGMA1:SIGMA2 (0 < sigma <= 1000) or terms:R (1 to %d; memhier bench conv2d "
                                    "--rows 8192 --cols 8192 --krows 31 --kcols 31 --filter gaussian:5)", o->filter,
                         MH_LOWRANK_MAX_RANK);
    if (o->headline && (o->grid || o->tune || o->any_size || o->variants))
        return cli_error(CLI_USAGE, "--headline sets the workloads and the rows: it takes no sizes, --grid, --tune, "
                                    "--configs or --variants");
    if (*nops == 0)
        for (int op = 0; op < MH_OP_COUNT; ++op) ops[(*nops)++] = op;
    if ((rc = check_sizes(o)) != CLI_OK || (rc = check_matmul_sizes(o, ops, *nops)) != CLI_OK) return rc;
    return check_names(o, ops, *nops);
}

int cmd_bench(int argc, char **argv)
{
    bench_state b;
    memset(&b, 0, sizeof b);
    int ops[MH_OP_COUNT], nops = 0, rc;
    if ((rc = bench_parse_args(argc, argv, &b.o, ops, &nops)) != CLI_OK) return rc;
    /* --json -: the JSON alone on standard output, the progress on standard error */
    const int json_stdout = b.o.json && !strcmp(b.o.json, "-");
    const int saved_stdout = json_stdout ? dup(STDOUT_FILENO) : -1;
    if (json_stdout) stdout_to(STDERR_FILENO);

    mh_status s = mh_context_create(&b.cpu, MH_CPU);
    if (s == MH_OK && b.o.device != MH_CPU) s = mh_context_create(&b.gpu, b.o.device);
    if (s != MH_OK) {
        mh_context_destroy(b.cpu); /* the CPU context made before the GPU one was refused */
        if (json_stdout) stdout_to(saved_stdout), close(saved_stdout);
        return cli_error(CLI_FAILED, "device %d: %s", b.o.device, mh_status_str(s));
    }
    mh_context *main_ctx = b.gpu ? b.gpu : b.cpu;
    mh_device_info_get(main_ctx, &b.info);
    if (!b.gpu)
        printf("memhier bench on the CPU backend%s: %s, %d cores\n",
               mh_cuda_device_count() ? "" : " (no CUDA device found)", b.info.name, b.info.sm_count);
    else
        printf("memhier bench on GPU %d: %s, %d SMs\n", b.o.device, b.info.name, b.info.sm_count);
    printf("measuring ceilings...\n");
    fflush(stdout);
    if (mh_measure_ceilings(main_ctx, &b.ceil) != MH_OK) {
        rc = cli_error(CLI_FAILED, "measuring ceilings: %s", mh_context_error(main_ctx));
    } else {
        printf("ceilings: copy %.0f GB/s, FP32 FMA %.0f GFLOP/s (commit %s)\n", b.ceil.copy_gbps, b.ceil.fma_gflops,
               MEMHIER_COMMIT);
        int failures = 0;
        for (int i = 0; i < nops; ++i) failures += bench_op(&b, drivers[ops[i]]);
        rc = failures ? CLI_FAILED : CLI_OK;
        if (failures) printf("\n%d row(s) FAILED validation or setup\n", failures);
        if (b.o.json && b.nrows == 0) {
            rc = cli_error(CLI_FAILED, "--json %s: no row was measured, so the file is left as it was", b.o.json);
        } else if (b.o.json) {
            if (json_stdout) stdout_to(saved_stdout);
            int jrc = write_json(&b, b.o.json);
            if (json_stdout) stdout_to(STDERR_FILENO);
            if (jrc != CLI_OK) rc = jrc;
            else printf("wrote %s\n", b.o.json);
        }
    }
    if (json_stdout) stdout_to(saved_stdout), close(saved_stdout);
    free(b.rows);
    free(b.choices);
    mh_context_destroy(b.gpu);
    mh_context_destroy(b.cpu);
    return rc;
}

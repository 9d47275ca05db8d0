/* Every histogram variant of one backend against exact host counts:
 *   test_histogram cpu | gpu (exit 77 only when the machine has no CUDA device)
 * int32 values (1 to 100,000 bins, values below 0 and past the last bin), int64 values (the same,
 * with values 2^32 past a bin, near INT64_MIN and INT64_MAX: outside) and bytes (256 bins,
 * one bin, seed 004's a-z buckets of 4, a single-value range), n from 0 to 64 Mi + 3, every input
 * alignment, uniform and one-bin data, outside counted or not asked for (NULL); the counts are
 * poisoned with all-ones and fenced by guard words. Float32 values (numpy.histogram's rule,
 * core/histogram_rule.h: python/tests/test_histogram_float.py holds it to numpy itself): uniform
 * bins (values past both ends, NaN, values on and beside every edge, an empty range widened,
 * 65,536 bins, a range whose width overflows) and explicit edges (sorted, with repeats), against
 * the host rule and against counts worked out by hand. histogram/racy must be flagged as a
 * demonstration and never picked by auto; it runs (within bounds) but its counts are not
 * checked. Refusals write nothing. */
#include "testing.h"
#include "core/histogram_table.h"

#include <float.h>
#include <stdint.h>

enum { GUARD = 8 };
#define SENTINEL 0x5a5a5a5a5a5a5a5aULL

typedef struct hcase {
    int kind, lo, hi, width; /* MH_HISTOGRAM_INT32, _BYTES or _INT64 (as int32: lo = 0, width = 1, hi = bins - 1) */
    size_t n;
    int one_bin, with_outside;
    /* float32 values (floats = 1): hi + 1 bins, uniform over [flo, fhi] or between edges
     * (explicit); data: 0 spread past both ends with NaN, 1 on and beside every edge */
    int floats, explicit_edges, data;
    double flo, fhi;
} hcase;

#define INTS(kind, lo, hi, width, n, one_bin, outside) {kind, lo, hi, width, n, one_bin, outside, 0, 0, 0, 0.0, 0.0}
enum { I64 = MH_HISTOGRAM_INT64 };
#define FLOATS(bins, n, lo, hi, edges, data) {0, 0, (bins) - 1, 1, n, 0, 1, 1, edges, data, lo, hi}

static const hcase cases[] = {
    INTS(0, 0, 0, 1, 1000, 0, 1),        INTS(0, 0, 6, 1, 0, 0, 1),        INTS(0, 0, 255, 1, 65537, 0, 1),
    INTS(0, 0, 255, 1, 65537, 1, 0),     INTS(0, 0, 1023, 1, 1048579, 0, 1), INTS(0, 0, 4999, 1, 100003, 0, 1),
    INTS(0, 0, 99999, 1, 200001, 0, 1),  INTS(0, 0, 1999, 1, 100003, 0, 1),  INTS(1, 0, 255, 1, 1, 0, 1),      INTS(1, 0, 255, 1, 1048579, 0, 1),
    INTS(1, 0, 255, 1, 1048579, 1, 1),   INTS(1, 97, 122, 4, 300007, 0, 1), INTS(1, 97, 122, 1, 4099, 0, 0),
    INTS(1, 200, 200, 1, 70001, 0, 1),
    /* one-bin at 64 Mi bytes and 32 Mi int32: every private counter of every block takes
     * hundreds of counts per thread (a narrower counter or a lost carry shows here) */
    INTS(1, 0, 255, 1, 67108867, 1, 1),  INTS(1, 97, 122, 4, 67108867, 1, 0), INTS(0, 0, 255, 1, 33554433, 1, 1),
    INTS(I64, 0, 6, 1, 0, 0, 1),         INTS(I64, 0, 255, 1, 65537, 0, 1),  INTS(I64, 0, 99999, 1, 200001, 0, 0),
    INTS(I64, 0, 1023, 1, 1048579, 0, 1), INTS(I64, 0, 255, 1, 16777219, 1, 1),
    FLOATS(10, 100003, -1.0, 1.0, 0, 0),          FLOATS(256, 1048579, 0.1, 0.7, 0, 0),
    FLOATS(1000, 3003, 0.1, 0.7, 0, 1),           FLOATS(65536, 196611, -3.3, 7.1, 0, 1),
    FLOATS(7, 1000, 3.25, 3.25, 0, 0),            FLOATS(4096, 100003, -1e20, 1e25, 0, 0),
    FLOATS(16, 50001, -3e38, 3e38, 0, 0),         FLOATS(1, 4099, 0.0, 1.0, 0, 1),
    FLOATS(1024, 1048579, -1.0, 1.0, 1, 0),       FLOATS(5, 70001, -1.0, 1.0, 1, 1),
    FLOATS(100000, 200001, -2.0, 2.0, 1, 0),      FLOATS(256, 33554435, -1.0, 1.0, 0, 0),
    /* edges crowded near the middle, the outer bins wide: a bin spans thousands of cells of
     * the staged table and a cell up to hundreds of bins */
    FLOATS(300, 100003, -1.0, 1.0, 2, 0),         FLOATS(300, 3003, -1.0, 1.0, 2, 1),
    FLOATS(3, 10007, -5.0, 5.0, 2, 1),
    /* past 1024 bins the weighted rows keep their double copies alone (the rule and the table) */
    FLOATS(1500, 100003, -1.0, 1.0, 0, 0),        FLOATS(2048, 70001, -1.0, 1.0, 1, 1),
};

/* Bytes of one of the case's values. */
static size_t elem_of(const hcase *c)
{
    return c->kind == MH_HISTOGRAM_BYTES ? 1 : c->kind == MH_HISTOGRAM_INT64 ? 8 : 4;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The edges of a float case: uniform ones by the host rule, or sorted values over [flo, fhi]
 * with every eighth repeated (empty bins); explicit_edges = 2: their distance from the middle
 * raised to the 7th power (crowded near the middle). num_bins + 1 floats. */
static float *make_edges(const hcase *c, const mh_hist_float *f, unsigned long long seed)
{
    const int nb = c->hi + 1;
    float *e = malloc(((size_t)nb + 1) * sizeof *e);
    if (!e) exit(1);
    if (!c->explicit_edges) {
        for (int i = 0; i <= nb; ++i) e[i] = mh_hist_edge(f, nb, i);
        return e;
    }
    mh_fill_uniform(e, (size_t)nb + 1, seed ^ 0xed9e5ULL, 1.0f);
    for (int i = 0; i <= nb; ++i) {
        const double u = c->explicit_edges == 2 ? pow(e[i], 7) : e[i];
        e[i] = (float)(c->flo + (u + 1.0) * 0.5 * (c->fhi - c->flo));
    }
    e[0] = (float)c->flo, e[nb] = (float)c->fhi;
    qsort(e, (size_t)nb + 1, sizeof *e, cmp_float);
    for (int i = 8; i <= nb; i += 8) e[i] = e[i - 1];
    return e;
}

/* Float data: spread 10% past both ends of [lo, hi] with a NaN every 97th (data 0), or each
 * edge and its float neighbours either side (data 1). */
static void fill_floats(const hcase *c, const float *edges, float *x, unsigned long long seed)
{
    const int nb = c->hi + 1;
    const double lo = edges[0], hi = edges[nb], pad = (hi - lo) * 0.1;
    mh_fill_uniform(x, c->n, seed, 1.0f);
    for (size_t i = 0; i < c->n; ++i) {
        if (c->data == 1) {
            const float e = edges[(i / 3) % ((size_t)nb + 1)];
            x[i] = i % 3 == 0 ? e : nextafterf(e, i % 3 == 1 ? -INFINITY : INFINITY);
        } else if (i % 97 == 5) {
            x[i] = NAN;
        } else {
            x[i] = (float)(lo - pad + (x[i] + 1.0) * 0.5 * (hi - lo + 2 * pad));
        }
    }
}


/* Values over a range wider than the bins, so that some fall outside on both sides. */
static void *make_input(const hcase *c, unsigned long long seed)
{
    const size_t n = c->n ? c->n : 1;
    if (c->floats) {
        float *x = malloc(n * sizeof *x);
        if (!x) exit(1);
        return x; /* filled by fill_floats once the edges are known */
    }
    float *u = malloc(n * sizeof(float));
    void *in = malloc(n * elem_of(c));
    if (!u || !in) exit(1);
    mh_fill_uniform(u, n, seed, 1.0f);
    const int bytes = c->kind == MH_HISTOGRAM_BYTES;
    const double span = bytes ? 256.0 : (double)(c->hi + 1) * 1.2 + 20.0;
    for (size_t i = 0; i < n; ++i) {
        const double t = (u[i] + 1.0) * 0.5; /* [0, 1) */
        long long v = c->one_bin ? (c->lo + c->hi) / 2 : (long long)(t * span) - (bytes ? 0 : 10);
        if (bytes) ((uint8_t *)in)[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        else if (c->kind == MH_HISTOGRAM_INT64) /* some a bin's low 32 bits with high ones set, some at the extremes */
            ((int64_t *)in)[i] = i % 5 == 1 ? v + (3LL << 32) : i % 7 == 2 ? INT64_MIN + v : i % 11 == 3 ? INT64_MAX - v : v;
        else ((int32_t *)in)[i] = (int32_t)v;
    }
    free(u);
    return in;
}

typedef struct counts {
    int gpu;
    unsigned long long *base, *host; /* GUARD + num_bins + 1 (outside) + GUARD */
    size_t slots;
} counts;

static counts counts_alloc(int gpu, int num_bins)
{
    counts k = {gpu, NULL, NULL, (size_t)num_bins + 1};
    k.base = test_alloc(gpu, (k.slots + 2 * GUARD) * 8);
    k.host = malloc((k.slots + 2 * GUARD) * 8);
    if (!k.host) exit(1);
    return k;
}

static void counts_poison(const counts *k)
{
    for (size_t i = 0; i < k->slots + 2 * GUARD; ++i)
        k->host[i] = i < GUARD || i >= GUARD + k->slots ? SENTINEL : ~0ULL;
    test_put(k->gpu, k->base, k->host, (k->slots + 2 * GUARD) * 8);
}

/* Copies back; returns the guard words that changed. */
static size_t counts_fetch(const counts *k)
{
    test_get(k->gpu, k->host, k->base, (k->slots + 2 * GUARD) * 8);
    size_t broken = 0;
    for (size_t i = 0; i < GUARD; ++i) broken += (k->host[i] != SENTINEL) + (k->host[GUARD + k->slots + i] != SENTINEL);
    return broken;
}

/* The case's arguments (edges: the explicit ones in the context's memory, or NULL). */
static void args_of(mh_context *ctx, const hcase *c, const void *in, const float *edges, unsigned long long *bins,
                    unsigned long long *outside, mh_args *x)
{
    if (c->floats) mh_histogram_float_args_init(ctx, x, in, c->n, c->hi + 1, c->flo, c->fhi, edges, bins, outside);
    else mh_histogram_args_init(ctx, x, in, c->kind, c->n, c->lo, c->hi, c->width, bins, outside);
}

static mh_status call(mh_context *ctx, const char *variant, const hcase *c, const void *in, const float *edges,
                      const counts *k)
{
    uint64_t *bins = (uint64_t *)(k->base + GUARD), *outside = c->with_outside ? bins + (k->slots - 1) : NULL;
    if (c->floats)
        return edges ? mh_histogram_edges(ctx, variant, in, c->n, edges, c->hi + 1, bins, outside)
                     : mh_histogram_float(ctx, variant, in, c->n, c->hi + 1, c->flo, c->fhi, bins, outside);
    if (c->kind == MH_HISTOGRAM_INT64) return mh_histogram_int64(ctx, variant, in, c->n, c->hi + 1, bins, outside);
    return c->kind == MH_HISTOGRAM_BYTES ? mh_histogram_bytes(ctx, variant, in, c->n, c->lo, c->hi, c->width, bins, outside)
                                         : mh_histogram(ctx, variant, in, c->n, c->hi + 1, bins, outside);
}

static const char *kind_name(const hcase *c)
{
    return c->floats                        ? (c->explicit_edges ? "float32 edges" : "float32 uniform")
           : c->kind == MH_HISTOGRAM_BYTES ? "bytes"
           : c->kind == MH_HISTOGRAM_INT64 ? "int64"
                                           : "int32";
}

static void check_variant(mh_context *ctx, const hcase *c, const void *in, const float *edges,
                          const unsigned long long *ref, const counts *k, const mh_row *row, int config)
{
    const char *name = row ? row->info.name : "auto";
    const int nb = (c->hi - c->lo) / c->width + 1;
    counts_poison(k);
    mh_args x;
    args_of(ctx, c, in, edges, k->base + GUARD, c->with_outside ? k->base + GUARD + nb : NULL, &x);
    x.config = config;
    char why[512] = "";
    if (row && !row->supports(ctx, &x, why, sizeof why)) {
        CHECK(why[0], "%s refuses %d bins without a reason", name, nb);
        return;
    }
    mh_status s = config == 0 ? call(ctx, row ? name : NULL, c, in, edges, k) : mh_run_row(ctx, row, &x);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s config %d n=%zu bins=%d: %s: %s", name, config, c->n, nb, mh_status_str(s), mh_context_error(ctx));
    if (s != MH_OK) return;
    const size_t broken = counts_fetch(k);
    CHECK(broken == 0, "%s n=%zu bins=%d wrote %zu guard words", name, c->n, nb, broken);
    if (row && mh_variant_is_demonstration(&row->info)) return; /* racy: wrong by design */
    size_t wrong = 0, first = 0;
    for (int b = 0; b < nb; ++b)
        if (k->host[GUARD + b] != ref[b] && !wrong++) first = (size_t)b;
    CHECK(wrong == 0, "%s config %d %s n=%zu bins=%d one_bin=%d: %zu bins wrong, bin %zu = %llu, exact %llu", name, config,
          kind_name(c), c->n, nb, c->one_bin, wrong, first, k->host[GUARD + first], ref[first]);
    if (c->with_outside)
        CHECK(k->host[GUARD + nb] == ref[nb], "%s n=%zu bins=%d: outside %llu, exact %llu", name, c->n, nb,
              k->host[GUARD + nb], ref[nb]);
    else
        CHECK(k->host[GUARD + nb] == ~0ULL, "%s wrote outside although it was not asked for", name);
}

/* ---- weighted (mh_histogram_weighted) ---------------------------------------------------- */

/* Histogram row r, or NULL for auto one past the last: 0 where it does not take weights or does
 * not run here. */
static int weighted_row_at(size_t r, int gpu, const mh_row **row)
{
    *row = r < mh_row_count(MH_OP_HISTOGRAM) ? mh_row_at(MH_OP_HISTOGRAM, r) : NULL;
    return !*row || (((*row)->flags & MH_ROW_WEIGHTS) && test_row_fits(*row, gpu));
}

/* One row (NULL: auto) on weights w: the sums (guarded, poisoned with all-ones) against the
 * host's; exact when every weight is a multiple of 1/2 (every partial sum exact in any order),
 * else within 1e-12 of the bin's sum of |w|. Returns the sums fetched (NULL: refused or failed). */
static double *run_weighted(mh_context *ctx, int gpu, const hcase *c, const void *in, const float *w, const float *edges,
                            const double *ref, const double *mag, int exact, const mh_row *row, double *dev, double *host)
{
    const char *name = row ? row->info.name : "auto";
    const int nb = c->hi + 1, kind = c->floats ? (edges ? MH_HISTOGRAM_FLOAT_EDGES : MH_HISTOGRAM_FLOAT_UNIFORM)
                                                : MH_HISTOGRAM_INT32;
    const size_t slots = (size_t)nb + 1 + 2 * GUARD;
    double *sums = dev + GUARD, *outside = c->with_outside ? dev + GUARD + nb : NULL;
    mh_args x;
    mh_histogram_weighted_args_init(ctx, &x, kind, in, w, c->n, nb, c->flo, c->fhi, edges, sums, outside);
    char why[512] = "";
    if (row && !row->supports(ctx, &x, why, sizeof why)) {
        CHECK(why[0], "%s refuses weighted %d bins without a reason", name, nb);
        return NULL;
    }
    memset(host, 0xff, slots * sizeof *host);
    test_put(gpu, dev, host, slots * sizeof *host);
    mh_status s = mh_histogram_weighted(ctx, row ? name : NULL, kind, in, w, c->n, nb, c->flo, c->fhi, edges, sums, outside);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s weighted %s n=%zu bins=%d: %s", name, kind_name(c), c->n, nb, mh_context_error(ctx));
    if (s != MH_OK) return NULL;
    test_get(gpu, host, dev, slots * sizeof *host);
    size_t broken = 0, wrong = 0, first = 0;
    for (size_t g = 0; g < GUARD; ++g) broken += !isnan(host[g]) + !isnan(host[slots - 1 - g]);
    for (int b = 0; b <= nb; ++b) {
        if (b == nb && !c->with_outside) {
            broken += !isnan(host[GUARD + nb]);
            break;
        }
        const double got = host[GUARD + b], err = fabs(got - ref[b]);
        if (!(exact ? got == ref[b] : err <= 1e-12 * mag[b]) && !wrong++) first = (size_t)b;
    }
    CHECK(broken == 0, "%s weighted n=%zu bins=%d wrote %zu guard or unasked slots", name, c->n, nb, broken);
    CHECK(wrong == 0, "%s weighted %s n=%zu bins=%d%s: %zu sums wrong, slot %zu = %.17g, host %.17g", name,
          kind_name(c), c->n, nb, exact ? " (exact)" : "", wrong, first, host[GUARD + first], ref[first]);
    return host;
}

/* Weights of the "spread" kind, from u uniform in [-1, 1): +-k * 2^-20 with k from 1 to 2^24
 * spread evenly over its binades, the largest growing along each window of 4096 values. They
 * span 24 binades, more than the GPU rows' integer grid holds, and raise its top as a warp goes;
 * every partial sum is a multiple of 2^-20 below 2^47 of them, so exact in any order. */
static float spread_weight(float u, size_t i)
{
    const double binades = 24.0 * fabs(u) * (double)(i % 4096 + 1) / 4096.0;
    const double k = floor(exp2(binades));
    return (float)ldexp(u < 0 ? -k : k, -20);
}

/* Every row that takes weights, and auto, on the int32 and float32 cases: weights in halves
 * and spread (exact), and uniform in [-1, 1) (within the bound; weighted twice, for the same
 * bits). */
static void check_weighted(mh_context *ctx, int gpu, const hcase *c, const void *h, const void *in, const float *host_edges,
                           const float *edges, size_t ci, unsigned long long seed)
{
    const int nb = c->hi + 1;
    float *wh = malloc((c->n + 1) * sizeof *wh);
    double *ref = malloc(((size_t)nb + 1) * sizeof *ref), *mag = malloc(((size_t)nb + 1) * sizeof *mag);
    const size_t slots = (size_t)nb + 1 + 2 * GUARD, w_offset = (ci + 1) % 4;
    double *dev = test_alloc(gpu, slots * sizeof(double)), *host = malloc(slots * sizeof(double));
    double *first = malloc(slots * sizeof(double));
    float *w_base = test_alloc(gpu, (c->n + 4) * sizeof(float)), *w = w_base + w_offset;
    enum { UNIFORM, HALVES, SPREAD };
    for (int weights = UNIFORM; weights <= SPREAD; ++weights) {
        const int exact = weights != UNIFORM;
        mh_fill_uniform(wh, c->n, seed + 77 + (unsigned)weights, 1.0f);
        for (size_t i = 0; i < c->n; ++i)
            wh[i] = weights == HALVES ? roundf(wh[i] * 4.0f) * 0.5f : weights == SPREAD ? spread_weight(wh[i], i) : wh[i];
        test_put(gpu, w, wh, c->n * sizeof *wh);
        mh_args ra;
        mh_histogram_weighted_args_init(NULL, &ra, c->floats ? (edges ? 3 : 2) : 0, h, wh, c->n, nb, c->flo, c->fhi,
                                        edges ? host_edges : NULL, ref, ref + nb);
        mh_histogram_weighted_reference(&ra.histogram, ref, ref + nb);
        for (float *v = wh; v < wh + c->n; ++v) *v = fabsf(*v);
        mh_histogram_weighted_reference(&ra.histogram, mag, mag + nb);
        for (size_t r = 0; r <= mh_row_count(MH_OP_HISTOGRAM); ++r) {
            const mh_row *row;
            if (!weighted_row_at(r, gpu, &row)) continue;
            test_trace(row ? row->info.name : "auto", weights, "weighted");
            const double *got = run_weighted(ctx, gpu, c, in, w, edges, ref, mag, exact, row, dev, host);
            if (!got || !row || strcmp(row->info.name, "histogram/weighted")) continue;
            memcpy(first, got, slots * sizeof(double));
            if (run_weighted(ctx, gpu, c, in, w, edges, ref, mag, exact, row, dev, host))
                CHECK(!memcmp(first, host, slots * sizeof(double)), "histogram/weighted: two runs differ (n=%zu bins=%d)",
                      c->n, nb);
        }
    }
    test_release(gpu, w_base), test_release(gpu, dev);
    free(wh), free(ref), free(mag), free(host), free(first);
}

#define REFUSED(call, says) CHECK_REFUSED(ctx, (call), says)

/* The cell table of core/histogram_table.h (the one the vector, lane-private and weighted rows
 * stage on the GPU), built here for edges e[0 .. nb] with `cells` cells: x's bin from it must be
 * the rule's (mh_hist_float_bin over the same edges) for every value, on every machine CI runs. */
static void check_cell_table(const float *e, int nb, int cells, const float *x, size_t n, const char *what)
{
    unsigned short *halves = malloc((size_t)cells * 2 * sizeof *halves);
    unsigned *cell = malloc((size_t)cells * sizeof *cell);
    if (!halves || !cell) exit(1);
    const unsigned full = mh_hist_table_full(nb);
    for (int c = 0; c < cells; ++c) halves[2 * c] = (unsigned short)(full & 0xFFFFu), halves[2 * c + 1] = (unsigned short)(full >> 16);
    const mh_hist_table t0 = mh_hist_table_of(e, cell, nb, cells);
    for (int i = 0; i < nb; ++i) mh_hist_table_fill_bin(&t0, halves, i, cells);
    for (int c = 0; c < cells; ++c) {
        cell[c] = halves[2 * c] | (unsigned)halves[2 * c + 1] << 16;
        CHECK(halves[2 * c] < nb && halves[2 * c + 1] < nb, "%s: cell %d of %d holds bins %u..%u of %d", what, c, cells,
              halves[2 * c], halves[2 * c + 1], nb);
    }
    const mh_hist_float f = {.edges = e};
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        const int want = mh_hist_float_bin(&f, nb, x[i]), got = mh_hist_table_bin(&t0, x[i]);
        if (got != want && bad++ < 3)
            CHECK(0, "%s: %d cells: x = %.9g in bin %d by the table, %d by the rule", what, cells, (double)x[i], got, want);
    }
    CHECK(!bad, "%s: %d cells: %zu of %zu values in the wrong bin", what, cells, bad, n);
    free(halves), free(cell);
}

/* The table for a case's edges and values, and for edge sets the cases do not hold: infinite
 * and near-overflow ends, denormal edges, bins narrower than their values' spacing, repeats. */
static void check_cell_tables(const float *e, int nb, const float *x, size_t n, const char *what)
{
    const int sizes[] = {1, 7, nb > 2048 ? 16384 : 8 * nb};
    if (nb <= MH_HIST_TABLE_MAX_BINS)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            check_cell_table(e, nb, sizes[s], x, n < 2000000 ? n : 2000000, what);
}

static void check_cell_table_edges(void)
{
    static const float inf_ends[] = {-INFINITY, -1.0f, 0.0f, 1.0f, INFINITY};
    static const float wide[] = {-3e38f, -1e30f, 0.0f, 1e-30f, 3e38f};
    static const float denormal[] = {0.0f, 1e-45f, 3e-45f, 1e-40f, 1e-38f, 1.0f};
    static const float repeats[] = {1.0f, 1.0f, 1.0f, 2.0f, 2.0f, 3.0f, 3.0f};
    float narrow[101];
    for (int i = 0; i <= 100; ++i) narrow[i] = 1.0f + (float)i * 2e-8f; /* ~6 bins a float step: repeats */
    const struct { const float *e; int nb; const char *name; } sets[] = {
        {inf_ends, 4, "infinite ends"}, {wide, 4, "ends near overflow"}, {denormal, 5, "denormal edges"},
        {repeats, 6, "repeated edges"}, {narrow, 100, "bins narrower than the float spacing"}};
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; ++k) {
        const float *e = sets[k].e;
        const int nb = sets[k].nb;
        size_t n = 0;
        float *x = malloc(((size_t)nb + 1) * 5 * sizeof *x + 64 * sizeof *x);
        if (!x) exit(1);
        for (int i = 0; i <= nb; ++i) {
            x[n++] = e[i], x[n++] = nextafterf(e[i], -INFINITY), x[n++] = nextafterf(e[i], INFINITY);
            if (i < nb) x[n++] = e[i] / 2 + e[i + 1] / 2;
        }
        x[n++] = NAN, x[n++] = -0.0f, x[n++] = 0.0f;
        check_cell_tables(e, nb, x, n, sets[k].name);
        free(x);
    }
}

static void check_refusals(mh_context *ctx, int gpu)
{
    uint64_t *buf = test_alloc(gpu, 64 * 8);
    const int32_t *in = (const int32_t *)(buf + 32);
    const uint8_t *bytes = (const uint8_t *)in;
    REFUSED(mh_histogram(ctx, NULL, in, 16, 0, buf, NULL), "num_bins = 0");
    REFUSED(mh_histogram(ctx, NULL, in, 16, -3, buf, NULL), "num_bins = -3");
    REFUSED(mh_histogram(ctx, NULL, in, 16, MH_HISTOGRAM_MAX_BINS + 1, buf, NULL), "num_bins");
    REFUSED(mh_histogram(ctx, NULL, NULL, 16, 8, buf, NULL), "in is NULL");
    REFUSED(mh_histogram(ctx, NULL, in, 16, 8, NULL, NULL), "bins is NULL");
    REFUSED(mh_histogram(ctx, NULL, in, SIZE_MAX / 2, 8, buf, NULL), "overflows");
    REFUSED(mh_histogram(ctx, NULL, in, 16, 8, buf + 30, NULL), "overlaps");
    REFUSED(mh_histogram(ctx, NULL, in, 16, 8, buf, buf + 3), "overlaps");
    REFUSED(mh_histogram_bytes(ctx, NULL, bytes, 16, 97, 122, 0, buf, NULL), "width = 0");
    REFUSED(mh_histogram_bytes(ctx, NULL, bytes, 16, 0, 300, 1, buf, NULL), "hi = 300");
    REFUSED(mh_histogram_bytes(ctx, NULL, bytes, 16, 9, 3, 1, buf, NULL), "lo = 9");
    REFUSED(mh_histogram(ctx, NULL, (const int32_t *)(bytes + 2), 16, 8, buf, NULL), "multiple of 4");
    REFUSED(mh_histogram_int64(ctx, NULL, (const int64_t *)(in + 1), 8, 8, buf, NULL), "multiple of 8");
    REFUSED(mh_histogram_int64(ctx, NULL, (const int64_t *)in, SIZE_MAX / 4, 8, buf, NULL), "overflows");
    REFUSED(mh_histogram_int64(ctx, NULL, (const int64_t *)in, 16, 0, buf, NULL), "num_bins = 0");
    /* n = 0 takes a NULL input: every bin and the outside count become 0 */
    uint64_t zero[9];
    test_put(gpu, buf, (uint64_t[9]){1, 1, 1, 1, 1, 1, 1, 1, 1}, sizeof zero);
    mh_status s = mh_histogram(ctx, NULL, NULL, 0, 8, buf, buf + 8);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    test_get(gpu, zero, buf, sizeof zero);
    int all_zero = 1;
    for (int i = 0; i < 9; ++i) all_zero &= zero[i] == 0;
    CHECK(s == MH_OK && all_zero, "n = 0: %s, counts not all zero", mh_context_error(ctx));
    /* float32: the range finite and in order, edges given */
    const float *fin = (const float *)in;
    REFUSED(mh_histogram_float(ctx, NULL, fin, 16, 8, 1.0, 0.0, buf, NULL), "lo must be at most hi");
    REFUSED(mh_histogram_float(ctx, NULL, fin, 16, 8, 0.0, INFINITY, buf, NULL), "finite");
    REFUSED(mh_histogram_float(ctx, NULL, fin, 16, 8, NAN, 1.0, buf, NULL), "finite");
    REFUSED(mh_histogram_float(ctx, NULL, fin, 16, 0, 0.0, 1.0, buf, NULL), "num_bins = 0");
    REFUSED(mh_histogram_edges(ctx, NULL, fin, 16, NULL, 8, buf, NULL), "edges is NULL");
    REFUSED(mh_histogram_edges(ctx, NULL, fin, 16, (const float *)buf, 8, buf + 2, NULL), "overlaps");
    REFUSED(mh_histogram_range(ctx, NULL, fin, 16, 8, 0.0, 1.0, buf, NULL, NULL), "edges is NULL");
    REFUSED(mh_histogram_range(ctx, NULL, fin, 16, 8, 0.0, 1.0, buf, NULL, (float *)(buf + 4)), "overlaps");
    REFUSED(mh_histogram_range(ctx, NULL, fin, 16, 8, 0.0, 1.0, buf, NULL, (float *)(buf + 33)), "overlaps");
    REFUSED(mh_histogram_range(ctx, NULL, fin, 16, 8, 0.0, 1.0, buf, buf + 20, (float *)(buf + 19)), "overlaps");
    REFUSED(mh_histogram_range(ctx, NULL, fin, 16, 8, 1.0, 0.0, buf, NULL, (float *)(buf + 16)), "lo must be at most hi");
    test_release(gpu, buf);
}

/* mh_histogram_range on every row and auto: the counts mh_histogram_float gives and the edges
 * the host rule gives (core/histogram_rule.h), bit for bit (-0.0 too), with nothing written
 * beside them; over ranges whose edges take each branch of the rule: an empty range widened, a
 * step that underflows to 0, a last edge of -0.0, a range of 2^20 bins, huge magnitudes; no
 * values at all (the edges still written). */
static void check_range_edges(mh_context *ctx, int gpu)
{
    static const struct {
        int nb;
        double lo, hi;
        size_t n;
    } ranges[] = {{4, 0.0, 1.0, 11},       {7, 3.0, 3.0, 11},          {3, 0.0, 1e-323, 11},
                  {5, -1.0, -0.0, 11},     {256, -1.0, 1.0, 0},        {1 << 20, -3.5, 1e7, 11},
                  {9, -3e38, 3e38, 11},    {10, 0.1, 0.7, 11}};
    static const float x[] = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f, -0.0f, 0.3f, NAN, -1e-30f, 3.0f, -0.5f};
    enum { GUARDS = 4 };
    const size_t most = (1 << 20) + 1 + 2 * GUARDS;
    float *dx = test_alloc(gpu, sizeof x), *de = test_alloc(gpu, most * sizeof(float));
    float *host = malloc(most * sizeof(float)), *want = malloc(most * sizeof(float));
    uint64_t *counts = test_alloc(gpu, ((1 << 20) + 1) * sizeof *counts), *ref = test_alloc(gpu, ((1 << 20) + 1) * 8);
    unsigned long long *got = malloc(((1 << 20) + 1) * 8), *got_ref = malloc(((1 << 20) + 1) * 8);
    test_put(gpu, dx, x, sizeof x);
    for (size_t q = 0; q < sizeof ranges / sizeof ranges[0]; ++q) {
        const int nb = ranges[q].nb;
        mh_args ra;
        mh_histogram_float_args_init(NULL, &ra, x, ranges[q].n, nb, ranges[q].lo, ranges[q].hi, NULL, NULL, NULL);
        ra.histogram.edges_out = want;
        mh_histogram_write_edges(&ra.histogram);
        if (q == 0) /* numpy.histogram_bin_edges(x, 4, (0, 1)) */
            CHECK(want[0] == 0.0f && want[1] == 0.25f && want[2] == 0.5f && want[3] == 0.75f && want[4] == 1.0f,
                  "the edges of 4 bins over [0, 1]: %g %g %g %g %g", want[0], want[1], want[2], want[3], want[4]);
        if (q == 1) /* widened to [2.5, 3.5] */
            CHECK(want[0] == 2.5f && want[7] == 3.5f, "an empty range's edges: %g .. %g", want[0], want[7]);
        if (q == 3) /* numpy's last edge of (-1, -0.0) is -0.0 */
            CHECK(want[5] == 0.0f && signbit(want[5]) && want[0] == -1.0f, "(-1, -0.0): last edge %g", want[5]);
        for (size_t r = 0; r <= mh_row_count(MH_OP_HISTOGRAM); ++r) {
            const mh_row *row = r < mh_row_count(MH_OP_HISTOGRAM) ? mh_row_at(MH_OP_HISTOGRAM, r) : NULL; /* NULL: auto */
            if (row && (!test_row_fits(row, gpu) || mh_variant_is_demonstration(&row->info) ||
                        (row->flags & MH_ROW_WEIGHTED_ONLY) ||
                        mh_histogram_supports(ctx, row->info.name, ranges[q].n, nb, MH_HISTOGRAM_FLOAT_UNIFORM) != MH_OK))
                continue;
            const char *name = row ? row->info.name : NULL;
            for (size_t i = 0; i < (size_t)nb + 1 + 2 * GUARDS; ++i) host[i] = NAN;
            test_put(gpu, de, host, ((size_t)nb + 1 + 2 * GUARDS) * sizeof(float));
            mh_status s = mh_histogram_range(ctx, name, ranges[q].n ? dx : NULL, ranges[q].n, nb, ranges[q].lo,
                                             ranges[q].hi, counts, counts + nb, de + GUARDS);
            if (s == MH_OK) s = mh_histogram_float(ctx, name, ranges[q].n ? dx : NULL, ranges[q].n, nb, ranges[q].lo,
                                                   ranges[q].hi, ref, ref + nb);
            if (s == MH_OK) s = mh_context_synchronize(ctx);
            test_get(gpu, host, de, ((size_t)nb + 1 + 2 * GUARDS) * sizeof(float));
            test_get(gpu, got, counts, ((size_t)nb + 1) * 8), test_get(gpu, got_ref, ref, ((size_t)nb + 1) * 8);
            int guards = 1;
            for (int g = 0; g < GUARDS; ++g) guards &= isnan(host[g]) && isnan(host[GUARDS + nb + 1 + g]);
            CHECK(s == MH_OK && guards && !memcmp(host + GUARDS, want, ((size_t)nb + 1) * sizeof(float)) &&
                      !memcmp(got, got_ref, ((size_t)nb + 1) * 8),
                  "%s: mh_histogram_range over [%g, %g], %d bins, n = %zu: %s; edges %s, guards %s, counts %s",
                  name ? name : "auto", ranges[q].lo, ranges[q].hi, nb, ranges[q].n, mh_context_error(ctx),
                  memcmp(host + GUARDS, want, ((size_t)nb + 1) * sizeof(float)) ? "differ" : "equal",
                  guards ? "intact" : "written", memcmp(got, got_ref, ((size_t)nb + 1) * 8) ? "differ" : "equal");
        }
    }
    test_release(gpu, dx), test_release(gpu, de), test_release(gpu, counts), test_release(gpu, ref);
    free(host), free(want), free(got), free(got_ref);
}

/* Counts worked out by hand, on every row: numpy.histogram(x, 4, range=(0, 1)) has edges 0,
 * 0.25, 0.5, 0.75, 1; x on each edge goes to the bin the edge opens, 1 to the last (closed)
 * bin, -0 to the first; NaN, -1e-30 and 1.0000001 are outside. The edges 0, 1, 1, 2 (an empty
 * middle bin): 1 goes to the last bin of those that open at 1 (bin 2), 2 to bin 2 (closed). */
static void check_known(mh_context *ctx, int gpu)
{
    static const float x[] = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f, -0.0f, 0.3f, NAN, -1e-30f, 1.0000001f, 0.7499999f};
    static const unsigned long long want[] = {2, 2, 2, 2, 3}; /* bins 0..3, then outside */
    static const float e[] = {0.0f, 1.0f, 1.0f, 2.0f};
    static const float y[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f, -INFINITY};
    static const unsigned long long want_e[] = {2, 0, 3, 2};
    const size_t nx = sizeof x / sizeof x[0], ny = sizeof y / sizeof y[0];
    float *dx = test_alloc(gpu, sizeof x), *dy = test_alloc(gpu, sizeof y), *de = test_alloc(gpu, sizeof e);
    uint64_t *counts = test_alloc(gpu, 5 * sizeof *counts);
    test_put(gpu, dx, x, sizeof x), test_put(gpu, dy, y, sizeof y), test_put(gpu, de, e, sizeof e);
    for (size_t r = 0; r < mh_row_count(MH_OP_HISTOGRAM); ++r) {
        const mh_row *row = mh_row_at(MH_OP_HISTOGRAM, r);
        if (!test_row_fits(row, gpu) || mh_variant_is_demonstration(&row->info) || (row->flags & MH_ROW_WEIGHTED_ONLY))
            continue;
        unsigned long long got[5];
        mh_status s = mh_histogram_float(ctx, row->info.name, dx, nx, 4, 0.0, 1.0, counts, counts + 4);
        if (s == MH_OK) s = mh_context_synchronize(ctx);
        test_get(gpu, got, counts, sizeof got);
        CHECK(s == MH_OK && !memcmp(got, want, sizeof want), "%s: uniform known answer %llu %llu %llu %llu / %llu: %s",
              row->info.name, got[0], got[1], got[2], got[3], got[4], mh_context_error(ctx));
        s = mh_histogram_edges(ctx, row->info.name, dy, ny, de, 3, counts, counts + 3);
        if (s == MH_OK) s = mh_context_synchronize(ctx);
        test_get(gpu, got, counts, 4 * sizeof *got);
        CHECK(s == MH_OK && !memcmp(got, want_e, sizeof want_e), "%s: edges known answer %llu %llu %llu / %llu: %s",
              row->info.name, got[0], got[1], got[2], got[3], mh_context_error(ctx));
    }
    test_release(gpu, dx), test_release(gpu, dy), test_release(gpu, de), test_release(gpu, counts);
}

/* Weights worked out by hand, on every weighted row and auto: 4099 int32 values in bins 0..3
 * and outside (-1), the sums exact in any order. Bin 0: ones, 2^-18 and 2^-19 (the bottom of
 * the GPU rows' integer grid and just below it) and one +Inf; bin 1: ones and one NaN; bin 2:
 * 100 of the smallest subnormal 2^-149 beside the ones of other bins; bin 3: ten FLT_MAX and
 * three -FLT_MAX (the grid's top at the largest exponent); outside: 3 a value; -0 and 0 here
 * and there. */
static void check_weighted_known(mh_context *ctx, int gpu)
{
    enum { N = 4099, NB = 4 };
    int *v = malloc(N * sizeof *v);
    float *w = malloc(N * sizeof *w);
    double want[NB + 1] = {0};
    for (size_t i = 0; i < N; ++i) {
        v[i] = (int)(i % 5) - 1;
        w[i] = v[i] < 0 ? 3.0f : v[i] < 2 ? 1.0f : 0.0f;
        if (i % 7 == 3) w[i] = i % 2 ? -0.0f : 0.0f;
    }
    for (size_t i = 1; i < 200; i += 5) w[i] = i % 2 ? ldexpf(1.0f, -18) : ldexpf(1.0f, -19); /* bin 0 */
    for (size_t i = 3; i < 500; i += 5) w[i] = ldexpf(1.0f, -149);                          /* bin 2 */
    for (size_t i = 4; i < 65; i += 5) w[i] = i < 50 ? FLT_MAX : -FLT_MAX;                    /* bin 3 */
    w[2001] = INFINITY, w[3002] = NAN; /* bins 0 and 1 */
    for (size_t i = 0; i < N; ++i) want[v[i] < 0 ? NB : v[i]] += (double)w[i];
    CHECK(isinf(want[0]) && isnan(want[1]) && want[2] == 100.0 * ldexp(1.0, -149) && want[3] == 7.0 * FLT_MAX,
          "the weighted known answer is not what its comment says");
    int *dv = test_alloc(gpu, N * sizeof *dv);
    float *dw = test_alloc(gpu, N * sizeof *dw);
    double *sums = test_alloc(gpu, (NB + 1) * sizeof *sums);
    test_put(gpu, dv, v, N * sizeof *v), test_put(gpu, dw, w, N * sizeof *w);
    for (size_t r = 0; r <= mh_row_count(MH_OP_HISTOGRAM); ++r) {
        const mh_row *row;
        if (!weighted_row_at(r, gpu, &row)) continue;
        const char *name = row ? row->info.name : "auto";
        double got[NB + 1];
        mh_status s = mh_histogram_weighted(ctx, row ? name : NULL, MH_HISTOGRAM_INT32, dv, dw, N, NB, 0.0, 0.0, NULL,
                                            sums, sums + NB);
        if (s == MH_OK) s = mh_context_synchronize(ctx);
        test_get(gpu, got, sums, sizeof got);
        int right = s == MH_OK;
        for (int b = 0; b <= NB; ++b) right &= got[b] == want[b] || (isnan(got[b]) && isnan(want[b]));
        CHECK(right, "%s: weighted known answer %.17g %.17g %.17g %.17g / %.17g: %s", name, got[0], got[1], got[2],
              got[3], got[4], mh_context_error(ctx));
    }
    test_release(gpu, dv), test_release(gpu, dw), test_release(gpu, sums);
    free(v), free(w);
}

int main(int argc, char **argv)
{
    int gpu;
    mh_context *ctx = test_open(argc, argv, &gpu);
    const unsigned long long seed = test_seed();
    const size_t max_n = test_max_n();
    /* racy is flagged, and auto never picks it */
    const mh_variant_info *racy = mh_variant_lookup(MH_OP_HISTOGRAM, "racy");
    CHECK(racy && mh_variant_is_demonstration(racy), "histogram/racy is not flagged as a demonstration");
    const mh_variant_info *pick = NULL;
    CHECK(mh_histogram_select(ctx, 1000000, 256, 1, &pick) == MH_OK && pick && !mh_variant_is_demonstration(pick),
          "auto picks %s", pick ? pick->name : "nothing");
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const hcase *c = &cases[ci];
        if (c->n > max_n) continue;
        const int nb = (c->hi - c->lo) / c->width + 1;
        void *h = make_input(c, seed + ci);
        mh_args ra;
        unsigned long long *ref = malloc(((size_t)nb + 1) * 8);
        float *host_edges = NULL, *edges = NULL;
        if (c->floats) {
            args_of(NULL, c, h, NULL, ref, ref + nb, &ra);
            host_edges = make_edges(c, &ra.histogram.f, seed + ci);
            fill_floats(c, host_edges, h, seed + ci);
            check_cell_tables(host_edges, nb, h, c->n, kind_name(c));
            if (c->explicit_edges) {
                edges = test_alloc(gpu, ((size_t)nb + 1) * sizeof *edges);
                test_put(gpu, edges, host_edges, ((size_t)nb + 1) * sizeof *edges);
            }
        }
        args_of(NULL, c, h, edges ? host_edges : NULL, ref, ref + nb, &ra);
        mh_histogram_reference(&ra.histogram, ref, ref + nb);
        const size_t elem = elem_of(c), offset = ci % 4; /* every alignment of the 16-byte paths */
        char *in_base = test_alloc(gpu, (c->n + 4) * elem + 16);
        char *in = in_base + offset * elem;
        test_put(gpu, in, h, c->n * elem);
        counts k = counts_alloc(gpu, nb);
        for (size_t r = 0; r < mh_row_count(MH_OP_HISTOGRAM); ++r) {
            const mh_row *row = mh_row_at(MH_OP_HISTOGRAM, r);
            if (!test_row_fits(row, gpu)) continue;
            for (int cfg = 0; cfg < test_configs(row, gpu); ++cfg) {
                char what[96];
                snprintf(what, sizeof what, "%s n=%zu bins=%d", kind_name(c), c->n, nb);
                test_trace(row->info.name, cfg, what);
                check_variant(ctx, c, in, edges, ref, &k, row, cfg);
            }
        }
        check_variant(ctx, c, in, edges, ref, &k, NULL, 0); /* auto */
        if (c->kind == MH_HISTOGRAM_INT32 && c->n <= 4200000) check_weighted(ctx, gpu, c, h, in, host_edges, edges, ci, seed + ci);
        test_release(gpu, k.base);
        free(k.host);
        test_release(gpu, in_base);
        if (edges) test_release(gpu, edges);
        free(ref), free(h), free(host_edges);
        printf("%s n=%zu bins=%d done\n", kind_name(c), c->n, nb);
        fflush(stdout);
    }
    check_refusals(ctx, gpu);
    check_range_edges(ctx, gpu);
    check_known(ctx, gpu);
    check_weighted_known(ctx, gpu);
    check_cell_table_edges();
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_histogram gpu" : "test_histogram cpu");
}

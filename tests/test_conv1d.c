/* Every conv1d variant of one backend against the double reference:
 *   test_conv1d cpu   the CPU rows (always runs)
 *   test_conv1d gpu   the CUDA and vendor rows, and every tuning configuration (exit 77 only
 *                     when the machine has no CUDA device)
 * Sizes 1, primes, non-multiples of every tile, k from 1 past the shared-memory segment and
 * up to n, all three paddings, misaligned pointers; besides the zero paddings two of
 * mh_conv1d_mode's placements a case (every boundary mode across the cases, origins at their
 * limits, a constant of 2.5 and of NaN: NaN exactly where the window meets the border, and the
 * FFT rows must refuse it) and, on the short signals, dark samples beside a bright constant
 * (an FFT segment must hold no constant the windows do not read); outputs poisoned with NaN and
 * fenced by guard words so that unwritten and out-of-bounds elements both fail. A variant that
 * refuses a problem must say why, return MH_ERR_UNSUPPORTED and write nothing, and `auto`
 * must never choose it. */
#include "testing.h"

#include "core/border.h"

typedef struct tcase {
    size_t n, k;
    int misaligned; /* in, mask and out start 1, 3 and 2 floats past an aligned address */
} tcase;

static const tcase cases[] = {
    {1, 1, 0},        {2, 1, 0},        {2, 2, 1},       {3, 2, 0},        {7, 7, 0},        {31, 3, 1},
    {32, 32, 0},      {33, 5, 0},       {100, 99, 1},    {257, 17, 0},     {1000, 1, 0},     {1000, 1000, 0},
    {1021, 31, 1},    {4099, 255, 0},   {4099, 2047, 1}, {10007, 2048, 0}, {10007, 2049, 0}, {10007, 4096, 0},
    {10007, 4097, 1}, {20011, 5003, 0}, {65537, 64, 1},  {65537, 2049, 0}, {250007, 127, 0}, {250007, 2047, 1},
    {5, 20, 0},       {3000, 9001, 1}, /* k > n: same and full only */
};

/* A zero padding (mh_conv1d) or a boundary mode with its constant and origin (mh_conv1d_mode). */
typedef struct placement {
    int bordered;
    mh_pad pad;
    mh_mode mode;
    float cval;
    int origin;      /* 0: centred; -1: the lowest origin; 1: the highest */
    float amplitude; /* the samples are uniform in [-amplitude, amplitude] */
} placement;

static const placement zero_pads[] = {
    {0, MH_PAD_VALID, 0, 0.0f, 0, 1.0f}, {0, MH_PAD_SAME, 0, 0.0f, 0, 1.0f}, {0, MH_PAD_FULL, 0, 0.0f, 0, 1.0f}};
static const placement modes[] = {
    {1, 0, MH_MODE_REFLECT, 0.0f, 0, 1.0f}, {1, 0, MH_MODE_CONSTANT, 2.5f, -1, 1.0f},
    {1, 0, MH_MODE_MIRROR, 0.0f, 1, 1.0f},  {1, 0, MH_MODE_NEAREST, 0.0f, 0, 1.0f},
    {1, 0, MH_MODE_WRAP, 0.0f, -1, 1.0f},   {1, 0, MH_MODE_REFLECT, 0.0f, 1, 1.0f},
    {1, 0, MH_MODE_CONSTANT, NAN, 0, 1.0f},
};
#define NMODES (sizeof modes / sizeof modes[0])
/* Dark samples beside a bright constant, on signals shorter than an FFT segment. */
static const placement dark_beside_constant = {1, 0, MH_MODE_CONSTANT, 1000.0f, 0, 1e-3f};
#define DARK_MAX_N 4099

static long long origin_of(size_t k, int sign) { return sign < 0 ? -(long long)(k / 2) : sign > 0 ? (long long)((k - 1) / 2) : 0; }

static const char *where(const placement *pl, size_t k, char *buf, size_t len)
{
    if (pl->bordered)
        snprintf(buf, len, "mode=%s cval=%g origin=%lld", mh_mode_name(pl->mode), (double)pl->cval,
                 origin_of(k, pl->origin));
    else
        snprintf(buf, len, "pad=%s", mh_pad_name(pl->pad));
    return buf;
}

static mh_status args_of(mh_context *ctx, mh_args *a, const tcase *c, const placement *pl, const float *in,
                         const float *mask, float *out)
{
    if (!pl->bordered) return mh_conv1d_args_init(ctx, a, in, c->n, mask, c->k, pl->pad, out);
    return mh_conv1d_mode_args_init(ctx, a, in, 1, c->n, mask, 0, c->k, pl->mode, pl->cval, origin_of(c->k, pl->origin),
                                    out);
}

static mh_status call(mh_context *ctx, const char *name, const tcase *c, const placement *pl, const float *in,
                      const float *mask, float *out)
{
    if (!pl->bordered) return mh_conv1d(ctx, name, in, c->n, mask, c->k, pl->pad, out);
    return mh_conv1d_mode(ctx, name, in, 1, c->n, mask, 0, c->k, pl->mode, pl->cval, origin_of(c->k, pl->origin), out);
}

typedef struct problem {
    const tcase *c;
    const placement *pl;
    char where[96];
    size_t lpad, out_n;
    float *in, *mask;
    double *ref, *mag;
    unsigned long long seed;
} problem;

static void make_problem(problem *p, const tcase *c, const placement *pl, unsigned long long seed)
{
    p->c = c, p->pl = pl, p->seed = seed;
    where(pl, c->k, p->where, sizeof p->where);
    mh_args shape;
    args_of(NULL, &shape, c, pl, NULL, NULL, NULL);
    p->lpad = shape.conv1d.lpad;
    p->out_n = shape.conv1d.out_n;
    p->in = malloc(c->n * sizeof(float));
    p->mask = malloc(c->k * sizeof(float));
    p->ref = malloc(p->out_n * sizeof(double));
    p->mag = malloc(p->out_n * sizeof(double));
    mh_fill_uniform(p->in, c->n, seed, pl->amplitude);
    mh_fill_uniform(p->mask, c->k, seed + 1, 1.0f);
#pragma omp parallel for schedule(dynamic, 256)
    for (long long i = 0; i < (long long)p->out_n; ++i)
        if (pl->bordered)
            mh_conv1d_reference_mode_at(p->in, c->n, p->mask, c->k, p->lpad, pl->mode, pl->cval, (size_t)i, &p->ref[i],
                                        &p->mag[i]);
        else
            mh_conv1d_reference_at(p->in, c->n, p->mask, c->k, p->lpad, (size_t)i, &p->ref[i], &p->mag[i]);
}

static void free_problem(problem *p) { free(p->in), free(p->mask), free(p->ref), free(p->mag); }

/* The FFT rows' normwise bound (docs/conv1d.md, "Error"): each segment's error is at most
 * C u log2(L) |x_s|_2 |m|_1 with u = 2^-24 and C = 16 (two transforms and a product, ~6 u
 * log2 L per transform); segments overlap at most twice (L <= 2 hop), so over the signal
 * |out - ref|_2 <= C u log2(L) sqrt(2) |x|_2 |m|_1, x the samples the windows read (a
 * bordered call's extension included). L is at most max(8192, 16 (k - 1))
 * rounded up to a power of two (fft-fused: 8192 at most; fft-os: 16 (k - 1) at most). */
static void check_fft_bound(const problem *p, const float *out, const char *name, const char *cfg)
{
    double err2 = 0.0, x2 = 0.0, m1 = 0.0;
    for (size_t i = 0; i < p->out_n; ++i) err2 += (out[i] - p->ref[i]) * (out[i] - p->ref[i]);
    if (p->pl->bordered) {
        const long long n = (long long)p->c->n, first = -(long long)p->lpad, end = first + (long long)p->out_n +
                                                                                 (long long)p->c->k - 1;
        for (long long i = first; i < end; ++i) {
            const long long q = mh_border_index(i, n, p->pl->mode);
            const double v = q < 0 ? p->pl->cval : p->in[q];
            x2 += v * v;
        }
    } else {
        for (size_t i = 0; i < p->c->n; ++i) x2 += (double)p->in[i] * p->in[i];
    }
    for (size_t j = 0; j < p->c->k; ++j) m1 += fabs((double)p->mask[j]);
    double len = 8192.0;
    while (len < 16.0 * (double)(p->c->k - 1) && len < (double)(1 << 28)) len *= 2.0;
    const double bound = 16.0 * 0x1p-24 * log2(len) * sqrt(2.0) * sqrt(x2) * m1;
    CHECK(sqrt(err2) <= bound, "%s %s n=%zu k=%zu %s: |out - ref| = %.3g over the FFT bound %.3g", name, cfg,
          p->c->n, p->c->k, p->where, sqrt(err2), bound);
}

/* A NaN constant: outputs must be NaN exactly where the reference is; the rest are compared.
 * Returns the outputs that miss, and rewrites got, ref and mag so that the NaN ones match. */
static size_t mask_nan_outputs(const problem *p, float *got, double *ref, double *mag)
{
    size_t missed = 0;
    for (size_t i = 0; i < p->out_n; ++i) {
        const int touched = isnan(p->ref[i]);
        missed += touched != (isnan(got[i]) != 0);
        ref[i] = touched ? 0.0 : p->ref[i], mag[i] = touched ? 0.0 : p->mag[i];
        if (touched) got[i] = 0.0f;
    }
    return missed;
}

/* Runs one variant (config 0 through the public API, others through the row) and checks. */
static void check_variant(mh_context *ctx, const problem *p, const float *in, const float *mask, const test_out *out,
                          const mh_row *row, int config)
{
    const char *name = row ? row->info.name : "auto", *cfg = row && row->configs ? row->configs[config] : "";
    const tcase *c = p->c;
    test_out_poison(out);
    mh_args a;
    args_of(ctx, &a, c, p->pl, in, mask, out->data);
    a.config = config;
    char why[512] = "";
    const int fft = row && strncmp(name, "conv1d/fft", 10) == 0;
    if (row && !row->supports(ctx, &a, why, sizeof why)) {
        CHECK(why[0] != '\0', "%s refuses n=%zu k=%zu without a reason", name, c->n, c->k);
        CHECK(!strstr(why, "pads with zeros only") || !(row->flags & MH_ROW_BORDER_MODES),
              "%s is flagged MH_ROW_BORDER_MODES but refuses %s: %s", name, p->where, why);
        if (config == 0) {
            char what[160];
            snprintf(what, sizeof what, "n=%zu k=%zu %s", c->n, c->k, p->where);
            test_check_refusal(ctx, name, call(ctx, name, c, p->pl, in, mask, out->data), why, out, what);
        }
        return;
    }
    CHECK(!row || !p->pl->bordered || (row->flags & MH_ROW_BORDER_MODES),
          "%s takes %s but is not flagged MH_ROW_BORDER_MODES (the refusals that name the rows taking modes miss it)",
          name, p->where);
    CHECK(!fft || !isnan(p->pl->cval), "%s %s n=%zu k=%zu %s: an FFT row took a NaN constant", name, cfg, c->n, c->k,
          p->where);
    mh_status s = config == 0 ? call(ctx, row ? name : NULL, c, p->pl, in, mask, out->data) : mh_run_row(ctx, row, &a);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s %s n=%zu k=%zu %s: %s: %s", name, cfg, c->n, c->k, p->where, mh_status_str(s),
          mh_context_error(ctx));
    if (s != MH_OK) return;
    size_t broken = test_out_fetch(out);
    float *got = out->host + TEST_GUARD;
    double *ref = p->ref, *mag = p->mag;
    size_t nan_missed = 0;
    if (isnan(p->pl->cval)) {
        ref = malloc(p->out_n * sizeof(double)), mag = malloc(p->out_n * sizeof(double));
        nan_missed = mask_nan_outputs(p, got, ref, mag);
    }
    mh_error_stats st;
    int ok = mh_compare(got, ref, mag, p->out_n, mh_sum_rtol(c->k), &st);
    if (ref != p->ref) free(ref), free(mag);
    CHECK(nan_missed == 0, "%s %s n=%zu k=%zu %s: %zu outputs NaN where the reference is not, or finite where it is NaN",
          name, cfg, c->n, c->k, p->where, nan_missed);
    CHECK(broken == 0, "%s %s n=%zu k=%zu %s wrote %zu guard words outside out", name, cfg, c->n, c->k, p->where,
          broken);
    if (fft) check_fft_bound(p, got, name, cfg);
    CHECK(ok, "%s %s n=%zu k=%zu %s misaligned=%d seed=%llu: out[%zu]=%.8g ref %.8g; %zu bad, %zu NaN, rel_l2 %.3g",
          name, cfg, c->n, c->k, p->where, c->misaligned, p->seed, st.first_bad, st.first_out, st.first_ref, st.bad,
          st.nonfinite, st.rel_l2);
}

/* The variant auto chose accepts the problem. */
static void check_select(mh_context *ctx, const problem *p)
{
    const tcase *c = p->c;
    const placement *pl = p->pl;
    const mh_variant_info *chosen = NULL;
    mh_status s;
    if (pl->bordered) {
        const long long origin = origin_of(c->k, pl->origin);
        s = mh_conv1d_mode_select(ctx, 1, c->n, 0, c->k, pl->mode, origin, &chosen);
        if (s == MH_OK) s = mh_conv1d_mode_supports(ctx, chosen->name, 1, c->n, c->k, pl->mode, origin);
    } else {
        s = mh_conv1d_select(ctx, c->n, c->k, pl->pad, &chosen);
        if (s == MH_OK) s = mh_conv1d_supports(ctx, chosen->name, c->n, c->k, pl->pad);
    }
    CHECK(s == MH_OK, "auto chose a variant that refuses n=%zu k=%zu %s", c->n, c->k, p->where);
}

static size_t run_problem(mh_context *ctx, int gpu, const tcase *c, const placement *pl, unsigned long long seed)
{
    size_t runs = 0;
    problem p;
    make_problem(&p, c, pl, seed);
    test_in in = test_in_copy(gpu, p.in, c->n, c->misaligned ? 1 : 0);
    test_in mask = test_in_copy(gpu, p.mask, c->k, c->misaligned ? 3 : 0);
    test_out out = test_out_alloc(gpu, p.out_n, c->misaligned ? 2 : 0);
    for (size_t r = 0; r < mh_row_count(MH_OP_CONV1D); ++r) {
        const mh_row *row = mh_row_at(MH_OP_CONV1D, r);
        if (!test_row_fits(row, gpu)) continue;
        for (int cfg = 0; cfg < test_configs(row, gpu); ++cfg, ++runs)
            check_variant(ctx, &p, in.data, mask.data, &out, row, cfg);
    }
    check_variant(ctx, &p, in.data, mask.data, &out, NULL, 0); /* auto */
    CHECK(test_in_unchanged(&in, p.in, c->n) && test_in_unchanged(&mask, p.mask, c->k),
          "n=%zu k=%zu %s: a variant changed its input or mask", c->n, c->k, p.where);
    check_select(ctx, &p);
    test_out_free(&out);
    test_release(gpu, in.base), test_release(gpu, mask.base);
    free_problem(&p);
    return runs;
}

int main(int argc, char **argv)
{
    int gpu;
    mh_context *ctx = test_open(argc, argv, &gpu);
    const unsigned long long seed = test_seed();
    const size_t max_n = test_max_n();
    size_t runs = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const tcase *c = &cases[ci];
        if (c->n > max_n) continue;
        for (int pad = MH_PAD_VALID; pad <= MH_PAD_FULL; ++pad) {
            if (pad == MH_PAD_VALID && c->k > c->n) continue;
            runs += run_problem(ctx, gpu, c, &zero_pads[pad], seed + 1000 * ci + (unsigned long long)pad);
        }
        for (size_t m = 0; m < 2; ++m) /* two modes a case, every one across the cases */
            runs += run_problem(ctx, gpu, c, &modes[(2 * ci + m) % NMODES], seed + 1000 * ci + 10 + m);
        if (c->n <= DARK_MAX_N) runs += run_problem(ctx, gpu, c, &dark_beside_constant, seed + 1000 * ci + 20);
        printf("n=%zu k=%zu done (%zu runs so far)\n", c->n, c->k, runs);
        fflush(stdout);
    }
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_conv1d gpu" : "test_conv1d cpu");
}

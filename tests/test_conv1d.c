/* Every conv1d variant of one backend against the double reference:
 *   test_conv1d cpu   the CPU rows (always runs)
 *   test_conv1d gpu   the CUDA and vendor rows, and every tuning configuration (exit 77 only
 *                     when the machine has no CUDA device)
 * Sizes 1, primes, non-multiples of every tile, k from 1 past the shared-memory segment and
 * up to n, all three paddings, misaligned pointers; outputs poisoned with NaN and fenced by
 * guard words so that unwritten and out-of-bounds elements both fail. A variant that
 * refuses a problem must say why, return MH_ERR_UNSUPPORTED and write nothing, and `auto`
 * must never choose it. */
#include "testing.h"

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

typedef struct problem {
    const tcase *c;
    mh_pad pad;
    size_t lpad, out_n;
    float *in, *mask;
    double *ref, *mag;
    unsigned long long seed;
} problem;

static void make_problem(problem *p, const tcase *c, mh_pad pad, unsigned long long seed)
{
    p->c = c, p->pad = pad, p->seed = seed;
    p->lpad = mh_lead_pad(c->k, pad);
    p->out_n = mh_conv1d_out_len(c->n, c->k, pad);
    p->in = malloc(c->n * sizeof(float));
    p->mask = malloc(c->k * sizeof(float));
    p->ref = malloc(p->out_n * sizeof(double));
    p->mag = malloc(p->out_n * sizeof(double));
    mh_fill_uniform(p->in, c->n, seed, 1.0f);
    mh_fill_uniform(p->mask, c->k, seed + 1, 1.0f);
#pragma omp parallel for schedule(dynamic, 256)
    for (long long i = 0; i < (long long)p->out_n; ++i)
        mh_conv1d_reference_at(p->in, c->n, p->mask, c->k, p->lpad, (size_t)i, &p->ref[i], &p->mag[i]);
}

static void free_problem(problem *p) { free(p->in), free(p->mask), free(p->ref), free(p->mag); }

/* The FFT rows' normwise bound (docs/conv1d.md, "Error"): each segment's error is at most
 * C u log2(L) |x_s|_2 |m|_1 with u = 2^-24 and C = 16 (two transforms and a product, ~6 u
 * log2 L per transform); segments overlap at most twice (L <= 2 hop), so over the signal
 * |out - ref|_2 <= C u log2(L) sqrt(2) |x|_2 |m|_1. L is at most max(8192, 16 (k - 1))
 * rounded up to a power of two (fft-fused: 8192 at most; fft-os: 16 (k - 1) at most). */
static void check_fft_bound(const problem *p, const float *out, const char *name, const char *cfg)
{
    double err2 = 0.0, x2 = 0.0, m1 = 0.0;
    for (size_t i = 0; i < p->out_n; ++i) err2 += (out[i] - p->ref[i]) * (out[i] - p->ref[i]);
    for (size_t i = 0; i < p->c->n; ++i) x2 += (double)p->in[i] * p->in[i];
    for (size_t j = 0; j < p->c->k; ++j) m1 += fabs((double)p->mask[j]);
    double len = 8192.0;
    while (len < 16.0 * (double)(p->c->k - 1) && len < (double)(1 << 28)) len *= 2.0;
    const double bound = 16.0 * 0x1p-24 * log2(len) * sqrt(2.0) * sqrt(x2) * m1;
    CHECK(sqrt(err2) <= bound, "%s %s n=%zu k=%zu pad=%s: |out - ref| = %.3g over the FFT bound %.3g", name, cfg,
          p->c->n, p->c->k, mh_pad_name(p->pad), sqrt(err2), bound);
}

/* Runs one variant (config 0 through the public API, others through the row) and checks. */
static void check_variant(mh_context *ctx, const problem *p, const float *in, const float *mask, const test_out *out,
                          const mh_row *row, int config)
{
    const char *name = row ? row->info.name : "auto", *cfg = row && row->configs ? row->configs[config] : "";
    test_out_poison(out);
    mh_args a;
    mh_conv1d_args_init(ctx, &a, in, p->c->n, mask, p->c->k, p->pad, out->data);
    a.config = config;
    char why[512] = "";
    if (row && !row->supports(ctx, &a, why, sizeof why)) {
        CHECK(why[0] != '\0', "%s refuses n=%zu k=%zu without a reason", name, p->c->n, p->c->k);
        if (config == 0) {
            char what[128];
            snprintf(what, sizeof what, "n=%zu k=%zu pad=%s", p->c->n, p->c->k, mh_pad_name(p->pad));
            test_check_refusal(ctx, name, mh_conv1d(ctx, name, in, p->c->n, mask, p->c->k, p->pad, out->data), why, out,
                               what);
        }
        return;
    }
    mh_status s = config == 0 ? mh_conv1d(ctx, row ? name : NULL, in, p->c->n, mask, p->c->k, p->pad, out->data)
                              : mh_run_row(ctx, row, &a);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s %s n=%zu k=%zu pad=%s: %s: %s", name, cfg, p->c->n, p->c->k, mh_pad_name(p->pad),
          mh_status_str(s), mh_context_error(ctx));
    if (s != MH_OK) return;
    size_t broken = test_out_fetch(out);
    mh_error_stats st;
    int ok = mh_compare(out->host + TEST_GUARD, p->ref, p->mag, p->out_n, mh_sum_rtol(p->c->k), &st);
    CHECK(broken == 0, "%s %s n=%zu k=%zu pad=%s wrote %zu guard words outside out", name, cfg, p->c->n, p->c->k,
          mh_pad_name(p->pad), broken);
    if (row && strncmp(name, "conv1d/fft", 10) == 0) check_fft_bound(p, out->host + TEST_GUARD, name, cfg);
    CHECK(ok, "%s %s n=%zu k=%zu pad=%s misaligned=%d seed=%llu: out[%zu]=%.8g ref %.8g; %zu bad, %zu NaN, rel_l2 %.3g",
          name, cfg, p->c->n, p->c->k, mh_pad_name(p->pad), p->c->misaligned, p->seed, st.first_bad, st.first_out,
          st.first_ref, st.bad, st.nonfinite, st.rel_l2);
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
            problem p;
            make_problem(&p, c, (mh_pad)pad, seed + 1000 * ci + (unsigned long long)pad);
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
                  "n=%zu k=%zu pad=%s: a variant changed its input or mask", c->n, c->k, mh_pad_name(p.pad));
            const mh_variant_info *chosen = NULL;
            CHECK(mh_conv1d_select(ctx, c->n, c->k, (mh_pad)pad, &chosen) == MH_OK &&
                      mh_conv1d_supports(ctx, chosen->name, c->n, c->k, (mh_pad)pad) == MH_OK,
                  "auto chose a variant that refuses n=%zu k=%zu", c->n, c->k);
            test_out_free(&out);
            test_release(gpu, in.base), test_release(gpu, mask.base);
            free_problem(&p);
        }
        printf("n=%zu k=%zu done (%zu runs so far)\n", c->n, c->k, runs);
        fflush(stdout);
    }
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_conv1d gpu" : "test_conv1d cpu");
}

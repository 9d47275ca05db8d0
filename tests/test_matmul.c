/* Every matmul variant of one backend against a double reference:
 *   test_matmul cpu | gpu (exit 77 only when the machine has no CUDA device)
 * Shapes from 1 x 1 x 1 to 300 x 1000 x 257: no multiple of any tile, k and n not multiples of
 * 4 (the element-wise paths), k = 1, misaligned pointers, interior blocks (warptile's unchecked
 * pointer walk) beside edge blocks in one product (260 x 200 x 520), every tuning configuration; outputs
 * poisoned and fenced by guard words. On the GPU each variant's normwise error must also be
 * within 4x cuBLAS's on the same inputs (the bound) wherever there are at least 4096
 * outputs to take a norm over. Refusals write nothing. Reduced-precision rows (TF32) are judged
 * against the TF32 bound instead (mh_tf32_rtol); "wide" cases draw entries spanning 2^-20 ..
 * 2^20 in magnitude, where a split into TF32 parts must still hold FP32 accuracy. */
#include "testing.h"
#include "core/dtype.h"

#include <float.h>

typedef struct tcase {
    size_t m, k, n;
    int misaligned;
    int wide; /* |entries| from 2^-20 to 2^20 */
} tcase;

static const tcase cases[] = {
    {1, 1, 1, 0, 0},     {1, 7, 3, 1, 0},     {7, 1, 5, 0, 0},      {4, 4, 4, 0, 0},      {33, 17, 65, 1, 0},   {64, 64, 64, 0, 0},
    {127, 129, 131, 0, 0}, {128, 128, 128, 0, 0}, {129, 8, 257, 1, 0}, {256, 64, 300, 0, 0}, {300, 1000, 257, 0, 0}, {512, 512, 512, 0, 0},
    {1, 2049, 1, 0, 0},  {130, 3, 4100, 0, 0}, {260, 200, 520, 0, 0}, {128, 8, 256, 0, 0}, {130, 24, 260, 0, 0},
    {256, 16, 128, 0, 0},  {256, 512, 256, 0, 1}, {130, 300, 70, 0, 1},
};

typedef struct problem {
    const tcase *c;
    float *a, *b;
    double *ref, *mag;
} problem;

static void make_problem(problem *p, const tcase *c, unsigned long long seed)
{
    p->c = c;
    p->a = malloc(c->m * c->k * sizeof(float));
    p->b = malloc(c->k * c->n * sizeof(float));
    p->ref = malloc(c->m * c->n * sizeof(double));
    p->mag = malloc(c->m * c->n * sizeof(double));
    if (!p->a || !p->b || !p->ref || !p->mag) exit(1);
    mh_fill_uniform(p->a, c->m * c->k, seed, 1.0f);
    mh_fill_uniform(p->b, c->k * c->n, seed + 1, 1.0f);
    if (c->wide) test_widen(p->a, c->m * c->k), test_widen(p->b, c->k * c->n);
    for (size_t i = 0; i < c->m; ++i)
        for (size_t j = 0; j < c->n; ++j)
            mh_matmul_reference_at(p->a, p->b, c->k, c->n, i, j, &p->ref[i * c->n + j], &p->mag[i * c->n + j]);
}

static void free_problem(problem *p) { free(p->a), free(p->b), free(p->ref), free(p->mag); }

/* Runs one variant (config 0 through the public API, others through the row), checks it, and
 * returns its normwise error (-1 when it refused or failed). */
static double check_variant(mh_context *ctx, const problem *p, const float *a, const float *b, const test_out *out,
                            const mh_row *row, int config)
{
    const tcase *c = p->c;
    const char *name = row ? row->info.name : "auto", *cfg = row && row->configs ? row->configs[config] : "";
    test_out_poison(out);
    mh_args x;
    mh_matmul_args_init(ctx, &x, a, b, out->data, c->m, c->k, c->n);
    x.config = config;
    char why[512] = "";
    if (row && !row->supports(ctx, &x, why, sizeof why)) {
        CHECK(why[0], "%s refuses %zux%zux%zu without a reason", name, c->m, c->k, c->n);
        return -1;
    }
    mh_status s = config == 0 ? mh_matmul(ctx, row ? name : NULL, a, b, out->data, c->m, c->k, c->n)
                              : mh_run_row(ctx, row, &x);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s %s m=%zu k=%zu n=%zu: %s: %s", name, cfg, c->m, c->k, c->n, mh_status_str(s),
          mh_context_error(ctx));
    if (s != MH_OK) return -1;
    const size_t broken = test_out_fetch(out);
    mh_error_stats st;
    const int reduced = row && mh_variant_is_reduced_precision(&row->info);
    const double rtol = reduced ? mh_tf32_rtol(c->k) : mh_sum_rtol(c->k);
    const int close = mh_compare(out->host + TEST_GUARD, p->ref, p->mag, c->m * c->n, rtol, &st);
    /* Under 4096 outputs the normwise part of mh_compare can be one output's cancellation: a
     * 1 x 2049 x 1 dot product near 0 failed it at 0.18% (seed 2734873260) with every output
     * within the per-element bound, which scales with the sum of |a||b| and still applies. */
    const int ok = close || (c->m * c->n < 4096 && st.bad == 0 && st.nonfinite == 0);
    CHECK(broken == 0, "%s %s m=%zu k=%zu n=%zu wrote %zu guard words", name, cfg, c->m, c->k, c->n, broken);
    CHECK(ok, "%s %s m=%zu k=%zu n=%zu misaligned=%d wide=%d: c[%zu] = %.8g, ref %.8g; %zu bad, %zu NaN, rel_l2 %.3g",
          name, cfg, c->m, c->k, c->n, c->misaligned, c->wide, st.first_bad, st.first_out, st.first_ref, st.bad,
          st.nonfinite, st.rel_l2);
    return ok ? st.rel_l2 : -1;
}

static void check_refusals(mh_context *ctx, int gpu)
{
    float *buf = test_alloc(gpu, 64 * sizeof(float));
    const struct {
        const float *a, *b;
        float *c;
        size_t m, k, n;
        const char *says;
    } bad[] = {
        {buf, buf + 16, buf + 32, 0, 4, 4, "m = 0"},
        {buf, buf + 16, buf + 32, 4, 0, 4, "k = 0"},
        {buf, buf + 16, buf + 32, SIZE_MAX / 2, 4, 4, "overflows"},
        {NULL, buf + 16, buf + 32, 4, 4, 4, "a is NULL"},
        {buf, buf + 16, NULL, 4, 4, 4, "c is NULL"},
        {buf, buf + 16, buf + 8, 4, 4, 4, "overlaps"},  /* c over a */
        {buf, buf + 16, buf + 20, 4, 4, 4, "overlaps"}, /* c over b */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        CHECK_REFUSED(ctx, mh_matmul(ctx, NULL, bad[i].a, bad[i].b, bad[i].c, bad[i].m, bad[i].k, bad[i].n), bad[i].says);
    }
    test_release(gpu, buf);
}

/* Element i of a typed matrix (double or float16 bits) stored from a double (read back with
 * mh_load_double). */
static void typed_put(void *p, size_t i, mh_dtype t, double v)
{
    if (t == MH_F64) ((double *)p)[i] = v;
    else mh_store_value(p, i, t, (float)v); /* float16 or bfloat16, rounded to nearest */
}

/* Float64, float16 and bfloat16 products (mh_matmul_typed): every row flagged for the type
 * (MH_ROW_FLOAT64, _FLOAT16, _BFLOAT16) on this backend and auto against a long double reference, nothing written past
 * c. float64: each output within (k + 2) float64 epsilons of sum |a||b| (a sum of k products in
 * double, any order), entries of both signs over 60 binades. float16: the products exact in
 * float32 and summed there, within (k + 2) float32 epsilons of sum |a||b| (twice the round-to-
 * nearest bound: tensor cores may align before they add), plus the final rounding to float16
 * (half an ulp, or half the least subnormal), entries over 5 binades (sums below 65504);
 * bfloat16 the same with its rounding (half an ulp: 2^-8 of the value). Every
 * other row refuses such a product by name, writing nothing; a row of one type refuses the
 * others; other types are refused. */
static void check_typed(mh_context *ctx, int gpu, unsigned long long seed, mh_dtype t)
{
    static const size_t shapes[][3] = {{1, 1, 1}, {1, 2049, 1}, {7, 1, 5}, {33, 17, 65}, {130, 300, 70}, {260, 200, 520}};
    const unsigned flag = t == MH_F64 ? MH_ROW_FLOAT64 : t == MH_F16 ? MH_ROW_FLOAT16 : MH_ROW_BFLOAT16;
    const long double rounding = t == MH_F16 ? 0x1p-11L : 0x1p-8L, least = t == MH_F16 ? 0x1p-25L : 0x1p-134L;
    const size_t size = mh_dtype_size(t);
    const char *type = mh_dtype_name(t);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
        const size_t m = shapes[si][0], k = shapes[si][1], n = shapes[si][2];
        void *a = malloc(m * k * size), *b = malloc(k * n * size), *c = malloc((m * n + 4) * size);
        float *u = malloc((m * k + k * n) * sizeof(float));
        if (!a || !b || !c || !u) exit(1);
        mh_fill_uniform(u, m * k + k * n, seed + 31 * si, 1.0f);
        for (size_t i = 0; i < m * k + k * n; ++i) { /* sign and mantissa from u, an exponent spread over binades */
            const int e = t == MH_F64 ? (int)((i * 2654435761u) % 61) - 30 : (int)((i * 2654435761u) % 5) - 4;
            double v = ldexp((double)u[i] + (u[i] < 0 ? -0.5 : 0.5), e);
            if (t == MH_F64 && i >= m * k) v *= 1.0 + 0x1p-40 * (double)(i % 7); /* bits float32 does not hold */
            if (i < m * k) typed_put(a, i, t, v);
            else typed_put(b, i - m * k, t, v);
        }
        void *da = test_alloc(gpu, m * k * size), *db = test_alloc(gpu, k * n * size);
        void *dc = test_alloc(gpu, (m * n + 4) * size);
        test_put(gpu, da, a, m * k * size), test_put(gpu, db, b, k * n * size);
        for (size_t r = 0; r <= mh_row_count(MH_OP_MATMUL); ++r) { /* the rows, then auto */
            const mh_row *row = r < mh_row_count(MH_OP_MATMUL) ? mh_row_at(MH_OP_MATMUL, r) : NULL;
            if (row && !test_row_fits(row, gpu)) continue;
            const char *name = row ? row->info.name : "auto";
            memset(c, 0xff, (m * n + 4) * size); /* NaN in either type */
            test_put(gpu, dc, c, (m * n + 4) * size);
            const mh_status st = mh_matmul_typed(ctx, row ? name : NULL, t, da, db, dc, m, k, n);
            char refusal[64];
            snprintf(refusal, sizeof refusal, "does not compute %s products", type);
            if (row && !(row->flags & flag)) {
                CHECK(st == MH_ERR_UNSUPPORTED && strstr(mh_context_error(ctx), refusal), "%s took a %s product: %s",
                      name, type, mh_context_error(ctx));
            } else {
                CHECK(st == MH_OK && mh_context_synchronize(ctx) == MH_OK, "%s %s m=%zu k=%zu n=%zu: %s", name, type, m, k,
                      n, mh_context_error(ctx));
            }
            test_get(gpu, c, dc, (m * n + 4) * size);
            size_t bad = 0, first = 0;
            long double first_ref = 0;
            for (size_t i = 0; i < m && st == MH_OK; ++i)
                for (size_t j = 0; j < n; ++j) {
                    long double ref = 0, mag = 0;
                    for (size_t q = 0; q < k; ++q) {
                        const long double p = (long double)mh_load_double(a, i * k + q, t) * mh_load_double(b, q * n + j, t);
                        ref += p, mag += fabsl(p);
                    }
                    const long double bound = t == MH_F64 ? (long double)(k + 2) * DBL_EPSILON * mag
                                                          : (long double)(k + 2) * FLT_EPSILON * mag + rounding * fabsl(ref) +
                                                                least;
                    if (!(fabsl((long double)mh_load_double(c, i * n + j, t) - ref) <= bound) && bad++ == 0)
                        first = i * n + j, first_ref = ref;
                }
            CHECK(bad == 0, "%s %s m=%zu k=%zu n=%zu: %zu outputs past the bound, first c[%zu] = %.17g, exact %.17Lg", name,
                  type, m, k, n, bad, first, mh_load_double(c, first, t), first_ref);
            size_t written = 0;
            for (size_t i = st == MH_OK ? m * n : 0; i < m * n + 4; ++i) written += !isnan(mh_load_double(c, i, t));
            CHECK(written == 0, "%s %s m=%zu k=%zu n=%zu: %zu values written past c or by a refusal", name, type, m, k, n,
                  written);
        }
        if (gpu && si == 3) { /* the typed vendor rows take their type alone (a 1 x 1 x 1 float32 product fits) */
            const char *vendor = t == MH_F64 ? "cublas-dgemm" : t == MH_F16 ? "cublas-f16" : "cublas-bf16";
            CHECK(mh_matmul(ctx, vendor, (const float *)da, (const float *)db,
                            (float *)dc, 1, 1, 1) == MH_ERR_UNSUPPORTED &&
                      strstr(mh_context_error(ctx), "products; this one is float32"),
                  "a %s row took a float32 product: %s", type, mh_context_error(ctx));
        }
        if (si == 0) CHECK_REFUSED(ctx, mh_matmul_typed(ctx, NULL, MH_I32, da, db, dc, m, k, n), "type = 6 (int32)");
        test_release(gpu, da), test_release(gpu, db), test_release(gpu, dc);
        free(a), free(b), free(c), free(u);
    }
}

int main(int argc, char **argv)
{
    int gpu;
    mh_context *ctx = test_open(argc, argv, &gpu);
    const unsigned long long seed = test_seed();
    const size_t max_n = test_max_n();
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const tcase *c = &cases[ci];
        if (c->m * c->n > max_n || c->m * c->k > max_n || c->k * c->n > max_n) continue;
        problem p;
        make_problem(&p, c, seed + 10 * ci);
        test_in a = test_in_copy(gpu, p.a, c->m * c->k, c->misaligned ? 1 : 0);
        test_in b = test_in_copy(gpu, p.b, c->k * c->n, c->misaligned ? 2 : 0);
        test_out out = test_out_alloc(gpu, c->m * c->n, c->misaligned ? 3 : 0);
        const mh_row *vendor = gpu ? mh_row_of(mh_variant_lookup(MH_OP_MATMUL, "cublas")) : NULL;
        const double vendor_err = vendor && test_row_fits(vendor, gpu) ? check_variant(ctx, &p, a.data, b.data, &out, vendor, 0) : -1;
        for (size_t r = 0; r < mh_row_count(MH_OP_MATMUL); ++r) {
            const mh_row *row = mh_row_at(MH_OP_MATMUL, r);
            if (!test_row_fits(row, gpu) || row == vendor) continue;
            for (int cfg = 0; cfg < test_configs(row, gpu); ++cfg) {
                char what[96];
                snprintf(what, sizeof what, "m=%zu k=%zu n=%zu", c->m, c->k, c->n);
                test_trace(row->info.name, cfg, what);
                const double err = check_variant(ctx, &p, a.data, b.data, &out, row, cfg);
                if (c->wide && cfg == 0 && err >= 0) /* docs/matmul.md quotes these */
                    printf("wide m=%zu k=%zu n=%zu: %s rel_l2 %.3g (cuBLAS %.3g)\n", c->m, c->k, c->n, row->info.name, err,
                           vendor_err);
                /* 4x cuBLAS's normwise error, over at least 4096 outputs: on a single dot
                 * product (1 x 2049 x 1) the norm is one output's rounding, a coin toss, and
                 * cuBLAS's split sum beat our sequential ones 7x on one H100 run; the
                 * per-element bound above (mh_compare) still holds there */
                if (err >= 0 && vendor_err >= 0 && c->m * c->n >= 4096 && !mh_variant_is_reduced_precision(&row->info))
                    CHECK(err <= 4.0 * vendor_err + 1e-7, "%s config %d m=%zu k=%zu n=%zu: rel_l2 %.3g, more than 4x cuBLAS's %.3g",
                          row->info.name, cfg, c->m, c->k, c->n, err, vendor_err);
            }
        }
        check_variant(ctx, &p, a.data, b.data, &out, NULL, 0); /* auto */
        test_out_free(&out);
        test_release(gpu, a.base), test_release(gpu, b.base);
        free_problem(&p);
        printf("m=%zu k=%zu n=%zu done\n", c->m, c->k, c->n);
        fflush(stdout);
    }
    check_refusals(ctx, gpu);
    check_typed(ctx, gpu, seed, MH_F64);
    check_typed(ctx, gpu, seed, MH_F16);
    check_typed(ctx, gpu, seed, MH_BF16);
    const mh_variant_info *pick = NULL;
    CHECK(mh_matmul_select(ctx, 4096, 4096, 4096, &pick) == MH_OK && pick, "auto picks nothing at 4096^3: %s",
          mh_context_error(ctx));
    if (gpu) { /* the rule in src/api/matmul.c: wgmma where k >= 512 and m k n >= 4e8, on sm_90 */
        const char *big = ctx->cc == 90 ? "matmul/tf32x3-wgmma" : "matmul/cublas";
        const struct { size_t m, k, n; const char *want; } picks[] = {
            {4096, 4096, 4096, big}, {1000, 1000, 1000, big}, {2000, 1000, 500, big},
            {512, 512, 512, "matmul/cublas"}, {8192, 64, 8192, "matmul/cublas"}};
        for (size_t i = 0; i < sizeof picks / sizeof picks[0]; ++i) {
            CHECK(mh_matmul_select(ctx, picks[i].m, picks[i].k, picks[i].n, &pick) == MH_OK && pick &&
                      !strcmp(pick->name, picks[i].want),
                  "auto at %zu x %zu x %zu picks %s, not %s", picks[i].m, picks[i].k, picks[i].n,
                  pick ? pick->name : "nothing", picks[i].want);
        }
    }
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_matmul gpu" : "test_matmul cpu");
}

/* Batched conv1d (mh_conv1d_batched): every row of one backend, native batch or run once
 * per signal, against the double reference of each signal:
 *   test_conv1d_batched cpu | gpu
 * One mask for all signals and one mask per signal; batch 1 and many; every padding and one
 * boundary mode a case (mh_conv1d_mode: each mode across the cases); n not a
 * multiple of any segment or tile; outputs poisoned with NaN and fenced by guard words. Then
 * the refusals (batch = 0, a mask_stride other than 0 or k, sizes that overflow: an error
 * naming the argument, nothing written; a mode or origin out of range) and NaN propagation (every output whose window holds
 * a NaN input is NaN, for every row). */
#include "testing.h"

typedef struct bcase {
    size_t batch, n, k;
    int per_signal; /* mask_stride = k */
} bcase;

static const bcase cases[] = {
    {1, 1000, 31, 0},  {3, 1, 1, 1},       {5, 777, 1, 1},    {4, 1025, 1024, 0}, {7, 4099, 255, 1},
    {37, 513, 17, 1},  {2, 20011, 2047, 0}, {3, 10007, 2049, 1}, {130, 300, 64, 1}, {9, 5000, 4097, 0},
};

typedef struct bproblem {
    const bcase *c;
    mh_pad pad;
    int bordered; /* mh_conv1d_mode: the case's mode, cval 0.5, an origin at a limit or centred */
    mh_mode mode;
    long long origin;
    char where[80];
    size_t out_n, lpad, masks;
    float *in, *mask;
    double *ref, *mag;
} bproblem;

static mh_status args_of(mh_context *ctx, mh_args *a, const bproblem *p, const float *in, const float *mask, float *out)
{
    const bcase *c = p->c;
    const size_t stride = c->per_signal ? c->k : 0;
    if (p->bordered)
        return mh_conv1d_mode_args_init(ctx, a, in, c->batch, c->n, mask, stride, c->k, p->mode, 0.5f, p->origin, out);
    return mh_conv1d_batched_args_init(ctx, a, in, c->batch, c->n, mask, stride, c->k, p->pad, out);
}

static mh_status call(mh_context *ctx, const char *name, const bproblem *p, const float *in, const float *mask,
                      float *out)
{
    const bcase *c = p->c;
    const size_t stride = c->per_signal ? c->k : 0;
    if (p->bordered)
        return mh_conv1d_mode(ctx, name, in, c->batch, c->n, mask, stride, c->k, p->mode, 0.5f, p->origin, out);
    return mh_conv1d_batched(ctx, name, in, c->batch, c->n, mask, stride, c->k, p->pad, out);
}

/* placement 0..2: the zero paddings; 3: case ci's boundary mode. */
static void make(bproblem *p, const bcase *c, size_t ci, int placement, unsigned long long seed)
{
    p->c = c, p->pad = placement < 3 ? (mh_pad)placement : MH_PAD_SAME;
    p->bordered = placement == 3, p->mode = (mh_mode)(ci % 5);
    p->origin = ci % 3 == 0 ? 0 : ci % 3 == 1 ? -(long long)(c->k / 2) : (long long)((c->k - 1) / 2);
    if (p->bordered)
        snprintf(p->where, sizeof p->where, "mode=%s origin=%lld", mh_mode_name(p->mode), p->origin);
    else
        snprintf(p->where, sizeof p->where, "pad=%s", mh_pad_name(p->pad));
    mh_args shape;
    args_of(NULL, &shape, p, NULL, NULL, NULL);
    p->out_n = shape.conv1d.out_n, p->lpad = shape.conv1d.lpad;
    p->masks = c->per_signal ? c->batch : 1;
    p->in = malloc(c->batch * c->n * sizeof(float));
    p->mask = malloc(p->masks * c->k * sizeof(float));
    p->ref = malloc(c->batch * p->out_n * sizeof(double));
    p->mag = malloc(c->batch * p->out_n * sizeof(double));
    mh_fill_uniform(p->in, c->batch * c->n, seed, 1.0f);
    mh_fill_uniform(p->mask, p->masks * c->k, seed + 1, 1.0f);
#pragma omp parallel for schedule(dynamic, 1)
    for (long long b = 0; b < (long long)c->batch; ++b) {
        const float *m = p->mask + (c->per_signal ? (size_t)b * c->k : 0), *x = p->in + (size_t)b * c->n;
        double *ref = p->ref + (size_t)b * p->out_n, *mag = p->mag + (size_t)b * p->out_n;
        for (size_t i = 0; i < p->out_n; ++i) {
            if (p->bordered) mh_conv1d_reference_mode_at(x, c->n, m, c->k, p->lpad, p->mode, 0.5f, i, &ref[i], &mag[i]);
            else mh_conv1d_reference_at(x, c->n, m, c->k, p->lpad, i, &ref[i], &mag[i]);
        }
    }
}

static void unmake(bproblem *p) { free(p->in), free(p->mask), free(p->ref), free(p->mag); }

static void check_row(mh_context *ctx, const bproblem *p, const float *in, const float *mask, const test_out *out,
                      const mh_row *row, int config)
{
    const bcase *c = p->c;
    const char *name = row->info.name, *cfg = row->configs ? row->configs[config] : "";
    mh_args a;
    args_of(ctx, &a, p, in, mask, out->data);
    a.config = config;
    char why[512] = "";
    if (!row->supports(ctx, &a, why, sizeof why)) {
        CHECK(why[0] != '\0', "%s refuses batch=%zu n=%zu k=%zu without a reason", name, c->batch, c->n, c->k);
        return;
    }
    test_out_poison(out);
    mh_status s = config == 0 ? call(ctx, name, p, in, mask, out->data) : mh_run_row(ctx, row, &a);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s %s batch=%zu n=%zu k=%zu: %s: %s", name, cfg, c->batch, c->n, c->k, mh_status_str(s),
          mh_context_error(ctx));
    if (s != MH_OK) return;
    const size_t broken = test_out_fetch(out);
    CHECK(broken == 0, "%s %s batch=%zu n=%zu k=%zu wrote %zu guard words", name, cfg, c->batch, c->n, c->k, broken);
    for (size_t b = 0; b < c->batch; ++b) {
        mh_error_stats st;
        const size_t at = b * p->out_n;
        int ok = mh_compare(out->host + TEST_GUARD + at, p->ref + at, p->mag + at, p->out_n, mh_sum_rtol(c->k), &st);
        CHECK(ok, "%s %s batch=%zu n=%zu k=%zu %s %s masks: signal %zu out[%zu]=%.8g ref %.8g (%zu bad, rel_l2 %.3g)",
              name, cfg, c->batch, c->n, c->k, p->where, c->per_signal ? "per-signal" : "shared", b,
              st.first_bad, st.first_out, st.first_ref, st.bad, st.rel_l2);
        if (!ok) break;
    }
}

static void test_ladder(mh_context *ctx, int gpu, unsigned long long seed)
{
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const bcase *c = &cases[ci];
        if (c->batch * c->n > test_max_n()) continue;
        for (int placement = 0; placement <= 3; ++placement) {
            bproblem p;
            make(&p, c, ci, placement, seed + 100 * ci + (unsigned long long)placement);
            test_in in = test_in_copy(gpu, p.in, c->batch * c->n, 0);
            test_in mask = test_in_copy(gpu, p.mask, p.masks * c->k, 0);
            test_out out = test_out_alloc(gpu, c->batch * p.out_n, 0);
            for (size_t r = 0; r < mh_row_count(MH_OP_CONV1D); ++r) {
                const mh_row *row = mh_row_at(MH_OP_CONV1D, r);
                if (!test_row_fits(row, gpu)) continue;
                /* the slow seed rungs run per signal like any unbatched row: the small cases suffice */
                if (!row->batched && row->info.backend != MH_BACKEND_CPU && c->batch * c->n * c->k > 50000000) continue;
                for (int cfg = 0; cfg < test_configs(row, gpu); ++cfg) check_row(ctx, &p, in.data, mask.data, &out, row, cfg);
            }
            CHECK(test_in_unchanged(&in, p.in, c->batch * c->n) && test_in_unchanged(&mask, p.mask, p.masks * c->k),
                  "batch=%zu n=%zu k=%zu: a variant changed its input or masks", c->batch, c->n, c->k);
            test_out_free(&out);
            test_release(gpu, in.base), test_release(gpu, mask.base);
            unmake(&p);
        }
        printf("batch=%zu n=%zu k=%zu done\n", c->batch, c->n, c->k);
        fflush(stdout);
    }
}

/* Refusals name the argument and its value and write nothing. */
static void test_refusals(mh_context *ctx, int gpu)
{
    test_in in = test_in_copy(gpu, (const float[8]){0}, 8, 0), mask = test_in_copy(gpu, (const float[8]){0}, 8, 0);
    test_out out = test_out_alloc(gpu, 16, 0);
    const struct {
        size_t batch, n, stride, k;
        const char *says;
    } bad[] = {
        {0, 8, 0, 3, "batch = 0"},
        {2, 8, 5, 3, "mask_stride = 5"},
        {2, 8, 1, 3, "mask_stride = 1"},
        {(size_t)1 << 62, 8, 0, 3, "batch = 4611686018427387904 x n = 8"},
        {2, 0, 0, 3, "n = 0"},
        {2, 2, 0, 3, "k = 3 is longer than n = 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        test_out_poison(&out);
        mh_status s = mh_conv1d_batched(ctx, NULL, in.data, bad[i].batch, bad[i].n, mask.data, bad[i].stride, bad[i].k,
                                        MH_PAD_VALID, out.data);
        CHECK(s == MH_ERR_INVALID_ARGUMENT && strstr(mh_context_error(ctx), bad[i].says),
              "refusal %zu: %s: '%s' lacks '%s'", i, mh_status_str(s), mh_context_error(ctx), bad[i].says);
        mh_context_synchronize(ctx);
        CHECK(test_out_fetch(&out) == 0 && test_out_written(&out) == 0, "refusal %zu wrote into out", i);
    }
    const struct {
        int mode;
        long long origin;
        const char *says;
    } bad_modes[] = {{7, 0, "mode = 7"}, {MH_MODE_REFLECT, 2, "origin = 2"}, {MH_MODE_WRAP, -2, "origin = -2"}};
    for (size_t i = 0; i < sizeof bad_modes / sizeof bad_modes[0]; ++i) {
        test_out_poison(&out);
        mh_status s = mh_conv1d_mode(ctx, NULL, in.data, 2, 8, mask.data, 0, 3, (mh_mode)bad_modes[i].mode, 0.0f,
                                     bad_modes[i].origin, out.data);
        CHECK(s == MH_ERR_INVALID_ARGUMENT && strstr(mh_context_error(ctx), bad_modes[i].says),
              "mode refusal %zu: %s: '%s' lacks '%s'", i, mh_status_str(s), mh_context_error(ctx), bad_modes[i].says);
        mh_context_synchronize(ctx);
        CHECK(test_out_fetch(&out) == 0 && test_out_written(&out) == 0, "mode refusal %zu wrote into out", i);
    }
    test_out_free(&out);
    test_release(gpu, in.base), test_release(gpu, mask.base);
}

/* A NaN at input p of signal 1 (of 3): outputs of signal 1 whose window holds p are NaN for
 * every row; signals 0 and 2 stay finite (an FFT row may spread the NaN over its segment, never
 * into another signal). */
static void test_nan(mh_context *ctx, int gpu, unsigned long long seed)
{
    enum { B = 3, N = 3000, K = 101, P = 1700 };
    float *h_in = malloc(B * N * sizeof(float)), h_mask[K];
    mh_fill_uniform(h_in, B * N, seed, 1.0f);
    mh_fill_uniform(h_mask, K, seed + 1, 1.0f);
    h_in[N + P] = NAN;
    test_in in = test_in_copy(gpu, h_in, B * N, 0), mask = test_in_copy(gpu, h_mask, K, 0);
    const size_t out_n = N - K + 1;
    test_out out = test_out_alloc(gpu, B * out_n, 0);
    for (size_t r = 0; r < mh_row_count(MH_OP_CONV1D); ++r) {
        const mh_row *row = mh_row_at(MH_OP_CONV1D, r);
        if (!test_row_fits(row, gpu)) continue;
        test_out_poison(&out);
        mh_status s = mh_conv1d_batched(ctx, row->info.name, in.data, B, N, mask.data, 0, K, MH_PAD_VALID, out.data);
        if (s == MH_ERR_UNSUPPORTED) continue;
        if (s == MH_OK) s = mh_context_synchronize(ctx);
        CHECK(s == MH_OK, "%s: %s", row->info.name, mh_context_error(ctx));
        if (s != MH_OK) continue;
        test_out_fetch(&out);
        const float *o = out.host + TEST_GUARD;
        size_t missing = 0, leaked = 0;
        for (size_t i = P - K + 1; i <= P; ++i) missing += !isnan(o[out_n + i]);
        for (size_t i = 0; i < out_n; ++i) leaked += !isfinite(o[i]) + !isfinite(o[2 * out_n + i]);
        CHECK(missing == 0 && leaked == 0, "%s: %zu outputs over the NaN are finite, %zu outputs of other signals are not",
              row->info.name, missing, leaked);
    }
    test_out_free(&out);
    test_release(gpu, in.base), test_release(gpu, mask.base);
    free(h_in);
}

int main(int argc, char **argv)
{
    int gpu;
    mh_context *ctx = test_open(argc, argv, &gpu);
    const unsigned long long seed = test_seed();
    test_refusals(ctx, gpu);
    test_nan(ctx, gpu, seed);
    test_ladder(ctx, gpu, seed);
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_conv1d_batched gpu" : "test_conv1d_batched cpu");
}

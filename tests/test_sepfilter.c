/* sepfilter: the CPU row against a float64 reference written here from scipy.ndimage's
 * definitions (each pass's border per axis, its cast into the output's type, the pass order),
 * then the CUDA row against the CPU row bit for bit on every shape, type, mode, order, origin,
 * channel count and batch below; and the refusals, each by name.
 *   test_sepfilter cpu | gpu */
#include "testing.h"
#include <float.h>
#include "core/border.h"
#include "core/dtype.h"

/* scipy's cast of a float64 result, as x86-64 stores it: cvttsd2si truncates, its least value for
 * NaN and values out of range; 8- and 16-bit types through int32, uint32 through int64, uint64
 * through int64 below 2^63 and past it as v - 2^63 with the top bit set. */
static double c_cast(double v, mh_dtype t)
{
    const double w = trunc(v);
    const long long i64 = w >= -0x1p63 && w < 0x1p63 ? (long long)w : LLONG_MIN; /* NaN: LLONG_MIN */
    switch (t) {
    case MH_F64: return v;
    case MH_I32: return w > -0x1p31 - 1.0 && w < 0x1p31 ? w : -0x1p31;
    case MH_I64: return (double)i64;
    case MH_U32: return (double)(unsigned)((unsigned long long)i64 & 0xffffffffu);
    case MH_U64:
        if (!(w >= 0x1p63)) return (double)(unsigned long long)i64;
        return w - 0x1p63 < 0x1p63 ? w : 0.0; /* from 2^64: the least int64 with its top bit flipped */
    default: break;
    }
    if (t == MH_F32) return (float)v;
    if (t == MH_F16) return mh_half_to_float(mh_float_to_half((float)v));
    const long long i = fabs(w) < 2147483648.0 ? (long long)w : 0;
    switch (t) {
    case MH_U8: return (double)(i & 0xff);
    case MH_I8: return (double)(signed char)(i & 0xff);
    case MH_U16: return (double)(i & 0xffff);
    default: return (double)(short)(i & 0xffff);
    }
}

typedef struct problem {
    mh_sepfilter_desc d;
    float vt[MH_SEPFILTER_MAX_TAPS], ht[MH_SEPFILTER_MAX_TAPS];
    double vt64[MH_SEPFILTER_MAX_TAPS], ht64[MH_SEPFILTER_MAX_TAPS]; /* a float64 call's taps64 (wide_cases) */
} problem;

/* scipy's sum of one output (NI_Correlate1D, written here from its definition): v[j] the value
 * under tap j; an odd filter symmetric within DBL_EPSILON folds the pairs about its centre (from the
 * outermost in) and an antisymmetric one subtracts them, any other starts from its last tap. Each
 * product rounded before it is added: this file builds with -ffp-contract=off. */
static double scipy_sum(const double *v, const double *w, size_t k)
{
    const size_t c = k / 2;
    int sym = k % 2, anti = k % 2;
    for (size_t i = 1; i <= c; ++i) {
        sym = sym && fabs(w[c + i] - w[c - i]) <= DBL_EPSILON;
        anti = anti && fabs(w[c + i] + w[c - i]) <= DBL_EPSILON;
    }
    if (sym || anti) {
        double s = v[c] * w[c];
        for (size_t i = 0; i < c; ++i) s += (sym ? v[i] + v[k - 1 - i] : v[i] - v[k - 1 - i]) * w[i];
        return s;
    }
    double s = v[k - 1] * w[k - 1];
    for (size_t j = 0; j + 1 < k; ++j) s += v[j] * w[j];
    return s;
}

/* What a pass of the reference stores for an output: its taps' sum in order, divided and cast into
 * the output's type (REF_ORDER); the sum of |value| |tap| (REF_MAGNITUDE: a tolerance's scale); or
 * scipy's sum (scipy_sum), divided and cast (REF_SCIPY). */
enum ref_kind { REF_ORDER, REF_MAGNITUDE, REF_SCIPY };

/* One pass of the reference along an axis: dst (doubles) from src (doubles) in every line. */
static void ref_pass(const mh_sepfilter_desc *d, const double *src, double *dst, int vertical, enum ref_kind kind)
{
    const mh_sepfilter_axis *x = vertical ? &d->vertical : &d->horizontal;
    const size_t C = d->channels, R = d->rows, W = d->cols;
    const long long anchor = (long long)(x->ntaps / 2) + x->origin;
    double v[MH_SEPFILTER_MAX_TAPS], w[MH_SEPFILTER_MAX_TAPS];
    for (size_t j = 0; j < x->ntaps; ++j) w[j] = x->taps64 ? x->taps64[j] : (double)x->taps[j];
    for (size_t b = 0; b < d->batch; ++b)
        for (size_t r = 0; r < R; ++r)
            for (size_t c = 0; c < W; ++c)
                for (size_t ch = 0; ch < C; ++ch) {
                    double s = 0.0;
                    for (size_t j = 0; j < x->ntaps; ++j) {
                        const long long pos = (long long)(vertical ? r : c) + (long long)j - anchor;
                        const long long q = mh_border_index(pos, (long long)(vertical ? R : W), (int)x->mode);
                        const size_t rr = vertical ? (size_t)q : r, cc = vertical ? c : (size_t)q;
                        v[j] = q < 0 ? (double)d->cval : src[((b * R + rr) * W + cc) * C + ch];
                        s += kind == REF_MAGNITUDE ? fabs(v[j]) * fabs(w[j]) : v[j] * w[j];
                    }
                    if (kind == REF_SCIPY) s = scipy_sum(v, w, x->ntaps);
                    dst[((b * R + r) * W + c) * C + ch] =
                        kind == REF_MAGNITUDE ? s : c_cast(s / x->divisor, d->out_type);
                }
}

static double largest(const double *v, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; ++i)
        if (isfinite(v[i])) m = fmax(m, fabs(v[i]));
    return m;
}

/* The CPU row against the reference: equal where every sum of both passes is exact in float32
 * (integer taps and data, sums of |terms| under 2^24: the borders and casts are all that can
 * differ); float32 outputs within float32 rounding of the sums of |terms| elsewhere. Returns 0
 * for a problem neither applies to (an integer output of inexact sums may truncate either way).
 * Summed passes (MH_SEPFILTER_SUM): each from the input, cast, and their sum cast. */
static int check_cpu(mh_context *cpu, const problem *p, const void *in, const char *what)
{
    const mh_sepfilter_desc *d = &p->d;
    const size_t n = d->batch * d->rows * d->cols * d->channels;
    double *x = malloc(n * sizeof(double)), *mid = malloc(n * sizeof(double)), *ref = malloc(n * sizeof(double));
    double *mag = malloc(n * sizeof(double));
    void *out = malloc(n * 4);
    for (size_t i = 0; i < n; ++i) x[i] = mh_load_value(in, i, d->in_type);
    const int first_vertical = d->order != MH_SEPFILTER_HORIZONTAL_FIRST, sum = d->order == MH_SEPFILTER_SUM;
    ref_pass(d, x, mag, first_vertical, REF_MAGNITUDE);
    const double mag1 = largest(mag, n);
    ref_pass(d, x, mid, first_vertical, REF_ORDER);
    const double *second_in = sum ? x : mid;
    ref_pass(d, second_in, mag, !first_vertical, REF_MAGNITUDE);
    const double mag2 = largest(mag, n);
    ref_pass(d, second_in, ref, !first_vertical, REF_ORDER);
    if (sum)
        for (size_t i = 0; i < n; ++i) ref[i] = c_cast(mid[i] + ref[i], d->out_type);
    const int integer_taps = p->vt[0] == roundf(p->vt[0]) && p->ht[0] == roundf(p->ht[0]);
    const mh_sepfilter_axis *first = first_vertical ? &d->vertical : &d->horizontal;
    const mh_sepfilter_axis *second = first_vertical ? &d->horizontal : &d->vertical;
    const int integer_out = d->out_type != MH_F32 && d->out_type != MH_F16;
    const int exact = integer_taps && d->in_type != MH_F32 && d->in_type != MH_F16 && mag1 < 0x1p24 && mag2 < 0x1p24 &&
                      (first->divisor == 1 || integer_out) && (d->out_type != MH_F16 || mag1 <= 2048.0) &&
                      (!sum || ((second->divisor == 1 || integer_out) && (d->out_type != MH_F16 || mag2 <= 2048.0)));
    if (!exact && d->out_type != MH_F32) {
        free(x), free(mid), free(ref), free(mag), free(out);
        return 0;
    }
    const mh_status s = mh_sepfilter(cpu, "sepfilter/cpu-omp", d, in, out);
    CHECK(s == MH_OK, "%s: %s", what, mh_context_error(cpu));
    size_t bad = 0;
    /* each pass's float32 sum within (taps) 2^-24 of its sum of |terms|, the first's carried by the second */
    double gain = 0.0; /* how much the second pass can grow the first's error (summed: not at all) */
    for (size_t j = 0; j < second->ntaps; ++j) gain += fabs((double)second->taps[j]);
    const double tol = exact ? 0.0
                       : sum ? 0x1p-24 * ((double)(first->ntaps + 2) * mag1 / first->divisor +
                                          (double)(second->ntaps + 2) * mag2 / second->divisor)
                             : 0x1p-24 * ((double)first->ntaps * mag1 * gain / second->divisor +
                                          (double)second->ntaps * mag2 / second->divisor);
    for (size_t i = 0; s == MH_OK && i < n; ++i) {
        const double got = mh_load_value(out, i, d->out_type);
        if (!(got == ref[i]) && !(fabs(got - ref[i]) <= tol) && !(isnan(got) && isnan(ref[i])) && !bad++)
            fprintf(stderr, "%s: value %zu is %.9g, the reference %.9g (tolerance %g, %s -> %s)\n", what, i, got, ref[i],
                    tol, mh_dtype_name(d->in_type), mh_dtype_name(d->out_type));
    }
    CHECK(bad == 0, "%s: %zu of %zu values differ from the reference", what, bad, n);
    free(x), free(mid), free(ref), free(mag), free(out);
    return 1;
}

static void fill(void *in, size_t n, mh_dtype t, unsigned seed, float scale)
{
    float *u = malloc(n * sizeof(float));
    mh_fill_uniform(u, n, seed, 1.0f);
    for (size_t i = 0; i < n; ++i) {
        float v = u[i] * scale;
        if (t != MH_F32 && t != MH_F16) v = roundf(v);
        mh_store_value(in, i, t, mh_cast_value(v, t));
    }
    free(u);
}

/* The description's taps point into the problem: set again after every copy (taps64 where set). */
static void bind(problem *p)
{
    p->d.vertical.taps = p->vt, p->d.horizontal.taps = p->ht;
    if (p->d.vertical.taps64) p->d.vertical.taps64 = p->vt64, p->d.horizontal.taps64 = p->ht64;
}

static problem make(size_t batch, size_t rows, size_t cols, size_t C, mh_dtype in, mh_dtype out, size_t kv, size_t kh,
                    int integer_taps, unsigned seed)
{
    problem p;
    memset(&p, 0, sizeof p);
    p.d.batch = batch, p.d.rows = rows, p.d.cols = cols, p.d.channels = C, p.d.in_type = in, p.d.out_type = out;
    p.d.vertical = (mh_sepfilter_axis){p.vt, kv, 0, MH_MODE_REFLECT, 1, NULL, 0};
    p.d.horizontal = (mh_sepfilter_axis){p.ht, kh, 0, MH_MODE_REFLECT, 1, NULL, 0};
    mh_fill_uniform(p.vt, kv, seed, 1.0f), mh_fill_uniform(p.ht, kh, seed + 1, 1.0f);
    if (integer_taps)
        for (size_t i = 0; i < MH_SEPFILTER_MAX_TAPS; ++i) p.vt[i] = roundf(p.vt[i] * 3.0f), p.ht[i] = roundf(p.ht[i] * 3.0f);
    return p;
}

static const mh_dtype types[] = {MH_F32, MH_F16, MH_U8, MH_I8, MH_U16, MH_I16};
static const mh_mode modes[] = {MH_MODE_CONSTANT, MH_MODE_REFLECT, MH_MODE_MIRROR, MH_MODE_NEAREST, MH_MODE_WRAP};

/* The cases both backends run: shapes off every tile edge, 1 x 1 to 300 x 1001, channels 1
 * to 4, taps 1 to 127 (even ones), origins at both limits, modes per axis, the three orders. */
static size_t cases(problem *out, size_t max)
{
    static const size_t shapes[][4] = {{1, 1, 1, 1},  {1, 1, 7, 3},   {1, 9, 1, 1},   {2, 5, 3, 2},
                                       {1, 37, 517, 1}, {3, 33, 200, 3}, {1, 300, 101, 4}, {1, 64, 192, 1}};
    static const size_t taps[][2] = {{1, 1}, {3, 3}, {4, 6}, {17, 17}, {31, 2}, {1, 31}, {41, 64}, {127, 3}};
    size_t n = 0;
    unsigned seed = 1;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (size_t k = 0; k < sizeof taps / sizeof taps[0]; ++k, ++seed) {
            const mh_dtype in = types[seed % 6], outt = types[(seed / 6 + seed) % 6];
            problem p = make(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], in, outt, taps[k][0], taps[k][1],
                             seed % 4 != 3, seed);
            p.d.vertical.mode = modes[seed % 5], p.d.horizontal.mode = modes[(seed + 2) % 5];
            p.d.vertical.origin = seed % 2 ? -(long long)(taps[k][0] / 2) : (long long)((taps[k][0] - 1) / 2);
            p.d.horizontal.origin = seed % 4 < 2 ? 0 : (long long)((taps[k][1] - 1) / 2);
            p.d.order = (mh_sepfilter_order)(seed % 3);
            p.d.cval = seed % 7 == 0 ? NAN : 2.5f;
            if (seed % 5 == 1) p.d.vertical.divisor = 3;
            if (n < max) out[n] = p, bind(&out[n]), ++n;
        }
    return n;
}

static void *input_for(const problem *p, unsigned seed)
{
    const size_t n = p->d.batch * p->d.rows * p->d.cols * p->d.channels;
    void *in = malloc(n * 4);
    const mh_dtype t = p->d.in_type;
    fill(in, n, t, seed, t == MH_U8 ? 255.0f : t == MH_I8 ? 127.0f : t == MH_U16 || t == MH_I16 ? 30000.0f : 50.0f);
    return in;
}

/* The values of got that differ from want's (NaN equals NaN: the CPU and the GPU store NaN with
 * other payloads), the first of them in *first. */
static size_t values_differing(const void *got, const void *want, size_t values, mh_dtype t, size_t *first)
{
    size_t bad = 0;
    const size_t size = mh_dtype_size(t);
    for (size_t v = 0; v < values; ++v) {
        int same;
        if (t == MH_F64 || !mh_dtype_is_wide(t)) {
            const double a = mh_load_double(got, v, t), b = mh_load_double(want, v, t);
            same = a == b || (isnan(a) && isnan(b));
        } else { /* integers past 2^53: their bits */
            same = !memcmp((const char *)got + v * size, (const char *)want + v * size, size);
        }
        if (!same && !bad++) *first = v;
    }
    return bad;
}

static void *wide_input(const problem *p, unsigned seed);

/* Case p's input, of its type (wide_input for a float64 call's). */
static void *case_input(const problem *p, unsigned seed)
{
    return (mh_dtype_is_wide(p->d.in_type) || mh_dtype_is_wide(p->d.out_type)) ? wide_input(p, seed) : input_for(p, seed);
}

/* ---- mh_sepfilter_sum ----------------------------------------------------------------------- */

/* The terms of case p: p itself, a second filter of its images with other taps, modes and order,
 * and where three a third; returns how many the case sums (1 to 3). */
static size_t sum_terms(const problem *p, unsigned seed, problem *t)
{
    t[0] = *p, bind(&t[0]);
    const mh_sepfilter_desc *d = &p->d;
    for (size_t k = 1; k < 3; ++k) {
        t[k] = make(d->batch, d->rows, d->cols, d->channels, d->in_type, d->out_type, d->horizontal.ntaps,
                    k == 1 ? d->vertical.ntaps : 5, seed % 2 == 0, seed + 7 * (unsigned)k);
        bind(&t[k]);
        t[k].d.vertical.mode = modes[(seed + k) % 5], t[k].d.horizontal.mode = modes[(seed + 3 * k) % 5];
        t[k].d.order = (mh_sepfilter_order)((seed + k) % 3), t[k].d.cval = d->cval;
        if (d->vertical.taps64) { /* a float64 call: the same taps in float64 */
            for (size_t j = 0; j < MH_SEPFILTER_MAX_TAPS; ++j) t[k].vt64[j] = t[k].vt[j], t[k].ht64[j] = t[k].ht[j];
            t[k].d.vertical.taps64 = t[k].vt64, t[k].d.horizontal.taps64 = t[k].ht64;
        }
    }
    return seed % 5 == 4 ? 1 : seed % 3 == 0 ? 3 : 2; /* one term: mh_sepfilter's own bits */
}

/* mh_sepfilter_sum on one backend against its own mh_sepfilter of each term, added in the
 * output's type (numpy's `out += term`), bit for bit (NaN as values_differing takes it: a GPU's
 * float16 NaN is not the host's), nothing written past the output; each
 * case on `variant` where its row takes every term. Returns the cases run. */
static size_t check_sum(mh_context *ctx, int gpu, const char *variant, const problem *ps, size_t n)
{
    size_t ran = 0;
    for (size_t i = 0; i < n; ++i) {
        problem t[3];
        const size_t nterms = sum_terms(&ps[i], (unsigned)i, t);
        mh_sepfilter_desc terms[3];
        int taken = 1;
        for (size_t k = 0; k < nterms; ++k) {
            terms[k] = t[k].d;
            taken = taken && mh_sepfilter_supports(ctx, variant, &terms[k]) == MH_OK;
        }
        if (!taken) continue;
        const mh_sepfilter_desc *d = &terms[0];
        const size_t values = d->batch * d->rows * d->cols * d->channels, size = mh_dtype_size(d->out_type);
        void *in = case_input(&ps[i], (unsigned)i + 300), *want = malloc(values * size), *got = malloc(values * size + 64);
        void *x = test_alloc(gpu, values * mh_dtype_size(d->in_type)), *y = test_alloc(gpu, values * size + 64);
        test_put(gpu, x, in, values * mh_dtype_size(d->in_type));
        for (size_t k = 0; k < nterms; ++k) {
            CHECK(mh_sepfilter(ctx, variant, &terms[k], x, y) == MH_OK, "sum case %zu term %zu: %s", i, k,
                  mh_context_error(ctx));
            test_get(gpu, got, y, values * size);
            if (k == 0) memcpy(want, got, values * size);
            for (size_t v = 0; k && v < values; ++v) {
                if (mh_dtype_is_wide(d->out_type)) { /* numpy's `+=` in the type: wrapping integers */
                    mh_add_wide(want, got, v, d->out_type);
                    continue;
                }
                const float term = mh_load_value(got, v, d->out_type);
                mh_store_value(want, v, d->out_type, mh_cast_value(mh_load_value(want, v, d->out_type) + term, d->out_type));
            }
        }
        memset(got, 0x5a, values * size + 64);
        test_put(gpu, y, got, values * size + 64);
        CHECK(mh_sepfilter_sum(ctx, variant, terms, nterms, x, y) == MH_OK, "sum case %zu (%zu terms, %s): %s", i, nterms,
              variant, mh_context_error(ctx));
        test_get(gpu, got, y, values * size + 64);
        size_t first = 0;
        CHECK(values_differing(got, want, values, d->out_type, &first) == 0,
              "sum case %zu (%zu terms, %s -> %s, %s) differs from its terms added, first at %zu", i, nterms,
              mh_dtype_name(d->in_type), mh_dtype_name(d->out_type), variant, first);
        size_t past = 0;
        for (size_t b = 0; b < 64; ++b) past += ((unsigned char *)got)[values * size + b] != 0x5a;
        CHECK(past == 0, "sum case %zu wrote %zu bytes past its output", i, past);
        test_release(gpu, x), test_release(gpu, y), free(in), free(want), free(got);
        ++ran;
    }
    return ran;
}

/* mh_sepfilter_sum's refusals, each naming its argument, with the output untouched. */
static void check_sum_refusals(mh_context *ctx, int gpu)
{
    problem t[3];
    problem p = make(1, 8, 8, 1, MH_F32, MH_F32, 3, 5, 0, 3);
    bind(&p);
    sum_terms(&p, 1, t);
    mh_sepfilter_desc terms[MH_SEPFILTER_MAX_TERMS + 1];
    for (size_t k = 0; k <= MH_SEPFILTER_MAX_TERMS; ++k) terms[k] = t[k % 2].d;
    float poison[64];
    for (int i = 0; i < 64; ++i) poison[i] = -7.0f;
    void *x = test_alloc(gpu, 2 * 64 * 4), *y = test_alloc(gpu, 64 * 4); /* x holds an output past its first value */
    test_put(gpu, x, poison, sizeof poison), test_put(gpu, y, poison, sizeof poison);
    CHECK_REFUSED(ctx, mh_sepfilter_sum(ctx, NULL, NULL, 2, x, y), "terms is NULL");
    CHECK_REFUSED(ctx, mh_sepfilter_sum(ctx, NULL, terms, 0, x, y), "nterms = 0");
    CHECK_REFUSED(ctx, mh_sepfilter_sum(ctx, NULL, terms, MH_SEPFILTER_MAX_TERMS + 1, x, y), "nterms = 17");
    mh_sepfilter_desc bad[2] = {terms[0], terms[1]};
    bad[1].rows = 9; CHECK_REFUSED(ctx, mh_sepfilter_sum(ctx, NULL, bad, 2, x, y), "terms[1].rows = 9");
    bad[1] = terms[1], bad[1].out_type = MH_U8;
    CHECK_REFUSED(ctx, mh_sepfilter_sum(ctx, NULL, bad, 2, x, y), "terms[1] reads float32 into uint8");
    bad[1] = terms[1], bad[1].vertical.ntaps = 0;
    CHECK_REFUSED(ctx, mh_sepfilter_sum(ctx, NULL, bad, 2, x, y), "terms[1].vertical.ntaps = 0");
    bad[1] = terms[1], bad[1].vertical.origin = 3;
    CHECK_REFUSED(ctx, mh_sepfilter_sum(ctx, NULL, bad, 2, x, y), "terms[1].vertical.origin = 3");
    CHECK_REFUSED(ctx, mh_sepfilter_sum(ctx, "no-such-row", terms, 2, x, y), "terms[0]: variant = 'no-such-row'");
    CHECK_REFUSED(ctx, mh_sepfilter_sum(ctx, NULL, terms, 2, x, (float *)x + 1), "overlaps");
    if (gpu) { /* a row that takes the first term and refuses the second: nothing runs */
        bad[0] = terms[0], bad[1] = terms[1];
        bad[0].horizontal = (mh_sepfilter_axis){p.ht, 1, 0, MH_MODE_REFLECT, 1, NULL, 0}, p.ht[0] = 1.0f;
        CHECK(mh_sepfilter_supports(ctx, "lines", &bad[0]) == MH_OK, "lines refused the first term");
        CHECK(mh_sepfilter_sum(ctx, "lines", bad, 2, x, y) == MH_ERR_UNSUPPORTED &&
                  strstr(mh_context_error(ctx), "terms[1]: ") && strstr(mh_context_error(ctx), "lines refuses") &&
                  strstr(mh_context_error(ctx), "summed"),
              "lines took the summed second term: %s", mh_context_error(ctx));
    }
    float after[64];
    test_get(gpu, after, y, sizeof after);
    CHECK(memcmp(after, poison, sizeof after) == 0, "a refused sum wrote its output");
    test_release(gpu, x), test_release(gpu, y);
}

/* ---- reversed axes (mh_sepfilter_axis.reversed) ---------------------------------------------- */

/* An axis read reversed gives the bits of the same call with its taps reversed by hand and its
 * reversed flag clear: host taps (float32, and taps64 on a float64 call), device taps on a GPU (one
 * axis or both, each a part of the context's copy; in a sum of two terms, which walk would
 * otherwise run as a pair), the caller's taps unchanged; a flag other than 0 or 1 refused by name. */
static void check_reversed(mh_context *ctx, int gpu)
{
    static const float identity = 1.0f;
    for (int wide = 0; wide < 2; ++wide) {
        problem p = make(2, 37, 53, 1, wide ? MH_F64 : MH_F32, wide ? MH_F64 : MH_F32, 7, 4, 0, 31);
        p.d.vertical.origin = 2, p.d.horizontal.origin = -2, p.d.horizontal.mode = MH_MODE_WRAP;
        if (wide) {
            p.d.vertical.taps64 = p.vt64, p.d.horizontal.taps64 = p.ht64;
            for (size_t i = 0; i < MH_SEPFILTER_MAX_TAPS; ++i) p.vt64[i] = p.vt[i] * (1.0 + 1e-9), p.ht64[i] = p.ht[i] / 3.0;
        }
        problem byhand = p;
        for (size_t i = 0; i < 7; ++i) byhand.vt[i] = p.vt[6 - i], byhand.vt64[i] = p.vt64[6 - i];
        for (size_t i = 0; i < 4; ++i) byhand.ht[i] = p.ht[3 - i], byhand.ht64[i] = p.ht64[3 - i];
        bind(&p), bind(&byhand);
        p.d.vertical.reversed = p.d.horizontal.reversed = 1;
        const size_t values = 2 * 37 * 53, bytes = values * mh_dtype_size(p.d.out_type);
        void *in = wide ? wide_input(&p, 77) : input_for(&p, 77), *want = malloc(bytes), *got = malloc(bytes);
        void *d_in = test_alloc(gpu, values * mh_dtype_size(p.d.in_type)), *d_out = test_alloc(gpu, bytes);
        test_put(gpu, d_in, in, values * mh_dtype_size(p.d.in_type));
        const char *what = wide ? "float64" : "float32";
        CHECK(mh_sepfilter(ctx, NULL, &byhand.d, d_in, d_out) == MH_OK, "reversed by hand (%s): %s", what,
              mh_context_error(ctx));
        test_get(gpu, want, d_out, bytes);
        CHECK(mh_sepfilter(ctx, NULL, &p.d, d_in, d_out) == MH_OK, "reversed (%s): %s", what, mh_context_error(ctx));
        test_get(gpu, got, d_out, bytes);
        CHECK(memcmp(got, want, bytes) == 0, "reversed host taps (%s) differ from the taps reversed by hand", what);
        CHECK(p.vt[0] == byhand.vt[6] && p.ht[0] == byhand.ht[3], "the call changed the caller's taps (%s)", what);
        if (gpu && !wide) {
            float *d_taps = test_alloc(gpu, 11 * sizeof(float));
            test_put(gpu, d_taps, p.vt, 7 * sizeof(float)), test_put(gpu, d_taps + 7, p.ht, 4 * sizeof(float));
            mh_sepfilter_desc on_device = p.d;
            on_device.vertical.taps = d_taps, on_device.horizontal.taps = d_taps + 7;
            static const char *const both_axes[] = {"auto", "walk", "fused", "two-pass"}; /* walk reads them reversed */
            for (int r = 0; r < 4; ++r) {
                CHECK(mh_sepfilter(ctx, both_axes[r], &on_device, d_in, d_out) == MH_OK, "reversed device taps on %s: %s",
                      both_axes[r], mh_context_error(ctx));
                test_get(gpu, got, d_out, bytes);
                CHECK(memcmp(got, want, bytes) == 0, "reversed device taps (both axes) on %s differ from host taps",
                      both_axes[r]);
            }
            mh_sepfilter_desc column = on_device, column_byhand = byhand.d; /* the vertical axis alone: lines */
            column.horizontal = column_byhand.horizontal = (mh_sepfilter_axis){&identity, 1, 0, MH_MODE_REFLECT, 1, NULL, 0};
            CHECK(mh_sepfilter(ctx, NULL, &column_byhand, d_in, d_out) == MH_OK, "columns by hand: %s",
                  mh_context_error(ctx));
            test_get(gpu, want, d_out, bytes);
            CHECK(mh_sepfilter(ctx, "lines", &column, d_in, d_out) == MH_OK, "reversed device column taps on lines: %s",
                  mh_context_error(ctx));
            test_get(gpu, got, d_out, bytes);
            CHECK(memcmp(got, want, bytes) == 0, "reversed device taps on lines differ from host taps");
            CHECK(mh_sepfilter(ctx, NULL, &byhand.d, d_in, d_out) == MH_OK, "reversed by hand again: %s",
                  mh_context_error(ctx));
            test_get(gpu, want, d_out, bytes);
            mh_sepfilter_desc one = on_device, one_byhand = byhand.d;
            one.vertical = one_byhand.vertical = (mh_sepfilter_axis){p.vt, 1, 0, MH_MODE_REFLECT, 1, NULL, 0};
            p.vt[0] = 1.0f;
            one.order = one_byhand.order = MH_SEPFILTER_VERTICAL_FIRST;
            CHECK(mh_sepfilter(ctx, NULL, &one_byhand, d_in, d_out) == MH_OK, "one axis by hand: %s",
                  mh_context_error(ctx));
            test_get(gpu, want, d_out, bytes);
            CHECK(mh_sepfilter(ctx, NULL, &one, d_in, d_out) == MH_OK, "one reversed device axis: %s",
                  mh_context_error(ctx));
            test_get(gpu, got, d_out, bytes);
            CHECK(memcmp(got, want, bytes) == 0, "a reversed device axis (the rows alone) differs from host taps");
            float taps_after[11];
            test_get(gpu, taps_after, d_taps, sizeof taps_after);
            CHECK(taps_after[0] == byhand.vt[6] && taps_after[7] == byhand.ht[3], "the call changed the device taps");
            /* two equal terms that walk would run as a pair: each reversed first */
            mh_sepfilter_desc terms[2] = {on_device, on_device}, terms_byhand[2] = {byhand.d, byhand.d};
            CHECK(mh_sepfilter_sum(ctx, NULL, terms_byhand, 2, d_in, d_out) == MH_OK, "sum by hand: %s",
                  mh_context_error(ctx));
            test_get(gpu, want, d_out, bytes);
            CHECK(mh_sepfilter_sum(ctx, NULL, terms, 2, d_in, d_out) == MH_OK, "sum of reversed device terms: %s",
                  mh_context_error(ctx));
            test_get(gpu, got, d_out, bytes);
            CHECK(memcmp(got, want, bytes) == 0, "a sum of reversed device terms differs from host taps");
            test_release(gpu, d_taps);
        }
        if (!wide) {
            mh_sepfilter_desc bad = p.d;
            bad.horizontal.reversed = 2;
            CHECK_REFUSED(ctx, mh_sepfilter(ctx, NULL, &bad, d_in, d_out), "horizontal.reversed = 2");
        }
        test_release(gpu, d_in), test_release(gpu, d_out), free(in), free(want), free(got);
    }
}

/* ---- scipy's sums (MH_SEPFILTER_SUMS_SCIPY) ------------------------------------------------- */

/* Taps of scipy's kinds: box (1/k each, symmetric), a sampled Gaussian (symmetric), antisymmetric
 * about a nonzero centre, and neither (odd or even). */
static void scipy_taps(int kind, size_t k, double *w64, float *w)
{
    const double c = (double)(k / 2);
    double total = 0.0;
    for (size_t j = 0; j < k; ++j) {
        const double x = (double)j - c;
        w64[j] = kind == 0 ? 1.0 / (double)k : kind == 1 ? exp(-x * x / 8.0) : kind == 2 ? (x == 0 ? 0.1 : x / 7.0)
                                                                                          : 0.1 + 0.07 * (double)j;
        total += w64[j];
    }
    for (size_t j = 0; kind == 1 && j < k; ++j) w64[j] /= total;
    for (size_t j = 0; j < k; ++j) w[j] = (float)w64[j];
}

static size_t scipy_cases(problem *out, size_t max)
{
    static const size_t shapes[][4] = {{1, 1, 1, 1}, {1, 9, 1, 1}, {1, 37, 517, 1}, {2, 33, 70, 3}, {1, 300, 101, 1}};
    static const size_t taps[][2] = {{3, 3}, {5, 1}, {1, 9}, {17, 17}, {4, 7}, {41, 5}, {3, 65}};
    static const mh_dtype ins[] = {MH_I32, MH_I32, MH_F64, MH_I64, MH_U16};
    static const mh_dtype outs[] = {MH_I32, MH_U8, MH_F64, MH_I32, MH_I64};
    size_t n = 0;
    unsigned seed = 1300;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (size_t k = 0; k < sizeof taps / sizeof taps[0]; ++k, ++seed) {
            const size_t t = seed % 5;
            problem p = make(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], ins[t], outs[t], taps[k][0],
                             taps[k][1], 0, seed);
            scipy_taps((int)(seed % 4), taps[k][0], p.vt64, p.vt);
            scipy_taps((int)((seed / 4) % 4), taps[k][1], p.ht64, p.ht);
            p.d.vertical.taps64 = p.vt64, p.d.horizontal.taps64 = p.ht64;
            p.d.vertical.mode = modes[seed % 5], p.d.horizontal.mode = modes[(seed + 3) % 5];
            p.d.vertical.origin = seed % 3 == 2 ? -(long long)(taps[k][0] / 2) : 0;
            p.d.horizontal.origin = seed % 4 == 3 ? (long long)((taps[k][1] - 1) / 2) : 0;
            p.d.order = (mh_sepfilter_order)(seed % 2);
            p.d.cval = ins[t] == MH_F64 && seed % 3 == 0 ? NAN : 5.0;
            p.d.sums = MH_SEPFILTER_SUMS_SCIPY;
            if (n < max) out[n] = p, bind(&out[n]), ++n;
        }
    return n;
}

/* Case p's input: flat patches of 5 (a box's sums one rounding beside a whole number) beside
 * integers of up to 14 bits (doubles for a float64 input: the same values plus a fraction). */
static void *scipy_input(const problem *p, unsigned seed)
{
    const mh_sepfilter_desc *d = &p->d;
    const size_t n = d->batch * d->rows * d->cols * d->channels;
    void *in = malloc(n * mh_dtype_size(d->in_type));
    float *u = malloc(n * sizeof(float));
    mh_fill_uniform(u, n, seed, 1.0f);
    for (size_t i = 0; i < n; ++i) {
        const double v = (i / 7) % 3 == 0 ? 5.0 : round(fabs((double)u[i]) * 16383.0);
        mh_store_double(in, i, d->in_type, d->in_type == MH_F64 && i % 5 == 0 ? v + 0.3 : v);
    }
    free(u);
    return in;
}

/* The reference's result of case p (the passes in sequence, the first stored in the output's type). */
static double *scipy_reference(const problem *p, const void *in)
{
    const mh_sepfilter_desc *d = &p->d;
    const size_t n = d->batch * d->rows * d->cols * d->channels;
    double *x = malloc(n * sizeof(double)), *mid = malloc(n * sizeof(double)), *ref = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; ++i) x[i] = mh_load_double(in, i, d->in_type);
    const int first_vertical = d->order != MH_SEPFILTER_HORIZONTAL_FIRST;
    ref_pass(d, x, mid, first_vertical, REF_SCIPY);
    ref_pass(d, mid, ref, !first_vertical, REF_SCIPY);
    free(x), free(mid);
    return ref;
}

/* The CPU row on scipy's sums against the reference, bit for bit; the FMA sums differ on some
 * case (else these cases could not tell the orders apart); the refusals by name. */
static void run_cpu_scipy(mh_context *cpu)
{
    problem ps[40];
    const size_t n = scipy_cases(ps, 40);
    size_t apart = 0;
    for (size_t i = 0; i < n; ++i) {
        const mh_sepfilter_desc *d = &ps[i].d;
        const size_t values = d->batch * d->rows * d->cols * d->channels, size = mh_dtype_size(d->out_type);
        void *in = scipy_input(&ps[i], (unsigned)i + 40), *out = malloc(values * size);
        double *ref = scipy_reference(&ps[i], in);
        CHECK(mh_sepfilter(cpu, "cpu-omp", d, in, out) == MH_OK, "scipy case %zu: %s", i, mh_context_error(cpu));
        size_t bad = 0;
        for (size_t v = 0; v < values; ++v) {
            const double got = mh_load_double(out, v, d->out_type);
            if (!(got == ref[v]) && !(isnan(got) && isnan(ref[v])) && !bad++)
                fprintf(stderr, "scipy case %zu: value %zu is %.17g, scipy's %.17g (%s -> %s, taps %zu x %zu)\n", i,
                        v, got, ref[v], mh_dtype_name(d->in_type), mh_dtype_name(d->out_type), d->vertical.ntaps,
                        d->horizontal.ntaps);
        }
        CHECK(bad == 0, "scipy case %zu: %zu of %zu values differ from scipy's sums", i, bad, values);
        mh_sepfilter_desc fma_sums = *d;
        fma_sums.sums = MH_SEPFILTER_SUMS_FMA;
        CHECK(mh_sepfilter(cpu, "cpu-omp", &fma_sums, in, out) == MH_OK, "scipy case %zu (FMA)", i);
        for (size_t v = 0; v < values; ++v)
            if (mh_load_double(out, v, d->out_type) != ref[v] && !isnan(ref[v])) {
                ++apart;
                break;
            }
        free(in), free(out), free(ref);
    }
    CHECK(apart > 0, "no scipy case tells scipy's order from the FMA sums");
    mh_sepfilter_desc bad = ps[0].d;
    bad.sums = (mh_sepfilter_sums)2;
    int32_t x[9] = {0}, y[9];
    CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &bad, x, y), "sums = 2");
    bad.sums = MH_SEPFILTER_SUMS_SCIPY, bad.in_type = bad.out_type = MH_F32;
    CHECK(mh_sepfilter(cpu, NULL, &bad, x, y) == MH_ERR_UNSUPPORTED && strstr(mh_context_error(cpu), "sums = 1"),
          "scipy's sums on a float32 call: %s", mh_context_error(cpu));
}

/* ---- the types computed in float64 ---------------------------------------------------------- */

static const mh_dtype wide_types[] = {MH_F64, MH_I32, MH_U32, MH_I64, MH_U64};

/* Float64 calls (a wide type on either side): shapes off the tiles, taps 1 to 127, every order,
 * mode per axis and origins at their limits, with taps64 other than the float32 taps. Integer
 * cases (integer data of 20 bits and taps, every sum exact; taps of one sign into uint64, whose
 * wrapped negatives float64 would round) expect the reference exactly; float64 outputs of data
 * over sixty decades within float64 rounding of each output's own sum of |terms|. */
static size_t wide_cases(problem *out, size_t max)
{
    static const size_t shapes[][4] = {{1, 1, 1, 1}, {1, 9, 1, 1}, {2, 5, 3, 2}, {1, 37, 517, 1}, {3, 33, 200, 3},
                                       {1, 300, 101, 1}};
    static const size_t taps[][2] = {{1, 1}, {3, 3}, {4, 6}, {17, 17}, {1, 31}, {41, 64}, {127, 3}};
    size_t n = 0;
    unsigned seed = 900;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (size_t k = 0; k < sizeof taps / sizeof taps[0]; ++k, ++seed) {
            const int integer = seed % 2;
            const mh_dtype in = integer ? wide_types[seed % 5] : seed % 3 ? MH_F64 : MH_F32;
            const mh_dtype outt = integer ? wide_types[1 + (seed / 5) % 4] : seed % 4 == 3 ? MH_F32 : MH_F64;
            problem p = make(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], in, outt, taps[k][0], taps[k][1],
                             integer, seed);
            const int one_sign = in == MH_U64 || outt == MH_U64 || in == MH_U32 || outt == MH_U32;
            for (size_t j = 0; j < MH_SEPFILTER_MAX_TAPS; ++j) { /* float64 taps float32 does not hold */
                p.vt64[j] = integer ? (one_sign ? fabs(p.vt[j]) : p.vt[j]) : (double)p.vt[j] * (1.0 + 0x1p-40 * (double)j);
                p.ht64[j] = integer ? (one_sign ? fabs(p.ht[j]) : p.ht[j]) : (double)p.ht[j] * (1.0 - 0x1p-41 * (double)j);
            }
            p.d.vertical.taps64 = p.vt64, p.d.horizontal.taps64 = p.ht64;
            p.d.vertical.mode = modes[seed % 5], p.d.horizontal.mode = modes[(seed + 2) % 5];
            p.d.vertical.origin = seed % 3 ? -(long long)(taps[k][0] / 2) : (long long)((taps[k][0] - 1) / 2);
            p.d.horizontal.origin = seed % 4 < 2 ? 0 : (long long)((taps[k][1] - 1) / 2);
            p.d.order = (mh_sepfilter_order)(seed % 3);
            p.d.cval = seed % 7 == 0 ? NAN : integer ? 3.0 : 0.1; /* 0.1: not a float32 */
            if (integer && seed % 5 == 1) p.d.vertical.divisor = 3;
            if (n < max) out[n] = p, bind(&out[n]), ++n;
        }
    return n;
}

/* Case p's input: integers of 20 bits (0 up where either type is unsigned: no sum wraps), or doubles
 * over sixty decades. */
static void *wide_input(const problem *p, unsigned seed)
{
    const mh_sepfilter_desc *d = &p->d;
    const size_t n = d->batch * d->rows * d->cols * d->channels;
    void *in = malloc(n * mh_dtype_size(d->in_type));
    float *u = malloc(n * sizeof(float));
    mh_fill_uniform(u, n, seed, 1.0f);
    const int is_unsigned =
        d->in_type == MH_U32 || d->in_type == MH_U64 || d->out_type == MH_U32 || d->out_type == MH_U64;
    const int integer = d->out_type != MH_F32 && d->out_type != MH_F64; /* an integer case */
    for (size_t i = 0; i < n; ++i) {
        const double v = (double)u[i];
        if (integer || (d->in_type != MH_F64 && d->in_type != MH_F32))
            mh_store_double(in, i, d->in_type, round((is_unsigned ? fabs(v) : v) * 0x1p20));
        else if (d->in_type == MH_F64)
            ((double *)in)[i] = v * pow(10.0, (double)((int)(i * 7919 % 61) - 30));
        else
            ((float *)in)[i] = (float)(v * pow(10.0, (double)((int)(i * 7919 % 21) - 10)));
    }
    free(u);
    return in;
}

/* The CPU row on a float64 call against the reference: integer cases exactly, float outputs within
 * (taps + 4) 2^-53 of each output's own sum of |terms| (float32 outputs a float32 step more). */
static void check_cpu_wide(mh_context *cpu, const problem *p, const void *in, const char *what)
{
    const mh_sepfilter_desc *d = &p->d;
    const size_t n = d->batch * d->rows * d->cols * d->channels, size = mh_dtype_size(d->out_type);
    double *x = malloc(n * sizeof(double)), *mid = malloc(n * sizeof(double)), *ref = malloc(n * sizeof(double));
    double *m1 = malloc(n * sizeof(double)), *mag = malloc(n * sizeof(double));
    void *out = malloc(n * size);
    for (size_t i = 0; i < n; ++i) x[i] = mh_load_double(in, i, d->in_type);
    const int first_vertical = d->order != MH_SEPFILTER_HORIZONTAL_FIRST, sum = d->order == MH_SEPFILTER_SUM;
    const mh_sepfilter_axis *first = first_vertical ? &d->vertical : &d->horizontal;
    const mh_sepfilter_axis *second = first_vertical ? &d->horizontal : &d->vertical;
    ref_pass(d, x, mid, first_vertical, REF_ORDER);
    ref_pass(d, sum ? x : mid, ref, !first_vertical, REF_ORDER);
    ref_pass(d, x, m1, first_vertical, REF_MAGNITUDE);
    ref_pass(d, sum ? x : m1, mag, !first_vertical, REF_MAGNITUDE);
    for (size_t i = 0; sum && i < n; ++i) ref[i] = c_cast(mid[i] + ref[i], d->out_type), mag[i] += m1[i];
    const int integer = d->out_type != MH_F32 && d->out_type != MH_F64;
    CHECK(mh_sepfilter(cpu, "sepfilter/cpu-omp", d, in, out) == MH_OK, "%s: %s", what, mh_context_error(cpu));
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        const double got = mh_load_double(out, i, d->out_type);
        const double tol = integer ? 0.0
                                   : (double)(first->ntaps + second->ntaps + 4) * 0x1p-53 * mag[i] +
                                         (d->out_type == MH_F32 ? fabs(ref[i]) * 0x1p-23 : 0.0);
        if (!(got == ref[i]) && !(fabs(got - ref[i]) <= tol) && !(isnan(got) && isnan(ref[i])) && !bad++)
            fprintf(stderr, "%s: value %zu is %.17g, the reference %.17g (tolerance %g, %s -> %s)\n", what, i, got,
                    ref[i], tol, mh_dtype_name(d->in_type), mh_dtype_name(d->out_type));
    }
    CHECK(bad == 0, "%s: %zu of %zu values differ from the reference", what, bad, n);
    free(x), free(mid), free(ref), free(m1), free(mag), free(out);
}

static void run_cpu_wide(mh_context *cpu)
{
    problem ps[64];
    const size_t n = wide_cases(ps, 64);
    for (size_t i = 0; i < n; ++i) {
        void *in = wide_input(&ps[i], (unsigned)i + 700);
        char what[64];
        snprintf(what, sizeof what, "float64 case %zu", i);
        check_cpu_wide(cpu, &ps[i], in, what);
        free(in);
    }
    CHECK(check_sum(cpu, 0, "cpu-omp", ps, n) == n, "mh_sepfilter_sum: a float64 case the CPU row refused");
    /* a host taps64 is read; device memory is refused on a GPU context (run_gpu_wide) */
    size_t c = 0;
    while (c + 1 < n && !(ps[c].d.out_type == MH_F64 && ps[c].d.rows >= 5 && ps[c].d.vertical.ntaps > 1 &&
                          !isnan(ps[c].d.cval)))
        ++c;
    problem p = ps[c];
    bind(&p);
    double shifted[MH_SEPFILTER_MAX_TAPS];
    for (size_t j = 0; j < MH_SEPFILTER_MAX_TAPS; ++j) shifted[j] = p.vt64[j] * 2.0;
    void *in = wide_input(&p, 5);
    const size_t size = mh_dtype_size(p.d.out_type), values = p.d.batch * p.d.rows * p.d.cols * p.d.channels;
    void *a = malloc(values * size), *b = malloc(values * size);
    CHECK(mh_sepfilter(cpu, NULL, &p.d, in, a) == MH_OK, "taps64 case: %s", mh_context_error(cpu));
    p.d.vertical.taps64 = shifted;
    CHECK(mh_sepfilter(cpu, NULL, &p.d, in, b) == MH_OK && memcmp(a, b, values * size) != 0,
          "the float64 call did not read taps64");
    free(in), free(a), free(b);
}

static void run_cpu(void)
{
    mh_context *cpu;
    CHECK(mh_context_create(&cpu, MH_CPU) == MH_OK, "CPU context");
    problem ps[96];
    const size_t n = cases(ps, 96);
    size_t checked = 0;
    for (size_t i = 0; i < n; ++i) {
        void *in = input_for(&ps[i], (unsigned)i + 100);
        char what[256];
        const mh_variant_info *v;
        mh_sepfilter_select(cpu, &ps[i].d, &v);
        snprintf(what, sizeof what, "case %zu (%s)", i, v ? v->name : "?");
        checked += (size_t)check_cpu(cpu, &ps[i], in, what);
        free(in);
    }
    CHECK(checked >= 24, "only %zu of %zu cases had a reference to compare with", checked, n);
    CHECK(check_sum(cpu, 0, "cpu-omp", ps, n) == n, "mh_sepfilter_sum: a case the CPU row refused");
    check_sum_refusals(cpu, 0);
    check_reversed(cpu, 0);
    /* refusals, each naming its argument */
    problem p = make(1, 8, 8, 3, MH_U8, MH_U8, 3, 3, 0, 7);
    bind(&p);
    unsigned char img[8 * 8 * 3] = {0}, res[8 * 8 * 3];
    mh_sepfilter_desc d = p.d;
    d.channels = 5; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "channels = 5");
    d = p.d, d.channels = 0; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "channels = 0");
    d = p.d, d.vertical.ntaps = 128; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "vertical.ntaps = 128");
    d = p.d, d.horizontal.ntaps = 0; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "horizontal.ntaps = 0");
    d = p.d, d.vertical.origin = 2; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "vertical.origin = 2");
    d = p.d, d.horizontal.origin = -2; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "horizontal.origin = -2");
    d = p.d, d.vertical.mode = (mh_mode)9; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "vertical.mode = 9");
    d = p.d, d.horizontal.divisor = 0; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "divisor = 0");
    d = p.d, d.in_type = (mh_dtype)11; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "in_type = 11");
    d = p.d, d.in_type = MH_F16, d.out_type = MH_I32;
    CHECK(mh_sepfilter(cpu, NULL, &d, img, res) == MH_ERR_UNSUPPORTED &&
              strstr(mh_context_error(cpu), "float16 beside a type computed in float64"),
          "float16 into int32 taken: %s", mh_context_error(cpu));
    d = p.d, d.out_type = (mh_dtype)40; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "out_type = 40");
    d = p.d, d.order = (mh_sepfilter_order)3; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "order = 3");
    d = p.d, d.vertical.taps = NULL; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "vertical.taps is NULL");
    d = p.d, d.batch = SIZE_MAX / 2; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "overflows");
    CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, NULL, img, res), "desc is NULL");
    CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &p.d, img, img + 3), "overlap");
    memset(res, 0x5a, sizeof res);
    d = p.d, d.rows = 0; CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &d, img, res), "rows = 0");
    CHECK(res[0] == 0x5a && res[191] == 0x5a, "a refused call wrote its output");
    run_cpu_wide(cpu);
    run_cpu_scipy(cpu);
    mh_context_destroy(cpu);
}

/* One GPU row on desc (device buffers d_in, d_out of out_bytes + 64) against want, bit for bit,
 * with nothing written past the output. */
static void check_gpu_row(mh_context *gpu, const char *variant, const mh_sepfilter_desc *desc, const char *what,
                          size_t i, const void *d_in, void *d_out, const void *want, void *got)
{
    const size_t values = desc->batch * desc->rows * desc->cols * desc->channels;
    const size_t out_bytes = values * mh_dtype_size(desc->out_type);
    CHECK_CUDA(cudaMemset(d_out, 0xa5, out_bytes + 64));
    const mh_status s = mh_sepfilter(gpu, variant, desc, d_in, d_out);
    CHECK(s == MH_OK, "case %zu %s%s: %s", i, variant, what, mh_context_error(gpu));
    if (s != MH_OK) return;
    unsigned char tail[64];
    CHECK_CUDA(cudaMemcpy(got, d_out, out_bytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(tail, (char *)d_out + out_bytes, 64, cudaMemcpyDeviceToHost));
    size_t first = 0;
    const size_t bad = values_differing(got, want, values, desc->out_type, &first);
    CHECK(bad == 0, "case %zu %s%s (%zu x %zu x %zu x %zu %s -> %s, taps %zu x %zu): %zu of %zu values differ from the "
          "CPU row's, first at %zu: %g, expected %g", i, variant, what, desc->batch, desc->rows, desc->cols,
          desc->channels, mh_dtype_name(desc->in_type), mh_dtype_name(desc->out_type), desc->vertical.ntaps,
          desc->horizontal.ntaps, bad, values, first, mh_load_double(got, first, desc->out_type),
          mh_load_double(want, first, desc->out_type));
    size_t written = 0;
    for (int t = 0; t < 64; ++t) written += tail[t] != 0xa5;
    CHECK(written == 0, "case %zu %s%s: %zu bytes written past the output", i, variant, what, written);
}

/* desc, a filter of one axis, on the CPU row and through auto on the GPU, which must run `row`;
 * bit for bit. */
static void check_gpu_one_axis(mh_context *cpu, mh_context *gpu, const mh_sepfilter_desc *desc, const void *in,
                               const void *d_in, void *d_out, void *want, void *got, const char *what, const char *row)
{
    const mh_variant_info *chosen = NULL;
    CHECK(mh_sepfilter(cpu, "cpu-omp", desc, in, want) == MH_OK, "%s on the CPU: %s", what, mh_context_error(cpu));
    CHECK(mh_sepfilter_select(gpu, desc, &chosen) == MH_OK && chosen && !strcmp(chosen->name, row),
          "%s: auto runs %s, not %s", what, chosen ? chosen->name : "nothing", row);
    check_gpu_row(gpu, "auto", desc, what, 0, d_in, d_out, want, got);
}

/* Case i's filter reduced to one axis (the other the single tap 1) in either pass order or
 * summed (which lines refuses): down the columns lines, with host and device taps, and fused,
 * against the CPU row, and auto's pick past 64 taps, which lines refuses by name;
 * along the rows, which lines refuses, auto's pick. */
static void check_one_axis(mh_context *cpu, mh_context *gpu, const mh_sepfilter_desc *d, int vertical, size_t i,
                           const void *in, const void *d_in, void *d_out, const float *d_taps, void *want, void *got)
{
    static const float one = 1.0f;
    mh_sepfilter_desc line = *d;
    mh_sepfilter_axis *kept = vertical ? &line.vertical : &line.horizontal;
    mh_sepfilter_axis *other = vertical ? &line.horizontal : &line.vertical;
    *other = (mh_sepfilter_axis){&one, 1, 0, other->mode, 1, NULL, 0};
    line.order = (i + (size_t)vertical) % 3 == 2 ? MH_SEPFILTER_SUM : (mh_sepfilter_order)((i + (size_t)vertical) % 2);
    const char *what = vertical ? " (down the columns)" : " (along the rows)";
    /* the kept axis the single tap 1 as well: both axes are the identity */
    const int identity = kept->ntaps == 1 && kept->taps[0] == 1.0f && kept->divisor == 1;
    if (line.order == MH_SEPFILTER_SUM) { /* refused as a sum, or along the rows before that */
        CHECK(mh_sepfilter(gpu, "lines", &line, d_in, d_out) == MH_ERR_UNSUPPORTED &&
                  strstr(mh_context_error(gpu), vertical || identity ? "sum of two" : "vertical axis alone"),
              "case %zu%s: lines took a summed filter: %s", i, what, mh_context_error(gpu));
        line.order = vertical ? MH_SEPFILTER_VERTICAL_FIRST : MH_SEPFILTER_HORIZONTAL_FIRST;
    }
    CHECK(mh_sepfilter(cpu, "cpu-omp", &line, in, want) == MH_OK, "case %zu%s on the CPU: %s", i, what,
          mh_context_error(cpu));
    if (!vertical) { /* along the rows: fused's tiles, or two-pass where they do not fit */
        CHECK(identity || (mh_sepfilter(gpu, "lines", &line, d_in, d_out) == MH_ERR_UNSUPPORTED &&
                           strstr(mh_context_error(gpu), "vertical axis alone")),
              "case %zu%s: lines took it", i, what);
        check_gpu_row(gpu, "auto", &line, what, i, d_in, d_out, want, got);
        return;
    }
    if (kept->ntaps > 64) { /* past lines' windows: fused or two-pass runs it */
        CHECK(mh_sepfilter(gpu, "lines", &line, d_in, d_out) == MH_ERR_UNSUPPORTED &&
                  strstr(mh_context_error(gpu), "at most 64 taps"),
              "case %zu%s: lines took %zu taps", i, what, kept->ntaps);
        check_gpu_row(gpu, "auto", &line, what, i, d_in, d_out, want, got);
        return;
    }
    const mh_variant_info *chosen = NULL;
    CHECK(mh_sepfilter_select(gpu, &line, &chosen) == MH_OK && chosen && !strcmp(chosen->name, "sepfilter/lines"),
          "case %zu%s: auto runs %s on a filter of one axis", i, what, chosen ? chosen->name : "nothing");
    check_gpu_row(gpu, "lines", &line, what, i, d_in, d_out, want, got);
    kept->taps = vertical ? d_taps : d_taps + MH_SEPFILTER_MAX_TAPS;
    check_gpu_row(gpu, "lines", &line, vertical ? " (down the columns, device taps)" : " (along the rows, device taps)",
                  i, d_in, d_out, want, got);
    check_gpu_row(gpu, "fused", &line, what, i, d_in, d_out, want, got);
    CHECK(mh_sepfilter(gpu, "fused64", &line, d_in, d_out) == MH_ERR_UNSUPPORTED &&
              strstr(mh_context_error(gpu), "computes in float32"),
          "case %zu%s: fused64 took a call computed in float32: %s", i, what, mh_context_error(gpu));
}

/* walk on case i, host and device taps, where it takes it (float32 of one channel, up to 32 taps
 * a pass); its refusal, naming what it takes, where not. */
static void check_walk_case(mh_context *gpu, const mh_sepfilter_desc *d, const mh_sepfilter_desc *on_device, size_t i,
                            const void *d_in, void *d_out, const void *want, void *got)
{
    const int f32 = d->in_type == MH_F32 && d->out_type == MH_F32 && d->channels == 1;
    const int fits = d->vertical.ntaps <= 32 && d->horizontal.ntaps <= 32;
    if (!f32 || !fits) {
        CHECK(mh_sepfilter(gpu, "walk", d, d_in, d_out) == MH_ERR_UNSUPPORTED &&
                  strstr(mh_context_error(gpu), f32 ? "at most 32 taps" : "float32 images of one channel"),
              "case %zu: walk took %s %zu channels, %zu x %zu taps: %s", i, mh_dtype_name(d->in_type), d->channels,
              d->vertical.ntaps, d->horizontal.ntaps, mh_context_error(gpu));
        return;
    }
    check_gpu_row(gpu, "walk", d, "", i, d_in, d_out, want, got);
    check_gpu_row(gpu, "walk", on_device, " (device taps)", i, d_in, d_out, want, got);
}

/* An axis of host taps that is the single tap 1 (mh_sepfilter_is_identity's rule). */
static int is_identity(const mh_sepfilter_axis *x)
{
    return x->ntaps == 1 && x->divisor == 1 && x->taps[0] == 1.0f && (!x->taps64 || x->taps64[0] == 1.0);
}

/* Whether tiles takes d (host taps): float32 gray, one pass after the other in either order, one
 * count of 2 to 33 taps on both axes, a horizontal origin a multiple of 4. */
static int tiles_takes(const mh_sepfilter_desc *d)
{
    return d->in_type == MH_F32 && d->out_type == MH_F32 && d->channels == 1 && d->order != MH_SEPFILTER_SUM &&
           d->vertical.ntaps == d->horizontal.ntaps &&
           d->vertical.ntaps >= 2 && d->vertical.ntaps <= 33 && d->horizontal.origin % 4 == 0;
}

/* tiles on case i where it takes it, against the CPU row bit for bit; its refusal, naming what it
 * takes, where not, and of device taps always. */
static void check_tiles_case(mh_context *gpu, const mh_sepfilter_desc *d, const mh_sepfilter_desc *on_device, size_t i,
                             const void *d_in, void *d_out, const void *want, void *got)
{
    CHECK(mh_sepfilter(gpu, "tiles", on_device, d_in, d_out) == MH_ERR_UNSUPPORTED,
          "case %zu: tiles took device taps", i);
    if (tiles_takes(d)) {
        check_gpu_row(gpu, "tiles", d, "", i, d_in, d_out, want, got);
        return;
    }
    const int one_axis = is_identity(&d->vertical) || is_identity(&d->horizontal);
    const size_t k = d->vertical.ntaps;
    const char *reason = d->order == MH_SEPFILTER_SUM || one_axis ? "one after the other"
                         : k != d->horizontal.ntaps || k < 2 || k > 33 ? "one count of taps, 2 to 33"
                                                                        : "multiples of 4";
    CHECK(mh_sepfilter(gpu, "tiles", d, d_in, d_out) == MH_ERR_UNSUPPORTED && strstr(mh_context_error(gpu), reason),
          "case %zu: tiles took order %d, %zu x %zu taps, horizontal origin %lld: %s", i, (int)d->order,
          d->vertical.ntaps, d->horizontal.ntaps, (long long)d->horizontal.origin, mh_context_error(gpu));
}

/* walk and tiles against the CPU row on float32 images of one channel: every order, mode per
 * axis, origins at both limits, cval NaN and not, divisors; shapes off their 128 columns, walk's
 * 16-row steps and tiles' 32-row tiles, stacks (one of 65537 images), and images of several
 * segments (rows a block walks) and column tiles. auto picks tiles where it takes the call, else
 * walk for two axes of at most sepfilter_walk_max_taps a pass and along the rows alone, fused for
 * the others. */
static void check_walk(mh_context *cpu, mh_context *gpu)
{
    static const size_t shapes[][3] = {{1, 1, 1}, {1, 9, 1}, {1, 1, 7}, {3, 5, 3}, {1, 37, 517}, {1, 300, 101},
                                       {2, 64, 192}, {1, 1000, 300}, {1, 129, 2051}, {1, 4099, 1027},
                                       {65537, 1, 2}}; /* the last: two launches (gridDim.z holds 65535) */
    static const size_t taps[][2] = {{3, 3}, {5, 5}, {17, 17}, {4, 6}, {32, 2}, {1, 31}, {9, 1}, {32, 32}, {2, 2},
                                     {33, 33}};
    unsigned seed = 500;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (size_t k = 0; k < sizeof taps / sizeof taps[0]; ++k, ++seed) {
            const size_t values = shapes[s][0] * shapes[s][1] * shapes[s][2];
            if (values > test_max_n() && values > 64) continue;
            problem p = make(shapes[s][0], shapes[s][1], shapes[s][2], 1, MH_F32, MH_F32, taps[k][0], taps[k][1],
                             seed % 3 == 0, seed);
            bind(&p);
            p.d.vertical.mode = modes[seed % 5], p.d.horizontal.mode = modes[(seed / 5 + seed) % 5];
            p.d.vertical.origin = seed % 2 ? -(long long)(taps[k][0] / 2) : (long long)((taps[k][0] - 1) / 2);
            p.d.horizontal.origin = seed % 4 < 2 ? 0 : -(long long)(taps[k][1] / 2);
            p.d.order = (mh_sepfilter_order)(seed % 3);
            p.d.cval = seed % 7 == 0 ? NAN : -1.5f;
            if (seed % 5 == 1) p.d.horizontal.divisor = 5;
            if (seed % 5 == 2) p.d.vertical.divisor = 3;
            void *in = input_for(&p, seed), *want = malloc(values * 4), *got = malloc(values * 4), *d_in, *d_out;
            float *d_taps;
            CHECK_CUDA(cudaMalloc(&d_in, values * 4)); CHECK_CUDA(cudaMalloc(&d_out, values * 4 + 64));
            CHECK_CUDA(cudaMalloc((void **)&d_taps, 128 * sizeof(float)));
            CHECK_CUDA(cudaMemcpy(d_in, in, values * 4, cudaMemcpyHostToDevice));
            CHECK_CUDA(cudaMemcpy(d_taps, p.vt, taps[k][0] * sizeof(float), cudaMemcpyHostToDevice));
            CHECK_CUDA(cudaMemcpy(d_taps + 64, p.ht, taps[k][1] * sizeof(float), cudaMemcpyHostToDevice));
            CHECK(mh_sepfilter(cpu, "cpu-omp", &p.d, in, want) == MH_OK, "walk case %zu on the CPU: %s", (size_t)seed,
                  mh_context_error(cpu));
            mh_sepfilter_desc on_device = p.d;
            on_device.vertical.taps = d_taps, on_device.horizontal.taps = d_taps + 64;
            check_walk_case(gpu, &p.d, &on_device, seed, d_in, d_out, want, got);
            check_tiles_case(gpu, &p.d, &on_device, seed, d_in, d_out, want, got);
            const mh_variant_info *chosen = NULL;
            const int two_axes = !(p.d.horizontal.ntaps == 1 && p.d.horizontal.taps[0] == 1.0f &&
                                   p.d.horizontal.divisor == 1);
            /* auto's rule: tiles where it takes the call; walk for the rows alone (the vertical axis the
             * identity, passes not summed), else walk within sepfilter_walk_max_taps a pass and fused
             * past it */
            const mh_auto_rules *r = gpu->rules;
            const int rows_alone = p.d.order != MH_SEPFILTER_SUM && p.d.vertical.ntaps == 1 &&
                                   p.d.vertical.taps[0] == 1.0f && p.d.vertical.divisor == 1;
            const int short_taps = taps[k][0] <= (size_t)r->sepfilter_walk_max_taps &&
                                   taps[k][1] <= (size_t)r->sepfilter_walk_max_taps;
            const char *expected = tiles_takes(&p.d)            ? "sepfilter/tiles"
                                   : rows_alone || short_taps ? "sepfilter/walk"
                                                              : "sepfilter/fused";
            CHECK(!two_axes || (mh_sepfilter_select(gpu, &p.d, &chosen) == MH_OK && chosen &&
                                !strcmp(chosen->name, expected)),
                  "walk case %zu: auto runs %s, not %s", (size_t)seed, chosen ? chosen->name : "nothing", expected);
            cudaFree(d_in), cudaFree(d_out), cudaFree(d_taps), free(in), free(want), free(got);
        }
}

/* Two terms of one geometry in the vertical-first order (gaussian_laplace's: walk runs them in one
 * launch, mh_sepfilter_walk_pairs) through mh_sepfilter_sum on walk and auto, against each term on
 * walk added as the output's `+=` adds, bit for bit, nothing written past the output: shapes off
 * walk's 128 columns and 16-row steps, a stack, every mode, origins, cval NaN and not, divisors,
 * host and device taps; and a pair walk must not merge (other origins) the same way. */
static void check_walk_pairs(mh_context *gpu)
{
    static const size_t shapes[][3] = {{1, 1, 1}, {1, 5, 3}, {1, 37, 517}, {3, 129, 131}, {1, 300, 1001}, {1, 1000, 257}};
    static const size_t taps[][2] = {{3, 3}, {17, 17}, {9, 5}, {32, 32}, {2, 7}};
    unsigned seed = 900;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (size_t k = 0; k < sizeof taps / sizeof taps[0]; ++k, ++seed) {
            const size_t values = shapes[s][0] * shapes[s][1] * shapes[s][2];
            problem t[2];
            for (int j = 0; j < 2; ++j) {
                t[j] = make(shapes[s][0], shapes[s][1], shapes[s][2], 1, MH_F32, MH_F32, taps[k][0], taps[k][1], 0,
                            seed + 50 * (unsigned)j);
                bind(&t[j]);
                t[j].d.vertical.mode = modes[seed % 5], t[j].d.horizontal.mode = modes[(seed / 5 + seed) % 5];
                t[j].d.vertical.origin = seed % 2 ? -(long long)(taps[k][0] / 2) : (long long)((taps[k][0] - 1) / 2);
                t[j].d.horizontal.origin = seed % 4 < 2 ? 0 : -(long long)(taps[k][1] / 2);
                t[j].d.order = MH_SEPFILTER_VERTICAL_FIRST;
                t[j].d.cval = seed % 7 == 0 ? NAN : -1.5f;
                if (seed % 5 == 1) t[j].d.horizontal.divisor = 5;
            }
            const int merged = seed % 6 != 5; /* else the second term's origin differs: two launches and an add */
            if (!merged) t[1].d.vertical.origin = t[0].d.vertical.origin == 0 ? -(long long)(taps[k][0] / 2) : 0;
            void *in = input_for(&t[0], seed), *want = malloc(values * 4), *got = malloc(values * 4 + 64), *d_in, *d_out;
            float *d_taps;
            CHECK_CUDA(cudaMalloc(&d_in, values * 4)); CHECK_CUDA(cudaMalloc(&d_out, values * 4 + 64));
            CHECK_CUDA(cudaMalloc((void **)&d_taps, 64 * sizeof(float)));
            CHECK_CUDA(cudaMemcpy(d_in, in, values * 4, cudaMemcpyHostToDevice));
            CHECK_CUDA(cudaMemcpy(d_taps, t[1].vt, 32 * sizeof(float), cudaMemcpyHostToDevice));
            CHECK_CUDA(cudaMemcpy(d_taps + 32, t[1].ht, 32 * sizeof(float), cudaMemcpyHostToDevice));
            for (int j = 0; j < 2; ++j) {
                CHECK(mh_sepfilter(gpu, "walk", &t[j].d, d_in, d_out) == MH_OK, "walk pair %u term %d: %s", seed, j,
                      mh_context_error(gpu));
                CHECK_CUDA(cudaMemcpy(j ? got : want, d_out, values * 4, cudaMemcpyDeviceToHost));
                for (size_t v = 0; j && v < values; ++v) ((float *)want)[v] = ((float *)want)[v] + ((float *)got)[v];
            }
            mh_sepfilter_desc terms[2] = {t[0].d, t[1].d};
            for (int pass = 0; pass < 3; ++pass) {
                const char *variant = pass == 1 ? "auto" : "walk";
                if (pass == 2) /* the second term's taps on the device */
                    terms[1].vertical.taps = d_taps, terms[1].horizontal.taps = d_taps + 32;
                CHECK_CUDA(cudaMemset(d_out, 0x5a, values * 4 + 64));
                CHECK(mh_sepfilter_sum(gpu, variant, terms, 2, d_in, d_out) == MH_OK, "walk pair %u (%s): %s", seed,
                      variant, mh_context_error(gpu));
                CHECK_CUDA(cudaMemcpy(got, d_out, values * 4 + 64, cudaMemcpyDeviceToHost));
                size_t first = 0, past = 0;
                CHECK(values_differing(got, want, values, MH_F32, &first) == 0,
                      "walk pair %u (%s, %zu x %zu x %zu, %zu x %zu taps, %s) differs from its terms added, first at %zu",
                      seed, variant, shapes[s][0], shapes[s][1], shapes[s][2], taps[k][0], taps[k][1],
                      merged ? "one launch" : "two", first);
                for (size_t b = 0; b < 64; ++b) past += ((unsigned char *)got)[values * 4 + b] != 0x5a;
                CHECK(past == 0, "walk pair %u wrote %zu bytes past its output", seed, past);
            }
            cudaFree(d_in), cudaFree(d_out), cudaFree(d_taps), free(in), free(want), free(got);
        }
}

/* A case on the device: its input (in_bytes) copied to d_in, d_out of out_bytes and 64 bytes past
 * them, and both axes' float32 taps in d_taps (the vertical's, then MH_SEPFILTER_MAX_TAPS on the
 * horizontal's). */
static void put_case(const problem *p, const void *in, size_t in_bytes, size_t out_bytes, void **d_in, void **d_out,
                     float **d_taps)
{
    CHECK_CUDA(cudaMalloc(d_in, in_bytes + 1)); CHECK_CUDA(cudaMalloc(d_out, out_bytes + 64));
    CHECK_CUDA(cudaMalloc((void **)d_taps, 2 * MH_SEPFILTER_MAX_TAPS * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(*d_in, in, in_bytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(*d_taps, p->vt, MH_SEPFILTER_MAX_TAPS * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(*d_taps + MH_SEPFILTER_MAX_TAPS, p->ht, MH_SEPFILTER_MAX_TAPS * sizeof(float),
                          cudaMemcpyHostToDevice));
}

/* fused64 on float64 case i: bit for bit where it takes it (passes in sequence, up to 64 taps a
 * pass past an identity second pass, host taps, a tile that fits shared memory), and auto's pick
 * there; refused by name where it does not. */
static void check_fused64(mh_context *gpu, const mh_sepfilter_desc *d, int host_taps, const char *what, size_t i,
                          const void *d_in, void *d_out, const void *want, void *got)
{
    const int vfirst = d->order != MH_SEPFILTER_HORIZONTAL_FIRST, summed = d->order == MH_SEPFILTER_SUM;
    const mh_sepfilter_axis *second = vfirst ? &d->horizontal : &d->vertical;
    const int single = host_taps && !summed && is_identity(second), kv = !vfirst && single ? 1 : (int)d->vertical.ntaps,
              kh = vfirst && single ? 1 : (int)d->horizontal.ntaps;
    const char *refusal = summed       ? "not summed"
                          : !host_taps ? "float64 taps from the host"
                          : kv > 64 || kh > 64 ? "at most 64 taps a pass"
                                               : NULL;
    if (refusal) {
        CHECK(mh_sepfilter(gpu, "fused64", d, d_in, d_out) == MH_ERR_UNSUPPORTED && strstr(mh_context_error(gpu), refusal),
              "float64 case %zu%s: fused64 did not refuse it (%s): %s", i, what, refusal, mh_context_error(gpu));
        return;
    }
    const int large_tile = d->channels > 1 && (kv > 32 || kh > 32); /* may not fit shared memory */
    if (large_tile && mh_sepfilter_supports(gpu, "fused64", d) == MH_ERR_UNSUPPORTED) {
        CHECK(strstr(mh_context_error(gpu), "shared memory"), "float64 case %zu%s: fused64 refused it: %s", i, what,
              mh_context_error(gpu));
        return;
    }
    check_gpu_row(gpu, "fused64", d, what, i, d_in, d_out, want, got);
    const mh_variant_info *chosen = NULL;
    const char *expected = "sepfilter/fused64"; /* auto's first for a call computed in float64 it takes */
    CHECK(mh_sepfilter_select(gpu, d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, expected),
          "float64 case %zu%s: auto runs %s, not %s", i, what, chosen ? chosen->name : "nothing", expected);
}

/* The float64 calls on the GPU against the CPU row bit for bit (both sum each output's taps in
 * order with fma in double and cast alike): two-pass and auto on every case, with host taps64 and
 * with device float32 taps (widened by the kernels as the CPU row widens them), lines on each case
 * reduced to the vertical axis; fused and walk refuse them by name, a device taps64 is refused,
 * and mh_sepfilter_sum adds float64 terms in the output's arithmetic. */
static void run_gpu_wide(mh_context *cpu, mh_context *gpu)
{
    problem ps[64];
    const size_t n = wide_cases(ps, 64);
    static const float one = 1.0f;
    for (size_t i = 0; i < n; ++i) {
        const mh_sepfilter_desc *d = &ps[i].d;
        const size_t values = d->batch * d->rows * d->cols * d->channels;
        const size_t in_bytes = values * mh_dtype_size(d->in_type), out_bytes = values * mh_dtype_size(d->out_type);
        void *in = wide_input(&ps[i], (unsigned)i + 700), *want = malloc(out_bytes), *got = malloc(out_bytes);
        void *d_in, *d_out;
        float *d_taps;
        put_case(&ps[i], in, in_bytes, out_bytes, &d_in, &d_out, &d_taps);
        CHECK(mh_sepfilter(cpu, "cpu-omp", d, in, want) == MH_OK, "float64 case %zu on the CPU: %s", i,
              mh_context_error(cpu));
        check_gpu_row(gpu, "two-pass", d, " (float64)", i, d_in, d_out, want, got);
        check_gpu_row(gpu, "auto", d, " (float64)", i, d_in, d_out, want, got);
        check_fused64(gpu, d, 1, " (float64)", i, d_in, d_out, want, got);
        static const char *const float32_rows[] = {"fused", "walk"};
        for (int r = 0; r < 2; ++r)
            CHECK(mh_sepfilter(gpu, float32_rows[r], d, d_in, d_out) == MH_ERR_UNSUPPORTED &&
                      (strstr(mh_context_error(gpu), "computes in float64") ||
                       strstr(mh_context_error(gpu), "float32 images of one channel")),
                  "float64 case %zu: %s took it: %s", i, float32_rows[r], mh_context_error(gpu));
        /* the float32 taps widened: on the host (taps64 NULL) and on the device */
        mh_sepfilter_desc widened = *d, on_device = *d;
        widened.vertical.taps64 = widened.horizontal.taps64 = NULL;
        on_device.vertical.taps = d_taps, on_device.horizontal.taps = d_taps + MH_SEPFILTER_MAX_TAPS;
        on_device.vertical.taps64 = on_device.horizontal.taps64 = NULL;
        CHECK(mh_sepfilter(cpu, "cpu-omp", &widened, in, want) == MH_OK, "float64 case %zu widened: %s", i,
              mh_context_error(cpu));
        check_gpu_row(gpu, "two-pass", &on_device, " (float64, device taps)", i, d_in, d_out, want, got);
        check_fused64(gpu, &on_device, 0, " (float64, device taps)", i, d_in, d_out, want, got);
        /* down the columns alone: lines */
        mh_sepfilter_desc line = *d;
        line.horizontal = (mh_sepfilter_axis){&one, 1, 0, MH_MODE_REFLECT, 1, NULL, 0};
        line.order = MH_SEPFILTER_VERTICAL_FIRST;
        CHECK(mh_sepfilter(cpu, "cpu-omp", &line, in, want) == MH_OK, "float64 case %zu (one axis) on the CPU: %s", i,
              mh_context_error(cpu));
        if (line.vertical.ntaps <= 64) {
            const mh_variant_info *chosen = NULL;
            CHECK(mh_sepfilter_select(gpu, &line, &chosen) == MH_OK && chosen &&
                      (!strcmp(chosen->name, "sepfilter/fused64") ||
                       (!strcmp(chosen->name, "sepfilter/lines") &&
                        mh_sepfilter_supports(gpu, "fused64", &line) == MH_ERR_UNSUPPORTED)),
                  "float64 case %zu: auto runs %s on one axis", i, chosen ? chosen->name : "nothing");
            check_gpu_row(gpu, "lines", &line, " (float64, one axis)", i, d_in, d_out, want, got);
            check_fused64(gpu, &line, 1, " (float64, one axis)", i, d_in, d_out, want, got);
            line.vertical.taps = d_taps, line.vertical.taps64 = NULL;
            mh_sepfilter_desc host = line;
            host.vertical.taps = ps[i].vt;
            CHECK(mh_sepfilter(cpu, "cpu-omp", &host, in, want) == MH_OK, "float64 case %zu widened", i);
            check_gpu_row(gpu, "lines", &line, " (float64, one axis, device taps)", i, d_in, d_out, want, got);
        } else {
            check_gpu_row(gpu, "auto", &line, " (float64, one axis)", i, d_in, d_out, want, got);
        }
        if (i == 0) {
            mh_sepfilter_desc bad = *d;
            bad.vertical.taps64 = (const double *)d_taps;
            CHECK_REFUSED(gpu, mh_sepfilter(gpu, NULL, &bad, d_in, d_out), "vertical.taps64");
        }
        cudaFree(d_in), cudaFree(d_out), cudaFree(d_taps), free(in), free(want), free(got);
    }
    /* both axes the identity, the horizontal first (correlate1d with one tap of 1 along the rows):
     * stored once, as the CPU row's one pass stores it, near uint64's end and past it */
    static const double near_end[6] = {1e19, -1e10, -2.0, 0x1p64, NAN, 1.8446744073709550e19};
    mh_sepfilter_desc both = {1, 2, 3, 1, MH_F64, MH_U64, {&one, 1, 0, MH_MODE_REFLECT, 1, NULL, 0},
                              {&one, 1, 0, MH_MODE_REFLECT, 1, NULL, 0}, MH_SEPFILTER_HORIZONTAL_FIRST, 0.0, MH_SEPFILTER_SUMS_FMA};
    void *d_in, *d_out;
    float *d_taps;
    unsigned long long want[6], got[6];
    put_case(&ps[0], near_end, sizeof near_end, sizeof want, &d_in, &d_out, &d_taps);
    CHECK(mh_sepfilter(cpu, NULL, &both, near_end, want) == MH_OK, "identity case: %s", mh_context_error(cpu));
    check_gpu_row(gpu, "auto", &both, " (float64 into uint64, both axes the identity)", 0, d_in, d_out, want, got);
    check_gpu_row(gpu, "two-pass", &both, " (float64 into uint64, both axes the identity)", 0, d_in, d_out, want, got);
    cudaFree(d_in), cudaFree(d_out), cudaFree(d_taps);
    CHECK(check_sum(gpu, 1, "auto", ps, n) == n, "mh_sepfilter_sum: a float64 case auto refused");
    CHECK(check_sum(gpu, 1, "two-pass", ps, n) == n, "mh_sepfilter_sum: a float64 case two-pass refused");
}

/* scipy's sums on the GPU against the CPU row (itself against the reference: run_cpu_scipy), bit
 * for bit: fused64 (up to 64 taps a pass), two-pass and auto; the rows that add with fused
 * multiply-adds refuse it by name, and so does every row for device taps. */
static void run_gpu_scipy(mh_context *cpu, mh_context *gpu)
{
    problem ps[40];
    const size_t n = scipy_cases(ps, 40);
    for (size_t i = 0; i < n; ++i) {
        const mh_sepfilter_desc *d = &ps[i].d;
        const size_t values = d->batch * d->rows * d->cols * d->channels;
        const size_t in_bytes = values * mh_dtype_size(d->in_type), out_bytes = values * mh_dtype_size(d->out_type);
        void *in = scipy_input(&ps[i], (unsigned)i + 40), *want = malloc(out_bytes), *got = malloc(out_bytes);
        void *d_in, *d_out;
        float *d_taps;
        put_case(&ps[i], in, in_bytes, out_bytes, &d_in, &d_out, &d_taps);
        CHECK(mh_sepfilter(cpu, "cpu-omp", d, in, want) == MH_OK, "scipy case %zu on the CPU: %s", i,
              mh_context_error(cpu));
        check_gpu_row(gpu, "two-pass", d, " (scipy's sums)", i, d_in, d_out, want, got);
        check_gpu_row(gpu, "auto", d, " (scipy's sums)", i, d_in, d_out, want, got);
        if (d->vertical.ntaps <= 64 && d->horizontal.ntaps <= 64)
            check_gpu_row(gpu, "fused64", d, " (scipy's sums)", i, d_in, d_out, want, got);
        static const char *const fma_rows[] = {"lines", "walk", "fused"};
        for (int r = 0; r < 3; ++r)
            CHECK(mh_sepfilter(gpu, fma_rows[r], d, d_in, d_out) == MH_ERR_UNSUPPORTED &&
                      strstr(mh_context_error(gpu), "not in scipy's order"),
                  "scipy case %zu: %s took it: %s", i, fma_rows[r], mh_context_error(gpu));
        if (i == 0) {
            mh_sepfilter_desc on_device = *d;
            on_device.horizontal.taps = d_taps + MH_SEPFILTER_MAX_TAPS, on_device.horizontal.taps64 = NULL;
            CHECK(mh_sepfilter(gpu, NULL, &on_device, d_in, d_out) == MH_ERR_UNSUPPORTED &&
                      strstr(mh_context_error(gpu), "device memory"),
                  "scipy's sums with device taps: %s", mh_context_error(gpu));
        }
        cudaFree(d_in), cudaFree(d_out), cudaFree(d_taps), free(in), free(want), free(got);
    }
}

static void run_gpu(void)
{
    test_require_gpu();
    mh_context *cpu, *gpu;
    CHECK(mh_context_create(&cpu, MH_CPU) == MH_OK && mh_context_create(&gpu, 0) == MH_OK, "contexts");
    if (getenv("MEMHIER_TEST_WIDE_ONLY")) { /* the float64 calls alone: a sanitizer run on their rows */
        run_gpu_wide(cpu, gpu);
        run_gpu_scipy(cpu, gpu);
        mh_context_destroy(cpu), mh_context_destroy(gpu);
        return;
    }
    if (getenv("MEMHIER_TEST_WALK_ONLY")) { /* walk's calls alone: a sanitizer run on its row */
        check_walk(cpu, gpu);
        check_walk_pairs(gpu);
        mh_context_destroy(cpu), mh_context_destroy(gpu);
        return;
    }
    problem ps[96];
    const size_t n = cases(ps, 96);
    static const float one = 1.0f;
    for (size_t i = 0; i < n; ++i) {
        const mh_sepfilter_desc *d = &ps[i].d;
        const size_t values = d->batch * d->rows * d->cols * d->channels;
        const size_t in_bytes = values * mh_dtype_size(d->in_type), out_bytes = values * mh_dtype_size(d->out_type);
        void *in = input_for(&ps[i], (unsigned)i + 100), *want = malloc(out_bytes), *got = malloc(out_bytes);
        void *d_in, *d_out;
        float *d_taps; /* the taps in device memory too: both axes', the vertical's or the horizontal's */
        put_case(&ps[i], in, in_bytes, out_bytes, &d_in, &d_out, &d_taps);
        CHECK(mh_sepfilter(cpu, "cpu-omp", d, in, want) == MH_OK, "case %zu on the CPU: %s", i, mh_context_error(cpu));
        mh_sepfilter_desc on_device = *d;
        if (i % 3 != 2) on_device.vertical.taps = d_taps;
        if (i % 3 != 1) on_device.horizontal.taps = d_taps + MH_SEPFILTER_MAX_TAPS;
        if (i == 0)
            CHECK_REFUSED(cpu, mh_sepfilter(cpu, NULL, &on_device, in, want), "vertical.taps");
        for (int run = 0; run < 4; ++run) {
            const char *variant = run % 2 ? "two-pass" : "fused";
            const mh_sepfilter_desc *desc = run < 2 ? d : &on_device;
            if (!(run % 2) && (d->vertical.ntaps > 64 || d->horizontal.ntaps > 64)) { /* 16-row tiles */
                if (mh_sepfilter_supports(gpu, variant, desc) == MH_ERR_UNSUPPORTED) { /* only past shared memory */
                    CHECK(strstr(mh_context_error(gpu), "shared memory") != NULL, "case %zu: fused refused %zu x %zu taps: %s",
                          i, d->vertical.ntaps, d->horizontal.ntaps, mh_context_error(gpu));
                    continue;
                }
            }
            check_gpu_row(gpu, variant, desc, run < 2 ? "" : " (device taps)", i, d_in, d_out, want, got);
        }
        check_walk_case(gpu, d, &on_device, i, d_in, d_out, want, got);
        /* lines takes a filter of one axis alone and refuses two axes or their sum */
        if (d->horizontal.ntaps > 1 && d->vertical.ntaps > 1)
            CHECK(mh_sepfilter(gpu, "lines", d, d_in, d_out) == MH_ERR_UNSUPPORTED &&
                      strstr(mh_context_error(gpu), "vertical axis alone"),
                  "case %zu: lines took a filter of two axes", i);
        for (int vertical = 1; vertical >= 0; --vertical)
            check_one_axis(cpu, gpu, d, vertical, i, in, d_in, d_out, d_taps, want, got);
        cudaFree(d_in), cudaFree(d_out), cudaFree(d_taps), free(in), free(want), free(got);
    }
    /* a stack of 65537 one-pixel images: two launches (gridDim.z holds 65535) */
    problem p = make(65537, 1, 1, 3, MH_U8, MH_F32, 3, 3, 0, 5);
    bind(&p);
    const size_t values = 65537 * 3;
    void *in = input_for(&p, 9), *want = malloc(values * 4), *got = malloc(values * 4), *d_in, *d_out;
    CHECK_CUDA(cudaMalloc(&d_in, values)); CHECK_CUDA(cudaMalloc(&d_out, values * 4 + 64));
    CHECK_CUDA(cudaMemcpy(d_in, in, values, cudaMemcpyHostToDevice));
    CHECK(mh_sepfilter(cpu, NULL, &p.d, in, want) == MH_OK && mh_sepfilter(gpu, NULL, &p.d, d_in, d_out) == MH_OK,
          "the stack of 65537: %s", mh_context_error(gpu));
    CHECK_CUDA(cudaMemcpy(got, d_out, values * 4, cudaMemcpyDeviceToHost));
    CHECK(memcmp(got, want, values * 4) == 0, "the stack of 65537 differs from the CPU row's");
    /* the same stack filtered down its columns alone: lines, in two launches too */
    p.d.horizontal = (mh_sepfilter_axis){&one, 1, 0, MH_MODE_REFLECT, 1, NULL, 0};
    check_gpu_one_axis(cpu, gpu, &p.d, in, d_in, d_out, want, got, "the stack of 65537 (one axis)", "sepfilter/lines");
    cudaFree(d_in), cudaFree(d_out), free(in), free(want), free(got);
    /* images large enough that each of lines' threads walks several strips of its column; and
     * filters along rows of many tiles, which walk runs on float32 and fused with channels */
    static const struct { size_t rows, cols, C; mh_dtype in, out; size_t ntaps; mh_mode mode; long long origin; int vertical; } big[] = {
        {4099, 2051, 1, MH_F32, MH_F32, 9, MH_MODE_REFLECT, 0, 1}, {3001, 1999, 1, MH_U8, MH_F32, 33, MH_MODE_CONSTANT, -16, 1},
        {1027, 3001, 3, MH_U8, MH_U8, 17, MH_MODE_MIRROR, 3, 0}, {2051, 4099, 1, MH_F32, MH_F32, 9, MH_MODE_WRAP, -4, 0}};
    for (size_t b = 0; b < sizeof big / sizeof big[0]; ++b) {
        const int v = big[b].vertical;
        problem q = make(1, big[b].rows, big[b].cols, big[b].C, big[b].in, big[b].out, v ? big[b].ntaps : 1,
                         v ? 1 : big[b].ntaps, 0, 20 + (unsigned)b);
        bind(&q);
        const size_t nv = big[b].rows * big[b].cols * big[b].C;
        if (nv > test_max_n()) continue;
        mh_sepfilter_axis *kept = v ? &q.d.vertical : &q.d.horizontal;
        kept->mode = big[b].mode, kept->origin = big[b].origin;
        *(v ? &q.d.horizontal : &q.d.vertical) = (mh_sepfilter_axis){&one, 1, 0, MH_MODE_REFLECT, 1, NULL, 0};
        void *x = input_for(&q, 30 + (unsigned)b), *w = malloc(nv * 4), *g = malloc(nv * 4), *dx, *dy;
        CHECK_CUDA(cudaMalloc(&dx, nv * 4)); CHECK_CUDA(cudaMalloc(&dy, nv * 4 + 64));
        CHECK_CUDA(cudaMemcpy(dx, x, nv * mh_dtype_size(q.d.in_type), cudaMemcpyHostToDevice));
        check_gpu_one_axis(cpu, gpu, &q.d, x, dx, dy, w, g, "a large image (one axis)",
                           v ? "sepfilter/lines" : big[b].in == MH_F32 ? "sepfilter/walk" : "sepfilter/fused");
        cudaFree(dx), cudaFree(dy), free(x), free(w), free(g);
    }
    check_walk(cpu, gpu);
    check_walk_pairs(gpu);
    CHECK(check_sum(gpu, 1, "auto", ps, n) == n, "mh_sepfilter_sum: a case auto refused");
    CHECK(check_sum(gpu, 1, "walk", ps, n) > 0 && check_sum(gpu, 1, "fused", ps, n) > 0,
          "mh_sepfilter_sum: walk or fused took no case");
    check_sum_refusals(gpu, 1);
    check_reversed(gpu, 1);
    run_gpu_wide(cpu, gpu);
    run_gpu_scipy(cpu, gpu);
    mh_context_destroy(cpu), mh_context_destroy(gpu);
}

int main(int argc, char **argv)
{
    const int gpu = argc > 1 && !strcmp(argv[1], "gpu");
    if (gpu) run_gpu();
    else run_cpu();
    return test_finish(gpu ? "test_sepfilter gpu" : "test_sepfilter cpu");
}

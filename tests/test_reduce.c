/* Every reduce variant of one backend against a double reference:
 *   test_reduce cpu | gpu (exit 77 only when the machine has no CUDA device)
 * n from 0 to 3 Mi around every block and chunk boundary, each with float inputs (within the sum
 * tolerance) and whole-number ones (exact: a dropped or doubled element fails), misaligned inputs (the 16-byte path's
 * head), every tuning configuration; the sum poisoned with NaN and fenced by guard words. NaN
 * and Inf propagate; the deterministic variant gives the same bits on every run and in every
 * configuration, vector on every run in each. Refusals write nothing. Reductions along an axis (mh_reduce: sum, mean, min,
 * max, argmin, argmax of float32, float64 and every integer dtype over the middle of
 * outer x len x inner, with NaN, ties
 * and signed zeros) on every row that takes them and auto, against lanes worked out in the test;
 * the rows that sum whole arrays alone refuse them. */
#include "testing.h"

static const size_t sizes[] = {0,     1,     2,     3,      5,      1023,   1024,   2047,    2048,
                               2049,  16383, 16384, 16385,  100003, 262145, 1048583, 3145729};

/* One run of a variant (config 0 through the public API); the sum, NaN when it failed. */
static float run_variant(mh_context *ctx, const float *in, size_t n, const test_out *out, const mh_row *row, int config,
                         int *refused)
{
    const char *name = row ? row->info.name : "auto";
    test_out_poison(out);
    mh_args x;
    mh_reduce_args_init(ctx, &x, in, n, out->data);
    x.config = config;
    char why[512] = "";
    *refused = row && !row->supports(ctx, &x, why, sizeof why);
    if (*refused) {
        CHECK(why[0], "%s refuses n=%zu without a reason", name, n);
        return NAN;
    }
    mh_status s = config == 0 ? mh_reduce_sum(ctx, row ? name : NULL, in, n, out->data) : mh_run_row(ctx, row, &x);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s config %d n=%zu: %s: %s", name, config, n, mh_status_str(s), mh_context_error(ctx));
    const size_t broken = test_out_fetch(out);
    CHECK(broken == 0, "%s config %d n=%zu wrote %zu guard words", name, config, n, broken);
    return s == MH_OK ? out->host[TEST_GUARD] : NAN;
}

/* exact: the inputs are whole numbers in [-2, 2] and n < 2^23, so every partial sum, in any
 * order, is a whole number under 2^24, a float exactly: the sum must be exact, and one element
 * dropped or counted twice shows (the float tolerance cannot see that at large n). */
static void check_sum(mh_context *ctx, const float *h, const float *in, size_t n, const test_out *out, const mh_row *row,
                      int config, int exact)
{
    int refused;
    const float got = run_variant(ctx, in, n, out, row, config, &refused);
    if (refused) return;
    double ref, mag;
    mh_reduce_reference(h, n, &ref, &mag);
    mh_error_stats st;
    const int ok = exact ? (double)got == ref : mh_compare_sum(got, ref, mag, n, &st);
    CHECK(ok, "%s config %d n=%zu%s: sum %.9g, reference %.12g (sum |x| %.6g)", row ? row->info.name : "auto", config, n,
          exact ? " (whole numbers, exact)" : "", got, ref, mag);
}

/* Whole numbers in [-2, 2] from the same generator. */
static void fill_whole(float *h, size_t n, unsigned long long seed)
{
    mh_fill_uniform(h, n, seed, 2.5f);
    for (size_t i = 0; i < n; ++i) h[i] = fminf(2.0f, fmaxf(-2.0f, roundf(h[i])));
}

/* NaN anywhere gives NaN; +Inf gives +Inf; +Inf with -Inf gives NaN. */
static void check_specials(mh_context *ctx, int gpu, const mh_row *row)
{
    enum { N = 70001 };
    float *h = malloc(N * sizeof(float));
    mh_fill_uniform(h, N, 5, 1.0f);
    const struct {
        size_t at1, at2;
        float v1, v2;
        int want_nan;
    } cases[] = {{33333, 33333, NAN, NAN, 1}, {N - 1, N - 1, INFINITY, INFINITY, 0}, {7, 60000, INFINITY, -INFINITY, 1}};
    test_out out = test_out_alloc(gpu, 1, 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        float *copy = malloc(N * sizeof(float));
        memcpy(copy, h, N * sizeof(float));
        copy[cases[c].at1] = cases[c].v1, copy[cases[c].at2] = cases[c].v2;
        test_in in = test_in_copy(gpu, copy, N, 0);
        int refused;
        const float got = run_variant(ctx, in.data, N, &out, row, 0, &refused);
        if (!refused)
            CHECK(cases[c].want_nan ? isnan(got) : (isinf(got) && got > 0), "%s special case %zu: got %g",
                  row ? row->info.name : "auto", c, got);
        test_release(gpu, in.base);
        free(copy);
    }
    test_out_free(&out);
    free(h);
}

/* The same bits over 3 runs: deterministic's in every configuration (its order is n's alone),
 * vector's within each (its grid, fixed by the device and n, fixes the order; the last block's
 * ticket, left at 0 by every launch, would show here as a sum left out or counted twice). */
static void check_same_bits(mh_context *ctx, int gpu, const float *in, size_t n, const test_out *out,
                            const char *variant, int across_configs)
{
    const mh_row *row = mh_row_of(mh_variant_lookup(MH_OP_REDUCE, variant));
    if (!row || !test_row_fits(row, gpu)) return;
    int refused;
    float first = run_variant(ctx, in, n, out, row, 0, &refused);
    for (int config = 0; config < test_configs(row, gpu); ++config) {
        if (!across_configs) first = run_variant(ctx, in, n, out, row, config, &refused);
        for (int rep = 0; rep < 3; ++rep) {
            const float again = run_variant(ctx, in, n, out, row, config, &refused);
            CHECK(memcmp(&again, &first, sizeof first) == 0, "%s config %d run %d n=%zu: %.9g, first %.9g", variant,
                  config, rep, n, again, first);
        }
    }
}

static void check_refusals(mh_context *ctx, int gpu)
{
    float *buf = test_alloc(gpu, 64 * sizeof(float));
    const struct {
        const float *in;
        size_t n;
        float *sum;
        const char *says;
    } bad[] = {
        {buf, 16, NULL, "sum is NULL"},
        {NULL, 16, buf + 32, "in is NULL"},
        {buf, SIZE_MAX / 2, buf + 32, "overflows"},
        {buf, 16, buf + 8, "overlaps"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        CHECK_REFUSED(ctx, mh_reduce_sum(ctx, NULL, bad[i].in, bad[i].n, bad[i].sum), bad[i].says);
    }
    /* n = 0 takes a NULL input and gives 0 */
    test_out out = test_out_alloc(gpu, 1, 0);
    test_out_poison(&out);
    mh_status s = mh_reduce_sum(ctx, NULL, NULL, 0, out.data);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    test_out_fetch(&out);
    CHECK(s == MH_OK && out.host[TEST_GUARD] == 0.0f, "n = 0 with in = NULL: %s, sum %g", mh_context_error(ctx),
          out.host[TEST_GUARD]);
    test_out_free(&out);
    test_release(gpu, buf);
}

/* ---- reductions along an axis (mh_reduce) ---------------------------------------------- */

/* The expected lane (o, i), written independently of mh_reduce_lane: the lane copied out first,
 * then each kind by its own loop. */
static int is_integer(mh_dtype dt) { return dt != MH_F32 && dt != MH_F64; }

/* Element at of an integer input as its 64 bits (signed types sign-extended; uint64 as itself). */
static unsigned long long bits_at(const void *in, mh_dtype dt, size_t at)
{
    switch (dt) {
    case MH_I8: return (unsigned long long)(long long)((const int8_t *)in)[at];
    case MH_U8: return ((const uint8_t *)in)[at];
    case MH_I16: return (unsigned long long)(long long)((const int16_t *)in)[at];
    case MH_U16: return ((const uint16_t *)in)[at];
    case MH_I32: return (unsigned long long)(long long)((const int32_t *)in)[at];
    case MH_U32: return ((const uint32_t *)in)[at];
    default: return ((const uint64_t *)in)[at]; /* int64 and uint64 */
    }
}

/* a < b as the dtype orders them (uint64 unsigned, the rest signed). */
static int integer_less(unsigned long long a, unsigned long long b, mh_dtype dt)
{
    return dt == MH_U64 ? a < b : (long long)a < (long long)b;
}

/* Element at of an input of type dt as a double (uint64 past 2^53 rounded). */
static double value_at(const void *in, mh_dtype dt, size_t at)
{
    if (dt == MH_F32) return (double)((const float *)in)[at];
    if (dt == MH_F64) return ((const double *)in)[at];
    const unsigned long long b = bits_at(in, dt, at);
    return dt == MH_U64 ? (double)b : (double)(long long)b;
}

/* The lane's integer sum, exactly (wrapping modulo 2^64, as numpy's int64 and uint64 sums wrap). */
static unsigned long long integer_sum(const void *in, mh_dtype dt, size_t len, size_t inner, size_t o, size_t i)
{
    unsigned long long s = 0;
    for (size_t l = 0; l < len; ++l) s += bits_at(in, dt, (o * len + l) * inner + i);
    return s;
}

/* The index of the lane's first minimum (or maximum), compared exactly. */
static size_t integer_extreme(const void *in, mh_dtype dt, size_t len, size_t inner, size_t o, size_t i, int max)
{
    size_t best = 0;
    for (size_t l = 1; l < len; ++l) {
        const unsigned long long v = bits_at(in, dt, (o * len + l) * inner + i), b = bits_at(in, dt, (o * len + best) * inner + i);
        if (max ? integer_less(b, v, dt) : integer_less(v, b, dt)) best = l;
    }
    return best;
}

/* An extreme of dtype dt as stored (mh_reduce_out_size bytes), as its 64 bits. */
static unsigned long long stored_integer(const char *r, mh_dtype dt) { return bits_at(r, dt, 0); }

static void expected_lane(const void *in, mh_dtype dt, size_t len, size_t inner, size_t o, size_t i, mh_reduce_kind k,
                          double *value, long long *index, double *magnitude)
{
    double *v = malloc((len ? len : 1) * sizeof *v);
    *magnitude = 0.0;
    for (size_t l = 0; l < len; ++l) {
        v[l] = value_at(in, dt, (o * len + l) * inner + i);
        *magnitude += fabs(v[l]);
    }
    size_t first_nan = len;
    for (size_t l = len; l-- > 0;)
        if (isnan(v[l])) first_nan = l;
    double acc = 0.0;
    for (size_t l = 0; l < len; ++l) acc += v[l];
    *index = -1;
    if (k == MH_REDUCE_SUM) *value = acc;
    else if (k == MH_REDUCE_MEAN) *value = len ? acc / (double)len : NAN;
    else {
        size_t best = 0;
        for (size_t l = 1; l < len; ++l)
            if ((k == MH_REDUCE_MAX || k == MH_REDUCE_ARGMAX) ? v[l] > v[best] : v[l] < v[best]) best = l;
        if (first_nan < len) best = first_nan;
        *value = v[best], *index = (long long)best;
    }
    free(v);
}

/* Lane values: a wide spread, ties (every ninth value repeats the lane's first), signed zeros,
 * and in float lanes a NaN in every seventh lane; integers over their type's range (int64 values
 * past 2^32, uint32 sums past 2^32, uint64 values past 2^63: sums that wrap). */
static void fill_lanes(void *in, mh_dtype dt, size_t outer, size_t len, size_t inner, unsigned long long seed)
{
    const size_t n = outer * len * inner;
    float *u = malloc((n ? n : 1) * sizeof *u);
    mh_fill_uniform(u, n, seed, 1.0f);
    for (size_t k = 0; k < n; ++k) {
        const size_t l = k / inner % len;
        float x = u[k] * 1000.0f;
        if (l % 9 == 8) x = u[k - l * inner] * 1000.0f;
        if (l % 13 == 5) x = (k & 1) ? -0.0f : 0.0f;
        const int nan = (k / inner / len * inner + k % inner) % 7 == 3 && l == len / 2;
        if (dt == MH_F32) ((float *)in)[k] = nan ? NAN : x;
        else if (dt == MH_F64) ((double *)in)[k] = nan ? NAN : (double)x * (1.0 + 0x1p-30);
        else if (dt == MH_I64) ((long long *)in)[k] = (long long)(x * 1e6f) * 4099;
        else if (dt == MH_I32) ((int32_t *)in)[k] = (int32_t)(x * 1e6f);
        else if (dt == MH_I8) ((int8_t *)in)[k] = (int8_t)(x * 0.127f);
        else if (dt == MH_U8) ((uint8_t *)in)[k] = (uint8_t)((x + 1000.0f) * 0.1275f);
        else if (dt == MH_I16) ((int16_t *)in)[k] = (int16_t)(x * 32.0f);
        else if (dt == MH_U16) ((uint16_t *)in)[k] = (uint16_t)((x + 1000.0f) * 32.0f);
        else if (dt == MH_U32) ((uint32_t *)in)[k] = (uint32_t)((double)(x + 1000.0f) * 2e6);
        else ((uint64_t *)in)[k] = (uint64_t)((double)(x + 1000.0f) * 1e6) << 33;
    }
    free(u);
}

/* Each lane of got (one row's results) against the lanes worked out here; the count wrong. */
static size_t wrong_lanes(const void *h, mh_dtype dt, size_t len, size_t inner, size_t lanes, mh_reduce_kind k,
                          const char *got)
{
    const size_t size = mh_reduce_out_size(dt, k);
    size_t wrong = 0;
    for (size_t lane = 0; lane < lanes; ++lane) {
        double want, magnitude;
        long long idx;
        expected_lane(h, dt, len, inner, lane / inner, lane % inner, k, &want, &idx, &magnitude);
        const char *r = got + lane * size;
        const size_t o = lane / inner, i = lane % inner;
        const int integer = is_integer(dt), wide = dt == MH_I64 || dt == MH_U64, max = k == MH_REDUCE_MAX || k == MH_REDUCE_ARGMAX;
        int ok;
        if (k >= MH_REDUCE_ARGMIN)
            ok = *(const long long *)r == (integer ? (long long)integer_extreme(h, dt, len, inner, o, i, max) : idx);
        else if (k == MH_REDUCE_SUM && integer) ok = *(const unsigned long long *)r == integer_sum(h, dt, len, inner, o, i);
        else if (k == MH_REDUCE_MEAN && integer) /* exact below 64 bits; 64-bit means add doubles in */
            ok = *(const double *)r == want || (isnan(want) && isnan(*(const double *)r)) || /* any order */
                 (wide && fabs(*(const double *)r - want) <= 0x1p-52 * magnitude);
        else if (integer)
            ok = stored_integer(r, dt) == bits_at(h, dt, (o * len + integer_extreme(h, dt, len, inner, o, i, max)) * inner + i);
        else if (dt == MH_F64) { /* sums in another order: within len rounding steps of the sum of |values| */
            const double f = *(const double *)r;
            const double tol = k == MH_REDUCE_SUM ? 0x1p-52 * (double)len * magnitude
                               : k == MH_REDUCE_MEAN ? 0x1p-52 * magnitude : 0.0;
            ok = isnan(want) ? isnan(f) : f == want || fabs(f - want) <= tol;
        } else {
            const float f = *(const float *)r;
            ok = isnan(want) ? isnan(f) : f == (float)want || (k <= MH_REDUCE_MEAN && fabs(f - want) <= 1e-6 * fabs(want));
        }
        wrong += !ok;
    }
    return wrong;
}

/* One row (NULL: auto) on one kind: poisoned output with a guard byte past it; NULL when the
 * row refuses (with a reason) or fails (a CHECK), else the results fetched into got. */
static const char *run_axis(mh_context *ctx, int gpu, const mh_row *row, const char *in, mh_dtype dt, size_t outer,
                            size_t len, size_t inner, mh_reduce_kind k, char *out, char *got)
{
    const size_t lanes = outer * inner, size = mh_reduce_out_size(dt, k);
    const char *name = row ? row->info.name : "auto";
    mh_args x;
    mh_reduce_axis_args_init(ctx, &x, in, dt, outer, len, inner, k, out);
    char why[512] = "";
    if (row && !row->supports(ctx, &x, why, sizeof why)) {
        CHECK(why[0], "%s refuses %zu x %zu x %zu without a reason", name, outer, len, inner);
        return NULL;
    }
    memset(got, 0x7f, lanes * 8 + 8);
    test_put(gpu, out, got, lanes * 8 + 8);
    mh_status s = mh_reduce(ctx, row ? name : NULL, outer * len * inner != 0 ? in : NULL, dt, outer, len, inner, k, out);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s kind %d dtype %d %zu x %zu x %zu: %s", name, (int)k, (int)dt, outer, len, inner,
          mh_context_error(ctx));
    if (s != MH_OK) return NULL;
    test_get(gpu, got, out, lanes * 8 + 8);
    CHECK((unsigned char)got[lanes * size] == 0x7f, "%s kind %d wrote past its %zu results", name, (int)k, lanes);
    return got;
}

/* Every row that takes any reduction, and auto, on every kind of one shape; the input starts
 * `offset` values past a 16-byte boundary. The sums of axis twice: the same bits. */
static void check_axis_case(mh_context *ctx, int gpu, mh_dtype dt, size_t outer, size_t len, size_t inner,
                            size_t offset, unsigned long long seed)
{
    const size_t n = outer * len * inner, lanes = outer * inner, size = mh_dtype_size(dt);
    void *h = malloc((n ? n : 1) * size);
    fill_lanes(h, dt, outer, len, inner, seed);
    char *base = test_alloc(gpu, (n + offset + 1) * size), *out = test_alloc(gpu, lanes * 8 + 8);
    char *in = base + size * offset;
    char *got = malloc(lanes * 8 + 8), *again = malloc(lanes * 8 + 8);
    test_put(gpu, in, h, n * size);
    for (size_t r = 0; r <= mh_row_count(MH_OP_REDUCE); ++r) {
        const mh_row *row = r < mh_row_count(MH_OP_REDUCE) ? mh_row_at(MH_OP_REDUCE, r) : NULL;
        if (row && (!(row->flags & MH_ROW_ANY_REDUCTION) || !test_row_fits(row, gpu))) continue;
        for (int k = MH_REDUCE_SUM; k <= MH_REDUCE_ARGMAX; ++k) {
            if (len == 0 && k > MH_REDUCE_MEAN) continue;
            test_trace(row ? row->info.name : "auto", k, "axis");
            if (!run_axis(ctx, gpu, row, in, dt, outer, len, inner, (mh_reduce_kind)k, out, got)) continue;
            const size_t wrong = wrong_lanes(h, dt, len, inner, lanes, (mh_reduce_kind)k, got);
            CHECK(wrong == 0, "%s kind %d dtype %d %zu x %zu x %zu (offset %zu): %zu of %zu lanes wrong",
                  row ? row->info.name : "auto", k, (int)dt, outer, len, inner, offset, wrong, lanes);
            if (row && k == MH_REDUCE_SUM && !strcmp(row->info.name, "reduce/axis") &&
                run_axis(ctx, gpu, row, in, dt, outer, len, inner, (mh_reduce_kind)k, out, again))
                CHECK(!memcmp(got, again, lanes * mh_reduce_out_size(dt, (mh_reduce_kind)k)),
                      "reduce/axis: two sums of %zu x %zu x %zu differ", outer, len, inner);
        }
    }
    free(h), free(got), free(again);
    test_release(gpu, base), test_release(gpu, out);
}

/* The sum and mean of three values v of a 64-bit dtype: sum's 64 bits and mean as given. */
static void check_wrap(mh_context *ctx, int gpu, char *buf, mh_dtype dt, unsigned long long v, unsigned long long sum,
                       double mean)
{
    const unsigned long long values[3] = {v, v, v};
    unsigned long long got_sum = 0;
    double got_mean = 0.0;
    test_put(gpu, buf, values, sizeof values);
    CHECK(mh_reduce(ctx, NULL, buf, dt, 1, 3, 1, MH_REDUCE_SUM, buf + 256) == MH_OK && mh_context_synchronize(ctx) == MH_OK,
          "%s sum: %s", mh_dtype_name(dt), mh_context_error(ctx));
    test_get(gpu, &got_sum, buf + 256, sizeof got_sum);
    CHECK(got_sum == sum, "the %s sum of 3 x %llu is %llu, not %llu", mh_dtype_name(dt), v, got_sum, sum);
    CHECK(mh_reduce(ctx, NULL, buf, dt, 1, 3, 1, MH_REDUCE_MEAN, buf + 256) == MH_OK && mh_context_synchronize(ctx) == MH_OK,
          "%s mean: %s", mh_dtype_name(dt), mh_context_error(ctx));
    test_get(gpu, &got_mean, buf + 256, sizeof got_mean);
    CHECK(got_mean == mean, "the %s mean of 3 x %llu is %g, not %g", mh_dtype_name(dt), v, got_mean, mean);
}

/* Every kind and dtype over the middle axis of shapes that reach every path of the GPU rows
 * (rows a thread, 8 or 32 threads or blocks each, cut into chunks or not; columns one or four a
 * thread, the axis cut or not, its partials finished a block a lane or a thread a lane in
 * batches, the last batch short; inputs off the 16-byte boundary; one element; an empty axis),
 * and the arguments refused. */
static void check_axes(mh_context *ctx, int gpu, unsigned long long seed)
{
    static const size_t shapes[][4] = {
        {1, 1000, 1, 0},  {7, 33, 5, 0},    {1, 17, 1000, 0}, {300, 4, 1, 0},   {3, 1, 7, 0},
        {2, 0, 3, 0},     {1, 65537, 2, 0}, {2, 200, 1, 1},   {64, 3000, 1, 0}, {5, 100003, 1, 0},
        {1, 300000, 1, 2}, {3, 5000, 8, 0}, {2, 9000, 4, 0},  {1, 17, 1000, 1}, {4, 70000, 1, 1},
        {3000, 3, 1, 3},  {2, 3, 4000, 0},  {4, 1, 1, 0},   {1, 2000, 600, 0},
    };
    static const mh_dtype dtypes[] = {MH_F32, MH_I32, MH_F64, MH_I64, MH_I8, MH_U8, MH_I16, MH_U16, MH_U32, MH_U64};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (size_t dt = 0; dt < sizeof dtypes / sizeof dtypes[0]; ++dt)
            check_axis_case(ctx, gpu, dtypes[dt], shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3],
                            seed + 7 * i + (unsigned long long)dt);
    char *buf = test_alloc(gpu, 64 * 8);
    CHECK_REFUSED(ctx, mh_reduce(ctx, NULL, buf, MH_F32, 2, 0, 3, MH_REDUCE_ARGMAX, buf + 256), "len = 0");
    CHECK_REFUSED(ctx, mh_reduce(ctx, NULL, buf, MH_F16, 2, 4, 3, MH_REDUCE_SUM, buf + 256), "dtype = 1");
    CHECK_REFUSED(ctx, mh_reduce(ctx, NULL, buf, (mh_dtype)11, 2, 4, 3, MH_REDUCE_SUM, buf + 256), "dtype = 11");
    /* 64-bit sums wrap as numpy's do (int64 past 2^63, uint64 past 2^64); their means add the
     * values in double (numpy's) */
    check_wrap(ctx, gpu, buf, MH_I64, 1ULL << 62, (unsigned long long)-(1LL << 62), 0x1p62);
    check_wrap(ctx, gpu, buf, MH_U64, 1ULL << 63, 1ULL << 63, 0x1p63);
    CHECK_REFUSED(ctx, mh_reduce(ctx, NULL, buf, MH_F32, 2, 4, 3, (mh_reduce_kind)9, buf + 256), "kind = 9");
    CHECK_REFUSED(ctx, mh_reduce(ctx, NULL, buf, MH_F32, SIZE_MAX / 4, 4, 3, MH_REDUCE_SUM, buf + 256), "overflows");
    CHECK_REFUSED(ctx, mh_reduce(ctx, NULL, buf, MH_F32, 2, 4, 3, MH_REDUCE_SUM, buf + 8), "overlaps");
    CHECK_REFUSED(ctx, mh_reduce(ctx, NULL, buf, MH_F32, 2, 4, 3, MH_REDUCE_MAX, NULL), "out is NULL");
    if (gpu) { /* a row that sums whole float32 arrays alone names the rows that take the rest */
        const mh_status s = mh_reduce(ctx, "vector", buf, MH_F32, 2, 4, 3, MH_REDUCE_MAX, buf + 256);
        CHECK(s == MH_ERR_UNSUPPORTED && strstr(mh_context_error(ctx), "runs on axis"), "vector on a max: %s",
              mh_context_error(ctx));
    }
    test_release(gpu, buf);
}

int main(int argc, char **argv)
{
    int gpu;
    mh_context *ctx = test_open(argc, argv, &gpu);
    const unsigned long long seed = test_seed();
    const size_t max_n = test_max_n();
    for (size_t case_i = 0; case_i < 2 * sizeof sizes / sizeof sizes[0]; ++case_i) {
        const size_t si = case_i / 2, n = sizes[si];
        const int exact = case_i % 2;
        if (n > max_n) continue;
        float *h = malloc((n ? n : 1) * sizeof(float));
        if (exact) fill_whole(h, n, seed + 100 + si);
        else mh_fill_uniform(h, n, seed + si, si % 2 ? 1000.0f : 1.0f);
        test_in in = test_in_copy(gpu, h, n ? n : 1, si % 4); /* offsets 0..3 floats: every alignment */
        test_out out = test_out_alloc(gpu, 1, si % 3);
        for (size_t r = 0; r < mh_row_count(MH_OP_REDUCE); ++r) {
            const mh_row *row = mh_row_at(MH_OP_REDUCE, r);
            if (!test_row_fits(row, gpu)) continue;
            for (int cfg = 0; cfg < test_configs(row, gpu); ++cfg) {
                char what[64];
                snprintf(what, sizeof what, "n=%zu%s", n, exact ? " whole" : "");
                test_trace(row->info.name, cfg, what);
                check_sum(ctx, h, in.data, n, &out, row, cfg, exact);
            }
        }
        check_sum(ctx, h, in.data, n, &out, NULL, 0, exact); /* auto */
        if (n >= 100000 && !exact) {
            check_same_bits(ctx, gpu, in.data, n, &out, "deterministic", 1);
            check_same_bits(ctx, gpu, in.data, n, &out, "vector", 0);
        }
        test_out_free(&out);
        test_release(gpu, in.base);
        free(h);
    }
    for (size_t r = 0; r < mh_row_count(MH_OP_REDUCE); ++r) {
        const mh_row *row = mh_row_at(MH_OP_REDUCE, r);
        if (test_row_fits(row, gpu)) check_specials(ctx, gpu, row);
    }
    check_refusals(ctx, gpu);
    check_axes(ctx, gpu, seed);
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_reduce gpu" : "test_reduce cpu");
}

/* Every conv2d variant of one backend against the double reference:
 *   test_conv2d cpu   the CPU rows (always runs)
 *   test_conv2d gpu   the CUDA and vendor rows and every tuning configuration (exit 77 only
 *                     when the machine has no CUDA device)
 * Images from 1 x 1 up, primes, sizes that are no multiple of any tile, filters from 1 x 1
 * to 255 x 255 (past 31 a side only the rows flagged for them compute; the others must refuse),
 * square or not, odd or even, larger than the image (same, full), every padding,
 * misaligned pointers; each shape with a random (full-rank) filter and a rank-1 one. Besides
 * the zero paddings, mh_conv2d_mode's placements: every boundary mode, origins at their limits,
 * a constant of 2.5 and of NaN (NaN wherever the window meets the border, exact elsewhere).
 * Outputs are poisoned with NaN and fenced by guard words. `separable` must compute rank-1
 * filters and refuse the others with MH_ERR_UNSUPPORTED and nothing written; `auto` must
 * take the separable path exactly for rank-1 filters. The FFT rows are judged by their
 * normwise bound (fft_bound_ok), the others output by output. */
#include "testing.h"
#include <float.h>
#include "core/border.h"
#include "core/dtype.h"

typedef struct tcase {
    size_t rows, cols, kr, kc;
    int misaligned; /* in, filter and out start 1, 3 and 2 floats past an aligned address */
} tcase;

static const tcase cases[] = {
    {1, 1, 1, 1, 0},      {1, 7, 1, 3, 0},      {7, 1, 3, 1, 1},      {5, 5, 5, 5, 0},       {17, 33, 3, 3, 0},
    {31, 63, 4, 6, 1},    {64, 64, 31, 31, 0},  {100, 37, 2, 15, 0},  {257, 129, 7, 7, 1},   {129, 257, 11, 11, 0},
    {513, 300, 15, 15, 0}, {33, 1000, 1, 31, 1}, {1000, 33, 31, 1, 0}, {300, 1001, 13, 8, 1}, {2048, 2048, 3, 3, 0},
    {1031, 1500, 9, 9, 0}, {3, 4, 7, 9, 0},      {20, 20, 31, 31, 1}, /* filter larger than the image: same, full */
    /* walk's 3 x 3 and 5 x 5: a filter over a 1 x 1 or 4 x 2 image, strips and blocks cut
     * short, columns no multiple of 4 (the scalar paths), lanes 0 and 31 at block edges */
    {1, 1, 3, 3, 0},      {4, 2, 5, 5, 0},      {37, 517, 5, 5, 1},   {130, 1030, 3, 3, 0},  {67, 1028, 5, 5, 0},
    /* walk's bordered calls past 2^18 outputs: the walking kernel with its ring, not the ring's
     * kernel alone (ONE_KERNEL_MAX_OUTPUTS; the cases above stay below it) */
    {500, 530, 5, 5, 1},
    /* walk's streamed 5 x 5 strips (29 rows, 128 columns a warp) on aligned rows: strips and warps
     * cut short, below and past 2^18 outputs (the ring's kernel alone, then the strips and the
     * ring's kernel); 7 x 7's past 2^18 */
    {70, 260, 5, 5, 0},   {520, 520, 5, 5, 0},   {520, 520, 7, 7, 0},
    /* float32 5 x 5's strips and their ring (aligned, past 2^18 outputs): 5 rows, the fewest
     * they take (every mode's one reflection at its limit, origins too); 8 columns, lanes past
     * the image feeding the last one's window */
    {5, 52440, 5, 5, 0},  {32800, 8, 5, 5, 0},
    /* walk's 7 x 7 strips (34 rows, 128 columns a warp): warps inside the image (no checks) beside
     * the checked ones at every edge, strips cut short, columns no multiple of 4, misaligned */
    {1, 1, 7, 7, 0},      {100, 700, 7, 7, 0},  {75, 1028, 7, 7, 1},  {300, 517, 7, 7, 0},
    /* past the direct rows' 31: the rows flagged MH_ROW_LARGE_FILTERS; several tiles, a filter larger
     * than the image, 255 taps along one axis */
    {100, 130, 63, 63, 0}, {70, 301, 33, 48, 1}, {40, 50, 127, 101, 0}, {257, 20, 255, 5, 0}, {1, 300, 1, 255, 1},
    {600, 700, 32, 32, 0},
    /* lowrank's instances of their own size (17 to 31 a side, odd): 16-row bands at one term */
    {150, 260, 17, 17, 0}, {61, 133, 25, 25, 1},
};

/* A zero padding (mh_conv2d) or a boundary mode with its constant and origin (mh_conv2d_mode). */
typedef struct placement {
    int bordered;
    mh_pad pad;
    mh_mode mode;
    float cval;
    int origin; /* 0: centred; -1: rows at their lowest origin, columns at their highest; 1: the reverse;
                 * 2: rows one step up, columns one step down (where the side allows) */
} placement;

static const placement placements[] = {
    {0, MH_PAD_VALID, 0, 0.0f, 0},         {0, MH_PAD_SAME, 0, 0.0f, 0},         {0, MH_PAD_FULL, 0, 0.0f, 0},
    {1, 0, MH_MODE_CONSTANT, 2.5f, 0},     {1, 0, MH_MODE_REFLECT, 0.0f, 0},     {1, 0, MH_MODE_MIRROR, 0.0f, -1},
    {1, 0, MH_MODE_NEAREST, 0.0f, 1},      {1, 0, MH_MODE_WRAP, 0.0f, 0},        {1, 0, MH_MODE_REFLECT, 0.0f, 1},
    {1, 0, MH_MODE_CONSTANT, NAN, 0},      {1, 0, MH_MODE_WRAP, 0.0f, 2},
};

static long long origin_of(int side, int sign)
{
    if (sign == 2) return (side - 1) / 2 < 1 ? (side - 1) / 2 : 1;
    if (sign == -2) return side / 2 < 1 ? -(side / 2) : -1;
    return sign < 0 ? -(side / 2) : sign > 0 ? (side - 1) / 2 : 0;
}

/* The problem's arguments: its sizes, the buffers given, and the placement. */
static mh_status args_of(mh_context *ctx, mh_args *a, const tcase *c, const placement *pl, const float *in,
                         const float *filter, float *out)
{
    if (!pl->bordered) return mh_conv2d_args_init(ctx, a, in, c->rows, c->cols, filter, c->kr, c->kc, pl->pad, out);
    return mh_conv2d_mode_args_init(ctx, a, in, c->rows, c->cols, filter, c->kr, c->kc, pl->mode, pl->cval,
                                    origin_of((int)c->kr, pl->origin), origin_of((int)c->kc, -pl->origin), out);
}

/* The public call for the placement. */
static mh_status call(mh_context *ctx, const char *name, const tcase *c, const placement *pl, const float *in,
                      const float *filter, float *out)
{
    if (!pl->bordered) return mh_conv2d(ctx, name, in, c->rows, c->cols, filter, c->kr, c->kc, pl->pad, out);
    return mh_conv2d_mode(ctx, name, in, c->rows, c->cols, filter, c->kr, c->kc, pl->mode, pl->cval,
                          origin_of((int)c->kr, pl->origin), origin_of((int)c->kc, -pl->origin), out);
}

typedef struct problem {
    const tcase *c;
    const placement *pl;
    mh_args shape;
    int rank1;
    float *in, *filter;
    double *ref, *mag;
    unsigned long long seed;
} problem;

static void make_problem(problem *p, const tcase *c, const placement *pl, int rank1, unsigned long long seed)
{
    p->c = c, p->pl = pl, p->rank1 = rank1, p->seed = seed;
    args_of(NULL, &p->shape, c, pl, NULL, NULL, NULL);
    const mh_conv2d_args *s = &p->shape.conv2d;
    const size_t outs = s->out_rows * s->out_cols;
    p->in = malloc(c->rows * c->cols * sizeof(float));
    p->filter = malloc(c->kr * c->kc * sizeof(float));
    p->ref = malloc(outs * sizeof(double));
    p->mag = malloc(outs * sizeof(double));
    mh_fill_uniform(p->in, c->rows * c->cols, seed, 1.0f);
    if (rank1) { /* an outer product u v^T of random factors */
        float u[MH_CONV2D_MAX_K], v[MH_CONV2D_MAX_K];
        mh_fill_uniform(u, c->kr, seed + 1, 1.0f);
        mh_fill_uniform(v, c->kc, seed + 2, 1.0f);
        for (size_t i = 0; i < c->kr; ++i)
            for (size_t j = 0; j < c->kc; ++j) p->filter[i * c->kc + j] = u[i] * v[j];
    } else {
        mh_fill_uniform(p->filter, c->kr * c->kc, seed + 1, 1.0f);
    }
#pragma omp parallel for schedule(dynamic, 64)
    for (long long i = 0; i < (long long)outs; ++i)
        mh_conv2d_reference_at(s, p->in, p->filter, (size_t)i / s->out_cols, (size_t)i % s->out_cols, &p->ref[i],
                               &p->mag[i]);
}

static void free_problem(problem *p) { free(p->in), free(p->filter), free(p->ref), free(p->mag); }

static const char *describe(const problem *p, char *buf, size_t len)
{
    char where[96];
    if (p->pl->bordered)
        snprintf(where, sizeof where, "mode=%s cval=%g origin=(%d, %d)", mh_mode_name(p->pl->mode), (double)p->pl->cval,
                 p->shape.conv2d.lpr - p->shape.conv2d.krows / 2, p->shape.conv2d.lpc - p->shape.conv2d.kcols / 2);
    else
        snprintf(where, sizeof where, "pad=%s", mh_pad_name(p->pl->pad));
    snprintf(buf, len, "%zux%zu image, %zux%zu %s filter, %s, misaligned=%d, seed=%llu", p->c->rows, p->c->cols,
             p->c->kr, p->c->kc, p->rank1 ? "rank-1" : "random", where, p->c->misaligned, p->seed);
    return buf;
}

/* The FFT rows' normwise bound (docs/conv2d.md, "fft-os"), as conv1d's: a tile's error is at
 * most C u log2(nr nc) |x_t|_2 |f|_1 (u = 2^-24, C = 16: two transforms and a product), nr and nc
 * at most 8192, and no input is read by more than 2 tiles along either axis, so over the image
 * |out - ref|_2 <= C u log2(8192^2) 2 |x|_2 |f|_1, x the inputs the windows read (the border's
 * values included). (The rel_l2 <= 2e-6 docs/conv2d.md quotes is the bench's, on uniform data: it
 * does not hold where outputs cancel, a 3 x 3 filter over one pixel say.) */
static int fft_bound_ok(const mh_conv2d_args *s, const float *in, const float *filter, const float *got,
                        const double *ref, double *err_out, double *bound_out, double *rel_out)
{
    const int mode = s->bordered ? (int)s->mode : MH_MODE_CONSTANT;
    const float cval = s->bordered && isfinite(s->cval) ? s->cval : 0.0f; /* a NaN one: outputs compared apart */
    double x2 = 0.0, f1 = 0.0, err2 = 0.0, ref2 = 0.0;
    const long long er = (long long)s->out_rows + s->krows - 1, ec = (long long)s->out_cols + s->kcols - 1;
    for (long long i = 0; i < er; ++i) {
        const long long r = mh_border_index(i - s->lpr, (long long)s->rows, mode);
        for (long long j = 0; j < ec; ++j) {
            const long long c = r < 0 ? -1 : mh_border_index(j - s->lpc, (long long)s->cols, mode);
            const double v = c < 0 ? cval : in[r * (long long)s->cols + c];
            x2 += v * v;
        }
    }
    for (int i = 0; i < s->krows * s->kcols; ++i) f1 += fabs((double)filter[i]);
    for (size_t i = 0; i < s->out_rows * s->out_cols; ++i) {
        err2 += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
        ref2 += ref[i] * ref[i];
    }
    *err_out = sqrt(err2), *bound_out = 16.0 * 0x1p-24 * 26.0 * 2.0 * sqrt(x2) * f1;
    *rel_out = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
    return *err_out <= *bound_out;
}

/* A NaN constant: the outputs it touches compared apart, the others moved to the front so that
 * the L2 test counts only them (a 5 x 5 image under a 5 x 5 filter leaves one). at[i]: where the
 * i-th kept output lies in out. Returns how many are kept. */
static size_t keep_untouched(const double *full_ref, size_t outs, double *ref, double *mag, float *got, size_t **at)
{
    size_t kept = 0;
    *at = malloc((outs ? outs : 1) * sizeof **at);
    for (size_t i = 0; i < outs; ++i) {
        if (isnan(full_ref[i])) continue;
        (*at)[kept] = i, ref[kept] = ref[i], mag[kept] = mag[i], got[kept++] = got[i];
    }
    return kept;
}

static int is_fft_row(const mh_row *row) { return row && strncmp(row->info.name, "conv2d/fft", 10) == 0; }

static void check_variant(mh_context *ctx, const problem *p, const float *in, const float *filter, const test_out *out,
                          const mh_row *row, int config)
{
    const mh_conv2d_args *s = &p->shape.conv2d;
    const char *name = row ? row->info.name : "auto", *cfg = row && row->configs ? row->configs[config] : "";
    char what[256];
    describe(p, what, sizeof what);
    test_out_poison(out);
    mh_args a;
    args_of(ctx, &a, p->c, p->pl, in, filter, out->data);
    a.config = config;
    char why[512] = "";
    if (row && (s->krows > MH_CONV2D_DIRECT_MAX_K || s->kcols > MH_CONV2D_DIRECT_MAX_K) &&
        !(row->flags & MH_ROW_LARGE_FILTERS)) { /* refused by the dispatcher, by name */
        if (config == 0)
            test_check_refusal(ctx, name, call(ctx, name, p->c, p->pl, in, filter, out->data), "it takes filters up to 31",
                               out, what);
        return;
    }
    if (row && !row->supports(ctx, &a, why, sizeof why)) {
        CHECK(why[0] != '\0', "%s refuses %s without a reason", name, what);
        CHECK(!strstr(why, "pads with zeros only") || !(row->flags & MH_ROW_BORDER_MODES),
              "%s is flagged MH_ROW_BORDER_MODES but refuses %s: %s", name, what, why);
        if (config == 0) test_check_refusal(ctx, name, call(ctx, name, p->c, p->pl, in, filter, out->data), why, out, what);
        return;
    }
    CHECK(!row || !s->bordered || (row->flags & MH_ROW_BORDER_MODES),
          "%s takes %s but is not flagged MH_ROW_BORDER_MODES (the refusals that name the rows taking modes miss it)",
          name, what);
    mh_status st = config == 0 ? call(ctx, row ? name : NULL, p->c, p->pl, in, filter, out->data)
                               : mh_run_row(ctx, row, &a);
    const int rank1 = p->rank1 || s->krows == 1 || s->kcols == 1; /* one row or column: rank 1 anyway */
    if (row && !strcmp(name, "conv2d/separable") && !rank1) { /* must refuse a full-rank filter */
        test_check_refusal(ctx, name, st, "not rank 1 within FP32 accuracy", out, what);
        return;
    }
    if (row && !strcmp(name, "conv2d/lowrank") && st == MH_ERR_UNSUPPORTED) { /* a random filter past 4 terms */
        CHECK(!rank1, "lowrank refused a rank-1 filter on %s: %s", what, mh_context_error(ctx));
        test_check_refusal(ctx, name, st, "not of rank at most 4 within FP32 accuracy", out, what);
        return;
    }
    if (st == MH_OK) st = mh_context_synchronize(ctx);
    CHECK(st == MH_OK, "%s %s on %s: %s: %s", name, cfg, what, mh_status_str(st), mh_context_error(ctx));
    if (st != MH_OK) return;
    size_t broken = test_out_fetch(out);
    mh_error_stats e;
    const size_t outs = s->out_rows * s->out_cols;
    const float *got = out->host + TEST_GUARD;
    size_t nan_missed = 0; /* a NaN constant: NaN exactly where the reference is, compared elsewhere */
    double *ref = p->ref, *mag = p->mag;
    if (isnan(p->pl->cval)) {
        ref = malloc(outs * sizeof(double)), mag = malloc(outs * sizeof(double));
        float *finite_got = malloc(outs * sizeof(float));
        for (size_t i = 0; i < outs; ++i) {
            const int touched = isnan(p->ref[i]);
            nan_missed += touched != (isnan(got[i]) != 0);
            ref[i] = touched ? 0.0 : p->ref[i], mag[i] = touched ? 0.0 : p->mag[i];
            finite_got[i] = touched ? 0.0f : got[i];
        }
        got = finite_got;
    }
    if (is_fft_row(row)) {
        double err, bound, rel;
        const int ok = fft_bound_ok(s, p->in, p->filter, got, ref, &err, &bound, &rel);
        CHECK(broken == 0 && ok, "%s %s on %s: |out - ref|_2 = %.3g (bound %.3g), rel_l2 %.3g, %zu guard words", name,
              cfg, what, err, bound, rel, broken);
        if (ref != p->ref) free(ref), free(mag), free((void *)got);
        return;
    }
    size_t compared = outs, *at = NULL;
    if (ref != p->ref) compared = keep_untouched(p->ref, outs, ref, mag, (float *)got, &at);
    int ok = mh_compare(got, ref, mag, compared, mh_sum_rtol((size_t)s->krows * s->kcols), &e);
    if (at) e.first_bad = at[e.first_bad];
    free(at);
    if (ref != p->ref) free(ref), free(mag), free((void *)got);
    CHECK(nan_missed == 0, "%s %s on %s: %zu outputs NaN where the reference is not, or finite where it is NaN", name,
          cfg, what, nan_missed);
    CHECK(broken == 0, "%s %s on %s wrote %zu guard words outside out", name, cfg, what, broken);
    CHECK(ok, "%s %s on %s: out[%zu][%zu]=%.8g ref %.8g; %zu bad, %zu NaN, rel_l2 %.3g", name, cfg, what,
          e.first_bad / s->out_cols, e.first_bad % s->out_cols, e.first_out, e.first_ref, e.bad, e.nonfinite, e.rel_l2);
}

/* Stacks (mh_conv2d_mode_batched): every row that takes modes filters each image of the stack
 * as it filters that image alone (regtile, walk and tiles in one launch, the others image by
 * image); and a stack of 65537 one-pixel images, past one launch's 65535 images. */
static void check_stacks(mh_context *ctx, int gpu, unsigned long long seed)
{
    static const struct {
        size_t batch, rows, cols, k;
        mh_mode mode;
    } stacks[] = {{3, 37, 51, 5, MH_MODE_REFLECT}, {5, 64, 64, 3, MH_MODE_WRAP}, {2, 129, 300, 11, MH_MODE_CONSTANT},
                  {7, 4, 9, 5, MH_MODE_NEAREST}, {65537, 1, 1, 3, MH_MODE_MIRROR}, {65537, 2, 3, 5, MH_MODE_REFLECT},
                  {3, 90, 600, 7, MH_MODE_NEAREST}, {65537, 1, 2, 7, MH_MODE_WRAP},
                  /* walk's aligned 5 x 5 strips past 2^18 outputs, the border by the ring's kernel */
                  {6, 100, 520, 5, MH_MODE_WRAP}, {4, 130, 512, 5, MH_MODE_CONSTANT}};
    for (size_t si = 0; si < sizeof stacks / sizeof stacks[0]; ++si) {
        const size_t batch = stacks[si].batch, rows = stacks[si].rows, cols = stacks[si].cols, k = stacks[si].k;
        const size_t image = rows * cols, total = batch * image;
        if (total > test_max_n()) continue;
        float *in = malloc(total * sizeof(float)), filter[MH_CONV2D_MAX_K * MH_CONV2D_MAX_K];
        double *ref = malloc(total * sizeof(double)), *mag = malloc(total * sizeof(double));
        mh_fill_uniform(in, total, seed + 77 * si, 1.0f);
        mh_fill_uniform(filter, k * k, seed + 77 * si + 1, 1.0f);
        mh_args one;
        mh_conv2d_mode_args_init(NULL, &one, NULL, rows, cols, NULL, k, k, stacks[si].mode, 0.25f, 0, 0, NULL);
        for (size_t b = 0; b < batch; ++b)
            for (size_t i = 0; i < image; ++i)
                mh_conv2d_reference_at(&one.conv2d, in + b * image, filter, i / cols, i % cols, &ref[b * image + i],
                                       &mag[b * image + i]);
        test_in din = test_in_copy(gpu, in, total, 0), dfilter = test_in_copy(gpu, filter, k * k, 0);
        test_out out = test_out_alloc(gpu, total, 0);
        for (size_t r = 0; r < mh_row_count(MH_OP_CONV2D); ++r) {
            const mh_row *row = mh_row_at(MH_OP_CONV2D, r);
            if (!test_row_fits(row, gpu) || (batch > 100 && strcmp(row->info.name, "conv2d/regtile") &&
                                                strcmp(row->info.name, "conv2d/walk") &&
                                                strcmp(row->info.name, "conv2d/tiles")))
                continue;
            mh_args a;
            mh_conv2d_mode_batched_args_init(ctx, &a, din.data, batch, rows, cols, dfilter.data, k, k,
                                             stacks[si].mode, 0.25f, 0, 0, out.data);
            char why[512];
            if (!row->supports(ctx, &a, why, sizeof why)) continue;
            test_out_poison(&out);
            mh_status st = mh_conv2d_mode_batched(ctx, row->info.name, din.data, batch, rows, cols, dfilter.data, k, k,
                                                  stacks[si].mode, 0.25f, 0, 0, out.data);
            if (st == MH_OK) st = mh_context_synchronize(ctx);
            if ((!strcmp(row->info.name, "conv2d/separable") || !strcmp(row->info.name, "conv2d/lowrank")) &&
                st == MH_ERR_UNSUPPORTED)
                continue; /* full rank */
            CHECK(st == MH_OK, "%s on a stack of %zu %zux%zu: %s", row->info.name, batch, rows, cols,
                  mh_context_error(ctx));
            if (st != MH_OK) continue;
            const size_t broken = test_out_fetch(&out);
            mh_error_stats e = {0};
            int ok = 1;
            if (is_fft_row(row)) { /* image by image, against the normwise bound */
                double err, bound, rel;
                for (size_t b = 0; b < batch && ok; ++b)
                    if (!(ok = fft_bound_ok(&one.conv2d, in + b * image, filter, out.host + TEST_GUARD + b * image,
                                            ref + b * image, &err, &bound, &rel)))
                        e.first_bad = b * image, e.bad = 1;
            } else {
                ok = mh_compare(out.host + TEST_GUARD, ref, mag, total, mh_sum_rtol(k * k), &e);
            }
            CHECK(broken == 0 && ok, "%s on a stack of %zu %zux%zu %zux%zu: image %zu, out[%zu]=%.8g ref %.8g; %zu bad, "
                  "%zu guard words", row->info.name, batch, rows, cols, k, k, e.first_bad / image, e.first_bad % image,
                  e.first_out, e.first_ref, e.bad, broken);
        }
        test_out_free(&out);
        test_release(gpu, din.base), test_release(gpu, dfilter.base);
        free(in), free(ref), free(mag);
    }
    CHECK(mh_conv2d_mode_batched(ctx, NULL, NULL, 0, 4, 4, NULL, 3, 3, MH_MODE_REFLECT, 0.0f, 0, 0, NULL) ==
                  MH_ERR_INVALID_ARGUMENT && strstr(mh_context_error(ctx), "batch = 0"),
          "an empty stack: %s", mh_context_error(ctx));
    CHECK(mh_conv2d_mode_batched(ctx, NULL, NULL, SIZE_MAX / 8, 4, 4, NULL, 3, 3, MH_MODE_REFLECT, 0.0f, 0, 0, NULL) ==
                  MH_ERR_INVALID_ARGUMENT && strstr(mh_context_error(ctx), "overflows"),
          "a stack past size_t: %s", mh_context_error(ctx));
}

/* mh_conv2d_mode_reversed: every row that takes modes gives, with the filter reversed by the
 * context, the bits it gives for mh_conv2d_mode_batched with the filter reversed by the caller;
 * auto likewise. Filters of growing and shrinking size and of even sides in one context (its copy
 * grown and reused), a stack, and the caller's filter left as it was. */
static void check_reversed(mh_context *ctx, int gpu, unsigned long long seed)
{
    static const struct {
        size_t batch, rows, cols, kr, kc;
        mh_mode mode;
        long long or_, oc;
    } cases[] = {{1, 40, 53, 3, 3, MH_MODE_REFLECT, 0, 0},   {1, 64, 70, 5, 5, MH_MODE_CONSTANT, 1, -1},
                 {3, 33, 47, 4, 6, MH_MODE_MIRROR, -1, 2},   {1, 90, 81, 11, 11, MH_MODE_WRAP, 0, 0},
                 {1, 50, 60, 2, 7, MH_MODE_NEAREST, 0, -3},  {2, 20, 300, 1, 9, MH_MODE_REFLECT, 0, 4}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const size_t batch = cases[ci].batch, rows = cases[ci].rows, cols = cases[ci].cols;
        const size_t kr = cases[ci].kr, kc = cases[ci].kc, total = batch * rows * cols, taps = kr * kc;
        if (total > test_max_n()) continue;
        float *in = malloc(total * sizeof(float)), filter[MH_CONV2D_MAX_K], reversed[MH_CONV2D_MAX_K];
        float *want = malloc((total + 2 * TEST_GUARD) * sizeof(float));
        mh_fill_uniform(in, total, seed + 31 * ci, 1.0f);
        mh_fill_uniform(filter, taps, seed + 31 * ci + 1, 1.0f);
        for (size_t i = 0; i < taps; ++i) reversed[i] = filter[taps - 1 - i];
        test_in din = test_in_copy(gpu, in, total, 0), dfilter = test_in_copy(gpu, filter, taps, 0);
        test_in drev = test_in_copy(gpu, reversed, taps, 0);
        test_out out = test_out_alloc(gpu, total, 0);
        for (size_t r = 0; r <= mh_row_count(MH_OP_CONV2D); ++r) { /* every row, then auto */
            const mh_row *row = r < mh_row_count(MH_OP_CONV2D) ? mh_row_at(MH_OP_CONV2D, r) : NULL;
            if (row && !test_row_fits(row, gpu)) continue;
            const char *name = row ? row->info.name : NULL;
            test_out_poison(&out);
            mh_status st = mh_conv2d_mode_batched(ctx, name, din.data, batch, rows, cols, drev.data, kr, kc,
                                                  cases[ci].mode, 0.5f, cases[ci].or_, cases[ci].oc, out.data);
            if (st == MH_OK) st = mh_context_synchronize(ctx);
            if (st != MH_OK) { /* a row that refuses the call refuses it reversed too */
                test_out_poison(&out);
                const mh_status again = mh_conv2d_mode_reversed(ctx, name, din.data, batch, rows, cols, dfilter.data,
                                                                kr, kc, cases[ci].mode, 0.5f, cases[ci].or_,
                                                                cases[ci].oc, out.data);
                CHECK(again == st, "%s case %zu: refused plainly (%d) but reversed %d", name ? name : "auto", ci, st,
                      again);
                continue;
            }
            test_out_fetch(&out);
            memcpy(want, out.host, (total + 2 * TEST_GUARD) * sizeof(float));
            test_out_poison(&out);
            st = mh_conv2d_mode_reversed(ctx, name, din.data, batch, rows, cols, dfilter.data, kr, kc, cases[ci].mode,
                                         0.5f, cases[ci].or_, cases[ci].oc, out.data);
            if (st == MH_OK) st = mh_context_synchronize(ctx);
            CHECK(st == MH_OK, "%s case %zu reversed: %s", name ? name : "auto", ci, mh_context_error(ctx));
            if (st != MH_OK) continue;
            const size_t broken = test_out_fetch(&out);
            CHECK(broken == 0 && memcmp(want, out.host, (total + 2 * TEST_GUARD) * sizeof(float)) == 0,
                  "%s case %zu (%zux%zu, %zux%zu filter): the reversed call's bits differ from the caller's reversal",
                  name ? name : "auto", ci, rows, cols, kr, kc);
        }
        CHECK(test_in_unchanged(&dfilter, filter, taps), "case %zu: the caller's filter was written", ci);
        test_out_free(&out);
        test_release(gpu, din.base), test_release(gpu, dfilter.base), test_release(gpu, drev.base);
        free(in), free(want);
    }
    CHECK(mh_conv2d_mode_reversed(ctx, NULL, NULL, 1, 4, 4, NULL, 3, 3, MH_MODE_REFLECT, 0.0f, 0, 0, NULL) ==
                  MH_ERR_INVALID_ARGUMENT,
          "a reversed call without arrays: %s", mh_context_error(ctx));
    CHECK(mh_conv2d_mode_reversed(ctx, NULL, NULL, 1, 4, 4, NULL, 3, 3, (mh_mode)9, 0.0f, 0, 0, NULL) ==
                  MH_ERR_INVALID_ARGUMENT && strstr(mh_context_error(ctx), "mode"),
          "a reversed call with a bad mode: %s", mh_context_error(ctx));
}

/* ---- filters of low rank: conv2d/lowrank and plans ---------------------------------------- */

/* A Gaussian's 1-D taps (sum 1), in double. */
static void gauss1d(double *g, int k, double sigma)
{
    double sum = 0.0;
    for (int i = 0; i < k; ++i) sum += g[i] = exp(-(i - (k - 1) / 2.0) * (i - (k - 1) / 2.0) / (2 * sigma * sigma));
    for (int i = 0; i < k; ++i) g[i] /= sum;
}

/* A k x k difference of Gaussians of sigmas s1 and s2, made in double and rounded once. */
static void difference_of_gaussians(float *f, int k, double s1, double s2)
{
    double a[MH_CONV2D_MAX_K], b[MH_CONV2D_MAX_K];
    gauss1d(a, k, s1), gauss1d(b, k, s2);
    for (int i = 0; i < k * k; ++i) f[i] = (float)(a[i / k] * a[i % k] - b[i / k] * b[i % k]);
}

/* Filters of rank 1, 2, 3, 2 and 2: a Gaussian 31 x 31 (sigma 5), a difference of Gaussians
 * 21 x 21 (sigma 2 and 3.2), a 5 x 9 sum of three outer products of small integers, a 27 x 27
 * filter symmetric left to right only (along its rows two Gaussians, down its columns uneven
 * integers: lowrank's symmetric instance, its column factors uneven), and its transpose at
 * 23 x 23 (symmetric top to bottom only: the two-term instance of its size without it). */
static int low_rank_filter(int which, float *f, int *kr, int *kc)
{
    double a[MH_CONV2D_MAX_K], b[MH_CONV2D_MAX_K];
    if (which == 0) {
        *kr = *kc = 31, gauss1d(a, 31, 5.0);
        for (int i = 0; i < 961; ++i) f[i] = (float)(a[i / 31] * a[i % 31]);
        return 1;
    }
    if (which == 1) {
        *kr = *kc = 21, difference_of_gaussians(f, 21, 2.0, 3.2);
        return 2;
    }
    if (which == 2) {
        *kr = 5, *kc = 9;
        for (int i = 0; i < 5; ++i)
            for (int j = 0; j < 9; ++j) f[i * 9 + j] = (float)((i + 1) * (j + 1) + 20 + (i % 2) * (j % 3));
        return 3;
    }
    const int k = which == 3 ? 27 : 23;
    *kr = *kc = k, gauss1d(a, k, 2.5), gauss1d(b, k, 6.0);
    for (int i = 0; i < k * k; ++i) {
        const int along = which == 3 ? i % k : i / k, across = which == 3 ? i / k : i % k;
        f[i] = (float)((across % 5 + 1) * a[along] + (across % 3 + 1) * b[along]);
    }
    return 2;
}

/* conv2d/lowrank, plainly and through a plan, on filters of rank 1 to 3: every padding and
 * modes, sizes off the tile (701 rows: several segments a column of blocks, the last short;
 * 40000 rows of one strip: segments long enough that a block's steps meet every slot of its
 * rings; 130000 rows: segments long enough for several waves at 8-row bands),
 * against the float64 reference within the per-element bound; an image with an Inf and a NaN
 * is non-finite exactly where the reference is (an Inf may come out as NaN past one term: the
 * terms' infinities meet); planned calls by auto too; a plan of the wrong device or NULL is
 * refused. */
static void check_lowrank(mh_context *ctx, int gpu, unsigned long long seed)
{
    static const struct {
        size_t rows, cols;
        int pad; /* an mh_pad, or -1: mode reflect with origin (1, -1) */
    } shapes[] = {{67, 1028, MH_PAD_SAME}, {40, 45, MH_PAD_VALID}, {33, 200, MH_PAD_FULL},
                  {70, 300, -1},         {3, 4, -1},             {701, 130, MH_PAD_SAME},
                  {40000, 8, MH_PAD_SAME}, {130000, 5, MH_PAD_SAME}};
    for (int which = 0; which < 5; ++which) {
        float filter[MH_CONV2D_MAX_K * MH_CONV2D_MAX_K];
        int kr, kc;
        const int rank = low_rank_filter(which, filter, &kr, &kc);
        test_in dfilter = test_in_copy(gpu, filter, (size_t)kr * kc, 0);
        mh_conv2d_plan *plan = NULL;
        CHECK(mh_conv2d_plan_create(ctx, filter, kr, kc, &plan) == MH_OK && mh_conv2d_plan_rank(plan) == rank,
              "plan of the %dx%d filter of rank %d: rank %d, %s", kr, kc, rank, mh_conv2d_plan_rank(plan),
              mh_context_error(ctx));
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
            mh_args a;
            const int bordered = shapes[si].pad < 0;
            const size_t rows = shapes[si].rows, cols = shapes[si].cols;
            if (rows * cols > test_max_n()) continue;
            if (bordered) {
                if (mh_conv2d_mode_args_init(ctx, &a, NULL, rows, cols, NULL, kr, kc, MH_MODE_REFLECT, 0.0f,
                                             kr > 1, -(kc > 1), NULL) != MH_OK)
                    continue;
            } else if (mh_conv2d_args_init(ctx, &a, NULL, rows, cols, NULL, kr, kc, (mh_pad)shapes[si].pad, NULL) !=
                       MH_OK) {
                continue; /* valid with a filter larger than the image */
            }
            const size_t n = rows * cols, outs = a.conv2d.out_rows * a.conv2d.out_cols;
            float *in = malloc(n * sizeof(float));
            double *ref = malloc(outs * sizeof(double)), *mag = malloc(outs * sizeof(double));
            mh_fill_uniform(in, n, seed + 100 * which + si, 1.0f);
            for (int poisoned = 0; poisoned <= 1; ++poisoned) {
                if (poisoned) in[n / 2] = INFINITY, in[n / 3] = NAN;
                for (size_t i = 0; i < outs; ++i)
                    mh_conv2d_reference_at(&a.conv2d, in, filter, i / a.conv2d.out_cols, i % a.conv2d.out_cols, &ref[i],
                                           &mag[i]);
                test_in din = test_in_copy(gpu, in, n, 0);
                test_out out = test_out_alloc(gpu, outs, 0);
                for (int planned = 0; planned <= 1; ++planned) {
                    for (int named = 0; named <= planned; ++named) { /* planned: by name and by auto */
                        const char *variant = named || !planned ? "lowrank" : NULL;
                        char what[200];
                        snprintf(what, sizeof what, "%s%s on %zux%zu %s, %dx%d filter of rank %d%s",
                                 variant ? "lowrank" : "auto", planned ? " planned" : "", rows, cols,
                                 bordered ? "reflect" : mh_pad_name((mh_pad)shapes[si].pad), kr, kc, rank,
                                 poisoned ? ", an Inf and a NaN" : "");
                        test_out_poison(&out);
                        mh_status st;
                        if (planned && bordered)
                            st = mh_conv2d_planned_mode(ctx, variant, plan, din.data, 1, rows, cols, MH_MODE_REFLECT,
                                                        0.0f, kr > 1, -(kc > 1), out.data);
                        else if (planned)
                            st = mh_conv2d_planned(ctx, variant, plan, din.data, rows, cols, (mh_pad)shapes[si].pad,
                                                   out.data);
                        else if (bordered)
                            st = mh_conv2d_mode(ctx, variant, din.data, rows, cols, dfilter.data, kr, kc,
                                                MH_MODE_REFLECT, 0.0f, kr > 1, -(kc > 1), out.data);
                        else
                            st = mh_conv2d(ctx, variant, din.data, rows, cols, dfilter.data, kr, kc,
                                           (mh_pad)shapes[si].pad, out.data);
                        if (st == MH_OK) st = mh_context_synchronize(ctx);
                        if (!gpu && variant) { /* no lowrank row on the CPU */
                            CHECK(st == MH_ERR_UNSUPPORTED, "%s: %s", what, mh_status_str(st));
                            continue;
                        }
                        CHECK(st == MH_OK, "%s: %s", what, mh_context_error(ctx));
                        if (st != MH_OK) continue;
                        const size_t broken = test_out_fetch(&out);
                        const float *got = out.host + TEST_GUARD;
                        size_t finiteness = 0;
                        double *r2 = malloc(outs * sizeof(double)), *m2 = malloc(outs * sizeof(double));
                        float *g2 = malloc(outs * sizeof(float));
                        for (size_t i = 0; i < outs; ++i) {
                            const int fin = isfinite(ref[i]);
                            finiteness += fin != (isfinite(got[i]) != 0);
                            r2[i] = fin ? ref[i] : 0.0, m2[i] = fin ? mag[i] : 0.0, g2[i] = fin ? got[i] : 0.0f;
                        }
                        mh_error_stats e;
                        const int ok = mh_compare(g2, r2, m2, outs, mh_sum_rtol((size_t)kr * kc), &e);
                        CHECK(broken == 0 && finiteness == 0 && ok,
                              "%s: %zu guard words, %zu outputs finite where the reference is not or the reverse; "
                              "out[%zu]=%.8g ref %.8g, %zu bad", what, broken, finiteness, e.first_bad, e.first_out,
                              e.first_ref, e.bad);
                        free(r2), free(m2), free(g2);
                    }
                }
                test_out_free(&out);
                test_release(gpu, din.base);
            }
            free(in), free(ref), free(mag);
        }
        mh_conv2d_plan_destroy(plan);
        test_release(gpu, dfilter.base);
    }
    /* bad plans */
    float f[MH_CONV2D_MAX_K * MH_CONV2D_MAX_K];
    int kr, kc;
    low_rank_filter(1, f, &kr, &kc);
    mh_conv2d_plan *plan = NULL;
    CHECK(mh_conv2d_plan_create(ctx, f, kr, kc, NULL) == MH_ERR_INVALID_ARGUMENT, "a NULL plan pointer taken");
    CHECK(mh_conv2d_plan_create(ctx, f, 256, 3, &plan) == MH_ERR_INVALID_ARGUMENT && !plan &&
              strstr(mh_context_error(ctx), "krows = 256"), "a 256-row filter planned: %s", mh_context_error(ctx));
    CHECK(mh_conv2d_planned(ctx, NULL, NULL, f, 4, 4, MH_PAD_SAME, f) == MH_ERR_INVALID_ARGUMENT &&
              strstr(mh_context_error(ctx), "plan is NULL"), "a NULL plan run: %s", mh_context_error(ctx));
    CHECK(mh_conv2d_planned_mode(ctx, NULL, NULL, f, 1, 4, 4, MH_MODE_REFLECT, 0.0f, 0, 0, f) ==
                  MH_ERR_INVALID_ARGUMENT && strstr(mh_context_error(ctx), "plan is NULL"),
          "a NULL plan run with a mode: %s", mh_context_error(ctx));
    mh_context *other = NULL;
    if (gpu && mh_context_create(&other, MH_CPU) == MH_OK &&
        mh_conv2d_plan_create(ctx, f, kr, kc, &plan) == MH_OK) {
        float x[16] = {0}, y[16];
        CHECK(mh_conv2d_planned(other, NULL, plan, x, 4, 4, MH_PAD_SAME, y) == MH_ERR_INVALID_ARGUMENT &&
                  strstr(mh_context_error(other), "plan was made for device"),
              "a device plan run on the CPU: %s", mh_context_error(other));
        float *dev = test_alloc(gpu, 9 * sizeof(float));
        mh_conv2d_plan *bad = NULL;
        CHECK(mh_conv2d_plan_create(other, dev, 3, 3, &bad) == MH_ERR_INVALID_ARGUMENT && !bad &&
                  strstr(mh_context_error(other), "host pointers"),
              "a CPU plan of device memory: %s", mh_context_error(other));
        test_release(gpu, dev);
    }
    mh_conv2d_plan_destroy(plan);
    mh_context_destroy(other);
}

/* Whether the environment's row lists and size bound (MEMHIER_TEST_ROWS, _SKIP_ROWS, _MAX_N) keep
 * a planned case of conv2d/`variant` on n pixels. */
static int planned_case_kept(const char *variant, size_t n)
{
    char name[64];
    snprintf(name, sizeof name, "conv2d/%s", variant);
    return n <= test_max_n() && test_name_kept(name);
}

/* conv2d/lowrank's 16-row instances for symmetric row factors, which it takes from 2048^2 outputs
 * up to 23 a side: differences of Gaussians of 17, 21 and 23 (17: its rings hold one group of rows
 * ahead, the others two) on a 2100 x 2003 image, plainly (21) and planned, NaN-poisoned, against
 * the float64 reference on whole rows: the first and last 40 and every 37th between. */
static void check_lowrank_large(mh_context *ctx, int gpu, unsigned long long seed)
{
    const size_t rows = 2100, cols = 2003, n = rows * cols;
    if (!gpu || !planned_case_kept("lowrank", n)) return;
    float *in = malloc(n * sizeof(float));
    double *ref = malloc(cols * sizeof(double)), *mag = malloc(cols * sizeof(double));
    mh_fill_uniform(in, n, seed + 7, 1.0f);
    test_in din = test_in_copy(gpu, in, n, 0);
    static const int sides[] = {17, 21, 23};
    for (size_t si = 0; si < sizeof sides / sizeof sides[0]; ++si) {
        const int k = sides[si];
        float filter[31 * 31];
        difference_of_gaussians(filter, k, k / 10.0, k / 6.0);
        mh_conv2d_plan *plan = NULL;
        CHECK(mh_conv2d_plan_create(ctx, filter, k, k, &plan) == MH_OK && mh_conv2d_plan_rank(plan) == 2,
              "plan of a %dx%d difference of Gaussians: rank %d, %s", k, k, mh_conv2d_plan_rank(plan),
              mh_context_error(ctx));
        test_in dfilter = test_in_copy(gpu, filter, (size_t)k * k, 0);
        mh_args args;
        mh_conv2d_args_init(ctx, &args, NULL, rows, cols, NULL, k, k, MH_PAD_SAME, NULL);
        for (int planned = k == 21 ? 0 : 1; planned <= 1 && plan; ++planned) {
            test_out out = test_out_alloc(gpu, n, 0);
            test_out_poison(&out);
            mh_status st = planned ? mh_conv2d_planned(ctx, "lowrank", plan, din.data, rows, cols, MH_PAD_SAME, out.data)
                                   : mh_conv2d(ctx, "lowrank", din.data, rows, cols, dfilter.data, k, k, MH_PAD_SAME,
                                               out.data);
            if (st == MH_OK) st = mh_context_synchronize(ctx);
            CHECK(st == MH_OK, "lowrank%s on %zux%zu, %dx%d DoG: %s", planned ? " planned" : "", rows, cols, k, k,
                  mh_context_error(ctx));
            const size_t broken = st == MH_OK ? test_out_fetch(&out) : 0;
            size_t bad_rows = 0, first_bad = 0;
            for (size_t y = 0; y < rows && st == MH_OK; ++y) {
                if (y >= 40 && y + 40 < rows && y % 37 != 0) continue;
                for (size_t x = 0; x < cols; ++x) mh_conv2d_reference_at(&args.conv2d, in, filter, y, x, &ref[x], &mag[x]);
                mh_error_stats e;
                if (!mh_compare(out.host + TEST_GUARD + y * cols, ref, mag, cols, mh_sum_rtol((size_t)k * k), &e) &&
                    bad_rows++ == 0)
                    first_bad = y;
            }
            CHECK(broken == 0 && bad_rows == 0, "lowrank%s on %zux%zu, %dx%d DoG: %zu rows outside the bound (the first "
                  "%zu), %zu guard words", planned ? " planned" : "", rows, cols, k, k, bad_rows, first_bad, broken);
            test_out_free(&out);
        }
        mh_conv2d_plan_destroy(plan);
        test_release(gpu, dfilter.base);
    }
    test_release(gpu, din.base);
    free(in), free(ref), free(mag);
}

/* conv2d/fft-tile, fft-3pass and tc through a plan, which made the filter's spectrum or Toeplitz
 * panels once: the same bits as the plain call, which makes them itself, with zero padding and
 * (but tc, which pads with zeros only) with a mode, square, wide and one-row filters, images of
 * one tile (pair) and of many; fft-3pass also on a plan of a filter within 31 a side, which keeps
 * only fft-tile's spectrum and tc's panels. tc where the device runs it (compute capability 9.0). */
static void check_planned(mh_context *ctx, int gpu, unsigned long long seed)
{
    static const struct {
        const char *variant;
        size_t rows, cols;
        int kr, kc;
    } shapes[] = {{"fft-tile", 300, 257, 31, 31},  {"fft-tile", 70, 90, 15, 7},   {"fft-tile", 5, 6, 1, 31},
                  {"fft-3pass", 600, 1100, 63, 40}, {"fft-3pass", 70, 90, 15, 7}, {"fft-3pass", 5, 300, 1, 255},
                  {"tc", 300, 257, 31, 31},        {"tc", 130, 200, 11, 13},     {"tc", 70, 90, 5, 5},
                  {"tc", 40, 600, 1, 31}};
    if (!gpu) return;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
        const char *variant = shapes[si].variant;
        const size_t rows = shapes[si].rows, cols = shapes[si].cols, n = rows * cols;
        const int kr = shapes[si].kr, kc = shapes[si].kc, modes = strcmp(variant, "tc") != 0;
        if (!planned_case_kept(variant, n) ||
            mh_conv2d_supports(ctx, variant, rows, cols, kr, kc, MH_PAD_SAME) == MH_ERR_UNSUPPORTED)
            continue;
        float *f = malloc((size_t)kr * kc * sizeof(float)), *in = malloc(n * sizeof(float));
        mh_fill_uniform(f, (size_t)kr * kc, seed + 31 * si, 1.0f);
        mh_fill_uniform(in, n, seed + 31 * si + 1, 1.0f);
        test_in din = test_in_copy(gpu, in, n, 0), dfilter = test_in_copy(gpu, f, (size_t)kr * kc, 0);
        mh_conv2d_plan *plan = NULL;
        CHECK(mh_conv2d_plan_create(ctx, f, kr, kc, &plan) == MH_OK, "plan of a %dx%d filter: %s", kr, kc,
              mh_context_error(ctx));
        test_out plain = test_out_alloc(gpu, n, 0), planned = test_out_alloc(gpu, n, 0);
        for (int moded = 0; plan && moded <= modes; ++moded) {
            test_out_poison(&plain), test_out_poison(&planned);
            mh_status a, b;
            if (moded) {
                a = mh_conv2d_mode(ctx, variant, din.data, rows, cols, dfilter.data, kr, kc, MH_MODE_WRAP, 0.0f, 0, 0,
                                   plain.data);
                b = mh_conv2d_planned_mode(ctx, variant, plan, din.data, 1, rows, cols, MH_MODE_WRAP, 0.0f, 0, 0,
                                           planned.data);
            } else {
                a = mh_conv2d(ctx, variant, din.data, rows, cols, dfilter.data, kr, kc, MH_PAD_SAME, plain.data);
                b = mh_conv2d_planned(ctx, variant, plan, din.data, rows, cols, MH_PAD_SAME, planned.data);
            }
            if (a == MH_OK && b == MH_OK) b = mh_context_synchronize(ctx);
            CHECK(a == MH_OK && b == MH_OK, "%s on %zux%zu, %dx%d filter%s: %s", variant, rows, cols, kr, kc,
                  moded ? ", wrap" : "", mh_context_error(ctx));
            const size_t broken = test_out_fetch(&plain) + test_out_fetch(&planned);
            CHECK(!broken && test_out_written(&plain) == n &&
                      !memcmp(plain.host + TEST_GUARD, planned.host + TEST_GUARD, n * sizeof(float)),
                  "%s planned on %zux%zu, %dx%d filter%s: not the plain call's bits (%zu guard words changed)",
                  variant, rows, cols, kr, kc, moded ? ", wrap" : "", broken);
        }
        mh_conv2d_plan_destroy(plan);
        test_out_free(&plain), test_out_free(&planned);
        test_release(gpu, din.base), test_release(gpu, dfilter.base);
        free(in), free(f);
    }
}

/* Typed images (mh_conv2d_typed): every row that converts in its loaders computes what it
 * computes on the float32 copy of the image, each output cast into out_type, bit for bit; the
 * other rows refuse with the reason and write nothing; bad types are refused by name. Images
 * of random values over each input type's range, stacks, rows of a width that is no multiple of
 * 4 (element-wise edges), misaligned pointers. */
static void check_typed(mh_context *ctx, int gpu, unsigned long long seed)
{
    static const struct {
        mh_dtype in, out;
    } types[] = {{MH_U8, MH_U8}, {MH_U16, MH_U16}, {MH_I16, MH_I16}, {MH_F16, MH_F16},
                 {MH_I8, MH_F32}, {MH_F32, MH_U8}, {MH_U8, MH_I16}};
    static const struct {
        size_t batch, rows, cols, k;
        mh_mode mode;
        float cval;
        size_t offset; /* elements past an aligned address */
    } shapes[] = {{3, 37, 64, 3, MH_MODE_REFLECT, 0.0f, 0}, {2, 20, 45, 5, MH_MODE_CONSTANT, 300.5f, 0},
                  {1, 3, 2, 5, MH_MODE_MIRROR, 0.0f, 1},     {2, 33, 40, 5, MH_MODE_WRAP, 0.0f, 3},
                  {1, 16, 19, 7, MH_MODE_NEAREST, 0.0f, 0},  {2, 41, 333, 11, MH_MODE_REFLECT, 0.0f, 1},
                  {1, 19, 700, 15, MH_MODE_WRAP, 0.0f, 0},   {1, 9, 36, 21, MH_MODE_CONSTANT, -7.0f, 2},
                  /* past 2^18 outputs a call: walk's walking kernel and its ring (ONE_KERNEL_MAX_OUTPUTS) */
                  {1, 400, 700, 5, MH_MODE_REFLECT, 0.0f, 1}, {4, 260, 300, 3, MH_MODE_WRAP, 0.0f, 0}};
    size_t ran[64] = {0}; /* typed calls each row took */
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ++ti)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
            const mh_dtype tin = types[ti].in, tout = types[ti].out;
            const size_t k = shapes[si].k, n = shapes[si].batch * shapes[si].rows * shapes[si].cols;
            const size_t ib = mh_dtype_size(tin), ob = mh_dtype_size(tout), off = shapes[si].offset;
            float *x = malloc(n * sizeof(float)), filter[21 * 21], *want = malloc(n * sizeof(float));
            unsigned char *in = malloc(n * ib), *got = malloc(n * ob + 64);
            mh_fill_uniform(x, n, seed + 31 * ti + si, 1.0f);
            mh_fill_uniform(filter, k * k, seed + 7 * si + 1, 1.0f);
            for (size_t i = 0; i < n; ++i) { /* a value of the type, spread over its range */
                const float span = tin == MH_U8 ? 255.0f : tin == MH_I8 ? 127.0f : tin == MH_U16 ? 65535.0f
                                   : tin == MH_I16 ? 32767.0f : 100.0f;
                mh_store_value(in, i, tin, mh_cast_value(tin == MH_U8 || tin == MH_U16 ? (x[i] + 1.0f) / 2 * span
                                                                                        : x[i] * span, tin));
                x[i] = mh_load_value(in, i, tin);
            }
            void *din = test_alloc(gpu, (n + 4) * ib), *dout = test_alloc(gpu, (n + 4) * ob + 64);
            float *dx = test_alloc(gpu, n * sizeof(float)), *dy = test_alloc(gpu, n * sizeof(float));
            float *dfilter = test_alloc(gpu, k * k * sizeof(float));
            unsigned char *din_at = (unsigned char *)din + off * ib, *dout_at = (unsigned char *)dout + off * ob;
            test_put(gpu, din_at, in, n * ib);
            test_put(gpu, dx, x, n * sizeof(float));
            test_put(gpu, dfilter, filter, k * k * sizeof(float));
            for (size_t r = 0; r < mh_row_count(MH_OP_CONV2D); ++r) {
                const mh_row *row = mh_row_at(MH_OP_CONV2D, r);
                if (!test_row_fits(row, gpu)) continue;
                memset(got, 0xab, n * ob + 64);
                test_put(gpu, dout, got, n * ob + 64);
                mh_status st = mh_conv2d_typed(ctx, row->info.name, din_at, tin, shapes[si].batch, shapes[si].rows,
                                               shapes[si].cols, dfilter, k, k, shapes[si].mode, shapes[si].cval, 0, 0,
                                               dout_at, tout);
                if (st == MH_OK) st = mh_context_synchronize(ctx);
                char what[160];
                snprintf(what, sizeof what, "%s on %zu x %zu x %zu %s into %s, %zu x %zu, %s", row->info.name,
                         shapes[si].batch, shapes[si].rows, shapes[si].cols, mh_dtype_name(tin), mh_dtype_name(tout),
                         k, k, mh_mode_name(shapes[si].mode));
                test_get(gpu, got, dout, n * ob + 64);
                size_t outside = 0;
                for (size_t i = 0; i < off * ob; ++i) outside += got[i] != 0xab;
                for (size_t i = (off + n) * ob; i < n * ob + 64; ++i) outside += got[i] != 0xab;
                CHECK(outside == 0, "%s: %zu bytes written outside out", what, outside);
                if (!(row->flags & MH_ROW_IMAGE_DTYPES)) {
                    CHECK(st == MH_ERR_UNSUPPORTED && strstr(mh_context_error(ctx), "float32 only"), "%s: %s", what,
                          mh_context_error(ctx));
                    size_t written = 0;
                    for (size_t i = 0; i < n * ob; ++i) written += got[off * ob + i] != 0xab;
                    CHECK(written == 0, "%s refused but wrote %zu bytes", what, written);
                    continue;
                }
                if (st == MH_ERR_UNSUPPORTED) continue; /* a size the row does not take (walk: 7 x 7) */
                CHECK(st == MH_OK, "%s: %s", what, mh_context_error(ctx));
                ran[r < 64 ? r : 63]++;
                /* the same row on the float32 copy, each output cast */
                st = mh_conv2d_mode_batched(ctx, row->info.name, dx, shapes[si].batch, shapes[si].rows,
                                            shapes[si].cols, dfilter, k, k, shapes[si].mode, shapes[si].cval, 0, 0, dy);
                if (st == MH_OK) st = mh_context_synchronize(ctx);
                CHECK(st == MH_OK, "%s in float32: %s", what, mh_context_error(ctx));
                test_get(gpu, want, dy, n * sizeof(float));
                size_t bad = 0, first = 0;
                for (size_t i = 0; i < n; ++i) {
                    const float g = mh_load_value(got + off * ob, i, tout), w = mh_cast_value(want[i], tout);
                    if (memcmp(&g, &w, sizeof g) && !(isnan(g) && isnan(w)) && !bad++) first = i;
                }
                CHECK(bad == 0, "%s: %zu outputs differ from the float32 run cast, the first [%zu] %.9g against %.9g",
                      what, bad, first, bad ? mh_load_value(got + off * ob, first, tout) : 0.0,
                      bad ? mh_cast_value(want[first], tout) : 0.0);
            }
            test_release(gpu, din), test_release(gpu, dout), test_release(gpu, dx), test_release(gpu, dy);
            test_release(gpu, dfilter);
            free(x), free(want), free(in), free(got);
        }
    for (size_t r = 0; r < mh_row_count(MH_OP_CONV2D) && r < 64; ++r) {
        const mh_row *row = mh_row_at(MH_OP_CONV2D, r);
        if (test_row_fits(row, gpu) && (row->flags & MH_ROW_IMAGE_DTYPES))
            CHECK(ran[r] > 0, "%s takes typed images but ran none of the typed cases", row->info.name);
    }
    float one = 1.0f, o = 0.0f;
    CHECK_REFUSED(ctx, mh_conv2d_typed(ctx, NULL, &one, MH_I32, 1, 1, 1, &one, 1, 1, MH_MODE_REFLECT, 0.0f, 0, 0, &o,
                                       MH_F32),
                  "in_type = 6 (int32)");
    CHECK_REFUSED(ctx, mh_conv2d_typed(ctx, NULL, &one, MH_F32, 1, 1, 1, &one, 1, 1, MH_MODE_REFLECT, 0.0f, 0, 0, &o,
                                       (mh_dtype)99),
                  "out_type = 99");
    CHECK_REFUSED(ctx, mh_conv2d_typed(ctx, NULL, &one, MH_U8, 0, 1, 1, &one, 1, 1, MH_MODE_REFLECT, 0.0f, 0, 0, &o,
                                       MH_U8),
                  "batch = 0");
}

/* A float64 call's outputs as scipy sums them (mh_conv2d_float64's contract), each product in a
 * volatile so that no compiler fuses it into the add. */
static void scipy_sums(const unsigned char *in, mh_dtype tin, size_t batch, long long rows, long long cols,
                       const double *w, int kr, int kc, mh_mode mode, double cval, int lpr, int lpc,
                       unsigned char *out, mh_dtype tout)
{
    for (size_t b = 0; b < batch; ++b)
        for (long long r = 0; r < rows; ++r)
            for (long long c = 0; c < cols; ++c) {
                double sum = 0.0;
                for (int i = 0; i < kr; ++i)
                    for (int j = 0; j < kc; ++j) {
                        if (!(fabs(w[i * kc + j]) > DBL_EPSILON)) continue;
                        const long long y = mh_border_index(r + i - lpr, rows, mode);
                        const long long x = mh_border_index(c + j - lpc, cols, mode);
                        const double v = y < 0 || x < 0 ? cval
                                                         : mh_load_double(in, b * rows * cols + y * cols + x, tin);
                        volatile double product = v * w[i * kc + j];
                        sum += product;
                    }
                mh_store_double(out, b * rows * cols + r * cols + c, tout, sum);
            }
}

/* A value of type t for index i: the type's range, small whole numbers (where a box filter's
 * sum lands on or one rounding below a whole number), dark beside bright, NaN in float inputs. */
static double float64_case_value(mh_dtype t, size_t i, unsigned long long seed)
{
    unsigned long long z = (seed + i) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
    z ^= z >> 29;
    const double u = (double)(z >> 11) / 9007199254740992.0; /* [0, 1) */
    switch (z % 4) {
    case 0: return 5.0; /* a flat patch's value */
    case 1: return t == MH_F64 && z % 97 == 1 ? NAN : floor(u * 8);
    default: break;
    }
    switch (t) {
    case MH_U8: return floor(u * 256);
    case MH_I8: return floor(u * 256) - 128;
    case MH_U16: return floor(u * 65536);
    case MH_I16: return floor(u * 65536) - 32768;
    case MH_U32: return floor(u * 4294967296.0);
    case MH_I32: return floor(u * 4294967296.0) - 2147483648.0;
    case MH_U64: return ldexp(floor(u * 9007199254740992.0), 11); /* up to 2^64, a multiple of 2^11 */
    case MH_I64: return ldexp(floor(u * 9007199254740992.0), 10) - 9223372036854775808.0;
    case MH_F32: return (float)((u - 0.5) * ldexp(1.0, (int)(z % 60) - 30));
    default: return (u - 0.5) * ldexp(1.0, (int)(z % 200) - 100);
    }
}

/* mh_conv2d_float64 on every row flagged for float64 calls and on auto, against scipy_sums bit for
 * bit: types from bytes to 64-bit integers and float64, every mode, stacks, sizes off the
 * blocks, filters from 1 x 1 to 31 x 31 (even, not square, with zeros, weights within
 * DBL_EPSILON of 0 and NaN, which scipy's footprint skips, and 1/9 boxes whose sums fall one
 * rounding below whole numbers); nothing written outside out. The other rows refuse the call. */
static void check_float64(mh_context *ctx, int gpu, unsigned long long seed)
{
    static const struct { mh_dtype in, out; } types[] = {
        {MH_I32, MH_I32}, {MH_F64, MH_F64}, {MH_I64, MH_I64}, {MH_U64, MH_U64}, {MH_U8, MH_U8},
        {MH_U32, MH_F64}, {MH_I16, MH_I8}, {MH_F32, MH_I64}, {MH_I8, MH_F32}, {MH_U16, MH_U32},
    };
    static const struct {
        size_t batch, rows, cols;
        int kr, kc, filter; /* filter: 0 random, 1 the 1/(kr kc) box, 2 random with zeros, tiny and NaN weights */
        mh_mode mode;
        double cval;
        long long origin_r, origin_c;
    } shapes[] = {{1, 37, 70, 3, 3, 1, MH_MODE_REFLECT, 0.0, 0, 0},    {2, 20, 45, 5, 5, 0, MH_MODE_CONSTANT, 300.5, 1, -2},
                  {1, 3, 2, 5, 5, 2, MH_MODE_MIRROR, 0.0, 0, 0},      {3, 33, 40, 2, 7, 2, MH_MODE_WRAP, 0.0, 0, 3},
                  {1, 1, 130, 1, 9, 1, MH_MODE_NEAREST, 0.0, 0, -4},  {1, 130, 1, 9, 1, 0, MH_MODE_REFLECT, 0.0, 4, 0},
                  {1, 1, 1, 1, 1, 0, MH_MODE_CONSTANT, -7.0, 0, 0},   {1, 50, 61, 31, 31, 2, MH_MODE_CONSTANT, NAN, 0, 0},
                  {2, 70, 90, 5, 5, 1, MH_MODE_WRAP, 0.0, -2, 2}};
    size_t ran[64] = {0};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ++ti)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
            const mh_dtype tin = types[ti].in, tout = types[ti].out;
            const int kr = shapes[si].kr, kc = shapes[si].kc;
            const size_t n = shapes[si].batch * shapes[si].rows * shapes[si].cols;
            const size_t ib = mh_dtype_size(tin), ob = mh_dtype_size(tout);
            unsigned char *in = malloc(n * ib), *want = malloc(n * ob), *got = malloc(n * ob + 64);
            double w[31 * 31];
            for (size_t i = 0; i < n; ++i)
                mh_store_double(in, i, tin, float64_case_value(tin, i, seed + 97 * ti + si));
            for (int i = 0; i < kr * kc; ++i) {
                const double u = float64_case_value(MH_F64, (size_t)i, seed + 13 * si + 5);
                w[i] = shapes[si].filter == 1 ? 1.0 / (kr * kc) : isnan(u) ? 0.25 : fmod(u, 3.0);
                if (shapes[si].filter == 2 && i % 5 == 1) w[i] = i % 3 == 0 ? 0.0 : i % 3 == 1 ? DBL_EPSILON / 2 : NAN;
            }
            const int lpr = kr / 2 + (int)shapes[si].origin_r, lpc = kc / 2 + (int)shapes[si].origin_c;
            scipy_sums(in, tin, shapes[si].batch, (long long)shapes[si].rows, (long long)shapes[si].cols, w, kr, kc,
                       shapes[si].mode, shapes[si].cval, lpr, lpc, want, tout);
            void *din = test_alloc(gpu, n * ib), *dout = test_alloc(gpu, n * ob + 64);
            test_put(gpu, din, in, n * ib);
            for (size_t r = 0; r <= mh_row_count(MH_OP_CONV2D); ++r) { /* the last: auto */
                const mh_row *row = r < mh_row_count(MH_OP_CONV2D) ? mh_row_at(MH_OP_CONV2D, r) : NULL;
                if (row && !test_row_fits(row, gpu)) continue;
                memset(got, 0xab, n * ob + 64);
                test_put(gpu, dout, got, n * ob + 64);
                mh_status st = mh_conv2d_float64(ctx, row ? row->info.name : NULL, din, tin, shapes[si].batch,
                                                 shapes[si].rows, shapes[si].cols, w, (size_t)kr, (size_t)kc,
                                                 shapes[si].mode, shapes[si].cval, shapes[si].origin_r,
                                                 shapes[si].origin_c, dout, tout);
                if (st == MH_OK) st = mh_context_synchronize(ctx);
                char what[160];
                snprintf(what, sizeof what, "%s on %zu x %zu x %zu %s into %s, %d x %d, %s",
                         row ? row->info.name : "auto", shapes[si].batch, shapes[si].rows, shapes[si].cols,
                         mh_dtype_name(tin), mh_dtype_name(tout), kr, kc, mh_mode_name(shapes[si].mode));
                test_get(gpu, got, dout, n * ob + 64);
                size_t outside = 0;
                for (size_t i = n * ob; i < n * ob + 64; ++i) outside += got[i] != 0xab;
                CHECK(outside == 0, "%s: %zu bytes written past out", what, outside);
                if (row && !(row->flags & MH_ROW_FLOAT64)) {
                    CHECK(st == MH_ERR_UNSUPPORTED && strstr(mh_context_error(ctx), "float32 only"), "%s: %s", what,
                          mh_context_error(ctx));
                    size_t written = 0;
                    for (size_t i = 0; i < n * ob; ++i) written += got[i] != 0xab;
                    CHECK(written == 0, "%s refused but wrote %zu bytes", what, written);
                    continue;
                }
                CHECK(st == MH_OK, "%s: %s", what, mh_context_error(ctx));
                if (st != MH_OK) continue;
                if (row) ran[r < 64 ? r : 63]++;
                size_t bad = 0, first = 0;
                for (size_t i = 0; i < n; ++i) {
                    const double g = mh_load_double(got, i, tout), e = mh_load_double(want, i, tout);
                    if (memcmp(got + i * ob, want + i * ob, ob) && !(isnan(g) && isnan(e)) && !bad++) first = i;
                }
                CHECK(bad == 0, "%s: %zu outputs differ from scipy's sums, the first [%zu] %.17g against %.17g", what,
                      bad, first, bad ? mh_load_double(got, first, tout) : 0.0,
                      bad ? mh_load_double(want, first, tout) : 0.0);
            }
            test_release(gpu, din), test_release(gpu, dout);
            free(in), free(want), free(got);
        }
    for (size_t r = 0; r < mh_row_count(MH_OP_CONV2D) && r < 64; ++r) {
        const mh_row *row = mh_row_at(MH_OP_CONV2D, r);
        if (test_row_fits(row, gpu) && (row->flags & MH_ROW_FLOAT64))
            CHECK(ran[r] > 0, "%s takes float64 calls but ran none", row->info.name);
    }
    const mh_variant_info *chosen = NULL;
    mh_status st = mh_conv2d_float64_select(ctx, MH_I32, 2, 100, 100, 5, 5, MH_MODE_WRAP, 0, 0, MH_F64, &chosen);
    const char *expected = gpu ? "conv2d/float64" : "conv2d/cpu-omp";
    CHECK(st == MH_OK && chosen && !strcmp(chosen->name, expected), "mh_conv2d_float64_select: %s (%s), expected %s",
          chosen ? chosen->name : "none", mh_context_error(ctx), expected);
    double one = 1.0, o = 0.0;
    CHECK_REFUSED(ctx, mh_conv2d_float64(ctx, NULL, &one, MH_F16, 1, 1, 1, &one, 1, 1, MH_MODE_REFLECT, 0.0, 0, 0, &o,
                                         MH_F64),
                  "in_type = 1 (float16)");
    CHECK_REFUSED(ctx, mh_conv2d_float64(ctx, NULL, &one, MH_F64, 1, 1, 1, &one, 1, 1, MH_MODE_REFLECT, 0.0, 0, 0, &o,
                                         MH_BF16),
                  "out_type = 11 (bfloat16)");
    CHECK_REFUSED(ctx, mh_conv2d_float64(ctx, NULL, &one, MH_F64, 1, 1, 1, NULL, 1, 1, MH_MODE_REFLECT, 0.0, 0, 0, &o,
                                         MH_F64),
                  "filter = NULL");
    CHECK_REFUSED(ctx, mh_conv2d_float64(ctx, NULL, &one, MH_F64, 0, 1, 1, &one, 1, 1, MH_MODE_REFLECT, 0.0, 0, 0, &o,
                                         MH_F64),
                  "batch = 0");
    CHECK_REFUSED(ctx, mh_conv2d_float64(ctx, NULL, &one, MH_F64, (size_t)1 << 62, 1, 1, &one, 1, 1, MH_MODE_REFLECT,
                                         0.0, 0, 0, &o, MH_F64),
                  "overflows size_t");
}

int main(int argc, char **argv)
{
    int gpu;
    mh_context *ctx = test_open(argc, argv, &gpu);
    const unsigned long long seed = test_seed();
    const size_t max_n = test_max_n();
    size_t runs = 0;
    /* the shards' parts: a case in one placement, its work its outputs times its taps (and a
     * fixed cost an output and a run) */
    enum { NCASES = sizeof cases / sizeof cases[0], NPLACEMENTS = sizeof placements / sizeof placements[0] };
    double work[NCASES * NPLACEMENTS];
    size_t shard_of[NCASES * NPLACEMENTS];
    for (size_t part = 0; part < NCASES * NPLACEMENTS; ++part) {
        const tcase *c = &cases[part / NPLACEMENTS];
        work[part] = (double)(c->rows * c->cols) * (double)(c->kr * c->kc + 25) + 1e6;
    }
    test_deal_shards(work, NCASES * NPLACEMENTS, shard_of);
    for (size_t ci = 0; ci < NCASES; ++ci) {
        const tcase *c = &cases[ci];
        if (c->rows * c->cols > max_n) continue;
        for (size_t pi = 0; pi < NPLACEMENTS; ++pi)
            for (int rank1 = 0; rank1 <= 1; ++rank1) {
                if (!test_in_shard(shard_of[ci * NPLACEMENTS + pi])) continue;
                const placement *pl = &placements[pi];
                if (!pl->bordered && pl->pad == MH_PAD_VALID && (c->kr > c->rows || c->kc > c->cols)) continue;
                problem p;
                make_problem(&p, c, pl, rank1, seed + 1000 * ci + 10 * (unsigned long long)pi + rank1);
                const size_t outs = p.shape.conv2d.out_rows * p.shape.conv2d.out_cols;
                test_in in = test_in_copy(gpu, p.in, c->rows * c->cols, c->misaligned ? 1 : 0);
                test_in filter = test_in_copy(gpu, p.filter, c->kr * c->kc, c->misaligned ? 3 : 0);
                test_out out = test_out_alloc(gpu, outs, c->misaligned ? 2 : 0);
                for (size_t r = 0; r < mh_row_count(MH_OP_CONV2D); ++r) {
                    const mh_row *row = mh_row_at(MH_OP_CONV2D, r);
                    if (!test_row_fits(row, gpu)) continue;
                    for (int cfg = 0; cfg < test_configs(row, gpu); ++cfg, ++runs) {
                        char what[128];
                        snprintf(what, sizeof what, "%zux%zu %zux%zu placement %zu rank1 %d", c->rows, c->cols, c->kr,
                                 c->kc, pi, rank1);
                        test_trace(row->info.name, cfg, what);
                        check_variant(ctx, &p, in.data, filter.data, &out, row, cfg);
                    }
                }
                check_variant(ctx, &p, in.data, filter.data, &out, NULL, 0); /* auto */
                test_out_free(&out);
                test_release(gpu, in.base), test_release(gpu, filter.base);
                free_problem(&p);
            }
        printf("%zux%zu with %zux%zu done (%zu runs so far)\n", c->rows, c->cols, c->kr, c->kc, runs);
        fflush(stdout);
    }
    void (*const checks[])(mh_context *, int, unsigned long long) = {check_stacks,  check_typed,   check_lowrank,
                                                                      check_lowrank_large, check_planned,
                                                                      check_reversed, check_float64};
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; ++i)
        if (test_in_shard(i)) checks[i](ctx, gpu, seed);
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_conv2d gpu" : "test_conv2d cpu");
}

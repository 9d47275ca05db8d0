/* conv2d front-end: the op's registry table, its argument checks and `auto`. */
#include "../core/internal.h"

#include <cuda_runtime_api.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Along each axis the output is as long as conv1d's (check_sizes has refused empty and
 * overflowing sizes). */
static mh_status check_sizes(mh_context *ctx, size_t rows, size_t cols, size_t krows, size_t kcols, mh_pad pad)
{
    if (rows == 0 || cols == 0)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = 0: the image is empty", rows == 0 ? "rows" : "cols");
    if (krows == 0 || kcols == 0)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = 0: the filter is empty", krows == 0 ? "krows" : "kcols");
    if (krows > MH_CONV2D_MAX_K || kcols > MH_CONV2D_MAX_K)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = %zu: filters are at most %d x %d", krows > MH_CONV2D_MAX_K ? "krows" : "kcols",
                       krows > MH_CONV2D_MAX_K ? krows : kcols, MH_CONV2D_MAX_K, MH_CONV2D_MAX_K);
    if (pad != MH_PAD_VALID && pad != MH_PAD_SAME && pad != MH_PAD_FULL)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "pad = %d is not valid, same or full", (int)pad);
    if (pad == MH_PAD_VALID && (krows > rows || kcols > cols))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "the %zu x %zu filter is larger than the %zu x %zu image: valid padding needs it to fit", krows,
                       kcols, rows, cols);
    size_t bytes;
    if (rows > SIZE_MAX / 2 || cols > SIZE_MAX / 2 || !mh_mul_ok(rows + krows, cols + kcols, &bytes) ||
        !mh_mul_ok(bytes, sizeof(float), &bytes))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "rows = %zu, cols = %zu: the image's size in bytes overflows size_t",
                       rows, cols);
    return MH_OK;
}

mh_status mh_conv2d_out_dims(size_t rows, size_t cols, size_t krows, size_t kcols, mh_pad pad, size_t *out_rows,
                             size_t *out_cols)
{
    if (!out_rows || !out_cols) return MH_ERR_INVALID_ARGUMENT;
    mh_status s = check_sizes(NULL, rows, cols, krows, kcols, pad);
    *out_rows = s == MH_OK ? mh_conv1d_out_len(rows, krows, pad) : 0;
    *out_cols = s == MH_OK ? mh_conv1d_out_len(cols, kcols, pad) : 0;
    return s;
}

mh_status mh_conv2d_args_init(mh_context *ctx, mh_args *args, const float *in, size_t rows, size_t cols,
                              const float *filter, size_t krows, size_t kcols, mh_pad pad, float *out)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_CONV2D;
    mh_status s = check_sizes(ctx, rows, cols, krows, kcols, pad);
    if (s != MH_OK) return s;
    mh_conv2d_args *a = &args->conv2d;
    a->in = in, a->rows = rows, a->cols = cols;
    a->filter = filter, a->krows = (int)krows, a->kcols = (int)kcols;
    a->pad = pad;
    a->batch = 1;
    a->lpr = (int)mh_lead_pad(krows, pad), a->lpc = (int)mh_lead_pad(kcols, pad);
    a->out_rows = mh_conv1d_out_len(rows, krows, pad), a->out_cols = mh_conv1d_out_len(cols, kcols, pad);
    a->out = out;
    return MH_OK;
}

mh_status mh_conv2d_mode_args_init(mh_context *ctx, mh_args *args, const float *in, size_t rows, size_t cols,
                                   const float *filter, size_t krows, size_t kcols, mh_mode mode, float cval,
                                   long long origin_r, long long origin_c, float *out)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_CONV2D;
    mh_status s = mh_check_mode(ctx, "mode", mode);
    /* sizes first: a same-padded problem has the image's size and checks every bound */
    if (s == MH_OK) s = mh_conv2d_args_init(ctx, args, in, rows, cols, filter, krows, kcols, MH_PAD_SAME, out);
    if (s == MH_OK) s = mh_check_origin(ctx, "origin_r", origin_r, krows, "side");
    if (s == MH_OK) s = mh_check_origin(ctx, "origin_c", origin_c, kcols, "side");
    if (s != MH_OK) return s;
    mh_conv2d_args *a = &args->conv2d;
    a->lpr = (int)(krows / 2 + origin_r), a->lpc = (int)(kcols / 2 + origin_c);
    a->out_rows = rows, a->out_cols = cols;
    a->bordered = 1, a->mode = mode, a->cval = cval;
    return MH_OK;
}

mh_status mh_conv2d_mode_batched_args_init(mh_context *ctx, mh_args *args, const float *in, size_t batch, size_t rows,
                                           size_t cols, const float *filter, size_t krows, size_t kcols, mh_mode mode,
                                           float cval, long long origin_r, long long origin_c, float *out)
{
    mh_status s = mh_conv2d_mode_args_init(ctx, args, in, rows, cols, filter, krows, kcols, mode, cval, origin_r,
                                           origin_c, out);
    if (s != MH_OK) return s;
    size_t bytes;
    if (batch == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "batch = 0: the stack is empty");
    if (!mh_mul_ok(batch, rows * cols, &bytes) || !mh_mul_ok(bytes, sizeof(float), &bytes))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "batch = %zu of %zu x %zu images: the stack's size overflows size_t",
                       batch, rows, cols);
    args->conv2d.batch = batch;
    return MH_OK;
}

/* mh_conv2d_typed's arguments: a bordered stack, in and out of the given types (their bytes
 * checked against size_t as float32's were: the types are at most 4 bytes). */
static mh_status typed_args_init(mh_context *ctx, mh_args *args, const void *in, mh_dtype in_type, size_t batch,
                                 size_t rows, size_t cols, const float *filter, size_t krows, size_t kcols,
                                 mh_mode mode, float cval, long long origin_r, long long origin_c, void *out,
                                 mh_dtype out_type)
{
    mh_status s = mh_conv2d_mode_batched_args_init(ctx, args, (const float *)in, batch, rows, cols, filter, krows,
                                                   kcols, mode, cval, origin_r, origin_c, (float *)out);
    if (s == MH_OK) s = mh_check_image_dtype(ctx, "in_type", in_type, "conv2d");
    if (s == MH_OK) s = mh_check_image_dtype(ctx, "out_type", out_type, "conv2d");
    if (s != MH_OK) return s;
    args->conv2d.in_type = in_type, args->conv2d.out_type = out_type;
    return MH_OK;
}

/* The types a float64 call reads and writes: every mh_dtype but the two 16-bit floats. */
static mh_status check_float64_dtype(mh_context *ctx, const char *name, mh_dtype t)
{
    if ((unsigned)t <= MH_BF16 && t != MH_F16 && t != MH_BF16) return MH_OK;
    return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                   "%s = %d (%s): conv2d's float64 call reads and writes every type but float16 and bfloat16", name,
                   (int)t, mh_dtype_name(t));
}

/* mh_conv2d_float64's arguments: a bordered stack of typed images (elements of up to 8 bytes,
 * the stack's bytes checked again at that width), the weights (NULL to select a row) and cval in
 * float64. */
static mh_status float64_args_init(mh_context *ctx, mh_args *args, const void *in, mh_dtype in_type, size_t batch,
                                   size_t rows, size_t cols, const double *filter, size_t krows, size_t kcols,
                                   mh_mode mode, double cval, long long origin_r, long long origin_c, void *out,
                                   mh_dtype out_type)
{
    mh_status s = mh_conv2d_mode_batched_args_init(ctx, args, (const float *)in, batch, rows, cols, NULL, krows, kcols,
                                                   mode, 0.0f, origin_r, origin_c, (float *)out);
    if (s == MH_OK) s = check_float64_dtype(ctx, "in_type", in_type);
    if (s == MH_OK) s = check_float64_dtype(ctx, "out_type", out_type);
    if (s != MH_OK) return s;
    size_t bytes;
    if (!mh_mul_ok(batch * rows * cols, sizeof(double), &bytes))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "batch = %zu of %zu x %zu images: the stack's size overflows size_t",
                       batch, rows, cols);
    mh_conv2d_args *a = &args->conv2d;
    a->in_type = in_type, a->out_type = out_type;
    a->float64 = 1, a->filter64 = filter, a->cval64 = cval;
    return MH_OK;
}

int mh_conv2d_zero_pad_only(const mh_conv2d_args *a, char *why, size_t len)
{
    return mh_zero_pad_only(a->bordered, a->mode, MH_OP_CONV2D, why, len);
}

/* A filter past MH_CONV2D_DIRECT_MAX_K a side: only rows flagged MH_ROW_LARGE_FILTERS take it. */
static int past_direct(const mh_conv2d_args *a)
{
    return a->krows > MH_CONV2D_DIRECT_MAX_K || a->kcols > MH_CONV2D_DIRECT_MAX_K;
}

/* Every row reads float32; a typed call needs one that converts in its loader. Filters past
 * MH_CONV2D_DIRECT_MAX_K a side need a row flagged for them. */
static int row_accepts(const mh_row *row, const mh_args *args, char *why, size_t len)
{
    const mh_conv2d_args *a = &args->conv2d;
    if (past_direct(a) && !(row->flags & MH_ROW_LARGE_FILTERS)) {
        char takers[256];
        snprintf(why, len, "%s = %d: it takes filters up to %d x %d (%s take them up to %d x %d)",
                 a->krows > MH_CONV2D_DIRECT_MAX_K ? "krows" : "kcols",
                 a->krows > MH_CONV2D_DIRECT_MAX_K ? a->krows : a->kcols, MH_CONV2D_DIRECT_MAX_K,
                 MH_CONV2D_DIRECT_MAX_K, mh_rows_with(MH_OP_CONV2D, MH_ROW_LARGE_FILTERS, takers, sizeof takers),
                 MH_CONV2D_MAX_K, MH_CONV2D_MAX_K);
        return 0;
    }
    char takers[256];
    if (mh_conv2d_is_float64(a) && !(row->flags & MH_ROW_FLOAT64)) {
        snprintf(why, len, "it computes in float32 only (float64 calls run on %s)",
                 mh_rows_with(MH_OP_CONV2D, MH_ROW_FLOAT64, takers, sizeof takers));
        return 0;
    }
    if (!mh_conv2d_is_typed(a) || mh_conv2d_is_float64(a) || (row->flags & MH_ROW_IMAGE_DTYPES)) return 1;
    snprintf(why, len, "it reads and writes float32 only (in_type %s, out_type %s run on %s)",
             mh_dtype_name(a->in_type), mh_dtype_name(a->out_type),
             mh_rows_with(MH_OP_CONV2D, MH_ROW_IMAGE_DTYPES, takers, sizeof takers));
    return 0;
}

static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_conv2d_args *a = &args->conv2d;
    if (mh_conv2d_is_float64(a)) { /* the weights are in host memory, read before the call returns */
        const size_t in_bytes = a->batch * a->rows * a->cols * mh_dtype_size(a->in_type);
        const size_t out_bytes = a->batch * a->out_rows * a->out_cols * mh_dtype_size(a->out_type);
        mh_status s = mh_check_buffer(ctx, "in", a->in, in_bytes);
        if (s == MH_OK) s = mh_check_buffer(ctx, "out", a->out, out_bytes);
        return s == MH_OK ? mh_check_disjoint(ctx, "out", a->out, out_bytes, "in", a->in, in_bytes) : s;
    }
    return mh_check_conv_buffers(ctx, a->in, a->batch * a->rows * a->cols * mh_dtype_size(a->in_type), "filter",
                                 a->filter, (size_t)a->krows * a->kcols * sizeof(float), a->out,
                                 a->batch * a->out_rows * a->out_cols * mh_dtype_size(a->out_type));
}

static double conv2d_outputs(const mh_conv2d_args *a) { return (double)a->batch * a->out_rows * a->out_cols; }

/* A planned filter's FMAs an output on lowrank: a row and a column pass a term. */
static int lowrank_fmas(const mh_conv2d_args *a) { return a->plan->rank * (a->krows + a->kcols); }

/* An image below the rules' outputs: lowrank first for any planned filter it takes. */
static int lowrank_small_image(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    return conv2d_outputs(a) < rules->conv2d_lowrank_any_below_outputs;
}

/* The rules' taps for the outputs: lowrank_favoured asks for more. */
static double lowrank_min_taps(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    return mh_auto_step(&rules->conv2d_lowrank_min_taps, conv2d_outputs(a));
}

/* A planned filter of more than the rules' taps (3 x 3 filters, and 5 x 5 ones past small images,
 * are memory-bound, and walk, with no shared memory, copies faster than lowrank's passes through
 * it): on a small image whatever its terms; else where its terms cost at most the rules' share of
 * the direct FMAs and, past two terms, are at most the rules' terms and FMAs an output. */
static int lowrank_favoured(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    const mh_conv2d_plan *p = a->plan;
    const double taps = (double)a->krows * a->kcols;
    if (!p || p->rank < 1 || taps <= lowrank_min_taps(rules, a)) return 0;
    if (lowrank_small_image(rules, a)) return 1;
    const double fmas = lowrank_fmas(a);
    return fmas <= rules->conv2d_lowrank_max_cost_share * taps &&
           (p->rank <= 2 ||
            (p->rank <= rules->conv2d_lowrank_max_terms && fmas <= rules->conv2d_lowrank_more_terms_fmas));
}

/* A filter of at least the rules' taps for the outputs: conv2d/fft-tile's transforms cost less
 * than the direct rows' FMAs (and tc's tensor work) from there: its work a tile is the same for
 * every filter it takes, the direct rows' grows with the taps. */
static double fft_tile_min_taps(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    return mh_auto_step(&rules->conv2d_fft_tile_min_taps, conv2d_outputs(a));
}

static int fft_tile_favoured(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    return (double)a->krows * a->kcols >= fft_tile_min_taps(rules, a);
}

/* lowrank's cost against fft-tile's for a planned filter of several terms: its column pass
 * costs about twice its row pass a tap, and both repeat for every term. */
static int lowrank_cost(const mh_conv2d_args *a) { return a->plan->rank * (a->kcols + 2 * a->krows); }

static double lowrank_before_fft_tile_cost(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    return mh_auto_step(&rules->conv2d_lowrank_before_fft_tile_cost, conv2d_outputs(a));
}

/* One term (a row and a column pass, lowrank's best case), or terms of a filter lowrank has an
 * instance of its own size for (the square odd 17 to 31 of one or two), on at least the rules'
 * outputs: there lowrank runs 0.5-0.9x fft-tile's time on the H100 (Gaussians 31 x 3 to 31 x 31,
 * differences of Gaussians 21 x 21 and 31 x 31 from 4096^2); at 1024^2 fft-tile's few tiles are
 * as quick or quicker (a DoG 31 x 31: 0.86x lowrank's time, a Gaussian 31 x 3: 0.77x). */
static int lowrank_own_case(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    return conv2d_outputs(a) >= rules->conv2d_lowrank_own_min_outputs &&
           (a->plan->rank == 1 || mh_conv2d_lowrank_own_instance(a->krows, a->kcols, a->plan->rank));
}

/* The rules' filter rows for the outputs: on small images a block's segment is a few bands, and
 * the krows - 1 rows it reads ahead of them make most of its walk. */
static double lowrank_before_fft_tile_max_rows(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    return mh_auto_step(&rules->conv2d_lowrank_before_fft_tile_max_rows, conv2d_outputs(a));
}

/* lowrank ahead of fft-tile: lowrank_own_case, or terms costing at most the rules' share for
 * the outputs on a filter of at most the rules' rows. */
static int lowrank_before_fft_tile(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    return lowrank_own_case(rules, a) || (lowrank_cost(a) <= lowrank_before_fft_tile_cost(rules, a) &&
                                          a->krows <= lowrank_before_fft_tile_max_rows(rules, a));
}

/* A 7 x 7 filter walk takes (float32, anchored within a column of its centre) on at least the
 * rules' outputs: walk's strips stream the image once at 1.1-1.7x the speed of fft-tile, regtile
 * and tc from 1536^2 on the H100; a planned filter lowrank takes stays there below the planned
 * threshold (lowrank's two passes are faster up to about 4096^2). */
static double walk7_min_outputs(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    return lowrank_favoured(rules, a) ? rules->conv2d_walk7_planned_min_outputs : rules->conv2d_walk7_min_outputs;
}

static int walk7_favoured(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    if (a->krows != 7 || a->kcols != 7 || mh_conv2d_is_typed(a) || a->lpc < 2 || a->lpc > 4) return 0;
    return conv2d_outputs(a) >= walk7_min_outputs(rules, a);
}

/* A bordered float32 3 x 3 or 5 x 5 call past walk's one-kernel bound (below it walk's ring kernel
 * alone is one launch too) that tiles takes first: up to the rules' outputs, where its one launch
 * beats walk's walking kernel and ring kernel; or a stack of images of at most the rules' outputs
 * each, at any size, where walk's ring kernel, which recomputes every image's border, costs more
 * than tiles' staging of the halo rows. */
static int tiles_favoured(const mh_auto_rules *rules, const mh_conv2d_args *a)
{
    if (!a->bordered || mh_conv2d_is_typed(a) || mh_conv2d_is_float64(a) || a->krows != a->kcols ||
        (a->krows != 3 && a->krows != 5) || conv2d_outputs(a) <= rules->conv2d_walk_one_kernel_max_outputs)
        return 0;
    return conv2d_outputs(a) <= rules->conv2d_tiles_max_outputs ||
           (a->batch > 1 && (double)a->out_rows * a->out_cols <= rules->conv2d_tiles_stack_max_image_outputs);
}

/* `auto` decides from the shapes alone: it never reads the filter, so that a call on device
 * data queues its work without waiting for the stream (docs/conv2d.md, "How auto chooses").
 * Filters of many taps (fft_tile_favoured: 49 and more on the H100, any image size) go to
 * fft-tile (2-D FFT tiles in shared memory) first, a planned low-rank one there only where
 * lowrank_before_fft_tile does not hold; 7 x 7 filters go to walk before it where walk7_favoured
 * holds. Smaller filters go to walk for 3 x 3 and 5 x 5 (it refuses the other sizes; tiles
 * before it where tiles_favoured holds) and to regtile otherwise, or to tc (tensor cores, sm_90
 * only) where mh_conv2d_tc_favoured holds, which asks for 121 taps: on a device whose rules start
 * fft-tile later. A planned call
 * (mh_conv2d_planned) knows its filter's terms without reading it: lowrank first where
 * lowrank_favoured holds. Filters past MH_CONV2D_DIRECT_MAX_K a side go to fft-3pass (512 x 512
 * overlap-save tiles, on-chip transforms in three passes), then fft-os (on cuFFT). Where why is
 * not NULL, each branch states its rule with this problem's numbers (explain's line). */
static const char *const *auto_order(mh_context *ctx, const mh_args *a, char *why, size_t len)
{
/* every direct order's tail: the direct rows that take any filter of at most
 * MH_CONV2D_DIRECT_MAX_K a side, fastest first */
#define DIRECT_TAIL "regtile", "stream", "shared", "basic", NULL
    static const char *const cpu[] = {"cpu-omp", NULL};
    static const char *const direct[] = {"walk", DIRECT_TAIL};
    static const char *const tiles_first[] = {"tiles", "walk", DIRECT_TAIL};
    static const char *const regtile_first[] = {DIRECT_TAIL};
    static const char *const tensor[] = {"tc", DIRECT_TAIL};
    static const char *const lowrank_direct[] = {"lowrank", "walk", DIRECT_TAIL};
    static const char *const lowrank_tensor[] = {"lowrank", "tc", DIRECT_TAIL};
    static const char *const fft_tile[] = {"fft-tile", "tc", DIRECT_TAIL};
    static const char *const lowrank_fft_tile[] = {"lowrank", "fft-tile", "tc", DIRECT_TAIL};
    static const char *const walk7[] = {"walk", "fft-tile", DIRECT_TAIL};
    static const char *const walk7_lowrank[] = {"walk", "lowrank", "fft-tile", DIRECT_TAIL};
#undef DIRECT_TAIL
    /* basic, the one direct row of any size, for the per-element contract */
    static const char *const large[] = {"fft-3pass", "fft-os", "basic", NULL};
    static const char *const float64[] = {"float64", NULL};
    if (mh_is_cpu(ctx)) return cpu;
    const mh_conv2d_args *c = &a->conv2d;
    if (mh_conv2d_is_float64(c)) {
        if (why) snprintf(why, len, "a float64 call: float64 (scipy's sums in its order, tiles in shared memory)");
        return float64;
    }
    if (past_direct(c)) {
        if (why)
            snprintf(why, len, "a %d x %d filter is past the direct rows' %d a side: fft-3pass (512 x 512 overlap-save "
                     "tiles, on-chip transforms in three passes), then fft-os (overlap-save on cuFFT), then basic "
                     "(direct, one thread an output: the per-element contract's row)",
                     c->krows, c->kcols, MH_CONV2D_DIRECT_MAX_K);
        return large;
    }
    const int lowrank = lowrank_favoured(ctx->rules, c);
    if (walk7_favoured(ctx->rules, c)) {
        if (why)
            snprintf(why, len, "a 7 x 7 filter on %.0f outputs, at least %.0f%s: walk first (strips streamed through "
                     "registers, the filter in constant memory)%s", conv2d_outputs(c), walk7_min_outputs(ctx->rules, c),
                     lowrank ? " for a planned filter lowrank takes" : "", lowrank ? ", then lowrank" : ", then fft-tile");
        return lowrank ? walk7_lowrank : walk7;
    }
    if (fft_tile_favoured(ctx->rules, c)) {
        const int lowrank_first = lowrank && lowrank_before_fft_tile(ctx->rules, c);
        if (why && lowrank_first)
            snprintf(why, len, "the plan's filter is %d term%s on %.0f outputs: lowrank first (from %.0f outputs: one "
                     "term, or lowrank's own instance of the filter's size%s; or while rank (kcols + 2 krows), here "
                     "%d, is at most %g and krows, here %d, at most %g for these outputs); then fft-tile (2-D FFT "
                     "tiles in shared memory)",
                     c->plan->rank, c->plan->rank > 1 ? "s" : "", conv2d_outputs(c),
                     ctx->rules->conv2d_lowrank_own_min_outputs,
                     mh_conv2d_lowrank_own_instance(c->krows, c->kcols, c->plan->rank) ? ", as here" : "",
                     lowrank_cost(c), lowrank_before_fft_tile_cost(ctx->rules, c), c->krows,
                     lowrank_before_fft_tile_max_rows(ctx->rules, c));
        else if (why)
            snprintf(why, len, "%d taps, at least %g: fft-tile (2-D FFT tiles in shared memory) first%s",
                     c->krows * c->kcols, fft_tile_min_taps(ctx->rules, c),
                     lowrank ? "; the plan's terms cost more, or its filter has more rows, than the rules give lowrank "
                     "before it" : "");
        return lowrank_first ? lowrank_fft_tile : fft_tile;
    }
    char tc_why[512];
    const int tc = mh_conv2d_tc_favoured(ctx->rules, c, why ? tc_why : NULL, why ? sizeof tc_why : 0);
    if (lowrank) {
        if (why)
            snprintf(why, len, "the plan's filter is %d term%s: %d FMAs an output against %d direct, lowrank first; "
                     "then %s", c->plan->rank, c->plan->rank > 1 ? "s" : "", lowrank_fmas(c),
                     c->krows * c->kcols, tc ? "tc (tensor cores)" : "the direct rows");
        return tc ? lowrank_tensor : lowrank_direct;
    }
    if (tiles_favoured(ctx->rules, c)) {
        if (why)
            snprintf(why, len, "a bordered %d x %d call on %.0f outputs, more than %.0f, %s: tiles first (one launch "
                     "writes every output once, the edges mapped as the tiles are staged), then walk",
                     c->krows, c->kcols, conv2d_outputs(c), ctx->rules->conv2d_walk_one_kernel_max_outputs,
                     conv2d_outputs(c) <= ctx->rules->conv2d_tiles_max_outputs ? "at most the rules' outputs"
                                                                                : "a stack of images of at most the "
                                                                                  "rules' outputs each");
        return tiles_first;
    }
    if (why)
        snprintf(why, len, "%s: %s; walk takes 3 x 3 and 5 x 5 filters (7 x 7 from more outputs), regtile the rest",
                 tc_why, tc ? "tc (tensor cores) first" : "the direct rows");
    /* a 7 x 7 filter below walk7_favoured's outputs: walk's strips are too few there */
    return tc ? tensor : c->krows == 7 && c->kcols == 7 ? regtile_first : direct;
}

static const mh_row_group groups[] = {
    mh_conv2d_cpu_rows,       mh_conv2d_cuda_rows,       mh_conv2d_texture_rows,   mh_conv2d_regtile_rows,
    mh_conv2d_stream_rows,    mh_conv2d_walk_rows,       mh_conv2d_separable_rows, mh_conv2d_tc_rows,
    mh_conv2d_fft_os_rows,    mh_conv2d_fft_tile_rows,   mh_conv2d_fft_3pass_rows, mh_conv2d_cudnn_rows,
    mh_conv2d_npp_rows,       mh_conv2d_float64_rows,    mh_conv2d_tiles_rows,
};

static void describe(const mh_args *args, char *buf, size_t len)
{
    const mh_conv2d_args *a = &args->conv2d;
    char images[128];
    if (a->batch > 1) snprintf(images, sizeof images, "%zu images of %zu x %zu", a->batch, a->rows, a->cols);
    else snprintf(images, sizeof images, "a %zu x %zu image", a->rows, a->cols);
    if (mh_conv2d_is_typed(a) || mh_conv2d_is_float64(a))
        snprintf(images + strlen(images), sizeof images - strlen(images), " of %s into %s%s",
                 mh_dtype_name(a->in_type), mh_dtype_name(a->out_type),
                 mh_conv2d_is_float64(a) ? ", computed in float64" : "");
    if (a->bordered)
        snprintf(buf, len, "%s, a %d x %d filter, mode = %s, cval = %g, origin = (%d, %d)", images, a->krows, a->kcols,
                 mh_mode_name(a->mode), mh_conv2d_is_float64(a) ? a->cval64 : (double)a->cval, a->lpr - a->krows / 2, a->lpc - a->kcols / 2);
    else
        snprintf(buf, len, "a %zu x %zu image, a %d x %d filter, pad = %s", a->rows, a->cols, a->krows, a->kcols,
                 mh_pad_name(a->pad));
}

/* A stack's images, for the rows that filter one image a call. */
static size_t images(const mh_args *a) { return a->conv2d.batch; }

static mh_args image(const mh_args *a, size_t b)
{
    const mh_conv2d_args *c = &a->conv2d;
    mh_args one = *a;
    one.conv2d.in = (const float *)((const char *)c->in + b * c->rows * c->cols * mh_dtype_size(c->in_type));
    one.conv2d.out = (float *)((char *)c->out + b * c->out_rows * c->out_cols * mh_dtype_size(c->out_type));
    one.conv2d.batch = 1;
    return one;
}

/* mh_conv2d_mode_reversed's filter reversed into the context's copy, which the row then reads
 * as it reads any filter (auto decided from the shapes alone, as for mh_conv2d_mode); a row that
 * reads it from its end (MH_ROW_READS_REVERSED) gets the call as it is, one launch fewer. */
static mh_status prepare(mh_context *ctx, const mh_row *row, const mh_args *a, mh_args *prepared)
{
    *prepared = *a;
    if (!a->conv2d.reversed || (row->flags & MH_ROW_READS_REVERSED)) return MH_OK;
    prepared->conv2d.reversed = 0;
    const size_t n = (size_t)a->conv2d.krows * (size_t)a->conv2d.kcols;
    return mh_is_cpu(ctx) ? mh_conv2d_reverse_cpu(ctx, a->conv2d.filter, n, &prepared->conv2d.filter)
                          : mh_conv2d_reverse_cuda(ctx, a->conv2d.filter, n, &prepared->conv2d.filter);
}

const mh_op_table mh_conv2d_table = {
    .op = MH_OP_CONV2D,
    .name = "conv2d",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .describe = describe,
    .parts = images,
    .part = image,
    .row_accepts = row_accepts,
    .prepare = prepare,
};

mh_status mh_conv2d(mh_context *ctx, const char *variant, const float *in, size_t rows, size_t cols,
                    const float *filter, size_t krows, size_t kcols, mh_pad pad, float *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv2d_args_init(ctx, &a, in, rows, cols, filter, krows, kcols, pad, out);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_conv2d_select(mh_context *ctx, size_t rows, size_t cols, size_t krows, size_t kcols, mh_pad pad,
                           const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv2d_args_init(ctx, &a, NULL, rows, cols, NULL, krows, kcols, pad, NULL);
    return s == MH_OK ? mh_select(ctx, &a, chosen) : s;
}

mh_status mh_conv2d_supports(mh_context *ctx, const char *variant, size_t rows, size_t cols, size_t krows,
                             size_t kcols, mh_pad pad)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv2d_args_init(ctx, &a, NULL, rows, cols, NULL, krows, kcols, pad, NULL);
    return s == MH_OK ? mh_supports(ctx, variant, &a) : s;
}

mh_status mh_conv2d_mode(mh_context *ctx, const char *variant, const float *in, size_t rows, size_t cols,
                         const float *filter, size_t krows, size_t kcols, mh_mode mode, float cval,
                         long long origin_r, long long origin_c, float *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv2d_mode_args_init(ctx, &a, in, rows, cols, filter, krows, kcols, mode, cval, origin_r,
                                           origin_c, out);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_conv2d_mode_select(mh_context *ctx, size_t rows, size_t cols, size_t krows, size_t kcols, mh_mode mode,
                                long long origin_r, long long origin_c, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv2d_mode_args_init(ctx, &a, NULL, rows, cols, NULL, krows, kcols, mode, 0.0f, origin_r,
                                           origin_c, NULL);
    return s == MH_OK ? mh_select(ctx, &a, chosen) : s;
}

mh_status mh_conv2d_mode_supports(mh_context *ctx, const char *variant, size_t rows, size_t cols, size_t krows,
                                  size_t kcols, mh_mode mode, long long origin_r, long long origin_c)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv2d_mode_args_init(ctx, &a, NULL, rows, cols, NULL, krows, kcols, mode, 0.0f, origin_r,
                                           origin_c, NULL);
    return s == MH_OK ? mh_supports(ctx, variant, &a) : s;
}

/* A stack's mode call, the filter read as given or reversed (mh_conv2d_mode_reversed). */
static mh_status mode_batched(mh_context *ctx, const char *variant, const float *in, size_t batch, size_t rows,
                              size_t cols, const float *filter, size_t krows, size_t kcols, mh_mode mode, float cval,
                              long long origin_r, long long origin_c, float *out, int reversed)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv2d_mode_batched_args_init(ctx, &a, in, batch, rows, cols, filter, krows, kcols, mode, cval,
                                                   origin_r, origin_c, out);
    a.conv2d.reversed = reversed;
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_conv2d_mode_batched(mh_context *ctx, const char *variant, const float *in, size_t batch, size_t rows,
                                 size_t cols, const float *filter, size_t krows, size_t kcols, mh_mode mode,
                                 float cval, long long origin_r, long long origin_c, float *out)
{
    return mode_batched(ctx, variant, in, batch, rows, cols, filter, krows, kcols, mode, cval, origin_r, origin_c, out,
                        0);
}

mh_status mh_conv2d_mode_reversed(mh_context *ctx, const char *variant, const float *in, size_t batch, size_t rows,
                                  size_t cols, const float *filter, size_t krows, size_t kcols, mh_mode mode,
                                  float cval, long long origin_r, long long origin_c, float *out)
{
    return mode_batched(ctx, variant, in, batch, rows, cols, filter, krows, kcols, mode, cval, origin_r, origin_c, out,
                        1);
}

mh_status mh_conv2d_typed(mh_context *ctx, const char *variant, const void *in, mh_dtype in_type, size_t batch,
                          size_t rows, size_t cols, const float *filter, size_t krows, size_t kcols, mh_mode mode,
                          float cval, long long origin_r, long long origin_c, void *out, mh_dtype out_type)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = typed_args_init(ctx, &a, in, in_type, batch, rows, cols, filter, krows, kcols, mode, cval, origin_r,
                                  origin_c, out, out_type);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_conv2d_float64(mh_context *ctx, const char *variant, const void *in, mh_dtype in_type, size_t batch,
                            size_t rows, size_t cols, const double *filter, size_t krows, size_t kcols, mh_mode mode,
                            double cval, long long origin_r, long long origin_c, void *out, mh_dtype out_type)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    if (!filter) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "filter = NULL: the weights are missing");
    mh_status s = float64_args_init(ctx, &a, in, in_type, batch, rows, cols, filter, krows, kcols, mode, cval,
                                    origin_r, origin_c, out, out_type);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_conv2d_float64_select(mh_context *ctx, mh_dtype in_type, size_t batch, size_t rows, size_t cols,
                                   size_t krows, size_t kcols, mh_mode mode, long long origin_r, long long origin_c,
                                   mh_dtype out_type, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = float64_args_init(ctx, &a, NULL, in_type, batch, rows, cols, NULL, krows, kcols, mode, 0.0, origin_r,
                                    origin_c, NULL, out_type);
    return s == MH_OK ? mh_select(ctx, &a, chosen) : s;
}

/* ---- plans ---------------------------------------------------------------------------- */

/* fft-3pass's spectrum of the plan's filter, its scratch allocated and freed on the stream. */
static cudaError_t large_spectrum(mh_conv2d_plan *p, cudaStream_t stream)
{
    void *scratch = NULL;
    cudaError_t e = cudaMallocAsync(&p->large_spectrum, mh_conv2d_fft_3pass_spectrum_bytes(), stream);
    if (e == cudaSuccess) e = cudaMallocAsync(&scratch, mh_conv2d_fft_3pass_scratch_bytes(), stream);
    if (e != cudaSuccess) return e;
    e = (cudaError_t)mh_conv2d_fft_3pass_spectrum(p->large_spectrum, scratch, p->filter, p->krows, p->kcols, stream);
    const cudaError_t f = cudaFreeAsync(scratch, stream);
    return e != cudaSuccess ? e : f;
}

/* tc's Toeplitz panels of the plan's filter for auto's configuration (a planned tc call in it
 * then launches its convolution alone). */
static cudaError_t tc_panels(const mh_context *ctx, mh_conv2d_plan *p, cudaStream_t stream)
{
    const size_t bytes = mh_conv2d_tc_panels_bytes(ctx->rules, p->krows, p->kcols, &p->tc_q);
    const cudaError_t e = cudaMallocAsync(&p->tc_panels, bytes, stream);
    if (e != cudaSuccess) return e;
    return (cudaError_t)mh_conv2d_tc_panels(ctx->rules, p->tc_panels, p->filter, p->krows, p->kcols, stream);
}

/* The plan's filter where ctx computes: a host copy on a CPU context; on a GPU, memory allocated
 * and filled on ctx's stream (stream-ordered, the values in kernel parameters), fft-tile's
 * spectrum of it where fft-tile takes the filter (a planned fft-tile call then launches its tiles
 * alone), tc's panels there too on a compute capability 9.0 device, fft-3pass's spectrum past
 * MH_CONV2D_DIRECT_MAX_K a side, and an event after them: no wait for the stream (cudaMalloc,
 * pinned staging and copies from pageable memory may each make the host wait for the device). */
static mh_status place_filter(mh_context *ctx, mh_conv2d_plan *p, size_t bytes)
{
    mh_status s;
    if (mh_is_cpu(ctx)) {
        if ((s = mh_alloc(ctx, bytes, (void **)&p->filter)) == MH_OK) memcpy(p->filter, p->host_filter, bytes);
        return s;
    }
    mh_device_guard g;
    if ((s = mh_device_enter(ctx, &g)) != MH_OK) return s;
    cudaStream_t stream = (cudaStream_t)mh_context_stream(ctx);
    cudaEvent_t ready = NULL;
    cudaError_t e = cudaMallocAsync((void **)&p->filter, bytes, stream);
    if (e == cudaSuccess)
        e = (cudaError_t)mh_cuda_upload_by_params(p->filter, p->host_filter, bytes / sizeof(float), stream);
    if (e == cudaSuccess && p->krows <= MH_CONV2D_DIRECT_MAX_K && p->kcols <= MH_CONV2D_DIRECT_MAX_K) {
        e = cudaMallocAsync(&p->spectrum, mh_conv2d_fft_tile_spectrum_bytes(), stream);
        if (e == cudaSuccess)
            e = (cudaError_t)mh_conv2d_fft_tile_spectrum(p->spectrum, p->filter, p->krows, p->kcols, stream);
        if (e == cudaSuccess && ctx->cc == 90) e = tc_panels(ctx, p, stream);
    } else if (e == cudaSuccess) {
        e = large_spectrum(p, stream);
    }
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    if (e == cudaSuccess) p->ready = ready, e = cudaEventRecord(ready, stream);
    mh_device_leave(&g);
    if (e != cudaSuccess)
        return mh_fail(ctx, MH_ERR_CUDA, "a conv2d plan's copy of the filter and its spectrum: %s",
                       cudaGetErrorString(e));
    return MH_OK;
}

mh_status mh_conv2d_plan_create(mh_context *ctx, const float *filter, size_t krows, size_t kcols,
                                mh_conv2d_plan **plan)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (!plan) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "plan is NULL");
    *plan = NULL;
    if (!filter) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "filter is NULL");
    if (krows < 1 || krows > MH_CONV2D_MAX_K || kcols < 1 || kcols > MH_CONV2D_MAX_K)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "krows = %zu, kcols = %zu: filters are 1 to %d a side", krows,
                       kcols, MH_CONV2D_MAX_K);
    mh_conv2d_plan *p = calloc(1, sizeof *p);
    if (!p) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "a conv2d plan: out of host memory");
    p->device = ctx->device, p->krows = (int)krows, p->kcols = (int)kcols;
    const size_t bytes = krows * kcols * sizeof(float);
    if (!(p->host_filter = malloc(bytes))) {
        free(p);
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "a conv2d plan's %zu x %zu filter: out of host memory", krows, kcols);
    }
    /* a CPU context refuses device memory; a CUDA one reads it back or copies host memory */
    mh_status s = mh_is_cpu(ctx) ? mh_check_buffer(ctx, "filter", filter, bytes) : MH_OK;
    if (s == MH_OK && mh_is_device_memory(ctx, filter)) s = mh_download(ctx, p->host_filter, filter, bytes);
    else if (s == MH_OK) memcpy(p->host_filter, filter, bytes);
    if (s == MH_OK) s = place_filter(ctx, p, bytes);
    if (s != MH_OK) {
        mh_conv2d_plan_destroy(p);
        return s;
    }
    p->rank = mh_lowrank_factor(p->host_filter, p->krows, p->kcols, MH_LOWRANK_MAX_RANK, p->u, p->v, &p->fit);
    *plan = p;
    return MH_OK;
}

void mh_conv2d_plan_destroy(mh_conv2d_plan *plan)
{
    if (!plan) return;
    /* cudaFree waits for the device, the filter's copy included */
    if (plan->filter) mh_free_on(plan->device, plan->filter);
    if (plan->spectrum) mh_free_on(plan->device, plan->spectrum);
    if (plan->large_spectrum) mh_free_on(plan->device, plan->large_spectrum);
    if (plan->tc_panels) mh_free_on(plan->device, plan->tc_panels);
    if (plan->ready) cudaEventDestroy((cudaEvent_t)plan->ready);
    free(plan->host_filter);
    free(plan);
}

int mh_conv2d_plan_rank(const mh_conv2d_plan *plan) { return plan ? plan->rank : -1; }

/* A plan that ctx may run; ctx's stream then waits (on the GPU) for the plan's filter copy. */
static mh_status check_plan(mh_context *ctx, const mh_conv2d_plan *plan)
{
    if (!plan) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "plan is NULL");
    if (plan->device != ctx->device)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "the plan was made for device %d; the context is on device %d",
                       plan->device, ctx->device);
    if (!plan->ready) return MH_OK;
    mh_device_guard g; /* the legacy default stream (NULL) is the current device's */
    mh_status s = mh_device_enter(ctx, &g);
    if (s != MH_OK) return s;
    const cudaError_t e = cudaStreamWaitEvent((cudaStream_t)mh_context_stream(ctx), (cudaEvent_t)plan->ready, 0);
    mh_device_leave(&g);
    if (e != cudaSuccess)
        return mh_fail(ctx, MH_ERR_CUDA, "waiting for the plan's filter copy: %s", cudaGetErrorString(e));
    return MH_OK;
}

/* A planned call's arguments made (s: their status) into a dispatch with the plan attached. */
static mh_status dispatch_planned(mh_context *ctx, const char *variant, const mh_conv2d_plan *plan, mh_args *a,
                                  mh_status s)
{
    if (s != MH_OK) return s;
    a->conv2d.plan = plan;
    return mh_dispatch(ctx, variant, a);
}

mh_status mh_conv2d_planned(mh_context *ctx, const char *variant, const mh_conv2d_plan *plan, const float *in,
                            size_t rows, size_t cols, mh_pad pad, float *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = check_plan(ctx, plan);
    if (s == MH_OK)
        s = mh_conv2d_args_init(ctx, &a, in, rows, cols, plan->filter, (size_t)plan->krows, (size_t)plan->kcols, pad,
                                out);
    return dispatch_planned(ctx, variant, plan, &a, s);
}

mh_status mh_conv2d_planned_mode(mh_context *ctx, const char *variant, const mh_conv2d_plan *plan, const float *in,
                                 size_t batch, size_t rows, size_t cols, mh_mode mode, float cval, long long origin_r,
                                 long long origin_c, float *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = check_plan(ctx, plan);
    if (s == MH_OK)
        s = mh_conv2d_mode_batched_args_init(ctx, &a, in, batch, rows, cols, plan->filter, (size_t)plan->krows,
                                             (size_t)plan->kcols, mode, cval, origin_r, origin_c, out);
    return dispatch_planned(ctx, variant, plan, &a, s);
}

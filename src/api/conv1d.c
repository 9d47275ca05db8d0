/* conv1d front-end: the op's registry table, its argument checks and `auto`.
 *
 * The table lists the row groups in ladder order: CPU rows, the seeds' CUDA rungs, ours,
 * then the vendor baselines. Adding a variant is adding a row to its backend file's array;
 * nothing else names it. */
#include "../core/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

size_t mh_conv1d_out_len(size_t n, size_t k, mh_pad pad)
{
    if (n == 0 || k == 0) return 0;
    switch (pad) {
    case MH_PAD_VALID: return k <= n ? n - k + 1 : 0;
    case MH_PAD_SAME: return n;
    case MH_PAD_FULL: return n <= SIZE_MAX - (k - 1) ? n + k - 1 : 0;
    }
    return 0;
}

/* count x per floats have a size in bytes that fits size_t. */
static int floats_fit(size_t count, size_t per)
{
    size_t floats, bytes;
    return mh_mul_ok(count, per, &floats) && mh_mul_ok(floats, sizeof(float), &bytes);
}

mh_status mh_conv1d_batched_args_init(mh_context *ctx, mh_args *args, const float *in, size_t batch, size_t n,
                                      const float *mask, size_t mask_stride, size_t k, mh_pad pad, float *out)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_CONV1D;
    mh_conv1d_args *a = &args->conv1d;
    if (batch == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "batch = 0: there are no signals");
    if (n == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "n = 0: the input is empty");
    if (k == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "k = 0: the mask is empty");
    if (mask_stride != 0 && mask_stride != k)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "mask_stride = %zu: expected 0 (one mask for all signals) or k = %zu (one per signal)",
                       mask_stride, k);
    if (pad != MH_PAD_VALID && pad != MH_PAD_SAME && pad != MH_PAD_FULL)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "pad = %d is not valid, same or full", (int)pad);
    if (pad == MH_PAD_VALID && k > n)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "k = %zu is longer than n = %zu: valid padding needs k <= n",
                       k, n);
    const size_t out_n = mh_conv1d_out_len(n, k, pad);
    if (out_n == 0 || !floats_fit(1, out_n) || !floats_fit(1, n) || !floats_fit(1, k))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "n = %zu, k = %zu: the %s output's size in bytes overflows size_t",
                       n, k, mh_pad_name(pad));
    if (!floats_fit(batch, n) || !floats_fit(batch, out_n) || !floats_fit(batch, k))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "batch = %zu x n = %zu (k = %zu, pad = %s): the size in bytes overflows size_t",
                       batch, n, k, mh_pad_name(pad));
    a->in = in;
    a->n = n;
    a->mask = mask;
    a->k = k;
    a->pad = pad;
    a->lpad = mh_lead_pad(k, pad);
    a->out_n = out_n;
    a->out = out;
    a->batch = batch;
    a->mask_stride = mask_stride;
    return MH_OK;
}

mh_status mh_conv1d_args_init(mh_context *ctx, mh_args *args, const float *in, size_t n, const float *mask,
                              size_t k, mh_pad pad, float *out)
{
    return mh_conv1d_batched_args_init(ctx, args, in, 1, n, mask, 0, k, pad, out);
}

mh_status mh_conv1d_mode_args_init(mh_context *ctx, mh_args *args, const float *in, size_t batch, size_t n,
                                   const float *mask, size_t mask_stride, size_t k, mh_mode mode, float cval,
                                   long long origin, float *out)
{
    memset(args, 0, sizeof *args);
    args->op = MH_OP_CONV1D;
    mh_status s = mh_check_mode(ctx, "mode", mode);
    /* sizes first: a same-padded problem has the signal's length and checks every bound */
    if (s == MH_OK) s = mh_conv1d_batched_args_init(ctx, args, in, batch, n, mask, mask_stride, k, MH_PAD_SAME, out);
    if (s == MH_OK) s = mh_check_origin(ctx, "origin", origin, k, "mask");
    if (s != MH_OK) return s;
    mh_conv1d_args *a = &args->conv1d;
    a->lpad = (size_t)((long long)(k / 2) + origin);
    a->out_n = n;
    a->bordered = 1, a->mode = mode, a->cval = cval;
    return MH_OK;
}

int mh_conv1d_zero_pad_only(const mh_conv1d_args *a, char *why, size_t len)
{
    return mh_zero_pad_only(a->bordered, a->mode, MH_OP_CONV1D, why, len);
}

int mh_conv1d_finite_border(const mh_conv1d_args *a, char *why, size_t len)
{
    if (!a->bordered || a->mode != MH_MODE_CONSTANT || isfinite(a->cval)) return 1;
    snprintf(why, len, "cval = %g: an FFT spreads a non-finite constant over whole segments, not only the windows "
             "that meet the border (regtile and the CPU rows take it)", (double)a->cval);
    return 0;
}

mh_conv1d_args mh_conv1d_signal(const mh_conv1d_args *a, size_t b)
{
    mh_conv1d_args one = *a;
    one.in = a->in + b * a->n;
    one.mask = a->mask + b * a->mask_stride;
    one.out = a->out + b * a->out_n;
    one.batch = 1;
    one.mask_stride = 0;
    return one;
}

static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_conv1d_args *a = &args->conv1d;
    const size_t masks = a->mask_stride ? a->batch : 1;
    return mh_check_conv_buffers(ctx, a->in, a->batch * a->n * sizeof(float), "mask", a->mask,
                                 masks * a->k * sizeof(float), a->out, a->batch * a->out_n * sizeof(float));
}

/* `auto`, from the device's rules (src/core/auto_rules.h; the H100's read off its grid, n = 2^12
 * .. 2^26 by 4x against k = 3 .. 65535: docs/conv1d.md "How auto chooses"). Signals count by
 * their total samples (batch x n):
 *   k > conv1d_fft_os_above_k   fft-os (fft-fused cannot hold the mask)
 *   k > conv1d_fused_above_k    fft-fused (its real8192), which wins every cell of the grid there
 *   below                       fft-fused from a k that falls as the problem grows
 *                               (conv1d_fused_from_k), regtile below that k: it sits at its launch
 *                               floor or the copy ceiling, where the FFT's fixed costs do not pay.
 * Each list goes on to the others: a row that refuses or runs out of memory passes the call
 * to the next. */
/* The order on a CUDA device by the device's rules, and (why not NULL) the rule with this
 * problem's numbers, for explain. */
static const char *const *gpu_order(const mh_auto_rules *r, const mh_conv1d_args *a, char *why, size_t len)
{
    static const char *const direct[] = {"regtile", "fft-fused", "fft-os", "cufft", "naive", NULL};
    static const char *const fused[] = {"fft-fused", "fft-os", "regtile", "cufft", "naive", NULL};
    static const char *const os[] = {"fft-os", "fft-fused", "regtile", "cufft", "naive", NULL};
    const double samples = (double)a->batch * (double)a->n, k = (double)a->k;
    if (k > r->conv1d_fft_os_above_k) {
        if (why)
            snprintf(why, len, "k = %zu > %.0f (conv1d_fft_os_above_k): fft-os first, fft-fused cannot hold the mask",
                     a->k, r->conv1d_fft_os_above_k);
        return os;
    }
    if (k > r->conv1d_fused_above_k) {
        if (why)
            snprintf(why, len, "k = %zu > %.0f (conv1d_fused_above_k): fft-fused first at every size", a->k,
                     r->conv1d_fused_above_k);
        return fused;
    }
    const double from = mh_auto_step(&r->conv1d_fused_from_k, samples);
    if (why)
        snprintf(why, len,
                 "batch x n = %.0f samples: fft-fused from k >= %.0f there (conv1d_fused_from_k), regtile below; "
                 "k = %zu: %s first",
                 samples, from, a->k, k >= from ? "fft-fused" : "regtile");
    return k >= from ? fused : direct;
}

static const char *const *auto_order(mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    static const char *const cpu[] = {"cpu-omp", NULL};
    return mh_is_cpu(ctx) ? cpu : gpu_order(ctx->rules, &args->conv1d, why, len);
}

static const mh_row_group groups[] = {
    mh_conv1d_cpu_rows,       mh_conv1d_cuda_rows, mh_conv1d_regtile_rows, mh_conv1d_fft_os_rows,
    mh_conv1d_fft_fused_rows, mh_conv1d_tc_rows,   mh_conv1d_cudnn_rows,   mh_conv1d_cufft_rows,
};

static void describe(const mh_args *args, char *buf, size_t len)
{
    const mh_conv1d_args *a = &args->conv1d;
    char where[96];
    if (a->bordered)
        snprintf(where, sizeof where, "mode = %s, cval = %g, origin = %lld", mh_mode_name(a->mode), (double)a->cval,
                 (long long)a->lpad - (long long)(a->k / 2));
    else
        snprintf(where, sizeof where, "pad = %s", mh_pad_name(a->pad));
    if (a->batch > 1)
        snprintf(buf, len, "batch = %zu, n = %zu, k = %zu (%s), %s", a->batch, a->n, a->k,
                 a->mask_stride ? "a mask per signal" : "one mask", where);
    else
        snprintf(buf, len, "n = %zu, k = %zu, %s", a->n, a->k, where);
}

/* A batch's signals, for the rows that run one signal a call. */
static size_t signals(const mh_args *a) { return a->conv1d.batch; }

static mh_args signal(const mh_args *a, size_t b)
{
    mh_args one = *a;
    one.conv1d = mh_conv1d_signal(&a->conv1d, b);
    return one;
}

const mh_op_table mh_conv1d_table = {
    .op = MH_OP_CONV1D,
    .name = "conv1d",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .describe = describe,
    .parts = signals,
    .part = signal,
};

mh_status mh_conv1d(mh_context *ctx, const char *variant, const float *in, size_t n, const float *mask, size_t k,
                    mh_pad pad, float *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv1d_args_init(ctx, &a, in, n, mask, k, pad, out);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_conv1d_batched(mh_context *ctx, const char *variant, const float *in, size_t batch, size_t n,
                            const float *mask, size_t mask_stride, size_t k, mh_pad pad, float *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv1d_batched_args_init(ctx, &a, in, batch, n, mask, mask_stride, k, pad, out);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_conv1d_batched_select(mh_context *ctx, size_t batch, size_t n, size_t mask_stride, size_t k,
                                   mh_pad pad, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv1d_batched_args_init(ctx, &a, NULL, batch, n, NULL, mask_stride, k, pad, NULL);
    return s == MH_OK ? mh_select(ctx, &a, chosen) : s;
}

mh_status mh_conv1d_select(mh_context *ctx, size_t n, size_t k, mh_pad pad, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv1d_args_init(ctx, &a, NULL, n, NULL, k, pad, NULL);
    return s == MH_OK ? mh_select(ctx, &a, chosen) : s;
}

mh_status mh_conv1d_supports(mh_context *ctx, const char *variant, size_t n, size_t k, mh_pad pad)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv1d_args_init(ctx, &a, NULL, n, NULL, k, pad, NULL);
    return s == MH_OK ? mh_supports(ctx, variant, &a) : s;
}

mh_status mh_conv1d_mode(mh_context *ctx, const char *variant, const float *in, size_t batch, size_t n,
                         const float *mask, size_t mask_stride, size_t k, mh_mode mode, float cval, long long origin,
                         float *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv1d_mode_args_init(ctx, &a, in, batch, n, mask, mask_stride, k, mode, cval, origin, out);
    return s == MH_OK ? mh_dispatch(ctx, variant, &a) : s;
}

mh_status mh_conv1d_mode_select(mh_context *ctx, size_t batch, size_t n, size_t mask_stride, size_t k, mh_mode mode,
                                long long origin, const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv1d_mode_args_init(ctx, &a, NULL, batch, n, NULL, mask_stride, k, mode, 0.0f, origin, NULL);
    return s == MH_OK ? mh_select(ctx, &a, chosen) : s;
}

mh_status mh_conv1d_mode_supports(mh_context *ctx, const char *variant, size_t batch, size_t n, size_t k,
                                  mh_mode mode, long long origin)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_args a;
    mh_status s = mh_conv1d_mode_args_init(ctx, &a, NULL, batch, n, NULL, 0, k, mode, 0.0f, origin, NULL);
    return s == MH_OK ? mh_supports(ctx, variant, &a) : s;
}

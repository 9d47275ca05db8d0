/* conv1d front-end: the op's registry table, argument checks, `auto`, and dispatch.
 *
 * The table is the concatenation of the row groups below, in ladder order: CPU rows,
 * the seeds' CUDA rungs, ours, then the vendor baselines. Adding a variant is adding a
 * row to its backend file's array; nothing else names it. */
#include "../core/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef const mh_conv1d_row *(*row_group_fn)(size_t *count);

static const row_group_fn groups[] = {
    mh_conv1d_cpu_rows,   mh_conv1d_cuda_rows,  mh_conv1d_regtile_rows,
    mh_conv1d_cudnn_rows, mh_conv1d_cufft_rows,
};
#define GROUP_COUNT (sizeof groups / sizeof groups[0])

size_t mh_conv1d_row_count(void)
{
    size_t total = 0;
    for (size_t g = 0; g < GROUP_COUNT; ++g) {
        size_t n = 0;
        groups[g](&n);
        total += n;
    }
    return total;
}

const mh_conv1d_row *mh_conv1d_row_at(size_t i)
{
    for (size_t g = 0; g < GROUP_COUNT; ++g) {
        size_t n = 0;
        const mh_conv1d_row *rows = groups[g](&n);
        if (i < n) return &rows[i];
        i -= n;
    }
    return NULL;
}

static const mh_variant_info *info_at(size_t i)
{
    const mh_conv1d_row *r = mh_conv1d_row_at(i);
    return r ? &r->info : NULL;
}

const mh_op_table mh_conv1d_table = {MH_OP_CONV1D, "conv1d", mh_conv1d_row_count, info_at};

const mh_conv1d_row *mh_conv1d_row_of(const mh_variant_info *info)
{
    /* info is the first member of its row */
    return info && info->op == MH_OP_CONV1D ? (const mh_conv1d_row *)info : NULL;
}

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

mh_status mh_conv1d_args_init(mh_context *ctx, mh_conv1d_args *a, const float *in, size_t n,
                              const float *mask, size_t k, mh_pad pad, float *out)
{
    memset(a, 0, sizeof *a);
    if (n == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "n = 0: the input is empty");
    if (k == 0) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "k = 0: the mask is empty");
    if (pad != MH_PAD_VALID && pad != MH_PAD_SAME && pad != MH_PAD_FULL)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "pad = %d is not valid, same or full",
                       (int)pad);
    if (pad == MH_PAD_VALID && k > n)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "k = %zu is longer than n = %zu: valid padding needs k <= n", k, n);
    size_t out_n = mh_conv1d_out_len(n, k, pad), bytes;
    if (out_n == 0 || !mh_mul_ok(out_n, sizeof(float), &bytes) ||
        !mh_mul_ok(n, sizeof(float), &bytes) || !mh_mul_ok(k, sizeof(float), &bytes))
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "n = %zu, k = %zu: the %s output's size in bytes overflows size_t", n, k,
                       mh_pad_name(pad));
    a->in = in;
    a->n = n;
    a->mask = mask;
    a->k = k;
    a->pad = pad;
    a->lpad = pad == MH_PAD_VALID ? 0 : pad == MH_PAD_SAME ? (k - 1) / 2 : k - 1;
    a->out_n = out_n;
    a->out = out;
    return MH_OK;
}

static int backend_fits(const mh_context *ctx, const mh_conv1d_row *row)
{
    return (row->info.backend == MH_BACKEND_CPU) == (mh_is_cpu(ctx) != 0);
}

static int row_supports(const mh_context *ctx, const mh_conv1d_row *row, const mh_conv1d_args *a,
                        char *why, size_t len)
{
    if (!backend_fits(ctx, row)) {
        snprintf(why, len, "it runs on %s, the context is %s",
                 row->info.backend == MH_BACKEND_CPU ? "the CPU" : "a CUDA device",
                 mh_is_cpu(ctx) ? "the CPU" : "a CUDA device");
        return 0;
    }
    return row->supports(ctx, a, why, len);
}

/* `auto`, from the calibration in docs/conv1d.md ("How auto chooses"). On the H100,
 * regtile runs every k at ~87% of the FMA ceiling (56 TFLOP/s); the full-size cuFFT
 * convolution costs ~75 ps per transform element and at least ~0.1 ms, whatever k. The
 * FFT goes first only where this model gives it a 10% margin: k above ~2300 at large n. */
static int fft_pays(const mh_conv1d_args *a)
{
    const double direct_ms = 2.0 * (double)a->out_n * (double)a->k / 56e9;
    const double fft_ms = fmax(0.1, 75e-9 * (double)(a->n + a->k - 1));
    return fft_ms < 0.9 * direct_ms;
}

static const char *const auto_cpu[] = {"cpu-omp", NULL};
static const char *const auto_direct[] = {"regtile", "cufft", "naive", NULL};
static const char *const auto_fft[] = {"cufft", "regtile", "naive", NULL};

static const char *const *auto_order(const mh_context *ctx, const mh_conv1d_args *a)
{
    return mh_is_cpu(ctx) ? auto_cpu : fft_pays(a) ? auto_fft : auto_direct;
}

/* The first candidate after `after` (NULL: from the start) that supports the problem. */
static const mh_conv1d_row *select_row(const mh_context *ctx, const mh_conv1d_args *a, const mh_conv1d_row *after)
{
    char why[256];
    int skipping = after != NULL;
    for (const char *const *order = auto_order(ctx, a); *order; ++order) {
        const mh_conv1d_row *row = mh_conv1d_row_of(mh_variant_lookup(MH_OP_CONV1D, *order));
        if (!row) continue;
        if (skipping) {
            skipping = row != after;
            continue;
        }
        if (row_supports(ctx, row, a, why, sizeof why)) return row;
    }
    return NULL;
}

static int is_auto(const char *variant) { return !variant || strcmp(variant, "auto") == 0; }

/* Resolves the variant name and checks it accepts the problem. */
static mh_status resolve(mh_context *ctx, const char *variant, const mh_conv1d_args *a,
                         const mh_conv1d_row **out)
{
    const mh_conv1d_row *row = NULL;
    if (is_auto(variant)) {
        row = select_row(ctx, a, NULL);
        if (!row)
            return mh_fail(ctx, MH_ERR_UNSUPPORTED,
                           "auto: no conv1d variant supports n = %zu, k = %zu, pad = %s here",
                           a->n, a->k, mh_pad_name(a->pad));
    } else {
        row = mh_conv1d_row_of(mh_variant_lookup(MH_OP_CONV1D, variant));
        if (!row)
            return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                           "variant = '%s' is not a conv1d variant (memhier list conv1d)", variant);
        char why[512] = "";
        if (!row_supports(ctx, row, a, why, sizeof why))
            return mh_fail(ctx, MH_ERR_UNSUPPORTED, "%s refuses n = %zu, k = %zu, pad = %s: %s",
                           row->info.name, a->n, a->k, mh_pad_name(a->pad), why);
    }
    *out = row;
    return MH_OK;
}

static mh_status check_buffers(mh_context *ctx, const mh_conv1d_args *a)
{
    size_t in_b = a->n * sizeof(float), mask_b = a->k * sizeof(float);
    size_t out_b = a->out_n * sizeof(float);
    mh_status s;
    if ((s = mh_check_buffer(ctx, "in", a->in, in_b)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, "mask", a->mask, mask_b)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, "out", a->out, out_b)) != MH_OK) return s;
    if ((s = mh_check_disjoint(ctx, "out", a->out, out_b, "in", a->in, in_b)) != MH_OK) return s;
    return mh_check_disjoint(ctx, "out", a->out, out_b, "mask", a->mask, mask_b);
}

mh_status mh_conv1d_run_row(mh_context *ctx, const mh_conv1d_row *row, const mh_conv1d_args *a)
{
    if (mh_is_cpu(ctx)) return row->run(ctx, a);
    mh_device_guard guard;
    mh_status s = mh_device_enter(ctx, &guard);
    if (s != MH_OK) return s;
    s = row->run(ctx, a);
    mh_device_leave(&guard);
    return s;
}

mh_status mh_conv1d(mh_context *ctx, const char *variant, const float *in, size_t n,
                    const float *mask, size_t k, mh_pad pad, float *out)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    mh_conv1d_args a;
    const mh_conv1d_row *row = NULL;
    mh_status s = mh_conv1d_args_init(ctx, &a, in, n, mask, k, pad, out);
    if (s == MH_OK) s = resolve(ctx, variant, &a, &row);
    if (s != MH_OK) return s;
    mh_device_guard guard;
    if (!mh_is_cpu(ctx) && (s = mh_device_enter(ctx, &guard)) != MH_OK) return s;
    s = check_buffers(ctx, &a);
    if (s == MH_OK) s = row->run(ctx, &a);
    /* auto's first choice may need workspace the device lacks: take the next candidate */
    while (s == MH_ERR_OUT_OF_MEMORY && is_auto(variant) && (row = select_row(ctx, &a, row)) != NULL) {
        mh_clear_error(ctx);
        s = row->run(ctx, &a);
    }
    if (!mh_is_cpu(ctx)) mh_device_leave(&guard);
    return s;
}

/* Resolves a variant from the sizes alone, with no buffers: what select and supports answer. */
static mh_status resolve_sizes(mh_context *ctx, const char *variant, size_t n, size_t k, mh_pad pad,
                               const mh_conv1d_row **row)
{
    mh_conv1d_args a;
    mh_status s = mh_conv1d_args_init(ctx, &a, NULL, n, NULL, k, pad, NULL);
    return s == MH_OK ? resolve(ctx, variant, &a, row) : s;
}

mh_status mh_conv1d_select(mh_context *ctx, size_t n, size_t k, mh_pad pad,
                           const mh_variant_info **chosen)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (!chosen) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "chosen is NULL");
    const mh_conv1d_row *row = NULL;
    mh_status s = resolve_sizes(ctx, NULL, n, k, pad, &row);
    if (s == MH_OK) *chosen = &row->info;
    return s;
}

mh_status mh_conv1d_supports(mh_context *ctx, const char *variant, size_t n, size_t k, mh_pad pad)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    const mh_conv1d_row *row = NULL;
    return resolve_sizes(ctx, variant, n, k, pad, &row);
}

/* The path of every public op call, whatever the op: resolve the variant (`auto` asks the
 * op for its candidates), check that it accepts the problem, check the buffers, make the
 * context's device current, run. */
#include "internal.h"
#include "../adapters/vendor_lib.h"

#include <stdio.h>
#include <string.h>

int mh_supports_any(const mh_context *ctx, const mh_args *a, char *why, size_t len)
{
    (void)ctx, (void)a, (void)why, (void)len;
    return 1;
}

static int is_auto(const char *variant) { return !variant || strcmp(variant, "auto") == 0; }

static void describe(const mh_args *a, char *buf, size_t len);

static int row_supports(const mh_context *ctx, const mh_row *row, const mh_args *a, char *why, size_t len)
{
    if ((row->info.backend == MH_BACKEND_CPU) != (mh_is_cpu(ctx) != 0)) {
        snprintf(why, len, "it runs on %s, the context is %s",
                 row->info.backend == MH_BACKEND_CPU ? "the CPU" : "a CUDA device",
                 mh_is_cpu(ctx) ? "the CPU" : "a CUDA device");
        return 0;
    }
    const mh_op_table *t = mh_op_table_of(a->op);
    if (t->row_accepts && !t->row_accepts(row, a, why, len)) return 0;
    if (row->needs != MH_LIB_NONE && !mh_vendor_open(row->needs, why, len)) return 0;
    return row->supports(ctx, a, why, len);
}

/* Why auto never takes the row on this context (a race shown on purpose, reduced precision, a
 * normwise bound under the per-element contract), or NULL where it may. */
static const char *never_auto(const mh_context *ctx, const mh_row *row)
{
    if (mh_variant_is_demonstration(&row->info)) return "wrong by design";
    if (mh_variant_is_reduced_precision(&row->info)) return "reduced precision";
    if (ctx->precision == MH_PRECISION_PER_ELEMENT && (row->flags & MH_ROW_NORMWISE))
        return "its error is bounded normwise; the context asks per-element";
    return NULL;
}

/* auto's first candidate after `after` (NULL: from the start) that supports the problem; where
 * none does, first_why (when not NULL) gets the first candidate's reason. */
static const mh_row *auto_row(mh_context *ctx, const mh_args *a, const mh_row *after, char *first_why, size_t len)
{
    const mh_op_table *t = mh_op_table_of(a->op);
    char why[256];
    int skipping = after != NULL, first = 1;
    for (const char *const *name = t->auto_order(ctx, a, NULL, 0); *name; ++name) {
        const mh_row *row = mh_row_of(mh_variant_lookup(a->op, *name));
        if (!row || never_auto(ctx, row)) continue;
        if (skipping) {
            skipping = row != after;
            continue;
        }
        if (row_supports(ctx, row, a, why, sizeof why)) return row;
        if (first && first_why) snprintf(first_why, len, "%s: %s", row->info.name, why);
        first = 0;
    }
    return NULL;
}

mh_status mh_resolve(mh_context *ctx, const char *variant, const mh_args *a, const mh_row **out)
{
    const mh_op_table *t = mh_op_table_of(a->op);
    char problem[256]; /* described for a refusal only: a call that runs pays no formatting */
    const mh_row *row;
    if (is_auto(variant)) {
        char first_why[320] = "";
        if (!(row = auto_row(ctx, a, NULL, first_why, sizeof first_why))) {
            describe(a, problem, sizeof problem);
            return mh_fail(ctx, MH_ERR_UNSUPPORTED, "auto: no %s variant supports %s here under the %s contract (%s)",
                           t->name, problem, mh_precision_name(ctx->precision),
                           first_why[0] ? first_why : "no candidate on this backend");
        }
    } else {
        const mh_variant_info *info = mh_variant_lookup(a->op, variant);
        if (!info)
            return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "variant = '%s' is not a %s variant (memhier list %s)",
                           variant, t->name, t->name);
        row = mh_row_of(info);
        char why[512] = "";
        if (!row_supports(ctx, row, a, why, sizeof why)) {
            describe(a, problem, sizeof problem);
            return mh_fail(ctx, MH_ERR_UNSUPPORTED, "%s refuses %s: %s", row->info.name, problem, why);
        }
    }
    *out = row;
    return MH_OK;
}

/* A problem of independent parts (a conv1d batch) goes whole to rows with a batched kernel;
 * any other row runs it part by part. */
static mh_status run_parts(mh_context *ctx, const mh_row *row, const mh_args *a)
{
    const mh_op_table *t = mh_op_table_of(a->op);
    const size_t parts = t->parts ? t->parts(a) : 1;
    if (parts <= 1 || row->batched) return row->run(ctx, a);
    for (size_t i = 0; i < parts; ++i) {
        const mh_args one = t->part(a, i);
        const mh_status s = row->run(ctx, &one);
        if (s != MH_OK) return s;
    }
    return MH_OK;
}

/* One row, under the context's lock, on the call as the op prepares it (mh_op_table.prepare),
 * its use of shared state fenced (mh_shared_release). */
static mh_status run_locked(mh_context *ctx, const mh_row *row, const mh_args *a)
{
    const mh_op_table *t = mh_op_table_of(a->op);
    mh_args prepared;
    mh_status s = t->prepare ? t->prepare(ctx, row, a, &prepared) : MH_OK;
    if (s == MH_OK) s = run_parts(ctx, row, t->prepare ? &prepared : a);
    mh_shared_release(ctx);
    return s;
}

mh_status mh_run_row(mh_context *ctx, const mh_row *row, const mh_args *a)
{
    /* the dispatcher opens a row's library before asking supports(); a row run directly (the
     * bench's timed runs, the tests' configurations) may be the first to need it */
    if (row->needs != MH_LIB_NONE) {
        const mh_status s = mh_vendor_need(ctx, row->needs);
        if (s != MH_OK) return s;
    }
    mh_context_lock(ctx);
    mh_device_guard guard;
    mh_status s = mh_is_cpu(ctx) ? MH_OK : mh_device_enter(ctx, &guard);
    if (s == MH_OK) {
        s = run_locked(ctx, row, a);
        if (!mh_is_cpu(ctx)) mh_device_leave(&guard);
    }
    mh_context_unlock(ctx);
    return s;
}

mh_status mh_dispatch_resolved(mh_context *ctx, const char *variant, const mh_args *a, const mh_row *row)
{
    mh_status s = run_locked(ctx, row, a);
    /* auto's first choice may need workspace the device lacks: take the next candidate */
    while (s == MH_ERR_OUT_OF_MEMORY && is_auto(variant) && (row = auto_row(ctx, a, row, NULL, 0)) != NULL) {
        mh_clear_error(ctx);
        s = run_locked(ctx, row, a);
    }
    return s;
}

static mh_status dispatch_locked(mh_context *ctx, const char *variant, const mh_args *a)
{
    mh_device_guard guard;
    mh_status s = MH_OK;
    if (!mh_is_cpu(ctx) && (s = mh_device_enter(ctx, &guard)) != MH_OK) return s;
    const mh_row *row = NULL;
    s = mh_op_table_of(a->op)->check_buffers(ctx, a);
    if (s == MH_OK) s = mh_resolve(ctx, variant, a, &row);
    if (s == MH_OK) s = mh_dispatch_resolved(ctx, variant, a, row);
    if (!mh_is_cpu(ctx)) mh_device_leave(&guard);
    return s;
}

mh_status mh_dispatch(mh_context *ctx, const char *variant, const mh_args *a)
{
    mh_context_lock(ctx);
    const mh_status s = dispatch_locked(ctx, variant, a);
    mh_context_unlock(ctx);
    return s;
}

/* Appends to buf (text so far: used of len). */
static void append(char *buf, size_t len, size_t *used, const char *fmt, ...) MH_PRINTF(4, 5);
static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used >= len) return;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    if (n > 0) *used = *used + (size_t)n < len ? *used + (size_t)n : len;
}

void mh_explain(mh_context *ctx, const mh_args *a, char *buf, size_t len)
{
    const mh_op_table *t = mh_op_table_of(a->op);
    const mh_auto_rules *r = ctx->rules;
    char problem[256], why[512];
    size_t used = 0;
    buf[0] = '\0';
    describe(a, problem, sizeof problem);
    append(buf, len, &used, "%s %s\n", t->name, problem);
    if (mh_is_cpu(ctx)) append(buf, len, &used, "on the CPU backend\n");
    else
        append(buf, len, &used, "on GPU %d, %s (compute capability %d.%d, %d SMs); auto's rules: %s%s\n", ctx->device,
               ctx->name, ctx->cc / 10, ctx->cc % 10, ctx->sm_count, r->device,
               strcmp(r->device, ctx->name) ? " (the fallback: no rules were measured on this device)" : "");
    append(buf, len, &used, "contract: %s%s\n", mh_precision_name(ctx->precision),
           ctx->precision == MH_PRECISION_PER_ELEMENT ? " (every output within its own terms' FP32 bound; normwise rows skipped)"
                                                      : " (the FFT rows' normwise bound allowed)");
    char rule[1024] = "";
    const char *const *order = t->auto_order(ctx, a, mh_is_cpu(ctx) ? NULL : rule, sizeof rule);
    if (rule[0]) append(buf, len, &used, "rule: %s\n", rule);
    append(buf, len, &used, "candidates, in auto's order (a row that fails to get its workspace passes the call on):\n");
    int chosen = 0;
    for (const char *const *name = order; *name; ++name) {
        const mh_row *row = mh_row_of(mh_variant_lookup(a->op, *name));
        if (!row) continue;
        append(buf, len, &used, "  %-24s ", row->info.name);
        const char *never = never_auto(ctx, row);
        if (never) {
            append(buf, len, &used, "never auto's (%s)\n", never);
            continue;
        }
        why[0] = '\0';
        if (!row_supports(ctx, row, a, why, sizeof why)) {
            append(buf, len, &used, "refuses: %s\n", why[0] ? why : "(no reason given)");
            continue;
        }
        append(buf, len, &used, "%s", chosen ? "would run it" : "RUNS IT");
        if (!chosen) append(buf, len, &used, " (%s)", mh_precision_name(mh_variant_precision(&row->info)));
        if (row->config_for) append(buf, len, &used, " (configuration %s)", row->config_for(ctx, a));
        append(buf, len, &used, "\n");
        chosen = 1;
    }
    if (!chosen) append(buf, len, &used, "  no candidate takes this problem\n");
}

/* The calling thread's last select: on which context, for which problem (sizes only: select's
 * args hold no buffers), and its explanation once asked for. The explanation is made on demand:
 * it asks every candidate, which may open a vendor library that select itself never reaches. */
static _Thread_local struct {
    const mh_context *ctx;
    mh_args args;
    char text[8192];
} last_select;

void mh_forget_select(const mh_context *ctx)
{
    if (last_select.ctx == ctx) last_select.ctx = NULL;
}

const char *mh_context_explanation(mh_context *ctx)
{
    if (!ctx || last_select.ctx != ctx) return "";
    mh_context_lock(ctx);
    mh_explain(ctx, &last_select.args, last_select.text, sizeof last_select.text);
    mh_context_unlock(ctx);
    return last_select.text;
}

mh_status mh_select(mh_context *ctx, const mh_args *a, const mh_variant_info **chosen)
{
    if (!chosen) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "chosen is NULL");
    const mh_row *row = NULL;
    mh_context_lock(ctx);
    const mh_status s = mh_resolve(ctx, NULL, a, &row);
    mh_context_unlock(ctx);
    last_select.ctx = ctx;
    last_select.args = *a;
    if (s == MH_OK) *chosen = &row->info;
    return s;
}

mh_status mh_supports(mh_context *ctx, const char *variant, const mh_args *a)
{
    const mh_row *row = NULL;
    mh_context_lock(ctx);
    const mh_status s = mh_resolve(ctx, variant, a, &row);
    mh_context_unlock(ctx);
    return s;
}

/* "n = 1000, k = 31, pad = same": how refusals name the problem (each op's describe hook). */
static void describe(const mh_args *a, char *buf, size_t len)
{
    const mh_op_table *t = mh_op_table_of(a->op);
    if (t && t->describe) t->describe(a, buf, len);
    else snprintf(buf, len, "this problem");
}

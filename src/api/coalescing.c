/* coalescing: seed 004's access-pattern micro-benchmarks, listed in the registry so that
 * `memhier list` and `memhier bench coalescing` see them; no public call (bench only). */
#include "../core/internal.h"

#include <stdio.h>

size_t mh_coalescing_span(size_t n, mh_access_pattern pattern, int param)
{
    return pattern == MH_PATTERN_OFFSET ? n + (size_t)param : (n - 1) * (size_t)param + 1;
}

static mh_status check_buffers(mh_context *ctx, const mh_args *args)
{
    const mh_coalescing_args *a = &args->coalescing;
    const size_t bytes = mh_coalescing_span(a->n, a->pattern, a->param) * sizeof(float);
    mh_status s = mh_check_buffer(ctx, "in", a->in, bytes);
    return s == MH_OK ? mh_check_buffer(ctx, "out", a->out, bytes) : s;
}

static const char *const *auto_order(mh_context *ctx, const mh_args *a, char *why, size_t len)
{
    static const char *const offset[] = {"offset", NULL}, *const stride[] = {"stride", NULL};
    (void)ctx;
    return a->coalescing.pattern == MH_PATTERN_OFFSET ? offset : stride;
}

static const mh_row_group groups[] = {mh_coalescing_cuda_rows};

static void describe(const mh_args *args, char *buf, size_t len)
{
    const mh_coalescing_args *a = &args->coalescing;
    snprintf(buf, len, "%zu threads, %s %d", a->n, a->pattern == MH_PATTERN_OFFSET ? "offset" : "stride", a->param);
}

const mh_op_table mh_coalescing_table = {
    .op = MH_OP_COALESCING,
    .name = "coalescing",
    .groups = groups,
    .ngroups = sizeof groups / sizeof groups[0],
    .auto_order = auto_order,
    .check_buffers = check_buffers,
    .describe = describe,
};

/* memhier explain OP SIZES: which variant `auto` runs for a problem on this device, and why: the
 * device's rules, the rule with this problem's numbers, and every candidate's answer. Nothing is
 * allocated or run; the explanation is the one mh_*_select leaves (mh_context_explanation). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

enum { E_DEVICE, E_N, E_K, E_BATCH, E_ROWS, E_COLS, E_KROWS, E_KCOLS, E_M, E_BINS, E_PAD, E_MODE, E_PRECISION, E_COUNT };
static const char *const flags[] = {"--device", "--n",   "--k",    "--batch", "--rows",      "--cols", "--krows",
                                    "--kcols",  "--m",   "--bins", "--pad",   "--mode", "--precision", NULL};

/* The sizes each op takes: required, then optional (the others are refused by name). */
static const struct op_sizes {
    mh_op op;
    int required[5], optional[5];
} op_sizes[] = {
    {MH_OP_CONV1D, {E_N, E_K, -1}, {E_BATCH, E_PAD, E_MODE, E_PRECISION, -1}},
    {MH_OP_CONV2D, {E_ROWS, E_COLS, E_KROWS, E_KCOLS, -1}, {E_PAD, E_MODE, E_PRECISION, -1}},
    {MH_OP_TRANSPOSE, {E_ROWS, E_COLS, -1}, {-1}},
    {MH_OP_MATMUL, {E_M, E_K, E_N, -1}, {-1}},
    {MH_OP_REDUCE, {E_N, -1}, {-1}},
    {MH_OP_HISTOGRAM, {E_N, E_BINS, -1}, {-1}},
};

static int listed(const int *list, int flag)
{
    for (; *list >= 0; ++list)
        if (*list == flag) return 1;
    return 0;
}

/* Every flag given is one the op takes, every required one is there; sizes parsed. */
static int check_flags(const struct op_sizes *s, const char **v, size_t *size)
{
    for (int f = E_N; f < E_PAD; ++f) {
        const int req = listed(s->required, f), opt = listed(s->optional, f);
        if (v[f] && !req && !opt)
            return cli_error(CLI_USAGE, "explain %s: %s is not one of its sizes", mh_op_name(s->op), flags[f]);
        if (!v[f] && req) return cli_error(CLI_USAGE, "explain %s: %s is needed", mh_op_name(s->op), flags[f]);
        if (v[f] && cli_parse_count(flags[f], v[f], &size[f]) != CLI_OK) return CLI_USAGE;
    }
    for (int f = E_PAD; f <= E_PRECISION; ++f)
        if (v[f] && !listed(s->optional, f))
            return cli_error(CLI_USAGE, "explain %s: %s is not one of its sizes", mh_op_name(s->op), flags[f]);
    if (v[E_PAD] && v[E_MODE])
        return cli_error(CLI_USAGE, "explain %s: --pad and --mode both place the filter; give one", mh_op_name(s->op));
    return CLI_OK;
}

/* mode: -1 for zeros by `pad`, else a boundary mode (origin 0). */
static mh_status select_for(mh_context *ctx, mh_op op, const size_t *z, mh_pad pad, int mode, int bytes,
                            const mh_variant_info **chosen)
{
    const size_t batch = z[E_BATCH] ? z[E_BATCH] : 1;
    switch (op) {
    case MH_OP_CONV1D:
        if (mode >= 0) return mh_conv1d_mode_select(ctx, batch, z[E_N], 0, z[E_K], (mh_mode)mode, 0, chosen);
        return z[E_BATCH] > 1 ? mh_conv1d_batched_select(ctx, z[E_BATCH], z[E_N], 0, z[E_K], pad, chosen)
                              : mh_conv1d_select(ctx, z[E_N], z[E_K], pad, chosen);
    case MH_OP_CONV2D:
        if (mode >= 0)
            return mh_conv2d_mode_select(ctx, z[E_ROWS], z[E_COLS], z[E_KROWS], z[E_KCOLS], (mh_mode)mode, 0, 0, chosen);
        return mh_conv2d_select(ctx, z[E_ROWS], z[E_COLS], z[E_KROWS], z[E_KCOLS], pad, chosen);
    case MH_OP_TRANSPOSE: return mh_transpose_select(ctx, z[E_ROWS], z[E_COLS], chosen);
    case MH_OP_MATMUL: return mh_matmul_select(ctx, z[E_M], z[E_K], z[E_N], chosen);
    case MH_OP_REDUCE: return mh_reduce_sum_select(ctx, z[E_N], chosen);
    default:
        if (z[E_BINS] > (size_t)(1 << 20)) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "--bins %zu: at most 2^20", z[E_BINS]);
        return mh_histogram_select(ctx, z[E_N], (int)z[E_BINS], bytes, chosen);
    }
}

int cmd_explain(int argc, char **argv)
{
    if (argc < 1) return cli_error(CLI_USAGE, "explain: name an op (conv1d, conv2d, transpose, matmul, reduce, histogram)");
    mh_op op;
    int rc = cli_parse_op(argv[0], &op);
    if (rc != CLI_OK) return rc;
    const struct op_sizes *s = NULL;
    for (size_t i = 0; i < sizeof op_sizes / sizeof op_sizes[0]; ++i)
        if (op_sizes[i].op == op) s = &op_sizes[i];
    if (!s)
        return cli_error(CLI_USAGE, "explain: %s has nothing to explain (coalescing: its pattern names the row; "
                         "sepfilter: on a GPU lines for a filter of the vertical axis alone, walk for float32 "
                         "gray images of filters it takes or along the rows, fused for the others, fused64 first for "
                         "the types computed in float64, two-pass past their taps; rank: cpu-omp, on the CPU only)",
                         argv[0]);
    /* --bytes, --floats, --edges (histogram: the kind of values) take no value: take them out
     * before the valued flags */
    int bytes = MH_HISTOGRAM_INT32, n = 0;
    char *rest[64];
    for (int i = 1; i < argc && n < 64; ++i) {
        if (op == MH_OP_HISTOGRAM && !strcmp(argv[i], "--bytes")) bytes = MH_HISTOGRAM_BYTES;
        else if (op == MH_OP_HISTOGRAM && !strcmp(argv[i], "--floats")) bytes = MH_HISTOGRAM_FLOAT_UNIFORM;
        else if (op == MH_OP_HISTOGRAM && !strcmp(argv[i], "--edges")) bytes = MH_HISTOGRAM_FLOAT_EDGES;
        else rest[n++] = argv[i];
    }
    if (n == 64) return cli_error(CLI_USAGE, "explain: too many arguments");
    const char *v[E_COUNT + 1];
    if ((rc = cli_flags(n, rest, "explain", flags, v)) != CLI_OK) return rc;
    size_t size[E_COUNT] = {0};
    if ((rc = check_flags(s, v, size)) != CLI_OK) return rc;
    mh_pad pad = MH_PAD_VALID;
    if (v[E_PAD] && (rc = cli_parse_pad(v[E_PAD], &pad)) != CLI_OK) return rc;
    mh_mode parsed;
    int mode = -1;
    if (v[E_MODE] && (rc = cli_parse_mode(v[E_MODE], &parsed)) != CLI_OK) return rc;
    if (v[E_MODE]) mode = (int)parsed;
    int device;
    if ((rc = cli_device(v[E_DEVICE], &device)) != CLI_OK) return rc;
    mh_precision precision;
    if (v[E_PRECISION] && (rc = cli_parse_precision(v[E_PRECISION], &precision)) != CLI_OK) return rc;
    mh_context *ctx;
    if ((rc = cli_context(device, v[E_PRECISION] ? &precision : NULL, &ctx)) != CLI_OK) return rc;
    const mh_variant_info *chosen = NULL;
    mh_status st = select_for(ctx, op, size, pad, mode, bytes, &chosen);
    fputs(mh_context_explanation(ctx), stdout);
    if (st == MH_OK) printf("auto runs %s (%s)\n", chosen->name, mh_precision_name(mh_variant_precision(chosen)));
    else rc = cli_error(st == MH_ERR_INVALID_ARGUMENT ? CLI_USAGE : CLI_FAILED, "%s", mh_context_error(ctx));
    mh_context_destroy(ctx);
    return rc;
}

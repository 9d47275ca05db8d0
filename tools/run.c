/* memhier run OP: compute one op on .npy files, on GPU 0 (or --device), else the CPU. */
#include "cli.h"
#include "io/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A host array and its copy in the context's memory (the same pointer on the CPU). */
typedef struct run_buffer {
    void *host, *ctx_mem;
    size_t bytes;
} run_buffer;

static int place(mh_context *ctx, run_buffer *b, int upload)
{
    if (mh_context_device(ctx) == MH_CPU) {
        b->ctx_mem = b->host;
        return CLI_OK;
    }
    mh_status s = mh_alloc(ctx, b->bytes, &b->ctx_mem);
    if (s == MH_OK && upload) s = mh_upload(ctx, b->ctx_mem, b->host, b->bytes);
    return s == MH_OK ? CLI_OK : cli_error(CLI_FAILED, "%s", mh_context_error(ctx));
}

static int fetch(mh_context *ctx, run_buffer *b)
{
    if (mh_context_device(ctx) == MH_CPU || mh_download(ctx, b->host, b->ctx_mem, b->bytes) == MH_OK) return CLI_OK;
    return cli_error(CLI_FAILED, "%s", mh_context_error(ctx));
}

static void release(mh_context *ctx, run_buffer *b)
{
    if (ctx && mh_context_device(ctx) != MH_CPU) mh_free(ctx, b->ctx_mem);
    b->ctx_mem = NULL;
}

/* Reads a 1-D float32 .npy; prints why not otherwise. */
static int read_vector(const char *flag, const char *path, mh_array *a)
{
    char err[512];
    if (mh_npy_read(path, a, err, sizeof err) != MH_OK) return cli_error(CLI_FAILED, "%s %s", flag, err);
    if (a->dtype != MH_F32 || a->ndim != 1) {
        cli_error(CLI_FAILED, "%s %s: conv1d needs a 1-D float32 (<f4) array; found %s with %d dimension%s",
                  flag, path, mh_dtype_descr(a->dtype), a->ndim, a->ndim == 1 ? "" : "s");
        mh_array_free(a);
        return CLI_FAILED;
    }
    return CLI_OK;
}

static int run_conv1d(int argc, char **argv)
{
    const char *variant = NULL, *in_path = NULL, *mask_path = NULL, *out_path = NULL, *v;
    int device = cli_default_device(), rc;
    mh_pad pad = MH_PAD_VALID;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--variant") && strcmp(a, "--device") && strcmp(a, "--in") && strcmp(a, "--mask") &&
            strcmp(a, "--pad") && strcmp(a, "--out"))
            return cli_error(CLI_USAGE, "run conv1d: unknown argument '%s'", a);
        if (!(v = cli_value(argc, argv, &i))) return CLI_USAGE;
        if (!strcmp(a, "--variant")) variant = v;
        else if (!strcmp(a, "--in")) in_path = v;
        else if (!strcmp(a, "--mask")) mask_path = v;
        else if (!strcmp(a, "--out")) out_path = v;
        else if (!strcmp(a, "--device") && (rc = cli_parse_device(v, &device)) != CLI_OK) return rc;
        else if (!strcmp(a, "--pad") && (rc = cli_parse_pad(v, &pad)) != CLI_OK) return rc;
    }
    if (!in_path || !mask_path || !out_path)
        return cli_error(CLI_USAGE, "run conv1d needs --in, --mask and --out");

    mh_array in, mask;
    if ((rc = read_vector("--in", in_path, &in)) != CLI_OK) return rc;
    if ((rc = read_vector("--mask", mask_path, &mask)) != CLI_OK) {
        mh_array_free(&in);
        return rc;
    }
    mh_context *ctx = NULL;
    mh_status s = mh_context_create(&ctx, device);
    const mh_variant_info *chosen = NULL;
    run_buffer bi = {in.data, NULL, in.count * 4}, bm = {mask.data, NULL, mask.count * 4}, bo = {0};
    if (s != MH_OK) {
        rc = cli_error(CLI_FAILED, "device %d: %s", device, mh_status_str(s));
    } else if ((s = mh_conv1d_supports(ctx, variant, in.count, mask.count, pad)) != MH_OK) {
        rc = cli_error(CLI_FAILED, "%s", mh_context_error(ctx));
    } else {
        if (!variant || !strcmp(variant, "auto")) mh_conv1d_select(ctx, in.count, mask.count, pad, &chosen);
        else chosen = mh_variant_lookup(MH_OP_CONV1D, variant);
        bo.bytes = mh_conv1d_out_len(in.count, mask.count, pad) * sizeof(float);
        bo.host = malloc(bo.bytes);
        rc = bo.host ? CLI_OK : cli_error(CLI_FAILED, "out of host memory for %zu bytes", bo.bytes);
        if (rc == CLI_OK) rc = place(ctx, &bi, 1);
        if (rc == CLI_OK) rc = place(ctx, &bm, 1);
        if (rc == CLI_OK) rc = place(ctx, &bo, 0);
        if (rc == CLI_OK) {
            s = mh_conv1d(ctx, chosen->name, bi.ctx_mem, in.count, bm.ctx_mem, mask.count, pad, bo.ctx_mem);
            if (s == MH_OK) s = mh_context_synchronize(ctx);
            if (s != MH_OK) rc = cli_error(CLI_FAILED, "%s: %s", chosen->name, mh_context_error(ctx));
        }
        if (rc == CLI_OK) rc = fetch(ctx, &bo);
        if (rc == CLI_OK) {
            char err[512];
            size_t shape[1] = {bo.bytes / sizeof(float)};
            if (mh_npy_write(out_path, MH_F32, 1, shape, bo.host, err, sizeof err) != MH_OK)
                rc = cli_error(CLI_FAILED, "--out %s", err);
            else
                printf("%s: n=%zu k=%zu pad=%s -> %zu outputs in %s\n", chosen->name, in.count, mask.count,
                       mh_pad_name(pad), shape[0], out_path);
        }
    }
    release(ctx, &bi);
    release(ctx, &bm);
    release(ctx, &bo);
    free(bo.host);
    mh_array_free(&in);
    mh_array_free(&mask);
    mh_context_destroy(ctx);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    if (argc < 1) return cli_error(CLI_USAGE, "run needs an op: memhier run conv1d ...");
    mh_op op;
    int rc = cli_parse_op(argv[0], &op);
    if (rc != CLI_OK) return rc;
    switch (op) {
    case MH_OP_CONV1D: return run_conv1d(argc - 1, argv + 1);
    default: return cli_error(CLI_USAGE, "run %s is not available yet", argv[0]);
    }
}

#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("memhier: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

/* Without --device (s NULL) the first GPU where there is one, else the CPU: asked only then, since
 * asking starts CUDA's driver (a tenth of a second and more on a GPU machine) for a CPU call. */
int cli_device(const char *s, int *device)
{
    if (!s) {
        *device = mh_cuda_device_count() > 0 ? 0 : MH_CPU;
        return CLI_OK;
    }
    if (strcmp(s, "cpu") == 0) {
        *device = MH_CPU;
        return CLI_OK;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < 0 || v > 1024)
        return cli_error(CLI_USAGE, "--device '%s': expected cpu or a GPU index", s);
    *device = (int)v;
    return CLI_OK;
}

int cli_parse_count(const char *flag, const char *s, size_t *v)
{
    char *end = (char *)s;
    errno = 0;
    /* digits alone: strtoull would skip leading spaces and take a sign (' -1' as 2^64 - 1) */
    unsigned long long x = isdigit((unsigned char)s[0]) ? strtoull(s, &end, 10) : 0;
    if (!isdigit((unsigned char)s[0]) || errno || *end || end == s || x == 0)
        return cli_error(CLI_USAGE, "%s '%s': expected a positive whole number", flag, s);
    *v = (size_t)x;
    return CLI_OK;
}

int cli_parse_pad(const char *s, mh_pad *pad)
{
    if (mh_pad_parse(s, pad) == MH_OK) return CLI_OK;
    return cli_error(CLI_USAGE, "--pad '%s': expected valid, same or full", s);
}

int cli_parse_mode(const char *s, mh_mode *mode)
{
    if (mh_mode_parse(s, mode) == MH_OK) return CLI_OK;
    return cli_error(CLI_USAGE, "--mode '%s': expected constant, reflect, mirror, nearest or wrap", s);
}

int cli_parse_precision(const char *s, mh_precision *precision)
{
    if (mh_precision_parse(s, precision) == MH_OK) return CLI_OK;
    return cli_error(CLI_USAGE, "--precision '%s': expected per-element or normwise", s);
}

int cli_context(int device, const mh_precision *precision, mh_context **ctx)
{
    mh_status s = mh_context_create_ex(ctx, device, MH_CONTEXT_LAZY_LOADING);
    if (s != MH_OK) return cli_error(CLI_FAILED, "device %d: %s", device, mh_status_str(s));
    if (precision && mh_context_set_precision(*ctx, *precision) != MH_OK) {
        cli_error(CLI_FAILED, "%s", mh_context_error(*ctx));
        mh_context_destroy(*ctx);
        *ctx = NULL;
        return CLI_FAILED;
    }
    return CLI_OK;
}

const char *cli_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        cli_error(CLI_USAGE, "%s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int cli_parse_op(const char *s, mh_op *op)
{
    for (int o = 0; o < MH_OP_COUNT; ++o)
        if (strcmp(s, mh_op_name((mh_op)o)) == 0) {
            *op = (mh_op)o;
            return CLI_OK;
        }
    return cli_error(CLI_USAGE, "unknown op '%s' (memhier list shows the ops)", s);
}

int cli_flags(int argc, char **argv, const char *cmd, const char *const *names, const char **values)
{
    size_t n = 0;
    while (names[n]) values[n++] = NULL;
    for (int i = 0; i < argc; ++i) {
        size_t k = 0;
        while (k < n && strcmp(argv[i], names[k])) ++k;
        if (k == n) return cli_error(CLI_USAGE, "%s: unknown argument '%s'", cmd, argv[i]);
        if (values[k]) return cli_error(CLI_USAGE, "%s: %s given twice ('%s', then '%s')", cmd, names[k], values[k],
                                        i + 1 < argc ? argv[i + 1] : "");
        if (!(values[k] = cli_value(argc, argv, &i))) return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_place(mh_context *ctx, cli_buffer *b, int upload)
{
    if (mh_context_device(ctx) == MH_CPU) {
        b->mem = b->host;
        return CLI_OK;
    }
    if (b->bytes == 0) { /* an empty array (reduce of n = 0): the API takes NULL for it */
        b->mem = NULL;
        return CLI_OK;
    }
    mh_status s = mh_alloc(ctx, b->bytes, &b->mem);
    if (s == MH_OK && upload) s = mh_upload(ctx, b->mem, b->host, b->bytes);
    return s == MH_OK ? CLI_OK : cli_error(CLI_FAILED, "%s", mh_context_error(ctx));
}

int cli_fetch(mh_context *ctx, cli_buffer *b)
{
    if (mh_context_device(ctx) == MH_CPU || mh_download(ctx, b->host, b->mem, b->bytes) == MH_OK) return CLI_OK;
    return cli_error(CLI_FAILED, "%s", mh_context_error(ctx));
}

void cli_release(mh_context *ctx, cli_buffer *b)
{
    if (ctx && mh_context_device(ctx) != MH_CPU) mh_free(ctx, b->mem);
    b->mem = NULL;
}

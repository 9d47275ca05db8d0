/* memhier run OP: compute one op on .npy files, on GPU 0 (or --device), else the CPU. */
#include "cli.h"
#include "io/npy.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a float32 .npy (or float64, where the op takes it) of `ndim` dimensions (1 or 2 where
 * ndim is RUN_1D_OR_2D); prints why not otherwise. */
enum { RUN_1D_OR_2D = -1 };
static int read_float_array(const char *op, const char *flag, const char *path, int ndim, int float64, mh_array *a)
{
    char err[512];
    if (mh_npy_read(path, a, err, sizeof err) != MH_OK) return cli_error(CLI_FAILED, "%s %s", flag, err);
    const int fits = ndim == RUN_1D_OR_2D ? a->ndim == 1 || a->ndim == 2 : a->ndim == ndim;
    if ((a->dtype != MH_F32 && !(float64 && a->dtype == MH_F64)) || !fits) {
        cli_error(CLI_FAILED, "%s %s: %s needs a %s float32 (<f4)%s array; found %s with %d dimension%s", flag, path,
                  op, ndim == RUN_1D_OR_2D ? "1-D or 2-D" : ndim == 1 ? "1-D" : "2-D", float64 ? " or float64 (<f8)" : "",
                  mh_dtype_descr(a->dtype), a->ndim, a->ndim == 1 ? "" : "s");
        mh_array_free(a);
        return CLI_FAILED;
    }
    return CLI_OK;
}

/* What every `run` shares: the device, the padding or boundary mode, one or two input arrays
 * and one output. */
typedef struct run_job {
    const char *op, *variant, *out_path;
    int device;
    mh_pad pad;
    int bordered; /* --mode given: scipy.ndimage's placement, out as large as in */
    mh_mode mode;
    float cval;
    long long origin[2]; /* conv1d: [0]; conv2d: rows, columns */
    mh_array in, second; /* the input (or a), and the mask, filter or b (none for transpose) */
    int float64; /* the op takes float64 arrays (matmul): then the output is of the inputs' type */
    cli_buffer bin, bsecond, bout;
    int out_ndim;
    size_t out_shape[2];
    char chosen[160]; /* chosen_name's text */
    mh_context *ctx;
} run_job;

enum { F_VARIANT, F_DEVICE, F_IN, F_OUT, F_PAD, F_MODE, F_CVAL, F_ORIGIN, F_PRECISION, F_SECOND, F_COUNT };

/* --cval: a float (nan and inf too, as scipy takes them). */
static int parse_cval(const char *s, float *cval)
{
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (end == s || *end || (errno == ERANGE && v != 0.0) || (isfinite(v) && fabs(v) > FLT_MAX))
        return cli_error(CLI_USAGE, "--cval '%s': expected a float32 number (nan and inf allowed)", s);
    *cval = (float)v;
    return CLI_OK;
}

/* --origin: one integer for every axis, or "R,C" for conv2d's rows and columns. */
static int parse_origin(const char *s, int axes, long long origin[2])
{
    char *end;
    errno = 0;
    origin[0] = origin[1] = strtoll(s, &end, 10);
    if (end != s && *end == ',' && axes == 2) {
        const char *second = end + 1;
        origin[1] = strtoll(second, &end, 10);
        if (end == second) end = (char *)s; /* nothing after the comma */
    }
    if (end == s || *end || errno == ERANGE)
        return cli_error(CLI_USAGE, "--origin '%s': expected an integer%s", s, axes == 2 ? " or ROWS,COLS" : "");
    return CLI_OK;
}

/* --pad, or --mode with its --cval and --origin (ops with_pad only). */
static int parse_placement(run_job *j, const char *const *v, int with_pad)
{
    int rc;
    if ((v[F_PAD] || v[F_MODE] || v[F_CVAL] || v[F_ORIGIN]) && !with_pad)
        return cli_error(CLI_USAGE, "run %s takes no --pad, --mode, --cval or --origin", j->op);
    if (v[F_PAD] && v[F_MODE])
        return cli_error(CLI_USAGE, "run %s: --pad %s and --mode %s both place the filter; give one", j->op, v[F_PAD],
                         v[F_MODE]);
    if ((v[F_CVAL] || v[F_ORIGIN]) && !v[F_MODE])
        return cli_error(CLI_USAGE, "run %s: %s needs --mode", j->op, v[F_CVAL] ? "--cval" : "--origin");
    if (v[F_PAD] && (rc = cli_parse_pad(v[F_PAD], &j->pad)) != CLI_OK) return rc;
    if (!v[F_MODE]) return CLI_OK;
    j->bordered = 1;
    if ((rc = cli_parse_mode(v[F_MODE], &j->mode)) != CLI_OK) return rc;
    if (v[F_CVAL] && (rc = parse_cval(v[F_CVAL], &j->cval)) != CLI_OK) return rc;
    if (v[F_ORIGIN] && (rc = parse_origin(v[F_ORIGIN], strcmp(j->op, "conv2d") ? 1 : 2, j->origin)) != CLI_OK)
        return rc;
    return CLI_OK;
}

/* first_flag: "--in" (or "--a"); second_flag: "--mask", "--filter", "--b", or NULL for an op
 * of one input; with_pad: the op takes --pad (and --mode). */
static int run_setup(run_job *j, int argc, char **argv, const char *first_flag, const char *second_flag, int with_pad,
                     int ndim)
{
    const char *const names[] = {"--variant", "--device", first_flag,    "--out",     "--pad",
                                 "--mode",    "--cval",   "--origin",    "--precision", second_flag, NULL};
    const char *v[F_COUNT] = {NULL};
    char cmd[32];
    snprintf(cmd, sizeof cmd, "run %s", j->op);
    int rc = cli_flags(argc, argv, cmd, names, v);
    if (rc != CLI_OK) return rc;
    j->variant = v[F_VARIANT], j->out_path = v[F_OUT];
    j->pad = MH_PAD_VALID;
    if ((rc = cli_device(v[F_DEVICE], &j->device)) != CLI_OK) return rc;
    if ((rc = parse_placement(j, v, with_pad)) != CLI_OK) return rc;
    if (v[F_PRECISION] && !with_pad) return cli_error(CLI_USAGE, "run %s takes no --precision", j->op);
    mh_precision precision;
    if (v[F_PRECISION] && (rc = cli_parse_precision(v[F_PRECISION], &precision)) != CLI_OK) return rc;
    if (!second_flag && (!v[F_IN] || !v[F_OUT]))
        return cli_error(CLI_USAGE, "run %s needs %s and --out", j->op, first_flag);
    if (second_flag && (!v[F_IN] || !v[F_SECOND] || !v[F_OUT]))
        return cli_error(CLI_USAGE, "run %s needs %s, %s and --out", j->op, first_flag, second_flag);
    if ((rc = read_float_array(j->op, first_flag, v[F_IN], ndim, j->float64, &j->in)) != CLI_OK) return rc;
    if (second_flag && (rc = read_float_array(j->op, second_flag, v[F_SECOND], ndim, j->float64, &j->second)) != CLI_OK)
        return rc;
    if (second_flag && j->second.dtype != j->in.dtype)
        return cli_error(CLI_FAILED, "%s %s: %s holds %s, %s %s: give both of one dtype", second_flag, v[F_SECOND],
                         first_flag, mh_dtype_descr(j->in.dtype), second_flag, mh_dtype_descr(j->second.dtype));
    return cli_context(j->device, v[F_PRECISION] ? &precision : NULL, &j->ctx);
}

/* Places the inputs and an output of out_count values of their type in the context's memory. */
static int run_place(run_job *j, size_t out_count)
{
    const size_t size = mh_dtype_size(j->in.dtype);
    j->bin = (cli_buffer){j->in.data, NULL, j->in.count * size};
    j->bsecond = (cli_buffer){j->second.data, NULL, j->second.count * size};
    j->bout = (cli_buffer){malloc(out_count * size), NULL, out_count * size};
    if (!j->bout.host) return cli_error(CLI_FAILED, "out of host memory for %zu outputs", out_count);
    int rc = cli_place(j->ctx, &j->bin, 1);
    if (rc == CLI_OK && j->second.data) rc = cli_place(j->ctx, &j->bsecond, 1);
    if (rc == CLI_OK) rc = cli_place(j->ctx, &j->bout, 0);
    return rc;
}

/* After the op was queued: wait, fetch, write the .npy. */
static int run_finish(run_job *j, mh_status s)
{
    if (s == MH_OK) s = mh_context_synchronize(j->ctx);
    if (s != MH_OK) return cli_error(CLI_FAILED, "%s: %s", j->op, mh_context_error(j->ctx));
    int rc = cli_fetch(j->ctx, &j->bout);
    char err[512];
    if (rc == CLI_OK && mh_npy_write(j->out_path, j->in.dtype, j->out_ndim, j->out_shape, j->bout.host, err, sizeof err) !=
                            MH_OK)
        rc = cli_error(CLI_FAILED, "--out %s", err);
    return rc;
}

/* Where summary lines go: standard error when the output itself goes to standard output
 * (--out -), so that the .npy written there stays whole; set by cmd_run. */
static FILE *summary;

static void run_cleanup(run_job *j)
{
    cli_release(j->ctx, &j->bin);
    cli_release(j->ctx, &j->bsecond);
    cli_release(j->ctx, &j->bout);
    free(j->bout.host);
    mh_array_free(&j->in);
    mh_array_free(&j->second);
    mh_context_destroy(j->ctx);
}

/* The variant a call will run, as op/name, for the summary line: the one named, or the one
 * auto picks. */
static const char *chosen_name(run_job *j, const mh_variant_info *picked)
{
    const int named = j->variant && strcmp(j->variant, "auto");
    if (named && strchr(j->variant, '/')) return j->variant;
    if (named) snprintf(j->chosen, sizeof j->chosen, "%s/%s", j->op, j->variant);
    else if (picked) return picked->name;
    else snprintf(j->chosen, sizeof j->chosen, "%s/auto", j->op);
    return j->chosen;
}

/* --in of n samples, or batch x n (batched signals); --mask of k taps for every signal, or
 * batch x k (one per signal, with a 2-D --in). */
static int run_conv1d(int argc, char **argv)
{
    run_job j = {.op = "conv1d"};
    int rc = run_setup(&j, argc, argv, "--in", "--mask", 1, RUN_1D_OR_2D);
    const int batched = j.in.ndim == 2, per_signal = j.second.ndim == 2;
    const size_t batch = batched ? j.in.shape[0] : 1, n = batched ? j.in.shape[1] : j.in.count;
    const size_t k = per_signal ? j.second.shape[1] : j.second.count;
    const mh_variant_info *picked = NULL;
    if (rc == CLI_OK && per_signal && (!batched || j.second.shape[0] != batch))
        rc = cli_error(CLI_USAGE, "--mask of shape (%zu, %zu): one mask per signal needs a 2-D --in of %zu signals%s",
                       j.second.shape[0], k, j.second.shape[0], batched ? "" : " (--in is 1-D)");
    const size_t stride = per_signal ? k : 0;
    /* sizes are checked here; a named variant's refusal comes from the call itself */
    if (rc == CLI_OK &&
        (j.bordered ? mh_conv1d_mode_select(j.ctx, batch, n, stride, k, j.mode, j.origin[0], &picked)
                    : mh_conv1d_batched_select(j.ctx, batch, n, stride, k, j.pad, &picked)) == MH_ERR_INVALID_ARGUMENT)
        rc = cli_error(CLI_FAILED, "%s", mh_context_error(j.ctx));
    const size_t out_n = j.bordered ? n : mh_conv1d_out_len(n, k, j.pad);
    if (rc == CLI_OK) {
        j.out_ndim = batched ? 2 : 1;
        j.out_shape[0] = batched ? batch : out_n;
        j.out_shape[1] = out_n;
        rc = run_place(&j, batch * out_n);
    }
    if (rc == CLI_OK)
        rc = run_finish(&j, j.bordered ? mh_conv1d_mode(j.ctx, j.variant, j.bin.mem, batch, n, j.bsecond.mem, stride, k,
                                                        j.mode, j.cval, j.origin[0], j.bout.mem)
                                       : mh_conv1d_batched(j.ctx, j.variant, j.bin.mem, batch, n, j.bsecond.mem, stride,
                                                           k, j.pad, j.bout.mem));
    char where[96];
    if (j.bordered)
        snprintf(where, sizeof where, "mode=%s cval=%g origin=%lld", mh_mode_name(j.mode), (double)j.cval, j.origin[0]);
    else
        snprintf(where, sizeof where, "pad=%s", mh_pad_name(j.pad));
    if (rc == CLI_OK && batched)
        fprintf(summary, "%s: batch=%zu n=%zu k=%zu (%s) %s -> %zu x %zu outputs in %s\n", chosen_name(&j, picked), batch, n, k,
                         per_signal ? "a mask per signal" : "one mask", where, batch, j.out_shape[1], j.out_path);
    else if (rc == CLI_OK)
        fprintf(summary, "%s: n=%zu k=%zu %s -> %zu outputs in %s\n", chosen_name(&j, picked), n, k, where, j.out_shape[0],
                         j.out_path);
    run_cleanup(&j);
    return rc;
}

/* The conv2d call on the placed arrays: float64 ones (mh_conv2d_float64, scipy's sums; the
 * filter read from the host) or float32 ones. */
static mh_status conv2d_call(run_job *j, size_t rows, size_t cols, size_t kr, size_t kc)
{
    const long long or_ = j->origin[0], oc = j->origin[1];
    if (j->in.dtype == MH_F64)
        return mh_conv2d_float64(j->ctx, j->variant, j->bin.mem, MH_F64, 1, rows, cols, (const double *)j->second.data,
                                 kr, kc, j->mode, (double)j->cval, or_, oc, j->bout.mem, MH_F64);
    return j->bordered ? mh_conv2d_mode(j->ctx, j->variant, j->bin.mem, rows, cols, j->bsecond.mem, kr, kc, j->mode,
                                        j->cval, or_, oc, j->bout.mem)
                       : mh_conv2d(j->ctx, j->variant, j->bin.mem, rows, cols, j->bsecond.mem, kr, kc, j->pad,
                                   j->bout.mem);
}

/* float64 --in and --filter: scipy.ndimage.correlate's sums (mh_conv2d_float64), which take
 * --mode alone; the library's call refuses a named row that does not compute them. */
static int run_conv2d(int argc, char **argv)
{
    run_job j = {.op = "conv2d", .float64 = 1};
    int rc = run_setup(&j, argc, argv, "--in", "--filter", 1, 2);
    const size_t rows = j.in.shape[0], cols = j.in.shape[1], kr = j.second.shape[0], kc = j.second.shape[1];
    const mh_variant_info *picked = NULL;
    const long long or_ = j.origin[0], oc = j.origin[1];
    const int float64 = rc == CLI_OK && j.in.dtype == MH_F64;
    if (float64 && !j.bordered)
        rc = cli_error(CLI_USAGE, "run conv2d on float64 arrays (scipy.ndimage.correlate's sums) needs --mode");
    if (rc == CLI_OK && !float64 &&
        (j.bordered ? mh_conv2d_mode_supports(j.ctx, j.variant, rows, cols, kr, kc, j.mode, or_, oc)
                    : mh_conv2d_supports(j.ctx, j.variant, rows, cols, kr, kc, j.pad)) != MH_OK)
        rc = cli_error(CLI_FAILED, "%s", mh_context_error(j.ctx));
    if (rc == CLI_OK && float64)
        mh_conv2d_float64_select(j.ctx, MH_F64, 1, rows, cols, kr, kc, j.mode, or_, oc, MH_F64, &picked);
    else if (rc == CLI_OK && j.bordered) mh_conv2d_mode_select(j.ctx, rows, cols, kr, kc, j.mode, or_, oc, &picked);
    else if (rc == CLI_OK) mh_conv2d_select(j.ctx, rows, cols, kr, kc, j.pad, &picked);
    if (rc == CLI_OK) {
        j.out_ndim = 2;
        if (j.bordered) j.out_shape[0] = rows, j.out_shape[1] = cols;
        else mh_conv2d_out_dims(rows, cols, kr, kc, j.pad, &j.out_shape[0], &j.out_shape[1]);
        rc = run_place(&j, j.out_shape[0] * j.out_shape[1]);
    }
    if (rc == CLI_OK) rc = run_finish(&j, conv2d_call(&j, rows, cols, kr, kc));
    char where[96];
    if (j.bordered)
        snprintf(where, sizeof where, "mode=%s cval=%g origin=(%lld, %lld)", mh_mode_name(j.mode), (double)j.cval, or_,
                 oc);
    else
        snprintf(where, sizeof where, "pad=%s", mh_pad_name(j.pad));
    if (rc == CLI_OK)
        fprintf(summary, "%s: %zu x %zu image, %zu x %zu filter, %s -> %zu x %zu outputs in %s\n", chosen_name(&j, picked), rows,
                         cols, kr, kc, where, j.out_shape[0], j.out_shape[1], j.out_path);
    run_cleanup(&j);
    return rc;
}

static int run_transpose(int argc, char **argv)
{
    run_job j = {.op = "transpose"};
    int rc = run_setup(&j, argc, argv, "--in", NULL, 0, 2);
    const size_t rows = j.in.shape[0], cols = j.in.shape[1];
    const mh_variant_info *picked = NULL;
    if (rc == CLI_OK && mh_transpose_supports(j.ctx, j.variant, rows, cols) != MH_OK)
        rc = cli_error(CLI_FAILED, "%s", mh_context_error(j.ctx));
    if (rc == CLI_OK) mh_transpose_select(j.ctx, rows, cols, &picked);
    if (rc == CLI_OK) {
        j.out_ndim = 2, j.out_shape[0] = cols, j.out_shape[1] = rows;
        rc = run_place(&j, rows * cols);
    }
    if (rc == CLI_OK) rc = run_finish(&j, mh_transpose(j.ctx, j.variant, j.bin.mem, rows, cols, j.bout.mem));
    if (rc == CLI_OK)
        fprintf(summary, "%s: %zu x %zu -> %zu x %zu in %s\n", chosen_name(&j, picked), rows, cols, cols, rows, j.out_path);
    run_cleanup(&j);
    return rc;
}

static int run_matmul(int argc, char **argv)
{
    run_job j = {.op = "matmul", .float64 = 1};
    int rc = run_setup(&j, argc, argv, "--a", "--b", 0, 2);
    const size_t m = j.in.shape[0], k = j.in.shape[1], n = j.second.shape[1];
    if (rc == CLI_OK && j.second.shape[0] != k)
        rc = cli_error(CLI_FAILED, "--b: a is %zu x %zu, so b needs %zu rows; it has %zu", m, k, k, j.second.shape[0]);
    const mh_variant_info *picked = NULL;
    if (rc == CLI_OK && mh_matmul_typed_supports(j.ctx, j.variant, j.in.dtype, m, k, n) != MH_OK)
        rc = cli_error(CLI_FAILED, "%s", mh_context_error(j.ctx));
    if (rc == CLI_OK) {
        mh_matmul_typed_select(j.ctx, j.in.dtype, m, k, n, &picked);
        j.out_ndim = 2, j.out_shape[0] = m, j.out_shape[1] = n;
        rc = run_place(&j, m * n);
    }
    if (rc == CLI_OK)
        rc = run_finish(&j, mh_matmul_typed(j.ctx, j.variant, j.in.dtype, j.bin.mem, j.bsecond.mem, j.bout.mem, m, k, n));
    if (rc == CLI_OK)
        fprintf(summary, "%s: %zu x %zu . %zu x %zu -> %zu x %zu in %s\n", chosen_name(&j, picked), m, k, k, n, m, n,
                         j.out_path);
    run_cleanup(&j);
    return rc;
}

/* run reduce --in x.npy [--out s.npy]: prints the sum (9 significant digits: the float's
 * exact value), and writes it as a 1-element float32 array when --out is given. */
static int parse_int(const char *flag, const char *s, long lo, long hi, int *v);

/* --op NAME: numpy's reduction, as mh_reduce_kind. */
static int parse_reduce_op(const char *s, mh_reduce_kind *kind)
{
    static const char *const names[] = {"sum", "mean", "min", "max", "argmin", "argmax"};
    for (int k = 0; k < 6; ++k)
        if (!strcmp(s, names[k])) return *kind = (mh_reduce_kind)k, CLI_OK;
    return cli_error(CLI_USAGE, "--op '%s': expected sum, mean, min, max, argmin or argmax", s);
}

/* The dtype numpy gives kind over `in` (mh_reduce_out_size's): signed integers' sums int64 and
 * unsigned ones' uint64, integers' means float64, min and max the input's, the arg forms int64. */
static mh_dtype reduce_out_type(mh_dtype in, mh_reduce_kind kind)
{
    const int integer = in != MH_F32 && in != MH_F64, is_unsigned = in == MH_U8 || in == MH_U16 || in == MH_U32 || in == MH_U64;
    if (kind >= MH_REDUCE_ARGMIN) return MH_I64;
    if (integer && kind == MH_REDUCE_SUM) return is_unsigned ? MH_U64 : MH_I64;
    if (integer && kind == MH_REDUCE_MEAN) return MH_F64;
    return in;
}

/* A single result, as numpy prints it. */
static void print_result(mh_dtype t, const void *r)
{
    switch (t) {
    case MH_F32: fprintf(summary, " = %.9g", (double)*(const float *)r); break;
    case MH_F64: fprintf(summary, " = %.17g", *(const double *)r); break;
    case MH_I8: fprintf(summary, " = %d", *(const int8_t *)r); break;
    case MH_U8: fprintf(summary, " = %u", *(const uint8_t *)r); break;
    case MH_I16: fprintf(summary, " = %d", *(const int16_t *)r); break;
    case MH_U16: fprintf(summary, " = %u", *(const uint16_t *)r); break;
    case MH_I32: fprintf(summary, " = %d", *(const int32_t *)r); break;
    case MH_U32: fprintf(summary, " = %u", *(const uint32_t *)r); break;
    case MH_U64: fprintf(summary, " = %llu", (unsigned long long)*(const uint64_t *)r); break;
    default: fprintf(summary, " = %lld", (long long)*(const int64_t *)r);
    }
}

/* run reduce with --op or --axis, or on float64, integer or N-D input: numpy's reduction over one
 * axis (or the whole array), written as numpy types it (reduce_out_type). The caller frees j->in. */
static int reduce_axis_job(run_job *j, const char *op, const char *axis_arg)
{
    mh_reduce_kind kind = MH_REDUCE_SUM;
    int rc = op ? parse_reduce_op(op, &kind) : CLI_OK, axis = -1;
    const mh_array *in = &j->in;
    if (rc == CLI_OK && axis_arg) rc = parse_int("--axis", axis_arg, -in->ndim, in->ndim - 1, &axis);
    if (rc != CLI_OK) return rc;
    if (axis < 0 && axis_arg) axis += in->ndim;
    size_t outer = 1, len = in->count, inner = 1;
    j->out_ndim = 1, j->out_shape[0] = 1;
    size_t shape[MH_NPY_MAX_DIMS] = {1};
    int ndim = 1;
    if (axis_arg) {
        ndim = 0, len = in->shape[axis];
        for (int d = 0; d < in->ndim; ++d) {
            if (d < axis) outer *= in->shape[d];
            if (d > axis) inner *= in->shape[d];
            if (d != axis) shape[ndim++] = in->shape[d];
        }
        if (!ndim) ndim = 1, shape[0] = 1;
    }
    const mh_dtype out_type = reduce_out_type(in->dtype, kind);
    if ((rc = cli_context(j->device, NULL, &j->ctx)) != CLI_OK) return rc;
    mh_status s;
    const size_t lanes = outer * inner, size = mh_dtype_size(out_type);
    j->bin = (cli_buffer){in->data, NULL, in->count * mh_dtype_size(in->dtype)};
    j->bout = (cli_buffer){calloc(lanes ? lanes : 1, size), NULL, lanes * size};
    if (!j->bout.host) rc = cli_error(CLI_FAILED, "out of host memory for %zu results", lanes);
    const mh_variant_info *picked = NULL;
    if (rc == CLI_OK && mh_reduce_supports(j->ctx, j->variant, in->dtype, outer, len, inner, kind) != MH_OK)
        rc = cli_error(CLI_FAILED, "%s", mh_context_error(j->ctx));
    if (rc == CLI_OK) mh_reduce_select(j->ctx, in->dtype, outer, len, inner, kind, &picked);
    if (rc == CLI_OK) rc = cli_place(j->ctx, &j->bin, 1);
    if (rc == CLI_OK) rc = cli_place(j->ctx, &j->bout, 0);
    if (rc == CLI_OK) {
        s = mh_reduce(j->ctx, j->variant, in->count ? j->bin.mem : NULL, in->dtype, outer, len, inner, kind, j->bout.mem);
        if (s == MH_OK) s = mh_context_synchronize(j->ctx);
        if (s != MH_OK) rc = cli_error(CLI_FAILED, "reduce: %s", mh_context_error(j->ctx));
    }
    if (rc == CLI_OK) rc = cli_fetch(j->ctx, &j->bout);
    char err[512];
    if (rc == CLI_OK && j->out_path && mh_npy_write(j->out_path, out_type, ndim, shape, j->bout.host, err, sizeof err) != MH_OK)
        rc = cli_error(CLI_FAILED, "--out %s", err);
    if (rc == CLI_OK) {
        fprintf(summary, "%s: %s over %s of %zu values -> %zu result%s", chosen_name(j, picked), op ? op : "sum",
                         axis_arg ? "an axis" : "the whole array", in->count, lanes, lanes == 1 ? "" : "s");
        if (lanes == 1) print_result(out_type, j->bout.host);
        fprintf(summary, "%s%s\n", j->out_path ? " in " : "", j->out_path ? j->out_path : "");
    }
    cli_release(j->ctx, &j->bin);
    cli_release(j->ctx, &j->bout);
    free(j->bout.host);
    mh_context_destroy(j->ctx);
    return rc;
}

static int run_reduce_axis(run_job *j, const char *op, const char *axis_arg)
{
    const int rc = reduce_axis_job(j, op, axis_arg);
    mh_array_free(&j->in);
    return rc;
}

static int run_reduce(int argc, char **argv)
{
    const char *const names[] = {"--variant", "--device", "--in", "--out", "--op", "--axis", NULL};
    const char *v[6] = {NULL};
    int rc = cli_flags(argc, argv, "run reduce", names, v);
    if (rc != CLI_OK) return rc;
    if (!v[2]) return cli_error(CLI_USAGE, "run reduce needs --in");
    run_job j = {.op = "reduce", .variant = v[0], .out_path = v[3]};
    if ((rc = cli_device(v[1], &j.device)) != CLI_OK) return rc;
    char err[512];
    if (mh_npy_read(v[2], &j.in, err, sizeof err) != MH_OK) return cli_error(CLI_FAILED, "--in %s", err);
    if (v[4] || v[5] || j.in.dtype != MH_F32 || j.in.ndim != 1) return run_reduce_axis(&j, v[4], v[5]);
    rc = cli_context(j.device, NULL, &j.ctx);
    mh_status s;
    const size_t n = j.in.count;
    const mh_variant_info *picked = NULL;
    if (rc == CLI_OK && mh_reduce_sum_supports(j.ctx, j.variant, n) != MH_OK)
        rc = cli_error(CLI_FAILED, "%s", mh_context_error(j.ctx));
    if (rc == CLI_OK) {
        mh_reduce_sum_select(j.ctx, n, &picked);
        j.out_ndim = 1, j.out_shape[0] = 1;
        rc = run_place(&j, 1);
    }
    if (rc == CLI_OK) {
        s = mh_reduce_sum(j.ctx, j.variant, j.bin.mem, n, j.bout.mem);
        if (s == MH_OK) s = mh_context_synchronize(j.ctx);
        if (s != MH_OK) rc = cli_error(CLI_FAILED, "reduce: %s", mh_context_error(j.ctx));
    }
    if (rc == CLI_OK) rc = cli_fetch(j.ctx, &j.bout);
    if (rc == CLI_OK && j.out_path &&
        mh_npy_write(j.out_path, MH_F32, 1, j.out_shape, j.bout.host, err, sizeof err) != MH_OK)
        rc = cli_error(CLI_FAILED, "--out %s", err);
    if (rc == CLI_OK) fprintf(summary, "%s: sum of %zu values = %.9g\n", chosen_name(&j, picked), n, *(float *)j.bout.host);
    run_cleanup(&j);
    return rc;
}

/* A whole number in [lo, hi] for flag; prints and returns CLI_USAGE otherwise. */
static int parse_int(const char *flag, const char *s, long lo, long hi, int *v)
{
    char *end;
    errno = 0;
    const long x = strtol(s, &end, 10);
    if (errno || *end || end == s || x < lo || x > hi)
        return cli_error(CLI_USAGE, "%s '%s': expected a whole number from %ld to %ld", flag, s, lo, hi);
    *v = (int)x;
    return CLI_OK;
}

enum { H_V, H_DEV, H_IN, H_OUT, H_BINS, H_LO, H_HI, H_WIDTH, H_RANGE, H_EDGES, H_WEIGHTS, H_NFLAGS };

/* --range LO,HI: two finite numbers, LO <= HI (numpy.histogram's range). */
static int parse_range(const char *s, double *lo, double *hi)
{
    char *end;
    errno = 0;
    *lo = strtod(s, &end);
    if (end != s && *end == ',') {
        const char *second = end + 1;
        *hi = strtod(second, &end);
        if (end != second && !*end && !errno && isfinite(*lo) && isfinite(*hi) && *lo <= *hi) return CLI_OK;
    }
    return cli_error(CLI_USAGE, "--range '%s': expected LO,HI, two finite numbers with LO <= HI", s);
}

/* numpy.histogram's edges over the data's own min and max: numpy.linspace in float32 arithmetic
 * (the data's float32 min and max are its start and stop), as numpy computes it. Where numpy
 * raises, prints its reason and returns CLI_FAILED: data holding NaN or +-inf (the range is not
 * finite), and a range that gives no `bins` finite, increasing edges (max - min past float32's
 * range, or more bins than the floats between min and max). */
static int edges_from_data(const float *x, size_t n, int bins, float *e)
{
    float first = 0.0f, last = 1.0f; /* numpy's range for no data */
    for (size_t i = 0; i < n; ++i) {
        if (!isfinite(x[i]))
            return cli_error(CLI_FAILED, "--in: the data hold %s, so their range is not finite; give --range",
                             isnan(x[i]) ? "NaN" : x[i] > 0 ? "inf" : "-inf");
        if (i == 0 || x[i] < first) first = x[i];
        if (i == 0 || x[i] > last) last = x[i];
    }
    if (first == last) first -= 0.5f, last += 0.5f;
    const float delta = last - first, step = delta / (float)bins;
    for (int i = 0; i < bins; ++i) {
        const float y = step == 0.0f ? (float)i / (float)bins * delta : (float)i * step;
        e[i] = y + first;
    }
    e[bins] = last;
    for (int i = 0; i < bins; ++i)
        if (!isfinite(e[i]) || !(e[i] < e[i + 1]))
            return cli_error(CLI_FAILED, "--bins %d: the data's range [%.9g, %.9g] gives no %d finite, increasing bins in "
                             "float32 (numpy raises too); give --range or fewer bins", bins, (double)first,
                             (double)last, bins);
    return CLI_OK;
}

/* --edges E.npy: 1-D float32, at least two, increasing (repeats allowed), no NaN. (Edges in
 * float64 go through memhier.histogram in Python, which rounds them as numpy compares them.) */
static int read_edges(const char *path, float **edges, int *bins)
{
    mh_array a = {0};
    char err[512];
    if (mh_npy_read(path, &a, err, sizeof err) != MH_OK) return cli_error(CLI_FAILED, "--edges %s", err);
    int rc = CLI_OK;
    const float *e = a.data;
    if (a.dtype != MH_F32 || a.ndim != 1 || a.count < 2 || a.count - 1 > MH_HISTOGRAM_MAX_BINS)
        rc = cli_error(CLI_FAILED, "--edges %s: expected a 1-D float32 (<f4) array of 2 to %d edges", path,
                       MH_HISTOGRAM_MAX_BINS + 1);
    for (size_t i = 0; rc == CLI_OK && i < a.count; ++i)
        if (isnan(e[i]) || (i && e[i] < e[i - 1]))
            rc = cli_error(CLI_FAILED, "--edges %s: edge %zu is %g: the edges must increase (no NaN)", path, i,
                           (double)e[i]);
    if (rc == CLI_OK) {
        *edges = malloc(a.count * sizeof **edges);
        if (!*edges) rc = cli_error(CLI_FAILED, "out of host memory for %zu edges", a.count);
        else memcpy(*edges, e, a.count * sizeof **edges), *bins = (int)(a.count - 1);
    }
    mh_array_free(&a);
    return rc;
}

/* One histogram the CLI runs: the kind of values (mh_histogram_kind) and its bins. */
typedef struct hist_call {
    int kind, num_bins;
    int lo, hi, width; /* integers: int32, int64 and bytes */
    double flo, fhi;   /* float32, uniform bins */
    const float *edges; /* float32, explicit edges: num_bins + 1 on the host */
    const float *weights; /* --weights: one a value on the host (int32 and float32 values) */
} hist_call;

/* The values of a histogram's kind (mh_histogram_kind), as the CLI names them. */
static const char *values_named(int kind)
{
    static const char *const values[] = {"int32", "uint8", "float32", "float32", "int64"};
    return values[kind];
}

static mh_status call_histogram(run_job *j, const hist_call *c, const void *in, const float *edges, const float *weights,
                                uint64_t *counts)
{
    const size_t n = j->in.count;
    uint64_t *outside = counts + c->num_bins;
    if (c->weights)
        return mh_histogram_weighted(j->ctx, j->variant, c->kind, in, weights, n, c->num_bins, c->flo, c->fhi, edges,
                                     (double *)counts, (double *)outside);
    switch (c->kind) {
    case MH_HISTOGRAM_BYTES: return mh_histogram_bytes(j->ctx, j->variant, in, n, c->lo, c->hi, c->width, counts, outside);
    case MH_HISTOGRAM_FLOAT_UNIFORM:
        return mh_histogram_float(j->ctx, j->variant, in, n, c->num_bins, c->flo, c->fhi, counts, outside);
    case MH_HISTOGRAM_FLOAT_EDGES: return mh_histogram_edges(j->ctx, j->variant, in, n, edges, c->num_bins, counts, outside);
    case MH_HISTOGRAM_INT64: return mh_histogram_int64(j->ctx, j->variant, in, n, c->num_bins, counts, outside);
    default: return mh_histogram(j->ctx, j->variant, in, n, c->num_bins, counts, outside);
    }
}

/* Counts j->in as c says into int64 counts (with weights: float64 sums) written to j->out_path
 * and prints the values (the weight) left out; rc: a refusal already made (CLI_OK to run). Frees
 * j->in. */
static int write_histogram(run_job *j, const hist_call *c, int rc)
{
    mh_status s = MH_OK;
    if (rc == CLI_OK) rc = cli_context(j->device, NULL, &j->ctx);
    if (rc == CLI_OK && !c->weights && mh_histogram_supports(j->ctx, j->variant, j->in.count, c->num_bins, c->kind) != MH_OK)
        rc = cli_error(CLI_FAILED, "%s", mh_context_error(j->ctx));
    if (rc == CLI_OK && j->variant && strcmp(j->variant, "auto") &&
        mh_variant_is_demonstration(mh_variant_lookup(MH_OP_HISTOGRAM, j->variant)))
        fprintf(stderr, "memhier: warning: %s is a demonstration of a race; its counts are wrong by design\n", j->variant);
    const size_t slots = (size_t)c->num_bins + 1;
    const int floats = c->kind == MH_HISTOGRAM_FLOAT_UNIFORM || c->kind == MH_HISTOGRAM_FLOAT_EDGES;
    cli_buffer bin = {j->in.data, NULL, j->in.count * mh_dtype_size(j->in.dtype)};
    cli_buffer bedges = {(void *)c->edges, NULL, slots * sizeof(float)};
    cli_buffer bweights = {(void *)c->weights, NULL, j->in.count * sizeof(float)};
    cli_buffer bout = {rc == CLI_OK ? calloc(slots, 8) : NULL, NULL, slots * 8};
    if (rc == CLI_OK && !bout.host) rc = cli_error(CLI_FAILED, "out of host memory for %d bins", c->num_bins);
    const mh_variant_info *picked = NULL;
    if (rc == CLI_OK && !c->weights) mh_histogram_select(j->ctx, j->in.count, c->num_bins, c->kind, &picked);
    if (rc == CLI_OK) rc = cli_place(j->ctx, &bin, 1);
    if (rc == CLI_OK && c->edges) rc = cli_place(j->ctx, &bedges, 1);
    if (rc == CLI_OK && c->weights) rc = cli_place(j->ctx, &bweights, 1);
    if (rc == CLI_OK) rc = cli_place(j->ctx, &bout, 0);
    if (rc == CLI_OK) {
        s = call_histogram(j, c, bin.mem, bedges.mem, bweights.mem, bout.mem);
        if (s == MH_OK) s = mh_context_synchronize(j->ctx);
        if (s != MH_OK) rc = cli_error(CLI_FAILED, "histogram: %s", mh_context_error(j->ctx));
    }
    if (rc == CLI_OK) rc = cli_fetch(j->ctx, &bout);
    char err[512];
    const size_t shape[1] = {(size_t)c->num_bins};
    if (rc == CLI_OK && mh_npy_write(j->out_path, c->weights ? MH_F64 : MH_I64, 1, shape, bout.host, err, sizeof err) != MH_OK)
        rc = cli_error(CLI_FAILED, "--out %s", err);
    if (rc == CLI_OK && c->weights)
        fprintf(summary, "%s: %zu weighted %s values -> %d sums in %s; weight %.17g outside%s\n", chosen_name(j, picked),
                         j->in.count, values_named(c->kind), c->num_bins, j->out_path, ((double *)bout.host)[c->num_bins],
                         floats ? " or NaN" : "");
    else if (rc == CLI_OK)
        fprintf(summary, "%s: %zu %s values -> %d bins in %s; %llu outside%s\n", chosen_name(j, picked), j->in.count,
                         values_named(c->kind), c->num_bins, j->out_path, ((unsigned long long *)bout.host)[c->num_bins],
                         floats ? " or NaN" : "");
    cli_release(j->ctx, &bin);
    if (c->edges) cli_release(j->ctx, &bedges);
    if (c->weights) cli_release(j->ctx, &bweights);
    cli_release(j->ctx, &bout);
    free(bout.host);
    mh_array_free(&j->in);
    mh_context_destroy(j->ctx);
    return rc;
}

/* --weights W.npy: float32, as many as the values (any shape), into w (freed by the caller). */
static int read_weights(const char *path, size_t count, mh_array *w)
{
    char err[512];
    if (mh_npy_read(path, w, err, sizeof err) != MH_OK) return cli_error(CLI_FAILED, "--weights %s", err);
    if (w->dtype != MH_F32 || w->count != count)
        return cli_error(CLI_FAILED, "--weights %s: expected %zu float32 (<f4) weights, one a value; found %zu %s", path,
                         count, w->count, mh_dtype_descr(w->dtype));
    return CLI_OK;
}

/* The float32 form: --bins B [--range LO,HI] (without a range, the data's min and max) or
 * --edges E.npy; numpy.histogram's counts (include/memhier.h). */
static int run_histogram_float(run_job *j, const char *const *v)
{
    int rc = CLI_OK, bins = 0;
    hist_call c = {.kind = MH_HISTOGRAM_FLOAT_UNIFORM};
    float *edges = NULL;
    if (v[H_LO] || v[H_HI] || v[H_WIDTH]) rc = cli_error(CLI_USAGE, "--lo, --hi and --width are for uint8 input");
    else if (!!v[H_BINS] == !!v[H_EDGES]) rc = cli_error(CLI_USAGE, "float32 values take --bins (and --range) or --edges");
    else if (v[H_EDGES] && v[H_RANGE]) rc = cli_error(CLI_USAGE, "--range goes with --bins, not with --edges");
    if (rc == CLI_OK && v[H_BINS]) rc = parse_int("--bins", v[H_BINS], 1, MH_HISTOGRAM_MAX_BINS, &bins);
    if (rc == CLI_OK && v[H_RANGE]) rc = parse_range(v[H_RANGE], &c.flo, &c.fhi);
    if (rc == CLI_OK && v[H_EDGES]) rc = read_edges(v[H_EDGES], &edges, &bins);
    if (rc == CLI_OK && v[H_BINS] && !v[H_RANGE]) {
        edges = malloc(((size_t)bins + 1) * sizeof *edges);
        if (!edges) rc = cli_error(CLI_FAILED, "out of host memory for %d edges", bins);
        else rc = edges_from_data(j->in.data, j->in.count, bins, edges);
    }
    mh_array w = {0};
    if (rc == CLI_OK && v[H_WEIGHTS] && (rc = read_weights(v[H_WEIGHTS], j->in.count, &w)) == CLI_OK) c.weights = w.data;
    c.num_bins = bins, c.edges = edges;
    if (edges) c.kind = MH_HISTOGRAM_FLOAT_EDGES;
    rc = write_histogram(j, &c, rc);
    free(edges);
    mh_array_free(&w);
    return rc;
}

/* run histogram --in x.npy --out h.npy: int32 and int64 values need --bins B (values 0..B-1
 * counted, int64 ones compared at their full width);
 * bytes (uint8) take --bins B, or --lo/--hi/--width (default 0, 255, 1: the 256-bin byte
 * histogram; 97, 122, 4: seed 004's a-z buckets); float32 values (any shape) --bins B with
 * --range LO,HI or without (the data's range), or --edges E.npy, counted as numpy.histogram
 * counts them. Writes int64 counts, prints the outside ones; with --weights W.npy (int32 and
 * float32 values) float64 sums of the weights and the weight outside. */
static int run_histogram(int argc, char **argv)
{
    const char *const names[] = {"--variant", "--device", "--in", "--out", "--bins", "--lo",
                                 "--hi", "--width", "--range", "--edges", "--weights", NULL};
    const char *v[H_NFLAGS] = {NULL};
    enum { V = H_V, DEV = H_DEV, IN = H_IN, OUT = H_OUT, BINS = H_BINS, LO = H_LO, HI = H_HI, WIDTH = H_WIDTH };
    int rc = cli_flags(argc, argv, "run histogram", names, v);
    if (rc != CLI_OK) return rc;
    if (!v[IN] || !v[OUT]) return cli_error(CLI_USAGE, "run histogram needs --in and --out");
    run_job j = {.op = "histogram", .variant = v[V], .out_path = v[OUT]};
    if ((rc = cli_device(v[DEV], &j.device)) != CLI_OK) return rc;
    char err[512];
    if (mh_npy_read(v[IN], &j.in, err, sizeof err) != MH_OK) return cli_error(CLI_FAILED, "--in %s", err);
    if (j.in.dtype == MH_F32) return run_histogram_float(&j, v);
    const int bytes = j.in.dtype == MH_U8;
    const int kind = bytes ? MH_HISTOGRAM_BYTES : j.in.dtype == MH_I64 ? MH_HISTOGRAM_INT64 : MH_HISTOGRAM_INT32;
    int lo = 0, hi = 255, width = 1, bins = 0;
    if ((j.in.dtype != MH_U8 && j.in.dtype != MH_I32 && j.in.dtype != MH_I64) || j.in.ndim != 1)
        rc = cli_error(CLI_FAILED, "--in %s: histogram needs a 1-D int32 (<i4), int64 (<i8) or uint8 (|u1) array or "
                       "float32 (<f4) values; found %s with %d dimension%s", v[IN], mh_dtype_descr(j.in.dtype), j.in.ndim,
                       j.in.ndim == 1 ? "" : "s");
    else if (v[H_RANGE] || v[H_EDGES])
        rc = cli_error(CLI_USAGE, "--range and --edges are for float32 values");
    else if (!bytes && (v[LO] || v[HI] || v[WIDTH]))
        rc = cli_error(CLI_USAGE, "--lo, --hi and --width are for uint8 input; %s values take --bins", values_named(kind));
    else if (!bytes && !v[BINS])
        rc = cli_error(CLI_USAGE, "run histogram on %s values needs --bins", values_named(kind));
    else if (kind != MH_HISTOGRAM_INT32 && v[H_WEIGHTS])
        rc = cli_error(CLI_USAGE, "--weights go with int32 or float32 values, not %s", values_named(kind));
    else if (v[BINS] && (v[LO] || v[HI] || v[WIDTH]))
        rc = cli_error(CLI_USAGE, "give --bins, or --lo/--hi/--width, not both");
    if (rc == CLI_OK && v[BINS]) rc = parse_int("--bins", v[BINS], 1, bytes ? 256 : MH_HISTOGRAM_MAX_BINS, &bins);
    if (rc == CLI_OK && v[LO]) rc = parse_int("--lo", v[LO], 0, 255, &lo);
    if (rc == CLI_OK && v[HI]) rc = parse_int("--hi", v[HI], 0, 255, &hi);
    if (rc == CLI_OK && v[WIDTH]) rc = parse_int("--width", v[WIDTH], 1, 256, &width);
    if (rc == CLI_OK && bins) hi = lo + bins - 1;
    if (rc == CLI_OK && hi < lo) rc = cli_error(CLI_USAGE, "--lo %d is above --hi %d", lo, hi);
    mh_array w = {0};
    if (rc == CLI_OK && v[H_WEIGHTS]) rc = read_weights(v[H_WEIGHTS], j.in.count, &w);
    const hist_call c = {.kind = kind, .num_bins = rc == CLI_OK ? (hi - lo) / width + 1 : 0, .lo = lo, .hi = hi,
                         .width = width, .weights = w.data};
    rc = write_histogram(&j, &c, rc);
    mh_array_free(&w);
    return rc;
}

/* --cval of an op that holds it as float64 (rank). */
static int parse_cval64(const char *s, double *cval)
{
    char *end;
    errno = 0;
    *cval = strtod(s, &end);
    if (end == s || *end || (errno == ERANGE && *cval != 0.0))
        return cli_error(CLI_USAGE, "--cval '%s': expected a float64 number (nan and inf allowed)", s);
    return CLI_OK;
}

/* --size R,C (or one side for both), each 1 to 2^31 - 1. */
static int parse_sides(const char *s, size_t sides[2])
{
    long long v[2];
    if (parse_origin(s, 2, v) != CLI_OK || v[0] < 1 || v[1] < 1 || v[0] > INT32_MAX || v[1] > INT32_MAX)
        return cli_error(CLI_USAGE, "--size '%s': expected a side from 1 to %d, or ROWS,COLS", s, INT32_MAX);
    sides[0] = (size_t)v[0], sides[1] = (size_t)v[1];
    return CLI_OK;
}

/* --select min, max, median or a rank from 0 (the least) below the footprint's count. */
static int parse_select(const char *s, size_t count, size_t *rank)
{
    if (!strcmp(s, "min")) *rank = 0;
    else if (!strcmp(s, "max")) *rank = count - 1;
    else if (!strcmp(s, "median")) *rank = count / 2;
    else {
        char *end;
        errno = 0;
        const long long r = strtoll(s, &end, 10);
        if (end == s || *end || errno == ERANGE || r < 0 || (unsigned long long)r >= count)
            return cli_error(CLI_USAGE, "--select '%s': expected min, max, median or a rank from 0 to %zu (the "
                             "footprint has %zu elements)", s, count - 1, count);
        *rank = (size_t)r;
    }
    return CLI_OK;
}

/* The footprint: --size's rectangle, or --footprint's 2-D uint8 array (nonzero: in the window),
 * as mh_rank reads it; *count its set elements. */
static int rank_footprint(const char *size, const char *path, mh_array *fp, size_t *count)
{
    char err[512];
    if (size) {
        size_t sides[2] = {0, 0};
        int rc = parse_sides(size, sides);
        if (rc != CLI_OK) return rc;
        if (sides[0] * sides[1] > (1u << 24))
            return cli_error(CLI_USAGE, "--size '%s': a footprint of at most 2^24 elements", size);
        fp->dtype = MH_U8, fp->ndim = 2, fp->shape[0] = sides[0], fp->shape[1] = sides[1];
        fp->count = sides[0] * sides[1];
        if (!(fp->data = malloc(fp->count))) return cli_error(CLI_FAILED, "out of host memory for the footprint");
        memset(fp->data, 1, fp->count);
    } else {
        if (mh_npy_read(path, fp, err, sizeof err) != MH_OK) return cli_error(CLI_FAILED, "--footprint %s", err);
        if (fp->dtype != MH_U8 || fp->ndim != 2)
            return cli_error(CLI_FAILED, "--footprint %s: a 2-D uint8 (|u1) array (nonzero: in the window); found %s "
                             "with %d dimension%s", path, mh_dtype_descr(fp->dtype), fp->ndim, fp->ndim == 1 ? "" : "s");
    }
    *count = 0;
    for (size_t i = 0; i < fp->count; ++i) *count += ((const unsigned char *)fp->data)[i] != 0;
    if (*count == 0) return cli_error(CLI_FAILED, "--footprint %s: no element is set", path);
    return CLI_OK;
}

/* run rank: scipy.ndimage.rank_filter (and its minimum, maximum and median) of a 2-D array of
 * any type mh_rank takes, the output of the input's type and shape. */
static int run_rank(int argc, char **argv)
{
    enum { VAR, DEV, IN, OUT, SIZE, FOOT, SELECT, MODE, CVAL, ORIGIN, COUNT };
    const char *const names[] = {"--variant", "--device", "--in",   "--out",  "--size", "--footprint",
                                 "--select",  "--mode",   "--cval", "--origin", NULL};
    const char *v[COUNT] = {NULL};
    run_job j = {.op = "rank", .mode = MH_MODE_REFLECT};
    mh_array fp = {0};
    size_t count = 0;
    double cval = 0.0;
    char err[512];
    int rc = cli_flags(argc, argv, "run rank", names, v);
    if (rc == CLI_OK && (!v[IN] || !v[OUT] || !v[SELECT] || !v[SIZE] == !v[FOOT]))
        rc = cli_error(CLI_USAGE, "run rank needs --in, --out, --select and one of --size and --footprint");
    j.variant = v[VAR], j.out_path = v[OUT], j.device = MH_CPU;
    if (rc == CLI_OK) rc = cli_device(v[DEV], &j.device);
    if (rc == CLI_OK && v[MODE]) rc = cli_parse_mode(v[MODE], &j.mode);
    if (rc == CLI_OK && v[CVAL]) rc = parse_cval64(v[CVAL], &cval);
    if (rc == CLI_OK && v[ORIGIN]) rc = parse_origin(v[ORIGIN], 2, j.origin);
    if (rc == CLI_OK) rc = rank_footprint(v[SIZE], v[FOOT], &fp, &count);
    mh_rank_desc d = {0};
    if (rc == CLI_OK) rc = parse_select(v[SELECT], count, &d.rank);
    if (rc == CLI_OK && mh_npy_read(v[IN], &j.in, err, sizeof err) != MH_OK) rc = cli_error(CLI_FAILED, "--in %s", err);
    if (rc == CLI_OK && j.in.ndim != 2)
        rc = cli_error(CLI_FAILED, "--in %s: run rank needs a 2-D array; found %d dimension%s", v[IN], j.in.ndim,
                       j.in.ndim == 1 ? "" : "s");
    if (rc == CLI_OK) rc = cli_context(j.device, NULL, &j.ctx);
    const mh_variant_info *picked = NULL;
    if (rc == CLI_OK) {
        d.batch = 1, d.rows = j.in.shape[0], d.cols = j.in.shape[1], d.channels = 1;
        d.in_type = d.out_type = j.in.dtype, d.footprint = fp.data, d.krows = fp.shape[0], d.kcols = fp.shape[1];
        d.origin_row = j.origin[0], d.origin_col = j.origin[1], d.mode = j.mode, d.cval = cval;
        if (mh_rank_supports(j.ctx, j.variant, &d) != MH_OK) rc = cli_error(CLI_FAILED, "%s", mh_context_error(j.ctx));
        else mh_rank_select(j.ctx, &d, &picked);
    }
    if (rc == CLI_OK) {
        j.out_ndim = 2, j.out_shape[0] = d.rows, j.out_shape[1] = d.cols;
        rc = run_place(&j, j.in.count);
    }
    if (rc == CLI_OK) rc = run_finish(&j, mh_rank(j.ctx, j.variant, &d, j.bin.mem, j.bout.mem));
    if (rc == CLI_OK)
        fprintf(summary, "%s: rank %zu of %zu in a %zu x %zu footprint over %zu x %zu %s in %s\n", chosen_name(&j, picked),
                d.rank, count, d.krows, d.kcols, d.rows, d.cols, mh_dtype_name(d.in_type), j.out_path);
    mh_array_free(&fp);
    run_cleanup(&j);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    if (argc < 1) return cli_error(CLI_USAGE, "run needs an op: memhier run conv1d ...");
    mh_op op;
    int rc = cli_parse_op(argv[0], &op);
    if (rc != CLI_OK) return rc;
    summary = stdout;
    for (int i = 1; i + 1 < argc; ++i)
        if (!strcmp(argv[i], "--out") && !strcmp(argv[i + 1], "-")) summary = stderr;
    switch (op) {
    case MH_OP_CONV1D: return run_conv1d(argc - 1, argv + 1);
    case MH_OP_CONV2D: return run_conv2d(argc - 1, argv + 1);
    case MH_OP_TRANSPOSE: return run_transpose(argc - 1, argv + 1);
    case MH_OP_MATMUL: return run_matmul(argc - 1, argv + 1);
    case MH_OP_REDUCE: return run_reduce(argc - 1, argv + 1);
    case MH_OP_HISTOGRAM: return run_histogram(argc - 1, argv + 1);
    case MH_OP_RANK: return run_rank(argc - 1, argv + 1);
    default: return cli_error(CLI_USAGE, "run %s is not available yet", argv[0]);
    }
}

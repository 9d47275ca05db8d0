/* conv2d on the CPU.
 *   cpu-reference  one output at a time, double accumulation: the oracle.
 *   cpu-omp        OpenMP over output rows; each filter tap adds a shifted input row to the
 *                  output row in one vectorised sweep (float accumulation). Typed images
 *                  (mh_conv2d_typed): each input row converted to float32 as it is read, each
 *                  output row cast into its type as it is stored. Float64 calls
 *                  (mh_conv2d_float64): each output summed in scipy's order in double (this file
 *                  is built without contraction into fused multiply-adds). */
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/internal.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* The value the image has at (y, x), inside or past its edges (bordered calls); NaN-safe:
 * a constant outside is cval itself. */
static double pixel_at(const mh_conv2d_args *a, const float *in, long long y, long long x)
{
    const long long my = mh_border_index(y, (long long)a->rows, a->mode);
    const long long mx = mh_border_index(x, (long long)a->cols, a->mode);
    return my < 0 || mx < 0 ? (double)a->cval : (double)in[(size_t)my * a->cols + (size_t)mx];
}

/* Every tap of a bordered call meets a value (scipy pads, then correlates); a zero-padded
 * call skips the taps whose rows or columns fall outside the input. */
void mh_conv2d_reference_at(const mh_conv2d_args *a, const float *in, const float *filter, size_t r, size_t c,
                            double *value, double *abs_sum)
{
    double sum = 0.0, mag = 0.0;
    for (int i = 0; i < a->krows; ++i) {
        long long y = (long long)r + i - a->lpr;
        if (!a->bordered && (y < 0 || y >= (long long)a->rows)) continue;
        for (int j = 0; j < a->kcols; ++j) {
            long long x = (long long)c + j - a->lpc;
            if (!a->bordered && (x < 0 || x >= (long long)a->cols)) continue;
            const double v = a->bordered ? pixel_at(a, in, y, x) : (double)in[(size_t)y * a->cols + (size_t)x];
            double t = v * filter[i * a->kcols + j];
            sum += t;
            mag += fabs(t);
        }
    }
    *value = sum;
    if (abs_sum) *abs_sum = mag;
}

static mh_status reference_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_conv2d_args *a = &args->conv2d;
#pragma omp parallel for schedule(dynamic, 16)
    for (long long r = 0; r < (long long)a->out_rows; ++r)
        for (size_t c = 0; c < a->out_cols; ++c) {
            double v;
            mh_conv2d_reference_at(a, a->in, a->filter, (size_t)r, c, &v, NULL);
            a->out[(size_t)r * a->out_cols + c] = (float)v;
        }
    return MH_OK;
}

/* Input row y (any position: the border's row where it falls outside) as float32: the
 * image's own row, or a typed image's converted into buf; NULL outside in constant mode. */
static const float *input_row(const mh_conv2d_args *a, long long r, float *buf)
{
    const long long y = mh_border_index(r, (long long)a->rows, a->mode);
    if (y < 0) return NULL;
    if (a->in_type == MH_F32) return a->in + (size_t)y * a->cols;
    for (size_t c = 0; c < a->cols; ++c) buf[c] = mh_load_value(a->in, (size_t)y * a->cols + c, a->in_type);
    return buf;
}

/* A bordered call: each tap adds its input row (the border's row where it falls outside) to the
 * output row, the interior columns in one vectorised sweep and the edge columns through the
 * mode; a constant row outside adds cval times the tap. */
static void omp_bordered_row(const mh_conv2d_args *a, long long r, float *o, float *row_buf)
{
    const long long lpc = a->lpc, cols = (long long)a->cols;
    memset(o, 0, a->out_cols * sizeof(float));
    for (int i = 0; i < a->krows; ++i) {
        const float *row = input_row(a, r + i - a->lpr, row_buf);
        for (int j = 0; j < a->kcols; ++j) {
            const float f = a->filter[i * a->kcols + j];
            const long long lo = lpc - j > 0 ? lpc - j : 0, hi = cols + lpc - j < cols ? cols + lpc - j : cols;
            for (long long c = 0; c < cols; ++c) {
                if (row && c == lo && lo < hi) {
#pragma omp simd
                    for (long long cc = lo; cc < hi; ++cc) o[cc] += row[cc + j - lpc] * f;
                    c = hi - 1;
                    continue;
                }
                const long long x = mh_border_index(c + j - lpc, cols, a->mode);
                o[c] += (row && x >= 0 ? row[x] : a->cval) * f;
            }
        }
    }
}

/* A bordered call, typed or not. A typed one computes each output row into a float32 row of
 * the thread's own (with the converted input row beside it), allocated before anything is
 * written, and stores it with scipy's cast. */
static mh_status omp_bordered(mh_context *ctx, const mh_conv2d_args *a)
{
    const int typed = mh_conv2d_is_typed(a);
    const size_t per_thread = a->cols + a->out_cols;
    size_t bytes = 0;
    float *scratch = NULL;
    if (typed) {
        if (mh_mul_ok((size_t)omp_get_max_threads(), per_thread, &bytes) && mh_mul_ok(bytes, sizeof(float), &bytes))
            scratch = malloc(bytes);
        if (!scratch)
            return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "conv2d/cpu-omp: %zu bytes for the typed rows (cols = %zu)",
                           bytes, a->cols);
    }
#pragma omp parallel for schedule(static)
    for (long long r = 0; r < (long long)a->out_rows; ++r) {
        if (!typed) {
            omp_bordered_row(a, r, a->out + (size_t)r * a->out_cols, NULL);
            continue;
        }
        float *row_buf = scratch + (size_t)omp_get_thread_num() * per_thread, *o = row_buf + a->cols;
        omp_bordered_row(a, r, o, row_buf);
        for (size_t c = 0; c < a->out_cols; ++c)
            mh_store_value(a->out, (size_t)r * a->out_cols + c, a->out_type, mh_cast_value(o[c], a->out_type));
    }
    free(scratch);
    return MH_OK;
}

/* A float64 call: each output as scipy's NI_Correlate sums it (mh_conv2d_float64), the taps of
 * its footprint (past DBL_EPSILON in magnitude) in C order, each product rounded before the add. */
static mh_status omp_float64(const mh_conv2d_args *a)
{
    const long long rows = (long long)a->rows, cols = (long long)a->cols;
#pragma omp parallel for schedule(static)
    for (long long r = 0; r < rows; ++r)
        for (long long c = 0; c < cols; ++c) {
            double sum = 0.0;
            for (int i = 0; i < a->krows; ++i) {
                const long long y = mh_border_index(r + i - a->lpr, rows, a->mode);
                for (int j = 0; j < a->kcols; ++j) {
                    const double w = a->filter64[i * a->kcols + j];
                    if (!(fabs(w) > DBL_EPSILON)) continue;
                    const long long x = mh_border_index(c + j - a->lpc, cols, a->mode);
                    const double v = y < 0 || x < 0 ? a->cval64 : mh_load_double(a->in, (size_t)(y * cols + x), a->in_type);
                    const double product = v * w;
                    sum += product;
                }
            }
            mh_store_double(a->out, (size_t)(r * cols + c), a->out_type, sum);
        }
    return MH_OK;
}

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    const mh_conv2d_args *a = &args->conv2d;
    if (mh_conv2d_is_float64(a)) return omp_float64(a);
    if (a->bordered) return omp_bordered(ctx, a);
    const long long lpc = a->lpc, cols = (long long)a->cols, out_cols = (long long)a->out_cols;
#pragma omp parallel for schedule(static)
    for (long long r = 0; r < (long long)a->out_rows; ++r) {
        float *o = a->out + (size_t)r * a->out_cols;
        memset(o, 0, a->out_cols * sizeof(float));
        for (int i = 0; i < a->krows; ++i) {
            long long y = r + i - a->lpr;
            if (y < 0 || y >= (long long)a->rows) continue;
            const float *row = a->in + (size_t)y * a->cols;
            for (int j = 0; j < a->kcols; ++j) {
                const float f = a->filter[i * a->kcols + j];
                /* output c reads input column c + j - lpc, which must lie in [0, cols) */
                long long lo = lpc - j > 0 ? lpc - j : 0, hi = cols + lpc - j < out_cols ? cols + lpc - j : out_cols;
#pragma omp simd
                for (long long c = lo; c < hi; ++c) o[c] += row[c + j - lpc] * f;
            }
        }
    }
    return MH_OK;
}

static const mh_row rows[] = {
    {{"conv2d/cpu-reference", MH_OP_CONV2D, MH_BACKEND_CPU, 0, "host", "ours",
      "one output at a time, double accumulation: the oracle"},
     mh_supports_any, reference_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_LARGE_FILTERS | MH_ROW_BORDER_MODES},
    {{"conv2d/cpu-omp", MH_OP_CONV2D, MH_BACKEND_CPU, 1, "host", "ours",
      "OpenMP over output rows, one vectorised sweep per filter tap; typed images converted row by row"},
     mh_supports_any, omp_run, NULL, 0, MH_LIB_NONE, NULL,
     MH_ROW_IMAGE_DTYPES | MH_ROW_LARGE_FILTERS | MH_ROW_FLOAT64 | MH_ROW_BORDER_MODES},
};

MH_ROW_GROUP(mh_conv2d_cpu_rows, rows)

/* ---- mh_conv2d_mode_reversed's filter copy on the CPU backend ------------------------------- */

mh_status mh_conv2d_reverse_cpu(mh_context *ctx, const float *filter, size_t n, const float **copy)
{
    float *values;
    const mh_status s =
        mh_slot_buffer(ctx, MH_SLOT_REVERSED_FILTER, "the reversed filter's copy", n * sizeof(float), (void **)&values);
    if (s != MH_OK) return s;
    for (size_t i = 0; i < n; ++i) values[i] = filter[n - 1 - i];
    *copy = values;
    return MH_OK;
}

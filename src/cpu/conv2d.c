/* conv2d on the CPU.
 *   cpu-reference  one output at a time, double accumulation: the oracle.
 *   cpu-omp        OpenMP over output rows; each filter tap adds a shifted input row to the
 *                  output row in one vectorised sweep (float accumulation). */
#include "../core/internal.h"

#include <math.h>
#include <string.h>

/* The taps j of filter row i that meet the input for output (r, c): rows and columns
 * outside the input are zero and skipped. */
void mh_conv2d_reference_at(const mh_conv2d_args *a, const float *in, const float *filter, size_t r, size_t c,
                            double *value, double *abs_sum)
{
    double sum = 0.0, mag = 0.0;
    for (int i = 0; i < a->krows; ++i) {
        long long y = (long long)r + i - a->lpr;
        if (y < 0 || y >= (long long)a->rows) continue;
        for (int j = 0; j < a->kcols; ++j) {
            long long x = (long long)c + j - a->lpc;
            if (x < 0 || x >= (long long)a->cols) continue;
            double t = (double)in[(size_t)y * a->cols + (size_t)x] * filter[i * a->kcols + j];
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

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_conv2d_args *a = &args->conv2d;
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
     mh_supports_any, reference_run, NULL, 0},
    {{"conv2d/cpu-omp", MH_OP_CONV2D, MH_BACKEND_CPU, 1, "host", "ours",
      "OpenMP over output rows, one vectorised sweep per filter tap"},
     mh_supports_any, omp_run, NULL, 0},
};

MH_ROW_GROUP(mh_conv2d_cpu_rows, rows)

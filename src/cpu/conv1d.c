/* conv1d on the CPU.
 *   cpu-reference  one output at a time, double accumulation: the oracle every other
 *                  variant is checked against.
 *   cpu-omp        OpenMP threads over blocks of 64 outputs; each block's accumulators stay
 *                  in vector registers while the mask streams past (float accumulation, as
 *                  the GPU variants do). Blocks that touch the zero padding (or a
 *                  bordered call's extension) take the bounds-checked path. */
#include "../core/border.h"
#include "../core/internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

void mh_conv1d_reference_at(const float *in, size_t n, const float *mask, size_t k,
                            size_t lpad, size_t i, double *value, double *abs_sum)
{
    /* input index p = i + j - lpad must lie in [0, n) */
    size_t j0 = lpad > i ? lpad - i : 0;
    size_t j1 = k;
    if (i + k > n + lpad) j1 = n + lpad - i; /* i + j - lpad < n */
    double sum = 0.0, mag = 0.0;
    for (size_t j = j0; j < j1; ++j) {
        double term = (double)in[i + j - lpad] * (double)mask[j];
        sum += term;
        mag += fabs(term);
    }
    *value = sum;
    if (abs_sum) *abs_sum = mag;
}

void mh_conv1d_reference_mode_at(const float *in, size_t n, const float *mask, size_t k, size_t lpad, mh_mode mode,
                                 float cval, size_t i, double *value, double *abs_sum)
{
    double sum = 0.0, mag = 0.0;
    for (size_t j = 0; j < k; ++j) {
        const long long q = mh_border_index((long long)i + (long long)j - (long long)lpad, (long long)n, mode);
        const double term = (q < 0 ? (double)cval : (double)in[q]) * (double)mask[j];
        sum += term;
        mag += fabs(term);
    }
    *value = sum;
    if (abs_sum) *abs_sum = mag;
}

static mh_status reference_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_conv1d_args *a = &args->conv1d;
    for (size_t i = 0; i < a->out_n; ++i) {
        double v;
        if (a->bordered) mh_conv1d_reference_mode_at(a->in, a->n, a->mask, a->k, a->lpad, a->mode, a->cval, i, &v, NULL);
        else mh_conv1d_reference_at(a->in, a->n, a->mask, a->k, a->lpad, i, &v, NULL);
        a->out[i] = (float)v;
    }
    return MH_OK;
}

enum { OMP_BLOCK = 64 };

/* Outputs [i0, i0 + len) from x, the OMP_BLOCK + k - 1 samples their windows read (the input
 * itself, or a bordered block's gathered window). Out of line, so that every block runs the
 * same machine code and an output's value does not depend on which path fed it (memhier.dask
 * cuts an array into chunks and must get the single call's bits). */
static __attribute__((noinline)) void omp_block_from(const mh_conv1d_args *a, const float *x, size_t i0, size_t len)
{
    float acc[OMP_BLOCK] = {0};
    for (size_t j = 0; j < a->k; ++j) {
        const float m = a->mask[j];
        const float *xj = x + j;
#pragma omp simd
        for (size_t t = 0; t < OMP_BLOCK; ++t) acc[t] += xj[t] * m;
    }
    memcpy(a->out + i0, acc, len * sizeof(float));
}

/* Outputs [i0, i0 + len) whose whole window lies inside the input. */
static void omp_block_interior(const mh_conv1d_args *a, size_t i0, size_t len)
{
    omp_block_from(a, a->in + i0 - a->lpad, i0, len);
}

/* Outputs of a bordered call whose window leaves the signal: the block's window gathered with
 * the mode's values, then the interior's arithmetic (every tap meets a value, as in scipy). */
static void omp_block_bordered(const mh_conv1d_args *a, float *window, size_t i0, size_t len)
{
    for (size_t t = 0; t < OMP_BLOCK + a->k - 1; ++t) {
        const long long q = mh_border_index((long long)(i0 + t) - (long long)a->lpad, (long long)a->n, a->mode);
        window[t] = q < 0 ? a->cval : a->in[q];
    }
    omp_block_from(a, window, i0, len);
}

/* Outputs whose window leaves the signal, for a zero-padded call: the taps past the ends are
 * skipped (a padded zero never meets an Inf tap). */
static void omp_block_edge(const mh_conv1d_args *a, size_t i0, size_t len)
{
    for (size_t i = i0; i < i0 + len; ++i) {
        size_t j0 = a->lpad > i ? a->lpad - i : 0;
        size_t j1 = i + a->k > a->n + a->lpad ? a->n + a->lpad - i : a->k;
        float acc = 0.0f;
        for (size_t j = j0; j < j1; ++j) acc += a->in[i + j - a->lpad] * a->mask[j];
        a->out[i] = acc;
    }
}

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    const mh_conv1d_args *a = &args->conv1d;
    const long long blocks = (long long)((a->out_n + OMP_BLOCK - 1) / OMP_BLOCK);
    /* a bordered call's edge blocks: one gathered window a thread, allocated before anything is
     * written */
    const size_t span = OMP_BLOCK + a->k - 1;
    size_t bytes = 0;
    float *windows = NULL;
    if (a->bordered) {
        if (mh_mul_ok((size_t)omp_get_max_threads(), span, &bytes) && mh_mul_ok(bytes, sizeof(float), &bytes))
            windows = malloc(bytes);
        if (!windows)
            return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "conv1d/cpu-omp: %zu bytes for the edge blocks' windows (k = %zu)",
                           bytes, a->k);
    }
#pragma omp parallel for schedule(static)
    for (long long b = 0; b < blocks; ++b) {
        size_t i0 = (size_t)b * OMP_BLOCK;
        size_t len = a->out_n - i0 < OMP_BLOCK ? a->out_n - i0 : OMP_BLOCK;
        /* interior: every input read (a full block, even past len) stays inside [0, n) */
        int interior = i0 >= a->lpad && i0 - a->lpad + OMP_BLOCK + a->k - 1 <= a->n;
        if (interior)
            omp_block_interior(a, i0, len);
        else if (a->bordered)
            omp_block_bordered(a, windows + (size_t)omp_get_thread_num() * span, i0, len);
        else
            omp_block_edge(a, i0, len);
    }
    free(windows);
    return MH_OK;
}

static const mh_row rows[] = {
    {{"conv1d/cpu-reference", MH_OP_CONV1D, MH_BACKEND_CPU, 0, "host", "ours",
      "one output at a time, double accumulation: the oracle"},
     mh_supports_any, reference_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_BORDER_MODES},
    {{"conv1d/cpu-omp", MH_OP_CONV1D, MH_BACKEND_CPU, 1, "host", "ours",
      "OpenMP over 64-output blocks held in vector registers"},
     mh_supports_any, omp_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_BORDER_MODES},
};

MH_ROW_GROUP(mh_conv1d_cpu_rows, rows)

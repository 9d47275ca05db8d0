/* matmul on the CPU.
 *   cpu-reference  one output at a time, accumulated in double: the oracle
 *   cpu-omp        rows of c in parallel; for each row, blocks of k and n so that the block
 *                  of b in use (256 x 512 floats, 512 KB) stays in L2; the inner loop is a
 *                  vectorisable c_row += a[i][p] * b_row
 * Both take float64 calls too (mh_matmul_typed), computed in double, and float16 calls (float16
 * in and out): the products, exact in float32, summed in float32 (cpu-omp; cpu-reference in double)
 * and each output rounded to float16 once. */
#include "../core/internal.h"
#include "../core/dtype.h"

#include <stdlib.h>
#include <string.h>

static mh_status reference_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_matmul_args *x = &args->matmul;
    for (size_t i = 0; i < x->m; ++i)
        for (size_t j = 0; j < x->n; ++j) {
            if (x->type == MH_F64) {
                const double *a = mh_matmul_a64(x), *b = mh_matmul_b64(x);
                double s = 0.0;
                for (size_t p = 0; p < x->k; ++p) s += a[i * x->k + p] * b[p * x->n + j];
                mh_matmul_c64(x)[i * x->n + j] = s;
                continue;
            }
            if (x->type == MH_F16) {
                const uint16_t *a = (const uint16_t *)(const void *)x->a, *b = (const uint16_t *)(const void *)x->b;
                double s = 0.0;
                for (size_t p = 0; p < x->k; ++p)
                    s += (double)mh_half_to_float(a[i * x->k + p]) * (double)mh_half_to_float(b[p * x->n + j]);
                ((uint16_t *)(void *)x->c)[i * x->n + j] = mh_float_to_half((float)s);
                continue;
            }
            double ref, mag;
            mh_matmul_reference_at(x->a, x->b, x->k, x->n, i, j, &ref, &mag);
            x->c[i * x->n + j] = (float)ref;
        }
    return MH_OK;
}

enum { KB = 256, NB = 512 };

/* cpu-omp's blocked loops over arrays of T. */
#define DEFINE_OMP_MATMUL(name, T)                                                                  \
    static void name(const T *a, const T *b, T *c, size_t m, size_t k, size_t n)                    \
    {                                                                                               \
        for (size_t j0 = 0; j0 < n; j0 += NB) {                                                     \
            const size_t j1 = j0 + NB < n ? j0 + NB : n;                                            \
            _Pragma("omp parallel for schedule(static)")                                            \
            for (long long il = 0; il < (long long)m; ++il) {                                       \
                const size_t i = (size_t)il;                                                        \
                T *crow = c + i * n;                                                                \
                memset(crow + j0, 0, (j1 - j0) * sizeof(T));                                        \
                for (size_t p0 = 0; p0 < k; p0 += KB) {                                             \
                    const size_t p1 = p0 + KB < k ? p0 + KB : k;                                    \
                    for (size_t p = p0; p < p1; ++p) {                                              \
                        const T aip = a[i * k + p];                                                 \
                        const T *brow = b + p * n;                                                  \
                        _Pragma("omp simd") for (size_t j = j0; j < j1; ++j) crow[j] += aip * brow[j]; \
                    }                                                                               \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
    }

DEFINE_OMP_MATMUL(omp_f32, float)
DEFINE_OMP_MATMUL(omp_f64, double)

/* `count` float16 values widened to float32 (exact), or rounded from it. */
static void widen_half(const uint16_t *h, float *f, size_t count)
{
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)count; ++i) f[i] = mh_half_to_float(h[i]);
}
static void round_half(const float *f, uint16_t *h, size_t count)
{
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)count; ++i) h[i] = mh_float_to_half(f[i]);
}

/* A float16 product: a and b widened to float32, the float32 loops, c rounded to float16. */
static mh_status omp_f16(mh_context *ctx, const mh_matmul_args *x)
{
    const size_t na = x->m * x->k, nb = x->k * x->n, nc = x->m * x->n; /* sizes checked by the args */
    float *buf = malloc((na + nb + nc) * sizeof(float));
    if (!buf) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "cpu-omp: no host memory for a float16 product's float32 copies");
    widen_half((const uint16_t *)(const void *)x->a, buf, na);
    widen_half((const uint16_t *)(const void *)x->b, buf + na, nb);
    omp_f32(buf, buf + na, buf + na + nb, x->m, x->k, x->n);
    round_half(buf + na + nb, (uint16_t *)(void *)x->c, nc);
    free(buf);
    return MH_OK;
}

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    const mh_matmul_args *x = &args->matmul;
    if (x->type == MH_F16) return omp_f16(ctx, x);
    if (x->type == MH_F64) omp_f64(mh_matmul_a64(x), mh_matmul_b64(x), mh_matmul_c64(x), x->m, x->k, x->n);
    else omp_f32(x->a, x->b, x->c, x->m, x->k, x->n);
    return MH_OK;
}

static const mh_row rows[] = {
    {{"matmul/cpu-reference", MH_OP_MATMUL, MH_BACKEND_CPU, 0, "host", "ours", "one output at a time in double"},
     mh_supports_any, reference_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_FLOAT64 | MH_ROW_FLOAT16},
    {{"matmul/cpu-omp", MH_OP_MATMUL, MH_BACKEND_CPU, 1, "host", "ours", "OpenMP over rows, blocks of b kept in L2"},
     mh_supports_any, omp_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_FLOAT64 | MH_ROW_FLOAT16},
};

MH_ROW_GROUP(mh_matmul_cpu_rows, rows)

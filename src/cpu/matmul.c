/* matmul on the CPU.
 *   cpu-reference  one output at a time, accumulated in double: the oracle
 *   cpu-omp        rows of c in parallel; for each row, blocks of k and n so that the block
 *                  of b in use (256 x 512 floats, 512 KB) stays in L2; the inner loop is a
 *                  vectorisable c_row += a[i][p] * b_row
 * Both take float64 calls too (mh_matmul_typed), computed in double, and float16 and bfloat16
 * calls (16-bit floats in and out): the products, exact in float32, summed in float32 (cpu-omp;
 * cpu-reference in double) and each output rounded to the type once. */
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
            if (x->type == MH_F16 || x->type == MH_BF16) {
                double s = 0.0;
                for (size_t p = 0; p < x->k; ++p)
                    s += (double)mh_load_value(x->a, i * x->k + p, x->type) * (double)mh_load_value(x->b, p * x->n + j, x->type);
                mh_store_value(x->c, i * x->n + j, x->type, (float)s);
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

/* `count` 16-bit floats of type t widened to float32 (exact), or rounded from it. */
static void widen_16(const void *h, mh_dtype t, float *f, size_t count)
{
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)count; ++i) f[i] = mh_load_value(h, (size_t)i, t);
}
static void round_16(const float *f, mh_dtype t, void *h, size_t count)
{
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)count; ++i) mh_store_value(h, (size_t)i, t, f[i]);
}

/* A float16 or bfloat16 product: a and b widened to float32, the float32 loops, c rounded once. */
static mh_status omp_16(mh_context *ctx, const mh_matmul_args *x)
{
    const size_t na = x->m * x->k, nb = x->k * x->n, nc = x->m * x->n; /* sizes checked by the args */
    float *buf = malloc((na + nb + nc) * sizeof(float));
    if (!buf)
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "cpu-omp: no host memory for a %s product's float32 copies",
                       mh_dtype_name(x->type));
    widen_16(x->a, x->type, buf, na);
    widen_16(x->b, x->type, buf + na, nb);
    omp_f32(buf, buf + na, buf + na + nb, x->m, x->k, x->n);
    round_16(buf + na + nb, x->type, x->c, nc);
    free(buf);
    return MH_OK;
}

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    const mh_matmul_args *x = &args->matmul;
    if (x->type == MH_F16 || x->type == MH_BF16) return omp_16(ctx, x);
    if (x->type == MH_F64) omp_f64(mh_matmul_a64(x), mh_matmul_b64(x), mh_matmul_c64(x), x->m, x->k, x->n);
    else omp_f32(x->a, x->b, x->c, x->m, x->k, x->n);
    return MH_OK;
}

static const mh_row rows[] = {
    {{"matmul/cpu-reference", MH_OP_MATMUL, MH_BACKEND_CPU, 0, "host", "ours", "one output at a time in double"},
     mh_supports_any, reference_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_FLOAT64 | MH_ROW_FLOAT16 | MH_ROW_BFLOAT16},
    {{"matmul/cpu-omp", MH_OP_MATMUL, MH_BACKEND_CPU, 1, "host", "ours", "OpenMP over rows, blocks of b kept in L2"},
     mh_supports_any, omp_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_FLOAT64 | MH_ROW_FLOAT16 | MH_ROW_BFLOAT16},
};

MH_ROW_GROUP(mh_matmul_cpu_rows, rows)

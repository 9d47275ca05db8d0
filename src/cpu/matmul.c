/* matmul on the CPU.
 *   cpu-reference  one output at a time, accumulated in double: the oracle
 *   cpu-omp        rows of c in parallel; for each row, blocks of k and n so that the block
 *                  of b in use (256 x 512 floats, 512 KB) stays in L2; the inner loop is a
 *                  vectorisable c_row += a[i][p] * b_row
 * Both take float64 calls too (mh_matmul_typed), computed in double. */
#include "../core/internal.h"

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

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_matmul_args *x = &args->matmul;
    if (x->type == MH_F64) omp_f64(mh_matmul_a64(x), mh_matmul_b64(x), mh_matmul_c64(x), x->m, x->k, x->n);
    else omp_f32(x->a, x->b, x->c, x->m, x->k, x->n);
    return MH_OK;
}

static const mh_row rows[] = {
    {{"matmul/cpu-reference", MH_OP_MATMUL, MH_BACKEND_CPU, 0, "host", "ours", "one output at a time in double"},
     mh_supports_any, reference_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_FLOAT64},
    {{"matmul/cpu-omp", MH_OP_MATMUL, MH_BACKEND_CPU, 1, "host", "ours", "OpenMP over rows, blocks of b kept in L2"},
     mh_supports_any, omp_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_FLOAT64},
};

MH_ROW_GROUP(mh_matmul_cpu_rows, rows)

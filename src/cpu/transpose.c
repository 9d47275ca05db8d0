/* transpose on the CPU.
 *   cpu-reference  seed 002's transposeMatrixCPU: row by row, every write a stride apart
 *   cpu-omp        32 x 32 blocks (a block's rows and columns stay in L1), OpenMP over all
 *                  blocks */
#include "../core/internal.h"

static mh_status reference_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_transpose_args *a = &args->transpose;
    for (size_t y = 0; y < a->rows; ++y)
        for (size_t x = 0; x < a->cols; ++x) a->out[x * a->rows + y] = a->in[y * a->cols + x];
    return MH_OK;
}

enum { BLOCK = 32 };

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    (void)ctx;
    const mh_transpose_args *a = &args->transpose;
    const long long by_count = (long long)((a->rows + BLOCK - 1) / BLOCK), bx_count = (long long)((a->cols + BLOCK - 1) / BLOCK);
#pragma omp parallel for collapse(2) schedule(static)
    for (long long by = 0; by < by_count; ++by)
        for (long long bx = 0; bx < bx_count; ++bx) {
            const size_t y0 = (size_t)by * BLOCK, y1 = y0 + BLOCK < a->rows ? y0 + BLOCK : a->rows;
            const size_t x0 = (size_t)bx * BLOCK, x1 = x0 + BLOCK < a->cols ? x0 + BLOCK : a->cols;
            for (size_t x = x0; x < x1; ++x)
                for (size_t y = y0; y < y1; ++y) a->out[x * a->rows + y] = a->in[y * a->cols + x];
        }
    return MH_OK;
}

static const mh_row rows[] = {
    {{"transpose/cpu-reference", MH_OP_TRANSPOSE, MH_BACKEND_CPU, 0, "host", "seed 002",
      "transposeMatrixCPU: row by row, strided writes"},
     mh_supports_any, reference_run, NULL, 0},
    {{"transpose/cpu-omp", MH_OP_TRANSPOSE, MH_BACKEND_CPU, 1, "host", "ours", "OpenMP over 32 x 32 cache blocks"},
     mh_supports_any, omp_run, NULL, 0},
};

MH_ROW_GROUP(mh_transpose_cpu_rows, rows)

/* rank on CUDA (mh_rank: scipy.ndimage's selection filters).
 *   naive  a thread an output: its window's keys gathered from global memory into a local array
 *          (up to RANK_NAIVE_MAX set elements) by insertion as they load, the rank read off; the
 *          ladder's first rung, and the GPU's row for every footprint until the shared-memory
 *          and van Herk rows exist */
#include "common.cuh"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/rank_key.h"

#include <stdio.h>
#include <stdlib.h>

enum { RANK_NAIVE_MAX = 255, RANK_THREADS = 256 };

struct rank_params {
    const void *in;
    void *out;
    long long rows, cols;
    size_t channels, values;
    mh_dtype in_type, out_type;
    int mode, count, rank, has_structure;
    double cval;
    const int2 *offsets;     /* (row, column) of each set element from the output, C order */
    const double *structure; /* count values, after the offsets (has_structure) */
};

static __global__ void __launch_bounds__(RANK_THREADS) rank_naive_kernel(const rank_params p)
{
    uint64_t keys[RANK_NAIVE_MAX];
    for (size_t i = blockIdx.x * (size_t)RANK_THREADS + threadIdx.x; i < p.values;
         i += (size_t)gridDim.x * RANK_THREADS) {
        const size_t ch = i % p.channels, pixel = i / p.channels;
        const long long x = (long long)(pixel % (size_t)p.cols), y = (long long)(pixel / (size_t)p.cols % (size_t)p.rows);
        const size_t image = pixel / (size_t)p.cols / (size_t)p.rows;
        for (int k = 0; k < p.count; ++k) {
            const int2 o = p.offsets[k];
            const long long r = mh_border_index(y + o.x, p.rows, p.mode), c = mh_border_index(x + o.y, p.cols, p.mode);
            double v = p.cval;
            if (r >= 0 && c >= 0)
                v = mh_load_double(p.in, ((image * (size_t)p.rows + (size_t)r) * (size_t)p.cols + (size_t)c) * p.channels + ch,
                                   p.in_type);
            const uint64_t key = mh_rank_key(p.has_structure ? v + p.structure[k] : v);
            int j = k;
            for (; j > 0 && keys[j - 1] > key; --j) keys[j] = keys[j - 1];
            keys[j] = key;
        }
        mh_store_double(p.out, i, p.out_type, mh_rank_value(keys[p.rank]));
    }
}

static int naive_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    if (args->rank.count <= RANK_NAIVE_MAX) return 1;
    snprintf(why, len, "a footprint of %zu set elements: naive keeps at most %d a thread", args->rank.count,
             RANK_NAIVE_MAX);
    return 0;
}

/* The footprint's set elements as offsets from the output, then the structure's values at them,
 * copied into the workspace on the call's stream in kernel parameters (mh_cuda_upload_by_params
 * moves 32-bit words and never waits for the stream, which a pageable cudaMemcpyAsync may). */
static mh_status upload_window(mh_context *ctx, const mh_rank_args *a, rank_params *p)
{
    const mh_rank_desc *d = &a->d;
    const size_t offsets_bytes = mh_align_up(a->count * sizeof(int2), 16);
    const size_t bytes = offsets_bytes + (d->structure ? a->count * sizeof(double) : 0);
    unsigned char *host = (unsigned char *)malloc(bytes);
    if (!host) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "rank: out of host memory for the window's offsets");
    int2 *offsets = (int2 *)host;
    double *structure = (double *)(host + offsets_bytes);
    const long long anchor_r = (long long)(d->krows / 2) + d->origin_row, anchor_c = (long long)(d->kcols / 2) + d->origin_col;
    size_t n = 0;
    for (size_t r = 0; r < d->krows; ++r)
        for (size_t c = 0; c < d->kcols; ++c)
            if (d->footprint[r * d->kcols + c]) {
                offsets[n] = make_int2((int)((long long)r - anchor_r), (int)((long long)c - anchor_c));
                if (d->structure) structure[n] = d->structure[r * d->kcols + c];
                ++n;
            }
    void *ws = NULL;
    mh_status s = mh_workspace(ctx, bytes, &ws);
    if (s == MH_OK)
        s = mh_cuda_status(ctx, (cudaError_t)mh_cuda_upload_by_params((float *)ws, (const float *)host,
                                                                      bytes / sizeof(float), mh_stream(ctx)),
                           "rank: copying the window's offsets");
    free(host);
    p->offsets = (const int2 *)ws;
    p->structure = (const double *)((unsigned char *)ws + offsets_bytes);
    return s;
}

static mh_status naive_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    rank_params p = {a->in, a->out, (long long)d->rows, (long long)d->cols, d->channels, a->values, d->in_type,
                     d->out_type, (int)d->mode, (int)a->count, (int)d->rank, d->structure != NULL, d->cval, NULL, NULL};
    MH_TRY(upload_window(ctx, a, &p));
    const size_t blocks = mh_resident_blocks(ctx, a->values, RANK_THREADS);
    rank_naive_kernel<<<(unsigned)blocks, RANK_THREADS, 0, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "rank/naive");
}

static const mh_row rows[] = {
    {{"rank/naive", MH_OP_RANK, MH_BACKEND_CUDA, 1, "global+local", "ours",
      "a thread an output, its window's keys sorted in a local array as they load"},
     naive_supports, naive_run, NULL, 0},
};

MH_ROW_GROUP(mh_rank_cuda_rows, rows)

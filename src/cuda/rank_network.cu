/* rank/network on CUDA: the row (rank_network.cuh has its kernels and launch; the 49 keys'
 * compile in rank_network49.cu). */
#include "rank_network.cuh"

static const int network_sizes[] = {9, 25, 49};

static int network_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    const mh_rank_args *a = &args->rank;
    if (a->count > (size_t)network_sizes[2]) {
        snprintf(why, len, "a footprint of %zu set elements: network sorts at most %d in registers", a->count,
                 network_sizes[2]);
        return 0;
    }
    if (a->d.cols * a->d.channels > UINT32_MAX) {
        snprintf(why, len, "rows of %zu x %zu values: network counts a row's values in 32 bits", a->d.cols,
                 a->d.channels);
        return 0;
    }
    return 1;
}

static mh_status network_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    if (a->count <= (size_t)network_sizes[0]) return network_typed<9>(ctx, a);
    if (a->count <= (size_t)network_sizes[1]) return network_typed<25>(ctx, a);
    return mh_rank_network49(ctx, a);
}

static const mh_row rows[] = {
    {{"rank/network", MH_OP_RANK, MH_BACKEND_CUDA, 5, "registers", "ours",
      "a thread an output, its window's keys sorted in registers by an odd-even merge network (up to 49)"},
     network_supports, network_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_VOLUMES},
};

MH_ROW_GROUP(mh_rank_network_rows, rows)

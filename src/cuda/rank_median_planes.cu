/* rank/median3x3x3's kernels (rank_median.cuh), in a file of their own for a parallel build. */
#include "rank_median.cuh"

mh_status mh_rank_median3x3x3_run(mh_context *ctx, const mh_args *args)
{
    return median_run<3, 3>(ctx, args, "rank/median3x3x3");
}

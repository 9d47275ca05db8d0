/* rank/median7x7's kernels (rank_median.cuh), in a file of their own for a parallel build. */
#include "rank_median.cuh"

mh_status mh_rank_median7_run(mh_context *ctx, const mh_args *args) { return median_run<1, 7>(ctx, args, "rank/median7x7"); }

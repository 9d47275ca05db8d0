/* rank/median3x3, median5x5, median7x7, median3x3x3 and sorted-rows on CUDA: the rows
 * (rank_median.cuh has their kernels; median7x7's, median3x3x3's and sorted-rows' compile in
 * rank_median7.cu, rank_median_planes.cu and rank_sorted_rows.cu). */
#include "rank_median.cuh"

static int median3_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    return median_supports(args, 1, 3, "rank/median3x3", why, len);
}

static int median5_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    return median_supports(args, 1, 5, "rank/median5x5", why, len);
}

static int median7_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    return median_supports(args, 1, 7, "rank/median7x7", why, len);
}

static int median3x3x3_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    return median_supports(args, 3, 3, "rank/median3x3x3", why, len);
}

static mh_status median3_run(mh_context *ctx, const mh_args *args) { return median_run<1, 3>(ctx, args, "rank/median3x3"); }
static mh_status median5_run(mh_context *ctx, const mh_args *args) { return median_run<1, 5>(ctx, args, "rank/median5x5"); }

static const mh_row rows[] = {
    {{"rank/median3x3", MH_OP_RANK, MH_BACKEND_CUDA, 6, "registers", "ours",
      "the median of a full 3 x 3 window: each input row's three keys sorted once, shared by the three outputs over it"},
     median3_supports, median3_run, NULL, 0},
    {{"rank/median5x5", MH_OP_RANK, MH_BACKEND_CUDA, 7, "registers", "ours",
      "the median of a full 5 x 5 window: rows sorted once, two outputs a step sharing the merge of the four rows both hold"},
     median5_supports, median5_run, NULL, 0},
    {{"rank/median7x7", MH_OP_RANK, MH_BACKEND_CUDA, 8, "registers", "ours",
      "the median of a full 7 x 7 window: rows sorted once, two outputs a step sharing the merge of the six rows both hold"},
     median7_supports, mh_rank_median7_run, NULL, 0},
    {{"rank/median3x3x3", MH_OP_RANK, MH_BACKEND_CUDA, 9, "registers", "ours",
      "the median of a full 3 x 3 x 3 window of a volume: each plane's nine keys sorted once, two outputs a step sharing the merge of the two planes both hold"},
     median3x3x3_supports, mh_rank_median3x3x3_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_VOLUMES},
    {{"rank/sorted-rows", MH_OP_RANK, MH_BACKEND_CUDA, 10, "registers+shared", "ours",
      "any rank of a full 3 x 3, 5 x 5 or 7 x 7 window: rows sorted once, two outputs a step sharing the full merge of the rows both hold, each output's key picked from it and its own row"},
     mh_rank_sorted_rows_supports, mh_rank_sorted_rows_run, NULL, 0},
};

MH_ROW_GROUP(mh_rank_median_rows, rows)

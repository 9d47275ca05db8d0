/* rank/minmax's parameters and its column walk, which rank_minmax_columns.cu builds apart from
 * rank.cu for a parallel build. */
#ifndef MH_CUDA_RANK_MINMAX_CUH
#define MH_CUDA_RANK_MINMAX_CUH

#include "common.cuh"
#include "../core/rank_line.h"

struct minmax_params {
    const void *in;
    void *out;
    mh_dtype in_type, out_type;
    long long n;                 /* positions a line */
    size_t outer, inner;
    int k, anchor, mode;         /* window length, its element over the output */
    uint64_t flip;               /* 0 for the minimum, ~0 for the maximum */
    uint64_t cval_key;           /* cval's key, flipped */
    int lines, outputs;          /* a tile's */
    size_t line_tiles, position_tiles, tiles;
};

/* Whether the column walk takes a line pass: inner values enough for a warp's lanes, a window of
 * at most 32, an output of the input's type (rank_minmax_columns.cu). */
bool mh_minmax_columns_take(const mh_rank_line *l, mh_dtype in_type, mh_dtype out_type);

/* The column walk of p's line for keys of T's own width (T one of with_keys' narrow types). */
template <typename T> mh_status mh_minmax_columns(mh_context *ctx, const minmax_params &p);

#endif

/* rank/sorted-rows' kernels (rank_median.cuh), in a file of their own for a parallel build: any
 * rank of a full 3 x 3, 5 x 5 or 7 x 7 window. */
#include "rank_median.cuh"

/* Whether sorted-rows takes the call: any rank of a full 3 x 3, 5 x 5 or 7 x 7 window. */
int mh_rank_sorted_rows_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    const mh_rank_desc *d = &args->rank.d;
    const size_t side = d->krows;
    const char *what = d->kdepth != 1 || d->kcols != side || (side != 3 && side != 5 && side != 7) ? "another footprint"
                       : args->rank.count != side * side ? "a footprint with holes"
                       : d->structure                   ? "a structure"
                                                        : NULL;
    if (what) {
        snprintf(why, len, "%s: takes any rank of a full 3 x 3, 5 x 5 or 7 x 7 window", what);
        return 0;
    }
    return median_walk_fits(d, 1, true, "rank/sorted-rows", why, len);
}

template <typename T, int Side> static void sorted_rows_launch(mh_context *ctx, const median3_params &p, dim3 grid, bool same)
{
    if (same) rank_sorted_rows_kernel<T, true, Side><<<grid, MEDIAN3_THREADS, 0, mh_stream(ctx)>>>(p);
    else rank_sorted_rows_kernel<T, false, Side><<<grid, MEDIAN3_THREADS, 0, mh_stream(ctx)>>>(p);
}

mh_status mh_rank_sorted_rows_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    const char *const name = "rank/sorted-rows";
    char why[200];
    if (!mh_rank_sorted_rows_supports(ctx, args, why, sizeof why)) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "%s: %s", name, why);
    return with_keys(d, [&](auto type, auto) {
        using T = std::remove_pointer_t<decltype(type)>;
        if constexpr (std::is_void<T>::value) {
            return mh_fail(ctx, MH_ERR_INTERNAL, "%s: 64-bit keys", name);
        } else {
            const median3_params p = walk_params<T>(ctx, a, 1, (int)d->krows);
            const dim3 grid = walk_grid(p);
            if (!grid.x) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "%s: rows of %zu values", name, p.row_values);
            const bool same = d->out_type == d->in_type;
            if (d->krows == 3) sorted_rows_launch<T, 3>(ctx, p, grid, same);
            else if (d->krows == 5) sorted_rows_launch<T, 5>(ctx, p, grid, same);
            else sorted_rows_launch<T, 7>(ctx, p, grid, same);
            return mh_cuda_status(ctx, cudaGetLastError(), name);
        }
    });
}

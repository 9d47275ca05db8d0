/* rank/network's kernels for 26 to 49 set elements (rank_network.cuh), in a file of their own for a
 * parallel build. */
#include "rank_network.cuh"

mh_status mh_rank_network49(mh_context *ctx, const mh_rank_args *a) { return network_typed<49>(ctx, a); }

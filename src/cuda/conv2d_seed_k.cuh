/* Compiled-in filter sizes for the seeds' conv2d rungs: seed 004 compiled K in
 * (`#define K 11`); memhier builds each rung for square odd K = 3..15 and keeps a K = 0
 * instance that reads the size at run time, for every other filter. */
#ifndef MH_CONV2D_SEED_K_CUH
#define MH_CONV2D_SEED_K_CUH

#include "../core/internal.h"

/* The filter's sides inside a kernel: K when compiled in, else the call's (p.krows, p.kcols). */
#define KR(K, p) ((K) ? (K) : (p).krows)
#define KC(K, p) ((K) ? (K) : (p).kcols)

/* A table of a kernel's instances for K = 0 (run time), 3, 5, ..., 15; leading template
 * arguments, if any, go first with a trailing comma: MH_SEED_K(kern, true, ). */
#define MH_SEED_K(kernel, ...)                                                                            \
    {kernel<__VA_ARGS__ 0>, kernel<__VA_ARGS__ 3>, kernel<__VA_ARGS__ 5>, kernel<__VA_ARGS__ 7>,            \
     kernel<__VA_ARGS__ 9>, kernel<__VA_ARGS__ 11>, kernel<__VA_ARGS__ 13>, kernel<__VA_ARGS__ 15>}

/* The table index a call takes: 1..7 for square filters 3, 5, ..., 15; 0 for the rest. */
static inline int mh_seed_k_slot(const mh_conv2d_args *a)
{
    return a->krows == a->kcols && a->krows % 2 && a->krows >= 3 && a->krows <= 15 ? a->krows / 2 : 0;
}

#endif

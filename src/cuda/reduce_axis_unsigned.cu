/* reduce along an axis on CUDA: the kernels of uint32 and uint64, built apart from
 * reduce_axis.cu's other dtypes so that no compile is long (the reason is with the dispatch
 * there). */
#define MH_REDUCE_AXIS_UNIT 2
#include "reduce_axis.cu"

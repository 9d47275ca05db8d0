/* reduce along an axis on CUDA: the kernels of the 8- and 16-bit integers (int8, uint8, int16,
 * uint16), built apart from reduce_axis.cu's other dtypes so that no compile is long (the reason
 * is with the dispatch there). */
#define MH_REDUCE_AXIS_UNIT 1
#include "reduce_axis.cu"

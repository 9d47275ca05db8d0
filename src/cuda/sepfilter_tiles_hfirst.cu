/* sepfilter/tiles's horizontal-first kernels, in a translation unit of their own
 * (sepfilter_tiles.cu, kernel_from). */
#define MH_SEPFILTER_TILES_HFIRST_UNIT
#include "sepfilter_tiles.cu"

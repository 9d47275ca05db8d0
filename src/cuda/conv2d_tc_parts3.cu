/* conv2d/tc's instances of three parts, built apart from conv2d_tc.cu's others so that no compile
 * is long (the reason is with tc_run there). Built for sm_90a only, as that file. */
#define MH_CONV2D_TC_PARTS3_UNIT 1
#include "conv2d_tc.cu"

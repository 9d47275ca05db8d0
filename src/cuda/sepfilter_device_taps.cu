/* sepfilter/fused's device-taps instances, built apart from sepfilter.cu's others so that no
 * compile is long (the reason is with the kernel picker there). */
#define MH_SEPFILTER_DEVICE_TAPS_UNIT 1
#include "sepfilter.cu"

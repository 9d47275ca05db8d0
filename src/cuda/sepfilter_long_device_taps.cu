/* sepfilter/fused's device-taps instances past 64 taps (16-row tiles), built apart from the others
 * so that no compile is long (the reason is with the kernel picker in sepfilter.cu). */
#define MH_SEPFILTER_LONG_UNIT 2
#include "sepfilter.cu"

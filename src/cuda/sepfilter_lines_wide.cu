/* sepfilter/lines' wide (computed in float64) instances, built apart from sepfilter_lines.cu's others so
 * that no compile is long (the reason is with the instance tables there). */
#define MH_LINES_UNIT 2
#include "sepfilter_lines.cu"

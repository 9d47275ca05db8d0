/* sepfilter/lines' typed (narrow, computed in float32) instances, built apart from sepfilter_lines.cu's others so
 * that no compile is long (the reason is with the instance tables there). */
#define MH_LINES_UNIT 1
#include "sepfilter_lines.cu"

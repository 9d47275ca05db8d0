/* sepfilter/walk's instances for two terms added (mh_sepfilter_walk_pair), built apart from
 * sepfilter_walk.cu's others so that no compile is long (the reason is with the kernel picker
 * there). */
#define MH_SEPFILTER_WALK_PAIRS_UNIT 1
#include "sepfilter_walk.cu"

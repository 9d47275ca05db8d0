/* conv2d/walk's typed-image instances of 5 x 5, built apart from conv2d_walk.cu's others so
 * that no compile is long (the reason is with the instance tables there). */
#define MH_WALK_TYPED_UNIT 5
#include "conv2d_walk.cu"

/* Built instead of the cuDNN files when cuDNN is not found: the cudnn rows stay in the registry
 * and are refused by name as a library that cannot be loaded is (vendor_rows.h says why). */
#include "../core/internal.h"
#include "vendor_rows.h"

static const mh_row conv1d_rows[] = {{MH_CONV1D_CUDNN_INFO, mh_absent_supports, mh_absent_run, NULL, 0, MH_LIB_CUDNN,
                                      NULL, MH_CONV1D_CUDNN_FLAGS}};
static const mh_row conv2d_rows[] = {{MH_CONV2D_CUDNN_INFO, mh_absent_supports, mh_absent_run, NULL, 0, MH_LIB_CUDNN,
                                      NULL, MH_CONV2D_CUDNN_FLAGS}};

MH_ROW_GROUP(mh_conv1d_cudnn_rows, conv1d_rows)
MH_ROW_GROUP(mh_conv2d_cudnn_rows, conv2d_rows)

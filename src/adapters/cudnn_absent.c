/* Built instead of the cuDNN files when cuDNN is not found: the cudnn rows stay in the registry
 * (vendor_rows.h says why) and refuse every call by name. */
#include "../core/internal.h"
#include "vendor_rows.h"

static int absent_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    (void)ctx, (void)x;
    return mh_absent_supports("cuDNN", "cudnn.h and libcudnn", why, len);
}

static mh_status absent_run(mh_context *ctx, const mh_args *x) { return (void)x, mh_absent_run(ctx, "cuDNN"); }

static const mh_row conv1d_rows[] = {{MH_CONV1D_CUDNN_INFO, absent_supports, absent_run, NULL, 0, MH_LIB_NONE, NULL,
                                      MH_CONV1D_CUDNN_FLAGS}};
static const mh_row conv2d_rows[] = {{MH_CONV2D_CUDNN_INFO, absent_supports, absent_run, NULL, 0, MH_LIB_NONE, NULL,
                                      MH_CONV2D_CUDNN_FLAGS}};

MH_ROW_GROUP(mh_conv1d_cudnn_rows, conv1d_rows)
MH_ROW_GROUP(mh_conv2d_cudnn_rows, conv2d_rows)

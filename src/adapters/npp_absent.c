/* Built instead of conv2d_npp.cu where NPP is not installed: the npp row stays in the registry
 * (vendor_rows.h says why) and refuses every call by name. */
#include "../core/internal.h"
#include "vendor_rows.h"

static int absent_supports(const mh_context *ctx, const mh_args *x, char *why, size_t len)
{
    (void)ctx, (void)x;
    return mh_absent_supports("NPP", "nppi_filtering_functions.h and libnppif", why, len);
}

static mh_status absent_run(mh_context *ctx, const mh_args *x) { return (void)x, mh_absent_run(ctx, "NPP"); }

static const mh_row rows[] = {{MH_CONV2D_NPP_INFO, absent_supports, absent_run, NULL, 0, MH_LIB_NONE, NULL,
                               MH_CONV2D_NPP_FLAGS}};

MH_ROW_GROUP(mh_conv2d_npp_rows, rows)

/* Built instead of conv2d_npp.cu where NPP is not installed: the npp row stays in the registry
 * and is refused by name as a library that cannot be loaded is (vendor_rows.h says why). */
#include "../core/internal.h"
#include "vendor_rows.h"

static const mh_row rows[] = {{MH_CONV2D_NPP_INFO, mh_absent_supports, mh_absent_run, NULL, 0, MH_LIB_NPP, NULL,
                               MH_CONV2D_NPP_FLAGS}};

MH_ROW_GROUP(mh_conv2d_npp_rows, rows)

/* Built instead of conv2d_npp.cu where NPP is not installed: the row is simply absent. */
#include "../core/internal.h"

const mh_row *mh_conv2d_npp_rows(size_t *count)
{
    *count = 0;
    return NULL;
}

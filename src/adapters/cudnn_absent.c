/* Built instead of the cuDNN files when cuDNN is not found: those rows are simply absent. */
#include "../core/internal.h"

const mh_row *mh_conv1d_cudnn_rows(size_t *count)
{
    *count = 0;
    return NULL;
}

const mh_row *mh_conv2d_cudnn_rows(size_t *count)
{
    *count = 0;
    return NULL;
}

/* Built instead of conv1d_cudnn.c when cuDNN is not found: the row is simply absent. */
#include "../core/internal.h"

const mh_row *mh_conv1d_cudnn_rows(size_t *count)
{
    *count = 0;
    return NULL;
}

/* Compiled into every CUDA source of the library (CMakeLists.txt: --pre-include): an empty
 * kernel that names this source's module, registered when the library loads, so that a context
 * can load all of the module's kernels when it is made (src/core/kernel_loading.h says why). */
#ifndef MH_MODULE_ANCHOR_CUH
#define MH_MODULE_ANCHOR_CUH

#include "core/kernel_loading.h"

static __global__ void mh_module_anchor(void) {}

static mh_module_node mh_module_anchor_node = {(const void *)mh_module_anchor, 0};

__attribute__((constructor)) static void mh_module_anchor_register(void)
{
    mh_register_module(&mh_module_anchor_node);
}

#endif

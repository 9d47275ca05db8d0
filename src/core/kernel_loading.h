/* Every kernel of the library loaded when a context is made, not at its first launch.
 *
 * With CUDA's lazy loading (the default since CUDA 12.2) a kernel is loaded at its first launch,
 * and a load waits for the whole device: the first call of each kernel in a process would wait
 * for every stream's work, the caller's included. Each CUDA source of the library is compiled
 * with src/cuda/module_anchor.cuh, which registers one kernel of its module here when the
 * library is loaded; mh_load_kernels loads every function of those modules, once per device and
 * process. */
#ifndef MH_KERNEL_LOADING_H
#define MH_KERNEL_LOADING_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mh_module_node {
    const void *anchor; /* a kernel of the module (its host stub) */
    struct mh_module_node *next;
} mh_module_node;

/* Called by each module's constructor, before main or at dlopen (one thread). */
void mh_register_module(mh_module_node *node);

/* Loads every kernel of the registered modules on `device` (made current by the caller), where
 * the library holds machine code for its architecture (on others the driver would compile each
 * kernel from PTX: they stay lazy). Once per device; quiet on failure (a kernel that did not load
 * loads at its launch, as it would have). */
void mh_load_kernels(int device, int compute_capability);

#ifdef __cplusplus
}
#endif

#endif

/* Loading every kernel of the library when a context is made (kernel_loading.h). */
#include "kernel_loading.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdlib.h>

/* The architectures the library holds machine code for, from CMAKE_CUDA_ARCHITECTURES (each
 * followed by a comma); 0 ends the list. */
#ifndef MEMHIER_SASS_ARCHS
#define MEMHIER_SASS_ARCHS
#endif
static const int sass_archs[] = {MEMHIER_SASS_ARCHS 0};

enum { MAX_DEVICES = 64, MAX_MODULES = 256 };

static mh_module_node *modules;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char loaded[MAX_DEVICES];

void mh_register_module(mh_module_node *node)
{
    node->next = modules;
    modules = node;
}

typedef CUresult (*func_get_module_fn)(CUmodule *, CUfunction);
typedef CUresult (*module_function_count_fn)(unsigned int *, CUmodule);
typedef CUresult (*module_enumerate_functions_fn)(CUfunction *, unsigned int, CUmodule);
typedef CUresult (*func_load_fn)(CUfunction);

typedef struct driver_calls {
    func_get_module_fn get_module;
    module_function_count_fn count;
    module_enumerate_functions_fn enumerate;
    func_load_fn load;
} driver_calls;

/* The driver's function, from CUDA 12.4 on (when the module enumeration calls appeared). */
static void *driver_entry(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return fn;
}

static int driver_calls_get(driver_calls *d)
{
    d->get_module = (func_get_module_fn)driver_entry("cuFuncGetModule");
    d->count = (module_function_count_fn)driver_entry("cuModuleGetFunctionCount");
    d->enumerate = (module_enumerate_functions_fn)driver_entry("cuModuleEnumerateFunctions");
    d->load = (func_load_fn)driver_entry("cuFuncLoad");
    return d->get_module && d->count && d->enumerate && d->load;
}

static int has_machine_code(int compute_capability)
{
    for (const int *a = sass_archs; *a; ++a)
        if (*a == compute_capability) return 1;
    return 0;
}

static void load_module(const driver_calls *d, CUmodule m)
{
    unsigned int n = 0;
    if (d->count(&n, m) != CUDA_SUCCESS || n == 0) return;
    CUfunction *fns = malloc(n * sizeof *fns);
    if (!fns) return;
    if (d->enumerate(fns, n, m) == CUDA_SUCCESS)
        for (unsigned int i = 0; i < n; ++i) d->load(fns[i]);
    free(fns);
}

static void load_all(void)
{
    driver_calls d;
    if (!driver_calls_get(&d)) return;
    CUmodule seen[MAX_MODULES];
    int nseen = 0;
    for (mh_module_node *node = modules; node; node = node->next) {
        cudaFunction_t f;
        CUmodule m;
        if (cudaGetFuncBySymbol(&f, node->anchor) != cudaSuccess) { /* no image for this device */
            cudaGetLastError();
            continue;
        }
        if (d.get_module(&m, (CUfunction)f) != CUDA_SUCCESS) continue;
        int known = 0;
        for (int i = 0; i < nseen && !known; ++i) known = seen[i] == m;
        if (known) continue;
        if (nseen < MAX_MODULES) seen[nseen++] = m;
        load_module(&d, m);
    }
}

void mh_load_kernels(int device, int compute_capability)
{
    if (device < 0 || device >= MAX_DEVICES || !has_machine_code(compute_capability)) return;
    pthread_mutex_lock(&lock);
    if (!loaded[device]) {
        load_all();
        loaded[device] = 1;
    }
    pthread_mutex_unlock(&lock);
}

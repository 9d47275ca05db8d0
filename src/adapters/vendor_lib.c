/* Opens the vendor libraries with dlopen on first use and fills their function tables
 * (vendor_lib.h says why). Each library file is opened once per process: from the path in its
 * environment variable where that is set (MEMHIER_CUDNN_LIBRARY=/opt/cudnn/lib/libcudnn.so.9,
 * and that path alone), else by its soname (a copy already loaded, say by PyTorch, then
 * LD_LIBRARY_PATH and the system's paths), else by the path found at configure time. A
 * failure is kept with its reason, which every row that needs the library then gives. */
#define MH_VENDOR_CUBLAS_API
#define MH_VENDOR_CUFFT_API
#ifdef MEMHIER_HAVE_CUDNN
#define MH_VENDOR_CUDNN_API
#endif
#ifdef MEMHIER_HAVE_NPP
#define MH_VENDOR_NPP_API
#endif
#include "vendor_lib.h"
#include "vendor_rows.h"

#include "vendor_libs.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Returns the first symbol the handle lacks, or NULL when the table is complete. */
typedef const char *(*resolver)(void *handle);

#define MH_VENDOR_RESOLVE(f)                                                                    \
    if (!(api->f = (__typeof__(api->f))dlsym(handle, #f))) return #f;

/* A library's function table and the resolver that fills it from a handle. */
#define MH_VENDOR_TABLE(type, table, FUNCTIONS)                                                 \
    type table;                                                                                 \
    static const char *resolve_##table(void *handle)                                           \
    {                                                                                           \
        type *api = &table;                                                                     \
        FUNCTIONS(MH_VENDOR_RESOLVE)                                                            \
        return NULL;                                                                            \
    }

MH_VENDOR_TABLE(mh_cublas_api, mh_cublas, MH_CUBLAS_FUNCTIONS)
MH_VENDOR_TABLE(mh_cufft_api, mh_cufft, MH_CUFFT_FUNCTIONS)
#ifdef MH_VENDOR_CUDNN_API
MH_VENDOR_TABLE(mh_cudnn_api, mh_cudnn, MH_CUDNN_FUNCTIONS)
#else
#define resolve_mh_cudnn NULL
#endif
#ifdef MH_VENDOR_NPP_API
MH_VENDOR_TABLE(mh_npp_api, mh_npp, MH_NPP_FUNCTIONS)
#else
#define resolve_mh_npp NULL
#endif

/* One file of a library: the environment variable that overrides where it is, its soname and
 * the path found at configure time. */
typedef struct library_file {
    const char *env, *soname, *path;
} library_file;

typedef struct library {
    const char *name;
    /* the files to open, in order; the symbols are taken from the last (NPP's filters need its
     * core library loaded first, wherever that was found) */
    library_file files[2];
    resolver resolve; /* NULL: memhier was built without the library's headers */
    atomic_int state; /* 0 not tried, 1 ready, -1 failed (the reason in why) */
    char why[512];
} library;

static library libraries[MH_LIB_COUNT] = {
    [MH_LIB_CUBLAS] = {"cuBLAS", {{"MEMHIER_CUBLAS_LIBRARY", MH_CUBLAS_SONAME, MH_CUBLAS_PATH}}, resolve_mh_cublas},
    [MH_LIB_CUFFT] = {"cuFFT", {{"MEMHIER_CUFFT_LIBRARY", MH_CUFFT_SONAME, MH_CUFFT_PATH}}, resolve_mh_cufft},
    [MH_LIB_CUDNN] = {"cuDNN", {{"MEMHIER_CUDNN_LIBRARY", MH_CUDNN_SONAME, MH_CUDNN_PATH}}, resolve_mh_cudnn},
    [MH_LIB_NPP] = {"NPP",
                    {{"MEMHIER_NPPC_LIBRARY", MH_NPPC_SONAME, MH_NPPC_PATH},
                     {"MEMHIER_NPPIF_LIBRARY", MH_NPPIF_SONAME, MH_NPPIF_PATH}},
                    resolve_mh_npp},
};

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static void *open_name(const char *name, char *why, size_t len)
{
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *err = dlerror();
        snprintf(why, len, "%s", err ? err : name);
    }
    return handle;
}

/* The environment's path alone where it is set; else the soname, then the configured path.
 * NULL with the reason (the first attempt's error) in why. */
static void *open_file(const library_file *f, char *why, size_t len)
{
    const char *override = getenv(f->env);
    if (override && override[0]) {
        void *handle = open_name(override, why, len);
        if (!handle) snprintf(why + strlen(why), len - strlen(why), " (from %s)", f->env);
        return handle;
    }
    if (!f->soname[0]) {
        snprintf(why, len, "it was not found when memhier was configured, and %s is not set", f->env);
        return NULL;
    }
    void *handle = open_name(f->soname, why, len);
    char ignored[64];
    if (!handle && f->path[0] && strcmp(f->path, f->soname)) handle = open_name(f->path, ignored, sizeof ignored);
    return handle;
}

static void open_library(library *l)
{
    char detail[400];
    void *handle = NULL;
    if (!l->resolve) {
        snprintf(l->why, sizeof l->why, "memhier was built without %s's headers", l->name);
        atomic_store(&l->state, -1);
        return;
    }
    for (size_t i = 0; i < 2 && l->files[i].env; ++i) {
        if (!(handle = open_file(&l->files[i], detail, sizeof detail))) {
            snprintf(l->why, sizeof l->why, "%s could not be loaded: %s", l->name, detail);
            atomic_store(&l->state, -1);
            return;
        }
    }
    const char *missing = l->resolve(handle);
    if (missing) {
        snprintf(l->why, sizeof l->why, "%s lacks %s: a version older than the headers memhier was built with",
                 l->name, missing);
        atomic_store(&l->state, -1);
        return;
    }
    atomic_store(&l->state, 1); /* after the table: a reader that sees 1 sees it filled */
}

int mh_vendor_open(mh_vendor_lib lib, char *why, size_t len)
{
    if (lib <= MH_LIB_NONE || lib >= MH_LIB_COUNT) return 1;
    library *l = &libraries[lib];
    if (atomic_load(&l->state) == 0) {
        pthread_mutex_lock(&open_lock);
        if (atomic_load(&l->state) == 0) open_library(l);
        pthread_mutex_unlock(&open_lock);
    }
    if (atomic_load(&l->state) == 1) return 1;
    if (why && len) snprintf(why, len, "%s", l->why);
    return 0;
}

mh_status mh_vendor_need(mh_context *ctx, mh_vendor_lib lib)
{
    char why[512];
    return mh_vendor_open(lib, why, sizeof why) ? MH_OK : mh_fail(ctx, MH_ERR_UNSUPPORTED, "%s", why);
}

int mh_absent_supports(const mh_context *ctx, const mh_args *a, char *why, size_t len)
{
    (void)ctx, (void)a;
    snprintf(why, len, "memhier was built without this row's library");
    return 0;
}

mh_status mh_absent_run(mh_context *ctx, const mh_args *a)
{
    (void)a;
    return mh_fail(ctx, MH_ERR_UNSUPPORTED, "memhier was built without this row's library");
}

const char *mh_vendor_name(mh_vendor_lib lib)
{
    return lib > MH_LIB_NONE && lib < MH_LIB_COUNT ? libraries[lib].name : "none";
}

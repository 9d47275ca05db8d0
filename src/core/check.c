/* Argument checks shared by every op: pointer kinds, allocation sizes, overlap, overflow.
 * They run before anything is launched or written, so a refused call leaves the caller's
 * buffers untouched. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "internal.h"

#include <cuda_runtime_api.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int mh_mul_ok(size_t a, size_t b, size_t *r)
{
    if (a && b > SIZE_MAX / a) return 0;
    *r = a * b;
    return 1;
}

/* cuMemGetAddressRange through the runtime's entry-point query, so that the library needs
 * no link against libcuda (absent on machines without a driver). */
typedef int (*mem_range_fn)(unsigned long long *base, size_t *size, unsigned long long ptr);
static mem_range_fn mem_range;
static pthread_once_t mem_range_once = PTHREAD_ONCE_INIT;

static void load_mem_range(void)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 3020, cudaEnableDefault, &q) ==
            cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        mem_range = (mem_range_fn)fn;
    cudaGetLastError();
}

/* Bytes from p to the end of its allocation, or 0 when the driver cannot tell. */
static size_t bytes_to_allocation_end(const void *p)
{
    pthread_once(&mem_range_once, load_mem_range);
    if (!mem_range) return 0;
    unsigned long long base = 0;
    size_t size = 0;
    if (mem_range(&base, &size, (unsigned long long)(uintptr_t)p) != 0) return 0;
    return (size_t)(base + size - (unsigned long long)(uintptr_t)p);
}

static const char *memory_kind(enum cudaMemoryType t)
{
    switch (t) {
    case cudaMemoryTypeHost: return "pinned host memory";
    case cudaMemoryTypeDevice: return "device memory";
    case cudaMemoryTypeManaged: return "managed memory";
    default: return "host memory";
    }
}

static mh_status check_cuda_buffer(mh_context *ctx, const char *what, const void *p, size_t bytes)
{
    struct cudaPointerAttributes attr;
    enum cudaMemoryType type = cudaMemoryTypeUnregistered;
    int dev = -1;
    if (cudaPointerGetAttributes(&attr, p) == cudaSuccess) {
        type = attr.type;
        dev = attr.device;
    }
    cudaGetLastError();
    if (type != cudaMemoryTypeDevice && type != cudaMemoryTypeManaged)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "%s = %p is %s; a CUDA context (device %d) takes device pointers "
                       "(cudaMalloc or cudaMallocManaged)",
                       what, p, memory_kind(type), ctx->device);
    if (type == cudaMemoryTypeDevice && dev != ctx->device)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "%s = %p is memory of device %d; the context is on device %d", what, p, dev,
                       ctx->device);
    size_t avail = bytes_to_allocation_end(p);
    if (avail && avail < bytes)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "%s = %p: its allocation holds %zu bytes from there, the call needs %zu",
                       what, p, avail, bytes);
    return MH_OK;
}

/* Whether this process has loaded CUDA's driver (CUDA's runtime loads it when it starts, and it
 * stays): before that no pointer is CUDA memory, and asking would start the driver, a tenth of a
 * second and more on a GPU machine for a call that runs on the CPU. The loaded objects' names
 * are read in memory (dlopen's RTLD_NOLOAD would search the library path on every call), and
 * read again only when objects were loaded since the last reading found no driver: the loader
 * counts the objects it has added (dl_phdr_info's dlpi_adds, which the first object's entry
 * gives), so a CPU call on a machine without the driver pays one look at that count, not a
 * walk over every object's name. */
static int names_cuda_driver(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    const char *slash = strrchr(info->dlpi_name, '/');
    return strncmp(slash ? slash + 1 : info->dlpi_name, "libcuda.so", 10) == 0;
}

/* The loader's count of objects added, into *data; 2 where this loader does not give it. */
static int objects_added(struct dl_phdr_info *info, size_t size, void *data)
{
    if (size < offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds) return 2;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

static int cuda_driver_loaded(void)
{
    static atomic_int seen;
    static atomic_ullong read_at; /* the count of objects added when the names last were read, 0: never */
    if (atomic_load_explicit(&seen, memory_order_relaxed)) return 1;
    unsigned long long adds = 0;
    const int counted = dl_iterate_phdr(objects_added, &adds) == 1 && adds != 0;
    if (counted && adds == atomic_load_explicit(&read_at, memory_order_relaxed)) return 0;
    if (!dl_iterate_phdr(names_cuda_driver, NULL)) {
        /* the count read before the names: an object added since makes the next call read them */
        if (counted) atomic_store_explicit(&read_at, adds, memory_order_relaxed);
        return 0;
    }
    atomic_store_explicit(&seen, 1, memory_order_relaxed);
    return 1;
}

static mh_status check_host_buffer(mh_context *ctx, const char *what, const void *p)
{
    if (!cuda_driver_loaded() || mh_cuda_device_count() == 0) return MH_OK;
    struct cudaPointerAttributes attr;
    cudaError_t e = cudaPointerGetAttributes(&attr, p);
    cudaGetLastError();
    if (e == cudaSuccess && attr.type == cudaMemoryTypeDevice)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "%s = %p is memory of CUDA device %d; a CPU context takes host pointers",
                       what, p, attr.device);
    return MH_OK;
}

int mh_is_device_memory(const mh_context *ctx, const void *p)
{
    if (mh_is_cpu(ctx) || !p) return 0;
    struct cudaPointerAttributes attr;
    const cudaError_t e = cudaPointerGetAttributes(&attr, p);
    cudaGetLastError();
    return e == cudaSuccess && (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged);
}

mh_status mh_check_buffer(mh_context *ctx, const char *what, const void *p, size_t bytes)
{
    if (!p) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s is NULL", what);
    return mh_is_cpu(ctx) ? check_host_buffer(ctx, what, p) : check_cuda_buffer(ctx, what, p, bytes);
}

mh_status mh_check_disjoint(mh_context *ctx, const char *aname, const void *a, size_t abytes,
                            const char *bname, const void *b, size_t bbytes)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    if (a0 < b0 + bbytes && b0 < a0 + abytes)
        return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                       "%s = %p (%zu bytes) overlaps %s = %p (%zu bytes); this operation is "
                       "not in place",
                       aname, a, abytes, bname, b, bbytes);
    return MH_OK;
}

mh_status mh_check_image_dtype(mh_context *ctx, const char *name, mh_dtype t, const char *op)
{
    if ((unsigned)t <= MH_I16) return MH_OK;
    return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT,
                   "%s = %d (%s): %s reads and writes float32, float16, uint8, int8, uint16 and int16", name, (int)t,
                   mh_dtype_name(t), op);
}

mh_status mh_check_mode(mh_context *ctx, const char *name, mh_mode mode)
{
    if ((unsigned)mode <= MH_MODE_WRAP) return MH_OK;
    return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = %d is not constant, reflect, mirror, nearest or wrap", name,
                   (int)mode);
}

int mh_zero_pad_only(int bordered, mh_mode mode, mh_op op, char *why, size_t len)
{
    if (!bordered) return 1;
    char takers[256];
    snprintf(why, len, "it pads with zeros only (valid, same, full); mode '%s' runs on %s", mh_mode_name(mode),
             mh_rows_with(op, MH_ROW_BORDER_MODES, takers, sizeof takers));
    return 0;
}

mh_status mh_check_origin(mh_context *ctx, const char *name, long long origin, size_t taps, const char *side)
{
    const long long lo = -(long long)(taps / 2), hi = (long long)((taps - 1) / 2);
    if (origin >= lo && origin <= hi) return MH_OK;
    return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "%s = %lld: a %zu-tap %s takes origins from %lld to %lld", name, origin,
                   taps, side, lo, hi);
}

mh_status mh_check_conv_buffers(mh_context *ctx, const float *in, size_t in_bytes, const char *taps_name,
                                const float *taps, size_t taps_bytes, const float *out, size_t out_bytes)
{
    mh_status s;
    if ((s = mh_check_buffer(ctx, "in", in, in_bytes)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, taps_name, taps, taps_bytes)) != MH_OK) return s;
    if ((s = mh_check_buffer(ctx, "out", out, out_bytes)) != MH_OK) return s;
    if ((s = mh_check_disjoint(ctx, "out", out, out_bytes, "in", in, in_bytes)) != MH_OK) return s;
    return mh_check_disjoint(ctx, "out", out, out_bytes, taps_name, taps, taps_bytes);
}

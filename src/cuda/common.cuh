/* What every CUDA file of memhier shares: checked calls and launches, the context's stream,
 * and the shared-memory opt-in. */
#ifndef MH_CUDA_COMMON_CUH
#define MH_CUDA_COMMON_CUH

#include "../core/internal.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

static inline cudaStream_t mh_stream(const mh_context *ctx) { return (cudaStream_t)ctx->stream; }

/* Turns a CUDA error into a status with its detail on ctx; clears non-sticky errors. */
static inline mh_status mh_cuda_status(mh_context *ctx, cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return MH_OK;
    cudaGetLastError();
    mh_status s = e == cudaErrorMemoryAllocation ? MH_ERR_OUT_OF_MEMORY : MH_ERR_CUDA;
    return mh_fail(ctx, s, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define MH_CUDA_TRY(ctx, call)                                                                  \
    do {                                                                                        \
        mh_status mh_s_ = mh_cuda_status((ctx), (call), #call);                                \
        if (mh_s_ != MH_OK) return mh_s_;                                                       \
    } while (0)

/* After every <<<>>>: a bad configuration or missing image shows up here. */
#define MH_LAUNCH_CHECK(ctx, name) mh_cuda_status((ctx), cudaGetLastError(), "launching " name)

/* Returns the mh_status of `call` when it is not MH_OK. */
#define MH_TRY(call)                                                                            \
    do {                                                                                        \
        const mh_status s_ = (call);                                                            \
        if (s_ != MH_OK) return s_;                                                             \
    } while (0)

/* An attribute of the current device; fallback where the runtime cannot tell. */
static inline int mh_device_attr(cudaDeviceAttr attr, int fallback)
{
    int dev = 0, v = fallback;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) return fallback;
    return v;
}

/* Largest dynamic shared memory one block of the current device may use. */
static inline size_t mh_smem_optin(void)
{
    return (size_t)mh_device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, 48 << 10);
}

/* Lets `kernel` use up to the opt-in limit. Always the same value, so concurrent callers
 * cannot undo each other. */
static inline cudaError_t mh_allow_smem(const void *kernel)
{
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)mh_smem_optin());
}

static inline size_t mh_ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* p on a 16-byte boundary: where float4 / uint4 loads and stores may go. */
static __host__ __device__ __forceinline__ bool mh_aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

/* Elements of `elem` bytes before p's first 16-byte boundary (p is elem-aligned). */
static inline size_t mh_head_to_16(const void *p, size_t elem) { return (16 - ((uintptr_t)p & 15)) % 16 / elem; }

/* The context's SMs (132, an H100's, where it has not read them). */
static inline size_t mh_sm_count(const mh_context *ctx) { return ctx->sm_count > 0 ? (size_t)ctx->sm_count : 132; }

/* The blocks of `kernel` (threads a block, smem bytes of dynamic shared memory) an SM holds at
 * once, at least one. */
static inline mh_status mh_blocks_per_sm(mh_context *ctx, const void *kernel, int threads, size_t smem,
                                         size_t *per_sm)
{
    int n = 0;
    MH_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem));
    *per_sm = n > 0 ? (size_t)n : 1;
    return MH_OK;
}

/* The blocks of `kernel` that all the SMs hold at once: one resident grid, at least one a SM. */
static inline mh_status mh_resident_grid(mh_context *ctx, const void *kernel, int threads, size_t smem, size_t *blocks)
{
    size_t per_sm = 0;
    MH_TRY(mh_blocks_per_sm(ctx, kernel, threads, smem, &per_sm));
    *blocks = per_sm * mh_sm_count(ctx);
    return MH_OK;
}

/* Blocks for a grid-stride kernel: enough for per_block elements each, at most 8 per SM (the
 * rest of the input is strided over), at least 1. The SM count comes from the context. */
static inline size_t mh_resident_blocks(const mh_context *ctx, size_t n, size_t per_block)
{
    const size_t sms = mh_sm_count(ctx);
    const size_t want = mh_ceil_div(n, per_block), most = sms * 8;
    return want < most ? (want ? want : 1) : most;
}

/* 1 when out_rows rows in blocks of block_rows fit gridDim.y (65535); else 0 and why. */
static inline int mh_grid_rows_fit(size_t out_rows, size_t block_rows, char *why, size_t len)
{
    if (mh_ceil_div(out_rows, block_rows) <= 65535) return 1;
    snprintf(why, len, "%zu output rows need more than 65535 blocks of %zu rows", out_rows, block_rows);
    return 0;
}

/* 1 when a block needing smem_bytes of shared memory fits and the rows fit the grid
 * (mh_grid_rows_fit); else 0 and why. */
static inline int mh_tile_fits(size_t smem_bytes, size_t out_rows, size_t block_rows, char *why, size_t len)
{
    if (smem_bytes > mh_smem_optin()) {
        snprintf(why, len, "its tiles need %zu bytes of shared memory, more than a block may use", smem_bytes);
        return 0;
    }
    return mh_grid_rows_fit(out_rows, block_rows, why, len);
}

/* Set in a device pass for another target than sm_90a, where the wgmma rows' kernels compile
 * empty (their files are built for sm_90a alone; mh_wgmma_device keeps them from running). */
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MH_WGMMA_ABSENT 1
#endif

/* 1 on a compute capability 9.0 device, where the wgmma rows (built for sm_90a alone) run;
 * else 0 and why. */
static inline int mh_wgmma_device(const mh_context *ctx, char *why, size_t len)
{
    if (ctx->cc == 90) return 1;
    snprintf(why, len, "wgmma is built for sm_90a, compute capability 9.0 only (this device: %d.%d)", ctx->cc / 10,
             ctx->cc % 10);
    return 0;
}

/* Programmatic dependent launch (sm_90; no-ops below): a kernel launched with
 * cudaLaunchAttributeProgrammaticStreamSerialization after this one may start once every block
 * of this one has called mh_let_next_grid_start (or exited); it calls mh_wait_for_previous_grid
 * before it touches what this one writes (the grid complete, its writes visible). */
static __device__ __forceinline__ void mh_let_next_grid_start()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
static __device__ __forceinline__ void mh_wait_for_previous_grid()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* One kernel on the context's stream; with `overlapped`, where the GPU has it (sm_90), as a
 * programmatic dependent launch: the kernel may start while the one before it in the stream
 * runs, and waits for it (mh_wait_for_previous_grid) before it touches what that one writes. */
static inline mh_status mh_launch(mh_context *ctx, const void *kernel, unsigned gx, unsigned gy, int threads,
                                  size_t smem, void **params, const char *what, bool overlapped = false)
{
    cudaLaunchConfig_t c = {};
    cudaLaunchAttribute overlap[1];
    overlap[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap[0].val.programmaticStreamSerializationAllowed = 1;
    c.gridDim = dim3(gx, gy), c.blockDim = dim3(threads), c.dynamicSmemBytes = smem, c.stream = mh_stream(ctx);
    c.attrs = overlap, c.numAttrs = overlapped && ctx->cc >= 90 ? 1 : 0;
    return mh_cuda_status(ctx, cudaLaunchKernelExC(&c, kernel, params), what);
}

#define MH_MAX_GRID_X 2147483647ULL
#define MH_MAX_GRID_YZ 65535ULL

/* launch(first, count) for the `total` images (or signals) of a call, in launches of at most
 * MH_MAX_GRID_YZ, what a grid's y or z holds; the first status that is not MH_OK ends it. */
template <typename Launch>
static inline mh_status mh_per_grid_slice(size_t total, Launch launch)
{
    for (size_t first = 0; first < total; first += MH_MAX_GRID_YZ) {
        const size_t count = total - first < MH_MAX_GRID_YZ ? total - first : MH_MAX_GRID_YZ;
        MH_TRY(launch(first, (unsigned)count));
    }
    return MH_OK;
}

/* Rows a thread walks down its column in the column walks (sepfilter/lines, rank/minmax's): enough
 * segments that the grid holds ~`slots` resident threads a core's slot (an SM's 2048 threads,
 * `slots` times over; more, shorter segments shorten the last wave) for `threads` walking threads
 * a segment, each segment at least one strip of strip_rows, and at most MH_MAX_GRID_YZ
 * (gridDim.y's). */
static inline long long mh_column_segment_rows(const mh_context *ctx, size_t rows, size_t threads, int strip_rows,
                                               int slots)
{
    size_t segs = mh_ceil_div((size_t)slots * 2048 * mh_sm_count(ctx), threads ? threads : 1);
    const size_t strips = mh_ceil_div(rows, (size_t)strip_rows);
    if (segs > strips) segs = strips;
    if (segs < mh_ceil_div(strips, MH_MAX_GRID_YZ)) segs = mh_ceil_div(strips, MH_MAX_GRID_YZ);
    return (long long)(mh_ceil_div(strips, segs) * (size_t)strip_rows);
}

#endif

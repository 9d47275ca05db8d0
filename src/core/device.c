/* Device facts and the measured ceilings, for the CPU and CUDA backends alike. */
#include "internal.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

static mh_status cuda_device_info(mh_context *ctx, mh_device_info *info)
{
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, ctx->device);
    if (e != cudaSuccess)
        return mh_fail(ctx, MH_ERR_CUDA, "cudaGetDeviceProperties(%d): %s", ctx->device,
                       cudaGetErrorString(e));
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->sm_count = p.multiProcessorCount;
    info->global_bytes = p.totalGlobalMem;
    info->l2_bytes = (size_t)p.l2CacheSize;
    info->smem_per_sm = p.sharedMemPerMultiprocessor;
    info->smem_per_block_optin = p.sharedMemPerBlockOptin;
    info->const_bytes = p.totalConstMem;
    info->regs_per_sm = (size_t)p.regsPerMultiprocessor;
    return MH_OK;
}

mh_status mh_device_info_get(mh_context *ctx, mh_device_info *info)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (!info) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "info is NULL");
    memset(info, 0, sizeof *info);
    info->device = ctx->device;
    return mh_is_cpu(ctx) ? mh_cpu_device_info(info) : cuda_device_info(ctx, info);
}

mh_status mh_measure_ceilings(mh_context *ctx, mh_ceilings *ceilings)
{
    if (!ctx) return MH_ERR_INVALID_ARGUMENT;
    mh_clear_error(ctx);
    if (!ceilings) return mh_fail(ctx, MH_ERR_INVALID_ARGUMENT, "ceilings is NULL");
    if (mh_is_cpu(ctx)) return mh_cpu_measure_ceilings(ctx, ceilings);
    mh_device_guard guard;
    mh_status s = mh_device_enter(ctx, &guard);
    if (s != MH_OK) return s;
    s = mh_cuda_measure_ceilings(ctx, ceilings);
    mh_device_leave(&guard);
    return s;
}

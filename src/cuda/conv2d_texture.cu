/* conv2d/texture: seed 001's texture rung. The input is read through a 2-D texture object
 * over the image in place (pitched linear memory), with cudaAddressModeBorder, so the
 * hardware returns zero outside the image: no bounds checks in the kernel. The filter is in
 * constant memory as in seed 001. One thread per output, no shared memory; square odd
 * filters up to 15 x 15 run with K compiled in (conv2d_seed_k.cuh).
 *
 * Texture objects over linear memory need the base address aligned to textureAlignment and
 * the row pitch to texturePitchAlignment. An image that does not meet them is first copied
 * into a pitched workspace (that copy is part of the variant's time). The object is kept in
 * the context and rebuilt only when the image's address or shape changes. */
#include "common.cuh"
#include "const_ring.h"
#include "conv2d_seed_k.cuh"

#include <stdio.h>
#include <stdlib.h>

enum { MAX_TAPS = MH_CONV2D_DIRECT_MAX_K * MH_CONV2D_DIRECT_MAX_K, BLOCK = 32 };

static __constant__ float c_filter[MH_CONST_RING_SLOTS][MAX_TAPS];

static mh_const_ring filter_ring = {PTHREAD_MUTEX_INITIALIZER, c_filter, MAX_TAPS * sizeof(float), {0}, {{0}}};

struct texture_params {
    cudaTextureObject_t tex;
    float *out;
    size_t out_rows, out_cols;
    int krows, kcols, lpr, lpc, slot;
};

template <int K>
static __global__ void conv2d_texture_kernel(const texture_params p)
{
    const size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y, col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    /* texel centres: x + 0.5 with unnormalised coordinates and point filtering */
    const float x0 = (float)((long long)col - p.lpc) + 0.5f, y0 = (float)((long long)row - p.lpr) + 0.5f;
    float res = 0.0f;
#pragma unroll
    for (int i = 0; i < KR(K, p); ++i)
#pragma unroll
        for (int j = 0; j < KC(K, p); ++j)
            res += tex2D<float>(p.tex, x0 + (float)j, y0 + (float)i) * c_filter[p.slot][i * KC(K, p) + j];
    if (row < p.out_rows && col < p.out_cols) p.out[row * p.out_cols + col] = res;
}

static void (*const texture_kernels[8])(const texture_params) = MH_SEED_K(conv2d_texture_kernel, );

/* The context's texture object and what it was made for. */
typedef struct texture_cache {
    cudaTextureObject_t tex;
    const void *ptr;
    size_t rows, cols, pitch;
} texture_cache;

static void destroy_cache(void *p)
{
    texture_cache *c = (texture_cache *)p;
    if (c->tex) cudaDestroyTextureObject(c->tex);
    free(c);
}

/* The image as the texture reads it: in place when aligned, else a pitched workspace copy. */
static mh_status texture_source(mh_context *ctx, const mh_conv2d_args *a, const float **ptr, size_t *pitch)
{
    const size_t align = (size_t)mh_device_attr(cudaDevAttrTextureAlignment, 512);
    const size_t pitch_align = (size_t)mh_device_attr(cudaDevAttrTexturePitchAlignment, 32);
    const size_t row_bytes = a->cols * sizeof(float);
    if ((uintptr_t)a->in % align == 0 && row_bytes % pitch_align == 0) {
        *ptr = a->in, *pitch = row_bytes;
        return MH_OK;
    }
    *pitch = mh_align_up(row_bytes, pitch_align);
    void *ws;
    mh_status s = mh_workspace(ctx, *pitch * a->rows + align, &ws);
    if (s != MH_OK) return s;
    float *dst = (float *)mh_align_up((uintptr_t)ws, align);
    MH_CUDA_TRY(ctx, cudaMemcpy2DAsync(dst, *pitch, a->in, row_bytes, row_bytes, a->rows, cudaMemcpyDeviceToDevice,
                                       mh_stream(ctx)));
    *ptr = dst;
    return MH_OK;
}

static mh_status texture_for(mh_context *ctx, const mh_conv2d_args *a, cudaTextureObject_t *tex)
{
    const float *ptr;
    size_t pitch;
    mh_status s = texture_source(ctx, a, &ptr, &pitch);
    if (s != MH_OK) return s;
    mh_slot *slot = mh_context_slot(ctx, MH_SLOT_TEXTURE);
    if (!slot) return MH_ERR_CUDA;
    texture_cache *c = (texture_cache *)slot->data;
    if (c && c->ptr == ptr && c->rows == a->rows && c->cols == a->cols && c->pitch == pitch) {
        *tex = c->tex;
        return MH_OK;
    }
    if (!c) {
        if (!(c = (texture_cache *)calloc(1, sizeof *c))) return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "texture cache");
        slot->data = c;
        slot->destroy = destroy_cache;
    }
    if (c->tex) { /* earlier kernels may still read through the old object */
        MH_CUDA_TRY(ctx, cudaStreamSynchronize(mh_stream(ctx)));
        cudaDestroyTextureObject(c->tex);
        c->tex = 0;
    }
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = (void *)ptr;
    res.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    res.res.pitch2D.width = a->cols;
    res.res.pitch2D.height = a->rows;
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeBorder; /* zero outside the image */
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    MH_CUDA_TRY(ctx, cudaCreateTextureObject(&c->tex, &res, &td, NULL));
    c->ptr = ptr, c->rows = a->rows, c->cols = a->cols, c->pitch = pitch;
    *tex = c->tex;
    return MH_OK;
}

static int texture_supports(const mh_context *, const mh_args *x, char *why, size_t len)
{
    const mh_conv2d_args *a = &x->conv2d;
    if (!mh_conv2d_zero_pad_only(a, why, len)) return 0;
    const size_t max_w = (size_t)mh_device_attr(cudaDevAttrMaxTexture2DLinearWidth, 0);
    const size_t max_h = (size_t)mh_device_attr(cudaDevAttrMaxTexture2DLinearHeight, 0);
    if (a->cols > max_w || a->rows > max_h) {
        snprintf(why, len, "a %zu x %zu image exceeds this GPU's %zu x %zu limit for 2-D textures over linear memory",
                 a->rows, a->cols, max_h, max_w);
        return 0;
    }
    return mh_grid_rows_fit(a->out_rows, BLOCK, why, len);
}

static mh_status texture_launch(mh_context *ctx, const mh_args *x, int slot)
{
    const mh_conv2d_args *a = &x->conv2d;
    texture_params p;
    mh_status s = texture_for(ctx, a, &p.tex);
    if (s != MH_OK) return s;
    p.out = a->out, p.out_rows = a->out_rows, p.out_cols = a->out_cols;
    p.krows = a->krows, p.kcols = a->kcols, p.lpr = a->lpr, p.lpc = a->lpc, p.slot = slot;
    dim3 grid((unsigned)mh_ceil_div(a->out_cols, BLOCK), (unsigned)mh_ceil_div(a->out_rows, BLOCK));
    texture_kernels[mh_seed_k_slot(a)]<<<grid, dim3(BLOCK, BLOCK), 0, mh_stream(ctx)>>>(p);
    return MH_LAUNCH_CHECK(ctx, "conv2d_texture_kernel");
}

static mh_status texture_run(mh_context *ctx, const mh_args *x)
{
    const mh_conv2d_args *a = &x->conv2d;
    return mh_const_ring_launch(&filter_ring, ctx, a->filter, (size_t)a->krows * a->kcols * sizeof(float),
                               texture_launch, x);
}

static const mh_row rows[] = {
    {{"conv2d/texture", MH_OP_CONV2D, MH_BACKEND_CUDA, 6, "texture+constant", "seed 001",
      "input through a 2-D texture object, zero border by the hardware"},
     texture_supports, texture_run, NULL},
};

MH_ROW_GROUP(mh_conv2d_texture_rows, rows)

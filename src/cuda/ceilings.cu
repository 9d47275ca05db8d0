/* The two ceilings every roofline percentage is measured against, taken in the same run:
 * a device-to-device copy (bytes read + written) and a kernel of independent FP32 FMA
 * chains that fills every SM. */
#include "common.cuh"

#include <stdlib.h>

enum { FMA_CHAINS = 16, FMA_ITERS = 4096, FMA_THREADS = 256, REPS = 15 };

static __global__ void __launch_bounds__(FMA_THREADS) fma_kernel(float *sink, float a, float b)
{
    float v[FMA_CHAINS];
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; ++c) v[c] = (float)(threadIdx.x + c);
    for (int it = 0; it < FMA_ITERS; ++it) {
#pragma unroll
        for (int c = 0; c < FMA_CHAINS; ++c) v[c] = fmaf(v[c], a, b);
    }
    float total = 0.0f;
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; ++c) total += v[c];
    if (total == 1234.5f) sink[threadIdx.x] = total; /* keeps the chains alive */
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of REPS timed runs of `op` after one warm-up. */
typedef cudaError_t (*timed_op)(void *state, cudaStream_t s);

static mh_status median_ms(mh_context *ctx, timed_op op, void *state, float *ms)
{
    cudaEvent_t start, stop;
    float t[REPS];
    MH_CUDA_TRY(ctx, cudaEventCreate(&start));
    mh_status st = mh_cuda_status(ctx, cudaEventCreate(&stop), "cudaEventCreate");
    if (st != MH_OK) {
        cudaEventDestroy(start);
        return st;
    }
    cudaStream_t s = mh_stream(ctx);
    st = mh_cuda_status(ctx, op(state, s), "warm-up");
    for (int r = 0; r < REPS && st == MH_OK; ++r) {
        cudaEventRecord(start, s);
        st = mh_cuda_status(ctx, op(state, s), "timed run");
        cudaEventRecord(stop, s);
        if (st == MH_OK) st = mh_cuda_status(ctx, cudaEventSynchronize(stop), "cudaEventSynchronize");
        if (st == MH_OK) cudaEventElapsedTime(&t[r], start, stop);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (st != MH_OK) return st;
    qsort(t, REPS, sizeof t[0], cmp_float);
    *ms = t[REPS / 2];
    return MH_OK;
}

typedef struct copy_state {
    void *dst, *src;
    size_t bytes;
} copy_state;

static cudaError_t copy_op(void *state, cudaStream_t s)
{
    copy_state *c = (copy_state *)state;
    return cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, s);
}

typedef struct fma_state {
    float *sink;
    unsigned blocks;
} fma_state;

static cudaError_t fma_op(void *state, cudaStream_t s)
{
    fma_state *f = (fma_state *)state;
    fma_kernel<<<f->blocks, FMA_THREADS, 0, s>>>(f->sink, 0.9999f, 1e-4f);
    return cudaGetLastError();
}

mh_status mh_cuda_measure_ceilings(mh_context *ctx, mh_ceilings *c)
{
    int sms = 0, threads_per_sm = 0;
    MH_CUDA_TRY(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->device));
    MH_CUDA_TRY(ctx, cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                            ctx->device));
    copy_state cs = {NULL, NULL, (size_t)512 << 20}; /* well past any L2 */
    mh_status st = mh_cuda_status(ctx, cudaMalloc(&cs.src, cs.bytes), "cudaMalloc (copy source)");
    if (st == MH_OK) st = mh_cuda_status(ctx, cudaMalloc(&cs.dst, cs.bytes), "cudaMalloc (copy target)");
    if (st == MH_OK) st = mh_cuda_status(ctx, cudaMemsetAsync(cs.src, 1, cs.bytes, mh_stream(ctx)), "memset");
    float ms = 0.0f;
    if (st == MH_OK) st = median_ms(ctx, copy_op, &cs, &ms);
    if (st == MH_OK) c->copy_gbps = 2.0 * (double)cs.bytes / (ms * 1e-3) / 1e9;
    cudaFree(cs.src);
    cudaFree(cs.dst);
    if (st != MH_OK) return st;

    fma_state fs = {NULL, (unsigned)(sms * (threads_per_sm / FMA_THREADS))};
    MH_CUDA_TRY(ctx, cudaMalloc((void **)&fs.sink, FMA_THREADS * sizeof(float)));
    st = median_ms(ctx, fma_op, &fs, &ms);
    cudaFree(fs.sink);
    if (st != MH_OK) return st;
    double flops = 2.0 * FMA_CHAINS * (double)FMA_ITERS * FMA_THREADS * fs.blocks;
    c->fma_gflops = flops / (ms * 1e-3) / 1e9;
    return MH_OK;
}

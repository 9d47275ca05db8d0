/* Where the C call's host time goes (issue 64): mh_conv2d_mode on a 256^2 image with a 5 x 5
 * filter in device memory, its arguments prepared, against the CUDA calls it is made of, each
 * timed in a loop of LOOPS calls on one stream (best of 3). Beside each loop's host time per call,
 * the GPU's time per call over the same loop (events): where the two are equal the loop waited on
 * the GPU, and the host figure is not the host's cost.
 *
 * `host_split sizes`: the same for mh_conv2d_mode at 3 x 3, 5 x 5 and 7 x 7 from 256^2 to 2048^2.
 *
 * usage (after cmake --build build):
 *   nvcc -O2 -std=c++17 -Iinclude lab/scripts/host_split.cu -o build/host_split -Lbuild -lmemhier -lcuda
 *   LD_LIBRARY_PATH=build build/host_split */
#include <memhier.h>

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { N = 256, K = 5, LOOPS = 20000 };

static cudaStream_t stream;

static double now_us()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

template <class F> static void timed(const char *name, F f)
{
    for (int i = 0; i < 200; ++i) f();
    cudaStreamSynchronize(stream);
    double best = 1e30, gpu = 0;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int r = 0; r < 3; ++r) {
        cudaEventRecord(a, stream);
        const double t0 = now_us();
        for (int i = 0; i < LOOPS; ++i) f();
        const double us = (now_us() - t0) / LOOPS;
        cudaEventRecord(b, stream);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        if (us < best) best = us, gpu = ms * 1e3 / LOOPS;
    }
    /* one call alone on an idle stream: the GPU's time from before its first launch to after its last */
    float alone = 1e30f;
    for (int i = 0; i < 200; ++i) {
        cudaStreamSynchronize(stream);
        cudaEventRecord(a, stream);
        f();
        cudaEventRecord(b, stream);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        if (ms < alone) alone = ms;
    }
    printf("%-52s host %6.2f us  gpu %6.2f us a call in the loop, %6.2f us alone\n", name, best, gpu, alone * 1e3);
    fflush(stdout);
}

__global__ void empty_kernel(const float *, float *, size_t, size_t) {}

/* `host_split sizes`: mh_conv2d_mode, reflect, K = 3, 5, 7, on square images of 256^2 to 2048^2 */
static int sweep(mh_context *ctx)
{
    const int sides[] = {256, 362, 512, 724, 1024, 2048};
    float *x, *y, *w;
    cudaMalloc(&x, 2048 * 2048 * 4);
    cudaMalloc(&y, 2048 * 2048 * 4);
    cudaMalloc(&w, 49 * 4);
    cudaMemset(x, 0, 2048 * 2048 * 4);
    cudaMemset(w, 0, 49 * 4);
    for (int k = 3; k <= 7; k += 2)
        for (int n : sides) {
            char name[96];
            snprintf(name, sizeof name, "mh_conv2d_mode auto reflect %dx%d %d^2", k, k, n);
            timed(name, [&] { mh_conv2d_mode(ctx, NULL, x, n, n, w, k, k, MH_MODE_REFLECT, 0, 0, 0, y); });
        }
    printf("library: %s\n", mh_context_error(ctx));
    return 0;
}

int main(int argc, char **argv)
{
    cudaSetDevice(0);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    float *x, *w, *y, *sum;
    cudaMalloc(&x, N * N * 4);
    cudaMalloc(&y, N * N * 4);
    cudaMalloc(&w, K * K * 4);
    cudaMalloc(&sum, 4);
    cudaMemset(x, 0, N * N * 4);
    cudaMemset(w, 0, K * K * 4);
    mh_context *ctx;
    if (mh_context_create(&ctx, 0) != MH_OK) return 1;
    mh_context_set_stream(ctx, stream);
    if (argc > 1) return sweep(ctx);

    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(4, 1);
    cfg.blockDim = dim3(256);
    cfg.stream = stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    timed("mh_conv2d_mode auto reflect", [&] { mh_conv2d_mode(ctx, NULL, x, N, N, w, K, K, MH_MODE_REFLECT, 0, 0, 0, y); });
    timed("mh_conv2d_mode conv2d/walk reflect", [&] {
        mh_conv2d_mode(ctx, "conv2d/walk", x, N, N, w, K, K, MH_MODE_REFLECT, 0, 0, 0, y);
    });
    timed("mh_conv2d_mode conv2d/walk constant 0", [&] {
        mh_conv2d_mode(ctx, "conv2d/walk", x, N, N, w, K, K, MH_MODE_CONSTANT, 0, 0, 0, y);
    });
    timed("mh_conv2d conv2d/walk pad same (no border kernel)", [&] {
        mh_conv2d(ctx, "conv2d/walk", x, N, N, w, K, K, MH_PAD_SAME, y);
    });
    timed("two empty kernels (<<<>>>, then Ex programmatic)", [&] {
        empty_kernel<<<dim3(1, 32), 128, 0, stream>>>(x, y, N, N);
        cudaLaunchKernelEx(&cfg, empty_kernel, (const float *)x, y, (size_t)N, (size_t)N);
    });
    timed("mh_conv2d_mode conv2d/basic reflect", [&] {
        mh_conv2d_mode(ctx, "conv2d/basic", x, N, N, w, K, K, MH_MODE_REFLECT, 0, 0, 0, y);
    });
    const mh_variant_info *chosen;
    timed("mh_conv2d_mode_select (no buffers, no launch)", [&] {
        mh_conv2d_mode_select(ctx, N, N, K, K, MH_MODE_REFLECT, 0, 0, &chosen);
    });
    timed("mh_reduce_sum auto", [&] { mh_reduce_sum(ctx, NULL, x, (size_t)N * N, sum); });
    timed("mh_context_set_stream", [&] { mh_context_set_stream(ctx, stream); });
    timed("empty kernel <<<(1,32), 128>>>", [&] { empty_kernel<<<dim3(1, 32), 128, 0, stream>>>(x, y, N, N); });
    timed("empty kernel, cudaLaunchKernelEx + programmatic", [&] {
        cudaLaunchKernelEx(&cfg, empty_kernel, (const float *)x, y, (size_t)N, (size_t)N);
    });
    cudaPointerAttributes pa;
    timed("cudaPointerGetAttributes", [&] { cudaPointerGetAttributes(&pa, x); });
    CUdeviceptr base;
    size_t size;
    timed("cuMemGetAddressRange", [&] { cuMemGetAddressRange(&base, &size, (CUdeviceptr)x); });
    int dev;
    timed("cudaGetDevice", [&] { cudaGetDevice(&dev); });
    timed("cudaSetDevice(0)", [&] { cudaSetDevice(0); });
    timed("cudaGetLastError", [&] { cudaGetLastError(); });
    cudaEvent_t ev;
    cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    timed("cudaEventRecord", [&] { cudaEventRecord(ev, stream); });
    timed("cudaStreamWaitEvent", [&] { cudaStreamWaitEvent(stream, ev, 0); });
    timed("cudaMemcpyAsync 100 B device to device", [&] {
        cudaMemcpyAsync(y, w, K * K * 4, cudaMemcpyDeviceToDevice, stream);
    });
    cudaStreamSynchronize(stream);
    printf("last error: %s; library: %s\n", cudaGetErrorString(cudaGetLastError()), mh_context_error(ctx));
    mh_context_destroy(ctx);
    return 0;
}

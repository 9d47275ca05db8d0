/* Which first calls of a process wait for the caller's stream. The stream is held by a host
 * function (released by the probe after the call returns, or by itself after 3 s); each call
 * is timed from the host, and so is mh_context_create (which loads the library's kernels). Run
 * once as is and once with CUDA_MODULE_LOADING=EAGER: a call that waits only under lazy loading
 * waits for its kernels' load, not for memhier's own code.
 *   cc -O2 -I include lab/tools/cold_call_wait.c -L build -lmemhier -lcudart -o cold_call_wait
 *   ./cold_call_wait [blocking] */
#include <memhier.h>

#include <cuda_runtime.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static atomic_int released;

static void CUDART_CB hold(void *p)
{
    (void)p;
    for (int ms = 0; ms < 3000 && !atomic_load(&released); ++ms) {
        struct timespec t = {0, 1000000};
        nanosleep(&t, NULL);
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

enum { N = 1 << 22 };

int main(int argc, char **argv)
{
    const int blocking = argc > 1 && !strcmp(argv[1], "blocking");
    size_t free0, free1, total;
    double t0 = now_s();
    cudaFree(0); /* the device's primary context, apart from memhier's loading */
    const double t_init = now_s() - t0;
    cudaMemGetInfo(&free0, &total);
    mh_context *ctx;
    t0 = now_s();
    if (mh_context_create(&ctx, 0) != MH_OK) return 1;
    const double t_create = now_s() - t0;
    cudaMemGetInfo(&free1, &total);
    printf("CUDA init %.3f s; mh_context_create %.3f s, %.1f MiB of device memory\n", t_init, t_create,
           (double)(free0 - free1) / (1 << 20));
    cudaStream_t s;
    if (blocking) cudaStreamCreate(&s);
    else cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    mh_context_set_stream(ctx, s);
    float *a, *b, *f;
    cudaMalloc((void **)&a, N * sizeof(float));
    cudaMalloc((void **)&b, N * sizeof(float));
    cudaMalloc((void **)&f, 8192 * sizeof(float));
    cudaMemset(a, 0, N * sizeof(float));
    cudaMemset(f, 0, 8192 * sizeof(float));
    cudaDeviceSynchronize();
    for (int i = 0; i < 18; ++i) {
        atomic_store(&released, 0);
        cudaLaunchHostFunc(s, hold, NULL);
        const char *what = "";
        mh_status st = MH_OK;
        t0 = now_s();
        switch (i) {
        case 0: what = "conv2d walk 1024^2 7x7"; st = mh_conv2d(ctx, "walk", a, 1024, 1024, f, 7, 7, MH_PAD_SAME, b); break;
        case 1: what = "conv2d walk again"; st = mh_conv2d(ctx, "walk", a, 1024, 1024, f, 7, 7, MH_PAD_SAME, b); break;
        case 2: what = "conv2d fft-tile 1024^2 11x11"; st = mh_conv2d(ctx, "fft-tile", a, 1024, 1024, f, 11, 11, MH_PAD_SAME, b); break;
        case 3: what = "conv1d regtile 1M k 31"; st = mh_conv1d(ctx, "regtile", a, 1 << 20, f, 31, MH_PAD_SAME, b); break;
        case 4: what = "transpose auto 1500x2049"; st = mh_transpose(ctx, NULL, a, 1500, 2049, b); break;
        case 5: what = "conv1d fft-os 1M k 301"; st = mh_conv1d(ctx, "fft-os", a, 1 << 20, f, 301, MH_PAD_SAME, b); break;
        case 6: what = "conv1d fft-os 1M k 301 again"; st = mh_conv1d(ctx, "fft-os", a, 1 << 20, f, 301, MH_PAD_SAME, b); break;
        case 7: what = "conv1d fft-os 1M+977 k 301"; st = mh_conv1d(ctx, "fft-os", a, (1 << 20) + 977, f, 301, MH_PAD_SAME, b); break;
        case 8: what = "conv1d auto 1M k 5001"; st = mh_conv1d(ctx, NULL, a, 1 << 20, f, 5001, MH_PAD_VALID, b); break;
        case 9: what = "conv1d auto 1M+5 k 5001"; st = mh_conv1d(ctx, NULL, a, (1 << 20) + 5, f, 5001, MH_PAD_VALID, b); break;
        case 10: what = "conv1d auto 2M k 7001"; st = mh_conv1d(ctx, NULL, a, 1 << 21, f, 7001, MH_PAD_VALID, b); break;
        case 11: what = "conv2d fft-os 700x900 40x40"; st = mh_conv2d(ctx, "fft-os", a, 700, 900, f, 40, 40, MH_PAD_SAME, b); break;
        case 12: what = "conv2d auto 700x900 60x61"; st = mh_conv2d(ctx, NULL, a, 700, 900, f, 60, 61, MH_PAD_SAME, b); break;
        case 13: what = "conv1d cufft 1M k 301"; st = mh_conv1d(ctx, "cufft", a, 1 << 20, f, 301, MH_PAD_SAME, b); break;
        case 14: what = "matmul cublas 512x1024x512"; st = mh_matmul(ctx, "cublas", a, a, b, 512, 1024, 512); break;
        case 15: what = "matmul cublas again"; st = mh_matmul(ctx, "cublas", a, a, b, 512, 1024, 512); break;
        case 16: what = "matmul cublas 2048x64x2048"; st = mh_matmul(ctx, "cublas", a, a, b, 2048, 64, 2048); break;
        case 17: what = "conv2d cudnn 1024^2 5x5"; st = mh_conv2d(ctx, "cudnn", a, 1024, 1024, f, 5, 5, MH_PAD_SAME, b); break;
        }
        const double dt = now_s() - t0;
        atomic_store(&released, 1);
        cudaStreamSynchronize(s);
        printf("%-34s %s %8.3f s%s\n", what, st == MH_OK ? "ok " : "ERR", dt, dt > 0.5 ? "  WAITED" : "");
        if (st != MH_OK) printf("  %s\n", mh_context_error(ctx));
    }
    mh_context_destroy(ctx);
    return 0;
}

/* Probe: how long does each cuDNN forward algorithm take on one 1-channel shape, how much
 * workspace does it ask for, and how long do cudnnFind (which allocates what each algorithm
 * asks) and cudnnFindEx (under a workspace cap) take? Each step prints before it starts, so a
 * run cut by a timeout shows which step stalled.
 * build: cc -O2 -o cudnn_algo_times cudnn_algo_times.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lcudnn -lcudart
 * usage: cudnn_algo_times ROWS COLS K PAD CAP_MB [skip-find] */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OK(x) do { cudnnStatus_t s_ = (x); if (s_ != CUDNN_STATUS_SUCCESS) printf("%s: %s\n", #x, cudnnGetErrorString(s_)); } while (0)

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void show(const char *what, cudnnConvolutionFwdAlgoPerf_t *perf, int found, double wall)
{
    printf("%s: %.1f ms wall, %d results\n", what, wall, found);
    for (int i = 0; i < found; ++i)
        printf("  algo %d status %d math %d %.4f ms workspace %zu MB\n", perf[i].algo, perf[i].status, perf[i].mathType,
               perf[i].time, perf[i].memory >> 20);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 6) return fprintf(stderr, "usage: %s ROWS COLS K PAD CAP_MB [skip-find]\n", argv[0]), 2;
    int rows = atoi(argv[1]), cols = atoi(argv[2]), k = atoi(argv[3]), pad = atoi(argv[4]);
    size_t cap = (size_t)atol(argv[5]) << 20;
    int skip_find = argc > 6 && !strcmp(argv[6], "skip-find");
    int oh = rows + 2 * pad - k + 1, ow = cols + 2 * pad - k + 1;
    float *dx, *dw, *dy;
    cudaMalloc((void **)&dx, sizeof(float) * (size_t)rows * cols);
    cudaMalloc((void **)&dw, sizeof(float) * k * k);
    cudaMalloc((void **)&dy, sizeof(float) * (size_t)oh * ow);
    cudaMemset(dx, 0, sizeof(float) * (size_t)rows * cols);
    cudaMemset(dw, 0, sizeof(float) * k * k);
    cudnnHandle_t h;
    OK(cudnnCreate(&h));
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnCreateTensorDescriptor(&xd), cudnnCreateTensorDescriptor(&yd), cudnnCreateFilterDescriptor(&wd);
    cudnnCreateConvolutionDescriptor(&cd);
    OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, rows, cols));
    OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, oh, ow));
    OK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, k, k));
    OK(cudnnSetConvolution2dDescriptor(cd, pad, pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    OK(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
    void *ws = NULL;
    if (cap && cudaMalloc(&ws, cap) != cudaSuccess) return printf("no %zu MB workspace\n", cap >> 20), 1;
    printf("cuDNN %zu, %d x %d, %d x %d filter, pad %d, cap %zu MB\n", cudnnGetVersion(), rows, cols, k, k, pad, cap >> 20);
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    OK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
    show("heuristics (v7)", perf, found, 0);
    for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
        size_t need = 0;
        cudnnStatus_t s = cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, a, &need);
        if (s != CUDNN_STATUS_SUCCESS) { printf("algo %d: workspace query %s\n", a, cudnnGetErrorString(s)); continue; }
        if (need > cap) { printf("algo %d: needs %zu MB, over the cap\n", a, need >> 20); continue; }
        printf("algo %d: %zu MB, running...", a, need >> 20);
        fflush(stdout);
        const float one = 1, zero = 0;
        for (int rep = 0; rep < 2; ++rep) {
            double t0 = now_ms();
            s = cudnnConvolutionForward(h, &one, xd, dx, wd, dw, cd, a, ws, need, &zero, yd, dy);
            cudaDeviceSynchronize();
            printf(" %s %.2f ms", s == CUDNN_STATUS_SUCCESS ? "ok" : cudnnGetErrorString(s), now_ms() - t0);
            fflush(stdout);
        }
        printf("\n");
    }
    double t0 = now_ms();
    OK(cudnnFindConvolutionForwardAlgorithmEx(h, xd, dx, wd, dw, cd, yd, dy, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
                                             perf, ws, cap));
    show("cudnnFindConvolutionForwardAlgorithmEx under the cap", perf, found, now_ms() - t0);
    if (skip_find) return 0;
    printf("cudnnFindConvolutionForwardAlgorithm (it allocates)...\n");
    fflush(stdout);
    t0 = now_ms();
    OK(cudnnFindConvolutionForwardAlgorithm(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
    show("cudnnFindConvolutionForwardAlgorithm", perf, found, now_ms() - t0);
    return 0;
}

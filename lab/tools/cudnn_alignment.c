/* Probe: does cuDNN's FP32 convolution (CUDNN_FMA_MATH) keep FP32 accuracy on pointers that are
 * not 16-byte aligned? Every forward algorithm on one shape, input, filter and output at
 * aligned addresses and at 1, 3 and 2 floats past one (as tests/test_conv2d.c does), against a
 * double reference; then cudnnFind's list for each placement.
 * build: cc -O2 -o cudnn_alignment cudnn_alignment.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lcudnn -lcudart -lm
 * usage: cudnn_alignment ROWS COLS K PAD */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define OK(x) do { cudnnStatus_t s_ = (x); if (s_ != CUDNN_STATUS_SUCCESS) { printf("%s: %s\n", #x, cudnnGetErrorString(s_)); } } while (0)

int main(int argc, char **argv)
{
    int rows = argc > 1 ? atoi(argv[1]) : 37, cols = argc > 2 ? atoi(argv[2]) : 517, k = argc > 3 ? atoi(argv[3]) : 5,
        pad = argc > 4 ? atoi(argv[4]) : 0;
    int oh = rows + 2 * pad - k + 1, ow = cols + 2 * pad - k + 1;
    float *x = malloc(sizeof(float) * rows * cols), *w = malloc(sizeof(float) * k * k), *y = malloc(sizeof(float) * oh * ow);
    double *ref = malloc(sizeof(double) * oh * ow);
    srand(1);
    for (int i = 0; i < rows * cols; ++i) x[i] = (float)rand() / RAND_MAX * 2 - 1;
    for (int i = 0; i < k * k; ++i) w[i] = (float)rand() / RAND_MAX * 2 - 1;
    for (int r = 0; r < oh; ++r)
        for (int c = 0; c < ow; ++c) {
            double s = 0;
            for (int i = 0; i < k; ++i)
                for (int j = 0; j < k; ++j) {
                    int rr = r + i - pad, cc = c + j - pad;
                    if (rr >= 0 && rr < rows && cc >= 0 && cc < cols) s += (double)x[rr * cols + cc] * w[i * k + j];
                }
            ref[r * ow + c] = s;
        }
    float *dx, *dw, *dy;
    cudaMalloc((void **)&dx, sizeof(float) * (rows * cols + 8));
    cudaMalloc((void **)&dw, sizeof(float) * (k * k + 8));
    cudaMalloc((void **)&dy, sizeof(float) * (oh * ow + 8));
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
    void *ws;
    cudaMalloc(&ws, 1 << 28);
    printf("cuDNN %zu, %d x %d, %d x %d filter, pad %d\n", cudnnGetVersion(), rows, cols, k, k, pad);
    for (int mis = 0; mis < 2; ++mis) {
        float *px = dx + (mis ? 1 : 0), *pw = dw + (mis ? 3 : 0), *py = dy + (mis ? 2 : 0);
        cudaMemcpy(px, x, sizeof(float) * rows * cols, cudaMemcpyHostToDevice);
        cudaMemcpy(pw, w, sizeof(float) * k * k, cudaMemcpyHostToDevice);
        for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
            size_t need = 0;
            if (cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, a, &need) != CUDNN_STATUS_SUCCESS) continue;
            cudaMemset(py, 0xff, sizeof(float) * oh * ow);
            const float one = 1, zero = 0;
            cudnnStatus_t s = cudnnConvolutionForward(h, &one, xd, px, wd, pw, cd, a, ws, need, &zero, yd, py);
            cudaDeviceSynchronize();
            if (s != CUDNN_STATUS_SUCCESS) { printf("  misaligned=%d algo %d: %s\n", mis, a, cudnnGetErrorString(s)); continue; }
            cudaMemcpy(y, py, sizeof(float) * oh * ow, cudaMemcpyDeviceToHost);
            double e2 = 0, r2 = 0;
            for (int i = 0; i < oh * ow; ++i) e2 += (y[i] - ref[i]) * (y[i] - ref[i]), r2 += ref[i] * ref[i];
            printf("  misaligned=%d algo %d: rel_l2 %.2e\n", mis, a, sqrt(e2 / r2));
        }
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int found = 0;
        OK(cudnnFindConvolutionForwardAlgorithmEx(h, xd, px, wd, pw, cd, yd, py, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
                                                 perf, ws, 1 << 28));
        for (int i = 0; i < found; ++i)
            printf("  find(misaligned=%d): algo %d status %d math %d %.4f ms\n", mis, perf[i].algo, perf[i].status,
                   perf[i].mathType, perf[i].time);
    }
    return 0;
}

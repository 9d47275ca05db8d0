/* What the runtime queries a memhier launch makes each call cost on the host (issue 64): the
 * opt-in shared memory limit (cudaGetDevice + cudaDeviceGetAttribute), cudaFuncSetAttribute,
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor, cudaPointerGetAttributes and the launch itself,
 * each timed alone over 10000 calls (the least of 5 rounds), on a kernel of conv2d/tiles' launch
 * shape (256 threads, 76 KB of dynamic shared memory). conv2d/tiles makes the first three each
 * call; walk none; the buffer checks the fourth once an array.
 *   nvcc -O2 -arch=sm_90 -o runtime_query_cost lab/tools/runtime_query_cost.cu && ./runtime_query_cost */
#include <cuda_runtime.h>

#include <stdio.h>
#include <time.h>

static __global__ void staged(float *out)
{
    extern __shared__ float smem[];
    smem[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    if (out && threadIdx.x == 0) out[blockIdx.x] = smem[blockDim.x - 1];
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + 1e-3 * t.tv_nsec;
}

enum { CALLS = 10000, ROUNDS = 5, THREADS = 256 };
static const size_t SMEM = 76032;
static float *buffer;
static cudaStream_t stream;

static void optin(void)
{
    int dev = 0, v = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
}

static void set_attribute(void)
{
    cudaFuncSetAttribute((const void *)staged, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM);
}

static void occupancy(void)
{
    int n = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void *)staged, THREADS, SMEM);
}

static void pointer(void)
{
    struct cudaPointerAttributes a;
    cudaPointerGetAttributes(&a, buffer);
}

static void launch(void) { staged<<<8, THREADS, SMEM, stream>>>(buffer); }

static double cost_us(void (*fn)(void))
{
    double best = 1e30;
    for (int r = 0; r < ROUNDS; ++r) {
        cudaStreamSynchronize(stream);
        const double t0 = now_us();
        for (int i = 0; i < CALLS; ++i) fn();
        const double t = (now_us() - t0) / CALLS;
        if (t < best) best = t;
    }
    cudaStreamSynchronize(stream);
    return best;
}

int main(void)
{
    if (cudaMalloc((void **)&buffer, 1 << 20) != cudaSuccess || cudaStreamCreate(&stream) != cudaSuccess) {
        fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    set_attribute();
    const struct {
        const char *name;
        void (*fn)(void);
    } queries[] = {{"opt-in limit (cudaGetDevice + cudaDeviceGetAttribute)", optin},
                   {"cudaFuncSetAttribute", set_attribute},
                   {"cudaOccupancyMaxActiveBlocksPerMultiprocessor", occupancy},
                   {"cudaPointerGetAttributes", pointer},
                   {"launch (8 blocks)", launch}};
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; ++i)
        printf("%-56s %6.3f us\n", queries[i].name, cost_us(queries[i].fn));
    printf("launch errors: %s\n", cudaGetErrorString(cudaGetLastError()));
    cudaFree(buffer);
    cudaStreamDestroy(stream);
    return 0;
}

/* Helpers for memhier's ctest programs. A GPU test calls test_require_gpu(): it exits 77
 * (ctest's skip) only when the machine has no CUDA device at all; a device that exists but
 * fails is a test failure. */
#ifndef MEMHIER_TESTING_H
#define MEMHIER_TESTING_H

#include "core/internal.h"
#include "core/random.h"
#include "core/verify.h"
#include "memhier.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int test_failures;

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);            \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fputc('\n', stderr);                                                                \
            ++test_failures;                                                                    \
        }                                                                                       \
    } while (0)

#define CHECK_CUDA(call)                                                                        \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static int test_finish(const char *name)
{
    if (test_failures) fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
    else printf("%s: all checks passed\n", name);
    return test_failures ? 1 : 0;
}

static void test_require_gpu(void)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    int has_node = access("/dev/nvidia0", F_OK) == 0 || access("/dev/nvidiactl", F_OK) == 0;
    if ((e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0)) && !has_node) {
        printf("no CUDA device on this machine: skipped\n");
        exit(77);
    }
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr, "CUDA device nodes exist but cudaGetDeviceCount says %s (%d devices)\n",
                cudaGetErrorString(e), count);
        exit(1);
    }
}

/* A seed from the environment (MEMHIER_TEST_SEED) or the clock: printed, so failures replay. */
static unsigned long long test_seed(void)
{
    const char *s = getenv("MEMHIER_TEST_SEED");
    unsigned long long seed = s ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
    printf("seed %llu (set MEMHIER_TEST_SEED to replay)\n", seed);
    return seed;
}

#endif

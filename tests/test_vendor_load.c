/* The vendor libraries are opened on first use, not at load time: a program that runs CPU rows
 * alone never maps cuBLAS, cuFFT, cuDNN or NPP; a library that cannot be opened refuses the
 * rows that need it by name while every other row still runs. MEMHIER_CUDNN_LIBRARY points
 * cuDNN at a file that does not exist, before anything opens it. */
#include "testing.h"
#include "adapters/vendor_lib.h"

static int mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, name) != NULL;
    if (f) fclose(f);
    return found;
}

static const char *const vendor_files[] = {"libcublas", "libcufft", "libcudnn", "libnpp"};

static void check_none_mapped(const char *when)
{
    for (size_t i = 0; i < sizeof vendor_files / sizeof vendor_files[0]; ++i)
        CHECK(!mapped(vendor_files[i]), "%s is mapped %s", vendor_files[i], when);
}

/* Every op through auto on the CPU backend maps no vendor library. */
static void test_cpu_rows(void)
{
    mh_context *cpu;
    CHECK(mh_context_create(&cpu, MH_CPU) == MH_OK, "cpu context");
    float in[64 * 64], filter[9], out[66 * 66], c[64 * 64];
    for (size_t i = 0; i < 64 * 64; ++i) in[i] = (float)(i % 7);
    for (size_t i = 0; i < 9; ++i) filter[i] = (float)i;
    CHECK(mh_conv1d(cpu, NULL, in, 4096, filter, 9, MH_PAD_SAME, out) == MH_OK, "conv1d: %s", mh_context_error(cpu));
    CHECK(mh_conv2d(cpu, NULL, in, 64, 64, filter, 3, 3, MH_PAD_FULL, out) == MH_OK, "conv2d: %s",
          mh_context_error(cpu));
    CHECK(mh_matmul(cpu, NULL, in, in, c, 64, 64, 64) == MH_OK, "matmul: %s", mh_context_error(cpu));
    CHECK(mh_transpose(cpu, NULL, in, 64, 64, c) == MH_OK, "transpose: %s", mh_context_error(cpu));
    check_none_mapped("after CPU calls");
    mh_context_destroy(cpu);
}

/* A library that is missing: the reason names it, the variable and the path; a second ask
 * gives the same reason without trying again. */
static void test_missing(void)
{
    char why[512] = "";
    CHECK(!mh_vendor_open(MH_LIB_CUDNN, why, sizeof why), "cuDNN opened from a file that does not exist");
    CHECK(strstr(why, "cuDNN") && strstr(why, "/nonexistent/libcudnn.so.9") && strstr(why, "MEMHIER_CUDNN_LIBRARY"),
          "reason: %s", why);
    char again[512] = "";
    CHECK(!mh_vendor_open(MH_LIB_CUDNN, again, sizeof again) && !strcmp(why, again), "second reason: %s", again);
    check_none_mapped("after a failed open");
}

/* On a GPU: the cuDNN rows refuse with the loader's reason, auto goes on to ours, and cuBLAS
 * (present) is opened by its first call and only then. */
static void test_gpu_rows(void)
{
    if (mh_cuda_device_count() == 0) return;
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, 0) == MH_OK, "gpu context");
    const size_t rows = 128, cols = 128;
    float *d_in, *d_filter, *d_out;
    CHECK_CUDA(cudaMalloc((void **)&d_in, rows * cols * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_filter, 9 * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_out, rows * cols * sizeof(float)));
    CHECK_CUDA(cudaMemset(d_in, 0, rows * cols * sizeof(float)));
    CHECK_CUDA(cudaMemset(d_filter, 0, 9 * sizeof(float)));
    /* a row run directly (as the bench's timed runs and the tests' configurations are) before
     * anything opened its library: conv1d/fft-os's first cuFFT call */
    CHECK(!mapped("libcufft"), "cuFFT mapped before its first call");
    const mh_row *os = mh_row_of(mh_variant_lookup(MH_OP_CONV1D, "fft-os"));
    mh_args a;
    CHECK(mh_conv1d_args_init(ctx, &a, d_in, rows * cols, d_filter, 9, MH_PAD_VALID, d_out) == MH_OK, "args");
    CHECK(os && mh_run_row(ctx, os, &a) == MH_OK, "fft-os run directly: %s", mh_context_error(ctx));
    CHECK(mh_context_synchronize(ctx) == MH_OK && mapped("libcufft"), "fft-os: %s", mh_context_error(ctx));
    mh_status s = mh_conv2d(ctx, "cudnn", d_in, rows, cols, d_filter, 3, 3, MH_PAD_SAME, d_out);
    CHECK(s == MH_ERR_UNSUPPORTED && strstr(mh_context_error(ctx), "cuDNN could not be loaded") &&
              strstr(mh_context_error(ctx), "conv2d/cudnn refuses"),
          "conv2d/cudnn without cuDNN: %s (%s)", mh_status_str(s), mh_context_error(ctx));
    CHECK(mh_conv2d(ctx, NULL, d_in, rows, cols, d_filter, 3, 3, MH_PAD_SAME, d_out) == MH_OK, "conv2d auto: %s",
          mh_context_error(ctx));
    CHECK(mh_conv1d(ctx, NULL, d_in, rows * cols, d_filter, 9, MH_PAD_SAME, d_out) == MH_OK, "conv1d auto: %s",
          mh_context_error(ctx));
    CHECK(!mapped("libcublas"), "cuBLAS mapped before its first call");
    CHECK(mh_matmul(ctx, "cublas", d_in, d_in, d_out, rows, cols, rows) == MH_OK, "matmul/cublas: %s",
          mh_context_error(ctx));
    CHECK(mh_context_synchronize(ctx) == MH_OK, "sync: %s", mh_context_error(ctx));
    CHECK(mapped("libcublas"), "cuBLAS not mapped after matmul/cublas ran");
    cudaFree(d_in), cudaFree(d_filter), cudaFree(d_out);
    mh_context_destroy(ctx);
}

int main(void)
{
    setenv("MEMHIER_CUDNN_LIBRARY", "/nonexistent/libcudnn.so.9", 1);
    test_cpu_rows();
    test_missing();
    test_gpu_rows();
    return test_finish("test_vendor_load");
}

/* The public API on a CUDA context: host pointers, short allocations, overlap and refusing
 * variants are all reported before anything runs, with nothing written; device facts and
 * ceilings are plausible. */
#include "testing.h"

#include <pthread.h>

static void expect(mh_context *ctx, mh_status got, mh_status want, const char *phrase, const char *what)
{
    CHECK(got == want, "%s: %s, wanted %s (%s)", what, mh_status_str(got), mh_status_str(want), mh_context_error(ctx));
    CHECK(strstr(mh_context_error(ctx), phrase) != NULL, "%s: message \"%s\" lacks \"%s\"", what, mh_context_error(ctx),
          phrase);
}

/* A short output refused from a thread that has made no CUDA call before this one. */
typedef struct fresh_thread_call {
    mh_context *ctx;
    const float *in, *mask;
    float *small;
    mh_status status;
    char detail[512];
} fresh_thread_call;

static void *call_from_fresh_thread(void *p)
{
    fresh_thread_call *c = (fresh_thread_call *)p;
    c->status = mh_conv1d(c->ctx, NULL, c->in, 4096, c->mask, 5000, MH_PAD_FULL, c->small);
    snprintf(c->detail, sizeof c->detail, "%s", mh_context_error(c->ctx));
    return NULL;
}

/* Buffers of the context's stream (mh_alloc_async, as the Python package stages NumPy arrays):
 * a call takes them as it takes cudaMalloc's (the buffer checks accept the pool's memory), gives
 * the same bits, and mh_free_async returns them behind the call's work; refusals as mh_alloc's. */
static void check_async_buffers(mh_context *ctx)
{
    enum { N = 3000, K = 31 };
    float x[N], m[K], want[N], got[N];
    for (int i = 0; i < N; ++i) x[i] = (float)((i * 37 % 101) - 50) * (i % 7 ? 1e-3f : 1e3f); /* dark beside bright */
    for (int j = 0; j < K; ++j) m[j] = (float)(j + 1) / (float)K;
    void *p = (void *)1;
    expect(ctx, mh_alloc_async(ctx, 0, &p), MH_ERR_INVALID_ARGUMENT, "bytes = 0", "alloc_async of 0 bytes");
    CHECK(p == NULL, "a refused alloc_async left *ptr = %p", p);
    expect(ctx, mh_alloc_async(ctx, (size_t)1 << 62, &p), MH_ERR_OUT_OF_MEMORY, "device", "alloc_async of 2^62 bytes");
    float *dx, *dm, *dy, *ax, *am, *ay;
    CHECK_CUDA(cudaMalloc((void **)&dx, sizeof x));
    CHECK_CUDA(cudaMalloc((void **)&dm, sizeof m));
    CHECK_CUDA(cudaMalloc((void **)&dy, sizeof want));
    CHECK(mh_alloc_async(ctx, sizeof x, (void **)&ax) == MH_OK && mh_alloc_async(ctx, sizeof m, (void **)&am) == MH_OK &&
              mh_alloc_async(ctx, sizeof got, (void **)&ay) == MH_OK,
          "alloc_async: %s", mh_context_error(ctx));
    CHECK(mh_upload(ctx, dx, x, sizeof x) == MH_OK && mh_upload(ctx, dm, m, sizeof m) == MH_OK &&
              mh_upload(ctx, ax, x, sizeof x) == MH_OK && mh_upload(ctx, am, m, sizeof m) == MH_OK,
          "uploads: %s", mh_context_error(ctx));
    CHECK(mh_conv1d(ctx, NULL, dx, N, dm, K, MH_PAD_SAME, dy) == MH_OK, "conv1d on cudaMalloc's buffers: %s",
          mh_context_error(ctx));
    CHECK(mh_conv1d(ctx, NULL, ax, N, am, K, MH_PAD_SAME, ay) == MH_OK, "conv1d on the stream's buffers: %s",
          mh_context_error(ctx));
    CHECK(mh_context_synchronize(ctx) == MH_OK && mh_download(ctx, want, dy, sizeof want) == MH_OK &&
              mh_download(ctx, got, ay, sizeof got) == MH_OK,
          "downloads: %s", mh_context_error(ctx));
    CHECK(!memcmp(want, got, sizeof got), "conv1d on the stream's buffers differs from cudaMalloc's");
    mh_free_async(ctx, ax), mh_free_async(ctx, am), mh_free_async(ctx, ay);
    CHECK(mh_context_synchronize(ctx) == MH_OK, "the stream after the frees: %s", mh_context_error(ctx));
    CHECK_CUDA(cudaFree(dx));
    CHECK_CUDA(cudaFree(dm));
    CHECK_CUDA(cudaFree(dy));
}

int main(void)
{
    /* a CPU call before anything loads CUDA's driver: its buffer checks find no driver and note the
     * loader's count of objects, so that the refusal of device memory below (the driver loaded
     * since) tests that a later load is seen */
    mh_context *early;
    float early_in[8] = {0}, early_mask[3] = {0}, early_out[10];
    CHECK(mh_context_create(&early, MH_CPU) == MH_OK, "a CPU context before the driver loads");
    CHECK(mh_conv1d(early, NULL, early_in, 8, early_mask, 3, MH_PAD_FULL, early_out) == MH_OK, "a CPU call: %s",
          mh_context_error(early));
    mh_context_destroy(early);
    test_require_gpu();
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, 0) == MH_OK, "context");
    const size_t n = 4096, k = 5000, out_n = n + k - 1;
    float *d_in, *d_mask, *d_out, *d_small, *pinned;
    float *h_in = calloc(n, sizeof(float)), *h_out = malloc(out_n * sizeof(float));
    CHECK_CUDA(cudaMalloc((void **)&d_in, n * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_mask, k * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_out, out_n * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_small, 10 * sizeof(float)));
    CHECK_CUDA(cudaMallocHost((void **)&pinned, out_n * sizeof(float)));
    for (size_t i = 0; i < out_n; ++i) h_out[i] = 99.0f;
    CHECK_CUDA(cudaMemcpy(d_out, h_out, out_n * sizeof(float), cudaMemcpyHostToDevice));

    expect(ctx, mh_conv1d(ctx, NULL, h_in, n, d_mask, k, MH_PAD_FULL, d_out), MH_ERR_INVALID_ARGUMENT,
           "is host memory", "malloc'd input");
    expect(ctx, mh_conv1d(ctx, NULL, d_in, n, d_mask, k, MH_PAD_FULL, pinned), MH_ERR_INVALID_ARGUMENT,
           "pinned host memory", "pinned output");
    expect(ctx, mh_conv1d(ctx, NULL, d_in, n, d_mask, k, MH_PAD_FULL, d_small), MH_ERR_INVALID_ARGUMENT,
           "holds 40 bytes", "short output allocation");
    fresh_thread_call fresh = {ctx, d_in, d_mask, d_small, MH_OK, ""};
    pthread_t th;
    pthread_create(&th, NULL, call_from_fresh_thread, &fresh);
    pthread_join(th, NULL);
    CHECK(fresh.status == MH_ERR_INVALID_ARGUMENT && strstr(fresh.detail, "holds 40 bytes"),
          "short output from a new thread: %s (%s)", mh_status_str(fresh.status), fresh.detail);
    expect(ctx, mh_conv1d(ctx, NULL, d_in, n, d_mask, k, MH_PAD_FULL, d_in + 1), MH_ERR_INVALID_ARGUMENT,
           "holds", "output running past the input's allocation");
    expect(ctx, mh_conv1d(ctx, "smem+const", d_in, n, d_mask, k, MH_PAD_FULL, d_out), MH_ERR_UNSUPPORTED,
           "constant-memory slot", "mask too long for constant memory");
    expect(ctx, mh_conv1d(ctx, "cpu-omp", d_in, n, d_mask, k, MH_PAD_FULL, d_out), MH_ERR_UNSUPPORTED,
           "runs on the CPU", "CPU variant on a CUDA context");
    expect(ctx, mh_conv1d(ctx, NULL, d_in, n, d_mask, k, MH_PAD_VALID, d_out), MH_ERR_INVALID_ARGUMENT,
           "k = 5000 is longer than n = 4096", "k > n, valid");
    CHECK(mh_context_synchronize(ctx) == MH_OK, "sync");
    CHECK_CUDA(cudaMemcpy(h_out, d_out, out_n * sizeof(float), cudaMemcpyDeviceToHost));
    size_t touched = 0;
    for (size_t i = 0; i < out_n; ++i) touched += h_out[i] != 99.0f;
    CHECK(touched == 0, "refused calls wrote %zu outputs", touched);

    /* a CPU context refuses device memory instead of dereferencing it */
    mh_context *cpu;
    CHECK(mh_context_create(&cpu, MH_CPU) == MH_OK, "cpu context");
    expect(cpu, mh_conv1d(cpu, NULL, d_in, n, d_mask, k, MH_PAD_FULL, h_out), MH_ERR_INVALID_ARGUMENT,
           "is memory of CUDA device", "device input to a CPU context");
    mh_context_destroy(cpu);

    /* auto never picks a refusing variant, even where the constant-memory rungs refuse */
    const mh_variant_info *chosen;
    CHECK(mh_conv1d_select(ctx, n, k, MH_PAD_FULL, &chosen) == MH_OK &&
              mh_conv1d_supports(ctx, chosen->name, n, k, MH_PAD_FULL) == MH_OK,
          "auto for k = 5000");

    /* auto's table (docs/conv1d.md "How auto chooses", from the n x k grid) */
    const struct {
        size_t n, k;
        const char *want;
    } rule[] = {{1000000, 2047, "conv1d/fft-fused"}, {16777216, 2047, "conv1d/fft-fused"},
                {67108864, 31, "conv1d/regtile"},    {67108864, 63, "conv1d/fft-fused"},
                {4194304, 31, "conv1d/regtile"},     {4194304, 63, "conv1d/fft-fused"},
                {1048576, 63, "conv1d/regtile"},     {1048576, 127, "conv1d/fft-fused"},
                {262144, 255, "conv1d/regtile"},     {262144, 511, "conv1d/fft-fused"},
                {4096, 255, "conv1d/regtile"},       {4096, 511, "conv1d/fft-fused"},
                {65536, 4095, "conv1d/fft-fused"},      {262144, 4095, "conv1d/fft-fused"},
                {16777216, 8191, "conv1d/fft-os"},   {16777216, 65535, "conv1d/fft-os"},
                {1000, 999, "conv1d/fft-fused"},     {1000, 99, "conv1d/regtile"}};
    for (size_t i = 0; i < sizeof rule / sizeof rule[0]; ++i)
        CHECK(mh_conv1d_select(ctx, rule[i].n, rule[i].k, MH_PAD_VALID, &chosen) == MH_OK &&
                  strcmp(chosen->name, rule[i].want) == 0,
              "auto for n=%zu k=%zu chose %s, the rule says %s", rule[i].n, rule[i].k, chosen->name, rule[i].want);

    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    CHECK(mh_context_set_stream(ctx, stream) == MH_OK, "set_stream: %s", mh_context_error(ctx));
    check_async_buffers(ctx);
    CHECK(mh_context_set_stream(ctx, NULL) == MH_OK, "back to the default stream");
    check_async_buffers(ctx);
    cudaStreamDestroy(stream);

    /* conv2d: a host image is refused; auto never takes the separable path (it would have to
     * read the filter back and wait for the stream); separable itself refuses filters that are
     * only nearly rank 1: a peaked 21 x 21 rank-1 filter plus 1e-5 noise, and a 15 x 15 one with
     * one tap of 1e4 and the others 1e-4 */
    float *d_img, *d_f, *d_o;
    CHECK_CUDA(cudaMalloc((void **)&d_img, 64 * 64 * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_o, 64 * 64 * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_f, 961 * sizeof(float)));
    expect(ctx, mh_conv2d(ctx, NULL, h_in, 64, 64, d_f, 9, 9, MH_PAD_SAME, d_img), MH_ERR_INVALID_ARGUMENT,
           "is host memory", "malloc'd image");
    const mh_op_table *t = mh_op_table_of(MH_OP_CONV2D);
    for (int k = 3; k <= 31; k += 2) {
        float taps[961];
        for (int i = 0; i < k * k; ++i) taps[i] = (float)((i / k + 1) * (i % k + 2)); /* an outer product */
        mh_args a;
        CHECK_CUDA(cudaMemcpy(d_f, taps, (size_t)k * k * sizeof(float), cudaMemcpyHostToDevice));
        mh_conv2d_args_init(ctx, &a, d_img, 64, 64, d_f, (size_t)k, (size_t)k, MH_PAD_SAME, d_img);
        CHECK(strcmp(t->auto_order(ctx, &a, NULL, 0)[0], "separable") != 0, "auto took separable for a %dx%d filter", k, k);
    }
    float near[441];
    for (int i = 0; i < 21; ++i)
        for (int j = 0; j < 21; ++j) {
            const float gi = expf(-(float)((i - 10) * (i - 10)) / 8.0f), gj = expf(-(float)((j - 10) * (j - 10)) / 8.0f);
            near[i * 21 + j] = gi * gj + 1e-5f * (float)(((i * 7 + j * 13) % 11) - 5) / 5.0f;
        }
    CHECK_CUDA(cudaMemcpy(d_f, near, sizeof near, cudaMemcpyHostToDevice));
    expect(ctx, mh_conv2d(ctx, "separable", d_img, 64, 64, d_f, 21, 21, MH_PAD_SAME, d_o), MH_ERR_UNSUPPORTED,
           "not rank 1 within FP32 accuracy", "separable on a nearly rank-1 21x21 filter");
    for (int i = 0; i < 225; ++i) near[i] = i == 112 ? 1e4f : 1e-4f;
    CHECK_CUDA(cudaMemcpy(d_f, near, 225 * sizeof(float), cudaMemcpyHostToDevice));
    expect(ctx, mh_conv2d(ctx, "separable", d_img, 64, 64, d_f, 15, 15, MH_PAD_SAME, d_o), MH_ERR_UNSUPPORTED,
           "not rank 1 within FP32 accuracy", "separable on a 15x15 filter with one huge tap");
    cudaFree(d_img), cudaFree(d_f), cudaFree(d_o);
    /* walk for 3x3 and 5x5; tc (on compute capability 9.0, where it runs) for K x K filters
     * at 13 and from 19 on images of 2048^2 outputs and more (15 and 17 tie), from 19 on images
     * from 512^2 to 2048^2; regtile for the others */
    /* matmul: tf32x3-wgmma (on compute capability 9.0) only where it holds 1.5x cuBLAS's largest
     * error and wins: k from 512 to 262144, m k n >= 4e8, m n >= 800000 */
    {
        mh_device_info d;
        CHECK(mh_device_info_get(ctx, &d) == MH_OK, "device info");
        const char *wg = d.cc_major == 9 && d.cc_minor == 0 ? "matmul/tf32x3-wgmma" : "matmul/cublas";
        const struct {
            size_t m, k, n;
            int tensor;
        } mm[] = {{4096, 4096, 4096, 1}, {896, 896, 896, 1},       {1000, 1000, 1000, 1}, {2000, 1000, 500, 1},
                  {1024, 262144, 1024, 1}, {768, 768, 768, 0},     {512, 512, 512, 0},    {512, 131072, 512, 0},
                  {256, 1048576, 256, 0},  {64, 131072, 64, 0},    {1024, 524288, 1024, 0}, {8192, 64, 8192, 0}};
        for (size_t i = 0; i < sizeof mm / sizeof mm[0]; ++i) {
            const char *want = mm[i].tensor ? wg : "matmul/cublas";
            CHECK(mh_matmul_select(ctx, mm[i].m, mm[i].k, mm[i].n, &chosen) == MH_OK && !strcmp(chosen->name, want),
                  "auto for %zu x %zu x %zu chose %s, the rule says %s", mm[i].m, mm[i].k, mm[i].n, chosen->name, want);
        }
    }
    /* fft-tile (2-D FFT tiles in shared memory) from 49 taps on any image, whatever the shape;
     * under 49 walk (3 x 3, 5 x 5) or regtile (tc asks for 121); 7 x 7 on walk from 1536^2
     * outputs */
    const struct {
        size_t n, krows, kcols;
        const char *pick;
    } rule_k[] = {{8192, 3, 3, "conv2d/walk"}, {8192, 5, 5, "conv2d/walk"}, {8192, 7, 7, "conv2d/walk"}, {4095, 7, 7, "conv2d/walk"}, {1536, 7, 7, "conv2d/walk"}, {1535, 7, 7, "conv2d/fft-tile"},
                  {8192, 11, 11, "conv2d/fft-tile"}, {8192, 9, 9, "conv2d/fft-tile"}, {8192, 13, 13, "conv2d/fft-tile"}, {8192, 15, 15, "conv2d/fft-tile"},
                  {8192, 17, 17, "conv2d/fft-tile"}, {8192, 19, 19, "conv2d/fft-tile"}, {4096, 21, 21, "conv2d/fft-tile"},
                  {2048, 23, 23, "conv2d/fft-tile"}, {2048, 25, 25, "conv2d/fft-tile"}, {4096, 27, 27, "conv2d/fft-tile"},
                  {4096, 29, 29, "conv2d/fft-tile"}, {8192, 31, 31, "conv2d/fft-tile"}, {2047, 31, 31, "conv2d/fft-tile"},
                  {1024, 25, 25, "conv2d/fft-tile"}, {512, 19, 19, "conv2d/fft-tile"}, {384, 19, 19, "conv2d/fft-tile"}, {768, 31, 31, "conv2d/fft-tile"},
                  {512, 17, 17, "conv2d/fft-tile"}, {448, 13, 19, "conv2d/fft-tile"}, {447, 13, 19, "conv2d/fft-tile"}, {1536, 15, 15, "conv2d/fft-tile"}, {1448, 13, 13, "conv2d/fft-tile"}, {1024, 13, 13, "conv2d/fft-tile"}, {1024, 7, 21, "conv2d/fft-tile"}, {640, 13, 13, "conv2d/fft-tile"}, {256, 21, 21, "conv2d/fft-tile"}, {255, 21, 21, "conv2d/fft-tile"}, {256, 19, 19, "conv2d/fft-tile"}, {2047, 13, 13, "conv2d/fft-tile"}, {2047, 11, 9, "conv2d/fft-tile"},
                  {511, 31, 31, "conv2d/fft-tile"}, {8192, 13, 31, "conv2d/fft-tile"}, {2048, 13, 23, "conv2d/fft-tile"},
                  {8192, 19, 23, "conv2d/fft-tile"}, {8192, 11, 31, "conv2d/fft-tile"}, {2048, 11, 23, "conv2d/fft-tile"},
                  {8192, 9, 31, "conv2d/fft-tile"}, {8192, 31, 7, "conv2d/fft-tile"}, {8192, 21, 7, "conv2d/fft-tile"},
                  {2048, 31, 6, "conv2d/fft-tile"}, {2048, 9, 9, "conv2d/fft-tile"}, {2048, 7, 7, "conv2d/walk"}, {1024, 7, 7, "conv2d/fft-tile"}, {4096, 9, 9, "conv2d/fft-tile"}, {8192, 19, 7, "conv2d/fft-tile"}, {2048, 17, 7, "conv2d/fft-tile"}, {2047, 17, 7, "conv2d/fft-tile"},
                  {384, 23, 7, "conv2d/fft-tile"}, {448, 31, 6, "conv2d/fft-tile"}, {320, 19, 7, "conv2d/fft-tile"},
                  {1024, 5, 9, "conv2d/regtile"}, {8192, 6, 8, "conv2d/regtile"}, {256, 1, 31, "conv2d/regtile"}};
    for (size_t r = 0; r < sizeof rule_k / sizeof rule_k[0]; ++r) {
        const mh_variant_info *pick = NULL;
        const size_t n = rule_k[r].n, kr = rule_k[r].krows, kc = rule_k[r].kcols;
        CHECK(mh_conv2d_select(ctx, n, n, kr, kc, MH_PAD_SAME, &pick) == MH_OK && !strcmp(pick->name, rule_k[r].pick),
              "auto for %zu^2 and a %zux%zu filter picked %s, not %s", n, kr, kc, pick ? pick->name : "nothing",
              rule_k[r].pick);
    }

    /* the per-element contract: auto skips the FFT rows (and cuDNN) on every shape, filters past
     * the direct rows' 31 a side going to basic; normwise again restores the rules' picks */
    CHECK(mh_context_set_precision(ctx, MH_PRECISION_PER_ELEMENT) == MH_OK, "per-element");
    for (size_t r = 0; r < sizeof rule_k / sizeof rule_k[0]; ++r) {
        const mh_variant_info *pick = NULL;
        const size_t n = rule_k[r].n, kr = rule_k[r].krows, kc = rule_k[r].kcols;
        CHECK(mh_conv2d_select(ctx, n, n, kr, kc, MH_PAD_SAME, &pick) == MH_OK &&
                  mh_variant_precision(pick) == MH_PRECISION_PER_ELEMENT,
              "per-element auto for %zu^2 and a %zux%zu filter picked %s", n, kr, kc, pick ? pick->name : "nothing");
    }
    CHECK(mh_conv2d_select(ctx, 1024, 1024, 63, 63, MH_PAD_SAME, &chosen) == MH_OK &&
              !strcmp(chosen->name, "conv2d/basic"), "per-element 63 x 63: %s", chosen->name);
    for (size_t i = 0; i < sizeof rule / sizeof rule[0]; ++i)
        CHECK(mh_conv1d_select(ctx, rule[i].n, rule[i].k, MH_PAD_VALID, &chosen) == MH_OK &&
                  mh_variant_precision(chosen) == MH_PRECISION_PER_ELEMENT,
              "per-element auto for n=%zu k=%zu chose %s", rule[i].n, rule[i].k, chosen->name);
    CHECK(mh_context_set_precision(ctx, MH_PRECISION_NORMWISE) == MH_OK &&
              mh_conv2d_select(ctx, 8192, 8192, 11, 11, MH_PAD_SAME, &chosen) == MH_OK &&
              !strcmp(chosen->name, "conv2d/fft-tile"), "normwise again: %s", chosen->name);

    mh_device_info info;
    mh_ceilings c;
    CHECK(mh_device_info_get(ctx, &info) == MH_OK && info.sm_count > 0 && info.name[0], "device info");
    CHECK(mh_measure_ceilings(ctx, &c) == MH_OK && c.copy_gbps > 10 && c.fma_gflops > 100,
          "ceilings %.0f GB/s %.0f GFLOP/s: %s", c.copy_gbps, c.fma_gflops, mh_context_error(ctx));
    printf("%s: copy %.0f GB/s, FMA %.0f GFLOP/s\n", info.name, c.copy_gbps, c.fma_gflops);

    cudaFree(d_in), cudaFree(d_mask), cudaFree(d_out), cudaFree(d_small), cudaFreeHost(pinned);
    free(h_in), free(h_out);
    mh_context_destroy(ctx);
    return test_finish("test_api_gpu");
}

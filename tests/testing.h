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
#include <math.h>
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

/* s is a refusal (MH_ERR_INVALID_ARGUMENT) whose message names `says`. */
#define CHECK_REFUSED(ctx, s, says)                                                             \
    do {                                                                                        \
        const mh_status refused_ = (s);                                                         \
        const char *says_ = (says);                                                             \
        CHECK(refused_ == MH_ERR_INVALID_ARGUMENT && strstr(mh_context_error(ctx), says_) != NULL, \
              "wanted a refusal naming '%s': %s: %s", says_, mh_status_str(refused_),           \
              mh_context_error(ctx));                                                           \
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

/* "Wide" data: x in [-1, 1) -> sign(x) 2^(40 |x| - 20), magnitudes spread evenly over 40
 * binades (2^-20 .. 2^20), where a split into TF32 parts must still hold FP32 accuracy. */
static void test_widen(float *x, size_t count)
{
    for (size_t i = 0; i < count; ++i) x[i] = copysignf(exp2f(40.0f * fabsf(x[i]) - 20.0f), x[i]);
}

/* A seed from the environment (MEMHIER_TEST_SEED) or the clock: printed, so failures replay. */
static unsigned long long test_seed(void)
{
    const char *s = getenv("MEMHIER_TEST_SEED");
    unsigned long long seed = s ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
    printf("seed %llu (set MEMHIER_TEST_SEED to replay)\n", seed);
    return seed;
}

/* ---- buffers on the host or the device, and a fenced output ---------------------------- */

static void *test_alloc(int gpu, size_t bytes)
{
    void *p = NULL;
    if (gpu) CHECK_CUDA(cudaMalloc(&p, bytes));
    else if (!(p = malloc(bytes))) exit(1);
    return p;
}

static void test_put(int gpu, void *dst, const void *src, size_t bytes)
{
    if (gpu) CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    else memcpy(dst, src, bytes);
}

static void test_get(int gpu, void *dst, const void *src, size_t bytes)
{
    if (gpu) CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    else memcpy(dst, src, bytes);
}

static void test_release(int gpu, void *p)
{
    if (gpu) cudaFree(p);
    else free(p);
}

/* A copy of n floats placed `offset` floats past an aligned address (misaligned on purpose). */
typedef struct test_in {
    int gpu;
    float *base, *data;
} test_in;

static test_in test_in_copy(int gpu, const float *src, size_t n, size_t offset)
{
    test_in t = {gpu, test_alloc(gpu, (n + offset) * sizeof(float)), NULL};
    t.data = t.base + offset;
    test_put(gpu, t.data, src, n * sizeof(float));
    return t;
}

/* 1 when the n floats at t.data still equal src: a variant must not write its input (cuFFT
 * plans that read the caller's buffer in place included). */
static int test_in_unchanged(const test_in *t, const float *src, size_t n)
{
    float *now = malloc(n * sizeof(float));
    if (!now) return 0;
    int same = 0;
    if (!t->gpu) same = memcmp(t->data, src, n * sizeof(float)) == 0;
    else if (cudaMemcpy(now, t->data, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess)
        same = memcmp(now, src, n * sizeof(float)) == 0;
    free(now);
    return same;
}

/* An output of n floats fenced by TEST_GUARD sentinel words on each side: poison() fills it
 * with NaN, fetch() copies it back and counts guard words that changed, so both unwritten
 * and out-of-bounds writes fail. host[TEST_GUARD + i] is element i. */
enum { TEST_GUARD = 64 };
#define TEST_SENTINEL 7777.0f

typedef struct test_out {
    int gpu;
    size_t n;
    float *base, *data, *host;
} test_out;

static test_out test_out_alloc(int gpu, size_t n, size_t offset)
{
    test_out o = {gpu, n, test_alloc(gpu, (n + 2 * TEST_GUARD + offset) * sizeof(float)), NULL, NULL};
    o.data = o.base + TEST_GUARD + offset;
    if (!(o.host = malloc((n + 2 * TEST_GUARD) * sizeof(float)))) exit(1);
    return o;
}

static void test_out_poison(const test_out *o)
{
    for (size_t i = 0; i < o->n + 2 * TEST_GUARD; ++i)
        o->host[i] = (i < TEST_GUARD || i >= TEST_GUARD + o->n) ? TEST_SENTINEL : NAN;
    test_put(o->gpu, o->data - TEST_GUARD, o->host, (o->n + 2 * TEST_GUARD) * sizeof(float));
}

static size_t test_out_fetch(const test_out *o)
{
    test_get(o->gpu, o->host, o->data - TEST_GUARD, (o->n + 2 * TEST_GUARD) * sizeof(float));
    size_t broken = 0;
    for (size_t i = 0; i < TEST_GUARD; ++i)
        broken += (o->host[i] != TEST_SENTINEL) + (o->host[TEST_GUARD + o->n + i] != TEST_SENTINEL);
    return broken;
}

/* Outputs that are no longer NaN (after a refused call: none may be). */
static size_t test_out_written(const test_out *o)
{
    size_t written = 0;
    for (size_t i = 0; i < o->n; ++i) written += !isnan(o->host[TEST_GUARD + i]);
    return written;
}

static void test_out_free(test_out *o)
{
    test_release(o->gpu, o->base);
    free(o->host);
}

/* The MEMHIER_TEST_MAX_N environment variable keeps only small cases (compute-sanitizer). */
static size_t test_max_n(void)
{
    const char *e = getenv("MEMHIER_TEST_MAX_N");
    return e ? (size_t)strtoull(e, NULL, 10) : (size_t)-1;
}

/* MEMHIER_TEST_SHARD="i/n" (0 <= i < n): a long test run as n processes side by side (the test
 * command registers such shards with ctest); part `index` of its work is this shard's when
 * index % n == i. Without the variable every part is. */
static void test_shard_env(long *shard, long *shards)
{
    static long i = -1, n = 1;
    if (i < 0) {
        const char *e = getenv("MEMHIER_TEST_SHARD");
        if (!e || sscanf(e, "%ld/%ld", &i, &n) != 2 || n < 1 || i < 0 || i >= n) i = 0, n = 1;
    }
    *shard = i, *shards = n;
}

static int test_in_shard(size_t index)
{
    long shard, shards;
    test_shard_env(&shard, &shards);
    return (long)(index % (size_t)shards) == shard;
}

/* Parts of unequal work dealt to the shards: heaviest first, each to the shard with the least work
 * so far (the same deal in every shard's process); part i is this shard's when
 * test_in_shard(shard_of[i]). A deal by index alone put a test's five largest parts in one shard. */
static void test_deal_shards(const double *work, size_t n, size_t *shard_of)
{
    long shard, shards;
    test_shard_env(&shard, &shards);
    double load[64] = {0};
    const size_t m = shards < 64 ? (size_t)shards : 64;
    char *dealt = calloc(n ? n : 1, 1);
    for (size_t k = 0; k < n; ++k) {
        size_t heaviest = n, least = 0;
        for (size_t i = 0; i < n; ++i)
            if (!dealt[i] && (heaviest == n || work[i] > work[heaviest])) heaviest = i;
        for (size_t s = 1; s < m; ++s)
            if (load[s] < load[least]) least = s;
        dealt[heaviest] = 1, shard_of[heaviest] = least, load[least] += work[heaviest];
    }
    free(dealt);
}

/* MEMHIER_TEST_TRACE=1 names each run before it starts, so that a run that takes the process
 * down (under compute-sanitizer, say) is the last one named. */
static void test_trace(const char *name, int config, const char *what)
{
    static int on = -1;
    if (on < 0) on = getenv("MEMHIER_TEST_TRACE") != NULL;
    if (!on) return;
    printf("run %s config %d %s\n", name, config, what);
    fflush(stdout);
}

/* How many tuning configurations of a row a test covers: all on the GPU, the default on the CPU. */
static int test_configs(const mh_row *row, int gpu)
{
    int n = 1;
    if (gpu && row->configs)
        for (n = 0; row->configs[n]; ++n) {}
    return n;
}

/* Whether the comma-separated list in environment variable `var` names the row `name`. */
static int test_name_listed(const char *name, const char *var)
{
    const char *e = getenv(var);
    if (!e) return 0;
    const size_t len = strlen(name);
    for (const char *p = e; (p = strstr(p, name)) != NULL; p += len)
        if ((p == e || p[-1] == ',') && (p[len] == ',' || p[len] == 0)) return 1;
    return 0;
}

/* MEMHIER_TEST_ROWS="conv1d/fft-fused,conv1d/fft-os" keeps only the rows named (a sanitizer run
 * on the rows that changed); MEMHIER_TEST_SKIP_ROWS leaves the rows named out (a sanitizer run
 * that takes a slow row at smaller sizes apart). */
static int test_name_kept(const char *name)
{
    if (test_name_listed(name, "MEMHIER_TEST_SKIP_ROWS")) return 0;
    return !getenv("MEMHIER_TEST_ROWS") || test_name_listed(name, "MEMHIER_TEST_ROWS");
}

static int test_row_named(const mh_row *row) { return test_name_kept(row->info.name); }

static int test_row_fits(const mh_row *row, int gpu)
{
    if (!test_row_named(row)) return 0;
    /* MEMHIER_TEST_OURS_ONLY (set by scripts/gpu-check.sh for compute-sanitizer) leaves the
     * vendor rows out: their kernels are not ours to check, and cuDNN's search under racecheck
     * grew the process past 128 GB of host memory at 64 x 64 with a 31 x 31 filter. */
    if (row->info.backend == MH_BACKEND_VENDOR && getenv("MEMHIER_TEST_OURS_ONLY")) return 0;
    return gpu ? row->info.backend != MH_BACKEND_CPU : row->info.backend == MH_BACKEND_CPU;
}

/* The start of a ladder test, `test_<op> cpu|gpu`: *gpu says which rows it covers (a GPU run
 * skips only where no CUDA device exists); returns the context they run on. */
static mh_context *test_open(int argc, char **argv, int *gpu)
{
    *gpu = argc > 1 && strcmp(argv[1], "gpu") == 0;
    if (*gpu) test_require_gpu();
    mh_context *ctx = NULL;
    CHECK(mh_context_create(&ctx, *gpu ? 0 : MH_CPU) == MH_OK, "context");
    if (!ctx) exit(test_finish(argv[0]));
    return ctx;
}

/* A refused call: MH_ERR_UNSUPPORTED, a message holding `why` (when given), and nothing
 * written, guards included. */
static void test_check_refusal(mh_context *ctx, const char *name, mh_status s, const char *why, const test_out *out,
                               const char *what)
{
    CHECK(s == MH_ERR_UNSUPPORTED && (!why || strstr(mh_context_error(ctx), why)), "%s on %s: status %s, message %s",
          name, what, mh_status_str(s), mh_context_error(ctx));
    mh_context_synchronize(ctx);
    size_t broken = test_out_fetch(out), written = test_out_written(out);
    CHECK(broken == 0 && written == 0, "%s on %s wrote %zu outputs and %zu guards while refusing", name, what, written,
          broken);
}

#endif

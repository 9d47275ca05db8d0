/* The coalescing driver of memhier bench: seed 004's offset_add for offsets 0..32 and
 * strided_add for strides 1..64, 2^25 threads each (128 MB per buffer at stride 1, far past
 * the 50 MB L2; 8.6 GB at stride 64). GB/s counts the useful bytes, 4 read and 4 written per
 * thread. The inputs come from the device-side hash fill, so the check recomputes any
 * input on the host: the first and last 65536 threads' outputs must equal in + 100 exactly. */
#include "bench.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS_LOG2 = 25, CHECKED = 65536, MAX_OFFSET = 32, MAX_STRIDE = 64, SEED = 9 };

typedef struct coalescing_case {
    mh_access_pattern pattern;
    int param;
    size_t n, span;
    float *d_in, *d_out, *got;
} coalescing_case;

static void describe(bench_workload *w, mh_access_pattern pattern, int param, size_t n)
{
    coalescing_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    c->pattern = pattern, c->param = param, c->n = n, c->span = mh_coalescing_span(n, pattern, param);
    snprintf(w->desc, sizeof w->desc, "pattern=%s %s=%d", pattern == MH_PATTERN_OFFSET ? "offset" : "stride",
             pattern == MH_PATTERN_OFFSET ? "offset" : "stride", param);
    w->flops = (double)n;
    w->bytes = 8.0 * (double)n;
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    const size_t n = bench_size_or(o, BENCH_N, (size_t)1 << THREADS_LOG2);
    size_t count = 0;
    if (!gpu) return 0; /* GPU access patterns: nothing to measure on the CPU backend */
    for (int off = 0; off <= MAX_OFFSET && count < max; ++off) describe(&w[count++], MH_PATTERN_OFFSET, off, n);
    for (int s = 1; s <= MAX_STRIDE && count < max; ++s) describe(&w[count++], MH_PATTERN_STRIDE, s, n);
    return count;
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    coalescing_case *c = w->state;
    if (!c || !gpu) return snprintf(err, len, "coalescing needs a GPU"), 0;
    if (!(c->got = malloc(2 * CHECKED * sizeof(float)))) return snprintf(err, len, "out of host memory"), 0;
    if (!bench_device_copy(&c->d_in, NULL, c->span, err, len) || !bench_device_copy(&c->d_out, NULL, c->span, err, len))
        return 0;
    if (mh_cuda_fill_uniform(c->d_in, c->span, SEED, 1.0f, NULL) != 0 || cudaDeviceSynchronize() != cudaSuccess)
        return snprintf(err, len, "filling the input failed"), 0;
    return 1;
}

static void teardown(bench_workload *w)
{
    coalescing_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in), cudaFree(c->d_out), free(c->got), free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    const coalescing_case *c = w->state;
    (void)ctx; /* GPU rows only: the harness gives them the GPU context */
    memset(a, 0, sizeof *a);
    a->op = MH_OP_COALESCING;
    a->coalescing = (mh_coalescing_args){c->d_in, c->d_out, c->n, c->pattern, c->param};
}

static void poison(bench_workload *w, mh_context *ctx)
{
    coalescing_case *c = w->state;
    bench_poison(ctx, NULL, c->d_out, c->span);
}

/* The element thread t writes. */
static size_t index_of(const coalescing_case *c, size_t t)
{
    return c->pattern == MH_PATTERN_OFFSET ? t + (size_t)c->param : t * (size_t)c->param;
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    coalescing_case *c = w->state;
    memset(st, 0, sizeof *st);
    const size_t checked = c->n < CHECKED ? c->n : CHECKED, pitch = c->pattern == MH_PATTERN_OFFSET ? 1 : (size_t)c->param;
    const size_t firsts[2] = {0, c->n - checked};
    for (int part = 0; part < 2; ++part) /* threads [first, first + checked): a strided 2-D copy */
        if (cudaMemcpy2D(c->got + part * CHECKED, sizeof(float), c->d_out + index_of(c, firsts[part]),
                         pitch * sizeof(float), sizeof(float), checked, cudaMemcpyDeviceToHost) != cudaSuccess)
            return snprintf(why, len, "copying the output back failed"), 0;
    for (int part = 0; part < 2; ++part)
        for (size_t k = 0; k < checked; ++k) {
            const size_t i = index_of(c, firsts[part] + k);
            const float want = mh_hash_uniform(SEED, i) + 100.0f, got = c->got[part * CHECKED + k];
            if (memcmp(&want, &got, sizeof want) != 0)
                return snprintf(why, len, "out[%zu] = %.9g, expected %.9g", i, got, want), 0;
        }
    return 1;
}

const bench_driver bench_coalescing_driver = {
    MH_OP_COALESCING, NULL, NULL, NULL, 0, plan, setup, teardown, make_args, poison, check, 0, 0,
};

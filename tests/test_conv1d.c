/* Every conv1d variant of one backend against the double reference:
 *   test_conv1d cpu   the CPU rows (always runs)
 *   test_conv1d gpu   the CUDA and vendor rows, and every tuning configuration (exit 77 only
 *                     when the machine has no CUDA device)
 * Sizes 1, primes, non-multiples of every tile, k from 1 past the shared-memory segment and
 * up to n, all three paddings, misaligned pointers; outputs poisoned with NaN and fenced by
 * guard words so that unwritten and out-of-bounds elements both fail. A variant that
 * refuses a problem must say why, return MH_ERR_UNSUPPORTED and write nothing, and `auto`
 * must never choose it. */
#include "testing.h"

#include <math.h>

enum { GUARD = 64 };
static const float SENTINEL = 7777.0f;

typedef struct tcase {
    size_t n, k;
    int misaligned; /* in, mask and out start 1, 3 and 2 floats past an aligned address */
} tcase;

static const tcase cases[] = {
    {1, 1, 0},        {2, 1, 0},        {2, 2, 1},       {3, 2, 0},       {7, 7, 0},        {31, 3, 1},
    {32, 32, 0},      {33, 5, 0},       {100, 99, 1},    {257, 17, 0},    {1000, 1, 0},     {1000, 1000, 0},
    {1021, 31, 1},    {4099, 255, 0},   {4099, 2047, 1}, {10007, 2048, 0}, {10007, 2049, 0}, {10007, 4096, 0},
    {10007, 4097, 1}, {20011, 5003, 0}, {65537, 64, 1},  {65537, 2049, 0}, {250007, 127, 0}, {250007, 2047, 1},
    {5, 20, 0},       {3000, 9001, 1}, /* k > n: same and full only */
};

typedef struct buffers {
    int gpu;
    float *in, *mask, *out;       /* where the call reads and writes (offsets applied) */
    float *in_base, *mask_base, *out_base;
    size_t out_n;
} buffers;

static void *alloc(int gpu, size_t bytes)
{
    void *p = NULL;
    if (gpu) CHECK_CUDA(cudaMalloc(&p, bytes));
    else if (!(p = malloc(bytes))) exit(1);
    return p;
}

static void put(int gpu, void *dst, const void *src, size_t bytes)
{
    if (gpu) CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    else memcpy(dst, src, bytes);
}

static void get(int gpu, void *dst, const void *src, size_t bytes)
{
    if (gpu) CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    else memcpy(dst, src, bytes);
}

static void release(int gpu, void *p)
{
    if (gpu) cudaFree(p);
    else free(p);
}

/* Output area: NaN, fenced by SENTINEL guards on both sides. */
static void poison(const buffers *b, float *host_out)
{
    size_t total = b->out_n + 2 * GUARD;
    for (size_t i = 0; i < total; ++i) host_out[i] = (i < GUARD || i >= GUARD + b->out_n) ? SENTINEL : NAN;
    put(b->gpu, b->out - GUARD, host_out, total * sizeof(float));
}

/* Copies back; returns the number of guard words that changed. */
static size_t fetch(const buffers *b, float *host_out)
{
    get(b->gpu, host_out, b->out - GUARD, (b->out_n + 2 * GUARD) * sizeof(float));
    size_t broken = 0;
    for (size_t i = 0; i < GUARD; ++i)
        broken += (host_out[i] != SENTINEL) + (host_out[GUARD + b->out_n + i] != SENTINEL);
    return broken;
}

typedef struct problem {
    const tcase *c;
    mh_pad pad;
    size_t lpad, out_n;
    float *in, *mask;
    double *ref, *mag;
    unsigned long long seed;
} problem;

static void make_problem(problem *p, const tcase *c, mh_pad pad, unsigned long long seed)
{
    p->c = c;
    p->pad = pad;
    p->seed = seed;
    p->lpad = pad == MH_PAD_VALID ? 0 : pad == MH_PAD_SAME ? (c->k - 1) / 2 : c->k - 1;
    p->out_n = mh_conv1d_out_len(c->n, c->k, pad);
    p->in = malloc(c->n * sizeof(float));
    p->mask = malloc(c->k * sizeof(float));
    p->ref = malloc(p->out_n * sizeof(double));
    p->mag = malloc(p->out_n * sizeof(double));
    mh_fill_uniform(p->in, c->n, seed, 1.0f);
    mh_fill_uniform(p->mask, c->k, seed + 1, 1.0f);
#pragma omp parallel for schedule(dynamic, 256)
    for (long long i = 0; i < (long long)p->out_n; ++i)
        mh_conv1d_reference_at(p->in, c->n, p->mask, c->k, p->lpad, (size_t)i, &p->ref[i], &p->mag[i]);
}

static void free_problem(problem *p)
{
    free(p->in), free(p->mask), free(p->ref), free(p->mag);
}

static void load_buffers(buffers *b, const problem *p, int gpu)
{
    const size_t in_off = p->c->misaligned ? 1 : 0, mask_off = p->c->misaligned ? 3 : 0;
    const size_t out_off = p->c->misaligned ? 2 : 0;
    b->gpu = gpu;
    b->out_n = p->out_n;
    b->in_base = alloc(gpu, (p->c->n + in_off) * sizeof(float));
    b->mask_base = alloc(gpu, (p->c->k + mask_off) * sizeof(float));
    b->out_base = alloc(gpu, (p->out_n + 2 * GUARD + out_off) * sizeof(float));
    b->in = b->in_base + in_off;
    b->mask = b->mask_base + mask_off;
    b->out = b->out_base + GUARD + out_off;
    put(gpu, b->in, p->in, p->c->n * sizeof(float));
    put(gpu, b->mask, p->mask, p->c->k * sizeof(float));
}

static void free_buffers(buffers *b)
{
    release(b->gpu, b->in_base), release(b->gpu, b->mask_base), release(b->gpu, b->out_base);
}

/* Runs one variant (config 0 through the public API, others through the row) and checks. */
static void check_variant(mh_context *ctx, const problem *p, const buffers *b, float *host_out,
                          const mh_row *row, int config)
{
    const char *name = row ? row->info.name : "auto";
    const char *cfg = row && row->configs ? row->configs[config] : "";
    poison(b, host_out);
    mh_args a;
    mh_conv1d_args_init(ctx, &a, b->in, p->c->n, b->mask, p->c->k, p->pad, b->out);
    a.config = config;
    char why[512] = "";
    if (row && !row->supports(ctx, &a, why, sizeof why)) {
        CHECK(why[0] != '\0', "%s refuses n=%zu k=%zu without a reason", name, p->c->n, p->c->k);
        if (config == 0) {
            mh_status s = mh_conv1d(ctx, name, b->in, p->c->n, b->mask, p->c->k, p->pad, b->out);
            CHECK(s == MH_ERR_UNSUPPORTED && strstr(mh_context_error(ctx), why), "%s: refusal status %s, message %s",
                  name, mh_status_str(s), mh_context_error(ctx));
            mh_context_synchronize(ctx);
            size_t broken = fetch(b, host_out), written = 0;
            for (size_t i = 0; i < p->out_n; ++i) written += !isnan(host_out[GUARD + i]);
            CHECK(broken == 0 && written == 0, "%s wrote %zu outputs and %zu guards while refusing", name, written, broken);
        }
        return;
    }
    mh_status s = config == 0 ? mh_conv1d(ctx, row ? name : NULL, b->in, p->c->n, b->mask, p->c->k, p->pad, b->out)
                              : mh_run_row(ctx, row, &a);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s%s%s n=%zu k=%zu pad=%s: %s: %s", name, *cfg ? " " : "", cfg, p->c->n, p->c->k,
          mh_pad_name(p->pad), mh_status_str(s), mh_context_error(ctx));
    if (s != MH_OK) return;
    size_t broken = fetch(b, host_out);
    mh_error_stats st;
    int ok = mh_compare(host_out + GUARD, p->ref, p->mag, p->out_n, mh_sum_rtol(p->c->k), &st);
    CHECK(broken == 0, "%s%s%s n=%zu k=%zu pad=%s wrote %zu guard words outside out", name, *cfg ? " " : "", cfg,
          p->c->n, p->c->k, mh_pad_name(p->pad), broken);
    CHECK(ok, "%s%s%s n=%zu k=%zu pad=%s misaligned=%d seed=%llu: out[%zu]=%.8g ref %.8g; %zu bad, %zu NaN, rel_l2 %.3g",
          name, *cfg ? " " : "", cfg, p->c->n, p->c->k, mh_pad_name(p->pad), p->c->misaligned, p->seed, st.first_bad,
          st.first_out, st.first_ref, st.bad, st.nonfinite, st.rel_l2);
}

static int row_fits(const mh_row *row, int gpu)
{
    return gpu ? row->info.backend != MH_BACKEND_CPU : row->info.backend == MH_BACKEND_CPU;
}

int main(int argc, char **argv)
{
    const int gpu = argc > 1 && strcmp(argv[1], "gpu") == 0;
    if (gpu) test_require_gpu();
    const unsigned long long seed = test_seed();
    /* MEMHIER_TEST_MAX_N keeps the small cases only (compute-sanitizer runs in gpu-check.sh) */
    const char *max_env = getenv("MEMHIER_TEST_MAX_N");
    const size_t max_n = max_env ? (size_t)strtoull(max_env, NULL, 10) : (size_t)-1;
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, gpu ? 0 : MH_CPU) == MH_OK, "context");
    size_t runs = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        if (cases[ci].n > max_n) continue;
        for (int pad = MH_PAD_VALID; pad <= MH_PAD_FULL; ++pad) {
            const tcase *c = &cases[ci];
            if (pad == MH_PAD_VALID && c->k > c->n) continue;
            problem p;
            make_problem(&p, c, (mh_pad)pad, seed + 1000 * ci + (unsigned long long)pad);
            buffers b;
            load_buffers(&b, &p, gpu);
            float *host_out = malloc((p.out_n + 2 * GUARD) * sizeof(float));
            for (size_t r = 0; r < mh_row_count(MH_OP_CONV1D); ++r) {
                const mh_row *row = mh_row_at(MH_OP_CONV1D, r);
                if (!row_fits(row, gpu)) continue;
                int configs = 1;
                if (gpu && row->configs)
                    for (configs = 0; row->configs[configs]; ++configs) {}
                for (int cfg = 0; cfg < configs; ++cfg, ++runs) check_variant(ctx, &p, &b, host_out, row, cfg);
            }
            check_variant(ctx, &p, &b, host_out, NULL, 0); /* auto */
            const mh_variant_info *chosen = NULL;
            CHECK(mh_conv1d_select(ctx, c->n, c->k, (mh_pad)pad, &chosen) == MH_OK &&
                      mh_conv1d_supports(ctx, chosen->name, c->n, c->k, (mh_pad)pad) == MH_OK,
                  "auto chose a variant that refuses n=%zu k=%zu", c->n, c->k);
            free(host_out);
            free_buffers(&b);
            free_problem(&p);
        }
        printf("n=%zu k=%zu done (%zu runs so far)\n", cases[ci].n, cases[ci].k, runs);
        fflush(stdout);
    }
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_conv1d gpu" : "test_conv1d cpu");
}

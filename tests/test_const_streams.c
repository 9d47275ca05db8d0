/* Constant memory is one array per process: two calls with different masks or filters,
 * queued on two streams at once (and from two host threads at once), must each use their
 * own. This is the race the constant-memory ring guards against; every conv1d and conv2d
 * variant that keeps its taps in constant memory is run this way. */
#include "testing.h"

#include <pthread.h>

enum { ITERS = 6, SIDES = 2, N1 = 262144, R2 = 600 };

typedef struct side {
    mh_op op;
    mh_context *ctx;
    cudaStream_t stream;
    size_t k; /* conv1d: mask length; conv2d: filter side */
    float *d_in, *d_taps, *d_out[ITERS];
    size_t out_n;
    double *ref, *mag;
} side;

static float *h_in;

static size_t in_count(mh_op op) { return op == MH_OP_CONV1D ? N1 : (size_t)R2 * R2; }
static size_t tap_count(const side *s) { return s->op == MH_OP_CONV1D ? s->k : s->k * s->k; }

static void make_side(side *s, mh_op op, size_t k, unsigned long long seed)
{
    s->op = op, s->k = k;
    float *taps = malloc(tap_count(s) * sizeof(float));
    mh_fill_uniform(taps, tap_count(s), seed, 1.0f);
    mh_args a;
    if (op == MH_OP_CONV1D) mh_conv1d_args_init(NULL, &a, h_in, N1, taps, k, MH_PAD_VALID, NULL);
    else mh_conv2d_args_init(NULL, &a, h_in, R2, R2, taps, k, k, MH_PAD_SAME, NULL);
    s->out_n = op == MH_OP_CONV1D ? a.conv1d.out_n : a.conv2d.out_rows * a.conv2d.out_cols;
    s->ref = malloc(s->out_n * sizeof(double));
    s->mag = malloc(s->out_n * sizeof(double));
#pragma omp parallel for schedule(static)
    for (long long o = 0; o < (long long)s->out_n; ++o) {
        if (op == MH_OP_CONV1D) mh_conv1d_reference_at(h_in, N1, taps, k, 0, (size_t)o, &s->ref[o], &s->mag[o]);
        else mh_conv2d_reference_at(&a.conv2d, h_in, taps, (size_t)o / R2, (size_t)o % R2, &s->ref[o], &s->mag[o]);
    }
    CHECK(mh_context_create(&s->ctx, 0) == MH_OK, "context");
    CHECK_CUDA(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    CHECK(mh_context_set_stream(s->ctx, s->stream) == MH_OK, "set_stream: %s", mh_context_error(s->ctx));
    s->d_in = test_in_copy(1, h_in, in_count(op), 0).data;
    s->d_taps = test_in_copy(1, taps, tap_count(s), 0).data;
    for (int it = 0; it < ITERS; ++it) s->d_out[it] = test_alloc(1, s->out_n * sizeof(float));
    free(taps);
}

static void launch(side *s, const char *variant, int it)
{
    CHECK_CUDA(cudaMemsetAsync(s->d_out[it], 0xff, s->out_n * sizeof(float), s->stream));
    mh_status st = s->op == MH_OP_CONV1D
                       ? mh_conv1d(s->ctx, variant, s->d_in, N1, s->d_taps, s->k, MH_PAD_VALID, s->d_out[it])
                       : mh_conv2d(s->ctx, variant, s->d_in, R2, R2, s->d_taps, s->k, s->k, MH_PAD_SAME, s->d_out[it]);
    CHECK(st == MH_OK, "%s: %s", variant, mh_context_error(s->ctx));
}

static void check_side(side *s, const char *variant, const char *how)
{
    CHECK(mh_context_synchronize(s->ctx) == MH_OK, "%s: %s", variant, mh_context_error(s->ctx));
    float *out = malloc(s->out_n * sizeof(float));
    for (int it = 0; it < ITERS; ++it) {
        test_get(1, out, s->d_out[it], s->out_n * sizeof(float));
        mh_error_stats st;
        int ok = mh_compare(out, s->ref, s->mag, s->out_n, mh_sum_rtol(tap_count(s)), &st);
        CHECK(ok, "%s (%s), %zu taps, iteration %d: rel_l2 %.3g, %zu wrong: another call's taps leaked in", variant,
              how, tap_count(s), it, st.rel_l2, st.bad);
    }
    free(out);
}

typedef struct thread_job {
    side *s;
    const char *variant;
} thread_job;

static void *thread_main(void *arg)
{
    thread_job *j = arg;
    for (int it = 0; it < ITERS; ++it) launch(j->s, j->variant, it);
    return NULL;
}

/* Every constant-memory variant of op: interleaved on two streams, then from two threads. */
static int race(side *sides, mh_op op)
{
    int tested = 0;
    for (size_t r = 0; r < mh_row_count(op); ++r) {
        const mh_row *row = mh_row_at(op, r);
        if (row->info.backend != MH_BACKEND_CUDA || !strstr(row->info.memory, "constant")) continue;
        ++tested;
        for (int it = 0; it < ITERS; ++it)
            for (int i = 0; i < SIDES; ++i) launch(&sides[i], row->info.name, it);
        for (int i = 0; i < SIDES; ++i) check_side(&sides[i], row->info.name, "interleaved streams");
        pthread_t t[SIDES];
        thread_job jobs[SIDES];
        for (int i = 0; i < SIDES; ++i) {
            jobs[i] = (thread_job){&sides[i], row->info.name};
            pthread_create(&t[i], NULL, thread_main, &jobs[i]);
        }
        for (int i = 0; i < SIDES; ++i) pthread_join(t[i], NULL);
        for (int i = 0; i < SIDES; ++i) check_side(&sides[i], row->info.name, "two host threads");
    }
    return tested;
}

int main(void)
{
    test_require_gpu();
    unsigned long long seed = test_seed();
    h_in = malloc(in_count(MH_OP_CONV1D) > in_count(MH_OP_CONV2D) ? N1 * sizeof(float) : (size_t)R2 * R2 * sizeof(float));
    mh_fill_uniform(h_in, N1 > R2 * R2 ? N1 : (size_t)R2 * R2, seed, 1.0f);
    side one[SIDES], two[SIDES];
    make_side(&one[0], MH_OP_CONV1D, 2047, seed + 1);
    make_side(&one[1], MH_OP_CONV1D, 1000, seed + 2);
    make_side(&two[0], MH_OP_CONV2D, 11, seed + 3);
    make_side(&two[1], MH_OP_CONV2D, 5, seed + 4);
    CHECK(race(one, MH_OP_CONV1D) >= 4, "too few conv1d constant-memory variants");
    CHECK(race(two, MH_OP_CONV2D) >= 4, "too few conv2d constant-memory variants");
    for (int i = 0; i < SIDES; ++i) {
        mh_context_destroy(one[i].ctx), mh_context_destroy(two[i].ctx);
        cudaStreamDestroy(one[i].stream), cudaStreamDestroy(two[i].stream);
    }
    return test_finish("test_const_streams");
}

/* Constant memory is one array per process: two calls with different masks, queued on two
 * streams at once (and from two host threads at once), must each use their own mask. This
 * is the race the constant-memory ring guards against. */
#include "testing.h"

#include <math.h>
#include <pthread.h>

enum { N = 262144, ITERS = 6, SIDES = 2 };
static const size_t k_of[SIDES] = {2047, 1000};

typedef struct side {
    mh_context *ctx;
    cudaStream_t stream;
    float *d_in, *d_mask, *d_out[ITERS];
    float *mask;
    double *ref, *mag;
    size_t k, out_n;
} side;

static float *h_in;

static void make_side(side *s, int i, unsigned long long seed)
{
    s->k = k_of[i];
    s->out_n = N - s->k + 1;
    s->mask = malloc(s->k * sizeof(float));
    mh_fill_uniform(s->mask, s->k, seed + 10 + (unsigned long long)i, 1.0f);
    s->ref = malloc(s->out_n * sizeof(double));
    s->mag = malloc(s->out_n * sizeof(double));
#pragma omp parallel for schedule(static)
    for (long long o = 0; o < (long long)s->out_n; ++o)
        mh_conv1d_reference_at(h_in, N, s->mask, s->k, 0, (size_t)o, &s->ref[o], &s->mag[o]);
    CHECK(mh_context_create(&s->ctx, 0) == MH_OK, "context");
    CHECK_CUDA(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    CHECK(mh_context_set_stream(s->ctx, s->stream) == MH_OK, "set_stream: %s", mh_context_error(s->ctx));
    CHECK_CUDA(cudaMalloc((void **)&s->d_in, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&s->d_mask, s->k * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(s->d_in, h_in, N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(s->d_mask, s->mask, s->k * sizeof(float), cudaMemcpyHostToDevice));
    for (int it = 0; it < ITERS; ++it) CHECK_CUDA(cudaMalloc((void **)&s->d_out[it], s->out_n * sizeof(float)));
}

static void check_side(side *s, const char *variant, const char *how)
{
    CHECK(mh_context_synchronize(s->ctx) == MH_OK, "%s: %s", variant, mh_context_error(s->ctx));
    float *out = malloc(s->out_n * sizeof(float));
    for (int it = 0; it < ITERS; ++it) {
        CHECK_CUDA(cudaMemcpy(out, s->d_out[it], s->out_n * sizeof(float), cudaMemcpyDeviceToHost));
        mh_error_stats st;
        int ok = mh_compare(out, s->ref, s->mag, s->out_n, mh_sum_rtol(s->k), &st);
        CHECK(ok, "%s (%s), k=%zu, iteration %d: rel_l2 %.3g, %zu wrong: another call's mask leaked in", variant, how,
              s->k, it, st.rel_l2, st.bad);
    }
    free(out);
}

static void launch(side *s, const char *variant, int it)
{
    CHECK_CUDA(cudaMemsetAsync(s->d_out[it], 0xff, s->out_n * sizeof(float), s->stream));
    mh_status st = mh_conv1d(s->ctx, variant, s->d_in, N, s->d_mask, s->k, MH_PAD_VALID, s->d_out[it]);
    CHECK(st == MH_OK, "%s: %s", variant, mh_context_error(s->ctx));
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

int main(void)
{
    test_require_gpu();
    unsigned long long seed = test_seed();
    h_in = malloc(N * sizeof(float));
    mh_fill_uniform(h_in, N, seed, 1.0f);
    side sides[SIDES];
    for (int i = 0; i < SIDES; ++i) make_side(&sides[i], i, seed);

    int tested = 0;
    for (size_t r = 0; r < mh_row_count(MH_OP_CONV1D); ++r) {
        const mh_row *row = mh_row_at(MH_OP_CONV1D, r);
        if (row->info.backend != MH_BACKEND_CUDA || !strstr(row->info.memory, "constant")) continue;
        ++tested;
        /* one host thread, the two streams interleaved */
        for (int it = 0; it < ITERS; ++it)
            for (int i = 0; i < SIDES; ++i) launch(&sides[i], row->info.name, it);
        for (int i = 0; i < SIDES; ++i) check_side(&sides[i], row->info.name, "interleaved streams");
        /* two host threads at once */
        pthread_t t[SIDES];
        thread_job jobs[SIDES];
        for (int i = 0; i < SIDES; ++i) {
            jobs[i] = (thread_job){&sides[i], row->info.name};
            pthread_create(&t[i], NULL, thread_main, &jobs[i]);
        }
        for (int i = 0; i < SIDES; ++i) pthread_join(t[i], NULL);
        for (int i = 0; i < SIDES; ++i) check_side(&sides[i], row->info.name, "two host threads");
    }
    CHECK(tested >= 4, "only %d constant-memory variants found", tested);
    for (int i = 0; i < SIDES; ++i) {
        mh_context_destroy(sides[i].ctx);
        cudaStreamDestroy(sides[i].stream);
    }
    return test_finish("test_conv1d_streams");
}

/* Contexts driven from several streams and threads with no synchronization between calls:
 * every GPU row of every op (the ones with workspaces, plans and vendor handles among them,
 * sepfilter's through mh_sepfilter_sum and its term buffer) must give, on each stream's data,
 * what it gives run alone. Four schedules: 2 and 8 streams
 * from one thread on one context; 4 threads sharing one context (and its one stream); 4
 * threads with a context each, 2 streams each. Then `auto` on every op must queue its work
 * without waiting for the caller's stream: the stream is held by a host function while the
 * call is made; first of all, so while each kernel is launched for the first time. */
#include "testing.h"

#include <pthread.h>
#include <stdatomic.h>

enum { MAX_STREAMS = 8, ROUNDS = 3, THREADS = 4 };

/* One op's problem on MAX_STREAMS data sets. out_bytes of each output are compared. */
typedef struct job {
    mh_op op;
    const char *what;
    size_t in_bytes, aux_bytes, out_bytes;
    void *in[MAX_STREAMS], *aux[MAX_STREAMS], *out[MAX_STREAMS];
    void *ref[MAX_STREAMS]; /* host copies of each data set's output, run alone */
    int exact;              /* integer counts: compared bit for bit */
    int k;                  /* conv2d: a k x k filter */
    const char *only;       /* the one row to run, or NULL: all */
} job;

static mh_status call(mh_context *ctx, const char *variant, const job *j, int s)
{
    const float *in = j->in[s], *aux = j->aux[s];
    float *out = j->out[s];
    switch (j->op) {
    case MH_OP_CONV1D: return mh_conv1d(ctx, variant, in, 1 << 20, aux, 255, MH_PAD_SAME, out);
    case MH_OP_CONV2D: return mh_conv2d(ctx, variant, in, 768, 1024, aux, j->k, j->k, MH_PAD_SAME, out);
    case MH_OP_TRANSPOSE: return mh_transpose(ctx, variant, in, 1500, 2049, out);
    case MH_OP_MATMUL: return mh_matmul(ctx, variant, in, aux, out, 512, 1024, 512);
    case MH_OP_REDUCE: return mh_reduce_sum(ctx, variant, in, 1 << 23, out);
    case MH_OP_HISTOGRAM:
        return mh_histogram(ctx, variant, (const int32_t *)in, 1 << 22, 300, (uint64_t *)out, (uint64_t *)out + 300);
    case MH_OP_SEPFILTER: { /* two terms: the second goes through the context's term buffer */
        static const float smooth[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f}, second[3] = {1.0f, -2.0f, 1.0f};
        mh_sepfilter_desc terms[2];
        for (int t = 0; t < 2; ++t)
            terms[t] = (mh_sepfilter_desc){1, 768, 1024, 1, MH_F32, MH_F32,
                                           {t ? smooth : second, t ? 5 : 3, 0, MH_MODE_REFLECT, 1, NULL, 0},
                                           {t ? second : smooth, t ? 3 : 5, 0, MH_MODE_REFLECT, 1, NULL, 0},
                                           MH_SEPFILTER_VERTICAL_FIRST, 0.0f, MH_SEPFILTER_SUMS_FMA};
        return mh_sepfilter_sum(ctx, variant, terms, 2, in, out);
    }
    default: return MH_ERR_INTERNAL;
    }
}

static void job_init(job *j, mh_op op, size_t in_floats, size_t aux_floats, size_t out_bytes, unsigned long long seed)
{
    memset(j, 0, sizeof *j);
    j->op = op, j->what = mh_op_name(op), j->exact = op == MH_OP_HISTOGRAM;
    j->k = op == MH_OP_CONV2D ? (int)lround(sqrt((double)aux_floats)) : 0;
    j->in_bytes = in_floats * sizeof(float), j->aux_bytes = aux_floats * sizeof(float), j->out_bytes = out_bytes;
    float *host = malloc(j->in_bytes > j->aux_bytes ? j->in_bytes : j->aux_bytes);
    for (int s = 0; s < MAX_STREAMS; ++s) {
        CHECK_CUDA(cudaMalloc(&j->in[s], j->in_bytes));
        CHECK_CUDA(cudaMalloc(&j->out[s], out_bytes));
        j->ref[s] = malloc(out_bytes);
        mh_fill_uniform(host, in_floats, seed + 10 * s, 1.0f);
        if (op == MH_OP_HISTOGRAM) /* values -20 .. 319 into 300 bins: some outside */
            for (size_t i = 0; i < in_floats; ++i) ((int32_t *)host)[i] = (int32_t)((host[i] + 1.0f) * 170.0f) - 20;
        if (op == MH_OP_REDUCE) /* positive: the atomic rows' rounding stays far below the tolerance */
            for (size_t i = 0; i < in_floats; ++i) host[i] += 1.5f;
        CHECK_CUDA(cudaMemcpy(j->in[s], host, j->in_bytes, cudaMemcpyHostToDevice));
        if (aux_floats) {
            CHECK_CUDA(cudaMalloc(&j->aux[s], j->aux_bytes));
            mh_fill_uniform(host, aux_floats, seed + 10 * s + 1, 1.0f);
            if (op == MH_OP_CONV2D) { /* rank 1, so that separable runs too */
                float u[MH_CONV2D_DIRECT_MAX_K], v[MH_CONV2D_DIRECT_MAX_K];
                memcpy(u, host, j->k * sizeof(float)), memcpy(v, host + j->k, j->k * sizeof(float));
                for (size_t i = 0; i < aux_floats; ++i) host[i] = u[i / j->k] * v[i % j->k];
            }
            CHECK_CUDA(cudaMemcpy(j->aux[s], host, j->aux_bytes, cudaMemcpyHostToDevice));
        }
    }
    free(host);
}

static void job_free(job *j)
{
    for (int s = 0; s < MAX_STREAMS; ++s) cudaFree(j->in[s]), cudaFree(j->aux[s]), cudaFree(j->out[s]), free(j->ref[s]);
}

/* Worst difference of stream s's output from its reference, relative to the reference's
 * largest magnitude (counts: any difference is 1). */
static double compare(const job *j, int s, void *host)
{
    CHECK_CUDA(cudaMemcpy(host, j->out[s], j->out_bytes, cudaMemcpyDeviceToHost));
    if (j->exact) return memcmp(host, j->ref[s], j->out_bytes) != 0;
    const float *got = host, *ref = j->ref[s];
    double worst = 0.0, scale = 0.0;
    for (size_t i = 0; i < j->out_bytes / sizeof(float); ++i) scale = fmax(scale, fabs(ref[i]));
    for (size_t i = 0; i < j->out_bytes / sizeof(float); ++i) {
        const double d = fabs((double)got[i] - ref[i]);
        worst = fmax(worst, isnan(d) ? INFINITY : d / (scale > 0 ? scale : 1.0));
    }
    return worst;
}

typedef struct schedule {
    mh_context *ctx;
    const char *variant;
    const job *j;
    cudaStream_t *streams; /* this worker's; NULL: the context's stream as it is */
    int nstreams, first;   /* its data sets: first .. first + nstreams - 1 */
    mh_status status;
} schedule;

/* ROUNDS times over the worker's data sets: set the stream (if it has its own), call, move
 * on; never wait. A context's stream is one setting for all its threads, so threads that
 * share a context leave it as it is. */
static void *run_schedule(void *p)
{
    schedule *w = (schedule *)p;
    for (int r = 0; r < ROUNDS && w->status == MH_OK; ++r)
        for (int i = 0; i < w->nstreams && w->status == MH_OK; ++i) {
            if (w->streams) w->status = mh_context_set_stream(w->ctx, w->streams[i]);
            if (w->status == MH_OK) w->status = call(w->ctx, w->variant, w->j, w->first + i);
        }
    return NULL;
}

static void poison_outputs(const job *j)
{
    for (int s = 0; s < MAX_STREAMS; ++s) CHECK_CUDA(cudaMemset(j->out[s], 0xff, j->out_bytes));
    CHECK_CUDA(cudaDeviceSynchronize());
}

/* THREADS workers over the data sets, on ctx (shared) or on a context each. */
static void run_threads(mh_context *shared, const char *name, const job *j, cudaStream_t *streams)
{
    pthread_t th[THREADS];
    schedule w[THREADS];
    mh_context *own[THREADS] = {NULL};
    for (int t = 0; t < THREADS; ++t) {
        if (!shared) CHECK(mh_context_create(&own[t], 0) == MH_OK, "context of thread %d", t);
        w[t] = (schedule){shared ? shared : own[t], name, j, shared ? NULL : streams + 2 * t, 2, 2 * t, MH_OK};
        pthread_create(&th[t], NULL, run_schedule, &w[t]);
    }
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
    CHECK_CUDA(cudaDeviceSynchronize());
    for (int t = 0; t < THREADS; ++t) {
        CHECK(w[t].status == MH_OK, "%s, thread %d: status %s", name, t, mh_status_str(w[t].status));
        mh_context_destroy(own[t]);
    }
}

/* One row under the three schedules; 0 when the row refuses the problem. */
static int check_row(mh_context *ctx, const mh_row *row, job *j, cudaStream_t *streams, void *host)
{
    const char *name = row->info.name;
    mh_context_set_stream(ctx, NULL);
    for (int s = 0; s < MAX_STREAMS; ++s) { /* each data set alone */
        mh_status st = call(ctx, name, j, s);
        if (st == MH_ERR_UNSUPPORTED && s == 0) return 0;
        CHECK(st == MH_OK, "%s alone on data set %d: %s", name, s, mh_context_error(ctx));
        if (st != MH_OK) return 0;
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(j->ref[s], j->out[s], j->out_bytes, cudaMemcpyDeviceToHost));
    }
    const double tol = j->exact ? 0.0 : 1e-4;
    for (int nstreams = 2; nstreams <= MAX_STREAMS; nstreams *= 4) { /* 2 and 8 from one thread */
        poison_outputs(j);
        schedule w = {ctx, name, j, streams, nstreams, 0, MH_OK};
        run_schedule(&w);
        CHECK(w.status == MH_OK, "%s on %d streams: %s", name, nstreams, mh_context_error(ctx));
        CHECK_CUDA(cudaDeviceSynchronize());
        for (int s = 0; s < nstreams; ++s) {
            const double d = compare(j, s, host);
            CHECK(d <= tol, "%s, %d streams from one thread: data set %d differs from its run alone by %.3g", name,
                  nstreams, s, d);
        }
    }
    for (int shared = 1; shared >= 0; --shared) {
        poison_outputs(j);
        mh_context_set_stream(ctx, streams[0]);
        run_threads(shared ? ctx : NULL, name, j, streams);
        mh_context_set_stream(ctx, NULL);
        for (int s = 0; s < MAX_STREAMS; ++s) {
            const double d = compare(j, s, host);
            CHECK(d <= tol, "%s, %d threads %s: data set %d differs from its run alone by %.3g", name, THREADS,
                  shared ? "sharing one context" : "with a context and 2 streams each", s, d);
        }
    }
    return 1;
}

/* ---- auto never waits for the caller's stream ----------------------------------------- */

static atomic_int released;

static void CUDART_CB hold_stream(void *p)
{
    (void)p;
    for (int ms = 0; ms < 5000 && !atomic_load(&released); ++ms) {
        struct timespec t = {0, 1000000};
        nanosleep(&t, NULL);
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* conv2d auto on shapes where it once read the filter back and on a filter past 31 a side
 * (fft-3pass), planned conv2d calls (lowrank by name too),
 * a plan made from host memory while the stream is held, and every other op's auto. */
static void check_auto_never_waits(mh_context *ctx, job *jobs, size_t njobs, cudaStream_t stream)
{
    float *img, *f, *o;
    CHECK_CUDA(cudaMalloc((void **)&img, 1999 * 3001 * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&o, 1999 * 3001 * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&f, 63 * 40 * sizeof(float)));
    CHECK_CUDA(cudaMemset(img, 0, 1999 * 3001 * sizeof(float)));
    CHECK_CUDA(cudaMemset(f, 0, 63 * 40 * sizeof(float))); /* all zeros: rank 1 */
    const size_t shapes[][4] = {{700, 700, 9, 9},     {1999, 3001, 5, 29}, {1999, 3001, 29, 5},
                                {2048, 2048, 31, 31}, {1999, 3001, 63, 40}};
    /* plans: the zero filter (rank 1, on the device) and a 21 x 21 rank-2 filter from the host */
    float host[441];
    for (int i = 0; i < 441; ++i) host[i] = (float)((i / 21 + 1) * (i % 21 + 1) + 7);
    mh_conv2d_plan *plans[2] = {NULL, NULL};
    CHECK(mh_conv2d_plan_create(ctx, f, 31, 31, &plans[0]) == MH_OK &&
              mh_conv2d_plan_create(ctx, host, 21, 21, &plans[1]) == MH_OK && mh_conv2d_plan_rank(plans[1]) == 2,
          "plans: %s", mh_context_error(ctx));
    CHECK(mh_context_set_stream(ctx, stream) == MH_OK, "set_stream");
    for (int pass = 0; pass < 2; ++pass) { /* the first warms plans and workspaces */
        if (pass) {
            atomic_store(&released, 0);
            CHECK_CUDA(cudaLaunchHostFunc(stream, hold_stream, NULL));
        }
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
            const double t0 = now_s();
            mh_status st = mh_conv2d(ctx, NULL, img, shapes[i][0], shapes[i][1], f, shapes[i][2], shapes[i][3],
                                     MH_PAD_SAME, o);
            const double dt = now_s() - t0;
            CHECK(st == MH_OK, "conv2d auto: %s", mh_context_error(ctx));
            CHECK(!pass || dt < 1.0, "conv2d auto on %zux%zu with %zux%zu waited for the stream (%.2f s)", shapes[i][0],
                  shapes[i][1], shapes[i][2], shapes[i][3], dt);
        }
        for (int p = 0; p < 2; ++p) /* planned calls, by auto and by name */
            for (int named = 0; named <= 1; ++named) {
                const double t0 = now_s();
                mh_status st =
                    mh_conv2d_planned(ctx, named ? "lowrank" : NULL, plans[p], img, 1999, 3001, MH_PAD_SAME, o);
                const double dt = now_s() - t0;
                CHECK(st == MH_OK, "conv2d planned (%s): %s", named ? "lowrank" : "auto", mh_context_error(ctx));
                CHECK(!pass || dt < 1.0, "conv2d planned (%s) waited for the stream (%.2f s)",
                      named ? "lowrank" : "auto", dt);
            }
        if (pass) { /* a new plan of host weights: its copy is queued, not waited for */
            host[0] += 1.0f;
            mh_conv2d_plan *fresh = NULL;
            const double t0 = now_s();
            mh_status st = mh_conv2d_plan_create(ctx, host, 21, 21, &fresh);
            const double dt = now_s() - t0;
            CHECK(st == MH_OK && dt < 1.0, "a plan of host weights on a held stream: %s, %.2f s",
                  mh_context_error(ctx), dt);
            if (st == MH_OK)
                CHECK(mh_conv2d_planned(ctx, NULL, fresh, img, 1999, 3001, MH_PAD_SAME, o) == MH_OK,
                      "the fresh plan: %s", mh_context_error(ctx));
            atomic_store(&released, 1);
            CHECK(mh_context_synchronize(ctx) == MH_OK, "sync: %s", mh_context_error(ctx));
            mh_conv2d_plan_destroy(fresh);
            atomic_store(&released, 0);
            CHECK_CUDA(cudaLaunchHostFunc(stream, hold_stream, NULL));
        }
        for (size_t i = 0; i < njobs; ++i) {
            const double t0 = now_s();
            mh_status st = call(ctx, NULL, &jobs[i], 0);
            const double dt = now_s() - t0;
            CHECK(st == MH_OK, "%s auto: %s", jobs[i].what, mh_context_error(ctx));
            CHECK(!pass || dt < 1.0, "%s auto waited for the stream (%.2f s)", jobs[i].what, dt);
        }
        atomic_store(&released, 1);
        CHECK(mh_context_synchronize(ctx) == MH_OK, "sync: %s", mh_context_error(ctx));
    }
    mh_context_set_stream(ctx, NULL);
    mh_conv2d_plan_destroy(plans[0]), mh_conv2d_plan_destroy(plans[1]);
    cudaFree(img), cudaFree(o), cudaFree(f);
}

/* The first launch of each kernel in the process, with the stream held: a context loads every
 * kernel when it is made, since a kernel loaded at its first launch (CUDA's lazy loading) waits
 * for the whole device. Before any other call of the test: auto on every op, but matmul's rows
 * of ours by name (auto takes cuBLAS at this size, whose kernels load lazily: memhier.h), and
 * the large filters (fft-tile, fft-3pass). */
static mh_status first_launch(mh_context *ctx, const job *jobs, size_t njobs, size_t i, const float *f,
                              const char **what)
{
    if (i < njobs) {
        *what = jobs[i].what;
        return call(ctx, jobs[i].op == MH_OP_MATMUL ? "warptile" : jobs[i].only, &jobs[i], 0);
    }
    const job *mm = NULL, *c2 = NULL;
    for (size_t j = 0; j < njobs; ++j) {
        if (jobs[j].op == MH_OP_MATMUL) mm = &jobs[j];
        if (jobs[j].op == MH_OP_CONV2D && !c2) c2 = &jobs[j];
    }
    if (i == njobs) {
        *what = "matmul tf32x3-wgmma";
        const mh_status st = call(ctx, "tf32x3-wgmma", mm, 0);
        return st == MH_ERR_UNSUPPORTED ? MH_OK : st; /* sm_90 only */
    }
    const int k = i == njobs + 1 ? 11 : 60;
    *what = k == 11 ? "conv2d 11 x 11" : "conv2d 60 x 61";
    return mh_conv2d(ctx, NULL, c2->in[0], 768, 1024, f, k, k == 11 ? 11 : 61, MH_PAD_SAME, c2->out[0]);
}

static void check_first_launches_never_wait(mh_context *ctx, job *jobs, size_t njobs, cudaStream_t stream)
{
    float *f;
    CHECK_CUDA(cudaMalloc((void **)&f, 61 * 61 * sizeof(float)));
    CHECK_CUDA(cudaMemset(f, 0, 61 * 61 * sizeof(float)));
    CHECK(mh_context_set_stream(ctx, stream) == MH_OK, "set_stream");
    for (size_t i = 0; i < njobs + 3; ++i) {
        const char *what = "";
        atomic_store(&released, 0);
        CHECK_CUDA(cudaLaunchHostFunc(stream, hold_stream, NULL));
        const double t0 = now_s();
        const mh_status st = first_launch(ctx, jobs, njobs, i, f, &what);
        const double dt = now_s() - t0;
        atomic_store(&released, 1);
        CHECK(st == MH_OK, "%s: %s", what, mh_context_error(ctx));
        CHECK(mh_context_synchronize(ctx) == MH_OK, "sync: %s", mh_context_error(ctx));
        CHECK(dt < 1.0, "the first %s call waited for the stream (%.2f s)", what, dt);
    }
    mh_context_set_stream(ctx, NULL);
    cudaFree(f);
}

int main(void)
{
    test_require_gpu();
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, 0) == MH_OK, "context");
    cudaStream_t streams[MAX_STREAMS];
    for (int s = 0; s < MAX_STREAMS; ++s) CHECK_CUDA(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
    const unsigned long long seed = test_seed();
    job jobs[8];
    job_init(&jobs[0], MH_OP_CONV1D, 1 << 20, 255, (1 << 20) * sizeof(float), seed);
    job_init(&jobs[1], MH_OP_CONV2D, 768 * 1024, 225, 768 * 1024 * sizeof(float), seed + 1);
    job_init(&jobs[2], MH_OP_TRANSPOSE, 1500 * 2049, 0, 1500 * 2049 * sizeof(float), seed + 2);
    job_init(&jobs[3], MH_OP_MATMUL, 512 * 1024, 1024 * 512, 512 * 512 * sizeof(float), seed + 3);
    job_init(&jobs[4], MH_OP_REDUCE, 1 << 23, 0, sizeof(float), seed + 4);
    job_init(&jobs[5], MH_OP_HISTOGRAM, 1 << 22, 0, 301 * sizeof(uint64_t), seed + 5);
    /* walk's 7 x 7 takes its filter from a slot of constant memory: each call its own */
    job_init(&jobs[6], MH_OP_CONV2D, 768 * 1024, 49, 768 * 1024 * sizeof(float), seed + 6);
    jobs[6].only = "conv2d/walk";
    /* mh_sepfilter_sum's second term lands in one buffer of the context, which every stream's sum
     * writes and reads: each sum's add must follow its own term, never another stream's */
    job_init(&jobs[7], MH_OP_SEPFILTER, 768 * 1024, 0, 768 * 1024 * sizeof(float), seed + 7);
    void *host = malloc(768 * 1024 * sizeof(float) > 1500 * 2049 * sizeof(float) ? 768 * 1024 * sizeof(float)
                                                                                  : 1500 * 2049 * sizeof(float));
    check_first_launches_never_wait(ctx, jobs, sizeof jobs / sizeof jobs[0], streams[0]);
    size_t checked = 0;
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; ++i)
        for (size_t r = 0; r < mh_row_count(jobs[i].op); ++r) {
            const mh_row *row = mh_row_at(jobs[i].op, r);
            if (row->info.backend == MH_BACKEND_CPU || mh_variant_is_demonstration(&row->info) ||
                (jobs[i].only && strcmp(row->info.name, jobs[i].only)))
                continue;
            test_trace(row->info.name, 0, "streams");
            const int ran = check_row(ctx, row, &jobs[i], streams, host);
            checked += ran;
            printf("%-28s %s\n", row->info.name, ran ? "checked" : "refuses the problem");
            fflush(stdout);
        }
    CHECK(checked > 30, "only %zu rows ran", checked);
    check_auto_never_waits(ctx, jobs, sizeof jobs / sizeof jobs[0], streams[0]);
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; ++i) job_free(&jobs[i]);
    free(host);
    for (int s = 0; s < MAX_STREAMS; ++s) cudaStreamDestroy(streams[s]);
    mh_context_destroy(ctx);
    return test_finish("test_streams");
}

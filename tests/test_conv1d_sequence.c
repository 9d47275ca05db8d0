/* Calls back to back on one stream, no synchronization between them: every CUDA conv1d row of
 * ours and each of its configurations runs three convolutions of a 16M-sample signal with
 * three different masks (k = 2047, 31, 1023) into three outputs, then all three are checked
 * against the double reference at sampled positions across the signal.
 *
 * Why: fft-fused's convolution kernel starts while its spectrum kernel still runs
 * (programmatic dependent launch) and waits only before reading the spectra. Reading them
 * with non-coherent loads returned stale spectra on the H100 at n >= 16M, which test_conv1d's
 * small sizes never showed (one wave of blocks); any state that leaks from one call into the
 * next (a spectrum, a constant-memory mask) shows here as a wrong output of a later call. */
#include "testing.h"

#include <math.h>

enum { CALLS = 3, SAMPLES = 2000 };
static const size_t N = ((size_t)1 << 24) + 3;
static const size_t KS[CALLS] = {2047, 31, 1023};

typedef struct expected {
    size_t at[SAMPLES];
    double ref[SAMPLES], mag[SAMPLES];
} expected;

/* Sampled outputs of call c: both ends, then spread over the signal. */
static void make_expected(expected *e, const float *in, const float *mask, size_t k)
{
    const size_t out_n = N - k + 1;
#pragma omp parallel for
    for (int s = 0; s < SAMPLES; ++s) {
        const size_t i = s < 200 ? (size_t)s : s < 400 ? out_n - 400 + (size_t)s : mh_mix64((uint64_t)s) % out_n;
        e->at[s] = i;
        mh_conv1d_reference_at(in, N, mask, k, 0, i, &e->ref[s], &e->mag[s]);
    }
}

static void check_call(const float *d_out, const expected *e, size_t k, const char *name, const char *cfg, int call)
{
    float got[SAMPLES];
    for (int s = 0; s < SAMPLES; ++s) CHECK_CUDA(cudaMemcpy(&got[s], d_out + e->at[s], sizeof(float), cudaMemcpyDeviceToHost));
    mh_error_stats st;
    /* fft rows: an FFT's error is normwise; 1e-4 of the sum of |terms| covers it at these k */
    const double rtol = strncmp(name, "conv1d/fft", 10) == 0 ? 1e-4 : mh_sum_rtol(k);
    const int ok = mh_compare(got, e->ref, e->mag, SAMPLES, rtol, &st);
    CHECK(ok, "%s %s, call %d of %d (k = %zu): out[%zu] = %.7g, reference %.7g (%zu of %d samples wrong)", name, cfg,
          call + 1, CALLS, k, e->at[st.first_bad], st.first_out, st.first_ref, st.bad, SAMPLES);
}

int main(void)
{
    test_require_gpu();
    const unsigned long long seed = test_seed();
    float *in = malloc(N * sizeof(float)), *masks[CALLS];
    expected *want = malloc(CALLS * sizeof *want);
    mh_fill_uniform(in, N, seed, 1.0f);
    float *d_in, *d_mask[CALLS], *d_out[CALLS];
    CHECK_CUDA(cudaMalloc((void **)&d_in, N * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_in, in, N * sizeof(float), cudaMemcpyHostToDevice));
    for (int c = 0; c < CALLS; ++c) {
        masks[c] = malloc(KS[c] * sizeof(float));
        mh_fill_uniform(masks[c], KS[c], seed + 1 + (unsigned long long)c, 1.0f);
        make_expected(&want[c], in, masks[c], KS[c]);
        CHECK_CUDA(cudaMalloc((void **)&d_mask[c], KS[c] * sizeof(float)));
        CHECK_CUDA(cudaMemcpy(d_mask[c], masks[c], KS[c] * sizeof(float), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMalloc((void **)&d_out[c], N * sizeof(float)));
    }
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, 0) == MH_OK, "context");
    for (size_t r = 0; r < mh_row_count(MH_OP_CONV1D); ++r) {
        const mh_row *row = mh_row_at(MH_OP_CONV1D, r);
        if (row->info.backend != MH_BACKEND_CUDA || !test_row_named(row)) continue;
        for (int cfg = 0; cfg < test_configs(row, 1); ++cfg) {
            const char *cfg_name = row->configs ? row->configs[cfg] : "";
            int ran[CALLS] = {0};
            for (int c = 0; c < CALLS; ++c) {
                CHECK_CUDA(cudaMemset(d_out[c], 0xff, N * sizeof(float)));
                mh_args a;
                mh_conv1d_args_init(ctx, &a, d_in, N, d_mask[c], KS[c], MH_PAD_VALID, d_out[c]);
                a.config = cfg;
                char why[512];
                if (!row->supports(ctx, &a, why, sizeof why)) continue;
                const mh_status s = mh_run_row(ctx, row, &a); /* no synchronization between calls */
                CHECK(s == MH_OK, "%s %s call %d: %s", row->info.name, cfg_name, c + 1, mh_context_error(ctx));
                ran[c] = s == MH_OK;
            }
            CHECK(mh_context_synchronize(ctx) == MH_OK, "%s %s: %s", row->info.name, cfg_name, mh_context_error(ctx));
            for (int c = 0; c < CALLS; ++c)
                if (ran[c]) check_call(d_out[c], &want[c], KS[c], row->info.name, cfg_name, c);
            printf("%s %s: %d calls checked\n", row->info.name, cfg_name, ran[0] + ran[1] + ran[2]);
            fflush(stdout);
        }
    }
    mh_context_destroy(ctx);
    for (int c = 0; c < CALLS; ++c) cudaFree(d_mask[c]), cudaFree(d_out[c]), free(masks[c]);
    cudaFree(d_in), free(in), free(want);
    return test_finish("test_conv1d_sequence");
}

/* 64-bit indexing: every CUDA variant on an input of 2^31 + 1001 floats (8.6 GB), where a
 * 32-bit index wraps. Inputs are generated on the device from a counter-based hash, so the
 * host recomputes any input element, and checks outputs around 2^31 and at both ends; every
 * output is scanned for NaN (poisoned first). Vendor rows are left out: they are not ours
 * and cuDNN's tensors are int-sized. */
#include "testing.h"

#include <math.h>

static const size_t N = (1ULL << 31) + 1001;
enum { K = 5, SAMPLES = 3000 };

static double ref_at(unsigned long long seed, const float *mask, size_t i, double *mag)
{
    double sum = 0.0, m = 0.0;
    for (int j = 0; j < K; ++j) {
        double t = (double)mh_hash_uniform(seed, i + (size_t)j) * mask[j];
        sum += t;
        m += fabs(t);
    }
    *mag = m;
    return sum;
}

int main(void)
{
    test_require_gpu();
    size_t free_b = 0, total_b = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < 2 * N * sizeof(float) + (1ULL << 30)) {
        fprintf(stderr, "needs %.1f GB of device memory, %.1f GB free\n", 2.0 * N * 4 / 1e9 + 1, free_b / 1e9);
        return 1;
    }
    const unsigned long long seed = test_seed();
    const size_t out_n = N - K + 1;
    float *d_in, *d_mask, *d_out, mask[K];
    for (int j = 0; j < K; ++j) mask[j] = mh_hash_uniform(seed + 1, (uint64_t)j);
    CHECK_CUDA(cudaMalloc((void **)&d_in, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_out, out_n * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&d_mask, K * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_mask, mask, sizeof mask, cudaMemcpyHostToDevice));
    CHECK(mh_cuda_fill_uniform(d_in, N, seed, 1.0f, NULL) == 0, "fill");
    CHECK_CUDA(cudaDeviceSynchronize());

    size_t idx[SAMPLES];
    double ref[SAMPLES], mag[SAMPLES];
    float got[SAMPLES];
    for (int s = 0; s < SAMPLES; ++s) {
        size_t i = s < 1000 ? (size_t)s                                  /* the start */
                   : s < 2000 ? out_n - 2000 + (size_t)s                 /* the end */
                   : s < 2500 ? (1ULL << 31) - 250 + (size_t)(s - 2000)  /* across 2^31 */
                              : mh_mix64((uint64_t)s) % out_n;
        idx[s] = i;
        ref[s] = ref_at(seed, mask, i, &mag[s]);
    }
    const size_t chunk = (size_t)1 << 26;
    float *host = malloc(chunk * sizeof(float));
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, 0) == MH_OK, "context");
    for (size_t r = 0; r < mh_row_count(MH_OP_CONV1D); ++r) {
        const mh_row *row = mh_row_at(MH_OP_CONV1D, r);
        if (row->info.backend != MH_BACKEND_CUDA) continue;
        CHECK_CUDA(cudaMemset(d_out, 0xff, out_n * sizeof(float)));
        mh_status s = mh_conv1d(ctx, row->info.name, d_in, N, d_mask, K, MH_PAD_VALID, d_out);
        if (s == MH_OK) s = mh_context_synchronize(ctx);
        CHECK(s == MH_OK, "%s: %s", row->info.name, mh_context_error(ctx));
        if (s != MH_OK) continue;
        size_t nan_count = 0;
        for (size_t base = 0; base < out_n; base += chunk) {
            size_t len = out_n - base < chunk ? out_n - base : chunk;
            CHECK_CUDA(cudaMemcpy(host, d_out + base, len * sizeof(float), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < len; ++i) nan_count += isnan(host[i]);
            for (int t = 0; t < SAMPLES; ++t)
                if (idx[t] >= base && idx[t] < base + len) got[t] = host[idx[t] - base];
        }
        mh_error_stats st;
        int ok = mh_compare(got, ref, mag, SAMPLES, mh_sum_rtol(K), &st);
        CHECK(nan_count == 0, "%s left %zu of %zu outputs unwritten", row->info.name, nan_count, out_n);
        CHECK(ok, "%s: out[%zu] = %.7g, reference %.7g (%zu wrong samples)", row->info.name, idx[st.first_bad],
              st.first_out, st.first_ref, st.bad);
        printf("%s: n = 2^31 + 1001 checked\n", row->info.name);
        fflush(stdout);
    }
    free(host);
    mh_context_destroy(ctx);
    cudaFree(d_in), cudaFree(d_out), cudaFree(d_mask);
    return test_finish("test_conv1d_large");
}

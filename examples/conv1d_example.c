/* A plain C11 program using the installed memhier: a 1-D convolution on GPU 0 when there
 * is one, else on the CPU backend, checked against a simple loop. No CUDA header needed.
 *   cc -std=c11 conv1d_example.c $(pkg-config --cflags --libs memhier) */
#include <math.h>
#include <memhier.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 100000, K = 31 };

static int fail(mh_context *ctx, const char *what)
{
    fprintf(stderr, "%s: %s\n", what, mh_context_error(ctx));
    return 1;
}

int main(void)
{
    mh_context *ctx;
    if (mh_context_create(&ctx, 0) != MH_OK && mh_context_create(&ctx, MH_CPU) != MH_OK) return 1;
    static float x[N], m[K], y[N];
    for (int i = 0; i < N; ++i) x[i] = sinf(0.01f * (float)i);
    for (int j = 0; j < K; ++j) m[j] = 1.0f / K;

    const size_t out_n = mh_conv1d_out_len(N, K, MH_PAD_SAME);
    void *dx, *dm, *dy;
    if (mh_alloc(ctx, sizeof x, &dx) || mh_alloc(ctx, sizeof m, &dm) || mh_alloc(ctx, out_n * sizeof(float), &dy))
        return fail(ctx, "alloc");
    if (mh_upload(ctx, dx, x, sizeof x) || mh_upload(ctx, dm, m, sizeof m)) return fail(ctx, "upload");
    if (mh_conv1d(ctx, NULL, dx, N, dm, K, MH_PAD_SAME, dy) != MH_OK) return fail(ctx, "conv1d");
    if (mh_context_synchronize(ctx) || mh_download(ctx, y, dy, out_n * sizeof(float))) return fail(ctx, "result");

    double worst = 0.0;
    for (size_t i = 0; i < out_n; ++i) {
        double want = 0.0;
        for (int j = 0; j < K; ++j) {
            long p = (long)i + j - (K - 1) / 2;
            if (p >= 0 && p < N) want += (double)x[p] * m[j];
        }
        worst = fmax(worst, fabs(want - y[i]));
    }
    const mh_variant_info *chosen;
    mh_conv1d_select(ctx, N, K, MH_PAD_SAME, &chosen);
    printf("memhier %d.%d: %s ran %s; max error %.2e over %zu outputs\n", MEMHIER_VERSION_MAJOR, MEMHIER_VERSION_MINOR,
           mh_context_device(ctx) == MH_CPU ? "the CPU backend" : "GPU 0", chosen->name, worst, out_n);
    mh_free(ctx, dx), mh_free(ctx, dm), mh_free(ctx, dy);
    mh_context_destroy(ctx);
    return worst < 1e-4 ? 0 : 1;
}

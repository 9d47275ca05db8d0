/* Does the C library's own host cost a call grow with the image (issue 64)? From Python,
 * memhier's correlate takes 9-10 us a call in a loop at 256^2 and 13-14 at 4096^2, cupyx's 17
 * and 18. Here, with no Python: mh_conv2d_mode 5 x 5 reflect (auto, per-element) on device
 * arrays of n x n, 100 calls back to back on one stream, the time until the last returns over
 * the calls (host) and until the stream finishes (per call); beside it cudaMemsetAsync of the
 * output (a driver call of the same queue), the variants tiles and walk alone, and mh_sepfilter
 * with correlate1d's 9 device taps along axis 0 (the other axis the identity, as memhier.ndimage
 * describes it). The least of 5 rounds.
 *   cc -O2 -I include -I /usr/local/cuda/include lab/tools/c_host_cost.c -L build -L /usr/local/cuda/lib64 \
 *      -lmemhier -lcudart -o c_host_cost
 *   LD_LIBRARY_PATH=build ./c_host_cost */
#include <memhier.h>

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + 1e-3 * t.tv_nsec;
}

enum { CALLS = 100, ROUNDS = 5 };

struct call {
    const char *name, *variant; /* variant NULL: auto; names "memset" and "sep1d" call those */
};

static const float ONE = 1.0f;

/* correlate1d(x, w[:9], axis=0) as memhier.ndimage describes it to the library */
static mh_sepfilter_desc along_rows(size_t n, const float *w)
{
    mh_sepfilter_desc d = {0};
    d.batch = 1, d.rows = n, d.cols = n, d.channels = 1, d.in_type = MH_F32, d.out_type = MH_F32;
    d.vertical = (mh_sepfilter_axis){w, 9, 0, MH_MODE_REFLECT, 1, NULL, 0};
    d.horizontal = (mh_sepfilter_axis){&ONE, 1, 0, MH_MODE_REFLECT, 1, NULL, 0};
    d.order = MH_SEPFILTER_VERTICAL_FIRST;
    return d;
}

static int one(mh_context *ctx, cudaStream_t s, const struct call *c, const float *x, const float *w, float *y,
               size_t n)
{
    if (!strcmp(c->name, "memset")) return cudaMemsetAsync(y, 0, n * n * sizeof(float), s) != cudaSuccess;
    if (!strcmp(c->name, "sep1d")) {
        const mh_sepfilter_desc d = along_rows(n, w);
        return mh_sepfilter(ctx, c->variant, &d, x, y) != MH_OK;
    }
    return mh_conv2d_mode(ctx, c->variant, x, n, n, w, 5, 5, MH_MODE_REFLECT, 0.0f, 0, 0, y) != MH_OK;
}

int main(void)
{
    mh_context *ctx;
    cudaStream_t s;
    if (mh_context_create(&ctx, 0) != MH_OK || cudaStreamCreate(&s) != cudaSuccess ||
        mh_context_set_stream(ctx, s) != MH_OK || mh_context_set_precision(ctx, MH_PRECISION_PER_ELEMENT) != MH_OK) {
        fprintf(stderr, "no context on device 0\n");
        return 1;
    }
    const struct call calls[] = {{"memset", NULL}, {"auto", NULL}, {"tiles", "conv2d/tiles"}, {"walk", "conv2d/walk"},
                                 {"sep1d", NULL}};
    printf("%6s %-8s %9s %9s\n", "n", "call", "host us", "per call");
    for (size_t n = 256; n <= 8192; n *= 2) {
        float *x, *w, *y;
        if (cudaMalloc((void **)&x, n * n * 4) || cudaMalloc((void **)&y, n * n * 4) || cudaMalloc((void **)&w, 100)) {
            fprintf(stderr, "cudaMalloc failed at n = %zu\n", n);
            return 1;
        }
        cudaMemset(x, 0, n * n * 4);
        cudaMemset(w, 0, 100);
        for (size_t c = 0; c < sizeof calls / sizeof calls[0]; ++c) {
            double host = 1e30, per = 1e30;
            for (int r = 0; r < ROUNDS; ++r) {
                cudaStreamSynchronize(s);
                const double t0 = now_us();
                for (int i = 0; i < CALLS; ++i)
                    if (one(ctx, s, &calls[c], x, w, y, n)) {
                        fprintf(stderr, "%s failed at n = %zu: %s\n", calls[c].name, n, mh_context_error(ctx));
                        return 1;
                    }
                const double t1 = now_us();
                cudaStreamSynchronize(s);
                const double t2 = now_us();
                if ((t1 - t0) / CALLS < host) host = (t1 - t0) / CALLS;
                if ((t2 - t0) / CALLS < per) per = (t2 - t0) / CALLS;
            }
            printf("%6zu %-8s %9.2f %9.2f\n", n, calls[c].name, host, per);
        }
        cudaFree(x);
        cudaFree(y);
        cudaFree(w);
    }
    mh_context_destroy(ctx);
    cudaStreamDestroy(s);
    return 0;
}

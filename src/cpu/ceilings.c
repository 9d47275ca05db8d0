/* The CPU backend's facts and ceilings: what `memhier info` and the CPU bench measure
 * against when no GPU is present. */
#include "../core/internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void cpu_model(char *name, size_t len)
{
    snprintf(name, len, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(name, len, "%s", colon + 2);
            name[strcspn(name, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
}

mh_status mh_cpu_device_info(mh_device_info *info)
{
    cpu_model(info->name, sizeof info->name);
    info->sm_count = omp_get_num_procs();
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    info->global_bytes = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    info->l2_bytes = l2 > 0 ? (size_t)l2 : 0;
    return MH_OK;
}

static double copy_gbps(mh_context *ctx, mh_status *s)
{
    const size_t bytes = (size_t)256 << 20;
    char *src = malloc(bytes), *dst = malloc(bytes);
    double best = 0.0;
    if (!src || !dst) {
        *s = mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "ceilings: 2 x %zu bytes of host memory", bytes);
    } else {
        memset(src, 1, bytes);
        memset(dst, 0, bytes);
        for (int rep = 0; rep < 5; ++rep) {
            double t0 = now_s();
#pragma omp parallel
            {
                size_t parts = (size_t)omp_get_num_threads(), me = (size_t)omp_get_thread_num();
                size_t lo = bytes / parts * me, hi = me + 1 == parts ? bytes : bytes / parts * (me + 1);
                memcpy(dst + lo, src + lo, hi - lo);
            }
            double gbps = 2.0 * (double)bytes / (now_s() - t0) / 1e9;
            if (gbps > best) best = gbps;
        }
    }
    free(src);
    free(dst);
    return best;
}

enum { FMA_CHAINS = 64 };

static double fma_gflops(void)
{
    const long iters = 1L << 22;
    double best = 0.0;
    for (int rep = 0; rep < 3; ++rep) {
        double t0 = now_s(), sink = 0.0;
        int threads = 1;
#pragma omp parallel reduction(+ : sink)
        {
            threads = omp_get_num_threads();
            float v[FMA_CHAINS];
            for (int c = 0; c < FMA_CHAINS; ++c) v[c] = (float)c;
            for (long it = 0; it < iters; ++it) {
#pragma omp simd
                for (int c = 0; c < FMA_CHAINS; ++c) v[c] = v[c] * 0.9999999f + 1e-7f;
            }
            for (int c = 0; c < FMA_CHAINS; ++c) sink += v[c];
        }
        double gf = 2.0 * FMA_CHAINS * (double)iters * threads / (now_s() - t0) / 1e9;
        if (sink == 12345.0) gf = 0.0; /* keeps the loop observable */
        if (gf > best) best = gf;
    }
    return best;
}

mh_status mh_cpu_measure_ceilings(mh_context *ctx, mh_ceilings *c)
{
    mh_status s = MH_OK;
    c->copy_gbps = copy_gbps(ctx, &s);
    if (s != MH_OK) return s;
    c->fma_gflops = fma_gflops();
    return MH_OK;
}

/* The sepfilter driver of memhier bench: scipy.ndimage's separable filters on typed images
 * (uint8 RGB, float32, uint16, stacks), every output compared bit for bit with the CPU row's
 * (both sum the taps in order with fmaf and cast alike), the poison included. */
#include "bench.h"
#include "core/dtype.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* scipy.ndimage's calls: gaussian_filter(x, 2) over the image axes (17 taps), uniform_filter(x, 5),
 * sobel(x, axis=0) (the difference down the columns, [1 2 1] along the rows),
 * gaussian_filter1d(x, 2, axis=0) (down the columns alone, the rows' axis the single tap 1). */
enum { GAUSSIAN, UNIFORM, SOBEL, GAUSSIAN1D };

typedef struct sep_workload {
    size_t batch, rows, cols, channels;
    mh_dtype in_type, out_type;
    int filter;  /* GAUSSIAN (sigma 2, 17 taps), UNIFORM (5), SOBEL (difference down, [1 2 1] across), GAUSSIAN1D */
    mh_mode mode;
} sep_workload;

typedef struct sep_case {
    sep_workload w;
    mh_sepfilter_desc d;
    float vtaps[MH_SEPFILTER_MAX_TAPS], htaps[MH_SEPFILTER_MAX_TAPS];
    size_t values, in_bytes, out_bytes;
    void *h_in, *h_out, *h_ref, *d_in, *d_out;
} sep_case;

static const sep_workload gpu_defaults[] = {
    {1, 8192, 8192, 3, MH_U8, MH_U8, GAUSSIAN, MH_MODE_REFLECT},
    {1, 8192, 8192, 1, MH_F32, MH_F32, GAUSSIAN, MH_MODE_REFLECT},
    {1, 8192, 8192, 1, MH_F32, MH_F32, GAUSSIAN1D, MH_MODE_REFLECT},
    {1, 8192, 8192, 1, MH_F32, MH_F32, UNIFORM, MH_MODE_REFLECT},
    {1, 8192, 8192, 1, MH_F32, MH_F32, SOBEL, MH_MODE_REFLECT},
    {1, 8192, 8192, 1, MH_U16, MH_U16, UNIFORM, MH_MODE_NEAREST},
    {256, 512, 512, 1, MH_F32, MH_F32, SOBEL, MH_MODE_MIRROR},
    {1, 8192, 8192, 4, MH_F16, MH_F16, GAUSSIAN, MH_MODE_CONSTANT},
};
static const sep_workload cpu_defaults[] = {
    {1, 1024, 1024, 3, MH_U8, MH_U8, GAUSSIAN, MH_MODE_REFLECT},
    {1, 1024, 1024, 1, MH_F32, MH_F32, GAUSSIAN, MH_MODE_REFLECT},
    {8, 256, 256, 1, MH_I16, MH_I16, SOBEL, MH_MODE_MIRROR},
};
static const char *const filter_names[] = {"gaussian", "uniform", "sobel", "gaussian1d"};

/* scipy's gaussian_filter1d taps for sigma 2 (radius 8), reversed as correlate1d takes them. */
static void gaussian_taps(float *t)
{
    double w[17], sum = 0.0;
    for (int i = 0; i < 17; ++i) sum += w[i] = exp(-0.5 * (i - 8) * (i - 8) / 4.0);
    for (int i = 0; i < 17; ++i) t[i] = (float)(w[16 - i] / sum);
}

static void describe(bench_workload *bw, const sep_workload *w)
{
    sep_case *c = calloc(1, sizeof *c);
    bw->state = c;
    if (!c) return;
    c->w = *w;
    mh_sepfilter_desc *d = &c->d;
    d->batch = w->batch, d->rows = w->rows, d->cols = w->cols, d->channels = w->channels;
    d->in_type = w->in_type, d->out_type = w->out_type;
    d->vertical = (mh_sepfilter_axis){c->vtaps, 0, 0, w->mode, 1, NULL, 0};
    d->horizontal = (mh_sepfilter_axis){c->htaps, 0, 0, w->mode, 1, NULL, 0};
    if (w->filter == GAUSSIAN) {
        gaussian_taps(c->vtaps), gaussian_taps(c->htaps);
        d->vertical.ntaps = d->horizontal.ntaps = 17;
    } else if (w->filter == GAUSSIAN1D) {
        gaussian_taps(c->vtaps), c->htaps[0] = 1.0f;
        d->vertical.ntaps = 17, d->horizontal.ntaps = 1;
    } else if (w->filter == UNIFORM) {
        for (int i = 0; i < 5; ++i) c->vtaps[i] = c->htaps[i] = 1.0f;
        d->vertical.ntaps = d->horizontal.ntaps = 5;
        d->vertical.divisor = d->horizontal.divisor = 5;
    } else {
        c->vtaps[0] = -1.0f, c->vtaps[1] = 0.0f, c->vtaps[2] = 1.0f;
        c->htaps[0] = 1.0f, c->htaps[1] = 2.0f, c->htaps[2] = 1.0f;
        d->vertical.ntaps = d->horizontal.ntaps = 3;
    }
    c->values = w->batch * w->rows * w->cols * w->channels;
    c->in_bytes = c->values * mh_dtype_size(w->in_type), c->out_bytes = c->values * mh_dtype_size(w->out_type);
    snprintf(bw->desc, sizeof bw->desc, "filter=%s dtype=%s shape=%zux%zux%zux%zu mode=%s", filter_names[w->filter],
             mh_dtype_name(w->in_type), w->batch, w->rows, w->cols, w->channels, mh_mode_name(w->mode));
    bw->flops = 2.0 * (double)c->values * (double)(d->vertical.ntaps + (w->filter == GAUSSIAN1D ? 0 : d->horizontal.ntaps));
    bw->bytes = (double)(c->in_bytes + c->out_bytes);
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    if (o->any_size) {
        const sep_workload one = {1, bench_size_or(o, BENCH_ROWS, 8192), bench_size_or(o, BENCH_COLS, 8192), 3, MH_U8,
                                  MH_U8, GAUSSIAN, o->have_mode ? o->mode : MH_MODE_REFLECT};
        describe(&w[0], &one);
        return 1;
    }
    const sep_workload *list = gpu ? gpu_defaults : cpu_defaults;
    const size_t count = gpu ? sizeof gpu_defaults / sizeof gpu_defaults[0] : sizeof cpu_defaults / sizeof cpu_defaults[0];
    for (size_t i = 0; i < count && i < max; ++i) describe(&w[i], &list[i]);
    return count;
}

/* Inputs spanning the type (floats in [-100, 100)), so that integer outputs wrap where the
 * filter's gain passes the type's range, as scipy's do. */
static void fill_input(sep_case *c)
{
    float *u = malloc(c->values * sizeof(float));
    if (!u) return;
    mh_fill_uniform(u, c->values, 31, 1.0f);
    const int integer = c->w.in_type != MH_F32 && c->w.in_type != MH_F16;
    const float scale = c->w.in_type == MH_U8 ? 128.0f : c->w.in_type == MH_U16 ? 32768.0f : c->w.in_type == MH_I16 ? 32767.0f
                                                                                                                  : 100.0f;
    for (size_t i = 0; i < c->values; ++i) {
        float v = u[i] * scale;
        if (integer) v = floorf(v + (c->w.in_type == MH_U8 || c->w.in_type == MH_U16 ? scale : 0.0f));
        mh_store_value(c->h_in, i, c->w.in_type, mh_cast_value(v, c->w.in_type));
    }
    free(u);
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    sep_case *c = w->state;
    if (!c) return snprintf(err, len, "out of memory"), 0;
    c->h_in = malloc(c->in_bytes), c->h_out = malloc(c->out_bytes), c->h_ref = malloc(c->out_bytes);
    if (!c->h_in || !c->h_out || !c->h_ref) return snprintf(err, len, "out of host memory"), 0;
    fill_input(c);
    mh_context *cpu = NULL;
    if (mh_context_create(&cpu, MH_CPU) != MH_OK) return snprintf(err, len, "no CPU context"), 0;
    const mh_status s = mh_sepfilter(cpu, "sepfilter/cpu-omp", &c->d, c->h_in, c->h_ref);
    if (s != MH_OK) snprintf(err, len, "the CPU reference failed: %s", mh_context_error(cpu));
    mh_context_destroy(cpu);
    if (s != MH_OK) return 0;
    if (gpu && (!bench_device_copy((float **)&c->d_in, NULL, (c->in_bytes + 3) / 4, err, len) ||
                !bench_device_copy((float **)&c->d_out, NULL, (c->out_bytes + 3) / 4, err, len)))
        return 0;
    if (gpu && cudaMemcpy(c->d_in, c->h_in, c->in_bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        return snprintf(err, len, "copying the input to the GPU failed"), 0;
    return 1;
}

static void teardown(bench_workload *w)
{
    sep_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in), cudaFree(c->d_out);
    free(c->h_in), free(c->h_out), free(c->h_ref), free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    sep_case *c = w->state;
    const int cpu = mh_context_device(ctx) == MH_CPU;
    mh_sepfilter_args_init(ctx, a, &c->d, cpu ? c->h_in : c->d_in, cpu ? c->h_out : c->d_out);
}

static void poison(bench_workload *w, mh_context *ctx)
{
    sep_case *c = w->state;
    if (mh_context_device(ctx) == MH_CPU) memset(c->h_out, 0xa5, c->out_bytes);
    else cudaMemsetAsync(c->d_out, 0xa5, c->out_bytes, (cudaStream_t)ctx->stream);
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    sep_case *c = w->state;
    memset(st, 0, sizeof *st);
    if (mh_context_device(ctx) != MH_CPU && cudaMemcpy(c->h_out, c->d_out, c->out_bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        return snprintf(why, len, "copying the output back failed"), 0;
    if (memcmp(c->h_out, c->h_ref, c->out_bytes) == 0) return 1;
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < c->values; ++i)
        if (mh_load_value(c->h_out, i, c->w.out_type) != mh_load_value(c->h_ref, i, c->w.out_type) && !wrong++) first = i;
    snprintf(why, len, "%zu of %zu outputs differ from the CPU row's (first at value %zu: %g, expected %g)", wrong,
             c->values, first, (double)mh_load_value(c->h_out, first, c->w.out_type),
             (double)mh_load_value(c->h_ref, first, c->w.out_type));
    st->rel_l2 = (double)wrong / (double)c->values;
    return wrong == 0; /* identical values in other bits: NaNs of another payload */
}

const bench_driver bench_sepfilter_driver = {
    MH_OP_SEPFILTER, "sepfilter/two-pass", "sepfilter/cpu-omp", NULL, 0,
    plan,            setup,             teardown,            make_args, poison, check, 1u << 0, 1u << 0,
};

/* The conv1d driver of memhier bench: its workloads, inputs, reference and checks.
 * Inputs are uniform in [-1, 1). The reference is computed in double at a sample of output
 * positions (all of them up to 65536 outputs; else the first and last 512 and 7168 spread at
 * random), and every output is checked for NaN, so an unwritten element anywhere fails. */
#include "bench.h"
#include "core/random.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct conv1d_case {
    size_t batch, n, k, out_n, masks; /* out_n per signal; masks: 1 or batch */
    mh_pad pad;
    int mode; /* -1: zeros by pad; else mh_conv1d_mode's boundary mode (cval 0, origin 0) */
    float *h_in, *h_mask, *h_out;
    float *d_in, *d_mask, *d_out;
    bench_sampled check;
} conv1d_case;

/* Single signals, then batches (long masks past the FMA ceiling, depthwise per-signal masks,
 * one mask shared by long signals); n = 16M, k = 255 is the tensor cores' mid-length mask. The
 * last two are mh_conv1d_mode's 'reflect' beside zero-padded workloads of the same sizes: what
 * applying a boundary mode in the loaders costs (regtile, fft-fused). */
enum { ZEROS = -1 };
static const struct {
    size_t batch, n, k;
    int per_signal;
    mh_pad pad;
    int mode;
} gpu_defaults[] = {{1, 1000000, 2047, 0, MH_PAD_VALID, ZEROS},   {1, 1500000, 2047, 0, MH_PAD_VALID, ZEROS},
                    {1, 16777216, 2047, 0, MH_PAD_VALID, ZEROS},  {1, 67108864, 31, 0, MH_PAD_VALID, ZEROS},
                    {1, 16777216, 65535, 0, MH_PAD_VALID, ZEROS}, {1024, 16384, 2047, 1, MH_PAD_SAME, ZEROS},
                    {64, 1048576, 4095, 0, MH_PAD_VALID, ZEROS},  {1, 16777216, 255, 0, MH_PAD_VALID, ZEROS},
                    {1, 67108864, 31, 0, MH_PAD_SAME, MH_MODE_REFLECT}, {1, 16777216, 2047, 0, MH_PAD_SAME, MH_MODE_REFLECT}},
  cpu_defaults[] = {{1, 100000, 2047, 0, MH_PAD_VALID, ZEROS}, {1, 4000000, 31, 0, MH_PAD_VALID, ZEROS},
                    {16, 16384, 255, 1, MH_PAD_SAME, ZEROS}};

static void describe(bench_workload *w, size_t batch, size_t n, size_t k, int per_signal, mh_pad pad, int mode)
{
    conv1d_case *c = calloc(1, sizeof *c);
    w->state = c;
    if (!c) return;
    c->batch = batch, c->n = n, c->k = k, c->pad = pad, c->masks = per_signal ? batch : 1, c->mode = mode;
    c->out_n = mode == ZEROS ? mh_conv1d_out_len(n, k, pad) : n;
    char where[32];
    if (mode == ZEROS) snprintf(where, sizeof where, "pad=%s", mh_pad_name(pad));
    else snprintf(where, sizeof where, "mode=%s", mh_mode_name((mh_mode)mode));
    if (batch > 1)
        snprintf(w->desc, sizeof w->desc, "batch=%zu n=%zu k=%zu masks=%s %s", batch, n, k,
                 per_signal ? "per-signal" : "shared", where);
    else
        snprintf(w->desc, sizeof w->desc, "n=%zu k=%zu %s", n, k, where);
    w->flops = 2.0 * (double)batch * (double)c->out_n * (double)k;
    w->bytes = 4.0 * ((double)batch * (double)n + (double)c->masks * (double)k + (double)batch * (double)c->out_n);
}

/* The grid behind `auto` (issue 13, docs/conv1d.md): n = 2^12 .. 2^26 by 4x against these k,
 * valid padding, k <= n. */
static const size_t grid_k[] = {3, 15, 31, 63, 127, 255, 511, 1023, 2047, 4095, 16383, 65535};

static size_t plan_grid(bench_workload *w, size_t max)
{
    size_t count = 0;
    for (size_t n = (size_t)1 << 12; n <= (size_t)1 << 26; n *= 4)
        for (size_t i = 0; i < sizeof grid_k / sizeof grid_k[0]; ++i)
            if (grid_k[i] <= n && count < max) describe(&w[count++], 1, n, grid_k[i], 0, MH_PAD_VALID, ZEROS);
    return count;
}

static size_t plan(const bench_opts *o, int gpu, bench_workload *w, size_t max)
{
    if (o->grid) return plan_grid(w, max);
    const int mode = o->have_mode ? (int)o->mode : ZEROS; /* --mode: every workload with that border */
    if (o->any_size) {
        describe(&w[0], 1, bench_size_or(o, BENCH_N, 1000000), bench_size_or(o, BENCH_K, 2047), 0,
                 o->have_pad ? o->pad : MH_PAD_VALID, mode);
        return 1;
    }
    size_t count = gpu ? sizeof gpu_defaults / sizeof gpu_defaults[0] : sizeof cpu_defaults / sizeof cpu_defaults[0];
    for (size_t i = 0; i < count && i < max; ++i)
        if (gpu)
            describe(&w[i], gpu_defaults[i].batch, gpu_defaults[i].n, gpu_defaults[i].k, gpu_defaults[i].per_signal,
                     gpu_defaults[i].pad, o->have_mode ? mode : gpu_defaults[i].mode);
        else
            describe(&w[i], cpu_defaults[i].batch, cpu_defaults[i].n, cpu_defaults[i].k, cpu_defaults[i].per_signal,
                     cpu_defaults[i].pad, o->have_mode ? mode : cpu_defaults[i].mode);
    return count;
}

static int setup(bench_workload *w, mh_context *gpu, char *err, size_t len)
{
    conv1d_case *c = w->state;
    if (!c) return snprintf(err, len, "out of memory"), 0;
    if (!c->out_n) /* named here: the calls would refuse the empty buffers, not the sizes */
        return snprintf(err, len, "k = %zu is longer than n = %zu: pad = %s has no output", c->k, c->n,
                        mh_pad_name(c->pad)), 0;
    const size_t ins = c->batch * c->n, taps = c->masks * c->k, outs = c->batch * c->out_n;
    c->h_in = malloc(ins * sizeof(float));
    c->h_mask = malloc(taps * sizeof(float));
    c->h_out = malloc(outs * sizeof(float));
    if (!c->h_in || !c->h_mask || !c->h_out || !bench_sampled_alloc(&c->check, outs))
        return snprintf(err, len, "out of host memory"), 0;
    mh_fill_uniform(c->h_in, ins, 1, 1.0f);
    mh_fill_uniform(c->h_mask, taps, 2, 1.0f);
    const size_t lpad = c->mode == ZEROS ? mh_lead_pad(c->k, c->pad) : c->k / 2;
    bench_sampled *sm = &c->check;
#pragma omp parallel for schedule(dynamic, 64)
    for (long long s = 0; s < (long long)sm->count; ++s) { /* sample positions run over the whole batch */
        const size_t b = sm->at[s] / c->out_n, i = sm->at[s] % c->out_n;
        const float *x = c->h_in + b * c->n, *m = c->h_mask + (c->masks > 1 ? b * c->k : 0);
        if (c->mode == ZEROS) mh_conv1d_reference_at(x, c->n, m, c->k, lpad, i, &sm->ref[s], &sm->mag[s]);
        else mh_conv1d_reference_mode_at(x, c->n, m, c->k, lpad, (mh_mode)c->mode, 0.0f, i, &sm->ref[s], &sm->mag[s]);
    }
    if (gpu && (!bench_device_copy(&c->d_in, c->h_in, ins, err, len) ||
                !bench_device_copy(&c->d_mask, c->h_mask, taps, err, len) ||
                !bench_device_copy(&c->d_out, NULL, outs, err, len)))
        return 0;
    return 1;
}

static void teardown(bench_workload *w)
{
    conv1d_case *c = w->state;
    if (!c) return;
    cudaFree(c->d_in);
    cudaFree(c->d_mask);
    cudaFree(c->d_out);
    free(c->h_in), free(c->h_mask), free(c->h_out);
    bench_sampled_free(&c->check);
    free(c);
    w->state = NULL;
}

static void make_args(bench_workload *w, mh_context *ctx, mh_args *a)
{
    const conv1d_case *c = w->state;
    const int cpu = mh_context_device(ctx) == MH_CPU;
    const float *in = cpu ? c->h_in : c->d_in, *mask = cpu ? c->h_mask : c->d_mask;
    float *out = cpu ? c->h_out : c->d_out;
    const size_t stride = c->masks > 1 ? c->k : 0;
    if (c->mode == ZEROS) mh_conv1d_batched_args_init(ctx, a, in, c->batch, c->n, mask, stride, c->k, c->pad, out);
    else mh_conv1d_mode_args_init(ctx, a, in, c->batch, c->n, mask, stride, c->k, (mh_mode)c->mode, 0.0f, 0, out);
}

static void poison(bench_workload *w, mh_context *ctx)
{
    conv1d_case *c = w->state;
    bench_poison(ctx, c->h_out, c->d_out, c->batch * c->out_n);
}

static int check(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len)
{
    conv1d_case *c = w->state;
    size_t unwritten = 0, outs = c->batch * c->out_n;
    if (!bench_fetch(ctx, c->h_out, c->d_out, outs, why, len)) return 0;
    int ok = bench_sampled_compare(&c->check, c->h_out, outs, c->k, st, &unwritten);
    if (unwritten) return snprintf(why, len, "%zu of %zu outputs are NaN (never written)", unwritten, outs), 0;
    if (!ok)
        snprintf(why, len, "wrong: out[%zu] = %.7g, reference %.7g; rel_l2 %.2e, %zu samples over the bound",
                 c->check.at[st->first_bad], st->first_out, st->first_ref, st->rel_l2, st->bad);
    return ok;
}

const bench_driver bench_conv1d_driver = {
    MH_OP_CONV1D, "conv1d/naive", "conv1d/cpu-reference", "conv1d/cudnn", 0, plan, setup, teardown, make_args, poison, check, 1u << 2, 1u << 0,
};

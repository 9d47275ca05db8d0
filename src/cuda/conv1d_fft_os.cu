/* conv1d/fft-os: ours, overlap-save on cuFFT.
 *
 * Output i of a signal is sum_j x[i + j] m[j] with x the signal after lpad zeros (for
 * mh_conv1d_mode, the signal extended at both ends by its boundary mode). Cut the
 * outputs into segments of hop = L - k + 1; segment s needs x[s hop .. s hop + L - 1]. The
 * circular correlation of those L inputs with the mask (zero-padded to L),
 * IFFT(FFT(x_s) . conj(FFT(m))), equals the true outputs at its first hop positions: for
 * i < hop, i + j <= L - 1 never wraps. So one batched R2C over every segment, a pointwise
 * product with the mask's spectrum, one batched C2R, and the first hop values of each
 * segment are the outputs. O(log L) work per output instead of O(k).
 *
 * Passes (each a kernel or a cuFFT call on the context's stream):
 *   gather    segments (with the padding's zeros or the mode's values) into a real buffer, L floats apiece;
 *             where a chunk lies in one signal, the segments wholly inside it are not
 *             gathered: an R2C plan with idist = hop reads them in place
 *   R2C       batched, out of place into the spectrum buffer
 *   multiply  by conj(mask spectrum) / L
 *   C2R       batched, back into the real buffer
 *   compact   the first hop values of each segment into out
 * With one mask for all and many segments (use_pairs), two segments share one complex
 * transform instead: gather pairs, C2C forward in place, multiply over all L bins, C2C
 * inverse in place, compact real and imaginary parts.
 * The masks' spectra are made in the same call (gather + R2C of the zero-padded masks).
 *
 * Bounded workspace: segments run in chunks of at most MAX_CHUNK_BYTES of buffers (a few
 * thousand segments); a chunk holds whole signals when a signal has fewer segments than a
 * chunk, else part of one signal. cuFFT's own work area comes from the context's workspace
 * too (auto-allocation off), so the call's device memory is that one buffer:
 * about min(total, MAX_CHUNK_BYTES) + ~12 L bytes, whatever n and batch.
 *
 * Plans live in the context (fft_plans.h), keyed by (L, batch count, direction).
 *
 * Accuracy: FFT rounding, ~eps log2(L) times the norms of the segment and the mask, spread
 * over every output of a segment (docs/conv1d.md). A NaN or Inf input spreads to every
 * output of the segments that read it, not only to the outputs whose window holds it. */
#include "fft_plans.h"
#include "tile_io.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reading segments in place pays at small L only (the rules' conv1d_os_in_place_max_len): past
 * it cuFFT's kernels for a strided input are slower than those for its default layout.
 * Two real segments per complex transform (z = x_a + i x_b; the mask is real, so the
 * correlation of z is y_a + i y_b), one mask for all only: C2C in place instead of R2C into
 * a spectrum buffer and C2R back, the product over all L bins, faster at long k and many
 * segments (conv1d_os_pairs_always_len, conv1d_os_pairs_min_segments). With few segments
 * cuFFT's single-kernel C2C sizes have too few transforms to fill the GPU, a lone segment
 * wastes half a transform, and where segments are read in place that wins (docs/auto.md has
 * the H100's measurements). */
static const size_t MAX_CHUNK_BYTES = (size_t)256 << 20;
static const long long MIN_LEN = 1024, MAX_LEN = 1LL << 28;

/* ---- plans ----------------------------------------------------------------------------- */

/* A batched rank-1 plan (fft_plans.h): `count` transforms of length len in the default layout,
 * or with idist > 0 an R2C whose inputs start idist apart (the segments read in place). */
static mh_status get_plan(mh_context *ctx, long long len, long long count, cufftType type, long long idist,
                          mh_fft_plan **out)
{
    return mh_fft_plan_get(ctx, "fft-os", 1, &len, count, type, idist, out);
}

/* ---- kernels: blockIdx.y is the segment (or mask) within the chunk -------------------- */

typedef struct os_geometry {
    long long len, hop;    /* segment length L and outputs per segment */
    long long segs;        /* segments per signal */
    size_t n, out_n, lpad; /* the signal's */
    long long extent;      /* samples the windows read, from -lpad: out_n + k - 1 (zeros past them) */
    size_t bins;           /* len / 2 + 1 */
    tile_border border;    /* what the gathers read past the signal's ends: zeros or a boundary mode */
} os_geometry;

/* seg[c][t] = x[s hop + t - lpad] of signal b; outside [0, n) the border's value, and zero past
 * the samples the windows read (a last segment's tail: the FFT's error grows with the norm of
 * what it transforms). */
static __global__ void gather_kernel(float *seg, const float *in, os_geometry g, long long first)
{
    const long long gs = first + blockIdx.y, b = gs / g.segs, s = gs % g.segs;
    const float *x = in + (size_t)b * g.n;
    float *dst = seg + (size_t)blockIdx.y * (size_t)g.len;
    const long long start = s * g.hop - (long long)g.lpad;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < g.len; t += (long long)gridDim.x * blockDim.x) {
        const long long p = start + t;
        dst[t] = p + (long long)g.lpad < g.extent ? border_ldg(x, (long long)g.n, p, g.border) : 0.0f;
    }
}

/* seg[i][t] = mask i (of masks from `first`), zero-padded to len; as complex numbers with
 * zero imaginary parts where T is float2. */
template <typename T>
static __global__ void mask_gather_kernel(T *seg, const float *mask, size_t k, size_t mask_stride, long long len)
{
    const float *m = mask + (size_t)blockIdx.y * mask_stride;
    float *dst = (float *)(seg + (size_t)blockIdx.y * (size_t)len);
    constexpr int step = sizeof(T) / sizeof(float);
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < len; t += (long long)gridDim.x * blockDim.x) {
        dst[t * step] = t < (long long)k ? __ldg(m + t) : 0.0f;
        if (step == 2) dst[t * step + 1] = 0.0f;
    }
}

/* Pairs: z[p][t] = seg a [t] + i seg b [t] for segments a = first + 2 p, b = a + 1 (zero
 * when b is past the chunk's count), as gather_kernel reads them (zeros past the windows). */
static __global__ void gather_pairs_kernel(float2 *z, const float *in, os_geometry g, long long first,
                                           long long count)
{
    const long long p = blockIdx.y;
    float2 *dst = z + (size_t)p * (size_t)g.len;
    const float *x[2];
    long long start[2];
    for (int q = 0; q < 2; ++q) {
        const long long gs = first + 2 * p + q, b = gs / g.segs, s = gs % g.segs;
        x[q] = 2 * p + q < count ? in + (size_t)b * g.n : NULL;
        start[q] = s * g.hop - (long long)g.lpad;
    }
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < g.len; t += (long long)gridDim.x * blockDim.x) {
        float v[2];
        for (int q = 0; q < 2; ++q) {
            const long long i = start[q] + t;
            v[q] = x[q] && i + (long long)g.lpad < g.extent ? border_ldg(x[q], (long long)g.n, i, g.border) : 0.0f;
        }
        dst[t] = make_float2(v[0], v[1]);
    }
}

/* Pairs: out of segment first + 2 p is Re z[p][i], of the next one Im z[p][i], i < hop. */
static __global__ void compact_pairs_kernel(float *out, const float2 *z, os_geometry g, long long first,
                                            long long count)
{
    const long long p = blockIdx.y;
    const float2 *src = z + (size_t)p * (size_t)g.len;
    for (int q = 0; q < 2 && 2 * p + q < count; ++q) {
        const long long gs = first + 2 * p + q, b = gs / g.segs, s = gs % g.segs;
        const long long o0 = s * g.hop, n = min(g.hop, (long long)g.out_n - o0);
        float *dst = out + (size_t)b * g.out_n + o0;
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
            dst[i] = q ? src[i].y : src[i].x;
    }
}

/* spec[c][f] *= conj(mspec[mask of c][f]) / L: correlation, not convolution. */
static __global__ void multiply_kernel(float2 *spec, const float2 *mspec, os_geometry g, long long first,
                                       long long mask_base, int per_signal, float scale)
{
    const long long gs = first + blockIdx.y;
    const long long mi = per_signal ? gs / g.segs - mask_base : 0;
    float2 *x = spec + (size_t)blockIdx.y * g.bins;
    const float2 *m = mspec + (size_t)mi * g.bins;
    for (size_t f = (size_t)blockIdx.x * blockDim.x + threadIdx.x; f < g.bins; f += (size_t)gridDim.x * blockDim.x) {
        x[f] = mh_times_conj(x[f], __ldg(m + f), scale);
    }
}

/* out[b][s hop + i] = y[c][i] for i < hop, inside the signal's outputs. */
static __global__ void compact_kernel(float *out, const float *y, os_geometry g, long long first)
{
    const long long gs = first + blockIdx.y, b = gs / g.segs, s = gs % g.segs;
    const long long o0 = s * g.hop, count = min(g.hop, (long long)g.out_n - o0);
    float *dst = out + (size_t)b * g.out_n + o0;
    const float *src = y + (size_t)blockIdx.y * (size_t)g.len;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

/* ---- segment length and chunks ---------------------------------------------------------- */

/* "x<F>": L is the power of two at or above F (k - 1), at least MIN_LEN and no more than
 * the whole padded signal needs. "auto" (the default) takes the F of 2, 4, 8, 16 whose L
 * transforms the fewest samples (segments x L, 10% dearer per doubling past 8192, where
 * cuFFT's single-kernel sizes end): on the H100 at n = 16M, k = 2047 x16 is 3% faster than x8,
 * 9% than x4 and 50% than x2, and a 16384-sample signal wants x4 (3 segments of 8192, not 2 of
 * 16384). "-chunk3" caps a
 * chunk at 3 segments: the tests' way through every chunking path on small problems.
 * In-place reading (below): "auto" where L <= the rules' conv1d_os_in_place_max_len,
 * "auto-in-place" at every L,
 * "auto-gather" never. Pairs (use_pairs): "-pairs" always where there is one mask,
 * "auto-gather" and "auto-in-place" never. */
static const char *const os_configs[] = {"auto",          "x4",         "x2",        "x8",
                                         "x16",           "x2-chunk3",  "auto-gather",
                                         "auto-in-place", "auto-pairs", "x2-chunk3-pairs", NULL};
static long long chunk_cap_of(int config)
{
    const char *c = strstr(os_configs[config], "-chunk");
    return c ? atoll(c + 6) : 65535; /* grid.y bounds a chunk */
}

static long long pow2_at_least(long long v)
{
    long long p = 1;
    while (p < v) p *= 2;
    return p;
}

static long long length_for(const mh_conv1d_args *a, int factor)
{
    long long len = pow2_at_least((long long)factor * (long long)(a->k - 1));
    const long long whole = pow2_at_least((long long)(a->out_n + a->k - 1));
    if (len > whole) len = whole;
    return len < MIN_LEN ? MIN_LEN : len;
}

/* Samples transformed per signal at length len, weighted as the comment above says. */
static double transform_cost(const mh_conv1d_args *a, long long len)
{
    const double hop = (double)(len - (long long)a->k + 1), segs = ceil((double)a->out_n / hop);
    return segs * (double)len * (1.0 + 0.1 * fmax(0.0, log2((double)len) - 13.0));
}

static long long segment_length(const mh_conv1d_args *a, int config)
{
    int factor = 0;
    if (sscanf(os_configs[config], "x%d", &factor) == 1) return length_for(a, factor);
    long long best = length_for(a, 2);
    for (int f = 4; f <= 16; f *= 2)
        if (transform_cost(a, length_for(a, f)) < transform_cost(a, best)) best = length_for(a, f);
    return best;
}

static os_geometry geometry_of(const mh_conv1d_args *a, int config)
{
    os_geometry g;
    g.len = segment_length(a, config);
    g.hop = g.len - (long long)a->k + 1;
    g.segs = ((long long)a->out_n + g.hop - 1) / g.hop;
    g.n = a->n, g.out_n = a->out_n, g.lpad = a->lpad;
    g.extent = (long long)(a->out_n + a->k - 1);
    g.bins = (size_t)g.len / 2 + 1;
    g.border = a->bordered ? tile_border{(int)a->mode, a->cval} : zero_border;
    return g;
}

/* Chunk sizes: `segs` segments at most, in whole signals (`signals` of them) when a signal
 * fits, else part of one signal (signals = 1). */
typedef struct os_chunks {
    long long segs, signals;
} os_chunks;

static size_t bytes_per_segment(const os_geometry *g)
{
    return (size_t)g->len * sizeof(float) + 2 * g->bins * sizeof(float2); /* real + spectrum + mask spectrum */
}

static os_chunks chunks_of(const os_geometry *g, size_t batch, int config)
{
    long long cap = (long long)(MAX_CHUNK_BYTES / bytes_per_segment(g));
    if (cap < 1) cap = 1;
    if (cap > chunk_cap_of(config)) cap = chunk_cap_of(config);
    os_chunks c;
    if (g->segs <= cap) {
        c.signals = cap / g->segs < (long long)batch ? cap / g->segs : (long long)batch;
        c.segs = c.signals * g->segs;
    } else {
        c.signals = 1;
        c.segs = cap;
    }
    return c;
}

static unsigned blocks_for(long long items) { return (unsigned)((items + 255) / 256 < 64 ? (items + 255) / 256 : 64); }

static int use_pairs(const mh_auto_rules *r, const mh_conv1d_args *a, const os_geometry *g, int config)
{
    const char *name = os_configs[config];
    if (a->mask_stride) return 0;
    if (strstr(name, "pairs")) return 1;
    if (strstr(name, "gather") || strstr(name, "in-place") || g->len <= r->conv1d_os_in_place_max_len) return 0;
    const double segments = (double)g->segs * (double)a->batch;
    return segments >= 2 && (g->len > r->conv1d_os_pairs_always_len || segments >= r->conv1d_os_pairs_min_segments);
}

/* ---- the call ---------------------------------------------------------------------------- */

typedef struct os_call {
    mh_context *ctx;
    const mh_conv1d_args *a;
    os_geometry g;
    float *seg;
    float2 *spec, *mspec;
    void *work;
    size_t work_capacity; /* bytes at work: a plan needing more is not used */
    int in_place;         /* read a signal's inner segments in place */
    int pairs;            /* two segments per complex transform (one mask for all only) */
} os_call;

/* dir: CUFFT_FORWARD or CUFFT_INVERSE, for C2C plans */
static mh_status exec(os_call *c, mh_fft_plan *p, void *in, void *out, int dir = CUFFT_FORWARD)
{
    return mh_fft_exec(c->ctx, "fft-os", p, c->work, in, out, dir);
}

/* Spectra of masks first_mask .. first_mask + count - 1 into mspec[0 .. count - 1]. */
static mh_status mask_spectra(os_call *c, long long first_mask, long long count)
{
    const mh_conv1d_args *a = c->a;
    mh_fft_plan *p = NULL;
    mh_status s = get_plan(c->ctx, c->g.len, count, c->pairs ? CUFFT_C2C : CUFFT_R2C, 0, &p);
    if (s != MH_OK) return s;
    const dim3 grid(blocks_for(c->g.len), (unsigned)count);
    const float *mask = a->mask + (size_t)first_mask * a->mask_stride;
    if (c->pairs)
        mask_gather_kernel<<<grid, 256, 0, mh_stream(c->ctx)>>>((float2 *)c->seg, mask, a->k, a->mask_stride, c->g.len);
    else
        mask_gather_kernel<<<grid, 256, 0, mh_stream(c->ctx)>>>(c->seg, mask, a->k, a->mask_stride, c->g.len);
    if ((s = MH_LAUNCH_CHECK(c->ctx, "fft-os mask_gather_kernel")) != MH_OK) return s;
    return exec(c, p, c->seg, c->mspec);
}

/* Gathers chunk positions [from, to) of the chunk that starts at segment `first`. */
static mh_status gather(os_call *c, long long first, long long from, long long to)
{
    if (to <= from) return MH_OK;
    const dim3 grid(blocks_for(c->g.len), (unsigned)(to - from));
    gather_kernel<<<grid, 256, 0, mh_stream(c->ctx)>>>(c->seg + (size_t)from * (size_t)c->g.len, c->a->in, c->g,
                                                       first + from);
    return MH_LAUNCH_CHECK(c->ctx, "fft-os gather_kernel");
}

/* The chunk positions [*lo, *hi) whose segments lie wholly inside their signal, when the
 * chunk is within one signal and at least two do, and every one of them starts on an 8-byte
 * boundary (an even-length R2C views its input as complex pairs); else an empty range. */
static void inner_segments(const os_call *c, long long first, long long count, long long *lo, long long *hi)
{
    const os_geometry *g = &c->g;
    *lo = *hi = 0;
    if (!c->in_place || first / g->segs != (first + count - 1) / g->segs) return;
    const long long s0 = first % g->segs, lpad = (long long)g->lpad, n = (long long)g->n;
    /* segment s reads [s hop - lpad, s hop - lpad + len) */
    const long long s_lo = (lpad + g->hop - 1) / g->hop, s_hi = n + lpad >= g->len ? (n + lpad - g->len) / g->hop + 1 : 0;
    const long long l = (s_lo > s0 ? s_lo : s0) - s0, h = (s_hi < s0 + count ? s_hi : s0 + count) - s0;
    if (h - l < 2 || g->hop % 2) return;
    const float *start = c->a->in + (size_t)(first / g->segs) * g->n + (size_t)((s0 + l) * g->hop - lpad);
    if (((uintptr_t)start & 7) == 0) *lo = l, *hi = h;
}

/* R2C of the chunk's segments into c->spec: inner segments straight from the input (an R2C
 * whose inputs start hop apart: no gather pass, ~2 L bytes per segment less traffic), edge
 * segments gathered with their zeros (or the mode's values). Falls back to gathering all where a plan's work area
 * would not fit the one sized for the call. */
static mh_status forward_segments(os_call *c, long long first, long long count)
{
    const os_geometry *g = &c->g;
    long long lo, hi;
    inner_segments(c, first, count, &lo, &hi);
    mh_fft_plan *head = NULL, *inner = NULL, *tail = NULL, *all = NULL;
    mh_status s = MH_OK;
    if (hi > lo) {
        s = get_plan(c->ctx, g->len, hi - lo, CUFFT_R2C, g->hop, &inner);
        if (s == MH_OK && lo > 0) s = get_plan(c->ctx, g->len, lo, CUFFT_R2C, 0, &head);
        if (s == MH_OK && count > hi) s = get_plan(c->ctx, g->len, count - hi, CUFFT_R2C, 0, &tail);
        if (s != MH_OK) return s;
        if (inner->work_bytes > c->work_capacity || (head && head->work_bytes > c->work_capacity) ||
            (tail && tail->work_bytes > c->work_capacity))
            lo = hi = 0;
    }
    if (hi == lo) {
        if ((s = get_plan(c->ctx, g->len, count, CUFFT_R2C, 0, &all)) != MH_OK) return s;
        if ((s = gather(c, first, 0, count)) != MH_OK) return s;
        return exec(c, all, c->seg, c->spec);
    }
    const long long b = first / g->segs, s0 = first % g->segs;
    const float *x = c->a->in + (size_t)b * g->n + (size_t)((s0 + lo) * g->hop - (long long)g->lpad);
    if ((s = gather(c, first, 0, lo)) != MH_OK || (s = gather(c, first, hi, count)) != MH_OK) return s;
    if (head && (s = exec(c, head, c->seg, c->spec)) != MH_OK) return s;
    /* cuFFT's out-of-place R2C leaves its input as it was: the caller's signal is read only */
    if ((s = exec(c, inner, (void *)x, c->spec + (size_t)lo * g->bins)) != MH_OK) return s;
    if (tail && (s = exec(c, tail, c->seg + (size_t)hi * (size_t)g->len, c->spec + (size_t)hi * g->bins)) != MH_OK)
        return s;
    return MH_OK;
}

/* Pairs: the same passes as run_chunk on (count + 1) / 2 complex transforms of length L, in
 * place in c->seg; the product with the whole spectrum of the one real mask. */
static mh_status run_chunk_pairs(os_call *c, long long first, long long count)
{
    const cudaStream_t st = mh_stream(c->ctx);
    const long long pairs = (count + 1) / 2;
    float2 *z = (float2 *)c->seg;
    mh_fft_plan *p = NULL;
    mh_status s = get_plan(c->ctx, c->g.len, pairs, CUFFT_C2C, 0, &p);
    if (s != MH_OK) return s;
    gather_pairs_kernel<<<dim3(blocks_for(c->g.len), (unsigned)pairs), 256, 0, st>>>(z, c->a->in, c->g, first, count);
    if ((s = MH_LAUNCH_CHECK(c->ctx, "fft-os gather_pairs_kernel")) != MH_OK) return s;
    if ((s = exec(c, p, z, z, CUFFT_FORWARD)) != MH_OK) return s;
    os_geometry whole = c->g; /* every one of the L bins */
    whole.bins = (size_t)c->g.len;
    multiply_kernel<<<dim3(blocks_for(c->g.len), (unsigned)pairs), 256, 0, st>>>(z, c->mspec, whole, 0, 0, 0,
                                                                              1.0f / (float)c->g.len);
    if ((s = MH_LAUNCH_CHECK(c->ctx, "fft-os multiply_kernel")) != MH_OK) return s;
    if ((s = exec(c, p, z, z, CUFFT_INVERSE)) != MH_OK) return s;
    compact_pairs_kernel<<<dim3(blocks_for(c->g.hop), (unsigned)pairs), 256, 0, st>>>(c->a->out, z, c->g, first, count);
    return MH_LAUNCH_CHECK(c->ctx, "fft-os compact_pairs_kernel");
}

/* Segments first .. first + count - 1 of the whole batch, with masks from mask_base. */
static mh_status run_chunk(os_call *c, long long first, long long count, long long mask_base)
{
    if (c->pairs) return run_chunk_pairs(c, first, count);
    const cudaStream_t st = mh_stream(c->ctx);
    mh_fft_plan *inv = NULL;
    mh_status s = get_plan(c->ctx, c->g.len, count, CUFFT_C2R, 0, &inv);
    if (s != MH_OK || (s = forward_segments(c, first, count)) != MH_OK) return s;
    multiply_kernel<<<dim3(blocks_for((long long)c->g.bins), (unsigned)count), 256, 0, st>>>(
        c->spec, c->mspec, c->g, first, mask_base, c->a->mask_stride != 0, 1.0f / (float)c->g.len);
    if ((s = MH_LAUNCH_CHECK(c->ctx, "fft-os multiply_kernel")) != MH_OK) return s;
    if ((s = exec(c, inv, c->spec, c->seg)) != MH_OK) return s;
    compact_kernel<<<dim3(blocks_for(c->g.hop), (unsigned)count), 256, 0, st>>>(c->a->out, c->seg, c->g, first);
    return MH_LAUNCH_CHECK(c->ctx, "fft-os compact_kernel");
}

/* Every plan this call will use, made before the workspace is sized: their work areas
 * share the workspace's tail. */
static mh_status plan_all(os_call *c, const os_chunks *ch, size_t *work_bytes)
{
    const mh_conv1d_args *a = c->a;
    long long counts[2] = {ch->segs, 0}, masks[2] = {a->mask_stride ? ch->signals : 1, 0};
    if (ch->signals > 1 && (long long)a->batch % ch->signals) { /* a last chunk of fewer signals */
        counts[1] = ((long long)a->batch % ch->signals) * c->g.segs;
        masks[1] = a->mask_stride ? (long long)a->batch % ch->signals : 0;
    } else if (ch->signals == 1 && c->g.segs % ch->segs) { /* a signal's last part */
        counts[1] = c->g.segs % ch->segs;
    }
    *work_bytes = 0;
    for (int i = 0; i < 2; ++i)
        for (int d = 0; d < 2 && counts[i]; ++d) {
            mh_fft_plan *p = NULL;
            mh_status s = c->pairs ? get_plan(c->ctx, c->g.len, (counts[i] + 1) / 2, CUFFT_C2C, 0, &p)
                                   : get_plan(c->ctx, c->g.len, counts[i], d ? CUFFT_C2R : CUFFT_R2C, 0, &p);
            if (s != MH_OK) return s;
            if (p->work_bytes > *work_bytes) *work_bytes = p->work_bytes;
        }
    for (int i = 0; i < 2 && masks[i]; ++i) {
        mh_fft_plan *p = NULL;
        mh_status s = get_plan(c->ctx, c->g.len, masks[i], c->pairs ? CUFFT_C2C : CUFFT_R2C, 0, &p);
        if (s != MH_OK) return s;
        if (p->work_bytes > *work_bytes) *work_bytes = p->work_bytes;
    }
    long long lo, hi; /* the first chunk's in-place plan: the others reuse its size or fall back */
    inner_segments(c, 0, ch->segs < c->g.segs ? ch->segs : c->g.segs, &lo, &hi);
    if (hi > lo) {
        mh_fft_plan *p = NULL;
        mh_status s = get_plan(c->ctx, c->g.len, hi - lo, CUFFT_R2C, c->g.hop, &p);
        if (s != MH_OK) return s;
        if (p->work_bytes > *work_bytes) *work_bytes = p->work_bytes;
    }
    return MH_OK;
}

static mh_status os_run(mh_context *ctx, const mh_args *args)
{
    const mh_conv1d_args *a = &args->conv1d;
    os_call c = {ctx, a, geometry_of(a, args->config), NULL, NULL, NULL, NULL, 0, 0, 0};
    c.pairs = use_pairs(ctx->rules, a, &c.g, args->config);
    c.in_place = !c.pairs && (strstr(os_configs[args->config], "in-place") != NULL ||
                              (strstr(os_configs[args->config], "gather") == NULL &&
                               c.g.len <= ctx->rules->conv1d_os_in_place_max_len));
    const os_chunks ch = chunks_of(&c.g, a->batch, args->config);
    size_t work_bytes;
    mh_status s = plan_all(&c, &ch, &work_bytes);
    if (s != MH_OK) return s;
    const long long seg_cap = ch.segs;
    const long long mask_cap = a->mask_stride ? ch.signals : 1;
    /* pairs: (seg_cap + 1) / 2 complex rows of L, transformed in place; the mask's L bins */
    const size_t seg_floats = (size_t)(c.pairs ? seg_cap + 1 : seg_cap) * (size_t)c.g.len;
    const size_t mspec_bins = (size_t)mask_cap * (c.pairs ? (size_t)c.g.len : c.g.bins);
    const size_t seg_bytes = mh_align_up(seg_floats * sizeof(float), 256);
    const size_t spec_bytes = c.pairs ? 0 : mh_align_up((size_t)seg_cap * c.g.bins * sizeof(float2), 256);
    const size_t mspec_bytes = mh_align_up(mspec_bins * sizeof(float2), 256);
    void *ws;
    if ((s = mh_workspace(ctx, seg_bytes + spec_bytes + mspec_bytes + work_bytes, &ws)) != MH_OK) return s;
    c.seg = (float *)ws;
    c.spec = (float2 *)((char *)ws + seg_bytes);
    c.mspec = (float2 *)((char *)ws + seg_bytes + spec_bytes);
    c.work = (char *)ws + seg_bytes + spec_bytes + mspec_bytes;
    c.work_capacity = work_bytes;

    if (!a->mask_stride && (s = mask_spectra(&c, 0, 1)) != MH_OK) return s; /* one mask: once */
    if (c.g.segs <= ch.segs) { /* chunks of whole signals */
        for (long long b0 = 0; b0 < (long long)a->batch; b0 += ch.signals) {
            const long long p = (long long)a->batch - b0 < ch.signals ? (long long)a->batch - b0 : ch.signals;
            if (a->mask_stride && (s = mask_spectra(&c, b0, p)) != MH_OK) return s;
            if ((s = run_chunk(&c, b0 * c.g.segs, p * c.g.segs, b0)) != MH_OK) return s;
        }
        return MH_OK;
    }
    for (long long b = 0; b < (long long)a->batch; ++b) { /* long signals: parts of one */
        if (a->mask_stride && (s = mask_spectra(&c, b, 1)) != MH_OK) return s;
        for (long long s0 = 0; s0 < c.g.segs; s0 += ch.segs) {
            const long long count = c.g.segs - s0 < ch.segs ? c.g.segs - s0 : ch.segs;
            if ((s = run_chunk(&c, b * c.g.segs + s0, count, b)) != MH_OK) return s;
        }
    }
    return MH_OK;
}

static int os_supports(const mh_context *, const mh_args *args, char *why, size_t len)
{
    const mh_conv1d_args *a = &args->conv1d;
    if (!mh_conv1d_finite_border(a, why, len)) return 0;
    if ((long long)a->k > MAX_LEN / 4) {
        snprintf(why, len, "k = %zu needs segments past 2^28 samples", a->k);
        return 0;
    }
    return 1;
}

static const mh_row rows[] = {
    {{"conv1d/fft-os", MH_OP_CONV1D, MH_BACKEND_CUDA, 12, "global (cuFFT)", "ours",
      "overlap-save on cuFFT: batched R2C of L-sample segments, conj mask spectrum, C2R; any k, batched"},
     os_supports, os_run, os_configs, 1, MH_LIB_CUFFT, NULL, MH_ROW_NORMWISE | MH_ROW_BORDER_MODES},
};

MH_ROW_GROUP(mh_conv1d_fft_os_rows, rows)

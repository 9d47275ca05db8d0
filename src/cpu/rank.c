/* rank on the CPU (mh_rank: scipy.ndimage's selection filters).
 *   cpu-reference  a window's keys sorted whole (insertion sort), the rank read off: the
 *                  definition, for the tests
 *   cpu-omp        a window's keys gathered once an output, the minimum or maximum by one scan,
 *                  other ranks by a quickselect; OpenMP over the images' rows; footprints over
 *                  three axes (volumes) too
 *   cpu-minmax     the minimum or maximum over a line (scipy's separable passes; a rectangle as a
 *                  pass along its rows and one down its columns) by van Herk's and Gil and
 *                  Werman's running extremes: three comparisons an output whatever the window;
 *                  OpenMP over groups of lines
 *   cpu-median3x3  the median of a full 3 x 3 window: each input row's keys sorted across the
 *                  window's columns once for the three output rows over it; OpenMP over bands
 *   cpu-histogram  any rank under any footprint of an 8-bit image: a histogram of 256 counts
 *                  slides along each output row (Huang's), the rank's key tracked; OpenMP over
 *                  bands
 *   cpu-median5x5, cpu-median7x7  the median of a full 5 x 5 or 7 x 7 window: each input row's
 *                  keys sorted across the window's columns once, output rows in pairs sharing the
 *                  merge of the rows both windows hold (src/core/rank_median_rows.h); OpenMP over
 *                  bands
 *   cpu-median3x3x3  the median of a full 3 x 3 x 3 window of a volume: the same walk across the
 *                  planes, a plane's nine keys a value sorted once; OpenMP over tiles of rows and
 *                  bands of planes */
#include "../core/internal.h"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/rank_key.h"
#include "../core/rank_line.h"
#define MH_MEDIAN_KEY uint64_t
#include "../core/rank_median_rows.h"

#include <omp.h>
#include <stdlib.h>

/* The footprint's set elements as offsets from the output's position (plane, row, column), in C
 * order, with their structure's values as they are added (0 without one); the same as distances
 * in the array (delta), and how far the window reaches from its output each way. */
typedef struct rank_window {
    long long *dp, *dr, *dc, *delta;
    double *s;
    long long front, back, above, below, before, after;
} rank_window;

static long long reach_before(long long o, long long reach) { return o < -reach ? -o : reach; }
static long long reach_after(long long o, long long reach) { return o > reach ? o : reach; }

static int window_make(const mh_rank_args *a, rank_window *w)
{
    const mh_rank_desc *d = &a->d;
    w->dp = malloc(a->count * sizeof *w->dp), w->dr = malloc(a->count * sizeof *w->dr);
    w->dc = malloc(a->count * sizeof *w->dc), w->delta = malloc(a->count * sizeof *w->delta);
    w->s = malloc(a->count * sizeof *w->s);
    if (!w->dp || !w->dr || !w->dc || !w->delta || !w->s) return 0;
    const long long anchor_p = (long long)(d->kdepth / 2) + d->origin_depth;
    const long long anchor_r = (long long)(d->krows / 2) + d->origin_row;
    const long long anchor_c = (long long)(d->kcols / 2) + d->origin_col;
    w->front = w->back = w->above = w->below = w->before = w->after = 0;
    size_t n = 0, e = 0;
    for (size_t p = 0; p < d->kdepth; ++p)
        for (size_t r = 0; r < d->krows; ++r)
            for (size_t c = 0; c < d->kcols; ++c, ++e)
                if (d->footprint[e]) {
                    w->dp[n] = (long long)p - anchor_p, w->dr[n] = (long long)r - anchor_r;
                    w->dc[n] = (long long)c - anchor_c;
                    w->delta[n] = ((w->dp[n] * (long long)d->rows + w->dr[n]) * (long long)d->cols + w->dc[n]) *
                                  (long long)d->channels;
                    w->s[n] = d->structure ? d->structure[e] : 0.0;
                    w->front = reach_before(w->dp[n], w->front), w->back = reach_after(w->dp[n], w->back);
                    w->above = reach_before(w->dr[n], w->above), w->below = reach_after(w->dr[n], w->below);
                    w->before = reach_before(w->dc[n], w->before), w->after = reach_after(w->dc[n], w->after);
                    ++n;
                }
    return 1;
}

static void window_free(rank_window *w) { free(w->dp), free(w->dr), free(w->dc), free(w->delta), free(w->s); }

/* The keys of output (b, z, y, x, ch)'s window into keys (count of them): a window inside the
 * volume by its distances from the output, one at the edges through the mode. */
static void gather(const mh_rank_args *a, const rank_window *w, size_t b, long long z, long long y, long long x,
                   size_t ch, uint64_t *keys)
{
    const mh_rank_desc *d = &a->d;
    const long long depth = (long long)d->depth, rows = (long long)d->rows, cols = (long long)d->cols;
    if (!d->structure && z >= w->front && z + w->back < depth && y >= w->above && y + w->below < rows &&
        x >= w->before && x + w->after < cols) {
        const size_t at = (((b * d->depth + (size_t)z) * d->rows + (size_t)y) * d->cols + (size_t)x) * d->channels + ch;
        for (size_t i = 0; i < a->count; ++i)
            keys[i] = mh_rank_key(mh_load_double(a->in, (size_t)((long long)at + w->delta[i]), d->in_type));
        return;
    }
    for (size_t i = 0; i < a->count; ++i) {
        const long long p = mh_border_index(z + w->dp[i], depth, d->mode);
        const long long r = mh_border_index(y + w->dr[i], rows, d->mode);
        const long long c = mh_border_index(x + w->dc[i], cols, d->mode);
        const int outside = p < 0 || r < 0 || c < 0;
        const size_t at =
            outside ? 0 : (((b * d->depth + (size_t)p) * d->rows + (size_t)r) * d->cols + (size_t)c) * d->channels + ch;
        if (d->structure && d->structure_in_type && i > 0) { /* scipy's: the first element in float64 */
            keys[i] = mh_rank_key(mh_rank_sum_in_type(a->in, at, outside, d->cval, d->in_type, w->s[i]));
            continue;
        }
        const double v = outside ? d->cval : mh_load_double(a->in, at, d->in_type);
        keys[i] = mh_rank_key(d->structure ? v + w->s[i] : v); /* + 0.0 would turn -0.0 into +0.0 */
    }
}

static uint64_t select_sorted(uint64_t *keys, size_t n, size_t rank)
{
    for (size_t i = 1; i < n; ++i) {
        const uint64_t k = keys[i];
        size_t j = i;
        for (; j > 0 && keys[j - 1] > k; --j) keys[j] = keys[j - 1];
        keys[j] = k;
    }
    return keys[rank];
}

static void swap_keys(uint64_t *keys, size_t i, size_t j)
{
    const uint64_t t = keys[i];
    keys[i] = keys[j], keys[j] = t;
}

/* The key of rank `rank` among keys[0 .. n), reordering them: partitions in three about a median
 * of three (below, equal, above: the equal run is never empty, so each round shrinks the range),
 * short ranges sorted. */
static uint64_t select_quick(uint64_t *keys, size_t n, size_t rank)
{
    size_t lo = 0, hi = n;
    for (;;) {
        if (hi - lo <= 16) return select_sorted(keys + lo, hi - lo, rank - lo);
        const uint64_t a = keys[lo], b = keys[lo + (hi - lo) / 2], c = keys[hi - 1];
        const uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (keys[i] < pivot) swap_keys(keys, lt++, i++);
            else if (keys[i] > pivot) swap_keys(keys, i, --gt);
            else ++i;
        }
        if (rank < lt) hi = lt;
        else if (rank >= gt) lo = gt;
        else return pivot;
    }
}

static uint64_t select_scan(uint64_t *keys, size_t n, size_t rank)
{
    uint64_t best = keys[0];
    for (size_t i = 1; i < n; ++i)
        if (rank == 0 ? keys[i] < best : keys[i] > best) best = keys[i];
    return best;
}

typedef uint64_t (*rank_select_fn)(uint64_t *keys, size_t n, size_t rank);

/* Every output of the images (or volumes), rows shared among OpenMP's threads (one thread where `parallel`
 * is 0), each thread's keys in its own slice of one buffer. */
static mh_status run_rows(const mh_rank_args *a, rank_select_fn pick, int parallel)
{
    const mh_rank_desc *d = &a->d;
    rank_window w = {0};
    const int threads = parallel ? omp_get_max_threads() : 1;
    size_t bytes;
    uint64_t *keys = mh_mul_ok((size_t)threads, a->count * sizeof *keys, &bytes) ? (uint64_t *)malloc(bytes) : NULL;
    if (!keys || !window_make(a, &w)) {
        free(keys), window_free(&w);
        return MH_ERR_OUT_OF_MEMORY;
    }
    const long long lines = (long long)(d->batch * d->depth * d->rows);
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads) if (parallel)
    for (long long line = 0; line < lines; ++line) {
        uint64_t *mine = keys + (size_t)omp_get_thread_num() * a->count;
        const size_t b = (size_t)line / (d->depth * d->rows);
        const long long z = (long long)((size_t)line / d->rows % d->depth), y = line % (long long)d->rows;
        for (size_t x = 0; x < d->cols; ++x)
            for (size_t ch = 0; ch < d->channels; ++ch) {
                gather(a, &w, b, z, y, (long long)x, ch, mine);
                const size_t at = (((size_t)line * d->cols) + x) * d->channels + ch;
                mh_store_double(a->out, at, d->out_type, mh_rank_value(pick(mine, a->count, d->rank)));
            }
    }
    free(keys), window_free(&w);
    return MH_OK;
}

static mh_status reference_run(mh_context *ctx, const mh_args *args)
{
    const mh_status s = run_rows(&args->rank, select_sorted, 0);
    return s == MH_OK ? s : mh_fail(ctx, s, "rank/cpu-reference: out of host memory for the window's keys");
}

static mh_status omp_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const int extreme = a->d.rank == 0 || a->d.rank == a->count - 1;
    const mh_status s = run_rows(a, extreme ? select_scan : select_quick, 1);
    return s == MH_OK ? s : mh_fail(ctx, s, "rank/cpu-omp: out of host memory for the window's keys");
}

/* ---- cpu-minmax ---------------------------------------------------------------------------
 * A pass takes MINMAX_WIDTH lines side by side (consecutive inner values: one cache line of
 * keys a position where the lines run down columns): their keys over n + k - 1 positions (the
 * line and the mode's extension past its ends), cut into blocks of k; the prefix extremes of
 * each block in place, its suffix extremes beside them; the window of output j, positions j to
 * j + k - 1, the lesser of the suffix from j and the prefix to j + k - 1. A maximum runs as the
 * minimum of the keys' complements. */
enum { MINMAX_WIDTH = 16 };

static uint64_t least(uint64_t a, uint64_t b) { return b < a ? b : a; }

/* Lines i0 to i0 + w - 1 of outer index o: prefix (n + k - 1 positions of MINMAX_WIDTH keys) and
 * suffix are the caller's scratch. */
static void minmax_lines(const mh_rank_desc *d, const mh_rank_line *l, const void *in, mh_dtype in_type, void *out,
                         mh_dtype out_type, size_t o, size_t i0, size_t w, uint64_t *prefix, uint64_t *suffix)
{
    const uint64_t flip = d->rank == 0 ? 0 : ~0ull, cval_key = mh_rank_key(d->cval) ^ flip;
    const size_t span = l->n + l->k - 1, base = o * l->n * l->inner + i0;
    for (size_t p = 0; p < span; ++p) {
        const long long src = mh_border_index((long long)p - l->anchor, (long long)l->n, d->mode);
        for (size_t c = 0; c < w; ++c)
            prefix[p * MINMAX_WIDTH + c] =
                src < 0 ? cval_key : mh_rank_key(mh_load_double(in, base + (size_t)src * l->inner + c, in_type)) ^ flip;
    }
    for (size_t b0 = 0; b0 < span; b0 += l->k) {
        const size_t b1 = span - b0 < l->k ? span : b0 + l->k;
        for (size_t c = 0; c < w; ++c) suffix[(b1 - 1) * MINMAX_WIDTH + c] = prefix[(b1 - 1) * MINMAX_WIDTH + c];
        for (size_t p = b1 - 1; p-- > b0;)
            for (size_t c = 0; c < w; ++c)
                suffix[p * MINMAX_WIDTH + c] = least(prefix[p * MINMAX_WIDTH + c], suffix[(p + 1) * MINMAX_WIDTH + c]);
        for (size_t p = b0 + 1; p < b1; ++p)
            for (size_t c = 0; c < w; ++c)
                prefix[p * MINMAX_WIDTH + c] = least(prefix[p * MINMAX_WIDTH + c], prefix[(p - 1) * MINMAX_WIDTH + c]);
    }
    for (size_t j = 0; j < l->n; ++j)
        for (size_t c = 0; c < w; ++c) {
            const uint64_t key = least(suffix[j * MINMAX_WIDTH + c], prefix[(j + l->k - 1) * MINMAX_WIDTH + c]) ^ flip;
            mh_store_double(out, base + j * l->inner + c, out_type, mh_rank_value(key));
        }
}

/* One pass of l from in (of in_type) into out (of out_type), each of `threads` threads with its
 * slice of scratch, `per_thread` keys. */
static void minmax_pass(const mh_rank_desc *d, const mh_rank_line *l, const void *in, mh_dtype in_type, void *out,
                        mh_dtype out_type, uint64_t *scratch, size_t per_thread, int threads)
{
    const size_t groups = (l->inner + MINMAX_WIDTH - 1) / MINMAX_WIDTH;
    const long long items = (long long)(l->outer * groups);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (long long item = 0; item < items; ++item) {
        uint64_t *mine = scratch + (size_t)omp_get_thread_num() * per_thread;
        const size_t o = (size_t)item / groups, i0 = (size_t)item % groups * MINMAX_WIDTH;
        const size_t w = l->inner - i0 < MINMAX_WIDTH ? l->inner - i0 : MINMAX_WIDTH;
        minmax_lines(d, l, in, in_type, out, out_type, o, i0, w, mine, mine + per_thread / 2);
    }
}

static int minmax_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    (void)ctx;
    const mh_rank_desc *d = &args->rank.d;
    if (!mh_rank_extreme(&args->rank, why, len)) return 0;
    return d->krows == 1 || d->kcols == 1 || mh_rank_passes_hold(d, why, len);
}

/* A line in one pass; a rectangle as a pass along its rows into host memory of
 * mh_rank_between_passes's type and one down its columns from it. Every buffer is allocated
 * before the first output is written. */
static mh_status minmax_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    char why[200];
    if (!minmax_supports(ctx, args, why, sizeof why)) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "rank/cpu-minmax: %s", why);
    const int rectangle = d->krows > 1 && d->kcols > 1, threads = omp_get_max_threads();
    const mh_rank_line first = mh_rank_line_along(d, rectangle ? 0 : d->kcols == 1), second = mh_rank_line_along(d, 1);
    const size_t longest = rectangle && second.n + second.k > first.n + first.k ? second.n + second.k : first.n + first.k;
    const mh_dtype between = rectangle ? (mh_dtype)mh_rank_between_passes(d) : d->out_type;
    size_t per_thread, keys, bytes = 0;
    uint64_t *scratch = mh_mul_ok(longest - 1, 2 * MINMAX_WIDTH, &per_thread) &&
                                mh_mul_ok(per_thread, (size_t)threads * sizeof(uint64_t), &keys)
                            ? (uint64_t *)malloc(keys)
                            : NULL;
    void *stored = rectangle && mh_mul_ok(a->values, mh_dtype_size(between), &bytes) ? malloc(bytes) : NULL;
    if (!scratch || (rectangle && !stored)) {
        free(scratch), free(stored);
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "rank/cpu-minmax: out of host memory for a pass's keys");
    }
    minmax_pass(d, &first, a->in, d->in_type, rectangle ? stored : a->out, between, scratch, per_thread, threads);
    if (rectangle) minmax_pass(d, &second, stored, between, a->out, d->out_type, scratch, per_thread, threads);
    free(scratch), free(stored);
    return MH_OK;
}

/* Output rows y0 to y1 - 1 of image b, with a thread's scratch. */
typedef void (*rank_band_fn)(const mh_rank_args *a, size_t b, long long y0, long long y1, void *scratch);

/* Bands of `band` of n lines (an image's rows, a volume's planes) of each of `outer` units (the
 * images; a volume's tiles of rows) over OpenMP's threads, each thread with its slice of
 * `per_thread` bytes of scratch, all allocated before any output is written (0: out of host
 * memory). */
static int run_items(const mh_rank_args *a, size_t outer, size_t n, size_t band, size_t per_thread,
                     rank_band_fn run_band)
{
    const int threads = omp_get_max_threads();
    size_t bytes;
    unsigned char *scratch = mh_mul_ok(per_thread, (size_t)threads, &bytes) ? (unsigned char *)malloc(bytes) : NULL;
    if (!scratch) return 0;
    const size_t bands = (n + band - 1) / band;
    const long long items = (long long)(outer * bands);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (long long item = 0; item < items; ++item) {
        const size_t b = (size_t)item / bands;
        const long long y0 = (long long)((size_t)item % bands * band), end = y0 + (long long)band;
        run_band(a, b, y0, end < (long long)n ? end : (long long)n, scratch + (size_t)omp_get_thread_num() * per_thread);
    }
    free(scratch);
    return 1;
}

/* Bands of `band` output rows of every image (run_items). */
static int run_bands(const mh_rank_args *a, size_t band, size_t per_thread, rank_band_fn run_band)
{
    return run_items(a, a->d.batch, a->d.rows, band, per_thread, run_band);
}

/* ---- cpu-median3x3 -------------------------------------------------------------------------
 * The median of a full 3 x 3 window (median_filter(size=3)) a row of outputs at a time: an input
 * row's keys once, extended two columns each way by the mode; then, for every value of the row,
 * the three keys of its window's columns sorted (least, middle, greatest) once for the three
 * output rows over it; an output's median the median of the greatest of its rows' least keys,
 * the median of their middle ones and the least of their greatest (the nine keys' median,
 * whichever order the rows come in). Loops along a row's values; OpenMP over bands of rows. */
enum { MEDIAN3_BAND = 32 };

static uint64_t greater(uint64_t a, uint64_t b) { return a < b ? b : a; }
static uint64_t middle(uint64_t a, uint64_t b, uint64_t c) { return greater(least(a, b), least(greater(a, b), c)); }

/* The keys of n values of type t from in + base: the type's switch outside the loop (through
 * mh_load_double's per value, float32 rows ran at half float64's speed). */
static void keys_of(const void *in, mh_dtype t, size_t base, size_t n, uint64_t *keys)
{
#define MH_KEYS_OF(type)                                                                                               \
    for (size_t i = 0; i < n; ++i) keys[i] = mh_rank_key((double)((const type *)in)[base + i]);                      \
    return
    switch (t) {
    case MH_F32: MH_KEYS_OF(float);
    case MH_U8: MH_KEYS_OF(uint8_t);
    case MH_I8: MH_KEYS_OF(int8_t);
    case MH_U16: MH_KEYS_OF(uint16_t);
    case MH_I16: MH_KEYS_OF(int16_t);
    case MH_I32: MH_KEYS_OF(int32_t);
    case MH_U32: MH_KEYS_OF(uint32_t);
    default: break;
    }
#undef MH_KEYS_OF
    for (size_t i = 0; i < n; ++i) keys[i] = mh_rank_key(mh_load_double(in, base + i, t));
}

/* One input row's sorted keys, a value of the row each: scratch of 3 x row_values keys. */
typedef struct median3_sorted {
    uint64_t *least, *middle, *greatest;
} median3_sorted;

/* Input row r (mapped through the mode) of image b as keys, extended `ext` columns each way by
 * the mode: keys holds (cols + 2 ext) x channels, column c's at (c + ext) x channels. */
static void extended_row(const mh_rank_args *a, size_t b, long long r, long long ext, uint64_t *keys)
{
    const mh_rank_desc *d = &a->d;
    const size_t C = d->channels, values = d->cols * C;
    const long long src = mh_border_index(r, (long long)d->rows, d->mode), cols = (long long)d->cols;
    const uint64_t cval = mh_rank_key(d->cval);
    if (src < 0) {
        for (size_t i = 0; i < values + 2 * (size_t)ext * C; ++i) keys[i] = cval;
        return;
    }
    keys_of(a->in, d->in_type, (b * d->rows + (size_t)src) * values, values, keys + (size_t)ext * C);
    for (long long c = -ext; c < cols + ext; c += c == -1 ? cols + 1 : 1) {
        const long long m = mh_border_index(c, cols, d->mode);
        for (size_t ch = 0; ch < C; ++ch)
            keys[(size_t)(c + ext) * C + ch] = m < 0 ? cval : keys[(size_t)(m + ext) * C + ch];
    }
}

/* Input row r (mapped through the mode) of image b as each value's window columns' sorted keys;
 * keys: scratch of (cols + 4) x channels, the row's keys from column -2 to cols + 1. */
static void median3_sort_row(const mh_rank_args *a, size_t b, long long r, uint64_t *keys, median3_sorted s)
{
    const mh_rank_desc *d = &a->d;
    const size_t C = d->channels, values = d->cols * C;
    extended_row(a, b, r, 2, keys);
    const long long anchor = 1 + d->origin_col; /* the window's columns: x - anchor + 0, 1, 2 */
    const uint64_t *k0 = keys + (size_t)(2 - anchor) * C, *k1 = k0 + C, *k2 = k1 + C;
    for (size_t i = 0; i < values; ++i) {
        const uint64_t x = k0[i], y = k1[i], z = k2[i];
        const uint64_t lo = least(least(x, y), z), hi = greater(greater(x, y), z);
        s.least[i] = lo, s.middle[i] = x ^ y ^ z ^ lo ^ hi, s.greatest[i] = hi;
    }
}

/* Output rows y0 to y1 - 1 of image b; scratch: (cols + 4) x channels keys, then three rows'
 * sorted keys (3 x 3 x row_values). */
static void median3_band(const mh_rank_args *a, size_t b, long long y0, long long y1, void *scratch)
{
    const mh_rank_desc *d = &a->d;
    const size_t values = d->cols * d->channels;
    uint64_t *keys = (uint64_t *)scratch, *rows = keys + values + 4 * d->channels;
    median3_sorted ring[3];
    for (int j = 0; j < 3; ++j)
        ring[j] = (median3_sorted){rows + 3 * j * values, rows + (3 * j + 1) * values, rows + (3 * j + 2) * values};
    const long long top = -(1 + d->origin_row); /* output y's window: input rows y + top + 0, 1, 2 */
    median3_sort_row(a, b, y0 + top, keys, ring[0]);
    median3_sort_row(a, b, y0 + top + 1, keys, ring[1]);
    for (long long y = y0; y < y1; ++y) {
        const median3_sorted t = ring[(y - y0 + 2) % 3], u = ring[(y - y0) % 3], v = ring[(y - y0 + 1) % 3];
        median3_sort_row(a, b, y + top + 2, keys, t);
        const size_t at = (b * d->rows + (size_t)y) * values;
        for (size_t i = 0; i < values; ++i) {
            const uint64_t lo = greater(greater(t.least[i], u.least[i]), v.least[i]);
            const uint64_t mid = middle(t.middle[i], u.middle[i], v.middle[i]);
            const uint64_t hi = least(least(t.greatest[i], u.greatest[i]), v.greatest[i]);
            mh_store_double(a->out, at + i, d->out_type, mh_rank_value(middle(lo, mid, hi)));
        }
    }
}

static int median3_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    (void)ctx;
    return mh_rank_median3(&args->rank, why, len);
}

/* A median row's run: bands of `band` output rows over run_bands, each thread's scratch an input
 * row's keys extended `ext` columns each way and `per_value` keys a value of a row. */
static mh_status median_bands(mh_context *ctx, const mh_args *args, const char *name, size_t side, size_t band,
                              size_t per_value, rank_band_fn run_band)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    char why[200];
    if (!mh_rank_full_median(a, side, why, sizeof why)) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "%s: %s", name, why);
    size_t row_keys, keys, bytes;
    const int sized = mh_mul_ok(d->cols + 2 * (side - 1), d->channels, &row_keys) &&
                      mh_mul_ok(d->cols * d->channels, per_value, &keys) && (keys += row_keys) >= row_keys &&
                      mh_mul_ok(keys, sizeof(uint64_t), &bytes);
    if (!sized || !run_bands(a, band, bytes, run_band))
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "%s: out of host memory for its rows' keys", name);
    return MH_OK;
}

static mh_status median3_run(mh_context *ctx, const mh_args *args)
{
    return median_bands(ctx, args, "rank/cpu-median3x3", 3, MEDIAN3_BAND, 9, median3_band);
}

/* ---- cpu-median5x5, cpu-median7x7 ----------------------------------------------------------
 * The median of a full side x side window (median_filter(size=5 or 7)) by
 * src/core/rank_median_rows.h's networks, output rows two at a time: an input row's keys once,
 * extended side - 1 columns each way by the mode, then for every value of the row its window
 * columns' keys sorted once; sorted rows merged in pairs (rows y + 1 and y + 2, y + 3 and y + 4,
 * ...: a step makes one, the others are the last steps'); for each value the pairs merged into
 * the keys of the side - 1 rows both outputs' windows hold that a median reads (the middle), and
 * output rows y and y + 1 the medians of rows y and y + side with it. Loops along a row's values;
 * OpenMP over bands of rows (an even number, so that steps pair rows within a band). The side is
 * a constant in each row's band function, which the functions below fold. */
enum { MEDIAN_ROWS_BAND = 32, MEDIAN_ROWS_MAX_PAIRS = 3 };

static int median5_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    (void)ctx;
    return mh_rank_full_median(&args->rank, 5, why, len);
}

static int median7_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    (void)ctx;
    return mh_rank_full_median(&args->rank, 7, why, len);
}

/* Input row r of image b as each value's window columns' keys, sorted: s[i x side ...]. */
static inline void median_rows_sort(const mh_rank_args *a, size_t b, long long r, int side, uint64_t *keys, uint64_t *s)
{
    const mh_rank_desc *d = &a->d;
    const size_t C = d->channels, values = d->cols * C, w = (size_t)side;
    extended_row(a, b, r, side - 1, keys);
    const uint64_t *k = keys + (size_t)(side - 1 - (side / 2 + d->origin_col)) * C; /* column x - anchor */
    for (size_t i = 0; i < values; ++i, s += w) {
        for (size_t j = 0; j < w; ++j) s[j] = k[i + j * C];
        if (side == 5) mh_median5_sort(s);
        else mh_median7_sort(s);
    }
}

static inline void median_rows_pair(size_t values, int side, const uint64_t *s, const uint64_t *t, uint64_t *p)
{
    const size_t w = (size_t)side;
    for (size_t i = 0; i < values; ++i, s += w, t += w, p += 2 * w) {
        if (side == 5) mh_median5_pair(s, t, p);
        else mh_median7_pair(s, t, p);
    }
}

/* The step's medians at value i: the pairs' middle, then rows y (above) and y + side (below,
 * where two) with it. */
static inline void median_rows_value(int side, uint64_t *const *pairs, const uint64_t *above, const uint64_t *below,
                                     size_t i, int two, uint64_t out[2])
{
    uint64_t m[MH_MEDIAN7_MIDDLE];
    const size_t w = (size_t)side, pw = 2 * w;
    if (side == 5) {
        mh_median5_middle(pairs[0] + pw * i, pairs[1] + pw * i, m);
        out[0] = mh_median5_select(above + w * i, m);
        if (two) out[1] = mh_median5_select(below + w * i, m);
    } else {
        mh_median7_middle(pairs[0] + pw * i, pairs[1] + pw * i, pairs[2] + pw * i, m);
        out[0] = mh_median7_select(above + w * i, m);
        if (two) out[1] = mh_median7_select(below + w * i, m);
    }
}

/* Output rows y0 to y1 - 1 of image b; scratch: (cols + 2 (side - 1)) x channels keys, side + 1
 * rows' sorted keys (side x row_values each, input row j at slot j % (side + 1)) and (side - 1) / 2
 * rows of pairs (2 side x row_values each, the pair from input row k at slot k / 2 % pairs). */
static inline void median_rows_band(const mh_rank_args *a, size_t b, long long y0, long long y1, int side,
                                    void *scratch)
{
    const mh_rank_desc *d = &a->d;
    const size_t values = d->cols * d->channels, w = (size_t)side, npairs = w / 2;
    uint64_t *keys = (uint64_t *)scratch, *sorted = keys + values + 2 * (w - 1) * d->channels;
    uint64_t *pairs = sorted + (w + 1) * w * values;
#define MH_SORTED(j) (sorted + (size_t)(j) % (w + 1) * w * values)
#define MH_PAIR(k) (pairs + (size_t)(k) / 2 % npairs * 2 * w * values)
    const long long top = y0 - (side / 2 + d->origin_row); /* input row y0's window starts at; j counts from it */
    for (long long j = 0; j < side - 1; ++j) median_rows_sort(a, b, top + j, side, keys, MH_SORTED(j));
    for (long long k = 1; k < side - 2; k += 2) median_rows_pair(values, side, MH_SORTED(k), MH_SORTED(k + 1), MH_PAIR(k));
    for (long long y = y0; y < y1; y += 2) {
        const long long j = y - y0; /* the step's rows j to j + side; pairs from rows j + 1, j + 3, ... */
        median_rows_sort(a, b, top + j + side - 1, side, keys, MH_SORTED(j + side - 1));
        median_rows_sort(a, b, top + j + side, side, keys, MH_SORTED(j + side));
        median_rows_pair(values, side, MH_SORTED(j + side - 2), MH_SORTED(j + side - 1), MH_PAIR(j + side - 2));
        uint64_t *step_pairs[MEDIAN_ROWS_MAX_PAIRS];
        for (size_t t = 0; t < npairs; ++t) step_pairs[t] = MH_PAIR(j + 1 + 2 * (long long)t);
        const uint64_t *above = MH_SORTED(j), *below = MH_SORTED(j + side);
        const size_t at = (b * d->rows + (size_t)y) * values;
        const int two = y + 1 < y1;
        for (size_t i = 0; i < values; ++i) {
            uint64_t out[2];
            median_rows_value(side, step_pairs, above, below, i, two, out);
            mh_store_double(a->out, at + i, d->out_type, mh_rank_value(out[0]));
            if (two) mh_store_double(a->out, at + values + i, d->out_type, mh_rank_value(out[1]));
        }
    }
#undef MH_SORTED
#undef MH_PAIR
}

static void median5_band(const mh_rank_args *a, size_t b, long long y0, long long y1, void *scratch)
{
    median_rows_band(a, b, y0, y1, 5, scratch);
}

static void median7_band(const mh_rank_args *a, size_t b, long long y0, long long y1, void *scratch)
{
    median_rows_band(a, b, y0, y1, 7, scratch);
}

/* Keys a value of a row in a median_rows_band's scratch: side + 1 sorted rows and the pairs. */
static size_t median_rows_keys(size_t side) { return (side + 1) * side + side / 2 * 2 * side; }

static mh_status median5_run(mh_context *ctx, const mh_args *args)
{
    return median_bands(ctx, args, "rank/cpu-median5x5", 5, MEDIAN_ROWS_BAND, median_rows_keys(5), median5_band);
}

static mh_status median7_run(mh_context *ctx, const mh_args *args)
{
    return median_bands(ctx, args, "rank/cpu-median7x7", 7, MEDIAN_ROWS_BAND, median_rows_keys(7), median7_band);
}

/* ---- cpu-median3x3x3 -----------------------------------------------------------------------
 * The median of a full 3 x 3 x 3 window of a volume (median_filter(size=3) on 3-D arrays) by
 * src/core/rank_median_rows.h's planes networks: cpu-median5x5's walk across the planes, a
 * plane's nine keys around a value its "row". A thread takes a tile of a volume's rows (at most
 * MEDIAN_PLANES_TILE_KEYS keys a plane's sorted tile) down a band of output planes: each input
 * plane's tile sorted once (each value's nine keys, its rows extended by the mode), output
 * planes two at a time, each value's two medians from the middle of the two planes both windows
 * hold. */
enum { MEDIAN_PLANES_BAND = 32, MEDIAN_PLANES_TILE_KEYS = 1 << 17 };

static int median3x3x3_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    (void)ctx;
    return mh_rank_full_median_of(&args->rank, 3, 3, why, len);
}

/* The rows of a tile: as many as MEDIAN_PLANES_TILE_KEYS sorted keys hold, at least one. */
static size_t median_planes_tile(const mh_rank_desc *d)
{
    const size_t row_keys = 9 * d->cols * d->channels;
    const size_t rows = row_keys ? MEDIAN_PLANES_TILE_KEYS / row_keys : 1;
    return rows < 1 ? 1 : rows > d->rows ? d->rows : rows;
}

/* Input plane q (mapped through the mode) of volume b, rows y0 to y1 - 1, as each value's nine
 * window keys sorted: s[((y - y0) x values + i) x 9 ...]; ext: scratch of (y1 - y0 + 2) input
 * rows extended two columns each way. */
static void median_planes_sort(const mh_rank_args *a, size_t b, long long q, long long y0, long long y1, uint64_t *ext,
                               uint64_t *s)
{
    const mh_rank_desc *d = &a->d;
    const size_t C = d->channels, values = d->cols * C, row = values + 4 * C;
    const long long plane = mh_border_index(q, (long long)d->depth, d->mode);
    if (plane < 0) { /* a plane past the edge in constant mode: cval everywhere */
        const uint64_t cval = mh_rank_key(d->cval);
        for (size_t i = 0; i < (size_t)(y1 - y0) * values * 9; ++i) s[i] = cval;
        return;
    }
    const long long top = y0 - (1 + d->origin_row); /* the window's first row over output row y0 */
    for (long long r = 0; r < y1 - y0 + 2; ++r) extended_row(a, b * d->depth + (size_t)plane, top + r, 2, ext + (size_t)r * row);
    const size_t first = (size_t)(2 - (1 + d->origin_col)) * C; /* column x - anchor */
    for (long long y = 0; y < y1 - y0; ++y)
        for (size_t i = 0; i < values; ++i, s += 9) {
            for (int e = 0; e < 9; ++e) s[e] = ext[(size_t)(y + e / 3) * row + first + i + (size_t)(e % 3) * C];
            mh_median3x3x3_sort(s);
        }
}

/* Output planes z0 to z1 - 1 of tile o (volume o / tiles, its rows' tile o % tiles); scratch:
 * the tile's extended rows, then four planes' sorted tiles (input plane j at slot j % 4). */
static void median_planes_band(const mh_rank_args *a, size_t o, long long z0, long long z1, void *scratch)
{
    const mh_rank_desc *d = &a->d;
    const size_t tile = median_planes_tile(d), tiles = (d->rows + tile - 1) / tile, b = o / tiles;
    const long long y0 = (long long)(o % tiles * tile), y1 = y0 + (long long)tile < (long long)d->rows
                                                              ? y0 + (long long)tile : (long long)d->rows;
    const size_t values = d->cols * d->channels, n = (size_t)(y1 - y0) * values;
    uint64_t *ext = (uint64_t *)scratch, *sorted = ext + (tile + 2) * (values + 4 * d->channels);
#define MH_SORTED(j) (sorted + (size_t)(j) % 4 * 9 * tile * values)
    const long long top = z0 - (1 + d->origin_depth); /* output plane z0's window starts at; j counts from it */
    for (long long j = 0; j < 2; ++j) median_planes_sort(a, b, top + j, y0, y1, ext, MH_SORTED(j));
    for (long long z = z0; z < z1; z += 2) {
        const long long j = z - z0; /* the step's planes j to j + 3 */
        median_planes_sort(a, b, top + j + 2, y0, y1, ext, MH_SORTED(j + 2));
        median_planes_sort(a, b, top + j + 3, y0, y1, ext, MH_SORTED(j + 3));
        const uint64_t *above = MH_SORTED(j), *shared = MH_SORTED(j + 1), *next = MH_SORTED(j + 2),
                       *below = MH_SORTED(j + 3);
        const int two = z + 1 < z1;
        for (size_t k = 0; k < n; ++k) {
            uint64_t m[MH_MEDIAN3X3X3_MIDDLE];
            mh_median3x3x3_middle(shared + 9 * k, next + 9 * k, m);
            const size_t at = ((b * d->depth + (size_t)z) * d->rows + (size_t)y0) * values + k;
            mh_store_double(a->out, at, d->out_type, mh_rank_value(mh_median3x3x3_select(above + 9 * k, m)));
            if (two)
                mh_store_double(a->out, at + d->rows * values, d->out_type,
                                mh_rank_value(mh_median3x3x3_select(below + 9 * k, m)));
        }
    }
#undef MH_SORTED
}

static mh_status median3x3x3_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    char why[200];
    if (!mh_rank_full_median_of(a, 3, 3, why, sizeof why))
        return mh_fail(ctx, MH_ERR_UNSUPPORTED, "rank/cpu-median3x3x3: %s", why);
    const size_t tile = median_planes_tile(d), tiles = (d->rows + tile - 1) / tile;
    size_t ext, sorted, keys, bytes;
    const int sized = mh_mul_ok(tile + 2, d->cols * d->channels + 4 * d->channels, &ext) &&
                      mh_mul_ok(36 * tile, d->cols * d->channels, &sorted) && (keys = ext + sorted) >= ext &&
                      mh_mul_ok(keys, sizeof(uint64_t), &bytes);
    if (!sized || !run_items(a, d->batch * tiles, d->depth, MEDIAN_PLANES_BAND, bytes, median_planes_band))
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "rank/cpu-median3x3x3: out of host memory for its planes' keys");
    return MH_OK;
}

/* ---- cpu-histogram -------------------------------------------------------------------------
 * Any rank under any footprint of an 8-bit image by a running histogram (Huang's): a band of
 * output rows a thread, the band's input rows as byte keys once, extended by the mode past each
 * end; for each output row and channel a histogram of 256 counts slides along the row, the keys
 * that leave the window and those that enter it updated (a footprint row's runs of set elements:
 * one key out and one in a run), and the rank's key is tracked from the last one (the keys below
 * it counted): 2 x (the footprint's runs) updates an output and the key's moves. */
enum { HISTOGRAM_BAND = 32 };

/* What turns an 8-bit value's bits into its byte key and back: int8's sign bit flipped, so that
 * keys order as values. */
static uint8_t byte_flip(mh_dtype t) { return t == MH_I8 ? 0x80 : 0; }

static int histogram_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len)
{
    (void)ctx;
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    const int bytes = d->in_type == MH_U8 || d->in_type == MH_I8;
    const char *what = !bytes                                      ? "an input wider than 8 bits"
                       : d->structure                              ? "a structure"
                       : d->mode == MH_MODE_CONSTANT && !(mh_cast_double(d->cval, d->in_type) == d->cval)
                           ? "a cval that is not one of the image's values"
                           : NULL;
    if (what) snprintf(why, len, "%s: cpu-histogram takes any rank under a footprint of an 8-bit image", what);
    return !what;
}

/* Input row r (through the mode) of image b as byte keys from column -anchor on, width columns. */
static void histogram_row(const mh_rank_desc *d, const void *in, size_t b, long long r, long long anchor, size_t width,
                          uint8_t *keys)
{
    const size_t C = d->channels;
    const long long src = mh_border_index(r, (long long)d->rows, d->mode);
    const uint8_t flip = byte_flip(d->in_type), cval = (uint8_t)(int)d->cval ^ flip; /* cval: one of the type's values */
    const uint8_t *row = (const uint8_t *)in + (b * d->rows + (size_t)(src < 0 ? 0 : src)) * d->cols * C;
    for (size_t p = 0; p < width; ++p) {
        const long long c = mh_border_index((long long)p - anchor, (long long)d->cols, d->mode);
        for (size_t ch = 0; ch < C; ++ch) keys[p * C + ch] = src < 0 || c < 0 ? cval : (uint8_t)(row[(size_t)c * C + ch] ^ flip);
    }
}

/* Where a window's keys lie from its first row's first key (stride: a row of keys), into set (the
 * footprint's set elements), and for each run of set elements along a footprint row its first
 * (leave: the key that leaves as the window moves one output on, a column before) and its last
 * (enter: the key that enters, at the window's new place); the runs' count returned. */
static size_t histogram_offsets(const mh_rank_desc *d, size_t stride, size_t *set, size_t *leave, size_t *enter)
{
    const size_t kr = d->krows, kc = d->kcols, C = d->channels;
    size_t n = 0, runs = 0;
    for (size_t r = 0; r < kr; ++r)
        for (size_t c = 0; c < kc; ++c) {
            if (!d->footprint[r * kc + c]) continue;
            set[n++] = r * stride + c * C;
            if (c == 0 || !d->footprint[r * kc + c - 1]) leave[runs] = r * stride + c * C;
            if (c + 1 == kc || !d->footprint[r * kc + c + 1]) enter[runs++] = r * stride + c * C;
        }
    return runs;
}

/* Output rows y0 to y1 - 1 of image b; scratch: 3 x count offsets (histogram_offsets), then
 * (y1 - y0 + krows - 1) rows of byte keys, `width` columns each. */
static void histogram_band(const mh_rank_args *a, size_t b, long long y0, long long y1, void *scratch)
{
    const mh_rank_desc *d = &a->d;
    const size_t C = d->channels, kr = d->krows, kc = d->kcols, width = d->cols + kc - 1, stride = width * C;
    size_t *const set = (size_t *)scratch, *const leave = set + a->count, *const enter = leave + a->count;
    uint8_t *const keys = (uint8_t *)(enter + a->count);
    const size_t runs = histogram_offsets(d, stride, set, leave, enter);
    const long long anchor_r = (long long)(kr / 2) + d->origin_row, anchor_c = (long long)(kc / 2) + d->origin_col;
    for (long long j = 0; j < y1 - y0 + (long long)kr - 1; ++j)
        histogram_row(d, a->in, b, y0 - anchor_r + j, anchor_c, width, keys + (size_t)j * stride);
    const uint8_t flip = byte_flip(d->in_type);
    for (long long y = y0; y < y1; ++y) {
        const uint8_t *top = keys + (size_t)(y - y0) * stride; /* the window's first row, from column -anchor_c */
        const size_t at = (b * d->rows + (size_t)y) * d->cols * C;
        for (size_t ch = 0; ch < C; ++ch) {
            size_t count[256] = {0}, below = 0; /* the window's keys by value; how many lie below key */
            int key = 0;
            for (size_t k = 0; k < a->count; ++k) ++count[top[set[k] + ch]];
            for (size_t x = 0; x < d->cols; ++x) {
                if (x > 0)
                    for (size_t k = 0; k < runs; ++k) {
                        const uint8_t out = top[leave[k] + (x - 1) * C + ch], in = top[enter[k] + x * C + ch];
                        --count[out], below -= out < key;
                        ++count[in], below += in < key;
                    }
                while (below > d->rank) below -= count[--key];             /* too many keys below: down */
                while (below + count[key] <= d->rank) below += count[key++]; /* the rank past key: up */
                const uint8_t bits = (uint8_t)(key ^ flip);
                const double v = d->in_type == MH_I8 ? (double)(int8_t)bits : (double)bits;
                mh_store_double(a->out, at + x * C + ch, d->out_type, v);
            }
        }
    }
}

static mh_status histogram_run(mh_context *ctx, const mh_args *args)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    char why[200];
    if (!histogram_supports(ctx, args, why, sizeof why))
        return mh_fail(ctx, MH_ERR_UNSUPPORTED, "rank/cpu-histogram: %s", why);
    size_t stride, bytes, offsets;
    const int sized = mh_mul_ok(d->cols + d->kcols - 1, d->channels, &stride) &&
                      mh_mul_ok(stride, HISTOGRAM_BAND + d->krows - 1, &bytes) &&
                      mh_mul_ok(a->count, 3 * sizeof(size_t), &offsets) && (bytes += offsets) >= offsets &&
                      (bytes = mh_align_up(bytes, sizeof(size_t))) >= offsets; /* each thread's offsets aligned */
    if (!sized || !run_bands(a, HISTOGRAM_BAND, bytes, histogram_band))
        return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "rank/cpu-histogram: out of host memory for its rows' keys");
    return MH_OK;
}

static const mh_row rows[] = {
    {{"rank/cpu-reference", MH_OP_RANK, MH_BACKEND_CPU, 0, "host", "scipy.ndimage",
      "a window's values sorted whole, the rank read off"},
     mh_supports_any, reference_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_VOLUMES},
    {{"rank/cpu-omp", MH_OP_RANK, MH_BACKEND_CPU, 1, "host", "ours",
      "the minimum or maximum by one scan, other ranks by a quickselect; OpenMP over rows"},
     mh_supports_any, omp_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_VOLUMES},
    {{"rank/cpu-minmax", MH_OP_RANK, MH_BACKEND_CPU, 2, "host", "ours",
      "the minimum or maximum over a line or rectangle by running extremes in blocks of the window; OpenMP over lines"},
     minmax_supports, minmax_run, NULL, 0},
    {{"rank/cpu-median3x3", MH_OP_RANK, MH_BACKEND_CPU, 3, "host", "ours",
      "the median of a full 3 x 3 window: each input row's three keys a value sorted once, shared by the three outputs over it"},
     median3_supports, median3_run, NULL, 0},
    {{"rank/cpu-histogram", MH_OP_RANK, MH_BACKEND_CPU, 4, "host", "ours",
      "any rank under any footprint of an 8-bit image: a running histogram along each row (Huang's), the rank's key tracked"},
     histogram_supports, histogram_run, NULL, 0},
    {{"rank/cpu-median5x5", MH_OP_RANK, MH_BACKEND_CPU, 5, "host", "ours",
      "the median of a full 5 x 5 window: rows sorted once, two outputs sharing the merge of the four rows both hold"},
     median5_supports, median5_run, NULL, 0},
    {{"rank/cpu-median7x7", MH_OP_RANK, MH_BACKEND_CPU, 6, "host", "ours",
      "the median of a full 7 x 7 window: rows sorted once, two outputs sharing the merge of the six rows both hold"},
     median7_supports, median7_run, NULL, 0},
    {{"rank/cpu-median3x3x3", MH_OP_RANK, MH_BACKEND_CPU, 7, "host", "ours",
      "the median of a full 3 x 3 x 3 window of a volume: each plane's nine keys a value sorted once, two outputs sharing the merge of the two planes both hold"},
     median3x3x3_supports, median3x3x3_run, NULL, 0, MH_LIB_NONE, NULL, MH_ROW_VOLUMES},
};

MH_ROW_GROUP(mh_rank_cpu_rows, rows)

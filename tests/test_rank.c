/* mh_rank: every row against an oracle written apart from them (its own border walk, a full sort
 * under numpy's order), bit for bit, on random images, footprints with holes, ranks, origins,
 * modes, dtypes and structures; NaN, infinities, signed zeros and ties among the values; and the
 * refusals, each naming its argument. */
#include "testing.h"
#include "core/dtype.h"

#include <stdint.h>

static uint64_t state = 12345;
static uint64_t next(void)
{
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
}
static size_t below(size_t n) { return (size_t)(next() % n); }

/* Position i of an axis of n under `mode`, walked step by step as the mode's picture draws it
 * (-1: the constant). */
static long long oracle_index(long long i, long long n, mh_mode mode)
{
    if (mode == MH_MODE_CONSTANT) return i >= 0 && i < n ? i : -1;
    if (mode == MH_MODE_NEAREST) return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (mode == MH_MODE_WRAP) return ((i % n) + n) % n;
    if (mode == MH_MODE_MIRROR && n == 1) return 0;
    while (i < 0 || i >= n) { /* reflect: d c b a | a b c d; mirror: d c b | a b c d */
        if (i < 0) i = mode == MH_MODE_REFLECT ? -1 - i : -i;
        if (i >= n) i = mode == MH_MODE_REFLECT ? 2 * n - 1 - i : 2 * n - 2 - i;
    }
    return i;
}

/* numpy's order with -0.0 below +0.0 and NaN last */
static int before(double a, double b)
{
    if (b != b) return a == a;
    if (a != a) return 0;
    if (a == b) return signbit(a) && !signbit(b);
    return a < b;
}

enum { MAX_WINDOW = 1024 };

/* scipy's sum for a window element after the first with structure_in_type, worked out apart
 * from the library's: float32 in float, integers as the sum's bits reduced to the type's width. */
static double oracle_sum_in_type(const mh_rank_desc *d, const void *in, size_t at, int outside, double s)
{
    if (d->in_type == MH_F64) return (outside ? d->cval : ((const double *)in)[at]) + s;
    if (d->in_type == MH_F32) {
        const float v = outside ? (float)d->cval : ((const float *)in)[at];
        return (double)(float)(v + (float)s);
    }
    static const struct { mh_dtype t; int bits, is_signed; } widths[] = {
        {MH_U8, 8, 0}, {MH_I8, 8, 1}, {MH_U16, 16, 0}, {MH_I16, 16, 1}, {MH_U32, 32, 0}, {MH_I32, 32, 1},
        {MH_U64, 64, 0}, {MH_I64, 64, 1}};
    int bits = 64, is_signed = 1;
    for (size_t k = 0; k < sizeof widths / sizeof widths[0]; ++k)
        if (widths[k].t == d->in_type) bits = widths[k].bits, is_signed = widths[k].is_signed;
    uint64_t raw;
    if (outside) raw = (uint64_t)(int64_t)d->cval;
    else if (d->in_type == MH_U64) raw = ((const uint64_t *)in)[at];
    else if (d->in_type == MH_I64) raw = (uint64_t)((const int64_t *)in)[at];
    else raw = (uint64_t)(int64_t)mh_load_double(in, at, d->in_type);
    uint64_t x = raw + (uint64_t)(int64_t)trunc(s);
    if (bits < 64) x &= (1ull << bits) - 1;
    const uint64_t top = 1ull << (bits - 1);
    if (is_signed && x >= top) return -(double)((bits < 64 ? (1ull << bits) : 0) - x); /* two's complement */
    return (double)x;
}

static size_t at_least_1(size_t n) { return n ? n : 1; } /* depth and kdepth: 0 means 1 */

static double oracle_value(const mh_rank_desc *d, const void *in, size_t b, long long z, long long y, long long x,
                           size_t ch)
{
    double window[MAX_WINDOW] = {0}; /* rank < the set elements counted into it */
    size_t n = 0, e = 0;
    const size_t depth = at_least_1(d->depth), kdepth = at_least_1(d->kdepth);
    const long long ap = (long long)(kdepth / 2) + d->origin_depth;
    const long long ar = (long long)(d->krows / 2) + d->origin_row, ac = (long long)(d->kcols / 2) + d->origin_col;
    for (size_t p = 0; p < kdepth; ++p)
        for (size_t r = 0; r < d->krows; ++r)
            for (size_t c = 0; c < d->kcols; ++c, ++e) {
                if (!d->footprint[e]) continue;
                const long long iz = oracle_index(z + (long long)p - ap, (long long)depth, d->mode);
                const long long iy = oracle_index(y + (long long)r - ar, (long long)d->rows, d->mode);
                const long long ix = oracle_index(x + (long long)c - ac, (long long)d->cols, d->mode);
                const int outside = iz < 0 || iy < 0 || ix < 0;
                const size_t at =
                    outside ? 0
                            : (((b * depth + (size_t)iz) * d->rows + (size_t)iy) * d->cols + (size_t)ix) * d->channels + ch;
                double v = outside ? d->cval : mh_load_double(in, at, d->in_type);
                if (d->structure && d->structure_in_type && n > 0)
                    v = oracle_sum_in_type(d, in, at, outside, d->structure[e]);
                else if (d->structure)
                    v += d->structure[e];
                size_t j = n++;
                for (; j > 0 && before(v, window[j - 1]); --j) window[j] = window[j - 1];
                window[j] = v;
            }
    return window[d->rank];
}

static double random_value(mh_dtype t, int specials)
{
    const size_t pick = below(16);
    if (specials && (t == MH_F32 || t == MH_F64)) {
        static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0};
        if (pick < 5) return special[pick];
    }
    switch (t) {
    case MH_U8: return (double)below(256);
    case MH_I8: return (double)below(256) - 128.0;
    case MH_I16: return (double)below(65536) - 32768.0;
    case MH_U16: return (double)below(65536);
    case MH_I32: return (double)(int32_t)next();
    case MH_U32: return (double)(uint32_t)next();
    default: return pick < 8 ? (double)below(7) - 3.0 : ((double)(int64_t)(next() >> 11) - 2e15) * 1e-3;
    }
}

/* element i of a typed array written from v; int64 and uint64 take full-width integers */
static void put(void *p, size_t i, mh_dtype t, double v)
{
    if (t == MH_I64) ((int64_t *)p)[i] = below(4) ? (int64_t)v : (int64_t)next();
    else if (t == MH_U64) ((uint64_t *)p)[i] = below(4) ? (uint64_t)fabs(v) : next();
    else mh_store_double(p, i, t, v);
}

static const mh_dtype types[] = {MH_F32, MH_F64, MH_U8, MH_I8, MH_U16, MH_I16, MH_I32, MH_U32, MH_I64, MH_U64};
enum { NTYPES = sizeof types / sizeof types[0] };

static int taken[64]; /* cases each row took, by its index among the op's variants */

/* Every row of `ctx`'s backend on the case, against want (bit for bit); on a GPU through device copies. */
static void check_rows(mh_context *ctx, const mh_rank_desc *d, size_t count, int i, const void *in, const void *want)
{
    const int gpu = mh_context_device(ctx) != MH_CPU;
    const size_t values = d->batch * at_least_1(d->depth) * d->rows * d->cols * d->channels;
    const size_t out_size = mh_dtype_size(d->out_type);
    void *got = malloc(values * 8), *d_in = NULL, *d_out = NULL;
    if (gpu) {
        CHECK_CUDA(cudaMalloc(&d_in, values * 8));
        CHECK_CUDA(cudaMalloc(&d_out, values * 8));
        CHECK_CUDA(cudaMemcpy(d_in, in, values * mh_dtype_size(d->in_type), cudaMemcpyHostToDevice));
    }
    for (size_t v = 0; v <= mh_variant_count(MH_OP_RANK); ++v) {
        const mh_variant_info *row = v < mh_variant_count(MH_OP_RANK) ? mh_variant(MH_OP_RANK, v) : NULL;
        if (row && (row->backend == MH_BACKEND_CPU) == gpu) continue;
        const char *name = row ? row->name : "auto";
        memset(got, 0xa5, values * 8);
        if (gpu) CHECK_CUDA(cudaMemset(d_out, 0xa5, values * 8));
        mh_status s = mh_rank(ctx, name, d, gpu ? d_in : in, gpu ? d_out : got);
        if (s == MH_ERR_UNSUPPORTED && row) continue; /* a row that refuses the case by name */
        if (row && v < 64) ++taken[v];
        if (gpu && s == MH_OK) CHECK_CUDA(cudaMemcpy(got, d_out, values * out_size, cudaMemcpyDeviceToHost));
        size_t first = values;
        for (size_t k = 0; k < values && first == values; ++k)
            if (memcmp((char *)got + k * out_size, (const char *)want + k * out_size, out_size)) first = k;
        CHECK(s == MH_OK && first == values,
              "case %d, %s: %zu x %zu x %zu x %zu x %zu %s -> %s, footprint %zu x %zu x %zu (%zu set), rank %zu, origins "
              "%lld %lld %lld, mode %s%s: %s; first wrong output %zu of %zu (%s)",
              i, name, d->batch, d->depth, d->rows, d->cols, d->channels, mh_dtype_name(d->in_type),
              mh_dtype_name(d->out_type), d->kdepth, d->krows, d->kcols, count, d->rank, d->origin_depth, d->origin_row,
              d->origin_col, mh_mode_name(d->mode),
              d->structure ? ", a structure" : "", mh_status_str(s), first, values, mh_context_error(ctx));
    }
    cudaFree(d_in), cudaFree(d_out);
    free(got);
}

/* The minimum or maximum over a whole line (scipy's separable passes): images long enough along
 * the line, or wide enough across it, to span several of a GPU row's tiles; now and then a window
 * longer than the image, or one whose tile must shrink to fit shared memory. */
static void line_case(mh_rank_desc *d, unsigned char *footprint, int i)
{
    const int column = i % 2, long_window = i % 19 == 1;
    if (column) d->rows = 1 + below(long_window ? 8 : 150), d->cols = 1 + below(40);
    else d->rows = 1 + below(long_window ? 2 : 6), d->cols = 1 + below(long_window ? 8 : 700);
    const size_t k = long_window ? 300 + below(200) : 1 + below(40);
    d->krows = column ? k : 1, d->kcols = column ? 1 : k;
    memset(footprint, 1, k);
    d->rank = below(2) ? 0 : k - 1;
}

/* The minimum or maximum over a whole rectangle (scipy's separable minimum or maximum over two
 * axes, which a GPU takes in one pass): windows small beside images of several strips and
 * segments, tall ones (a long ring; past the ring's shared memory too), wide ones (a narrow
 * strip; past the narrowest too), and windows larger than tiny images. */
static void rectangle_case(mh_rank_desc *d, unsigned char *footprint, int i)
{
    switch (i % 4) {
    case 0: d->krows = 2 + below(7), d->kcols = 2 + below(7), d->rows = 1 + below(70), d->cols = 1 + below(300); break;
    case 1:
        d->krows = 40 + below(170), d->kcols = 2 + below(3), d->rows = 1 + below(200), d->cols = 1 + below(6);
        d->channels = 1;
        break;
    case 2:
        d->krows = 2 + below(2), d->kcols = 60 + below(200), d->rows = 1 + below(4), d->cols = 1 + below(500);
        d->channels = 1 + below(2);
        break;
    default: d->krows = 2 + below(4), d->kcols = 2 + below(4), d->rows = 1 + below(3), d->cols = 1 + below(3); break;
    }
    memset(footprint, 1, d->krows * d->kcols);
    d->rank = below(2) ? 0 : d->krows * d->kcols - 1;
}

/* The median of a full 3 x 3, 5 x 5 or 7 x 7 window, or a 3 x 3 x 3 one of a volume (the median
 * rows), and now and then another rank (sorted-rows; network for volumes): images of several
 * blocks along a row and several segments or bands down the columns, volumes of several segments
 * across the planes or several tiles down the rows, or tiny ones. */
static void median_case(mh_rank_desc *d, unsigned char *footprint, int i)
{
    const int cube = i % 4 == 3;
    const size_t side = cube ? 3 : (size_t)(3 + 2 * (i / 2 % 3)), planes = cube ? 3 : 1;
    d->krows = d->kcols = side, d->kdepth = planes;
    if (cube) d->depth = 1 + below(i % 8 == 3 ? 150 : 4), d->rows = 1 + below(20), d->cols = 1 + below(40);
    if (cube && i % 16 == 7) /* rows of 27000 keys or more: cpu-median3x3x3's tiles of at most 4 rows, two or more */
        d->rows = 5 + below(4), d->cols = 1000 + below(600), d->channels = 3;
    else if (i % 2) d->rows = 1 + below(150), d->cols = 1 + below(150);
    memset(footprint, 1, planes * side * side);
    d->rank = i % 4 == 1 || i % 8 == 7 ? below(planes * side * side) : planes * side * side / 2;
}

static void one_case(mh_context *ctx, int i)
{
    unsigned char footprint[MAX_WINDOW];
    double structure[MAX_WINDOW];
    mh_rank_desc d = {.batch = 1 + below(2), .rows = 1 + below(i % 5 == 0 ? 3 : 19),
                      .cols = 1 + below(i % 7 == 0 ? 2 : 23), .channels = 1 + below(3)};
    d.in_type = types[below(NTYPES)];
    d.out_type = below(3) ? d.in_type : types[below(NTYPES)];
    const int big = i % 11 == 0;  /* past 16 set elements: the quickselect's partitions */
    const int huge = i % 16 == 5; /* past 255: past naive, on a GPU bisect's */
    const int volume = i % 16 == 10; /* volumes, now and then a footprint of one plane (folded into the batch) */
    d.krows = huge ? 17 + below(14) : 1 + below(big ? 15 : 6), d.kcols = huge ? 17 + below(14) : 1 + below(big ? 15 : 6);
    if (huge) d.rows = 1 + below(12), d.cols = 1 + below(12);
    if (volume) d.depth = 1 + below(7), d.kdepth = 1 + below(4), d.rows = 1 + below(9), d.cols = 1 + below(9);
    const size_t elements = at_least_1(d.kdepth) * d.krows * d.kcols;
    size_t count = 0;
    for (size_t k = 0; k < elements; ++k) {
        footprint[k] = (unsigned char)(below(5) != 0 ? 1 + below(3) : 0);
        structure[k] = (double)below(9) - 4.0 + 0.25 * (double)below(4);
        count += footprint[k] != 0;
    }
    if (!count) footprint[below(elements)] = 1, count = 1;
    d.footprint = footprint;
    d.rank = below(3) == 0 ? 0 : below(2) == 0 ? count - 1 : below(count);
    if (below(4) == 0) d.structure = structure, d.structure_in_type = (int)below(2);
    if (i % 4 == 3 || i % 8 == 1 || i % 16 == 13) {
        if (i % 4 == 3) line_case(&d, footprint, i / 4);
        else if (i % 8 == 1) rectangle_case(&d, footprint, i / 8);
        else median_case(&d, footprint, i / 16);
        count = at_least_1(d.kdepth) * d.krows * d.kcols, d.structure = NULL;
    }
    d.origin_depth = (long long)below(at_least_1(d.kdepth)) - (long long)(at_least_1(d.kdepth) / 2);
    d.origin_row = (long long)below(d.krows) - (long long)(d.krows / 2);
    d.origin_col = (long long)below(d.kcols) - (long long)(d.kcols / 2);
    d.mode = (mh_mode)below(5);
    d.cval = below(4) ? random_value(MH_F64, 0) : NAN;
    if (d.structure_in_type && d.in_type != MH_F32 && d.in_type != MH_F64) d.cval = (double)below(100); /* a value of t */
    if (i % 8 == 1 && (d.in_type == MH_I64 || d.in_type == MH_U64)) d.cval = (double)below(100); /* minmax's passes store it */
    if (i % 16 == 13 && below(2)) d.cval = (double)below(100); /* a value of every type: the narrow keys' and bytes' cval */
    const size_t depth = at_least_1(d.depth), values = d.batch * depth * d.rows * d.cols * d.channels;
    void *in = malloc(values * 8), *want = malloc(values * 8);
    for (size_t k = 0; k < values; ++k) put(in, k, d.in_type, random_value(d.in_type, 1));
    size_t at = 0;
    for (size_t b = 0; b < d.batch; ++b)
        for (size_t z = 0; z < depth; ++z)
            for (size_t y = 0; y < d.rows; ++y)
                for (size_t x = 0; x < d.cols; ++x)
                    for (size_t ch = 0; ch < d.channels; ++ch)
                        mh_store_double(want, at++, d.out_type,
                                        oracle_value(&d, in, b, (long long)z, (long long)y, (long long)x, ch));
    check_rows(ctx, &d, count, i, in, want);
    free(in), free(want);
}

static void refusals(mh_context *cpu)
{
    unsigned char footprint[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, none[9] = {0};
    const double structure[9] = {0};
    float in[16] = {0}, out[16];
    const mh_rank_desc good = {1, 4, 4, 1, MH_F32, MH_F32, footprint, 3, 3, NULL, 4, 0, 0, MH_MODE_REFLECT, 0.0, 0, 1, 1, 0};
    CHECK(mh_rank(cpu, NULL, &good, in, out) == MH_OK, "the good call: %s", mh_context_error(cpu));
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, NULL, in, out), "desc");
    mh_rank_desc d = good;
    d.rows = 0;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "rows = 0");
    d = good, d.channels = 0;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "channels = 0");
    d = good, d.in_type = MH_F16;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "in_type = 1 (float16)");
    d = good, d.out_type = MH_BF16;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "out_type = 11 (bfloat16)");
    d = good, d.out_type = (mh_dtype)99;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "out_type = 99");
    d = good, d.footprint = NULL;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "footprint is NULL");
    d = good, d.footprint = none;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "no element is set");
    d = good, d.kcols = 0;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "kcols = 0");
    d = good, d.rank = 9;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "rank = 9");
    d = good, d.structure = structure;
    CHECK(mh_rank(cpu, NULL, &d, in, out) == MH_OK, "a structure: %s", mh_context_error(cpu));
    d = good, d.structure = structure, d.structure_in_type = 2;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "structure_in_type = 2");
    const double huge[9] = {0, 3e9, 0, 0, 0, 0, 0, 0, 0};
    d = good, d.in_type = d.out_type = MH_I32, d.structure = huge, d.structure_in_type = 1;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "structure[1] = 3e+09");
    d.structure_in_type = 0;
    CHECK(mh_rank(cpu, NULL, &d, in, out) == MH_OK, "a large structure in float64: %s", mh_context_error(cpu));
    d = good, d.in_type = d.out_type = MH_U8, d.structure = structure, d.structure_in_type = 1;
    d.mode = MH_MODE_CONSTANT, d.cval = NAN;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "cval = nan");
    d = good, d.origin_row = 2;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "origin_row = 2");
    d = good, d.origin_col = -2;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "origin_col = -2");
    d = good, d.mode = (mh_mode)7;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "mode = 7");
    d = good, d.batch = SIZE_MAX / 2;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "overflows");
    d = good, d.krows = SIZE_MAX / 2, d.kcols = 4;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "footprint's size overflows");
    unsigned char planes2[18];
    memset(planes2, 1, sizeof planes2);
    const mh_variant_info *chosen = NULL;
    d = good, d.footprint = planes2, d.kdepth = 2, d.origin_depth = 1;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "origin_depth = 1");
    d.origin_depth = -1;
    CHECK(mh_rank(cpu, NULL, &d, in, out) == MH_OK, "a footprint of two planes: %s", mh_context_error(cpu));
    d.rank = 18;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "rank = 18");
    d = good, d.kdepth = SIZE_MAX / 4;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "footprint's size overflows");
    d = good, d.depth = SIZE_MAX / 8;
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &d, in, out), "depth = ");
    d = good, d.depth = 2, d.rows = 2; /* a footprint of one plane: each of two planes an image */
    CHECK(mh_rank(cpu, NULL, &d, in, out) == MH_OK, "two planes: %s", mh_context_error(cpu));
    d = good, d.footprint = planes2, d.kdepth = 2, d.rank = 9;
    CHECK(mh_rank(cpu, "cpu-median3x3", &d, in, out) == MH_ERR_UNSUPPORTED &&
              strstr(mh_context_error(cpu), "a footprint of 2 planes") &&
              strstr(mh_context_error(cpu),
                     "volumes run on cpu-reference, cpu-omp, cpu-median3x3x3, naive, bisect, network and median3x3x3"),
          "cpu-median3x3 on a footprint of two planes: %s", mh_context_error(cpu));
    CHECK(mh_rank_select(cpu, &d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, "rank/cpu-omp"),
          "auto on the CPU, a footprint of two planes: %s", chosen ? chosen->name : mh_context_error(cpu));
    unsigned char cube[27];
    memset(cube, 1, sizeof cube);
    d = good, d.footprint = cube, d.kdepth = 3, d.depth = 2, d.rows = 2, d.rank = 13;
    CHECK(mh_rank_select(cpu, &d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, "rank/cpu-median3x3x3"),
          "auto on the CPU, a 3 x 3 x 3 median: %s", chosen ? chosen->name : mh_context_error(cpu));
    CHECK(mh_rank(cpu, "cpu-median3x3x3", &good, in, out) == MH_ERR_UNSUPPORTED &&
              strstr(mh_context_error(cpu), "another footprint: takes the median of a full 3 x 3 x 3 window"),
          "cpu-median3x3x3 on an image's 3 x 3: %s", mh_context_error(cpu));
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &good, in, in + 2), "out");
    CHECK_REFUSED(cpu, mh_rank(cpu, NULL, &good, in, NULL), "out");
    CHECK(mh_rank(cpu, "nonesuch", &good, in, out) != MH_OK, "an unknown variant runs");
    chosen = NULL;
    CHECK(mh_rank_select(cpu, &good, &chosen) == MH_OK && chosen && !strcmp(chosen->name, "rank/cpu-median3x3"),
          "auto on the CPU, a 3 x 3 median: %s", chosen ? chosen->name : mh_context_error(cpu));
    d = good, d.rank = 3, chosen = NULL;
    CHECK(mh_rank_select(cpu, &d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, "rank/cpu-omp"),
          "auto on the CPU, rank 3 of a 3 x 3: %s", chosen ? chosen->name : mh_context_error(cpu));
    unsigned char full5[25];
    memset(full5, 1, sizeof full5);
    d = good, d.rows = d.cols = 4, d.footprint = full5, d.krows = d.kcols = 5, d.rank = 12, chosen = NULL;
    CHECK(mh_rank_select(cpu, &d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, "rank/cpu-median5x5"),
          "auto on the CPU, a 5 x 5 median: %s", chosen ? chosen->name : mh_context_error(cpu));
    d.in_type = d.out_type = MH_U8, chosen = NULL;
    CHECK(mh_rank_select(cpu, &d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, "rank/cpu-median5x5"),
          "auto on the CPU, a 5 x 5 median of bytes: %s", chosen ? chosen->name : mh_context_error(cpu));
    unsigned char full7[49];
    memset(full7, 1, sizeof full7);
    d.footprint = full7, d.krows = d.kcols = 7, d.rank = 24, chosen = NULL;
    CHECK(mh_rank_select(cpu, &d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, "rank/cpu-histogram"),
          "auto on the CPU, a 7 x 7 median of bytes: %s", chosen ? chosen->name : mh_context_error(cpu));
    d.in_type = d.out_type = MH_F32, chosen = NULL;
    CHECK(mh_rank_select(cpu, &d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, "rank/cpu-median7x7"),
          "auto on the CPU, a 7 x 7 median: %s", chosen ? chosen->name : mh_context_error(cpu));
}

/* auto on a GPU: the median rows for full squares' medians, sorted-rows for their other ranks
 * (32-bit keys), network before histogram up to 25 set elements and after it past them, bisect
 * past what they take. */
static void gpu_auto(mh_context *gpu)
{
    static unsigned char full[31 * 31];
    memset(full, 1, sizeof full);
    static const struct {
        mh_dtype type;
        size_t side, rank;
        const char *want;
    } picks[] = {
        {MH_F32, 3, 4, "rank/median3x3"},  {MH_U8, 5, 12, "rank/median5x5"},  {MH_F32, 7, 24, "rank/median7x7"},
        {MH_U8, 5, 3, "rank/sorted-rows"}, {MH_I8, 9, 3, "rank/histogram"},   {MH_U8, 31, 480, "rank/histogram"},
        {MH_F32, 5, 3, "rank/sorted-rows"}, {MH_F32, 15, 112, "rank/bisect"}, {MH_U16, 7, 3, "rank/sorted-rows"},
        {MH_F32, 3, 0, "rank/vanherk"},    {MH_U16, 4, 3, "rank/network"},    {MH_F64, 5, 3, "rank/network"},
    };
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; ++i) {
        const mh_rank_desc d = {1,     64,    64,   1, picks[i].type, picks[i].type, full, picks[i].side, picks[i].side,
                                NULL, picks[i].rank, 0, 0, MH_MODE_REFLECT, 0.0, 0, 1, 1, 0};
        const mh_variant_info *chosen = NULL;
        CHECK(mh_rank_select(gpu, &d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, picks[i].want),
              "auto on a GPU, rank %zu of %s %zu x %zu: %s, not %s", picks[i].rank, mh_dtype_name(picks[i].type),
              picks[i].side, picks[i].side, chosen ? chosen->name : mh_context_error(gpu), picks[i].want);
    }
    /* volumes: the 3 x 3 x 3 median's row for 32-bit keys, network for the others and other ranks */
    static const struct {
        mh_dtype type;
        size_t rank;
        const char *want;
    } cubes[] = {{MH_F32, 13, "rank/median3x3x3"}, {MH_U8, 13, "rank/median3x3x3"}, {MH_F64, 13, "rank/network"},
                 {MH_F32, 3, "rank/network"}};
    for (size_t i = 0; i < sizeof cubes / sizeof cubes[0]; ++i) {
        const mh_rank_desc d = {1,    32, 32, 1, cubes[i].type, cubes[i].type, full, 3, 3, NULL, cubes[i].rank, 0, 0,
                                MH_MODE_REFLECT, 0.0, 0, 32, 3, 0};
        const mh_variant_info *chosen = NULL;
        CHECK(mh_rank_select(gpu, &d, &chosen) == MH_OK && chosen && !strcmp(chosen->name, cubes[i].want),
              "auto on a GPU, rank %zu of a %s volume's 3 x 3 x 3 window: %s, not %s", cubes[i].rank,
              mh_dtype_name(cubes[i].type), chosen ? chosen->name : mh_context_error(gpu), cubes[i].want);
    }
    /* the median walks' places are 32-bit: rows (planes) of 2^31 values go to another row;
     * median3x3's columns are 64-bit, and it takes them */
    {
        const mh_rank_desc d = {1,    1, (size_t)1 << 31, 1, MH_U8, MH_U8, full, 3, 3, NULL, 4, 0, 0,
                                MH_MODE_REFLECT, 0.0, 0, 1, 1, 0};
        CHECK(mh_rank_supports(gpu, "median3x3", &d) == MH_OK, "median3x3 of 1 x 2^31: %s", mh_context_error(gpu));
    }
    static const struct {
        size_t rows, cols, depth, k, rank;
        const char *refuses;
    } wide[] = {{1, (size_t)1 << 31, 1, 5, 12, "median5x5"}, {1, (size_t)1 << 31, 1, 7, 24, "median7x7"},
                {(size_t)1 << 16, (size_t)1 << 15, 3, 3, 13, "median3x3x3"}};
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; ++i) {
        const size_t kdepth = wide[i].depth > 1 ? 3 : 1;
        const mh_rank_desc d = {1,    wide[i].rows, wide[i].cols, 1, MH_U8, MH_U8, full, wide[i].k, wide[i].k, NULL,
                                wide[i].rank, 0, 0, MH_MODE_REFLECT, 0.0, 0, wide[i].depth, kdepth, 0};
        CHECK(mh_rank_supports(gpu, wide[i].refuses, &d) == MH_ERR_UNSUPPORTED &&
                  strstr(mh_context_error(gpu), "fewer than 2^31 values"),
              "%s of %zu x %zu x %zu: %s", wide[i].refuses, wide[i].depth, wide[i].rows, wide[i].cols, mh_context_error(gpu));
        const mh_variant_info *chosen = NULL;
        CHECK(mh_rank_select(gpu, &d, &chosen) == MH_OK && chosen && strcmp(chosen->name + 5, wide[i].refuses),
              "auto on %zu x %zu x %zu: %s", wide[i].depth, wide[i].rows, wide[i].cols,
              chosen ? chosen->name : mh_context_error(gpu));
    }
}

int main(int argc, char **argv)
{
    const int gpu = argc == 2 && !strcmp(argv[1], "gpu");
    if (argc != 2 || (!gpu && strcmp(argv[1], "cpu"))) {
        fprintf(stderr, "usage: test_rank cpu|gpu\n");
        return 2;
    }
    if (gpu) test_require_gpu();
    mh_context *ctx = NULL;
    if (mh_context_create(&ctx, gpu ? 0 : MH_CPU) != MH_OK) return 1;
    if (!gpu) refusals(ctx);
    else gpu_auto(ctx);
    for (int i = 0; i < 600; ++i) one_case(ctx, i);
    for (size_t v = 0; v < mh_variant_count(MH_OP_RANK) && v < 64; ++v) /* a row refusing every case is a defect */
        CHECK(taken[v] > 0 || (mh_variant(MH_OP_RANK, v)->backend == MH_BACKEND_CPU) == gpu, "%s took none of the cases",
              mh_variant(MH_OP_RANK, v)->name);
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_rank gpu" : "test_rank cpu");
}

/* The median rows' and sorted-rows' kernels and launch (rank_median.cu's rows; median7x7's,
 * median3x3x3's and sorted-rows' kernels compile in files of their own, rank_median7.cu,
 * rank_median_planes.cu and rank_sorted_rows.cu, so that a parallel build takes them side by
 * side): the median of a full 3 x 3, 5 x 5 or 7 x 7 window, or a 3 x 3 x 3 one of a volume, and
 * any rank of a full 3 x 3, 5 x 5 or 7 x 7 window, a thread walking down a column of outputs
 * (across the planes for volumes). median3x3 sorts each input row's three keys once for the three
 * outputs over it, an output the median of three of theirs; median5x5 and median7x7 go two
 * outputs a step, each input row's keys sorted once, the two outputs sharing the merge of the
 * rows both windows hold (src/core/rank_median_rows.h's networks); median3x3x3 the same with a
 * plane's nine keys for a row; sorted-rows the same walk with the shared rows merged in full and
 * the rank's key picked at run time (ranked_rows). 32-bit keys only (rank_keys.cuh). */
#ifndef MH_CUDA_RANK_MEDIAN_CUH
#define MH_CUDA_RANK_MEDIAN_CUH

#include "rank_keys.cuh"
#include "../core/border.h"
#include "../core/dtype.h"
#include "../core/rank_line.h"
#define MH_MEDIAN_KEY uint32_t
#include "../core/rank_median_rows.h"

#include <stdio.h>

/* ---- median3x3 ------------------------------------------------------------------------------
 * The median of a full 3 x 3 window (median_filter(size=3)): a thread walks down a column of
 * outputs (one channel of one pixel) over a segment of rows. Each input row's three keys around
 * the column are sorted once (least, middle, greatest) and serve the three outputs whose windows
 * hold that row; an output's median is the median of three: the greatest of its rows' least
 * keys, the median of their middle ones and the least of their greatest (exactly the nine keys'
 * median). The columns' border mapping is the thread's for the whole walk, a row's the same for
 * every thread; MEDIAN3_LOADS rows' keys are loaded at once. 32-bit keys only. A segment is 64
 * rows where the image gives every SM a thousand threads so (a row sorted once serves 64
 * outputs, 66 sorts for 64), shorter down to 8 on smaller images, whose walks would otherwise
 * run on a few SMs one after another (median3_segment). */
enum { MEDIAN3_THREADS = 128, MEDIAN3_LOADS = 8, MEDIAN3_SEGMENT_MIN = 8, MEDIAN3_SEGMENT_MAX = 64,
       MEDIAN3_THREADS_PER_SM = 1024 };

struct median3_params {
    const void *in;
    void *out;
    mh_dtype out_type; /* the kernel's Same: whether it is the input's */
    /* rows: the lines a walk goes down (an image's rows; a volume's planes), row_values the values
     * of one; channels at full width: a window's columns are values apart */
    long long rows, cols, channels;
    int anchor_row, anchor_col, mode;
    uint32_t cval_key;
    size_t row_values, batch, segment, segments; /* segment: the rows a walk takes */
    long long plane_rows; /* median3x3x3: a volume's rows a plane */
    int anchor_plane_row; /* and the window's row over its output */
    int rank;             /* sorted-rows: the rank asked */
};

static __device__ __forceinline__ uint32_t least3(uint32_t a, uint32_t b, uint32_t c) { return __vimin3_u32(a, b, c); }
static __device__ __forceinline__ uint32_t greatest3(uint32_t a, uint32_t b, uint32_t c) { return __vimax3_u32(a, b, c); }
static __device__ __forceinline__ uint32_t middle3(uint32_t a, uint32_t b, uint32_t c)
{
    return max(min(a, b), min(max(a, b), c));
}

struct sorted3 {
    uint32_t least, middle, greatest;
};

struct columns3 { /* the window's columns in a row (values from the row's start), -1 past the edge in constant mode */
    long long at[3];
};

static __device__ __forceinline__ sorted3 sort3(uint32_t a, uint32_t b, uint32_t c)
{
    const uint32_t least = least3(a, b, c), greatest = greatest3(a, b, c);
    return {least, a ^ b ^ c ^ least ^ greatest, greatest}; /* the one left when both ends are taken out */
}

/* The median of the nine keys of three rows' sorted keys. */
static __device__ __forceinline__ uint32_t median3_of(const sorted3 &a, const sorted3 &b, const sorted3 &c)
{
    return middle3(greatest3(a.least, b.least, c.least), middle3(a.middle, b.middle, c.middle),
                   least3(a.greatest, b.greatest, c.greatest));
}

/* Same: the output in the input's type, stored as it is (a kernel of its own: the other types'
 * stores are calls, whose registers would be saved around each). */
template <typename T, bool Same>
static __device__ __forceinline__ void median3_store(const median3_params &p, size_t i, uint32_t key)
{
    if constexpr (Same) ((T *)p.out)[i] = key_value<T>(key);
    else mh_store_double(p.out, i, p.out_type, narrow_value<T>(key));
}

/* A walk whose rows and columns all lie inside the image (most of them): no border mapping, each
 * of the window's columns a pointer that steps a row at a time, MEDIAN3_LOADS rows' loads in
 * flight at once. first: the walk's first input row at the thread's column, out: its first
 * output. */
template <typename T, bool Same>
static __device__ __forceinline__ void median3_inside(const median3_params &p, const T *first, const columns3 w,
                                                     size_t out, long long outputs)
{
    const size_t rv = p.row_values;
    const T *a = first + w.at[0], *b = first + w.at[1], *c = first + w.at[2];
    sorted3 older = sort3(narrow_key(a[0]), narrow_key(b[0]), narrow_key(c[0]));
    sorted3 old = sort3(narrow_key(a[rv]), narrow_key(b[rv]), narrow_key(c[rv]));
    a += 2 * rv, b += 2 * rv, c += 2 * rv;
    long long n = 0;
    for (; n + MEDIAN3_LOADS <= outputs; n += MEDIAN3_LOADS) {
        uint32_t keys[MEDIAN3_LOADS][3];
#pragma unroll
        for (int j = 0; j < MEDIAN3_LOADS; ++j)
            keys[j][0] = narrow_key(a[j * rv]), keys[j][1] = narrow_key(b[j * rv]), keys[j][2] = narrow_key(c[j * rv]);
#pragma unroll
        for (int j = 0; j < MEDIAN3_LOADS; ++j) {
            const sorted3 s = sort3(keys[j][0], keys[j][1], keys[j][2]);
            median3_store<T, Same>(p, out + j * rv, median3_of(older, old, s));
            older = old, old = s;
        }
        a += MEDIAN3_LOADS * rv, b += MEDIAN3_LOADS * rv, c += MEDIAN3_LOADS * rv, out += MEDIAN3_LOADS * rv;
    }
    for (; n < outputs; ++n, a += rv, b += rv, c += rv, out += rv) {
        const sorted3 s = sort3(narrow_key(*a), narrow_key(*b), narrow_key(*c));
        median3_store<T, Same>(p, out, median3_of(older, old, s));
        older = old, old = s;
    }
}

/* A walk that reaches past an edge: each row through the mode's mapping, columns past the edge
 * in constant mode cval's key. top: the walk's first input row (before mapping). */
template <typename T, bool Same>
static __device__ __forceinline__ void median3_border(const median3_params &p, const T *in, const columns3 w,
                                                     size_t out, long long top, long long outputs)
{
    sorted3 older = {}, old = {};
    for (long long n0 = 0; n0 < outputs + 2; n0 += MEDIAN3_LOADS) {
        uint32_t keys[MEDIAN3_LOADS][3];
#pragma unroll
        for (int j = 0; j < MEDIAN3_LOADS; ++j) {
            const long long r = mh_border_index(top + n0 + j, p.rows, p.mode);
            const T *const row = in + (r < 0 ? 0 : (size_t)r * p.row_values);
#pragma unroll
            for (int e = 0; e < 3; ++e) keys[j][e] = r >= 0 && w.at[e] >= 0 ? narrow_key(row[w.at[e]]) : p.cval_key;
        }
#pragma unroll
        for (int j = 0; j < MEDIAN3_LOADS; ++j) {
            const sorted3 s = sort3(keys[j][0], keys[j][1], keys[j][2]);
            const long long n = n0 + j; /* output row n - 2 of the walk ends its window here */
            if (n >= 2 && n < outputs + 2) median3_store<T, Same>(p, out + (size_t)(n - 2) * p.row_values, median3_of(older, old, s));
            older = old, old = s;
        }
    }
}

/* Segment `tile` of a thread's column of outputs v (a grid row's share of an image's rows): the
 * image's input, the segment's first output's index, its windows' first input row (unmapped), its
 * outputs, and whether every row its windows of `side` rows read lies inside the image. */
template <typename T> struct median_segment {
    const T *in;
    size_t out;
    long long top, outputs;
    bool rows_inside;
};
template <typename T>
static __device__ __forceinline__ median_segment<T> segment_of(const median3_params &p, size_t tile, size_t v, int side)
{
    const size_t image = tile / p.segments;
    const long long y0 = (long long)(tile % p.segments * p.segment), top = y0 - p.anchor_row;
    const long long outputs = min((long long)p.segment, p.rows - y0);
    return {(const T *)p.in + image * (size_t)p.rows * p.row_values,
            (image * (size_t)p.rows + (size_t)y0) * p.row_values + v, top, outputs,
            top >= 0 && top + outputs + side - 1 <= p.rows};
}

template <typename T, bool Same>
static __global__ void __launch_bounds__(MEDIAN3_THREADS) rank_median3_kernel(const median3_params p)
{
    const size_t v = blockIdx.x * (size_t)MEDIAN3_THREADS + threadIdx.x;
    if (v >= p.row_values) return; /* no barrier below */
    const long long x = (long long)(v / (size_t)p.channels), ch = (long long)(v % (size_t)p.channels);
    columns3 w;
#pragma unroll
    for (int e = 0; e < 3; ++e) {
        const long long c = mh_border_index(x - p.anchor_col + e, p.cols, p.mode);
        w.at[e] = c < 0 ? -1 : c * p.channels + ch;
    }
    const bool columns_inside = w.at[0] >= 0 && w.at[1] >= 0 && w.at[2] >= 0;
    for (size_t tile = blockIdx.y; tile < p.batch * p.segments; tile += gridDim.y) {
        const median_segment<T> g = segment_of<T>(p, tile, v, 3);
        if (columns_inside && g.rows_inside)
            median3_inside<T, Same>(p, g.in + (size_t)g.top * p.row_values, w, g.out, g.outputs);
        else median3_border<T, Same>(p, g.in, w, g.out, g.top, g.outputs);
    }
}

/* The longest segment (a power of two from MEDIAN3_SEGMENT_MIN to MEDIAN3_SEGMENT_MAX rows) whose
 * walks give every SM MEDIAN3_THREADS_PER_SM threads: columns walks (all images'), down rows. */
static size_t median3_segment(const mh_context *ctx, size_t columns, size_t rows)
{
    const size_t wanted = mh_sm_count(ctx) * MEDIAN3_THREADS_PER_SM;
    size_t segment = MEDIAN3_SEGMENT_MAX;
    while (segment > MEDIAN3_SEGMENT_MIN && columns * mh_ceil_div(rows, segment) < wanted) segment /= 2;
    return segment;
}

/* ---- median5x5, median7x7 -------------------------------------------------------------------
 * The median of a full Side x Side window (median_filter(size=5 or 7)): a thread walks down a
 * column of outputs as median3x3's do, two outputs a step. Each input row's Side keys around the
 * column are sorted once; the step's outputs y and y + 1 share the merge of rows y + 1 to
 * y + Side - 1 (the middle: pairs of sorted rows merged, the step making one new pair), and each
 * is the median of its own last row (y, y + Side) with it. The thread keeps rows y, y + 2, ... and
 * the pairs in registers; a step loads its two new rows before it stores. The networks are
 * src/core/rank_median_rows.h's, 32-bit keys. */
template <int Side, int Width = Side> struct median_rows { /* the window's network, by name */
    static __device__ __forceinline__ void sort(uint32_t (&k)[Width])
    {
        if constexpr (Width == 9) mh_median3x3x3_sort(k);
        else if constexpr (Side == 5) mh_median5_sort(k);
        else mh_median7_sort(k);
    }
    static __device__ __forceinline__ void pair(const uint32_t (&a)[Width], const uint32_t (&b)[Width],
                                                uint32_t (&p)[2 * Width])
    {
        if constexpr (Width == 9) { /* one pair: its middle merges the two planes itself */
#pragma unroll
            for (int i = 0; i < Width; ++i) p[i] = a[i], p[Width + i] = b[i];
        } else if constexpr (Side == 5) mh_median5_pair(a, b, p);
        else mh_median7_pair(a, b, p);
    }
    enum { MIDDLE = Width == 9 ? (int)MH_MEDIAN3X3X3_MIDDLE : Side == 5 ? (int)MH_MEDIAN5_MIDDLE : (int)MH_MEDIAN7_MIDDLE,
           PAIRS = Side / 2, KEPT = Side / 2 + 1 };
    uint32_t m[MIDDLE]; /* the step's middle */
    __device__ __forceinline__ void middle(const uint32_t (&p)[PAIRS][2 * Width])
    {
        if constexpr (Width == 9) mh_median3x3x3_middle(p[0], p[0] + Width, m);
        else if constexpr (Side == 5) mh_median5_middle(p[0], p[1], m);
        else mh_median7_middle(p[0], p[1], p[2], m);
    }
    __device__ __forceinline__ uint32_t select(const uint32_t (&r)[Width]) const
    {
        if constexpr (Width == 9) return mh_median3x3x3_select(r, m);
        else if constexpr (Side == 5) return mh_median5_select(r, m);
        else return mh_median7_select(r, m);
    }
};

/* Any rank of a full Side x Side window (sorted-rows): the walk's rows, pairs and middle as the
 * medians' but the middle merged in full, into the thread's column of shared memory (places
 * S[1 .. MIDDLE]); an output's key, the (rank + 1)-th least of its own sorted row r and the
 * middle, is the least over the ways to take rank + 1 keys from the two, i from r and the rest
 * from the middle, of the greater of the last taken from each: min over i of max(r[i - 1],
 * S[rank + 1 - i]). S[0] is a key below every key (0: none taken from the middle), the places
 * below 0 and past the middle above every key (no such way), written once: the run-time rank
 * reads Side + 1 places of the column with no select over the keys. */
template <int Side> struct ranked_rows {
    enum { PAIRS = Side / 2, KEPT = Side / 2 + 1, MIDDLE = Side * (Side - 1), BELOW = Side - 1,
           PLACES = Side * Side + Side };
    uint32_t *column; /* S[x] at column[(x + BELOW) * MEDIAN3_THREADS] */
    const uint32_t *ranked; /* S[rank + 1] */
    __device__ ranked_rows(uint32_t *keys, int rank)
        : column(keys + threadIdx.x), ranked(column + (rank + 1 + BELOW) * MEDIAN3_THREADS)
    {
#pragma unroll
        for (int x = -BELOW; x <= Side * Side; ++x)
            if (x <= 0 || x > MIDDLE) column[(x + BELOW) * MEDIAN3_THREADS] = x == 0 ? 0u : ~0u;
    }
    static __device__ __forceinline__ void sort(uint32_t (&k)[Side])
    {
        if constexpr (Side == 3) mh_rank3_sort(k);
        else median_rows<Side>::sort(k);
    }
    static __device__ __forceinline__ void pair(const uint32_t (&a)[Side], const uint32_t (&b)[Side],
                                                uint32_t (&p)[2 * Side])
    {
        if constexpr (Side == 3) { /* one pair: the middle merges the two rows itself */
#pragma unroll
            for (int i = 0; i < Side; ++i) p[i] = a[i], p[Side + i] = b[i];
        } else median_rows<Side>::pair(a, b, p);
    }
    __device__ __forceinline__ void middle(const uint32_t (&p)[PAIRS][2 * Side])
    {
        uint32_t m[MIDDLE];
        if constexpr (Side == 3) mh_rank3_middle(p[0], p[0] + Side, m);
        else if constexpr (Side == 5) mh_rank5_middle(p[0], p[1], m);
        else mh_rank7_middle(p[0], p[1], p[2], m);
#pragma unroll
        for (int j = 0; j < MIDDLE; ++j) column[(j + 1 + BELOW) * MEDIAN3_THREADS] = m[j];
    }
    __device__ __forceinline__ uint32_t select(const uint32_t (&r)[Side]) const
    {
        uint32_t key = ranked[0];
#pragma unroll
        for (int i = 1; i <= Side; ++i) key = min(key, max(r[i - 1], ranked[-i * MEDIAN3_THREADS]));
        return key;
    }
};

/* p, hidden from the compiler's arithmetic: a load at p plus a 32-bit offset is then one
 * multiply-add (IMAD.WIDE), where folding p's own index into the offset's made it a 64-bit add, a
 * sign extension and a shift (five instructions a load). */
template <typename T> static __device__ __forceinline__ const T *opaque(const T *p)
{
    asm("" : "+l"(p));
    return p;
}

/* Input row r's Width keys at the thread's places in it (w: values from a row's start, -1 past the
 * edge in constant mode; 32-bit, so that a load's address is one multiply-add on the row's),
 * unsorted; Inside: a row and places inside the image (no mapping, no cval). */
template <typename T, int Width, bool Inside>
static __device__ __forceinline__ void median_rows_load(const median3_params &p, const T *in, const int (&w)[Width],
                                                        long long r, uint32_t (&k)[Width])
{
    const long long m = Inside ? r : mh_border_index(r, p.rows, p.mode);
    const T *const row = opaque(in + (Inside || m >= 0 ? (size_t)m * p.row_values : 0));
#pragma unroll
    for (int e = 0; e < Width; ++e) k[e] = Inside || (m >= 0 && w[e] >= 0) ? narrow_key(row[w[e]]) : p.cval_key;
}

/* outputs output rows from out on, their windows' first input row top (unmapped); a row's Width
 * keys (Side for squares, 9 for 3 x 3 x 3 windows, whose rows are planes). A step loads each new
 * row just before it sorts it: loaded at the step's start, two rows' keys would be held through
 * the middle and the first select, registers that more blocks an SM need (median_blocks). */
template <typename T, bool Same, int Side, int Width, bool Inside, typename N>
static __device__ __forceinline__ void median_rows_walk(const median3_params &p, N &net, const T *in,
                                                        const int (&w)[Width], size_t out, long long top,
                                                        long long outputs)
{
    /* rows y, y + 2, ...; pairs of rows from y + 1, y + 3, ...; the step's two new rows */
    uint32_t kept[N::KEPT][Width], pairs[N::PAIRS][2 * Width], s[Width], t[Width];
    median_rows_load<T, Width, Inside>(p, in, w, top, kept[0]);
    N::sort(kept[0]);
#pragma unroll
    for (int k = 0; k < N::PAIRS; ++k) { /* rows 2k + 1 and 2k + 2 */
        median_rows_load<T, Width, Inside>(p, in, w, top + 2 * k + 1, s);
        median_rows_load<T, Width, Inside>(p, in, w, top + 2 * k + 2, kept[k + 1]);
        N::sort(s), N::sort(kept[k + 1]);
        N::pair(s, kept[k + 1], pairs[k]);
    }
    for (long long n = 0; n < outputs; n += 2, out += 2 * p.row_values) {
        net.middle(pairs);
        median3_store<T, Same>(p, out, net.select(kept[0]));
        if (n + 1 == outputs) break;
        median_rows_load<T, Width, Inside>(p, in, w, top + n + Side, s);
        N::sort(s);
        median3_store<T, Same>(p, out + p.row_values, net.select(s));
        if (n + 2 == outputs) break;
        median_rows_load<T, Width, Inside>(p, in, w, top + n + Side + 1, t);
        N::sort(t);
#pragma unroll
        for (int k = 0; k + 1 < N::KEPT; ++k)
#pragma unroll
            for (int i = 0; i < Width; ++i) kept[k][i] = kept[k + 1][i];
#pragma unroll
        for (int i = 0; i < Width; ++i) kept[N::KEPT - 1][i] = t[i];
#pragma unroll
        for (int k = 0; k + 1 < N::PAIRS; ++k)
#pragma unroll
            for (int i = 0; i < 2 * Width; ++i) pairs[k][i] = pairs[k + 1][i];
        N::pair(s, t, pairs[N::PAIRS - 1]);
    }
}

/* Blocks an SM the median-rows kernels ask registers for (__launch_bounds__): seven for 5 x 5 and
 * 3 x 3 x 3 windows (72 registers, about 100 bytes of spill a thread), four for 7 x 7 (128, 90
 * bytes). Their walks are chains of dependent minima and maxima, and on the H200 the warps these
 * bounds add hide more than the spill costs (5 x 5 and 7 x 7 about a tenth faster than with bounds of
 * five and three blocks, 3 x 3 x 3 the same from five blocks to eight; lab/notes/rank.md). */
static constexpr int median_blocks(int side) { return side == 7 ? 4 : 7; }

/* A thread's walks down its column of outputs v over every segment of the grid's y, with the
 * network N (median_rows or ranked_rows). */
template <typename T, bool Same, int Side, typename N>
static __device__ __forceinline__ void median_rows_column(const median3_params &p, N &net, size_t v)
{
    const long long x = (long long)(v / (size_t)p.channels), ch = (long long)(v % (size_t)p.channels);
    int w[Side]; /* rows of fewer than 2^31 values (median_walk_fits) */
    bool columns_inside = true;
#pragma unroll
    for (int e = 0; e < Side; ++e) {
        const long long c = mh_border_index(x - p.anchor_col + e, p.cols, p.mode);
        w[e] = c < 0 ? -1 : (int)(c * p.channels + ch);
        columns_inside = columns_inside && c >= 0;
    }
    for (size_t tile = blockIdx.y; tile < p.batch * p.segments; tile += gridDim.y) {
        const median_segment<T> g = segment_of<T>(p, tile, v, Side);
        if (columns_inside && g.rows_inside) median_rows_walk<T, Same, Side, Side, true>(p, net, g.in, w, g.out, g.top, g.outputs);
        else median_rows_walk<T, Same, Side, Side, false>(p, net, g.in, w, g.out, g.top, g.outputs);
    }
}

template <typename T, bool Same, int Side>
static __global__ void __launch_bounds__(MEDIAN3_THREADS, median_blocks(Side)) rank_median_rows_kernel(const median3_params p)
{
    const size_t v = blockIdx.x * (size_t)MEDIAN3_THREADS + threadIdx.x;
    if (v >= p.row_values) return; /* no barrier below */
    median_rows<Side> net;
    median_rows_column<T, Same, Side>(p, net, v);
}

/* sorted-rows: any rank of a full 3 x 3, 5 x 5 or 7 x 7 window (ranked_rows). */
template <typename T, bool Same, int Side>
static __global__ void __launch_bounds__(MEDIAN3_THREADS, median_blocks(Side)) rank_sorted_rows_kernel(const median3_params p)
{
    __shared__ uint32_t keys[ranked_rows<Side>::PLACES * MEDIAN3_THREADS];
    const size_t v = blockIdx.x * (size_t)MEDIAN3_THREADS + threadIdx.x;
    if (v >= p.row_values) return; /* no barrier below */
    ranked_rows<Side> net(keys, p.rank);
    median_rows_column<T, Same, Side>(p, net, v);
}

/* ---- median3x3x3 ----------------------------------------------------------------------------
 * The median of a full 3 x 3 x 3 window of a volume (median_filter(size=3) on 3-D arrays): the
 * rows' walk across the planes, a thread for each value of a plane (its row, column and channel),
 * a plane's nine keys around it its row. */
template <typename T, bool Same>
static __global__ void __launch_bounds__(MEDIAN3_THREADS, median_blocks(3)) rank_median_planes_kernel(const median3_params p)
{
    const size_t v = blockIdx.x * (size_t)MEDIAN3_THREADS + threadIdx.x;
    if (v >= p.row_values) return; /* no barrier below */
    const size_t pixel = v / (size_t)p.channels;
    const long long ch = (long long)(v % (size_t)p.channels), x = (long long)(pixel % (size_t)p.cols);
    const long long y = (long long)(pixel / (size_t)p.cols);
    int w[9]; /* planes of fewer than 2^31 values (median_supports) */
    bool inside = true;
#pragma unroll
    for (int e = 0; e < 9; ++e) {
        const long long r = mh_border_index(y - p.anchor_plane_row + e / 3, p.plane_rows, p.mode);
        const long long c = mh_border_index(x - p.anchor_col + e % 3, p.cols, p.mode);
        w[e] = r < 0 || c < 0 ? -1 : (int)((r * p.cols + c) * p.channels + ch);
        inside = inside && w[e] >= 0;
    }
    median_rows<3, 9> net;
    for (size_t tile = blockIdx.y; tile < p.batch * p.segments; tile += gridDim.y) {
        const median_segment<T> g = segment_of<T>(p, tile, v, 3);
        if (inside && g.rows_inside) median_rows_walk<T, Same, 3, 9, true>(p, net, g.in, w, g.out, g.top, g.outputs);
        else median_rows_walk<T, Same, 3, 9, false>(p, net, g.in, w, g.out, g.top, g.outputs);
    }
}

/* Whether a row takes the call's keys (32-bit only) and, where it walks by median_rows_walk
 * (walks: every row but median3x3, whose columns are 64-bit), places in a row (a plane of a volume:
 * planes > 1) that 32-bit offsets reach. */
static int median_walk_fits(const mh_rank_desc *d, size_t planes, bool walks, const char *row, char *why, size_t len)
{
    const size_t line_values = d->cols * d->channels * (planes > 1 ? d->rows : 1);
    if (walks && line_values > INT32_MAX) {
        snprintf(why, len, "%s takes %s of fewer than 2^31 values; these have %zu", row, planes > 1 ? "planes" : "rows",
                 line_values);
        return 0;
    }
    if (key_bytes(d) == 4) return 1;
    snprintf(why, len, "%s%s: %s keeps 32-bit keys (inputs of up to 32 bits, cval one of their values)",
             mh_dtype_name(d->in_type), d->mode == MH_MODE_CONSTANT ? " with its cval" : "", row);
    return 0;
}

/* Whether a median row of a window of planes x side x side takes the call. */
static int median_supports(const mh_args *args, size_t planes, size_t side, const char *row, char *why, size_t len)
{
    return mh_rank_full_median_of(&args->rank, planes, side, why, len) &&
           median_walk_fits(&args->rank.d, planes, planes > 1 || side > 3, row, why, len);
}

/* A walk's parameters for windows of planes x side x side of T's keys: a thread a value of a row
 * (of a plane), a block's y a segment of rows (planes) of an image (a volume). */
template <typename T>
static median3_params walk_params(const mh_context *ctx, const mh_rank_args *a, int planes, int side)
{
    const mh_rank_desc *d = &a->d;
    const bool volume = planes > 1;
    const size_t lines = volume ? d->depth : d->rows, line_values = d->cols * d->channels * (volume ? d->rows : 1);
    const size_t segment = median3_segment(ctx, line_values * d->batch, lines);
    return {a->in, a->out, d->out_type, (long long)lines, (long long)d->cols, (long long)d->channels,
            (int)(volume ? 1 + d->origin_depth : side / 2 + d->origin_row), (int)(side / 2 + d->origin_col),
            (int)d->mode, (uint32_t)cval_key<T, uint32_t>(d->cval), line_values, d->batch, segment,
            mh_ceil_div(lines, segment), (long long)d->rows, (int)(side / 2 + d->origin_row), (int)d->rank};
}

/* The walk's grid (0 where a row's values need more blocks than a grid's x holds). */
static dim3 walk_grid(const median3_params &p)
{
    const size_t x_blocks = mh_ceil_div(p.row_values, (size_t)MEDIAN3_THREADS), tiles = p.batch * p.segments;
    if (x_blocks > INT32_MAX) return dim3(0);
    return dim3((unsigned)x_blocks, (unsigned)(tiles < 65535 ? tiles : 65535));
}

template <int Planes, int Side> static mh_status median_run(mh_context *ctx, const mh_args *args, const char *name)
{
    const mh_rank_args *a = &args->rank;
    const mh_rank_desc *d = &a->d;
    char why[200];
    if (!median_supports(args, Planes, Side, name, why, sizeof why)) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "%s: %s", name, why);
    return with_keys(d, [&](auto type, auto) {
        using T = std::remove_pointer_t<decltype(type)>;
        if constexpr (std::is_void<T>::value) {
            return mh_fail(ctx, MH_ERR_INTERNAL, "%s: 64-bit keys", name);
        } else {
            const median3_params p = walk_params<T>(ctx, a, Planes, Side);
            const dim3 grid = walk_grid(p);
            if (!grid.x) return mh_fail(ctx, MH_ERR_UNSUPPORTED, "%s: rows of %zu values", name, p.row_values);
            const bool same = d->out_type == d->in_type;
            if constexpr (Planes > 1) {
                if (same) rank_median_planes_kernel<T, true><<<grid, MEDIAN3_THREADS, 0, mh_stream(ctx)>>>(p);
                else rank_median_planes_kernel<T, false><<<grid, MEDIAN3_THREADS, 0, mh_stream(ctx)>>>(p);
            } else if constexpr (Side == 3) {
                if (same) rank_median3_kernel<T, true><<<grid, MEDIAN3_THREADS, 0, mh_stream(ctx)>>>(p);
                else rank_median3_kernel<T, false><<<grid, MEDIAN3_THREADS, 0, mh_stream(ctx)>>>(p);
            } else {
                if (same) rank_median_rows_kernel<T, true, Side><<<grid, MEDIAN3_THREADS, 0, mh_stream(ctx)>>>(p);
                else rank_median_rows_kernel<T, false, Side><<<grid, MEDIAN3_THREADS, 0, mh_stream(ctx)>>>(p);
            }
            return mh_cuda_status(ctx, cudaGetLastError(), name);
        }
    });
}

/* the rows whose kernels compile apart */
mh_status mh_rank_median7_run(mh_context *ctx, const mh_args *args);
mh_status mh_rank_median3x3x3_run(mh_context *ctx, const mh_args *args);
int mh_rank_sorted_rows_supports(const mh_context *ctx, const mh_args *args, char *why, size_t len);
mh_status mh_rank_sorted_rows_run(mh_context *ctx, const mh_args *args);

#endif

/* auto's rules over a grid of shapes, for every op, on a CUDA context of compute capability 9.0
 * with 132 SMs (an H100), compared with tests/data/auto_picks.txt: each line names the shape,
 * auto's candidates in order (a list named once per op) and, for the rows whose configuration depends on the problem,
 * the configuration their "auto" runs as. The rules are functions of the shape and of the
 * context's device facts alone, so this runs on any machine, GPU or not; a change in any
 * threshold shows here as the lines it moves.
 *
 * MEMHIER_WRITE_AUTO_PICKS=1 rewrites the file instead (when a rule is meant to change). */
#include "testing.h"

static FILE *out;
static mh_context gpu; /* a CUDA context's facts, no device behind them */

/* auto's candidate lists, each printed once per op as "Ln = a b c" and named by Ln after */
enum { MAX_LISTS = 16 };
static const char *const *lists[MAX_LISTS];
static int nlists;
static mh_op lists_op;

static int list_index(mh_op op, const char *const *names)
{
    if (op != lists_op) nlists = 0, lists_op = op;
    for (int i = 0; i < nlists; ++i)
        if (lists[i] == names) return i;
    if (nlists == MAX_LISTS) return -1;
    lists[nlists] = names;
    fprintf(out, "%s L%d =", mh_op_table_of(op)->name, nlists);
    for (const char *const *n = names; *n; ++n) fprintf(out, " %s", *n);
    fputc('\n', out);
    return nlists++;
}

static const char *config_of(mh_op op, const char *row, const mh_args *a)
{
    const mh_row *r = mh_row_of(mh_variant_lookup(op, row));
    return r && r->config_for ? r->config_for(&gpu, a) : "-";
}

static void line(const mh_args *a, const char *shape, const char *const *cfg_rows)
{
    const mh_op_table *t = mh_op_table_of(a->op);
    const int l = list_index(a->op, t->auto_order(&gpu, a, NULL, 0));
    fprintf(out, "%s: L%d", shape, l);
    for (const char *const *r = cfg_rows; r && *r; ++r) fprintf(out, " %s=%s", *r, config_of(a->op, *r, a));
    fputc('\n', out);
}

static void conv1d_grid(void)
{
    static const size_t ks[] = {1,   3,   31,  45,   46,   47,   48,   95,   96,   97,    383,  384,
                                385, 767, 768, 1535, 1536, 2047, 2049, 2050, 4095, 4097, 4098, 65535};
    static const size_t batches[] = {1, 64};
    static const char *const cfg[] = {"fft-fused", NULL};
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; ++b)
        for (int l = 10; l <= 26; l += 2)
            for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
                for (int per_signal = 0; per_signal < (batches[b] > 1 ? 2 : 1); ++per_signal) {
                    const size_t n = (size_t)1 << l, k = ks[i];
                    if (k > n) continue;
                    mh_args a;
                    if (mh_conv1d_batched_args_init(NULL, &a, NULL, batches[b], n, NULL, per_signal ? k : 0, k,
                                                    MH_PAD_VALID, NULL) != MH_OK)
                        continue;
                    char shape[96];
                    snprintf(shape, sizeof shape, "batch=%zu n=2^%d k=%zu%s", batches[b], l, k,
                             per_signal ? " per-signal" : "");
                    line(&a, shape, cfg);
                }
}

static void conv2d_grid(void)
{
    static const int ks[] = {1, 3, 5, 6, 7, 9, 11, 13, 14, 15, 17, 19, 23, 31};
    static const size_t sides[] = {511, 512, 2047, 2048, 8192};
    static const char *const cfg[] = {"tc", NULL};
    const size_t nk = sizeof ks / sizeof ks[0];
    for (size_t s = 0; s < sizeof sides / sizeof sides[0]; ++s)
        for (size_t i = 0; i < nk; ++i)
            for (size_t j = 0; j < nk; ++j)
                for (int p = 0; p < (sides[s] == 2048 ? 2 : 1); ++p) {
                    const mh_pad pad = p ? MH_PAD_VALID : MH_PAD_SAME;
                    mh_args a;
                    if (mh_conv2d_args_init(NULL, &a, NULL, sides[s], sides[s], NULL, (size_t)ks[i], (size_t)ks[j], pad,
                                            NULL) != MH_OK)
                        continue;
                    char shape[96];
                    snprintf(shape, sizeof shape, "%zu^2 %dx%d %s", sides[s], ks[i], ks[j], p ? "valid" : "same");
                    line(&a, shape, cfg);
                }
    /* past the direct rows' 31 a side: fft-3pass, then fft-os, then basic (per-element) */
    static const int large[][2] = {{32, 32}, {63, 63}, {127, 127}, {255, 3}, {1, 255}};
    static const char *const no_cfg[] = {NULL};
    for (size_t i = 0; i < sizeof large / sizeof large[0]; ++i) {
        mh_args a;
        mh_conv2d_args_init(NULL, &a, NULL, 4096, 4096, NULL, (size_t)large[i][0], (size_t)large[i][1], MH_PAD_SAME,
                            NULL);
        char shape[96];
        snprintf(shape, sizeof shape, "4096^2 %dx%d same", large[i][0], large[i][1]);
        line(&a, shape, no_cfg);
    }
}

/* Bordered calls (mh_conv2d_mode_batched, reflect) on single images and stacks: walk's ring
 * kernel alone up to conv2d_walk_one_kernel_max_outputs, tiles first past it up to
 * conv2d_tiles_max_outputs and on stacks of images of at most conv2d_tiles_stack_max_image_outputs,
 * walk past them. */
static void conv2d_border_grid(void)
{
    static const size_t sides[] = {256, 511, 512, 513, 1024, 2048, 4096, 4097, 8192}, batches[] = {1, 64, 1000};
    static const int ks[] = {3, 5, 7};
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; ++b)
        for (size_t s = 0; s < sizeof sides / sizeof sides[0]; ++s)
            for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) {
                mh_args a;
                if (mh_conv2d_mode_batched_args_init(NULL, &a, NULL, batches[b], sides[s], sides[s], NULL,
                                                     (size_t)ks[i], (size_t)ks[i], MH_MODE_REFLECT, 0.0f, 0, 0,
                                                     NULL) != MH_OK)
                    continue;
                char shape[96];
                snprintf(shape, sizeof shape, "reflect batch=%zu %zu^2 %dx%d", batches[b], sides[s], ks[i], ks[i]);
                line(&a, shape, NULL);
            }
}

/* scripts/conv2d_auto_grid.sh's cells: its sides and filter shapes, unplanned (its random
 * filters) and planned at rank 1 and 2 (its Gaussians and differences of Gaussians): the picks
 * scripts/plot_conv2d_grid.py --picks replays on the grid's times; and its terms3 and terms4
 * kinds (rank 3 and 4, or the filter's smaller side). */
static const int auto_grid_shapes[][2] = {{3, 3},     {5, 5},  {7, 7},  {11, 11}, {15, 15}, {21, 21}, {31, 31},
                                          {63, 63},   {127, 127}, {3, 31}, {31, 3},  {7, 21},  {15, 63}};
static const size_t auto_grid_sides[] = {256, 1024, 4096, 16384};

/* The cell (side^2, krows x kcols) is one of a grid's: one of its sides and one of its shapes. */
static int in_grid(const size_t *sides, size_t nsides, const int (*shapes)[2], size_t nshapes, size_t side, int krows,
                   int kcols)
{
    int side_in = 0, shape_in = 0;
    for (size_t s = 0; s < nsides; ++s) side_in |= sides[s] == side;
    for (size_t i = 0; i < nshapes; ++i) shape_in |= shapes[i][0] == krows && shapes[i][1] == kcols;
    return side_in && shape_in;
}

#define IN_GRID(prefix, side, krows, kcols)                                                                      \
    in_grid(prefix##_sides, sizeof prefix##_sides / sizeof prefix##_sides[0], prefix##_shapes,                   \
            sizeof prefix##_shapes / sizeof prefix##_shapes[0], side, krows, kcols)

static int in_auto_grid(size_t side, int krows, int kcols) { return IN_GRID(auto_grid, side, krows, kcols); }

/* One cell of a grid: auto's list for a side^2 image, a krows x kcols filter, same padding, planned
 * where `plan` is given, on the line "grid KIND SIDE^2 KRxKC" plot_conv2d_grid.py --picks reads. */
static void grid_cell(const char *kind, size_t side, int krows, int kcols, mh_conv2d_plan *plan)
{
    static const char *const cfg[] = {"tc", NULL};
    mh_args a;
    if (mh_conv2d_args_init(NULL, &a, NULL, side, side, NULL, (size_t)krows, (size_t)kcols, MH_PAD_SAME, NULL) != MH_OK)
        return;
    a.conv2d.plan = plan;
    char shape[96];
    snprintf(shape, sizeof shape, "grid %s %zu^2 %dx%d", kind, side, krows, kcols);
    line(&a, shape, cfg);
}

static void conv2d_auto_grid(void)
{
    static const char *const kinds[] = {"random", "gaussian", "dog", "terms3", "terms4"};
    static mh_conv2d_plan plans[5];
    for (size_t s = 0; s < sizeof auto_grid_sides / sizeof auto_grid_sides[0]; ++s)
        for (size_t i = 0; i < sizeof auto_grid_shapes / sizeof auto_grid_shapes[0]; ++i)
            for (int kind = 0; kind < 5; ++kind) {
                const int kr = auto_grid_shapes[i][0], kc = auto_grid_shapes[i][1], side = kr < kc ? kr : kc;
                plans[kind].rank = kind < 3 || kind < side ? kind : side;
                plans[kind].krows = kr, plans[kind].kcols = kc;
                grid_cell(kinds[kind], auto_grid_sides[s], kr, kc, kind ? &plans[kind] : NULL);
            }
}

/* The same for the mid-size grid (scripts/conv2d_auto_grid.sh on these sides and shapes, random
 * filters, rows tc, regtile and fft-tile): where tc, regtile and fft-tile trade places between
 * 512^2 and 2048^2. Cells the grid above has are left to it. */
static const int mid_grid_shapes[][2] = {{11, 11}, {13, 13}, {15, 15}, {7, 21}, {21, 7},
                                         {9, 17},  {17, 9},  {9, 15},  {11, 13}};
static const size_t mid_grid_sides[] = {512, 640, 768, 896, 1024, 1152, 1280, 1448, 1536, 2048};

static int in_mid_grid(size_t side, int krows, int kcols) { return IN_GRID(mid_grid, side, krows, kcols); }

static void conv2d_mid_grid(void)
{
    for (size_t s = 0; s < sizeof mid_grid_sides / sizeof mid_grid_sides[0]; ++s)
        for (size_t i = 0; i < sizeof mid_grid_shapes / sizeof mid_grid_shapes[0]; ++i)
            if (!in_auto_grid(mid_grid_sides[s], mid_grid_shapes[i][0], mid_grid_shapes[i][1]))
                grid_cell("random", mid_grid_sides[s], mid_grid_shapes[i][0], mid_grid_shapes[i][1], NULL);
}

/* The narrow grid (gpu-check.sh's phase narrow-grid, random filters, rows tc, regtile and
 * fft-tile): tall filters of 6 and 7 columns from 256^2 to 448^2, and at 511^2 and 512^2 those
 * with filters of 169 to 266 taps beside them; conv2d_tc_one_slice_min_taps. Cells the grids
 * above have are left to them. */
static const int tall_grid_shapes[][2] = {{20, 7}, {21, 7}, {23, 7}, {25, 7}, {28, 7}, {31, 7}, {30, 6}, {31, 6}};
static const size_t tall_grid_sides[] = {256, 320, 384, 448};
static const int near_grid_shapes[][2] = {{13, 13}, {14, 13}, {15, 13}, {17, 13}, {21, 7},
                                          {23, 7},  {31, 6},  {31, 7},  {14, 19}, {23, 11}};
static const size_t near_grid_sides[] = {511, 512};

static int in_narrow_grid(size_t side, int krows, int kcols)
{
    return IN_GRID(tall_grid, side, krows, kcols) || IN_GRID(near_grid, side, krows, kcols);
}

static void conv2d_narrow_grid(void)
{
    for (size_t s = 0; s < sizeof tall_grid_sides / sizeof tall_grid_sides[0]; ++s)
        for (size_t i = 0; i < sizeof tall_grid_shapes / sizeof tall_grid_shapes[0]; ++i)
            grid_cell("random", tall_grid_sides[s], tall_grid_shapes[i][0], tall_grid_shapes[i][1], NULL);
    for (size_t s = 0; s < sizeof near_grid_sides / sizeof near_grid_sides[0]; ++s)
        for (size_t i = 0; i < sizeof near_grid_shapes / sizeof near_grid_shapes[0]; ++i)
            if (!in_mid_grid(near_grid_sides[s], near_grid_shapes[i][0], near_grid_shapes[i][1]))
                grid_cell("random", near_grid_sides[s], near_grid_shapes[i][0], near_grid_shapes[i][1], NULL);
}

/* The mid-taps grid (gpu-check.sh's phase mid-taps-grid, random filters, rows tc, regtile and
 * fft-tile): filters of 247 to 361 taps from 448^2 to 768^2, where fft-tile's tiles begin to pay
 * for filters past 15 x 15 and tc's share falls; conv2d_fft_tile_min_taps's 448^2 step. Cells the
 * narrow grid has are left to it. */
static void conv2d_mid_taps_grid(void)
{
    static const int shapes[][2] = {{17, 17}, {19, 19}, {14, 19}, {23, 11}, {21, 13},
                                    {13, 21}, {16, 16}, {19, 13}, {11, 23}, {15, 17}};
    static const size_t sides[] = {448, 512, 640, 768};
    for (size_t s = 0; s < sizeof sides / sizeof sides[0]; ++s)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
            if (!in_narrow_grid(sides[s], shapes[i][0], shapes[i][1]))
                grid_cell("random", sides[s], shapes[i][0], shapes[i][1], NULL);
}

static void matmul_grid(void)
{
    static const size_t d[] = {1, 64, 511, 512, 894, 896, 1024, 4096, 8192, 262144, 262145};
    static const char *const cfg[] = {"tf32x3-wgmma", "tf32-wgmma", NULL};
    const size_t nd = sizeof d / sizeof d[0];
    for (size_t i = 0; i < nd; ++i)
        for (size_t j = 0; j < nd; ++j)
            for (size_t l = 0; l < nd; ++l) {
                const size_t m = d[i], k = d[j], n = d[l];
                if ((double)m * (double)k > 1e10 || (double)k * (double)n > 1e10 || (double)m * (double)n > 1e10) continue;
                mh_args a;
                if (mh_matmul_args_init(NULL, &a, NULL, NULL, NULL, m, k, n) != MH_OK) continue;
                char shape[96];
                snprintf(shape, sizeof shape, "%zu x %zu x %zu", m, k, n);
                line(&a, shape, cfg);
            }
}

static void histogram_grid(void)
{
    static const int bins[] = {1, 7, 31, 32, 33, 256, 1815, 1816, 100000};
    for (size_t i = 0; i < sizeof bins / sizeof bins[0]; ++i)
        for (int bytes = 0; bytes < 2; ++bytes) {
            if (bytes && bins[i] > 256) continue;
            mh_args a;
            if (mh_histogram_args_init(NULL, &a, NULL, bytes, 1 << 20, 0, bins[i] - 1, 1, NULL, NULL) != MH_OK) continue;
            char shape[64];
            snprintf(shape, sizeof shape, "%s bins=%d", bytes ? "bytes" : "int32", bins[i]);
            line(&a, shape, NULL);
        }
    static const float edges[1]; /* stands for explicit edges: never read */
    for (size_t i = 0; i < sizeof bins / sizeof bins[0]; ++i)
        for (int explicit_edges = 0; explicit_edges < 2; ++explicit_edges) {
            mh_args a;
            if (mh_histogram_float_args_init(NULL, &a, NULL, 1 << 20, bins[i], -1.0, 1.0, explicit_edges ? edges : NULL,
                                             NULL, NULL) != MH_OK)
                continue;
            char shape[64];
            snprintf(shape, sizeof shape, "float32 %s bins=%d", explicit_edges ? "edges" : "uniform", bins[i]);
            line(&a, shape, NULL);
        }
}

static void other_ops(void)
{
    mh_args a;
    if (mh_transpose_args_init(NULL, &a, NULL, 8192, 8192, NULL) == MH_OK) line(&a, "8192 x 8192", NULL);
    if (mh_transpose_args_init(NULL, &a, NULL, 1, 1 << 24, NULL) == MH_OK) line(&a, "1 x 2^24", NULL);
    if (mh_reduce_args_init(NULL, &a, NULL, (size_t)1 << 28, NULL) == MH_OK) line(&a, "n=2^28", NULL);
}

/* The grid's lines, made into buf. */
static char *make_picks(size_t *len)
{
    char *buf = NULL;
    out = open_memstream(&buf, len);
    conv1d_grid();
    conv2d_grid();
    conv2d_border_grid();
    conv2d_auto_grid();
    conv2d_mid_grid();
    conv2d_narrow_grid();
    conv2d_mid_taps_grid();
    matmul_grid();
    histogram_grid();
    other_ops();
    fclose(out);
    return buf;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    *len = buf ? fread(buf, 1, (size_t)size, f) : 0;
    if (buf) buf[*len] = 0;
    fclose(f);
    return buf;
}

/* The first line where got and want differ, both versions. */
static void first_difference(const char *got, const char *want)
{
    size_t at = 0, line_start = 0, line_no = 1;
    while (got[at] && got[at] == want[at]) {
        if (got[at] == '\n') line_start = at + 1, ++line_no;
        ++at;
    }
    const char *g = got + line_start, *w = want + line_start;
    fprintf(stderr, "line %zu differs:\n  expected: %.*s\n  got:      %.*s\n", line_no, (int)strcspn(w, "\n"), w,
            (int)strcspn(g, "\n"), g);
}

/* The rule each op's auto_order states (explain's line), with the numbers: a few shapes either
 * side of a rule. */
static void check_rule(const mh_args *a, const char *want1, const char *want2)
{
    char text[1024] = "";
    mh_op_table_of(a->op)->auto_order(&gpu, a, text, sizeof text);
    CHECK(strstr(text, want1) && (!want2 || strstr(text, want2)), "rule \"%s\" lacks \"%s\" or \"%s\"", text, want1,
          want2 ? want2 : "");
}

/* check_rule for a planned one-term k x k filter on a side x side image. */
static void check_planned_rule(size_t side, int k, const char *want1, const char *want2)
{
    mh_conv2d_plan one_term = {.rank = 1, .krows = k, .kcols = k};
    mh_args a;
    mh_conv2d_args_init(NULL, &a, NULL, side, side, NULL, (size_t)k, (size_t)k, MH_PAD_SAME, NULL);
    a.conv2d.plan = &one_term;
    check_rule(&a, want1, want2);
}

static void test_rules_text(void)
{
    mh_args a;
    mh_conv1d_args_init(NULL, &a, NULL, (size_t)1 << 24, NULL, 2047, MH_PAD_VALID, NULL);
    check_rule(&a, "fft-fused from k >= 48", "fft-fused first");
    mh_conv1d_args_init(NULL, &a, NULL, 4096, NULL, 31, MH_PAD_VALID, NULL);
    check_rule(&a, "fft-fused from k >= 384", "regtile first");
    mh_conv1d_args_init(NULL, &a, NULL, (size_t)1 << 24, NULL, 5000, MH_PAD_VALID, NULL);
    check_rule(&a, "5000 > 4097", "fft-os first");
    mh_conv2d_args_init(NULL, &a, NULL, 8192, 8192, NULL, 11, 11, MH_PAD_SAME, NULL);
    check_rule(&a, "121 taps, at least 49", "fft-tile (2-D FFT tiles in shared memory) first");
    mh_conv2d_args_init(NULL, &a, NULL, 1024, 1024, NULL, 7, 7, MH_PAD_SAME, NULL);
    check_rule(&a, "49 taps, at least 49", "fft-tile (2-D FFT tiles in shared memory) first");
    mh_conv2d_args_init(NULL, &a, NULL, 1024, 1024, NULL, 5, 9, MH_PAD_SAME, NULL);
    check_rule(&a, "45 taps, under 121", "the direct rows");
    mh_conv2d_args_init(NULL, &a, NULL, 2048, 2048, NULL, 7, 7, MH_PAD_SAME, NULL);
    check_rule(&a, "a 7 x 7 filter on 4194304 outputs, at least 2359296: walk first", "then fft-tile");
    mh_conv2d_args_init(NULL, &a, NULL, 4096, 4096, NULL, 63, 32, MH_PAD_SAME, NULL);
    check_rule(&a, "63 x 32 filter is past the direct rows' 31 a side: fft-3pass", "then fft-os");
    mh_conv2d_args_init(NULL, &a, NULL, 4096, 4096, NULL, 31, 31, MH_PAD_SAME, NULL);
    check_rule(&a, "961 taps, at least 49", "fft-tile (2-D FFT tiles in shared memory) first");
    mh_conv2d_args_init(NULL, &a, NULL, 2048, 2048, NULL, 23, 7, MH_PAD_SAME, NULL);
    check_rule(&a, "161 taps, at least 49", "fft-tile (2-D FFT tiles in shared memory) first");
    mh_conv2d_args_init(NULL, &a, NULL, 1024, 1024, NULL, 15, 15, MH_PAD_SAME, NULL);
    check_rule(&a, "225 taps, at least 49", "fft-tile (2-D FFT tiles in shared memory) first");
    mh_conv2d_args_init(NULL, &a, NULL, 256, 256, NULL, 15, 15, MH_PAD_SAME, NULL);
    check_rule(&a, "225 taps, at least 49", "fft-tile (2-D FFT tiles in shared memory) first");
    /* a planned difference of Gaussians (two terms): lowrank ahead of fft-tile while its cost is
     * within the rules' (180 below 512^2, 50 from there), or from 2048^2 where lowrank has an
     * instance of the filter's size; a Gaussian (one term) ahead from 2048^2 */
    mh_conv2d_plan two_terms = {.rank = 2, .krows = 16, .kcols = 16}, one_term = {.rank = 1, .krows = 21, .kcols = 21},
                   own_size = {.rank = 2, .krows = 21, .kcols = 21};
    two_terms.krows = two_terms.kcols = 11;
    mh_conv2d_args_init(NULL, &a, NULL, 256, 256, NULL, 11, 11, MH_PAD_SAME, NULL);
    a.conv2d.plan = &two_terms;
    check_rule(&a, "here 66, is at most 180", "lowrank first");
    mh_conv2d_args_init(NULL, &a, NULL, 1024, 1024, NULL, 11, 11, MH_PAD_SAME, NULL);
    a.conv2d.plan = &two_terms;
    check_rule(&a, "fft-tile (2-D FFT tiles in shared memory) first", "than the rules give lowrank before it");
    two_terms.krows = two_terms.kcols = 16;
    mh_conv2d_args_init(NULL, &a, NULL, 8192, 8192, NULL, 16, 16, MH_PAD_SAME, NULL);
    a.conv2d.plan = &two_terms;
    check_rule(&a, "fft-tile (2-D FFT tiles in shared memory) first", "than the rules give lowrank before it");
    mh_conv2d_args_init(NULL, &a, NULL, 8192, 8192, NULL, 21, 21, MH_PAD_SAME, NULL);
    a.conv2d.plan = &own_size;
    check_rule(&a, "instance of the filter's size, as here", "lowrank first");
    a.conv2d.plan = &one_term;
    check_rule(&a, "is 1 term on 67108864 outputs: lowrank first", "then fft-tile");
    mh_conv2d_args_init(NULL, &a, NULL, 1024, 1024, NULL, 21, 21, MH_PAD_SAME, NULL);
    a.conv2d.plan = &own_size;
    check_rule(&a, "fft-tile (2-D FFT tiles in shared memory) first", "than the rules give lowrank before it");
    a.conv2d.plan = &one_term;
    check_rule(&a, "fft-tile (2-D FFT tiles in shared memory) first", "than the rules give lowrank before it");
    /* on a small image: a planned Gaussian of 31 rows to fft-tile (the rows its segments read
     * ahead), one of 5 x 5 to lowrank (walk's strips are few there), not from 512^2 */
    check_planned_rule(256, 31, "fft-tile (2-D FFT tiles in shared memory) first",
                       "has more rows, than the rules give lowrank");
    check_planned_rule(256, 21, "here 63, is at most 180 and krows, here 21, at most 21", "lowrank first");
    check_planned_rule(256, 5, "is 1 term: 10 FMAs an output against 25 direct, lowrank first", NULL);
    check_planned_rule(512, 5, "the direct rows", "walk takes 3 x 3 and 5 x 5");
    check_planned_rule(256, 3, "the direct rows", "walk takes 3 x 3 and 5 x 5");
    mh_conv2d_args_init(NULL, &a, NULL, 8192, 8192, NULL, 7, 7, MH_PAD_SAME, NULL);
    check_rule(&a, "walk first", "then fft-tile");
    /* a planned 7 x 7 Gaussian: lowrank below 6144^2, walk ahead of it from there */
    one_term.krows = one_term.kcols = 7;
    a.conv2d.plan = &one_term;
    check_rule(&a, "at least 37748736 for a planned filter lowrank takes: walk first", "then lowrank");
    mh_conv2d_args_init(NULL, &a, NULL, 4096, 4096, NULL, 7, 7, MH_PAD_SAME, NULL);
    a.conv2d.plan = &one_term;
    check_rule(&a, "is 1 term", "lowrank first");
    mh_conv2d_args_init(NULL, &a, NULL, 8192, 8192, NULL, 7, 7, MH_PAD_VALID, NULL);
    check_rule(&a, "49 taps, at least 49", "fft-tile (2-D FFT tiles in shared memory) first");
    mh_conv2d_args_init(NULL, &a, NULL, 512, 512, NULL, 21, 21, MH_PAD_SAME, NULL);
    check_rule(&a, "441 taps, at least 49", "fft-tile (2-D FFT tiles in shared memory) first");
    mh_conv2d_args_init(NULL, &a, NULL, 384, 384, NULL, 21, 21, MH_PAD_SAME, NULL);
    check_rule(&a, "441 taps, at least 49", "fft-tile (2-D FFT tiles in shared memory) first");
    mh_matmul_args_init(NULL, &a, NULL, NULL, NULL, 4096, 4096, 4096);
    check_rule(&a, "tf32x3-wgmma first", "k = 4096");
    mh_matmul_args_init(NULL, &a, NULL, NULL, NULL, 64, 65536, 64);
    check_rule(&a, "cuBLAS first", NULL);
    mh_histogram_args_init(NULL, &a, NULL, 1, 100, 0, 255, 1, NULL, NULL);
    check_rule(&a, "lane-private first", "256 bins");
    /* sepfilter: tiles first (it refuses all but one count of taps on both axes, the vertical pass
     * first), then walk before fused while both passes are within sepfilter_walk_max_taps (32) */
    static const float ones[40] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const struct {
        size_t vtaps, htaps;
        const char *want1, *want2;
    } sep[] = {{3, 3, "passes of 3 and 3 taps, within sepfilter_walk_max_taps (32)",
                "tiles first where it takes the call, walk before fused"},
               {17, 17, "within sepfilter_walk_max_taps (32)", "walk before fused"},
               {32, 9, "passes of 32 and 9 taps, within", "walk before fused"},
               {33, 3, "passes of 33 and 3 taps, past sepfilter_walk_max_taps (32)",
                "tiles first where it takes the call, fused, no walk"},
               {1, 17, "a filter along the rows alone", "walk before fused"}};
    for (size_t i = 0; i < sizeof sep / sizeof sep[0]; ++i) {
        mh_sepfilter_desc d = {.batch = 1, .rows = 8192, .cols = 8192, .channels = 1, .in_type = MH_F32,
                               .out_type = MH_F32};
        d.vertical = (mh_sepfilter_axis){ones, sep[i].vtaps, 0, MH_MODE_REFLECT, 1, NULL, 0};
        d.horizontal = (mh_sepfilter_axis){ones, sep[i].htaps, 0, MH_MODE_REFLECT, 1, NULL, 0};
        CHECK(mh_sepfilter_args_init(&gpu, &a, &d, NULL, NULL) == MH_OK, "sepfilter %zu x %zu", sep[i].vtaps,
              sep[i].htaps);
        check_rule(&a, sep[i].want1, sep[i].want2);
    }
}

/* docs/auto.md's example (report:explain), a `memhier explain conv2d ...` that scripts/gpu-check.sh
 * captured on a GPU: its rule line and its candidates, in order, are what these rules give for
 * its shape now, so that a change to conv2d's rules or their texts that the capture predates
 * fails here until the capture is made again. */
static void check_explain_example(const char *path)
{
    size_t len = 0, rows = 0, cols = 0;
    int krows = 0, kcols = 0;
    char pad_name[16] = "", *text = read_file(path, &len);
    CHECK(text != NULL, "%s: cannot read it", path);
    if (!text) return;
    const int got = sscanf(text, "$ memhier explain conv2d --rows %zu --cols %zu --krows %d --kcols %d --pad %15s",
                           &rows, &cols, &krows, &kcols, pad_name);
    CHECK(got == 5, "%s: its first line is not a `memhier explain conv2d` with rows, cols, krows, kcols and pad", path);
    mh_pad pad = MH_PAD_VALID;
    while (pad < MH_PAD_FULL && strcmp(mh_pad_name(pad), pad_name)) pad = (mh_pad)(pad + 1);
    mh_args a;
    if (got != 5 || mh_conv2d_args_init(NULL, &a, NULL, rows, cols, NULL, (size_t)krows, (size_t)kcols, pad, NULL) != MH_OK) {
        CHECK(0, "%s: its shape is not a conv2d problem", path);
        free(text);
        return;
    }
    char why[512], rule[600];
    const char *const *names = mh_op_table_of(MH_OP_CONV2D)->auto_order(&gpu, &a, why, sizeof why);
    snprintf(rule, sizeof rule, "\nrule: %s\n", why);
    CHECK(strstr(text, rule) != NULL, "%s: its rule line is not what the rules give now:%s", path, rule);
    const char *at = strstr(text, "\ncandidates");
    for (const char *const *n = names; at && *n; ++n) {
        char line[96];
        snprintf(line, sizeof line, "\n  conv2d/%s ", *n);
        at = strstr(at, line);
        CHECK(at != NULL, "%s: candidate conv2d/%s is not where auto's order puts it", path, *n);
    }
    free(text);
}

int main(int argc, char **argv)
{
    gpu.device = 0, gpu.cc = 90, gpu.sm_count = 132;
    gpu.rules = mh_auto_rules_for("NVIDIA H100 80GB HBM3");
    CHECK(!strcmp(gpu.rules->device, "NVIDIA H100 80GB HBM3"), "the H100's rules are not compiled in");
    const char *path = argc > 1 ? argv[1] : "auto_picks.txt";
    test_rules_text();
    if (argc > 2) check_explain_example(argv[2]);
    size_t len = 0, want_len = 0;
    char *got = make_picks(&len);
    CHECK(got && len > 0, "no picks made");
    if (getenv("MEMHIER_WRITE_AUTO_PICKS")) {
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(got, 1, len, f) == len && fclose(f) == 0, "writing %s", path);
        printf("wrote %s (%zu bytes)\n", path, len);
    } else {
        char *want = read_file(path, &want_len);
        CHECK(want != NULL, "%s: cannot read it", path);
        if (want && (want_len != len || memcmp(want, got, len) != 0)) {
            first_difference(got, want);
            CHECK(0, "auto's picks differ from %s: set MEMHIER_WRITE_AUTO_PICKS=1 to rewrite it where a rule is "
                     "meant to change, and say why in the commit", path);
        }
        free(want);
    }
    free(got);
    return test_finish("test_auto_picks");
}

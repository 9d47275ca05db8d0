/* Every transpose variant of one backend, exact, on shapes of every kind:
 *   test_transpose cpu | gpu (exit 77 only when the machine has no CUDA device)
 * 1 x 1, single rows and columns, sizes that are no multiple of any tile, rows or columns
 * not a multiple of 4 (the 16-byte paths fall back), misaligned pointers, every tuning
 * configuration; outputs poisoned
 * and fenced by guard words; refusals write nothing. */
#include "testing.h"

typedef struct tcase {
    size_t rows, cols;
    int misaligned;
} tcase;

static const tcase cases[] = {
    {1, 1, 0},    {1, 7, 0},     {7, 1, 1},     {16, 16, 0},   {17, 33, 0},    {31, 32, 1},    {32, 31, 0},
    {33, 33, 0},  {100, 1, 0},   {1, 100, 1},   {64, 64, 1},   {513, 257, 0},  {1000, 1024, 0}, {1024, 1000, 1},
    {2049, 31, 0}, {3, 100003, 0}, {100003, 3, 1}, {4096, 4096, 0},
};

/* Runs one variant (config 0 through the public API, others through the row) and checks. */
static void check_variant(mh_context *ctx, const tcase *c, const float *ref_in, const float *in, const test_out *out,
                          const mh_row *row, int config)
{
    const char *name = row ? row->info.name : "auto";
    test_out_poison(out);
    mh_args a;
    mh_transpose_args_init(ctx, &a, in, c->rows, c->cols, out->data);
    a.config = config;
    char why[512] = "";
    if (row && !row->supports(ctx, &a, why, sizeof why)) {
        CHECK(why[0], "%s refuses %zux%zu without a reason", name, c->rows, c->cols);
        return;
    }
    mh_status s = config == 0 ? mh_transpose(ctx, row ? name : NULL, in, c->rows, c->cols, out->data)
                              : mh_run_row(ctx, row, &a);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    CHECK(s == MH_OK, "%s %zux%zu: %s: %s", name, c->rows, c->cols, mh_status_str(s), mh_context_error(ctx));
    if (s != MH_OK) return;
    size_t broken = test_out_fetch(out), wrong = 0, first = 0;
    const float *got = out->host + TEST_GUARD;
    for (size_t y = 0; y < c->rows; ++y)
        for (size_t x = 0; x < c->cols; ++x)
            if (memcmp(&got[x * c->rows + y], &ref_in[y * c->cols + x], sizeof(float)) && !wrong++) first = x * c->rows + y;
    CHECK(broken == 0, "%s %zux%zu wrote %zu guard words", name, c->rows, c->cols, broken);
    CHECK(wrong == 0, "%s config %d %zux%zu misaligned=%d: %zu wrong elements, first out[%zu][%zu]", name, config,
          c->rows, c->cols, c->misaligned, wrong, first / c->rows, first % c->rows);
}

int main(int argc, char **argv)
{
    int gpu;
    mh_context *ctx = test_open(argc, argv, &gpu);
    const unsigned long long seed = test_seed();
    const size_t max_n = test_max_n();
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const tcase *c = &cases[ci];
        const size_t n = c->rows * c->cols;
        if (n > max_n) continue;
        float *h = malloc(n * sizeof(float));
        mh_fill_uniform(h, n, seed + ci, 1.0f);
        test_in in = test_in_copy(gpu, h, n, c->misaligned ? 1 : 0);
        test_out out = test_out_alloc(gpu, n, c->misaligned ? 3 : 0);
        for (size_t r = 0; r < mh_row_count(MH_OP_TRANSPOSE); ++r) {
            const mh_row *row = mh_row_at(MH_OP_TRANSPOSE, r);
            if (!test_row_fits(row, gpu)) continue;
            for (int cfg = 0; cfg < test_configs(row, gpu); ++cfg) check_variant(ctx, c, h, in.data, &out, row, cfg);
        }
        check_variant(ctx, c, h, in.data, &out, NULL, 0); /* auto */
        test_out_free(&out);
        test_release(gpu, in.base);
        free(h);
    }
    /* auto: coarse for matrices, vector (a copy) for a single row or column; cpu-omp on the CPU */
    const mh_variant_info *pick = NULL;
    CHECK(mh_transpose_select(ctx, 7000, 6000, &pick) == MH_OK &&
              !strcmp(pick->name, gpu ? "transpose/coarse" : "transpose/cpu-omp"),
          "auto on 7000x6000 picked %s", pick ? pick->name : "nothing");
    CHECK(mh_transpose_select(ctx, 1, 1 << 24, &pick) == MH_OK &&
              !strcmp(pick->name, gpu ? "transpose/vector" : "transpose/cpu-omp"),
          "auto on 1x16777216 picked %s", pick ? pick->name : "nothing");
    /* out of place only: an overlapping output is refused before anything runs */
    float *buf = test_alloc(gpu, 64 * sizeof(float));
    CHECK_REFUSED(ctx, mh_transpose(ctx, NULL, buf, 4, 8, buf + 4), "overlaps");
    CHECK_REFUSED(ctx, mh_transpose(ctx, NULL, buf, 0, 8, buf + 32), "rows = 0");
    CHECK_REFUSED(ctx, mh_transpose(ctx, NULL, buf, SIZE_MAX / 2, 8, buf + 32), "overflows");
    CHECK_REFUSED(ctx, mh_transpose(ctx, NULL, NULL, 4, 8, buf + 32), "in is NULL");
    test_release(gpu, buf);
    mh_context_destroy(ctx);
    return test_finish(gpu ? "test_transpose gpu" : "test_transpose cpu");
}

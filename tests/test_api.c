/* The public API on the CPU backend (runs everywhere): statuses, names, contexts, the
 * registry, and every kind of bad input refused with a message naming the argument and
 * value, with the caller's output left untouched. */
#include "testing.h"

#include <limits.h>

#include <pthread.h>

#include <stdint.h>

static void test_names(void)
{
    for (int s = MH_OK; s <= MH_ERR_INTERNAL; ++s)
        for (int t = s + 1; t <= MH_ERR_INTERNAL; ++t)
            CHECK(strcmp(mh_status_str((mh_status)s), mh_status_str((mh_status)t)) != 0, "status %d and %d share a name", s, t);
    mh_pad p;
    CHECK(mh_pad_parse("same", &p) == MH_OK && p == MH_PAD_SAME, "same");
    CHECK(mh_pad_parse("full", &p) == MH_OK && p == MH_PAD_FULL, "full");
    CHECK(mh_pad_parse("valid", &p) == MH_OK && p == MH_PAD_VALID, "valid");
    CHECK(mh_pad_parse("circular", &p) == MH_ERR_INVALID_ARGUMENT, "unknown pad accepted");
    CHECK(mh_pad_parse(NULL, &p) == MH_ERR_INVALID_ARGUMENT, "NULL pad name accepted");
    /* every dtype a name of its own and numpy's size; a value past the enum neither */
    static const char *const names[] = {"float32", "float16", "uint8",  "int8",   "uint16", "int16",
                                        "int32",   "int64",   "float64", "uint32", "uint64", "bfloat16"};
    static const size_t sizes[] = {4, 2, 1, 1, 2, 2, 4, 8, 8, 4, 8, 2};
    for (int t = MH_F32; t <= MH_BF16; ++t)
        CHECK(!strcmp(mh_dtype_name((mh_dtype)t), names[t]) && mh_dtype_size((mh_dtype)t) == sizes[t],
              "dtype %d: %s, %zu bytes", t, mh_dtype_name((mh_dtype)t), mh_dtype_size((mh_dtype)t));
    CHECK(!strcmp(mh_dtype_name((mh_dtype)(MH_BF16 + 1)), "unknown-dtype") && mh_dtype_size((mh_dtype)(MH_BF16 + 1)) == 0,
          "a dtype past the enum has a name or a size");
}

static void test_contexts(void)
{
    mh_context *ctx = (mh_context *)1;
    CHECK(mh_context_create(NULL, MH_CPU) == MH_ERR_INVALID_ARGUMENT, "NULL ctx pointer");
    CHECK(mh_context_create(&ctx, 4096) == MH_ERR_NO_DEVICE && ctx == NULL, "device 4096 exists?");
    CHECK(mh_context_create(&ctx, -7) == MH_ERR_NO_DEVICE, "device -7 accepted");
    CHECK(mh_context_error(NULL) != NULL, "error of NULL ctx");
    CHECK(mh_context_create(&ctx, MH_CPU) == MH_OK, "CPU context");
    CHECK(mh_context_device(ctx) == MH_CPU, "device of CPU ctx");
    CHECK(mh_context_set_stream(ctx, (void *)0x1234) == MH_ERR_INVALID_ARGUMENT, "CPU ctx took a stream");
    CHECK(strstr(mh_context_error(ctx), "cuda_stream") != NULL, "message: %s", mh_context_error(ctx));
    CHECK(mh_context_synchronize(ctx) == MH_OK, "synchronize on CPU");
    mh_device_info info;
    CHECK(mh_device_info_get(ctx, &info) == MH_OK && info.sm_count > 0, "CPU info");
    CHECK(mh_device_info_get(ctx, NULL) == MH_ERR_INVALID_ARGUMENT, "NULL info accepted");
    mh_context_destroy(ctx);
    mh_context_destroy(NULL);
    CHECK(mh_context_create_ex(&ctx, MH_CPU, 2u) == MH_ERR_INVALID_ARGUMENT && ctx == NULL, "unknown flag taken");
    CHECK(mh_context_create_ex(&ctx, MH_CPU, MH_CONTEXT_LAZY_LOADING) == MH_OK, "lazy CPU context");
    mh_context_destroy(ctx);
}

/* The context's buffers on the CPU: mh_alloc_async and mh_free_async are malloc and free there,
 * with mh_alloc's refusals; a buffer holds what is copied in. */
static void test_buffers(void)
{
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, MH_CPU) == MH_OK, "CPU context");
    void *p = (void *)1;
    CHECK(mh_alloc_async(NULL, 16, &p) == MH_ERR_INVALID_ARGUMENT, "NULL ctx taken");
    CHECK(mh_alloc_async(ctx, 16, NULL) == MH_ERR_INVALID_ARGUMENT && strstr(mh_context_error(ctx), "ptr is NULL"),
          "NULL ptr: %s", mh_context_error(ctx));
    CHECK(mh_alloc_async(ctx, 0, &p) == MH_ERR_INVALID_ARGUMENT && p == NULL &&
              strstr(mh_context_error(ctx), "bytes = 0"),
          "zero bytes: %s", mh_context_error(ctx));
    CHECK(mh_alloc_async(ctx, (size_t)-1, &p) == MH_ERR_OUT_OF_MEMORY && p == NULL, "SIZE_MAX bytes allocated");
    const float in[5] = {1.0f, -2.0f, 3.5f, 0.0f, 1e30f};
    float back[5] = {0};
    CHECK(mh_alloc_async(ctx, sizeof in, &p) == MH_OK && p != NULL, "alloc_async: %s", mh_context_error(ctx));
    CHECK(mh_upload(ctx, p, in, sizeof in) == MH_OK && mh_download(ctx, back, p, sizeof back) == MH_OK &&
              !memcmp(in, back, sizeof in),
          "a CPU async buffer's round trip");
    mh_free_async(NULL, p); /* no context: nothing freed */
    mh_free_async(ctx, p);
    mh_free_async(ctx, NULL);
    mh_context_destroy(ctx);
}

/* The accuracy contract: names, the context's setting and its refusals, the explanation's line,
 * each row's contract (test_api_gpu checks auto's picks under it). */
static void test_precision(void)
{
    mh_precision p;
    CHECK(mh_precision_parse("per-element", &p) == MH_OK && p == MH_PRECISION_PER_ELEMENT, "per-element");
    CHECK(mh_precision_parse("normwise", &p) == MH_OK && p == MH_PRECISION_NORMWISE, "normwise");
    CHECK(mh_precision_parse("elementwise", &p) == MH_ERR_INVALID_ARGUMENT, "unknown contract accepted");
    CHECK(!strcmp(mh_precision_name((mh_precision)7), "unknown-precision"), "name of 7");
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, MH_CPU) == MH_OK, "CPU context");
    CHECK(mh_context_precision(ctx) == MH_PRECISION_NORMWISE, "a new context is normwise");
    CHECK(mh_context_set_precision(ctx, (mh_precision)2) == MH_ERR_INVALID_ARGUMENT &&
              strstr(mh_context_error(ctx), "precision = 2"), "precision 2: %s", mh_context_error(ctx));
    CHECK(mh_context_precision(ctx) == MH_PRECISION_NORMWISE, "a refused setting changed the context");
    CHECK(mh_context_set_precision(ctx, MH_PRECISION_PER_ELEMENT) == MH_OK &&
              mh_context_precision(ctx) == MH_PRECISION_PER_ELEMENT, "set per-element");
    const mh_variant_info *chosen;
    CHECK(mh_conv2d_select(ctx, 64, 64, 11, 11, MH_PAD_SAME, &chosen) == MH_OK, "select");
    CHECK(strstr(mh_context_explanation(ctx), "contract: per-element") != NULL, "explanation: %s",
          mh_context_explanation(ctx));
    mh_context_destroy(ctx);
    const char *normwise[] = {"conv2d/fft-tile", "conv2d/fft-3pass", "conv2d/fft-os", "conv2d/cudnn",
                              "conv1d/fft-fused", "conv1d/fft-os",    "conv1d/cufft",  "conv1d/cudnn"};
    for (size_t i = 0; i < sizeof normwise / sizeof normwise[0]; ++i)
        CHECK(mh_variant_precision(mh_variant_find(normwise[i])) == MH_PRECISION_NORMWISE, "%s", normwise[i]);
    const char *direct[] = {"conv2d/regtile", "conv2d/walk", "conv2d/lowrank", "conv2d/tc", "conv2d/basic",
                            "conv1d/regtile", "conv1d/tc",   "matmul/tf32x3-wgmma"};
    for (size_t i = 0; i < sizeof direct / sizeof direct[0]; ++i)
        CHECK(mh_variant_precision(mh_variant_find(direct[i])) == MH_PRECISION_PER_ELEMENT, "%s", direct[i]);
}

static void test_registry(void)
{
    CHECK(mh_variant_count(MH_OP_COUNT) == 0 && mh_variant((mh_op)99, 0) == NULL, "bad op");
    for (int op = 0; op < MH_OP_COUNT; ++op) {
        const char *opname = mh_op_name((mh_op)op);
        const size_t count = mh_variant_count((mh_op)op), oplen = strlen(opname);
        CHECK(count >= (op == MH_OP_COALESCING || op == MH_OP_SEPFILTER || op == MH_OP_RANK ? 2u : 8u), "%s has %zu variants", opname, count);
        CHECK(mh_variant((mh_op)op, count) == NULL, "past the end");
        int last_cuda_rung = -1;
        for (size_t i = 0; i < count; ++i) {
            const mh_variant_info *v = mh_variant((mh_op)op, i);
            CHECK(v && v->op == (mh_op)op && strncmp(v->name, opname, oplen) == 0 && v->name[oplen] == '/',
                  "%s row %zu name", opname, i);
            CHECK(v->memory && *v->memory && v->source && *v->source && v->summary && *v->summary, "%s lacks a field",
                  v->name);
            CHECK(mh_variant_find(v->name) == v, "find(%s)", v->name);
            CHECK(mh_variant_lookup((mh_op)op, v->name + oplen + 1) == v, "short name of %s", v->name);
            const mh_row *row = mh_row_of(v);
            CHECK(row && row->supports && row->run, "%s has no supports/run", v->name);
            for (size_t j = i + 1; j < count; ++j)
                CHECK(strcmp(v->name, mh_variant((mh_op)op, j)->name) != 0, "%s listed twice", v->name);
            if (v->backend == MH_BACKEND_CUDA) {
                CHECK(v->rung > last_cuda_rung, "%s is out of ladder order", v->name);
                last_cuda_rung = v->rung;
            }
        }
    }
    CHECK(mh_variant_find("conv1d/nope") == NULL && mh_variant_find("nope") == NULL && mh_variant_find(NULL) == NULL,
          "unknown names found");
    CHECK(mh_variant_find("conv1d/naive") && mh_variant_find("conv1d/regtile") && mh_variant_find("conv2d/regtile") &&
              mh_variant_find("conv2d/separable") && mh_variant_find("conv2d/cpu-omp"),
          "ladder rows missing");
}

/* Calls conv1d and checks it fails with `want`, a message containing `phrase`, and out untouched. */
static void expect_refusal(mh_context *ctx, const char *variant, const float *in, size_t n, const float *mask,
                           size_t k, mh_pad pad, float *out, size_t out_cap, mh_status want, const char *phrase)
{
    for (size_t i = 0; i < out_cap; ++i) out[i] = 4242.0f;
    mh_status s = mh_conv1d(ctx, variant, in, n, mask, k, pad, out);
    CHECK(s == want, "n=%zu k=%zu pad=%d variant=%s: status %s, wanted %s (%s)", n, k, (int)pad,
          variant ? variant : "auto", mh_status_str(s), mh_status_str(want), mh_context_error(ctx));
    CHECK(strstr(mh_context_error(ctx), phrase) != NULL, "message \"%s\" lacks \"%s\"", mh_context_error(ctx), phrase);
    for (size_t i = 0; i < out_cap; ++i)
        if (out[i] != 4242.0f) {
            CHECK(0, "a refused call wrote out[%zu]", i);
            break;
        }
}

static void test_bad_input(void)
{
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, MH_CPU) == MH_OK, "CPU ctx");
    float in[64], mask[8], out[80];
    for (int i = 0; i < 64; ++i) in[i] = (float)i;
    for (int i = 0; i < 8; ++i) mask[i] = 1.0f;
    CHECK(mh_conv1d(NULL, NULL, in, 64, mask, 8, MH_PAD_VALID, out) == MH_ERR_INVALID_ARGUMENT, "NULL ctx");
    expect_refusal(ctx, NULL, NULL, 64, mask, 8, MH_PAD_VALID, out, 80, MH_ERR_INVALID_ARGUMENT, "in is NULL");
    expect_refusal(ctx, NULL, in, 64, NULL, 8, MH_PAD_VALID, out, 80, MH_ERR_INVALID_ARGUMENT, "mask is NULL");
    expect_refusal(ctx, NULL, in, 64, mask, 8, MH_PAD_VALID, NULL, 0, MH_ERR_INVALID_ARGUMENT, "out is NULL");
    expect_refusal(ctx, NULL, in, 0, mask, 8, MH_PAD_VALID, out, 80, MH_ERR_INVALID_ARGUMENT, "n = 0");
    expect_refusal(ctx, NULL, in, 64, mask, 0, MH_PAD_VALID, out, 80, MH_ERR_INVALID_ARGUMENT, "k = 0");
    expect_refusal(ctx, NULL, in, 4, mask, 8, MH_PAD_VALID, out, 80, MH_ERR_INVALID_ARGUMENT,
                   "k = 8 is longer than n = 4");
    expect_refusal(ctx, NULL, in, 64, mask, 8, (mh_pad)7, out, 80, MH_ERR_INVALID_ARGUMENT, "pad = 7");
    expect_refusal(ctx, NULL, in, SIZE_MAX / 2, mask, SIZE_MAX / 2, MH_PAD_FULL, out, 80, MH_ERR_INVALID_ARGUMENT,
                   "overflows");
    expect_refusal(ctx, NULL, in, SIZE_MAX / 2, mask, 8, MH_PAD_VALID, out, 80, MH_ERR_INVALID_ARGUMENT, "overflows");
    expect_refusal(ctx, "warp-drive", in, 64, mask, 8, MH_PAD_VALID, out, 80, MH_ERR_INVALID_ARGUMENT,
                   "variant = 'warp-drive'");
    expect_refusal(ctx, "conv1d/naive", in, 64, mask, 8, MH_PAD_VALID, out, 80, MH_ERR_UNSUPPORTED,
                   "runs on a CUDA device");
    /* out overlapping the input: refused before anything is written */
    for (int i = 0; i < 64; ++i) in[i] = (float)i;
    CHECK(mh_conv1d(ctx, NULL, in, 64, mask, 8, MH_PAD_VALID, in + 3) == MH_ERR_INVALID_ARGUMENT, "in-place accepted");
    CHECK(strstr(mh_context_error(ctx), "overlaps in"), "overlap message: %s", mh_context_error(ctx));
    for (int i = 0; i < 64; ++i) CHECK(in[i] == (float)i, "refused in-place call wrote in[%d]", i);
    CHECK(mh_conv1d(ctx, NULL, in, 64, mask, 8, MH_PAD_VALID, mask) == MH_ERR_INVALID_ARGUMENT, "out == mask");

    CHECK(mh_conv1d_out_len(10, 3, MH_PAD_VALID) == 8 && mh_conv1d_out_len(10, 3, MH_PAD_SAME) == 10 &&
              mh_conv1d_out_len(10, 3, MH_PAD_FULL) == 12 && mh_conv1d_out_len(3, 10, MH_PAD_VALID) == 0 &&
              mh_conv1d_out_len(0, 1, MH_PAD_SAME) == 0,
          "out_len");
    const mh_variant_info *chosen = NULL;
    CHECK(mh_conv1d_select(ctx, 1000, 31, MH_PAD_VALID, &chosen) == MH_OK && chosen &&
              chosen->backend == MH_BACKEND_CPU,
          "auto on the CPU");
    CHECK(mh_conv1d_supports(ctx, "cpu-omp", 5, 9, MH_PAD_FULL) == MH_OK, "k > n in full mode");
    CHECK(mh_conv1d(ctx, "cpu-reference", in, 64, mask, 8, MH_PAD_VALID, out) == MH_OK && out[0] == 28.0f,
          "a good call fails: %s", mh_context_error(ctx));
    CHECK(mh_context_error(ctx)[0] == '\0', "a success left an error behind");
    mh_context_destroy(ctx);
}

/* conv2d's refusals: the same rules, two dimensions. */
static void expect_conv2d(mh_context *ctx, const char *variant, const float *in, size_t rows, size_t cols,
                          const float *f, size_t kr, size_t kc, mh_pad pad, float *out, size_t cap, mh_status want,
                          const char *phrase)
{
    for (size_t i = 0; i < cap; ++i) out[i] = 4242.0f;
    mh_status s = mh_conv2d(ctx, variant, in, rows, cols, f, kr, kc, pad, out);
    CHECK(s == want, "conv2d %zux%zu filter %zux%zu: %s, wanted %s (%s)", rows, cols, kr, kc, mh_status_str(s),
          mh_status_str(want), mh_context_error(ctx));
    CHECK(strstr(mh_context_error(ctx), phrase) != NULL, "message \"%s\" lacks \"%s\"", mh_context_error(ctx), phrase);
    for (size_t i = 0; i < cap; ++i)
        if (out[i] != 4242.0f) {
            CHECK(0, "a refused conv2d wrote out[%zu]", i);
            break;
        }
}

static void test_conv2d_bad_input(void)
{
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, MH_CPU) == MH_OK, "CPU ctx");
    float in[100], f[9], out[144];
    for (int i = 0; i < 100; ++i) in[i] = (float)i;
    for (int i = 0; i < 9; ++i) f[i] = 1.0f;
    expect_conv2d(ctx, NULL, NULL, 10, 10, f, 3, 3, MH_PAD_SAME, out, 144, MH_ERR_INVALID_ARGUMENT, "in is NULL");
    expect_conv2d(ctx, NULL, in, 10, 10, NULL, 3, 3, MH_PAD_SAME, out, 144, MH_ERR_INVALID_ARGUMENT, "filter is NULL");
    expect_conv2d(ctx, NULL, in, 0, 10, f, 3, 3, MH_PAD_SAME, out, 144, MH_ERR_INVALID_ARGUMENT, "rows = 0");
    expect_conv2d(ctx, NULL, in, 10, 0, f, 3, 3, MH_PAD_SAME, out, 144, MH_ERR_INVALID_ARGUMENT, "cols = 0");
    expect_conv2d(ctx, NULL, in, 10, 10, f, 0, 3, MH_PAD_SAME, out, 144, MH_ERR_INVALID_ARGUMENT, "krows = 0");
    expect_conv2d(ctx, NULL, in, 10, 10, f, 3, 256, MH_PAD_FULL, out, 144, MH_ERR_INVALID_ARGUMENT, "kcols = 256");
    expect_conv2d(ctx, NULL, in, 2, 10, f, 3, 3, MH_PAD_VALID, out, 144, MH_ERR_INVALID_ARGUMENT,
                  "3 x 3 filter is larger than the 2 x 10 image");
    expect_conv2d(ctx, NULL, in, SIZE_MAX / 4, SIZE_MAX / 4, f, 3, 3, MH_PAD_SAME, out, 144, MH_ERR_INVALID_ARGUMENT,
                  "overflows");
    expect_conv2d(ctx, NULL, in, 10, 10, f, 3, 3, (mh_pad)9, out, 144, MH_ERR_INVALID_ARGUMENT, "pad = 9");
    expect_conv2d(ctx, "blur", in, 10, 10, f, 3, 3, MH_PAD_SAME, out, 144, MH_ERR_INVALID_ARGUMENT, "variant = 'blur'");
    expect_conv2d(ctx, "regtile", in, 10, 10, f, 3, 3, MH_PAD_SAME, out, 144, MH_ERR_UNSUPPORTED, "runs on a CUDA device");
    CHECK(mh_conv2d(ctx, NULL, in, 10, 10, f, 3, 3, MH_PAD_SAME, in + 5) == MH_ERR_INVALID_ARGUMENT &&
              strstr(mh_context_error(ctx), "overlaps in"),
          "in-place conv2d: %s", mh_context_error(ctx));
    size_t r = 0, c = 0;
    CHECK(mh_conv2d_out_dims(10, 12, 3, 4, MH_PAD_FULL, &r, &c) == MH_OK && r == 12 && c == 15, "full dims");
    CHECK(mh_conv2d_out_dims(10, 12, 3, 4, MH_PAD_VALID, &r, &c) == MH_OK && r == 8 && c == 9, "valid dims");
    CHECK(mh_conv2d_out_dims(2, 12, 3, 4, MH_PAD_VALID, &r, &c) == MH_ERR_INVALID_ARGUMENT && r == 0, "too small");
    CHECK(mh_conv2d(ctx, NULL, in, 10, 10, f, 3, 3, MH_PAD_SAME, out) == MH_OK && out[11] == 99.0f,
          "a good conv2d fails: %s (out[1][1] = %g)", mh_context_error(ctx), out[11]);
    mh_context_destroy(ctx);
}

/* mh_conv2d_mode's refusals: mode, origins (at full width), sizes; nothing written. And a 1 x 1
 * image under every mode: a 3 x 3 filter of ones reads the pixel nine times, constant reads
 * cval eight times. */
static void test_conv2d_mode_input(void)
{
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, MH_CPU) == MH_OK, "CPU ctx");
    float in[100], f[16], out[100];
    for (int i = 0; i < 100; ++i) in[i] = (float)i;
    for (int i = 0; i < 16; ++i) f[i] = 1.0f;
    static const struct {
        size_t kr, kc;
        int mode;
        long long orr, oc;
        const char *phrase;
    } bad[] = {{3, 3, 7, 0, 0, "mode = 7"},
               {3, 3, MH_MODE_REFLECT, 2, 0, "origin_r = 2: a 3-tap side takes origins from -1 to 1"},
               {4, 4, MH_MODE_REFLECT, 0, -3, "origin_c = -3: a 4-tap side takes origins from -2 to 1"},
               {4, 4, MH_MODE_REFLECT, 0, 2, "origin_c = 2"},
               {3, 3, MH_MODE_WRAP, (long long)1 << 40, 0, "origin_r = 1099511627776"},
               {3, 3, MH_MODE_WRAP, 0, LLONG_MIN, "origin_c = -9223372036854775808"},
               {256, 3, MH_MODE_NEAREST, 0, 0, "krows = 256"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        for (int j = 0; j < 100; ++j) out[j] = 4242.0f;
        mh_status s = mh_conv2d_mode(ctx, NULL, in, 10, 10, f, bad[i].kr, bad[i].kc, (mh_mode)bad[i].mode, 0.0f,
                                     bad[i].orr, bad[i].oc, out);
        CHECK(s == MH_ERR_INVALID_ARGUMENT && strstr(mh_context_error(ctx), bad[i].phrase),
              "conv2d_mode case %zu: %s, \"%s\" lacks \"%s\"", i, mh_status_str(s), mh_context_error(ctx),
              bad[i].phrase);
        int written = 0;
        for (int j = 0; j < 100; ++j) written |= out[j] != 4242.0f;
        CHECK(!written, "a refused conv2d_mode (case %zu) wrote its output", i);
    }
    const float pixel = 3.0f;
    for (int m = MH_MODE_CONSTANT; m <= MH_MODE_WRAP; ++m) {
        float o = 0.0f;
        CHECK(mh_conv2d_mode(ctx, NULL, &pixel, 1, 1, f, 3, 3, (mh_mode)m, 0.5f, 0, 0, &o) == MH_OK,
              "1 x 1 %s: %s", mh_mode_name((mh_mode)m), mh_context_error(ctx));
        const float want = m == MH_MODE_CONSTANT ? 3.0f + 8 * 0.5f : 27.0f;
        CHECK(o == want, "1 x 1 image, mode %s: %g, want %g", mh_mode_name((mh_mode)m), o, want);
    }
    mh_mode parsed;
    CHECK(mh_mode_parse("grid-mirror", &parsed) == MH_OK && parsed == MH_MODE_REFLECT, "grid-mirror is reflect");
    CHECK(mh_mode_parse("symmetric", &parsed) == MH_ERR_INVALID_ARGUMENT, "symmetric is no mode name");
    mh_context_destroy(ctx);
}

/* A Gaussian of sigma s made as scipy makes it (a float64 1-D kernel, the outer product cast
 * to float32) or directly in float32 (exp of the squared radius); tails underflow to
 * subnormals and zeros at small sigma. */
static void gaussian(float *f, int k, double s, int direct)
{
    double g[MH_CONV2D_MAX_K], sum = 0.0;
    for (int i = 0; i < k; ++i) sum += g[i] = exp(-(i - (k - 1) / 2.0) * (i - (k - 1) / 2.0) / (2 * s * s));
    for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j) {
            const float x = (float)(i - (k - 1) / 2.0), y = (float)(j - (k - 1) / 2.0);
            f[i * k + j] = direct ? expf(-(x * x + y * y) / (float)(2 * s * s)) : (float)(g[i] / sum * g[j] / sum);
        }
}

/* The low-rank factorisation (separable at rank 1, lowrank up to 4): exact rank-1 filters made
 * in float pass at rank 1, with subnormal and zero tails; a difference of Gaussians takes two
 * terms; filters whose factored error would move an output past the FP32 bound (nearly rank 1,
 * one huge tap, full rank) and non-finite ones are refused, naming the tap. */
static void test_lowrank(void)
{
    float f[MH_CONV2D_MAX_K * MH_CONV2D_MAX_K], g[MH_CONV2D_MAX_K * MH_CONV2D_MAX_K];
    float u[MH_LOWRANK_MAX_RANK * MH_CONV2D_MAX_K], v[MH_LOWRANK_MAX_RANK * MH_CONV2D_MAX_K];
    mh_lowrank_fit fit;
    const struct {
        int k;
        double sigma;
    } gs[] = {{31, 5}, {31, 2}, {31, 0.3}, {21, 1}, {7, 1}, {3, 0.5}};
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; ++i)
        for (int direct = 0; direct <= 1; ++direct) {
            gaussian(f, gs[i].k, gs[i].sigma, direct);
            const int r = mh_lowrank_factor(f, gs[i].k, gs[i].k, 1, u, v, &fit);
            CHECK(r == 1, "%dx%d Gaussian sigma %g (%s) refused: tap [%d][%d] %g as %g, %g of its share", gs[i].k,
                  gs[i].k, gs[i].sigma, direct ? "direct" : "outer", fit.row, fit.col, fit.tap, fit.fitted, fit.ratio);
        }
    const float sobel[9] = {1, 0, -1, 2, 0, -2, 1, 0, -1};
    CHECK(mh_lowrank_factor(sobel, 3, 3, 1, u, v, &fit) == 1 && v[1] == 0.0f, "Sobel: rank %d, v[1] = %g", fit.rank,
          v[1]);
    for (int i = 0; i < 225; ++i) f[i] = 1.0f / 225.0f;
    CHECK(mh_lowrank_factor(f, 15, 15, 4, u, v, &fit) == 1, "box 15x15: rank %d", fit.rank);
    for (int i = 0; i < 5 * 31; ++i) f[i] = (float)((i * 13) % 7) - 3.0f;
    CHECK(mh_lowrank_factor(f, 1, 31, 1, u, v, &fit) == 1 && mh_lowrank_factor(f, 31, 1, 1, u, v, &fit) == 1,
          "a row or a column: rank %d", fit.rank);
    for (int i = 0; i < 961; ++i) f[i] = 0.0f;
    CHECK(mh_lowrank_factor(f, 31, 31, 4, u, v, &fit) == 1 && u[0] == 0.0f && v[0] == 0.0f,
          "zero filter: rank %d", fit.rank);

    /* a difference of Gaussians (sigma 2 and 3.2, 21 x 21): two terms, not one */
    gaussian(f, 21, 2.0, 0), gaussian(g, 21, 3.2, 0);
    for (int i = 0; i < 441; ++i) f[i] -= g[i];
    CHECK(mh_lowrank_factor(f, 21, 21, 1, u, v, &fit) == -1 && fit.ratio > 1, "DoG 21x21 taken at rank 1");
    CHECK(mh_lowrank_factor(f, 21, 21, 4, u, v, &fit) == 2, "DoG 21x21: rank %d, tap [%d][%d] %g as %g (%g)",
          fit.rank, fit.row, fit.col, fit.tap, fit.fitted, fit.ratio);
    /* a filter symmetric left to right: its row factors read the same from either end, to the bit
     * (conv2d/lowrank's symmetric passes ask for that) */
    int mirrored = 0;
    for (int t = 0; t < 2; ++t)
        for (int j = 0; j < 21; ++j) mirrored += v[t * 21 + j] == v[t * 21 + 20 - j];
    CHECK(mirrored == 42, "DoG 21x21: %d of 42 row factor taps equal their mirror", mirrored);
    /* a 5 x 9 filter of rank 3 made of small integers (exact in float): three terms */
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 9; ++j)
            f[i * 9 + j] = (float)((i + 1) * (j + 1) + 20 + (i % 2) * (j % 3));
    const int r3 = mh_lowrank_factor(f, 5, 9, 4, u, v, &fit);
    CHECK(r3 == 3, "5x9 integer filter of rank 3: rank %d (tap [%d][%d] %g as %g, %g)", r3, fit.row, fit.col, fit.tap,
          fit.fitted, fit.ratio);

    /* rank 1 plus 1e-5 noise on a peaked filter; one tap of 1e4 among 1e-4s; a full-rank one */
    gaussian(f, 21, 2.0, 0);
    for (int i = 0; i < 441; ++i) f[i] += 1e-5f * (float)((i * 7 % 11) - 5) / 5.0f;
    CHECK(mh_lowrank_factor(f, 21, 21, 4, u, v, &fit) == -1 && fit.ratio > 1, "nearly rank-1 21x21 accepted");
    for (int i = 0; i < 225; ++i) f[i] = i == 112 ? 1e4f : 1e-4f;
    CHECK(mh_lowrank_factor(f, 15, 15, 1, u, v, &fit) == -1 && fit.tap == 1e-4f, "one huge tap accepted (tap %g)",
          fit.tap);
    for (int i = 0; i < 49; ++i) g[i] = (float)((i * 37 + 11) % 23) / 23.0f - 0.5f;
    CHECK(mh_lowrank_factor(g, 7, 7, 4, u, v, &fit) == -1, "a full-rank 7x7 taken at rank %d", fit.rank);
    f[3] = NAN;
    CHECK(mh_lowrank_factor(f, 15, 15, 4, u, v, &fit) == -1 && fit.row == 0 && fit.col == 3 && isinf(fit.ratio),
          "NaN tap accepted");
}

/* Two threads failing on one context each read their own detail, never an empty one. */
typedef struct error_worker {
    mh_context *ctx;
    size_t n; /* the size each thread passes: its detail names it */
    size_t lost;
} error_worker;

static void *fail_repeatedly(void *p)
{
    error_worker *w = (error_worker *)p;
    char want[64];
    snprintf(want, sizeof want, "k = %zu", w->n + 1);
    float x[4] = {0}, y[4];
    for (int i = 0; i < 100000; ++i) {
        mh_status s = mh_conv1d(w->ctx, NULL, x, w->n, x, w->n + 1, MH_PAD_VALID, y);
        w->lost += s != MH_ERR_INVALID_ARGUMENT || !strstr(mh_context_error(w->ctx), want);
    }
    return NULL;
}

static void test_error_threads(void)
{
    mh_context *ctx;
    CHECK(mh_context_create(&ctx, MH_CPU) == MH_OK, "cpu context");
    pthread_t th[2];
    error_worker w[2] = {{ctx, 1, 0}, {ctx, 2, 0}};
    for (int i = 0; i < 2; ++i) pthread_create(&th[i], NULL, fail_repeatedly, &w[i]);
    for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    CHECK(w[0].lost == 0 && w[1].lost == 0, "threads sharing a context lost or swapped %zu and %zu error details",
          w[0].lost, w[1].lost);
    mh_context_destroy(ctx);
}

int main(void)
{
    test_lowrank();
    test_error_threads();
    test_names();
    test_contexts();
    test_buffers();
    test_precision();
    test_registry();
    test_bad_input();
    test_conv2d_bad_input();
    test_conv2d_mode_input();
    return test_finish("test_api");
}

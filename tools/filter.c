/* memhier filter IN OUT --filter SPEC [--mode M] [--variant V] [--device cpu|N] [--max-pixels P]
 *                [--precision per-element|normwise]
 * Filters a gray, gray + alpha, RGB or RGBA image of 8 or 16 bits a sample (PNG, PGM, PPM) with
 * a 2-D filter, each colour channel separately (alpha is passed through as it is), the same
 * size out; past the borders zeros, or with --mode the image extended as
 * scipy.ndimage's mode M does (reflect, mirror, nearest, wrap, constant: mh_conv2d_mode); results are rounded (half up)
 * and clamped to 0..255 (0..65535 for 16-bit samples). The output's format follows its name; OUT '-' writes the input's
 * format to standard output (the summary line then goes to standard error). Images of more
 * than --max-pixels pixels (default 2^26) are refused from their header. Each channel is filtered
 * into the image's own samples (a channel's plane is taken out before its results go back), so
 * the command holds the image once and two float planes: channels x bytes a sample + 8 bytes a
 * pixel (9 for 8-bit gray to 16 for 16-bit RGBA, 0.6 to 1.1 GB at the default limit). auto
 * keeps the per-element contract unless --precision normwise allows the FFT rows: a dark pixel
 * beside bright ones keeps its value, as scipy.ndimage gives it. A filter whose sum of |taps| times the image's top value
 * passes float32's range is refused (its sums would overflow). */
#include "cli.h"
#include "filter_spec.h"
#include "io/image.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_FILTER, F_VARIANT, F_DEVICE, F_MAX_PIXELS, F_MODE, F_PRECISION, F_COUNT };

/* Filters channel c of img into out (same layout) with the filter already in ctx memory. */
static float sample_at(const mh_image *img, size_t i)
{
    return img->depth == 16 ? (float)((const uint16_t *)img->data)[i] : (float)img->data[i];
}

/* Rounds half up and clamps to the image's range (a NaN, which a finite filter checked by
 * filter_in_range cannot give, to 0: the cast below is defined on every value). */
static void set_sample(const mh_image *img, unsigned char *data, size_t i, float v)
{
    const float top = (float)mh_image_max_value(img);
    v = floorf(v + 0.5f);
    v = !(v > 0.0f) ? 0.0f : v > top ? top : v;
    if (img->depth == 16) ((uint16_t *)data)[i] = (uint16_t)v;
    else data[i] = (unsigned char)v;
}

/* The filter's sums stay finite on every image of img's depth: sum |taps| x top <= FLT_MAX. */
static int filter_in_range(const mh_image *img, const float *taps, int kr, int kc, const char *spec)
{
    double l1 = 0.0;
    for (size_t i = 0; i < (size_t)kr * kc; ++i) l1 += fabs((double)taps[i]);
    const double top = (double)mh_image_max_value(img);
    if (l1 * top <= FLT_MAX) return CLI_OK;
    return cli_error(CLI_FAILED, "--filter %s: its taps' absolute values sum to %g, so a %d-bit image's sums could "
                     "reach %g, past float32's %g", spec, l1, img->depth == 16 ? 16 : 8, l1 * top, (double)FLT_MAX);
}

static int filter_channel(mh_context *ctx, const char *variant, mh_image *img, int c, const void *filter, int kr,
                          int kc, const mh_mode *mode, cli_buffer *plane, cli_buffer *result)
{
    const size_t pixels = (size_t)img->width * img->height;
    float *p = plane->host;
    for (size_t i = 0; i < pixels; ++i) p[i] = sample_at(img, i * img->channels + c);
    if (mh_context_device(ctx) != MH_CPU && mh_upload(ctx, plane->mem, plane->host, plane->bytes) != MH_OK)
        return cli_error(CLI_FAILED, "%s", mh_context_error(ctx));
    const size_t rows = (size_t)img->height, cols = (size_t)img->width;
    mh_status s = mode ? mh_conv2d_mode(ctx, variant, plane->mem, rows, cols, filter, (size_t)kr, (size_t)kc, *mode,
                                        0.0f, 0, 0, result->mem)
                       : mh_conv2d(ctx, variant, plane->mem, rows, cols, filter, (size_t)kr, (size_t)kc, MH_PAD_SAME,
                                   result->mem);
    if (s == MH_OK) s = mh_context_synchronize(ctx);
    if (s != MH_OK) return cli_error(CLI_FAILED, "filtering: %s", mh_context_error(ctx));
    int rc = cli_fetch(ctx, result);
    const float *r = result->host;
    for (size_t i = 0; rc == CLI_OK && i < pixels; ++i) set_sample(img, img->data, i * img->channels + c, r[i]);
    return rc;
}

int cmd_filter(int argc, char **argv)
{
    if (argc < 2 || argv[0][0] == '-' || (argv[1][0] == '-' && argv[1][1] != '\0'))
        return cli_error(CLI_USAGE,
                         "usage: memhier filter IN OUT --filter SPEC [--mode M] [--variant V] [--device cpu|N] "
                         "[--max-pixels P] [--precision per-element|normwise]");
    const char *in_path = argv[0], *out_path = argv[1];
    const int out_is_dash = strcmp(out_path, "-") == 0;
    const char *const names[] = {"--filter", "--variant", "--device", "--max-pixels", "--mode", "--precision", NULL};
    const char *v[F_COUNT];
    int rc = cli_flags(argc - 2, argv + 2, "filter", names, v), device, kr = 0, kc = 0;
    if (rc != CLI_OK) return rc;
    if (!v[F_FILTER]) return cli_error(CLI_USAGE, "filter needs --filter SPEC");
    if ((rc = cli_device(v[F_DEVICE], &device)) != CLI_OK) return rc;
    size_t max_pixels = MH_IMAGE_DEFAULT_MAX_PIXELS;
    if (v[F_MAX_PIXELS] && (rc = cli_parse_count("--max-pixels", v[F_MAX_PIXELS], &max_pixels)) != CLI_OK) return rc;
    mh_mode mode;
    if (v[F_MODE] && (rc = cli_parse_mode(v[F_MODE], &mode)) != CLI_OK) return rc;
    mh_precision precision = MH_PRECISION_PER_ELEMENT;
    if (v[F_PRECISION] && (rc = cli_parse_precision(v[F_PRECISION], &precision)) != CLI_OK) return rc;
    char err[512];
    float *taps = NULL;
    if (!filter_from_spec(v[F_FILTER], &taps, &kr, &kc, err, sizeof err)) return cli_error(CLI_USAGE, "%s", err);
    mh_image img;
    if (mh_image_read(in_path, max_pixels, &img, err, sizeof err) != MH_OK) {
        free(taps);
        return cli_error(CLI_FAILED, "%s", err);
    }
    const int colours = img.channels - mh_image_has_alpha(&img); /* alpha stays as it is */
    const size_t plane_bytes = (size_t)img.width * img.height * sizeof(float);
    cli_buffer bf = {taps, NULL, (size_t)kr * kc * sizeof(float)};
    cli_buffer plane = {malloc(plane_bytes), NULL, plane_bytes}, result = {malloc(plane_bytes), NULL, plane_bytes};
    mh_context *ctx = NULL;
    rc = filter_in_range(&img, taps, kr, kc, v[F_FILTER]);
    if (rc == CLI_OK) rc = cli_context(device, &precision, &ctx);
    if (rc == CLI_OK && (!plane.host || !result.host)) rc = cli_error(CLI_FAILED, "out of host memory");
    if (rc == CLI_OK) rc = cli_place(ctx, &bf, 1);
    if (rc == CLI_OK) rc = cli_place(ctx, &plane, 0);
    if (rc == CLI_OK) rc = cli_place(ctx, &result, 0);
    for (int c = 0; rc == CLI_OK && c < colours; ++c)
        rc = filter_channel(ctx, v[F_VARIANT], &img, c, bf.mem, kr, kc, v[F_MODE] ? &mode : NULL, &plane, &result);
    if (rc == CLI_OK && mh_image_write(out_path, &img, err, sizeof err) != MH_OK) rc = cli_error(CLI_FAILED, "%s", err);
    if (rc == CLI_OK)
        fprintf(out_is_dash ? stderr : stdout, "filtered %s (%d x %d, %s, %d-bit) with %s (%d x %d) -> %s\n", in_path,
                img.width, img.height, mh_image_kind(&img), img.depth == 16 ? 16 : 8, v[F_FILTER], kr, kc, out_path);
    cli_release(ctx, &bf);
    cli_release(ctx, &plane);
    cli_release(ctx, &result);
    free(plane.host), free(result.host), free(taps);
    mh_image_free(&img);
    mh_context_destroy(ctx);
    return rc;
}

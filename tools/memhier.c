/* memhier: the command line. `memhier help` lists the commands. */
#include "build_info.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* Each command's usage: `memhier COMMAND --help` prints its entry, `memhier help` all. */
static const struct command {
    const char *name, *usage;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"info", "  info [--device cpu|N]        device facts and the measured copy and FMA ceilings\n", cmd_info},
    {"list", "  list [OP]                    the variant registry: name, backend, rung, memory, source\n", cmd_list},
    {"run",
     "  run conv1d [--variant V] [--device cpu|N] --in x.npy --mask w.npy\n"
     "             [--pad valid|same|full | --mode M [--cval C] [--origin O]] --out y.npy\n"
     "  run conv2d [--variant V] [--device cpu|N] --in x.npy --filter f.npy\n"
     "             [--pad valid|same|full | --mode M [--cval C] [--origin O|R,C]] --out y.npy\n"
     "             (--mode: reflect, mirror, nearest, wrap or constant, as scipy.ndimage;\n"
     "             the output has the input's size; float64 x and f with --mode: scipy's\n"
     "             float64 sums, bit for bit)\n"
     "             [--precision normwise|per-element]: the accuracy auto keeps (conv1d, conv2d;\n"
     "             default normwise: the FFT rows allowed; per-element: every output within its\n"
     "             own terms' FP32 bound, as scipy.ndimage computes)\n"
     "  run transpose [--variant V] [--device cpu|N] --in x.npy --out y.npy\n"
     "  run matmul [--variant V] [--device cpu|N] --a a.npy --b b.npy --out c.npy\n"
     "             (a and b both float32, or both float64: c of their dtype)\n"
     "  run reduce [--variant V] [--device cpu|N] --in x.npy [--out s.npy]\n"
     "             [--op sum|mean|min|max|argmin|argmax] [--axis K]: numpy's reduction of a\n"
     "             float32, float64 or 8- to 64-bit integer array over axis K (the whole array without one)\n"
     "  run histogram [--variant V] [--device cpu|N] --in x.npy (int32, int64 or uint8) --out h.npy\n"
     "             [--bins B | --lo L --hi H --width W]\n"
     "  run histogram ... --in x.npy (float32, any shape) --out h.npy\n"
     "             --bins B [--range LO,HI] | --edges e.npy (float32)\n"
     "             numpy.histogram's counts: uniform bins over the range (the data's min and\n"
     "             max without one), or between increasing edges; NaN and values outside are\n"
     "             counted apart\n"
     "  run histogram ... [--weights w.npy]: int32 or float32 values, one float32 weight\n"
     "             each: float64 sums of the weights (numpy's bincount or histogram weights=)\n"
     "  run rank [--variant V] [--device cpu|N] --in x.npy --out y.npy --select min|max|median|R\n"
     "             --size S|R,C | --footprint f.npy [--mode M] [--cval C] [--origin O|R,C]\n"
     "             scipy.ndimage.rank_filter of a 2-D array of any type but float16 (its minimum,\n"
     "             maximum, median or rank R from 0), over a rectangle or a 2-D uint8 footprint\n"
     "             (nonzero: in the window); mode reflect unless given\n",
     cmd_run},
    {"filter",
     "  filter IN OUT --filter SPEC [--mode M] [--variant V] [--device cpu|N] [--max-pixels P]\n"
     "                [--precision per-element|normwise]\n"
     "                               filter a PNG/JPEG/PGM/PPM image (gray or RGB, alpha passed\n"
     "                               through, 8 or 16 bits); SPEC is gaussian:SIGMA, box:K,\n"
     "                               sobel-x, sobel-y, laplacian, sharpen or a .npy filter;\n"
     "                               zeros past the borders, or the image extended by mode M\n"
     "                               (reflect, mirror, nearest, wrap, constant: scipy.ndimage's);\n"
     "                               OUT - is standard output; images over P pixels (default\n"
     "                               67108864) are refused from their header; a pixel holds\n"
     "                               channels x bytes a sample + 8 bytes (9 for 8-bit gray to 16\n"
     "                               for 16-bit RGBA: 0.6 to 1.1 GB at the default);\n"
     "                               auto keeps the per-element contract unless told normwise\n",
     cmd_filter},
    {"explain",
     "  explain conv1d --n N --k K [--batch B] [--pad P | --mode M] [--precision P]\n"
     "  explain conv2d --rows R --cols C --krows KR --kcols KC [--pad P | --mode M] [--precision P]\n"
     "  explain transpose --rows R --cols C\n"
     "  explain matmul --m M --k K --n N\n"
     "  explain reduce --n N\n"
     "  explain histogram --n N --bins B [--bytes | --floats | --edges]\n"
     "                               which variant auto runs for the problem on this device, and\n"
     "                               why: the device's rules, the rule with this problem's numbers,\n"
     "                               each candidate's answer; [--device cpu|N] with any of them\n",
     cmd_explain},
    {"bench",
     "  bench [OP] [--n N --k K] [--rows R --cols C --krows KR --kcols KC] [--pad P]\n"
     "        [--variants a,b] [--device cpu|N] [--json FILE] [--reps R] [--tune | --configs c,d]\n"
     "  bench conv1d --grid [--variants a,b] [--json FILE]\n"
     "                               n from 2^12 to 2^26 by 4x against k from 3 to 65535, valid\n"
     "                               validate and time every variant; no OP runs every op's\n"
     "                               default workloads (GPU 0, or the CPU backend without one);\n"
     "                               --tune: every tuning configuration, --configs: those named;\n"

     "                               sizes up to 2^36 elements a buffer, --reps 20 to 100000;\n"
     "                               --json - writes the JSON to standard output\n"
     "  bench conv2d --mode M [sizes] [--variants a,b] ...\n"
     "                               the image extended by boundary mode M (constant, reflect,\n"
     "                               mirror, nearest, wrap), the output as large as the image\n"
     "  bench conv2d [sizes] --filter random|gaussian:SIGMA|dog:SIGMA1:SIGMA2|terms:R ...\n"
     "                               the filter of the workload (Gaussians, their differences and\n"
     "                               sums of R positive outer products are planned: separable and\n"
     "                               lowrank take them)\n"
     "  bench [OP] --headline [--device cpu|N] [--json FILE]\n"
     "                               the main job's workloads, one or two per op: auto's pick\n"
     "                               and the vendor rows (the CPU reference without a GPU)\n",
     cmd_bench},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_usage(FILE *f)
{
    fputs("usage: memhier COMMAND [ARGS]   (memhier COMMAND --help: that command alone)\n\n", f);
    for (size_t i = 0; i < NCOMMANDS; ++i) fputs(commands[i].usage, f);
    fputs("  help, --version\n", f);
}

static int is_help(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

/* Prints usage text with "memhier" before each command line ("  run conv1d ..." becomes
 * "  memhier run conv1d ...") and continuation lines shifted to match. */
static void print_entries(const char *text, int len)
{
    printf("usage:\n");
    for (const char *line = text, *end = text + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const int n = (int)((nl ? nl + 1 : end) - line);
        const int continuation = n > 2 && line[2] == ' ';
        printf("%s%.*s", continuation ? "        " : "  memhier ", n - 2, line + 2);
        line += n;
    }
}

/* `run OP --help` prints OP's lines of run's usage (an entry runs to the next "  run "). */
static void print_command_usage(const struct command *c, int argc, char **argv)
{
    const char *text = c->usage;
    int len = (int)strlen(text);
    if (c->run == cmd_run && argc > 0 && !is_help(argv[0])) {
        char entry[64];
        snprintf(entry, sizeof entry, "  run %s ", argv[0]);
        const char *start = strstr(text, entry);
        if (start) {
            const char *end = strstr(start + 1, "  run ");
            text = start, len = (int)(end ? end - start : (long)strlen(start));
        }
    }
    print_entries(text, len);
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    for (size_t i = 0; i < NCOMMANDS; ++i) {
        if (strcmp(cmd, commands[i].name) != 0) continue;
        for (int a = 2; a < argc; ++a)
            if (is_help(argv[a])) {
                mh_op op; /* `run OP --help` of an op that does not exist is a usage error */
                if (commands[i].run == cmd_run && a > 2 && cli_parse_op(argv[2], &op) != CLI_OK) return CLI_USAGE;
                print_command_usage(&commands[i], argc - 2, argv + 2);
                return CLI_OK;
            }
        return commands[i].run(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "help") == 0 || is_help(cmd)) {
        print_usage(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("memhier %d.%d.%d (%s, CUDA architectures %s)\n", MEMHIER_VERSION_MAJOR,
               MEMHIER_VERSION_MINOR, MEMHIER_VERSION_PATCH, MEMHIER_COMMIT, MEMHIER_CUDA_ARCHITECTURES);
        return CLI_OK;
    }
    print_usage(stderr);
    return cli_error(CLI_USAGE, "unknown command '%s'", cmd);
}

/* ---- info ------------------------------------------------------------------------------ */

int cmd_info(int argc, char **argv)
{
    int device, rc;
    const char *named = NULL;
    for (int i = 0; i < argc; ++i) {
        if (strcmp(argv[i], "--device") == 0) {
            if (!(named = cli_value(argc, argv, &i))) return CLI_USAGE;
        } else {
            return cli_error(CLI_USAGE, "info: unknown argument '%s'", argv[i]);
        }
    }
    if ((rc = cli_device(named, &device)) != CLI_OK) return rc;
    mh_context *ctx;
    if ((rc = cli_context(device, NULL, &ctx)) != CLI_OK) return rc;
    mh_status s;
    mh_device_info d;
    mh_ceilings c;
    if ((s = mh_device_info_get(ctx, &d)) != MH_OK) {
        cli_error(CLI_FAILED, "%s", mh_context_error(ctx));
        mh_context_destroy(ctx);
        return CLI_FAILED;
    }
    const double mib = 1024.0 * 1024.0, kib = 1024.0;
    if (device == MH_CPU) {
        printf("backend        cpu%s\n", mh_cuda_device_count() ? "" : " (no CUDA device found)");
        printf("cpu            %s\n", d.name);
        printf("cores          %d\n", d.sm_count);
        printf("memory         %.0f MiB\n", (double)d.global_bytes / mib);
        printf("L2 cache       %.0f KiB\n", (double)d.l2_bytes / kib);
    } else {
        printf("device         %d: %s (compute capability %d.%d)\n", device, d.name, d.cc_major, d.cc_minor);
        printf("SMs            %d\n", d.sm_count);
        printf("global memory  %.0f MiB\n", (double)d.global_bytes / mib);
        printf("L2 cache       %.1f MiB\n", (double)d.l2_bytes / mib);
        printf("shared / SM    %.0f KiB (a block may opt in to %.0f KiB)\n", (double)d.smem_per_sm / kib,
               (double)d.smem_per_block_optin / kib);
        printf("constant       %.0f KiB\n", (double)d.const_bytes / kib);
        printf("registers / SM %zu\n", d.regs_per_sm);
    }
    printf("measuring ceilings...\n");
    fflush(stdout);
    s = mh_measure_ceilings(ctx, &c);
    if (s == MH_OK) {
        printf("copy           %.0f GB/s (device-to-device, bytes read + written)\n", c.copy_gbps);
        printf("FP32 FMA       %.0f GFLOP/s\n", c.fma_gflops);
    } else {
        cli_error(CLI_FAILED, "measuring ceilings: %s", mh_context_error(ctx));
    }
    mh_context_destroy(ctx);
    return s == MH_OK ? CLI_OK : CLI_FAILED;
}

/* ---- list ------------------------------------------------------------------------------ */

int cmd_list(int argc, char **argv)
{
    int first = 0, last = MH_OP_COUNT - 1;
    if (argc > 1) return cli_error(CLI_USAGE, "list takes at most one op");
    if (argc == 1) {
        mh_op op;
        int rc = cli_parse_op(argv[0], &op);
        if (rc != CLI_OK) return rc;
        first = last = (int)op;
    }
    printf("%-24s %-7s %-4s %-34s %-14s %s\n", "variant", "backend", "rung", "memory", "source", "summary");
    for (int op = first; op <= last; ++op)
        for (size_t i = 0; i < mh_variant_count((mh_op)op); ++i) {
            const mh_variant_info *v = mh_variant((mh_op)op, i);
            printf("%-24s %-7s %-4d %-34s %-14s %s\n", v->name, mh_backend_name(v->backend), v->rung,
                   v->memory, v->source, v->summary);
        }
    return CLI_OK;
}

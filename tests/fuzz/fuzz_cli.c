/* libFuzzer harness: argument vectors into the memhier command line, in process, with
 * AddressSanitizer, UBSan and leak checking. The input is split at newlines into at most 12
 * arguments; the process works in a scratch folder holding small inputs (x.npy, m.npy, img.npy,
 * f.npy, a.npy, b.npy, h.npy, u.npy, g.pgm, c.ppm), and an argument naming anything outside it
 * (a '/') is not run, so the fuzzer writes nothing elsewhere. `bench` is parsed and checked, not
 * run (its workloads take minutes); `info` is not run (it measures the machine's ceilings). */
#include "cli.h"
#include "io/npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { MAX_ARGS = 12, MAX_ARG = 64 };

static void save(const char *name, mh_dtype t, int ndim, const size_t *shape, const void *data)
{
    char err[256];
    if (mh_npy_write(name, t, ndim, shape, data, err, sizeof err) != MH_OK) abort();
}

static void write_file(const char *name, const char *head, size_t head_len, size_t pixels)
{
    FILE *f = fopen(name, "wb");
    if (!f) abort();
    fwrite(head, 1, head_len, f);
    for (size_t i = 0; i < pixels; ++i) fputc((int)(i * 37 % 256), f);
    fclose(f);
}

/* The scratch folder and its inputs, once. */
static void setup(void)
{
    char dir[] = "/tmp/memhier-fuzz-cli-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) != 0) abort();
    float v[64];
    int32_t h[50];
    uint8_t u[50];
    for (int i = 0; i < 64; ++i) v[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < 50; ++i) h[i] = i % 13 - 2, u[i] = (uint8_t)(i * 5);
    const size_t s100[1] = {60}, s3[1] = {3}, s8[2] = {8, 8}, s33[2] = {3, 3}, s45[2] = {4, 5}, s53[2] = {5, 3},
                 s50[1] = {50};
    save("x.npy", MH_F32, 1, s100, v), save("m.npy", MH_F32, 1, s3, v);
    save("img.npy", MH_F32, 2, s8, v), save("f.npy", MH_F32, 2, s33, v);
    save("a.npy", MH_F32, 2, s45, v), save("b.npy", MH_F32, 2, s53, v);
    save("h.npy", MH_I32, 1, s50, h), save("u.npy", MH_U8, 1, s50, u);
    write_file("g.pgm", "P5\n8 6\n255\n", 11, 48);
    write_file("c.ppm", "P6\n5 4\n255\n", 11, 60);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) setup(), ready = 1;
    char store[MAX_ARGS][MAX_ARG + 1], *argv[MAX_ARGS + 2] = {"memhier"};
    int argc = 1;
    for (size_t i = 0; i < size && argc <= MAX_ARGS;) {
        size_t len = 0;
        while (i + len < size && data[i + len] != '\n') ++len;
        if (len > MAX_ARG || memchr(data + i, '\0', len) || memchr(data + i, '/', len)) return 0;
        memcpy(store[argc - 1], data + i, len);
        store[argc - 1][len] = '\0';
        argv[argc] = store[argc - 1];
        ++argc, i += len + 1;
    }
    argv[argc] = NULL;
    if (argc >= 2 && !strcmp(argv[1], "info")) return 0;
    if (argc >= 2 && !strcmp(argv[1], "bench")) {
        bench_opts o;
        memset(&o, 0, sizeof o);
        int ops[MH_OP_COUNT], nops = 0;
        bench_parse_args(argc - 2, argv + 2, &o, ops, &nops);
        return 0;
    }
    cli_main(argc, argv);
    return 0;
}

/* The benchmark: a generic harness (bench.c) that validates, times and reports every
 * registry row of an op, and one driver per op that knows its workloads, inputs and
 * reference (bench_<op>.c). */
#ifndef MEMHIER_BENCH_H
#define MEMHIER_BENCH_H

#include "cli.h"
#include "core/verify.h"

/* Sizes a command line may give (--n, --k, --rows, ...); each op reads the ones it has. */
typedef enum bench_size { BENCH_N, BENCH_K, BENCH_ROWS, BENCH_COLS, BENCH_KROWS, BENCH_KCOLS, BENCH_SIZES } bench_size;

typedef struct bench_opts {
    int device;           /* MH_CPU or a CUDA index */
    const char *variants; /* comma-separated names (full or short), NULL for all */
    const char *json;
    int min_reps;
    int tune;            /* time every tuning configuration of rows that have them */
    const char *configs; /* with tune: only these configurations (comma-separated), NULL for all */
    int grid; /* the op's grid of sizes (conv1d: n from 2^12 to 2^26 against k from 3 to 65535) */
    int headline; /* the headline workloads alone, with the vendor rows and auto's pick */
    size_t size[BENCH_SIZES];
    int have[BENCH_SIZES], have_pad, any_size; /* any_size: one workload from the flags */
    mh_pad pad;
    int have_mode; /* conv1d, conv2d, sepfilter: the workloads extended by `mode` (in place of --pad) */
    mh_mode mode;
    const char *filter; /* conv2d with sizes: "random", "gaussian:SIGMA" or "dog:SIGMA1:SIGMA2" (checked) */
} bench_opts;

/* conv2d's --filter: 1 and the kind (0 random, 1 Gaussian, 2 difference of Gaussians) and sigmas
 * (0 < sigma <= 1000) of a valid spec, else 0. */
int bench_conv2d_filter(const char *spec, int *kind, double *sigma, double *sigma2);

/* bench's command line (after "bench") into o and the ops to run (all when none is named),
 * every size and name checked; prints and returns CLI_USAGE when it is wrong. */
int bench_parse_args(int argc, char **argv, bench_opts *o, int *ops, int *nops);
/* opts' value of size s, or fallback when the command line did not give it. */
size_t bench_size_or(const bench_opts *o, bench_size s, size_t fallback);

enum { BENCH_MAX_WORKLOADS = 128 };

typedef struct bench_workload {
    char desc[192];      /* "n=16777216 k=2047 pad=valid" */
    double flops, bytes; /* the op's work: flops done, fewest bytes moved */
    void *state;         /* the driver's */
    int reduced;         /* the row being checked is reduced precision (TF32): its bound is wider */
} bench_workload;

typedef struct bench_driver {
    mh_op op;
    const char *naive;     /* speed-ups are over this row ("conv1d/naive")... */
    const char *cpu_naive; /* ...or this one in a CPU-only run */
    const char *vendor;    /* and over the vendor baseline ("conv1d/cudnn") */
    int cpu_rows_on_gpu;   /* time the CPU rows in a GPU run too */
    /* The workloads of this run: from the options, or the op's defaults for gpu or cpu. */
    size_t (*plan)(const bench_opts *o, int gpu, bench_workload *w, size_t max);
    /* Inputs on the host (and on gpu when not NULL), and the reference. */
    int (*setup)(bench_workload *w, mh_context *gpu, char *err, size_t len);
    void (*teardown)(bench_workload *w);
    /* The call's arguments for ctx's memory (host arrays on the CPU, device ones on a GPU);
     * the harness sets the tuning configuration and asks the rows with them. */
    void (*make_args)(bench_workload *w, mh_context *ctx, mh_args *a);
    void (*poison)(bench_workload *w, mh_context *ctx);
    /* After a run: 1 when the output matches the reference; else why. */
    int (*check)(bench_workload *w, mh_context *ctx, mh_error_stats *st, char *why, size_t len);
    /* The headline workloads (--headline, the README's main job): bit i keeps the i-th of the
     * GPU's or the CPU's default workloads. */
    unsigned headline_gpu, headline_cpu;
} bench_driver;

extern const bench_driver bench_conv1d_driver;
extern const bench_driver bench_conv2d_driver;
extern const bench_driver bench_transpose_driver;
extern const bench_driver bench_coalescing_driver;
extern const bench_driver bench_matmul_driver;
extern const bench_driver bench_reduce_driver;
extern const bench_driver bench_histogram_driver;
extern const bench_driver bench_sepfilter_driver;
extern const bench_driver bench_rank_driver;

/* Shared by the drivers: a device copy of count floats (NULL src: just allocate), and the
 * output positions checked against the reference (all when count <= 65536, else the
 * first and last 512 and 7168 spread at random: 8192; samples holds that many). */
int bench_device_copy(float **dst, const float *src, size_t count, char *err, size_t len);
size_t bench_samples(size_t count, size_t *samples);
enum { BENCH_MAX_SAMPLES = 65536 };

/* The outputs checked against a double reference: their positions (bench_samples), the
 * reference and the sum of |terms| there (the driver fills both), and the values read. */
typedef struct bench_sampled {
    size_t *at, count;
    double *ref, *mag;
    float *got;
} bench_sampled;
int bench_sampled_alloc(bench_sampled *s, size_t outputs); /* 0 when out of memory */
void bench_sampled_free(bench_sampled *s);
/* Counts the NaN outputs (never written) into *unwritten and compares the samples of out
 * with the bound for sums of `terms` products; 1 when they all pass. */
int bench_sampled_compare(bench_sampled *s, const float *out, size_t outputs, size_t terms, mh_error_stats *st,
                          size_t *unwritten);
/* The same with the bound's relative tolerance given (mh_tf32_rtol for a TF32 row). */
int bench_sampled_compare_rtol(bench_sampled *s, const float *out, size_t outputs, double rtol, mh_error_stats *st,
                               size_t *unwritten);

/* count outputs set to NaN: the host array on a CPU context, the device one on a GPU. */
void bench_poison(mh_context *ctx, float *host, float *dev, size_t count);
/* The device outputs into host on a GPU context (nothing to do on the CPU); 0 and why on failure. */
int bench_fetch(mh_context *ctx, float *host, const float *dev, size_t count, char *why, size_t len);

#endif

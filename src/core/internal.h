/* Internal interfaces shared by the op front-ends, the backends, the CLI and the tests.
 * Nothing here is installed; the public API is include/memhier.h alone. */
#ifndef MH_INTERNAL_H
#define MH_INTERNAL_H

#include "memhier.h"
#include "auto_rules.h"
#include "histogram_rule.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MH_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MH_PRINTF(a, b)
#endif

/* Per-context resources created on first use (vendor handles, FFT plans), each freed by
 * its own destructor at mh_context_destroy. */
typedef enum mh_slot_id {
    MH_SLOT_CUDNN = 0,
    MH_SLOT_CUFFT_CONV1D,
    MH_SLOT_FFT_OS,
    MH_SLOT_TEXTURE,
    MH_SLOT_CUBLAS,
    MH_SLOT_REVERSED_FILTER,
    MH_SLOT_SEPFILTER_TERM,
    MH_SLOT_REDUCE_TICKET,
    MH_SLOT_HISTOGRAM_SUMS,
    MH_SLOT_COUNT
} mh_slot_id;

/* The vendor libraries a row may call, opened on first use (src/adapters/vendor_lib.h). */
typedef enum mh_vendor_lib { MH_LIB_NONE = 0, MH_LIB_CUBLAS, MH_LIB_CUFFT, MH_LIB_CUDNN, MH_LIB_NPP, MH_LIB_COUNT } mh_vendor_lib;

typedef struct mh_slot {
    void *data;
    void (*destroy)(void *data);
} mh_slot;

/* A context's calls are serialized by its lock (held while a call checks, resolves and queues
 * its work, never while the GPU runs). The workspace and the slots are shared device state:
 * every call that touches them goes through mh_workspace or mh_context_slot, which order it
 * after the last such call when that one ran on another stream (an event fence), and the
 * dispatcher records the fence event on the call's stream when the call is queued. */
struct mh_context {
    int device;      /* CUDA ordinal or MH_CPU */
    void *stream;    /* cudaStream_t; NULL is the legacy default stream */
    mh_precision precision; /* the contract auto keeps (mh_context_set_precision) */
    void *workspace; /* device scratch, grown on demand, reused between calls */
    size_t workspace_bytes;
    int sm_count;    /* the device's SMs, read once at creation (0 on the CPU) */
    int cc;          /* compute capability, 10 major + minor (90 on the H100; 0 on the CPU) */
    const mh_auto_rules *rules; /* auto's thresholds for this device (the fallback's on the CPU) */
    char name[256];             /* the device's name ("CPU" for the CPU backend) */
    mh_slot slots[MH_SLOT_COUNT];
    pthread_mutex_t lock;
    void *fence;          /* cudaEvent_t recorded after the last call that used shared state;
                             NULL until a call first uses it */
    void *shared_stream;  /* the stream of that call */
    int shared_touched;   /* the call in progress uses shared state */
};

/* Records the detail of a failure on ctx (if not NULL) for the calling thread and returns s. */
mh_status mh_fail(mh_context *ctx, mh_status s, const char *fmt, ...) MH_PRINTF(3, 4);
void mh_clear_error(mh_context *ctx);
/* Drops the calling thread's record of its last select on ctx (ctx is being destroyed, and a
 * later context may reuse its address). */
void mh_forget_select(const mh_context *ctx);

int mh_is_cpu(const mh_context *ctx);

/* The context's lock, around every public call that reads or changes its state. */
void mh_context_lock(mh_context *ctx);
void mh_context_unlock(mh_context *ctx);
/* The context's stream (a cudaStream_t), read under its lock. */
void *mh_context_stream(mh_context *ctx);

/* Device scratch of at least `bytes`, valid for the call in progress; ordered after every
 * earlier call's use on another stream. */
mh_status mh_workspace(mh_context *ctx, size_t bytes, void **ptr);
/* A per-context resource slot (vendor handles, FFT plans), with the same ordering; NULL only
 * where the fence could not be set up (the detail is then on ctx). */
mh_slot *mh_context_slot(mh_context *ctx, mh_slot_id id);
/* A slot that holds one buffer of the context's memory, `bytes` at least: host memory on the CPU
 * backend, device memory on a GPU, grown in stream order as the workspace is and fenced as the
 * other slots are; valid for the call in progress. `what` names it in errors. */
mh_status mh_slot_buffer(mh_context *ctx, mh_slot_id id, const char *what, size_t bytes, void **ptr);
/* After a call's work is queued: records the fence on the call's stream if the call used
 * shared state. */
void mh_shared_release(mh_context *ctx);

/* Makes ctx's device current for the duration of a call and restores the caller's. */
typedef struct mh_device_guard {
    int previous;
    int switched;
} mh_device_guard;
mh_status mh_device_enter(mh_context *ctx, mh_device_guard *guard);
void mh_device_leave(const mh_device_guard *guard);

/* Number of CUDA devices (0 when the runtime has none or no driver); cached. */
int mh_cuda_device_count(void);

/* 1 where p is device (or managed) memory and ctx is a CUDA context. */
int mh_is_device_memory(const mh_context *ctx, const void *p);
/* mh_free for memory of `device` (MH_CPU: host) without a context: a plan's copy. */
void mh_free_on(int device, void *ptr);
/* Checks that p is usable as `bytes` bytes by ctx: host memory for a CPU context, memory
 * of ctx's device for a CUDA context, and (where the driver can tell) that the allocation
 * holds `bytes` from p onwards. The error names `what`. */
mh_status mh_check_buffer(mh_context *ctx, const char *what, const void *p, size_t bytes);
/* Refuses overlapping [a, a+abytes) and [b, b+bbytes). */
mh_status mh_check_disjoint(mh_context *ctx, const char *aname, const void *a, size_t abytes,
                            const char *bname, const void *b, size_t bbytes);
/* A convolution's buffers: in, the taps (named taps_name: "mask", "filter") and out each
 * usable by ctx (mh_check_buffer), out overlapping neither input. */
/* MH_OK for a boundary mode of the enum, else the error naming the argument `name` and its value. */
/* MH_OK where t is one of the image types sepfilter and conv2d's typed rows read and write
 * (float32, float16, uint8, int8, uint16, int16); else the error names `name` and the value. */
mh_status mh_check_image_dtype(mh_context *ctx, const char *name, mh_dtype t, const char *op);
mh_status mh_check_mode(mh_context *ctx, const char *name, mh_mode mode);
/* 1 for a zero-padded call; for a bordered one 0, with the reason in why naming the rows that
 * take modes (`takers`). */
int mh_zero_pad_only(int bordered, mh_mode mode, mh_op op, char *why, size_t len);
/* MH_OK when origin is in [-(taps / 2), (taps - 1) / 2], else the error naming `name` and the range. */
mh_status mh_check_origin(mh_context *ctx, const char *name, long long origin, size_t taps, const char *side);
mh_status mh_check_conv_buffers(mh_context *ctx, const float *in, size_t in_bytes, const char *taps_name,
                                const float *taps, size_t taps_bytes, const float *out, size_t out_bytes);
/* a * b into *r; 0 on overflow. */
int mh_mul_ok(size_t a, size_t b, size_t *r);

/* b rounded up to a multiple of a. */
static inline size_t mh_align_up(size_t b, size_t a) { return (b + a - 1) / a * a; }

/* Zeros before element 0 along an axis, for a k-tap filter: none (valid), (k - 1) / 2
 * (same, PyTorch's anchor for even k) or k - 1 (full). */
static inline size_t mh_lead_pad(size_t k, mh_pad pad)
{
    return pad == MH_PAD_VALID ? 0 : pad == MH_PAD_SAME ? (k - 1) / 2 : k - 1;
}

/* ---- arguments of every op ---------------------------------------------------------- */

typedef struct mh_conv1d_args {
    const float *in;
    size_t n;
    const float *mask;
    size_t k;
    mh_pad pad;
    size_t lpad;  /* zeros before in[0]: 0, (k-1)/2 or k-1 */
    size_t out_n; /* outputs: n-k+1, n or n+k-1 */
    float *out;
    size_t batch;       /* signals: in + b * n, out + b * out_n (1 for mh_conv1d) */
    size_t mask_stride; /* 0: one mask; k: mask + b * k for signal b */
    /* mh_conv1d_mode's calls: each signal extended by `mode` (cval for constant), out_n = n,
     * lpad = k / 2 + origin. Rows whose loaders do not apply modes refuse them
     * (mh_conv1d_zero_pad_only). Calls through mh_conv1d have bordered 0: zeros outside. */
    int bordered;
    mh_mode mode;
    float cval;
} mh_conv1d_args;

typedef struct mh_conv2d_args {
    const float *in;
    size_t rows, cols;
    const float *filter;
    int krows, kcols;
    mh_pad pad;
    int lpr, lpc; /* padded rows above and columns left of in[0][0] */
    size_t out_rows, out_cols;
    float *out;
    /* mh_conv2d_mode's calls: the image extended by `mode` (cval for constant), out as large as
     * in. Rows whose loaders do not apply modes refuse them (mh_conv2d_zero_pad_only). Calls
     * through mh_conv2d have bordered 0: zeros outside, skipped by the CPU rows. */
    int bordered;
    mh_mode mode;
    float cval;
    /* a stack of `batch` images (mh_conv2d_mode_batched): in[b * rows * cols], out[b * out_rows *
     * out_cols]; regtile, walk and tiles run it in one launch, other rows image by
     * image */
    size_t batch;
    /* mh_conv2d_typed: in and out hold elements of these types (then `in` and `out` are not
     * float arrays but the caller's bytes; only rows flagged MH_ROW_IMAGE_DTYPES read them) */
    mh_dtype in_type, out_type;
    /* mh_conv2d_float64: a call summed in float64 in scipy's order, the weights in float64
     * (host memory; filter is then NULL; NULL for mh_conv2d_float64_select) and cval in float64;
     * only rows flagged MH_ROW_FLOAT64 take such a call */
    int float64;
    const double *filter64;
    double cval64;
    /* mh_conv2d_planned: the filter's analysis (filter is then the plan's copy), else NULL */
    const struct mh_conv2d_plan *plan;
    /* mh_conv2d_mode_reversed: the filter is read reversed along both axes. The op's prepare
     * step copies it so, and the rows get the copy with this cleared, but for the rows flagged
     * MH_ROW_READS_REVERSED, which get it set and read the caller's filter from its end. */
    int reversed;
} mh_conv2d_args;

/* A call on typed images (mh_conv2d_typed with another type than float32 in or out). */
static inline int mh_conv2d_is_typed(const mh_conv2d_args *a) { return a->in_type != MH_F32 || a->out_type != MH_F32; }
/* A call computed in float64 in scipy's order (mh_conv2d_float64). */
static inline int mh_conv2d_is_float64(const mh_conv2d_args *a) { return a->float64; }

typedef struct mh_transpose_args {
    const float *in;
    size_t rows, cols;
    float *out;
} mh_transpose_args;

/* Seed 004's access-pattern kernels: out[i] = in[i] + 100 at i = t + param (offset) or
 * i = t * param (stride) for the n threads t. */
typedef enum mh_access_pattern { MH_PATTERN_OFFSET = 0, MH_PATTERN_STRIDE } mh_access_pattern;

typedef struct mh_coalescing_args {
    const float *in;
    float *out;
    size_t n; /* threads */
    mh_access_pattern pattern;
    int param; /* the offset or the stride */
} mh_coalescing_args;

/* c[m x n] = a[m x k] . b[k x n], row-major. */
typedef struct mh_matmul_args {
    const float *a, *b;
    float *c;
    size_t m, k, n;
    /* MH_F32, or (mh_matmul_typed) MH_F64, MH_F16 or MH_BF16: then a, b and c hold doubles or
     * 16-bit floats, which only the rows flagged MH_ROW_FLOAT64, _FLOAT16 or _BFLOAT16 read */
    mh_dtype type;
} mh_matmul_args;

/* A float64 matmul's arrays. */
static inline const double *mh_matmul_a64(const mh_matmul_args *x) { return (const double *)(const void *)x->a; }
static inline const double *mh_matmul_b64(const mh_matmul_args *x) { return (const double *)(const void *)x->b; }
static inline double *mh_matmul_c64(const mh_matmul_args *x) { return (double *)(void *)x->c; }

/* A reduction of in (dtype, seen as outer x len x inner) over len into out (outer x inner), by
 * kind (include/memhier.h). The whole-array float32 sum, *sum = in[0] + ... + in[n - 1], is the
 * case every row takes (whole_sum set: n = len, sum = out). mh_reduce's calls ask for float32
 * sums rounded once from double (rounded_once), which auto takes to the rows flagged
 * MH_ROW_ANY_REDUCTION; mh_reduce_sum's for the float sum's bound, which any row keeps. */
typedef struct mh_reduce_args {
    const float *in;
    size_t n;
    float *sum;
    int whole_sum; /* float32, sum, outer = inner = 1 */
    int rounded_once; /* the caller asked for the double sum rounded once (mh_reduce) */
    mh_dtype dtype;
    mh_reduce_kind kind;
    size_t outer, len, inner;
    void *out;
} mh_reduce_args;

/* Counts of in's values (int32, or bytes when bytes = 1): value v in [lo, hi] goes to bin
 * (v - lo) / width; the others are counted into *outside when it is not NULL. Float32 values
 * (floats = 1) go to num_bins bins by f, numpy.histogram's rule (core/histogram_rule.h). */
typedef struct mh_histogram_args {
    const void *in;
    int bytes, floats, int64; /* the values: uint8, float32, int64; else int32 */
    size_t n;
    int lo, hi, width, num_bins;
    mh_hist_float f;
    unsigned long long *bins, *outside;
    /* mh_histogram_range: uniform bins' edges e[0 .. num_bins] written here as float32 in the
     * same call (every unweighted row writes them where it zeroes the counts); else NULL */
    float *edges_out;
    /* weighted (mh_histogram_weighted): weights[i] summed in double into sums (num_bins) and
     * *outside_sum in place of the counts (bins and outside then NULL) */
    int weighted;
    const float *weights;
    double *sums, *outside_sum;
} mh_histogram_args;

/* mh_sepfilter's call: the description (its taps copied, so the args own them) and buffers. */
typedef struct mh_sepfilter_args {
    mh_sepfilter_desc d; /* its taps: the copies below, or the caller's device memory */
    float vtaps[MH_SEPFILTER_MAX_TAPS], htaps[MH_SEPFILTER_MAX_TAPS];
    /* a call computed in float64: its taps64, or its host taps widened (d's taps64 point here;
     * NULL for device taps given without taps64, which the kernels widen) */
    double vtaps64[MH_SEPFILTER_MAX_TAPS], htaps64[MH_SEPFILTER_MAX_TAPS];
    int vtaps_on_device, htaps_on_device;
    const void *in;
    void *out;
    size_t values; /* batch * depth * rows * cols * channels */
} mh_sepfilter_args;

/* mh_rank's call: the description (the caller's footprint and structure, read during the call;
 * depth and kdepth at least 1, a volume's planes folded into the batch where the footprint has
 * one plane, so that depth > 1 only with kdepth > 1), the footprint's set elements counted, and
 * the buffers. */
typedef struct mh_rank_args {
    mh_rank_desc d;
    size_t count;  /* set elements of the footprint */
    size_t values; /* batch * depth * rows * cols * channels */
    const void *in;
    void *out;
} mh_rank_args;

/* One call's arguments, checked for sizes; config picks a tuning instantiation (bench
 * --tune), 0 being the measured default. */
typedef struct mh_args {
    mh_op op;
    int config;
    union {
        mh_conv1d_args conv1d;
        mh_conv2d_args conv2d;
        mh_transpose_args transpose;
        mh_matmul_args matmul;
        mh_reduce_args reduce;
        mh_histogram_args histogram;
        mh_coalescing_args coalescing;
        mh_sepfilter_args sepfilter;
        mh_rank_args rank;
    };
} mh_args;

/* ---- registry and dispatch (src/core/registry.c, src/core/dispatch.c) -------------------- */

/* A registry row: every variant of every op. */
typedef struct mh_row {
    mh_variant_info info; /* first member: a variant's info points at its row */
    /* 1 when the variant can run the problem; else 0 and a reason in why. */
    int (*supports)(const mh_context *ctx, const mh_args *a, char *why, size_t len);
    mh_status (*run)(mh_context *ctx, const mh_args *a);
    /* NULL-terminated names of the instantiations bench --tune times; [0] is the default. */
    const char *const *configs;
    /* 1 when run() takes a problem of parts (a conv1d batch) whole; other rows run part by part. */
    int batched;
    /* The vendor library run() calls: opened before supports() is asked; where it cannot be,
     * the row refuses with the loader's reason. */
    mh_vendor_lib needs;
    /* Rows whose configuration depends on the problem: the one the args' configuration runs as
     * (the name auto's rule picks for "auto"), for `explain` and the tests. NULL elsewhere. */
    const char *(*config_for)(const mh_context *ctx, const mh_args *a);
    /* MH_ROW_* flags: what auto, the tests and the bench must know of the row (the calls it
     * takes are the public MH_TAKES_* bits, mh_variant_takes) */
    unsigned flags;
} mh_row;

enum {
    /* wrong by design, kept to show a race (histogram/racy): never auto's; its wrong results are
     * reported, not failed */
    MH_ROW_DEMONSTRATION = 1u << 0,
    /* computes in reduced precision on purpose (TF32 products): never auto's; judged against the
     * TF32 bound */
    MH_ROW_REDUCED_PRECISION = 1u << 1,
    /* reads and writes conv2d's typed images (mh_conv2d_typed): other rows refuse such calls */
    MH_ROW_IMAGE_DTYPES = MH_TAKES_IMAGE_DTYPES,
    /* takes conv2d filters past MH_CONV2D_DIRECT_MAX_K a side: other rows refuse them */
    MH_ROW_LARGE_FILTERS = MH_TAKES_LARGE_FILTERS,
    /* takes every reduction (kinds, dtypes, axes), not only the whole-array float32 sum */
    MH_ROW_ANY_REDUCTION = MH_TAKES_ANY_REDUCTION,
    /* takes weighted histograms (mh_histogram_weighted); WEIGHTED_ONLY: and nothing else */
    MH_ROW_WEIGHTS = MH_TAKES_WEIGHTS,
    MH_ROW_WEIGHTED_ONLY = 1u << 6,
    /* its error is bounded normwise (FFT rounding spread over a tile or segment), not per
     * output: auto skips it under MH_PRECISION_PER_ELEMENT */
    MH_ROW_NORMWISE = 1u << 7,
    /* computes float64 calls (mh_matmul_typed's, mh_conv2d_float64's): other rows refuse them */
    MH_ROW_FLOAT64 = MH_TAKES_FLOAT64,
    /* computes matmul's float16 calls (float16 in and out, FP32 accumulation): other rows refuse them */
    MH_ROW_FLOAT16 = MH_TAKES_FLOAT16,
    /* computes matmul's bfloat16 calls (bfloat16 in and out, FP32 accumulation): other rows refuse them */
    MH_ROW_BFLOAT16 = MH_TAKES_BFLOAT16,
    /* applies conv1d's and conv2d's boundary modes (their bordered calls): other rows pad with
     * zeros only and refuse them (mh_zero_pad_only names the rows flagged) */
    MH_ROW_BORDER_MODES = MH_TAKES_BORDER_MODES,
    /* adds sepfilter's float64 products in scipy's order (MH_SEPFILTER_SUMS_SCIPY): other rows
     * refuse such calls */
    MH_ROW_SCIPY_SUMS = MH_TAKES_SCIPY_SUMS,
    /* takes rank's footprints over three axes (mh_rank_desc's kdepth > 1): other rows refuse them */
    MH_ROW_VOLUMES = MH_TAKES_VOLUMES,
    /* reads mh_conv2d_mode_reversed's filter, or sepfilter's reversed device taps, from its end
     * itself: the op makes no reversed copy for it (conv2d's and sepfilter's prepare) */
    MH_ROW_READS_REVERSED = 1u << 13,
};

/* The names of op's rows whose flags hold every bit of `flags` ("fft-os, cudnn and cpu-omp"),
 * for texts that list the rows taking a problem; "none" where no row does. */
const char *mh_rows_with(mh_op op, unsigned flags, char *buf, size_t len);

/* Each backend file exports its rows as one group: MH_ROW_GROUP(mh_conv1d_cpu_rows, rows). */
typedef const mh_row *(*mh_row_group)(size_t *count);
#ifdef __cplusplus
#define MH_EXTERN_C extern "C"
#else
#define MH_EXTERN_C
#endif
#define MH_ROW_GROUP(name, rows)                                                                \
    MH_EXTERN_C const mh_row *name(size_t *count)                                               \
    {                                                                                           \
        *count = sizeof rows / sizeof rows[0];                                                  \
        return rows;                                                                            \
    }

/* supports() of variants that take every valid problem (the CPU rows). */
int mh_supports_any(const mh_context *ctx, const mh_args *a, char *why, size_t len);

/* What an op gives the dispatcher (defined in src/api/<op>.c). */
typedef struct mh_op_table {
    mh_op op;
    const char *name;
    const mh_row_group *groups; /* in ladder order: CPU, the seeds' CUDA rungs, ours, vendor */
    size_t ngroups;
    /* auto's candidates for this problem, best first, NULL-terminated short names; where why is
     * not NULL (explain, on a CUDA context), the rule that chose them with the device's numbers,
     * as one or more lines of text, from the same branch (an op whose order is the same for every
     * problem leaves why untouched) */
    const char *const *(*auto_order)(mh_context *ctx, const mh_args *a, char *why, size_t len);
    /* pointer kinds, allocation sizes and overlap of the call's buffers */
    mh_status (*check_buffers)(mh_context *ctx, const mh_args *a);
    /* "n = 1000, k = 31, pad = same": how refusals and explanations name the problem */
    void (*describe)(const mh_args *a, char *buf, size_t len);
    /* Problems made of independent parts (a conv1d batch's signals): how many, and part i as a
     * problem of its own, for the rows without a batched kernel (mh_row.batched). NULL: one. */
    size_t (*parts)(const mh_args *a);
    mh_args (*part)(const mh_args *a, size_t i);
    /* What the op asks of every row before the row's own supports() (conv2d: a typed call
     * needs a row that converts); NULL: nothing. */
    int (*row_accepts)(const mh_row *row, const mh_args *a, char *why, size_t len);
    /* The call as `row` runs it, made under the context's lock just before (conv2d: a reversed
     * filter's copy, in the context's memory); NULL: the call as given. */
    mh_status (*prepare)(mh_context *ctx, const mh_row *row, const mh_args *a, mh_args *prepared);
} mh_op_table;

extern const mh_op_table mh_conv1d_table;
extern const mh_op_table mh_conv2d_table;
extern const mh_op_table mh_transpose_table;
extern const mh_op_table mh_coalescing_table;
extern const mh_op_table mh_matmul_table;
extern const mh_op_table mh_reduce_table;
extern const mh_op_table mh_histogram_table;
extern const mh_op_table mh_sepfilter_table;
extern const mh_op_table mh_rank_table;
const mh_op_table *mh_op_table_of(mh_op op); /* NULL for an unknown op */

size_t mh_row_count(mh_op op);
const mh_row *mh_row_at(mh_op op, size_t i);
/* The row of a variant's info (every info is the first member of its row). */
const mh_row *mh_row_of(const mh_variant_info *info);
/* Finds a variant of `op` by "op/name" or "name". */
const mh_variant_info *mh_variant_lookup(mh_op op, const char *name);

/* The public call's path: resolve the variant (NULL or "auto" picks), check it accepts the
 * problem, check the buffers, run; auto moves to its next candidate on out-of-memory. */
mh_status mh_dispatch(mh_context *ctx, const char *variant, const mh_args *a);
/* mh_dispatch's work past the buffer checks and the resolution (row, from mh_resolve), for a
 * public call made of several (mh_sepfilter_sum), which holds ctx's lock and its device across
 * all of them: run, auto's next candidate on out-of-memory. */
mh_status mh_dispatch_resolved(mh_context *ctx, const char *variant, const mh_args *a, const mh_row *row);
/* Resolution alone (sizes only, no buffers): what _select and _supports answer. */
mh_status mh_resolve(mh_context *ctx, const char *variant, const mh_args *a, const mh_row **row);
/* auto's candidates for a, the rule and the numbers that ordered them, and each candidate's
 * answer (runs, supports, refuses and why), as text (memhier explain, mh_context_explanation). */
void mh_explain(mh_context *ctx, const mh_args *a, char *buf, size_t len);
/* The row `auto` picks for sizes alone, and whether a variant accepts them. */
mh_status mh_select(mh_context *ctx, const mh_args *a, const mh_variant_info **chosen);
mh_status mh_supports(mh_context *ctx, const char *variant, const mh_args *a);
/* One row on already checked arguments, on the context's device: bench and tests. */
mh_status mh_run_row(mh_context *ctx, const mh_row *row, const mh_args *a);

/* ---- conv1d --------------------------------------------------------------------------- */

const mh_row *mh_conv1d_cpu_rows(size_t *count);
const mh_row *mh_conv1d_cuda_rows(size_t *count);
const mh_row *mh_conv1d_regtile_rows(size_t *count);
const mh_row *mh_conv1d_tc_rows(size_t *count);
const mh_row *mh_conv1d_cudnn_rows(size_t *count);
const mh_row *mh_conv1d_cufft_rows(size_t *count);
const mh_row *mh_conv1d_fft_os_rows(size_t *count);
const mh_row *mh_conv1d_fft_fused_rows(size_t *count);

/* Fills a from the public call's arguments; validates sizes only. */
mh_status mh_conv1d_args_init(mh_context *ctx, mh_args *a, const float *in, size_t n, const float *mask,
                              size_t k, mh_pad pad, float *out);
mh_status mh_conv1d_batched_args_init(mh_context *ctx, mh_args *a, const float *in, size_t batch, size_t n,
                                      const float *mask, size_t mask_stride, size_t k, mh_pad pad, float *out);
/* mh_conv1d_mode's arguments: n outputs a signal, the mask's anchor at k / 2 + origin. */
mh_status mh_conv1d_mode_args_init(mh_context *ctx, mh_args *a, const float *in, size_t batch, size_t n,
                                   const float *mask, size_t mask_stride, size_t k, mh_mode mode, float cval,
                                   long long origin, float *out);
/* 1 for zero-padded calls; for a bordered one (mh_conv1d_mode) 0, with the reason in why. */
int mh_conv1d_zero_pad_only(const mh_conv1d_args *a, char *why, size_t len);
/* 0 (the reason in why) for a constant border of NaN or Inf, which an FFT row would spread over
 * whole segments instead of the windows that meet it. */
int mh_conv1d_finite_border(const mh_conv1d_args *a, char *why, size_t len);
/* Signal b of a batch as a one-signal problem (the per-signal loop of unbatched rows). */
mh_conv1d_args mh_conv1d_signal(const mh_conv1d_args *a, size_t b);

/* Double-precision value of output i and the sum of |terms| (for error bounds). */
void mh_conv1d_reference_at(const float *in, size_t n, const float *mask, size_t k,
                            size_t lpad, size_t i, double *value, double *abs_sum);
/* The same for a bordered call: every tap meets a value, past the ends the mode's (or cval). */
void mh_conv1d_reference_mode_at(const float *in, size_t n, const float *mask, size_t k, size_t lpad, mh_mode mode,
                                 float cval, size_t i, double *value, double *abs_sum);

/* ---- conv2d --------------------------------------------------------------------------- */

const mh_row *mh_conv2d_cpu_rows(size_t *count);
/* The n floats at `values` (device memory) reversed into `out` (device memory), queued on the
 * context's stream (src/cuda/conv2d.cu). */
mh_status mh_reverse_cuda(mh_context *ctx, const float *values, size_t n, float *out);
/* The n values of filter reversed, into the context's copy (its MH_SLOT_REVERSED_FILTER buffer,
 * written on the context's stream on a GPU). *copy is valid for the call in progress. */
mh_status mh_conv2d_reverse_cpu(mh_context *ctx, const float *filter, size_t n, const float **copy);
mh_status mh_conv2d_reverse_cuda(mh_context *ctx, const float *filter, size_t n, const float **copy);
const mh_row *mh_conv2d_cuda_rows(size_t *count);
const mh_row *mh_conv2d_texture_rows(size_t *count);
const mh_row *mh_conv2d_regtile_rows(size_t *count);
const mh_row *mh_conv2d_tc_rows(size_t *count);
/* Whether conv2d/tc is expected to beat the direct rows on this shape by the device's rules
 * (conv2d_tc.cu); why (may be NULL) gets the numbers that decided. */
int mh_conv2d_tc_favoured(const mh_auto_rules *r, const mh_conv2d_args *a, char *why, size_t len);
const mh_row *mh_conv2d_stream_rows(size_t *count);
const mh_row *mh_conv2d_walk_rows(size_t *count);
const mh_row *mh_conv2d_tiles_rows(size_t *count);
const mh_row *mh_conv2d_float64_rows(size_t *count);
const mh_row *mh_conv2d_separable_rows(size_t *count);
const mh_row *mh_conv2d_cudnn_rows(size_t *count);
const mh_row *mh_conv2d_npp_rows(size_t *count);
const mh_row *mh_conv2d_fft_os_rows(size_t *count);
const mh_row *mh_conv2d_fft_tile_rows(size_t *count);
const mh_row *mh_conv2d_fft_3pass_rows(size_t *count);

mh_status mh_conv2d_args_init(mh_context *ctx, mh_args *a, const float *in, size_t rows, size_t cols,
                              const float *filter, size_t krows, size_t kcols, mh_pad pad, float *out);
/* mh_conv2d_mode's arguments: out as large as in, the filter's anchor at k / 2 + origin. */
mh_status mh_conv2d_mode_args_init(mh_context *ctx, mh_args *a, const float *in, size_t rows, size_t cols,
                                   const float *filter, size_t krows, size_t kcols, mh_mode mode, float cval,
                                   long long origin_r, long long origin_c, float *out);
/* mh_conv2d_mode_batched's: a stack of `batch` images. */
mh_status mh_conv2d_mode_batched_args_init(mh_context *ctx, mh_args *a, const float *in, size_t batch, size_t rows,
                                           size_t cols, const float *filter, size_t krows, size_t kcols, mh_mode mode,
                                           float cval, long long origin_r, long long origin_c, float *out);
/* 1 for zero-padded calls; for a bordered one (mh_conv2d_mode) 0, with the reason in why. */
int mh_conv2d_zero_pad_only(const mh_conv2d_args *a, char *why, size_t len);

/* Double-precision value of output (r, c) and the sum of |terms|. */
void mh_conv2d_reference_at(const mh_conv2d_args *a, const float *in, const float *filter, size_t r, size_t c,
                            double *value, double *abs_sum);

/* A filter as r terms, f ~ sum_t u_t v_t^T (u_t: krows, v_t: kcols), found by its SVD in double
 * (src/core/lowrank.c): the smallest r whose float32 factors keep every tap's error, the
 * passes' rounding included, within its share of the per-element bound (mh_sum_rtol), so that
 * no output of any image moves past that bound. conv2d/separable takes r = 1, conv2d/lowrank
 * up to MH_LOWRANK_MAX_RANK. */
#define MH_LOWRANK_MAX_RANK 4
typedef struct mh_lowrank_fit {
    int rank;              /* the rank found, or -1 */
    int row, col;          /* the tap that fits worst (at the largest rank tried, where none fits) */
    double tap, fitted;    /* its value and what the factors give */
    double ratio;          /* its error over its share of the bound (> 1: misses; INFINITY: a zero or non-finite tap) */
    double sigma1, dropped; /* the largest singular value and the first one left out */
} mh_lowrank_fit;
/* Returns r and writes u[t * krows + i], v[t * kcols + j] for t < r (r <= max_rank); -1 where
 * no rank up to max_rank fits (or a tap is not finite), with the worst tap in *fit. */
int mh_lowrank_factor(const float *filter, int krows, int kcols, int max_rank, float *u, float *v,
                      mh_lowrank_fit *fit);
/* conv2d/lowrank has an instance of the filter's own size for these sides and terms (its loops'
 * bound known at compile time: square odd filters from 17 to 31 of one or two terms), which runs
 * such filters faster an FMA than the instances bounded at run time. */
int mh_conv2d_lowrank_own_instance(int krows, int kcols, int terms);

/* dst[0 .. n) = the host values src[0 .. n), queued on `stream` in kernel parameters (no pinned
 * staging, no wait for the stream); a cudaError_t as int (src/cuda/fill.cu). */
int mh_cuda_upload_by_params(float *dst, const float *src, size_t n, void *stream);

/* conv2d/fft-tile's spectrum of a krows x kcols filter on the device (1 to
 * MH_CONV2D_DIRECT_MAX_K a side) into `spectrum` (mh_conv2d_fft_tile_spectrum_bytes), queued on
 * `stream`; a cudaError_t as int (src/cuda/conv2d_fft_tile.cu). */
size_t mh_conv2d_fft_tile_spectrum_bytes(void);
int mh_conv2d_fft_tile_spectrum(void *spectrum, const float *filter, int krows, int kcols, void *stream);

/* conv2d/fft-3pass's spectrum of a krows x kcols filter on the device (any size up to
 * MH_CONV2D_MAX_K) into `spectrum` (mh_conv2d_fft_3pass_spectrum_bytes), through `scratch`
 * (mh_conv2d_fft_3pass_scratch_bytes, free again when the stream passes the call), queued on
 * `stream`; a cudaError_t as int (src/cuda/conv2d_fft_3pass.cu). */
size_t mh_conv2d_fft_3pass_spectrum_bytes(void);
size_t mh_conv2d_fft_3pass_scratch_bytes(void);
int mh_conv2d_fft_3pass_spectrum(void *spectrum, void *scratch, const float *filter, int krows, int kcols,
                                 void *stream);

/* conv2d/tc's Toeplitz panels of a krows x kcols filter on the device (1 to
 * MH_CONV2D_DIRECT_MAX_K a side) for auto's configuration under rules r: their size, and the Q
 * they are made for in *q; made into `panels`, queued on `stream` (a cudaError_t as int). For a
 * compute capability 9.0 device only (src/cuda/conv2d_tc.cu, built for sm_90a). */
size_t mh_conv2d_tc_panels_bytes(const mh_auto_rules *r, int krows, int kcols, int *q);
int mh_conv2d_tc_panels(const mh_auto_rules *r, void *panels, const float *filter, int krows, int kcols, void *stream);

/* mh_conv2d_plan_create's analysis of a filter: its copy where the context computes, and its
 * rank and factors (mh_lowrank_factor up to MH_LOWRANK_MAX_RANK; rank -1 where it needs more or
 * is larger than MH_CONV2D_DIRECT_MAX_K a side). */
struct mh_conv2d_plan {
    int device; /* the context's device, or MH_CPU */
    int krows, kcols;
    float *host_filter; /* krows x kcols, malloc'd */
    float *filter;  /* on that device: stream-ordered (cudaMallocAsync), filled by mh_cuda_upload_by_params */
    void *spectrum; /* on a GPU, filters fft-tile takes: its spectrum, made after the copy */
    void *large_spectrum; /* on a GPU, filters past MH_CONV2D_DIRECT_MAX_K: fft-3pass's */
    void *tc_panels; /* on a compute capability 9.0 GPU, filters tc takes: its Toeplitz panels for Q = tc_q */
    int tc_q;
    void *ready;    /* cudaEvent_t recorded after the device copy; planned calls' streams wait for it */
    int rank;
    float u[MH_LOWRANK_MAX_RANK * MH_CONV2D_DIRECT_MAX_K], v[MH_LOWRANK_MAX_RANK * MH_CONV2D_DIRECT_MAX_K];
    mh_lowrank_fit fit;
};

/* ---- sepfilter ----------------------------------------------------------------------- */

const mh_row *mh_sepfilter_cpu_rows(size_t *count);
const mh_row *mh_sepfilter_cuda_rows(size_t *count);
const mh_row *mh_sepfilter_lines_rows(size_t *count);
/* 1 where an axis is the single host tap 1 (the other axis of a filter of one axis, as
 * memhier.ndimage describes it): its pass copies its input, cast to the output's type. */
int mh_sepfilter_is_identity(const mh_sepfilter_axis *x, int on_device);
/* The order a GPU row runs, past mh_sepfilter_order's three: a filter along the rows alone, whose
 * vertical pass would change no value, runs its horizontal pass alone. */
enum { MH_SEPFILTER_HORIZONTAL_ONLY = MH_SEPFILTER_SUM + 1 };
int mh_sepfilter_run_order(const mh_sepfilter_args *a);
/* An axis as a GPU kernel takes it: its anchor (ntaps / 2 + origin), and its taps' device address,
 * or NULL with the host taps copied into taps (ntaps of them) to travel by value. */
int mh_sepfilter_anchor(const mh_sepfilter_axis *x);
/* 1 for a call of float32 images of one channel into float32 (walk's and tiles'), else 0 with why
 * saying so and naming the call's types and channels. */
int mh_sepfilter_float32_gray(const mh_sepfilter_desc *d, char *why, size_t len);
const float *mh_sepfilter_kernel_taps(const mh_sepfilter_axis *x, int on_device, float *taps);
/* 1 where the passes run one after the other and the second is the identity (a filter of one
 * axis): a float64 call then runs the first alone, its cast values stored once (an int64 past
 * 2^53 read back as float64 and stored again would not be itself). */
int mh_sepfilter_second_is_identity(const mh_sepfilter_args *a);
/* Whether a call computes in float64 (its in_type or out_type wide: mh_dtype_is_wide). */
int mh_sepfilter_in_double(const mh_sepfilter_desc *d);
/* A float64 call's taps for a kernel: NULL with its float64 taps copied into taps, or the
 * device's float32 taps, which the kernel widens as it reads them. */
const float *mh_sepfilter_kernel_taps64(const mh_sepfilter_axis *x, double *taps);
const mh_row *mh_sepfilter_walk_rows(size_t *count);
const mh_row *mh_sepfilter_tiles_rows(size_t *count);
const mh_row *mh_sepfilter_fused64_rows(size_t *count);
mh_status mh_sepfilter_args_init(mh_context *ctx, mh_args *a, const mh_sepfilter_desc *d, const void *in, void *out);
/* out[i] = cast(out[i] + term[i]) for the `values` elements of two arrays of type t (scipy's
 * `output += term`: the sum of two stored values in float32, stored with sepfilter's cast; a wide
 * type in its own arithmetic, mh_add_wide). */
mh_status mh_sepfilter_add_cpu(mh_context *ctx, void *out, const void *term, size_t values, mh_dtype t);
mh_status mh_sepfilter_add_cuda(mh_context *ctx, void *out, const void *term, size_t values, mh_dtype t);
/* Whether two terms of a sum that resolved to rows ra and rb run as one launch of sepfilter/walk
 * (mh_sepfilter_walk_pair: a's outputs plus b's, the bits of the terms added): both rows walk's,
 * both terms of one geometry (taps' counts, origins, modes, divisors, cval) in the vertical-first
 * order, their taps alone differing. */
int mh_sepfilter_walk_pairs(const mh_row *ra, const mh_row *rb, const mh_sepfilter_args *a, const mh_sepfilter_args *b);
mh_status mh_sepfilter_walk_pair(mh_context *ctx, const mh_sepfilter_args *a, const mh_sepfilter_args *b);

/* ---- rank ---------------------------------------------------------------------------- */

const mh_row *mh_rank_cpu_rows(size_t *count);
const mh_row *mh_rank_cuda_rows(size_t *count);
const mh_row *mh_rank_network_rows(size_t *count);
const mh_row *mh_rank_median_rows(size_t *count);
const mh_row *mh_rank_histogram_rows(size_t *count);
mh_status mh_rank_args_init(mh_context *ctx, mh_args *a, const mh_rank_desc *d, const void *in, void *out);

/* ---- transpose and coalescing -------------------------------------------------------- */

const mh_row *mh_transpose_cpu_rows(size_t *count);
const mh_row *mh_transpose_cuda_rows(size_t *count);
const mh_row *mh_transpose_cublas_rows(size_t *count);
const mh_row *mh_coalescing_cuda_rows(size_t *count);

mh_status mh_transpose_args_init(mh_context *ctx, mh_args *a, const float *in, size_t rows, size_t cols, float *out);
/* Buffer lengths the coalescing kernels touch: in and out hold this many floats. */
size_t mh_coalescing_span(size_t n, mh_access_pattern pattern, int param);

/* ---- matmul ------------------------------------------------------------------------- */

const mh_row *mh_matmul_cpu_rows(size_t *count);
const mh_row *mh_matmul_cuda_rows(size_t *count);
const mh_row *mh_matmul_regtile_rows(size_t *count);
const mh_row *mh_matmul_tensor_rows(size_t *count);
const mh_row *mh_matmul_wgmma_rows(size_t *count);
const mh_row *mh_matmul_cublas_rows(size_t *count);

mh_status mh_matmul_args_init(mh_context *ctx, mh_args *a, const float *ma, const float *mb, float *mc, size_t m,
                              size_t k, size_t n);
/* c[i][j] in double and the sum of |terms| (the reference and its condition). */
void mh_matmul_reference_at(const float *a, const float *b, size_t k, size_t n, size_t i, size_t j, double *ref,
                            double *mag);

/* ---- reduce ------------------------------------------------------------------------- */

const mh_row *mh_reduce_cpu_rows(size_t *count);
const mh_row *mh_reduce_cuda_rows(size_t *count);
const mh_row *mh_reduce_axis_rows(size_t *count);
const mh_row *mh_reduce_cub_rows(size_t *count);

mh_status mh_reduce_args_init(mh_context *ctx, mh_args *a, const float *in, size_t n, float *sum);
mh_status mh_reduce_axis_args_init(mh_context *ctx, mh_args *a, const void *in, mh_dtype dtype, size_t outer, size_t len,
                                   size_t inner, mh_reduce_kind kind, void *out);
/* Bytes of one result of a reduction (its dtype by kind: include/memhier.h). */
size_t mh_reduce_out_size(mh_dtype dtype, mh_reduce_kind kind);
/* The sum in double and the sum of |in| (the reference and its condition). */
void mh_reduce_reference(const float *in, size_t n, double *sum, double *mag);

/* ---- histogram ------------------------------------------------------------------------ */

const mh_row *mh_histogram_cpu_rows(size_t *count);
const mh_row *mh_histogram_cuda_rows(size_t *count);
const mh_row *mh_histogram_weighted_rows(size_t *count);
const mh_row *mh_histogram_cub_rows(size_t *count);

/* Integer values into bins of width from lo to hi; kind: MH_HISTOGRAM_INT32, MH_HISTOGRAM_BYTES
 * (0 <= lo <= hi <= 255) or MH_HISTOGRAM_INT64. */
mh_status mh_histogram_args_init(mh_context *ctx, mh_args *a, const void *in, int kind, size_t n, int lo, int hi,
                                 int width, unsigned long long *bins, unsigned long long *outside);
/* Bytes of one of the call's values. */
static inline size_t mh_histogram_value_bytes(const mh_histogram_args *a)
{
    return a->bytes ? 1 : a->int64 ? 8 : 4;
}
/* Float32 values into num_bins bins: uniform over [lo, hi] (edges NULL) or the num_bins + 1
 * edges given (in the context's memory). */
mh_status mh_histogram_float_args_init(mh_context *ctx, mh_args *a, const float *in, size_t n, int num_bins, double lo,
                                       double hi, const float *edges, unsigned long long *bins,
                                       unsigned long long *outside);
/* The bin of value v, or -1 outside [lo, hi]. */
static inline int mh_histogram_bin(long long v, int lo, int hi, int width)
{
    return v < lo || v > hi ? -1 : (int)((v - lo) / width);
}
/* The bin of in[i] on the host, or -1 where it is not counted. */
static inline int mh_histogram_bin_at(const mh_histogram_args *a, size_t i)
{
    if (a->floats) {
        const int b = mh_hist_float_bin(&a->f, a->num_bins, ((const float *)a->in)[i]);
        return b < a->num_bins ? b : -1;
    }
    const long long v = a->bytes   ? ((const uint8_t *)a->in)[i]
                        : a->int64 ? ((const int64_t *)a->in)[i]
                                   : ((const int32_t *)a->in)[i];
    return mh_histogram_bin(v, a->lo, a->hi, a->width);
}
/* The call's uniform edges into edges_out on the host (nothing where edges_out is NULL). */
void mh_histogram_write_edges(const mh_histogram_args *a);
/* The start of an unweighted call on a GPU, one launch on the context's stream: bins and
 * outside zeroed, edges_out written (src/cuda/histogram.cu; the CUB rows' start too). */
mh_status mh_histogram_cuda_start(mh_context *ctx, const mh_histogram_args *a);
/* Exact counts on the host: bins[0 .. num_bins) and *outside. */
void mh_histogram_reference(const mh_histogram_args *a, unsigned long long *bins, unsigned long long *outside);
/* Weighted sums on the host, in index order, in double: sums[0 .. num_bins) and *outside. */
void mh_histogram_weighted_reference(const mh_histogram_args *a, double *sums, double *outside);
/* a made weighted: the args of mh_histogram_weighted (kind as there). */
mh_status mh_histogram_weighted_args_init(mh_context *ctx, mh_args *args, int kind, const void *in, const float *weights,
                                          size_t n, int num_bins, double lo, double hi, const float *edges, double *sums,
                                          double *outside);

/* The context's cuBLAS handle (created on first use, on the context's stream, FP32 math:
 * no TF32), as a cublasHandle_t. src/adapters/cublas_handle.c */
mh_status mh_cublas_handle(mh_context *ctx, void **handle);

/* ---- CPU facts and ceilings (src/cpu/ceilings.c) ----------------------------------- */
mh_status mh_cpu_device_info(mh_device_info *info);
mh_status mh_cpu_measure_ceilings(mh_context *ctx, mh_ceilings *c);
/* GPU ceilings (src/cuda/ceilings.cu). */
mh_status mh_cuda_measure_ceilings(mh_context *ctx, mh_ceilings *c);

#ifdef __cplusplus
}
#endif

#endif /* MH_INTERNAL_H */

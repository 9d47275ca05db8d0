/* Internal interfaces shared by the op front-ends, the backends, the CLI and the tests.
 * Nothing here is installed; the public API is include/memhier.h alone. */
#ifndef MH_INTERNAL_H
#define MH_INTERNAL_H

#include "memhier.h"

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
typedef enum mh_slot_id { MH_SLOT_CUDNN = 0, MH_SLOT_CUFFT_CONV1D, MH_SLOT_COUNT } mh_slot_id;

typedef struct mh_slot {
    void *data;
    void (*destroy)(void *data);
} mh_slot;

struct mh_context {
    int device;      /* CUDA ordinal or MH_CPU */
    void *stream;    /* cudaStream_t; NULL is the legacy default stream */
    void *workspace; /* device scratch, grown on demand, reused between calls */
    size_t workspace_bytes;
    mh_slot slots[MH_SLOT_COUNT];
    char error[1024];
};

/* Records the detail of a failure on ctx (if not NULL) and returns s. */
mh_status mh_fail(mh_context *ctx, mh_status s, const char *fmt, ...) MH_PRINTF(3, 4);
void mh_clear_error(mh_context *ctx);

int mh_is_cpu(const mh_context *ctx);

/* Device scratch of at least `bytes`, valid until the next call on this context. */
mh_status mh_workspace(mh_context *ctx, size_t bytes, void **ptr);

/* Makes ctx's device current for the duration of a call and restores the caller's. */
typedef struct mh_device_guard {
    int previous;
    int switched;
} mh_device_guard;
mh_status mh_device_enter(mh_context *ctx, mh_device_guard *guard);
void mh_device_leave(const mh_device_guard *guard);

/* Number of CUDA devices (0 when the runtime has none or no driver); cached. */
int mh_cuda_device_count(void);

/* Checks that p is usable as `bytes` bytes by ctx: host memory for a CPU context, memory
 * of ctx's device for a CUDA context, and (where the driver can tell) that the allocation
 * holds `bytes` from p onwards. The error names `what`. */
mh_status mh_check_buffer(mh_context *ctx, const char *what, const void *p, size_t bytes);
/* Refuses overlapping [a, a+abytes) and [b, b+bbytes). */
mh_status mh_check_disjoint(mh_context *ctx, const char *aname, const void *a, size_t abytes,
                            const char *bname, const void *b, size_t bbytes);
/* a * b into *r; 0 on overflow. */
int mh_mul_ok(size_t a, size_t b, size_t *r);

/* ---- registry ---------------------------------------------------------------------- */

/* How an op exposes its table to the generic registry. */
typedef struct mh_op_table {
    mh_op op;
    const char *name;
    size_t (*count)(void);
    const mh_variant_info *(*info_at)(size_t i);
} mh_op_table;

extern const mh_op_table mh_conv1d_table;

/* Finds a variant of `op` by "op/name" or "name"; NULL/"auto" are the caller's job. */
const mh_variant_info *mh_variant_lookup(mh_op op, const char *name);

/* ---- conv1d ------------------------------------------------------------------------- */

typedef struct mh_conv1d_args {
    const float *in;
    size_t n;
    const float *mask;
    size_t k;
    mh_pad pad;
    size_t lpad;  /* zeros before in[0]: 0, (k-1)/2 or k-1 */
    size_t out_n; /* outputs: n-k+1, n or n+k-1 */
    float *out;
    int config; /* tuning configuration, 0 = the measured default (bench --tune) */
} mh_conv1d_args;

typedef struct mh_conv1d_row {
    mh_variant_info info;
    /* 1 when the variant can run the problem; else 0 and a reason in why. */
    int (*supports)(const mh_context *ctx, const mh_conv1d_args *a, char *why, size_t len);
    mh_status (*run)(mh_context *ctx, const mh_conv1d_args *a);
    /* NULL-terminated names of the instantiations bench --tune times; [0] is the default. */
    const char *const *configs;
} mh_conv1d_row;

/* Each backend file exports its rows; the table in src/api/conv1d.c lists the groups. */
const mh_conv1d_row *mh_conv1d_cpu_rows(size_t *count);
const mh_conv1d_row *mh_conv1d_cuda_rows(size_t *count);
const mh_conv1d_row *mh_conv1d_regtile_rows(size_t *count);
const mh_conv1d_row *mh_conv1d_cudnn_rows(size_t *count);
const mh_conv1d_row *mh_conv1d_cufft_rows(size_t *count);

size_t mh_conv1d_row_count(void);
const mh_conv1d_row *mh_conv1d_row_at(size_t i);
const mh_conv1d_row *mh_conv1d_row_of(const mh_variant_info *info);
/* Fills args from the public call's arguments; validates sizes only. */
mh_status mh_conv1d_args_init(mh_context *ctx, mh_conv1d_args *a, const float *in, size_t n,
                              const float *mask, size_t k, mh_pad pad, float *out);
/* Runs one row on checked args (no pointer checks): what bench and tests call. */
mh_status mh_conv1d_run_row(mh_context *ctx, const mh_conv1d_row *row, const mh_conv1d_args *a);

/* Double-precision value of output i and the sum of |terms| (for error bounds). */
void mh_conv1d_reference_at(const float *in, size_t n, const float *mask, size_t k,
                            size_t lpad, size_t i, double *value, double *abs_sum);

/* ---- CPU facts and ceilings (src/cpu/ceilings.c) ----------------------------------- */
mh_status mh_cpu_device_info(mh_device_info *info);
mh_status mh_cpu_measure_ceilings(mh_context *ctx, mh_ceilings *c);
/* GPU ceilings (src/cuda/ceilings.cu). */
mh_status mh_cuda_measure_ceilings(mh_context *ctx, mh_ceilings *c);

#ifdef __cplusplus
}
#endif

#endif /* MH_INTERNAL_H */

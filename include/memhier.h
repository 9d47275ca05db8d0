/* memhier: GPU kernels that climb the CUDA memory hierarchy, behind one plain C11 API.
 *
 * Every operation is a ladder of variants (CPU reference and OpenMP, the seeds' CUDA
 * kernels, ours, and the vendor library a user would otherwise pick), listed in one
 * registry that this API, the `memhier` CLI, the tests and the benchmark share.
 *
 * Memory: a CUDA context takes device pointers (cudaMalloc/cudaMallocManaged), a CPU
 * context (MH_CPU) takes host pointers. The wrong kind is refused, never dereferenced.
 * Calls on a CUDA context are asynchronous on the context's stream, like cuDNN's: results
 * are ready once the stream is synchronized (mh_context_synchronize). Argument errors are
 * reported before anything is launched or written.
 *
 * The library never prints, exits or aborts: each call returns a status, and
 * mh_context_error() holds the detail (which argument, which value, why).
 *
 * Threads: a context may be shared between threads; its calls are serialized by a lock held
 * while a call checks its arguments and queues its work (never while the GPU runs), and the
 * error detail is kept per thread. Its stream is one setting for every thread: threads that
 * want streams of their own use a context each.
 *
 * Streams: calls on a context may alternate between streams with no synchronization between
 * them. The scratch memory, FFT plans and vendor handles a context keeps are shared by its
 * calls; a call that uses them after one on another stream makes its stream wait for that one
 * (an event, on the device), so nothing is read while another stream still writes it.
 *
 * Waiting: no call waits for the context's stream (or the device) except
 * mh_context_synchronize, mh_upload and mh_download (which copy synchronously), conv2d's
 * separable and lowrank variants called without a plan (they read the filter back to factor
 * it), a plan made of device memory, conv2d's texture variant when its image changes (the old
 * texture object may still be read), and the first calls into the vendor libraries: a call
 * that makes a cuFFT plan (the fft-os and cufft rows on a shape whose plan the context does not
 * keep; it keeps the 16 last used) waits for the device, and so does a cuBLAS or cuDNN call that
 * launches one of their kernels for the first time in the process (they load their kernels
 * lazily: a cuBLAS call on a new shape may pick a new kernel and wait again; NPP likewise).
 * `auto` waits only there: conv1d's auto takes fft-os for masks past conv1d_fft_os_above_k taps
 * (4097 on the H100), matmul's takes cuBLAS below the work tf32x3-wgmma is favoured at.
 *
 * Loading: mh_context_create loads every kernel of the library on its device, once per process
 * and device, and may wait for the device while it does (0.3 s and 36 MiB of device memory on
 * the H200). With CUDA's lazy loading, the default since CUDA 12.2, each kernel would otherwise
 * load at its first launch, and a load waits for the whole device. On a device the library
 * holds no machine code for (the driver compiles its kernels from PTX) they stay lazy: there a
 * kernel's first launch may wait.
 */
#ifndef MEMHIER_H
#define MEMHIER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMHIER_VERSION_MAJOR 0
#define MEMHIER_VERSION_MINOR 1
#define MEMHIER_VERSION_PATCH 0

typedef enum mh_status {
    MH_OK = 0,
    MH_ERR_INVALID_ARGUMENT, /* a NULL pointer, a zero or overflowing size, a bad name... */
    MH_ERR_UNSUPPORTED,      /* the variant refuses this problem; the detail says why */
    MH_ERR_NO_DEVICE,        /* no CUDA device, or the index does not exist */
    MH_ERR_OUT_OF_MEMORY,    /* host or device allocation failed */
    MH_ERR_CUDA,             /* a CUDA runtime call or a kernel launch failed */
    MH_ERR_VENDOR,           /* cuDNN / cuFFT / cuBLAS / CUB returned an error */
    MH_ERR_IO,               /* a file could not be read or written, or is malformed */
    MH_ERR_INTERNAL
} mh_status;

typedef enum mh_op {
    MH_OP_CONV1D = 0,
    MH_OP_CONV2D,
    MH_OP_TRANSPOSE,
    MH_OP_COALESCING, /* access-pattern micro-benchmarks: registry and bench only */
    MH_OP_MATMUL,
    MH_OP_REDUCE,
    MH_OP_HISTOGRAM,
    MH_OP_SEPFILTER,
    MH_OP_RANK,
    MH_OP_COUNT
} mh_op;

typedef enum mh_backend { MH_BACKEND_CPU = 0, MH_BACKEND_CUDA, MH_BACKEND_VENDOR } mh_backend;

/* Padding of convolutions, as scipy.signal.correlate names them:
 * valid: outputs where the mask lies wholly inside the input (n - k + 1 of them),
 * same:  n outputs, the mask's anchor at (k - 1) / 2 (PyTorch's padding='same'),
 * full:  every overlap (n + k - 1 outputs). Outside the input counts as zero. */
typedef enum mh_pad { MH_PAD_VALID = 0, MH_PAD_SAME, MH_PAD_FULL } mh_pad;

/* How a filter sees the image past its edges, as scipy.ndimage names the modes (image a b c d):
 *   constant  k k k k | a b c d | k k k k   (k = cval)
 *   reflect   d c b a | a b c d | d c b a   (OpenCV BORDER_REFLECT, numpy.pad 'symmetric')
 *   mirror      d c b | a b c d | c b a     (OpenCV BORDER_REFLECT_101, PyTorch and numpy.pad 'reflect')
 *   nearest   a a a a | a b c d | d d d d   (OpenCV BORDER_REPLICATE, numpy.pad 'edge')
 *   wrap      a b c d | a b c d | a b c d   (OpenCV BORDER_WRAP, numpy.pad 'wrap')
 * repeated as far as the filter reaches, so an image smaller than the filter is extended too. */
typedef enum mh_mode { MH_MODE_CONSTANT = 0, MH_MODE_REFLECT, MH_MODE_MIRROR, MH_MODE_NEAREST, MH_MODE_WRAP } mh_mode;

/* The accuracy a call's results keep, chosen by the caller (mh_context_set_precision):
 *   per-element  every output within c eps32 sum_j |w_j| |x_j| of the exact result, its own
 *                terms' magnitudes (the direct rows, lowrank within its SVD bound, the 3xTF32
 *                tensor-core rows; what scipy.ndimage and cupyx compute). A dark pixel beside
 *                bright ones keeps its digits.
 *   normwise     the FFT rows allowed as well: |out - ref|_2 within 2e-6 |ref|_2 of a tile or
 *                segment (docs/conv2d.md), so an output that nearly cancels carries an error of
 *                the size of its neighbours' (scipy.signal.convolve's method='auto').
 * A context starts normwise; `auto` then skips no row for accuracy. Under per-element it skips
 * the rows whose accuracy is normwise (conv1d's and conv2d's FFT rows and cuDNN, which may pick
 * an FFT algorithm); a row named explicitly runs whatever the contract. */
typedef enum mh_precision { MH_PRECISION_NORMWISE = 0, MH_PRECISION_PER_ELEMENT } mh_precision;

/* "normwise", "per-element"; "unknown-precision" for a value outside the enum. */
const char *mh_precision_name(mh_precision p);
/* Parses "normwise" or "per-element"; MH_ERR_INVALID_ARGUMENT otherwise. */
mh_status mh_precision_parse(const char *name, mh_precision *precision);

/* "constant", "reflect", ...; "unknown-mode" for a value outside the enum. */
const char *mh_mode_name(mh_mode m);
/* Parses a mode's name, or scipy's aliases "grid-constant", "grid-mirror" (reflect) and
 * "grid-wrap" (wrap); MH_ERR_INVALID_ARGUMENT otherwise. */
mh_status mh_mode_parse(const char *name, mh_mode *mode);

#define MH_CPU (-1) /* device index of the CPU backend */

typedef struct mh_context mh_context;

const char *mh_status_str(mh_status s);
const char *mh_op_name(mh_op op);
const char *mh_backend_name(mh_backend b);
const char *mh_pad_name(mh_pad p);
/* Parses "valid", "same" or "full"; MH_ERR_INVALID_ARGUMENT otherwise. */
mh_status mh_pad_parse(const char *name, mh_pad *pad);

/* ---- contexts ---------------------------------------------------------------------- */

/* device: a CUDA device index, or MH_CPU. MH_ERR_NO_DEVICE when it does not exist. */
mh_status mh_context_create(mh_context **ctx, int device);
/* mh_context_create with flags: MH_CONTEXT_LAZY_LOADING skips loading every kernel (0.2-0.3 s on
 * the H200), for a process that makes a call or two and has nothing else queued on the device
 * (the memhier command line): each kernel then loads at its first launch, which waits for the
 * device. Other bits: MH_ERR_INVALID_ARGUMENT. */
#define MH_CONTEXT_LAZY_LOADING 1u
mh_status mh_context_create_ex(mh_context **ctx, int device, unsigned flags);
/* NULL is fine. No other thread may be using the context. */
void mh_context_destroy(mh_context *ctx);
/* cuda_stream: a cudaStream_t of the context's device, or NULL for the default stream; the
 * context's later calls, from any thread, run on it. */
mh_status mh_context_set_stream(mh_context *ctx, void *cuda_stream);
/* Waits for the context's stream; reports kernel faults that happened since the last call. */
mh_status mh_context_synchronize(mh_context *ctx);
int mh_context_device(const mh_context *ctx);
/* The accuracy contract `auto` keeps on this context (mh_precision; a new context is
 * normwise). One setting for every thread, as the stream is. */
mh_status mh_context_set_precision(mh_context *ctx, mh_precision precision);
mh_precision mh_context_precision(const mh_context *ctx);
/* The detail of the calling thread's last failed call on this context ("" after a success, or
 * when that thread's last call was on another context). Never NULL; valid until the thread's
 * next call. */
const char *mh_context_error(const mh_context *ctx);

/* Why `auto` chose what the calling thread's last mh_*_select call on ctx returned: the device
 * and the rules it was measured with, the rule that ordered the candidates with this problem's
 * numbers, and each candidate's answer (the one auto runs, the others that would run it, those
 * that refuse and why), as lines of text. "" before the first select. Made when asked (asking
 * every candidate may open the vendor libraries they need); valid until the thread's next select
 * or explanation on ctx. `memhier explain` prints it. */
const char *mh_context_explanation(mh_context *ctx);

/* ---- memory of a context ------------------------------------------------------------
 * Buffers the context's variants take (device memory on a CUDA context, host memory on a
 * CPU one), so that a plain C program needs no CUDA header. Copies are synchronous. */
mh_status mh_alloc(mh_context *ctx, size_t bytes, void **ptr);
void mh_free(mh_context *ctx, void *ptr);
mh_status mh_upload(mh_context *ctx, void *dst, const void *host_src, size_t bytes);
mh_status mh_download(mh_context *ctx, void *host_dst, const void *src, size_t bytes);
/* Buffers in the order of the context's stream (CUDA's stream-ordered allocator): the bytes
 * mh_alloc_async gives are for work queued on that stream after the call, and mh_free_async
 * returns them once the work queued there before it is done; neither waits for the device
 * (mh_free's cudaFree waits for all of it). Work on another stream must wait for the context's
 * stream before it uses such a buffer. They come from memhier's own pool on the device, which
 * keeps up to 256 MiB of freed buffers for the next ones (the device's default pool, which
 * other libraries use, is left as it is). On a CPU context, or a device without memory pools,
 * they are mh_alloc and mh_free. memhier's Python package stages NumPy arrays run on a GPU in
 * them. */
mh_status mh_alloc_async(mh_context *ctx, size_t bytes, void **ptr);
void mh_free_async(mh_context *ctx, void *ptr);

/* ---- device facts and measured ceilings --------------------------------------------- */

typedef struct mh_device_info {
    char name[256];
    int device; /* index, or MH_CPU */
    int cc_major, cc_minor;
    int sm_count; /* CPU: logical cores */
    size_t global_bytes;
    size_t l2_bytes;
    size_t smem_per_sm;
    size_t smem_per_block_optin;
    size_t const_bytes;
    size_t regs_per_sm;
} mh_device_info;

mh_status mh_device_info_get(mh_context *ctx, mh_device_info *info);

typedef struct mh_ceilings {
    double copy_gbps;  /* device-to-device copy, bytes read + written per second / 1e9 */
    double fma_gflops; /* FP32 fused multiply-adds, 2 flops each, per second / 1e9 */
} mh_ceilings;

/* Measures both ceilings on the context's device (a few hundred ms). */
mh_status mh_measure_ceilings(mh_context *ctx, mh_ceilings *ceilings);

/* ---- the variant registry ----------------------------------------------------------- */

typedef struct mh_variant_info {
    const char *name;   /* "conv1d/smem": op, slash, variant */
    mh_op op;
    mh_backend backend;
    int rung;           /* place on the op's ladder: 0 reference, higher is later */
    const char *memory; /* memory spaces used, e.g. "global+shared+constant" */
    const char *source; /* where it comes from: "seed 000", "ours", "cuDNN", ... */
    const char *summary;
} mh_variant_info;

/* 1 for a variant that is wrong by design, kept to show a race (histogram/racy): auto never
 * picks it and the benchmark reports its wrong results without failing. */
int mh_variant_is_demonstration(const mh_variant_info *info);

/* 1 for a variant that computes in reduced precision on purpose (matmul/tf32 and
 * matmul/cublas-tf32: TF32 products, ~1e-3 relative errors): auto never picks it; the tests
 * and the benchmark judge it against the TF32 bound (docs/matmul.md), not the FP32 one. */
int mh_variant_is_reduced_precision(const mh_variant_info *info);

/* The contract a variant's results keep: MH_PRECISION_NORMWISE for the FFT rows (and cuDNN),
 * MH_PRECISION_PER_ELEMENT for the others (reduced-precision rows keep neither: they are judged
 * against the TF32 bound). */
mh_precision mh_variant_precision(const mh_variant_info *info);

/* The calls a variant takes past its op's plain float32 one, as bits (the op's other variants
 * refuse such a call, naming the ones that take it). */
enum {
    MH_TAKES_IMAGE_DTYPES = 1u << 2,  /* conv2d's typed images (mh_conv2d_typed) */
    MH_TAKES_LARGE_FILTERS = 1u << 3, /* conv2d filters past MH_CONV2D_DIRECT_MAX_K a side */
    MH_TAKES_ANY_REDUCTION = 1u << 4, /* every reduction of mh_reduce, not only the float32 sum */
    MH_TAKES_WEIGHTS = 1u << 5,       /* weighted histograms (mh_histogram_weighted) */
    MH_TAKES_FLOAT64 = 1u << 8,       /* float64 calls (mh_matmul_typed's, mh_conv2d_float64's) */
    MH_TAKES_FLOAT16 = 1u << 9,       /* matmul's float16 calls */
    MH_TAKES_BFLOAT16 = 1u << 10,     /* matmul's bfloat16 calls */
    MH_TAKES_BORDER_MODES = 1u << 11, /* conv1d's and conv2d's boundary modes (bordered calls) */
    MH_TAKES_SCIPY_SUMS = 1u << 12,   /* sepfilter's float64 sums in scipy's order */
    MH_TAKES_VOLUMES = 1u << 14       /* rank's footprints over three axes (mh_rank_desc's kdepth > 1) */
};
unsigned mh_variant_takes(const mh_variant_info *info);
/* A MH_TAKES_ bit's name ("border modes", "float64", ...); NULL for any other value. */
const char *mh_takes_name(unsigned bit);

size_t mh_variant_count(mh_op op);
const mh_variant_info *mh_variant(mh_op op, size_t index); /* NULL past the end */
/* Looks up "conv1d/smem"; NULL when no variant has that name. */
const mh_variant_info *mh_variant_find(const char *name);

/* ---- conv1d: out[i] = sum_j in[i + j - lpad] * mask[j] (cross-correlation) ----------
 * lpad is 0 (valid), (k - 1) / 2 (same) or k - 1 (full). variant: NULL or "auto" for the
 * fastest variant that supports the problem, else "conv1d/NAME" or just "NAME".
 * out must hold mh_conv1d_out_len(n, k, pad) floats and not overlap in or mask. */

/* 0 when the sizes are invalid (n or k zero, k > n in valid mode, overflow). */
size_t mh_conv1d_out_len(size_t n, size_t k, mh_pad pad);

mh_status mh_conv1d(mh_context *ctx, const char *variant, const float *in, size_t n,
                    const float *mask, size_t k, mh_pad pad, float *out);

/* The variant that `auto` would run for this problem on this context. */
mh_status mh_conv1d_select(mh_context *ctx, size_t n, size_t k, mh_pad pad,
                           const mh_variant_info **chosen);

/* MH_OK when the variant can run the problem, MH_ERR_UNSUPPORTED with the reason in
 * mh_context_error() when it refuses, MH_ERR_INVALID_ARGUMENT for bad names or sizes. */
mh_status mh_conv1d_supports(mh_context *ctx, const char *variant, size_t n, size_t k,
                             mh_pad pad);

/* `batch` signals of n floats each, contiguous (in[b * n + i]); outputs likewise, each
 * mh_conv1d_out_len(n, k, pad) long. mask_stride 0: one mask for every signal; k: one mask
 * per signal (mask[b * k + j], the depthwise long convolutions of sequence models). Variants
 * without a batched kernel run once per signal. */
mh_status mh_conv1d_batched(mh_context *ctx, const char *variant, const float *in, size_t batch, size_t n,
                            const float *mask, size_t mask_stride, size_t k, mh_pad pad, float *out);
mh_status mh_conv1d_batched_select(mh_context *ctx, size_t batch, size_t n, size_t mask_stride, size_t k,
                                   mh_pad pad, const mh_variant_info **chosen);

/* conv1d as scipy.ndimage.correlate1d: each of `batch` signals (batched as above, mask_stride 0
 * or k) gives n outputs,
 *   out[i] = sum_j X[i + j - (k / 2 + origin)] * mask[j]
 * where X is the signal extended past its ends by `mode` (cval for MH_MODE_CONSTANT; every
 * padded value meets its tap, so a NaN cval reaches every output whose window leaves the
 * signal). origin in [-(k / 2), (k - 1) / 2]; any k, longer than the signal too (the extension
 * repeats). The rows whose loaders apply the modes take these calls: the CPU rows, regtile,
 * fft-fused and fft-os; the others refuse them with the reason, and auto runs the first of its
 * order that accepts. */
mh_status mh_conv1d_mode(mh_context *ctx, const char *variant, const float *in, size_t batch, size_t n,
                         const float *mask, size_t mask_stride, size_t k, mh_mode mode, float cval, long long origin,
                         float *out);
mh_status mh_conv1d_mode_select(mh_context *ctx, size_t batch, size_t n, size_t mask_stride, size_t k, mh_mode mode,
                                long long origin, const mh_variant_info **chosen);
mh_status mh_conv1d_mode_supports(mh_context *ctx, const char *variant, size_t batch, size_t n, size_t k,
                                  mh_mode mode, long long origin);

/* ---- conv2d: out[r][c] = sum_{i,j} in[r + i - lpr][c + j - lpc] * filter[i][j] -----------
 * Row-major float32 images; filters krows x kcols, each from 1 to MH_CONV2D_MAX_K, any
 * shape (not necessarily square or odd). The direct, tensor-core, low-rank and fft-tile (2-D FFT
 * tiles in shared memory) rows take sides up to MH_CONV2D_DIRECT_MAX_K; fft-3pass (512 x 512
 * overlap-save tiles, on-chip transforms in three passes), fft-os (overlap-save on cuFFT), cudnn
 * and the CPU rows take every size, and auto runs fft-3pass past the direct rows' limit and
 * fft-tile for filters of many taps below it (the FFT rows' accuracy is a normwise bound,
 * docs/conv2d.md) under the normwise contract; under per-element (mh_context_set_precision) it
 * runs the direct rows, and basic past 31 a side. lpr, lpc are 0 (valid), (k - 1) / 2 (same) or
 * k - 1 (full), per dimension; outside the input counts as zero. `auto` decides from the
 * shapes alone and never reads the filter. "separable" (rank 1) and "lowrank" (up to 4 terms)
 * take a filter that is a sum of that many outer products: its SVD in double finds the fewest
 * terms whose float32 factors keep every output within the per-element bound, whatever the
 * image (others are refused with the tap that misses). Called plainly they read the filter back,
 * so they wait for the context's stream; with a plan (mh_conv2d_plan_create) they do not. */
#define MH_CONV2D_MAX_K 255
#define MH_CONV2D_DIRECT_MAX_K 31

/* MH_OK and the output's dimensions, or MH_ERR_INVALID_ARGUMENT (zero sizes, filter larger
 * than the input in valid mode, overflow). */
mh_status mh_conv2d_out_dims(size_t rows, size_t cols, size_t krows, size_t kcols, mh_pad pad, size_t *out_rows,
                             size_t *out_cols);

mh_status mh_conv2d(mh_context *ctx, const char *variant, const float *in, size_t rows, size_t cols,
                    const float *filter, size_t krows, size_t kcols, mh_pad pad, float *out);

/* The variant `auto` would run (from the sizes alone, as the call decides). */
mh_status mh_conv2d_select(mh_context *ctx, size_t rows, size_t cols, size_t krows, size_t kcols, mh_pad pad,
                           const mh_variant_info **chosen);
mh_status mh_conv2d_supports(mh_context *ctx, const char *variant, size_t rows, size_t cols, size_t krows,
                             size_t kcols, mh_pad pad);

/* A filter analysed once for many calls: a copy of it where ctx computes, its rank and its
 * factors (the SVD in double on the host), and on a GPU fft-tile's spectrum of it and, on a
 * compute capability 9.0 device, tc's Toeplitz panels (sides up to MH_CONV2D_DIRECT_MAX_K), or
 * fft-3pass's spectrum (past it, 1 MB). `filter` may be host memory, copied to the device on
 * ctx's stream without waiting for it (planned calls on any stream wait for that copy on the
 * GPU), or ctx's device memory, read back before this returns (that waits for ctx's stream). A
 * plan belongs to ctx's device and may serve any context on that device; it is the caller's to
 * destroy once the calls that use it have run. */
typedef struct mh_conv2d_plan mh_conv2d_plan;
mh_status mh_conv2d_plan_create(mh_context *ctx, const float *filter, size_t krows, size_t kcols,
                                mh_conv2d_plan **plan);
void mh_conv2d_plan_destroy(mh_conv2d_plan *plan);
/* The terms conv2d/lowrank runs for the plan's filter (1 for rank 1), or -1 where it needs more
 * than 4 or is past MH_CONV2D_DIRECT_MAX_K a side (then lowrank refuses it). */
int mh_conv2d_plan_rank(const mh_conv2d_plan *plan);
/* mh_conv2d with the plan's filter: no row reads the filter back, so no call waits for the
 * stream. auto takes lowrank first where the plan's terms cost at most a share of the direct taps
 * (the device's rules; the H100's: rank x (krows + kcols) <= krows x kcols / 2, beyond 5 x 5),
 * else decides as mh_conv2d does. */
mh_status mh_conv2d_planned(mh_context *ctx, const char *variant, const mh_conv2d_plan *plan, const float *in,
                            size_t rows, size_t cols, mh_pad pad, float *out);
/* mh_conv2d_mode_batched with the plan's filter, likewise without a read-back. */
mh_status mh_conv2d_planned_mode(mh_context *ctx, const char *variant, const mh_conv2d_plan *plan, const float *in,
                                 size_t batch, size_t rows, size_t cols, mh_mode mode, float cval, long long origin_r,
                                 long long origin_c, float *out);

/* conv2d as scipy.ndimage.correlate: out has the image's size, and
 *   out[r][c] = sum_{i,j} X[r + i - (krows / 2 + origin_r)][c + j - (kcols / 2 + origin_c)] * filter[i][j]
 * where X is the image extended past its edges by `mode` (cval for MH_MODE_CONSTANT; every
 * padded value is multiplied by its tap, so a NaN cval reaches every output it touches).
 * origin_r in [-(krows / 2), (krows - 1) / 2], likewise origin_c. The rows whose tile loaders
 * apply the modes (regtile, walk, separable, lowrank, fft-tile, fft-3pass, fft-os, basic, const and
 * the CPU rows) take these calls; the others refuse them with the reason, and auto runs the first that
 * accepts. */
mh_status mh_conv2d_mode(mh_context *ctx, const char *variant, const float *in, size_t rows, size_t cols,
                         const float *filter, size_t krows, size_t kcols, mh_mode mode, float cval,
                         long long origin_r, long long origin_c, float *out);
/* A stack of `batch` images filtered alike: in[b * rows * cols + ...], out likewise. regtile
 * and walk filter the stack in one launch; the other rows that take modes, image by image. */
mh_status mh_conv2d_mode_batched(mh_context *ctx, const char *variant, const float *in, size_t batch, size_t rows,
                                 size_t cols, const float *filter, size_t krows, size_t kcols, mh_mode mode,
                                 float cval, long long origin_r, long long origin_c, float *out);
/* mh_conv2d_mode_batched with the filter reversed along both axes: a true convolution,
 *   out[r][c] = sum_{i,j} X[r + i - (krows / 2 + origin_r)][c + j - (kcols / 2 + origin_c)]
 *               * filter[krows - 1 - i][kcols - 1 - j],
 * scipy.ndimage.convolve's sum, whose origin o along a side of k is origin -o - (1 - k % 2) here.
 * The filter is read where it is, as mh_conv2d_mode reads it; the context reverses it into a copy
 * of its own (on the context's stream on a GPU: nothing waits) that the rows then read, so every
 * row that takes modes takes these calls, with auto's pick of mh_conv2d_mode_batched. */
mh_status mh_conv2d_mode_reversed(mh_context *ctx, const char *variant, const float *in, size_t batch, size_t rows,
                                  size_t cols, const float *filter, size_t krows, size_t kcols, mh_mode mode,
                                  float cval, long long origin_r, long long origin_c, float *out);
mh_status mh_conv2d_mode_select(mh_context *ctx, size_t rows, size_t cols, size_t krows, size_t kcols, mh_mode mode,
                                long long origin_r, long long origin_c, const mh_variant_info **chosen);
mh_status mh_conv2d_mode_supports(mh_context *ctx, const char *variant, size_t rows, size_t cols, size_t krows,
                                  size_t kcols, mh_mode mode, long long origin_r, long long origin_c);

/* ---- sepfilter: scipy.ndimage's separable filters on typed images with channels ---------
 * A stack of `batch` images of rows x cols pixels with `channels` interleaved values each
 * (1 to MH_SEPFILTER_MAX_CHANNELS: gray, RGB, RGBA), in[((b * rows + r) * cols + c) * channels
 * + ch] of in_type, filtered along the rows axis (vertical: down a column) and the columns axis
 * (horizontal: along a row, each channel alone), one 1-D correlation after the other, exactly as
 * scipy.ndimage runs gaussian_filter, uniform_filter, sobel and correlate1d over two axes:
 *   mid = cast(correlate1d(in, first axis)),  out = cast(correlate1d(mid, second axis))
 * or, in the order MH_SEPFILTER_SUM, both passes from the input and added in the output's type,
 * as scipy's generic_laplace adds its terms (laplace; integer sums wrap):
 *   out = cast(cast(correlate1d(in, rows axis)) + cast(correlate1d(in, columns axis)))
 * each pass computed in float32 (float64 for the wide types below) from its input extended past
 * the edges by its axis's mode (cval
 * for MH_MODE_CONSTANT, the same for both passes), its taps anchored at ntaps / 2 + origin, its
 * sum divided by `divisor` where that is not 1 (scipy's uniform filter divides its exact sum),
 * and `cast` is scipy's store into out_type, a C cast as x86-64 makes it: floats rounded to
 * nearest, integers truncated toward zero and wrapped modulo 2^bits (8 and 16 bits through int32:
 * NaN and values past +-2^31 stored as 0; int32 and int64 store their least value for NaN and
 * values past their range; uint32 through int64: 0 past +-2^63; uint64 stores 2^63 for NaN and
 * values below -2^63, 0 from 2^64 up). A
 * one-pass filter gives the other axis the single tap 1. Host taps are copied by the call and
 * passed by value to the kernel; device taps (weights an array library holds on the GPU) are
 * read by the kernel in stream order. An axis marked `reversed` is read from its last tap to its
 * first (scipy's convolve1d is correlate1d with the taps reversed and the origin mirrored): host
 * taps are reversed as they are copied, device taps into the context's copy on its stream each
 * call, before the kernels read them. Either way a call never waits for its stream. out has in's
 * shape; it must not overlap in. */
typedef enum mh_dtype {
    MH_F32 = 0, MH_F16, MH_U8, MH_I8, MH_U16, MH_I16, MH_I32, MH_I64, MH_F64, MH_U32, MH_U64, MH_BF16
} mh_dtype;
/* "float32", ..., "uint64"; "unknown-dtype" otherwise. sepfilter reads and writes every one: a
 * call whose in_type or out_type is a wide type (int32, int64, uint32, uint64, float64, whose
 * values float32 does not hold) computes in float64 as scipy does, from taps64 where given and
 * with cval as given; the others compute in float32 (taps and cval rounded to float32). float16
 * beside a wide type is refused. conv2d's typed call reads and writes the first six. */
const char *mh_dtype_name(mh_dtype t);
/* Bytes of one element; 0 for a value outside the enum. */
size_t mh_dtype_size(mh_dtype t);

#define MH_SEPFILTER_MAX_TAPS 127 /* fused and the other rows all, fused where its tile fits */
#define MH_SEPFILTER_MAX_CHANNELS 4

typedef struct mh_sepfilter_axis {
    const float *taps;   /* 1 to MH_SEPFILTER_MAX_TAPS of them: host memory, or on a CUDA context
                            device memory of its device, which the kernels read when they run */
    size_t ntaps;
    long long origin;    /* in [-(ntaps / 2), (ntaps - 1) / 2] */
    mh_mode mode;
    unsigned divisor;    /* 1: none */
    const double *taps64; /* NULL, or the same taps in float64 in host memory: what a call computed
                             in float64 multiplies by (else taps, widened) */
    int reversed;        /* 0: taps[0] first; 1: taps (and taps64) read from their end */
} mh_sepfilter_axis;

/* How the two passes combine: one after the other (scipy's order for axes (0, 1) is vertical
 * first), or each from the input and summed. */
typedef enum mh_sepfilter_order {
    MH_SEPFILTER_VERTICAL_FIRST = 0,
    MH_SEPFILTER_HORIZONTAL_FIRST = 1,
    MH_SEPFILTER_SUM = 2
} mh_sepfilter_order;

/* How a call computed in float64 adds an output's products. MH_SEPFILTER_SUMS_FMA: from 0.0 in
 * the taps' order with fused multiply-adds (within the per-element bound, the fastest).
 * MH_SEPFILTER_SUMS_SCIPY: in scipy.ndimage's order (NI_Correlate1D), each product rounded before
 * it is added: a pass of an odd number of taps symmetric about its centre within DBL_EPSILON as
 * x[c] w[c] + (x[c - j] + x[c + j]) w[c - j] for j = c down to 1, an antisymmetric one the same
 * with x[c - j] - x[c + j], any other as x[k - 1] w[k - 1] + x[0] w[0] + ... + x[k - 2] w[k - 2]
 * (x[j]: the value under tap j): scipy's own sums, bit for bit, so that an integer output
 * truncates them where scipy's does. Host taps only; the rows flagged for it take it (fused64,
 * two-pass, cpu-omp). */
typedef enum mh_sepfilter_sums {
    MH_SEPFILTER_SUMS_FMA = 0,
    MH_SEPFILTER_SUMS_SCIPY = 1
} mh_sepfilter_sums;

typedef struct mh_sepfilter_desc {
    size_t batch, rows, cols, channels;
    mh_dtype in_type, out_type;
    mh_sepfilter_axis vertical, horizontal;
    mh_sepfilter_order order;
    double cval;
    mh_sepfilter_sums sums; /* a call computed in float64; 0 (FMA) for the others */
} mh_sepfilter_desc;

mh_status mh_sepfilter(mh_context *ctx, const char *variant, const mh_sepfilter_desc *desc, const void *in, void *out);
mh_status mh_sepfilter_select(mh_context *ctx, const mh_sepfilter_desc *desc, const mh_variant_info **chosen);
mh_status mh_sepfilter_supports(mh_context *ctx, const char *variant, const mh_sepfilter_desc *desc);

/* ---- rank: selection filters (scipy.ndimage's rank, median, percentile, minimum and maximum
 * filters and grey erosion and dilation) ------------------------------------------------------
 * Each output is the value of rank `rank` (0: the least) among the input values under the
 * footprint's set elements, the window placed as scipy places it: element (r, c) of the footprint
 * over input (y + r - (krows / 2 + origin_row), x + c - (kcols / 2 + origin_col)) for output
 * (y, x), positions past the image's edges read by `mode` (cval for constant). Values are read as
 * float64 (int64 and uint64 past 2^53 rounded, as scipy reads them) and ordered as numpy sorts
 * them (NaN above every number), -0.0 below +0.0. With a structure (grey morphology's non-flat
 * element, krows x kcols float64, host memory) the values ranked are x + s (grey dilation's
 * maximum; erosion's minimum takes the structure negated), each sum in float64; with
 * structure_in_type, as scipy.ndimage adds them to an image of any type: the first set element's
 * (C order) in float64, every other's in in_type's own arithmetic, s cast to in_type first (an
 * integer truncated and wrapped to its width, float32 rounded) and the sum wrapped (integers) or
 * rounded (float32); for float64 images the two are one. With structure_in_type on an integer
 * image every structure value must be finite and below 2^31 in magnitude (2^63 for int64 and
 * uint64), where C's cast that scipy makes is defined. cval is taken as given (the caller
 * casts it where scipy does). The selected value is stored in out_type with scipy's cast. Images of
 * `channels` interleaved values are filtered a channel at a time; `batch` images in one call.
 * Every dtype but float16 and bfloat16. The footprint (host memory) is read during the call.
 * Volumes: with depth > 1 each of the batch is depth planes of rows x cols (x channels), and a
 * footprint (and structure) of kdepth > 1 planes of krows x kcols reaches across planes, element
 * (p, r, c) over plane z + p - (kdepth / 2 + origin_depth) for an output in plane z, the planes'
 * edges read by `mode` as the rows' are. depth and kdepth 0 mean 1 (a desc written before they
 * existed is an image's); a footprint of one plane filters each plane as an image. The rows
 * flagged MH_TAKES_VOLUMES take footprints of more planes; the others refuse them. */
typedef struct mh_rank_desc {
    size_t batch, rows, cols, channels;
    mh_dtype in_type, out_type;
    const unsigned char *footprint; /* krows x kcols, nonzero: in the window */
    size_t krows, kcols;
    const double *structure;        /* NULL, or krows x kcols values added to the window's */
    size_t rank;                    /* below the footprint's count of set elements */
    long long origin_row, origin_col; /* each in [-(k / 2), (k - 1) / 2] */
    mh_mode mode;
    double cval;
    int structure_in_type;          /* 0, or 1: the structure added as scipy adds it (above) */
    size_t depth;                   /* a volume's planes (0 or 1: images) */
    size_t kdepth;                  /* the footprint's planes (0 or 1: krows x kcols) */
    long long origin_depth;         /* in [-(kdepth / 2), (kdepth - 1) / 2] */
} mh_rank_desc;

mh_status mh_rank(mh_context *ctx, const char *variant, const mh_rank_desc *desc, const void *in, void *out);
mh_status mh_rank_select(mh_context *ctx, const mh_rank_desc *desc, const mh_variant_info **chosen);
mh_status mh_rank_supports(mh_context *ctx, const char *variant, const mh_rank_desc *desc);

/* The sum of separable filters of one input, added as scipy's generic_laplace adds its terms
 * (gaussian_laplace on an image: the Gaussian's second derivative along one axis smoothed along
 * the other, for each axis):
 *   out = cast(... cast(cast(terms[0](in)) + cast(terms[1](in))) + ... cast(terms[nterms - 1](in)))
 * each term run as mh_sepfilter runs its desc (variant names every term's row), each sum in the
 * output's type (integer sums wrap). 1 to MH_SEPFILTER_MAX_TERMS terms, every one with terms[0]'s
 * batch, rows, cols, channels, in_type and out_type. Every term is checked and its row chosen
 * before the first runs. A CUDA context keeps one term's output in its own memory between
 * calls (grown on demand, in stream order); the call never waits for its stream. Two terms
 * that sepfilter/walk runs together (one geometry, the vertical-first order, only the taps
 * differing) run as one launch with the same bits. */
#define MH_SEPFILTER_MAX_TERMS 16
mh_status mh_sepfilter_sum(mh_context *ctx, const char *variant, const mh_sepfilter_desc *terms, size_t nterms,
                           const void *in, void *out);

/* mh_conv2d_mode_batched on typed images: in holds in_type elements, out out_type ones (the
 * first six of mh_dtype), converted to float32 as the kernel loads them and computed in float32,
 * each output then stored with sepfilter's cast (scipy's store into out_type). The filter is
 * float32. The rows that convert in their loaders (walk at 3 x 3 and 5 x 5, cpu-omp) take the
 * call; the others refuse it ("reads and writes float32 only"), so auto refuses the sizes walk
 * does not take on a CUDA device. out must not overlap in. */
mh_status mh_conv2d_typed(mh_context *ctx, const char *variant, const void *in, mh_dtype in_type, size_t batch,
                          size_t rows, size_t cols, const float *filter, size_t krows, size_t kcols, mh_mode mode,
                          float cval, long long origin_r, long long origin_c, void *out, mh_dtype out_type);

/* mh_conv2d_typed computed as scipy.ndimage.correlate computes it: each output starts at 0.0 and
 * adds, for each weight in C order of the filter whose magnitude is past DBL_EPSILON (scipy's
 * footprint: the others are skipped, NaN among them), the input value (in float64; cval outside
 * in constant mode) times the weight, the product rounded before it is added (no fused
 * multiply-add); the sum is stored with sepfilter's cast into out_type. The result is scipy's to
 * the bit, whatever the types. in_type and out_type: any mh_dtype but float16 and bfloat16.
 * filter: krows x kcols float64 weights in host memory, read before the call returns. Rows
 * flagged for float64 calls take it (conv2d/float64 on a CUDA device, sides up to
 * MH_CONV2D_DIRECT_MAX_K; cpu-omp, any side); the others refuse it. out must not overlap in. */
mh_status mh_conv2d_float64(mh_context *ctx, const char *variant, const void *in, mh_dtype in_type, size_t batch,
                            size_t rows, size_t cols, const double *filter, size_t krows, size_t kcols, mh_mode mode,
                            double cval, long long origin_r, long long origin_c, void *out, mh_dtype out_type);
/* The row auto runs for such a call (the weights are not needed to choose). */
mh_status mh_conv2d_float64_select(mh_context *ctx, mh_dtype in_type, size_t batch, size_t rows, size_t cols,
                                   size_t krows, size_t kcols, mh_mode mode, long long origin_r, long long origin_c,
                                   mh_dtype out_type, const mh_variant_info **chosen);

/* ---- transpose: out[c][r] = in[r][c], row-major float32, any sizes -----------------------
 * in is rows x cols, out cols x rows; out of place (out must not overlap in); exact. */
mh_status mh_transpose(mh_context *ctx, const char *variant, const float *in, size_t rows, size_t cols, float *out);
mh_status mh_transpose_select(mh_context *ctx, size_t rows, size_t cols, const mh_variant_info **chosen);
mh_status mh_transpose_supports(mh_context *ctx, const char *variant, size_t rows, size_t cols);

/* ---- matmul: c[m x n] = a[m x k] . b[k x n], row-major float32, FP32 arithmetic ----------
 * Any sizes (no tile multiple needed); c must overlap neither a nor b. `auto` runs rows whose
 * largest error stays within 1.5x cublasSgemm's on the shapes it sends them (docs/matmul.md).
 * The 3xTF32 rows named by a caller (tf32x3, tf32x3-wgmma), measured against cublasSgemm's
 * largest error on uniform and exponent-spread data (H100): within 1.2x wherever m n >= 896^2
 * and k >= 512 (up to k = 262144); 1.7x at 768^3; 1.35x to 6.2x with long k and few outputs
 * (m n <= 512^2, k >= 131072); up to 7.5x with short k or few outputs (k = 1: 7.5x, a dot
 * product of 4096: 4.0x, 300 x 64 x 200: 2.7x), where cuBLAS's sums are nearly exact and both
 * errors are a few float32 epsilons of the result. Entries within 2^-11 of FLT_MAX: tf32x3-wgmma
 * stays as finite as SGEMM; tf32x3 rounds them to Inf (a guard in its inner loop costs 18-30%). */
mh_status mh_matmul(mh_context *ctx, const char *variant, const float *a, const float *b, float *c, size_t m, size_t k,
                    size_t n);
mh_status mh_matmul_select(mh_context *ctx, size_t m, size_t k, size_t n, const mh_variant_info **chosen);
mh_status mh_matmul_supports(mh_context *ctx, const char *variant, size_t m, size_t k, size_t n);
/* The same product on arrays of `type`: MH_F32 (mh_matmul's call); MH_F64, computed in FP64
 * (matmul/cublas-dgemm on a GPU; cpu-omp and cpu-reference on the CPU), every output within k
 * float64 epsilons of sum |a||b| of the exact result; or MH_F16 (float16 a, b and c): the
 * products, exact in float32, summed in FP32 and each output rounded to float16 once
 * (matmul/cublas-f16, cublasGemmEx on tensor cores; the CPU rows); or MH_BF16 (bfloat16 a, b
 * and c) the same way (matmul/cublas-bf16). Other types are refused by name; each row takes the
 * types its flags name. */
mh_status mh_matmul_typed(mh_context *ctx, const char *variant, mh_dtype type, const void *a, const void *b, void *c,
                          size_t m, size_t k, size_t n);
mh_status mh_matmul_typed_select(mh_context *ctx, mh_dtype type, size_t m, size_t k, size_t n,
                                 const mh_variant_info **chosen);
mh_status mh_matmul_typed_supports(mh_context *ctx, const char *variant, mh_dtype type, size_t m, size_t k, size_t n);

/* ---- reduce: *sum = in[0] + ... + in[n - 1], float32 --------------------------------------
 * n = 0 gives 0 (in may then be NULL). sum is one float in the context's memory (device memory
 * for a CUDA context). NaN and Inf propagate as IEEE addition makes them: any NaN, or +Inf and
 * -Inf together, gives NaN. Variants differ in accuracy and in whether repeated runs give the
 * same bits (docs/reduce.md). */
mh_status mh_reduce_sum(mh_context *ctx, const char *variant, const float *in, size_t n, float *sum);
mh_status mh_reduce_sum_select(mh_context *ctx, size_t n, const mh_variant_info **chosen);
mh_status mh_reduce_sum_supports(mh_context *ctx, const char *variant, size_t n);

/* ---- reduce along an axis, as numpy's sum, mean, min, max, argmin and argmax ----------------
 * in: a C-contiguous array of any mh_dtype but MH_F16 (float32, float64, the 8- to 64-bit signed
 * and unsigned integers) seen as outer x len x inner and reduced over len (numpy's axis k of shape
 * s: outer = s[0] ... s[k-1], len = s[k], inner = s[k+1] ...; the whole array: 1 x n x 1). out:
 * outer x inner results in the context's memory, C order:
 *   MH_REDUCE_SUM     float32 -> float32 (summed in double, rounded once, the whole array's too:
 *                     mh_reduce_sum is the float32 sum of the rows that sum in float);
 *                     float64 -> float64 (summed in double); signed integers -> int64 and
 *                     unsigned ones -> uint64, exact (wrapping past 64 bits, as numpy's)
 *   MH_REDUCE_MEAN    float32 -> float32 (the double sum over len); float64 -> float64; integers
 *                     of up to 32 bits -> float64 (the exact sum over len); int64 and uint64 ->
 *                     float64 (the values' double sum over len, as numpy's)
 *   MH_REDUCE_MIN/MAX the dtype; NaN where the lane holds one
 *   MH_REDUCE_ARGMIN/ARGMAX int64: the index of the lane's first NaN, else of its first extreme
 * len = 0: sums give 0 and means NaN; the others refuse (numpy raises). Which rows take which
 * reductions: docs/reduce.md. */
typedef enum {
    MH_REDUCE_SUM = 0,
    MH_REDUCE_MEAN = 1,
    MH_REDUCE_MIN = 2,
    MH_REDUCE_MAX = 3,
    MH_REDUCE_ARGMIN = 4,
    MH_REDUCE_ARGMAX = 5
} mh_reduce_kind;
mh_status mh_reduce(mh_context *ctx, const char *variant, const void *in, mh_dtype dtype, size_t outer, size_t len,
                    size_t inner, mh_reduce_kind kind, void *out);
mh_status mh_reduce_select(mh_context *ctx, mh_dtype dtype, size_t outer, size_t len, size_t inner, mh_reduce_kind kind,
                           const mh_variant_info **chosen);
mh_status mh_reduce_supports(mh_context *ctx, const char *variant, mh_dtype dtype, size_t outer, size_t len,
                             size_t inner, mh_reduce_kind kind);

/* ---- histogram: exact 64-bit counts ------------------------------------------------------
 * int32 values: bins[v] += 1 for 0 <= v < num_bins (1 .. MH_HISTOGRAM_MAX_BINS). Bytes: a
 * value c with lo <= c <= hi goes to bin (c - lo) / width, num_bins = (hi - lo) / width + 1:
 * (0, 255, 1) is the 256-bin byte histogram, ('a', 'z', 4) seed 004's character buckets.
 * Values outside are not counted; their number goes to *outside (NULL: not wanted). bins
 * (num_bins counts) and outside are in the context's memory and are overwritten, not added to. */
#define MH_HISTOGRAM_MAX_BINS (1 << 20)
mh_status mh_histogram(mh_context *ctx, const char *variant, const int32_t *in, size_t n, int num_bins, uint64_t *bins,
                       uint64_t *outside);
mh_status mh_histogram_bytes(mh_context *ctx, const char *variant, const uint8_t *in, size_t n, int lo, int hi, int width,
                             uint64_t *bins, uint64_t *outside);
/* int64 values (numpy.bincount's usual input), as mh_histogram's int32 ones: bins[v] += 1 for
 * 0 <= v < num_bins, each value compared at its full width (2^32 + 3 and -1 are outside). */
mh_status mh_histogram_int64(mh_context *ctx, const char *variant, const int64_t *in, size_t n, int num_bins,
                             uint64_t *bins, uint64_t *outside);

/* Float32 data, counted as numpy.histogram counts it. num_bins bins (1 .. MH_HISTOGRAM_MAX_BINS)
 * with edges e[0 .. num_bins]:
 * - mh_histogram_float: uniform over [lo, hi] (finite, lo <= hi; lo == hi widens to
 *   (lo - 0.5, hi + 0.5)), the edges numpy.linspace(lo, hi, num_bins + 1) computed in double
 *   arithmetic, then rounded to float32, as numpy.histogram(x, num_bins, range=(lo, hi)) makes
 *   them;
 * - mh_histogram_edges: the num_bins + 1 float32 edges given, non-decreasing, in the context's
 *   memory. The call does not read them on the host: unsorted or NaN edges give counts that
 *   mean nothing, never a write outside bins.
 * x counts where e[0] <= x <= e[num_bins], in the last bin i with e[i] <= x (the last bin
 * closed); NaN and the values outside are counted into *outside. Exact 64-bit counts. */
mh_status mh_histogram_float(mh_context *ctx, const char *variant, const float *in, size_t n, int num_bins, double lo,
                             double hi, uint64_t *bins, uint64_t *outside);
mh_status mh_histogram_edges(mh_context *ctx, const char *variant, const float *in, size_t n, const float *edges,
                             int num_bins, uint64_t *bins, uint64_t *outside);
/* numpy.histogram(x, num_bins, range=(lo, hi)) whole: mh_histogram_float's counts, and its
 * edges e[0 .. num_bins] written to edges (num_bins + 1 float32 in the context's memory, apart
 * from the other buffers) as numpy returns them for float32 data, in the same call (on a GPU,
 * the launch that zeroes the counts writes them). */
mh_status mh_histogram_range(mh_context *ctx, const char *variant, const float *in, size_t n, int num_bins, double lo,
                             double hi, uint64_t *bins, uint64_t *outside, float *edges);

/* Weighted histograms, numpy.histogram(x, ..., weights=w) and numpy.bincount(x, weights=w): each
 * value counted adds its float32 weight w[i] to its bin instead of 1. kind picks the values and
 * bins: MH_HISTOGRAM_INT32 (int32 values 0 .. num_bins - 1, lo, hi and edges unused),
 * MH_HISTOGRAM_FLOAT_UNIFORM (float32 values, uniform bins over [lo, hi] as mh_histogram_float)
 * or MH_HISTOGRAM_FLOAT_EDGES (float32 values between edges, as mh_histogram_edges). sums
 * (num_bins doubles) and *outside (NULL: not wanted; the weights of the values not counted) are
 * in the context's memory and overwritten. Sums in double; the rows differ in order: `weighted`
 * adds in an order fixed by n and gives the same bits on every run (the deterministic option,
 * up to 2048 bins); weighted-shared (auto's, up to 2048 bins) and weighted-atomic add in the
 * order their atomics land (docs/histogram.md). */
mh_status mh_histogram_weighted(mh_context *ctx, const char *variant, int kind, const void *in, const float *weights,
                                size_t n, int num_bins, double lo, double hi, const float *edges, double *sums,
                                double *outside);

/* What select and supports ask about: the int32 form (0, bins as given), the byte form (1,
 * num_bins bins), float32 data in uniform bins (2) or between explicit edges (3), the int64
 * form (4). */
typedef enum {
    MH_HISTOGRAM_INT32 = 0,
    MH_HISTOGRAM_BYTES = 1,
    MH_HISTOGRAM_FLOAT_UNIFORM = 2,
    MH_HISTOGRAM_FLOAT_EDGES = 3,
    MH_HISTOGRAM_INT64 = 4
} mh_histogram_kind;
mh_status mh_histogram_select(mh_context *ctx, size_t n, int num_bins, int kind, const mh_variant_info **chosen);
mh_status mh_histogram_supports(mh_context *ctx, const char *variant, size_t n, int num_bins, int kind);

#ifdef __cplusplus
}
#endif

#endif /* MEMHIER_H */

/* The vendor rows whose libraries a build may lack (cuDNN, NPP): their registry entries, the same
 * in every build. Where the library was found at build time, conv1d_cudnn.c, conv2d_cudnn.c and
 * conv2d_npp.cu run them; where it was not, cudnn_absent.c and npp_absent.c keep them in the
 * registry, needing their library as the built rows do, so that the dispatcher refuses every call
 * by name the way it refuses a library that cannot be loaded (vendor_lib.c: "memhier was built
 * without cuDNN's headers"). The registry, `memhier list` and the texts made from it (the README's
 * ladders, the lists of rows that take a call) are then one list on every machine. */
#ifndef MH_VENDOR_ROWS_H
#define MH_VENDOR_ROWS_H

#define MH_CONV1D_CUDNN_INFO                                                                                        \
    {"conv1d/cudnn", MH_OP_CONV1D, MH_BACKEND_VENDOR, 10, "vendor", "cuDNN",                                        \
     "cudnnConvolutionForward, 1-row 2-D convolution, FP32 (TF32 off), fastest non-Winograd algorithm, timed once " \
     "per shape"}
#define MH_CONV1D_CUDNN_FLAGS MH_ROW_NORMWISE

#define MH_CONV2D_CUDNN_INFO                                                                                        \
    {"conv2d/cudnn", MH_OP_CONV2D, MH_BACKEND_VENDOR, 11, "vendor", "cuDNN",                                        \
     "cudnnConvolutionForward on one channel, FP32 (TF32 off), fastest non-Winograd algorithm, timed once per "     \
     "shape"}
#define MH_CONV2D_CUDNN_FLAGS (MH_ROW_LARGE_FILTERS | MH_ROW_NORMWISE)

#define MH_CONV2D_NPP_INFO                                                                                          \
    {"conv2d/npp", MH_OP_CONV2D, MH_BACKEND_VENDOR, 12, "vendor", "NPP",                                            \
     "nppiFilter_32f_C1R; zero padding by a padded copy (NPP's borders only replicate)"}
#define MH_CONV2D_NPP_FLAGS 0

/* supports() and run() of a row whose library this build lacks: never reached through the
 * dispatcher or mh_run_row, which open the row's library first and refuse there; they refuse
 * too. */
int mh_absent_supports(const mh_context *ctx, const mh_args *a, char *why, size_t len);
mh_status mh_absent_run(mh_context *ctx, const mh_args *a);

#endif

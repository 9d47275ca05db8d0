/* Double products and sums each rounded on its own, on the host and on a GPU alike: CUDA contracts
 * a * b + c into one fused multiply-add unless told not to (__dmul_rn, __dadd_rn), and the host
 * files that compute with these build with -ffp-contract=off (CMakeLists.txt). For the rules that
 * must land on numpy's or scipy's bits: numpy.histogram's edges, scipy's sums. */
#ifndef MH_ROUNDED_H
#define MH_ROUNDED_H

#ifdef __CUDACC__
#define MH_ROUNDED_FN __host__ __device__ __forceinline__
#else
#define MH_ROUNDED_FN static inline
#endif

MH_ROUNDED_FN double mh_mul_rn(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

MH_ROUNDED_FN double mh_add_rn(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

#endif

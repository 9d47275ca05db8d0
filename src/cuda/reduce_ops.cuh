/* The reductions of mh_reduce as device operators, shared by the axis kernels (reduce_axis.cu)
 * and CUB's segmented reduce (adapters/reduce_cub.cu). Each operator has an accumulator type,
 * an identity, the accumulator of one element (lift), an in-order add of one element (value and index along the axis), an associative
 * combine and a store of the final result in mh_reduce's output type:
 *   sum_op<T>       float32 sums in double, int32 in int64; store rounds once (or divides: mean)
 *   extreme_op<T,M> min (M = 0) or max (M = 1); a NaN, once seen, wins
 *   arg_op<T,M>     (value, index): the first NaN, else the first extreme (numpy's argmin/argmax)
 * combine is commutative as well for extreme_op and arg_op (ties go to the lower index), so
 * their results do not depend on the order of combining; sums do, and every kernel here
 * combines in an order fixed by the shape. */
#ifndef MEMHIER_REDUCE_OPS_CUH
#define MEMHIER_REDUCE_OPS_CUH

#include "common.cuh"

#include <limits.h>
#include <math.h>
#include <type_traits>

template <typename T> struct sum_type;
template <> struct sum_type<float> { typedef double type; };
template <> struct sum_type<int> { typedef long long type; };

template <typename T> struct vec4;
template <> struct vec4<float> { typedef float4 type; };
template <> struct vec4<int> { typedef int4 type; };
template <typename T> struct vec2;
template <> struct vec2<float> { typedef float2 type; };
template <> struct vec2<int> { typedef int2 type; };

static __device__ __forceinline__ bool is_nan(float v) { return v != v; }
static __device__ __forceinline__ bool is_nan(int) { return false; }

/* The identity of min (lowest = 0) or max (lowest = 1). */
template <typename T> static __host__ __device__ __forceinline__ T extreme_identity(bool max);
template <> __host__ __device__ __forceinline__ float extreme_identity<float>(bool max) { return max ? -INFINITY : INFINITY; }
template <> __host__ __device__ __forceinline__ int extreme_identity<int>(bool max) { return max ? INT_MIN : INT_MAX; }

template <typename T> struct sum_op {
    typedef T value;
    typedef typename sum_type<T>::type acc;
    static __host__ __device__ __forceinline__ acc identity() { return 0; }
    static __device__ __forceinline__ acc lift(T v, long long) { return (acc)v; }
    static __device__ __forceinline__ void add(acc &a, T v, long long) { a += (acc)v; }
    static __device__ __forceinline__ acc combine(acc a, acc b) { return a + b; }
    /* out: float sums or means; int64 sums or float64 means */
    static __device__ __forceinline__ void store(void *out, size_t lane, acc a, size_t len, bool mean)
    {
        if constexpr (std::is_same<T, float>::value)
            ((float *)out)[lane] = mean ? (float)(a / (double)len) : (float)a;
        else if (mean)
            ((double *)out)[lane] = (double)a / (double)len;
        else
            ((long long *)out)[lane] = a;
    }
};

template <typename T, bool MAX> struct extreme_op {
    typedef T value;
    typedef T acc;
    static __host__ __device__ __forceinline__ acc identity() { return extreme_identity<T>(MAX); }
    static __device__ __forceinline__ acc combine(acc a, acc b)
    {
        if (is_nan(a)) return a;
        if (is_nan(b)) return b;
        return MAX ? (b > a ? b : a) : (b < a ? b : a);
    }
    static __device__ __forceinline__ acc lift(T v, long long) { return v; }
    static __device__ __forceinline__ void add(acc &a, T v, long long) { a = combine(a, v); }
    static __device__ __forceinline__ void store(void *out, size_t lane, acc a, size_t, bool) { ((T *)out)[lane] = a; }
};

/* An index of LLONG_MAX marks the identity: no element seen yet. */
template <typename T> struct arg_acc {
    T v;
    long long i;
};

template <typename T, bool MAX> struct arg_op {
    typedef T value;
    typedef arg_acc<T> acc;
    static __host__ __device__ __forceinline__ acc identity() { return acc{extreme_identity<T>(MAX), LLONG_MAX}; }
    /* a and b in any order: NaN first (the lower index among NaNs), else the extreme, ties to
     * the lower index */
    static __device__ __forceinline__ acc combine(acc a, acc b)
    {
        const bool an = is_nan(a.v), bn = is_nan(b.v);
        if (an || bn) return an && (!bn || a.i < b.i) ? a : b;
        if (MAX ? b.v > a.v : b.v < a.v) return b;
        return b.v == a.v && b.i < a.i ? b : a;
    }
    static __device__ __forceinline__ acc lift(T v, long long i) { return acc{v, i}; }
    /* i above every index a holds (a thread's elements in index order) */
    static __device__ __forceinline__ void add(acc &a, T v, long long i)
    {
        if (is_nan(a.v)) return;
        if (a.i == LLONG_MAX || is_nan(v) || (MAX ? v > a.v : v < a.v)) a = acc{v, i};
    }
    static __device__ __forceinline__ void store(void *out, size_t lane, acc a, size_t, bool)
    {
        ((long long *)out)[lane] = a.i;
    }
};

/* Warp shuffles of each accumulator type. */
static __device__ __forceinline__ double shfl_down(double v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
static __device__ __forceinline__ long long shfl_down(long long v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
static __device__ __forceinline__ float shfl_down(float v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
static __device__ __forceinline__ int shfl_down(int v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
template <typename T> static __device__ __forceinline__ arg_acc<T> shfl_down(arg_acc<T> a, int d)
{
    return arg_acc<T>{shfl_down(a.v, d), shfl_down(a.i, d)};
}

/* Calls fn(op) with the operator of (dtype, kind): fn is a generic lambda that launches. */
template <typename T, typename Fn> static mh_status with_reduce_op_of(mh_reduce_kind kind, Fn &&fn)
{
    switch (kind) {
    case MH_REDUCE_MIN: return fn(extreme_op<T, false>{});
    case MH_REDUCE_MAX: return fn(extreme_op<T, true>{});
    case MH_REDUCE_ARGMIN: return fn(arg_op<T, false>{});
    case MH_REDUCE_ARGMAX: return fn(arg_op<T, true>{});
    default: return fn(sum_op<T>{});
    }
}

template <typename Fn> static mh_status with_reduce_op(mh_dtype dtype, mh_reduce_kind kind, Fn &&fn)
{
    return dtype == MH_F32 ? with_reduce_op_of<float>(kind, fn) : with_reduce_op_of<int>(kind, fn);
}

/* out[lane] from partials[s * lanes + lane], s = 0 .. splits - 1 combined in order (defined in
 * reduce_axis.cu): the last step of every split reduction and of CUB's. */
mh_status mh_reduce_finish(mh_context *ctx, const mh_reduce_args *a, const void *partials, size_t splits);

#endif

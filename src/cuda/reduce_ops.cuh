/* The reductions of mh_reduce as device operators, shared by the axis kernels (reduce_axis.cu)
 * and CUB's segmented reduce (adapters/reduce_cub.cu). Each operator has an accumulator type,
 * an identity, the accumulator of one element (lift), an in-order add of one element (value and index along the axis), an associative
 * combine and a store of the final result in mh_reduce's output type:
 *   sum_op<T, A>    float32 and float64 sums in double, signed integers in int64 and unsigned
 *                   ones in uint64 (wrapping, as numpy's); store rounds once (or divides: mean;
 *                   a 64-bit integer mean sums in double, as numpy's mean converts before it
 *                   adds)
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

/* numpy's accumulators: double for floats, int64 for signed integers, uint64 for unsigned ones */
template <typename T> struct sum_type {
    typedef typename std::conditional<std::is_floating_point<T>::value, double,
                                      typename std::conditional<std::is_signed<T>::value, long long,
                                                                unsigned long long>::type>::type type;
};

/* Four values of an 8-byte type: two 16-byte loads (load_vec), each on a 16-byte boundary. */
template <typename T> struct quad {
    T x, y, z, w;
};

template <typename T> struct vec4;
template <> struct vec4<float> { typedef float4 type; };
template <> struct vec4<int> { typedef int4 type; };
template <> struct vec4<double> { typedef quad<double> type; };
template <> struct vec4<long long> { typedef quad<long long> type; };
template <> struct vec4<signed char> { typedef char4 type; };
template <> struct vec4<unsigned char> { typedef uchar4 type; };
template <> struct vec4<short> { typedef short4 type; };
template <> struct vec4<unsigned short> { typedef ushort4 type; };
template <> struct vec4<unsigned> { typedef uint4 type; };
template <> struct vec4<unsigned long long> { typedef quad<unsigned long long> type; };
template <typename T> struct vec2;
template <> struct vec2<float> { typedef float2 type; };
template <> struct vec2<int> { typedef int2 type; };
template <> struct vec2<double> { typedef double2 type; };
template <> struct vec2<long long> { typedef longlong2 type; };
template <> struct vec2<signed char> { typedef char2 type; };
template <> struct vec2<unsigned char> { typedef uchar2 type; };
template <> struct vec2<short> { typedef short2 type; };
template <> struct vec2<unsigned short> { typedef ushort2 type; };
template <> struct vec2<unsigned> { typedef uint2 type; };
template <> struct vec2<unsigned long long> { typedef ulonglong2 type; };

/* A vector of vec4 or vec2 through the read-only cache (a quad as its two 16-byte halves). */
template <typename V> static __device__ __forceinline__ V load_vec(const V *p) { return __ldg(p); }
template <> __device__ __forceinline__ quad<double> load_vec(const quad<double> *p)
{
    const double2 a = __ldg(reinterpret_cast<const double2 *>(p)), b = __ldg(reinterpret_cast<const double2 *>(p) + 1);
    return quad<double>{a.x, a.y, b.x, b.y};
}
template <> __device__ __forceinline__ quad<long long> load_vec(const quad<long long> *p)
{
    const longlong2 a = __ldg(reinterpret_cast<const longlong2 *>(p)), b = __ldg(reinterpret_cast<const longlong2 *>(p) + 1);
    return quad<long long>{a.x, a.y, b.x, b.y};
}
template <> __device__ __forceinline__ quad<unsigned long long> load_vec(const quad<unsigned long long> *p)
{
    const ulonglong2 a = __ldg(reinterpret_cast<const ulonglong2 *>(p)),
                     b = __ldg(reinterpret_cast<const ulonglong2 *>(p) + 1);
    return quad<unsigned long long>{a.x, a.y, b.x, b.y};
}

static __device__ __forceinline__ bool is_nan(float v) { return v != v; }
static __device__ __forceinline__ bool is_nan(double v) { return v != v; }
template <typename T> static __device__ __forceinline__ bool is_nan(T)
{
    static_assert(std::is_integral<T>::value, "integers hold no NaN");
    return false;
}

/* The identity of min (lowest = 0) or max (lowest = 1): the type's largest or lowest value. */
template <typename T> static __host__ __device__ __forceinline__ T extreme_identity(bool max);
template <> __host__ __device__ __forceinline__ float extreme_identity<float>(bool max) { return max ? -INFINITY : INFINITY; }
template <> __host__ __device__ __forceinline__ double extreme_identity<double>(bool max) { return max ? -INFINITY : INFINITY; }
template <> __host__ __device__ __forceinline__ int extreme_identity<int>(bool max) { return max ? INT_MIN : INT_MAX; }
template <> __host__ __device__ __forceinline__ long long extreme_identity<long long>(bool max)
{
    return max ? LLONG_MIN : LLONG_MAX;
}
template <> __host__ __device__ __forceinline__ signed char extreme_identity<signed char>(bool max)
{
    return max ? SCHAR_MIN : SCHAR_MAX;
}
template <> __host__ __device__ __forceinline__ short extreme_identity<short>(bool max) { return max ? SHRT_MIN : SHRT_MAX; }
template <> __host__ __device__ __forceinline__ unsigned char extreme_identity<unsigned char>(bool max)
{
    return max ? 0 : UCHAR_MAX;
}
template <> __host__ __device__ __forceinline__ unsigned short extreme_identity<unsigned short>(bool max)
{
    return max ? 0 : USHRT_MAX;
}
template <> __host__ __device__ __forceinline__ unsigned extreme_identity<unsigned>(bool max) { return max ? 0u : UINT_MAX; }
template <> __host__ __device__ __forceinline__ unsigned long long extreme_identity<unsigned long long>(bool max)
{
    return max ? 0ull : ULLONG_MAX;
}

template <typename T, typename A = typename sum_type<T>::type> struct sum_op {
    typedef T value;
    typedef A acc;
    static __host__ __device__ __forceinline__ acc identity() { return 0; }
    static __device__ __forceinline__ acc lift(T v, long long) { return (acc)v; }
    /* integer sums wrap as numpy's do: added as unsigned (a signed overflow is undefined in C++) */
    static __device__ __forceinline__ acc wrap_add(acc a, acc b)
    {
        if constexpr (std::is_integral<acc>::value) return (acc)((unsigned long long)a + (unsigned long long)b);
        else return a + b;
    }
    static __device__ __forceinline__ void add(acc &a, T v, long long) { a = wrap_add(a, (acc)v); }
    static __device__ __forceinline__ acc combine(acc a, acc b) { return wrap_add(a, b); }
    /* out: float32 sums or means; float64 sums or means; int64 (signed) or uint64 (unsigned)
     * sums; float64 means */
    static __device__ __forceinline__ void store(void *out, size_t lane, acc a, size_t len, bool mean)
    {
        if constexpr (std::is_same<T, float>::value)
            ((float *)out)[lane] = mean ? (float)(a / (double)len) : (float)a;
        else if (mean)
            ((double *)out)[lane] = (double)a / (double)len;
        else if constexpr (std::is_same<T, double>::value)
            ((double *)out)[lane] = a;
        else if constexpr (std::is_unsigned<A>::value)
            ((unsigned long long *)out)[lane] = a;
        else
            ((long long *)out)[lane] = (long long)a;
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
static __device__ __forceinline__ unsigned shfl_down(unsigned v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
static __device__ __forceinline__ unsigned long long shfl_down(unsigned long long v, int d)
{
    return __shfl_down_sync(0xffffffffu, v, d);
}
/* 8- and 16-bit extremes travel as int */
static __device__ __forceinline__ signed char shfl_down(signed char v, int d) { return (signed char)shfl_down((int)v, d); }
static __device__ __forceinline__ unsigned char shfl_down(unsigned char v, int d) { return (unsigned char)shfl_down((int)v, d); }
static __device__ __forceinline__ short shfl_down(short v, int d) { return (short)shfl_down((int)v, d); }
static __device__ __forceinline__ unsigned short shfl_down(unsigned short v, int d)
{
    return (unsigned short)shfl_down((int)v, d);
}
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
    case MH_REDUCE_MEAN: /* 64-bit integers' means over the values' double sum, as numpy's */
        if constexpr (std::is_integral<T>::value && sizeof(T) == 8) return fn(sum_op<T, double>{});
        else return fn(sum_op<T>{});
    default: return fn(sum_op<T>{});
    }
}

/* The four dtypes CUB's row takes (float32, float64, int32, int64); reduce_axis.cu dispatches
 * every dtype by translation unit (reduce_job_of). */
template <typename Fn> static mh_status with_reduce_op(mh_dtype dtype, mh_reduce_kind kind, Fn &&fn)
{
    switch (dtype) {
    case MH_F32: return with_reduce_op_of<float>(kind, fn);
    case MH_F64: return with_reduce_op_of<double>(kind, fn);
    case MH_I64: return with_reduce_op_of<long long>(kind, fn);
    default: return with_reduce_op_of<int>(kind, fn);
    }
}

/* out[lane] from partials[s * lanes + lane], s = 0 .. splits - 1 combined in order (defined in
 * reduce_axis.cu): the last step of every split reduction and of CUB's. */
mh_status mh_reduce_finish(mh_context *ctx, const mh_reduce_args *a, const void *partials, size_t splits);

#endif

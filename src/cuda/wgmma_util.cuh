/* What the hand-written wgmma kernels (conv1d/tc, conv2d/tc) share besides the generated
 * instruction wrappers (wgmma_ops.cuh): the no-swizzle shared-memory descriptor and the
 * operand fence. sm_90a only. */
#ifndef MH_WGMMA_UTIL_CUH
#define MH_WGMMA_UTIL_CUH

/* A K-major operand without swizzle: core matrices of 8 rows x 16 bytes, each row's 16 bytes
 * (4 TF32 values of k) right after the previous row's; `lead` bytes from one core matrix to the
 * next along k, `stride` bytes to the next 8 rows. Both may overlap other core matrices: the
 * tensor cores only compute addresses, so shifted views of one array (Toeplitz matrices) cost
 * no copies. Addresses and offsets are in 16-byte units, 14 bits each. */
static __device__ __forceinline__ unsigned long long wgmma_desc(const void *smem, unsigned lead, unsigned stride)
{
    const unsigned addr = (unsigned)__cvta_generic_to_shared(smem);
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lead & 0x3FFFF) >> 4) << 16) |
           ((unsigned long long)((stride & 0x3FFFF) >> 4) << 32);
}

/* Keeps the compiler from moving accesses of v across the asynchronous wgmma. */
template <typename V, int N> static __device__ __forceinline__ void fence_operands(V (&v)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+r"(*reinterpret_cast<unsigned *>(&v[i]))::"memory");
}

#endif

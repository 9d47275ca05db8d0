/* The median-rows kernels alone, timed with events: median3x3x3 on a 256^3 volume and median3x3,
 * median5x5 and median7x7 on an 8192^2 image (float32 and uint8, reflect), for comparing builds of
 * rank_median.cuh (launch bounds, offsets, load order) without the library. Prints each
 * problem's best and median ms of 30 launches and a checksum of the output, so that two builds
 * can be checked to agree bit for bit.
 *   nvcc -O3 -arch=sm_90 --expt-relaxed-constexpr -Isrc/cuda -Isrc -Iinclude [-D...] \
 *        lab/tools/median_planes_bench.cu -o median_planes_bench */
#include "rank_median.cuh"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

static const char *only; /* argv[1]: run only the problems whose name holds it */

/* Volume: a volume of n^3 (median3x3x3); else an image of n^2 (median3x3, 5x5, 7x7). */
template <typename T, int Side, bool Volume = false> static void run(const char *name, int n)
{
    if (only && !strstr(name, only)) return;
    const bool volume = Volume;
    const size_t values = (size_t)n * n * (volume ? n : 1);
    std::vector<T> host(values);
    uint64_t s = 12345;
    for (auto &v : host) { /* dark beside bright: wide-range values, ties in uint8 */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v = (T)(sizeof(T) == 1 ? (double)(s >> 56) : ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 1e6);
    }
    T *in, *out;
    cudaMalloc(&in, values * sizeof(T));
    cudaMalloc(&out, values * sizeof(T));
    cudaMemcpy(in, host.data(), values * sizeof(T), cudaMemcpyHostToDevice);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const size_t line_values = volume ? (size_t)n * n : (size_t)n;
    size_t segment = MEDIAN3_SEGMENT_MAX;
    while (segment > MEDIAN3_SEGMENT_MIN && line_values * mh_ceil_div((size_t)n, segment) < (size_t)sms * MEDIAN3_THREADS_PER_SM)
        segment /= 2;
    median3_params p = {in, out, sizeof(T) == 1 ? MH_U8 : MH_F32, n, n, 1, volume ? 1 : Side / 2, Side / 2,
                        (int)MH_MODE_REFLECT, 0, line_values, 1, segment, mh_ceil_div((size_t)n, segment), n, Side / 2};
    const dim3 grid((unsigned)mh_ceil_div(line_values, (size_t)MEDIAN3_THREADS), (unsigned)p.segments);
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    std::vector<float> ms;
    for (int i = 0; i < 33; ++i) {
        cudaEventRecord(a);
        if constexpr (Volume) rank_median_planes_kernel<T, true><<<grid, MEDIAN3_THREADS>>>(p);
        else if constexpr (Side == 3) rank_median3_kernel<T, true><<<grid, MEDIAN3_THREADS>>>(p);
        else rank_median_rows_kernel<T, true, Side><<<grid, MEDIAN3_THREADS>>>(p);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float t = 0;
        cudaEventElapsedTime(&t, a, b);
        if (i >= 3) ms.push_back(t);
    }
    std::vector<T> y(values);
    cudaMemcpy(y.data(), out, values * sizeof(T), cudaMemcpyDeviceToHost);
    uint64_t sum = 0;
    for (size_t i = 0; i < values; ++i) {
        uint64_t bits = 0;
        memcpy(&bits, &y[i], sizeof(T));
        sum = sum * 1099511628211ull + bits;
    }
    std::sort(ms.begin(), ms.end());
    printf("%s %d^%d: best %.4f ms, median %.4f ms, checksum %016llx, segment %zu, %s\n", name, n, volume ? 3 : 2, ms[0], ms[ms.size() / 2],
           (unsigned long long)sum, segment, cudaGetErrorString(cudaGetLastError()));
    cudaFree(in), cudaFree(out);
}

int main(int argc, char **argv)
{
    only = argc > 1 ? argv[1] : NULL;
    run<float, 3, true>("3x3x3 float32", 256);
    run<uint8_t, 3, true>("3x3x3 uint8", 256);
    run<float, 3>("3x3 float32", 8192);
    run<uint8_t, 3>("3x3 uint8", 8192);
    run<float, 5>("5x5 float32", 8192);
    run<uint8_t, 5>("5x5 uint8", 8192);
    run<float, 7>("7x7 float32", 8192);
    run<uint8_t, 7>("7x7 uint8", 8192);
    return 0;
}

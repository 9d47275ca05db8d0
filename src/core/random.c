#include "random.h"

void mh_fill_uniform(float *p, size_t n, uint64_t seed, float scale)
{
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; ++i) p[i] = mh_hash_uniform(seed, (uint64_t)i) * scale;
}

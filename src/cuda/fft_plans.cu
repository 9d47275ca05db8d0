/* The context's cache of cuFFT plans (fft_plans.h). */
#include "fft_plans.h"

#include <stdlib.h>

typedef struct fft_cache {
    mh_fft_plan plans[MH_FFT_PLAN_CACHE];
    unsigned long long clock;
} fft_cache;

static void destroy_cache(void *p)
{
    fft_cache *c = (fft_cache *)p;
    for (int i = 0; i < MH_FFT_PLAN_CACHE; ++i)
        if (c->plans[i].count) mh_cufft.cufftDestroy(c->plans[i].handle);
    free(c);
}

static mh_status fft_fail(mh_context *ctx, const char *who, cufftResult r, const char *what)
{
    return mh_fail(ctx, r == CUFFT_ALLOC_FAILED ? MH_ERR_OUT_OF_MEMORY : MH_ERR_VENDOR,
                   "%s: cuFFT %s failed (cufftResult %d)", who, what, (int)r);
}

static mh_status cache_of(mh_context *ctx, const char *who, fft_cache **out)
{
    mh_slot *slot = mh_context_slot(ctx, MH_SLOT_FFT_OS);
    if (!slot) return MH_ERR_CUDA;
    if (!slot->data) {
        if (!(slot->data = calloc(1, sizeof(fft_cache))))
            return mh_fail(ctx, MH_ERR_OUT_OF_MEMORY, "%s: the cuFFT plan cache: out of host memory", who);
        slot->destroy = destroy_cache;
    }
    *out = (fft_cache *)slot->data;
    return MH_OK;
}

static int same_plan(const mh_fft_plan *p, int rank, const long long *dims, long long count, cufftType type,
                     long long idist)
{
    return p->count == count && p->rank == rank && p->dims[0] == dims[0] && (rank == 1 || p->dims[1] == dims[1]) &&
           p->type == type && p->idist == idist;
}

static cufftResult make_plan(cufftHandle h, int rank, const long long *dims, long long count, cufftType type,
                             long long idist, size_t *work)
{
    long long n[2] = {dims[0], rank == 2 ? dims[1] : 0};
    if (!idist) return mh_cufft.cufftMakePlanMany64(h, rank, n, NULL, 1, 0, NULL, 1, 0, type, count, work);
    long long inembed = n[0], onembed = n[0] / 2 + 1;
    return mh_cufft.cufftMakePlanMany64(h, 1, n, &inembed, 1, idist, &onembed, 1, onembed, type, count, work);
}

mh_status mh_fft_plan_get(mh_context *ctx, const char *who, int rank, const long long *dims, long long count,
                          cufftType type, long long idist, mh_fft_plan **out)
{
    fft_cache *c = NULL;
    mh_status s = cache_of(ctx, who, &c);
    if (s != MH_OK) return s;
    mh_fft_plan *victim = &c->plans[0];
    for (int i = 0; i < MH_FFT_PLAN_CACHE; ++i) {
        mh_fft_plan *p = &c->plans[i];
        if (same_plan(p, rank, dims, count, type, idist)) {
            p->used = ++c->clock;
            *out = p;
            return MH_OK;
        }
        if (p->used < victim->used) victim = p;
    }
    if (victim->count) mh_cufft.cufftDestroy(victim->handle);
    victim->count = 0;
    cufftHandle h;
    size_t work = 0;
    cufftResult r = mh_cufft.cufftCreate(&h);
    if (r != CUFFT_SUCCESS) return fft_fail(ctx, who, r, "create");
    r = mh_cufft.cufftSetAutoAllocation(h, 0);
    if (r == CUFFT_SUCCESS) r = make_plan(h, rank, dims, count, type, idist, &work);
    if (r != CUFFT_SUCCESS) {
        mh_cufft.cufftDestroy(h);
        return fft_fail(ctx, who, r, "plan");
    }
    victim->rank = rank, victim->dims[0] = dims[0], victim->dims[1] = rank == 2 ? dims[1] : 0;
    victim->count = count, victim->type = type, victim->idist = idist, victim->handle = h;
    victim->work_bytes = work, victim->used = ++c->clock;
    *out = victim;
    return MH_OK;
}

mh_status mh_fft_exec(mh_context *ctx, const char *who, const mh_fft_plan *p, void *work, void *in, void *out,
                      int dir)
{
    cufftResult r = mh_cufft.cufftSetStream(p->handle, mh_stream(ctx));
    if (r == CUFFT_SUCCESS) r = mh_cufft.cufftSetWorkArea(p->handle, work);
    if (r == CUFFT_SUCCESS) {
        if (p->type == CUFFT_R2C) r = mh_cufft.cufftExecR2C(p->handle, (cufftReal *)in, (cufftComplex *)out);
        else if (p->type == CUFFT_C2R) r = mh_cufft.cufftExecC2R(p->handle, (cufftComplex *)in, (cufftReal *)out);
        else r = mh_cufft.cufftExecC2C(p->handle, (cufftComplex *)in, (cufftComplex *)out, dir);
    }
    return r == CUFFT_SUCCESS ? MH_OK
                              : fft_fail(ctx, who, r, p->type == CUFFT_R2C ? "R2C" : p->type == CUFFT_C2R ? "C2R" : "C2C");
}

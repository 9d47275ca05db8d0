/* A filter as a sum of r outer products, f ~ sum_t u_t v_t^T (conv2d/separable at r = 1,
 * conv2d/lowrank up to MH_LOWRANK_MAX_RANK): the singular value decomposition in double
 * (one-sided Jacobi), the factors rounded to float32, and the smallest r whose error stays
 * within the per-element bound at every tap, whatever the image.
 *
 * Why per tap: an output is sum_ij f_ij x_ij, and a factored filter computes
 * sum_ij g_ij x_ij (g = sum_t u_t v_t^T in the float factors) with its passes' rounding on top.
 * An image may put all its weight under one tap, so the error of every tap must be inside
 * that tap's share of the bound, mh_sum_rtol(taps) |f_ij|:
 *     |g_ij - f_ij| + c eps32 a_ij <= MH_LOWRANK_BOUND_SHARE mh_sum_rtol(taps) |f_ij|,
 * with a_ij = sum_t |u_t,i| |v_t,j| (the magnitude the passes round) and c = 2 sqrt(krows +
 * kcols) (the rounding of a row pass and a column pass in FMA chains of those lengths; the
 * worst case is krows + kcols). Where a tap underflows (or is zero and so is every product
 * at it) an error up to FLT_MIN passes. */
#include "internal.h"
#include "verify.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The share of the per-element bound a factored filter's own error may take; the rest is
 * left to what the reference comparison allows for the accumulation order. */
#define MH_LOWRANK_BOUND_SHARE 0.75

/* a (m x n, row-major) = sum_k w_k[i] z_k[j] over n columns k, written into w (m x n:
 * column k is w_k, of norm sigma_k) and z (n x n: column k is z_k, unit), sorted by sigma
 * descending. One-sided Jacobi: rotate pairs of columns of a until all are orthogonal;
 * z accumulates the rotations, so a z = w and a = w z^T. */
static void jacobi_svd(const double *a, int m, int n, double *w, double *z, double *sigma)
{
    memcpy(w, a, sizeof(double) * (size_t)m * n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) z[i * n + j] = i == j;
    for (int sweep = 0; sweep < 60; ++sweep) {
        int rotated = 0;
        for (int p = 0; p < n - 1; ++p)
            for (int q = p + 1; q < n; ++q) {
                double alpha = 0, beta = 0, gamma = 0;
                for (int i = 0; i < m; ++i) {
                    const double x = w[i * n + p], y = w[i * n + q];
                    alpha += x * x, beta += y * y, gamma += x * y;
                }
                if (gamma == 0.0 || fabs(gamma) <= 1e-17 * sqrt(alpha * beta)) continue;
                const double zeta = (beta - alpha) / (2.0 * gamma);
                const double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                const double c = 1.0 / sqrt(1.0 + t * t), s = c * t;
                for (int i = 0; i < m; ++i) {
                    const double x = w[i * n + p], y = w[i * n + q];
                    w[i * n + p] = c * x - s * y, w[i * n + q] = s * x + c * y;
                }
                for (int i = 0; i < n; ++i) {
                    const double x = z[i * n + p], y = z[i * n + q];
                    z[i * n + p] = c * x - s * y, z[i * n + q] = s * x + c * y;
                }
                rotated = 1;
            }
        if (!rotated) break;
    }
    int order[MH_CONV2D_DIRECT_MAX_K];
    for (int k = 0; k < n; ++k) {
        double s = 0;
        for (int i = 0; i < m; ++i) s += w[i * n + k] * w[i * n + k];
        sigma[k] = sqrt(s), order[k] = k;
    }
    for (int k = 1; k < n; ++k) /* insertion sort, descending */
        for (int j = k; j > 0 && sigma[order[j]] > sigma[order[j - 1]]; --j) {
            const int o = order[j];
            order[j] = order[j - 1], order[j - 1] = o;
        }
    double tw[MH_CONV2D_DIRECT_MAX_K * MH_CONV2D_DIRECT_MAX_K], tz[MH_CONV2D_DIRECT_MAX_K * MH_CONV2D_DIRECT_MAX_K], ts[MH_CONV2D_DIRECT_MAX_K];
    for (int k = 0; k < n; ++k) {
        ts[k] = sigma[order[k]];
        for (int i = 0; i < m; ++i) tw[i * n + k] = w[i * n + order[k]];
        for (int i = 0; i < n; ++i) tz[i * n + k] = z[i * n + order[k]];
    }
    memcpy(w, tw, sizeof(double) * (size_t)m * n), memcpy(z, tz, sizeof(double) * (size_t)n * n);
    memcpy(sigma, ts, sizeof(double) * (size_t)n);
}

/* Term t's factors in float32, each carrying sqrt(sigma_t) (so neither over- nor underflows
 * first): u = w_t / sqrt(sigma_t), v = z_t sqrt(sigma_t). */
static void round_term(const double *w, const double *z, const double *sigma, int m, int n, int t, float *u,
                       float *v)
{
    const double root = sqrt(sigma[t]);
    for (int i = 0; i < m; ++i) u[i] = root > 0 ? (float)(w[i * n + t] / root) : 0.0f;
    for (int j = 0; j < n; ++j) v[j] = (float)(z[j * n + t] * root);
}

/* Whether terms 0..r-1 (u, v: r rows of krows and kcols) hold every tap; *fit the worst. */
static int terms_fit(const float *f, int krows, int kcols, int r, const float *u, const float *v, mh_lowrank_fit *fit)
{
    const double share = MH_LOWRANK_BOUND_SHARE * mh_sum_rtol((size_t)krows * kcols);
    const double c = 2.0 * sqrt((double)(krows + kcols)) * FLT_EPSILON;
    int ok = 1;
    fit->ratio = 0.0;
    for (int i = 0; i < krows; ++i)
        for (int j = 0; j < kcols; ++j) {
            double g = 0, mag = 0;
            for (int t = 0; t < r; ++t) {
                g += (double)u[t * krows + i] * v[t * kcols + j];
                mag += fabs((double)u[t * krows + i] * v[t * kcols + j]);
            }
            const double tap = f[i * kcols + j], err = fabs(g - tap) + c * mag, limit = share * fabs(tap);
            const int fits = err <= limit || err <= FLT_MIN;
            const double ratio = fits ? (limit > 0 ? err / limit : 0.0) : limit > 0 ? err / limit : INFINITY;
            if ((ok && !fits) || (ok == fits && ratio > fit->ratio))
                fit->row = i, fit->col = j, fit->tap = tap, fit->fitted = g, fit->ratio = ratio;
            ok = ok && fits;
        }
    return ok;
}

int mh_lowrank_factor(const float *f, int krows, int kcols, int max_rank, float *u, float *v, mh_lowrank_fit *fit)
{
    memset(fit, 0, sizeof *fit);
    fit->rank = -1;
    if (krows < 1 || kcols < 1 || krows > MH_CONV2D_DIRECT_MAX_K || kcols > MH_CONV2D_DIRECT_MAX_K) return -1;
    for (int i = 0; i < krows * kcols; ++i)
        if (!isfinite(f[i])) {
            fit->row = i / kcols, fit->col = i % kcols, fit->tap = f[i], fit->fitted = NAN, fit->ratio = INFINITY;
            return -1;
        }
    /* the decomposition of the filter or of its transpose, whichever has fewer columns */
    const int tall = krows >= kcols, m = tall ? krows : kcols, n = tall ? kcols : krows;
    double a[MH_CONV2D_DIRECT_MAX_K * MH_CONV2D_DIRECT_MAX_K], w[MH_CONV2D_DIRECT_MAX_K * MH_CONV2D_DIRECT_MAX_K];
    double z[MH_CONV2D_DIRECT_MAX_K * MH_CONV2D_DIRECT_MAX_K], sigma[MH_CONV2D_DIRECT_MAX_K];
    for (int i = 0; i < krows; ++i)
        for (int j = 0; j < kcols; ++j) a[tall ? i * kcols + j : j * krows + i] = f[i * kcols + j];
    jacobi_svd(a, m, n, w, z, sigma);
    fit->sigma1 = sigma[0];
    const int most = max_rank < n ? max_rank : n;
    /* from one term: the zero filter is one term of zeros, so that 0 x Inf is NaN as in the sum */
    for (int r = 1; r <= most; ++r) {
        /* term r - 1: u along the filter's rows (krows), v along its columns */
        if (tall) round_term(w, z, sigma, m, n, r - 1, u + (r - 1) * krows, v + (r - 1) * kcols);
        else round_term(w, z, sigma, m, n, r - 1, v + (r - 1) * kcols, u + (r - 1) * krows);
        if (terms_fit(f, krows, kcols, r, u, v, fit)) {
            fit->rank = r;
            fit->dropped = r < n ? sigma[r] : 0.0;
            return r;
        }
    }
    fit->dropped = most < n ? sigma[most] : 0.0;
    return -1;
}

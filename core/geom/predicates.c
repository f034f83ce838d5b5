#include "geom/predicates.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* Adaptive-precision predicates after J. R. Shewchuk, "Adaptive Precision
 * Floating-Point Arithmetic and Fast Robust Geometric Predicates" (1997).
 *
 * Each predicate runs up to three stages:
 *   A. the plain floating-point determinant, accepted when it is farther
 *      from zero than a static bound on its rounding error;
 *   B. the determinant of the already rounded coordinate differences,
 *      computed exactly; exact outright when those differences were exact
 *      (integer-like or nearby coordinates: the usual degenerate case),
 *      otherwise accepted against a tighter bound;
 *   C. the exact determinant of the exact differences.
 * Expansions are arrays of doubles sorted by increasing magnitude whose
 * components do not overlap; their sum is the exact value. Everything
 * relies on IEEE binary64 round-to-nearest-even and on no fused multiply-add
 * (the build passes -ffp-contract=off). Overflow and underflow are not
 * handled: coordinates must stay within about 1e±70 for incircle and
 * 1e±150 for orient2d. */

#define PM__EPS 0x1p-53  /* half an ulp of 1: the unit roundoff */
static const double pm__splitter = 0x1p27 + 1.0;

/* Error-bound factors from Shewchuk's analysis for the two filter stages. */
#define PM__ORIENT_A ((3.0 + 16.0 * PM__EPS) * PM__EPS)
#define PM__ORIENT_B ((2.0 + 12.0 * PM__EPS) * PM__EPS)
/* incircle's first bound, (10 + 96 eps) eps, is inlined in pm_incircle_fast
 * (geom/predicates.h) as 1.1102230246251577e-15. */
#define PM__INCIRCLE_B ((4.0 + 48.0 * PM__EPS) * PM__EPS)

/* ---- error-free transformations ----------------------------------------- */

/* a + b = *hi + *lo exactly, *hi = fl(a + b). Knuth's branch-free form. */
static inline void pm__two_sum(double a, double b, double *hi, double *lo) {
    double s = a + b;
    double bv = s - a;
    double av = s - bv;
    *hi = s;
    *lo = (a - av) + (b - bv);
}

static inline void pm__two_diff(double a, double b, double *hi, double *lo) {
    pm__two_sum(a, -b, hi, lo);
}

/* Splits a into two 26-bit halves (Dekker) so their products are exact. */
static inline void pm__split(double a, double *hi, double *lo) {
    double c = pm__splitter * a;
    double big = c - a;
    *hi = c - big;
    *lo = a - *hi;
}

/* a * b = *hi + *lo exactly, *hi = fl(a * b). */
static inline void pm__two_product(double a, double b, double *hi, double *lo) {
    double ah, al, bh, bl;
    double p = a * b;
    pm__split(a, &ah, &al);
    pm__split(b, &bh, &bl);
    double e1 = p - ah * bh;
    double e2 = e1 - al * bh;
    double e3 = e2 - ah * bl;
    *hi = p;
    *lo = al * bl - e3;
}

/* ---- expansion arithmetic ----------------------------------------------- */

/* h = e + f, zero components dropped. Merges by magnitude, then carries a
 * running sum through two_sum; valid for nonoverlapping inputs under
 * round-to-even (Shewchuk, Theorem 13). h needs ne + nf room. Returns the
 * length of h. */
static int pm__exp_sum(const double *e, int ne, const double *f, int nf, double *h) {
    int i = 0, j = 0, n = 0;
    double q = 0.0;
    bool first = true;
    while (i < ne || j < nf) {
        double g;
        if (j >= nf || (i < ne && fabs(e[i]) < fabs(f[j]))) g = e[i++];
        else g = f[j++];
        if (first) {
            q = g;
            first = false;
            continue;
        }
        double lo;
        pm__two_sum(q, g, &q, &lo);
        if (lo != 0.0) h[n++] = lo;
    }
    if (q != 0.0) h[n++] = q;
    return n;
}

/* h = b * e, zero components dropped (Shewchuk, Theorem 19). h needs 2 * ne
 * room. */
static int pm__exp_scale(const double *e, int ne, double b, double *h) {
    int n = 0;
    if (ne == 0) return 0;
    double q, lo;
    pm__two_product(e[0], b, &q, &lo);
    if (lo != 0.0) h[n++] = lo;
    for (int i = 1; i < ne; i++) {
        double phi, plo, sum;
        pm__two_product(e[i], b, &phi, &plo);
        pm__two_sum(q, plo, &sum, &lo);
        if (lo != 0.0) h[n++] = lo;
        pm__two_sum(phi, sum, &q, &lo);
        if (lo != 0.0) h[n++] = lo;
    }
    if (q != 0.0) h[n++] = q;
    return n;
}

#define PM__MUL_MAX 512  /* largest product built here: 16 x 16 components */

/* h = e * f as the sum of e scaled by each component of f. h needs
 * 2 * ne * nf room, at most PM__MUL_MAX. */
static int pm__exp_mul(const double *e, int ne, const double *f, int nf, double *h) {
    double part[2 * 16], acc[PM__MUL_MAX];
    assert(2 * ne * nf <= PM__MUL_MAX && ne <= 16);
    int n = 0;
    for (int j = 0; j < nf; j++) {
        int np = pm__exp_scale(e, ne, f[j], part);
        int na = pm__exp_sum(h, n, part, np, acc);
        memcpy(h, acc, (size_t)na * sizeof *h);
        n = na;
    }
    return n;
}

static int pm__exp_negate(double *e, int n) {
    for (int i = 0; i < n; i++) e[i] = -e[i];
    return n;
}

/* A double with the exact sign of expansion e and roughly its value. The
 * rounded sum of the components is the better magnitude, but only the
 * largest component is guaranteed to carry the sign. */
static double pm__exp_value(const double *e, int n) {
    if (n == 0) return 0.0;
    double s = 0.0;
    for (int i = 0; i < n; i++) s += e[i];
    double top = e[n - 1];
    return (s > 0.0) == (top > 0.0) && s != 0.0 ? s : top;
}

/* A coordinate difference a - b as an expansion: exact (up to two
 * components), and its rounded value alone for stage B. */
typedef struct pm__diff { double v[2]; int n; } pm__diff;

static pm__diff pm__diff_exact(double a, double b) {
    pm__diff d = {{0, 0}, 0};
    double hi, lo;
    pm__two_diff(a, b, &hi, &lo);
    if (lo != 0.0) d.v[d.n++] = lo;
    if (hi != 0.0) d.v[d.n++] = hi;
    return d;
}

static pm__diff pm__diff_rounded(const pm__diff *d) {
    pm__diff r = {{0, 0}, 0};
    if (d->n > 0) r.v[r.n++] = d->v[d->n - 1];
    return r;
}

/* ---- orient2d ----------------------------------------------------------- */

/* Exact (ax-cx)(by-cy) - (ay-cy)(bx-cx) for the given differences. */
static double pm__orient_exact(const pm__diff *acx, const pm__diff *bcy,
                               const pm__diff *acy, const pm__diff *bcx) {
    double l[8], r[8], det[16];
    int nl = pm__exp_mul(acx->v, acx->n, bcy->v, bcy->n, l);
    int nr = pm__exp_mul(acy->v, acy->n, bcx->v, bcx->n, r);
    pm__exp_negate(r, nr);
    return pm__exp_value(det, pm__exp_sum(l, nl, r, nr, det));
}

static double pm__orient_adapt(const double a[2], const double b[2], const double c[2],
                               double detsum) {
    pm__diff acx = pm__diff_exact(a[0], c[0]), bcy = pm__diff_exact(b[1], c[1]);
    pm__diff acy = pm__diff_exact(a[1], c[1]), bcx = pm__diff_exact(b[0], c[0]);
    pm__diff racx = pm__diff_rounded(&acx), rbcy = pm__diff_rounded(&bcy);
    pm__diff racy = pm__diff_rounded(&acy), rbcx = pm__diff_rounded(&bcx);
    double det = pm__orient_exact(&racx, &rbcy, &racy, &rbcx);
    bool diffs_exact = acx.n <= 1 && bcy.n <= 1 && acy.n <= 1 && bcx.n <= 1;
    if (diffs_exact || fabs(det) >= PM__ORIENT_B * detsum) return det;
    return pm__orient_exact(&acx, &bcy, &acy, &bcx);
}

double pm_orient2d(const double a[2], const double b[2], const double c[2]) {
    double left = (a[0] - c[0]) * (b[1] - c[1]);
    double right = (a[1] - c[1]) * (b[0] - c[0]);
    double det = left - right;
    double detsum;
    /* Opposite signs (or a zero term) cannot cancel: the sign is already right. */
    if (left > 0.0) {
        if (right <= 0.0) return det;
        detsum = left + right;
    } else if (left < 0.0) {
        if (right >= 0.0) return det;
        detsum = -left - right;
    } else {
        return det;
    }
    if (fabs(det) >= PM__ORIENT_A * detsum) return det;
    return pm__orient_adapt(a, b, c, detsum);
}

double pm_orient_xz(const double a[2], const double b[2], const double c[2]) {
    /* Seen from +Y the z axis points down the screen, mirroring (x, z). */
    return -pm_orient2d(a, b, c);
}

/* ---- incircle ----------------------------------------------------------- */

/* Exact sum of lift(p) * cross(q, r) over the cyclic triples, where
 * lift(p) = px^2 + py^2 and cross(q, r) = qx*ry - rx*qy, for differences
 * from d given as expansions (dx[i], dy[i]) of a, b, c. */
static double pm__incircle_exact(const pm__diff dx[3], const pm__diff dy[3]) {
    double total[1536], next[1536];
    int nt = 0;
    for (int i = 0; i < 3; i++) {
        const pm__diff *px = &dx[i], *py = &dy[i];
        const pm__diff *qx = &dx[(i + 1) % 3], *qy = &dy[(i + 1) % 3];
        const pm__diff *rx = &dx[(i + 2) % 3], *ry = &dy[(i + 2) % 3];
        double xx[8], yy[8], lift[16], qr[8], rq[8], cross[16], term[PM__MUL_MAX];
        int nxx = pm__exp_mul(px->v, px->n, px->v, px->n, xx);
        int nyy = pm__exp_mul(py->v, py->n, py->v, py->n, yy);
        int nlift = pm__exp_sum(xx, nxx, yy, nyy, lift);
        int nqr = pm__exp_mul(qx->v, qx->n, ry->v, ry->n, qr);
        int nrq = pm__exp_mul(rx->v, rx->n, qy->v, qy->n, rq);
        pm__exp_negate(rq, nrq);
        int ncross = pm__exp_sum(qr, nqr, rq, nrq, cross);
        int nterm = pm__exp_mul(lift, nlift, cross, ncross, term);
        nt = pm__exp_sum(total, nt, term, nterm, next);
        memcpy(total, next, (size_t)nt * sizeof *total);
    }
    return pm__exp_value(total, nt);
}

static double pm__incircle_adapt(const double *p[3], const double d[2], double permanent) {
    pm__diff dx[3], dy[3], rdx[3], rdy[3];
    bool diffs_exact = true;
    for (int i = 0; i < 3; i++) {
        dx[i] = pm__diff_exact(p[i][0], d[0]);
        dy[i] = pm__diff_exact(p[i][1], d[1]);
        rdx[i] = pm__diff_rounded(&dx[i]);
        rdy[i] = pm__diff_rounded(&dy[i]);
        diffs_exact = diffs_exact && dx[i].n <= 1 && dy[i].n <= 1;
    }
    double det = pm__incircle_exact(rdx, rdy);
    if (diffs_exact || fabs(det) >= PM__INCIRCLE_B * permanent) return det;
    return pm__incircle_exact(dx, dy);
}

double pm__incircle_refine(const double a[2], const double b[2], const double c[2],
                           const double d[2], double permanent) {
    const double *p[3] = {a, b, c};
    return pm__incircle_adapt(p, d, permanent);
}

double pm_incircle(const double a[2], const double b[2], const double c[2],
                   const double d[2]) {
    return pm_incircle_fast(a, b, c, d);
}

/* ---- segments ----------------------------------------------------------- */

static int pm__sign(double v) { return (v > 0.0) - (v < 0.0); }

/* Whether p, known collinear with a and b, lies on the closed segment ab. */
static bool pm__within(const double a[2], const double b[2], const double p[2]) {
    return fmin(a[0], b[0]) <= p[0] && p[0] <= fmax(a[0], b[0]) &&
           fmin(a[1], b[1]) <= p[1] && p[1] <= fmax(a[1], b[1]);
}

bool pm_segments_intersect(const double a[2], const double b[2],
                           const double c[2], const double d[2]) {
    int o1 = pm__sign(pm_orient2d(a, b, c)), o2 = pm__sign(pm_orient2d(a, b, d));
    int o3 = pm__sign(pm_orient2d(c, d, a)), o4 = pm__sign(pm_orient2d(c, d, b));
    if (o1 * o2 < 0 && o3 * o4 < 0) return true;
    return (o1 == 0 && pm__within(a, b, c)) || (o2 == 0 && pm__within(a, b, d)) ||
           (o3 == 0 && pm__within(c, d, a)) || (o4 == 0 && pm__within(c, d, b));
}

bool pm_segments_cross(const double a[2], const double b[2],
                       const double c[2], const double d[2]) {
    int o1 = pm__sign(pm_orient2d(a, b, c)), o2 = pm__sign(pm_orient2d(a, b, d));
    int o3 = pm__sign(pm_orient2d(c, d, a)), o4 = pm__sign(pm_orient2d(c, d, b));
    return o1 * o2 < 0 && o3 * o4 < 0;
}

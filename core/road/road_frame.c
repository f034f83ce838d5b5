#include "road/road_internal.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "geom/hypot4.h"
#include "scene/result.h"

/* Sections along the centre line: plan tangents (mitred at linear
 * corners), slopes, curvature, banking, and the frame of each section. */

/* pm__plan_tangent at a linear corner (corner) or a cusp (l ~ 0). */
static void pm__plan_tangent_slow(const pm__ctx *x, const pm_curve_sample *smp, size_t n, size_t i,
                                  const double d1[3], double l, double t[2], double *miter, bool corner) {
    const pm_spline *s = &x->spline;
    size_t prev = i > 0 ? i - 1 : (s->closed ? n - 2 : 0);
    size_t next = i + 1 < n ? i + 1 : (s->closed ? 1 : i);
    if (corner) {
        double in[2] = {smp[i].p[0] - smp[prev].p[0], smp[i].p[2] - smp[prev].p[2]};
        double out[2] = {smp[next].p[0] - smp[i].p[0], smp[next].p[2] - smp[i].p[2]};
        double li = hypot(in[0], in[1]), lo = hypot(out[0], out[1]);
        double b[2] = {in[0] / li + out[0] / lo, in[1] / li + out[1] / lo};
        double lb = hypot(b[0], b[1]);
        if (lb > 1e-6) {
            t[0] = b[0] / lb;
            t[1] = b[1] / lb;
            double c = (t[0] * out[0] + t[1] * out[1]) / lo;   /* cos(half turn) */
            *miter = c > 0.25 ? 1.0 / c : 4.0;
            return;
        }
    }
    if (l > 1e-12) {
        t[0] = d1[0] / l;
        t[1] = d1[2] / l;
        return;
    }
    /* A cusp (uniform Catmull-Rom can have them): follow the chord. */
    size_t a = i > 0 ? prev : i, b = i > 0 ? i : next;
    double c[2] = {smp[b].p[0] - smp[a].p[0], smp[b].p[2] - smp[a].p[2]};
    double lc = hypot(c[0], c[1]);
    t[0] = lc > 0.0 ? c[0] / lc : 1.0;
    t[1] = lc > 0.0 ? c[1] / lc : 0.0;
}

/* Plan tangent, miter factor for linear corners (l: the plan length of d1). */
static inline void pm__plan_tangent(const pm__ctx *x, const pm_curve_sample *smp, size_t n, size_t i,
                                    const double d1[3], double l, double t[2], double *miter) {
    const pm_spline *s = &x->spline;
    *miter = 1.0;
    double ti = smp[i].t;
    bool corner = s->kind == PM_CURVE_LINEAR && ti == floor(ti) &&
                  (s->closed || (ti > 0.0 && ti < (double)s->nseg));
    if (corner || !(l > 1e-12)) {
        pm__plan_tangent_slow(x, smp, n, i, d1, l, t, miter, corner);
        return;
    }
    t[0] = d1[0] / l;
    t[1] = d1[2] / l;
}

/* The plan length of the step from sample a to sample b, remembered: the
 * step after sample i is the step before sample i + 1. */
typedef struct pm__step {
    size_t a, b;
    double len;
} pm__step;

static double pm__plan_step(const pm_curve_sample *smp, size_t a, size_t b, pm__step *last) {
    if (last->a == a && last->b == b) return last->len;
    double len = hypot(smp[b].p[0] - smp[a].p[0], smp[b].p[2] - smp[a].p[2]);
    *last = (pm__step){a, b, len};
    return len;
}

/* Slope dy / d(plan distance) at sample i (d1: the curve's derivative
 * there, l its plan length). */
static double pm__slope(const pm__ctx *x, const pm_curve_sample *smp, size_t n, size_t i,
                        const double d1[3], double l, pm__step *last) {
    const pm_spline *s = &x->spline;
    if (!x->p->terrain) return l > 1e-12 ? d1[1] / l : 0.0;
    size_t prev = i > 0 ? i - 1 : (s->closed ? n - 2 : 0);
    size_t next = i + 1 < n ? i + 1 : (s->closed ? 1 : i);
    double before = pm__plan_step(smp, prev, i, last);
    double d = before + pm__plan_step(smp, i, next, last);
    return d > 0.0 ? (smp[next].p[1] - smp[prev].p[1]) / d : 0.0;
}

/* Bank before smoothing: curvature share plus interpolated per-point roll. */
static double pm__raw_bank(const pm__ctx *x, const pm__section *sc) {
    const pm_road_params *p = x->p;
    double b = 0.0;
    /* A draped section lies on the terrain: there is nothing to bank, and
     * props must not roll with a bank the surface does not have. */
    if (p->terrain && p->conform == PM_ROAD_DRAPE) return 0.0;
    if (p->bank_max_degrees > 0.0 && sc->kappa != 0.0) {
        double share = fabs(sc->kappa) * p->bank_radius;
        if (share > 1.0) share = 1.0;
        b = -(sc->kappa > 0.0 ? 1.0 : -1.0) * p->bank_max_degrees * PM__DEG * share;
    }
    if (p->roll) {
        double f0 = floor(sc->t);
        size_t i = (size_t)f0;
        double u = sc->t - f0;
        if (i >= x->spline.nseg) { i = x->spline.nseg - 1; u = 1.0; }
        size_t j = (i + 1) % p->npoints;
        b += (p->roll[i] * (1.0 - u) + p->roll[j] * u) * PM__DEG;
    }
    return b;
}

/* Where pm__bank_integral looks s up: the one lo with sc[lo].s <= s <
 * sc[lo + 1].s (arc lengths never decrease, and 0 < s < L). The plain way
 * is a binary search; with a cursor (at a section whose s is at most the
 * one asked, for queries that mostly grow, as a smoothing window's ends
 * do) it walks on from the cursor, and searches from there after a few
 * steps: the same lo either way. */
static size_t pm__bank_find(const pm__section *sc, size_t n, double s, size_t *cur) {
    size_t lo = 0, hi = n - 1;
    if (cur) {
        if (sc[*cur].s <= s) lo = *cur;
        for (int k = 0; k < 8 && sc[lo + 1].s <= s; k++) lo++;
    }
    if (!cur || sc[lo + 1].s <= s)
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (sc[mid].s <= s) lo = mid; else hi = mid;
        }
    if (cur) *cur = lo;
    return lo;
}

/* Integral of the piecewise-linear bank from 0 to arc length s (periodic
 * for closed roads). pre[i] is the integral up to section i. cur: NULL,
 * or pm__bank_find's cursor. */
static double pm__bank_integral(const pm__section *sc, const double *pre, size_t n, bool closed,
                                double s, size_t *cur) {
    double L = sc[n - 1].s;
    double base = 0.0;
    if (closed && L > 0.0) {
        double k = floor(s / L);
        base = k * pre[n - 1];
        s -= k * L;
    }
    if (s <= 0.0) return base;
    if (s >= L) return base + pre[n - 1];
    size_t lo = pm__bank_find(sc, n, s, cur), hi = lo + 1;
    double ds = sc[hi].s - sc[lo].s, f = ds > 0.0 ? (s - sc[lo].s) / ds : 0.0;
    double bs = sc[lo].bank + f * (sc[hi].bank - sc[lo].bank);
    return base + pre[lo] + 0.5 * (sc[lo].bank + bs) * (s - sc[lo].s);
}

/* Averages the bank over the transition length, so curvature steps at
 * control points (Catmull-Rom is only C1) ramp in like superelevation.
 * flat: no bank anywhere (every one +0.0), which averages to +0.0 bit for
 * bit and is within the limit: nothing to do. The plain path (x->plain)
 * looks each window's ends up by binary search, the other by cursors. */
static int pm__smooth_bank(pm__ctx *x, pm__section *sc, size_t n, bool flat) {
    const pm_road_params *p = x->p;
    double h = 0.5 * p->bank_transition, L = sc[n - 1].s;
    double lim = PM_ROAD_MAX_BANK_DEGREES * PM__DEG;
    if (flat) return PM_OK;
    if (h > 0.0 && L > 0.0) {
        double *pre = pm_arena_alloc(x->a, n * sizeof(double));
        double *out = pm_arena_alloc(x->a, n * sizeof(double));
        if (!pre || !out) return PM_ERR_NOMEM;
        pre[0] = 0.0;
        for (size_t i = 1; i < n; i++)
            pre[i] = pre[i - 1] + 0.5 * (sc[i - 1].bank + sc[i].bank) * (sc[i].s - sc[i - 1].s);
        bool closed = p->closed;
        size_t cur[2] = {0, 0}, *chi = x->plain ? NULL : &cur[0], *clo = x->plain ? NULL : &cur[1];
        for (size_t i = 0; i < n; i++) {
            double lo = sc[i].s - h, hi = sc[i].s + h;
            if (!closed) {
                if (lo < 0.0) lo = 0.0;
                if (hi > L) hi = L;
            }
            out[i] = hi > lo ? (pm__bank_integral(sc, pre, n, closed, hi, chi) -
                                pm__bank_integral(sc, pre, n, closed, lo, clo)) / (hi - lo)
                             : sc[i].bank;
        }
        for (size_t i = 0; i < n; i++) sc[i].bank = out[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (sc[i].bank > lim) sc[i].bank = lim;
        if (sc[i].bank < -lim) sc[i].bank = -lim;
    }
    return PM_OK;
}

/* The sideways step per nominal metre, from the section's banked right. */
static inline void pm__section_offset(const pm_road_params *p, pm__section *sc, const double t2[2],
                                      double miter) {
    if (p->terrain && p->conform == PM_ROAD_DRAPE) {
        /* Draped sections are plan lines; heights come from the terrain. */
        sc->r[0] = -t2[1] * miter;
        sc->r[1] = 0.0;
        sc->r[2] = t2[0] * miter;
    } else {
        /* The miter widens the plan offset; the cross slope per metre of
         * plan offset stays, so corner edges meet their neighbours. */
        sc->r[0] = sc->right[0] * miter;
        sc->r[1] = sc->right[1];
        sc->r[2] = sc->right[2] * miter;
    }
}

/* Frame at one section: T from the plan tangent and slope, R = T x up with
 * the sign of the plan right, then the bank about T. */
static void pm__frame(const pm__ctx *x, pm__section *sc, const double t2[2], double slope,
                      double miter, bool flat) {
    const pm_road_params *p = x->p;
    double T[3] = {t2[0], slope, t2[1]};
    pm_v3_normalize(T);
    double up[3] = {0.0, 1.0, 0.0};
    if (p->terrain && p->up == PM_ROAD_UP_TERRAIN && p->conform == PM_ROAD_BANK)
        pm_heightfield_normal(p->terrain, sc->c[0], sc->c[2], up);
    double R[3];
    pm_v3_cross(T, up, R);
    if (pm_v3_normalize(R) < 1e-6) {
        double y[3] = {0.0, 1.0, 0.0};
        pm_v3_cross(T, y, R);
        pm_v3_normalize(R);
    }
    /* Consistent sign: R always points to the plan right of travel. */
    if (R[0] * -t2[1] + R[2] * t2[0] < 0.0)
        for (int k = 0; k < 3; k++) R[k] = -R[k];
    double U[3];
    pm_v3_cross(R, T, U);
    pm_v3_normalize(U);
    double cb = 1.0, sb = 0.0;   /* an unbanked section (most) skips the sincos */
    if (flat) {   /* every bank +0.0: the loop below with cb 1, sb 0 */
        for (int k = 0; k < 3; k++) {
            sc->tan[k] = T[k];
            sc->right[k] = R[k] * 1.0 - U[k] * 0.0;
            sc->up[k] = U[k] * 1.0 + R[k] * 0.0;
        }
    } else if (sc->bank != 0.0 || signbit(sc->bank)) cb = cos(sc->bank), sb = sin(sc->bank);
    for (int k = 0; k < 3 && !flat; k++) {
        sc->tan[k] = T[k];
        sc->right[k] = R[k] * cb - U[k] * sb;
        sc->up[k] = U[k] * cb + R[k] * sb;
    }
    pm__section_offset(p, sc, t2, miter);
}

/* Every section's bank is +0.0 whatever the curve (pm__raw_bank returns
 * +0.0: draped, or neither curvature banking nor roll), so the sections
 * are flat and pm__smooth_bank has nothing to do. */
static bool pm__unbanked(const pm_road_params *p) {
    if (p->terrain && p->conform == PM_ROAD_DRAPE) return true;
    return !(p->bank_max_degrees > 0.0) && !p->roll;
}

/* pm__frame of a flat section under the world up (0, 1, 0), in scalars:
 * the same operations in the same order (the products with up's zeros
 * included, for the signs of zeros), so the same bits. Its fallback for a
 * vertical tangent crosses with the same up again, which changes nothing,
 * so it is left out. */
static inline void pm__frame_flat_world(const pm_road_params *p, pm__section *sc, const double t2[2],
                                        double slope, double miter) {
    double a = t2[0], b = slope, c = t2[1];
    double l = sqrt(a * a + b * b + c * c);
    if (l > 0.0) {
        a /= l;
        b /= l;
        c /= l;
    }
    double r0 = b * 0.0 - c * 1.0, r1 = c * 0.0 - a * 0.0, r2 = a * 1.0 - b * 0.0;
    l = sqrt(r0 * r0 + r1 * r1 + r2 * r2);
    if (l > 0.0) {
        r0 /= l;
        r1 /= l;
        r2 /= l;
    }
    if (r0 * -t2[1] + r2 * t2[0] < 0.0) {
        r0 = -r0;
        r1 = -r1;
        r2 = -r2;
    }
    double u0 = r1 * c - r2 * b, u1 = r2 * a - r0 * c, u2 = r0 * b - r1 * a;
    l = sqrt(u0 * u0 + u1 * u1 + u2 * u2);
    if (l > 0.0) {
        u0 /= l;
        u1 /= l;
        u2 /= l;
    }
    sc->tan[0] = a;
    sc->tan[1] = b;
    sc->tan[2] = c;
    sc->right[0] = r0 * 1.0 - u0 * 0.0;
    sc->right[1] = r1 * 1.0 - u1 * 0.0;
    sc->right[2] = r2 * 1.0 - u2 * 0.0;
    sc->up[0] = u0 * 1.0 + r0 * 0.0;
    sc->up[1] = u1 * 1.0 + r1 * 0.0;
    sc->up[2] = u2 * 1.0 + r2 * 0.0;
    pm__section_offset(p, sc, t2, miter);
}

/* The lane code below runs four sections at once (GCC vector
 * extensions, AVX where the CPU has it); each lane does the scalar code's
 * operations in its order (-ffp-contract=off), so it gives its bits. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define PM__FRAME_CLONES __attribute__((target_clones("avx", "default")))
#else
#define PM__FRAME_CLONES
#endif

#define PM__D4(v) ((pm_d4){(v), (v), (v), (v)})


/* Lanes i0 .. i3 of a and b side by side (0 .. 3 a's, 4 .. 7 b's). */
#if defined(__clang__)
#define PM__SHUF(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3)
#else
#define PM__SHUF(a, b, i0, i1, i2, i3) __builtin_shuffle(a, b, (pm_k4){i0, i1, i2, i3})
#endif

/* Rows j of four lane vectors a, b, c, d: out[j] = {a[j], b[j], c[j], d[j]}. */
static inline __attribute__((always_inline)) void pm__transpose4(pm_d4 a, pm_d4 b, pm_d4 c, pm_d4 d,
                                                                 pm_d4 out[4]) {
    pm_d4 ab0 = PM__SHUF(a, b, 0, 4, 2, 6), ab1 = PM__SHUF(a, b, 1, 5, 3, 7);
    pm_d4 cd0 = PM__SHUF(c, d, 0, 4, 2, 6), cd1 = PM__SHUF(c, d, 1, 5, 3, 7);
    out[0] = PM__SHUF(ab0, cd0, 0, 1, 4, 5);
    out[1] = PM__SHUF(ab1, cd1, 0, 1, 4, 5);
    out[2] = PM__SHUF(ab0, cd0, 2, 3, 6, 7);
    out[3] = PM__SHUF(ab1, cd1, 2, 3, 6, 7);
}

/* The sixteen doubles from tan to clamp, one after another in a section:
 * stored four at a time. */
_Static_assert(offsetof(pm__section, r) == offsetof(pm__section, tan) + 3 * sizeof(double) &&
                   offsetof(pm__section, up) == offsetof(pm__section, tan) + 6 * sizeof(double) &&
                   offsetof(pm__section, right) == offsetof(pm__section, tan) + 9 * sizeof(double) &&
                   offsetof(pm__section, kappa) == offsetof(pm__section, tan) + 12 * sizeof(double) &&
                   offsetof(pm__section, bank) == offsetof(pm__section, tan) + 13 * sizeof(double) &&
                   offsetof(pm__section, clamp) == offsetof(pm__section, tan) + 14 * sizeof(double),
               "pm__section: tan .. clamp must be 16 doubles in a row");

/* Coefficient j, component k of the segment of each lane. */
static inline __attribute__((always_inline)) pm_d4 pm__lane_coef(const pm_spline *s, const uint32_t seg[4],
                                                                 bool one_seg, int j, int k) {
    if (one_seg) return PM__D4(s->coef[seg[0]][j][k]);
    return (pm_d4){s->coef[seg[0]][j][k], s->coef[seg[1]][j][k], s->coef[seg[2]][j][k], s->coef[seg[3]][j][k]};
}

/* One quad's curve values, lane by lane (pm__quad_curve). */
typedef struct pm__quad {
    pm_d4 kappa, tx, tz, miter, slope;   /* tx, tz: the plan tangent */
} pm__quad;

/* The curve values of sections i0 .. i0 + cnt - 1 (cnt <= 4, each with
 * its own derivatives), as lanes; a lane past cnt repeats the last
 * section. Per lane: pm_spline_eval's d1 and d2 (the same expressions),
 * pm_spline_curvature_of, hypot (geom/hypot4.h), pm__plan_tangent (in
 * lanes where it takes its quick path, else called) and pm__slope. seg
 * and uu: each lane's segment and u (pm__spline_locate); one_seg: all
 * four in one segment (a constant in each of the two inlined copies,
 * which keeps GCC from merging their vectors through moves valgrind 3.19
 * cannot decode). */
static inline __attribute__((always_inline)) void pm__quad_curve(pm__ctx *x, const pm_curve_sample *smp, size_t n,
                                                                 size_t i0, size_t cnt, const uint32_t seg[4],
                                                                 const double uu[4], bool one_seg, pm__step *last,
                                                                 pm__quad *q) {
    const pm_road_params *p = x->p;
    const pm_spline *s = &x->spline;
    const pm_d4 zero = PM__D4(0.0), one = PM__D4(1.0);
    bool linear = s->kind == PM_CURVE_LINEAR;
    pm_d4 u;
    memcpy(&u, uu, sizeof u);
    /* pm_spline_eval's d1 and d2 (d2's y is not needed) and pm_spline_curvature_of */
    pm_d4 d1[3], d2[2];
    for (int k = 0; k < 3; k++) {
        pm_d4 c1 = pm__lane_coef(s, seg, one_seg, 1, k), c2 = pm__lane_coef(s, seg, one_seg, 2, k);
        pm_d4 c3 = pm__lane_coef(s, seg, one_seg, 3, k);
        d1[k] = c1 + u * (2.0 * c2 + u * 3.0 * c3);
        if (k != 1) d2[k / 2] = 2.0 * c2 + 6.0 * u * c3;
    }
    pm_d4 sp2 = d1[0] * d1[0] + d1[2] * d1[2], sq = pm_d4_sqrt(sp2);
    q->kappa = zero;
    if (!linear) q->kappa = pm_d4_sel((pm_k4)(sp2 <= zero), zero, (d2[0] * d1[2] - d2[1] * d1[0]) / (sp2 * sq));
    /* hypot(d1[0], d1[2]), whose first step is sq */
    pm_d4 l = pm_hypot4_with(d1[0], d1[2], sq);
    /* pm__plan_tangent's quick path and the slope without terrain */
    pm_k4 ok = (pm_k4)(l > PM__D4(1e-12));
    pm_d4 tx = d1[0] / l, tz = d1[2] / l, miter = one;
    pm_d4 slope = pm_d4_sel(ok, d1[1] / l, zero);
    if (linear || p->terrain || (ok[0] & ok[1] & ok[2] & ok[3]) != -1)
        for (size_t j = 0; j < 4; j++) {
            size_t i = i0 + (j < cnt ? j : cnt - 1);
            double d[3] = {d1[0][j], d1[1][j], d1[2][j]}, t2[2], mi;
            if (linear || !ok[j]) {
                pm__plan_tangent(x, smp, n, i, d, l[j], t2, &mi);
                tx[j] = t2[0];
                tz[j] = t2[1];
                miter[j] = mi;
            }
            if (p->terrain) slope[j] = pm__slope(x, smp, n, i, d, l[j], last);
        }
    q->tx = tx;
    q->tz = tz;
    q->miter = miter;
    q->slope = slope;
}

static inline __attribute__((always_inline)) bool pm__all4(pm_k4 m) {   /* every lane of mask m set */
#if defined(__SSE2__)
    __m128d lo, hi;   /* the mask's lanes 0, 1 and 2, 3 */
    memcpy(&lo, &m, sizeof lo);
    memcpy(&hi, (const char *)&m + sizeof lo, sizeof hi);
    return _mm_movemask_pd(_mm_and_pd(lo, hi)) == 3;
#else
    return (m[0] & m[1] & m[2] & m[3]) == -1;
#endif
}

/* Each lane's segment and u for sections i0 .. i0 + cnt - 1 (lanes past
 * cnt repeat the last); whether all four share one segment. */
static inline __attribute__((always_inline)) bool pm__quad_locate(const pm_spline *s, const pm_curve_sample *smp,
                                                                  size_t i0, size_t cnt, uint32_t seg[4],
                                                                  double uu[4]) {
    /* Samples come in order of t: where the first and last of the four
     * lie in one segment i, so do the ones between, and
     * pm__spline_locate gives each segment i and u = t - i: inside the
     * curve by its own operations, at its start (+0.0) u = 0.0 - 0.0 =
     * +0.0, at its end (t = nseg, segment nseg - 1) u = 1.0 exactly as
     * t - i is (whole numbers below 2^53). */
    double ta = smp[i0].t, tb = smp[i0 + cnt - 1].t, ns = (double)s->nseg;
    if (ta >= 0.0 && !signbit(ta) && ta <= tb && tb <= ns &&
        (uint32_t)ta == (tb < ns ? (uint32_t)tb : s->nseg - 1)) {
        uint32_t i = (uint32_t)ta;
        double si = (double)i;
        for (size_t j = 0; j < 4; j++) {
            seg[j] = i;
            uu[j] = smp[i0 + (j < cnt ? j : cnt - 1)].t - si;
        }
        return true;
    }
    /* Four t strictly inside the curve (0 < t < nseg, below 2^31): each
     * lane's i = (uint32_t)t and u = t - i as pm__spline_locate's middle
     * branch (truncation to a 32-bit integer and back is exact there). */
    pm_d4 t;
    for (size_t j = 0; j < 4; j++) t[j] = smp[i0 + (j < cnt ? j : cnt - 1)].t;
    typedef int32_t pm__i4 __attribute__((vector_size(16)));
    if (ns < 0x1p31 && pm__all4((pm_k4)(t > PM__D4(0.0)) & (pm_k4)(t < PM__D4(ns)))) {
        pm__i4 iv = __builtin_convertvector(t, pm__i4);
        pm_d4 u = t - __builtin_convertvector(iv, pm_d4);
        memcpy(uu, &u, sizeof u);
        for (size_t j = 0; j < 4; j++) seg[j] = (uint32_t)iv[j];
    } else {
        for (size_t j = 0; j < 4; j++) seg[j] = pm__spline_locate(s, t[j], &uu[j]);
    }
    return seg[0] == seg[1] && seg[1] == seg[2] && seg[2] == seg[3];
}

/* A section's place on the curve: t, centre, arc length (the sampler's
 * pm_v3_dist of each chord, summed), no fan yet. */
static inline __attribute__((always_inline)) void pm__place_one(pm__section *sc, const pm_curve_sample *smp,
                                                                double s) {
    sc->t = smp->t;
    memcpy(sc->c, smp->p, sizeof sc->c);
    sc->s = s;
    sc->fan[0] = sc->fan[1] = false;
}
/* Sections i0 .. i0 + cnt - 1: the first section (s = 0) apart, so the
 * others add their chords without a test, and a quad's four (the usual
 * case) in a loop of constant length (which GCC keeps a loop). */
static inline __attribute__((always_inline)) void pm__place(pm__section *sc, const pm_curve_sample *smp, size_t i0,
                                                            size_t cnt) {
    size_t i = i0;
    double sp = 0.0;
    if (i0 == 0) pm__place_one(sc, smp, 0.0), i++;
    else sp = sc[i0 - 1].s;
    if (cnt == 4 && i0 > 0) {
        for (size_t j = 0; j < 4; j++) sp += smp[i0 + j].len, pm__place_one(sc + i0 + j, smp + i0 + j, sp);
        return;
    }
    for (; i < i0 + cnt; i++) sp += smp[i].len, pm__place_one(sc + i, smp + i, sp);
}

/* x, y and z divided by d lane by lane, the divisions skipped where every
 * lane's d is 1 (x / 1 is x bit for bit): pm_v3_normalize of a vector
 * whose length rounds to 1, as a flat road's unit plan tangent and its
 * right mostly have. */

/* True (nothing divided) where every lane's d is 1. */
static inline __attribute__((always_inline)) bool pm__div3(pm_d4 *x, pm_d4 *y, pm_d4 *z, pm_d4 d) {
    if (pm__all4((pm_k4)(d == PM__D4(1.0)))) return true;
    *x /= d;
    *y /= d;
    *z /= d;
    return false;
}

/* Whether pm_v3_normalize of (u0, u1, u2) = R x T is (u0, +-1, u2) in
 * every lane, bit for bit, without its square root and divisions: where
 * u0 and u2 are zeros (either sign) and 2^-500 <= |u1| <= 2^500, as for a
 * level tangent (slope +-0: T x up and R x T then have zero x and z
 * products). Proof: u0^2 and u2^2 are +0, so the sum of the squares is
 * RN(u1^2) exactly (adding +0 to a nonzero), normal and finite in that
 * range; in radix 2, sqrt(RN(x^2)) = |x| (x = m 2^e, 1 <= m < 2: RN(x^2)
 * is within 2^-53 x^2 / m^2 (m^2 < 2) or 2^-52 x^2 / m^2 (m^2 >= 2) of
 * x^2, so its exact root is within 2^-54 2^e / m, resp. 2^-53 2^e / m
 * (times 1 + 2^-52 for the root's curvature) of |x|, under half an ulp of
 * x, 2^-53 2^e, in both cases: the correctly rounded root is |x|). So
 * len = |u1| > 0, and u / len gives +-0 / |u1| = the same zero, and
 * u1 / |u1| = +-1 (the sign of u1); pm__div3's skip at len 1 agrees, as
 * |u1| = 1 means u1 is +-1. A NaN anywhere fails the tests (the lanes'
 * comparisons are false), and the caller takes the plain path.
 * tests/core/test_road_frame_fast.c checks it on random level roads and
 * sqrt(RN(x^2)) = |x| on random x. */
static inline __attribute__((always_inline)) bool pm__level_up(pm_d4 u0, pm_d4 u1, pm_d4 u2) {
    const pm_d4 zero = PM__D4(0.0), lo = PM__D4(0x1p-500), hi = PM__D4(0x1p500);
    pm_d4 au = pm_d4_abs(u1);
    return pm__all4((pm_k4)(u0 == zero) & (pm_k4)(u2 == zero) & (pm_k4)(au >= lo) & (pm_k4)(au <= hi));
}

/* pm__frame under the world up (0, 1, 0) for sections sc[0 .. cnt - 1],
 * as lanes: plan tangent (tx, tz), slope, miter, and the bank's cosine and
 * sine (1 and 0 where pm__frame takes them so: the same operations).
 * Its fallback for a vertical tangent crosses with the same up again,
 * which changes nothing, so it is left out (as in pm__frame_flat_world).
 * Stores tan, r, up and right, and with tail also kappa, bank (+0.0) and
 * both clamps (W). */
static inline __attribute__((always_inline)) void pm__quad_frame(const pm_road_params *p, pm__section *sc, size_t cnt,
                                                                 const pm__quad *q, pm_d4 cb, pm_d4 sb, bool tail,
                                                                 double W) {
    const pm_d4 zero = PM__D4(0.0), one = PM__D4(1.0);
    pm_d4 tx = q->tx, tz = q->tz, miter = q->miter;
    pm_d4 a = tx, b = q->slope, cz = tz;
    /* pm_v3_normalize: v / l where l > 0, else v as it is, which is v / 1
     * (exact); negation is a product with -1 (exact, zeros' signs too). */
    pm_d4 len = pm_d4_sqrt(a * a + b * b + cz * cz), d = pm_d4_sel((pm_k4)(len > zero), len, one);
    bool unit = pm__div3(&a, &b, &cz, d);
    pm_d4 r0 = b * 0.0 - cz * 1.0, r1 = cz * 0.0 - a * 0.0, r2 = a * 1.0 - b * 0.0;   /* T x up */
    /* A level T (b +-0) of length 1 (so a, cz finite) in every lane: R's
     * squares are cz^2 (r0 is -cz, or a zero where cz is), +0 (r1 a zero)
     * and a^2 (r2 is a, or a zero), so R's sum (cz^2 + 0) + a^2 is T's
     * (a^2 + 0) + cz^2 (adding +0 to a square changes nothing; + commutes):
     * R's length is T's, 1, and pm__div3 would divide nothing. */
    if (!(unit && pm__all4((pm_k4)(b == zero)))) {
        len = pm_d4_sqrt(r0 * r0 + r1 * r1 + r2 * r2);
        d = pm_d4_sel((pm_k4)(len > zero), len, one);
        pm__div3(&r0, &r1, &r2, d);
    }
    pm_d4 sign = pm_d4_sel((pm_k4)(r0 * -tz + r2 * tx < zero), -one, one);
    r0 *= sign;
    r1 *= sign;
    r2 *= sign;
    pm_d4 u0 = r1 * cz - r2 * b, u1 = r2 * a - r0 * cz, u2 = r0 * b - r1 * a;   /* R x T */
    if (pm__level_up(u0, u1, u2)) {
        u1 = pm_d4_sel((pm_k4)(u1 < zero), -one, one);   /* u0, u2 stay */
    } else {
        len = pm_d4_sqrt(u0 * u0 + u1 * u1 + u2 * u2);
        d = pm_d4_sel((pm_k4)(len > zero), len, one);
        pm__div3(&u0, &u1, &u2, d);
    }
    pm_d4 right[3] = {r0 * cb - u0 * sb, r1 * cb - u1 * sb, r2 * cb - u2 * sb};
    pm_d4 up[3] = {u0 * cb + r0 * sb, u1 * cb + r1 * sb, u2 * cb + r2 * sb};
    pm_d4 off[3] = {right[0] * miter, right[1], right[2] * miter};   /* pm__section_offset */
    if (p->terrain && p->conform == PM_ROAD_DRAPE) {
        off[0] = -tz * miter;
        off[1] = zero;
        off[2] = tx * miter;
    }
    /* tan, r, up, right (, kappa, bank, clamp): rows of four per section */
    pm_d4 q0[4], q1[4], q2[4], q3[4];
    pm__transpose4(a, b, cz, off[0], q0);
    pm__transpose4(off[1], off[2], up[0], up[1], q1);
    pm__transpose4(up[2], right[0], right[1], right[2], q2);
    pm__transpose4(q->kappa, zero, PM__D4(W), PM__D4(W), q3);
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) {
        if (j >= cnt) break;
        char *dst = (char *)&sc[j] + offsetof(pm__section, tan);
        memcpy(dst, &q0[j], sizeof(pm_d4));
        memcpy(dst + sizeof(pm_d4), &q1[j], sizeof(pm_d4));
        memcpy(dst + 2 * sizeof(pm_d4), &q2[j], sizeof(pm_d4));
        if (tail) memcpy(dst + 3 * sizeof(pm_d4), &q3[j], sizeof(pm_d4));
    }
}

/* The sections with their own derivatives of an unbanked road, four at a
 * time, first half: curve values into q, place. first gets section 0's
 * tangent, miter and slope. */
static inline __attribute__((always_inline)) void pm__quad_unbanked(pm__ctx *x, pm__section *sc,
                                                                    const pm_curve_sample *smp, size_t n, size_t i0,
                                                                    size_t cnt, pm__step *last, double first[4],
                                                                    const uint32_t seg[4], const double uu[4],
                                                                    bool one_seg, pm_d4 *kmax, pm__quad *q) {
    pm__quad_curve(x, smp, n, i0, cnt, seg, uu, one_seg, last, q);
    if (kmax) {   /* lanes past cnt repeat the last section: nothing new to the maximum */
        pm_d4 ak = pm_d4_abs(q->kappa);
        *kmax = pm_d4_sel((pm_k4)(ak > *kmax), ak, *kmax);
    }
    if (i0 == 0) {
        first[0] = q->tx[0];
        first[1] = q->tz[0];
        first[2] = q->miter[0];
        first[3] = q->slope[0];
    }
    pm__place(sc, smp, i0, cnt);
}

/* Second half: the frames of sections i0 .. i0 + cnt - 1 from their curve
 * values q (pm__frame per section under a terrain up). */
static inline __attribute__((always_inline)) void pm__quad_unbanked_frame(pm__ctx *x, pm__section *sc, size_t i0,
                                                                          size_t cnt, double W, const pm__quad *q) {
    const pm_road_params *p = x->p;
    if (p->terrain && p->up == PM_ROAD_UP_TERRAIN && p->conform == PM_ROAD_BANK) {
        for (size_t j = 0; j < cnt; j++) {   /* the terrain's normal is the up */
            pm__section *c = &sc[i0 + j];
            c->kappa = q->kappa[j];
            c->bank = 0.0;
            c->clamp[0] = c->clamp[1] = W;
            double t2[2] = {q->tx[j], q->tz[j]};
            pm__frame(x, c, t2, q->slope[j], q->miter[j], true);
        }
        return;
    }
    pm__quad_frame(p, sc + i0, cnt, q, PM__D4(1.0), PM__D4(0.0), true, W);
}

/* Pass one of the two-pass path for the sections with their own
 * derivatives, four at a time: curve values into t2 (tangent, miter,
 * slope per section), place, curvature, raw bank. */
static inline __attribute__((always_inline)) void pm__quad_banked(pm__ctx *x, pm__section *sc,
                                                                  const pm_curve_sample *smp, size_t n, size_t i0,
                                                                  size_t cnt, double W, pm__step *last, double *t2,
                                                                  const uint32_t seg[4], const double uu[4],
                                                                  bool one_seg) {
    pm__quad q;
    pm__quad_curve(x, smp, n, i0, cnt, seg, uu, one_seg, last, &q);
    pm__place(sc, smp, i0, cnt);
    for (size_t j = 0; j < cnt; j++) {
        size_t i = i0 + j;
        double v[4] = {q.tx[j], q.tz[j], q.miter[j], q.slope[j]};
        memcpy(t2 + 4 * i, v, sizeof v);
        sc[i].kappa = q.kappa[j];
        sc[i].bank = pm__raw_bank(x, &sc[i]);
        sc[i].clamp[0] = sc[i].clamp[1] = W;
    }
}

/* The sections with their own derivatives (all but a closed road's
 * closing one), four at a time: unbanked, framed at once (first gets
 * section 0's curve values); banked, pass one into t2. */
static inline __attribute__((always_inline)) void pm__pass_one(pm__ctx *x, pm__section *sc,
                                                               const pm_curve_sample *smp, size_t n, double W,
                                                               double first[4], double *t2, bool banked,
                                                               pm_d4 *kmax) {
    size_t m = x->p->closed ? n - 1 : n;
    pm__step last = {SIZE_MAX, SIZE_MAX, 0.0};
    /* Unbanked, a quad is framed after the next one's curve values: the
     * two chains of square roots and divisions (independent: the frames
     * read only their own quad's values and write fields the curve half
     * does not touch) then overlap in the CPU. */
    pm__quad q[2];   /* q[k] the quad being read, q[k ^ 1] the one before it */
    size_t prev = SIZE_MAX, prev_cnt = 0, k = 0;
    for (size_t i = 0; i < m; i += 4) {
        size_t cnt = m - i < 4 ? m - i : 4;
        uint32_t seg[4];
        double uu[4];
        /* a full quad (all but the last) with cnt a constant: no lane clamps */
        bool one = cnt == 4 ? pm__quad_locate(&x->spline, smp, i, 4, seg, uu)
                            : pm__quad_locate(&x->spline, smp, i, cnt, seg, uu);
        if (banked && one) pm__quad_banked(x, sc, smp, n, i, cnt, W, &last, t2, seg, uu, true);
        else if (banked) pm__quad_banked(x, sc, smp, n, i, cnt, W, &last, t2, seg, uu, false);
        else {
            if (one) pm__quad_unbanked(x, sc, smp, n, i, cnt, &last, first, seg, uu, true, kmax, &q[k]);
            else pm__quad_unbanked(x, sc, smp, n, i, cnt, &last, first, seg, uu, false, kmax, &q[k]);
            /* the quad before this one is full: only the last is short */
            if (prev != SIZE_MAX) pm__quad_unbanked_frame(x, sc, prev, 4, W, &q[k ^ 1]);
            prev = i;
            prev_cnt = cnt;
            k ^= 1;
        }
    }
    if (prev != SIZE_MAX) pm__quad_unbanked_frame(x, sc, prev, prev_cnt, W, &q[k ^ 1]);
}

/* pm__road_sections for an unbanked road in one pass: each section is
 * framed as soon as its tangent and slope are known, with the values the
 * two-pass path gives (the closing section of a closed road copies the
 * first, as there), without its t2 array or bank bookkeeping; four
 * sections at a time. */
PM__FRAME_CLONES
static double pm__sections_unbanked(pm__ctx *x, pm__section *sc, const pm_curve_sample *smp, size_t n,
                                    double W) {
    const pm_road_params *p = x->p;
    size_t m = p->closed ? n - 1 : n;   /* sections with their own derivatives */
    double first[4];
    pm_d4 km = PM__D4(0.0);
    pm__pass_one(x, sc, smp, n, W, first, NULL, false, x->no_meta ? NULL : &km);
    /* The largest |kappa| (the closing section's is the first's). */
    double kmax = 0.0;
    for (int j = 0; j < 4; j++) kmax = km[j] > kmax ? km[j] : kmax;
    if (m == n) return kmax;
    pm__section *c = &sc[m];   /* the closing section: the first one's curve values */
    pm__place(sc, smp, m, 1);
    c->bank = 0.0;
    c->clamp[0] = c->clamp[1] = W;
    c->kappa = sc[0].kappa;
    if (!(p->terrain && p->up == PM_ROAD_UP_TERRAIN && p->conform == PM_ROAD_BANK))
        pm__frame_flat_world(p, c, first, first[3], first[2]);
    else
        pm__frame(x, c, first, first[3], first[2], true);
    return kmax;
}

/* Pass two under the world up: the frames of sections i0 .. i0 + cnt - 1
 * from t2 and their (smoothed) banks, as lanes. */
static inline __attribute__((always_inline)) void pm__quad_banked_frame(const pm_road_params *p, pm__section *sc,
                                                                        const double *t2, size_t i0, size_t cnt) {
    pm_d4 row[4], col[4];
    for (size_t j = 0; j < 4; j++) memcpy(&row[j], t2 + 4 * (i0 + (j < cnt ? j : cnt - 1)), sizeof row[j]);
    pm__transpose4(row[0], row[1], row[2], row[3], col);
    pm__quad q = {.tx = col[0], .tz = col[1], .miter = col[2], .slope = col[3]};
    pm_d4 cb = PM__D4(1.0), sb = PM__D4(0.0);   /* an unbanked section (most) skips the sincos */
    for (size_t j = 0; j < cnt; j++) {
        double b = sc[i0 + j].bank;
        if (b != 0.0 || signbit(b)) cb[j] = cos(b), sb[j] = sin(b);
    }
    pm__quad_frame(p, sc + i0, cnt, &q, cb, sb, false, 0.0);
}

/* pm__road_sections' two-pass path (banked, rolled) with pass one and,
 * under the world up, pass two in lanes; the values of the plain path
 * (pm__sections_plain) bit for bit. */
PM__FRAME_CLONES
static int pm__sections_banked(pm__ctx *x, pm__section *sc, double *t2, const pm_curve_sample *smp, size_t n,
                               double W) {
    const pm_road_params *p = x->p;
    size_t m = p->closed ? n - 1 : n;   /* sections with their own derivatives */
    pm__pass_one(x, sc, smp, n, W, NULL, t2, true, NULL);
    bool flat = true;   /* every bank +0.0 (a closed road's last is its first) */
    for (size_t i = 0; i < m; i++) flat &= sc[i].bank == 0.0 && !signbit(sc[i].bank);
    if (m < n) {   /* the closing section is the first one again */
        pm__place(sc, smp, m, 1);
        memcpy(t2 + 4 * m, t2, 4 * sizeof(double));
        sc[m].kappa = sc[0].kappa;
        sc[m].bank = sc[0].bank;
        sc[m].clamp[0] = sc[m].clamp[1] = W;
    }
    int r = pm__smooth_bank(x, sc, n, flat);
    if (r < 0) return r;
    if (p->terrain && p->up == PM_ROAD_UP_TERRAIN && p->conform == PM_ROAD_BANK) {
        for (size_t i = 0; i < n; i++) pm__frame(x, &sc[i], t2 + 4 * i, t2[4 * i + 3], t2[4 * i + 2], flat);
        return PM_OK;
    }
    for (size_t i = 0; i < n; i += 4) pm__quad_banked_frame(p, sc, t2, i, n - i < 4 ? n - i : 4);
    return PM_OK;
}

/* The two-pass path as it was before the lanes (x->plain): the reference
 * the tests compare the fast paths with. */
static int pm__sections_plain(pm__ctx *x, pm__section *sc, double *t2, const pm_curve_sample *smp, size_t n,
                              double W) {
    const pm_road_params *p = x->p;
    pm__step last = {SIZE_MAX, SIZE_MAX, 0.0};
    bool flat = true;   /* every bank +0.0 (a closed road's last is its first) */
    for (size_t i = 0; i < n; i++) {
        sc[i].t = smp[i].t;
        memcpy(sc[i].c, smp[i].p, sizeof sc[i].c);
        sc[i].s = i > 0 ? sc[i - 1].s + smp[i].len : 0.0;   /* the sampler's pm_v3_dist of the chord */
        sc[i].fan[0] = sc[i].fan[1] = false;
        /* One evaluation for the curvature, tangent and slope. */
        double d1[3], d2[3], tk = p->closed && i == n - 1 ? 0.0 : smp[i].t;
        pm_spline_eval(&x->spline, tk, NULL, d1, d2);
        sc[i].kappa = pm_spline_curvature_of(&x->spline, d1, d2);
        if (tk != smp[i].t) pm_spline_eval(&x->spline, smp[i].t, NULL, d1, NULL);
        double l = hypot(d1[0], d1[2]);   /* once for the tangent and the slope */
        pm__plan_tangent(x, smp, n, i, d1, l, t2 + 4 * i, t2 + 4 * i + 2);
        t2[4 * i + 3] = pm__slope(x, smp, n, i, d1, l, &last);
        sc[i].bank = pm__raw_bank(x, &sc[i]);
        if (!p->closed || i + 1 < n) flat &= sc[i].bank == 0.0 && !signbit(sc[i].bank);
        sc[i].clamp[0] = sc[i].clamp[1] = W;
    }
    if (p->closed) {   /* the closing section is the first one again */
        memcpy(t2 + 4 * (n - 1), t2, 4 * sizeof(double));
        sc[n - 1].kappa = sc[0].kappa;
        sc[n - 1].bank = sc[0].bank;
    }
    int r = pm__smooth_bank(x, sc, n, flat);
    if (r < 0) return r;
    for (size_t i = 0; i < n; i++) pm__frame(x, &sc[i], t2 + 4 * i, t2[4 * i + 3], t2[4 * i + 2], flat);
    return PM_OK;
}

int pm__road_sections(pm__ctx *x, pm__level *L, const pm_curve_sample *smp, size_t n) {
    const pm_road_params *p = x->p;
    double W = 0.5 * p->width + p->shoulder;
    /* Not zeroed (a section is 224 bytes): every field is set here or in
     * pm__frame, but the pivots, read only where a fan is set. */
    pm__section *sc = pm_arena_alloc(x->a, n * sizeof *sc);
    if (!sc) return PM_ERR_NOMEM;
    if (!x->plain && pm__unbanked(p)) {
        L->kmax = pm__sections_unbanked(x, sc, smp, n, W);
        L->kmax_known = !x->no_meta;
    } else {
        double *t2 = pm_arena_alloc(x->a, n * 4 * sizeof(double));
        if (!t2) return PM_ERR_NOMEM;
        int r = x->plain ? pm__sections_plain(x, sc, t2, smp, n, W) : pm__sections_banked(x, sc, t2, smp, n, W);
        if (r < 0) return r;
    }
    L->sec = sc;
    L->n = n;
    L->closed = p->closed;
    L->length = sc[n - 1].s;
    return PM_OK;
}

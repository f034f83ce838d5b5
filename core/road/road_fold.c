#include "road/road_internal.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "geom/predicates.h"
#include "scene/result.h"

/* ---- fold clamping ---- */

/* Plan point of section sc at signed offset e. */
static void pm__plan_at(const pm__section *sc, double e, double o[2]) {
    o[0] = sc->c[0] + e * sc->r[0];
    o[1] = sc->c[2] + e * sc->r[2];
}

/* Outer plan corner of one side of a section: its pivot when the side is
 * fanned, else the point where it is cut back. */
static void pm__corner(const pm__section *sc, int side, double o[2]) {
    if (sc->fan[side]) {
        o[0] = sc->piv[side][0];
        o[1] = sc->piv[side][2];
        return;
    }
    pm__plan_at(sc, (side ? 1.0 : -1.0) * sc->clamp[side], o);
}

/* Whether the band A1 (centre) B1 (corner) of one section, A2 B2 of the
 * next, on the side, is a convex counter-clockwise polygon (or degenerate
 * to a segment). */
static bool pm__quad_ok(const double A1[2], const double A2[2], const double B1[2], const double B2[2],
                        int side) {
    double q[4][2];
    const double *order[4];
    if (side) { order[0] = A1; order[1] = B1; order[2] = B2; order[3] = A2; }
    else { order[0] = B1; order[1] = A1; order[2] = A2; order[3] = B2; }
    /* The usual quad: four distinct corners in a row, no copy. */
#define PM__SAME(u, v) ((u)[0] == (v)[0] && (u)[1] == (v)[1])
    if (!PM__SAME(A1, B1) && !PM__SAME(B1, B2) && !PM__SAME(B2, A2) && !PM__SAME(A2, A1))
        return pm_orient_xz_plain(order[0], order[1], order[2]) > 0.0 &&
               pm_orient_xz_plain(order[1], order[2], order[3]) > 0.0 &&
               pm_orient_xz_plain(order[2], order[3], order[0]) > 0.0 &&
               pm_orient_xz_plain(order[3], order[0], order[1]) > 0.0;
#undef PM__SAME
    int m = 0;
    for (int k = 0; k < 4; k++) {
        const double *v = order[k];
        if (m > 0 && v[0] == q[m - 1][0] && v[1] == q[m - 1][1]) continue;
        q[m][0] = v[0];
        q[m][1] = v[1];
        m++;
    }
    if (m > 1 && q[m - 1][0] == q[0][0] && q[m - 1][1] == q[0][1]) m--;
    if (m < 3) return true;
    if (m == 4)   /* the usual quad, unrolled */
        return pm_orient_xz_plain(q[0], q[1], q[2]) > 0.0 && pm_orient_xz_plain(q[1], q[2], q[3]) > 0.0 &&
               pm_orient_xz_plain(q[2], q[3], q[0]) > 0.0 && pm_orient_xz_plain(q[3], q[0], q[1]) > 0.0;
    for (int k = 0; k < m; k++)
        if (!(pm_orient_xz_plain(q[k], q[(k + 1) % m], q[(k + 2) % m]) > 0.0)) return false;
    return true;
}

/* Whether the side band between sections a and b, with their clamps, is a
 * convex counter-clockwise polygon (or degenerate to a segment). */
static bool pm__band_ok(const pm__section *a, const pm__section *b, int side) {
    double A1[2], A2[2], B1[2], B2[2];
    pm__plan_at(a, 0.0, A1);
    pm__plan_at(b, 0.0, A2);
    pm__corner(a, side, B1);
    pm__corner(b, side, B2);
    return pm__quad_ok(A1, A2, B1, B2, side);
}

bool pm__road_band_ok(const pm__section *a, const pm__section *b, int side) {
    return pm__band_ok(a, b, side);
}

/* ---- fans: a turn tighter than the half width ---- */

/* How far along the centre line (in outer half widths W) a turn's inner
 * edge may run before it meets itself: a linear corner turning 160 degrees
 * needs about 11 W; parts further apart than this are two legs, not a turn. */
#define PM__FAN_REACH 16.0

/* Crossings of one edge segment tried as fans (the last slot keeps the
 * furthest). */
#define PM__FAN_TRIES 8

typedef struct pm__cross {
    size_t k;               /* the later segment */
    double X[2], tu[2];     /* where, and at which fraction of each segment */
} pm__cross;

typedef struct pm__fanning {
    pm__level *L;
    int side;
    size_t m;               /* distinct sections (a closed road's last is its first) */
    double W, hw;
    double *q;              /* m plan points of the side's full-width edge */
} pm__fanning;

static size_t pm__wrap(const pm__fanning *F, size_t i) { return i % F->m; }

/* Arc length of section index i, counting on past a closed road's end. */
static double pm__arc(const pm__fanning *F, size_t i) {
    const pm__level *L = F->L;
    return i < F->m ? L->sec[i].s : L->sec[i - F->m].s + L->sec[L->n - 1].s;
}

static const double *pm__q(const pm__fanning *F, size_t i) { return F->q + 2 * pm__wrap(F, i); }

/* Whether edge segments j and k (each from point i to i + 1) cross, where
 * (X) and at which fractions of each (tu). */
static bool pm__edges_cross(const pm__fanning *F, size_t j, size_t k, double X[2], double tu[2]) {
    const double *A = pm__q(F, j), *B = pm__q(F, j + 1), *C = pm__q(F, k), *D = pm__q(F, k + 1);
    if (fmax(A[0], B[0]) < fmin(C[0], D[0]) || fmax(C[0], D[0]) < fmin(A[0], B[0]) ||
        fmax(A[1], B[1]) < fmin(C[1], D[1]) || fmax(C[1], D[1]) < fmin(A[1], B[1]))
        return false;
    if (!pm_segments_cross(A, B, C, D)) return false;
    double e[2] = {B[0] - A[0], B[1] - A[1]}, f[2] = {D[0] - C[0], D[1] - C[1]};
    double g[2] = {C[0] - A[0], C[1] - A[1]};
    double den = e[0] * f[1] - e[1] * f[0];
    if (den == 0.0) return false;
    tu[0] = (g[0] * f[1] - g[1] * f[0]) / den;
    tu[1] = (g[0] * e[1] - g[1] * e[0]) / den;
    X[0] = A[0] + tu[0] * e[0];
    X[1] = A[1] + tu[0] * e[1];
    return true;
}

/* Signed plan turn between the frames of sections a and b (radians). */
static double pm__turn(const pm__section *a, const pm__section *b) {
    double c = a->r[0] * b->r[2] - a->r[2] * b->r[0], d = a->r[0] * b->r[0] + a->r[2] * b->r[2];
    return atan2(c, d);
}

/* Height of the side's full-width edge at fraction t of segment j. */
static double pm__edge_height(const pm__fanning *F, size_t j, double t) {
    const pm__section *a = &F->L->sec[pm__wrap(F, j)], *b = &F->L->sec[pm__wrap(F, j + 1)];
    double sg = F->side ? 1.0 : -1.0;
    double ya = a->c[1] + sg * F->W * a->r[1], yb = b->c[1] + sg * F->W * b->r[1];
    return ya + t * (yb - ya);
}

/* Makes section sc's side run to pivot P: the carriageway keeps its width
 * along the ray to P where it fits and the shoulder reaches P
 * (pm__road_vertex_at); where P is nearer than the carriageway edge, the
 * columns beyond it collapse onto P. */
static void pm__set_fan(const pm__fanning *F, pm__section *sc, const double P[3]) {
    int side = F->side;
    double rl = hypot(sc->r[0], sc->r[2]), d = hypot(P[0] - sc->c[0], P[2] - sc->c[2]);
    sc->fan[side] = true;
    memcpy(sc->piv[side], P, 3 * sizeof(double));
    sc->clamp[side] = d > F->hw * rl ? F->W : d / rl;
}

static void pm__unset_fan(const pm__fanning *F, pm__section *sc) {
    sc->fan[F->side] = false;
    sc->clamp[F->side] = F->W;
}

/* Sets (or unsets) the fan of section index i, and of its twin on a closed
 * road (the last section is the first). */
static void pm__mark(const pm__fanning *F, size_t i, const double *P) {
    pm__level *L = F->L;
    size_t w = pm__wrap(F, i);
    pm__section *t[2] = {&L->sec[w], L->closed && w == 0 ? &L->sec[L->n - 1] : NULL};
    for (int k = 0; k < 2; k++) {
        if (!t[k]) continue;
        if (P) pm__set_fan(F, t[k], P);
        else pm__unset_fan(F, t[k]);
    }
}

/* The angle the fan and its two boundary bands sweep around P: from the
 * corner of section j over the centres of j .. k + 1 to the corner of
 * k + 1. Each band convex, the steps all turn one way; a fan whose sweep
 * reaches a full turn would lie on itself. */
static double pm__fan_sweep(const pm__fanning *F, size_t j, size_t k, const double P[3]) {
    const pm__level *L = F->L;
    double prev = 0.0, sum = 0.0;
    for (size_t i = j; i <= k + 3; i++) {
        const pm__section *sc = &L->sec[pm__wrap(F, i == j ? j : (i > k + 2 ? k + 1 : i - 1))];
        double v[2];
        if (i == j || i == k + 3) pm__corner(sc, F->side, v);
        else { v[0] = sc->c[0]; v[1] = sc->c[2]; }
        double ang = atan2(v[1] - P[2], v[0] - P[0]);
        if (i > j) {
            double d = ang - prev;
            while (d > PM__PI) d -= 2.0 * PM__PI;
            while (d < -PM__PI) d += 2.0 * PM__PI;
            sum += d;
        }
        prev = ang;
    }
    return fabs(sum);
}

/* Tries the fan of sections j + 1 .. k onto P: kept when the road folds
 * somewhere from j to k + 1 (a tight turn, not two legs meeting), turns
 * less than half a circle there, every band from j to k + 1 is convex and
 * together they sweep less than a full turn around P. */
static bool pm__try_fan(const pm__fanning *F, size_t j, size_t k, const double P[3]) {
    pm__level *L = F->L;
    int side = F->side;
    bool folds = false;
    double turn = 0.0;
    for (size_t i = j; i <= k; i++) {
        const pm__section *a = &L->sec[pm__wrap(F, i)], *b = &L->sec[pm__wrap(F, i + 1)];
        if (b->fan[side]) return false;   /* an earlier fan, across a closed road's seam */
        folds |= !pm__band_ok(a, b, side);
        turn += pm__turn(a, b);
    }
    if (!folds || !(fabs(turn) < PM__PI * (1.0 - 1e-9))) return false;
    for (size_t i = j + 1; i <= k; i++) pm__mark(F, i, P);
    bool ok = true;
    for (size_t i = j; i <= k && ok; i++)
        ok = pm__band_ok(&L->sec[pm__wrap(F, i)], &L->sec[pm__wrap(F, i + 1)], side);
    if (ok && pm__fan_sweep(F, j, k, P) < 2.0 * PM__PI * (1.0 - 1e-9)) return true;
    for (size_t i = j + 1; i <= k; i++) pm__mark(F, i, NULL);
    return false;
}

/* Where the lines of sections a and b meet on the side, when that is
 * within both sections' full width. */
static bool pm__lines_meet(const pm__fanning *F, const pm__section *a, const pm__section *b, double P[3]) {
    double sg = F->side ? 1.0 : -1.0;
    double d[2] = {b->c[0] - a->c[0], b->c[2] - a->c[2]};
    double det = -a->r[0] * b->r[2] + b->r[0] * a->r[2];
    if (det == 0.0) return false;
    double t = (-d[0] * b->r[2] + b->r[0] * d[1]) / det;
    double u = (a->r[0] * d[1] - a->r[2] * d[0]) / det;
    if (!(sg * t > 0.0 && sg * t <= F->W && sg * u > 0.0 && sg * u <= F->W)) return false;
    for (int k = 0; k < 3; k++) P[k] = 0.5 * (a->c[k] + t * a->r[k] + b->c[k] + u * b->r[k]);
    P[0] = a->c[0] + t * a->r[0];
    P[2] = a->c[2] + t * a->r[2];
    return true;
}

/* Where the lines of edge segments j and k meet, when that is near both
 * (a loop the samples just fail to close). */
static bool pm__edges_meet(const pm__fanning *F, size_t j, size_t k, double P[3]) {
    const double *A = pm__q(F, j), *B = pm__q(F, j + 1), *C = pm__q(F, k), *D = pm__q(F, k + 1);
    double e[2] = {B[0] - A[0], B[1] - A[1]}, f[2] = {D[0] - C[0], D[1] - C[1]};
    double g[2] = {C[0] - A[0], C[1] - A[1]};
    double den = e[0] * f[1] - e[1] * f[0];
    if (den == 0.0) return false;
    double t = (g[0] * f[1] - g[1] * f[0]) / den, u = (g[0] * e[1] - g[1] * e[0]) / den;
    if (!(t > 0.0 && t < 2.0 && u > -1.0 && u < 1.0)) return false;
    P[0] = A[0] + t * e[0];
    P[2] = A[1] + t * e[1];
    P[1] = 0.5 * (pm__edge_height(F, j, t) + pm__edge_height(F, k, u));
    return true;
}

/* A fold too small for the sampled edge to cross itself (its loop lies
 * between two samples) still tangles: bands i0..i1 are not convex. Their
 * sections fan onto the point where the lines of the sections around the
 * run meet, widening the run a section at a time until the fan holds. */
static void pm__fan_run(const pm__fanning *F, pm__ctx *x, size_t i0, size_t i1) {
    const pm_road_params *p = x->p;
    pm__level *L = F->L;
    for (size_t g = 0; g < PM__FAN_TRIES && g < i0 && i1 + 2 + g < L->n; g++) {
        size_t a = i0 - g, b = i1 + 1 + g;
        if (L->sec[b].s - L->sec[a].s > PM__FAN_REACH * F->W) return;
        double P[2][3];
        bool has[2] = {pm__edges_meet(F, a - 1, b, P[0]), pm__lines_meet(F, &L->sec[a], &L->sec[b], P[1])};
        for (int c = 0; c < 2; c++) {
            if (!has[c]) continue;
            if (p->terrain && p->conform == PM_ROAD_DRAPE)
                P[c][1] = pm_heightfield_height(p->terrain, P[c][0], P[c][2]);
            if (pm__try_fan(F, a - 1, b, P[c])) return;
        }
    }
}

/* The side's full-width edge in a turn tighter than W loops back over
 * itself (a swallowtail): edge segment j crosses a later segment k at P.
 * Every section between them ends its side at P, so the inner side is one
 * fan of triangles around P instead of a tangle. Two legs of the road
 * meeting (turning half a circle or more, or not folding in between) are
 * left alone: the overlap check refuses them. False when every band of
 * the side is convex at full width (no fan, nothing to cut back). */
static bool pm__road_fans(pm__ctx *x, pm__level *L, int side) {
    const pm_road_params *p = x->p;
    pm__fanning F = {.L = L, .side = side, .m = L->closed ? L->n - 1 : L->n,
                     .W = -L->col[0], .hw = 0.5 * p->width};
    if (F.m < 3) return true;
    size_t nseg = L->closed ? F.m : L->n - 1, nb = L->closed ? 2 * F.m : nseg;
    /* fold[i]: the first band at or after i (counting on past a closed
     * road's end) that is not convex at full width; a loop holds one, so
     * only segments within reach of a fold are searched. */
    size_t *fold = pm_arena_alloc(x->a, (nb + 1) * sizeof(size_t));
    F.q = pm_arena_alloc(x->a, F.m * 2 * sizeof(double));
    /* Each section's centre and corner once, for its two bands. */
    double *cc = pm_arena_alloc(x->a, F.m * 4 * sizeof(double));
    if (!fold || !F.q || !cc) return true;   /* no fans: the pairwise cut and the overlap check still hold */
    for (size_t i = 0; i < F.m; i++) {
        pm__plan_at(&L->sec[i], 0.0, cc + 4 * i);
        pm__corner(&L->sec[i], side, cc + 4 * i + 2);
    }
    fold[nb] = SIZE_MAX;
    bool any = false;
    for (size_t i = nb; i-- > 0;) {
        size_t w = i < F.m ? i : i - F.m, v = w + 1 < F.m ? w + 1 : w + 1 - F.m;   /* pm__wrap */
        const double *a = cc + 4 * w, *b = cc + 4 * v;
        bool folds = !pm__quad_ok(a, b, a + 2, b + 2, side);
        fold[i] = folds ? i : fold[i + 1];
        any |= folds;
    }
    if (!any) return false;
    double sg = side ? 1.0 : -1.0;
    for (size_t i = 0; i < F.m; i++) pm__plan_at(&L->sec[i], sg * F.W, F.q + 2 * i);
    double reach = PM__FAN_REACH * F.W;
    for (size_t j = 0; j < nseg; j++) {
        size_t b = fold[j], last = L->closed ? j + nseg - 2 : nseg - 1;
        if (b == SIZE_MAX || pm__arc(&F, b) - pm__arc(&F, j + 1) > reach) continue;
        /* The crossings of segment j, the furthest first: the widest loop
         * that makes a valid fan wins (two tight corners in a row each
         * get their own when one fan over both would turn too far). */
        pm__cross c[PM__FAN_TRIES];
        size_t nc = 0;
        for (size_t k = b > j + 2 ? b : j + 2; k <= last && pm__arc(&F, k) - pm__arc(&F, j + 1) <= reach; k++) {
            pm__cross *e = &c[nc < PM__FAN_TRIES ? nc : PM__FAN_TRIES - 1];
            if (!pm__edges_cross(&F, j, k, e->X, e->tu)) continue;
            e->k = k;
            if (nc < PM__FAN_TRIES) nc++;
        }
        while (nc-- > 0) {
            double P[3] = {c[nc].X[0], 0.0, c[nc].X[1]};
            if (p->terrain && p->conform == PM_ROAD_DRAPE) P[1] = pm_heightfield_height(p->terrain, P[0], P[2]);
            else P[1] = 0.5 * (pm__edge_height(&F, j, c[nc].tu[0]) + pm__edge_height(&F, c[nc].k, c[nc].tu[1]));
            if (pm__try_fan(&F, j, c[nc].k, P)) {
                j = c[nc].k;
                break;
            }
        }
    }
    for (size_t i = 0; i + 1 < L->n; i++) {
        if (L->sec[i].fan[side] || L->sec[i + 1].fan[side] || pm__band_ok(&L->sec[i], &L->sec[i + 1], side))
            continue;
        size_t i1 = i;
        while (i1 + 2 < L->n && !L->sec[i1 + 2].fan[side] && !pm__band_ok(&L->sec[i1 + 1], &L->sec[i1 + 2], side))
            i1++;
        pm__fan_run(&F, x, i, i1);
        i = i1;
    }
    return true;
}

/* Cuts the side back where sections a and b cross inside the road. */
static bool pm__clamp_pair(pm__section *a, pm__section *b, int side) {
    /* A fan's bands were all checked convex when it was made, and cutting
     * back a neighbour's side (a chord from the pivot) keeps them so. */
    if (a->fan[side] || b->fan[side] || pm__band_ok(a, b, side)) return false;
    double sg = side ? 1.0 : -1.0;
    double ra[2] = {a->r[0], a->r[2]}, rb[2] = {b->r[0], b->r[2]};
    double d[2] = {b->c[0] - a->c[0], b->c[2] - a->c[2]};
    double det = -ra[0] * rb[1] + rb[0] * ra[1];
    if (det != 0.0) {
        double t = (-d[0] * rb[1] + rb[0] * d[1]) / det;
        double u = (ra[0] * d[1] - ra[1] * d[0]) / det;
        if (sg * t > 0.0 && sg * u > 0.0) {
            /* Just short of the crossing, so both points stay distinct. */
            const double keep = 1.0 - 1e-7;
            if (sg * t * keep < a->clamp[side]) a->clamp[side] = sg * t * keep;
            if (sg * u * keep < b->clamp[side]) b->clamp[side] = sg * u * keep;
        }
    }
    /* A band that is still not convex (a cusp, a sideways chord) shrinks
     * until it is, down to nothing. */
    for (int k = 0; k < 60 && !pm__band_ok(a, b, side); k++) {
        a->clamp[side] *= 0.5;
        b->clamp[side] *= 0.5;
    }
    if (!pm__band_ok(a, b, side)) a->clamp[side] = b->clamp[side] = 0.0;
    return true;
}

/* Two lanes: lane 0 computes the right side's band, lane 1 the left's,
 * each with the very operations of the scalar code (IEEE per lane). */
typedef double pm__v2d __attribute__((vector_size(16)));
typedef int64_t pm__v2i __attribute__((vector_size(16)));

/* One section's share of its bands, x and z: u = (centre, left corner),
 * v = (right corner, centre): the right band runs centre 1, right 1,
 * right 2, centre 2 (u1, v1, v2, u2 in lane 0), the left band left 1,
 * centre 1, centre 2, left 2 (the same in lane 1): pm__quad_ok's orders. */
typedef struct pm__band_end { pm__v2d ux, uz, vx, vz; } pm__band_end;

/* pm_orient_xz_plain per lane. */
static inline pm__v2d pm__orient2(pm__v2d ax, pm__v2d az, pm__v2d bx, pm__v2d bz, pm__v2d cx, pm__v2d cz) {
    return (bz - az) * (cx - ax) - (bx - ax) * (cz - az);
}

/* Both side bands between sections p and q: pm__quad_ok's first case
 * (four distinct corners, four positive orientations) on each side. A
 * repeated corner makes two orientations exactly 0, so all positive is
 * that case, true; anything else is for pm__quad_ok to decide. */
static inline bool pm__bands_surely_ok(const pm__band_end *p, const pm__band_end *q) {
    pm__v2d zero = {0.0, 0.0};
    pm__v2i ok = (pm__orient2(p->ux, p->uz, p->vx, p->vz, q->vx, q->vz) > zero) &
                 (pm__orient2(p->vx, p->vz, q->vx, q->vz, q->ux, q->uz) > zero) &
                 (pm__orient2(q->vx, q->vz, q->ux, q->uz, p->ux, p->uz) > zero) &
                 (pm__orient2(q->ux, q->uz, p->ux, p->uz, p->vx, p->vz) > zero);
    return (ok[0] & ok[1]) != 0;
}

/* The same four orientations from six differences, not sixteen: each
 * one pm__orient2 takes is one of these or its negation, and IEEE
 * subtraction and products are exact under negation (b - a is -(a - b),
 * (-x) * y is -(x * y), (-x) - (-y) is y - x), so every orientation is
 * the very number pm__orient2 gives, up to the sign of a zero (never
 * > 0 either way). dp is p's v - u (q's of the band before), dq q's. */
static inline bool pm__bands_surely_ok_d(const pm__band_end *p, const pm__band_end *q, pm__v2d dpx, pm__v2d dpz,
                                         pm__v2d dqx, pm__v2d dqz) {
    pm__v2d zero = {0.0, 0.0};
    pm__v2d ex = q->vx - p->ux, ez = q->vz - p->uz;   /* orientation 1's c - a; 3's a - c */
    pm__v2d fx = q->ux - p->vx, fz = q->uz - p->vz;   /* orientation 2's c - a; 4's a - c */
    pm__v2d gx = q->vx - p->vx, gz = q->vz - p->vz;   /* orientation 2's b - a */
    pm__v2d hx = p->ux - q->ux, hz = p->uz - q->uz;   /* orientation 4's b - a */
    pm__v2i ok = (dpz * ex - dpx * ez > zero) & (gz * fx - gx * fz > zero) & (dqz * ex - dqx * ez > zero) &
                 (hx * fz - hz * fx > zero);
    return (ok[0] & ok[1]) != 0;
}

bool pm__road_bands_sure(const double p[8], const double q[8], bool fast) {
    pm__band_end e[2];
    for (int k = 0; k < 2; k++) {
        const double *v = k ? q : p;
        e[k] = (pm__band_end){{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, {v[6], v[7]}};
    }
    if (!fast) return pm__bands_surely_ok(&e[0], &e[1]);
    return pm__bands_surely_ok_d(&e[0], &e[1], e[0].vx - e[0].ux, e[0].vz - e[0].uz, e[1].vx - e[1].ux,
                                 e[1].vz - e[1].uz);
}

/* Whether section s is fresh: no fan, both clamps the full width W. */
static inline bool pm__fresh(const pm__section *s, double W) {
    return !(s->fan[0] | s->fan[1] | (s->clamp[0] != W) | (s->clamp[1] != W));
}

/* Fresh section s's band end: its corners at 0 and -W (u), W and 0 (v),
 * pm__plan_at's sums. */
static inline pm__band_end pm__band_end_at(const pm__section *s, double W) {
    pm__v2d eu = {0.0, -1.0 * W}, ev = {1.0 * W, 0.0};
    pm__v2d cx = {s->c[0], s->c[0]}, cz = {s->c[2], s->c[2]};
    pm__v2d rx = {s->r[0], s->r[0]}, rz = {s->r[2], s->r[2]};
    return (pm__band_end){cx + eu * rx, cz + eu * rz, cx + ev * rx, cz + ev * rz};
}

/* Both side bands between band ends p and q by pm__quad_ok (the exact
 * test, where the six differences' quick one is not sure). */
static bool pm__bands_exact(const pm__band_end *p, const pm__band_end *q) {
    double A1[2] = {p->ux[0], p->uz[0]}, A2[2] = {q->ux[0], q->uz[0]};
    double B1[2][2] = {{p->ux[1], p->uz[1]}, {p->vx[0], p->vz[0]}};
    double B2[2][2] = {{q->ux[1], q->uz[1]}, {q->vx[0], q->vz[0]}};
    for (int side = 0; side < 2; side++)
        if (!pm__quad_ok(A1, A2, B1[side], B2[side], side)) return false;
    return true;
}

/* pm__road_fold_free two lanes wide (one band at a time). */
static bool pm__fold_free_plain(const pm__level *L) {
    const pm__section *sc = L->sec;
    size_t m = L->closed ? L->n - 1 : L->n;
    if (m < 3) return false;   /* pm__road_fans: too short to fan, the pairwise pass decides */
    /* Fresh sections only: no fan, every clamp the full width W; the
     * corners are pm__plan_at's sums at 0, -W and W. */
    double W = sc[0].clamp[0];
    size_t nb = L->closed ? m : L->n - 1;   /* a closed road's last band ends on its first section */
    pm__band_end p, q;
    memset(&p, 0, sizeof p);
    pm__v2d dpx = {0.0, 0.0}, dpz = {0.0, 0.0};
    for (size_t i = 0; i <= nb; i++) {
        const pm__section *s = &sc[i < m ? i : 0];
        if (!pm__fresh(s, W)) return false;
        q = pm__band_end_at(s, W);
        pm__v2d dqx = q.vx - q.ux, dqz = q.vz - q.uz;
        bool sure = i > 0 && pm__bands_surely_ok_d(&p, &q, dpx, dpz, dqx, dqz);
        dpx = dqx, dpz = dqz;
        if (i > 0 && !sure && !pm__bands_exact(&p, &q)) return false;
        p = q;
    }
    /* A closed road's last section (not in a band above) is fresh too. */
    return pm__fresh(&sc[L->n - 1], W);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define PM__FOLD_AVX 1
#include <immintrin.h>

/* Both side bands between fresh sections a and b (full width W) as
 * pm__fold_free_plain tests them: the band ends it makes, the six
 * differences' quick test, else the exact one. For the four-lane pass's
 * few odd bands; not inlined there: built plain, off its loop (inlined,
 * GCC encodes its {W, 0} lanes with a VEX vmovq that valgrind 3.19, the
 * callgrind the bench counts with, cannot decode). */
static __attribute__((noinline)) bool pm__band_pair_ok(const pm__section *a, const pm__section *b, double W) {
    pm__band_end e[2] = {pm__band_end_at(a, W), pm__band_end_at(b, W)};
    return pm__bands_surely_ok_d(&e[0], &e[1], e[0].vx - e[0].ux, e[0].vz - e[0].uz, e[1].vx - e[1].ux,
                                 e[1].vz - e[1].uz) ||
           pm__bands_exact(&e[0], &e[1]);
}

/* One side's bands in four lanes: pm__bands_surely_ok_d's differences
 * and orientations, lane by lane, from the band ends' points (p before,
 * q after). */
__attribute__((target("avx"))) static inline __m256d pm__sure4(__m256d pux, __m256d puz, __m256d pvx, __m256d pvz,
                                                               __m256d qux, __m256d quz, __m256d qvx,
                                                               __m256d qvz) {
    const __m256d zero = _mm256_setzero_pd();
    __m256d dpx = _mm256_sub_pd(pvx, pux), dpz = _mm256_sub_pd(pvz, puz);
    __m256d dqx = _mm256_sub_pd(qvx, qux), dqz = _mm256_sub_pd(qvz, quz);
    __m256d ex = _mm256_sub_pd(qvx, pux), ez = _mm256_sub_pd(qvz, puz);
    __m256d fx = _mm256_sub_pd(qux, pvx), fz = _mm256_sub_pd(quz, pvz);
    __m256d gx = _mm256_sub_pd(qvx, pvx), gz = _mm256_sub_pd(qvz, pvz);
    __m256d hx = _mm256_sub_pd(pux, qux), hz = _mm256_sub_pd(puz, quz);
    __m256d o1 = _mm256_sub_pd(_mm256_mul_pd(dpz, ex), _mm256_mul_pd(dpx, ez));
    __m256d o2 = _mm256_sub_pd(_mm256_mul_pd(gz, fx), _mm256_mul_pd(gx, fz));
    __m256d o3 = _mm256_sub_pd(_mm256_mul_pd(dqz, ex), _mm256_mul_pd(dqx, ez));
    __m256d o4 = _mm256_sub_pd(_mm256_mul_pd(hx, fz), _mm256_mul_pd(hz, fx));
    return _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(o1, zero, _CMP_GT_OQ), _mm256_cmp_pd(o2, zero, _CMP_GT_OQ)),
                         _mm256_and_pd(_mm256_cmp_pd(o3, zero, _CMP_GT_OQ), _mm256_cmp_pd(o4, zero, _CMP_GT_OQ)));
}

/* (prev's last lane, cur's first three): the points one section back. */
__attribute__((target("avx"))) static inline __m256d pm__back1(__m256d prev, __m256d cur) {
    return _mm256_shuffle_pd(_mm256_permute2f128_pd(prev, cur, 0x21), cur, 5);
}

/* pm__fold_free_plain four sections at a time: lane k holds section
 * j + k, as its centre C = c + 0 r, right corner R = c + W r and left
 * corner L = c - W r (pm__plan_at's sums, each once), and the bands
 * ending on it are tested from the points one section back: the right
 * band C, R to C, R, the left band L, C to L, C. Each lane does the plain
 * code's operations in its order (the same points, differences and
 * orientations), so the verdict is the same; where a band is not surely
 * convex, pm__bands_exact decides as there. The last bands (fewer than
 * four, or a closed road's across its seam) go the plain way. */
__attribute__((target("avx"))) static bool pm__fold_free_avx(const pm__level *L) {
    const pm__section *sc = L->sec;
    size_t m = L->closed ? L->n - 1 : L->n;
    if (m < 3) return false;
    double W = sc[0].clamp[0];
    size_t nb = L->closed ? m : L->n - 1;   /* a closed road's last band ends on its first section */
    /* w: W in every lane (1.0 * W, the plain code's factor, is W) */
    const __m256d zero = _mm256_setzero_pd(), w = _mm256_set1_pd(1.0 * W), mw = _mm256_set1_pd(-1.0 * W);
    if (!pm__fresh(&sc[0], W)) return false;
    /* Section 0 in every lane: the points one section back of section 1. */
    __m256d rx = _mm256_set1_pd(sc[0].r[0]), rz = _mm256_set1_pd(sc[0].r[2]);
    __m256d cx = _mm256_set1_pd(sc[0].c[0]), cz = _mm256_set1_pd(sc[0].c[2]);
    __m256d Cx = _mm256_add_pd(cx, _mm256_mul_pd(zero, rx)), Cz = _mm256_add_pd(cz, _mm256_mul_pd(zero, rz));
    __m256d Rx = _mm256_add_pd(cx, _mm256_mul_pd(w, rx)), Rz = _mm256_add_pd(cz, _mm256_mul_pd(w, rz));
    __m256d Lx = _mm256_add_pd(cx, _mm256_mul_pd(mw, rx)), Lz = _mm256_add_pd(cz, _mm256_mul_pd(mw, rz));
    size_t j = 1;
    for (; j + 3 < m; j += 4) {
        const pm__section *s = &sc[j];
        /* pm__fresh of the four: a clamp other than W (or NaN) or a fan says no */
        __m256d c01 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(s[0].clamp)), _mm_loadu_pd(s[1].clamp), 1);
        __m256d c23 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(s[2].clamp)), _mm_loadu_pd(s[3].clamp), 1);
        uint16_t f[4];
        for (int k = 0; k < 4; k++) memcpy(&f[k], s[k].fan, sizeof f[k]);
        if (_mm256_movemask_pd(_mm256_or_pd(_mm256_cmp_pd(c01, w, _CMP_NEQ_UQ), _mm256_cmp_pd(c23, w, _CMP_NEQ_UQ))) |
            f[0] | f[1] | f[2] | f[3])
            return false;
        rx = _mm256_setr_pd(s[0].r[0], s[1].r[0], s[2].r[0], s[3].r[0]);
        rz = _mm256_setr_pd(s[0].r[2], s[1].r[2], s[2].r[2], s[3].r[2]);
        cx = _mm256_setr_pd(s[0].c[0], s[1].c[0], s[2].c[0], s[3].c[0]);
        cz = _mm256_setr_pd(s[0].c[2], s[1].c[2], s[2].c[2], s[3].c[2]);
        __m256d qCx = _mm256_add_pd(cx, _mm256_mul_pd(zero, rx)), qCz = _mm256_add_pd(cz, _mm256_mul_pd(zero, rz));
        __m256d qRx = _mm256_add_pd(cx, _mm256_mul_pd(w, rx)), qRz = _mm256_add_pd(cz, _mm256_mul_pd(w, rz));
        __m256d qLx = _mm256_add_pd(cx, _mm256_mul_pd(mw, rx)), qLz = _mm256_add_pd(cz, _mm256_mul_pd(mw, rz));
        __m256d pCx = pm__back1(Cx, qCx), pCz = pm__back1(Cz, qCz);
        __m256d pRx = pm__back1(Rx, qRx), pRz = pm__back1(Rz, qRz);
        __m256d pLx = pm__back1(Lx, qLx), pLz = pm__back1(Lz, qLz);
        __m256d right = pm__sure4(pCx, pCz, pRx, pRz, qCx, qCz, qRx, qRz);
        __m256d left = pm__sure4(pLx, pLz, pCx, pCz, qLx, qLz, qCx, qCz);
        int mask = _mm256_movemask_pd(_mm256_and_pd(right, left));
        if (mask != 15)   /* not sure of both bands somewhere: the exact test there */
            for (int k = 0; k < 4; k++)
                if (!(mask >> k & 1) && !pm__band_pair_ok(&s[k - 1], &s[k], W)) return false;
        Cx = qCx, Cz = qCz, Rx = qRx, Rz = qRz, Lx = qLx, Lz = qLz;
    }
    for (; j <= nb; j++) {
        const pm__section *b = &sc[j < m ? j : 0];
        if (!pm__fresh(b, W) || !pm__band_pair_ok(&sc[j - 1], b, W)) return false;
    }
    return pm__fresh(&sc[L->n - 1], W);
}
#else
#define PM__FOLD_AVX 0
#endif

bool pm__road_fold_free_x(const pm__level *L, bool fast) {
#if PM__FOLD_AVX
    if (fast && __builtin_cpu_supports("avx")) return pm__fold_free_avx(L);
#else
    (void)fast;
#endif
    return pm__fold_free_plain(L);
}

bool pm__road_fold_free(const pm__level *L) {
    return pm__road_fold_free_x(L, true);
}

void pm__road_clamp_folds(pm__ctx *x, pm__level *L) {
    pm__section *sc = L->sec;
    size_t n = L->n;
    /* The usual road: every band convex at full width on both sides, the
     * verdict pm__road_fans reaches for each side (one pass, no arrays). */
    if ((L->fold_free = pm__road_fold_free(L))) return;
    bool left = pm__road_fans(x, L, 0), right = pm__road_fans(x, L, 1);
    /* Every band convex at full width on both sides: nothing to cut back. */
    if (!left && !right) return;
    for (int pass = 0; pass < 4; pass++) {
        bool changed = false;
        for (int side = 0; side < 2; side++)
            for (size_t i = 0; i + 1 < n; i++) changed |= pm__clamp_pair(&sc[i], &sc[i + 1], side);
        if (!x->p->closed) break;
        /* The closing section is the first: share the tighter clamp. */
        for (int side = 0; side < 2; side++) {
            double m = fmin(sc[0].clamp[side], sc[n - 1].clamp[side]);
            if (m != sc[0].clamp[side] || m != sc[n - 1].clamp[side]) changed = true;
            sc[0].clamp[side] = sc[n - 1].clamp[side] = m;
        }
        if (!changed) break;
    }
}


/* Copies the collapsed columns of section `from` onto section `to` (one side). */
static void pm__copy_collapse(pm__level *L, size_t from, size_t to, int side) {
    size_t nc = L->ncol;
    for (size_t k = 0; k < nc; k++) {
        if ((L->col[k] > 0.0) != (side == 1) || L->col[k] == 0.0 || !pm__road_collapsed(L, &L->sec[to], (uint32_t)k))
            continue;
        size_t t = to * nc + k, f = from * nc + (side ? nc - 1 : 0);
        memcpy(L->pos + 3 * t, L->pos + 3 * f, 3 * sizeof(double));
        if (L->nrm) memcpy(L->nrm + 3 * t, L->nrm + 3 * f, 3 * sizeof(float));   /* with its plan point */
    }
}

/* Consecutive sections cut back to the same plan point (a fold's collapse
 * point, 1e-7 apart by construction) get the very same 3D point: with
 * banking their own heights there differ, which would leave a vertical
 * crack. Closed roads weld across the seam too. */
void pm__road_weld_collapses(pm__level *L) {
    size_t n = L->n, nc = L->ncol;
    double W[2] = {-L->col[0], L->col[nc - 1]};
    /* Which sides are cut back anywhere (most roads: neither), in one scan. */
    bool cut[2] = {false, false};
    for (size_t i = 0; i < n; i++) {
        cut[0] |= L->sec[i].clamp[0] < W[0];
        cut[1] |= L->sec[i].clamp[1] < W[1];
    }
    for (int side = 0; side < 2; side++) {
        size_t ko = side ? nc - 1 : 0;
        for (size_t i = 1; i < n && cut[side]; i++) {
            const double *a = L->pos + 3 * ((i - 1) * nc + ko), *b = L->pos + 3 * (i * nc + ko);
            if (L->sec[i].clamp[side] < W[side] && L->sec[i - 1].clamp[side] < W[side] &&
                hypot(b[0] - a[0], b[2] - a[2]) < 1e-4)
                pm__copy_collapse(L, i - 1, i, side);
        }
        if (!L->closed) continue;
        /* The last section is the first: let the chain that reaches it
         * end on the first section's point. */
        pm__copy_collapse(L, 0, n - 1, side);
        for (size_t i = n - 1; i-- > 0;) {
            const double *a = L->pos + 3 * ((i + 1) * nc + ko), *b = L->pos + 3 * (i * nc + ko);
            if (!(L->sec[i].clamp[side] < W[side]) || hypot(b[0] - a[0], b[2] - a[2]) >= 1e-4) break;
            if (memcmp(a, b, 3 * sizeof(double)) == 0) break;
            pm__copy_collapse(L, i + 1, i, side);
        }
    }
}


#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/plan_overlap.h"
#include "geom/predicates.h"
#include "scene/rng.h"

#include "../support/pm_test_overlap.h"

/* pm_ptri_side and pm_ptri_apart (network_overlap.c leaves out the pair
 * tests of a junction's and its road's triangles on opposite sides of the
 * mouth's line): on random lines at any angle and triangles drawn from
 * the line's own points (p, q, the known point k), points exactly on it,
 * points a float or two off it, grid points (so that shared corners,
 * shared edges either way, collinear edges on the line and corners on
 * edges are common), -0 against +0:
 *  - every side it names is the exact one (pm_orient2d of each corner);
 *  - on every pair it calls apart, pm_ptri_overlap and pm_test_overlap.h's
 *    own exact test both say the interiors do not meet. */

static double o(const pm_pline *L, const double v[2]) { return pm_orient2d(L->p, L->q, v); }

static void flt(double *d) { d[0] = (float)d[0], d[1] = (float)d[1]; }

static void random_line(pm_rng *r, pm_pline *L, int kinds) {
    double p[2], q[2], k[2];
    int kind = (int)pm_rng_below(r, (uint64_t)kinds);
    if (kind == 3) {           /* through the origin from far off: corners near it are not told by the estimate */
        double m = (float)pm_rng_range(r, 1e5, 1e7), f = (float)pm_rng_range(r, -10, 10);
        p[0] = m, p[1] = (float)(m * f), q[0] = -p[0], q[1] = -p[1];
    } else if (kind == 0) {           /* a coarse grid */
        do {
            p[0] = (double)pm_rng_below(r, 7) - 3, p[1] = (double)pm_rng_below(r, 7) - 3;
            q[0] = (double)pm_rng_below(r, 7) - 3, q[1] = (double)pm_rng_below(r, 7) - 3;
        } while (p[0] == q[0] && p[1] == q[1]);
    } else {                   /* a mouth some metres wide at any heading, far from the origin */
        double ox = pm_rng_range(r, -3000, 3000), oz = pm_rng_range(r, -3000, 3000);
        double a = pm_rng_range(r, 0, 6.283185307179586), w = pm_rng_range(r, 0.5, 12);
        if (kind == 2) ox = round(ox * 1000) / 1000, oz = round(oz * 1000) / 1000;
        p[0] = ox, p[1] = oz, q[0] = ox + w * cos(a), q[1] = oz + w * sin(a);
        flt(p), flt(q);
        if (p[0] == q[0] && p[1] == q[1]) q[0] += 1;
    }
    /* k: the centre as floats (on the line or a rounding off it) or any point. */
    if (pm_rng_below(r, 4)) k[0] = (float)((p[0] + q[0]) / 2), k[1] = (float)((p[1] + q[1]) / 2);
    else k[0] = (float)pm_rng_range(r, -3, 3) + p[0], k[1] = (float)pm_rng_range(r, -3, 3) + p[1];
    flt(k);
    cr_assert((float)p[0] == p[0] && (float)p[1] == p[1] && (float)q[0] == q[0] && (float)q[1] == q[1] && (float)k[0] == k[0] && (float)k[1] == k[1], "line %d", kind);
    pm_pline_init(L, p, q, k);
}

/* A corner for a triangle near L: one of its points, a point on it (by a
 * step the floats hold exactly on a grid line), a float or two off it,
 * a grid point, or a point up to a few metres away. */
static void random_corner(pm_rng *r, const pm_pline *L, float out[2]) {
    double v[2];
    double dx = L->q[0] - L->p[0], dz = L->q[1] - L->p[1];
    switch (pm_rng_below(r, 8)) {
    case 7:                    /* very near the origin (where kind 3's lines pass), or on it */
        v[0] = (float)pm_rng_range(r, -1e-20, 1e-20), v[1] = (float)pm_rng_range(r, -1e-20, 1e-20);
        if (pm_rng_below(r, 4) == 0) v[pm_rng_below(r, 2)] = 0;
        break;
    case 0: memcpy(v, L->p, 2 * sizeof *v); break;
    case 1: memcpy(v, L->q, 2 * sizeof *v); break;
    case 2: memcpy(v, L->k, 2 * sizeof *v); break;
    case 3: {
        double t = (double)pm_rng_below(r, 9) / 4 - 1;
        v[0] = L->p[0] + t * dx, v[1] = L->p[1] + t * dz;
        flt(v);
        break;
    }
    case 4: {
        double t = pm_rng_range(r, -1, 2);
        v[0] = nextafterf((float)(L->p[0] + t * dx), pm_rng_below(r, 2) ? HUGE_VALF : -HUGE_VALF);
        v[1] = (float)(L->p[1] + t * dz);
        break;
    }
    case 5:
        v[0] = floor(L->p[0]) + (double)pm_rng_below(r, 7) - 3, v[1] = floor(L->p[1]) + (double)pm_rng_below(r, 7) - 3;
        flt(v);
        break;
    default:
        v[0] = (float)(L->p[0] + pm_rng_range(r, -6, 6));
        v[1] = (float)(L->p[1] + pm_rng_range(r, -6, 6));
    }
    out[0] = (float)v[0], out[1] = (float)v[1];
    if (out[0] == 0 && pm_rng_below(r, 2)) out[0] = -0.0f;
    if (out[1] == 0 && pm_rng_below(r, 2)) out[1] = -0.0f;
}

/* A triangle of plan area as pm_pset_add keeps it, and the oracle's. */
static bool random_tri(pm_rng *r, const pm_pline *L, pm_ptri *T, ptri *t) {
    float f[3][2];
    double v[3][2];
    for (int i = 0; i < 3; i++) {
        random_corner(r, L, f[i]);
        v[i][0] = f[i][0], v[i][1] = f[i][1];
    }
    if (!ptri_make(v[0], v[1], v[2], t)) return false;
    for (int i = 0; i < 3; i++) {
        T->f[i][0] = (float)t->v[i][0], T->f[i][1] = (float)t->v[i][1];
    }
    return true;
}

static bool ordinary(const ptri *t) {
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 2; c++)
            if (t->v[i][c] != 0 && fabs(t->v[i][c]) < 1e-6) return false;
    return true;
}

static void check_side(const pm_pline *L, const ptri *t, unsigned s) {
    cr_assert(s == 0 || s == PM_PTRI_LEFT || s == PM_PTRI_RIGHT);
    for (int i = 0; i < 3; i++) {
        if (s == PM_PTRI_LEFT) cr_assert_geq(o(L, t->v[i]), 0, "a corner right of a line said left of");
        if (s == PM_PTRI_RIGHT) cr_assert_leq(o(L, t->v[i]), 0, "a corner left of a line said right of");
    }
}

Test(ptri_side, sides_exact_and_pairs_apart_never_overlap) {
    pm_rng r;
    pm_rng_seed(&r, 20261202);
    size_t apart = 0, touching = 0, on_line = 0, shared_edge = 0;
    for (int it = 0; it < 20000; it++) {
        pm_pline L;
        random_line(&r, &L, 4);
        cr_assert((L.ko > 0) == (pm_orient2d(L.p, L.q, L.k) > 0) && (L.ko < 0) == (pm_orient2d(L.p, L.q, L.k) < 0));
        pm_ptri T[8];
        ptri t[8];
        unsigned s[8];
        int n = 0;
        for (int k = 0; k < 40 && n < 8; k++)
            if (random_tri(&r, &L, &T[n], &t[n])) {
                s[n] = pm_ptri_side(&T[n], &L);
                check_side(&L, &t[n], s[n]);
                n++;
            }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                if (!pm_ptri_apart(s[i], s[j])) continue;
                cr_assert(!pm_ptri_overlap(&T[i], &T[j]), "line %d: a pair apart that pm_ptri_overlap says overlaps", it);
                /* (The oracle's rounded centroids can fall outside a
                 * sliver of corners 1e-20 from far ones: not there.) */
                if (ordinary(&t[i]) && ordinary(&t[j]))
                    cr_assert(!ptri_overlap(&t[i], &t[j]), "line %d: a pair apart whose interiors meet", it);
                apart++;
                int shared = 0, zero = 0;
                for (int a = 0; a < 3; a++) {
                    zero += o(&L, t[i].v[a]) == 0;
                    for (int b = 0; b < 3; b++) shared += t[i].v[a][0] == t[j].v[b][0] && t[i].v[a][1] == t[j].v[b][1];
                }
                touching += shared > 0;
                shared_edge += shared >= 2;
                on_line += zero >= 2;
            }
    }
    cr_log_info("pairs apart: %zu (%zu touching, %zu sharing an edge, %zu with an edge on the line)", apart, touching,
                shared_edge, on_line);
    cr_assert_geq(apart, 50000);
    cr_assert_geq(touching, 20000);
    cr_assert_geq(shared_edge, 3000);
    cr_assert_geq(on_line, 10000);
}

/* Clear cases are decided: triangles well off a line at any angle get
 * their side (the check would leave out nothing otherwise). */
Test(ptri_side, clear_sides_found) {
    pm_rng r;
    pm_rng_seed(&r, 7);
    for (int it = 0; it < 5000; it++) {
        pm_pline L;
        random_line(&r, &L, 3);   /* (kind 3's floats are too coarse for a clear side) */
        double nx = -(L.q[1] - L.p[1]), nz = L.q[0] - L.p[0], len = hypot(nx, nz);
        double side = pm_rng_below(&r, 2) ? 1 : -1, v[3][2];
        for (int i = 0; i < 3; i++) {
            double t = pm_rng_range(&r, -2, 3), d = pm_rng_range(&r, 0.01, 4) * side / len;
            v[i][0] = (float)(L.p[0] + t * (L.q[0] - L.p[0]) + d * nx);
            v[i][1] = (float)(L.p[1] + t * (L.q[1] - L.p[1]) + d * nz);
        }
        ptri t;
        if (!ptri_make(v[0], v[1], v[2], &t)) continue;
        pm_ptri T;
        for (int i = 0; i < 3; i++) T.f[i][0] = (float)t.v[i][0], T.f[i][1] = (float)t.v[i][1];
        cr_assert_eq(pm_ptri_side(&T, &L), side > 0 ? PM_PTRI_LEFT : PM_PTRI_RIGHT, "line %d", it);
    }
}

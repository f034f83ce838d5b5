#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/plan_overlap.h"
#include "geom/predicates.h"
#include "scene/rng.h"

/* pm_ptri_overlap skips its shared-edge scan unless two corners of one
 * triangle equal corners of the other: on random pairs (sharing an edge
 * either way, a corner, none; corners on a coarse grid so that collinear
 * and touching cases are common; -0 against +0) it must give the verdict
 * of the plain code it replaced, written out here, and of an independent
 * point-sampling oracle where that can decide. */

static bool same(const float *p, const float *q) { return p[0] == q[0] && p[1] == q[1]; }

static double o(const float *p, const float *q, const float *r) {
    double a[2] = {p[0], p[1]}, b[2] = {q[0], q[1]}, c[2] = {r[0], r[1]};
    return pm_orient2d(a, b, c);
}

static bool separates(const pm_ptri *a, const pm_ptri *b) {
    for (int i = 0; i < 3; i++) {
        const float *p = a->f[i], *q = a->f[(i + 1) % 3];
        if (o(p, q, b->f[0]) <= 0 && o(p, q, b->f[1]) <= 0 && o(p, q, b->f[2]) <= 0) return true;
    }
    return false;
}

/* The code before the fast path: every edge pair scanned. */
static bool plain_overlap(const pm_ptri *a, const pm_ptri *b) {
    for (int i = 0; i < 3; i++) {
        const float *p = a->f[i], *q = a->f[(i + 1) % 3];
        for (int j = 0; j < 3; j++) {
            const float *r = b->f[j], *t = b->f[(j + 1) % 3];
            if (same(p, r) && same(q, t)) return true;
            if (same(p, t) && same(q, r)) return false;
        }
    }
    return !separates(a, b) && !separates(b, a);
}

/* A point strictly inside both (exactly): interiors meet for sure. */
static bool inside(const pm_ptri *t, const float *p) {
    return o(t->f[0], t->f[1], p) > 0 && o(t->f[1], t->f[2], p) > 0 && o(t->f[2], t->f[0], p) > 0;
}

static void corner(pm_rng *r, float *p, int grid) {
    if (grid) {
        p[0] = (float)pm_rng_below(r, 5) - 2.0f;
        p[1] = (float)pm_rng_below(r, 5) - 2.0f;
        if (p[0] == 0 && pm_rng_below(r, 2)) p[0] = -0.0f;
        if (p[1] == 0 && pm_rng_below(r, 2)) p[1] = -0.0f;
    } else {
        p[0] = (float)pm_rng_range(r, -3, 3);
        p[1] = (float)pm_rng_range(r, -3, 3);
    }
}

/* Counter-clockwise with plan area (pm_pset_add's triangles), or false. */
static bool ccw(pm_ptri *t) {
    double a = o(t->f[0], t->f[1], t->f[2]);
    if (a == 0) return false;
    if (a < 0) {
        float s[2];
        memcpy(s, t->f[1], sizeof s);
        memcpy(t->f[1], t->f[2], sizeof s);
        memcpy(t->f[2], s, sizeof s);
    }
    return true;
}

Test(ptri_overlap, fast_path_as_the_plain_scan) {
    pm_rng r;
    pm_rng_seed(&r, 777);
    int n = 0, yes = 0, no = 0, shared_edge = 0, sampled = 0;
    for (int it = 0; it < 300000; it++) {
        pm_ptri a = {0}, b = {0};
        int grid = it % 3 != 0;
        for (int k = 0; k < 3; k++) corner(&r, a.f[k], grid), corner(&r, b.f[k], grid);
        /* Share corners of a: none, one, an edge (either way round once
         * both are turned counter-clockwise), all three. */
        int share = (int)pm_rng_below(&r, 5);
        for (int k = 0; k < share && k < 3; k++) {
            int from = (k + it) % 3, to = (int)pm_rng_below(&r, 3);
            memcpy(b.f[to], a.f[from], sizeof b.f[to]);
            if (pm_rng_below(&r, 4) == 0) {   /* the same point as -0 */
                for (int c = 0; c < 2; c++)
                    if (b.f[to][c] == 0) b.f[to][c] = -b.f[to][c];
            }
        }
        if (!ccw(&a) || !ccw(&b)) continue;
        bool fast = pm_ptri_overlap(&a, &b), want = plain_overlap(&a, &b);
        cr_assert_eq(fast, want, "pair %d: fast %d, plain %d", it, fast, want);
        cr_assert_eq(pm_ptri_overlap(&b, &a), plain_overlap(&b, &a), "pair %d swapped", it);
        /* The centroid of one strictly inside the other: they overlap. */
        float g[2] = {(float)(((double)a.f[0][0] + a.f[1][0] + a.f[2][0]) / 3),
                      (float)(((double)a.f[0][1] + a.f[1][1] + a.f[2][1]) / 3)};
        if (inside(&a, g) && inside(&b, g)) {
            cr_assert(fast, "pair %d: a point inside both, yet no overlap", it);
            sampled++;
        }
        int e = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                e += (same(a.f[i], b.f[j]) && same(a.f[(i + 1) % 3], b.f[(j + 1) % 3])) ||
                     (same(a.f[i], b.f[(j + 1) % 3]) && same(a.f[(i + 1) % 3], b.f[j]));
        shared_edge += e > 0;
        n++;
        yes += fast;
        no += !fast;
    }
    cr_assert_gt(shared_edge, 20000, "pairs sharing an edge: %d of %d", shared_edge, n);
    cr_assert_gt(yes, 20000, "overlapping: %d", yes);
    cr_assert_gt(no, 20000, "apart: %d", no);
    cr_assert_gt(sampled, 5000, "decided by a point inside both: %d", sampled);
}

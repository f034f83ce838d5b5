#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geom/delaunay.h"
#include "geom/predicates.h"
#include "scene/result.h"
#include "scene/rng.h"

/* Checks everything a Delaunay triangulation promises, exactly:
 * - each triangle is CCW with positive area;
 * - half-edges pair up, run opposite ways, and -1 marks exactly the hull;
 * - the hull is a closed CCW loop, convex (no right turn), over those edges;
 * - every interior edge is locally Delaunay (pm_incircle <= 0 across it);
 * - every distinct point is a triangle corner; Euler: t == 2n - h - 2.
 * Local Delaunay everywhere plus a consistent, oriented edge pairing gives a
 * global Delaunay triangulation of the hull without overlaps. */
static void check_dt(const double *pts, uint32_t n, const pm_delaunay *d) {
    const uint32_t *t = d->triangles;
    const int32_t *he = d->halfedges;
    uint32_t ne = 3 * d->ntriangles, hull_edges = 0;
    cr_assert_eq(d->npoints, n);
    for (uint32_t e = 0; e < ne; e++) {
        cr_assert_lt(t[e], n);
        if (e % 3 == 0)
            cr_assert_gt(pm_orient2d(pts + 2 * t[e], pts + 2 * t[e + 1], pts + 2 * t[e + 2]), 0,
                         "triangle %u not CCW", e / 3);
        if (he[e] < 0) {
            hull_edges++;
            continue;
        }
        uint32_t f = (uint32_t)he[e];
        cr_assert_lt(f, ne);
        cr_assert_eq(he[f], (int32_t)e);
        cr_assert_eq(t[e], t[pm_delaunay_next(f)]);
        cr_assert_eq(t[f], t[pm_delaunay_next(e)]);
        uint32_t apex = t[pm_delaunay_prev(f)];
        uint32_t a = e - e % 3;
        cr_assert_leq(pm_incircle(pts + 2 * t[a], pts + 2 * t[a + 1], pts + 2 * t[a + 2], pts + 2 * apex),
                      0, "edge %u not locally Delaunay", e);
    }
    cr_assert_eq(hull_edges, d->nhull, "hull edges %u, hull %u", hull_edges, d->nhull);
    /* Each hull edge is a half-edge with no twin, and the hull turns left. */
    for (uint32_t k = 0; k < d->nhull; k++) {
        uint32_t a = d->hull[k], b = d->hull[(k + 1) % d->nhull], c = d->hull[(k + 2) % d->nhull];
        cr_assert_geq(pm_orient2d(pts + 2 * a, pts + 2 * b, pts + 2 * c), 0);
        bool found = false;
        for (uint32_t e = 0; e < ne && !found; e++)
            found = he[e] < 0 && t[e] == a && t[pm_delaunay_next(e)] == b;
        cr_assert(found, "hull edge %u->%u missing", a, b);
    }
    /* Every point is used unless it was reported as a duplicate. */
    char *used = calloc(n, 1);
    for (uint32_t e = 0; e < ne; e++) used[t[e]] = 1;
    for (uint32_t k = 0; k < d->nduplicates; k++) {
        uint32_t s = d->duplicates[2 * k], kept = d->duplicates[2 * k + 1];
        cr_assert(!used[s]);
        cr_assert(used[kept]);
        cr_assert(pts[2 * s] == pts[2 * kept] && pts[2 * s + 1] == pts[2 * kept + 1]);
        used[s] = 2;
    }
    for (uint32_t i = 0; i < n; i++) cr_assert(used[i], "point %u lost", i);
    free(used);
    uint32_t distinct = n - d->nduplicates;
    cr_assert_eq(d->ntriangles, 2 * distinct - d->nhull - 2, "t=%u n=%u h=%u", d->ntriangles,
                 distinct, d->nhull);
}

static double *random_points(uint64_t seed, uint32_t n, double scale) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    double *p = malloc(2 * sizeof(double) * n);
    for (uint32_t i = 0; i < 2 * n; i++) p[i] = pm_rng_range(&r, -scale, scale);
    return p;
}

static void triangulate_and_check(const double *pts, uint32_t n) {
    pm_arena *a = pm_arena_create(0);
    pm_delaunay d;
    cr_assert_eq(pm_delaunay_build(a, pts, n, &d), PM_OK);
    cr_assert(!d.collinear);
    check_dt(pts, n, &d);
    pm_arena_destroy(a);
}

Test(delaunay, random_sets_many_seeds) {
    for (uint64_t seed = 1; seed <= 300; seed++) {
        uint32_t n = 3 + (uint32_t)(seed * 37 % 400);
        double *p = random_points(seed, n, seed % 2 ? 1.0 : 1e6);
        triangulate_and_check(p, n);
        free(p);
    }
}

Test(delaunay, large_random_set) {
    uint32_t n = 50000;
    double *p = random_points(99, n, 100.0);
    pm_arena *a = pm_arena_create(0);
    pm_delaunay d;
    cr_assert_eq(pm_delaunay_build(a, p, n, &d), PM_OK);
    /* The hull-edge scan in check_dt is quadratic; check the rest directly. */
    uint32_t hull_edges = 0;
    for (uint32_t e = 0; e < 3 * d.ntriangles; e++) {
        if (d.halfedges[e] < 0) {
            hull_edges++;
            continue;
        }
        uint32_t f = (uint32_t)d.halfedges[e], t0 = e - e % 3;
        cr_assert_leq(pm_incircle(p + 2 * d.triangles[t0], p + 2 * d.triangles[t0 + 1],
                                  p + 2 * d.triangles[t0 + 2], p + 2 * d.triangles[pm_delaunay_prev(f)]),
                      0);
    }
    cr_assert_eq(hull_edges, d.nhull);
    cr_assert_eq(d.ntriangles, 2 * n - d.nhull - 2);
    pm_arena_destroy(a);
    free(p);
}

/* Integer lattices: every unit square is cocircular, every row collinear. */
Test(delaunay, square_lattice_cocircular) {
    for (uint32_t w = 2; w <= 24; w += 3) {
        uint32_t n = w * w;
        double *p = malloc(2 * sizeof(double) * n);
        for (uint32_t i = 0; i < n; i++) p[2 * i] = i % w, p[2 * i + 1] = i / w;
        triangulate_and_check(p, n);
        free(p);
    }
}

/* A triangular lattice in floating point (rows at sqrt(3)/2): nearly
 * cocircular hexagons, where inexact predicates make crossing edges. */
Test(delaunay, triangular_lattice) {
    for (int rings = 1; rings <= 12; rings++) {
        double *p = malloc(2 * sizeof(double) * (size_t)(3 * rings * (rings + 1) + 1));
        uint32_t n = 0;
        for (int q = -rings; q <= rings; q++)
            for (int r = -rings; r <= rings; r++) {
                if (abs(q + r) > rings) continue;
                p[2 * n] = q + r * 0.5;
                p[2 * n + 1] = r * (sqrt(3.0) / 2);
                n++;
            }
        triangulate_and_check(p, n);
        free(p);
    }
}

/* Pythagorean points on the circle of radius 5 and 25 plus the centre. */
Test(delaunay, cocircular_integer_points) {
    double p[2 * 64];
    uint32_t n = 0;
    for (int x = -25; x <= 25; x++)
        for (int y = -25; y <= 25; y++)
            if ((x * x + y * y == 25 || x * x + y * y == 625) && n < 63) p[2 * n] = x, p[2 * n + 1] = y, n++;
    p[2 * n] = 0, p[2 * n + 1] = 0, n++;
    triangulate_and_check(p, n);
}

Test(delaunay, duplicates_are_skipped_and_reported) {
    uint32_t n = 400;
    double *p = random_points(7, n, 1.0);
    /* Every fourth point repeats an earlier one, some of them twice. */
    for (uint32_t i = 4; i < n; i += 4) {
        uint32_t src = (i * 7919u) % (i / 2);
        p[2 * i] = p[2 * src], p[2 * i + 1] = p[2 * src + 1];
    }
    pm_arena *a = pm_arena_create(0);
    pm_delaunay d;
    cr_assert_eq(pm_delaunay_build(a, p, n, &d), PM_OK);
    cr_assert_gt(d.nduplicates, 90);
    check_dt(p, n, &d);
    pm_arena_destroy(a);
    free(p);
}

Test(delaunay, all_duplicates_of_a_triangle) {
    double p[] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0};
    pm_arena *a = pm_arena_create(0);
    pm_delaunay d;
    cr_assert_eq(pm_delaunay_build(a, p, 7, &d), PM_OK);
    cr_assert_eq(d.ntriangles, 1);
    cr_assert_eq(d.nduplicates, 4);
    check_dt(p, 7, &d);
    pm_arena_destroy(a);
}

Test(delaunay, collinear_input_gives_no_triangles) {
    double p[2 * 50];
    for (int i = 0; i < 50; i++) p[2 * i] = 3.0 * ((i * 17) % 50) + 1, p[2 * i + 1] = 2.0 * ((i * 17) % 50) - 7;
    p[2 * 49] = p[2 * 3], p[2 * 49 + 1] = p[2 * 3 + 1];  /* and one duplicate */
    pm_arena *a = pm_arena_create(0);
    pm_delaunay d;
    cr_assert_eq(pm_delaunay_build(a, p, 50, &d), PM_OK);
    cr_assert(d.collinear);
    cr_assert_eq(d.ntriangles, 0);
    cr_assert_eq(d.nhull, 49);
    cr_assert_eq(d.nduplicates, 1);
    for (uint32_t k = 1; k < d.nhull; k++) cr_assert_lt(p[2 * d.hull[k - 1]], p[2 * d.hull[k]]);
    pm_arena_destroy(a);
}

Test(delaunay, tiny_inputs) {
    double p[] = {0, 0, 1, 1, 2, 2};
    pm_arena *a = pm_arena_create(0);
    pm_delaunay d;
    for (uint32_t n = 0; n <= 3; n++) {
        cr_assert_eq(pm_delaunay_build(a, p, n, &d), PM_OK);
        cr_assert(d.collinear);
        cr_assert_eq(d.ntriangles, 0);
        cr_assert_eq(d.nhull, n);
    }
    double q[] = {0, 0, 1, 0, 0, 1};
    cr_assert_eq(pm_delaunay_build(a, q, 3, &d), PM_OK);
    cr_assert(!d.collinear);
    check_dt(q, 3, &d);
    pm_arena_destroy(a);
}

/* Points on a line plus one off it: a fan of thin triangles. */
Test(delaunay, collinear_plus_one) {
    double p[2 * 41];
    for (int i = 0; i < 40; i++) p[2 * i] = i * 0.1, p[2 * i + 1] = i * 0.3;
    p[80] = 5, p[81] = -1;
    triangulate_and_check(p, 41);
}

/* Arbitrary insertion orders send most points through locate-and-split,
 * including points exactly on edges (lattice rows) and duplicates. */
Test(delaunay, ordered_insertion_robust_paths) {
    for (uint64_t seed = 1; seed <= 60; seed++) {
        uint32_t w = 3 + (uint32_t)(seed % 9), n = w * w + 20;
        double *p = malloc(2 * sizeof(double) * n);
        pm_rng r;
        pm_rng_seed(&r, seed);
        for (uint32_t i = 0; i < w * w; i++) p[2 * i] = i % w, p[2 * i + 1] = i / w;
        for (uint32_t i = w * w; i < n; i++) {
            if (i % 2) {
                uint32_t s = (uint32_t)pm_rng_below(&r, w * w);
                p[2 * i] = p[2 * s], p[2 * i + 1] = p[2 * s + 1];  /* duplicate */
            } else {
                p[2 * i] = pm_rng_range(&r, 0, w - 1), p[2 * i + 1] = (double)pm_rng_below(&r, w);
            }
        }
        uint32_t *order = malloc(sizeof(uint32_t) * n);
        for (uint32_t i = 0; i < n; i++) order[i] = i;
        for (uint32_t i = n - 1; i > 0; i--) {
            uint32_t j = (uint32_t)pm_rng_below(&r, i + 1), t = order[i];
            order[i] = order[j], order[j] = t;
        }
        pm_arena *a = pm_arena_create(0);
        pm_delaunay d;
        cr_assert_eq(pm_delaunay_build_ordered(a, p, n, order, &d), PM_OK);
        check_dt(p, n, &d);
        cr_assert_eq(pm_delaunay_build(a, p, n, &d), PM_OK);
        check_dt(p, n, &d);
        pm_arena_destroy(a);
        free(order);
        free(p);
    }
}

/* Tiny coordinates near each other stress the exact fallbacks. */
Test(delaunay, near_degenerate_clusters) {
    for (uint64_t seed = 1; seed <= 40; seed++) {
        uint32_t n = 200;
        pm_rng r;
        pm_rng_seed(&r, seed);
        double *p = malloc(2 * sizeof(double) * n);
        for (uint32_t i = 0; i < n; i++) {
            double t = pm_rng_range(&r, -1, 1);
            /* Points a few ulps off a line y = 0.3 x + 0.1. */
            p[2 * i] = t;
            p[2 * i + 1] = 0.3 * t + 0.1 + (double)pm_rng_int(&r, -3, 3) * 0x1p-52;
        }
        pm_arena *a = pm_arena_create(0);
        pm_delaunay d;
        cr_assert_eq(pm_delaunay_build(a, p, n, &d), PM_OK);
        if (!d.collinear) check_dt(p, n, &d);
        pm_arena_destroy(a);
        free(p);
    }
}

Test(delaunay, deterministic) {
    uint32_t n = 2000;
    double *p = random_points(5, n, 10.0);
    pm_arena *a = pm_arena_create(0);
    pm_delaunay d1, d2;
    cr_assert_eq(pm_delaunay_build(a, p, n, &d1), PM_OK);
    cr_assert_eq(pm_delaunay_build(a, p, n, &d2), PM_OK);
    cr_assert_eq(d1.ntriangles, d2.ntriangles);
    cr_assert(memcmp(d1.triangles, d2.triangles, 12 * (size_t)d1.ntriangles) == 0);
    cr_assert(memcmp(d1.halfedges, d2.halfedges, 12 * (size_t)d1.ntriangles) == 0);
    pm_arena_destroy(a);
    free(p);
}

/* Above the reordering threshold (points are renumbered along a Hilbert
 * curve inside): indices, hull and duplicates must come back in the
 * caller's numbering. */
Test(delaunay, large_input_with_duplicates) {
    uint32_t n = 40000;
    double *p = random_points(17, n, 50.0);
    for (uint32_t i = 10; i < n; i += 10) {
        uint32_t src = (i * 31u) % i;
        p[2 * i] = p[2 * src], p[2 * i + 1] = p[2 * src + 1];
    }
    pm_arena *a = pm_arena_create(0);
    pm_delaunay d;
    cr_assert_eq(pm_delaunay_build(a, p, n, &d), PM_OK);
    cr_assert_geq(d.nduplicates, n / 10 - 1);
    check_dt(p, n, &d);
    pm_arena_destroy(a);
    free(p);
}

/* Ear clipping: every output is checked to be a true triangulation of the
 * input polygon (not merely n - 2 triangles), and the simplicity decision is
 * compared against a brute-force O(n^2) check. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geom/earclip.h"
#include "geom/predicates.h"
#include "scene/result.h"
#include "scene/rng.h"

/* ---- checking a triangulation ------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Neumaier-compensated sum, so the area comparison measures the
 * triangulation and not the summation. */
typedef struct ksum { double s, c; } ksum;
static void ksum_add(ksum *k, double v) {
    double t = k->s + v;
    k->c += fabs(k->s) >= fabs(v) ? (k->s - t) + v : (v - t) + k->s;
    k->s = t;
}

static double polygon_area2(const double *p, size_t n) {
    ksum k = {0, 0};
    /* Shoelace relative to p[0], so large offsets do not cancel. */
    for (size_t i = 1; i + 1 < n; i++) {
        double ax = p[2 * i] - p[0], ay = p[2 * i + 1] - p[1];
        double bx = p[2 * i + 2] - p[0], by = p[2 * i + 3] - p[1];
        ksum_add(&k, ax * by);
        ksum_add(&k, -ay * bx);
    }
    return k.s + k.c;
}

/* Every triangle strictly CCW; every polygon edge used once in its own
 * direction; every other edge used exactly once in each direction. With
 * positive orientation everywhere this proves the triangles tile the
 * polygon (the covering count equals the boundary's winding number, 1). */
static void check_triangulation(const double *p, size_t n, const uint32_t *t, long tris) {
    cr_assert_eq(tris, (long)n - 2, "expected %zu triangles, got %ld", n - 2, tris);
    size_t ne = 3 * (size_t)tris;
    uint64_t *edges = malloc(ne * sizeof *edges);
    char *used = calloc(n, 1);
    ksum area = {0, 0};
    for (long i = 0; i < tris; i++) {
        const uint32_t *tri = t + 3 * i;
        for (int j = 0; j < 3; j++) {
            cr_assert_lt(tri[j], n);
            used[tri[j]] = 1;
            edges[3 * i + j] = (uint64_t)tri[j] << 32 | tri[(j + 1) % 3];
        }
        const double *a = p + 2 * tri[0], *b = p + 2 * tri[1], *c = p + 2 * tri[2];
        cr_assert_gt(pm_orient2d(a, b, c), 0.0, "triangle %ld not strictly CCW", i);
        ksum_add(&area, (b[0] - a[0]) * (c[1] - a[1]));
        ksum_add(&area, -(b[1] - a[1]) * (c[0] - a[0]));
    }
    for (size_t i = 0; i < n; i++) cr_assert(used[i], "vertex %zu unused", i);
    qsort(edges, ne, sizeof *edges, cmp_u64);
    size_t boundary = 0;
    for (size_t i = 0; i < ne; i++) {
        cr_assert(i == 0 || edges[i] != edges[i - 1], "directed edge used twice");
        uint32_t a = (uint32_t)(edges[i] >> 32), b = (uint32_t)edges[i];
        if (b == (a + 1) % n) {
            boundary++;
            continue;
        }
        uint64_t rev = (uint64_t)b << 32 | a;
        cr_assert_not_null(bsearch(&rev, edges, ne, sizeof *edges, cmp_u64),
                           "diagonal %u-%u has no twin", a, b);
    }
    cr_assert_eq(boundary, n, "every polygon edge appears once");
    double want = polygon_area2(p, n), got = area.s + area.c;
    cr_assert(fabs(got - want) <= 1e-9 * fabs(want), "area %.17g vs %.17g", got, want);
    free(edges);
    free(used);
}

static long run(pm_arena *a, const double *p, size_t n, uint32_t **out) {
    *out = pm_arena_alloc(a, (pm_earclip_bound(n) + 1) * sizeof **out);
    cr_assert_not_null(*out);
    return pm_earclip(a, p, n, *out);
}

static void expect_ok(const double *p, size_t n) {
    pm_arena *a = pm_arena_create(0);
    uint32_t *out;
    long r = run(a, p, n, &out);
    cr_assert_geq(r, 0, "earclip failed with %ld on %zu points", r, n);
    check_triangulation(p, n, out, r);
    pm_arena_destroy(a);
}

static void expect_fail(const double *p, size_t n, long code) {
    pm_arena *a = pm_arena_create(0);
    uint32_t *out;
    cr_assert_eq(run(a, p, n, &out), code);
    pm_arena_destroy(a);
}

/* ---- polygon builders --------------------------------------------------- */

typedef struct poly { double *p; size_t n, cap; } poly;

static void put(poly *q, double x, double y) {
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->p = realloc(q->p, 2 * q->cap * sizeof *q->p);
    }
    q->p[2 * q->n] = x;
    q->p[2 * q->n + 1] = y;
    q->n++;
}

/* Random star: one point per angle step, random radius. */
static poly star(pm_rng *r, size_t n, double rmin) {
    poly q = {0};
    for (size_t i = 0; i < n; i++) {
        double ang = 6.283185307179586 * (double)i / (double)n;
        double rad = pm_rng_range(r, rmin, 1.0);
        put(&q, rad * cos(ang), rad * sin(ang));
    }
    return q;
}

/* Square with k points strictly inside each edge: 4 (k + 1) vertices, of
 * which 4 k are flat. */
static poly square_with_edge_points(int k, double offset) {
    poly q = {0};
    const double c[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    for (int e = 0; e < 4; e++) {
        const double *a = c[e], *b = c[(e + 1) % 4];
        for (int i = 0; i <= k; i++) {
            double t = (double)i / (k + 1);
            put(&q, offset + a[0] + t * (b[0] - a[0]), offset + a[1] + t * (b[1] - a[1]));
        }
    }
    return q;
}

/* ---- fixed shapes ------------------------------------------------------- */

Test(earclip, triangle_and_square) {
    double tri[] = {0, 0, 1, 0, 0, 1};
    expect_ok(tri, 3);
    double sq[] = {0, 0, 1, 0, 1, 1, 0, 1};
    expect_ok(sq, 4);
    cr_assert_eq(pm_earclip_bound(4), 6);
    cr_assert_eq(pm_earclip_bound(2), 0);
}

/* A triangle with a point on an edge: the flat vertex must be kept and the
 * ear whose diagonal would run along the edge must be refused. */
Test(earclip, triangle_with_flat_vertex) {
    double p[] = {0, 0, 1, 0, 2, 0, 1, 1};
    pm_arena *a = pm_arena_create(0);
    uint32_t *out;
    long r = run(a, p, 4, &out);
    check_triangulation(p, 4, out, r);
    pm_arena_destroy(a);
}

Test(earclip, squares_with_collinear_edge_points) {
    for (int k = 0; k <= 40; k++) {
        poly q = square_with_edge_points(k, 0);
        expect_ok(q.p, q.n);
        free(q.p);
        q = square_with_edge_points(k, 1e6);
        expect_ok(q.p, q.n);
        free(q.p);
    }
}

/* Points one ulp inside or outside the edges of a square: nearly collinear,
 * with convex, reflex and (exactly) flat vertices mixed. */
Test(earclip, nearly_collinear_edges) {
    pm_rng r;
    pm_rng_seed(&r, 3);
    for (int s = 0; s < 300; s++) {
        poly q = {0};
        int k = 1 + (int)pm_rng_below(&r, 30);
        /* Away from 0, where one ulp would be a subnormal (see predicates.h). */
        const double c[4][2] = {{1, 1}, {9, 1}, {9, 9}, {1, 9}};
        for (int e = 0; e < 4; e++) {
            const double *a = c[e], *b = c[(e + 1) % 4];
            for (int i = 0; i <= k; i++) {
                double x = a[0] + (b[0] - a[0]) * i / (k + 1), y = a[1] + (b[1] - a[1]) * i / (k + 1);
                int wiggle = i == 0 ? 0 : (int)pm_rng_below(&r, 3);
                double *moved = (e % 2 == 0) ? &y : &x;
                if (wiggle == 1) *moved = nextafter(*moved, INFINITY);
                if (wiggle == 2) *moved = nextafter(*moved, -INFINITY);
                put(&q, x, y);
            }
        }
        expect_ok(q.p, q.n);
        free(q.p);
    }
}

/* A comb: teeth joined by a spine, with flat vertices along the spine. */
Test(earclip, combs) {
    for (int teeth = 1; teeth <= 60; teeth++) {
        poly q = {0};
        put(&q, 0, 0);
        for (int i = 0; i < teeth; i++) {
            put(&q, 2.0 * i + 1, 0); /* flat on the base line */
        }
        put(&q, 2.0 * teeth, 0);
        for (int i = teeth - 1; i >= 0; i--) {
            put(&q, 2.0 * i + 2, 10);
            put(&q, 2.0 * i + 1.5, 10);
            put(&q, 2.0 * i + 1.5, 1);
            put(&q, 2.0 * i + 1, 1);
            if (i > 0) put(&q, 2.0 * i + 1, 10);
        }
        /* back down the left side, along x = 0 ... but x = 1 is a tooth side */
        put(&q, 0, 10);
        put(&q, 0, 5); /* flat */
        expect_ok(q.p, q.n);
        free(q.p);
    }
}

/* Rectangular spiral corridors: long, winding, every ear test crosses many
 * reflex vertices. The centre line turns left by 90 degrees at each corner;
 * the corridor walls are offset by w along the sum of the unit left normals
 * of the runs meeting there (the exact mitre for right angles). */
Test(earclip, spirals) {
    static const double dx[4] = {1, 0, -1, 0}, dy[4] = {0, 1, 0, -1};
    const double w = 0.25;
    for (int turns = 1; turns <= 40; turns++) {
        poly line = {0};
        double x = 0, y = 0, len = 1;
        put(&line, x, y);
        for (int s = 0; s < 4 * turns; s++) {
            x += dx[s % 4] * len;
            y += dy[s % 4] * len;
            put(&line, x, y);
            if (s % 2 == 1) len += 1;
        }
        poly right = {0}, left = {0};
        for (size_t i = 0; i < line.n; i++) {
            size_t in = i == 0 ? 0 : (i - 1) % 4, out = i + 1 == line.n ? in : i % 4;
            double nx = -dy[in], ny = dx[in];
            if (out != in) nx += -dy[out], ny += dx[out];
            put(&right, line.p[2 * i] - w * nx, line.p[2 * i + 1] - w * ny);
            put(&left, line.p[2 * i] + w * nx, line.p[2 * i + 1] + w * ny);
        }
        poly q = {0};
        for (size_t i = 0; i < right.n; i++) put(&q, right.p[2 * i], right.p[2 * i + 1]);
        for (size_t i = left.n; i-- > 0;) put(&q, left.p[2 * i], left.p[2 * i + 1]);
        /* The corridor's area is its centre-line length times its width. */
        double length = 0;
        for (size_t i = 1; i < line.n; i++)
            length += fabs(line.p[2 * i] - line.p[2 * i - 2]) + fabs(line.p[2 * i + 1] - line.p[2 * i - 1]);
        cr_assert(fabs(polygon_area2(q.p, q.n) / 2 - length * 2 * w) < 1e-9);
        expect_ok(q.p, q.n);
        free(q.p);
        free(right.p);
        free(left.p);
        free(line.p);
    }
}

Test(earclip, regular_polygons_far_away) {
    for (int n = 3; n < 400; n += 7) {
        poly q = {0};
        for (int i = 0; i < n; i++)
            put(&q, 1e7 + 5 * cos(6.283185307179586 * i / n), -3e6 + 5 * sin(6.283185307179586 * i / n));
        expect_ok(q.p, q.n);
        free(q.p);
    }
}

/* Star polygons over thousands of seeds and sizes, the benchmark's shape. */
Test(earclip, random_stars) {
    pm_rng r;
    pm_rng_seed(&r, 2024);
    for (int s = 0; s < 4000; s++) {
        size_t n = 3 + (size_t)pm_rng_below(&r, s < 3900 ? 120 : 3000);
        poly q = star(&r, n, s % 2 ? 0.05 : 0.5);
        expect_ok(q.p, q.n);
        free(q.p);
    }
}

/* Stars on an integer lattice with exact midpoints inserted: collinear
 * triples everywhere, including along spikes. */
Test(earclip, lattice_stars_with_midpoints) {
    pm_rng r;
    pm_rng_seed(&r, 99);
    for (int s = 0; s < 2000; s++) {
        size_t n = 3 + (size_t)pm_rng_below(&r, 60);
        poly q = {0};
        for (size_t i = 0; i < n; i++) {
            double ang = 6.283185307179586 * (double)i / (double)n;
            double rad = (double)pm_rng_int(&r, 20, 400);
            double x = 2 * round(rad * cos(ang)), y = 2 * round(rad * sin(ang));
            put(&q, x, y);
        }
        /* Insert exact midpoints (coordinates are even) on some edges. */
        poly m = {0};
        for (size_t i = 0; i < q.n; i++) {
            size_t j = (i + 1) % q.n;
            put(&m, q.p[2 * i], q.p[2 * i + 1]);
            if (pm_rng_chance(&r, 0.5))
                put(&m, (q.p[2 * i] + q.p[2 * j]) / 2, (q.p[2 * i + 1] + q.p[2 * j + 1]) / 2);
        }
        /* Rounding to the lattice can fold a star; test only simple ones. */
        pm_arena *a = pm_arena_create(0);
        uint32_t *out;
        long res = run(a, m.p, m.n, &out);
        if (res >= 0) check_triangulation(m.p, m.n, out, res);
        else cr_assert_eq(res, PM_ERR_GEOMETRY);
        pm_arena_destroy(a);
        free(q.p);
        free(m.p);
    }
}

static bool brute_simple(const double *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (p[2 * i] == p[2 * j] && p[2 * i + 1] == p[2 * j + 1]) return false;
    for (size_t i = 0; i < n; i++) {
        const double *a = p + 2 * i, *b = p + 2 * ((i + 1) % n);
        for (size_t j = i + 1; j < n; j++) {
            const double *c = p + 2 * j, *d = p + 2 * ((j + 1) % n);
            bool adjacent = j == i + 1 || (i == 0 && j == n - 1);
            if (!adjacent) {
                if (pm_segments_intersect(a, b, c, d)) return false;
                continue;
            }
            /* Adjacent: share one vertex; overlapping if the far ends lie on
             * the same ray from it. */
            const double *s = j == i + 1 ? b : a, *x = j == i + 1 ? a : b, *y = j == i + 1 ? d : c;
            if (n > 3 && pm_orient2d(s, x, y) == 0 &&
                (x[0] - s[0]) * (y[0] - s[0]) + (x[1] - s[1]) * (y[1] - s[1]) > 0)
                return false;
            if (n == 3 && pm_orient2d(p, p + 2, p + 4) == 0) return false;
        }
    }
    return true;
}

/* Junction-like contours: 3 to 8 arms of random widths around a centre,
 * with rounded reflex corners between neighbouring arms and extra points
 * along the curbs (nearly collinear), far from the origin. Mostly
 * star-shaped around their centre, with reflex fillets. */
static poly junction_contour(pm_rng *r) {
    poly q = {0};
    int arms = 3 + (int)pm_rng_below(r, 6);
    double cx = pm_rng_range(r, -1e4, 1e4), cz = pm_rng_range(r, -1e4, 1e4);
    double step = 6.283185307179586 / arms, base = pm_rng_range(r, 0, 6.283185307179586);
    double ang[8], w[8], len[8];
    for (int i = 0; i < arms; i++) {
        ang[i] = base + step * (i + pm_rng_range(r, -0.2, 0.2));
        w[i] = pm_rng_range(r, 2, 8);
        len[i] = pm_rng_range(r, 15, 40);
    }
    for (int i = 0; i < arms; i++) {
        int j = (i + 1) % arms;
        double di[2] = {cos(ang[i]), sin(ang[i])}, ni[2] = {-di[1], di[0]};
        double dj[2] = {cos(ang[j]), sin(ang[j])}, nj[2] = {-dj[1], dj[0]};
        /* Corner: left curb of arm i meets right curb of arm j. */
        double pi[2] = {w[i] * ni[0], w[i] * ni[1]}, pj[2] = {-w[j] * nj[0], -w[j] * nj[1]};
        double den = di[0] * dj[1] - di[1] * dj[0];
        double t = ((pj[0] - pi[0]) * dj[1] - (pj[1] - pi[1]) * dj[0]) / den;
        double corner[2] = {pi[0] + t * di[0], pi[1] + t * di[1]};
        double s = ((pj[0] - pi[0]) * di[1] - (pj[1] - pi[1]) * di[0]) / den;
        /* Mouth of arm i, then points along its left curb towards the corner. */
        double mouth_r[2] = {len[i] * di[0] - w[i] * ni[0], len[i] * di[1] - w[i] * ni[1]};
        double mouth_l[2] = {len[i] * di[0] + w[i] * ni[0], len[i] * di[1] + w[i] * ni[1]};
        put(&q, cx + mouth_r[0], cz + mouth_r[1]);
        put(&q, cx + mouth_l[0], cz + mouth_l[1]);
        double radius = pm_rng_range(r, 0.5, 3);
        int curb_pts = (int)pm_rng_below(r, 4);
        for (int k = 1; k <= curb_pts; k++) {
            double u = len[i] - (len[i] - t - radius) * k / (curb_pts + 1);
            put(&q, cx + pi[0] + u * di[0], cz + pi[1] + u * di[1]);
        }
        /* Fillet: from t + radius along arm i to s + radius along arm j. */
        double a0[2] = {corner[0] + radius * di[0], corner[1] + radius * di[1]};
        double a1[2] = {corner[0] + radius * dj[0], corner[1] + radius * dj[1]};
        int segs = 1 + (int)pm_rng_below(r, 5);
        for (int k = 0; k <= segs; k++) {
            double f = (double)k / segs, g = f * (1 - f) * 0.8;
            /* A bulge towards the corner, approximating the arc. */
            double x = a0[0] + f * (a1[0] - a0[0]) + g * (corner[0] - (a0[0] + a1[0]) / 2) * 2;
            double y = a0[1] + f * (a1[1] - a0[1]) + g * (corner[1] - (a0[1] + a1[1]) / 2) * 2;
            put(&q, cx + x, cz + y);
        }
        /* Corners must lie between the centre and both mouths. */
        if (!(t > 0 && s > 0 && t + radius < len[i] - 1 && s + radius < len[j] - 1)) q.n = 0;
    }
    return q;
}

Test(earclip, junction_like_contours) {
    pm_rng r;
    pm_rng_seed(&r, 77);
    int done = 0;
    for (int s = 0; s < 3000; s++) {
        poly q = junction_contour(&r);
        if (q.n >= 3 && brute_simple(q.p, q.n)) {
            expect_ok(q.p, q.n);
            done++;
        }
        free(q.p);
    }
    cr_assert_gt(done, 2000, "only %d valid contours generated", done);
}

/* ---- rejection ---------------------------------------------------------- */

Test(earclip, rejects_degenerate_and_non_simple) {
    double two[] = {0, 0, 1, 1};
    expect_fail(two, 2, PM_ERR_GEOMETRY);
    double line[] = {0, 0, 1, 1, 2, 2};
    expect_fail(line, 3, PM_ERR_GEOMETRY);
    double line4[] = {0, 0, 1, 0, 2, 0, 3, 0};
    expect_fail(line4, 4, PM_ERR_GEOMETRY);
    double cw[] = {0, 0, 0, 1, 1, 1, 1, 0};
    expect_fail(cw, 4, PM_ERR_GEOMETRY);
    double bowtie[] = {0, 0, 1, 1, 1, 0, 0, 1};
    expect_fail(bowtie, 4, PM_ERR_GEOMETRY);
    /* Two squares sharing a corner point, traced as one loop. */
    double pinch[] = {0, 0, 1, 0, 1, 1, 2, 1, 2, 2, 1, 2, 1, 1, 0, 1};
    expect_fail(pinch, 8, PM_ERR_GEOMETRY);
    /* A vertex touching a non-adjacent edge. */
    double touch[] = {0, 0, 4, 0, 4, 4, 2, 0.0, 0, 4};
    expect_fail(touch, 5, PM_ERR_GEOMETRY);
    /* A spike folding back over its own edge. */
    double spike[] = {0, 0, 4, 0, 4, 4, 2, 4, 3, 4, 0, 4};
    expect_fail(spike, 6, PM_ERR_GEOMETRY);
    /* Repeated consecutive point. */
    double dup[] = {0, 0, 1, 0, 1, 0, 1, 1};
    expect_fail(dup, 4, PM_ERR_GEOMETRY);
    /* Pentagram: every vertex convex locally, winding number 2 inside. */
    double star5[10];
    for (int i = 0; i < 5; i++) {
        star5[2 * i] = cos(6.283185307179586 * (2 * i) / 5);
        star5[2 * i + 1] = sin(6.283185307179586 * (2 * i) / 5);
    }
    expect_fail(star5, 5, PM_ERR_GEOMETRY);
}

/* A polygon going round twice: locally every vertex turns left. */
Test(earclip, rejects_double_winding) {
    poly q = {0};
    for (int i = 0; i < 40; i++) {
        double ang = 6.283185307179586 * 2 * i / 40.0 + 0.01;
        double rad = 1 + i * 0.01;
        put(&q, rad * cos(ang), rad * sin(ang));
    }
    expect_fail(q.p, q.n, PM_ERR_GEOMETRY);
    free(q.p);
}

/* ---- against brute force on tiny lattices ------------------------------- */

/* Random polygons on a 5x5 lattice: mostly self-intersecting, full of
 * collinear edges, touching vertices and vertical edges. The verdict must
 * match the brute force exactly, and every accepted polygon must come back
 * properly triangulated. */
Test(earclip, matches_brute_force_on_lattices) {
    pm_rng r;
    pm_rng_seed(&r, 5);
    int accepted = 0, simple_cw = 0;
    pm_arena *a = pm_arena_create(0);
    for (int s = 0; s < 200000; s++) {
        size_t n = 3 + (size_t)pm_rng_below(&r, 8);
        double p[2 * 12];
        for (size_t i = 0; i < 2 * n; i++) p[i] = (double)pm_rng_below(&r, 5);
        uint32_t out[3 * 12];
        long res = pm_earclip(a, p, n, out);
        bool simple = brute_simple(p, n);
        bool ccw = polygon_area2(p, n) > 0;
        if (simple && ccw) {
            cr_assert_geq(res, 0, "case %d: simple CCW polygon rejected", s);
            check_triangulation(p, n, out, res);
            accepted++;
        } else {
            cr_assert_eq(res, PM_ERR_GEOMETRY, "case %d: simple=%d ccw=%d but got %ld", s, simple, ccw, res);
            simple_cw += simple;
        }
        if (s % 1000 == 999) {
            pm_arena_destroy(a);
            a = pm_arena_create(0);
        }
    }
    pm_arena_destroy(a);
    cr_assert_gt(accepted, 1000);
    cr_assert_gt(simple_cw, 1000);
}

Test(earclip, out_of_memory) {
    pm_rng r;
    pm_rng_seed(&r, 8);
    poly q = star(&r, 5000, 0.3);
    uint32_t *out = malloc(pm_earclip_bound(q.n) * sizeof *out);
    pm_arena *a = pm_arena_create(1024);
    pm_arena_set_limit(a, 16 * 1024);
    cr_assert_eq(pm_earclip(a, q.p, q.n, out), PM_ERR_NOMEM);
    pm_arena_destroy(a);
    free(out);
    free(q.p);
}

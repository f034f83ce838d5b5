/* Polygon classification: simplicity, orientation, star-shapedness, and
 * the clashing edges reported for non-simple input. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "geom/polygon.h"
#include "geom/predicates.h"
#include "scene/result.h"
#include "scene/rng.h"

static pm_polygon_info classify(const double *p, size_t n) {
    pm_arena *a = pm_arena_create(0);
    pm_polygon_info info;
    cr_assert_eq(pm_polygon_classify(a, p, n, &info), 0);
    pm_arena_destroy(a);
    return info;
}

/* Edges i and j (i < j) of the reported clash really meet improperly. */
static void assert_clash_real(const double *p, size_t n, const pm_polygon_info *info) {
    uint32_t i = info->clash[0], j = info->clash[1];
    cr_assert(i < j && j < n, "clash %u %u", i, j);
    const double *a = p + 2 * i, *b = p + 2 * ((i + 1) % n);
    const double *c = p + 2 * j, *d = p + 2 * ((j + 1) % n);
    bool adjacent = j == i + 1 || (i == 0 && j == n - 1);
    if (!adjacent) {
        cr_assert(pm_segments_intersect(a, b, c, d), "edges %u and %u do not meet", i, j);
        return;
    }
    /* Adjacent edges clash by overlapping (or by a repeated point). */
    bool repeated = (a[0] == b[0] && a[1] == b[1]) || (c[0] == d[0] && c[1] == d[1]) ||
                    (a[0] == c[0] && a[1] == c[1]) || (b[0] == d[0] && b[1] == d[1]);
    cr_assert(repeated || (pm_orient2d(a, b, c) == 0 && pm_orient2d(a, b, d) == 0),
              "adjacent edges %u and %u do not overlap", i, j);
}

Test(polygon, convex_and_star) {
    double sq[] = {0, 0, 2, 0, 2, 2, 0, 2};
    pm_polygon_info s = classify(sq, 4);
    cr_assert(s.simple && s.ccw && s.star);
    cr_assert(pm_polygon_star_around(sq, 4, s.kernel_point));
    double cw[] = {0, 0, 0, 2, 2, 2, 2, 0};
    s = classify(cw, 4);
    cr_assert(s.simple && !s.ccw && !s.star);
    /* A plus sign: reflex corners, star-shaped around its centre. */
    double plus[] = {1, 0, 2, 0, 2, 1, 3, 1, 3, 2, 2, 2, 2, 3, 1, 3, 1, 2, 0, 2, 0, 1, 1, 1};
    s = classify(plus, 12);
    cr_assert(s.simple && s.ccw && s.star);
    double centre[2] = {1.5, 1.5}, off[2] = {0.5, 0.5};
    cr_assert(pm_polygon_star_around(plus, 12, centre));
    cr_assert_not(pm_polygon_star_around(plus, 12, off));
}

/* An L whose kernel is the corner square only: the vertex centroid lies
 * outside it, so the kernel point must come from the candidate search
 * (least squares plus projections) or the linear program. */
Test(polygon, kernel_point_off_centroid) {
    double l[] = {0, 0, 10, 0, 10, 1, 1, 1, 1, 10, 0, 10};
    double centroid[2] = {22.0 / 6, 22.0 / 6};
    cr_assert_not(pm_polygon_star_around(l, 6, centroid));
    pm_polygon_info s = classify(l, 6);
    cr_assert(s.simple && s.ccw && s.star);
    cr_assert(s.kernel_point[0] > 0 && s.kernel_point[0] < 1);
    cr_assert(s.kernel_point[1] > 0 && s.kernel_point[1] < 1);
}

/* The candidate search works in floating point (squares of coordinate
 * differences, projections): at the edges of the predicates' range it must
 * still find the kernel or fall back, never hand over a wrong point. The L
 * above, scaled and moved; a thin L (kernel far narrower than the
 * projection margin) too. */
Test(polygon, kernel_point_at_extreme_scales) {
    const double l[] = {0, 0, 10, 0, 10, 1, 1, 1, 1, 10, 0, 10};
    const double thin[] = {0, 0, 1000, 0, 1000, 0.01, 0.01, 0.01, 0.01, 1000, 0, 1000};
    const double scales[] = {0x1p-400, 1e-3, 1.0, 1e6, 0x1p400};
    const double *shapes[] = {l, thin};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 5; i++) {
            for (int moved = 0; moved < 2; moved++) {
                double p[12], off = moved ? 3.0 * scales[i] * 1000 : 0.0;
                for (int j = 0; j < 12; j++) p[j] = shapes[k][j] * scales[i] + (j % 2 ? -off : off);
                pm_polygon_info s = classify(p, 6);
                cr_assert(s.simple && s.ccw && s.star, "shape %d scale %g", k, scales[i]);
                cr_assert(pm_polygon_star_around(p, 6, s.kernel_point));
                double corner = shapes[k][6] * scales[i];
                cr_assert(s.kernel_point[0] - off > 0 && s.kernel_point[0] - off < corner);
                cr_assert(s.kernel_point[1] + off > 0 && s.kernel_point[1] + off < corner);
            }
        }
    }
}

/* Random stars around the origin have a tiny kernel (far smaller than the
 * centroid's offset from the origin at 1k and 10k points); the linear
 * program still finds a point in it. */
Test(polygon, random_stars_are_found_star_shaped) {
    pm_rng r;
    pm_rng_seed(&r, 31);
    static const size_t sizes[] = {10, 100, 1000, 10000};
    for (size_t k = 0; k < 4; k++) {
        for (int s = 0; s < 5; s++) {
            size_t n = sizes[k];
            double *p = malloc(2 * n * sizeof *p);
            for (size_t i = 0; i < n; i++) {
                double a = 6.283185307179586 * (double)i / (double)n, rad = pm_rng_range(&r, 0.2, 1.0);
                p[2 * i] = rad * cos(a), p[2 * i + 1] = rad * sin(a);
            }
            pm_polygon_info info = classify(p, n);
            cr_assert(info.simple && info.ccw && info.star, "n=%zu seed %d", n, s);
            cr_assert(pm_polygon_star_around(p, n, info.kernel_point));
            free(p);
        }
    }
}

/* A comb has an empty kernel: the sweep decides. */
Test(polygon, comb_is_simple_not_star) {
    double comb[] = {0, 0, 5, 0, 5, 3, 4, 3, 4, 1, 3, 1, 3, 3, 2, 3, 2, 1, 1, 1, 1, 3, 0, 3};
    pm_polygon_info s = classify(comb, 12);
    cr_assert(s.simple && s.ccw && !s.star);
}

Test(polygon, clashes_are_reported) {
    double bowtie[] = {0, 0, 2, 2, 2, 0, 0, 2};
    pm_polygon_info s = classify(bowtie, 4);
    cr_assert(!s.simple && !s.star);
    cr_assert_eq(s.clash[0], 0);
    cr_assert_eq(s.clash[1], 2);
    assert_clash_real(bowtie, 4, &s);
    double touch[] = {0, 0, 4, 0, 4, 4, 2, 0, 0, 4};
    s = classify(touch, 5);
    cr_assert(!s.simple);
    assert_clash_real(touch, 5, &s);
    double spike[] = {0, 0, 4, 0, 4, 4, 2, 4, 3, 4, 0, 4};
    s = classify(spike, 6);
    cr_assert(!s.simple);
    assert_clash_real(spike, 6, &s);
    double dup[] = {0, 0, 1, 0, 1, 1, 1, 0, 2, 2};
    s = classify(dup, 5);
    cr_assert(!s.simple);
    cr_assert_eq(s.clash[0], 1);
    cr_assert_eq(s.clash[1], 3);
    double line[] = {0, 0, 1, 1, 2, 2};
    cr_assert_not(classify(line, 3).simple);
}

static bool brute_simple(const double *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (p[2 * i] == p[2 * j] && p[2 * i + 1] == p[2 * j + 1]) return false;
            const double *a = p + 2 * i, *b = p + 2 * ((i + 1) % n);
            const double *c = p + 2 * j, *d = p + 2 * ((j + 1) % n);
            bool adjacent = j == i + 1 || (i == 0 && j == n - 1);
            if (!adjacent && pm_segments_intersect(a, b, c, d)) return false;
            if (adjacent && pm_orient2d(a, b, c) == 0 && pm_orient2d(a, b, d) == 0 && n > 3) {
                /* Collinear neighbours overlap unless they point apart. */
                const double *s = j == i + 1 ? b : a, *x = j == i + 1 ? a : b, *y = j == i + 1 ? d : c;
                if ((x[0] - s[0]) * (y[0] - s[0]) + (x[1] - s[1]) * (y[1] - s[1]) > 0) return false;
            }
        }
    return n > 3 || pm_orient2d(p, p + 2, p + 4) != 0;
}

/* Tiny random lattice polygons, mostly non-simple and full of degenerate
 * contacts: every verdict against brute force, every clash checked real,
 * every star claim checked exactly. */
Test(polygon, matches_brute_force) {
    pm_rng r;
    pm_rng_seed(&r, 12);
    pm_arena *a = pm_arena_create(0);
    int simple_count = 0, star_count = 0;
    for (int s = 0; s < 200000; s++) {
        size_t n = 3 + (size_t)pm_rng_below(&r, 8);
        double p[2 * 10];
        for (size_t i = 0; i < 2 * n; i++) p[i] = (double)pm_rng_below(&r, 6) * 0.5;
        pm_polygon_info info;
        cr_assert_eq(pm_polygon_classify(a, p, n, &info), 0);
        bool want = brute_simple(p, n);
        cr_assert_eq(info.simple, want, "case %d", s);
        if (!want) assert_clash_real(p, n, &info);
        if (info.star) cr_assert(pm_polygon_star_around(p, n, info.kernel_point));
        simple_count += want;
        star_count += info.star;
        if (s % 1000 == 999) {
            pm_arena_destroy(a);
            a = pm_arena_create(0);
        }
    }
    pm_arena_destroy(a);
    cr_assert_gt(simple_count, 5000);
    cr_assert_gt(star_count, 1000);
}

Test(polygon, out_of_memory) {
    double *p = malloc(2 * 5000 * sizeof *p);
    for (int i = 0; i < 5000; i++) {
        /* A comb-like zigzag: not star-shaped, so the sweep allocates. */
        p[2 * i] = i, p[2 * i + 1] = (i % 2) ? 1.0 : 0.0;
    }
    pm_arena *a = pm_arena_create(1024);
    pm_arena_set_limit(a, 8 * 1024);
    pm_polygon_info info;
    cr_assert_eq(pm_polygon_classify(a, p, 5000, &info), PM_ERR_NOMEM);
    pm_arena_destroy(a);
    free(p);
}

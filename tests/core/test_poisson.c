#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/poisson.h"
#include "scene/result.h"

static long sample(pm_arena *a, const pm_poisson_params *p, uint64_t seed, double **out) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    return pm_poisson(a, p, &r, out);
}

/* Pairwise distance >= radius, all inside; and the set is close to maximal:
 * no probe point in the domain is farther than 2 radius from every sample. */
static void check_set(const pm_poisson_params *p, const double *pts, long n) {
    for (long i = 0; i < n; i++) {
        cr_assert(pm_poisson_inside(p, pts + 2 * i), "sample %ld outside", i);
        for (long j = i + 1; j < n; j++) {
            double dx = pts[2 * i] - pts[2 * j], dy = pts[2 * i + 1] - pts[2 * j + 1];
            cr_assert_geq(dx * dx + dy * dy, p->radius * p->radius, "samples %ld %ld too close", i, j);
        }
    }
    double hy = p->shape == PM_POISSON_RECT || p->shape == PM_POISSON_CUSTOM ? p->half[1] : p->half[0];
    for (double y = -hy; y <= hy; y += p->radius / 3)
        for (double x = -p->half[0]; x <= p->half[0]; x += p->radius / 3) {
            double q[2] = {p->center[0] + x, p->center[1] + y}, best = INFINITY;
            if (!pm_poisson_inside(p, q)) continue;
            for (long i = 0; i < n; i++) {
                double dx = pts[2 * i] - q[0], dy = pts[2 * i + 1] - q[1];
                if (dx * dx + dy * dy < best) best = dx * dx + dy * dy;
            }
            cr_assert_leq(best, 4 * p->radius * p->radius, "hole at %g %g", q[0], q[1]);
        }
}

Test(poisson, shapes_spacing_and_coverage) {
    pm_poisson_shape shapes[] = {PM_POISSON_RECT, PM_POISSON_DISK, PM_POISSON_HEXAGON};
    for (int k = 0; k < 3; k++)
        for (uint64_t seed = 1; seed <= 6; seed++) {
            pm_poisson_params p = {.shape = shapes[k], .center = {3, -2}, .half = {10, 6}, .radius = 1};
            pm_arena *a = pm_arena_create(0);
            double *pts;
            long n = sample(a, &p, seed, &pts);
            cr_assert_gt(n, 50);
            check_set(&p, pts, n);
            pm_arena_destroy(a);
        }
}

/* Density: the even-circle candidates pack close to the hexagonal bound
 * (area / (sqrt(3)/2 r^2)); random-radius Bridson reaches about 0.6 of it. */
Test(poisson, dense_packing) {
    pm_poisson_params p = {.shape = PM_POISSON_RECT, .half = {50, 50}, .radius = 1};
    pm_arena *a = pm_arena_create(0);
    double *pts;
    long n = sample(a, &p, 3, &pts);
    double hex = 100.0 * 100.0 / (sqrt(3.0) / 2);
    cr_assert_gt(n, 0.65 * hex, "n=%ld", n);
    cr_assert_lt(n, 1.0 * hex);
    pm_arena_destroy(a);
}

Test(poisson, deterministic_per_seed) {
    pm_poisson_params p = {.shape = PM_POISSON_DISK, .half = {20, 20}, .radius = 1.5};
    pm_arena *a = pm_arena_create(0);
    double *p1, *p2, *p3;
    long n1 = sample(a, &p, 42, &p1), n2 = sample(a, &p, 42, &p2), n3 = sample(a, &p, 43, &p3);
    cr_assert_eq(n1, n2);
    cr_assert(memcmp(p1, p2, (size_t)n1 * 2 * sizeof(double)) == 0);
    cr_assert(n3 != n1 || memcmp(p1, p3, (size_t)n1 * 2 * sizeof(double)) != 0);
    pm_arena_destroy(a);
}

Test(poisson, initial_samples_come_first) {
    double init[] = {0, 0, 0.5, 0, 5, 5, 100, 100, 9, -9};  /* 2nd too close, 4th far outside */
    pm_poisson_params p = {.shape = PM_POISSON_RECT, .half = {10, 10}, .radius = 1,
                           .initial = init, .ninitial = 5};
    pm_arena *a = pm_arena_create(0);
    double *pts;
    long n = sample(a, &p, 1, &pts);
    cr_assert_gt(n, 3);
    cr_assert(pts[0] == 0 && pts[1] == 0 && pts[2] == 5 && pts[3] == 5 && pts[4] == 9 && pts[5] == -9);
    check_set(&p, pts, n);
    pm_arena_destroy(a);
}

static bool ring(const double q[2], void *user) {
    double r2 = q[0] * q[0] + q[1] * q[1], *lim = user;
    return r2 >= lim[0] * lim[0] && r2 <= lim[1] * lim[1];
}

Test(poisson, custom_domain) {
    double lim[2] = {4, 9};
    pm_poisson_params p = {.shape = PM_POISSON_CUSTOM, .half = {9, 9}, .radius = 0.8,
                           .inside = ring, .user = lim};
    pm_arena *a = pm_arena_create(0);
    double *pts;
    long n = sample(a, &p, 9, &pts);
    cr_assert_gt(n, 100);
    check_set(&p, pts, n);
    pm_arena_destroy(a);
}

Test(poisson, limit_and_tiny_domains) {
    pm_poisson_params p = {.shape = PM_POISSON_RECT, .half = {30, 30}, .radius = 1, .max_points = 100};
    pm_arena *a = pm_arena_create(0);
    double *pts;
    cr_assert_eq(sample(a, &p, 1, &pts), PM_ERR_LIMIT);
    /* A domain smaller than the radius holds exactly one sample. */
    pm_poisson_params q = {.shape = PM_POISSON_HEXAGON, .half = {0.3, 0}, .radius = 1};
    cr_assert_eq(sample(a, &q, 1, &pts), 1);
    pm_arena_destroy(a);
}

/* Outline points a rounding error outside the domain are kept as given. */
Test(poisson, initial_samples_on_the_outline) {
    double init[] = {10 + 1e-12, 0, -10 - 1e-12, 3, 10.5, 8, 13, 0};  /* last: past the margin */
    pm_poisson_params p = {.shape = PM_POISSON_RECT, .half = {10, 10}, .radius = 1,
                           .initial = init, .ninitial = 4};
    pm_arena *a = pm_arena_create(0);
    double *pts;
    long n = sample(a, &p, 1, &pts);
    cr_assert_gt(n, 3);
    cr_assert(memcmp(pts, init, 6 * sizeof(double)) == 0);
    for (long i = 3; i < n; i++) cr_assert(pm_poisson_inside(&p, pts + 2 * i));
    pm_arena_destroy(a);
}

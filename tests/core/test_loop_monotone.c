#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/plan_boundary.h"
#include "geom/predicates.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"

/* pm_loop_simple's linear test of two monotone chains (path 1) must give
 * the sweep's verdict (path 0) on every loop, and both must agree with a
 * brute-force oracle over all pairs of edges; and the linear test must
 * actually decide the loops roads make (else it saves nothing). */

#define PM_TEST_PI 3.14159265358979323846

static double orient(const float *a, const float *b, const float *c) {
    double A[2] = {a[0], a[1]}, B[2] = {b[0], b[1]}, C[2] = {c[0], c[1]};
    return pm_orient2d(A, B, C);
}

static bool same(const float *a, const float *b) { return a[0] == b[0] && a[1] == b[1]; }

/* c on the closed segment a b, given a, b, c collinear. */
static bool within(const float *a, const float *b, const float *c) {
    return fminf(a[0], b[0]) <= c[0] && c[0] <= fmaxf(a[0], b[0]) && fminf(a[1], b[1]) <= c[1] &&
           c[1] <= fmaxf(a[1], b[1]);
}

/* Closed segments p q and r s share a point. */
static bool meet(const float *p, const float *q, const float *r, const float *s) {
    double o1 = orient(p, q, r), o2 = orient(p, q, s), o3 = orient(r, s, p), o4 = orient(r, s, q);
    if (((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0))) return true;
    return (o1 == 0 && within(p, q, r)) || (o2 == 0 && within(p, q, s)) || (o3 == 0 && within(r, s, p)) ||
           (o4 == 0 && within(r, s, q));
}

/* Simple: no edge of length 0, neighbours meet only at their shared
 * corner (neither end lies on the other edge), others not at all. */
static int oracle(const float *xz, uint32_t m) {
    if (m < 3) return 0;
    for (uint32_t i = 0; i < m; i++)
        if (same(xz + 2 * i, xz + 2 * ((i + 1) % m))) return 0;
    for (uint32_t i = 0; i < m; i++) {
        const float *a = xz + 2 * i, *b = xz + 2 * ((i + 1) % m), *c = xz + 2 * ((i + 2) % m);
        /* Neighbours a b and b c: a on b c or c on a b means they overlap. */
        if (orient(a, b, c) == 0 && (within(b, c, a) || within(a, b, c))) return 0;
        for (uint32_t j = i + 2; j < m; j++) {
            if ((j + 1) % m == i) continue;
            if (meet(a, b, xz + 2 * j, xz + 2 * ((j + 1) % m))) return 0;
        }
    }
    return 1;
}

/* A road's outline: two sides of a strip along heading ang (bending by
 * bend per metre), cols column pairs across its ends, points rounded to
 * the grid q (0: none), reversed or not. */
static uint32_t road_loop(pm_rng *r, float *xz, uint32_t rows, uint32_t cols, double ang, double bend, double q,
                          bool reverse) {
    double w = pm_rng_range(r, 1, 12), step = pm_rng_range(r, 0.2, 8);
    double ox = pm_rng_range(r, -3000, 3000), oz = pm_rng_range(r, -3000, 3000);
    static float v[400][9][2];
    for (uint32_t i = 0; i < rows; i++) {
        double t = i * step, a = ang + bend * t;
        double cx = ox + t * cos(ang + bend * t / 2), cz = oz + t * sin(ang + bend * t / 2);
        for (uint32_t j = 0; j <= cols; j++) {
            double off = -w / 2 + w * j / cols, x = cx - off * sin(a), z = cz + off * cos(a);
            if (q > 0) x = round(x / q) * q, z = round(z / q) * q;
            v[i][j][0] = (float)x, v[i][j][1] = (float)z;
        }
    }
    uint32_t m = 0;
    for (uint32_t j = 0; j < cols; j++) memcpy(xz + 2 * m++, v[0][j], 2 * sizeof(float));
    for (uint32_t i = 0; i < rows; i++) memcpy(xz + 2 * m++, v[i][cols], 2 * sizeof(float));
    for (uint32_t j = cols; j-- > 1;) memcpy(xz + 2 * m++, v[rows - 1][j], 2 * sizeof(float));
    for (uint32_t i = rows; i-- > 1;) memcpy(xz + 2 * m++, v[i][0], 2 * sizeof(float));
    if (reverse)
        for (uint32_t i = 0, j = m - 1; i < j; i++, j--) {
            float t[2] = {xz[2 * i], xz[2 * i + 1]};
            memcpy(xz + 2 * i, xz + 2 * j, sizeof t);
            memcpy(xz + 2 * j, t, sizeof t);
        }
    return m;
}

/* Spoils a loop now and then the ways a certificate could be fooled: a
 * point moved onto another point, onto another edge (touching), onto the
 * far side, a point repeated, a spike back along an edge. */
static uint32_t spoil(pm_rng *r, float *xz, uint32_t m, uint32_t cap) {
    uint32_t i = (uint32_t)pm_rng_below(r, m), j = (uint32_t)pm_rng_below(r, m);
    switch (pm_rng_below(r, 6)) {
    case 0: memcpy(xz + 2 * i, xz + 2 * j, 2 * sizeof(float)); break;   /* repeat anywhere */
    case 1: {   /* onto the midpoint of edge j (exact when on a grid) */
        uint32_t k = (j + 1) % m;
        xz[2 * i] = (float)(((double)xz[2 * j] + xz[2 * k]) / 2);
        xz[2 * i + 1] = (float)(((double)xz[2 * j + 1] + xz[2 * k + 1]) / 2);
        break;
    }
    case 2: {   /* pushed across to the other side */
        uint32_t k = (i + m / 2) % m;
        xz[2 * i] = (float)(2.0 * xz[2 * k] - xz[2 * i]);
        xz[2 * i + 1] = (float)(2.0 * xz[2 * k + 1] - xz[2 * i + 1]);
        break;
    }
    case 3:   /* a point inserted twice in a row */
        if (m < cap) {
            memmove(xz + 2 * i + 2, xz + 2 * i, 2 * (size_t)(m - i) * sizeof(float));
            m++;
        }
        break;
    case 4:   /* a spike: a point inserted back along the edge before it */
        if (m < cap && i > 0) {
            memmove(xz + 2 * i + 2, xz + 2 * i, 2 * (size_t)(m - i) * sizeof(float));
            xz[2 * i] = (float)(((double)xz[2 * i - 2] * 3 + xz[2 * i]) / 4);
            xz[2 * i + 1] = (float)(((double)xz[2 * i - 1] * 3 + xz[2 * i + 1]) / 4);
            m++;
        }
        break;
    default:   /* nudged by an ulp or so */
        xz[2 * i] = nextafterf(xz[2 * i], pm_rng_below(r, 2) ? HUGE_VALF : -HUGE_VALF);
        break;
    }
    return m;
}

/* Small loops on a coarse integer grid: collinear runs, touching
 * corners and repeats everywhere. */
static uint32_t grid_loop(pm_rng *r, float *xz) {
    uint32_t m = 3 + (uint32_t)pm_rng_below(r, 10);
    if (pm_rng_below(r, 2)) {   /* a star round the centre, often simple */
        double a0 = pm_rng_range(r, 0, 2 * PM_TEST_PI);
        for (uint32_t k = 0; k < m; k++) {
            double a = a0 + 2 * PM_TEST_PI * k / m + pm_rng_range(r, -0.2, 0.2), rad = pm_rng_range(r, 1, 6);
            xz[2 * k] = (float)round(rad * cos(a));
            xz[2 * k + 1] = (float)round(rad * sin(a));
        }
    } else
        for (uint32_t k = 0; k < m; k++) {
            xz[2 * k] = (float)pm_rng_below(r, 6);
            xz[2 * k + 1] = (float)pm_rng_below(r, 6);
        }
    return m;
}

Test(loop_monotone, same_verdict_as_the_sweep_and_the_oracle) {
    pm_rng r;
    pm_rng_seed(&r, 1414);
    static float xz[2 * 1000];
    int simple = 0, notsimple = 0, decided = 0, roads = 0, spoiled_simple = 0, spoiled = 0;
    for (int it = 0; it < 20000; it++) {
        uint32_t m;
        bool road = it % 4 != 3;
        if (road) {
            uint32_t rows = 2 + (uint32_t)pm_rng_below(&r, it % 7 == 0 ? 300 : 40), cols = 1 + (uint32_t)pm_rng_below(&r, 4);
            double ang = it % 5 == 0 ? (double)pm_rng_below(&r, 8) * PM_TEST_PI / 4 : pm_rng_range(&r, 0, 2 * PM_TEST_PI);
            double bend = it % 3 == 0 ? pm_rng_range(&r, -0.05, 0.05) : 0.0;
            double q = it % 2 ? 0.001 : it % 6 == 0 ? 0.5 : 0.0;
            m = road_loop(&r, xz, rows, cols, ang, bend, q, pm_rng_below(&r, 2));
            if (pm_rng_below(&r, 3) == 0) {
                m = spoil(&r, xz, m, 1000);
                spoiled++;
            }
        } else {
            m = grid_loop(&r, xz);
            if (pm_rng_below(&r, 2)) m = spoil(&r, xz, m, 1000);
        }
        pm_arena *a = pm_arena_create(0);
        int want = oracle(xz, m), sweep = pm__loop_simple_path(a, xz, m, 0), fast = pm__loop_simple_path(a, xz, m, 1);
        int lin = pm__loop_simple_path(a, xz, m, 2);
        pm_arena_destroy(a);
        cr_assert_eq(sweep, want, "it %d (m %u): sweep %d, oracle %d", it, m, sweep, want);
        cr_assert_eq(fast, want, "it %d (m %u): fast path %d, oracle %d", it, m, fast, want);
        cr_assert(lin == 0 || (lin == 1 && want == 1), "it %d: the linear test alone says %d, oracle %d", it, lin, want);
        simple += want == 1;
        notsimple += want == 0;
        if (road && want == 1) {
            roads++;
            decided += lin == 1;
        }
        spoiled_simple += road && want == 1 && lin == 1 && it % 3 == 0;
    }
    cr_assert_gt(notsimple, 3000, "not simple: %d", notsimple);
    cr_assert_gt(simple, 8000, "simple: %d", simple);
    /* Straight or gently bent roads at any heading: the linear test decides. */
    cr_assert_gt(decided, roads * 9 / 10, "decided %d of %d simple road outlines", decided, roads);
    (void)spoiled_simple;
}

Test(loop_monotone, cases) {
    pm_arena *a = pm_arena_create(0);
    /* Two chains touching at one point between their ends: not simple. */
    const float pinch[] = {0, 0, 2, 1, 4, 0, 4, 2, 2, 1, 0, 2};
    /* A vertical end (equal x): the order breaks the tie by z. */
    const float box[] = {0, 0, 3, 0, 3, 1, 3, 2, 0, 2, 0, 1};
    /* The chains cross between two of their points. */
    const float cross[] = {0, 0, 2, 1, 4, -1, 6, 0, 4, 1, 2, -1};
    /* A collinear run along one chain: simple. */
    const float run[] = {0, 0, 1, 0, 2, 0, 3, 0, 3, 1, 0, 1};
    /* One chain doubles back on the other's end segment. */
    const float back[] = {0, 0, 4, 0, 2, 0, 2, 2};
    for (int path = 1; path <= 2; path++) {
        cr_assert_eq(pm__loop_simple_path(a, pinch, 6, path), 0);
        cr_assert_eq(pm__loop_simple_path(a, box, 6, path), 1);
        cr_assert_eq(pm__loop_simple_path(a, cross, 6, path), 0);
        cr_assert_eq(pm__loop_simple_path(a, run, 6, path), 1);
        cr_assert_eq(pm__loop_simple_path(a, back, 4, path), 0);
    }
    pm_arena_destroy(a);
}

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/plan_boundary.h"
#include "geom/predicates.h"
#include "geom/plan_overlap.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"

#define PM_TEST_PI 3.14159265358979323846

/* The certificate must never claim "disjoint" for a set the exact pairwise
 * sweep finds overlapping, and must claim it for the clean strips roads
 * are made of (else it saves nothing). */

static int count_hit(void *ctx, const pm_ptri *a, const pm_ptri *b) {
    (void)a, (void)b;
    ++*(int *)ctx;
    return 0;
}

static int sweep_pairs(pm_arena *a, pm_pset *S) {
    cr_assert_eq(pm_pset_grid(a, S), PM_OK);
    int n = 0;
    cr_assert_eq(pm_pset_sweep(S, NULL, count_hit, &n), 0);
    return n;
}

static void add(pm_pset *S, double ax, double az, double bx, double bz, double cx, double cz) {
    float a[3] = {(float)ax, 0, (float)az}, b[3] = {(float)bx, 0, (float)bz}, c[3] = {(float)cx, 0, (float)cz};
    pm_pset_add(S, a, b, c, 0, 0, 0);
}

/* A strip of rows x cols quads between two polylines given per row by a
 * centre (cx, cz), a unit "right" (rx, rz) and a half width; each corner
 * moved by up to jitter in x and z (rng, when jitter > 0). */
static void strip_jittered(pm_pset *S, int rows, int cols, const double (*c)[2],
                           const double (*r)[2], double hw, pm_rng *rng, double jitter) {
    static double v[512][9][2];
    cr_assert(rows <= 512 && cols <= 8);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j <= cols; j++) {
            double d = -hw + 2 * hw * j / cols;
            for (int k = 0; k < 2; k++)
                v[i][j][k] = c[i][k] + d * r[i][k] + (jitter > 0 ? pm_rng_range(rng, -jitter, jitter) : 0);
        }
    for (int i = 0; i + 1 < rows; i++)
        for (int j = 0; j < cols; j++) {
            const double *p1 = v[i][j], *p2 = v[i][j + 1], *p4 = v[i + 1][j], *p3 = v[i + 1][j + 1];
            add(S, p1[0], p1[1], p2[0], p2[1], p4[0], p4[1]);
            add(S, p2[0], p2[1], p3[0], p3[1], p4[0], p4[1]);
        }
}

static void strip(pm_pset *S, int rows, int cols, const double (*c)[2], const double (*r)[2],
                  double hw) {
    strip_jittered(S, rows, cols, c, r, hw, NULL, 0);
}

/* A road-like strip along an arc of radius R turning by total radians (a
 * full turn ends exactly on its first section: a ring). */
static void arc_strip(pm_pset *S, int rows, int cols, double R, double total, double hw) {
    double c[512][2], r[512][2];
    cr_assert(rows <= 512);
    for (int i = 0; i < rows; i++) {
        double a = total * i / (rows - 1);
        c[i][0] = R * sin(a);
        c[i][1] = R - R * cos(a);
        r[i][0] = -sin(a);
        r[i][1] = cos(a);
    }
    if (total == 2 * PM_TEST_PI) {
        memcpy(c[rows - 1], c[0], sizeof c[0]);
        memcpy(r[rows - 1], r[0], sizeof r[0]);
    }
    strip(S, rows, cols, (const double(*)[2])c, (const double(*)[2])r, hw);
}

Test(plan_boundary, straight_strip_with_collinear_edges_is_shown_disjoint) {
    pm_arena *a = pm_arena_create(0);
    pm_pset S;
    cr_assert_eq(pm_pset_init(a, &S, 4096), PM_OK);
    double c[50][2], r[50][2];
    for (int i = 0; i < 50; i++) c[i][0] = 2.5 * i, c[i][1] = 0, r[i][0] = 0, r[i][1] = 1;
    strip(&S, 50, 2, (const double(*)[2])c, (const double(*)[2])r, 4.0);
    cr_assert_eq(pm_pset_simple_boundary(a, &S), 1);
    cr_assert_eq(sweep_pairs(a, &S), 0);
    pm_arena_destroy(a);
}

Test(plan_boundary, arc_strip_is_shown_disjoint) {
    pm_arena *a = pm_arena_create(0);
    pm_pset S;
    cr_assert_eq(pm_pset_init(a, &S, 8192), PM_OK);
    arc_strip(&S, 200, 4, 100.0, 2.0, 4.0);
    cr_assert_eq(pm_pset_simple_boundary(a, &S), 1);
    cr_assert_eq(sweep_pairs(a, &S), 0);
    pm_arena_destroy(a);
}

Test(plan_boundary, strip_overlapping_itself_is_not_shown) {
    /* Radius 3 with half width 4 turning 300 degrees: the inner side
     * folds over itself; and a full 400-degree turn at radius 10 whose
     * ends lie on each other. Both have overlapping pairs. */
    const double cases[2][3] = {{3.0, 300.0, 4.0}, {10.0, 400.0, 4.0}};
    for (int k = 0; k < 2; k++) {
        pm_arena *a = pm_arena_create(0);
        pm_pset S;
        cr_assert_eq(pm_pset_init(a, &S, 8192), PM_OK);
        arc_strip(&S, 120, 2, cases[k][0], cases[k][1] * PM_TEST_PI / 180.0, cases[k][2]);
        cr_assert_eq(pm_pset_simple_boundary(a, &S), 0, "case %d", k);
        cr_assert_gt(sweep_pairs(a, &S), 0, "case %d", k);
        pm_arena_destroy(a);
    }
}

Test(plan_boundary, ring_double_cover_and_touching_ends_are_not_shown) {
    pm_arena *a = pm_arena_create(0);
    pm_pset S;
    /* A closed ring: two loops (the hole), not shown though disjoint. */
    cr_assert_eq(pm_pset_init(a, &S, 8192), PM_OK);
    arc_strip(&S, 65, 2, 20.0, 2 * PM_TEST_PI, 4.0);
    int cert = pm_pset_simple_boundary(a, &S);
    cr_assert_eq(cert, 0, "cert %d pairs %d", cert, sweep_pairs(a, &S));
    /* A fan around the origin going round twice: every point covered twice. */
    cr_assert_eq(pm_pset_init(a, &S, 64), PM_OK);
    for (int i = 0; i < 12; i++) {
        double a0 = 2 * PM_TEST_PI * i / 6, a1 = 2 * PM_TEST_PI * (i + 1) / 6;
        add(&S, 0, 0, 10 * cos(a0), 10 * sin(a0), 10 * cos(a1), 10 * sin(a1));
    }
    cr_assert_eq(pm_pset_simple_boundary(a, &S), 0);
    cr_assert_gt(sweep_pairs(a, &S), 0);
    /* Two triangles on the same edge the same way round. */
    cr_assert_eq(pm_pset_init(a, &S, 4), PM_OK);
    add(&S, 0, 0, 10, 0, 5, 5);
    add(&S, 0, 0, 10, 0, 4, 2);
    cr_assert_eq(pm_pset_simple_boundary(a, &S), 0);
    cr_assert_gt(sweep_pairs(a, &S), 0);
    /* Two triangles meeting at one corner: disjoint, but the outline
     * passes that corner twice. */
    cr_assert_eq(pm_pset_init(a, &S, 4), PM_OK);
    add(&S, 0, 0, 4, 0, 2, 2);
    add(&S, 2, 2, 4, 4, 0, 4);
    cr_assert_eq(pm_pset_simple_boundary(a, &S), 0);
    cr_assert_eq(sweep_pairs(a, &S), 0);
    pm_arena_destroy(a);
}

/* Random wandering strips, sometimes turning tighter than their half width
 * or crossing their own path, with corners snapped to a coarse lattice now
 * and then (exact collinear and shared points): "shown" must always mean
 * the sweep finds nothing, and most clean strips must be shown. */
Test(plan_boundary, random_strips_never_shown_when_they_overlap) {
    pm_rng rng;
    pm_rng_seed(&rng, 11);
    int shown = 0, clean = 0, overlapping = 0;
    for (int trial = 0; trial < 1500; trial++) {
        pm_arena *a = pm_arena_create(0);
        pm_pset S;
        cr_assert_eq(pm_pset_init(a, &S, 8192), PM_OK);
        int rows = 3 + (int)pm_rng_below(&rng, 120), cols = 1 + (int)pm_rng_below(&rng, 4);
        double hw = pm_rng_range(&rng, 0.5, 8.0), step = pm_rng_range(&rng, 0.3, 6.0);
        double turn = pm_rng_range(&rng, 0.0, 0.6), snap = pm_rng_below(&rng, 3) == 0 ? 0.5 : 0.0;
        double c[512][2], r[512][2], x = 0, z = 0, h = pm_rng_range(&rng, 0, 6.283), dh = 0;
        for (int i = 0; i < rows; i++) {
            c[i][0] = snap > 0 ? round(x / snap) * snap : x;
            c[i][1] = snap > 0 ? round(z / snap) * snap : z;
            r[i][0] = -sin(h);
            r[i][1] = cos(h);
            dh = 0.7 * dh + pm_rng_range(&rng, -turn, turn);
            h += dh;
            x += step * cos(h);
            z += step * sin(h);
        }
        double jitter = pm_rng_below(&rng, 3) == 0 ? pm_rng_range(&rng, 0, 0.5) * step : 0;
        strip_jittered(&S, rows, cols, (const double(*)[2])c, (const double(*)[2])r, hw, &rng, jitter);
        if (S.ntri == 0) {
            pm_arena_destroy(a);
            continue;
        }
        int cert = pm_pset_simple_boundary(a, &S);
        cr_assert_geq(cert, 0);
        int pairs = sweep_pairs(a, &S);
        if (cert == 1) cr_assert_eq(pairs, 0, "trial %d: shown disjoint, %d pairs overlap", trial, pairs);
        shown += cert == 1;
        clean += pairs == 0;
        overlapping += pairs > 0;
        pm_arena_destroy(a);
    }
    cr_assert_gt(overlapping, 50, "the trials must include overlapping strips (%d)", overlapping);
    cr_assert_gt(shown, clean * 8 / 10, "shown %d of %d clean strips", shown, clean);
}

/* pm_loop_simple: a polygon given as its loop of points. */
Test(plan_boundary, loop_simple_cases) {
    pm_arena *a = pm_arena_create(0);
    const float square[] = {0, 0, 4, 0, 4, 4, 0, 4};
    const float bowtie[] = {0, 0, 4, 4, 4, 0, 0, 4};
    const float pinched[] = {0, 0, 4, 0, 2, 2, 4, 4, 0, 4, 2, 2};   /* a point twice */
    const float spike[] = {0, 0, 4, 0, 4, 4, 4, 1, 4, 6, 0, 4};     /* doubles back on its edge */
    const float repeat[] = {0, 0, 4, 0, 4, 0, 0, 4};
    const float collinear[] = {0, 0, 2, 0, 4, 0, 4, 4, 0, 4};       /* a straight corner is fine */
    cr_assert_eq(pm_loop_simple(a, square, 4), 1);
    cr_assert_eq(pm_loop_simple(a, collinear, 5), 1);
    cr_assert_eq(pm_loop_simple(a, bowtie, 4), 0);
    cr_assert_eq(pm_loop_simple(a, pinched, 6), 0);
    cr_assert_eq(pm_loop_simple(a, spike, 6), 0);
    cr_assert_eq(pm_loop_simple(a, repeat, 4), 0);
    pm_arena_destroy(a);
}

/* A strip's outline (one border, the last row, the other border back, the
 * first row) simple means its triangles, all the same way round, are
 * disjoint: what the road's check relies on. Random wandering strips, as
 * above, whose triangles all face the same way. */
Test(plan_boundary, strip_outline_simple_only_when_disjoint) {
    pm_rng rng;
    pm_rng_seed(&rng, 23);
    static float v[160][5][2];
    static float loop[2 * (2 * 160 + 2 * 5)];
    int shown = 0, overlapping = 0, tried = 0;
    for (int trial = 0; trial < 1500; trial++) {
        int rows = 3 + (int)pm_rng_below(&rng, 150), cols = 1 + (int)pm_rng_below(&rng, 4);
        double hw = pm_rng_range(&rng, 0.5, 8.0), step = pm_rng_range(&rng, 0.3, 6.0);
        double turn = pm_rng_range(&rng, 0.0, 0.5), x = 0, z = 0, h = pm_rng_range(&rng, 0, 6.283), dh = 0;
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j <= cols; j++) {
                double d = -hw + 2 * hw * j / cols;
                v[i][j][0] = (float)(x - d * sin(h));
                v[i][j][1] = (float)(z + d * cos(h));
            }
            dh = 0.7 * dh + pm_rng_range(&rng, -turn, turn);
            h += dh;
            x += step * cos(h);
            z += step * sin(h);
        }
        pm_arena *a = pm_arena_create(0);
        pm_pset S;
        cr_assert_eq(pm_pset_init(a, &S, 2 * rows * cols), PM_OK);
        bool ccw = true;   /* all one way round (the loop's sense does not matter) */
        double sense = 0;
        for (int i = 0; i + 1 < rows && ccw; i++)
            for (int j = 0; j < cols && ccw; j++) {
                const float *p[4] = {v[i][j], v[i][j + 1], v[i + 1][j + 1], v[i + 1][j]};
                const int tri[2][3] = {{0, 1, 3}, {1, 2, 3}};
                for (int t = 0; t < 2 && ccw; t++) {
                    const float *A = p[tri[t][0]], *B = p[tri[t][1]], *C = p[tri[t][2]];
                    double o = ((double)B[0] - A[0]) * ((double)C[1] - A[1]) - ((double)B[1] - A[1]) * ((double)C[0] - A[0]);
                    if (sense == 0) sense = o;
                    ccw = o * sense > 0;
                    float a3[3] = {A[0], 0, A[1]}, b3[3] = {B[0], 0, B[1]}, c3[3] = {C[0], 0, C[1]};
                    pm_pset_add(&S, a3, b3, c3, 0, 0, 0);
                }
            }
        if (!ccw) {
            pm_arena_destroy(a);
            continue;
        }
        int m = 0;
        for (int i = 0; i < rows; i++) memcpy(loop + 2 * m++, v[i][0], sizeof v[i][0]);
        for (int j = 1; j <= cols; j++) memcpy(loop + 2 * m++, v[rows - 1][j], sizeof v[0][0]);
        for (int i = rows - 2; i >= 0; i--) memcpy(loop + 2 * m++, v[i][cols], sizeof v[0][0]);
        for (int j = cols - 1; j >= 1; j--) memcpy(loop + 2 * m++, v[0][j], sizeof v[0][0]);
        int cert = pm_loop_simple(a, loop, (uint32_t)m);
        cr_assert_geq(cert, 0);
        int pairs = sweep_pairs(a, &S);
        if (cert == 1) cr_assert_eq(pairs, 0, "trial %d: outline simple, %d pairs overlap", trial, pairs);
        tried++;
        shown += cert == 1;
        overlapping += pairs > 0;
        pm_arena_destroy(a);
    }
    cr_assert_gt(overlapping, 50, "the trials must include overlapping strips (%d of %d)", overlapping, tried);
    cr_assert_gt(shown, tried / 4, "shown %d of %d", shown, tried);
}

/* pm_loop_convex written out the plain way (the code before its AVX2
 * path): the reference its paths must agree with. */
static int convex_ref(const float *xz, uint32_t m) {
    if (m < 3) return 0;
    int changes = 0, last = 0, first = 0;
    for (uint32_t k = 0; k < m; k++) {
        uint32_t j = (k + 1) % m, l = (k + 2) % m;
        double A[2] = {xz[2 * k], xz[2 * k + 1]}, B[2] = {xz[2 * j], xz[2 * j + 1]}, C[2] = {xz[2 * l], xz[2 * l + 1]};
        double dx = B[0] - A[0], dz = B[1] - A[1], o = pm_orient2d(A, B, C);
        if (o < 0 || (dx == 0 && dz == 0)) return 0;
        if (o == 0 && dx * (C[0] - B[0]) + dz * (C[1] - B[1]) <= 0) return 0;
        int sg = (dx > 0) - (dx < 0);
        if (sg == 0) continue;
        if (first == 0) first = sg;
        else if (sg != last) changes++;
        last = sg;
    }
    if (last != first) changes++;
    return changes <= 2;
}

Test(plan_boundary, loop_convex_paths_agree_with_the_plain_walk) {
    /* Road-like outlines (a strip's two sides, straight along any angle
     * or curved, many corners exactly or nearly collinear, where the
     * orientation filter is not sure), convex polygons, and those
     * spoiled (a point pushed in, a repeat, reversed): every path of
     * pm__loop_convex_path against the reference. */
    pm_rng r;
    pm_rng_seed(&r, 5150);
    static float xz[2 * 200];
    int ran[2] = {0, 0}, yes = 0, no = 0;
    for (int it = 0; it < 6000; it++) {
        uint32_t half = (uint32_t)pm_rng_int(&r, 2, 99), m = 0;
        double ang = it % 3 == 0 ? (double)pm_rng_below(&r, 4) * PM_TEST_PI / 2 : pm_rng_range(&r, 0, 2 * PM_TEST_PI);
        double bendk = it % 4 == 0 ? pm_rng_range(&r, -0.02, 0.02) : 0.0, w = pm_rng_range(&r, 2, 8);
        double ox = pm_rng_range(&r, -1000, 1000), oz = pm_rng_range(&r, -1000, 1000), step = pm_rng_range(&r, 0.3, 6);
        for (int side = 0; side < 2; side++)
            for (uint32_t i = 0; i < half; i++) {
                uint32_t k = side ? half - 1 - i : i;
                double t = k * step, a = ang + bendk * t, off = side ? w / 2 : -w / 2;
                double cx = ox + t * cos(ang + bendk * t / 2), cz = oz + t * sin(ang + bendk * t / 2);
                xz[2 * m] = (float)(cx - off * sin(a));
                xz[2 * m + 1] = (float)(cz + off * cos(a));
                m++;
            }
        if (it % 5 == 1) {   /* a convex polygon instead, or one wound round twice (every turn a left one) */
            m = (uint32_t)pm_rng_int(&r, 3, 200);
            double turns = it % 3 == 0 && m % 2 ? 2 : 1;
            for (uint32_t i = 0; i < m; i++) {
                double a = 2 * PM_TEST_PI * turns * i / m;
                xz[2 * i] = (float)(ox + 50 * cos(a));
                xz[2 * i + 1] = (float)(oz + 50 * sin(a));
            }
        }
        if (pm_rng_chance(&r, 0.3)) {   /* spoiled */
            uint32_t i = (uint32_t)pm_rng_below(&r, m);
            switch (pm_rng_below(&r, 3)) {
            case 0: xz[2 * i] = (float)(xz[2 * i] + pm_rng_range(&r, -3, 3)); break;
            case 1: xz[2 * i] = xz[2 * ((i + 1) % m)], xz[2 * i + 1] = xz[2 * ((i + 1) % m) + 1]; break;
            default:
                for (uint32_t a = 0, b = m - 1; a < b; a++, b--)
                    for (int c = 0; c < 2; c++) {
                        float x = xz[2 * a + c];
                        xz[2 * a + c] = xz[2 * b + c];
                        xz[2 * b + c] = x;
                    }
            }
        }
        int want = convex_ref(xz, m);
        yes += want, no += !want;
        for (int path = -1; path <= 1; path++) {
            int got = pm__loop_convex_path(xz, m, path);
            if (got < 0) continue;
            if (path >= 0) ran[path]++;
            cr_assert_eq(got, want, "outline %d (%u points), path %d: %d, want %d", it, m, path, got, want);
        }
        cr_assert_eq(pm_loop_convex(xz, m), want, "outline %d", it);
    }
    cr_assert_gt(yes, 1000, "only %d convex", yes);
    cr_assert_gt(no, 1000, "only %d not convex", no);
    cr_log_info("loop_convex paths: plain %d, AVX2 %d; %d convex, %d not", ran[0], ran[1], yes, no);
}

#include <criterion/criterion.h>
#include <math.h>

#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "geom/spline.h"

/* Random control polygon: a wandering walk in plan with gentle heights,
 * consecutive points at least 1 m apart, sometimes sharp turns. */
static size_t random_points(pm_rng *r, double *pts, size_t max) {
    size_t n = 2 + (size_t)pm_rng_below(r, max - 1);
    double x = 0.0, z = 0.0, y = 0.0, heading = pm_rng_range(r, 0.0, 6.283);
    for (size_t i = 0; i < n; i++) {
        pts[3 * i] = x;
        pts[3 * i + 1] = y;
        pts[3 * i + 2] = z;
        double step = pm_rng_range(r, 1.0, 60.0);
        heading += pm_rng_range(r, -2.5, 2.5);
        x += step * cos(heading);
        z += step * sin(heading);
        y += pm_rng_range(r, -3.0, 3.0);
    }
    return n;
}

static double dist3(const double *a, const double *b) {
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                (a[2] - b[2]) * (a[2] - b[2]));
}

/* The achieved error measured against a dense reference: 400 points per
 * curve segment, each compared with the chord covering its parameter. */
static double reference_error(const pm_spline *s, const pm_curve_sample *smp, size_t n) {
    double worst = 0.0;
    size_t j = 0;
    for (uint32_t seg = 0; seg < s->nseg; seg++) {
        for (int k = 0; k < 400; k++) {
            double t = seg + k / 400.0, p[3];
            pm_spline_eval(s, t, p, NULL, NULL);
            while (j + 2 < n && smp[j + 1].t <= t) j++;
            double d = pm_point_segment_distance(p, smp[j].p, smp[j + 1].p);
            if (d > worst) worst = d;
        }
    }
    return worst;
}

Test(spline, straight_line_respects_max_segment) {
    pm_arena *a = pm_arena_create(0);
    double pts[] = {0, 0, 0, 100, 0, 0};
    pm_spline s;
    cr_assert_eq(pm_spline_init(a, &s, pts, 2, false, PM_CURVE_CATMULL_ROM, 0.5), PM_OK);
    pm_sample_opts o = {.max_error = 0.05, .max_segment = 5.0};
    pm_curve_sample *smp;
    size_t n;
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_OK);
    /* 100 m at <= 5 m: the fewest chords, 20 of 5 m (halving gave 32 of 3.125 m). */
    cr_assert_eq(n, 21, "%zu", n);
    for (size_t i = 0; i + 1 < n; i++) {
        cr_assert_leq(dist3(smp[i].p, smp[i + 1].p), 5.0 * (1.0 + 1e-12));
        cr_assert_float_eq(smp[i].p[1], 0.0, 1e-12);
    }
    cr_assert_float_eq(smp[n - 1].p[0], 100.0, 1e-9);
    pm_arena_destroy(a);
}

Test(spline, endpoints_and_control_points_are_samples) {
    pm_arena *a = pm_arena_create(0);
    double pts[] = {0, 0, 0, 10, 1, 5, 20, -1, 0, 30, 2, 8};
    pm_spline s;
    pm_spline_init(a, &s, pts, 4, false, PM_CURVE_CATMULL_ROM, 0.5);
    pm_sample_opts o = {.max_error = 0.01, .max_segment = 2.0};
    pm_curve_sample *smp;
    size_t n;
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_OK);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        if (smp[i].t == floor(smp[i].t)) {
            size_t k = (size_t)smp[i].t;
            cr_assert_float_eq(dist3(smp[i].p, pts + 3 * k), 0.0, 1e-9, "control point %zu", k);
            found++;
        }
        if (i) cr_assert_gt(smp[i].t, smp[i - 1].t);
    }
    cr_assert_eq(found, 4);
    pm_arena_destroy(a);
}

Test(spline, chord_error_bound_holds_on_random_splines) {
    pm_arena *a = pm_arena_create(0);
    pm_rng r;
    pm_rng_seed(&r, 42);
    double pts[3 * 12];
    double errs[] = {0.5, 0.05, 0.01};
    for (int iter = 0; iter < 1000; iter++) {
        size_t n = random_points(&r, pts, 12);
        bool closed = n >= 3 && pm_rng_chance(&r, 0.3);
        double alpha = iter % 3 == 0 ? pm_rng_unit(&r) : 0.5;
        pm_spline s;
        cr_assert_eq(pm_spline_init(a, &s, pts, n, closed, PM_CURVE_CATMULL_ROM, alpha), PM_OK);
        pm_sample_opts o = {.max_error = errs[iter % 3], .max_segment = pm_rng_range(&r, 0.5, 20.0)};
        pm_curve_sample *smp;
        size_t ns;
        cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &ns), PM_OK);
        double ref = reference_error(&s, smp, ns);
        cr_assert_leq(ref, o.max_error * (1.0 + 1e-9), "iter %d: reference error %g > %g", iter, ref,
                      o.max_error);
        double own = pm_spline_chord_error(&s, &o, smp, ns, 16);
        cr_assert_leq(own, o.max_error * (1.0 + 1e-9));
        cr_assert_gt(own, 0.0);
        /* The cheap report from the recorded errors matches the dense one. */
        double rec = pm_spline_sample_error(&s, &o, smp, ns);
        cr_assert_leq(rec, o.max_error * (1.0 + 1e-9));
        cr_assert_geq(rec, fmax(own, ref) * (1.0 - 1e-3) - 1e-9, "iter %d: recorded %g < measured %g", iter,
                      rec, fmax(own, ref));
        for (size_t i = 0; i + 1 < ns; i++)
            cr_assert_leq(dist3(smp[i].p, smp[i + 1].p), o.max_segment * (1.0 + 1e-12));
    }
    pm_arena_destroy(a);
}

Test(spline, closed_curve_ends_on_its_start) {
    pm_arena *a = pm_arena_create(0);
    double pts[] = {0, 0, 0, 40, 0, 0, 40, 5, 40, 0, 5, 40};
    pm_spline s;
    pm_spline_init(a, &s, pts, 4, true, PM_CURVE_CATMULL_ROM, 0.5);
    cr_assert_eq(s.nseg, 4);
    pm_sample_opts o = {.max_error = 0.02, .max_segment = 3.0};
    pm_curve_sample *smp;
    size_t n;
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_OK);
    cr_assert_eq(smp[n - 1].t, 4.0);
    cr_assert(memcmp(smp[0].p, smp[n - 1].p, sizeof smp[0].p) == 0, "bitwise equal ends");
    /* C1 across the seam: tangent directions at t=0 and t=4 agree. */
    double p[3], d0[3], d4[3];
    pm_spline_eval(&s, 0.0, p, d0, NULL);
    pm_spline_eval(&s, 4.0, p, d4, NULL);
    double c = (d0[0] * d4[0] + d0[1] * d4[1] + d0[2] * d4[2]) /
               sqrt((d0[0] * d0[0] + d0[1] * d0[1] + d0[2] * d0[2]) * (d4[0] * d4[0] + d4[1] * d4[1] + d4[2] * d4[2]));
    cr_assert_float_eq(c, 1.0, 1e-9);
    cr_assert_leq(reference_error(&s, smp, n), 0.02);
    pm_arena_destroy(a);
}

Test(spline, centripetal_plan_curve_has_no_cusps) {
    pm_arena *a = pm_arena_create(0);
    pm_rng r;
    pm_rng_seed(&r, 7);
    double pts[3 * 10];
    for (int iter = 0; iter < 200; iter++) {
        size_t n = random_points(&r, pts, 10);
        pm_spline s;
        pm_spline_init(a, &s, pts, n, false, PM_CURVE_CATMULL_ROM, 0.5);
        for (uint32_t k = 0; k <= 200 * s.nseg; k++) {
            double p[3], d1[3];
            pm_spline_eval(&s, k / 200.0, p, d1, NULL);
            cr_assert_gt(hypot(d1[0], d1[2]), 1e-9, "plan speed vanishes at t=%g", k / 200.0);
        }
    }
    pm_arena_destroy(a);
}

Test(spline, curvature_of_a_circle) {
    pm_arena *a = pm_arena_create(0);
    /* 24 points on a circle of radius 30, counter-clockwise in (x, z):
     * seen from +Y that is a clockwise loop, i.e. a right turn. */
    double pts[3 * 24];
    for (int i = 0; i < 24; i++) {
        double th = 6.283185307179586 * i / 24.0;
        pts[3 * i] = 30.0 * cos(th);
        pts[3 * i + 1] = 0.0;
        pts[3 * i + 2] = 30.0 * sin(th);
    }
    pm_spline s;
    pm_spline_init(a, &s, pts, 24, true, PM_CURVE_CATMULL_ROM, 0.5);
    for (int k = 0; k < 240; k++) {
        double kap = pm_spline_curvature(&s, k / 10.0);
        cr_assert_float_eq(kap, -1.0 / 30.0, 0.002, "t=%g: %g", k / 10.0, kap);
    }
    /* The mirrored loop turns left. */
    for (int i = 0; i < 24; i++) pts[3 * i + 2] = -pts[3 * i + 2];
    pm_spline_init(a, &s, pts, 24, true, PM_CURVE_CATMULL_ROM, 0.5);
    cr_assert_gt(pm_spline_curvature(&s, 3.3), 0.0);
    pm_arena_destroy(a);
}

Test(spline, linear_keeps_corners_and_has_zero_error) {
    pm_arena *a = pm_arena_create(0);
    double pts[] = {0, 0, 0, 10, 2, 0, 10, 2, 10};
    pm_spline s;
    pm_spline_init(a, &s, pts, 3, false, PM_CURVE_LINEAR, 0.5);
    pm_sample_opts o = {.max_error = 0.05, .max_segment = 4.0};
    pm_curve_sample *smp;
    size_t n;
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_OK);
    cr_assert_eq(n, 7, "two segments of 10.2 m split into 3 chords each");
    cr_assert_float_eq(pm_spline_chord_error(&s, &o, smp, n, 16), 0.0, 1e-12);
    cr_assert_eq(pm_spline_curvature(&s, 0.5), 0.0);
    pm_arena_destroy(a);
}

static double bump(const void *ctx, double x, double z) {
    (void)ctx;
    (void)z;
    return 2.0 * sin(x * 0.3);
}

Test(spline, height_override_adds_samples_where_the_ground_bends) {
    pm_arena *a = pm_arena_create(0);
    double pts[] = {0, 0, 0, 100, 0, 0};
    pm_spline s;
    pm_spline_init(a, &s, pts, 2, false, PM_CURVE_CATMULL_ROM, 0.5);
    pm_sample_opts o = {.max_error = 0.05, .max_segment = 50.0, .height = bump};
    pm_curve_sample *smp;
    size_t n;
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_OK);
    cr_assert_gt(n, 30);
    for (size_t i = 0; i < n; i++) cr_assert_float_eq(smp[i].p[1], bump(NULL, smp[i].p[0], 0), 1e-12);
    cr_assert_leq(pm_spline_chord_error(&s, &o, smp, n, 64), 0.05);
    pm_arena_destroy(a);
}

Test(spline, sample_cap_and_cancel) {
    pm_arena *a = pm_arena_create(0);
    double pts[] = {0, 0, 0, 1000, 0, 0};
    pm_spline s;
    pm_spline_init(a, &s, pts, 2, false, PM_CURVE_CATMULL_ROM, 0.5);
    pm_sample_opts o = {.max_error = 0.05, .max_segment = 1.0, .max_samples = 100};
    pm_curve_sample *smp;
    size_t n;
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_ERR_LIMIT);
    volatile int stop = 1;
    o.max_samples = 0;
    o.cancel = &stop;
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_ERR_CANCELLED);
    pm_arena_destroy(a);
}

/* Without a height override each chord's error comes in closed form: on a
 * plane curve (flat here) it is the exact error unless the curve inflects
 * inside the chord (then an upper bound), so the recorded achieved error
 * is never below a dense measurement and almost always equal to it, and
 * no accepted chord is left with more than max_error by any of 400 probes. */
Test(spline, closed_form_chord_error_is_exact_on_plane_curves) {
    pm_arena *a = pm_arena_create(0);
    pm_rng r;
    pm_rng_seed(&r, 7);
    double pts[3 * 12];
    int exact = 0;
    for (int iter = 0; iter < 500; iter++) {
        size_t n = random_points(&r, pts, 12);
        for (size_t i = 0; i < n; i++) pts[3 * i + 1] = 0.0;
        pm_spline s;
        cr_assert_eq(pm_spline_init(a, &s, pts, n, false, PM_CURVE_CATMULL_ROM, 0.5), PM_OK);
        pm_sample_opts o = {.max_error = iter % 2 ? 0.05 : 0.002, .max_segment = 1000.0};
        pm_curve_sample *smp;
        size_t ns;
        cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &ns), PM_OK);
        double dense = pm_spline_chord_error(&s, &o, smp, ns, 400);
        double rec = pm_spline_sample_error(&s, &o, smp, ns);
        cr_assert_leq(dense, o.max_error * (1.0 + 1e-9), "iter %d: %g > %g", iter, dense, o.max_error);
        cr_assert_leq(rec, o.max_error * (1.0 + 1e-9));
        cr_assert_geq(rec, dense - 1e-9 * o.max_error, "iter %d: recorded %.12g < dense %.12g", iter, rec, dense);
        exact += rec - dense <= 1e-6 * o.max_error;
        for (size_t i = 1; i < ns; i++) cr_assert(smp[i].err_exact);
    }
    cr_assert_geq(exact, 450, "recorded = measured in %d of 500", exact);
    pm_arena_destroy(a);
}

/* Chords per segment: samples with t in (seg, seg + 1]. */
static void chords_per_segment(const pm_curve_sample *smp, size_t n, uint32_t nseg, uint32_t *count) {
    for (uint32_t k = 0; k < nseg; k++) count[k] = 0;
    for (size_t i = 1; i < n; i++) count[(uint32_t)ceil(smp[i].t) - 1]++;
}

/* A straight segment at uniform speed (every linear segment) needs
 * ceil(L / max_segment) chords and gets exactly that many; the old
 * midpoint halving gave the next power of two (87 m at 5 m: 32, not 18). */
Test(spline, straight_lines_take_the_fewest_chords) {
    pm_arena *a = pm_arena_create(0);
    pm_curve_sample *smp;
    size_t n;
    pm_spline s;
    double street[] = {0, 0, 0, 87, 0, 0};
    cr_assert_eq(pm_spline_init(a, &s, street, 2, false, PM_CURVE_LINEAR, 0.5), PM_OK);
    pm_sample_opts o = {.max_error = 0.05, .max_segment = 5.0, .max_turn = 0.1};
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_OK);
    cr_assert_eq(n, 19, "87 m at 5 m: 18 chords, got %zu", n - 1);
    pm_rng r;
    pm_rng_seed(&r, 11);
    double pts[3 * 12];
    uint32_t count[12];
    size_t chords = 0;
    for (int iter = 0; iter < 3000; iter++) {
        size_t np = random_points(&r, pts, 12);
        bool closed = np >= 3 && pm_rng_chance(&r, 0.2);
        cr_assert_eq(pm_spline_init(a, &s, pts, np, closed, PM_CURVE_LINEAR, 0.5), PM_OK);
        o.max_segment = iter % 4 == 0 ? pm_rng_range(&r, 0.05, 1.0) : pm_rng_range(&r, 1.0, 80.0);
        o.max_error = iter % 2 ? 0.01 : 0.5;
        o.max_turn = iter % 3 ? 0.0 : 0.2;
        cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_OK);
        chords_per_segment(smp, n, s.nseg, count);
        for (uint32_t k = 0; k < s.nseg; k++) {
            const double *p0 = pts + 3 * k, *p1 = pts + 3 * ((k + 1) % np);
            uint32_t want = (uint32_t)ceil(dist3(p0, p1) / o.max_segment);
            cr_assert_eq(count[k], want, "iter %d segment %u: %g m at %g m: %u chords, want %u", iter, k,
                         dist3(p0, p1), o.max_segment, count[k], want);
            chords += want;
        }
        for (size_t i = 0; i + 1 < n; i++)
            cr_assert_leq(dist3(smp[i].p, smp[i + 1].p), o.max_segment * (1.0 + 1e-12));
        pm_arena_reset(a);
    }
    cr_assert_gt(chords, 100000);
    pm_arena_destroy(a);
}

/* Plan angle between the tangents at t0 and t1 (C1 curves). */
static double plan_turn(const pm_spline *s, double t0, double t1) {
    double p[3], d0[3], d1[3];
    pm_spline_eval(s, t0, p, d0, NULL);
    pm_spline_eval(s, t1, p, d1, NULL);
    double c = (d0[0] * d1[0] + d0[2] * d1[2]) / (hypot(d0[0], d0[2]) * hypot(d1[0], d1[2]));
    return acos(fmax(-1.0, fmin(1.0, c)));
}

/* Every documented property, on thousands of random straight and curved
 * splines, open and closed, with and without a turn limit: every chord
 * no longer than max_segment and its recorded length its own, the curve
 * within max_error of it, the plan tangent turning less than max_turn,
 * control points as samples in increasing t, closed curves ending on
 * their first sample bit for bit, and the same samples twice. */
Test(spline, every_guarantee_holds_with_equal_pieces) {
    pm_arena *a = pm_arena_create(0), *b = pm_arena_create(0);
    pm_rng r;
    pm_rng_seed(&r, 23);
    double pts[3 * 10];
    double errs[] = {0.5, 0.05, 0.01};
    for (int iter = 0; iter < 2000; iter++) {
        size_t np = random_points(&r, pts, 10);
        if (iter % 4 == 0) /* collinear, unevenly spaced: straight, not uniform in t */
            for (size_t i = 1; i < np; i++) {
                double f = pm_rng_range(&r, 1.0, 40.0);
                for (int c = 0; c < 3; c++) pts[3 * i + c] = pts[3 * (i - 1) + c] + f * (c == 0 ? 0.8 : c == 2 ? 0.6 : 0.0);
            }
        bool closed = np >= 3 && iter % 4 != 0 && pm_rng_chance(&r, 0.3);
        pm_spline s;
        cr_assert_eq(pm_spline_init(a, &s, pts, np, closed, PM_CURVE_CATMULL_ROM, 0.5), PM_OK);
        pm_sample_opts o = {.max_error = errs[iter % 3], .max_segment = pm_rng_range(&r, 0.3, 30.0),
                            .max_turn = iter % 2 ? pm_rng_range(&r, 0.05, 0.6) : 0.0};
        pm_curve_sample *smp, *again;
        size_t n, n2;
        cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_OK);
        cr_assert_eq(pm_spline_sample(b, &s, &o, &again, &n2), PM_OK);
        cr_assert_eq(n, n2);
        for (size_t i = 0; i < n; i++)   /* field by field: the struct has padding */
            cr_assert(smp[i].t == again[i].t && memcmp(smp[i].p, again[i].p, sizeof smp[i].p) == 0 &&
                          smp[i].err == again[i].err && smp[i].len == again[i].len &&
                          smp[i].err_exact == again[i].err_exact,
                      "iter %d: not deterministic", iter);
        cr_assert_eq(smp[0].t, 0.0);
        cr_assert_eq(smp[n - 1].t, (double)s.nseg);
        if (closed) cr_assert(memcmp(smp[0].p, smp[n - 1].p, sizeof smp[0].p) == 0);
        size_t ctl = 0;
        for (size_t i = 0; i < n; i++) {
            if (smp[i].t == floor(smp[i].t)) {
                size_t k = (size_t)smp[i].t % np;
                cr_assert_float_eq(dist3(smp[i].p, pts + 3 * k), 0.0, 1e-9);
                ctl++;
            }
            if (i == 0) continue;
            cr_assert_gt(smp[i].t, smp[i - 1].t);
            double len = dist3(smp[i - 1].p, smp[i].p);
            cr_assert_leq(len, o.max_segment * (1.0 + 1e-12), "iter %d: chord %g > %g", iter, len, o.max_segment);
            cr_assert_float_eq(smp[i].len, len, 1e-9 * (1.0 + len));
            if (o.max_turn > 0.0)
                cr_assert_leq(plan_turn(&s, smp[i - 1].t, smp[i].t), o.max_turn + 1e-9, "iter %d", iter);
        }
        cr_assert_eq(ctl, s.nseg + 1);
        double ref = reference_error(&s, smp, n);
        cr_assert_leq(ref, o.max_error * (1.0 + 1e-9), "iter %d: error %g > %g", iter, ref, o.max_error);
        cr_assert_leq(pm_spline_sample_error(&s, &o, smp, n), o.max_error * (1.0 + 1e-9));
        pm_arena_reset(a);
        pm_arena_reset(b);
    }
    pm_arena_destroy(a);
    pm_arena_destroy(b);
}

/* A chord far longer than max_segment: the sample cap still stops the
 * k-way cut, and without a cap the pieces are the fewest that fit. */
Test(spline, long_chords_keep_the_sample_cap) {
    pm_arena *a = pm_arena_create(0);
    double pts[] = {0, 0, 0, 1e7, 0, 0};
    pm_spline s;
    pm_spline_init(a, &s, pts, 2, false, PM_CURVE_LINEAR, 0.5);
    pm_sample_opts o = {.max_error = 0.05, .max_segment = 1e-6, .max_samples = 1000};
    pm_curve_sample *smp;
    size_t n;
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_ERR_LIMIT);
    o.max_samples = 0;
    o.max_segment = 1e7 / 299999.5;   /* in one cut of 300000 pieces, not 2^19 */
    cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &n), PM_OK);
    cr_assert_eq(n, 300001);
    pm_arena_destroy(a);
}

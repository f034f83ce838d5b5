#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/spline.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"

/* pm_spline_sample accepts most chords on a closed-form bound of their
 * error: the curve's distance across the chord is v (1 - v) |A + B v| <=
 * g(v) = v (1 - v) (ga + d v), ga = |A|, d = |A + B| - |A|, and its peak
 * is at the root in [0, 1] of g'. Before session 9's fix that root came
 * from the textbook quadratic formula, which cancels when d is a few ulp
 * of ga (|A| and |A + B| equal but for rounding: a symmetric piece of an
 * arc): the bound came out 0 (or 0.22 ga) where the peak is 0.25 ga, and a
 * chord could be accepted far past max_error. These tests check the bound
 * against its definition and, independently of it, every accepted chord
 * against the curve. */

/* The peak of g over [0, 1] by brute force: a fine grid, then golden
 * section around the best grid point (g is smooth, one peak in [0, 1]). */
static double brute_peak(double ga, double d) {
    int best = 0;
    double gbest = -1.0;
    for (int i = 0; i <= 4096; i++) {
        double v = i / 4096.0, g = v * (1.0 - v) * (ga + d * v);
        if (g > gbest) gbest = g, best = i;
    }
    double lo = fmax(0.0, (best - 1) / 4096.0), hi = fmin(1.0, (best + 1) / 4096.0);
    for (int it = 0; it < 200; it++) {
        double m1 = lo + (hi - lo) * 0.381966, m2 = hi - (hi - lo) * 0.381966;
        double g1 = m1 * (1.0 - m1) * (ga + d * m1), g2 = m2 * (1.0 - m2) * (ga + d * m2);
        if (g1 < g2) lo = m1;
        else hi = m2;
        gbest = fmax(gbest, fmax(g1, g2));
    }
    return gbest;
}

/* The bound must be the peak: never below it (a chord past max_error
 * accepted), and not far above it (a bound that overshoots wastes vertices). */
static void check_peak(double ga, double d) {
    double got = pm_spline_bump_peak(ga, d), want = brute_peak(ga, d);
    double slack = 1e-12 * (ga + fabs(d));
    cr_assert(got >= want - slack && got <= want * (1.0 + 1e-9) + slack,
              "ga %.17g d %.17g: bound %.17g, peak %.17g", ga, d, got, want);
}

Test(spline_bound, the_peak_where_the_quadratic_formula_cancels) {
    /* The cases the session-9 sampler report named: |A + B| one ulp or
     * less from |A|: the old formula gave 0 and 0.222. */
    check_peak(1.0, ldexp(1.0, -54));
    check_peak(1.0, ldexp(1.0, -52));
    check_peak(1.0, -ldexp(1.0, -53));
    check_peak(1.0, ldexp(1.0, -40));
    check_peak(1.0, 0.0);
    check_peak(3.7e-3, 3.7e-3 * ldexp(1.0, -51));
    check_peak(2.5e4, -2.5e4 * ldexp(1.0, -50));
    cr_assert_eq(pm_spline_bump_peak(0.0, 0.0), 0.0);
    /* And everywhere else: d from -ga (the curve leaves the chord only at
     * the start) to far past ga (only at the end). */
    pm_rng r;
    pm_rng_seed(&r, 14);
    for (int i = 0; i < 20000; i++) {
        double ga = pow(10.0, pm_rng_range(&r, -8.0, 6.0));
        double d;
        switch (pm_rng_below(&r, 4)) {
        case 0: d = ga * ldexp(pm_rng_range(&r, -8.0, 8.0), -52); break;   /* a few ulp */
        case 1: d = ga * pm_rng_range(&r, -1.0, 1.0) * pow(10.0, pm_rng_range(&r, -15.0, 0.0)); break;
        case 2: d = ga * pm_rng_range(&r, -1.0, 0.0); break;
        default: d = ga * pow(10.0, pm_rng_range(&r, -3.0, 6.0)); break;
        }
        check_peak(ga, d);
        check_peak(0.0, fabs(d));   /* the curve leaves the chord only near its end */
    }
}

/* Distance from p to segment a b. */
static double seg_dist(const double a[3], const double b[3], const double p[3]) {
    double ab[3], ap[3], l2 = 0.0, dot = 0.0;
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ap[k] = p[k] - a[k];
        l2 += ab[k] * ab[k];
        dot += ab[k] * ap[k];
    }
    double s = l2 > 0.0 ? fmin(1.0, fmax(0.0, dot / l2)) : 0.0, q = 0.0;
    for (int k = 0; k < 3; k++) {
        double e = ap[k] - s * ab[k];
        q += e * e;
    }
    return sqrt(q);
}

/* Control points of a road-like curve: arcs sampled as evenly spaced
 * points on circles (every Catmull-Rom segment inside one is symmetric,
 * and so is the middle piece of an odd cut of it), straights, near-straight
 * pieces, with or without heights. */
static size_t arc_points(pm_rng *r, double *pts, size_t max, double *sagitta) {
    size_t n = 0;
    double x = pm_rng_range(r, -500.0, 500.0), z = pm_rng_range(r, -500.0, 500.0);
    double heading = pm_rng_range(r, 0.0, 6.283), y = 0.0;
    bool flat = pm_rng_below(r, 3) != 0;
    pts[0] = x, pts[1] = 0.0, pts[2] = z;
    n = 1;
    if (pm_rng_below(r, 2) == 0) {   /* one arc, evenly spaced points on a circle: symmetric segments */
        double R = pow(10.0, pm_rng_range(r, 0.5, 3.5)), step = pm_rng_range(r, 0.01, 0.5);
        /* About the origin, half of them: rounding then leaves |A| and
         * |A + B| of a segment within an ulp or two of each other. */
        bool origin = pm_rng_below(r, 2) == 0;
        double cx = origin ? 0.0 : x, cz = origin ? 0.0 : z, y0 = flat ? 0.0 : pm_rng_range(r, -50.0, 50.0);
        for (n = 0; n < max; n++) {
            double ang = heading + step * (double)n;
            pts[3 * n] = cx + R * cos(ang), pts[3 * n + 1] = y0, pts[3 * n + 2] = cz + R * sin(ang);
        }
        *sagitta = R * (1.0 - cos(0.5 * step));   /* of one segment's chord */
        return n;
    }
    while (n < max) {
        uint32_t kind = pm_rng_below(r, 4);
        double step = kind == 3 ? pm_rng_range(r, 0.5, 40.0) : 10.0 * (1 + pm_rng_below(r, 3));
        double turn = kind == 0 ? 0.0 : kind == 1 ? pm_rng_range(r, -1e-6, 1e-6)
                    : (pm_rng_below(r, 2) ? 1.0 : -1.0) * step / pm_rng_range(r, 20.0, 400.0);
        int count = 1 + (int)pm_rng_below(r, 8);
        for (int i = 0; i < count && n < max; i++, n++) {
            heading += turn;
            x += step * cos(heading);
            z += step * sin(heading);
            if (!flat) y += pm_rng_range(r, -0.5, 0.5);
            pts[3 * n] = x, pts[3 * n + 1] = y, pts[3 * n + 2] = z;
        }
    }
    return n;
}

/* The independent check: every chord pm_spline_sample accepted within
 * max_error (its recorded error at most max_error: the depth limit may
 * accept worse and says so), probed at 2,000 interior points for its true
 * distance to the curve. A bound-accepted chord's recorded error must
 * hold; a probed one may miss a peak between its probes, by little. The
 * slack allows only rounding: 1e-9 relative, and 1e-12 of the coordinates'
 * size. Returns the worst ratio of true error to max_error seen. */
static double oracle(uint64_t seed, int cases, long *chords) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    pm_arena *a = pm_arena_create(0);
    static double pts[3 * 48];
    double worst = 0.0;
    for (int c = 0; c < cases; c++) {
        pm_arena_reset(a);
        double sagitta = 0.0;
        size_t n = arc_points(&r, pts, 4 + pm_rng_below(&r, 21), &sagitta);
        double alphas[] = {0.0, 0.5, 1.0};
        pm_spline s;
        cr_assert_eq(pm_spline_init(a, &s, pts, n, false, PM_CURVE_CATMULL_ROM, alphas[pm_rng_below(&r, 3)]),
                     PM_OK);
        pm_sample_opts o = {0};
        o.max_error = pow(10.0, pm_rng_range(&r, -3.5, -0.5));
        o.max_segment = pm_rng_below(&r, 3) == 0 ? 1000.0 : pm_rng_range(&r, 1.0, 15.0);
        if (pm_rng_below(&r, 2)) o.max_turn = pm_rng_range(&r, 0.05, 0.5);
        if (sagitta > 0.0 && pm_rng_below(&r, 4)) {
            /* A whole segment's chord just past max_error, and neither too
             * long nor turning too much: the bound alone must split it. */
            o.max_error = sagitta * pm_rng_range(&r, 0.3, 1.0);
            o.max_segment = 1e4;
            o.max_turn = 0.0;
        }
        pm_curve_sample *smp;
        size_t ns = 0;
        cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &ns), PM_OK, "case %d", c);
        for (size_t i = 0; i + 1 < ns; i++) {
            const pm_curve_sample *c0 = &smp[i], *c1 = &smp[i + 1];
            if (!(c1->err <= o.max_error)) continue;
            double size = fmax(fabs(c0->p[0]) + fabs(c0->p[2]), 1.0), e = 0.0;
            for (int k = 1; k < 2000; k++) {
                double p[3];
                pm_spline_point(&s, &o, c0->t + (c1->t - c0->t) * (k / 2000.0), p);
                e = fmax(e, seg_dist(c0->p, c1->p, p));
            }
            double limit = o.max_error * (1.0 + 1e-9) + 1e-12 * size;
            cr_assert(e <= limit,
                      "seed %llu case %d: chord %zu [%.17g, %.17g] is %.9g from the curve, max_error %.9g"
                      " (recorded %.9g, %s)",
                      (unsigned long long)seed, c, i, c0->t, c1->t, e, o.max_error, c1->err,
                      c1->err_exact ? "exact" : "probed");
            worst = fmax(worst, e / o.max_error);
            (*chords)++;
        }
    }
    pm_arena_destroy(a);
    return worst;
}

Test(spline_bound, every_accepted_chord_is_within_max_error) {
    long chords = 0;
    double worst = fmax(oracle(1, 400, &chords), oracle(20261202, 400, &chords));
    cr_assert_gt(chords, 20000, "%ld chords probed", chords);
    cr_log_info("%ld chords probed, worst %.6f of max_error", chords, worst);
    cr_assert_gt(worst, 0.5, "the probes found nothing near max_error (%g): they do not probe", worst);
}

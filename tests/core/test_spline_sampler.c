#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/spline.h"
#include "geom/terrain.h"
#include "pm_test_spline_ref.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"

/* pm_spline_sample evaluates chords four at a time (one per SIMD lane)
 * and walks the subdivision without the plain sampler's per-call state;
 * its samples must be the plain one's bit for bit: every t, point,
 * error, length and exactness flag, and the same result code, from both
 * builds of its lane code (AVX and plain x86-64). The plain sampler is
 * kept in tests/support/spline_ref.c. */

/* The first difference between two samplings, or -1 when they are the
 * same bits; *what names the field. */
static long first_difference(const pm_curve_sample *a, const pm_curve_sample *b, size_t n,
                             const char **what) {
    for (size_t i = 0; i < n; i++) {
        *what = "t";
        if (memcmp(&a[i].t, &b[i].t, sizeof a[i].t)) return (long)i;
        *what = "p";
        if (memcmp(a[i].p, b[i].p, sizeof a[i].p)) return (long)i;
        *what = "err";
        if (memcmp(&a[i].err, &b[i].err, sizeof a[i].err)) return (long)i;
        *what = "len";
        if (memcmp(&a[i].len, &b[i].len, sizeof a[i].len)) return (long)i;
        *what = "err_exact";
        if (a[i].err_exact != b[i].err_exact) return (long)i;
    }
    return -1;
}

/* Control points of one of several families: a wandering walk (gentle or
 * tight turns), a road of straights and arcs, near-duplicate points, huge
 * or tiny coordinates, flat or with heights. Consecutive points (and the
 * last and first) stay distinct in plan, as the parser guarantees. */
static size_t random_points(pm_rng *r, double *pts, size_t max, bool closed) {
    size_t n = (closed ? 3 : 2) + (size_t)pm_rng_below(r, max - (closed ? 2 : 1));
    uint32_t family = pm_rng_below(r, 6);
    double scale = 1.0, off = 0.0;
    if (family == 3) scale = pow(10.0, pm_rng_range(r, -6.0, -2.0));   /* tiny */
    if (family == 4) off = pow(10.0, pm_rng_range(r, 5.0, 12.0));      /* far from the origin */
    bool flat = pm_rng_below(r, 2) == 0;
    double x = 0.0, z = 0.0, y = 0.0, heading = pm_rng_range(r, 0.0, 6.283);
    for (size_t i = 0; i < n; i++) {
        pts[3 * i] = off + scale * x;
        pts[3 * i + 1] = flat ? 0.0 : scale * y;
        pts[3 * i + 2] = off * 0.5 + scale * z;
        double step;
        switch (family) {
        case 0: step = pm_rng_range(r, 1.0, 60.0); heading += pm_rng_range(r, -0.4, 0.4); break;
        case 1: step = pm_rng_range(r, 0.5, 5.0); heading += pm_rng_range(r, -2.8, 2.8); break;
        case 2:   /* straights of 10 m and 100 m arcs, as a road */
            step = 10.0;
            if (pm_rng_below(r, 3) == 0) heading += 0.1 * (pm_rng_below(r, 2) ? 1.0 : -1.0);
            break;
        case 5: step = pm_rng_below(r, 3) ? pm_rng_range(r, 1e-9, 1e-5) : pm_rng_range(r, 1.0, 30.0);
                heading += pm_rng_range(r, -2.0, 2.0); break;
        default: step = pm_rng_range(r, 1.0, 40.0); heading += pm_rng_range(r, -1.5, 1.5); break;
        }
        x += step * cos(heading);
        z += step * sin(heading);
        y += pm_rng_range(r, -3.0, 3.0) * (family == 5 ? 1e-3 : 1.0);
    }
    if (closed) {   /* keep the closing chord distinct in plan too */
        double *l = pts + 3 * (n - 1);
        if (l[0] == pts[0] && l[2] == pts[2]) l[0] += 1.0;
    }
    return n;
}

/* Sampling options across the ranges the road and network parsers allow
 * and past them: errors from 1e-6 to 10, segments from 0.05 m to 1 km,
 * turns off or on, sample caps that are sometimes hit. */
static void random_opts(pm_rng *r, pm_sample_opts *o, const pm_heightfield *hf) {
    memset(o, 0, sizeof *o);
    o->max_error = pow(10.0, pm_rng_range(r, -6.0, 1.0));
    o->max_segment = pm_rng_below(r, 4) == 0 ? 1000.0 : pow(10.0, pm_rng_range(r, -1.3, 2.5));
    if (pm_rng_below(r, 4)) o->max_turn = pm_rng_range(r, 0.02, 1.0);
    if (pm_rng_below(r, 5) == 0) o->max_samples = 2 + pm_rng_below(r, 400);
    if (hf && pm_rng_below(r, 4) == 0) {   /* draped, with or without the bound */
        o->height = pm_heightfield_height;
        o->height_ctx = hf;
        if (pm_rng_below(r, 3)) o->height_bound = pm_heightfield_chord_bound;
    }
    if (o->max_error < 1e-4 || o->max_segment < 0.2)
        if (!o->max_samples) o->max_samples = 200000;   /* keep each case fast */
}

static void compare_on_random_splines(uint64_t seed, int cases) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    pm_arena *a = pm_arena_create(0), *ground = pm_arena_create(0);
    pm_heightfield hf = {.origin = {-300.0, -300.0}, .cell = 7.0, .cols = 90, .rows = 90};
    pm_noise noise = {.seed = seed, .amplitude = 6.0, .wavelength = 120.0, .octaves = 3};
    cr_assert_eq(pm_heightfield_from_noise(ground, &hf, &noise, NULL), PM_OK);
    static double pts[3 * 40];
    long compared = 0;
    for (int c = 0; c < cases; c++) {
        pm_arena_reset(a);
        bool closed = pm_rng_below(&r, 4) == 0;
        size_t n = random_points(&r, pts, 40, closed);
        pm_curve_kind kind = pm_rng_below(&r, 5) == 0 ? PM_CURVE_LINEAR : PM_CURVE_CATMULL_ROM;
        double alphas[] = {0.0, 0.5, 1.0, pm_rng_range(&r, 0.0, 1.0)};
        double alpha = alphas[pm_rng_below(&r, 4)];
        pm_spline s;
        cr_assert_eq(pm_spline_init(a, &s, pts, n, closed, kind, alpha), PM_OK);
        pm_sample_opts o;
        random_opts(&r, &o, pts[0] > -300.0 && pts[0] < 300.0 ? &hf : NULL);
        pm_curve_sample *fast, *plain;
        size_t nf = 0, np = 0;
        int rp = pm_test_spline_sample_ref(a, &s, &o, &plain, &np);
        /* both builds of the lane code: the one this CPU runs, and plain x86-64 */
        for (int build = 0; build < 2; build++) {
            int rf = build ? pm_spline_sample_plain_lanes(a, &s, &o, &fast, &nf)
                           : pm_spline_sample(a, &s, &o, &fast, &nf);
            cr_assert_eq(rf, rp, "case %d (seed %llu, build %d): result %d, plain %d", c,
                         (unsigned long long)seed, build, rf, rp);
            if (rf != PM_OK) continue;
            cr_assert_eq(nf, np, "case %d (seed %llu, build %d): %zu samples, plain %zu", c,
                         (unsigned long long)seed, build, nf, np);
            const char *what = "";
            long i = first_difference(fast, plain, nf, &what);
            cr_assert_eq(i, -1, "case %d (seed %llu, build %d): sample %ld differs in %s", c,
                         (unsigned long long)seed, build, i, what);
            compared += (long)nf;
        }
    }
    cr_assert_gt(compared, 10 * cases, "%ld samples compared", compared);
    pm_arena_destroy(ground);
    pm_arena_destroy(a);
}

Test(spline_sampler, matches_the_plain_sampler_bit_for_bit) {
    compare_on_random_splines(1, 1500);
    compare_on_random_splines(20261202, 1500);
}

/* The comparison above can fail: one ulp anywhere is a difference. */
Test(spline_sampler, the_comparison_sees_one_ulp) {
    pm_arena *a = pm_arena_create(0);
    double pts[] = {0, 0, 0, 30, 1, 10, 60, 0, 0, 90, 2, 25};
    pm_spline s;
    cr_assert_eq(pm_spline_init(a, &s, pts, 4, false, PM_CURVE_CATMULL_ROM, 0.5), PM_OK);
    pm_sample_opts o = {.max_error = 0.01, .max_segment = 5.0, .max_turn = 0.2};
    pm_curve_sample *fast, *plain;
    size_t nf, np;
    cr_assert_eq(pm_spline_sample(a, &s, &o, &fast, &nf), PM_OK);
    cr_assert_eq(pm_test_spline_sample_ref(a, &s, &o, &plain, &np), PM_OK);
    cr_assert_eq(nf, np);
    const char *what = "";
    cr_assert_eq(first_difference(fast, plain, nf, &what), -1);
    for (int field = 0; field < 4; field++) {
        double *v = field == 0 ? &fast[nf / 2].t : field == 1 ? &fast[nf / 2].p[2]
                  : field == 2 ? &fast[nf / 2].err : &fast[nf / 2].len;
        double keep = *v;
        *v = nextafter(*v, INFINITY);
        cr_assert_eq(first_difference(fast, plain, nf, &what), (long)(nf / 2), "field %d", field);
        *v = keep;
    }
    pm_arena_destroy(a);
}

/* pm_spline_init carries each segment's quotients to the next and
 * remembers powers by distance; its coefficients must be the formula's
 * (tests/support/spline_ref.c) bit for bit: on random curves of every
 * family above, and on ones made to stress the carrying and the memory of
 * powers: points revisited (the same spacing again and again, a closed
 * loop run twice), near-duplicates 1e-9 m apart, runs of equal spacing,
 * and hundreds of distinct distances (memory slots shared and replaced). */
static size_t stress_points(pm_rng *r, double *pts, size_t max, bool closed) {
    size_t n = (closed ? 3 : 2) + (size_t)pm_rng_below(r, max - (closed ? 2 : 1));
    uint32_t family = pm_rng_below(r, 4);
    double x = 0.0, z = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (family == 0 && i >= 4 && pm_rng_below(r, 3) == 0) {   /* back to an earlier point */
            size_t j = (size_t)pm_rng_below(r, (uint32_t)(i - 2));
            memcpy(pts + 3 * i, pts + 3 * j, 3 * sizeof(double));
            if (pts[3 * i] == pts[3 * i - 3] && pts[3 * i + 2] == pts[3 * i - 1]) pts[3 * i] += 1.0;
            x = pts[3 * i];
            z = pts[3 * i + 2];
            continue;
        }
        pts[3 * i] = x;
        pts[3 * i + 1] = pm_rng_below(r, 2) ? 0.0 : pm_rng_range(r, -5.0, 5.0);
        pts[3 * i + 2] = z;
        double step = family == 1 ? (pm_rng_below(r, 2) ? 1e-9 : pm_rng_range(r, 0.5, 20.0))
                      : family == 2 ? 10.0 : pm_rng_range(r, 0.1, 50.0);
        double heading = family == 2 ? 0.1 * (double)pm_rng_below(r, 4) : pm_rng_range(r, 0.0, 6.283);
        x += step * cos(heading);
        z += step * sin(heading);
    }
    if (closed) {
        double *l = pts + 3 * (n - 1);
        if (l[0] == pts[0] && l[2] == pts[2]) l[0] += 1.0;
    }
    return n;
}

Test(spline_init, matches_the_formula_bit_for_bit) {
    pm_rng r;
    pm_rng_seed(&r, 77);
    pm_arena *a = pm_arena_create(0);
    static double pts[3 * 600];
    long segments = 0;
    for (int c = 0; c < 4000; c++) {
        pm_arena_reset(a);
        bool closed = pm_rng_below(&r, 4) == 0;
        size_t n = c % 2 ? random_points(&r, pts, 40, closed) : stress_points(&r, pts, c % 10 ? 40 : 600, closed);
        pm_curve_kind kind = pm_rng_below(&r, 6) == 0 ? PM_CURVE_LINEAR : PM_CURVE_CATMULL_ROM;
        double alphas[] = {0.0, 0.5, 1.0, pm_rng_range(&r, 0.0, 1.0)};
        double alpha = alphas[pm_rng_below(&r, 4)];
        pm_spline s, ref;
        cr_assert_eq(pm_spline_init(a, &s, pts, n, closed, kind, alpha), PM_OK);
        cr_assert_eq(pm_test_spline_init_ref(a, &ref, pts, n, closed, kind, alpha), PM_OK);
        cr_assert(s.nseg == ref.nseg && s.npoints == ref.npoints && s.closed == ref.closed && s.kind == ref.kind);
        for (uint32_t i = 0; i < s.nseg; i++)
            cr_assert(memcmp(s.coef[i], ref.coef[i], sizeof s.coef[i]) == 0,
                      "case %d: segment %u of %u (n %zu, closed %d, alpha %g) differs", c, i, s.nseg, n,
                      closed, alpha);
        segments += s.nseg;
    }
    cr_assert_gt(segments, 100000, "%ld segments compared", segments);
    pm_arena_destroy(a);
}

/* Control points along one line with sideways jitter of 0 to 1e-3 m (0:
 * a network street, two points or more), far from the origin or not,
 * sloped or flat: the segments pm__lean_cert certifies, and ones just
 * past it. */
static size_t straight_points(pm_rng *r, double *pts, size_t max) {
    size_t n = 2 + (pm_rng_below(r, 2) ? 0 : (size_t)pm_rng_below(r, (uint32_t)max - 1));
    double off = pm_rng_below(r, 3) ? pm_rng_range(r, -5000.0, 5000.0) : pow(10.0, pm_rng_range(r, 4.0, 9.0));
    double h = pm_rng_range(r, 0.0, 6.283), jit = pm_rng_below(r, 3) ? 0.0 : pow(10.0, pm_rng_range(r, -12.0, -3.0));
    double slope = pm_rng_below(r, 2) ? 0.0 : pm_rng_range(r, -0.2, 0.2), s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double side = jit * pm_rng_range(r, -1.0, 1.0);
        pts[3 * i] = off + s * cos(h) - side * sin(h);
        pts[3 * i + 1] = slope * s;
        pts[3 * i + 2] = -off + s * sin(h) + side * cos(h);
        s += pm_rng_range(r, 0.5, 150.0);
    }
    return n;
}

/* With no_err the sampler may take a split chord's pieces by their
 * lengths alone (pm__lean_cert): every field but err must be as without
 * it (err may only become 0), from both builds, on straight streets,
 * near-straight and bent curves and the random families above; and the
 * lean path must have run. Breaking its certificate (a bound or the turn
 * test left out) fails this. */
Test(spline_sampler, no_err_changes_nothing_but_err) {
    pm_rng r;
    pm_rng_seed(&r, 1414);
    pm_arena *a = pm_arena_create(0);
    static double pts[3 * 40];
    long compared = 0, lean = 0;
    for (int c = 0; c < 6000; c++) {
        pm_arena_reset(a);
        bool line = c % 2 == 0;
        size_t n = line ? straight_points(&r, pts, 12) : random_points(&r, pts, 40, false);
        double alphas[] = {0.0, 0.5, 1.0, pm_rng_range(&r, 0.0, 1.0)};
        pm_spline s;
        cr_assert_eq(pm_spline_init(a, &s, pts, n, false, PM_CURVE_CATMULL_ROM, alphas[pm_rng_below(&r, 4)]), PM_OK);
        pm_sample_opts o;
        random_opts(&r, &o, NULL);
        if (line && pm_rng_below(&r, 2)) o.max_segment = pm_rng_range(&r, 0.5, 10.0);   /* many pieces */
        if (c % 3 == 0) o.max_turn = 0.2;   /* the roads' bound */
        pm_curve_sample *plain, *fast;
        size_t np = 0, nf = 0;
        int rp = pm_spline_sample(a, &s, &o, &plain, &np);
        o.no_err = true;
        for (int build = 0; build < 2; build++) {
            int rf = build ? pm_spline_sample_plain_lanes(a, &s, &o, &fast, &nf) : pm_spline_sample(a, &s, &o, &fast, &nf);
            cr_assert_eq(rf, rp, "case %d build %d: result %d, without no_err %d", c, build, rf, rp);
            if (rf != PM_OK) continue;
            cr_assert_eq(nf, np, "case %d build %d: %zu samples, without no_err %zu", c, build, nf, np);
            for (size_t i = 0; i < nf; i++) {
                cr_assert(memcmp(&fast[i].t, &plain[i].t, sizeof fast[i].t) == 0 &&
                              memcmp(fast[i].p, plain[i].p, sizeof fast[i].p) == 0 &&
                              memcmp(&fast[i].len, &plain[i].len, sizeof fast[i].len) == 0 &&
                              fast[i].err_exact == plain[i].err_exact,
                          "case %d build %d: sample %zu differs", c, build, i);
                cr_assert(fast[i].err == plain[i].err || fast[i].err == 0.0, "case %d: sample %zu's err", c, i);
                lean += build == 0 && fast[i].err != plain[i].err;
            }
            compared += (long)nf;
        }
    }
    cr_assert_gt(compared, 100000, "%ld samples compared", compared);
    cr_assert_gt(lean, 10000, "%ld samples taken by the lean path", lean);
    pm_arena_destroy(a);
}

/* road_frame.c's level shortcuts in pm__quad_frame: where the four
 * lanes' R x T has zero x and z (a level tangent), its normalization is
 * (u0, +-1, u2) without the square root and divisions (pm__level_up); and
 * where T is level and of length 1 in every lane, R's length is T's.
 * Checked two ways: the fast sections equal the plain ones (x->plain:
 * pm__frame one section at a time, pm_v3_normalize) bit for bit on
 * thousands of random level roads (every point's height +0, -0 or one
 * constant, open and closed, Catmull-Rom and linear, unbanked and banked,
 * on and off the axes), and the fact the first proof rests on,
 * sqrt(RN(x * x)) = |x| in binary64 where x * x is normal, on random x
 * (every exponent of the range, significands near 1, sqrt 2 and 2). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "road/road_internal.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"

static void level_params(pm_arena *a, pm_rng *g, pm_road_params *p) {
    pm_road_params_default(p);
    size_t n = 2 + pm_rng_below(g, 40);
    bool closed = n >= 3 && pm_rng_chance(g, 0.25);
    double *pts = pm_arena_alloc(a, 3 * n * sizeof(double));
    cr_assert(pts);
    double h = pm_rng_unit(g) * 6.28, x = pm_rng_range(g, -1e4, 1e4), z = pm_rng_range(g, -1e4, 1e4);
    double R = pm_rng_range(g, 12.0, 300.0);
    /* one height for all: +0, -0 or a constant (a level road off the ground) */
    int kind = (int)pm_rng_below(g, 4);
    double y = kind == 0 ? 0.0 : kind == 1 ? -0.0 : kind == 2 ? pm_rng_range(g, -50.0, 50.0) : 0.0;
    bool axis = pm_rng_chance(g, 0.2), sharp = pm_rng_chance(g, 0.3);
    for (size_t i = 0; i < n; i++) {
        if (closed) {
            double t = 6.283185307179586 * (double)i / (double)n + pm_rng_range(g, -0.2, 0.2);
            x = R * pm_rng_range(g, 0.7, 1.3) * cos(t);
            z = R * pm_rng_range(g, 0.7, 1.3) * sin(t);
        }
        pts[3 * i] = x;
        pts[3 * i + 1] = kind == 3 ? (pm_rng_chance(g, 0.5) ? -0.0 : 0.0) : y;
        pts[3 * i + 2] = z;
        h += sharp ? pm_rng_range(g, -2.8, 2.8) : pm_rng_range(g, -0.3, 0.3);
        if (axis) h = 1.5707963267948966 * (double)pm_rng_below(g, 4);   /* exact zeros in x or z */
        double len = axis ? (double)(1 + pm_rng_below(g, 30)) : pm_rng_range(g, 0.5, 40.0);
        x += axis ? len * (double)((int)lround(cos(h))) : len * cos(h);
        z += axis ? len * (double)((int)lround(sin(h))) : len * sin(h);
    }
    p->points = pts;
    p->npoints = n;
    p->closed = closed;
    if (pm_rng_chance(g, 0.2)) p->curve = PM_CURVE_LINEAR;
    p->width = pm_rng_range(g, 2.0, 16.0);
    p->shoulder = pm_rng_chance(g, 0.5) ? 0.0 : pm_rng_range(g, 0.1, 4.0);
    static const double errs[] = {0.00125, 0.01, 0.05, 0.2, 1.0};
    p->max_error = errs[pm_rng_below(g, 5)];
    static const double segs[] = {0.7, 2.0, 5.0, 20.0, 1000.0};
    p->max_segment = segs[pm_rng_below(g, 5)];
    if (pm_rng_chance(g, 0.15)) {   /* banked: the two-pass lanes (pm__quad_banked_frame) */
        p->bank_max_degrees = pm_rng_range(g, 1.0, 45.0);
        p->bank_radius = pm_rng_range(g, 0.0, 100.0);
        p->bank_transition = pm_rng_chance(g, 0.3) ? 0.0 : pm_rng_range(g, 1.0, 40.0);
    }
}

Test(road_frame_level, level_sections_equal_the_plain_ones) {
    pm_rng g;
    pm_rng_seed(&g, 20261203);
    long sections = 0, level = 0;
    for (int trial = 0; trial < 4000; trial++) {
        pm_arena *a = pm_arena_create(0);
        cr_assert(a);
        pm_road_params p;
        level_params(a, &g, &p);
        pm__ctx x = {.a = a, .p = &p, .budget = UINT64_MAX};
        cr_assert_eq(pm_spline_init(a, &x.spline, p.points, p.npoints, p.closed, p.curve, p.alpha), PM_OK);
        pm_sample_opts o = {.max_error = p.max_error, .max_segment = p.max_segment, .max_samples = 200000};
        pm_curve_sample *smp = NULL;
        size_t n = 0;
        cr_assert_eq(pm_spline_sample(a, &x.spline, &o, &smp, &n), PM_OK);
        pm__level Lf, Lp;
        memset(&Lf, 0, sizeof Lf);
        memset(&Lp, 0, sizeof Lp);
        x.plain = false;
        cr_assert_eq(pm__road_sections(&x, &Lf, smp, n), PM_OK);
        x.plain = true;
        cr_assert_eq(pm__road_sections(&x, &Lp, smp, n), PM_OK);
        cr_assert_eq(Lf.n, Lp.n);
        for (size_t i = 0; i < n; i++) {
            const pm__section *f = &Lf.sec[i], *q = &Lp.sec[i];
#define PM__SAME(field) \
    cr_assert_eq(memcmp(&f->field, &q->field, sizeof f->field), 0, "trial %d section %zu: " #field, trial, i)
            PM__SAME(t);
            PM__SAME(s);
            PM__SAME(c);
            PM__SAME(tan);
            PM__SAME(r);
            PM__SAME(up);
            PM__SAME(right);
            PM__SAME(kappa);
            PM__SAME(bank);
            PM__SAME(clamp);
#undef PM__SAME
            sections++;
            level += f->tan[1] == 0.0;
        }
        pm_arena_destroy(a);
    }
    /* The roads were level (the shortcut's case), and many. */
    cr_assert_gt(sections, 100000);
    cr_assert_gt(level, sections * 9 / 10);
}

Test(road_frame_level, sqrt_of_a_rounded_square_is_the_magnitude) {
    pm_rng g;
    pm_rng_seed(&g, 1414);
    for (int it = 0; it < 2000000; it++) {
        double m;
        switch (pm_rng_below(&g, 4)) {
        case 0: m = pm_rng_range(&g, 1.0, 2.0); break;
        case 1: m = 1.0 + ldexp(pm_rng_unit(&g), -(int)pm_rng_int(&g, 1, 52)); break;   /* near 1 */
        case 2: m = nextafter(2.0, 0.0) - ldexp(pm_rng_unit(&g), -(int)pm_rng_int(&g, 1, 52)); break;   /* near 2 */
        default: m = 1.4142135623730951 * (1.0 + ldexp(pm_rng_range(&g, -1.0, 1.0), -(int)pm_rng_int(&g, 20, 53)));
        }
        double x = ldexp(m, (int)pm_rng_int(&g, -500, 500));
        if (pm_rng_chance(&g, 0.5)) x = -x;
        double s = sqrt(x * x), ax = fabs(x);
        cr_assert_eq(memcmp(&s, &ax, sizeof s), 0, "sqrt(%a^2) = %a", x, s);
    }
}

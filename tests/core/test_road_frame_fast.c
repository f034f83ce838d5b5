/* road_frame.c: the fast sections of pm__road_sections (an unbanked road's
 * one pass, a banked or rolled road's two passes, both four sections at a
 * time in lanes, the bank's smoothing window found by cursors) equal the
 * plain two-pass ones (x->plain: one section at a time, the library's
 * hypot, binary searches) bit for bit, field by field, on thousands of
 * random roads: open and closed, Catmull-Rom and linear (mitred corners),
 * flat and hilly, tiny and long chords, on terrain (drape, bank, terrain
 * up), banked or rolled; and on thousands of level roads (every point's
 * height +0, -0 or one constant), where pm__quad_frame's level shortcuts
 * run: R x T with zero x and z normalized as (u0, +-1, u2) without the
 * square root and divisions (pm__level_up), and R's length taken as a
 * level unit T's. The fact the first rests on, sqrt(RN(x * x)) = |x| in
 * binary64 where x * x is normal, is checked on random x. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/hypot4.h"
#include "pm_test_road.h"
#include "road/road_internal.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"

/* A random road; level: every point at one height (+0, -0, a constant,
 * or +0 and -0 mixed), longer, on no terrain and with no roll. */
static void random_params(pm_arena *a, pm_rng *g, pm_road_params *p, bool level) {
    pm_road_params_default(p);
    size_t n = 2 + pm_rng_below(g, level ? 40 : 14);
    bool closed = n >= 3 && pm_rng_chance(g, 0.25);
    double *pts = pm_arena_alloc(a, 3 * n * sizeof(double));
    cr_assert(pts);
    double h = pm_rng_unit(g) * 6.28, x = 0.0, z = 0.0, R;
    int kind = 0;
    double y = 0.0;
    if (level) {
        x = pm_rng_range(g, -1e4, 1e4);
        z = pm_rng_range(g, -1e4, 1e4);
        R = pm_rng_range(g, 12.0, 300.0);
        kind = (int)pm_rng_below(g, 4);
        y = kind == 0 ? 0.0 : kind == 1 ? -0.0 : kind == 2 ? pm_rng_range(g, -50.0, 50.0) : 0.0;
    } else {
        R = pm_rng_range(g, 12.0, 120.0);
    }
    bool axis = pm_rng_chance(g, 0.2), sharp = pm_rng_chance(g, level ? 0.3 : 0.4);
    for (size_t i = 0; i < n; i++) {
        if (closed) {
            double t = 6.283185307179586 * (double)i / (double)n + pm_rng_range(g, -0.2, 0.2);
            x = R * pm_rng_range(g, 0.7, 1.3) * cos(t);
            z = R * pm_rng_range(g, 0.7, 1.3) * sin(t);
        }
        pts[3 * i] = x;
        if (level) pts[3 * i + 1] = kind == 3 ? (pm_rng_chance(g, 0.5) ? -0.0 : 0.0) : y;
        else pts[3 * i + 1] = pm_rng_chance(g, 0.5) ? pm_rng_range(g, -6.0, 6.0) : (pm_rng_chance(g, 0.5) ? -0.0 : 0.0);
        pts[3 * i + 2] = z;
        double turn = level ? 0.3 : 0.4;
        h += sharp ? pm_rng_range(g, -2.8, 2.8) : pm_rng_range(g, -turn, turn);
        if (axis) h = 1.5707963267948966 * (double)pm_rng_below(g, 4);   /* exact zeros in x or z */
        double len = axis ? (double)(1 + pm_rng_below(g, 30)) : pm_rng_range(g, 0.5, level ? 40.0 : 80.0);
        x += axis ? len * (double)((int)lround(cos(h))) : len * cos(h);
        z += axis ? len * (double)((int)lround(sin(h))) : len * sin(h);
    }
    p->points = pts;
    p->npoints = n;
    p->closed = closed;
    if (pm_rng_chance(g, level ? 0.2 : 0.3)) p->curve = PM_CURVE_LINEAR;
    p->width = pm_rng_range(g, 2.0, 16.0);
    p->shoulder = pm_rng_chance(g, 0.5) ? 0.0 : pm_rng_range(g, 0.1, 4.0);
    static const double errs[] = {0.00125, 0.01, 0.05, 0.2, 1.0};
    p->max_error = errs[pm_rng_below(g, 5)];
    static const double segs[] = {0.7, 2.0, 5.0, 20.0, 1000.0};
    p->max_segment = segs[pm_rng_below(g, 5)];
    if (pm_rng_chance(g, level ? 0.15 : 0.2)) {   /* banked: the two-pass paths */
        p->bank_max_degrees = pm_rng_range(g, 1.0, 45.0);
        p->bank_radius = pm_rng_range(g, 0.0, 100.0);
        p->bank_transition = pm_rng_chance(g, 0.3) ? 0.0 : pm_rng_range(g, 1.0, 40.0);
    }
    if (level) return;
    if (pm_rng_chance(g, 0.1)) {
        double *roll = pm_arena_alloc(a, n * sizeof(double));
        cr_assert(roll);
        for (size_t i = 0; i < n; i++) roll[i] = pm_rng_chance(g, 0.5) ? 0.0 : pm_rng_range(g, -10.0, 10.0);
        p->roll = roll;
    }
    if (pm_rng_chance(g, 0.3)) {
        pm_heightfield *hf = pm_test_terrain_under(a, g, pts, n);
        cr_assert(hf);
        p->terrain = hf;
        p->conform = pm_rng_chance(g, 0.5) ? PM_ROAD_DRAPE : PM_ROAD_BANK;
        p->up = pm_rng_chance(g, 0.4) ? PM_ROAD_UP_TERRAIN : PM_ROAD_UP_WORLD;
    }
}

/* Every field pm__road_sections sets (the pivots are set later, by the fans). */
static void same_section(const pm__section *f, const pm__section *q, int trial, size_t i) {
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
    PM__SAME(fan);
#undef PM__SAME
}

/* The road's sections both ways in a, equal field by field; the fast
 * ones in *Lf. Returns their count. */
static size_t sections_match(pm_arena *a, const pm_road_params *p, int trial, pm__level *Lf) {
    pm__ctx x = {.a = a, .p = p, .budget = UINT64_MAX};
    cr_assert_eq(pm_spline_init(a, &x.spline, p->points, p->npoints, p->closed, p->curve, p->alpha), PM_OK);
    pm_sample_opts o = {.max_error = p->max_error, .max_segment = p->max_segment, .max_samples = 200000};
    pm_curve_sample *smp = NULL;
    size_t n = 0;
    cr_assert_eq(pm_spline_sample(a, &x.spline, &o, &smp, &n), PM_OK);
    pm__level Lp;
    memset(Lf, 0, sizeof *Lf);
    memset(&Lp, 0, sizeof Lp);
    x.plain = false;
    cr_assert_eq(pm__road_sections(&x, Lf, smp, n), PM_OK);
    x.plain = true;
    cr_assert_eq(pm__road_sections(&x, &Lp, smp, n), PM_OK);
    cr_assert_eq(Lf->n, Lp.n);
    cr_assert_eq(Lf->closed, Lp.closed);
    cr_assert_eq(memcmp(&Lf->length, &Lp.length, sizeof Lf->length), 0);
    for (size_t i = 0; i < n; i++) same_section(&Lf->sec[i], &Lp.sec[i], trial, i);
    return n;
}

Test(road_frame_fast, fast_sections_equal_the_plain_ones) {
    pm_rng g;
    pm_rng_seed(&g, 20261202);
    int fast = 0, closed = 0, linear = 0, terrain = 0, zeros = 0, banked = 0, banked_closed = 0;
    for (int trial = 0; trial < 3000; trial++) {
        pm_arena *a = pm_arena_create(0);
        cr_assert(a);
        pm_road_params p;
        random_params(a, &g, &p, false);
        pm__level Lf;
        size_t n = sections_match(a, &p, trial, &Lf);
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) zeros += Lf.sec[i].r[k] == 0.0;
        bool unbanked = (p.terrain && p.conform == PM_ROAD_DRAPE) || (!(p.bank_max_degrees > 0.0) && !p.roll);
        fast += unbanked;
        closed += unbanked && p.closed;
        linear += unbanked && p.curve == PM_CURVE_LINEAR;
        terrain += unbanked && p.terrain;
        bool bank_on = false;   /* the two-pass path with some bank that is not +0.0 */
        for (size_t i = 0; i < n; i++) bank_on |= Lf.sec[i].bank != 0.0;
        banked += bank_on;
        banked_closed += bank_on && p.closed;
        pm_arena_destroy(a);
    }
    /* The fast paths ran on every kind of road, and met exact zeros. */
    cr_assert_gt(fast, 1500);
    cr_assert_gt(closed, 200);
    cr_assert_gt(linear, 300);
    cr_assert_gt(terrain, 300);
    cr_assert_gt(zeros, 1000);
    cr_assert_gt(banked, 400);
    cr_assert_gt(banked_closed, 60);
}

Test(road_frame_fast, level_sections_equal_the_plain_ones) {
    pm_rng g;
    pm_rng_seed(&g, 20261203);
    long sections = 0, level = 0;
    for (int trial = 0; trial < 4000; trial++) {
        pm_arena *a = pm_arena_create(0);
        cr_assert(a);
        pm_road_params p;
        random_params(a, &g, &p, true);
        pm__level Lf;
        size_t n = sections_match(a, &p, trial, &Lf);
        for (size_t i = 0; i < n; i++) level += Lf.sec[i].tan[1] == 0.0;
        sections += (long)n;
        pm_arena_destroy(a);
    }
    /* The roads were level (the shortcut's case), and many. */
    cr_assert_gt(sections, 100000);
    cr_assert_gt(level, sections * 9 / 10);
}

Test(road_frame_fast, sqrt_of_a_rounded_square_is_the_magnitude) {
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

/* geom/hypot4.h against the C library's hypot, bit for bit, lane by lane:
 * the lane copy of glibc's kernel, its ax + ay shortcut and its calls for
 * the rest. Magnitudes log-uniform over the whole double range and near
 * the ranges' edges (2^500, 2^-450, ratios 2^-50 and 2^-56), exact zeros
 * of both signs, equal magnitudes, subnormals, infinities, NaN, and pairs
 * like a road's derivatives (one tiny beside the other). */
static double random_magnitude(pm_rng *g) {
    switch (pm_rng_below(g, 8)) {
    case 0: return ldexp(pm_rng_range(g, 1.0, 2.0), (int)pm_rng_int(g, -1074, 1023));
    case 1: return ldexp(pm_rng_range(g, 1.0, 2.0), (int)pm_rng_int(g, 495, 515));
    case 2: return ldexp(pm_rng_range(g, 1.0, 2.0), (int)pm_rng_int(g, -470, -440));
    case 3: return pm_rng_chance(g, 0.5) ? 0.0 : ldexp((double)pm_rng_below(g, 1u << 20), -1074);
    default: return pm_rng_range(g, 0.0, 200.0);
    }
}

static double partner(pm_rng *g, double x) {
    switch (pm_rng_below(g, 6)) {
    case 0: return random_magnitude(g);
    case 1: return ldexp(x * pm_rng_range(g, 0.5, 2.0), -(int)pm_rng_int(g, 45, 62));   /* near the ratios */
    case 2: return x;
    case 3: return nextafter(x, INFINITY);
    case 4: return 0.0;
    default: return x * pm_rng_range(g, 0.0, 3.0);
    }
}

Test(road_frame_fast, hypot4_equals_hypot) {
    pm_rng g;
    pm_rng_seed(&g, 4142);
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p500, 0x1p511, 0x1p-450,
                                     0x1p-459, 0x1p-1074, 1.0, 0x1p-50, 0x1p-54, 0x1p-56, 3.0, 4.0};
    size_t ns = sizeof special / sizeof special[0];
    uint64_t lanes = 0, shortcut = 0;
    for (int it = 0; it < 400000; it++) {
        pm_d4 x, y;
        for (int j = 0; j < 4; j++) {
            if (it < 64) {   /* every pair of the specials */
                size_t k = (size_t)it * 4 + (size_t)j;
                x[j] = special[k % ns];
                y[j] = special[(k / ns) % ns];
            } else {
                double a = random_magnitude(&g), b = partner(&g, a);
                if (pm_rng_chance(&g, 0.5)) { double t = a; a = b; b = t; }
                x[j] = pm_rng_chance(&g, 0.5) ? -a : a;
                y[j] = pm_rng_chance(&g, 0.5) ? -b : b;
            }
        }
        pm_d4 h = pm_hypot4(x, y);
        for (int j = 0; j < 4; j++) {
            double want = hypot(x[j], y[j]), got = h[j];
            if (isnan(want)) cr_assert(isnan(got), "hypot(%a, %a): %a, not NaN", x[j], y[j], got);
            else cr_assert_eq(memcmp(&want, &got, sizeof want), 0, "hypot(%a, %a) = %a, lanes %a", x[j], y[j], want, got);
            double ax = fmax(fabs(x[j]), fabs(y[j])), ay = fmin(fabs(x[j]), fabs(y[j]));
            lanes += ax < 0x1p500 && ay > 0x1p-450 && ay > ax * 0x1p-50;
            shortcut += ax < 0x1p500 && ax > 0x1p-400 && ay <= ax * 0x1p-56;
        }
    }
    /* The lanes' own paths ran often (not only the library's calls). */
    cr_assert_gt(lanes, 400000);
    cr_assert_gt(shortcut, 100000);
}

/* Robust predicates: every sign must equal the sign of the exact
 * determinant, which an independent big-integer oracle computes here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "geom/predicates.h"
#include "scene/rng.h"

/* ---- oracle: 512-bit two's complement integers -------------------------- */

#define BN_WORDS 16
typedef struct bn { uint32_t w[BN_WORDS]; } bn;

static bn bn_from_i64(int64_t v) {
    bn r;
    uint64_t u = (uint64_t)v;
    r.w[0] = (uint32_t)u;
    r.w[1] = (uint32_t)(u >> 32);
    for (int i = 2; i < BN_WORDS; i++) r.w[i] = v < 0 ? 0xFFFFFFFFu : 0;
    return r;
}

static bn bn_add(bn a, bn b) {
    bn r;
    uint64_t carry = 0;
    for (int i = 0; i < BN_WORDS; i++) {
        uint64_t s = (uint64_t)a.w[i] + b.w[i] + carry;
        r.w[i] = (uint32_t)s;
        carry = s >> 32;
    }
    return r;
}

static bn bn_neg(bn a) {
    for (int i = 0; i < BN_WORDS; i++) a.w[i] = ~a.w[i];
    return bn_add(a, bn_from_i64(1));
}

static bn bn_sub(bn a, bn b) { return bn_add(a, bn_neg(b)); }

/* Product modulo 2^512: exact for signed values whose product fits. */
static bn bn_mul(bn a, bn b) {
    bn r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < BN_WORDS; i++) {
        uint64_t carry = 0;
        for (int j = 0; i + j < BN_WORDS; j++) {
            uint64_t t = (uint64_t)a.w[i] * b.w[j] + r.w[i + j] + carry;
            r.w[i + j] = (uint32_t)t;
            carry = t >> 32;
        }
    }
    return r;
}

static bn bn_shl(bn a, int k) {
    for (; k > 0; k--) a = bn_add(a, a);
    return a;
}

static int bn_sign(bn a) {
    if (a.w[BN_WORDS - 1] & 0x80000000u) return -1;
    for (int i = 0; i < BN_WORDS; i++)
        if (a.w[i]) return 1;
    return 0;
}

/* x = m * 2^e with odd m (or x == 0). */
static void dbl_parts(double x, int64_t *m, int *e) {
    if (x == 0.0) {
        *m = 0;
        *e = 0;
        return;
    }
    int ex;
    double f = frexp(x, &ex);
    *m = (int64_t)ldexp(f, 53);
    *e = ex - 53;
    while ((*m & 1) == 0) {
        *m /= 2;
        (*e)++;
    }
}

/* Integer coordinates: every input scaled by one common power of two. */
typedef struct scaled { bn v[8]; } scaled;

/* degree: how many coordinates the determinant multiplies together. */
static scaled scale_points(const double *xs, int n, int degree) {
    int64_t m[8];
    int e[8], emin = 100000, emax = -100000;
    cr_assert(n <= 8);
    for (int i = 0; i < n; i++) {
        dbl_parts(xs[i], &m[i], &e[i]);
        if (m[i] == 0) continue;
        if (e[i] < emin) emin = e[i];
        if (e[i] + 53 > emax) emax = e[i] + 53;
    }
    /* Differences up to 2^(emax-emin+1), multiplied degree at a time. */
    cr_assert(emax < emin || degree * (emax - emin + 1) + 4 < 511, "oracle range exceeded");
    scaled s;
    for (int i = 0; i < n; i++) s.v[i] = bn_shl(bn_from_i64(m[i]), m[i] ? e[i] - emin : 0);
    return s;
}

static int exact_orient(const double a[2], const double b[2], const double c[2]) {
    double xs[6] = {a[0], a[1], b[0], b[1], c[0], c[1]};
    scaled s = scale_points(xs, 6, 2);
    bn acx = bn_sub(s.v[0], s.v[4]), acy = bn_sub(s.v[1], s.v[5]);
    bn bcx = bn_sub(s.v[2], s.v[4]), bcy = bn_sub(s.v[3], s.v[5]);
    return bn_sign(bn_sub(bn_mul(acx, bcy), bn_mul(acy, bcx)));
}

static int exact_incircle(const double a[2], const double b[2], const double c[2],
                          const double d[2]) {
    double xs[8] = {a[0], a[1], b[0], b[1], c[0], c[1], d[0], d[1]};
    scaled s = scale_points(xs, 8, 4);
    bn dx[3], dy[3], lift[3];
    for (int i = 0; i < 3; i++) {
        dx[i] = bn_sub(s.v[2 * i], s.v[6]);
        dy[i] = bn_sub(s.v[2 * i + 1], s.v[7]);
        lift[i] = bn_add(bn_mul(dx[i], dx[i]), bn_mul(dy[i], dy[i]));
    }
    bn det = bn_from_i64(0);
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3, k = (i + 2) % 3;
        bn cross = bn_sub(bn_mul(dx[j], dy[k]), bn_mul(dx[k], dy[j]));
        det = bn_add(det, bn_mul(lift[i], cross));
    }
    return bn_sign(det);
}

static int sgn(double v) { return (v > 0) - (v < 0); }

static void check_orient(const double a[2], const double b[2], const double c[2]) {
    int want = exact_orient(a, b, c);
    int got = sgn(pm_orient2d(a, b, c));
    cr_assert_eq(got, want, "orient2d((%a,%a),(%a,%a),(%a,%a)) sign %d, exact %d", a[0], a[1],
                 b[0], b[1], c[0], c[1], got, want);
}

static void check_incircle(const double a[2], const double b[2], const double c[2],
                           const double d[2]) {
    int want = exact_incircle(a, b, c, d);
    int got = sgn(pm_incircle(a, b, c, d));
    cr_assert_eq(got, want, "incircle((%a,%a),(%a,%a),(%a,%a),(%a,%a)) sign %d, exact %d",
                 a[0], a[1], b[0], b[1], c[0], c[1], d[0], d[1], got, want);
}

/* ---- the oracle itself -------------------------------------------------- */

Test(predicates, oracle_agrees_with_int128) {
    pm_rng r;
    pm_rng_seed(&r, 7);
    for (int i = 0; i < 2000; i++) {
        double p[4][2];
        __int128 q[4][2];
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 2; j++) {
                q[k][j] = pm_rng_int(&r, -(1 << 20), 1 << 20);
                p[k][j] = (double)q[k][j];
            }
        __int128 o = (q[0][0] - q[2][0]) * (q[1][1] - q[2][1]) -
                     (q[0][1] - q[2][1]) * (q[1][0] - q[2][0]);
        cr_assert_eq(exact_orient(p[0], p[1], p[2]), (o > 0) - (o < 0));
    }
    double a[2] = {0x1p-30, 3.0}, b[2] = {0x1p40, -1.0}, c[2] = {0x1p-30, 5.0};
    /* Vertical line x = 2^-30 from a to c, b far right: clockwise. */
    cr_assert_eq(exact_orient(a, c, b), -1);
}

/* ---- orient2d ----------------------------------------------------------- */

Test(predicates, orient_basic_signs) {
    double a[2] = {0, 0}, b[2] = {1, 0}, c[2] = {0, 1}, d[2] = {2, 0};
    cr_assert_gt(pm_orient2d(a, b, c), 0);
    cr_assert_lt(pm_orient2d(a, c, b), 0);
    cr_assert_eq(pm_orient2d(a, b, d), 0);
    cr_assert_eq(pm_orient2d(a, a, c), 0);
    cr_assert_float_eq(pm_orient2d(a, b, c), 1.0, 0.0);
}

/* Shewchuk's classic: points on a 1-ulp grid near the line y = x, against
 * the line through (12, 12) and (24, 24). The naive determinant gets many
 * of these wrong. */
Test(predicates, orient_nextafter_grid) {
    double a[2] = {12, 12}, b[2] = {24, 24};
    int wrong_naive = 0;
    double x = 0.5;
    for (int i = 0; i < 256; i++, x = nextafter(x, 1.0)) {
        double y = 0.5;
        for (int j = 0; j < 256; j++, y = nextafter(y, 1.0)) {
            double c[2] = {x, y};
            int want = (j > i) - (j < i);
            cr_assert_eq(sgn(pm_orient2d(a, b, c)), want, "grid %d,%d", i, j);
            cr_assert_eq(sgn(pm_orient2d(b, c, a)), want);
            cr_assert_eq(sgn(pm_orient2d(c, a, b)), want);
            double naive = (a[0] - c[0]) * (b[1] - c[1]) - (a[1] - c[1]) * (b[0] - c[0]);
            wrong_naive += sgn(naive) != want;
        }
    }
    /* The test must exercise the hard cases, not only the easy ones. */
    cr_assert_gt(wrong_naive, 1000);
}

/* 1-ulp perturbations of a point exactly on a line, at many scales. */
Test(predicates, orient_one_ulp_off_a_line) {
    pm_rng r;
    pm_rng_seed(&r, 11);
    for (int i = 0; i < 20000; i++) {
        double s = ldexp(1.0, (int)pm_rng_int(&r, -40, 40));
        double a[2] = {pm_rng_range(&r, -1, 1) * s, pm_rng_range(&r, -1, 1) * s};
        double b[2] = {pm_rng_range(&r, -1, 1) * s, pm_rng_range(&r, -1, 1) * s};
        double t = pm_rng_unit(&r);
        double c[2] = {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])};
        int k = (int)pm_rng_below(&r, 3);
        if (k == 1) c[0] = nextafter(c[0], INFINITY);
        if (k == 2) c[1] = nextafter(c[1], -INFINITY);
        check_orient(a, b, c);
        check_orient(c, a, b);
    }
}

/* Coordinates around 1e15 (ulp 0.125) with small offsets: the differences
 * are exact, but the products are far beyond 53 bits. */
Test(predicates, orient_large_coordinates) {
    pm_rng r;
    pm_rng_seed(&r, 13);
    const double big = 1e15;
    for (int i = 0; i < 20000; i++) {
        double dx = (double)pm_rng_int(&r, -1000000, 1000000) * 0.125;
        double dy = (double)pm_rng_int(&r, -1000000, 1000000) * 0.125;
        double k = (double)pm_rng_int(&r, -50, 50);
        double a[2] = {big, big + 3};
        double b[2] = {big + dx, big + 3 + dy};
        /* On the line through a and b, then maybe moved by one ulp. */
        double c[2] = {big + k * dx, big + 3 + k * dy};
        c[pm_rng_below(&r, 2)] += 0.125 * (double)pm_rng_int(&r, -1, 1);
        check_orient(a, b, c);
        check_orient(b, a, c);
    }
}

/* Large and small coordinates mixed, so the differences themselves are not
 * representable: exercises the fully exact stage. */
Test(predicates, orient_inexact_differences) {
    pm_rng r;
    pm_rng_seed(&r, 17);
    for (int i = 0; i < 20000; i++) {
        double big = ldexp(1.0, (int)pm_rng_int(&r, 20, 50));
        double a[2] = {big + 0.25 * (double)pm_rng_int(&r, -8, 8), pm_rng_unit(&r)};
        double b[2] = {pm_rng_unit(&r) * 0x1p-10, big + 0.25 * (double)pm_rng_int(&r, -8, 8)};
        double c[2] = {a[0] + (b[0] - a[0]) * 0.5, a[1] + (b[1] - a[1]) * 0.5};
        int j = (int)pm_rng_below(&r, 3);
        if (j < 2) c[j] = nextafter(c[j], pm_rng_below(&r, 2) ? INFINITY : -INFINITY);
        check_orient(a, b, c);
        check_orient(b, c, a);
    }
}

Test(predicates, orient_antisymmetric_and_cyclic) {
    pm_rng r;
    pm_rng_seed(&r, 19);
    for (int i = 0; i < 50000; i++) {
        /* Small integer ranges make collinear triples common. */
        double p[3][2];
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 2; j++)
                p[k][j] = (double)pm_rng_int(&r, -4, 4) * 0.1 + 1e9;
        int s = sgn(pm_orient2d(p[0], p[1], p[2]));
        cr_assert_eq(sgn(pm_orient2d(p[1], p[0], p[2])), -s);
        cr_assert_eq(sgn(pm_orient2d(p[0], p[2], p[1])), -s);
        cr_assert_eq(sgn(pm_orient2d(p[1], p[2], p[0])), s);
        cr_assert_eq(sgn(pm_orient2d(p[2], p[0], p[1])), s);
        cr_assert_eq(s, exact_orient(p[0], p[1], p[2]));
    }
}

/* Random integers up to 2^26 against __int128: exactly representable
 * inputs, products up to 2^54, so the naive formula is not always right. */
Test(predicates, orient_vs_int128) {
    pm_rng r;
    pm_rng_seed(&r, 23);
    const int64_t lim = (int64_t)1 << 26;
    for (int i = 0; i < 200000; i++) {
        int64_t q[3][2];
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < 2; j++) q[k][j] = pm_rng_int(&r, -lim, lim);
        /* Half the time a point near the line through the first two. */
        int64_t t = pm_rng_int(&r, -3, 3);
        for (int j = 0; j < 2; j++)
            q[2][j] = (i & 1) ? pm_rng_int(&r, -lim, lim)
                              : q[0][j] + t * (q[1][j] - q[0][j]) / 4 + pm_rng_int(&r, -1, 1);
        double p[3][2];
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 2; j++) p[k][j] = (double)q[k][j];
        __int128 o = (__int128)(q[0][0] - q[2][0]) * (q[1][1] - q[2][1]) -
                     (__int128)(q[0][1] - q[2][1]) * (q[1][0] - q[2][0]);
        cr_assert_eq(sgn(pm_orient2d(p[0], p[1], p[2])), (o > 0) - (o < 0));
    }
}

Test(predicates, orient_xz_is_ccw_from_above) {
    /* In a right-handed frame x cross z = -y: turning from +x towards +z is
     * clockwise seen from +Y, so o, +x, +z is a back face of a floor. */
    double o[2] = {0, 0}, px[2] = {1, 0}, pz[2] = {0, 1};
    cr_assert_lt(pm_orient_xz(o, px, pz), 0);
    cr_assert_gt(pm_orient_xz(o, pz, px), 0);
    cr_assert_eq(pm_orient_xz(o, px, px), 0);
}

/* ---- incircle ----------------------------------------------------------- */

Test(predicates, incircle_basic) {
    double a[2] = {1, 0}, b[2] = {0, 1}, c[2] = {-1, 0};
    double in[2] = {0, 0.5}, out[2] = {2, 2}, on[2] = {0, -1};
    cr_assert_gt(pm_incircle(a, b, c, in), 0);
    cr_assert_lt(pm_incircle(a, b, c, out), 0);
    cr_assert_eq(pm_incircle(a, b, c, on), 0);
    cr_assert_lt(pm_incircle(c, b, a, in), 0); /* clockwise flips the sign */
}

/* Integer points on the circle of radius 65 (several Pythagorean triples),
 * translated far away, plus 1-ulp perturbations of the fourth point. */
Test(predicates, incircle_cocircular) {
    static const int trip[][2] = {{16, 63}, {33, 56}, {39, 52}, {25, 60}, {65, 0}};
    double pts[40][2];
    int n = 0;
    for (int t = 0; t < 5; t++)
        for (int sx = -1; sx <= 1; sx += 2)
            for (int sy = -1; sy <= 1; sy += 2)
                for (int sw = 0; sw < 2; sw++) {
                    int x = trip[t][sw] * sx, y = trip[t][1 - sw] * sy;
                    bool dup = false;
                    for (int k = 0; k < n; k++)
                        dup = dup || (pts[k][0] == x && pts[k][1] == y);
                    if (!dup) {
                        pts[n][0] = x;
                        pts[n][1] = y;
                        n++;
                    }
                }
    cr_assert_eq(n, 36);
    pm_rng r;
    pm_rng_seed(&r, 29);
    const double offsets[] = {0, 1e6, 0x1p40, -3e12};
    for (int i = 0; i < 20000; i++) {
        double off = offsets[i % 4];
        double p[4][2];
        for (int k = 0; k < 4; k++) {
            int idx = (int)pm_rng_below(&r, (uint64_t)n);
            p[k][0] = pts[idx][0] + off;
            p[k][1] = pts[idx][1] - off;
        }
        if (exact_orient(p[0], p[1], p[2]) > 0) {
            cr_assert_eq(pm_incircle(p[0], p[1], p[2], p[3]), 0.0);
        }
        int k = (int)pm_rng_below(&r, 2);
        double dir = pm_rng_below(&r, 2) ? INFINITY : -INFINITY;
        /* Keep the oracle's exponent range bounded: no step off zero. */
        p[3][k] = p[3][k] != 0.0 ? nextafter(p[3][k], dir) : copysign(0x1p-40, dir);
        check_incircle(p[0], p[1], p[2], p[3]);
        check_incircle(p[1], p[2], p[0], p[3]);
    }
}

/* Points rounded from a circle: nearly cocircular with inexact differences. */
Test(predicates, incircle_nearly_cocircular) {
    pm_rng r;
    pm_rng_seed(&r, 31);
    for (int i = 0; i < 20000; i++) {
        double cx = pm_rng_range(&r, -1e6, 1e6), cy = pm_rng_range(&r, -1e6, 1e6);
        double rad = ldexp(pm_rng_range(&r, 1, 2), (int)pm_rng_int(&r, -10, 10));
        double p[4][2];
        for (int k = 0; k < 4; k++) {
            double t = pm_rng_range(&r, 0, 6.283185307179586);
            p[k][0] = cx + rad * cos(t);
            p[k][1] = cy + rad * sin(t);
        }
        check_incircle(p[0], p[1], p[2], p[3]);
        check_incircle(p[2], p[0], p[1], p[3]);
    }
}

/* A point rounded from the unit circle against exact points on it: the
 * differences (e.g. -1 - 0.6) are not representable, so only the fully exact
 * stage can decide. */
Test(predicates, incircle_inexact_differences) {
    static const double on[][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    pm_rng r;
    pm_rng_seed(&r, 47);
    for (int i = 0; i < 20000; i++) {
        double t = pm_rng_range(&r, 0, 6.283185307179586);
        double s = ldexp(1.0, (int)pm_rng_int(&r, -20, 20));
        double d[2] = {cos(t) * s, sin(t) * s};
        int k = (int)pm_rng_below(&r, 4);
        double p[3][2];
        for (int j = 0; j < 3; j++) {
            p[j][0] = on[(k + j) % 4][0] * s;
            p[j][1] = on[(k + j) % 4][1] * s;
        }
        check_incircle(p[0], p[1], p[2], d);
        check_incircle(p[2], p[1], p[0], d);
    }
}

Test(predicates, incircle_symmetries) {
    pm_rng r;
    pm_rng_seed(&r, 37);
    for (int i = 0; i < 30000; i++) {
        double p[4][2];
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 2; j++) p[k][j] = (double)pm_rng_int(&r, -3, 3) + 0x1p30;
        int s = sgn(pm_incircle(p[0], p[1], p[2], p[3]));
        cr_assert_eq(sgn(pm_incircle(p[1], p[2], p[0], p[3])), s);
        cr_assert_eq(sgn(pm_incircle(p[2], p[0], p[1], p[3])), s);
        cr_assert_eq(sgn(pm_incircle(p[1], p[0], p[2], p[3])), -s);
        cr_assert_eq(s, exact_incircle(p[0], p[1], p[2], p[3]));
    }
}

/* Random integers up to 2^26 against __int128 (lifted terms reach 2^112). */
Test(predicates, incircle_vs_int128) {
    pm_rng r;
    pm_rng_seed(&r, 41);
    const int64_t lim = (int64_t)1 << 26;
    int zeros = 0;
    for (int i = 0; i < 100000; i++) {
        int64_t q[4][2];
        bool near = i & 1;
        for (int k = 0; k < 4; k++) {
            for (int j = 0; j < 2; j++) q[k][j] = pm_rng_int(&r, -lim, lim);
            if (near && k > 0) {
                /* A rotated copy of the first point's offset from a centre
                 * (0,0): cocircular up to integer rounding. */
                static const int64_t rot[4][2] = {{0, 1}, {-1, 0}, {0, -1}, {1, 0}};
                q[k][0] = rot[k][0] * q[0][0] - rot[k][1] * q[0][1] + pm_rng_int(&r, -1, 1);
                q[k][1] = rot[k][1] * q[0][0] + rot[k][0] * q[0][1];
            }
        }
        __int128 dx[3], dy[3], det = 0;
        for (int k = 0; k < 3; k++) {
            dx[k] = q[k][0] - q[3][0];
            dy[k] = q[k][1] - q[3][1];
        }
        for (int k = 0; k < 3; k++) {
            int j = (k + 1) % 3, m = (k + 2) % 3;
            det += (dx[k] * dx[k] + dy[k] * dy[k]) * (dx[j] * dy[m] - dx[m] * dy[j]);
        }
        double p[4][2];
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < 2; j++) p[k][j] = (double)q[k][j];
        int want = (det > 0) - (det < 0);
        zeros += want == 0;
        cr_assert_eq(sgn(pm_incircle(p[0], p[1], p[2], p[3])), want, "case %d", i);
    }
    cr_assert_gt(zeros, 100);
}

/* ---- segments ----------------------------------------------------------- */

Test(predicates, segments_cases) {
    double a[2] = {0, 0}, b[2] = {2, 2}, c[2] = {0, 2}, d[2] = {2, 0};
    double e[2] = {1, 1}, f[2] = {3, 3}, g[2] = {4, 4}, h[2] = {1, 0};
    /* proper crossing */
    cr_assert(pm_segments_intersect(a, b, c, d));
    cr_assert(pm_segments_cross(a, b, c, d));
    /* T: e is on ab, touching is not crossing */
    cr_assert(pm_segments_intersect(a, b, e, h));
    cr_assert_not(pm_segments_cross(a, b, e, h));
    /* shared endpoint */
    cr_assert(pm_segments_intersect(a, b, b, d));
    cr_assert_not(pm_segments_cross(a, b, b, d));
    /* collinear overlap and collinear disjoint */
    cr_assert(pm_segments_intersect(a, f, e, g));
    cr_assert_not(pm_segments_cross(a, f, e, g));
    cr_assert_not(pm_segments_intersect(a, e, f, g));
    /* degenerate point segments */
    cr_assert(pm_segments_intersect(e, e, a, b));
    cr_assert_not(pm_segments_intersect(h, h, a, b));
    cr_assert(pm_segments_intersect(e, e, e, e));
    /* parallel apart */
    cr_assert_not(pm_segments_intersect(a, h, c, b));
}

/* A segment endpoint one ulp either side of another segment. */
Test(predicates, segments_one_ulp) {
    pm_rng r;
    pm_rng_seed(&r, 43);
    for (int i = 0; i < 20000; i++) {
        double a[2] = {pm_rng_range(&r, -100, 100), pm_rng_range(&r, -100, 100)};
        double b[2] = {pm_rng_range(&r, -100, 100), pm_rng_range(&r, -100, 100)};
        double t = pm_rng_range(&r, 0.1, 0.9);
        double m[2] = {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])};
        int j = (int)pm_rng_below(&r, 2);
        m[j] = nextafter(m[j], pm_rng_below(&r, 2) ? INFINITY : -INFINITY);
        double far[2] = {m[0] + (b[1] - a[1]), m[1] - (b[0] - a[0])};
        int side = exact_orient(a, b, m), far_side = exact_orient(a, b, far);
        bool touch = side == 0;
        bool crosses = side != 0 && far_side == -side;
        cr_assert_eq(pm_segments_intersect(a, b, m, far), touch || crosses);
        cr_assert_eq(pm_segments_cross(a, b, m, far), crosses);
    }
}

#ifndef PM_PREDICATES_H
#define PM_PREDICATES_H
#include <math.h>
#include <stdbool.h>

/* Robust geometric predicates on doubles, after Shewchuk's adaptive-precision
 * arithmetic: a fast floating-point estimate with an error bound, refined to
 * the exact sign when the estimate is too close to zero. The sign is always
 * exact; the magnitude is approximate.
 *
 * Range: exactness needs no overflow or underflow in the intermediate
 * products. Inputs must be finite with coordinate differences either zero
 * or between about 1e-140 and 1e140 in magnitude (1e-70 to 1e70 for
 * pm_incircle); metres from any generator are far inside this. Subnormal
 * coordinates (e.g. one ulp away from 0.0) are outside it. Requires IEEE
 * binary64 with round-to-nearest and the build's -ffp-contract=off. */

/* > 0 when a, b, c turn counter-clockwise (in a right-handed x/y frame),
 * < 0 clockwise, 0 exactly collinear. Twice the signed triangle area. For
 * ground points [x, z] seen from +Y, pass (x, -z) or swap arguments: see
 * pm_orient_xz. */
double pm_orient2d(const double a[2], const double b[2], const double c[2]);

/* pm_orient2d with its first, floating-point stage inlined: the same exact
 * sign, cheaper in hot loops where most answers are clear-cut. */
static inline double pm_orient2d_fast(const double a[2], const double b[2], const double c[2]) {
    double left = (a[0] - c[0]) * (b[1] - c[1]);
    double right = (a[1] - c[1]) * (b[0] - c[0]);
    double det = left - right;
    /* Shewchuk's bound (3 + 16 eps) eps, eps = 2^-53, on |left| + |right|. */
    double bound = 3.3306690738754716e-16 * (fabs(left) + fabs(right));
    /* bound == 0: both products are exactly zero, and so is the result. */
    if (det > bound || -det > bound || bound == 0.0) return det;
    return pm_orient2d(a, b, c);
}

/* > 0 when d lies inside the circle through a, b, c (which must be counter-
 * clockwise), < 0 outside, 0 on it. */
double pm_incircle(const double a[2], const double b[2], const double c[2],
                   const double d[2]);

/* The exact stages of pm_incircle, for when the floating-point estimate is
 * too close to zero; permanent is the estimate's error scale (> 0). */
double pm__incircle_refine(const double a[2], const double b[2], const double c[2],
                           const double d[2], double permanent);

/* pm_incircle with its first, floating-point stage inlined (Shewchuk's
 * bound (10 + 96 eps) eps on the permanent): the same exact sign, cheaper in
 * hot loops such as Delaunay edge flips. pm_incircle is this function. */
static inline double pm_incircle_fast(const double a[2], const double b[2], const double c[2],
                                      const double d[2]) {
    double adx = a[0] - d[0], ady = a[1] - d[1];
    double bdx = b[0] - d[0], bdy = b[1] - d[1];
    double cdx = c[0] - d[0], cdy = c[1] - d[1];
    double bc = bdx * cdy, cb = cdx * bdy;
    double ca = cdx * ady, ac = adx * cdy;
    double ab = adx * bdy, ba = bdx * ady;
    double al = adx * adx + ady * ady;
    double bl = bdx * bdx + bdy * bdy;
    double cl = cdx * cdx + cdy * cdy;
    double det = al * (bc - cb) + bl * (ca - ac) + cl * (ab - ba);
    double perm = (fabs(bc) + fabs(cb)) * al + (fabs(ca) + fabs(ac)) * bl +
                  (fabs(ab) + fabs(ba)) * cl;
    if (fabs(det) > 1.1102230246251577e-15 * perm) return det;
    if (perm == 0.0) return 0.0; /* every point equals d */
    return pm__incircle_refine(a, b, c, d, perm);
}

/* Orientation of ground points given as [x, z] pairs, seen from +Y: > 0 when
 * a, b, c are counter-clockwise seen from above (the glTF front-face rule for
 * a floor). Equal to -pm_orient2d on (x, z). */
double pm_orient_xz(const double a[2], const double b[2], const double c[2]);

/* Whether closed segments ab and cd share a point (touching counts). */
bool pm_segments_intersect(const double a[2], const double b[2],
                           const double c[2], const double d[2]);
/* Whether open segments ab and cd cross at a single interior point of both. */
bool pm_segments_cross(const double a[2], const double b[2],
                       const double c[2], const double d[2]);
#endif

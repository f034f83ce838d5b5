#ifndef PM_PREDICATES_H
#define PM_PREDICATES_H
#include <stdbool.h>

/* Robust geometric predicates on doubles, after Shewchuk's adaptive-precision
 * arithmetic: a fast floating-point estimate with an error bound, refined to
 * the exact sign when the estimate is too close to zero. The sign is always
 * exact; the magnitude is approximate. */

/* > 0 when a, b, c turn counter-clockwise (in a right-handed x/y frame),
 * < 0 clockwise, 0 exactly collinear. Twice the signed triangle area. For
 * ground points [x, z] seen from +Y, pass (x, -z) or swap arguments: see
 * pm_orient_xz. */
double pm_orient2d(const double a[2], const double b[2], const double c[2]);

/* > 0 when d lies inside the circle through a, b, c (which must be counter-
 * clockwise), < 0 outside, 0 on it. */
double pm_incircle(const double a[2], const double b[2], const double c[2],
                   const double d[2]);

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

#ifndef PM_SRC_FILTERED_H
#define PM_SRC_FILTERED_H
/* Private to core/src: orient2d and incircle with the floating-point filter
 * inlined, for loops that call them millions of times. The filter decides
 * when the estimate clears Shewchuk's error bound; otherwise the exact
 * predicate in predicates.c does. Signs are always exact. */
#include <math.h>

#include "pm/predicates.h"

/* Shewchuk's static error bounds for the first, floating-point stage of
 * orient2d and incircle (epsilon = 2^-53). When the estimate clears the
 * bound its sign is certain; otherwise the exact predicate decides. */
#define PM__EPS 0x1p-53
#define PM__CCW_BOUND ((3.0 + 16.0 * PM__EPS) * PM__EPS)
#define PM__ICC_BOUND ((10.0 + 96.0 * PM__EPS) * PM__EPS)

static inline double pm__orient(const double *a, const double *b, const double *c) {
    double l = (a[0] - c[0]) * (b[1] - c[1]);
    double r = (a[1] - c[1]) * (b[0] - c[0]);
    double det = l - r, sum;
    if (l > 0) {
        if (r <= 0) return det;
        sum = l + r;
    } else if (l < 0) {
        if (r >= 0) return det;
        sum = -l - r;
    } else {
        return det;
    }
    double bound = PM__CCW_BOUND * sum;
    if (det >= bound || -det >= bound) return det;
    return pm_orient2d(a, b, c);
}

static inline double pm__incircle(const double *a, const double *b, const double *c,
                                  const double *d) {
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
    double bound = PM__ICC_BOUND * perm;
    if (det > bound || -det > bound) return det;
    return pm_incircle(a, b, c, d);
}

#endif

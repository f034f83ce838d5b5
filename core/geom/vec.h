#ifndef PM_VEC_H
#define PM_VEC_H
#include <math.h>
#include <stdbool.h>
#include "geom/predicates.h"

/* The core's one set of double-precision point and vector helpers, shared
 * by every generator (docs/coregeom.md, "Vectors").
 *
 * 2D points and vectors are values (pm_v2, pm_v2_*); 3D ones are double[3]
 * arrays, results written to an out array that may alias an input (pm_v3_*).
 * Each helper is one fixed expression, evaluated in the order written
 * (lengths in 2D by hypot, in 3D by sqrt of the dot product): generators
 * rely on equal inputs giving bit-identical outputs, so never reorder them.
 * Float data (mesh positions) enters only through the pm_v3f_* helpers,
 * which widen to double first. Floats for output and cglm live at the
 * encoders' edge (docs/coregeom.md, "Doubles inside, floats at the edge"). */

typedef struct pm_v2 { double x, y; } pm_v2;

static inline pm_v2 pm_v2_xy(double x, double y) { pm_v2 r = {x, y}; return r; }
static inline pm_v2 pm_v2_add(pm_v2 a, pm_v2 b) { return pm_v2_xy(a.x + b.x, a.y + b.y); }
static inline pm_v2 pm_v2_sub(pm_v2 a, pm_v2 b) { return pm_v2_xy(a.x - b.x, a.y - b.y); }
static inline pm_v2 pm_v2_scale(pm_v2 a, double s) { return pm_v2_xy(a.x * s, a.y * s); }
static inline double pm_v2_dot(pm_v2 a, pm_v2 b) { return a.x * b.x + a.y * b.y; }
/* z of the 3D cross product: > 0 when b turns counter-clockwise from a. */
static inline double pm_v2_cross(pm_v2 a, pm_v2 b) { return a.x * b.y - a.y * b.x; }
static inline double pm_v2_len(pm_v2 a) { return hypot(a.x, a.y); }
/* a turned a quarter counter-clockwise. */
static inline pm_v2 pm_v2_left(pm_v2 a) { return pm_v2_xy(-a.y, a.x); }
/* a / |a|; a must not be zero. */
static inline pm_v2 pm_v2_unit(pm_v2 a) { double l = pm_v2_len(a); return pm_v2_xy(a.x / l, a.y / l); }
/* a + s * b, the one way every point on a line is computed, so that equal
 * parameters give bit-identical points. */
static inline pm_v2 pm_v2_axpy(pm_v2 a, double s, pm_v2 b) { return pm_v2_xy(a.x + s * b.x, a.y + s * b.y); }
/* Equal coordinates (== on doubles: -0 equals +0). */
static inline bool pm_v2_eq(pm_v2 a, pm_v2 b) { return a.x == b.x && a.y == b.y; }
/* Exact orientation of abc (pm_orient2d): > 0 counter-clockwise. */
static inline double pm_v2_orient(pm_v2 a, pm_v2 b, pm_v2 c) {
    double pa[2] = {a.x, a.y}, pb[2] = {b.x, b.y}, pc[2] = {c.x, c.y};
    return pm_orient2d(pa, pb, pc);
}

/* Plan orientation of (x, z) points seen from +Y (> 0 counter-clockwise)
 * in plain floating point: one rounding per operation, not exact (for the
 * exact sign, pm_orient_xz). */
static inline double pm_orient_xz_plain(const double a[2], const double b[2], const double c[2]) {
    return (b[1] - a[1]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[1] - a[1]);
}

static inline double pm_v3_dot(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* o = a x b; o may be a or b. */
static inline void pm_v3_cross(const double a[3], const double b[3], double o[3]) {
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    o[0] = x;
    o[1] = y;
    o[2] = z;
}

/* Scales v to unit length in place and returns its former length; a zero
 * (or NaN) v is left as it is. */
static inline double pm_v3_normalize(double v[3]) {
    double l = sqrt(pm_v3_dot(v, v));
    if (l > 0.0)
        for (int k = 0; k < 3; k++) v[k] /= l;
    return l;
}

static inline double pm_v3_dist(const double *a, const double *b) {
    double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    return sqrt(pm_v3_dot(d, d));
}

/* o = a + f (b - a); o may be a or b. */
static inline void pm_v3_lerp(const double *a, const double *b, double f, double o[3]) {
    for (int k = 0; k < 3; k++) o[k] = a[k] + f * (b[k] - a[k]);
}

/* The distance between two float points, in double. */
static inline double pm_v3f_dist(const float *a, const float *b) {
    double d[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
    return sqrt(pm_v3_dot(d, d));
}
#endif

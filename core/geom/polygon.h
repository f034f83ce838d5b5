#ifndef PM_POLYGON_H
#define PM_POLYGON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"

/* Exact tests on polygons: n points as x,y pairs, closed implicitly (edge i
 * joins point i and point i + 1 mod n). Coordinates must be finite and
 * within the range geom/predicates.h names; every decision is exact. */

typedef struct pm_polygon_info {
    /* No repeated point, no edge meeting a non-adjacent edge, adjacent edges
     * sharing only their common point (so not all points are collinear). */
    bool simple;
    bool ccw;                /* counter-clockwise in the x/y sense; only when simple */
    /* Star-shaped around kernel_point: every edge turns strictly counter-
     * clockwise around it, winding once. Implies simple and ccw. */
    bool star;
    double kernel_point[2];  /* only when star */
    /* When not simple: two edges that meet where they must not (for a
     * repeated point, the edges leaving its two copies). Lets a caller name
     * the parts of its input that collide. */
    uint32_t clash[2];
} pm_polygon_info;

/* Classifies a polygon of n >= 3 points. Star-shaped polygons (convex ones,
 * typical junction contours) take O(n) expected: a candidate kernel point
 * (the vertex centroid; up to 128 points, the least-squares point of the
 * edge lines moved by a few projections onto the edges' half-planes), else
 * one found by randomized linear programming, then checked exactly. Others
 * take an O(n log n) sweep line. Returns 0, or PM_ERR_NOMEM. */
int pm_polygon_classify(pm_arena *scratch, const double *pts, size_t n, pm_polygon_info *info);

/* Whether every edge turns strictly counter-clockwise around c and the
 * polygon winds around c exactly once: the polygon is then simple, counter-
 * clockwise and star-shaped around c. O(n), exact. */
bool pm_polygon_star_around(const double *pts, size_t n, const double c[2]);
#endif

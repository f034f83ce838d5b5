#ifndef PM_EARCLIP_H
#define PM_EARCLIP_H
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"

/* Ear-clipping triangulation of a simple polygon (no holes) with exact
 * predicates. pts holds n points as x,y pairs, counter-clockwise in the
 * right-handed x/y sense (ground points [x, z] seen from +Y are clockwise
 * in x/z: pass them in reverse order, or as (x, -z)). Guarantees, for every
 * accepted polygon, collinear and nearly collinear points included:
 *   - every input vertex is used and exactly n - 2 triangles come out;
 *   - every triangle is strictly counter-clockwise (exactly positive area);
 *   - the triangles tile the polygon: no overlap, no gap, so their areas
 *     sum to the polygon's area up to the rounding of the summation;
 *   - the output depends only on the input (deterministic).
 * Coordinates must be finite, within the range geom/predicates.h names. */

/* Worst-case index count for n points: 3 * (n - 2) (0 for n < 3). */
size_t pm_earclip_bound(size_t n);

/* Writes triangles as index triples into out (pm_earclip_bound(n) room),
 * each counter-clockwise. scratch holds temporary memory (none up to 128
 * points unless the polygon is not star-shaped; about 150 bytes per point
 * above). Returns the number of triangles (n - 2), or
 *   PM_ERR_GEOMETRY when the polygon is not simple (repeated point, edges
 *     touching or crossing, all points collinear), is clockwise, or n < 3
 *     (use pm_polygon_classify to learn which edges clash);
 *   PM_ERR_NOMEM when scratch ran out;
 *   PM_ERR_LIMIT when n >= 2^30.
 * Star-shaped polygons take O(n) expected time; others O(n log n) for the
 * simplicity proof plus the ear tests (a uniform grid of the reflex and flat
 * vertices). It never loops: each vertex is queued at most 3 times. */
long pm_earclip(pm_arena *scratch, const double *pts, size_t n, uint32_t *out);

/* pm_earclip for a polygon the caller has shown star-shaped around c
 * (pm_polygon_star_around(pts, n, c) true, so simple and counter-
 * clockwise): the classification is skipped, the triangles are the same
 * (an ear is clipped when no reflex or flat vertex lies in it; the star
 * test only shortcuts that answer, whatever kernel point it is given). */
long pm_earclip_star(pm_arena *scratch, const double *pts, size_t n, const double c[2], uint32_t *out);
#endif

#ifndef PM_EARCLIP_H
#define PM_EARCLIP_H
#include <stddef.h>
#include <stdint.h>
#include "pm/arena.h"

/* Ear-clipping triangulation of a simple polygon (no holes) with robust
 * predicates. pts holds n points as x,y pairs, counter-clockwise in the
 * right-handed x/y sense. Collinear points are kept: every input vertex is
 * used and no output triangle has zero area. */

/* Worst-case index count for n points: 3 * (n - 2). */
size_t pm_earclip_bound(size_t n);

/* Writes triangles as index triples into out (pm_earclip_bound(n) room),
 * each counter-clockwise. scratch holds temporary memory. Returns the number
 * of triangles (n - 2), PM_ERR_GEOMETRY when the polygon is not simple or has
 * fewer than 3 non-collinear points, PM_ERR_NOMEM. */
long pm_earclip(pm_arena *scratch, const double *pts, size_t n, uint32_t *out);
#endif

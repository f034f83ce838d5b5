#ifndef PM_GEOM_H
#define PM_GEOM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pm/arena.h"
#include "pm/scene.h"

/* Mesh utilities every generator needs. */

/* Recomputes per-vertex normals as the area-weighted mean of the adjacent
 * face normals; a vertex with no faces (or only degenerate ones) gets +Y. */
void pm_prim_compute_normals(pm_prim *p);

/* Axis-aligned bounds of the positions; returns false when p is empty. */
bool pm_prim_bounds(const pm_prim *p, float min[3], float max[3]);
bool pm_scene_bounds(const pm_scene *s, float min[3], float max[3]);

/* Rounds a value / every position coordinate to the nearest multiple of
 * grid (> 0), ties away from zero, so that two generators that snap the same
 * coordinate get the same float bits. */
double pm_snap(double v, double grid);
void pm_prim_snap(pm_prim *p, double grid);

/* Merges vertices whose position, normal, UV and colour are bitwise equal,
 * rewriting indices; keeps the first occurrence's order. Returns the new
 * vertex count, or -1 when scratch memory ran out (p unchanged then). */
int64_t pm_prim_weld(pm_arena *scratch, pm_prim *p);

/* Drops triangles with zero area (in 3D) after snapping or welding. Returns
 * the number dropped. */
uint32_t pm_prim_drop_degenerate(pm_prim *p);
#endif

#ifndef PM_GEOM_H
#define PM_GEOM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"
#include "scene/scene.h"

/* Mesh utilities every generator needs. */

/* Recomputes per-vertex normals as the area-weighted mean of the adjacent
 * face normals (each face adds its cross product (b-a)x(c-a)), normalized to
 * unit length; a vertex with no faces, or whose faces cancel or are all
 * degenerate, gets +Y. Indices must be < vcount. Deterministic: faces are
 * summed in index order. A flat primitive (every position at one height,
 * as asphalt on flat ground) takes a shortcut with the same bits: only the
 * heights' cross terms are summed, and none when no face points down.
 * Every normal it writes is unit length: it sets p->normals_unit. */
void pm_prim_compute_normals(pm_prim *p);

/* Axis-aligned bounds of the positions; returns false when p is empty. */
bool pm_prim_bounds(const pm_prim *p, float min[3], float max[3]);
bool pm_scene_bounds(const pm_scene *s, float min[3], float max[3]);

/* Rounds v to the nearest multiple of grid (finite, > 0) by exactly this
 * recipe in IEEE double: k = round(v / grid) (ties away from zero), result
 * k * grid; never -0. Two generators that snap the same double get the same
 * bits, so shared seams match: snap in double, then convert to float (never
 * snap a value that was first rounded to float if bit equality with a
 * double-snapped twin matters). Idempotent on its own results. */
double pm_snap(double v, double grid);
/* Snaps every position coordinate of p (converted to double) with pm_snap
 * and stores it back as float. Idempotent while |coordinate| / grid stays
 * below about 2^22 (4 km at a 1 mm grid), where floats still resolve the
 * grid. */
void pm_prim_snap(pm_prim *p, double grid);

/* Merges vertices whose position, normal, UV and colour are bitwise equal
 * (so -0 and +0 differ: snap first), rewriting indices. The first occurrence
 * of each vertex survives and survivors keep their relative order, so the
 * output is independent of hashing. Returns the new vertex count, or -1 when
 * scratch memory ran out (p unchanged then). */
int64_t pm_prim_weld(pm_arena *scratch, pm_prim *p);

/* Drops triangles with exactly zero area in 3D (collinear or repeated
 * corners, decided with exact predicates) after snapping or welding; the
 * others keep their order. Returns the number dropped. */
uint32_t pm_prim_drop_degenerate(pm_prim *p);
#endif

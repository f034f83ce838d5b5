#ifndef PM_GEOM_H
#define PM_GEOM_H
#include <assert.h>
#include <math.h>
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

/* pm_prim_compute_normals in two parts, for a builder that sums each face
 * as it adds the triangle (pm_prim_normals_add) while the face's cross is
 * at hand: the same sums in the same order, so the same bits, provided no
 * position of those faces changes afterwards. pm_prim_normals_finish(p,
 * t0) sums triangles t0.. (t0 = icount / 3 when the builder summed them
 * all) and normalizes; before it, every normal must hold the sum over
 * triangles 0 .. t0 - 1 of the faces holding its vertex (zero for none). */
void pm_prim_normals_finish(pm_prim *p, uint32_t t0);
/* Sums triangles t0 .. t1 - 1 into their vertices' normals as above. */
void pm_prim_normals_sum(pm_prim *p, uint32_t t0, uint32_t t1);
/* Each of the count normals n[3 i ..] over its length (in double, rounded
 * to floats), or +Y where that length is 0 or not finite: the last step of
 * pm_prim_normals_finish. path: -1 the fastest this CPU has, 0 plain, 1
 * AVX2; returns -1 (nothing done) for a path the CPU lacks, else 0. */
int pm__normalize_all(float *n, uint32_t count, int path);
/* pm_prim_normals_sum by path (as above: 1 AVX2, eight triangles at a
 * time); -1 (nothing done) for a path the CPU lacks, else 0. */
int pm__normals_sum(pm_prim *p, uint32_t t0, uint32_t t1, int path);
/* Whether some of the nt triangles ix (corners into pos, [x, y, z]
 * floats) has a face cross (pm_face_cross) whose y rounds to a negative
 * float: 1 or 0; path as above (1: AVX2), -1 for a path the CPU lacks. */
int pm__any_face_down(const float *pos, const uint32_t *ix, uint32_t nt, int path);

/* Adds the face cross c = (b - a) x (c - a) (in double, as
 * pm_face_cross computes it) of triangle (a, b, c), rounded to floats, to
 * its three vertices' normals, in the order a, b, c. */
static inline void pm_prim_normals_add(pm_prim *p, uint32_t a, uint32_t b, uint32_t c,
                                       const double cross[3]) {
    float f[3] = {(float)cross[0], (float)cross[1], (float)cross[2]};
    float *n[3] = {p->normals + 3 * (size_t)a, p->normals + 3 * (size_t)b, p->normals + 3 * (size_t)c};
    for (int k = 0; k < 3; k++) {
        n[k][0] = n[k][0] + f[0];
        n[k][1] = n[k][1] + f[1];
        n[k][2] = n[k][2] + f[2];
    }
}

/* (b - a) x (c - a) for positions a, b, c of pos, in double (its length
 * is twice the triangle's area): the face term of the normals above. */
static inline void pm_face_cross(const float *pos, uint32_t ia, uint32_t ib, uint32_t ic, double out[3]) {
    const float *a = pos + 3 * (size_t)ia, *b = pos + 3 * (size_t)ib, *c = pos + 3 * (size_t)ic;
    double u[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
    double v[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
    out[0] = u[1] * v[2] - u[2] * v[1];
    out[1] = u[2] * v[0] - u[0] * v[2];
    out[2] = u[0] * v[1] - u[1] * v[0];
}

/* Axis-aligned bounds of the positions; returns false when p is empty. */
bool pm_prim_bounds(const pm_prim *p, float min[3], float max[3]);
bool pm_scene_bounds(const pm_scene *s, float min[3], float max[3]);

/* Rounds v to the nearest multiple of grid (finite, > 0) by exactly this
 * recipe in IEEE double: k = round(v / grid) (ties away from zero), result
 * k * grid; never -0. Two generators that snap the same double get the same
 * bits, so shared seams match: snap in double, then convert to float (never
 * snap a value that was first rounded to float if bit equality with a
 * double-snapped twin matters). Idempotent on its own results. */
static inline double pm_snap(double v, double grid) {
    assert(grid > 0.0 && isfinite(grid) && isfinite(v));
    /* round() inline: below 2^52 the truncation (an int64 round trip) and
     * the fraction it drops (q - t) are exact, and a fraction of at least
     * one half steps away from zero, which is round's value; from 2^52 up
     * q is already whole (or infinite). Adding +0.0 turns -0 into +0, so
     * equal positions never differ in their sign bit. */
    double q = v / grid, k = q;
    if (fabs(q) < 0x1p52) {
        double t = (double)(int64_t)q, f = q - t;
        k = f >= 0.5 ? t + 1.0 : f <= -0.5 ? t - 1.0 : t;
    }
    return k * grid + 0.0;
}
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

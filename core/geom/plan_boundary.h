#ifndef PM_PLAN_BOUNDARY_H
#define PM_PLAN_BOUNDARY_H
/* A cheap certificate that a set of plan triangles has no overlapping pair,
 * for the common case of a clean strip or sheet, before the pairwise test
 * of geom/plan_overlap.h.
 *
 * Every triangle in a pm_pset is counter-clockwise. Sum their directed
 * edges and let opposite twins (P -> Q and Q -> P, same float corners)
 * cancel: for a point p on no edge, the number of triangles holding p is
 * the winding number of what is left around p. When what is left is one
 * simple closed polygon, that number is 0 or 1 everywhere, so no two
 * interiors meet: pm_pset_sweep would report nothing. Any other boundary
 * (holes, several loops, a loop touching itself, edges left twice) proves
 * nothing, and the caller runs the sweep. */
#include "geom/plan_overlap.h"
#include "scene/arena.h"

/* 1 when the triangles of S (at least one) are shown pairwise disjoint as
 * above, 0 when not shown, PM_ERR_NOMEM. Exact: orientations with
 * geom/predicates.h, coordinates compared as the stored floats. Scratch
 * memory comes from a. */
int pm_pset_simple_boundary(pm_arena *a, const pm_pset *S);

/* The same certificate for directed plan edges from[i] -> to[i] ([x, z]
 * floats each) that the caller has partly cancelled already (say, twins
 * on shared vertex indices): 1 when, opposite twins cancelled, what is
 * left is one simple closed loop, so that any triangles whose directed
 * edges sum to these are pairwise disjoint; 0 when not shown,
 * PM_ERR_NOMEM. */
int pm_edges_simple_loop(pm_arena *a, const float *from, const float *to, uint32_t m);

/* 1 when the closed polygon of m plan points xz (as below) turns left or
 * goes straight on at every corner, never back, and its x runs one way
 * then the other only once: its direction then turns by one full turn,
 * monotonically, so it bounds a convex region once round and is simple
 * (a straight road's outline, in linear time). 0: not shown. */
int pm_loop_convex(const float *xz, uint32_t m);
/* pm_loop_convex by path: -1 the fastest this CPU has, 0 plain, 1 AVX2
 * (four corners at a time); -1 for a path the CPU lacks. */
int pm__loop_convex_path(const float *xz, uint32_t m, int path);

/* 1 when the closed polygon of m plan points xz ([x, z] floats; the last
 * joins the first) is simple: no two edges meet but neighbours at their
 * shared corner, no point repeated. 0 when not, PM_ERR_NOMEM. The caller
 * who knows the outline of its triangles (a strip's border) skips
 * pm_pset_simple_boundary's edge table with it. Exact, as above. */
int pm_loop_simple(pm_arena *a, const float *xz, uint32_t m);
/* pm_loop_simple by path: 0 the sweep alone, 1 first the linear test of a
 * loop made of two chains monotone along x or z (a road's outline), the
 * sweep only when that shows nothing. The same verdict either way. 2:
 * the linear test alone (0: not shown). */
int pm__loop_simple_path(pm_arena *a, const float *xz, uint32_t m, int path);
#endif

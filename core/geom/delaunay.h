#ifndef PM_DELAUNAY_H
#define PM_DELAUNAY_H
#include <stdbool.h>
#include <stdint.h>
#include "scene/arena.h"

/* Delaunay triangulation of a planar point set in O(n log n): a sweep hull
 * (points added in order of distance from a seed circumcentre, each one
 * joined to the hull edges it sees, then Lawson flips). Every orientation and
 * in-circle decision is exact (geom/predicates.h behind a floating-point
 * filter), so the result is a true Delaunay triangulation for any input:
 * duplicate points are skipped and reported, points that the sweep order
 * places inside or on the hull are located and inserted by splitting, and
 * all-collinear input yields no triangles. No super-triangle is used, so no
 * artefact edges need removing.
 *
 * Points are x, y pairs in a right-handed frame; triangles come out counter-
 * clockwise there (pm_orient2d > 0). */

/* Half-edge e runs from triangles[e] to triangles[pm_delaunay_next(e)]; the
 * three half-edges of triangle t are 3t, 3t+1, 3t+2. */
static inline uint32_t pm_delaunay_next(uint32_t e) { return e % 3 == 2 ? e - 2 : e + 1; }
static inline uint32_t pm_delaunay_prev(uint32_t e) { return e % 3 == 0 ? e + 2 : e - 1; }

/* The most points one call accepts: half-edge indices must fit int32_t. */
#define PM_DELAUNAY_MAX_POINTS (1u << 28)

typedef struct pm_delaunay {
    uint32_t npoints;        /* the input count, duplicates included */
    uint32_t ntriangles;
    uint32_t *triangles;     /* 3 * ntriangles point indices, each triple CCW */
    int32_t *halfedges;      /* 3 * ntriangles: the opposite half-edge, or -1 on the hull */
    uint32_t nhull;
    uint32_t *hull;          /* hull points CCW (points on hull edges included);
                                for collinear input: the distinct points in line order */
    uint32_t nduplicates;
    uint32_t *duplicates;    /* 2 * nduplicates: (skipped point, kept point it equals) */
    bool collinear;          /* no triangle: fewer than 3 distinct points or all on a line */
} pm_delaunay;

/* Triangulates n points (pts: 2n doubles, finite). All output arrays live in
 * arena a, as does the scratch memory (about 60 bytes a point). Returns PM_OK,
 * PM_ERR_NOMEM, or PM_ERR_LIMIT when n > PM_DELAUNAY_MAX_POINTS. For distinct
 * points not all collinear, ntriangles == 2 * (n - nduplicates) - nhull - 2. */
int pm_delaunay_build(pm_arena *a, const double *pts, uint32_t n, pm_delaunay *out);

/* The same result (a Delaunay triangulation; with cocircular points possibly
 * a different one) with points inserted in the given order (a permutation of
 * 0..n-1) instead of the sweep order. Points that fall inside the hull take
 * the slower locate-and-split path, so this is O(n^2) in the worst case: it
 * exists to exercise the robust paths and for incremental callers. */
int pm_delaunay_build_ordered(pm_arena *a, const double *pts, uint32_t n,
                              const uint32_t *order, pm_delaunay *out);
#endif

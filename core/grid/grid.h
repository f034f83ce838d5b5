#ifndef PM_GRID_H
#define PM_GRID_H
#include <stdbool.h>
#include <stdint.h>
#include "scene/arena.h"
#include "scene/scene.h"

/* Townscaper-style organic quad grids (after Oskar Stalberg): points
 * (Poisson-disk or a triangular lattice) -> Delaunay triangulation -> slivers
 * at the hull dropped -> random adjacent triangle pairs merged into convex
 * quads -> every quad split into 4 and every triangle into 3 through shared
 * edge midpoints, so the grid is all quads -> relaxation (squareness or
 * Laplacian) that never lets a quad turn non-convex. The grid lies flat at
 * y = 0 around the origin; quads are counter-clockwise seen from +Y. */

typedef enum pm_grid_shape {
    PM_GRID_HEXAGON,   /* flat-top hexagon, circumradius size * spacing */
    PM_GRID_SQUARE,    /* side 2 * size * spacing */
    PM_GRID_DISK,      /* radius size * spacing */
} pm_grid_shape;

typedef enum pm_grid_points {
    PM_GRID_POISSON,   /* Poisson-disk points, the outline seeded at even spacing */
    PM_GRID_LATTICE,   /* the triangular lattice (Stalberg's hexagon of triangles) */
} pm_grid_points;

typedef enum pm_grid_relax_mode {
    PM_GRID_RELAX_SQUARE,     /* pull each quad toward its best-fitting square */
    PM_GRID_RELAX_LAPLACIAN,  /* move each vertex toward its neighbours' mean */
} pm_grid_relax_mode;

typedef struct pm_grid_relax {
    pm_grid_relax_mode mode;
    uint32_t iterations;
    double strength;          /* share of the computed move taken per iteration, (0, 1] */
    bool lock_boundary;       /* boundary vertices stay where subdivision put them */
} pm_grid_relax;

typedef struct pm_grid_params {
    uint64_t seed;
    uint32_t size;            /* >= 1: hexagon rings, half the square's side, disk radius, in spacings */
    pm_grid_shape shape;
    pm_grid_points points;
    double spacing;           /* metres between neighbouring points, > 0 */
    double merge;             /* share of merge attempts made, [0, 1] */
    double merge_min_angle;   /* degrees: every corner of a merged quad lies in */
    double merge_max_angle;   /*   [min, max], 0 <= min < max <= 180 */
    pm_grid_relax relax;
} pm_grid_params;

/* The defaults the API documents: hexagon, lattice, size 8, spacing 1, merge 1
 * within 45-135 degrees, square relaxation, 40 iterations at 0.5, boundary locked. */
void pm_grid_defaults(pm_grid_params *p);

/* Upper bounds, for limits checked before any work: points the first stage
 * can produce, and vertices of the finished grid (at most 6 per point). */
uint64_t pm_grid_point_bound(const pm_grid_params *p);
uint64_t pm_grid_vertex_bound(const pm_grid_params *p);

typedef struct pm_grid_quality {
    double min_scaled_jacobian;   /* over quads; a quad's is its worst corner's */
    double p05_scaled_jacobian;   /* 5th percentile (nearest rank, rounded down) */
    double mean_scaled_jacobian;
    double angles_outside_45_135; /* share of quad corners */
    uint32_t inverted_quads;      /* quads not strictly convex: always 0 */
} pm_grid_quality;

typedef struct pm_grid {
    uint32_t nverts;
    double *verts;            /* x, z pairs (world metres, y = 0), float-exact */
    uint8_t *boundary;        /* per vertex: 1 on the grid's outline */
    uint32_t nquads;
    uint32_t *quads;          /* 4 per quad, CCW seen from +Y */
    uint32_t *nbr_start;      /* nverts + 1 offsets into nbr */
    uint32_t *nbr;            /* each vertex's edge neighbours, ascending */
    pm_grid_quality quality;
    /* What each stage did. */
    uint32_t npoints, nduplicates, ntriangles, ndropped, nmerged, nleft_triangles;
} pm_grid;

/* Builds the grid. params must be valid (api/ checks them; core asserts).
 * cancel (may be NULL) is polled between stages and relaxation iterations.
 * Returns PM_OK, PM_ERR_NOMEM, PM_ERR_GEOMETRY (no triangle survived, e.g.
 * a size too small for the spacing) or PM_ERR_CANCELLED. */
int pm_grid_build(pm_arena *a, const pm_grid_params *p, const volatile int *cancel, pm_grid *out);

/* Quality of quads (4 indices each, CCW in x/z seen from +Y) over verts
 * (x, z pairs). */
void pm_grid_measure(const double *verts, const uint32_t *quads, uint32_t nquads,
                     pm_arena *scratch, pm_grid_quality *q);

/* The scene: primitive "grid" (material "grid", planar UVs, each quad as two
 * triangles split along its shorter diagonal) and metadata with the quads,
 * neighbours, boundary, stage counts and quality. */
int pm_grid_scene(pm_arena *a, const pm_grid_params *p, const pm_grid *g, pm_scene **out);

/* pm_grid_build, then pm_grid_scene. */
int pm_grid_generate(pm_arena *a, const pm_grid_params *p, const volatile int *cancel,
                     pm_scene **out);

const char *pm_grid_shape_name(pm_grid_shape s);
const char *pm_grid_points_name(pm_grid_points p);
const char *pm_grid_relax_name(pm_grid_relax_mode m);
#endif

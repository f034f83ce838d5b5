#ifndef PM_TERRAIN_H
#define PM_TERRAIN_H
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"
#include "scene/scene.h"

/* A heightfield over the ground plane: node (col, row) sits at
 * x = origin[0] + col * cell, z = origin[1] + row * cell, with height
 * h[row * cols + col]. Outside the grid, heights clamp to the border. */
typedef struct pm_heightfield {
    double origin[2];       /* [x, z] of node (0, 0) */
    double cell;            /* > 0 */
    uint32_t cols, rows;    /* >= 2 each */
    double *h;              /* cols * rows, row-major */
    /* When not NULL, the heights as float32 (a binary upload, kept at half
     * the bytes: every float32 is exactly a double, so every result is
     * the same as from h holding the same values); h is then unused. */
    const float *h32;
} pm_heightfield;

/* Seeded fractal gradient noise: octaves of 2D gradient (Perlin-style)
 * noise, each twice the frequency and half the amplitude of the previous,
 * scaled so the heights stay within +-amplitude. Integer hashing and a
 * fixed gradient table: the same seed gives the same bits everywhere. */
typedef struct pm_noise {
    uint64_t seed;
    double amplitude;       /* metres, >= 0 */
    double wavelength;      /* metres of the first octave, > 0 */
    uint32_t octaves;       /* 1..8 */
} pm_noise;

/* Noise height at a ground point. */
double pm_noise_height(const pm_noise *n, double x, double z);

/* Fills hf->h (allocated in a) with noise heights; origin, cell, cols and
 * rows must be set. Returns 0, PM_ERR_NOMEM or PM_ERR_CANCELLED. */
int pm_heightfield_from_noise(pm_arena *a, pm_heightfield *hf, const pm_noise *n,
                              const volatile int *cancel);

/* Bilinear height at a ground point. The signature fits pm_height_fn
 * (ctx is the heightfield). */
double pm_heightfield_height(const void *hf, double x, double z);

/* Bound on the height's deviation along a plan chord (pm_height_bound_fn,
 * ctx the heightfield): over plan points within dp of the chord a -> b
 * (a[1], b[1] the heights at its ends), |height - the chord's own height
 * at the point's projection| <= the result. Along the chord the bilinear
 * (border-clamped) height is a quadratic between cell-line crossings, its
 * deviation from the chord taken exactly at the crossings and at each
 * quadratic's vertex; off the chord it changes by at most the largest
 * slope across the chord, from the cell edges of the region, times dp.
 * Returns early (a value above stop) once the deviation along the chord
 * exceeds stop, and INFINITY for a stop below INFINITY when the chord's
 * box (widened by dp) spans more than 4096 cells (split it). */
double pm_heightfield_chord_bound(const void *hf, const double a[3], const double b[3], double dp,
                                  double stop);

/* Smooth unit normal at a ground point: central-difference gradients at
 * the nodes, interpolated bilinearly, as (-dh/dx, 1, -dh/dz) normalized
 * (no facets at cell edges). */
void pm_heightfield_normal(const pm_heightfield *hf, double x, double z, double n[3]);

/* Both at once, for the cost of one cell lookup: returns exactly
 * pm_heightfield_height's value and stores pm_heightfield_normal's
 * rounded to float (what a mesh vertex keeps). */
double pm_heightfield_height_normalf(const pm_heightfield *hf, double x, double z, float n[3]);

/* pm_heightfield_height_normalf at n points at once (a draped section's
 * columns): point i is p[3i] (x) and p[3i + 2] (z); its height goes to
 * p[3i + 1] and its normal to nf[3i .. 3i + 2], the same bits as n single
 * calls, for one call and one storage test. */
void pm_heightfield_drape(const pm_heightfield *hf, double *p, float *nf, size_t n);

/* What flattening needs to know about a road: its surface as triangles
 * (positions in metres, front faces up) and its outline as polylines (the
 * outer edges, and for open roads the end sections), 3D points. */
typedef struct pm_flatten_shape {
    const double *positions;    /* 3 * nvertices */
    size_t nvertices;
    const uint32_t *indices;    /* 3 * ntriangles */
    size_t ntriangles;
    const double *const *lines; /* nlines polylines of 3D points */
    const size_t *line_len;     /* points per polyline */
    size_t nlines;
} pm_flatten_shape;

typedef struct pm_flatten_opts {
    double margin;      /* >= 0: beyond the outline, terrain stays at road height */
    double falloff;     /* >= 0: then blends back to the terrain (smoothstep) */
    double depth;       /* >= 0: terrain sits this far below the road surface */
} pm_flatten_opts;

/* Returns in *out (a copy of in, heights in a) the terrain flattened under
 * the shape: nodes under a road triangle take the surface height (the
 * lowest where triangles overlap) minus depth; nodes within margin of the
 * outline take the nearest outline height minus depth; nodes within
 * margin + falloff blend from that to their own height with smoothstep.
 * Then, where the terrain mesh's triangle under a shape vertex would rise
 * above that vertex less depth (the road bends inside the cell), the
 * triangle's flattened corners are lowered just enough, so the terrain
 * does not poke through the road at its vertices (fully when at least half
 * the vertex's weight sits on flattened corners: a margin of 1.5 cells or
 * more gives that everywhere). Returns 0, PM_ERR_NOMEM or PM_ERR_CANCELLED. */
int pm_heightfield_flatten(pm_arena *a, const pm_heightfield *in, const pm_flatten_shape *shape,
                           const pm_flatten_opts *o, pm_heightfield *out,
                           const volatile int *cancel);

/* Appends the heightfield as a primitive (name, material "terrain"): one
 * vertex per node with smooth normals and UVs (col/(cols-1), row/(rows-1)),
 * two triangles per cell, front faces up. Triangles are emitted in column
 * bands 7 cells wide, row by row: two rows of a band (16 vertices) fit a
 * 16-entry FIFO cache, so ACMR is 0.58 at cache sizes 16 and 32 (meshopt's
 * optimizer reaches 0.63 at 16 on the same grid, and costs time on 500k
 * triangles); vertices are stored in first-use order. Returns the
 * primitive index or a negative pm_result. */
long pm_heightfield_to_prim(pm_scene *s, const pm_heightfield *hf, const char *name,
                            const volatile int *cancel);
#endif

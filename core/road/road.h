#ifndef PM_ROAD_H
#define PM_ROAD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"
#include "scene/scene.h"
#include "geom/spline.h"
#include "geom/terrain.h"

/* A spline road, optionally on a terrain: adaptive sampling of the centre
 * line, a frame per sample, a cross-section swept along the frames, the
 * terrain flattened under it, props along it and coarser LODs.
 *
 * Frames. T is the 3D tangent, up is +Y (or the terrain normal at the
 * centre), right R = normalize(T x up) with its sign tied to the plan
 * tangent, so frames never flip; banking rotates R about T. The section is
 * a straight line in plan through the centre, so the mesh faces up exactly
 * when every quad between two consecutive sections is convex in plan.
 *
 * Tight curves. Where two consecutive sections meet inside the road (the
 * inner edge would fold: radius below the half width), that side is cut
 * back to just short of the meeting point, so its columns collapse onto one
 * point; a cut never breaks an earlier quad (a convex quad cut by a chord
 * from a vertex stays convex), so one pass gives a mesh whose every kept
 * triangle faces up. Collapsed runs are reported as folds.
 *
 * UVs. Each carriageway edge (V = 0 left, V = 1 right) and each outer
 * shoulder edge has U = its own accumulated 3D length x uv_scale; columns
 * between two such edges interpolate U linearly in V. V is 0..1 across the
 * carriageway, below 0 / above 1 on the shoulders (offset / width). */

typedef enum pm_road_conform {
    PM_ROAD_DRAPE = 0,      /* every section vertex on the terrain */
    PM_ROAD_BANK = 1,       /* straight (banked) section, centre on the terrain */
} pm_road_conform;

typedef enum pm_road_up {
    PM_ROAD_UP_WORLD = 0,   /* up = +Y */
    PM_ROAD_UP_TERRAIN = 1, /* up = terrain normal at the centre (bank mode) */
} pm_road_up;

typedef enum pm_road_side {
    PM_ROAD_SIDE_LEFT = 1,
    PM_ROAD_SIDE_RIGHT = 2,
    PM_ROAD_SIDE_BOTH = 3,
} pm_road_side;

typedef enum pm_road_align {
    PM_ROAD_ALIGN_TANGENT = 0,  /* rotation = the road frame (slope, bank) */
    PM_ROAD_ALIGN_TERRAIN = 1,  /* yaw from the road, up = ground normal */
} pm_road_align;

/* A line of instanced props: one every `spacing` metres of centre-line arc
 * length from the start, `offset` metres sideways from the centre line.
 * Local axes of an instance: +X along the road, +Y up, +Z to the right. */
typedef struct pm_road_prop {
    const char *name;
    double spacing;             /* > 0 */
    double offset;              /* >= 0 */
    pm_road_side side;
    pm_road_align align;
} pm_road_prop;

typedef struct pm_road_params {
    const double *points;       /* 3 * npoints: [x, y, z] */
    size_t npoints;
    bool closed;
    pm_curve_kind curve;
    double alpha;               /* Catmull-Rom knot exponent, 0..1 */
    double max_error;           /* chord error, metres */
    double max_segment;         /* longest chord, metres */
    double width;               /* carriageway, > 0 */
    double shoulder;            /* each side, >= 0 */
    uint32_t cross_segments;    /* strips across the carriageway, >= 1 */
    double bank_max_degrees;    /* 0..45: bank from curvature */
    double bank_radius;         /* > 0: radius at and below which the full bank applies */
    double bank_transition;     /* >= 0: arc length over which the bank is averaged */
    const double *roll;         /* NULL or npoints degrees: + lowers the right edge */
    const pm_heightfield *terrain;  /* NULL: heights from the points */
    bool terrain_mesh;          /* add the "terrain" primitive */
    pm_road_conform conform;
    pm_road_up up;
    bool flatten;
    pm_flatten_opts flatten_opts;
    const pm_road_prop *props;
    size_t nprops;
    const double *lods;         /* increasing errors, each > max_error */
    size_t nlods;
    double uv_scale;            /* > 0 */
    uint64_t max_vertices;      /* 0 = no cap; over it PM_ERR_LIMIT */
    bool overlaps_checked_by_caller;  /* true: no self-overlap check (a network
                                         checks its whole surface itself) */
    const volatile int *cancel; /* NULL or raised to stop */
} pm_road_params;

/* Defaults of the public API: Catmull-Rom alpha 0.5, max_error 0.05,
 * max_segment 5, width 7, shoulder 1, cross_segments 4, no banking
 * (radius 50, transition 20), drape, up world, flatten margin 1, falloff 8,
 * depth 0.05, uv_scale 0.25, terrain_mesh true. No points. */
void pm_road_params_default(pm_road_params *p);

/* The largest bank angle and the turn between plan tangents of one chord
 * that the road's sampler allows (sampling adds this bound to the chord
 * error and segment length so frames stay smooth on hairpins). */
#define PM_ROAD_MAX_BANK_DEGREES 45.0
#define PM_ROAD_MAX_TURN_RADIANS 0.2

/* Vertex columns per section (carriageway + shoulders) for cross_segments
 * and the shoulder: what an output-size estimate multiplies samples by. */
uint32_t pm_road_columns(const pm_road_params *p);

/* Set when generation fails with PM_ERR_LIMIT: which request field drives
 * the size ("/max_error", "/props/1/spacing", "/lods/0", "/terrain") and
 * the vertex or instance count that was needed. */
typedef struct pm_road_overlap {
    uint32_t point[2];      /* control points nearest the two parts, [0] <= [1] */
    bool shoulder[2];       /* each part's triangle is the shoulder's (else asphalt) */
    double at[2];           /* plan (x, z) of a point inside both */
    double turn_radius;     /* tightest centre-line radius from one part to the
                               other (0 at a linear road's corner, INFINITY straight) */
} pm_road_overlap;

#define PM_ROAD_MAX_OVERLAPS 8

/* Set when generation fails with PM_ERR_GEOMETRY: the road's own surface
 * (asphalt and shoulders) would overlap itself in plan, at level `level`
 * (0 the base, k the LOD lods[k - 1]); the first distinct pairs of control
 * points whose parts overlap, how many triangle pairs overlap (counting
 * stops at 4096), and
 * what works: a centre-line radius of at least half the width plus the
 * shoulder, legs at least the full width (shoulders included) apart. */
typedef struct pm_road_overlaps {
    uint32_t level;
    size_t n;
    pm_road_overlap o[PM_ROAD_MAX_OVERLAPS];
    uint64_t pairs;
    double radius, spacing;
} pm_road_overlaps;

typedef struct pm_road_failure {
    const char *field;
    uint64_t needed;
    pm_road_overlaps overlaps;
} pm_road_failure;

/* Generates the road scene in a: primitives "asphalt", "shoulder" (when
 * shoulder > 0), "terrain" (when a terrain is given and terrain_mesh), and
 * per LOD level k "asphalt_lodk" / "shoulder_lodk" (re-sampled at the
 * coarser error); prop sets per name; metadata (see docs/road.md). Every
 * primitive's triangles are ordered for the vertex cache and its vertices
 * for fetch (in order of first use). Returns 0, PM_ERR_NOMEM, PM_ERR_LIMIT (fail
 * filled when not NULL), PM_ERR_GEOMETRY (the surface of some level would
 * lie on itself in plan: fail->overlaps filled), PM_ERR_CANCELLED. */
int pm_road_generate(pm_arena *a, const pm_road_params *p, pm_scene **out,
                     pm_road_failure *fail);

/* What pm_road_generate's metadata says of the base level. */
typedef struct pm_road_base {
    double length;          /* "length" */
    int64_t samples;        /* "samples" */
} pm_road_base;

/* pm_road_generate's base level alone: its "asphalt" (and "shoulder")
 * primitives with the same bytes, without props, LODs, the terrain
 * primitive or metadata (the scene's is empty); *base gets its length and
 * samples. What a network builds each road with. Returns as
 * pm_road_generate. */
int pm_road_generate_base(pm_arena *a, const pm_road_params *p, pm_scene **out,
                          pm_road_base *base, pm_road_failure *fail);
#endif

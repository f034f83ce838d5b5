#ifndef PM_NETWORK_H
#define PM_NETWORK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"
#include "junction/junction.h"
#include "scene/scene.h"

/* Road networks: nodes + edges -> every junction and every road of the
 * graph, stitched into one watertight asphalt surface (docs/network.md).
 *
 * Topology. A node of degree >= 3 is a junction (pm_junction_generate, one
 * arm per incident edge, along the road: interior points inside the
 * junction or right after its mouth are left out). A node of degree 2
 * joining two edges of the same width is a "through" node: the two edges
 * are one road through it (a chain); with different widths, or a turn too
 * sharp for a spline, it is a 2-arm junction. Two junctions too close for
 * their corners are joined by a shortened road or merged into one
 * (docs/network.md, "Close junctions"). Degree 1 is a free road end; degree 0 is
 * unused. Every chain of edges between two non-through nodes (or a closed
 * cycle of through nodes) is one road (pm_road_generate, no shoulder, one
 * carriageway strip each side of the centre column).
 *
 * Seams. A road starts at a junction mouth with the tangent of the arm (its
 * first control point is the mouth centre, its second lies on the arm's
 * line), and its end section's three vertices become the junction's
 * mouth-right and mouth-left vertices (the same asphalt vertices, so the
 * same float bits) and the midpoint between them; the junction triangle on
 * the mouth edge is split at that midpoint. The result is one "asphalt"
 * primitive whose every interior edge has exactly two triangles.
 *
 * core/ validates nothing: the api layer checks ids, ranges, self-loops,
 * duplicate edges and crossings (pm_network_crossings) before calling
 * pm_network_generate. Geometry that valid numbers cannot build (an edge
 * too short for its mouths, arms too close) comes back in pm_network_diag. */

/* A node's id as the request gave it: an integer or a string. */
typedef struct pm_network_id {
    bool is_num;
    int64_t num;
    const char *str;
} pm_network_id;

typedef struct pm_network_edge {
    uint32_t from, to;            /* node indices, from != to */
    double width;                 /* > 0 */
    const double *points;         /* interior control points [x, y, z], or NULL */
    size_t npoints;
    bool has_sidewalk;            /* resolved: the edge's own or the network's */
    pm_junction_sidewalk sidewalk;
} pm_network_edge;

typedef struct pm_network_params {
    const double *nodes;          /* 3 * nnodes: [x, y, z] */
    const pm_network_id *ids;     /* nnodes ids for the metadata, or NULL */
    size_t nnodes;
    const pm_network_edge *edges;
    size_t nedges;
    double corner_radius;         /* >= 0 */
    uint32_t corner_segments;     /* >= 2 */
    double uv_scale;              /* > 0: asphalt UV = (x, z) * uv_scale */
    double snap;                  /* > 0: the junctions' grid */
    double max_error, max_segment; /* the road sampler's bounds, > 0 */
    uint64_t max_vertices;        /* 0 = no cap; over it PM_ERR_LIMIT */
    const volatile int *cancel;   /* NULL or raised to stop */
} pm_network_params;

/* Defaults of the public API: corner_radius 3, corner_segments 4, uv_scale
 * 0.1, snap 0.001, max_error 0.05, max_segment 5. No nodes, no edges. */
void pm_network_params_default(pm_network_params *p);

typedef enum pm_network_error {
    PM_NETWORK_OK = 0,
    PM_NETWORK_JUNCTION,          /* a junction has no valid mesh (junction names why) */
    PM_NETWORK_EDGE_TOO_SHORT,    /* a segment cannot hold its mouth(s) */
    PM_NETWORK_SEAM,              /* a road's end section could not be matched to its mouth */
    PM_NETWORK_SIDEWALK,          /* a road's sidewalk folds over itself or misses its junction's */
    PM_NETWORK_OVERLAP,           /* two pieces' surfaces (or two parts of one) overlap in plan */
} pm_network_error;

/* One reason the network has no mesh: the node (-1: none) and the edges
 * involved, and for PM_NETWORK_EDGE_TOO_SHORT the plan length the segment
 * has and the one it needs. For PM_NETWORK_OVERLAP: a second node (two
 * junctions), a plan point [x, z] inside both overlapping triangles, and
 * those two triangles in plan (x0, z0, x1, z1, x2, z2). */
typedef struct pm_network_problem {
    pm_network_error error;
    pm_junction_error junction;   /* for PM_NETWORK_JUNCTION */
    int64_t node;
    int64_t node2;                /* -1: none */
    double point[2];
    double tris[2][6];
    uint32_t edges[4];
    size_t nedges;
    double length, needed;
    char message[400];
} pm_network_problem;

typedef struct pm_network_diag {
    pm_network_problem *problems; /* every problem found, in the scene arena */
    size_t nproblems;
    size_t nwarnings;             /* warnings in the metadata: the junctions', interrupted sidewalks */
    /* Junction builds (each node's junction is built in its local frame;
     * a build may be tried again as its arms change): generator runs,
     * builds that reused an identical earlier result, and runs in place
     * (global frame) because the moved result would not have kept its
     * triangles' orientation. built + reused builds in all. */
    size_t junctions_built, junctions_reused, junctions_in_place;
} pm_network_diag;

/* The gap (metres) a road keeps between a mouth and the next control point:
 * the shortest piece of road the network builds. */
double pm_network_gap(const pm_network_params *p);

/* Edges whose control polylines (from node, interior points, to node, in
 * plan) cross or touch other than at a shared node or between consecutive
 * segments of one edge. Writes up to max pairs {a, b} (a < b, or a == b
 * for an edge crossing itself) in increasing order to pairs and returns how
 * many pairs exist in all (exact predicates). Returns -1 when out of
 * memory. Node indices and interior points must be valid. */
int64_t pm_network_crossings(pm_arena *scratch, const pm_network_params *p,
                             uint32_t (*pairs)[2], size_t max);

/* Builds the network into *out: primitives "asphalt" (roads and junctions,
 * one welded surface), then "curb" and "sidewalk" when any edge has a
 * sidewalk (the junctions' corner slabs and a slab along each side of every
 * such road, continuing each other at the mouths, closed but for the
 * bottom); metadata as in docs/network.md. Returns PM_OK; PM_ERR_GEOMETRY with
 * diag->problems filled (every one found); PM_ERR_LIMIT when the output
 * would pass max_vertices; PM_ERR_NOMEM; PM_ERR_CANCELLED. diag is always
 * initialised. */
int pm_network_generate(pm_arena *a, const pm_network_params *p, pm_scene **out,
                        pm_network_diag *diag);
#endif

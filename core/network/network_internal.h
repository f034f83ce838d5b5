#ifndef PM_NETWORK_INTERNAL_H
#define PM_NETWORK_INTERNAL_H
/* Shared by network.c (topology, junctions, roads) and network_stitch.c
 * (one asphalt surface, metadata). */
#include "geom/vec.h"
#include "network/network.h"

enum { PM__UNUSED, PM__END, PM__THROUGH, PM__JUNCTION, PM__MERGED };

typedef PM_VEC(uint32_t) pm__u32s;

/* Edge `edge` touches the node at its end `end` (0: from, 1: to). */
typedef struct pm__inc { uint32_t edge; uint8_t end; } pm__inc;
/* One edge of a road, travelled from its end `end`. */
typedef struct pm__step { uint32_t edge; uint8_t end; } pm__step;

typedef struct pm__node {
    int kind;
    double c[3];                  /* junction centre: the node, or between two merged nodes */
    uint32_t into;                /* PM__MERGED: the junction node it is part of */
    int64_t merged_node;          /* a junction: the node merged into it, or -1 */
    uint32_t merged_edge;         /* ... and the edge dropped between them */
    uint32_t first, deg;          /* incidences inc[first .. first + deg) = arms */
    pm_scene *scene;              /* junctions: the generated junction */
    double *dir;                  /* 2 * deg unit arm directions (x, z) */
    uint32_t *mouth_l, *mouth_r;  /* per arm, junction asphalt vertices */
    double *mouth_d;              /* per arm, mouth distance */
    uint32_t *skip;               /* per arm, interior points inside the junction (left out) */
    double *cap;                  /* per arm, room cap (HUGE_VAL: none), for a close junction */
    size_t nwarnings;             /* its junction's warnings */
    bool dirty;                   /* to be built again (its skips changed) */
    bool cut;                     /* built with cut_tight_corners (the last resort) */
    bool joined;                  /* joined into a junction because junctions overlapped (pm__join) */
    uint32_t *split;              /* per arm, output triangle on the mouth edge */
    uint32_t voff, vcount, toff, tcount;  /* its block of the output asphalt */
    const pm_junction_slab_end *slab;     /* 2 per arm (left, right), or NULL */
    double *trim;                 /* 2 per arm (left, right): a road sidewalk starts this far out, or 0 */
    bool *bare;                   /* per arm: its left corner's slab left out (it lay on another piece) */
    uint32_t xt0, xtn;            /* its mouth-split triangles appended after the roads */
    uint32_t swt0, swtn;          /* its slab's triangles in the output sidewalk */
} pm__node;

typedef struct pm__road {
    size_t first_step, nsteps;
    bool closed, ok;
    int64_t start, end;           /* node indices; -1 for a closed road */
    int64_t arm0, arm1;           /* arm at the start / end junction, or -1 */
    double d0, d1;                /* mouth distances there */
    double *ctrl;                 /* control polyline [x, y, z] */
    size_t nctrl;
    size_t k0, k1;                /* control points after the start / before the end left out */
    pm_prim *asphalt;             /* its asphalt alone: positions, UVs, triangles (no normals) */
    double length;
    int64_t samples;
    uint32_t voff, vcount, toff, tcount;
    uint32_t *piece;              /* per edge (step): vertex first, count, triangle first, count */
    double *piece_len;            /* per edge: sampled centre-line length of its piece */
    uint32_t seam0[3], seam1[3];  /* output vertices: left, centre, right (road's sides) */
    uint32_t *chain[2];           /* sidewalks: left and right edge, output vertices with */
    uint32_t nchain[2];           /* the asphalt on their left (0: no sidewalk) */
    uint32_t swt0, swtn;          /* its slabs' triangles in the output sidewalk */
    pm__u32s cut[2];              /* per side: section pairs (a, b) whose band is left out */
} pm__road;

/* A stretch of a road side without sidewalk (its own edge crosses itself
 * there): side 0 left, 1 right as the road runs; bare curb edges. */
typedef struct pm__gap_t {
    size_t road;
    int side;
    bool corner;                  /* at a mouth whose corner had no room for its sidewalk */
    bool overlap;                 /* cut out where it lay on another piece */
    uint32_t bare;
    float from[3], to[3];
} pm__gap_t;

/* Where an output sidewalk triangle comes from: a road side's band
 * between sections lo and hi of its chain, or (road UINT32_MAX) a
 * junction's slab. */
typedef struct pm__swsrc { uint32_t road, lo, hi; uint8_t side; } pm__swsrc;

typedef struct pm__jcache pm__jcache;

/* The largest block of an arena for many small pieces given back
 * together whose total is not known ahead (the roads' copies, with
 * sidewalks the placed junctions' positions): the unused tail of a last
 * 1 MiB block would lie between them and what the next stage takes above
 * (0.68 MB of the roads' copies' last 1.05 MB block on the 40 x 40 town;
 * a piece is a few KB, so 64 KiB blocks leave little in each). */
#define PM__SMALL_BLOCK ((size_t)64 << 10)

typedef struct pm__net {
    pm_arena *a;
    pm_arena *tmp;                /* scratch for one road at a time (reset before each) */
    pm_arena *copies;             /* the roads' asphalt (pm__road.asphalt), until the stitch has read it */
    pm_arena *sides;              /* the roads' side chains (pm__road.chain), until the last check */
    bool sidewalks;               /* some edge has a sidewalk */
    double *ends;                 /* with sidewalks, per road its first and last points as built */
    const pm_network_params *p;
    pm__node *nodes;
    pm__inc *inc;
    size_t ninc;
    uint32_t *edge_road;          /* road index + 1 per edge */
    PM_VEC(pm__road) roads;
    PM_VEC(pm__step) steps;
    PM_VEC(pm_network_problem) problems;
    PM_VEC(pm__gap_t) gaps;
    PM_VEC(pm__swsrc) swsrc;      /* per output sidewalk triangle: its road side's sections */
    uint32_t curb_nt;             /* the stitch's curb triangles summed into its normals so far */
    size_t nbare;                 /* junction corners left bare */
    size_t nwarnings;
    pm__jcache *jc;               /* junction results by local parameters (network_jcache.c) */
    size_t jc_built, jc_reused, jc_in_place;
} pm__net;

int pm__network_problem(pm__net *N, pm_network_problem **out);
int pm__network_stitch(pm__net *N, pm_scene **out);
/* The roads' side chains (N->sides) given back, R->chain cleared: they
 * have no reader after the last overlap check (the metadata reads only
 * their lengths, R->nchain). */
void pm__network_drop_chains(pm__net *N);
/* The stitched scene's normals left to the end, the asphalt's and the
 * sidewalk's, and with sidewalks their arrays and their planar UVs too
 * (PM_PRIM_LATE_NORMALS, PM_PRIM_LATE_UVS), once the overlap check is
 * done and its arrays given back. */
int pm__network_late(pm_scene *s, double uv_scale);
/* The edge (step index) of each of the road prim P's triangles, and each
 * edge's piece length (len: nsteps). */
int pm__network_pieces(pm__net *N, const pm__road *R, const pm_prim *P, uint32_t *tri_edge,
                       double *len);
int pm__network_meta(pm__net *N, pm_scene *s);
/* A junction's "corners" array as a table of the same JSON (network_meta.c),
 * or corners itself when one is not a plain corner object. */
pm_meta *pm__corners_table(pm_arena *a, pm_meta *corners);
/* network_sidewalk.c: the road's two edges as chains of output vertices
 * (P: its own primitive, remap: P's vertex -> A's), when it has a
 * sidewalk; PM_ERR_GEOMETRY when an edge is not one path. */
int pm__network_road_sides(pm__net *N, pm__road *R, const pm_prim *P, const uint32_t *remap,
                           const pm_prim *A);
/* Its work once the road has a sidewalk: R->chain and R->nchain from the
 * road's own triangles P (remap: into A). plain: never the shortcut for
 * the usual three-column strip (the tests compare the two). */
int pm__network_side_chains(pm__net *N, pm__road *R, const pm_prim *P, const uint32_t *remap, const pm_prim *A,
                            bool plain);
/* A sidewalk's outer edge (n points out, heights oy and oby, curb segment
 * lengths len) with the loops of tight curves cut out (network_sidewalk.c's
 * pm__trim). plain: never the shortcut for an edge that runs one way
 * (the tests compare the two). */
int pm__network_trim(pm_arena *tmp, uint32_t n, double width, const double *len, pm_v2 *out, float *oy,
                     float *oby, bool plain);
/* The slabs along every road side with a sidewalk into s's curb (1) and
 * sidewalk (2) primitives; problems for those that cannot be built. */
int pm__network_sidewalks(pm__net *N, pm_scene *s);
/* What pm__network_sidewalks adds to the curb (v[0] vertices, t[0]
 * triangles) and sidewalk (v[1], t[1]) primitives in the usual case (road
 * sides in one piece, or as many as their cuts): the stitch reserves it
 * up front. A hint only: a side in more pieces grows the primitive. */
void pm__network_sidewalk_bound(const pm__net *N, uint64_t v[2], uint64_t t[2]);
/* network_overlap.c: a PM_NETWORK_OVERLAP problem for each pair of pieces
 * (junctions, edges' roads and sidewalks) whose asphalt or sidewalk
 * triangles overlap in plan (interiors, exact predicates). With retry
 * (not NULL), sidewalk triangles lying on anything are cut back instead
 * (their junction corner made bare and marked dirty, their road side's
 * band cut there) and *retry says whether any was: the caller builds
 * again and checks anew. */
int pm__network_overlaps(pm__net *N, const pm_scene *s, bool *retry);
/* network_jcache.c: pm_junction_generate for parameters in the node's
 * local frame (centre [0, 0], heights and merged nodes relative to off),
 * its result moved by off (x, y, z) into *out (NULL on failure). A result
 * whose local parameters are bit-identical to an earlier call's is reused;
 * one whose triangles would not keep their orientation when moved is built
 * where it stands instead. Returns as pm_junction_generate. */
/* network_jcache.c: out[i] = (float)((double)in[i] + off[i % 3]) for nv
 * vertices (3 floats each), by path 0 (one at a time), 1 (SSE2), 2 (AVX)
 * or -1 (the fastest this CPU has). Returns -1 when the path is not
 * available here (tests compare the paths). */
int pm__jcache_move(float *out, const float *in, size_t nv, const double off[3], int path);
/* network_jcache.c: out[t] = whether triangle t of P is doubtful at
 * rounding step d (not clear of its orientation's slack, so the cache
 * tests it exactly when it moves the junction), by path 0 (one at a
 * time) or 2 (four at a time, AVX2); -1 when the path is not available
 * here (tests compare the paths). */
int pm__jcache_doubtful(const pm_prim *P, double d, uint8_t *out, int path);
/* network_jcache.c: the largest of m and every |x| and |z| of vertices
 * pos[0, nv) (NaN left out), by path 0 (one at a time), 2 (AVX) or -1
 * (the fastest here); -1 when the path is not available here. (m: 0 or
 * a float's magnitude.) */
double pm__jcache_rmax(const float *pos, uint32_t nv, double m, int path);
/* A junction arm's mouth as its metadata "arms"[k]."mouth" gives it. */
typedef struct pm__jmouth { uint32_t l, r; double d; } pm__jmouth;
/* On PM_OK, *mouths: narms mouths read from the result's metadata once
 * (NULL when an arm's mouth is missing or mistyped). */
int pm__jcache_generate(pm__net *N, const pm_junction_params *local, const double off[3],
                        pm_scene **out, pm_junction_diag *d, const pm__jmouth **mouths);
/* network_jcache.c: gives back the cache's scratch arena (before N->a
 * goes; the cache works on without it). */
void pm__jcache_end(pm__net *N);
/* network_jcache.c: gives back the placed junctions' positions kept apart
 * (with sidewalks), every junction scene's positions cleared: after the
 * last stitch, their last reader. */
void pm__jcache_drop_positions(pm__net *N);
#endif

#ifndef PM_JUNCTION_H
#define PM_JUNCTION_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scene/arena.h"
#include "scene/scene.h"

/* Road junction meshes: the asphalt where N arms meet, built as its own
 * polygon (curb-line corners, circular fillets, ear clipping) plus optional
 * curbs, sidewalks and a roundabout island.
 *
 * Frames and orders (all documented in docs/junction.md):
 * - Input points are ground points [x, z]; +Y is up. "Left" of an arm is
 *   the left hand of someone standing on it looking outward (away from the
 *   centre), seen from +Y.
 * - Arms are sorted counter-clockwise seen from +Y; corner k joins sorted
 *   arm k's left curb to sorted arm k+1's right curb.
 * - Everything the caller sees (mouths, warnings, errors) names arms by
 *   their index in the request, not the sorted order.
 *
 * core/ validates nothing: pm_junction_generate asserts what the api layer
 * must have checked (see each field's range). Geometry that valid numbers
 * cannot build (arms too close, a contour that would cross itself) is
 * reported in pm_junction_diag, never as a broken mesh. */

/* Edges leaving a network node must differ by at least this much in
 * direction (degrees): the network's rule (api/req_network.c). */
#define PM_JUNCTION_MIN_SEPARATION_DEG 5.0
/* Neighbouring arms closer than this (degrees) are "too close to
 * separate": their edges would part only kilometres out. Any wider angle
 * builds: the mouths go out to where the two arms' edges part (and the
 * fillet beyond), or the arms' rooms say how far that is. */
#define PM_JUNCTION_PARALLEL_DEG 0.5
/* Neighbouring arms at least this far apart (degrees), i.e. within 10
 * degrees of opposite or diverging, are joined by a straight edge between
 * their mouths instead of a fillet. */
#define PM_JUNCTION_STRAIGHT_DEG 170.0

typedef struct pm_junction_sidewalk {
    double width;          /* band width outside the curb, > 0 */
    double curb_height;    /* height of the vertical curb face, > 0 */
} pm_junction_sidewalk;

/* A link of a merged junction (pm_network): two of its nodes joined by a
 * straight road too short to build on its own, which lies inside it. */
typedef struct pm_junction_link {
    uint32_t a, b;                 /* node indices, a != b */
    double width;                  /* > 0 */
} pm_junction_link;

typedef struct pm_junction_arm {
    /* Exactly one of: a direction [x, z] pointing away from the centre (any
     * non-zero length), or a centerline of centerline_len >= 2 points [x, z]
     * (x0, z0, x1, z1, ...) whose LAST point is at the junction. */
    double direction[2];
    const double *centerline;      /* NULL for a direction arm */
    size_t centerline_len;
    /* Room along the arm for the mouth, from the centre (direction arms);
     * 0 means unbounded. Centerline arms ignore it: their room is the length
     * of the last segment from the centre's projection on it. */
    double length;
    double width;                  /* > 0 */
    double elevation;              /* height of the mouth edge */
    bool has_sidewalk;             /* resolved override: the arm's or the global one */
    pm_junction_sidewalk sidewalk;
    /* With params->nnodes > 0: the node this (direction) arm leaves from;
     * its centre line passes through it and its length counts from it. */
    uint32_t node;
} pm_junction_arm;

typedef struct pm_junction_roundabout {
    double radius;          /* outer radius of the ring road, > every arm's half width */
    double island_radius;   /* 0 < island_radius < radius */
    uint32_t segments;      /* points on a full circle, >= 8 */
    double island_height;   /* the island's raised top above the asphalt, > 0 */
} pm_junction_roundabout;

/* What the generator's pure steps (arm angles, fillet arcs) computed,
 * kept by their inputs' bits for the next junctions built with it: a
 * caller that builds many junctions alike but not equal (a town turned off
 * the axes, whose arms differ in their last bits) shares the steps they
 * have in common. A step found there gives the bits it would compute, so
 * the output is the same with or without one. Lives in the arena it was
 * made in; one generator at a time may use it. */
typedef struct pm_junction_memo pm_junction_memo;
/* A memo in a (NULL when out of memory). */
pm_junction_memo *pm_junction_memo_create(pm_arena *a);

typedef struct pm_junction_params {
    const pm_junction_arm *arms;
    size_t narms;                 /* >= 2; >= 1 for a merged junction (nnodes > 0) */
    bool has_center;              /* false: computed (see pm_junction_center) */
    double center[2];
    double corner_radius;         /* >= 0 */
    uint32_t corner_segments;     /* points per fillet arc, >= 2 */
    double uv_scale;              /* > 0 */
    double snap;                  /* grid every output coordinate snaps to, > 0 */
    bool has_roundabout;
    pm_junction_roundabout roundabout;
    /* false (the default): each sidewalk slab is closed at the mouths by an
     * end cap. true: no end caps, the slabs stay open at the mouths for a
     * road's sidewalk to continue them (pm_network); diag->slab_ends then
     * gives the floats such a road must start from. */
    bool open_mouths;
    /* A corner whose sidewalk's outer corner lies beyond an arm's room gets
     * no slab (a corner_sidewalk_dropped warning) instead of failing with
     * PM_JUNCTION_SIDEWALK_NO_FIT: road networks, whose roads' sidewalks
     * then start beyond it (pm_junction_warning.trim). */
    bool drop_tight_sidewalks;
    /* false (the default): a corner that lies beyond an arm's room even at
     * radius 0 is PM_JUNCTION_ARM_TOO_SHORT. true: when only one of its two
     * arms is short and the other has room past the corner, the corner is
     * cut instead: the short arm's mouth at its room, a straight edge from
     * its curb there to the other arm's curb at a mouth far enough out that
     * the two arms' roads beyond their mouths cannot overlap (no fillet, no
     * slab: corner_radius_reduced and corner_sidewalk_dropped say so); a
     * merged junction's join of an arm's curb with a link's side likewise.
     * Tried only after every attempt without it failed, so nothing that
     * builds without it changes. A last resort for road networks
     * (pm_network). */
    bool cut_tight_corners;
    /* A merged junction (0: an ordinary one): nnodes points [x, z] joined
     * by nlinks links into one connected set, every arm a direction arm
     * leaving one of them. Its outline runs round the outside of the
     * nodes' arms and links: each node's arms in counter-clockwise order,
     * from one node to the next along a link's side (a sharp corner where
     * two curb lines meet, a bevel round the outside of a bend; a link
     * side that the corners at its ends pass over is left out), so a face
     * closed by links is asphalt. Where two of those curb lines meet in a
     * point (a block's corner) it gets a fillet of corner_radius, smaller
     * where the lines are short (corner_radius_reduced; none when one
     * would cut into another part of the outline); such corners get no
     * sidewalk (corner_sidewalk_dropped). No roundabout. */
    const double *nodes;
    size_t nnodes;
    const pm_junction_link *links;
    size_t nlinks;
    /* NULL, or narms flags in request order: a set flag leaves out the
     * slab of the corner on that arm's left (joining its left curb to the
     * next arm's right curb); the asphalt is unchanged. Road networks,
     * where that slab would lie on another piece. */
    const bool *bare_corners;
    /* true: the normals are left zero, for a caller that computes them on
     * its own mesh (pm_network, after the stitch). */
    bool no_normals;
    /* true: scene->meta holds only "corners" and "warnings", what
     * pm_network reads (each arm's mouth is in diag->mouths either way);
     * the rest of the metadata is left unbuilt. */
    bool lean_meta;
    /* NULL, or where pure steps' results are kept and looked up (see
     * pm_junction_memo); the output does not depend on it. */
    pm_junction_memo *memo;
} pm_junction_params;

/* Why a valid-looking request has no junction. */
typedef enum pm_junction_error {
    PM_JUNCTION_OK = 0,
    PM_JUNCTION_ARMS_TOO_CLOSE,      /* neighbours < PM_JUNCTION_PARALLEL_DEG apart */
    PM_JUNCTION_ARM_TOO_SHORT,       /* a corner does not fit on the arm even with radius 0 */
    PM_JUNCTION_SELF_INTERSECTION,   /* the final contour would cross itself */
    PM_JUNCTION_SIDEWALK_NO_FIT,     /* a sidewalk band would fold over itself */
    PM_JUNCTION_RING_NO_FIT,         /* roundabout: an arm does not meet the ring cleanly */
    PM_JUNCTION_TOO_SMALL,           /* a mouth collapses when snapped to floats / the grid */
    PM_JUNCTION_LINKS_OVERLAP,       /* merged: two roads meet across a link (a face needs its third node) */
} pm_junction_error;

const char *pm_junction_error_name(pm_junction_error e);

/* Where a sidewalk slab meets a mouth: its cross-section there, the
 * floats a continuing slab must share. The curb's bottom is the asphalt
 * mouth vertex. */
typedef struct pm_junction_slab_end {
    bool present;               /* a slab ends here */
    uint32_t curb_vertex;       /* asphalt vertex: the mouth point */
    float curb_top[3];          /* top of the curb face above it (band's inner point) */
    float outer_top[3];         /* band's outer point */
    float outer_bottom[3];      /* the outer face's foot below it */
} pm_junction_slab_end;

typedef enum pm_junction_warning_code {
    PM_JUNCTION_WARN_RADIUS = 0,      /* corner_radius_reduced: a fillet shrunk to fit */
    PM_JUNCTION_WARN_SIDEWALK_DROPPED, /* corner_sidewalk_dropped: its slab's corner would not fit */
} pm_junction_warning_code;

typedef struct pm_junction_warning {
    pm_junction_warning_code code;
    uint32_t corner;        /* corner index in metadata "corners" (sorted order) */
    int arms[2];            /* request indices of the corner's two arms */
    double requested_radius, radius;
    /* corner_sidewalk_dropped: how far along arms[0] and arms[1] (from the
     * centre) the corner's outer sidewalk lines meet; a sidewalk running on
     * along either arm must start beyond, or it lies on the other's. */
    double trim[2];
    char message[160];
} pm_junction_warning;

/* An arm's mouth: its asphalt vertices (left and right, looking outward)
 * and its distance along the arm, as metadata "arms"[i]."mouth" gives them. */
typedef struct pm_junction_mouth {
    uint32_t left_index, right_index;
    double distance;
} pm_junction_mouth;

/* What the generator has to say besides the mesh. arms[0..narms-1] are
 * the request indices of the arms involved; the api layer names them as
 * /arms/i (narms 0: the whole request). */
typedef struct pm_junction_diag {
    pm_junction_error error;
    int arms[4];
    size_t narms;
    int short_arm;                /* PM_JUNCTION_ARM_TOO_SHORT at a corner: the arm it lies beyond, or -1 */
    char message[256];
    pm_junction_warning *warnings;   /* in the scene's arena */
    size_t nwarnings;
    /* After PM_OK with any sidewalk: 2 per arm in request order, [2 i] at
     * arm i's left mouth point, [2 i + 1] at its right (looking outward),
     * in the scene's arena; NULL otherwise. */
    pm_junction_slab_end *slab_ends;
    /* After PM_OK: one per arm in request order, in the scene's arena. */
    pm_junction_mouth *mouths;
} pm_junction_diag;

/* The centre the generator uses: params->center when given; else from the
 * centerline arms: two of them meet where their last segments' lines cross
 * (the midpoint of their ends when parallel), three or more at the
 * least-squares point nearest all last-segment lines; one centerline arm
 * gives its end; direction arms alone give [0, 0]. */
void pm_junction_center(const pm_junction_params *params, double out[2]);

/* Builds the junction into scene (primitives "asphalt", then "curb" and
 * "sidewalk" when any arm has a sidewalk, then "island" for roundabouts) and
 * fills scene->meta (see docs/junction.md). Returns PM_OK;
 * PM_ERR_GEOMETRY with diag->error set when the arms give no valid junction
 * (scene may then hold partial primitives and must be dropped);
 * PM_ERR_NOMEM. diag is always initialised. */
int pm_junction_generate(pm_scene *scene, const pm_junction_params *params,
                         pm_junction_diag *diag);
#endif

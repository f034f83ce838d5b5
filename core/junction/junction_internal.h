#ifndef PM_JUNCTION_INTERNAL_H
#define PM_JUNCTION_INTERNAL_H
/* Shared between junction.c (arms, centre, metadata), junction_contour.c
 * (corners, mouths, the contour) and junction_mesh.c (snapping, checks,
 * triangulation, curbs, sidewalks, island). Not a public header.
 *
 * Internal frame: a ground point [x, z] is held as (x, -z). In that frame
 * counter-clockwise in the usual math sense is counter-clockwise seen from
 * +Y, and an arm's left (seen from +Y, looking outward) is its direction
 * turned +90 degrees, so the geometry reads like textbook 2D code. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scene/arena.h"
#include "geom/geom.h"
#include "geom/trig.h"
#include "geom/vec.h"
#include "junction/junction.h"
#include "scene/result.h"

/* The plan point of (x, z): y = -z, so counter-clockwise in the plan is
 * counter-clockwise seen from +Y. */
static inline pm_v2 pm__from_xz(double x, double z) { return pm_v2_xy(x, -z); }
/* Features below this many snap steps (fillet radii, arc spacing, the ring
 * arc between two fillets) are dropped or merged: snapped, they would turn
 * into zigzags of grid points. */
#define PM__MIN_RADIUS_SNAPS 4.0

/* pm_junction_memo: arm angles in a direct-mapped table (a town's arms
 * point a few hundred ways), fillet arcs (pm__arc) by their arguments'
 * bits in a hash table, at most PM__MEMO_ARCS of them; when fewer than one
 * in PM__MEMO_RARE of the first PM__MEMO_TRIAL arcs was found there (a
 * town where nothing repeats), arcs are no longer looked up or kept. */
#define PM__MEMO_ANGLES 1024u
#define PM__MEMO_SLOTS 1024u
#define PM__MEMO_ARCS 2048u
#define PM__MEMO_TRIAL 512u
#define PM__MEMO_RARE 8u
#define PM__ARC_KEY 16

typedef struct pm__memo_angle {
    uint64_t y, x;           /* atan2's arguments' bits */
    double angle;
    bool used;
} pm__memo_angle;

typedef struct pm__memo_arc {
    uint64_t key[PM__ARC_KEY];
    uint32_t n;              /* points the arc pushed */
    struct pm__jpt *pts;
    struct pm__memo_arc *next;
} pm__memo_arc;

struct pm_junction_memo {
    pm_arena *a;
    pm__memo_angle angle[PM__MEMO_ANGLES];
    pm__memo_arc *slot[PM__MEMO_SLOTS];
    size_t narcs;
    size_t looked, found;    /* arcs looked up, and found */
};

/* One arm, in sorted (counter-clockwise) order. */
typedef struct pm__jarm {
    int index;           /* position in the request */
    pm_v2 o;             /* a point on the arm's centre line near the centre */
    pm_v2 d, n;          /* unit direction (outward) and its left normal */
    double h;            /* half width */
    double len;          /* room for the mouth along d from o; INFINITY unbounded */
    double elev;
    double angle;        /* atan2 of d in [0, 2 pi) */
    bool sw;             /* has a sidewalk */
    double sw_w, sw_ch;
    double mouth;        /* parameter of the mouth along d from o */
    bool has_corner;     /* a fillet or ring corner decides its mouth */
    uint32_t node;       /* merged junctions: the node it leaves from */
    bool link;           /* merged junctions: one direction of a link (o = its node) */
    size_t twin;         /* a link's other direction */
} pm__jarm;

typedef enum pm__corner_kind { PM__FILLET, PM__STRAIGHT, PM__RING, PM__CHAIN } pm__corner_kind;

/* One side's fillet against the roundabout ring. */
typedef struct pm__ringfillet {
    pm_v2 f;             /* fillet centre */
    double t;            /* parameter of the tangent point on the curb line */
    pm_v2 tc;            /* tangent point on the ring */
    bool qmode;          /* the sidewalk is wider than the fillet: its outer edge has a corner */
    double tq;           /* parameter of that corner on the sidewalk's outer line */
} pm__ringfillet;

/* Corner k joins sorted arm k's left curb (arm a) to arm k+1's right curb (b). */
typedef struct pm__jcorner {
    size_t a, b;         /* sorted arm indices */
    pm__corner_kind kind;
    double phi;          /* counter-clockwise angle from a to b, (0, 2 pi) */
    double r_req, r;     /* requested and actual radius */
    /* fillet */
    pm_v2 p;             /* where the two curb lines meet */
    double tp, sp;       /* its parameters along a and b */
    double ta, sb;       /* tangent-point parameters along a and b */
    pm_v2 fc;            /* fillet centre */
    bool cut;            /* cut_tight_corners: a straight edge between the two mouths (r = 0) */
    bool sw;             /* the corner carries a curb and sidewalk */
    bool qmode;          /* sidewalk outer lines meet in a point (width >= radius) */
    double wq;           /* the sidewalk width both outer lines take there */
    double qa, qb;       /* that point's parameters along a and b (offset lines) */
    /* ring */
    pm__ringfillet fl, fr;   /* a's left fillet, b's right fillet */
    /* chain (merged junctions): the links' directions walked from a to b,
     * then the outline points between a's and b's mouths */
    const pm__jarm **via;
    size_t nvia;
    pm_v2 *chain;
    size_t nchain;
} pm__jcorner;

/* One point of a block: the curb side of the contour from arm a's left mouth
 * to arm b's right mouth, with its sidewalk outer point and curb height. */
typedef struct pm__jpt {
    pm_v2 p, out;
    double ch;
} pm__jpt;

typedef struct pm__jblock {
    PM_VEC(pm__jpt) pts;
    size_t cut;          /* roundabout: index of the radial cut point in pts */
} pm__jblock;

typedef struct pm__junction {
    pm_arena *a;
    pm_scene *scene;
    const pm_junction_params *prm;
    pm_junction_diag *diag;
    PM_VEC(pm_junction_warning) warnings;
    pm_v2 c;
    size_t n;
    pm__jarm *arms;          /* sorted (merged junctions: in outline order) */
    pm__jarm *rays;          /* merged junctions: 2 per link, [2 i] from a to b */
    pm__jcorner *corners;    /* corner k between sorted arms k and k+1 */
    pm__jblock *blocks;      /* block k belongs to corner k */
    bool any_sidewalk;
    /* roundabout */
    bool ring;
    double R, Ri;
    PM_VEC(double) island_ang;   /* island points' angles, increasing */
    size_t *cut_island;          /* per corner: index of its cut in island_ang */
    /* heights, set by pm__heights_init (junction_heights.c); the four
     * after sloped only when it is (unset, zero, on a flat junction) */
    bool sloped;                 /* the arms' elevations are not all equal */
    double tol;                  /* allowed gap between the mesh and the blend (m) */
    double hmin;                 /* no refinement below this edge length (m) */
    pm_v2 *mouth_seg;            /* per sorted arm: final right and left mouth points */
    double *mouth_inv_l2;        /* per sorted arm: 1 / squared mouth length (0 if none) */
    /* mesh results, filled by junction_mesh.c */
    size_t ncontour;             /* asphalt vertices 0..ncontour-1 are the contour */
    pm_v2 *contour;              /* final (snapped, float-exact) points */
    double *contour_xy;          /* the same as x, y pairs */
    bool star;                   /* the contour is star-shaped around c */
    uint32_t *mouth_left, *mouth_right;   /* per sorted arm: asphalt vertex index */
    size_t nisland;
    pm_v2 *island;               /* final island points (asphalt vertices after the contour) */
    /* merged junctions: whether corners along links get fillets, and how many did */
    bool chain_fillets;
    size_t nchain_fillets;
    /* this attempt cuts corners beyond an arm's room (cut_tight_corners,
     * once the attempts without failed) */
    bool cut;
} pm__junction;

/* Records a geometry failure naming two arms (request indices, -1 unused);
 * returns PM_ERR_GEOMETRY. */
int pm__jfail(pm__junction *J, pm_junction_error e, int arm_a, int arm_b, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* PM_JUNCTION_ARM_TOO_SHORT for the corner between arms A and B, lying
 * `at` along S (A or B, the arm it overshoots), which diag->short_arm
 * names. */
int pm__jfail_beyond(pm__junction *J, const pm__jarm *A, const pm__jarm *B, const pm__jarm *S, double at);
/* Adds a corner-radius warning; returns 0 or PM_ERR_NOMEM. */
int pm__jwarn(pm__junction *J, size_t corner, double requested, double actual);
/* The corner's sidewalk left out: its outer corner lies `at` metres along
 * arm `arm` (request index), beyond the arm's room `room`. */
int pm__jwarn_sidewalk(pm__junction *J, size_t corner, int arm, double at, double room);
/* A merged junction's corner along links left without sidewalk: the arms'
 * sidewalks start C->qa and C->qb out. */
int pm__jwarn_chain_sidewalk(pm__junction *J, size_t corner);

/* junction_merged.c: a merged junction's arms in outline order and the
 * links each corner walks along (J->arms sorted by node then angle). */
int pm__merged_order(pm__junction *J);
/* A corner that walks along links: its outline points and a's and b's
 * parameters there (ta, sb). */
int pm__chain_corner(pm__junction *J, size_t k);
/* After the mesh: every node and link of a merged junction lies inside
 * its final outline (else PM_JUNCTION_LINKS_OVERLAP). */
int pm__merged_cover(pm__junction *J);

/* cut_tight_corners: where the other arm's mouth must lie (its parameter
 * along it) when the short arm's (a_short: A's, else B's) mouth is at
 * `room`, the corner where A's left curb meets B's right curb lies `at`
 * along the other arm and `lead` beyond room: past the corner by a
 * quarter of lead (at least 4 snap steps, sin_phi = A->d x B->d > 0), and
 * past every point of the two full strips' overlap that lies on the short
 * arm's road beyond its mouth, so that the two roads cannot overlap. */
double pm__cut_need(const pm__jarm *A, const pm__jarm *B, bool a_short, double room, double at,
                    double lead, double snap, double sin_phi);

/* junction_contour.c: corners (kind, radius, tangent points), mouths, then
 * the blocks of contour points. */
int pm__junction_corners(pm__junction *J);
int pm__junction_blocks(pm__junction *J);

/* junction_mesh.c: snaps the contour, checks it, triangulates it and builds
 * every primitive. */
int pm__junction_mesh(pm__junction *J);

/* Whether the closed polygon p[0..n-1] is simple: no two edges share a
 * point except neighbours at their common vertex, and no neighbour folds
 * back over the other. Exact (robust predicates). On failure bad (may be
 * NULL) gets the two offending edges (edge i runs from p[i] to p[i+1]). */
bool pm__poly_simple(const pm_v2 *p, size_t n, size_t bad[2]);

/* The point as it will be written: snapped in x and z, rounded to float,
 * and read back exactly, so every later test sees the output's own numbers. */
static inline pm_v2 pm__final(const pm__junction *J, pm_v2 p) {
    double g = J->prm->snap;
    float x = (float)pm_snap(p.x, g), z = (float)pm_snap(-p.y, g);
    return pm_v2_xy((double)x, -(double)z);
}

static inline float pm__final_y(const pm__junction *J, double y) {
    return (float)pm_snap(y, J->prm->snap);
}

/* junction_heights.c: the height field and the points it adds to the
 * contour. pm__heights_init needs the blocks (the mouths are their ends);
 * it decides whether the junction is sloped and, when it is, how closely
 * the mesh must follow the field. */
int pm__heights_init(pm__junction *J);
/* Ground height at p: the arms' elevations blended by inverse squared
 * distance to their mouth edges (exactly the elevation on a mouth edge,
 * constant when the junction is flat). */
double pm__jheight_sloped(const pm__junction *J, pm_v2 p);
static inline double pm__jheight(const pm__junction *J, pm_v2 p) {
    /* (inline: a flat junction's every vertex asks, and needs no call) */
    return J->sloped ? pm__jheight_sloped(J, p) : J->arms[0].elev;
}
/* Sloped junctions only: adds points along the blocks' curb runs and the
 * island ring (between existing ones, on the same straight segments or on
 * the island's circle) wherever the straight edge between two points
 * strays from the height field by more than tol / 2. */
int pm__densify(pm__junction *J);

/* junction_refine.c: a triangulation whose interior is refined until its
 * linear heights follow the height field. */
typedef struct pm__tmesh {
    PM_VEC(pm_v2) v;         /* final (snapped, float-exact) points */
    PM_VEC(double) y;        /* final heights, as written */
    PM_VEC(uint32_t) t;      /* 3 per triangle, counter-clockwise from +Y */
    PM_VEC(uint32_t) nb;     /* 3 per triangle: across edge i (t[i] -> t[i+1]) the
                              * neighbour's 3 * triangle + edge, or PM__NO_NB */
} pm__tmesh;
#define PM__NO_NB UINT32_MAX

/* Turns m (its v, y and t filled; the boundary = edges of one triangle)
 * into a constrained Delaunay triangulation, then adds interior points
 * (after the existing ones) until every triangle's linear heights are
 * within J->tol of pm__jheight + yoff at its centroid and edge midpoints,
 * or its longest edge is below J->hmin, or max_new points were added.
 * Boundary edges are never split; every triangle stays counter-clockwise
 * with positive area on the final coordinates. Returns 0 or PM_ERR_NOMEM. */
int pm__tmesh_refine(pm__junction *J, pm__tmesh *m, double yoff, size_t max_new);

/* A point on arm's curb-parallel line: o + side * off * n + t * d. */
static inline pm_v2 pm__arm_pt(const pm__jarm *a, double side, double t, double off) {
    return pm_v2_axpy(pm_v2_axpy(a->o, side * off, a->n), t, a->d);
}
#endif

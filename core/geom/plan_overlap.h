#ifndef PM_PLAN_OVERLAP_H
#define PM_PLAN_OVERLAP_H
/* Plan-view (x, z) overlap of a set of triangles: which pairs' interiors
 * meet. Candidate pairs come from a uniform grid over the triangles'
 * bounds; each pair is decided exactly (separating edges with exact
 * orientation), so shared vertices, shared edges and collinear boundaries
 * never count. Used by the network (core/network/network_overlap.c) and the
 * road (core/road/road_overlap.c) to refuse meshes lying on themselves. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "scene/arena.h"

/* The bounds of the plan points xz[i0 .. i1) (none: +inf .. -inf), two
 * at a time in SSE2 lanes. */
static inline void pm_xz_box(const float *xz, uint32_t i0, uint32_t i1, float lo[2], float hi[2]) {
    uint32_t i = i0;
#ifdef __SSE2__
    __m128 l = _mm_set1_ps(HUGE_VALF), h = _mm_set1_ps(-HUGE_VALF);
    for (; i + 2 <= i1; i += 2) {
        __m128 v = _mm_loadu_ps(xz + 2 * (size_t)i);
        l = _mm_min_ps(l, v);
        h = _mm_max_ps(h, v);
    }
    l = _mm_min_ps(l, _mm_movehl_ps(l, l));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    float t[4];
    _mm_storeu_ps(t, l);
    lo[0] = t[0], lo[1] = t[1];
    _mm_storeu_ps(t, h);
    hi[0] = t[0], hi[1] = t[1];
#else
    lo[0] = lo[1] = HUGE_VALF, hi[0] = hi[1] = -HUGE_VALF;
#endif
    for (; i < i1; i++) {
        float x = xz[2 * (size_t)i], z = xz[2 * (size_t)i + 1];
        lo[0] = x < lo[0] ? x : lo[0], hi[0] = x > hi[0] ? x : hi[0];
        lo[1] = z < lo[1] ? z : lo[1], hi[1] = z > hi[1] ? z : hi[1];
    }
}

/* A triangle in plan: corners are the mesh's floats, kept as such to keep
 * the array small and widened to doubles exactly to test. part, aux and
 * flag belong to the caller (what the triangle is part of). */
typedef struct pm_ptri {
    float f[3][2];             /* counter-clockwise in pm_orient2d's sense */
    uint32_t part, aux;
    uint8_t flag;
} pm_ptri;

/* A triangle's bounds and first cells: the candidate loop reads only these. */
typedef struct pm_pbox {
    float lo[2], hi[2];
    uint16_t cx, cz;
} pm_pbox;

typedef struct pm_pgrid {
    double x0, z0, cell, inv;  /* inv = 1 / cell */
    uint32_t nx, nz;
    uint32_t *start;           /* nx * nz + 1 */
    uint32_t *items;           /* triangle indices, cell by cell */
    pm_pbox *box;              /* per triangle */
} pm_pgrid;

typedef struct pm_pset {
    pm_ptri *tri;
    uint32_t ntri, cap;
    pm_pgrid g;
} pm_pset;

/* Room for cap triangles in a. */
int pm_pset_init(pm_arena *a, pm_pset *S, uint32_t cap);

/* Adds the plan triangle of 3D float corners a, b, c (x, z), turned
 * counter-clockwise; false (nothing added) when it has no plan area or the
 * set is full. */
bool pm_pset_add(pm_pset *S, const float *a, const float *b, const float *c, uint32_t part,
                 uint32_t aux, uint8_t flag);

/* Builds the grid over the triangles added (at least one). */
int pm_pset_grid(pm_arena *a, pm_pset *S);

/* The bounds of t in plan, as pm_pset_grid keeps them. */
void pm_ptri_bounds(const pm_ptri *t, float lo[2], float hi[2]);

/* The cells pm_pset_grid would choose for n (at least one) triangles of
 * these bounds (lo, hi; in the set's order): g's origin, cell size and
 * counts, nothing allocated. A caller that finds pairs some other way
 * orders them as pm_pset_sweep would report them with it (below). */
void pm_pgrid_size(pm_pgrid *g, const pm_pbox *box, uint32_t n);

/* Cell of a plan coordinate (axis 0: x, 1: z), clamped to g. (Inline:
 * grids call it per triangle, per corner.) */
static inline uint32_t pm_pgrid_cell(const pm_pgrid *g, double v, int axis) {
    double c = (v - (axis ? g->z0 : g->x0)) * g->inv;
    uint32_t n = axis ? g->nz : g->nx;
    if (!(c > 0)) return 0;
    return c >= n ? n - 1 : (uint32_t)c;   /* truncation: floor for c > 0 */
}

/* The order of the left of a triangle's bounds as an unsigned key (-0 as
 * +0). pm_pset_sweep reports pair (a, b) in the cell of the larger lower
 * corner of their bounds (cells by z, then x), within a cell by (key of
 * lo[0], index in the set) of a, then of b, a being the smaller. */
uint32_t pm_pbox_left_key(float lo0);

/* Grid cell of a plan coordinate, clamped to the set's grid. */
uint32_t pm_pset_cell_x(const pm_pset *S, double x);
uint32_t pm_pset_cell_z(const pm_pset *S, double z);

/* Called for each pair of overlapping triangles (each pair once, in a
 * fixed order); skip (NULL: none) leaves a candidate pair out before the
 * exact test. A nonzero return of hit stops the sweep and is returned. */
typedef bool (*pm_pset_skip_fn)(void *ctx, const pm_ptri *a, const pm_ptri *b);
typedef int (*pm_pset_hit_fn)(void *ctx, const pm_ptri *a, const pm_ptri *b);
int pm_pset_sweep(const pm_pset *S, pm_pset_skip_fn skip, pm_pset_hit_fn hit, void *ctx);

/* Whether the interiors of a and b meet (exact). */
bool pm_ptri_overlap(const pm_ptri *a, const pm_ptri *b);

/* A line through p and q (two distinct points), with one more point k
 * whose side is known exactly (ko: pm_orient2d(p, q, k)), e.g. a mouth's
 * corners and the centre between them. */
typedef struct pm_pline { double p[2], q[2], k[2], ko; } pm_pline;
void pm_pline_init(pm_pline *L, const double p[2], const double q[2], const double k[2]);

/* Which closed half-plane of L t lies in, exactly: PM_PTRI_LEFT when no
 * corner is right of p -> q (pm_orient2d < 0), PM_PTRI_RIGHT when none is
 * left of it, 0 when it straddles the line or a corner (not p, q or k)
 * is too close to it for the floating-point estimate (never a wrong
 * side; the exact stage is left out: it costs more than the pair tests
 * it would save). Two triangles in opposite closed half-planes
 * (pm_ptri_apart) have disjoint interiors, so pm_ptri_overlap says no for
 * them: a pair test can be left out by these alone. */
enum { PM_PTRI_LEFT = 1, PM_PTRI_RIGHT = 2 };
unsigned pm_ptri_side(const pm_ptri *t, const pm_pline *L);
static inline bool pm_ptri_apart(unsigned a, unsigned b) {
    return ((a & PM_PTRI_LEFT) && (b & PM_PTRI_RIGHT)) || ((a & PM_PTRI_RIGHT) && (b & PM_PTRI_LEFT));
}

/* A mouth's seam in plan as a bent line: from its corner p to the point k
 * between the corners (a road's centre vertex, which rounding leaves a
 * hair off the line p q) to its other corner q, continued beyond p along
 * k -> p and beyond q along k -> q. That curve is simple (the angle at k
 * is checked obtuse) and parts the plane in two: the side sigma (+1: the
 * left of p -> k -> q, pm_orient2d > 0; -1: the right) and the other.
 * With l1 the line p k and l2 the line k q, B1 and B2 their open sides
 * sigma and A1, A2 their closed other sides, the side sigma is
 *  - the convex B1 and B2 (closed) when the path turns toward sigma at k
 *    (turn: the exact sign of pm_orient2d(p, k, q), equal to sigma),
 *  - B1 or B2 (closed) when it turns away (the other side convex: A1 and
 *    A2), one closed half-plane when p, k, q are collinear (turn 0).
 * Two triangles, one in each closed side, have disjoint interiors, so
 * pm_ptri_overlap says no for them (docs/network.md, "The mouth's bent
 * line"). */
typedef struct pm_pbent {
    double ax[2], az[2], bx[2], bz[2];   /* l1 (p, k) and l2 (k, q) side by side */
    float f[3][2];             /* p, k, q as the mesh's floats */
    int turn;                  /* PM_PBENT_TURN_UNKNOWN until pm_pbent_turn asks it */
} pm_pbent;

#define PM_PBENT_TURN_UNKNOWN 2

/* The exact sign of pm_orient2d(a, b, c) (+1, -1, 0) for points whose
 * coordinates are floats, without pm_orient2d's adaptive stages. */
int pm_orient2d_f32_sign(const float a[2], const float b[2], const float c[2]);

/* M from the floats of p, k, q (x, z); false (M unusable) when two are the
 * same point or the angle at k is not clearly obtuse. The turn is left
 * unknown: pm_pbent_turn finds it when first asked. */
bool pm_pbent_init(pm_pbent *M, const float p[2], const float k[2], const float q[2]);
/* The exact sign of pm_orient2d(p, k, q) (pm_orient2d_f32_sign), found
 * once and kept in M. */
int pm_pbent_turn(pm_pbent *M);

/* The side (+1 or -1) of M on which the region bounded by the simple loop
 * xz (m plan points, either way round) lies wholly, or 0 when that is not
 * shown: every point of the loop other than p, k and q strictly on one
 * side of both l1 and l2 (the filter sure of each sign), and no edge of
 * the loop from p to q or back. Exact where it answers; turn not needed. */
int pm_pbent_loop_side(const pm_pbent *M, const float *xz, uint32_t m);
/* The same for n (at most 2) bent lines at once, into side[0 .. n) (a
 * NULL line: side 0), each run of the loop's points bounded once. */
void pm_pbent_loop_sides(const pm_pbent *const *M, int n, const float *xz, uint32_t m, int *side);

/* Whether each of the n triangles t[0 .. n) (3D float corners, x z)
 * lies in the closed side -sigma of M, shown exactly: false also when a
 * corner is too close to l1 or l2 for the filter (stops at the first
 * triangle not shown). M's lanes are read once for all n. (Finds M's
 * turn when it needs it.) */
bool pm_pbent_other_side_all(pm_pbent *M, int sigma, const float *const (*t)[3], uint32_t n);

/* A mouth's seam of up to five plan points s_0 .. s_n-1 (with a sidewalk:
 * the band's outer point beside p, p, k, q, the outer point beside q),
 * continued beyond s_0 along s_1 -> s_0 and beyond s_n-1 along
 * s_n-2 -> s_n-1: the curve C. Each piece's direction is shown (a sure
 * floating-point sign) to rise along d = s_n-1 - s_0, so C is the graph
 * of a function over that axis and parts the plane in two: side +1 (left
 * of s_0 -> s_n-1, pm_orient2d > 0, of each piece) and -1. A region is in
 * a closed side when its boundary is; an edge is when its ends off C are
 * strictly on that side of every piece's line l_i (s_i, s_i+1) and, for
 * each piece whose span along d it may cross, its ends on C (seam
 * points) are on the closed side of l_i (exact signs, o below). Two
 * triangles, one in each closed side, have disjoint interiors
 * (docs/network.md, "The mouth's seam with sidewalks"). */
typedef struct pm_pseam {
    int n;                     /* points, 3 .. 5 */
    float f[5][2];             /* the points as the mesh's floats */
    float lo[2], hi[2];        /* their bounds */
    double ax[4], az[4], bx[4], bz[4];   /* l_i from (ax, az) to (bx, bz); the last again past n - 1 */
    double gx[4], gz[4];       /* l_i's gradient toward side +1: -(bz - az), bx - ax */
    signed char o[5][4];       /* o[j][i]: the exact sign of pm_orient2d(s_i, s_i+1, s_j), 2 until asked */
} pm_pseam;

/* S from n (3 .. 5) float points; false when two neighbours are the same
 * point or a piece is not shown to rise along d. */
bool pm_pseam_init(pm_pseam *S, const float (*pts)[2], int n);

/* The side (+1, -1) of each of n (at most 2) seams S[e] on which the
 * region bounded by the simple loop xz (m plan points) lies, into
 * side[0 .. n), 0 when not shown (or S[e] NULL): every point not on the
 * seam strictly on that side of every l_i (the filter sure), every edge
 * with an end on the seam passing the edge rule; each run of the loop's
 * points bounded once for both. */
void pm_pseam_loop_sides(pm_pseam *const *S, int n, const float *xz, uint32_t m, int *side);

/* Whether the triangle of 3D float corners a, b, c (x, z) lies in the
 * closed side `side` of S, shown as for a loop. */
bool pm_pseam_tri_side(pm_pseam *S, int side, const float *a, const float *b, const float *c);

/* Whether each of n triangles, corners v[3 t .. 3 t + 3) (3D floats: x
 * and z read), lies in the closed side `side` of S, each shown as by
 * pm_pseam_tri_side (false at the first one not shown). */
bool pm_pseam_tris_side(pm_pseam *S, int side, const float *const *v, uint32_t n);

/* A point inside both overlapping triangles (plan), to name where. */
void pm_ptri_witness(const pm_ptri *a, const pm_ptri *b, double out[2]);

/* The corners of t as doubles. */
void pm_ptri_corners(const pm_ptri *t, double v[3][2]);
#endif

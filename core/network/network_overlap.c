/* Plan-view overlap of the built network: two asphalt or sidewalk
 * triangles whose interiors meet in (x, z) mean two pieces (or two parts of
 * one) lie on top of each other, a mesh no valid request may get. Each
 * pair is decided exactly (separating edges with pm_orient2d), so shared
 * vertices, shared edges and collinear boundaries never count.
 *
 * The triangles come in clusters: a junction (its own pairs are its
 * generator's, never tested) or a road (its edges' asphalt and its
 * sidewalk). A road's own pairs are tested one by one when it has a few
 * triangles, else shown disjoint at once by its outline
 * (geom/plan_boundary.h) and tested pairwise over a grid only when that
 * fails; two clusters' pairs are tested only where the clusters' bounds
 * meet (pairs of clusters from a grid over their bounds), among the
 * triangles reaching into that box. A junction's triangles are listed
 * only then (most junctions only touch their roads), and a junction and
 * its own road are first parted by the line of their seam, the road
 * unlisted (pm__bent_apart). What is found is
 * then put in the order one grid sweep over all the triangles (the
 * check's first form) reported it, so the problems, the sidewalks cut
 * back and their order stay as they were. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "network/network_internal.h"
#include "geom/plan_boundary.h"
#include "geom/plan_overlap.h"
#include "geom/predicates.h"
#include "scene/result.h"

#define PM__MAX_REPORTED 20

/* Triangles: part = edge e (< E), node E + n, road sidewalk E + V + r;
 * aux = its road, or UINT32_MAX (a junction's); flag = from the sidewalk
 * primitive. */

/* One overlap of two named things: an edge e (< E) or a node E + n. */
typedef struct pm__ohit {
    uint64_t key;              /* (smaller << 32) | larger, + 1: 0 is empty */
    double point[2];
    pm_ptri t[2];
} pm__ohit;

/* A set triangle by its place in the scene: triangle t of the asphalt
 * (prim 0), or of the sidewalk (prim 2) with PM__SW: ascending refs are
 * the order of the one set the check used to build. */
#define PM__SW 0x80000000u
#define PM__TAKEN 0x80000000u  /* in own: the triangle is in a cluster already */

/* A cluster's triangles are ref[first .. first + count); lo, hi bound
 * them. A junction's are listed only when a pair of clusters or the
 * order needs them (pm__expand): node is its node until then, else
 * UINT32_MAX, and its bounds are those of all its triangles (with any of
 * no plan area: larger bounds only cost time). */
typedef struct pm__clu {
    uint32_t first, count, node;
    uint32_t road;             /* a road shown disjoint unlisted (pm__road_shown), else UINT32_MAX */
    float lo[2], hi[2];
} pm__clu;

/* One pair found: cluster-order indices (a, b), then its place in the
 * sweep's order (cell, then each one's left key and set index). */
typedef struct pm__pair {
    uint64_t cell, ka, kb;
    uint32_t a, b;
} pm__pair;

typedef struct pm__ov {
    pm__net *N;
    uint32_t E, V;
    const pm_scene *sc;
    uint32_t na;               /* asphalt triangles: own[na + t] is sidewalk t's */
    uint32_t *own;             /* per scene triangle: its part, UINT32_MAX: none */
    uint32_t *ref;             /* per set triangle, cluster by cluster */
    pm_pbox *box;              /* ... its bounds */
    uint32_t ntri, tcap;       /* set triangles listed, room in ref and box */
    pm__clu *clu;
    uint32_t nclu;
    PM_VEC(pm__pair) pairs;
    uint32_t *head[2];         /* per asphalt / sidewalk vertex: its first edge in
                                * pm__outline's pool, UINT32_MAX: none (pm__heads) */
    bool roads_apart;          /* each road piece's triangles after the last piece's:
                                * every road triangle owned by its piece's edge */
    pm_arena *w;               /* per cluster or cluster pair, reset each time */
    uint64_t *pkey;            /* pm__seam_loop's point table, pcap each */
    uint32_t *pid;             /* (a power of two), empty between roads */
    uint32_t pcap;
    uint32_t *stamp;           /* per asphalt vertex: the road (+ 1) whose border last met it (pm__road_strip) */
    pm_pbox **chunk;           /* per road: its chunks' bounds, once probed (pm__road_probe) */
    uint32_t *jclu;            /* per node: its junction's cluster, UINT32_MAX: none */
    uint8_t *rside;            /* per road: the side of each end's bent line it lies on (pm__road_sides),
                                * or of its seam of five (bit 4 + e: pm__walk_sides) */
    pm_pseam **rseam;          /* per road: its ends' seams of five, [e] read when rside's bit 4 + e is
                                * set (pm__walk_sides builds them; pm__seam5_apart reads them) */
    pm_pbent *rbent;           /* per road, per end: its mouth's bent line where pm__road_sides showed a side */
    const float *lxz;          /* the summed way's asphalt loop shown (lm points, in O->w), else NULL */
    uint32_t lm;
    pm_pset set;               /* the whole set and its grid: built only to name
                                * a road sidewalk's edge (pm__sidewalk_edge) */
    bool whole;
    pm__ohit *hits;            /* open addressing on key */
    size_t cap, nhits;
    pm_arena *s;               /* the request's arena */
    bool retreat;              /* sidewalks on other pieces are cut back, not reported */
    bool moved;                /* ... and some were */
    bool stuck;                /* ... or one could not be */
} pm__ov;

/* ---- the triangles and their owners ---- */

static void pm__own_range(uint32_t *own, uint32_t first, uint32_t count, uint32_t part) {
    uint32_t *o = own + first, *end = o + count;
#ifdef __SSE2__
    /* (Four at a time: most ranges are a road's or a junction's dozens.) */
    const __m128i v = _mm_set1_epi32((int)part);
    for (; end - o >= 4; o += 4) _mm_storeu_si128((__m128i *)(void *)o, v);
#endif
    for (; o < end; o++) *o = part;
}

/* The part of a triangle owned by `own` (one of O->own's), UINT32_MAX for none. */
static uint32_t pm__part(uint32_t own) { return own == UINT32_MAX ? own : own & ~PM__TAKEN; }

/* The road of part: an edge's or a road sidewalk's, UINT32_MAX for a junction. */
static uint32_t pm__road_of(const pm__ov *O, uint32_t part) {
    return part < O->E ? O->N->edge_road[part] - 1 : part >= O->E + O->V ? part - O->E - O->V : UINT32_MAX;
}

/* Adds the scene triangle ref to S as the check sees it (turned
 * counter-clockwise, its part, road and primitive); false when it has no
 * plan area (a vertical face has none) or S is full. */
static bool pm__add_ref(const pm__ov *O, pm_pset *S, uint32_t ref) {
    bool sw = ref & PM__SW;
    uint32_t t = ref & ~PM__SW, part = pm__part(O->own[(sw ? O->na : 0) + t]);
    const pm_prim *P = &O->sc->prims[sw ? 2 : 0];
    const uint32_t *q = P->indices + 3 * (size_t)t;
    return pm_pset_add(S, P->positions + 3 * q[0], P->positions + 3 * q[1], P->positions + 3 * q[2], part,
                       pm__road_of(O, part), sw);
}

/* The set triangle of ref, as pm__add_ref adds it. */
static void pm__tri(const pm__ov *O, uint32_t ref, pm_ptri *T) {
    pm_pset one = {.tri = T, .cap = 1};
    bool added = pm__add_ref(O, &one, ref);
    (void)added;
    assert(added);
}

/* The whole set, in the order of the check's first form, for
 * pm__sidewalk_edge's search (a refused network's naming only). */
static int pm__whole_set(pm__ov *O) {
    uint32_t ns = O->sc->nprims == 3 ? O->sc->prims[2].icount / 3 : 0;
    if (pm_pset_init(O->s, &O->set, O->na + ns)) return PM_ERR_NOMEM;
    for (uint32_t l = 0; l < O->na + ns; l++)
        if (O->own[l] != UINT32_MAX) pm__add_ref(O, &O->set, l < O->na ? l : (l - O->na) | PM__SW);
    O->whole = true;
    return O->set.ntri ? pm_pset_grid(O->s, &O->set) : PM_OK;
}

#ifndef PM__TCAP0               /* (tests/core/test_network_overlap_room.c: 1, to grow them often) */
#define PM__TCAP0(all) (4096u + (all) / 16)   /* set triangles ref and box first have room for, of all */
#endif

static int pm__owners(pm__ov *O, const pm_scene *s) {
    pm__net *N = O->N;
    const pm_prim *A = &s->prims[0];
    const pm_prim *S = s->nprims == 3 ? &s->prims[2] : NULL;
    uint32_t na = A->icount / 3, ns = S ? S->icount / 3 : 0;
    uint32_t *own = O->own = pm_arena_alloc(O->s, ((size_t)na + ns + 1) * sizeof *own);
    /* ref and box grow as triangles are listed (pm__take): most roads
     * are shown without (a tenth of a grid's triangles are listed), and
     * room for all of them was the check's biggest array by far. */
    O->tcap = PM__TCAP0(na + ns) < na + ns ? PM__TCAP0(na + ns) : na + ns;
    O->ref = pm_arena_alloc(O->s, ((size_t)O->tcap + 1) * sizeof *O->ref);
    O->box = pm_arena_alloc(O->s, ((size_t)O->tcap + 1) * sizeof *O->box);
    O->clu = pm_arena_alloc(O->s, ((size_t)N->p->nnodes + N->roads.len + 1) * sizeof *O->clu);
    if (!own || !O->ref || !O->box || !O->clu) return PM_ERR_NOMEM;
    O->sc = s;
    O->na = na;
    pm__own_range(own, 0, na + ns, UINT32_MAX);
    for (uint32_t n = 0; n < N->p->nnodes; n++) {
        const pm__node *V = &N->nodes[n];
        if (!V->scene) continue;
        pm__own_range(own, V->toff, V->tcount, O->E + n);
        pm__own_range(own, V->xt0, V->xtn, O->E + n);
        pm__own_range(own + na, V->swt0, V->swtn, O->E + n);
    }
    uint32_t end = 0;
    O->roads_apart = true;
    for (size_t r = 0; r < N->roads.len; r++) {
        const pm__road *R = &N->roads.data[r];
        for (size_t k = 0; k < R->nsteps; k++) {
            uint32_t t0 = R->piece[4 * k + 2], nt = R->piece[4 * k + 3];
            pm__own_range(own, t0, nt, N->steps.data[R->first_step + k].edge);
            O->roads_apart &= nt == 0 || t0 >= end;
            end = nt && t0 + nt > end ? t0 + nt : end;
        }
        pm__own_range(own + na, R->swt0, R->swtn, O->E + O->V + (uint32_t)r);
    }
    return PM_OK;
}

/* O->head, allocated the first time a road's edges are summed. */
static int pm__heads(pm__ov *O) {
    for (int k = 0; k < 2; k++) {
        if (O->head[k]) continue;
        uint32_t nv = k ? (O->sc->nprims == 3 ? O->sc->prims[2].vcount : 0) : O->sc->prims[0].vcount;
        if (!(O->head[k] = pm_arena_alloc(O->s, ((size_t)nv + 1) * sizeof *O->head[k]))) return PM_ERR_NOMEM;
        memset(O->head[k], 0xff, (size_t)nv * sizeof *O->head[k]);
    }
    return PM_OK;
}

/* ---- pairs found ---- */

typedef struct pm__found {
    pm__ov *O;
    const pm_pset *S;
    uint32_t first;            /* S's triangle i is set triangle first + i ... */
    const uint32_t *map;       /* ... or map[aux] (NULL: none) */
} pm__found;

static int pm__push(pm__ov *O, uint32_t a, uint32_t b) {
    pm__pair p = {.a = a, .b = b};
    return pm_vec_push(O->s, &O->pairs, p) < 0 ? PM_ERR_NOMEM : PM_OK;
}

static int pm__found_hit(void *ctx, const pm_ptri *a, const pm_ptri *b) {
    const pm__found *F = ctx;
    if (F->map) return pm__push(F->O, F->map[a->aux], F->map[b->aux]);
    return pm__push(F->O, F->first + (uint32_t)(a - F->S->tri), F->first + (uint32_t)(b - F->S->tri));
}

/* Two triangles of the two sides of a cluster pair (part 0 and 1 here). */
static bool pm__same_side(void *ctx, const pm_ptri *a, const pm_ptri *b) {
    (void)ctx;
    return a->part == b->part;
}

/* ---- clusters ---- */

/* An edge between scene vertices a < b of one primitive (PM__SW on a: the
 * sidewalk's) and the count of its uses a -> b less those b -> a; next:
 * a's next edge. */
typedef struct pm__iedge { uint32_t a, b, next; int32_t net; } pm__iedge;

/* The m asphalt edges bv[2e] -> bv[2e + 1] (vertex indices; plan points
 * from[e]) as one loop by their indices, convex (pm_loop_convex): 1 when
 * shown, 0 when not (the caller then tries by plan points). */
static int pm__index_loop(pm__ov *O, const uint32_t *bv, const float *from, uint32_t m) {
    uint32_t *out = O->head[0], e = 0, k = 0;
    float *xz = pm_arena_alloc(O->w, 2 * (size_t)m * sizeof *xz);
    if (!xz) return PM_ERR_NOMEM;
    bool ok = true;
    for (uint32_t i = 0; i < m; i++) {
        ok &= out[bv[2 * i]] == UINT32_MAX;
        out[bv[2 * i]] = i;
    }
    for (; ok && k < m; k++) {
        xz[2 * k] = from[2 * e];
        xz[2 * k + 1] = from[2 * e + 1];
        e = out[bv[2 * e + 1]];
        if (e == UINT32_MAX || (e == 0) != (k + 1 == m)) ok = false;
    }
    for (uint32_t i = 0; i < m; i++) out[bv[2 * i]] = UINT32_MAX;
    return ok && k == m ? pm_loop_convex(xz, m) : 0;
}

/* Adds edge u -> w (vertex indices of one primitive, sw: the sidewalk's)
 * to pool: twins on one edge cancel in a per-vertex list, no hashing. */
static inline void pm__edge_add(pm__iedge *pool, uint32_t *head, uint32_t *np, uint32_t u, uint32_t w, uint32_t sw) {
    uint32_t a = u < w ? u : w, b = u < w ? w : u;
    uint32_t e = head[a];
    while (e != UINT32_MAX && pool[e].b != b) e = pool[e].next;
    if (e == UINT32_MAX) {
        e = (*np)++;
        pool[e].a = a | (sw ? PM__SW : 0);
        pool[e].b = b;
        pool[e].next = head[a];
        pool[e].net = 0;
        head[a] = e;
    }
    pool[e].net += u < w ? 1 : -1;
}

/* The edges of the counter-clockwise triangle v, as pm__edge_add. */
static inline void pm__edges_add(pm__ov *O, pm__iedge *pool, uint32_t *np, const uint32_t v[3], uint32_t sw) {
    uint32_t *head = O->head[sw];
    pm__edge_add(pool, head, np, v[0], v[1], sw);
    pm__edge_add(pool, head, np, v[1], v[2], sw);
    pm__edge_add(pool, head, np, v[2], v[0], sw);
}

/* The edges left of a road cluster's (below), room for up to n: vertex
 * indices bv[2 i] -> bv[2 i + 1] of one primitive, plan points from[i] ->
 * to[i], and which primitives they come from (bit 0 asphalt, 1 sidewalk). */
typedef struct pm__left {
    uint32_t *bv, m, prims;
    float *from, *to;
    bool bad;                  /* an edge left more than once one way */
} pm__left;

static int pm__left_init(pm__ov *O, pm__left *L, size_t n) {
    L->from = pm_arena_alloc(O->w, 4 * (n + 1) * sizeof *L->from);
    L->to = L->from ? L->from + 2 * (n + 1) : NULL;
    L->bv = pm_arena_alloc(O->w, 2 * (n + 1) * sizeof *L->bv);
    L->m = L->prims = 0;
    L->bad = false;
    return L->from && L->bv ? PM_OK : PM_ERR_NOMEM;
}

/* Edge a < b of primitive sw whose uses a -> b less b -> a are net. */
static inline void pm__left_add(const pm__ov *O, pm__left *L, uint32_t sw, uint32_t a, uint32_t b, int32_t net) {
    if (net == 0) return;
    if (net != 1 && net != -1) L->bad = true;
    const float *pos = O->sc->prims[sw ? 2 : 0].positions;
    uint32_t m = L->m++, *bv = L->bv;
    bv[2 * m] = net > 0 ? a : b;
    bv[2 * m + 1] = net > 0 ? b : a;
    const float *p = pos + 3 * (size_t)bv[2 * m], *r = pos + 3 * (size_t)bv[2 * m + 1];
    L->from[2 * m] = p[0], L->from[2 * m + 1] = p[2];
    L->to[2 * m] = r[0], L->to[2 * m + 1] = r[2];
    L->prims |= 1u << sw;
}

/* The certificate of geom/plan_boundary.h on the edges left: by their
 * indices when they are one primitive's (pm__index_loop), else by their
 * plan points (pm_edges_simple_loop: where the sidewalk meets the
 * asphalt, the same floats in two primitives). 1: no two of the
 * triangles overlap. */
static int pm__left_loop(pm__ov *O, const pm__left *L) {
    if (L->bad || L->m < 3) return 0;
    int rc = L->prims == 1 ? pm__index_loop(O, L->bv, L->from, L->m) : 0;
    return rc ? rc : pm_edges_simple_loop(O->w, L->from, L->to, L->m);
}

/* The certificate for a road cluster's triangles, their counter-clockwise
 * edges summed in pool (pm__edges_add). Clears the per-vertex lists. */
static int pm__outline(pm__ov *O, pm__iedge *pool, uint32_t np) {
    pm__left L;
    if (pm__left_init(O, &L, np)) return PM_ERR_NOMEM;
    for (uint32_t e = 0; e < np; e++) {
        const pm__iedge *E = &pool[e];
        uint32_t sw = E->a & PM__SW ? 1 : 0, a = E->a & ~PM__SW;
        O->head[sw][a] = UINT32_MAX;
        pm__left_add(O, &L, sw, a, E->b, E->net);
    }
    return pm__left_loop(O, &L);
}

static bool pm__meets(const float alo[2], const float ahi[2], const float blo[2], const float bhi[2]) {
    return alo[0] < bhi[0] && blo[0] < ahi[0] && alo[1] < bhi[1] && blo[1] < ahi[1];
}

/* pm__meets of a triangle's bounds X and a fixed box, the box as
 * pm__mbox makes it: four compares at once in SSE2 lanes (lo < hi and
 * -hi < -lo, a sign flip exact; a NaN meets nothing either way). */
#ifdef __SSE2__
typedef __m128 pm__mbox;
static inline pm__mbox pm__mbox_of(const float lo[2], const float hi[2]) { return _mm_setr_ps(hi[0], hi[1], -lo[0], -lo[1]); }
static inline bool pm__meets_m(const pm_pbox *X, pm__mbox B) {
    __m128 v = _mm_xor_ps(_mm_loadu_ps((const float *)(const void *)X), _mm_setr_ps(0.0f, 0.0f, -0.0f, -0.0f));
    return _mm_movemask_ps(_mm_cmplt_ps(v, B)) == 15;
}
#else
typedef struct pm__mbox { float lo[2], hi[2]; } pm__mbox;
static inline pm__mbox pm__mbox_of(const float lo[2], const float hi[2]) {
    return (pm__mbox){.lo = {lo[0], lo[1]}, .hi = {hi[0], hi[1]}};
}
static inline bool pm__meets_m(const pm_pbox *X, pm__mbox B) { return pm__meets(X->lo, X->hi, B.lo, B.hi); }
#endif

/* Road clusters of up to this many triangles test their own pairs one
 * by one, bounds then pm_ptri_overlap (the pairs the sweep would find:
 * interiors that meet have bounds that meet). Only a road of one: a
 * road listed so is listed again with each junction its bounds meet
 * (pm__cross, every pair of the two tested), while one shown by its
 * outline stays unlisted and pm__cross_probe parts it from its
 * junctions by the mouth's bent line or seam of five. A straight street
 * at netconvert's detail (4 triangles, 8 with its sidewalks) turned 30
 * degrees meets both its junctions' bounds: shown, the whole check costs
 * half the instructions it did with such roads few. */
#ifndef PM__FEW                /* (tests/core/test_network_overlap_parts.c raises it) */
#define PM__FEW 1
#endif

/* The overlapping pairs among a cluster's few triangles t (its set
 * triangles C->first + i, as pm__add_ref makes them). */
static int pm__few_pairs(pm__ov *O, const pm__clu *C, const pm_ptri *t) {
    for (uint32_t i = 0; i < C->count; i++) {
        const pm_pbox *A = &O->box[C->first + i];
        for (uint32_t j = i + 1; j < C->count; j++) {
            const pm_pbox *B = &O->box[C->first + j];
            if (!pm__meets(A->lo, A->hi, B->lo, B->hi) || !pm_ptri_overlap(&t[i], &t[j])) continue;
            int rc = pm__push(O, C->first + i, C->first + j);
            if (rc) return rc;
        }
    }
    return PM_OK;
}

/* Scene triangles ref0 + i (i < count) owned by part. */
typedef struct pm__range { uint32_t ref0, count, part; } pm__range;

#ifdef __SSE2__
/* pm_orient2d_fast of the plan points in lanes 0 (x) and 1 (z) of a, b,
 * c: the same operations on the same doubles, the two products in one
 * register. */
static inline double pm__orient_lanes(__m128 a, __m128 b, __m128 c) {
    __m128d A = _mm_cvtps_pd(a), B = _mm_cvtps_pd(b), D = _mm_cvtps_pd(c);
    __m128d bc = _mm_sub_pd(B, D);
    __m128d lr = _mm_mul_pd(_mm_sub_pd(A, D), _mm_shuffle_pd(bc, bc, 1));   /* left, right */
    double left = _mm_cvtsd_f64(lr), right = _mm_cvtsd_f64(_mm_unpackhi_pd(lr, lr));
    double det = left - right, bound = 3.3306690738754716e-16 * (fabs(left) + fabs(right));
    if (det > bound || -det > bound || bound == 0.0) return det;
    double pa[2], pb[2], pc[2];
    _mm_storeu_pd(pa, A), _mm_storeu_pd(pb, B), _mm_storeu_pd(pc, D);
    return pm_orient2d(pa, pb, pc);
}
#endif

/* Lists the owned, not yet taken triangles of rg[0 .. n) with plan area
 * (what pm_pset_add keeps) as C's, from ref[O->ntri] on, with their
 * bounds; C's bounds grow to hold them. A road's (few: at most PM__FEW)
 * are also kept as set triangles in t3, or their counter-clockwise
 * edges summed in pool (pm__edges_add). */
/* Room in ref and box for n more set triangles (doubled as need be:
 * nothing keeps a pointer into them across a pm__take). */
static int pm__tri_room(pm__ov *O, uint64_t n) {
    if (O->ntri + n <= O->tcap) return PM_OK;
    uint64_t cap = 2 * (uint64_t)O->tcap + 1;
    while (cap < O->ntri + n) cap *= 2;
    uint64_t all = (uint64_t)O->na + (O->sc->nprims == 3 ? O->sc->prims[2].icount / 3 : 0);
    if (cap > all) cap = all;   /* each scene triangle is listed once at most */
    uint32_t *ref = pm_arena_realloc(O->s, O->ref, ((size_t)O->tcap + 1) * sizeof *ref, ((size_t)cap + 1) * sizeof *ref);
    if (!ref) return PM_ERR_NOMEM;
    O->ref = ref;
    pm_pbox *box = pm_arena_realloc(O->s, O->box, ((size_t)O->tcap + 1) * sizeof *box, ((size_t)cap + 1) * sizeof *box);
    if (!box) return PM_ERR_NOMEM;
    O->box = box;
    O->tcap = (uint32_t)cap;
    return PM_OK;
}

static int pm__take(pm__ov *O, pm__clu *C, const pm__range *rg, size_t n, pm_ptri *t3, pm__iedge *pool,
                    uint32_t *np) {
    uint64_t most = 0;
    for (size_t i = 0; i < n; i++) most += rg[i].count;
    if (pm__tri_room(O, most)) return PM_ERR_NOMEM;
    C->first = O->ntri;
#ifdef __SSE2__
    __m128 clo = _mm_setr_ps(C->lo[0], C->lo[1], 0, 0), chi = _mm_setr_ps(C->hi[0], C->hi[1], 0, 0);
#endif
    for (size_t i = 0; i < n; i++) {
        uint32_t sw = rg[i].ref0 & PM__SW ? 1 : 0, t0 = rg[i].ref0 & ~PM__SW;
        const pm_prim *P = &O->sc->prims[sw ? 2 : 0];
        uint32_t *own = O->own + (sw ? O->na : 0);
        for (uint32_t t = t0; t < t0 + rg[i].count; t++) {
            if (own[t] != rg[i].part) continue;
            own[t] |= PM__TAKEN;
            const uint32_t *q = P->indices + 3 * (size_t)t;
            const float *a = P->positions + 3 * (size_t)q[0], *b = P->positions + 3 * (size_t)q[1],
                        *c = P->positions + 3 * (size_t)q[2];
#ifdef __SSE2__
            /* x and z in lanes 0 and 1. */
            __m128 pa = _mm_unpacklo_ps(_mm_load_ss(a), _mm_load_ss(a + 2));
            __m128 pb = _mm_unpacklo_ps(_mm_load_ss(b), _mm_load_ss(b + 2));
            __m128 pc = _mm_unpacklo_ps(_mm_load_ss(c), _mm_load_ss(c + 2));
            double o = pm__orient_lanes(pa, pb, pc);
#else
            double A[2] = {a[0], a[2]}, B[2] = {b[0], b[2]}, D[2] = {c[0], c[2]};
            double o = pm_orient2d_fast(A, B, D);
#endif
            if (o == 0) continue;
            pm_pbox *X = &O->box[O->ntri];
#ifdef __SSE2__
            /* minps (maxps) gives its first operand when it is the less
             * (greater), else its second: the comparisons below, in their
             * order. */
            __m128 xlo = _mm_min_ps(pc, _mm_min_ps(pa, pb)), xhi = _mm_max_ps(pc, _mm_max_ps(pb, pa));
            _mm_storeu_ps(X->lo, _mm_movelh_ps(xlo, xhi));
            clo = _mm_min_ps(xlo, clo), chi = _mm_max_ps(xhi, chi);
#else
            for (int k = 0; k < 3; k += 2) {
                float l = a[k] < b[k] ? a[k] : b[k], h = a[k] < b[k] ? b[k] : a[k];
                X->lo[k / 2] = c[k] < l ? c[k] : l;
                X->hi[k / 2] = c[k] > h ? c[k] : h;
                C->lo[k / 2] = X->lo[k / 2] < C->lo[k / 2] ? X->lo[k / 2] : C->lo[k / 2];
                C->hi[k / 2] = X->hi[k / 2] > C->hi[k / 2] ? X->hi[k / 2] : C->hi[k / 2];
            }
#endif
            O->ref[O->ntri++] = t | (sw ? PM__SW : 0);
            if (t3) {
                /* pm_pset_add's corners (part, aux and flag unused). */
                pm_ptri *T = &t3[O->ntri - 1 - C->first];
                const float *f1 = o > 0 ? b : c, *f2 = o > 0 ? c : b;
                T->f[0][0] = a[0], T->f[0][1] = a[2];
                T->f[1][0] = f1[0], T->f[1][1] = f1[2];
                T->f[2][0] = f2[0], T->f[2][1] = f2[2];
            } else if (pool) {
                uint32_t v[3] = {q[0], o > 0 ? q[1] : q[2], o > 0 ? q[2] : q[1]};
                pm__edges_add(O, pool, np, v, sw);
            }
        }
    }
    C->count = O->ntri - C->first;
#ifdef __SSE2__
    _mm_storel_pi((__m64 *)C->lo, clo);
    _mm_storel_pi((__m64 *)C->hi, chi);
#endif
    return PM_OK;
}

/* Junction n's triangles: its asphalt, its mouth splits, its slab. */
static void pm__junction_ranges(const pm__ov *O, uint32_t n, pm__range rg[3]) {
    const pm__node *V = &O->N->nodes[n];
    rg[0] = (pm__range){V->toff, V->tcount, O->E + n};
    rg[1] = (pm__range){V->xt0, V->xtn, O->E + n};
    rg[2] = (pm__range){V->swt0 | PM__SW, V->swtn, O->E + n};
}

/* Road r's triangles: its edges' asphalt, its sidewalk (rg: nsteps + 1). */
static void pm__road_ranges(const pm__ov *O, size_t r, pm__range *rg) {
    const pm__net *N = O->N;
    const pm__road *R = &N->roads.data[r];
    for (size_t k = 0; k < R->nsteps; k++)
        rg[k] = (pm__range){R->piece[4 * k + 2], R->piece[4 * k + 3], N->steps.data[R->first_step + k].edge};
    rg[R->nsteps] = (pm__range){R->swt0 | PM__SW, R->swtn, O->E + O->V + (uint32_t)r};
}

/* A junction's or a road's triangles listed (pm__take), once. */
static int pm__expand(pm__ov *O, pm__clu *C) {
    if (C->node != UINT32_MAX) {
        pm__range rg[3];
        pm__junction_ranges(O, C->node, rg);
        if (pm__take(O, C, rg, 3, NULL, NULL, NULL)) return PM_ERR_NOMEM;
        C->node = UINT32_MAX;
    }
    if (C->road != UINT32_MAX) {
        size_t n = O->N->roads.data[C->road].nsteps + 1;
        pm__range *rg = pm_arena_alloc(O->s, n * sizeof *rg);
        if (!rg) return PM_ERR_NOMEM;
        pm__road_ranges(O, C->road, rg);
        if (pm__take(O, C, rg, n, NULL, NULL, NULL)) return PM_ERR_NOMEM;
        C->road = UINT32_MAX;
    }
    return PM_OK;
}

/* Bounds of plan points grown one at a time as a loop is walked, from
 * lo = +inf, hi = -inf: the first point sets them (-0 too), the rest as
 * a scan of the loop's points in order would. */
static inline void pm__grow(float lo[2], float hi[2], float x, float z) {
    lo[0] = x < lo[0] ? x : lo[0];
    hi[0] = x > hi[0] ? x : hi[0];
    lo[1] = z < lo[1] ? z : lo[1];
    hi[1] = z > hi[1] ? z : hi[1];
}

/* The least and greatest vertex (*first, *last) of the triangles t0 ..
 * end of P that own (per triangle) gives to part; how many those are. */
static uint32_t pm__vertex_block(const pm_prim *P, const uint32_t *own, uint32_t part, uint32_t t0, uint32_t end,
                                 uint32_t *first, uint32_t *last) {
    uint32_t l = UINT32_MAX, h = 0, k = 0;
    for (uint32_t t = t0; t < end; t++) {
        if (own[t] != part) continue;
        const uint32_t *q = P->indices + 3 * (size_t)t;
        for (int v = 0; v < 3; v++) {
            l = q[v] < l ? q[v] : l;
            h = q[v] > h ? q[v] : h;
        }
        k++;
    }
    *first = l;
    *last = h;
    return k;
}

#ifdef __SSE2__
/* Bit i set when q[i] (i < 12) is outside vertices base .. base + n - 1
 * (n > 0): the indices less base, in three lanes of four, compared
 * unsigned (sign bits flipped) with n - 1. */
static inline unsigned pm__outside12(const uint32_t *q, uint32_t base, uint32_t n) {
    const __m128i flip = _mm_set1_epi32(INT32_MIN), off = _mm_set1_epi32((int)base);
    const __m128i lim = _mm_set1_epi32((int)((n - 1) ^ 0x80000000u));
    unsigned m = 0;
    for (int l = 0; l < 3; l++) {
        __m128i v = _mm_xor_si128(_mm_sub_epi32(_mm_loadu_si128((const __m128i *)(q + 4 * l)), off), flip);
        m |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(v, lim))) << (4 * l);
    }
    return m;
}
#endif

/* Junction n's cluster, not yet listed: the bounds of its owned
 * triangles (their own pairs are its generator's). */
static void pm__junction_cluster(pm__ov *O, uint32_t n) {
    pm__range rg[3];
    pm__junction_ranges(O, n, rg);
    pm__clu *C = &O->clu[O->nclu];
    float lo[2] = {HUGE_VALF, HUGE_VALF}, hi[2] = {-HUGE_VALF, -HUGE_VALF};
    bool any = false, block = false;
    for (size_t i = 0; i < 3; i++) {
        uint32_t sw = rg[i].ref0 & PM__SW ? 1 : 0, t0 = rg[i].ref0 & ~PM__SW;
        const pm_prim *P = &O->sc->prims[sw ? 2 : 0];
        const uint32_t *own = O->own + (sw ? O->na : 0);
        /* The slab's vertices are its own block: the bounds of every
         * vertex between its triangles' least and greatest index hold
         * theirs, at about a third of the reads (unless the block is
         * much larger than its triangles). */
        uint32_t first = UINT32_MAX, last = 0;
        uint32_t k = sw ? pm__vertex_block(P, own, rg[i].part, t0, t0 + rg[i].count, &first, &last) : 0;
        if (k > 0 && (size_t)(last - first) < 2 * (size_t)k) {
            any = true;
            for (const float *a = P->positions + 3 * (size_t)first; a <= P->positions + 3 * (size_t)last; a += 3) {
                lo[0] = a[0] < lo[0] ? a[0] : lo[0];
                hi[0] = a[0] > hi[0] ? a[0] : hi[0];
                lo[1] = a[2] < lo[1] ? a[2] : lo[1];
                hi[1] = a[2] > hi[1] ? a[2] : hi[1];
            }
            continue;
        }
        /* The asphalt's likewise: its block's vertices (once, after its
         * triangles), and those of its triangles outside it (a mouth's
         * split point is its road's). */
        const pm__node *V = &O->N->nodes[n];
        if (!sw && V->vcount > 0 && V->vcount <= 3 * (V->tcount + V->xtn) + 16) {
            const float *pos = P->positions;
            uint32_t t = t0;
#ifndef PM__JUNCTION_LANES     /* (tests/core/test_network_overlap_parts.c turns it off now and then) */
#define PM__JUNCTION_LANES 1
#endif
#ifdef __SSE2__
            /* Four triangles at a time while all four are owned: their
             * twelve indices outside the block found at once
             * (pm__outside12) and grown in the plain loop's order. */
            const __m128i part4 = _mm_set1_epi32((int)rg[i].part);
            for (; PM__JUNCTION_LANES && t + 4 <= t0 + rg[i].count; t += 4) {
                __m128i o4 = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(own + t)), part4);
                if (_mm_movemask_ps(_mm_castsi128_ps(o4)) != 15) break;
                any = block = true;
                const uint32_t *q = P->indices + 3 * (size_t)t;
                for (unsigned m = pm__outside12(q, V->voff, V->vcount); m; m &= m - 1) {
                    const float *a = pos + 3 * (size_t)q[__builtin_ctz(m)];
                    pm__grow(lo, hi, a[0], a[2]);
                }
            }
#endif
            for (; t < t0 + rg[i].count; t++) {
                if (own[t] != rg[i].part) continue;
                any = block = true;
                const uint32_t *q = P->indices + 3 * (size_t)t;
                for (int v = 0; v < 3; v++)
                    if (q[v] - V->voff >= V->vcount) pm__grow(lo, hi, pos[3 * (size_t)q[v]], pos[3 * (size_t)q[v] + 2]);
            }
            continue;
        }
        for (uint32_t t = t0; t < t0 + rg[i].count; t++) {
            if (own[t] != rg[i].part) continue;
            any = true;
            const uint32_t *q = P->indices + 3 * (size_t)t;
            for (int v = 0; v < 3; v++) {
                const float *a = P->positions + 3 * (size_t)q[v];
                lo[0] = a[0] < lo[0] ? a[0] : lo[0];
                hi[0] = a[0] > hi[0] ? a[0] : hi[0];
                lo[1] = a[2] < lo[1] ? a[2] : lo[1];
                hi[1] = a[2] > hi[1] ? a[2] : hi[1];
            }
        }
    }
    if (block) {
        const pm__node *V = &O->N->nodes[n];
        const float *a = O->sc->prims[0].positions + 3 * (size_t)V->voff;
        for (uint32_t v = 0; v < V->vcount; v++, a += 3) pm__grow(lo, hi, a[0], a[2]);
    }
    if (!any) return;
    *C = (pm__clu){.first = 0, .count = 0, .node = n, .road = UINT32_MAX, .lo = {lo[0], lo[1]}, .hi = {hi[0], hi[1]}};
    O->nclu++;
}

/* ---- a road shown disjoint without listing it ---- */

/* Most roads are clean strips: their certificate needs their triangles'
 * edges summed, not the triangles listed (refs, bounds) as pm__take lists
 * them; that waits until a pair of clusters or the order needs them
 * (pm__expand). Edges are summed per primitive in a window of vertices
 * from base: a row of PM__SLOTS counts per vertex a, one per edge a -> a
 * + d (a strip's neighbours are close in index), read back a row at a
 * time for the counts not zero (pm__row_live). The few edges outside (a road's ends share its junctions' mouth
 * vertices, in their blocks) are summed in a short list searched whole;
 * a road with more than PM__FAR of them is left to pm__edges_add's path. */
#define PM__SLOTS 8            /* (pm__row_live reads a row as 16 bytes) */
#define PM__FAR 64

typedef struct pm__win {
    uint32_t base, span;       /* vertices base .. base + span */
    int16_t *net;              /* PM__SLOTS per vertex: uses a -> a + d less a + d -> a */
} pm__win;

typedef struct pm__sum {
    pm__win w[2];              /* asphalt, sidewalk */
    pm__iedge far[PM__FAR];    /* the edges outside (a | PM__SW, b, net; next unused) */
    uint32_t nfar;
    bool full;                 /* more of those than PM__FAR: not shown here */
} pm__sum;

/* Counts edge a < b (of primitive sw: a | PM__SW) in the far list. */
static void pm__far_add(pm__sum *S, uint32_t a, uint32_t b, int32_t one) {
    uint32_t i = 0;
    while (i < S->nfar && (S->far[i].a != a || S->far[i].b != b)) i++;
    if (i == S->nfar) {
        if (S->nfar == PM__FAR) {
            S->full = true;
            return;
        }
        S->far[S->nfar++] = (pm__iedge){.a = a, .b = b};
    }
    S->far[i].net += one;
}

/* Counts edge u -> w in the window from base of span vertices (net),
 * else in S's far list (a | sw: the primitive's flag). (The window in
 * locals, not read through S: the far list's stores could alias it.) */
#define PM__WIN_ADD(S, u, w)                                                                          \
    do {                                                                                              \
        uint32_t a_ = (u) < (w) ? (u) : (w), d_ = ((u) < (w) ? (w) : (u)) - a_, off_ = a_ - base;     \
        int16_t one_ = (u) < (w) ? 1 : -1;                                                            \
        if (off_ < span && d_ < PM__SLOTS)                                                            \
            net[off_ * PM__SLOTS + d_] += one_;                                                       \
        else                                                                                          \
            pm__far_add(S, a_ | sw, a_ + d_, one_);                                                   \
    } while (0)

/* Counts the edges v0 -> v1 -> v2 -> v0 of a counter-clockwise triangle
 * (distinct vertices) of primitive sw as three PM__WIN_ADDs. */
static inline void pm__tri_add_plain(pm__sum *S, int16_t *net, uint32_t base, uint32_t span, uint32_t sw,
                                     uint32_t v0, uint32_t v1, uint32_t v2) {
    PM__WIN_ADD(S, v0, v1);
    PM__WIN_ADD(S, v1, v2);
    PM__WIN_ADD(S, v2, v0);
}

/* The same counts: the three edges are (lo, mid), (mid, hi) and (lo, hi)
 * of the vertices sorted, the first two counted s and the last -s, s = 1
 * when v0 -> v1 -> v2 runs lo -> mid -> hi round (an even permutation),
 * else -1. When all three fall in the window (rows lo and mid, d < 8) in
 * one test; else as pm__tri_add_plain, in its order (the far list's). */
static inline void pm__tri_add(pm__sum *S, int16_t *net, uint32_t base, uint32_t span, uint32_t sw, uint32_t v0,
                               uint32_t v1, uint32_t v2) {
    uint32_t lo = v0 < v1 ? v0 : v1, hi = v0 < v1 ? v1 : v0;
    uint32_t mid = v2 < lo ? lo : v2 > hi ? hi : v2;
    lo = v2 < lo ? v2 : lo;
    hi = v2 > hi ? v2 : hi;
    if (lo >= base && mid - base < span && hi - lo < PM__SLOTS) {
        uint32_t odd = (uint32_t)(v0 > v1) ^ (uint32_t)(v0 > v2) ^ (uint32_t)(v1 > v2);
        int16_t one = (int16_t)(1 - 2 * (int)odd);
        int16_t *row = net + (size_t)(lo - base) * PM__SLOTS;
        row[mid - lo] += one;
        row[hi - lo] -= one;
        net[(size_t)(mid - base) * PM__SLOTS + (hi - mid)] += one;
        return;
    }
    pm__tri_add_plain(S, net, base, span, sw, v0, v1, v2);
}

/* A window of span vertices from base, its counts zero (int16_t: the
 * caller sums fewer than INT16_MAX triangles, so none overflows). */
static int pm__win_init(pm__ov *O, pm__win *W, uint32_t base, uint32_t span) {
    W->base = base;
    W->span = span;
    W->net = pm_arena_alloc(O->w, (size_t)span * PM__SLOTS * sizeof *W->net + 1);
    if (!W->net) return PM_ERR_NOMEM;
    memset(W->net, 0, (size_t)span * PM__SLOTS * sizeof *W->net);
    return PM_OK;
}

/* The slots of a window's row whose counts are not zero: slot d as bit
 * 2 d (the twins of a strip's inner edges cancel, so most rows have
 * none). The order read is the slots' (ascending d), as a scan of all. */
static inline uint32_t pm__row_live(const int16_t *row) {
#ifdef __SSE2__
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)row);
    return ~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(v, _mm_setzero_si128())) & 0x5555u;
#else
    uint32_t live = 0;
    for (uint32_t d = 0; d < PM__SLOTS; d++) live |= row[d] != 0 ? 1u << (2 * d) : 0u;
    return live;
#endif
}

/* Whether two of rg's ranges share a triangle: pm__take would list it
 * once (taken), the sum here twice. */
static bool pm__ranges_meet(const pm__range *rg, size_t n) {
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const pm__range *a = &rg[i], *b = &rg[j];
            if ((a->ref0 & PM__SW) != (b->ref0 & PM__SW) || a->count == 0 || b->count == 0) continue;
            uint32_t a0 = a->ref0 & ~PM__SW, b0 = b->ref0 & ~PM__SW;
            if (a0 < b0 + b->count && b0 < a0 + a->count) return true;
        }
    return false;
}

/* Sums the counter-clockwise edges of rg[0 .. n)'s owned triangles with
 * plan area in S; how many there are of each primitive in count. */
static void pm__road_sum(pm__ov *O, pm__sum *S, const pm__range *rg, size_t n, uint32_t count[2]) {
    for (size_t i = 0; i < n && !S->full; i++) {
        uint32_t sw = rg[i].ref0 & PM__SW, t0 = rg[i].ref0 & ~PM__SW, part = rg[i].part;
        const pm_prim *P = &O->sc->prims[sw ? 2 : 0];
        const uint32_t *own = O->own + (sw ? O->na : 0), *idx = P->indices;
        const float *pos = P->positions;
        const pm__win *W = &S->w[sw ? 1 : 0];
        const uint32_t base = W->base, span = W->span;
        int16_t *const net = W->net;
        for (uint32_t t = t0, end = t0 + rg[i].count; t < end; t++) {
            if (own[t] != part) continue;
            const uint32_t *q = idx + 3 * (size_t)t;
            const float *a = pos + 3 * (size_t)q[0], *b = pos + 3 * (size_t)q[1], *c = pos + 3 * (size_t)q[2];
            double A[2] = {a[0], a[2]}, B[2] = {b[0], b[2]}, D[2] = {c[0], c[2]};
            double o = pm_orient2d_fast(A, B, D);
            if (o == 0) continue;
            uint32_t v0 = q[0], v1 = o > 0 ? q[1] : q[2], v2 = o > 0 ? q[2] : q[1];
#ifdef PM__SUM_PLAIN           /* (tests/core/test_network_overlap_sum.c builds both) */
            pm__tri_add_plain(S, net, base, span, sw, v0, v1, v2);
#else
            pm__tri_add(S, net, base, span, sw, v0, v1, v2);
#endif
            count[sw ? 1 : 0]++;
        }
    }
}

/* The least and greatest vertex of the owned triangles in rg's ranges of
 * primitive sw (lo > hi: none): the window to sum their edges in. */
static void pm__vertex_range(const pm__ov *O, const pm__range *rg, size_t n, uint32_t sw, uint32_t *lo,
                             uint32_t *hi) {
    const uint32_t *own = O->own + (sw ? O->na : 0), *idx = O->sc->prims[sw ? 2 : 0].indices;
    uint32_t l = UINT32_MAX, h = 0;
    for (size_t i = 0; i < n; i++) {
        if ((rg[i].ref0 & PM__SW ? 1u : 0u) != sw) continue;
        uint32_t t0 = rg[i].ref0 & ~PM__SW;
        for (uint32_t t = t0; t < t0 + rg[i].count; t++) {
            if (own[t] != rg[i].part) continue;
            const uint32_t *q = idx + 3 * (size_t)t;
            for (int k = 0; k < 3; k++) {
                l = q[k] < l ? q[k] : l;
                h = q[k] > h ? q[k] : h;
            }
        }
    }
    *lo = l;
    *hi = h;
}

/* Edge a < b of the asphalt, net uses a -> b, as the loop's next (out,
 * per vertex) from its start; false when it is not +-1 or its start has
 * one already. */
static inline bool pm__out_add(uint32_t *out, uint32_t *src, uint32_t *m, uint32_t a, uint32_t b, int32_t net) {
    if (net == 0) return true;
    if (net != 1 && net != -1) return false;
    uint32_t from = net > 0 ? a : b;
    if (out[from] != UINT32_MAX) return false;
    out[from] = net > 0 ? b : a;
    src[(*m)++] = from;
    return true;
}

/* The certificate on S's edges when they are all the asphalt's: they are
 * linked through the per-vertex list (O->head[0]: the next vertex) and
 * walked once round from the first; 1 when that is all of them and the
 * polygon is convex or simple (lo, hi: its bounds), 0 when not. */
static int pm__asphalt_loop(pm__ov *O, const pm__sum *S, uint32_t cap, float lo[2], float hi[2]) {
    uint32_t *out = O->head[0], *src = pm_arena_alloc(O->w, ((size_t)cap + 1) * sizeof *src), m = 0;
    if (!src) return PM_ERR_NOMEM;
    const pm__win *W = &S->w[0];
    bool ok = true;
    for (uint32_t v = 0; ok && v < W->span; v++)
        for (uint32_t u = pm__row_live(W->net + (size_t)v * PM__SLOTS); ok && u; u &= u - 1) {
            uint32_t d = (uint32_t)__builtin_ctz(u) / 2;
            ok = pm__out_add(out, src, &m, W->base + v, W->base + v + d, W->net[v * PM__SLOTS + d]);
        }
    for (uint32_t i = 0; ok && i < S->nfar; i++) ok = pm__out_add(out, src, &m, S->far[i].a, S->far[i].b, S->far[i].net);
    float *xz = ok && m >= 3 ? pm_arena_alloc(O->w, 2 * (size_t)m * sizeof *xz) : NULL;
    float blo[2] = {HUGE_VALF, HUGE_VALF}, bhi[2] = {-HUGE_VALF, -HUGE_VALF};
    bool loop = false;
    if (xz) {
        /* Once round: back at the first vertex after m steps, not before
         * (so no vertex twice: all m edges taken). */
        const float *pos = O->sc->prims[0].positions;
        uint32_t v = src[0], k = 0;
        do {
            xz[2 * k] = pos[3 * (size_t)v];
            xz[2 * k + 1] = pos[3 * (size_t)v + 2];
            pm__grow(blo, bhi, xz[2 * k], xz[2 * k + 1]);
            v = out[v];
            k++;
        } while (k < m && v != src[0] && v != UINT32_MAX);
        loop = k == m && v == src[0];
    }
    for (uint32_t i = 0; i < m; i++) out[src[i]] = UINT32_MAX;
    if (!loop) return 0;
    int rc = pm_loop_convex(xz, m);
    if (rc == 0) rc = pm_loop_simple(O->w, xz, m);
    if (rc == 1) memcpy(lo, blo, sizeof blo), memcpy(hi, bhi, sizeof bhi), O->lxz = xz, O->lm = m;
    return rc;
}

/* ---- the same where the sidewalk meets the asphalt ---- */

/* Where a road has a sidewalk, its edges left are two primitives' whose
 * twins on the seam share plan points, not indices: each vertex left gets
 * the id of its plan point (per vertex in O->head: a point table on the
 * floats' bits, -0 as +0), twins cancel on point ids (an edge table), and
 * what is left is walked as in pm__asphalt_loop. */
typedef struct pm__pts {
    uint64_t *key;             /* point table: bits + 1 (0: free) */
    uint32_t *id;
    float *xz;                 /* per point id */
    uint32_t n, mask;
    uint32_t *seen, nseen;     /* vertices given an id (sw << 31 | v), to clear */
    uint32_t *slots;           /* per point id: its slot in key, to clear */
} pm__pts;

static uint64_t pm__pbits(float x, float z) {
    union { float f; uint32_t u; } a = {x + 0.0f}, b = {z + 0.0f};
    return ((uint64_t)a.u << 32 | b.u) + 1;   /* (never 0: +1 of at most 2^64 - 2) */
}

static inline uint32_t pm__pid(pm__ov *O, pm__pts *P, uint32_t sw, uint32_t v) {
    uint32_t *slot = &O->head[sw][v];
    if (*slot != UINT32_MAX) return *slot;
    const float *p = O->sc->prims[sw ? 2 : 0].positions + 3 * (size_t)v;
    uint64_t k = pm__pbits(p[0], p[2]);
    uint32_t j = (uint32_t)(k * 0x9E3779B97F4A7C15ull >> 40) & P->mask;
    while (P->key[j] && P->key[j] != k) j = (j + 1) & P->mask;
    if (!P->key[j]) {
        P->key[j] = k;
        P->id[j] = P->n;
        P->xz[2 * P->n] = p[0];
        P->xz[2 * P->n + 1] = p[2];
        P->slots[P->n++] = j;
    }
    P->seen[P->nseen++] = sw << 31 | v;
    return *slot = P->id[j];
}

/* A directed edge between point ids, in the order first met; next: the
 * next from the same point (a list per point). */
typedef struct pm__prec { uint32_t f, g, next, alive; } pm__prec;

/* Edges from one point searched at most: a boundary's points have one or
 * two; more is a mesh no strip makes, not shown here (the caller's
 * fallback decides it). */
#define PM__DEG_MAX 64

/* Cancels the m edges f[i] -> g[i] between point ids (< n) with their
 * twins (the same points the other way), one by one: rec[0 .. *nrec) are
 * the edges met, in the order first met, alive when not cancelled. false
 * when they cannot be one loop's (a point to itself, the same way twice
 * while alive) or a point has more than PM__DEG_MAX. head: n, scratch. */
static bool pm__cancel(const uint32_t *f, const uint32_t *g, uint32_t m, uint32_t n, uint32_t *head, pm__prec *rec,
                       uint32_t *nrec) {
    memset(head, 0xff, (size_t)n * sizeof *head);
    uint32_t k = 0;
    for (uint32_t i = 0; i < m; i++) {
        uint32_t a = f[i], b = g[i], e, steps = 0;
        if (a == b) return false;
        for (e = head[b]; e != UINT32_MAX && rec[e].g != a; e = rec[e].next)
            if (++steps > PM__DEG_MAX) return false;
        if (e != UINT32_MAX && rec[e].alive) {
            rec[e].alive = 0;
            continue;
        }
        for (e = head[a], steps = 0; e != UINT32_MAX && rec[e].g != b; e = rec[e].next)
            if (++steps > PM__DEG_MAX) return false;
        if (e != UINT32_MAX) {
            if (rec[e].alive) return false;
            rec[e].alive = 1;
            continue;
        }
        rec[k] = (pm__prec){.f = a, .g = b, .next = head[a], .alive = 1};
        head[a] = k++;
    }
    *nrec = k;
    return true;
}

/* pm__cancel's plain form, kept as its reference for
 * tests/core/test_network_overlap_sum.c: the edges in a hash table on
 * (f, g) of mask + 1 slots (a power of two, above 2 m; empty before and
 * after). */
typedef struct pm__pedge { uint64_t key; bool alive; } pm__pedge;

static pm__pedge *pm__pedge_at(pm__pedge *t, uint32_t mask, uint64_t key) {
    uint32_t j = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & mask;
    while (t[j].key && t[j].key != key) j = (j + 1) & mask;
    return &t[j];
}

/* Called only by the test that includes this file: unused in the
 * build, which clang would otherwise refuse. */
#if defined(__GNUC__)
__attribute__((unused))
#endif
static inline bool pm__cancel_plain(const uint32_t *f, const uint32_t *g, uint32_t m, pm__pedge *t, uint32_t mask,
                                    uint32_t *kept, pm__prec *rec, uint32_t *nrec) {
    uint32_t nkept = 0;
    bool ok = true;
    for (uint32_t i = 0; ok && i < m; i++) {
        uint64_t a = f[i], b = g[i];
        if (a == b) {
            ok = false;
            break;
        }
        pm__pedge *r = pm__pedge_at(t, mask, (b << 32 | a) + 1);
        if (r->key && r->alive) {
            r->alive = false;
            continue;
        }
        pm__pedge *e = pm__pedge_at(t, mask, (a << 32 | b) + 1);
        if (e->key && e->alive) {
            ok = false;
            break;
        }
        if (!e->key) kept[nkept++] = (uint32_t)(e - t);
        e->key = (a << 32 | b) + 1;
        e->alive = true;
    }
    for (uint32_t i = 0; i < nkept; i++) {
        const pm__pedge *e = &t[kept[i]];
        rec[i] = (pm__prec){.f = (uint32_t)((e->key - 1) >> 32), .g = (uint32_t)(e->key - 1), .alive = e->alive};
        t[kept[i]] = (pm__pedge){0};
    }
    *nrec = nkept;
    return ok;
}

/* The edges of S left (net +-1; false when another), of primitive sw:
 * sw << 31 | from, to, at most cap. */
static bool pm__gather(const pm__sum *S, uint32_t *from, uint32_t *to, uint32_t *m) {
    for (uint32_t k = 0; k < 2; k++) {
        const pm__win *W = &S->w[k];
        for (uint32_t v = 0; v < W->span; v++)
            for (uint32_t u = pm__row_live(W->net + (size_t)v * PM__SLOTS); u; u &= u - 1) {
                uint32_t d = (uint32_t)__builtin_ctz(u) / 2;
                int32_t net = W->net[v * PM__SLOTS + d];
                if (net != 1 && net != -1) return false;
                from[*m] = k << 31 | (W->base + v + (net > 0 ? 0 : d));
                to[(*m)++] = W->base + v + (net > 0 ? d : 0);
            }
    }
    for (uint32_t i = 0; i < S->nfar; i++) {
        const pm__iedge *E = &S->far[i];
        uint32_t sw = E->a & PM__SW, a = E->a & ~PM__SW;
        if (E->net == 0) continue;
        if (E->net != 1 && E->net != -1) return false;
        from[*m] = sw | (E->net > 0 ? a : E->b);
        to[(*m)++] = E->net > 0 ? E->b : a;
    }
    return true;
}

static int pm__kept_loop(pm__ov *O, const pm__prec *rec, uint32_t nrec, const float *pxz, uint32_t n, float lo[2],
                         float hi[2]);

/* The certificate on S's edges of both primitives (at most cap): 1 when
 * what is left once the twins on shared points cancel is one loop, convex
 * or simple (lo, hi: its bounds), 0 when not. */
static int pm__seam_loop(pm__ov *O, const pm__sum *S, uint32_t cap, float lo[2], float hi[2]) {
    uint32_t *from = pm_arena_alloc(O->w, 2 * ((size_t)cap + 1) * sizeof *from), m = 0;
    if (!from) return PM_ERR_NOMEM;
    uint32_t *to = from + cap + 1;
    if (!pm__gather(S, from, to, &m) || m < 3) return 0;
    if (O->pcap < 4 * m) {
        /* (Kept for the next road, emptied by what this one filled.) */
        uint32_t c = 64;   /* (points at most 2 m: half full at most) */
        while (c < 4 * m) c *= 2;
        O->pkey = pm_arena_calloc(O->s, c, sizeof *O->pkey);
        O->pid = pm_arena_alloc(O->s, c * sizeof *O->pid);
        if (!O->pkey || !O->pid) return PM_ERR_NOMEM;
        O->pcap = c;
    }
    pm__pts P = {.key = O->pkey, .id = O->pid, .xz = pm_arena_alloc(O->w, 4 * (size_t)m * sizeof *P.xz),
                 .mask = O->pcap - 1, .seen = pm_arena_alloc(O->w, 2 * (size_t)m * sizeof *P.seen),
                 .slots = pm_arena_alloc(O->w, 2 * (size_t)m * sizeof *P.slots)};
    pm__prec *rec = pm_arena_alloc(O->w, (size_t)m * sizeof *rec);
    uint32_t *head = pm_arena_alloc(O->w, (2 * (size_t)m + 1) * sizeof *head), nrec = 0;
    if (!P.xz || !P.seen || !P.slots || !rec || !head) return PM_ERR_NOMEM;
    /* Each edge's ends as point ids, in place. */
    for (uint32_t i = 0; i < m; i++) {
        uint32_t sw = from[i] >> 31;
        from[i] = pm__pid(O, &P, sw, from[i] & ~PM__SW);
        to[i] = pm__pid(O, &P, sw, to[i]);
    }
    for (uint32_t i = 0; i < P.nseen; i++) O->head[P.seen[i] >> 31][P.seen[i] & ~PM__SW] = UINT32_MAX;
    for (uint32_t i = 0; i < P.n; i++) P.key[P.slots[i]] = 0;
    bool ok = pm__cancel(from, to, m, P.n, head, rec, &nrec);
    return ok ? pm__kept_loop(O, rec, nrec, P.xz, P.n, lo, hi) : 0;
}

/* The edges of rec[0 .. nrec) that are alive, linked by point id (pxz:
 * n points) and walked once round: 1 when they are one loop, convex or
 * simple (lo, hi: its bounds), 0 when not. */
static int pm__kept_loop(pm__ov *O, const pm__prec *rec, uint32_t nrec, const float *pxz, uint32_t n, float lo[2],
                         float hi[2]) {
    uint32_t *out = pm_arena_alloc(O->w, ((size_t)n + 1) * sizeof *out), first = UINT32_MAX, m = 0;
    if (!out) return PM_ERR_NOMEM;
    memset(out, 0xff, ((size_t)n + 1) * sizeof *out);
    for (uint32_t i = 0; i < nrec; i++) {
        const pm__prec *e = &rec[i];
        if (!e->alive) continue;
        uint32_t f = e->f, g = e->g;
        if (out[f] != UINT32_MAX) return 0;
        out[f] = g;
        first = f;
        m++;
    }
    if (m < 3) return 0;
    float *xz = pm_arena_alloc(O->w, 2 * (size_t)m * sizeof *xz);
    if (!xz) return PM_ERR_NOMEM;
    uint32_t v = first, k = 0;
    float blo[2] = {HUGE_VALF, HUGE_VALF}, bhi[2] = {-HUGE_VALF, -HUGE_VALF};
    do {
        xz[2 * k] = pxz[2 * v];
        xz[2 * k + 1] = pxz[2 * v + 1];
        pm__grow(blo, bhi, xz[2 * k], xz[2 * k + 1]);
        v = out[v];
        k++;
    } while (k < m && v != first && v != UINT32_MAX);
    if (k != m || v != first) return 0;
    int rc = pm_loop_convex(xz, m);
    if (rc == 0) rc = pm_loop_simple(O->w, xz, m);
    if (rc == 1) memcpy(lo, blo, sizeof blo), memcpy(hi, bhi, sizeof bhi);
    return rc;
}

/* ---- a road's asphalt shown by its rows ---- */

/* A road without sidewalk triangles is most often one strip of rows of
 * k + 1 vertices (its sections; the first and last rows partly its
 * junctions'), each pair of rows A, B split into 2 k triangles
 * (A_j, A_j+1, B_j), (A_j+1, B_j+1, B_j), row after row. When its
 * triangles are exactly that and all turn one way in plan, every inner
 * edge is met once each way (on the same vertex indices), so the edges
 * pm__road_sum would leave (each triangle turned counter-clockwise) are
 * the strip's border: the first row, the last column, the last row
 * backwards and the first column, walked backwards when the triangles
 * turn clockwise (as seen from +Y, the mesh's own front faces do in the
 * (x, z) frame), known without summing.
 * When that border's vertices are all different it is what the sum
 * leaves (each pair of indices once, +-1), the loop pm__asphalt_loop
 * walks from the same first edge, so the certificate, its bounds and its
 * verdict are the same (tests/core/test_network_overlap_strip.c compares
 * the two on every road). Anything else (a fan's repeated vertex, a flat
 * or turned triangle, another pattern) goes the summed way. */
#define PM__STRIP_COLS 8       /* column pairs k at most */
#ifndef PM__STRIP                /* (tests/core/test_network_overlap_strip.c: checks each against the sum) */
#define PM__STRIP pm__road_strip
#endif
#ifndef PM__BORDER2_ONCE         /* (... and turns it off now and then: the border walked vertex by vertex) */
#define PM__BORDER2_ONCE pm__border2_once
#endif
#ifndef PM__STRIP_MONO           /* (... and the chains' proof, off now and then: the loop tests decide) */
#define PM__STRIP_MONO(sd) ((sd)->mono)
#endif

/* Whether the triangles q[0 .. 3 t) (vertex indices into pos) are a
 * strip of k column pairs as above, all turning one way in plan (*turn:
 * 1 counter-clockwise, -1 clockwise); then rows R_0 .. R_G in row[]
 * (k + 1 each, G = t / 2 k). */
static bool pm__strip_rows(const uint32_t *q, uint32_t t, const float *pos, uint32_t k, uint32_t *row,
                           int *turn) {
    uint32_t g2 = 2 * k;
    if (t % g2 != 0) return false;
    uint32_t G = t / g2, w = k + 1;
    /* Row 0 from the first group; each group's B is the next row. */
    row[0] = q[0];
    for (uint32_t j = 0; j < k; j++) row[j + 1] = q[6 * j + 1];
    double a[2 * (PM__STRIP_COLS + 1)], b[2 * (PM__STRIP_COLS + 1)];
    for (uint32_t j = 0; j <= k; j++) {
        const float *p = pos + 3 * (size_t)row[j];
        a[2 * j] = p[0], a[2 * j + 1] = p[2];
    }
    double s = 0;   /* the first triangle's turn: all must turn so */
    for (uint32_t g = 0; g < G; g++, q += 6 * k) {
        const uint32_t *A = row + (size_t)g * w;
        uint32_t *B = row + (size_t)(g + 1) * w;
        for (uint32_t j = 0; j < k; j++) {
            const uint32_t *u = q + 6 * j, *v = u + 3;
            if (u[0] != A[j] || u[1] != A[j + 1] || v[0] != A[j + 1] || v[2] != u[2]) return false;
            if (j > 0 && u[2] != B[j]) return false;
            B[j] = u[2];
            B[j + 1] = v[1];
        }
        for (uint32_t j = 0; j <= k; j++) {
            const float *p = pos + 3 * (size_t)B[j];
            b[2 * j] = p[0], b[2 * j + 1] = p[2];
        }
        for (uint32_t j = 0; j < k; j++) {
            /* pm__road_sum's orientation: corners 0, 1, 2 as listed. */
            double o1 = pm_orient2d_fast(a + 2 * j, a + 2 * j + 2, b + 2 * j);
            double o2 = pm_orient2d_fast(a + 2 * j + 2, b + 2 * j + 2, b + 2 * j);
            if (s == 0) s = o1 > 0 ? 1 : -1;
            if (!(o1 * s > 0 && o2 * s > 0)) return false;
        }
        memcpy(a, b, 2 * (size_t)w * sizeof *a);
    }
    *turn = s > 0 ? 1 : -1;
    return true;
}

/* The edges pm__road_sum would put in its far list (outside the window
 * base .. base + span or further than PM__SLOTS apart), bounded: six per
 * column pair of a group whose two rows leave the window (three per
 * triangle). Into *far; true. */
static bool pm__strip_far(const uint32_t *row, uint32_t k, uint32_t G, uint32_t base, uint32_t span, uint32_t *far) {
    uint32_t w = k + 1;
    *far = 0;
    for (uint32_t g = 0; g < G; g++) {
        uint32_t l = UINT32_MAX, h = 0;
        for (const uint32_t *v = row + (size_t)g * w; v < row + (size_t)(g + 2) * w; v++) {
            l = *v < l ? *v : l;
            h = *v > h ? *v : h;
        }
        if (l < base || h - base >= span || h - l >= PM__SLOTS) *far += 6 * k;
    }
    return true;
}

#ifdef __SSE2__
/* Whether two triangles (lanes) turn the way flip says (its sign bit
 * set: clockwise) for sure: pm_orient2d_fast's filter, the same
 * operations on the same doubles in each lane; 3 when both do. */
static inline int pm__turn2(__m128d ax, __m128d az, __m128d bx, __m128d bz, __m128d cx, __m128d cz, __m128d flip) {
    const __m128d abs = _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX));
    __m128d left = _mm_mul_pd(_mm_sub_pd(ax, cx), _mm_sub_pd(bz, cz));
    __m128d right = _mm_mul_pd(_mm_sub_pd(az, cz), _mm_sub_pd(bx, cx));
    __m128d det = _mm_xor_pd(_mm_sub_pd(left, right), flip);
    __m128d bound = _mm_mul_pd(_mm_set1_pd(3.3306690738754716e-16),
                               _mm_add_pd(_mm_and_pd(left, abs), _mm_and_pd(right, abs)));
    return _mm_movemask_pd(_mm_cmpgt_pd(det, bound));
}

/* Whether the four triangles between rows A = r[0 .. 3) and B = r[3 ..
 * 6) turn the way s says, exactly (pm__strip_rows's tests). */
static bool pm__turns4(const float *pos, const uint32_t *r, int s) {
    double a[3][2], b[3][2];
    for (int j = 0; j < 3; j++) {
        const float *p = pos + 3 * (size_t)r[j], *q = pos + 3 * (size_t)r[3 + j];
        a[j][0] = p[0], a[j][1] = p[2], b[j][0] = q[0], b[j][1] = q[2];
    }
    for (int j = 0; j < 2; j++)
        if (!(pm_orient2d_fast(a[j], a[j + 1], b[j]) * s > 0) || !(pm_orient2d_fast(a[j + 1], b[j + 1], b[j]) * s > 0))
            return false;
    return true;
}

/* What pm__strip_rows2 reads on the way: the outer columns' plan points
 * (row g's first vertex at xz[0] + 2 g, its last at xz[1] + 2 g, G + 1
 * rows); whether the inner rows' vertices rise (row g's first below
 * its last below row g + 1's first, 0 < g < G): then those are all
 * different; and, when the caller asks (chains), whether the border is
 * two chains rising along the road (pm__strip_axis): then it is a
 * simple loop (mono). */
typedef struct pm__sides { float *xz[2]; bool chains, rising, mono; } pm__sides;

/* The direction pm__strip_rows2 measures a strip along: the chord from
 * its first row's middle vertex m0 to its last's, mG, turned a
 * sixteenth of the way toward its first row's right end r0 from its
 * left end l0 (so that rows square to the road still rise or fall along
 * it). Any direction serves the proof; this one makes a road that turns
 * through less than a right angle pass. Floats (x, z), so that a plan
 * point's projection p0 d0 + p1 d1 rounds once. */
static void pm__strip_axis(const float *l0, const float *m0, const float *r0, const float *mG, float d[2]) {
    float ax = mG[0] - m0[0], az = mG[2] - m0[2], nx = r0[0] - l0[0], nz = r0[2] - l0[2];
    float f = 0.0625f * sqrtf((ax * ax + az * az) / (nx * nx + nz * nz));
    d[0] = ax + f * nx, d[1] = az + f * nz;
}

/* Whether the loop xz (m points) is two chains strictly rising along d
 * (floats, as pm__strip_axis gives it) from one point to another: each
 * step's projection strictly above or below the last's (exact, as in
 * pm__above2), the steps' signs changing exactly twice round the loop
 * (once at its least point, once at its greatest). With triangles that
 * turn one way whose edges sum to the loop, a simple loop
 * (docs/network.md: the strip's border by its chains). */
static bool pm__two_chains(const float *xz, uint32_t m, const float d[2]) {
    if (m < 3) return false;
    const double dx = d[0], dz = d[1];
    double first = (double)xz[0] * dx + (double)xz[1] * dz, last = first;
    unsigned flat = 0, changes = 0, up0 = 0, up = 0;
    for (uint32_t k = 1; k <= m; k++) {
        double p = k < m ? (double)xz[2 * (size_t)k] * dx + (double)xz[2 * (size_t)k + 1] * dz : first;
        unsigned rise = p > last, fall = p < last;
        flat |= !(rise | fall);
        if (k == 1) up0 = up = rise;
        changes += rise ^ up;
        up = rise, last = p;
    }
    changes += up ^ up0;   /* (round the end: the last step against the first) */
    return !flat && changes == 2;
}

/* Whether b's projection is above a's, lane by lane (bits 1, 2), where
 * pa and pb are projections rounded once (pm__strip_axis): exact, as
 * rounding keeps order (docs/network.md). */
static inline int pm__above2(__m128d pa, __m128d pb) { return _mm_movemask_pd(_mm_cmpgt_pd(pb, pa)); }

/* Whether a row's three projections (l, m, r; lanes 0 and 1 of lm = (l,
 * m) and mr = (m, r)) rise or fall strictly along the road. */
static inline bool pm__row_monotone(__m128d lm, __m128d mr) {
    int up = pm__above2(lm, mr), down = pm__above2(mr, lm);
    return up == 3 || down == 3;
}

/* The plan point (x, z) of the vertex at p in lanes 0 and 1. */
static inline __m128 pm__xz_lanes(const float *p) {
    return _mm_unpacklo_ps(_mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(const void *)p), _mm_load_ss(p + 2));
}

/* pm__strip_rows and pm__strip_far for two column pairs (three columns:
 * a network's road), a group of four triangles at a time, two turns at
 * once (pm__turn2; a lane not sure is taken the scalar way), and sd (its
 * chains when chains, which the caller gives as sd->chains). */
static inline __attribute__((always_inline)) bool pm__strip_rows2_at(const uint32_t *q, uint32_t t, const float *pos,
                                                                     uint32_t *row, int *turn, uint32_t base,
                                                                     uint32_t span, uint32_t *far, pm__sides *sd,
                                                                     const bool chains) {
    if (t % 4 != 0) return false;
    uint32_t G = t / 4, nfar = 0;
    uint32_t A0 = q[0], A1 = q[1], A2 = q[7];
    row[0] = A0, row[1] = A1, row[2] = A2;
    const float *p0 = pos + 3 * (size_t)A0, *p1 = pos + 3 * (size_t)A1, *p2 = pos + 3 * (size_t)A2;
    double o = pm_orient2d_fast((double[2]){p0[0], p0[2]}, (double[2]){p1[0], p1[2]},
                                (double[2]){pos[3 * (size_t)q[2]], pos[3 * (size_t)q[2] + 2]});
    if (o == 0) return false;
    int s = o > 0 ? 1 : -1;
    const __m128d flip = _mm_set1_pd(s > 0 ? 0.0 : -0.0);
    /* Row A's plan points, x and z of columns 0 and 1, 1 and 2: row B's
     * of the group before. */
    __m128d a01x = _mm_set_pd(p1[0], p0[0]), a12x = _mm_set_pd(p2[0], p1[0]);
    __m128d a01z = _mm_set_pd(p1[2], p0[2]), a12z = _mm_set_pd(p2[2], p1[2]);
    uint32_t mnA = A0 < A1 ? A0 : A1, mxA = A0 < A1 ? A1 : A0, fall = 0;
    mnA = A2 < mnA ? A2 : mnA;
    mxA = A2 > mxA ? A2 : mxA;
    float *L = sd->xz[0], *Rt = sd->xz[1];
    L[0] = p0[0], L[1] = p0[2], Rt[0] = p2[0], Rt[1] = p2[2];
    /* The outer columns' projections on the road's direction d (lanes
     * left, right), each row's above the row before's. */
    float d[2] = {0, 0};
    if (chains) pm__strip_axis(p0, p1, p2, pos + 3 * (size_t)q[12 * ((size_t)G - 1) + 4], d);
    const __m128d dx = _mm_set1_pd(d[0]), dz = _mm_set1_pd(d[1]);
    __m128d pjA = _mm_add_pd(_mm_mul_pd(_mm_shuffle_pd(a01x, a12x, 2), dx), _mm_mul_pd(_mm_shuffle_pd(a01z, a12z, 2), dz));
    bool mono = chains && pm__row_monotone(_mm_add_pd(_mm_mul_pd(a01x, dx), _mm_mul_pd(a01z, dz)),
                                           _mm_add_pd(_mm_mul_pd(a12x, dx), _mm_mul_pd(a12z, dz)));
    int rise = 3;
    /* Row A's indices in lanes 0 .. 2; a group's inner-row test (B0 <
     * B2, and A2 < B0 when A is inner: a2n is A2 + 1 then, else 0) held
     * until the next group shows B inner. */
    __m128i av = _mm_setr_epi32((int)A0, (int)A1, (int)A2, 0);
    uint64_t a2n = 0;
    uint32_t pend = 0;
    for (uint32_t g = 0; g < G; g++, q += 12) {
        /* The group's twelve indices in three lanes of four: (A0, A1, B0,
         * A1), (B1, B0, A1, A2), (B1, A2, B2, B1); each compared with
         * what A and the group's own B0, B1 say it must be. */
        __m128i v0 = _mm_loadu_si128((const __m128i *)q), v1 = _mm_loadu_si128((const __m128i *)(q + 4));
        __m128i v2 = _mm_loadu_si128((const __m128i *)(q + 8));
        __m128 f0 = _mm_castsi128_ps(v0), f1 = _mm_castsi128_ps(v1), fa = _mm_castsi128_ps(av);
        __m128i e0 = _mm_shuffle_epi32(av, _MM_SHUFFLE(1, 0, 1, 0));                 /* A0, A1, -, A1 */
        __m128i e1 = _mm_castps_si128(_mm_shuffle_ps(f0, fa, _MM_SHUFFLE(2, 1, 2, 2)));   /* -, B0, A1, A2 */
        __m128i e2 = _mm_castps_si128(_mm_shuffle_ps(f1, fa, _MM_SHUFFLE(2, 2, 0, 0)));   /* B1, B1, A2, - */
        __m128i w2 = _mm_shuffle_epi32(v2, _MM_SHUFFLE(2, 1, 3, 0));                 /* q8, q11, q9, q10 */
        int ok = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v0, e0))) |
                 _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v1, e1))) << 4 |
                 _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(w2, e2))) << 8;
        if ((ok & 0x7EB) != 0x7EB) return false;
        uint32_t B0 = q[2], B1 = q[4], B2 = q[10];
        av = _mm_castps_si128(_mm_shuffle_ps(_mm_shuffle_ps(f0, f1, _MM_SHUFFLE(0, 0, 2, 2)), _mm_castsi128_ps(v2),
                                             _MM_SHUFFLE(2, 2, 2, 0)));   /* B0, B1, B2, B2 */
        uint32_t *B = row + 3 * (size_t)(g + 1);
        B[0] = B0, B[1] = B1, B[2] = B2;
        /* Each point's x and z in lanes 0 and 1 (x and y read as a pair,
         * z by itself), then as doubles. */
        __m128 xz0 = pm__xz_lanes(pos + 3 * (size_t)B0), xz2 = pm__xz_lanes(pos + 3 * (size_t)B2);
        __m128d d0 = _mm_cvtps_pd(xz0), d1 = _mm_cvtps_pd(pm__xz_lanes(pos + 3 * (size_t)B1)), d2 = _mm_cvtps_pd(xz2);
        _mm_storel_pi((__m64 *)(void *)(L + 2 * g + 2), xz0);
        _mm_storel_pi((__m64 *)(void *)(Rt + 2 * g + 2), xz2);
        __m128d b01x = _mm_unpacklo_pd(d0, d1), b12x = _mm_unpacklo_pd(d1, d2);
        __m128d b01z = _mm_unpackhi_pd(d0, d1), b12z = _mm_unpackhi_pd(d1, d2);
        fall |= pend;   /* (B is row g + 1: the last group's B is not inner) */
        pend = (B0 >= B2) | (a2n > B0);
        a2n = (uint64_t)B2 + 1;
        /* (A0, A1, B0) and (A1, A2, B1); (A1, B1, B0) and (A2, B2, B1). */
        int sure = pm__turn2(a01x, a01z, a12x, a12z, b01x, b01z, flip) &
                   pm__turn2(a12x, a12z, b12x, b12z, b01x, b01z, flip);
        if (sure != 3 && !pm__turns4(pos, row + 3 * (size_t)g, s)) return false;
        uint32_t mnB = B0 < B1 ? B0 : B1, mxB = B0 < B1 ? B1 : B0;
        mnB = B2 < mnB ? B2 : mnB;
        mxB = B2 > mxB ? B2 : mxB;
        uint32_t l = mnA < mnB ? mnA : mnB, h = mxA > mxB ? mxA : mxB;
        nfar += l < base || h - base >= span || h - l >= PM__SLOTS ? 12 : 0;
        if (chains) {
            __m128d pjB = _mm_add_pd(_mm_mul_pd(_mm_shuffle_pd(b01x, b12x, 2), dx),
                                     _mm_mul_pd(_mm_shuffle_pd(b01z, b12z, 2), dz));
            rise &= pm__above2(pjA, pjB);
            pjA = pjB;
        }
        mnA = mnB, mxA = mxB;
        a01x = b01x, a12x = b12x, a01z = b01z, a12z = b12z;
    }
    mono = mono && rise == 3 &&
           pm__row_monotone(_mm_add_pd(_mm_mul_pd(a01x, dx), _mm_mul_pd(a01z, dz)),
                            _mm_add_pd(_mm_mul_pd(a12x, dx), _mm_mul_pd(a12z, dz)));
    *turn = s;
    *far = nfar;
    sd->rising = !fall;
    sd->mono = mono;
    return true;
}

/* (Two copies: the chains' sums cost a road that does not ask nothing.) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
static bool pm__strip_rows2(const uint32_t *q, uint32_t t, const float *pos, uint32_t *row, int *turn,
                            uint32_t base, uint32_t span, uint32_t *far, pm__sides *sd) {
    return sd->chains ? pm__strip_rows2_at(q, t, pos, row, turn, base, span, far, sd, true)
                      : pm__strip_rows2_at(q, t, pos, row, turn, base, span, far, sd, false);
}

/* Whether the border of a strip of two column pairs (rows row[0 ..
 * 3 (G + 1))) has each vertex once, when its inner rows rise (sd): its
 * end rows' six vertices all different and none in the inner rows' range. */
static bool pm__border2_once(const uint32_t *row, uint32_t G, const pm__sides *sd) {
    if (!sd->rising) return false;
    /* The first four in lanes, against themselves turned by one and by
     * two lanes (their six pairs) and against the last two. */
    const __m128i e = _mm_setr_epi32((int)row[0], (int)row[1], (int)row[2], (int)row[3 * G]);
    const uint32_t e4 = row[3 * G + 1], e5 = row[3 * G + 2];
    __m128i eq = _mm_or_si128(_mm_cmpeq_epi32(e, _mm_shuffle_epi32(e, _MM_SHUFFLE(0, 3, 2, 1))),
                              _mm_cmpeq_epi32(e, _mm_shuffle_epi32(e, _MM_SHUFFLE(1, 0, 3, 2))));
    eq = _mm_or_si128(eq, _mm_or_si128(_mm_cmpeq_epi32(e, _mm_set1_epi32((int)e4)), _mm_cmpeq_epi32(e, _mm_set1_epi32((int)e5))));
    if (e4 == e5 || _mm_movemask_ps(_mm_castsi128_ps(eq))) return false;
    /* None in the inner rows' range lo .. hi (when not empty): x - lo
     * <= hi - lo, unsigned (sign bits flipped for the lanes). */
    uint32_t lo = G >= 2 ? row[3] : 1, hi = G >= 2 ? row[3 * G - 1] : 0;
    if (hi < lo) return true;
    const __m128i flip = _mm_set1_epi32(INT32_MIN);
    __m128i x = _mm_xor_si128(_mm_sub_epi32(e, _mm_set1_epi32((int)lo)), flip);
    __m128i out = _mm_cmpgt_epi32(x, _mm_set1_epi32((int)((hi - lo) ^ 0x80000000u)));
    return _mm_movemask_ps(_mm_castsi128_ps(out)) == 15 && e4 - lo > hi - lo && e5 - lo > hi - lo;
}

/* The border of a strip of two column pairs in xz (2 G + 4 points), as
 * pm__road_strip walks it, from the outer columns' points (sd) and the
 * end rows' middle vertices. */
/* o's n plan points (x, z) are src's in the other order, two at a time. */
static inline void pm__points_back(float *o, const float *src, uint32_t n) {
    uint32_t i = 0;
    for (; i + 2 <= n; i += 2) {
        __m128 v = _mm_loadu_ps(src + 2 * (size_t)(n - 2 - i));
        _mm_storeu_ps(o + 2 * (size_t)i, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    }
    if (i < n) o[2 * (size_t)i] = src[0], o[2 * (size_t)i + 1] = src[1];
}

static void pm__border2(const pm__sides *sd, uint32_t G, const float *m0, const float *mG, int turn, float *xz) {
    const float *L = sd->xz[0], *Rt = sd->xz[1];
    float *o = xz;
    *o++ = L[0], *o++ = L[1];
    if (turn > 0) {
        *o++ = m0[0], *o++ = m0[2];
        memcpy(o, Rt, 2 * ((size_t)G + 1) * sizeof *o);
        o += 2 * ((size_t)G + 1);
        *o++ = mG[0], *o++ = mG[2];
        pm__points_back(o, L + 2, G);
    } else {
        memcpy(o, L + 2, 2 * (size_t)G * sizeof *o);
        o += 2 * (size_t)G;
        *o++ = mG[0], *o++ = mG[2];
        pm__points_back(o, Rt, G + 1);
        o += 2 * ((size_t)G + 1);
        *o++ = m0[0], *o++ = m0[2];
    }
}
#endif

/* ---- the mouth's bent line ---- */

/* The seam of road R's end e (0 its start, 1 its end) at a junction: its
 * asphalt vertices left, centre, right; NULL when that end has none. */
static const uint32_t *pm__end_seam(const pm__ov *O, const pm__road *R, int e) {
    const uint32_t *sv = e ? (R->arm1 >= 0 ? R->seam1 : NULL) : (R->arm0 >= 0 ? R->seam0 : NULL);
    uint32_t nv = O->sc->prims[0].vcount;
    return sv && sv[0] < nv && sv[1] < nv && sv[2] < nv ? sv : NULL;
}

/* The bent line of seam sv (geom/plan_overlap.h): p its left, k its
 * centre, q its right; false when it has none. */
static bool pm__end_bent(const pm__ov *O, const uint32_t *sv, pm_pbent *M) {
    const float *pos = O->sc->prims[0].positions;
    const float *a = pos + 3 * (size_t)sv[0], *c = pos + 3 * (size_t)sv[1], *b = pos + 3 * (size_t)sv[2];
    const float p[2] = {a[0], a[2]}, k[2] = {c[0], c[2]}, q[2] = {b[0], b[2]};
    return pm_pbent_init(M, p, k, q);
}

/* The seam of five of seam sv with its outer points out (x, z beside p,
 * then beside q): out[0 .. 2), p, k, q, out[2 .. 4); false when it has
 * none (pm_pseam_init). */
static bool pm__end_seam5(const pm__ov *O, const uint32_t *sv, const float *out, pm_pseam *S) {
    const float *pos = O->sc->prims[0].positions;
    float s[5][2] = {{out[0], out[1]}, {0, 0}, {0, 0}, {0, 0}, {out[2], out[3]}};
    for (int i = 0; i < 3; i++) s[i + 1][0] = pos[3 * (size_t)sv[i]], s[i + 1][1] = pos[3 * (size_t)sv[i] + 2];
    return pm_pseam_init(S, (const float(*)[2])s, 5);
}

/* Road r, just shown disjoint by its outline xz (m points, bounds lo ..
 * hi; its triangles fill the region the outline bounds): for each end at
 * a junction whose cluster's bounds meet lo .. hi (a pair pm__cross_probe
 * will see), the side of that mouth's bent line the whole road lies on
 * (pm_pbent_loop_side), kept in O->rside[r]: bit 2 e shown, bit 2 e + 1
 * the side +1; the bent line kept in O->rbent[2 r + e] for pm__bent_apart. Only where the boxes meet: along the axes none do, and
 * nothing is spent. Not for a road with a sidewalk: its band's outer
 * point at the mouth (the junction slab's, on the mouth's line but for
 * rounding) is on its outline, and no side is shown; pm__walk_sides
 * takes those by the seam of five points. */
static void pm__road_sides_at(pm__ov *O, uint32_t r, const float *xz, uint32_t m, const uint32_t *sv0,
                              const uint32_t *sv1) {
    pm_pbent *M = O->rbent + 2 * (size_t)r;
    const pm_pbent *use[2] = {sv0 && pm__end_bent(O, sv0, &M[0]) ? &M[0] : NULL,
                              sv1 && pm__end_bent(O, sv1, &M[1]) ? &M[1] : NULL};
    if (!use[0] && !use[1]) return;   /* (O->rside[r] stays 0) */
    int side[2] = {0, 0};
    pm_pbent_loop_sides(use, 2, xz, m, side);
    unsigned bits = 0;
    for (int e = 0; e < 2; e++)
        if (side[e]) bits |= (1u | (side[e] > 0 ? 2u : 0u)) << (2 * e);
    O->rside[r] = (uint8_t)bits;
}

/* (Inlined into both callers: most roads meet no junction's box, and the
 * call would cost more than the test.) */
static inline void pm__road_sides(pm__ov *O, uint32_t r, const float *xz, uint32_t m,
                                                                const float lo[2], const float hi[2]) {
    const pm__road *R = &O->N->roads.data[r];
    const uint32_t *sv[2] = {NULL, NULL};
    for (int e = 0; e < 2; e++) {
        int64_t node = e ? R->end : R->start;
        uint32_t j = node >= 0 && node < (int64_t)O->V ? O->jclu[node] : UINT32_MAX;
        if (j != UINT32_MAX && pm__meets(O->clu[j].lo, O->clu[j].hi, lo, hi)) sv[e] = pm__end_seam(O, R, e);
    }
    if (sv[0] || sv[1]) pm__road_sides_at(O, r, xz, m, sv[0], sv[1]);
}

/* Road r's certificate by its rows: 1 shown (its cluster added, as
 * pm__road_shown adds it), 0 not shown, PM_ERR_NOMEM; *sure false when
 * the road is not such a strip (nothing done: the caller sums it). */
static int pm__road_strip(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap, bool *sure) {
    *sure = false;
    const pm__road *R = &O->N->roads.data[r];
    if (rg[n - 1].count != 0 || n < 2 || (size_t)R->vcount > 8 * cap + 64) return PM_OK;
    /* The asphalt ranges one after another, every triangle owned (so when
     * no road piece's range reaches back into an earlier one's). */
    uint32_t t0 = rg[0].ref0, t = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (rg[i].ref0 != t0 + t) return PM_OK;
        const uint32_t *own = O->own + rg[i].ref0, part = rg[i].part;
        uint32_t other = 0;
        for (uint32_t c = 0; !O->roads_apart && c < rg[i].count; c++) other |= own[c] ^ part;
        if (other) return PM_OK;
        t += rg[i].count;
    }
    const pm_prim *P = &O->sc->prims[0];
    const uint32_t *q = P->indices + 3 * (size_t)t0;
    /* k from the first row: triangles 2 j and 2 j + 1 share A_j+1 and B_j. */
    uint32_t k = 0;
    while (2 * k + 1 < t && k < PM__STRIP_COLS && q[6 * k + 3] == q[6 * k + 1] && q[6 * k + 5] == q[6 * k + 2] &&
           (k == 0 || (q[6 * k] == q[6 * k - 3] && q[6 * k + 2] == q[6 * k - 2])))
        k++;
    if (k == 0 || t % (2 * k) != 0) return PM_OK;
    uint32_t w = k + 1, G = t / (2 * k), *row = pm_arena_alloc(O->w, ((size_t)G + 1) * w * sizeof *row);
    if (!row) return PM_ERR_NOMEM;
    int turn;
    uint32_t base = R->voff, span = R->vcount, far;
    uint32_t m = 2 * k + 2 * G, i = 0;
    float *xz = pm_arena_alloc(O->w, 4 * ((size_t)m + 1) * sizeof *xz);
    if (!xz) return PM_ERR_NOMEM;
    float lo[2] = {HUGE_VALF, HUGE_VALF}, hi[2] = {-HUGE_VALF, -HUGE_VALF};
    const float *pos = P->positions;
    bool border = false;   /* xz, lo, hi filled, every vertex once */
    bool mono = false;     /* the border two chains rising along the road */
#ifdef __SSE2__
    if (k == 2) {
        /* (The columns' points kept in xz's second half until the border
         * is copied into its first.) */
        pm__sides sd = {.xz = {xz + 2 * (size_t)m + 2, xz + 3 * (size_t)m + 3}, .chains = true};
        if (!pm__strip_rows2(q, t, pos, row, &turn, base, span, &far, &sd) || far > PM__FAR) return PM_OK;
        mono = PM__STRIP_MONO(&sd);
        if ((border = PM__BORDER2_ONCE(row, G, &sd))) {
            pm__border2(&sd, G, pos + 3 * (size_t)row[1], pos + 3 * (size_t)row[3 * G + 1], turn, xz);
            pm_xz_box(xz, 0, m, lo, hi);
        }
    } else
#endif
    if (!pm__strip_rows(q, t, pos, k, row, &turn) || !pm__strip_far(row, k, G, base, span, &far) || far > PM__FAR)
        return PM_OK;
    /* The border from R_0[0] as the triangles turn: the first row, the
     * last column, the last row back, the first column back; each vertex
     * once (else the sum would differ: the summed way decides), its plan
     * points in xz in the walk's direction. */
    if (!border && !O->stamp && !(O->stamp = pm_arena_calloc(O->s, (size_t)P->vcount + 1, sizeof *O->stamp)))
        return PM_ERR_NOMEM;
    uint32_t *stamp = O->stamp, id = r + 1, repeated = 0;
    float *o = xz;
    ptrdiff_t step = 2;
#define PM__BORDER(v)                                                                                 \
    do {                                                                                              \
        uint32_t v_ = (v);                                                                            \
        const float *p_ = pos + 3 * (size_t)v_;                                                       \
        repeated |= stamp[v_] == id;                                                                  \
        stamp[v_] = id;                                                                               \
        o[0] = p_[0], o[1] = p_[2];                                                                   \
        pm__grow(lo, hi, p_[0], p_[2]);                                                               \
        o += step;                                                                                    \
    } while (0)
    if (!border) {
        /* (Clockwise: the first point, then the rest from the end back.) */
        PM__BORDER(row[0]);
        if (turn < 0) o = xz + 2 * ((size_t)m - 1), step = -2;
        for (uint32_t j = 1; j < k; j++) PM__BORDER(row[j]);
        for (uint32_t g = 0; g < G; g++) PM__BORDER(row[(size_t)g * w + k]);
        for (uint32_t j = k; j > 0; j--) PM__BORDER(row[(size_t)G * w + j]);
        for (uint32_t g = G; g > 0; g--) PM__BORDER(row[(size_t)g * w]);
    }
#undef PM__BORDER
    if (repeated) return PM_OK;
    /* Two chains rising along the road from one least point to one
     * greatest, every triangle turning one way: a simple loop (the proof
     * is in docs/network.md), what pm_loop_simple would find. */
    int rc = mono ? 1 : pm_loop_convex(xz, m);
    if (rc == 0) {
        /* Simple but not convex: from where pm__asphalt_loop's walk
         * starts, the first edge of its window (least row, then least
         * step), as it walks. */
        uint32_t *loop = pm_arena_alloc(O->w, ((size_t)m + 1) * sizeof *loop);
        if (!loop) return PM_ERR_NOMEM;
        for (uint32_t j = 0; j < k; j++) loop[i++] = row[j];
        for (uint32_t g = 0; g < G; g++) loop[i++] = row[(size_t)g * w + k];
        for (uint32_t j = k; j > 0; j--) loop[i++] = row[(size_t)G * w + j];
        for (uint32_t g = G; g > 0; g--) loop[i++] = row[(size_t)g * w];
        uint32_t start = UINT32_MAX, best = UINT32_MAX;
        for (i = 0; i < m; i++) {
            uint32_t u = loop[i], v = loop[i + 1 < m ? i + 1 : 0];
            uint32_t a = u < v ? u : v, d = (u < v ? v : u) - a;
            if (a - base < span && d < PM__SLOTS && (a - base) * PM__SLOTS + d < best) {
                best = (a - base) * PM__SLOTS + d;
                start = turn > 0 ? i : i + 1 < m ? i + 1 : 0;   /* the edge's first vertex */
            }
        }
        if (start == UINT32_MAX) return PM_OK;
        float *from = xz + 2 * (m + 1);
        for (uint32_t c = 0, at = start; c < m; c++, at = turn > 0 ? (at + 1 < m ? at + 1 : 0) : (at ? at - 1 : m - 1)) {
            const float *p = P->positions + 3 * (size_t)loop[at];
            from[2 * c] = p[0];
            from[2 * c + 1] = p[2];
        }
        rc = pm_loop_simple(O->w, from, m);
    }
    *sure = true;
    if (rc != 1) return rc;
    pm__road_sides(O, r, xz, m, lo, hi);   /* (asphalt only: the strip has no sidewalk) */
    O->clu[O->nclu++] = (pm__clu){.node = UINT32_MAX, .road = r, .lo = {lo[0], lo[1]}, .hi = {hi[0], hi[1]}};
    return 1;
}

#include "network/network_overlap_walk.h"   /* (a road with a sidewalk: pm__road_walk) */

/* Road r's cluster (rg[0 .. n), cap triangles at most) when its
 * certificate shows its triangles pairwise disjoint (1): its bounds are
 * those of its outline (the triangles fill the region it bounds, so their
 * corners lie in it: the same bounds pm__take would grow), its triangles
 * are listed later. 0: not shown here (nothing kept; the caller lists the
 * road and tries again). */
static int pm__road_summed(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap);

static int pm__road_shown(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap) {
    if (cap >= INT16_MAX || pm__ranges_meet(rg, n)) return 0;
    pm_arena_reset(O->w);
    bool sure = false;
    int rc = PM__STRIP(O, r, rg, n, cap, &sure);
#ifdef __SSE2__
    if (!sure && rc >= 0 && rg[n - 1].count) rc = PM__WALK(O, r, rg, n, cap, &sure);
#endif
    return sure || rc < 0 ? rc : pm__road_summed(O, r, rg, n, cap);
}

/* pm__road_shown by the edges summed (pm__road_sum), the outline walked
 * by index or by plan point. */
static int pm__road_summed(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap) {
    if (pm__heads(O)) return PM_ERR_NOMEM;
    pm_arena_reset(O->w);
    const pm__road *R = &O->N->roads.data[r];
    pm__sum S = {.nfar = 0, .full = false};
    /* The asphalt's window is the road's block; the sidewalk's is where
     * its triangles' vertices are (its own block too). */
    uint32_t sl, sh;
    pm__vertex_range(O, rg, n, 1, &sl, &sh);
    uint32_t span1 = sl <= sh ? sh - sl + 1 : 0;
    /* Windows far larger than the road (vertices spread out: not a
     * block) would cost more to clear than the old way. */
    if ((size_t)R->vcount + span1 > 8 * cap + 64) return 0;
    int rc = pm__win_init(O, &S.w[0], R->voff, R->vcount);
    if (rc == PM_OK) rc = pm__win_init(O, &S.w[1], sl, span1);
    if (rc) return rc;
    uint32_t count[2] = {0, 0};
    pm__road_sum(O, &S, rg, n, count);
    O->lxz = NULL;
    float lo[2], hi[2];
    if (S.full || count[0] + count[1] < 2) rc = 0;
    else if (count[1] == 0)
        rc = pm__asphalt_loop(O, &S, 3 * count[0] + S.nfar, lo, hi);
    else
        rc = pm__seam_loop(O, &S, 3 * (count[0] + count[1]) + S.nfar, lo, hi);
    if (rc != 1) return rc;
    if (O->lxz) pm__road_sides(O, r, O->lxz, O->lm, lo, hi);   /* (asphalt only: see pm__road_sides) */
    O->clu[O->nclu++] = (pm__clu){.node = UINT32_MAX, .road = r, .lo = {lo[0], lo[1]}, .hi = {hi[0], hi[1]}};
    return 1;
}

/* A road's cluster (its edges' asphalt and its sidewalk, rg[0 .. n)) and
 * the pairs among its triangles that overlap unless its outline shows
 * there are none. */
static int pm__road_cluster(pm__ov *O, uint32_t r, const pm__range *rg, size_t n) {
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) cap += rg[i].count;
    if (cap == 0) return PM_OK;
    bool few = cap <= PM__FEW;
    if (!few) {
        int rc = pm__road_shown(O, r, rg, n, cap);
#ifdef PM__SHOWN_HOOK          /* (tests/core/test_network_overlap_fast.c: checks, or turns it off) */
        rc = PM__SHOWN_HOOK(O, rg, n, rc);
#endif
        if (rc != 0) return rc < 0 ? rc : PM_OK;
    }
    pm_ptri t3[PM__FEW];
    pm__iedge *pool = NULL;
    if (!few) {
        pm_arena_reset(O->w);
        if (pm__heads(O) || !(pool = pm_arena_alloc(O->w, 3 * cap * sizeof *pool))) return PM_ERR_NOMEM;
    }
    uint32_t np = 0;
    pm__clu *C = &O->clu[O->nclu];
    *C = (pm__clu){.node = UINT32_MAX, .road = UINT32_MAX, .lo = {HUGE_VALF, HUGE_VALF}, .hi = {-HUGE_VALF, -HUGE_VALF}};
    if (pm__take(O, C, rg, n, few ? t3 : NULL, pool, &np)) return PM_ERR_NOMEM;
    if (C->count == 0) return PM_OK;
    O->nclu++;
    if (few) return pm__few_pairs(O, C, t3);
    int rc = pm__outline(O, pool, np);
    if (rc != 0 || C->count < 2) return rc < 0 ? rc : PM_OK;
    /* Not shown: every pair of the road's own over a grid. */
    pm_pset S;
    if (pm_pset_init(O->w, &S, C->count)) return PM_ERR_NOMEM;
    for (uint32_t k = C->first; k < O->ntri; k++) {
        bool added = pm__add_ref(O, &S, O->ref[k]);
        (void)added;
        assert(added);
    }
    if ((rc = pm_pset_grid(O->w, &S)) != PM_OK) return rc;
    pm__found F = {.O = O, .S = &S, .first = C->first};
    return pm_pset_sweep(&S, NULL, pm__found_hit, &F);
}

static int pm__clusters(pm__ov *O) {
    pm__net *N = O->N;
    int rc = PM_OK;
    O->jclu = pm_arena_alloc(O->s, ((size_t)N->p->nnodes + 1) * sizeof *O->jclu);
    O->rside = pm_arena_calloc(O->s, N->roads.len + 1, 1);
    O->rseam = pm_arena_alloc(O->s, (N->roads.len + 1) * sizeof *O->rseam);
    O->rbent = pm_arena_alloc(O->s, 2 * (N->roads.len + 1) * sizeof *O->rbent);
    if (!O->jclu || !O->rside || !O->rseam || !O->rbent) return PM_ERR_NOMEM;
    for (uint32_t n = 0; n < N->p->nnodes; n++) {
        uint32_t before = O->nclu;
        O->jclu[n] = UINT32_MAX;
        if (N->nodes[n].scene) pm__junction_cluster(O, n);
#ifdef PM__JCLU_HOOK           /* (tests/core/test_network_overlap_parts.c: the bounds without lanes) */
        PM__JCLU_HOOK(O, n, before);
#endif
        if (O->nclu > before) O->jclu[n] = before;
    }
    pm__range *rr = NULL;
    size_t rcap = 0;
    for (size_t r = 0; rc == PM_OK && r < N->roads.len; r++) {
        const pm__road *R = &N->roads.data[r];
        if (R->nsteps + 1 > rcap) {
            rcap = 2 * (R->nsteps + 1);
            if (!(rr = pm_arena_alloc(O->s, rcap * sizeof *rr))) return PM_ERR_NOMEM;
        }
        pm__road_ranges(O, r, rr);
        rc = pm__road_cluster(O, (uint32_t)r, rr, R->nsteps + 1);
    }
    return rc;
}

/* Up to this many candidate pairs between two clusters are tested one by
 * one; more (two long roads side by side) go through a grid. */
#define PM__PAIRWISE 4096

/* pm__road_probe reads a road in chunks of this many triangles of a
 * range; the first time, it keeps each chunk's bounds (of its owned
 * triangles), and after only reads the chunks whose bounds meet the box
 * (a road meets a junction at each end). */
#define PM__CHUNK 16

/* Road r's chunks' bounds (rg: its n ranges), kept in O->s; NULL for no memory. */
static pm_pbox *pm__road_chunks(pm__ov *O, uint32_t r, const pm__range *rg, size_t n) {
    if (!O->chunk && !(O->chunk = pm_arena_calloc(O->s, O->N->roads.len + 1, sizeof *O->chunk))) return NULL;
    if (O->chunk[r]) return O->chunk[r];
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) nc += (rg[i].count + PM__CHUNK - 1) / PM__CHUNK;
    pm_pbox *cb = pm_arena_alloc(O->s, (nc + 1) * sizeof *cb);
    if (!cb) return NULL;
    pm_pbox *X = cb;
    for (size_t i = 0; i < n; i++) {
        uint32_t sw = rg[i].ref0 & PM__SW ? 1 : 0, t0 = rg[i].ref0 & ~PM__SW, end = t0 + rg[i].count;
        const pm_prim *P = &O->sc->prims[sw ? 2 : 0];
        const uint32_t *own = O->own + (sw ? O->na : 0);
        for (uint32_t c0 = t0; c0 < end; c0 += PM__CHUNK, X++) {
            float l[2] = {HUGE_VALF, HUGE_VALF}, h[2] = {-HUGE_VALF, -HUGE_VALF};
            /* The bounds of every vertex between the chunk's least and
             * greatest (a strip's chunk shares its vertices: about a
             * third of the reads), unless that block is much larger. */
            uint32_t vl, vh, c1 = end - c0 > PM__CHUNK ? c0 + PM__CHUNK : end;
            uint32_t k = pm__vertex_block(P, own, rg[i].part, c0, c1, &vl, &vh);
            if (k > 0 && (size_t)(vh - vl) < 3 * (size_t)k) {
                for (const float *a = P->positions + 3 * (size_t)vl; a <= P->positions + 3 * (size_t)vh; a += 3)
                    pm__grow(l, h, a[0], a[2]);
            } else
                for (uint32_t t = c0; t < c1; t++) {
                    if (own[t] != rg[i].part) continue;
                    const uint32_t *q = P->indices + 3 * (size_t)t;
                    for (int v = 0; v < 3; v++) {
                        const float *a = P->positions + 3 * (size_t)q[v];
                        pm__grow(l, h, a[0], a[2]);
                    }
                }
            *X = (pm_pbox){.lo = {l[0], l[1]}, .hi = {h[0], h[1]}};
        }
    }
    return O->chunk[r] = cb;
}

/* The triangles of road cluster C, not listed (C->road != UINT32_MAX),
 * whose bounds meet lo .. hi: as pm__take would list them (owned, with
 * plan area), turned as pm__add_ref turns them, into t and box (room
 * from O->w); how many, or UINT32_MAX for no memory. Nothing is listed;
 * chunks whose bounds do not meet lo .. hi are not read. */
static uint32_t pm__road_probe(pm__ov *O, const pm__clu *C, const float lo[2], const float hi[2], pm_ptri **t,
                               pm_pbox **box) {
    const pm__road *R = &O->N->roads.data[C->road];
    size_t n = R->nsteps + 1, cap = 0;
    pm__range *rg = pm_arena_alloc(O->w, n * sizeof *rg);
    if (!rg) return UINT32_MAX;
    pm__road_ranges(O, C->road, rg);
    for (size_t i = 0; i < n; i++) cap += rg[i].count;
    const pm_pbox *cb = pm__road_chunks(O, C->road, rg, n);
    *t = pm_arena_alloc(O->w, (cap + 1) * sizeof **t);
    *box = pm_arena_alloc(O->w, (cap + 1) * sizeof **box);
    if (!cb || !*t || !*box) return UINT32_MAX;
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t sw = rg[i].ref0 & PM__SW ? 1 : 0, t0 = rg[i].ref0 & ~PM__SW, end = t0 + rg[i].count;
        const pm_prim *P = &O->sc->prims[sw ? 2 : 0];
        const uint32_t *own = O->own + (sw ? O->na : 0);
        for (uint32_t c0 = t0; c0 < end; c0 += PM__CHUNK, cb++) {
            if (!pm__meets(cb->lo, cb->hi, lo, hi)) continue;
            for (uint32_t r = c0; r < end && r < c0 + PM__CHUNK; r++) {
                if (own[r] != rg[i].part) continue;
                const uint32_t *q = P->indices + 3 * (size_t)r;
                const float *a = P->positions + 3 * (size_t)q[0], *b = P->positions + 3 * (size_t)q[1],
                            *c = P->positions + 3 * (size_t)q[2];
                pm_pbox *X = &(*box)[k];
                for (int d = 0; d < 3; d += 2) {
                    float l = a[d] < b[d] ? a[d] : b[d], h = a[d] < b[d] ? b[d] : a[d];
                    X->lo[d / 2] = c[d] < l ? c[d] : l;
                    X->hi[d / 2] = c[d] > h ? c[d] : h;
                }
                if (!pm__meets(X->lo, X->hi, lo, hi)) continue;
                double A[2] = {a[0], a[2]}, B[2] = {b[0], b[2]}, D[2] = {c[0], c[2]};
                double o = pm_orient2d_fast(A, B, D);
                if (o == 0) continue;
                pm_ptri *T = &(*t)[k++];
                const float *f1 = o > 0 ? b : c, *f2 = o > 0 ? c : b;
                T->f[0][0] = a[0], T->f[0][1] = a[2];
                T->f[1][0] = f1[0], T->f[1][1] = f1[2];
                T->f[2][0] = f2[0], T->f[2][1] = f2[2];
            }
        }
    }
    return k;
}

/* The line of the mouth (through its left and right corners, with its
 * centre as the known point) where road r starts or ends at junction
 * cluster J (listed); false when they do not meet at one. Any line would
 * do for the pairs it leaves out (pm__cross_probe): the mouth's is the
 * one most of a junction's and its road's triangles lie on either side of. */
static bool pm__mouth_line(const pm__ov *O, const pm__clu *J, uint32_t r, pm_pline *L) {
    uint32_t ref = O->ref[J->first], t = ref & ~PM__SW;
    uint32_t part = pm__part(O->own[(ref & PM__SW ? O->na : 0) + t]);
    if (part < O->E || part >= O->E + O->V) return false;
    int64_t node = part - O->E;
    const pm__road *R = &O->N->roads.data[r];
    const uint32_t *sv = R->arm0 >= 0 && R->start == node ? R->seam0 : R->arm1 >= 0 && R->end == node ? R->seam1 : NULL;
    const pm_prim *A = &O->sc->prims[0];
    if (!sv || sv[0] >= A->vcount || sv[1] >= A->vcount || sv[2] >= A->vcount) return false;
    const float *a = A->positions + 3 * (size_t)sv[0], *b = A->positions + 3 * (size_t)sv[2],
                *c = A->positions + 3 * (size_t)sv[1];
    double p[2] = {a[0], a[2]}, q[2] = {b[0], b[2]}, k[2] = {c[0], c[2]};
    if (p[0] == q[0] && p[1] == q[1]) return false;
    pm_pline_init(L, p, q, k);
    return true;
}

#ifndef PM__MOUTH_ON           /* (tests/core/test_network_overlap_probe.c turns it off now and then) */
#define PM__MOUTH_ON 1
#endif

/* pm__bent_apart hands a junction's triangles to pm_pbent_other_side_all
 * this many at a time. */
#define PM__BENT_BATCH 16

#ifndef PM__BENT_ON            /* (tests/core/test_network_overlap_bent.c turns it off now and then) */
#define PM__BENT_ON 1
#endif

/* The scene's asphalt (0) and sidewalk (1) positions and indices, read
 * once for a run of pm__corners_put (the sidewalk's NULL without one: no
 * set triangle refers to it then). */
typedef struct pm__corners {
    const float *pos[2];
    const uint32_t *idx[2];
} pm__corners;

static inline pm__corners pm__corners_of(const pm__ov *O) {
    const pm_prim *A = &O->sc->prims[0], *S = O->sc->nprims == 3 ? &O->sc->prims[2] : NULL;
    return (pm__corners){.pos = {A->positions, S ? S->positions : NULL}, .idx = {A->indices, S ? S->indices : NULL}};
}

/* Set triangle f's (O->ref's: PM__SW for the sidewalk's) three corners,
 * 3D floats, into w[0 .. 3). (Through locals: a store to w could alias
 * the prims' pointers, which the compiler would then read again.) */
static inline void pm__corners_put(const pm__corners *C, uint32_t f, const float **w) {
    const int s = f & PM__SW ? 1 : 0;
    const uint32_t *q = C->idx[s] + 3 * (size_t)(f & ~PM__SW);
    const float *P = C->pos[s];
    const uint32_t a = q[0], b = q[1], c = q[2];
    w[0] = P + 3 * (size_t)a, w[1] = P + 3 * (size_t)b, w[2] = P + 3 * (size_t)c;
}

/* Whether each of J's triangles reaching into lo .. hi lies in the
 * closed side X of S: their corners gathered, then tested
 * PM__SEAM5_BATCH triangles a call (pm_pseam_tris_side). */
static bool pm__seam5_tris(const pm__ov *O, const pm__clu *J, pm_pseam *S, int X, const float lo[2],
                           const float hi[2]) {
    const pm__mbox B = pm__mbox_of(lo, hi);
    enum { PM__SEAM5_BATCH = 32 };
    const float *v[3 * PM__SEAM5_BATCH];
    const pm__corners C = pm__corners_of(O);
    const pm_pbox *box = O->box;
    const uint32_t *ref = O->ref;
    uint32_t nb = 0;
    for (uint32_t k = J->first, end = J->first + J->count; k < end; k++) {
        if (!pm__meets_m(&box[k], B)) continue;
        pm__corners_put(&C, ref[k], v + 3 * nb);
        if (++nb == PM__SEAM5_BATCH) {
            if (!pm_pseam_tris_side(S, X, v, nb)) return false;
            nb = 0;
        }
    }
    return pm_pseam_tris_side(S, X, v, nb);
}

/* pm__bent_apart's test by a road end's seam of five S (kept by
 * pm__walk_sides, which showed the road on its side sigma): whether each
 * of J's triangles reaching into lo .. hi lies in the closed other side. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static bool pm__seam5_apart(const pm__ov *O, const pm__clu *J, pm_pseam *S, int sigma, const float lo[2],
                            const float hi[2]) {
    bool apart = pm__seam5_tris(O, J, S, -sigma, lo, hi);
#ifdef PM__SEAM5_HOOK           /* (tests/core/test_network_overlap_bent.c: checks S is J's mouth's, and the answer) */
    PM__SEAM5_HOOK(O, J, S, -sigma, lo, hi, apart);
#endif
    return apart;
}

/* pm__bent_apart's test by the kept bent line M for a road shown on its
 * side sigma: whether each of J's triangles reaching into lo .. hi lies
 * in the closed other side (pm_pbent_other_side_all, PM__BENT_BATCH
 * triangles at a time). (Out of line, as pm__seam5_apart: its batch
 * would cost pm__cross_probe where no line is kept.) */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static bool pm__bent_line_apart(const pm__ov *O, const pm__clu *J, pm_pbent *M, int sigma, const float lo[2],
                                const float hi[2]) {
    const pm__mbox B = pm__mbox_of(lo, hi);
    const float *tri[PM__BENT_BATCH][3];
    const pm__corners C = pm__corners_of(O);
    const pm_pbox *box = O->box;
    const uint32_t *ref = O->ref;
    uint32_t nt = 0;
    for (uint32_t k = J->first, end = J->first + J->count; k < end; k++) {
        if (!pm__meets_m(&box[k], B)) continue;
        pm__corners_put(&C, ref[k], tri[nt]);
        if (++nt == PM__BENT_BATCH) {
            if (!pm_pbent_other_side_all(M, sigma, tri, nt)) return false;
            nt = 0;
        }
    }
    return pm_pbent_other_side_all(M, sigma, tri, nt);
}

/* A junction J (listed) and a road r whose end there was shown on one
 * side of its mouth's bent line (pm__road_sides) or seam of five
 * (pm__walk_sides): 1 when each of J's triangles reaching into lo .. hi
 * lies in the closed other side (pm_pbent_other_side_all,
 * pm_pseam_tri_side); then no pair of the two overlaps (the road lies
 * in the closed side it was shown on, and J's other triangles cannot
 * meet it), and pm__cross would find none. 0 when that is not shown. */
static int pm__bent_apart(const pm__ov *O, const pm__clu *J, uint32_t r, const float lo[2], const float hi[2]) {
    unsigned bits = O->rside[r];
    if (!bits) return 0;
    uint32_t ref = O->ref[J->first], t = ref & ~PM__SW;
    uint32_t part = pm__part(O->own[(ref & PM__SW ? O->na : 0) + t]);
    if (part < O->E || part >= O->E + O->V) return 0;
    int64_t node = part - O->E;
    const pm__road *R = &O->N->roads.data[r];
    for (int e = 0; e < 2; e++) {
        if (!(bits >> (2 * e) & 1) || (e ? R->end : R->start) != node) continue;
        const uint32_t *sv = pm__end_seam(O, R, e);
        if (!sv) continue;
        int sigma = bits >> (2 * e + 1) & 1 ? 1 : -1;
        if (bits >> (4 + e) & 1) {
            if (pm__seam5_apart(O, J, &O->rseam[r][e], sigma, lo, hi)) return 1;
            continue;
        }
        /* (The line built by pm__road_sides: bit 2 e without 4 + e.) */
        if (pm__bent_line_apart(O, J, O->rbent + 2 * (size_t)r + e, sigma, lo, hi)) return 1;
    }
    return 0;
}

/* pm__cross's answer without listing a road shown disjoint (most pairs
 * of clusters are a junction and its own road, meeting only where they
 * join): first the mouth's bent line (pm__bent_apart), else the road's
 * triangles in the box where the two meet found by a scan
 * (pm__road_probe) instead of pm__take's listing of them all, the other
 * side's as pm__cross finds them, and every pair tested as it would.
 * 1 when no pair overlaps (then pm__cross would find none: those it
 * tests are these), 0 when some does or the pairs are many (pm__cross
 * then lists both and finds them in its order), < 0 no memory. */
static int pm__cross_probe(pm__ov *O, pm__clu *P, pm__clu *Q) {
    pm__clu *side[2] = {P, Q};
    if (P->road == UINT32_MAX && Q->road == UINT32_MAX) return 0;
    for (int w = 0; w < 2; w++)
        if (side[w]->road == UINT32_MAX) {
            if (pm__expand(O, side[w])) return PM_ERR_NOMEM;
            if (side[w]->count == 0) return 1;
        }
    float lo[2] = {P->lo[0] > Q->lo[0] ? P->lo[0] : Q->lo[0], P->lo[1] > Q->lo[1] ? P->lo[1] : Q->lo[1]};
    float hi[2] = {P->hi[0] < Q->hi[0] ? P->hi[0] : Q->hi[0], P->hi[1] < Q->hi[1] ? P->hi[1] : Q->hi[1]};
    int jw = P->road == UINT32_MAX ? 0 : Q->road == UINT32_MAX ? 1 : -1;
    if (PM__BENT_ON && jw >= 0) {
        int apart = pm__bent_apart(O, side[jw], side[1 - jw]->road, lo, hi);
#ifdef PM__BENT_HOOK           /* (tests/core/test_network_overlap_bent.c: checks each) */
        apart = PM__BENT_HOOK(O, side[jw], side[1 - jw], apart);
#endif
        if (apart) return 1;
    }
    pm_arena_reset(O->w);
    pm_ptri *t[2];
    pm_pbox *box[2];
    uint32_t n[2];
    for (int w = 0; w < 2; w++) {
        const pm__clu *C = side[w];
        if (C->road != UINT32_MAX) {
            if ((n[w] = pm__road_probe(O, C, lo, hi, &t[w], &box[w])) == UINT32_MAX) return PM_ERR_NOMEM;
        } else {
            t[w] = pm_arena_alloc(O->w, ((size_t)C->count + 1) * sizeof *t[w]);
            box[w] = pm_arena_alloc(O->w, ((size_t)C->count + 1) * sizeof *box[w]);
            if (!t[w] || !box[w]) return PM_ERR_NOMEM;
            n[w] = 0;
            for (uint32_t k = C->first; k < C->first + C->count; k++)
                if (pm__meets(O->box[k].lo, O->box[k].hi, lo, hi)) {
                    box[w][n[w]] = O->box[k];
                    pm__tri(O, O->ref[k], &t[w][n[w]++]);
                }
        }
        if (n[w] == 0) return 1;
    }
    if ((uint64_t)n[0] * n[1] > PM__PAIRWISE) return 0;
    /* A junction and its own road: a pair on opposite sides of the
     * mouth's line (each triangle in its closed half-plane, found once)
     * has disjoint interiors, and pm_ptri_overlap would say so. */
    pm_pline L;
    uint8_t *cls[2] = {NULL, NULL};
    if (PM__MOUTH_ON && jw >= 0 && pm__mouth_line(O, side[jw], side[1 - jw]->road, &L))
        for (int w = 0; w < 2; w++)
            if (!(cls[w] = pm_arena_calloc(O->w, (size_t)n[w] + 1, 1))) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n[0]; i++)
        for (uint32_t j = 0; j < n[1]; j++) {
            if (!pm__meets(box[0][i].lo, box[0][i].hi, box[1][j].lo, box[1][j].hi)) continue;
            if (cls[0]) {
                /* (4: found, none of the sides: it straddles the line.) */
                if (!cls[0][i]) cls[0][i] = (uint8_t)(4 | pm_ptri_side(&t[0][i], &L));
                if (!cls[1][j]) cls[1][j] = (uint8_t)(4 | pm_ptri_side(&t[1][j], &L));
                bool apart = pm_ptri_apart(cls[0][i], cls[1][j]);
#ifdef PM__MOUTH_HOOK          /* (tests/core/test_network_overlap_probe.c: checks each) */
                PM__MOUTH_HOOK(&t[0][i], &t[1][j], apart);
#endif
                if (apart) continue;
            }
            if (pm_ptri_overlap(&t[0][i], &t[1][j])) return 0;
        }
    return 1;
}

#ifndef PM__PROBE_ON           /* (tests/core/test_network_overlap_probe.c turns it off now and then) */
#define PM__PROBE_ON 1
#endif

/* The overlapping pairs of a triangle of P and one of Q: only those whose
 * bounds reach into the box where P's and Q's meet can be one. */
static int pm__cross(pm__ov *O, pm__clu *P, pm__clu *Q) {
    int probe = PM__PROBE_ON ? pm__cross_probe(O, P, Q) : 0;
#ifdef PM__PROBE_HOOK          /* (tests/core/test_network_overlap_probe.c: checks each) */
    probe = PM__PROBE_HOOK(O, P, Q, probe);
#endif
    if (probe) return probe < 0 ? probe : PM_OK;
    if (pm__expand(O, P) || pm__expand(O, Q)) return PM_ERR_NOMEM;
    if (P->count == 0 || Q->count == 0) return PM_OK;
    float lo[2] = {P->lo[0] > Q->lo[0] ? P->lo[0] : Q->lo[0], P->lo[1] > Q->lo[1] ? P->lo[1] : Q->lo[1]};
    float hi[2] = {P->hi[0] < Q->hi[0] ? P->hi[0] : Q->hi[0], P->hi[1] < Q->hi[1] ? P->hi[1] : Q->hi[1]};
    pm_arena_reset(O->w);
    const pm__clu *side[2] = {P, Q};
    uint32_t *c[2], n[2] = {0, 0};
    for (int w = 0; w < 2; w++) {
        if (!(c[w] = pm_arena_alloc(O->w, (size_t)side[w]->count * sizeof *c[w]))) return PM_ERR_NOMEM;
        for (uint32_t k = side[w]->first; k < side[w]->first + side[w]->count; k++)
            if (pm__meets(O->box[k].lo, O->box[k].hi, lo, hi)) c[w][n[w]++] = k;
        if (n[w] == 0) return PM_OK;
    }
    if ((uint64_t)n[0] * n[1] <= PM__PAIRWISE) {
        pm_ptri *t[2];
        for (int w = 0; w < 2; w++) {
            if (!(t[w] = pm_arena_alloc(O->w, (size_t)n[w] * sizeof *t[w]))) return PM_ERR_NOMEM;
            for (uint32_t i = 0; i < n[w]; i++) pm__tri(O, O->ref[c[w][i]], &t[w][i]);
        }
        for (uint32_t i = 0; i < n[0]; i++) {
            const pm_pbox *A = &O->box[c[0][i]];
            for (uint32_t j = 0; j < n[1]; j++) {
                const pm_pbox *B = &O->box[c[1][j]];
                if (!pm__meets(A->lo, A->hi, B->lo, B->hi) || !pm_ptri_overlap(&t[0][i], &t[1][j])) continue;
                int rc = pm__push(O, c[0][i], c[1][j]);
                if (rc) return rc;
            }
        }
        return PM_OK;
    }
    pm_pset S;
    uint32_t *map = pm_arena_alloc(O->w, ((size_t)n[0] + n[1]) * sizeof *map);
    if (!map || pm_pset_init(O->w, &S, n[0] + n[1])) return PM_ERR_NOMEM;
    for (int w = 0; w < 2; w++)
        for (uint32_t i = 0; i < n[w]; i++) {
            bool added = pm__add_ref(O, &S, O->ref[c[w][i]]);
            (void)added;
            assert(added);
            S.tri[S.ntri - 1].part = (uint32_t)w;
            S.tri[S.ntri - 1].aux = S.ntri - 1;
            map[S.ntri - 1] = c[w][i];
        }
    int rc = pm_pset_grid(O->w, &S);
    pm__found F = {.O = O, .S = &S, .map = map};
    return rc ? rc : pm_pset_sweep(&S, pm__same_side, pm__found_hit, &F);
}

/* The clusters' grid (pm__clu_pairs) is sized as a triangle set's
 * (pm_pgrid_size), its cells doubled until the clusters cover at most
 * PM__CLU_ENTRIES cells each on average (a few huge clusters). */
#define PM__CLU_ENTRIES 8

typedef int (*pm__clu_pair_fn)(pm__ov *O, pm__clu *P, pm__clu *Q);

/* fn for every pair of O's clusters whose bounds meet (interiors), found
 * over a uniform grid of their bounds: each pair once, in the cell of the
 * lower corner where their bounds meet (which both cover). A nonzero
 * return of fn stops and is returned. */
static int pm__clu_pairs(pm__ov *O, pm__clu_pair_fn fn) {
    uint32_t n = O->nclu;
    if (n < 2) return PM_OK;
    pm_pbox *B = pm_arena_alloc(O->s, (size_t)n * sizeof *B);
    uint16_t(*end)[2] = pm_arena_alloc(O->s, (size_t)n * sizeof *end);   /* last cells, x and z */
    if (!B || !end) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++)
        B[i] = (pm_pbox){.lo = {O->clu[i].lo[0], O->clu[i].lo[1]}, .hi = {O->clu[i].hi[0], O->clu[i].hi[1]}};
    pm_pgrid g;
    pm_pgrid_size(&g, B, n);
    size_t total;
    for (;;) {
        total = 0;
        for (uint32_t i = 0; i < n; i++) {
            B[i].cx = (uint16_t)pm_pgrid_cell(&g, B[i].lo[0], 0);
            B[i].cz = (uint16_t)pm_pgrid_cell(&g, B[i].lo[1], 1);
            end[i][0] = (uint16_t)pm_pgrid_cell(&g, B[i].hi[0], 0);
            end[i][1] = (uint16_t)pm_pgrid_cell(&g, B[i].hi[1], 1);
            total += (size_t)(end[i][0] - B[i].cx + 1) * (end[i][1] - B[i].cz + 1);
        }
        if (total <= PM__CLU_ENTRIES * (size_t)n || (g.nx == 1 && g.nz == 1)) break;
        /* (Any cells in order serve: a cell only ever holds boxes that
         * reach into it.) */
        g.cell *= 2;
        g.inv = 1.0 / g.cell;
        g.nx = (g.nx - 1) / 2 + 1;
        g.nz = (g.nz - 1) / 2 + 1;
    }
    size_t ncell = (size_t)g.nx * g.nz;
    uint32_t *start = pm_arena_calloc(O->s, ncell + 2, sizeof *start);
    uint32_t *items = pm_arena_alloc(O->s, (total + 1) * sizeof *items);
    if (!start || !items) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t z = B[i].cz; z <= end[i][1]; z++)
            for (uint32_t x = B[i].cx; x <= end[i][0]; x++) start[(size_t)z * g.nx + x + 2]++;
    for (size_t k = 2; k < ncell + 2; k++) start[k] += start[k - 1];
    /* start[k + 1] is where cell k's list is filled to; after, its start. */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t z = B[i].cz; z <= end[i][1]; z++)
            for (uint32_t x = B[i].cx; x <= end[i][0]; x++) items[start[(size_t)z * g.nx + x + 1]++] = i;
    for (uint32_t z = 0; z < g.nz; z++)
        for (uint32_t x = 0; x < g.nx; x++) {
            size_t k = (size_t)z * g.nx + x;
            for (uint32_t a = start[k]; a < start[k + 1]; a++) {
                const pm_pbox *P = &B[items[a]];
                for (uint32_t b = a + 1; b < start[k + 1]; b++) {
                    const pm_pbox *Q = &B[items[b]];
                    if (!pm__meets(P->lo, P->hi, Q->lo, Q->hi)) continue;
                    if ((P->cx > Q->cx ? P->cx : Q->cx) != x || (P->cz > Q->cz ? P->cz : Q->cz) != z) continue;
                    int rc = fn(O, &O->clu[items[a]], &O->clu[items[b]]);
                    if (rc) return rc;
                }
            }
        }
    return PM_OK;
}

/* Every pair of clusters whose bounds meet. The order does not matter:
 * the pairs are put in the sweep's order after (pm__order). */
static int pm__crossings(pm__ov *O) { return pm__clu_pairs(O, pm__cross); }

/* ---- in the sweep's order ---- */

static int pm__pair_cmp(const void *x, const void *y) {
    const pm__pair *a = x, *b = y;
    if (a->cell != b->cell) return a->cell < b->cell ? -1 : 1;
    if (a->ka != b->ka) return a->ka < b->ka ? -1 : 1;
    return a->kb < b->kb ? -1 : (a->kb > b->kb);
}

/* Each pair's place in the order of one grid sweep over the whole set
 * (geom/plan_overlap.h: pm_pbox_left_key), the pairs sorted by it, each
 * pair's a the one that comes first in its cell. */
static int pm__order(pm__ov *O) {
    for (uint32_t i = 0; i < O->nclu; i++)
        if (pm__expand(O, &O->clu[i])) return PM_ERR_NOMEM;
    uint32_t ns = O->sc->nprims == 3 ? O->sc->prims[2].icount / 3 : 0;
    uint32_t *at = pm_arena_alloc(O->s, ((size_t)O->na + ns + 1) * sizeof *at);
    uint32_t *idx = pm_arena_alloc(O->s, ((size_t)O->ntri + 1) * sizeof *idx);
    pm_pbox *box = pm_arena_alloc(O->s, ((size_t)O->ntri + 1) * sizeof *box);
    if (!at || !idx || !box) return PM_ERR_NOMEM;
    memset(at, 0xff, ((size_t)O->na + ns) * sizeof *at);
    for (uint32_t k = 0; k < O->ntri; k++) {
        uint32_t r = O->ref[k];
        at[(r & PM__SW ? O->na : 0) + (r & ~PM__SW)] = k;
    }
    uint32_t n = 0;
    for (uint32_t l = 0; l < O->na + ns; l++)
        if (at[l] != UINT32_MAX) {
            idx[at[l]] = n;
            box[n++] = O->box[at[l]];
        }
    pm_pgrid g;
    pm_pgrid_size(&g, box, n);
    for (size_t i = 0; i < O->pairs.len; i++) {
        pm__pair *p = &O->pairs.data[i];
        const pm_pbox *A = &O->box[p->a], *B = &O->box[p->b];
        uint64_t ka = (uint64_t)pm_pbox_left_key(A->lo[0]) << 32 | idx[p->a];
        uint64_t kb = (uint64_t)pm_pbox_left_key(B->lo[0]) << 32 | idx[p->b];
        uint64_t cx = pm_pgrid_cell(&g, A->lo[0] > B->lo[0] ? A->lo[0] : B->lo[0], 0);
        uint64_t cz = pm_pgrid_cell(&g, A->lo[1] > B->lo[1] ? A->lo[1] : B->lo[1], 1);
        p->cell = cz * g.nx + cx;
        if (ka > kb) {
            uint32_t t = p->a;
            p->a = p->b;
            p->b = t;
        }
        p->ka = ka < kb ? ka : kb;
        p->kb = ka < kb ? kb : ka;
    }
    qsort(O->pairs.data, O->pairs.len, sizeof *O->pairs.data, pm__pair_cmp);
    return PM_OK;
}

/* ---- naming ---- */

/* The edge a road's sidewalk triangle belongs to: the edge whose asphalt
 * of the same road lies nearest to p (the grid's cells around it). */
static uint32_t pm__sidewalk_edge(const pm__ov *O, uint32_t road, const double *p) {
    const pm__net *N = O->N;
    const pm__road *R = &N->roads.data[road];
    uint32_t best = N->steps.data[R->first_step].edge;
    if (R->nsteps == 1) return best;
    const pm_pgrid *g = &O->set.g;
    uint32_t cx = pm_pset_cell_x(&O->set, p[0]), cz = pm_pset_cell_z(&O->set, p[1]);
    double bd = HUGE_VAL;
    for (uint32_t ring = 1; ring <= 64 && bd == HUGE_VAL; ring *= 2) {
        uint32_t x0 = cx > ring ? cx - ring : 0, z0 = cz > ring ? cz - ring : 0;
        uint32_t x1 = cx + ring < g->nx ? cx + ring : g->nx - 1, z1 = cz + ring < g->nz ? cz + ring : g->nz - 1;
        for (uint32_t z = z0; z <= z1; z++)
            for (uint32_t x = x0; x <= x1; x++) {
                size_t k = (size_t)z * g->nx + x;
                for (uint32_t i = g->start[k]; i < g->start[k + 1]; i++) {
                    const pm_ptri *T = &O->set.tri[g->items[i]];
                    if (T->part >= O->E || N->edge_road[T->part] != road + 1) continue;
                    double mx = ((double)T->f[0][0] + T->f[1][0] + T->f[2][0]) / 3 - p[0];
                    double mz = ((double)T->f[0][1] + T->f[1][1] + T->f[2][1]) / 3 - p[1];
                    if (mx * mx + mz * mz < bd) { bd = mx * mx + mz * mz; best = T->part; }
                }
            }
    }
    return best;
}

static int pm__named(pm__ov *O, const pm_ptri *T, const double *p, uint32_t *out) {
    if (T->part < O->E + O->V) {
        *out = T->part;
        return PM_OK;
    }
    int rc = O->whole ? PM_OK : pm__whole_set(O);
    if (rc == PM_OK) *out = pm__sidewalk_edge(O, T->part - O->E - O->V, p);
    return rc;
}

/* ---- sidewalks cut back ---- */

/* The arm of junction V whose left corner holds plan point p: corner k
 * runs from arm k clockwise in atan2(z, x) (to its left, looking out) to
 * the next arm, and its slab lies in that angle about the centre. */
static uint32_t pm__corner_arm(const pm__node *V, const double p[2]) {
    const double two_pi = 6.283185307179586;
    double ap = atan2(p[1] - V->c[2], p[0] - V->c[0]), best = HUGE_VAL;
    uint32_t arm = 0;
    for (uint32_t k = 0; k < V->deg; k++) {
        double d = atan2(V->dir[2 * k + 1], V->dir[2 * k]) - ap;
        while (d < 0) d += two_pi;
        while (d >= two_pi) d -= two_pi;
        if (d < best) { best = d; arm = k; }
    }
    return arm;
}

/* Leaves out the sidewalk that set triangle T (sidewalk triangle t)
 * belongs to: its junction corner's slab, or its road side's band between
 * its sections. */
static int pm__cut_back(pm__ov *O, const pm_ptri *T, uint32_t t) {
    pm__net *N = O->N;
    const pm__swsrc *src = &N->swsrc.data[t];
    if (src->road == UINT32_MAX) {
        pm__node *V = &N->nodes[T->part - O->E];
        double c[2] = {((double)T->f[0][0] + T->f[1][0] + T->f[2][0]) / 3,
                       ((double)T->f[0][1] + T->f[1][1] + T->f[2][1]) / 3};
        uint32_t k = pm__corner_arm(V, c);
        if (!V->bare[k]) {
            V->bare[k] = true;
            V->dirty = true;
            O->moved = true;
        }
        return PM_OK;
    }
    pm__road *R = &N->roads.data[src->road];
    pm__u32s *cut = &R->cut[src->side];
    for (size_t i = 0; i < cut->len; i += 2)
        if (cut->data[i] <= src->lo && src->hi <= cut->data[i + 1]) return PM_OK;
    if (pm_vec_push(N->a, cut, src->lo) < 0 || pm_vec_push(N->a, cut, src->hi) < 0) return PM_ERR_NOMEM;
    O->moved = true;
    return PM_OK;
}

/* Pair a, b (scene triangles ra, rb) overlaps: a sidewalk cut back, or a
 * hit recorded for its two things (the first pair found for them). */
static int pm__record(pm__ov *O, const pm_ptri *a, uint32_t ra, const pm_ptri *b, uint32_t rb) {
    if (O->retreat && (a->flag || b->flag)) {
        bool before = O->moved;
        O->moved = false;
        int rc = a->flag ? pm__cut_back(O, a, ra & ~PM__SW) : PM_OK;
        if (rc == PM_OK && b->flag) rc = pm__cut_back(O, b, rb & ~PM__SW);
        O->stuck |= !O->moved;
        O->moved |= before;
        return rc;
    }
    if (2 * (O->nhits + 1) > O->cap) {
        size_t cap = O->cap ? 2 * O->cap : 64;
        pm__ohit *h = pm_arena_calloc(O->s, cap, sizeof *h);
        if (!h) return PM_ERR_NOMEM;
        for (size_t i = 0; i < O->cap; i++) {
            if (!O->hits[i].key) continue;
            size_t j = (size_t)(O->hits[i].key * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
            while (h[j].key) j = (j + 1) & (cap - 1);
            h[j] = O->hits[i];
        }
        O->hits = h;
        O->cap = cap;
    }
    double pt[2];
    pm_ptri_witness(a, b, pt);
    uint32_t na, nb;
    int rc = pm__named(O, a, pt, &na);
    if (rc == PM_OK) rc = pm__named(O, b, pt, &nb);
    if (rc) return rc;
    bool swap = na > nb;
    uint64_t key = ((uint64_t)(swap ? nb : na) << 32 | (swap ? na : nb)) + 1;
    size_t j = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (O->cap - 1);
    while (O->hits[j].key && O->hits[j].key != key) j = (j + 1) & (O->cap - 1);
    if (O->hits[j].key) return PM_OK;
    pm__ohit *H = &O->hits[j];
    H->key = key;
    H->point[0] = pt[0];
    H->point[1] = pt[1];
    H->t[0] = swap ? *b : *a;
    H->t[1] = swap ? *a : *b;
    O->nhits++;
    return PM_OK;
}

/* A junction's own surfaces are the junction generator's (docs/junction.md). */
static bool pm__skip(const pm_ptri *a, const pm_ptri *b) { return a->part == b->part && a->aux == UINT32_MAX; }

/* The pairs found, in the sweep's order, to pm__record. */
static int pm__replay(pm__ov *O) {
    for (size_t i = 0; i < O->pairs.len; i++) {
        const pm__pair *p = &O->pairs.data[i];
        pm_ptri a, b;
        pm__tri(O, O->ref[p->a], &a);
        pm__tri(O, O->ref[p->b], &b);
        if (pm__skip(&a, &b)) continue;
        int rc = pm__record(O, &a, O->ref[p->a], &b, O->ref[p->b]);
        if (rc) return rc;
    }
    return PM_OK;
}

/* ---- problems ---- */

static void pm__what(const pm__ov *O, uint32_t who, const pm_ptri *T, char *buf, size_t n) {
    if (who >= O->E) snprintf(buf, n, "the junction at node %u", who - O->E);
    else snprintf(buf, n, "edge %u's %s", who, T->flag ? "sidewalk" : "road");
}

static void pm__name(pm_network_problem *q, const pm__ov *O, uint32_t who) {
    if (who < O->E) q->edges[q->nedges++] = who;
    else if (q->node < 0) q->node = who - O->E;
    else q->node2 = who - O->E;
}

static int pm__hit_cmp(const void *x, const void *y) {
    const pm__ohit *a = x, *b = y;
    return a->key < b->key ? -1 : (a->key > b->key);
}

/* The control point of edge E nearest pt in plan: "points[k]" or its
 * "from node" / "to node". */
static void pm__nearest_point(const pm_network_params *p, const pm_network_edge *E, const double pt[2],
                              char *out, size_t cap) {
    double best = HUGE_VAL;
    size_t bk = 0;
    for (size_t k = 0; k < E->npoints + 2; k++) {
        const double *c = k == 0 ? p->nodes + 3 * E->from
                          : k <= E->npoints ? E->points + 3 * (k - 1) : p->nodes + 3 * E->to;
        double d = hypot(c[0] - pt[0], c[2] - pt[1]);
        if (d < best) { best = d; bk = k; }
    }
    if (bk == 0) snprintf(out, cap, "from node");
    else if (bk > E->npoints) snprintf(out, cap, "to node");
    else snprintf(out, cap, "points[%zu]", bk - 1);
}

/* A road's half width plus its sidewalk: how far its surface reaches
 * from its centre line. */
static double pm__reach(const pm_network_edge *E) {
    return E->width / 2 + (E->has_sidewalk ? E->sidewalk.width : 0.0);
}

/* Two edges overlapping: two parts of one road round a through node it
 * turns at too tightly, or two roads whose centre lines must keep their
 * reaches apart (q->needed). */
static void pm__edges_message(const pm__ov *O, pm_network_problem *q, uint32_t a, uint32_t b,
                              const char *wa, const char *wb) {
    const pm_network_params *p = O->N->p;
    const pm_network_edge *A = &p->edges[a], *B = &p->edges[b];
    int64_t node = -1;
    if (A->from == B->from || A->from == B->to) node = A->from;
    else if (A->to == B->from || A->to == B->to) node = A->to;
    if (O->N->edge_road[a] == O->N->edge_road[b] && node >= 0) {
        q->node = node;
        q->needed = pm__reach(A);
        snprintf(q->message, sizeof q->message, "the road along edges %u and %u overlaps itself near "
                 "[%.3f, %.3f], where it turns at node %lld tighter than a centre-line radius of %.3f m "
                 "(half its width plus its sidewalk): move the control points next to the node further "
                 "from it, make the turn gentler or the road narrower", a, b, q->point[0], q->point[1],
                 (long long)node, q->needed);
        return;
    }
    q->needed = pm__reach(A) + pm__reach(B);
    snprintf(q->message, sizeof q->message, "%s overlaps %s near [%.3f, %.3f]: their centre lines "
             "must stay %.3f m apart there (half widths plus sidewalks); move them apart or make them "
             "narrower", wa, wb, q->point[0], q->point[1], q->needed);
}

static int pm__report(pm__ov *O) {
    pm__ohit *h = pm_arena_alloc(O->s, (O->nhits + 1) * sizeof *h);
    if (!h) return PM_ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < O->cap; i++)
        if (O->hits[i].key) h[n++] = O->hits[i];
    qsort(h, n, sizeof *h, pm__hit_cmp);
    for (size_t i = 0; i < n && i < PM__MAX_REPORTED; i++) {
        pm_network_problem *q;
        if (pm__network_problem(O->N, &q)) return PM_ERR_NOMEM;
        uint32_t a = (uint32_t)((h[i].key - 1) >> 32), b = (uint32_t)(h[i].key - 1);
        q->error = PM_NETWORK_OVERLAP;
        q->point[0] = h[i].point[0];
        q->point[1] = h[i].point[1];
        for (int k = 0; k < 2; k++) {
            double v[3][2];
            pm_ptri_corners(&h[i].t[k], v);
            memcpy(q->tris[k], v, sizeof q->tris[k]);
        }
        char wa[64], wb[64];
        pm__what(O, a, &h[i].t[0], wa, sizeof wa);
        pm__what(O, b, &h[i].t[1], wb, sizeof wb);
        pm__name(q, O, a);
        if (a == b) {
            const char *part = h[i].t[0].flag == h[i].t[1].flag
                                   ? (h[i].t[0].flag ? "its sidewalk" : "its road")
                                   : "its road and its sidewalk";
            if (a < O->E) {
                char near[64];
                const pm_network_edge *E = &O->N->p->edges[a];
                pm__nearest_point(O->N->p, E, q->point, near, sizeof near);
                snprintf(q->message, sizeof q->message, "edge %u overlaps itself near [%.3f, %.3f] "
                         "(%s), nearest its %s: its legs pass closer than its width (and "
                         "sidewalks) allow, or it turns tighter than a centre-line radius of "
                         "%.3f m (half its width plus its sidewalk); give it more room, gentler "
                         "turns or make it narrower", a, q->point[0], q->point[1], part, near,
                         E->width / 2 + (E->has_sidewalk ? E->sidewalk.width : 0.0));
            }
            else
                snprintf(q->message, sizeof q->message, "%s overlaps itself near [%.3f, %.3f]",
                         wa, q->point[0], q->point[1]);
            continue;
        }
        pm__name(q, O, b);
        if (a < O->E && b < O->E) {
            pm__edges_message(O, q, a, b, wa, wb);
            continue;
        }
        snprintf(q->message, sizeof q->message, "%s overlaps %s near [%.3f, %.3f]: they pass closer "
                 "than their widths (and sidewalks) allow; move them apart or make them narrower",
                 wa, wb, q->point[0], q->point[1]);
    }
    if (n > PM__MAX_REPORTED) {
        pm_network_problem *q;
        if (pm__network_problem(O->N, &q)) return PM_ERR_NOMEM;
        q->error = PM_NETWORK_OVERLAP;
        snprintf(q->message, sizeof q->message, "%zu pairs of pieces overlap in all (the first %d are "
                 "named)", n, PM__MAX_REPORTED);
    }
    return PM_OK;
}

static int pm__overlaps(pm__ov *O, const pm_scene *s, bool *retry);

int pm__network_overlaps(pm__net *N, const pm_scene *s, bool *retry) {
    /* The triangle set, its grid and the hits in an arena of their own,
     * given back to the allocator in one piece at the end for what comes
     * next (the normals left to the end, the metadata, another round)
     * instead of fresh memory: as a scratch arena's they stayed the
     * network's regions, each under 1 MiB, which the normals' big arrays
     * could not take. */
    pm__ov O = {.N = N, .E = (uint32_t)N->p->nedges, .V = (uint32_t)N->p->nnodes,
                .s = pm_arena_create_child(N->a)};
    if (retry) *retry = false;
    int rc = O.s ? pm__overlaps(&O, s, retry) : PM_ERR_NOMEM;
    pm_arena_destroy(O.s);
    return rc;
}

static int pm__overlaps(pm__ov *Op, const pm_scene *s, bool *retry) {
    pm__ov O = *Op;
    pm__net *N = O.N;
    int rc = pm__owners(&O, s);
    if (rc == PM_OK && !(O.w = pm_arena_create_scratch(O.s))) rc = PM_ERR_NOMEM;
    if (rc == PM_OK) rc = pm__clusters(&O);
    if (rc == PM_OK) rc = pm__crossings(&O);
    if (O.w) pm_arena_destroy(O.w);
    if (rc || O.pairs.len == 0) return rc;
    rc = pm__order(&O);
    O.retreat = retry != NULL && N->swsrc.len == (s->nprims == 3 ? s->prims[2].icount / 3 : 0);
    if (rc == PM_OK) rc = pm__replay(&O);
    if (rc == PM_OK && O.moved) {
        *retry = true;
        return PM_OK;
    }
    if (rc == PM_OK && O.stuck) {
        /* A sidewalk overlap that cutting back did not reach: reported
         * with the rest. */
        O.retreat = false;
        O.nhits = O.cap = 0;
        O.hits = NULL;
        rc = pm__replay(&O);
    }
    if (rc == PM_OK && O.nhits) rc = pm__report(&O);
    return rc;
}

/* Plan-view overlap of the built network: two asphalt or sidewalk
 * triangles whose interiors meet in (x, z) mean two pieces (or two parts of
 * one) lie on top of each other, a mesh no valid request may get. Candidate
 * pairs come from a uniform grid over the triangles' bounds; each pair is
 * decided exactly (separating edges with pm_orient2d), so shared vertices,
 * shared edges and collinear boundaries never count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "network/network_internal.h"
#include "geom/plan_overlap.h"
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

typedef struct pm__ov {
    pm__net *N;
    uint32_t E, V;
    pm_pset set;
    pm__ohit *hits;            /* open addressing on key */
    size_t cap, nhits;
    pm_arena *s;               /* the request's arena */
    uint32_t *tri_of;          /* per set triangle: its index in its primitive */
    bool retreat;              /* sidewalks on other pieces are cut back, not reported */
    bool moved;                /* ... and some were */
    bool stuck;                /* ... or one could not be */
} pm__ov;

/* ---- the triangles and their owners ---- */

static void pm__own_range(uint32_t *own, uint32_t first, uint32_t count, uint32_t part) {
    for (uint32_t t = first; t < first + count; t++) own[t] = part;
}

/* Adds prim P's triangles with positive plan area (a vertical face has
 * none) and their owners. */
static void pm__add_prim(pm__ov *O, const pm_prim *P, const uint32_t *own, uint8_t sidewalk) {
    const pm__net *N = O->N;
    for (uint32_t t = 0; t < P->icount / 3; t++) {
        if (own[t] == UINT32_MAX) continue;
        uint32_t road = own[t] < O->E ? N->edge_road[own[t]] - 1
                        : own[t] >= O->E + O->V ? own[t] - O->E - O->V : UINT32_MAX;
        const uint32_t *q = P->indices + 3 * t;
        if (pm_pset_add(&O->set, P->positions + 3 * q[0], P->positions + 3 * q[1], P->positions + 3 * q[2],
                        own[t], road, sidewalk))
            O->tri_of[O->set.ntri - 1] = t;
    }
}

static int pm__collect(pm__ov *O, const pm_scene *s) {
    pm__net *N = O->N;
    const pm_prim *A = &s->prims[0];
    const pm_prim *S = s->nprims == 3 ? &s->prims[2] : NULL;
    uint32_t na = A->icount / 3, ns = S ? S->icount / 3 : 0;
    uint32_t *own = pm_arena_alloc(O->s, ((size_t)na + ns + 1) * sizeof *own);
    O->tri_of = pm_arena_alloc(O->s, ((size_t)na + ns + 1) * sizeof *O->tri_of);
    if (!own || !O->tri_of || pm_pset_init(O->s, &O->set, na + ns)) return PM_ERR_NOMEM;
    memset(own, 0xff, ((size_t)na + ns) * sizeof *own);
    for (uint32_t n = 0; n < N->p->nnodes; n++) {
        const pm__node *V = &N->nodes[n];
        if (!V->scene) continue;
        pm__own_range(own, V->toff, V->tcount, O->E + n);
        pm__own_range(own, V->xt0, V->xtn, O->E + n);
        pm__own_range(own + na, V->swt0, V->swtn, O->E + n);
    }
    for (size_t r = 0; r < N->roads.len; r++) {
        const pm__road *R = &N->roads.data[r];
        for (size_t k = 0; k < R->nsteps; k++)
            pm__own_range(own, R->piece[4 * k + 2], R->piece[4 * k + 3], N->steps.data[R->first_step + k].edge);
        pm__own_range(own + na, R->swt0, R->swtn, O->E + O->V + (uint32_t)r);
    }
    pm__add_prim(O, A, own, 0);
    if (S) pm__add_prim(O, S, own + na, 1);
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

static uint32_t pm__named(const pm__ov *O, const pm_ptri *T, const double *p) {
    if (T->part < O->E + O->V) return T->part;
    return pm__sidewalk_edge(O, T->part - O->E - O->V, p);
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

/* Leaves out the sidewalk that set triangle T belongs to: its junction
 * corner's slab, or its road side's band between its sections. */
static int pm__cut_back(pm__ov *O, const pm_ptri *T) {
    pm__net *N = O->N;
    uint32_t t = O->tri_of[T - O->set.tri];
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

static int pm__record(void *ctx, const pm_ptri *a, const pm_ptri *b) {
    pm__ov *O = ctx;
    if (O->retreat && (a->flag || b->flag)) {
        bool before = O->moved;
        O->moved = false;
        int rc = a->flag ? pm__cut_back(O, a) : PM_OK;
        if (rc == PM_OK && b->flag) rc = pm__cut_back(O, b);
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
    uint32_t na = pm__named(O, a, pt), nb = pm__named(O, b, pt);
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
static bool pm__skip(void *ctx, const pm_ptri *a, const pm_ptri *b) {
    (void)ctx;
    return a->part == b->part && a->aux == UINT32_MAX;
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
    /* The triangle set, its grid and the hits in a scratch arena, given
     * back to the network's at the end for what comes next (the metadata,
     * another round) instead of fresh memory. */
    pm__ov O = {.N = N, .E = (uint32_t)N->p->nedges, .V = (uint32_t)N->p->nnodes,
                .s = pm_arena_create_scratch(N->a)};
    if (retry) *retry = false;
    int rc = O.s ? pm__overlaps(&O, s, retry) : PM_ERR_NOMEM;
    pm_arena_destroy(O.s);
    return rc;
}

static int pm__overlaps(pm__ov *Op, const pm_scene *s, bool *retry) {
    pm__ov O = *Op;
    pm__net *N = O.N;
    int rc = pm__collect(&O, s);
    if (rc || O.set.ntri < 2) return rc;
    rc = pm_pset_grid(O.s, &O.set);
    O.retreat = retry != NULL && N->swsrc.len == (s->nprims == 3 ? s->prims[2].icount / 3 : 0);
    if (rc == PM_OK) rc = pm_pset_sweep(&O.set, pm__skip, pm__record, &O);
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
        rc = pm_pset_sweep(&O.set, pm__skip, pm__record, &O);
    }
    if (rc == PM_OK && O.nhits) rc = pm__report(&O);
    return rc;
}

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
#include "geom/predicates.h"
#include "scene/result.h"

#define PM__MAX_REPORTED 20

/* A triangle to test, in plan: its corners are floats (the mesh's), held
 * as such to keep the array small, widened to doubles exactly to test. */
typedef struct pm__otri {
    float f[3][2];             /* plan, counter-clockwise in pm_orient2d's sense */
    uint32_t part;             /* edge e (< E), node E + n, road sidewalk E + V + r */
    uint32_t road;             /* its road, or UINT32_MAX (a junction's) */
    uint8_t sidewalk;          /* from the sidewalk primitive */
} pm__otri;

/* The same corners as doubles, for the predicates. */
typedef struct pm__dtri {
    double v[3][2];
    uint8_t sidewalk;
} pm__dtri;

static pm__dtri pm__wide(const pm__otri *T) {
    pm__dtri d = {.sidewalk = T->sidewalk};
    for (int k = 0; k < 3; k++) { d.v[k][0] = T->f[k][0]; d.v[k][1] = T->f[k][1]; }
    return d;
}

/* (Comparisons, not fminf / fmaxf: those are library calls without
 * -ffast-math, and this runs three times per triangle.) */
static void pm__bounds(const pm__otri *T, float lo[2], float hi[2]) {
    for (int c = 0; c < 2; c++) {
        float a = T->f[0][c], b = T->f[1][c], d = T->f[2][c];
        float l = a < b ? a : b, h = a < b ? b : a;
        lo[c] = d < l ? d : l;
        hi[c] = d > h ? d : h;
    }
}

/* A triangle's bounds (plan coordinates are floats exactly) and first
 * cells, apart from its corners: the candidate loop reads only these. */
typedef struct pm__obox {
    float lo[2], hi[2];
    uint16_t cx, cz;
} pm__obox;

typedef struct pm__ogrid {
    double x0, z0, cell, inv;      /* inv = 1 / cell */
    uint32_t nx, nz;
    uint32_t *start;           /* nx * nz + 1 */
    uint32_t *items;           /* triangle indices, cell by cell */
    pm__obox *box;             /* per triangle */
} pm__ogrid;

/* One overlap of two named things: an edge e (< E) or a node E + n. */
typedef struct pm__ohit {
    uint64_t key;              /* (smaller << 32) | larger, + 1: 0 is empty */
    double point[2];
    pm__dtri t[2];
} pm__ohit;

typedef struct pm__ov {
    pm__net *N;
    uint32_t E, V;
    pm__otri *tri;
    uint32_t ntri;
    pm__ogrid g;
    pm__ohit *hits;            /* open addressing on key */
    size_t cap, nhits;
    pm_arena *s;               /* the request's arena */
} pm__ov;

static double pm__o(const double *a, const double *b, const double *c) { return pm_orient2d_fast(a, b, c); }

/* Whether an edge of a has all of b on or outside its line. */
static bool pm__separates(const pm__dtri *a, const pm__dtri *b) {
    for (int i = 0; i < 3; i++) {
        const double *p = a->v[i], *q = a->v[(i + 1) % 3];
        if (pm__o(p, q, b->v[0]) <= 0 && pm__o(p, q, b->v[1]) <= 0 && pm__o(p, q, b->v[2]) <= 0)
            return true;
    }
    return false;
}

static bool pm__same(const double *p, const double *q) { return p[0] == q[0] && p[1] == q[1]; }

/* Interiors meet: no edge of either separates them (two convex polygons
 * with disjoint interiors have a separating line through an edge). Two
 * triangles on one edge (most candidate pairs: neighbours), both
 * counter-clockwise, overlap exactly when they run it the same way (both
 * lie on its left); run opposite ways, the edge's line separates them. */
static bool pm__overlap(const pm__dtri *a, const pm__dtri *b) {
    for (int i = 0; i < 3; i++) {
        const double *p = a->v[i], *q = a->v[(i + 1) % 3];
        for (int j = 0; j < 3; j++) {
            const double *r = b->v[j], *t = b->v[(j + 1) % 3];
            if (pm__same(p, r) && pm__same(q, t)) return true;
            if (pm__same(p, t) && pm__same(q, r)) return false;
        }
    }
    return !pm__separates(a, b) && !pm__separates(b, a);
}

static bool pm__inside(const pm__dtri *t, const double *p) {
    return pm__o(t->v[0], t->v[1], p) > 0 && pm__o(t->v[1], t->v[2], p) > 0 &&
           pm__o(t->v[2], t->v[0], p) > 0;
}

/* A point inside both triangles: the centroid of b clipped by a's three
 * half-planes, checked exactly; else a vertex or centroid of one strictly
 * inside the other (a sliver's computed clip can miss by rounding). */
static void pm__witness(const pm__dtri *a, const pm__dtri *b, double out[2]) {
    double poly[2][12][2];
    int n = 3, cur = 0;
    memcpy(poly[0], b->v, sizeof b->v);
    for (int i = 0; i < 3 && n > 0; i++) {
        const double *p = a->v[i], *q = a->v[(i + 1) % 3];
        int m = 0;
        for (int k = 0; k < n; k++) {
            const double *s = poly[cur][k], *e = poly[cur][(k + 1) % n];
            double ds = (q[0] - p[0]) * (s[1] - p[1]) - (q[1] - p[1]) * (s[0] - p[0]);
            double de = (q[0] - p[0]) * (e[1] - p[1]) - (q[1] - p[1]) * (e[0] - p[0]);
            if (ds >= 0 && m < 12) { poly[1 - cur][m][0] = s[0]; poly[1 - cur][m][1] = s[1]; m++; }
            if (((ds >= 0) != (de >= 0)) && m < 12) {
                double t = ds / (ds - de);
                poly[1 - cur][m][0] = s[0] + (e[0] - s[0]) * t;
                poly[1 - cur][m][1] = s[1] + (e[1] - s[1]) * t;
                m++;
            }
        }
        n = m;
        cur = 1 - cur;
    }
    double c[2] = {0, 0};
    for (int k = 0; k < n; k++) { c[0] += poly[cur][k][0] / n; c[1] += poly[cur][k][1] / n; }
    if (n > 0 && pm__inside(a, c) && pm__inside(b, c)) { out[0] = c[0]; out[1] = c[1]; return; }
    const pm__dtri *t2[2] = {a, b};
    for (int w = 0; w < 2; w++) {
        const pm__dtri *s = t2[w], *o = t2[1 - w];
        double g[2] = {(s->v[0][0] + s->v[1][0] + s->v[2][0]) / 3, (s->v[0][1] + s->v[1][1] + s->v[2][1]) / 3};
        if (pm__inside(o, g)) { out[0] = g[0]; out[1] = g[1]; return; }
        for (int k = 0; k < 3; k++)
            if (pm__inside(o, s->v[k])) { out[0] = s->v[k][0]; out[1] = s->v[k][1]; return; }
    }
    out[0] = n > 0 ? c[0] : b->v[0][0];
    out[1] = n > 0 ? c[1] : b->v[0][1];
}


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
        pm__otri *T = &O->tri[O->ntri];
        for (int k = 0; k < 3; k++) {
            const float *q = P->positions + 3 * P->indices[3 * t + k];
            T->f[k][0] = q[0];
            T->f[k][1] = q[2];
        }
        T->road = own[t] < O->E ? N->edge_road[own[t]] - 1
                  : own[t] >= O->E + O->V ? own[t] - O->E - O->V : UINT32_MAX;
        pm__dtri d = pm__wide(T);
        double o = pm__o(d.v[0], d.v[1], d.v[2]);
        if (o == 0) continue;
        if (o < 0) {
            float s[2] = {T->f[1][0], T->f[1][1]};
            memcpy(T->f[1], T->f[2], sizeof s);
            memcpy(T->f[2], s, sizeof s);
        }
        T->part = own[t];
        T->sidewalk = sidewalk;
        O->ntri++;
    }
}

static int pm__collect(pm__ov *O, const pm_scene *s) {
    pm__net *N = O->N;
    const pm_prim *A = &s->prims[0];
    const pm_prim *S = s->nprims == 3 ? &s->prims[2] : NULL;
    uint32_t na = A->icount / 3, ns = S ? S->icount / 3 : 0;
    uint32_t *own = pm_arena_alloc(O->s, ((size_t)na + ns + 1) * sizeof *own);
    O->tri = pm_arena_alloc(O->s, ((size_t)na + ns + 1) * sizeof *O->tri);
    if (!own || !O->tri) return PM_ERR_NOMEM;
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

/* ---- the grid ---- */

static uint32_t pm__cell(const pm__ogrid *g, double v, double v0, uint32_t n) {
    double c = (v - v0) * g->inv;
    if (!(c > 0)) return 0;
    return c >= n ? n - 1 : (uint32_t)c;   /* truncation: floor for c > 0 */
}

static void pm__cells(const pm__ogrid *g, const float lo[2], const float hi[2], uint32_t c[4]) {
    c[0] = pm__cell(g, lo[0], g->x0, g->nx);
    c[1] = pm__cell(g, hi[0], g->x0, g->nx);
    c[2] = pm__cell(g, lo[1], g->z0, g->nz);
    c[3] = pm__cell(g, hi[1], g->z0, g->nz);
}

/* Cells about twice the mean triangle's size (measured: fewer entries
 * outweigh the longer cell lists), at most about 4 per triangle. */
static int pm__grid(pm__ov *O) {
    pm__ogrid *g = &O->g;
    double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL}, ext = 0;
    for (uint32_t i = 0; i < O->ntri; i++) {
        float tl[2], th[2];
        pm__bounds(&O->tri[i], tl, th);
        for (int c = 0; c < 2; c++) {
            lo[c] = tl[c] < lo[c] ? tl[c] : lo[c];
            hi[c] = th[c] > hi[c] ? th[c] : hi[c];
        }
        double dx = (double)th[0] - tl[0], dz = (double)th[1] - tl[1];
        ext += dx > dz ? dx : dz;
    }
    double w = fmax(hi[0] - lo[0], 1e-9), h = fmax(hi[1] - lo[1], 1e-9);
    g->cell = fmax(2.0 * ext / O->ntri, sqrt(w * h / (4.0 * O->ntri)));
    g->cell = fmax(g->cell, fmax(w, h) / 4096.0);
    g->inv = 1.0 / g->cell;
    g->x0 = lo[0];
    g->z0 = lo[1];
    g->nx = (uint32_t)fmin(floor(w / g->cell) + 1, 4096);   /* cells fit uint16_t */
    g->nz = (uint32_t)fmin(floor(h / g->cell) + 1, 4096);
    size_t ncell = (size_t)g->nx * g->nz;
    g->start = pm_arena_calloc(O->s, ncell + 1, sizeof *g->start);
    if (!g->start) return PM_ERR_NOMEM;
    size_t total = 0;
    uint32_t c[4];
    float tl[2], th[2];
    for (uint32_t i = 0; i < O->ntri; i++) {
        pm__bounds(&O->tri[i], tl, th);
        pm__cells(g, tl, th, c);
        for (uint32_t z = c[2]; z <= c[3]; z++)
            for (uint32_t x = c[0]; x <= c[1]; x++) g->start[(size_t)z * g->nx + x + 1]++;
        total += (size_t)(c[1] - c[0] + 1) * (c[3] - c[2] + 1);
    }
    if (total >= UINT32_MAX) return PM_ERR_LIMIT;
    for (size_t k = 0; k < ncell; k++) g->start[k + 1] += g->start[k];
    g->items = pm_arena_alloc(O->s, (total + 1) * sizeof *g->items);
    g->box = pm_arena_alloc(O->s, ((size_t)O->ntri + 1) * sizeof *g->box);
    uint32_t *fill = pm_arena_alloc(O->s, (ncell + 1) * sizeof *fill);
    if (!g->items || !g->box || !fill) return PM_ERR_NOMEM;
    memcpy(fill, g->start, ncell * sizeof *fill);
    for (uint32_t i = 0; i < O->ntri; i++) {
        pm__bounds(&O->tri[i], tl, th);
        pm__cells(g, tl, th, c);
        g->box[i] = (pm__obox){{tl[0], tl[1]}, {th[0], th[1]}, (uint16_t)c[0], (uint16_t)c[2]};
        for (uint32_t z = c[2]; z <= c[3]; z++)
            for (uint32_t x = c[0]; x <= c[1]; x++) g->items[fill[(size_t)z * g->nx + x]++] = i;
    }
    /* Each cell by the left of its bounds, so a pair search stops at the
     * first triangle starting right of the current one's end. */
    for (size_t k = 0; k < ncell; k++)
        for (uint32_t i = g->start[k] + 1; i < g->start[k + 1]; i++) {
            uint32_t t = g->items[i], j = i;
            for (; j > g->start[k] && g->box[g->items[j - 1]].lo[0] > g->box[t].lo[0]; j--)
                g->items[j] = g->items[j - 1];
            g->items[j] = t;
        }
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
    const pm__ogrid *g = &O->g;
    uint32_t cx = pm__cell(g, p[0], g->x0, g->nx), cz = pm__cell(g, p[1], g->z0, g->nz);
    double bd = HUGE_VAL;
    for (uint32_t ring = 1; ring <= 64 && bd == HUGE_VAL; ring *= 2) {
        uint32_t x0 = cx > ring ? cx - ring : 0, z0 = cz > ring ? cz - ring : 0;
        uint32_t x1 = cx + ring < g->nx ? cx + ring : g->nx - 1, z1 = cz + ring < g->nz ? cz + ring : g->nz - 1;
        for (uint32_t z = z0; z <= z1; z++)
            for (uint32_t x = x0; x <= x1; x++) {
                size_t k = (size_t)z * g->nx + x;
                for (uint32_t i = g->start[k]; i < g->start[k + 1]; i++) {
                    const pm__otri *T = &O->tri[g->items[i]];
                    if (T->part >= O->E || N->edge_road[T->part] != road + 1) continue;
                    double mx = ((double)T->f[0][0] + T->f[1][0] + T->f[2][0]) / 3 - p[0];
                    double mz = ((double)T->f[0][1] + T->f[1][1] + T->f[2][1]) / 3 - p[1];
                    if (mx * mx + mz * mz < bd) { bd = mx * mx + mz * mz; best = T->part; }
                }
            }
    }
    return best;
}

static uint32_t pm__named(const pm__ov *O, const pm__otri *T, const double *p) {
    if (T->part < O->E + O->V) return T->part;
    return pm__sidewalk_edge(O, T->part - O->E - O->V, p);
}

static int pm__record(pm__ov *O, const pm__otri *a, const pm__otri *b) {
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
    pm__dtri da = pm__wide(a), db = pm__wide(b);
    pm__witness(&da, &db, pt);
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
    H->t[0] = swap ? db : da;
    H->t[1] = swap ? da : db;
    O->nhits++;
    return PM_OK;
}

/* Every pair of triangles sharing a cell, each pair once: in the cell
 * holding the lower corner of their bounds' intersection. */
static int pm__sweep(pm__ov *O) {
    const pm__ogrid *g = &O->g;
    for (uint32_t z = 0; z < g->nz; z++)
        for (uint32_t x = 0; x < g->nx; x++) {
            size_t k = (size_t)z * g->nx + x;
            for (uint32_t i = g->start[k]; i < g->start[k + 1]; i++) {
                const pm__obox *p = &g->box[g->items[i]];
                for (uint32_t j = i + 1; j < g->start[k + 1]; j++) {
                    const pm__obox *q = &g->box[g->items[j]];
                    if (q->lo[0] >= p->hi[0]) break;
                    if (q->lo[1] >= p->hi[1] || p->lo[1] >= q->hi[1]) continue;
                    /* The cell of the larger lower corner is the larger cell. */
                    if ((p->cx > q->cx ? p->cx : q->cx) != x || (p->cz > q->cz ? p->cz : q->cz) != z)
                        continue;
                    const pm__otri *a = &O->tri[g->items[i]], *b = &O->tri[g->items[j]];
                    /* A junction's own surfaces are the junction
                     * generator's (docs/junction.md). */
                    if (a->part == b->part && a->road == UINT32_MAX) continue;
                    pm__dtri da = pm__wide(a), db = pm__wide(b);
                    if (!pm__overlap(&da, &db)) continue;
                    int rc = pm__record(O, a, b);
                    if (rc) return rc;
                }
            }
        }
    return PM_OK;
}

/* ---- problems ---- */

static void pm__what(const pm__ov *O, uint32_t who, const pm__dtri *T, char *buf, size_t n) {
    if (who >= O->E) snprintf(buf, n, "the junction at node %u", who - O->E);
    else snprintf(buf, n, "edge %u's %s", who, T->sidewalk ? "sidewalk" : "road");
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
        for (int k = 0; k < 2; k++) memcpy(q->tris[k], h[i].t[k].v, sizeof q->tris[k]);
        char wa[64], wb[64];
        pm__what(O, a, &h[i].t[0], wa, sizeof wa);
        pm__what(O, b, &h[i].t[1], wb, sizeof wb);
        pm__name(q, O, a);
        if (a == b) {
            const char *part = h[i].t[0].sidewalk == h[i].t[1].sidewalk
                                   ? (h[i].t[0].sidewalk ? "its sidewalk" : "its road")
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

int pm__network_overlaps(pm__net *N, const pm_scene *s) {
    pm__ov O = {.N = N, .E = (uint32_t)N->p->nedges, .V = (uint32_t)N->p->nnodes, .s = N->a};
    int rc = pm__collect(&O, s);
    if (rc || O.ntri < 2) return rc;
    rc = pm__grid(&O);
    if (rc == PM_OK) rc = pm__sweep(&O);
    if (rc == PM_OK && O.nhits) rc = pm__report(&O);
    return rc;
}

/* Road networks in core: topology (junctions, through nodes, chains,
 * loops), the seams (road ends on the junction's own mouth vertices), and
 * the stitched asphalt as one oriented manifold surface, over a few hundred
 * random planar networks; refusals with the edges they name. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/arena.h"
#include "network/network.h"
#include "geom/predicates.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "pm_test_overlap.h"
#include "pm_test_slab.h"
#include "pm_test_meta.h"
#include "pm_test_network.h"

/* ---- building networks (pm_test_network.h) ---- */

/* A U-turn: one edge from (0, 0) to (0, gap), width w, out and back
 * through the three [x, y, z] points of tip (static storage). */
static pm_network_edge *u_turn(net *n, double gap, double w, const double tip[9]) {
    pm_network_edge *e = edge(n, node(n, 0, 0, 0), node(n, 0, 0, gap), w);
    e->points = tip;
    e->npoints = 3;
    return e;
}

/* The hairpin of the sidewalk tests: a 6 m road whose legs are 12 m apart
 * and whose tip, through (36, 6), is tighter than its half width. */
static const double hairpin_tip[] = {30, 0, 0, 36, 0, 6, 30, 0, 12};

/* ---- checking the output ---- */

static int64_t geti(const pm_meta *o, const char *k) { return pm_test_meta_get(o, k)->u.i; }

/* The network's nodes, edges, roads and seams are tables (scene/meta.h):
 * these tests read them as the plain tree pm_meta_copy makes of them. */
static void plain_meta(pm_arena *a, pm_scene *s) {
    s->meta = pm_meta_copy(a, s->meta);
    cr_assert_not_null(s->meta);
}

typedef struct dedge { uint32_t a, b; uint32_t tri; } dedge;

static int dedge_cmp(const void *x, const void *y) {
    const dedge *s = x, *t = y;
    uint32_t s0 = s->a < s->b ? s->a : s->b, s1 = s->a < s->b ? s->b : s->a;
    uint32_t t0 = t->a < t->b ? t->a : t->b, t1 = t->a < t->b ? t->b : t->a;
    if (s0 != t0) return s0 < t0 ? -1 : 1;
    if (s1 != t1) return s1 < t1 ? -1 : 1;
    return s->tri < t->tri ? -1 : (s->tri > t->tri);
}

static uint32_t find(uint32_t *parent, uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

/* Graph components and non-isolated nodes of the request. */
static void graph_counts(const pm_network_params *p, size_t *comps, size_t *used) {
    uint32_t parent[64];
    bool touched[64] = {false};
    for (uint32_t i = 0; i < p->nnodes; i++) parent[i] = i;
    for (size_t e = 0; e < p->nedges; e++) {
        parent[find(parent, p->edges[e].from)] = find(parent, p->edges[e].to);
        touched[p->edges[e].from] = touched[p->edges[e].to] = true;
    }
    *comps = *used = 0;
    for (uint32_t i = 0; i < p->nnodes; i++) {
        if (!touched[i]) continue;
        (*used)++;
        *comps += find(parent, i) == i;
    }
}

/* The asphalt is one oriented 2-manifold per graph component, of genus 0,
 * with one boundary loop more than the graph has bounded faces (but those
 * a merged junction fills): every
 * interior edge has exactly two triangles (in opposite directions), every
 * seam is welded (an unwelded seam would add components or boundary), all
 * triangles face up with positive area. */
static void check_surface(const pm_scene *s, const pm_network_params *p, const char *what) {
    const pm_prim *A = &s->prims[0];
    cr_assert_str_eq(A->name, "asphalt");
    uint32_t nt = A->icount / 3;
    for (uint32_t t = 0; t < nt; t++) {
        const float *a = A->positions + 3 * A->indices[3 * t], *b = A->positions + 3 * A->indices[3 * t + 1],
                    *c = A->positions + 3 * A->indices[3 * t + 2];
        double ny = ((double)b[2] - a[2]) * ((double)c[0] - a[0]) - ((double)b[0] - a[0]) * ((double)c[2] - a[2]);
        cr_assert_gt(ny, 0.0, "%s: triangle %u faces down or has no area (%g)", what, t, ny);
    }
    dedge *E = malloc(3 * (size_t)nt * sizeof *E);
    for (uint32_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            E[3 * t + k] = (dedge){A->indices[3 * t + k], A->indices[3 * t + (k + 1) % 3], t};
    size_t ne = 3 * (size_t)nt;
    qsort(E, ne, sizeof *E, dedge_cmp);
    uint32_t *next = malloc((A->vcount + 1) * sizeof *next);
    uint32_t *in = calloc(A->vcount + 1, sizeof *in);
    uint32_t *parent = malloc((A->vcount + 1) * sizeof *parent);
    for (uint32_t v = 0; v < A->vcount; v++) { next[v] = UINT32_MAX; parent[v] = v; }
    size_t undirected = 0, boundary = 0;
    for (size_t i = 0; i < ne;) {
        size_t j = i + 1;
        while (j < ne && dedge_cmp(&(dedge){E[i].a, E[i].b, 0}, &(dedge){E[j].a, E[j].b, 0}) == 0) j++;
        cr_assert_leq(j - i, 2, "%s: edge %u-%u has %zu triangles", what, E[i].a, E[i].b, j - i);
        if (j - i == 2)
            cr_assert(E[i].a == E[i + 1].b && E[i].b == E[i + 1].a,
                      "%s: edge %u-%u is used twice in the same direction", what, E[i].a, E[i].b);
        if (j - i == 1) {
            cr_assert_eq(next[E[i].a], UINT32_MAX, "%s: vertex %u starts two boundary edges", what, E[i].a);
            next[E[i].a] = E[i].b;
            in[E[i].b]++;
            boundary++;
        }
        parent[find(parent, E[i].a)] = find(parent, E[i].b);
        undirected++;
        i = j;
    }
    /* Boundary loops by following the successor of each boundary vertex. */
    size_t loops = 0, comps = 0, verts = 0;
    bool *seen = calloc(A->vcount + 1, 1);
    for (uint32_t v = 0; v < A->vcount; v++) {
        if (next[v] != UINT32_MAX) cr_assert_eq(in[v], 1, "%s: boundary vertex %u", what, v);
        if (next[v] == UINT32_MAX || seen[v]) continue;
        loops++;
        for (uint32_t w = v; !seen[w]; w = next[w]) {
            seen[w] = true;
            cr_assert_neq(next[w], UINT32_MAX, "%s: open boundary at %u", what, w);
        }
    }
    bool *usedv = calloc(A->vcount + 1, 1);
    for (uint32_t i = 0; i < A->icount; i++) usedv[A->indices[i]] = true;
    for (uint32_t v = 0; v < A->vcount; v++) {
        if (!usedv[v]) continue;
        verts++;
        comps += find(parent, v) == v;
    }
    size_t gcomps, gused;
    graph_counts(p, &gcomps, &gused);
    size_t faces = p->nedges + gcomps - gused;      /* bounded faces of the plane graph */
    /* Less the faces inside merged junctions (asphalt through): per merged
     * junction, its edges without road less its nodes merged in. */
    const pm_meta *me = pm_meta_get(s->meta, "edges"), *mn = pm_meta_get(s->meta, "nodes");
    for (const pm_meta *it = me->u.kids.first; it; it = it->next)
        faces -= pm_meta_get(it, "road")->kind == PM_META_NULL;
    for (const pm_meta *it = mn->u.kids.first; it; it = it->next)
        faces += strcmp(pm_meta_get(it, "kind")->u.s, "merged") == 0;
    cr_assert_eq(comps, gcomps, "%s: %zu surface pieces for %zu graph components (a seam not welded?)",
                 what, comps, gcomps);
    cr_assert_eq(loops, gcomps + faces, "%s: %zu boundary loops, expected %zu", what, loops, gcomps + faces);
    long chi = (long)verts - (long)undirected + (long)nt;
    cr_assert_eq(chi, (long)(2 * gcomps) - (long)loops, "%s: Euler characteristic %ld", what, chi);
    (void)boundary;
    free(E); free(next); free(in); free(parent); free(seen); free(usedv);
}

/* Each seam's vertices belong to its junction's block and the road's
 * triangles use them: the road ends on the junction's own vertices. */
static void check_seams(const pm_scene *s, const char *what) {
    const pm_prim *A = &s->prims[0];
    const pm_meta *seams = pm_test_meta_get(s->meta, "seams"), *roads = pm_test_meta_get(s->meta, "roads"), *nodes = pm_test_meta_get(s->meta, "nodes");
    for (const pm_meta *sm = seams->u.kids.first; sm; sm = sm->next) {
        const pm_meta *nd = pm_test_meta_at(nodes, (size_t)geti(sm, "node"));
        const pm_meta *rd = pm_test_meta_at(roads, (size_t)geti(sm, "road"));
        const pm_meta *vr = pm_test_meta_get(nd, "vertices"), *tr = pm_test_meta_get(rd, "triangles");
        int64_t v0 = pm_test_meta_at(vr, 0)->u.i, vn = pm_test_meta_at(vr, 1)->u.i;
        int64_t t0 = pm_test_meta_at(tr, 0)->u.i, tn = pm_test_meta_at(tr, 1)->u.i;
        int64_t l = geti(sm, "left_index"), r = geti(sm, "right_index"), c = geti(sm, "centre_index");
        cr_assert(l >= v0 && l < v0 + vn && r >= v0 && r < v0 + vn, "%s: seam outside its junction", what);
        bool hl = false, hr = false, hc = false;
        for (int64_t t = t0; t < t0 + tn; t++)
            for (int k = 0; k < 3; k++) {
                uint32_t v = A->indices[3 * t + k];
                hl |= v == l; hr |= v == r; hc |= v == c;
            }
        cr_assert(hl && hr && hc, "%s: the road does not use its seam vertices", what);
        /* The centre is the mouth's midpoint: the seam is a straight line. */
        for (int k = 0; k < 3; k += 2) {
            double mid = ((double)A->positions[3 * l + k] + A->positions[3 * r + k]) / 2;
            cr_assert_float_eq(A->positions[3 * c + k], mid, 1e-4);
        }
        /* Level mouths: both sides at the node's height. */
        cr_assert(A->positions[3 * l + 1] == A->positions[3 * r + 1], "%s: mouth not level", what);
    }
}

static double seg_dist(const double *a, const double *b, double x, double z) {
    double dx = b[0] - a[0], dz = b[2] - a[2], l2 = dx * dx + dz * dz;
    double t = l2 > 0 ? ((x - a[0]) * dx + (z - a[2]) * dz) / l2 : 0;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    return hypot(a[0] + t * dx - x, a[2] + t * dz - z);
}

/* Each edge owns a piece of its road: the pieces' triangle ranges tile the
 * road's range in travel order, their lengths add up to the road's, and
 * every triangle of a piece lies along its own edge. */
static void check_pieces(const pm_scene *s, const pm_network_params *p, const char *what) {
    const pm_prim *A = &s->prims[0];
    const pm_meta *edges = pm_test_meta_get(s->meta, "edges"), *roads = pm_test_meta_get(s->meta, "roads");
    for (const pm_meta *rd = roads->u.kids.first; rd; rd = rd->next) {
        const pm_meta *tr = pm_test_meta_get(rd, "triangles");
        int64_t next = pm_test_meta_at(tr, 0)->u.i, end = next + pm_test_meta_at(tr, 1)->u.i;
        double len = 0;
        for (const pm_meta *ei = pm_test_meta_get(rd, "edges")->u.kids.first; ei; ei = ei->next) {
            const pm_network_edge *E = &p->edges[ei->u.i];
            const pm_meta *em = pm_test_meta_at(edges, (size_t)ei->u.i);
            const pm_meta *et = pm_test_meta_get(em, "triangles");
            cr_assert_eq(pm_test_meta_at(et, 0)->u.i, next, "%s: edge %lld's triangles do not follow", what, (long long)ei->u.i);
            next += pm_test_meta_at(et, 1)->u.i;
            len += pm_test_meta_get(em, "length")->u.n;
            for (int64_t t = pm_test_meta_at(et, 0)->u.i; t < next; t++) {
                double cx = 0, cz = 0;
                for (int k = 0; k < 3; k++) {
                    cx += A->positions[3 * A->indices[3 * t + k]] / 3.0;
                    cz += A->positions[3 * A->indices[3 * t + k] + 2] / 3.0;
                }
                double best = 1e300, seg = 0;
                const double *q = p->nodes + 3 * E->from;
                for (size_t i = 0; i <= E->npoints; i++) {
                    const double *r = i < E->npoints ? E->points + 3 * i : p->nodes + 3 * E->to;
                    double d = seg_dist(q, r, cx, cz);
                    best = d < best ? d : best;
                    seg = fmax(seg, hypot(r[0] - q[0], r[2] - q[2]));
                    q = r;
                }
                /* The spline cuts corners at through-nodes: a quarter of
                 * the segment is room enough for that, not for a triangle
                 * of another edge. */
                cr_assert_lt(best, E->width + 0.25 * seg, "%s: triangle %lld of edge %lld is %g m from it",
                             what, (long long)t, (long long)ei->u.i, best);
            }
        }
        cr_assert_eq(next, end, "%s: the pieces do not cover the road", what);
        double rl = pm_test_meta_get(rd, "length")->u.n;
        cr_assert_float_eq(len, rl, 1e-6 * rl + 1e-9, "%s: pieces %g m, road %g m", what, len, rl);
    }
}

/* ---- sidewalk slabs ---- */

/* A vertex by its float bits' values: slabs and asphalt meet on equal
 * floats, never within a tolerance. */
typedef struct pk { float x, y, z; } pk;
typedef struct pedge { pk lo, hi; int dir; } pedge;

static pk pk_of(const pm_prim *P, uint32_t v) {
    return (pk){P->positions[3 * v], P->positions[3 * v + 1], P->positions[3 * v + 2]};
}

/* Plan first (x, z), then height. */
static int pk_cmp(const pk *a, const pk *b) {
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->z != b->z) return a->z < b->z ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    return 0;
}
static int pk_qcmp(const void *a, const void *b) { return pk_cmp(a, b); }
static int pedge_cmp(const void *x, const void *y) {
    const pedge *a = x, *b = y;
    int c = pk_cmp(&a->lo, &b->lo);
    return c ? c : pk_cmp(&a->hi, &b->hi);
}

/* Directed edges of prims by position, each stored low end first with its
 * direction (+1: lo -> hi). */
static size_t pedges(const pm_prim *const *prims, int np, pedge **out) {
    size_t n = 0;
    for (int q = 0; q < np; q++) n += prims[q]->icount;
    pedge *E = malloc((n ? n : 1) * sizeof *E);
    size_t m = 0;
    for (int q = 0; q < np; q++)
        for (uint32_t t = 0; t < prims[q]->icount; t += 3)
            for (int k = 0; k < 3; k++) {
                pk a = pk_of(prims[q], prims[q]->indices[t + k]);
                pk b = pk_of(prims[q], prims[q]->indices[t + (k + 1) % 3]);
                bool up = pk_cmp(&a, &b) < 0;
                E[m++] = (pedge){up ? a : b, up ? b : a, up ? 1 : -1};
            }
    qsort(E, m, sizeof *E, pedge_cmp);
    *out = E;
    return m;
}

/* Whether some slab vertex stands straight above k (keys sorted). */
static bool has_above(const pk *keys, size_t n, pk k) {
    size_t lo = 0, hi = n;
    pk probe = {k.x, INFINITY, k.z};
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (pk_cmp(&keys[mid], &probe) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && keys[lo - 1].x == k.x && keys[lo - 1].z == k.z && keys[lo - 1].y > k.y;
}

static const pm_prim *prim_named(const pm_scene *s, const char *name) {
    for (uint32_t i = 0; i < s->nprims; i++)
        if (strcmp(s->prims[i].name, name) == 0) return &s->prims[i];
    return NULL;
}

/* The curbs and sidewalks (junctions' and roads') are one solid closed
 * but for its bottom: every edge but the bottom ones has exactly two
 * triangles, in opposite directions (so no gap at a mouth and no end cap
 * left inside); bottom edges (both ends with a slab vertex straight above)
 * have one. Band triangles face up, curb triangles are vertical, all with
 * positive area. With a sidewalk on every edge, every asphalt boundary
 * edge but the free road ends is a curb's bottom edge on the same floats:
 * the slabs run mouth to mouth. Returns the number of slab triangles. */
static size_t check_slabs(const pm_scene *s, const pm_network_params *p, const char *what) {
    const pm_prim *curb = prim_named(s, "curb"), *side = prim_named(s, "sidewalk");
    bool any = false, all = p->nedges > 0;
    for (size_t e = 0; e < p->nedges; e++) {
        any |= p->edges[e].has_sidewalk;
        all &= p->edges[e].has_sidewalk;
    }
    if (!any) {
        cr_assert_null(curb, "%s: a curb without sidewalks", what);
        return 0;
    }
    cr_assert(curb && side, "%s: sidewalks but no curb or sidewalk primitive", what);
    const pm_prim *both[2] = {curb, side};
    for (int q = 0; q < 2; q++)
        for (uint32_t t = 0; t < both[q]->icount; t += 3) {
            const float *a = both[q]->positions + 3 * both[q]->indices[t];
            const float *b = both[q]->positions + 3 * both[q]->indices[t + 1];
            const float *c = both[q]->positions + 3 * both[q]->indices[t + 2];
            double u[3], v[3];
            for (int k = 0; k < 3; k++) { u[k] = (double)b[k] - a[k]; v[k] = (double)c[k] - a[k]; }
            double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
            cr_assert_gt(fabs(n[0]) + fabs(n[1]) + fabs(n[2]), 0.0, "%s: %s triangle %u has no area",
                         what, both[q]->name, t / 3);
            if (q == 1) cr_assert_gt(n[1], 0.0, "%s: sidewalk triangle %u at [%g, %g] faces down",
                                     what, t / 3, a[0], a[2]);
            else cr_assert_eq(n[1], 0.0, "%s: curb triangle %u is not vertical", what, t / 3);
        }
    size_t nv = curb->vcount + side->vcount;
    pk *keys = malloc(nv * sizeof *keys);
    for (uint32_t i = 0; i < curb->vcount; i++) keys[i] = pk_of(curb, i);
    for (uint32_t i = 0; i < side->vcount; i++) keys[curb->vcount + i] = pk_of(side, i);
    qsort(keys, nv, sizeof *keys, pk_qcmp);
    pedge *E;
    size_t ne = pedges(both, 2, &E);
    for (size_t i = 0; i < ne;) {
        size_t j = i;
        int sum = 0;
        while (j < ne && pedge_cmp(&E[i], &E[j]) == 0) sum += E[j++].dir;
        bool bottom = has_above(keys, nv, E[i].lo) && has_above(keys, nv, E[i].hi);
        cr_assert_eq(j - i, bottom ? 1 : 2, "%s: slab edge (%g %g %g)-(%g %g %g) has %zu triangles, not %d",
                     what, E[i].lo.x, E[i].lo.y, E[i].lo.z, E[i].hi.x, E[i].hi.y, E[i].hi.z, j - i, bottom ? 1 : 2);
        cr_assert(bottom || sum == 0, "%s: slab edge (%g %g %g)-(%g %g %g) twice in one direction", what,
                  E[i].lo.x, E[i].lo.y, E[i].lo.z, E[i].hi.x, E[i].hi.y, E[i].hi.z);
        i = j;
    }
    if (all) {
        const pm_prim *A = &s->prims[0];
        const pm_prim *ap[1] = {A}, *cp[1] = {curb};
        pedge *AE, *CE;
        size_t nae = pedges(ap, 1, &AE), nce = pedges(cp, 1, &CE);
        size_t unmatched = 0, free_ends = 0;
        uint32_t deg[64] = {0};
        for (size_t e = 0; e < p->nedges; e++) { deg[p->edges[e].from]++; deg[p->edges[e].to]++; }
        for (size_t n = 0; n < p->nnodes; n++) free_ends += deg[n] == 1;
        for (size_t i = 0; i < nae;) {
            size_t j = i;
            int sum = 0;
            while (j < nae && pedge_cmp(&AE[i], &AE[j]) == 0) sum += AE[j++].dir;
            if (sum != 0 && !bsearch(&AE[i], CE, nce, sizeof *CE, pedge_cmp)) {
                unmatched++;
                if (getenv("PM_NET_DEBUG"))
                    fprintf(stderr, "%s: bare asphalt edge (%g %g %g)-(%g %g %g)\n", what, AE[i].lo.x,
                            AE[i].lo.y, AE[i].lo.z, AE[i].hi.x, AE[i].hi.y, AE[i].hi.z);
            }
            i = j;
        }
        /* Where a road's own edge crosses itself the sidewalk stops and
         * says how many curb edges it left bare. */
        size_t bare = 0;
        bool dropped = false;
        for (const pm_meta *w = pm_test_meta_get(s->meta, "warnings")->u.kids.first; w; w = w->next) {
            if (strcmp(pm_test_meta_get(w, "code")->u.s, "sidewalk_interrupted") == 0) bare += (size_t)geti(w, "curb_edges");
            dropped |= strcmp(pm_test_meta_get(w, "code")->u.s, "corner_sidewalk_dropped") == 0;
        }
        /* A junction corner left without its slab leaves its own curb
         * line bare too (the warning names the corner, not its edges). */
        if (dropped)
            cr_assert_gt(unmatched, 2 * free_ends + bare, "%s: a corner without its slab, yet no bare edge", what);
        else
            cr_assert_eq(unmatched, 2 * free_ends + bare, "%s: %zu asphalt boundary edges have no curb on "
                         "them, expected %zu (the free road ends) + %zu (interrupted)", what, unmatched,
                         2 * free_ends, bare);
        free(AE);
        free(CE);
    }
    free(keys);
    free(E);
    return (curb->icount + side->icount) / 3;
}

/* ---- random planar networks ---- */

/* ---- plan overlap: the brute-force oracle ---- */

typedef struct vroad { float x, z; int64_t road; } vroad;

static int vroad_cmp(const void *p, const void *q) {
    const vroad *a = p, *b = q;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->z != b->z) return a->z < b->z ? -1 : 1;
    return a->road < b->road ? -1 : (a->road > b->road);
}

/* Every asphalt and sidewalk triangle with plan area, with its road: an
 * asphalt triangle's from the metadata's piece ranges, a band triangle's
 * from the road asphalt vertex its inner corner stands on (the curb's
 * bottom is the road's edge, the same floats). */
static size_t plan_tris(const pm_scene *s, ptri **out) {
    size_t cap = 0, n = 0;
    const pm_prim *A = &s->prims[0];
    for (uint32_t i = 0; i < s->nprims; i++)
        if (strcmp(s->prims[i].name, "curb") != 0) cap += s->prims[i].icount / 3;
    *out = malloc((cap + 1) * sizeof **out);
    int64_t *road = malloc((A->icount / 3 + 1) * sizeof *road);
    vroad *vr = malloc((A->icount + 1) * sizeof *vr);
    size_t nvr = 0;
    for (uint32_t t = 0; t < A->icount / 3; t++) road[t] = -1;
    const pm_meta *edges = pm_meta_get(s->meta, "edges");
    for (const pm_meta *e = edges ? edges->u.kids.first : NULL; e; e = e->next) {
        const pm_meta *tr = pm_test_meta_get(e, "triangles");
        int64_t first = pm_test_meta_at(tr, 0)->u.i, count = pm_test_meta_at(tr, 1)->u.i;
        for (int64_t t = first; t < first + count; t++) {
            road[t] = geti(e, "road");
            for (int k = 0; k < 3; k++) {
                const float *q = A->positions + 3 * A->indices[3 * t + k];
                vr[nvr++] = (vroad){q[0], q[2], road[t]};
            }
        }
    }
    qsort(vr, nvr, sizeof *vr, vroad_cmp);
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *P = &s->prims[i];
        if (strcmp(P->name, "curb") == 0) continue;
        for (uint32_t t = 0; t < P->icount; t += 3) {
            double q[3][2];
            int64_t rd = i == 0 ? road[t / 3] : -1;
            for (int k = 0; k < 3; k++) {
                const float *f = P->positions + 3 * P->indices[t + k];
                q[k][0] = f[0];
                q[k][1] = f[2];
                vroad key = {f[0], f[2], -1};
                const vroad *hit = NULL;
                for (size_t lo = 0, hi = nvr; i != 0 && rd < 0 && lo < hi;) {
                    size_t mid = (lo + hi) / 2;
                    int c = vroad_cmp(&vr[mid], &key);
                    if (vr[mid].x == f[0] && vr[mid].z == f[2]) { hit = &vr[mid]; break; }
                    if (c < 0) lo = mid + 1;
                    else hi = mid;
                }
                if (hit) rd = hit->road;
            }
            if (!ptri_make(q[0], q[1], q[2], &(*out)[n])) continue;
            (*out)[n].road = rd;
            n++;
        }
    }
    free(road);
    free(vr);
    return n;
}

/* O(n^2): the number of overlapping pairs (a road's own included); the
 * first in *first. */
static size_t brute_overlaps(const ptri *t, size_t n, size_t first[2]) {
    size_t found = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (ptri_overlap(&t[i], &t[j]) && found++ == 0) { first[0] = i; first[1] = j; }
            else if (getenv("PM_NET_DEBUG") && ptri_overlap(&t[i], &t[j])) fprintf(stderr, "pair %zu %zu: [%g %g, %g %g, %g %g] [%g %g, %g %g, %g %g]\n", i, j, t[i].v[0][0], t[i].v[0][1], t[i].v[1][0], t[i].v[1][1], t[i].v[2][0], t[i].v[2][1], t[j].v[0][0], t[j].v[0][1], t[j].v[1][0], t[j].v[1][1], t[j].v[2][0], t[j].v[2][1]);
    return found;
}

/* A jittered grid of gx x gz nodes, S metres apart: each grid edge kept
 * with probability 0.8, a diagonal in some cells, a bend on some edges,
 * random widths, elevations, radii and sidewalks. */
static void random_net(net *n, pm_rng *r) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 5), gz = (int)pm_rng_int(r, 1, 4);
    double S = 45.0;
    uint32_t id[5][4];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++)
            id[i][j] = node(n, i * S + pm_rng_range(r, -5, 5), pm_rng_range(r, -2, 2),
                            j * S + pm_rng_range(r, -5, 5));
    double wdef = pm_rng_range(r, 4, 10);
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            double w = pm_rng_chance(r, 0.5) ? wdef : pm_rng_range(r, 4, 10);
            if (i + 1 < gx && pm_rng_chance(r, 0.8)) {
                pm_network_edge *e = edge(n, id[i][j], id[i + 1][j], w);
                if (pm_rng_chance(r, 0.3)) {
                    const double *a = n->nodes + 3 * e->from, *b = n->nodes + 3 * e->to;
                    bend(n, e, (a[0] + b[0]) / 2, (a[2] + b[2]) / 2 + pm_rng_range(r, -6, 6));
                }
            }
            if (j + 1 < gz && pm_rng_chance(r, 0.8)) edge(n, id[i][j + 1], id[i][j], w);
            if (i + 1 < gx && j + 1 < gz && pm_rng_chance(r, 0.25))
                edge(n, id[i][j], id[i + 1][j + 1], pm_rng_range(r, 4, 8));
        }
    n->p.corner_radius = pm_rng_range(r, 0, 6);
    n->p.corner_segments = (uint32_t)pm_rng_int(r, 2, 6);
    /* Sidewalks: none, on every edge alike, or on most edges with their
     * own sizes (where they change at a degree-2 node: a transition). */
    bool sw = pm_rng_chance(r, 0.6), every = sw && pm_rng_chance(r, 0.5);
    pm_junction_sidewalk one = {pm_rng_range(r, 1, 3), pm_rng_range(r, 0.1, 0.3)};
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = sw && (every || pm_rng_chance(r, 0.8));
        n->edges[e].sidewalk = every ? one : (pm_junction_sidewalk){pm_rng_range(r, 1, 3), 0.15};
    }
    n->p.max_segment = pm_rng_range(r, 2, 8);
    finish(n);
}

Test(network, random_planar_networks_stitch_into_one_manifold_surface, .timeout = 120) {
    pm_rng r;
    pm_rng_seed(&r, 20261130);
    int ok = 0, refused = 0, skipped = 0, kinds[6] = {0, 0, 0, 0, 0, 0}, overlapping = 0, oracle = 0;
    size_t slab_tris = 0;
    for (int it = 0; it < 300; it++) {
        net n;
        random_net(&n, &r);
        if (n.nedges == 0) { skipped++; continue; }
        pm_arena *a = pm_arena_create(1 << 20);
        uint32_t pairs[4][2];
        if (pm_network_crossings(a, &n.p, pairs, 4) != 0) {
            skipped++;
            pm_arena_destroy(a);
            continue;
        }
        pm_scene *s = NULL;
        pm_network_diag d;
        int rc = pm_network_generate(a, &n.p, &s, &d);
        if (rc == PM_OK) plain_meta(a, s);
        char what[64];
        snprintf(what, sizeof what, "network %d", it);
        if (rc == PM_ERR_GEOMETRY) {
            refused++;
            cr_assert_gt(d.nproblems, 0, "%s", what);
            bool any = false;
            for (size_t k = 0; k < d.nproblems; k++) kinds[d.problems[k].error % 6]++;
            for (size_t k = 0; getenv("PM_NET_DEBUG") && k < d.nproblems; k++)
                fprintf(stderr, "%s: %s\n", what, d.problems[k].message);
            for (size_t k = 0; k < d.nproblems; k++) {
                const pm_network_problem *q = &d.problems[k];
                cr_assert(q->error == PM_NETWORK_EDGE_TOO_SHORT || q->error == PM_NETWORK_JUNCTION ||
                          q->error == PM_NETWORK_SEAM || q->error == PM_NETWORK_SIDEWALK ||
                          q->error == PM_NETWORK_OVERLAP, "%s: %s", what, q->message);
                if (q->error != PM_NETWORK_OVERLAP) continue;
                any = true;
                /* The point lies inside both reported triangles, and they
                 * overlap by the oracle's own test. */
                ptri t[2];
                for (int w = 0; w < 2; w++)
                    cr_assert(ptri_make(q->tris[w], q->tris[w] + 2, q->tris[w] + 4, &t[w]), "%s", what);
                cr_assert(ptri_inside(&t[0], q->point) && ptri_inside(&t[1], q->point),
                          "%s: [%g, %g] not inside both triangles: %s", what, q->point[0], q->point[1], q->message);
                cr_assert(ptri_overlap(&t[0], &t[1]), "%s: %s", what, q->message);
                cr_assert(q->nedges + (q->node >= 0) + (q->node2 >= 0) >= 1, "%s", what);
            }
            overlapping += any;
        } else {
            cr_assert_eq(rc, PM_OK, "%s: rc %d", what, rc);
            ok++;
            check_surface(s, &n.p, what);
            check_seams(s, what);
            check_pieces(s, &n.p, what);
            slab_tris += check_slabs(s, &n.p, what);
            /* The independent oracle, on the smaller networks. */
            ptri *t;
            size_t nt = plan_tris(s, &t), first[2] = {0, 0};
            if (nt <= 3000) {
                size_t bad = brute_overlaps(t, nt, first);
                cr_assert_eq(bad, 0, "%s: %zu overlapping triangle pairs, e.g. near [%g, %g]", what, bad,
                             t[first[0]].v[0][0], t[first[0]].v[0][1]);
                oracle++;
            }
            free(t);
        }
        pm_arena_destroy(a);
    }
    cr_log_info("random networks: %d stitched, %d refused (%d junction, %d edge too short, %d fold "
                "at a mouth, %d sidewalk; %d networks with overlaps, %d overlapping pairs named), "
                "%d skipped (crossing); %zu slab triangles checked; %d accepted networks brute-force "
                "checked for overlaps", ok, refused, kinds[1], kinds[2], kinds[3], kinds[4], overlapping,
                kinds[5], skipped, slab_tris, oracle);
    cr_assert_geq(ok, 200, "only %d of 300 random networks were built (%d refused)", ok, refused);
    cr_assert_geq(oracle, 100, "only %d networks were small enough for the oracle", oracle);
}

/* ---- fixed cases ---- */

static pm_scene *build(net *n, pm_arena *a, pm_network_diag *d) {
    pm_scene *s = NULL;
    int rc = pm_network_generate(a, &n->p, &s, d);
    cr_assert_eq(rc, PM_OK, "rc %d: %s", rc, d->nproblems ? d->problems[0].message : "");
    plain_meta(a, s);
    return s;
}

static const char *kind_of(const pm_scene *s, size_t i) {
    return pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "nodes"), i), "kind")->u.s;
}

Test(network, tee_is_one_junction_and_three_roads) {
    net n;
    net_init(&n);
    uint32_t c = node(&n, 0, 0, 0), e = node(&n, 40, 0, 0), w = node(&n, -40, 0, 0), s_ = node(&n, 0, 0, 40);
    edge(&n, c, e, 7);
    edge(&n, w, c, 7);
    edge(&n, c, s_, 6);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    cr_assert_str_eq(kind_of(s, 0), "junction");
    cr_assert_str_eq(kind_of(s, 1), "end");
    cr_assert_eq(geti(s->meta, "junctions"), 1);
    cr_assert_eq(geti(s->meta, "roads_count"), 3);
    cr_assert_eq(pm_test_meta_get(s->meta, "seams")->u.kids.count, 3);
    check_surface(s, &n.p, "tee");
    check_seams(s, "tee");
    /* The road leaving east starts at the mouth: x = mouth distance. */
    const pm_meta *m0 = pm_test_meta_at(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "nodes"), 0), "mouths"), 0);
    double dist = pm_test_meta_get(m0, "distance")->u.n;
    cr_assert_gt(dist, 3.4);
    cr_assert_lt(dist, 40);
    pm_arena_destroy(a);
}

Test(network, through_nodes_chain_edges_into_one_road) {
    net n;
    net_init(&n);
    uint32_t a0 = node(&n, 0, 0, 0), a1 = node(&n, 30, 1, 5), a2 = node(&n, 60, 2, 0), a3 = node(&n, 90, 0, 10);
    edge(&n, a0, a1, 7);
    edge(&n, a2, a1, 7);        /* reversed on purpose */
    edge(&n, a2, a3, 7);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    cr_assert_eq(geti(s->meta, "junctions"), 0);
    cr_assert_eq(geti(s->meta, "roads_count"), 1);
    cr_assert_str_eq(kind_of(s, 1), "through");
    const pm_meta *road = pm_test_meta_at(pm_test_meta_get(s->meta, "roads"), 0);
    cr_assert_eq(pm_test_meta_get(road, "edges")->u.kids.count, 3);
    cr_assert_eq(pm_test_meta_at(pm_test_meta_get(road, "reversed"), 1)->u.b, true);
    check_surface(s, &n.p, "chain");
    check_pieces(s, &n.p, "chain");
    /* Edge 0 runs x 0..30, edge 2 x 60..90: their pieces stay there. */
    const pm_prim *A = &s->prims[0];
    for (int e = 0; e < 3; e += 2) {
        const pm_meta *tr = pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), (size_t)e), "triangles");
        for (int64_t t = pm_test_meta_at(tr, 0)->u.i; t < pm_test_meta_at(tr, 0)->u.i + pm_test_meta_at(tr, 1)->u.i; t++)
            for (int k = 0; k < 3; k++) {
                float x = A->positions[3 * A->indices[3 * t + k]];
                if (e == 0) cr_assert_lt(x, 30 + 4.0, "edge 0 triangle at x %g", x);
                else cr_assert_gt(x, 60 - 4.0, "edge 2 triangle at x %g", x);
            }
    }
    pm_arena_destroy(a);
}

Test(network, a_ring_of_through_nodes_is_a_closed_road) {
    net n;
    net_init(&n);
    for (int i = 0; i < 6; i++) node(&n, 40 * cos(i * 3.14159265358979323846 / 3), 0, 40 * sin(i * 3.14159265358979323846 / 3));
    for (uint32_t i = 0; i < 6; i++) edge(&n, i, (i + 1) % 6, 6);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    const pm_meta *road = pm_test_meta_at(pm_test_meta_get(s->meta, "roads"), 0);
    cr_assert_eq(geti(s->meta, "roads_count"), 1);
    cr_assert(pm_test_meta_get(road, "closed")->u.b);
    check_surface(s, &n.p, "ring");
    check_pieces(s, &n.p, "ring");
    pm_arena_destroy(a);
}

Test(network, different_widths_through_a_degree_two_node_make_a_transition) {
    net n;
    net_init(&n);
    uint32_t a0 = node(&n, 0, 0, 0), a1 = node(&n, 40, 0, 0), a2 = node(&n, 80, 0, 10);
    edge(&n, a0, a1, 8);
    edge(&n, a1, a2, 5);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    cr_assert_str_eq(kind_of(s, 1), "junction");
    cr_assert_eq(geti(s->meta, "roads_count"), 2);
    check_surface(s, &n.p, "transition");
    check_seams(s, "transition");
    pm_arena_destroy(a);
}

static void sidewalk_all(net *n, double width, double curb);
static void no_overlap(const pm_scene *s, const char *what);
static size_t overlaps_of(net *n, pm_arena *a, pm_network_diag *d);

/* Two T junctions L apart on the x axis: node 0 with arms west and to
 * (north_x0, 40), node 1 with arms east and to (north_x1, z1). */
static void close_pair(net *n, double L, double north_x0, double north_x1, double z1) {
    net_init(n);
    uint32_t c0 = node(n, 0, 0, 0), c1 = node(n, L, 0, 0);
    uint32_t o[4] = {node(n, -40, 0, 0), node(n, north_x0, 0, 40), node(n, north_x1, 0, z1),
                     node(n, L + 40, 0, 0)};
    edge(n, c0, c1, 7);
    edge(n, c0, o[0], 7);
    edge(n, c0, o[1], 7);
    edge(n, c1, o[2], 7);
    edge(n, c1, o[3], 7);
    sidewalk_all(n, 2, 0.15);
    finish(n);
}

static bool has_warning(const pm_scene *s, const char *code) {
    const pm_meta *w = pm_test_meta_get(s->meta, "warnings");
    for (const pm_meta *it = w->u.kids.first; it; it = it->next)
        if (strcmp(pm_test_meta_get(it, "code")->u.s, code) == 0) return true;
    return false;
}

/* The surface, the slabs and no overlap at all. */
static void check_clean(const pm_scene *s, const pm_network_params *p, const char *what) {
    check_surface(s, p, what);
    check_slabs(s, p, what);
    no_overlap(s, what);
}

static void no_overlap(const pm_scene *s, const char *what) {
    ptri *tr;
    size_t nt = plan_tris(s, &tr), first[2] = {0, 0};
    size_t bad = brute_overlaps(tr, nt, first);
    cr_assert_eq(bad, 0, "%s: %zu overlapping pairs near [%g, %g]", what, bad, tr[first[0]].v[0][0],
                 tr[first[0]].v[0][1]);
    free(tr);
}

Test(network, close_junctions_are_joined_by_the_shortest_road_that_fits) {
    /* 10 m apart, north road west, south road east: each mouth wants
     * 8.5 m with 2 m sidewalks. */
    net n;
    close_pair(&n, 10, 0, 10, -40);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    cr_assert(has_warning(s, "junctions_close"));
    cr_assert(has_warning(s, "corner_radius_reduced"));
    cr_assert_str_eq(kind_of(s, 0), "junction");
    cr_assert_str_eq(kind_of(s, 1), "junction");
    check_seams(s, "close pair");
    check_clean(s, &n.p, "close pair");
    pm_arena_destroy(a);
}

Test(network, close_junctions_merge_into_one_centred_between_them) {
    net n;
    close_pair(&n, 3, -30, 33, 30);
    n.nodes[3 * 3 + 2] = 30;     /* node 3 to (-30, 30) */
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    cr_assert(has_warning(s, "junctions_merged"));
    cr_assert_str_eq(kind_of(s, 0), "junction");
    cr_assert_str_eq(kind_of(s, 1), "merged");
    cr_assert_eq(geti(s->meta, "junctions"), 1);
    const pm_meta *e0 = pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), 0);
    cr_assert_eq(pm_test_meta_get(e0, "road")->kind, PM_META_NULL);
    const pm_meta *c = pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "nodes"), 0), "centre");
    cr_assert_float_eq(pm_test_meta_at(c, 0)->u.n, 1.5, 1e-12);
    check_clean(s, &n.p, "merged pair");
    pm_arena_destroy(a);
}

/* A triangle of streets with a short side: nodes 0 and 1 6 m apart both
 * send a road to node 2 40 m south. Their junctions have no room on the
 * 6 m edge, and merged (before network 1.3.0, from a centre between them)
 * their two roads south coincided: refused, "0.00 degrees apart". Now the
 * merged junction keeps both roads on their lines; those two overlap all
 * the way south (no block fits between them), so node 2 joins it too:
 * one junction of three nodes, every other road intact. */
Test(network, a_triangle_with_a_short_side_merges_into_one_junction) {
    net n;
    net_init(&n);
    uint32_t a0 = node(&n, 0, 0, 0), a1 = node(&n, 6, 0, 0), a2 = node(&n, 3, 0, 40);
    uint32_t w = node(&n, -40, 0, 0), e = node(&n, 46, 0, 0), s2 = node(&n, 3, 0, 80);
    edge(&n, a0, a1, 7);
    edge(&n, a0, a2, 7);
    edge(&n, a1, a2, 7);
    edge(&n, a0, w, 7);
    edge(&n, a1, e, 7);
    edge(&n, a2, s2, 7);
    sidewalk_all(&n, 2, 0.15);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    cr_assert(has_warning(s, "junctions_merged"));
    cr_assert_str_eq(kind_of(s, 0), "junction");
    cr_assert_str_eq(kind_of(s, 1), "merged");
    cr_assert_str_eq(kind_of(s, 2), "merged");
    cr_assert_eq(geti(s->meta, "junctions"), 1);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), i), "road")->kind, PM_META_NULL, "edge %zu", i);
    for (size_t i = 3; i < 6; i++)
        cr_assert_neq(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), i), "road")->kind, PM_META_NULL, "edge %zu", i);
    const pm_meta *wm = pm_test_meta_get(s->meta, "warnings");
    const pm_meta *merged = NULL;
    for (const pm_meta *it = wm->u.kids.first; it; it = it->next)
        if (strcmp(pm_test_meta_get(it, "code")->u.s, "junctions_merged") == 0) merged = it;
    cr_assert_eq(pm_test_meta_get(merged, "nodes")->u.kids.count, 3);
    cr_assert_eq(pm_test_meta_get(merged, "edges")->u.kids.count, 3);
    check_seams(s, "merged triangle");
    check_clean(s, &n.p, "merged triangle");
    pm_arena_destroy(a);
}

Test(network, close_junctions_with_no_valid_geometry_name_their_nodes) {
    /* 3 m apart, both north roads leaving side by side (7 m wide, 3 m
     * apart): merged, those two roads still overlap each other. */
    net n;
    close_pair(&n, 3, 0, 3, 40);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_scene *s = NULL;
    pm_network_diag d;
    cr_assert_eq(pm_network_generate(a, &n.p, &s, &d), PM_ERR_GEOMETRY);
    cr_assert_geq(d.nproblems, 1);
    cr_assert_eq(d.problems[0].error, PM_NETWORK_JUNCTION);
    cr_assert_eq(d.problems[0].node, 0);
    pm_arena_destroy(a);
}

Test(network, crossings_name_both_edges) {
    net n;
    net_init(&n);
    uint32_t a0 = node(&n, 0, 0, 0), a1 = node(&n, 40, 0, 40), b0 = node(&n, 0, 0, 40), b1 = node(&n, 40, 0, 0);
    uint32_t c0 = node(&n, 100, 0, 0), c1 = node(&n, 140, 0, 0);
    edge(&n, a0, a1, 7);
    edge(&n, c0, c1, 7);
    edge(&n, b0, b1, 7);
    pm_network_edge *e = edge(&n, c1, node(&n, 140, 0, 40), 7);
    bend(&n, e, 100, 20);            /* back across edge 1? no: stays clear */
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 16);
    uint32_t pairs[4][2];
    cr_assert_eq(pm_network_crossings(a, &n.p, pairs, 4), 1);
    cr_assert_eq(pairs[0][0], 0);
    cr_assert_eq(pairs[0][1], 2);
    /* Touching counts: a node on another edge. */
    n.nodes[3 * b1] = 20;
    n.nodes[3 * b1 + 2] = 20;
    cr_assert_eq(pm_network_crossings(a, &n.p, pairs, 4), 1);
    /* Edges meeting at a shared node do not cross. */
    n.edges[2].to = a1;
    cr_assert_eq(pm_network_crossings(a, &n.p, pairs, 4), 0);
    pm_arena_destroy(a);
}

Test(network, deterministic) {
    pm_rng r;
    pm_rng_seed(&r, 7);
    net n;
    random_net(&n, &r);
    pm_arena *a = pm_arena_create(1 << 20), *b = pm_arena_create(1 << 20);
    pm_scene *s = NULL, *t = NULL;
    pm_network_diag d;
    int ra = pm_network_generate(a, &n.p, &s, &d), rb = pm_network_generate(b, &n.p, &t, &d);
    cr_assert_eq(ra, rb);
    if (ra == PM_OK) {
        cr_assert_eq(s->prims[0].vcount, t->prims[0].vcount);
        cr_assert_eq(memcmp(s->prims[0].positions, t->prims[0].positions, 12 * (size_t)s->prims[0].vcount), 0);
        cr_assert_eq(memcmp(s->prims[0].indices, t->prims[0].indices, 4 * (size_t)s->prims[0].icount), 0);
    }
    pm_arena_destroy(a);
    pm_arena_destroy(b);
}

Test(network, junction_warnings_pass_through_naming_node_and_edges) {
    /* A large radius on a T whose stem is short: the junction shrinks the
     * corners that do not fit and says so. */
    net n;
    net_init(&n);
    uint32_t c = node(&n, 0, 0, 0), e = node(&n, 60, 0, 0), w = node(&n, -60, 0, 0), s_ = node(&n, 0, 0, 14);
    node(&n, 200, 0, 200);          /* unused */
    edge(&n, c, e, 7);
    edge(&n, w, c, 7);
    edge(&n, c, s_, 7);
    n.p.corner_radius = 30;
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    cr_assert_gt(d.nwarnings, 0);
    const pm_meta *w0 = pm_test_meta_at(pm_test_meta_get(s->meta, "warnings"), 0);
    cr_assert_str_eq(pm_test_meta_get(w0, "code")->u.s, "corner_radius_reduced");
    cr_assert_eq(geti(w0, "node"), 0);
    const pm_meta *edges = pm_test_meta_get(w0, "edges");
    cr_assert_eq(edges->u.kids.count, 2);
    cr_assert(pm_test_meta_at(edges, 0)->u.i == 2 || pm_test_meta_at(edges, 1)->u.i == 2, "the stem (edge 2) is named");
    cr_assert_lt(pm_test_meta_get(w0, "radius")->u.n, 30);
    cr_assert_str_eq(kind_of(s, 4), "unused");
    check_surface(s, &n.p, "warnings");
    pm_arena_destroy(a);
}

/* ---- sidewalks along the roads ---- */

static void sidewalk_all(net *n, double width, double curb) {
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = true;
        n->edges[e].sidewalk = (pm_junction_sidewalk){width, curb};
    }
}

/* Plan area of a primitive's triangles (all face up). */
static double plan_area(const pm_prim *P) {
    double s = 0;
    for (uint32_t t = 0; t < P->icount; t += 3) {
        const float *a = P->positions + 3 * P->indices[t], *b = P->positions + 3 * P->indices[t + 1],
                    *c = P->positions + 3 * P->indices[t + 2];
        s += (((double)b[2] - a[2]) * ((double)c[0] - a[0]) - ((double)b[0] - a[0]) * ((double)c[2] - a[2])) / 2;
    }
    return s;
}

/* No point of the plan lies inside two band triangles: sampled on a
 * 0.25 m grid (off the grid of the vertices) over the band's bounds. */
static void check_band_single(const pm_prim *P, const char *what) {
    double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
    for (uint32_t v = 0; v < P->vcount; v++)
        for (int k = 0; k < 2; k++) {
            lo[k] = fmin(lo[k], P->positions[3 * v + 2 * k]);
            hi[k] = fmax(hi[k], P->positions[3 * v + 2 * k]);
        }
    for (double x = lo[0] + 0.0731; x < hi[0]; x += 0.25)
        for (double z = lo[1] + 0.1173; z < hi[1]; z += 0.25) {
            int in = 0;
            double q[2] = {x, z};
            for (uint32_t t = 0; t < P->icount; t += 3) {
                double p[3][2];
                for (int k = 0; k < 3; k++) {
                    p[k][0] = P->positions[3 * P->indices[t + k]];
                    p[k][1] = P->positions[3 * P->indices[t + k] + 2];
                }
                in += pm_orient_xz(p[0], p[1], q) > 0 && pm_orient_xz(p[1], p[2], q) > 0 &&
                      pm_orient_xz(p[2], p[0], q) > 0;
            }
            cr_assert_leq(in, 1, "%s: [%g, %g] lies in %d band triangles", what, x, z, in);
        }
}

/* Every vertical face faces out of its slab: eps behind its centroid
 * (against its normal) is sidewalk, eps in front is not. */
static void check_walls_face_out(const pm_scene *s, double eps, const char *what) {
    double g[2];
    long t = pm_test_slab_facing(prim_named(s, "curb"), prim_named(s, "sidewalk"), eps, g);
    cr_assert_eq(t, -1, "%s: curb triangle %ld at [%g, %g] does not face out of its slab", what, t,
                 g[0], g[1]);
}

Test(network, sidewalks_run_along_a_tee_from_mouth_to_mouth) {
    net n;
    net_init(&n);
    uint32_t c = node(&n, 0, 0, 0), e = node(&n, 60, 0, 0), w = node(&n, -60, 0, 0), s_ = node(&n, 0, 0.5, 50);
    edge(&n, c, e, 7);
    edge(&n, w, c, 7);
    bend(&n, edge(&n, c, s_, 6), 8, 25);
    sidewalk_all(&n, 2, 0.15);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    check_surface(s, &n.p, "tee");
    check_seams(s, "tee");
    /* Closed but for the bottom, every asphalt edge but the three free
     * ends under a curb: the roads' slabs continue the junction's. */
    check_slabs(s, &n.p, "tee");
    check_band_single(prim_named(s, "sidewalk"), "tee");
    check_walls_face_out(s, 1e-3, "tee");
    for (int k = 0; k < 3; k++) {
        const pm_meta *sides = pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), (size_t)k), "sidewalk_sides");
        cr_assert_eq(sides->u.kids.count, 2);
        cr_assert_str_eq(pm_test_meta_at(sides, 0)->u.s, "left");
        cr_assert_str_eq(pm_test_meta_at(sides, 1)->u.s, "right");
    }
    /* The band is about its width wide along all the curbs: its area is
     * within a few per cent of width x (the roads' two edges + the
     * junction's curbs), give or take the corners. */
    const pm_prim *side = prim_named(s, "sidewalk");
    double area = plan_area(side);
    cr_assert_gt(area, 2.0 * 2 * (60 + 60 + 50 - 20), "band area %g", area);
    cr_assert_lt(area, 2.0 * 2 * (60 + 60 + 60 + 20), "band area %g", area);
    pm_arena_destroy(a);
}

static size_t gaps_of(const pm_scene *s) {
    size_t k = 0;
    for (const pm_meta *w = pm_test_meta_get(s->meta, "warnings")->u.kids.first; w; w = w->next)
        k += strcmp(pm_test_meta_get(w, "code")->u.s, "sidewalk_interrupted") == 0;
    return k;
}

Test(network, a_tight_turn_trims_the_inner_band_instead_of_folding_it) {
    /* A quarter turn of 6 m radius on the centre line with an 8 m road:
     * its inner edge has a radius of about 2 m, under the 4 m sidewalk,
     * whose offset curve would loop there. */
    net n;
    net_init(&n);
    uint32_t p0 = node(&n, 0, 0, 0), p1 = node(&n, 36, 0, 40);
    pm_network_edge *e = edge(&n, p0, p1, 8);
    double pts[3 * 6] = {20, 0, 0};
    for (int k = 0; k < 5; k++) {
        double t = -1.57079632679489661923 + k * 3.14159265358979323846 / 8;
        pts[3 + 3 * k] = 30 + 6 * cos(t);
        pts[3 + 3 * k + 1] = 0;
        pts[3 + 3 * k + 2] = 6 + 6 * sin(t);
    }
    e->points = pts;
    e->npoints = 6;
    sidewalk_all(&n, 4, 0.2);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    check_surface(s, &n.p, "turn");
    size_t tris = check_slabs(s, &n.p, "turn");
    cr_assert_gt(tris, 50);
    cr_assert_eq(gaps_of(s), 0, "the sidewalk runs through the turn");
    /* Trimmed, not folded: every band triangle faces up (checked) and no
     * two overlap, where an untrimmed loop would fold over itself. */
    check_band_single(prim_named(s, "sidewalk"), "turn");
    check_walls_face_out(s, 1e-3, "turn");
    pm_arena_destroy(a);
}

Test(network, a_hairpin_tighter_than_its_width_fans_its_inner_side) {
    /* Through (30, 0), (36, 6), (30, 12) the spline's tip is tighter than
     * the 6 m road's half width plus its 2 m sidewalk, its legs 2 m clear
     * of each other: the road's inner side runs to one pivot (a fan, as
     * in /v1/roads), its sidewalk trimmed there; built, nothing overlaps
     * (no exemption for a road's own collapse). */
    net n;
    net_init(&n);
    u_turn(&n, 12, 6, hairpin_tip);
    sidewalk_all(&n, 2, 0.2);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    check_clean(s, &n.p, "tight hairpin");
    pm_arena_destroy(a);
    /* Round a tip of radius 12 (legs 24 m apart): built, no overlap. */
    static const double wide_tip[] = {30, 0, -6, 42, 0, 6, 30, 0, 18};
    net_init(&n);
    pm_network_edge *e = edge(&n, node(&n, 0, 0, -6), node(&n, 0, 0, 18), 6);
    e->points = wide_tip;
    e->npoints = 3;
    sidewalk_all(&n, 2, 0.2);
    finish(&n);
    a = pm_arena_create(1 << 20);
    s = build(&n, a, &d);
    check_clean(s, &n.p, "wide hairpin");
    pm_arena_destroy(a);
}

Test(network, a_sidewalk_change_at_a_degree_two_node_makes_a_transition) {
    net n;
    net_init(&n);
    uint32_t a0 = node(&n, 0, 0, 0), a1 = node(&n, 40, 0, 0), a2 = node(&n, 80, 0, 10), a3 = node(&n, 120, 0, 10);
    edge(&n, a0, a1, 7);
    edge(&n, a1, a2, 7);
    edge(&n, a2, a3, 7);
    sidewalk_all(&n, 2, 0.15);
    n.edges[1].sidewalk.width = 3;     /* wider in the middle: two transitions */
    n.edges[2].has_sidewalk = false;
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    cr_assert_str_eq(kind_of(s, 1), "junction");
    cr_assert_str_eq(kind_of(s, 2), "junction");
    cr_assert_eq(geti(s->meta, "roads_count"), 3);
    check_surface(s, &n.p, "transition");
    check_slabs(s, &n.p, "transition");
    cr_assert_eq(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), 2), "sidewalk_sides")->u.kids.count, 0);
    pm_arena_destroy(a);
}

Test(network, a_ring_road_has_closed_sidewalks_without_caps) {
    net n;
    net_init(&n);
    for (int i = 0; i < 6; i++) node(&n, 40 * cos(i * 3.14159265358979323846 / 3), 0, 40 * sin(i * 3.14159265358979323846 / 3));
    for (uint32_t i = 0; i < 6; i++) edge(&n, i, (i + 1) % 6, 6);
    sidewalk_all(&n, 2.5, 0.15);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    check_surface(s, &n.p, "ring");
    check_slabs(s, &n.p, "ring");
    pm_arena_destroy(a);
}

Test(network, sharp_corners_join_the_road_slabs_too) {
    /* corner_radius 0: the junction's curbs meet at sharp corners, and its
     * slabs still hand over to the roads' at every mouth. */
    net n;
    net_init(&n);
    uint32_t c = node(&n, 0, 0, 0);
    for (int k = 0; k < 4; k++) {
        double t = k * 3.14159265358979323846 / 2 + 0.3;
        edge(&n, c, node(&n, 50 * cos(t), 0, 50 * sin(t)), 6 + k);
    }
    sidewalk_all(&n, 2, 0.15);
    n.p.corner_radius = 0;
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    check_surface(s, &n.p, "sharp");
    check_slabs(s, &n.p, "sharp");
    check_band_single(prim_named(s, "sidewalk"), "sharp");
    pm_arena_destroy(a);
}

/* ---- plan overlaps ---- */

/* The network is refused; returns the overlap problems (at least one). */
static size_t overlaps_of(net *n, pm_arena *a, pm_network_diag *d) {
    pm_scene *s = NULL;
    int rc = pm_network_generate(a, &n->p, &s, d);
    cr_assert_eq(rc, PM_ERR_GEOMETRY, "rc %d: an overlapping network was built", rc);
    size_t k = 0;
    for (size_t i = 0; i < d->nproblems; i++) {
        const pm_network_problem *q = &d->problems[i];
        cr_assert_eq(q->error, PM_NETWORK_OVERLAP, "%s", q->message);
        ptri t[2];
        for (int w = 0; w < 2 && q->nedges + (q->node >= 0) > 0; w++) {
            cr_assert(ptri_make(q->tris[w], q->tris[w] + 2, q->tris[w] + 4, &t[w]));
            cr_assert(ptri_inside(&t[w], q->point), "%s", q->message);
        }
        k++;
    }
    cr_assert_gt(k, 0);
    return k;
}

static bool names_edges(const pm_network_problem *q, uint32_t a, uint32_t b) {
    return q->nedges == 2 && ((q->edges[0] == a && q->edges[1] == b) || (q->edges[0] == b && q->edges[1] == a));
}

Test(network, parallel_roads_closer_than_their_widths_overlap) {
    /* Centre lines 5 m apart, 8 m wide: 3 m of asphalt on top of each
     * other, though the polylines never cross. */
    net n;
    net_init(&n);
    edge(&n, node(&n, 0, 0, 0), node(&n, 100, 0, 0), 8);
    edge(&n, node(&n, 0, 0, 5), node(&n, 100, 0, 5), 8);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    cr_assert_eq(overlaps_of(&n, a, &d), 1);
    const pm_network_problem *q = &d.problems[0];
    cr_assert(names_edges(q, 0, 1), "%s", q->message);
    cr_assert_eq(q->node, -1);
    cr_assert_not_null(strstr(q->message, "edge 0's road overlaps edge 1's road near ["), "%s", q->message);
    cr_assert(q->point[1] > 1 && q->point[1] < 4, "the overlap is the strip z in (1, 4): %g", q->point[1]);
    pm_arena_destroy(a);
}

/* Two straight 8 m roads 100 m long, gap apart, with sidewalks of width
 * sw (0: none). */
static void parallel_roads(net *n, double gap, double sw) {
    net_init(n);
    edge(n, node(n, 0, 0, 0), node(n, 100, 0, 0), 8);
    edge(n, node(n, 0, 0, gap), node(n, 100, 0, gap), 8);
    if (sw > 0) sidewalk_all(n, sw, 0.15);
    finish(n);
}

/* Builds the network, which must succeed with no two triangles
 * overlapping in plan (the brute-force oracle). */
static pm_scene *build_clean(net *n, pm_arena *a, pm_network_diag *d) {
    pm_scene *s = build(n, a, d);
    ptri *t;
    size_t nt = plan_tris(s, &t), first[2];
    cr_assert_eq(brute_overlaps(t, nt, first), 0);
    free(t);
    return s;
}

Test(network, parallel_roads_a_centimetre_apart_pass) {
    /* 8.01 m apart: 1 cm of clearance between the curb lines. */
    net n;
    parallel_roads(&n, 8.01, 0);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    build_clean(&n, a, &d);
    pm_arena_destroy(a);
    /* 2 cm closer, and their asphalt overlaps by 1 cm. */
    parallel_roads(&n, 7.99, 0);
    a = pm_arena_create(1 << 20);
    overlaps_of(&n, a, &d);
    cr_assert(names_edges(&d.problems[0], 0, 1), "%s", d.problems[0].message);
    /* The distance their centre lines need: two half widths. */
    cr_assert_float_eq(d.problems[0].needed, 8.0, 1e-9);
    cr_assert_not_null(strstr(d.problems[0].message, "must stay 8.000 m apart"), "%s", d.problems[0].message);
    pm_arena_destroy(a);
}

Test(network, a_road_turning_tightly_at_a_through_node_fans_its_inner_side) {
    /* A 25-degree turn at a through node whose neighbouring control points
     * lie 1.5 m from it: the 8 m road's two edges would lie on each other
     * round its inside (refused, "overlaps itself" at that node, before
     * roads fanned tight turns). One road, its inner side fanned onto one
     * pivot as in /v1/roads: built, nothing overlaps. */
    net n;
    net_init(&n);
    double t = 25 * 3.14159265358979323846 / 180;
    uint32_t a = node(&n, -40, 0, 0), b = node(&n, 0, 0, 0), c = node(&n, 40 * cos(t), 0, 40 * sin(t));
    bend(&n, edge(&n, a, b, 8), -1.5, 0);
    bend(&n, edge(&n, b, c, 8), 1.5 * cos(t), 1.5 * sin(t));
    sidewalk_all(&n, 2, 0.2);
    finish(&n);
    pm_arena *ar = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, ar, &d);
    cr_assert_str_eq(kind_of(s, b), "through");
    cr_assert_eq(geti(s->meta, "roads_count"), 1);
    check_clean(s, &n.p, "tight turn at a through node");
    pm_arena_destroy(ar);
}

Test(network, parallel_sidewalks_a_centimetre_over_each_other_are_cut_back) {
    /* 10.01 m apart, 8 m roads with 1 m sidewalks: the slabs fit with 1 cm
     * to spare. 2 cm closer they would lie 1 cm on each other: the two
     * sidewalks between the roads are left out (sidewalk_interrupted),
     * the outer two stay, and nothing overlaps. */
    for (int closer = 0; closer < 2; closer++) {
        net n;
        parallel_roads(&n, closer ? 9.99 : 10.01, 1);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_network_diag d;
        pm_scene *s = build_clean(&n, a, &d);
        check_slabs(s, &n.p, "parallel");
        /* The band's area: both sides of both roads, or the outer two. */
        const pm_prim *sp = prim_named(s, "sidewalk");
        double area = 0;
        for (uint32_t i = 0; i < sp->icount; i += 3) {
            const float *p0 = sp->positions + 3 * sp->indices[i], *p1 = sp->positions + 3 * sp->indices[i + 1],
                        *p2 = sp->positions + 3 * sp->indices[i + 2];
            area += 0.5 * fabs(((double)p1[0] - p0[0]) * ((double)p2[2] - p0[2]) -
                               ((double)p2[0] - p0[0]) * ((double)p1[2] - p0[2]));
        }
        cr_assert_float_eq(area, closer ? 200.0 : 400.0, 0.5, "sidewalk area %g", area);
        cr_assert_eq(d.nwarnings, closer ? 2u : 0u, "%zu warnings", d.nwarnings);
        pm_arena_destroy(a);
    }
}

Test(network, a_ring_roads_sidewalk_cut_back_stays_closed) {
    /* A ring of through nodes (a closed road, starting at its easternmost
     * node) and a straight road 9.5 m west of its westernmost: 6 m roads,
     * 2.5 m sidewalks, so the two sidewalks there would lie 1.5 m on each
     * other and the asphalt clears by 4 m. Both are cut back; the ring's
     * side opens (its slabs end in caps, never two on one spot: here at
     * its start) and every slab stays closed. */
    net n;
    net_init(&n);
    for (int i = 0; i < 6; i++) node(&n, 40 * cos(i * 3.14159265358979323846 / 3), 0, 40 * sin(i * 3.14159265358979323846 / 3));
    for (uint32_t i = 0; i < 6; i++) edge(&n, i, (i + 1) % 6, 6);
    edge(&n, node(&n, -49.5, 0, -30), node(&n, -49.5, 0, 30), 6);
    sidewalk_all(&n, 2.5, 0.15);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 22);
    pm_network_diag d;
    pm_scene *s = build_clean(&n, a, &d);
    check_slabs(s, &n.p, "ring cut");
    cr_assert_geq(d.nwarnings, 3u, "%zu warnings", d.nwarnings);
    pm_arena_destroy(a);
}

Test(network, a_u_turn_whose_legs_overlap_overlaps_itself) {
    /* One edge out 50 m, round a 3 m tip and back 6 m from itself: an
     * 8 m road's legs share 2 m. Named once, "overlaps itself". */
    net n;
    net_init(&n);
    static const double tip[] = {50, 0, 0, 56, 0, 3, 50, 0, 6};
    u_turn(&n, 6, 8, tip);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    cr_assert_eq(overlaps_of(&n, a, &d), 1);
    const pm_network_problem *q = &d.problems[0];
    cr_assert_eq(q->nedges, 1);
    cr_assert_eq(q->edges[0], 0);
    cr_assert_not_null(strstr(q->message, "edge 0 overlaps itself near ["), "%s", q->message);
    pm_arena_destroy(a);
    /* 8.5 m apart: legs clear of each other round a tip tighter than the
     * half width: the inner side fans onto one pivot, built. */
    net_init(&n);
    static const double wide[] = {50, 0, 0, 54.25, 0, 4.25, 50, 0, 8.5};
    u_turn(&n, 8.5, 8, wide);
    finish(&n);
    a = pm_arena_create(1 << 20);
    no_overlap(build(&n, a, &d), "tight tip");
    pm_arena_destroy(a);
    /* 20 m apart round a semicircle of radius 10 (seven points on it):
     * built, no overlap. */
    net_init(&n);
    double round10[3 * 7];
    for (int k = 0; k < 7; k++) {
        double t = -1.5707963267948966 + k * 3.141592653589793 / 6;
        round10[3 * k] = 50 + 10 * cos(t);
        round10[3 * k + 1] = 0;
        round10[3 * k + 2] = 10 + 10 * sin(t);
    }
    pm_network_edge *e = edge(&n, node(&n, 0, 0, 0), node(&n, 0, 0, 20), 8);
    e->points = round10;
    e->npoints = 7;
    finish(&n);
    a = pm_arena_create(1 << 20);
    pm_scene *s = build(&n, a, &d);
    no_overlap(s, "round U-turn");
    pm_arena_destroy(a);
}

Test(network, hairpin_with_wide_sidewalks_cuts_its_inner_sidewalks_back) {
    /* The hairpin above with 4 m sidewalks: its inner bands (3 to 7 m
     * and 5 to 9 m across) would share 2 m along both legs. A sidewalk on
     * its own road gives way like one on another piece: cut back with end
     * caps (sidewalk_interrupted), the asphalt as it was; built, clean. */
    net n;
    net_init(&n);
    u_turn(&n, 12, 6, hairpin_tip);
    sidewalk_all(&n, 4, 0.2);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    cr_assert(has_warning(s, "sidewalk_interrupted"));
    check_clean(s, &n.p, "hairpin with wide sidewalks");
    pm_arena_destroy(a);
}

Test(network, junctions_too_close_overlap_naming_both_nodes) {
    /* Two junctions 6 m apart, each with arms west / east-free, north and
     * south, 8 m wide: their north and south roads overlap, and so do the
     * junctions themselves. */
    net n;
    net_init(&n);
    uint32_t j0 = node(&n, 0, 0, 0), j1 = node(&n, 6, 0, 0);
    edge(&n, j0, node(&n, -50, 0, 0), 8);
    edge(&n, j0, node(&n, 0, 0, 50), 8);
    edge(&n, j0, node(&n, 0, 0, -50), 8);
    edge(&n, j1, node(&n, 56, 0, 0), 8);
    edge(&n, j1, node(&n, 6, 0, 50), 8);
    edge(&n, j1, node(&n, 6, 0, -50), 8);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    size_t k = overlaps_of(&n, a, &d);
    bool nodes = false, north = false;
    for (size_t i = 0; i < k; i++) {
        const pm_network_problem *q = &d.problems[i];
        nodes |= q->node == (int64_t)j0 && q->node2 == (int64_t)j1 && q->nedges == 0 &&
                 strstr(q->message, "the junction at node 0 overlaps the junction at node 1") != NULL;
        north |= names_edges(q, 1, 4);
    }
    cr_assert(nodes, "no junction-junction overlap named (%s)", d.problems[0].message);
    cr_assert(north, "the north roads' overlap not named");
    pm_arena_destroy(a);
}

Test(network, a_town_has_no_overlaps) {
    /* A 3 x 3 town, 40 m blocks, bends and sidewalks: built, and no two of
     * its surface triangles overlap by the brute-force oracle. */
    net n;
    net_init(&n);
    uint32_t id[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) id[i][j] = node(&n, 40 * i, 0.2 * ((i + j) % 3), 40 * j);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            if (i + 1 < 3) edge(&n, id[i][j], id[i + 1][j], 7);
            if (j + 1 < 3) bend(&n, edge(&n, id[i][j], id[i][j + 1], j % 2 ? 6 : 8), 40 * i + 3, 40 * j + 20);
        }
    sidewalk_all(&n, 2, 0.15);
    n.p.corner_radius = 4;
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = build(&n, a, &d);
    ptri *t;
    size_t nt = plan_tris(s, &t), first[2];
    cr_assert_gt(nt, 800, "%zu", nt);   /* 918 (1,000+ before streets took the fewest chords) */
    cr_assert_eq(brute_overlaps(t, nt, first), 0);
    free(t);
    pm_arena_destroy(a);
}

/* ---- arms from the road (issue 11) ---- */

/* A 7 m crossroads, 40 m arms, with or without 2 m sidewalks; the east
 * edge (edge 0) gets the interior points pts (n of them, [x, y, z]). */
static void crossroads(net *n, bool sw, const double *pts, size_t np) {
    net_init(n);
    uint32_t c = node(n, 0, 0, 0), e = node(n, 40, 0, 0), w = node(n, -40, 0, 0), s = node(n, 0, 0, 40),
             nn = node(n, 0, 0, -40);
    pm_network_edge *east = edge(n, c, e, 7);
    east->points = pts;
    east->npoints = np;
    edge(n, w, c, 7);
    edge(n, c, s, 7);
    edge(n, nn, c, 7);
    if (sw) sidewalk_all(n, 2, 0.15);
    finish(n);
}

static bool same_prim(const pm_prim *a, const pm_prim *b) {
    return a->vcount == b->vcount && a->icount == b->icount &&
           memcmp(a->positions, b->positions, 3 * sizeof(float) * a->vcount) == 0 &&
           memcmp(a->indices, b->indices, sizeof(uint32_t) * a->icount) == 0;
}

Test(network, a_point_in_line_near_a_junction_changes_nothing) {
    static const double at4[] = {4, 0, 0}, at12[] = {12, 0, 0};
    for (int sw = 0; sw < 2; sw++) {
        net plain, with4, with12;
        crossroads(&plain, sw, NULL, 0);
        crossroads(&with4, sw, at4, 1);
        crossroads(&with12, sw, at12, 1);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_network_diag d0, d4, d12;
        pm_scene *s0 = build(&plain, a, &d0), *s4 = build(&with4, a, &d4), *s12 = build(&with12, a, &d12);
        /* No fillet lost to the point: as many warnings as without it. */
        cr_assert_eq(d4.nwarnings, d0.nwarnings, "sidewalks %d", sw);
        cr_assert_eq(d12.nwarnings, d0.nwarnings, "sidewalks %d", sw);
        cr_assert_eq(s4->nprims, s0->nprims);
        for (uint32_t i = 0; i < s0->nprims; i++) {
            cr_assert(same_prim(&s4->prims[i], &s0->prims[i]), "sidewalks %d: %s differs with a point 4 m out",
                      sw, s0->prims[i].name);
            /* Kept as a control point 12 m out, it only moves samples. */
            double a0 = plan_area(&s0->prims[i]), a12 = plan_area(&s12->prims[i]);
            cr_assert(fabs(a12 - a0) <= 1e-4 * a0 + 1e-6, "sidewalks %d: %s's plan area %g, %g without the point",
                      sw, s0->prims[i].name, a12, a0);
        }
        pm_arena_destroy(a);
    }
}

Test(network, a_bend_of_under_a_degree_near_a_junction_builds) {
    /* The east edge bends 0.8 degrees at a point 9 m out (and again at
     * 20 m, back towards the node's line), with and without sidewalks. */
    double t = tan(0.8 * 3.14159265358979323846 / 180);
    double pts[] = {9, 0, 0, 20, 0, 11 * t};
    for (int sw = 0; sw < 2; sw++) {
        net n;
        crossroads(&n, sw, pts, 2);
        pm_arena *a = pm_arena_create(1 << 20);
        pm_network_diag d;
        pm_scene *s = build(&n, a, &d);
        check_surface(s, &n.p, "0.8 degree bend");
        check_seams(s, "0.8 degree bend");
        if (sw) check_slabs(s, &n.p, "0.8 degree bend");
        ptri *tr;
        size_t nt = plan_tris(s, &tr), first[2];
        cr_assert_eq(brute_overlaps(tr, nt, first), 0);
        free(tr);
        pm_arena_destroy(a);
    }
}

/* Which edge of a chain each road triangle belongs to. A chain is one road
 * through its through-nodes; its triangles are split where the road passes
 * each through-node, so every edge owns a piece of the road. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "network/network_internal.h"
#include "scene/result.h"

typedef struct pm__ukey { float u; uint32_t v; } pm__ukey;

static int pm__ukey_cmp(const void *x, const void *y) {
    const pm__ukey *a = x, *b = y;
    if (a->u != b->u) return a->u < b->u ? -1 : 1;
    return a->v < b->v ? -1 : (a->v > b->v);
}

static double pm__plan2(const float *a, const double *b) {
    return ((double)a[0] - b[0]) * ((double)a[0] - b[0]) + ((double)a[2] - b[2]) * ((double)a[2] - b[2]);
}

/* The centre column (V = 0.5 in the road's own UVs) in travel order: its U
 * (the mean of the two edges' arc lengths) only grows along the road. */
static uint32_t pm__centre_order(pm_arena *a, const pm_prim *P, uint32_t **order, uint32_t **rank) {
    pm__ukey *k = pm_arena_alloc(a, (P->vcount + 1) * sizeof *k);
    *order = pm_arena_alloc(a, (P->vcount + 1) * sizeof **order);
    *rank = pm_arena_alloc(a, (P->vcount + 1) * sizeof **rank);
    if (!k || !*order || !*rank) return UINT32_MAX;
    uint32_t n = 0;
    for (uint32_t v = 0; v < P->vcount; v++) {
        (*rank)[v] = UINT32_MAX;
        float vv = P->uvs[2 * v + 1];
        if (vv > 0.25f && vv < 0.75f) k[n++] = (pm__ukey){P->uvs[2 * v], v};
    }
    qsort(k, n, sizeof *k, pm__ukey_cmp);
    for (uint32_t i = 0; i < n; i++) {
        (*order)[i] = k[i].v;
        (*rank)[k[i].v] = i;
    }
    return n;
}

/* Travel order rank of the centre vertex at each through-node: the nearest
 * to the node in plan among those after the previous one. */
static void pm__through_sections(const pm__net *N, const pm__road *R, const pm_prim *P,
                                 const uint32_t *order, uint32_t nc, uint32_t *sec) {
    size_t ci = 0;
    uint32_t from = 0;
    for (size_t j = 0; j + 1 < R->nsteps; j++) {
        ci += N->p->edges[N->steps.data[R->first_step + j].edge].npoints + 1;
        const double *T = R->ctrl + 3 * ci;
        uint32_t best = from;
        double bd = HUGE_VAL;
        for (uint32_t r = from; r < nc; r++) {
            double d = pm__plan2(P->positions + 3 * order[r], T);
            if (d < bd) { bd = d; best = r; }
        }
        sec[j] = best;
        from = best + 1 < nc ? best + 1 : best;
    }
}

/* Whether a triangle whose only centre vertex is the section at a
 * through-node lies after it: its edge-column vertex furthest from the
 * section line is ahead along the road. */
static bool pm__after(const pm_prim *P, const uint32_t *tri, const uint32_t *order, uint32_t nc,
                      uint32_t s) {
    const float *c = P->positions + 3 * order[s];
    const float *a = P->positions + 3 * order[s > 0 ? s - 1 : s];
    const float *b = P->positions + 3 * order[s + 1 < nc ? s + 1 : s];
    double tx = (double)b[0] - a[0], tz = (double)b[2] - a[2], best = 0.0;
    for (int k = 0; k < 3; k++) {
        const float *q = P->positions + 3 * tri[k];
        double d = ((double)q[0] - c[0]) * tx + ((double)q[2] - c[2]) * tz;
        if (fabs(d) > fabs(best)) best = d;
    }
    return best > 0.0;
}

static uint32_t pm__edge_of_interval(const uint32_t *sec, size_t nsec, uint32_t i) {
    uint32_t e = 0;
    while (e < nsec && sec[e] <= i) e++;
    return e;
}

int pm__network_pieces(pm__net *N, const pm__road *R, const pm_prim *P, uint32_t *tri_edge,
                       double *len) {
    uint32_t nt = P->icount / 3;
    memset(tri_edge, 0, (nt + 1) * sizeof *tri_edge);
    memset(len, 0, R->nsteps * sizeof *len);
    if (R->nsteps == 1) {
        len[0] = R->length;
        return PM_OK;
    }
    uint32_t *order, *rank;
    uint32_t nc = pm__centre_order(N->a, P, &order, &rank);
    uint32_t *sec = pm_arena_alloc(N->a, R->nsteps * sizeof *sec);
    if (nc == UINT32_MAX || !sec) return PM_ERR_NOMEM;
    if (nc < 2) return PM_OK;
    size_t nsec = R->nsteps - 1;
    pm__through_sections(N, R, P, order, nc, sec);
    for (uint32_t r = 0; r + 1 < nc; r++)
        len[pm__edge_of_interval(sec, nsec, r)] += pm_v3f_dist(P->positions + 3 * order[r], P->positions + 3 * order[r + 1]);
    for (uint32_t t = 0; t < nt; t++) {
        const uint32_t *tri = P->indices + 3 * t;
        uint32_t lo = UINT32_MAX, hi = 0;
        for (int k = 0; k < 3; k++) {
            uint32_t r = rank[tri[k]];
            if (r == UINT32_MAX) continue;
            lo = r < lo ? r : lo;
            hi = r > hi ? r : hi;
        }
        if (lo == UINT32_MAX) continue;          /* no centre vertex: the first edge */
        uint32_t i = lo;
        /* One centre vertex: the triangle spans the interval before or after
         * it; that matters only at a through-node's section. */
        if (hi == lo)
            for (size_t k = 0; k < nsec; k++)
                if (sec[k] == lo && !pm__after(P, tri, order, nc, lo)) i = lo > 0 ? lo - 1 : 0;
        tri_edge[t] = pm__edge_of_interval(sec, nsec, i);
    }
    return PM_OK;
}

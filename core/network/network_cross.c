/* Crossing edges of a network: a sweep over the control-polyline segments
 * sorted by their smallest x, decided with exact orientation tests. */
#include <stdlib.h>
#include <string.h>

#include "network/network.h"
#include "geom/predicates.h"

typedef struct pm__seg {
    double a[2], b[2];         /* plan (x, z) */
    double lo[2], hi[2];       /* bounds */
    uint64_t ida, idb;         /* point identities: nodes, then interior points */
    uint32_t edge;
} pm__seg;

static int pm__seg_cmp(const void *x, const void *y) {
    const pm__seg *s = x, *t = y;
    if (s->lo[0] != t->lo[0]) return s->lo[0] < t->lo[0] ? -1 : 1;
    if (s->edge != t->edge) return s->edge < t->edge ? -1 : 1;
    return s->ida < t->ida ? -1 : (s->ida > t->ida);
}

static int pm__pair_cmp(const void *x, const void *y) {
    const uint32_t *s = x, *t = y;
    if (s[0] != t[0]) return s[0] < t[0] ? -1 : 1;
    return s[1] < t[1] ? -1 : (s[1] > t[1]);
}

static double pm__sgn(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

/* Closed segments meet (their bounds are known to overlap). */
static bool pm__meet(const pm__seg *s, const pm__seg *t) {
    double o1 = pm__sgn(pm_orient2d(s->a, s->b, t->a)), o2 = pm__sgn(pm_orient2d(s->a, s->b, t->b));
    double o3 = pm__sgn(pm_orient2d(t->a, t->b, s->a)), o4 = pm__sgn(pm_orient2d(t->a, t->b, s->b));
    /* All four zero: collinear, and overlapping bounds mean they share points. */
    return o1 * o2 <= 0 && o3 * o4 <= 0;
}

static void pm__point(const pm_network_params *p, const pm_network_edge *e, size_t k, double out[2]) {
    /* k = 0: from node, 1..npoints: interior, npoints + 1: to node */
    const double *q = k == 0 ? p->nodes + 3 * e->from
                             : (k > e->npoints ? p->nodes + 3 * e->to : e->points + 3 * (k - 1));
    out[0] = q[0];
    out[1] = q[2];
}

int64_t pm_network_crossings(pm_arena *scratch, const pm_network_params *p,
                             uint32_t (*pairs)[2], size_t max) {
    size_t nseg = 0;
    for (size_t e = 0; e < p->nedges; e++) nseg += p->edges[e].npoints + 1;
    pm__seg *seg = pm_arena_alloc(scratch, (nseg ? nseg : 1) * sizeof *seg);
    if (!seg) return -1;
    size_t k = 0;
    uint64_t next_id = p->nnodes;
    for (uint32_t e = 0; e < p->nedges; e++) {
        const pm_network_edge *E = &p->edges[e];
        uint64_t prev = E->from;
        for (size_t i = 0; i <= E->npoints; i++) {
            pm__seg *s = &seg[k++];
            pm__point(p, E, i, s->a);
            pm__point(p, E, i + 1, s->b);
            s->ida = prev;
            s->idb = i == E->npoints ? E->to : next_id++;
            prev = s->idb;
            s->edge = e;
            for (int c = 0; c < 2; c++) {
                s->lo[c] = s->a[c] < s->b[c] ? s->a[c] : s->b[c];
                s->hi[c] = s->a[c] < s->b[c] ? s->b[c] : s->a[c];
            }
        }
    }
    qsort(seg, nseg, sizeof *seg, pm__seg_cmp);
    PM_VEC(uint32_t) found = {0};
    for (size_t i = 0; i < nseg; i++) {
        const pm__seg *s = &seg[i];
        for (size_t j = i + 1; j < nseg && seg[j].lo[0] <= s->hi[0]; j++) {
            const pm__seg *t = &seg[j];
            if (t->lo[1] > s->hi[1] || t->hi[1] < s->lo[1]) continue;
            /* Segments that share a point meet there by design: at a node
             * (the junction's arm separation covers overlap) or inside one
             * edge's polyline. */
            if (s->ida == t->ida || s->ida == t->idb || s->idb == t->ida || s->idb == t->idb)
                continue;
            if (!pm__meet(s, t)) continue;
            uint32_t a = s->edge < t->edge ? s->edge : t->edge;
            uint32_t b = s->edge < t->edge ? t->edge : s->edge;
            if (pm_vec_push(scratch, &found, a) || pm_vec_push(scratch, &found, b)) return -1;
        }
    }
    size_t n = found.len / 2;
    if (n) qsort(found.data, n, 2 * sizeof(uint32_t), pm__pair_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t *q = found.data + 2 * i;
        if (u && found.data[2 * (u - 1)] == q[0] && found.data[2 * (u - 1) + 1] == q[1]) continue;
        found.data[2 * u] = q[0];
        found.data[2 * u + 1] = q[1];
        if (u < max) {
            pairs[u][0] = q[0];
            pairs[u][1] = q[1];
        }
        u++;
    }
    return (int64_t)u;
}

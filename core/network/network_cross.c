/* Crossing edges of a network: the control-polyline segments in a uniform
 * grid (a sweep by smallest x inside each cell), decided with exact
 * orientation tests. */
#include <math.h>
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

/* A uniform grid over the segments' bounds: each segment is listed in
 * every cell its bounds touch (cells in row-major order, each cell's list
 * sorted by lo[0]), and a pair of segments is tested only in the cell of
 * the low corner of the overlap of their bounds, so once. Cell coordinates
 * come from one monotone formula, so that corner's cell lies in both
 * segments' ranges. */
typedef struct pm__grid {
    double x0, z0, inv;        /* origin and 1 / cell size */
    uint32_t nx, nz;
    uint32_t *first;           /* nx * nz + 1 offsets into idx */
    uint32_t *idx;             /* segment indices */
    uint32_t (*cs)[4];         /* per segment: the cells of lo[0], hi[0], lo[1], hi[1] */
} pm__grid;

static uint32_t pm__cell(double v, double v0, double inv, uint32_t n) {
    double c = (v - v0) * inv;
    return c <= 0.0 ? 0 : (c >= (double)(n - 1) ? n - 1 : (uint32_t)c);
}

/* A cell list's entry with its sort key. */
typedef struct pm__keyed { double lo; uint32_t i; } pm__keyed;

static int pm__keyed_cmp(const void *x, const void *y) {
    const pm__keyed *s = x, *t = y;
    return s->lo < t->lo ? -1 : (s->lo > t->lo);
}

/* Cell list l (m entries) in order of lo[0]: insertion for the usual few,
 * qsort for a crowded cell (ties in any order: every pair of the cell is
 * still tested once, and the pairs found are sorted). */
static int pm__sort_cell(pm_arena *a, const pm__seg *seg, uint32_t *l, size_t m) {
    if (m <= 24) {
        for (size_t i = 1; i < m; i++) {
            uint32_t v = l[i];
            size_t j = i;
            for (; j > 0 && seg[l[j - 1]].lo[0] > seg[v].lo[0]; j--) l[j] = l[j - 1];
            l[j] = v;
        }
        return 0;
    }
    pm__keyed *k = pm_arena_alloc(a, m * sizeof *k);
    if (!k) return -1;
    for (size_t i = 0; i < m; i++) k[i] = (pm__keyed){seg[l[i]].lo[0], l[i]};
    qsort(k, m, sizeof *k, pm__keyed_cmp);
    for (size_t i = 0; i < m; i++) l[i] = k[i].i;
    return 0;
}

/* Cells of about the segments' mean extent (at least one per segment's
 * share of the area), coarser until the lists hold at most 16 entries per
 * segment: a network of long diagonal edges ends in few cells. */
static int pm__grid_build(pm_arena *a, const pm__seg *seg, size_t nseg, pm__grid *g) {
    double lo[2] = {seg[0].lo[0], seg[0].lo[1]}, hi[2] = {seg[0].hi[0], seg[0].hi[1]}, ext = 0.0;
    for (size_t i = 0; i < nseg; i++)
        for (int c = 0; c < 2; c++) {
            lo[c] = seg[i].lo[c] < lo[c] ? seg[i].lo[c] : lo[c];
            hi[c] = seg[i].hi[c] > hi[c] ? seg[i].hi[c] : hi[c];
            ext += seg[i].hi[c] - seg[i].lo[c];
        }
    double w = hi[0] - lo[0], h = hi[1] - lo[1], cell = ext / (2.0 * (double)nseg);
    double share = sqrt(w * h / (double)nseg);
    if (share > cell) cell = share;
    if (!(cell > 0.0) || !isfinite(cell)) cell = 1.0;
    g->x0 = lo[0];
    g->z0 = lo[1];
    uint32_t (*cs)[4] = g->cs = pm_arena_alloc(a, nseg * sizeof *cs);   /* x0 x1 z0 z1 per segment */
    if (!cs) return -1;
    double total = 0.0;
    for (;; cell *= 2.0) {
        double nx = floor(w / cell) + 1.0, nz = floor(h / cell) + 1.0;
        if (nx * nz > 4.0 * (double)nseg + 16.0) continue;
        g->nx = (uint32_t)nx;
        g->nz = (uint32_t)nz;
        g->inv = 1.0 / cell;
        total = 0.0;
        for (size_t i = 0; i < nseg; i++) {
            cs[i][0] = pm__cell(seg[i].lo[0], g->x0, g->inv, g->nx);
            cs[i][1] = pm__cell(seg[i].hi[0], g->x0, g->inv, g->nx);
            cs[i][2] = pm__cell(seg[i].lo[1], g->z0, g->inv, g->nz);
            cs[i][3] = pm__cell(seg[i].hi[1], g->z0, g->inv, g->nz);
            total += (double)(cs[i][1] - cs[i][0] + 1) * (double)(cs[i][3] - cs[i][2] + 1);
        }
        if (total <= 16.0 * (double)nseg || (g->nx == 1 && g->nz == 1)) break;
    }
    size_t ncell = (size_t)g->nx * g->nz;
    g->first = pm_arena_calloc(a, ncell + 1, sizeof *g->first);
    g->idx = pm_arena_alloc(a, ((size_t)total + 1) * sizeof *g->idx);
    uint32_t *at = pm_arena_alloc(a, (ncell + 1) * sizeof *at);
    if (!g->first || !g->idx || !at) return -1;
    for (size_t i = 0; i < nseg; i++)
        for (uint32_t z = cs[i][2]; z <= cs[i][3]; z++)
            for (uint32_t x = cs[i][0]; x <= cs[i][1]; x++) g->first[(size_t)z * g->nx + x + 1]++;
    for (size_t k = 0; k < ncell; k++) g->first[k + 1] += g->first[k];
    memcpy(at, g->first, ncell * sizeof *at);
    for (size_t i = 0; i < nseg; i++)
        for (uint32_t z = cs[i][2]; z <= cs[i][3]; z++)
            for (uint32_t x = cs[i][0]; x <= cs[i][1]; x++) g->idx[at[(size_t)z * g->nx + x]++] = (uint32_t)i;
    for (size_t k = 0; k < ncell; k++)
        if (pm__sort_cell(a, seg, g->idx + g->first[k], g->first[k + 1] - g->first[k])) return -1;
    return 0;
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
    PM_VEC(uint32_t) found = {0};
    pm__grid g;
    if (nseg && pm__grid_build(scratch, seg, nseg, &g)) return -1;
    for (size_t cell = 0; nseg && cell < (size_t)g.nx * g.nz; cell++) {
        const uint32_t *list = g.idx + g.first[cell];
        size_t m = g.first[cell + 1] - g.first[cell];
        for (size_t i = 0; i < m; i++) {
            const pm__seg *s = &seg[list[i]];
            for (size_t j = i + 1; j < m && seg[list[j]].lo[0] <= s->hi[0]; j++) {
                const pm__seg *t = &seg[list[j]];
                if (t->lo[1] > s->hi[1] || t->hi[1] < s->lo[1]) continue;
                /* Tested in the cell of the overlap's low corner only:
                 * (t->lo[0], max of the lo[1]) as t->lo[0] >= s->lo[0]
                 * here. pm__cell is monotone, so the cell of a max is the
                 * max of the cells, both listed in g.cs. */
                const uint32_t *cs = g.cs[list[i]], *ct = g.cs[list[j]];
                uint32_t cz = ct[2] > cs[2] ? ct[2] : cs[2];
                if ((size_t)cz * g.nx + ct[0] != cell) continue;
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

/* pm_network_crossings (a grid of cells, each pair tested in one cell)
 * against a plain reference that tests every pair of segments, on random
 * networks made to touch and overlap: lattice points (collinear and
 * touching segments), long diagonals across many cells, a far outlier
 * (one crowded cell), all points on one line (a flat grid). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "geom/predicates.h"
#include "network/network.h"
#include "scene/arena.h"
#include "scene/rng.h"

#define NN 120
#define NE 160

typedef struct rnet {
    double nodes[3 * NN];
    double pts[3 * 2 * NE];
    pm_network_edge edges[NE];
    pm_network_params p;
} rnet;

/* Point k of edge e: 0 its from node, 1..npoints interior, then its to node;
 * *id: node index, or nnodes + a running number for interior points. */
static const double *ref_point(const pm_network_params *p, uint32_t e, size_t k, uint64_t *id) {
    const pm_network_edge *E = &p->edges[e];
    if (k == 0) { *id = E->from; return p->nodes + 3 * E->from; }
    if (k > E->npoints) { *id = E->to; return p->nodes + 3 * E->to; }
    uint64_t base = p->nnodes;
    for (uint32_t f = 0; f < e; f++) base += p->edges[f].npoints;
    *id = base + k - 1;
    return E->points + 3 * (k - 1);
}

static int sgn(double v) { return (v > 0) - (v < 0); }

/* Closed plan segments ab and cd share a point (exact). */
static bool ref_meet(const double *a, const double *b, const double *c, const double *d) {
    double A[2] = {a[0], a[2]}, B[2] = {b[0], b[2]}, C[2] = {c[0], c[2]}, D[2] = {d[0], d[2]};
    int o1 = sgn(pm_orient2d(A, B, C)), o2 = sgn(pm_orient2d(A, B, D));
    int o3 = sgn(pm_orient2d(C, D, A)), o4 = sgn(pm_orient2d(C, D, B));
    if (o1 * o2 > 0 || o3 * o4 > 0) return false;
    if (o1 || o2 || o3 || o4) return true;
    /* Collinear: they meet when their extents overlap on both axes. */
    for (int k = 0; k < 2; k++) {
        double lo1 = fmin(A[k], B[k]), hi1 = fmax(A[k], B[k]), lo2 = fmin(C[k], D[k]), hi2 = fmax(C[k], D[k]);
        if (hi1 < lo2 || hi2 < lo1) return false;
    }
    return true;
}

static int pair_cmp(const void *x, const void *y) {
    const uint32_t *s = x, *t = y;
    return s[0] != t[0] ? (s[0] < t[0] ? -1 : 1) : (s[1] < t[1] ? -1 : (s[1] > t[1]));
}

/* Every pair of segments, all of them: sorted distinct edge pairs. */
static size_t ref_crossings(const pm_network_params *p, uint32_t (*out)[2]) {
    size_t n = 0;
    for (uint32_t e = 0; e < p->nedges; e++)
        for (uint32_t f = e; f < p->nedges; f++)
            for (size_t i = 0; i <= p->edges[e].npoints; i++)
                for (size_t j = f == e ? i + 1 : 0; j <= p->edges[f].npoints; j++) {
                    uint64_t ia, ib, ic, id;
                    const double *a = ref_point(p, e, i, &ia), *b = ref_point(p, e, i + 1, &ib);
                    const double *c = ref_point(p, f, j, &ic), *d = ref_point(p, f, j + 1, &id);
                    if (ia == ic || ia == id || ib == ic || ib == id) continue;
                    if (!ref_meet(a, b, c, d)) continue;
                    out[n][0] = e;
                    out[n][1] = f;
                    n++;
                }
    qsort(out, n, sizeof *out, pair_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || out[u - 1][0] != out[i][0] || out[u - 1][1] != out[i][1]) {
            out[u][0] = out[i][0];
            out[u][1] = out[i][1];
            u++;
        }
    return u;
}

static void random_rnet(rnet *r, pm_rng *g, int kind) {
    memset(r, 0, sizeof *r);
    pm_network_params_default(&r->p);
    size_t nn = 4 + pm_rng_below(g, NN - 4), ne = 1 + pm_rng_below(g, NE - 1), np = 0;
    double span = kind == 0 ? 12 : 400;
    for (size_t i = 0; i < nn; i++) {
        double x = kind == 0 ? (double)pm_rng_below(g, 13) : pm_rng_range(g, 0, span);
        double z = kind == 0 ? (double)pm_rng_below(g, 13) : pm_rng_range(g, 0, span);
        if (kind == 3) z = 5.0;                                  /* all on one line */
        if (kind == 2 && i == 0) x = 1e6, z = -3e5;              /* a far outlier */
        r->nodes[3 * i] = x, r->nodes[3 * i + 1] = pm_rng_range(g, -1, 1), r->nodes[3 * i + 2] = z;
    }
    for (size_t e = 0; e < ne; e++) {
        pm_network_edge *E = &r->edges[e];
        E->from = (uint32_t)pm_rng_below(g, nn);
        do E->to = (uint32_t)pm_rng_below(g, nn); while (E->to == E->from);
        E->width = 7;
        size_t k = pm_rng_below(g, 3);
        if (kind == 1 && e % 5 == 0) k = 0;                      /* long diagonals */
        E->points = r->pts + 3 * np;
        for (size_t i = 0; i < k; i++, np++) {
            double *q = r->pts + 3 * np;
            q[0] = kind == 0 ? (double)pm_rng_below(g, 13) : pm_rng_range(g, 0, span);
            q[1] = 0;
            q[2] = kind == 3 ? 5.0 : (kind == 0 ? (double)pm_rng_below(g, 13) : pm_rng_range(g, 0, span));
        }
        E->npoints = k;
    }
    r->p.nodes = r->nodes;
    r->p.nnodes = nn;
    r->p.edges = r->edges;
    r->p.nedges = ne;
}

Test(network_cross, grid_cells_find_what_every_pair_finds) {
    pm_rng g;
    pm_rng_seed(&g, 4040);
    static rnet r;
    static uint32_t want[NE * NE * 9][2], got[NE * NE][2];
    size_t crossing = 0, clear = 0;
    for (int it = 0; it < 300; it++) {
        int kind = it % 4;
        random_rnet(&r, &g, kind);
        /* Sparse too: few edges, most of them clear of each other. */
        if (it % 8 == 1) r.p.nedges = 1 + pm_rng_below(&g, 3);
        size_t n = ref_crossings(&r.p, want);
        pm_arena *a = pm_arena_create(1 << 16);
        int64_t m = pm_network_crossings(a, &r.p, got, NE * NE);
        cr_assert_eq(m, (int64_t)n, "net %d (kind %d): %lld pairs, the reference %zu", it, kind, (long long)m, n);
        for (size_t i = 0; i < n; i++)
            cr_assert(got[i][0] == want[i][0] && got[i][1] == want[i][1], "net %d pair %zu: %u-%u, want %u-%u",
                      it, i, got[i][0], got[i][1], want[i][0], want[i][1]);
        crossing += n > 0;
        clear += n == 0;
        pm_arena_destroy(a);
    }
    cr_assert_gt(crossing, 100);
    cr_assert_gt(clear, 10);
}

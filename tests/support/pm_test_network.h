#ifndef PM_TEST_NETWORK_H
#define PM_TEST_NETWORK_H
/* Building a network's parameters by hand in the core tests: nodes, edges
 * (one optional interior point each, from the net's own storage) and the
 * pm_network_params that point at them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "network/network.h"
#include "scene/arena.h"
#include "scene/meta.h"
#include "scene/result.h"

typedef struct net {
    double nodes[3 * 256];
    pm_network_edge edges[512];
    double pts[3 * 512];
    size_t nnodes, nedges, npts;
    pm_network_params p;
} net;

static inline void net_init(net *n) {
    memset(n, 0, sizeof *n);
    pm_network_params_default(&n->p);
}

static inline uint32_t node(net *n, double x, double y, double z) {
    double *q = n->nodes + 3 * n->nnodes;
    q[0] = x, q[1] = y, q[2] = z;
    return (uint32_t)n->nnodes++;
}

static inline pm_network_edge *edge(net *n, uint32_t a, uint32_t b, double w) {
    pm_network_edge *e = &n->edges[n->nedges++];
    memset(e, 0, sizeof *e);
    e->from = a, e->to = b, e->width = w;
    return e;
}

/* One interior point on edge e (heights interpolated like the api does). */
static inline void bend(net *n, pm_network_edge *e, double x, double z) {
    double *q = n->pts + 3 * n->npts++;
    const double *a = n->nodes + 3 * e->from, *b = n->nodes + 3 * e->to;
    double da = hypot(x - a[0], z - a[2]), db = hypot(b[0] - x, b[2] - z);
    q[0] = x;
    q[1] = a[1] + (b[1] - a[1]) * da / (da + db);
    q[2] = z;
    e->points = q;
    e->npoints = 1;
}

static inline void finish(net *n) {
    n->p.nodes = n->nodes;
    n->p.nnodes = n->nnodes;
    n->p.edges = n->edges;
    n->p.nedges = n->nedges;
}

/* Whether two of the net's edges cross (a network the generator refuses
 * before building anything). */
static inline bool net_crosses(const net *n) {
    pm_arena *a = pm_arena_create(1 << 16);
    uint32_t pairs[4][2];
    bool crossing = pm_network_crossings(a, &n->p, pairs, 4) != 0;
    pm_arena_destroy(a);
    return crossing;
}

/* An edge with np interior points [x, z] (xz; at height 0), from the
 * net's own storage. */
static inline pm_network_edge *net_edge_pts(net *n, uint32_t a, uint32_t b, double w, const double *xz, size_t np) {
    pm_network_edge *e = edge(n, a, b, w);
    double *q = n->pts + 3 * n->npts;
    for (size_t i = 0; i < np; i++) {
        q[3 * i] = xz[2 * i];
        q[3 * i + 1] = 0;
        q[3 * i + 2] = xz[2 * i + 1];
    }
    n->npts += np;
    e->points = np ? q : NULL;
    e->npoints = np;
    return e;
}

/* The network built (asserted), its metadata copied into a. */
static inline pm_scene *net_build_ok(net *n, pm_arena *a) {
    pm_scene *s = NULL;
    pm_network_diag d;
    int rc = pm_network_generate(a, &n->p, &s, &d);
    cr_assert_eq(rc, PM_OK, "rc %d: %s", rc, d.nproblems ? d.problems[0].message : "");
    s->meta = pm_meta_copy(a, s->meta);
    cr_assert_not_null(s->meta);
    return s;
}

/* n built in two arenas of different block sizes gives the same bytes
 * (the result follows the request, never memory). */
static inline void net_assert_same_in_two_arenas(net *n) {
    pm_arena *a = pm_arena_create(1 << 20), *b = pm_arena_create(1 << 16);
    pm_scene *s = net_build_ok(n, a), *t = net_build_ok(n, b);
    cr_assert_eq(s->nprims, t->nprims);
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *P = &s->prims[i], *Q = &t->prims[i];
        cr_assert_eq(P->vcount, Q->vcount);
        cr_assert_eq(P->icount, Q->icount);
        cr_assert(memcmp(P->positions, Q->positions, 3 * (size_t)P->vcount * sizeof(float)) == 0);
        cr_assert(memcmp(P->indices, Q->indices, (size_t)P->icount * sizeof(uint32_t)) == 0);
    }
    pm_arena_destroy(a);
    pm_arena_destroy(b);
}

#endif

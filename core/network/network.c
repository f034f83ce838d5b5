/* Road networks: topology (junctions, through nodes, chains of edges), the
 * junctions, the roads between their mouths, and the stitch into one
 * asphalt surface (network_stitch.c). See network/network.h. */
#include "network/network.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "network/network_internal.h"
#include "scene/result.h"
#include "road/road.h"

void pm_network_params_default(pm_network_params *p) {
    memset(p, 0, sizeof *p);
    p->corner_radius = 3.0;
    p->corner_segments = 4;
    p->uv_scale = 0.1;
    p->snap = 0.001;
    p->max_error = 0.05;
    p->max_segment = 5.0;
}

double pm_network_gap(const pm_network_params *p) {
    double g = 10.0 * p->snap;
    return g > 0.01 ? g : 0.01;
}

static double pm__plan(const double *a, const double *b) { return hypot(b[0] - a[0], b[2] - a[2]); }

/* Interior point k (0-based) of edge e as travelled from node `from_end`
 * (0: e->from first, 1: e->to first). */
static const double *pm__interior(const pm_network_edge *e, size_t k, int from_end) {
    return e->points + 3 * (from_end == 0 ? k : e->npoints - 1 - k);
}

static int pm__problem(pm__net *N, pm_network_problem **out) {
    if (pm_vec_reserve(N->a, &N->problems, N->problems.len + 1)) return PM_ERR_NOMEM;
    pm_network_problem *q = &N->problems.data[N->problems.len++];
    memset(q, 0, sizeof *q);
    q->node = -1;
    q->node2 = -1;
    *out = q;
    return PM_OK;
}

/* ---- topology ---- */

static const double *pm__arm_point(const pm__net *N, const pm__inc *I, size_t i);

/* The road's direction leaving node n along incidence I: towards the
 * first polyline point at least `look` metres away (or the far node). */
static void pm__leave_dir(const pm__net *N, uint32_t n, const pm__inc *I, double look, double out[2]) {
    const pm_network_params *p = N->p;
    const double *c = p->nodes + 3 * n, *q = c;
    size_t np = p->edges[I->edge].npoints;
    for (size_t i = 1; i <= np + 1; i++) {
        q = pm__arm_point(N, I, i);
        if (pm__plan(c, q) >= look) break;
    }
    double d = pm__plan(c, q);
    out[0] = (q[0] - c[0]) / d;
    out[1] = (q[2] - c[2]) / d;
}

/* Whether a road through degree-2 node n would turn there by more than
 * PM__SHARP_DEG: a spline through such a corner bends tighter than a
 * road's half width allows (its inner side collapses, its sidewalk lies
 * on it), so the node becomes a 2-arm junction, whose corner is a curb
 * line with a fillet inside and a bevel outside. */
#define PM__SHARP_DEG 30.0
static bool pm__sharp(const pm__net *N, uint32_t n) {
    const pm__node *V = &N->nodes[n];
    const pm__inc *I = &N->inc[V->first];
    const pm_network_edge *E = &N->p->edges[I->edge];
    double look = E->width + (E->has_sidewalk ? 2 * E->sidewalk.width : 0.0), a[2], b[2];
    pm__leave_dir(N, n, &I[0], look, a);
    pm__leave_dir(N, n, &I[1], look, b);
    /* The turn is pi less the angle between the two arms; the spline's
     * radius there grows with its neighbouring control points' distance. */
    double turn = 3.14159265358979323846 - acos(fmax(-1.0, fmin(1.0, a[0] * b[0] + a[1] * b[1])));
    if (turn <= PM__SHARP_DEG * 3.14159265358979323846 / 180.0) return false;
    const double *c = N->p->nodes + 3 * n;
    double near = fmin(pm__plan(c, pm__arm_point(N, &I[0], 1)), pm__plan(c, pm__arm_point(N, &I[1], 1)));
    return near < 6.0 * (look / 2) * turn;
}

/* join flag 4 (pm__join_rounds' last resort, pm__split_loop): the edge's
 * degree-2 ends are junctions, not through nodes. */
#define PM__JOIN_SPLIT 4

static int pm__topology(pm__net *N, const uint8_t *join) {
    const pm_network_params *p = N->p;
    N->nodes = pm_arena_calloc(N->a, p->nnodes ? p->nnodes : 1, sizeof *N->nodes);
    N->inc = pm_arena_calloc(N->a, 2 * p->nedges + 1, sizeof *N->inc);
    N->ninc = 2 * p->nedges;
    N->edge_road = pm_arena_calloc(N->a, p->nedges + 1, sizeof *N->edge_road);
    if (!N->nodes || !N->inc || !N->edge_road) return PM_ERR_NOMEM;
    for (size_t e = 0; e < p->nedges; e++) {
        N->nodes[p->edges[e].from].deg++;
        N->nodes[p->edges[e].to].deg++;
    }
    uint32_t at = 0;
    for (size_t n = 0; n < p->nnodes; n++) {
        N->nodes[n].first = at;
        at += N->nodes[n].deg;
        N->nodes[n].deg = 0;
    }
    /* Incidences in edge order: arm k of a junction is its k-th edge. */
    for (uint32_t e = 0; e < p->nedges; e++) {
        for (int end = 0; end < 2; end++) {
            uint32_t n = end ? p->edges[e].to : p->edges[e].from;
            pm__inc *I = &N->inc[N->nodes[n].first + N->nodes[n].deg++];
            I->edge = e;
            I->end = (uint8_t)end;
        }
    }
    for (size_t n = 0; n < p->nnodes; n++) {
        pm__node *V = &N->nodes[n];
        memcpy(V->c, p->nodes + 3 * n, sizeof V->c);
        V->merged_node = -1;
        if (V->deg == 0) V->kind = PM__UNUSED;
        else if (V->deg == 1) V->kind = PM__END;
        else if (V->deg >= 3) V->kind = PM__JUNCTION;
        else {
            const pm_network_edge *e0 = &p->edges[N->inc[V->first].edge];
            const pm_network_edge *e1 = &p->edges[N->inc[V->first + 1].edge];
            /* A road has one width and one sidewalk: where either changes,
             * a 2-arm junction makes the transition. */
            bool same_sw = e0->has_sidewalk == e1->has_sidewalk &&
                           (!e0->has_sidewalk || (e0->sidewalk.width == e1->sidewalk.width &&
                                                  e0->sidewalk.curb_height == e1->sidewalk.curb_height));
            bool split = join && (join[N->inc[V->first].edge] | join[N->inc[V->first + 1].edge]) & PM__JOIN_SPLIT;
            V->kind = e0->width == e1->width && same_sw && !split && !pm__sharp(N, (uint32_t)n) ? PM__THROUGH
                                                                                                : PM__JUNCTION;
        }
    }
    return PM_OK;
}

/* The other incidence of a through node. */
static const pm__inc *pm__other(const pm__net *N, uint32_t node, uint32_t edge) {
    const pm__inc *I = &N->inc[N->nodes[node].first];
    return I[0].edge == edge ? &I[1] : &I[0];
}

static uint32_t pm__far(const pm_network_params *p, uint32_t edge, int end) {
    return end == 0 ? p->edges[edge].to : p->edges[edge].from;
}

/* Collects the chain through edge e into a new road: walks back through
 * through-nodes to the chain's start, then forward to its end. */
static int pm__chain(pm__net *N, uint32_t e) {
    const pm_network_params *p = N->p;
    uint32_t edge = e, node = p->edges[e].from;
    int end = 0;                /* which end of `edge` `node` is */
    bool closed = false;
    while (N->nodes[node].kind == PM__THROUGH) {
        const pm__inc *o = pm__other(N, node, edge);
        if (o->edge == e) { closed = true; break; }
        edge = o->edge;
        node = pm__far(p, edge, o->end);
        end = o->end == 0 ? 1 : 0;
    }
    /* Now `node` is the start and `edge` leaves it from end 1 - end... set
     * the travel so that the road starts at node. */
    int start_end = closed ? 0 : end;
    if (closed) { edge = e; node = p->edges[e].from; }
    if (pm_vec_reserve(N->a, &N->roads, N->roads.len + 1)) return PM_ERR_NOMEM;
    pm__road *R = &N->roads.data[N->roads.len];
    memset(R, 0, sizeof *R);
    R->closed = closed;
    R->start = closed ? -1 : (int64_t)node;
    R->first_step = N->steps.len;
    uint32_t cur = edge;
    int cur_end = start_end;
    uint32_t at = node;
    for (;;) {
        pm__step st = {cur, (uint8_t)cur_end};
        if (pm_vec_push(N->a, &N->steps, st)) return PM_ERR_NOMEM;
        N->edge_road[cur] = (uint32_t)N->roads.len + 1;
        at = pm__far(p, cur, cur_end);
        if (N->nodes[at].kind != PM__THROUGH) break;
        const pm__inc *o = pm__other(N, at, cur);
        if (closed && o->edge == edge) break;
        cur = o->edge;
        cur_end = o->end;
    }
    R->nsteps = N->steps.len - R->first_step;
    R->end = closed ? -1 : (int64_t)at;
    N->roads.len++;
    return PM_OK;
}

/* The road's control polyline: nodes and interior points, the closing
 * node left out of a closed road. */
static int pm__polyline(pm__net *N, pm__road *R) {
    const pm_network_params *p = N->p;
    size_t n = 1;
    for (size_t s = 0; s < R->nsteps; s++) n += p->edges[N->steps.data[R->first_step + s].edge].npoints + 1;
    R->ctrl = pm_arena_alloc(N->a, 3 * n * sizeof(double));
    if (!R->ctrl) return PM_ERR_NOMEM;
    const pm__step *st = &N->steps.data[R->first_step];
    uint32_t node = st[0].end == 0 ? p->edges[st[0].edge].from : p->edges[st[0].edge].to;
    size_t k = 0;
    memcpy(R->ctrl, p->nodes + 3 * node, 3 * sizeof(double));
    k++;
    for (size_t s = 0; s < R->nsteps; s++) {
        const pm_network_edge *E = &p->edges[st[s].edge];
        for (size_t i = 0; i < E->npoints; i++, k++)
            memcpy(R->ctrl + 3 * k, pm__interior(E, i, st[s].end), 3 * sizeof(double));
        memcpy(R->ctrl + 3 * k, p->nodes + 3 * pm__far(p, st[s].edge, st[s].end), 3 * sizeof(double));
        k++;
    }
    R->nctrl = R->closed ? k - 1 : k;
    return PM_OK;
}

/* ---- junctions ---- */

static void pm__junction_problem(pm__net *N, uint32_t n, const pm_junction_diag *d) {
    pm_network_problem *q;
    if (pm__problem(N, &q)) return;
    q->error = PM_NETWORK_JUNCTION;
    q->junction = d->error;
    q->node = n;
    const pm__node *V = &N->nodes[n];
    for (size_t i = 0; i < d->narms && q->nedges < 4; i++)
        q->edges[q->nedges++] = N->inc[V->first + (uint32_t)d->arms[i]].edge;
    snprintf(q->message, sizeof q->message, "%s", d->message);
    if (d->narms == 0)
        for (uint32_t k = 0; k < V->deg && q->nedges < 4; k++) q->edges[q->nedges++] = N->inc[V->first + k].edge;
}

/* Point i of the polyline of arm I's road as it leaves its node: 0 the
 * node, then the edge's interior points in that order, then its far node,
 * and on through each through node along the next edge of the chain, to
 * the road's far end. A merged junction's arms leave their own nodes, so
 * a road into one ends at its node, not at the junction's centre, and
 * both arms of a road aim along one line. */
static const double *pm__arm_point(const pm__net *N, const pm__inc *I, size_t i) {
    const pm_network_params *p = N->p;
    uint32_t edge = I->edge;
    int end = I->end;
    const pm_network_edge *E = &p->edges[edge];
    if (i == 0) return p->nodes + 3 * (end == 0 ? E->from : E->to);
    for (size_t steps = 0;; steps++) {
        E = &p->edges[edge];
        if (i <= E->npoints) return pm__interior(E, i - 1, end);
        uint32_t far = end == 0 ? E->to : E->from;
        const pm__node *W = &N->nodes[far];
        if (i == E->npoints + 1 || W->kind != PM__THROUGH || steps > p->nedges) return p->nodes + 3 * far;
        i -= E->npoints + 1;
        const pm__inc *o = pm__other(N, far, edge);
        edge = o->edge;
        end = o->end;
    }
}

/* The far end of arm I's road (the first node along it that is not a
 * through node); *inner: the control points before it (interior points
 * and through nodes), which the arm may leave out. */
static uint32_t pm__road_far(const pm__net *N, const pm__inc *I, uint32_t *inner) {
    const pm_network_params *p = N->p;
    uint32_t edge = I->edge, n = 0;
    int end = I->end;
    for (size_t steps = 0;; steps++) {
        const pm_network_edge *E = &p->edges[edge];
        n += (uint32_t)E->npoints;
        uint32_t far = end == 0 ? E->to : E->from;
        if (N->nodes[far].kind != PM__THROUGH || steps > p->nedges) {
            *inner = n;
            return far;
        }
        n++;
        const pm__inc *o = pm__other(N, far, edge);
        edge = o->edge;
        end = o->end;
    }
}

/* The junction node standing for node n: n, or the node a merged one is part of. */
static uint32_t pm__root(const pm__net *N, uint32_t n) {
    return N->nodes[n].kind == PM__MERGED ? N->nodes[n].into : n;
}

/* A merged junction's nodes (every node merged into n, n among them, in
 * index order) and links (the edges between them) for its parameters;
 * each arm gets its node's index among them. */
static int pm__merged_params(pm__net *N, uint32_t n, pm_junction_arm *arms, pm_junction_params *jp) {
    const pm_network_params *p = N->p;
    const pm__node *V = &N->nodes[n];
    uint32_t *slot = pm_arena_alloc(N->a, p->nnodes * sizeof *slot);
    double *xz = pm_arena_alloc(N->a, 2 * p->nnodes * sizeof *xz);
    pm_junction_link *links = pm_arena_alloc(N->a, (p->nedges + 1) * sizeof *links);
    if (!slot || !xz || !links) return PM_ERR_NOMEM;
    uint32_t m = 0;
    for (uint32_t v = 0; v < p->nnodes; v++) {
        if (pm__root(N, v) != n) continue;
        slot[v] = m;
        xz[2 * m] = p->nodes[3 * v] - V->c[0];      /* the junction's local frame */
        xz[2 * m + 1] = p->nodes[3 * v + 2] - V->c[2];
        m++;
    }
    size_t nl = 0;
    for (uint32_t e = 0; e < p->nedges; e++) {
        const pm_network_edge *E = &p->edges[e];
        if (pm__root(N, E->from) == n && pm__root(N, E->to) == n)
            links[nl++] = (pm_junction_link){slot[E->from], slot[E->to], E->width};
    }
    for (uint32_t k = 0; k < V->deg; k++) {
        const pm__inc *I = &N->inc[V->first + k];
        arms[k].node = slot[I->end == 0 ? p->edges[I->edge].from : p->edges[I->edge].to];
    }
    jp->nodes = xz;
    jp->nnodes = m;
    jp->links = links;
    jp->nlinks = nl;
    return PM_OK;
}

/* An arm's direction and room as the junction is built from them: the
 * direction's components rounded to multiples of 2^-32 and normalised
 * again, the room rounded down to a multiple of 2^-24 m. A grid turned by
 * any angle is then as regular as one along the axes: its nodes'
 * differences round differently node by node (a last-bit change in a
 * direction or a length), and those bits would make each junction a new
 * key for the cache (network_jcache.c: 711 builds on a 40x40 grid turned
 * 30 degrees, 5 along the axes). The rounding moves a direction by under
 * 2^-32 rad (a micrometre at 4 km) and is applied to every arm, cached or
 * not, so the output still does not depend on which node came first. */
static void pm__arm_round(double dx, double dz, double room, double *dir, double *length) {
    double x = nearbyint(dx * 0x1p32) * 0x1p-32, z = nearbyint(dz * 0x1p32) * 0x1p-32;
    double l = sqrt(x * x + z * z);
    dir[0] = x / l;
    dir[1] = z / l;
    room = floor(room * 0x1p24) * 0x1p-24;
    *length = room > 1e-9 ? room : 1e-9;
}

/* Arm k along its road: towards the first polyline point it keeps (the
 * skip[k] interior points before it lie inside the junction or right
 * after its mouth and are left out of the road), with that point's plan
 * distance less the gap as its room (pm__arm_round). */
static void pm__arm_from_road(pm__net *N, uint32_t n, uint32_t k, pm_junction_arm *A) {
    const pm_network_params *p = N->p;
    pm__node *V = &N->nodes[n];
    const pm__inc *I = &N->inc[V->first + k];
    const pm_network_edge *E = &p->edges[I->edge];
    /* A merged junction's arm leaves its own node, on the line it was drawn on. */
    const double *c = pm__arm_point(N, I, 0), *q = pm__arm_point(N, I, V->skip[k] + 1);
    double seg = pm__plan(c, q), gap = pm_network_gap(p);
    /* The mouth must leave room for the road; a positive room keeps
     * the arm bounded (0 would mean unbounded). */
    pm__arm_round((q[0] - c[0]) / seg, (q[2] - c[2]) / seg, seg - gap, &V->dir[2 * k], &A->length);
    A->direction[0] = V->dir[2 * k];
    A->direction[1] = V->dir[2 * k + 1];
    if (V->cap[k] < A->length) A->length = V->cap[k];
    A->width = E->width;
    A->elevation = c[1];
    A->has_sidewalk = E->has_sidewalk;
    A->sidewalk = E->sidewalk;
}

/* Leaves arm k's next interior point out (inside the junction); false
 * when only the far node is left. */
static bool pm__skip_point(pm__net *N, uint32_t n, uint32_t k) {
    pm__node *V = &N->nodes[n];
    uint32_t inner;
    pm__road_far(N, &N->inc[V->first + k], &inner);
    if (V->skip[k] >= inner) return false;
    V->skip[k]++;
    return true;
}

/* The junction at node n. Its arms follow the roads, not their first
 * control segments: an interior point the junction needs room past (its
 * corner does not fit before it, or its fillet shrinks because of it), or
 * one that would come right after the mouth (within half the road's width,
 * where the road could not turn without folding), is left out of the road
 * and the arm aims at the next point, until the junction fits or only the
 * far node is left. Interior points near a node, in line or bending a few
 * degrees, so change nothing but the junction's exact direction. */
static int pm__junction(pm__net *N, uint32_t n) {
    const pm_network_params *p = N->p;
    pm__node *V = &N->nodes[n];
    double gap = pm_network_gap(p);
    pm_junction_arm *arms = pm_arena_calloc(N->a, V->deg, sizeof *arms);
    if (!V->dir) {
        /* The node's per-arm arrays in one block: doubles first, then the
         * 4-byte ones, then the flags (each part keeps its alignment). */
        size_t d = V->deg;
        char *b = pm_arena_alloc(N->a, d * (4 * sizeof(double) + 4 * sizeof(uint32_t) + sizeof(bool)));
        if (!b) return PM_ERR_NOMEM;
        V->dir = (double *)b;
        V->mouth_d = V->dir + 2 * d;
        V->cap = V->mouth_d + d;
        V->mouth_l = (uint32_t *)(V->cap + d);
        V->mouth_r = V->mouth_l + d;
        V->split = V->mouth_r + d;
        V->skip = V->split + d;
        V->bare = (bool *)(V->skip + d);
        memset(V->skip, 0, d * sizeof(uint32_t));
        memset(V->bare, 0, d * sizeof(bool));
        for (uint32_t k = 0; k < V->deg; k++) V->cap[k] = HUGE_VAL;
    }
    if (!arms) return PM_ERR_NOMEM;
    /* Built in the node's local frame (network_jcache.c): the centre at
     * the origin, heights relative to it. */
    pm_junction_params jp = {
        .arms = arms, .narms = V->deg, .has_center = true, .center = {0.0, 0.0},
        .corner_radius = p->corner_radius, .corner_segments = p->corner_segments,
        .uv_scale = p->uv_scale, .snap = p->snap, .open_mouths = true, .drop_tight_sidewalks = true,
        .bare_corners = V->bare, .no_normals = true,   /* the stitch computes them */
        .lean_meta = true,     /* network_meta.c reads only corners and warnings */
        .cut_tight_corners = V->cut,   /* the last resort (pm__cut_round) */
    };
    if (V->merged_node >= 0) {
        int rc = pm__merged_params(N, n, arms, &jp);
        if (rc) return rc;
    }
    pm_junction_diag d;
    for (;;) {
        for (uint32_t k = 0; k < V->deg; k++) {
            pm__arm_from_road(N, n, k, &arms[k]);
            arms[k].elevation -= V->c[1];
        }
        const pm__jmouth *mouths = NULL;
        int rc = pm__jcache_generate(N, &jp, V->c, &V->scene, &d, &mouths);
        if (rc < 0 && rc != PM_ERR_GEOMETRY) return rc;
        bool moved = false;
        if (rc == PM_ERR_GEOMETRY) {
            if (d.error == PM_JUNCTION_ARM_TOO_SHORT && d.short_arm >= 0)
                moved = pm__skip_point(N, n, (uint32_t)d.short_arm);
            if (!moved)   /* else every arm named */
                for (size_t i = 0; i < d.narms; i++) moved |= pm__skip_point(N, n, (uint32_t)d.arms[i]);
            if (moved) continue;
            pm__junction_problem(N, n, &d);
            V->scene = NULL;
            return PM_OK;
        }
        if (!mouths) return PM_ERR_GEOMETRY;
        for (uint32_t k = 0; k < V->deg; k++) {
            V->mouth_l[k] = mouths[k].l;
            V->mouth_r[k] = mouths[k].r;
            V->mouth_d[k] = mouths[k].d;
        }
        /* A fillet shrunk because its arm's room ends at the mouth, a corner
     * sidewalk left out for want of room. */
        for (size_t w = 0; w < d.nwarnings; w++)
            for (int j = 0; j < 2; j++) {
                uint32_t k = (uint32_t)d.warnings[w].arms[j];
                if (d.warnings[w].code == PM_JUNCTION_WARN_SIDEWALK_DROPPED ||
                    V->mouth_d[k] >= arms[k].length - 0.01)
                    moved |= pm__skip_point(N, n, k);
            }
        for (uint32_t k = 0; k < V->deg; k++) {
            const pm__inc *I = &N->inc[V->first + k];
            const pm_network_edge *E = &p->edges[I->edge];
            uint32_t inner;
            pm__road_far(N, I, &inner);
            if (V->skip[k] >= inner) continue;
            const double *q = pm__arm_point(N, I, V->skip[k] + 1);
            if (pm__plan(pm__arm_point(N, I, 0), q) < V->mouth_d[k] + gap + 0.5 * E->width)
                moved |= pm__skip_point(N, n, k);
        }
        if (!moved) break;
    }
    V->nwarnings = d.nwarnings;
    V->slab = d.slab_ends;
    /* Road sidewalks start beyond a corner left without its slab. */
    V->trim = pm_arena_calloc(N->a, 2 * V->deg, sizeof(double));
    if (!V->trim) return PM_ERR_NOMEM;
    for (size_t w = 0; w < d.nwarnings; w++)
        if (d.warnings[w].code == PM_JUNCTION_WARN_SIDEWALK_DROPPED) {
            V->trim[2 * d.warnings[w].arms[0]] = d.warnings[w].trim[0];
            V->trim[2 * d.warnings[w].arms[1] + 1] = d.warnings[w].trim[1];
        }
    return PM_OK;
}

/* The arm of junction W on edge `edge` entered from its other end. */
static uint32_t pm__far_arm(const pm__net *N, const pm__node *W, const pm__inc *I) {
    uint32_t j = 0;
    while (j < W->deg && !(N->inc[W->first + j].edge == I->edge && N->inc[W->first + j].end != I->end)) j++;
    return j;
}

/* One edge between two built junctions: V's arm k, W's arm j. */
typedef struct pm__jpair {
    pm__node *V, *W;
    uint32_t k, j;
    const pm_network_edge *E;
    uint32_t np;                  /* control points between the two nodes */
} pm__jpair;

/* Calls step on every edge between two built junctions (once each, a
 * merged node standing for its junction); returns whether any call
 * asked for junctions to be built again. */
static bool pm__each_pair(pm__net *N, bool (*step)(pm__net *, const pm__jpair *)) {
    const pm_network_params *p = N->p;
    bool again = false;
    for (uint32_t n = 0; n < p->nnodes; n++) {
        pm__node *V = &N->nodes[n];
        if (V->kind != PM__JUNCTION || !V->scene) continue;
        for (uint32_t k = 0; k < V->deg; k++) {
            const pm__inc *I = &N->inc[V->first + k];
            const pm_network_edge *E = &p->edges[I->edge];
            uint32_t far = I->end == 0 ? E->to : E->from;
            if (N->nodes[far].kind == PM__MERGED) far = N->nodes[far].into;
            pm__node *W = &N->nodes[far];
            if (W->kind != PM__JUNCTION || !W->scene || far < n) continue;
            pm__jpair P = {V, W, k, pm__far_arm(N, W, I), E, (uint32_t)E->npoints};
            if (P.j < W->deg) again |= step(N, &P);
        }
    }
    return again;
}

/* Two junctions whose mouths on the straight edge between them take more
 * than its length: the shortest road that fits joins them. Each mouth's
 * room becomes its share of the edge (in proportion to what it took), so
 * their fillets shrink (corner_radius_reduced) and a road of at least the
 * gap is left between. */
static bool pm__shorten_pair(pm__net *N, const pm__jpair *P) {
    pm__node *V = P->V, *W = P->W;
    uint32_t k = P->k, j = P->j;
    double gap = pm_network_gap(N->p);
    if (V->skip[k] != P->np || W->skip[j] != P->np) return false;
    /* Between the arms' own nodes (a merged junction's arm leaves its own). */
    double L = pm__plan(pm__arm_point(N, &N->inc[V->first + k], 0), pm__arm_point(N, &N->inc[W->first + j], 0));
    double dv = V->mouth_d[k], dw = W->mouth_d[j];
    /* Once per pair of arms: a merged junction's new arm shares the edge
     * afresh with a neighbour that had shared it before the merge. */
    if (dv + dw + gap <= L || (V->cap[k] != HUGE_VAL && W->cap[j] != HUGE_VAL) || L <= gap) return false;
    V->cap[k] = (L - gap) * dv / (dv + dw) - 0.5 * gap;
    W->cap[j] = (L - gap) * dw / (dv + dw) - 0.5 * gap;
    V->dirty = W->dirty = true;
    return true;
}

/* An edge between two junctions is one road from mouth to mouth, leaving
 * each along its arm: so either both arms aim at points it keeps (the
 * junctions left out fewer points than it has between them) or it keeps
 * none and both aim at each other's node. */
static bool pm__agree_pair(pm__net *N, const pm__jpair *P) {
    (void)N;
    pm__node *V = P->V, *W = P->W;
    uint32_t k = P->k, j = P->j, np = P->np;
    if (V->skip[k] + W->skip[j] < np || (V->skip[k] == np && W->skip[j] == np)) return false;
    if (V->skip[k] != np) { V->skip[k] = np; V->dirty = true; }
    if (W->skip[j] != np) { W->skip[j] = np; W->dirty = true; }
    return true;
}

/* ---- roads ---- */

/* Mouth distance of the junction at node n on the arm of (edge, end), or 0
 * when n is not a (successful) junction. Sets *arm. */
static double pm__mouth_at(const pm__net *N, int64_t n, uint32_t edge, int end, int64_t *arm) {
    *arm = -1;
    if (n < 0) return 0.0;
    const pm__node *V = &N->nodes[n];
    if (V->kind != PM__JUNCTION || !V->scene) return 0.0;
    for (uint32_t k = 0; k < V->deg; k++) {
        const pm__inc *I = &N->inc[V->first + k];
        if (I->edge == edge && I->end == end) {
            *arm = k;
            return V->mouth_d[k];
        }
    }
    return 0.0;
}

/* pm__each_pair for the roads through through nodes between two built
 * junctions: their arms may leave out the through nodes too, so the same
 * steps hold (np: the road's control points between the two nodes). */
static bool pm__each_chain(pm__net *N, bool (*step)(pm__net *, const pm__jpair *)) {
    bool again = false;
    for (size_t r = 0; r < N->roads.len; r++) {
        const pm__road *R = &N->roads.data[r];
        if (R->closed || R->nsteps < 2 || R->start < 0 || R->end < 0 || R->start == R->end) continue;
        const pm__step *st = &N->steps.data[R->first_step], *last = st + R->nsteps - 1;
        int64_t k, j;
        pm__mouth_at(N, R->start, st->edge, st->end, &k);
        pm__mouth_at(N, R->end, last->edge, last->end ? 0 : 1, &j);
        if (k < 0 || j < 0) continue;
        pm__jpair P = {&N->nodes[R->start], &N->nodes[R->end], (uint32_t)k, (uint32_t)j,
                       &N->p->edges[st->edge], (uint32_t)R->nctrl - 2};
        again |= step(N, &P);
    }
    return again;
}

static void pm__too_short(pm__net *N, uint32_t edge, int64_t node, double len, double need,
                          const char *what, const char *takes) {
    pm_network_problem *q;
    if (pm__problem(N, &q)) return;
    q->error = PM_NETWORK_EDGE_TOO_SHORT;
    q->node = node;
    q->edges[q->nedges++] = edge;
    q->length = len;
    q->needed = need;
    snprintf(q->message, sizeof q->message, "%s is %.3f m long in plan; %s and a road needs "
             "%.3f m: it must be at least %.3f m long (or use a smaller corner_radius or width)",
             what, len, takes, pm_network_gap(N->p), need);
}

/* Finds the mouths at the road's ends and checks that its end segments
 * hold them. Returns whether the road can be built. */
static bool pm__road_ends(pm__net *N, pm__road *R) {
    const pm_network_params *p = N->p;
    const pm__step *st = &N->steps.data[R->first_step];
    const pm__step *last = &st[R->nsteps - 1];
    R->d0 = pm__mouth_at(N, R->start, st->edge, st->end, &R->arm0);
    R->d1 = pm__mouth_at(N, R->end, last->edge, last->end ? 0 : 1, &R->arm1);
    bool j0 = R->start >= 0 && N->nodes[R->start].kind == PM__JUNCTION;
    bool j1 = R->end >= 0 && N->nodes[R->end].kind == PM__JUNCTION;
    if ((j0 && R->arm0 < 0) || (j1 && R->arm1 < 0)) return false;  /* its junction failed */
    if (R->closed) return true;
    /* The interior points the junctions took in are left out. */
    R->k0 = R->arm0 >= 0 ? N->nodes[R->start].skip[R->arm0] : 0;
    R->k1 = R->arm1 >= 0 ? N->nodes[R->end].skip[R->arm1] : 0;
    if (R->k0 + R->k1 > R->nctrl - 2) R->k1 = R->nctrl - 2 - R->k0;
    /* A mouth at the very end of its arm's room leaves the gap up to
     * rounding: a micrometre less still makes a road. */
    double gap = pm_network_gap(p) - 1e-6;
    size_t m = R->nctrl - 1 - R->k0 - R->k1;
    const double *ctrl0 = R->ctrl + 3 * R->k0, *last_pt = R->ctrl + 3 * (R->nctrl - 1);
    double s0 = pm__plan(R->ctrl, m == 1 ? last_pt : ctrl0 + 3);
    double s1 = pm__plan(m == 1 ? R->ctrl : last_pt - 3 * (R->k1 + 1), last_pt);
    char what[96], takes[96];
    if (m == 1) {
        if ((R->arm0 < 0 && R->arm1 < 0) || R->d0 + R->d1 + gap <= s0) return true;
        snprintf(what, sizeof what, "edge %u", st->edge);
        if (R->arm0 >= 0 && R->arm1 >= 0)
            snprintf(takes, sizeof takes, "the junction mouths at its ends take %.3f + %.3f m",
                     R->d0, R->d1);
        else
            snprintf(takes, sizeof takes, "the junction mouth at node %lld takes %.3f m",
                     (long long)(R->arm0 >= 0 ? R->start : R->end), R->d0 + R->d1);
        pm__too_short(N, st->edge, -1, s0, R->d0 + R->d1 + gap, what, takes);
        return false;
    }
    bool ok = true;
    if (R->arm0 >= 0 && R->d0 + gap > s0) {
        snprintf(what, sizeof what, "the first segment of edge %u from node %lld", st->edge,
                 (long long)R->start);
        snprintf(takes, sizeof takes, "the junction mouth there takes %.3f m", R->d0);
        pm__too_short(N, st->edge, R->start, s0, R->d0 + gap, what, takes);
        ok = false;
    }
    if (R->arm1 >= 0 && R->d1 + gap > s1) {
        snprintf(what, sizeof what, "the last segment of edge %u into node %lld", last->edge,
                 (long long)R->end);
        snprintf(takes, sizeof takes, "the junction mouth there takes %.3f m", R->d1);
        pm__too_short(N, last->edge, R->end, s1, R->d1 + gap, what, takes);
        ok = false;
    }
    return ok;
}

/* Moves an end control point from the node to the mouth centre, on the
 * arm's line, so the road leaves along the arm. */
static void pm__to_mouth(const pm__net *N, int64_t node, int64_t arm, double d, double *pt) {
    const pm__node *V = &N->nodes[node];
    const double *c = pm__arm_point(N, &N->inc[V->first + arm], 0);   /* the arm's own node */
    pt[0] = c[0] + V->dir[2 * arm] * d;
    pt[1] = c[1];
    pt[2] = c[2] + V->dir[2 * arm + 1] * d;
}

/* The road's asphalt as the stitch reads it, copied out of the scratch
 * arena each array its size: positions, UVs (its columns and travel
 * order) and triangles. Not its normals nor its metadata: the stitch
 * computes the surface's normals anew, and the length and samples are
 * read before (the copies were a fifth of the stitch's memory). The
 * primitive and its arrays in one allocation, no scene around it: 0.26 MB
 * less on the 40 x 40 town, which the stitch's peak held. */
static pm_prim *pm__road_copy(pm_arena *a, const pm_prim *P) {
    size_t np = 3 * (size_t)P->vcount * sizeof(float), nu = 2 * (size_t)P->vcount * sizeof(float);
    size_t ni = (size_t)P->icount * sizeof(uint32_t);
    pm_prim *d = pm_arena_alloc(a, sizeof *d + np + nu + ni);
    if (!d) return NULL;
    unsigned char *at = (unsigned char *)(d + 1);
    *d = (pm_prim){.name = "asphalt", .material = "asphalt", .flags = P->flags, .vcount = P->vcount,
                   .vcap = P->vcount, .icount = P->icount, .icap = P->icount, .positions = (float *)(void *)at,
                   .uvs = (float *)(void *)(at + np), .indices = (uint32_t *)(void *)(at + np + nu)};
    memcpy(d->positions, P->positions, np);
    memcpy(d->uvs, P->uvs, nu);
    memcpy(d->indices, P->indices, ni);
    return d;
}

/* What every road of the network shares (its points, width and budget
 * are its own). */
static void pm__road_template(const pm_network_params *p, pm_road_params *rp) {
    pm_road_params_default(rp);
    rp->curve = PM_CURVE_CATMULL_ROM;
    rp->alpha = 0.5;
    rp->max_error = p->max_error;
    rp->max_segment = p->max_segment;
    rp->shoulder = 0.0;
    rp->cross_segments = 1;
    rp->uv_scale = p->uv_scale;
    rp->cancel = p->cancel;
    rp->overlaps_checked_by_caller = true;   /* network_overlap.c, with the junctions */
}

/* Builds road R into copies. again: as it was built before, from the end
 * points kept then in N->ends (a junction built again since, with a
 * corner left bare, may have moved on, but the road the stitch joins it
 * to must not), under no budget (it fitted in its own, which only refuses
 * a road); else with its mouths' end points, kept when N->ends is set. */
static int pm__build_road(pm__net *N, pm_arena *copies, pm__road *R, const pm_road_params *shared,
                          uint64_t budget, bool again) {
    const pm_network_params *p = N->p;
    size_t np = R->nctrl - R->k0 - R->k1;
    /* Built in the scratch arena, kept as a compact copy: a road's working
     * memory (samples, frames, its mesh's growth) is used again by the next
     * instead of new pages for each. */
    pm_arena_reset(N->tmp);
    double *pts = pm_arena_alloc(N->tmp, 3 * np * sizeof(double));
    if (!pts) return PM_ERR_NOMEM;
    memcpy(pts, R->ctrl, 3 * sizeof(double));
    memcpy(pts + 3, R->ctrl + 3 * (1 + R->k0), 3 * (np - 2) * sizeof(double));
    memcpy(pts + 3 * (np - 1), R->ctrl + 3 * (R->nctrl - 1), 3 * sizeof(double));
    double *ends = N->ends ? N->ends + 6 * (size_t)(R - N->roads.data) : NULL;
    if (again) {
        memcpy(pts, ends, 3 * sizeof(double));
        memcpy(pts + 3 * (np - 1), ends + 3, 3 * sizeof(double));
        budget = 0;
    } else {
        if (R->arm0 >= 0) pm__to_mouth(N, R->start, R->arm0, R->d0, pts);
        if (R->arm1 >= 0) pm__to_mouth(N, R->end, R->arm1, R->d1, pts + 3 * (np - 1));
        if (ends) {
            memcpy(ends, pts, 3 * sizeof(double));
            memcpy(ends + 3, pts + 3 * (np - 1), 3 * sizeof(double));
        }
    }
    pm_road_params rp = *shared;
    rp.points = pts;
    rp.npoints = np;
    rp.closed = R->closed;
    rp.width = p->edges[N->steps.data[R->first_step].edge].width;
    rp.max_vertices = budget;
    pm_scene *built = NULL;
    pm_road_base base;
    int rc = pm_road_generate_base(N->tmp, &rp, &built, &base, NULL);   /* no failure read */
    if (rc < 0) return rc;
    R->length = isfinite(base.length) ? base.length : 0.0;   /* as the metadata's number */
    R->samples = base.samples;
    R->asphalt = pm__road_copy(copies, &built->prims[0]);
    return R->asphalt ? PM_OK : PM_ERR_NOMEM;
}

/* The roads' copies built again, as they were, into a new N->copies (for
 * a stitch after the last one gave its copies back). */
static int pm__rebuild_roads(pm__net *N) {
    assert(N->ends);
    pm_road_params shared;
    pm__road_template(N->p, &shared);
    N->copies = pm_arena_create_child_max(N->a, PM__SMALL_BLOCK);
    N->tmp = N->copies ? pm_arena_create_scratch(N->a) : NULL;
    int rc = N->tmp ? PM_OK : PM_ERR_NOMEM;
    for (size_t r = 0; rc == PM_OK && r < N->roads.len; r++)
        rc = pm__build_road(N, N->copies, &N->roads.data[r], &shared, 0, true);
    pm_arena_destroy(N->tmp);
    N->tmp = NULL;
    return rc;
}

/* Drops the problems recorded for node n. */
static void pm__forget(pm__net *N, uint32_t n) {
    size_t k = 0;
    for (size_t i = 0; i < N->problems.len; i++)
        if (N->problems.data[i].node != (int64_t)n) N->problems.data[k++] = N->problems.data[i];
    N->problems.len = k;
}

/* How many nodes the junction at root node r stands for. */
static uint32_t pm__cluster_size(const pm__net *N, uint32_t r) {
    uint32_t k = 0;
    for (size_t n = 0; n < N->p->nnodes; n++) k += pm__root(N, (uint32_t)n) == r;
    return k;
}

/* Drops edge e's road (an edge between two junctions is a road of its own). */
static void pm__drop_road(pm__net *N, uint32_t e) {
    size_t gone = N->edge_road[e] - 1;
    for (size_t r = gone + 1; r < N->roads.len; r++) N->roads.data[r - 1] = N->roads.data[r];
    N->roads.len--;
    for (uint32_t i = 0; i < N->p->nedges; i++)
        if (N->edge_road[i] > gone + 1) N->edge_road[i]--;
    N->edge_road[e] = 0;
}

/* Junction b (with the nodes merged into it) merged into junction a: one
 * junction of all their nodes (its centre the mean of their positions,
 * heights too) with every arm of both but the edges between them (in
 * edge order), each arm still leaving its own node; those edges are its
 * links and have no road, and the roads that ended at b end at a. */
static int pm__merge_pair(pm__net *N, uint32_t a, uint32_t b, uint32_t e) {
    const pm_network_params *p = N->p;
    pm__node *A = &N->nodes[a], *B = &N->nodes[b];
    pm__inc *inc = pm_arena_alloc(N->a, (N->ninc + A->deg + B->deg) * sizeof *inc);
    if (!inc) return PM_ERR_NOMEM;
    memcpy(inc, N->inc, N->ninc * sizeof *inc);
    pm__inc *mine = inc + N->ninc;
    uint32_t at = 0;
    const pm__node *both[2] = {A, B};
    for (int w = 0; w < 2; w++)
        for (uint32_t k = 0; k < both[w]->deg; k++) {
            const pm__inc *I = &N->inc[both[w]->first + k];
            uint32_t far = pm__root(N, pm__far(p, I->edge, I->end));
            if (far == a || far == b) {
                if (N->edge_road[I->edge]) pm__drop_road(N, I->edge);
            } else {
                mine[at++] = *I;
            }
        }
    for (uint32_t i = 1; i < at; i++)     /* edge order */
        for (uint32_t j = i; j > 0 && mine[j - 1].edge > mine[j].edge; j--) {
            pm__inc t = mine[j]; mine[j] = mine[j - 1]; mine[j - 1] = t;
        }
    for (size_t n = 0; n < p->nnodes; n++)
        if (n != b && N->nodes[n].kind == PM__MERGED && N->nodes[n].into == b) N->nodes[n].into = a;
    B->kind = PM__MERGED;
    B->into = a;
    B->scene = NULL;
    double c[3] = {0, 0, 0}, members = 0;
    for (size_t n = 0; n < p->nnodes; n++)
        if (pm__root(N, (uint32_t)n) == a) {
            for (int k = 0; k < 3; k++) c[k] += p->nodes[3 * n + k];
            members++;
        }
    for (int k = 0; k < 3; k++) A->c[k] = c[k] / members;
    A->first = (uint32_t)N->ninc;
    A->deg = at;
    N->inc = inc;
    N->ninc += at;
    A->dir = NULL;
    A->scene = NULL;
    A->dirty = true;
    if (A->merged_node < 0) {
        A->merged_edge = e;
        A->merged_node = b;
    }
    pm__forget(N, a);
    pm__forget(N, b);
    for (size_t r = 0; r < N->roads.len; r++) {
        pm__road *R = &N->roads.data[r];
        if (R->start == b) R->start = a;
        if (R->end == b) R->end = a;
    }
    return PM_OK;
}

/* Whether a problem of junction n names edge e. */
static bool pm__names(const pm__net *N, uint32_t n, uint32_t e) {
    for (size_t i = 0; i < N->problems.len; i++) {
        const pm_network_problem *q = &N->problems.data[i];
        for (size_t k = 0; q->node == (int64_t)n && k < q->nedges; k++)
            if (q->edges[k] == e) return true;
    }
    return false;
}

/* Arms of junction r that would be left if junction s merged into it. */
static uint32_t pm__arms_left(const pm__net *N, uint32_t r, uint32_t s) {
    uint32_t k = 0;
    const uint32_t both[2] = {r, s};
    for (int w = 0; w < 2; w++) {
        const pm__node *V = &N->nodes[both[w]];
        for (uint32_t i = 0; i < V->deg; i++) {
            const pm__inc *I = &N->inc[V->first + i];
            uint32_t far = pm__root(N, pm__far(N->p, I->edge, I->end));
            k += far != r && far != s;
        }
    }
    return k;
}

/* Two junctions joined by a straight edge whose shortened road still left
 * one of them without a mesh (its corners do not fit in its share of the
 * edge), or a merged junction that still has none because of an edge to
 * a third one (its two nodes send roads to the same node: their arms
 * from its centre coincide), become one junction, of at most
 * PM__MERGE_MAX nodes. Returns whether any pair was merged (*rc the
 * error, if any). */
#define PM__MERGE_MAX 5
/* An edge's chord in plan, between its two nodes. */
static double pm__edge_plan(const pm_network_params *p, uint32_t e) {
    const double *a = p->nodes + 3 * (size_t)p->edges[e].from, *b = p->nodes + 3 * (size_t)p->edges[e].to;
    return hypot(b[0] - a[0], b[2] - a[2]);
}

/* Merges the junctions at edge e's two ends (roots, both junctions, not
 * yet one) over e when together they are at most max nodes and keep two
 * arms or more; the lower-numbered root is kept. 1 merged, 0 not, or the
 * error. */
static int pm__merge_over(pm__net *N, uint32_t e, uint32_t max, uint32_t min_arms) {
    const pm_network_edge *E = &N->p->edges[e];
    uint32_t a = pm__root(N, E->from), b = pm__root(N, E->to);
    if (a == b || N->nodes[a].kind != PM__JUNCTION || N->nodes[b].kind != PM__JUNCTION) return 0;
    if (pm__cluster_size(N, a) + pm__cluster_size(N, b) > max || pm__arms_left(N, a, b) < min_arms) return 0;
    int rc = a < b ? pm__merge_pair(N, a, b, e) : pm__merge_pair(N, b, a, e);
    return rc ? rc : 1;
}

/* Whether edge e joins two junctions (roots a, b) that may merge over it:
 * not yet one, not both built, one of them refused naming e. */
static bool pm__merge_candidate(const pm__net *N, uint32_t e, uint32_t *a, uint32_t *b) {
    const pm_network_edge *E = &N->p->edges[e];
    if (!N->edge_road[e]) return false;
    *a = pm__root(N, E->from), *b = pm__root(N, E->to);
    const pm__node *A = &N->nodes[*a], *B = &N->nodes[*b];
    if (*a == *b || A->kind != PM__JUNCTION || B->kind != PM__JUNCTION || (A->scene && B->scene)) return false;
    return pm__names(N, *a, e) || pm__names(N, *b, e);     /* else failed for another reason */
}

static bool pm__merge(pm__net *N, int *rc) {
    const pm_network_params *p = N->p;
    /* The candidates, shortest edge first (ties: edge order), so which
     * pairs merge first, when one node has several, follows the layout,
     * not the order its edges are listed in. */
    uint32_t *cand = NULL, nc = 0, a, b;
    for (uint32_t e = 0; e < p->nedges; e++) {
        if (!pm__merge_candidate(N, e, &a, &b)) continue;
        if (!cand && !(cand = pm_arena_alloc(N->a, p->nedges * sizeof *cand))) {
            *rc = PM_ERR_NOMEM;
            return false;
        }
        cand[nc++] = e;
    }
    for (uint32_t i = 1; i < nc; i++)
        for (uint32_t j = i; j > 0; j--) {
            double lj = pm__edge_plan(p, cand[j]), lp = pm__edge_plan(p, cand[j - 1]);
            if (lp < lj || (lp == lj && cand[j - 1] < cand[j])) break;
            uint32_t t = cand[j]; cand[j] = cand[j - 1]; cand[j - 1] = t;
        }
    bool any = false;
    for (uint32_t i = 0; i < nc && *rc == PM_OK; i++) {
        /* Earlier merges of this pass change roots and forget problems. */
        if (!pm__merge_candidate(N, cand[i], &a, &b)) continue;
        int m = pm__merge_over(N, cand[i], PM__MERGE_MAX, 2);
        if (m < 0) *rc = m;
        any |= m > 0;
    }
    return any;
}

/* Builds again every junction marked dirty. A junction merged into
 * another since it was marked is built only as part of that one. */
static int pm__rebuild_dirty(pm__net *N) {
    int rc = PM_OK;
    for (uint32_t n = 0; rc == PM_OK && n < N->p->nnodes; n++) {
        if (!N->nodes[n].dirty || N->nodes[n].kind != PM__JUNCTION) continue;
        N->nodes[n].dirty = false;
        rc = pm__junction(N, n);
    }
    return rc;
}

/* Marks every junction still refused because a corner lies beyond an
 * arm's room (and not yet built so) to be built again with
 * cut_tight_corners, forgetting its problem; returns whether any was. */
static bool pm__cut_round(pm__net *N) {
    bool any = false;
    for (size_t i = 0; i < N->problems.len; i++) {
        const pm_network_problem *q = &N->problems.data[i];
        if (q->error != PM_NETWORK_JUNCTION || q->junction != PM_JUNCTION_ARM_TOO_SHORT || q->node < 0) continue;
        pm__node *V = &N->nodes[q->node];
        if (V->kind != PM__JUNCTION || V->cut) continue;
        V->cut = V->dirty = any = true;
    }
    for (uint32_t n = 0; any && n < N->p->nnodes; n++)
        if (N->nodes[n].cut && N->nodes[n].dirty) pm__forget(N, n);
    return any;
}

static bool pm__cancelled(const pm_network_params *p) { return p->cancel && *p->cancel; }

/* Joined junctions: at most this many nodes in one. */
#define PM__JOIN_MAX 8

/* The edges flagged in join make their two nodes' junctions one from the
 * start (in edge order; shortest: shortest edge first, ties in edge
 * order, so that which joins the limits leave out follows the layout, not
 * the order its edges are listed in), as pm__merge does for close ones:
 * where both are junctions, not yet one, together of at most
 * PM__JOIN_MAX nodes, and leaving two arms or more. */
typedef struct pm__elen { double len; uint32_t e; } pm__elen;

static int pm__elen_cmp(const void *x, const void *y) {
    const pm__elen *a = x, *b = y;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return a->e < b->e ? -1 : a->e > b->e;
}

static int pm__join(pm__net *N, const uint8_t *join, bool shortest) {
    const pm_network_params *p = N->p;
    pm__elen *order = NULL;
    uint32_t n = 0;
    if (shortest) {
        if (!(order = pm_arena_alloc(N->a, (p->nedges + 1) * sizeof *order))) return PM_ERR_NOMEM;
        for (uint32_t e = 0; e < p->nedges; e++)
            if (join[e] & 1) order[n++] = (pm__elen){pm__edge_plan(p, e), e};
        qsort(order, n, sizeof *order, pm__elen_cmp);
    }
    for (uint32_t i = 0; i < (shortest ? n : p->nedges); i++) {
        uint32_t e = shortest ? order[i].e : i;
        if (!(join[e] & 1) || !N->edge_road[e]) continue;   /* 1: joined, 3: kept whole; 2: not yet */
        uint32_t a = pm__root(N, p->edges[e].from), b = pm__root(N, p->edges[e].to);
        int rc = pm__merge_over(N, e, PM__JOIN_MAX, shortest ? 1 : 2);
        if (rc < 0) return rc;
        if (rc) N->nodes[a].joined = N->nodes[b].joined = true;
    }
    return PM_OK;
}

/* Flags (in join) every edge with a road of its own between junctions
 * x and y (roots); returns how many it flagged anew. */
static size_t pm__join_all(const pm__net *N, uint32_t x, uint32_t y, uint8_t *join) {
    const pm_network_params *p = N->p;
    size_t k = 0;
    if (x == y) return 0;
    for (uint32_t e = 0; e < p->nedges; e++) {
        const pm_network_edge *E = &p->edges[e];
        uint32_t a = pm__root(N, E->from), b = pm__root(N, E->to);
        if (!N->edge_road[e] || !((a == x && b == y) || (a == y && b == x)) || (join[e] & 1)) continue;
        join[e] = 1;
        k++;
    }
    return k;
}

/* A road from junction n back into it through through nodes (both ends
 * merged into n, as the road round a block's far corner when the block's
 * diagonal made one junction of its ends): its arms leave the through
 * nodes out and aim at each other's node, along one line both ways.
 * Flags its edges to be split at those nodes (PM__JOIN_SPLIT: 2-arm
 * junctions, whose corners the junction generator builds), not joined:
 * joined, the whole block would be paved. Returns how many edges it
 * flagged anew. */
static size_t pm__split_loop(const pm__net *N, uint32_t n, uint32_t e, uint8_t *join) {
    if (!N->edge_road[e]) return 0;
    const pm__road *R = &N->roads.data[N->edge_road[e] - 1];
    if (R->closed || R->nsteps < 2 || R->start < 0 || R->end < 0 || pm__root(N, (uint32_t)R->start) != n ||
        pm__root(N, (uint32_t)R->end) != n)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < R->nsteps; i++) {
        uint32_t s = N->steps.data[R->first_step + i].edge;
        if (join[s] & PM__JOIN_SPLIT) continue;
        join[s] = (uint8_t)(join[s] | PM__JOIN_SPLIT);
        k++;
    }
    return k;
}

/* For each overlap naming a junction: the junctions it overlaps (another
 * junction, or the junctions at a road's ends) joined with it where an
 * edge runs between them (flag 1 in join). The edges inside the merged
 * junctions among them get flag 2 unless flagged already: joined too, they
 * keep those junctions' nodes together (the next build joins first, and
 * close junctions that merged as the build went on can merge differently
 * round the joined ones). With junctions, also for each junction refused
 * for its own shape (a corner beyond an arm's room with no point left to
 * leave out, arms of a merged junction running into each other across a
 * link, links enclosing arms, a contour crossing itself): every edge
 * with a road between it and the junctions at the far ends of the arms
 * its problem names, so that the next build paves them as one, as
 * netconvert joins a cluster (every such edge, not the first listed: the
 * same nodes join whatever the edges' order). Returns how many edges it
 * flagged 1. */
static size_t pm__propose_joins(const pm__net *N, uint8_t *join, bool junctions) {
    const pm_network_params *p = N->p;
    size_t k = 0;
    uint8_t *involved = pm_arena_calloc(N->a, p->nnodes + 1, 1);
    if (!involved) return 0;
    for (size_t i = 0; i < N->problems.len; i++) {
        const pm_network_problem *q = &N->problems.data[i];
        if (junctions && q->error == PM_NETWORK_JUNCTION && q->node >= 0 &&
            N->nodes[q->node].kind == PM__JUNCTION) {
            uint32_t n = (uint32_t)q->node;
            size_t k0 = k;
            const pm__node *V = &N->nodes[n];
            for (uint32_t j = 0; j < V->deg; j++) k += pm__split_loop(N, n, N->inc[V->first + j].edge, join);
            for (size_t j = 0; j < q->nedges; j++) {
                const pm_network_edge *E = &p->edges[q->edges[j]];
                uint32_t a = pm__root(N, E->from), b = pm__root(N, E->to);
                uint32_t o = a == n ? b : a;
                if (o == n || N->nodes[o].kind != PM__JUNCTION) continue;
                size_t f = pm__join_all(N, n, o, join);
                if (f) {
                    k += f;
                    involved[o] = 1;
                }
            }
            if (k > k0) involved[n] = 1;
            continue;
        }
        if (q->error != PM_NETWORK_OVERLAP || q->node < 0) continue;
        uint32_t n = (uint32_t)q->node;
        if (N->nodes[n].kind != PM__JUNCTION) continue;
        size_t k0 = k;
        size_t f;
        if (q->node2 >= 0 && N->nodes[q->node2].kind == PM__JUNCTION &&
            (f = pm__join_all(N, n, (uint32_t)q->node2, join))) {
            k += f;
            involved[q->node2] = 1;
        }
        for (size_t j = 0; j < q->nedges; j++) {
            uint32_t r = N->edge_road[q->edges[j]];
            if (!r) continue;
            const pm__road *R = &N->roads.data[r - 1];
            int64_t ends[2] = {R->start, R->end};
            for (int w = 0; w < 2; w++) {
                if (ends[w] < 0 || N->nodes[ends[w]].kind != PM__JUNCTION) continue;
                /* A road over its own junction: its two ends joined. */
                uint32_t o = (uint32_t)(ends[w] == n && R->nsteps == 1 && ends[1 - w] >= 0 ? ends[1 - w] : ends[w]);
                if ((f = pm__join_all(N, n, o, join))) {
                    k += f;
                    involved[o] = 1;
                }
            }
        }
        if (k > k0) involved[n] = 1;
    }
    for (uint32_t e = 0; k && e < p->nedges; e++) {
        uint32_t a = pm__root(N, p->edges[e].from);
        if (!N->edge_road[e] && a == pm__root(N, p->edges[e].to) && involved[a] && !join[e]) join[e] = 2;
    }
    return k;
}

#ifndef PM__NETWORK_REBUILD
#define PM__NETWORK_REBUILD false   /* tests/core/test_network_rounds.c: true to build the roads again before every stitch */
#endif

/* Rounds of cutting back sidewalks that lie on other pieces; each cuts
 * every one found, so a few suffice (a cut's end caps can bring the next
 * band triangle onto the other piece). */
#define PM__CUT_ROUNDS 8

/* One build of the network. join (NULL: none): per edge, whether its two
 * nodes' junctions are one from the start (pm__join). With rc
 * PM_ERR_GEOMETRY and propose not NULL, *propose gets the edges (nedges
 * flags, allocated then) whose nodes' joining might pave an overlap over
 * (pm__propose_joins; with junctions, a junction with no mesh too), or
 * NULL when there are none. */
static int pm__generate(pm_arena *a, const pm_network_params *p, const uint8_t *join, uint8_t **propose,
                        bool junctions, pm_scene **out, pm_network_diag *diag) {
    assert(p->nnodes >= 1 && p->corner_segments >= 2 && p->snap > 0 && p->uv_scale > 0);
    memset(diag, 0, sizeof *diag);
    if (propose) *propose = NULL;
    pm__net N = {.a = a, .p = p};
    for (uint32_t e = 0; e < p->nedges; e++) N.sidewalks |= p->edges[e].has_sidewalk;
    int rc = pm__topology(&N, join);
    for (uint32_t e = 0; rc == PM_OK && e < p->nedges; e++)
        if (!N.edge_road[e]) rc = pm__chain(&N, e);
    for (size_t r = 0; rc == PM_OK && r < N.roads.len; r++) rc = pm__polyline(&N, &N.roads.data[r]);
    if (rc == PM_OK && join) rc = pm__join(&N, join, junctions);
    for (uint32_t n = 0; rc == PM_OK && n < p->nnodes; n++) {
        if (pm__cancelled(p)) rc = PM_ERR_CANCELLED;
        else if (N.nodes[n].kind == PM__JUNCTION) rc = pm__junction(&N, n);
    }
    /* Junctions built again until their arms agree, close pairs get a
     * shortened road between them, and pairs that still fail merge; then,
     * as a last resort, junctions still without a mesh because a corner
     * lies beyond one arm's room are built with their corners cut
     * (pm__cut_round), and the rounds go on. */
    bool again = true;
    while (rc == PM_OK && (again || (again = pm__cut_round(&N)))) {
        rc = pm__rebuild_dirty(&N);
        again = rc == PM_OK && (pm__each_pair(&N, pm__agree_pair) || pm__each_chain(&N, pm__agree_pair) ||
                                pm__each_pair(&N, pm__shorten_pair) || pm__each_chain(&N, pm__shorten_pair) ||
                                pm__merge(&N, &rc));
    }
    for (uint32_t n = 0; rc == PM_OK && n < p->nnodes; n++) N.nwarnings += N.nodes[n].nwarnings;
    for (size_t r = 0; rc == PM_OK && r < N.roads.len; r++) N.roads.data[r].ok = pm__road_ends(&N, &N.roads.data[r]);
    if (rc == PM_OK && N.problems.len) rc = PM_ERR_GEOMETRY;
    uint64_t used = 0;
    /* The roads' compact copies: the stitch is their only reader. They go
     * in an arena of their own, which the stitch destroys once it has
     * read them: its blocks, given back to a's allocator in one piece,
     * take the stitch's own big arrays instead of fresh memory above the
     * scene. A round that cuts sidewalks back (rare) builds them again as
     * they were. */
    N.copies = rc != PM_OK ? NULL : pm_arena_create_child_max(a, PM__SMALL_BLOCK);
    if (rc == PM_OK && !N.copies) rc = PM_ERR_NOMEM;
    /* Only a network with sidewalks can take a second round. */
    bool sidewalks = PM__NETWORK_REBUILD || N.sidewalks;
    if (rc == PM_OK && sidewalks && !(N.ends = pm_arena_alloc(a, 6 * N.roads.len * sizeof *N.ends)))
        rc = PM_ERR_NOMEM;
    if (rc == PM_OK && !(N.tmp = pm_arena_create_scratch(a))) rc = PM_ERR_NOMEM;
    for (uint32_t n = 0; rc == PM_OK && n < p->nnodes; n++)
        if (N.nodes[n].scene) used += pm_scene_vertex_count(N.nodes[n].scene);
    pm_road_params shared;
    pm__road_template(p, &shared);
    for (size_t r = 0; rc == PM_OK && r < N.roads.len; r++) {
        if (p->max_vertices && used >= p->max_vertices) rc = PM_ERR_LIMIT;
        else rc = pm__build_road(&N, N.copies, &N.roads.data[r], &shared, p->max_vertices ? p->max_vertices - used : 0, false);
        if (rc == PM_OK) used += N.roads.data[r].asphalt->vcount;
    }
    pm_arena_destroy(N.tmp);
    N.tmp = NULL;
    if (rc == PM_OK && p->max_vertices && used > p->max_vertices) rc = PM_ERR_LIMIT;
    /* Sidewalks lying on another piece are cut back, and the whole is
     * stitched and checked again (their asphalt stays as it was). */
    bool stitched = false;   /* *out whole: stitched (then checked) without a problem */
    for (int round = 0; rc == PM_OK; round++) {
        if (!N.copies || (PM__NETWORK_REBUILD && round == 0)) {
            pm_arena_destroy(N.copies);
            rc = pm__rebuild_roads(&N);
        }
        stitched = false;
        if (rc == PM_OK) rc = pm__network_stitch(&N, out);
        if (rc != PM_OK || N.problems.len) break;
        stitched = true;
        /* Without a sidewalk primitive there is nothing to cut back, so no
         * second round: asked for no retry, the check reports what it finds
         * (as it does for sidewalks in the last round). */
        bool last = round >= PM__CUT_ROUNDS || (*out)->nprims == 1;
        bool retry = false;
        rc = pm__network_overlaps(&N, *out, last ? NULL : &retry);
        if (rc != PM_OK || !retry) break;
        N.gaps.len = 0;
        rc = pm__rebuild_dirty(&N);
    }
    pm_arena_destroy(N.copies);
    N.copies = NULL;
    /* The sidewalk triangles' sources have no reader after the last
     * check (16 bytes a triangle: 4.2 MB for the 40 x 40 town): given
     * back with the check's arrays, the late normals and the encoder's
     * text take their pages instead of fresh ones (69.4 -> 65.2 MB of
     * the page pool, 33 -> 31 huge pages). */
    pm_arena_free(a, N.swsrc.data, N.swsrc.cap * sizeof *N.swsrc.data);
    N.swsrc.data = NULL;
    N.swsrc.len = N.swsrc.cap = 0;
    pm__network_drop_chains(&N);
    pm__jcache_drop_positions(&N);
    /* The normals left to the end, in the pages the overlap check's
     * arrays give back (held by a as free regions until trimmed). */
    if (stitched && (rc == PM_OK || rc == PM_ERR_GEOMETRY)) {
        pm_arena_trim(a);
        if (pm__network_late(*out, p->uv_scale)) rc = PM_ERR_NOMEM;
    }
    if (rc == PM_OK && N.problems.len) rc = PM_ERR_GEOMETRY;
    /* The roads' sidewalks come on top of what the parts had. */
    if (rc == PM_OK && p->max_vertices && pm_scene_vertex_count(*out) > p->max_vertices) rc = PM_ERR_LIMIT;
    pm__jcache_end(&N);
    if (rc == PM_OK) rc = pm__network_meta(&N, *out);
    diag->problems = N.problems.data;
    diag->nproblems = N.problems.len;
    diag->nwarnings = N.nwarnings + N.gaps.len;
    diag->junctions_built = N.jc_built;
    diag->junctions_reused = N.jc_reused;
    diag->junctions_in_place = N.jc_in_place;
    for (uint32_t n = 0; n < p->nnodes; n++)
        for (uint32_t k = 0; N.nodes[n].scene && N.nodes[n].bare && k < N.nodes[n].deg; k++)
            diag->nwarnings += N.nodes[n].bare[k];
    if (rc == PM_ERR_GEOMETRY && propose && N.problems.len) {
        /* Only a refused network gets here: one that builds allocates nothing more. */
        uint8_t *join_more = pm_arena_calloc(a, p->nedges + 1, 1);
        if (join_more && pm__propose_joins(&N, join_more, junctions)) *propose = join_more;
    }
    return rc;
}

/* Rounds of joining junctions whose surfaces overlap (each round a whole
 * build with every join found so far). */
#define PM__JOIN_ROUNDS 4

/* The rounds of builds with junctions joined (join: per edge, as
 * pm__join reads it, grown by each round's proposals). junctions: the
 * proposals include junctions refused for their own shape (pm__propose_joins).
 * PM_OK with *out and *diag set when one builds; PM_ERR_CANCELLED; else
 * PM_ERR_GEOMETRY (nothing built, *out and *diag untouched). */
static int pm__join_rounds(pm_arena *a, const pm_network_params *p, uint8_t *join, bool junctions,
                           pm_scene **out, pm_network_diag *diag) {
    for (int keep = 0; keep < 2; keep++) {
        size_t kept = 0;
        for (size_t e = 0; keep && e < p->nedges; e++)
            if (join[e] == 2) { join[e] = 3; kept++; }
        if (keep && !kept) break;
        for (int round = 0; round < PM__JOIN_ROUNDS; round++) {
            /* Each try in an arena of its own, given back when it fails, so
             * the tries of a big refused network do not pile up under its
             * memory limit; one that builds is copied out. Out of memory
             * for a try, the network is refused as first built. */
            pm_arena *t = pm_arena_create_child(a);
            if (!t) return PM_ERR_GEOMETRY;
            pm_scene *s = NULL;
            pm_network_diag d;
            uint8_t *more = NULL;
            int r2 = pm__generate(t, p, join, &more, junctions, &s, &d);
            if (r2 == PM_OK) {
                pm_scene *built = pm_scene_copy(a, s);
                pm_arena_destroy(t);
                if (!built) return PM_ERR_GEOMETRY;
                *out = built;
                d.problems = NULL;   /* none: it built */
                *diag = d;
                return PM_OK;
            }
            size_t fresh = 0;
            for (size_t e = 0; more && e < p->nedges; e++) {
                uint8_t split = more[e] & PM__JOIN_SPLIT;
                if ((more[e] & 1) && !(join[e] & 1)) { join[e] = (uint8_t)((keep ? 3 : 1) | split); fresh++; }
                else if (split && !(join[e] & split)) { join[e] |= split; fresh++; }
                else if (more[e] == 2 && !join[e]) join[e] = 2;
            }
            pm_arena_destroy(t);
            if (r2 == PM_ERR_CANCELLED) return r2;
            if (r2 != PM_ERR_GEOMETRY || !fresh) break;
        }
    }
    return PM_ERR_GEOMETRY;
}

/* The split flags (PM__JOIN_SPLIT) for the last fallback of all: every
 * edge an overlap names that ends at a degree-2 node, so that node is a
 * 2-arm junction. A road through a degree-2 node is a spline through it;
 * at a bend too wide for pm__sharp (its neighbouring points far out) the
 * spline swings out past the corner drawn, by metres, and can lie on a
 * road or junction nearby that the lines as drawn clear; a 2-arm junction
 * builds the corner on the lines drawn (curb lines with a fillet inside).
 * NULL when no overlap names such an edge. */
static uint8_t *pm__split_overlaps(pm_arena *a, const pm_network_params *p, const pm_network_diag *d) {
    uint32_t *deg = pm_arena_calloc(a, p->nnodes + 1, sizeof *deg);
    uint8_t *split = pm_arena_calloc(a, p->nedges + 1, 1);
    if (!deg || !split) return NULL;
    for (uint32_t e = 0; e < p->nedges; e++) deg[p->edges[e].from]++, deg[p->edges[e].to]++;
    bool any = false;
    for (size_t i = 0; i < d->nproblems; i++) {
        const pm_network_problem *q = &d->problems[i];
        if (q->error != PM_NETWORK_OVERLAP) continue;
        for (size_t j = 0; j < q->nedges && j < sizeof q->edges / sizeof *q->edges; j++) {
            const pm_network_edge *E = &p->edges[q->edges[j]];
            if (deg[E->from] != 2 && deg[E->to] != 2) continue;
            split[q->edges[j]] = PM__JOIN_SPLIT;
            any = true;
        }
    }
    return any ? split : NULL;
}

int pm_network_generate(pm_arena *a, const pm_network_params *p, pm_scene **out,
                        pm_network_diag *diag) {
    uint8_t *join = NULL;
    int rc = pm__generate(a, p, NULL, &join, false, out, diag);
    if (rc != PM_ERR_GEOMETRY) return rc;
    /* Junctions overlapping each other or their roads: built again with
     * them joined into one (a fallback: a network that builds never comes
     * here, so its output is as it was). Then, if that still fails, with
     * the merged junctions they were part of kept whole as well (flag 2:
     * a joined junction then takes in whole blocks of a dense graph, so
     * only where joining alone does not build). What still fails is
     * refused with the first build's problems, which name the pieces as
     * drawn. */
    if (join) {
        int r2 = pm__join_rounds(a, p, join, false, out, diag);
        if (r2 != PM_ERR_GEOMETRY) return r2;
    }
    /* Then, as the last resort, junctions refused for their own shape
     * (no mesh even merged and cut) joined to the junctions their named
     * arms run to, over the rounds again from where the joins above
     * stopped: the thin triangles and forks of wide roads that no
     * outline of one node or one close pair can keep apart, paved as one
     * junction. A network that built before never gets here. */
    bool own = false;    /* (without joins or such a problem, that build would be the first again) */
    for (size_t i = 0; i < diag->nproblems; i++) own |= diag->problems[i].error == PM_NETWORK_JUNCTION;
    if (join || own) {
        uint8_t *j3 = pm_arena_calloc(a, p->nedges + 1, 1);
        if (!j3) return rc;
        if (join) memcpy(j3, join, p->nedges);
        int r3 = pm__join_rounds(a, p, j3, true, out, diag);
        if (r3 != PM_ERR_GEOMETRY) return r3;
    }
    /* Then roads overlapping at their degree-2 nodes built with those
     * nodes as 2-arm junctions (pm__split_overlaps), and the rounds again.
     * Still a fallback: what built before never gets here. */
    uint8_t *j4 = pm__split_overlaps(a, p, diag);
    if (!j4) return rc;
    int r4 = pm__join_rounds(a, p, j4, true, out, diag);
    return r4 == PM_ERR_GEOMETRY ? rc : r4;
}

/* For network_stitch.c: a problem record. */
int pm__network_problem(pm__net *N, pm_network_problem **out) { return pm__problem(N, out); }

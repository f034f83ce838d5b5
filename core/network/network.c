/* Road networks: topology (junctions, through nodes, chains of edges), the
 * junctions, the roads between their mouths, and the stitch into one
 * asphalt surface (network_stitch.c). See network/network.h. */
#include "network/network.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
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

/* The first polyline point after node end `end` of edge e. */
static const double *pm__next_point(const pm_network_params *p, const pm_network_edge *e, int end) {
    if (e->npoints) return pm__interior(e, 0, end);
    return p->nodes + 3 * (end == 0 ? e->to : e->from);
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

static int pm__topology(pm__net *N) {
    const pm_network_params *p = N->p;
    N->nodes = pm_arena_calloc(N->a, p->nnodes ? p->nnodes : 1, sizeof *N->nodes);
    N->inc = pm_arena_calloc(N->a, 2 * p->nedges + 1, sizeof *N->inc);
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
            V->kind = e0->width == e1->width && same_sw ? PM__THROUGH : PM__JUNCTION;
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

/* Reads arm k's mouth out of the junction's metadata. */
static int pm__mouth(pm__node *V, const pm_meta *meta, uint32_t k) {
    const pm_meta *arms = pm_meta_get(meta, "arms");
    const pm_meta *arm = arms ? arms->u.kids.first : NULL;
    for (uint32_t i = 0; arm && i < k; i++) arm = arm->next;
    const pm_meta *m = arm ? pm_meta_get(arm, "mouth") : NULL;
    const pm_meta *l = m ? pm_meta_get(m, "left_index") : NULL;
    const pm_meta *r = m ? pm_meta_get(m, "right_index") : NULL;
    const pm_meta *d = m ? pm_meta_get(m, "distance") : NULL;
    if (!l || !r || !d || l->kind != PM_META_INT || r->kind != PM_META_INT || d->kind != PM_META_NUM)
        return PM_ERR_GEOMETRY;
    V->mouth_l[k] = (uint32_t)l->u.i;
    V->mouth_r[k] = (uint32_t)r->u.i;
    V->mouth_d[k] = d->u.n;
    return PM_OK;
}

static int pm__junction(pm__net *N, uint32_t n) {
    const pm_network_params *p = N->p;
    pm__node *V = &N->nodes[n];
    const double *c = p->nodes + 3 * n;
    double gap = pm_network_gap(p);
    pm_junction_arm *arms = pm_arena_calloc(N->a, V->deg, sizeof *arms);
    V->dir = pm_arena_alloc(N->a, 2 * V->deg * sizeof(double));
    V->mouth_l = pm_arena_alloc(N->a, V->deg * sizeof(uint32_t));
    V->mouth_r = pm_arena_alloc(N->a, V->deg * sizeof(uint32_t));
    V->mouth_d = pm_arena_alloc(N->a, V->deg * sizeof(double));
    V->split = pm_arena_alloc(N->a, V->deg * sizeof(uint32_t));
    if (!arms || !V->dir || !V->mouth_l || !V->mouth_r || !V->mouth_d || !V->split) return PM_ERR_NOMEM;
    for (uint32_t k = 0; k < V->deg; k++) {
        const pm__inc *I = &N->inc[V->first + k];
        const pm_network_edge *E = &p->edges[I->edge];
        const double *q = pm__next_point(p, E, I->end);
        double seg = pm__plan(c, q);
        V->dir[2 * k] = (q[0] - c[0]) / seg;
        V->dir[2 * k + 1] = (q[2] - c[2]) / seg;
        pm_junction_arm *A = &arms[k];
        A->direction[0] = V->dir[2 * k];
        A->direction[1] = V->dir[2 * k + 1];
        /* The mouth must leave room for the road; a positive room keeps
         * the arm bounded (0 would mean unbounded). */
        A->length = seg - gap > 1e-9 ? seg - gap : 1e-9;
        A->width = E->width;
        A->elevation = c[1];
        A->has_sidewalk = E->has_sidewalk;
        A->sidewalk = E->sidewalk;
    }
    pm_junction_params jp = {
        .arms = arms, .narms = V->deg, .has_center = true, .center = {c[0], c[2]},
        .corner_radius = p->corner_radius, .corner_segments = p->corner_segments,
        .uv_scale = p->uv_scale, .snap = p->snap, .open_mouths = true,
    };
    V->scene = pm_scene_create(N->a);
    if (!V->scene) return PM_ERR_NOMEM;
    pm_junction_diag d;
    int rc = pm_junction_generate(V->scene, &jp, &d);
    if (rc == PM_ERR_GEOMETRY) {
        pm__junction_problem(N, n, &d);
        V->scene = NULL;
        return PM_OK;
    }
    if (rc < 0) return rc;
    for (uint32_t k = 0; k < V->deg; k++)
        if (pm__mouth(V, V->scene->meta, k)) return PM_ERR_GEOMETRY;
    N->nwarnings += d.nwarnings;
    V->slab = d.slab_ends;
    return PM_OK;
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
    double gap = pm_network_gap(p);
    size_t m = R->nctrl - 1;
    double s0 = pm__plan(R->ctrl, R->ctrl + 3), s1 = pm__plan(R->ctrl + 3 * (m - 1), R->ctrl + 3 * m);
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
    const double *c = N->p->nodes + 3 * node;
    pt[0] = c[0] + V->dir[2 * arm] * d;
    pt[1] = c[1];
    pt[2] = c[2] + V->dir[2 * arm + 1] * d;
}

static int pm__build_road(pm__net *N, pm__road *R, uint64_t budget) {
    const pm_network_params *p = N->p;
    double *pts = pm_arena_alloc(N->a, 3 * R->nctrl * sizeof(double));
    if (!pts) return PM_ERR_NOMEM;
    memcpy(pts, R->ctrl, 3 * R->nctrl * sizeof(double));
    if (R->arm0 >= 0) pm__to_mouth(N, R->start, R->arm0, R->d0, pts);
    if (R->arm1 >= 0) pm__to_mouth(N, R->end, R->arm1, R->d1, pts + 3 * (R->nctrl - 1));
    pm_road_params rp;
    pm_road_params_default(&rp);
    rp.points = pts;
    rp.npoints = R->nctrl;
    rp.closed = R->closed;
    rp.curve = PM_CURVE_CATMULL_ROM;
    rp.alpha = 0.5;
    rp.max_error = p->max_error;
    rp.max_segment = p->max_segment;
    rp.width = p->edges[N->steps.data[R->first_step].edge].width;
    rp.shoulder = 0.0;
    rp.cross_segments = 1;
    rp.uv_scale = p->uv_scale;
    rp.max_vertices = budget;
    rp.cancel = p->cancel;
    pm_road_failure fail = {0};
    int rc = pm_road_generate(N->a, &rp, &R->scene, &fail);
    if (rc < 0) return rc;
    const pm_meta *len = pm_meta_get(R->scene->meta, "length");
    const pm_meta *smp = pm_meta_get(R->scene->meta, "samples");
    R->length = len && len->kind == PM_META_NUM ? len->u.n : 0.0;
    R->samples = smp && smp->kind == PM_META_INT ? smp->u.i : 0;
    return PM_OK;
}

static bool pm__cancelled(const pm_network_params *p) { return p->cancel && *p->cancel; }

int pm_network_generate(pm_arena *a, const pm_network_params *p, pm_scene **out,
                        pm_network_diag *diag) {
    assert(p->nnodes >= 1 && p->corner_segments >= 2 && p->snap > 0 && p->uv_scale > 0);
    memset(diag, 0, sizeof *diag);
    pm__net N = {.a = a, .p = p};
    int rc = pm__topology(&N);
    for (uint32_t e = 0; rc == PM_OK && e < p->nedges; e++)
        if (!N.edge_road[e]) rc = pm__chain(&N, e);
    for (size_t r = 0; rc == PM_OK && r < N.roads.len; r++) rc = pm__polyline(&N, &N.roads.data[r]);
    for (uint32_t n = 0; rc == PM_OK && n < p->nnodes; n++) {
        if (pm__cancelled(p)) rc = PM_ERR_CANCELLED;
        else if (N.nodes[n].kind == PM__JUNCTION) rc = pm__junction(&N, n);
    }
    for (size_t r = 0; rc == PM_OK && r < N.roads.len; r++) N.roads.data[r].ok = pm__road_ends(&N, &N.roads.data[r]);
    if (rc == PM_OK && N.problems.len) rc = PM_ERR_GEOMETRY;
    uint64_t used = 0;
    for (uint32_t n = 0; rc == PM_OK && n < p->nnodes; n++)
        if (N.nodes[n].scene) used += pm_scene_vertex_count(N.nodes[n].scene);
    for (size_t r = 0; rc == PM_OK && r < N.roads.len; r++) {
        if (p->max_vertices && used >= p->max_vertices) rc = PM_ERR_LIMIT;
        else rc = pm__build_road(&N, &N.roads.data[r], p->max_vertices ? p->max_vertices - used : 0);
        if (rc == PM_OK) used += pm_scene_vertex_count(N.roads.data[r].scene);
    }
    if (rc == PM_OK && p->max_vertices && used > p->max_vertices) rc = PM_ERR_LIMIT;
    if (rc == PM_OK) rc = pm__network_stitch(&N, out);
    if (rc == PM_OK && !N.problems.len) rc = pm__network_overlaps(&N, *out);
    if (rc == PM_OK && N.problems.len) rc = PM_ERR_GEOMETRY;
    /* The roads' sidewalks come on top of what the parts had. */
    if (rc == PM_OK && p->max_vertices && pm_scene_vertex_count(*out) > p->max_vertices) rc = PM_ERR_LIMIT;
    if (rc == PM_OK) rc = pm__network_meta(&N, *out);
    diag->problems = N.problems.data;
    diag->nproblems = N.problems.len;
    diag->nwarnings = N.nwarnings + N.gaps.len;
    return rc;
}

/* For network_stitch.c: a problem record. */
int pm__network_problem(pm__net *N, pm_network_problem **out) { return pm__problem(N, out); }

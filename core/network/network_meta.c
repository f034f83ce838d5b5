/* The network's metadata: nodes, edges, roads, seams and warnings, built
 * from the stitched network (moved out of network_stitch.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "network/network_internal.h"
#include "scene/result.h"

static pm_meta *pm__id(pm_arena *a, const pm_network_params *p, size_t n) {
    if (!p->ids) return pm_meta_int(a, (int64_t)n);
    return p->ids[n].is_num ? pm_meta_int(a, p->ids[n].num) : pm_meta_str(a, p->ids[n].str);
}

static pm_meta *pm__range(pm_arena *a, uint32_t first, uint32_t count) {
    int64_t v[2] = {first, count};
    return pm_meta_ints(a, v, 2);
}

static pm_meta *pm__vertex(pm_arena *a, const pm_prim *A, uint32_t v) {
    double q[3] = {A->positions[3 * v], A->positions[3 * v + 1], A->positions[3 * v + 2]};
    return pm_meta_nums(a, q, 3);
}

/* A member of the junction's own metadata, unlinked from it and moved
 * into the network's tree (a node can sit in one list only). */
static pm_meta *pm__take(const pm_scene *J, const char *key) {
    pm_meta *obj = J->meta, *prev = NULL;
    for (pm_meta *m = obj->u.kids.first; m; prev = m, m = m->next) {
        if (strcmp(m->key, key) != 0) continue;
        if (prev) prev->next = m->next;
        else obj->u.kids.first = m->next;
        if (obj->u.kids.last == m) obj->u.kids.last = prev;
        obj->u.kids.count--;
        m->next = NULL;
        return m;
    }
    return NULL;
}

static const char *const pm__kinds[] = {"unused", "end", "through", "junction", "merged"};

static int pm__node_meta(pm__net *N, const pm_scene *s, size_t n, pm_meta *arr) {
    pm_arena *a = N->a;
    const pm__node *V = &N->nodes[n];
    const pm_prim *A = &s->prims[0];
    pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a);
    int rc = pm_meta_set_lit(o, "id", pm__id(a, N->p, n));
    rc |= pm_meta_set_lit(o, "index", pm_meta_int(a, (int64_t)n));
    rc |= pm_meta_set_lit(o, "kind", pm_meta_str(a, pm__kinds[V->kind]));
    rc |= pm_meta_set_lit(o, "position", pm_meta_nums(a, N->p->nodes + 3 * n, 3));
    for (uint32_t k = 0; k < V->deg; k++) rc |= pm_meta_push(edges, pm_meta_int(a, N->inc[V->first + k].edge));
    rc |= pm_meta_set_lit(o, "edges", edges);
    if (V->kind == PM__MERGED) rc |= pm_meta_set_lit(o, "junction", pm_meta_int(a, V->into));
    if (V->merged_node >= 0) rc |= pm_meta_set_lit(o, "centre", pm_meta_nums(a, V->c, 3));
    if (V->scene) {
        pm_meta *mouths = pm_meta_arr(a);
        for (uint32_t k = 0; k < V->deg; k++) {
            pm_meta *m = pm_meta_obj(a);
            uint32_t l = V->voff + V->mouth_l[k], r = V->voff + V->mouth_r[k];
            rc |= pm_meta_set_lit(m, "edge", pm_meta_int(a, N->inc[V->first + k].edge));
            rc |= pm_meta_set_lit(m, "distance", pm_meta_num(a, V->mouth_d[k]));
            rc |= pm_meta_set_lit(m, "left", pm__vertex(a, A, l));
            rc |= pm_meta_set_lit(m, "right", pm__vertex(a, A, r));
            rc |= pm_meta_set_lit(m, "left_index", pm_meta_int(a, l));
            rc |= pm_meta_set_lit(m, "right_index", pm_meta_int(a, r));
            rc |= pm_meta_set_lit(m, "centre_index", pm_meta_int(a, V->split[k]));
            rc |= pm_meta_push(mouths, m);
        }
        rc |= pm_meta_set_lit(o, "vertices", pm__range(a, V->voff, V->vcount));
        rc |= pm_meta_set_lit(o, "mouths", mouths);
        rc |= pm_meta_set_lit(o, "corners", pm__take(V->scene, "corners"));
    }
    return rc | pm_meta_push(arr, o);
}

static int pm__edge_meta(pm__net *N, uint32_t e, pm_meta *arr) {
    pm_arena *a = N->a;
    const pm_network_edge *E = &N->p->edges[e];
    const double *q = N->p->nodes + 3 * E->from;
    double len = 0.0;
    for (size_t i = 0; i <= E->npoints; i++) {
        const double *r = i < E->npoints ? E->points + 3 * i : N->p->nodes + 3 * E->to;
        len += hypot(r[0] - q[0], r[2] - q[2]);
        q = r;
    }
    if (!N->edge_road[e]) {      /* inside a merged junction: no road of its own */
        pm_meta *o = pm_meta_obj(a);
        int rc = pm_meta_set_lit(o, "index", pm_meta_int(a, e));
        rc |= pm_meta_set_lit(o, "from", pm__id(a, N->p, E->from));
        rc |= pm_meta_set_lit(o, "to", pm__id(a, N->p, E->to));
        rc |= pm_meta_set_lit(o, "road", pm_meta_null(a));
        rc |= pm_meta_set_lit(o, "width", pm_meta_num(a, E->width));
        rc |= pm_meta_set_lit(o, "plan_length", pm_meta_num(a, len));
        rc |= pm_meta_set_lit(o, "length", pm_meta_num(a, 0.0));
        rc |= pm_meta_set_lit(o, "vertices", pm__range(a, 0, 0));
        rc |= pm_meta_set_lit(o, "triangles", pm__range(a, 0, 0));
        rc |= pm_meta_set_lit(o, "sidewalk_sides", pm_meta_arr(a));
        return rc | pm_meta_push(arr, o);
    }
    const pm__road *R = &N->roads.data[N->edge_road[e] - 1];
    size_t k = 0;
    while (k + 1 < R->nsteps && N->steps.data[R->first_step + k].edge != e) k++;
    const uint32_t *piece = R->piece + 4 * k;
    pm_meta *o = pm_meta_obj(a);
    int rc = pm_meta_set_lit(o, "index", pm_meta_int(a, e));
    rc |= pm_meta_set_lit(o, "from", pm__id(a, N->p, E->from));
    rc |= pm_meta_set_lit(o, "to", pm__id(a, N->p, E->to));
    rc |= pm_meta_set_lit(o, "road", pm_meta_int(a, (int64_t)N->edge_road[e] - 1));
    rc |= pm_meta_set_lit(o, "width", pm_meta_num(a, E->width));
    rc |= pm_meta_set_lit(o, "plan_length", pm_meta_num(a, len));
    rc |= pm_meta_set_lit(o, "length", pm_meta_num(a, R->piece_len[k]));
    rc |= pm_meta_set_lit(o, "vertices", pm__range(a, piece[0], piece[1]));
    rc |= pm_meta_set_lit(o, "triangles", pm__range(a, piece[2], piece[3]));
    /* Sides as seen travelling from `from` to `to`; the road may run the
     * other way. */
    pm_meta *sides = pm_meta_arr(a);
    bool rev = N->steps.data[R->first_step + k].end == 1;
    if (R->nchain[rev ? 1 : 0] >= 2) rc |= pm_meta_push(sides, pm_meta_str(a, "left"));
    if (R->nchain[rev ? 0 : 1] >= 2) rc |= pm_meta_push(sides, pm_meta_str(a, "right"));
    rc |= pm_meta_set_lit(o, "sidewalk_sides", sides);
    return rc | pm_meta_push(arr, o);
}

static int pm__seam_meta(pm__net *N, size_t r, int end, pm_meta *arr) {
    pm_arena *a = N->a;
    const pm__road *R = &N->roads.data[r];
    const uint32_t *sv = end ? R->seam1 : R->seam0;
    const pm__step *st = &N->steps.data[R->first_step + (end ? R->nsteps - 1 : 0)];
    pm_meta *o = pm_meta_obj(a);
    int rc = pm_meta_set_lit(o, "node", pm_meta_int(a, end ? R->end : R->start));
    rc |= pm_meta_set_lit(o, "edge", pm_meta_int(a, st->edge));
    rc |= pm_meta_set_lit(o, "road", pm_meta_int(a, (int64_t)r));
    rc |= pm_meta_set_lit(o, "road_end", pm_meta_str(a, end ? "end" : "start"));
    /* The mouth's left/right as seen from the junction looking out. */
    rc |= pm_meta_set_lit(o, "left_index", pm_meta_int(a, end ? sv[2] : sv[0]));
    rc |= pm_meta_set_lit(o, "centre_index", pm_meta_int(a, sv[1]));
    rc |= pm_meta_set_lit(o, "right_index", pm_meta_int(a, end ? sv[0] : sv[2]));
    return rc | pm_meta_push(arr, o);
}

static int pm__road_meta(pm__net *N, size_t r, pm_meta *roads, pm_meta *seams) {
    pm_arena *a = N->a;
    const pm__road *R = &N->roads.data[r];
    pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a), *rev = pm_meta_arr(a);
    int rc = 0;
    for (size_t k = 0; k < R->nsteps; k++) {
        const pm__step *st = &N->steps.data[R->first_step + k];
        rc |= pm_meta_push(edges, pm_meta_int(a, st->edge));
        rc |= pm_meta_push(rev, pm_meta_bool(a, st->end == 1));
    }
    rc |= pm_meta_set_lit(o, "edges", edges);
    rc |= pm_meta_set_lit(o, "reversed", rev);
    rc |= pm_meta_set_lit(o, "closed", pm_meta_bool(a, R->closed));
    rc |= pm_meta_set_lit(o, "start", R->closed ? pm_meta_null(a) : pm_meta_int(a, R->start));
    rc |= pm_meta_set_lit(o, "end", R->closed ? pm_meta_null(a) : pm_meta_int(a, R->end));
    rc |= pm_meta_set_lit(o, "length", pm_meta_num(a, R->length));
    rc |= pm_meta_set_lit(o, "samples", pm_meta_int(a, R->samples));
    rc |= pm_meta_set_lit(o, "vertices", pm__range(a, R->voff, R->vcount));
    rc |= pm_meta_set_lit(o, "triangles", pm__range(a, R->toff, R->tcount));
    rc |= pm_meta_push(roads, o);
    if (R->arm0 >= 0) rc |= pm__seam_meta(N, r, 0, seams);
    if (R->arm1 >= 0) rc |= pm__seam_meta(N, r, 1, seams);
    return rc;
}

/* A road side whose sidewalk stops short of a stretch where the road's own
 * edge crosses itself. */
static int pm__gap_meta(pm__net *N, const pm__gap_t *g, pm_meta *out) {
    pm_arena *a = N->a;
    const pm__road *R = &N->roads.data[g->road];
    pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a);
    double from[3] = {g->from[0], g->from[1], g->from[2]}, to[3] = {g->to[0], g->to[1], g->to[2]};
    int rc = pm_meta_set_lit(o, "code", pm_meta_str(a, "sidewalk_interrupted"));
    for (size_t k = 0; k < R->nsteps; k++)
        rc |= pm_meta_push(edges, pm_meta_int(a, N->steps.data[R->first_step + k].edge));
    rc |= pm_meta_set_lit(o, "road", pm_meta_int(a, (int64_t)g->road));
    rc |= pm_meta_set_lit(o, "edges", edges);
    rc |= pm_meta_set_lit(o, "side", pm_meta_str(a, g->side ? "right" : "left"));
    rc |= pm_meta_set_lit(o, "from", pm_meta_nums(a, from, 3));
    rc |= pm_meta_set_lit(o, "to", pm_meta_nums(a, to, 3));
    rc |= pm_meta_set_lit(o, "curb_edges", pm_meta_int(a, g->bare));
    char msg[200];
    if (g->overlap)
        snprintf(msg, sizeof msg, "the road's %s sidewalk would lie on another road, junction or "
                 "sidewalk there (too little room between them): it stops (with end caps) on both "
                 "sides of that stretch", g->side ? "right" : "left");
    else if (g->corner)
        snprintf(msg, sizeof msg, "the road's %s sidewalk starts beyond a junction corner that "
                 "had no room for its own (corner_sidewalk_dropped): from there it would lie on "
                 "the neighbouring road's", g->side ? "right" : "left");
    else
        snprintf(msg, sizeof msg, "the road's %s edge crosses itself in a turn too tight for its "
                 "width: its sidewalk stops (with end caps) on both sides of that stretch",
                 g->side ? "right" : "left");
    rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
    return rc | pm_meta_push(out, o);
}

/* The nodes merged into junction n (n first) and the edges inside it, in
 * index order, into nodes and edges; the warning's message into msg. */
static int pm__merged_lists(pm__net *N, size_t n, pm_meta *nodes, pm_meta *edges, char *msg,
                            size_t cap) {
    const pm_network_params *p = N->p;
    const pm__node *V = &N->nodes[n];
    pm_arena *a = N->a;
    int rc = pm_meta_push(nodes, pm_meta_int(a, (int64_t)n));
    size_t count = 1;
    for (size_t m = 0; m < p->nnodes; m++)
        if (N->nodes[m].kind == PM__MERGED && N->nodes[m].into == n) {
            rc |= pm_meta_push(nodes, pm_meta_int(a, (int64_t)m));
            count++;
        }
    for (uint32_t e = 0; e < p->nedges; e++) {
        const pm_network_edge *E = &p->edges[e];
        uint32_t f = N->nodes[E->from].kind == PM__MERGED ? N->nodes[E->from].into : E->from;
        uint32_t t = N->nodes[E->to].kind == PM__MERGED ? N->nodes[E->to].into : E->to;
        if (f == n && t == n) rc |= pm_meta_push(edges, pm_meta_int(a, e));
    }
    const pm_network_edge *E = &p->edges[V->merged_edge];
    if (count == 2) {
        snprintf(msg, cap, "nodes %zu and %lld are %.3f m apart, too close for two junctions "
                 "and a road between them: merged into one junction centred between them, with "
                 "every arm of both; edge %u lies inside it", n, (long long)V->merged_node,
                 hypot(p->nodes[3 * E->from] - p->nodes[3 * E->to],
                       p->nodes[3 * E->from + 2] - p->nodes[3 * E->to + 2]), V->merged_edge);
    } else {
        int k = snprintf(msg, cap, "nodes %zu", n);
        for (size_t m = 0; m < p->nnodes && k > 0 && (size_t)k < cap; m++)
            if (N->nodes[m].kind == PM__MERGED && N->nodes[m].into == n)
                k += snprintf(msg + k, cap - (size_t)k, ", %zu", m);
        if (k > 0 && (size_t)k < cap)
            snprintf(msg + k, cap - (size_t)k, " are too close for separate junctions (roads from "
                     "two of them meet the third within their widths): merged into one junction "
                     "centred among them, with every arm of all; the edges between them lie inside it");
    }
    return rc;
}

/* The arm of junction node n on (edge, end), or -1. */
static int64_t pm__arm_on(const pm__net *N, int64_t n, uint32_t edge, int end) {
    const pm__node *V = n >= 0 ? &N->nodes[n] : NULL;
    for (uint32_t k = 0; V && V->scene && V->cap && k < V->deg; k++)
        if (N->inc[V->first + k].edge == edge && N->inc[V->first + k].end == end) return k;
    return -1;
}

/* junctions_close for a road through through nodes between two junctions
 * whose mouths were shortened to fit (naming every edge of the road). */
static int pm__close_chain_meta(pm__net *N, pm_meta *out) {
    pm_arena *a = N->a;
    int rc = 0;
    for (size_t r = 0; r < N->roads.len; r++) {
        const pm__road *R = &N->roads.data[r];
        if (R->closed || R->nsteps < 2) continue;
        const pm__step *st = &N->steps.data[R->first_step], *last = st + R->nsteps - 1;
        int64_t k = pm__arm_on(N, R->start, st->edge, st->end);
        int64_t j = pm__arm_on(N, R->end, last->edge, last->end ? 0 : 1);
        if (k < 0 || j < 0) continue;
        if (N->nodes[R->start].cap[k] == HUGE_VAL && N->nodes[R->end].cap[j] == HUGE_VAL) continue;
        pm_meta *o = pm_meta_obj(a), *nodes = pm_meta_arr(a), *edges = pm_meta_arr(a);
        rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, "junctions_close"));
        rc |= pm_meta_push(nodes, pm_meta_int(a, R->start));
        rc |= pm_meta_push(nodes, pm_meta_int(a, R->end));
        for (size_t i = 0; i < R->nsteps; i++) rc |= pm_meta_push(edges, pm_meta_int(a, st[i].edge));
        rc |= pm_meta_set_lit(o, "nodes", nodes);
        rc |= pm_meta_set_lit(o, "edges", edges);
        rc |= pm_meta_set_lit(o, "road_length", pm_meta_num(a, R->length));
        char msg[240];
        snprintf(msg, sizeof msg, "the junctions at nodes %lld and %lld are too close for their full "
                 "corners: their corners were made smaller so that a road of %.3f m joins them along "
                 "edges %u to %u (through their through nodes)", (long long)R->start, (long long)R->end,
                 R->length, st->edge, last->edge);
        rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
        rc |= pm_meta_push(out, o);
        N->nwarnings++;
    }
    return rc;
}

/* Close junctions: each pair merged into one (junctions_merged), and each
 * pair joined by a road shortened to fit (junctions_close). */
static int pm__close_meta(pm__net *N, pm_meta *out) {
    pm_arena *a = N->a;
    const pm_network_params *p = N->p;
    int rc = 0;
    char msg[320];
    for (size_t n = 0; n < p->nnodes; n++) {
        const pm__node *V = &N->nodes[n];
        if (V->merged_node < 0 || !V->scene) continue;
        pm_meta *o = pm_meta_obj(a), *nodes = pm_meta_arr(a), *edges = pm_meta_arr(a);
        rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, "junctions_merged"));
        rc |= pm__merged_lists(N, n, nodes, edges, msg, sizeof msg);
        rc |= pm_meta_set_lit(o, "node", pm_meta_int(a, (int64_t)n));
        rc |= pm_meta_set_lit(o, "nodes", nodes);
        rc |= pm_meta_set_lit(o, "edges", edges);
        rc |= pm_meta_set_lit(o, "centre", pm_meta_nums(a, V->c, 3));
        rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
        rc |= pm_meta_push(out, o);
        N->nwarnings++;
    }
    for (uint32_t e = 0; e < p->nedges; e++) {
        const pm_network_edge *E = &p->edges[e];
        const pm__node *A = &N->nodes[E->from], *B = &N->nodes[E->to];
        if (!N->edge_road[e] || !A->scene || !B->scene || !A->cap || !B->cap) continue;
        uint32_t ka = 0, kb = 0;
        while (ka < A->deg && !(N->inc[A->first + ka].edge == e && N->inc[A->first + ka].end == 0)) ka++;
        while (kb < B->deg && !(N->inc[B->first + kb].edge == e && N->inc[B->first + kb].end == 1)) kb++;
        if (ka == A->deg || kb == B->deg || (A->cap[ka] == HUGE_VAL && B->cap[kb] == HUGE_VAL)) continue;
        const pm__road *R = &N->roads.data[N->edge_road[e] - 1];
        pm_meta *o = pm_meta_obj(a), *nodes = pm_meta_arr(a), *edges = pm_meta_arr(a);
        rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, "junctions_close"));
        rc |= pm_meta_push(nodes, pm_meta_int(a, E->from));
        rc |= pm_meta_push(nodes, pm_meta_int(a, E->to));
        rc |= pm_meta_push(edges, pm_meta_int(a, e));
        rc |= pm_meta_set_lit(o, "nodes", nodes);
        rc |= pm_meta_set_lit(o, "edges", edges);
        rc |= pm_meta_set_lit(o, "road_length", pm_meta_num(a, R->length));
        snprintf(msg, sizeof msg, "the junctions at nodes %u and %u are too close for their full "
                 "corners: their corners were made smaller so that a road of %.3f m joins them "
                 "along edge %u", E->from, E->to, R->length, e);
        rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
        rc |= pm_meta_push(out, o);
        N->nwarnings++;
    }
    return rc | pm__close_chain_meta(N, out);
}

/* Junction corners whose slab was left out because it lay on another
 * piece (corner_sidewalk_dropped, like a corner without room). */
static int pm__bare_meta(pm__net *N, pm_meta *out) {
    pm_arena *a = N->a;
    int rc = 0;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        const pm__node *V = &N->nodes[n];
        for (uint32_t k = 0; V->scene && V->bare && k < V->deg; k++) {
            if (!V->bare[k]) continue;
            /* The corner's other arm: the next one clockwise in atan2(z, x). */
            double ak = atan2(V->dir[2 * k + 1], V->dir[2 * k]), best = HUGE_VAL;
            uint32_t j = k;
            for (uint32_t i = 0; i < V->deg; i++) {
                double d = ak - atan2(V->dir[2 * i + 1], V->dir[2 * i]);
                while (d <= 0) d += 2 * 3.14159265358979323846;
                if (i != k && d < best) { best = d; j = i; }
            }
            uint32_t ek = N->inc[V->first + k].edge, ej = N->inc[V->first + j].edge;
            pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a);
            rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, "corner_sidewalk_dropped"));
            rc |= pm_meta_set_lit(o, "node", pm_meta_int(a, (int64_t)n));
            rc |= pm_meta_push(edges, pm_meta_int(a, ek));
            rc |= pm_meta_push(edges, pm_meta_int(a, ej));
            rc |= pm_meta_set_lit(o, "edges", edges);
            char msg[200];
            snprintf(msg, sizeof msg, "corner between edges %u and %u: no sidewalk (its slab would "
                     "lie on another road, junction or sidewalk: too little room between them)", ek, ej);
            rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg));
            rc |= pm_meta_push(out, o);
        }
    }
    return rc;
}

/* Junction warnings, each naming its node and the edges of its arms. */
static int pm__warnings_meta(pm__net *N, pm_meta *out) {
    pm_arena *a = N->a;
    int rc = 0;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        const pm__node *V = &N->nodes[n];
        const pm_meta *w = V->scene ? pm_meta_get(V->scene->meta, "warnings") : NULL;
        for (const pm_meta *it = w ? w->u.kids.first : NULL; it; it = it->next) {
            pm_meta *o = pm_meta_obj(a), *edges = pm_meta_arr(a);
            const pm_meta *arms = pm_meta_get(it, "arms"), *code = pm_meta_get(it, "code");
            const pm_meta *msg = pm_meta_get(it, "message");
            rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, code ? code->u.s : "junction"));
            rc |= pm_meta_set_lit(o, "node", pm_meta_int(a, (int64_t)n));
            for (const pm_meta *k = arms ? arms->u.kids.first : NULL; k; k = k->next)
                if (k->kind == PM_META_INT && k->u.i >= 0 && k->u.i < V->deg)
                    rc |= pm_meta_push(edges, pm_meta_int(a, N->inc[V->first + k->u.i].edge));
            rc |= pm_meta_set_lit(o, "edges", edges);
            const pm_meta *rq = pm_meta_get(it, "requested_radius"), *rr = pm_meta_get(it, "radius");
            if (rq) rc |= pm_meta_set_lit(o, "requested_radius", pm_meta_num(a, rq->u.n));
            if (rr) rc |= pm_meta_set_lit(o, "radius", pm_meta_num(a, rr->u.n));
            rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, msg ? msg->u.s : ""));
            rc |= pm_meta_push(out, o);
        }
    }
    for (size_t g = 0; g < N->gaps.len; g++) rc |= pm__gap_meta(N, &N->gaps.data[g], out);
    rc |= pm__bare_meta(N, out);
    rc |= pm__close_meta(N, out);
    return rc;
}

int pm__network_meta(pm__net *N, pm_scene *s) {
    pm_arena *a = N->a;
    pm_meta *nodes = pm_meta_arr(a), *edges = pm_meta_arr(a), *roads = pm_meta_arr(a);
    pm_meta *seams = pm_meta_arr(a), *warnings = pm_meta_arr(a);
    int rc = 0;
    size_t nj = 0;
    for (size_t n = 0; n < N->p->nnodes; n++) {
        rc |= pm__node_meta(N, s, n, nodes);
        nj += N->nodes[n].scene != NULL;
    }
    for (uint32_t e = 0; e < N->p->nedges; e++) rc |= pm__edge_meta(N, e, edges);
    for (size_t r = 0; r < N->roads.len; r++) rc |= pm__road_meta(N, r, roads, seams);
    rc |= pm__warnings_meta(N, warnings);
    rc |= pm_meta_set_lit(s->meta, "junctions", pm_meta_int(a, (int64_t)nj));
    rc |= pm_meta_set_lit(s->meta, "roads_count", pm_meta_int(a, (int64_t)N->roads.len));
    rc |= pm_meta_set_lit(s->meta, "nodes", nodes);
    rc |= pm_meta_set_lit(s->meta, "edges", edges);
    rc |= pm_meta_set_lit(s->meta, "roads", roads);
    rc |= pm_meta_set_lit(s->meta, "seams", seams);
    rc |= pm_meta_set_lit(s->meta, "warnings", warnings);
    return rc ? PM_ERR_NOMEM : PM_OK;
}

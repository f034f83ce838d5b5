/* The network's metadata: nodes, edges, roads, seams and warnings, built
 * from the stitched network (moved out of network_stitch.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "network/network_internal.h"
#include "scene/result.h"

/* Nodes, edges, roads, seams and mouths are tables (scene/meta.h): a row
 * struct per object, filled here in one pass, instead of a node per
 * value; the writer prints them from their C types. */
typedef struct pm__mouth_row {
    uint32_t edge;
    double distance, left[3], right[3];
    uint32_t left_index, right_index, centre_index;
} pm__mouth_row;

static const pm_meta_col pm__mouth_cols[] = {
    PM_META_COL("edge", U32, pm__mouth_row, edge),
    PM_META_COL("distance", F64, pm__mouth_row, distance),
    PM_META_COL("left", F64X3, pm__mouth_row, left),
    PM_META_COL("right", F64X3, pm__mouth_row, right),
    PM_META_COL("left_index", U32, pm__mouth_row, left_index),
    PM_META_COL("right_index", U32, pm__mouth_row, right_index),
    PM_META_COL("centre_index", U32, pm__mouth_row, centre_index),
};
static const pm_meta_shape pm__mouth_shape = {pm__mouth_cols, 7, sizeof(pm__mouth_row)};

typedef struct pm__node_row {
    pm_meta_val id;
    uint32_t index;
    const char *kind;
    double position[3];
    pm_meta_u32s edges;
    /* NULL where the node has none */
    pm_meta *junction, *centre, *vertices, *mouths, *corners;
} pm__node_row;

static const pm_meta_col pm__node_cols[] = {
    PM_META_COL("id", VAL, pm__node_row, id),
    PM_META_COL("index", U32, pm__node_row, index),
    PM_META_COL("kind", STR, pm__node_row, kind),
    PM_META_COL("position", F64X3, pm__node_row, position),
    PM_META_COL("edges", U32S, pm__node_row, edges),
    PM_META_COL("junction", META, pm__node_row, junction),
    PM_META_COL("centre", META, pm__node_row, centre),
    PM_META_COL("vertices", META, pm__node_row, vertices),
    PM_META_COL("mouths", META, pm__node_row, mouths),
    PM_META_COL("corners", META, pm__node_row, corners),
};
static const pm_meta_shape pm__node_shape = {pm__node_cols, 10, sizeof(pm__node_row)};

typedef struct pm__edge_row {
    uint32_t index;
    pm_meta_val from, to, road;
    double width, plan_length, length;
    uint32_t vertices[2], triangles[2];
    const pm_meta *sides;
} pm__edge_row;

static const pm_meta_col pm__edge_cols[] = {
    PM_META_COL("index", U32, pm__edge_row, index),
    PM_META_COL("from", VAL, pm__edge_row, from),
    PM_META_COL("to", VAL, pm__edge_row, to),
    PM_META_COL("road", VAL, pm__edge_row, road),
    PM_META_COL("width", F64, pm__edge_row, width),
    PM_META_COL("plan_length", F64, pm__edge_row, plan_length),
    PM_META_COL("length", F64, pm__edge_row, length),
    PM_META_COL("vertices", U32X2, pm__edge_row, vertices),
    PM_META_COL("triangles", U32X2, pm__edge_row, triangles),
    PM_META_COL("sidewalk_sides", META, pm__edge_row, sides),
};
static const pm_meta_shape pm__edge_shape = {pm__edge_cols, 10, sizeof(pm__edge_row)};

typedef struct pm__road_row {
    pm_meta_u32s edges;
    pm_meta_bools reversed;
    bool closed;
    pm_meta_val start, end;
    double length;
    int64_t samples;
    uint32_t vertices[2], triangles[2];
} pm__road_row;

static const pm_meta_col pm__road_cols[] = {
    PM_META_COL("edges", U32S, pm__road_row, edges),
    PM_META_COL("reversed", BOOLS, pm__road_row, reversed),
    PM_META_COL("closed", BOOL, pm__road_row, closed),
    PM_META_COL("start", VAL, pm__road_row, start),
    PM_META_COL("end", VAL, pm__road_row, end),
    PM_META_COL("length", F64, pm__road_row, length),
    PM_META_COL("samples", I64, pm__road_row, samples),
    PM_META_COL("vertices", U32X2, pm__road_row, vertices),
    PM_META_COL("triangles", U32X2, pm__road_row, triangles),
};
static const pm_meta_shape pm__road_shape = {pm__road_cols, 9, sizeof(pm__road_row)};

typedef struct pm__seam_row {
    int64_t node;
    uint32_t edge;
    int64_t road;
    const char *road_end;
    uint32_t left_index, centre_index, right_index;
} pm__seam_row;

static const pm_meta_col pm__seam_cols[] = {
    PM_META_COL("node", I64, pm__seam_row, node),
    PM_META_COL("edge", U32, pm__seam_row, edge),
    PM_META_COL("road", I64, pm__seam_row, road),
    PM_META_COL("road_end", STR, pm__seam_row, road_end),
    PM_META_COL("left_index", U32, pm__seam_row, left_index),
    PM_META_COL("centre_index", U32, pm__seam_row, centre_index),
    PM_META_COL("right_index", U32, pm__seam_row, right_index),
};
static const pm_meta_shape pm__seam_shape = {pm__seam_cols, 7, sizeof(pm__seam_row)};

/* A junction's corners (core/junction: "arms", "kind", "angle",
 * "requested_radius", "radius", a fillet's "point", "sidewalk") as a table:
 * the same JSON, written from rows without a lookup per member. */
typedef struct pm__corner_row {
    uint32_t arms[2];
    const char *kind;
    double angle, requested_radius, radius;
    const pm_meta *point;   /* NULL: none */
    bool sidewalk;
} pm__corner_row;

static const pm_meta_col pm__corner_cols[] = {
    PM_META_COL("arms", U32X2, pm__corner_row, arms),
    PM_META_COL("kind", STR, pm__corner_row, kind),
    PM_META_COL("angle", F64, pm__corner_row, angle),
    PM_META_COL("requested_radius", F64, pm__corner_row, requested_radius),
    PM_META_COL("radius", F64, pm__corner_row, radius),
    PM_META_COL("point", META, pm__corner_row, point),
    PM_META_COL("sidewalk", BOOL, pm__corner_row, sidewalk),
};
static const pm_meta_shape pm__corner_shape = {pm__corner_cols, 7, sizeof(pm__corner_row)};

/* The next member of a corner when it is key (a literal) of kind. The
 * linker merges equal literals, so the key is mostly the same address. */
static inline __attribute__((always_inline)) const pm_meta *pm__member(const pm_meta *m, const char *key,
                                                                       size_t n, pm_meta_kind kind) {
    if (!m || m->kind != kind || m->key_len != n) return NULL;
    return m->key == key || (m->key && memcmp(m->key, key, n) == 0) ? m : NULL;
}
#define PM__MEMBER(m, key, kind) pm__member((m), "" key, sizeof(key) - 1, PM_META_##kind)

/* Corner object o into row r; false when o is not exactly such an object
 * (members, their order and kinds), so the caller keeps the tree. */
static bool pm__corner_fill(const pm_meta *o, pm__corner_row *r) {
    if (o->kind != PM_META_OBJ) return false;
    const pm_meta *arms = PM__MEMBER(o->u.kids.first, "arms", ARR);
    const pm_meta *a0 = arms && arms->u.kids.count == 2 ? arms->u.kids.first : NULL;
    if (!a0 || a0->kind != PM_META_INT || a0->next->kind != PM_META_INT) return false;
    int64_t i0 = a0->u.i, i1 = a0->next->u.i;
    if (i0 < 0 || i0 > UINT32_MAX || i1 < 0 || i1 > UINT32_MAX) return false;
    const pm_meta *kind = PM__MEMBER(arms->next, "kind", STR);
    const pm_meta *angle = PM__MEMBER(kind ? kind->next : NULL, "angle", NUM);
    const pm_meta *req = PM__MEMBER(angle ? angle->next : NULL, "requested_radius", NUM);
    const pm_meta *rad = PM__MEMBER(req ? req->next : NULL, "radius", NUM);
    if (!rad) return false;
    const pm_meta *point = PM__MEMBER(rad->next, "point", ARR);
    const pm_meta *sw = PM__MEMBER(point ? point->next : rad->next, "sidewalk", BOOL);
    if (!sw || sw->next) return false;
    *r = (pm__corner_row){.arms = {(uint32_t)i0, (uint32_t)i1}, .kind = kind->u.s,
                          .angle = angle->u.n, .requested_radius = req->u.n, .radius = rad->u.n,
                          .point = point, .sidewalk = sw->u.b};
    return true;
}

/* corners (an array of corner objects) as a table in a, or corners itself
 * when one of them is not a plain corner object (or out of memory). */
pm_meta *pm__corners_table(pm_arena *a, pm_meta *corners) {
    if (!corners || corners->kind != PM_META_ARR || corners->u.kids.count == 0) return corners;
    pm__corner_row *rows = pm_arena_alloc(a, corners->u.kids.count * sizeof *rows);
    if (!rows) return corners;
    size_t n = 0;
    for (const pm_meta *k = corners->u.kids.first; k; k = k->next)
        if (!pm__corner_fill(k, &rows[n++])) return corners;
    pm_meta *t = pm_meta_table(a, &pm__corner_shape, rows, n);
    if (!t) return corners;
    t->key = corners->key;
    t->key_len = corners->key_len;
    return t;
}

static pm_meta_val pm__int_val(int64_t i) { return (pm_meta_val){.kind = PM_META_INT, .u.i = i}; }

/* Every node's id as its rows show it: the index when the request named
 * none, else its number or its string (copied once, shared by the node's
 * row and its edges'). NULL when out of memory. */
static pm_meta_val *pm__ids(pm__net *N) {
    const pm_network_params *p = N->p;
    pm_meta_val *ids = pm_arena_alloc(N->a, p->nnodes * sizeof *ids);
    for (size_t n = 0; ids && n < p->nnodes; n++) {
        if (!p->ids) ids[n] = pm__int_val((int64_t)n);
        else if (p->ids[n].is_num) ids[n] = pm__int_val(p->ids[n].num);
        else if (!(ids[n].u.s = pm_arena_strdup(N->a, p->ids[n].str))) return NULL;
        else ids[n].kind = PM_META_STR;
    }
    return ids;
}

static void pm__vertex(double q[3], const pm_prim *A, uint32_t v) {
    for (int i = 0; i < 3; i++) q[i] = A->positions[3 * v + i];
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

/* Node n's row; its arms' edges go to *edges (advanced), its mouths' rows
 * to *mouths (advanced). -1 when out of memory. */
static int pm__node_row_fill(pm__net *N, const pm_scene *s, size_t n, const pm_meta_val *ids,
                             pm__node_row *o, uint32_t **edges, pm__mouth_row **mouths) {
    pm_arena *a = N->a;
    const pm__node *V = &N->nodes[n];
    const pm_prim *A = &s->prims[0];
    *o = (pm__node_row){.id = ids[n], .index = (uint32_t)n, .kind = pm__kinds[V->kind]};
    memcpy(o->position, N->p->nodes + 3 * n, sizeof o->position);
    uint32_t *e = *edges;
    for (uint32_t k = 0; k < V->deg; k++) e[k] = N->inc[V->first + k].edge;
    o->edges = (pm_meta_u32s){e, V->deg};
    *edges += V->deg;
    int rc = 0;
    if (V->kind == PM__MERGED) rc |= !(o->junction = pm_meta_int(a, V->into));
    if (V->merged_node >= 0) rc |= !(o->centre = pm_meta_nums(a, V->c, 3));
    if (!V->scene) return rc ? -1 : 0;
    pm__mouth_row *m = *mouths;
    for (uint32_t k = 0; k < V->deg; k++) {
        uint32_t l = V->voff + V->mouth_l[k], r = V->voff + V->mouth_r[k];
        m[k] = (pm__mouth_row){.edge = e[k], .distance = V->mouth_d[k], .left_index = l,
                               .right_index = r, .centre_index = V->split[k]};
        pm__vertex(m[k].left, A, l);
        pm__vertex(m[k].right, A, r);
    }
    *mouths += V->deg;
    int64_t range[2] = {V->voff, V->vcount};
    rc |= !(o->vertices = pm_meta_ints(a, range, 2));
    rc |= !(o->mouths = pm_meta_table(a, &pm__mouth_shape, m, V->deg));
    rc |= !(o->corners = pm__corners_table(a, pm__take(V->scene, "corners")));
    return rc ? -1 : 0;
}

static int pm__nodes_meta(pm__net *N, const pm_scene *s, const pm_meta_val *ids, pm_meta **out,
                          size_t *njunctions) {
    size_t nn = N->p->nnodes, ninc = 0;
    for (size_t n = 0; n < nn; n++) ninc += N->nodes[n].deg;
    pm__node_row *rows = pm_arena_alloc(N->a, nn * sizeof *rows);
    uint32_t *edges = pm_arena_alloc(N->a, ninc * sizeof *edges);
    pm__mouth_row *mouths = pm_arena_alloc(N->a, ninc * sizeof *mouths);
    if (!rows || !edges || !mouths) return -1;
    int rc = 0;
    *njunctions = 0;
    for (size_t n = 0; n < nn; n++) {
        rc |= pm__node_row_fill(N, s, n, ids, &rows[n], &edges, &mouths);
        *njunctions += N->nodes[n].scene != NULL;
    }
    *out = pm_meta_table(N->a, &pm__node_shape, rows, nn);
    return rc || !*out ? -1 : 0;
}

/* "sidewalk_sides": one shared array per combination (a table's member
 * values are written, not linked: one node may serve many rows). */
static int pm__sides(pm_arena *a, pm_meta *sides[4]) {
    int rc = 0;
    for (int i = 0; i < 4; i++) {
        sides[i] = pm_meta_arr(a);
        if (i & 1) rc |= pm_meta_push(sides[i], pm_meta_str(a, "left"));
        if (i & 2) rc |= pm_meta_push(sides[i], pm_meta_str(a, "right"));
    }
    return rc | !sides[0];
}

static void pm__edge_row_fill(pm__net *N, uint32_t e, const pm_meta_val *ids, pm_meta *const sides[4],
                              pm__edge_row *o) {
    const pm_network_edge *E = &N->p->edges[e];
    const double *q = N->p->nodes + 3 * E->from;
    double len = 0.0;
    for (size_t i = 0; i <= E->npoints; i++) {
        const double *r = i < E->npoints ? E->points + 3 * i : N->p->nodes + 3 * E->to;
        len += hypot(r[0] - q[0], r[2] - q[2]);
        q = r;
    }
    *o = (pm__edge_row){.index = e, .from = ids[E->from], .to = ids[E->to], .width = E->width,
                        .plan_length = len, .sides = sides[0]};
    if (!N->edge_road[e]) {      /* inside a merged junction: no road of its own */
        o->road.kind = PM_META_NULL;
        return;
    }
    const pm__road *R = &N->roads.data[N->edge_road[e] - 1];
    size_t k = 0;
    while (k + 1 < R->nsteps && N->steps.data[R->first_step + k].edge != e) k++;
    const uint32_t *piece = R->piece + 4 * k;
    o->road = pm__int_val((int64_t)N->edge_road[e] - 1);
    o->length = R->piece_len[k];
    memcpy(o->vertices, piece, sizeof o->vertices);
    memcpy(o->triangles, piece + 2, sizeof o->triangles);
    /* Sides as seen travelling from `from` to `to`; the road may run the
     * other way. */
    bool rev = N->steps.data[R->first_step + k].end == 1;
    o->sides = sides[(R->nchain[rev ? 1 : 0] >= 2) | (R->nchain[rev ? 0 : 1] >= 2) << 1];
}

static int pm__edges_meta(pm__net *N, const pm_meta_val *ids, pm_meta **out) {
    pm_meta *sides[4];
    pm__edge_row *rows = pm_arena_alloc(N->a, N->p->nedges * sizeof *rows);
    if (!rows || pm__sides(N->a, sides)) return -1;
    for (uint32_t e = 0; e < N->p->nedges; e++) pm__edge_row_fill(N, e, ids, sides, &rows[e]);
    *out = pm_meta_table(N->a, &pm__edge_shape, rows, N->p->nedges);
    return *out ? 0 : -1;
}

static void pm__seam_row_fill(pm__net *N, size_t r, int end, pm__seam_row *o) {
    const pm__road *R = &N->roads.data[r];
    const uint32_t *sv = end ? R->seam1 : R->seam0;
    const pm__step *st = &N->steps.data[R->first_step + (end ? R->nsteps - 1 : 0)];
    /* The mouth's left/right as seen from the junction looking out. */
    *o = (pm__seam_row){.node = end ? R->end : R->start, .edge = st->edge, .road = (int64_t)r,
                        .road_end = end ? "end" : "start", .left_index = end ? sv[2] : sv[0],
                        .centre_index = sv[1], .right_index = end ? sv[0] : sv[2]};
}

static int pm__roads_meta(pm__net *N, pm_meta **roads, pm_meta **seams) {
    size_t nr = N->roads.len, nsteps = 0, ns = 0;
    for (size_t r = 0; r < nr; r++) nsteps += N->roads.data[r].nsteps;
    pm__road_row *rows = pm_arena_alloc(N->a, nr * sizeof *rows);
    pm__seam_row *srows = pm_arena_alloc(N->a, 2 * nr * sizeof *srows);
    uint32_t *edges = pm_arena_alloc(N->a, nsteps * sizeof *edges);
    bool *rev = pm_arena_alloc(N->a, nsteps * sizeof *rev);
    if (!rows || !srows || !edges || !rev) return -1;
    for (size_t r = 0; r < nr; r++) {
        const pm__road *R = &N->roads.data[r];
        for (size_t k = 0; k < R->nsteps; k++) {
            const pm__step *st = &N->steps.data[R->first_step + k];
            edges[k] = st->edge;
            rev[k] = st->end == 1;
        }
        pm_meta_val none = {.kind = PM_META_NULL};
        rows[r] = (pm__road_row){.edges = {edges, R->nsteps}, .reversed = {rev, R->nsteps},
                                 .closed = R->closed, .start = R->closed ? none : pm__int_val(R->start),
                                 .end = R->closed ? none : pm__int_val(R->end), .length = R->length,
                                 .samples = R->samples, .vertices = {R->voff, R->vcount},
                                 .triangles = {R->toff, R->tcount}};
        edges += R->nsteps;
        rev += R->nsteps;
        if (R->arm0 >= 0) pm__seam_row_fill(N, r, 0, &srows[ns++]);
        if (R->arm1 >= 0) pm__seam_row_fill(N, r, 1, &srows[ns++]);
    }
    *roads = pm_meta_table(N->a, &pm__road_shape, rows, nr);
    *seams = pm_meta_table(N->a, &pm__seam_shape, srows, ns);
    return *roads && *seams ? 0 : -1;
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
    bool joined = false;
    for (size_t m = 0; m < p->nnodes; m++)
        joined |= N->nodes[m].joined && (m == n || (N->nodes[m].kind == PM__MERGED && N->nodes[m].into == n));
    if (!joined && count == 2) {
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
            snprintf(msg + k, cap - (size_t)k, "%s",
                     joined ? ": their junctions, built apart, overlapped each other or their roads: "
                              "joined into one junction centred among them, with every arm of all; "
                              "the edges between them lie inside it"
                            : " are too close for separate junctions (roads from two of them meet "
                              "the third within their widths): merged into one junction centred "
                              "among them, with every arm of all; the edges between them lie inside it");
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
    pm_meta *nodes = NULL, *edges = NULL, *roads = NULL, *seams = NULL;
    pm_meta *warnings = pm_meta_arr(a);
    size_t nj = 0;
    const pm_meta_val *ids = pm__ids(N);
    int rc = !ids || !warnings;
    if (!rc) {
        rc |= pm__nodes_meta(N, s, ids, &nodes, &nj);
        rc |= pm__edges_meta(N, ids, &edges);
        rc |= pm__roads_meta(N, &roads, &seams);
    }
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

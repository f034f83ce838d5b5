#include <assert.h>
#include <string.h>

#include "dungeon/dungeon.h"
#include "scene/result.h"

/* The connection graph, after the reference article: rooms are points;
 * starting at a random room the main path repeatedly steps to the nearest
 * room not yet taken. At each step, with branch_probability, the room also
 * links its second-nearest room: a dead end (dead_end_probability) that
 * takes that room and keeps extending to the nearest free room with
 * dead_end_extend_probability, or else a branch that leaves the room free
 * so the main path (or a dead end) reaches it later, closing a cycle.
 *
 * The article's nearest-two search overwrote the first nearest without
 * moving it to second place; here both are tracked, so "second-nearest" is
 * the true second-nearest. Ties go to the lower room id. */

typedef PM_VEC(pm_dungeon_edge) pm__edges;
typedef PM_VEC(uint32_t) pm__ids;

typedef struct pm__graph {
    pm_arena *a;
    const pm_dungeon_room *rooms;
    uint32_t n;
    double *cx, *cy, *cz;    /* centres in half cells (cy: floors scaled) */
    bool *taken;
    pm__edges edges;
    pm_rng *rng;
} pm__graph;

static double pm__dist2(const pm__graph *g, uint32_t i, uint32_t j) {
    double dx = g->cx[i] - g->cx[j], dy = g->cy[i] - g->cy[j], dz = g->cz[i] - g->cz[j];
    return dx * dx + dy * dy + dz * dz;
}

/* The true nearest and second-nearest free rooms to `from` (-1: none). */
static void pm__nearest2(const pm__graph *g, uint32_t from, int64_t *first, int64_t *second) {
    double d1 = 0, d2 = 0;
    *first = *second = -1;
    for (uint32_t i = 0; i < g->n; i++) {
        if (g->taken[i] || i == from) continue;
        double d = pm__dist2(g, from, i);
        if (*first < 0 || d < d1) {
            *second = *first;
            d2 = d1;
            *first = i;
            d1 = d;
        } else if (*second < 0 || d < d2) {
            *second = i;
            d2 = d;
        }
    }
}

static int pm__edge(pm__graph *g, uint32_t a, uint32_t b, pm_dungeon_edge_kind k) {
    pm_dungeon_edge e = {a, b, k};
    return pm_vec_push(g->a, &g->edges, e);
}

/* Grows a dead end from room s (already linked); returns its last room. */
static int pm__dead_end(pm__graph *g, const pm_dungeon_params *p, uint32_t s, uint32_t *tip) {
    g->taken[s] = true;
    for (;;) {
        int64_t next, unused;
        pm__nearest2(g, s, &next, &unused);
        if (next < 0 || !pm_rng_chance(g->rng, p->dead_end_extend_probability)) break;
        if (pm__edge(g, s, (uint32_t)next, PM_EDGE_DEAD_END) < 0) return PM_ERR_NOMEM;
        s = (uint32_t)next;
        g->taken[s] = true;
    }
    *tip = s;
    return PM_OK;
}

/* Extra cycle edges: each room, with loop_probability, links its nearest
 * room that it has no edge to yet. */
static int pm__loops(pm__graph *g, const pm_dungeon_params *p) {
    if (p->loop_probability <= 0) return PM_OK;
    bool *adj = pm_arena_calloc(g->a, g->n, sizeof *adj);
    if (!adj) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < g->n; i++) {
        if (!pm_rng_chance(g->rng, p->loop_probability)) continue;
        memset(adj, 0, g->n * sizeof *adj);
        for (size_t e = 0; e < g->edges.len; e++) {
            if (g->edges.data[e].a == i) adj[g->edges.data[e].b] = true;
            if (g->edges.data[e].b == i) adj[g->edges.data[e].a] = true;
        }
        int64_t best = -1;
        double bd = 0;
        for (uint32_t j = 0; j < g->n; j++) {
            if (j == i || adj[j]) continue;
            double d = pm__dist2(g, i, j);
            if (best < 0 || d < bd) { best = j; bd = d; }
        }
        if (best >= 0 && pm__edge(g, i, (uint32_t)best, PM_EDGE_LOOP) < 0) return PM_ERR_NOMEM;
    }
    return PM_OK;
}

static int pm__graph_init(pm__graph *g, const pm_dungeon_params *p) {
    uint32_t n = g->n;
    g->cx = pm_arena_alloc(g->a, n * sizeof(double));
    g->cy = pm_arena_alloc(g->a, n * sizeof(double));
    g->cz = pm_arena_alloc(g->a, n * sizeof(double));
    g->taken = pm_arena_calloc(g->a, n, sizeof(bool));
    if (!g->cx || !g->cy || !g->cz || !g->taken) return PM_ERR_NOMEM;
    /* A floor counts as floor_height / cell_size cells of distance, so
     * rooms stacked closely are near each other as they look. */
    double fy = 2.0 * p->floor_height / p->cell_size;
    for (uint32_t i = 0; i < n; i++) {
        const pm_dungeon_room *r = &g->rooms[i];
        g->cx[i] = 2.0 * r->x + r->w;
        g->cz[i] = 2.0 * r->z + r->d;
        g->cy[i] = fy * r->floor;
    }
    return PM_OK;
}

static int pm__main_path(pm__graph *g, const pm_dungeon_params *p, pm__ids *main,
                         pm_dungeon_layout *out) {
    uint32_t cur = (uint32_t)pm_rng_below(g->rng, g->n);
    g->taken[cur] = true;
    if (pm_vec_push(g->a, main, cur) < 0) return PM_ERR_NOMEM;
    for (;;) {
        int64_t f, s;
        pm__nearest2(g, cur, &f, &s);
        if (f < 0) break;
        g->taken[f] = true;
        if (pm__edge(g, cur, (uint32_t)f, PM_EDGE_MAIN) < 0) return PM_ERR_NOMEM;
        if (s >= 0 && pm_rng_chance(g->rng, p->branch_probability)) {
            bool dead = pm_rng_chance(g->rng, p->dead_end_probability);
            if (pm__edge(g, cur, (uint32_t)s, dead ? PM_EDGE_DEAD_END : PM_EDGE_BRANCH) < 0)
                return PM_ERR_NOMEM;
            if (dead) {
                uint32_t tip;
                int r = pm__dead_end(g, p, (uint32_t)s, &tip);
                if (r < 0) return r;
                out->rooms[tip].end = true;
            }
        }
        cur = (uint32_t)f;
        if (pm_vec_push(g->a, main, cur) < 0) return PM_ERR_NOMEM;
    }
    return PM_OK;
}

int pm_dungeon_graph(pm_arena *a, const pm_dungeon_params *p, const pm_dungeon_room *rooms,
                     uint32_t n, pm_rng *rng, pm_dungeon_layout *out) {
    assert(n >= 1);
    pm__graph g = {.a = a, .rooms = rooms, .n = n, .rng = rng};
    int r = pm__graph_init(&g, p);
    if (r < 0) return r;
    out->rooms = pm_arena_calloc(a, n, sizeof *out->rooms);
    if (!out->rooms) return PM_ERR_NOMEM;
    out->nrooms = n;
    for (uint32_t i = 0; i < n; i++) out->rooms[i].r = rooms[i];
    pm__ids main = {0};
    if ((r = pm__main_path(&g, p, &main, out)) < 0) return r;
    if ((r = pm__loops(&g, p)) < 0) return r;
    for (size_t i = 0; i < main.len; i++) out->rooms[main.data[i]].on_main_path = true;
    uint32_t rest = main.data[0], boss = main.data[main.len - 1];
    out->rooms[boss].end = true;
    if (boss != rest) out->rooms[boss].role = PM_ROOM_BOSS;
    out->rooms[rest].role = PM_ROOM_REST;
    out->main_path = main.data;
    out->nmain = (uint32_t)main.len;
    out->edges = g.edges.data;
    out->nedges = (uint32_t)g.edges.len;
    return PM_OK;
}

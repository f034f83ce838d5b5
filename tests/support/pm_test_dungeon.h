#ifndef PM_TEST_DUNGEON_H
#define PM_TEST_DUNGEON_H
/* Invariant checks of a dungeon layout (issue 5), shared by
 * tests/core/test_dungeon.c and bench/bench_dungeon.c. Written against the
 * layout's public fields only, independently of the generator's code:
 *   - rooms: size >= 3, no two on one floor share a cell;
 *   - graph: main path from the rest room to the boss room, main edges are
 *     exactly its consecutive pairs, main + dead-end edges form a spanning
 *     tree, dead ends hang off the main path, branch edges start on it,
 *     roles / on_main_path / end flags agree with the edges;
 *   - corridors: every cell outside every room's footprint (interior and
 *     wall ring) on its floor, steps between neighbouring cells, vertical
 *     steps only inside a listed shaft, doors on a non-corner wall cell (or,
 *     for a shaft through a floor, an interior cell) of the corridor's own
 *     rooms and next to its ends; each edge's corridors chain from one of
 *     its rooms to the other;
 *   - reachability: a flood fill over interiors, doors and corridor cells,
 *     climbing only in shafts, reaches every room from the rest room.
 * Each check returns true, or false with a message in err. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dungeon/dungeon.h"
#include "scene/rng.h"

typedef struct pm_tdg {
    int32_t x0, z0, W, D, F;
    uint8_t *walk;        /* 1 interior, 2 door, 3 corridor */
    int32_t *room;        /* footprint owner or -1 */
} pm_tdg;

static inline size_t pm_tdg_at(const pm_tdg *g, int32_t f, int32_t x, int32_t z) {
    return ((size_t)f * (size_t)g->D + (size_t)(z - g->z0)) * (size_t)g->W + (size_t)(x - g->x0);
}
static inline bool pm_tdg_in(const pm_tdg *g, int32_t f, int32_t x, int32_t z) {
    return f >= 0 && f < g->F && x >= g->x0 && z >= g->z0 && x < g->x0 + g->W && z < g->z0 + g->D;
}

#define PM_TDG_FAIL(...) do { snprintf(err, cap, __VA_ARGS__); return false; } while (0)

static inline bool pm_tdg_rooms(const pm_dungeon_layout *l, char *err, size_t cap) {
    for (uint32_t i = 0; i < l->nrooms; i++) {
        const pm_dungeon_room *r = &l->rooms[i].r;
        if (r->w < 3 || r->d < 3 || r->floor < 0) PM_TDG_FAIL("room %u has size %dx%d floor %d", i, r->w, r->d, r->floor);
        for (uint32_t j = 0; j < i; j++)
            if (pm_dungeon_rooms_overlap(r, &l->rooms[j].r)) PM_TDG_FAIL("rooms %u and %u overlap", j, i);
    }
    return true;
}

static inline uint32_t pm_tdg_find(uint32_t *par, uint32_t i) {
    while (par[i] != i) i = par[i] = par[par[i]];
    return i;
}

static inline bool pm_tdg_graph(const pm_dungeon_layout *l, char *err, size_t cap) {
    uint32_t n = l->nrooms;
    if (l->nmain < 1 || (n >= 2 && l->nmain < 2)) PM_TDG_FAIL("main path has %u rooms", l->nmain);
    uint32_t rest = l->main_path[0], boss = l->main_path[l->nmain - 1];
    bool *onmain = calloc(n, 1), *dead = calloc(n, 1), *hasout = calloc(n, 1);
    uint32_t *par = malloc(n * sizeof *par);
    bool ok = false;
    for (uint32_t i = 0; i < n; i++) par[i] = i;
    for (uint32_t i = 0; i < l->nmain; i++) {
        if (l->main_path[i] >= n || onmain[l->main_path[i]]) { snprintf(err, cap, "main path repeats or leaves the rooms"); goto out; }
        onmain[l->main_path[i]] = true;
    }
    for (uint32_t i = 0; i < n; i++) {
        const pm_dungeon_room_info *ri = &l->rooms[i];
        pm_dungeon_role want = i == rest ? PM_ROOM_REST : (i == boss ? PM_ROOM_BOSS : PM_ROOM_NORMAL);
        if (ri->role != want) { snprintf(err, cap, "room %u role %d, want %d", i, ri->role, want); goto out; }
        if (ri->on_main_path != onmain[i]) { snprintf(err, cap, "room %u on_main_path wrong", i); goto out; }
    }
    uint32_t nmain_edges = 0, ntree = 0;
    for (uint32_t e = 0; e < l->nedges; e++) {
        const pm_dungeon_edge *d = &l->edges[e];
        if (d->a >= n || d->b >= n || d->a == d->b) { snprintf(err, cap, "edge %u is bad", e); goto out; }
        for (uint32_t f = 0; f < e; f++)
            if ((l->edges[f].a == d->a && l->edges[f].b == d->b) || (l->edges[f].a == d->b && l->edges[f].b == d->a)) {
                snprintf(err, cap, "edges %u and %u join the same rooms", f, e); goto out;
            }
        if (d->kind == PM_EDGE_MAIN) {
            if (nmain_edges + 1 >= l->nmain || l->main_path[nmain_edges] != d->a || l->main_path[nmain_edges + 1] != d->b) {
                snprintf(err, cap, "main edge %u (%u-%u) is not the next main-path step", e, d->a, d->b); goto out;
            }
            nmain_edges++;
        } else if (d->kind == PM_EDGE_DEAD_END) {
            if (onmain[d->b] || dead[d->b] || !(onmain[d->a] || dead[d->a])) {
                snprintf(err, cap, "dead-end edge %u (%u-%u) does not hang off the tree", e, d->a, d->b); goto out;
            }
            dead[d->b] = true;
            hasout[d->a] = true;
        } else if (d->kind == PM_EDGE_BRANCH) {
            if (!onmain[d->a]) { snprintf(err, cap, "branch edge %u starts off the main path", e); goto out; }
        }
        if (d->kind == PM_EDGE_MAIN || d->kind == PM_EDGE_DEAD_END) {
            uint32_t ra = pm_tdg_find(par, d->a), rb = pm_tdg_find(par, d->b);
            if (ra == rb) { snprintf(err, cap, "main/dead-end edge %u closes a cycle", e); goto out; }
            par[ra] = rb;
            ntree++;
        }
    }
    if (nmain_edges + 1 != l->nmain || ntree + 1 != n) {
        snprintf(err, cap, "tree has %u edges for %u rooms (%u main edges, path %u)", ntree, n, nmain_edges, l->nmain); goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!onmain[i] && !dead[i]) { snprintf(err, cap, "room %u is neither on the main path nor in a dead end", i); goto out; }
        bool want_end = i == boss || (dead[i] && !hasout[i]);
        if (l->rooms[i].end != want_end) { snprintf(err, cap, "room %u end=%d, want %d", i, l->rooms[i].end, want_end); goto out; }
    }
    ok = true;
out:
    free(onmain); free(dead); free(hasout); free(par);
    return ok;
}

static inline bool pm_tdg_is_door(const pm_dungeon_room *m, pm_dungeon_cell c, bool through) {
    if (c.floor != m->floor) return false;
    bool ix = c.x > m->x && c.x < m->x + m->w - 1, iz = c.z > m->z && c.z < m->z + m->d - 1;
    if (through) return ix && iz;
    return (iz && (c.x == m->x || c.x == m->x + m->w - 1)) || (ix && (c.z == m->z || c.z == m->z + m->d - 1));
}

static inline int pm_tdg_step(pm_dungeon_cell a, pm_dungeon_cell b) {
    int d = abs(a.x - b.x) + abs(a.z - b.z) + abs(a.floor - b.floor);
    if (d != 1) return 0;
    return a.floor != b.floor ? 2 : 1;
}

static inline bool pm_tdg_in_shaft(const pm_dungeon_layout *l, pm_dungeon_cell a, pm_dungeon_cell b) {
    int32_t lo = a.floor < b.floor ? a.floor : b.floor, hi = a.floor < b.floor ? b.floor : a.floor;
    for (uint32_t s = 0; s < l->nshafts; s++)
        if (l->shafts[s].x == a.x && l->shafts[s].z == a.z && l->shafts[s].floor_lo <= lo && l->shafts[s].floor_hi >= hi)
            return true;
    return false;
}

static inline bool pm_tdg_corridor(const pm_dungeon_layout *l, const pm_tdg *g, uint32_t ci, char *err, size_t cap) {
    const pm_dungeon_corridor *c = &l->corridors[ci];
    if (c->a >= l->nrooms || c->b >= l->nrooms || c->a == c->b) PM_TDG_FAIL("corridor %u joins bad rooms", ci);
    const pm_dungeon_room *A = &l->rooms[c->a].r, *B = &l->rooms[c->b].r;
    for (uint32_t k = 0; k < c->ncells; k++) {
        pm_dungeon_cell x = c->cells[k];
        if (!pm_tdg_in(g, x.floor, x.x, x.z)) PM_TDG_FAIL("corridor %u cell %u off the grid", ci, k);
        int32_t o = g->room[pm_tdg_at(g, x.floor, x.x, x.z)];
        if (o >= 0) PM_TDG_FAIL("corridor %u (%u-%u) cell [%d,%d,%d] lies in room %d", ci, c->a, c->b, x.x, x.floor, x.z, o);
    }
    /* The walk door0, cells..., door1 steps cell by cell. */
    uint32_t len = c->ncells + 2;
    for (uint32_t k = 0; k + 1 < len; k++) {
        pm_dungeon_cell u = k == 0 ? c->doors[0] : c->cells[k - 1];
        pm_dungeon_cell v = k + 1 == len - 1 ? c->doors[1] : c->cells[k];
        int s = pm_tdg_step(u, v);
        if (s == 0) PM_TDG_FAIL("corridor %u jumps at step %u ([%d,%d,%d] -> [%d,%d,%d])", ci, k, u.x, u.floor, u.z, v.x, v.floor, v.z);
        if (s == 2 && !pm_tdg_in_shaft(l, u, v)) PM_TDG_FAIL("corridor %u climbs outside a shaft at step %u", ci, k);
    }
    /* A door in the floor (a shaft through the room) leads up or down. */
    pm_dungeon_cell n0 = c->ncells ? c->cells[0] : c->doors[1];
    pm_dungeon_cell n1 = c->ncells ? c->cells[c->ncells - 1] : c->doors[0];
    bool t0 = n0.floor != c->doors[0].floor, t1 = n1.floor != c->doors[1].floor;
    if (!pm_tdg_is_door(A, c->doors[0], t0)) PM_TDG_FAIL("corridor %u: door [%d,%d,%d] is no door of room %u", ci, c->doors[0].x, c->doors[0].floor, c->doors[0].z, c->a);
    if (!pm_tdg_is_door(B, c->doors[1], t1)) PM_TDG_FAIL("corridor %u: door [%d,%d,%d] is no door of room %u", ci, c->doors[1].x, c->doors[1].floor, c->doors[1].z, c->b);
    return true;
}

/* Each edge's corridors, in order, chain one of its rooms to the other. */
static inline bool pm_tdg_chains(const pm_dungeon_layout *l, char *err, size_t cap) {
    uint32_t ci = 0;
    for (uint32_t e = 0; e < l->nedges; e++) {
        if (ci >= l->ncorridors || l->corridors[ci].edge != e) PM_TDG_FAIL("edge %u has no corridor", e);
        uint32_t a = l->edges[e].a, b = l->edges[e].b, at = l->corridors[ci].a;
        if (at != a && at != b) PM_TDG_FAIL("edge %u: first corridor starts at room %u", e, at);
        uint32_t goal = at == a ? b : a;
        for (; ci < l->ncorridors && l->corridors[ci].edge == e; ci++) {
            if (l->corridors[ci].a != at) PM_TDG_FAIL("edge %u: corridor %u does not continue the chain", e, ci);
            at = l->corridors[ci].b;
        }
        if (at != goal) PM_TDG_FAIL("edge %u: corridors end at room %u, not %u", e, at, goal);
    }
    if (ci != l->ncorridors) PM_TDG_FAIL("corridor %u belongs to no edge", ci);
    return true;
}

static inline bool pm_tdg_build(const pm_dungeon_layout *l, pm_tdg *g) {
    int32_t x0 = l->rooms[0].r.x, z0 = l->rooms[0].r.z, x1 = x0, z1 = z0, f1 = 0;
    for (uint32_t i = 0; i < l->nrooms; i++) {
        const pm_dungeon_room *r = &l->rooms[i].r;
        if (r->x < x0) x0 = r->x;
        if (r->z < z0) z0 = r->z;
        if (r->x + r->w > x1) x1 = r->x + r->w;
        if (r->z + r->d > z1) z1 = r->z + r->d;
        if (r->floor > f1) f1 = r->floor;
    }
    /* Corridors may stray: widen the grid to every cell listed. */
    for (uint32_t c = 0; c < l->ncorridors; c++)
        for (uint32_t k = 0; k < l->corridors[c].ncells; k++) {
            pm_dungeon_cell x = l->corridors[c].cells[k];
            if (x.x < x0) x0 = x.x;
            if (x.z < z0) z0 = x.z;
            if (x.x + 1 > x1) x1 = x.x + 1;
            if (x.z + 1 > z1) z1 = x.z + 1;
            if (x.floor > f1) f1 = x.floor;
        }
    g->x0 = x0 - 1; g->z0 = z0 - 1; g->W = x1 - x0 + 2; g->D = z1 - z0 + 2; g->F = f1 + 1;
    size_t cells = (size_t)g->W * (size_t)g->D * (size_t)g->F;
    g->walk = calloc(cells, 1);
    g->room = malloc(cells * sizeof *g->room);
    if (!g->walk || !g->room) return false;
    memset(g->room, 0xff, cells * sizeof *g->room);
    for (uint32_t i = 0; i < l->nrooms; i++) {
        const pm_dungeon_room *r = &l->rooms[i].r;
        for (int32_t z = r->z; z < r->z + r->d; z++)
            for (int32_t x = r->x; x < r->x + r->w; x++) {
                size_t at = pm_tdg_at(g, r->floor, x, z);
                g->room[at] = (int32_t)i;
                bool ring = x == r->x || z == r->z || x == r->x + r->w - 1 || z == r->z + r->d - 1;
                if (!ring) g->walk[at] = 1;
            }
    }
    return true;
}

/* Flood fill from the rest room's interior over walkable cells; climbing
 * only where a shaft stands. */
static inline bool pm_tdg_reach(const pm_dungeon_layout *l, pm_tdg *g, char *err, size_t cap) {
    for (uint32_t c = 0; c < l->ncorridors; c++) {
        const pm_dungeon_corridor *k = &l->corridors[c];
        for (uint32_t i = 0; i < k->ncells; i++) g->walk[pm_tdg_at(g, k->cells[i].floor, k->cells[i].x, k->cells[i].z)] = 3;
        for (int d = 0; d < 2; d++) {
            size_t at = pm_tdg_at(g, k->doors[d].floor, k->doors[d].x, k->doors[d].z);
            if (!g->walk[at]) g->walk[at] = 2;
        }
    }
    size_t cells = (size_t)g->W * (size_t)g->D * (size_t)g->F;
    uint8_t *seen = calloc(cells, 1);
    size_t *stack = malloc(cells * sizeof *stack), top = 0;
    const pm_dungeon_room *rest = &l->rooms[l->main_path[0]].r;
    size_t s0 = pm_tdg_at(g, rest->floor, rest->x + 1, rest->z + 1);
    seen[s0] = 1;
    stack[top++] = s0;
    while (top) {
        size_t at = stack[--top];
        int32_t x = (int32_t)(at % (size_t)g->W) + g->x0;
        int32_t z = (int32_t)((at / (size_t)g->W) % (size_t)g->D) + g->z0;
        int32_t f = (int32_t)(at / ((size_t)g->W * (size_t)g->D));
        static const int dx[6] = {1, -1, 0, 0, 0, 0}, dz[6] = {0, 0, 1, -1, 0, 0}, df[6] = {0, 0, 0, 0, 1, -1};
        for (int k = 0; k < 6; k++) {
            pm_dungeon_cell u = {x, f, z}, v = {x + dx[k], f + df[k], z + dz[k]};
            if (!pm_tdg_in(g, v.floor, v.x, v.z)) continue;
            size_t nb = pm_tdg_at(g, v.floor, v.x, v.z);
            if (seen[nb] || !g->walk[nb]) continue;
            if (df[k] && !pm_tdg_in_shaft(l, u, v)) continue;
            seen[nb] = 1;
            stack[top++] = nb;
        }
    }
    bool ok = true;
    for (uint32_t i = 0; ok && i < l->nrooms; i++) {
        const pm_dungeon_room *r = &l->rooms[i].r;
        if (!seen[pm_tdg_at(g, r->floor, r->x + 1, r->z + 1)]) {
            snprintf(err, cap, "room %u is not reachable from the rest room %u", i, l->main_path[0]);
            ok = false;
        }
    }
    free(seen);
    free(stack);
    return ok;
}

/* Every invariant of one layout. */
static inline bool pm_test_dungeon_check(const pm_dungeon_layout *l, char *err, size_t cap) {
    if (!pm_tdg_rooms(l, err, cap) || !pm_tdg_graph(l, err, cap) || !pm_tdg_chains(l, err, cap)) return false;
    pm_tdg g = {0};
    bool ok = pm_tdg_build(l, &g);
    if (!ok) snprintf(err, cap, "out of memory");
    for (uint32_t c = 0; ok && c < l->ncorridors; c++) ok = pm_tdg_corridor(l, &g, c, err, cap);
    if (ok) ok = pm_tdg_reach(l, &g, err, cap);
    free(g.walk);
    free(g.room);
    return ok;
}

/* Graph-shape tallies to compare with the probabilities: replays the
 * edges in creation order, counting the chances the generator had. */
typedef struct pm_test_dungeon_stats {
    uint64_t branch_chances, branches, dead_ends;   /* branches = branch + dead-end starts */
    uint64_t extend_chances, extends;
} pm_test_dungeon_stats;

static inline void pm_test_dungeon_tally(const pm_dungeon_layout *l, pm_test_dungeon_stats *st) {
    uint32_t n = l->nrooms, taken = 1;
    bool *onmain = calloc(n, 1);
    for (uint32_t i = 0; i < l->nmain; i++) onmain[l->main_path[i]] = true;
    for (uint32_t e = 0; e < l->nedges; e++) {
        const pm_dungeon_edge *d = &l->edges[e];
        if (d->kind == PM_EDGE_MAIN) {
            if (n - taken >= 2) st->branch_chances++;   /* nearest and second-nearest both free */
            taken++;
        } else if (d->kind == PM_EDGE_BRANCH) {
            st->branches++;
        } else if (d->kind == PM_EDGE_DEAD_END) {
            if (onmain[d->a]) { st->branches++; st->dead_ends++; }
            else st->extends++;
            taken++;
            if (n - taken >= 1) st->extend_chances++;   /* a free room to extend to */
        }
    }
    free(onmain);
}
/* The upper ends of the mixed-parameter ranges and the stream they are
 * drawn from: the test and the bench draw different sets. */
typedef struct pm_tdg_mix {
    uint64_t stream;
    int64_t max_count, max_extent, max_floors, max_extra_size, max_spacing;
} pm_tdg_mix;

/* Parameters number k of a mix, drawn from a test-side stream: counts
 * 2..max_count, extents 24..max_extent, 1..max_floors floors, min sizes
 * 3..7 plus 0..max_extra_size, spacing 1..max_spacing, every probability. */
static inline void pm_tdg_mixed_params(const pm_tdg_mix *m, uint64_t k, pm_dungeon_params *p) {
    pm_rng mix;
    pm_rng_seed(&mix, m->stream + k);
    pm_dungeon_params_default(p);
    p->seed = pm_rng_u64(&mix);
    p->gen.count = (uint32_t)pm_rng_int(&mix, 2, m->max_count);
    p->gen.extent_w = (int32_t)pm_rng_int(&mix, 24, m->max_extent);
    p->gen.extent_d = (int32_t)pm_rng_int(&mix, 24, m->max_extent);
    p->gen.floors = (int32_t)pm_rng_int(&mix, 1, m->max_floors);
    p->gen.min_size = (int32_t)pm_rng_int(&mix, 3, 7);
    p->gen.max_size = p->gen.min_size + (int32_t)pm_rng_int(&mix, 0, m->max_extra_size);
    p->gen.spacing = (int32_t)pm_rng_int(&mix, 1, m->max_spacing);
    p->branch_probability = pm_rng_unit(&mix);
    p->dead_end_probability = pm_rng_unit(&mix);
    p->dead_end_extend_probability = pm_rng_unit(&mix);
    p->loop_probability = pm_rng_chance(&mix, 0.3) ? pm_rng_unit(&mix) * 0.5 : 0;
    p->obstacles = pm_rng_chance(&mix, 0.5) ? PM_DUNGEON_BREAK : PM_DUNGEON_DETOUR;
    p->floor_height = pm_rng_range(&mix, 3.0, 8.0);
}
#endif

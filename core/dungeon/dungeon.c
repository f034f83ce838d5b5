#include <assert.h>

#include "dungeon/dungeon.h"
#include "scene/result.h"

/* The dungeon pipeline: placement -> graph -> corridors -> mesh + metadata.
 * Each stage draws from its own PRNG stream forked from the seed, so a
 * change in one stage's draws never shifts another's. */

enum { PM__STREAM_PLACE = 1, PM__STREAM_GRAPH = 2, PM__STREAM_ROUTE = 3 };

void pm_dungeon_params_default(pm_dungeon_params *p) {
    *p = (pm_dungeon_params){
        .seed = 0,
        .rooms = NULL,
        .nrooms = 0,
        .gen = {.count = 12, .extent_w = 64, .extent_d = 64, .floors = 1,
                .min_size = 5, .max_size = 11, .spacing = 2},
        .branch_probability = 0.2,
        .dead_end_probability = 0.5,
        .dead_end_extend_probability = 0.6,
        .loop_probability = 0.0,
        .obstacles = PM_DUNGEON_DETOUR,
        .cell_size = 1.0,
        .wall_height = 3.0,
        .floor_height = 4.0,
    };
}

const char *pm_dungeon_role_name(pm_dungeon_role r) {
    switch (r) {
    case PM_ROOM_REST: return "rest";
    case PM_ROOM_BOSS: return "boss";
    default: return "normal";
    }
}

const char *pm_dungeon_edge_kind_name(pm_dungeon_edge_kind k) {
    switch (k) {
    case PM_EDGE_BRANCH: return "branch";
    case PM_EDGE_DEAD_END: return "dead_end";
    case PM_EDGE_LOOP: return "loop";
    default: return "main";
    }
}

int pm_dungeon_layout_build(pm_arena *a, const pm_dungeon_params *p,
                            const volatile int *cancel, pm_dungeon_layout *out,
                            pm_dungeon_failure *fail) {
    *out = (pm_dungeon_layout){0};
    *fail = (pm_dungeon_failure){0};
    const pm_dungeon_room *rooms = p->rooms;
    uint32_t n = p->nrooms;
    if (!rooms) {
        pm_dungeon_room *placed;
        int r = pm_dungeon_place(a, p, &placed, fail);
        if (r < 0) return r;
        rooms = placed;
        n = p->gen.count;
    }
    assert(n >= 1);
    if (cancel && *cancel) return PM_ERR_CANCELLED;
    pm_rng root, graph, route;
    pm_rng_seed(&root, p->seed);
    pm_rng_fork(&graph, &root, PM__STREAM_GRAPH);
    pm_rng_fork(&route, &root, PM__STREAM_ROUTE);
    int r = pm_dungeon_graph(a, p, rooms, n, &graph, out);
    if (r < 0) return r;
    return pm_dungeon_route(a, p, &route, cancel, out, fail);
}

static pm_meta *pm__cell_meta(pm_arena *a, pm_dungeon_cell c) {
    int64_t v[3] = {c.x, c.floor, c.z};
    return pm_meta_ints(a, v, 3);
}

static int pm__meta_rooms(pm_arena *a, pm_meta *root, const pm_dungeon_layout *l) {
    pm_meta *arr = pm_meta_arr(a);
    int bad = 0;
    for (uint32_t i = 0; arr && i < l->nrooms; i++) {
        const pm_dungeon_room_info *ri = &l->rooms[i];
        pm_meta *o = pm_meta_obj(a);
        bad |= pm_meta_set(a, o, "id", pm_meta_int(a, i));
        bad |= pm_meta_set(a, o, "x", pm_meta_int(a, ri->r.x));
        bad |= pm_meta_set(a, o, "z", pm_meta_int(a, ri->r.z));
        bad |= pm_meta_set(a, o, "w", pm_meta_int(a, ri->r.w));
        bad |= pm_meta_set(a, o, "d", pm_meta_int(a, ri->r.d));
        bad |= pm_meta_set(a, o, "floor", pm_meta_int(a, ri->r.floor));
        bad |= pm_meta_set(a, o, "role", pm_meta_str(a, pm_dungeon_role_name(ri->role)));
        bad |= pm_meta_set(a, o, "on_main_path", pm_meta_bool(a, ri->on_main_path));
        bad |= pm_meta_set(a, o, "end", pm_meta_bool(a, ri->end));
        bad |= pm_meta_push(arr, o);
    }
    return bad || pm_meta_set(a, root, "rooms", arr) < 0 ? PM_ERR_NOMEM : PM_OK;
}

static int pm__meta_edges(pm_arena *a, pm_meta *root, const pm_dungeon_layout *l) {
    pm_meta *arr = pm_meta_arr(a);
    int bad = 0;
    for (uint32_t i = 0; arr && i < l->nedges; i++) {
        pm_meta *o = pm_meta_obj(a);
        bad |= pm_meta_set(a, o, "a", pm_meta_int(a, l->edges[i].a));
        bad |= pm_meta_set(a, o, "b", pm_meta_int(a, l->edges[i].b));
        bad |= pm_meta_set(a, o, "kind", pm_meta_str(a, pm_dungeon_edge_kind_name(l->edges[i].kind)));
        bad |= pm_meta_push(arr, o);
    }
    return bad || pm_meta_set(a, root, "edges", arr) < 0 ? PM_ERR_NOMEM : PM_OK;
}

static int pm__meta_corridors(pm_arena *a, pm_meta *root, const pm_dungeon_layout *l) {
    pm_meta *arr = pm_meta_arr(a);
    int bad = 0;
    for (uint32_t i = 0; arr && i < l->ncorridors; i++) {
        const pm_dungeon_corridor *c = &l->corridors[i];
        pm_meta *o = pm_meta_obj(a), *cells = pm_meta_arr(a), *doors = pm_meta_arr(a);
        for (uint32_t k = 0; cells && k < c->ncells; k++) bad |= pm_meta_push(cells, pm__cell_meta(a, c->cells[k]));
        for (int k = 0; doors && k < 2; k++) bad |= pm_meta_push(doors, pm__cell_meta(a, c->doors[k]));
        bad |= pm_meta_set(a, o, "a", pm_meta_int(a, c->a));
        bad |= pm_meta_set(a, o, "b", pm_meta_int(a, c->b));
        bad |= pm_meta_set(a, o, "cells", cells);
        bad |= pm_meta_set(a, o, "doors", doors);
        bad |= pm_meta_push(arr, o);
    }
    return bad || pm_meta_set(a, root, "corridors", arr) < 0 ? PM_ERR_NOMEM : PM_OK;
}

static int pm__meta_shafts(pm_arena *a, pm_meta *root, const pm_dungeon_layout *l) {
    pm_meta *arr = pm_meta_arr(a);
    int bad = 0;
    for (uint32_t i = 0; arr && i < l->nshafts; i++) {
        const pm_dungeon_shaft *s = &l->shafts[i];
        pm_meta *o = pm_meta_obj(a);
        int64_t floors[2] = {s->floor_lo, s->floor_hi};
        bad |= pm_meta_set(a, o, "a", pm_meta_int(a, s->a));
        bad |= pm_meta_set(a, o, "b", pm_meta_int(a, s->b));
        bad |= pm_meta_set(a, o, "x", pm_meta_int(a, s->x));
        bad |= pm_meta_set(a, o, "z", pm_meta_int(a, s->z));
        bad |= pm_meta_set(a, o, "floors", pm_meta_ints(a, floors, 2));
        bad |= pm_meta_push(arr, o);
    }
    return bad || pm_meta_set(a, root, "shafts", arr) < 0 ? PM_ERR_NOMEM : PM_OK;
}

int pm_dungeon_meta(pm_scene *s, const pm_dungeon_layout *l) {
    pm_arena *a = s->arena;
    int64_t *main = pm_arena_alloc(a, (l->nmain + 1) * sizeof *main);
    if (!main) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < l->nmain; i++) main[i] = l->main_path[i];
    int r = pm__meta_rooms(a, s->meta, l);
    if (r == 0) r = pm__meta_edges(a, s->meta, l);
    if (r == 0 && pm_meta_set(a, s->meta, "main_path", pm_meta_ints(a, main, l->nmain)) < 0) r = PM_ERR_NOMEM;
    if (r == 0) r = pm__meta_corridors(a, s->meta, l);
    if (r == 0) r = pm__meta_shafts(a, s->meta, l);
    return r;
}

int pm_dungeon_generate(pm_arena *a, const pm_dungeon_params *p, const volatile int *cancel,
                        pm_scene **scene, pm_dungeon_layout *layout, pm_dungeon_failure *fail) {
    pm_dungeon_layout local;
    pm_dungeon_layout *l = layout ? layout : &local;
    int r = pm_dungeon_layout_build(a, p, cancel, l, fail);
    if (r < 0) return r;
    if (cancel && *cancel) return PM_ERR_CANCELLED;
    pm_scene *s = pm_scene_create(a);
    if (!s) return PM_ERR_NOMEM;
    r = pm_dungeon_mesh(s, l, p);
    if (r == 0) r = pm_dungeon_meta(s, l);
    if (r < 0) return r;
    *scene = s;
    return PM_OK;
}

/* Dungeon core: invariants over many seeds with mixed parameters, graph
 * frequencies, the true second-nearest, obstacles, shafts, the mesh, and
 * golden hashes. The 10,000-seed run lives in bench/bench_dungeon.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "dungeon/dungeon.h"
#include "scene/result.h"
#include "../support/pm_test_dungeon.h"

#define SEEDS 10000

/* Counts 2..80, extents 24..160, 1..3 floors, sizes 3..15, spacing 1..3. */
static const pm_tdg_mix mix = {.stream = 0xD00D, .max_count = 80, .max_extent = 160, .max_floors = 3,
                               .max_extra_size = 8, .max_spacing = 3};

Test(dungeon, invariants_over_mixed_seeds) {
    int built = 0, crowded = 0;
    uint64_t detours = 0, breaks = 0, shafts = 0;
    for (uint64_t k = 0; k < SEEDS; k++) {
        pm_dungeon_params p;
        pm_tdg_mixed_params(&mix, k, &p);
        pm_arena *a = pm_arena_create(0);
        pm_dungeon_layout l;
        pm_dungeon_failure f;
        int r = pm_dungeon_layout_build(a, &p, NULL, &l, &f);
        if (r == PM_ERR_GEOMETRY) {
            /* Only a crowded extent may fail: with spacing >= 1 every pair
             * of rooms can be joined. */
            cr_assert(f.kind == PM_DUNGEON_FAIL_PLACEMENT || f.kind == PM_DUNGEON_FAIL_PACKING,
                      "case %lu failed with kind %d", (unsigned long)k, f.kind);
            crowded++;
            pm_arena_destroy(a);
            continue;
        }
        cr_assert_eq(r, 0, "case %lu: %d", (unsigned long)k, r);
        cr_assert_eq(l.nrooms, p.gen.count);
        char err[256];
        cr_assert(pm_test_dungeon_check(&l, err, sizeof err), "case %lu (obstacles %d): %s",
                  (unsigned long)k, p.obstacles, err);
        built++;
        detours += l.detours;
        breaks += l.breaks;
        shafts += l.nshafts;
        pm_arena_destroy(a);
    }
    /* The mix must exercise what it claims to. */
    cr_assert_gt(built, SEEDS * 8 / 10);
    cr_assert_gt(detours, 100);
    cr_assert_gt(breaks, 100);
    cr_assert_gt(shafts, 100);
    cr_assert_lt(crowded, SEEDS / 5);
}

/* Frequencies of branches, dead ends and extensions match the
 * probabilities within 5 standard deviations. */
static void check_rate(const char *what, uint64_t hits, uint64_t chances, double p) {
    cr_assert_gt(chances, 2000, "%s: only %lu chances", what, (unsigned long)chances);
    double rate = (double)hits / (double)chances, sd = sqrt(p * (1 - p) / (double)chances);
    cr_assert(fabs(rate - p) < 5 * sd + 1e-12, "%s: rate %.4f vs %.4f (sd %.4f, n %lu)", what, rate, p, sd,
              (unsigned long)chances);
}

/* Places p's rooms and links them into l's graph (its stream seeded with
 * p->seed); the test fails if either step does. The rooms live in a. */
static const pm_dungeon_room *place_and_link(pm_arena *a, const pm_dungeon_params *p, pm_dungeon_layout *l) {
    pm_dungeon_room *rooms;
    pm_dungeon_failure f;
    cr_assert_eq(pm_dungeon_place(a, p, &rooms, &f), 0);
    pm_rng rng;
    pm_rng_seed(&rng, p->seed);
    cr_assert_eq(pm_dungeon_graph(a, p, rooms, p->gen.count, &rng, l), 0);
    return rooms;
}

static void graph_rates(double bp, double dp, double ep) {
    pm_test_dungeon_stats st = {0};
    for (uint64_t k = 0; k < 400; k++) {
        pm_dungeon_params p;
        pm_dungeon_params_default(&p);
        p.seed = k * 7919 + 1;
        p.gen = (pm_dungeon_placement){60, 120, 120, 2, 5, 9, 1};
        p.branch_probability = bp;
        p.dead_end_probability = dp;
        p.dead_end_extend_probability = ep;
        pm_arena *a = pm_arena_create(0);
        pm_dungeon_layout l = {0};
        place_and_link(a, &p, &l);
        char err[256];
        cr_assert(pm_tdg_graph(&l, err, sizeof err), "%s", err);
        pm_test_dungeon_tally(&l, &st);
        pm_arena_destroy(a);
    }
    check_rate("branch", st.branches, st.branch_chances, bp);
    check_rate("dead end", st.dead_ends, st.branches, dp);
    check_rate("extend", st.extends, st.extend_chances, ep);
}

Test(dungeon, graph_frequencies_default) { graph_rates(0.2, 0.5, 0.6); }
Test(dungeon, graph_frequencies_other) { graph_rates(0.45, 0.3, 0.8); }

/* With every step branching and no dead ends, each main step must go to
 * the true nearest free room and branch to the true second-nearest (the
 * reference article forgot the old nearest when a nearer one came). */
Test(dungeon, true_first_and_second_nearest) {
    for (uint64_t k = 0; k < 200; k++) {
        pm_dungeon_params p;
        pm_dungeon_params_default(&p);
        p.seed = k + 77;
        p.gen = (pm_dungeon_placement){30, 90, 90, 1, 3, 9, 1};
        p.branch_probability = 1.0;
        p.dead_end_probability = 0.0;
        pm_arena *a = pm_arena_create(0);
        pm_dungeon_layout l = {0};
        const pm_dungeon_room *rooms = place_and_link(a, &p, &l);
        bool taken[30] = {0};
        taken[l.main_path[0]] = true;
        for (uint32_t e = 0; e < l.nedges; e++) {
            if (l.edges[e].kind != PM_EDGE_MAIN) continue;
            uint32_t from = l.edges[e].a;
            /* Brute force over centres in half cells (one floor). */
            double best[2] = {INFINITY, INFINITY};
            int64_t id[2] = {-1, -1};
            for (uint32_t i = 0; i < 30; i++) {
                if (taken[i]) continue;
                double dx = (2.0 * rooms[i].x + rooms[i].w) - (2.0 * rooms[from].x + rooms[from].w);
                double dz = (2.0 * rooms[i].z + rooms[i].d) - (2.0 * rooms[from].z + rooms[from].d);
                double d = dx * dx + dz * dz;
                if (d < best[0]) { best[1] = best[0]; id[1] = id[0]; best[0] = d; id[0] = i; }
                else if (d < best[1]) { best[1] = d; id[1] = i; }
            }
            cr_assert_eq(l.edges[e].b, (uint32_t)id[0], "main step from %u", from);
            if (id[1] >= 0) {
                cr_assert(e + 1 < l.nedges && l.edges[e + 1].kind == PM_EDGE_BRANCH);
                cr_assert_eq(l.edges[e + 1].b, (uint32_t)id[1], "branch from %u", from);
            }
            taken[l.edges[e].b] = true;
        }
        pm_arena_destroy(a);
    }
}

/* Rooms A and B face each other; C stands between them, far taller, so A
 * and B are each other's nearest and their corridor must get past C. */
static const pm_dungeon_room blocked[3] = {
    {0, 0, 5, 5, 0}, {14, 0, 5, 5, 0}, {7, -1, 5, 100, 0},
};

static void layout_of(const pm_dungeon_room *rooms, uint32_t n, pm_dungeon_obstacles ob, uint64_t seed,
                      pm_arena *a, pm_dungeon_layout *l) {
    pm_dungeon_params p;
    pm_dungeon_params_default(&p);
    p.rooms = rooms;
    p.nrooms = n;
    p.seed = seed;
    p.branch_probability = 0;
    p.obstacles = ob;
    pm_dungeon_failure f;
    cr_assert_eq(pm_dungeon_layout_build(a, &p, NULL, l, &f), 0, "fail kind %d", f.kind);
    char err[256];
    cr_assert(pm_test_dungeon_check(l, err, sizeof err), "%s", err);
}

static uint32_t edge_between(const pm_dungeon_layout *l, uint32_t a, uint32_t b) {
    for (uint32_t e = 0; e < l->nedges; e++)
        if ((l->edges[e].a == a && l->edges[e].b == b) || (l->edges[e].a == b && l->edges[e].b == a)) return e;
    return UINT32_MAX;
}

Test(dungeon, detour_goes_round_the_room_in_the_way) {
    for (uint64_t seed = 0; seed < 20; seed++) {
        pm_arena *a = pm_arena_create(0);
        pm_dungeon_layout l;
        layout_of(blocked, 3, PM_DUNGEON_DETOUR, seed, a, &l);
        uint32_t e = edge_between(&l, 0, 1);
        cr_assert_neq(e, UINT32_MAX, "A-B must be an edge");
        uint32_t pieces = 0;
        for (uint32_t c = 0; c < l.ncorridors; c++)
            if (l.corridors[c].edge == e) {
                pieces++;
                /* Round C's near end: every cell below C's footprint. */
                for (uint32_t k = 0; k < l.corridors[c].ncells; k++)
                    if (l.corridors[c].cells[k].x >= 7 && l.corridors[c].cells[k].x < 12)
                        cr_assert_lt(l.corridors[c].cells[k].z, -1);
            }
        cr_assert_eq(pieces, 1);
        cr_assert_gt(l.detours, 0);
        pm_arena_destroy(a);
    }
}

Test(dungeon, break_stops_at_the_room_in_the_way) {
    for (uint64_t seed = 0; seed < 20; seed++) {
        pm_arena *a = pm_arena_create(0);
        pm_dungeon_layout l;
        layout_of(blocked, 3, PM_DUNGEON_BREAK, seed, a, &l);
        uint32_t e = edge_between(&l, 0, 1);
        cr_assert_neq(e, UINT32_MAX);
        uint32_t pieces = 0, via_c = 0;
        for (uint32_t c = 0; c < l.ncorridors; c++)
            if (l.corridors[c].edge == e) {
                pieces++;
                via_c += l.corridors[c].b == 2;
            }
        cr_assert_eq(pieces, 2, "A-B breaks at C into two corridors");
        cr_assert_eq(via_c, 1);
        cr_assert_gt(l.breaks, 0);
        pm_arena_destroy(a);
    }
}

/* A 3x3 room whose four possible doors all open onto other rooms' corner
 * cells (a pinwheel) cannot get a corridor: reported, never looped on. */
Test(dungeon, walled_in_room_is_reported) {
    static const pm_dungeon_room r[5] = {
        {5, 5, 3, 3, 0},                    /* walled in */
        {3, 2, 4, 3, 0}, {8, 3, 3, 4, 0},   /* south, east */
        {6, 8, 4, 3, 0}, {2, 6, 3, 4, 0},   /* north, west */
    };
    pm_dungeon_params p;
    pm_dungeon_params_default(&p);
    p.rooms = r;
    p.nrooms = 5;
    pm_arena *a = pm_arena_create(0);
    pm_dungeon_layout l;
    pm_dungeon_failure f;
    cr_assert_eq(pm_dungeon_layout_build(a, &p, NULL, &l, &f), PM_ERR_GEOMETRY);
    cr_assert_eq(f.kind, PM_DUNGEON_FAIL_UNREACHABLE);
    cr_assert(f.a == 0 || f.b == 0, "the boxed room is named");
    pm_arena_destroy(a);
}

Test(dungeon, shafts_through_and_beside) {
    /* Stacked rooms with overlapping interiors: a shaft straight through
     * the floor between them, its cells on the floor in between. */
    static const pm_dungeon_room stacked[2] = {{0, 0, 8, 8, 0}, {3, 2, 8, 8, 2}};
    pm_arena *a = pm_arena_create(0);
    pm_dungeon_layout l;
    layout_of(stacked, 2, PM_DUNGEON_DETOUR, 5, a, &l);
    cr_assert_eq(l.nshafts, 1);
    cr_assert_eq(l.shafts[0].floor_lo, 0);
    cr_assert_eq(l.shafts[0].floor_hi, 2);
    cr_assert_eq(l.ncorridors, 1);
    cr_assert_eq(l.corridors[0].ncells, 1);
    cr_assert_eq(l.corridors[0].cells[0].floor, 1);
    pm_arena_destroy(a);
    /* Side by side on different floors: a corridor then a shaft. */
    static const pm_dungeon_room apart[2] = {{0, 0, 6, 6, 0}, {12, 3, 6, 6, 1}};
    for (uint64_t seed = 0; seed < 10; seed++) {
        a = pm_arena_create(0);
        layout_of(apart, 2, PM_DUNGEON_DETOUR, seed, a, &l);
        cr_assert_eq(l.nshafts, 1);
        cr_assert_gt(l.corridors[0].ncells, 2);
        pm_arena_destroy(a);
    }
}

Test(dungeon, impossible_packing_fails_fast) {
    pm_dungeon_params p;
    pm_dungeon_params_default(&p);
    p.gen = (pm_dungeon_placement){500, 40, 40, 1, 5, 5, 1};
    pm_arena *a = pm_arena_create(0);
    pm_dungeon_room *rooms;
    pm_dungeon_failure f;
    cr_assert_eq(pm_dungeon_place(a, &p, &rooms, &f), PM_ERR_GEOMETRY);
    cr_assert_eq(f.kind, PM_DUNGEON_FAIL_PACKING);
    cr_assert_eq(f.need, 500);
    cr_assert_eq(f.have, 36);   /* (40+1)/(5+1) = 6 per axis */
    /* Just under the bound: bounded search either places or fails. */
    p.gen.count = 36;
    int r = pm_dungeon_place(a, &p, &rooms, &f);
    cr_assert(r == 0 || (r == PM_ERR_GEOMETRY && f.kind == PM_DUNGEON_FAIL_PLACEMENT));
    pm_arena_destroy(a);
}

Test(dungeon, find_overlap_names_the_first_pair) {
    static const pm_dungeon_room r[4] = {
        {0, 0, 5, 5, 0}, {10, 0, 5, 5, 0}, {3, 3, 4, 4, 1}, {12, 4, 3, 3, 0},
    };
    pm_arena *a = pm_arena_create(0);
    uint32_t i, j;
    cr_assert(pm_dungeon_find_overlap(a, r, 4, &i, &j));
    cr_assert_eq(i, 1);
    cr_assert_eq(j, 3);
    cr_assert_not(pm_dungeon_find_overlap(a, r, 3, &i, &j), "room 2 is on another floor");
    pm_arena_destroy(a);
}

/* ---- mesh ---- */

static void check_mesh(const pm_scene *s) {
    for (uint32_t k = 0; k < s->nprims; k++) {
        const pm_prim *p = &s->prims[k];
        cr_assert_gt(p->icount, 0);
        for (uint32_t v = 0; v < p->vcount; v++) {
            const float *n = p->normals + 3 * v;
            cr_assert_float_eq(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0f, 1e-6);
        }
        for (uint32_t t = 0; t < p->icount; t += 3) {
            const float *a = p->positions + 3 * p->indices[t], *b = p->positions + 3 * p->indices[t + 1],
                        *c = p->positions + 3 * p->indices[t + 2];
            double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            double cr[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
            double area = sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
            cr_assert_gt(area, 0, "%s triangle %u has no area", p->name, t / 3);
            /* CCW seen from where the normal points. */
            const float *n = p->normals + 3 * p->indices[t];
            cr_assert_gt(cr[0] * n[0] + cr[1] * n[1] + cr[2] * n[2], 0, "%s triangle %u faces away", p->name, t / 3);
        }
    }
}

static const pm_prim *prim_named(const pm_scene *s, const char *name) {
    for (uint32_t k = 0; k < s->nprims; k++)
        if (strcmp(s->prims[k].name, name) == 0) return &s->prims[k];
    return NULL;
}

Test(dungeon, single_room_mesh_is_minimal) {
    /* One 5x5 room, no corridor: 1 floor quad, the wall ring's top in 4
     * rectangles, 4 outer and 4 inner wall sides: 13 quads. */
    static const pm_dungeon_room r[1] = {{0, 0, 5, 5, 0}};
    pm_dungeon_params p;
    pm_dungeon_params_default(&p);
    p.rooms = r;
    p.nrooms = 1;
    pm_arena *a = pm_arena_create(0);
    pm_scene *s;
    pm_dungeon_failure f;
    cr_assert_eq(pm_dungeon_generate(a, &p, NULL, &s, NULL, &f), 0);
    check_mesh(s);
    cr_assert_eq(s->nprims, 2, "floor and wall only");
    cr_assert_eq(prim_named(s, "floor")->icount / 3, 2);
    cr_assert_eq(prim_named(s, "wall")->icount / 3, 24);
    float lo[3] = {1e9f, 1e9f, 1e9f}, hi[3] = {-1e9f, -1e9f, -1e9f};
    for (uint32_t k = 0; k < s->nprims; k++)
        for (uint32_t v = 0; v < s->prims[k].vcount; v++)
            for (int d = 0; d < 3; d++) {
                float x = s->prims[k].positions[3 * v + d];
                lo[d] = x < lo[d] ? x : lo[d];
                hi[d] = x > hi[d] ? x : hi[d];
            }
    cr_assert_float_eq(lo[0], 0, 1e-6);
    cr_assert_float_eq(hi[0], 5, 1e-6);
    cr_assert_float_eq(hi[1], 3, 1e-6);
    pm_arena_destroy(a);
}

/* Triangles of a mesher without merging: two per floor cell, per wall
 * block top and per exposed block side. Blocks: the rooms' wall rings and
 * the empty cells around corridors (8-neighbourhood). */
static bool naive_solid(const pm_tdg *g, int32_t f, int32_t x, int32_t z) {
    if (!pm_tdg_in(g, f, x, z)) return false;
    size_t at = pm_tdg_at(g, f, x, z);
    if (g->walk[at]) return false;
    if (g->room[at] >= 0) return true;
    for (int32_t dz = -1; dz <= 1; dz++)
        for (int32_t dx = -1; dx <= 1; dx++)
            if (pm_tdg_in(g, f, x + dx, z + dz) && g->walk[pm_tdg_at(g, f, x + dx, z + dz)] == 3) return true;
    return false;
}

static uint64_t naive_triangles(const pm_dungeon_layout *l) {
    pm_tdg g = {0};
    char err[256];
    cr_assert(pm_tdg_build(l, &g));
    cr_assert(pm_tdg_reach(l, &g, err, sizeof err), "%s", err);
    static const int dx[4] = {1, -1, 0, 0}, dz[4] = {0, 0, 1, -1};
    uint64_t n = 0;
    for (int32_t f = 0; f < g.F; f++)
        for (int32_t z = g.z0; z < g.z0 + g.D; z++)
            for (int32_t x = g.x0; x < g.x0 + g.W; x++) {
                if (g.walk[pm_tdg_at(&g, f, x, z)]) n += 2;
                if (!naive_solid(&g, f, x, z)) continue;
                n += 2;
                for (int k = 0; k < 4; k++) n += naive_solid(&g, f, x + dx[k], z + dz[k]) ? 0 : 2;
            }
    free(g.walk);
    free(g.room);
    return n;
}

Test(dungeon, mesh_is_valid_and_small) {
    for (uint64_t k = 0; k < 60; k++) {
        pm_dungeon_params p;
        pm_tdg_mixed_params(&mix, k, &p);
        pm_arena *a = pm_arena_create(0);
        pm_scene *s;
        pm_dungeon_layout l;
        pm_dungeon_failure f;
        if (pm_dungeon_generate(a, &p, NULL, &s, &l, &f) != 0) { pm_arena_destroy(a); continue; }
        check_mesh(s);
        cr_assert_not_null(prim_named(s, "floor"));
        cr_assert_not_null(prim_named(s, "wall"));
        if (l.ncorridors) cr_assert_not_null(prim_named(s, "corridor"));
        if (l.nshafts) cr_assert_not_null(prim_named(s, "shaft"));
        /* Greedy meshing: at most half the triangles of one quad per cell
         * face (what a naive mesher emits). */
        uint64_t naive = naive_triangles(&l);
        cr_assert_leq(pm_scene_triangle_count(s) * 2, naive, "case %lu: %lu triangles, naive %lu", (unsigned long)k,
                      (unsigned long)pm_scene_triangle_count(s), (unsigned long)naive);
        pm_arena_destroy(a);
    }
}

/* ---- determinism ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t scene_hash(const pm_dungeon_params *p) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s;
    pm_dungeon_layout l;
    pm_dungeon_failure f;
    cr_assert_eq(pm_dungeon_generate(a, p, NULL, &s, &l, &f), 0);
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t k = 0; k < s->nprims; k++) {
        h = fnv(h, s->prims[k].name, strlen(s->prims[k].name));
        h = fnv(h, s->prims[k].positions, s->prims[k].vcount * 3 * sizeof(float));
        h = fnv(h, s->prims[k].normals, s->prims[k].vcount * 3 * sizeof(float));
        h = fnv(h, s->prims[k].indices, s->prims[k].icount * sizeof(uint32_t));
    }
    for (uint32_t i = 0; i < l.nrooms; i++) h = fnv(h, &l.rooms[i].r, sizeof l.rooms[i].r);
    for (uint32_t e = 0; e < l.nedges; e++) h = fnv(h, &l.edges[e], sizeof l.edges[e]);
    for (uint32_t c = 0; c < l.ncorridors; c++) {
        h = fnv(h, l.corridors[c].cells, l.corridors[c].ncells * sizeof(pm_dungeon_cell));
        h = fnv(h, l.corridors[c].doors, sizeof l.corridors[c].doors);
    }
    pm_arena_destroy(a);
    return h;
}

Test(dungeon, golden_hashes) {
    /* Changing these means the output changed: bump the generator version
     * in api/req_dungeon.c. */
    static const struct { uint64_t seed; uint32_t count; int32_t floors; pm_dungeon_obstacles ob; uint64_t hash; } g[] = {
        {1, 12, 1, PM_DUNGEON_DETOUR, 0x9c08099edf471a73ull},
        {42, 40, 1, PM_DUNGEON_BREAK, 0x1735cf752727a6d0ull},
        {7, 30, 3, PM_DUNGEON_DETOUR, 0x0bab773462c59d71ull},
        {123456789, 60, 2, PM_DUNGEON_BREAK, 0x88c0ca4775221901ull},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        pm_dungeon_params p;
        pm_dungeon_params_default(&p);
        p.seed = g[i].seed;
        p.gen.count = g[i].count;
        p.gen.extent_w = p.gen.extent_d = 96;
        p.gen.floors = g[i].floors;
        p.obstacles = g[i].ob;
        p.loop_probability = 0.1;
        uint64_t h = scene_hash(&p);
        cr_assert_eq(h, scene_hash(&p), "same seed, same bytes");
        cr_expect_eq(h, g[i].hash, "golden %zu: 0x%016llxull", i, (unsigned long long)h);
    }
}

Test(dungeon, different_seeds_differ) {
    pm_dungeon_params p;
    pm_dungeon_params_default(&p);
    uint64_t seen[64];
    for (uint64_t k = 0; k < 64; k++) {
        p.seed = k;
        seen[k] = scene_hash(&p);
        for (uint64_t j = 0; j < k; j++) cr_assert_neq(seen[j], seen[k], "seeds %lu and %lu", (unsigned long)j, (unsigned long)k);
    }
}

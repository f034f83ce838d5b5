/* The roads' copies (core/network/network.c): the stitch gives them back
 * once it has read them, and a round that cuts sidewalks back builds them
 * again from the end points each road kept (under no budget: it fitted). Built again
 * they must be the very roads first built: here network.c is compiled in
 * with PM__NETWORK_REBUILD on, so that the roads are built again before
 * every stitch (the first too), and each network must give the same
 * scene and problems as the library's build. Crowded networks
 * (pm_test_overlap_oracle.h: side by side, hairpins, close junctions,
 * sidewalks cut where they overlap) take several rounds; grids with
 * sidewalks, one, also under a vertex budget as tight as they fit in. */
#include <criterion/criterion.h>
#include <stdbool.h>

static bool rebuild;   /* the roads built again before every stitch */
#define PM__NETWORK_REBUILD rebuild
#include "../../core/network/network.c"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "pm_test_overlap_oracle.h"
#pragma GCC diagnostic pop

Test(network_rounds, crowded_networks_are_the_same_with_their_roads_built_again, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261203);
    int built = 0;
    for (int it = 0; it < 600; it++) {
        net n;
        crowded_net(&n, &r, it % 5, it % 3 == 0);
        if (n.nedges == 0 || net_crosses(&n)) continue;
        same_with_and_without(&n, it, &rebuild);
        built++;
    }
    cr_assert_geq(built, 400, "only %d networks got past the crossing check", built);
}

/* A grid of gx x gz nodes S apart with sidewalks on every edge. */
static void sidewalk_grid(net *n, int gx, int gz, double S) {
    net_init(n);
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) node(n, i * S, 0, -j * S);
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            uint32_t v = (uint32_t)(i * gz + j);
            if (i + 1 < gx) edge(n, v, v + (uint32_t)gz, 7);
            if (j + 1 < gz) edge(n, v, v + 1, 7);
        }
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = true;
        n->edges[e].sidewalk = (pm_junction_sidewalk){2.0, 0.15};
    }
    finish(n);
}

Test(network_rounds, grids_under_a_tight_budget_are_the_same_with_their_roads_built_again) {
    net n;
    sidewalk_grid(&n, 4, 3, 60);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_scene *s = NULL;
    pm_network_diag d;
    cr_assert_eq(pm_network_generate(a, &n.p, &s, &d), PM_OK);
    uint64_t nv = pm_scene_vertex_count(s);
    pm_arena_destroy(a);
    same_with_and_without(&n, 0, &rebuild);
    n.p.max_vertices = nv;
    same_with_and_without(&n, 1, &rebuild);
    n.p.max_vertices = nv - 1;   /* over the budget: refused both ways */
    same_with_and_without(&n, 2, &rebuild);
}

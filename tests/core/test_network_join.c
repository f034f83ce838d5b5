/* Junctions that overlap joined into one (docs/network.md, "Junctions
 * joined where they overlap"): small networks of the shapes the random
 * layouts (bench/layouts.sh) were refused for, built and checked clean:
 * no two ground triangles overlap in plan, no non-manifold edge, no face
 * down, the joined nodes one junction and the edges between them without
 * a road. And what joining cannot fix (two roads passing with no node
 * between them) stays refused, naming its pieces. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geom/predicates.h"
#include "network/network.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "pm_test_meta.h"
#include "pm_test_network.h"
#include "pm_test_clean.h"
#include "pm_test_overlap.h"

/* The junctions_merged warning of junction node n (the tree's plain copy). */
static const pm_meta *merged_warning(const pm_scene *s, int64_t n) {
    const pm_meta *w = pm_test_meta_get(s->meta, "warnings");
    for (const pm_meta *it = w->u.kids.first; it; it = it->next)
        if (strcmp(pm_test_meta_get(it, "code")->u.s, "junctions_merged") == 0 && pm_test_meta_get(it, "node")->u.i == n) return it;
    cr_assert_fail("no junctions_merged warning for node %lld", (long long)n);
    return NULL;
}

static bool same_ints(const pm_meta *arr, const int64_t *want, size_t n) {
    if (arr->u.kids.count != n) return false;
    for (size_t i = 0; i < n; i++)
        if (pm_test_meta_at(arr, i)->u.i != want[i]) return false;
    return true;
}

/* Three nodes 22 to 25 m apart in a triangle (bench layout 2046, seed 11),
 * 10.86 m roads, the two from node 0 bent 10 m out, and a fourth node that
 * node 0 and node 1 both reach. The close pairs merge in one pass; the
 * junction kept from the first pair was joined into the next one but
 * stayed marked to be built again, so it was built on its own as well,
 * over the merged junction: "the junction at node 1 overlaps the
 * junction at node 0" though node 1 was part of it. */
static void triangle_of_close_nodes(net *n) {
    net_init(n);
    n->p.corner_radius = 3;
    uint32_t a = node(n, 2.627, 0, 74.039), b = node(n, 25.085, 0, 76.285), c = node(n, 22.119, 0, 51.284);
    uint32_t d = node(n, 32.377, 0, 96.215);
    static const double bd[] = {26.604, 80.914, 28.384, 85.301}, ab[] = {12.611, 74.977, 14.769, 75.254},
                        ad[] = {9.999, 79.534, 22.885, 89.140};
    net_edge_pts(n, b, d, 10.86, bd, 2);
    net_edge_pts(n, a, b, 10.86, ab, 2);
    net_edge_pts(n, b, c, 10.86, NULL, 0);
    net_edge_pts(n, c, a, 10.86, NULL, 0);
    net_edge_pts(n, a, d, 10.86, ad, 2);
    finish(n);
}

Test(network_join, a_triangle_of_close_nodes_is_one_junction_built_once) {
    net n;
    triangle_of_close_nodes(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_scene *s = net_build_ok(&n, a);
    /* Nodes 0, 1 and 3 are one junction (the triangle's close pair and the
     * node both reach), its three edges without a road, node 2 its own. */
    const pm_meta *w = merged_warning(s, 0);
    static const int64_t nodes[] = {0, 1, 3}, edges[] = {0, 1, 4};
    cr_assert(same_ints(pm_test_meta_get(w, "nodes"), nodes, 3));
    cr_assert(same_ints(pm_test_meta_get(w, "edges"), edges, 3));
    cr_assert_eq(pm_test_meta_get(s->meta, "junctions")->u.i, 2);
    for (size_t i = 0; i < 3; i++) {
        const char *kind = pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "nodes"), (size_t)nodes[i]), "kind")->u.s;
        cr_assert_str_eq(kind, i == 0 ? "junction" : "merged");
        cr_assert_eq(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), (size_t)edges[i]), "road")->kind, PM_META_NULL);
    }
    cr_assert_neq(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), 2), "road")->kind, PM_META_NULL);
    pm_test_check_clean(s, "triangle of close nodes");
    pm_arena_destroy(a);
}

/* Six nodes 25 to 45 m apart (bench layout 1183, seed 11), 7 to 12 m roads
 * with 2.14 m sidewalks. Nodes 0 and 4 (31 m apart, arms 20 degrees
 * apart) merge as close junctions, and that junction reaches over edge
 * 5's road between nodes 1 and 5: refused before. The overlap names the
 * junction and the road, so the junction is joined with the junctions at
 * the road's two ends over the edges between them (1-4 and 0-5): one
 * junction of nodes 0, 1, 4 and 5, the edges among them inside it. */
static void overlapping_junctions(net *n) {
    net_init(n);
    n->p.corner_radius = 2.78;
    uint32_t v0 = node(n, 65.314, 0, 14.978), v1 = node(n, 22.408, 0, 46.818), v2 = node(n, 17.502, 0, 69.681);
    uint32_t v4 = node(n, 72.644, 0, 54.504), v6 = node(n, 53.660, 0, 44.056), v7 = node(n, 40.284, 0, 10.865);
    static const double e0[] = {18.415, 65.426, 21.557, 51.829}, e1[] = {56.018, 13.450},
                        e3[] = {31.616, 46.017, 42.295, 45.080}, e4[] = {44.315, 20.866, 47.856, 29.655},
                        e7[] = {33.912, 58.051};
    net_edge_pts(n, v2, v1, 10.10, e0, 2);
    net_edge_pts(n, v0, v7, 11.68, e1, 1);
    net_edge_pts(n, v6, v0, 11.68, NULL, 0);
    net_edge_pts(n, v1, v6, 7.38, e3, 2);
    net_edge_pts(n, v7, v6, 11.68, e4, 2);
    net_edge_pts(n, v1, v7, 8.85, NULL, 0);
    net_edge_pts(n, v0, v4, 11.68, NULL, 0);
    net_edge_pts(n, v6, v2, 11.68, e7, 1);
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = true;
        n->edges[e].sidewalk = (pm_junction_sidewalk){.width = 2.14, .curb_height = 0.15};
    }
    finish(n);
}

Test(network_join, junctions_that_overlap_are_joined_into_one) {
    net n;
    overlapping_junctions(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_scene *s = net_build_ok(&n, a);
    const pm_meta *w = merged_warning(s, 0);
    static const int64_t nodes[] = {0, 1, 4, 5}, edges[] = {1, 2, 3, 4, 5};
    cr_assert(same_ints(pm_test_meta_get(w, "nodes"), nodes, 4));
    cr_assert(same_ints(pm_test_meta_get(w, "edges"), edges, 5));
    cr_assert(strstr(pm_test_meta_get(w, "message")->u.s, "overlapped") != NULL, "%s", pm_test_meta_get(w, "message")->u.s);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), (size_t)edges[i]), "road")->kind, PM_META_NULL);
    /* The roads out of it are still there, with their sidewalks. */
    cr_assert_neq(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), 0), "road")->kind, PM_META_NULL);
    cr_assert_neq(pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), 6), "road")->kind, PM_META_NULL);
    cr_assert_not_null(pm_test_prim(s, "sidewalk"));
    pm_test_check_clean(s, "overlapping junctions");
    pm_arena_destroy(a);
}

/* The tries after a refused build each take an arena of their own, given
 * back when they fail: short of memory for a try, the network is refused
 * with the first build's problems (a 422 naming the pieces), not out of
 * memory. Over memory limits from a quarter to twice what the joined
 * build holds: out of memory only below some limit (the first build does
 * not fit), then refused naming the overlap (a try does not fit beside
 * the first build), then built. */
Test(network_join, a_try_out_of_memory_refuses_as_first_built) {
    net n;
    overlapping_junctions(&n);
    pm_arena *a = pm_arena_create(1 << 16);
    pm_scene *s = NULL;
    pm_network_diag d;
    cr_assert_eq(pm_network_generate(a, &n.p, &s, &d), PM_OK);
    size_t all = pm_arena_reserved(a);
    pm_arena_destroy(a);
    int stage = 0, refused = 0;   /* 0 out of memory, 1 refused, 2 built */
    for (size_t k = 16; k <= 128; k++) {
        size_t limit = all * k / 64;
        a = pm_arena_create(1 << 16);
        pm_arena_set_limit(a, limit);
        s = NULL;
        int rc = pm_network_generate(a, &n.p, &s, &d);
        int now = rc == PM_ERR_NOMEM ? 0 : rc == PM_ERR_GEOMETRY ? 1 : rc == PM_OK ? 2 : -1;
        cr_assert_geq(now, stage, "limit %zu: rc %d after stage %d", limit, rc, stage);
        if (now == 1) {
            refused++;
            cr_assert_gt(d.nproblems, 0);
            for (size_t i = 0; i < d.nproblems; i++)
                cr_assert_eq(d.problems[i].error, PM_NETWORK_OVERLAP, "%s", d.problems[i].message);
        }
        stage = now;
        pm_arena_destroy(a);
    }
    cr_assert_eq(stage, 2, "built with twice the memory it holds");
    cr_assert_gt(refused, 0, "no limit between the first build and a try");
}

/* The same request, the same bytes: the joins depend on the problems'
 * order only, never on memory (here two arenas of different block sizes). */
Test(network_join, joining_is_deterministic) {
    net n;
    overlapping_junctions(&n);
    net_assert_same_in_two_arenas(&n);
}

/* A road of two free ends passing 6 m from a T junction's node, over its
 * west arm: no edge joins them, so there is nothing to join and the
 * overlap stays a refusal naming the road. */
Test(network_join, a_road_past_a_junction_with_no_edge_between_stays_refused) {
    net n;
    net_init(&n);
    uint32_t c = node(&n, 0, 0, 0), w = node(&n, -60, 0, 0), e = node(&n, 60, 0, 0), so = node(&n, 0, 0, 50);
    uint32_t p0 = node(&n, -40, 0, -6), p1 = node(&n, -8, 0, -6);
    edge(&n, c, w, 7);
    edge(&n, c, e, 7);
    edge(&n, c, so, 7);
    edge(&n, p0, p1, 7);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_scene *s = NULL;
    pm_network_diag d;
    cr_assert_eq(pm_network_generate(a, &n.p, &s, &d), PM_ERR_GEOMETRY);
    cr_assert_gt(d.nproblems, 0);
    bool named = false;
    for (size_t i = 0; i < d.nproblems; i++) {
        cr_assert_eq(d.problems[i].error, PM_NETWORK_OVERLAP, "%s", d.problems[i].message);
        for (size_t k = 0; k < d.problems[i].nedges; k++) named |= d.problems[i].edges[k] == 3;
    }
    cr_assert(named, "the passing road (edge 3) is named");
    pm_arena_destroy(a);
}

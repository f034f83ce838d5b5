/* Junctions refused for their own shape joined to the junctions their
 * arms run to (docs/network.md, "Junctions joined where they have no
 * mesh"): small networks of the shapes the random layouts with forks
 * (bench/layouts.sh, PM_LAYOUTS_MIN_ANGLE=15) were refused for, built and
 * checked clean: no two ground triangles overlap in plan, no non-manifold
 * edge, no face down; the thin triangles of roads one junction, the
 * edges inside it without a road, the roads out of it still there. */
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

static const pm_meta *edge_meta(const pm_scene *s, size_t e) {
    return pm_test_meta_at(pm_test_meta_get(s->meta, "edges"), e);
}

static const char *node_kind(const pm_scene *s, size_t v) {
    return pm_test_meta_get(pm_test_meta_at(pm_test_meta_get(s->meta, "nodes"), v), "kind")->u.s;
}

/* A Y fork (node 2's roads to nodes 3 and 5 leave 16 degrees apart, 11.5
 * m wide) beside a thin triangle of roads (nodes 1, 4, 2: the roads from
 * 1 and 4 to 2 overlap most of the way); bench layout 1442 of the forks
 * family, seed 11, cut down to what it was refused for: a junction
 * whose corner lay beyond its arm's room with no point left to skip,
 * nothing to merge or cut ("the corner between arms 1 and 0 lies 16.975 m
 * along arm 1, beyond its 15.519 m"). Joined to the junctions its arms
 * run to, the triangle and the fork's crotch are one paved junction. */
static void fork_by_a_triangle(net *n) {
    net_init(n);
    n->p.corner_radius = 3.02;
    uint32_t v0 = node(n, 89.954, 0, 43.132), v1 = node(n, 6.761, 0, 80.795), v2 = node(n, 42.024, 0, 91.661);
    uint32_t v3 = node(n, 68.725, 0, 53.434), v4 = node(n, 27.024, 0, 73.275), v5 = node(n, 88.434, 0, 63.08);
    static const double e2[] = {85.602, 45.586, 84.246, 46.312, 80.302, 47.816},
                        e3[] = {38.635, 87.507, 32.61, 80.122, 29.93, 76.728},
                        e4[] = {31.105, 87.567, 25.065, 85.257}, e5[] = {49.4, 62.629, 63.72, 55.816},
                        e6[] = {52.837, 76.726, 55.294, 73.237}, e7[] = {53.23, 84.76, 44.32, 90.459};
    double w = 11.52;
    net_edge_pts(n, v4, v1, w, NULL, 0);
    net_edge_pts(n, v3, v5, w, NULL, 0);
    net_edge_pts(n, v0, v3, w, e2, 3);
    net_edge_pts(n, v2, v4, w, e3, 3);
    net_edge_pts(n, v2, v1, w, e4, 2);
    net_edge_pts(n, v4, v3, w, e5, 2);
    net_edge_pts(n, v2, v3, w, e6, 2);
    net_edge_pts(n, v5, v2, w, e7, 2);
    finish(n);
}

Test(network_forks, a_fork_beside_a_triangle_of_roads_is_one_junction) {
    net n;
    fork_by_a_triangle(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_scene *s = net_build_ok(&n, a);
    /* The triangle 1-4-2 is inside one junction (its edges 0, 3 and 4
     * without a road), and the fork's road to node 0 is still a road. */
    size_t junctions = 0, merged = 0;
    for (size_t v = 0; v < 6; v++) {
        junctions += strcmp(node_kind(s, v), "junction") == 0;
        merged += strcmp(node_kind(s, v), "merged") == 0;
    }
    cr_assert_geq(merged, 2, "%zu merged nodes", merged);
    static const size_t inside[] = {0, 3, 4};
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(pm_test_meta_get(edge_meta(s, inside[i]), "road")->kind, PM_META_NULL, "edge %zu", inside[i]);
    cr_assert_neq(pm_test_meta_get(edge_meta(s, 2), "road")->kind, PM_META_NULL);
    cr_assert_gt(junctions, 0);
    pm_test_check_clean(s, "fork beside a triangle");
    pm_arena_destroy(a);
}

/* Two Y forks at one node (node 1: roads to 2 and 5 16 degrees apart, to
 * 0 and 4 the same; 11.6 m roads, one 7.3 m) whose far nodes close thin
 * triangles with it (1-5-2, 1-0-4 over node 4's road to 0); bench layout
 * 587 of the forks family, seed 11, cut down. Refused: "the corner
 * between arms 0 and 1 lies 31.335 m along arm 0, beyond its 22.018 m".
 * Joined, the forks' crotches are paved out to where the roads part. */
static void two_forks(net *n) {
    net_init(n);
    uint32_t v0 = node(n, 122.312, 0, 78.438), v1 = node(n, 115.977, 0, 50.171), v2 = node(n, 135.479, 0, 62.406);
    uint32_t v3 = node(n, 73.175, 0, 38.241), v4 = node(n, 95.622, 0, 47.838), v5 = node(n, 119.361, 0, 7.566);
    uint32_t v6 = node(n, 93.733, 0, 16.979);
    static const double e1[] = {120.276, 52.898}, e2[] = {79.962, 41.143, 90.671, 45.722},
                        e3[] = {120.958, 70.573, 121.541, 74.997}, e4[] = {94.453, 28.734, 94.056, 22.259},
                        e5[] = {109.832, 41.001}, e6[] = {102.158, 55.807},
                        e7[] = {118.62, 16.9, 117.883, 26.17, 116.165, 39.61},
                        e8[] = {122.378, 20.765, 126.982, 33.495};
    double w = 11.57;
    net_edge_pts(n, v1, v4, 7.3, NULL, 0);
    net_edge_pts(n, v1, v2, w, e1, 1);
    net_edge_pts(n, v3, v4, w, e2, 2);
    net_edge_pts(n, v1, v0, w, e3, 2);
    net_edge_pts(n, v4, v6, w, e4, 2);
    net_edge_pts(n, v6, v1, w, e5, 1);
    net_edge_pts(n, v4, v0, w, e6, 1);
    net_edge_pts(n, v5, v1, w, e7, 3);
    net_edge_pts(n, v5, v2, w, e8, 2);
    finish(n);
}

Test(network_forks, two_forks_closing_thin_triangles_are_paved_as_one) {
    net n;
    two_forks(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_scene *s = net_build_ok(&n, a);
    /* Node 1's junction takes in node 4 (the short edge 0 between them
     * has no road); the road from node 3 into it is still a road. */
    cr_assert_eq(pm_test_meta_get(edge_meta(s, 0), "road")->kind, PM_META_NULL);
    cr_assert_neq(pm_test_meta_get(edge_meta(s, 2), "road")->kind, PM_META_NULL);
    pm_test_check_clean(s, "two forks");
    pm_arena_destroy(a);
}

/* A town block with a diagonal (bench layout 443 of seed 5, default
 * family, cut down): 6.5 m roads with 1.98 m sidewalks, the diagonal
 * from node 1 to node 2 leaving both about 40 degrees off the block's
 * sides. Its two ends merge as close junctions, so the road round the
 * block's far corner (node 0, a through node) leaves that junction and
 * comes back into it: its arms left node 0 out and aimed at each other's
 * node, along one line both ways (refused: "the links of the merged
 * junction enclose some of its arms"). Node 0 is made a corner of its own
 * (a 2-arm junction), and the block stays a block: nothing is paved
 * between node 0 and the diagonal. */
static void block_with_a_diagonal(net *n) {
    net_init(n);
    uint32_t v0 = node(n, 1.866, 0, -0.025), v1 = node(n, -2.704, 0, 56.342), v2 = node(n, 62.15, 0, 1.766);
    uint32_t v3 = node(n, 62.894, 0, 53.556), v4 = node(n, 89.387, 0, -2.96), v5 = node(n, 87.288, 0, 54.912);
    static const double e2[] = {53.608, 8.954};
    double w = 6.53;
    net_edge_pts(n, v2, v0, w, NULL, 0);
    net_edge_pts(n, v0, v1, w, NULL, 0);
    net_edge_pts(n, v2, v1, w, e2, 1);
    net_edge_pts(n, v3, v1, w, NULL, 0);
    net_edge_pts(n, v4, v2, 10.65, NULL, 0);
    net_edge_pts(n, v5, v3, 10.2, NULL, 0);
    net_edge_pts(n, v4, v5, w, NULL, 0);
    for (size_t e = 0; e < n->nedges; e++) {
        n->edges[e].has_sidewalk = true;
        n->edges[e].sidewalk = (pm_junction_sidewalk){.width = 1.98, .curb_height = 0.15};
    }
    finish(n);
}

Test(network_forks, a_road_leaving_a_merged_junction_and_coming_back_keeps_its_corner) {
    net n;
    block_with_a_diagonal(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_scene *s = net_build_ok(&n, a);
    /* Node 0 is a junction of its own, both its roads still roads. */
    cr_assert_str_eq(node_kind(s, 0), "junction");
    cr_assert_neq(pm_test_meta_get(edge_meta(s, 0), "road")->kind, PM_META_NULL);
    cr_assert_neq(pm_test_meta_get(edge_meta(s, 1), "road")->kind, PM_META_NULL);
    /* The block between node 0 and the diagonal is open: its centre
     * (the mean of nodes 0, 1 and 2) lies on no ground triangle. */
    double cx = (1.866 - 2.704 + 62.15) / 3, cz = (-0.025 + 56.342 + 1.766) / 3;
    const pm_prim *A = pm_test_prim(s, "asphalt");
    for (uint32_t t = 0; t < A->icount; t += 3) {
        double q[3][2];
        for (int k = 0; k < 3; k++) {
            q[k][0] = A->positions[3 * A->indices[t + k]];
            q[k][1] = A->positions[3 * A->indices[t + k] + 2];
        }
        double c[2] = {cx, cz};
        bool in = pm_orient_xz(q[0], q[1], c) > 0 && pm_orient_xz(q[1], q[2], c) > 0 && pm_orient_xz(q[2], q[0], c) > 0;
        cr_assert(!in, "the block's centre is paved");
    }
    cr_assert_not_null(pm_test_prim(s, "sidewalk"));
    pm_test_check_clean(s, "block with a diagonal");
    pm_arena_destroy(a);
}

/* A thin triangle of 10.6 m roads at the end of a street (bench layout
 * 2356 of the forks family, seed 11, whole): node 1's street from node 3
 * forks into roads to nodes 2 and 0, and node 2's road runs on to node
 * 0, so all three overlap most of their length. Joined, the three nodes
 * leave the junction one arm (the street), which a merged junction may
 * have only as this last resort (refused before: "the corner between
 * arms 0 and 1 lies 27.504 m along arm 0, beyond its 26.459 m"). The
 * triangle is one paved plaza at the street's end. */
Test(network_forks, a_thin_triangle_at_a_streets_end_is_one_plaza) {
    net n;
    net_init(&n);
    uint32_t v0 = node(&n, 64.324, 0, 65.348), v1 = node(&n, 43.996, 0, 16.258), v2 = node(&n, 62.967, 0, 34.614);
    uint32_t v3 = node(&n, 11.281, 0, 2.307);
    static const double e1[] = {63.160, 38.970, 63.625, 49.502, 64.148, 54.493}, e2[] = {22.435, 7.625},
                        e3[] = {45.522, 19.945};
    net_edge_pts(&n, v1, v2, 10.55, NULL, 0);
    net_edge_pts(&n, v2, v0, 8.76, e1, 3);
    net_edge_pts(&n, v3, v1, 10.55, e2, 1);
    net_edge_pts(&n, v1, v0, 10.55, e3, 1);
    finish(&n);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_scene *s = net_build_ok(&n, a);
    /* One junction (nodes 0, 1, 2), the triangle's edges without a road,
     * the street (edge 2) a road into it. */
    cr_assert_eq(pm_test_meta_get(s->meta, "junctions")->u.i, 1);
    static const size_t inside[] = {0, 1, 3};
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(pm_test_meta_get(edge_meta(s, inside[i]), "road")->kind, PM_META_NULL, "edge %zu", inside[i]);
    cr_assert_neq(pm_test_meta_get(edge_meta(s, 2), "road")->kind, PM_META_NULL);
    pm_test_check_clean(s, "thin triangle at a street's end");
    pm_arena_destroy(a);
}

/* The same request, the same bytes, whatever the arena (the joins follow
 * the problems, never memory). */
Test(network_forks, joining_refused_junctions_is_deterministic) {
    net n;
    fork_by_a_triangle(&n);
    net_assert_same_in_two_arenas(&n);
}

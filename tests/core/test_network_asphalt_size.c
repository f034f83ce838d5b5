/* The stitched asphalt's arrays are sized from the parts' summed counts
 * (network_stitch.c's pm__add_prims), not rounded up to a power of two:
 * the asphalt is a network's biggest array, and its slack was touched
 * memory. The vertices' size is the parts' sum without the left and right
 * vertices a road shares with each junction mouth it ends at (exact on a
 * grid, where every road ends at two); the triangles' is the sum plus
 * one per junction arm (a split mouth). */
#include <criterion/criterion.h>

#include "network/network.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "pm_test_network.h"

/* A k x k grid of 30 m blocks, turned by deg degrees, with or without
 * sidewalks. */
static void grid(net *n, int k, double deg, bool sidewalks) {
    net_init(n);
    double r = deg * 3.14159265358979323846 / 180.0, c = cos(r), s = sin(r);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) node(n, 30.0 * i * c - 30.0 * j * s, 0, 30.0 * i * s + 30.0 * j * c);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            uint32_t v = (uint32_t)(i * k + j);
            pm_network_edge *e[2] = {NULL, NULL};
            if (i + 1 < k) e[0] = edge(n, v, v + (uint32_t)k, 7);
            if (j + 1 < k) e[1] = edge(n, v, v + 1, 7);
            for (int m = 0; m < 2; m++)
                if (e[m] && sidewalks) {
                    e[m]->has_sidewalk = true;
                    e[m]->sidewalk.width = 2.0;
                    e[m]->sidewalk.curb_height = 0.15;
                }
        }
    finish(n);
}

static void check(int k, double deg, bool sidewalks) {
    net n;
    grid(&n, k, deg, sidewalks);
    pm_arena *a = pm_arena_create(1 << 20);
    pm_network_diag d;
    pm_scene *s = NULL;
    int rc = pm_network_generate(a, &n.p, &s, &d);
    cr_assert_eq(rc, PM_OK, "rc %d: %s", rc, d.nproblems ? d.problems[0].message : "");
    const pm_prim *A = &s->prims[0];
    cr_assert_str_eq(A->name, "asphalt");
    size_t arms = 2 * n.p.nedges;
    /* Within the bounds above: the vertices exactly and at most one
     * triangle per arm over what is used. */
    cr_assert_eq(A->vcap, A->vcount, "%dx%d %g: vcap %u vcount %u", k, k, deg, A->vcap, A->vcount);
    cr_assert_geq(A->icap, A->icount);
    cr_assert_leq(A->icap - A->icount, 3 * arms, "%dx%d %g: icap %u icount %u", k, k, deg, A->icap, A->icount);
    pm_arena_destroy(a);
}

Test(network_asphalt_size, grid_asphalt_is_sized_to_its_parts) {
    check(6, 0.0, false);
    check(6, 30.0, false);
    check(7, 17.0, false);
}

Test(network_asphalt_size, grid_with_sidewalks_asphalt_is_sized_to_its_parts) {
    check(5, 0.0, true);
    check(5, 30.0, true);
}

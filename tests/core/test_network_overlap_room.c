/* The network's plan-overlap check (core/network/network_overlap.c,
 * compiled into this test) lists the triangles it must test in ref and
 * box, which grow as they are listed (pm__tri_room) instead of holding
 * room for every triangle of the scene. Here they start with room for
 * one, so that nearly every listing grows them, and every network must
 * give the same scene and problems as with the first room the library
 * gives them: networks built to overlap (refused, the pairs named) and
 * with sidewalks cut back over several rounds. */
#include <stdbool.h>
#include <stdint.h>
static bool small_room;
#define PM__TCAP0(all) (small_room ? 1u : 4096u + (all) / 16)
#include "../../core/network/network_overlap.c"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "pm_test_overlap_oracle.h"
#pragma GCC diagnostic pop

Test(network_overlap_room, listed_triangles_grown_from_one_give_the_same_networks, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261204);
    int built = 0;
    for (int it = 0; it < 500; it++) {
        net n;
        if (it % 6 == 5) turned_grid(&n, &r, 0.3);
        else crowded_net(&n, &r, it % 5, it % 3 == 0);
        if (n.nedges == 0 || net_crosses(&n)) continue;
        same_with_and_without(&n, it, &small_room);
        built++;
    }
    cr_assert_geq(built, 350, "only %d networks got past the crossing check", built);
}

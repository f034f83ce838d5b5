/* The network's plan-overlap check against the brute-force oracle of
 * pm_test_overlap_oracle.h, at the default detail and at netconvert's. */
#include "pm_test_overlap_oracle.h"

Test(network_overlap, brute_force_oracle_on_networks_built_to_overlap, .timeout = 240) {
    int accepted[5] = {0}, refused[5] = {0}, own = 0;
    oracle_run(20261201, 500, false, accepted, refused, &own);
    for (int k = 0; k < 5; k++) {
        cr_assert_geq(accepted[k], 8, "kind %d: only %d networks accepted", k, accepted[k]);
        /* (A crowded grid's junctions make room: it mostly checks the
         * accepted side.) */
        if (k < 4) cr_assert_geq(refused[k], 8, "kind %d: only %d networks refused for overlaps", k, refused[k]);
    }
}

/* The same at netconvert's detail: most roads are a few triangles, whose
 * own pairs (a hairpin's legs) are tested one by one. */
Test(network_overlap, brute_force_oracle_at_netconvert_detail, .timeout = 240) {
    int accepted[5] = {0}, refused[5] = {0}, own = 0;
    oracle_run(20261202, 500, true, accepted, refused, &own);
    for (int k = 0; k < 5; k++) cr_assert_geq(accepted[k] + refused[k], 8, "kind %d: only %d networks built", k,
                                              accepted[k] + refused[k]);
    cr_assert_geq(refused[1], 8, "hairpins: only %d refused for overlaps", refused[1]);
    cr_assert_geq(own, 8, "only %d overlaps of a road with itself named", own);
}

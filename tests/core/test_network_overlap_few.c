/* The network's plan-overlap check built with every road's own pairs
 * tested one by one (PM__FEW raised above any road here), against the
 * brute-force oracle of pm_test_overlap_oracle.h: the built networks
 * include roads that overlap themselves (hairpins, bowed streets), which
 * at the real threshold go through the outline and the sweep, so the
 * one-by-one path meets overlapping pairs here and must name them. This
 * copy of the check replaces the library's (its one external symbol is
 * defined here, so the linker takes it from this file). */
#define PM__FEW 1024
#include "../../core/network/network_overlap.c"

#include "pm_test_overlap_oracle.h"

Test(network_overlap_few, every_road_pairwise_against_the_oracle, .timeout = 240) {
    int accepted[5] = {0}, refused[5] = {0}, own = 0;
    oracle_run(20261201, 500, false, accepted, refused, &own);
    for (int k = 0; k < 4; k++) cr_assert_geq(refused[k], 8, "kind %d: only %d refused for overlaps", k, refused[k]);
    cr_assert_geq(own, 8, "only %d overlaps of a road with itself named", own);
}

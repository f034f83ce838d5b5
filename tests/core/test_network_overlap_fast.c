/* The road certificate of core/network/network_overlap.c that runs
 * before a road's triangles are listed (pm__road_shown: edges summed in
 * per-vertex windows, the outline walked by index or, with a sidewalk,
 * by plan point) against plain references, on thousands of random
 * networks at the default detail built to overlap (pm_test_overlap_oracle.h):
 *  - every road it shows disjoint has no overlapping pair of triangles
 *    (all pairs, with pm_test_overlap.h's own exact test), and the bounds
 *    it gives the road are its triangles' corners';
 *  - every network comes out the same (scene, problems, their order)
 *    with the certificate as without it (each road then listed and shown
 *    by pm__take's edge lists, or tested pair by pair);
 *  - and against the brute-force oracle.
 * network_overlap.c is compiled into this test with the hook below (its
 * one external symbol is defined here, so the linker takes this copy). */
#include <criterion/criterion.h>

typedef struct pm__ov pm__ov;
typedef struct pm__range pm__range;
static int shown_hook(pm__ov *O, const pm__range *rg, size_t n, int rc);
#define PM__SHOWN_HOOK(O, rg, n, rc) shown_hook(O, rg, n, rc)
#include "../../core/network/network_overlap.c"

#include "pm_test_overlap_oracle.h"
#include "pm_test_overlap_road.h"

static bool plain;                     /* the certificate off: every road the old way */
static size_t shown[2], clean_not_shown, overlapping;

static int shown_hook(pm__ov *O, const pm__range *rg, size_t n, int rc) {
    if (rc < 0) return rc;
    size_t nt;
    ptri *t = road_tris(O, rg, n, &nt);
    size_t bad = 0;
    for (size_t i = 0; i < nt; i++)
        for (size_t j = i + 1; j < nt; j++) bad += ptri_overlap(&t[i], &t[j]);
    bool sw = rg[n - 1].count > 0 && (rg[n - 1].ref0 & PM__SW);
    if (rc == 1) {
        cr_assert_eq(bad, 0, "a road shown disjoint has %zu overlapping pairs of its %zu triangles", bad, nt);
        const pm__clu *C = &O->clu[O->nclu - 1];
        cr_assert(C->road != UINT32_MAX && C->count == 0, "a road shown is listed later");
        double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL};
        for (size_t i = 0; i < nt; i++)
            for (int c = 0; c < 2; c++) {
                lo[c] = fmin(lo[c], t[i].lo[c]);
                hi[c] = fmax(hi[c], t[i].hi[c]);
            }
        for (int c = 0; c < 2; c++)
            cr_assert(C->lo[c] == lo[c] && C->hi[c] == hi[c], "axis %d: bounds [%g, %g], corners [%g, %g]", c,
                      C->lo[c], C->hi[c], lo[c], hi[c]);
        shown[sw]++;
    } else {
        clean_not_shown += bad == 0;
        overlapping += bad > 0;
    }
    free(t);
    if (plain && rc == 1) O->nclu--;   /* (its cluster, taken back: listed the old way next) */
    return plain ? 0 : rc;
}

Test(network_overlap_fast, shown_roads_against_all_pairs_and_the_plain_path, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261202);
    int built = 0;
    for (int it = 0; it < 2000; it++) {
        net n;
        crowded_net(&n, &r, it % 5, false);
        if (n.nedges == 0) continue;
        if (net_crosses(&n)) continue;   /* (refused before the check) */
        same_with_and_without(&n, it, &plain);   /* the certificate on, then off */
        built++;
    }
    cr_log_info("roads shown: %zu asphalt only, %zu with a sidewalk; not shown: %zu clean, %zu overlapping "
                "(%d networks)", shown[0], shown[1], clean_not_shown, overlapping, built);
    cr_assert_geq(shown[0], 500, "only %zu asphalt-only roads shown", shown[0]);
    cr_assert_geq(shown[1], 500, "only %zu roads with a sidewalk shown", shown[1]);
    cr_assert_geq(overlapping, 50, "only %zu overlapping roads met", overlapping);
}

Test(network_overlap_fast, brute_force_oracle_at_the_default_detail, .timeout = 300) {
    int accepted[5] = {0}, refused[5] = {0}, own = 0;
    oracle_run(20261203, 2000, false, accepted, refused, &own);
    for (int k = 0; k < 4; k++) cr_assert_geq(refused[k], 20, "kind %d: only %d refused for overlaps", k, refused[k]);
    cr_assert_geq(shown[0] + shown[1], 1000, "the certificate showed only %zu roads", shown[0] + shown[1]);
}

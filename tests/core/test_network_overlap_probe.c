/* The scan of core/network/network_overlap.c that decides a pair of
 * clusters without listing a road shown disjoint (pm__cross_probe)
 * against the plain way (both clusters listed, pm__cross), on random
 * networks built to overlap (pm_test_overlap_oracle.h) and on small grids
 * turned by any angle, nodes rounded to the millimetre, some bowed, some
 * crowded, some with sidewalks:
 *  - every pair it passes has no overlapping pair of triangles (all
 *    pairs of the two clusters, with pm_test_overlap.h's own exact test);
 *  - every network comes out the same (scene, problems, their order)
 *    with the scan as without it.
 * network_overlap.c is compiled into this test with the hooks below (its
 * one external symbol is defined here, so the linker takes this copy). */
#include <criterion/criterion.h>
#include <stdbool.h>

typedef struct pm__ov pm__ov;
typedef struct pm__clu pm__clu;
static bool probe_off;               /* the scan off: every pair the plain way */
static int probe_hook(pm__ov *O, const pm__clu *P, const pm__clu *Q, int rc);
#define PM__PROBE_ON (!probe_off)
#define PM__PROBE_HOOK(O, P, Q, rc) probe_hook(O, P, Q, rc)
/* The mouth's line (pairs on opposite sides left out) on and off; each
 * pair it leaves out checked with pm_test_overlap.h's own exact test. */
typedef struct pm_ptri pm_ptri;
static bool mouth_off;
static void mouth_hook(const pm_ptri *a, const pm_ptri *b, bool apart);
#define PM__MOUTH_ON (!mouth_off)
#define PM__MOUTH_HOOK(a, b, apart) mouth_hook(a, b, apart)
/* (The seam of five off: the pairs of roads with sidewalks are left to
 * the scan and the mouth's line tested here, as before it;
 * test_network_overlap_bent.c tests it.) */
#define PM__SEAM5_ON 0
#include "../../core/network/network_overlap.c"

#include "pm_test_overlap_oracle.h"
#include "pm_test_overlap_road.h"

static size_t passed, fell_back, overlapping;

static int probe_hook(pm__ov *O, const pm__clu *P, const pm__clu *Q, int rc) {
    if (rc < 0 || probe_off) return rc;
    size_t np, nq, bad = 0;
    ptri *p = clu_tris(O, P, &np), *q = clu_tris(O, Q, &nq);
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j < nq; j++) bad += ptri_overlap(&p[i], &q[j]);
    free(p);
    free(q);
    if (rc == 1) {
        cr_assert_eq(bad, 0, "a pair of clusters passed by the scan has %zu overlapping pairs of triangles", bad);
        passed++;
    } else if (P->road != UINT32_MAX || Q->road != UINT32_MAX) {
        fell_back++;
        overlapping += bad > 0;
    }
    return rc;
}

static size_t mouth_apart, mouth_tested, mouth_touching;

static void mouth_hook(const pm_ptri *a, const pm_ptri *b, bool apart) {
    mouth_tested++;
    if (!apart) return;
    double v[2][3][2];
    pm_ptri_corners(a, v[0]);
    pm_ptri_corners(b, v[1]);
    ptri t[2];
    cr_assert(ptri_make(v[0][0], v[0][1], v[0][2], &t[0]) && ptri_make(v[1][0], v[1][1], v[1][2], &t[1]));
    cr_assert(!ptri_overlap(&t[0], &t[1]), "a pair left out by the mouth's line overlaps");
    cr_assert(!pm_ptri_overlap(a, b), "a pair left out by the mouth's line: pm_ptri_overlap says it overlaps");
    int shared = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) shared += v[0][i][0] == v[1][j][0] && v[0][i][1] == v[1][j][1];
    mouth_touching += shared > 0;
    mouth_apart++;
}

/* runs random networks, every period-th crowded (pm_test_overlap_oracle.h),
 * the rest turned grids, each built with *off false, then true, and
 * compared; how many were built (not refused for crossing edges first). */
static int both_ways(uint64_t seed, int runs, int period, bool *off) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    int built = 0;
    for (int it = 0; it < runs; it++) {
        net n;
        if (it % period) turned_grid(&n, &r, 0.3);
        else crowded_net(&n, &r, (it / period) % 5, false);
        if (n.nedges == 0) continue;
        if (net_crosses(&n)) continue;   /* (refused before the check) */
        same_with_and_without(&n, it, off);
        built++;
    }
    return built;
}

Test(network_overlap_probe, scan_against_all_pairs_and_the_plain_way, .timeout = 300) {
    int built = both_ways(20261202, 1200, 2, &probe_off);   /* the scan on, then off */
    cr_log_info("pairs passed by the scan: %zu; left to the plain way: %zu (%zu overlapping); %d networks",
                passed, fell_back, overlapping, built);
    cr_assert_geq(passed, 2000, "only %zu pairs passed by the scan", passed);
    cr_assert_geq(overlapping, 50, "only %zu overlapping pairs met", overlapping);
}

Test(network_overlap_probe, brute_force_oracle_with_the_scan, .timeout = 300) {
    int accepted[5] = {0}, refused[5] = {0}, own = 0;
    size_t before = passed;
    oracle_run(20261204, 1000, false, accepted, refused, &own);
    for (int k = 0; k < 4; k++) cr_assert_geq(refused[k], 10, "kind %d: only %d refused for overlaps", k, refused[k]);
    cr_assert_geq(passed - before, 500, "the scan passed only %zu pairs", passed - before);
}

/* The pairs left out by the mouth's line (pm__cross_probe): each checked
 * by the hook, and every network the same (scene, problems, their
 * order) with the line as without it. */
Test(network_overlap_probe, mouth_line_against_all_pairs_and_without_it, .timeout = 300) {
    int built = both_ways(20261203, 600, 3, &mouth_off);   /* the line on, then off */
    cr_log_info("mouth's line: %zu of %zu pairs left out (%zu touching); %d networks", mouth_apart, mouth_tested,
                mouth_touching, built);
    cr_assert_geq(mouth_apart, 5000, "only %zu pairs left out by the mouth's line", mouth_apart);
    cr_assert_geq(mouth_touching, 1000, "only %zu touching pairs left out", mouth_touching);
}

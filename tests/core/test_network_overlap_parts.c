/* Parts of the network's plan-overlap check (core/network/network_overlap.c,
 * compiled into this test: its one external symbol is defined here, so the
 * linker takes this copy, not the library's) against plain references:
 *  - every road's own pairs tested one by one (PM__FEW raised above any
 *    road here), against the brute-force oracle of
 *    pm_test_overlap_oracle.h: the networks include roads that overlap
 *    themselves (hairpins, bowed streets), which at the real threshold go
 *    through the outline and the sweep, so the one-by-one path meets
 *    overlapping pairs here and must name them;
 *  - the pairs of clusters whose bounds meet, from the grid over their
 *    bounds, against all pairs tested one by one, on random boxes:
 *    touching, nested, equal, degenerate, and enough huge ones that the
 *    grid's cells must grow;
 *  - pm__take's plan orientation in lanes (pm__orient_lanes) against
 *    pm_orient2d_fast, bit for bit, on random, nearly collinear and
 *    collinear corners. */
#define PM__FEW 1024
#include <stdbool.h>
#include <stdint.h>
typedef struct pm__ov pm__ov;
static bool lanes = true;
static void jclu_hook(pm__ov *O, uint32_t n, uint32_t before);
#define PM__JUNCTION_LANES lanes
#define PM__JCLU_HOOK(O, n, before) jclu_hook(O, n, before)
#include "../../core/network/network_overlap.c"

#include "pm_test_overlap_oracle.h"

/* Each junction's cluster bounds as without the lanes (pm__junction_cluster
 * run again with its four-triangle loop off), bit for bit. */
static size_t jclu_same, jclu_grown;

static void jclu_hook(pm__ov *O, uint32_t n, uint32_t before) {
    if (O->nclu == before) return;
    pm__clu fast = O->clu[before];
    const pm__node *V = &O->N->nodes[n];
    O->nclu = before, lanes = false;
    pm__junction_cluster(O, n);
    lanes = true;
    cr_assert_eq(O->nclu, before + 1);
    cr_assert(!memcmp(fast.lo, O->clu[before].lo, sizeof fast.lo) && !memcmp(fast.hi, O->clu[before].hi, sizeof fast.hi),
              "junction %u: bounds differ", n);
    jclu_same++;
    /* (whether a vertex outside the block grows them: the lanes' work) */
    float lo[2] = {HUGE_VALF, HUGE_VALF}, hi[2] = {-HUGE_VALF, -HUGE_VALF};
    const float *a = O->sc->prims[0].positions + 3 * (size_t)V->voff;
    for (uint32_t v = 0; v < V->vcount; v++, a += 3) pm__grow(lo, hi, a[0], a[2]);
    jclu_grown += V->vcount && (fast.lo[0] < lo[0] || fast.lo[1] < lo[1] || fast.hi[0] > hi[0] || fast.hi[1] > hi[1]);
}

Test(network_overlap_parts, every_road_pairwise_against_the_oracle, .timeout = 240) {
    int accepted[5] = {0}, refused[5] = {0}, own = 0;
    oracle_run(20261201, 500, false, accepted, refused, &own);
    cr_assert_gt(jclu_same, 500, "only %zu junctions' bounds compared", jclu_same);
    cr_assert_gt(jclu_grown, 100, "only %zu junctions' bounds grown past their block", jclu_grown);
    for (int k = 0; k < 4; k++) cr_assert_geq(refused[k], 8, "kind %d: only %d refused for overlaps", k, refused[k]);
    cr_assert_geq(own, 8, "only %d overlaps of a road with itself named", own);
}

/* ---- pairs of clusters ---- */

#define NCLU 300

static uint8_t seen[NCLU][NCLU];
static size_t nseen;

static int record(pm__ov *O, pm__clu *P, pm__clu *Q) {
    size_t i = (size_t)(P - O->clu), j = (size_t)(Q - O->clu);
    cr_assert(i < O->nclu && j < O->nclu && i != j, "pair %zu, %zu of %u clusters", i, j, O->nclu);
    seen[i][j]++;
    seen[j][i]++;
    nseen++;
    return PM_OK;
}

/* A coordinate on a coarse lattice most of the time, so that bounds touch
 * and coincide exactly. */
static float coord(pm_rng *r, double span) {
    double v = pm_rng_range(r, 0, span);
    return pm_rng_chance(r, 0.5) ? (float)(floor(v / 10) * 10) : (float)v;
}

/* n random boxes in [0, 1000]^2, of the kind k: 0 small, 1 a mix of sizes
 * (a tenth of them up to all of it, the rest tiny: the grid's cells grow),
 * 2 most of them huge, 3 long thin strips, 4 a few boxes, some with no
 * width. */
static uint32_t random_boxes(pm_rng *r, int k, pm__clu *C) {
    uint32_t n = k == 4 ? (uint32_t)pm_rng_int(r, 2, 6) : NCLU;
    for (uint32_t i = 0; i < n; i++) {
        double size = k == 0 ? 30 : k == 1 ? (pm_rng_chance(r, 0.1) ? 1000 : 5) : k == 2 ? (pm_rng_chance(r, 0.7) ? 1000 : 20) : 200;
        float x = coord(r, 1000), z = coord(r, 1000);
        float w = k == 4 && pm_rng_chance(r, 0.3) ? 0 : coord(r, size), h = coord(r, size);
        if (k == 3 && pm_rng_chance(r, 0.5)) { float t = w; w = h / 20; h = t; }
        else if (k == 3) h /= 20;
        C[i] = (pm__clu){.node = UINT32_MAX, .road = UINT32_MAX, .lo = {x, z}, .hi = {x + w, z + h}};
    }
    return n;
}

Test(network_overlap_parts, cluster_pairs_from_the_grid_are_all_pairs_whose_bounds_meet) {
    pm_rng r;
    pm_rng_seed(&r, 1402);
    static pm__clu C[NCLU];
    size_t pairs[5] = {0};
    for (int it = 0; it < 200; it++) {
        int k = it % 5;
        uint32_t n = random_boxes(&r, k, C);
        pm_arena *a = pm_arena_create(1 << 16);
        pm__ov O = {.s = a, .clu = C, .nclu = n};
        memset(seen, 0, sizeof seen);
        nseen = 0;
        cr_assert_eq(pm__clu_pairs(&O, record), PM_OK);
        size_t want = 0;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = i + 1; j < n; j++) {
                bool meet = C[i].lo[0] < C[j].hi[0] && C[j].lo[0] < C[i].hi[0] && C[i].lo[1] < C[j].hi[1] &&
                            C[j].lo[1] < C[i].hi[1];
                want += meet;
                cr_assert_eq(seen[i][j], meet ? 1 : 0, "boxes %d, clusters %u and %u: reported %d times, meet %d",
                             it, i, j, seen[i][j], meet);
            }
        cr_assert_eq(nseen, want, "boxes %d", it);
        pairs[k] += want;
        pm_arena_destroy(a);
    }
    cr_log_info("cluster pairs: %zu / %zu / %zu / %zu / %zu (small, mixed, huge, strips, few)", pairs[0], pairs[1],
                pairs[2], pairs[3], pairs[4]);
    for (int k = 0; k < 5; k++) cr_assert_gt(pairs[k], 0, "kind %d: no pairs meet", k);
}

#ifdef __SSE2__
/* A float near v: v itself, or a few ulps either side. */
static float nudge(pm_rng *r, float v) {
    int k = pm_rng_int(r, -3, 3);
    for (; k > 0; k--) v = nextafterf(v, HUGE_VALF);
    for (; k < 0; k++) v = nextafterf(v, -HUGE_VALF);
    return v;
}

Test(network_overlap_parts, twelve_indices_outside_a_block_as_one_by_one) {
    pm_rng r;
    pm_rng_seed(&r, 20261203);
    size_t outside = 0, inside = 0;
    for (int round = 0; round < 200000; round++) {
        uint32_t base = pm_rng_chance(&r, 0.1) ? 0 : pm_rng_chance(&r, 0.1) ? UINT32_MAX - 100 : (uint32_t)pm_rng_int(&r, 0, 1 << 30);
        uint32_t n = pm_rng_chance(&r, 0.05) ? UINT32_MAX - base : (uint32_t)pm_rng_int(&r, 1, 64);
        if (n > UINT32_MAX - base) n = UINT32_MAX - base;
        if (n == 0) n = 1, base--;
        uint32_t q[12];
        for (int i = 0; i < 12; i++) {
            int64_t d = pm_rng_chance(&r, 0.8) ? pm_rng_int(&r, 0, (int)(n < 64 ? n - 1 : 63)) : pm_rng_int(&r, -3, 70);
            q[i] = pm_rng_chance(&r, 0.02) ? (uint32_t)pm_rng_int(&r, 0, INT32_MAX) * 2u : (uint32_t)((int64_t)base + d);
        }
        unsigned want = 0;
        for (int i = 0; i < 12; i++) want |= (unsigned)(q[i] - base >= n) << i;
        unsigned got = pm__outside12(q, base, n);
        cr_assert_eq(got, want, "round %d: %#x, one by one %#x", round, got, want);
        outside += (unsigned)__builtin_popcount(want), inside += 12 - (unsigned)__builtin_popcount(want);
    }
    cr_assert_gt(outside, 200000, "only %zu outside", outside);
    cr_assert_gt(inside, 1000000, "only %zu inside", inside);
}

Test(network_overlap_parts, orientation_in_lanes_as_the_fast_predicate) {
    pm_rng r;
    pm_rng_seed(&r, 20261202);
    size_t zero = 0, close = 0, off_line = 0;
    for (int round = 0; round < 400000; round++) {
        float p[3][3];
        double span = pm_rng_chance(&r, 0.5) ? 10 : 5000, off = pm_rng_chance(&r, 0.3) ? pm_rng_range(&r, -1e4, 1e4) : 0;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) p[i][k] = (float)(off + pm_rng_range(&r, -span, span));
        int kind = pm_rng_int(&r, 0, 4);
        if (kind >= 1) {
            /* The third corner on the line of the others: exactly (whole
             * metres, a whole step: past the filter to the exact stage),
             * or rounded; then nudged now and then. */
            bool whole = pm_rng_chance(&r, 0.5);
            double t = whole ? pm_rng_int(&r, -2, 3) : pm_rng_range(&r, -2, 3);
            if (whole)
                for (int i = 0; i < 2; i++)
                    for (int k = 0; k < 3; k += 2) p[i][k] = (float)pm_rng_int(&r, -1000, 1000);
            for (int k = 0; k < 3; k += 2) p[2][k] = (float)(p[0][k] + t * ((double)p[1][k] - p[0][k]));
            if (kind == 2)
                for (int k = 0; k < 3; k += 2) p[2][k] = nudge(&r, p[2][k]);
        }
        if (kind == 3) {   /* along an axis, or a corner repeated: collinear exactly */
            if (pm_rng_chance(&r, 0.5)) p[1][2] = p[2][2] = p[0][2];
            else memcpy(p[2], p[pm_rng_int(&r, 0, 1)], sizeof p[2]);
        }
        if (kind == 4) {
            /* Two corners on a line through the origin, the third a hair
             * off the origin: the differences round, the estimate cannot
             * tell, the exact stage finds a sign not zero. */
            double m = pm_rng_chance(&r, 0.5) ? 2 : -1;
            for (int k = 0; k < 3; k += 2) {
                p[1][k] = (float)(m * p[0][k]);
                p[2][k] = (float)(pm_rng_range(&r, -1, 1) * pow(10, -pm_rng_int(&r, 12, 18)));
            }
        }
        double a[2] = {p[0][0], p[0][2]}, b[2] = {p[1][0], p[1][2]}, c[2] = {p[2][0], p[2][2]};
        double want = pm_orient2d_fast(a, b, c);
        __m128 la = _mm_unpacklo_ps(_mm_load_ss(p[0]), _mm_load_ss(p[0] + 2));
        __m128 lb = _mm_unpacklo_ps(_mm_load_ss(p[1]), _mm_load_ss(p[1] + 2));
        __m128 lc = _mm_unpacklo_ps(_mm_load_ss(p[2]), _mm_load_ss(p[2] + 2));
        double got = pm__orient_lanes(la, lb, lc);
        cr_assert(memcmp(&got, &want, sizeof got) == 0, "round %d: %.17g, fast predicate %.17g", round, got, want);
        zero += want == 0;
        double l = (a[0] - c[0]) * (b[1] - c[1]), rr = (a[1] - c[1]) * (b[0] - c[0]);
        double bound = 3.3306690738754716e-16 * (fabs(l) + fabs(rr));
        close += bound > 0 && !(fabs(l - rr) > bound);   /* (the exact stage's) */
        off_line += bound > 0 && !(fabs(l - rr) > bound) && want != 0;
    }
    cr_assert_gt(zero, 50000, "only %zu collinear", zero);
    cr_assert_gt(close, 20000, "only %zu past the filter", close);
    cr_assert_gt(off_line, 1000, "only %zu past the filter, not collinear", off_line);
}
#endif

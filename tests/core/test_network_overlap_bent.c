/* The mouth's bent line of core/network/network_overlap.c (pm__bent_apart:
 * a junction and its own road decided without scanning the road, when
 * the road's outline lies on one side of the line p -> k -> q of their
 * seam, or with a sidewalk of outer point, p, k, q, outer point, and
 * each of the junction's triangles near it on the other), on
 * small grids turned by any angle, nodes rounded to the millimetre, some
 * bowed, some with sidewalks, and on random networks built to overlap
 * (pm_test_overlap_oracle.h):
 *  - every pair of clusters it passes has no overlapping pair of
 *    triangles (all pairs of the two, pm_test_overlap.h's own exact test);
 *  - every network comes out the same (scene, problems, their order)
 *    with the bent line as without it;
 *  - the brute-force oracle over the whole network with it on;
 *  - each road end's bent line as kept (O->rbent) is its seam's line
 *    as built afresh, the road's every corner lies on the side it was
 *    shown on (exact), and pm__bent_apart answers as with fresh lines;
 *  - the junction's triangles picked by their bounds in lanes
 *    (pm__meets_m) as by pm__meets, on every pair and on boxes of edge
 *    values.
 * network_overlap.c is compiled into this test with the hooks below (its
 * one external symbol is defined here, so the linker takes this copy). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>

#include "geom/plan_overlap.h"

typedef struct pm__ov pm__ov;
typedef struct pm__clu pm__clu;
static bool bent_off;                /* the bent line off: the scan decides every pair */
static int bent_hook(pm__ov *O, const pm__clu *J, const pm__clu *R, int apart);
#define PM__BENT_ON (!bent_off)
#define PM__BENT_HOOK(O, J, R, apart) bent_hook(O, J, R, apart)
static void seam5_hook(const pm__ov *O, const pm__clu *J, pm_pseam *S, int X, const float lo[2], const float hi[2],
                       bool apart);
#define PM__SEAM5_HOOK(O, J, S, X, lo, hi, apart) seam5_hook(O, J, S, X, lo, hi, apart)
#include "../../core/network/network_overlap.c"

#include "pm_test_overlap_oracle.h"
#include "pm_test_overlap_road.h"

static size_t passed, declined, touching, passed5;

static size_t boxes_compared;

/* pm__meets_m (lanes) as pm__meets on every triangle of J against the box
 * where J and R meet (the box pm__bent_apart reads them by). */
static void meets_lanes_as_plain(const pm__ov *O, const pm__clu *J, const pm__clu *R) {
    float lo[2] = {fmaxf(J->lo[0], R->lo[0]), fmaxf(J->lo[1], R->lo[1])};
    float hi[2] = {fminf(J->hi[0], R->hi[0]), fminf(J->hi[1], R->hi[1])};
    const pm__mbox B = pm__mbox_of(lo, hi);
    for (uint32_t k = J->first; k < J->first + J->count; k++, boxes_compared++)
        cr_assert_eq(pm__meets_m(&O->box[k], B), pm__meets(O->box[k].lo, O->box[k].hi, lo, hi),
                     "a box's meeting in lanes differs");
}

static size_t kept_checked, kept_turned, kept_corners;

/* Whether plan point v lies in the closed side sigma of p -> k -> q (exact
 * predicates: B1 and B2 when the path turns toward sigma or goes
 * straight, B1 or B2 when it turns away; geom/plan_overlap.h). */
static bool in_bent_side(const double p[2], const double k[2], const double q[2], int sigma, const double v[2]) {
    double o1 = pm_orient2d(p, k, v) * sigma, o2 = pm_orient2d(k, q, v) * sigma, t = pm_orient2d(p, k, q) * sigma;
    return t >= 0 ? o1 >= 0 && o2 >= 0 : o1 >= 0 || o2 >= 0;
}

/* pm__bent_apart as it was before the lines were kept: each end's bent
 * line built afresh from the scene's seam (pm__end_bent), the same
 * filter on it, the junction's triangles one at a time. */
static int bent_apart_fresh(const pm__ov *O, const pm__clu *J, uint32_t r, const float lo[2], const float hi[2]) {
    unsigned bits = O->rside[r];
    if (!bits) return 0;
    uint32_t ref = O->ref[J->first], t = ref & ~PM__SW;
    uint32_t part = pm__part(O->own[(ref & PM__SW ? O->na : 0) + t]);
    if (part < O->E || part >= O->E + O->V) return 0;
    int64_t node = part - O->E;
    const pm__road *Rd = &O->N->roads.data[r];
    for (int e = 0; e < 2; e++) {
        if (!(bits >> (2 * e) & 1) || (e ? Rd->end : Rd->start) != node) continue;
        const uint32_t *sv = pm__end_seam(O, Rd, e);
        if (!sv) continue;
        int sigma = bits >> (2 * e + 1) & 1 ? 1 : -1;
        if (bits >> (4 + e) & 1) {
            if (pm__seam5_apart(O, J, &O->rseam[r][e], sigma, lo, hi)) return 1;
            continue;
        }
        pm_pbent M;
        cr_assert(pm__end_bent(O, sv, &M), "a road end shown by a bent line that its seam does not have");
        bool all = true;
        for (uint32_t k = J->first; all && k < J->first + J->count; k++) {
            if (!pm__meets(O->box[k].lo, O->box[k].hi, lo, hi)) continue;
            uint32_t f = O->ref[k];
            const pm_prim *Pr = &O->sc->prims[f & PM__SW ? 2 : 0];
            const uint32_t *q = Pr->indices + 3 * (size_t)(f & ~PM__SW);
            const float *const one[1][3] = {{Pr->positions + 3 * (size_t)q[0], Pr->positions + 3 * (size_t)q[1],
                                             Pr->positions + 3 * (size_t)q[2]}};
            all = pm_pbent_other_side_all(&M, sigma, one, 1);   /* (one at a time) */
        }
        if (all) return 1;
    }
    return 0;
}

/* The bent lines kept per road end (O->rbent, built by pm__road_sides),
 * at their use: for each end of R's road shown by its bent line (bit 2 e
 * of O->rside without 4 + e), the kept line is the one its seam has in
 * the scene now (every float and double the same; the turn unknown or
 * the exact one), every corner of the road's triangles lies in its closed
 * side sigma (exact predicates), and pm__bent_apart answers as it does
 * with lines built afresh. */
static void kept_lines_as_fresh(const pm__ov *O, const pm__clu *J, const pm__clu *R, int apart) {
    uint32_t r = R->road;
    unsigned bits = O->rside[r];
    const pm__road *Rd = &O->N->roads.data[r];
    size_t nr = 0;
    ptri *t = NULL;
    for (int e = 0; e < 2; e++) {
        if (!(bits >> (2 * e) & 1) || bits >> (4 + e) & 1) continue;
        const uint32_t *sv = pm__end_seam(O, Rd, e);
        cr_assert(sv, "a road end shown by a bent line has no seam");
        pm_pbent F;
        cr_assert(pm__end_bent(O, sv, &F), "a road end shown by a bent line that its seam does not have");
        const pm_pbent *K = &O->rbent[2 * (size_t)r + e];
        cr_assert(!memcmp(K->f, F.f, sizeof F.f) && !memcmp(K->ax, F.ax, sizeof F.ax) &&
                      !memcmp(K->az, F.az, sizeof F.az) && !memcmp(K->bx, F.bx, sizeof F.bx) &&
                      !memcmp(K->bz, F.bz, sizeof F.bz),
                  "road %u end %d: the kept bent line is not its seam's", r, e);
        int turn = pm_orient2d_f32_sign(F.f[0], F.f[1], F.f[2]);
        cr_assert(K->turn == PM_PBENT_TURN_UNKNOWN || K->turn == turn, "road %u end %d: kept turn %d, exact %d", r, e,
                  K->turn, turn);
        kept_turned += K->turn != PM_PBENT_TURN_UNKNOWN;
        int sigma = bits >> (2 * e + 1) & 1 ? 1 : -1;
        const double p[2] = {F.f[0][0], F.f[0][1]}, k[2] = {F.f[1][0], F.f[1][1]}, q[2] = {F.f[2][0], F.f[2][1]};
        if (!t) t = clu_tris(O, R, &nr);
        for (size_t i = 0; i < nr; i++)
            for (int c = 0; c < 3; c++, kept_corners++)
                cr_assert(in_bent_side(p, k, q, sigma, t[i].v[c]),
                          "road %u end %d: a corner (%.9g %.9g) outside the side %d it was shown on", r, e,
                          t[i].v[c][0], t[i].v[c][1], sigma);
        kept_checked++;
    }
    free(t);
    const pm__clu *P = J, *Q = R;
    float lo[2] = {P->lo[0] > Q->lo[0] ? P->lo[0] : Q->lo[0], P->lo[1] > Q->lo[1] ? P->lo[1] : Q->lo[1]};
    float hi[2] = {P->hi[0] < Q->hi[0] ? P->hi[0] : Q->hi[0], P->hi[1] < Q->hi[1] ? P->hi[1] : Q->hi[1]};
    cr_assert_eq(apart, bent_apart_fresh(O, J, r, lo, hi), "road %u: the kept lines answer %d, fresh ones not", r,
                 apart);
}

static size_t seams_kept;

/* Each end of R's road shown by its seam of five (rside bit 4 + e): the
 * seam kept for it (O->rseam, which pm__seam5_apart reads) is that end's,
 * p, k, q its seam's points and its lines as pm_pseam_init makes them
 * from its five points. */
static void kept_seams_as_built(const pm__ov *O, const pm__clu *R) {
    if (R->road == UINT32_MAX) return;
    const pm__road *Rd = &O->N->roads.data[R->road];
    const float *pos = O->sc->prims[0].positions;
    for (int e = 0; e < 2; e++) {
        if (!(O->rside[R->road] >> (4 + e) & 1)) continue;
        const pm_pseam *K = &O->rseam[R->road][e];
        const uint32_t *sv = pm__end_seam(O, Rd, e);
        cr_assert(sv, "a road end kept by its seam of five has no seam");
        for (int i = 0; i < 3; i++)
            cr_assert(K->f[i + 1][0] == pos[3 * (size_t)sv[i]] && K->f[i + 1][1] == pos[3 * (size_t)sv[i] + 2],
                      "road %u end %d: the kept seam's point %d is not its mouth's", R->road, e, i + 1);
        pm_pseam F;
        cr_assert(pm_pseam_init(&F, (const float(*)[2])K->f, K->n));
        cr_assert(memcmp(F.ax, K->ax, sizeof F.ax) == 0 && memcmp(F.az, K->az, sizeof F.az) == 0 &&
                      memcmp(F.bx, K->bx, sizeof F.bx) == 0 && memcmp(F.bz, K->bz, sizeof F.bz) == 0 &&
                      memcmp(F.gx, K->gx, sizeof F.gx) == 0 && memcmp(F.gz, K->gz, sizeof F.gz) == 0,
                  "road %u end %d: the kept seam's lines are not its points'", R->road, e);
        seams_kept++;
    }
}

static size_t seams_read, windows;

/* The seam pm__seam5_apart reads for junction J is one of J's mouths: its
 * centre k a corner of one of J's triangles (another end's seam lies at
 * another junction); its answer is that of each triangle of J whose
 * bounds meet lo .. hi (pm__meets) tested alone (pm_pseam_tri_side). */
static void seam5_hook(const pm__ov *O, const pm__clu *J, pm_pseam *S, int X, const float lo[2], const float hi[2],
                       bool apart) {
    bool each = true;
    for (uint32_t k = J->first; each && k < J->first + J->count; k++) {
        if (!pm__meets(O->box[k].lo, O->box[k].hi, lo, hi)) continue;
        uint32_t f = O->ref[k];
        const pm_prim *Pr = &O->sc->prims[f & PM__SW ? 2 : 0];
        const uint32_t *q = Pr->indices + 3 * (size_t)(f & ~PM__SW);
        each = pm_pseam_tri_side(S, X, Pr->positions + 3 * (size_t)q[0], Pr->positions + 3 * (size_t)q[1],
                                 Pr->positions + 3 * (size_t)q[2]);
    }
    cr_assert_eq(apart, each, "the seam of five's answer is not its triangles' one by one");
    /* Now and then the batched test (pm__seam5_tris) on windows of J's
     * triangles, every one meeting J's bounds, on both sides: each window
     * answered as its triangles one by one, whichever one fails first and
     * however many fill the batches. */
    if (seams_read % 8 == 0) {
        pm__clu W = *J;
        for (uint32_t first = J->first; first < J->first + J->count; first += 5)
            for (uint32_t c = 0; first + c <= J->first + J->count && c <= 70; c++) {
                W.first = first, W.count = c;
                for (int x = -1; x <= 1; x += 2) {
                    bool one = true;
                    for (uint32_t k = first; one && k < first + c; k++) {
                        uint32_t f = O->ref[k];
                        const pm_prim *Pr = &O->sc->prims[f & PM__SW ? 2 : 0];
                        const uint32_t *q = Pr->indices + 3 * (size_t)(f & ~PM__SW);
                        one = pm_pseam_tri_side(S, x, Pr->positions + 3 * (size_t)q[0],
                                                Pr->positions + 3 * (size_t)q[1], Pr->positions + 3 * (size_t)q[2]);
                    }
                    cr_assert_eq(pm__seam5_tris(O, &W, S, x, J->lo, J->hi), one,
                                 "the batched seam test on %u triangles differs from one by one", c);
                    windows += c > 32;
                }
            }
    }
    bool found = false;
    for (uint32_t k = J->first; !found && k < J->first + J->count; k++) {
        uint32_t f = O->ref[k];
        const pm_prim *Pr = &O->sc->prims[f & PM__SW ? 2 : 0];
        const uint32_t *q = Pr->indices + 3 * (size_t)(f & ~PM__SW);
        for (int c = 0; c < 3; c++) {
            const float *v = Pr->positions + 3 * (size_t)q[c];
            found = found || (v[0] == S->f[2][0] && v[2] == S->f[2][1]);
        }
    }
    cr_assert(found, "the seam of five read for a junction is not one of its mouths");
    seams_read++;
}

static int bent_hook(pm__ov *O, const pm__clu *J, const pm__clu *R, int apart) {
    meets_lanes_as_plain(O, J, R);
    kept_lines_as_fresh(O, J, R, apart);
    kept_seams_as_built(O, R);
    if (!apart) {
        declined++;
        return apart;
    }
    size_t nj, nr, bad = 0, shared = 0;
    ptri *j = clu_tris(O, J, &nj), *r = clu_tris(O, R, &nr);
    for (size_t a = 0; a < nj; a++)
        for (size_t b = 0; b < nr; b++) {
            bad += ptri_overlap(&j[a], &r[b]);
            for (int u = 0; u < 3; u++)
                for (int v = 0; v < 3; v++) shared += j[a].v[u][0] == r[b].v[v][0] && j[a].v[u][1] == r[b].v[v][1];
        }
    free(j);
    free(r);
    cr_assert_eq(bad, 0, "a junction and road passed by the bent line have %zu overlapping pairs of triangles", bad);
    passed++;
    passed5 += (O->rside[R->road] & 48u) != 0;   /* (an end by the seam of five: a road with a sidewalk) */
    touching += shared > 0;
    return apart;
}

/* runs random networks, every period-th crowded, the rest turned grids,
 * each built with the bent line on, then off, and compared. */
static int both_ways(uint64_t seed, int runs, int period) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    int built = 0;
    for (int it = 0; it < runs; it++) {
        net n;
        if (it % period) turned_grid(&n, &r, 0.6);
        else crowded_net(&n, &r, (it / period) % 5, false);
        if (n.nedges == 0) continue;
        if (net_crosses(&n)) continue;   /* (refused before the check) */
        same_with_and_without(&n, it, &bent_off);
        built++;
    }
    return built;
}

Test(network_overlap_bent, bent_line_against_all_pairs_and_without_it, .timeout = 600) {
    int built = both_ways(20261213, 1500, 3);
    cr_log_info("bent line: %zu pairs passed (%zu touching, %zu by a seam of five), %zu declined; %d networks", passed,
                touching, passed5, declined, built);
    cr_assert_geq(passed5, 1000, "only %zu pairs passed by the seam of five", passed5);
    cr_assert_geq(seams_kept, 1000, "only %zu kept seams of five compared", seams_kept);
    cr_assert_geq(seams_read, 1000, "only %zu seams of five read checked", seams_read);
    cr_assert_geq(windows, 1000, "only %zu windows of over 32 triangles checked", windows);
    cr_assert_geq(passed, 5000, "only %zu pairs passed by the bent line", passed);
    cr_assert_geq(touching, 5000, "only %zu touching pairs passed", touching);
    cr_assert_geq(declined, 100, "only %zu pairs declined", declined);
    cr_assert_geq(boxes_compared, 100000, "only %zu boxes compared in lanes", boxes_compared);
    cr_log_info("kept bent lines: %zu checked (%zu with their turn found), %zu road corners on their side",
                kept_checked, kept_turned, kept_corners);
    cr_assert_geq(kept_checked, 5000, "only %zu kept bent lines checked", kept_checked);
}

/* pm__meets_m against pm__meets on boxes of few distinct values (edges
 * equal, touching, -0 against +0, infinities, NaN). */
Test(network_overlap_bent, box_meeting_in_lanes_as_plain) {
    const float v[] = {-2.0f, -1.0f, -0.0f, 0.0f, 1.0f, 2.0f, INFINITY, -INFINITY, NAN, 1e-30f, -1e30f};
    const int nv = (int)(sizeof v / sizeof v[0]);
    pm_rng r;
    pm_rng_seed(&r, 20261202);
    size_t met = 0, not_met = 0;
    for (int it = 0; it < 400000; it++) {
        float a[4], b[4];
        for (int i = 0; i < 4; i++) {
            a[i] = v[pm_rng_int(&r, 0, nv - 1)];
            b[i] = pm_rng_chance(&r, 0.3) ? v[pm_rng_int(&r, 0, nv - 1)] : (float)pm_rng_range(&r, -3, 3);
        }
        pm_pbox X = {.lo = {a[0], a[1]}, .hi = {a[2], a[3]}};
        bool plain = pm__meets(X.lo, X.hi, b, b + 2);
        cr_assert_eq(pm__meets_m(&X, pm__mbox_of(b, b + 2)), plain, "box (%g %g %g %g) against (%g %g %g %g)", a[0],
                     a[1], a[2], a[3], b[0], b[1], b[2], b[3]);
        met += plain, not_met += !plain;
    }
    cr_assert_geq(met, 10000);
    cr_assert_geq(not_met, 10000);
}

Test(network_overlap_bent, brute_force_oracle_with_the_bent_line, .timeout = 300) {
    int accepted[5] = {0}, refused[5] = {0}, own = 0;
    size_t before = passed;
    oracle_run(20261214, 800, false, accepted, refused, &own);
    for (int k = 0; k < 4; k++) cr_assert_geq(refused[k], 8, "kind %d: only %d refused for overlaps", k, refused[k]);
    cr_assert_geq(passed - before, 300, "the bent line passed only %zu pairs", passed - before);
}

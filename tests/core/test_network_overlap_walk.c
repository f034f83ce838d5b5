/* The road certificate by rows and bands in core/network/network_overlap.c
 * (pm__road_walk, network_overlap_walk.h: a road with a sidewalk
 * recognised as its asphalt strip and its sidewalk's band pieces, the
 * loop left once the seam cancels known without summing its edges or
 * giving its points ids, then shown simple whatever its shape) against
 * the summed way (pm__road_summed, pm__seam_loop) on every road it
 * decides, on thousands of random networks with sidewalks (grids like
 * the networks bench's, turned by any angle, nodes rounded to the mm
 * now and then, close junctions, wide and narrow streets, bent often, and
 * pm_test_overlap_oracle.h's networks built to overlap):
 *  - a road it decides is decided the same by the sum: shown, with the
 *    same cluster (the same bounds);
 *  - every road it shows has no overlapping pair of triangles (all pairs,
 *    pm_test_overlap.h's own exact test), and against the brute-force
 *    oracle over whole networks;
 *  - with a defect put into the road's triangles before both are asked
 *    (a triangle flipped, an index moved or repeated, a vertex moved onto
 *    another, an outer point pulled onto or across the asphalt, an inner
 *    point moved off its twin or a coordinate made -0, an outer point
 *    mirrored part way into the asphalt or moved past another, folding
 *    the band over itself or a neighbour), then put back: the walk still
 *    agrees with the sum whenever it decides, and shows no road whose
 *    triangles overlap.
 * network_overlap.c is compiled into this test with the hook below (its
 * one external symbol is defined here, so the linker takes this copy). */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>

typedef struct pm__ov pm__ov;
typedef struct pm__range pm__range;
static int walk_hook(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap, bool *sure);
#define PM__WALK walk_hook
static bool chains_hook(const float *xz, uint32_t m, const float d[2]);
#define PM__WALK_CHAINS chains_hook
#include "../../core/network/network_overlap.c"

#include "pm_test_overlap_oracle.h"
#include "pm_test_overlap_road.h"

static size_t decided, undecided, defects, defects_decided, defects_refused;
static pm_rng dr;                      /* the defects' generator */
static int defect_rate;                /* one road in this many gets a defect (0: none) */

#ifdef __SSE2__
static size_t laid_read, plain_only, neither, chained[2], chains_asked;

/* The outline's two chains (pm__two_chains), off for every fourth road
 * asked (the loop tests decide those). */
static bool chains_hook(const float *xz, uint32_t m, const float d[2]) {
    bool two = chains_asked++ % 4 != 3 && pm__two_chains(xz, m, d);
    chained[two]++;
    return two;
}

/* Road r's bands read the laid-out way (pm__bands_laid) and the plain
 * way: whenever the first reads them, the second reads the same pieces,
 * outer vertices, turn and span, and lists no far edge. */
static void bands_compare(const pm__ov *O, uint32_t r, const pm__range *rg, size_t n) {
    const pm__range *S = &rg[n - 1];
    uint32_t ns = O->sc->nprims == 3 ? O->sc->prims[2].icount / 3 : 0;
    if (n < 2 || S->count == 0 || !(S->ref0 & PM__SW) || O->N->swsrc.len != ns) return;
    size_t cp = (size_t)S->count / 2 + 1, co = (size_t)S->count + 2;
    pm__bpiece *pa = calloc(cp, sizeof *pa), *pb = calloc(cp, sizeof *pb);
    uint32_t *oa = calloc(co, sizeof *oa), *ob = calloc(co, sizeof *ob);
    cr_assert(pa && pb && oa && ob);
    uint32_t na = 0, nb = 0, sa = 0, sb = 0, far = 0;
    int ta = 0, tb = 0;
    bool laid = pm__bands_laid(O, r, S, pa, &na, oa, &ta, &sa);
    bool plain = pm__bands_plain(O, r, S, pb, &nb, ob, &tb, &far, &sb);
    if (laid) {
        cr_assert(plain, "road %u: its bands read laid out, not the plain way", r);
        cr_assert(na == nb && ta == tb && sa == sb && far == 0, "road %u: %u pieces, turn %d, span %u; plain %u, %d, %u, far %u",
                  r, na, ta, sa, nb, tb, sb, far);
        cr_assert(na > 0 && !memcmp(pa, pb, na * sizeof *pa), "road %u: the pieces differ", r);
        uint32_t nout = pa[na - 1].first + pa[na - 1].hi - pa[na - 1].lo + 2;
        cr_assert(!memcmp(oa, ob, nout * sizeof *oa), "road %u: the outer vertices differ", r);
    }
    laid_read += laid, plain_only += !laid && plain, neither += !laid && !plain;
    free(pa), free(pb), free(oa), free(ob);
}

/* The walk, then the summed way on the same triangles: the same. */
static int walk_compare(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap, bool *sure) {
    bands_compare(O, r, rg, n);
    int rc = pm__road_walk(O, r, rg, n, cap, sure);
    if (rc < 0 || !*sure) return rc;
    cr_assert_eq(rc, 1, "road %u: the walk decides only what it shows", r);
    pm__clu mine = O->clu[--O->nclu];
    int summed = pm__road_summed(O, r, rg, n, cap);
    cr_assert_eq(summed, 1, "road %u: shown by its walk, the sum says %d", r, summed);
    const pm__clu *C = &O->clu[O->nclu - 1];
    cr_assert(C->road == r && C->count == 0 && C->node == UINT32_MAX, "road %u", r);
    for (int c = 0; c < 2; c++)
        cr_assert(!memcmp(&mine.lo[c], &C->lo[c], sizeof(float)) && !memcmp(&mine.hi[c], &C->hi[c], sizeof(float)),
                  "road %u, axis %d: [%g, %g], summed [%g, %g]", r, c, mine.lo[c], mine.hi[c], C->lo[c], C->hi[c]);
    cr_assert_eq(road_overlaps(O, rg, n), 0, "road %u shown by its walk overlaps itself", r);
    return rc;
}

/* A defect in road r's triangles (rg), made in place; undo restores. */
typedef struct undo { float *f; float fv[3]; uint32_t *i; uint32_t iv[3]; float *all, *copy; size_t nall; } undo;

static void defect(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, undo *u) {
    pm_prim *A = (pm_prim *)&O->sc->prims[0], *Q = (pm_prim *)&O->sc->prims[2];
    const pm__range *S = &rg[n - 1];
    uint32_t s0 = S->ref0 & ~PM__SW, t = s0 + (uint32_t)pm_rng_below(&dr, S->count);
    uint32_t *q = Q->indices + 3 * (size_t)t, kind = (uint32_t)pm_rng_below(&dr, 13);
    u->f = NULL, u->i = q, u->all = u->copy = NULL;
    memcpy(u->iv, q, sizeof u->iv);
    /* A vertex of the road's sidewalk, of its asphalt. */
    uint32_t sv = Q->indices[3 * ((size_t)s0 + pm_rng_below(&dr, S->count)) + pm_rng_below(&dr, 3)];
    const pm__road *R = &O->N->roads.data[r];
    uint32_t av = R->voff + (uint32_t)pm_rng_below(&dr, R->vcount ? R->vcount : 1);
    float *p = NULL;
    if (kind == 12) {
        /* Every outer point of the road's sidewalk mirrored part way across
         * its inner one (a band's corner 0 is inner, 1 outer): bands that
         * all turn the other way, lying on the asphalt. */
        u->i = NULL, u->nall = 3 * (size_t)Q->vcount, u->all = Q->positions;
        u->copy = malloc(u->nall * sizeof *u->copy + 1);
        uint8_t *role = calloc((size_t)Q->vcount + 1, 1);   /* bit 0 inner, bit 1 outer */
        cr_assert(u->copy && role);
        memcpy(u->copy, Q->positions, u->nall * sizeof *u->copy);
        for (uint32_t k = s0; k < s0 + S->count; k++) {
            const uint32_t *w = Q->indices + 3 * (size_t)k;
            role[w[0]] |= 1, role[w[1]] |= 2;
        }
        /* (A section's outer vertex follows its inner one.) */
        double f = pm_rng_range(&dr, 0.1, 0.9);
        for (uint32_t w = 1; w < Q->vcount; w++) {
            if (role[w] != 2 || role[w - 1] != 1) continue;
            const float *i0 = u->copy + 3 * (size_t)(w - 1);
            float *o = Q->positions + 3 * (size_t)w;
            o[0] = (float)(i0[0] + (i0[0] - (double)o[0]) * f), o[2] = (float)(i0[2] + (i0[2] - (double)o[2]) * f);
        }
        free(role);
        return;
    }
    if (kind >= 10) {
        /* The asphalt: a triangle flipped, or a vertex folded across another. */
        uint32_t ta = rg[0].ref0 + (uint32_t)pm_rng_below(&dr, rg[0].count ? rg[0].count : 1);
        if (kind == 10 && rg[0].count) {
            q = u->i = A->indices + 3 * (size_t)ta;
            memcpy(u->iv, q, sizeof u->iv);
            uint32_t x = q[1];
            q[1] = q[2], q[2] = x;
            return;
        }
        p = A->positions + 3 * (size_t)av;
        u->i = NULL, u->f = p;
        memcpy(u->fv, p, sizeof u->fv);
        const float *o = A->positions + 3 * (size_t)(R->voff + (uint32_t)pm_rng_below(&dr, R->vcount ? R->vcount : 1));
        double f = pm_rng_range(&dr, 0.5, 2.5);
        p[0] = (float)(p[0] + (o[0] - (double)p[0]) * f), p[2] = (float)(p[2] + (o[2] - (double)p[2]) * f);
        return;
    }
    switch (kind) {
    case 0: { uint32_t x = q[1]; q[1] = q[2], q[2] = x; } break;      /* flipped */
    case 1: q[pm_rng_below(&dr, 3)] = sv; break;                      /* an index moved */
    case 2: q[2] = q[pm_rng_below(&dr, 2)]; break;                    /* an index repeated */
    case 8: case 9: p = Q->positions + 3 * (size_t)q[1]; break;     /* a band triangle's corner 1 is outer */
    default: p = Q->positions + 3 * (size_t)q[pm_rng_below(&dr, 3)]; break;
    }
    if (!p) return;
    u->i = NULL, u->f = p;
    memcpy(u->fv, p, sizeof u->fv);
    const float *a = A->positions + 3 * (size_t)av;
    switch (kind) {
    case 3: memcpy(p, Q->positions + 3 * (size_t)sv, 3 * sizeof *p); break;   /* onto another */
    case 4: p[0] = a[0], p[2] = a[2]; break;                                  /* onto the asphalt's */
    case 5: p[0] = (float)(a[0] + (p[0] - (double)a[0]) * pm_rng_range(&dr, -1.5, 0.9));   /* pulled in */
        p[2] = (float)(a[2] + (p[2] - (double)a[2]) * pm_rng_range(&dr, -1.5, 0.9)); break;
    case 6: p[pm_rng_below(&dr, 2) ? 0 : 2] += (float)pm_rng_range(&dr, -0.01, 0.01); break;  /* off its twin */
    case 7: p[pm_rng_below(&dr, 2) ? 0 : 2] = -0.0f; break;
    case 8: {   /* an outer point mirrored part way into the asphalt (corner 0 is inner) */
        const float *i0 = Q->positions + 3 * (size_t)q[0];
        double f = pm_rng_range(&dr, 0.05, 0.9);
        p[0] = (float)(i0[0] + (i0[0] - (double)p[0]) * f), p[2] = (float)(i0[2] + (i0[2] - (double)p[2]) * f);
    } break;
    default: {  /* an outer point moved towards or past another */
        const float *o = Q->positions + 3 * (size_t)Q->indices[3 * ((size_t)s0 + pm_rng_below(&dr, S->count)) + 1];
        double f = pm_rng_range(&dr, 0.3, 1.5);
        p[0] = (float)(p[0] + (o[0] - (double)p[0]) * f), p[2] = (float)(p[2] + (o[2] - (double)p[2]) * f);
    } break;
    }
}

static void restore(const undo *u) {
    if (u->all) memcpy(u->all, u->copy, u->nall * sizeof *u->copy), free(u->copy);
    if (u->i) memcpy(u->i, u->iv, sizeof u->iv);
    if (u->f) memcpy(u->f, u->fv, sizeof u->fv);
}

static int walk_hook(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap, bool *sure) {
    int rc = walk_compare(O, r, rg, n, cap, sure);
    if (rc >= 0 && *sure) decided++;
    else if (rc >= 0) undecided++;
    if (rc == 1 && defect_rate && pm_rng_below(&dr, (uint64_t)defect_rate) == 0) {
        /* A road the walk shows, asked again with a defect. */
        pm__clu mine = O->clu[--O->nclu];
        undo u;
        defect(O, r, rg, n, &u);
        bool s = false;
        int again = walk_compare(O, r, rg, n, cap, &s);
        cr_assert_geq(again, 0);
        if (s) O->nclu--;   /* (its cluster, taken back) */
        restore(&u);
        O->clu[O->nclu++] = mine;
        defects++;
        defects_decided += s;
        defects_refused += !s;
    }
    return rc;
}
#else
static int walk_hook(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap, bool *sure) {
    (void)O, (void)r, (void)rg, (void)n, (void)cap;
    *sure = false;
    return 0;
}
#endif

static size_t oracle_accepted, oracle_refused;

/* The network built; with oracle, an accepted one has no overlapping pair
 * of triangles at all, and one refused for overlaps has some. */
static void build(const net *n, bool oracle) {
    pm_arena *a = pm_arena_create(1 << 20);
    uint32_t pairs[4][2];
    if (pm_network_crossings(a, &n->p, pairs, 4) == 0) {
        pm_scene *s = NULL;
        pm_network_diag d;
        int rc = pm_network_generate(a, &n->p, &s, &d);
        cr_assert(rc == PM_OK || rc == PM_ERR_GEOMETRY, "rc %d", rc);
        bool overlaps = rc == PM_ERR_GEOMETRY && d.nproblems > 0 && d.problems[0].error == PM_NETWORK_OVERLAP;
        if (oracle && s && (rc == PM_OK || overlaps)) {
            size_t nt;
            ptri *t = ptri_from_prims(s, surfaces, &nt);
            size_t bad = all_pairs(t, nt);
            free(t);
            if (rc == PM_OK) cr_assert_eq(bad, 0, "a network built with %zu overlapping pairs", bad);
            else cr_assert_gt(bad, 0, "a network refused for overlaps the oracle does not find: %s", d.problems[0].message);
            oracle_accepted += rc == PM_OK;
            oracle_refused += rc != PM_OK;
        }
    }
    pm_arena_destroy(a);
}

/* A grid of gx by gz nodes about S apart (close now and then), turned
 * by some angle (30 degrees as the networks bench's, or any), its nodes
 * rounded to the mm or jittered now and then, a sidewalk on most
 * streets, wide or narrow, bent often. */
#define PI 3.14159265358979323846

static void sidewalk_grid(net *n, pm_rng *r) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 5), gz = (int)pm_rng_int(r, 2, 5);
    double S = pm_rng_chance(r, 0.2) ? pm_rng_range(r, 14, 25) : pm_rng_range(r, 25, 120);
    double jit = pm_rng_chance(r, 0.8) ? 0 : pm_rng_range(r, 0, 6);
    double th = pm_rng_chance(r, 0.2) ? 0 : pm_rng_chance(r, 0.4) ? PI / 6 : pm_rng_range(r, 0, 2 * PI);
    double c = cos(th), sn = sin(th), x0 = pm_rng_range(r, -500, 500), z0 = pm_rng_range(r, -500, 500);
    bool mm = pm_rng_chance(r, 0.5);
    uint32_t id[5][5];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            double x = i * S + pm_rng_range(r, -jit, jit), z = -j * S + pm_rng_range(r, -jit, jit);
            double X = x0 + c * x - sn * z, Z = z0 + sn * x + c * z;
            if (mm) X = round(X * 1000) / 1000, Z = round(Z * 1000) / 1000;
            id[i][j] = node(n, X, 0, Z);
        }
    double sw = pm_rng_range(r, 1, 4);
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++)
            for (int d = 0; d < 2; d++) {
                if (d == 0 ? i + 1 >= gx : j + 1 >= gz) continue;
                pm_network_edge *e = edge(n, id[i][j], d == 0 ? id[i + 1][j] : id[i][j + 1],
                                          pm_rng_chance(r, 0.5) ? pm_rng_range(r, 5, 8) : pm_rng_range(r, 8, 14));
                e->has_sidewalk = pm_rng_chance(r, 0.9);
                e->sidewalk = (pm_junction_sidewalk){sw, 0.15};
                const double *p = n->nodes + 3 * e->from, *q = n->nodes + 3 * e->to;
                if (pm_rng_chance(r, 0.3))
                    bend(n, e, (p[0] + q[0]) / 2 + pm_rng_range(r, -0.2, 0.2) * S,
                         (p[2] + q[2]) / 2 + pm_rng_range(r, -0.2, 0.2) * S);
            }
    n->p.corner_radius = pm_rng_chance(r, 0.5) ? 0 : pm_rng_range(r, 0, 6);
    if (pm_rng_chance(r, 0.5)) n->p.max_segment = pm_rng_range(r, 3, 30);
    finish(n);
}

/* count sidewalk grids from seed, built (with the oracle). */
static void grids(uint64_t seed, int count, bool oracle) {
    pm_rng r;
    pm_rng_seed(&r, seed);
    for (int it = 0; it < count; it++) {
        net n;
        sidewalk_grid(&n, &r);
        build(&n, oracle);
    }
}

Test(network_overlap_walk, bands_against_the_sum_on_every_road, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261207);
    pm_rng_seed(&dr, 20261208);
    for (int it = 0; it < 1200; it++) {
        net n;
        crowded_net(&n, &r, it % 5, false);
        for (size_t e = 0; e < n.nedges; e++) n.edges[e].has_sidewalk |= it % 2 == 0;
        if (n.nedges) build(&n, false);
    }
    size_t crowded = decided;
    grids(20261213, 800, false);
    cr_log_info("roads with a sidewalk by their walk: %zu shown (%zu in crowded networks), %zu left to the sum",
                decided, crowded, undecided);
#ifdef __SSE2__
    cr_assert_geq(decided, 1000, "only %zu roads shown by their walk", decided);
    cr_assert_geq(undecided, 100, "only %zu roads left to the sum", undecided);
#endif
}

Test(network_overlap_walk, defects_against_the_sum, .timeout = 300) {
    pm_rng_seed(&dr, 20261210);
    defect_rate = 1;
    grids(20261209, 1200, false);
    defect_rate = 0;
    cr_log_info("defects: %zu roads, %zu still shown by their walk, %zu left to the sum", defects, defects_decided,
                defects_refused);
    cr_log_info("bands: %zu read laid out, %zu only the plain way, %zu by neither", laid_read, plain_only, neither);
    cr_log_info("outlines: %zu shown by their two chains, %zu not", chained[1], chained[0]);
    cr_assert_geq(chained[1], 5000, "only %zu outlines shown by their chains", chained[1]);
    cr_assert_geq(chained[0], 1000, "only %zu outlines not shown by their chains", chained[0]);
#ifdef __SSE2__
    cr_assert_geq(laid_read, 10000, "only %zu roads' bands read laid out", laid_read);
    cr_assert_geq(neither, 1000, "only %zu roads' bands refused both ways", neither);
    cr_assert_geq(defects_decided, 50, "only %zu roads with a defect decided", defects_decided);
    cr_assert_geq(defects_refused, 1000, "only %zu roads with a defect refused", defects_refused);
#endif
}

Test(network_overlap_walk, brute_force_oracle_with_bands, .timeout = 300) {
    grids(20261211, 300, true);
    int accepted[5] = {0}, refused[5] = {0}, own = 0;
    oracle_run(20261212, 500, false, accepted, refused, &own);
    cr_log_info("oracle on sidewalk grids: %zu accepted, %zu refused for overlaps; %zu roads by their walk",
                oracle_accepted, oracle_refused, decided);
    cr_assert_geq(oracle_accepted, 100);
    for (int k = 0; k < 4; k++) cr_assert_geq(refused[k], 5, "kind %d: only %d refused for overlaps", k, refused[k]);
#ifdef __SSE2__
    cr_assert_geq(decided, 400, "the walk decided only %zu roads", decided);
#endif
}

/* The road certificate by rows in core/network/network_overlap.c
 * (pm__road_strip: a road's asphalt recognised as one strip of rows, its
 * border known without summing its edges) against the summed way
 * (pm__road_summed) on every road it decides, on thousands of random
 * networks at the default detail built to overlap
 * (pm_test_overlap_oracle.h) and on plain grids without sidewalks (the
 * networks bench's kind):
 *  - a road it decides is decided the same by the sum: shown or not, and
 *    a shown road gets the same cluster (the same bounds);
 *  - every road it shows has no overlapping pair of triangles (all pairs,
 *    pm_test_overlap.h's own exact test);
 *  - the rows' fast form (two column pairs, two lanes at a time) gives
 *    what the plain form gives on random strips with defects (a turned,
 *    flat or shuffled triangle, a repeated vertex, a fold).
 * network_overlap.c is compiled into this test with the hook below (its
 * one external symbol is defined here, so the linker takes this copy). */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pm__ov pm__ov;
typedef struct pm__range pm__range;
static int strip_hook(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap, bool *sure);
#define PM__STRIP strip_hook
typedef struct pm__sides pm__sides;
static bool once_hook(const uint32_t *row, uint32_t G, const pm__sides *sd);
#define PM__BORDER2_ONCE once_hook
#include "../../core/network/network_overlap.c"

#include "pm_test_overlap_oracle.h"
#include "pm_test_overlap_road.h"

static size_t decided[2], undecided, with_sidewalk, walked[2];
static bool by_vertex;                 /* the border walked vertex by vertex (stamps), not copied */

static bool once_hook(const uint32_t *row, uint32_t G, const pm__sides *sd) {
    bool once = !by_vertex && pm__border2_once(row, G, sd);
    walked[once]++;
    return once;
}

static int strip_hook(pm__ov *O, uint32_t r, const pm__range *rg, size_t n, size_t cap, bool *sure) {
    int rc = pm__road_strip(O, r, rg, n, cap, sure);
    with_sidewalk += rg[n - 1].count > 0;
    if (rc < 0 || !*sure) {
        undecided += rc >= 0 && rg[n - 1].count == 0;
        return rc;
    }
    pm__clu mine = {0};
    if (rc == 1) mine = O->clu[--O->nclu];
    int summed = pm__road_summed(O, r, rg, n, cap);
    cr_assert_eq(rc, summed, "road %u: by rows %d, summed %d", r, rc, summed);
    if (rc == 1) {
        const pm__clu *C = &O->clu[O->nclu - 1];
        cr_assert(C->road == r && C->count == 0 && C->node == UINT32_MAX, "road %u", r);
        for (int c = 0; c < 2; c++)
            cr_assert(mine.lo[c] == C->lo[c] && mine.hi[c] == C->hi[c], "road %u, axis %d: [%g, %g], summed [%g, %g]",
                      r, c, mine.lo[c], mine.hi[c], C->lo[c], C->hi[c]);
        cr_assert_eq(road_overlaps(O, rg, n), 0, "road %u shown by its rows overlaps itself", r);
    }
    decided[rc == 1]++;
    return rc;
}

static void build(const net *n) {
    static unsigned count;
    by_vertex = count++ % 3 == 0;
    pm_arena *a = pm_arena_create(1 << 20);
    uint32_t pairs[4][2];
    if (pm_network_crossings(a, &n->p, pairs, 4) == 0) {
        pm_scene *s = NULL;
        pm_network_diag d;
        int rc = pm_network_generate(a, &n->p, &s, &d);
        cr_assert(rc == PM_OK || rc == PM_ERR_GEOMETRY, "rc %d", rc);
    }
    pm_arena_destroy(a);
}

/* A grid of gx by gz nodes about S apart (jittered), every street, bent
 * now and then, no sidewalks. */
static void plain_grid(net *n, pm_rng *r) {
    net_init(n);
    int gx = (int)pm_rng_int(r, 2, 5), gz = (int)pm_rng_int(r, 2, 5);
    double S = pm_rng_range(r, 40, 120), jit = pm_rng_chance(r, 0.5) ? 0 : pm_rng_range(r, 0, 6);
    uint32_t id[5][5];
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++)
            id[i][j] = node(n, i * S + pm_rng_range(r, -jit, jit), 0, -j * S + pm_rng_range(r, -jit, jit));
    for (int i = 0; i < gx; i++)
        for (int j = 0; j < gz; j++) {
            if (i + 1 < gx) {
                pm_network_edge *e = edge(n, id[i][j], id[i + 1][j], pm_rng_range(r, 5, 12));
                const double *p = n->nodes + 3 * e->from, *q = n->nodes + 3 * e->to;
                if (pm_rng_chance(r, 0.3))
                    bend(n, e, (p[0] + q[0]) / 2, (p[2] + q[2]) / 2 + pm_rng_range(r, -0.3, 0.3) * S);
            }
            if (j + 1 < gz) edge(n, id[i][j], id[i][j + 1], pm_rng_range(r, 5, 12));
        }
    n->p.corner_radius = pm_rng_chance(r, 0.5) ? 0 : pm_rng_range(r, 0, 6);
    if (pm_rng_chance(r, 0.5)) n->p.max_segment = pm_rng_range(r, 3, 30);
    finish(n);
}

/* One road round three sides of a rectangle whose end comes back past
 * its start, gap apart: its ends lie on each other when the gap is less
 * than its width (its rows then do not show it). */
static void hook(net *n, pm_rng *r) {
    net_init(n);
    double L = pm_rng_range(r, 30, 80), H = pm_rng_range(r, 30, 80), gap = pm_rng_range(r, 1, 10);
    double w = pm_rng_range(r, 4, 10), x1 = pm_rng_range(r, -10, 10);
    pm_network_edge *e = edge(n, node(n, 0, 0, 0), node(n, x1, 0, gap), w);
    double *q = n->pts + 3 * n->npts;
    double p[9] = {L, 0, pm_rng_range(r, -2, 2), L, 0, H, -pm_rng_range(r, 0, 20), 0, H};
    memcpy(q, p, sizeof p);
    n->npts += 3;
    e->points = q;
    e->npoints = 3;
    if (pm_rng_chance(r, 0.5)) n->p.max_segment = pm_rng_range(r, 3, 30);
    finish(n);
}

Test(network_overlap_strip, rows_against_the_sum_on_every_road, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261204);
    for (int it = 0; it < 1500; it++) {
        net n;
        crowded_net(&n, &r, it % 5, false);
        if (n.nedges) build(&n);
    }
    for (int it = 0; it < 150; it++) {
        net n;
        plain_grid(&n, &r);
        build(&n);
    }
    for (int it = 0; it < 300; it++) {
        net n;
        hook(&n, &r);
        build(&n);
    }
    cr_log_info("roads by rows: %zu shown, %zu not shown; %zu without sidewalk left to the sum, %zu with one; "
                "borders %zu copied, %zu walked", decided[1], decided[0], undecided, with_sidewalk, walked[1], walked[0]);
    cr_assert_geq(walked[0], 500);
    cr_assert_geq(walked[1], 1000);
    cr_assert_geq(decided[1], 2000, "only %zu roads shown by their rows", decided[1]);
    cr_assert_geq(decided[0], 40, "only %zu roads not shown by their rows", decided[0]);
}

Test(network_overlap_strip, brute_force_oracle_with_rows, .timeout = 300) {
    int accepted[5] = {0}, refused[5] = {0}, own = 0;
    size_t before = decided[0] + decided[1];
    oracle_run(20261205, 1000, false, accepted, refused, &own);
    for (int k = 0; k < 4; k++) cr_assert_geq(refused[k], 10, "kind %d: only %d refused for overlaps", k, refused[k]);
    cr_assert_geq(decided[0] + decided[1] - before, 300, "rows decided only %zu roads", decided[0] + decided[1] - before);
}

#ifdef __SSE2__
static pm_rng strips;
static bool seeded;

/* 0 .. n - 1 (the project's generator, seeded once). */
static uint32_t rnd(uint32_t n) {
    if (!seeded) pm_rng_seed(&strips, 20261206), seeded = true;
    return (uint32_t)pm_rng_below(&strips, n);
}

#define ROWS_MAX 24

Test(network_overlap_strip, two_column_pairs_fast_as_plain) {
    static float pos[3 * 4 * ROWS_MAX];
    static uint32_t idx[12 * ROWS_MAX], row[2][3 * (ROWS_MAX + 1)];
    size_t agree[2] = {0, 0}, online = 0, nrising = 0;
    for (int round = 0; round < 40000; round++) {
        /* Rows of three vertices along a wavy line (its direction either
         * way), numbered from a base, the ends sometimes elsewhere; then a
         * defect now and then. */
        uint32_t G = 1 + rnd(ROWS_MAX - 1), nv = 3 * (G + 1), base = rnd(4) ? 0 : 40;
        double dir = rnd(2) ? 1 : -1, wid = 0.5 + rnd(8), step = rnd(3) ? 1 + rnd(6) : 0.001 * (1 + rnd(4));
        for (uint32_t i = 0; i <= G; i++)
            for (uint32_t c = 0; c < 3; c++) {
                float *p = pos + 3 * (3 * i + c);
                double x = dir * step * i, z = (c - 1.0) * wid / 2 * dir + (rnd(3) == 0 ? rnd(5) * 0.25 : 0);
                if (rnd(4) == 0) x += (c - 1.0) * rnd(3) * 0.5;   /* slanted rows */
                p[0] = (float)x, p[1] = 0, p[2] = (float)z;
                if (rnd(50) == 0) p[0] = p[2] = 0;                /* onto the origin */
            }
        uint32_t *q = idx;
        for (uint32_t g = 0; g < G; g++) {
            uint32_t A[3] = {3 * g, 3 * g + 1, 3 * g + 2}, B[3] = {3 * g + 3, 3 * g + 4, 3 * g + 5};
            uint32_t t[12] = {A[0], A[1], B[0], A[1], B[1], B[0], A[1], A[2], B[1], A[2], B[2], B[1]};
            memcpy(q, t, sizeof t);
            q += 12;
        }
        for (uint32_t i = 0; i < 12 * G; i++) idx[i] += base;
        uint32_t defect = rnd(7);
        if (defect == 0) {                                        /* a triangle turned */
            uint32_t t = rnd(4 * G), x = idx[3 * t + 1];
            idx[3 * t + 1] = idx[3 * t + 2], idx[3 * t + 2] = x;
        } else if (defect == 1) {
            idx[rnd(12 * G)] = base + rnd(nv);                    /* an index moved */
        } else if (defect == 2) {                                 /* a vertex repeated */
            uint32_t v = rnd(nv), w = rnd(nv);
            memcpy(pos + 3 * v, pos + 3 * w, 3 * sizeof *pos);
        } else if (defect == 3) {
            /* A row on the line of the one before (rounded to floats:
             * turns too close to call in doubles, taken exactly). */
            uint32_t i = 1 + rnd(G);
            const float *a = pos + 3 * (3 * i - 3), *c = pos + 3 * (3 * i - 1);
            for (uint32_t k = 0; k < 3; k++) {
                double f = rnd(2) ? 0.1 + 0.37 * k : 1.3 + 0.41 * k;
                pos[3 * (3 * i + k)] = (float)(a[0] + (c[0] - (double)a[0]) * f);
                pos[3 * (3 * i + k) + 2] = (float)(a[2] + (c[2] - (double)a[2]) * f);
            }
        }
        if (rnd(4) == 0) {
            /* Numbered otherwise: backwards, or two vertices swapped (the
             * inner rows no longer rise). */
            static float moved[3 * 4 * ROWS_MAX];
            uint32_t perm[3 * (ROWS_MAX + 1)], a = rnd(nv), b = rnd(nv), back = rnd(2);
            for (uint32_t v = 0; v < nv; v++) perm[v] = back ? nv - 1 - v : v;
            if (!back) perm[a] = b, perm[b] = a;
            for (uint32_t v = 0; v < nv; v++) memcpy(moved + 3 * perm[v], pos + 3 * v, 3 * sizeof *pos);
            memcpy(pos, moved, 3 * (size_t)nv * sizeof *pos);
            for (uint32_t i = 0; i < 12 * G; i++)
                if (idx[i] - base < nv) idx[i] = base + perm[idx[i] - base];
        }
        const float *P = pos - 3 * (size_t)base;
        uint32_t t = 4 * G - (rnd(20) == 0), span = rnd(3) ? nv : rnd(nv + 1), far[2];
        int turn[2];
        static float side[2][2 * (ROWS_MAX + 1)];
        pm__sides sd = {.xz = {side[0], side[1]}};
        bool fast = pm__strip_rows2(idx, t, P, row[0], &turn[0], base, span, &far[0], &sd);
        bool plain = pm__strip_rows(idx, t, P, 2, row[1], &turn[1]) &&
                     pm__strip_far(row[1], 2, t / 4, base, span, &far[1]);
        cr_assert_eq(fast, plain, "round %d: fast %d, plain %d", round, fast, plain);
        agree[fast]++;
        if (!fast) continue;
        cr_assert_eq(turn[0], turn[1], "round %d", round);
        cr_assert_eq(far[0], far[1], "round %d: far %u, plainly %u", round, far[0], far[1]);
        cr_assert(!memcmp(row[0], row[1], 3 * (t / 4 + 1) * sizeof **row), "round %d: rows differ", round);
        /* The outer columns' points; the inner rows rising. */
        uint32_t ng = t / 4;
        bool rising = true;
        for (uint32_t g = 0; g <= ng; g++) {
            for (int c = 0; c < 2; c++) {
                const float *p = P + 3 * (size_t)row[1][3 * g + 2 * c];
                cr_assert(side[c][2 * g] == p[0] && side[c][2 * g + 1] == p[2], "round %d: row %u", round, g);
            }
            if (g >= 1 && g < ng) rising &= row[1][3 * g] < row[1][3 * g + 2];
            if (g >= 1 && g + 1 < ng) rising &= row[1][3 * g + 2] < row[1][3 * g + 3];
        }
        cr_assert_eq(sd.rising, rising, "round %d", round);
        nrising += rising;
        online += defect == 3;
    }
    cr_assert_gt(agree[1], 3000, "only %zu strips taken", agree[1]);
    cr_assert_gt(agree[0], 10000, "only %zu strips refused", agree[0]);
    cr_assert_gt(online, 10, "only %zu strips with a row on the line before taken", online);
    cr_assert_gt(nrising, 1000);
    cr_assert_lt(nrising, agree[1], "every strip taken rose");
}
#endif

#ifdef __SSE2__
/* pm__border2_once against every pair of border vertices, on random rows
 * (mostly rising, end rows anywhere, repeats now and then). */
Test(network_overlap_strip, border_once_against_all_pairs) {
    static uint32_t row[3 * (ROWS_MAX + 1)], border[2 * ROWS_MAX + 4];
    size_t once = 0, repeats = 0;
    for (int round = 0; round < 100000; round++) {
        uint32_t G = 1 + rnd(ROWS_MAX - 1), v = 100;
        for (uint32_t g = 0; g <= G; g++)
            for (uint32_t c = 0; c < 3; c++) row[3 * g + c] = v += 1 + (rnd(8) == 0 ? 0 - rnd(3) : rnd(2));
        for (uint32_t e = 0; e < 6; e++)
            if (rnd(8) == 0) row[e < 3 ? e : 3 * G + e - 3] = rnd(3) ? rnd(200) : row[3 + rnd(3 * G - 3 + (G == 1 ? 3 : 0))];
        bool rising = true;
        for (uint32_t g = 1; g < G; g++) {
            rising &= row[3 * g] < row[3 * g + 2];
            if (g + 1 < G) rising &= row[3 * g + 2] < row[3 * g + 3];
        }
        pm__sides sd = {.rising = rising};
        uint32_t m = 0;
        border[m++] = row[0], border[m++] = row[1];
        for (uint32_t g = 0; g <= G; g++) border[m++] = row[3 * g + 2];
        border[m++] = row[3 * G + 1];
        for (uint32_t g = G; g > 0; g--) border[m++] = row[3 * g];
        bool distinct = true;
        for (uint32_t i = 0; i < m; i++)
            for (uint32_t j = i + 1; j < m; j++) distinct &= border[i] != border[j];
        bool got = pm__border2_once(row, G, &sd);
        cr_assert(!got || distinct, "round %d: a repeated border vertex passed", round);
        bool apart = true;   /* no end vertex among the inner rows' range */
        for (uint32_t e = 0; e < 6 && G >= 2; e++) {
            uint32_t x = row[e < 3 ? e : 3 * G + e - 3];
            apart &= x < row[3] || x > row[3 * G - 1];
        }
        if (rising && distinct && apart) cr_assert(got, "round %d", round);
        once += got;
        repeats += !distinct;
    }
    cr_assert_gt(once, 10000);
    cr_assert_gt(repeats, 10000);
}
#endif

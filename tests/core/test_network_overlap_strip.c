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
static bool mono_hook(const pm__sides *sd);
#define PM__STRIP_MONO mono_hook
#include "../../core/network/network_overlap.c"

#include "pm_test_overlap_oracle.h"
#include "pm_test_overlap_road.h"

static size_t decided[2], undecided, with_sidewalk, walked[2], chained[2];
static bool by_vertex;                 /* the border walked vertex by vertex (stamps), not copied */
static bool no_chains;                 /* the chains' proof off: the loop tests decide */

/* The indices of a network road's strip of three columns, G rows of
 * four triangles, vertices 3 g .. 3 g + 2 in row g (pm__strip_rows2's
 * order). */
static void strip_indices(uint32_t *q, uint32_t G) {
    for (uint32_t g = 0; g < G; g++) {
        uint32_t A[3] = {3 * g, 3 * g + 1, 3 * g + 2}, B[3] = {3 * g + 3, 3 * g + 4, 3 * g + 5};
        uint32_t t[12] = {A[0], A[1], B[0], A[1], B[1], B[0], A[1], A[2], B[1], A[2], B[2], B[1]};
        memcpy(q, t, sizeof t);
        q += 12;
    }
}

static bool mono_hook(const pm__sides *sd) {
    bool mono = !no_chains && sd->mono;
    chained[mono]++;
    return mono;
}

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
    by_vertex = count % 3 == 0;
    no_chains = count++ % 4 == 1;
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
                "borders %zu copied, %zu walked; %zu shown by their chains, %zu not",
                decided[1], decided[0], undecided, with_sidewalk, walked[1], walked[0], chained[1], chained[0]);
    cr_assert_geq(chained[1], 1000);
    cr_assert_geq(chained[0], 500);
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
        strip_indices(idx, G);
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
        pm__sides sd = {.xz = {side[0], side[1]}, .chains = rnd(2) == 0};
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

#ifdef __SSE2__
#define PI_ 3.14159265358979323846

/* Whether the closed loop xz (m points) is simple, pair by pair of edges
 * with exact orientations: neighbours meet only at their shared corner,
 * others not at all. */
static bool loop_simple_all_pairs(const float *xz, uint32_t m) {
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = i + 1; j < m; j++) {
            uint32_t i1 = (i + 1) % m, j1 = (j + 1) % m;
            double a[2] = {xz[2 * i], xz[2 * i + 1]}, b[2] = {xz[2 * i1], xz[2 * i1 + 1]};
            double c[2] = {xz[2 * j], xz[2 * j + 1]}, d[2] = {xz[2 * j1], xz[2 * j1 + 1]};
            if ((a[0] == b[0] && a[1] == b[1]) || (c[0] == d[0] && c[1] == d[1])) return false;
            double o1 = pm_orient2d(a, b, c), o2 = pm_orient2d(a, b, d);
            double o3 = pm_orient2d(c, d, a), o4 = pm_orient2d(c, d, b);
            bool nb = i1 == j || j1 == i;
            if (nb) {
                /* (a b then b d, or c d then d b): beyond the shared corner
                 * only when the far end lies back along the line. */
                const double *s = i1 == j ? a : c, *e = i1 == j ? d : b, *k = i1 == j ? b : a;
                if (pm_orient2d(s, k, e) != 0) continue;
                int c0 = k[0] != s[0] ? 0 : 1;   /* on one line: back when e - k opposes k - s there */
                if ((e[c0] - k[c0] > 0) != (k[c0] - s[c0] > 0)) return false;
                continue;
            }
            if ((o1 > 0 && o2 > 0) || (o1 < 0 && o2 < 0) || (o3 > 0 && o4 > 0) || (o3 < 0 && o4 < 0)) continue;
            if (o1 == 0 && o2 == 0) {   /* one line: meeting bounds meet */
                bool apart = false;
                for (int c0 = 0; c0 < 2; c0++) {
                    double l1 = fmin(a[c0], b[c0]), h1 = fmax(a[c0], b[c0]), l2 = fmin(c[c0], d[c0]), h2 = fmax(c[c0], d[c0]);
                    apart |= h1 < l2 || h2 < l1;
                }
                if (apart) continue;
            }
            return false;
        }
    return true;
}

/* The chains' proof (pm__sides.mono, and pm__two_chains on the border
 * as the walk asks it) against the loop's simplicity, pair
 * by pair and by pm_loop_simple's sweep, on random strips of two column
 * pairs: straight, bent, curled round onto themselves, zigzagging, rows
 * slanted or squashed, end rows bent, far from the origin (rounded), a
 * vertex thrown now and then, and short strips of points anywhere near
 * their rows (where chains that rise and triangles that turn one way
 * still leave end rows that cross the border); every strip shown must
 * be simple. */
Test(network_overlap_strip, chains_shown_simple) {
    static float pos[3 * 3 * (ROWS_MAX + 1)], xz[2 * (4 * ROWS_MAX + 8)];
    static uint32_t idx[12 * ROWS_MAX], row[3 * (ROWS_MAX + 1)];
    static float side[2][2 * (ROWS_MAX + 1)];
    pm_arena *ar = pm_arena_create(0);
    size_t shown = 0, simple_not_shown = 0, tangled = 0, taken = 0, far_off = 0, two_only = 0;
    for (int round = 0; round < 60000; round++) {
        uint32_t kind = rnd(8), G = kind >= 6 ? 1 + rnd(3) : 1 + rnd(ROWS_MAX);
        double h = rnd(360) * PI_ / 180, x = 0, z = 0, step = rnd(4) ? 0.5 + rnd(8) : 1e-4 * (1 + rnd(100));
        if (kind >= 6) step = 0.5 * (0.5 + rnd(8));
        double w = 0.5 + rnd(6), off = rnd(3) ? 0 : rnd(2) ? 3e4 + rnd(1000) : 1e6;
        double turn = kind == 0 ? 0 : kind == 1 ? (rnd(41) - 20.0) * PI_ / 180 / G
                    : kind == 2 ? (rnd(2) ? 1 : -1) * (200.0 + rnd(300)) * PI_ / 180 / G : 0;
        for (uint32_t g = 0; g <= G; g++) {
            double nx = -sin(h), nz = cos(h), sl = kind == 4 ? (rnd(9) - 4.0) * 0.2 : 0;
            for (uint32_t c = 0; c < 3; c++) {
                double t = (c - 1.0) * w, px = x + nx * t + cos(h) * sl * (c - 1.0), pz = z + nz * t + sin(h) * sl * (c - 1.0);
                if (kind == 5) px += (rnd(5) - 2.0) * 0.3 * step, pz += (rnd(5) - 2.0) * 0.3 * step;
                if (kind >= 6) {   /* a short strip of points anywhere near its rows (ends and all) */
                    px = x + (rnd(13) - 6.0) * w / 4, pz = z + (rnd(13) - 6.0) * w / 4;
                    if (rnd(2)) px += (double)rnd(1000) / 4096, pz += (double)rnd(1000) / 4096;
                }
                float *p = pos + 3 * (3 * g + c);
                p[0] = (float)(px + off), p[1] = 0, p[2] = (float)(pz - off * 0.5);
            }
            double hs = kind == 3 ? (rnd(2) ? 1 : -1) * rnd(80) * PI_ / 180 : turn;
            x += cos(h) * step, z += sin(h) * step, h += hs;
        }
        for (int e = 0; e < 2; e++) {   /* an end row bent: its middle moved */
            if (rnd(4)) continue;
            float *p = pos + 3 * (e ? 3 * G + 1 : 1);
            double a = rnd(360) * PI_ / 180, r = rnd(3) ? (rnd(20) + 1) * 0.05 * w : 1e-3;
            p[0] = (float)(p[0] + r * cos(a)), p[2] = (float)(p[2] + r * sin(a));
        }
        if (rnd(6) == 0) {   /* a vertex thrown */
            float *p = pos + 3 * rnd(3 * (G + 1));
            p[0] = (float)(p[0] + (rnd(41) - 20.0) * 0.25 * w), p[2] = (float)(p[2] + (rnd(41) - 20.0) * 0.25 * w);
        }
        strip_indices(idx, G);
        uint32_t far;
        int tn;
        pm__sides sd = {.xz = {side[0], side[1]}, .chains = true};
        if (!pm__strip_rows2(idx, 4 * G, pos, row, &tn, 0, 3 * (G + 1), &far, &sd)) continue;
        taken++;
        uint32_t m = 2 * G + 4;
        pm__border2(&sd, G, pos + 3 * (size_t)row[1], pos + 3 * (size_t)row[3 * G + 1], tn, xz);
        bool simple = loop_simple_all_pairs(xz, m);
        pm_arena_reset(ar);
        cr_assert_eq(simple, pm__loop_simple_path(ar, xz, m, 0) == 1, "round %d: the sweep differs", round);
        if (sd.mono) cr_assert(simple, "round %d (kind %u, %u rows): shown by its chains, not simple", round, kind, G);
        /* The walk's form (any loop of such triangles): the same proof. */
        float d[2];
        pm__strip_axis(pos + 3 * (size_t)row[0], pos + 3 * (size_t)row[1], pos + 3 * (size_t)row[2],
                       pos + 3 * (size_t)row[3 * G + 1], d);
        bool two = pm__two_chains(xz, m, d);
        if (two) cr_assert(simple, "round %d (kind %u, %u rows): two chains, not simple", round, kind, G);
        if (sd.mono) cr_assert(two, "round %d: shown by its rows' chains, not by the loop's", round);
        shown += sd.mono;
        two_only += two && !sd.mono;
        simple_not_shown += simple && !sd.mono;
        tangled += !simple;
        far_off += sd.mono && off > 0;
    }
    pm_arena_destroy(ar);
    cr_log_info("strips: %zu taken, %zu shown by their chains (%zu far from the origin, %zu more by the loop's), "
                "%zu simple not shown, %zu not simple", taken, shown, far_off, two_only, simple_not_shown, tangled);
    cr_assert_gt(shown, 10000);
    cr_assert_gt(far_off, 1000);
    cr_assert_gt(simple_not_shown, 1000);
    cr_assert_gt(tangled, 1000, "only %zu strips not simple", tangled);
}
#endif

#ifdef __SSE2__
/* A float m 2^e (|m| < 2^24, -20 <= e <= 0) as the integer n with value
 * n 2^-20. */
static __int128 fixed20(float f) { return (__int128)ldexp((double)f, 20); }

/* A random float m 2^e as above, sign either way. */
static float rnd_float(void) {
    float m = (float)(rnd(1u << 24)) * (rnd(2) ? 1 : -1);
    return ldexpf(m, -(int)rnd(21));
}

/* pm__above2 against the exact sign of (b - a) . d (integers scaled by
 * 2^-40: every product and sum exact in 128 bits), for floats a, b and d
 * where b - a is nearly square to d: b one step along d's normal from a,
 * moved by a few units in the last place now and then. */
Test(network_overlap_strip, above_for_sure) {
    size_t said = 0, tied = 0;
    for (int round = 0; round < 400000; round++) {
        float d[2] = {rnd_float(), rnd_float()}, a[2][2], b[2][2];
        for (int l = 0; l < 2; l++) {
            a[l][0] = rnd_float(), a[l][1] = rnd_float();
            double t = (double)(rnd(64) + 1) / (double)(rnd(64) + 1) * (rnd(2) ? 1 : -1);
            b[l][0] = (float)(a[l][0] - t * d[1]), b[l][1] = (float)(a[l][1] + t * d[0]);
            if (rnd(2)) b[l][rnd(2)] = nextafterf(b[l][0], rnd(2) ? HUGE_VALF : -HUGE_VALF);
            if (rnd(4) == 0) b[l][0] = a[l][0], b[l][1] = a[l][1];
            for (int c = 0; c < 2; c++)   /* (within the scaled range, else as a) */
                if (!(fabsf(b[l][c]) < 16777216.0f) || ldexpf(b[l][c], 20) != (float)(int64_t)ldexpf(b[l][c], 20))
                    b[l][c] = a[l][c];
        }
        const __m128d dx = _mm_set1_pd(d[0]), dz = _mm_set1_pd(d[1]);
        __m128d pa = _mm_add_pd(_mm_mul_pd(_mm_set_pd(a[1][0], a[0][0]), dx), _mm_mul_pd(_mm_set_pd(a[1][1], a[0][1]), dz));
        __m128d pb = _mm_add_pd(_mm_mul_pd(_mm_set_pd(b[1][0], b[0][0]), dx), _mm_mul_pd(_mm_set_pd(b[1][1], b[0][1]), dz));
        int up = pm__above2(pa, pb);
        for (int l = 0; l < 2; l++) {
            __int128 e = (fixed20(b[l][0]) - fixed20(a[l][0])) * fixed20(d[0]) +
                         (fixed20(b[l][1]) - fixed20(a[l][1])) * fixed20(d[1]);
            if ((up >> l) & 1) cr_assert(e > 0, "round %d, lane %d: called above, exactly %s", round, l, e ? "below" : "level");
            said += (up >> l) & 1;
            tied += e == 0;
        }
    }
    cr_assert_gt(said, 100000);
    cr_assert_gt(tied, 100000);
}
#endif

/* road_outline.c: the cheap proof that a clean road's outline is simple
 * never claims what the exact loop test (pm_loop_simple) denies, proves
 * long gently curving roads, and refuses roads whose legs meet. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geom/predicates.h"
#include "road/road_internal.h"
#include "scene/arena.h"
#include "scene/rng.h"

/* A level of n sections along a centre line that turns by turn[i]
 * radians per step of len metres; ncol columns over half width W; the end
 * sections skewed by skew radians (a cap that cuts across its own road).
 * Only what road_outline.c reads is filled. */
static pm__level make_level_skewed(pm_arena *a, size_t n, uint32_t ncol, double W, double len,
                                   const double *turn, double skew) {
    pm__level L;
    memset(&L, 0, sizeof L);
    L.n = n;
    L.ncol = ncol;
    L.sec = pm_arena_calloc(a, n, sizeof *L.sec);
    L.pos = pm_arena_alloc(a, n * ncol * 3 * sizeof(double));
    cr_assert(L.sec && L.pos);
    double x = 123.0, z = -77.0, h = 0.3;
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            h += turn[i];
            x += len * cos(h);
            z += len * sin(h);
            L.sec[i].s = L.sec[i - 1].s + len;
        }
        double hs = h + (i == 0 || i == n - 1 ? skew : 0.0);
        double r[2] = {-sin(hs), cos(hs)};   /* one side of the heading */
        for (uint32_t c = 0; c < ncol; c++) {
            double d = -W + 2.0 * W * c / (ncol - 1);
            double *p = L.pos + 3 * (i * ncol + c);
            p[0] = x + d * r[0];
            p[1] = 0.0;
            p[2] = z + d * r[1];
        }
    }
    return L;
}

static pm__level make_level(pm_arena *a, size_t n, uint32_t ncol, double W, double len, const double *turn) {
    return make_level_skewed(a, n, ncol, W, len, turn, 0.0);
}

Test(road_outline, never_claims_what_the_loop_test_denies) {
    pm_arena *a = pm_arena_create(0);
    pm_rng rng;
    pm_rng_seed(&rng, 14);
    int proven = 0, denied = 0;
    for (int trial = 0; trial < 1500; trial++) {
        size_t n = 8 + pm_rng_below(&rng, 400);
        uint32_t ncol = 2 + pm_rng_below(&rng, 6);
        double W = 0.5 + 10.0 * pm_rng_unit(&rng), len = 0.2 + 6.0 * pm_rng_unit(&rng);
        /* Gentle, tight, spiralling (legs meet), zig-zag, and straight. */
        int kind = (int)pm_rng_below(&rng, 5);
        double base = (pm_rng_unit(&rng) - 0.5) * (kind == 2 ? 0.4 : 0.05);
        double *turn = pm_arena_alloc(a, n * sizeof(double));
        for (size_t i = 0; i < n; i++) {
            double j = (pm_rng_unit(&rng) - 0.5) * (kind == 1 ? 0.6 : 0.02);
            turn[i] = kind == 4 ? 0.0 : (kind == 3 ? ((i / 20) % 2 ? 0.15 : -0.15) : base + j);
        }
        double skew = pm_rng_chance(&rng, 0.3) ? (pm_rng_unit(&rng) - 0.5) * 3.0 : 0.0;
        pm__level L = make_level_skewed(a, n, ncol, W, len, turn, skew);
        int w = pm__road_outline_windows(a, &L, W);
        cr_assert(w == 0 || w == 1);
        int s = pm__road_outline_loop(a, &L);
        if (w == 1) cr_assert_eq(s, 1, "trial %d: proven simple, the loop test says not", trial);
        proven += w;
        denied += s == 0;
        pm_arena_reset(a);
    }
    /* Not vacuous: both verdicts occur often. */
    cr_assert_gt(proven, 300, "proven %d", proven);
    cr_assert_gt(denied, 100, "denied %d", denied);
    pm_arena_destroy(a);
}

Test(road_outline, a_long_gentle_road_is_proven_a_u_turn_onto_itself_is_not) {
    pm_arena *a = pm_arena_create(0);
    double turn[400];
    for (int i = 0; i < 400; i++) turn[i] = 0.004;   /* radius 250 m at 1 m steps */
    pm__level L = make_level(a, 400, 3, 4.0, 1.0, turn);
    cr_assert_eq(pm__road_outline_windows(a, &L, 4.0), 1);
    cr_assert_eq(pm__road_outline_loop(a, &L), 1);
    /* 180 degrees over 6 m then back: the return leg, 4 m from the
     * first, lies on it (8 m wide). */
    for (int i = 0; i < 400; i++) turn[i] = i >= 100 && i < 106 ? PM__PI / 6.0 : 0.0;
    L = make_level(a, 400, 3, 4.0, 1.0, turn);
    cr_assert_eq(pm__road_outline_loop(a, &L), 0);
    cr_assert_eq(pm__road_outline_windows(a, &L, 4.0), 0);
    /* The same turn with legs 3 m apart at a half width of 1 m: simple,
     * but the turn is too tight to prove here; the loop test decides. */
    for (int i = 0; i < 400; i++) turn[i] = i >= 100 && i < 103 ? PM__PI / 3.0 : 0.0;
    L = make_level(a, 400, 3, 1.0, 1.0, turn);
    cr_assert_eq(pm__road_outline_windows(a, &L, 1.0), 0);
    pm_arena_destroy(a);
}

/* Roads gentle everywhere (every window holds) that come back over
 * themselves: circles of 10 to 60 half widths turning 270 to 800 degrees,
 * either way, some crossing their start and some not yet. Only the boxes
 * of chunks two or more apart (sorted, then swept) see the overlap: the
 * cheap proof must never claim one of those simple, and must still prove
 * the loops that stay clear of themselves. */
Test(road_outline, loops_caught_by_the_boxes_of_far_chunks) {
    pm_arena *a = pm_arena_create(0);
    pm_rng rng;
    pm_rng_seed(&rng, 41);
    int proven = 0, denied = 0;
    for (int trial = 0; trial < 600; trial++) {
        double W = 0.5 + 6.0 * pm_rng_unit(&rng), R = W * (10.0 + 50.0 * pm_rng_unit(&rng));
        double total = (1.5 + 3.0 * pm_rng_unit(&rng)) * PM__PI, len = 0.25 * W + W * pm_rng_unit(&rng);
        size_t n = (size_t)(total * R / len) + 8;
        if (n > 4000) n = 4000;
        double *turn = pm_arena_alloc(a, n * sizeof(double));
        double sg = pm_rng_chance(&rng, 0.5) ? 1.0 : -1.0;
        /* A radius that grows or shrinks a little per lap: laps cross. */
        double grow = (pm_rng_unit(&rng) - 0.5) * 0.6;
        for (size_t i = 0; i < n; i++) turn[i] = sg * len / (R * (1.0 + grow * (double)i / (double)n));
        pm__level L = make_level(a, n, 2 + (uint32_t)pm_rng_below(&rng, 4), W, len, turn);
        int w = pm__road_outline_windows(a, &L, W);
        int s = pm__road_outline_loop(a, &L);
        if (w == 1) cr_assert_eq(s, 1, "trial %d: proven simple, the loop test says not", trial);
        proven += w;
        denied += s == 0;
        pm_arena_reset(a);
    }
    cr_assert_gt(proven, 50, "proven %d", proven);
    cr_assert_gt(denied, 200, "denied %d", denied);
    pm_arena_destroy(a);
}

static const float *sort_keys;
static int by_key(const void *a, const void *b) {
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    float p = sort_keys[i], q = sort_keys[j];
    return p < q ? -1 : (p > q ? 1 : (i > j) - (i < j));
}

/* The boxes' sort (an insertion sort for nearly sorted or reversed runs,
 * qsort past a budget of moves) gives qsort's order on the same keys:
 * ascending, descending, nearly sorted, shuffled, with ties. */
Test(road_outline, box_sort_matches_qsort) {
    pm_rng rng;
    pm_rng_seed(&rng, 5);
    for (int trial = 0; trial < 20000; trial++) {
        uint32_t n = 1 + (uint32_t)pm_rng_below(&rng, 64), order[64], want[64];
        float lo[64];
        int kind = (int)pm_rng_below(&rng, 5);
        for (uint32_t i = 0; i < n; i++) {
            double v = kind == 0 ? (double)i : kind == 1 ? -(double)i : kind == 2 ? (double)i + 3.0 * pm_rng_unit(&rng)
                     : kind == 3 ? (double)pm_rng_below(&rng, 4) : pm_rng_unit(&rng);
            lo[i] = i > 0 && pm_rng_chance(&rng, 0.05) ? lo[i - 1] : (float)v;   /* ties */
            want[i] = i;
        }
        sort_keys = lo;
        qsort(want, n, sizeof *want, by_key);
        pm__road_outline_sort(lo, n, order);
        for (uint32_t i = 0; i < n; i++) cr_assert_eq(order[i], want[i], "trial %d kind %d at %u", trial, kind, i);
    }
}

/* The three-chunk windows (the pass's default) against the plain proof
 * by pairs of chunks and the exact loop test, on random roads: gentle
 * and tight arcs, hairpins whose legs pass close, S-bends that nearly
 * touch, zig-zags that turn once per chunk or so. Never a claim the loop
 * test denies, and every road the pairs prove is proven (a long window
 * that fails falls back to its pairs), so the exact test never runs
 * where it did not before. */
Test(road_outline, three_chunk_windows_prove_what_pairs_prove_and_no_more) {
    pm_arena *a = pm_arena_create(0);
    pm_rng rng;
    pm_rng_seed(&rng, 9);
    int proven = 0, denied = 0, long_failed = 0;
    for (int trial = 0; trial < 3000; trial++) {
        size_t n = 8 + pm_rng_below(&rng, 500);
        uint32_t ncol = 2 + pm_rng_below(&rng, 5);
        double W = 0.5 + 8.0 * pm_rng_unit(&rng), len = 0.1 + 4.0 * pm_rng_unit(&rng);
        int kind = (int)pm_rng_below(&rng, 6);
        double *turn = pm_arena_alloc(a, n * sizeof(double));
        double sg = pm_rng_chance(&rng, 0.5) ? 1.0 : -1.0;
        /* Steps per chunk of 4 W, and a period of one to four chunks. */
        double per = 4.0 * W / len * (1.0 + 3.0 * pm_rng_unit(&rng));
        double amp = (0.2 + 1.4 * pm_rng_unit(&rng)) / (per > 1.0 ? per : 1.0);
        size_t at = n / 4 + pm_rng_below(&rng, (uint32_t)(n / 2 + 1));
        double gap = W * (1.6 + 1.2 * pm_rng_unit(&rng));   /* hairpin legs' centre lines apart */
        if (kind == 5) {   /* a hairpin near the end, its short return leg in the last chunks only */
            size_t m = (size_t)(PM__PI * 0.5 * gap / len) + 1, back = (size_t)(W * (0.5 + 6.0 * pm_rng_unit(&rng)) / len);
            at = n > m + back + 2 ? n - m - back - 1 : 1;
        }
        for (size_t i = 0; i < n; i++) {
            double t = 0.0;
            if (kind == 0) t = sg * len / (W * (3.0 + 40.0 * pm_rng_unit(&rng)));   /* arcs, gentle to tight */
            else if (kind == 1 || kind == 5) {   /* a hairpin: half a turn over the legs' gap */
                size_t m = (size_t)(PM__PI * 0.5 * gap / len) + 1;
                t = i >= at && i < at + m ? sg * PM__PI / (double)m : 0.0;
            } else if (kind == 2)   /* S-bends, one side then the other */
                t = sg * amp * ((size_t)((double)i / per) % 2 ? 1.0 : -1.0);
            else if (kind == 3)   /* zig-zag with a drift */
                t = sg * (amp * sin(2.0 * PM__PI * (double)i / per) + 0.002);
            else t = (pm_rng_unit(&rng) - 0.5) * 0.05;
            turn[i] = t;
        }
        pm__level L = make_level(a, n, ncol, W, len, turn);
        int w3 = pm__road_outline_windows_k(a, &L, W, 3), w2 = pm__road_outline_windows_k(a, &L, W, 2);
        cr_assert(w3 == 0 || w3 == 1);
        cr_assert_eq(pm__road_outline_windows(a, &L, W), w3);
        int s = pm__road_outline_loop(a, &L);
        if (w3 == 1) cr_assert_eq(s, 1, "trial %d (kind %d): proven simple, the loop test says not", trial, kind);
        if (w2 == 1) cr_assert_eq(w3, 1, "trial %d (kind %d): pairs prove it, the long windows do not", trial, kind);
        proven += w3;
        denied += s == 0;
        long_failed += w2 == 1;
        pm_arena_reset(a);
    }
    cr_assert_gt(proven, 500, "proven %d", proven);
    cr_assert_gt(denied, 200, "denied %d", denied);
    pm_arena_destroy(a);
}

/* ---- the four-lane windows against the plain ones and brute force ---- */

/* Whether closed segments ab and cd share a point (exact predicates). */
static bool on_seg(const double a[2], const double b[2], const double p[2]) {
    return fmin(a[0], b[0]) <= p[0] && p[0] <= fmax(a[0], b[0]) && fmin(a[1], b[1]) <= p[1] &&
           p[1] <= fmax(a[1], b[1]);
}
static bool segs_meet(const double a[2], const double b[2], const double c[2], const double d[2]) {
    double o1 = pm_orient2d(a, b, c), o2 = pm_orient2d(a, b, d), o3 = pm_orient2d(c, d, a),
           o4 = pm_orient2d(c, d, b);
    if (((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0))) return true;
    return (o1 == 0 && on_seg(a, b, c)) || (o2 == 0 && on_seg(a, b, d)) || (o3 == 0 && on_seg(c, d, a)) ||
           (o4 == 0 && on_seg(c, d, b));
}

/* Brute force: the outline loop pm__road_outline_loop walks (left edge,
 * last section, right edge back, first section; float plan points) is
 * simple when no two of its segments meet, except consecutive ones at
 * their shared corner only (not folding back along each other). Every
 * pair tested, a box test first. */
static bool outline_simple_brute(const pm__level *L) {
    size_t n = L->n, nc = L->ncol, m = 2 * n + 2 * (nc - 2), k = 0;
    double(*q)[2] = malloc(m * sizeof *q);
    cr_assert(q);
#define PUT(i, c) (q[k][0] = (float)L->pos[3 * ((i) * nc + (c))], q[k][1] = (float)L->pos[3 * ((i) * nc + (c)) + 2], k++)
    for (size_t i = 0; i < n; i++) PUT(i, 0);
    for (size_t c = 1; c < nc; c++) PUT(n - 1, c);
    for (size_t i = n - 1; i-- > 0;) PUT(i, nc - 1);
    for (size_t c = nc - 1; --c > 0;) PUT(0, c);
#undef PUT
    cr_assert_eq(k, m);
    bool simple = true;
    for (size_t i = 0; i < m && simple; i++) {
        const double *a = q[i], *b = q[(i + 1) % m];
        if (a[0] == b[0] && a[1] == b[1]) simple = false;   /* a repeated corner */
        for (size_t j = i + 1; j < m && simple; j++) {
            const double *c = q[j], *d = q[(j + 1) % m];
            if (fmax(a[0], b[0]) < fmin(c[0], d[0]) || fmax(c[0], d[0]) < fmin(a[0], b[0]) ||
                fmax(a[1], b[1]) < fmin(c[1], d[1]) || fmax(c[1], d[1]) < fmin(a[1], b[1]))
                continue;
            bool next = j == i + 1, wrap = i == 0 && j == m - 1;
            if (!next && !wrap) {
                simple = !segs_meet(a, b, c, d);
                continue;
            }
            /* Consecutive: shared corner s, far ends u (of one) and v (of
             * the other): they overlap beyond s when collinear and pointing
             * the same way from s. */
            const double *s = next ? b : a, *u = next ? a : b, *v = next ? d : c;
            if (pm_orient2d(s, u, v) == 0 && (u[0] - s[0]) * (v[0] - s[0]) + (u[1] - s[1]) * (v[1] - s[1]) > 0)
                simple = false;
        }
    }
    free(q);
    return simple;
}

/* 2,400 random levels built to come near themselves: wide roads in tight
 * curves (the inner edge folds back), hairpins whose legs pass 1.2 to 3
 * half widths apart, loops that run over their start or spiral just clear
 * of it, S-bends, and gentle roads. The four-lane windows give the plain
 * windows' verdict, and neither ever proves simple a loop that brute
 * force finds touching itself. */
Test(road_outline, four_lane_windows_match_the_plain_ones_and_brute_force) {
    pm_arena *a = pm_arena_create(0);
    pm_rng rng;
    pm_rng_seed(&rng, 1010);
    int proven = 0, touching = 0;
    for (int trial = 0; trial < 2400; trial++) {
        size_t n = 8 + pm_rng_below(&rng, 300);
        uint32_t ncol = 2 + pm_rng_below(&rng, 5);
        double W = 0.5 + 10.0 * pm_rng_unit(&rng), len = 0.1 + 3.0 * pm_rng_unit(&rng);
        int kind = (int)pm_rng_below(&rng, 5);
        double sg = pm_rng_chance(&rng, 0.5) ? 1.0 : -1.0;
        double *turn = pm_arena_alloc(a, n * sizeof(double));
        size_t at = n / 5 + pm_rng_below(&rng, (uint32_t)(n / 2 + 1));
        double gap = W * (1.2 + 1.8 * pm_rng_unit(&rng));
        size_t hm = (size_t)(PM__PI * 0.5 * gap / len) + 1;
        /* Radius of a loop: about one lap over the road's length, a little
         * more or less, so the end passes near the start. */
        double R = (double)n * len / (2.0 * PM__PI) * (0.85 + 0.3 * pm_rng_unit(&rng));
        double tight = W * (0.4 + 1.6 * pm_rng_unit(&rng));   /* radius near the half width */
        for (size_t i = 0; i < n; i++) {
            double t;
            if (kind == 0) t = i >= at && i < at + 12 ? sg * len / tight : 0.0;   /* a tight curve, wide road */
            else if (kind == 1) t = i >= at && i < at + hm ? sg * PM__PI / (double)hm : 0.0;   /* hairpin */
            else if (kind == 2) t = sg * len / R;                                       /* loop over the start */
            else if (kind == 3) t = sg * ((i / 15) % 2 ? 1.0 : -1.0) * len / (W * (0.8 + 3.0 * pm_rng_unit(&rng)));
            else t = (pm_rng_unit(&rng) - 0.5) * 0.03;
            turn[i] = t;
        }
        pm__level L = make_level(a, n, ncol, W, len, turn);
        int fast = pm__road_outline_windows_x(a, &L, W, 3, true), plain = pm__road_outline_windows_x(a, &L, W, 3, false);
        cr_assert_eq(fast, plain, "trial %d (kind %d): four lanes %d, plain %d", trial, kind, fast, plain);
        cr_assert_eq(pm__road_outline_windows_x(a, &L, W, 2, true), pm__road_outline_windows_x(a, &L, W, 2, false),
                     "trial %d (kind %d): pairs differ", trial, kind);
        bool simple = outline_simple_brute(&L);
        if (fast == 1) cr_assert(simple, "trial %d (kind %d): proven simple, brute force finds it touching", trial, kind);
        /* The exact loop test agrees with brute force. */
        cr_assert_eq(pm__road_outline_loop(a, &L), simple ? 1 : 0, "trial %d (kind %d)", trial, kind);
        proven += fast == 1;
        touching += !simple;
        pm_arena_reset(a);
    }
    /* Not vacuous: many proven, many touching. */
    cr_assert_gt(proven, 500, "proven %d", proven);
    cr_assert_gt(touching, 400, "touching %d", touching);
    pm_arena_destroy(a);
}

/* Staircases and serpentines: straight legs joined by arcs turning one
 * way then the other. Up to a right angle a turn keeps the road's general
 * heading (chunks two or more apart lie apart along its chord, no sort
 * needed); past it the legs run back alongside each other, and past half
 * a turn they close in on each other: only the sweep of the boxes tells
 * whether they touch. Never a claim brute force denies; both verdicts
 * common. */
Test(road_outline, staircases_and_serpentines) {
    pm_arena *a = pm_arena_create(0);
    pm_rng rng;
    pm_rng_seed(&rng, 2020);
    int proven = 0, touching = 0;
    for (int trial = 0; trial < 800; trial++) {
        uint32_t ncol = 2 + pm_rng_below(&rng, 4);
        double W = 0.5 + 6.0 * pm_rng_unit(&rng), len = 0.2 * W + W * pm_rng_unit(&rng);
        double angle = PM__PI * (0.1 + 1.3 * pm_rng_unit(&rng));   /* each turn: 18 to 252 degrees */
        double R = W * (1.5 + 15.0 * pm_rng_unit(&rng)), leg = W * (4.0 + 40.0 * pm_rng_unit(&rng));
        size_t tm = (size_t)(angle * R / len) + 1, lm = (size_t)(leg / len) + 1;
        size_t legs = 2 + pm_rng_below(&rng, 8), n = legs * (lm + tm) + lm;
        if (n > 800) n = 800;
        double *turn = pm_arena_alloc(a, n * sizeof(double));
        for (size_t i = 0; i < n; i++) {
            size_t k = i / (lm + tm), j = i % (lm + tm);
            turn[i] = j >= lm ? (k % 2 ? -1.0 : 1.0) * angle / (double)tm : 0.0;
        }
        pm__level L = make_level(a, n, ncol, W, len, turn);
        int w = pm__road_outline_windows(a, &L, W);
        bool simple = outline_simple_brute(&L);
        if (w == 1) cr_assert(simple, "trial %d: proven simple, brute force finds it touching", trial);
        cr_assert_eq(pm__road_outline_windows_x(a, &L, W, 3, false), w, "trial %d: plain path differs", trial);
        proven += w == 1;
        touching += !simple;
        pm_arena_reset(a);
    }
    cr_assert_gt(proven, 150, "proven %d", proven);
    cr_assert_gt(touching, 100, "touching %d", touching);
    pm_arena_destroy(a);
}

/* The road certificate's edge sums in core/network/network_overlap.c
 * (compiled into this test: its one external symbol is defined here, so
 * the linker takes this copy) against their plain forms, on random
 * triangles and windows:
 *  - pm__tri_add (a triangle's three edges as (lo, mid), (mid, hi),
 *    (lo, hi) with one sign, in one window test) leaves every count, the
 *    far list (its order too) and its overflow as three PM__WIN_ADDs;
 *  - pm__row_live names exactly the slots of a row that are not zero
 *    (counts whose low byte is zero among them).
 * The networks themselves (certificate against the oracle) are
 * test_network_overlap_fast.c's. */
#include "../../core/network/network_overlap.c"

#include <criterion/criterion.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

#define SPAN_MAX 48

Test(network_overlap_sum, one_test_per_triangle_counts_as_three_edges) {
    static int16_t net[2][SPAN_MAX * PM__SLOTS + PM__SLOTS];
    static pm__sum S[2];
    size_t fast = 0, slow = 0;
    for (int round = 0; round < 4000; round++) {
        uint32_t base = rnd(40), span = rnd(SPAN_MAX + 1), sw = rnd(2) ? PM__SW : 0;
        memset(net, 0, sizeof net);
        memset(S, 0, sizeof S);
        int ntri = 1 + (int)rnd(60);
        for (int t = 0; t < ntri; t++) {
            /* Mostly close together (a strip), now and then spread out
             * or outside the window on either side. */
            uint32_t spread = rnd(4) ? 9 : 40, c = base + rnd(span + 16) - (rnd(3) ? 0 : rnd(base + 1));
            uint32_t v[3];
            do {
                for (int k = 0; k < 3; k++) v[k] = c + rnd(spread);
            } while (v[0] == v[1] || v[1] == v[2] || v[0] == v[2]);
            uint32_t lo = v[0] < v[1] ? v[0] : v[1];
            lo = v[2] < lo ? v[2] : lo;
            uint32_t hi = v[0] < v[1] ? v[1] : v[0];
            hi = v[2] > hi ? v[2] : hi;
            uint32_t mid = v[0] + v[1] + v[2] - lo - hi;
            if (lo >= base && mid - base < span && hi - lo < PM__SLOTS) fast++;
            else slow++;
            pm__tri_add(&S[0], net[0], base, span, sw, v[0], v[1], v[2]);
            pm__tri_add_plain(&S[1], net[1], base, span, sw, v[0], v[1], v[2]);
        }
        cr_assert(memcmp(net[0], net[1], sizeof net[0]) == 0, "round %d: window counts differ", round);
        cr_assert_eq(S[0].full, S[1].full, "round %d", round);
        cr_assert_eq(S[0].nfar, S[1].nfar, "round %d: %u far edges, plainly %u", round, S[0].nfar, S[1].nfar);
        for (uint32_t i = 0; i < S[0].nfar; i++)
            cr_assert(S[0].far[i].a == S[1].far[i].a && S[0].far[i].b == S[1].far[i].b &&
                          S[0].far[i].net == S[1].far[i].net,
                      "round %d: far edge %u differs", round, i);
    }
    cr_assert_gt(fast, 20000, "only %zu triangles took the one test", fast);
    cr_assert_gt(slow, 20000, "only %zu triangles went edge by edge", slow);
}

Test(network_overlap_sum, live_slots_are_the_counts_not_zero) {
    static const int16_t values[] = {0, 0, 0, 1, -1, 2, -2, 256, -256, 512, INT16_MIN, INT16_MAX};
    int16_t row[PM__SLOTS];
    for (int round = 0; round < 20000; round++) {
        uint32_t want = 0;
        for (uint32_t d = 0; d < PM__SLOTS; d++) {
            row[d] = values[rnd(sizeof values / sizeof *values)];
            if (row[d] != 0) want |= 1u << (2 * d);
        }
        cr_assert_eq(pm__row_live(row), want, "round %d", round);
    }
}

/* ---- twins cancelled on point ids ---- */

#define NPT 40
#define NEDGE 160

Test(network_overlap_sum, twins_cancel_as_in_the_edge_table) {
    static uint32_t f[NEDGE], g[NEDGE], head[NPT + 1], kept[NEDGE];
    static pm__prec rec[2][NEDGE];
    static pm__pedge table[1024];
    int shown = 0, left_over = 0;
    for (int round = 0; round < 20000; round++) {
        /* Loops round point ids, with twins of earlier edges (a seam),
         * repeats and points to themselves now and then. */
        uint32_t n = 3 + rnd(NPT - 2), m = 0, len = 3 + rnd(n - 2), start = rnd(n);
        while (m < NEDGE && m < 4 * n) {
            uint32_t r = rnd(16);
            if (r < 6 && m > 0) {
                uint32_t j = rnd(m);
                f[m] = g[j], g[m] = f[j];
            } else if (r < 14) {
                uint32_t k = m % len;
                f[m] = (start + k) % n, g[m] = (start + (k + 1) % len) % n;
            } else if (r == 14 && m > 0) {
                uint32_t j = rnd(m);
                f[m] = f[j], g[m] = g[j];
            } else {
                f[m] = rnd(n), g[m] = rnd(n);
            }
            m++;
            if (rnd(8) == 0) break;
        }
        uint32_t nrec[2];
        bool ok = pm__cancel(f, g, m, n, head, rec[0], &nrec[0]);
        bool plain = pm__cancel_plain(f, g, m, table, 1023, kept, rec[1], &nrec[1]);
        for (size_t i = 0; i < sizeof table / sizeof *table; i++) cr_assert_eq(table[i].key, 0, "table left dirty");
        cr_assert_eq(ok, plain, "round %d: %d, plainly %d", round, ok, plain);
        if (!ok) continue;
        shown++;
        cr_assert_eq(nrec[0], nrec[1], "round %d", round);
        for (uint32_t i = 0; i < nrec[0]; i++) {
            cr_assert(rec[0][i].f == rec[1][i].f && rec[0][i].g == rec[1][i].g, "round %d: edge %u", round, i);
            cr_assert_eq(!rec[0][i].alive, !rec[1][i].alive, "round %d: edge %u", round, i);
            left_over += rec[0][i].alive && nrec[0] > 3;
        }
    }
    cr_assert_gt(shown, 2000, "only %d edge lists could be one loop", shown);
    cr_assert_gt(left_over, 2000);
}

/* The PRNG: golden values, ranges, uniformity. The golden constants were
 * checked once against an independent Python implementation of splitmix64
 * seeding + xoshiro256** (Blackman & Vigna); splitmix64(0)'s first output
 * 0xe220a8397b1dcdaf is also the published reference value. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "scene/rng.h"

Test(rng, seeding_golden) {
    pm_rng r;
    pm_rng_seed(&r, 0);
    cr_assert_eq(r.s[0], 0xe220a8397b1dcdafull);
    cr_assert_eq(r.s[1], 0x6e789e6aa1b965f4ull);
    cr_assert_eq(r.s[2], 0x06c45d188009454full);
    cr_assert_eq(r.s[3], 0xf88bb8a8724c81ecull);
}

Test(rng, sequence_golden) {
    static const uint64_t want0[6] = {0x99ec5f36cb75f2b4ull, 0xbf6e1f784956452aull,
                                      0x1a5f849d4933e6e0ull, 0x6aa594f1262d2d2cull,
                                      0xbba5ad4a1f842e59ull, 0xffef8375d9ebcacaull};
    static const uint64_t want42[6] = {0x15780b2e0c2ec716ull, 0x6104d9866d113a7eull,
                                       0xae17533239e499a1ull, 0xecb8ad4703b360a1ull,
                                       0xfde6dc7fe2ec5e64ull, 0xc50da53101795238ull};
    pm_rng r;
    pm_rng_seed(&r, 0);
    for (int i = 0; i < 6; i++) cr_assert_eq(pm_rng_u64(&r), want0[i], "seed 0 draw %d", i);
    pm_rng_seed(&r, 42);
    for (int i = 0; i < 6; i++) cr_assert_eq(pm_rng_u64(&r), want42[i], "seed 42 draw %d", i);
}

Test(rng, unit_and_below_golden) {
    pm_rng r;
    pm_rng_seed(&r, 42);
    cr_assert_eq(pm_rng_unit(&r), 0.08386297105988216);
    static const uint64_t want[8] = {0, 3, 6, 9, 9, 7, 7, 8};
    pm_rng_seed(&r, 42);
    for (int i = 0; i < 8; i++) cr_assert_eq(pm_rng_below(&r, 10), want[i]);
}

Test(rng, unit_range) {
    pm_rng r;
    pm_rng_seed(&r, 1);
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        double u = pm_rng_unit(&r);
        cr_assert(u >= 0.0 && u < 1.0);
        sum += u;
        double v = pm_rng_range(&r, -3.0, 5.0);
        cr_assert(v >= -3.0 && v < 5.0);
    }
    cr_assert(fabs(sum / 100000 - 0.5) < 0.01);
    cr_assert_eq(pm_rng_range(&r, 2.0, 2.0), 2.0);
}

/* Pearson chi-square of pm_rng_below(n) over n buckets, fixed seeds. The
 * bound is the 99.99% quantile, so a correct generator passes with a
 * margin and a biased one (e.g. plain modulo on few bits) does not. */
static double chi_square(uint64_t seed, uint64_t n, int draws) {
    static long counts[64];
    cr_assert_leq(n, 64);
    for (uint64_t k = 0; k < n; k++) counts[k] = 0;
    pm_rng r;
    pm_rng_seed(&r, seed);
    for (int i = 0; i < draws; i++) {
        uint64_t v = pm_rng_below(&r, n);
        cr_assert_lt(v, n);
        counts[v]++;
    }
    double expect = (double)draws / (double)n, chi = 0;
    for (uint64_t k = 0; k < n; k++) chi += (counts[k] - expect) * (counts[k] - expect) / expect;
    return chi;
}

Test(rng, below_uniform_chi_square) {
    /* n: 99.99% quantiles of chi-square with n-1 degrees of freedom. */
    static const struct { uint64_t n; double bound; } cases[] = {
        {2, 15.14}, {6, 25.74}, {10, 33.72}, {37, 76.36}, {64, 113.5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            double chi = chi_square(seed, cases[i].n, 200000);
            cr_assert_lt(chi, cases[i].bound, "n=%llu seed=%llu chi=%g",
                         (unsigned long long)cases[i].n, (unsigned long long)seed, chi);
        }
}

/* A large n where modulo bias would be visible: n = 3 * 2^62 would put
 * values below 2^62 twice as often with a plain modulo. */
Test(rng, below_large_n_unbiased) {
    pm_rng r;
    pm_rng_seed(&r, 9);
    const uint64_t n = 3ull << 62;
    int low = 0;
    const int draws = 300000;
    for (int i = 0; i < draws; i++) {
        uint64_t v = pm_rng_below(&r, n);
        cr_assert_lt(v, n);
        low += v < (1ull << 62);
    }
    cr_assert(fabs((double)low / draws - 1.0 / 3.0) < 0.005, "fraction %g", (double)low / draws);
    cr_assert_eq(pm_rng_below(&r, 1), 0);
    for (int i = 0; i < 1000; i++) (void)pm_rng_below(&r, UINT64_MAX);
}

Test(rng, int_inclusive_bounds) {
    pm_rng r;
    pm_rng_seed(&r, 5);
    bool lo = false, hi = false;
    for (int i = 0; i < 10000; i++) {
        int64_t v = pm_rng_int(&r, -3, 3);
        cr_assert(v >= -3 && v <= 3);
        lo = lo || v == -3;
        hi = hi || v == 3;
    }
    cr_assert(lo && hi);
    cr_assert_eq(pm_rng_int(&r, 7, 7), 7);
    bool neg = false, pos = false;
    for (int i = 0; i < 100; i++) {
        int64_t v = pm_rng_int(&r, INT64_MIN, INT64_MAX);
        neg = neg || v < 0;
        pos = pos || v > 0;
    }
    cr_assert(neg && pos);
}

Test(rng, chance) {
    pm_rng r;
    pm_rng_seed(&r, 6);
    int hits = 0;
    for (int i = 0; i < 100000; i++) hits += pm_rng_chance(&r, 0.25);
    cr_assert(abs(hits - 25000) < 800);
    for (int i = 0; i < 1000; i++) {
        cr_assert(pm_rng_chance(&r, 1.0));
        cr_assert_not(pm_rng_chance(&r, 0.0));
    }
}

Test(rng, fork_is_deterministic_and_independent) {
    pm_rng p, c1, c2, c3;
    pm_rng_seed(&p, 77);
    pm_rng before = p;
    pm_rng_fork(&c1, &p, 1);
    pm_rng_fork(&c2, &p, 1);
    pm_rng_fork(&c3, &p, 2);
    cr_assert_eq(memcmp(&p, &before, sizeof p), 0, "forking does not draw from the parent");
    int same12 = 0, same13 = 0, samep = 0;
    for (int i = 0; i < 64; i++) {
        uint64_t a = pm_rng_u64(&c1), b = pm_rng_u64(&c2), c = pm_rng_u64(&c3);
        same12 += a == b;
        same13 += a == c;
        samep += a == pm_rng_u64(&p);
    }
    cr_assert_eq(same12, 64);
    cr_assert_eq(same13, 0);
    cr_assert_eq(samep, 0);
}

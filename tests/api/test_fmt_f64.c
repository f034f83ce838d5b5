/* The metadata's double printer (pm_api__fmt_f64) against its reference:
 * the shortest "%.Ng" (N = 15..17) that strtod reads back, by snprintf,
 * after integers below 1e6 as integers. Its fast paths (small integers,
 * short decimals m / 10^k, the 128-bit digits) must give the same bytes on
 * every double, and the text must read back. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/encode_writer.h"

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* fmt against fmt_ref and strtod; a message naming d when they differ. */
static void check(double d) {
    char a[40], r[40];
    a[pm_api__fmt_f64(a, d)] = '\0';
    r[pm_api__fmt_f64_ref(r, d)] = '\0';
    cr_assert_str_eq(a, r, "double %a (%.17g)", d, d);
    cr_assert(strtod(a, NULL) == d || d == 0, "%s does not read back as %a", a, d);
}

/* The double nearest m / 10^k as strtod reads the text (the short
 * decimals the fast path takes), then its neighbours one ulp away, which
 * it must not take for the decimal. */
static void check_decimal(uint64_t m, int k, bool neg) {
    char t[48];
    snprintf(t, sizeof t, "%s%llue-%d", neg ? "-" : "", (unsigned long long)m, k);
    double d = strtod(t, NULL);
    check(d);
    check(nextafter(d, INFINITY));
    check(nextafter(d, -INFINITY));
}

static long cases(long def) {
    const char *env = getenv("PM_FMT_CASES");
    return env ? atol(env) : def;
}

/* Short decimals of every length and scale: 1 to 17 digits, k = 0..12
 * decimals, with their ulp neighbours (PM_FMT_CASES=N: N of them). */
Test(fmt_f64, short_decimals_and_their_neighbours) {
    uint64_t s = 0x2545F4914F6CDD1Dull;
    long n = cases(300000);
    for (long i = 0; i < n; i++) {
        uint64_t x = xorshift(&s);
        int digits = 1 + (int)(x % 17), k = (int)((x >> 8) % 13);
        uint64_t m = xorshift(&s) % (uint64_t)pow(10, digits);
        check_decimal(m, k, (x >> 20) & 1);
    }
}

/* Any bit pattern, any magnitude, float32 values (the vertices metadata
 * repeats), integers near 2^53, and the edges of each path's range. */
Test(fmt_f64, random_doubles_and_edges) {
    uint64_t s = 0x9E3779B97F4A7C15ull;
    long n = cases(1000000);
    for (long i = 0; i < n; i++) {
        uint64_t x = xorshift(&s), y = xorshift(&s);
        double d;
        switch (i % 5) {
        case 0: memcpy(&d, &x, 8); break;
        case 1: d = ldexp((double)(x >> 11), (int)(y % 2200) - 1100); break;
        case 2: {
            uint32_t b = (uint32_t)x;
            float f;
            memcpy(&f, &b, 4);
            d = (double)f;
            break;
        }
        case 3: d = 9007199254740992.0 + (double)((int64_t)(x % 2001) - 1000); break;
        default: d = (double)(x % 100000000) / (double)(y % 99999 + 1); break;
        }
        if (!isfinite(d)) continue;
        check(y & 1 ? -d : d);
    }
    const double edges[] = {0.0, -0.0, 5e-324, -5e-324, 2.2250738585072009e-308,
                            2.2250738585072014e-308, DBL_MAX, -DBL_MAX, 1e300, 1e-300,
                            9007199254740991.0, 9007199254740993.0, 4503599627370495.5,
                            4503599627370496.5, 1e-4, 9.9999999999999991e-5, 1.0000000000000001e-4,
                            1e14, 99999999999999.98, 100000000000000.02, 1e15, 999999999999999.9,
                            0.1, 0.2, 0.3, 6.5, -103.5, 90, 999999.5, 1000000.5, 0.000123,
                            123456789012345.6, 12345678901234.56, 0.30000000000000004};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) check(edges[i]);
    /* Subnormals: every exponent of a random mantissa. */
    for (int e = 0; e < 53; e++) check(ldexp((double)(xorshift(&s) >> 11), -1074 - 53 + e + 1));
}

/* Halves (pm_api__fmt_half's shortcut: integers and x.5 below 10^6) and
 * their ulp neighbours, which must take the other paths, on both sides of
 * the shortcut's bound. */
Test(fmt_f64, halves_and_their_neighbours) {
    uint64_t s = 0x632BE59BD9B4E019ull;
    long n = cases(300000);
    for (long i = 0; i < n; i++) {
        uint64_t x = xorshift(&s);
        int64_t v = (int64_t)(x % 4000041) - 2000020;   /* 2 d, past +-2e6 */
        if (x & (1ull << 40)) v = (int64_t)(x % 41) - 20 + (x & (1ull << 41) ? 2000000 : -2000000);
        double d = (double)v / 2;
        check(d);
        check(nextafter(d, INFINITY));
        check(nextafter(d, -INFINITY));
    }
    const double edges[] = {0.5, -0.5, 1, -1, 999999.5, -999999.5, 1e6, -1e6, 1000000.5, 999999,
                            4503599627370495.5, 0.25, -0.0};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) check(edges[i]);
}

/* The texts the network metadata is full of, exactly. */
Test(fmt_f64, texts_of_common_values) {
    const double v[] = {6.5, -103.5, 90, 0.25, -0.0, 1234567.125, 3.5e-4, 1e-5, 2e6, 0.1 + 0.2, -0.5, -496.5};
    const char *want[] = {"6.5",        "-103.5", "90",     "0.25", "0", "1234567.125", "0.00035", "1e-05",
                          "2000000",    "0.30000000000000004", "-0.5", "-496.5"};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char a[40];
        a[pm_api__fmt_f64(a, v[i])] = '\0';
        cr_expect_str_eq(a, want[i], "%a", v[i]);
    }
}

/* The general path (api/fmt_f64.h: exact 128-bit bounds, |d| in [1e-11,
 * 2^51)) on what takes it: doubles of every exponent across that range and
 * past both of its ends, float32 values widened (metadata's vertices),
 * decimals of 1 to 6 places off a turned grid, values whose 15-, 16- or
 * 17-digit rounding is an exact tie (integers plus a power-of-two fraction
 * with 15 to 17 digits), and powers of two (whose lower neighbour is half
 * as far) and of ten, each with its ulp neighbours (PM_FMT_CASES=N: N of
 * each kind). */
Test(fmt_f64, general_path_against_reference) {
    uint64_t s = 0xD1B54A32D192ED03ull;
    long n = cases(400000);
    for (long i = 0; i < n; i++) {
        uint64_t x = xorshift(&s), y = xorshift(&s);
        double d;
        switch (i % 6) {
        case 0: d = ldexp((double)(x >> 11) / 0x1p53 + 0.5, (int)(y % 100) - 42); break;
        case 1: {
            float f = (float)ldexp((double)(x >> 40) / 0x1p24 + 0.5, (int)(y % 60) - 20);
            d = (double)f;
            break;
        }
        case 2: {   /* k decimals, a turned grid's node, rounded */
            int k = 1 + (int)(y % 6);
            d = round(((double)(x % 4000000) / 1000.0 * cos(0.5236) - 1000.0) * pow(10, k)) / pow(10, k);
            break;
        }
        case 3: {   /* ties: 15..17 digits before the fraction's last one */
            int digits = 14 + (int)(y % 4);
            double ip = (double)(x % (uint64_t)pow(10, digits));
            double fr = (double)(1 + (y >> 8) % 7) / (double)(1 << (1 + (y >> 16) % 3));
            d = ip + fr;
            if (d >= 0x1p51) d = ip / 64 + fr;
            break;
        }
        case 4: {
            d = ldexp(1.0, (int)(x % 100) - 40);
            if (y & 2) d = nextafter(d, y & 4 ? INFINITY : 0);
            break;
        }
        default: {
            d = pow(10, (double)((int)(x % 27) - 11));
            if (y & 2) d = nextafter(d, y & 4 ? INFINITY : 0);
            break;
        }
        }
        check(y & 1 ? -d : d);
        check(nextafter(d, INFINITY));
        check(nextafter(d, -INFINITY));
    }
    const double edges[] = {0x1p51, 0x1p51 - 0.25, 0x1p50, 0x1p50 + 0.125, 1e-11, 9.99999999999e-12,
                            2251799813685247.75, 1e15 + 0.125, 999999999999999.875, 0.0001,
                            0.00009999999999999999, 57.37900161743164, 6.500032500103982,
                            6.499999999999999, 180.0002864790979, 123456789012345.5,
                            123456789012344.5, 12345678901234.25, 0.1 + 0.7, 1.0 / 3};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
        check(edges[i]);
        check(-edges[i]);
    }
}

/* Every power of two the general path takes (2^-36 .. 2^50: the only
 * doubles there whose lower neighbour is half as far) and a few past
 * its ends, with their ulp neighbours and a few ulps on either side. */
Test(fmt_f64, every_power_of_two_of_the_general_path) {
    for (int e = -40; e <= 54; e++) {
        double d = ldexp(1.0, e);
        for (int k = 0; k < 4; k++) {
            check(d);
            check(-d);
            d = nextafter(d, INFINITY);
        }
        d = ldexp(1.0, e);
        for (int k = 0; k < 3; k++) check(d = nextafter(d, 0));
    }
}

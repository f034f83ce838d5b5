/* The general path of the metadata's double printer (api/fmt_f64.h) on
 * the ground it covers, |d| in [2^-36, 2^51): every exponent with random
 * mantissas, the neighbourhood of every power of ten there (where the
 * printer picks its decimal scale by comparing the bits with the least
 * double at or above 10^j), and the printer's output ends (the point at
 * each place, trailing zeros, the 0.000ddd and exponent forms), each
 * against the reference (snprintf "%.15g", "%.16g", "%.17g", the first
 * that strtod reads back) and read back. PM_FMT_CASES=N: N random cases. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/decimal.h"
#include "../../api/encode_writer.h"

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void check(double d) {
    char a[40], r[40];
    memset(a, 'x', sizeof a);
    int n = pm_api__fmt_f64(a, d);
    cr_assert(n > 0 && n < 32, "length %d for %a", n, d);
    a[n] = '\0';
    r[pm_api__fmt_f64_ref(r, d)] = '\0';
    cr_assert_str_eq(a, r, "double %a (%.17g)", d, d);
    cr_assert(strtod(a, NULL) == d || d == 0, "%s does not read back as %a", a, d);
}

static long cases(long def) {
    const char *env = getenv("PM_FMT_CASES");
    return env ? atol(env) : def;
}

/* The table itself: entry j + 10 is 10^j or above, its lower neighbour
 * below (compared in the decimal text of exact values: "%.60e" is exact
 * for these doubles). */
Test(fmt_f64_exact, least_doubles_at_powers_of_ten) {
    for (int j = -10; j <= 17; j++) {
        double d, below;
        uint64_t b = pm_api__p10_ceil_bits[j + 10];
        memcpy(&d, &b, sizeof d);
        below = nextafter(d, 0);
        char t[128], u[128];
        snprintf(t, sizeof t, "%.60e", d);
        snprintf(u, sizeof u, "%.60e", below);
        /* the mantissa of d's text is 1.000... (at or above 10^j, with
         * exponent j); below's is 9.999... with exponent j - 1 */
        int ed = atoi(strchr(t, 'e') + 1), eb = atoi(strchr(u, 'e') + 1);
        cr_assert_eq(ed, j, "entry %d: %s", j, t);
        cr_assert(strncmp(t, "1.000", 5) == 0, "entry %d: %s", j, t);
        cr_assert_eq(eb, j - 1, "entry %d, below: %s", j, u);
    }
}

/* Every power of ten in the range and 8 ulps each side, both signs. */
Test(fmt_f64_exact, around_powers_of_ten) {
    for (int j = -12; j <= 17; j++) {
        char t[16];
        snprintf(t, sizeof t, "1e%d", j);
        double d = strtod(t, NULL);
        for (int k = 0; k < 8; k++) d = nextafter(d, 0);
        for (int k = 0; k < 17; k++) {
            check(d);
            check(-d);
            d = nextafter(d, INFINITY);
        }
    }
}

/* Random mantissas at every exponent of the range and one past each end. */
Test(fmt_f64_exact, random_bits_of_every_exponent) {
    uint64_t s = 0x8F1BBCDCBFA53E0Bull;
    long n = cases(1000000);
    for (long i = 0; i < n; i++) {
        uint64_t x = xorshift(&s);
        uint64_t ef = 986 + (uint64_t)(i % 89);   /* 986 .. 1074 */
        uint64_t bits = ef << 52 | (x & ((1ull << 52) - 1));
        if (i & 64) bits &= ~0xFFFFFFFull;   /* float32-like: short mantissas */
        double d;
        memcpy(&d, &bits, sizeof d);
        check(x >> 63 ? -d : d);
    }
}

/* Short decimals with the point at each place and trailing zeros: q
 * 10^-k for q of 1 to 17 digits, k from 0 to 26 (0.000ddd and e-05
 * forms included), and their ulp neighbours. */
Test(fmt_f64_exact, decimals_at_every_place) {
    uint64_t s = 0x3C6EF372FE94F82Bull;
    long n = cases(1000000) / 4;
    for (long i = 0; i < n; i++) {
        uint64_t x = xorshift(&s);
        int digits = 1 + (int)(x % 17), k = (int)((x >> 8) % 27);
        uint64_t q = xorshift(&s) % pm_api__u10[digits];
        if (x & (1ull << 30)) q -= q % pm_api__u10[(x >> 32) % (unsigned)digits];   /* trailing zeros */
        char t[48];
        snprintf(t, sizeof t, "%llue-%d", (unsigned long long)q, k);
        double d = strtod(t, NULL);
        check(d);
        check(nextafter(d, INFINITY));
        check(nextafter(d, 0));
    }
}

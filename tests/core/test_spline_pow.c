/* The knot intervals' pow(d, 0.5) taken as sqrt(d) where that is
 * provably pow's answer (core/geom/spline.c: pm__sqrt_as_pow): wherever
 * it answers, the C library's pow gives the same bits. Random lengths
 * over the whole range it takes, a road's chord lengths (metres with six
 * decimals, as requests spell them), and the hard ones: d next to the
 * square of a midpoint between two doubles, where pow and sqrt may
 * differ (it must leave those to pow). spline.c is compiled into this
 * test (its external symbols are defined here, so the linker takes this
 * copy). */
#include <criterion/criterion.h>

#include "../../core/geom/spline.c"

#include "scene/rng.h"

static void check(double d, long *taken, long *bad) {
    double s = pm__sqrt_as_pow(d);
    if (s == 0.0) return;
    ++*taken;
    double p = pow(d, 0.5);
    if (memcmp(&s, &p, sizeof s) != 0) {
        if (++*bad < 10) cr_log_error("d %a: sqrt %a, pow %a", d, s, p);
    }
}

Test(spline_pow, sqrt_for_pow_half_only_where_pow_agrees) {
    pm_rng r;
    pm_rng_seed(&r, 41);
    long taken = 0, bad = 0, n = 0;
    for (int i = 0; i < 3000000; i++, n++) {   /* log-uniform over 2^-520 .. 2^520 */
        double d = ldexp(pm_rng_range(&r, 1.0, 2.0), (int)pm_rng_below(&r, 1041) - 520);
        check(d, &taken, &bad);
    }
    for (int i = 0; i < 3000000; i++, n++) {   /* chord lengths in metres, six decimals */
        double d = round(pm_rng_range(&r, 0.001, 2000.0) * 1e6) / 1e6;
        check(d, &taken, &bad);
    }
    /* Next to a midpoint: for odd S = 2^53 + 2j + 1, S^2 = 2^106 + 2^54 (2j
     * + 1) + (2j + 1)^2, so d = 1 + (2j + 1) 2^-52 (times 4^k) has its root
     * (2j + 1)^2 2^-57 ULP or so below the midpoint 1 + (j + 1/2) 2^-52;
     * and S = 2^54 - 2j - 1 the same at the binade's top, d = 4 - (2j + 1)
     * 2^-51. pow's and sqrt's bits may part there: none is taken. */
    long hard = 0, hard_taken = 0;
    for (int i = 0; i < 2000000; i++) {
        double j = (double)pm_rng_below(&r, 1u << 20);
        int k = (int)pm_rng_below(&r, 400) - 200;
        double d = i & 1 ? ldexp(1.0 + (2.0 * j + 1.0) * 0x1p-52, 2 * k) : ldexp(4.0 - (2.0 * j + 1.0) * 0x1p-51, 2 * k);
        long t0 = taken;
        check(d, &taken, &bad);
        hard++;
        hard_taken += taken - t0;
    }
    taken -= hard_taken;
    cr_expect_eq(bad, 0, "%ld of %ld taken differ from pow", bad, taken);
    cr_expect_gt(taken, n * 7 / 10, "%ld of %ld taken", taken, n);   /* most: the point of it */
    cr_expect_eq(hard_taken, 0, "%ld of %ld next to a midpoint taken", hard_taken, hard);
    cr_log_info("%ld of %ld taken; %ld of %ld next to a midpoint", taken, n, hard_taken, hard);
}

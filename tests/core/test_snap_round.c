/* pm_snap's inline rounding against its recipe done with libm's round():
 * round(v / grid) * grid + 0.0, compared bit for bit on random values of
 * every magnitude, on exact ties (k + 1/2 with grids that make them exact)
 * and their neighbours, near 2^52 (where the quotient turns whole) and on
 * signed zeros and subnormals. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "geom/geom.h"
#include "scene/rng.h"

static double plain(double v, double g) { return round(v / g) * g + 0.0; }

static void same(double v, double g) {
    double a = pm_snap(v, g), b = plain(v, g);
    cr_assert(memcmp(&a, &b, sizeof a) == 0, "pm_snap(%.17g, %.17g) = %.17g, round gives %.17g", v, g, a, b);
}

static const double grids[] = {0.001, 0.01, 1e-6, 1.0, 0.3, 0.125, 0.0625, 0.005, 1e-3 / 3};

Test(snap_round, matches_round_on_random_values) {
    pm_rng r;
    pm_rng_seed(&r, 0x5a9);
    for (int i = 0; i < 2000000; i++) {
        double g = grids[pm_rng_below(&r, sizeof grids / sizeof *grids)];
        double v = ldexp(pm_rng_range(&r, 0.5, 1.0), (int)pm_rng_int(&r, -40, 70));
        if (pm_rng_chance(&r, 0.5)) v = -v;
        same(v, g);
        same(nextafter(v, 0), g);
    }
}

Test(snap_round, matches_round_on_ties_and_edges) {
    pm_rng r;
    pm_rng_seed(&r, 0x71e);
    for (int i = 0; i < 400000; i++) {
        /* Power-of-two grids make (k + 1/2) g an exact tie. */
        double g = ldexp(1.0, (int)pm_rng_int(&r, -20, 2));
        double k = floor(ldexp(pm_rng_range(&r, 0, 1), (int)pm_rng_int(&r, 0, 53)));
        double v = (k + 0.5) * g;
        for (int s = 0; s < 2; s++, v = -v) {
            same(v, g);
            same(nextafter(v, INFINITY), g);
            same(nextafter(v, -INFINITY), g);
            same(k * g * (s ? -1 : 1), g);
        }
        /* Any grid: quotients near a half. */
        double h = grids[pm_rng_below(&r, sizeof grids / sizeof *grids)];
        double w = (k + 0.5) * h;
        same(w, h);
        same(-w, h);
        same(nextafter(w, 0), h);
        same(nextafter(-w, 0), h);
    }
    double edges[] = {0.0, -0.0, 0.49999999999999994, -0.49999999999999994, 0.5, -0.5, 1.5, -2.5,
                      0x1p52, -0x1p52, 0x1p52 - 0.5, -(0x1p52 - 0.5), 0x1p52 + 1, 0x1p53 + 2, 0x1p63,
                      -0x1p63, 0x1p64, 1e300, -1e300, 4.9e-324, -4.9e-324, 2.2250738585072014e-308, DBL_MAX};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
        for (size_t j = 0; j < sizeof grids / sizeof *grids; j++) {
            same(edges[i], 1.0);
            same(edges[i] * grids[j], grids[j]);
            same(nextafter(edges[i], INFINITY), grids[j]);
            same(nextafter(edges[i], -INFINITY), grids[j]);
        }
}

#include <criterion/criterion.h>
#include <math.h>

#include "geom/spline.h"
#include "geom/terrain.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"

/* A draped chord's error comes from a bound (pm_heightfield_chord_bound
 * plus the plan curve's closed form), not from probes: it must never be
 * below what dense probing measures, on any terrain and any road. */

/* A random heightfield: smooth, rough (independent node heights) or a
 * mix, stored as doubles or as float32, 2 .. 40 nodes a side. */
static pm_heightfield random_terrain(pm_arena *a, pm_rng *r) {
    pm_heightfield hf = {.origin = {pm_rng_range(r, -50, 0), pm_rng_range(r, -50, 0)},
                         .cell = pm_rng_range(r, 0.5, 8.0),
                         .cols = 2 + (uint32_t)pm_rng_below(r, 39),
                         .rows = 2 + (uint32_t)pm_rng_below(r, 39)};
    size_t n = (size_t)hf.cols * hf.rows;
    double rough = pm_rng_range(r, 0.0, 3.0), smooth = pm_rng_range(r, 0.0, 20.0);
    double kx = pm_rng_range(r, 0.01, 0.5), kz = pm_rng_range(r, 0.01, 0.5);
    double *h = pm_arena_alloc(a, n * sizeof *h);
    for (uint32_t row = 0; row < hf.rows; row++)
        for (uint32_t c = 0; c < hf.cols; c++)
            h[(size_t)row * hf.cols + c] =
                smooth * sin(c * kx) * cos(row * kz) + pm_rng_range(r, -rough, rough);
    if (pm_rng_chance(r, 0.5)) {
        float *f = pm_arena_alloc(a, n * sizeof *f);
        for (size_t k = 0; k < n; k++) f[k] = (float)h[k];
        hf.h32 = f;
    } else {
        hf.h = h;
    }
    return hf;
}

/* Points over the terrain and, now and then, beyond its edges (heights
 * clamp to the border there). */
static size_t random_road(pm_rng *r, const pm_heightfield *hf, double *pts, size_t max) {
    size_t n = 2 + (size_t)pm_rng_below(r, max - 1);
    double w = hf->cell * (hf->cols - 1), d = hf->cell * (hf->rows - 1);
    double out = pm_rng_chance(r, 0.3) ? 0.3 : 0.0;
    for (size_t i = 0; i < n; i++) {
        do {
            pts[3 * i] = hf->origin[0] + pm_rng_range(r, -out, 1.0 + out) * w;
            pts[3 * i + 2] = hf->origin[1] + pm_rng_range(r, -out, 1.0 + out) * d;
        } while (i > 0 && hypot(pts[3 * i] - pts[3 * i - 3], pts[3 * i + 2] - pts[3 * i - 1]) < 0.5);
        pts[3 * i + 1] = 0.0;
    }
    return n;
}

/* Every accepted chord's recorded error (the bound) is at least its error
 * measured with 400 probes refined around the worst, and within
 * max_error: max_error holds by construction (a chord without a bound,
 * whose plan projection turns back, is split until it has one). */
Test(drape_bound, recorded_error_is_never_below_dense_probes) {
    pm_arena *a = pm_arena_create(0);
    pm_rng r;
    pm_rng_seed(&r, 2026);
    double pts[3 * 8];
    size_t chords = 0;
    double slack_sum = 0.0;
    for (int iter = 0; iter < 300; iter++) {
        pm_heightfield hf = random_terrain(a, &r);
        size_t n = random_road(&r, &hf, pts, 8);
        pm_spline s;
        cr_assert_eq(pm_spline_init(a, &s, pts, n, false, PM_CURVE_CATMULL_ROM, 0.5), PM_OK);
        double errs[] = {0.2, 0.05, 0.01};
        pm_sample_opts o = {.max_error = errs[iter % 3], .max_segment = pm_rng_range(&r, 1.0, 50.0),
                            .height = pm_heightfield_height,
                            .height_bound = pm_heightfield_chord_bound, .height_ctx = &hf};
        pm_curve_sample *smp;
        size_t ns;
        cr_assert_eq(pm_spline_sample(a, &s, &o, &smp, &ns), PM_OK);
        for (size_t i = 1; i < ns; i++) {
            double dense = pm_spline_chord_error(&s, &o, smp + i - 1, 2, 400);
            cr_assert_geq(smp[i].err, dense, "iter %d chord %zu: recorded %.17g < dense %.17g", iter,
                          i, smp[i].err, dense);
            cr_assert_leq(dense, o.max_error, "iter %d chord %zu: %g > max_error %g", iter, i, dense,
                          o.max_error);
            chords++;
            cr_assert(smp[i].err_exact);
            cr_assert_leq(smp[i].err, o.max_error);
            slack_sum += smp[i].err - dense;
        }
    }
    /* And the bound is tight: on average within a fraction of max_error. */
    cr_assert_lt(slack_sum / (double)chords, 0.01, "mean slack %g m", slack_sum / (double)chords);
    pm_arena_destroy(a);
}

/* The terrain part alone: points within dp of a chord, in and out of the
 * grid, never deviate from the chord's height at their projection by
 * more than the bound. */
Test(drape_bound, height_bound_holds_off_the_chord) {
    pm_arena *a = pm_arena_create(0);
    pm_rng r;
    pm_rng_seed(&r, 99);
    for (int iter = 0; iter < 2000; iter++) {
        pm_heightfield hf = random_terrain(a, &r);
        double w = hf.cell * (hf.cols - 1), d = hf.cell * (hf.rows - 1);
        double A[3], B[3];
        for (int k = 0; k < 2; k++) {
            double *p = k ? B : A;
            p[0] = hf.origin[0] + pm_rng_range(&r, -0.3, 1.3) * w;
            p[2] = hf.origin[1] + pm_rng_range(&r, -0.3, 1.3) * d;
            p[1] = pm_heightfield_height(&hf, p[0], p[2]);
        }
        double ex = B[0] - A[0], ez = B[2] - A[2], len = hypot(ex, ez);
        if (len < 1e-6) continue;
        double dp = pm_rng_chance(&r, 0.2) ? 0.0 : pm_rng_range(&r, 0.0, 2.0 * hf.cell);
        double bound = pm_heightfield_chord_bound(&hf, A, B, dp, INFINITY);
        for (int k = 0; k <= 400; k++) {
            double s = k / 400.0, off = dp * pm_rng_range(&r, -1.0, 1.0);
            double x = A[0] + s * ex - off * ez / len, z = A[2] + s * ez + off * ex / len;
            double dev = fabs(pm_heightfield_height(&hf, x, z) - (A[1] + s * (B[1] - A[1])));
            cr_assert_leq(dev, bound * (1.0 + 1e-9) + 1e-9, "iter %d s %g: %.12g > bound %.12g",
                          iter, s, dev, bound);
        }
        /* A bound above stop may come early, but then is above stop. */
        double stop = 0.5 * bound;
        if (bound > 0.0) cr_assert_gt(pm_heightfield_chord_bound(&hf, A, B, dp, stop), stop);
    }
    pm_arena_destroy(a);
}

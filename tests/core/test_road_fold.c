/* road_fold.c: the one-pass test that no band folds (pm__road_fold_free,
 * two sides at once from shared corners, two bands at once with AVX, and
 * its two-lane form) gives exactly the verdict of the
 * plain per-band test (pm__road_band_ok on each side of each band, in the
 * order pm__road_fans walks them) on random sections: gentle and tight
 * turns, hairpins, cusps, repeated and collinear points, zero and mitred
 * frames, open and closed roads. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "road/road_internal.h"
#include "scene/arena.h"
#include "scene/rng.h"

/* Plain verdict: every band of both sides convex, as pm__road_fans asks
 * (a closed road's last band ends on its first section), and long enough
 * to fan at all. */
static bool plain_fold_free(const pm__level *L) {
    size_t m = L->closed ? L->n - 1 : L->n, nb = L->closed ? m : L->n - 1;
    if (m < 3) return false;
    for (size_t i = 0; i < nb; i++)
        for (int side = 0; side < 2; side++)
            if (!pm__road_band_ok(&L->sec[i], &L->sec[(i + 1) % m], side)) return false;
    return true;
}

/* Rounded to a grid of g metres (0: not), so points repeat and line up. */
static double snap(double v, double g) { return g > 0.0 ? g * round(v / g) : v; }

static void random_level(pm_arena *a, pm_rng *rng, pm__level *L) {
    memset(L, 0, sizeof *L);
    int kind = (int)pm_rng_below(rng, 8);
    size_t n = 2 + pm_rng_below(rng, kind >= 6 ? 5 : 120);
    L->closed = n >= 4 && pm_rng_chance(rng, 0.2);
    L->n = n;
    L->sec = pm_arena_calloc(a, n, sizeof *L->sec);
    cr_assert(L->sec);
    double W = 0.5 + 12.0 * pm_rng_unit(rng), g = pm_rng_chance(rng, 0.3) ? 0.25 : 0.0;
    double x = pm_rng_range(rng, -1e3, 1e3), z = pm_rng_range(rng, -1e3, 1e3), h = pm_rng_range(rng, -4, 4);
    for (size_t i = 0; i < n; i++) {
        pm__section *s = &L->sec[i];
        double step = kind == 5 && pm_rng_chance(rng, 0.2) ? 0.0 : pm_rng_range(rng, kind == 0 ? 1.0 : 0.05, 6.0);
        double turn = 0.0;
        switch (kind) {
        case 0: turn = pm_rng_range(rng, -0.01, 0.01); break;                 /* gentle */
        case 1: turn = pm_rng_range(rng, -0.6, 0.6); break;                   /* tight, both ways */
        case 2: turn = i > n / 3 && i < n / 3 + 6 ? 0.55 : 0.0; break;        /* a hairpin */
        case 3: turn = (i / 9) % 2 ? 0.3 : -0.3; break;                       /* S bends */
        case 4: turn = pm_rng_chance(rng, 0.1) ? pm_rng_range(rng, -3.0, 3.0) : 0.0; break;   /* corners, cusps */
        default: turn = pm_rng_range(rng, -0.1, 0.1); break;
        }
        if (i > 0) {
            h += turn;
            x += step * cos(h);
            z += step * sin(h);
        }
        double miter = kind == 4 && pm_rng_chance(rng, 0.3) ? pm_rng_range(rng, 1.0, 4.0) : 1.0;
        s->c[0] = snap(x, g);
        s->c[1] = pm_rng_range(rng, -2, 2);
        s->c[2] = snap(z, g);
        s->r[0] = -sin(h) * miter;
        s->r[1] = pm_rng_range(rng, -0.1, 0.1);
        s->r[2] = cos(h) * miter;
        if (g > 0.0) { s->r[0] = snap(s->r[0], 0.125); s->r[2] = snap(s->r[2], 0.125); }
        if (kind == 5 && pm_rng_chance(rng, 0.1)) s->r[0] = s->r[2] = 0.0;   /* no frame */
        if (kind == 7) {   /* axis steps, frames across or along them: exact zeros */
            static const double ax[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
            int d = (int)pm_rng_below(rng, 4), f = pm_rng_chance(rng, 0.6) ? (d + 1) % 4 : (int)pm_rng_below(rng, 4);
            double st = (double)pm_rng_below(rng, 3);
            s->c[0] = i > 0 ? L->sec[i - 1].c[0] + st * ax[d][0] : 0.0;
            s->c[2] = i > 0 ? L->sec[i - 1].c[2] + st * ax[d][1] : 0.0;
            s->r[0] = ax[f][0];
            s->r[2] = ax[f][1];
        }
        if (kind == 6) {   /* anything */
            s->c[0] = snap(pm_rng_range(rng, -5, 5), g);
            s->c[2] = snap(pm_rng_range(rng, -5, 5), g);
            s->r[0] = pm_rng_range(rng, -1, 1);
            s->r[2] = pm_rng_range(rng, -1, 1);
            if (g > 0.0) {   /* small integers: collinear and repeated corners */
                s->c[0] = (double)pm_rng_int(rng, -2, 2);
                s->c[2] = (double)pm_rng_int(rng, -2, 2);
                s->r[0] = (double)pm_rng_int(rng, -1, 1);
                s->r[2] = (double)pm_rng_int(rng, -1, 1);
            }
        }
        s->clamp[0] = s->clamp[1] = W;
        s->fan[0] = s->fan[1] = false;
    }
    if (L->closed) L->sec[n - 1] = L->sec[0];
}

Test(road_fold, one_pass_matches_the_plain_band_test) {
    pm_arena *a = pm_arena_create(0);
    pm_rng rng;
    pm_rng_seed(&rng, 2026);
    int free_ = 0, folds = 0;
    for (int trial = 0; trial < 20000; trial++) {
        pm__level L;
        random_level(a, &rng, &L);
        bool fast = pm__road_fold_free(&L), plain = plain_fold_free(&L);
        cr_assert_eq(fast, plain, "trial %d (n %zu, closed %d): one pass %d, plain %d", trial, L.n, L.closed,
                     fast, plain);
        /* The one pass two lanes wide (no AVX) too. */
        cr_assert_eq(pm__road_fold_free_x(&L, false), plain, "trial %d: two lanes", trial);
        free_ += plain;
        folds += !plain;
        pm_arena_reset(a);
    }
    /* Not vacuous: both verdicts occur often. */
    cr_assert_gt(free_, 2000, "fold free %d", free_);
    cr_assert_gt(folds, 3000, "folding %d", folds);
    pm_arena_destroy(a);
}

/* The one pass speaks only for fresh sections (no fan, every clamp the
 * full width): once pm__road_clamp_folds has cut or fanned, it says no. */
Test(road_fold, one_pass_refuses_sections_already_clamped) {
    pm_arena *a = pm_arena_create(0);
    pm_rng rng;
    pm_rng_seed(&rng, 7);
    int checked = 0;
    for (int trial = 0; trial < 2000; trial++) {
        pm__level L;
        random_level(a, &rng, &L);
        if (!pm__road_fold_free(&L)) { pm_arena_reset(a); continue; }
        size_t i = pm_rng_below(&rng, L.n);
        int side = (int)pm_rng_below(&rng, 2);
        if (pm_rng_chance(&rng, 0.5)) L.sec[i].fan[side] = true;
        else L.sec[i].clamp[side] *= 0.5;
        cr_assert_not(pm__road_fold_free(&L), "trial %d: section %zu side %d changed", trial, i, side);
        cr_assert_not(pm__road_fold_free_x(&L, false), "trial %d: two lanes", trial);
        checked++;
        pm_arena_reset(a);
    }
    cr_assert_gt(checked, 150, "checked %d", checked);
    pm_arena_destroy(a);
}

/* Three sections on a small integer grid, frames of -1, 0 and 1: corners
 * repeat, fall on each other's lines and on the centre line, so every
 * orientation is often exactly 0, the cases the one pass leaves to the
 * plain test. */
Test(road_fold, one_pass_matches_on_degenerate_integer_bands) {
    pm_rng rng;
    pm_rng_seed(&rng, 99);
    pm__section sec[4];
    int free_ = 0;
    for (int trial = 0; trial < 300000; trial++) {
        memset(sec, 0, sizeof sec);
        pm__level L = {.n = 3 + pm_rng_below(&rng, 2), .sec = sec};
        double W = (double)pm_rng_int(&rng, 1, 2);
        for (size_t i = 0; i < L.n; i++) {
            sec[i].c[0] = (double)pm_rng_int(&rng, -2, 2);
            sec[i].c[2] = (double)pm_rng_int(&rng, -2, 2);
            sec[i].r[0] = (double)pm_rng_int(&rng, -1, 1);
            sec[i].r[2] = (double)pm_rng_int(&rng, -1, 1);
            sec[i].clamp[0] = sec[i].clamp[1] = W;
        }
        bool fast = pm__road_fold_free(&L), plain = plain_fold_free(&L);
        cr_assert_eq(fast, plain, "trial %d: one pass %d, plain %d", trial, fast, plain);
        cr_assert_eq(pm__road_fold_free_x(&L, false), plain, "trial %d: two lanes", trial);
        free_ += plain;
    }
    cr_assert_gt(free_, 1000, "fold free %d", free_);
}

/* ---- welds ---- */

/* The plain weld (road_fold.c before its one-scan skip of sides that are
 * cut back nowhere): every side walks every section. */
static void plain_copy_collapse(pm__level *L, size_t from, size_t to, int side) {
    size_t nc = L->ncol;
    for (size_t k = 0; k < nc; k++) {
        if ((L->col[k] > 0.0) != (side == 1) || L->col[k] == 0.0 || !pm__road_collapsed(L, &L->sec[to], (uint32_t)k))
            continue;
        size_t t = to * nc + k, f = from * nc + (side ? nc - 1 : 0);
        memcpy(L->pos + 3 * t, L->pos + 3 * f, 3 * sizeof(double));
        if (L->nrm) memcpy(L->nrm + 3 * t, L->nrm + 3 * f, 3 * sizeof(float));
    }
}

static void plain_weld(pm__level *L) {
    size_t n = L->n, nc = L->ncol;
    double W[2] = {-L->col[0], L->col[nc - 1]};
    for (int side = 0; side < 2; side++) {
        size_t ko = side ? nc - 1 : 0;
        for (size_t i = 1; i < n; i++) {
            const double *a = L->pos + 3 * ((i - 1) * nc + ko), *b = L->pos + 3 * (i * nc + ko);
            if (L->sec[i].clamp[side] < W[side] && L->sec[i - 1].clamp[side] < W[side] &&
                hypot(b[0] - a[0], b[2] - a[2]) < 1e-4)
                plain_copy_collapse(L, i - 1, i, side);
        }
        if (!L->closed) continue;
        plain_copy_collapse(L, 0, n - 1, side);
        for (size_t i = n - 1; i-- > 0;) {
            const double *a = L->pos + 3 * ((i + 1) * nc + ko), *b = L->pos + 3 * (i * nc + ko);
            if (!(L->sec[i].clamp[side] < W[side]) || hypot(b[0] - a[0], b[2] - a[2]) >= 1e-4) break;
            if (memcmp(a, b, 3 * sizeof(double)) == 0) break;
            plain_copy_collapse(L, i + 1, i, side);
        }
    }
}

/* Random grids with runs of cut-back sections on either side, or on
 * none, whose collapse points lie within or beyond the weld distance:
 * the weld gives the plain weld's positions and normals, byte for byte. */
Test(road_fold, weld_matches_the_plain_weld) {
    pm_arena *a = pm_arena_create(0);
    pm_rng rng;
    pm_rng_seed(&rng, 31);
    int welded = 0;
    for (int trial = 0; trial < 4000; trial++) {
        pm__level L;
        memset(&L, 0, sizeof L);
        L.n = 2 + pm_rng_below(&rng, 40);
        L.ncol = 3 + (uint32_t)pm_rng_below(&rng, 5);
        L.closed = L.n >= 4 && pm_rng_chance(&rng, 0.3);
        double W = 1.0 + 5.0 * pm_rng_unit(&rng);
        L.col = pm_arena_alloc(a, L.ncol * sizeof(double));
        for (uint32_t k = 0; k < L.ncol; k++) L.col[k] = -W + 2.0 * W * k / (L.ncol - 1);
        L.sec = pm_arena_calloc(a, L.n, sizeof *L.sec);
        size_t np = L.n * L.ncol * 3;
        double *pos = pm_arena_alloc(a, 3 * np * sizeof(double));
        float *nrm = pm_arena_alloc(a, 2 * np * sizeof(float));
        cr_assert(L.col && L.sec && pos && nrm);
        int cut = (int)pm_rng_below(&rng, 4);   /* none, left, right, both */
        for (size_t i = 0; i < L.n; i++)
            for (int side = 0; side < 2; side++)
                L.sec[i].clamp[side] = (cut & (1 << side)) && pm_rng_chance(&rng, 0.6) ? W * pm_rng_unit(&rng) : W;
        for (size_t v = 0; v < np; v++) {
            pos[v] = pm_rng_range(&rng, -20, 20);
            nrm[v] = (float)pm_rng_unit(&rng);
        }
        /* Collapse points 1e-5 or 1e-3 apart at runs of sections. */
        for (size_t i = 1; i < L.n; i++)
            for (int side = 0; side < 2; side++)
                if (pm_rng_chance(&rng, 0.7)) {
                    size_t ko = side ? L.ncol - 1 : 0;
                    double *p = pos + 3 * (i * L.ncol + ko), *q = pos + 3 * ((i - 1) * L.ncol + ko);
                    double d = pm_rng_chance(&rng, 0.8) ? 1e-5 : 1e-3;
                    p[0] = q[0] + d;
                    p[1] = q[1] + pm_rng_range(&rng, -1, 1);
                    p[2] = q[2] - d;
                }
        memcpy(pos + np, pos, np * sizeof(double));
        memcpy(pos + 2 * np, pos, np * sizeof(double));   /* as it was */
        memcpy(nrm + np, nrm, np * sizeof(float));
        L.pos = pos;
        L.nrm = nrm;
        pm__road_weld_collapses(&L);
        L.pos = pos + np;
        L.nrm = nrm + np;
        plain_weld(&L);
        cr_assert(memcmp(pos, pos + np, np * sizeof(double)) == 0, "trial %d: positions differ", trial);
        cr_assert(memcmp(nrm, nrm + np, np * sizeof(float)) == 0, "trial %d: normals differ", trial);
        /* Not vacuous: the weld moved something. */
        welded += memcmp(pos, pos + 2 * np, np * sizeof(double)) != 0;
        pm_arena_reset(a);
    }
    cr_assert_gt(welded, 1000, "welded %d", welded);
    pm_arena_destroy(a);
}

/* pm__road_fold_free's band check from six shared differences says
 * "surely convex" exactly when the four plain orientations do, on random
 * band ends: convex and folded quads, tiny and huge coordinates, points
 * on a coarse grid (repeated corners, collinear ones, zero orientations
 * of either sign), infinities. Either way wrong would fail: too eager is
 * a wrong verdict, too shy only slower, so both are checked here. */
Test(road_fold, six_difference_band_check_equals_the_plain_one) {
    pm_rng rng;
    pm_rng_seed(&rng, 77);
    int sure = 0, unsure = 0;
    for (int trial = 0; trial < 200000; trial++) {
        double p[8], q[8];
        int kind = (int)pm_rng_below(&rng, 4);
        double scale = kind == 3 ? pow(10.0, pm_rng_range(&rng, -6, 8)) : 10.0;
        double cx = pm_rng_range(&rng, -1e3, 1e3), cz = pm_rng_range(&rng, -1e3, 1e3);
        double h = pm_rng_range(&rng, -4, 4), W = pm_rng_range(&rng, 0.5, 6.0), step = pm_rng_range(&rng, -2.0, 8.0);
        for (int k = 0; k < 2; k++) {
            double *v = k ? q : p;
            double hh = h + (k ? pm_rng_range(&rng, -1.5, 1.5) : 0.0);
            double x = cx + (k ? step * cos(h) : 0.0), z = cz + (k ? step * sin(h) : 0.0);
            double rx = -sin(hh) * W, rz = cos(hh) * W;
            /* lanes: u = (centre, left corner), v = (right corner, centre) */
            double ux[2] = {x, x - rx}, uz[2] = {z, z - rz}, vx[2] = {x + rx, x}, vz[2] = {z + rz, z};
            for (int l = 0; l < 2; l++) {
                v[0 + l] = ux[l], v[2 + l] = uz[l], v[4 + l] = vx[l], v[6 + l] = vz[l];
            }
        }
        if (kind == 1 || kind == 2)   /* a grid: repeats, collinear corners, exact zeros */
            for (int i = 0; i < 8; i++) {
                p[i] = round(p[i] * (kind == 1 ? 1.0 : 0.25)) / (kind == 1 ? 1.0 : 0.25);
                q[i] = round(q[i] * (kind == 1 ? 1.0 : 0.25)) / (kind == 1 ? 1.0 : 0.25);
            }
        if (kind == 3)
            for (int i = 0; i < 8; i++) p[i] *= scale, q[i] *= scale;
        if (trial % 997 == 0) q[pm_rng_below(&rng, 8)] = pm_rng_chance(&rng, 0.5) ? INFINITY : -INFINITY;
        if (trial % 499 == 0) p[pm_rng_below(&rng, 8)] = q[pm_rng_below(&rng, 8)];
        bool fast = pm__road_bands_sure(p, q, true), plain = pm__road_bands_sure(p, q, false);
        cr_assert_eq(fast, plain, "trial %d: six differences say %d, plain %d", trial, fast, plain);
        sure += plain;
        unsure += !plain;
    }
    cr_assert_gt(sure, 20000, "sure %d", sure);
    cr_assert_gt(unsure, 20000, "unsure %d", unsure);
}

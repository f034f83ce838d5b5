/* A mouth's bent line (geom/plan_overlap.h: pm_pbent): a region shown on
 * one side of p -> k -> q (pm_pbent_loop_side) and a triangle shown on
 * the other (pm_pbent_other_side) never overlap. Seams at any angle, far
 * from the origin or near it, k the rounded midpoint moved by up to a few
 * ulps (so the path turns either way or not at all); regions that are
 * single triangles or strips of rows leaving the seam (straight, bent,
 * spoiled by a point pushed across); triangles with corners on the seam,
 * near it (1e-7 to 10 m off), and on its extension beyond p and q (where
 * a sidewalk's outer point lies). Every pair called apart is checked with
 * pm_test_overlap.h's exact test; every side a loop is called on is
 * checked with exact orientations of its points. Every triangle test is
 * answered the same by the AVX2 lanes, the SSE2 lanes, a scalar copy of
 * their operations and the corner-by-corner path alone; every loop
 * between two mouths gets the same sides from the two lines' AVX2 runs,
 * the SSE2 loop and each line alone. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>

/* plan_overlap.c compiled in with its AVX2 lanes switchable (its external
 * symbols all defined here, so the linker takes this copy). */
static bool narrow;
#define PM__SEAM_WIDE (!narrow)
#include "../../core/geom/plan_overlap.c"

#include "geom/plan_overlap.h"
#include "geom/predicates.h"
#include "pm_test_overlap.h"
#include "pm_test_strip.h"
#include "scene/rng.h"

typedef struct seam { float p[2], k[2], q[2]; double c[2], t[2], n[2], h; } seam;

static float nudge(pm_rng *r, float v) {
    int s = (int)pm_rng_int(r, -3, 3);
    for (; s > 0; s--) v = nextafterf(v, INFINITY);
    for (; s < 0; s++) v = nextafterf(v, -INFINITY);
    return v;
}

static void make_seam(pm_rng *r, seam *S) {
    double ang = pm_rng_chance(r, 0.15) ? pm_rng_int(r, 0, 3) * 1.5707963267948966 : pm_rng_range(r, 0, 6.283185307179586);
    double far = pm_rng_chance(r, 0.2) ? 1 : pm_rng_chance(r, 0.5) ? 100 : 4000;
    S->c[0] = pm_rng_range(r, -far, far), S->c[1] = pm_rng_range(r, -far, far);
    S->t[0] = cos(ang), S->t[1] = sin(ang), S->n[0] = -S->t[1], S->n[1] = S->t[0];
    S->h = pm_rng_range(r, 1.5, 8);
    for (int i = 0; i < 2; i++) {
        S->p[i] = (float)(S->c[i] - S->h * S->t[i]);
        S->q[i] = (float)(S->c[i] + S->h * S->t[i]);
        S->k[i] = (float)(((double)S->p[i] + S->q[i]) / 2);
        if (pm_rng_chance(r, 0.7)) S->k[i] = nudge(r, S->k[i]);
    }
}

/* A point: p, k or q; near the seam on side s (off by 1e-7 to 10 m); or on
 * its line beyond p or q (rounded to floats). */
static void point(pm_rng *r, const seam *S, int s, float out[2]) {
    int kind = (int)pm_rng_int(r, 0, 9);
    const float *m[3] = {S->p, S->k, S->q};
    if (kind < 3) {
        out[0] = m[kind][0], out[1] = m[kind][1];
        return;
    }
    double a = kind < 8 ? pm_rng_range(r, -2.5, 2.5) * S->h : (pm_rng_chance(r, 0.5) ? 1 : -1) * pm_rng_range(r, 1, 3) * S->h;
    double d = kind < 8 ? s * pow(10, pm_rng_range(r, -7, 1)) : 0;
    for (int i = 0; i < 2; i++) out[i] = (float)(S->c[i] + a * S->t[i] + d * S->n[i]);
}

static bool is_mouth(const seam *S, const float *v) {
    return (v[0] == S->p[0] && v[1] == S->p[1]) || (v[0] == S->k[0] && v[1] == S->k[1]) ||
           (v[0] == S->q[0] && v[1] == S->q[1]);
}

/* Every point of the loop but p, k, q exactly on side s of both lines. */
static void side_sound(const seam *S, const float *xz, uint32_t m, int s) {
    double p[2] = {S->p[0], S->p[1]}, k[2] = {S->k[0], S->k[1]}, q[2] = {S->q[0], S->q[1]};
    for (uint32_t i = 0; i < m; i++) {
        if (is_mouth(S, xz + 2 * i)) continue;
        double v[2] = {xz[2 * i], xz[2 * i + 1]};
        double o1 = pm_orient2d(p, k, v), o2 = pm_orient2d(k, q, v);
        cr_assert(o1 * s > 0 && o2 * s > 0, "a loop called on side %d has a point off it", s);
    }
}

static size_t apart, declined, met_overlapping, lanes_compared, lanes_off, batches, batches_all;

/* pm__bent_corners's operations one lane at a time in scalar code. */
static unsigned corners_scalar(const pm_pbent *M, int sigma, const float *const v[3]) {
    unsigned out = 0;
    for (int i = 0; i < 3; i++)
        for (int l = 0; l < 2; l++) {
            double x = v[i][0], z = v[i][2];
            double left = (M->ax[l] - x) * (M->bz[l] - z), right = (M->az[l] - z) * (M->bx[l] - x);
            double det = (left - right) * -sigma, bound = 3.3306690738754716e-16 * (fabs(left) + fabs(right));
            out |= (det > bound ? 1u : 0u) << (2 * i + l) | (bound == 0 ? 1u : 0u) << (8 + 2 * i + l);
        }
    return out;
}

/* pm_pbent_other_side corner by corner as it was written before the lanes:
 * each corner's signs (pm__bent_signs), then its place on the seam, then
 * pm__sure_side against each line. */
static bool other_side_plain(pm_pbent *M, int sigma, const float *const v[3]) {
    const unsigned other = sigma > 0 ? 12u : 3u;
    unsigned all = 3, each = 1;
    for (int i = 0; i < 3; i++) {
        float x = v[i][0], z = v[i][2];
        unsigned s = pm__bent_signs(M, x, z), in = (s & other) >> (sigma > 0 ? 2 : 0);
        if (in != 3) {
            int w = pm__bent_which(M, x, z);
            if (w == 1) in = 1 | (pm_pbent_turn(M) != sigma ? 2u : 0u);
            else if (w == 3) in = 2 | (pm_pbent_turn(M) != sigma ? 1u : 0u);
            else if (w == 2) in = 3;
            else {
                const double p[2] = {M->ax[0], M->az[0]}, k[2] = {M->bx[0], M->bz[0]}, q[2] = {M->bx[1], M->bz[1]};
                int s1 = pm__sure_side(p, k, x, z), s2 = pm__sure_side(k, q, x, z);
                in = (s1 == -sigma || s1 == 0 ? 1u : 0u) | (s2 == -sigma || s2 == 0 ? 2u : 0u);
            }
        }
        all &= in;
        each &= in != 0;
    }
    int turn = pm_pbent_turn(M);
    if (turn == 0) return each;
    return turn == sigma ? all != 0 : all == 3;
}

#ifdef PM__SEAM_AVX2
__attribute__((target("avx2"))) static unsigned corners_avx2(const pm_pbent *M, int sigma, const float *const v[3]) {
    return pm__bent_corners_avx2(M, v, sigma > 0 ? -0.0 : 0.0);
}
#endif

/* pm_pbent_other_side_all on one triangle, checked: the lanes (AVX2 where
 * the CPU has it, and SSE2) as the scalar copy, and the whole answer as
 * the plain path's. */
static bool other_side(const pm_pbent *M, int side, const float *a, const float *b, const float *c) {
    const float *const v[3] = {a, b, c}, *const t[1][3] = {{a, b, c}};
    unsigned want_bits = corners_scalar(M, side, v);
    pm_pbent W = *M, N = *M, R = *M;
    unsigned wide_bits = want_bits;
#ifdef PM__SEAM_AVX2
    if (__builtin_cpu_supports("avx2")) wide_bits = corners_avx2(M, side, v);
#endif
    narrow = false;
    bool wide = pm_pbent_other_side_all(&W, side, t, 1);
    narrow = true;
    unsigned narrow_bits = pm__bent_corners(M, side, v);
    bool nar = pm_pbent_other_side_all(&N, side, t, 1);
    narrow = false;
    bool want = other_side_plain(&R, side, v);
    cr_assert_eq(wide_bits, want_bits, "the AVX2 lanes differ from the scalar copy");
    cr_assert_eq(narrow_bits, want_bits, "the SSE2 lanes differ from the scalar copy");
    cr_assert_eq(wide, want, "the AVX2 path's answer differs from the plain one");
    cr_assert_eq(nar, want, "the SSE2 path's answer differs from the plain one");
    lanes_compared++, lanes_off += (want_bits & 63u) == 63u;
    return want;
}

/* Region (a loop of m points, triangles tr[0 .. nr)) against the triangle
 * of 3D corners a, b, c. */
static void check_pair(const pm_pbent *M, int side, const ptri *tr, size_t nr, const float *a,
                       const float *b, const float *c) {
    ptri tj;
    float A[3] = {a[0], 0, a[1]}, B[3] = {b[0], 0, b[1]}, C[3] = {c[0], 0, c[1]};
    if (!tri(a, b, c, &tj)) return;
    bool over = false;
    for (size_t i = 0; i < nr; i++) over |= ptri_overlap(&tr[i], &tj);
    met_overlapping += over;
    if (!side) {
        declined++;
        return;
    }
    if (!other_side(M, side, A, B, C)) {
        declined++;
        return;
    }
    cr_assert(!over, "a triangle called on the other side of the bent line overlaps the region");
    apart++;
}

Test(pbent, single_triangles_on_either_side, .timeout = 120) {
    pm_rng r;
    pm_rng_seed(&r, 20261213);
    for (int it = 0; it < 400000; it++) {
        seam S;
        make_seam(&r, &S);
        pm_pbent M;
        bool ok = pm_pbent_init(&M, S.p, S.k, S.q);
        cr_assert(ok, "a mouth's seam refused");
        int s = pm_rng_chance(&r, 0.5) ? 1 : -1;
        float v[6][2];
        for (int i = 0; i < 3; i++) point(&r, &S, pm_rng_chance(&r, 0.9) ? s : -s, v[i]);
        for (int i = 3; i < 6; i++) point(&r, &S, pm_rng_chance(&r, 0.9) ? -s : s, v[i]);
        ptri tr;
        if (!tri(v[0], v[1], v[2], &tr)) continue;
        float xz[6] = {v[0][0], v[0][1], v[1][0], v[1][1], v[2][0], v[2][1]};
        int side = pm_pbent_loop_side(&M, xz, 3);
        if (side) side_sound(&S, xz, 3, side);
        check_pair(&M, side, &tr, 1, v[3], v[4], v[5]);
    }
    cr_log_info("single triangles: %zu apart, %zu declined, %zu overlapping met; %zu lane tests, %zu all off",
                apart, declined, met_overlapping, lanes_compared, lanes_off);
    cr_assert_geq(apart, 30000);
    cr_assert_geq(lanes_compared, 100000);
    cr_assert_geq(lanes_off, 5000);
    cr_assert_geq(lanes_compared - lanes_off, 10000);
    cr_assert_geq(met_overlapping, 5000);
}

/* A strip of rows leaving the seam on side s: row 0 p, k, q, each next a
 * step further (bent by a little), sometimes one point pushed across. */
Test(pbent, strips_of_rows_leaving_the_seam, .timeout = 120) {
    pm_rng r;
    pm_rng_seed(&r, 20261214);
    size_t shown = 0, spoiled = 0, folded = 0;
    for (int it = 0; it < 40000; it++) {
        seam S;
        make_seam(&r, &S);
        pm_pbent M;
        cr_assert(pm_pbent_init(&M, S.p, S.k, S.q));
        int s = pm_rng_chance(&r, 0.5) ? 1 : -1, G = (int)pm_rng_int(&r, 1, 12);
        double step = pm_rng_range(&r, 0.05, 6), bend = pm_rng_range(&r, -0.4, 0.4);
        float row[13][3][2];
        for (int i = 0; i < 2; i++) row[0][0][i] = S.p[i], row[0][1][i] = S.k[i], row[0][2][i] = S.q[i];
        for (int g = 1; g <= G; g++)
            for (int j = 0; j < 3; j++) {
                double a = (j - 1) * S.h + bend * g * g * step, d = s * g * step;
                for (int i = 0; i < 2; i++) row[g][j][i] = (float)(S.c[i] + a * S.t[i] + d * S.n[i]);
            }
        bool spoil = pm_rng_chance(&r, 0.2);
        if (spoil) {
            int g = (int)pm_rng_int(&r, 1, G), j = (int)pm_rng_int(&r, 0, 2);
            double a = (j - 1) * S.h, d = -s * pow(10, pm_rng_range(&r, -6, 0));
            for (int i = 0; i < 2; i++) row[g][j][i] = (float)(S.c[i] + a * S.t[i] + d * S.n[i]);
            spoiled++;
        }
        float xz[2 * (2 * 12 + 4)];
        uint32_t m = strip_outline(&row[0][0][0], G, 3, xz);
        ptri tr[4 * 12];
        size_t nr;
        bool fine = strip_certified(&row[0][0][0], G, 3, tr, &nr);
        if (!fine) {
            folded++;
            continue;
        }
        int side = pm_pbent_loop_side(&M, xz, m);
        if (side) {
            side_sound(&S, xz, m, side);
            shown++;
        }
        /* Both lines at once, one NULL, give the same sides. */
        pm_pbent M2;
        cr_assert(pm_pbent_init(&M2, S.q, S.k, S.p));
        const pm_pbent *two[2] = {&M, &M2}, *half[2] = {NULL, &M2};
        int sides[2], hs[2];
        pm_pbent_loop_sides(two, 2, xz, m, sides);
        pm_pbent_loop_sides(half, 2, xz, m, hs);
        cr_assert(sides[0] == side && sides[1] == pm_pbent_loop_side(&M2, xz, m) && hs[0] == 0 && hs[1] == sides[1]);
        /* (A strip is simple only when its rows do not fold: the region's
         * triangles are what matter here, the sides only where shown.) */
        float c3[12][3][3];
        const float *t[12][3];
        bool each = true;
        for (int k = 0; k < 12; k++) {
            float v[3][2];
            for (int i = 0; i < 3; i++) point(&r, &S, pm_rng_chance(&r, 0.9) ? -s : s, v[i]);
            check_pair(&M, side, tr, nr, v[0], v[1], v[2]);
            for (int i = 0; i < 3; i++) c3[k][i][0] = v[i][0], c3[k][i][1] = 0, c3[k][i][2] = v[i][1], t[k][i] = c3[k][i];
            if (side && k < 4) {   /* (a few, so that all are often shown) */
                pm_pbent E = M;
                each &= pm_pbent_other_side_all(&E, side, (const float *const(*)[3])t + k, 1);
            }
        }
        /* Four triangles at once, wide and narrow, as each alone. */
        if (side) {
            pm_pbent W = M, N = M;
            narrow = false;
            bool wide = pm_pbent_other_side_all(&W, side, (const float *const(*)[3])t, 4);
            narrow = true;
            bool nar = pm_pbent_other_side_all(&N, side, (const float *const(*)[3])t, 4);
            narrow = false;
            cr_assert(wide == each && nar == each, "four triangles at once: %d %d, each alone %d", wide, nar, each);
            batches++, batches_all += each;
        }
    }
    cr_log_info("strips: %zu shown (%zu spoiled, %zu folded); pairs %zu apart, %zu declined, %zu overlapping met",
                shown, spoiled, folded, apart, declined, met_overlapping);
    cr_assert_geq(shown, 20000);
    cr_assert_geq(apart, 100000);
    cr_assert_geq(met_overlapping, 10000);
    cr_log_info("strips: %zu batches of four triangles, %zu all on the other side", batches, batches_all);
    cr_assert_geq(batches_all, 2000);
    cr_assert_geq(batches - batches_all, 3000);
}

/* Every point of the loop but M's p, k, q exactly on side s of both its lines. */
static void side_sound_of(const pm_pbent *M, const float *xz, uint32_t m, int s) {
    const double p[2] = {M->f[0][0], M->f[0][1]}, k[2] = {M->f[1][0], M->f[1][1]}, q[2] = {M->f[2][0], M->f[2][1]};
    for (uint32_t i = 0; i < m; i++) {
        if (pm__bent_which(M, xz[2 * i], xz[2 * i + 1])) continue;
        double v[2] = {xz[2 * i], xz[2 * i + 1]};
        double o1 = pm_orient2d(p, k, v), o2 = pm_orient2d(k, q, v);
        cr_assert(o1 * s > 0 && o2 * s > 0, "a loop called on side %d has a point off it", s);
    }
}

/* Row g of a strip (C points) across the seam line c + a t at distance d
 * along n: its ends at a = -h, h, the points between evenly (rounded). */
static void seam_row(const seam *S, double d, double bend, int C, float (*row)[2]) {
    for (int j = 0; j < C; j++) {
        double a = (2.0 * j / (C - 1) - 1) * S->h + bend;
        for (int i = 0; i < 2; i++) row[j][i] = (float)(S->c[i] + a * S->t[i] + d * S->n[i]);
    }
}

/* A road's outline between two mouths: a strip of rows leaving seam S
 * (row 0: p .. q, k among them when C is odd), its last row a second
 * mouth (its own p, k, q: k the rounded midpoint moved by ulps), some
 * points pushed across either line, moved onto a mouth's p, k or q or
 * onto a line; read from any point, either way round. Both lines at once
 * (the AVX2 runs where the CPU has them, and the SSE2 loop), each alone
 * and each with the other NULL give the same sides; a side shown is
 * checked with exact orientations. */
Test(pbent, loops_between_two_mouths_wide_as_narrow, .timeout = 300) {
    pm_rng r;
    pm_rng_seed(&r, 20261216);
    size_t compared = 0, both = 0, one = 0, none = 0, wide_runs = 0;
    for (int it = 0; it < 120000; it++) {
        seam S;
        make_seam(&r, &S);
        int s = pm_rng_chance(&r, 0.5) ? 1 : -1, G = (int)pm_rng_int(&r, 1, 14);
        int C = pm_rng_chance(&r, 0.7) ? 3 : (int)pm_rng_int(&r, 2, 6);
        double step = pm_rng_range(&r, 0.05, 6), bend = pm_rng_range(&r, -0.3, 0.3);
        float rows[15][6][2];
        for (int g = 0; g <= G; g++) seam_row(&S, s * g * step, 0.1 * bend * g * step, C, rows[g]);
        /* Row 0 on the seam itself: p, k (the seam's, nudged), q. */
        rows[0][0][0] = S.p[0], rows[0][0][1] = S.p[1], rows[0][C - 1][0] = S.q[0], rows[0][C - 1][1] = S.q[1];
        if (C % 2) rows[0][C / 2][0] = S.k[0], rows[0][C / 2][1] = S.k[1];
        /* The last row a mouth of its own. */
        float *p2 = rows[G][0], *q2 = rows[G][C - 1], k2[2];
        for (int i = 0; i < 2; i++) k2[i] = nudge(&r, (float)(((double)p2[i] + q2[i]) / 2));
        if (C % 2) rows[G][C / 2][0] = k2[0], rows[G][C / 2][1] = k2[1];
        float xz[2 * (2 * 14 + 2 * 6)], lp[2 * (2 * 14 + 2 * 6)];
        float packed[15 * 6 * 2];   /* (strip_outline's rows: C points each) */
        for (int g = 0; g <= G; g++)
            for (int j = 0; j < C; j++) packed[2 * (g * C + j)] = rows[g][j][0], packed[2 * (g * C + j) + 1] = rows[g][j][1];
        uint32_t m = strip_outline(packed, G, C, lp);
        pm_pbent M[2];
        cr_assert(pm_pbent_init(&M[0], S.p, S.k, S.q));
        bool two = pm_rng_chance(&r, 0.5) ? pm_pbent_init(&M[1], p2, k2, q2) : pm_pbent_init(&M[1], q2, k2, p2);
        /* Spoil: a point pushed across a line, onto a mouth's p, k, q, or onto a line. */
        int spoil = (int)pm_rng_int(&r, 0, 5);
        for (int t = 0; t < spoil && spoil >= 3; t++) {
            uint32_t at = (uint32_t)pm_rng_int(&r, 0, (int)m - 1);
            int e = (int)pm_rng_int(&r, 0, 1), kind = (int)pm_rng_int(&r, 0, 3);
            const pm_pbent *W = &M[two ? e : 0];
            if (kind == 0) {
                int c = (int)pm_rng_int(&r, 0, 2);
                lp[2 * at] = W->f[c][0], lp[2 * at + 1] = W->f[c][1];
            } else {
                int l = (int)pm_rng_int(&r, 0, 1);
                double u = kind == 1 ? pm_rng_range(&r, -1, 2) : pm_rng_range(&r, 0, 1);
                double off = kind == 3 ? pm_rng_range(&r, -1, 1) * pow(10, pm_rng_range(&r, -7, 0)) : 0;
                double dx = W->f[l + 1][0] - W->f[l][0], dz = W->f[l + 1][1] - W->f[l][1];
                lp[2 * at] = (float)(W->f[l][0] + u * dx - off * dz);
                lp[2 * at + 1] = (float)(W->f[l][1] + u * dz + off * dx);
            }
        }
        /* From any point, either way round. */
        uint32_t from = (uint32_t)pm_rng_int(&r, 0, (int)m - 1);
        bool back = pm_rng_chance(&r, 0.5);
        for (uint32_t i = 0; i < m; i++) {
            uint32_t j = back ? (from + m - i) % m : (from + i) % m;
            xz[2 * i] = lp[2 * j], xz[2 * i + 1] = lp[2 * j + 1];
        }
        const pm_pbent *use[2] = {&M[0], two ? &M[1] : NULL};
        int wide[2], nar[2], alone[2] = {pm_pbent_loop_side(&M[0], xz, m), two ? pm_pbent_loop_side(&M[1], xz, m) : 0};
        narrow = false;
        pm_pbent_loop_sides(use, 2, xz, m, wide);
        narrow = true;
        pm_pbent_loop_sides(use, 2, xz, m, nar);
        narrow = false;
        cr_assert(wide[0] == nar[0] && wide[1] == nar[1], "loop %d: both lines wide (%d %d), narrow (%d %d)", it,
                  wide[0], wide[1], nar[0], nar[1]);
        cr_assert(wide[0] == alone[0] && wide[1] == alone[1], "loop %d: both lines (%d %d), each alone (%d %d)", it,
                  wide[0], wide[1], alone[0], alone[1]);
        if (two) {
            const pm_pbent *half[2][2] = {{&M[0], NULL}, {NULL, &M[1]}};
            for (int h = 0; h < 2; h++) {
                int hs[2];
                pm_pbent_loop_sides(half[h], 2, xz, m, hs);
                cr_assert(hs[h] == wide[h] && hs[1 - h] == 0, "loop %d: one line NULL", it);
            }
        }
        for (int e = 0; e < 2; e++)
            if (wide[e]) side_sound_of(&M[e], xz, m, wide[e]);
        compared++;
        both += wide[0] && wide[1], one += !wide[0] != !wide[1], none += !wide[0] && !wide[1];
        wide_runs += two && m > PM__BENT_RUN;
    }
    cr_log_info("loops between two mouths: %zu compared, %zu shown on both, %zu on one, %zu on none", compared, both,
                one, none);
    cr_assert_geq(compared, 100000);
    cr_assert_geq(both, 20000);
    cr_assert_geq(one, 10000);
    cr_assert_geq(none, 10000);
    cr_assert_geq(wide_runs, 30000);
}

/* pm_pbent_other_side's answer from the filter's bits as it was written
 * before the turn was left unfound where it does not matter: each
 * corner's place, p and q by the turn. */
static bool in_by_turn(pm_pbent *M, int sigma, const float *const v[3], unsigned bits) {
    unsigned all = 3, each = 1;
    for (int i = 0; i < 3; i++) {
        unsigned in = bits >> 2 * i & 3u;
        if (in != 3) {
            int w = pm__bent_which(M, v[i][0], v[i][2]);
            if (w == 1) in = 1 | (pm_pbent_turn(M) != sigma ? 2u : 0u);
            else if (w == 3) in = 2 | (pm_pbent_turn(M) != sigma ? 1u : 0u);
            else if (w == 2) in = 3;
            else in |= bits >> (8 + 2 * i) & 3u;
        }
        all &= in;
        each &= in != 0;
    }
    if (all == 3) return true;
    int turn = pm_pbent_turn(M);
    if (turn == 0) return each;
    return turn == sigma ? all != 0 : all == 3;
}

/* pm__bent_in on every filter answer (each corner's two sure bits and two
 * zero bits), every choice of corners among p, k, q and a point off the
 * seam, every turn and both sides, against the answer found with the
 * turn; the turn found only where the answers for the three turns differ. */
Test(pbent, corner_places_every_case_against_the_turn) {
    const float p[2] = {0, 0}, k[2] = {2, 1}, q[2] = {4, 0};
    const float P[3] = {0, 0, 0}, K[3] = {2, 0, 1}, Q[3] = {4, 0, 0}, X[3] = {1, 0, 7};
    const float *const place[4] = {P, K, Q, X};
    size_t cases = 0, unfound = 0;
    for (int turn = -1; turn <= 1; turn++)
        for (int sigma = -1; sigma <= 1; sigma += 2)
            for (int c = 0; c < 64; c++)
                for (unsigned b = 0; b < 4096; b++) {
                    const float *const v[3] = {place[c & 3], place[c >> 2 & 3], place[c >> 4]};
                    unsigned bits = (b & 63u) | (b >> 6) << 8;
                    pm_pbent M, R;
                    cr_assert(pm_pbent_init(&M, p, k, q));
                    R = M;
                    R.turn = turn;   /* (the turn asked: this one) */
                    bool want = in_by_turn(&R, sigma, v, bits);
                    bool got = pm__bent_in(&M, sigma, v, bits);
                    if (M.turn == PM_PBENT_TURN_UNKNOWN) unfound++;
                    else M.turn = turn;
                    /* (found: the real turn of p, k, q is 1; asked again with the case's) */
                    if (M.turn != PM_PBENT_TURN_UNKNOWN) got = pm__bent_in(&M, sigma, v, bits);
                    cr_assert_eq(got, want, "turn %d, sigma %d, corners %d, bits %#x", turn, sigma, c, bits);
                    cases++;
                }
    cr_log_info("corner places: %zu cases, %zu without the turn", cases, unfound);
    cr_assert_geq(unfound, cases / 4);
    cr_assert_geq(cases - unfound, cases / 20);
}

Test(pbent, degenerate_seams_refused) {
    float p[2] = {1, 2}, q[2] = {5, 2}, k[2] = {3, 2}, out[2] = {7, 2};
    pm_pbent M;
    cr_assert(pm_pbent_init(&M, p, k, q) && pm_pbent_turn(&M) == 0);
    cr_assert(!pm_pbent_init(&M, p, p, q));
    cr_assert(!pm_pbent_init(&M, p, q, q));
    cr_assert(!pm_pbent_init(&M, p, out, q), "k beyond q: the rays would overlap");
    /* A loop with an edge p q (the seam not split at k) is not shown. */
    float xz[8] = {1, 2, 5, 2, 5, 6, 1, 6};
    cr_assert_eq(pm_pbent_loop_side(&M, xz, 4), 0);
    pm_pbent_init(&M, p, k, q);
    cr_assert_eq(pm_pbent_loop_side(&M, xz, 4), 0);
    float xz2[10] = {1, 2, 3, 2, 5, 2, 5, 6, 1, 6};
    cr_assert_eq(pm_pbent_loop_side(&M, xz2, 5), 1);
}

/* The float orientation's sign against pm_orient2d: nearly collinear
 * triples (a midpoint rounded and moved by ulps) at every scale, random
 * ones, exact zeros, huge and tiny floats. */
Test(pbent, float_orientation_sign_against_pm_orient2d) {
    pm_rng r;
    pm_rng_seed(&r, 20261215);
    size_t zero = 0, nonzero = 0;
    for (int it = 0; it < 300000; it++) {
        float a[2], b[2], c[2];
        double scale = pow(10, pm_rng_range(&r, -30, 30));
        for (int i = 0; i < 2; i++) {
            a[i] = (float)(pm_rng_range(&r, -1, 1) * scale);
            c[i] = (float)(pm_rng_range(&r, -1, 1) * scale);
            b[i] = it % 3 == 0 ? (float)(pm_rng_range(&r, -1, 1) * scale) : (float)(((double)a[i] + c[i]) / 2);
            if (it % 3 == 1) b[i] = nudge(&r, b[i]);
            if (it % 7 == 0) b[i] = a[i] + (c[i] - a[i]) * 0.25f;   /* (often exactly collinear) */
        }
        if (it % 11 == 0) a[0] = 3.0e38f, c[1] = -1.0e-44f;
        double A[2] = {a[0], a[1]}, B[2] = {b[0], b[1]}, C[2] = {c[0], c[1]};
        double o = pm_orient2d(A, B, C);
        int want = (o > 0) - (o < 0);
        cr_assert_eq(pm_orient2d_f32_sign(a, b, c), want, "case %d", it);
        zero += want == 0, nonzero += want != 0;
    }
    cr_assert_geq(zero, 10000);
    cr_assert_geq(nonzero, 100000);
}

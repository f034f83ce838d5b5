/* Plan-view overlap of triangles (geom/plan_overlap.h): a uniform grid for
 * candidate pairs, separating edges with exact orientation per pair. */
#include "geom/plan_overlap.h"

#include <math.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PM__SEAM_AVX2 1        /* four lines in one register where the CPU has AVX2 (pm_pseam_tri_side,
                                * pm_pseam_loop_sides, pm__bent_corners, pm_pbent_loop_sides with two bent lines) */
#endif
#ifndef PM__SEAM_WIDE          /* (tests/core/test_pseam.c turns it off now and then) */
#define PM__SEAM_WIDE 1
#endif

#include "geom/predicates.h"
#include "scene/result.h"

typedef struct pm__dtri { double v[3][2]; } pm__dtri;

/* The small loops here are written out: they run per triangle (0.86 M
 * of them for a 40 x 40 town with sidewalks) or per candidate pair. */
static pm__dtri pm__wide(const pm_ptri *T) {
    return (pm__dtri){{{T->f[0][0], T->f[0][1]}, {T->f[1][0], T->f[1][1]}, {T->f[2][0], T->f[2][1]}}};
}

void pm_ptri_corners(const pm_ptri *t, double v[3][2]) {
    pm__dtri d = pm__wide(t);
    memcpy(v, d.v, sizeof d.v);
}

static double pm__o(const double *a, const double *b, const double *c) { return pm_orient2d_fast(a, b, c); }

/* (Comparisons, not fminf / fmaxf: those are library calls without
 * -ffast-math, and this runs three times per triangle.) */
static void pm__bounds1(const pm_ptri *T, int c, float *lo, float *hi) {
    float a = T->f[0][c], b = T->f[1][c], d = T->f[2][c];
    float l = a < b ? a : b, h = a < b ? b : a;
    *lo = d < l ? d : l;
    *hi = d > h ? d : h;
}

static void pm__bounds(const pm_ptri *T, float lo[2], float hi[2]) {
    pm__bounds1(T, 0, &lo[0], &hi[0]);
    pm__bounds1(T, 1, &lo[1], &hi[1]);
}

/* Whether an edge of a has all of b on or outside its line. */
static bool pm__separates(const pm__dtri *a, const pm__dtri *b) {
    for (int i = 0; i < 3; i++) {
        const double *p = a->v[i], *q = a->v[(i + 1) % 3];
        if (pm__o(p, q, b->v[0]) <= 0 && pm__o(p, q, b->v[1]) <= 0 && pm__o(p, q, b->v[2]) <= 0)
            return true;
    }
    return false;
}

static bool pm__same(const float *p, const float *q) { return p[0] == q[0] && p[1] == q[1]; }

/* Whether two corners of a each equal a corner of b, as an edge shared
 * needs (most candidate pairs share none or one): which of b's each of
 * a's equals, three at a time with the same float == (-0 equal to +0). */
static bool pm__two_shared(const pm_ptri *a, const pm_ptri *b) {
#ifdef __SSE2__
    const __m128 bx = _mm_setr_ps(b->f[0][0], b->f[1][0], b->f[2][0], 0.0f);
    const __m128 bz = _mm_setr_ps(b->f[0][1], b->f[1][1], b->f[2][1], 0.0f);
    int shared = 0;
    for (int i = 0; i < 3; i++) {
        __m128 eq = _mm_and_ps(_mm_cmpeq_ps(_mm_set1_ps(a->f[i][0]), bx), _mm_cmpeq_ps(_mm_set1_ps(a->f[i][1]), bz));
        shared += (_mm_movemask_ps(eq) & 7) != 0;
    }
    return shared >= 2;
#else
    (void)a, (void)b;
    return true;
#endif
}

/* Interiors meet: no edge of either separates them (two convex polygons
 * with disjoint interiors have a separating line through an edge). Two
 * triangles on one edge (most candidate pairs: neighbours), both
 * counter-clockwise, overlap exactly when they run it the same way (both
 * lie on its left); run opposite ways, the edge's line separates them.
 * (The edge test on the floats: widening is exact, so it is the same.) */
bool pm_ptri_overlap(const pm_ptri *a, const pm_ptri *b) {
    bool two = pm__two_shared(a, b);
    for (int i = 0; two && i < 3; i++) {
        const float *p = a->f[i], *q = a->f[(i + 1) % 3];
        for (int j = 0; j < 3; j++) {
            const float *r = b->f[j], *t = b->f[(j + 1) % 3];
            if (pm__same(p, r) && pm__same(q, t)) return true;
            if (pm__same(p, t) && pm__same(q, r)) return false;
        }
    }
    pm__dtri da = pm__wide(a), db = pm__wide(b);
    return !pm__separates(&da, &db) && !pm__separates(&db, &da);
}

/* The side of v: the exact sign when v is one of L's points (a mouth's
 * corners and centre: many triangles have one) or the floating-point
 * estimate is sure of it (pm_orient2d_fast's first stage and bound), else
 * NAN: too close to the line to tell without the exact stage, which
 * costs more than the pair tests it would save. */
static double pm__side_of(const pm_pline *L, const double v[2]) {
    const double *p = L->p, *q = L->q;
    if ((v[0] == p[0] && v[1] == p[1]) || (v[0] == q[0] && v[1] == q[1])) return 0;
    if (v[0] == L->k[0] && v[1] == L->k[1]) return L->ko;
    double left = (p[0] - v[0]) * (q[1] - v[1]), right = (p[1] - v[1]) * (q[0] - v[0]);
    double det = left - right, bound = 3.3306690738754716e-16 * (fabs(left) + fabs(right));
    return det > bound || -det > bound || bound == 0.0 ? det : NAN;
}

void pm_pline_init(pm_pline *L, const double p[2], const double q[2], const double k[2]) {
    *L = (pm_pline){{p[0], p[1]}, {q[0], q[1]}, {k[0], k[1]}, pm__o(p, q, k)};
}

/* (Comparisons: -0 counts as 0, on the line; NAN fails both. A triangle
 * of plan area cannot lie on the line, so never both sides.) */
unsigned pm_ptri_side(const pm_ptri *t, const pm_pline *L) {
    pm__dtri d = pm__wide(t);
    double o0 = pm__side_of(L, d.v[0]), o1 = pm__side_of(L, d.v[1]), o2 = pm__side_of(L, d.v[2]);
    unsigned s = 0;
    if (o0 >= 0 && o1 >= 0 && o2 >= 0) s |= PM_PTRI_LEFT;
    if (o0 <= 0 && o1 <= 0 && o2 <= 0) s |= PM_PTRI_RIGHT;
    return s == (PM_PTRI_LEFT | PM_PTRI_RIGHT) ? 0 : s;
}

/* The sign of pm_orient2d(a, b, v) from its floating-point stage: +1, -1,
 * 0 (exactly: both products zero), 2 when the filter is not sure. */
static int pm__sure_side(const double a[2], const double b[2], double vx, double vz) {
    double left = (a[0] - vx) * (b[1] - vz), right = (a[1] - vz) * (b[0] - vx);
    double det = left - right, bound = 3.3306690738754716e-16 * (fabs(left) + fabs(right));
    if (bound == 0.0) return 0;
    return det > bound ? 1 : -det > bound ? -1 : 2;
}

/* a + b as s + e exactly (Knuth's two-sum: any magnitudes, round to nearest). */
static inline double pm__two_sum(double a, double b, double *e) {
    double s = a + b, bv = s - a, av = s - bv;
    *e = (a - av) + (b - bv);
    return s;
}

/* The exact sign of pm_orient2d(a, b, c) for points whose coordinates are
 * floats: expanded, (a0 - c0)(b1 - c1) - (a1 - c1)(b0 - c0) is six
 * products of two floats (c0 c1 cancels), each exact in a double (48
 * significant bits; no float's product leaves the double's range), summed
 * exactly into a nonoverlapping expansion (Shewchuk's grow-expansion with
 * zero elimination) whose largest component has the sum's sign. About a
 * sixth of pm_orient2d's cost on the nearly collinear p, k, q it is for. */
int pm_orient2d_f32_sign(const float a[2], const float b[2], const float c[2]) {
    const double t[6] = {(double)a[0] * b[1], -((double)a[0] * c[1]), -((double)c[0] * b[1]),
                         -((double)a[1] * b[0]), (double)a[1] * c[0], (double)c[1] * b[0]};
    double e[6];
    int m = 0;
    for (int i = 0; i < 6; i++) {
        double q = t[i], h;
        int k = 0;
        for (int j = 0; j < m; j++) {
            q = pm__two_sum(q, e[j], &h);
            if (h != 0) e[k++] = h;
        }
        if (q != 0 || k == 0) e[k++] = q;
        m = k;
    }
    return (e[m - 1] > 0) - (e[m - 1] < 0);
}

bool pm_pbent_init(pm_pbent *M, const float p[2], const float k[2], const float q[2]) {
    const float *in[3] = {p, k, q};
    for (int i = 0; i < 3; i++) M->f[i][0] = in[i][0], M->f[i][1] = in[i][1];
    M->ax[0] = p[0], M->az[0] = p[1], M->bx[0] = k[0], M->bz[0] = k[1];
    M->ax[1] = k[0], M->az[1] = k[1], M->bx[1] = q[0], M->bz[1] = q[1];
    if (pm__same(p, k) || pm__same(k, q) || pm__same(p, q)) return false;
    /* The angle at k obtuse: (p - k) . (q - k) < 0 with room for the
     * roundings (each term's differences and product within a few ulps). */
    double t0 = ((double)p[0] - k[0]) * ((double)q[0] - k[0]), t1 = ((double)p[1] - k[1]) * ((double)q[1] - k[1]);
    if (!(t0 + t1 < -1e-6 * (fabs(t0) + fabs(t1)))) return false;
    M->turn = PM_PBENT_TURN_UNKNOWN;
    return true;
}

int pm_pbent_turn(pm_pbent *M) {
    if (M->turn == PM_PBENT_TURN_UNKNOWN) M->turn = pm_orient2d_f32_sign(M->f[0], M->f[1], M->f[2]);
    return M->turn;
}

/* Which of p (1), k (2), q (3) the plan point (x, z) is, 0 none. */
static inline int pm__bent_which(const pm_pbent *M, float x, float z) {
#ifdef __SSE2__
    /* (x, z) against p, k and k, q in two compares: the same float ==. */
    const __m128 v = _mm_setr_ps(x, z, x, z);
    unsigned a = (unsigned)_mm_movemask_ps(_mm_cmpeq_ps(v, _mm_loadu_ps(&M->f[0][0])));
    unsigned b = (unsigned)_mm_movemask_ps(_mm_cmpeq_ps(v, _mm_loadu_ps(&M->f[1][0])));
    return (a & 3u) == 3u ? 1 : (a & 12u) == 12u ? 2 : (b & 12u) == 12u ? 3 : 0;
#else
    for (int i = 0; i < 3; i++)
        if (x == M->f[i][0] && z == M->f[i][1]) return i + 1;
    return 0;
#endif
}

/* The filter's sure signs against l1 (lane 0) at (x, z) lane 0 and l2
 * (lane 1) at (x, z) lane 1 (pm__sure_side of each, the same operations
 * lane by lane): bit 0 l1 +, 1 l2 +, 2 l1 -, 3 l2 -. */
#ifdef __SSE2__
static inline unsigned pm__bent_lanes(const pm_pbent *M, __m128d x, __m128d z) {
    const __m128d sgn = _mm_set1_pd(-0.0);
    __m128d left = _mm_mul_pd(_mm_sub_pd(_mm_loadu_pd(M->ax), x), _mm_sub_pd(_mm_loadu_pd(M->bz), z));
    __m128d right = _mm_mul_pd(_mm_sub_pd(_mm_loadu_pd(M->az), z), _mm_sub_pd(_mm_loadu_pd(M->bx), x));
    __m128d det = _mm_sub_pd(left, right);
    __m128d bound = _mm_mul_pd(_mm_set1_pd(3.3306690738754716e-16),
                               _mm_add_pd(_mm_andnot_pd(sgn, left), _mm_andnot_pd(sgn, right)));
    return (unsigned)_mm_movemask_pd(_mm_cmpgt_pd(det, bound)) |
           (unsigned)_mm_movemask_pd(_mm_cmpgt_pd(_mm_xor_pd(det, sgn), bound)) << 2;
}
#endif

/* The same at one point v for both lines. */
static inline unsigned pm__bent_signs(const pm_pbent *M, double vx, double vz) {
#ifdef __SSE2__
    return pm__bent_lanes(M, _mm_set1_pd(vx), _mm_set1_pd(vz));
#else
    unsigned out = 0;
    for (int l = 0; l < 2; l++) {
        const double a[2] = {M->ax[l], M->az[l]}, b[2] = {M->bx[l], M->bz[l]};
        int s = pm__sure_side(a, b, vx, vz);
        out |= (s == 1 ? 1u : s == -1 ? 4u : 0u) << l;
    }
    return out;
#endif
}

/* Points of a loop read at once: a run's bounds tested first. */
#define PM__BENT_RUN 8

/* Whether the box lo .. hi lies strictly on side sigma of both lines: the
 * corner of it least far on that side of each (a linear function's least
 * over a box is at the corner its gradient's signs pick; the signs of the
 * lines' differences are exact) does. (-0 and +0 bounds: either corner's
 * value is the same.) */
static bool pm__bent_box(const pm_pbent *M, int sigma, const float lo[2], const float hi[2]) {
    double x[2], z[2];
    for (int l = 0; l < 2; l++) {
        /* The side + grows with -(bz - az) x + (bx - ax) z. */
        double gx = -(M->bz[l] - M->az[l]) * sigma, gz = (M->bx[l] - M->ax[l]) * sigma;
        x[l] = gx > 0 ? lo[0] : hi[0], z[l] = gz > 0 ? lo[1] : hi[1];
    }
    unsigned want = sigma > 0 ? 3u : 12u;
#ifdef __SSE2__
    return (pm__bent_lanes(M, _mm_loadu_pd(x), _mm_loadu_pd(z)) & want) == want;
#else
    return (pm__bent_signs(M, x[0], z[0]) & want & 5u) == (want & 5u) &&
           (pm__bent_signs(M, x[1], z[1]) & want & 10u) == (want & 10u);
#endif
}

int pm_pbent_loop_side(const pm_pbent *M, const float *xz, uint32_t m) {
    int side;
    pm_pbent_loop_sides(&M, 1, xz, m, &side);
    return side;
}

#ifdef PM__SEAM_AVX2
/* pm_pbent_loop_sides' point-by-point steps over a run of n points from
 * i0 for line M, given the points the filter is not sure of (bit 4 j for
 * point i0 + j): a sure point sets prev 0; another is p, k or q or kills
 * the line, as is an edge p q. The same steps, only the unsure points
 * looked at. */
static void pm__bent_unsure(const pm_pbent *M, const float *xz, uint32_t i0, uint32_t n, uint32_t unsure, int *prev,
                            bool *live) {
    int last = *prev;
    uint32_t at = 0;   /* the point after the last unsure one read */
    while (unsure) {
        uint32_t j = (uint32_t)__builtin_ctz(unsure) / 4;
        unsure &= unsure - 1;
        if (j != at) last = 0;   /* (a sure point just before) */
        int w = pm__bent_which(M, xz[2 * ((size_t)i0 + j)], xz[2 * ((size_t)i0 + j) + 1]);
        if (!w || (w == 1 && last == 3) || (w == 3 && last == 1)) {   /* (an edge p q) */
            *live = false;
            return;
        }
        last = w, at = j + 1;
    }
    *prev = at == n ? last : 0;
}

/* pm_pbent_loop_sides' runs for two bent lines at once in one AVX2
 * register (lanes: M[0]'s l1, l2, M[1]'s l1, l2): each run's box by the
 * corner least far on each lane's side (pm__bent_box's corner, picked by
 * masks found once); for a line whose box is not sure, every point of the
 * run in the same lanes (pm__bent_signs), and pm__bent_unsure over those
 * not sure. The same IEEE operations lane by lane and the same steps
 * line by line as the SSE2 loop there, so the same sigma, prev and live. */
__attribute__((target("avx2"))) static void pm__bent_runs2_avx2(const pm_pbent *const *M, const int sigma[2],
                                                                int prev[2], bool live[2], const float *xz,
                                                                uint32_t m) {
    _Static_assert(PM__BENT_RUN <= 8, "a run's signs in 32 bits");
    const __m256d sgn = _mm256_set1_pd(-0.0), c = _mm256_set1_pd(3.3306690738754716e-16);
    const __m256d ax = _mm256_setr_pd(M[0]->ax[0], M[0]->ax[1], M[1]->ax[0], M[1]->ax[1]);
    const __m256d az = _mm256_setr_pd(M[0]->az[0], M[0]->az[1], M[1]->az[0], M[1]->az[1]);
    const __m256d bx = _mm256_setr_pd(M[0]->bx[0], M[0]->bx[1], M[1]->bx[0], M[1]->bx[1]);
    const __m256d bz = _mm256_setr_pd(M[0]->bz[0], M[0]->bz[1], M[1]->bz[0], M[1]->bz[1]);
    /* (Side sigma: det * sigma > bound, det's sign flipped where sigma is -1.) */
    const __m256d flip = _mm256_setr_pd(sigma[0] > 0 ? 0.0 : -0.0, sigma[0] > 0 ? 0.0 : -0.0,
                                        sigma[1] > 0 ? 0.0 : -0.0, sigma[1] > 0 ? 0.0 : -0.0);
    const __m256d sg = _mm256_setr_pd(sigma[0], sigma[0], sigma[1], sigma[1]);
    /* The box's corner: lo where the side grows with x (z), else hi. */
    const __m256d zero = _mm256_setzero_pd();
    const __m256d gx = _mm256_mul_pd(_mm256_xor_pd(_mm256_sub_pd(bz, az), sgn), sg);
    const __m256d gz = _mm256_mul_pd(_mm256_sub_pd(bx, ax), sg);
    const __m256d selx = _mm256_cmp_pd(gx, zero, _CMP_GT_OQ), selz = _mm256_cmp_pd(gz, zero, _CMP_GT_OQ);
#define PM__BENT_SURE4(vx, vz)                                                                                     \
    __extension__({                                                                                                \
        __m256d l_ = _mm256_mul_pd(_mm256_sub_pd(ax, (vx)), _mm256_sub_pd(bz, (vz)));                              \
        __m256d r_ = _mm256_mul_pd(_mm256_sub_pd(az, (vz)), _mm256_sub_pd(bx, (vx)));                              \
        __m256d d_ = _mm256_xor_pd(_mm256_sub_pd(l_, r_), flip);                                                   \
        __m256d b_ = _mm256_mul_pd(c, _mm256_add_pd(_mm256_andnot_pd(sgn, l_), _mm256_andnot_pd(sgn, r_)));        \
        (uint32_t)_mm256_movemask_pd(_mm256_cmp_pd(d_, b_, _CMP_GT_OQ));                                           \
    })
    for (uint32_t i0 = 0; i0 < m && (live[0] || live[1]); i0 += PM__BENT_RUN) {
        uint32_t i1 = m - i0 > PM__BENT_RUN ? i0 + PM__BENT_RUN : m, n = i1 - i0;
        float lo[2], hi[2];
        pm_xz_box(xz, i0, i1, lo, hi);
        const __m256d x = _mm256_blendv_pd(_mm256_set1_pd(hi[0]), _mm256_set1_pd(lo[0]), selx);
        const __m256d z = _mm256_blendv_pd(_mm256_set1_pd(hi[1]), _mm256_set1_pd(lo[1]), selz);
        uint32_t box = PM__BENT_SURE4(x, z);
        /* The lines to read point by point: live, and their box not sure. */
        bool walk[2] = {live[0] && (box & 3u) != 3u, live[1] && (box & 12u) != 12u};
        for (int e = 0; e < 2; e++)
            if (live[e] && !walk[e]) prev[e] = 0;
        if (!walk[0] && !walk[1]) continue;
        uint32_t t = 0;   /* point j's four lanes in bits 4 j .. 4 j + 3 */
        for (uint32_t j = 0; j < n; j++)
            t |= PM__BENT_SURE4(_mm256_set1_pd(xz[2 * ((size_t)i0 + j)]), _mm256_set1_pd(xz[2 * ((size_t)i0 + j) + 1]))
                 << 4 * j;
        const uint32_t first = n == 8 ? 0x11111111u : ((1u << 4 * n) - 1) & 0x11111111u;
        for (int e = 0; e < 2; e++) {
            uint32_t y = t >> 2 * e;
            if (walk[e]) pm__bent_unsure(M[e], xz, i0, n, first & ~(y & y >> 1), &prev[e], &live[e]);
        }
    }
#undef PM__BENT_SURE4
}
#endif

/* Why this shows the region R bounded by the loop lies in the closed side
 * sigma, S, of M: when the path turns toward sigma or goes straight, S is
 * the convex B1 and B2 (closed), which holds every corner of the loop
 * (p lies in B2 and q in B1 then, k on both lines), so their hull and R.
 * When it turns away, the other side W (A1 and A2, open) is convex and
 * unbounded; no edge of the loop meets W: one whose ends both lie in B1
 * and B2 does not, one from p, k or q to such a point has every other
 * point in the open B1 or B2 (p on l1, q on l2), p k and k q lie on l1 and
 * l2, and p q is refused. So W holds no point of R (a path in W from it
 * out of the bounded R would cross the loop), and R lies in S. */
void pm_pbent_loop_sides(const pm_pbent *const *M, int n, const float *xz, uint32_t m, int *side) {
    int sigma[2] = {0, 0}, prev[2] = {0, 0};
    bool live[2] = {false, false};
    for (int e = 0; e < n; e++) {
        side[e] = 0;
        if (!M[e] || m < 3) continue;
        /* Its side: the first point sure of both lines' signs (none of
         * p, k, q), before the runs are read against it. */
        for (uint32_t i = 0; i < m && !sigma[e]; i++) {
            unsigned s = pm__bent_signs(M[e], xz[2 * (size_t)i], xz[2 * (size_t)i + 1]);
            sigma[e] = s == 3 ? 1 : s == 12 ? -1 : 0;
        }
        prev[e] = pm__bent_which(M[e], xz[2 * ((size_t)m - 1)], xz[2 * ((size_t)m - 1) + 1]);
        live[e] = sigma[e] != 0;
    }
#ifdef PM__SEAM_AVX2
    if (PM__SEAM_WIDE && n == 2 && live[0] && live[1] && __builtin_cpu_supports("avx2")) {
        pm__bent_runs2_avx2(M, sigma, prev, live, xz, m);
        for (int e = 0; e < n; e++) side[e] = live[e] ? sigma[e] : 0;
        return;
    }
#endif
    for (uint32_t i0 = 0; i0 < m && (live[0] || live[1]); i0 += PM__BENT_RUN) {
        uint32_t i1 = m - i0 > PM__BENT_RUN ? i0 + PM__BENT_RUN : m;
        float lo[2], hi[2];
        pm_xz_box(xz, i0, i1, lo, hi);
        for (int e = 0; e < n; e++) {
            if (!live[e]) continue;
            /* The whole run strictly on side sigma of both lines: none of
             * its points is p, k or q (each on a line). */
            if (pm__bent_box(M[e], sigma[e], lo, hi)) {
                prev[e] = 0;
                continue;
            }
            const unsigned want = sigma[e] > 0 ? 3u : 12u;
            for (uint32_t i = i0; i < i1 && live[e]; i++) {
                float x = xz[2 * (size_t)i], z = xz[2 * (size_t)i + 1];
                if ((pm__bent_signs(M[e], x, z) & want) == want) {
                    prev[e] = 0;
                    continue;
                }
                int w = pm__bent_which(M[e], x, z), last = prev[e];
                live[e] = w && !(w == 1 && last == 3) && !(w == 3 && last == 1);   /* (an edge p q) */
                prev[e] = w;
            }
        }
    }
    for (int e = 0; e < n; e++) side[e] = live[e] ? sigma[e] : 0;
}

#ifdef __SSE2__
/* pm__sure_side's operations for l1 and l2 (lanes 0, 1) at (vx, vz):
 * bits 0, 1 the filter sure of side X (flip: -0 for X = -1, else +0)
 * strictly, bits 2, 3 its bound zero. */
static inline __attribute__((always_inline)) unsigned pm__bent_off2(const pm_pbent *M, __m128d vx, __m128d vz,
                                                                    __m128d flip) {
    const __m128d sgn = _mm_set1_pd(-0.0), c = _mm_set1_pd(3.3306690738754716e-16);
    __m128d left = _mm_mul_pd(_mm_sub_pd(_mm_loadu_pd(M->ax), vx), _mm_sub_pd(_mm_loadu_pd(M->bz), vz));
    __m128d right = _mm_mul_pd(_mm_sub_pd(_mm_loadu_pd(M->az), vz), _mm_sub_pd(_mm_loadu_pd(M->bx), vx));
    __m128d det = _mm_xor_pd(_mm_sub_pd(left, right), flip);
    __m128d bound = _mm_mul_pd(c, _mm_add_pd(_mm_andnot_pd(sgn, left), _mm_andnot_pd(sgn, right)));
    return (unsigned)_mm_movemask_pd(_mm_cmpgt_pd(det, bound)) |
           (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(bound, _mm_setzero_pd())) << 2;
}
#endif

#ifdef PM__SEAM_AVX2
/* pm__bent_corners with corners a and b against l1 and l2 in one AVX2
 * register (lanes a l1, a l2, b l1, b l2) and c in SSE2 lanes: the same
 * IEEE operations lane by lane, so the same answers. */
static inline __attribute__((target("avx2"), always_inline)) unsigned pm__bent_corners_avx2(const pm_pbent *M,
                                                                                            const float *const v[3],
                                                                                            double flip) {
    const __m256d sgn = _mm256_set1_pd(-0.0), c = _mm256_set1_pd(3.3306690738754716e-16);
    const __m256d ax = _mm256_setr_pd(M->ax[0], M->ax[1], M->ax[0], M->ax[1]);
    const __m256d az = _mm256_setr_pd(M->az[0], M->az[1], M->az[0], M->az[1]);
    const __m256d bx = _mm256_setr_pd(M->bx[0], M->bx[1], M->bx[0], M->bx[1]);
    const __m256d bz = _mm256_setr_pd(M->bz[0], M->bz[1], M->bz[0], M->bz[1]);
    const __m256d vx = _mm256_setr_pd(v[0][0], v[0][0], v[1][0], v[1][0]);
    const __m256d vz = _mm256_setr_pd(v[0][2], v[0][2], v[1][2], v[1][2]);
    __m256d left = _mm256_mul_pd(_mm256_sub_pd(ax, vx), _mm256_sub_pd(bz, vz));
    __m256d right = _mm256_mul_pd(_mm256_sub_pd(az, vz), _mm256_sub_pd(bx, vx));
    __m256d det = _mm256_xor_pd(_mm256_sub_pd(left, right), _mm256_set1_pd(flip));
    __m256d bound = _mm256_mul_pd(c, _mm256_add_pd(_mm256_andnot_pd(sgn, left), _mm256_andnot_pd(sgn, right)));
    unsigned sure = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(det, bound, _CMP_GT_OQ));
    unsigned zero = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(bound, _mm256_setzero_pd(), _CMP_EQ_OQ));
    unsigned cc = pm__bent_off2(M, _mm_set1_pd(v[2][0]), _mm_set1_pd(v[2][2]), _mm_set1_pd(flip));
    return sure | (cc & 3u) << 4 | zero << 8 | (cc >> 2) << 12;
}
#endif

/* The filter's answers for corners v[0 .. 3) (x, z of 3D floats) against
 * l1 and l2: bits 2 i, 2 i + 1 corner i sure to lie strictly on side -sigma
 * of l1, l2; bits 8 + 2 i, 9 + 2 i pm__sure_side's bound zero there (its
 * sign 0). pm__sure_side's operations, a line a lane, in SSE2 lanes
 * (pm__bent_corners_avx2 where the CPU has AVX2). */
static unsigned pm__bent_corners(const pm_pbent *M, int sigma, const float *const v[3]) {
    const double flip = sigma > 0 ? -0.0 : 0.0;   /* (side -sigma: det * -sigma > bound) */
    unsigned out = 0;
    for (int i = 0; i < 3; i++) {
#ifdef __SSE2__
        unsigned s = pm__bent_off2(M, _mm_set1_pd(v[i][0]), _mm_set1_pd(v[i][2]), _mm_set1_pd(flip));
        out |= (s & 3u) << 2 * i | (s >> 2) << (8 + 2 * i);
#else
        (void)flip;
        for (int l = 0; l < 2; l++) {
            const double a[2] = {M->ax[l], M->az[l]}, b[2] = {M->bx[l], M->bz[l]};
            int s = pm__sure_side(a, b, v[i][0], v[i][2]);
            out |= (s == -sigma ? 1u : 0u) << (2 * i + l) | (s == 0 ? 1u : 0u) << (8 + 2 * i + l);
        }
#endif
    }
    return out;
}

/* The other side of sigma is A1 or A2 (closed) when the path turns toward
 * sigma, A1 and A2 when it turns away, A1 = A2 when straight. A corner's
 * place: p lies on l1 and on l2's side turn (pm_orient2d(k, q, p) =
 * pm_orient2d(p, k, q)), q on l2 and on l1's side turn, k on both; any
 * other corner in A1 when the filter is sure it is strictly on l1's side
 * -sigma or its sign there is 0, in A2 likewise. (Every corner in A1 and
 * A2: yes whatever the turn.) Whether the triangle of corners v with the
 * filter's answers bits (pm__bent_corners) lies in that other side. */
static inline bool pm__bent_in(pm_pbent *M, int sigma, const float *const v[3], unsigned bits) {
    if ((bits & 63u) == 63u) return true;   /* (every corner in A1 and A2) */
    /* The answer for each turn: with the other corners' places anded into
     * known (each of them in A1 or A2: nonzero), p and q add nothing when
     * the path turns away or goes straight (each in A1 and A2 then) and
     * leave only A1 (p) or A2 (q) when it turns toward sigma. The turn is
     * found only when the three answers differ. */
    unsigned known = 3, pq = 3;
    bool nonzero = true;
    for (int i = 0; i < 3; i++) {
        unsigned in = bits >> 2 * i & 3u;
        if (in != 3) {
            int w = pm__bent_which(M, v[i][0], v[i][2]);
            if (w) {
                pq &= w == 1 ? 1u : w == 3 ? 2u : 3u;
                continue;
            }
            in |= bits >> (8 + 2 * i) & 3u;
        }
        known &= in;
        nonzero &= in != 0;
    }
    bool away = known == 3, toward = (known & pq) != 0;   /* (straight: nonzero) */
    if (away == nonzero && nonzero == toward) return away;
    int turn = pm_pbent_turn(M);
    if (turn == 0) return nonzero;   /* one line: a corner on either is on it */
    return turn == sigma ? toward : away;   /* sigma's side convex: the other A1 or A2 */
}

#ifdef PM__SEAM_AVX2
/* pm_pbent_other_side_all with pm__bent_corners_avx2 inlined: M's lanes
 * loaded once for all n triangles. */
__attribute__((target("avx2"))) static bool pm__bent_other_avx2(pm_pbent *M, int sigma, const float *const (*t)[3],
                                                                uint32_t n) {
    const double flip = sigma > 0 ? -0.0 : 0.0;
    for (uint32_t i = 0; i < n; i++)
        if (!pm__bent_in(M, sigma, t[i], pm__bent_corners_avx2(M, t[i], flip))) return false;
    return true;
}
#endif

bool pm_pbent_other_side_all(pm_pbent *M, int sigma, const float *const (*t)[3], uint32_t n) {
#ifdef PM__SEAM_AVX2
    if (PM__SEAM_WIDE && __builtin_cpu_supports("avx2")) return pm__bent_other_avx2(M, sigma, t, n);
#endif
    for (uint32_t i = 0; i < n; i++)
        if (!pm__bent_in(M, sigma, t[i], pm__bent_corners(M, sigma, t[i]))) return false;
    return true;
}

/* ---- the mouth's seam with sidewalks ---- */

/* The sign of (v - a) . d when its floating-point value is sure of it:
 * +1, -1; 0 when not sure (or zero). (One rounded difference a product,
 * the sum of two: pm__sure_side's bound holds with room.) */
static int pm__sure_dot(const double a[2], double vx, double vz, const double d[2]) {
    double l = (vx - a[0]) * d[0], r = (vz - a[1]) * d[1];
    double dot = l + r, bound = 3.3306690738754716e-16 * (fabs(l) + fabs(r));
    return dot > bound ? 1 : -dot > bound ? -1 : 0;
}

bool pm_pseam_init(pm_pseam *S, const float (*pts)[2], int n) {
    if (n < 3 || n > 5) return false;
    double p[5][2], d[2];
    S->n = n;
    memset(S->f, 0, sizeof S->f);   /* (pm__seam_which reads all five) */
    for (int j = 0; j < n; j++) {
        S->f[j][0] = pts[j][0], S->f[j][1] = pts[j][1];
        p[j][0] = pts[j][0], p[j][1] = pts[j][1];
    }
    d[0] = p[n - 1][0] - p[0][0], d[1] = p[n - 1][1] - p[0][1];
    /* (Each piece rising along d: its ends differ too.) */
    for (int i = 0; i + 1 < n; i++)
        if (pm__sure_dot(p[i], p[i + 1][0], p[i + 1][1], d) != 1) return false;
    memset(S->o, 2, sizeof S->o);
    for (int i = 0; i + 1 < n; i++) S->o[i][i] = S->o[i + 1][i] = 0;
    S->lo[0] = S->hi[0] = pts[0][0], S->lo[1] = S->hi[1] = pts[0][1];
    for (int j = 1; j < n; j++)
        for (int i = 0; i < 2; i++) {
            S->lo[i] = pts[j][i] < S->lo[i] ? pts[j][i] : S->lo[i];
            S->hi[i] = pts[j][i] > S->hi[i] ? pts[j][i] : S->hi[i];
        }
    for (int i = 0; i < 4; i++) {
        int l = i + 1 < n ? i : n - 2;
        S->ax[i] = p[l][0], S->az[i] = p[l][1], S->bx[i] = p[l + 1][0], S->bz[i] = p[l + 1][1];
        /* (The side + grows with -(bz - az) x + (bx - ax) z.) */
        S->gx[i] = -(S->bz[i] - S->az[i]), S->gz[i] = S->bx[i] - S->ax[i];
    }
    return true;
}

/* Which seam point (x, z) is (index + 1), 0 none: the first j < S->n
 * with both coordinates == (SSE2: the five points' ten floats compared
 * at once, bit 2 j and 2 j + 1 of `eq` point j's). */
static inline int pm__seam_which(const pm_pseam *S, float x, float z) {
#ifdef __SSE2__
    const __m128 v = _mm_setr_ps(x, z, x, z);
    unsigned eq = (unsigned)_mm_movemask_ps(_mm_cmpeq_ps(_mm_loadu_ps(&S->f[0][0]), v)) |
                  (unsigned)_mm_movemask_ps(_mm_cmpeq_ps(_mm_loadu_ps(&S->f[2][0]), v)) << 4 |
                  (unsigned)(_mm_movemask_ps(_mm_cmpeq_ps(_mm_loadu_ps(&S->f[3][0]), v)) >> 2) << 8;
    eq &= eq >> 1 & 0x155u & ((1u << 2 * S->n) - 1);
    return eq ? __builtin_ctz(eq) / 2 + 1 : 0;
#else
    if (x < S->lo[0] || x > S->hi[0] || z < S->lo[1] || z > S->hi[1]) return 0;
    for (int j = 0; j < S->n; j++)
        if (x == S->f[j][0] && z == S->f[j][1]) return j + 1;
    return 0;
#endif
}


#ifdef __SSE2__
/* pm__sure_side's operations for two lines l_i (a lane each: from (ax,
 * az) to (bx, bz)) at (vx, vz): each lane all ones when the filter is
 * sure of side X (flip: -0 for X = -1, else +0) strictly. */
static inline __attribute__((always_inline)) __m128d pm__off2(__m128d ax, __m128d az, __m128d bx, __m128d bz,
                                                             __m128d vx, __m128d vz, __m128d flip) {
    const __m128d sgn = _mm_set1_pd(-0.0), c = _mm_set1_pd(3.3306690738754716e-16);
    __m128d left = _mm_mul_pd(_mm_sub_pd(ax, vx), _mm_sub_pd(bz, vz));
    __m128d right = _mm_mul_pd(_mm_sub_pd(az, vz), _mm_sub_pd(bx, vx));
    __m128d det = _mm_xor_pd(_mm_sub_pd(left, right), flip);
    __m128d bound = _mm_mul_pd(c, _mm_add_pd(_mm_andnot_pd(sgn, left), _mm_andnot_pd(sgn, right)));
    return _mm_cmpgt_pd(det, bound);
}
#endif

/* Whether (x, z) lies strictly on side X of every l_i (the filter sure:
 * pm__sure_side's operations, two lines a lane). */
static inline bool pm__seam_off(const pm_pseam *S, int X, double x, double z) {
#ifdef __SSE2__
    const __m128d vx = _mm_set1_pd(x), vz = _mm_set1_pd(z), flip = _mm_set1_pd(X > 0 ? 0.0 : -0.0);
    __m128d ok = pm__off2(_mm_loadu_pd(S->ax), _mm_loadu_pd(S->az), _mm_loadu_pd(S->bx), _mm_loadu_pd(S->bz), vx, vz, flip);
    ok = _mm_and_pd(ok, pm__off2(_mm_loadu_pd(S->ax + 2), _mm_loadu_pd(S->az + 2), _mm_loadu_pd(S->bx + 2),
                                 _mm_loadu_pd(S->bz + 2), vx, vz, flip));
    return _mm_movemask_pd(ok) == 3;
#else
    for (int i = 0; i + 1 < S->n; i++)
        if (pm__sure_side((const double[2]){S->ax[i], S->az[i]}, (const double[2]){S->bx[i], S->bz[i]}, x, z) != X)
            return false;
    return true;
#endif
}

/* Whether the box lo .. hi lies strictly on side X of every l_i: the
 * corner of it least far on that side of each does (as pm__bent_box; the
 * corner picked by the sign of l_i's gradient, kept in S->gx, S->gz; any
 * corner where a gradient's part is 0). pm__seam_off's operations at
 * each line's corner, two lines a lane. Then no point of the box is a
 * seam point (each lies on a line). */
static bool pm__seam_box(const pm_pseam *S, int X, const float lo[2], const float hi[2]) {
#ifdef __SSE2__
    const __m128d zero = _mm_setzero_pd(), flip = _mm_set1_pd(X > 0 ? 0.0 : -0.0);
    const __m128d x0 = _mm_set1_pd(lo[0]), x1 = _mm_set1_pd(hi[0]), z0 = _mm_set1_pd(lo[1]), z1 = _mm_set1_pd(hi[1]);
    __m128d ok = _mm_castsi128_pd(_mm_set1_epi32(-1));
    for (int i = 0; i < 4; i += 2) {
        __m128d ux = _mm_cmpgt_pd(_mm_xor_pd(_mm_loadu_pd(S->gx + i), flip), zero);
        __m128d uz = _mm_cmpgt_pd(_mm_xor_pd(_mm_loadu_pd(S->gz + i), flip), zero);
        __m128d vx = _mm_or_pd(_mm_and_pd(ux, x0), _mm_andnot_pd(ux, x1));
        __m128d vz = _mm_or_pd(_mm_and_pd(uz, z0), _mm_andnot_pd(uz, z1));
        ok = _mm_and_pd(ok, pm__off2(_mm_loadu_pd(S->ax + i), _mm_loadu_pd(S->az + i), _mm_loadu_pd(S->bx + i),
                                     _mm_loadu_pd(S->bz + i), vx, vz, flip));
    }
    return _mm_movemask_pd(ok) == 3;
#else
    for (int i = 0; i < 4; i++) {
        double gx = S->gx[i] * X, gz = S->gz[i] * X;
        if (pm__sure_side((const double[2]){S->ax[i], S->az[i]}, (const double[2]){S->bx[i], S->bz[i]},
                          gx > 0 ? lo[0] : hi[0], gz > 0 ? lo[1] : hi[1]) != X)
            return false;
    }
    return true;
#endif
}

/* The exact sign of pm_orient2d(a, b, c) for float points: the filter's
 * when sure, else pm_orient2d_f32_sign. */
static int pm__f32_sign(const float a[2], const float b[2], const float c[2]) {
    const double A[2] = {a[0], a[1]}, B[2] = {b[0], b[1]};
    int s = pm__sure_side(A, B, c[0], c[1]);
    return s != 2 ? s : pm_orient2d_f32_sign(a, b, c);
}

/* o[j][i], computed when first asked. */
static int pm__seam_o(pm_pseam *S, int j, int i) {
    if (S->o[j][i] == 2) S->o[j][i] = (signed char)pm__f32_sign(S->f[i], S->f[i + 1], S->f[j]);
    return S->o[j][i];
}

/* The edge rule: whether the edge a b (wa, wb: seam index + 1, or 0 for
 * an end off the seam, which the caller has shown strictly on side X of
 * every l_i) lies in the closed side X of C. In the frame of d (t along
 * it, h across toward side X) C and each l_i are graphs h(t); the edge
 * is one over its span, and g = edge - C is continuous there.
 *  - Both ends off: every point of the edge is strictly on side X of
 *    every l_i (a convex set), so of C.
 *  - One end s_j on C, the other v off: were g < 0 somewhere, take t0
 *    the last point from s_j toward it with g >= 0 (g(t_j) = 0): there
 *    g = 0, and just beyond it C follows some l_m with g < 0, so l_m -
 *    edge, 0 at t0 and linear, grows all the way to v: v would lie
 *    strictly on side -X of l_m. So g >= 0: nothing to check.
 *  - Both on it, s_i and s_j (i < j): the edge spans pieces i .. j - 1
 *    exactly (the seam rises along d); on piece l's span C is l_l, and
 *    a point of the edge a convex combination of its ends, so s_i and
 *    s_j on the closed side X of each such l_l suffice (exact signs). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static bool pm__seam_chord(pm_pseam *S, int X, int wa, int wb) {
    int i = (wa < wb ? wa : wb) - 1, j = (wa < wb ? wb : wa) - 1;
    for (int l = i; l < j; l++)
        if (pm__seam_o(S, i, l) * X < 0 || pm__seam_o(S, j, l) * X < 0) return false;
    return true;
}

/* (Inline: most edges have an end off the seam.) */
static inline bool pm__seam_edge(pm_pseam *S, int X, int wa, int wb) {
    return !wa || !wb || pm__seam_chord(S, X, wa, wb);
}

/* Why this shows the region R bounded by the loop lies in the closed side
 * X: every edge of the loop does (the points off the seam checked as
 * they come, runs of PM__BENT_RUN by their bounds first, every edge with
 * an end on the seam by the edge rule). The open other side is
 * connected and unbounded (all below or above a graph), so a point of it
 * inside the bounded R could leave R within it only across the loop.
 * (A point strictly on side X of every l_i is no seam point: each lies
 * on a line. So pm__seam_which is asked only of the others.) */
/* pm_pseam_loop_sides' body over the line tests OFF(S, X, x, z)
 * (pm__seam_off), BOX(S, X, lo, hi) (pm__seam_box) and SIDE(S, x, z)
 * (the side X of every line (x, z) is strictly on, 0 none: OFF for +1,
 * then for -1): written once for the SSE2 tests and for the AVX2 ones
 * (the same operations lane by lane, so the same answers). */
#define PM__PSEAM_LOOP_SIDES(OFF, BOX, SIDE)                                                           \
    int X[2] = {0, 0}, pw[2] = {0, 0};                                                                 \
    bool live[2] = {false, false};                                                                     \
    for (int e = 0; e < n; e++) {                                                                      \
        side[e] = 0;                                                                                   \
        if (!S[e] || m < 3) continue;                                                                  \
        for (uint32_t i = 0; i < m && !X[e]; i++) {                                                    \
            float x = xz[2 * (size_t)i], z = xz[2 * (size_t)i + 1];                                    \
            if (!(X[e] = SIDE(S[e], x, z)) && !pm__seam_which(S[e], x, z)) break;                      \
        }                                                                                              \
        pw[e] = pm__seam_which(S[e], xz[2 * ((size_t)m - 1)], xz[2 * ((size_t)m - 1) + 1]);            \
        live[e] = X[e] != 0;                                                                           \
    }                                                                                                  \
    for (uint32_t i0 = 0; i0 < m && (live[0] || live[1]); i0 += PM__BENT_RUN) {                       \
        uint32_t i1 = m - i0 > PM__BENT_RUN ? i0 + PM__BENT_RUN : m;                                   \
        float lo[2], hi[2];                                                                            \
        pm_xz_box(xz, i0, i1, lo, hi);                                                                 \
        for (int e = 0; e < n; e++) {                                                                  \
            if (!live[e]) continue;                                                                    \
            if (BOX(S[e], X[e], lo, hi)) {                                                             \
                /* (Every point of the run off the seam and strictly on side X.) */                    \
                pw[e] = 0;                                                                             \
                continue;                                                                              \
            }                                                                                          \
            for (uint32_t i = i0; i < i1 && live[e]; i++) {                                            \
                float x = xz[2 * (size_t)i], z = xz[2 * (size_t)i + 1];                                \
                bool off = OFF(S[e], X[e], x, z);                                                      \
                int w = off ? 0 : pm__seam_which(S[e], x, z);                                          \
                live[e] = (off || w) && pm__seam_edge(S[e], X[e], pw[e], w);                           \
                pw[e] = w;                                                                             \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    for (int e = 0; e < n; e++) side[e] = live[e] ? X[e] : 0;

static inline int pm__seam_side(const pm_pseam *S, double x, double z) {
    return pm__seam_off(S, 1, x, z) ? 1 : pm__seam_off(S, -1, x, z) ? -1 : 0;
}

#ifdef PM__SEAM_AVX2
/* pm__off2's operations on the four lines at once (AVX2) at (x, z): the
 * lanes' det (side +1 positive) and bound. */
__attribute__((target("avx2"), always_inline)) static inline void pm__seam_det4(const pm_pseam *S, double x, double z,
                                                                                __m256d *det, __m256d *bound) {
    const __m256d sgn = _mm256_set1_pd(-0.0), k = _mm256_set1_pd(3.3306690738754716e-16);
    const __m256d vx = _mm256_set1_pd(x), vz = _mm256_set1_pd(z);
    __m256d left = _mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(S->ax), vx), _mm256_sub_pd(_mm256_loadu_pd(S->bz), vz));
    __m256d right = _mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(S->az), vz), _mm256_sub_pd(_mm256_loadu_pd(S->bx), vx));
    *det = _mm256_sub_pd(left, right);
    *bound = _mm256_mul_pd(k, _mm256_add_pd(_mm256_andnot_pd(sgn, left), _mm256_andnot_pd(sgn, right)));
}

/* pm__seam_off with the four lines in one register. */
__attribute__((target("avx2"), always_inline)) static inline bool pm__seam_off4(const pm_pseam *S, int X, double x,
                                                                                double z) {
    __m256d det, bound;
    pm__seam_det4(S, x, z, &det, &bound);
    det = _mm256_xor_pd(det, _mm256_set1_pd(X > 0 ? 0.0 : -0.0));
    return _mm256_movemask_pd(_mm256_cmp_pd(det, bound, _CMP_GT_OQ)) == 15;
}

/* pm__seam_side with the four lines in one register (det and bound once;
 * -det is det with its sign flipped, as pm__off2's flip makes it). */
__attribute__((target("avx2"), always_inline)) static inline int pm__seam_side4(const pm_pseam *S, double x, double z) {
    __m256d det, bound;
    pm__seam_det4(S, x, z, &det, &bound);
    if (_mm256_movemask_pd(_mm256_cmp_pd(det, bound, _CMP_GT_OQ)) == 15) return 1;
    det = _mm256_xor_pd(det, _mm256_set1_pd(-0.0));
    return _mm256_movemask_pd(_mm256_cmp_pd(det, bound, _CMP_GT_OQ)) == 15 ? -1 : 0;
}

/* pm__seam_box with the four lines in one register (each line's corner
 * picked as there). */
__attribute__((target("avx2"), always_inline)) static inline bool pm__seam_box4(const pm_pseam *S, int X,
                                                                                const float lo[2], const float hi[2]) {
    const __m256d zero = _mm256_setzero_pd(), flip = _mm256_set1_pd(X > 0 ? 0.0 : -0.0);
    const __m256d sgn = _mm256_set1_pd(-0.0), k = _mm256_set1_pd(3.3306690738754716e-16);
    __m256d ux = _mm256_cmp_pd(_mm256_xor_pd(_mm256_loadu_pd(S->gx), flip), zero, _CMP_GT_OQ);
    __m256d uz = _mm256_cmp_pd(_mm256_xor_pd(_mm256_loadu_pd(S->gz), flip), zero, _CMP_GT_OQ);
    __m256d vx = _mm256_blendv_pd(_mm256_set1_pd(hi[0]), _mm256_set1_pd(lo[0]), ux);
    __m256d vz = _mm256_blendv_pd(_mm256_set1_pd(hi[1]), _mm256_set1_pd(lo[1]), uz);
    __m256d left = _mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(S->ax), vx), _mm256_sub_pd(_mm256_loadu_pd(S->bz), vz));
    __m256d right = _mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(S->az), vz), _mm256_sub_pd(_mm256_loadu_pd(S->bx), vx));
    __m256d det = _mm256_xor_pd(_mm256_sub_pd(left, right), flip);
    __m256d bound = _mm256_mul_pd(k, _mm256_add_pd(_mm256_andnot_pd(sgn, left), _mm256_andnot_pd(sgn, right)));
    return _mm256_movemask_pd(_mm256_cmp_pd(det, bound, _CMP_GT_OQ)) == 15;
}

__attribute__((target("avx2"))) static void pm__loop_sides4(pm_pseam *const *S, int n, const float *xz, uint32_t m,
                                                            int *side) {
    PM__PSEAM_LOOP_SIDES(pm__seam_off4, pm__seam_box4, pm__seam_side4)
}
#endif

void pm_pseam_loop_sides(pm_pseam *const *S, int n, const float *xz, uint32_t m, int *side) {
#ifdef PM__SEAM_AVX2
    if (PM__SEAM_WIDE && __builtin_cpu_supports("avx2")) {
        pm__loop_sides4(S, n, xz, m, side);
        return;
    }
#endif
    PM__PSEAM_LOOP_SIDES(pm__seam_off, pm__seam_box, pm__seam_side)
}

/* pm__seam_off of the three corners v[0 .. 3) (x, z of 3D floats): bit i
 * set when corner i is strictly on side X of every l_i. The same
 * operations lane by lane, each line pair loaded once. */
static inline unsigned pm__seam_off3(const pm_pseam *S, int X, const float *a, const float *b, const float *c) {
#ifdef __SSE2__
    const __m128d flip = _mm_set1_pd(X > 0 ? 0.0 : -0.0);
    const __m128d xa = _mm_set1_pd(a[0]), za = _mm_set1_pd(a[2]), xb = _mm_set1_pd(b[0]), zb = _mm_set1_pd(b[2]);
    const __m128d xc = _mm_set1_pd(c[0]), zc = _mm_set1_pd(c[2]);
    __m128d ax = _mm_loadu_pd(S->ax), az = _mm_loadu_pd(S->az), bx = _mm_loadu_pd(S->bx), bz = _mm_loadu_pd(S->bz);
    __m128d oa = pm__off2(ax, az, bx, bz, xa, za, flip), ob = pm__off2(ax, az, bx, bz, xb, zb, flip);
    __m128d oc = pm__off2(ax, az, bx, bz, xc, zc, flip);
    ax = _mm_loadu_pd(S->ax + 2), az = _mm_loadu_pd(S->az + 2), bx = _mm_loadu_pd(S->bx + 2), bz = _mm_loadu_pd(S->bz + 2);
    oa = _mm_and_pd(oa, pm__off2(ax, az, bx, bz, xa, za, flip));
    ob = _mm_and_pd(ob, pm__off2(ax, az, bx, bz, xb, zb, flip));
    oc = _mm_and_pd(oc, pm__off2(ax, az, bx, bz, xc, zc, flip));
    return (unsigned)(_mm_movemask_pd(oa) == 3) | (unsigned)(_mm_movemask_pd(ob) == 3) << 1 |
           (unsigned)(_mm_movemask_pd(oc) == 3) << 2;
#else
    return (unsigned)pm__seam_off(S, X, a[0], a[2]) | (unsigned)pm__seam_off(S, X, b[0], b[2]) << 1 |
           (unsigned)pm__seam_off(S, X, c[0], c[2]) << 2;
#endif
}

/* A triangle lies in the closed side when its three edges do (the other
 * side open, connected, unbounded: as for a loop). A corner strictly on
 * that side of every l_i is no seam point (each lies on a line). */
static bool pm__tri_side2(pm_pseam *S, int side, const float *const v[3]) {
    unsigned off = pm__seam_off3(S, side, v[0], v[1], v[2]);
    int w[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++)
        if (!(off >> i & 1) && !(w[i] = pm__seam_which(S, v[i][0], v[i][2]))) return false;
    return pm__seam_edge(S, side, w[0], w[1]) && pm__seam_edge(S, side, w[1], w[2]) && pm__seam_edge(S, side, w[2], w[0]);
}

#ifdef PM__SEAM_AVX2
/* pm_pseam_tris_side with the four lines in one AVX2 register: pm__off2's
 * operations, four lanes (the same IEEE operations lane by lane, so the
 * same answers), a corner at a time; the lines loaded once for all the
 * triangles. */
__attribute__((target("avx2"))) static bool pm__tris_side4(pm_pseam *S, int side, const float *const *v, uint32_t n) {
    const __m256d sgn = _mm256_set1_pd(-0.0), k = _mm256_set1_pd(3.3306690738754716e-16);
    const __m256d flip = _mm256_set1_pd(side > 0 ? 0.0 : -0.0);
    const __m256d ax = _mm256_loadu_pd(S->ax), az = _mm256_loadu_pd(S->az), bx = _mm256_loadu_pd(S->bx),
                  bz = _mm256_loadu_pd(S->bz);
    for (uint32_t t = 0; t < n; t++, v += 3) {
        int w[3] = {0, 0, 0};
        for (int i = 0; i < 3; i++) {
            const __m256d vx = _mm256_set1_pd(v[i][0]), vz = _mm256_set1_pd(v[i][2]);
            __m256d left = _mm256_mul_pd(_mm256_sub_pd(ax, vx), _mm256_sub_pd(bz, vz));
            __m256d right = _mm256_mul_pd(_mm256_sub_pd(az, vz), _mm256_sub_pd(bx, vx));
            __m256d det = _mm256_xor_pd(_mm256_sub_pd(left, right), flip);
            __m256d bound = _mm256_mul_pd(k, _mm256_add_pd(_mm256_andnot_pd(sgn, left), _mm256_andnot_pd(sgn, right)));
            if (_mm256_movemask_pd(_mm256_cmp_pd(det, bound, _CMP_GT_OQ)) != 15 &&
                !(w[i] = pm__seam_which(S, v[i][0], v[i][2])))
                return false;
        }
        if (!(pm__seam_edge(S, side, w[0], w[1]) && pm__seam_edge(S, side, w[1], w[2]) &&
              pm__seam_edge(S, side, w[2], w[0])))
            return false;
    }
    return true;
}
#endif

bool pm_pseam_tris_side(pm_pseam *S, int side, const float *const *v, uint32_t n) {
#ifdef PM__SEAM_AVX2
    if (PM__SEAM_WIDE && __builtin_cpu_supports("avx2")) return pm__tris_side4(S, side, v, n);
#endif
    for (uint32_t t = 0; t < n; t++)
        if (!pm__tri_side2(S, side, v + 3 * (size_t)t)) return false;
    return true;
}

bool pm_pseam_tri_side(pm_pseam *S, int side, const float *a, const float *b, const float *c) {
    const float *const v[3] = {a, b, c};
    return pm_pseam_tris_side(S, side, v, 1);
}

static bool pm__inside(const pm__dtri *t, const double *p) {
    return pm__o(t->v[0], t->v[1], p) > 0 && pm__o(t->v[1], t->v[2], p) > 0 &&
           pm__o(t->v[2], t->v[0], p) > 0;
}

/* A point inside both triangles: the centroid of b clipped by a's three
 * half-planes, checked exactly; else a vertex or centroid of one strictly
 * inside the other (a sliver's computed clip can miss by rounding). */
void pm_ptri_witness(const pm_ptri *ta, const pm_ptri *tb, double out[2]) {
    pm__dtri da = pm__wide(ta), db = pm__wide(tb);
    const pm__dtri *a = &da, *b = &db;
    double poly[2][12][2];
    int n = 3, cur = 0;
    memcpy(poly[0], b->v, sizeof b->v);
    for (int i = 0; i < 3 && n > 0; i++) {
        const double *p = a->v[i], *q = a->v[(i + 1) % 3];
        int m = 0;
        for (int k = 0; k < n; k++) {
            const double *s = poly[cur][k], *e = poly[cur][(k + 1) % n];
            double ds = (q[0] - p[0]) * (s[1] - p[1]) - (q[1] - p[1]) * (s[0] - p[0]);
            double de = (q[0] - p[0]) * (e[1] - p[1]) - (q[1] - p[1]) * (e[0] - p[0]);
            if (ds >= 0 && m < 12) { poly[1 - cur][m][0] = s[0]; poly[1 - cur][m][1] = s[1]; m++; }
            if (((ds >= 0) != (de >= 0)) && m < 12) {
                double t = ds / (ds - de);
                poly[1 - cur][m][0] = s[0] + (e[0] - s[0]) * t;
                poly[1 - cur][m][1] = s[1] + (e[1] - s[1]) * t;
                m++;
            }
        }
        n = m;
        cur = 1 - cur;
    }
    double c[2] = {0, 0};
    for (int k = 0; k < n; k++) { c[0] += poly[cur][k][0] / n; c[1] += poly[cur][k][1] / n; }
    if (n > 0 && pm__inside(a, c) && pm__inside(b, c)) { out[0] = c[0]; out[1] = c[1]; return; }
    const pm__dtri *t2[2] = {a, b};
    for (int w = 0; w < 2; w++) {
        const pm__dtri *s = t2[w], *o = t2[1 - w];
        double g[2] = {(s->v[0][0] + s->v[1][0] + s->v[2][0]) / 3, (s->v[0][1] + s->v[1][1] + s->v[2][1]) / 3};
        if (pm__inside(o, g)) { out[0] = g[0]; out[1] = g[1]; return; }
        for (int k = 0; k < 3; k++)
            if (pm__inside(o, s->v[k])) { out[0] = s->v[k][0]; out[1] = s->v[k][1]; return; }
    }
    out[0] = n > 0 ? c[0] : b->v[0][0];
    out[1] = n > 0 ? c[1] : b->v[0][1];
}

/* ---- the set ---- */

int pm_pset_init(pm_arena *a, pm_pset *S, uint32_t cap) {
    memset(S, 0, sizeof *S);
    S->tri = pm_arena_alloc(a, ((size_t)cap + 1) * sizeof *S->tri);
    S->cap = cap;
    return S->tri ? PM_OK : PM_ERR_NOMEM;
}

bool pm_pset_add(pm_pset *S, const float *a, const float *b, const float *c, uint32_t part,
                 uint32_t aux, uint8_t flag) {
    if (S->ntri >= S->cap) return false;
    pm_ptri *T = &S->tri[S->ntri];
    T->f[0][0] = a[0], T->f[0][1] = a[2];
    T->f[1][0] = b[0], T->f[1][1] = b[2];
    T->f[2][0] = c[0], T->f[2][1] = c[2];
    pm__dtri d = pm__wide(T);
    double o = pm__o(d.v[0], d.v[1], d.v[2]);
    if (o == 0) return false;
    if (o < 0) {
        float s[2] = {T->f[1][0], T->f[1][1]};
        memcpy(T->f[1], T->f[2], sizeof s);
        memcpy(T->f[2], s, sizeof s);
    }
    T->part = part;
    T->aux = aux;
    T->flag = flag;
    S->ntri++;
    return true;
}

/* ---- the grid ---- */

uint32_t pm_pset_cell_x(const pm_pset *S, double x) { return pm_pgrid_cell(&S->g, x, 0); }
uint32_t pm_pset_cell_z(const pm_pset *S, double z) { return pm_pgrid_cell(&S->g, z, 1); }

static void pm__cells(const pm_pgrid *g, const float lo[2], const float hi[2], uint32_t c[4]) {
    c[0] = pm_pgrid_cell(g, lo[0], 0);
    c[1] = pm_pgrid_cell(g, hi[0], 0);
    c[2] = pm_pgrid_cell(g, lo[1], 1);
    c[3] = pm_pgrid_cell(g, hi[1], 1);
}

/* A float's bits as an unsigned key in the float's order (-0 as +0). */
static uint32_t pm__fkey(float f) {
    union { float f; uint32_t u; } v = {f + 0.0f};
    return v.u & 0x80000000u ? ~v.u : v.u | 0x80000000u;
}

/* The triangles in order of the left of their bounds, ties in index order
 * (a stable LSD radix sort, 11 bits a pass): filled into the cells in this
 * order, each cell's list comes out sorted without sorting it. */
static uint32_t *pm__by_left(pm_arena *a, const pm_pset *S) {
    uint32_t n = S->ntri, *cnt = pm_arena_calloc(a, 3 * 2048, sizeof *cnt);
    uint32_t *key = pm_arena_alloc(a, ((size_t)n + 1) * sizeof *key);
    uint32_t *buf[2] = {pm_arena_alloc(a, ((size_t)n + 1) * sizeof **buf),
                        pm_arena_alloc(a, ((size_t)n + 1) * sizeof **buf)};
    if (!cnt || !key || !buf[0] || !buf[1]) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = key[i] = pm__fkey(S->g.box[i].lo[0]);
        cnt[k & 2047]++;
        cnt[2048 + (k >> 11 & 2047)]++;
        cnt[4096 + (k >> 22)]++;
        buf[0][i] = i;
    }
    for (int pass = 0; pass < 3; pass++) {
        uint32_t *c = cnt + 2048 * pass, sum = 0;
        for (int d = 0; d < 2048; d++) { uint32_t t = c[d]; c[d] = sum; sum += t; }
        const uint32_t *from = buf[pass & 1];
        uint32_t *to = buf[1 - (pass & 1)];
        for (uint32_t i = 0; i < n; i++) {
            uint32_t t = from[i];
            to[c[key[t] >> (11 * pass) & 2047]++] = t;
        }
    }
    return buf[1];
}

void pm_ptri_bounds(const pm_ptri *t, float lo[2], float hi[2]) { pm__bounds(t, lo, hi); }

/* Cells about twice the mean triangle's size (measured: fewer entries
 * outweigh the longer cell lists), at most about 4 per triangle. */
void pm_pgrid_size(pm_pgrid *g, const pm_pbox *box, uint32_t n) {
    double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL}, ext = 0;
    for (uint32_t i = 0; i < n; i++) {
        const pm_pbox *B = &box[i];
        lo[0] = B->lo[0] < lo[0] ? B->lo[0] : lo[0];
        lo[1] = B->lo[1] < lo[1] ? B->lo[1] : lo[1];
        hi[0] = B->hi[0] > hi[0] ? B->hi[0] : hi[0];
        hi[1] = B->hi[1] > hi[1] ? B->hi[1] : hi[1];
        double dx = (double)B->hi[0] - B->lo[0], dz = (double)B->hi[1] - B->lo[1];
        ext += dx > dz ? dx : dz;
    }
    double w = fmax(hi[0] - lo[0], 1e-9), h = fmax(hi[1] - lo[1], 1e-9);
    g->cell = fmax(2.0 * ext / n, sqrt(w * h / (4.0 * n)));
    g->cell = fmax(g->cell, fmax(w, h) / 4096.0);
    g->inv = 1.0 / g->cell;
    g->x0 = lo[0];
    g->z0 = lo[1];
    g->nx = (uint32_t)fmin(floor(w / g->cell) + 1, 4096);   /* cells fit uint16_t */
    g->nz = (uint32_t)fmin(floor(h / g->cell) + 1, 4096);
}

uint32_t pm_pbox_left_key(float lo0) { return pm__fkey(lo0); }

/* Each triangle's bounds and cells are computed once and kept (box, last). */
int pm_pset_grid(pm_arena *a, pm_pset *S) {
    pm_pgrid *g = &S->g;
    g->box = pm_arena_alloc(a, ((size_t)S->ntri + 1) * sizeof *g->box);
    uint16_t *last = pm_arena_alloc(a, 2 * ((size_t)S->ntri + 1) * sizeof *last);
    if (!g->box || !last) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < S->ntri; i++) pm__bounds(&S->tri[i], g->box[i].lo, g->box[i].hi);
    pm_pgrid_size(g, g->box, S->ntri);
    size_t ncell = (size_t)g->nx * g->nz;
    g->start = pm_arena_calloc(a, ncell + 1, sizeof *g->start);
    if (!g->start) return PM_ERR_NOMEM;
    size_t total = 0;
    uint32_t c[4];
    for (uint32_t i = 0; i < S->ntri; i++) {
        pm_pbox *B = &g->box[i];
        pm__cells(g, B->lo, B->hi, c);
        B->cx = (uint16_t)c[0];
        B->cz = (uint16_t)c[2];
        last[2 * i] = (uint16_t)c[1];
        last[2 * i + 1] = (uint16_t)c[3];
        for (uint32_t z = c[2]; z <= c[3]; z++)
            for (uint32_t x = c[0]; x <= c[1]; x++) g->start[(size_t)z * g->nx + x + 1]++;
        total += (size_t)(c[1] - c[0] + 1) * (c[3] - c[2] + 1);
    }
    if (total >= UINT32_MAX) return PM_ERR_LIMIT;
    for (size_t k = 0; k < ncell; k++) g->start[k + 1] += g->start[k];
    g->items = pm_arena_alloc(a, (total + 1) * sizeof *g->items);
    uint32_t *fill = pm_arena_alloc(a, (ncell + 1) * sizeof *fill);
    const uint32_t *order = pm__by_left(a, S);
    if (!g->items || !fill || !order) return PM_ERR_NOMEM;
    memcpy(fill, g->start, ncell * sizeof *fill);
    /* Each cell by the left of its bounds, so a pair search stops at the
     * first triangle starting right of the current one's end. */
    for (uint32_t r = 0; r < S->ntri; r++) {
        uint32_t i = order[r];
        const pm_pbox *B = &g->box[i];
        for (uint32_t z = B->cz; z <= last[2 * i + 1]; z++)
            for (uint32_t x = B->cx; x <= last[2 * i]; x++) g->items[fill[(size_t)z * g->nx + x]++] = i;
    }
    return PM_OK;
}

/* Every pair of triangles sharing a cell, each pair once: in the cell
 * holding the lower corner of their bounds' intersection. In a cell's
 * list (by the left of the bounds) that corner's column is the later
 * triangle's first column, so the later one of a pair is never one of
 * those starting in a column further left: they come first (from). */
int pm_pset_sweep(const pm_pset *S, pm_pset_skip_fn skip, pm_pset_hit_fn hit, void *ctx) {
    const pm_pgrid *g = &S->g;
    for (uint32_t z = 0; z < g->nz; z++)
        for (uint32_t x = 0; x < g->nx; x++) {
            size_t k = (size_t)z * g->nx + x;
            uint32_t from = g->start[k];
            while (from < g->start[k + 1] && g->box[g->items[from]].cx < x) from++;
            for (uint32_t i = g->start[k]; i < g->start[k + 1]; i++) {
                const pm_pbox *p = &g->box[g->items[i]];
                for (uint32_t j = i + 1 > from ? i + 1 : from; j < g->start[k + 1]; j++) {
                    const pm_pbox *q = &g->box[g->items[j]];
                    if (q->lo[0] >= p->hi[0]) break;
                    if (q->lo[1] >= p->hi[1] || p->lo[1] >= q->hi[1]) continue;
                    /* The cell of the larger lower corner is the larger cell. */
                    if ((p->cx > q->cx ? p->cx : q->cx) != x || (p->cz > q->cz ? p->cz : q->cz) != z)
                        continue;
                    const pm_ptri *a = &S->tri[g->items[i]], *b = &S->tri[g->items[j]];
                    if (skip && skip(ctx, a, b)) continue;
                    if (!pm_ptri_overlap(a, b)) continue;
                    int rc = hit(ctx, a, b);
                    if (rc) return rc;
                }
            }
        }
    return PM_OK;
}

/* A cheap proof that a clean level's outline (road_overlap.c's loop: the
 * left edge, the last section, the right edge back, the first section;
 * the float plan points the primitives carry) is a simple polygon, for
 * long roads whose every part is locally straight-ish. Each claim below is
 * exact for those float points: every computed quantity is compared with
 * a margin far above its rounding error. When a condition does not hold
 * the answer is "not proven" and the caller runs pm_loop_simple, so the
 * verdict (and the output) is never changed, only reached sooner.
 *
 * The sections are cut into chunks of about 4 W of arc (W: the half
 * width with the shoulder). The loop is simple when
 *   - chunks two or more apart have disjoint plan boxes (first and last
 *     chunks' boxes hold their end sections), so their edges cannot meet:
 *     seen along the road's chord where the road keeps to it, else by a
 *     sweep;
 *   - every two consecutive chunks lie in one window (two or three
 *     consecutive chunks) where, along the direction d
 *     from its first section's middle to its last one's, the left edge and
 *     the right edge each strictly advance (a strictly monotone polyline is
 *     simple, its consecutive edges meet only at their shared point), and
 *     one line along d separates the left points from the right ones;
 *   - each end section (a cap: its columns in a row, the loop runs across
 *     it) is nearly straight and strictly ordered along itself, every other
 *     point of its window lies strictly beyond it, and the two edges that
 *     leave its corners leave steeply, so they meet the cap only at the
 *     corner they start from. */
#include "road/road_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#define PM__OUTLINE_AVX 1
#include <immintrin.h>
#else
#define PM__OUTLINE_AVX 0
#endif

#include "scene/result.h"

/* A chunk's plan box (box j: chunk j). */
typedef struct pm__obox {
    double lo[2], hi[2];    /* floats, in double */
} pm__obox;

typedef struct pm__outline {
    const pm__level *L;
    double *x, *z;          /* per section: left, right (floats, in double) */
    double mg;              /* margin over any rounding of the sums below */
} pm__outline;

/* Float plan point of column c of section i, in double. */
static void pm__pt(const pm__level *L, size_t i, size_t c, double o[2]) {
    const double *P = L->pos + 3 * (i * L->ncol + c);
    o[0] = (float)P[0];
    o[1] = (float)P[2];
}

static void pm__box_add(pm__obox *b, const double p[2]) {
    for (int k = 0; k < 2; k++) {
        if (p[k] < b->lo[k]) b->lo[k] = p[k];
        if (p[k] > b->hi[k]) b->hi[k] = p[k];
    }
}

/* A float's bits as an unsigned key in the float's order (-0 taken as
 * +0: the two compare equal). */
static inline uint32_t pm__fkey(float f) {
    f += 0.0f;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

static int pm__by_key(const void *a, const void *b) {
    uint64_t p = *(const uint64_t *)a, q = *(const uint64_t *)b;
    return (p > q) - (p < q);
}

/* Sorts keys (a box's lower end in the high half, its chunk in the low:
 * by lower end, ties by chunk). Chunks follow the road, so their boxes
 * come nearly in order (or in reverse, strictly descending, when the road
 * runs the other way): an insertion sort, handing over to qsort once it
 * has moved more than a few keys per key. */
static void pm__sort_keys(uint64_t *k, uint32_t nb) {
    bool desc = true;
    for (uint32_t i = 1; i < nb && desc; i++) desc = k[i] >> 32 < k[i - 1] >> 32;
    if (desc)
        for (uint32_t i = 0, j = nb - 1; i < j; i++, j--) {
            uint64_t t = k[i];
            k[i] = k[j], k[j] = t;
        }
    size_t moves = 0;
    for (uint32_t i = 1; i < nb; i++) {
        uint64_t t = k[i];
        uint32_t j = i;
        while (j > 0 && k[j - 1] > t) {
            k[j] = k[j - 1];
            j--;
            if (++moves > 8 * (size_t)nb) {
                k[j] = t;
                qsort(k, nb, sizeof *k, pm__by_key);
                return;
            }
        }
        k[j] = t;
    }
}

void pm__road_outline_sort(const float *lo, uint32_t n, uint32_t *order) {
    uint64_t k[64];
    assert(n <= 64);
    for (uint32_t i = 0; i < n; i++) k[i] = (uint64_t)pm__fkey(lo[i]) << 32 | i;
    pm__sort_keys(k, n);
    for (uint32_t i = 0; i < n; i++) order[i] = (uint32_t)k[i];
}

/* Chunks two or more apart have disjoint boxes (a sweep along the axis
 * the boxes spread most on, lo and hi their extents; given up when they
 * overlap too much to pay). key: room for nb. */
static bool pm__boxes_apart(const pm__obox *b, uint32_t nb, const double lo[2], const double hi[2], uint64_t *key) {
    int ax = hi[1] - lo[1] > hi[0] - lo[0], ay = 1 - ax;
    for (uint32_t i = 0; i < nb; i++) key[i] = (uint64_t)pm__fkey((float)b[i].lo[ax]) << 32 | i;
    pm__sort_keys(key, nb);
    size_t tests = 0, budget = 16 * (size_t)nb;
    for (uint32_t i = 0; i < nb; i++) {
        uint32_t pj = (uint32_t)key[i];
        const pm__obox *p = &b[pj];
        uint64_t end = (uint64_t)pm__fkey((float)p->hi[ax]) << 32 | UINT32_MAX;   /* lower ends up to p's upper */
        for (uint32_t k = i + 1; k < nb && key[k] <= end; k++) {
            if (++tests > budget) return false;
            uint32_t qj = (uint32_t)key[k];
            const pm__obox *q = &b[qj];
            uint32_t d = pj > qj ? pj - qj : qj - pj;
            if (d >= 2 && !(q->lo[ay] > p->hi[ay] || p->lo[ay] > q->hi[ay])) return false;
        }
    }
    return true;
}

/* Two lanes, the left edge and the right one: the same IEEE operations
 * as one scalar lane each. */
typedef double pm__v2d __attribute__((vector_size(16)));
typedef int64_t pm__v2i __attribute__((vector_size(16)));

/* Lane by lane b < a ? b : a and b > a ? b : a (C has no vector ?:;
 * SSE2's minpd and maxpd are exactly that, operands swapped). */
static inline pm__v2d pm__v2min(pm__v2d a, pm__v2d b) {
#if defined(__SSE2__)
    return (pm__v2d)_mm_min_pd((__m128d)b, (__m128d)a);
#else
    pm__v2i m = b < a;
    return (pm__v2d)(((pm__v2i)b & m) | ((pm__v2i)a & ~m));
#endif
}
static inline pm__v2d pm__v2max(pm__v2d a, pm__v2d b) {
#if defined(__SSE2__)
    return (pm__v2d)_mm_max_pd((__m128d)b, (__m128d)a);
#else
    pm__v2i m = b > a;
    return (pm__v2d)(((pm__v2i)b & m) | ((pm__v2i)a & ~m));
#endif
}

/* The direction d from section i0's middle to section i1's, left at
 * twice its length (the sums of the edge points: no halving, square root
 * or division); its |d0| + |d1|. */
static inline double pm__chord(const pm__outline *O, size_t i0, size_t i1, double d[2]) {
    const double *ax = O->x + 2 * i0, *az = O->z + 2 * i0, *bx = O->x + 2 * i1, *bz = O->z + 2 * i1;
    d[0] = (bx[0] + bx[1]) - (ax[0] + ax[1]);
    d[1] = (bz[0] + bz[1]) - (az[0] + az[1]);
    return fabs(d[0]) + fabs(d[1]);
}

/* The direction d of the window over sections i0 .. i1 (pm__chord), and
 * *mg the margin scaled with it: the sums below are products with d, so
 * their rounding scales with |d0| + |d1| (at least |d|), and
 * O->mg (|d0| + |d1|) stays as far above it as O->mg is for a unit d.
 * Any nonzero d will do for the claims (advance along d, a line along d
 * between the edges); false when d is too short to tell. */
static inline bool pm__window_dir(const pm__outline *O, size_t i0, size_t i1, double d[2], double *mg) {
    double l1 = pm__chord(O, i0, i1, d);
    if (!(l1 > 1e3 * O->mg)) return false;
    *mg = O->mg * l1;
    return true;
}

/* One pass over the chunks' boxes, from the last: their extents (lo, hi)
 * and how far apart along d chunks two or more apart lie at the least:
 * over every box, the least lower end along d of the boxes two or more
 * chunks on, less the box's upper end. A box's ends along d are the
 * least and the greatest of the products of d with its corners, axis by
 * axis (rounding keeps the order of two products with one factor). A
 * coordinate that is not finite fails the windows or makes M infinite,
 * so no claim rests on a NaN here. */
static inline __attribute__((always_inline)) double pm__boxes_scan(const pm__obox *b, uint32_t nb, const double d[2],
                                                                   double lo[2], double hi[2]) {
    pm__v2d dv = {d[0], d[1]}, vlo = {INFINITY, INFINITY}, vhi = {-INFINITY, -INFINITY};
    double next = INFINITY, rest = INFINITY, gap = INFINITY;   /* lower end of box j + 1; least of boxes j + 2 on */
    for (uint32_t j = nb; j-- > 0;) {
        pm__v2d l = {b[j].lo[0], b[j].lo[1]}, h = {b[j].hi[0], b[j].hi[1]};
        vlo = pm__v2min(l, vlo);
        vhi = pm__v2max(h, vhi);
        pm__v2d pl = dv * l, ph = dv * h, mn = pm__v2min(pl, ph), mx = pm__v2max(pl, ph);
        double g = rest - (mx[0] + mx[1]);
        gap = g < gap ? g : gap;
        rest = next < rest ? next : rest;
        next = mn[0] + mn[1];
    }
    for (int k = 0; k < 2; k++) lo[k] = vlo[k], hi[k] = vhi[k];
    return gap;
}

/* Sections i0 .. i1: both edges strictly advance along the direction
 * between the middles of the end sections, and a line along it parts the
 * left points from the right ones. O->x and O->z hold each section's left
 * and right edge points side by side (two lanes). */
static bool pm__window_ok_plain(const pm__outline *O, size_t i0, size_t i1) {
    double d[2], mg;
    if (!pm__window_dir(O, i0, i1, d, &mg)) return false;
    pm__v2d dx = {d[0], d[0]}, dz = {d[1], d[1]}, mgv = {mg, mg};
    pm__v2d prev = {-INFINITY, -INFINITY};   /* the first section has none before it */
    pm__v2d vmin = {INFINITY, INFINITY}, vmax = {-INFINITY, -INFINITY};
    pm__v2i ok = {-1, -1};
    for (size_t i = i0; i <= i1; i++) {
        pm__v2d x = {O->x[2 * i], O->x[2 * i + 1]}, z = {O->z[2 * i], O->z[2 * i + 1]};
        pm__v2d u = dx * x + dz * z, v = dx * z - dz * x;
        ok &= u - prev > mgv;
        prev = u;
        vmin = pm__v2min(vmin, v);
        vmax = pm__v2max(vmax, v);
    }
    if (!(ok[0] & ok[1])) return false;
    return vmin[0] - vmax[1] > mg || vmin[1] - vmax[0] > mg;
}

#if PM__OUTLINE_AVX
/* pm__window_ok_plain two sections at a time (lanes: left i, right i,
 * left i + 1, right i + 1), each lane the plain code's operations in its
 * order: the same u, v, comparisons, minima and maxima, so the same
 * verdict. */
__attribute__((target("avx"))) static inline bool pm__window_ok_avx(const pm__outline *O, size_t i0, size_t i1) {
    /* pm__window_dir with d in lanes (x, z): each end's sums by one
     * horizontal add, in pm__chord's order */
    __m128d d = _mm_sub_pd(_mm_hadd_pd(_mm_loadu_pd(O->x + 2 * i1), _mm_loadu_pd(O->z + 2 * i1)),
                           _mm_hadd_pd(_mm_loadu_pd(O->x + 2 * i0), _mm_loadu_pd(O->z + 2 * i0)));
    __m128d ad = _mm_andnot_pd(_mm_set1_pd(-0.0), d);
    double l1 = _mm_cvtsd_f64(_mm_hadd_pd(ad, ad));
    if (!(l1 > 1e3 * O->mg)) return false;
    __m256d dd = _mm256_insertf128_pd(_mm256_castpd128_pd256(d), d, 1);
    __m256d dx = _mm256_permute_pd(dd, 0), dz = _mm256_permute_pd(dd, 15), mgv = _mm256_set1_pd(O->mg * l1);
    /* prev's upper half: the u before the next pair's first section (none
     * before the first) */
    __m256d prev = _mm256_set1_pd(-INFINITY);
    __m256d vmin = _mm256_set1_pd(INFINITY), vmax = _mm256_set1_pd(-INFINITY);
    __m256d ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    size_t i = i0;
    for (; i + 1 <= i1; i += 2) {
        __m256d x = _mm256_loadu_pd(O->x + 2 * i), z = _mm256_loadu_pd(O->z + 2 * i);
        __m256d u = _mm256_add_pd(_mm256_mul_pd(dx, x), _mm256_mul_pd(dz, z));
        __m256d v = _mm256_sub_pd(_mm256_mul_pd(dx, z), _mm256_mul_pd(dz, x));
        __m256d pu = _mm256_permute2f128_pd(prev, u, 0x21);   /* prev's upper half, then u's lower */
        ok = _mm256_and_pd(ok, _mm256_cmp_pd(_mm256_sub_pd(u, pu), mgv, _CMP_GT_OQ));
        prev = u;
        vmin = _mm256_min_pd(v, vmin);
        vmax = _mm256_max_pd(v, vmax);
    }
    __m128d ok2 = _mm_and_pd(_mm256_castpd256_pd128(ok), _mm256_extractf128_pd(ok, 1));
    __m128d lo = _mm_min_pd(_mm256_castpd256_pd128(vmin), _mm256_extractf128_pd(vmin, 1));
    __m128d hi = _mm_max_pd(_mm256_castpd256_pd128(vmax), _mm256_extractf128_pd(vmax, 1));
    if (i == i1) {   /* an odd count: the last section alone */
        __m128d x = _mm_loadu_pd(O->x + 2 * i), z = _mm_loadu_pd(O->z + 2 * i);
        __m128d dx2 = _mm256_castpd256_pd128(dx), dz2 = _mm256_castpd256_pd128(dz);
        __m128d u = _mm_add_pd(_mm_mul_pd(dx2, x), _mm_mul_pd(dz2, z));
        __m128d v = _mm_sub_pd(_mm_mul_pd(dx2, z), _mm_mul_pd(dz2, x));
        ok2 = _mm_and_pd(ok2, _mm_cmpgt_pd(_mm_sub_pd(u, _mm256_extractf128_pd(prev, 1)),
                                           _mm256_castpd256_pd128(mgv)));
        lo = _mm_min_pd(v, lo);
        hi = _mm_max_pd(v, hi);
    }
    if (_mm_movemask_pd(ok2) != 3) return false;
    /* (min left - max right, min right - max left) > mg, either */
    __m128d gap = _mm_sub_pd(lo, _mm_shuffle_pd(hi, hi, 1));
    return _mm_movemask_pd(_mm_cmpgt_pd(gap, _mm256_castpd256_pd128(mgv))) != 0;
}
#endif

/* Windows of `win` (3) chunks at a stride of win - 1 (each section
 * looked at about 1.5 times, not twice): every two consecutive chunks
 * share one. Where the long window fails, its two pairs of chunks are
 * tried, so this proves every road the pairs alone would. */
#define PM__WINDOWS(ok)                                                                \
    for (uint32_t j = 0; j + 1 < nch; j += win - 1) {                                  \
        uint32_t k = j + win - 1 < nch ? j + win - 1 : nch - 1; /* the last chunk */ \
        if (k > j + 1 && ok(O, start[j], start[k + 1])) continue;                      \
        for (uint32_t i = j; i < k; i++)                                               \
            if (!ok(O, start[i], start[i + 2])) return false;                          \
    }                                                                                  \
    return true

static bool pm__windows_plain(const pm__outline *O, const uint32_t *start, uint32_t nch, uint32_t win) {
    PM__WINDOWS(pm__window_ok_plain);
}

#if PM__OUTLINE_AVX
__attribute__((target("avx"))) static bool pm__windows_avx(const pm__outline *O, const uint32_t *start, uint32_t nch,
                                                           uint32_t win) {
    PM__WINDOWS(pm__window_ok_avx);
}
#endif
#undef PM__WINDOWS

/* End section e (0 or n - 1) of the window reaching section far: its
 * columns nearly on one line and strictly ordered along it, every other
 * point of the window's edges strictly beyond them, the edges from its
 * corners leaving at 14 degrees or more. */
static bool pm__cap_ok(const pm__outline *O, size_t e, size_t far) {
    const pm__level *L = O->L;
    size_t nc = L->ncol, nx = e == 0 ? 1 : e - 1;
    double p0[2], p1[2];
    pm__pt(L, e, 0, p0);
    pm__pt(L, e, nc - 1, p1);
    double a[2] = {p1[0] - p0[0], p1[1] - p0[1]}, la = sqrt(a[0] * a[0] + a[1] * a[1]);
    if (!(la > 1e3 * O->mg)) return false;
    a[0] /= la;
    a[1] /= la;
    double f[2] = {-a[1], a[0]};
    /* f towards the road: the next section's middle is ahead. */
    double q0[2], q1[2];
    pm__pt(L, nx, 0, q0);
    pm__pt(L, nx, nc - 1, q1);
    double ahead = f[0] * (q0[0] + q1[0] - p0[0] - p1[0]) + f[1] * (q0[1] + q1[1] - p0[1] - p1[1]);
    if (ahead < 0.0) f[0] = -f[0], f[1] = -f[1];
    double hmin = INFINITY, hmax = -INFINITY, gap = INFINITY, prev = 0.0;
    for (size_t c = 0; c < nc; c++) {
        double p[2];
        pm__pt(L, e, c, p);
        double s = a[0] * p[0] + a[1] * p[1], h = f[0] * p[0] + f[1] * p[1];
        if (c > 0) gap = fmin(gap, s - prev);
        prev = s;
        hmin = fmin(hmin, h);
        hmax = fmax(hmax, h);
    }
    double tau = hmax - hmin + O->mg;
    if (!(gap > 16.0 * tau + O->mg)) return false;
    size_t lo = e < far ? e + 1 : far, hi = e < far ? far : e - 1;
    for (size_t i = lo; i <= hi; i++)
        for (int side = 0; side < 2; side++) {
            double p[2];
            pm__pt(L, i, side ? nc - 1 : 0, p);
            if (!(f[0] * p[0] + f[1] * p[1] > hmax + O->mg)) return false;
        }
    for (int side = 0; side < 2; side++) {
        double c0[2], c1[2];
        pm__pt(L, e, side ? nc - 1 : 0, c0);
        pm__pt(L, nx, side ? nc - 1 : 0, c1);
        double v[2] = {c1[0] - c0[0], c1[1] - c0[1]};
        if (!(f[0] * v[0] + f[1] * v[1] > 0.25 * sqrt(v[0] * v[0] + v[1] * v[1]) + O->mg)) return false;
    }
    return true;
}

int pm__road_outline_windows(pm_arena *a, const pm__level *L, double W) {
    return pm__road_outline_windows_x(a, L, W, 3, true);
}

int pm__road_outline_windows_k(pm_arena *a, const pm__level *L, double W, uint32_t win) {
    return pm__road_outline_windows_x(a, L, W, win, true);
}

/* Box b's bounds from lanes (left, right) of lo and hi, each axis's
 * lesser and greater lane (x and z at once). */
static void pm__box_set(pm__obox *b, const pm__v2d lo[2], const pm__v2d hi[2]) {
    pm__v2d l = pm__v2min((pm__v2d){lo[0][0], lo[1][0]}, (pm__v2d){lo[0][1], lo[1][1]});
    pm__v2d h = pm__v2max((pm__v2d){hi[0][0], hi[1][0]}, (pm__v2d){hi[0][1], hi[1][1]});
    memcpy(b->lo, &l, sizeof l);
    memcpy(b->hi, &h, sizeof h);
}

/* The whole proof; avx: the four-lane windows, and the pass built for
 * AVX (pm__outline_windows_avx, the same operations in three-operand
 * form). */
static inline __attribute__((always_inline)) int pm__outline_windows(pm_arena *a, const pm__level *L, double W,
                                                                     uint32_t win, bool avx) {
    size_t n = L->n, nc = L->ncol;
    if (n < 8 || nc < 2 || L->closed) return 0;
    double reach = 4.0 * W, M = 1.0;
    /* Chunk starts: a new chunk once the last one spans `reach` of arc. */
    uint32_t *start = pm_arena_alloc(a, (n + 1) * sizeof *start);
    double *ex = pm_arena_alloc(a, n * 4 * sizeof *ex), *ez = ex ? ex + 2 * n : NULL;
    /* At most one chunk per `reach` of arc, and one more. */
    double span = L->sec[n - 1].s - L->sec[0].s;
    size_t maxch = span / reach < (double)n ? (size_t)(span / reach) + 2 : n + 1;
    pm__obox *box = pm_arena_alloc(a, (maxch < n + 1 ? maxch : n + 1) * sizeof *box);
    if (!start || !ex || !box) return PM_ERR_NOMEM;
    /* One pass: each section's float edge points (left, right; x then z),
     * the chunk it starts, and the plan boxes of the chunks it lies in (a
     * chunk's box holds its sections from its start to the next start). */
    uint32_t *st = start;    /* the next chunk's start */
    pm__obox *b = box;       /* the open chunk's box */
    *st++ = 0;
    double s0 = L->sec[0].s, end = L->sec[n - 1].s, half = 0.5 * reach;
    pm__v2d lo[2] = {{INFINITY, INFINITY}, {INFINITY, INFINITY}}, hi[2] = {{-INFINITY, -INFINITY}, {-INFINITY, -INFINITY}};
    const double *pos = L->pos;
    const pm__section *sec = L->sec;
    size_t stride = 3 * nc, right = 3 * (nc - 1);
    for (size_t i = 0; i < n; i++, pos += stride) {
        pm__v2d v[2];
#if defined(__SSE2__)   /* cvtpd2ps rounds as the (float) cast does, two at once */
        v[0] = (pm__v2d)_mm_cvtps_pd(_mm_cvtpd_ps(_mm_set_pd(pos[right], pos[0])));
        v[1] = (pm__v2d)_mm_cvtps_pd(_mm_cvtpd_ps(_mm_set_pd(pos[right + 2], pos[2])));
#else
        v[0] = (pm__v2d){(float)pos[0], (float)pos[right]};
        v[1] = (pm__v2d){(float)pos[2], (float)pos[right + 2]};
#endif
        memcpy(ex + 2 * i, &v[0], sizeof v[0]);
        memcpy(ez + 2 * i, &v[1], sizeof v[1]);
        /* In place (lo's lane when equal: the same value, up to a zero's
         * sign, which no comparison below sees). */
        for (int k = 0; k < 2; k++) {
            lo[k] = pm__v2min(v[k], lo[k]);
            hi[k] = pm__v2max(v[k], hi[k]);
        }
        double si = sec[i].s;
        if (si - s0 >= reach && end - si >= half && i - 1 < n - 2) {   /* neither end section */
            /* Section i ends the open chunk and starts the next; room for
             * one more after it (not expected to run out, arc spans: then
             * not proven). */
            if (b + 2 >= box + maxch) return 0;
            pm__box_set(b++, lo, hi);
            *st++ = (uint32_t)i;
            s0 = si;
            lo[0] = v[0], lo[1] = v[1];
            hi[0] = v[0], hi[1] = v[1];
        }
    }
    uint32_t nch = (uint32_t)(st - start);
    if (nch < 3) return 0;
    pm__box_set(&box[nch - 1], lo, hi);
    start[nch] = (uint32_t)(n - 1);
    for (size_t c = 1; c + 1 < nc; c++) {
        double p[2];
        pm__pt(L, 0, c, p);
        pm__box_add(&box[0], p);
        pm__pt(L, n - 1, c, p);
        pm__box_add(&box[nch - 1], p);
    }
    /* d: the road's chord; the boxes' extents give M, the largest
     * coordinate, for the margin. */
    pm__outline O = {.L = L, .x = ex, .z = ez, .mg = 0.0};
    double d[2], blo[2], bhi[2];
    double l1 = pm__chord(&O, 0, n - 1, d), gap = pm__boxes_scan(box, nch, d, blo, bhi);
    for (int k = 0; k < 2; k++) {
        double m = fabs(blo[k]) > fabs(bhi[k]) ? fabs(blo[k]) : fabs(bhi[k]);
        M = m > M ? m : M;
    }
    /* Sums of a few products of numbers up to M err by a few 1e-16 M. */
    O.mg = 1e-12 * M;
#if PM__OUTLINE_AVX
    if (avx ? !pm__windows_avx(&O, start, nch, win) : !pm__windows_plain(&O, start, nch, win)) return 0;
#else
    (void)avx;
    if (!pm__windows_plain(&O, start, nch, win)) return 0;
#endif
    if (!pm__cap_ok(&O, 0, start[2]) || !pm__cap_ok(&O, n - 1, start[nch - 2])) return 0;
    /* Chunks two or more apart: apart along the chord (the margin as a
     * window's), else by the sweep. */
    if (l1 > 1e3 * O.mg && gap > O.mg * l1) return 1;
    uint64_t *key = pm_arena_alloc(a, nch * sizeof *key);
    if (!key) return PM_ERR_NOMEM;
    return pm__boxes_apart(box, nch, blo, bhi, key) ? 1 : 0;
}

#if PM__OUTLINE_AVX
__attribute__((target("avx"))) static int pm__outline_windows_avx(pm_arena *a, const pm__level *L, double W,
                                                                  uint32_t win) {
    return pm__outline_windows(a, L, W, win, true);
}
#endif

int pm__road_outline_windows_x(pm_arena *a, const pm__level *L, double W, uint32_t win, bool fast) {
    assert(win == 2 || win == 3);
#if PM__OUTLINE_AVX
    if (fast && __builtin_cpu_supports("avx")) return pm__outline_windows_avx(a, L, W, win);
#else
    (void)fast;
#endif
    return pm__outline_windows(a, L, W, win, false);
}

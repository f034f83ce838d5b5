/* The boundary certificate of geom/plan_boundary.h: cancel twin edges in a
 * hash table, walk what is left as one loop, then test the loop's edges
 * for crossings over a uniform grid. */
#include "geom/plan_boundary.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "geom/predicates.h"
#include "scene/result.h"

/* A plan point as the bits of its two floats, -0 read as +0 so that equal
 * coordinates give equal keys. */
typedef uint64_t pm__pkey;

static uint32_t pm__bits(float f) {
    f += 0.0f;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static pm__pkey pm__key(const float p[2]) { return (uint64_t)pm__bits(p[0]) << 32 | pm__bits(p[1]); }

static void pm__point(pm__pkey k, double out[2]) {
    uint32_t ux = (uint32_t)(k >> 32), uz = (uint32_t)k;
    float x, z;
    memcpy(&x, &ux, sizeof x);
    memcpy(&z, &uz, sizeof z);
    out[0] = x;
    out[1] = z;
}

/* Multiplicative hashing: the top bits of the product index the table. */
static size_t pm__hash(uint64_t lo, uint64_t hi, unsigned shift) {
    return (size_t)(((lo * 0x9e3779b97f4a7c15ull) ^ hi) * 0xc2b2ae3d27d4eb4full >> shift);
}

/* An undirected edge lo < hi (so hi != 0: 0 marks a free slot); its net
 * count of lo -> hi minus hi -> lo is kept beside it. */
typedef struct pm__edge {
    pm__pkey lo, hi;
} pm__edge;

/* The smallest power of two above n (at least 16), and its log2. */
static size_t pm__pow2(size_t n, unsigned *bits) {
    size_t c = 16;
    *bits = 4;
    while (c <= n) c *= 2, ++*bits;
    return c;
}

/* Directed boundary edges a -> b, and the loop order. */
typedef struct pm__seg {
    double a[2], b[2];
    float lo[2], hi[2];
    uint32_t next;
} pm__seg;

/* next[i] for every boundary edge, through a table of start points; false
 * unless every point starts one edge and the edges form a single loop. */
static int pm__link(pm_arena *ar, pm__pkey *from, pm__pkey *to, pm__seg *s, uint32_t m) {
    unsigned bits;
    size_t cap = pm__pow2(2 * (size_t)m, &bits), mask = cap - 1;
    uint32_t *slot = pm_arena_alloc(ar, cap * sizeof *slot);
    if (!slot) return PM_ERR_NOMEM;
    memset(slot, 0xff, cap * sizeof *slot);
    for (uint32_t e = 0; e < m; e++) {
        size_t i = pm__hash(from[e], 0, 64 - bits);
        while (slot[i] != UINT32_MAX) {
            if (from[slot[i]] == from[e]) return 0;
            i = (i + 1) & mask;
        }
        slot[i] = e;
    }
    for (uint32_t e = 0; e < m; e++) {
        size_t i = pm__hash(to[e], 0, 64 - bits);
        while (slot[i] != UINT32_MAX && from[slot[i]] != to[e]) i = (i + 1) & mask;
        if (slot[i] == UINT32_MAX) return 0;
        s[e].next = slot[i];
    }
    uint32_t e = 0, steps = 0;
    do {
        e = s[e].next;
        steps++;
    } while (e != 0 && steps <= m);
    return steps == m;
}

static bool pm__between(double a, double b, double c) { return (a <= b && b <= c) || (c <= b && b <= a); }

/* Whether boundary edges i and j meet where a simple polygon's edges may
 * not: anywhere for two edges apart, beyond their shared corner for
 * neighbours (i -> j). */
static bool pm__crossing(const pm__seg *s, uint32_t i, uint32_t j) {
    const pm__seg *p = &s[i], *q = &s[j];
    if (p->next == j || q->next == i) {
        if (q->next == i) { const pm__seg *t = p; p = q; q = t; }
        /* p = A -> B, q = B -> D: they meet only at B unless D turns back
         * along the line of A B. */
        if (pm_orient2d_fast(p->a, p->b, q->b) != 0) return false;
        return !(pm__between(p->a[0], p->b[0], q->b[0]) && pm__between(p->a[1], p->b[1], q->b[1]) &&
                 (p->a[0] != q->b[0] || p->a[1] != q->b[1]));
    }
    double o1 = pm_orient2d_fast(p->a, p->b, q->a), o2 = pm_orient2d_fast(p->a, p->b, q->b);
    if ((o1 > 0 && o2 > 0) || (o1 < 0 && o2 < 0)) return false;
    double o3 = pm_orient2d_fast(q->a, q->b, p->a), o4 = pm_orient2d_fast(q->a, q->b, p->b);
    /* Else they cross, or touch, or lie on one line where (on one line)
     * meeting bounds, which every candidate pair has, mean meeting. */
    return !((o3 > 0 && o4 > 0) || (o3 < 0 && o4 < 0));
}

static uint32_t pm__cell(double v, double v0, double inv, uint32_t n) {
    double c = (v - v0) * inv;
    if (!(c > 0)) return 0;
    return c >= n ? n - 1 : (uint32_t)c;
}

/* The cells of edge e's bounds: x from c[0] to c[1], z from c[2] to c[3]. */
static inline void pm__edge_cells(const pm__seg *s, uint32_t e, const double lo[2], double inv, uint32_t nx,
                                  uint32_t nz, uint32_t c[4]) {
    c[0] = pm__cell(s[e].lo[0], lo[0], inv, nx);
    c[1] = pm__cell(s[e].hi[0], lo[0], inv, nx);
    c[2] = pm__cell(s[e].lo[1], lo[1], inv, nz);
    c[3] = pm__cell(s[e].hi[1], lo[1], inv, nz);
}

/* Whether edges i and j, met in cell (x, z), cross there: each pair is
 * tested once, in the cell of its bounds' common lower corner. */
static inline bool pm__crossing_in(const pm__seg *s, const uint32_t (*box)[4], uint32_t i, uint32_t j,
                                   uint32_t x, uint32_t z) {
    const pm__seg *p = &s[i], *q = &s[j];
    if (q->lo[0] > p->hi[0] || p->lo[0] > q->hi[0] || q->lo[1] > p->hi[1] || p->lo[1] > q->hi[1])
        return false;
    uint32_t cx = box[i][0] > box[j][0] ? box[i][0] : box[j][0];
    uint32_t cz = box[i][2] > box[j][2] ? box[i][2] : box[j][2];
    return cx == x && cz == z && pm__crossing(s, i, j);
}

/* No two boundary edges cross: candidates from a uniform grid over their
 * bounds, each pair tested in the cell of its bounds' common lower corner. */
static int pm__simple(pm_arena *ar, const pm__seg *s, uint32_t m) {
    double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL}, ext = 0;
    for (uint32_t e = 0; e < m; e++) {
        for (int c = 0; c < 2; c++) {
            lo[c] = fmin(lo[c], s[e].lo[c]);
            hi[c] = fmax(hi[c], s[e].hi[c]);
        }
        ext += fmax((double)s[e].hi[0] - s[e].lo[0], (double)s[e].hi[1] - s[e].lo[1]);
    }
    double w = fmax(hi[0] - lo[0], 1e-9), h = fmax(hi[1] - lo[1], 1e-9);
    /* Cells about twice the mean edge: an outline is a thin loop, so most
     * cells stay empty; at most about 4 of them per edge (measured best). */
    double cell = fmax(fmax(2.0 * ext / m, sqrt(w * h / (4.0 * m))), fmax(w, h) / 4096.0);
    double inv = 1.0 / cell;
    uint32_t nx = (uint32_t)fmin(floor(w / cell) + 1, 4096), nz = (uint32_t)fmin(floor(h / cell) + 1, 4096);
    size_t ncell = (size_t)nx * nz;
    uint32_t *start = pm_arena_calloc(ar, ncell + 1, sizeof *start);
    uint32_t(*box)[4] = pm_arena_alloc(ar, (size_t)m * sizeof *box);
    if (!start || !box) return PM_ERR_NOMEM;
    size_t total = 0;
    for (uint32_t e = 0; e < m; e++) {
        uint32_t *c = box[e];
        pm__edge_cells(s, e, lo, inv, nx, nz, c);
        for (uint32_t z = c[2]; z <= c[3]; z++)
            for (uint32_t x = c[0]; x <= c[1]; x++) start[(size_t)z * nx + x + 1]++;
        total += (size_t)(c[1] - c[0] + 1) * (c[3] - c[2] + 1);
    }
    if (total >= UINT32_MAX) return 0;
    for (size_t k = 0; k < ncell; k++) start[k + 1] += start[k];
    uint32_t *items = pm_arena_alloc(ar, (total + 1) * sizeof *items);
    uint32_t *fill = pm_arena_alloc(ar, (ncell + 1) * sizeof *fill);
    if (!items || !fill) return PM_ERR_NOMEM;
    memcpy(fill, start, ncell * sizeof *fill);
    for (uint32_t e = 0; e < m; e++) {
        const uint32_t *c = box[e];
        for (uint32_t z = c[2]; z <= c[3]; z++)
            for (uint32_t x = c[0]; x <= c[1]; x++) items[fill[(size_t)z * nx + x]++] = e;
    }
    for (uint32_t z = 0; z < nz; z++)
        for (uint32_t x = 0; x < nx; x++) {
            size_t k = (size_t)z * nx + x;
            for (uint32_t a = start[k]; a < start[k + 1]; a++)
                for (uint32_t b = a + 1; b < start[k + 1]; b++)
                    if (pm__crossing_in(s, (const uint32_t(*)[4])box, items[a], items[b], x, z)) return 0;
        }
    return 1;
}

/* Corner k of pm_loop_convex (A, B, C the loop's points k, k + 1, k + 2):
 * 2 when the loop fails there, else the sign of its edge's dx. */
static inline int pm__convex_corner(const double A[2], const double B[2], const double C[2]) {
    double dx = B[0] - A[0], dz = B[1] - A[1], o = pm_orient2d_fast(A, B, C);
    if (o < 0 || (dx == 0 && dz == 0)) return 2;
    if (o == 0 && dx * (C[0] - B[0]) + dz * (C[1] - B[1]) <= 0) return 2;
    return (dx > 0) - (dx < 0);
}

/* The run of x's signs (0 skipped): first, last, changes. */
static inline void pm__convex_sign(int sg, int *first, int *last, int *changes) {
    if (sg == 0) return;
    if (*first == 0) *first = sg;
    else if (sg != *last) (*changes)++;
    *last = sg;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#include <immintrin.h>
#define PM__CONVEX_AVX2 1
/* Corners k .. k + 3 at once (points k .. k + 5, none wrapping): each lane
 * pm_orient2d_fast's filter and pm__convex_corner's tests, the same
 * operations on the same doubles. Returns -1 when a corner fails, 0 when
 * some lane's orientation is not sure (the caller takes those four the
 * scalar way), else 1 with the signs of dx as bits (i for corner k + i)
 * in *pos (dx > 0) and *neg (dx < 0). */
__attribute__((target("avx2"))) static int pm__convex4(const float *xz, uint32_t k, int *pos, int *neg) {
    const __m256i deal = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    __m256 pa = _mm256_permutevar8x32_ps(_mm256_loadu_ps(xz + 2 * (size_t)k), deal);
    __m256 pb = _mm256_permutevar8x32_ps(_mm256_loadu_ps(xz + 2 * (size_t)k + 2), deal);
    __m256 pc = _mm256_permutevar8x32_ps(_mm256_loadu_ps(xz + 2 * (size_t)k + 4), deal);
    __m256d a0 = _mm256_cvtps_pd(_mm256_castps256_ps128(pa)), a1 = _mm256_cvtps_pd(_mm256_extractf128_ps(pa, 1));
    __m256d b0 = _mm256_cvtps_pd(_mm256_castps256_ps128(pb)), b1 = _mm256_cvtps_pd(_mm256_extractf128_ps(pb, 1));
    __m256d c0 = _mm256_cvtps_pd(_mm256_castps256_ps128(pc)), c1 = _mm256_cvtps_pd(_mm256_extractf128_ps(pc, 1));
    __m256d left = _mm256_mul_pd(_mm256_sub_pd(a0, c0), _mm256_sub_pd(b1, c1));
    __m256d right = _mm256_mul_pd(_mm256_sub_pd(a1, c1), _mm256_sub_pd(b0, c0));
    __m256d det = _mm256_sub_pd(left, right);
    const __m256d abs = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX)), zero = _mm256_setzero_pd();
    __m256d bound = _mm256_mul_pd(_mm256_set1_pd(3.3306690738754716e-16),
                                  _mm256_add_pd(_mm256_and_pd(left, abs), _mm256_and_pd(right, abs)));
    __m256d sure = _mm256_or_pd(_mm256_or_pd(_mm256_cmp_pd(det, bound, _CMP_GT_OQ),
                                             _mm256_cmp_pd(_mm256_sub_pd(zero, det), bound, _CMP_GT_OQ)),
                                _mm256_cmp_pd(bound, zero, _CMP_EQ_OQ));
    if (_mm256_movemask_pd(sure) != 15) return 0;
    __m256d dx = _mm256_sub_pd(b0, a0), dz = _mm256_sub_pd(b1, a1);
    __m256d dot = _mm256_add_pd(_mm256_mul_pd(dx, _mm256_sub_pd(c0, b0)), _mm256_mul_pd(dz, _mm256_sub_pd(c1, b1)));
    __m256d bad = _mm256_or_pd(_mm256_cmp_pd(det, zero, _CMP_LT_OQ),
                               _mm256_and_pd(_mm256_cmp_pd(dx, zero, _CMP_EQ_OQ), _mm256_cmp_pd(dz, zero, _CMP_EQ_OQ)));
    bad = _mm256_or_pd(bad, _mm256_and_pd(_mm256_cmp_pd(det, zero, _CMP_EQ_OQ), _mm256_cmp_pd(dot, zero, _CMP_LE_OQ)));
    if (_mm256_movemask_pd(bad)) return -1;
    *pos = _mm256_movemask_pd(_mm256_cmp_pd(dx, zero, _CMP_GT_OQ));
    *neg = _mm256_movemask_pd(_mm256_cmp_pd(dx, zero, _CMP_LT_OQ));
    return 1;
}
#endif

/* Corner k of the loop (its points k, k + 1, k + 2 round the end) the
 * scalar way into the run of signs; false when the loop fails there. */
static inline bool pm__convex_at(const float *xz, uint32_t m, uint32_t k, int *first, int *last, int *changes) {
    uint32_t j = k + 1 < m ? k + 1 : k + 1 - m, l = k + 2 < m ? k + 2 : k + 2 - m;
    double A[2] = {xz[2 * k], xz[2 * k + 1]}, B[2] = {xz[2 * j], xz[2 * j + 1]}, C[2] = {xz[2 * l], xz[2 * l + 1]};
    int sg = pm__convex_corner(A, B, C);
    if (sg == 2) return false;
    pm__convex_sign(sg, first, last, changes);
    return true;
}

int pm__loop_convex_path(const float *xz, uint32_t m, int path) {
    int best = 0;
#if PM__CONVEX_AVX2
    if (__builtin_cpu_supports("avx2")) best = 1;
#endif
    if (path > best) return -1;
    if (path < 0) path = best;
    if (m < 3) return 0;
    int changes = 0, last = 0, first = 0;
    uint32_t k = 0;
#if PM__CONVEX_AVX2
    /* Four corners at a time; those whose points run round the end from a
     * copy of their six points. A run of one sign counts as that sign
     * once (pm__convex_sign ignores repeats), so the four signs go in
     * one by one only where they differ. */
    float wrap[12];
    for (; path == 1 && k + 4 <= m; k += 4) {
        const float *src = xz;
        uint32_t at = k;
        if (k + 6 > m) {
            for (uint32_t i = 0; i < 6; i++) {
                uint32_t j = k + i < m ? k + i : k + i - m;
                wrap[2 * i] = xz[2 * j], wrap[2 * i + 1] = xz[2 * j + 1];
            }
            src = wrap, at = 0;
        }
        int pos, neg, r = pm__convex4(src, at, &pos, &neg);
        if (r < 0) return 0;
        if (r == 0) {   /* some corner not sure: these four the scalar way */
            for (uint32_t i = 0; i < 4; i++)
                if (!pm__convex_at(xz, m, k + i, &first, &last, &changes)) return 0;
        } else if (pos && neg) {
            for (int i = 0; i < 4; i++) pm__convex_sign(((pos >> i) & 1) - ((neg >> i) & 1), &first, &last, &changes);
        } else if (pos | neg) {
            pm__convex_sign(pos ? 1 : -1, &first, &last, &changes);
        }
    }
#endif
    for (; k < m; k++)
        if (!pm__convex_at(xz, m, k, &first, &last, &changes)) return 0;
    if (last != first) changes++;   /* round the corner back to the start */
    return changes <= 2;
}

int pm_loop_convex(const float *xz, uint32_t m) { return pm__loop_convex_path(xz, m, -1); }

/* pm__simple by a sweep along the outline's longer side: the edges in
 * order of their bounds' low end there, each tested against those that
 * start before it ends (bounds meeting, ends included: the grid's pairs).
 * Walked along the loop, a thin outline's edges come in a few runs
 * already sorted one way or the other, so a natural merge of the runs
 * sorts them in about linear time. */
static int pm__simple_sweep(pm_arena *ar, const pm__seg *s, uint32_t m) {
    float lo[2] = {s[0].lo[0], s[0].lo[1]}, hi[2] = {s[0].hi[0], s[0].hi[1]};
    for (uint32_t e = 1; e < m; e++)
        for (int c = 0; c < 2; c++) {
            lo[c] = s[e].lo[c] < lo[c] ? s[e].lo[c] : lo[c];
            hi[c] = s[e].hi[c] > hi[c] ? s[e].hi[c] : hi[c];
        }
    int ax = (double)hi[0] - lo[0] >= (double)hi[1] - lo[1] ? 0 : 1, bx = 1 - ax;
    uint32_t *ord = pm_arena_alloc(ar, 3 * (size_t)m * sizeof *ord), *run = pm_arena_alloc(ar, ((size_t)m + 1) * sizeof *run);
    if (!ord || !run) return PM_ERR_NOMEM;
    uint32_t *tmp = ord + m, nrun = 0;
    for (uint32_t e = 0, k = 0; k < m; k++, e = s[e].next) ord[k] = e;
    float *xz = (float *)tmp;   /* (free until the merge) */
    for (uint32_t k = 0; k < m; k++) {
        xz[2 * k] = (float)s[ord[k]].a[0];
        xz[2 * k + 1] = (float)s[ord[k]].a[1];
    }
    if (pm_loop_convex(xz, m)) return 1;
    /* Runs: maximal stretches whose low ends never fall (or never rise:
     * turned round). */
    for (uint32_t a = 0; a < m;) {
        uint32_t b = a + 1;
        if (b < m && s[ord[b]].lo[ax] < s[ord[a]].lo[ax]) {
            while (b < m && s[ord[b]].lo[ax] <= s[ord[b - 1]].lo[ax]) b++;
            for (uint32_t i = a, j = b - 1; i < j; i++, j--) { uint32_t t = ord[i]; ord[i] = ord[j]; ord[j] = t; }
        } else
            while (b < m && s[ord[b]].lo[ax] >= s[ord[b - 1]].lo[ax]) b++;
        run[nrun++] = a;
        a = b;
    }
    run[nrun] = m;
    while (nrun > 1) {
        uint32_t n2 = 0;
        for (uint32_t r = 0; r < nrun; r += 2) {
            uint32_t i = run[r], mid = run[r + 1], end = r + 2 <= nrun ? run[r + 2] : m;
            uint32_t j = mid, k = run[r];
            while (i < mid && j < end) tmp[k++] = s[ord[j]].lo[ax] < s[ord[i]].lo[ax] ? ord[j++] : ord[i++];
            while (i < mid) tmp[k++] = ord[i++];
            while (j < end) tmp[k++] = ord[j++];
            run[n2++] = run[r];
        }
        run[n2] = m;
        nrun = n2;
        uint32_t *t = ord;
        ord = tmp;
        tmp = t;
    }
    for (uint32_t i = 0; i < m; i++) {
        const pm__seg *p = &s[ord[i]];
        for (uint32_t j = i + 1; j < m && s[ord[j]].lo[ax] <= p->hi[ax]; j++) {
            const pm__seg *q = &s[ord[j]];
            if (q->lo[bx] > p->hi[bx] || p->lo[bx] > q->hi[bx]) continue;
            if (pm__crossing(s, ord[i], ord[j])) return 0;
        }
    }
    return 1;
}

/* The directed edges ef[i] -> et[i] (point keys), opposite twins
 * cancelled: 1 when what is left is one simple loop (the certificate of
 * plan_boundary.h), 0 when not, PM_ERR_NOMEM. */
static int pm__boundary_loop(pm_arena *ar, const pm__pkey *ef, const pm__pkey *et, size_t ne) {
    if (ne < 3 || ne > UINT32_MAX / 4) return 0;
    /* Edges mostly come in twins: about half as many keys as edges. */
    unsigned bits;
    size_t cap = pm__pow2(ne, &bits), mask = cap - 1;
    pm__edge *t = pm_arena_calloc(ar, cap, sizeof *t);
    int8_t *net = pm_arena_calloc(ar, cap, sizeof *net);
    if (!t || !net) return PM_ERR_NOMEM;
    for (size_t e = 0; e < ne; e++) {
        pm__pkey p = ef[e], q = et[e];
        if (p == q) return 0;
        pm__pkey lo = p < q ? p : q, hi = p < q ? q : p;
        size_t j = pm__hash(lo, hi, 64 - bits);
        while (t[j].hi && (t[j].lo != lo || t[j].hi != hi)) j = (j + 1) & mask;
        t[j].lo = lo;
        t[j].hi = hi;
        /* Three alike would already fail below: stop before int8 wraps. */
        if ((net[j] += p < q ? 1 : -1) > 2 || net[j] < -2) return 0;
    }
    uint32_t m = 0;
    for (size_t i = 0; i < cap; i++) {
        if (net[i] == 0) continue;
        if (net[i] != 1 && net[i] != -1) return 0;
        m++;
    }
    if (m < 3) return 0;
    pm__seg *s = pm_arena_alloc(ar, (size_t)m * sizeof *s);
    pm__pkey *from = pm_arena_alloc(ar, (size_t)m * sizeof *from);
    pm__pkey *to = pm_arena_alloc(ar, (size_t)m * sizeof *to);
    if (!s || !from || !to) return PM_ERR_NOMEM;
    m = 0;
    for (size_t i = 0; i < cap; i++) {
        if (net[i] == 0) continue;
        from[m] = net[i] > 0 ? t[i].lo : t[i].hi;
        to[m] = net[i] > 0 ? t[i].hi : t[i].lo;
        pm__seg *g = &s[m++];
        pm__point(from[m - 1], g->a);
        pm__point(to[m - 1], g->b);
        for (int c = 0; c < 2; c++) {
            g->lo[c] = (float)(g->a[c] < g->b[c] ? g->a[c] : g->b[c]);
            g->hi[c] = (float)(g->a[c] < g->b[c] ? g->b[c] : g->a[c]);
        }
    }
    int r = pm__link(ar, from, to, s, m);
    if (r != 1) return r;
    return pm__simple_sweep(ar, s, m);
}

int pm_pset_simple_boundary(pm_arena *ar, const pm_pset *S) {
    size_t ne = 3 * (size_t)S->ntri;
    if (ne < 3 || ne > UINT32_MAX / 4) return 0;
    pm__pkey *ef = pm_arena_alloc(ar, ne * sizeof *ef), *et = pm_arena_alloc(ar, ne * sizeof *et);
    if (!ef || !et) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < S->ntri; i++) {
        pm__pkey v[3] = {pm__key(S->tri[i].f[0]), pm__key(S->tri[i].f[1]), pm__key(S->tri[i].f[2])};
        for (int k = 0; k < 3; k++) {
            ef[3 * (size_t)i + k] = v[k];
            et[3 * (size_t)i + k] = v[k == 2 ? 0 : k + 1];
        }
    }
    return pm__boundary_loop(ar, ef, et, ne);
}

int pm_edges_simple_loop(pm_arena *ar, const float *from, const float *to, uint32_t m) {
    pm__pkey *ef = pm_arena_alloc(ar, ((size_t)m + 1) * sizeof *ef), *et = pm_arena_alloc(ar, ((size_t)m + 1) * sizeof *et);
    if (!ef || !et) return PM_ERR_NOMEM;
    for (uint32_t e = 0; e < m; e++) {
        ef[e] = pm__key(from + 2 * (size_t)e);
        et[e] = pm__key(to + 2 * (size_t)e);
    }
    return pm__boundary_loop(ar, ef, et, m);
}

/* pm__simple over a sparse grid: (cell, edge) entries sorted by cell (a
 * stable radix sort of cell << 32 | edge), so only occupied cells cost
 * anything and cells can be as small as the edges of a long thin loop
 * (a road's outline), whose dense grid would be mostly empty. */
static int pm__simple_sparse(pm_arena *ar, const pm__seg *s, uint32_t m) {
    double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL}, ext = 0;
    for (uint32_t e = 0; e < m; e++) {   /* (finite floats: no fmin / fmax calls) */
        for (int c = 0; c < 2; c++) {
            lo[c] = s[e].lo[c] < lo[c] ? s[e].lo[c] : lo[c];
            hi[c] = s[e].hi[c] > hi[c] ? s[e].hi[c] : hi[c];
        }
        double dx = (double)s[e].hi[0] - s[e].lo[0], dz = (double)s[e].hi[1] - s[e].lo[1];
        ext += dx > dz ? dx : dz;
    }
    double w = fmax(hi[0] - lo[0], 1e-9), h = fmax(hi[1] - lo[1], 1e-9);
    /* Cells about twice the mean edge; at most 32768 a side, so a cell
     * index fits 30 bits. */
    double cell = fmax(2.0 * ext / m, fmax(w, h) / 32768.0), inv = 1.0 / cell;
    uint32_t nx = (uint32_t)fmin(floor(w / cell) + 1, 32768), nz = (uint32_t)fmin(floor(h / cell) + 1, 32768);
    uint32_t(*box)[4] = pm_arena_alloc(ar, (size_t)m * sizeof *box);
    if (!box) return PM_ERR_NOMEM;
    size_t total = 0;
    for (uint32_t e = 0; e < m; e++) {
        uint32_t *c = box[e];
        pm__edge_cells(s, e, lo, inv, nx, nz, c);
        total += (size_t)(c[1] - c[0] + 1) * (c[3] - c[2] + 1);
    }
    if (total > 64 * (size_t)m) return pm__simple(ar, s, m);   /* not a thin loop */
    uint64_t *ent = pm_arena_alloc(ar, total * sizeof *ent), *tmp = pm_arena_alloc(ar, total * sizeof *tmp);
    uint32_t *cnt = pm_arena_alloc(ar, 2048 * sizeof *cnt);
    if (!ent || !tmp || !cnt) return PM_ERR_NOMEM;
    size_t k = 0;
    for (uint32_t e = 0; e < m; e++) {
        const uint32_t *c = box[e];
        for (uint32_t z = c[2]; z <= c[3]; z++)
            for (uint32_t x = c[0]; x <= c[1]; x++) ent[k++] = ((uint64_t)z * nx + x) << 32 | e;
    }
    uint64_t cells = (uint64_t)nx * nz;
    for (unsigned shift = 32; shift < 64 && (cells - 1) >> (shift - 32) != 0; shift += 11) {
        memset(cnt, 0, 2048 * sizeof *cnt);
        for (size_t i = 0; i < total; i++) cnt[(ent[i] >> shift) & 2047]++;
        uint32_t sum = 0;
        for (int d = 0; d < 2048; d++) {
            uint32_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < total; i++) tmp[cnt[(ent[i] >> shift) & 2047]++] = ent[i];
        uint64_t *t = ent;
        ent = tmp;
        tmp = t;
    }
    for (size_t a = 0; a < total;) {
        size_t b = a + 1;
        while (b < total && ent[b] >> 32 == ent[a] >> 32) b++;
        uint32_t key = (uint32_t)(ent[a] >> 32), x = key % nx, z = key / nx;
        for (size_t i = a; i < b; i++)
            for (size_t j = i + 1; j < b; j++)
                if (pm__crossing_in(s, (const uint32_t(*)[4])box, (uint32_t)ent[i], (uint32_t)ent[j], x, z))
                    return 0;
        a = b;
    }
    return 1;
}

/* p before q in the order of coordinate ax, then the other: a total order
 * of the plane (equal only for one point) that a segment's points keep
 * between its ends, so that it serves as a sweep direction. */
static inline bool pm__lex_lt(const float *p, const float *q, int ax) {
    return p[ax] < q[ax] || (p[ax] == q[ax] && p[1 - ax] < q[1 - ax]);
}

/* pm_loop_simple's 1, shown in linear time for a loop made of two chains
 * that both run from its least point to its greatest in the order of
 * pm__lex_lt (a road's outline is two such sides and its ends, along
 * either axis unless it turns through more than a right angle): 0 when
 * the loop is not of that kind or not shown simple (the caller sweeps).
 * Each chain strictly rising meets itself only at neighbours' shared
 * corners; merged in that order, every point of one chain strictly on
 * one side of the other's segment spanning it, and the other's points
 * strictly on the other side, keep the two apart between their shared
 * ends (seen in a frame sheared infinitesimally so that the order is of
 * x alone: two functions whose difference keeps one sign at every point
 * of either and is linear between). Exact: float comparisons and
 * pm_orient2d_fast's exact signs. */
static int pm__loop_monotone(const float *xz, uint32_t m, int ax) {
    uint32_t lo = 0, hi = 0;
    for (uint32_t k = 1; k < m; k++) {
        if (pm__lex_lt(xz + 2 * k, xz + 2 * lo, ax)) lo = k;
        if (pm__lex_lt(xz + 2 * hi, xz + 2 * k, ax)) hi = k;
    }
    if (lo == hi) return 0;
    /* Chain u forwards from lo to hi, chain l backwards: each rising. */
    for (uint32_t c = lo, n; c != hi; c = n) {
        n = c + 1 < m ? c + 1 : 0;
        if (!pm__lex_lt(xz + 2 * c, xz + 2 * n, ax)) return 0;
    }
    for (uint32_t c = lo, n; c != hi; c = n) {
        n = c ? c - 1 : m - 1;
        if (!pm__lex_lt(xz + 2 * c, xz + 2 * n, ax)) return 0;
    }
    /* Merged: u's point before l's next tested against l's segment
     * (lp, li), or l's against u's (up, ui). */
    uint32_t up = lo, ui = lo + 1 < m ? lo + 1 : 0, lp = lo, li = lo ? lo - 1 : m - 1;
    double s = 0;
    while (ui != hi || li != hi) {
        const float *pu = xz + 2 * ui, *pl = xz + 2 * li;
        double P[2], Q0[2], Q1[2], side;
        if (ui != hi && pm__lex_lt(pu, pl, ax)) {
            P[0] = pu[0], P[1] = pu[1], Q0[0] = xz[2 * lp], Q0[1] = xz[2 * lp + 1], Q1[0] = pl[0], Q1[1] = pl[1];
            side = 1;
            up = ui;
            ui = ui + 1 < m ? ui + 1 : 0;
        } else if (li != hi && pm__lex_lt(pl, pu, ax)) {
            P[0] = pl[0], P[1] = pl[1], Q0[0] = xz[2 * up], Q0[1] = xz[2 * up + 1], Q1[0] = pu[0], Q1[1] = pu[1];
            side = -1;
            lp = li;
            li = li ? li - 1 : m - 1;
        } else
            return 0;   /* the same point on both chains */
        double o = pm_orient2d_fast(Q0, Q1, P) * side;
        if (s == 0) s = o > 0 ? 1 : -1;
        if (!(o * s > 0)) return 0;
    }
    return 1;
}

int pm__loop_simple_path(pm_arena *ar, const float *xz, uint32_t m, int path) {
    if (m < 3) return 0;
    if (path != 0 && (pm__loop_monotone(xz, m, 0) || pm__loop_monotone(xz, m, 1))) return 1;
    if (path == 2) return 0;
    pm__seg *s = pm_arena_alloc(ar, (size_t)m * sizeof *s);
    if (!s) return PM_ERR_NOMEM;
    for (uint32_t e = 0; e < m; e++) {
        const float *a = xz + 2 * e, *b = xz + 2 * (e + 1 < m ? e + 1 : 0);
        if (a[0] == b[0] && a[1] == b[1]) return 0;
        pm__seg *g = &s[e];
        for (int c = 0; c < 2; c++) {
            g->a[c] = a[c];
            g->b[c] = b[c];
            g->lo[c] = a[c] < b[c] ? a[c] : b[c];
            g->hi[c] = a[c] < b[c] ? b[c] : a[c];
        }
        g->next = e + 1 < m ? e + 1 : 0;
    }
    return pm__simple_sparse(ar, s, m);
}

int pm_loop_simple(pm_arena *ar, const float *xz, uint32_t m) { return pm__loop_simple_path(ar, xz, m, 1); }

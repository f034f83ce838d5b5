#include "geom/delaunay.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "geom/predicates.h"
#include "scene/result.h"

#define PM__NONE UINT32_MAX

typedef struct pm__dt {
    pm_arena *arena;
    const double *pts;
    uint32_t n;
    uint32_t *tri;
    int32_t *he;
    uint32_t ntri_edges;         /* 3 * triangles so far */
    uint32_t *hull_next, *hull_prev, *hull_tri;  /* per point; hull_next NONE = not on hull */
    uint32_t hull_start;
    uint32_t *hash;
    uint32_t hash_size;
    double hc[2];                /* hash centre: inside the hull from the start */
    uint32_t *stack;
    size_t stack_len, stack_cap;
    uint32_t *dups;
    uint32_t ndups;
    uint32_t last_edge;          /* where the next point-location walk starts */
} pm__dt;

static const double *pm__pt(const pm__dt *d, uint32_t i) { return d->pts + 2 * (size_t)i; }

/* A monotone stand-in for the angle of (dx, dy), in [0, 1), without libm. */
static double pm__pseudo_angle(double dx, double dy) {
    double s = fabs(dx) + fabs(dy);
    if (s == 0) return 0;
    double p = dx / s;
    return (dy > 0 ? 3.0 - p : 1.0 + p) / 4.0;
}

static uint32_t pm__hash_key(const pm__dt *d, const double *p) {
    double a = pm__pseudo_angle(p[0] - d->hc[0], p[1] - d->hc[1]);
    uint32_t k = (uint32_t)floor(a * d->hash_size);
    return k < d->hash_size ? k : d->hash_size - 1;
}

static void pm__link(pm__dt *d, uint32_t e, int32_t o) {
    d->he[e] = o;
    if (o >= 0) d->he[o] = (int32_t)e;
}

/* Appends triangle (i0, i1, i2) and links its half-edges to a, b, c (-1 for
 * none). Returns its first half-edge. */
static uint32_t pm__add_tri(pm__dt *d, uint32_t i0, uint32_t i1, uint32_t i2, int32_t a,
                            int32_t b, int32_t c) {
    uint32_t t = d->ntri_edges;
    d->tri[t] = i0;
    d->tri[t + 1] = i1;
    d->tri[t + 2] = i2;
    pm__link(d, t, a);
    pm__link(d, t + 1, b);
    pm__link(d, t + 2, c);
    d->ntri_edges += 3;
    return t;
}

static int pm__push(pm__dt *d, uint32_t e) {
    if (d->stack_len == d->stack_cap) {
        size_t cap = d->stack_cap ? d->stack_cap * 2 : 256;
        uint32_t *s = pm_arena_realloc(d->arena, d->stack, d->stack_cap * sizeof *s, cap * sizeof *s);
        if (!s) return -1;
        d->stack = s;
        d->stack_cap = cap;
    }
    d->stack[d->stack_len++] = e;
    return 0;
}

/* Restores the Delaunay property after a point p0 was joined: each stacked
 * half-edge lies opposite p0 in its triangle. An edge flips only when the far
 * point is strictly inside the circumcircle, so cocircular sets terminate. */
static int pm__legalize(pm__dt *d, uint32_t start) {
    if (pm__push(d, start) < 0) return -1;
    while (d->stack_len) {
        uint32_t a = d->stack[--d->stack_len];
        int32_t bs = d->he[a];
        if (bs < 0) continue;
        uint32_t b = (uint32_t)bs;
        uint32_t al = pm_delaunay_next(a), ar = pm_delaunay_prev(a);
        uint32_t br = pm_delaunay_next(b), bl = pm_delaunay_prev(b);
        uint32_t p0 = d->tri[ar], pr = d->tri[a], pl = d->tri[al], p1 = d->tri[bl];
        if (pm_incircle_fast(pm__pt(d, p0), pm__pt(d, pr), pm__pt(d, pl), pm__pt(d, p1)) <= 0)
            continue;
        /* (pr, pl, p0) + (pl, pr, p1) become (p1, pl, p0) + (p0, pr, p1). */
        d->tri[a] = p1;
        d->tri[b] = p0;
        int32_t hbl = d->he[bl], har = d->he[ar];
        if (hbl < 0) d->hull_tri[p1] = a;  /* hull edge p1->pl now lives in slot a */
        if (har < 0) d->hull_tri[p0] = b;  /* hull edge p0->pr now lives in slot b */
        pm__link(d, a, hbl);
        pm__link(d, b, har);
        pm__link(d, ar, (int32_t)bl);
        if (pm__push(d, br) < 0 || pm__push(d, a) < 0) return -1;
    }
    return 0;
}

static void pm__hash_put(pm__dt *d, uint32_t i) { d->hash[pm__hash_key(d, pm__pt(d, i))] = i; }

/* Strictly outside the CCW hull edge a->b. */
static bool pm__visible(const pm__dt *d, uint32_t i, uint32_t a, uint32_t b) {
    return pm_orient2d_fast(pm__pt(d, a), pm__pt(d, b), pm__pt(d, i)) < 0;
}

/* A hull vertex whose outgoing edge sees point i, or NONE when i lies inside
 * or on the hull. */
static uint32_t pm__find_visible(const pm__dt *d, uint32_t i) {
    uint32_t key = pm__hash_key(d, pm__pt(d, i)), start = PM__NONE;
    for (uint32_t j = 0; j < d->hash_size; j++) {
        uint32_t s = d->hash[(key + j) % d->hash_size];
        if (s != PM__NONE && d->hull_next[s] != PM__NONE) {
            start = s;
            break;
        }
    }
    if (start == PM__NONE) start = d->hull_start;
    start = d->hull_prev[start];
    uint32_t e = start;
    while (!pm__visible(d, i, e, d->hull_next[e])) {
        e = d->hull_next[e];
        if (e == start) return PM__NONE;
    }
    return e;
}

/* Joins point i, outside the hull, to every hull edge it sees. */
static int pm__add_outside(pm__dt *d, uint32_t i, uint32_t e) {
    uint32_t nx = d->hull_next[e];
    uint32_t t = pm__add_tri(d, e, i, nx, -1, -1, (int32_t)d->hull_tri[e]);
    d->hull_tri[e] = t;
    d->hull_tri[i] = t + 1;
    if (pm__legalize(d, t + 2) < 0) return -1;
    d->last_edge = t;

    uint32_t n = nx, q;
    while (q = d->hull_next[n], pm__visible(d, i, n, q)) {
        t = pm__add_tri(d, n, i, q, (int32_t)d->hull_tri[i], -1, (int32_t)d->hull_tri[n]);
        d->hull_tri[i] = t + 1;
        d->hull_next[n] = PM__NONE;  /* n left the hull */
        n = q;
        if (pm__legalize(d, t + 2) < 0) return -1;
    }
    uint32_t b = e;
    while (q = d->hull_prev[b], pm__visible(d, i, q, b)) {
        t = pm__add_tri(d, q, i, b, -1, (int32_t)d->hull_tri[b], (int32_t)d->hull_tri[q]);
        d->hull_tri[q] = t;
        d->hull_next[b] = PM__NONE;
        b = q;
        if (pm__legalize(d, t + 2) < 0) return -1;
    }
    d->hull_start = b;
    d->hull_prev[i] = b;
    d->hull_next[b] = i;
    d->hull_prev[n] = i;
    d->hull_next[i] = n;
    pm__hash_put(d, i);
    pm__hash_put(d, b);
    return 0;
}

/* Walks from the last triangle towards point i (inside or on the hull) and
 * returns a half-edge of the triangle that holds it. Visibility walks end on
 * Delaunay triangulations; the step cap only guards against a broken
 * invariant, after which every triangle is tried. */
static uint32_t pm__locate(const pm__dt *d, uint32_t i) {
    const double *p = pm__pt(d, i);
    uint32_t e = d->last_edge - d->last_edge % 3;
    uint64_t cap = 4ull * d->ntri_edges + 16;
    for (uint64_t step = 0; step < cap; step++) {
        uint32_t t = e - e % 3, moved = 0, outside = 0;
        for (uint32_t k = 0; k < 3; k++) {
            uint32_t x = t + (e % 3 + k) % 3;
            if (pm_orient2d_fast(pm__pt(d, d->tri[x]), pm__pt(d, d->tri[pm_delaunay_next(x)]), p) >= 0)
                continue;
            if (d->he[x] < 0) {
                outside = 1;
                continue;
            }
            e = pm_delaunay_next((uint32_t)d->he[x]);
            moved = 1;
            break;
        }
        if (!moved && !outside) return t;
        if (!moved) break;
    }
    for (uint32_t t = 0; t < d->ntri_edges; t += 3) {
        bool in = true;
        for (uint32_t k = 0; k < 3 && in; k++)
            in = pm_orient2d_fast(pm__pt(d, d->tri[t + k]), pm__pt(d, d->tri[pm_delaunay_next(t + k)]), p) >= 0;
        if (in) return t;
    }
    return PM__NONE;
}

static bool pm__same(const pm__dt *d, uint32_t i, uint32_t j) {
    const double *a = pm__pt(d, i), *b = pm__pt(d, j);
    return a[0] == b[0] && a[1] == b[1];
}

static void pm__note_dup(pm__dt *d, uint32_t i, uint32_t kept) {
    d->dups[2 * d->ndups] = i;
    d->dups[2 * d->ndups + 1] = kept;
    d->ndups++;
}

/* Splits triangle t (first half-edge) at interior point i into three. */
static int pm__split_tri(pm__dt *d, uint32_t t, uint32_t i) {
    uint32_t a = d->tri[t], b = d->tri[t + 1], c = d->tri[t + 2];
    int32_t ob = d->he[t + 1], oc = d->he[t + 2];
    d->tri[t + 2] = i;  /* t becomes (a, b, i) */
    d->tri[t + 1] = b;
    uint32_t s = pm__add_tri(d, b, c, i, ob, -1, (int32_t)(t + 1));
    uint32_t u = pm__add_tri(d, c, a, i, oc, (int32_t)(t + 2), (int32_t)(s + 1));
    if (ob < 0) d->hull_tri[b] = s;
    if (oc < 0) d->hull_tri[c] = u;
    d->last_edge = t;
    if (pm__legalize(d, t) < 0 || pm__legalize(d, s) < 0 || pm__legalize(d, u) < 0) return -1;
    return 0;
}

/* Splits at point i lying inside edge e = (a -> b) of triangle (a, b, c). */
static int pm__split_edge(pm__dt *d, uint32_t e, uint32_t i) {
    uint32_t en = pm_delaunay_next(e), ep = pm_delaunay_prev(e);
    uint32_t a = d->tri[e], b = d->tri[en], c = d->tri[ep];
    int32_t o1 = d->he[en], fs = d->he[e];
    d->tri[en] = i;  /* e's triangle becomes (a, i, c) */
    uint32_t v = pm__add_tri(d, i, b, c, -1, o1, (int32_t)en);
    if (o1 < 0) d->hull_tri[b] = v + 1;
    d->last_edge = e;
    if (fs < 0) {
        /* A hull edge: i joins the hull between a and b. */
        d->hull_tri[a] = e;
        d->hull_tri[i] = v;
        d->hull_next[a] = i;
        d->hull_prev[i] = a;
        d->hull_next[i] = b;
        d->hull_prev[b] = i;
        pm__hash_put(d, i);
        return pm__legalize(d, ep) < 0 || pm__legalize(d, v + 1) < 0 ? -1 : 0;
    }
    uint32_t f = (uint32_t)fs, fn = pm_delaunay_next(f), fp = pm_delaunay_prev(f);
    uint32_t dd = d->tri[fp];
    int32_t o3 = d->he[fn];
    d->tri[fn] = i;  /* f's triangle (b, a, dd) becomes (b, i, dd) */
    uint32_t w = pm__add_tri(d, i, a, dd, (int32_t)e, o3, (int32_t)fn);
    if (o3 < 0) d->hull_tri[a] = w + 1;
    pm__link(d, f, (int32_t)v);
    if (pm__legalize(d, ep) < 0 || pm__legalize(d, v + 1) < 0 || pm__legalize(d, fp) < 0 ||
        pm__legalize(d, w + 1) < 0)
        return -1;
    return 0;
}

/* The slow path for a point the sweep cannot see from outside the hull.
 * Returns 0 when inserted, 1 for a duplicate, -1 when out of memory. */
static int pm__add_inside(pm__dt *d, uint32_t i) {
    uint32_t t = pm__locate(d, i);
    assert(t != PM__NONE);
    if (t == PM__NONE) return -1;
    const double *p = pm__pt(d, i);
    uint32_t zero = PM__NONE, nzero = 0;
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t x = t + k;
        if (pm__same(d, i, d->tri[x])) {
            pm__note_dup(d, i, d->tri[x]);
            return 1;
        }
        if (pm_orient2d_fast(pm__pt(d, d->tri[x]), pm__pt(d, d->tri[pm_delaunay_next(x)]), p) == 0) {
            zero = x;
            nzero++;
        }
    }
    assert(nzero <= 1);
    return nzero ? pm__split_edge(d, zero, i) : pm__split_tri(d, t, i);
}

static int pm__insert(pm__dt *d, uint32_t i) {
    uint32_t e = pm__find_visible(d, i);
    return e != PM__NONE ? pm__add_outside(d, i, e) : pm__add_inside(d, i);
}

/* Sorts ids by key ascending, ties by position (stable LSD radix, 3 x 11 bits). */
static int pm__radix_sort(pm_arena *a, const uint32_t *key, uint32_t *ids, uint32_t n) {
    uint32_t *tmp = pm_arena_alloc(a, (size_t)n * sizeof *tmp);
    uint32_t *cnt = pm_arena_calloc(a, 3 * 2048, sizeof *cnt);
    if (!tmp || !cnt) return -1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = key[ids[i]];
        cnt[k & 2047]++;
        cnt[2048 + ((k >> 11) & 2047)]++;
        cnt[4096 + (k >> 22)]++;
    }
    uint32_t *src = ids, *dst = tmp;
    for (int pass = 0; pass < 3; pass++) {
        uint32_t *c = cnt + 2048 * pass, sum = 0;
        bool trivial = false;  /* every key has the same digit: nothing moves */
        for (int b = 0; b < 2048; b++) {
            uint32_t v = c[b];
            trivial |= v == n;
            c[b] = sum;
            sum += v;
        }
        if (trivial) continue;
        int shift = 11 * pass;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t id = src[i];
            dst[c[(key[id] >> shift) & 2047]++] = id;
        }
        uint32_t *sw = src;
        src = dst;
        dst = sw;
    }
    if (src != ids) memcpy(ids, src, (size_t)n * sizeof *ids);
    return 0;
}

static double pm__dist2(const double *a, const double *b) {
    double dx = a[0] - b[0], dy = a[1] - b[1];
    return dx * dx + dy * dy;
}

/* Squared circumradius of (a, b, c); +inf when degenerate in floating point. */
static double pm__circumradius2(const double *a, const double *b, const double *c) {
    double dx = b[0] - a[0], dy = b[1] - a[1], ex = c[0] - a[0], ey = c[1] - a[1];
    double bl = dx * dx + dy * dy, cl = ex * ex + ey * ey, det = dx * ey - dy * ex;
    if (det == 0) return INFINITY;
    double x = (ey * bl - dy * cl) * 0.5 / det, y = (dx * cl - ex * bl) * 0.5 / det;
    double r = x * x + y * y;
    return isfinite(r) ? r : INFINITY;
}

static void pm__circumcentre(const double *a, const double *b, const double *c, double out[2]) {
    double dx = b[0] - a[0], dy = b[1] - a[1], ex = c[0] - a[0], ey = c[1] - a[1];
    double bl = dx * dx + dy * dy, cl = ex * ex + ey * ey, det = dx * ey - dy * ex;
    out[0] = a[0] + (ey * bl - dy * cl) * 0.5 / det;
    out[1] = a[1] + (dx * cl - ex * bl) * 0.5 / det;
    if (!isfinite(out[0]) || !isfinite(out[1])) {
        out[0] = (a[0] + b[0] + c[0]) / 3.0;
        out[1] = (a[1] + b[1] + c[1]) / 3.0;
    }
}

/* delaunator's seed: the point nearest the bounding-box centre, its nearest
 * neighbour, and the third point giving the smallest circumcircle. Returns
 * false when every point lies on one line (exactly). */
static bool pm__seed(const pm__dt *d, uint32_t s[3]) {
    const double *p = d->pts;
    double lo[2] = {p[0], p[1]}, hi[2] = {p[0], p[1]};
    for (uint32_t i = 1; i < d->n; i++)
        for (int k = 0; k < 2; k++) {
            if (p[2 * i + k] < lo[k]) lo[k] = p[2 * i + k];
            if (p[2 * i + k] > hi[k]) hi[k] = p[2 * i + k];
        }
    double c[2] = {(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2}, best = INFINITY;
    uint32_t i0 = 0, i1 = PM__NONE, i2 = PM__NONE;
    for (uint32_t i = 0; i < d->n; i++) {
        double dd = pm__dist2(c, pm__pt(d, i));
        if (dd < best) best = dd, i0 = i;
    }
    best = INFINITY;
    for (uint32_t i = 0; i < d->n; i++) {
        double dd = pm__dist2(pm__pt(d, i0), pm__pt(d, i));
        if (!pm__same(d, i, i0) && dd < best) best = dd, i1 = i;
    }
    if (i1 == PM__NONE) return false;
    best = INFINITY;
    uint32_t any = PM__NONE;
    for (uint32_t i = 0; i < d->n; i++) {
        if (pm_orient2d_fast(pm__pt(d, i0), pm__pt(d, i1), pm__pt(d, i)) == 0) continue;
        if (any == PM__NONE) any = i;
        double r = pm__circumradius2(pm__pt(d, i0), pm__pt(d, i1), pm__pt(d, i));
        if (r < best) best = r, i2 = i;
    }
    if (i2 == PM__NONE) i2 = any;
    if (i2 == PM__NONE) return false;
    s[0] = i0, s[1] = i1, s[2] = i2;
    return true;
}

/* The first three points of order that are not collinear, moved to the
 * front of order; false when there are none. */
static bool pm__seed_ordered(const pm__dt *d, uint32_t *order, uint32_t s[3]) {
    uint32_t j1 = PM__NONE;
    for (uint32_t j = 1; j < d->n && j1 == PM__NONE; j++)
        if (!pm__same(d, order[0], order[j])) j1 = j;
    if (j1 == PM__NONE) return false;
    for (uint32_t j = j1 + 1; j < d->n; j++) {
        if (pm_orient2d_fast(pm__pt(d, order[0]), pm__pt(d, order[j1]), pm__pt(d, order[j])) == 0)
            continue;
        s[0] = order[0], s[1] = order[j1], s[2] = order[j];
        return true;
    }
    return false;
}

/* Lexicographic (x, then y, then index) order: along a line it is the line
 * order, and it is total, so the result is deterministic. */
static bool pm__lex_less(const pm__dt *d, uint32_t i, uint32_t j) {
    const double *a = pm__pt(d, i), *b = pm__pt(d, j);
    if (a[0] != b[0]) return a[0] < b[0];
    if (a[1] != b[1]) return a[1] < b[1];
    return i < j;
}

/* Bottom-up merge sort of ids in lexicographic point order. */
static int pm__lex_sort(pm__dt *d, uint32_t *ids, uint32_t n) {
    uint32_t *tmp = pm_arena_alloc(d->arena, (size_t)(n ? n : 1) * sizeof *tmp);
    if (!tmp) return -1;
    uint32_t *src = ids, *dst = tmp;
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = mid + w < n ? mid + w : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) dst[k++] = pm__lex_less(d, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        uint32_t *sw = src;
        src = dst;
        dst = sw;
        if (w > UINT32_MAX / 2) break;
    }
    if (src != ids) memcpy(ids, src, (size_t)n * sizeof *ids);
    return 0;
}

/* All points on one line: the hull is the distinct points in line order. */
static int pm__collinear(pm__dt *d, pm_delaunay *out) {
    uint32_t n = d->n;
    uint32_t *ids = pm_arena_alloc(d->arena, (size_t)(n ? n : 1) * sizeof *ids);
    if (!ids) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) ids[i] = i;
    if (pm__lex_sort(d, ids, n) < 0) return PM_ERR_NOMEM;
    uint32_t h = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (h && pm__same(d, ids[i], ids[h - 1])) pm__note_dup(d, ids[i], ids[h - 1]);
        else ids[h++] = ids[i];
    }
    out->hull = ids;
    out->nhull = h;
    out->collinear = true;
    return PM_OK;
}

static int pm__init(pm__dt *d, pm_arena *a, const double *pts, uint32_t n) {
    memset(d, 0, sizeof *d);
    d->arena = a;
    d->pts = pts;
    d->n = n;
    size_t cap = n >= 3 ? 3 * (2 * (size_t)n - 5) : 3;
    d->tri = pm_arena_alloc(a, cap * sizeof *d->tri);
    d->he = pm_arena_alloc(a, cap * sizeof *d->he);
    d->dups = pm_arena_alloc(a, 2 * (size_t)(n ? n : 1) * sizeof *d->dups);
    d->hull_next = pm_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *d->hull_next);
    d->hull_prev = pm_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *d->hull_prev);
    d->hull_tri = pm_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *d->hull_tri);
    d->hash_size = (uint32_t)ceil(sqrt((double)n));
    if (d->hash_size == 0) d->hash_size = 1;
    d->hash = pm_arena_alloc(a, d->hash_size * sizeof *d->hash);
    if (!d->tri || !d->he || !d->dups || !d->hull_next || !d->hull_prev || !d->hull_tri || !d->hash)
        return PM_ERR_NOMEM;
    memset(d->hull_next, 0xff, (size_t)n * sizeof *d->hull_next);
    memset(d->hash, 0xff, d->hash_size * sizeof *d->hash);
    return PM_OK;
}

/* Starts the hull with the CCW seed triangle. */
static void pm__start(pm__dt *d, uint32_t s[3]) {
    if (pm_orient2d_fast(pm__pt(d, s[0]), pm__pt(d, s[1]), pm__pt(d, s[2])) < 0) {
        uint32_t t = s[1];
        s[1] = s[2];
        s[2] = t;
    }
    for (int k = 0; k < 3; k++) {
        d->hc[0] += pm__pt(d, s[k])[0] / 3.0;
        d->hc[1] += pm__pt(d, s[k])[1] / 3.0;
    }
    pm__add_tri(d, s[0], s[1], s[2], -1, -1, -1);
    for (int k = 0; k < 3; k++) {
        d->hull_next[s[k]] = s[(k + 1) % 3];
        d->hull_prev[s[k]] = s[(k + 2) % 3];
        d->hull_tri[s[k]] = (uint32_t)k;
        pm__hash_put(d, s[k]);
    }
    d->hull_start = s[0];
}

static int pm__finish(pm__dt *d, pm_delaunay *out) {
    uint32_t h = 0, e = d->hull_start;
    do {
        h++;
        e = d->hull_next[e];
    } while (e != d->hull_start);
    out->hull = pm_arena_alloc(d->arena, h * sizeof *out->hull);
    if (!out->hull) return PM_ERR_NOMEM;
    out->nhull = 0;
    do {
        out->hull[out->nhull++] = e;
        e = d->hull_next[e];
    } while (e != d->hull_start);
    out->triangles = d->tri;
    out->halfedges = d->he;
    out->ntriangles = d->ntri_edges / 3;
    return PM_OK;
}

static int pm__run(pm_arena *a, const double *pts, uint32_t n, const uint32_t *order_in,
                   pm_delaunay *out) {
    memset(out, 0, sizeof *out);
    out->npoints = n;
    if (n > PM_DELAUNAY_MAX_POINTS) return PM_ERR_LIMIT;
    pm__dt d;
    int r = pm__init(&d, a, pts, n);
    if (r < 0) return r;
    uint32_t *order = pm_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *order);
    if (!order) return PM_ERR_NOMEM;
    uint32_t s[3];
    bool ok;
    if (order_in) {
        memcpy(order, order_in, (size_t)n * sizeof *order);
        ok = n >= 3 && pm__seed_ordered(&d, order, s);
    } else {
        ok = n >= 3 && pm__seed(&d, s);
    }
    if (ok) {
        pm__start(&d, s);
        if (!order_in) {
            double c[2], maxd = 0;
            pm__circumcentre(pm__pt(&d, s[0]), pm__pt(&d, s[1]), pm__pt(&d, s[2]), c);
            double *dist = pm_arena_alloc(a, (size_t)n * sizeof *dist);
            uint32_t *key = pm_arena_alloc(a, (size_t)n * sizeof *key);
            if (!dist || !key) return PM_ERR_NOMEM;
            for (uint32_t i = 0; i < n; i++) {
                dist[i] = pm__dist2(c, pm__pt(&d, i));
                if (dist[i] > maxd) maxd = dist[i];
                order[i] = i;
            }
            /* A 32-bit quantized key: a mis-order only costs the slow path. */
            double scale = maxd > 0 && isfinite(4294967295.0 / maxd) ? 4294967295.0 / maxd : 0;
            for (uint32_t i = 0; i < n; i++) {
                double k = dist[i] * scale;
                key[i] = k >= 4294967295.0 ? UINT32_MAX : (uint32_t)k;
            }
            if (pm__radix_sort(a, key, order, n) < 0) return PM_ERR_NOMEM;
        }
        uint32_t prev = PM__NONE;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t i = order[k];
            if (i == s[0] || i == s[1] || i == s[2]) continue;
            if (prev != PM__NONE && pm__same(&d, i, prev)) {
                pm__note_dup(&d, i, prev);
                continue;
            }
            int ins = pm__insert(&d, i);
            if (ins < 0) return PM_ERR_NOMEM;
            if (ins == 0) prev = i;
        }
        r = pm__finish(&d, out);
    } else {
        r = pm__collinear(&d, out);
    }
    out->duplicates = d.dups;
    out->nduplicates = d.ndups;
    return r;
}

/* Spreads the low 16 bits of v to the even bit positions. */
static uint32_t pm__spread(uint32_t v) {
    v &= 0xffff;
    v = (v | (v << 8)) & 0x00ff00ffu;
    v = (v | (v << 4)) & 0x0f0f0f0fu;
    v = (v | (v << 2)) & 0x33333333u;
    v = (v | (v << 1)) & 0x55555555u;
    return v;
}

/* A copy of the points in Morton (Z-curve) order, and perm: new index -> old.
 * The sweep visits points by distance from the centre, but every flip and
 * hull step touches points near the new one; stored along a space-filling
 * curve, those sit in the same cache lines and pages. At a million points
 * this halves the time, which is otherwise spent waiting on memory. */
static int pm__spatial_order(pm_arena *a, const double *pts, uint32_t n, uint32_t **perm_out,
                             double **copy_out) {
    double lo[2] = {pts[0], pts[1]}, hi[2] = {pts[0], pts[1]};
    for (uint32_t i = 1; i < n; i++)
        for (int k = 0; k < 2; k++) {
            double v = pts[2 * (size_t)i + k];
            if (v < lo[k]) lo[k] = v;
            if (v > hi[k]) hi[k] = v;
        }
    double sc[2];
    for (int k = 0; k < 2; k++) {
        sc[k] = hi[k] > lo[k] ? 65535.0 / (hi[k] - lo[k]) : 0;
        if (!isfinite(sc[k])) sc[k] = 0;
    }
    uint32_t *key = pm_arena_alloc(a, (size_t)n * sizeof *key);
    uint32_t *perm = pm_arena_alloc(a, (size_t)n * sizeof *perm);
    double *copy = pm_arena_alloc(a, 2 * (size_t)n * sizeof *copy);
    if (!key || !perm || !copy) return -1;
    for (uint32_t i = 0; i < n; i++) {
        double x = (pts[2 * (size_t)i] - lo[0]) * sc[0], y = (pts[2 * (size_t)i + 1] - lo[1]) * sc[1];
        key[i] = pm__spread(x < 65535 ? (uint32_t)x : 65535) | pm__spread(y < 65535 ? (uint32_t)y : 65535) << 1;
        perm[i] = i;
    }
    if (pm__radix_sort(a, key, perm, n) < 0) return -1;
    for (uint32_t i = 0; i < n; i++) {
        copy[2 * (size_t)i] = pts[2 * (size_t)perm[i]];
        copy[2 * (size_t)i + 1] = pts[2 * (size_t)perm[i] + 1];
    }
    *perm_out = perm;
    *copy_out = copy;
    return 0;
}

/* Below this many points everything fits in cache anyway. */
#define PM__REORDER_MIN 32768

int pm_delaunay_build(pm_arena *a, const double *pts, uint32_t n, pm_delaunay *out) {
    if (n < PM__REORDER_MIN || n > PM_DELAUNAY_MAX_POINTS) return pm__run(a, pts, n, NULL, out);
    uint32_t *perm;
    double *copy;
    if (pm__spatial_order(a, pts, n, &perm, &copy) < 0) return PM_ERR_NOMEM;
    int r = pm__run(a, copy, n, NULL, out);
    if (r < 0) return r;
    for (size_t i = 0; i < 3 * (size_t)out->ntriangles; i++) out->triangles[i] = perm[out->triangles[i]];
    for (uint32_t i = 0; i < out->nhull; i++) out->hull[i] = perm[out->hull[i]];
    for (uint32_t i = 0; i < 2 * out->nduplicates; i++) out->duplicates[i] = perm[out->duplicates[i]];
    return r;
}

int pm_delaunay_build_ordered(pm_arena *a, const double *pts, uint32_t n,
                              const uint32_t *order, pm_delaunay *out) {
    return pm__run(a, pts, n, order, out);
}

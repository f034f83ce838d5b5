#include "pm/earclip.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "pm/predicates.h"
#include "pm/result.h"

/* Ear clipping in O(n log n + total ear-test work):
 *
 * 1. A sweep line (Shamos-Hoey) proves the polygon simple: no repeated
 *    point, no edge touching a non-adjacent edge, no overlapping adjacent
 *    edges. Everything below relies on simplicity; without it, exact
 *    predicates alone cannot prevent garbage.
 * 2. In a simple polygon a vertex inside (or on the boundary of) a
 *    candidate ear triangle implies a reflex or flat (180-degree) vertex
 *    there too, and the vertices closest to the tip are such. So only
 *    non-convex vertices go into a uniform grid, and clipping only ever
 *    turns non-convex vertices convex: the grid needs deletion flags only.
 * 3. Clipping tip v changes the ear status of its two neighbours and of no
 *    other vertex (v was convex, so it blocked nobody, and every blocked ear
 *    stays blocked by some remaining non-convex vertex). So a stack of ears
 *    with at most n + 2n pushes drives the loop: it cannot run forever. */

enum {
    PM__ALIVE = 1u,      /* still in the remaining polygon */
    PM__NONCONVEX = 2u,  /* reflex or flat: may block ears, lives in the grid */
    PM__EAR = 4u,        /* result of the last ear test, valid until a neighbour changes */
};

typedef struct pm__grid {
    double minx, miny, maxx, maxy, sx, sy;
    uint32_t gx, gy;
    uint32_t *start;   /* gx * gy + 1 offsets into items */
    uint32_t *items;   /* vertex indices, grouped by cell */
} pm__grid;

typedef struct pm__ec {
    const double *pts;
    uint32_t n;
    uint32_t *prev, *next;
    uint8_t *state;
    pm__grid grid;
    uint32_t *stack;
    uint32_t sp;
} pm__ec;

size_t pm_earclip_bound(size_t n) { return n >= 3 ? 3 * (n - 2) : 0; }

static const double *pm__pt(const double *pts, uint32_t i) { return pts + 2 * (size_t)i; }

static bool pm__lex_less(const double *a, const double *b) {
    return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

/* ---- simplicity: sort + sweep ------------------------------------------- */

/* Sorts idx[0..n) by lexicographic (x, y) with a bottom-up merge sort:
 * no recursion, no libc allocation, stable. tmp holds n entries. */
static void pm__sort_lex(const double *pts, uint32_t *idx, uint32_t *tmp, uint32_t n) {
    uint32_t *src = idx, *dst = tmp;
    for (uint32_t width = 1; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = lo + width < n ? lo + width : n;
            uint32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = pm__lex_less(pm__pt(pts, src[j]), pm__pt(pts, src[i])) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx) memcpy(idx, src, (size_t)n * sizeof *idx);
}

typedef struct pm__sweep {
    const double *pts;
    uint32_t n;
    uint32_t *status;  /* active edge ids, bottom to top at the sweep line */
    uint32_t count;
} pm__sweep;

/* Edge e joins vertex e and vertex e + 1 (mod n). */
static uint32_t pm__edge_a(const pm__sweep *s, uint32_t e) { (void)s; return e; }
static uint32_t pm__edge_b(const pm__sweep *s, uint32_t e) { return e + 1 == s->n ? 0 : e + 1; }

/* The lexicographically smaller (left) and larger (right) endpoint. */
static uint32_t pm__edge_left(const pm__sweep *s, uint32_t e) {
    uint32_t a = pm__edge_a(s, e), b = pm__edge_b(s, e);
    return pm__lex_less(pm__pt(s->pts, a), pm__pt(s->pts, b)) ? a : b;
}
static uint32_t pm__edge_right(const pm__sweep *s, uint32_t e) {
    uint32_t a = pm__edge_a(s, e), b = pm__edge_b(s, e);
    return pm__lex_less(pm__pt(s->pts, a), pm__pt(s->pts, b)) ? b : a;
}

/* Sign of point p against edge e directed left to right: > 0 above. */
static double pm__side(const pm__sweep *s, uint32_t e, const double *p) {
    return pm_orient2d(pm__pt(s->pts, pm__edge_left(s, e)), pm__pt(s->pts, pm__edge_right(s, e)), p);
}

/* Whether edges e and f (distinct) meet anywhere they should not: adjacent
 * edges may share only their common vertex, others nothing. */
static bool pm__edges_clash(const pm__sweep *s, uint32_t e, uint32_t f) {
    uint32_t ea = pm__edge_a(s, e), eb = pm__edge_b(s, e);
    uint32_t fa = pm__edge_a(s, f), fb = pm__edge_b(s, f);
    const double *P = s->pts;
    uint32_t shared = UINT32_MAX, eo = 0, fo = 0;
    if (eb == fa) shared = eb, eo = ea, fo = fb;
    else if (fb == ea) shared = ea, eo = eb, fo = fa;
    if (shared == UINT32_MAX)
        return pm_segments_intersect(pm__pt(P, ea), pm__pt(P, eb), pm__pt(P, fa), pm__pt(P, fb));
    if (ea == fb && eb == fa) return true; /* a 2-gon */
    /* Collinear and pointing the same way from the shared vertex: overlap. */
    const double *c = pm__pt(P, shared), *x = pm__pt(P, eo), *y = pm__pt(P, fo);
    return pm_orient2d(c, x, y) == 0.0 && pm__lex_less(c, x) == pm__lex_less(c, y);
}

/* Index of the first active edge that p is not strictly above. */
static uint32_t pm__status_lower_bound(const pm__sweep *s, const double *p) {
    uint32_t lo = 0, hi = s->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (pm__side(s, s->status[mid], p) > 0.0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static bool pm__check_pair(const pm__sweep *s, uint32_t i) {
    /* Status slots i - 1 and i, when both exist, must not clash. */
    if (i == 0 || i >= s->count) return true;
    return !pm__edges_clash(s, s->status[i - 1], s->status[i]);
}

/* Processes the sweep event at vertex v. Returns false on a clash. */
static bool pm__sweep_event(pm__sweep *s, uint32_t v) {
    const double *p = pm__pt(s->pts, v);
    uint32_t in_edge = v == 0 ? s->n - 1 : v - 1, out_edge = v;
    uint32_t k = pm__status_lower_bound(s, p), j = k;
    /* Active edges through p must be the ones ending here. */
    while (j < s->count && pm__side(s, s->status[j], p) == 0.0) {
        if (s->status[j] != in_edge && s->status[j] != out_edge) return false;
        j++;
    }
    uint32_t ending = (pm__edge_right(s, in_edge) == v) + (pm__edge_right(s, out_edge) == v);
    if (j - k != ending) return false;
    memmove(s->status + k, s->status + j, (size_t)(s->count - j) * sizeof *s->status);
    s->count -= j - k;
    uint32_t start[2], ns = 0;
    if (pm__edge_left(s, in_edge) == v) start[ns++] = in_edge;
    if (pm__edge_left(s, out_edge) == v) start[ns++] = out_edge;
    if (ns == 2) {
        double o = pm_orient2d(p, pm__pt(s->pts, pm__edge_right(s, start[0])),
                               pm__pt(s->pts, pm__edge_right(s, start[1])));
        if (o == 0.0) return false; /* overlapping spike */
        if (o < 0.0) {
            uint32_t t = start[0];
            start[0] = start[1];
            start[1] = t;
        }
    }
    memmove(s->status + k + ns, s->status + k, (size_t)(s->count - k) * sizeof *s->status);
    memcpy(s->status + k, start, ns * sizeof *start);
    s->count += ns;
    return pm__check_pair(s, k) && pm__check_pair(s, k + ns);
}

/* 1 when simple, 0 when not, PM_ERR_NOMEM. */
static int pm__is_simple(pm_arena *scratch, const double *pts, uint32_t n) {
    uint32_t *order = pm_arena_alloc(scratch, (size_t)n * sizeof *order);
    uint32_t *tmp = pm_arena_alloc(scratch, (size_t)n * sizeof *tmp);
    pm__sweep s = {pts, n, pm_arena_alloc(scratch, (size_t)n * sizeof(uint32_t)), 0};
    if (!order || !tmp || !s.status) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) order[i] = i;
    pm__sort_lex(pts, order, tmp, n);
    for (uint32_t i = 1; i < n; i++)
        if (!pm__lex_less(pm__pt(pts, order[i - 1]), pm__pt(pts, order[i]))) return 0;
    for (uint32_t i = 0; i < n; i++)
        if (!pm__sweep_event(&s, order[i])) return 0;
    return 1;
}

/* ---- grid of non-convex vertices ---------------------------------------- */

static uint32_t pm__cell(double v, double min, double scale, uint32_t g) {
    /* Monotone in v, so a bounding box maps to a cell range that covers
     * every point inside it, whatever the rounding. */
    double c = (v - min) * scale;
    if (!(c > 0.0)) return 0;
    return c >= (double)g ? g - 1 : (uint32_t)c;
}

static uint32_t pm__cell_of(const pm__grid *g, const double *p) {
    return pm__cell(p[1], g->miny, g->sy, g->gy) * g->gx + pm__cell(p[0], g->minx, g->sx, g->gx);
}

/* Chooses about one cell per two vertices, shaped like their bounding box. */
static void pm__grid_shape(pm__grid *g, uint32_t m) {
    double w = g->maxx - g->minx, h = g->maxy - g->miny;
    double cells = m / 2.0 + 1.0;
    double gx = 1.0, gy = 1.0;
    if (w > 0.0 && h > 0.0) {
        gx = ceil(sqrt(cells * w / h));
        gy = ceil(cells / gx);
    } else if (w > 0.0) {
        gx = ceil(cells);
    } else if (h > 0.0) {
        gy = ceil(cells);
    }
    g->gx = (uint32_t)fmin(gx, 4096.0);
    g->gy = (uint32_t)fmin(gy, 4096.0);
    g->sx = w > 0.0 ? g->gx / w : 0.0;
    g->sy = h > 0.0 ? g->gy / h : 0.0;
}

static int pm__grid_build(pm_arena *scratch, pm__ec *ec) {
    pm__grid *g = &ec->grid;
    uint32_t m = 0;
    g->minx = g->miny = INFINITY;
    g->maxx = g->maxy = -INFINITY;
    for (uint32_t i = 0; i < ec->n; i++) {
        if (!(ec->state[i] & PM__NONCONVEX)) continue;
        const double *p = pm__pt(ec->pts, i);
        g->minx = fmin(g->minx, p[0]), g->maxx = fmax(g->maxx, p[0]);
        g->miny = fmin(g->miny, p[1]), g->maxy = fmax(g->maxy, p[1]);
        m++;
    }
    if (m == 0) {
        g->gx = g->gy = 0;
        return 0;
    }
    pm__grid_shape(g, m);
    size_t cells = (size_t)g->gx * g->gy;
    g->start = pm_arena_calloc(scratch, cells + 1, sizeof *g->start);
    g->items = pm_arena_alloc(scratch, (size_t)m * sizeof *g->items);
    if (!g->start || !g->items) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < ec->n; i++)
        if (ec->state[i] & PM__NONCONVEX) g->start[pm__cell_of(g, pm__pt(ec->pts, i)) + 1]++;
    for (size_t c = 0; c < cells; c++) g->start[c + 1] += g->start[c];
    for (uint32_t i = 0; i < ec->n; i++) {
        if (!(ec->state[i] & PM__NONCONVEX)) continue;
        uint32_t c = pm__cell_of(g, pm__pt(ec->pts, i));
        g->items[g->start[c]++] = i;
    }
    /* The fill advanced each start to the next cell's start: shift back. */
    for (size_t c = cells; c > 0; c--) g->start[c] = g->start[c - 1];
    g->start[0] = 0;
    return 0;
}

/* ---- ears --------------------------------------------------------------- */

/* Whether non-convex vertex x lies in the closed triangle a b c (CCW). */
static bool pm__in_triangle(const double *a, const double *b, const double *c, const double *x) {
    return pm_orient2d(a, b, x) >= 0.0 && pm_orient2d(b, c, x) >= 0.0 &&
           pm_orient2d(c, a, x) >= 0.0;
}

/* Whether some non-convex vertex other than u, v, w blocks the ear u v w. */
static bool pm__ear_blocked(const pm__ec *ec, uint32_t u, uint32_t v, uint32_t w) {
    const pm__grid *g = &ec->grid;
    if (g->gx == 0) return false;
    const double *a = pm__pt(ec->pts, u), *b = pm__pt(ec->pts, v), *c = pm__pt(ec->pts, w);
    double x0 = fmin(a[0], fmin(b[0], c[0])), x1 = fmax(a[0], fmax(b[0], c[0]));
    double y0 = fmin(a[1], fmin(b[1], c[1])), y1 = fmax(a[1], fmax(b[1], c[1]));
    if (x1 < g->minx || x0 > g->maxx || y1 < g->miny || y0 > g->maxy) return false;
    uint32_t cx0 = pm__cell(x0, g->minx, g->sx, g->gx), cx1 = pm__cell(x1, g->minx, g->sx, g->gx);
    uint32_t cy0 = pm__cell(y0, g->miny, g->sy, g->gy), cy1 = pm__cell(y1, g->miny, g->sy, g->gy);
    for (uint32_t cy = cy0; cy <= cy1; cy++) {
        for (uint32_t cx = cx0; cx <= cx1; cx++) {
            uint32_t cell = cy * g->gx + cx;
            for (uint32_t k = g->start[cell]; k < g->start[cell + 1]; k++) {
                uint32_t x = g->items[k];
                /* v itself may still carry its old flag: it is being reclassified. */
                if (!(ec->state[x] & PM__NONCONVEX) || x == u || x == v || x == w) continue;
                const double *p = pm__pt(ec->pts, x);
                if (p[0] < x0 || p[0] > x1 || p[1] < y0 || p[1] > y1) continue;
                if (pm__in_triangle(a, b, c, p)) return true;
            }
        }
    }
    return false;
}

/* Re-evaluates convexity and ear status of v from its current neighbours. */
static void pm__classify(pm__ec *ec, uint32_t v) {
    uint32_t u = ec->prev[v], w = ec->next[v];
    double o = pm_orient2d(pm__pt(ec->pts, u), pm__pt(ec->pts, v), pm__pt(ec->pts, w));
    uint8_t st = ec->state[v] & PM__ALIVE;
    if (o <= 0.0) st |= PM__NONCONVEX;
    else if (!pm__ear_blocked(ec, u, v, w)) st |= PM__EAR;
    ec->state[v] = st;
    if (st & PM__EAR) ec->stack[ec->sp++] = v;
}

/* Clips ears until a triangle remains; writes n - 2 triangles. */
static long pm__clip_all(pm__ec *ec, uint32_t *out) {
    uint32_t left = ec->n;
    long tris = 0;
    while (left > 3) {
        if (ec->sp == 0) return PM_ERR_GEOMETRY; /* unreachable for simple input */
        uint32_t v = ec->stack[--ec->sp];
        if ((ec->state[v] & (PM__ALIVE | PM__EAR)) != (PM__ALIVE | PM__EAR)) continue;
        uint32_t u = ec->prev[v], w = ec->next[v];
        out[3 * tris] = u, out[3 * tris + 1] = v, out[3 * tris + 2] = w;
        tris++;
        ec->state[v] = 0;
        ec->next[u] = w, ec->prev[w] = u;
        left--;
        pm__classify(ec, u);
        pm__classify(ec, w);
    }
    uint32_t v = 0;
    while (!(ec->state[v] & PM__ALIVE)) v++;
    uint32_t u = ec->prev[v], w = ec->next[v];
    if (!(pm_orient2d(pm__pt(ec->pts, u), pm__pt(ec->pts, v), pm__pt(ec->pts, w)) > 0.0))
        return PM_ERR_GEOMETRY;
    out[3 * tris] = u, out[3 * tris + 1] = v, out[3 * tris + 2] = w;
    return tris + 1;
}

/* Whether a simple polygon runs counter-clockwise: its lexicographically
 * smallest vertex is strictly convex, so its turn decides. */
static bool pm__is_ccw(const double *pts, uint32_t n) {
    uint32_t m = 0;
    for (uint32_t i = 1; i < n; i++)
        if (pm__lex_less(pm__pt(pts, i), pm__pt(pts, m))) m = i;
    uint32_t u = m == 0 ? n - 1 : m - 1, w = m + 1 == n ? 0 : m + 1;
    return pm_orient2d(pm__pt(pts, u), pm__pt(pts, m), pm__pt(pts, w)) > 0.0;
}

static int pm__ec_init(pm_arena *scratch, pm__ec *ec, const double *pts, uint32_t n) {
    ec->pts = pts;
    ec->n = n;
    ec->prev = pm_arena_alloc(scratch, (size_t)n * sizeof *ec->prev);
    ec->next = pm_arena_alloc(scratch, (size_t)n * sizeof *ec->next);
    ec->state = pm_arena_alloc(scratch, (size_t)n);
    ec->stack = pm_arena_alloc(scratch, 3 * (size_t)n * sizeof *ec->stack);
    ec->sp = 0;
    if (!ec->prev || !ec->next || !ec->state || !ec->stack) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        ec->prev[i] = i == 0 ? n - 1 : i - 1;
        ec->next[i] = i + 1 == n ? 0 : i + 1;
        double o = pm_orient2d(pm__pt(pts, ec->prev[i]), pm__pt(pts, i), pm__pt(pts, ec->next[i]));
        ec->state[i] = PM__ALIVE | (o <= 0.0 ? PM__NONCONVEX : 0);
    }
    if (pm__grid_build(scratch, ec) < 0) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++)
        if (!(ec->state[i] & PM__NONCONVEX)) pm__classify(ec, i);
    return 0;
}

long pm_earclip(pm_arena *scratch, const double *pts, size_t n, uint32_t *out) {
    assert(scratch && (pts || n == 0) && (out || n < 3));
    if (n < 3) return PM_ERR_GEOMETRY;
    if (n > UINT32_MAX / 4) return PM_ERR_LIMIT;
    uint32_t nn = (uint32_t)n;
    int simple = pm__is_simple(scratch, pts, nn);
    if (simple < 0) return simple;
    if (!simple || !pm__is_ccw(pts, nn)) return PM_ERR_GEOMETRY;
    pm__ec ec;
    if (pm__ec_init(scratch, &ec, pts, nn) < 0) return PM_ERR_NOMEM;
    return pm__clip_all(&ec, out);
}

#include "pm/earclip.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "pm/predicates.h"
#include "pm/result.h"
#include "pm/rng.h"

/* Ear clipping in O(n log n + total ear-test work):
 *
 * 1. The polygon is proved simple: no repeated point, no edge touching a
 *    non-adjacent edge, no overlapping adjacent edges. A linear test
 *    accepts polygons that are star-shaped around their vertex centroid
 *    (convex ones, typical junction contours); any other polygon goes
 *    through a Shamos-Hoey sweep line. Everything below relies on
 *    simplicity: without it, exact predicates alone cannot prevent garbage.
 * 2. In a simple polygon a vertex inside (or on the boundary of) a
 *    candidate ear triangle implies a reflex or flat (180-degree) vertex
 *    there too, and the vertices closest to the tip are such. So only
 *    non-convex vertices go into a uniform grid, and clipping only ever
 *    turns non-convex vertices convex: the grid only loses entries.
 * 3. Clipping tip v changes the ear status of its two neighbours and of no
 *    other vertex (v was convex, so it blocked nobody, and every blocked ear
 *    stays blocked by some remaining non-convex vertex). So a queue of
 *    candidate ears, with at most n + 2 (n - 3) entries ever, drives the
 *    loop: it cannot run forever, and an empty queue proves an error. */

enum {
    PM__ALIVE = 1u,      /* still in the remaining polygon */
    PM__NONCONVEX = 2u,  /* reflex or flat: may block ears, lives in the grid */
    PM__EAR = 4u,        /* result of the last ear test, valid until a neighbour changes */
    PM__DIRTY = 8u,      /* convex, ear status unknown: test when dequeued */
};

/* A grid cell holds the live non-convex vertices in it, with their
 * coordinates inline for locality; a vertex that turns convex is swapped out
 * of its cell at once, so scans never wade through dead entries. */
typedef struct pm__item { double x, y; uint32_t v; } pm__item;

typedef struct pm__grid {
    double minx, miny, maxx, maxy, sx, sy;
    uint32_t gx, gy;
    uint32_t *start;   /* gx * gy offsets into items: first entry of each cell */
    uint32_t *end;     /* one past the last live entry of each cell */
    uint32_t *slot;    /* per vertex: its entry in items while it is live */
    pm__item *items;
    bool filled;       /* filled on the first ear test that needs it */
} pm__grid;

typedef struct pm__ec {
    const double *pts;
    uint32_t n;
    bool star;         /* star-shaped around c, vertices in angular order */
    double c[2];
    uint32_t *prev, *next;
    uint8_t *state;
    pm__grid grid;
    uint32_t *queue;   /* candidate ears, first in first out */
    uint32_t tail, head;
} pm__ec;

size_t pm_earclip_bound(size_t n) { return n >= 3 ? 3 * (n - 2) : 0; }

static const double *pm__pt(const double *pts, uint32_t i) { return pts + 2 * (size_t)i; }

/* fmin/fmax honour NaN rules and become libm calls; inputs here are finite. */
static inline double pm__min(double a, double b) { return a < b ? a : b; }
static inline double pm__max(double a, double b) { return a > b ? a : b; }

static bool pm__lex_less(const double *a, const double *b) {
    return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

/* ---- simplicity: sort + sweep ------------------------------------------- */

/* A sweep event: a vertex with its coordinates, in lexicographic order. */
typedef struct pm__event { double x, y; uint32_t v; } pm__event;

static bool pm__event_less(const pm__event *a, const pm__event *b) {
    return a->x < b->x || (a->x == b->x && a->y < b->y);
}

/* Bottom-up merge sort of ev[0..n): no recursion, no libc allocation.
 * tmp holds n entries. (An 8-pass radix sort on x measured no faster at
 * the sizes that matter.) */
static void pm__sort_events(pm__event *ev, pm__event *tmp, uint32_t n) {
    /* Insertion sort of runs of 8 first: three merge passes fewer. */
    for (uint32_t lo = 0; lo < n; lo += 8) {
        uint32_t hi = lo + 8 < n ? lo + 8 : n;
        for (uint32_t i = lo + 1; i < hi; i++) {
            pm__event e = ev[i];
            uint32_t j = i;
            for (; j > lo && pm__event_less(&e, &ev[j - 1]); j--) ev[j] = ev[j - 1];
            ev[j] = e;
        }
    }
    pm__event *src = ev, *dst = tmp;
    for (uint32_t width = 8; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = lo + width < n ? lo + width : n;
            uint32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = pm__event_less(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        pm__event *t = src;
        src = dst;
        dst = t;
    }
    if (src != ev) memcpy(ev, src, (size_t)n * sizeof *ev);
}

/* Edge e joins vertex e and vertex e + 1 (mod n); l is its lexicographically
 * smaller (left) endpoint, r the larger. */
typedef struct pm__seg { double l[2], r[2]; uint32_t li, ri; } pm__seg;

typedef struct pm__sweep {
    uint32_t n;
    const pm__seg *seg;
    uint32_t *status;  /* active edge ids, bottom to top at the sweep line */
    uint32_t count;
} pm__sweep;

/* Sign of point p against edge e directed left to right: > 0 above. */
static double pm__side(const pm__sweep *s, uint32_t e, const double *p) {
    return pm_orient2d_fast(s->seg[e].l, s->seg[e].r, p);
}

static int pm__sgn(double v) { return (v > 0.0) - (v < 0.0); }

/* Whether closed segments meet (pm_segments_intersect), with an exact
 * bounding-box rejection first: most pairs checked are far apart in y. */
static bool pm__segments_meet(const pm__seg *e, const pm__seg *f) {
    /* x ranges overlap already: both edges are active at the sweep line. */
    if (pm__max(e->l[1], e->r[1]) < pm__min(f->l[1], f->r[1]) ||
        pm__max(f->l[1], f->r[1]) < pm__min(e->l[1], e->r[1]))
        return false;
    int o1 = pm__sgn(pm_orient2d_fast(e->l, e->r, f->l)), o2 = pm__sgn(pm_orient2d_fast(e->l, e->r, f->r));
    if (o1 * o2 > 0) return false;
    int o3 = pm__sgn(pm_orient2d_fast(f->l, f->r, e->l)), o4 = pm__sgn(pm_orient2d_fast(f->l, f->r, e->r));
    /* Straddling or touching both ways means meeting; when all four are
     * zero the boxes, which overlap, decide for collinear segments. */
    return o3 * o4 <= 0;
}

/* Whether edges e and f (distinct) meet anywhere they should not: adjacent
 * edges may share only their common vertex, others nothing. */
static bool pm__edges_clash(const pm__sweep *s, uint32_t e, uint32_t f) {
    const pm__seg *se = &s->seg[e], *sf = &s->seg[f];
    const double *c, *x, *y;
    if (se->li == sf->li) c = se->l, x = se->r, y = sf->r;
    else if (se->ri == sf->ri) c = se->r, x = se->l, y = sf->l;
    else if (se->li == sf->ri) c = se->l, x = se->r, y = sf->l;
    else if (se->ri == sf->li) c = se->r, x = se->l, y = sf->r;
    else return pm__segments_meet(se, sf);
    if (se->li == sf->li && se->ri == sf->ri) return true; /* a 2-gon */
    /* Collinear and pointing the same way from the shared vertex: overlap. */
    return pm_orient2d_fast(c, x, y) == 0.0 &&
           (c[0] < x[0] || (c[0] == x[0] && c[1] < x[1])) ==
               (c[0] < y[0] || (c[0] == y[0] && c[1] < y[1]));
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

/* Processes the sweep event at vertex v (point p). False on a clash. */
static bool pm__sweep_event(pm__sweep *s, uint32_t v, const double *p) {
    uint32_t in_edge = v == 0 ? s->n - 1 : v - 1, out_edge = v;
    uint32_t ending = (s->seg[in_edge].ri == v) + (s->seg[out_edge].ri == v);
    uint32_t k = pm__status_lower_bound(s, p), j = k;
    uint32_t *st = s->status;
    /* Edges ending here contain p, so they sit at k; any other active edge
     * through p is a clash. */
    while (j < s->count && pm__side(s, st[j], p) == 0.0) {
        if (st[j] != in_edge && st[j] != out_edge) return false;
        j++;
    }
    if (j - k != ending) return false;
    if (ending == 1) {
        /* The common case: the chain passes through v, and the edge leaving
         * it takes over the slot of the edge arriving. */
        st[k] = s->seg[in_edge].li == v ? in_edge : out_edge;
        return pm__check_pair(s, k) && pm__check_pair(s, k + 1);
    }
    if (ending == 2) {
        memmove(st + k, st + k + 2, (size_t)(s->count - k - 2) * sizeof *st);
        s->count -= 2;
        return pm__check_pair(s, k);
    }
    /* Both edges start here: order them by their turn at p. */
    double o = pm_orient2d_fast(p, s->seg[in_edge].r, s->seg[out_edge].r);
    if (o == 0.0) return false; /* overlapping spike */
    memmove(st + k + 2, st + k, (size_t)(s->count - k) * sizeof *st);
    st[k] = o > 0.0 ? in_edge : out_edge;
    st[k + 1] = o > 0.0 ? out_edge : in_edge;
    s->count += 2;
    return pm__check_pair(s, k) && pm__check_pair(s, k + 2);
}

static pm__seg *pm__make_segs(pm_arena *scratch, const double *pts, uint32_t n) {
    pm__seg *seg = pm_arena_alloc(scratch, (size_t)n * sizeof *seg);
    if (!seg) return NULL;
    for (uint32_t e = 0; e < n; e++) {
        uint32_t a = e, b = e + 1 == n ? 0 : e + 1;
        if (pm__lex_less(pm__pt(pts, b), pm__pt(pts, a))) a = b, b = e;
        seg[e] = (pm__seg){{pts[2 * (size_t)a], pts[2 * (size_t)a + 1]},
                           {pts[2 * (size_t)b], pts[2 * (size_t)b + 1]}, a, b};
    }
    return seg;
}

/* Whether the polygon is star-shaped around point c with c strictly inside
 * every edge's left half-plane, which proves it simple: each edge then
 * spans its own open angular sector around c, turning counter-clockwise by
 * less than 180 degrees, and when the sectors wind around c exactly once
 * they tile the full turn, so no two non-adjacent edges can meet. The winding
 * number counts the crossings of the ray from c towards +x, each exact. */
static bool pm__star_around(const double *pts, uint32_t n, const double c[2]) {
    uint32_t crossings = 0;
    for (uint32_t i = 0; i < n; i++) {
        const double *a = pm__pt(pts, i), *b = pm__pt(pts, i + 1 == n ? 0 : i + 1);
        if (!(pm_orient2d_fast(c, a, b) > 0.0)) return false;
        crossings += a[1] < c[1] && b[1] >= c[1];
    }
    return crossings == 1;
}

/* ---- a kernel point for the star test ------------------------------------
 * Seidel's randomized incremental linear programming finds extreme points
 * of the kernel (the intersection of the edges' left half-planes) in
 * expected O(n). It runs in plain floating point: its answer is only a
 * candidate, which pm__star_around then checks exactly. */

/* Left-of-edge value of point c for edge i: >= 0 inside its half-plane. */
static double pm__edge_eval(const double *pts, uint32_t n, uint32_t i, const double c[2]) {
    const double *a = pm__pt(pts, i), *b = pm__pt(pts, i + 1 == n ? 0 : i + 1);
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

/* Maximizes d.p for p on the line of edge i, within box and the half-planes
 * of the edges order[0..k). False when that range is empty. */
static bool pm__lp_on_line(const double *pts, uint32_t n, const uint32_t *order, uint32_t k,
                           uint32_t i, const double box[4], const double d[2], double out[2]) {
    const double *a = pm__pt(pts, i), *b = pm__pt(pts, i + 1 == n ? 0 : i + 1);
    double dir[2] = {b[0] - a[0], b[1] - a[1]}, lo = -INFINITY, hi = INFINITY;
    for (int axis = 0; axis < 2; axis++) {
        if (dir[axis] == 0.0) continue;
        double t0 = (box[2 * axis] - a[axis]) / dir[axis], t1 = (box[2 * axis + 1] - a[axis]) / dir[axis];
        lo = pm__max(lo, pm__min(t0, t1)), hi = pm__min(hi, pm__max(t0, t1));
    }
    for (uint32_t j = 0; j < k && lo <= hi; j++) {
        uint32_t e = order[j];
        const double *p = pm__pt(pts, e), *q = pm__pt(pts, e + 1 == n ? 0 : e + 1);
        double alpha = pm__edge_eval(pts, n, e, a);
        double beta = (q[0] - p[0]) * dir[1] - (q[1] - p[1]) * dir[0];
        if (beta > 0.0) lo = pm__max(lo, -alpha / beta);
        else if (beta < 0.0) hi = pm__min(hi, -alpha / beta);
        else if (alpha < 0.0) return false;
    }
    if (!(lo <= hi)) return false;
    double t = d[0] * dir[0] + d[1] * dir[1] > 0.0 ? hi : lo;
    out[0] = a[0] + t * dir[0], out[1] = a[1] + t * dir[1];
    return true;
}

/* The kernel point maximizing d.p, or false when the kernel looks empty. */
static bool pm__kernel_extreme(const double *pts, uint32_t n, const uint32_t *order,
                               const double box[4], const double d[2], double out[2]) {
    out[0] = d[0] > 0.0 ? box[1] : box[0];
    out[1] = d[1] > 0.0 ? box[3] : box[2];
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        if (pm__edge_eval(pts, n, i, out) >= 0.0) continue;
        if (!pm__lp_on_line(pts, n, order, k, i, box, d, out)) return false;
    }
    return true;
}

/* A candidate point strictly inside the kernel: the mean of three extreme
 * points (generic directions, so the optima are unique vertices). False when
 * the kernel looks empty. */
static int pm__kernel_point(pm_arena *scratch, const double *pts, uint32_t n, double c[2]) {
    uint32_t *order = pm_arena_alloc(scratch, (size_t)n * sizeof *order);
    if (!order) return PM_ERR_NOMEM;
    double box[4] = {INFINITY, -INFINITY, INFINITY, -INFINITY};
    for (uint32_t i = 0; i < n; i++) {
        order[i] = i;
        box[0] = pm__min(box[0], pts[2 * (size_t)i]), box[1] = pm__max(box[1], pts[2 * (size_t)i]);
        box[2] = pm__min(box[2], pts[2 * (size_t)i + 1]), box[3] = pm__max(box[3], pts[2 * (size_t)i + 1]);
    }
    /* A fixed seed: the permutation only affects speed, never the result. */
    pm_rng r;
    pm_rng_seed(&r, 0x6b65726e656cull);
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = (uint32_t)pm_rng_below(&r, (uint64_t)i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    static const double dirs[3][2] = {{1.0, 0.0009765625}, {-1.0, 0.00048828125}, {0.0001220703125, -1.0}};
    double sum[2] = {0.0, 0.0}, p[2];
    for (int k = 0; k < 3; k++) {
        if (!pm__kernel_extreme(pts, n, order, box, dirs[k], p)) return 0;
        sum[0] += p[0], sum[1] += p[1];
    }
    c[0] = sum[0] / 3.0, c[1] = sum[1] / 3.0;
    return 1;
}

static void pm__vertex_centroid(const double *pts, uint32_t n, double c[2]) {
    c[0] = c[1] = 0.0;
    for (uint32_t i = 0; i < n; i++) c[0] += pts[2 * (size_t)i], c[1] += pts[2 * (size_t)i + 1];
    c[0] /= n, c[1] /= n;
}

/* Sweep-line proof of simplicity: 1 when simple, 0 when not, PM_ERR_NOMEM. */
static int pm__sweep_simple(pm_arena *scratch, const double *pts, uint32_t n) {
    pm__event *ev = pm_arena_alloc(scratch, (size_t)n * sizeof *ev);
    pm__event *tmp = pm_arena_alloc(scratch, (size_t)n * sizeof *tmp);
    pm__sweep s = {n, pm__make_segs(scratch, pts, n),
                   pm_arena_alloc(scratch, (size_t)n * sizeof(uint32_t)), 0};
    if (!ev || !tmp || !s.seg || !s.status) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) ev[i] = (pm__event){pts[2 * (size_t)i], pts[2 * (size_t)i + 1], i};
    pm__sort_events(ev, tmp, n);
    for (uint32_t i = 1; i < n; i++)
        if (!pm__event_less(&ev[i - 1], &ev[i])) return 0; /* repeated point */
    for (uint32_t i = 0; i < n; i++) {
        const double p[2] = {ev[i].x, ev[i].y};
        if (!pm__sweep_event(&s, ev[i].v, p)) return 0;
    }
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

/* Chooses about one cell per four vertices, shaped like their bounding box
 * (finer grids cost more per row than they save per cell). */
static void pm__grid_shape(pm__grid *g, uint32_t m) {
    double w = g->maxx - g->minx, h = g->maxy - g->miny;
    double cells = m / 4.0 + 1.0;
    double gx = 1.0, gy = 1.0;
    if (w > 0.0 && h > 0.0) {
        gx = ceil(sqrt(cells * w / h));
        gy = ceil(cells / gx);
    } else if (w > 0.0) {
        gx = ceil(cells);
    } else if (h > 0.0) {
        gy = ceil(cells);
    }
    g->gx = (uint32_t)(gx < 4096.0 ? gx : 4096.0);
    g->gy = (uint32_t)(gy < 4096.0 ? gy : 4096.0);
    g->sx = w > 0.0 ? g->gx / w : 0.0;
    g->sy = h > 0.0 ? g->gy / h : 0.0;
}

/* Sizes and allocates the grid for the non-convex vertices; filling waits
 * for the first ear test that needs it (star-shaped polygons rarely do). */
static int pm__grid_prepare(pm_arena *scratch, pm__ec *ec) {
    pm__grid *g = &ec->grid;
    uint32_t m = 0;
    g->minx = g->miny = INFINITY;
    g->maxx = g->maxy = -INFINITY;
    g->filled = false;
    for (uint32_t i = 0; i < ec->n; i++) {
        if (!(ec->state[i] & PM__NONCONVEX)) continue;
        const double *p = pm__pt(ec->pts, i);
        g->minx = pm__min(g->minx, p[0]), g->maxx = pm__max(g->maxx, p[0]);
        g->miny = pm__min(g->miny, p[1]), g->maxy = pm__max(g->maxy, p[1]);
        m++;
    }
    if (m == 0) {
        g->gx = g->gy = 0;
        return 0;
    }
    pm__grid_shape(g, m);
    size_t cells = (size_t)g->gx * g->gy;
    g->start = pm_arena_alloc(scratch, (cells + 1) * sizeof *g->start);
    g->end = pm_arena_alloc(scratch, cells * sizeof *g->end);
    g->slot = pm_arena_alloc(scratch, (size_t)ec->n * sizeof *g->slot);
    g->items = pm_arena_alloc(scratch, (size_t)m * sizeof *g->items);
    return g->start && g->end && g->slot && g->items ? 0 : PM_ERR_NOMEM;
}

/* Files the vertices that are still non-convex (a subset of those the grid
 * was sized for) by cell. */
static void pm__grid_fill(pm__ec *ec) {
    pm__grid *g = &ec->grid;
    size_t cells = (size_t)g->gx * g->gy;
    memset(g->start, 0, (cells + 1) * sizeof *g->start);
    for (uint32_t i = 0; i < ec->n; i++)
        if (ec->state[i] & PM__NONCONVEX) g->start[pm__cell_of(g, pm__pt(ec->pts, i)) + 1]++;
    for (size_t c = 0; c < cells; c++) g->start[c + 1] += g->start[c];
    memcpy(g->end, g->start, cells * sizeof *g->end);
    for (uint32_t i = 0; i < ec->n; i++) {
        if (!(ec->state[i] & PM__NONCONVEX)) continue;
        const double *p = pm__pt(ec->pts, i);
        uint32_t k = g->end[pm__cell_of(g, p)]++;
        g->items[k] = (pm__item){p[0], p[1], i};
        g->slot[i] = k;
    }
    g->filled = true;
}

/* Takes vertex v, which just turned convex, out of its cell. */
static void pm__grid_remove(pm__grid *g, const double *pts, uint32_t v) {
    if (!g->filled) return;
    uint32_t c = pm__cell_of(g, pm__pt(pts, v));
    uint32_t k = g->slot[v], last = --g->end[c];
    g->items[k] = g->items[last];
    g->slot[g->items[k].v] = k;
}

/* ---- ears --------------------------------------------------------------- */

/* Whether non-convex vertex x lies in the closed triangle a b c (CCW). */
static bool pm__in_triangle(const double *a, const double *b, const double *c, const double *x) {
    return pm_orient2d_fast(a, b, x) >= 0.0 && pm_orient2d_fast(b, c, x) >= 0.0 &&
           pm_orient2d_fast(c, a, x) >= 0.0;
}

/* Widens [*lo, *hi] by the x range of edge pq within the band [ylo, yhi]. */
static void pm__edge_band_x(const double *p, const double *q, double ylo, double yhi,
                            double *lo, double *hi) {
    double pyl = pm__min(p[1], q[1]), pyh = pm__max(p[1], q[1]);
    if (pyh < ylo || pyl > yhi) return;
    double xa = p[0], xb = q[0];
    if (p[1] != q[1]) {
        /* |(y - p.y) / (q.y - p.y)| <= 1 after clamping, so the rounding
         * error stays within a few ulps of the x coordinates, at any slope. */
        double slope = (q[0] - p[0]) / (q[1] - p[1]);
        xa = p[0] + (pm__max(ylo, pyl) - p[1]) * slope;
        xb = p[0] + (pm__min(yhi, pyh) - p[1]) * slope;
    }
    *lo = pm__min(*lo, pm__min(xa, xb));
    *hi = pm__max(*hi, pm__max(xa, xb));
}

/* Whether a listed vertex other than u, v, w lies in the closed triangle;
 * box (xlo, xhi, ylo, yhi) bounds the part of the triangle in this cell. */
static bool pm__cell_blocks(const pm__ec *ec, uint32_t cell, const double *tri[3],
                            const uint32_t id[3], const double box[4]) {
    const pm__grid *g = &ec->grid;
    for (uint32_t k = g->start[cell]; k < g->end[cell]; k++) {
        const pm__item *it = &g->items[k];
        if (it->x < box[0] || it->x > box[1] || it->y < box[2] || it->y > box[3]) continue;
        /* v itself may still be listed: it is being reclassified. */
        if (it->v == id[0] || it->v == id[1] || it->v == id[2]) continue;
        const double p[2] = {it->x, it->y};
        if (pm__in_triangle(tri[0], tri[1], tri[2], p)) return true;
    }
    return false;
}

/* Whether some non-convex vertex other than u, v, w blocks the ear u v w.
 * Scans, row by row of the grid, only the cells the triangle spans in that
 * row (long thin ears would otherwise scan their whole bounding box). The
 * row bands and x spans are padded by more than their rounding error, and
 * cell lookup is monotone, so no cell holding a point of the closed triangle
 * is skipped. */
static bool pm__ear_blocked(pm__ec *ec, uint32_t u, uint32_t v, uint32_t w) {
    const pm__grid *g = &ec->grid;
    if (g->gx == 0) return false;
    if (!g->filled) pm__grid_fill(ec);
    const double *tri[3] = {pm__pt(ec->pts, u), pm__pt(ec->pts, v), pm__pt(ec->pts, w)};
    const uint32_t id[3] = {u, v, w};
    const double *a = tri[0], *b = tri[1], *c = tri[2];
    double box[4] = {pm__min(a[0], pm__min(b[0], c[0])), pm__max(a[0], pm__max(b[0], c[0])),
                     pm__min(a[1], pm__min(b[1], c[1])), pm__max(a[1], pm__max(b[1], c[1]))};
    if (box[1] < g->minx || box[0] > g->maxx || box[3] < g->miny || box[2] > g->maxy) return false;
    const double eps = 32 * 0x1p-53;
    double padx = eps * (fabs(box[0]) + fabs(box[1]));
    double pady = eps * (fabs(box[2]) + fabs(box[3]) + fabs(g->miny) + fabs(g->maxy));
    uint32_t cy0 = pm__cell(box[2], g->miny, g->sy, g->gy), cy1 = pm__cell(box[3], g->miny, g->sy, g->gy);
    uint32_t bx0 = pm__cell(box[0], g->minx, g->sx, g->gx), bx1 = pm__cell(box[1], g->minx, g->sx, g->gx);
    if (bx1 - bx0 < 3 || cy1 == cy0) {
        /* A box a few cells wide: spans would cost more than they save. */
        for (uint32_t cy = cy0; cy <= cy1; cy++)
            for (uint32_t cx = bx0; cx <= bx1; cx++)
                if (pm__cell_blocks(ec, cy * g->gx + cx, tri, id, box)) return true;
        return false;
    }
    for (uint32_t cy = cy0; cy <= cy1; cy++) {
        double ylo = box[2], yhi = box[3];
        if (g->gy > 1) {
            ylo = pm__max(ylo, g->miny + (double)cy / g->sy - pady);
            yhi = pm__min(yhi, g->miny + (double)(cy + 1) / g->sy + pady);
        }
        double xlo = INFINITY, xhi = -INFINITY;
        for (int e = 0; e < 3; e++) pm__edge_band_x(tri[e], tri[(e + 1) % 3], ylo, yhi, &xlo, &xhi);
        if (xlo > xhi) continue;
        double span[4] = {pm__max(xlo - padx, box[0]), pm__min(xhi + padx, box[1]), ylo, yhi};
        uint32_t cx0 = pm__cell(span[0], g->minx, g->sx, g->gx);
        uint32_t cx1 = pm__cell(span[1], g->minx, g->sx, g->gx);
        for (uint32_t cx = cx0; cx <= cx1; cx++)
            if (pm__cell_blocks(ec, cy * g->gx + cx, tri, id, span)) return true;
    }
    return false;
}

/* After a neighbour of v was clipped: v's angle only shrank, so a
 * non-convex v may have turned convex (it then leaves the grid). A convex v
 * joins the queue for a fresh ear test, run lazily when it comes out: a
 * vertex whose neighbours change several times is tested once. */
static void pm__neighbour_clipped(pm__ec *ec, uint32_t v) {
    uint32_t u = ec->prev[v], w = ec->next[v];
    double o = pm_orient2d_fast(pm__pt(ec->pts, u), pm__pt(ec->pts, v), pm__pt(ec->pts, w));
    if (o <= 0.0) return; /* still non-convex, still in the grid */
    if (ec->state[v] & PM__NONCONVEX) pm__grid_remove(&ec->grid, ec->pts, v);
    ec->state[v] = PM__ALIVE | PM__DIRTY;
    ec->queue[ec->tail++] = v;
}

/* A shortcut for star-shaped polygons: vertices are in strict angular order
 * around c, so when u to w turns counter-clockwise by less than 180 degrees
 * around c, the triangle u v w lies in that convex sector, where the only
 * remaining vertices are u, v and w: nothing can block the ear. */
static bool pm__star_ear(const pm__ec *ec, uint32_t u, uint32_t w) {
    return ec->star && pm_orient2d_fast(ec->c, pm__pt(ec->pts, u), pm__pt(ec->pts, w)) > 0.0;
}

/* Whether v, taken from the queue, is an ear now (testing it if needed). */
static bool pm__is_ear(pm__ec *ec, uint32_t v) {
    uint8_t st = ec->state[v];
    if (st & PM__DIRTY) {
        uint32_t u = ec->prev[v], w = ec->next[v];
        st = pm__star_ear(ec, u, w) || !pm__ear_blocked(ec, u, v, w) ? PM__ALIVE | PM__EAR : PM__ALIVE;
        ec->state[v] = st;
    }
    return (st & (PM__ALIVE | PM__EAR)) == (PM__ALIVE | PM__EAR);
}

/* Clips ears until a triangle remains; writes n - 2 triangles. Every
 * convex vertex not known to be blocked is in the queue, so an empty queue
 * means no ear exists: impossible for a simple polygon. First in, first
 * out clips around the polygon in rounds, which keeps ears small (a stack
 * grows fans of long thin triangles, slower to test). */
static long pm__clip_all(pm__ec *ec, uint32_t *out) {
    uint32_t left = ec->n;
    long tris = 0;
    while (left > 3) {
        if (ec->head == ec->tail) return PM_ERR_GEOMETRY;
        uint32_t v = ec->queue[ec->head++];
        if (!(ec->state[v] & PM__ALIVE) || !pm__is_ear(ec, v)) continue;
        uint32_t u = ec->prev[v], w = ec->next[v];
        out[3 * tris] = u, out[3 * tris + 1] = v, out[3 * tris + 2] = w;
        tris++;
        ec->state[v] = 0;
        ec->next[u] = w, ec->prev[w] = u;
        left--;
        pm__neighbour_clipped(ec, u);
        pm__neighbour_clipped(ec, w);
    }
    uint32_t v = 0;
    while (!(ec->state[v] & PM__ALIVE)) v++;
    uint32_t u = ec->prev[v], w = ec->next[v];
    if (!(pm_orient2d_fast(pm__pt(ec->pts, u), pm__pt(ec->pts, v), pm__pt(ec->pts, w)) > 0.0))
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
    return pm_orient2d_fast(pm__pt(pts, u), pm__pt(pts, m), pm__pt(pts, w)) > 0.0;
}

static int pm__ec_init(pm_arena *scratch, pm__ec *ec, const double *pts, uint32_t n) {
    ec->pts = pts;
    ec->n = n;
    ec->prev = pm_arena_alloc(scratch, (size_t)n * sizeof *ec->prev);
    ec->next = pm_arena_alloc(scratch, (size_t)n * sizeof *ec->next);
    ec->state = pm_arena_alloc(scratch, (size_t)n);
    ec->queue = pm_arena_alloc(scratch, 3 * (size_t)n * sizeof *ec->queue);
    ec->tail = ec->head = 0;
    if (!ec->prev || !ec->next || !ec->state || !ec->queue) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        ec->prev[i] = i == 0 ? n - 1 : i - 1;
        ec->next[i] = i + 1 == n ? 0 : i + 1;
        double o = pm_orient2d_fast(pm__pt(pts, ec->prev[i]), pm__pt(pts, i), pm__pt(pts, ec->next[i]));
        ec->state[i] = PM__ALIVE | (o <= 0.0 ? PM__NONCONVEX : 0);
    }
    if (pm__grid_prepare(scratch, ec) < 0) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        if (ec->state[i] & PM__NONCONVEX) continue;
        ec->state[i] |= PM__DIRTY;
        ec->queue[ec->tail++] = i;
    }
    return 0;
}

long pm_earclip(pm_arena *scratch, const double *pts, size_t n, uint32_t *out) {
    assert(scratch && (pts || n == 0) && (out || n < 3));
    if (n < 3) return PM_ERR_GEOMETRY;
    if (n > UINT32_MAX / 4) return PM_ERR_LIMIT;
    uint32_t nn = (uint32_t)n;
    pm__ec ec;
    /* Star-shaped around c (edges all turning counter-clockwise around it)
     * is simple and counter-clockwise at once; otherwise sweep. The vertex
     * centroid is tried first, then a point found in the kernel. */
    pm__vertex_centroid(pts, nn, ec.c);
    ec.star = pm__star_around(pts, nn, ec.c);
    if (!ec.star) {
        int found = pm__kernel_point(scratch, pts, nn, ec.c);
        if (found < 0) return found;
        ec.star = found && pm__star_around(pts, nn, ec.c);
    }
    if (!ec.star) {
        int simple = pm__sweep_simple(scratch, pts, nn);
        if (simple < 0) return simple;
        if (!simple || !pm__is_ccw(pts, nn)) return PM_ERR_GEOMETRY;
    }
    if (pm__ec_init(scratch, &ec, pts, nn) < 0) return PM_ERR_NOMEM;
    return pm__clip_all(&ec, out);
}

#include "geom/earclip.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "geom/polygon.h"
#include "geom/predicates.h"
#include "scene/result.h"

/* Ear clipping in O(n log n + total ear-test work):
 *
 * 1. pm_polygon_classify proves the polygon simple (O(n) when it is
 *    star-shaped, else a sweep line). Everything below relies on
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

/* Up to this many remaining vertices, ear tests walk the polygon. */
#define PM__SCAN_MAX 64u

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
    uint32_t left;     /* vertices still in the polygon */
    uint32_t *queue;   /* candidate ears, first in first out */
    uint32_t tail, head;
} pm__ec;

size_t pm_earclip_bound(size_t n) { return n >= 3 ? 3 * (n - 2) : 0; }

static const double *pm__pt(const double *pts, uint32_t i) { return pts + 2 * (size_t)i; }

/* fmin/fmax honour NaN rules and become libm calls; inputs here are finite. */
static inline double pm__min(double a, double b) { return a < b ? a : b; }
static inline double pm__max(double a, double b) { return a > b ? a : b; }

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
static inline bool pm__in_triangle(const double *a, const double *b, const double *c, const double *x) {
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
static bool pm__cell_blocks(const pm__ec *ec, uint32_t cell, const double *const tri[3],
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

/* Few vertices left: walking the remaining polygon is cheaper than the
 * grid (which then is never filled for small polygons). */
static bool pm__ear_blocked_scan(const pm__ec *ec, uint32_t u, uint32_t v, uint32_t w) {
    const double *a = pm__pt(ec->pts, u), *b = pm__pt(ec->pts, v), *c = pm__pt(ec->pts, w);
    double x0 = pm__min(a[0], pm__min(b[0], c[0])), x1 = pm__max(a[0], pm__max(b[0], c[0]));
    double y0 = pm__min(a[1], pm__min(b[1], c[1])), y1 = pm__max(a[1], pm__max(b[1], c[1]));
    for (uint32_t x = ec->next[w]; x != u; x = ec->next[x]) {
        if (!(ec->state[x] & PM__NONCONVEX)) continue;
        const double *p = pm__pt(ec->pts, x);
        if (p[0] < x0 || p[0] > x1 || p[1] < y0 || p[1] > y1) continue;
        if (pm__in_triangle(a, b, c, p)) return true;
    }
    return false;
}

/* The triangle tri (vertex ids id) with bounding box box, for grid scans. */
typedef struct pm__ear { const double *tri[3]; uint32_t id[3]; double box[4]; } pm__ear;

/* Scans the cells of grid rows cy0..cy1, in each row only the columns the
 * triangle spans there (long thin ears would otherwise scan their whole
 * bounding box). The row bands and x spans are padded by more than their
 * rounding error, and cell lookup is monotone, so no cell holding a point
 * of the closed triangle is skipped. */
static bool pm__rows_block(const pm__ec *ec, const pm__ear *e, uint32_t cy0, uint32_t cy1) {
    const pm__grid *g = &ec->grid;
    const double *box = e->box, eps = 32 * 0x1p-53;
    double padx = eps * (fabs(box[0]) + fabs(box[1]));
    double pady = eps * (fabs(box[2]) + fabs(box[3]) + fabs(g->miny) + fabs(g->maxy));
    for (uint32_t cy = cy0; cy <= cy1; cy++) {
        double ylo = box[2], yhi = box[3];
        if (g->gy > 1) {
            ylo = pm__max(ylo, g->miny + (double)cy / g->sy - pady);
            yhi = pm__min(yhi, g->miny + (double)(cy + 1) / g->sy + pady);
        }
        double xlo = INFINITY, xhi = -INFINITY;
        for (int k = 0; k < 3; k++) pm__edge_band_x(e->tri[k], e->tri[(k + 1) % 3], ylo, yhi, &xlo, &xhi);
        if (xlo > xhi) continue;
        double span[4] = {pm__max(xlo - padx, box[0]), pm__min(xhi + padx, box[1]), ylo, yhi};
        uint32_t cx0 = pm__cell(span[0], g->minx, g->sx, g->gx);
        uint32_t cx1 = pm__cell(span[1], g->minx, g->sx, g->gx);
        for (uint32_t cx = cx0; cx <= cx1; cx++)
            if (pm__cell_blocks(ec, cy * g->gx + cx, e->tri, e->id, span)) return true;
    }
    return false;
}

/* Whether some non-convex vertex other than u, v, w blocks the ear u v w. */
static bool pm__ear_blocked(pm__ec *ec, uint32_t u, uint32_t v, uint32_t w) {
    if (ec->left <= PM__SCAN_MAX) return pm__ear_blocked_scan(ec, u, v, w);
    const pm__grid *g = &ec->grid;
    if (g->gx == 0) return false;
    if (!g->filled) pm__grid_fill(ec);
    pm__ear e = {{pm__pt(ec->pts, u), pm__pt(ec->pts, v), pm__pt(ec->pts, w)}, {u, v, w}, {0}};
    const double *a = e.tri[0], *b = e.tri[1], *c = e.tri[2];
    double *box = e.box;
    box[0] = pm__min(a[0], pm__min(b[0], c[0])), box[1] = pm__max(a[0], pm__max(b[0], c[0]));
    box[2] = pm__min(a[1], pm__min(b[1], c[1])), box[3] = pm__max(a[1], pm__max(b[1], c[1]));
    if (box[1] < g->minx || box[0] > g->maxx || box[3] < g->miny || box[2] > g->maxy) return false;
    uint32_t cy0 = pm__cell(box[2], g->miny, g->sy, g->gy), cy1 = pm__cell(box[3], g->miny, g->sy, g->gy);
    uint32_t bx0 = pm__cell(box[0], g->minx, g->sx, g->gx), bx1 = pm__cell(box[1], g->minx, g->sx, g->gx);
    if (bx1 - bx0 >= 3 && cy1 > cy0) return pm__rows_block(ec, &e, cy0, cy1);
    /* A box a few cells wide: row spans would cost more than they save. */
    for (uint32_t cy = cy0; cy <= cy1; cy++)
        for (uint32_t cx = bx0; cx <= bx1; cx++)
            if (pm__cell_blocks(ec, cy * g->gx + cx, e.tri, e.id, box)) return true;
    return false;
}

/* After a neighbour of v was clipped: v's angle only shrank, so a
 * non-convex v may have turned convex (it then leaves the grid). A convex v
 * joins the queue for a fresh ear test, run lazily when it comes out: a
 * vertex whose neighbours change several times is tested once. */
static void pm__neighbour_clipped(pm__ec *ec, uint32_t v) {
    if (ec->state[v] & PM__NONCONVEX) {
        /* A convex v stays convex (its angle stays positive: the diagonal
         * of an ear runs strictly inside the polygon); no test needed. */
        uint32_t u = ec->prev[v], w = ec->next[v];
        double o = pm_orient2d_fast(pm__pt(ec->pts, u), pm__pt(ec->pts, v), pm__pt(ec->pts, w));
        if (o <= 0.0) return; /* still non-convex, still in the grid */
        pm__grid_remove(&ec->grid, ec->pts, v);
    }
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
    long tris = 0;
    while (ec->left > 3) {
        if (ec->head == ec->tail) return PM_ERR_GEOMETRY;
        uint32_t v = ec->queue[ec->head++];
        if (!(ec->state[v] & PM__ALIVE) || !pm__is_ear(ec, v)) continue;
        uint32_t u = ec->prev[v], w = ec->next[v];
        out[3 * tris] = u, out[3 * tris + 1] = v, out[3 * tris + 2] = w;
        tris++;
        ec->state[v] = 0;
        ec->next[u] = w, ec->prev[w] = u;
        ec->left--;
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

/* ---- small polygons ------------------------------------------------------
 * The same algorithm as above, so the same triangles, in local arrays:
 * no scratch memory, byte-sized links, and the live non-convex vertices as
 * a bit set, so an ear test visits only them (in any order: it asks
 * whether one exists). */

#define PM__SMALL_MAX 128u

typedef struct pm__small {
    const double *pts;
    uint8_t prev[PM__SMALL_MAX], next[PM__SMALL_MAX], state[PM__SMALL_MAX];
    uint64_t nonconvex[PM__SMALL_MAX / 64];
    uint8_t queue[3 * PM__SMALL_MAX];
    uint32_t head, tail;
} pm__small;

/* Whether a live non-convex vertex other than u and w lies in the closed
 * triangle u v w (v is convex, so not in the set). */
static bool pm__small_blocked(const pm__small *s, uint32_t u, uint32_t v, uint32_t w) {
    const double *a = pm__pt(s->pts, u), *b = pm__pt(s->pts, v), *c = pm__pt(s->pts, w);
    double x0 = pm__min(a[0], pm__min(b[0], c[0])), x1 = pm__max(a[0], pm__max(b[0], c[0]));
    double y0 = pm__min(a[1], pm__min(b[1], c[1])), y1 = pm__max(a[1], pm__max(b[1], c[1]));
    for (uint32_t k = 0; k < PM__SMALL_MAX / 64; k++) {
        uint64_t bits = s->nonconvex[k];
        if (u >> 6 == k) bits &= ~(1ull << (u & 63));
        if (w >> 6 == k) bits &= ~(1ull << (w & 63));
        while (bits) {
            uint32_t x = 64 * k + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            const double *p = pm__pt(s->pts, x);
            if (p[0] < x0 || p[0] > x1 || p[1] < y0 || p[1] > y1) continue;
            if (pm__in_triangle(a, b, c, p)) return true;
        }
    }
    return false;
}

/* pm__neighbour_clipped for the small path. A convex vertex stays convex
 * (its angle only shrank, and stays positive: the diagonal of an ear runs
 * strictly inside the polygon), so only a non-convex one needs the
 * orientation test. */
static inline void pm__small_neighbour(pm__small *s, uint32_t v) {
    if (s->state[v] & PM__NONCONVEX) {
        double o = pm_orient2d_fast(pm__pt(s->pts, s->prev[v]), pm__pt(s->pts, v), pm__pt(s->pts, s->next[v]));
        if (o <= 0.0) return;
        s->nonconvex[v >> 6] &= ~(1ull << (v & 63));
    }
    s->state[v] = PM__ALIVE | PM__DIRTY;
    s->queue[s->tail++] = (uint8_t)v;
}

/* pm__ec_init plus pm__clip_all for n <= PM__SMALL_MAX. */
static long pm__clip_small(const double *pts, uint32_t n, bool star, const double c[2], uint32_t *out) {
    pm__small s;
    s.pts = pts;
    s.head = s.tail = 0;
    memset(s.nonconvex, 0, sizeof s.nonconvex);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t u = i == 0 ? n - 1 : i - 1, w = i + 1 == n ? 0 : i + 1;
        s.prev[i] = (uint8_t)u, s.next[i] = (uint8_t)w;
        if (pm_orient2d_fast(pm__pt(pts, u), pm__pt(pts, i), pm__pt(pts, w)) <= 0.0) {
            s.state[i] = PM__ALIVE | PM__NONCONVEX;
            s.nonconvex[i >> 6] |= 1ull << (i & 63);
        } else {
            s.state[i] = PM__ALIVE | PM__DIRTY;
            s.queue[s.tail++] = (uint8_t)i;
        }
    }
    long tris = 0;
    for (uint32_t left = n; left > 3;) {
        if (s.head == s.tail) return PM_ERR_GEOMETRY;
        uint32_t v = s.queue[s.head++];
        uint8_t st = s.state[v];
        if (!(st & PM__ALIVE)) continue;
        uint32_t u = s.prev[v], w = s.next[v];
        if (st & PM__DIRTY) {
            bool ear = (star && pm_orient2d_fast(c, pm__pt(pts, u), pm__pt(pts, w)) > 0.0) ||
                       !pm__small_blocked(&s, u, v, w);
            st = ear ? PM__ALIVE | PM__EAR : PM__ALIVE;
            s.state[v] = st;
        }
        if (!(st & PM__EAR)) continue;
        out[3 * tris] = u, out[3 * tris + 1] = v, out[3 * tris + 2] = w;
        tris++;
        s.state[v] = 0;
        s.next[u] = (uint8_t)w, s.prev[w] = (uint8_t)u;
        left--;
        pm__small_neighbour(&s, u);
        pm__small_neighbour(&s, w);
    }
    uint32_t v = 0;
    while (!(s.state[v] & PM__ALIVE)) v++;
    uint32_t u = s.prev[v], w = s.next[v];
    if (!(pm_orient2d_fast(pm__pt(pts, u), pm__pt(pts, v), pm__pt(pts, w)) > 0.0)) return PM_ERR_GEOMETRY;
    out[3 * tris] = u, out[3 * tris + 1] = v, out[3 * tris + 2] = w;
    return tris + 1;
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
    ec->left = n;
    ec->grid.gx = ec->grid.gy = 0;
    ec->grid.filled = false;
    if (n > PM__SCAN_MAX && pm__grid_prepare(scratch, ec) < 0) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        if (ec->state[i] & PM__NONCONVEX) continue;
        ec->state[i] |= PM__DIRTY;
        ec->queue[ec->tail++] = i;
    }
    return 0;
}

/* Clips a simple counter-clockwise polygon (star: around c). */
static long pm__clip(pm_arena *scratch, const double *pts, uint32_t n, bool star, const double c[2],
                     uint32_t *out) {
    if (n <= PM__SMALL_MAX) return pm__clip_small(pts, n, star, c, out);
    pm__ec ec;
    ec.star = star;
    memcpy(ec.c, c, sizeof ec.c);
    if (pm__ec_init(scratch, &ec, pts, n) < 0) return PM_ERR_NOMEM;
    return pm__clip_all(&ec, out);
}

long pm_earclip(pm_arena *scratch, const double *pts, size_t n, uint32_t *out) {
    assert(scratch && (pts || n == 0) && (out || n < 3));
    if (n < 3) return PM_ERR_GEOMETRY;
    if (n > UINT32_MAX / 4) return PM_ERR_LIMIT;
    pm_polygon_info info;
    int r = pm_polygon_classify(scratch, pts, n, &info);
    if (r < 0) return r;
    if (!info.simple || !info.ccw) return PM_ERR_GEOMETRY;
    return pm__clip(scratch, pts, (uint32_t)n, info.star, info.kernel_point, out);
}

long pm_earclip_star(pm_arena *scratch, const double *pts, size_t n, const double c[2], uint32_t *out) {
    assert(scratch && pts && c && out && n >= 3);
    if (n > UINT32_MAX / 4) return PM_ERR_LIMIT;
    assert(pm_polygon_star_around(pts, n, c));
    return pm__clip(scratch, pts, (uint32_t)n, true, c, out);
}

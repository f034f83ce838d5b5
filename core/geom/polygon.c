#include "geom/polygon.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "geom/predicates.h"
#include "scene/result.h"

/* Simplicity is proved one of two ways:
 * - star-shaped polygons: a point c such that every edge turns strictly
 *   counter-clockwise around c, winding once. Each edge then owns an open
 *   angular sector around c and the sectors tile the full turn, so
 *   non-adjacent edges cannot meet. A cheap candidate is tried first (the
 *   least-squares point of the edge lines, moved by a few projections onto
 *   the edges' half-planes), then a kernel point found by linear
 *   programming. O(n).
 * - otherwise a Shamos-Hoey sweep line over the vertices in lexicographic
 *   order, checking every pair of edges that become neighbours at the sweep
 *   line. O(n log n) (plus memmoves on a sorted array of active edges). */

static const double *pm__pt(const double *pts, uint32_t i) { return pts + 2 * (size_t)i; }

/* fmin/fmax honour NaN rules and become libm calls; inputs here are finite. */
static inline double pm__min(double a, double b) { return a < b ? a : b; }
static inline double pm__max(double a, double b) { return a > b ? a : b; }

static bool pm__lex_less(const double *a, const double *b) {
    return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

/* ---- sweep line: events sorted lexicographically ------------------------------------------- */

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
    uint32_t clash[2]; /* the offending edges once a clash is found */
} pm__sweep;

/* Records a clash between edges e and f; returns false for the caller. */
static bool pm__clash(pm__sweep *s, uint32_t e, uint32_t f) {
    s->clash[0] = e < f ? e : f;
    s->clash[1] = e < f ? f : e;
    return false;
}

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

static bool pm__check_pair(pm__sweep *s, uint32_t i) {
    /* Status slots i - 1 and i, when both exist, must not clash. */
    if (i == 0 || i >= s->count) return true;
    uint32_t e = s->status[i - 1], f = s->status[i];
    return pm__edges_clash(s, e, f) ? pm__clash(s, e, f) : true;
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
        if (st[j] != in_edge && st[j] != out_edge) return pm__clash(s, st[j], in_edge);
        j++;
    }
    /* An ending edge missing from its place: the order broke at a crossing
     * (a safety net; the neighbour checks should have caught it). */
    if (j - k != ending) return pm__clash(s, in_edge, k < s->count ? st[k] : out_edge);
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
    if (o == 0.0) return pm__clash(s, in_edge, out_edge); /* overlapping spike */
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

/* Each edge turns counter-clockwise around c by less than 180 degrees, so
 * the winding number is the count of crossings of the ray from c towards +x
 * (from below, y < c.y, to above, y >= c.y), each decided exactly. */
bool pm_polygon_star_around(const double *pts, size_t n, const double c[2]) {
    assert(pts && c && n >= 3);
    size_t crossings = 0;
    for (size_t i = 0; i < n; i++) {
        const double *a = pts + 2 * i, *b = pts + 2 * (i + 1 == n ? 0 : i + 1);
        if (!(pm_orient2d_fast(c, a, b) > 0.0)) return false;
        crossings += a[1] < c[1] && b[1] >= c[1];
    }
    return crossings == 1;
}

/* ---- a kernel point for the star test ------------------------------------
 * Seidel's randomized incremental linear programming finds extreme points
 * of the kernel (the intersection of the edges' left half-planes) in
 * expected O(n). It runs in plain floating point: its answer is only a
 * candidate, which pm_polygon_star_around then checks exactly. */

/* Edge i as a half-plane A x + B y + C >= 0 (its left side), with its start
 * point: the LP reads constraints in a random order, so they are stored in
 * that order, each evaluated with two products instead of five operations
 * on two points. */
typedef struct pm__line { double A, B, C, ax, ay; } pm__line;

static double pm__line_eval(const pm__line *l, const double c[2]) {
    return l->A * c[0] + l->B * c[1] + l->C;
}

/* Maximizes d.p for p on line i, within box and the half-planes of lines
 * ln[0..i). False when that range is empty. */
static bool pm__lp_on_line(const pm__line *ln, uint32_t i, const double box[4], const double d[2],
                           double out[2]) {
    const pm__line *li = &ln[i];
    const double a[2] = {li->ax, li->ay}, dir[2] = {li->B, -li->A};
    double lo = -INFINITY, hi = INFINITY;
    for (int axis = 0; axis < 2; axis++) {
        if (dir[axis] == 0.0) continue;
        double t0 = (box[2 * axis] - a[axis]) / dir[axis], t1 = (box[2 * axis + 1] - a[axis]) / dir[axis];
        lo = pm__max(lo, pm__min(t0, t1)), hi = pm__min(hi, pm__max(t0, t1));
    }
    for (uint32_t j = 0; j < i && lo <= hi; j++) {
        const pm__line *l = &ln[j];
        double alpha = pm__line_eval(l, a);
        double beta = l->A * dir[0] + l->B * dir[1];
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
static bool pm__kernel_extreme(const pm__line *ln, uint32_t n, const double box[4], const double d[2],
                               double out[2]) {
    out[0] = d[0] > 0.0 ? box[1] : box[0];
    out[1] = d[1] > 0.0 ? box[3] : box[2];
    for (uint32_t k = 0; k < n; k++) {
        if (pm__line_eval(&ln[k], out) >= 0.0) continue;
        if (!pm__lp_on_line(ln, k, box, d, out)) return false;
    }
    return true;
}

/* The edges' half-planes in a random order (a fixed seed: the order only
 * affects speed, never the result), and the bounding box of the points. */
static uint32_t pm__gcd(uint32_t a, uint32_t b) {
    while (b) {
        uint32_t t = a % b;
        a = b, b = t;
    }
    return a;
}

static void pm__shuffled_lines(const double *pts, uint32_t n, pm__line *ln, double box[4]) {
    box[0] = box[2] = INFINITY, box[1] = box[3] = -INFINITY;
    /* Small polygons: a golden-ratio stride scatters neighbouring (similar)
     * edges as well as a shuffle does, at no cost, and their quadratic
     * worst case is bounded. Large ones: Fisher-Yates with an inline
     * xorshift64* and a multiply-shift range reduction (the slight bias is
     * harmless: only the expected running time depends on the order). */
    uint32_t stride = 1;
    if (n <= 128) {
        stride = (uint32_t)(0.6180339887 * n) | 1;
        while (pm__gcd(stride, n) != 1) stride++;
    }
    for (uint32_t i = 0, k = 0; i < n; i++, k = k + stride >= n ? k + stride - n : k + stride) {
        const double *a = pm__pt(pts, i), *b = pm__pt(pts, i + 1 == n ? 0 : i + 1);
        double dx = b[0] - a[0], dy = b[1] - a[1];
        ln[k] = (pm__line){-dy, dx, dy * a[0] - dx * a[1], a[0], a[1]};
        box[0] = pm__min(box[0], a[0]), box[1] = pm__max(box[1], a[0]);
        box[2] = pm__min(box[2], a[1]), box[3] = pm__max(box[3], a[1]);
    }
    if (n <= 128) return;
    uint64_t x = 0x6b65726e656cull;
    for (uint32_t i = n - 1; i > 0; i--) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint32_t j = (uint32_t)(((x * 0x2545f4914f6cdd1dull) >> 32) * ((uint64_t)i + 1) >> 32);
        pm__line t = ln[i];
        ln[i] = ln[j], ln[j] = t;
    }
}

/* A point strictly inside the kernel, from extreme points of it in generic
 * directions (so the optima are unique vertices). Returns 2 when c is
 * proved a kernel point already, 1 for a candidate still to check, 0 when
 * the kernel looks empty, or PM_ERR_NOMEM. */
static int pm__kernel_point(pm_arena *scratch, const double *pts, uint32_t n, double c[2]) {
    pm__line small[128], *ln = small;
    if (n > sizeof small / sizeof small[0]) {
        ln = pm_arena_alloc(scratch, (size_t)n * sizeof *ln);
        if (!ln) return PM_ERR_NOMEM;
    }
    double box[4];
    pm__shuffled_lines(pts, n, ln, box);
    /* Nearly opposite directions first: the midpoint of those two extreme
     * points is inside unless they share a kernel edge (a triangle kernel,
     * say); only then is the third needed. */
    static const double dirs[3][2] = {{1.0, 0.0009765625}, {-1.0, 0.00048828125}, {0.0001220703125, -1.0}};
    double e[3][2];
    for (int k = 0; k < 2; k++)
        if (!pm__kernel_extreme(ln, n, box, dirs[k], e[k])) return 0;
    c[0] = 0.5 * (e[0][0] + e[1][0]), c[1] = 0.5 * (e[0][1] + e[1][1]);
    if (pm_polygon_star_around(pts, n, c)) return 2;
    if (!pm__kernel_extreme(ln, n, box, dirs[2], e[2])) return 0;
    c[0] = (e[0][0] + e[1][0] + e[2][0]) / 3.0, c[1] = (e[0][1] + e[1][1] + e[2][1]) / 3.0;
    return 1;
}

/* The point closest to the lines of all edges, in the least-squares sense
 * with each edge weighted by its squared length (no square roots): on a
 * junction contour the long curb edges of each arm pull it onto the arm's
 * axis, so it lands near where the axes meet. Coordinates are taken
 * relative to the first point. Sets box to the bounding box of the points;
 * false when the system is singular or the point falls outside box (no
 * kernel point can). */
static bool pm__edge_lines_point(const double *pts, uint32_t n, double c[2], double box[4],
                                 double (*nrm)[3]) {
    const double o[2] = {pts[0], pts[1]};
    double a00 = 0, a01 = 0, a11 = 0, b0 = 0, b1 = 0;
    box[0] = box[1] = o[0], box[2] = box[3] = o[1];
    for (uint32_t i = 0; i < n; i++) {
        const double *a = pm__pt(pts, i), *b = pm__pt(pts, i + 1 == n ? 0 : i + 1);
        /* Normal (nx, ny) = (-dy, dx), unnormalized: weight |d|^2. */
        double nx = a[1] - b[1], ny = b[0] - a[0];
        double r = nx * (a[0] - o[0]) + ny * (a[1] - o[1]);
        nrm[i][0] = nx, nrm[i][1] = ny, nrm[i][2] = nx * nx + ny * ny;
        a00 += nx * nx, a01 += nx * ny, a11 += ny * ny, b0 += nx * r, b1 += ny * r;
        box[0] = pm__min(box[0], a[0]), box[1] = pm__max(box[1], a[0]);
        box[2] = pm__min(box[2], a[1]), box[3] = pm__max(box[3], a[1]);
    }
    double det = a00 * a11 - a01 * a01;
    if (!(det > 0.0) || !isfinite(det)) return false;
    c[0] = o[0] + (b0 * a11 - b1 * a01) / det;
    c[1] = o[1] + (a00 * b1 - a01 * b0) / det;
    return c[0] >= box[0] && c[0] <= box[1] && c[1] >= box[2] && c[1] <= box[3];
}

/* Cyclic projections (Kaczmarz) of c onto the edges' left half-planes, each
 * shrunk by margin: whenever c is closer than margin to the inside of an
 * edge's line, it moves to margin inside it. Moves towards the kernel; a
 * few passes (stopping early after one without a move) usually land inside
 * it even when the kernel is narrower than the margin somewhere and the
 * passes would never settle. Floating point: the caller checks c exactly. */
static void pm__project_inside(const double *pts, uint32_t n, const double (*nrm)[3], double c[2],
                               double margin) {
    for (int pass = 0; pass < 3; pass++) {
        bool moved = false;
        for (uint32_t i = 0; i < n; i++) {
            const double *a = pm__pt(pts, i);
            double nx = nrm[i][0], ny = nrm[i][1], nn = nrm[i][2];
            /* Left-of-edge distance times |n|: f >= margin |n| without a root. */
            double f = nx * (c[0] - a[0]) + ny * (c[1] - a[1]);
            if (f > 0.0 && f * f >= margin * margin * nn) continue;
            if (!(nn > 0.0)) continue; /* a repeated point: the exact check refuses */
            double t = (margin * sqrt(nn) - f) / nn;
            c[0] += t * nx, c[1] += t * ny;
            moved = true;
        }
        if (!moved) return;
    }
}

static void pm__vertex_centroid(const double *pts, uint32_t n, double c[2]) {
    c[0] = c[1] = 0.0;
    for (uint32_t i = 0; i < n; i++) c[0] += pts[2 * (size_t)i], c[1] += pts[2 * (size_t)i + 1];
    c[0] /= n, c[1] /= n;
}

/* Whether a cheap candidate point proves the polygon star-shaped (c set).
 * The vertex centroid first (random stars, convex polygons: a failing
 * check usually stops within a few edges), then the least-squares point of
 * the edge lines moved into the edges' half-planes by projections. On real
 * junction contours the second proves 98% in O(n), where the centroid
 * proves a fifth; the rest go to linear programming. Only for small
 * polygons: large ones that are not star-shaped (combs, say) would pay it
 * for nothing before the sweep line, and the LP's cost is spread over more
 * ear clipping. */
static bool pm__star_candidates(const double *pts, uint32_t n, double c[2]) {
    pm__vertex_centroid(pts, n, c);
    if (pm_polygon_star_around(pts, n, c)) return true;
    if (n > 128) return false;
    double box[4], nrm[128][3]; /* edge normals (-dy, dx) and their squared lengths */
    if (!pm__edge_lines_point(pts, n, c, box, nrm)) pm__vertex_centroid(pts, n, c);
    double margin = 1e-3 * ((box[1] - box[0]) + (box[3] - box[2]));
    pm__project_inside(pts, n, nrm, c, margin);
    if (!(c[0] >= box[0] && c[0] <= box[1] && c[1] >= box[2] && c[1] <= box[3])) return false;
    return pm_polygon_star_around(pts, n, c);
}

/* Sweep-line proof of simplicity: 1 when simple, 0 when not (clash set),
 * PM_ERR_NOMEM. */
static int pm__sweep_simple(pm_arena *scratch, const double *pts, uint32_t n, uint32_t clash[2]) {
    pm__event *ev = pm_arena_alloc(scratch, (size_t)n * sizeof *ev);
    pm__event *tmp = pm_arena_alloc(scratch, (size_t)n * sizeof *tmp);
    pm__sweep s = {n, pm__make_segs(scratch, pts, n),
                   pm_arena_alloc(scratch, (size_t)n * sizeof(uint32_t)), 0, {0, 0}};
    if (!ev || !tmp || !s.seg || !s.status) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) ev[i] = (pm__event){pts[2 * (size_t)i], pts[2 * (size_t)i + 1], i};
    pm__sort_events(ev, tmp, n);
    int simple = 1;
    for (uint32_t i = 1; i < n && simple; i++)
        if (!pm__event_less(&ev[i - 1], &ev[i])) simple = pm__clash(&s, ev[i - 1].v, ev[i].v);
    for (uint32_t i = 0; i < n && simple; i++) {
        const double p[2] = {ev[i].x, ev[i].y};
        simple = pm__sweep_event(&s, ev[i].v, p);
    }
    memcpy(clash, s.clash, sizeof s.clash);
    return simple;
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

int pm_polygon_classify(pm_arena *scratch, const double *pts, size_t n, pm_polygon_info *info) {
    assert(scratch && pts && info && n >= 3 && n < UINT32_MAX);
    uint32_t nn = (uint32_t)n;
    memset(info, 0, sizeof *info);
    double *c = info->kernel_point;
    bool star = pm__star_candidates(pts, nn, c);
    if (!star) {
        int found = pm__kernel_point(scratch, pts, nn, c);
        if (found < 0) return found;
        star = found == 2 || (found == 1 && pm_polygon_star_around(pts, n, c));
    }
    if (star) {
        info->simple = info->ccw = info->star = true;
        return 0;
    }
    c[0] = c[1] = 0.0;
    int simple = pm__sweep_simple(scratch, pts, nn, info->clash);
    if (simple < 0) return simple;
    info->simple = simple;
    info->ccw = simple && pm__is_ccw(pts, nn);
    return 0;
}


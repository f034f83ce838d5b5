/* Junction refinement: makes a triangulated junction surface follow the
 * height field. Ear clipping leaves long, thin triangles across which
 * heights are linear, so a sloped junction shows creases that the field
 * does not have. Here the triangulation is first made constrained Delaunay
 * (Lawson flips; the boundary never changes), then points are added where
 * the linear heights stray from the field: the midpoint of a triangle's
 * longest edge when that edge is interior, else its centroid, each
 * followed by Lawson flips. Every test runs on the final (snapped, float)
 * coordinates with exact predicates, and a point is added only when every
 * triangle it makes is strictly counter-clockwise, so the triangulation
 * stays valid and covers exactly the same area. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "junction/junction_internal.h"
#include "geom/predicates.h"

typedef PM_VEC(uint32_t) pm__u32s;

typedef struct pm__refiner {
    pm__junction *J;
    pm__tmesh *m;
    double yoff;
    pm__u32s stack;      /* edges to check for the Delaunay property: 3 * t + e */
    pm__u32s queue;      /* triangles to check for their height error */
    size_t head;
    PM_VEC(uint8_t) dirty;   /* per triangle: changed since its last check */
} pm__refiner;

static double pm__or(pm_v2 a, pm_v2 b, pm_v2 c) {
    double pa[2] = {a.x, a.y}, pb[2] = {b.x, b.y}, pc[2] = {c.x, c.y};
    return pm_orient2d_fast(pa, pb, pc);
}

static pm_v2 pm__pt(const pm__tmesh *m, uint32_t v) { return m->v.data[v]; }

static double pm__orient_v(const pm__tmesh *m, uint32_t a, uint32_t b, uint32_t c) {
    return pm__or(pm__pt(m, a), pm__pt(m, b), pm__pt(m, c));
}

/* > 0 when d lies strictly inside the circle through a, b, c (counter-
 * clockwise). */
static double pm__incircle_v(const pm__tmesh *m, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    pm_v2 A = pm__pt(m, a), B = pm__pt(m, b), C = pm__pt(m, c), D = pm__pt(m, d);
    double pa[2] = {A.x, A.y}, pb[2] = {B.x, B.y}, pc[2] = {C.x, C.y}, pd[2] = {D.x, D.y};
    return pm_incircle_fast(pa, pb, pc, pd);
}

static void pm__link(pm__tmesh *m, uint32_t te, uint32_t ue) {
    m->nb.data[te] = ue;
    if (ue != PM__NO_NB) m->nb.data[ue] = te;
}

/* ---- adjacency -------------------------------------------------------------- */

typedef struct pm__hedge { uint32_t lo, hi, te; } pm__hedge;

static int pm__hedge_cmp(const void *x, const void *y) {
    const pm__hedge *a = x, *b = y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    return a->te < b->te ? -1 : a->te > b->te;
}

/* Neighbours from shared edges: in a valid triangulation an interior edge
 * belongs to exactly two triangles, a boundary edge to one. */
static int pm__adjacency(pm__junction *J, pm__tmesh *m) {
    size_t ne = m->t.len;
    pm__hedge *h = pm_arena_alloc(J->a, (ne ? ne : 1) * sizeof *h);
    if (!h || pm_vec_reserve(J->a, &m->nb, ne) < 0) return PM_ERR_NOMEM;
    m->nb.len = ne;
    for (uint32_t i = 0; i < ne; i++) {
        uint32_t a = m->t.data[i], b = m->t.data[i - i % 3 + (i % 3 + 1) % 3];
        h[i] = (pm__hedge){a < b ? a : b, a < b ? b : a, i};
        m->nb.data[i] = PM__NO_NB;
    }
    qsort(h, ne, sizeof *h, pm__hedge_cmp);
    for (size_t i = 0; i + 1 < ne; i++)
        if (h[i].lo == h[i + 1].lo && h[i].hi == h[i + 1].hi) {
            pm__link(m, h[i].te, h[i + 1].te);
            i++;
        }
    return 0;
}

/* ---- Lawson flips ------------------------------------------------------------- */

static int pm__push(pm__refiner *R, pm__u32s *v, uint32_t x) {
    return pm_vec_push(R->J->a, v, x) < 0 ? PM_ERR_NOMEM : 0;
}

/* Queues triangle T for a check unless it is queued already. */
static int pm__requeue(pm__refiner *R, uint32_t T) {
    while (R->dirty.len <= T)
        if (pm_vec_push(R->J->a, &R->dirty, 0) < 0) return PM_ERR_NOMEM;
    if (R->dirty.data[T]) return 0;
    R->dirty.data[T] = 1;
    return pm__push(R, &R->queue, T);
}

/* Flips edge te (triangle te / 3, edge te % 3) when the far vertex of its
 * neighbour lies strictly inside its circumcircle and both new triangles
 * are strictly counter-clockwise. Queues the four outer edges and both
 * triangles then. */
static int pm__flip(pm__refiner *R, uint32_t te) {
    pm__tmesh *m = R->m;
    uint32_t ue = m->nb.data[te];
    if (ue == PM__NO_NB) return 0;
    uint32_t T = te / 3, e = te % 3, N = ue / 3, f = ue % 3;
    uint32_t *t = &m->t.data[3 * T], *n = &m->t.data[3 * N];
    uint32_t a = t[e], b = t[(e + 1) % 3], c = t[(e + 2) % 3], d = n[(f + 2) % 3];
    if (!(pm__incircle_v(m, a, b, c, d) > 0)) return 0;
    if (!(pm__orient_v(m, a, d, c) > 0) || !(pm__orient_v(m, d, b, c) > 0)) return 0;
    uint32_t x1 = m->nb.data[3 * T + (e + 1) % 3], x2 = m->nb.data[3 * T + (e + 2) % 3];
    uint32_t y1 = m->nb.data[3 * N + (f + 1) % 3], y2 = m->nb.data[3 * N + (f + 2) % 3];
    /* T = (c, a, d), N = (d, b, c): the new edge is c-d. */
    t[0] = c; t[1] = a; t[2] = d;
    n[0] = d; n[1] = b; n[2] = c;
    pm__link(m, 3 * T, x2);
    pm__link(m, 3 * T + 1, y1);
    pm__link(m, 3 * N, y2);
    pm__link(m, 3 * N + 1, x1);
    pm__link(m, 3 * T + 2, 3 * N + 2);
    int rc = 0;
    uint32_t outer[4] = {3 * T, 3 * T + 1, 3 * N, 3 * N + 1};
    for (int i = 0; i < 4 && rc == 0; i++) rc = pm__push(R, &R->stack, outer[i]);
    if (rc == 0) rc = pm__requeue(R, T);
    return rc == 0 ? pm__requeue(R, N) : rc;
}

static int pm__flip_all(pm__refiner *R) {
    int rc = 0;
    while (rc == 0 && R->stack.len > 0) rc = pm__flip(R, R->stack.data[--R->stack.len]);
    return rc;
}

/* ---- height error ------------------------------------------------------------- */

static double pm__field(const pm__refiner *R, double x, double y) {
    return pm__jheight(R->J, pm_v2_xy(x, y)) + R->yoff;
}

/* The largest gap between the triangle's linear heights and the field, at
 * its centroid and its edge midpoints (or the first one found above tol). */
static double pm__tri_error(const pm__refiner *R, uint32_t T) {
    const pm__tmesh *m = R->m;
    const uint32_t *t = &m->t.data[3 * T];
    pm_v2 p[3];
    double y[3], e = 0;
    for (int i = 0; i < 3; i++) { p[i] = m->v.data[t[i]]; y[i] = m->y.data[t[i]]; }
    e = fabs((y[0] + y[1] + y[2]) / 3 -
             pm__field(R, (p[0].x + p[1].x + p[2].x) / 3, (p[0].y + p[1].y + p[2].y) / 3));
    for (int i = 0; i < 3 && !(e > R->J->tol); i++) {
        int j = (i + 1) % 3;
        e = fmax(e, fabs(0.5 * (y[i] + y[j]) -
                         pm__field(R, 0.5 * (p[i].x + p[j].x), 0.5 * (p[i].y + p[j].y))));
    }
    return e;
}

/* ---- point insertion ---------------------------------------------------------- */

static int pm__add_vertex(pm__refiner *R, pm_v2 p, uint32_t *id) {
    pm__tmesh *m = R->m;
    pm__junction *J = R->J;
    *id = (uint32_t)m->v.len;
    if (pm_vec_push(J->a, &m->v, p) < 0) return PM_ERR_NOMEM;
    double y = pm__final_y(J, pm__jheight(J, p) + R->yoff);
    return pm_vec_push(J->a, &m->y, y) < 0 ? PM_ERR_NOMEM : 0;
}

static int pm__new_tri(pm__refiner *R, uint32_t *T) {
    pm__tmesh *m = R->m;
    *T = (uint32_t)(m->t.len / 3);
    if (pm_vec_reserve(R->J->a, &m->t, m->t.len + 3) < 0 ||
        pm_vec_reserve(R->J->a, &m->nb, m->nb.len + 3) < 0)
        return PM_ERR_NOMEM;
    m->t.len += 3;
    m->nb.len += 3;
    return 0;
}

static void pm__set_tri(pm__tmesh *m, uint32_t T, uint32_t a, uint32_t b, uint32_t c) {
    m->t.data[3 * T] = a;
    m->t.data[3 * T + 1] = b;
    m->t.data[3 * T + 2] = c;
}

/* Queues the new triangles and the edges opposite the new point. */
static int pm__after_insert(pm__refiner *R, const uint32_t *tris, int n) {
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        rc = pm__push(R, &R->stack, 3 * tris[i]);
        if (rc == 0) rc = pm__requeue(R, tris[i]);
    }
    return rc == 0 ? pm__flip_all(R) : rc;
}

/* p into triangle T = (a, b, c): (a, b, p), (b, c, p), (c, a, p), when all
 * three are strictly counter-clockwise. Returns 1 when inserted. */
static int pm__insert_in(pm__refiner *R, uint32_t T, pm_v2 p) {
    pm__tmesh *m = R->m;
    uint32_t a = m->t.data[3 * T], b = m->t.data[3 * T + 1], c = m->t.data[3 * T + 2];
    pm_v2 pa = pm__pt(m, a), pb = pm__pt(m, b), pc = pm__pt(m, c);
    if (!(pm__or(pa, pb, p) > 0) || !(pm__or(pb, pc, p) > 0) || !(pm__or(pc, pa, p) > 0)) return 0;
    uint32_t v = 0, T1 = 0, T2 = 0;   /* set below; -O3 cannot see it */
    int rc = pm__add_vertex(R, p, &v);
    if (rc == 0) rc = pm__new_tri(R, &T1);
    if (rc == 0) rc = pm__new_tri(R, &T2);
    if (rc < 0) return rc;
    uint32_t x1 = m->nb.data[3 * T + 1], x2 = m->nb.data[3 * T + 2];
    pm__set_tri(m, T, a, b, v);
    pm__set_tri(m, T1, b, c, v);
    pm__set_tri(m, T2, c, a, v);
    pm__link(m, 3 * T1, x1);
    pm__link(m, 3 * T2, x2);
    pm__link(m, 3 * T + 1, 3 * T1 + 2);
    pm__link(m, 3 * T + 2, 3 * T2 + 1);
    pm__link(m, 3 * T1 + 1, 3 * T2 + 2);
    rc = pm__after_insert(R, (uint32_t[]){T, T1, T2}, 3);
    return rc < 0 ? rc : 1;
}

/* p splits interior edge te of T = (a, b, c), whose neighbour N = (b, a,
 * d): (c, a, p), (b, c, p), (a, d, p), (d, b, p), when all four are
 * strictly counter-clockwise (p need not lie exactly on a-b: it is
 * snapped). Returns 1 when inserted. */
static int pm__insert_on(pm__refiner *R, uint32_t te, pm_v2 p) {
    pm__tmesh *m = R->m;
    uint32_t ue = m->nb.data[te], T = te / 3, e = te % 3, N = ue / 3, f = ue % 3;
    const uint32_t *t = &m->t.data[3 * T], *n = &m->t.data[3 * N];
    uint32_t a = t[e], b = t[(e + 1) % 3], c = t[(e + 2) % 3], d = n[(f + 2) % 3];
    pm_v2 pa = pm__pt(m, a), pb = pm__pt(m, b), pc = pm__pt(m, c), pd = pm__pt(m, d);
    if (!(pm__or(pc, pa, p) > 0) || !(pm__or(pb, pc, p) > 0) || !(pm__or(pa, pd, p) > 0) ||
        !(pm__or(pd, pb, p) > 0))
        return 0;
    uint32_t x1 = m->nb.data[3 * T + (e + 1) % 3], x2 = m->nb.data[3 * T + (e + 2) % 3];
    uint32_t y1 = m->nb.data[3 * N + (f + 1) % 3], y2 = m->nb.data[3 * N + (f + 2) % 3];
    uint32_t v = 0, T1 = 0, N1 = 0;
    int rc = pm__add_vertex(R, p, &v);
    if (rc == 0) rc = pm__new_tri(R, &T1);
    if (rc == 0) rc = pm__new_tri(R, &N1);
    if (rc < 0) return rc;
    pm__set_tri(m, T, c, a, v);
    pm__set_tri(m, T1, b, c, v);
    pm__set_tri(m, N, a, d, v);
    pm__set_tri(m, N1, d, b, v);
    pm__link(m, 3 * T, x2);
    pm__link(m, 3 * T1, x1);
    pm__link(m, 3 * N, y1);
    pm__link(m, 3 * N1, y2);
    pm__link(m, 3 * T + 1, 3 * N + 2);
    pm__link(m, 3 * T + 2, 3 * T1 + 1);
    pm__link(m, 3 * T1 + 2, 3 * N1 + 1);
    pm__link(m, 3 * N + 1, 3 * N1 + 2);
    rc = pm__after_insert(R, (uint32_t[]){T, T1, N, N1}, 4);
    return rc < 0 ? rc : 1;
}

static double pm__edge_len2(const pm__tmesh *m, uint32_t T, uint32_t e) {
    pm_v2 a = m->v.data[m->t.data[3 * T + e]], b = m->v.data[m->t.data[3 * T + (e + 1) % 3]];
    pm_v2 d = pm_v2_sub(b, a);
    return pm_v2_dot(d, d);
}

/* The point that splits interior edge te: its snapped midpoint, or (when
 * that would fold a triangle: T is a sliver thinner than the snap grid)
 * the snapped point halfway from that midpoint to the neighbour's far
 * vertex, well inside the quad both triangles make. Returns 1 when one
 * went in. */
static int pm__split_edge(pm__refiner *R, uint32_t te) {
    pm__tmesh *m = R->m;
    uint32_t T = te / 3, e = te % 3, ue = m->nb.data[te];
    pm_v2 a = m->v.data[m->t.data[3 * T + e]], b = m->v.data[m->t.data[3 * T + (e + 1) % 3]];
    pm_v2 mid = pm_v2_scale(pm_v2_add(a, b), 0.5);
    int rc = pm__insert_on(R, te, pm__final(R->J, mid));
    if (rc != 0) return rc;
    pm_v2 d = m->v.data[m->t.data[3 * (ue / 3) + (ue % 3 + 2) % 3]];
    return pm__insert_on(R, te, pm__final(R->J, pm_v2_scale(pm_v2_add(mid, d), 0.5)));
}

/* Refines triangle T if its heights stray too far: the midpoint of its
 * longest edge when that edge is interior, else its centroid; when the
 * snap grid leaves no room for those (slivers), a split of any of its
 * interior edges that fits. Returns 1 when a point was added. */
static int pm__refine_tri(pm__refiner *R, uint32_t T) {
    pm__tmesh *m = R->m;
    uint32_t order[3] = {0, 1, 2};
    for (int i = 1; i < 3; i++)
        for (int j = i; j > 0 && pm__edge_len2(m, T, order[j]) > pm__edge_len2(m, T, order[j - 1]); j--) {
            uint32_t t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    if (sqrt(pm__edge_len2(m, T, order[0])) < R->J->hmin || !(pm__tri_error(R, T) > R->J->tol))
        return 0;
    int rc = 0;
    pm_v2 a = m->v.data[m->t.data[3 * T]], b = m->v.data[m->t.data[3 * T + 1]],
           c = m->v.data[m->t.data[3 * T + 2]];
    uint32_t e0 = 3 * T + order[0];
    if (m->nb.data[e0] != PM__NO_NB) {
        pm_v2 p = m->v.data[m->t.data[e0]], q = m->v.data[m->t.data[3 * T + (order[0] + 1) % 3]];
        rc = pm__insert_on(R, e0, pm__final(R->J, pm_v2_scale(pm_v2_add(p, q), 0.5)));
        if (rc != 0) return rc;
    }
    pm_v2 g = pm_v2_xy((a.x + b.x + c.x) / 3, (a.y + b.y + c.y) / 3);
    rc = pm__insert_in(R, T, pm__final(R->J, g));
    for (int i = 0; i < 3 && rc == 0; i++)
        if (m->nb.data[3 * T + order[i]] != PM__NO_NB) rc = pm__split_edge(R, 3 * T + order[i]);
    return rc;
}

int pm__tmesh_refine(pm__junction *J, pm__tmesh *m, double yoff, size_t max_new) {
    pm__refiner R;
    memset(&R, 0, sizeof R);
    R.J = J;
    R.m = m;
    R.yoff = yoff;
    int rc = pm__adjacency(J, m);
    for (uint32_t i = 0; rc == 0 && i < m->t.len; i++) rc = pm__push(&R, &R.stack, i);
    if (rc == 0) rc = pm__flip_all(&R);
    for (uint32_t T = 0; rc == 0 && T < m->t.len / 3; T++) rc = pm__requeue(&R, T);
    size_t limit = m->v.len + max_new;
    while (rc == 0 && R.head < R.queue.len && m->v.len < limit) {
        uint32_t T = R.queue.data[R.head++];
        R.dirty.data[T] = 0;
        rc = pm__refine_tri(&R, T);
        rc = rc < 0 ? rc : 0;
    }
    return rc;
}

/* Junction mesh: snaps the contour to its final float coordinates, checks
 * it there (the only coordinates that matter), ear-clips it, and builds the
 * asphalt, curb, sidewalk and island primitives. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "junction/junction_internal.h"
#include "geom/earclip.h"
#include "geom/geom.h"
#include "geom/polygon.h"
#include "geom/predicates.h"

#ifndef PM__JMESH_STAR
#define PM__JMESH_STAR(s) (s)   /* tests: whether the star proof is used, and how often it holds */
#endif

/* ---- simple-polygon test --------------------------------------------------- */

typedef struct pm__edge { double x0, x1, y0, y1; size_t i; } pm__edge;

static bool pm__edge_before(const pm__edge *a, const pm__edge *b) {
    return a->x0 < b->x0 || (a->x0 == b->x0 && a->i < b->i);
}

/* Sorts e[0..n-1] by (x0, i), a total order (so any sort gives the same
 * result), bottom-up merging through tmp; returns the sorted array (e or
 * tmp). Runs of 8 are first sorted by insertion. */
static pm__edge *pm__edge_sort(pm__edge *e, pm__edge *tmp, size_t n) {
    for (size_t lo = 0; lo < n; lo += 8) {
        size_t hi = lo + 8 < n ? lo + 8 : n;
        for (size_t i = lo + 1; i < hi; i++) {
            pm__edge x = e[i];
            size_t j = i;
            while (j > lo && pm__edge_before(&x, &e[j - 1])) { e[j] = e[j - 1]; j--; }
            e[j] = x;
        }
    }
    pm__edge *src = e, *dst = tmp;
    for (size_t w = 8; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) dst[k++] = pm__edge_before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        pm__edge *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

/* The cheap half first: most corners are not sharp, and need no exact
 * orientation. */
static bool pm__folds(pm_v2 a, pm_v2 b, pm_v2 c) {
    if (!(pm_v2_dot(pm_v2_sub(a, b), pm_v2_sub(c, b)) > 0)) return false;
    double pa[2] = {a.x, a.y}, pb[2] = {b.x, b.y}, pc[2] = {c.x, c.y};
    return pm_orient2d(pa, pb, pc) == 0;
}

bool pm__poly_simple(const pm_v2 *p, size_t n, size_t bad[2]) {
    size_t scratch[2];
    if (!bad) bad = scratch;
    bad[0] = bad[1] = 0;
    if (n < 3) return false;
    for (size_t i = 0, h = n - 1; i < n; h = i++) {
        size_t j = i + 1 < n ? i + 1 : 0;
        bad[0] = h;
        bad[1] = i;
        if (p[i].x == p[j].x && p[i].y == p[j].y) return false;
        if (pm__folds(p[h], p[i], p[j])) return false;
    }
    /* Junction contours are short: their edges sort on the stack. */
    pm__edge stack[2 * 128], *heap = NULL, *e = stack;
    if (n > 128 && !(e = heap = malloc(2 * n * sizeof *e))) return false;
    for (size_t i = 0; i < n; i++) {
        pm_v2 a = p[i], b = p[i + 1 < n ? i + 1 : 0];
        e[i] = (pm__edge){a.x < b.x ? a.x : b.x, a.x < b.x ? b.x : a.x,
                          a.y < b.y ? a.y : b.y, a.y < b.y ? b.y : a.y, i};
    }
    /* Sweep along x: only edges whose x ranges overlap can meet. */
    e = pm__edge_sort(e, e + n, n);
    bool ok = true;
    for (size_t u = 0; u < n && ok; u++) {
        for (size_t v = u + 1; v < n && e[v].x0 <= e[u].x1 && ok; v++) {
            if (e[v].y0 > e[u].y1 || e[v].y1 < e[u].y0) continue;
            size_t i = e[u].i, j = e[v].i;
            size_t d = i > j ? i - j : j - i;
            if (d == 1 || d == n - 1) continue;   /* neighbours: checked by pm__folds */
            double a[2] = {p[i].x, p[i].y}, b[2] = {p[(i + 1) % n].x, p[(i + 1) % n].y};
            double c[2] = {p[j].x, p[j].y}, dd[2] = {p[(j + 1) % n].x, p[(j + 1) % n].y};
            if (pm_segments_intersect(a, b, c, dd)) {
                ok = false;
                bad[0] = i < j ? i : j;
                bad[1] = i < j ? j : i;
            }
        }
    }
    free(heap);
    return ok;
}

/* Twice the signed area (counter-clockwise positive). */
static double pm__area2(const pm_v2 *p, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += pm_v2_cross(p[i], p[i + 1 < n ? i + 1 : 0]);
    return s;
}

/* ---- snapping ------------------------------------------------------------- */

/* Drops consecutive repeats (cyclically) from pts[0..n-1] in place, writing
 * for every input position the index it became; returns the new count. */
static size_t pm__dedupe(pm_v2 *pts, size_t n, size_t *map, bool cyclic) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && pm_v2_eq(pts[m - 1], pts[i])) { map[i] = m - 1; continue; }
        pts[m] = pts[i];
        map[i] = m++;
    }
    if (cyclic && m > 1 && pm_v2_eq(pts[m - 1], pts[0])) {
        for (size_t i = 0; i < n; i++) if (map[i] == m - 1) map[i] = 0;
        m--;
    }
    return m;
}

/* ---- contour ---------------------------------------------------------------- */

/* Raw contour: R_0, block 0 without its last point, R_1, block 1, ... where
 * block k runs from L_k to R_{k+1}. start[k] is R_k's raw index. */
typedef struct pm__raw {
    size_t n;
    pm_v2 *pts;
    size_t *start, *map;
} pm__raw;

static size_t pm__raw_index(const pm__junction *J, const pm__raw *raw, size_t k, size_t j) {
    const pm__jblock *b = &J->blocks[k];
    if (j + 1 == b->pts.len) return raw->start[(k + 1) % J->n];
    return raw->start[k] + 1 + j;
}

/* The corner (block) a final contour vertex came from: raw points
 * start[k] + 1 .. start[k + 1] - 1 are block k's, start[k] is arm k's right
 * mouth, which closes block k - 1. */
static size_t pm__vertex_block(const pm__junction *J, const pm__raw *raw, size_t v) {
    for (size_t i = 0; i < raw->n; i++) {
        if (raw->map[i] != v) continue;
        size_t k = J->n - 1;
        while (raw->start[k] > i) k--;
        return raw->start[k] == i ? (k + J->n - 1) % J->n : k;
    }
    return 0;
}

/* Names the arms whose corners hold the two contour edges that meet. */
static int pm__contour_fail(pm__junction *J, const pm__raw *raw, const size_t bad[2]) {
    size_t u = pm__vertex_block(J, raw, bad[0]), v = pm__vertex_block(J, raw, bad[1]);
    int ids[4] = {J->arms[u].index, J->arms[(u + 1) % J->n].index,
                  J->arms[v].index, J->arms[(v + 1) % J->n].index};
    int rc = pm__jfail(J, PM_JUNCTION_SELF_INTERSECTION, -1, -1,
                       "the junction contour would cross itself near arms");
    J->diag->narms = 0;
    size_t len = strlen(J->diag->message);
    for (int i = 0; i < 4; i++) {
        bool seen = false;
        for (size_t j = 0; j < J->diag->narms; j++) seen = seen || J->diag->arms[j] == ids[i];
        if (seen) continue;
        J->diag->arms[J->diag->narms++] = ids[i];
        if (len + 12 < sizeof J->diag->message)
            len += (size_t)snprintf(J->diag->message + len, sizeof J->diag->message - len,
                                    "%s %d", J->diag->narms > 1 ? "," : "", ids[i]);
    }
    return rc;
}

static int pm__contour(pm__junction *J, pm__raw *raw) {
    size_t n = 0;
    for (size_t k = 0; k < J->n; k++) n += J->blocks[k].pts.len;
    raw->n = n;
    raw->pts = pm_arena_alloc(J->a, n * sizeof *raw->pts);
    raw->map = pm_arena_alloc(J->a, n * sizeof *raw->map);
    raw->start = pm_arena_alloc(J->a, J->n * sizeof *raw->start);
    if (!raw->pts || !raw->map || !raw->start) return PM_ERR_NOMEM;
    size_t m = 0;
    for (size_t k = 0; k < J->n; k++) {
        const pm__jblock *prev = &J->blocks[(k + J->n - 1) % J->n], *b = &J->blocks[k];
        raw->start[k] = m;
        raw->pts[m++] = pm__final(J, prev->pts.data[prev->pts.len - 1].p);
        for (size_t j = 0; j + 1 < b->pts.len; j++) raw->pts[m++] = pm__final(J, b->pts.data[j].p);
    }
    assert(m == n);
    J->contour = pm_arena_alloc(J->a, n * sizeof *J->contour);
    if (!J->contour) return PM_ERR_NOMEM;
    memcpy(J->contour, raw->pts, n * sizeof *J->contour);
    J->ncontour = pm__dedupe(J->contour, n, raw->map, true);
    J->mouth_left = pm_arena_alloc(J->a, J->n * sizeof *J->mouth_left);
    J->mouth_right = pm_arena_alloc(J->a, J->n * sizeof *J->mouth_right);
    if (!J->mouth_left || !J->mouth_right) return PM_ERR_NOMEM;
    for (size_t k = 0; k < J->n; k++) {
        J->mouth_right[k] = (uint32_t)raw->map[raw->start[k]];
        J->mouth_left[k] = (uint32_t)raw->map[raw->start[k] + 1];
        if (J->mouth_left[k] == J->mouth_right[k])
            return pm__jfail(J, PM_JUNCTION_TOO_SMALL, J->arms[k].index, -1,
                             "arm %d's mouth collapses to a point when snapped: it is too "
                             "narrow for the snap grid or for float precision this far from "
                             "the origin", J->arms[k].index);
    }
    J->contour_xy = pm_arena_alloc(J->a, 2 * J->ncontour * sizeof *J->contour_xy);
    if (!J->contour_xy) return PM_ERR_NOMEM;
    for (size_t i = 0; i < J->ncontour; i++)
        J->contour_xy[2 * i] = J->contour[i].x, J->contour_xy[2 * i + 1] = J->contour[i].y;
    /* A contour star-shaped around the centre (pm_polygon_star_around,
     * exact: every edge turns strictly counter-clockwise around it, and it
     * winds once) is one pm__poly_simple accepts, so the sweep is left
     * out: each edge keeps to its own sector of less than 180 degrees
     * round the centre (not through it), the sectors tile the turn, so
     * edges that are not neighbours never meet; no point repeats (an
     * edge's ends differ); and no corner folds back, since its two
     * neighbours lie strictly on either side of the line from the centre
     * through it. The usual junction contour is. */
    const double c[2] = {J->c.x, J->c.y};
    J->star = PM__JMESH_STAR(J->ncontour >= 3 && pm_polygon_star_around(J->contour_xy, J->ncontour, c));
    size_t bad[2];
    if (!J->star && !pm__poly_simple(J->contour, J->ncontour, bad))
        return pm__contour_fail(J, raw, bad);
    if (!(pm__area2(J->contour, J->ncontour) > 0))
        return pm__jfail(J, PM_JUNCTION_SELF_INTERSECTION, -1, -1,
                         "the junction contour turns the wrong way round");
    return 0;
}

/* ---- heights and vertices ------------------------------------------------- */

/* Inlined at each of its calls (a few stores there: the junction's
 * slabs add tens of thousands of vertices in a town). */
static inline __attribute__((always_inline)) int pm__vertex(pm__junction *J, pm_prim *prim, pm_v2 p, float y,
                                                            bool planar_uv, float u, float v) {
    float pos[3] = {(float)p.x, y, (float)-p.y};
    double s = J->prm->uv_scale;
    float uv[2] = {u, v};
    if (planar_uv) {
        uv[0] = (float)((p.x - J->c.x) * s);
        uv[1] = (float)((-p.y - -J->c.y) * s);
    }
    return pm_prim_add_vertex(J->scene, prim, pos, NULL, uv, NULL) < 0 ? PM_ERR_NOMEM : 0;
}

/* Re-finds a primitive after pm_scene_add_prim may have moved the array. */
static pm_prim *pm__prim(pm__junction *J, uint32_t i) { return &J->scene->prims[i]; }

/* ---- asphalt ---------------------------------------------------------------- */

typedef PM_VEC(uint32_t) pm__tris;

/* Ear-clips the simple counter-clockwise polygon pts[0..n-1], appending its
 * triangles to out as ids[i] (i itself when ids is NULL). */
/* pm__earclip of x, y pairs; star: a point the polygon is star-shaped
 * around (pm_earclip_star: the same triangles), or NULL. */
static int pm__earclip_xy(pm__junction *J, const double *xy, size_t n, const uint32_t *ids,
                          const double *star, pm__tris *out) {
    /* Without ids the triangles go straight into out's room. */
    if (pm_vec_reserve(J->a, out, out->len + pm_earclip_bound(n)) < 0) return PM_ERR_NOMEM;
    uint32_t *tri = ids ? pm_arena_alloc(J->a, pm_earclip_bound(n) * sizeof *tri) : out->data + out->len;
    if (!tri) return PM_ERR_NOMEM;
    long nt = star ? pm_earclip_star(J->a, xy, n, star, tri) : pm_earclip(J->a, xy, n, tri);
    if (nt == PM_ERR_NOMEM) return PM_ERR_NOMEM;
    if (nt < 0)
        return pm__jfail(J, PM_JUNCTION_SELF_INTERSECTION, -1, -1,
                         "the junction contour cannot be triangulated");
    uint32_t *o = out->data + out->len;
    for (size_t i = 0; ids && i < 3 * (size_t)nt; i++) o[i] = ids[tri[i]];
    out->len += 3 * (size_t)nt;
    return 0;
}

static int pm__earclip(pm__junction *J, const pm_v2 *pts, size_t n, const uint32_t *ids,
                       pm__tris *out) {
    double *xy = pm_arena_alloc(J->a, 2 * n * sizeof *xy);
    if (!xy) return PM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) { xy[2 * i] = pts[i].x; xy[2 * i + 1] = pts[i].y; }
    return pm__earclip_xy(J, xy, n, ids, NULL, out);
}

/* The whole triangles of t[0..n-1] added to prim: copied in one block
 * when prim has room for them (what pm_prim_add_tri would store), else
 * one by one. */
static int pm__emit_tris(pm__junction *J, pm_prim *prim, const uint32_t *t, size_t n) {
    n -= n % 3;
    if (prim->icount <= prim->icap && prim->icap - prim->icount >= n) {
        if (n == 0) return 0;
        memcpy(prim->indices + prim->icount, t, n * sizeof *t);
        prim->icount += (uint32_t)n;
        J->scene->validated = false;
        return 0;
    }
    for (size_t i = 0; i < n; i += 3)
        if (pm_prim_add_tri(J->scene, prim, t[i], t[i + 1], t[i + 2]) < 0) return PM_ERR_NOMEM;
    return 0;
}

/* Roundabout ring: one simple polygon per arm, between the radial cuts in
 * the gaps before and after it (outer contour forward, island backward). */
static int pm__ring_sectors(pm__junction *J, const pm__raw *raw, const size_t *imap,
                            pm__tris *out) {
    size_t nc = J->ncontour, ni = J->nisland;
    pm_v2 *pts = pm_arena_alloc(J->a, (nc + ni + 2) * sizeof *pts);
    uint32_t *ids = pm_arena_alloc(J->a, (nc + ni + 2) * sizeof *ids);
    if (!pts || !ids) return PM_ERR_NOMEM;
    for (size_t k = 0; k < J->n; k++) {
        size_t kp = (k + J->n - 1) % J->n;
        size_t o0 = raw->map[pm__raw_index(J, raw, kp, J->blocks[kp].cut)];
        size_t o1 = raw->map[pm__raw_index(J, raw, k, J->blocks[k].cut)];
        size_t i0 = imap[J->cut_island[k]], i1 = imap[J->cut_island[kp]];
        size_t m = 0;
        for (size_t i = o0;; i = (i + 1) % nc) {
            pts[m] = J->contour[i];
            ids[m++] = (uint32_t)i;
            if (i == o1 || m > nc) break;
        }
        for (size_t i = i0;; i = (i + ni - 1) % ni) {
            pts[m] = J->island[i];
            ids[m++] = (uint32_t)(nc + i);
            if (i == i1 || m > nc + ni) break;
        }
        if (m > nc + ni || !pm__poly_simple(pts, m, NULL) || !(pm__area2(pts, m) > 0))
            return pm__jfail(J, PM_JUNCTION_RING_NO_FIT, J->arms[kp].index, J->arms[k].index,
                             "the ring around arm %d crosses itself or the island: make the "
                             "roundabout larger or the island smaller", J->arms[k].index);
        int rc = pm__earclip(J, pts, m, ids, out);
        if (rc < 0) return rc;
    }
    return 0;
}

static int pm__island_points(pm__junction *J, size_t **imap) {
    size_t n = J->island_ang.len;
    J->island = pm_arena_alloc(J->a, n * sizeof *J->island);
    *imap = pm_arena_alloc(J->a, n * sizeof **imap);
    if (!J->island || !*imap) return PM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        double a = J->island_ang.data[i];
        J->island[i] = pm__final(J, pm_v2_axpy(J->c, J->Ri, pm_v2_xy(cos(a), sin(a))));
    }
    J->nisland = pm__dedupe(J->island, n, *imap, true);
    if (!pm__poly_simple(J->island, J->nisland, NULL) || !(pm__area2(J->island, J->nisland) > 0))
        return pm__jfail(J, PM_JUNCTION_RING_NO_FIT, -1, -1, "the island degenerates");
    return 0;
}

/* At most this many points inside the asphalt: the height field's only
 * discontinuity (two mouths sharing a corner point) would otherwise draw
 * points down to the size floor all round it. */
#define PM__MAX_INTERIOR 4096

/* Appends the n points p at their heights to m, whose arrays have room
 * for them (a flat junction's one height computed once). */
static void pm__ground_points(pm__junction *J, pm__tmesh *m, const pm_v2 *p, size_t n) {
    memcpy(m->v.data + m->v.len, p, n * sizeof *p);
    double *y = m->y.data + m->y.len, flat = J->sloped || !n ? 0 : pm__final_y(J, pm__jheight(J, p[0]));
    for (size_t i = 0; i < n; i++) y[i] = J->sloped ? pm__final_y(J, pm__jheight(J, p[i])) : flat;
    m->v.len += n;
    m->y.len += n;
}

/* The asphalt: contour points, then island points, then (sloped junctions)
 * the points refinement adds inside. */
static int pm__asphalt(pm__junction *J, const pm__raw *raw, uint32_t *pi) {
    pm__tmesh m;
    memset(&m, 0, sizeof m);
    size_t *imap = NULL;
    int rc = J->ring ? pm__island_points(J, &imap) : 0;
    /* The boundary's points in one block each (refinement grows them). */
    if (rc == 0 && (pm_vec_reserve(J->a, &m.v, J->ncontour + J->nisland) ||
                    pm_vec_reserve(J->a, &m.y, J->ncontour + J->nisland)))
        return PM_ERR_NOMEM;
    if (rc < 0) return rc;
    pm__ground_points(J, &m, J->contour, J->ncontour);
    if (J->ring) pm__ground_points(J, &m, J->island, J->nisland);
    pm__tris t = {0};
    const double c[2] = {J->c.x, J->c.y};
    rc = J->ring ? pm__ring_sectors(J, raw, imap, &t)
                 : pm__earclip_xy(J, J->contour_xy, J->ncontour, NULL, J->star ? c : NULL, &t);
    if (rc < 0) return rc;
    m.t.data = t.data;
    m.t.len = t.len;
    m.t.cap = t.cap;
    if (J->sloped && (rc = pm__tmesh_refine(J, &m, 0, PM__MAX_INTERIOR)) < 0) return rc;
    pm_prim *prim = pm_scene_add_prim(J->scene, "asphalt", "asphalt", PM_PRIM_UV,
                                      (uint32_t)m.v.len, (uint32_t)m.t.len);
    if (!prim) return PM_ERR_NOMEM;
    *pi = J->scene->nprims - 1;
    for (size_t i = 0; rc == 0 && i < m.v.len; i++)
        rc = pm__vertex(J, prim, m.v.data[i], (float)m.y.data[i], true, 0, 0);
    if (rc == 0) rc = pm__emit_tris(J, prim, m.t.data, m.t.len);
    if (rc < 0) return rc;
    if (!J->prm->no_normals) pm_prim_compute_normals(prim);
    return 0;
}

/* ---- curbs and sidewalks -------------------------------------------------- */

/* One block's curb side after snapping: the curb's points (asphalt
 * vertices, consecutive repeats dropped) and the sidewalk's (inner, outer)
 * pairs, where one curb point may carry several outer points (a round join)
 * and one outer point several curb points (the corner of a wide sidewalk). */
typedef struct pm__side {
    size_t nc, nb;
    uint32_t *cv;      /* curb point: asphalt vertex */
    double *cch;       /* curb point: curb height */
    size_t *bc;        /* band pair: its curb point */
    pm_v2 *bout;       /* band pair: final outer point */
} pm__side;

static int pm__side_points(pm__junction *J, const pm__raw *raw, size_t k, pm__side *s) {
    const pm__jblock *b = &J->blocks[k];
    size_t n = b->pts.len;
    s->cv = pm_arena_alloc(J->a, n * sizeof *s->cv);
    s->cch = pm_arena_alloc(J->a, n * sizeof *s->cch);
    s->bc = pm_arena_alloc(J->a, n * sizeof *s->bc);
    s->bout = pm_arena_alloc(J->a, n * sizeof *s->bout);
    if (!s->cv || !s->cch || !s->bc || !s->bout) return PM_ERR_NOMEM;
    s->nc = s->nb = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t v = (uint32_t)raw->map[pm__raw_index(J, raw, k, j)];
        if (s->nc == 0 || s->cv[s->nc - 1] != v) {
            s->cv[s->nc] = v;
            s->cch[s->nc++] = b->pts.data[j].ch;
        }
        pm_v2 out = pm__final(J, b->pts.data[j].out);
        if (s->nb > 0 && s->bc[s->nb - 1] == s->nc - 1 && pm_v2_eq(s->bout[s->nb - 1], out))
            continue;
        s->bc[s->nb] = s->nc - 1;
        s->bout[s->nb++] = out;
    }
    return 0;
}

static pm_v2 pm__pos2(const pm_prim *p, uint32_t i) {
    return pm_v2_xy((double)p->positions[3 * i], -(double)p->positions[3 * i + 2]);
}

/* The vertical curb face: bottom on the asphalt's own vertices (same
 * floats), top curb height higher, facing the asphalt. Writes the top
 * heights for the sidewalk. */
static int pm__curb_face(pm__junction *J, const pm__side *s, uint32_t asphalt, uint32_t curb,
                         float *top) {
    double u = 0, sc = J->prm->uv_scale;
    uint32_t base = pm__prim(J, curb)->vcount;
    for (size_t j = 0; j < s->nc; j++) {
        const pm_prim *ap = pm__prim(J, asphalt);
        pm_v2 p = pm__pos2(ap, s->cv[j]);
        float ybot = ap->positions[3 * s->cv[j] + 1];
        top[j] = pm__final_y(J, pm__jheight(J, p) + s->cch[j]);
        if (j > 0) u += pm_v2_len(pm_v2_sub(p, pm__pos2(ap, s->cv[j - 1])));
        pm_prim *cp = pm__prim(J, curb);
        int rc = pm__vertex(J, cp, p, ybot, false, (float)(u * sc), 0);
        if (rc == 0) rc = pm__vertex(J, cp, p, top[j], false, (float)(u * sc),
                                     (float)((top[j] - ybot) * sc));
        if (rc < 0) return rc;
    }
    pm_prim *cp = pm__prim(J, curb);
    for (uint32_t j = 0; j + 1 < s->nc; j++) {
        uint32_t b0 = base + 2 * j, t0 = b0 + 1, b1 = b0 + 2, t1 = b0 + 3;
        if (pm_prim_add_tri(J->scene, cp, b0, t1, b1) < 0 ||
            pm_prim_add_tri(J->scene, cp, b0, t0, t1) < 0)
            return PM_ERR_NOMEM;
    }
    return 0;
}

static int pm__side_fail(pm__junction *J, size_t k) {
    const pm__jcorner *C = &J->corners[k];
    int a = J->arms[C->a].index, b = J->arms[C->b].index;
    return pm__jfail(J, PM_JUNCTION_SIDEWALK_NO_FIT, a, b,
                     "the sidewalk between arms %d and %d folds over itself: make it "
                     "narrower or the corner radius larger", a, b);
}

/* Keeps triangle abc when it is counter-clockwise from +Y; a flat one (zero
 * area, from points that snapped onto a line) is left out. Returns
 * PM_ERR_GEOMETRY for a clockwise one: the strip folds there. */
static int pm__band_tri(pm__junction *J, pm__tris *t, const uint32_t v[3], const pm_v2 p[3]) {
    double o = pm_v2_orient(p[0], p[1], p[2]);
    if (o == 0) return 0;
    if (o < 0) return PM_ERR_GEOMETRY;
    for (int i = 0; i < 3; i++)
        if (pm_vec_push(J->a, t, v[i]) < 0) return PM_ERR_NOMEM;
    return 0;
}

/* The band between pairs a and b: a fan around a shared curb point or a
 * shared outer point, else a quad split on the diagonal that keeps both
 * triangles counter-clockwise. */
static int pm__band_step(pm__junction *J, pm__tris *t, const uint32_t q[4], const pm_v2 p[4]) {
    /* q/p: in_a, in_b, out_b, out_a */
    if (q[0] == q[1])
        return pm__band_tri(J, t, (uint32_t[]){q[0], q[3], q[2]}, (pm_v2[]){p[0], p[3], p[2]});
    if (q[2] == q[3])
        return pm__band_tri(J, t, (uint32_t[]){q[0], q[3], q[1]}, (pm_v2[]){p[0], p[3], p[1]});
    if (pm_v2_orient(p[0], p[2], p[1]) > 0 && pm_v2_orient(p[0], p[3], p[2]) > 0) {
        /* Both counter-clockwise, as just tested: pm__band_tri would keep
         * them without testing again. */
        if (pm_vec_reserve(J->a, t, t->len + 6) < 0) return PM_ERR_NOMEM;
        uint32_t *o = t->data + t->len;
        o[0] = q[0], o[1] = q[2], o[2] = q[1], o[3] = q[0], o[4] = q[3], o[5] = q[2];
        t->len += 6;
        return 0;
    }
    int rc = pm__band_tri(J, t, (uint32_t[]){q[0], q[3], q[1]}, (pm_v2[]){p[0], p[3], p[1]});
    return rc < 0 ? rc : pm__band_tri(J, t, (uint32_t[]){q[1], q[3], q[2]}, (pm_v2[]){p[1], p[3], p[2]});
}

/* Where segments ab and cd cross, or false when they do not or are
 * parallel. */
static bool pm__crossing(pm_v2 a, pm_v2 b, pm_v2 c, pm_v2 d, pm_v2 *x) {
    double pa[2] = {a.x, a.y}, pb[2] = {b.x, b.y}, pc[2] = {c.x, c.y}, pd[2] = {d.x, d.y};
    if (!pm_segments_intersect(pa, pb, pc, pd)) return false;
    pm_v2 r = pm_v2_sub(b, a), q = pm_v2_sub(d, c);
    double den = pm_v2_cross(r, q);
    if (den == 0) return false;
    *x = pm_v2_axpy(a, pm_v2_cross(pm_v2_sub(c, a), q) / den, r);
    return true;
}

/* Cuts the loops out of a block's sidewalk outer edge: where the offset of
 * a narrow neck (two fillets close together, a short arm between wide
 * sidewalks) crosses itself, every outer point between the two crossing
 * segments becomes the crossing point, as an offset curve is trimmed. */
static void pm__trim_outer(const pm__junction *J, pm_v2 *o, size_t n) {
    for (size_t j = 0; j + 3 < n; j++) {
        if (pm_v2_eq(o[j], o[j + 1])) continue;
        for (size_t k = n - 2; k >= j + 2; k--) {
            pm_v2 x;
            if (pm_v2_eq(o[k], o[k + 1]) || !pm__crossing(o[j], o[j + 1], o[k], o[k + 1], &x))
                continue;
            x = pm__final(J, x);
            for (size_t i = j + 1; i <= k; i++) o[i] = x;
            break;
        }
    }
}

/* Whether the band's outline (clockwise, no points) is star-shaped round
 * the point halfway from its middle curb point to that point's first
 * outer point (a fillet's band round its arc usually is): then it is one
 * pm__poly_simple accepts, by the proof at pm__contour read backwards
 * (the outline reversed winds counter-clockwise round that point, and
 * pm__poly_simple's answer is the same for a polygon and its reverse:
 * its repeat, fold and crossing tests are each symmetric). The test is
 * pm_polygon_star_around's on the reversed outline, whose edges are the
 * outline's edges b -> a: each must turn strictly counter-clockwise round
 * the point, and one of them cross the ray from it along +x upward. */
static bool pm__band_star(const pm__side *s, const pm_v2 *inner, const pm_v2 *outline, size_t no) {
    if (no < 3 || s->nc == 0) return false;
    size_t mid = s->nc / 2, j = 0;
    while (j < s->nb && s->bc[j] != mid) j++;
    if (j == s->nb) return false;
    const double c[2] = {0.5 * (inner[mid].x + s->bout[j].x), 0.5 * (inner[mid].y + s->bout[j].y)};
    size_t crossings = 0;
    for (size_t i = 0; i < no; i++) {
        const pm_v2 a = outline[i], b = outline[i + 1 == no ? 0 : i + 1];
        const double pa[2] = {a.x, a.y}, pb[2] = {b.x, b.y};
        if (!(pm_orient2d_fast(c, pb, pa) > 0.0)) return false;
        crossings += b.y < c[1] && a.y >= c[1];
    }
    return crossings == 1;
}

/* The sidewalk band: inner edge on the curb's top (same floats), outer edge
 * the block's offset points, one vertex per distinct outer point (oi[j]:
 * band pair j's outer vertex). */
static int pm__sidewalk_band(pm__junction *J, pm__side *s, const float *top,
                             uint32_t asphalt, uint32_t side, size_t k, uint32_t *oi) {
    pm_v2 *inner = pm_arena_alloc(J->a, s->nc * sizeof *inner);
    pm_v2 *outline = pm_arena_alloc(J->a, (s->nc + s->nb) * sizeof *outline);
    size_t *omap = pm_arena_alloc(J->a, (s->nc + s->nb) * sizeof *omap);
    if (!inner || !outline || !omap) return PM_ERR_NOMEM;
    pm__trim_outer(J, s->bout, s->nb);
    uint32_t base = pm__prim(J, side)->vcount;
    for (size_t j = 0; j < s->nc; j++) {
        inner[j] = outline[j] = pm__pos2(pm__prim(J, asphalt), s->cv[j]);
        if (pm__vertex(J, pm__prim(J, side), inner[j], top[j], true, 0, 0) < 0) return PM_ERR_NOMEM;
    }
    for (size_t j = 0; j < s->nb; j++) {
        if (j > 0 && pm_v2_eq(s->bout[j], s->bout[j - 1])) { oi[j] = oi[j - 1]; continue; }
        oi[j] = pm__prim(J, side)->vcount;
        float y = pm__final_y(J, pm__jheight(J, s->bout[j]) + s->cch[s->bc[j]]);
        if (pm__vertex(J, pm__prim(J, side), s->bout[j], y, true, 0, 0) < 0) return PM_ERR_NOMEM;
    }
    /* The band's outline: curb forward, outer edge back (clockwise). */
    uint32_t *ids = pm_arena_alloc(J->a, (s->nc + s->nb) * sizeof *ids);
    if (!ids) return PM_ERR_NOMEM;
    for (size_t j = 0; j < s->nc; j++) ids[j] = base + (uint32_t)j;
    for (size_t j = 0; j < s->nb; j++) {
        outline[s->nc + j] = s->bout[s->nb - 1 - j];
        ids[s->nc + j] = oi[s->nb - 1 - j];
    }
    size_t no = pm__dedupe(outline, s->nc + s->nb, omap, true);
    for (size_t j = 0; j < s->nc + s->nb; j++) ids[omap[j]] = ids[j];
    if (!PM__JMESH_STAR(pm__band_star(s, inner, outline, no)) && !pm__poly_simple(outline, no, NULL))
        return pm__side_fail(J, k);
    if (!(pm__area2(outline, no) < 0)) return pm__side_fail(J, k);
    /* Quads along the band; where they would fold (the trimmed corner of a
     * narrow neck) the outline, simple as checked, is ear-clipped instead. */
    pm__tris t = {0};
    int rc = pm_vec_reserve(J->a, &t, 6 * s->nb) < 0 ? PM_ERR_NOMEM : 0;
    for (size_t j = 0; j + 1 < s->nb && rc == 0; j++) {
        size_t ca = s->bc[j], cb = s->bc[j + 1];
        uint32_t q[4] = {base + (uint32_t)ca, base + (uint32_t)cb, oi[j + 1], oi[j]};
        pm_v2 p[4] = {inner[ca], inner[cb], s->bout[j + 1], s->bout[j]};
        rc = pm__band_step(J, &t, q, p);
    }
    if (rc == PM_ERR_NOMEM) return rc;
    pm_prim *sp = pm__prim(J, side);
    if (rc == 0) {
        for (size_t i = 0; i < t.len; i += 3)
            if (pm_prim_add_tri(J->scene, sp, t.data[i], t.data[i + 1], t.data[i + 2]) < 0)
                return PM_ERR_NOMEM;
        return 0;
    }
    for (size_t a = 0, b = no - 1; a < b; a++, b--) {
        pm_v2 tp = outline[a]; outline[a] = outline[b]; outline[b] = tp;
        uint32_t ti = ids[a]; ids[a] = ids[b]; ids[b] = ti;
    }
    t.len = 0;
    rc = pm__earclip(J, outline, no, ids, &t);
    if (rc == 0) rc = pm__emit_tris(J, sp, t.data, t.len);
    return rc == PM_ERR_GEOMETRY ? pm__side_fail(J, k) : rc;
}

/* A triangle of a vertical face, left out when the heights at its ends
 * round to the same float (a curb lower than float resolution this high). */
static int pm__wall_tri(pm__junction *J, pm_prim *p, uint32_t a, uint32_t b, uint32_t c) {
    const float *pa = p->positions + 3 * a, *pb = p->positions + 3 * b, *pc = p->positions + 3 * c;
    double u[3], v[3];
    for (int i = 0; i < 3; i++) { u[i] = (double)pb[i] - pa[i]; v[i] = (double)pc[i] - pa[i]; }
    if (u[1] * v[2] - u[2] * v[1] == 0 && u[0] * v[1] - u[1] * v[0] == 0) return 0;
    return pm_prim_add_tri(J->scene, p, a, b, c) < 0 ? PM_ERR_NOMEM : 0;
}

static const float *pm__at(pm__junction *J, uint32_t prim, uint32_t v) {
    return pm__prim(J, prim)->positions + 3 * v;
}

/* The slab's outer face: from each distinct outer vertex of the band (same
 * floats) straight down to the ground, the height field there; facing away
 * from the slab (the band's outer edge runs with the contour, the slab on
 * its left). */
static int pm__outer_face(pm__junction *J, const pm__side *s, uint32_t curb, uint32_t side,
                          const uint32_t *oi) {
    double sc = J->prm->uv_scale, u = 0;
    uint32_t base = pm__prim(J, curb)->vcount, m = 0;
    pm_v2 prev = pm_v2_xy(0, 0);
    for (size_t j = 0; j < s->nb; j++) {
        if (j > 0 && oi[j] == oi[j - 1]) continue;
        const float *t = pm__at(J, side, oi[j]);
        pm_v2 p = pm_v2_xy((double)t[0], -(double)t[2]);
        float ytop = t[1], ybot = pm__final_y(J, pm__jheight(J, p));
        if (m > 0) u += pm_v2_len(pm_v2_sub(p, prev));
        prev = p;
        int rc = pm__vertex(J, pm__prim(J, curb), p, ybot, false, (float)(u * sc), 0);
        if (rc == 0) rc = pm__vertex(J, pm__prim(J, curb), p, ytop, false, (float)(u * sc),
                                     (float)(((double)ytop - ybot) * sc));
        if (rc < 0) return rc;
        m++;
    }
    for (uint32_t i = 0; i + 1 < m; i++) {
        uint32_t b0 = base + 2 * i, t0 = b0 + 1, b1 = b0 + 2, t1 = b0 + 3;
        int rc = pm__wall_tri(J, pm__prim(J, curb), b0, b1, t1);
        if (rc == 0) rc = pm__wall_tri(J, pm__prim(J, curb), b0, t1, t0);
        if (rc < 0) return rc;
    }
    return 0;
}

/* An end cap where the slab meets a mouth: the vertical quad from the
 * curb's edge (asphalt vertex cv up to the curb top ytop) to the outer
 * face's edge (band vertex o down to the ground), in the vertical plane
 * through both; it faces back along the arm at the block's start (first)
 * and forward at its end. */
static int pm__end_cap(pm__junction *J, uint32_t asphalt, uint32_t curb, uint32_t side,
                       uint32_t cv, float ytop, uint32_t o, bool first) {
    const float *a = pm__at(J, asphalt, cv), *t = pm__at(J, side, o);
    pm_v2 p = pm_v2_xy((double)a[0], -(double)a[2]), q = pm_v2_xy((double)t[0], -(double)t[2]);
    float pbot = a[1], qtop = t[1], qbot = pm__final_y(J, pm__jheight(J, q));
    double sc = J->prm->uv_scale, w = pm_v2_len(pm_v2_sub(q, p)) * sc;
    uint32_t v = pm__prim(J, curb)->vcount;
    int rc = pm__vertex(J, pm__prim(J, curb), p, pbot, false, 0, 0);
    if (rc == 0) rc = pm__vertex(J, pm__prim(J, curb), p, ytop, false, 0, (float)((ytop - pbot) * sc));
    if (rc == 0) rc = pm__vertex(J, pm__prim(J, curb), q, qtop, false, (float)w, (float)((qtop - pbot) * sc));
    if (rc == 0) rc = pm__vertex(J, pm__prim(J, curb), q, qbot, false, (float)w, (float)((qbot - pbot) * sc));
    if (rc < 0) return rc;
    /* v: curb bottom, v+1: curb top, v+2: outer top, v+3: outer bottom. */
    pm_prim *cp = pm__prim(J, curb);
    if (first) {
        rc = pm__wall_tri(J, cp, v, v + 3, v + 2);
        return rc == 0 ? pm__wall_tri(J, cp, v, v + 2, v + 1) : rc;
    }
    rc = pm__wall_tri(J, cp, v, v + 1, v + 2);
    return rc == 0 ? pm__wall_tri(J, cp, v, v + 2, v + 3) : rc;
}

/* Records a slab's cross-section at a mouth point (diag->slab_ends). */
static void pm__slab_end(pm__junction *J, uint32_t asphalt, uint32_t side, pm_junction_slab_end *e,
                         uint32_t cv, float ytop, uint32_t o) {
    const float *a = pm__at(J, asphalt, cv), *t = pm__at(J, side, o);
    pm_v2 q = pm_v2_xy((double)t[0], -(double)t[2]);
    e->present = true;
    e->curb_vertex = cv;
    e->curb_top[0] = a[0];
    e->curb_top[1] = ytop;
    e->curb_top[2] = a[2];
    memcpy(e->outer_top, t, sizeof e->outer_top);
    e->outer_bottom[0] = t[0];
    e->outer_bottom[1] = pm__final_y(J, pm__jheight(J, q));
    e->outer_bottom[2] = t[2];
}

static int pm__sides(pm__junction *J, const pm__raw *raw, uint32_t asphalt) {
    J->diag->slab_ends = pm_arena_calloc(J->a, 2 * J->n, sizeof *J->diag->slab_ends);
    if (!J->diag->slab_ends) return PM_ERR_NOMEM;
    /* Room for what the slabs below can add (a block of n points: curb
     * face and outer face 2 n vertices each, 8 for end caps, 2 (n - 1)
     * triangles each and 4; band 2 n vertices, at most 2 n triangles), so
     * the arrays are not grown vertex by vertex. */
    size_t npts = 0, nslab = 0;
    for (size_t k = 0; k < J->n; k++)
        if (J->corners[k].sw) npts += J->blocks[k].pts.len, nslab++;
    uint32_t cv = (uint32_t)(4 * npts + 8 * nslab), ci = (uint32_t)(12 * npts + 12 * nslab);
    if (!pm_scene_add_prim(J->scene, "curb", "curb", PM_PRIM_UV, cv, ci)) return PM_ERR_NOMEM;
    uint32_t curb = J->scene->nprims - 1;
    if (!pm_scene_add_prim(J->scene, "sidewalk", "sidewalk", PM_PRIM_UV, (uint32_t)(2 * npts),
                           (uint32_t)(6 * npts)))
        return PM_ERR_NOMEM;
    uint32_t side = J->scene->nprims - 1;
    for (size_t k = 0; k < J->n; k++) {
        if (!J->corners[k].sw) continue;
        if (J->prm->bare_corners && J->prm->bare_corners[J->arms[k].index]) continue;
        pm__side s;
        int rc = pm__side_points(J, raw, k, &s);
        if (rc < 0) return rc;
        if (s.nc < 2) continue;
        float *top = pm_arena_alloc(J->a, s.nc * sizeof *top);
        if (!top) return PM_ERR_NOMEM;
        rc = pm__curb_face(J, &s, asphalt, curb, top);
        uint32_t *oi = pm_arena_alloc(J->a, s.nb * sizeof *oi);
        if (!oi) return PM_ERR_NOMEM;
        if (rc == 0) rc = pm__sidewalk_band(J, &s, top, asphalt, side, k, oi);
        /* Closed on the sides: outer face and both end caps (or open at
         * the mouths for the roads' slabs to continue). */
        if (rc == 0) rc = pm__outer_face(J, &s, curb, side, oi);
        if (rc == 0 && !J->prm->open_mouths)
            rc = pm__end_cap(J, asphalt, curb, side, s.cv[0], top[0], oi[0], true);
        if (rc == 0 && !J->prm->open_mouths)
            rc = pm__end_cap(J, asphalt, curb, side, s.cv[s.nc - 1], top[s.nc - 1], oi[s.nb - 1], false);
        if (rc < 0) return rc;
        /* Block k starts at sorted arm k's left mouth, ends at arm k+1's right. */
        pm__slab_end(J, asphalt, side, &J->diag->slab_ends[2 * J->arms[k].index], s.cv[0], top[0], oi[0]);
        pm__slab_end(J, asphalt, side, &J->diag->slab_ends[2 * J->arms[(k + 1) % J->n].index + 1],
                     s.cv[s.nc - 1], top[s.nc - 1], oi[s.nb - 1]);
    }
    if (!J->prm->no_normals) {
        pm_prim_compute_normals(pm__prim(J, curb));
        pm_prim_compute_normals(pm__prim(J, side));
    }
    return 0;
}

/* ---- roundabout island ---------------------------------------------------- */

/* The island: a raised top (ear-clipped, refined on sloped junctions like
 * the asphalt) and a vertical wall whose bottom sits on the asphalt's inner
 * ring (same floats), facing outward. */
static int pm__island(pm__junction *J, uint32_t asphalt) {
    size_t ni = J->nisland, nc = J->ncontour;
    double hi = J->prm->roundabout.island_height, sc = J->prm->uv_scale, u = 0;
    pm__tmesh m;
    memset(&m, 0, sizeof m);
    for (size_t i = 0; i < ni; i++) {
        double y = pm__final_y(J, pm__jheight(J, J->island[i]) + hi);
        if (pm_vec_push(J->a, &m.v, J->island[i]) < 0 || pm_vec_push(J->a, &m.y, y) < 0)
            return PM_ERR_NOMEM;
    }
    pm__tris t = {0};
    int rc = pm__earclip(J, J->island, ni, NULL, &t);
    if (rc < 0) return rc;
    m.t.data = t.data;
    m.t.len = t.len;
    m.t.cap = t.cap;
    if (J->sloped && (rc = pm__tmesh_refine(J, &m, hi, PM__MAX_INTERIOR)) < 0) return rc;
    size_t nt = m.v.len;
    if (!pm_scene_add_prim(J->scene, "island", "island", PM_PRIM_UV, (uint32_t)(nt + 2 * ni + 2),
                           (uint32_t)(m.t.len + 6 * ni)))
        return PM_ERR_NOMEM;
    uint32_t isl = J->scene->nprims - 1;
    for (size_t i = 0; i < nt; i++)
        if (pm__vertex(J, pm__prim(J, isl), m.v.data[i], (float)m.y.data[i], true, 0, 0) < 0)
            return PM_ERR_NOMEM;
    if ((rc = pm__emit_tris(J, pm__prim(J, isl), m.t.data, m.t.len)) < 0) return rc;
    uint32_t base = (uint32_t)nt;
    for (size_t i = 0; i <= ni; i++) {
        size_t w = i % ni;
        float ybot = pm__prim(J, asphalt)->positions[3 * (nc + w) + 1], top = (float)m.y.data[w];
        if (i > 0) u += pm_v2_len(pm_v2_sub(J->island[w], J->island[i - 1]));
        rc = pm__vertex(J, pm__prim(J, isl), J->island[w], ybot, false, (float)(u * sc), 0);
        if (rc == 0) rc = pm__vertex(J, pm__prim(J, isl), J->island[w], top, false,
                                     (float)(u * sc), (float)((top - ybot) * sc));
        if (rc < 0) return rc;
    }
    pm_prim *ip = pm__prim(J, isl);
    for (uint32_t i = 0; i < ni; i++) {
        uint32_t b0 = base + 2 * i, t0 = b0 + 1, b1 = b0 + 2, t1 = b0 + 3;
        if (pm_prim_add_tri(J->scene, ip, b0, b1, t1) < 0 ||
            pm_prim_add_tri(J->scene, ip, b0, t1, t0) < 0)
            return PM_ERR_NOMEM;
    }
    if (!J->prm->no_normals) pm_prim_compute_normals(ip);
    return 0;
}

int pm__junction_mesh(pm__junction *J) {
    pm__raw raw;
    uint32_t asphalt = 0;
    int rc = pm__heights_init(J);
    if (rc == 0) rc = pm__densify(J);
    if (rc == 0) rc = pm__contour(J, &raw);
    if (rc == 0) rc = pm__asphalt(J, &raw, &asphalt);
    if (rc == 0 && J->any_sidewalk) rc = pm__sides(J, &raw, asphalt);
    if (rc == 0 && J->ring) rc = pm__island(J, asphalt);
    return rc;
}

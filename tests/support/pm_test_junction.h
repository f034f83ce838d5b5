#ifndef PM_TEST_JUNCTION_H
#define PM_TEST_JUNCTION_H
/* Junction invariants (issue 3), shared by tests/core/test_junction.c and
 * bench/bench_junction.c, written against the scene and its metadata only:
 *   - every coordinate snapped, normals unit length, no zero-area triangle,
 *     ground surfaces CCW from +Y, curbs vertical;
 *   - the contour (asphalt vertices 0..n-1) simple and CCW, the asphalt's
 *     triangle areas summing to its area within 1e-9 relative;
 *   - mouths: request order, right -> left a contour edge, on the arm's
 *     left and right looking outward, level at the arm's elevation;
 *   - seams: every contour edge of a corner with a sidewalk shared by the
 *     asphalt and the curb, every curb top edge by the curb and the
 *     sidewalk, the island ring by the asphalt and the island wall;
 *   - the asphalt a triangulation of exactly the contour (minus the island):
 *     every directed edge either a contour edge or paired with its reverse,
 *     points added inside only on sloped junctions, after the contour and
 *     island points;
 *   - heights: at every asphalt triangle's centroid the mesh is within the
 *     documented tolerance of the blend (docs/junction.md, "Heights"),
 *     recomputed here from the metadata's mouths.
 * Checks return NULL, or a message. Also the random arm sets of the
 * property tests and the test of whether a refusal was called for. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "junction/junction.h"
#include "geom/predicates.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "pm_test_slab.h"

#define PI 3.14159265358979323846
#define MAXA 16

typedef struct jcase {
    pm_junction_arm arms[MAXA];
    double lines[MAXA][8];       /* centerline storage */
    pm_junction_params p;
} jcase;

typedef struct jrun {
    pm_arena *a;
    pm_scene *s;
    pm_junction_diag d;
    int rc;
} jrun;

static inline void jcase_init(jcase *c) {
    memset(c, 0, sizeof *c);
    c->p.arms = c->arms;
    c->p.corner_radius = 3;
    c->p.corner_segments = 4;
    c->p.uv_scale = 0.1;
    c->p.snap = 0.001;
}

/* Adds an arm at deg degrees, counter-clockwise seen from +Y from +X, i.e.
 * direction (cos, -sin) in [x, z]. */
static inline pm_junction_arm *add_arm(jcase *c, double deg, double width) {
    pm_junction_arm *a = &c->arms[c->p.narms++];
    a->direction[0] = cos(deg * PI / 180);
    a->direction[1] = -sin(deg * PI / 180);
    a->width = width;
    return a;
}

static inline void set_sidewalks(jcase *c, double w, double ch) {
    for (size_t i = 0; i < c->p.narms; i++) {
        c->arms[i].has_sidewalk = true;
        c->arms[i].sidewalk.width = w;
        c->arms[i].sidewalk.curb_height = ch;
    }
}

static inline void set_roundabout(jcase *c, double r, double ri, uint32_t seg) {
    c->p.has_roundabout = true;
    c->p.roundabout = (pm_junction_roundabout){r, ri, seg, 0.15};
}

/* Generates c in a fresh arena (the caller destroys r.a). */
static inline jrun run(const jcase *c) {
    jrun r;
    memset(&r, 0, sizeof r);
    r.a = pm_arena_create(0);
    r.s = r.a ? pm_scene_create(r.a) : NULL;
    r.rc = r.s ? pm_junction_generate(r.s, &c->p, &r.d) : PM_ERR_NOMEM;
    return r;
}

static inline const pm_prim *find_prim(const pm_scene *s, const char *name) {
    for (uint32_t i = 0; i < s->nprims; i++)
        if (strcmp(s->prims[i].name, name) == 0) return &s->prims[i];
    return NULL;
}

static inline const pm_meta *at(const pm_meta *arr, size_t i) {
    const pm_meta *m = arr->u.kids.first;
    while (i-- && m) m = m->next;
    return m;
}

static inline double num(const pm_meta *m) {
    return m->kind == PM_META_INT ? (double)m->u.i : m->u.n;
}

static inline double mnum(const pm_meta *obj, const char *key) { return num(pm_meta_get(obj, key)); }

/* ---- invariant checker ------------------------------------------------------ */

/* [x, z] of vertex i. */
static inline void xz(const pm_prim *p, uint32_t i, double out[2]) {
    out[0] = p->positions[3 * i];
    out[1] = p->positions[3 * i + 2];
}

/* Twice the area seen from +Y (counter-clockwise positive) of a polygon of
 * [x, z] pairs. */
static inline double area2_xz(const double *pts, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        const double *a = pts + 2 * i, *b = pts + 2 * ((i + 1) % n);
        s += a[1] * b[0] - a[0] * b[1];
    }
    return s;
}

/* Brute force, independent of the generator's sweep: no two non-adjacent
 * edges touch, no adjacent pair folds back. */
static inline bool simple_xz(const double *p, size_t n) {
    if (n < 3) return false;
    for (size_t i = 0; i < n; i++) {
        const double *a = p + 2 * ((i + n - 1) % n), *b = p + 2 * i, *c = p + 2 * ((i + 1) % n);
        if (b[0] == c[0] && b[1] == c[1]) return false;
        if (pm_orient_xz(a, b, c) == 0 &&
            (a[0] - b[0]) * (c[0] - b[0]) + (a[1] - b[1]) * (c[1] - b[1]) > 0)
            return false;
        for (size_t j = i + 2; j < n; j++) {
            if (i == 0 && j == n - 1) continue;
            if (pm_segments_intersect(p + 2 * i, p + 2 * ((i + 1) % n), p + 2 * j,
                                      p + 2 * ((j + 1) % n)))
                return false;
        }
    }
    return true;
}

static inline bool snapped(float v, double g) { return (float)pm_snap((double)v, g) == v; }

/* Position key of a vertex, for seams across primitives. */
typedef struct pkey { float x, y, z; } pkey;
static inline pkey key_of(const pm_prim *p, uint32_t i) {
    pkey k = {p->positions[3 * i], p->positions[3 * i + 1], p->positions[3 * i + 2]};
    return k;
}

static inline int pkey_cmp(pkey a, pkey b) {
    if (a.x != b.x) return a.x < b.x ? -1 : 1;
    if (a.y != b.y) return a.y < b.y ? -1 : 1;
    if (a.z != b.z) return a.z < b.z ? -1 : 1;
    return 0;
}

static inline int pkey_cmp_ptr(const pkey *a, const pkey *b) { return pkey_cmp(*a, *b); }

/* Whether keys (sorted, with y and z swapped: x, z, y order) hold a point
 * straight above k. */
static inline bool has_above(const pkey *keys, size_t n, pkey k) {
    pkey s = {k.x, k.z, k.y};
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (pkey_cmp(keys[mid], s) <= 0) lo = mid + 1; else hi = mid;
    }
    return lo < n && keys[lo].x == k.x && keys[lo].y == k.z;
}

/* Every triangle edge of the scene by position, smaller end first, sorted:
 * how many triangles share an edge, across primitives. */
typedef struct ekey { pkey a, b; } ekey;
typedef struct etable { ekey *e; size_t n; } etable;

static inline int ekey_cmp(const void *x, const void *y) {
    const ekey *p = x, *q = y;
    int c = pkey_cmp(p->a, q->a);
    return c ? c : pkey_cmp(p->b, q->b);
}

static inline ekey ekey_make(pkey a, pkey b) {
    ekey k;
    if (pkey_cmp(a, b) <= 0) { k.a = a; k.b = b; } else { k.a = b; k.b = a; }
    return k;
}

static inline etable edges_build(const pm_scene *s) {
    etable t = {NULL, 0};
    for (uint32_t q = 0; q < s->nprims; q++) t.n += s->prims[q].icount;
    t.e = malloc((t.n ? t.n : 1) * sizeof *t.e);
    size_t m = 0;
    for (uint32_t q = 0; q < s->nprims; q++) {
        const pm_prim *p = &s->prims[q];
        for (uint32_t i = 0; i < p->icount; i += 3)
            for (int e = 0; e < 3; e++)
                t.e[m++] = ekey_make(key_of(p, p->indices[i + e]), key_of(p, p->indices[i + (e + 1) % 3]));
    }
    qsort(t.e, t.n, sizeof *t.e, ekey_cmp);
    return t;
}

static inline int edge_uses(const etable *t, pkey a, pkey b) {
    ekey k = ekey_make(a, b);
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ekey_cmp(&t->e[mid], &k) < 0) lo = mid + 1; else hi = mid;
    }
    int n = 0;
    while (lo < t->n && ekey_cmp(&t->e[lo], &k) == 0) { n++; lo++; }
    return n;
}

/* The last check failure's message. */
static inline char *why_buf(void) {
    static char buf[512];
    return buf;
}
#define FAIL(...) do { snprintf(why_buf(), 512, __VA_ARGS__); return why_buf(); } while (0)

static inline const char *check_prims(const pm_scene *s, double g) {
    for (uint32_t q = 0; q < s->nprims; q++) {
        const pm_prim *p = &s->prims[q];
        for (uint32_t i = 0; i < 3 * p->vcount; i++)
            if (!snapped(p->positions[i], g)) FAIL("%s: coordinate %u = %.9g not snapped", p->name, i, p->positions[i]);
        for (uint32_t i = 0; i < p->vcount; i++) {
            const float *n = p->normals + 3 * i;
            double l = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
            if (fabs(l - 1) > 1e-5) FAIL("%s: normal %u has length %g", p->name, i, l);
        }
        for (uint32_t t = 0; t < p->icount; t += 3) {
            const float *a = p->positions + 3 * p->indices[t], *b = p->positions + 3 * p->indices[t + 1],
                        *c = p->positions + 3 * p->indices[t + 2];
            /* Differences of floats are exact in double. */
            double u[3], v[3];
            for (int k = 0; k < 3; k++) {
                u[k] = (double)b[k] - (double)a[k];
                v[k] = (double)c[k] - (double)a[k];
            }
            /* The normal's y is the exact orientation seen from +Y; x and z
             * only matter for walls. */
            double pa[2] = {a[0], a[2]}, pb[2] = {b[0], b[2]}, pc[2] = {c[0], c[2]};
            double o = pm_orient_xz(pa, pb, pc);
            double nx = u[1] * v[2] - u[2] * v[1], nz = u[0] * v[1] - u[1] * v[0];
            if (o == 0 && nx == 0 && nz == 0) FAIL("%s: triangle %u has zero area", p->name, t / 3);
            /* Ground surfaces face up; the curb is vertical; the island is
             * both (its top and its wall). */
            bool curb = strcmp(p->name, "curb") == 0, island = strcmp(p->name, "island") == 0;
            if (!curb && !island && !(o > 0)) FAIL("%s: triangle %u does not face up", p->name, t / 3);
            if (curb && o != 0) FAIL("curb triangle %u is not vertical", t / 3);
            if (island && o < 0) FAIL("island triangle %u faces down", t / 3);
        }
    }
    return NULL;
}

static inline bool shared_mouth_vertex(const pm_meta *arms, uint32_t v) {
    int uses = 0;
    for (const pm_meta *a = arms->u.kids.first; a; a = a->next) {
        const pm_meta *m = pm_meta_get(a, "mouth");
        uses += mnum(m, "left_index") == v;
        uses += mnum(m, "right_index") == v;
    }
    return uses > 1;
}

typedef struct dedge { uint32_t a, b; } dedge;

static inline int dedge_cmp(const void *x, const void *y) {
    const dedge *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

static inline bool dedge_has(const dedge *e, size_t n, uint32_t a, uint32_t b) {
    dedge k = {a, b};
    return bsearch(&k, e, n, sizeof *e, dedge_cmp) != NULL;
}

/* The triangles' directed edges cancel in pairs except the contour's
 * (i -> i + 1) and the island's (backwards: it is a hole), each once: with
 * every triangle counter-clockwise that makes them cover exactly the area
 * inside the contour and outside the island, once. */
static inline const char *check_cover(const pm_prim *as, size_t nc, size_t nb) {
    size_t n = as->icount;
    dedge *e = malloc((n ? n : 1) * sizeof *e);
    for (uint32_t t = 0; t < n; t += 3)
        for (int k = 0; k < 3; k++) e[t + k] = (dedge){as->indices[t + k], as->indices[t + (k + 1) % 3]};
    qsort(e, n, sizeof *e, dedge_cmp);
    const char *w = NULL;
    for (size_t i = 0; i < n && !w; i++) {
        uint32_t a = e[i].a, b = e[i].b;
        if (i + 1 < n && e[i + 1].a == a && e[i + 1].b == b) { w = "asphalt edge used twice the same way"; break; }
        bool boundary = (a < nc && b == (a + 1) % nc) ||
                        (a >= nc && a < nb && b == nc + (a - nc + (nb - nc) - 1) % (nb - nc));
        if (!boundary && !dedge_has(e, n, b, a)) {
            snprintf(why_buf(), 512, "asphalt edge %u-%u is open but not on the contour", a, b);
            w = why_buf();
        }
    }
    for (uint32_t i = 0; i < nb && !w; i++) {
        uint32_t j = i < nc ? (uint32_t)((i + 1) % nc) : (uint32_t)(nc + (i - nc + (nb - nc) - 1) % (nb - nc));
        if (!dedge_has(e, n, i, j)) {
            snprintf(why_buf(), 512, "boundary edge %u-%u is not an asphalt edge", i, j);
            w = why_buf();
        }
    }
    free(e);
    return w;
}

/* The asphalt: contour simple and counter-clockwise, triangles up with the
 * exact area, mouths on the contour. */
static inline const char *check_asphalt(const pm_scene *s, const jcase *c) {
    const pm_prim *as = find_prim(s, "asphalt");
    if (!as || s->nprims == 0 || &s->prims[0] != as) FAIL("asphalt is not the first primitive");
    const pm_meta *contour = pm_meta_get(s->meta, "contour");
    size_t nc = contour->u.kids.count;
    double *poly = malloc(2 * nc * sizeof *poly);
    for (size_t i = 0; i < nc; i++) {
        xz(as, (uint32_t)i, poly + 2 * i);
        const pm_meta *pt = at(contour, i);
        if (num(at(pt, 0)) != poly[2 * i] || num(at(pt, 1)) != poly[2 * i + 1]) {
            free(poly);
            FAIL("contour point %zu differs from asphalt vertex %zu", i, i);
        }
    }
    bool simple = simple_xz(poly, nc);
    double area = area2_xz(poly, nc);
    free(poly);
    if (!simple) FAIL("contour is not simple");
    if (!(area > 0)) FAIL("contour is not counter-clockwise seen from +Y");
    const pm_meta *rb = pm_meta_get(s->meta, "roundabout");
    if (rb) {
        size_t ni = pm_meta_get(rb, "island")->u.kids.count;
        double *isl = malloc(2 * ni * sizeof *isl);
        for (size_t i = 0; i < ni; i++) xz(as, (uint32_t)(nc + i), isl + 2 * i);
        bool ok = simple_xz(isl, ni);
        double ia = area2_xz(isl, ni);
        free(isl);
        if (!ok || !(ia > 0)) FAIL("island ring is not a simple CCW polygon");
        area -= ia;
        if (as->vcount < nc + ni) FAIL("asphalt has %u vertices, contour+island %zu", as->vcount, nc + ni);
    } else if (as->vcount < nc) {
        FAIL("asphalt has %u vertices, fewer than the contour's %zu", as->vcount, nc);
    }
    size_t nb = nc + (rb ? pm_meta_get(rb, "island")->u.kids.count : 0);
    bool sloped = false;
    for (size_t i = 1; i < c->p.narms; i++) sloped = sloped || c->arms[i].elevation != c->arms[0].elevation;
    if (!sloped && as->vcount != nb) FAIL("a flat junction has %u asphalt vertices, not %zu", as->vcount, nb);
    const char *w = check_cover(as, nc, nb);
    if (w) return w;
    double tri = 0;
    for (uint32_t t = 0; t < as->icount; t += 3) {
        double pts[6];
        for (int k = 0; k < 3; k++) xz(as, as->indices[t + k], pts + 2 * k);
        double o = pm_orient_xz(pts, pts + 2, pts + 4);
        if (!(o > 0)) FAIL("asphalt triangle %u is not CCW from +Y", t / 3);
        tri += area2_xz(pts, 3);
    }
    if (fabs(tri - area) > 1e-9 * fabs(area)) FAIL("triangle area %.12g != contour area %.12g", tri / 2, area / 2);
    /* Euler: every added point strictly inside adds two triangles. */
    size_t nt = (rb ? nb : nc - 2) + 2 * (as->vcount - nb);
    if (as->icount / 3 != nt) FAIL("%u triangles for %zu boundary and %zu inner points", as->icount / 3, nb, as->vcount - nb);
    /* Mouths: request order, right -> left is a contour edge. */
    const pm_meta *arms = pm_meta_get(s->meta, "arms");
    if (arms->u.kids.count != c->p.narms) FAIL("metadata lists %zu arms", arms->u.kids.count);
    for (size_t i = 0; i < c->p.narms; i++) {
        const pm_meta *arm = at(arms, i), *m = pm_meta_get(arm, "mouth");
        if (mnum(arm, "index") != (double)i) FAIL("arm %zu out of order", i);
        uint32_t li = (uint32_t)mnum(m, "left_index"), ri = (uint32_t)mnum(m, "right_index");
        if (li >= nc || ri >= nc || li != (ri + 1) % nc) FAIL("arm %zu mouth %u-%u is not a contour edge", i, ri, li);
        const pm_meta *lp = pm_meta_get(m, "left"), *rp = pm_meta_get(m, "right");
        for (int k = 0; k < 3; k++)
            if (num(at(lp, k)) != as->positions[3 * li + k] || num(at(rp, k)) != as->positions[3 * ri + k])
                FAIL("arm %zu mouth points differ from their vertices", i);
        /* Each mouth edge is level at its arm's elevation, except at a
         * corner vertex two mouths share (sharp corners): the mean there. */
        float e = (float)pm_snap(c->arms[i].elevation, c->p.snap);
        if ((as->positions[3 * li + 1] != e && !shared_mouth_vertex(arms, li)) ||
            (as->positions[3 * ri + 1] != e && !shared_mouth_vertex(arms, ri)))
            FAIL("arm %zu mouth is not at its elevation", i);
        /* Left is on the left looking outward: (right->left) x up along d. */
        double L[2], R[2];
        xz(as, li, L);
        xz(as, ri, R);
        double dx = c->arms[i].direction[0], dz = c->arms[i].direction[1];
        if (c->arms[i].centerline) {
            size_t n = c->arms[i].centerline_len;
            const double *cl = c->arms[i].centerline;
            dx = cl[2 * n - 4] - cl[2 * n - 2];
            dz = cl[2 * n - 3] - cl[2 * n - 1];
        }
        /* left - right points to the arm's left: (dz, -dx). */
        if ((L[0] - R[0]) * dz + (L[1] - R[1]) * -dx <= 0) FAIL("arm %zu mouth sides swapped", i);
    }
    return NULL;
}

/* The sidewalk slabs (curb and sidewalk primitives) closed on the sides:
 * every edge shared by exactly two of their triangles, but the bottom
 * boundary, whose edges both end at a bottom vertex (one with another slab
 * vertex straight above it) and belong to one. */
static inline const char *check_slab(const pm_scene *s) {
    pm_scene sub = *s;
    pm_prim prims[2];
    const pm_prim *curb = find_prim(s, "curb"), *side = find_prim(s, "sidewalk");
    prims[0] = *curb;
    prims[1] = *side;
    sub.prims = prims;
    sub.nprims = 2;
    etable et = edges_build(&sub);
    size_t nv = curb->vcount + side->vcount;
    pkey *keys = malloc((nv ? nv : 1) * sizeof *keys);
    for (uint32_t i = 0; i < curb->vcount; i++) keys[i] = key_of(curb, i);
    for (uint32_t i = 0; i < side->vcount; i++) keys[curb->vcount + i] = key_of(side, i);
    /* Sorted by x, then z, then y (the key's own order is x, y, z). */
    for (size_t i = 0; i < nv; i++) { float t = keys[i].y; keys[i].y = keys[i].z; keys[i].z = t; }
    qsort(keys, nv, sizeof *keys, (int (*)(const void *, const void *))pkey_cmp_ptr);
    const char *w = NULL;
    for (int q = 0; q < 2 && !w; q++) {
        const pm_prim *p = &prims[q];
        for (uint32_t t = 0; t < p->icount && !w; t += 3)
            for (int e = 0; e < 3 && !w; e++) {
                pkey a = key_of(p, p->indices[t + e]), b = key_of(p, p->indices[t + (e + 1) % 3]);
                bool bottom = has_above(keys, nv, a) && has_above(keys, nv, b);
                int u = edge_uses(&et, a, b);
                if (u != (bottom ? 1 : 2)) {
                    snprintf(why_buf(), 512, "%s edge (%g %g %g)-(%g %g %g) is used by %d slab "
                             "triangles, not %d", p->name, a.x, a.y, a.z, b.x, b.y, b.z, u, bottom ? 1 : 2);
                    w = why_buf();
                }
            }
    }
    free(keys);
    free(et.e);
    return w;
}

/* Every vertical face of the slabs faces out of its slab (pm_test_slab.h). */
static inline const char *check_slab_facing(const pm_scene *s, double eps) {
    double g[2];
    long t = pm_test_slab_facing(find_prim(s, "curb"), find_prim(s, "sidewalk"), eps, g);
    if (t >= 0) FAIL("curb triangle %ld at [%g, %g] does not face out of its slab", t, g[0], g[1]);
    return NULL;
}

/* Seams: every asphalt contour edge of a corner with a sidewalk is shared
 * with the curb, every curb top edge with the sidewalk; the island ring with
 * the island wall. */
static inline const char *check_seams_t(const pm_scene *s, const jcase *c, const etable *et);
static inline const char *check_seams(const pm_scene *s, const jcase *c) {
    etable et = edges_build(s);
    const char *w = check_seams_t(s, c, &et);
    free(et.e);
    return w;
}

static inline const char *check_seams_t(const pm_scene *s, const jcase *c, const etable *et) {
    const pm_prim *as = find_prim(s, "asphalt"), *curb = find_prim(s, "curb");
    const pm_meta *contour = pm_meta_get(s->meta, "contour"), *arms = pm_meta_get(s->meta, "arms");
    size_t nc = contour->u.kids.count;
    bool all_sw = true;
    for (size_t i = 0; i < c->p.narms; i++) all_sw = all_sw && c->arms[i].has_sidewalk;
    if (all_sw != (curb != NULL) && all_sw) FAIL("sidewalks requested but no curb primitive");
    if (all_sw) {
        char *mouth = calloc(nc, 1);
        for (size_t i = 0; i < c->p.narms; i++)
            mouth[(size_t)mnum(pm_meta_get(at(arms, i), "mouth"), "right_index")] = 1;
        for (size_t i = 0; i < nc; i++) {
            if (mouth[i]) continue;
            int u = edge_uses(et, key_of(as, (uint32_t)i), key_of(as, (uint32_t)((i + 1) % nc)));
            if (u != 2) { free(mouth); FAIL("contour edge %zu is used by %d triangles, not 2", i, u); }
        }
        free(mouth);
        const char *w = check_slab(s);
        if (w) return w;
    }
    const pm_meta *rb = pm_meta_get(s->meta, "roundabout");
    if (rb) {
        size_t ni = pm_meta_get(rb, "island")->u.kids.count;
        for (size_t i = 0; i < ni; i++) {
            int u = edge_uses(et, key_of(as, (uint32_t)(nc + i)), key_of(as, (uint32_t)(nc + (i + 1) % ni)));
            if (u != 2) FAIL("island ring edge %zu is used by %d triangles", i, u);
        }
    }
    return NULL;
}

/* ---- heights ------------------------------------------------------------------ */

static inline double seg_dist2_xz(const double p[2], const double a[2], const double b[2]) {
    double ab[2] = {b[0] - a[0], b[1] - a[1]}, ap[2] = {p[0] - a[0], p[1] - a[1]};
    double l2 = ab[0] * ab[0] + ab[1] * ab[1], t = l2 > 0 ? (ap[0] * ab[0] + ap[1] * ab[1]) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double d[2] = {ap[0] - ab[0] * t, ap[1] - ab[1] * t};
    return d[0] * d[0] + d[1] * d[1];
}

/* The height field as documented: the arms' elevations blended by inverse
 * squared distance to their mouth edges (as the metadata gives them). */
static inline double blend_at(const pm_scene *s, const jcase *c, const double p[2]) {
    const pm_meta *arms = pm_meta_get(s->meta, "arms");
    double sw = 0, swe = 0, zw = 0, zwe = 0;
    for (size_t i = 0; i < c->p.narms; i++) {
        const pm_meta *m = pm_meta_get(at(arms, i), "mouth");
        const pm_meta *L = pm_meta_get(m, "left"), *R = pm_meta_get(m, "right");
        double a[2] = {num(at(R, 0)), num(at(R, 2))}, b[2] = {num(at(L, 0)), num(at(L, 2))};
        double d2 = seg_dist2_xz(p, a, b), e = c->arms[i].elevation;
        if (d2 == 0) { zw += 1; zwe += e; continue; }
        sw += 1 / d2;
        swe += e / d2;
    }
    return zw > 0 ? zwe / zw : swe / sw;
}

/* The documented bounds: tol = max(1% of the elevation range, 2 x the
 * height noise), hmin = max(contour size / 256, 16 x the ground noise). */
static inline void height_bounds(const pm_scene *s, const jcase *c, double *tol, double *hmin) {
    const pm_prim *as = find_prim(s, "asphalt");
    size_t nc = pm_meta_get(s->meta, "contour")->u.kids.count;
    double lo = c->arms[0].elevation, hi = lo, mn[2] = {INFINITY, INFINITY}, mx[2] = {-INFINITY, -INFINITY}, far = 0;
    for (size_t i = 0; i < c->p.narms; i++) {
        lo = fmin(lo, c->arms[i].elevation);
        hi = fmax(hi, c->arms[i].elevation);
    }
    for (uint32_t i = 0; i < nc; i++) {
        double p[2];
        xz(as, i, p);
        for (int k = 0; k < 2; k++) { mn[k] = fmin(mn[k], p[k]); mx[k] = fmax(mx[k], p[k]); }
        far = fmax(far, fmax(fabs(p[0]), fabs(p[1])));
    }
    *tol = fmax((hi - lo) / 100, 2 * fmax(c->p.snap, 1.1920928955078125e-07 * fmax(fabs(lo), fabs(hi))));
    *hmin = fmax(hypot(mx[0] - mn[0], mx[1] - mn[1]) / 256, 16 * fmax(c->p.snap, 1.1920928955078125e-07 * far));
}

/* The largest gap, in units of tol, between the asphalt and the blend at
 * the centroids of triangles the bound covers: longest edge at least hmin
 * (a little more for the generator's unsnapped bounding box), at least one
 * snap step thick, no vertex that two mouths share (the blend jumps
 * there). *worst_all gets the gap over every triangle. */
static inline double height_gap(const pm_scene *s, const jcase *c, double *worst_all) {
    const pm_prim *as = find_prim(s, "asphalt");
    const pm_meta *arms = pm_meta_get(s->meta, "arms");
    double tol, hmin, worst = 0, all = 0;
    height_bounds(s, c, &tol, &hmin);
    for (uint32_t t = 0; t < as->icount; t += 3) {
        double p[3][2], y = 0, longest = 0, g[2] = {0, 0};
        bool shared = false;
        for (int k = 0; k < 3; k++) {
            xz(as, as->indices[t + k], p[k]);
            y += as->positions[3 * as->indices[t + k] + 1];
            shared = shared || shared_mouth_vertex(arms, as->indices[t + k]);
        }
        for (int k = 0; k < 3; k++) {
            const double *a = p[k], *b = p[(k + 1) % 3];
            longest = fmax(longest, hypot(b[0] - a[0], b[1] - a[1]));
            g[0] += p[k][0] / 3;
            g[1] += p[k][1] / 3;
        }
        double gap = fabs(y / 3 - blend_at(s, c, g)) / tol;
        all = fmax(all, gap);
        /* A sliver thinner than the snap grid has no grid point inside to
         * refine it with. */
        double thick = fabs(pm_orient_xz(p[0], p[1], p[2])) / longest;
        if (!shared && longest >= 1.01 * hmin + 2 * c->p.snap && thick >= c->p.snap)
            worst = fmax(worst, gap);
    }
    if (worst_all) *worst_all = all;
    return worst;
}

/* Every asphalt vertex (but a corner two mouths share) carries the blend,
 * snapped; the surface is within tol of it at the centroids. */
static inline const char *check_heights(const pm_scene *s, const jcase *c) {
    const pm_prim *as = find_prim(s, "asphalt");
    const pm_meta *arms = pm_meta_get(s->meta, "arms");
    for (uint32_t i = 0; i < as->vcount; i++) {
        double p[2], y = as->positions[3 * i + 1];
        xz(as, i, p);
        double e = fabs(y - blend_at(s, c, p));
        if (!shared_mouth_vertex(arms, i) && e > 0.5 * c->p.snap + 1.2e-7 * fabs(y) + 1e-9)
            FAIL("asphalt vertex %u is %g from the blend", i, e);
    }
    double g = height_gap(s, c, NULL);
    if (g > 1 + 1e-6) FAIL("asphalt strays %.3f x tol from the blend at a centroid", g);
    return NULL;
}

static inline const char *check_all(const jrun *r, const jcase *c, bool seams) {
    if (r->rc != 0) FAIL("generation failed: %s (%s)", pm_junction_error_name(r->d.error), r->d.message);
    const char *w = check_prims(r->s, c->p.snap);
    if (!w) w = check_asphalt(r->s, c);
    if (!w) w = check_heights(r->s, c);
    if (!w && seams) w = check_seams(r->s, c);
    return w;
}


/* A random arm set the api would accept, with neighbours at least 6 degrees
 * apart (the generator needs 5). */
static inline void random_case(pm_rng *g, jcase *c) {
    jcase_init(c);
    size_t n = 2 + (size_t)pm_rng_below(g, 7);
    double ang[MAXA] = {0}, gap = 0;
    for (;;) {
        for (size_t i = 0; i < n; i++) ang[i] = pm_rng_range(g, 0, 360);
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && ang[j - 1] > ang[j]; j--) {
                double t = ang[j]; ang[j] = ang[j - 1]; ang[j - 1] = t;
            }
        gap = ang[0] + 360 - ang[n - 1];
        for (size_t i = 1; i < n; i++) gap = fmin(gap, ang[i] - ang[i - 1]);
        if (gap >= 6) break;
    }
    /* Shuffle so the request order differs from the angular order. */
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)pm_rng_below(g, i + 1);
        double t = ang[i]; ang[i] = ang[j]; ang[j] = t;
    }
    c->p.corner_radius = pm_rng_chance(g, 0.1) ? 0 : pm_rng_range(g, 0.5, 12);
    c->p.corner_segments = (uint32_t)pm_rng_int(g, 2, 8);
    c->p.snap = pm_rng_chance(g, 0.2) ? 0.01 : 0.001;
    c->p.uv_scale = pm_rng_range(g, 0.01, 1);
    c->p.has_center = pm_rng_chance(g, 0.5);
    c->p.center[0] = pm_rng_range(g, -200, 200);
    c->p.center[1] = pm_rng_range(g, -200, 200);
    bool sloped = pm_rng_chance(g, 0.4), sidewalks = pm_rng_chance(g, 0.4);
    bool ring = pm_rng_chance(g, 0.25), lines = !ring && pm_rng_chance(g, 0.2);
    double maxw = 0;
    for (size_t i = 0; i < n; i++) {
        pm_junction_arm *a = add_arm(c, ang[i], pm_rng_range(g, 3, 25));
        maxw = fmax(maxw, a->width);
        a->elevation = sloped ? pm_rng_range(g, -3, 3) : 0;
        if (!ring && pm_rng_chance(g, 0.1)) a->length = pm_rng_range(g, 20, 300);
        a->has_sidewalk = sidewalks && !pm_rng_chance(g, 0.1);
        a->sidewalk.width = pm_rng_range(g, 0.5, 5);
        a->sidewalk.curb_height = pm_rng_range(g, 0.05, 0.3);
        if (lines) {
            /* A centerline bent once far out, passing the centre within a
             * few metres (digitised roads rarely meet in one point). */
            double d[2] = {a->direction[0], a->direction[1]}, o[2] = {c->p.center[0], c->p.center[1]};
            double off = pm_rng_range(g, -1, 1) * fmin(2.0, a->width / 4);
            o[0] += -d[1] * off;
            o[1] += d[0] * off;
            double L = pm_rng_range(g, 60, 120);
            double pts[6] = {o[0] + d[0] * L * 2 + d[1] * 5, o[1] + d[1] * L * 2 - d[0] * 5,
                             o[0] + d[0] * L, o[1] + d[1] * L, o[0], o[1]};
            memcpy(c->lines[i], pts, sizeof pts);
            a->centerline = c->lines[i];
            a->centerline_len = 3;
        }
    }
    if (ring) {
        /* Mostly a ring the closest arms fit on, sometimes a tight one. */
        double fit = maxw / 2 / sin(fmin(gap, 180) * PI / 360);
        double R = fmax(fit * pm_rng_range(g, 0.95, 1.6), maxw / 2 + pm_rng_range(g, 1, 10));
        /* An island the widest arm's mouth can pass. */
        double room = sqrt(R * R - maxw * maxw / 4);
        uint32_t seg = (uint32_t)pm_rng_int(g, 8, 64);
        room = fmin(room, R * cos(PI / seg) - 0.1);
        set_roundabout(c, R, room * pm_rng_range(g, 0.2, 0.95), seg);
    }
}

static inline void dump_case(const jcase *c) {
    fprintf(stderr, "r=%.17g seg=%u snap=%g center=%d [%.17g, %.17g] ring=%d (%g %g %u)\n",
            c->p.corner_radius, c->p.corner_segments, c->p.snap, c->p.has_center, c->p.center[0],
            c->p.center[1], c->p.has_roundabout, c->p.roundabout.radius,
            c->p.roundabout.island_radius, c->p.roundabout.segments);
    for (size_t i = 0; i < c->p.narms; i++) {
        const pm_junction_arm *a = &c->arms[i];
        fprintf(stderr, " arm %zu: dir [%.17g, %.17g] w %.17g e %.17g len %g sw %d (%g %g) cl %zu\n", i,
                a->direction[0], a->direction[1], a->width, a->elevation, a->length,
                a->has_sidewalk, a->sidewalk.width, a->sidewalk.curb_height, a->centerline_len);
    }
}

/* Whether a refusal is one the arm set really calls for, checked without
 * the generator's own code where that is possible. */
static inline bool refusal_justified(const jcase *c, const pm_junction_diag *d) {
    bool bounded = false;
    for (size_t i = 0; i < d->narms; i++) {
        const pm_junction_arm *a = &c->arms[d->arms[i]];
        bounded = bounded || a->length > 0 || a->centerline;
    }
    switch (d->error) {
    case PM_JUNCTION_ARM_TOO_SHORT:
        return bounded;
    case PM_JUNCTION_SIDEWALK_NO_FIT:
        return bounded && strstr(d->message, "does not fit on arm");
    case PM_JUNCTION_RING_NO_FIT: {
        if (d->narms == 1) {
            /* A mouth cutting into the island: even the requested fillet,
             * which pushes the mouth furthest out, leaves it inside. */
            const pm_junction_arm *a = &c->arms[d->arms[0]];
            double R = c->p.roundabout.radius, r = c->p.corner_radius, h = a->width / 2;
            return sqrt((R + r) * (R + r) - (h + r) * (h + r)) <=
                   c->p.roundabout.island_radius + c->p.snap + 1e-9;
        }
        /* Direction arms through the centre: the two curbs reach the ring at
         * angles asin(h / R) either side of their arms, and overlap there. */
        if (d->narms != 2) return false;
        const pm_junction_arm *a = &c->arms[d->arms[0]], *b = &c->arms[d->arms[1]];
        double ta = atan2(-a->direction[1], a->direction[0]), tb = atan2(-b->direction[1], b->direction[0]);
        double gap = fmod(tb - ta + 4 * PI, 2 * PI);
        double R = c->p.roundabout.radius;
        /* The generator keeps 4 snap steps of ring between them. */
        return asin(a->width / 2 / R) + asin(b->width / 2 / R) >= gap - 4 * c->p.snap / R - 1e-9;
    }
    default:
        return false;
    }
}

#endif

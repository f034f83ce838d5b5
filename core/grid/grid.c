#include "grid/grid.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geom/delaunay.h"
#include "geom/f32.h"
#include "geom/poisson.h"
#include "geom/predicates.h"
#include "scene/result.h"
#include "scene/rng.h"
#include "geom/trig.h"

/* Internally the grid lives in a right-handed (u, v) plane where CCW means
 * pm_orient2d > 0; the world has x = u, z = -v, which makes CCW here CCW
 * seen from +Y (pm_orient_xz) there. */

#define PM__SQRT3 1.7320508075688772
#define PM__NONE UINT32_MAX
/* A boundary triangle with a corner sharper than this is a sliver. */
#define PM__SLIVER_DEG 20.0

enum { PM__STREAM_POINTS = 1, PM__STREAM_MERGE = 2 };

void pm_grid_defaults(pm_grid_params *p) {
    memset(p, 0, sizeof *p);
    p->seed = 0;
    p->size = 8;
    p->shape = PM_GRID_HEXAGON;
    p->points = PM_GRID_LATTICE;
    p->spacing = 1.0;
    p->merge = 1.0;
    p->merge_min_angle = 45.0;
    p->merge_max_angle = 135.0;
    p->relax.mode = PM_GRID_RELAX_SQUARE;
    p->relax.iterations = 40;
    p->relax.strength = 0.5;
    p->relax.lock_boundary = true;
}

const char *pm_grid_shape_name(pm_grid_shape s) {
    switch (s) {
    case PM_GRID_HEXAGON: return "hexagon";
    case PM_GRID_SQUARE: return "square";
    case PM_GRID_DISK: return "disk";
    }
    return "?";
}

const char *pm_grid_points_name(pm_grid_points p) {
    return p == PM_GRID_POISSON ? "poisson" : "lattice";
}

const char *pm_grid_relax_name(pm_grid_relax_mode m) {
    return m == PM_GRID_RELAX_SQUARE ? "square" : "laplacian";
}

static void pm__check_params(const pm_grid_params *p) {
    (void)p;
    assert(p->size >= 1);
    assert(p->spacing > 0 && isfinite(p->spacing));
    assert(p->merge >= 0 && p->merge <= 1);
    assert(p->merge_min_angle >= 0 && p->merge_min_angle < p->merge_max_angle &&
           p->merge_max_angle <= 180);
    assert(p->relax.strength > 0 && p->relax.strength <= 1);
}

/* ---- points ---------------------------------------------------------- */

/* Stalberg's hexagon: the triangular lattice points (q, r) -> (q + r/2,
 * r sqrt(3)/2) spacings with |q|, |r|, |q + r| <= n, 3n(n + 1) + 1 of them. */
static uint32_t pm__lattice_hexagon(const pm_grid_params *p, double *pts) {
    int n = (int)p->size;
    uint32_t k = 0;
    for (int r = -n; r <= n; r++)
        for (int q = -n; q <= n; q++) {
            if (abs(q + r) > n) continue;
            pts[2 * k] = (q + r * 0.5) * p->spacing;
            pts[2 * k + 1] = r * (PM__SQRT3 / 2) * p->spacing;
            k++;
        }
    return k;
}

/* The lattice in a square: rows a little closer than sqrt(3)/2 so that
 * whole rows lie on the top and bottom edges, and the half-shifted rows get
 * a point on each side edge too, so the outline is straight all round. */
static uint32_t pm__rows_square(const pm_grid_params *p) {
    return (uint32_t)floor(p->size / (PM__SQRT3 / 2) + 0.5);
}

static uint32_t pm__lattice_square(const pm_grid_params *p, double *pts) {
    int n = (int)p->size, rows = (int)pm__rows_square(p);
    double s = p->spacing, h = n * s / rows;
    uint32_t k = 0;
    for (int j = -rows; j <= rows; j++) {
        bool shifted = (j + rows) % 2 != 0;
        if (shifted) pts[2 * k] = -n * s, pts[2 * k + 1] = j * h, k++;
        for (int i = 0; i < 2 * n + !shifted; i++) {
            pts[2 * k] = (-n + i + (shifted ? 0.5 : 0.0)) * s;
            pts[2 * k + 1] = j * h;
            k++;
        }
        if (shifted) pts[2 * k] = n * s, pts[2 * k + 1] = j * h, k++;
    }
    return k;
}

/* The hexagon's rings bent onto circles: ring k holds 6k points evenly on
 * the circle of radius k spacings, the same count as the hexagon's ring k,
 * so the triangles stay near equilateral and the outline is round. */
static uint32_t pm__lattice_disk(const pm_grid_params *p, double *pts) {
    uint32_t k = 1;
    pts[0] = pts[1] = 0;
    for (uint32_t ring = 1; ring <= p->size; ring++)
        for (uint32_t i = 0; i < 6 * ring; i++) {
            double c, sn;
            pm__cos_sin(2 * PM__PI * i / (6.0 * ring), &c, &sn);
            pts[2 * k] = ring * p->spacing * c;
            pts[2 * k + 1] = ring * p->spacing * sn;
            k++;
        }
    return k;
}

static long pm__lattice(pm_arena *a, const pm_grid_params *p, double **out) {
    uint64_t cap = pm_grid_point_bound(p);
    double *pts = pm_arena_alloc(a, 2 * (size_t)cap * sizeof *pts);
    if (!pts) return PM_ERR_NOMEM;
    uint32_t n = p->shape == PM_GRID_HEXAGON  ? pm__lattice_hexagon(p, pts)
                 : p->shape == PM_GRID_SQUARE ? pm__lattice_square(p, pts)
                                              : pm__lattice_disk(p, pts);
    assert(n <= cap);
    *out = pts;
    return n;
}

/* Points evenly along the outline, spacing apart or a little more, so the
 * Poisson fill keeps the shape's straight edges and corners. */
static long pm__outline(pm_arena *a, const pm_grid_params *p, double **out) {
    double R = p->size * p->spacing;
    uint32_t m, corners;
    if (p->shape == PM_GRID_DISK) {
        m = (uint32_t)floor(2 * PM__PI * p->size);
        for (;; m--) {  /* chord 2 R sin(pi / m) must reach the spacing */
            double c, s;
            pm__cos_sin(PM__PI / m, &c, &s);
            if (m <= 3 || 2 * R * s >= p->spacing * (1 + 1e-9)) break;
        }
        corners = m;
    } else {
        corners = p->shape == PM_GRID_HEXAGON ? 6 : 4;
        m = corners * (p->shape == PM_GRID_HEXAGON ? p->size : 2 * p->size);
    }
    double *pts = pm_arena_alloc(a, 2 * (size_t)m * sizeof *pts);
    if (!pts) return PM_ERR_NOMEM;
    uint32_t per = m / corners;
    for (uint32_t c = 0; c < corners; c++) {
        double a0[2], a1[2], cs, sn;
        if (p->shape == PM_GRID_SQUARE) {
            static const double sq[5][2] = {{1, -1}, {1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
            a0[0] = sq[c][0] * R, a0[1] = sq[c][1] * R;
            a1[0] = sq[c + 1][0] * R, a1[1] = sq[c + 1][1] * R;
        } else {
            pm__cos_sin(2 * PM__PI * c / corners, &cs, &sn);
            a0[0] = R * cs, a0[1] = R * sn;
            pm__cos_sin(2 * PM__PI * (c + 1) / corners, &cs, &sn);
            a1[0] = R * cs, a1[1] = R * sn;
        }
        for (uint32_t k = 0; k < per; k++) {
            double t = (double)k / per;
            pts[2 * (c * per + k)] = a0[0] + (a1[0] - a0[0]) * t;
            pts[2 * (c * per + k) + 1] = a0[1] + (a1[1] - a0[1]) * t;
        }
    }
    *out = pts;
    return m;
}

static long pm__points(pm_arena *a, const pm_grid_params *p, pm_rng *rng, double **out) {
    if (p->points == PM_GRID_LATTICE) return pm__lattice(a, p, out);
    double *outline;
    long m = pm__outline(a, p, &outline);
    if (m < 0) return m;
    double R = p->size * p->spacing;
    pm_poisson_params pp = {
        .shape = p->shape == PM_GRID_HEXAGON ? PM_POISSON_HEXAGON
                 : p->shape == PM_GRID_SQUARE ? PM_POISSON_RECT : PM_POISSON_DISK,
        .half = {R, R},
        .radius = p->spacing,
        .initial = outline,
        .ninitial = (uint32_t)m,
    };
    uint64_t bound = pm_grid_point_bound(p);
    pp.max_points = bound < UINT32_MAX ? (uint32_t)bound : 0;
    return pm_poisson(a, &pp, rng, out);
}

uint64_t pm_grid_point_bound(const pm_grid_params *p) {
    if (p->points == PM_GRID_LATTICE) {
        uint64_t n = p->size;
        if (p->shape != PM_GRID_SQUARE) return 3 * n * (n + 1) + 1;
        return (2 * (uint64_t)pm__rows_square(p) + 1) * (2 * n + 2);
    }
    /* Disks of radius spacing/2 around the samples are disjoint and lie in
     * the shape grown by spacing/2: count how many such disks fit. */
    double n = p->size, area, perim;
    switch (p->shape) {
    case PM_GRID_HEXAGON: area = 1.5 * PM__SQRT3 * n * n, perim = 6 * n; break;
    case PM_GRID_SQUARE: area = 4 * n * n, perim = 8 * n; break;
    default: area = PM__PI * n * n, perim = 2 * PM__PI * n; break;
    }
    double grown = area + perim * 0.5 + PM__PI * 0.25;
    return (uint64_t)ceil(grown / (PM__PI * 0.25));
}

uint64_t pm_grid_vertex_bound(const pm_grid_params *p) {
    /* points + edges (< 3 n) + faces (< 2 n) */
    return 6 * pm_grid_point_bound(p);
}

/* ---- geometry helpers ------------------------------------------------ */

static const double *pm__p(const double *pts, uint32_t i) { return pts + 2 * (size_t)i; }

/* Cosine of the corner at b between b->a and b->c. */
static double pm__corner_cos(const double *a, const double *b, const double *c) {
    double ux = a[0] - b[0], uy = a[1] - b[1], vx = c[0] - b[0], vy = c[1] - b[1];
    double l = sqrt((ux * ux + uy * uy) * (vx * vx + vy * vy));
    return l > 0 ? (ux * vx + uy * vy) / l : 1.0;
}

/* ---- stage 2: drop slivers at the hull --------------------------------- */

typedef struct pm__mesh {
    pm_arena *a;
    const double *pts;
    uint32_t npts;
    pm_delaunay dt;
    uint8_t *alive;          /* per triangle */
    uint32_t *bdeg;          /* per point: boundary edges touching it */
} pm__mesh;

static bool pm__edge_open(const pm__mesh *m, uint32_t e) {
    int32_t o = m->dt.halfedges[e];
    return o < 0 || !m->alive[(uint32_t)o / 3];
}

static bool pm__is_sliver(const pm__mesh *m, uint32_t t) {
    double lim, s;
    pm__cos_sin(PM__SLIVER_DEG * PM__PI / 180, &lim, &s);
    const uint32_t *v = m->dt.triangles + 3 * (size_t)t;
    for (int k = 0; k < 3; k++)
        if (pm__corner_cos(pm__p(m->pts, v[(k + 2) % 3]), pm__p(m->pts, v[k]),
                           pm__p(m->pts, v[(k + 1) % 3])) > lim)
            return true;
    return false;
}

/* Removes triangle t if it is a sliver on the boundary and removing it keeps
 * the mesh manifold (no vertex pinched between two boundary runs). */
static bool pm__try_drop(pm__mesh *m, uint32_t t) {
    if (!m->alive[t]) return false;
    uint32_t open = 0;
    for (uint32_t k = 0; k < 3; k++) open += pm__edge_open(m, 3 * t + k);
    if (open == 0 || open == 3 || !pm__is_sliver(m, t)) return false;
    if (open == 1) {
        uint32_t e = 0;
        for (uint32_t k = 0; k < 3; k++)
            if (pm__edge_open(m, 3 * t + k)) e = 3 * t + k;
        uint32_t apex = m->dt.triangles[pm_delaunay_prev(e)];
        if (m->bdeg[apex]) return false;
    }
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t e = 3 * t + k, a = m->dt.triangles[e], b = m->dt.triangles[pm_delaunay_next(e)];
        if (pm__edge_open(m, e)) m->bdeg[a]--, m->bdeg[b]--;
        else m->bdeg[a]++, m->bdeg[b]++;
    }
    m->alive[t] = 0;
    return true;
}

static int pm__drop_slivers(pm__mesh *m, uint32_t *ndropped) {
    uint32_t nt = m->dt.ntriangles;
    m->alive = pm_arena_alloc(m->a, nt ? nt : 1);
    m->bdeg = pm_arena_calloc(m->a, m->npts ? m->npts : 1, sizeof *m->bdeg);
    uint32_t *queue = pm_arena_alloc(m->a, (4 * (size_t)nt + 1) * sizeof *queue);
    if (!m->alive || !m->bdeg || !queue) return PM_ERR_NOMEM;
    memset(m->alive, 1, nt);
    size_t qh = 0, qt = 0;
    for (uint32_t e = 0; e < 3 * nt; e++) {
        if (m->dt.halfedges[e] >= 0) continue;
        m->bdeg[m->dt.triangles[e]]++;
        m->bdeg[m->dt.triangles[pm_delaunay_next(e)]]++;
        queue[qt++] = e / 3;
    }
    *ndropped = 0;
    while (qh < qt) {
        uint32_t t = queue[qh++];
        if (!pm__try_drop(m, t)) continue;
        (*ndropped)++;
        for (uint32_t k = 0; k < 3; k++) {
            int32_t o = m->dt.halfedges[3 * t + k];
            if (o >= 0 && m->alive[(uint32_t)o / 3] && qt < 4 * (size_t)nt) queue[qt++] = (uint32_t)o / 3;
        }
    }
    return PM_OK;
}

/* ---- stage 3: merge triangle pairs into quads --------------------------- */

/* A face of the coarse mesh: 3 or 4 half-edges of the triangulation, CCW;
 * each one's origin is a corner. */
typedef struct pm__face { uint32_t n, he[4]; } pm__face;

static bool pm__merge_ok(const pm__mesh *m, const uint32_t he[4], double cos_lo, double cos_hi) {
    const uint32_t *t = m->dt.triangles;
    const double *c[4];
    for (int k = 0; k < 4; k++) c[k] = pm__p(m->pts, t[he[k]]);
    for (int k = 0; k < 4; k++) {
        const double *a = c[(k + 3) % 4], *b = c[k], *d = c[(k + 1) % 4];
        if (pm_orient2d(a, b, d) <= 0) return false;
        double cs = pm__corner_cos(a, b, d);
        if (cs > cos_lo || cs < cos_hi) return false;
    }
    return true;
}

/* The merge graph: triangles joined by the edges whose merge is allowed. */
typedef struct pm__matcher {
    const pm__mesh *m;
    const uint8_t *ok;       /* per half-edge (smaller of a pair): merge allowed */
    uint32_t *deg;           /* per triangle: allowed edges to unmatched triangles */
    uint32_t *partner;       /* per triangle: matched triangle or NONE */
    uint32_t *queue;         /* triangles left with one option */
    size_t qlen;
} pm__matcher;

static bool pm__edge_ok(const pm__matcher *x, uint32_t e) {
    int32_t o = x->m->dt.halfedges[e];
    if (o < 0) return false;
    return x->ok[(uint32_t)o < e ? (uint32_t)o : e];
}

/* Matches the triangles of edge e and takes their other edges out of the
 * graph; a neighbour left with a single option is queued. */
static void pm__match(pm__matcher *x, uint32_t e) {
    uint32_t g = (uint32_t)x->m->dt.halfedges[e], ts[2] = {e / 3, g / 3};
    x->partner[ts[0]] = ts[1];
    x->partner[ts[1]] = ts[0];
    for (int i = 0; i < 2; i++)
        for (uint32_t k = 0; k < 3; k++) {
            uint32_t h = 3 * ts[i] + k;
            if (!pm__edge_ok(x, h)) continue;
            uint32_t w = (uint32_t)x->m->dt.halfedges[h] / 3;
            if (x->partner[w] != PM__NONE) continue;
            if (--x->deg[w] == 1) x->queue[x->qlen++] = w;
        }
}

/* The triangle's one remaining allowed edge, or NONE. */
static uint32_t pm__only_edge(const pm__matcher *x, uint32_t t) {
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t h = 3 * t + k;
        if (pm__edge_ok(x, h) && x->partner[(uint32_t)x->m->dt.halfedges[h] / 3] == PM__NONE) return h;
    }
    return PM__NONE;
}

/* Random merges of adjacent triangles into quads. The edges are shuffled;
 * each is attempted with probability `merge` and kept when the quad would be
 * convex with every corner within the angle limits. Pairs are then chosen
 * greedily in shuffled order, except that a triangle down to one possible
 * partner is served first (Karp and Sipser's rule), which leaves far fewer
 * triangles unmatched than plain random greed. */
static int pm__merge(pm__mesh *m, const pm_grid_params *p, pm_rng *rng, pm__face **faces,
                     uint32_t *nfaces, uint32_t *nmerged) {
    uint32_t nt = m->dt.ntriangles, ne = 3 * nt;
    const int32_t *he = m->dt.halfedges;
    uint32_t *cand = pm_arena_alloc(m->a, (ne / 2 + 1) * sizeof *cand);
    uint8_t *ok = pm_arena_calloc(m->a, ne + 1, 1);
    pm__matcher x = {.m = m, .ok = ok};
    x.deg = pm_arena_calloc(m->a, nt + 1, sizeof *x.deg);
    x.partner = pm_arena_alloc(m->a, (nt + 1) * sizeof *x.partner);
    x.queue = pm_arena_alloc(m->a, (2 * (size_t)ne + 1) * sizeof *x.queue);
    pm__face *f = pm_arena_alloc(m->a, (nt + 1) * sizeof *f);
    if (!cand || !ok || !x.deg || !x.partner || !x.queue || !f) return PM_ERR_NOMEM;
    uint32_t nc = 0;
    for (uint32_t e = 0; e < ne; e++)
        if (he[e] > (int32_t)e && m->alive[e / 3] && m->alive[(uint32_t)he[e] / 3]) cand[nc++] = e;
    for (uint32_t i = nc; i > 1; i--) {
        uint32_t j = (uint32_t)pm_rng_below(rng, i), t = cand[i - 1];
        cand[i - 1] = cand[j];
        cand[j] = t;
    }
    double cos_lo, cos_hi, s;
    pm__cos_sin(p->merge_min_angle * PM__PI / 180, &cos_lo, &s);
    pm__cos_sin(p->merge_max_angle * PM__PI / 180, &cos_hi, &s);
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t e = cand[i], g = (uint32_t)he[e];
        if (p->merge < 1 && !pm_rng_chance(rng, p->merge)) continue;
        uint32_t q[4] = {pm_delaunay_next(g), pm_delaunay_prev(g), pm_delaunay_next(e),
                         pm_delaunay_prev(e)};
        if (!pm__merge_ok(m, q, cos_lo, cos_hi)) continue;
        ok[e] = 1;
        x.deg[e / 3]++;
        x.deg[g / 3]++;
    }
    memset(x.partner, 0xff, (nt + 1) * sizeof *x.partner);
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t e = cand[i];
        if (ok[e] && x.deg[e / 3] == 1) x.queue[x.qlen++] = e / 3;
        if (ok[e] && x.deg[(uint32_t)he[e] / 3] == 1) x.queue[x.qlen++] = (uint32_t)he[e] / 3;
    }
    uint32_t next = 0;
    *nmerged = 0;
    for (;;) {
        uint32_t e = PM__NONE;
        while (x.qlen && e == PM__NONE) {
            uint32_t t = x.queue[--x.qlen];
            if (x.partner[t] == PM__NONE) e = pm__only_edge(&x, t);
        }
        while (e == PM__NONE && next < nc) {
            uint32_t c = cand[next++];
            if (ok[c] && x.partner[c / 3] == PM__NONE && x.partner[(uint32_t)he[c] / 3] == PM__NONE) e = c;
        }
        if (e == PM__NONE) break;
        uint32_t g = (uint32_t)he[e];
        pm__match(&x, e);
        /* (a, b, c) + (b, a, d) -> a, d, b, c */
        f[*nmerged].n = 4;
        f[*nmerged].he[0] = pm_delaunay_next(g);
        f[*nmerged].he[1] = pm_delaunay_prev(g);
        f[*nmerged].he[2] = pm_delaunay_next(e);
        f[*nmerged].he[3] = pm_delaunay_prev(e);
        (*nmerged)++;
    }
    uint32_t nf = *nmerged;
    for (uint32_t t = 0; t < nt; t++) {
        if (!m->alive[t] || x.partner[t] != PM__NONE) continue;
        f[nf].n = 3;
        for (uint32_t k = 0; k < 3; k++) f[nf].he[k] = 3 * t + k;
        nf++;
    }
    *faces = f;
    *nfaces = nf;
    return PM_OK;
}

/* ---- stage 4: subdivide into quads ------------------------------------ */

typedef struct pm__fine {
    uint32_t nv, nq;
    double *uv;          /* 2 per vertex */
    uint8_t *boundary;
    uint32_t *quads;     /* 4 per quad, CCW */
} pm__fine;

/* One id per undirected alive edge: the smaller half-edge of an interior
 * pair, the half-edge itself on the boundary. */
static uint32_t pm__edge_id(const pm__mesh *m, uint32_t e) {
    int32_t o = m->dt.halfedges[e];
    if (o >= 0 && m->alive[(uint32_t)o / 3] && (uint32_t)o < e) return (uint32_t)o;
    return e;
}

static int pm__subdivide(const pm__mesh *m, const pm__face *faces, uint32_t nf, pm__fine *out) {
    pm_arena *a = m->a;
    uint32_t ne = 3 * m->dt.ntriangles;
    uint32_t *vmap = pm_arena_alloc(a, (m->npts ? m->npts : 1) * sizeof *vmap);
    uint32_t *emid = pm_arena_alloc(a, (ne ? ne : 1) * sizeof *emid);
    if (!vmap || !emid) return PM_ERR_NOMEM;
    memset(vmap, 0xff, (m->npts ? m->npts : 1) * sizeof *vmap);
    memset(emid, 0xff, (ne ? ne : 1) * sizeof *emid);
    /* Count first: kept points (in input order), then edges, then faces. */
    uint32_t nv = 0, nq = 0;
    for (uint32_t i = 0; i < nf; i++)
        for (uint32_t k = 0; k < faces[i].n; k++) vmap[m->dt.triangles[faces[i].he[k]]] = 0;
    for (uint32_t i = 0; i < m->npts; i++)
        if (vmap[i] == 0) vmap[i] = nv++;
    for (uint32_t i = 0; i < nf; i++) {
        nq += faces[i].n;
        for (uint32_t k = 0; k < faces[i].n; k++) {
            uint32_t id = pm__edge_id(m, faces[i].he[k]);
            if (emid[id] == PM__NONE) emid[id] = nv++;
        }
    }
    nv += nf;
    out->nv = nv;
    out->nq = nq;
    out->uv = pm_arena_alloc(a, 2 * (size_t)nv * sizeof *out->uv);
    out->boundary = pm_arena_calloc(a, nv, 1);
    out->quads = pm_arena_alloc(a, 4 * (size_t)nq * sizeof *out->quads);
    if (!out->uv || !out->boundary || !out->quads) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < m->npts; i++)
        if (vmap[i] != PM__NONE) memcpy(out->uv + 2 * (size_t)vmap[i], pm__p(m->pts, i), 2 * sizeof(double));
    uint32_t q = 0;
    for (uint32_t i = 0; i < nf; i++) {
        const pm__face *f = &faces[i];
        uint32_t c = nv - nf + i, mids[4];
        double cx = 0, cy = 0;
        for (uint32_t k = 0; k < f->n; k++) {
            uint32_t e = f->he[k], a0 = m->dt.triangles[e];
            uint32_t a1 = m->dt.triangles[f->he[(k + 1) % f->n]];
            mids[k] = emid[pm__edge_id(m, e)];
            double *mv = out->uv + 2 * (size_t)mids[k];
            mv[0] = (m->pts[2 * (size_t)a0] + m->pts[2 * (size_t)a1]) * 0.5;
            mv[1] = (m->pts[2 * (size_t)a0 + 1] + m->pts[2 * (size_t)a1 + 1]) * 0.5;
            if (pm__edge_open(m, e)) {
                out->boundary[mids[k]] = 1;
                out->boundary[vmap[a0]] = 1;
                out->boundary[vmap[a1]] = 1;
            }
            cx += m->pts[2 * (size_t)a0];
            cy += m->pts[2 * (size_t)a0 + 1];
        }
        out->uv[2 * (size_t)c] = cx / f->n;
        out->uv[2 * (size_t)c + 1] = cy / f->n;
        /* Corner k's quad: corner, midpoint after it, centre, midpoint before. */
        for (uint32_t k = 0; k < f->n; k++) {
            uint32_t *o = out->quads + 4 * (size_t)q++;
            o[0] = vmap[m->dt.triangles[f->he[k]]];
            o[1] = mids[k];
            o[2] = c;
            o[3] = mids[(k + f->n - 1) % f->n];
        }
    }
    /* The midpoint of edge a-b is computed from both sides alike, since
     * (a + b) / 2 is symmetric in floating point. */
    return PM_OK;
}

/* ---- stage 5: relaxation ---------------------------------------------- */

typedef struct pm__adj {
    uint32_t *vq_start, *vq;     /* vertex -> incident quads */
    uint32_t *nb_start, *nb;     /* vertex -> edge neighbours, ascending */
} pm__adj;

static int pm__cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int pm__build_adj(pm_arena *a, const pm__fine *g, pm__adj *adj) {
    uint32_t nv = g->nv, nq = g->nq;
    adj->vq_start = pm_arena_calloc(a, (size_t)nv + 1, sizeof(uint32_t));
    adj->vq = pm_arena_alloc(a, 4 * (size_t)nq * sizeof(uint32_t) + 4);
    adj->nb_start = pm_arena_calloc(a, (size_t)nv + 1, sizeof(uint32_t));
    uint32_t *tmp = pm_arena_alloc(a, 8 * (size_t)nq * sizeof(uint32_t) + 4);
    uint32_t *fill = pm_arena_calloc(a, (size_t)nv + 1, sizeof(uint32_t));
    if (!adj->vq_start || !adj->vq || !adj->nb_start || !tmp || !fill) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < 4 * nq; i++) adj->vq_start[g->quads[i] + 1]++;
    for (uint32_t v = 0; v < nv; v++) adj->vq_start[v + 1] += adj->vq_start[v];
    for (uint32_t i = 0; i < 4 * nq; i++) {
        uint32_t v = g->quads[i];
        adj->vq[adj->vq_start[v] + fill[v]++] = i / 4;
    }
    /* Neighbours: both ends of every quad edge, then sort and dedupe (an
     * interior edge is listed by both of its quads). */
    for (uint32_t v = 0; v < nv; v++) {
        uint32_t n = 0, s = adj->vq_start[v];
        uint32_t *list = tmp + 2 * (size_t)s;
        for (uint32_t j = s; j < adj->vq_start[v + 1]; j++) {
            const uint32_t *q = g->quads + 4 * (size_t)adj->vq[j];
            for (int k = 0; k < 4; k++)
                if (q[k] == v) list[n++] = q[(k + 1) % 4], list[n++] = q[(k + 3) % 4];
        }
        qsort(list, n, sizeof *list, pm__cmp_u32);
        uint32_t u = 0;
        for (uint32_t j = 0; j < n; j++)
            if (!u || list[j] != list[u - 1]) list[u++] = list[j];
        adj->nb_start[v + 1] = u;
    }
    for (uint32_t v = 0; v < nv; v++) adj->nb_start[v + 1] += adj->nb_start[v];
    adj->nb = pm_arena_alloc(a, (size_t)adj->nb_start[nv] * sizeof(uint32_t) + 4);
    if (!adj->nb) return PM_ERR_NOMEM;
    for (uint32_t v = 0; v < nv; v++)
        memcpy(adj->nb + adj->nb_start[v], tmp + 2 * (size_t)adj->vq_start[v],
               (adj->nb_start[v + 1] - adj->nb_start[v]) * sizeof(uint32_t));
    return PM_OK;
}

/* Strictly convex: every corner turns left (exact). */
static bool pm__quad_convex(const double *uv, const uint32_t *q) {
    for (int k = 0; k < 4; k++)
        if (pm_orient2d_fast(pm__p(uv, q[(k + 3) % 4]), pm__p(uv, q[k]), pm__p(uv, q[(k + 1) % 4])) <= 0)
            return false;
    return true;
}

/* Stalberg's squareness force: the square around the quad's centroid that
 * fits its corners best. Corner k of a CCW square is the centre plus w
 * turned by k quarter turns, so the least-squares w is the mean of the
 * corner offsets each turned back by k quarter turns. */
static double pm__quad_sj(const double *uv, const uint32_t *q) {
    double worst = 1;
    for (int k = 0; k < 4; k++) {
        const double *pp = pm__p(uv, q[(k + 3) % 4]), *p0 = pm__p(uv, q[k]), *pn = pm__p(uv, q[(k + 1) % 4]);
        double ax = pn[0] - p0[0], ay = pn[1] - p0[1], bx = pp[0] - p0[0], by = pp[1] - p0[1];
        double l = sqrt((ax * ax + ay * ay) * (bx * bx + by * by));
        double j = l > 0 ? (ax * by - ay * bx) / l : 0;
        if (j < worst) worst = j;
    }
    return worst;
}

static void pm__square_targets(const double *uv, const uint32_t *q, double t[4][2]) {
    double c[2] = {0, 0}, d[4][2], w[2] = {0, 0};
    for (int k = 0; k < 4; k++) c[0] += uv[2 * (size_t)q[k]] / 4, c[1] += uv[2 * (size_t)q[k] + 1] / 4;
    for (int k = 0; k < 4; k++) {
        d[k][0] = uv[2 * (size_t)q[k]] - c[0];
        d[k][1] = uv[2 * (size_t)q[k] + 1] - c[1];
    }
    /* turn back by k quarters: k=0 (x,y); 1 (y,-x); 2 (-x,-y); 3 (-y,x) */
    w[0] = (d[0][0] + d[1][1] - d[2][0] - d[3][1]) / 4;
    w[1] = (d[0][1] - d[1][0] - d[2][1] + d[3][0]) / 4;
    /* Least squares shrinks a skewed quad's square; give it the corners'
     * RMS radius instead so the grid keeps its area. */
    double rms = 0, wl = sqrt(w[0] * w[0] + w[1] * w[1]);
    for (int k = 0; k < 4; k++) rms += (d[k][0] * d[k][0] + d[k][1] * d[k][1]) / 4;
    rms = sqrt(rms);
    if (wl > 0) w[0] *= rms / wl, w[1] *= rms / wl;
    double r[4][2] = {{w[0], w[1]}, {-w[1], w[0]}, {-w[0], -w[1]}, {w[1], -w[0]}};
    for (int k = 0; k < 4; k++) t[k][0] = c[0] + r[k][0], t[k][1] = c[1] + r[k][1];
}

typedef struct pm__relaxer {
    pm__fine *g;
    const pm__adj *adj;
    const pm_grid_relax *r;
    double *acc;       /* 2 per vertex */
    double *wsum;      /* per vertex: total weight of its pulls */
    double *old;       /* positions before the step */
    uint8_t *mark;     /* per quad: queued for a re-check */
    uint32_t *work;
} pm__relaxer;

static void pm__forces(pm__relaxer *x) {
    pm__fine *g = x->g;
    memset(x->acc, 0, 2 * (size_t)g->nv * sizeof *x->acc);
    memset(x->wsum, 0, (size_t)g->nv * sizeof *x->wsum);
    if (x->r->mode == PM_GRID_RELAX_SQUARE) {
        for (uint32_t i = 0; i < g->nq; i++) {
            const uint32_t *q = g->quads + 4 * (size_t)i;
            double t[4][2];
            pm__square_targets(g->uv, q, t);
            /* A quad counts by its squared distance from square, so that a
             * vertex yields to its worst quads instead of to the majority:
             * plain averaging leaves the quads at irregular vertices (3 or
             * 5+ quads around) as thin kites. The 0.02 keeps perfect
             * squares in play. */
            double w = 1.02 - pm__quad_sj(g->uv, q);
            w *= w;
            for (int k = 0; k < 4; k++) {
                x->acc[2 * (size_t)q[k]] += w * (t[k][0] - g->uv[2 * (size_t)q[k]]);
                x->acc[2 * (size_t)q[k] + 1] += w * (t[k][1] - g->uv[2 * (size_t)q[k] + 1]);
                x->wsum[q[k]] += w;
            }
        }
        return;
    }
    for (uint32_t v = 0; v < g->nv; v++)
        for (uint32_t j = x->adj->nb_start[v]; j < x->adj->nb_start[v + 1]; j++) {
            uint32_t n = x->adj->nb[j];
            x->acc[2 * (size_t)v] += g->uv[2 * (size_t)n] - g->uv[2 * (size_t)v];
            x->acc[2 * (size_t)v + 1] += g->uv[2 * (size_t)n + 1] - g->uv[2 * (size_t)v + 1];
            x->wsum[v] += 1;
        }
}

/* Moves every vertex, then puts back the vertices of any quad that stopped
 * being strictly convex, and re-checks the quads around them, until none
 * fails. The positions before the step were all convex, so this ends. */
static void pm__relax_step(pm__relaxer *x) {
    pm__fine *g = x->g;
    pm__forces(x);
    memcpy(x->old, g->uv, 2 * (size_t)g->nv * sizeof *x->old);
    for (uint32_t v = 0; v < g->nv; v++) {
        if (!(x->wsum[v] > 0) || (x->r->lock_boundary && g->boundary[v])) continue;
        double s = x->r->strength / x->wsum[v];
        g->uv[2 * (size_t)v] = pm_f32(g->uv[2 * (size_t)v] + s * x->acc[2 * (size_t)v]);
        g->uv[2 * (size_t)v + 1] = pm_f32(g->uv[2 * (size_t)v + 1] + s * x->acc[2 * (size_t)v + 1]);
    }
    uint32_t nw = 0;
    for (uint32_t i = 0; i < g->nq; i++) {
        x->mark[i] = 1;
        x->work[nw++] = i;
    }
    while (nw) {
        uint32_t i = x->work[--nw];
        x->mark[i] = 0;
        const uint32_t *q = g->quads + 4 * (size_t)i;
        if (pm__quad_convex(g->uv, q)) continue;
        for (int k = 0; k < 4; k++) {
            uint32_t v = q[k];
            if (g->uv[2 * (size_t)v] == x->old[2 * (size_t)v] && g->uv[2 * (size_t)v + 1] == x->old[2 * (size_t)v + 1])
                continue;
            g->uv[2 * (size_t)v] = x->old[2 * (size_t)v];
            g->uv[2 * (size_t)v + 1] = x->old[2 * (size_t)v + 1];
            for (uint32_t j = x->adj->vq_start[v]; j < x->adj->vq_start[v + 1]; j++) {
                uint32_t o = x->adj->vq[j];
                if (!x->mark[o]) x->mark[o] = 1, x->work[nw++] = o;
            }
        }
    }
}

static int pm__relax(pm_arena *a, pm__fine *g, const pm__adj *adj, const pm_grid_relax *r,
                     const volatile int *cancel) {
    pm__relaxer x = {.g = g, .adj = adj, .r = r};
    x.acc = pm_arena_alloc(a, 2 * (size_t)g->nv * sizeof *x.acc + 8);
    x.wsum = pm_arena_alloc(a, (size_t)g->nv * sizeof *x.wsum + 8);
    x.old = pm_arena_alloc(a, 2 * (size_t)g->nv * sizeof *x.old + 8);
    x.mark = pm_arena_alloc(a, (size_t)g->nq + 1);
    x.work = pm_arena_alloc(a, (size_t)g->nq * sizeof *x.work + 4);
    if (!x.acc || !x.wsum || !x.old || !x.mark || !x.work) return PM_ERR_NOMEM;
    /* Every step works on float-exact positions, so the convexity checks
     * hold for the float output. */
    for (uint32_t v = 0; v < 2 * g->nv; v++) g->uv[v] = pm_f32(g->uv[v]);
    for (uint32_t it = 0; it < r->iterations; it++) {
        if (cancel && *cancel) return PM_ERR_CANCELLED;
        pm__relax_step(&x);
    }
    return PM_OK;
}

/* ---- quality ---------------------------------------------------------- */

static int pm__cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void pm_grid_measure(const double *verts, const uint32_t *quads, uint32_t nquads,
                     pm_arena *scratch, pm_grid_quality *q) {
    memset(q, 0, sizeof *q);
    if (!nquads) return;
    double *sj = pm_arena_alloc(scratch, (size_t)nquads * sizeof *sj);
    double lim = sqrt(0.5), sum = 0;  /* |cos| above cos 45 is outside 45-135 */
    uint32_t outside = 0;
    q->min_scaled_jacobian = INFINITY;
    for (uint32_t i = 0; i < nquads; i++) {
        const uint32_t *c = quads + 4 * (size_t)i;
        double worst = INFINITY;
        bool convex = true;
        for (int k = 0; k < 4; k++) {
            const double *pp = pm__p(verts, c[(k + 3) % 4]), *p0 = pm__p(verts, c[k]),
                         *pn = pm__p(verts, c[(k + 1) % 4]);
            /* x/z points: the CCW-from-above cross product is pm_orient_xz. */
            double ax = pn[0] - p0[0], az = pn[1] - p0[1], bx = pp[0] - p0[0], bz = pp[1] - p0[1];
            double la = sqrt(ax * ax + az * az), lb = sqrt(bx * bx + bz * bz);
            double j = la > 0 && lb > 0 ? -(ax * bz - az * bx) / (la * lb) : 0;
            if (j < worst) worst = j;
            if (pm_orient_xz(pp, p0, pn) <= 0) convex = false;
            if (fabs(pm__corner_cos(pp, p0, pn)) > lim) outside++;
        }
        if (!convex) q->inverted_quads++;
        sum += worst;
        if (worst < q->min_scaled_jacobian) q->min_scaled_jacobian = worst;
        if (sj) sj[i] = worst;
    }
    q->mean_scaled_jacobian = sum / nquads;
    q->angles_outside_45_135 = (double)outside / (4.0 * nquads);
    if (sj) {
        qsort(sj, nquads, sizeof *sj, pm__cmp_double);
        q->p05_scaled_jacobian = sj[(size_t)((nquads - 1) * 0.05)];
    } else {
        q->p05_scaled_jacobian = q->min_scaled_jacobian;
    }
}

/* ---- the whole pipeline ----------------------------------------------- */

int pm_grid_build(pm_arena *a, const pm_grid_params *p, const volatile int *cancel, pm_grid *out) {
    pm__check_params(p);
    memset(out, 0, sizeof *out);
    pm_rng root, rng_points, rng_merge;
    pm_rng_seed(&root, p->seed);
    pm_rng_fork(&rng_points, &root, PM__STREAM_POINTS);
    pm_rng_fork(&rng_merge, &root, PM__STREAM_MERGE);

    pm__mesh m = {.a = a};
    double *pts;
    long np = pm__points(a, p, &rng_points, &pts);
    if (np < 0) return (int)np;
    m.pts = pts;
    m.npts = (uint32_t)np;
    out->npoints = m.npts;
    if (cancel && *cancel) return PM_ERR_CANCELLED;
    int r = pm_delaunay_build(a, pts, m.npts, &m.dt);
    if (r < 0) return r;
    if (m.dt.ntriangles == 0) return PM_ERR_GEOMETRY;
    out->nduplicates = m.dt.nduplicates;
    out->ntriangles = m.dt.ntriangles;
    if ((r = pm__drop_slivers(&m, &out->ndropped)) < 0) return r;
    if (cancel && *cancel) return PM_ERR_CANCELLED;

    pm__face *faces;
    uint32_t nf;
    if ((r = pm__merge(&m, p, &rng_merge, &faces, &nf, &out->nmerged)) < 0) return r;
    out->nleft_triangles = nf - out->nmerged;
    pm__fine g;
    if ((r = pm__subdivide(&m, faces, nf, &g)) < 0) return r;
    pm__adj adj;
    if ((r = pm__build_adj(a, &g, &adj)) < 0) return r;
    if ((r = pm__relax(a, &g, &adj, &p->relax, cancel)) < 0) return r;

    /* To the world: x = u, z = -v. */
    for (uint32_t v = 0; v < g.nv; v++) g.uv[2 * (size_t)v + 1] = 0.0 - g.uv[2 * (size_t)v + 1];
    out->nverts = g.nv;
    out->verts = g.uv;
    out->boundary = g.boundary;
    out->nquads = g.nq;
    out->quads = g.quads;
    out->nbr_start = adj.nb_start;
    out->nbr = adj.nb;
    pm_grid_measure(out->verts, out->quads, out->nquads, a, &out->quality);
    return PM_OK;
}

/* ---- scene ------------------------------------------------------------ */

static pm_meta *pm__meta_counts(pm_arena *a, const pm_grid *g) {
    pm_meta *o = pm_meta_obj(a);
    pm_meta_set(a, o, "points", pm_meta_int(a, g->npoints));
    pm_meta_set(a, o, "duplicates", pm_meta_int(a, g->nduplicates));
    pm_meta_set(a, o, "triangles", pm_meta_int(a, g->ntriangles));
    pm_meta_set(a, o, "slivers_dropped", pm_meta_int(a, g->ndropped));
    pm_meta_set(a, o, "merged_quads", pm_meta_int(a, g->nmerged));
    pm_meta_set(a, o, "triangles_left", pm_meta_int(a, g->nleft_triangles));
    pm_meta_set(a, o, "quads", pm_meta_int(a, g->nquads));
    if (pm_meta_set(a, o, "vertices", pm_meta_int(a, g->nverts)) < 0) return NULL;
    return o;
}

static pm_meta *pm__meta_quality(pm_arena *a, const pm_grid_quality *q) {
    pm_meta *o = pm_meta_obj(a);
    pm_meta_set(a, o, "min_scaled_jacobian", pm_meta_num(a, q->min_scaled_jacobian));
    pm_meta_set(a, o, "p05_scaled_jacobian", pm_meta_num(a, q->p05_scaled_jacobian));
    pm_meta_set(a, o, "mean_scaled_jacobian", pm_meta_num(a, q->mean_scaled_jacobian));
    pm_meta_set(a, o, "angles_outside_45_135", pm_meta_num(a, q->angles_outside_45_135));
    if (pm_meta_set(a, o, "inverted_quads", pm_meta_int(a, q->inverted_quads)) < 0) return NULL;
    return o;
}

/* An array of small integer arrays: quads, neighbour lists. */
static pm_meta *pm__meta_lists(pm_arena *a, const uint32_t *items, const uint32_t *start,
                               uint32_t n, uint32_t stride) {
    pm_meta *arr = pm_meta_arr(a);
    int64_t buf[64];
    for (uint32_t i = 0; arr && i < n; i++) {
        uint32_t s = start ? start[i] : i * stride, e = start ? start[i + 1] : s + stride;
        pm_meta *row = pm_meta_arr(a);
        for (uint32_t j = s; row && j < e; j += 64) {
            uint32_t k = 0;
            for (; k < 64 && j + k < e; k++) buf[k] = items[j + k];
            for (uint32_t x = 0; x < k; x++)
                if (pm_meta_push(row, pm_meta_int(a, buf[x])) < 0) row = NULL;
        }
        if (pm_meta_push(arr, row) < 0) return NULL;
    }
    return arr;
}

static int pm__scene_meta(pm_arena *a, pm_scene *s, const pm_grid *g) {
    pm_meta *m = s->meta;
    uint32_t nb = 0;
    for (uint32_t v = 0; v < g->nverts; v++) nb += g->boundary[v];
    int64_t *bl = pm_arena_alloc(a, ((size_t)nb + 1) * sizeof *bl);
    if (!bl) return PM_ERR_NOMEM;
    nb = 0;
    for (uint32_t v = 0; v < g->nverts; v++)
        if (g->boundary[v]) bl[nb++] = v;
    int r = 0;
    r |= pm_meta_set(a, m, "counts", pm__meta_counts(a, g));
    r |= pm_meta_set(a, m, "quality", pm__meta_quality(a, &g->quality));
    r |= pm_meta_set(a, m, "quads", pm__meta_lists(a, g->quads, NULL, g->nquads, 4));
    r |= pm_meta_set(a, m, "neighbors", pm__meta_lists(a, g->nbr, g->nbr_start, g->nverts, 0));
    r |= pm_meta_set(a, m, "boundary", pm_meta_ints(a, bl, nb));
    return r < 0 ? PM_ERR_NOMEM : PM_OK;
}

static double pm__d2(const double *v, uint32_t i, uint32_t j) {
    double dx = v[2 * (size_t)i] - v[2 * (size_t)j], dz = v[2 * (size_t)i + 1] - v[2 * (size_t)j + 1];
    return dx * dx + dz * dz;
}

int pm_grid_scene(pm_arena *a, const pm_grid_params *p, const pm_grid *g, pm_scene **out) {
    pm_scene *s = pm_scene_create(a);
    if (!s) return PM_ERR_NOMEM;
    uint64_t ni = 6 * (uint64_t)g->nquads;
    if (ni > UINT32_MAX) return PM_ERR_LIMIT;
    pm_prim *pr = pm_scene_add_prim(s, "grid", "grid", PM_PRIM_UV, g->nverts, (uint32_t)ni);
    if (!pr) return PM_ERR_NOMEM;
    /* Planar UVs: the shape's bounding square maps to [0, 1]^2. */
    double R = p->size * p->spacing;
    const float up[3] = {0, 1, 0};
    for (uint32_t v = 0; v < g->nverts; v++) {
        double x = g->verts[2 * (size_t)v], z = g->verts[2 * (size_t)v + 1];
        float pos[3] = {(float)x, 0.0f, (float)z};
        float uv[2] = {(float)((x + R) / (2 * R)), (float)((z + R) / (2 * R))};
        if (pm_prim_add_vertex(s, pr, pos, up, uv, NULL) < 0) return PM_ERR_NOMEM;
    }
    /* Two triangles a quad, split along the shorter diagonal; the quads are
     * strictly convex, so both halves keep the quad's winding. */
    for (uint32_t i = 0; i < g->nquads; i++) {
        const uint32_t *q = g->quads + 4 * (size_t)i;
        int k = pm__d2(g->verts, q[0], q[2]) <= pm__d2(g->verts, q[1], q[3]) ? 0 : 1;
        if (pm_prim_add_tri(s, pr, q[k], q[k + 1], q[k + 2]) < 0 ||
            pm_prim_add_tri(s, pr, q[k], q[k + 2], q[(k + 3) % 4]) < 0)
            return PM_ERR_NOMEM;
    }
    int r = pm__scene_meta(a, s, g);
    if (r < 0) return r;
    *out = s;
    return PM_OK;
}

int pm_grid_generate(pm_arena *a, const pm_grid_params *p, const volatile int *cancel,
                     pm_scene **out) {
    pm_grid g;
    int r = pm_grid_build(a, p, cancel, &g);
    return r < 0 ? r : pm_grid_scene(a, p, &g, out);
}

/* Sidewalk slabs along the roads: curb face, band, outer face and end caps
 * on every road side whose edges have a sidewalk, continuing the
 * junctions' slabs at the mouths on the same floats. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "network/network_internal.h"
#include "geom/earclip.h"
#include "geom/f32.h"
#include "geom/geom.h"
#include "geom/hypot4.h"
#include "geom/predicates.h"
#include "scene/result.h"

#define PM__NONE UINT32_MAX

#ifndef PM__SIDEWALK_PLAIN
#define PM__SIDEWALK_PLAIN false   /* tests/core/test_network_stitch_fast.c: true for the plain paths */
#endif

/* ---- the road's two edges, from its own triangles ---- */

/* Boundary successors of x into out[2 x], out[2 x + 1] (see below). */
static void pm__boundary_at(const uint32_t *start, const uint32_t *end, const uint32_t *to, uint32_t x,
                            uint32_t *out) {
    uint32_t lo = PM__NONE, hi = 0, count = 0;
    for (uint32_t i = start[x]; i < end[x]; i++) {
        uint32_t y = to[i], j = start[y];
        while (j < end[y] && to[j] != x) j++;
        if (j < end[y]) continue;
        lo = y < lo ? y : lo;
        hi = y > hi ? y : hi;
        count++;
    }
    out[2 * x] = count ? lo : PM__NONE;
    out[2 * x + 1] = count > 1 ? hi : PM__NONE;
}

/* Boundary successors: out[2 v], out[2 v + 1] are the ends of the (up to
 * two) boundary edges leaving v, PM__NONE when absent; with more than two,
 * the smallest and the largest. Triangles face up, so a boundary edge (one
 * whose reverse no triangle has) has the asphalt on its left (seen from
 * +Y). The directed edges are grouped by their first vertex, so finding a
 * reverse scans one vertex's few edges. Only what the side chains read is
 * found: every edge vertex's (col 0 or 2), and a centre vertex's where an
 * edge vertex's boundary leads to it (pm__next); the other centre
 * vertices' entries are PM__NONE, never read. */
/* Whether P is the usual road: n >= 2 sections of three vertices (left,
 * centre, right: vertex 3 i + c), two quads between each two sections
 * as pm__road_emit makes them, no vertex shared, no triangle left out.
 * Its boundary is then the strip's outline, each vertex's one successor:
 * 0 -> 1 -> 2 along the first section, the right edge forward (2, 5, ...),
 * the last section right to left, the left edge back to 0; so its side
 * chains need no edge search (pm__strip_chain). */
/* The columns are read from the V coordinates straight (column 0: V <
 * 0.25, 2: V > 0.75, 1 neither, NaN too: pm__network_side_chains's), so
 * a strip needs no column array. */
static bool pm__is_strip(const pm_prim *P) {
    uint32_t nv = P->vcount, n = nv / 3;
    if (n < 2 || nv % 3 != 0 || P->icount != 12 * (n - 1)) return false;
    const float *uv = P->uvs;
    for (uint32_t v = 0; v < nv; v += 3, uv += 6)
        if (!(uv[1] < 0.25f) || uv[3] < 0.25f || uv[3] > 0.75f || !(uv[5] > 0.75f)) return false;
    const uint32_t *q = P->indices;
    if (PM__SIDEWALK_PLAIN) {
        for (uint32_t i = 0, a = 0; i + 1 < n; i++, a += 3, q += 12)
            if (q[0] != a || q[1] != a + 1 || q[2] != a + 3 || q[3] != a + 1 || q[4] != a + 4 || q[5] != a + 3 ||
                q[6] != a + 1 || q[7] != a + 2 || q[8] != a + 4 || q[9] != a + 2 || q[10] != a + 5 ||
                q[11] != a + 4)
                return false;
        return true;
    }
    /* The same twelve comparisons per step, four at a time: any index
     * off its place leaves a bit set in the or of the differences. */
    typedef uint32_t u4 __attribute__((vector_size(16)));
    const u4 o0 = {0, 1, 3, 1}, o1 = {4, 3, 1, 2}, o2 = {4, 2, 5, 4};
    u4 off = {0, 0, 0, 0};
    for (uint32_t i = 0, a = 0; i + 1 < n; i++, a += 3, q += 12) {
        u4 v0, v1, v2, base = {a, a, a, a};
        memcpy(&v0, q, 16), memcpy(&v1, q + 4, 16), memcpy(&v2, q + 8, 16);
        off |= (v0 ^ (base + o0)) | (v1 ^ (base + o1)) | (v2 ^ (base + o2));
    }
    return (off[0] | off[1] | off[2] | off[3]) == 0;
}

static int pm__boundary(pm_arena *a, const pm_prim *P, const uint8_t *col, uint32_t *out) {
    size_t ne = P->icount;
    uint32_t nv = P->vcount;
    uint32_t *start = pm_arena_calloc(a, (size_t)nv + 1, sizeof *start);
    uint32_t *end = pm_arena_alloc(a, ((size_t)nv + 1) * sizeof *end);
    uint32_t *to = pm_arena_alloc(a, (ne ? ne : 1) * sizeof *to);
    if (!start || !end || !to) return PM_ERR_NOMEM;
    const uint32_t *ix = P->indices;
    for (size_t i = 0; i < ne; i++) start[ix[i] + 1]++;
    for (uint32_t v = 0; v < nv; v++) start[v + 1] += start[v];
    memcpy(end, start, ((size_t)nv + 1) * sizeof *end);
    for (size_t t = 0; t < ne; t += 3) {
        uint32_t p0 = ix[t], p1 = ix[t + 1], p2 = ix[t + 2];
        to[end[p0]++] = p1;
        to[end[p1]++] = p2;
        to[end[p2]++] = p0;
    }
    for (uint32_t x = 0; x < nv; x++) {
        if (col[x] != 1) pm__boundary_at(start, end, to, x, out);
        else out[2 * x] = out[2 * x + 1] = PM__NONE - 1;   /* not found yet */
    }
    for (uint32_t x = 0; x < nv; x++)
        for (int i = 0; col[x] != 1 && i < 2; i++) {
            uint32_t b = out[2 * x + i];
            if (b != PM__NONE && col[b] == 1 && out[2 * b] == PM__NONE - 1) pm__boundary_at(start, end, to, b, out);
        }
    for (uint32_t x = 0; x < nv; x++)
        if (out[2 * x] == PM__NONE - 1) out[2 * x] = out[2 * x + 1] = PM__NONE;
    return PM_OK;
}

/* The next vertex of column c after v along the boundary: directly, or
 * across a centre vertex (*via) where the road left a triangle out there
 * (a collapsed, welded stretch of its edge, or a sliver). */
static uint32_t pm__next(const uint8_t *col, const uint32_t *out, uint32_t v, int c, uint32_t *via) {
    *via = PM__NONE;
    for (int i = 0; i < 2; i++) {
        uint32_t b = out[2 * v + i];
        if (b == PM__NONE) continue;
        if (col[b] == c) return b;
        if (col[b] != 1) continue;
        for (int j = 0; j < 2; j++) {
            uint32_t x = out[2 * b + j];
            if (x != PM__NONE && x != v && col[x] == c) {
                *via = b;
                return x;
            }
        }
    }
    return PM__NONE;
}

/* Where a side's chain goes: the stitch's arena for them, or (a chain
 * made alone, as the tests make them) the job's. */
static pm_arena *pm__chains_arena(pm__net *N) { return N->sides ? N->sides : N->a; }

/* One side's edge as output asphalt vertices, in boundary order (asphalt
 * on the left): the right side from the road's start, the left from its
 * end. Consecutive vertices at the same position are kept once. */
static int pm__side_chain(pm__net *N, pm__road *R, const pm_prim *P, const uint8_t *col,
                          const uint32_t *out, const uint32_t *remap, const pm_prim *A, int c) {
    uint32_t nv = P->vcount, start = PM__NONE, members = 0;
    uint8_t *pred = pm_arena_calloc(N->tmp, nv ? nv : 1, 1);
    if (!pred) return PM_ERR_NOMEM;
    for (uint32_t v = 0; v < nv; v++) {
        if (col[v] != c || out[2 * v] == PM__NONE) continue;
        uint32_t via, x = pm__next(col, out, v, c, &via);
        if (x != PM__NONE) pred[x] = 1;
    }
    for (uint32_t v = 0; v < nv; v++) {
        if (col[v] != c || out[2 * v] == PM__NONE) continue;
        members++;
        if (!pred[v] && start == PM__NONE) start = v;
    }
    if (start == PM__NONE && R->closed) {
        for (uint32_t v = 0; v < nv && start == PM__NONE; v++)
            if (col[v] == c && out[2 * v] != PM__NONE) start = v;
    }
    uint32_t *chain = pm_arena_alloc(pm__chains_arena(N), (2 * members + 2) * sizeof *chain);
    if (!chain || start == PM__NONE) return chain ? PM_ERR_GEOMETRY : PM_ERR_NOMEM;
    uint32_t n = 0, steps = 0;
    for (uint32_t v = start, via = PM__NONE; v != PM__NONE && steps <= members; steps++) {
        /* The asphalt's boundary runs through the centre vertex where a
         * sliver was left out; where the edge was welded (both ends at
         * one point) it goes there and straight back: no curb on that. */
        uint32_t w[2] = {via, v};
        for (int k = 0; k < 2; k++) {
            if (w[k] == PM__NONE) continue;
            const float *p = A->positions + 3 * remap[w[k]];
            if (k == 0 && n > 0 && memcmp(A->positions + 3 * chain[n - 1], A->positions + 3 * remap[v],
                                          3 * sizeof *p) == 0)
                continue;
            if (n == 0 || memcmp(A->positions + 3 * chain[n - 1], p, 3 * sizeof *p) != 0) chain[n++] = remap[w[k]];
        }
        v = pm__next(col, out, v, c, &via);
        if (v == start) break;
    }
    /* Every vertex of the side on one chain, or the edge is not a path. */
    if (steps + 1 < members || n < 2) return PM_ERR_GEOMETRY;
    /* A closed road's first and last sections are one (welded): the chain
     * ends where it started. */
    if (R->closed && chain[n - 1] != chain[0]) chain[n++] = chain[0];
    int s = c == 2 ? 1 : 0;
    R->chain[s] = chain;
    R->nchain[s] = n;
    return PM_OK;
}

/* The strip's side c as pm__side_chain walks it (pm__is_strip's strip
 * of n sections): the right side 2, 5, ... from the start, the left
 * 3 (n - 1), ..., 0 from the end, no centre vertex between; consecutive
 * vertices at one position kept once. */
static int pm__strip_chain(pm__net *N, pm__road *R, uint32_t n, const uint32_t *remap, const pm_prim *A,
                           int c) {
    uint32_t *chain = pm_arena_alloc(pm__chains_arena(N), (2 * n + 2) * sizeof *chain), m = 0;
    if (!chain) return PM_ERR_NOMEM;
    const float *last = NULL;   /* the position of chain[m - 1] */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v = c == 2 ? 3 * k + 2 : 3 * (n - 1 - k);
        const float *p = A->positions + 3 * (size_t)remap[v];
        if (m == 0 || memcmp(last, p, 3 * sizeof *p) != 0) chain[m++] = remap[v], last = p;
    }
    if (m < 2) return PM_ERR_GEOMETRY;
    if (R->closed && chain[m - 1] != chain[0]) chain[m++] = chain[0];
    int s = c == 2 ? 1 : 0;
    R->chain[s] = chain;
    R->nchain[s] = m;
    return PM_OK;
}

int pm__network_side_chains(pm__net *N, pm__road *R, const pm_prim *P, const uint32_t *remap, const pm_prim *A,
                            bool plain) {
    if (!plain && pm__is_strip(P)) {
        int rc = pm__strip_chain(N, R, P->vcount / 3, remap, A, 2);
        return rc ? rc : pm__strip_chain(N, R, P->vcount / 3, remap, A, 0);
    }
    /* Each vertex's column once, for both sides' scans: from its V, 0
     * left (V < 0.25), 2 right (V > 0.75), else 1 centre. */
    uint8_t *col = pm_arena_alloc(N->tmp, P->vcount ? P->vcount : 1);
    if (!col) return PM_ERR_NOMEM;
    /* (Without branches, NaN as the centre too, so that it vectorizes.) */
    const float *uv = P->uvs;
    for (uint32_t v = 0; v < P->vcount; v++) {
        float x = uv[2 * (size_t)v + 1];
        col[v] = (uint8_t)(1 - (x < 0.25f) + (x > 0.75f));
    }
    uint32_t *out = pm_arena_alloc(N->tmp, 2 * (P->vcount ? P->vcount : 1) * sizeof *out);
    if (!out) return PM_ERR_NOMEM;
    int rc = pm__boundary(N->tmp, P, col, out);
    if (rc == PM_OK) rc = pm__side_chain(N, R, P, col, out, remap, A, 2);
    if (rc == PM_OK) rc = pm__side_chain(N, R, P, col, out, remap, A, 0);
    return rc;
}

int pm__network_road_sides(pm__net *N, pm__road *R, const pm_prim *P, const uint32_t *remap,
                           const pm_prim *A) {
    R->nchain[0] = R->nchain[1] = 0;
    if (!N->p->edges[N->steps.data[R->first_step].edge].has_sidewalk) return PM_OK;
    return pm__network_side_chains(N, R, P, remap, A, false);
}

/* ---- the slab along one side ---- */

/* A point in the plan frame where counter-clockwise is counter-clockwise
 * seen from +Y: (x, -z). */
static pm_v2 pm__plan(const float *p) { return (pm_v2){p[0], -(double)p[2]}; }

/* hypot(x, y). C's Annex F (F.10.4.3) makes hypot(x, +-0) fabs(x) and
 * hypot(y, x) hypot(x, y): a street along an axis (most of a grid town's)
 * needs no library call for its lengths. */
static inline double pm__hypot(double x, double y) {
    if (PM__SIDEWALK_PLAIN) return hypot(x, y);
    if (y == 0) return fabs(x);
    if (x == 0) return fabs(y);
    return hypot(x, y);
}

/* The unit normal to the right of a -> b. */
static pm_v2 pm__right(pm_v2 a, pm_v2 b) {
    double dx = b.x - a.x, dy = b.y - a.y, l = hypot(dx, dy);
    return l > 0 ? (pm_v2){dy / l, -dx / l} : (pm_v2){0, 0};
}

typedef struct pm__slab {
    pm__net *N;
    pm_arena *tmp;           /* N->tmp: the side's working arrays, reset per side */
    pm_scene *s;
    uint32_t n;              /* sections */
    const uint32_t *cv;      /* curb bottom: output asphalt vertices */
    const float *asphalt;    /* their positions (s->prims[0]'s: the slabs add to prims 1 and 2 only) */
    const double *len;       /* per curb segment (k, k + 1): its plan length */
    bool closed;
    double width, ch;
    float *top;              /* per section: curb top height */
    pm_v2 *out;              /* per section: band outer point (floats) */
    float *oy, *oby;         /* per section: its top and foot heights */
    bool seq;                /* ii[i], oi[i] are ii[0] + 2 i, + 1 (every section its own
                              * outer vertex, in order: pm__faces_fast) */
    bool own;                /* out, oy, oby are this slab's to change (a piece's are
                              * its side's, untrimmed, until pm__slab_own copies them) */
    uint32_t *oi;            /* per section: its sidewalk vertex */
    uint32_t *ii;            /* per section: the band's inner (curb top) vertex */
    int edge;
    uint32_t road, base;     /* its road; its first section in the side's whole chain */
    int side;
} pm__slab;

static const float *pm__apos(const pm__slab *S, uint32_t i) {
    return S->asphalt + 3 * (size_t)S->cv[i];
}

/* The lane code below does four segments or sections at once (GCC vector
 * extensions, AVX where the CPU has it); each lane does the scalar code's
 * operations in its order (-ffp-contract=off), and hypot is pm_hypot4
 * (bit for bit the library's), so it gives the scalar code's bits
 * (tests/core/test_network_stitch_fast.c builds networks both ways). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define PM__SW_CLONES __attribute__((target_clones("avx", "default")))
#else
#define PM__SW_CLONES
#endif

typedef float pm__f4 __attribute__((vector_size(16)));

#define PM__SW_D4(v) ((pm_d4){(v), (v), (v), (v)})

/* Each lane's double rounded to the nearest float, as a double (pm_f32). */
static inline __attribute__((always_inline)) pm_d4 pm__f32x4(pm_d4 x) {
    return __builtin_convertvector(__builtin_convertvector(x, pm__f4), pm_d4);
}

/* pm__segments' segments k .. k + 3 (k + 4 < n) in lanes: each lane
 * pm__hypot's length and the right normal pm__segments computes from it. */
PM__SW_CLONES
static void pm__segments_lanes(const float *asphalt, const uint32_t *cv, uint32_t n, double *len, pm_v2 *right) {
    const pm_d4 zero = PM__SW_D4(0.0);
    for (uint32_t k = 0; k + 4 < n; k += 4) {
        pm_d4 ax, az, bx, bz;
        for (int j = 0; j < 4; j++) {
            const float *a = asphalt + 3 * (size_t)cv[k + j], *b = asphalt + 3 * (size_t)cv[k + j + 1];
            ax[j] = a[0], az[j] = a[2], bx[j] = b[0], bz[j] = b[2];
        }
        pm_d4 dx = bx - ax, l = pm_hypot4(dx, bz - az);
        /* the plan frame's dy: -b[2] - -a[2] */
        pm_d4 dy = -bz - -az;
        pm_k4 ok = (pm_k4)(l > zero);
        pm_d4 rx = pm_d4_sel(ok, dy / l, zero), ry = pm_d4_sel(ok, -dx / l, zero);
        for (int j = 0; j < 4; j++) {
            len[k + j] = l[j];
            right[k + j] = (pm_v2){rx[j], ry[j]};
        }
    }
}

/* Each curb segment's plan length (k, k + 1) and right normal, once:
 * the sections on both its ends and the slab's faces all read them. */
static void pm__segments(pm__slab *S, double *len, pm_v2 *right) {
    uint32_t k0 = 0;
    if (!PM__SIDEWALK_PLAIN && S->n > 4) {
        pm__segments_lanes(S->asphalt, S->cv, S->n, len, right);
        k0 = (S->n - 1) / 4 * 4;
    }
    for (uint32_t k = k0; k + 1 < S->n; k++) {
        const float *a = pm__apos(S, k), *b = pm__apos(S, k + 1);
        double l = pm__hypot((double)b[0] - a[0], (double)b[2] - a[2]);
        len[k] = l;
        /* pm__right(pm__plan(a), pm__plan(b)) without its own hypot: its dy,
         * -b[2] - -a[2], is exactly -(b[2] - a[2]) (rounding is symmetric),
         * and hypot ignores signs, so its length is l bit for bit. */
        if (PM__SIDEWALK_PLAIN) right[k] = pm__right(pm__plan(a), pm__plan(b));
        else {
            pm_v2 pa = pm__plan(a), pb = pm__plan(b);
            double dx = pb.x - pa.x, dy = pb.y - pa.y;
            right[k] = l > 0 ? (pm_v2){dy / l, -dx / l} : (pm_v2){0, 0};
        }
    }
}

/* Outer points: each section's curb point moved out by width along the
 * mitred normal (the miter at most doubled), rounded to floats. sn: the
 * segments' right normals (pm__segments; n >= 2). A closed side's last
 * section is its first (one vertex), so segment n - 2 ends at section 0
 * and segment 0 starts at section n - 1. */
/* pm__offsets' sections i0 .. i1 - 1 (0 < i0, i1 < n: each between two
 * segments, na = sn[i - 1], nb = sn[i]) in lanes, four at a time; returns
 * where it stopped. Each lane computes the miter and distance itself,
 * which pm__offsets may take from the section before: made of na and nb
 * alone, they are the same. */
PM__SW_CLONES
static uint32_t pm__offsets_lanes(const float *asphalt, const uint32_t *cv, const pm_v2 *sn, double width,
                                  uint32_t i0, uint32_t i1, pm_v2 *out) {
    const pm_d4 half = PM__SW_D4(0.5), tiny = PM__SW_D4(1e-9), w = PM__SW_D4(width);
    uint32_t i = i0;
    for (; i + 4 <= i1; i += 4) {
        pm_d4 nax, nay, nbx, nby, px, py;
        for (int j = 0; j < 4; j++) {
            nax[j] = sn[i + j - 1].x, nay[j] = sn[i + j - 1].y;
            nbx[j] = sn[i + j].x, nby[j] = sn[i + j].y;
            const float *a = asphalt + 3 * (size_t)cv[i + j];
            px[j] = a[0], py[j] = -(double)a[2];
        }
        pm_d4 mx = nax + nbx, my = nay + nby, l = pm_hypot4(mx, my);
        pm_k4 flat = (pm_k4)(l < tiny);
        mx = pm_d4_sel(flat, nbx, mx / l);
        my = pm_d4_sel(flat, nby, my / l);
        pm_d4 c = mx * nbx + my * nby;
        pm_d4 d = w / pm_d4_sel((pm_k4)(c > half), c, half);
        pm_d4 ox = pm__f32x4(px + d * mx), oy = pm__f32x4(py + d * my);
        for (int j = 0; j < 4; j++) out[i + j] = (pm_v2){ox[j], oy[j]};
    }
    return i;
}

static void pm__offsets(pm__slab *S, const pm_v2 *sn) {
    uint32_t n = S->n;
    /* The sections between two segments in lanes first; the loop below
     * then does the rest (and the heights of all). */
    uint32_t l0 = 1, l1 = 1;
    if (!PM__SIDEWALK_PLAIN && n > 5) l1 = pm__offsets_lanes(S->asphalt, S->cv, sn, S->width, 1, n - 1, S->out);
    /* A section whose two normals are the last one's, bit for bit (a
     * straight street's), has its miter and distance: they are made of
     * nothing else. */
    pm_v2 pa = {0, 0}, pb = pa, m = pa;
    double d = 0;
    bool have = false;
    for (uint32_t i = 0; i < n; i++) {
        double y = pm__apos(S, i)[1];
        S->top[i] = (float)(y + S->ch);
        S->oy[i] = (float)(y + S->ch);
        S->oby[i] = (float)y;
        if (i >= l0 && i < l1) continue;
        pm_v2 p = pm__plan(pm__apos(S, i));
        bool has_prev = i > 0 || S->closed, has_next = i + 1 < n || S->closed;
        pm_v2 na = has_prev ? sn[i > 0 ? i - 1 : n - 2] : sn[0];
        pm_v2 nb = has_next ? sn[i + 1 < n ? i : 0] : na;
        if (PM__SIDEWALK_PLAIN || !have || memcmp(&na, &pa, sizeof na) != 0 || memcmp(&nb, &pb, sizeof nb) != 0) {
            m = (pm_v2){na.x + nb.x, na.y + nb.y};
            double l = pm__hypot(m.x, m.y);
            if (l < 1e-9) m = nb;
            else m = (pm_v2){m.x / l, m.y / l};
            double c = m.x * nb.x + m.y * nb.y;
            d = S->width / (c > 0.5 ? c : 0.5);
            pa = na, pb = nb, have = true;
        }
        S->out[i] = (pm_v2){pm_f32(p.x + d * m.x), pm_f32(p.y + d * m.y)};
    }
}

/* Whether the bounds of segments ab and cd are apart on an axis: then
 * the segments cannot meet (the cheap test most pairs end at). */
static bool pm__apart(double a, double b, double c, double d) {
    double lo1 = a < b ? a : b, hi1 = a < b ? b : a, lo2 = c < d ? c : d, hi2 = c < d ? d : c;
    return hi1 < lo2 || hi2 < lo1;
}

static bool pm__boxes_apart(pm_v2 a, pm_v2 b, pm_v2 c, pm_v2 d) {
    return pm__apart(a.x, b.x, c.x, d.x) || pm__apart(a.y, b.y, c.y, d.y);
}

static bool pm__crossing(pm_v2 a, pm_v2 b, pm_v2 c, pm_v2 d, pm_v2 *x) {
    if (pm__boxes_apart(a, b, c, d)) return false;
    double pa[2] = {a.x, a.y}, pb[2] = {b.x, b.y}, pc[2] = {c.x, c.y}, pd[2] = {d.x, d.y};
    if (!pm_segments_intersect(pa, pb, pc, pd)) return false;
    double rx = b.x - a.x, ry = b.y - a.y, qx = d.x - c.x, qy = d.y - c.y;
    double den = rx * qy - ry * qx;
    if (den == 0) return false;
    double t = ((c.x - a.x) * qy - (c.y - a.y) * qx) / den;
    *x = (pm_v2){pm_f32(a.x + t * rx), pm_f32(a.y + t * ry)};
    return true;
}

/* Segment k's bounds (x0, x1, y0, y1) from outer points k and k + 1. */
static void pm__seg_box(const pm_v2 *out, uint32_t k, double *b) {
    pm_v2 a = out[k], c = out[k + 1];
    b[0] = a.x < c.x ? a.x : c.x;
    b[1] = a.x < c.x ? c.x : a.x;
    b[2] = a.y < c.y ? a.y : c.y;
    b[3] = a.y < c.y ? c.y : a.y;
}

/* Whether x, or y, runs strictly one way along the n points. */
static bool pm__monotone(const pm_v2 *p, uint32_t n) {
    if (n < 2) return true;
    /* Only the first step's ways can hold throughout: one test per axis. */
    bool xi = p[1].x > p[0].x, yi = p[1].y > p[0].y;
    bool x = xi || p[1].x < p[0].x, y = yi || p[1].y < p[0].y;
    for (uint32_t i = 1; i + 1 < n && (x || y); i++) {
        x = x && (xi ? p[i + 1].x > p[i].x : p[i + 1].x < p[i].x);
        y = y && (yi ? p[i + 1].y > p[i].y : p[i + 1].y < p[i].y);
    }
    return x || y;
}

int pm__network_trim(pm_arena *tmp, uint32_t n, double width, const double *len, pm_v2 *out, float *oy,
                     float *oby, bool plain) {
    /* An outer edge whose x (or y) runs strictly one way cannot cross
     * itself: two segments with one between have x ranges apart, so every
     * pair below ends at the bounds test and nothing moves. Most sides
     * (straight or gently curved roads) end here. */
    if (!plain && pm__monotone(out, n)) return PM_OK;
    double reach = 8.0 * width + 1.0;
    /* Each outer segment's bounds once: the windows below overlap (the
     * bounds are what most pairs end at, as in pm__crossing). */
    double ownb[4 * 256];
    double *box = n <= 256 ? ownb : pm_arena_alloc(tmp, 4 * n * sizeof *box);
    if (!box) return PM_ERR_NOMEM;
    for (uint32_t k = 0; k + 1 < n; k++) pm__seg_box(out, k, box + 4 * k);
    for (uint32_t j = 0; j + 3 < n; j++) {
        if (pm_v2_eq(out[j], out[j + 1])) continue;
        uint32_t kmax = j + 2;
        double run = 0;
        while (kmax + 2 < n) {
            run += len[kmax];
            if (run > reach) break;
            kmax++;
        }
        const double *bj = box + 4 * j;
        for (uint32_t k = kmax; k >= j + 2; k--) {
            const double *bk = box + 4 * k;
            pm_v2 x;
            if (bj[1] < bk[0] || bk[1] < bj[0] || bj[3] < bk[2] || bk[3] < bj[2] || pm_v2_eq(out[k], out[k + 1]) ||
                !pm__crossing(out[j], out[j + 1], out[k], out[k + 1], &x))
                continue;
            for (uint32_t i = j + 1; i <= k; i++) {
                out[i] = x;
                oy[i] = oy[j + 1];
                oby[i] = oby[j + 1];
            }
            for (uint32_t i = j; i <= k; i++) pm__seg_box(out, i, box + 4 * i);
            break;
        }
    }
    return PM_OK;
}

/* Cuts the loops out of the outer edge on the inside of tight curves
 * (radius under the width, where the offset curve crosses itself): every
 * outer point between two crossing segments becomes the crossing point,
 * with the heights of the first. Only segments within a few widths of
 * curb length can meet, which bounds the search. The ends never move. */
/* A piece's own copy of its outer points and heights, before it changes
 * them: its side's stay as they were made, for the other pieces. */
static int pm__slab_own(pm__slab *S) {
    if (S->own) return PM_OK;
    pm_v2 *out = pm_arena_alloc(S->tmp, S->n * sizeof *out);
    float *oy = pm_arena_alloc(S->tmp, S->n * sizeof *oy), *oby = pm_arena_alloc(S->tmp, S->n * sizeof *oby);
    if (!out || !oy || !oby) return PM_ERR_NOMEM;
    memcpy(out, S->out, S->n * sizeof *out);
    memcpy(oy, S->oy, S->n * sizeof *oy);
    memcpy(oby, S->oby, S->n * sizeof *oby);
    S->out = out, S->oy = oy, S->oby = oby, S->own = true;
    return PM_OK;
}

static int pm__trim(pm__slab *S) {
    /* (pm__network_trim's first test: an outer edge it leaves as it is
     * needs no copy) */
    if (!PM__SIDEWALK_PLAIN && pm__monotone(S->out, S->n)) return PM_OK;
    if (pm__slab_own(S)) return PM_ERR_NOMEM;
    return pm__network_trim(S->tmp, S->n, S->width, S->len, S->out, S->oy, S->oby, false);
}

static inline int pm__vtx(pm__slab *S, uint32_t prim, const float pos[3], float u, float v, uint32_t *id) {
    float uv[2] = {u, v};
    int64_t r = pm_prim_add_vertex(S->s, &S->s->prims[prim], pos, NULL, uv, NULL);
    if (r < 0) return PM_ERR_NOMEM;
    *id = (uint32_t)r;
    return PM_OK;
}

/* A vertical triangle, left out when its heights round to one float (a
 * curb lower than float resolution this high). Its face is summed into
 * the curb's normals here, where its cross is at hand: the stitch then
 * only normalizes them (pm_prim_normals_finish; curb positions never move
 * once made). Every wall has two corners on one vertical (a curb's or an
 * outer face's bottom and top, same x and z floats), so its cross's y,
 * (b - a).z (c - a).x - (b - a).x (c - a).z, is +0 or -0; adding a zero
 * leaves a normal's sum as it was (a sum that starts at +0 never becomes
 * -0), so only x and z are added, bit for bit pm_prim_normals_add's. */
static inline int pm__wall(pm__slab *S, uint32_t a, uint32_t b, uint32_t c) {
    pm_prim *p = &S->s->prims[1];
    const float *pa = p->positions + 3 * a, *pb = p->positions + 3 * b, *pc = p->positions + 3 * c;
    /* (The x component first: nonzero for nearly every wall, and then the
     * z one is not needed for the test.) */
    double u1 = (double)pb[1] - pa[1], v1 = (double)pc[1] - pa[1];
    double x0 = u1 * ((double)pc[2] - pa[2]) - ((double)pb[2] - pa[2]) * v1;
    double x2 = ((double)pb[0] - pa[0]) * v1 - u1 * ((double)pc[0] - pa[0]);
    if (x0 == 0 && x2 == 0) return PM_OK;
    uint32_t t = p->icount / 3;
    if (pm_prim_add_tri(S->s, p, a, b, c) < 0) return PM_ERR_NOMEM;
    if (S->N->curb_nt == t) {
        float f0 = (float)x0, f2 = (float)x2;
        uint32_t v[3] = {a, b, c};
        for (int k = 0; k < 3; k++) {
            float *n = p->normals + 3 * (size_t)v[k];
            n[0] = n[0] + f0;
            n[2] = n[2] + f2;
        }
        S->N->curb_nt = t + 1;
    }
    return PM_OK;
}

static int pm__quad_wall(pm__slab *S, uint32_t b0, uint32_t t0, uint32_t b1, uint32_t t1, bool curb) {
    int rc = curb ? pm__wall(S, b0, t1, b1) : pm__wall(S, b0, b1, t1);
    if (rc == PM_OK) rc = curb ? pm__wall(S, b0, t0, t1) : pm__wall(S, b0, t1, t0);
    return rc;
}

/* ---- the faces written straight into their arrays ----
 * When a primitive has room for a whole face (the stitch sizes the curb
 * and sidewalk primitives for every slab up front), the faces below are
 * written through restrict locals, not pm_prim_add_vertex and pm__wall
 * per vertex and triangle through S: the same vertices, triangles and
 * normal sums in the same order (tests/core/test_network_stitch_fast.c
 * compares whole networks built both ways). */

/* Whether p (UVs, or the sidewalk's left to the end; no colours) has room
 * for nv more vertices and ni more indices, and (curb) every triangle
 * before is summed into the normals. */
static bool pm__room(const pm__slab *S, const pm_prim *p, uint32_t nv, uint32_t ni, bool curb) {
    return !PM__SIDEWALK_PLAIN && (p->uvs || (p->flags & PM_PRIM_LATE_UVS)) && !p->colors &&
           p->vcap - p->vcount >= nv && p->icap - p->icount >= ni && (!curb || S->N->curb_nt == p->icount / 3);
}

/* The end of a fast face: counts back into p, the curb's normals summed
 * up to its last triangle. */
static void pm__put_done(pm__slab *S, pm_prim *p, uint32_t nv, uint32_t ni, bool curb) {
    if (nv != p->vcount || ni != p->icount) {
        S->s->validated = false;
        p->normals_unit = false;
    }
    p->vcount = nv;
    p->icount = ni;
    if (curb) S->N->curb_nt = ni / 3;
}

/* A fast wall (the curb face or the outer face), column by column: each
 * column's bottom and top vertices (the top on the bottom's x and z
 * floats), then the vertical quad from the previous column as
 * pm__quad_wall makes it; a ring's last column is its first. The normal
 * sums stay in registers: a column's vertices are in the quads on both
 * its sides only, so each column's x and z sums are complete (and stored,
 * y +0) once the next column's quad is added: the same float additions in
 * the same order as pm__wall's on memory that starts at +0. A wall that
 * pm__wall leaves out adds its +-0 cross here, which changes no sum (a
 * sum started at +0 is never -0), and its indices are written but not
 * counted. */
typedef struct pm__wall_run {
    float *restrict pos, *restrict nrm, *restrict uv;
    uint32_t *restrict idx;
    uint32_t nv, ni, b0, t0, bf, tf;
    double x0, z0, yb0, yt0;   /* the previous column: bottom x, z; bottom and top heights */
    double xf, zf, ybf, ytf;   /* the first column's */
    float nb0, nb2, nt0, nt2;  /* the previous column's bottom and top normal sums (x, z) so far */
} pm__wall_run;

static inline void pm__wall_store(float *restrict nrm, uint32_t v, float x, float z) {
    float *d = nrm + 3 * (size_t)v;
    d[0] = x;
    d[1] = 0.0f;
    d[2] = z;
}

/* A new column's two vertices (UV: u along the wall, V up). */
static inline void pm__wall_vertices(pm__wall_run *w, float x, float z, float yb, float yt, double u, double sc) {
    float fu = (float)(u * sc);
    float *p = w->pos + 3 * (size_t)w->nv, *q = w->uv + 2 * (size_t)w->nv;
    p[0] = x, p[1] = yb, p[2] = z;
    p[3] = x, p[4] = yt, p[5] = z;
    q[0] = fu, q[1] = 0;
    q[2] = fu, q[3] = (float)(((double)yt - yb) * sc);
    w->nv += 2;
}

static inline void pm__wall_first(pm__wall_run *w, float x, float z, float yb, float yt, double u, double sc) {
    w->bf = w->b0 = w->nv, w->tf = w->t0 = w->nv + 1;
    pm__wall_vertices(w, x, z, yb, yt, u, sc);
    w->xf = w->x0 = x, w->zf = w->z0 = z, w->ybf = w->yb0 = yb, w->ytf = w->yt0 = yt;
    w->nb0 = w->nb2 = w->nt0 = w->nt2 = 0.0f;
}

/* A quad's crosses a0, a2 (its first wall) and c0, c2 (its second) as
 * pm__wall computes them, with its differences of equal floats (+0) put
 * in; of type T (double, or pm_d4 for lanes: the same operations in the
 * same order) from dx, dz, yb0, yt0, yb1, yt1 and zero in scope. */
#define PM__WALL_CROSSES(T, curb)                                   \
    do {                                                            \
        if (curb) {                                                 \
            T u1 = yt1 - yb0, v1 = yb1 - yb0;                       \
            a0 = u1 * dz - dz * v1, a2 = dx * v1 - u1 * dx;         \
            u1 = yt0 - yb0, v1 = yt1 - yb0;                         \
            c0 = u1 * dz - zero * v1, c2 = zero * v1 - u1 * dx;     \
        } else {                                                    \
            T u1 = yb1 - yb0, v1 = yt1 - yb0;                       \
            a0 = u1 * dz - dz * v1, a2 = dx * v1 - u1 * dx;         \
            u1 = yt1 - yb0, v1 = yt0 - yb0;                         \
            c0 = u1 * zero - dz * v1, c2 = dx * v1 - u1 * zero;     \
        }                                                           \
    } while (0)

/* The quad from the previous column to column (b1, t1) at x, z, heights
 * yb1, yt1, whose sums so far are *nb, *nt (+0 for a new column). The
 * crosses are pm__wall's with its differences of equal floats, +0, and
 * of the columns' x (z) floats, dx (dz), put in: the same operations on
 * the same doubles (+0 kept as a factor: 0 * v is what the plain code
 * multiplies). curb: walls (b0, t1, b1), (b0, t0, t1); else (b0, b1, t1),
 * (b0, t1, t0): the first on b0, b1, t1, the second on b0, t0, t1, each
 * corner's sum taking the first's cross before the second's. A sum never
 * is -0 (it starts at +0), so adding +-0 leaves it as it is. */
static inline void pm__wall_quad(pm__wall_run *w, uint32_t b1, uint32_t t1, double x1, double z1, double yb1,
                                 double yt1, float nb[2], float nt[2], bool curb) {
    const double zero = 0.0;
    double dx = x1 - w->x0, dz = z1 - w->z0, yb0 = w->yb0, yt0 = w->yt0;
    double a0, a2, c0, c2;
    uint32_t b0 = w->b0, t0 = w->t0, *d = w->idx + w->ni;
    PM__WALL_CROSSES(double, curb);
    /* Kept unless both are +-0 (a double is +-0 when all its bits but the
     * sign are 0); a wall left out has +-0 crosses, which add nothing. */
    uint64_t ba0, ba2, bc0, bc2;
    memcpy(&ba0, &a0, 8), memcpy(&ba2, &a2, 8), memcpy(&bc0, &c0, 8), memcpy(&bc2, &c2, 8);
    uint32_t ka = ((ba0 | ba2) << 1) != 0, kc = ((bc0 | bc2) << 1) != 0;
    float fa0 = (float)a0, fa2 = (float)a2, fc0 = (float)c0, fc2 = (float)c2;
    d[0] = b0, d[1] = curb ? t1 : b1, d[2] = curb ? b1 : t1;
    d += 3 * ka;
    d[0] = b0, d[1] = curb ? t0 : t1, d[2] = curb ? t1 : t0;
    d += 3 * kc;
    w->ni = (uint32_t)(d - w->idx);
    /* The previous column is complete. */
    pm__wall_store(w->nrm, b0, (w->nb0 + fa0) + fc0, (w->nb2 + fa2) + fc2);
    pm__wall_store(w->nrm, t0, w->nt0 + fc0, w->nt2 + fc2);
    nb[0] = nb[0] + fa0, nb[1] = nb[1] + fa2;
    nt[0] = (nt[0] + fa0) + fc0, nt[1] = (nt[1] + fa2) + fc2;
    w->b0 = b1, w->t0 = t1;
    w->x0 = x1, w->z0 = z1, w->yb0 = yb1, w->yt0 = yt1;
    w->nb0 = nb[0], w->nb2 = nb[1], w->nt0 = nt[0], w->nt2 = nt[1];
}

static inline void pm__wall_next(pm__wall_run *w, float x, float z, float yb, float yt, double u, double sc,
                                 bool curb) {
    uint32_t b1 = w->nv, t1 = w->nv + 1;
    pm__wall_vertices(w, x, z, yb, yt, u, sc);
    float nb[2] = {0.0f, 0.0f}, nt[2] = {0.0f, 0.0f};
    pm__wall_quad(w, b1, t1, x, z, yb, yt, nb, nt, curb);
}

/* A ring's closing quad, back to the first column, whose sums are in
 * memory since the second column came (or, when the previous column is
 * the first, stored here first: then both its walls are flat, adding
 * +-0). */
static inline void pm__wall_close(pm__wall_run *w, bool curb) {
    double x1 = w->xf, z1 = w->zf, yb1 = w->ybf, yt1 = w->ytf;
    uint32_t bf = w->bf, tf = w->tf;
    if (w->b0 == bf) {
        pm__wall_store(w->nrm, w->b0, w->nb0, w->nb2);
        pm__wall_store(w->nrm, w->t0, w->nt0, w->nt2);
    }
    float nb[2], nt[2];
    const float *m = w->nrm + 3 * (size_t)bf, *k = w->nrm + 3 * (size_t)tf;
    nb[0] = m[0], nb[1] = m[2], nt[0] = k[0], nt[1] = k[2];
    pm__wall_quad(w, bf, tf, x1, z1, yb1, yt1, nb, nt, curb);
}

/* The end of a fast wall: its last column's sums stored, counts back. */
static void pm__wall_done(pm__slab *S, pm_prim *p, pm__wall_run *w, bool any) {
    if (any) {
        pm__wall_store(w->nrm, w->b0, w->nb0, w->nb2);
        pm__wall_store(w->nrm, w->t0, w->nt0, w->nt2);
    }
    pm__put_done(S, p, w->nv, w->ni, true);
}

/* ---- an open wall's quads in lanes ----
 * Once an open wall's m >= 1 columns are written (pm__col: column j's
 * bottom and top vertices nv0 + 2 j, + 1), its quads' crosses, normal
 * sums and triangles follow from the positions alone, in one pass over
 * the quads four at a time instead of pm__wall_quad per column: the same
 * crosses (each lane pm__wall_quad's operations in order, on the same
 * floats), the same kept triangles, the same normal sums. Quad q (1 <= q
 * < m) joins columns q - 1 and q; its crosses rounded to floats are fa0,
 * fa2 (the first wall) and fc0, fc2 (the second), taken as +0 for q = 0
 * and q = m. pm__wall_quad gives column q (then pm__wall_done the last)
 * the sums
 *     bottom: ((+0 + fa[q]) + fa[q + 1]) + fc[q + 1]
 *     top:    ((+0 + fa[q]) + fc[q]) + fc[q + 1]
 * in x (0) and z (2): a new column's sums start at +0 and take quad q's
 * first wall (bottom) or both (top); the next quad adds its first then
 * its second wall to the bottom, its second to the top. Where there is no
 * quad q (column 0) or q + 1 (the last column), adding +0 changes nothing:
 * none of these sums is -0 (a sum started at +0 never is). */
typedef float pm__f4v __attribute__((vector_size(16)));
typedef int32_t pm__i4v __attribute__((vector_size(16)));

/* An open wall's columns as they are written (x, z, bottom and top
 * heights: the floats of its vertices), four padding entries after the
 * last repeating it. Each array has room for n + 4 entries (stride st). */
typedef struct pm__cols {
    double *x, *z, *yb, *yt;   /* (the floats widened) */
    uint32_t m, st;
} pm__cols;

static bool pm__cols_init(pm__slab *S, pm__cols *c, uint32_t n) {
    c->st = n + 4;
    double *v = pm_arena_alloc(S->tmp, 4 * (size_t)c->st * sizeof *v);
    if (!v) return false;
    c->x = v, c->z = v + c->st, c->yb = v + 2 * c->st, c->yt = v + 3 * c->st;
    c->m = 0;
    return true;
}

/* Column j of an open wall: its bottom and top vertices (pos, uv: the
 * wall's first vertex's; as pm__wall_vertices writes them) and its
 * entry in the columns (x: c's x, then z, yb, yt at stride st). */
static inline __attribute__((always_inline)) void pm__col(float *restrict pos, float *restrict uv,
                                                          double *restrict x, uint32_t st, uint32_t j, float cx,
                                                          float cz, float yb, float yt, double u, double sc) {
    float fu = (float)(u * sc);
    float *p = pos + 6 * (size_t)j, *q = uv + 4 * (size_t)j;
    p[0] = cx, p[1] = yb, p[2] = cz;
    p[3] = cx, p[4] = yt, p[5] = cz;
    q[0] = fu, q[1] = 0;
    q[2] = fu, q[3] = (float)(((double)yt - yb) * sc);
    x[j] = cx, x[st + j] = cz, x[2 * st + j] = yb, x[3 * st + j] = yt;
}

static inline __attribute__((always_inline)) pm_d4 pm__load4(const double *p) {
    pm_d4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Four quads' 24 indices, quad j on vertices b0 + 2 j (bottom, top) and
 * b0 + 2 j + 2, + 3 (the next bottom, top): b0 plus the offsets here.
 * The curb's walls (b0, t1, b1), (b0, t0, t1), which is also the band's
 * step split on its diagonal, (inner a, outer b, inner b), (inner a,
 * outer a, outer b), where inner and outer vertices alternate; the outer
 * face's (b0, b1, t1), (b0, t1, t0). */
typedef uint32_t pm__u4 __attribute__((vector_size(16)));
static const pm__u4 pm__quads_curb[6] = {{0, 3, 2, 0}, {1, 3, 2, 5}, {4, 2, 3, 5},
                                         {4, 7, 6, 4}, {5, 7, 6, 9}, {8, 6, 7, 9}};
static const pm__u4 pm__quads_outer[6] = {{0, 2, 3, 0}, {3, 1, 2, 4}, {5, 2, 5, 3},
                                          {4, 6, 7, 4}, {7, 5, 6, 8}, {9, 6, 9, 7}};

static inline __attribute__((always_inline)) void pm__quads4(uint32_t *d, uint32_t b0, const pm__u4 *off) {
    const pm__u4 base = {b0, b0, b0, b0};
    for (int k = 0; k < 6; k++) {
        pm__u4 v = base + off[k];
        memcpy(d + 4 * k, &v, sizeof v);
    }
}

/* The open wall's quads (columns c, from vertex nv0 on): block by block,
 * quads q .. q + 3's crosses rounded to floats (+0 from quad m on) and
 * their kept triangles into d, then columns q - 1 .. q + 2's normal sums
 * (see above: fa[q - 1] is the block before's last, +0 for column 0)
 * into nrm (column j at nrm + 6 j), y +0. Returns the indices written. */
static inline __attribute__((always_inline)) uint32_t pm__wall_quads(pm__cols *c, bool curb, float *restrict nrm,
                                                                     uint32_t *restrict d, uint32_t nv0) {
    const pm_d4 zero = PM__SW_D4(0.0);
    const pm__f4v fz = {0.0f, 0.0f, 0.0f, 0.0f};
    uint32_t m = c->m, *d0 = d;
    for (int j = 0; j < 4; j++) {
        c->x[m + j] = c->x[m - 1], c->z[m + j] = c->z[m - 1];
        c->yb[m + j] = c->yb[m - 1], c->yt[m + j] = c->yt[m - 1];
    }
    pm__f4v pa0 = fz, pa2 = fz, pc0 = fz, pc2 = fz;   /* the block before's crosses */
    for (uint32_t q = 1; q <= m; q += 4) {
        pm_d4 x0 = pm__load4(c->x + q - 1), z0 = pm__load4(c->z + q - 1);
        pm_d4 yb0 = pm__load4(c->yb + q - 1), yt0 = pm__load4(c->yt + q - 1);
        pm_d4 x1 = pm__load4(c->x + q), z1 = pm__load4(c->z + q);
        pm_d4 yb1 = pm__load4(c->yb + q), yt1 = pm__load4(c->yt + q);
        pm_d4 dx = x1 - x0, dz = z1 - z0, a0, a2, c0, c2;
        PM__WALL_CROSSES(pm_d4, curb);
        /* a wall is kept unless both its crosses are +-0: a double is +-0
         * when all its bits but the sign are 0, and == 0 is true for just
         * those (NaN is kept either way) */
        pm_k4 za = (pm_k4)(a0 == zero) & (pm_k4)(a2 == zero), zc = (pm_k4)(c0 == zero) & (pm_k4)(c2 == zero);
        pm__f4v ga0 = __builtin_convertvector(a0, pm__f4v), ga2 = __builtin_convertvector(a2, pm__f4v);
        pm__f4v gc0 = __builtin_convertvector(c0, pm__f4v), gc2 = __builtin_convertvector(c2, pm__f4v);
        uint32_t nq = m - q < 4 ? m - q : 4;   /* quads here (0 .. 4) */
        if (nq < 4) {
            const pm__i4v lane = {0, 1, 2, 3};
            pm__i4v in = lane < (pm__i4v){(int32_t)nq, (int32_t)nq, (int32_t)nq, (int32_t)nq};
            ga0 = (pm__f4v)((pm__i4v)ga0 & in), ga2 = (pm__f4v)((pm__i4v)ga2 & in);
            gc0 = (pm__f4v)((pm__i4v)gc0 & in), gc2 = (pm__f4v)((pm__i4v)gc2 & in);
        }
        uint32_t b0 = nv0 + 2 * (q - 1);
        pm_k4 flat = za | zc;
        if (nq == 4 && !(flat[0] | flat[1] | flat[2] | flat[3])) {
            /* Four quads, all eight walls kept: as the loop below writes them. */
            pm__quads4(d, b0, curb ? pm__quads_curb : pm__quads_outer);
            d += 24;
        } else {
            /* each wall's index count: 3 kept, 0 left out (the masks
             * narrowed to 32 bits, through memory: one store, not a lane
             * extract each) */
            const pm__i4v three = {3, 3, 3, 3};
            pm__i4v ika = ~__builtin_convertvector(za, pm__i4v) & three;
            pm__i4v ikc = ~__builtin_convertvector(zc, pm__i4v) & three;
            int32_t ka[4], kc[4];
            memcpy(ka, &ika, sizeof ka), memcpy(kc, &ikc, sizeof kc);
            for (uint32_t j = 0; j < nq; j++, b0 += 2) {
                uint32_t t0 = b0 + 1, b1 = b0 + 2, t1 = b0 + 3;
                d[0] = b0, d[1] = curb ? t1 : b1, d[2] = curb ? b1 : t1;
                d += ka[j];
                d[0] = b0, d[1] = curb ? t0 : t1, d[2] = curb ? t1 : t0;
                d += kc[j];
            }
        }
        /* fa[q - 1 + j] for the columns here: the last quad before, then this block's */
        pm__f4v fa0 = {pa0[3], ga0[0], ga0[1], ga0[2]}, fa2 = {pa2[3], ga2[0], ga2[1], ga2[2]};
        pm__f4v fc0 = {pc0[3], gc0[0], gc0[1], gc0[2]}, fc2 = {pc2[3], gc2[0], gc2[1], gc2[2]};
        pm__f4v bx = ((fz + fa0) + ga0) + gc0, bz = ((fz + fa2) + ga2) + gc2;
        pm__f4v tx = ((fz + fa0) + fc0) + gc0, tz = ((fz + fa2) + fc2) + gc2;
        uint32_t nc = nq + 1 < 4 ? nq + 1 : 4;   /* columns here */
        float *o = nrm + 6 * (size_t)(q - 1);
        for (uint32_t j = 0; j < nc; j++, o += 6) {
            o[0] = bx[j], o[1] = 0.0f, o[2] = bz[j];
            o[3] = tx[j], o[4] = 0.0f, o[5] = tz[j];
        }
        pa0 = ga0, pa2 = ga2, pc0 = gc0, pc2 = gc2;
    }
    return (uint32_t)(d - d0);
}

/* pm__wall_quads for the curb face and for the outer face (curb a constant there). */
PM__SW_CLONES
static uint32_t pm__wall_quads_curb(pm__cols *c, float *nrm, uint32_t *d, uint32_t nv0) {
    return pm__wall_quads(c, true, nrm, d, nv0);
}

PM__SW_CLONES
static uint32_t pm__wall_quads_outer(pm__cols *c, float *nrm, uint32_t *d, uint32_t nv0) {
    return pm__wall_quads(c, false, nrm, d, nv0);
}

/* pm__curb_face (below) with room: see above. */
static void pm__curb_face_fast(pm__slab *S, pm_prim *p) {
    double sc = S->N->p->uv_scale, u = 0;
    pm__wall_run w = {.pos = p->positions, .nrm = p->normals, .uv = p->uvs, .idx = p->indices,
                      .nv = p->vcount, .ni = p->icount};
    uint32_t n = S->n, last = S->closed ? n - 1 : n;
    if (last == 0) return;   /* (a ring of one section: pm__curb_face adds nothing) */
    const float *b = pm__apos(S, 0);
    pm__wall_first(&w, b[0], b[2], b[1], S->top[0], u, sc);
    for (uint32_t i = 1; i < last; i++) {
        b = pm__apos(S, i);
        u += S->len[i - 1];
        pm__wall_next(&w, b[0], b[2], b[1], S->top[i], u, sc, true);
    }
    if (last < n) pm__wall_close(&w, true);
    pm__wall_done(S, p, &w, true);
}

/* pm__band_vertices (below) with room. */
static void pm__band_vertices_fast(pm__slab *S, pm_prim *p) {
    float *restrict pos = p->positions;
    uint32_t nv = p->vcount, n = S->n, last = S->closed ? n - 1 : n;
    uint32_t *restrict ii = S->ii, *restrict oi = S->oi;
    const pm_v2 *out = S->out;
    const float *top = S->top, *oy = S->oy;
    /* Each section's inner vertex, then its outer one unless the section
     * before has its outer point. Positions only: the band's UVs and
     * normals are all written once the slabs are done (network_stitch.c:
     * pm__planar_uvs, pm_prim_compute_normals, before anything reads
     * them), so what pm__band_vertices puts there is overwritten. */
    for (uint32_t i = 0; i < last; i++) {
        const float *b = pm__apos(S, i);
        float *q = pos + 3 * (size_t)nv;
        q[0] = b[0], q[1] = top[i], q[2] = b[2];
        ii[i] = nv++;
        if (i > 0 && pm_v2_eq(out[i], out[i - 1])) { oi[i] = oi[i - 1]; continue; }
        q[3] = (float)out[i].x, q[4] = oy[i], q[5] = (float)-out[i].y;
        oi[i] = nv++;
    }
    if (last < n) { ii[last] = ii[0]; oi[last] = oi[0]; }
    pm__put_done(S, p, nv, p->icount, false);
}

/* hypot(x[k], y[k]) into x[k] for k < m, four at a time (pm_hypot4),
 * the rest one by one (pm__hypot). */
PM__SW_CLONES
static void pm__hypot_run(double *x, const double *y, uint32_t m) {
    uint32_t k = 0;
    for (; k + 4 <= m; k += 4) {
        pm_d4 a, b;
        memcpy(&a, x + k, sizeof a);
        memcpy(&b, y + k, sizeof b);
        a = pm_hypot4(a, b);
        memcpy(x + k, &a, sizeof a);
    }
    for (; k < m; k++) x[k] = pm__hypot(x[k], y[k]);
}

/* pm__outer_face (below) with room. el: room for n - 1 doubles twice,
 * for the lengths along the outer edge between its distinct points. */
static void pm__outer_face_fast(pm__slab *S, pm_prim *p, double *el) {
    double sc = S->N->p->uv_scale, u = 0;
    pm__wall_run w = {.pos = p->positions, .nrm = p->normals, .uv = p->uvs, .idx = p->indices,
                      .nv = p->vcount, .ni = p->icount};
    const float *band = S->s->prims[2].positions;
    uint32_t n = S->n, prev = 0, m = 0;
    bool any = false;
    /* The steps' differences first, their lengths in lanes, then the wall. */
    double *ey = el + (n - 1);
    for (uint32_t i = 1; i < n; i++) {
        if (S->oi[i] == S->oi[i - 1]) continue;
        el[m] = S->out[i].x - S->out[prev].x;
        ey[m++] = S->out[i].y - S->out[prev].y;
        prev = i;
    }
    pm__hypot_run(el, ey, m);
    m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i > 0 && S->oi[i] == S->oi[i - 1]) continue;
        const float *o = band + 3 * (size_t)S->oi[i];
        if (any) u += el[m++];
        if (S->closed && i + 1 == n) {
            if (any) pm__wall_close(&w, false);
        } else if (!any) pm__wall_first(&w, o[0], o[2], S->oby[i], o[1], u, sc);
        else pm__wall_next(&w, o[0], o[2], S->oby[i], o[1], u, sc, false);
        any = true;
    }
    pm__wall_done(S, p, &w, any);
}

/* The curb face: bottom on the asphalt's own vertices (same floats), top
 * curb_height up, facing the road; U along the curb, V up (uv_scale). */
static int pm__curb_face(pm__slab *S) {
    if (pm__room(S, &S->s->prims[1], 2 * S->n, 6 * S->n, true)) {
        pm__curb_face_fast(S, &S->s->prims[1]);
        return PM_OK;
    }
    double sc = S->N->p->uv_scale, u = 0;
    uint32_t b0 = 0, t0 = 0, bf = 0, tf = 0;
    for (uint32_t i = 0; i < S->n; i++) {
        const float *b = pm__apos(S, i);
        if (i > 0) u += S->len[i - 1];
        float t[3] = {b[0], S->top[i], b[2]};
        uint32_t b1, t1;
        if (S->closed && i + 1 == S->n) { b1 = bf; t1 = tf; }
        else {
            int rc = pm__vtx(S, 1, b, (float)(u * sc), 0, &b1);
            if (rc == PM_OK) rc = pm__vtx(S, 1, t, (float)(u * sc), (float)(((double)t[1] - b[1]) * sc), &t1);
            if (rc) return rc;
        }
        if (i == 0) { bf = b1; tf = t1; }
        else if (pm__quad_wall(S, b0, t0, b1, t1, true)) return PM_ERR_NOMEM;
        b0 = b1;
        t0 = t1;
    }
    return PM_OK;
}

/* The band's vertices: its inner edge on the curb's top (same floats),
 * one outer vertex per distinct outer point; planar UVs, (x, z) *
 * uv_scale, continuous with the junctions' bands. */
static int pm__band_vertices(pm__slab *S) {
    if (pm__room(S, &S->s->prims[2], 2 * S->n, 0, false)) {
        pm__band_vertices_fast(S, &S->s->prims[2]);
        return PM_OK;
    }
    double sc = S->N->p->uv_scale;
    for (uint32_t i = 0; i < S->n; i++) {
        if (S->closed && i + 1 == S->n) { S->ii[i] = S->ii[0]; S->oi[i] = S->oi[0]; continue; }
        const float *b = pm__apos(S, i);
        float t[3] = {b[0], S->top[i], b[2]};
        int rc = pm__vtx(S, 2, t, (float)(t[0] * sc), (float)(t[2] * sc), &S->ii[i]);
        if (rc) return rc;
        if (i > 0 && pm_v2_eq(S->out[i], S->out[i - 1])) { S->oi[i] = S->oi[i - 1]; continue; }
        float o[3] = {(float)S->out[i].x, S->oy[i], (float)-S->out[i].y};
        if ((rc = pm__vtx(S, 2, o, (float)(o[0] * sc), (float)(o[2] * sc), &S->oi[i]))) return rc;
    }
    return PM_OK;
}

typedef PM_VEC(uint32_t) pm__tris;

/* How the band between two sections is triangulated, decided once while
 * planning (pm__band_step) and replayed when building (pm__band_emit):
 * one triangle where the outer point is shared, else the quad split on
 * one diagonal or the other; each triangle kept unless flat. */
enum { PM__STEP_ONE = 1, PM__STEP_DIAG = 2, PM__STEP_KEEP1 = 4, PM__STEP_KEEP2 = 8,
       PM__STEP_QUAD = PM__STEP_DIAG | PM__STEP_KEEP1 | PM__STEP_KEEP2 };

/* 0 for a flat triangle, its keep bit for a counter-clockwise one (from
 * +Y), -1 for a clockwise one (the band folds there). */
/* The sign of pm_v2_orient (exact; all these uses read) with the filter of
 * pm_orient2d_fast inline: most steps' triangles are far from flat. */
static inline double pm__orient(pm_v2 a, pm_v2 b, pm_v2 c) {
    if (PM__SIDEWALK_PLAIN) return pm_v2_orient(a, b, c);
    double pa[2] = {a.x, a.y}, pb[2] = {b.x, b.y}, pc[2] = {c.x, c.y};
    return pm_orient2d_fast(pa, pb, pc);
}

/* Whether pm__orient(a, ob, b) > 0 and pm__orient(a, oa, ob) > 0 are both
 * sure by the filter alone: the two determinants and bounds of
 * pm_orient2d_fast in two lanes (the same operations, so the same
 * values; a determinant above its bound is positive exactly). false:
 * not shown (the scalar tests decide). */
static inline bool pm__quad_sure(pm_v2 a, pm_v2 oa, pm_v2 ob, pm_v2 b) {
#ifdef __SSE2__
    const __m128d abs = _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX)), k = _mm_set1_pd(3.3306690738754716e-16);
    __m128d A = _mm_loadu_pd(&a.x), OA = _mm_loadu_pd(&oa.x), OB = _mm_loadu_pd(&ob.x), B = _mm_loadu_pd(&b.x);
    /* (Lane 0: a, ob, b; lane 1: a, oa, ob.) */
    __m128d ax = _mm_unpacklo_pd(A, A), ay = _mm_unpackhi_pd(A, A);
    __m128d bx = _mm_unpacklo_pd(OB, OA), by = _mm_unpackhi_pd(OB, OA);
    __m128d cx = _mm_unpacklo_pd(B, OB), cy = _mm_unpackhi_pd(B, OB);
    __m128d left = _mm_mul_pd(_mm_sub_pd(ax, cx), _mm_sub_pd(by, cy));
    __m128d right = _mm_mul_pd(_mm_sub_pd(ay, cy), _mm_sub_pd(bx, cx));
    __m128d det = _mm_sub_pd(left, right);
    __m128d bound = _mm_mul_pd(k, _mm_add_pd(_mm_and_pd(left, abs), _mm_and_pd(right, abs)));
    return _mm_movemask_pd(_mm_cmpgt_pd(det, bound)) == 3;
#else
    (void)a, (void)oa, (void)ob, (void)b;
    return false;
#endif
}

static int pm__band_tri(pm_v2 pa, pm_v2 pb, pm_v2 pc, int keep) {
    double o = pm__orient(pa, pb, pc);
    return o == 0 ? 0 : (o < 0 ? -1 : keep);
}

/* The band between sections i and i + 1: a triangle where the outer
 * point is shared (a trimmed loop), else the quad split on the diagonal
 * that keeps both triangles counter-clockwise. Returns its PM__STEP_
 * code, or PM_ERR_GEOMETRY where it folds. Before the vertices:
 * positions only. */
static int pm__band_step(const pm__slab *S, uint32_t i) {
    pm_v2 pia = pm__plan(pm__apos(S, i)), pib = pm__plan(pm__apos(S, i + 1));
    pm_v2 pob = S->out[i + 1], poa = S->out[i];
    if (pm_v2_eq(poa, pob)) {
        int k = pm__band_tri(pia, poa, pib, PM__STEP_KEEP1);
        return k < 0 ? PM_ERR_GEOMETRY : PM__STEP_ONE | k;
    }
    if (pm__orient(pia, pob, pib) > 0 && pm__orient(pia, poa, pob) > 0)
        return PM__STEP_QUAD;
    int k1 = pm__band_tri(pia, poa, pib, PM__STEP_KEEP1);
    int k2 = k1 < 0 ? -1 : pm__band_tri(pib, poa, pob, PM__STEP_KEEP2);
    return k1 < 0 || k2 < 0 ? PM_ERR_GEOMETRY : k1 | k2;
}

/* Appends step i's triangles (code from pm__band_step) to t. */
static int pm__band_emit(pm__slab *S, pm__tris *t, uint32_t i, int code) {
    uint32_t ia = S->ii[i], ib = S->ii[i + 1], ob = S->oi[i + 1], oa = S->oi[i];
    if (t->len + 6 > t->cap && pm_vec_reserve(S->tmp, t, t->len + 6)) return PM_ERR_NOMEM;
    uint32_t *d = t->data + t->len;
    size_t n = 0;
    if (code & PM__STEP_ONE) {
        if (code & PM__STEP_KEEP1) { d[n++] = ia; d[n++] = oa; d[n++] = ib; }
    } else if (code & PM__STEP_DIAG) {
        d[n++] = ia; d[n++] = ob; d[n++] = ib;
        d[n++] = ia; d[n++] = oa; d[n++] = ob;
    } else {
        if (code & PM__STEP_KEEP1) { d[n++] = ia; d[n++] = oa; d[n++] = ib; }
        if (code & PM__STEP_KEEP2) { d[n++] = ib; d[n++] = oa; d[n++] = ob; }
    }
    t->len += n;
    return PM_OK;
}

/* Ear-clips the band between sections a and b as one polygon: outer
 * point a, outer point b, then the curb back from b to a (counter-
 * clockwise). Writes triangles of section-coded corners (k: curb point k,
 * n + k: outer point k) to out; returns their count or PM_ERR_GEOMETRY
 * when the polygon is not simple. */
static long pm__region_clip(pm__slab *S, uint32_t a, uint32_t b, uint32_t *out) {
    uint32_t n = S->n, m = 0, cap = b - a + 3;
    double *xy = pm_arena_alloc(S->tmp, 2 * cap * sizeof *xy);
    uint32_t *code = pm_arena_alloc(S->tmp, cap * sizeof *code);
    uint32_t *tri = pm_arena_alloc(S->tmp, pm_earclip_bound(cap) * sizeof *tri);
    if (!xy || !code || !tri) return PM_ERR_NOMEM;
    for (uint32_t k = 0; k < b - a + 3; k++) {
        uint32_t c = k == 0 ? n + a : (k == 1 ? n + b : b - (k - 2));
        pm_v2 p = c >= n ? S->out[c - n] : pm__plan(pm__apos(S, c));
        if (m > 0 && xy[2 * m - 2] == p.x && xy[2 * m - 1] == p.y) continue;
        xy[2 * m] = p.x;
        xy[2 * m + 1] = p.y;
        code[m++] = c;
    }
    if (m > 1 && xy[0] == xy[2 * m - 2] && xy[1] == xy[2 * m - 1]) m--;
    long nt = m >= 3 ? pm_earclip(S->tmp, xy, m, tri) : PM_ERR_GEOMETRY;
    if (nt < 0) return nt == PM_ERR_NOMEM ? PM_ERR_NOMEM : PM_ERR_GEOMETRY;
    for (long k = 0; k < 3 * nt; k++) out[k] = code[tri[k]];
    return nt;
}

/* Where the band's quads would fold (the curb zigzags where the road
 * collapsed its inner side next to a tight turn), the sections between
 * share one outer point and the band there is ear-clipped as one polygon,
 * widened a section at a time until that polygon is simple. reg[a] = b
 * marks such a region. Before the vertices: positions only. */
static int pm__band_plan(pm__slab *S, uint32_t *reg, uint8_t *step, uint32_t bad[2]) {
    uint32_t n = S->n;
    uint32_t *tri = pm_arena_alloc(S->tmp, 3 * (n + 2) * sizeof *tri);
    if (!tri) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) reg[i] = 0;
    pm_v2 pib = n ? pm__plan(pm__apos(S, 0)) : (pm_v2){0, 0};
    for (uint32_t i = 0; i + 1 < n;) {
        /* pm__band_step's first answer, the usual one, with this step's
         * curb point carried from the one before. */
        pm_v2 pia = pib, poa = S->out[i], pob = S->out[i + 1];
        pib = pm__plan(pm__apos(S, i + 1));
        if (!PM__SIDEWALK_PLAIN && !pm_v2_eq(poa, pob) &&
            (pm__quad_sure(pia, poa, pob, pib) || (pm__orient(pia, pob, pib) > 0 && pm__orient(pia, poa, pob) > 0))) {
            step[i++] = PM__STEP_QUAD;
            continue;
        }
        int code = pm__band_step(S, i);
        if (code >= 0) { step[i++] = (uint8_t)code; continue; }
        uint32_t a = i, b = i + 1;
        while (b + 1 < n && pm__band_step(S, b) < 0) b++;
        long nt = PM_ERR_GEOMETRY;
        for (int grow = 0; grow < 12; grow++) {
            nt = pm__region_clip(S, a, b, tri);
            if (nt != PM_ERR_GEOMETRY) break;
            if (a > 0 && (grow % 2 == 0 || b + 1 >= n)) a--;
            else if (b + 1 < n) b++;
            else break;
        }
        if (nt == PM_ERR_GEOMETRY) {
            bad[0] = i;
            bad[1] = i + 1;
            while (bad[1] + 1 < n && pm__band_step(S, bad[1]) < 0) bad[1]++;
        }
        if (nt < 0) return (int)nt;
        /* Earlier regions this one grew into are merged into it. */
        for (uint32_t k = a; k < b; k++) reg[k] = 0;
        if (b > a + 1 && pm__slab_own(S)) return PM_ERR_NOMEM;
        for (uint32_t k = a + 1; k < b; k++) {
            S->out[k] = S->out[a];
            S->oy[k] = S->oy[a];
            S->oby[k] = S->oby[a];
        }
        reg[a] = b;
        i = b;
        if (i < n) pib = pm__plan(pm__apos(S, i));
    }
    return PM_OK;
}

/* The band's triangles: each step as planned (a step outside the regions
 * keeps its outer points from then), each region ear-clipped. */
static bool pm__band_fast(pm__slab *S, const uint32_t *reg, const uint8_t *step);

static int pm__band(pm__slab *S, const uint32_t *reg, const uint8_t *step) {
    if (pm__band_fast(S, reg, step)) return PM_OK;
    pm__tris t = {0};
    uint32_t n = S->n;
    uint32_t *tri = pm_arena_alloc(S->tmp, 3 * (n + 2) * sizeof *tri);
    /* At most two triangles a step (a region of k steps clips into at
     * most k + 1 <= 2 k): one allocation, not a vector doubling from 8. */
    if (!tri || pm_vec_reserve(S->tmp, &t, 6 * (size_t)n)) return PM_ERR_NOMEM;
    int rc = PM_OK;
    pm__net *N = S->N;
    for (uint32_t i = 0; rc == PM_OK && i + 1 < n;) {
        size_t before = t.len;
        uint32_t next = reg[i] ? reg[i] : i + 1;
        if (!reg[i]) rc = pm__band_emit(S, &t, i, step[i]);
        else {
            long nt = pm__region_clip(S, i, reg[i], tri);
            if (nt < 0) return (int)nt;
            for (long k = 0; k < 3 * nt; k++) {
                uint32_t c = tri[k];
                if (pm_vec_push(S->tmp, &t, c >= n ? S->oi[c - n] : S->ii[c]) < 0) return PM_ERR_NOMEM;
            }
        }
        /* Each triangle's sections, to cut it out should it lie on another piece. */
        pm__swsrc src = {S->road, S->base + i, S->base + next, (uint8_t)S->side};
        size_t need = N->swsrc.len + (t.len - before) / 3;
        if (rc == PM_OK && need > N->swsrc.cap && pm_vec_reserve(N->a, &N->swsrc, need)) return PM_ERR_NOMEM;
        for (size_t k = before; rc == PM_OK && k < t.len; k += 3) N->swsrc.data[N->swsrc.len++] = src;
        i = next;
    }
    if (rc) return rc;
    pm_prim *sp = &S->s->prims[2];
    if (!PM__SIDEWALK_PLAIN && sp->icap - sp->icount >= t.len) {
        /* (pm_prim_add_tri's stores for every triangle, at once.) */
        if (t.len) memcpy(sp->indices + sp->icount, t.data, t.len * sizeof *t.data);
        sp->icount += (uint32_t)t.len;
        if (t.len) S->s->validated = false;
        return PM_OK;
    }
    for (size_t i = 0; i < t.len; i += 3)
        if (pm_prim_add_tri(S->s, sp, t.data[i], t.data[i + 1], t.data[i + 2]) < 0) return PM_ERR_NOMEM;
    return PM_OK;
}

/* pm__band without regions, when the sidewalk primitive and the sources
 * have room: each step's triangles (pm__band_emit's) and their sources
 * written in place, and counted at the end. false (nothing counted; what
 * was written past the counts is the plain path's to overwrite) when a
 * region comes or there is no room. */
static bool pm__band_fast(pm__slab *S, const uint32_t *reg, const uint8_t *step) {
    pm_prim *sp = &S->s->prims[2];
    pm__net *N = S->N;
    uint32_t n = S->n;
    if (PM__SIDEWALK_PLAIN || n < 2 || sp->icap - sp->icount < 6 * (size_t)(n - 1) ||
        N->swsrc.cap - N->swsrc.len < 2 * (size_t)(n - 1))
        return false;
    uint32_t *restrict d = sp->indices + sp->icount, *d0 = d;
    pm__swsrc *restrict src = N->swsrc.data + N->swsrc.len, *src0 = src;
    const uint32_t *ii = S->ii, *oi = S->oi;
    uint32_t ia = ii[0], oa = oi[0];
    pm__swsrc q = {S->road, S->base, S->base + 1, (uint8_t)S->side};
    for (uint32_t i = 0; i + 1 < n;) {
        /* Four steps split on the diagonal, outside regions, on vertices
         * in order (S->seq): their triangles at once. (No region starts
         * at them, so none is under way: the plain step would have
         * stopped at its start. A region's steps have no code.) */
        uint32_t c4, r4[4];
        if (S->seq && i + 4 < n && (memcpy(r4, reg + i, sizeof r4), (r4[0] | r4[1] | r4[2] | r4[3]) == 0) &&
            (memcpy(&c4, step + i, 4), c4 == 0x01010101u * PM__STEP_QUAD)) {
            pm__quads4(d, ia, pm__quads_curb);
            d += 24;
            for (int k = 0; k < 4; k++, q.lo++, q.hi++) src[0] = q, src[1] = q, src += 2;
            i += 4;
            ia = ii[i], oa = oi[i];
            continue;
        }
        if (reg[i]) return false;
        uint32_t ib = ii[i + 1], ob = oi[i + 1];
        int code = step[i];
        if (code & PM__STEP_ONE) {
            if (code & PM__STEP_KEEP1) { d[0] = ia, d[1] = oa, d[2] = ib, d += 3; *src++ = q; }
        } else if (code & PM__STEP_DIAG) {
            d[0] = ia, d[1] = ob, d[2] = ib;
            d[3] = ia, d[4] = oa, d[5] = ob;
            d += 6;
            src[0] = q, src[1] = q, src += 2;
        } else {
            if (code & PM__STEP_KEEP1) { d[0] = ia, d[1] = oa, d[2] = ib, d += 3; *src++ = q; }
            if (code & PM__STEP_KEEP2) { d[0] = ib, d[1] = oa, d[2] = ob, d += 3; *src++ = q; }
        }
        ia = ib, oa = ob;
        i++, q.lo++, q.hi++;
    }
    sp->icount += (uint32_t)(d - d0);
    N->swsrc.len += (size_t)(src - src0);
    if (d != d0) S->s->validated = false;
    return true;
}

/* The outer face: from each distinct outer point of the band (same floats)
 * down to the road edge's height, facing away from the slab. */
static int pm__outer_face(pm__slab *S) {
    if (pm__room(S, &S->s->prims[1], 2 * S->n, 6 * S->n, true)) {
        double *el = pm_arena_alloc(S->tmp, 2 * (S->n ? S->n : 1) * sizeof *el);
        if (!el) return PM_ERR_NOMEM;
        pm__outer_face_fast(S, &S->s->prims[1], el);
        return PM_OK;
    }
    double sc = S->N->p->uv_scale, u = 0;
    uint32_t b0 = 0, t0 = 0, bf = 0, tf = 0, prev = 0;
    bool any = false;
    for (uint32_t i = 0; i < S->n; i++) {
        if (i > 0 && S->oi[i] == S->oi[i - 1]) continue;
        const float *o = S->s->prims[2].positions + 3 * S->oi[i];
        float bot[3] = {o[0], S->oby[i], o[2]};
        if (any) u += hypot(S->out[i].x - S->out[prev].x, S->out[i].y - S->out[prev].y);
        uint32_t b1, t1;
        if (S->closed && i + 1 == S->n) { b1 = bf; t1 = tf; }
        else {
            int rc = pm__vtx(S, 1, bot, (float)(u * sc), 0, &b1);
            if (rc == PM_OK) rc = pm__vtx(S, 1, o, (float)(u * sc), (float)(((double)o[1] - bot[1]) * sc), &t1);
            if (rc) return rc;
        }
        if (!any) { bf = b1; tf = t1; }
        else if (pm__quad_wall(S, b0, t0, b1, t1, false)) return PM_ERR_NOMEM;
        any = true;
        prev = i;
        b0 = b1;
        t0 = t1;
    }
    return PM_OK;
}

/* pm__curb_face, pm__band_vertices, pm__band and pm__outer_face of an
 * open slab whose curb and sidewalk primitives have room for all of it
 * (the stitch makes room for every slab: pm__network_sidewalk_bound):
 * the curb's columns, the band's vertices and the outer face's columns in
 * one pass over the sections (they read the same curb points, heights
 * and outer points), then the curb's quads in lanes, the band's
 * triangles and the outer face's quads in lanes. The same vertices,
 * triangles and normal sums as those four (a band vertex as
 * pm__band_vertices_fast writes it, a section's outer point kept unless
 * it is the section before's; the outer face's columns on those points'
 * floats, its lengths by pm__hypot_run). false, nothing written, when it
 * does not apply; else *rc is pm__band's. */
static bool pm__faces_fast(pm__slab *S, const uint32_t *reg, const uint8_t *step, int *rc) {
    pm_prim *p = &S->s->prims[1], *sp = &S->s->prims[2];
    uint32_t n = S->n;
    if (PM__SIDEWALK_PLAIN || S->closed || n < 2 || !pm__room(S, p, 4 * n, 12 * n, true) ||
        !pm__room(S, sp, 2 * n, 0, false))
        return false;
    pm__cols cc, oc;
    double *el = pm_arena_alloc(S->tmp, 2 * (size_t)n * sizeof *el);
    if (!el || !pm__cols_init(S, &cc, n) || !pm__cols_init(S, &oc, n)) return false;
    /* The outer face's steps between distinct points, their lengths in lanes. */
    const pm_v2 *out = S->out;
    double *ey = el + (n - 1);
    uint32_t m = 0;
    for (uint32_t i = 1, prev = 0; i < n; i++) {
        if (pm_v2_eq(out[i], out[i - 1])) continue;
        el[m] = out[i].x - out[prev].x;
        ey[m++] = out[i].y - out[prev].y;
        prev = i;
    }
    pm__hypot_run(el, ey, m);
    double sc = S->N->p->uv_scale, uc = 0, uo = 0;
    uint32_t nv0 = p->vcount, ov0 = nv0 + 2 * n, nb = sp->vcount, j = 0;
    float *cpos = p->positions + 3 * (size_t)nv0, *cuv = p->uvs + 2 * (size_t)nv0;
    float *opos = p->positions + 3 * (size_t)ov0, *ouv = p->uvs + 2 * (size_t)ov0;
    float *restrict bpos = sp->positions;
    const float *asphalt = S->asphalt, *top = S->top, *oy = S->oy, *oby = S->oby;
    const uint32_t *cv = S->cv;
    const double *len = S->len;
    uint32_t *restrict ii = S->ii, *restrict oi = S->oi;
    for (uint32_t i = 0; i < n; i++) {
        const float *b = asphalt + 3 * (size_t)cv[i];
        float t = top[i];
        if (i > 0) uc += len[i - 1];
        pm__col(cpos, cuv, cc.x, cc.st, i, b[0], b[2], b[1], t, uc, sc);
        float *q = bpos + 3 * (size_t)nb;
        q[0] = b[0], q[1] = t, q[2] = b[2];
        ii[i] = nb++;
        if (i > 0 && pm_v2_eq(out[i], out[i - 1])) {
            oi[i] = oi[i - 1];
            continue;
        }
        float ox = (float)out[i].x, oz = (float)-out[i].y;
        q[3] = ox, q[4] = oy[i], q[5] = oz;
        oi[i] = nb++;
        if (j > 0) uo += el[j - 1];
        pm__col(opos, ouv, oc.x, oc.st, j++, ox, oz, oby[i], oy[i], uo, sc);
    }
    cc.m = n, oc.m = j;
    S->seq = j == n;
    pm__put_done(S, sp, nb, sp->icount, false);
    uint32_t ni = p->icount;
    ni += pm__wall_quads_curb(&cc, p->normals + 3 * (size_t)nv0, p->indices + ni, nv0);
    pm__put_done(S, p, ov0, ni, true);
    *rc = pm__band(S, reg, step);
    if (*rc == PM_OK) {
        ni += pm__wall_quads_outer(&oc, p->normals + 3 * (size_t)ov0, p->indices + ni, ov0);
        pm__put_done(S, p, ov0 + 2 * j, ni, true);
    }
    return true;
}

/* An end cap at a free end of the slab (a road's free end, or a mouth
 * whose junction has no slab on that side): the vertical quad from the
 * curb's edge to the outer face's edge, facing back along the road at the
 * chain's start and forward at its end. */
static int pm__end_cap(pm__slab *S, uint32_t i, bool first) {
    const float *b = pm__apos(S, i);
    float t[3] = {b[0], S->top[i], b[2]};
    float ot[3] = {(float)S->out[i].x, S->oy[i], (float)-S->out[i].y};
    float ob[3] = {ot[0], S->oby[i], ot[2]};
    double sc = S->N->p->uv_scale, w = hypot(S->out[i].x - b[0], S->out[i].y + b[2]) * sc;
    uint32_t v[4];
    int rc = pm__vtx(S, 1, b, 0, 0, &v[0]);
    if (rc == PM_OK) rc = pm__vtx(S, 1, t, 0, (float)(((double)t[1] - b[1]) * sc), &v[1]);
    if (rc == PM_OK) rc = pm__vtx(S, 1, ot, (float)w, (float)(((double)ot[1] - b[1]) * sc), &v[2]);
    if (rc == PM_OK) rc = pm__vtx(S, 1, ob, (float)w, (float)(((double)ob[1] - b[1]) * sc), &v[3]);
    if (rc) return rc;
    if (first) {
        rc = pm__wall(S, v[0], v[3], v[2]);
        return rc ? rc : pm__wall(S, v[0], v[2], v[1]);
    }
    rc = pm__wall(S, v[0], v[1], v[2]);
    return rc ? rc : pm__wall(S, v[0], v[2], v[3]);
}

/* Takes a junction slab's cross-section for section i; false when the
 * slab's curb vertex is not this section's (the chain is not where the
 * stitch put it). */
static bool pm__join(pm__slab *S, uint32_t i, const pm__node *V, const pm_junction_slab_end *e) {
    if (S->cv[i] != V->voff + e->curb_vertex) return false;
    S->top[i] = e->curb_top[1];
    S->out[i] = pm__plan(e->outer_top);
    S->oy[i] = e->outer_top[1];
    S->oby[i] = e->outer_bottom[1];
    return true;
}

/* The junction slab end that side `side` (0 left, 1 right) of the road
 * meets at its start (at_end false) or end, or NULL. */
static const pm_junction_slab_end *pm__slab_at(const pm__net *N, const pm__road *R, int side,
                                               bool at_end, const pm__node **V) {
    int64_t node = at_end ? R->end : R->start, arm = at_end ? R->arm1 : R->arm0;
    if (R->closed || arm < 0) return NULL;
    *V = &N->nodes[node];
    if (!(*V)->slab) return NULL;
    /* Looking out of the junction, the road's left at its start is the
     * mouth's left; at its end, the mouth's right. */
    bool mouth_left = at_end ? side == 1 : side == 0;
    const pm_junction_slab_end *e = &(*V)->slab[2 * arm + (mouth_left ? 0 : 1)];
    return e->present ? e : NULL;
}

static void pm__slab_problem(pm__net *N, const pm__road *R, int side, const char *why) {
    pm_network_problem *q;
    if (pm__network_problem(N, &q)) return;
    q->error = PM_NETWORK_SIDEWALK;
    q->node = -1;
    for (size_t k = 0; k < R->nsteps && q->nedges < 4; k++)
        q->edges[q->nedges++] = N->steps.data[R->first_step + k].edge;
    snprintf(q->message, sizeof q->message, "the sidewalk on the %s side of the road along edge %u %s",
             side ? "right" : "left", q->edges[0], why);
}

/* Records where a side's sidewalk is interrupted (sections a..b of its
 * chain, b - a curb edges left bare). */
static int pm__gap(pm__net *N, const pm__slab *S, size_t road, int side, uint32_t a, uint32_t b,
                   bool corner) {
    if (pm_vec_reserve(N->a, &N->gaps, N->gaps.len + 1)) return PM_ERR_NOMEM;
    pm__gap_t *g = &N->gaps.data[N->gaps.len++];
    g->corner = corner;
    g->overlap = false;   /* (set by the callers that cut; the vector's memory is not zeroed) */
    g->road = road;
    g->side = side;
    g->bare = b - a;
    memcpy(g->from, pm__apos(S, a), sizeof g->from);
    memcpy(g->to, pm__apos(S, b), sizeof g->to);
    return PM_OK;
}

/* The slab over sections lo..hi of the full chain F, with an end cap at
 * lo and / or hi (else a junction's slab continues there). Where the band
 * cannot be built (the road's own inner edge crosses itself in a turn too
 * tight for it), the slab stops on both sides of that stretch with end
 * caps, and the gap is recorded. */
static int pm__slab_piece(pm__slab *F, size_t road, int side, uint32_t lo, uint32_t hi, bool cap_lo,
                          bool cap_hi) {
    pm__slab T = *F;
    T.cv += lo; T.len += lo; T.top += lo; T.out += lo; T.oy += lo; T.oby += lo; T.oi += lo; T.ii += lo;
    T.n = hi - lo + 1;
    T.base = lo;
    T.closed = F->closed && lo == 0 && hi + 1 == F->n;
    /* Each piece trims its own outer edge: a loop cut by a gap must not
     * leave both pieces one shared outer point. So it changes a copy of
     * its side's (pm__slab_own), made when it first changes them. */
    T.own = false;
    if (PM__SIDEWALK_PLAIN && pm__slab_own(&T)) return PM_ERR_NOMEM;
    if (pm__trim(&T)) return PM_ERR_NOMEM;
    uint32_t *reg = pm_arena_alloc(F->tmp, T.n * sizeof *reg), bad[2] = {0, 0};
    uint8_t *step = pm_arena_alloc(F->tmp, T.n);
    if (!reg || !step) return PM_ERR_NOMEM;
    int rc = pm__band_plan(&T, reg, step, bad);
    if (rc == PM_ERR_GEOMETRY && !T.closed) {
        rc = pm__gap(F->N, &T, road, side, bad[0], bad[1], false);
        /* A piece left empty at a junction's end still closes its slab,
         * with the cap the junction left out. */
        if (rc == PM_OK && bad[0] >= 1) rc = pm__slab_piece(F, road, side, lo, lo + bad[0], cap_lo, true);
        else if (rc == PM_OK && !cap_lo) rc = pm__end_cap(&T, 0, false);
        if (rc == PM_OK && bad[1] + 1 < T.n) rc = pm__slab_piece(F, road, side, lo + bad[1], hi, true, cap_hi);
        else if (rc == PM_OK && !cap_hi) rc = pm__end_cap(&T, T.n - 1, true);
        return rc;
    }
    if (rc == PM_OK && !pm__faces_fast(&T, reg, step, &rc)) {
        rc = pm__curb_face(&T);
        if (rc == PM_OK) rc = pm__band_vertices(&T);
        if (rc == PM_OK) rc = pm__band(&T, reg, step);
        if (rc == PM_OK) rc = pm__outer_face(&T);
    }
    if (rc == PM_OK && !T.closed && cap_lo) rc = pm__end_cap(&T, 0, true);
    if (rc == PM_OK && !T.closed && cap_hi) rc = pm__end_cap(&T, T.n - 1, false);
    return rc;
}

/* The first section (from the chain's start, first) or last whose curb
 * point lies beyond the trim of the junction at that end of the road side,
 * into *at (unchanged without a trim). */
static void pm__trimmed(const pm__net *N, const pm__road *R, int side, bool at_end, const pm__slab *S,
                        uint32_t *at, bool first) {
    int64_t node = at_end ? R->end : R->start, arm = at_end ? R->arm1 : R->arm0;
    if (R->closed || arm < 0) return;
    const pm__node *V = &N->nodes[node];
    bool mouth_left = at_end ? side == 1 : side == 0;
    double t = V->trim ? V->trim[2 * arm + (mouth_left ? 0 : 1)] : 0.0;
    if (t <= 0) return;
    const double *d = V->dir + 2 * arm;
    /* Measured from the arm's own node (a merged junction's arms leave theirs). */
    const pm__inc *I = &N->inc[V->first + arm];
    const pm_network_edge *E = &N->p->edges[I->edge];
    const double *c = N->p->nodes + 3 * (I->end == 0 ? E->from : E->to);
    for (uint32_t k = 0; k < S->n; k++) {
        uint32_t i = first ? k : S->n - 1 - k;
        const float *q = pm__apos(S, i);
        if ((q[0] - c[0]) * d[0] + (q[2] - c[2]) * d[1] >= t) { *at = i; return; }
    }
    *at = first ? S->n - 1 : 0;
}

/* The slab over sections lo..hi less the stretches cut out where its band
 * lay on another piece (network_overlap.c): one piece between each two
 * cuts, closed with end caps at them; a junction slab waiting at lo (or
 * hi) inside a cut gets its end cap there. */
static int pm__cut_pieces(pm__slab *S, const pm__road *R, uint32_t lo, uint32_t hi, bool cap_lo,
                          bool cap_hi) {
    const uint32_t *cut = R->cut[S->side].data;
    size_t ncut = R->cut[S->side].len / 2;
    uint32_t at = lo;
    int rc = PM_OK;
    while (rc == PM_OK) {
        /* The next cut reaching past `at`: the one starting first. */
        uint32_t a = hi, b = hi;
        bool any = false;
        for (size_t i = 0; i < ncut; i++)
            if (cut[2 * i + 1] > at && cut[2 * i] < hi && (!any || cut[2 * i] < a)) {
                a = cut[2 * i] > at ? cut[2 * i] : at;
                b = cut[2 * i + 1] < hi ? cut[2 * i + 1] : hi;
                any = true;
            }
        /* Cuts overlapping this one are one stretch. */
        for (bool grew = any; grew;) {
            grew = false;
            for (size_t i = 0; i < ncut; i++)
                if (cut[2 * i] <= b && cut[2 * i + 1] > b) {
                    b = cut[2 * i + 1] < hi ? cut[2 * i + 1] : hi;
                    grew = true;
                }
        }
        /* A piece ending with an end cap (at a cut, a free end or a
         * junction corner without slab) shorter than the sidewalk is wide
         * would be a needle standing out of the curb: it goes too. */
        double run = 0;
        for (uint32_t i = at; i < a; i++) run += S->len[i];
        bool capped = (at == lo ? cap_lo : true) || (a == hi ? cap_hi : true);
        bool needle = capped && run < S->width;
        if (a > at && !needle)
            rc = pm__slab_piece(S, S->road, S->side, at, a, at == lo ? cap_lo : true, a == hi ? cap_hi : true);
        else {
            if (at == lo && !cap_lo) rc = pm__end_cap(S, lo, false);
            if (rc == PM_OK && a > at) rc = pm__gap(S->N, S, S->road, S->side, at, a, false);
            if (rc == PM_OK && a > at) S->N->gaps.data[S->N->gaps.len - 1].overlap = true;
            if (rc == PM_OK && a == hi && a > at && !cap_hi) rc = pm__end_cap(S, hi, true);
        }
        if (!any) break;
        if (rc == PM_OK) rc = pm__gap(S->N, S, S->road, S->side, a, b, false);
        if (rc == PM_OK) S->N->gaps.data[S->N->gaps.len - 1].overlap = true;
        if (rc == PM_OK && b == hi && !cap_hi) rc = pm__end_cap(S, hi, true);
        at = b;
        if (at >= hi) break;
    }
    return rc;
}

static int pm__side_slab(pm__net *N, pm_scene *s, size_t road, int side) {
    const pm__road *R = &N->roads.data[road];
    const pm_network_edge *E = &N->p->edges[N->steps.data[R->first_step].edge];
    uint32_t n = R->nchain[side];
    pm__slab S = {.N = N, .tmp = N->tmp, .s = s, .n = n, .cv = R->chain[side], .asphalt = s->prims[0].positions,
                  .closed = R->closed, .width = E->sidewalk.width, .ch = E->sidewalk.curb_height,
                  .road = (uint32_t)road, .side = side, .own = true};
    S.top = pm_arena_alloc(S.tmp, n * sizeof *S.top);
    S.out = pm_arena_alloc(S.tmp, n * sizeof *S.out);
    S.oy = pm_arena_alloc(S.tmp, n * sizeof *S.oy);
    S.oby = pm_arena_alloc(S.tmp, n * sizeof *S.oby);
    S.oi = pm_arena_alloc(S.tmp, n * sizeof *S.oi);
    S.ii = pm_arena_alloc(S.tmp, n * sizeof *S.ii);
    double *len = pm_arena_alloc(S.tmp, n * sizeof *len);
    pm_v2 *sn = pm_arena_alloc(S.tmp, n * sizeof *sn);
    if (!S.top || !S.out || !S.oy || !S.oby || !S.oi || !S.ii || !len || !sn) return PM_ERR_NOMEM;
    pm__segments(&S, len, sn);
    S.len = len;
    pm__offsets(&S, sn);
    /* The chain runs with the asphalt on its left: the right side from the
     * road's start, the left side from its end. */
    const pm__node *V0 = NULL, *V1 = NULL;
    const pm_junction_slab_end *e0 = pm__slab_at(N, R, side, side == 0, &V0);
    const pm_junction_slab_end *e1 = pm__slab_at(N, R, side, side != 0, &V1);
    if ((e0 && !pm__join(&S, 0, V0, e0)) || (e1 && !pm__join(&S, n - 1, V1, e1))) {
        pm__slab_problem(N, R, side, "does not meet its junction's sidewalk");
        return PM_OK;
    }
    /* Where a junction corner had no room for its slab, the road's
     * sidewalk starts beyond the corner's outer lines' meeting point. */
    uint32_t lo = 0, hi = n - 1;
    pm__trimmed(N, R, side, side == 0, &S, &lo, true);
    pm__trimmed(N, R, side, side != 0, &S, &hi, false);
    if (lo >= hi) {
        /* Nothing left of this side: a junction slab that waited for it
         * gets the end cap it left out. */
        int rc = pm__gap(N, &S, road, side, 0, n - 1, true);
        if (rc == PM_OK && e0) rc = pm__end_cap(&S, 0, false);
        if (rc == PM_OK && e1) rc = pm__end_cap(&S, n - 1, true);
        return rc;
    }
    int rc = PM_OK;
    if (lo > 0) rc = pm__gap(N, &S, road, side, 0, lo, true);
    if (rc == PM_OK && hi < n - 1) rc = pm__gap(N, &S, road, side, hi, n - 1, true);
    /* A closed side cut somewhere is open: it opens one section at its
     * start too, so that its first and last pieces do not end in two end
     * caps on one spot. */
    if (rc == PM_OK && R->closed && R->cut[side].len && n > 3) {
        rc = pm__gap(N, &S, road, side, 0, 1, false);
        if (rc == PM_OK) N->gaps.data[N->gaps.len - 1].overlap = true;
        lo = 1;
    }
    if (rc == PM_OK) rc = pm__cut_pieces(&S, R, lo, hi, !e0 || lo > 0, !e1 || hi < n - 1);
    if (rc == PM_ERR_GEOMETRY) {
        pm__slab_problem(N, R, side, "cannot follow its curb: the ring road turns so tightly "
                         "that its inner edge crosses itself; make it wider or the road narrower");
        return PM_OK;
    }
    return rc;
}

/* Whether side `side` of road R may end in an end cap at its start (at_end
 * false) or end: no junction slab waits there, or the junction's corner
 * was trimmed. */
static bool pm__may_cap(const pm__net *N, const pm__road *R, int side, bool at_end) {
    const pm__node *V = NULL;
    if (!pm__slab_at(N, R, side, at_end, &V)) return true;
    int64_t arm = at_end ? R->arm1 : R->arm0;
    bool mouth_left = at_end ? side == 1 : side == 0;
    return V->trim && V->trim[2 * arm + (mouth_left ? 0 : 1)] > 0;
}

void pm__network_sidewalk_bound(const pm__net *N, uint64_t v[2], uint64_t t[2]) {
    v[0] = v[1] = t[0] = t[1] = 0;
    for (size_t r = 0; r < N->roads.len; r++) {
        const pm__road *R = &N->roads.data[r];
        for (int side = 0; side < 2; side++) {
            uint64_t n = R->nchain[side];
            if (n < 2) continue;
            /* The pieces of a side are disjoint runs of its sections: the
             * curb and outer faces take two vertices per section and two
             * triangles per step each, the band two vertices per section
             * and two triangles per step; an end cap four vertices and two
             * triangles, at a free or trimmed end and on both sides of
             * each cut. */
            uint64_t caps = pm__may_cap(N, R, side, false) + pm__may_cap(N, R, side, true) +
                            2 * (R->cut[side].len / 2 + (R->closed && R->cut[side].len));
            v[0] += 4 * n + 4 * caps;
            t[0] += 4 * (n - 1) + 2 * caps;
            v[1] += 2 * n;
            t[1] += 2 * (n - 1);
        }
    }
}

int pm__network_sidewalks(pm__net *N, pm_scene *s) {
    /* The junctions' slabs came first. */
    N->swsrc.len = 0;
    pm__swsrc none = {UINT32_MAX, 0, 0, 0};
    uint32_t nj = s->prims[2].icount / 3;
    /* One source per sidewalk triangle: as many as the stitch made room
     * for (pm__network_sidewalk_bound), so the vector does not grow. */
    if (pm_vec_reserve(N->a, &N->swsrc, s->prims[2].icap / 3 > nj ? s->prims[2].icap / 3 : nj))
        return PM_ERR_NOMEM;
    for (uint32_t t = 0; t < nj; t++) N->swsrc.data[t] = none;
    N->swsrc.len = nj;
    for (size_t r = 0; r < N->roads.len; r++) {
        pm__road *R = &N->roads.data[r];
        R->swt0 = s->prims[2].icount / 3;
        for (int side = 0; side < 2; side++) {
            if (R->nchain[side] < 2) continue;
            /* Its working arrays last as long as the side: 90 MB for the
             * 40 x 40 town's sides when they stayed in the job's arena. */
            pm_arena_reset(N->tmp);
            int rc = pm__side_slab(N, s, r, side);
            if (rc) return rc;
        }
        R->swtn = s->prims[2].icount / 3 - R->swt0;
    }
    return PM_OK;
}

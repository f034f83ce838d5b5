#include "road/road_internal.h"

#include <assert.h>
#include <math.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "scene/result.h"

/* ---- vertex grid ---- */

/* Ground height at (x, z); with nf, also the terrain normal there (one
 * cell lookup for both, the same bits as asking for each). */
static double pm__ground(const pm_road_params *p, double x, double z, float *nf) {
    return nf ? pm_heightfield_height_normalf(p->terrain, x, z, nf) : pm_heightfield_height(p->terrain, x, z);
}

/* Column at nominal offset d (> 0) of a side fanned onto its pivot P
 * (road_fold.c): on the ray from the centre to P, the carriageway at its
 * own width where it fits, the shoulder stretched or squeezed to end on P
 * (without a shoulder the carriageway ends there); where P is nearer than
 * the carriageway edge, everything from P on is P. Monotonic in d, so
 * consecutive sections' columns never cross inside the fan. */
static void pm__fan_vertex(const pm_road_params *p, const pm__section *sc, int side, double d,
                           double o[3], float *nf) {
    const double *P = sc->piv[side];
    double hw = 0.5 * p->width, W = hw + p->shoulder;
    if (d >= sc->clamp[side]) {
        memcpy(o, P, 3 * sizeof(double));
        if (nf) pm__ground(p, o[0], o[2], nf);
        return;
    }
    double rl = hypot(sc->r[0], sc->r[2]), len = hypot(P[0] - sc->c[0], P[2] - sc->c[2]);
    double g = d * rl / len;
    if (len > hw * rl) {
        double ghw = hw * rl / len;
        g = p->shoulder > 0.0 ? (d <= hw ? g : ghw + (1.0 - ghw) * (d - hw) / (W - hw)) : d / W;
    }
    for (int k = 0; k < 3; k++) o[k] = sc->c[k] + g * (P[k] - sc->c[k]);
    if (p->terrain && p->conform == PM_ROAD_DRAPE) o[1] = pm__ground(p, o[0], o[2], nf);
}

/* Offset d along the section, clamped to its sides. */
static inline double pm__clamped(const pm__section *sc, double d) {
    return d < 0.0 ? -(-d < sc->clamp[0] ? -d : sc->clamp[0]) : (d < sc->clamp[1] ? d : sc->clamp[1]);
}

/* Whether column offset d of section sc lies in a fan (road_fold.c). */
static inline bool pm__in_fan(const pm__section *sc, double d) { return d != 0.0 && sc->fan[d > 0.0]; }

/* pm__road_vertex_at, inlined into the grid's loop. fmin as minsd (what
 * glibc's returns for a clamp, never NaN), without a call. nf (drape
 * only, else NULL) gets the terrain normal at the vertex. */
static inline void pm__vertex(const pm_road_params *p, const pm__section *sc, double d, double o[3],
                              float *nf) {
    if (pm__in_fan(sc, d)) {
        pm__fan_vertex(p, sc, d > 0.0, fabs(d), o, nf);
        return;
    }
    double e = pm__clamped(sc, d);
    if (p->terrain && p->conform == PM_ROAD_DRAPE) {
        o[0] = sc->c[0] + e * sc->r[0];
        o[2] = sc->c[2] + e * sc->r[2];
        o[1] = pm__ground(p, o[0], o[2], nf);
    } else {
        for (int k = 0; k < 3; k++) o[k] = sc->c[k] + e * sc->r[k];
    }
}

/* pm__vertex's values for every column of a whole section off a drape
 * (its tests answered once per row): c + d r, x and y side by side (the
 * same IEEE operations lane by lane). */
static inline __attribute__((always_inline)) void
pm__grid_row_whole(const pm__section *sc, const double *col, size_t nc, double *row) {
#ifdef __SSE2__
    __m128d c01 = _mm_loadu_pd(sc->c), r01 = _mm_loadu_pd(sc->r);
    double c2 = sc->c[2], r2 = sc->r[2];
    for (size_t k = 0; k < nc; k++, row += 3) {
        double d = col[k];
        _mm_storeu_pd(row, _mm_add_pd(c01, _mm_mul_pd(_mm_set1_pd(d), r01)));
        row[2] = c2 + d * r2;
    }
#else
    for (size_t k = 0; k < nc; k++)
        for (int m = 0; m < 3; m++) row[3 * k + m] = sc->c[m] + col[k] * sc->r[m];
#endif
}

void pm__road_vertex_at(const pm_road_params *p, const pm__section *sc, double d, double o[3]) {
    pm__vertex(p, sc, d, o, NULL);
}


/* Whether section sc is whole: it fans no side and cuts back neither
 * (W0, W1 the outermost columns' offsets), so that every column's offset
 * is its own (pm__clamped gives d, pm__in_fan false). */
static inline bool pm__whole(const pm__section *sc, double W0, double W1) {
    return (!sc->fan[0] & !sc->fan[1]) & ((W0 <= sc->clamp[0]) & (W1 <= sc->clamp[1]));
}

/* The columns that own their length (outer shoulder edges and carriageway
 * edges, in order; 2 or 4 of them) into own; returns how many. */
static uint32_t pm__own_columns(const pm__level *L, uint32_t own[4]) {
    uint32_t nown = 0;
    if (L->kl > 0) own[nown++] = 0;
    own[nown++] = L->kl;
    own[nown++] = L->kr;
    if (L->kr + 1 < L->ncol) own[nown++] = L->ncol - 1;
    return nown;
}

/* How column k gets its UV: U from the owning columns ka and kb around
 * it (ka == k: its own), weights 1 - f and f; V across the carriageway. */
typedef struct pm__uvcol {
    uint32_t ka, kb;
    double f, v;
} pm__uvcol;

static void pm__uv_columns(const pm__level *L, double width, const uint32_t *own, uint32_t nown,
                           pm__uvcol *uc) {
    for (size_t k = 0; k < L->ncol; k++) {
        uint32_t ja = 0;
        while (ja + 1 < nown && own[ja + 1] <= k) ja++;
        uint32_t ka = own[ja], kb = ja + 1 < nown ? own[ja + 1] : ka;
        double f = kb > ka ? (L->col[k] - L->col[ka]) / (L->col[kb] - L->col[ka]) : 0.0;
        uc[k] = (pm__uvcol){ka, kb, f, (L->col[k] + 0.5 * width) / width};
    }
}

#ifdef __SSE2__
/* The rows of an open road off a drape while its sections are whole, with
 * their UVs in the same pass: per owning column, the running sum of
 * pm_v3_dist over the rows (two columns side by side, each lane
 * pm_v3_dist's operations in its order; SQRTPD rounds as sqrt does)
 * times uv_scale; between them, the plain pass's interpolation. Returns
 * the sections done: n when all were whole (the UVs and edge lengths are
 * then final), else the first section that is not (its own and the later
 * rows, and all UVs, are left to the plain passes); PM_ERR_CANCELLED. */
static inline __attribute__((always_inline)) long
pm__grid_whole_w(pm__ctx *x, pm__level *L, const pm__uvcol *uc, const uint32_t *own, uint32_t nown, size_t nc) {
    const pm_road_params *p = x->p;
    size_t n = L->n;
    double W0 = -L->col[0], W1 = L->col[nc - 1];
    const __m128d scale = _mm_set1_pd(p->uv_scale);
    __m128d acc[2] = {_mm_setzero_pd(), _mm_setzero_pd()};
    /* nc == 3: the middle column's weights and every column's V in locals */
    double v0 = uc[0].v, v1 = uc[nc > 1].v, v2 = uc[nc > 2 ? 2 : 0].v, f1 = uc[nc > 1].f, g1 = 1.0 - f1;
    for (size_t i = 0; i < n; i++) {
        if ((i & 255) == 0 && p->cancel && *p->cancel) return PM_ERR_CANCELLED;
        const pm__section *sc = &L->sec[i];
        bool whole = pm__whole(sc, W0, W1);
        L->whole[i] = whole;
        if (!whole) return (long)i;
        double *row = L->pos + 3 * i * nc, *uv = L->uv + 2 * i * nc;
        pm__grid_row_whole(sc, L->col, nc, row);
        for (uint32_t q = 0; q < nown; q += 2) {
            const double *a0 = row - 3 * nc + 3 * own[q], *a1 = row - 3 * nc + 3 * own[q + 1];
            const double *b0 = row + 3 * own[q], *b1 = row + 3 * own[q + 1];
            __m128d u = _mm_setzero_pd();
            if (i > 0) {
                __m128d d0 = _mm_sub_pd(_mm_loadu_pd(b0), _mm_loadu_pd(a0));   /* dx, dy of column q */
                __m128d d1 = _mm_sub_pd(_mm_loadu_pd(b1), _mm_loadu_pd(a1));
                __m128d dx = _mm_unpacklo_pd(d0, d1), dy = _mm_unpackhi_pd(d0, d1);
                __m128d dz = _mm_sub_pd(_mm_loadh_pd(_mm_load_sd(b0 + 2), b1 + 2),
                                        _mm_loadh_pd(_mm_load_sd(a0 + 2), a1 + 2));
                __m128d s = _mm_add_pd(_mm_add_pd(_mm_mul_pd(dx, dx), _mm_mul_pd(dy, dy)), _mm_mul_pd(dz, dz));
                acc[q / 2] = _mm_add_pd(acc[q / 2], _mm_sqrt_pd(s));
                u = _mm_mul_pd(acc[q / 2], scale);
            }
            _mm_storel_pd(uv + 2 * own[q], u);
            _mm_storeh_pd(uv + 2 * own[q + 1], u);
        }
        if (nc == 3) {   /* own = {0, 2}: column 1 between them */
            uv[1] = v0, uv[3] = v1, uv[5] = v2;
            uv[2] = uv[0] * g1 + uv[4] * f1;
            continue;
        }
        for (size_t k = 0; k < nc; k++) {
            const pm__uvcol *c = &uc[k];
            if (c->ka != k) uv[2 * k] = uv[2 * c->ka] * (1.0 - c->f) + uv[2 * c->kb] * c->f;
            uv[2 * k + 1] = c->v;
        }
    }
    /* Every own column's sum: lane 0 of a pair its first column. */
    double sums[4];
    _mm_storeu_pd(sums, acc[0]);
    _mm_storeu_pd(sums + 2, acc[1]);
    for (uint32_t j = 0; j < nown; j++) {
        uint32_t k = own[j];
        int slot = k == 0 && L->kl > 0 ? 0 : (k == L->kl ? 1 : (k == L->kr ? 2 : 3));
        L->edge_len[slot] = sums[j];
    }
    if (L->kl == 0) L->edge_len[0] = L->edge_len[1];
    if (L->kr + 1 == nc) L->edge_len[3] = L->edge_len[2];
    return (long)n;
}

/* pm__grid_whole_w with the two-lane road's 3 columns a constant. */
__attribute__((noinline))
static long pm__grid_whole(pm__ctx *x, pm__level *L, const pm__uvcol *uc, const uint32_t *own, uint32_t nown) {
    static const uint32_t own3[2] = {0, 2};   /* kl, kr of 3 columns */
    assert(L->ncol != 3 || (nown == 2 && own[0] == 0 && own[1] == 2));
    if (L->ncol == 3) return pm__grid_whole_w(x, L, uc, own3, 2, 3);
    return pm__grid_whole_w(x, L, uc, own, nown, L->ncol);
}
#endif

/* Positions, then U along the edges that own their length, V across. */
int pm__road_grid(pm__ctx *x, pm__level *L) {
    const pm_road_params *p = x->p;
    size_t n = L->n, nc = L->ncol;
    L->pos = pm_arena_alloc(x->a, n * nc * 3 * sizeof(double));
    L->uv = pm_arena_alloc(x->a, n * nc * 2 * sizeof(double));
    if (!L->pos || !L->uv) return PM_ERR_NOMEM;
    /* A drape's normals come with its heights (the same cell), once per
     * grid point rather than once per emitted vertex. */
    if (p->terrain && p->conform == PM_ROAD_DRAPE) {
        L->nrm = pm_arena_alloc(x->a, n * nc * 3 * sizeof(float));
        if (!L->nrm) return PM_ERR_NOMEM;
    }
    if (!x->plain && !(L->whole = pm_arena_alloc(x->a, n))) return PM_ERR_NOMEM;
    uint32_t own[4], nown = pm__own_columns(L, own);
    pm__uvcol *uc = pm_arena_alloc(x->a, nc * sizeof *uc);
    if (!uc) return PM_ERR_NOMEM;
    pm__uv_columns(L, p->width, own, nown, uc);
    size_t i0 = 0;
#ifdef __SSE2__
    if (L->whole && !L->nrm && !L->closed && nown % 2 == 0) {
        long r = pm__grid_whole(x, L, uc, own, nown);
        if (r < 0) return (int)r;
        if ((size_t)r == n) return PM_OK;
        i0 = (size_t)r;
    }
#endif
    /* A section is whole (pm__level.whole) when it fans no side and cuts
     * back neither: every column's offset is then its own (pm__clamped
     * gives d, pm__in_fan false). */
    double W0 = -L->col[0], W1 = L->col[nc - 1];
    bool all_whole = true;   /* the rows before i0 were */
    for (size_t i = i0; i < n; i++) {
        if (p->cancel && *p->cancel) return PM_ERR_CANCELLED;
        const pm__section *sc = &L->sec[i];
        double *row = L->pos + 3 * i * nc;
        bool whole = L->whole && pm__whole(sc, W0, W1);
        if (L->whole) L->whole[i] = whole;
        all_whole &= whole;
        if (!L->nrm && whole) {
            if (nc == 3) pm__grid_row_whole(sc, L->col, 3, row);   /* a two-lane road: unrolled */
            else pm__grid_row_whole(sc, L->col, nc, row);
            continue;
        }
        if (!L->nrm) {
            for (size_t k = 0; k < nc; k++) pm__vertex(p, sc, L->col[k], row + 3 * k, NULL);
            continue;
        }
        /* Draped: the row's plan points, then all their heights and
         * normals in one call (pm__vertex's values); a fan's columns
         * (seldom) are redone on their own. */
        bool fans = false;
        for (size_t k = 0; k < nc; k++) {
            double d = L->col[k], e = pm__clamped(sc, d);
            fans |= pm__in_fan(sc, d);
            row[3 * k] = sc->c[0] + e * sc->r[0];
            row[3 * k + 2] = sc->c[2] + e * sc->r[2];
        }
        float *nrow = L->nrm + 3 * i * nc;
        pm_heightfield_drape(p->terrain, row, nrow, nc);
        for (size_t k = 0; fans && k < nc; k++)
            if (pm__in_fan(sc, L->col[k])) pm__vertex(p, sc, L->col[k], row + 3 * k, nrow + 3 * k);
    }
    /* Welding joins consecutive sections cut back inside the road (clamp
     * below W, which no whole section is): an open road of whole sections
     * has nothing to weld (a closed one still joins its seam). */
    if (!all_whole || L->closed) pm__road_weld_collapses(L);
    for (uint32_t j = 0; j < nown; j++) {
        uint32_t k = own[j];
        double acc = 0.0;
        L->uv[2 * k] = 0.0;
        for (size_t i = 1; i < n; i++) {
            acc += pm_v3_dist(L->pos + 3 * ((i - 1) * nc + k), L->pos + 3 * (i * nc + k));
            L->uv[2 * (i * nc + k)] = acc * p->uv_scale;
        }
        int slot = k == 0 && L->kl > 0 ? 0 : (k == L->kl ? 1 : (k == L->kr ? 2 : 3));
        L->edge_len[slot] = acc;
    }
    if (L->kl == 0) L->edge_len[0] = L->edge_len[1];
    if (L->kr + 1 == nc) L->edge_len[3] = L->edge_len[2];
    for (size_t k = 0; k < nc; k++) {
        const pm__uvcol *c = &uc[k];
        for (size_t i = 0; i < n; i++) {
            double *uv = L->uv + 2 * (i * nc + k);
            if (k != c->ka) uv[0] = L->uv[2 * (i * nc + c->ka)] * (1.0 - c->f) + L->uv[2 * (i * nc + c->kb)] * c->f;
            uv[1] = c->v;
        }
    }
    return PM_OK;
}

/* ---- primitives ---- */

/* Quads across one band of the emission order (see pm__emit_range). */
#define PM__BAND_QUADS 7

static double pm__maxabs(double m, double v) {
    v = fabs(v);
    return v > m ? v : m;   /* maxsd: no branch */
}

/* Triangle abc of float positions faces up with a margin: its plan area
 * stays positive even when a consumer subtracts the coordinates in float
 * (error about one ulp of the coordinate per difference). Slivers below
 * the margin only come from collapsed folds and are left out. */
static bool pm__faces_up(const float *a, const float *b, const float *c, double mbound) {
    double pa[2] = {a[0], a[2]}, pb[2] = {b[0], b[2]}, pc[2] = {c[0], c[2]};
    double o = pm_orient_xz_plain(pa, pb, pc);
    if (!(o > 0.0)) return false;
    /* Sure at once when the margin holds with m <= mbound (every point of
     * the range) and e <= 2 max(|b - a|, |c - a|): rounding is monotone,
     * so the product below bounds the exact one from above. */
    double e2 = 0.0;
    for (int k = 0; k < 2; k++) e2 = pm__maxabs(pm__maxabs(e2, pb[k] - pa[k]), pc[k] - pa[k]);
    if (o > 4.0 * 1.2e-7 * mbound * (2.0 * e2)) return true;
    double m = 1.0, e = 0.0;
    for (int k = 0; k < 2; k++) {
        m = pm__maxabs(pm__maxabs(pm__maxabs(m, pa[k]), pb[k]), pc[k]);
        e = pm__maxabs(pm__maxabs(pm__maxabs(e, pb[k] - pa[k]), pc[k] - pa[k]), pc[k] - pb[k]);
    }
    return o > 4.0 * 1.2e-7 * m * e;
}

/* The n-component float array a of pr's vertices moved to their new
 * places (map: ~0u for a dropped vertex), through tmp. */
static void pm__move_floats(float *a, float *tmp, const uint32_t *map, uint32_t vcount, uint32_t used,
                            size_t n) {
    for (uint32_t v = 0; v < vcount; v++)
        if (map[v] != UINT32_MAX) memcpy(tmp + n * map[v], a + n * (size_t)v, n * sizeof *a);
    memcpy(a, tmp, (size_t)used * n * sizeof *a);
}

/* Puts vertices in order of first use, dropping unreferenced ones (what
 * meshopt_optimizeVertexFetchRemap and its remaps do). */
static int pm__fetch_order(pm_arena *a, pm_prim *pr) {
    if (pr->icount == 0) return PM_OK;
    uint32_t *map = pm_arena_alloc(a, pr->vcount * sizeof(uint32_t));
    float *tmp = pm_arena_alloc(a, (size_t)pr->vcount * 3 * sizeof(float));
    if (!map || !tmp) return PM_ERR_NOMEM;
    memset(map, 0xff, pr->vcount * sizeof(uint32_t));
    uint32_t used = 0;
    for (uint32_t i = 0; i < pr->icount; i++) {
        uint32_t *m = &map[pr->indices[i]];
        if (*m == UINT32_MAX) *m = used++;
        pr->indices[i] = *m;
    }
    pm__move_floats(pr->positions, tmp, map, pr->vcount, used, 3);
    pm__move_floats(pr->normals, tmp, map, pr->vcount, used, 3);
    if (pr->uvs) pm__move_floats(pr->uvs, tmp, map, pr->vcount, used, 2);
    pr->vcount = used;
    return PM_OK;
}

/* Whether vertex v of pr has position pf and UV uf. */
static bool pm__same_vertex(const pm_prim *pr, uint32_t v, const float pf[3], const float uf[2]) {
    const float *q = pr->positions + 3 * (size_t)v, *u = pr->uvs + 2 * (size_t)v;
    return q[0] == pf[0] && q[1] == pf[1] && q[2] == pf[2] && u[0] == uf[0] && u[1] == uf[1];
}

/* Two doubles, one per triangle of a quad: the quad's two tests run side
 * by side, each lane the same IEEE operations as pm__faces_up's. */
typedef double pm__v2d __attribute__((vector_size(16)));
typedef int64_t pm__v2i __attribute__((vector_size(16)));

/* fabs and b > a ? b : a, lane by lane (C has no vector ?:). */
static inline pm__v2d pm__v2abs(pm__v2d v) { return (pm__v2d)((pm__v2i)v & INT64_MAX); }
static inline pm__v2d pm__v2max(pm__v2d a, pm__v2d b) {
    pm__v2i m = b > a;
    return (pm__v2d)(((pm__v2i)b & m) | ((pm__v2i)a & ~m));
}

/* Quads j0 .. j1 - 1 between grid rows row and row + w of map (section
 * i to i + 1) as two triangles each, skipping slivers (pm__faces_up).
 * Both triangles' fast tests at once: plan orientation o and the margin
 * with mbound; a triangle with a repeated index has o = 0 (or NaN), so
 * the fast test already drops it; one between 0 and the fast margin
 * takes pm__faces_up's exact test. Counts kept in locals: the index
 * stores could alias pr->icount. */
static void pm__emit_quads(pm__level *L, pm_prim *pr, const uint32_t *row, uint32_t w,
                           uint32_t j0, uint32_t j1, uint32_t i, double mbound) {
    const float *P = pr->positions;
    uint32_t *out = pr->indices + pr->icount;
    uint64_t kept = 0, skipped = 0;
    double m4 = 4.0 * 1.2e-7 * mbound;
    for (uint32_t j = j0; j < j1; j++) {
        uint32_t v1 = row[j], v2 = row[j + 1], v4 = row[w + j], v3 = row[w + j + 1];
        const float *p1 = P + 3 * (size_t)v1, *p2 = P + 3 * (size_t)v2, *p3 = P + 3 * (size_t)v3,
                    *p4 = P + 3 * (size_t)v4;
        /* triangle 0 = (v1, v2, v4), triangle 1 = (v2, v3, v4) */
        pm__v2d ax = {p1[0], p2[0]}, az = {p1[2], p2[2]}, bx = {p2[0], p3[0]}, bz = {p2[2], p3[2]};
        pm__v2d cx = {p4[0], p4[0]}, cz = {p4[2], p4[2]};
        pm__v2d dbx = bx - ax, dbz = bz - az, dcx = cx - ax, dcz = cz - az;
        pm__v2d o = dbz * dcx - dbx * dcz;
        pm__v2d e2 = pm__v2max(pm__v2max(pm__v2abs(dbx), pm__v2abs(dcx)),
                               pm__v2max(pm__v2abs(dbz), pm__v2abs(dcz)));
        pm__v2i sure = o > m4 * (2.0 * e2), up = o > 0.0;
        uint32_t tri[2][3] = {{v1, v2, v4}, {v2, v3, v4}};
        /* pm__road_emit reserved every quad's two triangles. */
        assert(pr->icount + 3 * (kept + 2) <= pr->icap);
        if (sure[0] & sure[1] & up[0] & up[1]) {   /* the usual quad: both at once */
            memcpy(out + 3 * kept, tri, sizeof tri);
            kept += 2;
            continue;
        }
        for (int t = 0; t < 2; t++) {
            const uint32_t *q = tri[t];
            if (!up[t] || (!sure[t] && (q[0] == q[1] || q[1] == q[2] || q[0] == q[2] ||
                                        !pm__faces_up(P + 3 * q[0], P + 3 * q[1], P + 3 * q[2], mbound)))) {
                skipped++;
                continue;
            }
            memcpy(out + 3 * kept, q, 3 * sizeof(uint32_t));
            kept++;
        }
    }
    pr->icount += (uint32_t)(3 * kept);
    if (L->tsec) {
        uint32_t *ts = L->tsec + L->ntsec;
        for (uint64_t t = 0; t < kept; t++) ts[t] = i;
        L->ntsec += kept;
    }
    L->triangles += kept;
    L->skipped += skipped;
}

/* Row i of range rg (columns k0..k1) as vertices of pr, their indices in
 * mrow (mprev: row i - 1's). Collapsed columns share the outermost
 * column's vertex, so the mesh border always carries the edge's own V and
 * U (a painted edge line follows the real border). *mbound grows to
 * max(|x|, |z|) of the row's vertices. */
static int pm__emit_row(pm__ctx *x, pm__level *L, pm_prim *pr, pm__range rg, size_t i,
                        uint32_t *mrow, const uint32_t *mprev, double *mbound) {
    const pm_road_params *p = x->p;
    size_t nc = L->ncol, w = rg.k1 - rg.k0 + 1;
    bool drape = p->terrain && p->conform == PM_ROAD_DRAPE;
    const pm__section *sc = &L->sec[i];
    /* Off terrain every vertex of a section has its (banked) up. */
    float up[3] = {(float)sc->up[0], (float)sc->up[1], (float)sc->up[2]};
    /* A column only collapses onto a collapsed outer column. */
    bool cut[2] = {pm__road_collapsed(L, sc, rg.k0), pm__road_collapsed(L, sc, rg.k1)}, holes = false;
    size_t at = i * nc + rg.k0;   /* grid point of column k0 */
    const double *pd = L->pos + 3 * at, *ud = L->uv + 2 * at;
    const float *nd = drape ? L->nrm + 3 * at : up;
    double mb = *mbound;
    for (uint32_t j = 0; j < w; j++, pd += 3, ud += 2, nd += drape ? 3 : 0) {
        uint32_t k = rg.k0 + j;
        bool right = !(L->col[k] < 0.0);
        if (cut[right] && k != (right ? rg.k1 : rg.k0) && pm__road_collapsed(L, sc, k)) {
            mrow[j] = UINT32_MAX;   /* resolved below */
            holes = true;
            continue;
        }
        float pf[3] = {(float)pd[0], (float)pd[1], (float)pd[2]};
        float uf[2] = {(float)ud[0], (float)ud[1]};
        if (i > 0 && pm__same_vertex(pr, mprev[j], pf, uf)) {
            mrow[j] = mprev[j];   /* a fan's pivot: one vertex */
            continue;
        }
        mb = pm__maxabs(pm__maxabs(mb, pf[0]), pf[2]);
        uint32_t v = pr->vcount;
        if (v < pr->vcap) {   /* pm__road_emit reserved them all: pm_prim_add_vertex's stores */
            memcpy(pr->positions + 3 * (size_t)v, pf, sizeof pf);
            memcpy(pr->normals + 3 * (size_t)v, nd, 3 * sizeof(float));
            memcpy(pr->uvs + 2 * (size_t)v, uf, sizeof uf);
            pr->vcount = v + 1;
        } else {
            int64_t r = pm_prim_add_vertex(x->scene, pr, pf, nd, uf, NULL);
            if (r < 0) return PM_ERR_NOMEM;
            v = (uint32_t)r;
        }
        mrow[j] = v;
    }
    for (uint32_t j = 0; holes && j < w; j++)
        if (mrow[j] == UINT32_MAX) mrow[j] = mrow[L->col[rg.k0 + j] < 0.0 ? 0 : w - 1];
    *mbound = mb;
    return PM_OK;
}

/* Emits columns k0..k1 as vertices of pr (pm__emit_row), then triangles in
 * bands of at most PM__BAND_QUADS quads across, row by row: two rows of a
 * band (16 vertices) fit a 16-entry FIFO cache, so each vertex is
 * transformed about once, ACMR near the strip's bound (what
 * meshopt_optimizeVertexCache would find, without its cost). The plain
 * path of pm__emit_range_fast. */
static int pm__emit_range(pm__ctx *x, pm__level *L, pm_prim *pr, pm__range rg, uint32_t *map) {
    size_t n = L->n, w = rg.k1 - rg.k0 + 1;
    double mbound = 1.0;   /* max(1, |x|, |z|) over the range's vertices */
    assert(!pr->colors && pr->uvs);
    for (size_t i = 0; i < n; i++) {
        uint32_t *mrow = map + i * w, *mprev = i > 0 ? mrow - w : mrow;   /* read only when i > 0 */
        int r = pm__emit_row(x, L, pr, rg, i, mrow, mprev, &mbound);
        if (r < 0) return r;
    }
    for (uint32_t j0 = 0; j0 + 1 < w; j0 += PM__BAND_QUADS) {
        uint32_t j1 = j0 + PM__BAND_QUADS < w - 1 ? j0 + PM__BAND_QUADS : w - 1;
        for (size_t i = 0; i + 1 < n; i++)
            pm__emit_quads(L, pr, map + i * w, w, j0, j1, (uint32_t)i, mbound);
    }
    return PM_OK;
}

/* Four doubles (four floats): a row's values converted four at a time
 * (pm__cvt_floats), two quads' triangles side by side (pm__emit_band_w).
 * Only inline functions take or return them: no call crosses an ABI, so
 * GCC's note that AVX would pass them differently does not apply. */
typedef double pm__v4d __attribute__((vector_size(32)));
typedef int64_t pm__v4i __attribute__((vector_size(32)));
typedef float pm__v4f __attribute__((vector_size(16)));
#if defined(__GNUC__)   /* GCC and clang */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#ifdef __SSE2__
/* n doubles to floats (CVTPD2PS rounds as a cast does), four at a time
 * (one instruction in the AVX clone). */
static inline __attribute__((always_inline)) void pm__cvt_floats(float *out, const double *in, size_t n) {
    size_t k = 0;
    for (; k + 4 <= n; k += 4) {
        pm__v4d d;
        memcpy(&d, in + k, sizeof d);
        pm__v4f f = __builtin_convertvector(d, pm__v4f);
        memcpy(out + k, &f, sizeof f);
    }
    if (k + 2 <= n) {
        _mm_storel_pi((__m64 *)(void *)(out + k), _mm_cvtpd_ps(_mm_loadu_pd(in + k)));
        k += 2;
    }
    if (k < n) out[k] = (float)in[k];
}

/* One row of pm__emit_rows_whole_w vertex by vertex, as pm__emit_row
 * stores them: a vertex equal (position and UV) to the previous row's
 * vertex of its column is that vertex (a fan's pivot repeats). Returns
 * the next free vertex. */
static inline __attribute__((always_inline)) uint32_t
pm__whole_row_each(pm_prim *pr, uint32_t v, const pm__section *sc, const double *pd, const double *ud,
                   const float *nd, bool drape, bool check, uint32_t *mrow, size_t w) {
    float *P = pr->positions, *N = pr->normals, *U = pr->uvs;
    float up[3] = {(float)sc->up[0], (float)sc->up[1], (float)sc->up[2]};
    for (size_t j = 0; j < w; j++) {
        float pf[3] = {(float)pd[3 * j], (float)pd[3 * j + 1], (float)pd[3 * j + 2]};
        float uf[2] = {(float)ud[2 * j], (float)ud[2 * j + 1]};
        if (check && pm__same_vertex(pr, (mrow - w)[j], pf, uf)) {
            mrow[j] = (mrow - w)[j];
            continue;
        }
        memcpy(P + 3 * (size_t)v, pf, sizeof pf);
        memcpy(N + 3 * (size_t)v, drape ? nd + 3 * j : up, 3 * sizeof(float));
        memcpy(U + 2 * (size_t)v, uf, sizeof uf);
        mrow[j] = v++;
    }
    return v;
}

/* Row xr (w x, then w z) into *mb (its magnitudes' maximum, a pair at a
 * time), and whether some column's x and z both equal the previous row's
 * (at xr - 2 w; none when first). */
static inline __attribute__((always_inline)) bool pm__row_repeats(const double *xr, size_t w, bool prev,
                                                                  __m128d *mb) {
    const __m128d absmask = _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX));
    size_t k = 0;
    for (; k + 2 <= 2 * w; k += 2) *mb = _mm_max_pd(_mm_and_pd(_mm_loadu_pd(xr + k), absmask), *mb);
    __m128d same = _mm_setzero_pd();
    if (prev) {
        const double *xp = xr - 2 * w;
        for (k = 0; k + 2 <= w; k += 2) {
            __m128d ex = _mm_cmpeq_pd(_mm_loadu_pd(xr + k), _mm_loadu_pd(xp + k));
            __m128d ez = _mm_cmpeq_pd(_mm_loadu_pd(xr + w + k), _mm_loadu_pd(xp + w + k));
            same = _mm_or_pd(same, _mm_and_pd(ex, ez));
        }
        if (k < w) {
            __m128d ex = _mm_cmpeq_sd(_mm_load_sd(xr + k), _mm_load_sd(xp + k));
            __m128d ez = _mm_cmpeq_sd(_mm_load_sd(xr + w + k), _mm_load_sd(xp + w + k));
            same = _mm_or_pd(same, _mm_and_pd(ex, ez));
        }
    }
    return _mm_movemask_pd(same) != 0;
}

/* pm__emit_row for rows i0 .. i1 - 1, whole sections (pm__level.whole:
 * nothing collapses) whose vertices all fit pr's reserve: the same
 * vertices, without the per-column collapse tests. Each row's x and z,
 * widened, to XZ (row i at 2 w i: w x, then w z); *mbound grows to
 * their largest magnitude (widening is exact and monotone: the floats'
 * bound; a row's repeated vertex adds nothing new). A row's vertices
 * repeat the previous row's only where their x and z are the same (XZ
 * holds the previous row's vertices' x and z, whichever path stored
 * them): rows without such a column are converted in bulk, their
 * vertices consecutive; the others vertex by vertex. */
static inline __attribute__((always_inline)) void
pm__emit_rows_whole_w(const pm__level *L, pm_prim *pr, pm__range rg, size_t i0, size_t i1, bool drape,
                      uint32_t *map, double *mbound, double *XZ, size_t w) {
    size_t nc = L->ncol, at = i0 * nc + rg.k0;
    uint32_t v = pr->vcount;
    float *restrict P = pr->positions, *restrict N = pr->normals, *restrict U = pr->uvs;
    const __m128d absmask = _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX));
    __m128d mb = _mm_set1_pd(*mbound);
    /* Row by row, each pointer stepped: a section, its grid points (3 nc
     * doubles of position, 2 nc of UV, 3 nc floats of drape normal), its
     * map row (w) and its XZ row (2 w). */
    const pm__section *sc = L->sec + i0;
    const double *pd = L->pos + 3 * at, *ud = L->uv + 2 * at;
    const float *nd = drape ? L->nrm + 3 * at : NULL;
    uint32_t *mrow = map + i0 * w;
    double *xr = XZ + 2 * w * i0;
    for (size_t i = i0; i < i1; i++, sc++, pd += 3 * nc, ud += 2 * nc, mrow += w, xr += 2 * w) {
        /* The row's positions go to the next free vertices (scratch until
         * the row is known to repeat no vertex), XZ from those floats. */
        float *pv = P + 3 * (size_t)v;
        pm__cvt_floats(pv, pd, 3 * w);
        bool rep;   /* some column's x and z are the previous row's */
        if (w <= 32) {
            /* The row's 2 w values (x then z) a pair at a time, stored a
             * pair per store and compared from registers: a load spanning
             * two narrower stores just made would wait for them to retire
             * (store forwarding fails). Bit k: value k equals the previous
             * row's; the same pairs in the same order into mb as below. */
            uint64_t eq = 0;
            for (size_t k = 0; k < 2 * w; k += 2) {
                double a = k < w ? pv[3 * k] : pv[3 * (k - w) + 2];
                double b = k + 1 < w ? pv[3 * (k + 1)] : pv[3 * (k + 1 - w) + 2];
                __m128d pr2 = _mm_set_pd(b, a);
                _mm_storeu_pd(xr + k, pr2);
                mb = _mm_max_pd(_mm_and_pd(pr2, absmask), mb);
                if (i > 0) eq |= (uint64_t)_mm_movemask_pd(_mm_cmpeq_pd(pr2, _mm_loadu_pd(xr - 2 * w + k))) << k;
            }
            rep = (eq & (eq >> w) & ((1ull << w) - 1)) != 0;
        } else {
            for (size_t j = 0; j < w; j++) {
                xr[j] = pv[3 * j];
                xr[w + j] = pv[3 * j + 2];
            }
            rep = pm__row_repeats(xr, w, i > 0, &mb);
        }
        if (__builtin_expect(rep, 0)) {
            v = pm__whole_row_each(pr, v, sc, pd, ud, nd, drape, true, mrow, w);
        } else {
            pm__cvt_floats(U + 2 * (size_t)v, ud, 2 * w);
            float *nv = N + 3 * (size_t)v;
            if (drape) {
                memcpy(nv, nd, 3 * w * sizeof(float));
            } else {
                /* up, up, up ...: three vectors hold the pattern */
                __m128 xy = _mm_cvtpd_ps(_mm_loadu_pd(sc->up)), z = _mm_cvtpd_ps(_mm_load_sd(sc->up + 2));
                __m128 xyz = _mm_movelh_ps(xy, z);                                  /* x y z 0 */
                __m128 a = _mm_shuffle_ps(xyz, xyz, _MM_SHUFFLE(0, 2, 1, 0));       /* x y z x */
                __m128 b = _mm_shuffle_ps(xyz, xyz, _MM_SHUFFLE(1, 0, 2, 1));       /* y z x y */
                __m128 c = _mm_shuffle_ps(xyz, xyz, _MM_SHUFFLE(2, 1, 0, 2));       /* z x y z */
                size_t m = 0;
                for (; m + 12 <= 3 * w; m += 12) {
                    _mm_storeu_ps(nv + m, a);
                    _mm_storeu_ps(nv + m + 4, b);
                    _mm_storeu_ps(nv + m + 8, c);
                }
                if (m + 4 <= 3 * w) _mm_storeu_ps(nv + m, a), m += 4;
                if (m + 4 <= 3 * w) _mm_storeu_ps(nv + m, b), m += 4;
                for (; m < 3 * w; m++) nv[m] = (float)sc->up[m % 3];
            }
            for (size_t j = 0; j < w; j++) mrow[j] = v + (uint32_t)j;
            v += (uint32_t)w;
        }
        if (drape) nd += 3 * nc;
    }
    pr->vcount = v;
    /* The lanes' maxima: both started at *mbound, NaN never entered. */
    __m128d hi = _mm_unpackhi_pd(mb, mb);
    *mbound = _mm_cvtsd_f64(_mm_max_sd(hi, mb));
}

/* Off a drape, the usual widths (a two-lane road: 3 columns; a shoulder:
 * 2) with the width a constant, their row loops unrolled. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx", "default")))
#endif
__attribute__((noinline))
static void pm__emit_rows_whole(const pm__level *L, pm_prim *pr, pm__range rg, size_t i0, size_t i1,
                                bool drape, uint32_t *map, double *mbound, double *XZ) {
    size_t w = rg.k1 - rg.k0 + 1;
    if (drape) pm__emit_rows_whole_w(L, pr, rg, i0, i1, true, map, mbound, XZ, w);
    else if (w == 3) pm__emit_rows_whole_w(L, pr, rg, i0, i1, false, map, mbound, XZ, 3);
    else if (w == 2) pm__emit_rows_whole_w(L, pr, rg, i0, i1, false, map, mbound, XZ, 2);
    else pm__emit_rows_whole_w(L, pr, rg, i0, i1, false, map, mbound, XZ, w);
}
#endif

/* pm__v2max(a, b) in one instruction where there is one: MAXPD gives
 * b > a ? b : a lane by lane, NaN and signed zeros included; and the lanes
 * of a mask as two bits. */
static inline pm__v2d pm__v2max_fast(pm__v2d a, pm__v2d b) {
#ifdef __SSE2__
    return (pm__v2d)_mm_max_pd((__m128d)b, (__m128d)a);
#else
    return pm__v2max(a, b);
#endif
}
static inline int pm__v2bits(pm__v2i m) {
#ifdef __SSE2__
    return _mm_movemask_pd((__m128d)m);
#else
    return (m[0] ? 1 : 0) | (m[1] ? 2 : 0);
#endif
}


/* (a[0], a[1], b[0], b[1]) */
static inline __attribute__((always_inline)) pm__v4d pm__v4_pair(const double *a, const double *b) {
    pm__v2d lo, hi;
    memcpy(&lo, a, sizeof lo);
    memcpy(&hi, b, sizeof hi);
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
}
/* pm__v2abs, pm__v2max (b > a ? b : a) and pm__v2bits on four lanes. */
static inline __attribute__((always_inline)) pm__v4d pm__v4abs(pm__v4d v) { return (pm__v4d)((pm__v4i)v & INT64_MAX); }
static inline __attribute__((always_inline)) pm__v4d pm__v4max(pm__v4d a, pm__v4d b) {
    pm__v4i m = b > a;
    return (pm__v4d)(((pm__v4i)b & m) | ((pm__v4i)a & ~m));
}
static inline __attribute__((always_inline)) int pm__v4bits(pm__v4i m) {
    return (m[0] ? 1 : 0) | (m[1] ? 2 : 0) | (m[2] ? 4 : 0) | (m[3] ? 8 : 0);
}
/* Whether every lane of mask m is set: halves and-ed, no lane by lane
 * extraction. */
static inline __attribute__((always_inline)) bool pm__v4all(pm__v4i m) {
    pm__v2i h = __builtin_shufflevector(m, m, 0, 1) & __builtin_shufflevector(m, m, 2, 3);
    return (h[0] & h[1]) != 0;
}

/* pm__emit_quads for all rows of band j0..j1 at once, the plan positions
 * of the grid's vertices read from XZ (row i at 2 w i: w x, then w z, as
 * doubles): the same tests and the same triangles in the same order. */
/* A quad of pm__emit_band_w that is not surely two good triangles: each
 * triangle kept or skipped as pm__emit_quads decides (bsure and bup the
 * fast tests' lanes); returns the triangles kept, written to o and their
 * section i to ts (when not NULL); *skipped counts the others. */
__attribute__((noinline))
static uint32_t pm__emit_quad_slow(const float *P, const uint32_t tri[2][3], int bsure, int bup,
                                   double mbound, uint32_t *o, uint32_t *ts, uint32_t i, uint64_t *skipped) {
    uint32_t kept = 0;
    for (int t = 0; t < 2; t++) {
        const uint32_t *q = tri[t];
        if (!(bup >> t & 1) ||
            (!(bsure >> t & 1) && (q[0] == q[1] || q[1] == q[2] || q[0] == q[2] ||
                                   !pm__faces_up(P + 3 * q[0], P + 3 * q[1], P + 3 * q[2], mbound)))) {
            ++*skipped;
            continue;
        }
        memcpy(o + 3 * kept, q, 3 * sizeof(uint32_t));
        if (ts) ts[kept] = i;
        kept++;
    }
    return kept;
}

/* Four vertex numbers, for the identity map's index stores. */
typedef uint32_t pm__v4u __attribute__((vector_size(16)));

/* map NULL: the identity map, row i's column j vertex v0 + w i + j (no
 * vertex of the grid repeats), its quads' indices computed, not loaded. */
static inline __attribute__((always_inline)) void
pm__emit_band_w(pm__level *L, pm_prim *pr, const uint32_t *map, uint32_t v0, const double *XZ, size_t n,
                size_t w, uint32_t j0, uint32_t j1, double mbound, bool with_ts) {
    const float *P = pr->positions;
    uint32_t *restrict out = pr->indices + pr->icount, *restrict o = out;
    uint32_t *restrict ts = with_ts ? L->tsec + L->ntsec : NULL;
    uint64_t skipped = 0;
    double m4 = 4.0 * 1.2e-7 * mbound;
    /* pm__road_emit reserved every quad's two triangles. */
    assert(pr->icount + 6 * (uint64_t)(n - 1) * (j1 - j0) <= pr->icap);
    const double *gr = XZ;   /* row i: w x, then w z; row i + 1 at + 2 w */
    const pm__v4d m4v = {m4, m4, m4, m4};
    for (uint32_t i = 0; i + 1 < n; i++, gr += 2 * w) {
        const uint32_t *r0 = map ? map + (size_t)i * w : NULL, *r1 = map ? r0 + w : NULL;
        uint32_t j = j0;
        /* Two quads at once, lanes (quad j's triangle 0, quad j + 1's 0,
         * quad j's 1, quad j + 1's 1): each lane the operations of the
         * two-lane step below, in its order. */
        for (; j + 2 <= j1; j += 2) {
            const double *g = gr + j;   /* x of row i's column j; z at + w, row i + 1 at + 2 w */
            pm__v4d ax = pm__v4_pair(g, g + 1), az = pm__v4_pair(g + w, g + w + 1);
            pm__v4d bx = pm__v4_pair(g + 1, g + 2 * w + 1), bz = pm__v4_pair(g + w + 1, g + 3 * w + 1);
            pm__v4d cx = pm__v4_pair(g + 2 * w, g + 2 * w), cz = pm__v4_pair(g + 3 * w, g + 3 * w);
            pm__v4d dbx = bx - ax, dbz = bz - az, dcx = cx - ax, dcz = cz - az;
            pm__v4d od = dbz * dcx - dbx * dcz;
            pm__v4d e2 = pm__v4max(pm__v4max(pm__v4abs(dbx), pm__v4abs(dcx)),
                                   pm__v4max(pm__v4abs(dbz), pm__v4abs(dcz)));
            pm__v4i sure = od > m4v * (2.0 * e2), up = od > 0.0;
            uint32_t v1, v2, v5, v4, v3, v6;
            if (map) {
                v1 = r0[j], v2 = r0[j + 1], v5 = r0[j + 2], v4 = r1[j], v3 = r1[j + 1], v6 = r1[j + 2];
            } else {
                v1 = v0 + i * (uint32_t)w + j, v2 = v1 + 1, v5 = v1 + 2;
                v4 = v1 + (uint32_t)w, v3 = v4 + 1, v6 = v4 + 2;
            }
            if (__builtin_expect(pm__v4all(sure & up), 1)) {   /* the usual pair of quads */
                if (map) {
                    o[0] = v1, o[1] = v2, o[2] = v4, o[3] = v2, o[4] = v3, o[5] = v4;
                    o[6] = v2, o[7] = v5, o[8] = v3, o[9] = v5, o[10] = v6, o[11] = v3;
                } else {   /* the twelve as offsets from v1, four to a store */
                    const uint32_t W = (uint32_t)w;
                    pm__v4u b = {v1, v1, v1, v1};
                    pm__v4u t0 = b + (pm__v4u){0, 1, W, 1}, t1 = b + (pm__v4u){W + 1, W, 1, 2},
                            t2 = b + (pm__v4u){W + 1, 2, W + 2, W + 1};
                    memcpy(o, &t0, sizeof t0);
                    memcpy(o + 4, &t1, sizeof t1);
                    memcpy(o + 8, &t2, sizeof t2);
                }
                o += 12;
                if (with_ts) {
                    ts[0] = ts[1] = ts[2] = ts[3] = i;
                    ts += 4;
                }
                continue;
            }
            uint32_t tri[2][2][3] = {{{v1, v2, v4}, {v2, v3, v4}}, {{v2, v5, v3}, {v5, v6, v3}}};
            int bsure = pm__v4bits(sure), bup = pm__v4bits(up);
            for (int q = 0; q < 2; q++) {
                int qs = (bsure >> q & 1) | (bsure >> (q + 1) & 2), qu = (bup >> q & 1) | (bup >> (q + 1) & 2);
                uint32_t k = pm__emit_quad_slow(P, (const uint32_t(*)[3])tri[q], qs, qu, mbound, o, ts, i, &skipped);
                o += 3 * k;
                if (with_ts) ts += k;
            }
        }
        for (; j < j1; j++) {
            /* triangle 0 = (v1, v2, v4), triangle 1 = (v2, v3, v4) */
            const double *g = gr + j;   /* x of v1; z at + w, next row at + 2 w */
            pm__v2d ax, az;
            memcpy(&ax, g, sizeof ax);
            memcpy(&az, g + w, sizeof az);
            pm__v2d bx = {g[1], g[2 * w + 1]}, bz = {g[w + 1], g[3 * w + 1]};
            pm__v2d cx = {g[2 * w], g[2 * w]}, cz = {g[3 * w], g[3 * w]};
            pm__v2d dbx = bx - ax, dbz = bz - az, dcx = cx - ax, dcz = cz - az;
            pm__v2d od = dbz * dcx - dbx * dcz;
            pm__v2d e2 = pm__v2max_fast(pm__v2max_fast(pm__v2abs(dbx), pm__v2abs(dcx)),
                                        pm__v2max_fast(pm__v2abs(dbz), pm__v2abs(dcz)));
            pm__v2i sure = od > m4 * (2.0 * e2), up = od > 0.0;
            uint32_t v1 = map ? r0[j] : v0 + i * (uint32_t)w + j, v2 = map ? r0[j + 1] : v1 + 1,
                     v4 = map ? r1[j] : v1 + (uint32_t)w, v3 = map ? r1[j + 1] : v4 + 1;
            if (__builtin_expect(pm__v2bits(sure & up) == 3, 1)) {   /* the usual quad */
                o[0] = v1, o[1] = v2, o[2] = v4, o[3] = v2, o[4] = v3, o[5] = v4;
                o += 6;
                if (with_ts) {
                    ts[0] = ts[1] = i;
                    ts += 2;
                }
                continue;
            }
            uint32_t tri[2][3] = {{v1, v2, v4}, {v2, v3, v4}};
            uint32_t k = pm__emit_quad_slow(P, (const uint32_t(*)[3])tri, pm__v2bits(sure), pm__v2bits(up),
                                            mbound, o, ts, i, &skipped);
            o += 3 * k;
            if (with_ts) ts += k;
        }
    }
    uint64_t kept = (uint64_t)(o - out) / 3;
    pr->icount += (uint32_t)(3 * kept);
    if (with_ts) L->ntsec += kept;
    L->triangles += kept;
    L->skipped += skipped;
}

/* pm__emit_band_w with the usual widths' bands (3 and 2 columns) and
 * whether triangles' sections are kept (L->tsec) constant. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx", "default")))
#endif
__attribute__((noinline))
static void pm__emit_band(pm__level *L, pm_prim *pr, const uint32_t *map, uint32_t v0, const double *XZ,
                          size_t n, size_t w, uint32_t j0, uint32_t j1, double mbound) {
    bool ts = L->tsec != NULL, w3 = w == 3 && j0 == 0 && j1 == 2, w2 = w == 2 && j0 == 0 && j1 == 1;
    if (w3 && !map && ts) pm__emit_band_w(L, pr, NULL, v0, XZ, n, 3, 0, 2, mbound, true);
    else if (w3 && !map) pm__emit_band_w(L, pr, NULL, v0, XZ, n, 3, 0, 2, mbound, false);
    else if (w3 && ts) pm__emit_band_w(L, pr, map, 0, XZ, n, 3, 0, 2, mbound, true);
    else if (w3) pm__emit_band_w(L, pr, map, 0, XZ, n, 3, 0, 2, mbound, false);
    else if (w2 && ts) pm__emit_band_w(L, pr, map, 0, XZ, n, 2, 0, 1, mbound, true);
    else if (w2) pm__emit_band_w(L, pr, map, 0, XZ, n, 2, 0, 1, mbound, false);
    else pm__emit_band_w(L, pr, map, v0, XZ, n, w, j0, j1, mbound, ts);
}

/* pm__emit_range's vertices and triangles, faster: whole sections by
 * pm__emit_rows_whole (SSE2), the others by pm__emit_row; each row's
 * vertex positions widened once into XZ for the bands' tests. */
static int pm__emit_range_fast(pm__ctx *x, pm__level *L, pm_prim *pr, pm__range rg, uint32_t *map,
                               double *XZ) {
    size_t n = L->n, w = rg.k1 - rg.k0 + 1;
    double mbound = 1.0;
    assert(!pr->colors && pr->uvs);
    for (size_t i = 0; i < n;) {
#ifdef __SSE2__
        bool drape = x->p->terrain && x->p->conform == PM_ROAD_DRAPE;
        size_t e = i;
        while (e < n && L->whole[e]) e++;
        if (e > i && pr->vcount + (e - i) * w <= pr->vcap) {
            pm__emit_rows_whole(L, pr, rg, i, e, drape, map, &mbound, XZ);
            i = e;
            continue;
        }
#endif
        uint32_t *mrow = map + i * w, *mprev = i > 0 ? mrow - w : mrow;   /* read only when i > 0 */
        int r = pm__emit_row(x, L, pr, rg, i, mrow, mprev, &mbound);
        if (r < 0) return r;
        const float *P = pr->positions;
        for (size_t j = 0; j < w; j++) {
            XZ[2 * w * i + j] = P[3 * (size_t)mrow[j]];
            XZ[2 * w * i + w + j] = P[3 * (size_t)mrow[j] + 2];
        }
        i++;
    }
    for (uint32_t j0 = 0; j0 + 1 < w; j0 += PM__BAND_QUADS) {
        uint32_t j1 = j0 + PM__BAND_QUADS < w - 1 ? j0 + PM__BAND_QUADS : w - 1;
        pm__emit_band(L, pr, map, 0, XZ, n, w, j0, j1, mbound);
    }
    return PM_OK;
}

int pm__road_emit(pm__ctx *x, pm__level *L, const char *name, const char *material,
                    const pm__range *rg, int nrg) {
    size_t n = L->n, nv = 0, nt = 0, wmax = 0;
    for (int j = 0; j < nrg; j++) {
        size_t w = rg[j].k1 - rg[j].k0 + 1;
        nv += n * w;
        nt += 2 * (n - 1) * (w - 1);
        if (w > wmax) wmax = w;
    }
    if (nv > UINT32_MAX - 2 || 3 * nt > UINT32_MAX) return PM_ERR_LIMIT;
    uint32_t *map = pm_arena_alloc(x->a, n * wmax * sizeof(uint32_t));
    pm_prim *pr = map ? pm_scene_add_prim(x->scene, name, material, PM_PRIM_UV, (uint32_t)nv,
                                          (uint32_t)(3 * nt)) : NULL;
    if (!pr) return PM_ERR_NOMEM;
    /* The fast path's widened plan positions: allocated last and given
     * back at once, so the arena takes them back for what follows. */
    size_t xz_bytes = 2 * n * wmax * sizeof(double);
    double *XZ = x->plain ? NULL : pm_arena_alloc(x->a, xz_bytes);
    if (!x->plain && !XZ) return PM_ERR_NOMEM;
    uint64_t skipped = L->skipped;
    for (int j = 0; j < nrg; j++) {
        int r = x->plain ? pm__emit_range(x, L, pr, rg[j], map)
                         : pm__emit_range_fast(x, L, pr, rg[j], map, XZ);
        if (r < 0) return r;
    }
    pm_arena_free(x->a, XZ, xz_bytes);
    /* Vertices go in row by row; a wider grid's bands (or a skipped
     * sliver's orphan) want them in order of first use. */
    bool banded = wmax > PM__BAND_QUADS + 1;
    return L->skipped > skipped || banded ? pm__fetch_order(x->a, pr) : PM_OK;
}

#ifdef __SSE2__
/* pm__road_grid's whole rows (pm__grid_whole_w, 3 columns) and
 * pm__emit_rows_whole_w's vertices of them in one pass, each row's
 * values kept in registers: positions c + d r, the edge columns' running
 * pm_v3_dist sums times uv_scale (U; the middle column's interpolated),
 * V, then the floats, the up normals, the map row and XZ (x then z of the
 * floats, widened) with *mbound. The same operations in the same order
 * as those two passes, lane by lane, so the same bits. A row that repeats
 * a column's x and z of the previous row goes vertex by vertex
 * (pm__whole_row_each). edge[0], edge[1]: the two edge columns' sums. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx", "default")))
#endif
__attribute__((noinline))
static int pm__grid_emit_rows3(pm__ctx *x, const pm__level *L, pm_prim *pr, const pm__uvcol *uc, uint32_t *map,
                               double *XZ, double *mbound, double edge[2], double *pos, bool *repeats) {
    const pm_road_params *p = x->p;
    size_t n = L->n;
    const double e0 = L->col[0], e1 = L->col[1], e2 = L->col[2];
    const __m128d d0 = _mm_set1_pd(e0), d1 = _mm_set1_pd(e1), d2 = _mm_set1_pd(e2);
    const __m128d scale = _mm_set1_pd(p->uv_scale);
    const __m128d V0 = _mm_set1_pd(uc[0].v), V1 = _mm_set1_pd(uc[1].v), V2 = _mm_set1_pd(uc[2].v);
    const double f1 = uc[1].f, g1 = 1.0 - f1;
    const __m128d absmask = _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX));
    __m128d mb = _mm_set1_pd(*mbound), acc = _mm_setzero_pd();
    __m128d q0 = _mm_setzero_pd(), q2 = _mm_setzero_pd(), qz = _mm_setzero_pd();   /* the previous row's */
    __m128d X0 = _mm_setzero_pd(), X1 = _mm_setzero_pd(), X2 = _mm_setzero_pd();   /* its XZ pairs */
    float *restrict P = pr->positions, *restrict N = pr->normals, *restrict U = pr->uvs;
    uint32_t v = pr->vcount, *mrow = map;
    double *xr = XZ;
    const pm__section *sc = L->sec;
    for (size_t i = 0; i < n; i++, sc++, mrow += 3, xr += 6) {
        if ((i & 255) == 0 && p->cancel && *p->cancel) return PM_ERR_CANCELLED;
        /* pm__grid_row_whole */
        __m128d c01 = _mm_loadu_pd(sc->c), r01 = _mm_loadu_pd(sc->r);
        double c2 = sc->c[2], r2 = sc->r[2];
        __m128d a0 = _mm_add_pd(c01, _mm_mul_pd(d0, r01)), a1 = _mm_add_pd(c01, _mm_mul_pd(d1, r01)),
                a2 = _mm_add_pd(c01, _mm_mul_pd(d2, r01));
        double z0 = c2 + e0 * r2, z1 = c2 + e1 * r2, z2 = c2 + e2 * r2;
        __m128d z02 = _mm_set_pd(z2, z0);
        /* U of the edge columns (lane 0 column 0, lane 1 column 2) */
        __m128d u = _mm_setzero_pd();
        if (i > 0) {
            __m128d dd0 = _mm_sub_pd(a0, q0), dd2 = _mm_sub_pd(a2, q2);
            __m128d dx = _mm_unpacklo_pd(dd0, dd2), dy = _mm_unpackhi_pd(dd0, dd2), dz = _mm_sub_pd(z02, qz);
            __m128d s = _mm_add_pd(_mm_add_pd(_mm_mul_pd(dx, dx), _mm_mul_pd(dy, dy)), _mm_mul_pd(dz, dz));
            acc = _mm_add_pd(acc, _mm_sqrt_pd(s));
            u = _mm_mul_pd(acc, scale);
        }
        q0 = a0, q2 = a2, qz = z02;
        if (pos) {   /* pm__road_grid's row, for the outline proof after */
            double *row = pos + 9 * i;
            _mm_storeu_pd(row, a0), row[2] = z0;
            _mm_storeu_pd(row + 3, a1), row[5] = z1;
            _mm_storeu_pd(row + 6, a2), row[8] = z2;
        }
        double um = _mm_cvtsd_f64(u) * g1 + _mm_cvtsd_f64(_mm_unpackhi_pd(u, u)) * f1;
        /* XZ: (x0, x1), (x2, z0), (z1, z2) of the floats, widened */
        __m128d Y0 = _mm_cvtps_pd(_mm_cvtpd_ps(_mm_unpacklo_pd(a0, a1)));
        __m128d Y1 = _mm_cvtps_pd(_mm_cvtpd_ps(_mm_unpacklo_pd(a2, z02)));
        __m128d Y2 = _mm_cvtps_pd(_mm_cvtpd_ps(_mm_set_pd(z2, z1)));
        _mm_storeu_pd(xr, Y0);
        _mm_storeu_pd(xr + 2, Y1);
        _mm_storeu_pd(xr + 4, Y2);
        mb = _mm_max_pd(_mm_and_pd(Y0, absmask), mb);
        mb = _mm_max_pd(_mm_and_pd(Y1, absmask), mb);
        mb = _mm_max_pd(_mm_and_pd(Y2, absmask), mb);
        bool rep = false;   /* some column's x and z are the previous row's */
        if (i > 0) {
            unsigned eq = (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(Y0, X0)) |
                          (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(Y1, X1)) << 2 |
                          (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(Y2, X2)) << 4;
            rep = (eq & (eq >> 3) & 7u) != 0;
        }
        X0 = Y0, X1 = Y1, X2 = Y2;
        __m128d uv01 = _mm_unpacklo_pd(u, V0), uv23 = _mm_unpacklo_pd(_mm_set_sd(um), V1),
                uv45 = _mm_unpackhi_pd(u, V2);
        if (__builtin_expect(rep, 0)) {
            double pd[9], ud[6];
            _mm_storeu_pd(pd, a0), pd[2] = z0;
            _mm_storeu_pd(pd + 3, a1), pd[5] = z1;
            _mm_storeu_pd(pd + 6, a2), pd[8] = z2;
            _mm_storeu_pd(ud, uv01);
            _mm_storeu_pd(ud + 2, uv23);
            _mm_storeu_pd(ud + 4, uv45);
            v = pm__whole_row_each(pr, v, sc, pd, ud, NULL, false, true, mrow, 3);
            *repeats = true;
            continue;
        }
        /* positions x0 y0 z0 x1 | y1 z1 x2 y2 | z2 */
        __m128 f0 = _mm_cvtpd_ps(a0), f1v = _mm_cvtpd_ps(a1), f2 = _mm_cvtpd_ps(a2);
        __m128 fz = _mm_cvtpd_ps(_mm_set_pd(z1, z0));                 /* z0 z1 */
        __m128 t = _mm_unpacklo_ps(fz, f1v);                          /* z0 x1 z1 y1 */
        __m128 s = _mm_unpacklo_ps(f1v, fz);                          /* x1 z0 y1 z1 */
        float *pv = P + 3 * (size_t)v;
        _mm_storeu_ps(pv, _mm_movelh_ps(f0, t));
        _mm_storeu_ps(pv + 4, _mm_movehl_ps(_mm_movelh_ps(f2, f2), s));
        _mm_store_ss(pv + 8, _mm_cvtsd_ss(_mm_setzero_ps(), _mm_set_sd(z2)));
        /* UVs u0 v0 um v1 | u2 v2 */
        float *uvp = U + 2 * (size_t)v;
        _mm_storeu_ps(uvp, _mm_movelh_ps(_mm_cvtpd_ps(uv01), _mm_cvtpd_ps(uv23)));
        _mm_storel_pi((__m64 *)(void *)(uvp + 4), _mm_cvtpd_ps(uv45));
        /* normals: up three times (x y z x | y z x y | z) */
        __m128 xy = _mm_cvtpd_ps(_mm_loadu_pd(sc->up)), zz = _mm_cvtpd_ps(_mm_load_sd(sc->up + 2));
        __m128 xyz = _mm_movelh_ps(xy, zz);                                    /* x y z 0 */
        float *nv = N + 3 * (size_t)v;
        _mm_storeu_ps(nv, _mm_shuffle_ps(xyz, xyz, _MM_SHUFFLE(0, 2, 1, 0)));
        _mm_storeu_ps(nv + 4, _mm_shuffle_ps(xyz, xyz, _MM_SHUFFLE(1, 0, 2, 1)));
        _mm_store_ss(nv + 8, zz);
        mrow[0] = v, mrow[1] = v + 1, mrow[2] = v + 2;
        v += 3;
    }
    pr->vcount = v;
    __m128d hi = _mm_unpackhi_pd(mb, mb);
    *mbound = _mm_cvtsd_f64(_mm_max_sd(hi, mb));
    _mm_storeu_pd(edge, acc);
    return PM_OK;
}
#endif

bool pm__road_grid_emit_fits(const pm__ctx *x, const pm__level *L) {
#ifdef __SSE2__
    return !(x->plain || x->p->terrain || L->closed || L->ncol != 3 || L->kl != 0 || L->kr != 2 ||
             !L->fold_free || !(-L->col[0] <= L->sec[0].clamp[0] && L->col[2] <= L->sec[0].clamp[1]));
#else
    (void)x, (void)L;
    return false;
#endif
}

/* pm__road_grid then pm__road_emit of the level's asphalt, for a level
 * nothing else reads but its positions (with keep_pos) and the triangles'
 * sections (where L->tsec is set): where the level is open, off terrain,
 * 3 columns wide (no shoulder) and fold free at full width (every section
 * whole: pm__road_grid_emit_fits), the rows go straight from the sections
 * to the primitive (pm__grid_emit_rows3; L->uv and L->whole stay NULL,
 * L->pos too unless keep_pos), then the bands as pm__road_emit's; the same
 * primitive. Returns 1 (nothing done) where that does not hold, else as
 * pm__road_emit. */
int pm__road_grid_emit(pm__ctx *x, pm__level *L, const char *name, const char *material, bool keep_pos) {
#ifdef __SSE2__
    const pm_road_params *p = x->p;
    size_t n = L->n;
    if (!pm__road_grid_emit_fits(x, L)) return 1;
    if (keep_pos && !(L->pos = pm_arena_alloc(x->a, n * 9 * sizeof(double)))) return PM_ERR_NOMEM;
    /* pm__road_emit's bounds and buffers for its one range, columns 0 .. 2 */
    size_t nv = 3 * n, nt = 4 * (n - 1);
    if (nv > UINT32_MAX - 2 || 3 * nt > UINT32_MAX) return PM_ERR_LIMIT;
    uint32_t own[4], nown = pm__own_columns(L, own);
    pm__uvcol uc[3];
    pm__uv_columns(L, p->width, own, nown, uc);
    uint32_t *map = pm_arena_alloc(x->a, n * 3 * sizeof(uint32_t));
    pm_prim *pr = map ? pm_scene_add_prim(x->scene, name, material, PM_PRIM_UV, (uint32_t)nv, (uint32_t)(3 * nt))
                      : NULL;
    if (!pr) return PM_ERR_NOMEM;
    size_t xz_bytes = 6 * n * sizeof(double);
    double *XZ = pm_arena_alloc(x->a, xz_bytes);
    if (!XZ) return PM_ERR_NOMEM;
    uint64_t skipped = L->skipped;
    uint32_t v0 = pr->vcount;
    double mbound = 1.0, edge[2];
    bool repeats = false;   /* some vertex is the previous row's: map is not the identity */
    int r = pm__grid_emit_rows3(x, L, pr, uc, map, XZ, &mbound, edge, keep_pos ? L->pos : NULL, &repeats);
    if (r < 0) return r;
    /* pm__road_grid's edge lengths: columns 0 and 2 are both edges */
    L->edge_len[0] = L->edge_len[1] = edge[0];
    L->edge_len[2] = L->edge_len[3] = edge[1];
    pm__emit_band(L, pr, repeats ? map : NULL, v0, XZ, n, 3, 0, 2, mbound);
    pm_arena_free(x->a, XZ, xz_bytes);
    return L->skipped > skipped ? pm__fetch_order(x->a, pr) : PM_OK;
#else
    (void)x, (void)L, (void)name, (void)material, (void)keep_pos;
    return 1;
#endif
}

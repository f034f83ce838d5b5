#include "road/road_internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scene/result.h"

/* ---- parameters ---- */

void pm_road_params_default(pm_road_params *p) {
    memset(p, 0, sizeof *p);
    p->curve = PM_CURVE_CATMULL_ROM;
    p->alpha = 0.5;
    p->max_error = 0.05;
    p->max_segment = 5.0;
    p->width = 7.0;
    p->shoulder = 1.0;
    p->cross_segments = 4;
    p->bank_radius = 50.0;
    p->bank_transition = 20.0;
    p->terrain_mesh = true;
    p->conform = PM_ROAD_DRAPE;
    p->up = PM_ROAD_UP_WORLD;
    p->flatten_opts.margin = 1.0;
    p->flatten_opts.falloff = 8.0;
    p->flatten_opts.depth = 0.05;
    p->uv_scale = 0.25;
}


uint32_t pm_road_columns(const pm_road_params *p) {
    uint32_t cs = p->cross_segments;
    uint32_t carriage = cs + 1 + (cs % 2);
    uint32_t strip = 0;
    if (p->shoulder > 0.0) {
        double w = p->width / (double)cs;
        double k = ceil(p->shoulder / w - 1e-9);
        strip = k < 1.0 ? 1u : (k > 64.0 ? 64u : (uint32_t)k);
    }
    return carriage + 2 * strip;
}

/* Shoulder strips per side for a cross-section of cs carriageway strips. */
static uint32_t pm__shoulder_strips(const pm_road_params *p, uint32_t cs) {
    pm_road_params q = *p;
    q.cross_segments = cs;
    return (pm_road_columns(&q) - (cs + 1 + cs % 2)) / 2;
}

/* Nominal column offsets: shoulder strips, carriageway strips (with the
 * centre line always a column, so each half is its own convex band). */
static int pm__columns(pm__ctx *x, pm__level *L, uint32_t cs, uint32_t ss) {
    const pm_road_params *p = x->p;
    uint32_t carriage = cs + 1 + (cs % 2);
    L->ncol = carriage + 2 * ss;
    L->col = pm_arena_alloc(x->a, L->ncol * sizeof(double));
    if (!L->col) return PM_ERR_NOMEM;
    double hw = 0.5 * p->width;
    uint32_t k = 0;
    for (uint32_t j = ss; j >= 1; j--) L->col[k++] = -hw - p->shoulder * (double)j / (double)ss;
    L->kl = k;
    for (uint32_t j = 0; j <= cs; j++) {
        double d = -hw + p->width * (double)j / (double)cs;
        if (cs % 2 && j == (cs + 1) / 2) L->col[k++] = 0.0;
        L->col[k++] = (j == cs) ? hw : (2 * j == cs ? 0.0 : d);
    }
    L->kr = k - 1;
    for (uint32_t j = 1; j <= ss; j++) L->col[k++] = hw + p->shoulder * (double)j / (double)ss;
    assert(k == L->ncol);
    return PM_OK;
}


/* Vertices one section adds to the scene (asphalt + shoulder columns). */
static uint64_t pm__vertices_per_section(const pm__level *L) {
    uint64_t v = L->kr - L->kl + 1;
    if (L->kl > 0) v += 2ull * (L->kl + 1);
    return v;
}

int pm__road_limit(pm__ctx *x, const char *field, uint64_t needed) {
    if (x->fail) {
        x->fail->field = field;
        x->fail->needed = needed;
    }
    return PM_ERR_LIMIT;
}

/* Samples, frames and clamps of one level of detail (no vertex grid). */
static int pm__level_sections(pm__ctx *x, pm__level *L, double max_error, double max_segment,
                              double max_turn, uint32_t cs, uint32_t ss, const char *field) {
    const pm_road_params *p = x->p;
    memset(L, 0, sizeof *L);
    int r = pm__columns(x, L, cs, ss);
    if (r < 0) return r;
    uint64_t vps = pm__vertices_per_section(L);
    uint64_t cap = x->budget == UINT64_MAX ? UINT32_MAX : x->budget / vps;
    if (cap > UINT32_MAX / 8) cap = UINT32_MAX / 8;
    if (cap < 2) return pm__road_limit(x, field, 2 * vps);
    pm_sample_opts o = {.max_error = max_error, .max_segment = max_segment,
                        .max_turn = max_turn, .max_samples = (uint32_t)cap,
                        .cancel = p->cancel, .no_err = x->no_meta};   /* the base level alone reads no err */
    if (p->terrain) {
        o.height = pm_heightfield_height;
        o.height_bound = pm_heightfield_chord_bound;
        o.height_ctx = p->terrain;
    }
    pm_curve_sample *smp;
    size_t n;
    r = pm_spline_sample(x->a, &x->spline, &o, &smp, &n);
    if (r == PM_ERR_LIMIT) return pm__road_limit(x, field, (cap + 1) * vps);
    if (r < 0) return r;
    if (x->budget != UINT64_MAX) x->budget -= n * vps;
    /* The measured error is metadata only: the base level alone has none. */
    L->achieved = x->no_meta ? 0.0 : pm_spline_sample_error(&x->spline, &o, smp, n);
    if ((r = pm__road_sections(x, L, smp, n)) < 0) return r;
    pm__road_clamp_folds(x, L);
    return PM_OK;
}

/* Samples, frames, clamps and the vertex grid of one level of detail. */
static int pm__level_build(pm__ctx *x, pm__level *L, double max_error, double max_segment,
                           double max_turn, uint32_t cs, uint32_t ss, const char *field) {
    int r = pm__level_sections(x, L, max_error, max_segment, max_turn, cs, ss, field);
    return r < 0 ? r : pm__road_grid(x, L);
}

/* Emits the level's asphalt and shoulder, then refuses it (level as in
 * pm_road_overlaps) when that surface overlaps itself in plan. */
/* a then b into out (cap bytes, truncated as snprintf would): the names of
 * a level's primitives, without snprintf's format parsing per road. */
static void pm__concat(char *out, size_t cap, const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > cap - 1) la = cap - 1;
    if (lb > cap - 1 - la) lb = cap - 1 - la;
    memcpy(out, a, la);
    memcpy(out + la, b, lb);
    out[la + lb] = '\0';
}

/* fused: the level's grid not made yet, pm__road_grid_emit does it with
 * the asphalt (it fits: pm__road_grid_emit_fits; no shoulder). */
static int pm__emit_level(pm__ctx *x, pm__level *L, const char *suffix, uint32_t level, bool fused) {
    char name[48];
    size_t cap = 2 * (L->n - 1) * (L->ncol - 1);
    bool check = !x->p->overlaps_checked_by_caller;
    if (check && cap >= UINT32_MAX) return PM_ERR_LIMIT;
    L->tsec = check ? pm_arena_alloc(x->a, cap * sizeof(uint32_t)) : NULL;
    if (check && !L->tsec) return PM_ERR_NOMEM;
    L->ntsec = 0;
    uint32_t first = x->scene->nprims;
    pm__range road = {L->kl, L->kr};
    pm__concat(name, sizeof name, "asphalt", suffix);
    /* the outline proof of the overlap check reads the positions */
    int r = fused ? pm__road_grid_emit(x, L, name, "asphalt", check) : pm__road_emit(x, L, name, "asphalt", &road, 1);
    if (r == PM_OK && L->kl > 0) {
        pm__range sh[2] = {{0, L->kl}, {L->kr, L->ncol - 1}};
        pm__concat(name, sizeof name, "shoulder", suffix);
        r = pm__road_emit(x, L, name, "shoulder", sh, 2);
    }
    if (r == PM_OK && check) r = pm__road_overlaps(x, L, level, first);
    L->tsec = NULL;
    return r;
}

/* ---- terrain flattening ---- */

static int pm__flatten(pm__ctx *x, const pm__level *L, const pm_flatten_opts *o, pm_heightfield *out) {
    const pm_road_params *p = x->p;
    size_t n = L->n, nc = L->ncol;
    uint32_t *idx = pm_arena_alloc(x->a, (n - 1) * (nc - 1) * 6 * sizeof(uint32_t));
    if (!idx) return PM_ERR_NOMEM;
    size_t nt = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        for (size_t k = 0; k + 1 < nc; k++) {
            uint32_t v1 = (uint32_t)(i * nc + k), v2 = v1 + 1, v4 = v1 + (uint32_t)nc, v3 = v4 + 1;
            uint32_t tri[2][3] = {{v1, v2, v4}, {v2, v3, v4}};
            for (int t = 0; t < 2; t++) {
                const double *a = L->pos + 3 * tri[t][0], *b = L->pos + 3 * tri[t][1],
                             *c = L->pos + 3 * tri[t][2];
                double pa[2] = {a[0], a[2]}, pb[2] = {b[0], b[2]}, pc[2] = {c[0], c[2]};
                if (!(pm_orient_xz_plain(pa, pb, pc) > 0.0)) continue;
                memcpy(idx + 3 * nt++, tri[t], sizeof tri[t]);
            }
        }
    }
    /* The outline: both outer edges, and the end sections of an open road. */
    double *lines[4];
    size_t lens[4], nl = 0;
    for (int e = 0; e < 2; e++) {
        size_t k = e ? nc - 1 : 0;
        double *l = pm_arena_alloc(x->a, n * 3 * sizeof(double));
        if (!l) return PM_ERR_NOMEM;
        for (size_t i = 0; i < n; i++) memcpy(l + 3 * i, L->pos + 3 * (i * nc + k), 3 * sizeof(double));
        lines[nl] = l;
        lens[nl++] = n;
    }
    if (!p->closed) {
        lines[nl] = L->pos;
        lens[nl++] = nc;
        lines[nl] = L->pos + 3 * (n - 1) * nc;
        lens[nl++] = nc;
    }
    pm_flatten_shape shape = {.positions = L->pos, .nvertices = n * nc,
                              .indices = idx, .ntriangles = nt,
                              .lines = (const double *const *)lines, .line_len = lens, .nlines = nl};
    return pm_heightfield_flatten(x->a, p->terrain, &shape, o, out, p->cancel);
}

/* ---- metadata ---- */

static int pm__warn(pm__ctx *x, const char *fmt, double a, double b, double c) {
    char buf[200];
    snprintf(buf, sizeof buf, fmt, a, b, c);
    return pm_meta_push(x->warnings, pm_meta_str(x->a, buf));
}

/* Whether a section's side is cut back or fanned onto a pivot. */
static bool pm__folded(const pm__section *sc, int side, double W) {
    return sc->fan[side] || sc->clamp[side] < W * (1.0 - 1e-9);
}

/* Runs of sections whose side is cut back or fanned: where the road folded. */
static int pm__folds(pm__ctx *x, const pm__level *L, pm_meta *arr) {
    const pm_road_params *p = x->p;
    pm_arena *a = x->a;
    double hw = 0.5 * p->width, W = hw + p->shoulder;
    for (int side = 0; side < 2; side++) {
        double sg = side ? 1.0 : -1.0;
        for (size_t i = 0; i < L->n;) {
            if (!pm__folded(&L->sec[i], side, W)) { i++; continue; }
            size_t j = i, m = i;
            double rmin = INFINITY;
            bool fan = false;
            while (j + 1 < L->n && pm__folded(&L->sec[j + 1], side, W)) j++;
            for (size_t k = i; k <= j; k++) {
                fan |= L->sec[k].fan[side];
                if (L->sec[k].fan[side] > L->sec[m].fan[side] ||
                    (L->sec[k].fan[side] == L->sec[m].fan[side] && L->sec[k].clamp[side] < L->sec[m].clamp[side]))
                    m = k;
                if (L->sec[k].kappa != 0.0) rmin = fmin(rmin, 1.0 / fabs(L->sec[k].kappa));
            }
            if (p->curve == PM_CURVE_LINEAR) rmin = 0.0;   /* a corner */
            double at[3];
            pm__road_vertex_at(p, &L->sec[m], sg * W, at);
            pm_meta *f = pm_meta_obj(a);
            pm_meta_set(a, f, "side", pm_meta_str(a, side ? "right" : "left"));
            pm_meta_set(a, f, "from", pm_meta_num(a, L->sec[i].s));
            pm_meta_set(a, f, "to", pm_meta_num(a, L->sec[j].s));
            pm_meta_set(a, f, "min_radius", isfinite(rmin) ? pm_meta_num(a, rmin) : pm_meta_null(a));
            pm_meta_set(a, f, "carriageway", pm_meta_bool(a, L->sec[m].clamp[side] < hw));
            pm_meta_set(a, f, "fan", pm_meta_bool(a, fan));
            pm_meta_set(a, f, "at", pm_meta_nums(a, at, 3));
            if (pm_meta_push(arr, f) < 0) return PM_ERR_NOMEM;
            if (pm__warn(x, side ? "right side collapsed from s=%.2f m to s=%.2f m (radius %.2f m)"
                                 : "left side collapsed from s=%.2f m to s=%.2f m (radius %.2f m)",
                         L->sec[i].s, L->sec[j].s, isfinite(rmin) ? rmin : 0.0) < 0)
                return PM_ERR_NOMEM;
            i = j + 1;
        }
    }
    return PM_OK;
}

static pm_meta *pm__edges_meta(pm_arena *a, const pm__level *L) {
    pm_meta *e = pm_meta_obj(a);
    pm_meta_set(a, e, "left", pm_meta_num(a, L->edge_len[1]));
    pm_meta_set(a, e, "right", pm_meta_num(a, L->edge_len[2]));
    pm_meta_set(a, e, "left_shoulder", pm_meta_num(a, L->edge_len[0]));
    pm_meta_set(a, e, "right_shoulder", pm_meta_num(a, L->edge_len[3]));
    return e;
}

static pm_meta *pm__terrain_meta(pm_arena *a, const pm_heightfield *hf, bool flattened) {
    pm_meta *t = pm_meta_obj(a);
    pm_meta_set(a, t, "origin", pm_meta_nums(a, hf->origin, 2));
    pm_meta_set(a, t, "cell", pm_meta_num(a, hf->cell));
    pm_meta_set(a, t, "cols", pm_meta_int(a, hf->cols));
    pm_meta_set(a, t, "rows", pm_meta_int(a, hf->rows));
    pm_meta_set(a, t, "flattened", pm_meta_bool(a, flattened));
    if (flattened) pm_meta_set(a, t, "heights", pm_meta_nums(a, hf->h, (size_t)hf->cols * hf->rows));
    return t;
}

/* The smallest radius (INFINITY: straight) and the largest |bank| over
 * the level's sections, and whether any side of any is folded
 * (pm__folded): fmin and fmax calls and a reciprocal per section. */
static bool pm__section_stats_plain(const pm__level *L, double W, double *rmin, double *bmax) {
    double r = INFINITY, b = 0.0;
    bool folded = false;
    for (size_t i = 0; i < L->n; i++) {
        if (L->sec[i].kappa != 0.0) r = fmin(r, 1.0 / fabs(L->sec[i].kappa));
        b = fmax(b, fabs(L->sec[i].bank));
        folded |= pm__folded(&L->sec[i], 0, W);
        folded |= pm__folded(&L->sec[i], 1, W);
    }
    *rmin = r;
    *bmax = b;
    return folded;
}

/* pm__section_stats_plain's answers in one branch-free pass: the largest
 * |kappa| and one reciprocal at the end (division rounds monotonically,
 * so 1/max is the min of the reciprocals; a subnormal's reciprocal is
 * INFINITY either way); a > m ? a : m skips NaN as fmin and fmax do, and
 * every candidate is +0 or more, so no signed zero can differ. */
static bool pm__section_stats(const pm__level *L, double W, double *rmin, double *bmax) {
    double k = 0.0, b = 0.0, thr = W * (1.0 - 1e-9);
    bool folded = false;
    for (size_t i = 0; i < L->n; i++) {
        const pm__section *sc = &L->sec[i];
        double ak = fabs(sc->kappa), ab = fabs(sc->bank);
        k = ak > k ? ak : k;
        b = ab > b ? ab : b;
        folded |= (sc->fan[0] | sc->fan[1]) | ((sc->clamp[0] < thr) | (sc->clamp[1] < thr));
    }
    *rmin = k != 0.0 ? 1.0 / k : INFINITY;
    *bmax = b;
    return folded;
}

/* pm__section_stats's answers without another pass where the passes
 * before know them: sections of the unbanked pass (every bank +0.0, the
 * largest |kappa| kept as L->kmax) that the fold pass found fresh at full
 * width (fold_free: no fan, every clamp sec[0].clamp[0], here at least
 * W's threshold). False: not known, ask pm__section_stats. */
static bool pm__section_stats_known(const pm__level *L, double W, double *rmin, double *bmax) {
    if (!(L->kmax_known && L->fold_free && L->sec[0].clamp[0] >= W * (1.0 - 1e-9))) return false;
    *rmin = L->kmax != 0.0 ? 1.0 / L->kmax : INFINITY;
    *bmax = 0.0;
    return true;
}

static int pm__base_meta(pm__ctx *x, const pm__level *L) {
    const pm_road_params *p = x->p;
    pm_arena *a = x->a;
    pm_meta *m = x->scene->meta;
    double rmin, bmax, W = 0.5 * p->width + p->shoulder;
    bool folded = x->plain                                   ? pm__section_stats_plain(L, W, &rmin, &bmax)
                  : pm__section_stats_known(L, W, &rmin, &bmax) ? false
                                                                : pm__section_stats(L, W, &rmin, &bmax);
    pm_meta_set(a, m, "length", pm_meta_num(a, L->length));
    pm_meta_set(a, m, "samples", pm_meta_int(a, (int64_t)L->n));
    pm_meta_set(a, m, "max_chord_error", pm_meta_num(a, L->achieved));
    pm_meta_set(a, m, "edges", pm__edges_meta(a, L));
    pm_meta_set(a, m, "min_radius", isfinite(rmin) ? pm_meta_num(a, rmin) : pm_meta_null(a));
    pm_meta_set(a, m, "max_bank_degrees", pm_meta_num(a, bmax / PM__DEG));
    pm_meta_set(a, m, "triangles", pm_meta_int(a, (int64_t)L->triangles));
    pm_meta_set(a, m, "triangles_collapsed", pm_meta_int(a, (int64_t)L->skipped));
    pm_meta *folds = pm_meta_arr(a);
    if (!folds || (folded && pm__folds(x, L, folds) < 0)) return PM_ERR_NOMEM;
    pm_meta_set(a, m, "folds", folds);
    if (L->achieved > p->max_error &&
        pm__warn(x, "achieved chord error %.4f m exceeds max_error %.4f m (subdivision depth limit)",
                 L->achieved, p->max_error, 0.0) < 0)
        return PM_ERR_NOMEM;
    return PM_OK;
}

static pm_meta *pm__lod_meta(pm_arena *a, uint32_t level, const char *name, double err,
                             double seg, const pm__level *L) {
    pm_meta *m = pm_meta_obj(a);
    pm_meta_set(a, m, "level", pm_meta_int(a, level));
    pm_meta_set(a, m, "name", pm_meta_str(a, name));
    pm_meta_set(a, m, "max_error", pm_meta_num(a, err));
    pm_meta_set(a, m, "max_segment", pm_meta_num(a, seg));
    pm_meta_set(a, m, "samples", pm_meta_int(a, (int64_t)L->n));
    pm_meta_set(a, m, "triangles", pm_meta_int(a, (int64_t)L->triangles));
    pm_meta_set(a, m, "max_chord_error", pm_meta_num(a, L->achieved));
    return m;
}

/* ---- generation ---- */

/* LOD k re-samples the centre line at the coarser error; chords may grow
 * in the same ratio. A straight (bank) section needs no interior columns. */
static int pm__lods(pm__ctx *x, pm_meta *arr) {
    const pm_road_params *p = x->p;
    for (size_t l = 0; l < p->nlods; l++) {
        double err = p->lods[l];
        double seg = fmin(p->max_segment * err / p->max_error, 1000.0);
        if (seg < p->max_segment) seg = p->max_segment;
        bool drape = p->terrain && p->conform == PM_ROAD_DRAPE;
        uint32_t cs = drape ? p->cross_segments : 1;
        uint32_t ss = p->shoulder > 0.0 ? (drape ? pm__shoulder_strips(p, cs) : 1) : 0;
        char field[40], suffix[32], name[48];
        snprintf(field, sizeof field, "/lods/%zu", l);
        const char *fp = pm_arena_strdup(x->a, field);
        if (!fp) return PM_ERR_NOMEM;
        pm__level L;
        /* The turn bound grows like the chord angle at a fixed radius. */
        double turn = fmin(PM_ROAD_MAX_TURN_RADIANS * sqrt(err / p->max_error), 0.6);
        int r = pm__level_build(x, &L, err, seg, turn, cs, ss, fp);
        if (r < 0) return r;
        snprintf(suffix, sizeof suffix, "_lod%zu", l + 1);
        uint32_t first = x->scene->nprims;
        if ((r = pm__emit_level(x, &L, suffix, (uint32_t)(l + 1), false)) < 0) return r;
        /* glTF gets one mesh per level, road_lod<k>, holding its asphalt
         * and shoulder primitives. */
        snprintf(name, sizeof name, "road%s", suffix);
        for (uint32_t k = first; k < x->scene->nprims; k++)
            if (pm_prim_set_mesh(x->scene, &x->scene->prims[k], name) < 0) return PM_ERR_NOMEM;
        snprintf(name, sizeof name, "asphalt%s", suffix);
        if (pm_meta_push(arr, pm__lod_meta(x->a, (uint32_t)(l + 1), name, err, seg, &L)) < 0)
            return PM_ERR_NOMEM;
    }
    return PM_OK;
}

/* The terrain under props and in the "terrain" primitive. A draped road
 * lies on the bilinear terrain while the terrain mesh interpolates its
 * triangles, so the two would z-fight and cut through each other: without
 * flatten, the mesh (only) is seated `depth` under the draped road. */
static int pm__terrain_stage(pm__ctx *x, const pm__level *L) {
    const pm_road_params *p = x->p;
    x->ground = p->terrain;
    if (!p->terrain) return PM_OK;
    const pm_heightfield *mesh = p->terrain;
    bool seat = !p->flatten && p->conform == PM_ROAD_DRAPE && p->terrain_mesh;
    if (p->flatten || seat) {
        pm_heightfield *flat = pm_arena_alloc(x->a, sizeof *flat);
        if (!flat) return PM_ERR_NOMEM;
        pm_flatten_opts seated = {.margin = 0.0, .falloff = 0.0, .depth = p->flatten_opts.depth};
        int r = pm__flatten(x, L, p->flatten ? &p->flatten_opts : &seated, flat);
        if (r < 0) return r;
        mesh = flat;
        if (p->flatten) x->ground = flat;
    }
    if (p->terrain_mesh) {
        long r = pm_heightfield_to_prim(x->scene, mesh, "terrain", p->cancel);
        if (r < 0) return (int)r;
    }
    pm_meta *tm = pm__terrain_meta(x->a, x->ground, p->flatten);
    pm_meta_set(x->a, tm, "seated", pm_meta_bool(x->a, seat));
    pm_meta_set(x->a, x->scene->meta, "terrain", tm);
    return PM_OK;
}

/* Everything before the base level: the terrain's share of the budget. */
static int pm__terrain_budget(pm__ctx *x) {
    const pm_road_params *p = x->p;
    if (p->terrain && p->terrain_mesh) {
        uint64_t tv = (uint64_t)p->terrain->cols * p->terrain->rows;
        if (tv > x->budget) return pm__road_limit(x, "/terrain", tv);
        if (x->budget != UINT64_MAX) x->budget -= tv;
    }
    return PM_OK;
}

/* The base level, sampled, swept and emitted. */
static int pm__base_level(pm__ctx *x, pm__level *base) {
    const pm_road_params *p = x->p;
    uint32_t ss = p->shoulder > 0.0 ? pm__shoulder_strips(p, p->cross_segments) : 0;
    int r = pm__level_sections(x, base, p->max_error, p->max_segment, PM_ROAD_MAX_TURN_RADIANS,
                               p->cross_segments, ss, "/max_error");
    if (r < 0) return r;
    /* Nothing after the base level's asphalt reads its grid but the
     * overlap check (positions) and, on a terrain or where it folded, the
     * flattening and the folds' metadata, which the fused pass excludes
     * (no terrain, fold free): the grid and the asphalt in one pass where
     * they can, for a network's road (no metadata, overlaps the caller's)
     * as for a road request. */
    if (pm__road_grid_emit_fits(x, base)) return pm__emit_level(x, base, "", 0, true);
    return (r = pm__road_grid(x, base)) < 0 ? r : pm__emit_level(x, base, "", 0, false);
}

static int pm__generate(pm__ctx *x) {
    pm_arena *a = x->a;
    pm__level base;
    int r;
    if ((r = pm__terrain_budget(x)) < 0 || (r = pm__base_level(x, &base)) < 0) return r;
    if ((r = pm__base_meta(x, &base)) < 0) return r;
    if ((r = pm__terrain_stage(x, &base)) < 0) return r;
    pm_meta *props = pm_meta_arr(a), *lods = pm_meta_arr(a);
    if (!props || !lods) return PM_ERR_NOMEM;
    if ((r = pm__road_props(x, &base, props)) < 0) return r;
    if ((r = pm__lods(x, lods)) < 0) return r;
    pm_meta_set(a, x->scene->meta, "props", props);
    pm_meta_set(a, x->scene->meta, "lods", lods);
    return pm_meta_set(a, x->scene->meta, "warnings", x->warnings) < 0 ? PM_ERR_NOMEM : PM_OK;
}

static int pm__start(pm__ctx *x, pm_arena *a, const pm_road_params *p, pm_road_failure *fail) {
    assert(p->points && p->npoints >= (p->closed ? 3u : 2u));
    assert(p->width > 0.0 && p->shoulder >= 0.0 && p->cross_segments >= 1);
    assert(p->max_error > 0.0 && p->max_segment > 0.0 && p->uv_scale > 0.0);
    *x = (pm__ctx){.a = a, .p = p, .fail = fail, .budget = p->max_vertices ? p->max_vertices : UINT64_MAX};
    if (fail) memset(fail, 0, sizeof *fail);
    int r = pm_spline_init(a, &x->spline, p->points, p->npoints, p->closed, p->curve, p->alpha);
    if (r < 0) return r;
    x->scene = pm_scene_create(a);
    return x->scene ? PM_OK : PM_ERR_NOMEM;
}

static int pm__generate_with(pm_arena *a, const pm_road_params *p, pm_scene **out,
                             pm_road_failure *fail, bool plain) {
    pm__ctx x;
    int r = pm__start(&x, a, p, fail);
    if (r < 0) return r;
    x.plain = plain;
    if (!(x.warnings = pm_meta_arr(a))) return PM_ERR_NOMEM;
    if ((r = pm__generate(&x)) < 0) return r;
    *out = x.scene;
    return PM_OK;
}

int pm_road_generate(pm_arena *a, const pm_road_params *p, pm_scene **out,
                     pm_road_failure *fail) {
    return pm__generate_with(a, p, out, fail, false);
}

int pm__road_generate_plain(pm_arena *a, const pm_road_params *p, pm_scene **out,
                            pm_road_failure *fail) {
    return pm__generate_with(a, p, out, fail, true);
}

int pm_road_generate_base(pm_arena *a, const pm_road_params *p, pm_scene **out,
                          pm_road_base *base, pm_road_failure *fail) {
    pm__ctx x;
    pm__level L;
    int r = pm__start(&x, a, p, fail);
    x.no_meta = true;
    if (r < 0 || (r = pm__terrain_budget(&x)) < 0 || (r = pm__base_level(&x, &L)) < 0) return r;
    base->length = L.length;
    base->samples = (int64_t)L.n;
    *out = x.scene;
    return PM_OK;
}

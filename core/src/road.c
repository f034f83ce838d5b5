#include "pm/road.h"

#include <assert.h>
#include <math.h>
#include <meshoptimizer.h>
#include <stdio.h>
#include <string.h>

#include "pm/result.h"

#define PM__PI 3.14159265358979323846
#define PM__DEG (PM__PI / 180.0)

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

/* ---- one level of detail: sections, clamps, vertex grid ---- */

typedef struct pm__section {
    double t, s;            /* curve parameter, centre arc length */
    double c[3];            /* centre */
    double tan[3];          /* unit 3D tangent */
    double r[3];            /* sideways per nominal metre (bank, miter included) */
    double up[3];           /* unit section normal (banked) */
    double right[3];        /* unit banked right */
    double kappa;           /* signed plan curvature */
    double bank;            /* radians, + lowers the right edge */
    double clamp[2];        /* allowed nominal extent: [0] left, [1] right */
} pm__section;

typedef struct pm__level {
    size_t n;               /* sections */
    pm__section *sec;
    uint32_t ncol;
    double *col;            /* ncol nominal offsets, ascending, 0 included */
    uint32_t kl, kr;        /* carriageway edge columns */
    double *pos;            /* n * ncol * 3 */
    double *uv;             /* n * ncol * 2 */
    double edge_len[4];     /* left shoulder, left, right, right shoulder */
    double length;          /* centre polyline, 3D */
    double achieved;        /* measured chord error */
    uint64_t skipped;       /* degenerate triangles left out */
    bool closed;
    uint64_t triangles;     /* emitted */
} pm__level;

typedef struct pm__ctx {
    pm_arena *a;
    const pm_road_params *p;
    pm_spline spline;
    pm_road_failure *fail;
    uint64_t budget;        /* vertices still allowed; UINT64_MAX = no cap */
    const pm_heightfield *ground;   /* terrain under props (flattened or not) */
    pm_scene *scene;
    pm_meta *warnings;
} pm__ctx;

static double pm__dot(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void pm__cross(const double a[3], const double b[3], double o[3]) {
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    o[0] = x;
    o[1] = y;
    o[2] = z;
}

static double pm__normalize(double v[3]) {
    double l = sqrt(pm__dot(v, v));
    if (l > 0.0)
        for (int k = 0; k < 3; k++) v[k] /= l;
    return l;
}

/* Orientation of plan points seen from +Y: > 0 counter-clockwise. */
static double pm__orient(const double a[2], const double b[2], const double c[2]) {
    return (b[1] - a[1]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[1] - a[1]);
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

/* Plan tangent, miter factor for linear corners. */
static void pm__plan_tangent(const pm__ctx *x, const pm_curve_sample *smp, size_t n, size_t i,
                             double t[2], double *miter) {
    const pm_spline *s = &x->spline;
    double p[3], d1[3];
    pm_spline_eval(s, smp[i].t, p, d1, NULL);
    *miter = 1.0;
    size_t prev = i > 0 ? i - 1 : (s->closed ? n - 2 : 0);
    size_t next = i + 1 < n ? i + 1 : (s->closed ? 1 : i);
    double ti = smp[i].t;
    bool corner = s->kind == PM_CURVE_LINEAR && ti == floor(ti) &&
                  (s->closed || (ti > 0.0 && ti < (double)s->nseg));
    if (corner) {
        double in[2] = {smp[i].p[0] - smp[prev].p[0], smp[i].p[2] - smp[prev].p[2]};
        double out[2] = {smp[next].p[0] - smp[i].p[0], smp[next].p[2] - smp[i].p[2]};
        double li = hypot(in[0], in[1]), lo = hypot(out[0], out[1]);
        double b[2] = {in[0] / li + out[0] / lo, in[1] / li + out[1] / lo};
        double lb = hypot(b[0], b[1]);
        if (lb > 1e-6) {
            t[0] = b[0] / lb;
            t[1] = b[1] / lb;
            double c = (t[0] * out[0] + t[1] * out[1]) / lo;   /* cos(half turn) */
            *miter = c > 0.25 ? 1.0 / c : 4.0;
            return;
        }
    }
    double l = hypot(d1[0], d1[2]);
    if (l > 1e-12) {
        t[0] = d1[0] / l;
        t[1] = d1[2] / l;
        return;
    }
    /* A cusp (uniform Catmull-Rom can have them): follow the chord. */
    size_t a = i > 0 ? prev : i, b = i > 0 ? i : next;
    double c[2] = {smp[b].p[0] - smp[a].p[0], smp[b].p[2] - smp[a].p[2]};
    double lc = hypot(c[0], c[1]);
    t[0] = lc > 0.0 ? c[0] / lc : 1.0;
    t[1] = lc > 0.0 ? c[1] / lc : 0.0;
}

/* Slope dy / d(plan distance) at sample i. */
static double pm__slope(const pm__ctx *x, const pm_curve_sample *smp, size_t n, size_t i) {
    const pm_spline *s = &x->spline;
    if (!x->p->terrain) {
        double p[3], d1[3];
        pm_spline_eval(s, smp[i].t, p, d1, NULL);
        double l = hypot(d1[0], d1[2]);
        return l > 1e-12 ? d1[1] / l : 0.0;
    }
    size_t prev = i > 0 ? i - 1 : (s->closed ? n - 2 : 0);
    size_t next = i + 1 < n ? i + 1 : (s->closed ? 1 : i);
    double d = hypot(smp[i].p[0] - smp[prev].p[0], smp[i].p[2] - smp[prev].p[2]) +
               hypot(smp[next].p[0] - smp[i].p[0], smp[next].p[2] - smp[i].p[2]);
    return d > 0.0 ? (smp[next].p[1] - smp[prev].p[1]) / d : 0.0;
}

/* Bank before smoothing: curvature share plus interpolated per-point roll. */
static double pm__raw_bank(const pm__ctx *x, const pm__section *sc) {
    const pm_road_params *p = x->p;
    double b = 0.0;
    if (p->bank_max_degrees > 0.0 && sc->kappa != 0.0) {
        double share = fabs(sc->kappa) * p->bank_radius;
        if (share > 1.0) share = 1.0;
        b = -(sc->kappa > 0.0 ? 1.0 : -1.0) * p->bank_max_degrees * PM__DEG * share;
    }
    if (p->roll) {
        double f0 = floor(sc->t);
        size_t i = (size_t)f0;
        double u = sc->t - f0;
        if (i >= x->spline.nseg) { i = x->spline.nseg - 1; u = 1.0; }
        size_t j = (i + 1) % p->npoints;
        b += (p->roll[i] * (1.0 - u) + p->roll[j] * u) * PM__DEG;
    }
    return b;
}

/* Integral of the piecewise-linear bank from 0 to arc length s (periodic
 * for closed roads). pre[i] is the integral up to section i. */
static double pm__bank_integral(const pm__section *sc, const double *pre, size_t n, bool closed,
                                double s) {
    double L = sc[n - 1].s;
    double base = 0.0;
    if (closed && L > 0.0) {
        double k = floor(s / L);
        base = k * pre[n - 1];
        s -= k * L;
    }
    if (s <= 0.0) return base;
    if (s >= L) return base + pre[n - 1];
    size_t lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (sc[mid].s <= s) lo = mid; else hi = mid;
    }
    double ds = sc[hi].s - sc[lo].s, f = ds > 0.0 ? (s - sc[lo].s) / ds : 0.0;
    double bs = sc[lo].bank + f * (sc[hi].bank - sc[lo].bank);
    return base + pre[lo] + 0.5 * (sc[lo].bank + bs) * (s - sc[lo].s);
}

/* Averages the bank over the transition length, so curvature steps at
 * control points (Catmull-Rom is only C1) ramp in like superelevation. */
static int pm__smooth_bank(pm__ctx *x, pm__section *sc, size_t n) {
    const pm_road_params *p = x->p;
    double h = 0.5 * p->bank_transition, L = sc[n - 1].s;
    double lim = PM_ROAD_MAX_BANK_DEGREES * PM__DEG;
    if (h > 0.0 && L > 0.0) {
        double *pre = pm_arena_alloc(x->a, n * sizeof(double));
        double *out = pm_arena_alloc(x->a, n * sizeof(double));
        if (!pre || !out) return PM_ERR_NOMEM;
        pre[0] = 0.0;
        for (size_t i = 1; i < n; i++)
            pre[i] = pre[i - 1] + 0.5 * (sc[i - 1].bank + sc[i].bank) * (sc[i].s - sc[i - 1].s);
        bool closed = p->closed;
        for (size_t i = 0; i < n; i++) {
            double lo = sc[i].s - h, hi = sc[i].s + h;
            if (!closed) {
                if (lo < 0.0) lo = 0.0;
                if (hi > L) hi = L;
            }
            out[i] = hi > lo ? (pm__bank_integral(sc, pre, n, closed, hi) -
                                pm__bank_integral(sc, pre, n, closed, lo)) / (hi - lo)
                             : sc[i].bank;
        }
        for (size_t i = 0; i < n; i++) sc[i].bank = out[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (sc[i].bank > lim) sc[i].bank = lim;
        if (sc[i].bank < -lim) sc[i].bank = -lim;
    }
    return PM_OK;
}

/* Frame at one section: T from the plan tangent and slope, R = T x up with
 * the sign of the plan right, then the bank about T. */
static void pm__frame(const pm__ctx *x, pm__section *sc, const double t2[2], double slope,
                      double miter) {
    const pm_road_params *p = x->p;
    double T[3] = {t2[0], slope, t2[1]};
    pm__normalize(T);
    double up[3] = {0.0, 1.0, 0.0};
    if (p->terrain && p->up == PM_ROAD_UP_TERRAIN && p->conform == PM_ROAD_BANK)
        pm_heightfield_normal(p->terrain, sc->c[0], sc->c[2], up);
    double R[3];
    pm__cross(T, up, R);
    if (pm__normalize(R) < 1e-6) {
        double y[3] = {0.0, 1.0, 0.0};
        pm__cross(T, y, R);
        pm__normalize(R);
    }
    /* Consistent sign: R always points to the plan right of travel. */
    if (R[0] * -t2[1] + R[2] * t2[0] < 0.0)
        for (int k = 0; k < 3; k++) R[k] = -R[k];
    double U[3];
    pm__cross(R, T, U);
    pm__normalize(U);
    double cb = cos(sc->bank), sb = sin(sc->bank);
    for (int k = 0; k < 3; k++) {
        sc->tan[k] = T[k];
        sc->right[k] = R[k] * cb - U[k] * sb;
        sc->up[k] = U[k] * cb + R[k] * sb;
    }
    if (p->terrain && p->conform == PM_ROAD_DRAPE) {
        /* Draped sections are plan lines; heights come from the terrain. */
        sc->r[0] = -t2[1] * miter;
        sc->r[1] = 0.0;
        sc->r[2] = t2[0] * miter;
    } else {
        /* The miter widens the plan offset; the cross slope per metre of
         * plan offset stays, so corner edges meet their neighbours. */
        sc->r[0] = sc->right[0] * miter;
        sc->r[1] = sc->right[1];
        sc->r[2] = sc->right[2] * miter;
    }
}

static int pm__sections(pm__ctx *x, pm__level *L, const pm_curve_sample *smp, size_t n) {
    const pm_road_params *p = x->p;
    pm__section *sc = pm_arena_calloc(x->a, n, sizeof *sc);
    if (!sc) return PM_ERR_NOMEM;
    double *t2 = pm_arena_alloc(x->a, n * 4 * sizeof(double));
    if (!t2) return PM_ERR_NOMEM;
    double W = 0.5 * p->width + p->shoulder;
    for (size_t i = 0; i < n; i++) {
        sc[i].t = smp[i].t;
        memcpy(sc[i].c, smp[i].p, sizeof sc[i].c);
        if (i > 0) {
            double d[3] = {smp[i].p[0] - smp[i - 1].p[0], smp[i].p[1] - smp[i - 1].p[1],
                           smp[i].p[2] - smp[i - 1].p[2]};
            sc[i].s = sc[i - 1].s + sqrt(pm__dot(d, d));
        }
        sc[i].kappa = pm_spline_curvature(&x->spline, p->closed && i == n - 1 ? 0.0 : smp[i].t);
        pm__plan_tangent(x, smp, n, i, t2 + 4 * i, t2 + 4 * i + 2);
        t2[4 * i + 3] = pm__slope(x, smp, n, i);
        sc[i].bank = pm__raw_bank(x, &sc[i]);
        sc[i].clamp[0] = sc[i].clamp[1] = W;
    }
    if (p->closed) {   /* the closing section is the first one again */
        memcpy(t2 + 4 * (n - 1), t2, 4 * sizeof(double));
        sc[n - 1].kappa = sc[0].kappa;
        sc[n - 1].bank = sc[0].bank;
    }
    int r = pm__smooth_bank(x, sc, n);
    if (r < 0) return r;
    for (size_t i = 0; i < n; i++) pm__frame(x, &sc[i], t2 + 4 * i, t2[4 * i + 3], t2[4 * i + 2]);
    L->sec = sc;
    L->n = n;
    L->closed = p->closed;
    L->length = sc[n - 1].s;
    return PM_OK;
}

/* ---- fold clamping ---- */

/* Plan point of section sc at signed offset e. */
static void pm__plan_at(const pm__section *sc, double e, double o[2]) {
    o[0] = sc->c[0] + e * sc->r[0];
    o[1] = sc->c[2] + e * sc->r[2];
}

/* Whether the side band between sections a and b, with their clamps, is a
 * convex counter-clockwise polygon (or degenerate to a segment). */
static bool pm__band_ok(const pm__section *a, const pm__section *b, int side) {
    double sg = side ? 1.0 : -1.0, q[4][2];
    double A1[2], A2[2], B1[2], B2[2];
    pm__plan_at(a, 0.0, A1);
    pm__plan_at(b, 0.0, A2);
    pm__plan_at(a, sg * a->clamp[side], B1);
    pm__plan_at(b, sg * b->clamp[side], B2);
    const double *order[4];
    if (side) { order[0] = A1; order[1] = B1; order[2] = B2; order[3] = A2; }
    else { order[0] = B1; order[1] = A1; order[2] = A2; order[3] = B2; }
    int m = 0;
    for (int k = 0; k < 4; k++) {
        const double *v = order[k];
        if (m > 0 && v[0] == q[m - 1][0] && v[1] == q[m - 1][1]) continue;
        q[m][0] = v[0];
        q[m][1] = v[1];
        m++;
    }
    if (m > 1 && q[m - 1][0] == q[0][0] && q[m - 1][1] == q[0][1]) m--;
    if (m < 3) return true;
    for (int k = 0; k < m; k++)
        if (!(pm__orient(q[k], q[(k + 1) % m], q[(k + 2) % m]) > 0.0)) return false;
    return true;
}

/* Cuts the side back where sections a and b cross inside the road. */
static bool pm__clamp_pair(pm__section *a, pm__section *b, int side) {
    if (pm__band_ok(a, b, side)) return false;
    double sg = side ? 1.0 : -1.0;
    double ra[2] = {a->r[0], a->r[2]}, rb[2] = {b->r[0], b->r[2]};
    double d[2] = {b->c[0] - a->c[0], b->c[2] - a->c[2]};
    double det = -ra[0] * rb[1] + rb[0] * ra[1];
    if (det != 0.0) {
        double t = (-d[0] * rb[1] + rb[0] * d[1]) / det;
        double u = (ra[0] * d[1] - ra[1] * d[0]) / det;
        if (sg * t > 0.0 && sg * u > 0.0) {
            /* Just short of the crossing, so both points stay distinct. */
            const double keep = 1.0 - 1e-7;
            if (sg * t * keep < a->clamp[side]) a->clamp[side] = sg * t * keep;
            if (sg * u * keep < b->clamp[side]) b->clamp[side] = sg * u * keep;
        }
    }
    /* A band that is still not convex (a cusp, a sideways chord) shrinks
     * until it is, down to nothing. */
    for (int k = 0; k < 60 && !pm__band_ok(a, b, side); k++) {
        a->clamp[side] *= 0.5;
        b->clamp[side] *= 0.5;
    }
    if (!pm__band_ok(a, b, side)) a->clamp[side] = b->clamp[side] = 0.0;
    return true;
}

static void pm__clamp_folds(pm__ctx *x, pm__level *L) {
    pm__section *sc = L->sec;
    size_t n = L->n;
    for (int pass = 0; pass < 4; pass++) {
        bool changed = false;
        for (int side = 0; side < 2; side++)
            for (size_t i = 0; i + 1 < n; i++) changed |= pm__clamp_pair(&sc[i], &sc[i + 1], side);
        if (!x->p->closed) break;
        /* The closing section is the first: share the tighter clamp. */
        for (int side = 0; side < 2; side++) {
            double m = fmin(sc[0].clamp[side], sc[n - 1].clamp[side]);
            if (m != sc[0].clamp[side] || m != sc[n - 1].clamp[side]) changed = true;
            sc[0].clamp[side] = sc[n - 1].clamp[side] = m;
        }
        if (!changed) break;
    }
}

/* ---- vertex grid ---- */

static double pm__ground(const pm_road_params *p, double x, double z) {
    return pm_heightfield_height(p->terrain, x, z);
}

static void pm__vertex_at(const pm_road_params *p, const pm__section *sc, double d, double o[3]) {
    double e = d < 0.0 ? -fmin(-d, sc->clamp[0]) : fmin(d, sc->clamp[1]);
    if (p->terrain && p->conform == PM_ROAD_DRAPE) {
        o[0] = sc->c[0] + e * sc->r[0];
        o[2] = sc->c[2] + e * sc->r[2];
        o[1] = pm__ground(p, o[0], o[2]);
    } else {
        for (int k = 0; k < 3; k++) o[k] = sc->c[k] + e * sc->r[k];
    }
}

static double pm__dist3(const double *a, const double *b) {
    double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    return sqrt(pm__dot(d, d));
}

/* Whether column k of section sc is cut back onto the fold's collapse point. */
static bool pm__collapsed(const pm__level *L, const pm__section *sc, uint32_t k) {
    double d = L->col[k];
    return d < 0.0 ? -d >= sc->clamp[0] : (d > 0.0 && d >= sc->clamp[1]);
}

/* Copies the collapsed columns of section `from` onto section `to` (one side). */
static void pm__copy_collapse(pm__level *L, size_t from, size_t to, int side) {
    size_t nc = L->ncol;
    for (size_t k = 0; k < nc; k++)
        if ((L->col[k] > 0.0) == (side == 1) && L->col[k] != 0.0 && pm__collapsed(L, &L->sec[to], (uint32_t)k))
            memcpy(L->pos + 3 * (to * nc + k), L->pos + 3 * (from * nc + (side ? nc - 1 : 0)), 3 * sizeof(double));
}

/* Consecutive sections cut back to the same plan point (a fold's collapse
 * point, 1e-7 apart by construction) get the very same 3D point: with
 * banking their own heights there differ, which would leave a vertical
 * crack. Closed roads weld across the seam too. */
static void pm__weld_collapses(pm__level *L) {
    size_t n = L->n, nc = L->ncol;
    double W[2] = {-L->col[0], L->col[nc - 1]};
    for (int side = 0; side < 2; side++) {
        size_t ko = side ? nc - 1 : 0;
        for (size_t i = 1; i < n; i++) {
            const double *a = L->pos + 3 * ((i - 1) * nc + ko), *b = L->pos + 3 * (i * nc + ko);
            if (L->sec[i].clamp[side] < W[side] && L->sec[i - 1].clamp[side] < W[side] &&
                hypot(b[0] - a[0], b[2] - a[2]) < 1e-4)
                pm__copy_collapse(L, i - 1, i, side);
        }
        if (!L->closed) continue;
        /* The last section is the first: let the chain that reaches it
         * end on the first section's point. */
        pm__copy_collapse(L, 0, n - 1, side);
        for (size_t i = n - 1; i-- > 0;) {
            const double *a = L->pos + 3 * ((i + 1) * nc + ko), *b = L->pos + 3 * (i * nc + ko);
            if (!(L->sec[i].clamp[side] < W[side]) || hypot(b[0] - a[0], b[2] - a[2]) >= 1e-4) break;
            if (memcmp(a, b, 3 * sizeof(double)) == 0) break;
            pm__copy_collapse(L, i + 1, i, side);
        }
    }
}

/* Positions, then U along the edges that own their length, V across. */
static int pm__grid(pm__ctx *x, pm__level *L) {
    const pm_road_params *p = x->p;
    size_t n = L->n, nc = L->ncol;
    L->pos = pm_arena_alloc(x->a, n * nc * 3 * sizeof(double));
    L->uv = pm_arena_alloc(x->a, n * nc * 2 * sizeof(double));
    if (!L->pos || !L->uv) return PM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if (p->cancel && *p->cancel) return PM_ERR_CANCELLED;
        for (size_t k = 0; k < nc; k++) pm__vertex_at(p, &L->sec[i], L->col[k], L->pos + 3 * (i * nc + k));
    }
    pm__weld_collapses(L);
    /* Columns that own their length: outer shoulder edges and carriageway edges. */
    uint32_t own[4], nown = 0;
    if (L->kl > 0) own[nown++] = 0;
    own[nown++] = L->kl;
    own[nown++] = L->kr;
    if (L->kr + 1 < nc) own[nown++] = (uint32_t)nc - 1;
    for (uint32_t j = 0; j < nown; j++) {
        uint32_t k = own[j];
        double acc = 0.0;
        L->uv[2 * k] = 0.0;
        for (size_t i = 1; i < n; i++) {
            acc += pm__dist3(L->pos + 3 * ((i - 1) * nc + k), L->pos + 3 * (i * nc + k));
            L->uv[2 * (i * nc + k)] = acc * p->uv_scale;
        }
        int slot = k == 0 && L->kl > 0 ? 0 : (k == L->kl ? 1 : (k == L->kr ? 2 : 3));
        L->edge_len[slot] = acc;
    }
    if (L->kl == 0) L->edge_len[0] = L->edge_len[1];
    if (L->kr + 1 == nc) L->edge_len[3] = L->edge_len[2];
    for (size_t k = 0; k < nc; k++) {
        uint32_t ja = 0;
        while (ja + 1 < nown && own[ja + 1] <= k) ja++;
        uint32_t ka = own[ja], kb = ja + 1 < nown ? own[ja + 1] : ka;
        double f = kb > ka ? (L->col[k] - L->col[ka]) / (L->col[kb] - L->col[ka]) : 0.0;
        double v = (L->col[k] + 0.5 * p->width) / p->width;
        for (size_t i = 0; i < n; i++) {
            double *uv = L->uv + 2 * (i * nc + k);
            if (k != ka) uv[0] = L->uv[2 * (i * nc + ka)] * (1.0 - f) + L->uv[2 * (i * nc + kb)] * f;
            uv[1] = v;
        }
    }
    return PM_OK;
}

/* ---- primitives ---- */

/* Triangle abc of float positions faces up with a margin: its plan area
 * stays positive even when a consumer subtracts the coordinates in float
 * (error about one ulp of the coordinate per difference). Slivers below
 * the margin only come from collapsed folds and are left out. */
static double pm__maxabs(double m, double v) {
    v = v < 0.0 ? -v : v;
    return v > m ? v : m;
}

static bool pm__faces_up(const float *a, const float *b, const float *c) {
    double pa[2] = {a[0], a[2]}, pb[2] = {b[0], b[2]}, pc[2] = {c[0], c[2]};
    double o = pm__orient(pa, pb, pc);
    if (!(o > 0.0)) return false;
    double m = 1.0, e = 0.0;
    for (int k = 0; k < 2; k++) {
        m = pm__maxabs(pm__maxabs(pm__maxabs(m, pa[k]), pb[k]), pc[k]);
        e = pm__maxabs(pm__maxabs(pm__maxabs(e, pb[k] - pa[k]), pc[k] - pa[k]), pc[k] - pb[k]);
    }
    return o > 4.0 * 1.2e-7 * m * e;
}

/* Reorders triangles for the post-transform cache and vertices for fetch
 * locality, dropping unreferenced vertices. */
static int pm__optimize(pm_arena *a, pm_prim *pr) {
    if (pr->icount == 0) return PM_OK;
    uint32_t *idx = pm_arena_alloc(a, pr->icount * sizeof(uint32_t));
    uint32_t *remap = pm_arena_alloc(a, pr->vcount * sizeof(uint32_t));
    float *tmp = pm_arena_alloc(a, (size_t)pr->vcount * 3 * sizeof(float));
    if (!idx || !remap || !tmp) return PM_ERR_NOMEM;
    meshopt_optimizeVertexCache(idx, pr->indices, pr->icount, pr->vcount);
    size_t nv = meshopt_optimizeVertexFetchRemap(remap, idx, pr->icount, pr->vcount);
    meshopt_remapIndexBuffer(pr->indices, idx, pr->icount, remap);
    meshopt_remapVertexBuffer(tmp, pr->positions, pr->vcount, 3 * sizeof(float), remap);
    memcpy(pr->positions, tmp, nv * 3 * sizeof(float));
    meshopt_remapVertexBuffer(tmp, pr->normals, pr->vcount, 3 * sizeof(float), remap);
    memcpy(pr->normals, tmp, nv * 3 * sizeof(float));
    if (pr->uvs) {
        meshopt_remapVertexBuffer(tmp, pr->uvs, pr->vcount, 2 * sizeof(float), remap);
        memcpy(pr->uvs, tmp, nv * 2 * sizeof(float));
    }
    pr->vcount = (uint32_t)nv;
    return PM_OK;
}

static void pm__vertex_normal(const pm_road_params *p, const pm__section *sc, const double *pos,
                              float nf[3]) {
    double nd[3];
    if (p->terrain && p->conform == PM_ROAD_DRAPE) pm_heightfield_normal(p->terrain, pos[0], pos[2], nd);
    else memcpy(nd, sc->up, sizeof nd);
    for (int k = 0; k < 3; k++) nf[k] = (float)nd[k];
}

/* Column ranges of one primitive (the shoulder has one per side). */
typedef struct pm__range { uint32_t k0, k1; } pm__range;

/* Emits columns k0..k1 as vertices of pr. Collapsed columns share the
 * outermost column's vertex, so the mesh border always carries the edge's
 * own V and U (a painted edge line follows the real border). */
static int pm__emit_range(pm__ctx *x, pm__level *L, pm_prim *pr, pm__range rg, uint32_t *map) {
    const pm_road_params *p = x->p;
    size_t n = L->n, nc = L->ncol, w = rg.k1 - rg.k0 + 1;
    for (size_t i = 0; i < n; i++) {
        const pm__section *sc = &L->sec[i];
        for (uint32_t j = 0; j < w; j++) {
            uint32_t k = rg.k0 + j;
            uint32_t outer = L->col[k] < 0.0 ? rg.k0 : rg.k1;
            if (k != outer && pm__collapsed(L, sc, k) && pm__collapsed(L, sc, outer)) {
                map[i * w + j] = UINT32_MAX;   /* resolved below */
                continue;
            }
            const double *pd = L->pos + 3 * (i * nc + k), *ud = L->uv + 2 * (i * nc + k);
            float pf[3] = {(float)pd[0], (float)pd[1], (float)pd[2]}, nf[3];
            float uf[2] = {(float)ud[0], (float)ud[1]};
            pm__vertex_normal(p, sc, pd, nf);
            int64_t v = pm_prim_add_vertex(x->scene, pr, pf, nf, uf, NULL);
            if (v < 0) return PM_ERR_NOMEM;
            map[i * w + j] = (uint32_t)v;
        }
        for (uint32_t j = 0; j < w; j++)
            if (map[i * w + j] == UINT32_MAX)
                map[i * w + j] = map[i * w + (L->col[rg.k0 + j] < 0.0 ? 0 : w - 1)];
    }
    for (size_t i = 0; i + 1 < n; i++) {
        for (uint32_t j = 0; j + 1 < w; j++) {
            uint32_t v1 = map[i * w + j], v2 = map[i * w + j + 1];
            uint32_t v4 = map[(i + 1) * w + j], v3 = map[(i + 1) * w + j + 1];
            uint32_t tri[2][3] = {{v1, v2, v4}, {v2, v3, v4}};
            for (int t = 0; t < 2; t++) {
                const uint32_t *q = tri[t];
                const float *P = pr->positions;
                if (q[0] == q[1] || q[1] == q[2] || q[0] == q[2] ||
                    !pm__faces_up(P + 3 * q[0], P + 3 * q[1], P + 3 * q[2])) {
                    L->skipped++;
                    continue;
                }
                if (pm_prim_add_tri(x->scene, pr, q[0], q[1], q[2]) < 0) return PM_ERR_NOMEM;
                L->triangles++;
            }
        }
    }
    return PM_OK;
}

static int pm__emit(pm__ctx *x, pm__level *L, const char *name, const char *material,
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
    for (int j = 0; j < nrg; j++) {
        int r = pm__emit_range(x, L, pr, rg[j], map);
        if (r < 0) return r;
    }
    return pm__optimize(x->a, pr);
}

/* Vertices one section adds to the scene (asphalt + shoulder columns). */
static uint64_t pm__vertices_per_section(const pm__level *L) {
    uint64_t v = L->kr - L->kl + 1;
    if (L->kl > 0) v += 2ull * (L->kl + 1);
    return v;
}

static int pm__limit(pm__ctx *x, const char *field, uint64_t needed) {
    if (x->fail) {
        x->fail->field = field;
        x->fail->needed = needed;
    }
    return PM_ERR_LIMIT;
}

/* Samples, frames, clamps and the vertex grid of one level of detail. */
static int pm__level_build(pm__ctx *x, pm__level *L, double max_error, double max_segment,
                           double max_turn, uint32_t cs, uint32_t ss, const char *field) {
    const pm_road_params *p = x->p;
    memset(L, 0, sizeof *L);
    int r = pm__columns(x, L, cs, ss);
    if (r < 0) return r;
    uint64_t vps = pm__vertices_per_section(L);
    uint64_t cap = x->budget == UINT64_MAX ? UINT32_MAX : x->budget / vps;
    if (cap > UINT32_MAX / 8) cap = UINT32_MAX / 8;
    if (cap < 2) return pm__limit(x, field, 2 * vps);
    pm_sample_opts o = {.max_error = max_error, .max_segment = max_segment,
                        .max_turn = max_turn, .max_samples = (uint32_t)cap,
                        .cancel = p->cancel};
    if (p->terrain) {
        o.height = pm_heightfield_height;
        o.height_ctx = p->terrain;
    }
    pm_curve_sample *smp;
    size_t n;
    r = pm_spline_sample(x->a, &x->spline, &o, &smp, &n);
    if (r == PM_ERR_LIMIT) return pm__limit(x, field, (cap + 1) * vps);
    if (r < 0) return r;
    if (x->budget != UINT64_MAX) x->budget -= n * vps;
    L->achieved = pm_spline_sample_error(&x->spline, &o, smp, n);
    if ((r = pm__sections(x, L, smp, n)) < 0) return r;
    pm__clamp_folds(x, L);
    return pm__grid(x, L);
}

static int pm__emit_level(pm__ctx *x, pm__level *L, const char *suffix) {
    char name[48];
    pm__range road = {L->kl, L->kr};
    snprintf(name, sizeof name, "asphalt%s", suffix);
    int r = pm__emit(x, L, name, "asphalt", &road, 1);
    if (r < 0 || L->kl == 0) return r;
    pm__range sh[2] = {{0, L->kl}, {L->kr, L->ncol - 1}};
    snprintf(name, sizeof name, "shoulder%s", suffix);
    return pm__emit(x, L, name, "shoulder", sh, 2);
}

/* ---- terrain flattening ---- */

static int pm__flatten(pm__ctx *x, const pm__level *L, pm_heightfield *out) {
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
                if (!(pm__orient(pa, pb, pc) > 0.0)) continue;
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
    pm_flatten_shape shape = {.positions = L->pos, .indices = idx, .ntriangles = nt,
                              .lines = (const double *const *)lines, .line_len = lens, .nlines = nl};
    return pm_heightfield_flatten(x->a, p->terrain, &shape, &p->flatten_opts, out, p->cancel);
}

/* ---- props ---- */

/* Section interval and fraction at centre arc length s. */
static size_t pm__locate_s(const pm__level *L, double s, double *f) {
    size_t lo = 0, hi = L->n - 1;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (L->sec[mid].s <= s) lo = mid; else hi = mid;
    }
    double ds = L->sec[hi].s - L->sec[lo].s;
    *f = ds > 0.0 ? (s - L->sec[lo].s) / ds : 0.0;
    if (*f < 0.0) *f = 0.0;
    if (*f > 1.0) *f = 1.0;
    return lo;
}

static void pm__lerp3(const double *a, const double *b, double f, double o[3]) {
    for (int k = 0; k < 3; k++) o[k] = a[k] + f * (b[k] - a[k]);
}

/* Unit quaternion (x, y, z, w) of the rotation whose columns are X, Y, Z. */
static void pm__quat(const double X[3], const double Y[3], const double Z[3], float q[4]) {
    double m00 = X[0], m10 = X[1], m20 = X[2], m01 = Y[0], m11 = Y[1], m21 = Y[2];
    double m02 = Z[0], m12 = Z[1], m22 = Z[2], tr = m00 + m11 + m22, v[4];
    if (tr > 0.0) {
        double s = sqrt(tr + 1.0) * 2.0;
        v[3] = 0.25 * s; v[0] = (m21 - m12) / s; v[1] = (m02 - m20) / s; v[2] = (m10 - m01) / s;
    } else if (m00 > m11 && m00 > m22) {
        double s = sqrt(1.0 + m00 - m11 - m22) * 2.0;
        v[3] = (m21 - m12) / s; v[0] = 0.25 * s; v[1] = (m01 + m10) / s; v[2] = (m02 + m20) / s;
    } else if (m11 > m22) {
        double s = sqrt(1.0 + m11 - m00 - m22) * 2.0;
        v[3] = (m02 - m20) / s; v[0] = (m01 + m10) / s; v[1] = 0.25 * s; v[2] = (m12 + m21) / s;
    } else {
        double s = sqrt(1.0 + m22 - m00 - m11) * 2.0;
        v[3] = (m10 - m01) / s; v[0] = (m02 + m20) / s; v[1] = (m12 + m21) / s; v[2] = 0.25 * s;
    }
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
    if (v[3] < 0.0) l = -l;   /* one canonical sign: w >= 0 */
    for (int k = 0; k < 4; k++) q[k] = (float)(v[k] / l);
}

/* Places one prop at arc length s on side sg (-1 left, +1 right). Returns
 * 1 when placed, 0 when skipped (inside a collapsed fold), < 0 on error. */
static int pm__place(pm__ctx *x, const pm__level *L, const pm_road_prop *rp, uint32_t set, double s,
                     double sg) {
    const pm_road_params *p = x->p;
    double f;
    size_t i = pm__locate_s(L, s, &f);
    const pm__section *a = &L->sec[i], *b = &L->sec[i + 1 < L->n ? i + 1 : i];
    int side = sg > 0.0;
    double W = 0.5 * p->width + p->shoulder;
    double clamp = fmin(a->clamp[side], b->clamp[side]);
    if (clamp < W * (1.0 - 1e-9) && rp->offset > clamp) return 0;
    /* Beyond the centre of curvature on the inner side, a line of props
     * would fold back on itself like the road edge would. */
    double kappa = a->kappa + f * (b->kappa - a->kappa);
    if ((kappa > 0.0) == (side == 0) && fabs(kappa) * rp->offset >= 1.0) return 0;
    double c[3], r[3], T[3], U[3], pos[3];
    pm__lerp3(a->c, b->c, f, c);
    pm__lerp3(a->r, b->r, f, r);
    pm__lerp3(a->tan, b->tan, f, T);
    pm__lerp3(a->up, b->up, f, U);
    for (int k = 0; k < 3; k++) pos[k] = c[k] + sg * rp->offset * r[k];
    bool on_road = rp->offset <= W;
    if (p->terrain && (p->conform == PM_ROAD_DRAPE || !on_road))
        pos[1] = pm_heightfield_height(on_road ? p->terrain : x->ground, pos[0], pos[2]);
    if (rp->align == PM_ROAD_ALIGN_TERRAIN && p->terrain)
        pm_heightfield_normal(x->ground, pos[0], pos[2], U);
    pm__normalize(U);
    double d = pm__dot(T, U);
    for (int k = 0; k < 3; k++) T[k] -= d * U[k];
    pm__normalize(T);
    double R[3];
    pm__cross(T, U, R);
    float t[3] = {(float)pos[0], (float)pos[1], (float)pos[2]}, q[4];
    const float one[3] = {1.0f, 1.0f, 1.0f};
    pm__quat(T, U, R, q);
    return pm_props_add(x->scene, &x->scene->props[set], t, q, one) < 0 ? PM_ERR_NOMEM : 1;
}

static uint64_t pm__prop_count(const pm__level *L, const pm_road_prop *rp, bool closed) {
    double k = floor(L->length / rp->spacing + 1e-9);
    if (closed && k * rp->spacing >= L->length - 1e-9) k -= 1.0;
    if (k < 0.0) k = 0.0;
    uint64_t per = k > 1e15 ? (uint64_t)1e15 : (uint64_t)k + 1;
    return per * (rp->side == PM_ROAD_SIDE_BOTH ? 2u : 1u);
}

static int pm__props(pm__ctx *x, const pm__level *L, pm_meta *out) {
    const pm_road_params *p = x->p;
    pm_arena *a = x->a;
    uint64_t total = 0;
    for (size_t j = 0; j < p->nprops; j++) {
        total += pm__prop_count(L, &p->props[j], p->closed);
        if (p->max_vertices && total > p->max_vertices) {
            char field[48];
            snprintf(field, sizeof field, "/props/%zu/spacing", j);
            const char *f = pm_arena_strdup(a, field);
            return f ? pm__limit(x, f, total) : PM_ERR_NOMEM;
        }
    }
    for (size_t j = 0; j < p->nprops; j++) {
        const pm_road_prop *rp = &p->props[j];
        uint32_t set = UINT32_MAX;
        for (uint32_t k = 0; k < x->scene->nprops; k++)
            if (strcmp(x->scene->props[k].name, rp->name) == 0) set = k;
        if (set == UINT32_MAX) {
            if (!pm_scene_add_props(x->scene, rp->name)) return PM_ERR_NOMEM;
            set = x->scene->nprops - 1;
        }
        uint64_t per = pm__prop_count(L, rp, p->closed) / (rp->side == PM_ROAD_SIDE_BOTH ? 2u : 1u);
        int64_t placed = 0, skipped = 0;
        for (uint64_t k = 0; k < per; k++) {
            if (p->cancel && (k & 255) == 0 && *p->cancel) return PM_ERR_CANCELLED;
            double s = (double)k * rp->spacing;
            for (int sd = 0; sd < 2; sd++) {
                if (!(rp->side & (sd ? PM_ROAD_SIDE_RIGHT : PM_ROAD_SIDE_LEFT))) continue;
                int r = pm__place(x, L, rp, set, s, sd ? 1.0 : -1.0);
                if (r < 0) return r;
                if (r) placed++; else skipped++;
            }
        }
        pm_meta *m = pm_meta_obj(a);
        pm_meta_set(a, m, "name", pm_meta_str(a, rp->name));
        pm_meta_set(a, m, "count", pm_meta_int(a, placed));
        pm_meta_set(a, m, "skipped_in_folds", pm_meta_int(a, skipped));
        if (pm_meta_push(out, m) < 0) return PM_ERR_NOMEM;
    }
    return PM_OK;
}

/* ---- metadata ---- */

static int pm__warn(pm__ctx *x, const char *fmt, double a, double b, double c) {
    char buf[200];
    snprintf(buf, sizeof buf, fmt, a, b, c);
    return pm_meta_push(x->warnings, pm_meta_str(x->a, buf));
}

/* Runs of sections whose side is cut back: where the road folded. */
static int pm__folds(pm__ctx *x, const pm__level *L, pm_meta *arr) {
    const pm_road_params *p = x->p;
    pm_arena *a = x->a;
    double hw = 0.5 * p->width, W = hw + p->shoulder;
    for (int side = 0; side < 2; side++) {
        double sg = side ? 1.0 : -1.0;
        for (size_t i = 0; i < L->n;) {
            if (!(L->sec[i].clamp[side] < W * (1.0 - 1e-9))) { i++; continue; }
            size_t j = i, m = i;
            double rmin = INFINITY;
            while (j + 1 < L->n && L->sec[j + 1].clamp[side] < W * (1.0 - 1e-9)) j++;
            for (size_t k = i; k <= j; k++) {
                if (L->sec[k].clamp[side] < L->sec[m].clamp[side]) m = k;
                if (L->sec[k].kappa != 0.0) rmin = fmin(rmin, 1.0 / fabs(L->sec[k].kappa));
            }
            if (p->curve == PM_CURVE_LINEAR) rmin = 0.0;   /* a corner */
            double at[3];
            pm__vertex_at(p, &L->sec[m], sg * W, at);
            pm_meta *f = pm_meta_obj(a);
            pm_meta_set(a, f, "side", pm_meta_str(a, side ? "right" : "left"));
            pm_meta_set(a, f, "from", pm_meta_num(a, L->sec[i].s));
            pm_meta_set(a, f, "to", pm_meta_num(a, L->sec[j].s));
            pm_meta_set(a, f, "min_radius", isfinite(rmin) ? pm_meta_num(a, rmin) : pm_meta_null(a));
            pm_meta_set(a, f, "carriageway", pm_meta_bool(a, L->sec[m].clamp[side] < hw));
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

static int pm__base_meta(pm__ctx *x, const pm__level *L) {
    const pm_road_params *p = x->p;
    pm_arena *a = x->a;
    pm_meta *m = x->scene->meta;
    double rmin = INFINITY, bmax = 0.0;
    for (size_t i = 0; i < L->n; i++) {
        if (L->sec[i].kappa != 0.0) rmin = fmin(rmin, 1.0 / fabs(L->sec[i].kappa));
        bmax = fmax(bmax, fabs(L->sec[i].bank));
    }
    pm_meta_set(a, m, "length", pm_meta_num(a, L->length));
    pm_meta_set(a, m, "samples", pm_meta_int(a, (int64_t)L->n));
    pm_meta_set(a, m, "max_chord_error", pm_meta_num(a, L->achieved));
    pm_meta_set(a, m, "edges", pm__edges_meta(a, L));
    pm_meta_set(a, m, "min_radius", isfinite(rmin) ? pm_meta_num(a, rmin) : pm_meta_null(a));
    pm_meta_set(a, m, "max_bank_degrees", pm_meta_num(a, bmax / PM__DEG));
    pm_meta_set(a, m, "triangles", pm_meta_int(a, (int64_t)L->triangles));
    pm_meta_set(a, m, "triangles_collapsed", pm_meta_int(a, (int64_t)L->skipped));
    pm_meta *folds = pm_meta_arr(a);
    if (!folds || pm__folds(x, L, folds) < 0) return PM_ERR_NOMEM;
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
        if ((r = pm__emit_level(x, &L, suffix)) < 0) return r;
        snprintf(name, sizeof name, "asphalt%s", suffix);
        if (pm_meta_push(arr, pm__lod_meta(x->a, (uint32_t)(l + 1), name, err, seg, &L)) < 0)
            return PM_ERR_NOMEM;
    }
    return PM_OK;
}

static int pm__terrain_stage(pm__ctx *x, const pm__level *L) {
    const pm_road_params *p = x->p;
    x->ground = p->terrain;
    if (!p->terrain) return PM_OK;
    if (p->flatten) {
        pm_heightfield *flat = pm_arena_alloc(x->a, sizeof *flat);
        if (!flat) return PM_ERR_NOMEM;
        int r = pm__flatten(x, L, flat);
        if (r < 0) return r;
        x->ground = flat;
    }
    if (p->terrain_mesh) {
        long r = pm_heightfield_to_prim(x->scene, x->ground, "terrain", p->cancel);
        if (r < 0) return (int)r;
    }
    pm_meta_set(x->a, x->scene->meta, "terrain", pm__terrain_meta(x->a, x->ground, p->flatten));
    return PM_OK;
}

static int pm__generate(pm__ctx *x) {
    const pm_road_params *p = x->p;
    pm_arena *a = x->a;
    if (p->terrain && p->terrain_mesh) {
        uint64_t tv = (uint64_t)p->terrain->cols * p->terrain->rows;
        if (tv > x->budget) return pm__limit(x, "/terrain", tv);
        if (x->budget != UINT64_MAX) x->budget -= tv;
    }
    pm__level base;
    uint32_t ss = p->shoulder > 0.0 ? pm__shoulder_strips(p, p->cross_segments) : 0;
    int r = pm__level_build(x, &base, p->max_error, p->max_segment, PM_ROAD_MAX_TURN_RADIANS,
                            p->cross_segments, ss, "/max_error");
    if (r < 0 || (r = pm__emit_level(x, &base, "")) < 0) return r;
    if ((r = pm__base_meta(x, &base)) < 0) return r;
    if ((r = pm__terrain_stage(x, &base)) < 0) return r;
    pm_meta *props = pm_meta_arr(a), *lods = pm_meta_arr(a);
    if (!props || !lods) return PM_ERR_NOMEM;
    if ((r = pm__props(x, &base, props)) < 0) return r;
    if ((r = pm__lods(x, lods)) < 0) return r;
    pm_meta_set(a, x->scene->meta, "props", props);
    pm_meta_set(a, x->scene->meta, "lods", lods);
    return pm_meta_set(a, x->scene->meta, "warnings", x->warnings) < 0 ? PM_ERR_NOMEM : PM_OK;
}

int pm_road_generate(pm_arena *a, const pm_road_params *p, pm_scene **out,
                     pm_road_failure *fail) {
    assert(p->points && p->npoints >= (p->closed ? 3u : 2u));
    assert(p->width > 0.0 && p->shoulder >= 0.0 && p->cross_segments >= 1);
    assert(p->max_error > 0.0 && p->max_segment > 0.0 && p->uv_scale > 0.0);
    pm__ctx x = {.a = a, .p = p, .fail = fail,
                 .budget = p->max_vertices ? p->max_vertices : UINT64_MAX};
    if (fail) memset(fail, 0, sizeof *fail);
    int r = pm_spline_init(a, &x.spline, p->points, p->npoints, p->closed, p->curve, p->alpha);
    if (r < 0) return r;
    x.scene = pm_scene_create(a);
    x.warnings = pm_meta_arr(a);
    if (!x.scene || !x.warnings) return PM_ERR_NOMEM;
    r = pm__generate(&x);
    if (r < 0) return r;
    *out = x.scene;
    return PM_OK;
}

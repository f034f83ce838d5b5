/* The adaptive sampler of core/geom/spline.c as it was before its sibling
 * chords were evaluated in lanes (main e6cb86e), kept as the scalar
 * reference the lane sampler must match bit for bit
 * (tests/core/test_spline_sampler.c). Only renamed (pm__ -> ref__), and
 * with one later change: the chord bound's peak in the form that does not
 * cancel (road 1.6.0, docs/road.md), as the lane code has it. At the end,
 * the curve set-up as it was before its quotients were carried from
 * segment to segment (main f0c3831), the reference for pm_spline_init. */
#include "pm_test_spline_ref.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "geom/vec.h"
#include "scene/result.h"

#define REF__SPLINE_MAX_DEPTH 30
#define REF__SPLINE_PROBES 7
#define REF__SPLINE_FINE_PROBES 15

/* pm_spline_eval's point at local u of segment c, then the height override. */
static inline void ref__point_at(const double (*c)[3], const pm_sample_opts *o, double u, double p[3]) {
    for (int k = 0; k < 3; k++) p[k] = c[0][k] + u * (c[1][k] + u * (c[2][k] + u * c[3][k]));
    if (o && o->height) p[1] = o->height(o->height_ctx, p[0], p[2]);
}

/* A chord a -> b with what every probe against it reuses: its vector and
 * length, and the segment seg its start lies in (probes strictly inside
 * it skip ref__locate: there floor(t) is seg, so u = t - seg as there). */
typedef struct ref__chord {
    const double *a;
    double ab[3], l2;
    uint32_t seg;
    double seg0, seg1;
} ref__chord;

static void ref__chord_init(ref__chord *c, const double a[3], const double b[3]) {
    c->a = a;
    c->l2 = 0.0;
    for (int k = 0; k < 3; k++) {
        c->ab[k] = b[k] - a[k];
        c->l2 += c->ab[k] * c->ab[k];
    }
}

static double ref__chord_distance(const ref__chord *c, const double p[3]) {
    double ap[3], dot = 0.0;
    for (int k = 0; k < 3; k++) {
        ap[k] = p[k] - c->a[k];
        dot += c->ab[k] * ap[k];
    }
    double f = c->l2 > 0.0 ? dot / c->l2 : 0.0;
    if (f < 0.0) f = 0.0;
    if (f > 1.0) f = 1.0;
    double d2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double e = ap[k] - f * c->ab[k];
        d2 += e * e;
    }
    return sqrt(d2);
}


static void ref__chord_segment(const pm_spline *s, double t0, ref__chord *c) {
    double f = floor(t0);
    c->seg = t0 <= 0.0 ? 0 : (f >= (double)s->nseg ? s->nseg - 1 : (uint32_t)f);
    c->seg0 = (double)c->seg;
    c->seg1 = c->seg0 + 1.0;
}

static double ref__probe(const pm_spline *s, const pm_sample_opts *o, double t, const ref__chord *c) {
    double p[3];
    if (t > c->seg0 && t < c->seg1) ref__point_at(s->coef[c->seg], o, t - c->seg0, p);
    else pm_spline_point(s, o, t, p);
    return ref__chord_distance(c, p);
}

/* Largest distance from the curve over (t0, t1) to the chord, at probes
 * evenly spaced in t. With refine, the best probe's neighbourhood is then
 * searched (golden section), so a peak between probes is found too. A
 * probe farther than stop ends the search at once (the chord will be
 * split, so the exact figure is not needed): the result is then only
 * known to exceed stop. With memo (7 probes) each probe's distance is
 * kept; with memo (15 probes) every other one is read back from a full
 * 7-probe pass: (t1 - t0) / 16 * 2k is (t1 - t0) / 8 * k bit for bit. */
static double ref__chord_error(const pm_spline *s, const pm_sample_opts *o, double t0, double t1,
                              const double a[3], const double b[3], uint32_t probes, bool refine,
                              double stop, double *memo) {
    ref__chord c;
    ref__chord_init(&c, a, b);
    ref__chord_segment(s, t0, &c);
    double worst = 0.0, h = (t1 - t0) / (double)(probes + 1), tbest = t0;
    bool reuse = memo && probes == REF__SPLINE_FINE_PROBES;
    for (uint32_t k = 1; k <= probes; k++) {
        double t = t0 + h * (double)k;
        double d = reuse && k % 2 == 0 ? memo[k / 2 - 1] : ref__probe(s, o, t, &c);
        if (memo && !reuse) memo[k - 1] = d;
        if (d > worst) { worst = d; tbest = t; }
        if (d > stop) return worst;
    }
    if (!refine || worst == 0.0) return worst;
    const double g = 0.6180339887498949;
    double lo = tbest - h, hi = tbest + h;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = ref__probe(s, o, x1, &c), f2 = ref__probe(s, o, x2, &c);
    for (int it = 0; it < 16; it++) {
        if (f1 > f2) { hi = x2; x2 = x1; f2 = f1; x1 = hi - g * (hi - lo); f1 = ref__probe(s, o, x1, &c); }
        else { lo = x1; x1 = x2; f1 = f2; x2 = lo + g * (hi - lo); f2 = ref__probe(s, o, x2, &c); }
    }
    return fmax(worst, fmax(f1, f2));
}

/* What ref__drape_bound needs of the sampler: the curve, the options and
 * the error past which the exact figure is not needed. */
typedef struct ref__sampler_opts_view {
    const pm_spline *s;
    const pm_sample_opts *o;
    double stop;
    uint32_t seg;   /* the segment holding the chord */
} ref__sampler_opts_view;

/* Largest 3D distance from the cubic over (t0, t1) (one segment, no height
 * override) to its chord a -> b, in closed form. Over v in [0, 1] the
 * curve minus a is q(v) = q1 v + q2 v^2 + q3 v^3; its part across the
 * chord vanishes at both ends, so it is v (1 - v) (A + B v), and
 * |A + B v| <= (1 - v) |A| + v |A + B|: the cubic bound g below is exact
 * for a plane curve without an inflection inside the chord, an upper bound
 * otherwise. Distance to the chord's line is distance to the chord while
 * the projection along it runs monotonically from a to b; false (probe
 * instead) when it does not. With plan, the same for the plan curve and
 * chord (y dropped: a draped curve's plan part). */
static bool ref__chord_bound(const pm_spline *s, uint32_t seg, double t0, double t1, const double a[3],
                            const double b[3], bool plan, double *e) {
    const double(*c)[3] = s->coef[seg];
    double u = t0 - (double)seg, h = t1 - t0;
    double q[3][3], ab[3], l2 = 0.0;
    for (int k = 0; k < 3; k++) {
        q[0][k] = h * (c[1][k] + u * (2.0 * c[2][k] + u * 3.0 * c[3][k]));
        q[1][k] = h * h * (c[2][k] + u * 3.0 * c[3][k]);
        q[2][k] = h * h * h * c[3][k];
        ab[k] = b[k] - a[k];
    }
    if (plan) q[0][1] = q[1][1] = q[2][1] = ab[1] = 0.0;   /* the plan curve and chord */
    for (int k = 0; k < 3; k++) l2 += ab[k] * ab[k];
    if (!(l2 > 0.0)) return false;
    double sp[3];   /* q_k . ab / |ab|^2: the projection's coefficients */
    for (int j = 0; j < 3; j++) sp[j] = (q[j][0] * ab[0] + q[j][1] * ab[1] + q[j][2] * ab[2]) / l2;
    /* Its derivative sp0 + 2 sp1 v + 3 sp2 v^2 must not go negative. */
    if (sp[0] < 0.0 || sp[0] + 2.0 * sp[1] + 3.0 * sp[2] < 0.0) return false;
    if (sp[2] != 0.0) {
        double v = -sp[1] / (3.0 * sp[2]);
        if (v > 0.0 && v < 1.0 && sp[0] - sp[1] * sp[1] / (3.0 * sp[2]) < 0.0) return false;
    }
    double A2 = 0.0, AB2 = 0.0;   /* |A|^2, |A + B|^2 with A = w1, A + B = -w2 - 2 w3 */
    for (int k = 0; k < 3; k++) {
        double w1 = q[0][k] - sp[0] * ab[k], w2 = q[1][k] - sp[1] * ab[k], w3 = q[2][k] - sp[2] * ab[k];
        double apb = -w2 - 2.0 * w3;
        A2 += w1 * w1;
        AB2 += apb * apb;
    }
    double ga = sqrt(A2), d = sqrt(AB2) - ga;
    /* g(v) = ga v + (d - ga) v^2 - d v^3; g' = ga + 2 (d - ga) v - 3 d v^2
     * is ga >= 0 at 0 and -(ga + d) <= 0 at 1: its one root in [0, 1]
     * holds the maximum, r = (-qb - sq) / (2 qa) = 2 ga / (sq - qb), each
     * form where its terms add (session 9: the first alone cancelled for d
     * within a few ulp of 0, a bound of 0 where the peak is ga / 4). */
    double qa = -3.0 * d, qb = 2.0 * (d - ga), disc = qb * qb + 12.0 * d * ga;
    /* fmax / fmin as maxsd / minsd (what glibc's return for these
     * arguments, NaN included), without a call. */
    double sq = sqrt(disc > 0.0 ? disc : 0.0);
    double v = qb > 0.0 ? (-qb - sq) / (2.0 * qa) : (2.0 * ga) / (sq - qb);
    v = v > 0.0 ? v : 0.0;
    v = v < 1.0 ? v : 1.0;
    double worst = v * (1.0 - v) * (ga + d * v);
    *e = worst;
    return true;
}

/* A draped chord's error bound (pm_sample_opts.height_bound): the plan
 * curve P(v) lies within dp of the plan chord, projecting onto it at s(v)
 * running monotonically over [0, 1] (ref__chord_bound in plan), so the
 * chord's point at s(v) is at most sqrt(dp^2 + dv^2) from the draped
 * curve's point, dv bounding |height(P(v)) - chord height at s(v)|.
 * False: probe instead. */
static bool ref__drape_bound(const ref__sampler_opts_view *v, double t0, double t1, const double a[3],
                            const double b[3], double *e) {
    double dp;
    if (!v->o->height_bound) return false;
    if (!ref__chord_bound(v->s, v->seg, t0, t1, a, b, true, &dp)) {
        /* No bound for this chord (its plan projection turns back): its
         * halves get one, so split it; at the depth limit, probe it. */
        if (isinf(v->stop)) return false;
        *e = INFINITY;
        return true;
    }
    double stop = v->stop, s2 = stop * stop - dp * dp;
    double dv = v->o->height_bound(v->o->height_ctx, a, b, dp, s2 > 0.0 ? sqrt(s2) : 0.0);
    /* A few ulps of the coordinates for the rounding of both parts. */
    *e = sqrt(dp * dp + dv * dv) * (1.0 + 1e-12) + 1e-12;
    return true;
}

/* First derivative inside segment seg at local u (so u = 1 is the end of
 * seg, not the start of the next one: linear corners are not turns). */
static void ref__d1_in(const pm_spline *s, uint32_t seg, double u, double d1[3]) {
    const double(*c)[3] = s->coef[seg];
    for (int k = 0; k < 3; k++) d1[k] = c[1][k] + u * (2.0 * c[2][k] + u * 3.0 * c[3][k]);
}

typedef PM_VEC(pm_curve_sample) ref__sample_vec;

typedef struct ref__sampler {
    pm_arena *a;
    const pm_spline *s;
    const pm_sample_opts *o;
    ref__sample_vec v;
    double cos_turn;        /* cos(o->max_turn), once */
    /* The longest chord: max_segment and 1e-12 of it for rounding, so that
     * 100 m at 5 m is 20 pieces (one measured 5 + 7e-15 m would be cut). */
    double max_len;
    uint32_t seg;           /* the segment being subdivided: floor(t) of every t inside it */
    double err;             /* error of the last accepted chord: its end is pushed next */
    double len;             /* and its length */
    bool exact;
    /* The derivative ref__turns_too_much found at the end of the last chord
     * it looked at (in segment seg): the next accepted chord starts there. */
    bool d1_ok;
    double d1_t, d1_at[3];
} ref__sampler;

/* Whether the plan tangent turns by more than max_turn over [t0, t1] (in
 * segment sm->seg); a vanishing plan tangent (a cusp) counts as turning. */
static bool ref__turns_too_much(ref__sampler *sm, double t0, double t1) {
    const pm_spline *s = sm->s;
    uint32_t seg = sm->seg;
    double cos_turn = sm->cos_turn;
    if (sm->o->max_turn <= 0.0) return false;
    double d0[3], d1[3];
    if (sm->d1_ok && sm->d1_t == t0) memcpy(d0, sm->d1_at, sizeof d0);
    else ref__d1_in(s, seg, t0 - (double)seg, d0);
    ref__d1_in(s, seg, t1 - (double)seg, d1);
    sm->d1_ok = true;
    sm->d1_t = t1;
    memcpy(sm->d1_at, d1, sizeof d1);
    /* The cosine with sqrt first (a few ulp from the hypot one): only a
     * turn within 1e-12 of the bound needs hypot's to decide. */
    double s0 = d0[0] * d0[0] + d0[2] * d0[2], s1 = d1[0] * d1[0] + d1[2] * d1[2];
    if (s0 > 1e-280 && s0 < 1e280 && s1 > 1e-280 && s1 < 1e280) {
        double ca = (d0[0] * d1[0] + d0[2] * d1[2]) / (sqrt(s0) * sqrt(s1));
        if (ca < cos_turn - 1e-12) return true;
        if (ca > cos_turn + 1e-12) return false;
    }
    double l0 = hypot(d0[0], d0[2]), l1 = hypot(d1[0], d1[2]);
    if (l0 <= 0.0 || l1 <= 0.0) return true;
    double c = (d0[0] * d1[0] + d0[2] * d1[2]) / (l0 * l1);
    return c < cos_turn;
}

static int ref__push(ref__sampler *sm, double t, const double p[3]) {
    if (sm->o->max_samples && sm->v.len >= sm->o->max_samples) return PM_ERR_LIMIT;
    pm_curve_sample c = {.t = t, .p = {p[0], p[1], p[2]}, .err = sm->err, .len = sm->len,
                         .err_exact = sm->exact};
    sm->err = 0.0;
    sm->len = 0.0;
    sm->exact = true;
    if (sm->v.len < sm->v.cap) {   /* the common case, without a call */
        sm->v.data[sm->v.len++] = c;
        return PM_OK;
    }
    return pm_vec_push(sm->a, &sm->v, c) == 0 ? PM_OK : PM_ERR_NOMEM;
}

/* Emits the samples strictly inside (t0, t1), in order. */
static int ref__subdivide(ref__sampler *sm, double t0, const double p0[3], double t1,
                         const double p1[3], int depth) {
    if (sm->o->cancel && *sm->o->cancel) return PM_ERR_CANCELLED;
    double e = 0.0;
    bool exact = false;
    /* Below the depth limit a chord beyond max_error is split whatever its
     * exact error, so the probes may stop at the first one beyond it. */
    double stop = depth < REF__SPLINE_MAX_DEPTH ? sm->o->max_error : INFINITY;
    double memo[REF__SPLINE_PROBES];
    double len = pm_v3_dist(p0, p1);
    bool split = len > sm->max_len;
    /* Its error in closed form: the curve's own heights, or draped (a height bound). */
    ref__sampler_opts_view view = {sm->s, sm->o, stop, sm->seg};
    bool bound = !split && (sm->o->height ? ref__drape_bound(&view, t0, t1, p0, p1, &e)
                                          : ref__chord_bound(sm->s, sm->seg, t0, t1, p0, p1, false, &e));
    if (bound) exact = true;
    split = split || (bound ? e > sm->o->max_error
                            : (e = ref__chord_error(sm->s, sm->o, t0, t1, p0, p1, REF__SPLINE_PROBES,
                                                   false, stop, memo)) > sm->o->max_error) ||
            ref__turns_too_much(sm, t0, t1);
    /* Seven probes can miss an off-centre peak; a chord that is already
     * close to the bound gets a finer look before it is accepted (its
     * seven probes all ran: none was past max_error). */
    if (!split && !bound && e > 0.5 * sm->o->max_error) {
        e = ref__chord_error(sm->s, sm->o, t0, t1, p0, p1, REF__SPLINE_FINE_PROBES, true, stop, memo);
        exact = true;
        split = e > sm->o->max_error;
    }
    if (!split || depth >= REF__SPLINE_MAX_DEPTH) {
        sm->err = e;
        sm->len = len;
        sm->exact = exact;
        return PM_OK;
    }
    /* A chord too long is cut into the fewest equal parameter pieces that
     * could each be short enough, k = ceil(len / max_segment) (halving
     * would overshoot: an 87 m straight at 5 m gave 32 chords, not 18);
     * a piece still too long (a curved or non-uniform stretch) is cut again
     * by the same rule. k counts as ceil(log2 k) levels of depth and is
     * capped so that no piece is narrower than 2^-MAX_DEPTH of a segment.
     * The error and turn rules halve. */
    uint32_t k = 2;
    int bits = 1;
    if (len > sm->max_len) {
        double want = fmax(ceil(len / sm->max_len), 2.0);   /* len a hair past it: 1 */
        while (bits < REF__SPLINE_MAX_DEPTH - depth && (double)k < want) {
            k *= 2;
            bits++;
        }
        if ((double)k > want) k = (uint32_t)want;   /* want > k / 2: still bits levels */
    }
    double q0[3] = {p0[0], p0[1], p0[2]}, ta = t0, s0 = (double)sm->seg;
    int r = PM_OK;
    for (uint32_t j = 1; r == PM_OK && j < k; j++) {
        double tm = k == 2 ? 0.5 * (t0 + t1) : t0 + (t1 - t0) * ((double)j / (double)k), pm[3];
        if (tm > s0 && tm < s0 + 1.0) ref__point_at(sm->s->coef[sm->seg], sm->o, tm - s0, pm);   /* ref__locate's */
        else pm_spline_point(sm->s, sm->o, tm, pm);
        r = ref__subdivide(sm, ta, q0, tm, pm, depth + bits);
        if (r == PM_OK) r = ref__push(sm, tm, pm);
        ta = tm;
        memcpy(q0, pm, sizeof q0);
    }
    if (r == PM_OK) r = ref__subdivide(sm, ta, q0, t1, p1, depth + bits);
    return r;
}

int pm_test_spline_sample_ref(pm_arena *a, const pm_spline *s, const pm_sample_opts *o,
                     pm_curve_sample **out, size_t *n) {
    assert(o->max_error > 0.0 && o->max_segment > 0.0);
    ref__sampler sm = {.a = a, .s = s, .o = o, .cos_turn = cos(o->max_turn), .exact = true,
                      .max_len = o->max_segment * (1.0 + 1e-12)};
    double p0[3];
    pm_spline_point(s, o, 0.0, p0);
    int r = ref__push(&sm, 0.0, p0);
    double first[3] = {p0[0], p0[1], p0[2]};
    for (uint32_t i = 0; r == PM_OK && i < s->nseg; i++) {
        double p1[3];
        /* A closed curve ends exactly where it began, bit for bit. */
        if (s->closed && i + 1 == s->nseg) memcpy(p1, first, sizeof p1);
        else pm_spline_point(s, o, (double)(i + 1), p1);
        sm.seg = i;
        sm.d1_ok = false;
        r = ref__subdivide(&sm, (double)i, p0, (double)(i + 1), p1, 0);
        if (r == PM_OK) r = ref__push(&sm, (double)(i + 1), p1);
        memcpy(p0, p1, sizeof p0);
    }
    if (r != PM_OK) return r;
    *out = sm.v.data;
    *n = sm.v.len;
    return PM_OK;
}


/* Control point i of the (possibly phantom-extended) sequence. */
static void ref__ctrl(const double *pts, size_t n, bool closed, long i, double out[3]) {
    long nn = (long)n;
    if (closed) {
        long k = ((i % nn) + nn) % nn;
        memcpy(out, pts + 3 * k, 3 * sizeof(double));
        return;
    }
    if (i < 0) {            /* reflect P1 through P0 */
        for (int c = 0; c < 3; c++) out[c] = 2.0 * pts[c] - pts[3 + c];
    } else if (i >= nn) {   /* reflect P(n-2) through P(n-1) */
        for (int c = 0; c < 3; c++) out[c] = 2.0 * pts[3 * (nn - 1) + c] - pts[3 * (nn - 2) + c];
    } else {
        memcpy(out, pts + 3 * i, 3 * sizeof(double));
    }
}

static double ref__knot(const double a[3], const double b[3], double alpha) {
    double d = hypot(b[0] - a[0], b[2] - a[2]);
    return alpha == 0.0 ? 1.0 : pow(d, alpha);
}

/* Non-uniform Catmull-Rom as a cubic Hermite segment from P1 to P2. */
static void ref__cr_segment(const double P[4][3], double d01, double d12, double d23, double c[4][3]) {
    for (int k = 0; k < 3; k++) {
        double m1 = d12 * ((P[1][k] - P[0][k]) / d01 - (P[2][k] - P[0][k]) / (d01 + d12) +
                           (P[2][k] - P[1][k]) / d12);
        double m2 = d12 * ((P[2][k] - P[1][k]) / d12 - (P[3][k] - P[1][k]) / (d12 + d23) +
                           (P[3][k] - P[2][k]) / d23);
        c[0][k] = P[1][k];
        c[1][k] = m1;
        c[2][k] = -3.0 * P[1][k] - 2.0 * m1 + 3.0 * P[2][k] - m2;
        c[3][k] = 2.0 * P[1][k] + m1 - 2.0 * P[2][k] + m2;
    }
}

int pm_test_spline_init_ref(pm_arena *a, pm_spline *s, const double *pts, size_t n, bool closed,
                            pm_curve_kind kind, double alpha) {
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->closed = closed;
    s->npoints = (uint32_t)n;
    s->nseg = (uint32_t)(closed ? n : n - 1);
    s->coef = pm_arena_alloc(a, (size_t)s->nseg * sizeof *s->coef);
    if (!s->coef) return PM_ERR_NOMEM;
    for (uint32_t i = 0; i < s->nseg; i++) {
        double P[4][3];
        for (int j = 0; j < 4; j++) ref__ctrl(pts, n, closed, (long)i - 1 + j, P[j]);
        if (kind == PM_CURVE_LINEAR) {
            memset(s->coef[i], 0, sizeof s->coef[i]);
            for (int k = 0; k < 3; k++) {
                s->coef[i][0][k] = P[1][k];
                s->coef[i][1][k] = P[2][k] - P[1][k];
            }
        } else {
            ref__cr_segment((const double(*)[3])P, ref__knot(P[0], P[1], alpha), ref__knot(P[1], P[2], alpha),
                            ref__knot(P[2], P[3], alpha), s->coef[i]);
        }
    }
    return PM_OK;
}

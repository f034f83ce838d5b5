#include "geom/spline.h"

#include <assert.h>
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "geom/hypot4.h"
#include "geom/vec.h"
#include "scene/result.h"

#define PM__SPLINE_MAX_DEPTH 30
#define PM__SPLINE_PROBES 7
#define PM__SPLINE_FINE_PROBES 15
/* The fine probes fall on the coarse ones every other step (see pm__chord_error). */
_Static_assert(PM__SPLINE_FINE_PROBES + 1 == 2 * (PM__SPLINE_PROBES + 1), "probe grids nest");

/* Four lanes of doubles. The lane code below does each lane's figure with
 * the scalar code's operations in the scalar code's order (no operation
 * mixes the lanes), so every figure is the scalar one bit for bit: IEEE
 * rounds each +, -, *, / and sqrt of a lane on its own. */
typedef double pm__v4 __attribute__((vector_size(32)));
/* Only static functions here take or return them (and inline): no call
 * crosses an ABI, so GCC's note that AVX would pass them differently
 * does not apply. */
#if defined(__GNUC__)   /* GCC and clang */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef int64_t pm__m4 __attribute__((vector_size(32)));   /* lane masks: all ones or zero */
/* Lane code is built twice, for AVX (one instruction a four-lane
 * operation) and plain x86-64 (two), the clone picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define PM__LANE_CLONES __attribute__((target_clones("avx", "default")))
#else
#define PM__LANE_CLONES
#endif

/* Control point i of the (possibly phantom-extended) sequence, as lanes
 * x, y, z, 0: open curves reflect P1 through P0 and P(n-2) through
 * P(n-1), closed ones wrap. */
static inline __attribute__((always_inline)) pm__v4 pm__ctrl(const double *pts, size_t n, bool closed, long i) {
    long nn = (long)n;
    if (closed) {
        const double *q = pts + 3 * (((i % nn) + nn) % nn);
        return (pm__v4){q[0], q[1], q[2], 0.0};
    }
    if (i < 0) {
        pm__v4 a = {pts[0], pts[1], pts[2], 0.0}, b = {pts[3], pts[4], pts[5], 0.0};
        return 2.0 * a - b;
    }
    if (i >= nn) {
        const double *q = pts + 3 * (nn - 1);
        pm__v4 a = {q[0], q[1], q[2], 0.0}, b = {q[-3], q[-2], q[-1], 0.0};
        return 2.0 * a - b;
    }
    const double *q = pts + 3 * i;
    return (pm__v4){q[0], q[1], q[2], 0.0};
}

/* p[0 .. 2] as lanes x, y, z, 0 (pm__ctrl's lanes for a point as given). */
static inline __attribute__((always_inline)) pm__v4 pm__v4_load3(const double *p) {
    return (pm__v4){p[0], p[1], p[2], 0.0};
}

/* pm__ctrl's x and z in scalars (the same operations: a phantom point is
 * 2 a - b per coordinate), for the knot lengths' lanes. */
static inline __attribute__((always_inline)) void pm__ctrl_xz(const double *pts, size_t n, bool closed, long i,
                                                              double *x, double *z) {
    long nn = (long)n;
    const double *a, *b = NULL;
    if (closed) a = pts + 3 * (((i % nn) + nn) % nn);
    else if (i < 0) a = pts, b = pts + 3;
    else if (i >= nn) a = pts + 3 * (nn - 1), b = a - 3;
    else a = pts + 3 * i;
    *x = b ? 2.0 * a[0] - b[0] : a[0];
    *z = b ? 2.0 * a[2] - b[2] : a[2];
}

/* pow(d, 0.5) by sqrt where that is provably pow's own answer, else 0
 * (the caller calls pow), four lengths at a time. s = sqrt(d) is the
 * double nearest the exact root; glibc's pow computes exp(y log x) with a
 * worst-case error of 0.52 ULP before (and through) its final rounding
 * (e_pow.c; for y = 1/2 the log's part is some 1e-4 ULP of it), so it can
 * answer other than s only where the exact root lies within 0.02 ULP of a
 * midpoint between s and a neighbour. Here s is taken where the root is
 * within 0.4 ULP of s (about four d in five): another double is 1 ULP
 * from s, so at least 0.6 ULP from the root, past pow's bound. The root's
 * place is from the exact residual d - s^2 (Dekker's product, no FMA:
 * -ffp-contract=off), the root minus s being that over (root + s). s a
 * power of two (its lower neighbour half an ULP away), or d out of
 * [2^-500, 2^500] (the split's range): pow. ulp(s), s's exponent less
 * 52, is s's power of two (s with its significand's bits cleared) times
 * 2^-52: exact, s being normal in that range. No operation mixes lanes.
 * tests/core/test_spline_pow.c checks it against pow. */
static inline __attribute__((always_inline)) pm_d4 pm__sqrt_as_pow4(pm_d4 d) {
    const pm_d4 zero = {0.0, 0.0, 0.0, 0.0};
    const pm_k4 expo = {0x7FF0000000000000, 0x7FF0000000000000, 0x7FF0000000000000, 0x7FF0000000000000};
    pm_k4 range = (pm_k4)(d >= 0x1p-500) & (pm_k4)(d <= 0x1p500);
    pm_d4 s = pm_d4_sqrt(d), e = (pm_d4)((pm_k4)s & expo), ulp = e * 0x1p-52;
    pm_d4 c = 134217729.0 * s, hi = c - (c - s), lo = s - hi;   /* s = hi + lo, 26 + 27 bits */
    pm_d4 p = s * s, err = ((hi * hi - p) + 2.0 * hi * lo) + lo * lo;   /* s^2 = p + err exactly */
    pm_d4 res = (d - p) - err;   /* d - p exact (Sterbenz): one rounding */
    /* root - s = res / (root + s), root + s >= 2 s - ulp: within 0.4 ULP
     * when |res| < 0.4 ulp (2 s - ulp); 0.79 s ulp is below that. */
    pm_k4 take = range & (pm_k4)(s != e) & (pm_k4)(pm_d4_abs(res) < 0.79 * s * ulp);
    return pm_d4_sel(take, s, zero);
}

/* The same for one length (tests/core/test_spline_pow.c). */
static inline double pm__sqrt_as_pow(double d) {
    return pm__sqrt_as_pow4((pm_d4){d, d, d, d})[0];
}

/* pow(d, alpha) for the knot intervals that pm__sqrt_as_pow4 leaves to
 * pow, each distinct distance once: a road's intervals repeat (ghost
 * points, equal spacing), and pow is a pure function of d, so a
 * remembered power is the one pow would give. */
#define PM__POW_SLOTS 128
typedef struct pm__pow_memo {
    double alpha;
    uint64_t used[PM__POW_SLOTS / 64];   /* slots filled (so a short curve clears 16 bytes, not 2 KiB) */
    double d[PM__POW_SLOTS], pw[PM__POW_SLOTS];
} pm__pow_memo;

static inline __attribute__((always_inline)) double pm__pow_of(pm__pow_memo *m, double d) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    size_t slot = (size_t)((bits * 0x9E3779B97F4A7C15ull) >> 57);   /* 7 bits */
    uint64_t bit = 1ull << (slot & 63);
    if (!(m->used[slot >> 6] & bit) || m->d[slot] != d) {
        m->used[slot >> 6] |= bit;
        m->d[slot] = d;
        m->pw[slot] = pow(d, m->alpha);
    }
    return m->pw[slot];
}

/* The knot intervals d(j) = |ctrl(j) - ctrl(j - 1)| in plan to the power
 * alpha for j = first .. first + 3 (those up to last; all four lanes are
 * written): the four plan lengths in lanes by pm_hypot4 (bit for bit
 * hypot(b.x - a.x, b.z - a.z), checked in
 * tests/core/test_road_frame_fast.c), at alpha 0.5 their roots by
 * pm__sqrt_as_pow4 where it answers; alpha 0 uniform (all 1). A length
 * whose power is left to pow is written negated, for pm__knots' second
 * pass (its sign bit tells it: a length is never negative, and the 0 of
 * a repeated point comes out -0); returns whether there is one. */
static inline __attribute__((always_inline)) bool pm__knots4(const double *pts, size_t n, bool closed, long first,
                                                             long last, double alpha, double out[4]) {
    if (alpha == 0.0) {
        for (int j = 0; j < 4; j++) out[j] = 1.0;
        return false;
    }
    pm_d4 dx = {1.0, 1.0, 1.0, 1.0}, dz = {0.0, 0.0, 0.0, 0.0};
    if (first >= 1 && first + 4 <= (long)n && first + 3 <= last) {
        /* ctrl(first - 1 .. first + 3) are points as given (no phantom, no
         * wrap): pm__ctrl_xz's values without its cases */
        const double *q = pts + 3 * (first - 1);
        dx = (pm_d4){q[3], q[6], q[9], q[12]} - (pm_d4){q[0], q[3], q[6], q[9]};
        dz = (pm_d4){q[5], q[8], q[11], q[14]} - (pm_d4){q[2], q[5], q[8], q[11]};
    } else {
        double ax, az, bx, bz;
        pm__ctrl_xz(pts, n, closed, first - 1, &ax, &az);
        for (int j = 0; j < 4 && first + j <= last; j++) {
            pm__ctrl_xz(pts, n, closed, first + j, &bx, &bz);
            dx[j] = bx - ax;
            dz[j] = bz - az;
            ax = bx;
            az = bz;
        }
    }
    pm_d4 d = pm_hypot4(dx, dz);
    for (int j = 0; j < 4 && first + j <= last; j++) assert(d[j] > 0.0);
    pm_d4 w = alpha == 0.5 ? pm__sqrt_as_pow4(d) : (pm_d4){0.0, 0.0, 0.0, 0.0};
    pm_k4 left = (pm_k4)(w == 0.0);
    w = pm_d4_sel(left, -d, w);
    memcpy(out, &w, sizeof w);
    return (left[0] | left[1] | left[2] | left[3]) != 0;
}

/* kd[j] = d(j)^alpha for j = 0 .. last (see pm__knots4; kd has room for
 * three past last): four at a time, then pow for the lengths that
 * pm__sqrt_as_pow4 did not answer (a second pass, so that the first calls
 * nothing and keeps its lanes in registers). */
static inline __attribute__((always_inline)) void pm__knots(const double *pts, size_t n, bool closed, long last,
                                                            double alpha, double *kd) {
    bool left = false;
    for (long j = 0; j <= last; j += 4) left |= pm__knots4(pts, n, closed, j, last, alpha, kd + j);
    if (!left) return;
    pm__pow_memo memo;   /* d and pw are read only where used says so */
    memo.alpha = alpha;
    memset(memo.used, 0, sizeof memo.used);
    for (long j = 0; j <= last; j++)
        if (signbit(kd[j])) kd[j] = pm__pow_of(&memo, -kd[j]);
}

/* Non-uniform Catmull-Rom as cubic Hermite segments (the tangents of the
 * Barry-Goldman pyramid, scaled to u in [0, 1]). Segment i runs from
 * P1 = ctrl(i) to P2 = ctrl(i + 1) with knot intervals d01, d12, d23
 * between ctrl(i - 1) .. ctrl(i + 2) and tangents
 *   m1 = d12 ((P1 - P0) / d01 - (P2 - P0) / (d01 + d12) + (P2 - P1) / d12)
 *   m2 = d12 ((P2 - P1) / d12 - (P3 - P1) / (d12 + d23) + (P3 - P2) / d23).
 * The quotients recur: (P2 - P1) / d12 is the next segment's (P1 - P0) /
 * d01, (P3 - P2) / d23 its (P2 - P1) / d12 and (P3 - P1) / (d12 + d23)
 * its (P2 - P0) / (d01 + d12), the same operands in the same order. So
 * each segment divides twice (a lane per coordinate), where the formula
 * above divides six times per coordinate. And m2's sum (q12 - s13 + q23)
 * is the next segment's m1's, times d12 here and d23 there. */
PM__LANE_CLONES static void pm__cr_segments(pm_spline *s, const double *pts, size_t n, bool closed, double alpha,
                                            double *kd) {
    uint32_t nseg = s->nseg;   /* locals: the coefficient stores below cannot change them */
    double(*coef)[4][3] = s->coef;
    pm__v4 P0 = pm__ctrl(pts, n, closed, -1), P1 = pm__ctrl(pts, n, closed, 0);
    pm__v4 P2 = pm__ctrl(pts, n, closed, 1);
    /* d(j) for j = 0 .. nseg + 1 into kd, four at a time, in a pass of
     * their own: the segments' divisions below then wait on no square
     * root (the same figures as taken four at a time between them). */
    pm__knots(pts, n, closed, (long)nseg + 1, alpha, kd);
    /* the intervals in all four lanes (d12 + d23 lane by lane is the
     * scalar sum in each) */
    pm__v4 D01 = {kd[0], kd[0], kd[0], kd[0]}, D12 = {kd[1], kd[1], kd[1], kd[1]};
    pm__v4 q12 = (P2 - P1) / D12, m1 = D12 * ((P1 - P0) / D01 - (P2 - P0) / (D01 + D12) + q12);
    for (uint32_t i = 0; i < nseg; i++) {
        /* P3 = ctrl(i + 2): a point as given while i + 2 < n */
        size_t i3 = (size_t)i + 2;
        pm__v4 P3 = i3 < n ? pm__v4_load3(pts + 3 * i3) : pm__ctrl(pts, n, closed, (long)i3);
        double d23 = kd[i + 2];
        pm__v4 D23 = {d23, d23, d23, d23};
        pm__v4 q23 = (P3 - P2) / D23, s13 = (P3 - P1) / (D12 + D23);
        pm__v4 g = q12 - s13 + q23;
        pm__v4 m2 = D12 * g;
        pm__v4 c2 = -3.0 * P1 - 2.0 * m1 + 3.0 * P2 - m2;
        pm__v4 c3 = 2.0 * P1 + m1 - 2.0 * P2 + m2;
        double(*c)[3] = coef[i];
        if (i + 1 < nseg) {
            /* four lanes each, in order: a store's fourth lane is the next
             * row's first, written again by the next store (c3's by the
             * next segment's P1: hence not the last segment) */
            double *cw = &coef[i][0][0];
            memcpy(cw, &P1, sizeof P1);
            memcpy(cw + 3, &m1, sizeof m1);
            memcpy(cw + 6, &c2, sizeof c2);
            memcpy(cw + 9, &c3, sizeof c3);
        } else {
            for (int k = 0; k < 3; k++) {
                c[0][k] = P1[k];
                c[1][k] = m1[k];
                c[2][k] = c2[k];
                c[3][k] = c3[k];
            }
        }
        P1 = P2;
        P2 = P3;
        D12 = D23;
        q12 = q23;
        m1 = D23 * g;
    }
}

int pm_spline_init(pm_arena *a, pm_spline *s, const double *pts, size_t n, bool closed,
                   pm_curve_kind kind, double alpha) {
    assert(n >= 2 && (!closed || n >= 3));
    assert(alpha >= 0.0 && alpha <= 1.0);
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->closed = closed;
    s->npoints = (uint32_t)n;
    s->nseg = (uint32_t)(closed ? n : n - 1);
    s->coef = pm_arena_alloc(a, (size_t)s->nseg * sizeof *s->coef);
    if (!s->coef) return PM_ERR_NOMEM;
    if (kind != PM_CURVE_LINEAR) {
        /* the knot intervals d(0 .. nseg + 1), written four at a time:
         * a short curve's (a network's roads) on the stack */
        double kbuf[64], *kd = kbuf;
        if ((size_t)s->nseg + 5 > sizeof kbuf / sizeof kbuf[0] &&
            !(kd = pm_arena_alloc(a, ((size_t)s->nseg + 5) * sizeof(double))))
            return PM_ERR_NOMEM;
        pm__cr_segments(s, pts, n, closed, alpha, kd);
        return PM_OK;
    }
    for (uint32_t i = 0; i < s->nseg; i++) {
        const double *p1 = pts + 3 * i, *p2 = pts + 3 * (i + 1 == n ? 0 : i + 1);
        memset(s->coef[i], 0, sizeof s->coef[i]);
        for (int k = 0; k < 3; k++) {
            s->coef[i][0][k] = p1[k];
            s->coef[i][1][k] = p2[k] - p1[k];
        }
    }
    return PM_OK;
}

double pm_spline_curvature(const pm_spline *s, double t) {
    if (s->kind == PM_CURVE_LINEAR) return 0.0;
    double p[3], d1[3], d2[3];
    pm_spline_eval(s, t, p, d1, d2);
    return pm_spline_curvature_of(s, d1, d2);
}


/* pm_spline_eval without derivatives at local u of segment c, then the
 * height override: the sampler's probes. */
static inline void pm__point_at(const double (*c)[3], const pm_sample_opts *o, double u, double p[3]) {
    for (int k = 0; k < 3; k++) p[k] = c[0][k] + u * (c[1][k] + u * (c[2][k] + u * c[3][k]));
    if (o && o->height) p[1] = o->height(o->height_ctx, p[0], p[2]);
}

void pm_spline_point(const pm_spline *s, const pm_sample_opts *o, double t, double p[3]) {
    double u;
    uint32_t i = pm__spline_locate(s, t, &u);
    pm__point_at(s->coef[i], o, u, p);
}

/* A chord a -> b with what every probe against it reuses: its vector and
 * length, and the segment seg its start lies in (probes strictly inside
 * it skip pm__locate: there floor(t) is seg, so u = t - seg as there). */
typedef struct pm__chord {
    const double *a;
    double ab[3], l2;
    uint32_t seg;
    double seg0, seg1;
} pm__chord;

static void pm__chord_init(pm__chord *c, const double a[3], const double b[3]) {
    c->a = a;
    c->l2 = 0.0;
    for (int k = 0; k < 3; k++) {
        c->ab[k] = b[k] - a[k];
        c->l2 += c->ab[k] * c->ab[k];
    }
}

static double pm__chord_distance(const pm__chord *c, const double p[3]) {
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

double pm_point_segment_distance(const double p[3], const double a[3], const double b[3]) {
    pm__chord c;
    pm__chord_init(&c, a, b);
    return pm__chord_distance(&c, p);
}

static void pm__chord_segment(const pm_spline *s, double t0, pm__chord *c) {
    double f = floor(t0);
    c->seg = t0 <= 0.0 ? 0 : (f >= (double)s->nseg ? s->nseg - 1 : (uint32_t)f);
    c->seg0 = (double)c->seg;
    c->seg1 = c->seg0 + 1.0;
}

static double pm__probe(const pm_spline *s, const pm_sample_opts *o, double t, const pm__chord *c) {
    double p[3];
    if (t > c->seg0 && t < c->seg1) pm__point_at(s->coef[c->seg], o, t - c->seg0, p);
    else pm_spline_point(s, o, t, p);
    return pm__chord_distance(c, p);
}

/* Largest distance from the curve over (t0, t1) to the chord, at probes
 * evenly spaced in t. With refine, the best probe's neighbourhood is then
 * searched (golden section), so a peak between probes is found too. A
 * probe farther than stop ends the search at once (the chord will be
 * split, so the exact figure is not needed): the result is then only
 * known to exceed stop. With memo (7 probes) each probe's distance is
 * kept; with memo (15 probes) every other one is read back from a full
 * 7-probe pass: (t1 - t0) / 16 * 2k is (t1 - t0) / 8 * k bit for bit. */
static double pm__chord_error(const pm_spline *s, const pm_sample_opts *o, double t0, double t1,
                              const double a[3], const double b[3], uint32_t probes, bool refine,
                              double stop, double *memo) {
    pm__chord c;
    pm__chord_init(&c, a, b);
    pm__chord_segment(s, t0, &c);
    double worst = 0.0, h = (t1 - t0) / (double)(probes + 1), tbest = t0;
    bool reuse = memo && probes == PM__SPLINE_FINE_PROBES;
    for (uint32_t k = 1; k <= probes; k++) {
        double t = t0 + h * (double)k;
        double d = reuse && k % 2 == 0 ? memo[k / 2 - 1] : pm__probe(s, o, t, &c);
        if (memo && !reuse) memo[k - 1] = d;
        if (d > worst) { worst = d; tbest = t; }
        if (d > stop) return worst;
    }
    if (!refine || worst == 0.0) return worst;
    const double g = 0.6180339887498949;
    double lo = tbest - h, hi = tbest + h;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = pm__probe(s, o, x1, &c), f2 = pm__probe(s, o, x2, &c);
    for (int it = 0; it < 16; it++) {
        if (f1 > f2) { hi = x2; x2 = x1; f2 = f1; x1 = hi - g * (hi - lo); f1 = pm__probe(s, o, x1, &c); }
        else { lo = x1; x1 = x2; f1 = f2; x2 = lo + g * (hi - lo); f2 = pm__probe(s, o, x2, &c); }
    }
    return fmax(worst, fmax(f1, f2));
}

/* A draped chord's error bound (pm_sample_opts.height_bound): the plan
 * curve P(v) lies within dp of the plan chord, projecting onto it at s(v)
 * running monotonically over [0, 1] (plan_ok: pm__run_eval's plan bound),
 * so the chord's point at s(v) is at most sqrt(dp^2 + dv^2) from the
 * draped curve's point, dv bounding |height(P(v)) - chord height at s(v)|;
 * stop is the error past which the exact figure is not needed. False:
 * probe instead. */
static bool pm__drape_bound(const pm_sample_opts *o, double stop, bool plan_ok, double dp, const double a[3],
                            const double b[3], double *e) {
    if (!o->height_bound) return false;
    if (!plan_ok) {
        /* No bound for this chord (its plan projection turns back): its
         * halves get one, so split it; at the depth limit, probe it. */
        if (isinf(stop)) return false;
        *e = INFINITY;
        return true;
    }
    double s2 = stop * stop - dp * dp;
    double dv = o->height_bound(o->height_ctx, a, b, dp, s2 > 0.0 ? sqrt(s2) : 0.0);
    /* A few ulps of the coordinates for the rounding of both parts. */
    *e = sqrt(dp * dp + dv * dv) * (1.0 + 1e-12) + 1e-12;
    return true;
}

/* First derivative inside segment seg at local u (so u = 1 is the end of
 * seg, not the start of the next one: linear corners are not turns). */
static void pm__d1_in(const pm_spline *s, uint32_t seg, double u, double d1[3]) {
    const double(*c)[3] = s->coef[seg];
    for (int k = 0; k < 3; k++) d1[k] = c[1][k] + u * (2.0 * c[2][k] + u * 3.0 * c[3][k]);
}

/* The chords of the subdivision are evaluated four at a time (pm__v4
 * lanes: siblings, or the children of split siblings). */

typedef PM_VEC(pm_curve_sample) pm__sample_vec;

typedef struct pm__sampler {
    pm_arena *a;
    const pm_spline *s;
    const pm_sample_opts *o;
    pm__sample_vec v;
    double cos_turn;        /* cos(o->max_turn), once */
    /* The longest chord: max_segment and 1e-12 of it for rounding, so that
     * 100 m at 5 m is 20 pieces (one measured 5 + 7e-15 m would be cut). */
    double max_len;
    size_t max_samples;     /* o->max_samples, SIZE_MAX for none */
    size_t room;            /* the fewer of v.cap and max_samples */
    bool wide;              /* the CPU has AVX: pm__run_eval_avx */
} pm__sampler;

/* Up to four consecutive chords of the subdivision, one per lane: chord
 * l runs from t[l] to t[l + 1], between points l and l + 1 (their x, y
 * and z apart, so that the chords' vectors are one subtraction of
 * neighbouring lanes), inside segment seg[l]. Lanes from n on hold empty
 * chords (their figures are not used). pm__run_eval fills in each chord's
 * length (pm_v3_dist of its ends), whether its plan tangent turns too
 * much (turn: 1 yes, 0 no, -1 too close to call without hypot) and the
 * closed-form error bound (bound, e; with a height override, the plan
 * curve's). */
typedef struct pm__run {
    double t[5], px[5], py[5], pz[5];
    uint32_t seg[4];
    int n;
    double len[4], e[4];
    int64_t turn[4], bound[4];   /* bound: -1 where the closed form's e holds, else 0 */
    /* pm__decide's common verdicts, -1 where they hold: accept with e
     * (exact), or halve (unless at the depth limit: then accept). */
    int64_t accept[4], halve[4];
    /* Where any lane is halved: each chord's parameter midpoint tm (as
     * pm__cut_at) and its point (pm__cut_point's), valid in lanes where
     * mid is -1 (tm strictly inside the segment, no height override). */
    double tm[4], mx[4], my[4], mz[4];
    int64_t mid[4];
} pm__run;

/* Point i of run r as [x, y, z], and the other way round. */
static inline void pm__run_get(const pm__run *r, int i, double p[3]) {
    p[0] = r->px[i];
    p[1] = r->py[i];
    p[2] = r->pz[i];
}

static inline void pm__run_set(pm__run *r, int i, const double p[3]) {
    r->px[i] = p[0];
    r->py[i] = p[1];
    r->pz[i] = p[2];
}

/* Ends run r after n chords: the lanes past them get empty chords. */
static inline void pm__run_close(pm__run *r, int n) {
    r->n = n;
    for (int i = n; i < 4; i++) {
        r->t[i + 1] = r->t[n];
        r->px[i + 1] = r->px[n];
        r->py[i + 1] = r->py[n];
        r->pz[i + 1] = r->pz[n];
        r->seg[i] = r->seg[n - 1];
    }
}

/* The lane code's two builds (pm__run_eval): plain x86-64 (a four-lane
 * operation as two SSE2 ones) and AVX (one), the latter with AVX's own
 * square root and blend where the plain build splits or masks. Both give
 * the same bits: sqrtpd rounds each lane as sqrtsd does, and a blend of
 * all-ones or all-zero masks is the masked or. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    defined(__OPTIMIZE__)
#define PM__LANES_AVX 1
#include <immintrin.h>
__attribute__((target("avx"))) static inline pm__v4 pm__v4_sqrt_avx(pm__v4 x) {
    return (pm__v4)_mm256_sqrt_pd((__m256d)x);
}
__attribute__((target("avx"))) static inline pm__v4 pm__v4_sel_avx(pm__m4 m, pm__v4 a, pm__v4 b) {
    return (pm__v4)_mm256_blendv_pd((__m256d)b, (__m256d)a, (__m256d)m);
}
__attribute__((target("avx"))) static inline bool pm__m4_all_avx(pm__m4 m) {
    return _mm256_movemask_pd((__m256d)m) == 15;
}
__attribute__((target("avx"))) static inline bool pm__m4_any_avx(pm__m4 m) {
    return _mm256_movemask_pd((__m256d)m) != 0;
}
#else
#define PM__LANES_AVX 0
#endif

static inline __attribute__((always_inline)) pm__v4 pm__v4_sel(pm__m4 m, pm__v4 a, pm__v4 b, bool wide) {   /* m ? a : b, per lane */
#if PM__LANES_AVX
    if (wide) return pm__v4_sel_avx(m, a, b);
#endif
    (void)wide;
    return (pm__v4)((m & (pm__m4)a) | (~m & (pm__m4)b));
}

static inline __attribute__((always_inline)) pm__v4 pm__v4_sqrt(pm__v4 x, bool wide) {
#if PM__LANES_AVX
    if (wide) return pm__v4_sqrt_avx(x);
#endif
    (void)wide;
#if defined(__SSE2__)
    __m128d lo = _mm_sqrt_pd((__m128d){x[0], x[1]}), hi = _mm_sqrt_pd((__m128d){x[2], x[3]});
    return (pm__v4){lo[0], lo[1], hi[0], hi[1]};
#else
    return (pm__v4){sqrt(x[0]), sqrt(x[1]), sqrt(x[2]), sqrt(x[3])};
#endif
}

/* Whether every lane of mask m is set (the sign bits: masks are all ones or zero). */
static inline __attribute__((always_inline)) bool pm__m4_all(pm__m4 m, bool wide) {
#if PM__LANES_AVX
    if (wide) return pm__m4_all_avx(m);
#endif
    (void)wide;
    return ((m[0] & m[1]) & (m[2] & m[3])) != 0;
}

/* Whether any lane of mask m is set. */
static inline __attribute__((always_inline)) bool pm__m4_any(pm__m4 m, bool wide) {
#if PM__LANES_AVX
    if (wide) return pm__m4_any_avx(m);
#endif
    (void)wide;
    return ((m[0] | m[1]) | (m[2] | m[3])) != 0;
}

static inline pm__v4 pm__v4_load(const double *p) {   /* p[0 .. 3], unaligned */
    pm__v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* p[0 .. 3] and p[1 .. 4] from five scalar loads: a run's points and
 * parameters are written a double at a time just before they are read,
 * and a four-lane load spanning those stores cannot take its value from
 * them (store forwarding fails: it waits for them to reach the cache),
 * where each scalar load can. */
static inline __attribute__((always_inline)) void pm__v4_load5(const double *p, pm__v4 *lo, pm__v4 *hi) {
    double a = p[0], b = p[1], c = p[2], d = p[3], e = p[4];
#if defined(__x86_64__) && defined(__GNUC__)
    /* each value in a register of its own: the compiler would otherwise
     * merge the five loads back into four-lane ones */
    __asm__("" : "+x"(a), "+x"(b), "+x"(c), "+x"(d), "+x"(e));
#endif
    *lo = (pm__v4){a, b, c, d};
    *hi = (pm__v4){b, c, d, e};
}

/* The peak over v in [0, 1] of g(v) = v (1 - v) (ga + d v), lane by lane
 * (ga >= 0, d >= -ga). g' = ga + 2 (d - ga) v - 3 d v^2 is ga >= 0 at 0
 * and -(ga + d) <= 0 at 1, so one root r lies in [0, 1] and holds the
 * peak; the other is outside (g is 0 at its clamped end). With qa = -3 d,
 * qb = 2 (d - ga): r = (-qb - sq) / (2 qa) = 2 ga / (sq - qb), sq the
 * discriminant's root. The first form cancels where qb < 0 (d below ga:
 * with d a few ulp of ga it gave r = 0, a bound of 0 for a chord whose
 * curve bulges by ga / 4), the second where qb > 0 (ga well below d), so
 * each lane takes the one whose terms add. d = 0 (no 0 / 0) gives 1/2;
 * ga = d = 0 gives NaN, clamped to 0, and g = 0 as it should. */
static inline __attribute__((always_inline)) pm__v4 pm__v4_bump_peak(pm__v4 ga, pm__v4 d, bool wide) {
    const pm__v4 zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    pm__v4 qa = -3.0 * d, qb = 2.0 * (d - ga), disc = qb * qb + 12.0 * d * ga;
    pm__v4 sq = pm__v4_sqrt(pm__v4_sel((pm__m4)(disc > zero), disc, zero, wide), wide);
    pm__m4 rising = (pm__m4)(qb > zero);
    pm__v4 w = pm__v4_sel(rising, -qb - sq, 2.0 * ga, wide) / pm__v4_sel(rising, 2.0 * qa, sq - qb, wide);
    w = pm__v4_sel((pm__m4)(w > zero), w, zero, wide);
    w = pm__v4_sel((pm__m4)(w < one), w, one, wide);
    return w * (1.0 - w) * (ga + d * w);
}

double pm_spline_bump_peak(double ga, double d) {
    return pm__v4_bump_peak((pm__v4){ga, ga, ga, ga}, (pm__v4){d, d, d, d}, false)[0];
}

/* For each chord of run r ([t0, t1] of one segment, from a to b): its
 * length (pm_v3_dist of a and b), pm__turn_exceeds's sqrt cosine test
 * between pm__d1_in's derivatives at t0 and t1, and the largest 3D
 * distance from the cubic over (t0, t1) (no height override) to the
 * chord, in closed form. Over v in [0, 1] the
 * curve minus a is q(v) = q1 v + q2 v^2 + q3 v^3; its part across the
 * chord vanishes at both ends, so it is v (1 - v) (A + B v), and
 * |A + B v| <= (1 - v) |A| + v |A + B|: the cubic bound g below is exact
 * for a plane curve without an inflection inside the chord, an upper bound
 * otherwise. Distance to the chord's line is distance to the chord while
 * the projection along it runs monotonically from a to b; false (probe
 * instead) when it does not. With a height override, the same for the plan curve
 * and chord (y dropped: a draped curve's plan part, pm__drape_bound's dp).
 * |ab|^2 is pm_v3_dist's sum (a leading 0.0 + adds nothing to a square). */
/* pm__chords_lanes takes the run's figures in lanes: the chords' segments'
 * coefficients cf (one_seg: all four in one segment), the segments (seg),
 * ends (t0, t1) and vectors (ab) as doubles; pm__run_eval_lanes reads them
 * from the run. */
static inline __attribute__((always_inline)) void pm__chords_lanes(const pm__sampler *sm, pm__run *r,
                                                                   const double (*const cf[4])[3], bool one_seg,
                                                                   pm__v4 seg, pm__v4 t0, pm__v4 t1,
                                                                   const pm__v4 ab_in[3], bool wide) {
    pm__v4 ab[3] = {ab_in[0], ab_in[1], ab_in[2]};
    const pm__v4 zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    pm__v4 u = t0 - seg, h = t1 - t0, u1 = t1 - seg;
    pm__v4 u3 = u * 3.0, u13 = u1 * 3.0, hh = h * h, hhh = hh * h;
    pm__v4 q[3][3], d0[3], cv[3][3];
    pm__v4 l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
    pm__v4 len = pm__v4_sqrt(l2, wide);
    memcpy(r->len, &len, sizeof len);
    /* Every chord longer than max_len (lanes from n on are empty and not
     * read): none is accepted or halved here, and pm__decide cuts each by
     * its length alone, reading nothing else of the run. */
    static const pm__m4 past[5] = {{-1, -1, -1, -1}, {0, -1, -1, -1}, {0, 0, -1, -1}, {0, 0, 0, -1}, {0, 0, 0, 0}};
    double ml = sm->max_len;
    pm__m4 over_len = (pm__m4)(len > (pm__v4){ml, ml, ml, ml}) | past[r->n];
    if (pm__m4_all(over_len, wide)) {
        memset(r->accept, 0, sizeof r->accept);
        memset(r->halve, 0, sizeof r->halve);
        return;
    }
    for (int k = 0; k < 3; k++) {
        pm__v4 c1, c2, c3;
        if (one_seg) {
            double a1 = cf[0][1][k], a2 = cf[0][2][k], a3 = cf[0][3][k];
            c1 = (pm__v4){a1, a1, a1, a1};
            c2 = (pm__v4){a2, a2, a2, a2};
            c3 = (pm__v4){a3, a3, a3, a3};
        } else {
            c1 = (pm__v4){cf[0][1][k], cf[1][1][k], cf[2][1][k], cf[3][1][k]};
            c2 = (pm__v4){cf[0][2][k], cf[1][2][k], cf[2][2][k], cf[3][2][k]};
            c3 = (pm__v4){cf[0][3][k], cf[1][3][k], cf[2][3][k], cf[3][3][k]};
        }
        pm__v4 uc3 = u3 * c3;   /* u * 3.0 * c3 as (u * 3.0) * c3 */
        pm__v4 d = c1 + u * (2.0 * c2 + uc3);
        d0[k] = d;
        cv[k][0] = c1;
        cv[k][1] = c2;
        cv[k][2] = c3;
        q[0][k] = h * d;
        q[1][k] = hh * (c2 + uc3);
        q[2][k] = hhh * c3;
    }
    bool plan = sm->o->height != NULL;
    if (plan) {   /* the plan curve and chord */
        q[0][1] = q[1][1] = q[2][1] = ab[1] = zero;
        l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
    }
    pm__v4 sp[3];
    for (int j = 0; j < 3; j++) sp[j] = (q[j][0] * ab[0] + q[j][1] * ab[1] + q[j][2] * ab[2]) / l2;
    pm__m4 ok = (pm__m4)(l2 > zero);
    ok &= ~((pm__m4)(sp[0] < zero) | (pm__m4)(sp[0] + 2.0 * sp[1] + 3.0 * sp[2] < zero));
    pm__v4 sp3 = 3.0 * sp[2], v = -sp[1] / sp3;
    ok &= ~((pm__m4)(sp[2] != zero) & (pm__m4)(v > zero) & (pm__m4)(v < one) &
            (pm__m4)(sp[0] - sp[1] * sp[1] / sp3 < zero));
    pm__v4 A2 = zero, AB2 = zero;
    for (int k = 0; k < 3; k++) {
        pm__v4 w1 = q[0][k] - sp[0] * ab[k], w2 = q[1][k] - sp[1] * ab[k], w3 = q[2][k] - sp[2] * ab[k];
        pm__v4 apb = -w2 - 2.0 * w3;
        A2 += w1 * w1;
        AB2 += apb * apb;
    }
    pm__v4 ga = pm__v4_sqrt(A2, wide), d = pm__v4_sqrt(AB2, wide) - ga;
    pm__v4 worst = pm__v4_bump_peak(ga, d, wide);
    memcpy(r->e, &worst, sizeof worst);
    memcpy(r->bound, &ok, sizeof ok);
    /* pm__decide's path for a chord no longer than max_len with a bound:
     * split past max_error, else past max_turn (when on) if the sqrt
     * cosine is clear. With a height override no verdict here (e holds
     * dp for pm__drape_bound). */
    double me = sm->o->max_error;
    pm__m4 bounded = ok & ~(pm__m4)(len > (pm__v4){ml, ml, ml, ml});
    pm__m4 over = (pm__m4)(worst > (pm__v4){me, me, me, me});
    pm__m4 halve = plan ? (pm__m4){0, 0, 0, 0} : bounded & over;
    memcpy(r->halve, &halve, sizeof halve);
    /* Halved chords need no turn test: where all four are, it is skipped. */
    if (!pm__m4_all(halve, wide)) {
        /* pm__turn_exceeds's first test, lane by lane. */
        pm__v4 d1[3];
        for (int k = 0; k < 3; k++) d1[k] = cv[k][0] + u1 * (2.0 * cv[k][1] + u13 * cv[k][2]);
        pm__v4 s0 = d0[0] * d0[0] + d0[2] * d0[2], s1 = d1[0] * d1[0] + d1[2] * d1[2];
        const pm__v4 tiny = {1e-280, 1e-280, 1e-280, 1e-280}, huge = {1e280, 1e280, 1e280, 1e280};
        pm__m4 fits = (pm__m4)(s0 > tiny) & (pm__m4)(s0 < huge) & (pm__m4)(s1 > tiny) & (pm__m4)(s1 < huge);
        pm__v4 ca = (d0[0] * d1[0] + d0[2] * d1[2]) / (pm__v4_sqrt(s0, wide) * pm__v4_sqrt(s1, wide));
        double lo = sm->cos_turn - 1e-12, hi = sm->cos_turn + 1e-12;
        pm__m4 yes = fits & (pm__m4)(ca < (pm__v4){lo, lo, lo, lo});
        pm__m4 no = fits & (pm__m4)(ca > (pm__v4){hi, hi, hi, hi});
        const pm__m4 one_i = {1, 1, 1, 1}, none = {-1, -1, -1, -1};   /* 1 yes, 0 no, -1 neither */
        pm__m4 turn = (pm__m4)pm__v4_sel(yes, (pm__v4)one_i, pm__v4_sel(no, zero, (pm__v4)none, wide), wide);
        memcpy(r->turn, &turn, sizeof turn);
        pm__m4 straight = sm->o->max_turn <= 0.0 ? ~(pm__m4){0, 0, 0, 0} : no;
        pm__m4 accept = plan ? (pm__m4){0, 0, 0, 0} : bounded & ~over & straight;
        memcpy(r->accept, &accept, sizeof accept);
    } else {
        memset(r->accept, 0, sizeof r->accept);
    }
    if (plan) return;
    if (!pm__m4_any(halve, wide)) return;
    /* The halves' cut points, lane by lane as pm__cut_at and pm__point_at. */
    pm__v4 tm = 0.5 * (t0 + t1), um = tm - seg;
    pm__m4 inside = (pm__m4)(tm > seg) & (pm__m4)(tm < seg + 1.0);
    memcpy(r->tm, &tm, sizeof tm);
    memcpy(r->mid, &inside, sizeof inside);
    double *mids[3] = {r->mx, r->my, r->mz};
    for (int k = 0; k < 3; k++) {
        double a0 = cf[0][0][k];
        pm__v4 c0 = one_seg ? (pm__v4){a0, a0, a0, a0} : (pm__v4){a0, cf[1][0][k], cf[2][0][k], cf[3][0][k]};
        pm__v4 pk = c0 + um * (cv[k][0] + um * (cv[k][1] + um * cv[k][2]));
        memcpy(mids[k], &pk, sizeof pk);
    }
}

/* pm__chords_lanes on run r's figures, read from it (its points and
 * parameters a double at a time: pm__v4_load5). */
static inline __attribute__((always_inline)) void pm__run_eval_lanes(const pm__sampler *sm, pm__run *r, bool wide) {
    const double(*cf[4])[3];
    for (int l = 0; l < 4; l++) cf[l] = sm->s->coef[r->seg[l]];
    bool one_seg = r->seg[0] == r->seg[3];   /* consecutive: all four in one segment */
    pm__v4 seg = {(double)r->seg[0], (double)r->seg[1], (double)r->seg[2], (double)r->seg[3]};
    pm__v4 t0, t1, ab[3];
    pm__v4_load5(r->t, &t0, &t1);
    const double *pts[3] = {r->px, r->py, r->pz};
    for (int k = 0; k < 3; k++) {
        pm__v4 a, b;
        pm__v4_load5(pts[k], &a, &b);
        ab[k] = b - a;
    }
    pm__chords_lanes(sm, r, cf, one_seg, seg, t0, t1, ab, wide);
}

#if PM__LANES_AVX
__attribute__((target("avx"))) static void pm__run_eval_avx(const pm__sampler *sm, pm__run *r) {
    pm__run_eval_lanes(sm, r, true);
}
#endif

static void pm__run_eval_plain(const pm__sampler *sm, pm__run *r) {
    pm__run_eval_lanes(sm, r, false);
}

/* Evaluates run r with the build this CPU runs (pm__sampler.wide). */
static inline void pm__run_eval(const pm__sampler *sm, pm__run *r) {
#if PM__LANES_AVX
    if (sm->wide) {
        pm__run_eval_avx(sm, r);
        return;
    }
#endif
    pm__run_eval_plain(sm, r);
}

/* Whether the plan tangent turns by more than the angle whose cosine is
 * cos_turn between first derivatives d0 and d1; a vanishing plan tangent
 * (a cusp) counts as turning. */
static bool pm__turn_exceeds(double cos_turn, const double d0[3], const double d1[3]) {
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

/* The slow side of pm__push: past max_samples, or the vector full. */
static __attribute__((noinline)) int pm__push_grow(pm__sampler *sm, const pm_curve_sample *c) {
    if (sm->v.len >= sm->max_samples) return PM_ERR_LIMIT;
    if (pm_vec_push(sm->a, &sm->v, *c) != 0) return PM_ERR_NOMEM;
    sm->room = sm->v.cap < sm->max_samples ? sm->v.cap : sm->max_samples;
    return PM_OK;
}

static inline __attribute__((always_inline)) int pm__push(pm__sampler *sm, double t, const double p[3], double err, double len,
                                                         bool exact) {
    pm_curve_sample c = {.t = t, .p = {p[0], p[1], p[2]}, .err = err, .len = len, .err_exact = exact};
    if (sm->v.len < sm->room) {   /* the common case: room below both the capacity and the cap */
        sm->v.data[sm->v.len++] = c;
        return PM_OK;
    }
    return pm__push_grow(sm, &c);
}

/* The point at tm inside segment seg (where rounding put tm on an end,
 * pm_spline_point's choice of segment). */
static inline __attribute__((always_inline)) void pm__cut_point(const pm__sampler *sm, uint32_t seg, double tm, double p[3]) {
    double s0 = (double)seg;
    if (tm > s0 && tm < s0 + 1.0) pm__point_at(sm->s->coef[seg], sm->o, tm - s0, p);
    else pm_spline_point(sm->s, sm->o, tm, p);
}

/* The verdict on chord l of evaluated run r at depth: 0 to accept it (*e
 * its error, *exact whether that is exact), else the number of equal
 * parameter pieces to cut it into (*bits the levels of depth they count). */
static __attribute__((noinline)) uint32_t pm__decide(pm__sampler *sm, const pm__run *r, int l,
                                                                 int depth, double *e_out, bool *exact_out,
                                                                 int *bits_out) {
    const pm_sample_opts *o = sm->o;
    double e = 0.0, len = r->len[l], t0 = r->t[l], t1 = r->t[l + 1];
    uint32_t seg = r->seg[l];
    bool exact = false, bound = false;
    /* Below the depth limit a chord beyond max_error is split whatever its
     * exact error, so the probes may stop at the first one beyond it. */
    double stop = depth < PM__SPLINE_MAX_DEPTH ? o->max_error : INFINITY;
    bool split = len > sm->max_len;
    if (!split) {
        double a[3], b[3], memo[PM__SPLINE_PROBES];
        /* Its error in closed form: the curve's own heights, or draped (a height bound). */
        if (o->height) {
            pm__run_get(r, l, a);
            pm__run_get(r, l + 1, b);
            bound = pm__drape_bound(o, stop, r->bound[l] != 0, r->e[l], a, b, &e);
        } else if (r->bound[l]) {
            bound = true;
            e = r->e[l];
        }
        if (bound) {
            exact = true;
            split = e > o->max_error;
        } else {
            pm__run_get(r, l, a);
            pm__run_get(r, l + 1, b);
            e = pm__chord_error(sm->s, o, t0, t1, a, b, PM__SPLINE_PROBES, false, stop, memo);
            split = e > o->max_error;
        }
        if (!split && !(o->max_turn <= 0.0)) {
            split = r->turn[l] > 0;
            if (r->turn[l] < 0) {   /* within 1e-12 of the bound, or out of sqrt's range */
                double d0[3], d1[3], s0 = (double)seg;
                pm__d1_in(sm->s, seg, t0 - s0, d0);
                pm__d1_in(sm->s, seg, t1 - s0, d1);
                split = pm__turn_exceeds(sm->cos_turn, d0, d1);
            }
        }
        /* Seven probes can miss an off-centre peak; a chord that is already
         * close to the bound gets a finer look before it is accepted (its
         * seven probes all ran: none was past max_error). */
        if (!split && !bound && e > 0.5 * o->max_error) {
            e = pm__chord_error(sm->s, o, t0, t1, a, b, PM__SPLINE_FINE_PROBES, true, stop, memo);
            exact = true;
            split = e > o->max_error;
        }
    }
    if (!split || depth >= PM__SPLINE_MAX_DEPTH) {
        *e_out = e;
        *exact_out = exact;
        return 0;
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
        while (bits < PM__SPLINE_MAX_DEPTH - depth && (double)k < want) {
            k *= 2;
            bits++;
        }
        if ((double)k > want) k = (uint32_t)want;   /* want > k / 2: still bits levels */
    }
    *bits_out = bits;
    return k;
}

static int pm__take(pm__sampler *sm, const pm__run *r, int depth);

/* The parameter where piece j of k of [t0, t1] ends (0 < j < k). */
static inline double pm__cut_at(double t0, double t1, uint32_t j, uint32_t k) {
    return k == 2 ? 0.5 * (t0 + t1) : t0 + (t1 - t0) * ((double)j / (double)k);
}

/* Points 1 .. cuts (cuts <= 4) of run c: where pieces j + 1 .. j + cuts
 * of k > 2 of [t0, t1] (inside segment seg) end, lane by lane as
 * pm__cut_at and pm__cut_point (the same operations in each lane); the
 * points in lanes (pm__point_at's Horner steps) where every cut lies
 * strictly inside the segment and no height override applies, else each
 * by pm__cut_point. Built twice as pm__run_eval is (pm__cut_points). */
static inline __attribute__((always_inline)) void pm__cut_points_lanes(const pm__sampler *sm, uint32_t seg,
                                                                       double t0, double t1, uint32_t j,
                                                                       uint32_t k, int cuts, pm__run *c) {
    double fj = (double)j, s0 = (double)seg;
    pm__v4 q = (pm__v4){fj + 1.0, fj + 2.0, fj + 3.0, fj + 4.0} / (double)k;   /* (double)(j + i): exact */
    pm__v4 t = t0 + (t1 - t0) * q;
    pm__m4 in = (pm__m4)(t > s0) & (pm__m4)(t < s0 + 1.0);
    /* lanes past cuts count as inside (their values are not used) */
    static const pm__m4 past[5] = {{-1, -1, -1, -1}, {0, -1, -1, -1}, {0, 0, -1, -1}, {0, 0, 0, -1}, {0, 0, 0, 0}};
    in |= past[cuts];
    memcpy(c->t + 1, &t, sizeof t);
    if (!sm->o->height && (in[0] & in[1]) & (in[2] & in[3])) {
        const double(*cf)[3] = sm->s->coef[seg];
        pm__v4 u = t - s0;
        double *dst[3] = {c->px + 1, c->py + 1, c->pz + 1};
        for (int m = 0; m < 3; m++) {
            pm__v4 pk = cf[0][m] + u * (cf[1][m] + u * (cf[2][m] + u * cf[3][m]));
            memcpy(dst[m], &pk, sizeof pk);
        }
        return;
    }
    for (int i = 0; i < cuts; i++) {
        double p[3];
        pm__cut_point(sm, seg, t[i], p);
        pm__run_set(c, i + 1, p);
    }
}

#if PM__LANES_AVX
__attribute__((target("avx"))) static void pm__cut_points_avx(const pm__sampler *sm, uint32_t seg, double t0,
                                                               double t1, uint32_t j, uint32_t k, int cuts,
                                                               pm__run *c) {
    pm__cut_points_lanes(sm, seg, t0, t1, j, k, cuts, c);
}
#endif

static void pm__cut_points_plain(const pm__sampler *sm, uint32_t seg, double t0, double t1, uint32_t j,
                                 uint32_t k, int cuts, pm__run *c) {
    pm__cut_points_lanes(sm, seg, t0, t1, j, k, cuts, c);
}

/* pm__cut_points_lanes with the build this CPU runs (pm__sampler.wide). */
static inline void pm__cut_points(const pm__sampler *sm, uint32_t seg, double t0, double t1, uint32_t j,
                                  uint32_t k, int cuts, pm__run *c) {
#if PM__LANES_AVX
    if (sm->wide) {
        pm__cut_points_avx(sm, seg, t0, t1, j, k, cuts, c);
        return;
    }
#endif
    pm__cut_points_plain(sm, seg, t0, t1, j, k, cuts, c);
}

/* Whether every piece of segment seg (its local u and u + h in [0, 1])
 * no shorter than the returned length (0: none) and no longer than
 * max_len would be accepted by pm__run_eval's verdict whatever its
 * rounding, so that with o->no_err only its length is needed. With
 * eps = 2^-53, sums over x, y, z of magnitudes S (all coefficients),
 * C1 (c1), N2 (|c2| + 3 |c3|, so |p''| / 2 <= N2) and N3 (c3), the
 * computed chord a -> b of a piece (u, u + h in [0, 1]) and its scaled
 * tangent q0 = h d(u) differ by at most dB = N2 + N3 + 2 D + 16 eps (C1 +
 * 2 N2 + S + max_len): exactly by h^2 (c2 + 3 u c3) + h^3 c3, plus the
 * two points' Horner rounding (6 eps S each) or their distance D from it
 * (the split chord's end), d's (5 eps (C1 + 2 N2)), h's own rounding
 * against u1 - u, and the products' and differences'. A piece of length
 * len >= 40 (dB + N2 + N3) then has sp0 within 0.03 of 1 and |sp1|,
 * |sp2| below 0.03, so every monotonicity test of the bound passes; over
 * the coordinates its computed A sums to at most (1 + sqrt 3) dB + 18 eps
 * len, A + B to at most (1 + sqrt 3) (N2 + 2 N3), and the peak is at most
 * 0.26 (|A| + |A + B|), below 0.3 (3 dB + 20 eps max_len + 3 N2 + 6 N3):
 * not past max_error when that is. The turn: the plan tangents at
 * u and u1 differ by at most 2 N2 + 2 E (E = 5 eps (C1 + 2 N2) each
 * one's rounding) and the first is at least 0.99 P1 - N2 - E long (P1
 * the plan |c1|); where that ratio is at most 0.001 the computed cosine
 * exceeds 0.997, so "no turn" wherever cos_turn + 1e-12 <= 0.997, and
 * the squared lengths stay within (1e-280, 1e280) for P1 > 1e-130 and
 * C1 + N2 < 1e130. Each "at most" keeps a factor of slack; the margins
 * a network's straight streets have are some nine orders of magnitude. */
static double pm__lean_cert(const pm__sampler *sm, uint32_t seg, double t0, double t1, const double b[3]) {
    const pm_sample_opts *o = sm->o;
    if (!o->no_err || o->height) return 0.0;
    bool turn = !(o->max_turn <= 0.0);
    if (turn && !(sm->cos_turn + 1e-12 <= 0.997)) return 0.0;
    const double(*c)[3] = sm->s->coef[seg];
    double s0 = (double)seg, S = 0.0, C1 = 0.0, N2 = 0.0, N3 = 0.0, D = 0.0, u0 = t0 - s0, u1 = t1 - s0;
    /* The sampler evaluates every point of a chord inside the segment by
     * its Horner steps at the point's u (cut points, halves,
     * pm_spline_point: the same operations), and its start at s0 is c0
     * either way; only an end at s0 + 1 may be another point: the next
     * segment's c0 (what pm_spline_point gives there, and where a cut
     * rounding onto the end lands), or a closed curve's first point. D
     * sums how far those are from the Horner value at u = 1 (c0 + (c1 +
     * (c2 + c3)), the steps with u = 1). */
    bool at_end = t1 == s0 + 1.0;
    const double *next = seg + 1 < sm->s->nseg ? sm->s->coef[seg + 1][0] : NULL;
    for (int k = 0; k < 3; k++) {
        S += fabs(c[0][k]) + fabs(c[1][k]) + fabs(c[2][k]) + fabs(c[3][k]);
        C1 += fabs(c[1][k]);
        N2 += fabs(c[2][k]) + 3.0 * fabs(c[3][k]);
        N3 += fabs(c[3][k]);
        if (at_end) {
            double h1 = c[0][k] + (c[1][k] + (c[2][k] + c[3][k]));
            D += fabs(b[k] - h1) + (next ? fabs(next[k] - h1) : 0.0);
        }
    }
    const double eps = 0x1p-53, ml = sm->max_len;
    if (!(S < 1e130 && ml < 1e130 && u0 >= 0.0 && u1 <= 1.0)) return 0.0;
    double dB = N2 + N3 + 2.0 * D + 16.0 * eps * (C1 + 2.0 * N2 + S + ml);
    if (!(0.3 * (3.0 * dB + 20.0 * eps * ml + 3.0 * N2 + 6.0 * N3) <= o->max_error)) return 0.0;
    if (turn) {
        double P1 = sqrt(c[1][0] * c[1][0] + c[1][2] * c[1][2]), E = 5.0 * eps * (C1 + 2.0 * N2);
        if (!(P1 > 1e-130 && 2.0 * N2 + 2.0 * E <= 0.001 * (0.99 * P1 - N2 - E))) return 0.0;
    }
    return 40.0 * (dB + N2 + N3);
}

/* Takes the m pieces of run c (points 0 .. m set) that pm__lean_cert's
 * length lmin covers: each one's length as pm__run_eval computes it, and
 * where every one is at least lmin and at most max_len (and not 0) and
 * ends by s1 (the segment's end: a cut that rounded past it would not be
 * the segment's), their ends pushed as pm__take would (err 0). False: not
 * all covered, nothing taken (*res untouched). */
static inline __attribute__((always_inline)) bool pm__lean_take_lanes(pm__sampler *sm, const pm__run *c, int m,
                                                                       double lmin, double s1, int *res, bool wide) {
    pm__v4 ab[3], z = {0.0, 0.0, 0.0, 0.0};
    const double *pts[3] = {c->px, c->py, c->pz};
    for (int k = 0; k < 3; k++) ab[k] = pm__v4_load(pts[k] + 1) - pm__v4_load(pts[k]);
    pm__v4 l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
    pm__v4 len = pm__v4_sqrt(l2, wide);
    double ml = sm->max_len;
    /* lanes past m count as covered (empty chords, not taken) */
    static const pm__m4 past[5] = {{-1, -1, -1, -1}, {0, -1, -1, -1}, {0, 0, -1, -1}, {0, 0, 0, -1}, {0, 0, 0, 0}};
    pm__m4 ok = ((pm__m4)(l2 > z) & (pm__m4)(len <= (pm__v4){ml, ml, ml, ml}) &
                 (pm__m4)(len >= (pm__v4){lmin, lmin, lmin, lmin}) &
                 (pm__m4)(pm__v4_load(c->t + 1) <= (pm__v4){s1, s1, s1, s1})) | past[m];
    if (!((ok[0] & ok[1]) & (ok[2] & ok[3]))) return false;
    const pm_sample_opts *o = sm->o;
    if (o->cancel && *o->cancel) {
        *res = PM_ERR_CANCELLED;
        return true;
    }
    int r = PM_OK;
    if (sm->room - sm->v.len >= 4) {   /* room for all: their ends in a row */
        pm_curve_sample *v = sm->v.data + sm->v.len;
        for (int l = 0; l < m; l++)
            v[l] = (pm_curve_sample){.t = c->t[l + 1], .p = {c->px[l + 1], c->py[l + 1], c->pz[l + 1]},
                                     .err = 0.0, .len = len[l], .err_exact = true};
        sm->v.len += (size_t)m;
    } else {
        for (int l = 0; l < m && r == PM_OK; l++)
            r = pm__push(sm, c->t[l + 1], (const double[3]){c->px[l + 1], c->py[l + 1], c->pz[l + 1]}, 0.0,
                         len[l], true);
    }
    *res = r;
    return true;
}

/* pm__lean_take_lanes in the build this CPU runs (pm__sampler.wide). */
#if PM__LANES_AVX
__attribute__((target("avx"))) static bool pm__lean_take_avx(pm__sampler *sm, const pm__run *c, int m, double lmin,
                                                             double s1, int *res) {
    return pm__lean_take_lanes(sm, c, m, lmin, s1, res, true);
}
#endif

static bool pm__lean_take(pm__sampler *sm, const pm__run *c, int m, double lmin, double s1, int *res) {
#if PM__LANES_AVX
    if (sm->wide) return pm__lean_take_avx(sm, c, m, lmin, s1, res);
#endif
    return pm__lean_take_lanes(sm, c, m, lmin, s1, res, false);
}

/* Lanes i0 .. i3 of a and b side by side (0 .. 3 a's, 4 .. 7 b's). */
#if defined(__clang__)
#define PM__SHUF4(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3)
#else
#define PM__SHUF4(a, b, i0, i1, i2, i3) __builtin_shuffle(a, b, (pm__m4){i0, i1, i2, i3})
#endif

/* One round of pm__split (pieces j + 1 .. j + m of k > 2 of [t0, t1],
 * inside segment seg; lmin > 0, pm__lean_cert's) without the run's
 * memory, where pm__cut_points would take its lanes (every cut strictly
 * inside the segment, no height override) and pm__lean_take would take
 * every piece: the same parameters and points (pm__cut_points_lanes'
 * operations; in the last round piece m ends at t1 on pb and the lanes
 * past it repeat that end, as pm__run_close), the same lengths, checks
 * and pushes. c's point 0 is where the round starts; once taken, where it
 * ends. False: not taken, nothing changed (the caller runs the round). */
static inline __attribute__((always_inline)) bool pm__lean_round_lanes(pm__sampler *sm, uint32_t seg, double t0,
                                                                        double t1, uint32_t j, uint32_t k, int m,
                                                                        const double pb[3], double lmin, pm__run *c,
                                                                        int *res, bool wide) {
    static const pm__m4 past[5] = {{-1, -1, -1, -1}, {0, -1, -1, -1}, {0, 0, -1, -1}, {0, 0, 0, -1}, {0, 0, 0, 0}};
    int cuts = j + (uint32_t)m == k ? m - 1 : m;
    double fj = (double)j, s0 = (double)seg;
    pm__v4 q = (pm__v4){fj + 1.0, fj + 2.0, fj + 3.0, fj + 4.0} / (double)k;
    pm__v4 t = t0 + (t1 - t0) * q;
    pm__m4 in = ((pm__m4)(t > s0) & (pm__m4)(t < s0 + 1.0)) | past[cuts];
    if (!pm__m4_all(in, wide)) return false;
    const double(*cf)[3] = sm->s->coef[seg];
    pm__v4 u = t - s0, P[3];
    for (int d = 0; d < 3; d++) P[d] = cf[0][d] + u * (cf[1][d] + u * (cf[2][d] + u * cf[3][d]));
    if (cuts < m)   /* the last round */
        for (int i = m - 1; i < 4; i++) {
            t[i] = t1;
            for (int d = 0; d < 3; d++) P[d][i] = pb[d];
        }
    /* pm__lean_take's pieces: from the round's start and each cut to the next */
    const double p0[3] = {c->px[0], c->py[0], c->pz[0]};
    pm__v4 ab[3];
    for (int d = 0; d < 3; d++) {
        pm__v4 b = {p0[d], p0[d], p0[d], p0[d]};
        ab[d] = P[d] - PM__SHUF4(b, P[d], 3, 4, 5, 6);   /* (p0, P0, P1, P2) */
    }
    pm__v4 l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2], z = {0.0, 0.0, 0.0, 0.0};
    pm__v4 len = pm__v4_sqrt(l2, wide);
    double ml = sm->max_len, s1 = s0 + 1.0;
    pm__m4 ok = ((pm__m4)(l2 > z) & (pm__m4)(len <= (pm__v4){ml, ml, ml, ml}) &
                 (pm__m4)(len >= (pm__v4){lmin, lmin, lmin, lmin}) & (pm__m4)(t <= (pm__v4){s1, s1, s1, s1})) |
                past[m];
    if (!pm__m4_all(ok, wide)) return false;
    const pm_sample_opts *o = sm->o;
    if (o->cancel && *o->cancel) {
        *res = PM_ERR_CANCELLED;
        return true;
    }
    int r = PM_OK;
    if (sm->room - sm->v.len >= 4) {
        pm_curve_sample *v = sm->v.data + sm->v.len;
        if (m == 4) {   /* every round but the last: the lanes' indices constants */
#pragma GCC unroll 4
            for (int l = 0; l < 4; l++)
                v[l] = (pm_curve_sample){.t = t[l], .p = {P[0][l], P[1][l], P[2][l]}, .err = 0.0, .len = len[l],
                                         .err_exact = true};
        } else {
            for (int l = 0; l < m; l++)
                v[l] = (pm_curve_sample){.t = t[l], .p = {P[0][l], P[1][l], P[2][l]}, .err = 0.0, .len = len[l],
                                         .err_exact = true};
        }
        sm->v.len += (size_t)m;
    } else {
        for (int l = 0; l < m && r == PM_OK; l++)
            r = pm__push(sm, t[l], (const double[3]){P[0][l], P[1][l], P[2][l]}, 0.0, len[l], true);
    }
    c->t[0] = t[m - 1];
    c->px[0] = P[0][m - 1];
    c->py[0] = P[1][m - 1];
    c->pz[0] = P[2][m - 1];
    *res = r;
    return true;
}

#if PM__LANES_AVX
__attribute__((target("avx"))) static bool pm__lean_round_avx(pm__sampler *sm, uint32_t seg, double t0, double t1,
                                                              uint32_t j, uint32_t k, int m, const double pb[3],
                                                              double lmin, pm__run *c, int *res) {
    return pm__lean_round_lanes(sm, seg, t0, t1, j, k, m, pb, lmin, c, res, true);
}
#endif

/* pm__lean_round_lanes in the build this CPU runs (pm__sampler.wide). */
static bool pm__lean_round(pm__sampler *sm, uint32_t seg, double t0, double t1, uint32_t j, uint32_t k, int m,
                           const double pb[3], double lmin, pm__run *c, int *res) {
#if PM__LANES_AVX
    if (sm->wide) return pm__lean_round_avx(sm, seg, t0, t1, j, k, m, pb, lmin, c, res);
#endif
    return pm__lean_round_lanes(sm, seg, t0, t1, j, k, m, pb, lmin, c, res, false);
}

/* Cuts chord l of run r into k equal parameter pieces at depth depth and
 * takes them in order, evaluating them four by four (with o->no_err,
 * pieces pm__lean_cert covers by their lengths alone). */
static int pm__split(pm__sampler *sm, const pm__run *r, int l, uint32_t k, int depth) {
    double t0 = r->t[l], t1 = r->t[l + 1], p[3];
    uint32_t seg = r->seg[l];
    pm__run c;
    c.t[0] = t0;
    pm__run_get(r, l, p);
    pm__run_set(&c, 0, p);
    /* Each piece pushes at least its end: room for them at once (the
     * vector grows once, not doubling through pushes), within the cap. */
    if (sm->v.len + k > sm->room && sm->v.len + k <= sm->max_samples) {
        if (pm_vec_reserve(sm->a, &sm->v, sm->v.len + k) != 0) return PM_ERR_NOMEM;
        sm->room = sm->v.cap < sm->max_samples ? sm->v.cap : sm->max_samples;
    }
    double pb[3];
    pm__run_get(r, l + 1, pb);
    double lmin = pm__lean_cert(sm, seg, t0, t1, pb);
    for (uint32_t j = 0; j < k; j += 4) {
        int m = k - j < 4 ? (int)(k - j) : 4;   /* pieces this round */
        int res;
        if (k > 2 && lmin > 0.0 && pm__lean_round(sm, seg, t0, t1, j, k, m, pb, lmin, &c, &res)) {
            if (res != PM_OK) return res;
            continue;
        }
        int cuts = j + (uint32_t)m == k ? m - 1 : m;   /* the last piece ends at t1 */
        if (k > 2) pm__cut_points(sm, seg, t0, t1, j, k, cuts, &c);
        for (int i = 1; i <= m; i++) {
            c.seg[i - 1] = seg;
            if (j + (uint32_t)i == k) {
                c.t[i] = t1;
                pm__run_get(r, l + 1, p);
                pm__run_set(&c, i, p);
            } else if (k == 2) {
                c.t[i] = pm__cut_at(t0, t1, j + (uint32_t)i, k);
                pm__cut_point(sm, seg, c.t[i], p);
                pm__run_set(&c, i, p);
            }
        }
        pm__run_close(&c, m);
        if (!(lmin > 0.0 && pm__lean_take(sm, &c, m, lmin, (double)seg + 1.0, &res))) {
            pm__run_eval(sm, &c);
            res = pm__take(sm, &c, depth);
        }
        if (res != PM_OK) return res;
        c.t[0] = c.t[m];
        c.px[0] = c.px[m];
        c.py[0] = c.py[m];
        c.pz[0] = c.pz[m];
    }
    return PM_OK;
}

/* Sets point i of run h to the midpoint of chord l of run r (evaluated in
 * lanes where r->mid holds, else here). */
static inline __attribute__((always_inline)) void pm__half_point(const pm__sampler *sm, const pm__run *r, int l,
                                                                  pm__run *h, int i) {
    h->t[i] = r->tm[l];
    if (r->mid[l]) {
        h->px[i] = r->mx[l];
        h->py[i] = r->my[l];
        h->pz[i] = r->mz[l];
    } else {
        double p[3];
        pm__cut_point(sm, r->seg[l], r->tm[l], p);
        pm__run_set(h, i, p);
    }
}

/* Takes the chords of evaluated run r, at depth, in order: each is
 * accepted (its end pushed) or cut. Neighbours that are both halved have
 * their four halves evaluated together. */
static int pm__take(pm__sampler *sm, const pm__run *r, int depth) {
    const pm_sample_opts *o = sm->o;
    if (o->cancel && *o->cancel) return PM_ERR_CANCELLED;
    int n = r->n, res = PM_OK;
    bool deep = depth >= PM__SPLINE_MAX_DEPTH;
    if (n == 4 && (r->accept[0] & r->accept[1] & r->accept[2] & r->accept[3]) && sm->room - sm->v.len >= 4) {
        /* all four accepted, with room: their ends in a row */
        pm_curve_sample *v = sm->v.data + sm->v.len;
        for (int l = 0; l < 4; l++)
            v[l] = (pm_curve_sample){.t = r->t[l + 1], .p = {r->px[l + 1], r->py[l + 1], r->pz[l + 1]},
                                     .err = r->e[l], .len = r->len[l], .err_exact = true};
        sm->v.len += 4;
        return PM_OK;
    }
    for (int l = 0; l < n && res == PM_OK; l++) {
        if (r->accept[l] || (r->halve[l] && deep)) {
            res = pm__push(sm, r->t[l + 1], (const double[3]){r->px[l + 1], r->py[l + 1], r->pz[l + 1]}, r->e[l],
                           r->len[l], true);
        } else if (r->halve[l]) {
            /* this chord's halves, and the next one's when it is halved too */
            pm__run h;
            int m = l + 1 < n && r->halve[l + 1] ? 2 : 1;
            for (int i = 0; i < m; i++) {
                h.t[2 * i] = r->t[l + i];
                h.px[2 * i] = r->px[l + i];
                h.py[2 * i] = r->py[l + i];
                h.pz[2 * i] = r->pz[l + i];
                pm__half_point(sm, r, l + i, &h, 2 * i + 1);
                h.seg[2 * i] = h.seg[2 * i + 1] = r->seg[l + i];
            }
            h.t[2 * m] = r->t[l + m];
            h.px[2 * m] = r->px[l + m];
            h.py[2 * m] = r->py[l + m];
            h.pz[2 * m] = r->pz[l + m];
            if (m == 2) h.n = 4;
            else pm__run_close(&h, 2);
            pm__run_eval(sm, &h);
            res = pm__take(sm, &h, depth + 1);
            l += m - 1;
        } else {
            double e;
            bool exact;
            int bits;
            uint32_t k = pm__decide(sm, r, l, depth, &e, &exact, &bits);
            if (k) res = pm__split(sm, r, l, k, depth + bits);
            else res = pm__push(sm, r->t[l + 1], (const double[3]){r->px[l + 1], r->py[l + 1], r->pz[l + 1]}, e,
                                r->len[l], exact);
        }
    }
    return res;
}

/* pm__point_at's Horner steps at u in segment c without a height
 * override, x, y and z in lanes 0 .. 2. Rows 0 .. 2 are read four
 * doubles at a time (the fourth, the next row's first, goes into the
 * unused lane). */
static inline __attribute__((always_inline)) pm__v4 pm__point_lanes(const double (*c)[3], double u) {
    pm__v4 c3 = {c[3][0], c[3][1], c[3][2], 0.0};
    return pm__v4_load(c[0]) + u * (pm__v4_load(c[1]) + u * (pm__v4_load(c[2]) + u * c3));
}

/* Points 1 .. m of run g and their chords' segments: the ends of
 * segments i .. i + m - 1 (t = i + 1 .. i + m), each as pm_spline_point
 * gives it (without a height override by pm__point_lanes: at u = 0 of
 * segment t, or u = 1 of the last segment at its end); a closed curve's
 * last end is first, bit for bit. */
static inline __attribute__((always_inline)) void pm__seg_ends_lanes(const pm__sampler *sm, uint32_t i, int m,
                                                                     const double first[3], pm__run *g) {
    const pm_spline *s = sm->s;
    uint32_t nseg = s->nseg;
    bool height = sm->o->height != NULL;
    for (int j = 1; j <= m; j++) {
        uint32_t end = i + (uint32_t)j;
        double p[3];
        g->t[j] = (double)end;
        g->seg[j - 1] = end - 1;
        if (s->closed && end == nseg) {
            memcpy(p, first, sizeof p);
        } else if (!height) {
            bool last = end == nseg;
            pm__v4 v = pm__point_lanes(s->coef[last ? end - 1 : end], last ? 1.0 : 0.0);
            p[0] = v[0];
            p[1] = v[1];
            p[2] = v[2];
        } else {
            pm_spline_point(s, sm->o, (double)end, p);
        }
        pm__run_set(g, j, p);
    }
}

/* A round of the segments' first chords: run g's points 1 .. m (from
 * point 0, the last round's end), closed after m, evaluated. Four ends
 * that are each the next segment's start (no height override) are four
 * pm__point_lanes transposed into x, y and z lanes (x0 y0 z0 . .. x3 y3
 * z3 . to x0 .. x3, y0 .. y3, z0 .. z3), evaluated by pm__chords_lanes
 * from those lanes (the parameters and segments are i .. i + 4 as
 * doubles, the figures pm__run_eval_lanes would read back: exact); any
 * other round by pm__seg_ends_lanes and pm__run_eval_lanes. */
static inline __attribute__((always_inline)) void pm__seg_round_lanes(const pm__sampler *sm, uint32_t i, int m,
                                                                      const double first[3], pm__run *g,
                                                                      bool wide) {
    const pm_spline *s = sm->s;
    if (sm->o->height || i + 4 >= s->nseg) {
        pm__seg_ends_lanes(sm, i, m, first, g);
        pm__run_close(g, m);
        pm__run_eval_lanes(sm, g, wide);
        return;
    }
    double(*c)[4][3] = s->coef + i;
    pm__v4 r[4];
    for (int j = 0; j < 4; j++) r[j] = pm__point_lanes(c[j + 1], 0.0);
    pm__v4 lo01 = PM__SHUF4(r[0], r[1], 0, 4, 2, 6), hi01 = PM__SHUF4(r[0], r[1], 1, 5, 3, 7);
    pm__v4 lo23 = PM__SHUF4(r[2], r[3], 0, 4, 2, 6), hi23 = PM__SHUF4(r[2], r[3], 1, 5, 3, 7);
    pm__v4 p[3] = {PM__SHUF4(lo01, lo23, 0, 1, 4, 5), PM__SHUF4(hi01, hi23, 0, 1, 4, 5),
                   PM__SHUF4(lo01, lo23, 2, 3, 6, 7)};
    pm__v4 t0 = (double)i + (pm__v4){0.0, 1.0, 2.0, 3.0}, t1 = t0 + 1.0;   /* (double)(i + j): exact */
    /* the chords' starts: point 0, then the first three ends */
    pm__v4 p0[3] = {{g->px[0], g->px[0], g->px[0], g->px[0]}, {g->py[0], g->py[0], g->py[0], g->py[0]},
                    {g->pz[0], g->pz[0], g->pz[0], g->pz[0]}};
    pm__v4 ab[3];
    for (int k = 0; k < 3; k++) ab[k] = p[k] - PM__SHUF4(p0[k], p[k], 3, 4, 5, 6);
    memcpy(g->px + 1, &p[0], sizeof p[0]);
    memcpy(g->py + 1, &p[1], sizeof p[1]);
    memcpy(g->pz + 1, &p[2], sizeof p[2]);
    memcpy(g->t + 1, &t1, sizeof t1);
    for (int j = 0; j < 4; j++) g->seg[j] = i + (uint32_t)j;
    g->n = 4;
    const double(*const cf[4])[3] = {c[0], c[1], c[2], c[3]};
    pm__chords_lanes(sm, g, cf, false, t0, t0, t1, ab, wide);
}

#if PM__LANES_AVX
__attribute__((target("avx"))) static void pm__seg_round_avx(const pm__sampler *sm, uint32_t i, int m,
                                                              const double first[3], pm__run *g) {
    pm__seg_round_lanes(sm, i, m, first, g, true);
}
#endif

static void pm__seg_round_plain(const pm__sampler *sm, uint32_t i, int m, const double first[3], pm__run *g) {
    pm__seg_round_lanes(sm, i, m, first, g, false);
}

/* pm__seg_round_lanes with the build this CPU runs (pm__sampler.wide). */
static inline void pm__seg_round(const pm__sampler *sm, uint32_t i, int m, const double first[3], pm__run *g) {
#if PM__LANES_AVX
    if (sm->wide) {
        pm__seg_round_avx(sm, i, m, first, g);
        return;
    }
#endif
    pm__seg_round_plain(sm, i, m, first, g);
}

static int pm__sample(pm_arena *a, const pm_spline *s, const pm_sample_opts *o, pm_curve_sample **out,
                      size_t *n, bool wide) {
    assert(o->max_error > 0.0 && o->max_segment > 0.0);
    pm__sampler sm = {.a = a, .s = s, .o = o, .cos_turn = cos(o->max_turn),
                      .max_len = o->max_segment * (1.0 + 1e-12),
                      .max_samples = o->max_samples ? o->max_samples : SIZE_MAX, .wide = wide};
    /* Segments four by four: evaluated together, then taken in order. */
    double first[3];
    pm_spline_point(s, o, 0.0, first);
    int r = pm__push(&sm, 0.0, first, 0.0, 0.0, true);
    pm__run g;
    g.t[0] = 0.0;
    pm__run_set(&g, 0, first);
    for (uint32_t i = 0; r == PM_OK && i < s->nseg; i += 4) {
        int m = s->nseg - i < 4 ? (int)(s->nseg - i) : 4;   /* segments this round */
        pm__seg_round(&sm, i, m, first, &g);
        r = pm__take(&sm, &g, 0);
        g.t[0] = g.t[m];
        g.px[0] = g.px[m];
        g.py[0] = g.py[m];
        g.pz[0] = g.pz[m];
    }
    if (r != PM_OK) return r;
    *out = sm.v.data;
    *n = sm.v.len;
    return PM_OK;
}

int pm_spline_sample(pm_arena *a, const pm_spline *s, const pm_sample_opts *o,
                     pm_curve_sample **out, size_t *n) {
#if PM__LANES_AVX
    return pm__sample(a, s, o, out, n, __builtin_cpu_supports("avx"));
#else
    return pm__sample(a, s, o, out, n, false);
#endif
}

int pm_spline_sample_plain_lanes(pm_arena *a, const pm_spline *s, const pm_sample_opts *o,
                                 pm_curve_sample **out, size_t *n) {
    return pm__sample(a, s, o, out, n, false);
}

double pm_spline_chord_error(const pm_spline *s, const pm_sample_opts *o,
                             const pm_curve_sample *smp, size_t n, uint32_t probes) {
    double worst = 0.0;
    for (size_t i = 0; i + 1 < n; i++) {
        double e = pm__chord_error(s, o, smp[i].t, smp[i + 1].t, smp[i].p, smp[i + 1].p, probes, true,
                                   INFINITY, NULL);
        if (e > worst) worst = e;
    }
    return worst;
}

double pm_spline_sample_error(const pm_spline *s, const pm_sample_opts *o,
                              const pm_curve_sample *smp, size_t n) {
    double worst = 0.0;
    bool estimates = false;
    for (size_t i = 1; i < n; i++) {
        if (smp[i].err_exact && smp[i].err > worst) worst = smp[i].err;
        estimates |= !smp[i].err_exact;
    }
    if (!estimates) return worst;   /* every error exact: nothing to refine */
    /* A 7-probe estimate misses a smooth peak by a few percent at most:
     * only estimates within 25% of the worst can change the answer. */
    for (size_t i = 1; i < n; i++) {
        if (smp[i].err_exact || smp[i].err * 1.25 <= worst) continue;
        double e = pm__chord_error(s, o, smp[i - 1].t, smp[i].t, smp[i - 1].p, smp[i].p,
                                   PM__SPLINE_FINE_PROBES, true, INFINITY, NULL);
        if (e > worst) worst = e;
    }
    return worst;
}

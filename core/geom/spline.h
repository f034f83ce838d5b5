#ifndef PM_SPLINE_H
#define PM_SPLINE_H
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "scene/arena.h"

/* Curves through control points [x, y, z], and their adaptive sampling.
 *
 * Catmull-Rom uses knot intervals |P(i+1) - P(i)|^alpha measured in plan
 * (x, z): alpha 0.5 (centripetal) gives a plan curve without cusps or
 * self-intersections inside a segment (Yuksel et al. 2011), which a road
 * needs more than a cusp-free 3D curve; the height y rides on the same
 * knots. Open curves get phantom end points reflected through the ends.
 * Each segment is stored as a cubic p(u) = c0 + c1 u + c2 u^2 + c3 u^3,
 * u in [0, 1]; the curve parameter t = segment + u runs over [0, nseg]. */

typedef enum pm_curve_kind {
    PM_CURVE_CATMULL_ROM = 0,
    PM_CURVE_LINEAR = 1,
} pm_curve_kind;

typedef struct pm_spline {
    pm_curve_kind kind;
    bool closed;
    uint32_t npoints;
    uint32_t nseg;          /* npoints - 1 open, npoints closed */
    double (*coef)[4][3];   /* nseg cubic coefficient sets */
} pm_spline;

/* Builds the curve through n points (3 * n doubles). Preconditions (the
 * caller validates): n >= 2 (>= 3 when closed), consecutive points (and the
 * last and first when closed) distinct in plan, 0 <= alpha <= 1. Returns 0
 * or PM_ERR_NOMEM. */
int pm_spline_init(pm_arena *a, pm_spline *s, const double *pts, size_t n, bool closed,
                   pm_curve_kind kind, double alpha);

/* Splits t into a segment index and a local u in [0, 1]. */
static inline uint32_t pm__spline_locate(const pm_spline *s, double t, double *u) {
    if (t <= 0.0) { *u = 0.0; return 0; }
    if (t >= (double)s->nseg) { *u = 1.0; return s->nseg - 1; }
    uint32_t i = (uint32_t)t;   /* floor(t), as 0 < t < nseg, without the call */
    *u = t - (double)i;
    return i;
}

/* Position p and first and second derivatives with respect to t, each
 * where not NULL, at curve parameter t in [0, nseg]. Inline: a road
 * frames every sample with it, and a call per sample (with its NULL
 * tests) cost as much as the arithmetic. */
static inline void pm_spline_eval(const pm_spline *s, double t, double p[3], double d1[3], double d2[3]) {
    double u;
    uint32_t i = pm__spline_locate(s, t, &u);
    double c[4][3];   /* a copy: the stores below cannot alias it, so no reloads */
    memcpy(c, s->coef[i], sizeof c);
    if (p)
        for (int k = 0; k < 3; k++) p[k] = c[0][k] + u * (c[1][k] + u * (c[2][k] + u * c[3][k]));
    if (d1)
        for (int k = 0; k < 3; k++) d1[k] = c[1][k] + u * (2.0 * c[2][k] + u * 3.0 * c[3][k]);
    if (d2)
        for (int k = 0; k < 3; k++) d2[k] = 2.0 * c[2][k] + 6.0 * u * c[3][k];
}

/* Signed plan curvature at t (1/m): > 0 where the curve turns left (towards
 * -right, right = tangent x up), 0 on straight or linear curves. */
double pm_spline_curvature(const pm_spline *s, double t);
/* The same from the derivatives pm_spline_eval gave at t. */
static inline double pm_spline_curvature_of(const pm_spline *s, const double d1[3], const double d2[3]) {
    if (s->kind == PM_CURVE_LINEAR) return 0.0;
    double sp2 = d1[0] * d1[0] + d1[2] * d1[2];
    if (sp2 <= 0.0) return 0.0;
    /* With right = (-tz, 0, tx), a left turn (towards -right) is positive. */
    return (d2[0] * d1[2] - d2[2] * d1[0]) / (sp2 * sqrt(sp2));
}

/* Optional height override: y = height(ctx, x, z) replaces the curve's own
 * y, so a road draped on terrain is sampled against its real 3D shape. */
typedef double (*pm_height_fn)(const void *ctx, double x, double z);

/* Optional with a height override: an upper bound on |height(P) - h(s)|
 * over every plan point P within plan distance dp of the plan chord a -> b
 * (a and b on the ground: their y is height there) that projects onto
 * the chord at fraction s, where h(s) is the chord's own height there.
 * It may return any value above stop as soon as it knows the bound
 * exceeds stop. Then the sampler bounds a draped chord's 3D error as
 * sqrt(dp^2 + bound^2), dp the plan curve's closed-form bound (see
 * pm_spline_sample), instead of probing it. */
typedef double (*pm_height_bound_fn)(const void *ctx, const double a[3], const double b[3],
                                     double dp, double stop);

typedef struct pm_sample_opts {
    double max_error;       /* > 0: distance from the curve to each chord */
    double max_segment;     /* > 0: longest chord (3D) */
    double max_turn;        /* radians between plan tangents of one chord; 0 = off */
    uint32_t max_samples;   /* 0 = no cap; past it sampling fails with PM_ERR_LIMIT */
    pm_height_fn height;    /* NULL: the curve's own heights */
    pm_height_bound_fn height_bound;   /* NULL: a draped chord's error is probed */
    const void *height_ctx;
    const volatile int *cancel;  /* NULL, or raised to stop (PM_ERR_CANCELLED) */
    /* The caller reads no sample's err: a split chord's pieces that a
     * certificate shows would all be accepted (see pm__lean_cert) are
     * taken without their closed-form bound, err 0. Every other field is
     * as without it, bit for bit. */
    bool no_err;
} pm_sample_opts;

typedef struct pm_curve_sample {
    double t;               /* curve parameter */
    double p[3];            /* position, with the height override applied */
    double err;             /* chord error of the chord ending here (0 first) */
    double len;             /* that chord's 3D length, pm_v3_dist of its ends (0 first) */
    bool err_exact;         /* err was refined; else from 7 probes, <= max_error / 2 */
} pm_curve_sample;

/* Point at t with the height override of o applied (o may be NULL). */
void pm_spline_point(const pm_spline *s, const pm_sample_opts *o, double t, double p[3]);

/* Adaptive sampling: every segment is split recursively until the chord
 * is no longer than max_segment (to 1e-12 of it, for rounding), the curve
 * stays within max_error of the chord, and the plan tangent turns less
 * than max_turn. A chord too long is cut into k = ceil(len / max_segment)
 * equal parameter pieces (the fewest that can fit: a straight segment at
 * uniform speed gets exactly k chords), and a piece still too long (curved
 * or non-uniform) is cut again by the same rule; a chord past max_error or
 * max_turn is cut at its parameter midpoint. A k-way cut counts as
 * ceil(log2 k) levels, and recursion stops at 2^-30 of a segment (k is
 * capped so that no piece is narrower).
 * The chord error comes in closed form (an upper bound, exact for a plane
 * curve without inflection) for the curve's own heights, and with a height
 * override that has a height_bound as sqrt(dp^2 + bound^2) (dp the
 * plan part's closed form): max_error then holds by construction. Where
 * the chord's projection does not run monotonically along the curve there
 * is no bound: a draped chord is then split (and probed at the depth
 * limit); else the error is probed at 7 interior points; near the bound,
 * at 15 and then around the worst probe by golden-section search.
 * Control points are always samples. Closed curves end with a copy of the
 * first sample (t = nseg). Returns 0 with *out (in a) and *n set, or
 * PM_ERR_NOMEM, PM_ERR_LIMIT, PM_ERR_CANCELLED. */
int pm_spline_sample(pm_arena *a, const pm_spline *s, const pm_sample_opts *o,
                     pm_curve_sample **out, size_t *n);

/* pm_spline_sample with its lane code's plain x86-64 build even where the
 * CPU has AVX (pm_spline_sample picks the AVX one there): the same
 * samples, bit for bit. For tests. */
int pm_spline_sample_plain_lanes(pm_arena *a, const pm_spline *s, const pm_sample_opts *o,
                                 pm_curve_sample **out, size_t *n);

/* The closed-form chord bound's last step, as pm_spline_sample computes
 * it: the peak over v in [0, 1] of v (1 - v) (ga + d v), ga >= 0,
 * d >= -ga (ga = |A|, d = |A + B| - |A| of the curve's distance across
 * the chord, v (1 - v) (A + B v)). For tests. */
double pm_spline_bump_peak(double ga, double d);

/* The achieved chord error of a sampling from its recorded per-chord
 * errors: exact ones as they are, and the few 7-probe estimates that could
 * matter refined. Equal to pm_spline_chord_error with dense probes, at a
 * fraction of its cost. */
double pm_spline_sample_error(const pm_spline *s, const pm_sample_opts *o,
                              const pm_curve_sample *smp, size_t n);

/* The achieved chord error of a sampling: the largest distance from the
 * curve to the chord that replaces it, per chord from `probes` (>= 1)
 * points evenly spaced in t, refined around the worst one. */
double pm_spline_chord_error(const pm_spline *s, const pm_sample_opts *o,
                             const pm_curve_sample *smp, size_t n, uint32_t probes);

/* Distance from point p to segment ab (3D). */
double pm_point_segment_distance(const double p[3], const double a[3], const double b[3]);
#endif

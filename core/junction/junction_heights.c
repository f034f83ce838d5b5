/* Junction heights: the height field between arms at different elevations
 * (inverse squared distance to the mouth edges) and the points a sloped
 * junction's contour needs so that its straight edges follow that field.
 * The contour is also the curb's seam, so these points go into the blocks
 * before the contour is snapped, and the curb and sidewalk follow them. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "junction/junction_internal.h"

int pm__heights_init(pm__junction *J) {
    double lo = J->arms[0].elev, hi = lo, far = 0;
    /* Comparisons, not fmin/fmax calls: every value here is finite, and
     * where they could differ (which of -0 and +0) nothing below can tell. */
    for (size_t k = 0; k < J->n; k++) {
        double e = J->arms[k].elev;
        lo = e < lo ? e : lo;
        hi = e > hi ? e : hi;
    }
    J->sloped = lo != hi;
    /* A flat junction reads none of what follows: its height is one
     * elevation (pm__jheight), and the tolerances are for the points a
     * sloped one adds (pm__densify, pm__tmesh_refine). */
    if (!J->sloped) return 0;
    J->mouth_seg = pm_arena_alloc(J->a, 2 * J->n * sizeof *J->mouth_seg);
    J->mouth_inv_l2 = pm_arena_alloc(J->a, J->n * sizeof *J->mouth_inv_l2);
    if (!J->mouth_seg || !J->mouth_inv_l2) return PM_ERR_NOMEM;
    pm_v2 bmin = J->blocks[0].pts.data[0].p, bmax = bmin;
    for (size_t k = 0; k < J->n; k++) {
        const pm__jblock *prev = &J->blocks[(k + J->n - 1) % J->n], *b = &J->blocks[k];
        J->mouth_seg[2 * k] = pm__final(J, prev->pts.data[prev->pts.len - 1].p);
        J->mouth_seg[2 * k + 1] = pm__final(J, b->pts.data[0].p);
        pm_v2 ab = pm_v2_sub(J->mouth_seg[2 * k + 1], J->mouth_seg[2 * k]);
        /* A mouth is never a single point (see pm__contour); 0 keeps t = 0. */
        J->mouth_inv_l2[k] = pm_v2_dot(ab, ab) > 0 ? 1 / pm_v2_dot(ab, ab) : 0;
        for (size_t j = 0; j < b->pts.len; j++) {
            pm_v2 p = b->pts.data[j].p;
            double ax = fabs(p.x), ay = fabs(p.y), m = ax > ay ? ax : ay;
            bmin = pm_v2_xy(p.x < bmin.x ? p.x : bmin.x, p.y < bmin.y ? p.y : bmin.y);
            bmax = pm_v2_xy(p.x > bmax.x ? p.x : bmax.x, p.y > bmax.y ? p.y : bmax.y);
            far = m > far ? m : far;
        }
    }
    /* Heights are written snapped and as floats: below that noise there is
     * nothing to follow. 1% of the elevation range (3 cm between arms 3 m
     * apart) is well under what shading shows on a road, and keeps the
     * shape of the mesh independent of the range. */
    double noise = fmax(J->prm->snap, FLT_EPSILON * fmax(fabs(lo), fabs(hi)));
    J->tol = fmax((hi - lo) / 100, 2 * noise);
    /* The size floor keeps a discontinuity of the field (two mouths sharing
     * a corner point) from drawing points without end. */
    double xy_noise = fmax(J->prm->snap, FLT_EPSILON * far);
    J->hmin = fmax(pm_v2_len(pm_v2_sub(bmax, bmin)) / 256, 16 * xy_noise);
    return 0;
}

/* pm__jheight of a sloped junction. */
double pm__jheight_sloped(const pm__junction *J, pm_v2 p) {
    double sw = 0, swe = 0, zw = 0, zwe = 0;
    for (size_t k = 0; k < J->n; k++) {
        /* Squared distance to the mouth edge a + t (b - a), t in [0, 1]. */
        pm_v2 a = J->mouth_seg[2 * k], ab = pm_v2_sub(J->mouth_seg[2 * k + 1], a), ap = pm_v2_sub(p, a);
        double t = pm_v2_dot(ap, ab) * J->mouth_inv_l2[k];
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        pm_v2 d = pm_v2_sub(ap, pm_v2_scale(ab, t));
        double d2 = pm_v2_dot(d, d);
        if (d2 == 0) { zw += 1; zwe += J->arms[k].elev; continue; }
        sw += 1 / d2;
        swe += J->arms[k].elev / d2;
    }
    return zw > 0 ? zwe / zw : swe / sw;
}

/* How far the straight edge from a to b (final points) strays from the
 * field, sampled at its quarter points. */
static double pm__edge_error(const pm__junction *J, pm_v2 a, pm_v2 b) {
    double ya = pm__final_y(J, pm__jheight(J, a)), yb = pm__final_y(J, pm__jheight(J, b)), e = 0;
    for (int i = 1; i <= 3; i++) {
        double t = 0.25 * i;
        e = fmax(e, fabs(ya + t * (yb - ya) - pm__jheight(J, pm_v2_axpy(a, t, pm_v2_sub(b, a)))));
    }
    return e;
}

static bool pm__edge_needs_point(const pm__junction *J, pm_v2 a, pm_v2 b) {
    a = pm__final(J, a);
    b = pm__final(J, b);
    return pm_v2_len(pm_v2_sub(b, a)) > J->hmin && pm__edge_error(J, a, b) > 0.5 * J->tol;
}

typedef PM_VEC(pm__jpt) pm__jpts;

/* Pushes the points strictly between a and b that the edge needs, in
 * order, halving it as often as its error asks (at most depth times). */
static int pm__split_run(pm__junction *J, pm__jpts *out, pm__jpt a, pm__jpt b, int depth) {
    if (depth == 0 || !pm__edge_needs_point(J, a.p, b.p)) return 0;
    pm__jpt m = {pm_v2_scale(pm_v2_add(a.p, b.p), 0.5), pm_v2_scale(pm_v2_add(a.out, b.out), 0.5),
                 0.5 * (a.ch + b.ch)};
    int rc = pm__split_run(J, out, a, m, depth - 1);
    if (rc == 0) rc = pm_vec_push(J->a, out, m) < 0 ? PM_ERR_NOMEM : 0;
    return rc == 0 ? pm__split_run(J, out, m, b, depth - 1) : rc;
}

static int pm__densify_block(pm__junction *J, pm__jblock *blk) {
    pm__jpts out = {0};
    size_t cut = 0;
    for (size_t j = 0; j < blk->pts.len; j++) {
        if (j == blk->cut) cut = out.len;
        if (pm_vec_push(J->a, &out, blk->pts.data[j]) < 0) return PM_ERR_NOMEM;
        if (j + 1 == blk->pts.len) break;
        int rc = pm__split_run(J, &out, blk->pts.data[j], blk->pts.data[j + 1], 12);
        if (rc < 0) return rc;
    }
    blk->pts.data = out.data;
    blk->pts.len = out.len;
    blk->pts.cap = out.cap;
    blk->cut = cut;
    return 0;
}

static pm_v2 pm__island_pt(const pm__junction *J, double a) {
    return pm__final(J, pm_v2_axpy(J->c, J->Ri, pm_v2_xy(cos(a), sin(a))));
}

typedef PM_VEC(double) pm__dvec;

static int pm__split_arc(pm__junction *J, pm__dvec *out, double a, double b, int depth) {
    if (depth == 0 || !pm__edge_needs_point(J, pm__island_pt(J, a), pm__island_pt(J, b)))
        return 0;
    double m = 0.5 * (a + b);
    int rc = pm__split_arc(J, out, a, m, depth - 1);
    if (rc == 0) rc = pm_vec_push(J->a, out, m) < 0 ? PM_ERR_NOMEM : 0;
    return rc == 0 ? pm__split_arc(J, out, m, b, depth - 1) : rc;
}

/* The island ring: angles stay increasing, the cuts keep pointing at their
 * own angles. */
static int pm__densify_island(pm__junction *J) {
    size_t n = J->island_ang.len;
    pm__dvec out = {0};
    size_t *map = pm_arena_alloc(J->a, n * sizeof *map);
    if (!map) return PM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        map[i] = out.len;
        double a = J->island_ang.data[i];
        double b = i + 1 < n ? J->island_ang.data[i + 1] : J->island_ang.data[0] + 2 * PM__PI;
        if (pm_vec_push(J->a, &out, a) < 0) return PM_ERR_NOMEM;
        int rc = pm__split_arc(J, &out, a, b, 12);
        if (rc < 0) return rc;
    }
    for (size_t k = 0; k < J->n; k++) J->cut_island[k] = map[J->cut_island[k]];
    J->island_ang.data = out.data;
    J->island_ang.len = out.len;
    J->island_ang.cap = out.cap;
    return 0;
}

int pm__densify(pm__junction *J) {
    if (!J->sloped) return 0;
    for (size_t k = 0; k < J->n; k++) {
        int rc = pm__densify_block(J, &J->blocks[k]);
        if (rc < 0) return rc;
    }
    return J->ring ? pm__densify_island(J) : 0;
}

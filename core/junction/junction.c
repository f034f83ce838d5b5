/* Junction generator: the centre, the arms in angular order, diagnostics and
 * metadata. The contour is built in junction_contour.c, the mesh in
 * junction_mesh.c. */
#include "junction/junction.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "junction/junction_internal.h"
#include "scene/meta.h"
#include "scene/result.h"

const char *pm_junction_error_name(pm_junction_error e) {
    switch (e) {
    case PM_JUNCTION_OK: return "ok";
    case PM_JUNCTION_ARMS_TOO_CLOSE: return "arms_too_close";
    case PM_JUNCTION_ARM_TOO_SHORT: return "arm_too_short";
    case PM_JUNCTION_SELF_INTERSECTION: return "self_intersection";
    case PM_JUNCTION_SIDEWALK_NO_FIT: return "sidewalk_no_fit";
    case PM_JUNCTION_RING_NO_FIT: return "ring_no_fit";
    case PM_JUNCTION_TOO_SMALL: return "too_small";
    case PM_JUNCTION_LINKS_OVERLAP: return "links_overlap";
    }
    return "unknown";
}

int pm__jfail(pm__junction *J, pm_junction_error e, int arm_a, int arm_b, const char *fmt, ...) {
    pm_junction_diag *d = J->diag;
    d->error = e;
    d->narms = 0;
    d->short_arm = -1;
    if (arm_a >= 0) d->arms[d->narms++] = arm_a;
    if (arm_b >= 0 && arm_b != arm_a) d->arms[d->narms++] = arm_b;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof d->message, fmt, ap);
    va_end(ap);
    return PM_ERR_GEOMETRY;
}

int pm__jfail_beyond(pm__junction *J, const pm__jarm *A, const pm__jarm *B, const pm__jarm *S, double at) {
    int rc = pm__jfail(J, PM_JUNCTION_ARM_TOO_SHORT, A->index, B->index,
                       "the corner between arms %d and %d lies %.3f m along arm %d, beyond its %.3f m",
                       A->index, B->index, at, S->index, S->len);
    J->diag->short_arm = S->index;
    return rc;
}

/* A warning about corner `corner`, naming its two arms. */
static pm_junction_warning pm__warning(const pm__junction *J, size_t corner,
                                       pm_junction_warning_code code) {
    const pm__jcorner *C = &J->corners[corner];
    pm_junction_warning w;
    memset(&w, 0, sizeof w);
    w.code = code;
    w.corner = (uint32_t)corner;
    w.arms[0] = J->arms[C->a].index;
    w.arms[1] = J->arms[C->b].index;
    if (code == PM_JUNCTION_WARN_SIDEWALK_DROPPED) {
        w.trim[0] = C->qa;
        w.trim[1] = C->qb;
        w.requested_radius = w.radius = C->r;
    }
    return w;
}

int pm__jwarn(pm__junction *J, size_t corner, double requested, double actual) {
    pm_junction_warning w = pm__warning(J, corner, PM_JUNCTION_WARN_RADIUS);
    w.requested_radius = requested;
    w.radius = actual;
    snprintf(w.message, sizeof w.message,
             "corner between arms %d and %d: radius reduced from %g to %.3f m to fit",
             w.arms[0], w.arms[1], requested, actual);
    return pm_vec_push(J->a, &J->warnings, w) == 0 ? 0 : PM_ERR_NOMEM;
}

int pm__jwarn_sidewalk(pm__junction *J, size_t corner, int arm, double at, double room) {
    pm_junction_warning w = pm__warning(J, corner, PM_JUNCTION_WARN_SIDEWALK_DROPPED);
    snprintf(w.message, sizeof w.message,
             "corner between arms %d and %d: no sidewalk (its corner would lie %.3f m along arm "
             "%d, beyond its %.3f m)", w.arms[0], w.arms[1], at, arm, room);
    return pm_vec_push(J->a, &J->warnings, w) == 0 ? 0 : PM_ERR_NOMEM;
}

int pm__jwarn_chain_sidewalk(pm__junction *J, size_t corner) {
    pm_junction_warning w = pm__warning(J, corner, PM_JUNCTION_WARN_SIDEWALK_DROPPED);
    snprintf(w.message, sizeof w.message,
             "corner between arms %d and %d: no sidewalk round this corner of the merged "
             "junction; the arms' sidewalks start %.3f and %.3f m out", w.arms[0], w.arms[1],
             w.trim[0], w.trim[1]);
    return pm_vec_push(J->a, &J->warnings, w) == 0 ? 0 : PM_ERR_NOMEM;
}

/* ---- centre ---------------------------------------------------------------- */

/* Last segment of a centerline arm: its end (at the junction) and the point
 * before it, in the internal frame. */
static void pm__last_segment(const pm_junction_arm *arm, pm_v2 *end, pm_v2 *prev) {
    size_t n = arm->centerline_len;
    *end = pm__from_xz(arm->centerline[2 * (n - 1)], arm->centerline[2 * (n - 1) + 1]);
    *prev = pm__from_xz(arm->centerline[2 * (n - 2)], arm->centerline[2 * (n - 2) + 1]);
}

static pm_v2 pm__center_two(pm_v2 e0, pm_v2 d0, pm_v2 e1, pm_v2 d1) {
    double s = pm_v2_cross(d0, d1);
    /* Nearly parallel last segments meet nowhere useful. */
    if (fabs(s) < 1e-2) return pm_v2_scale(pm_v2_add(e0, e1), 0.5);
    double t = pm_v2_cross(pm_v2_sub(e1, e0), d1) / s;
    return pm_v2_axpy(e0, t, d0);
}

void pm_junction_center(const pm_junction_params *prm, double out[2]) {
    if (prm->has_center) { out[0] = prm->center[0]; out[1] = prm->center[1]; return; }
    size_t nc = 0;
    pm_v2 e[2] = {{0, 0}, {0, 0}}, d[2] = {{0, 0}, {0, 0}}, sum_e = {0, 0};
    double m00 = 0, m01 = 0, m11 = 0, b0 = 0, b1 = 0;
    for (size_t i = 0; i < prm->narms; i++) {
        const pm_junction_arm *arm = &prm->arms[i];
        if (!arm->centerline) continue;
        pm_v2 end, prev;
        pm__last_segment(arm, &end, &prev);
        pm_v2 u = pm_v2_unit(pm_v2_sub(prev, end));
        if (nc < 2) { e[nc] = end; d[nc] = u; }
        sum_e = pm_v2_add(sum_e, end);
        /* Normal equations of sum |(I - u u^T)(x - end)|^2. */
        double p00 = 1 - u.x * u.x, p01 = -u.x * u.y, p11 = 1 - u.y * u.y;
        m00 += p00; m01 += p01; m11 += p11;
        b0 += p00 * end.x + p01 * end.y;
        b1 += p01 * end.x + p11 * end.y;
        nc++;
    }
    pm_v2 c = {0, 0};
    if (nc == 1) {
        c = e[0];
    } else if (nc == 2) {
        c = pm__center_two(e[0], d[0], e[1], d[1]);
    } else if (nc > 2) {
        double det = m00 * m11 - m01 * m01;
        if (det > 1e-6 * (m00 + m11) * (m00 + m11))
            c = pm_v2_xy((m11 * b0 - m01 * b1) / det, (m00 * b1 - m01 * b0) / det);
        else
            c = pm_v2_scale(sum_e, 1.0 / (double)nc);
    }
    out[0] = c.x;
    out[1] = -c.y;
}

/* ---- memo ------------------------------------------------------------------ */

pm_junction_memo *pm_junction_memo_create(pm_arena *a) {
    pm_junction_memo *m = pm_arena_calloc(a, 1, sizeof *m);
    if (m) m->a = a;
    return m;
}

static uint64_t pm__bits64(double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* atan2(y, x), looked up in the memo's table first (by the arguments'
 * bits: the same bits give the same value) and kept there. */
static double pm__atan2_memo(pm_junction_memo *m, double y, double x) {
    if (!m) return atan2(y, x);
    uint64_t by = pm__bits64(y), bx = pm__bits64(x);
    uint64_t h = (by * 0x9e3779b97f4a7c15u) ^ (bx * 0xc2b2ae3d27d4eb4fu);
    pm__memo_angle *e = &m->angle[(h ^ (h >> 29)) >> 32 & (PM__MEMO_ANGLES - 1)];
    if (e->used && e->y == by && e->x == bx) return e->angle;
    double a = atan2(y, x);
    *e = (pm__memo_angle){by, bx, a, true};
    return a;
}

/* ---- arms ------------------------------------------------------------------ */

static int pm__arm_cmp(const void *a, const void *b) {
    const pm__jarm *x = a, *y = b;
    if (x->angle != y->angle) return x->angle < y->angle ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int pm__arms(pm__junction *J) {
    const pm_junction_params *prm = J->prm;
    double c2[2];
    pm_junction_center(prm, c2);
    J->c = pm__from_xz(c2[0], c2[1]);
    J->n = prm->narms;
    J->arms = pm_arena_calloc(J->a, J->n, sizeof *J->arms);
    J->corners = pm_arena_calloc(J->a, J->n, sizeof *J->corners);
    J->blocks = pm_arena_calloc(J->a, J->n, sizeof *J->blocks);
    if (!J->arms || !J->corners || !J->blocks) return PM_ERR_NOMEM;
    for (size_t i = 0; i < J->n; i++) {
        const pm_junction_arm *in = &prm->arms[i];
        pm__jarm *A = &J->arms[i];
        A->index = (int)i;
        if (in->centerline) {
            pm_v2 end, prev;
            pm__last_segment(in, &end, &prev);
            A->d = pm_v2_unit(pm_v2_sub(prev, end));
            A->o = pm_v2_axpy(end, pm_v2_dot(pm_v2_sub(J->c, end), A->d), A->d);
            A->len = pm_v2_dot(pm_v2_sub(prev, A->o), A->d);
            if (!(A->len > 0))
                return pm__jfail(J, PM_JUNCTION_ARM_TOO_SHORT, (int)i, -1,
                                 "arm %zu's last centerline segment does not reach past the "
                                 "junction centre", i);
        } else {
            A->d = pm_v2_unit(pm__from_xz(in->direction[0], in->direction[1]));
            A->o = J->c;
            A->len = in->length > 0 ? in->length : INFINITY;
        }
        if (prm->nnodes) {
            A->node = in->node;
            A->o = pm__from_xz(prm->nodes[2 * in->node], prm->nodes[2 * in->node + 1]);
        }
        A->n = pm_v2_left(A->d);
        A->h = 0.5 * in->width;
        A->elev = in->elevation;
        A->angle = pm__atan2_memo(prm->memo, A->d.y, A->d.x);
        if (A->angle < 0) A->angle += 2 * PM__PI;
        A->sw = in->has_sidewalk;
        A->sw_w = in->has_sidewalk ? in->sidewalk.width : 0;
        A->sw_ch = in->has_sidewalk ? in->sidewalk.curb_height : 0;
    }
    /* (angle, index) is a total order, so this insertion sort (a handful
     * of arms, no call per comparison) gives qsort's order. */
    for (size_t i = 1; i < J->n; i++) {
        pm__jarm x = J->arms[i];
        size_t j = i;
        for (; j > 0 && pm__arm_cmp(&x, &J->arms[j - 1]) < 0; j--) J->arms[j] = J->arms[j - 1];
        J->arms[j] = x;
    }
    if (prm->nnodes) {
        int rc = pm__merged_order(J);
        if (rc) return rc;
    }
    const double min_sep = PM_JUNCTION_PARALLEL_DEG * PM__PI / 180.0;
    for (size_t k = 0; k < J->n; k++) {
        const pm__jarm *A = &J->arms[k], *B = &J->arms[(k + 1) % J->n];
        if (J->corners[k].nvia) continue;      /* a corner along links */
        double gap = B->angle - A->angle;
        if (prm->nnodes ? gap < 0 : k + 1 == J->n) gap += 2 * PM__PI;
        if (gap < min_sep)
            return pm__jfail(J, PM_JUNCTION_ARMS_TOO_CLOSE, A->index, B->index,
                             "arms %d and %d are %.2f degrees apart; at least %g are needed "
                             "to separate them", A->index, B->index, gap * 180.0 / PM__PI,
                             PM_JUNCTION_PARALLEL_DEG);
    }
    return 0;
}

/* ---- metadata ---------------------------------------------------------------- */

/* [x, z] of an internal point; + 0.0 turns -0 into 0 for tidy JSON. */
static pm_meta *pm__xz(pm_arena *a, pm_v2 p) {
    double v[2] = {p.x + 0.0, -p.y + 0.0};
    return pm_meta_nums(a, v, 2);
}

static pm_meta *pm__vertex_meta(pm_arena *a, const pm_prim *p, uint32_t i) {
    double v[3] = {p->positions[3 * i], p->positions[3 * i + 1], p->positions[3 * i + 2]};
    return pm_meta_nums(a, v, 3);
}

static pm_meta *pm__sidewalk_meta(pm_arena *a, const pm__jarm *A) {
    if (!A->sw) return pm_meta_null(a);
    pm_meta *o = pm_meta_obj(a);
    int rc = pm_meta_set_lit(o, "width", pm_meta_num(a, A->sw_w));
    rc |= pm_meta_set_lit(o, "curb_height", pm_meta_num(a, A->sw_ch));
    return rc == 0 ? o : NULL;
}

static pm_meta *pm__arm_meta(pm__junction *J, size_t k, const pm_prim *asphalt) {
    pm_arena *a = J->a;
    const pm__jarm *A = &J->arms[k];
    pm_meta *o = pm_meta_obj(a), *m = pm_meta_obj(a);
    int rc = pm_meta_set_lit(o, "index", pm_meta_int(a, A->index));
    rc |= pm_meta_set_lit(o, "order", pm_meta_int(a, (int64_t)k));
    rc |= pm_meta_set_lit(o, "direction", pm__xz(a, A->d));
    rc |= pm_meta_set_lit(o, "angle", pm_meta_num(a, A->angle * 180.0 / PM__PI + 0.0));
    rc |= pm_meta_set_lit(o, "width", pm_meta_num(a, 2 * A->h));
    rc |= pm_meta_set_lit(o, "elevation", pm_meta_num(a, A->elev));
    rc |= pm_meta_set_lit(o, "sidewalk", pm__sidewalk_meta(a, A));
    rc |= pm_meta_set_lit(m, "distance", pm_meta_num(a, A->mouth));
    rc |= pm_meta_set_lit(m, "left", pm__vertex_meta(a, asphalt, J->mouth_left[k]));
    rc |= pm_meta_set_lit(m, "right", pm__vertex_meta(a, asphalt, J->mouth_right[k]));
    rc |= pm_meta_set_lit(m, "left_index", pm_meta_int(a, J->mouth_left[k]));
    rc |= pm_meta_set_lit(m, "right_index", pm_meta_int(a, J->mouth_right[k]));
    rc |= pm_meta_set_lit(o, "mouth", m);
    return rc == 0 ? o : NULL;
}

static const char *pm__kind_name(pm__corner_kind k) {
    return k == PM__FILLET ? "fillet" : k == PM__STRAIGHT ? "straight" : k == PM__RING ? "ring" : "links";
}

/* A number node as pm_meta_num makes it (non-finite: null) in place. */
static void pm__num_at(pm_meta *m, double v) {
    m->kind = isfinite(v) ? PM_META_NUM : PM_META_NULL;
    if (m->kind == PM_META_NUM) m->u.n = v;
}

/* The corner's object: the tree pm_meta_obj, pm_meta_ints, pm_meta_num
 * and pm_meta_set_lit would build, its nodes in one block (a town's
 * junctions list thousands of corners), linked by pm_meta_push and
 * pm_meta_set_lit. */
static pm_meta *pm__corner_meta(pm__junction *J, size_t k) {
    const pm__jcorner *C = &J->corners[k];
    pm_meta *b = pm_arena_alloc(J->a, 9 * sizeof *b);
    if (!b) return NULL;
    memset(b, 0, 9 * sizeof *b);
    pm_meta *o = b, *arms = b + 1, *kind = b + 4, *angle = b + 5, *req = b + 6, *rad = b + 7, *sw = b + 8;
    o->kind = PM_META_OBJ;
    arms->kind = PM_META_ARR;
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        arms[1 + i].kind = PM_META_INT;
        arms[1 + i].u.i = J->arms[i ? C->b : C->a].index;
        rc |= pm_meta_push(arms, &arms[1 + i]);
    }
    kind->kind = PM_META_STR;
    kind->u.s = pm__kind_name(C->kind);
    pm__num_at(angle, C->phi * 180.0 / PM__PI);
    pm__num_at(req, C->kind == PM__STRAIGHT ? 0 : C->r_req);
    pm__num_at(rad, C->r);
    sw->kind = PM_META_BOOL;
    sw->u.b = C->sw;
    rc |= pm_meta_set_lit(o, "arms", arms);
    rc |= pm_meta_set_lit(o, "kind", kind);
    rc |= pm_meta_set_lit(o, "angle", angle);
    rc |= pm_meta_set_lit(o, "requested_radius", req);
    rc |= pm_meta_set_lit(o, "radius", rad);
    if (C->kind == PM__FILLET) rc |= pm_meta_set_lit(o, "point", pm__xz(J->a, C->p));
    rc |= pm_meta_set_lit(o, "sidewalk", sw);
    return rc == 0 ? o : NULL;
}

static pm_meta *pm__points_meta(pm_arena *a, const pm_v2 *p, size_t n) {
    pm_meta *arr = pm_meta_arr(a);
    int rc = arr ? 0 : -1;
    for (size_t i = 0; i < n && rc == 0; i++) rc = pm_meta_push(arr, pm__xz(a, p[i]));
    return rc == 0 ? arr : NULL;
}

static pm_meta *pm__warnings_meta(pm__junction *J) {
    pm_arena *a = J->a;
    pm_meta *arr = pm_meta_arr(a);
    int rc = arr ? 0 : -1;
    for (size_t i = 0; i < J->warnings.len && rc == 0; i++) {
        const pm_junction_warning *w = &J->warnings.data[i];
        pm_meta *o = pm_meta_obj(a);
        int64_t arms[2] = {w->arms[0], w->arms[1]};
        bool radius = w->code == PM_JUNCTION_WARN_RADIUS;
        rc |= pm_meta_set_lit(o, "code", pm_meta_str(a, radius ? "corner_radius_reduced"
                                                              : "corner_sidewalk_dropped"));
        rc |= pm_meta_set_lit(o, "corner", pm_meta_int(a, w->corner));
        rc |= pm_meta_set_lit(o, "arms", pm_meta_ints(a, arms, 2));
        if (radius) rc |= pm_meta_set_lit(o, "requested_radius", pm_meta_num(a, w->requested_radius));
        if (radius) rc |= pm_meta_set_lit(o, "radius", pm_meta_num(a, w->radius));
        rc |= pm_meta_set_lit(o, "message", pm_meta_str(a, w->message));
        rc |= pm_meta_push(arr, o);
    }
    return rc == 0 ? arr : NULL;
}

/* Each arm's mouth for diag->mouths, in request order. */
static int pm__mouths(pm__junction *J) {
    pm_junction_mouth *m = pm_arena_alloc(J->a, J->n * sizeof *m);
    if (!m) return PM_ERR_NOMEM;
    for (size_t k = 0; k < J->n; k++)
        m[J->arms[k].index] = (pm_junction_mouth){J->mouth_left[k], J->mouth_right[k], J->arms[k].mouth};
    J->diag->mouths = m;
    return 0;
}

/* What pm_network reads: the corners and the warnings. */
static int pm__lean_metadata(pm__junction *J) {
    pm_arena *a = J->a;
    pm_meta *corners = pm_meta_arr(a);
    int rc = corners ? 0 : -1;
    for (size_t k = 0; k < J->n && rc == 0; k++) rc |= pm_meta_push(corners, pm__corner_meta(J, k));
    rc |= pm_meta_set_lit(J->scene->meta, "corners", corners);
    rc |= pm_meta_set_lit(J->scene->meta, "warnings", pm__warnings_meta(J));
    return rc == 0 ? 0 : PM_ERR_NOMEM;
}

static int pm__metadata(pm__junction *J) {
    pm_arena *a = J->a;
    if (pm__mouths(J)) return PM_ERR_NOMEM;
    if (J->prm->lean_meta) return pm__lean_metadata(J);
    pm_meta *meta = J->scene->meta, *arms = pm_meta_arr(a), *order = pm_meta_arr(a),
            *corners = pm_meta_arr(a);
    const pm_prim *asphalt = &J->scene->prims[0];
    int rc = (arms && order && corners) ? 0 : -1;
    /* Arms in request order; "order" lists them counter-clockwise. */
    for (size_t i = 0; i < J->n && rc == 0; i++)
        for (size_t k = 0; k < J->n; k++)
            if (J->arms[k].index == (int)i) rc = pm_meta_push(arms, pm__arm_meta(J, k, asphalt));
    for (size_t k = 0; k < J->n && rc == 0; k++) {
        rc |= pm_meta_push(order, pm_meta_int(a, J->arms[k].index));
        rc |= pm_meta_push(corners, pm__corner_meta(J, k));
    }
    rc |= pm_meta_set_lit(meta, "center", pm__xz(a, J->c));
    rc |= pm_meta_set_lit(meta, "arms", arms);
    rc |= pm_meta_set_lit(meta, "order", order);
    rc |= pm_meta_set_lit(meta, "corners", corners);
    rc |= pm_meta_set_lit(meta, "contour", pm__points_meta(a, J->contour, J->ncontour));
    if (J->ring) {
        pm_meta *r = pm_meta_obj(a);
        rc |= pm_meta_set_lit(r, "radius", pm_meta_num(a, J->R));
        rc |= pm_meta_set_lit(r, "island_radius", pm_meta_num(a, J->Ri));
        rc |= pm_meta_set_lit(r, "island", pm__points_meta(a, J->island, J->nisland));
        rc |= pm_meta_set_lit(r, "island_first_index", pm_meta_int(a, (int64_t)J->ncontour));
        rc |= pm_meta_set_lit(meta, "roundabout", r);
    }
    rc |= pm_meta_set_lit(meta, "warnings", pm__warnings_meta(J));
    return rc == 0 ? 0 : PM_ERR_NOMEM;
}

/* ---- entry point ------------------------------------------------------------- */

static void pm__check_params(const pm_junction_params *p) {
    assert(p->narms >= (p->nnodes ? 1u : 2u) && p->arms);
    assert(p->corner_radius >= 0 && isfinite(p->corner_radius));
    assert(p->corner_segments >= 2);
    assert(p->uv_scale > 0 && p->snap > 0);
    for (size_t i = 0; i < p->narms; i++) {
        const pm_junction_arm *a = &p->arms[i];
        assert(a->width > 0 && isfinite(a->elevation));
        assert(a->centerline ? a->centerline_len >= 2
                             : (a->direction[0] != 0 || a->direction[1] != 0));
        assert(!a->has_sidewalk || (a->sidewalk.width > 0 && a->sidewalk.curb_height > 0));
        assert(!p->nnodes || (!a->centerline && a->node < p->nnodes));
        (void)a;
    }
    assert(!p->nnodes || (p->nodes && p->nlinks >= p->nnodes - 1 && !p->has_roundabout));
    for (size_t i = 0; i < p->nlinks; i++)
        assert(p->links[i].a < p->nnodes && p->links[i].b < p->nnodes &&
               p->links[i].a != p->links[i].b && p->links[i].width > 0);
    assert(!p->has_roundabout || (p->roundabout.island_radius > 0 &&
                                  p->roundabout.island_radius < p->roundabout.radius &&
                                  p->roundabout.segments >= 8 &&
                                  p->roundabout.island_height > 0));
    (void)p;
}

/* One attempt; chain_fillets false: corners along links stay sharp; cut:
 * corners beyond an arm's room are cut (cut_tight_corners). */
static int pm__generate(pm_scene *scene, const pm_junction_params *params, pm_junction_diag *diag,
                        bool chain_fillets, bool cut, bool *filleted) {
    memset(diag, 0, sizeof *diag);
    pm__junction J;
    memset(&J, 0, sizeof J);
    J.a = scene->arena;
    J.scene = scene;
    J.prm = params;
    J.diag = diag;
    J.ring = params->has_roundabout;
    J.R = params->roundabout.radius;
    J.Ri = params->roundabout.island_radius;
    J.chain_fillets = chain_fillets;
    J.cut = cut;
    int rc = pm__arms(&J);
    if (rc == 0) rc = pm__junction_corners(&J);
    for (size_t k = 0; rc == 0 && k < J.n; k++) J.any_sidewalk = J.any_sidewalk || J.corners[k].sw;
    if (rc == 0) rc = pm__junction_blocks(&J);
    if (rc == 0) rc = pm__junction_mesh(&J);
    if (rc == 0 && params->nnodes) rc = pm__merged_cover(&J);
    if (rc == 0) rc = pm__metadata(&J);
    diag->warnings = J.warnings.data;
    diag->nwarnings = J.warnings.len;
    *filleted = J.nchain_fillets > 0;
    return rc;
}

int pm_junction_generate(pm_scene *scene, const pm_junction_params *params,
                         pm_junction_diag *diag) {
    pm__check_params(params);
    bool filleted = false;
    uint32_t nprims = scene->nprims;
    int rc = PM_ERR_GEOMETRY;
    /* Cut corners only once nothing else builds: whatever builds without
     * cut_tight_corners builds the same with it. */
    for (int cut = 0; cut <= (int)params->cut_tight_corners && rc == PM_ERR_GEOMETRY; cut++) {
        if (cut) {
            scene->nprims = nprims;     /* what the attempts before added is dropped */
            scene->validated = false;
        }
        rc = pm__generate(scene, params, diag, true, cut, &filleted);
        /* A merged junction whose fillets along links do not fit (they cut
         * into another part of its outline) keeps those corners sharp. */
        if (rc == PM_ERR_GEOMETRY && filleted) {
            scene->nprims = nprims;
            scene->validated = false;
            rc = pm__generate(scene, params, diag, false, cut, &filleted);
        }
    }
    return rc;
}

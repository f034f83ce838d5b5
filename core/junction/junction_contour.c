/* Junction contour: corners from curb-line intersections, fillet radii that
 * fit, mouths, and the blocks of points between neighbouring mouths. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "junction/junction_internal.h"
#include "geom/predicates.h"

/* Wraps an angle to (-pi, pi]. */
static double pm__wrap(double a) {
    while (a <= -PM__PI) a += 2 * PM__PI;
    while (a > PM__PI) a -= 2 * PM__PI;
    return a;
}

/* ---- ordinary corners ---------------------------------------------------- */

/* Where a's left curb line meets b's right curb line, each moved outward by
 * its extra offset (0 for the curbs, the sidewalk width for the sidewalk's
 * outer lines); parameters along a and b. sin_phi != 0. */
static void pm__curb_meet(const pm__jarm *A, const pm__jarm *B, double offa, double offb,
                          double sin_phi, double *t, double *s) {
    pm_v2 delta = pm_v2_sub(pm__arm_pt(B, -1, 0, B->h + offb), pm__arm_pt(A, 1, 0, A->h + offa));
    *t = pm_v2_cross(delta, B->d) / sin_phi;
    *s = pm_v2_cross(delta, A->d) / sin_phi;
}

/* ---- cut corners (cut_tight_corners) -------------------------------------- */

/* Where A's curb line on side sa (+1 left, -1 right) meets B's on side sb:
 * the parameters along each arm from its o. sin_phi != 0. */
static void pm__sides_meet(const pm__jarm *A, double sa, const pm__jarm *B, double sb,
                           double sin_phi, double *t, double *s) {
    pm_v2 delta = pm_v2_sub(pm__arm_pt(B, sb, 0, B->h), pm__arm_pt(A, sa, 0, A->h));
    *t = pm_v2_cross(delta, B->d) / sin_phi;
    *s = pm_v2_cross(delta, A->d) / sin_phi;
}

double pm__cut_need(const pm__jarm *A, const pm__jarm *B, bool a_short, double room, double at,
                    double lead, double snap, double sin_phi) {
    /* The strips' overlap: the rhombus of the four curb lines, in order
     * round it, each vertex's parameters along S (cs) and O (co). */
    static const double side[4][2] = {{1, -1}, {1, 1}, {-1, 1}, {-1, -1}};
    double cs[4], co[4];
    for (int i = 0; i < 4; i++) {
        double t, u;
        pm__sides_meet(A, side[i][0], B, side[i][1], sin_phi, &t, &u);
        cs[i] = a_short ? t : u;
        co[i] = a_short ? u : t;
    }
    double need = at + fmax(PM__MIN_RADIUS_SNAPS * snap, 0.25 * lead) / sin_phi;
    for (int i = 0; i < 4; i++) {
        int j = (i + 1) % 4;
        double fi = cs[i] - room, fj = cs[j] - room;
        if (fi >= 0) need = fmax(need, co[i]);
        if ((fi < 0) != (fj < 0)) need = fmax(need, co[i] + (co[j] - co[i]) * (fi / (fi - fj)));
    }
    return need;
}

/* A corner beyond one arm's room even at radius 0 (the short arm S; O the
 * other): the two roads as drawn overlap out to the corner, past S's room.
 * The junction keeps S's mouth at its room and runs a straight edge from
 * S's curb there to O's curb at a mouth far enough out (pm__cut_need):
 * the two roads beyond their mouths then cannot overlap, the edge stays
 * out of S's road (it leaves S's curb line outward, at an angle, so
 * snapping cannot fold it back), and the little triangle between the edge
 * and the two curbs is left unpaved. Returns 0 when built, 1 when it does
 * not apply (both arms short: the roads overlap beyond both rooms; or O
 * has no room for its mouth), or PM_ERR_NOMEM. */
static int pm__cut_corner(pm__junction *J, size_t k, double sin_phi) {
    pm__jcorner *C = &J->corners[k];
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    bool a_short = C->tp > A->len, b_short = C->sp > B->len;
    if (a_short == b_short || !(sin_phi > 0)) return 1;
    if (A->sw && B->sw && !J->prm->drop_tight_sidewalks) return 1;
    const pm__jarm *O = a_short ? B : A;
    double room = a_short ? A->len : B->len;
    double at = a_short ? C->sp : C->tp, lead = (a_short ? C->tp : C->sp) - room;
    double need = pm__cut_need(A, B, a_short, room, at, lead, J->prm->snap, sin_phi);
    if (!(need <= O->len)) return 1;
    C->cut = true;
    C->r = 0;
    C->ta = a_short ? room : need;
    C->sb = a_short ? need : room;
    C->fc = C->p;
    C->sw = false;
    int rc = 0;
    if (A->sw && B->sw) {
        /* No slab on the edge (its band would lie on S's road): the arms'
         * sidewalks start where their outer lines meet. */
        C->wq = fmax(A->sw_w, B->sw_w);
        pm__curb_meet(A, B, C->wq, C->wq, sin_phi, &C->qa, &C->qb);
        C->qa = fmax(C->qa, C->ta);
        C->qb = fmax(C->qb, C->sb);
        rc = pm__jwarn_sidewalk(J, k, a_short ? A->index : B->index, a_short ? C->qa : C->qb, room);
    }
    if (rc == 0 && C->r_req > 0) rc = pm__jwarn(J, k, C->r_req, 0);
    return rc;
}

static int pm__fillet_corner(pm__junction *J, size_t k) {
    pm__jcorner *C = &J->corners[k];
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    double sin_phi = pm_v2_cross(A->d, B->d), cos_phi = pm_v2_dot(A->d, B->d);
    double tan_half = (1 - cos_phi) / sin_phi;     /* tan(phi / 2), stable for phi < pi */
    pm__curb_meet(A, B, 0, 0, sin_phi, &C->tp, &C->sp);
    C->p = pm__arm_pt(A, 1, C->tp, A->h);
    /* A short arm bounds the tangent point, hence the radius. */
    double r = C->r_req;
    if (isfinite(A->len)) r = fmin(r, (A->len - C->tp) * tan_half);
    if (isfinite(B->len)) r = fmin(r, (B->len - C->sp) * tan_half);
    if (r < 0 && J->cut) {
        int rc = pm__cut_corner(J, k, sin_phi);
        if (rc <= 0) return rc;
    }
    if (r < 0) {
        bool a_short = isfinite(A->len) && C->tp > A->len;
        return pm__jfail_beyond(J, A, B, a_short ? A : B, a_short ? C->tp : C->sp);
    }
    /* A fillet under a few snap steps would be a zigzag of snapped points. */
    if (r < PM__MIN_RADIUS_SNAPS * J->prm->snap) r = 0;
    C->r = r;
    C->ta = C->tp + r / tan_half;
    C->sb = C->sp + r / tan_half;
    C->fc = pm_v2_axpy(pm__arm_pt(A, 1, C->ta, A->h), r, A->n);
    C->sw = A->sw && B->sw;
    if (C->sw && fmax(A->sw_w, B->sw_w) >= r) {
        /* The sidewalk's outer edge cannot follow an arc of radius r - w < 0:
         * it gets the sharp corner of its two outer lines instead, both at
         * the wider of the two widths, so that the corner lies beyond the
         * fillet (a narrow side widens toward it). */
        C->qmode = true;
        C->wq = fmax(A->sw_w, B->sw_w);
        pm__curb_meet(A, B, C->wq, C->wq, sin_phi, &C->qa, &C->qb);
        if ((C->qa > A->len || C->qb > B->len) && !J->prm->drop_tight_sidewalks)
            return pm__jfail(J, PM_JUNCTION_SIDEWALK_NO_FIT, A->index, B->index,
                             "the sidewalk corner between arms %d and %d does not fit on "
                             "arm %d", A->index, B->index,
                             C->qa > A->len ? A->index : B->index);
        if (C->qa > A->len || C->qb > B->len) {
            /* Its outer corner lies beyond an arm's room, where the slab
             * would reach over the road: the corner gets no slab (the
             * arms' sidewalks end at the mouth), with a warning. */
            C->sw = false;
            C->qmode = false;
            int rc = pm__jwarn_sidewalk(J, k, C->qa > A->len ? A->index : B->index,
                                        C->qa > A->len ? C->qa : C->qb,
                                        C->qa > A->len ? A->len : B->len);
            if (rc) return rc;
        }
    }
    if (r < C->r_req) return pm__jwarn(J, k, C->r_req, r);
    return 0;
}

/* ---- roundabout corners -------------------------------------------------- */

/* The circle of radius r tangent to the curb line on `side` of arm A (on the
 * side away from the arm) and outside the ring (radius R about the centre).
 * With r = w it also gives where the sidewalk's outer line meets the ring's
 * offset circle. Returns false when that line misses the circle. */
static bool pm__ring_fillet(const pm__junction *J, const pm__jarm *A, double side, double r,
                            pm__ringfillet *out) {
    pm_v2 q = pm_v2_sub(pm__arm_pt(A, side, 0, A->h + r), J->c);
    double qd = pm_v2_dot(q, A->d), qn = pm_v2_dot(q, A->n), rr = J->R + r;
    double disc = rr * rr - qn * qn;
    if (!(disc > 0)) return false;
    out->t = -qd + sqrt(disc);
    out->f = pm__arm_pt(A, side, out->t, A->h + r);
    pm_v2 u = pm_v2_sub(out->f, J->c);
    out->tc = pm_v2_axpy(J->c, J->R / pm_v2_len(u), u);
    return true;
}

/* Angle of p about the centre relative to the middle of corner C's gap. */
static double pm__gap_rel(const pm__junction *J, const pm__jcorner *C, pm_v2 p) {
    const pm__jarm *A = &J->arms[C->a];
    pm_v2 u = pm_v2_sub(p, J->c);
    return pm__wrap(atan2(u.y, u.x) - (A->angle + C->phi / 2));
}

typedef enum { PM__RING_FITS, PM__RING_SHORT, PM__RING_MISS, PM__RING_OVERLAP } pm__ring_fit;

/* Whether radius r works for corner C: both fillets exist, their tangent
 * points stay on the arms, and their ring tangent points keep their order. */
static pm__ring_fit pm__ring_try(const pm__junction *J, pm__jcorner *C, double r) {
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    if (!pm__ring_fillet(J, A, 1, r, &C->fl) || !pm__ring_fillet(J, B, -1, r, &C->fr))
        return PM__RING_MISS;
    if (C->fl.t > A->len || C->fr.t > B->len) return PM__RING_SHORT;
    /* The ring arc between the fillets must stay a few snap steps long. */
    double margin = PM__MIN_RADIUS_SNAPS * J->prm->snap / J->R;
    if (!(pm__gap_rel(J, C, C->fl.tc) + margin < pm__gap_rel(J, C, C->fr.tc)))
        return PM__RING_OVERLAP;
    return PM__RING_FITS;
}

static int pm__ring_fail(pm__junction *J, const pm__jcorner *C, pm__ring_fit why) {
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    if (why == PM__RING_SHORT)
        return pm__jfail(J, PM_JUNCTION_ARM_TOO_SHORT, A->index, B->index,
                         "arms %d and %d are too short to reach the ring", A->index, B->index);
    if (why == PM__RING_MISS)
        return pm__jfail(J, PM_JUNCTION_RING_NO_FIT, A->index, B->index,
                         "a curb of arm %d or %d misses the ring: make the roundabout "
                         "radius larger than the arms' half widths", A->index, B->index);
    return pm__jfail(J, PM_JUNCTION_RING_NO_FIT, A->index, B->index,
                     "arms %d and %d overlap where they meet the ring: separate them or "
                     "make the roundabout larger", A->index, B->index);
}

/* Sidewalk corner of one ring fillet: when the sidewalk is at least as wide
 * as the fillet, its outer line meets the ring's offset circle in a point. */
static int pm__ring_sidewalk(pm__junction *J, const pm__jcorner *C, const pm__jarm *A,
                             double side, pm__ringfillet *F) {
    if (!C->sw || A->sw_w < C->r) return 0;
    pm__ringfillet q;
    if (!pm__ring_fillet(J, A, side, A->sw_w, &q) || q.t > A->len)
        return pm__jfail(J, PM_JUNCTION_SIDEWALK_NO_FIT, J->arms[C->a].index,
                         J->arms[C->b].index, "the sidewalk of arm %d does not fit where "
                         "it meets the ring", A->index);
    F->qmode = true;
    F->tq = q.t;
    return 0;
}

/* When the sidewalks' outer corners at the two fillets would cross along
 * the ring, the two outer lines meet before the ring: the whole block's
 * outer edge is then that one point, as at an ordinary corner. */
static int pm__ring_sidewalk_meet(pm__junction *J, pm__jcorner *C) {
    if (!C->sw || !(C->fl.qmode || C->fr.qmode)) return 0;
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    pm_v2 qa = C->fl.qmode ? pm__arm_pt(A, 1, C->fl.tq, A->h + A->sw_w) : C->fl.tc;
    pm_v2 qb = C->fr.qmode ? pm__arm_pt(B, -1, C->fr.tq, B->h + B->sw_w) : C->fr.tc;
    if (pm__gap_rel(J, C, qa) < pm__gap_rel(J, C, qb)) return 0;
    double sin_phi = pm_v2_cross(A->d, B->d);
    if (sin_phi > 1e-9) {
        C->wq = fmax(A->sw_w, B->sw_w);
        pm__curb_meet(A, B, C->wq, C->wq, sin_phi, &C->qa, &C->qb);
        if (C->qa <= A->len && C->qb <= B->len) {
            C->qmode = true;
            return 0;
        }
    }
    return pm__jfail(J, PM_JUNCTION_SIDEWALK_NO_FIT, A->index, B->index,
                     "the sidewalks of arms %d and %d overlap along the ring", A->index,
                     B->index);
}

static int pm__ring_corner(pm__junction *J, size_t k) {
    pm__jcorner *C = &J->corners[k];
    pm__ring_fit fit = pm__ring_try(J, C, C->r_req);
    double r = C->r_req;
    if (fit != PM__RING_FITS) {
        pm__ring_fit at0 = pm__ring_try(J, C, 0);
        if (at0 != PM__RING_FITS) return pm__ring_fail(J, C, at0);
        /* Every condition is monotone in r: bisect for the largest radius. */
        double lo = 0, hi = C->r_req;
        for (int i = 0; i < 60; i++) {
            double mid = 0.5 * (lo + hi);
            if (pm__ring_try(J, C, mid) == PM__RING_FITS) lo = mid; else hi = mid;
        }
        r = lo < PM__MIN_RADIUS_SNAPS * J->prm->snap ? 0 : lo;
        fit = pm__ring_try(J, C, r);
        assert(fit == PM__RING_FITS);
    }
    C->r = r;
    C->sw = J->arms[C->a].sw && J->arms[C->b].sw;
    int rc = pm__ring_sidewalk(J, C, &J->arms[C->a], 1, &C->fl);
    if (rc == 0) rc = pm__ring_sidewalk(J, C, &J->arms[C->b], -1, &C->fr);
    if (rc == 0) rc = pm__ring_sidewalk_meet(J, C);
    if (rc == 0 && r < C->r_req) rc = pm__jwarn(J, k, C->r_req, r);
    return rc;
}

/* ---- corners and mouths -------------------------------------------------- */

/* Raises arm's mouth to parameter t when a corner needs it. */
static void pm__need(pm__jarm *A, double t) {
    if (!A->has_corner || t > A->mouth) A->mouth = t;
    A->has_corner = true;
}

static int pm__mouths(pm__junction *J) {
    for (size_t k = 0; k < J->n; k++) J->arms[k].has_corner = false;
    for (size_t k = 0; k < J->n; k++) {
        const pm__jcorner *C = &J->corners[k];
        pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
        if (C->kind == PM__FILLET || C->kind == PM__CHAIN) {
            pm__need(A, C->ta);
            pm__need(B, C->sb);
            if (C->qmode) { pm__need(A, C->qa); pm__need(B, C->qb); }
        } else if (C->kind == PM__RING) {
            pm__need(A, C->fl.t);
            pm__need(B, C->fr.t);
            if (C->fl.qmode) pm__need(A, C->fl.tq);
            if (C->fr.qmode) pm__need(B, C->fr.tq);
            if (C->qmode) { pm__need(A, C->qa); pm__need(B, C->qb); }
        }
    }
    /* Never behind the centre; an arm with straight joins on both sides gets
     * a square-ish piece of road its half width long (or its room, if less). */
    for (size_t k = 0; k < J->n; k++) {
        pm__jarm *A = &J->arms[k];
        if (A->has_corner) A->mouth = fmax(A->mouth, 0.0);
        else A->mouth = fmin(A->h, A->len);
    }
    /* A sidewalk round the back of a straight join turns within its width
     * of the centre line: the mouths stay beyond that, so the band never
     * reaches past them into the arm's own road. */
    for (size_t k = 0; k < J->n; k++) {
        const pm__jcorner *C = &J->corners[k];
        if (C->kind != PM__STRAIGHT || !C->sw) continue;
        double w = fmax(J->arms[C->a].sw_w, J->arms[C->b].sw_w);
        for (int side = 0; side < 2; side++) {
            pm__jarm *A = &J->arms[side ? C->b : C->a];
            if (A->mouth < w) {
                if (w > A->len)
                    return pm__jfail(J, PM_JUNCTION_SIDEWALK_NO_FIT, J->arms[C->a].index,
                                     J->arms[C->b].index, "the sidewalk between arms %d and %d "
                                     "does not fit on arm %d", J->arms[C->a].index,
                                     J->arms[C->b].index, A->index);
                A->mouth = w;
            }
        }
    }
    return 0;
}

/* A wide arm on a small ring reaches the ring close to the centre: its
 * mouth must still pass outside the island. */
static int pm__ring_mouths(pm__junction *J) {
    for (size_t k = 0; k < J->n; k++) {
        const pm__jarm *A = &J->arms[k];
        pm_v2 l = pm__arm_pt(A, 1, A->mouth, A->h), r = pm__arm_pt(A, -1, A->mouth, A->h);
        pm_v2 lr = pm_v2_sub(l, r), rc = pm_v2_sub(J->c, r);
        double t = fmin(fmax(pm_v2_dot(rc, lr) / pm_v2_dot(lr, lr), 0), 1);
        double d = pm_v2_len(pm_v2_sub(rc, pm_v2_scale(lr, t)));
        if (d <= J->Ri + J->prm->snap)
            return pm__jfail(J, PM_JUNCTION_RING_NO_FIT, A->index, -1,
                             "arm %d is too wide for the ring: its mouth, %.3f m from the "
                             "centre, would cut into the island (radius %g)", A->index, d, J->Ri);
    }
    return 0;
}

int pm__junction_corners(pm__junction *J) {
    const double straight = PM_JUNCTION_STRAIGHT_DEG * PM__PI / 180.0;
    /* The ring's chords (segments of them per turn) must clear the island. */
    if (J->ring && !(J->R * cos(PM__PI / J->prm->roundabout.segments) > J->Ri + J->prm->snap))
        return pm__jfail(J, PM_JUNCTION_RING_NO_FIT, -1, -1,
                         "the ring is too thin for %u segments: its chords would cut the island",
                         J->prm->roundabout.segments);
    for (size_t k = 0; k < J->n; k++) {
        pm__jcorner *C = &J->corners[k];
        const pm__jarm **via = C->via;
        size_t nvia = C->nvia;
        memset(C, 0, sizeof *C);
        C->via = via;
        C->nvia = nvia;
        C->a = k;
        C->b = (k + 1) % J->n;
        const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
        C->phi = B->angle - A->angle;
        if (C->phi <= 0) C->phi += 2 * PM__PI;
        C->r_req = J->prm->corner_radius;
        int rc;
        if (J->ring) {
            C->kind = PM__RING;
            rc = pm__ring_corner(J, k);
        } else if (C->nvia) {
            C->kind = PM__CHAIN;
            rc = pm__chain_corner(J, k);
        } else if (C->phi >= straight) {
            C->kind = PM__STRAIGHT;
            C->sw = A->sw && B->sw;
            rc = 0;
        } else {
            C->kind = PM__FILLET;
            rc = pm__fillet_corner(J, k);
        }
        if (rc < 0) return rc;
    }
    int rc = pm__mouths(J);
    if (rc == 0 && J->ring) rc = pm__ring_mouths(J);
    return rc;
}

/* ---- blocks --------------------------------------------------------------- */

static int pm__push(pm__junction *J, pm__jblock *blk, pm_v2 p, pm_v2 out, double ch) {
    pm__jpt pt = {p, out, ch};
    return pm_vec_push(J->a, &blk->pts, pt) == 0 ? 0 : PM_ERR_NOMEM;
}

/* Points strictly inside the arc of radius r about centre from p0 to p1 (the
 * short way), count - 2 of them, each with its sidewalk point pulled toward
 * the centre by the width blended from w0 to w1 (or q when qmode). */
static int pm__arc_points(pm__junction *J, pm__jblock *blk, pm_v2 centre, double r, pm_v2 p0,
                          pm_v2 p1, uint32_t count, double w0, double w1, double ch0, double ch1,
                          bool qmode, pm_v2 q) {
    double a0 = atan2(p0.y - centre.y, p0.x - centre.x);
    double sweep = pm__wrap(atan2(p1.y - centre.y, p1.x - centre.x) - a0);
    /* Points closer than a few snap steps would snap into zigzags: a short
     * arc gets fewer of them. */
    double room = fabs(sweep) * r / (PM__MIN_RADIUS_SNAPS * J->prm->snap);
    if (room < (double)(count - 1)) count = room < 1 ? 2 : (uint32_t)room + 1;
    for (uint32_t i = 1; i + 1 < count; i++) {
        double s = (double)i / (double)(count - 1), a = a0 + sweep * s;
        pm_v2 u = pm_v2_xy(cos(a), sin(a));
        double w = w0 + (w1 - w0) * s;
        pm_v2 out = qmode ? q : pm_v2_axpy(centre, r - w, u);
        if (pm__push(J, blk, pm_v2_axpy(centre, r, u), out, ch0 + (ch1 - ch0) * s) < 0)
            return PM_ERR_NOMEM;
    }
    return 0;
}

static uint64_t pm__key_bits(double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* pm__arc_points, a pure function of its arguments and the snap: with a
 * memo, the points an earlier call with the same arguments' bits pushed
 * are pushed again (the same values), and a new call's points are kept
 * (up to PM__MEMO_ARCS arcs, while the memo finds enough of them). */
static int pm__arc(pm__junction *J, pm__jblock *blk, pm_v2 centre, double r, pm_v2 p0,
                   pm_v2 p1, uint32_t count, double w0, double w1, double ch0, double ch1,
                   bool qmode, pm_v2 q) {
    pm_junction_memo *m = J->prm->memo;
    if (m && m->looked >= PM__MEMO_TRIAL && m->found * PM__MEMO_RARE < m->looked) m = NULL;
    if (!m) return pm__arc_points(J, blk, centre, r, p0, p1, count, w0, w1, ch0, ch1, qmode, q);
    m->looked++;
    uint64_t key[PM__ARC_KEY];
    const double v[13] = {p0.x, p0.y, p1.x, p1.y, centre.x, centre.y, r, w0, w1, ch0, ch1, q.x, q.y};
    memcpy(key, v, sizeof v);
    key[13] = count;
    key[14] = qmode;
    key[15] = pm__key_bits(J->prm->snap);
    /* Slots spread by the arc's ends (the whole key is compared). */
    uint64_t h = (key[0] * 0x9e3779b97f4a7c15u) ^ (key[1] * 0xbf58476d1ce4e5b9u) ^
                 (key[2] * 0x94d049bb133111ebu) ^ (key[3] * 0xc2b2ae3d27d4eb4fu);
    pm__memo_arc **slot = &m->slot[(h ^ (h >> 29)) >> 32 & (PM__MEMO_SLOTS - 1)];
    for (const pm__memo_arc *e = *slot; e; e = e->next) {
        if (e->key[0] != key[0] || memcmp(e->key, key, sizeof key) != 0) continue;
        if (pm_vec_reserve(J->a, &blk->pts, blk->pts.len + e->n)) return PM_ERR_NOMEM;
        for (uint32_t i = 0; i < e->n; i++) blk->pts.data[blk->pts.len + i] = e->pts[i];
        blk->pts.len += e->n;
        m->found++;
        return 0;
    }
    size_t first = blk->pts.len;
    int rc = pm__arc_points(J, blk, centre, r, p0, p1, count, w0, w1, ch0, ch1, qmode, q);
    if (rc < 0 || m->narcs >= PM__MEMO_ARCS) return rc;
    size_t n = blk->pts.len - first;
    pm__memo_arc *e = pm_arena_alloc(m->a, sizeof *e);
    pm__jpt *pts = pm_arena_alloc(m->a, (n ? n : 1) * sizeof *pts);
    if (!e || !pts) return 0;   /* (nothing kept; the memo stays consistent) */
    memcpy(e->key, key, sizeof key);
    e->n = (uint32_t)n;
    if (n) memcpy(pts, blk->pts.data + first, n * sizeof *pts);
    e->pts = pts;
    e->next = *slot;
    *slot = e;
    m->narcs++;
    return 0;
}

/* Pushes the point at parameter t on arm A's curb (side +1 left, -1 right)
 * with its sidewalk point w further out, or q in qmode. */
static int pm__curb(pm__junction *J, pm__jblock *blk, const pm__jarm *A, double side, double t,
                    bool qmode, pm_v2 q) {
    double w = A->sw ? A->sw_w : 0;
    pm_v2 out = qmode ? q : pm__arm_pt(A, side, t, A->h + w);
    return pm__push(J, blk, pm__arm_pt(A, side, t, A->h), out, A->sw ? A->sw_ch : 0);
}

static int pm__fillet_block(pm__junction *J, const pm__jcorner *C, pm__jblock *blk) {
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    pm_v2 q = C->qmode ? pm__arm_pt(A, 1, C->qa, A->h + C->wq) : pm_v2_xy(0, 0);
    int rc = 0;
    if (C->ta != A->mouth) rc = pm__curb(J, blk, A, 1, C->ta, C->qmode, q);
    if (rc == 0 && C->r > 0) {
        pm_v2 ta = pm__arm_pt(A, 1, C->ta, A->h), tb = pm__arm_pt(B, -1, C->sb, B->h);
        double wa = C->sw ? A->sw_w : 0, wb = C->sw ? B->sw_w : 0;
        rc = pm__arc(J, blk, C->fc, C->r, ta, tb, J->prm->corner_segments, wa, wb,
                     C->sw ? A->sw_ch : 0, C->sw ? B->sw_ch : 0, C->qmode, q);
        if (rc == 0 && C->sb != B->mouth) rc = pm__curb(J, blk, B, -1, C->sb, C->qmode, q);
    }
    return rc;
}

/* Sidewalk points around a convex (left) turn of the contour at v, from
 * the offset along n_in to the offset along n_out: a round join of steps at
 * most 30 degrees. A concave turn gets the mitre point of the two offsets. */
static int pm__join(pm__junction *J, pm__jblock *blk, pm_v2 v, pm_v2 n_in, pm_v2 n_out,
                    double w, double ch) {
    double turn = atan2(pm_v2_cross(n_in, n_out), pm_v2_dot(n_in, n_out));
    if (!(turn > 1e-9)) {
        pm_v2 m = pm_v2_add(n_in, n_out);
        return pm__push(J, blk, v, pm_v2_axpy(v, w / (1 + pm_v2_dot(n_in, n_out)), m), ch);
    }
    int steps = (int)ceil(turn / (PM__PI / 6));
    double a0 = atan2(n_in.y, n_in.x);
    for (int i = 0; i <= steps; i++) {
        double a = i == 0 ? a0 : a0 + turn * i / steps;
        pm_v2 u = i == 0 ? n_in : i == steps ? n_out : pm_v2_xy(cos(a), sin(a));
        if (pm__push(J, blk, v, pm_v2_axpy(v, w, u), ch) < 0) return PM_ERR_NOMEM;
    }
    return 0;
}

static pm_v2 pm__right(pm_v2 a) { return pm_v2_xy(a.y, -a.x); }

static bool pm__segments_meet(pm_v2 a, pm_v2 b, pm_v2 c, pm_v2 d) {
    double pa[2] = {a.x, a.y}, pb[2] = {b.x, b.y}, pc[2] = {c.x, c.y}, pd[2] = {d.x, d.y};
    return pm_segments_intersect(pa, pb, pc, pd);
}

/* Nearly opposite or diverging arms: from a's left mouth to b's right mouth
 * along the outer hull of the two curbs' points at the centre, so that a
 * wide angle never cuts across the arms (the back of a V, the outside of
 * an L) and a straight road stays one straight edge. */
static int pm__straight_block(pm__junction *J, const pm__jcorner *C, pm__jblock *blk) {
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    pm_v2 cand[4] = {pm__arm_pt(A, 1, A->mouth, A->h), pm__arm_pt(A, 1, 0, A->h),
                      pm__arm_pt(B, -1, 0, B->h), pm__arm_pt(B, -1, B->mouth, B->h)};
    pm_v2 path[4];
    int owner[4], from[4] = {0, 0, 1, 1};
    size_t m = 0;
    /* Converging curbs cross in front of the centre: their points there lie
     * past the crossing, so only the chord remains. */
    bool back = pm_v2_cross(A->d, B->d) <= 1e-9;
    for (int i = 0; i < 4; i++) {
        if (!back && (i == 1 || i == 2)) continue;
        /* Keep a corner only if it stands out of the chord by more than the
         * snap grid: anything less would be a collinear point after all. */
        while (m >= 2) {
            pm_v2 chord = pm_v2_sub(cand[i], path[m - 2]);
            double l = pm_v2_len(chord);
            double out = l > 0 ? -pm_v2_cross(chord, pm_v2_sub(path[m - 1], path[m - 2])) / l : 0;
            if (out > J->prm->snap) break;
            m--;
        }
        if (m == 1 && cand[i].x == path[0].x && cand[i].y == path[0].y) continue;
        path[m] = cand[i];
        owner[m++] = from[i];
    }
    /* Diverging curbs that cross behind a far mouth would make a bow tie. */
    if (m == 4 && pm__segments_meet(path[0], path[1], path[2], path[3])) {
        path[1] = path[3];
        owner[1] = owner[3];
        m = 2;
    }
    for (size_t i = 0; i < m; i++) {
        const pm__jarm *O = owner[i] ? B : A;
        double w = C->sw ? O->sw_w : 0, ch = C->sw ? O->sw_ch : 0;
        pm_v2 n_in = i == 0 ? A->n : pm__right(pm_v2_unit(pm_v2_sub(path[i], path[i - 1])));
        pm_v2 n_out = i + 1 == m ? pm_v2_scale(B->n, -1) : pm__right(pm_v2_unit(pm_v2_sub(path[i + 1], path[i])));
        int rc = pm__join(J, blk, path[i], n_in, n_out, w, ch);
        if (rc < 0) return rc;
    }
    return 0;
}

/* The arc of the ring between the two fillets of corner C, on the ring's
 * point grid (skipping grid points within a quarter step of the ends), with
 * the radial cut that splits the ring for ear clipping at the grid point
 * nearest the middle (or the middle itself). Sets *cut to the cut's angle. */
static int pm__ring_gap(pm__junction *J, const pm__jcorner *C, pm__jblock *blk, double *cut) {
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    double step = 2 * PM__PI / J->prm->roundabout.segments;
    double a0 = atan2(C->fl.tc.y - J->c.y, C->fl.tc.x - J->c.x);
    double gap = pm__gap_rel(J, C, C->fr.tc) - pm__gap_rel(J, C, C->fl.tc);
    double wa = C->sw ? A->sw_w : 0, wb = C->sw ? B->sw_w : 0;
    double cha = C->sw ? A->sw_ch : 0, chb = C->sw ? B->sw_ch : 0;
    pm_v2 qa = C->fl.qmode ? pm__arm_pt(A, 1, C->fl.tq, A->h + A->sw_w) : pm_v2_xy(0, 0);
    pm_v2 qb = C->fr.qmode ? pm__arm_pt(B, -1, C->fr.tq, B->h + B->sw_w) : pm_v2_xy(0, 0);
    double ra = C->fl.qmode ? pm__gap_rel(J, C, qa) : -4, rb = C->fr.qmode ? pm__gap_rel(J, C, qb) : 4;
    if (ra >= rb && !C->qmode)
        return pm__jfail(J, PM_JUNCTION_SIDEWALK_NO_FIT, A->index, B->index,
                         "the sidewalks of arms %d and %d overlap along the ring",
                         A->index, B->index);
    double margin = 0.25 * step, mid = 0.5 * gap;
    double cut_s = mid, near = round((a0 + mid) / step) * step - a0;
    if (fabs(near - mid) < margin && near > margin && near < gap - margin) cut_s = near;
    size_t cap = (size_t)(gap / step) + 3, ns = 0;
    double *s = pm_arena_alloc(J->a, cap * sizeof *s);
    if (!s) return PM_ERR_NOMEM;
    bool cut_in = false;
    double g0 = ceil((a0 + margin) / step);
    for (size_t j = 0; ns + 2 <= cap; j++) {
        double v = (g0 + (double)j) * step - a0;
        if (!(v <= gap - margin)) break;
        if (!cut_in && cut_s < v) { s[ns++] = cut_s; cut_in = true; }
        if (v == cut_s) cut_in = true;
        s[ns++] = v;
    }
    if (!cut_in) s[ns++] = cut_s;
    assert(ns <= cap);
    for (size_t i = 0; i < ns; i++) {
        pm_v2 u = pm_v2_xy(cos(a0 + s[i]), sin(a0 + s[i]));
        double f = s[i] / gap;
        pm_v2 out = pm_v2_axpy(J->c, J->R + wa + (wb - wa) * f, u);
        double rel = pm__gap_rel(J, C, out);
        if (C->fl.qmode && rel <= ra) out = qa;
        if (C->fr.qmode && rel >= rb) out = qb;
        if (s[i] == cut_s) blk->cut = blk->pts.len;
        if (pm__push(J, blk, pm_v2_axpy(J->c, J->R, u), out, cha + (chb - cha) * f) < 0)
            return PM_ERR_NOMEM;
    }
    *cut = a0 + cut_s;
    return 0;
}

/* One ring fillet from its curb tangent point to its ring tangent point (or
 * back), with the tangent points themselves. */
static int pm__ring_fillet_pts(pm__junction *J, const pm__jcorner *C, const pm__jarm *A,
                               double side, const pm__ringfillet *F, bool to_ring) {
    double w = C->sw ? A->sw_w : 0, ch = C->sw ? A->sw_ch : 0;
    pm_v2 q = F->qmode ? pm__arm_pt(A, side, F->tq, A->h + A->sw_w) : pm_v2_xy(0, 0);
    pm_v2 tl = pm__arm_pt(A, side, F->t, A->h);
    pm_v2 tl_out = F->qmode ? q : pm__arm_pt(A, side, F->t, A->h + w);
    pm_v2 tc_out = F->qmode ? q : pm_v2_axpy(F->f, (C->r - w) / C->r, pm_v2_sub(F->tc, F->f));
    pm__jblock *blk = &J->blocks[C - J->corners];
    int rc = 0;
    if (C->r == 0) {
        /* The curb line meets the ring at one point. */
        return pm__push(J, blk, F->tc, F->qmode ? q : pm_v2_axpy(J->c, (J->R + w) / J->R,
                                                                  pm_v2_sub(F->tc, J->c)), ch);
    }
    if (to_ring) {
        if (F->t != A->mouth) rc = pm__push(J, blk, tl, tl_out, ch);
        if (rc == 0) rc = pm__arc(J, blk, F->f, C->r, tl, F->tc, J->prm->corner_segments,
                                  w, w, ch, ch, F->qmode, q);
        if (rc == 0) rc = pm__push(J, blk, F->tc, tc_out, ch);
    } else {
        rc = pm__push(J, blk, F->tc, tc_out, ch);
        if (rc == 0) rc = pm__arc(J, blk, F->f, C->r, F->tc, tl, J->prm->corner_segments,
                                  w, w, ch, ch, F->qmode, q);
        if (rc == 0 && F->t != A->mouth) rc = pm__push(J, blk, tl, tl_out, ch);
    }
    return rc;
}

static int pm__ring_block(pm__junction *J, const pm__jcorner *C, pm__jblock *blk, double *cut) {
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    size_t first = blk->pts.len;
    int rc = pm__ring_fillet_pts(J, C, A, 1, &C->fl, true);
    if (rc == 0) rc = pm__ring_gap(J, C, blk, cut);
    if (rc == 0) rc = pm__ring_fillet_pts(J, C, B, -1, &C->fr, false);
    if (rc == 0 && C->qmode) {
        pm_v2 q = pm__arm_pt(A, 1, C->qa, A->h + C->wq);
        for (size_t i = first; i < blk->pts.len; i++) blk->pts.data[i].out = q;
    }
    return rc;
}

/* Island points: the ring grid at island_radius plus every cut's angle, in
 * counter-clockwise order starting at corner 0's cut. */
static int pm__island_angles(pm__junction *J, const double *cut) {
    uint32_t nseg = J->prm->roundabout.segments;
    double step = 2 * PM__PI / nseg;
    J->cut_island = pm_arena_alloc(J->a, J->n * sizeof *J->cut_island);
    double *c = pm_arena_alloc(J->a, J->n * sizeof *c);
    if (!J->cut_island || !c) return PM_ERR_NOMEM;
    for (size_t k = 0; k < J->n; k++) {
        c[k] = cut[k];
        while (c[k] < cut[0]) c[k] += 2 * PM__PI;
        while (c[k] >= cut[0] + 2 * PM__PI) c[k] -= 2 * PM__PI;
    }
    size_t k = 0;
    double g0 = ceil(cut[0] / step);
    for (uint32_t j = 0; j < nseg; j++) {
        double v = (g0 + j) * step;
        for (; k < J->n && c[k] <= v; k++) {
            J->cut_island[k] = J->island_ang.len;
            if (c[k] != v && pm_vec_push(J->a, &J->island_ang, c[k]) < 0) return PM_ERR_NOMEM;
        }
        if (pm_vec_push(J->a, &J->island_ang, v) < 0) return PM_ERR_NOMEM;
    }
    for (; k < J->n; k++) {
        J->cut_island[k] = J->island_ang.len;
        if (pm_vec_push(J->a, &J->island_ang, c[k]) < 0) return PM_ERR_NOMEM;
    }
    return 0;
}

int pm__junction_blocks(pm__junction *J) {
    double *cut = pm_arena_alloc(J->a, J->n * sizeof *cut);
    if (!cut) return PM_ERR_NOMEM;
    for (size_t k = 0; k < J->n; k++) {
        const pm__jcorner *C = &J->corners[k];
        const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
        pm__jblock *blk = &J->blocks[k];
        memset(blk, 0, sizeof *blk);
        pm_v2 none = pm_v2_xy(0, 0);
        /* Room for a fillet block's points (two curb points each side and
         * the arc's) at once; other blocks grow as they need. */
        int rc = pm_vec_reserve(J->a, &blk->pts, (size_t)J->prm->corner_segments + 4) ? PM_ERR_NOMEM : 0;
        if (rc < 0) return rc;
        if (C->kind == PM__STRAIGHT) {
            rc = pm__straight_block(J, C, blk);
        } else {
            rc = pm__curb(J, blk, A, 1, A->mouth, false, none);
            if (rc == 0 && C->kind == PM__FILLET) rc = pm__fillet_block(J, C, blk);
            for (size_t i = 0; rc == 0 && C->kind == PM__CHAIN && i < C->nchain; i++)
                rc = pm__push(J, blk, C->chain[i], C->chain[i], 0);
            if (rc == 0 && C->kind == PM__RING) rc = pm__ring_block(J, C, blk, &cut[k]);
            if (rc == 0) rc = pm__curb(J, blk, B, -1, B->mouth, false, none);
        }
        if (rc < 0) return rc;
        if (!C->sw)
            for (size_t i = 0; i < blk->pts.len; i++) blk->pts.data[i].ch = 0;
    }
    if (J->ring) return pm__island_angles(J, cut);
    return 0;
}

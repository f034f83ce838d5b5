/* Merged junctions: several nodes joined by links (roads too short to
 * build between them), each node with its own arms on the lines they were
 * drawn on. The outline walks round the outside: a node's arms counter-
 * clockwise, and where the next one is a link, along that link's side to
 * its other node and on from there. A corner between two arms that walks
 * along links is a chain of curb lines: where two of them turn inward
 * they meet in a point, round the outside of a bend they get a bevel, and
 * a link side that its two corners pass over is left out (the lines
 * before and after it meet instead) — unless that point lies inside the
 * link's own road, which means the face on that side is asphalt through
 * and through: then the node across the face must be merged too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "junction/junction_internal.h"
#include "geom/predicates.h"

/* ---- outline order ------------------------------------------------------- */

/* One ray round a node: a real arm (arm >= 0) or a link direction. */
typedef struct pm__ray {
    uint32_t node;
    double angle;
    int arm;             /* sorted-arm index, or -1 */
    size_t link;         /* J->rays index when arm < 0 */
} pm__ray;

static int pm__ray_cmp(const void *x, const void *y) {
    const pm__ray *a = x, *b = y;
    if (a->node != b->node) return a->node < b->node ? -1 : 1;
    if (a->angle != b->angle) return a->angle < b->angle ? -1 : 1;
    if (a->arm != b->arm) return a->arm < b->arm ? -1 : 1;
    return a->link < b->link ? -1 : a->link > b->link;
}

static double pm__angle_of(pm_v2 d) {
    double a = atan2(d.y, d.x);
    return a < 0 ? a + 2 * PM__PI : a;
}

/* The link rays: [2 i] from link i's node a to b, [2 i + 1] back. */
static int pm__link_rays(pm__junction *J) {
    const pm_junction_params *prm = J->prm;
    J->rays = pm_arena_calloc(J->a, 2 * prm->nlinks + 1, sizeof *J->rays);
    if (!J->rays) return PM_ERR_NOMEM;
    for (size_t i = 0; i < prm->nlinks; i++) {
        const pm_junction_link *L = &prm->links[i];
        pm_v2 pa = pm__from_xz(prm->nodes[2 * L->a], prm->nodes[2 * L->a + 1]);
        pm_v2 pb = pm__from_xz(prm->nodes[2 * L->b], prm->nodes[2 * L->b + 1]);
        for (int s = 0; s < 2; s++) {
            pm__jarm *R = &J->rays[2 * i + (size_t)s];
            R->index = -1;
            R->link = true;
            R->twin = 2 * i + (size_t)(1 - s);
            R->node = s ? L->b : L->a;
            R->o = s ? pb : pa;
            R->d = pm_v2_unit(pm_v2_sub(s ? pa : pb, R->o));
            R->n = pm_v2_left(R->d);
            R->h = 0.5 * L->width;
            R->len = pm_v2_len(pm_v2_sub(pb, pa));
            R->angle = pm__angle_of(R->d);
        }
    }
    return 0;
}

int pm__merged_order(pm__junction *J) {
    const pm_junction_params *prm = J->prm;
    int rc = pm__link_rays(J);
    if (rc) return rc;
    size_t nr = J->n + 2 * prm->nlinks;
    pm__ray *ray = pm_arena_alloc(J->a, nr * sizeof *ray);
    size_t *first = pm_arena_calloc(J->a, prm->nnodes + 1, sizeof *first);
    size_t *pos_link = pm_arena_alloc(J->a, (2 * prm->nlinks + 1) * sizeof *pos_link);
    pm__jarm *order = pm_arena_alloc(J->a, J->n * sizeof *order);
    if (!ray || !first || !pos_link || !order) return PM_ERR_NOMEM;
    for (size_t k = 0; k < J->n; k++)
        ray[k] = (pm__ray){J->arms[k].node, J->arms[k].angle, (int)k, 0};
    for (size_t i = 0; i < 2 * prm->nlinks; i++)
        ray[J->n + i] = (pm__ray){J->rays[i].node, J->rays[i].angle, -1, i};
    qsort(ray, nr, sizeof *ray, pm__ray_cmp);
    for (size_t i = 0; i < nr; i++) first[ray[i].node + 1] = i + 1;
    for (size_t v = 1; v <= prm->nnodes; v++)
        if (first[v] < first[v - 1]) first[v] = first[v - 1];
    for (size_t i = 0; i < nr; i++)
        if (ray[i].arm < 0) pos_link[ray[i].link] = i;
    /* The ray after i counter-clockwise round its node. */
#define PM__NEXT(i) (((i) + 1 < first[ray[i].node + 1]) ? (i) + 1 : first[ray[i].node])
    size_t start = 0;
    while (ray[start].arm < 0) start++;
    size_t at = start, count = 0, steps = 0;
    do {
        pm__jcorner *C = &J->corners[count];
        C->via = pm_arena_alloc(J->a, (2 * prm->nlinks + 1) * sizeof *C->via);
        if (!C->via) return PM_ERR_NOMEM;
        C->nvia = 0;
        order[count] = J->arms[ray[at].arm];
        size_t i = PM__NEXT(at);
        while (ray[i].arm < 0 && steps++ < 4 * nr) {
            C->via[C->nvia++] = &J->rays[ray[i].link];
            i = PM__NEXT(pos_link[J->rays[ray[i].link].twin]);
        }
        at = i;
        count++;
    } while (at != start && count < J->n && steps < 4 * nr);
#undef PM__NEXT
    if (at != start || count != J->n)
        return pm__jfail(J, PM_JUNCTION_SELF_INTERSECTION, -1, -1,
                         "the links of the merged junction enclose some of its arms");
    memcpy(J->arms, order, J->n * sizeof *order);
    return 0;
}

/* ---- chain corners -------------------------------------------------------- */

/* One curb line of a chain, walked with the asphalt on its left: a point
 * on it at the node it starts from (s0 = 0) and the one it ends at (s1). */
typedef struct pm__line {
    pm_v2 q, t;
    double s1;           /* parameter of its end node (0 for a's line: q is there) */
    double in, out;      /* parameters where the outline enters and leaves it */
    bool kept;
    bool bevel_in, bevel_out;   /* it enters / leaves at its node, round a bend */
} pm__line;

/* Where lines u and v meet (false when nearly parallel). */
static bool pm__meet(const pm__line *u, const pm__line *v, double *su, double *sv) {
    double den = pm_v2_cross(u->t, v->t);
    if (fabs(den) < 1e-9) return false;
    pm_v2 w = pm_v2_sub(v->q, u->q);
    *su = pm_v2_cross(w, v->t) / den;
    *sv = pm_v2_cross(w, u->t) / den;
    return true;
}

/* Sine of the turn under which two arms side by side count as parallel. */
#define PM__CHAIN_TURN 0.17

static int pm__chain_fail(pm__junction *J, const pm__jcorner *C, const char *why) {
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    return pm__jfail(J, PM_JUNCTION_LINKS_OVERLAP, A->index, B->index,
                     "arms %d and %d of the merged junction %s", A->index, B->index, why);
}

/* Joins line u to the next kept line v: a point where they meet (a turn
 * to the right, where that point is near the node: two lines of one node
 * nearly in line but of different widths meet far off), else each ends at
 * its node (a bevel round a turn to the left, a step between widths).
 * A right turn of more than 90 degrees always meets in a point, however
 * far: the lines converge, a road forking off a link (or a link off a
 * road) at a narrow angle, whose two strips overlap out to that point,
 * the fork's crotch; a bevel at the node would leave the arm's mouth
 * inside the other strip and the contour crossing itself. The arm's
 * room then decides (a corner beyond it is ARM_TOO_SHORT, which a
 * network answers by aiming the arm further along its road).
 * Returns false when lines of different nodes cannot meet. */
static bool pm__join_lines(pm__line *u, pm__line *v, bool same_node, double near) {
    double su, sv;
    if (pm_v2_cross(u->t, v->t) < -1e-12 && pm__meet(u, v, &su, &sv) &&
        (!same_node || pm_v2_dot(u->t, v->t) < 0 || (fabs(su - u->s1) <= near && fabs(sv) <= near))) {
        u->out = su;
        v->in = sv;
        u->bevel_out = v->bevel_in = false;
        return true;
    }
    if (!same_node) return false;
    u->out = u->s1;
    v->in = 0;
    u->bevel_out = v->bevel_in = true;
    return true;
}

/* How far along arm A its sidewalk on `side` must start so as not to lie
 * on the road of line Ln, the next one of the chain: where the sidewalk's
 * outer line crosses it, if beyond the corner at t. */
static double pm__sidewalk_clear(const pm__jarm *A, double side, const pm__line *Ln, double t) {
    pm__line outer = {pm__arm_pt(A, side, 0, A->h + A->sw_w), A->d, 0, 0, 0, true, false, false};
    double su, sv;
    if (pm__meet(&outer, Ln, &su, &sv) && su > t) t = su;
    return fmax(t, 0);
}

/* Fillets where kept line i meets the next kept one in a point (a turn to
 * the right: the block's corner): radius corner_radius, or less so that
 * its tangent points stay on the lines, an arm's within its room and a
 * link side's within what the fillet at its start left (at most half of
 * it when its end has a fillet too); under a few snap steps none. dt[i] and rad[i] (0: none) for
 * the join after line i; returns the smallest radius (0 when none). */
static double pm__chain_fillets(pm__junction *J, const pm__jcorner *C, const pm__line *L, size_t m,
                                double *dt, double *rad) {
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    double rmin = INFINITY, used = 0;   /* used: of line i, by the fillet where it is entered */
    for (size_t i = 0; i + 1 < m; i++) {
        if (!L[i].kept) continue;
        size_t v = i + 1;
        while (!L[v].kept) v++;
        double used_u = used;
        used = 0;
        if (L[i].bevel_out) continue;
        double sin_t = -pm_v2_cross(L[i].t, L[v].t), cos_t = pm_v2_dot(L[i].t, L[v].t);
        if (!(sin_t > 1e-9)) { rmin = 0; continue; }
        double tan_half = (1 - cos_t) / sin_t;      /* tan of half the turn */
        double room_u = i == 0 ? A->len - (-L[0].out) : L[i].out - L[i].in - used_u;
        /* A link side shares its length with the fillet at its other end. */
        double room_v = v + 1 == m ? B->len - L[m - 1].in
                                   : (L[v].bevel_out ? 1.0 : 0.5) * (L[v].out - L[v].in);
        double r = fmin(C->r_req, fmin(room_u, room_v) / tan_half);
        if (!(r >= PM__MIN_RADIUS_SNAPS * J->prm->snap)) { rmin = 0; continue; }
        rad[i] = r;
        dt[i] = used = r * tan_half;
        rmin = fmin(rmin, r);
        J->nchain_fillets++;
    }
    return isfinite(rmin) ? rmin : 0;
}

/* The points strictly inside the fillet of radius r from line u to line v
 * (tangent dt before and after their meeting point); returns how many. */
static size_t pm__chain_arc(const pm__junction *J, const pm__line *u, const pm__line *v, double dt,
                            double r, pm_v2 *out) {
    pm_v2 p = pm_v2_axpy(u->q, u->out, u->t);
    pm_v2 tu = pm_v2_axpy(p, -dt, u->t), tv = pm_v2_axpy(p, dt, v->t);
    pm_v2 centre = pm_v2_axpy(tu, r, pm_v2_xy(u->t.y, -u->t.x));   /* on the right: the block */
    double a0 = atan2(tu.y - centre.y, tu.x - centre.x);
    double sweep = atan2(tv.y - centre.y, tv.x - centre.x) - a0;
    while (sweep <= -PM__PI) sweep += 2 * PM__PI;
    while (sweep > PM__PI) sweep -= 2 * PM__PI;
    uint32_t count = J->prm->corner_segments;
    double room = fabs(sweep) * r / (PM__MIN_RADIUS_SNAPS * J->prm->snap);
    if (room < (double)(count - 1)) count = room < 1 ? 2 : (uint32_t)room + 1;
    size_t n = 0;
    for (uint32_t i = 1; i + 1 < count; i++) {
        double a = a0 + sweep * (double)i / (double)(count - 1);
        out[n++] = pm_v2_axpy(centre, r, pm_v2_xy(cos(a), sin(a)));
    }
    return n;
}

/* cut_tight_corners along links: the join of a's curb (or b's) with the
 * next kept line of the chain lies beyond the arm's room. As at an
 * ordinary corner (junction_contour.c, pm__cut_corner), the arm's mouth
 * stays at its room and the outline leaves its curb there in a straight
 * edge to that line, past the join by an offset that makes the edge leave
 * the curb line at an angle (a quarter of how far the join lies beyond the
 * room, at least 4 snap steps): what lies beyond on the arm's side of the
 * line is the arm's road, the triangle between is left unpaved. When that
 * line is the other arm's curb, its mouth goes out as pm__cut_need says.
 * The join's fillet goes. Returns whether the cut applies (the line has
 * room for the offset, a link side its fillet at the far end too). */
static bool pm__chain_cut(pm__junction *J, pm__jcorner *C, pm__line *L, size_t m, double *dt, double *rad) {
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    bool a_short = C->ta > A->len, b_short = C->sb > B->len;
    if (a_short == b_short) return false;
    size_t u = 1, v = m - 2;
    while (!L[u].kept) u++;
    while (!L[v].kept) v--;
    /* N: the line the short arm's curb meets; w: the join's index. */
    size_t n = a_short ? u : v, w = a_short ? 0 : v;
    if (a_short ? L[0].bevel_out : L[m - 1].bevel_in) return false;
    const pm__jarm *S = a_short ? A : B;
    double room = S->len, lead = a_short ? C->ta - dt[0] - room : C->sb - dt[v] - room;
    double off = fmax(PM__MIN_RADIUS_SNAPS * J->prm->snap, 0.25 * lead);
    double shift;       /* along N from the join */
    if (n == (a_short ? m - 1 : 0)) {
        /* The two arms' curbs meet each other: as at an ordinary corner. */
        double sin_phi = pm_v2_cross(A->d, B->d);
        if (!(sin_phi > 0.05)) return false;
        double at = a_short ? L[m - 1].in : -L[0].out;
        double need = pm__cut_need(A, B, a_short, room, at, lead, J->prm->snap, sin_phi);
        shift = need - at;
    } else {
        double sn = fabs(pm_v2_cross(L[n].t, S->d));
        if (!(sn > 0.05)) return false;
        shift = off / sn;
    }
    if (a_short) {
        /* Fillets: the one at this join goes; the one at N's far end keeps
         * its tangent distance, which must still fit. */
        double end = n == m - 1 ? B->len : L[n].out - dt[n];
        if (!(L[n].in + shift <= end)) return false;
        L[0].out = -room;
        L[n].in += shift;
    } else {
        double din = 0;    /* the fillet from the kept line before N */
        if (n > 0) {
            size_t p = n - 1;
            while (!L[p].kept) p--;
            din = rad[p] > 0 ? dt[p] : 0;
        }
        double start = n == 0 ? -A->len : L[n].in + din;
        if (!(L[n].out - shift >= start)) return false;
        L[m - 1].in = room;
        L[n].out -= shift;
    }
    dt[w] = 0;
    rad[w] = 0;
    C->cut = true;
    return true;
}

int pm__chain_corner(pm__junction *J, size_t k) {
    pm__jcorner *C = &J->corners[k];
    const pm__jarm *A = &J->arms[C->a], *B = &J->arms[C->b];
    size_t m = C->nvia + 2;
    pm__line *L = pm_arena_calloc(J->a, m, sizeof *L);
    if (!L) return PM_ERR_NOMEM;
    /* a's left curb walked inward, the links' right curbs, b's right curb
     * walked outward. */
    L[0] = (pm__line){pm__arm_pt(A, 1, 0, A->h), pm_v2_scale(A->d, -1), 0, -INFINITY, 0, true, false, false};
    for (size_t i = 0; i < C->nvia; i++) {
        const pm__jarm *R = C->via[i];
        L[i + 1] = (pm__line){pm__arm_pt(R, -1, 0, R->h), R->d, R->len, 0, R->len, true, false, false};
    }
    L[m - 1] = (pm__line){pm__arm_pt(B, -1, 0, B->h), B->d, 0, 0, INFINITY, true, false, false};
    double near = 4 * fmax(A->h, B->h);
    for (size_t i = 0; i < C->nvia; i++) near = fmax(near, 4 * C->via[i]->h);
    for (size_t i = 0; i + 1 < m; i++)
        if (!pm__join_lines(&L[i], &L[i + 1], true, near))
            return pm__chain_fail(J, C, "cannot be joined");
    /* A link side walked backwards lies under the corners at its ends:
     * leave it out, its neighbours meet instead. */
    for (bool again = true; again;) {
        again = false;
        for (size_t i = 1; i + 1 < m; i++) {
            if (!L[i].kept || L[i].in <= L[i].out) continue;
            size_t u = i - 1, v = i + 1;
            while (!L[u].kept) u--;
            while (!L[v].kept) v++;
            L[i].kept = false;
            if (!pm__join_lines(&L[u], &L[v], false, near)) {
                if (u == 0 && v + 1 == m && fabs(pm_v2_cross(A->d, B->d)) < PM__CHAIN_TURN) {
                    /* Side by side: their centre lines are this far apart. */
                    double apart = fabs(pm_v2_cross(pm_v2_sub(B->o, A->o), A->d));
                    return pm__jfail(J, PM_JUNCTION_LINKS_OVERLAP, A->index, B->index,
                                     "arms %d and %d of the merged junction run side by side "
                                     "%.3f m apart: their roads need %.3f m", A->index, B->index,
                                     apart, A->h + B->h);
                }
                return pm__chain_fail(J, C, "run into each other across a link");
            }
            pm_v2 p = pm_v2_axpy(L[u].q, L[u].out, L[u].t);
            /* On the link's left, its own road: the face is asphalt. */
            if (pm_v2_cross(L[i].t, pm_v2_sub(p, L[i].q)) > 0)
                return pm__chain_fail(J, C, "meet inside a link's road: the nodes round that "
                                      "face are too close for a block between them");
            again = true;
        }
    }
    /* Where two kept lines meet in a point, a fillet (pm__chain_fillets). */
    double *dt = pm_arena_calloc(J->a, m, sizeof *dt), *rad = pm_arena_calloc(J->a, m, sizeof *rad);
    if (!dt || !rad) return PM_ERR_NOMEM;
    double rmin = J->chain_fillets ? pm__chain_fillets(J, C, L, m, dt, rad) : 0;
    /* Round the outside of a bend the arm keeps a square-ish piece of road
     * its half width long (or its room), as at a straight join; a fillet
     * at its end starts its tangent distance further out. */
    C->ta = L[0].bevel_out ? fmin(A->h, A->len) : -L[0].out + dt[0];
    size_t last = m - 2;
    while (!L[last].kept) last--;
    C->sb = L[m - 1].bevel_in ? fmin(B->h, B->len) : L[m - 1].in + dt[last];
    if ((C->ta > A->len || C->sb > B->len) && J->cut &&
        pm__chain_cut(J, C, L, m, dt, rad)) {
        C->ta = L[0].bevel_out ? fmin(A->h, A->len) : -L[0].out + dt[0];
        C->sb = L[m - 1].bevel_in ? fmin(B->h, B->len) : L[m - 1].in + dt[last];
        rmin = 0;     /* the cut join is sharp */
    }
    if (C->ta > A->len || C->sb > B->len) {
        bool a_short = C->ta > A->len;
        return pm__jfail_beyond(J, A, B, a_short ? A : B, a_short ? C->ta : C->sb);
    }
    uint32_t seg = J->prm->corner_segments;
    C->chain = pm_arena_alloc(J->a, m * (2 + seg) * sizeof *C->chain);
    if (!C->chain) return PM_ERR_NOMEM;
    C->nchain = 0;
    double din = 0;        /* the fillet's tangent distance where line i is entered */
    for (size_t i = 0; i < m; i++) {
        if (!L[i].kept) continue;
        if (i > 0) C->chain[C->nchain++] = pm_v2_axpy(L[i].q, L[i].in + din, L[i].t);
        if (i + 1 == m) break;
        C->chain[C->nchain++] = pm_v2_axpy(L[i].q, L[i].out - dt[i], L[i].t);
        size_t v = i + 1;
        while (!L[v].kept) v++;
        din = rad[i] > 0 ? dt[i] : 0;
        if (rad[i] > 0) C->nchain += pm__chain_arc(J, &L[i], &L[v], dt[i], rad[i], C->chain + C->nchain);
    }
    /* No sidewalk round such a corner; its fillets as at other corners,
     * where two curb lines meet (the smallest is its radius). */
    C->r = rmin;
    C->sw = false;
    int rc = 0;
    if (rmin < C->r_req) rc = pm__jwarn(J, k, C->r_req, rmin);
    if (rc == 0 && A->sw && B->sw) {
        size_t u = 1, v = m - 2;
        while (!L[u].kept) u++;
        while (!L[v].kept) v--;
        C->qa = pm__sidewalk_clear(A, 1, &L[u], C->ta);
        C->qb = pm__sidewalk_clear(B, -1, &L[v], C->sb);
        rc = pm__jwarn_chain_sidewalk(J, k);
    }
    return rc;
}

/* ---- cover ----------------------------------------------------------------- */

/* Whether p lies strictly inside the closed polygon q[0..n-1] (winding
 * number, exact orientation tests). */
static bool pm__inside(const pm_v2 *q, size_t n, pm_v2 p) {
    int wn = 0;
    double pp[2] = {p.x, p.y};
    for (size_t i = 0; i < n; i++) {
        pm_v2 a = q[i], b = q[(i + 1) % n];
        double pa[2] = {a.x, a.y}, pb[2] = {b.x, b.y};
        double o = pm_orient2d(pa, pb, pp);
        if (o == 0 && fmin(a.x, b.x) <= p.x && p.x <= fmax(a.x, b.x) && fmin(a.y, b.y) <= p.y &&
            p.y <= fmax(a.y, b.y))
            return false;
        if (a.y <= p.y) {
            if (b.y > p.y && o > 0) wn++;
        } else if (b.y <= p.y && o < 0) {
            wn--;
        }
    }
    return wn != 0;
}

int pm__merged_cover(pm__junction *J) {
    const pm_junction_params *prm = J->prm;
    for (size_t i = 0; i < prm->nlinks; i++) {
        const pm__jarm *R = &J->rays[2 * i];
        pm_v2 pts[3] = {R->o, pm_v2_axpy(R->o, 0.5 * R->len, R->d), pm_v2_axpy(R->o, R->len, R->d)};
        for (int k = 0; k < 3; k++)
            if (!pm__inside(J->contour, J->ncontour, pts[k]))
                return pm__jfail(J, PM_JUNCTION_LINKS_OVERLAP, -1, -1,
                                 "the outline of the merged junction passes over its link "
                                 "from node %u to node %u: its arms' roads cross it",
                                 prm->links[i].a, prm->links[i].b);
    }
    return 0;
}

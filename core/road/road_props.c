#include "road/road_internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scene/result.h"

/* ---- props ---- */

/* Section interval and fraction at centre arc length s: the last section
 * lo <= n - 2 with sec[lo].s <= s (or 0), what a bisection finds, walked
 * from *at (an interval at or before it: props come in increasing s). */
static size_t pm__locate_s(const pm__level *L, double s, size_t *at, double *f) {
    size_t lo = *at;
    while (lo + 2 < L->n && L->sec[lo + 1].s <= s) lo++;
    *at = lo;
    size_t hi = lo + 1 < L->n ? lo + 1 : lo;
    double ds = L->sec[hi].s - L->sec[lo].s;
    *f = ds > 0.0 ? (s - L->sec[lo].s) / ds : 0.0;
    if (*f < 0.0) *f = 0.0;
    if (*f > 1.0) *f = 1.0;
    return lo;
}

/* Unit quaternion (x, y, z, w) of the rotation whose columns are X, Y, Z.
 * In double and ours, not cglm's float glm_mat3_quat, whose other branch
 * order and rounding change the bits (docs/coregeom.md, "Doubles inside"). */
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
                     double sg, size_t *at) {
    const pm_road_params *p = x->p;
    double f;
    size_t i = pm__locate_s(L, s, at, &f);
    const pm__section *a = &L->sec[i], *b = &L->sec[i + 1 < L->n ? i + 1 : i];
    int side = sg > 0.0;
    double W = 0.5 * p->width + p->shoulder;
    double clamp = fmin(a->clamp[side], b->clamp[side]);
    if (clamp < W * (1.0 - 1e-9) && rp->offset > clamp) return 0;
    if ((a->fan[side] || b->fan[side]) && rp->offset > 0.0) return 0;   /* all runs to the pivot */
    /* Beyond the centre of curvature on the inner side, a line of props
     * would fold back on itself like the road edge would. */
    double kappa = a->kappa + f * (b->kappa - a->kappa);
    if ((kappa > 0.0) == (side == 0) && fabs(kappa) * rp->offset >= 1.0) return 0;
    double c[3], r[3], T[3], U[3], pos[3];
    pm_v3_lerp(a->c, b->c, f, c);
    pm_v3_lerp(a->r, b->r, f, r);
    pm_v3_lerp(a->tan, b->tan, f, T);
    pm_v3_lerp(a->up, b->up, f, U);
    for (int k = 0; k < 3; k++) pos[k] = c[k] + sg * rp->offset * r[k];
    bool on_road = rp->offset <= W;
    if (p->terrain && (p->conform == PM_ROAD_DRAPE || !on_road))
        pos[1] = pm_heightfield_height(on_road ? p->terrain : x->ground, pos[0], pos[2]);
    if (rp->align == PM_ROAD_ALIGN_TERRAIN && p->terrain)
        pm_heightfield_normal(x->ground, pos[0], pos[2], U);
    pm_v3_normalize(U);
    double d = pm_v3_dot(T, U);
    for (int k = 0; k < 3; k++) T[k] -= d * U[k];
    pm_v3_normalize(T);
    double R[3];
    pm_v3_cross(T, U, R);
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

int pm__road_props(pm__ctx *x, const pm__level *L, pm_meta *out) {
    const pm_road_params *p = x->p;
    pm_arena *a = x->a;
    uint64_t total = 0;
    for (size_t j = 0; j < p->nprops; j++) {
        total += pm__prop_count(L, &p->props[j], p->closed);
        if (p->max_vertices && total > p->max_vertices) {
            char field[48];
            snprintf(field, sizeof field, "/props/%zu/spacing", j);
            const char *f = pm_arena_strdup(a, field);
            return f ? pm__road_limit(x, f, total) : PM_ERR_NOMEM;
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
        size_t at = 0;
        for (uint64_t k = 0; k < per; k++) {
            if (p->cancel && (k & 255) == 0 && *p->cancel) return PM_ERR_CANCELLED;
            double s = (double)k * rp->spacing;
            for (int sd = 0; sd < 2; sd++) {
                if (!(rp->side & (sd ? PM_ROAD_SIDE_RIGHT : PM_ROAD_SIDE_LEFT))) continue;
                int r = pm__place(x, L, rp, set, s, sd ? 1.0 : -1.0, &at);
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

#include "road/road_internal.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "scene/result.h"

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
        if (!(pm_orient_xz_plain(q[k], q[(k + 1) % m], q[(k + 2) % m]) > 0.0)) return false;
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

void pm__road_clamp_folds(pm__ctx *x, pm__level *L) {
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


bool pm__road_collapsed(const pm__level *L, const pm__section *sc, uint32_t k) {
    double d = L->col[k];
    return d < 0.0 ? -d >= sc->clamp[0] : (d > 0.0 && d >= sc->clamp[1]);
}

/* Copies the collapsed columns of section `from` onto section `to` (one side). */
static void pm__copy_collapse(pm__level *L, size_t from, size_t to, int side) {
    size_t nc = L->ncol;
    for (size_t k = 0; k < nc; k++)
        if ((L->col[k] > 0.0) == (side == 1) && L->col[k] != 0.0 && pm__road_collapsed(L, &L->sec[to], (uint32_t)k))
            memcpy(L->pos + 3 * (to * nc + k), L->pos + 3 * (from * nc + (side ? nc - 1 : 0)), 3 * sizeof(double));
}

/* Consecutive sections cut back to the same plan point (a fold's collapse
 * point, 1e-7 apart by construction) get the very same 3D point: with
 * banking their own heights there differ, which would leave a vertical
 * crack. Closed roads weld across the seam too. */
void pm__road_weld_collapses(pm__level *L) {
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


/* A road whose own surface lies on itself in plan (legs closer than the
 * road is wide, or a turn the fold clamp cannot untangle) is refused: two
 * asphalt or shoulder triangles of one level whose interiors meet in
 * (x, z), found with the grid and exact test of geom/plan_overlap.h, are
 * named by the control points nearest their sections. */
#include "road/road_internal.h"

#include <math.h>
#include <string.h>

#include "geom/plan_boundary.h"
#include "scene/result.h"

#define PM__ENOUGH_PAIRS 4096

typedef struct pm__rov {
    const pm__level *L;
    const pm_road_params *p;
    pm_road_overlaps *out;
} pm__rov;

/* The control point nearest section i along the curve: its parameter
 * rounded (segment k runs from points[k] to points[k + 1]). */
static uint32_t pm__point_of(const pm__rov *R, uint32_t i) {
    double t = floor(R->L->sec[i].t + 0.5);
    uint32_t n = (uint32_t)R->p->npoints, k = t > 0 ? (uint32_t)t : 0;
    if (R->p->closed) return k % n;
    return k < n ? k : n - 1;
}

static int pm__hit(void *ctx, const pm_ptri *a, const pm_ptri *b) {
    pm__rov *R = ctx;
    pm_road_overlaps *O = R->out;
    /* Enough to name: a road lying on itself everywhere (far wider than
     * its turns) would otherwise cost a test per pair of its triangles. */
    if (++O->pairs >= PM__ENOUGH_PAIRS) return 1;
    uint32_t pa = pm__point_of(R, a->part), pb = pm__point_of(R, b->part);
    bool swap = pa > pb;
    pm_road_overlap h = {.point = {swap ? pb : pa, swap ? pa : pb},
                         .shoulder = {swap ? b->flag : a->flag, swap ? a->flag : b->flag}};
    for (size_t k = 0; k < O->n; k++)
        if (O->o[k].point[0] == h.point[0] && O->o[k].point[1] == h.point[1]) return 0;
    if (O->n == PM_ROAD_MAX_OVERLAPS) return 0;
    pm_ptri_witness(a, b, h.at);
    uint32_t i0 = a->part < b->part ? a->part : b->part, i1 = a->part ^ b->part ^ i0;
    h.turn_radius = INFINITY;
    double last = R->p->closed ? (double)R->p->npoints : (double)R->p->npoints - 1.0;
    for (uint32_t i = i0; i <= i1 + 1 && i < R->L->n; i++) {
        double k = R->L->sec[i].kappa, t = R->L->sec[i].t;
        if (k != 0.0) h.turn_radius = fmin(h.turn_radius, 1.0 / fabs(k));
        /* A linear road turns at its interior control points. */
        if (R->p->curve == PM_CURVE_LINEAR && t == floor(t) && (R->p->closed || (t > 0 && t < last)))
            h.turn_radius = 0.0;
    }
    O->o[O->n++] = h;
    return 0;
}

int pm__road_outline_loop(pm_arena *a, const pm__level *L) {
    size_t n = L->n, nc = L->ncol, m = 2 * n + 2 * (nc - 2), k = 0;
    if (m >= UINT32_MAX / 2) return 0;
    float *xz = pm_arena_alloc(a, 2 * m * sizeof(float));
    if (!xz) return PM_ERR_NOMEM;
    const double *P = L->pos;
#define PM__PUT(i, c) (xz[2 * k] = (float)P[3 * ((i) * nc + (c))], xz[2 * k + 1] = (float)P[3 * ((i) * nc + (c)) + 2], k++)
    for (size_t i = 0; i < n; i++) PM__PUT(i, 0);
    for (size_t c = 1; c < nc; c++) PM__PUT(n - 1, c);
    for (size_t i = n - 1; i-- > 0;) PM__PUT(i, nc - 1);
    for (size_t c = nc - 1; --c > 0;) PM__PUT(0, c);
#undef PM__PUT
    return pm_loop_simple(a, xz, (uint32_t)m);
}

/* A level with no fold, no sliver left out and open ends is the full grid
 * of its sections and columns: its outline is the left edge, the last
 * section, the right edge and the first section. When that loop is simple,
 * so is the outline pm_pset_simple_boundary would find (the same loop):
 * no two triangles overlap. 1 proven, 0 not, PM_ERR_NOMEM. */
static int pm__outline_simple(pm__ctx *x, const pm__level *L) {
    const pm_road_params *p = x->p;
    double W = 0.5 * p->width + p->shoulder;
    if (L->closed || L->skipped) return 0;
    /* The fold pass saw no fan and every clamp sec[0].clamp[0] (nothing
     * writes them since): only that clamp needs a look. */
    if (!(L->fold_free && L->sec[0].clamp[0] >= W))
        for (size_t i = 0; i < L->n; i++) {
            const pm__section *sc = &L->sec[i];
            if (sc->fan[0] || sc->fan[1] || sc->clamp[0] < W || sc->clamp[1] < W) return 0;
        }
    int r = pm__road_outline_windows(x->a, L, W);   /* a long road: proven in one pass */
    if (r != 0) return r;
    return pm__road_outline_loop(x->a, L);
}

/* The level's triangles as a plan set: part = section, flag 1 = shoulder. */
static int pm__plan_set(pm__ctx *x, const pm__level *L, uint32_t first, pm_pset *S) {
    int r = pm_pset_init(x->a, S, (uint32_t)L->ntsec);
    if (r < 0) return r;
    size_t t = 0;
    for (uint32_t k = first; k < x->scene->nprims; k++) {
        const pm_prim *pr = &x->scene->prims[k];
        const float *P = pr->positions;
        for (uint32_t j = 0; j + 2 < pr->icount && t < L->ntsec; j += 3, t++) {
            const uint32_t *q = pr->indices + j;
            pm_pset_add(S, P + 3 * q[0], P + 3 * q[1], P + 3 * q[2], L->tsec[t], 0, k > first);
        }
    }
    return PM_OK;
}

int pm__road_overlaps(pm__ctx *x, pm__level *L, uint32_t level, uint32_t first) {
    if (L->ntsec < 2) return PM_OK;
    int r = pm__outline_simple(x, L);
    if (r != 0) return r < 0 ? r : PM_OK;
    pm_pset plan;
    if ((r = pm__plan_set(x, L, first, &plan)) < 0) return r;
    if (plan.ntri < 2) return PM_OK;
    pm_road_failure local;
    pm_road_overlaps *O = x->fail ? &x->fail->overlaps : &local.overlaps;
    memset(O, 0, sizeof *O);
    /* A road that does not touch itself has one simple outline: then no
     * pair can overlap, without testing the pairs. */
    if ((r = pm_pset_simple_boundary(x->a, &plan)) != 0) return r < 0 ? r : PM_OK;
    if ((r = pm_pset_grid(x->a, &plan)) < 0) return r;
    pm__rov R = {.L = L, .p = x->p, .out = O};
    if ((r = pm_pset_sweep(&plan, NULL, pm__hit, &R)) < 0) return r;   /* > 0: enough */
    if (!O->pairs) return PM_OK;
    O->level = level;
    O->radius = 0.5 * x->p->width + x->p->shoulder;
    O->spacing = 2.0 * O->radius;
    return PM_ERR_GEOMETRY;
}

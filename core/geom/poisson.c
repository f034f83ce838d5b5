#include "geom/poisson.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "scene/result.h"
#include "geom/trig.h"

#define PM__SQRT3 1.7320508075688772

static inline bool pm__inside(const pm_poisson_params *p, const double q[2]) {
    double x = q[0] - p->center[0], y = q[1] - p->center[1];
    switch (p->shape) {
    case PM_POISSON_RECT:
        return fabs(x) <= p->half[0] && fabs(y) <= p->half[1];
    case PM_POISSON_DISK:
        return x * x + y * y <= p->half[0] * p->half[0];
    case PM_POISSON_HEXAGON:
        return fabs(y) <= p->half[0] * (PM__SQRT3 / 2) &&
               PM__SQRT3 * fabs(x) + fabs(y) <= p->half[0] * PM__SQRT3;
    case PM_POISSON_CUSTOM:
        return fabs(x) <= p->half[0] && fabs(y) <= p->half[1] && p->inside(q, p->user);
    }
    return false;
}

bool pm_poisson_inside(const pm_poisson_params *p, const double q[2]) { return pm__inside(p, q); }

typedef struct pm__pds {
    const pm_poisson_params *p;
    double r2, cell, inv_cell, x0, y0;
    size_t gw, gh;
    double *grid;                /* x, y of the cell's sample; NaN when empty */
    double *pts;
    uint32_t n, cap;
    uint32_t *active;
    uint32_t nactive;
    pm_arena *arena;
    ptrdiff_t near[21];          /* pm__near as offsets into grid, in doubles */
} pm__pds;

/* Grid offsets within two cells (a corner cell at (2, 2) is more than
 * 2 cell widths = sqrt(2) r away), nearest first: most candidates are
 * rejected by a close sample, so the search usually ends at once. */
static const int8_t pm__near[21][2] = {
    {0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1},
    {2, 0}, {-2, 0}, {0, 2}, {0, -2}, {2, 1}, {2, -1}, {-2, 1}, {-2, -1},
    {1, 2}, {-1, 2}, {1, -2}, {-1, -2}};

static size_t pm__cell_of(const pm__pds *s, const double q[2]) {
    size_t cx = (size_t)((q[0] - s->x0) * s->inv_cell), cy = (size_t)((q[1] - s->y0) * s->inv_cell);
    return cy * s->gw + cx;
}

/* No sample closer than radius. The grid has two spare cells on every side
 * and empty cells hold NaN (every comparison with it is false), so the loop
 * needs neither bounds nor emptiness checks. */
static bool pm__far_enough(const pm__pds *s, const double q[2]) {
    const double *c = s->grid + 2 * pm__cell_of(s, q);
    for (int k = 0; k < 21; k++) {
        const double *o = c + s->near[k];
        double ex = o[0] - q[0], ey = o[1] - q[1];
        if (ex * ex + ey * ey < s->r2) return false;
    }
    return true;
}

static int pm__pds_add(pm__pds *s, const double q[2]) {
    if (s->p->max_points && s->n >= s->p->max_points) return PM_ERR_LIMIT;
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 1024;
        double *np = pm_arena_realloc(s->arena, s->pts, (size_t)s->cap * 2 * sizeof(double),
                                      (size_t)cap * 2 * sizeof(double));
        uint32_t *na = np ? pm_arena_alloc(s->arena, (size_t)cap * sizeof(uint32_t)) : NULL;
        if (!na) return PM_ERR_NOMEM;
        if (s->nactive) memcpy(na, s->active, (size_t)s->nactive * sizeof(uint32_t));
        s->pts = np;
        s->active = na;
        s->cap = cap;
    }
    double *g = s->grid + 2 * pm__cell_of(s, q);
    g[0] = q[0];
    g[1] = q[1];
    s->pts[2 * (size_t)s->n] = q[0];
    s->pts[2 * (size_t)s->n + 1] = q[1];
    s->active[s->nactive++] = s->n;
    s->n++;
    return PM_OK;
}

/* Within the domain's box grown by margin: where the grid has cells. */
static bool pm__in_box(const pm__pds *s, const double q[2], double margin) {
    const pm_poisson_params *p = s->p;
    return fabs(q[0] - p->center[0]) <= p->half[0] + margin &&
           fabs(q[1] - p->center[1]) <= p->half[1] + margin;
}

static bool pm__usable(const pm__pds *s, const double q[2]) {
    return pm__inside(s->p, q) && pm__far_enough(s, q);
}

/* Tries every candidate around active sample number slot, then retires it. */
static int pm__expand(pm__pds *s, uint32_t slot, pm_rng *rng, double step_c, double step_s,
                      uint32_t tries) {
    uint32_t i = s->active[slot];
    s->active[slot] = s->active[--s->nactive];
    double dx, dy, d2;
    do {  /* a uniform direction by rejection, without trigonometry */
        dx = pm_rng_range(rng, -1, 1);
        dy = pm_rng_range(rng, -1, 1);
        d2 = dx * dx + dy * dy;
    } while (d2 > 1 || d2 < 1e-4);
    /* Just past the radius, so the parent never rejects its own children. */
    double len = s->p->radius * (1 + 1e-9) / sqrt(d2);
    dx *= len;
    dy *= len;
    double cx = s->pts[2 * (size_t)i], cy = s->pts[2 * (size_t)i + 1];
    for (uint32_t k = 0; k < tries; k++) {
        double q[2] = {cx + dx, cy + dy};
        if (pm__usable(s, q)) {
            int r = pm__pds_add(s, q);
            if (r < 0) return r;
        }
        double nx = dx * step_c - dy * step_s;
        dy = dx * step_s + dy * step_c;
        dx = nx;
    }
    return PM_OK;
}

static int pm__first(pm__pds *s, pm_rng *rng) {
    const pm_poisson_params *p = s->p;
    for (uint32_t i = 0; i < p->ninitial; i++) {
        const double *q = p->initial + 2 * (size_t)i;
        if (!pm__in_box(s, q, s->cell) || !pm__far_enough(s, q)) continue;
        int r = pm__pds_add(s, q);
        if (r < 0) return r;
    }
    /* A random start; a domain too thin to hit in 4096 draws stays empty. */
    for (int attempt = 0; s->n == 0 && attempt < 4096; attempt++) {
        double q[2] = {pm_rng_range(rng, p->center[0] - p->half[0], p->center[0] + p->half[0]),
                       pm_rng_range(rng, p->center[1] - p->half[1], p->center[1] + p->half[1])};
        if (pm__inside(p, q)) return pm__pds_add(s, q);
    }
    return PM_OK;
}

long pm_poisson(pm_arena *a, const pm_poisson_params *p, pm_rng *rng, double **out) {
    pm__pds s;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.arena = a;
    s.r2 = p->radius * p->radius;
    s.cell = p->radius / sqrt(2.0);
    s.inv_cell = 1.0 / s.cell;
    double hx = p->half[0], hy = p->shape == PM_POISSON_RECT || p->shape == PM_POISSON_CUSTOM ? p->half[1] : p->half[0];
    /* Two spare cells each side: the neighbour search needs no bounds, and
     * rounding at the domain's edge cannot index outside. */
    s.x0 = p->center[0] - hx - 2 * s.cell;
    s.y0 = p->center[1] - hy - 2 * s.cell;
    double gw = floor(2 * hx * s.inv_cell) + 5, gh = floor(2 * hy * s.inv_cell) + 5;
    if (!(gw * gh < 1e9)) return PM_ERR_LIMIT;
    s.gw = (size_t)gw;
    s.gh = (size_t)gh;
    s.grid = pm_arena_alloc(a, s.gw * s.gh * 2 * sizeof *s.grid);
    if (!s.grid) return PM_ERR_NOMEM;
    for (size_t i = 0; i < 2 * s.gw * s.gh; i++) s.grid[i] = NAN;
    for (int k = 0; k < 21; k++)
        s.near[k] = 2 * ((ptrdiff_t)pm__near[k][1] * (ptrdiff_t)s.gw + pm__near[k][0]);
    /* The background grid must cover the domain's box: use the box of the
     * shape, which for disk and hexagon is centre +- half[0] both ways. */
    pm_poisson_params box = *p;
    box.half[1] = hy;
    s.p = &box;
    int r = pm__first(&s, rng);
    uint32_t tries = p->tries ? p->tries : 30;
    double sc, ss;
    pm__cos_sin(2 * PM__PI / tries, &sc, &ss);
    while (r == PM_OK && s.nactive)
        r = pm__expand(&s, (uint32_t)pm_rng_below(rng, s.nactive), rng, sc, ss, tries);
    if (r < 0) return r;
    *out = s.pts;
    return (long)s.n;
}

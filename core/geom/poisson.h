#ifndef PM_POISSON_H
#define PM_POISSON_H
#include <stdbool.h>
#include <stdint.h>
#include "scene/arena.h"
#include "scene/rng.h"

/* Poisson-disk sampling in O(n) after Bridson ("Fast Poisson disk sampling
 * in arbitrary dimensions", 2007): a background grid of cells radius/sqrt(2)
 * wide holds at most one sample each, and an active list grows the set. Each
 * active sample is visited once and tries `tries` candidates spaced evenly
 * on the circle of the minimum radius (Roberts' refinement of Bridson's
 * annulus draw), which packs denser and runs faster than random radii. Only
 * pm_rng draws, sqrt and arithmetic are used, so output is deterministic. */

typedef enum pm_poisson_shape {
    PM_POISSON_RECT,     /* centre +- half[0] by centre +- half[1] */
    PM_POISSON_DISK,     /* radius half[0] around centre */
    PM_POISSON_HEXAGON,  /* circumradius half[0], corners at 0, 60, ... 300 degrees */
    PM_POISSON_CUSTOM,   /* inside(), within the box centre +- half */
} pm_poisson_shape;

typedef struct pm_poisson_params {
    pm_poisson_shape shape;
    double center[2];
    double half[2];
    double radius;          /* minimum distance between samples, > 0 */
    uint32_t tries;         /* candidates per active sample; 0 means 30 */
    uint32_t max_points;    /* more samples than this is PM_ERR_LIMIT; 0: no cap */
    bool (*inside)(const double p[2], void *user);  /* PM_POISSON_CUSTOM only */
    void *user;
    /* Samples placed first, in order (e.g. evenly along the boundary, which
     * gives the set a clean outline). They skip the domain test, so points
     * meant to lie on the boundary stay even where rounding puts them a hair
     * outside; ones closer than radius to an earlier one, or farther than
     * radius / sqrt(2) outside the domain's box, are dropped. With none, the
     * first sample is uniform in the domain. */
    const double *initial;
    uint32_t ninitial;
} pm_poisson_params;

/* Whether p lies in the closed domain of params. */
bool pm_poisson_inside(const pm_poisson_params *params, const double p[2]);

/* Samples the domain: sets *out to 2 * count doubles (x, y) in arena a and
 * returns count, or PM_ERR_NOMEM / PM_ERR_LIMIT. Each pair of samples is at
 * least radius apart (squared distances compared in floating point). */
long pm_poisson(pm_arena *a, const pm_poisson_params *params, pm_rng *rng, double **out);
#endif

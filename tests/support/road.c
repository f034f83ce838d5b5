/* Random roads' pieces shared by the road tests. */
#include "pm_test_road.h"

#include <math.h>
#include <string.h>

#include "scene/result.h"

pm_heightfield *pm_test_terrain_under(pm_arena *a, pm_rng *g, const double *pts, size_t n) {
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            lo[k] = fmin(lo[k], pts[3 * i + 2 * k]);
            hi[k] = fmax(hi[k], pts[3 * i + 2 * k]);
        }
    pm_heightfield *hf = pm_arena_alloc(a, sizeof *hf);
    if (!hf) return NULL;
    memset(hf, 0, sizeof *hf);
    hf->cell = 1.0 + (double)pm_rng_below(g, 3);
    hf->origin[0] = lo[0] - 30.0;
    hf->origin[1] = lo[1] - 30.0;
    hf->cols = (uint32_t)((hi[0] - lo[0] + 60.0) / hf->cell) + 2;
    hf->rows = (uint32_t)((hi[1] - lo[1] + 60.0) / hf->cell) + 2;
    pm_noise nz = {.seed = pm_rng_u64(g), .amplitude = pm_rng_range(g, 0.5, 12.0),
                   .wavelength = pm_rng_range(g, 20.0, 80.0), .octaves = 2};
    return pm_heightfield_from_noise(a, hf, &nz, NULL) == PM_OK ? hf : NULL;
}

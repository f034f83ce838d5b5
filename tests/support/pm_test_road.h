#ifndef PM_TEST_ROAD_H
#define PM_TEST_ROAD_H
/* Random roads' pieces shared by the road tests (tests/support/road.c). */
#include <stddef.h>

#include "geom/terrain.h"
#include "scene/arena.h"
#include "scene/rng.h"

/* A noise heightfield in a under the n points pts (3 * n doubles), 30 m
 * beyond them on every side, cell 1 to 3 m: its cell and noise from g.
 * NULL when out of memory or the noise fails. */
pm_heightfield *pm_test_terrain_under(pm_arena *a, pm_rng *g, const double *pts, size_t n);
#endif

#ifndef PM_TEST_SCENE_H
#define PM_TEST_SCENE_H
#include <stdint.h>

#include "scene/scene.h"

/* A terrain-like n x n quad grid with UVs in arena a, one primitive "g"
 * (material terrain), normals +Y, a little height: the encoders' test
 * scene (n 200: a few MB in every format). NULL when out of memory. */
pm_scene *pm_test_grid_scene(pm_arena *a, uint32_t n);
#endif

#ifndef PM_TEST_SCENE_H
#define PM_TEST_SCENE_H
#include <stdbool.h>
#include <stdint.h>

#include "scene/meta.h"
#include "scene/scene.h"

/* A terrain-like n x n quad grid with UVs in arena a, one primitive "g"
 * (material terrain), normals +Y, a little height: the encoders' test
 * scene (n 200: a few MB in every format). NULL when out of memory. */
pm_scene *pm_test_grid_scene(pm_arena *a, uint32_t n);
/* Whether two metadata trees are the same: keys, order, kinds, values,
 * numbers bit for bit (a table read as the array of objects it stands
 * for, copied into a). NULL equals only NULL. */
bool pm_test_meta_same(pm_arena *a, const pm_meta *x, const pm_meta *y);
#endif

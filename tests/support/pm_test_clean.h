#ifndef PM_TEST_CLEAN_H
#define PM_TEST_CLEAN_H
/* Whether a built network is clean, for Criterion tests of networks
 * built through core (the layouts test has its own oracle): asphalt one
 * manifold surface (and the slabs with the curbs), every ground triangle
 * facing up, no two overlapping in plan. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "geom/predicates.h"
#include "scene/scene.h"
#include "pm_test_overlap.h"

/* The primitive called name, or NULL. */
static inline const pm_prim *pm_test_prim(const pm_scene *s, const char *name) {
    for (uint32_t i = 0; i < s->nprims; i++)
        if (strcmp(s->prims[i].name, name) == 0) return &s->prims[i];
    return NULL;
}

/* The built network is clean: asphalt one manifold surface (and the
 * slabs with the curbs), every ground triangle facing up, no two of them
 * overlapping in plan (exact, every pair whose bounds meet). */
static inline void pm_test_check_clean(const pm_scene *s, const char *what) {
    const pm_prim *A = pm_test_prim(s, "asphalt"), *curb = pm_test_prim(s, "curb"), *walk = pm_test_prim(s, "sidewalk");
    cr_assert_not_null(A, "%s", what);
    const pm_prim *ground[1] = {A}, *slab[2] = {curb, walk};
    cr_assert_eq(pm_test_nonmanifold(ground, 1), 0, "%s: non-manifold asphalt", what);
    if (curb && walk) cr_assert_eq(pm_test_nonmanifold(slab, 2), 0, "%s: non-manifold slabs", what);
    const pm_prim *tops[2] = {A, walk};
    size_t down = 0, n = 0, cap = A->icount / 3 + (walk ? walk->icount / 3 : 0) + 1;
    ptri *T = malloc(cap * sizeof *T);
    for (int g = 0; g < 2; g++)
        for (uint32_t t = 0; tops[g] && t < tops[g]->icount; t += 3) {
            double q[3][2];
            for (int k = 0; k < 3; k++) {
                const float *v = tops[g]->positions + 3 * tops[g]->indices[t + k];
                q[k][0] = v[0];
                q[k][1] = v[2];
            }
            down += pm_orient_xz(q[0], q[1], q[2]) <= 0;
            if (ptri_make(q[0], q[1], q[2], &T[n])) n++;
        }
    cr_assert_gt(n, 20, "%s: %zu ground triangles", what, n);
    cr_assert_eq(down, 0, "%s: %zu ground triangles face down", what, down);
    cr_assert_eq(ptri_count_overlaps(T, n), 0, "%s: ground triangles overlap in plan", what);
    free(T);
}
#endif

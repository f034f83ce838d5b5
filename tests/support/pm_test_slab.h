#ifndef PM_TEST_SLAB_H
#define PM_TEST_SLAB_H
/* Sidewalk slab checks shared by the junction and the network tests: the
 * slab's vertical faces (curb face, outer face, end caps: the "curb"
 * primitive) must face out of the slab whose top is the "sidewalk"
 * primitive. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "geom/predicates.h"
#include "scene/scene.h"

/* Whether [x, z] lies in (or on) a triangle of side. */
static inline bool pm_test_in_sidewalk(const pm_prim *side, const double q[2]) {
    for (uint32_t t = 0; t < side->icount; t += 3) {
        double p[3][2];
        for (int k = 0; k < 3; k++) {
            p[k][0] = side->positions[3 * side->indices[t + k]];
            p[k][1] = side->positions[3 * side->indices[t + k] + 2];
        }
        if (pm_orient_xz(p[0], p[1], q) >= 0 && pm_orient_xz(p[1], p[2], q) >= 0 &&
            pm_orient_xz(p[2], p[0], q) >= 0)
            return true;
    }
    return false;
}

/* The first curb triangle (index) that does not face out of its slab: eps
 * behind its centroid, against its normal, must be sidewalk, eps in front
 * must not. Its plan centroid goes to at[]. -1 when every face is right. */
static inline long pm_test_slab_facing(const pm_prim *curb, const pm_prim *side, double eps,
                                       double at[2]) {
    for (uint32_t t = 0; t < curb->icount; t += 3) {
        const float *a = curb->positions + 3 * curb->indices[t],
                    *b = curb->positions + 3 * curb->indices[t + 1],
                    *c = curb->positions + 3 * curb->indices[t + 2];
        double u[3], v[3];
        for (int k = 0; k < 3; k++) {
            u[k] = (double)b[k] - a[k];
            v[k] = (double)c[k] - a[k];
        }
        double n[2] = {u[1] * v[2] - u[2] * v[1], u[0] * v[1] - u[1] * v[0]}, l = hypot(n[0], n[1]);
        at[0] = ((double)a[0] + b[0] + c[0]) / 3;
        at[1] = ((double)a[2] + b[2] + c[2]) / 3;
        double back[2] = {at[0] - eps * n[0] / l, at[1] - eps * n[1] / l};
        double front[2] = {at[0] + eps * n[0] / l, at[1] + eps * n[1] / l};
        if (!pm_test_in_sidewalk(side, back) || pm_test_in_sidewalk(side, front))
            return (long)(t / 3);
    }
    return -1;
}
#endif

#ifndef PM_TEST_OVERLAP_ROAD_H
#define PM_TEST_OVERLAP_ROAD_H
/* A road cluster's triangles as core/network/network_overlap.c's check
 * sees them, for the tests that compile that file in (after including
 * it and pm_test_overlap.h): test_network_overlap_fast.c and
 * test_network_overlap_strip.c, test_network_overlap_walk.c,
 * test_network_overlap_probe.c and test_network_overlap_bent.c. */
#include <stdlib.h>

/* The road's triangles as the check sees them (owned, with plan area). */
static ptri *road_tris(const pm__ov *O, const pm__range *rg, size_t n, size_t *nt) {
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) cap += rg[i].count;
    ptri *t = malloc((cap + 1) * sizeof *t);
    cr_assert(t);
    *nt = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t sw = rg[i].ref0 & PM__SW ? 1 : 0, t0 = rg[i].ref0 & ~PM__SW;
        const pm_prim *P = &O->sc->prims[sw ? 2 : 0];
        for (uint32_t k = t0; k < t0 + rg[i].count; k++) {
            if (pm__part(O->own[(sw ? O->na : 0) + k]) != rg[i].part) continue;
            double v[3][2];
            for (int c = 0; c < 3; c++) {
                const float *q = P->positions + 3 * (size_t)P->indices[3 * (size_t)k + c];
                v[c][0] = q[0];
                v[c][1] = q[2];
            }
            if (ptri_make(v[0], v[1], v[2], &t[*nt])) (*nt)++;
        }
    }
    return t;
}

/* All pairs of the road's triangles (owned, with plan area) that overlap. */
static inline size_t road_overlaps(const pm__ov *O, const pm__range *rg, size_t n) {
    size_t nt, bad = 0;
    ptri *t = road_tris(O, rg, n, &nt);
    for (size_t i = 0; i < nt; i++)
        for (size_t j = i + 1; j < nt; j++) bad += ptri_overlap(&t[i], &t[j]);
    free(t);
    return bad;
}

/* A cluster's triangles as the check sees them, listed or not. */
static inline ptri *clu_tris(const pm__ov *O, const pm__clu *C, size_t *nt) {
    if (C->road != UINT32_MAX || C->node != UINT32_MAX) {
        size_t n = C->road != UINT32_MAX ? O->N->roads.data[C->road].nsteps + 1 : 3;
        pm__range *rg = malloc(n * sizeof *rg);
        cr_assert(rg);
        if (C->road != UINT32_MAX) pm__road_ranges(O, C->road, rg);
        else pm__junction_ranges(O, C->node, rg);
        ptri *t = road_tris(O, rg, n, nt);
        free(rg);
        return t;
    }
    ptri *t = malloc(((size_t)C->count + 1) * sizeof *t);
    cr_assert(t);
    *nt = 0;
    for (uint32_t k = C->first; k < C->first + C->count; k++) {
        pm_ptri T;
        pm__tri(O, O->ref[k], &T);
        double v[3][2];
        pm_ptri_corners(&T, v);
        if (ptri_make(v[0], v[1], v[2], &t[*nt])) (*nt)++;
    }
    return t;
}

#endif

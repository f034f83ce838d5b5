#ifndef PM_TEST_OVERLAP_H
#define PM_TEST_OVERLAP_H
/* The plan-overlap oracle shared by tests/core/test_network.c and the
 * random-layout acceptance test (tests/support/layouts.c): triangles in
 * plan (x, z) and an exact test of whether two interiors meet, written
 * independently of the generator's own check (network_overlap.c uses a
 * grid and separating edges; this uses vertices, centroids and proper edge
 * crossings, all with exact predicates); and a count of non-manifold
 * edges by float position (pm_test_nonmanifold). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "geom/predicates.h"
#include "scene/scene.h"

typedef struct ptri { double v[3][2], lo[2], hi[2]; int64_t road; } ptri;

/* A triangle in plan, counter-clockwise (pm_orient2d); false when it has
 * no plan area (a vertical face). */
static inline bool ptri_make(const double *a, const double *b, const double *c, ptri *t) {
    double o = pm_orient2d(a, b, c);
    if (o == 0) return false;
    const double *q[3] = {a, o > 0 ? b : c, o > 0 ? c : b};
    t->road = -1;
    for (int k = 0; k < 3; k++) { t->v[k][0] = q[k][0]; t->v[k][1] = q[k][1]; }
    for (int c2 = 0; c2 < 2; c2++) {
        t->lo[c2] = fmin(t->v[0][c2], fmin(t->v[1][c2], t->v[2][c2]));
        t->hi[c2] = fmax(t->v[0][c2], fmax(t->v[1][c2], t->v[2][c2]));
    }
    return true;
}

/* Whether p lies strictly inside t. */
static inline bool ptri_inside(const ptri *t, const double *p) {
    return pm_orient2d(t->v[0], t->v[1], p) > 0 && pm_orient2d(t->v[1], t->v[2], p) > 0 &&
           pm_orient2d(t->v[2], t->v[0], p) > 0;
}

/* Interiors meet: some point of one strictly inside the other, or two
 * edges crossing at interior points, or the two the same triangle. */
static inline bool ptri_overlap(const ptri *a, const ptri *b) {
    if (a->lo[0] >= b->hi[0] || b->lo[0] >= a->hi[0] || a->lo[1] >= b->hi[1] || b->lo[1] >= a->hi[1])
        return false;
    const ptri *t[2] = {a, b};
    for (int w = 0; w < 2; w++) {
        for (int k = 0; k < 3; k++)
            if (ptri_inside(t[1 - w], t[w]->v[k])) return true;
        double g[2] = {(t[w]->v[0][0] + t[w]->v[1][0] + t[w]->v[2][0]) / 3,
                       (t[w]->v[0][1] + t[w]->v[1][1] + t[w]->v[2][1]) / 3};
        if (ptri_inside(t[1 - w], g)) return true;
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (pm_segments_cross(a->v[i], a->v[(i + 1) % 3], b->v[j], b->v[(j + 1) % 3])) return true;
    /* The same three corners (any order): one lies on the other. */
    int same = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) same += a->v[i][0] == b->v[j][0] && a->v[i][1] == b->v[j][1];
    return same == 3;
}
static inline int ptri_lo_cmp_x(const void *x, const void *y) {
    const ptri *a = x, *b = y;
    return a->lo[0] < b->lo[0] ? -1 : (a->lo[0] > b->lo[0]);
}

static inline int ptri_lo_cmp_z(const void *x, const void *y) {
    const ptri *a = x, *b = y;
    return a->lo[1] < b->lo[1] ? -1 : (a->lo[1] > b->lo[1]);
}

/* The plan triangles of every primitive of s named in names (NULL-ended),
 * malloc'ed; *n gets their count. */
static inline ptri *ptri_from_prims(const pm_scene *s, const char *const *names, size_t *n) {
    size_t cap = 1;
    for (uint32_t i = 0; i < s->nprims; i++) cap += s->prims[i].icount / 3;
    ptri *t = malloc(cap * sizeof *t);
    *n = 0;
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *P = &s->prims[i];
        bool want = false;
        for (const char *const *nm = names; *nm; nm++) want |= strcmp(P->name, *nm) == 0;
        if (!want) continue;
        for (uint32_t k = 0; k + 2 < P->icount; k += 3) {
            double q[3][2];
            for (int c = 0; c < 3; c++) {
                q[c][0] = P->positions[3 * P->indices[k + c]];
                q[c][1] = P->positions[3 * P->indices[k + c] + 2];
            }
            if (ptri_make(q[0], q[1], q[2], &t[*n])) (*n)++;
        }
    }
    return t;
}

/* Every pair (sorted by lower bound along the longer axis of the whole
 * set only to skip pairs apart on it, each remaining pair tested exactly):
 * how many overlap. Sorts t. */
static inline size_t ptri_count_overlaps(ptri *t, size_t n) {
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 2; c++) { lo[c] = fmin(lo[c], t[i].lo[c]); hi[c] = fmax(hi[c], t[i].hi[c]); }
    int ax = hi[1] - lo[1] > hi[0] - lo[0];
    qsort(t, n, sizeof *t, ax ? ptri_lo_cmp_z : ptri_lo_cmp_x);
    size_t found = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n && t[j].lo[ax] < t[i].hi[ax]; j++) found += ptri_overlap(&t[i], &t[j]);
    return found;
}
/* Non-manifold edges of the primitives' triangles taken together, by
 * float position: more than two triangles on one edge, or two running it
 * the same way. */
typedef struct pm_test_fedge { float a[3], b[3]; int dir; } pm_test_fedge;

static inline int pm_test_fcmp3(const float *a, const float *b) {
    for (int k = 0; k < 3; k++)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
}

static inline int pm_test_fedge_cmp(const void *x, const void *y) {
    const pm_test_fedge *s = x, *t = y;
    int c = pm_test_fcmp3(s->a, t->a);
    return c ? c : pm_test_fcmp3(s->b, t->b);
}

static inline size_t pm_test_nonmanifold(const pm_prim *const *P, int np) {
    size_t n = 0, bad = 0, m = 0;
    for (int i = 0; i < np; i++) n += P[i]->icount;
    pm_test_fedge *E = malloc((n + 1) * sizeof *E);
    for (int i = 0; i < np; i++)
        for (uint32_t t = 0; t < P[i]->icount; t += 3)
            for (int k = 0; k < 3; k++) {
                const float *u = P[i]->positions + 3 * P[i]->indices[t + k],
                            *v = P[i]->positions + 3 * P[i]->indices[t + (k + 1) % 3];
                bool fwd = pm_test_fcmp3(u, v) < 0;
                pm_test_fedge *f = &E[m++];
                memcpy(f->a, fwd ? u : v, sizeof f->a);
                memcpy(f->b, fwd ? v : u, sizeof f->b);
                f->dir = fwd;
            }
    qsort(E, m, sizeof *E, pm_test_fedge_cmp);
    for (size_t i = 0; i < m;) {
        size_t j = i;
        while (j < m && pm_test_fedge_cmp(&E[i], &E[j]) == 0) j++;
        if (j - i > 2 || (j - i == 2 && E[i].dir == E[i + 1].dir)) bad++;
        i = j;
    }
    free(E);
    return bad;
}

#endif

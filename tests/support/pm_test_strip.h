#ifndef PM_TEST_STRIP_H
#define PM_TEST_STRIP_H
/* A strip of rows leaving a mouth, as the seam tests (test_pbent.c,
 * test_pseam.c) build it: rows 0 .. G of C plan points each, row-major
 * (rows[(g C + j) 2 + i]), the quads between them split on the diagonal
 * from (g, j) to (g + 1, j + 1). Needs pm_test_overlap.h and
 * geom/predicates.h included before. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The plan triangle a b c (with plan area) into t; false when it has none. */
static inline bool tri(const float *a, const float *b, const float *c, ptri *t) {
    double A[2] = {a[0], a[1]}, B[2] = {b[0], b[1]}, C[2] = {c[0], c[1]};
    return ptri_make(A, B, C, t);
}

/* The strip's outline into xz: row 0, the last column out, the last row
 * back, the first column back; returns its number of points. */
static inline uint32_t strip_outline(const float *rows, int G, int C, float *xz) {
    uint32_t m = 0;
#define PM__AT(g, j) (rows + 2 * ((size_t)(g) * (size_t)C + (size_t)(j)))
#define PM__PUT(g, j) (xz[2 * m] = PM__AT(g, j)[0], xz[2 * m + 1] = PM__AT(g, j)[1], m++)
    for (int j = 0; j < C; j++) PM__PUT(0, j);
    for (int g = 1; g <= G; g++) PM__PUT(g, C - 1);
    for (int j = C - 2; j >= 0; j--) PM__PUT(G, j);
    for (int g = G - 1; g >= 1; g--) PM__PUT(g, 0);
#undef PM__PUT
    return m;
}

/* Whether the strip is a road's as its certificate has it: every triangle
 * turning one way (so the inner edges cancel and the outline is what their
 * edges sum to) and none overlapping another. Its triangles with plan area
 * go into tr (room for 2 G (C - 1)), their number into *nr. */
static inline bool strip_certified(const float *rows, int G, int C, ptri *tr, size_t *nr) {
    int turns = 0;
    bool fine = true;
    *nr = 0;
    for (int g = 0; g < G; g++)
        for (int j = 0; j + 1 < C; j++) {
            const float *T[2][3] = {{PM__AT(g, j), PM__AT(g, j + 1), PM__AT(g + 1, j + 1)},
                                    {PM__AT(g, j), PM__AT(g + 1, j + 1), PM__AT(g + 1, j)}};
            for (int u = 0; u < 2; u++) {
                double A[2] = {T[u][0][0], T[u][0][1]}, B[2] = {T[u][1][0], T[u][1][1]}, Q[2] = {T[u][2][0], T[u][2][1]};
                double o = pm_orient2d(A, B, Q);
                int t = (o > 0) - (o < 0);
                fine &= t != 0 && (turns == 0 || t == turns);
                turns = t;
                if (fine) *nr += tri(T[u][0], T[u][1], T[u][2], &tr[*nr]);
            }
        }
    for (size_t i = 0; fine && i < *nr; i++)
        for (size_t j = i + 1; fine && j < *nr; j++) fine = !ptri_overlap(&tr[i], &tr[j]);
    return fine;
}
#undef PM__AT

#endif

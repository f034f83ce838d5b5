/* The stitch's shortcuts against the general code they stand for: the
 * normals of a flat primitive (pm__flat_normals, and its no-sums case
 * pm_prim_flat_up_normals when no face points down) are those of
 * pm_prim_compute_normals, bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/geom.h"
#include "network/network_internal.h"
#include "scene/arena.h"
#include "scene/rng.h"
#include "scene/scene.h"

/* A random primitive at height y: nv vertices (a few never used), nt
 * triangles of either orientation, some degenerate (a repeated corner or
 * three points on a line), some opposite pairs that cancel. */
static pm_prim *random_flat(pm_scene *s, pm_rng *r, uint32_t nv, uint32_t nt, float y) {
    pm_prim *p = pm_scene_add_prim(s, "asphalt", "asphalt", PM_PRIM_UV, nv, 3 * nt);
    cr_assert_not_null(p);
    for (uint32_t v = 0; v < nv; v++) {
        float q[3] = {(float)pm_rng_range(r, -500, 500), y, (float)pm_rng_range(r, -500, 500)};
        if (v % 7 == 3) q[0] = q[2] = (float)v;   /* on a line with its like */
        cr_assert_geq(pm_prim_add_vertex(s, p, q, NULL, NULL, NULL), 0);
    }
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t a = (uint32_t)pm_rng_below(r, nv - 2), b = (uint32_t)pm_rng_below(r, nv - 2),
                 c = (uint32_t)pm_rng_below(r, nv - 2);
        if (t % 11 == 5) b = a;                            /* a repeated corner */
        if (t % 13 == 6) a = 3, b = 10, c = 17;           /* collinear */
        cr_assert_eq(pm_prim_add_tri(s, p, a, b, c), 0);
        if (t % 9 == 4 && ++t < nt) cr_assert_eq(pm_prim_add_tri(s, p, a, c, b), 0);  /* cancels */
    }
    return p;
}

static void same_as_general(pm_prim *p) {
    size_t n = 3 * (size_t)p->vcount;
    float *general = malloc((n + 1) * sizeof *general);
    cr_assert(pm__flat_normals(p));
    memcpy(general, p->normals, n * sizeof *general);
    memset(p->normals, 0x7f, n * sizeof *p->normals);
    pm_prim_compute_normals(p);
    for (size_t i = 0; i < n; i++)
        cr_assert(memcmp(&general[i], &p->normals[i], sizeof(float)) == 0,
                  "vertex %zu axis %zu: %a (flat) against %a (general)", i / 3, i % 3, general[i],
                  p->normals[i]);
    free(general);
}

Test(network_stitch, flat_normals_are_the_general_ones_bit_for_bit) {
    pm_rng r;
    pm_rng_seed(&r, 14);
    const float heights[] = {0.0f, -0.0f, 0.15f, -37.25f, 1e-30f, 812.5f};
    for (int k = 0; k < 60; k++) {
        pm_arena *a = pm_arena_create(0);
        pm_scene *s = pm_scene_create(a);
        float y = heights[k % 6];
        pm_prim *p = random_flat(s, &r, 30 + (uint32_t)pm_rng_below(&r, 400),
                                 10 + (uint32_t)pm_rng_below(&r, 900), y);
        /* Heights +0 and -0 mixed are one height. */
        if (y == 0.0f)
            for (uint32_t v = 0; v < p->vcount; v += 2) p->positions[3 * v + 1] = -p->positions[3 * v + 1];
        same_as_general(p);
        pm_arena_destroy(a);
    }
}

Test(network_stitch, a_primitive_not_flat_is_left_to_the_general_code) {
    pm_rng r;
    pm_rng_seed(&r, 15);
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = random_flat(s, &r, 50, 80, 2.0f);
    p->positions[3 * 49 + 1] = nextafterf(2.0f, 3.0f);   /* one vertex a float higher */
    memset(p->normals, 0x5a, 3 * sizeof *p->normals);
    cr_assert_not(pm__flat_normals(p));
    unsigned char b[12];
    memset(b, 0x5a, sizeof b);
    cr_assert(memcmp(p->normals, b, sizeof b) == 0, "nothing written");
    pm_arena_destroy(a);
}

/* random_flat with every face turned to face up (its float c >= 0;
 * swapping two corners negates c exactly), as a network's asphalt. */
static pm_prim *random_up(pm_scene *s, pm_rng *r, uint32_t nv, uint32_t nt, float y) {
    pm_prim *p = random_flat(s, r, nv, nt, y);
    for (uint32_t t = 0; t < p->icount; t += 3) {
        uint32_t *q = p->indices + t;
        const float *a = p->positions + 3 * q[0], *b = p->positions + 3 * q[1], *c = p->positions + 3 * q[2];
        double c_y = ((double)b[2] - a[2]) * ((double)c[0] - a[0]) - ((double)b[0] - a[0]) * ((double)c[2] - a[2]);
        if ((float)c_y < 0.0f) {
            uint32_t k = q[1];
            q[1] = q[2], q[2] = k;
        }
    }
    return p;
}

Test(network_stitch, faces_all_up_take_the_no_sums_path_bit_for_bit) {
    pm_rng r;
    pm_rng_seed(&r, 16);
    const float heights[] = {0.0f, -0.0f, 0.15f, -37.25f, 1e-30f, 812.5f};
    for (int k = 0; k < 60; k++) {
        pm_arena *a = pm_arena_create(0);
        pm_scene *s = pm_scene_create(a);
        float y = heights[k % 6];
        pm_prim *p = random_up(s, &r, 30 + (uint32_t)pm_rng_below(&r, 400),
                               10 + (uint32_t)pm_rng_below(&r, 900), y);
        if (y == 0.0f)
            for (uint32_t v = 0; v < p->vcount; v += 2) p->positions[3 * v + 1] = -p->positions[3 * v + 1];
        memset(p->normals, 0x7f, 3 * (size_t)p->vcount * sizeof *p->normals);
        cr_assert(pm_prim_flat_up_normals(p));
        for (uint32_t v = 0; v < p->vcount; v++)
            cr_assert(p->normals[3 * v] == 0.0f && !signbit(p->normals[3 * v]) &&
                      p->normals[3 * v + 1] == 1.0f && p->normals[3 * v + 2] == 0.0f &&
                      !signbit(p->normals[3 * v + 2]));
        same_as_general(p);
        pm_arena_destroy(a);
    }
}

/* The guard of the no-sums path: one face turned down among faces up
 * leaves it (nothing written), and the sums give that face's lone corners
 * -Y, as the general code does. */
Test(network_stitch, one_face_down_is_summed) {
    pm_rng r;
    pm_rng_seed(&r, 17);
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = random_up(s, &r, 60, 120, 3.5f);
    /* Three corners no other face uses (random_flat leaves the last two
     * unused), one of them new, in a clockwise face. */
    float q[3] = {1000.0f, 3.5f, 1000.0f};
    int64_t w = pm_prim_add_vertex(s, p, q, NULL, NULL, NULL);
    cr_assert_geq(w, 0);
    uint32_t u0 = p->vcount - 3, u1 = p->vcount - 2, u2 = (uint32_t)w;
    p->positions[3 * u0] = 900.0f, p->positions[3 * u0 + 2] = 900.0f;
    p->positions[3 * u1] = 950.0f, p->positions[3 * u1 + 2] = 900.0f;
    cr_assert_eq(pm_prim_add_tri(s, p, u0, u1, u2), 0);   /* clockwise from +Y */
    memset(p->normals, 0x5a, 3 * (size_t)p->vcount * sizeof *p->normals);
    cr_assert_not(pm_prim_flat_up_normals(p));
    unsigned char b[12];
    memset(b, 0x5a, sizeof b);
    cr_assert(memcmp(p->normals, b, sizeof b) == 0, "nothing written");
    same_as_general(p);
    cr_assert(p->normals[3 * u2 + 1] == -1.0f, "the face down's corner points down");
    cr_assert(p->normals[1] == 1.0f);
    pm_arena_destroy(a);
}

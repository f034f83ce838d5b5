#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "geom/terrain.h"
#include "road/road.h"
#include "scene/arena.h"
#include "scene/result.h"
#include "scene/rng.h"

/* A heightfield held as float32 (h32, binary uploads) gives the same bits
 * everywhere as the same values held as doubles: lookups, normals, the
 * terrain mesh, flattening and a whole road on it. */

/* Noise terrain rounded to float32, held both ways. */
static void both_ways(pm_arena *a, pm_heightfield *hd, pm_heightfield *hf) {
    *hd = (pm_heightfield){.origin = {-20, -60}, .cell = 2.0, .cols = 61, .rows = 41};
    pm_noise nz = {.seed = 7, .amplitude = 25, .wavelength = 50, .octaves = 3};
    cr_assert_eq(pm_heightfield_from_noise(a, hd, &nz, NULL), PM_OK);
    size_t n = (size_t)hd->cols * hd->rows;
    float *h32 = pm_arena_alloc(a, n * sizeof *h32);
    for (size_t k = 0; k < n; k++) {
        h32[k] = (float)hd->h[k];
        hd->h[k] = h32[k];
    }
    *hf = *hd;
    hf->h = NULL;
    hf->h32 = h32;
}

Test(terrain, float32_heights_give_the_bits_of_doubles) {
    pm_arena *a = pm_arena_create(0);
    pm_heightfield hd, hf;
    both_ways(a, &hd, &hf);
    pm_rng r;
    pm_rng_seed(&r, 3);
    /* Inside, on the border rows and columns, and outside (clamped). */
    for (int i = 0; i < 20000; i++) {
        double x = -40.0 + 160.0 * pm_rng_unit(&r), z = -80.0 + 120.0 * pm_rng_unit(&r);
        if (i % 10 == 0) x = hd.origin[0] + hd.cell * (double)(i % 61);
        double h1 = pm_heightfield_height(&hd, x, z), h2 = pm_heightfield_height(&hf, x, z);
        cr_assert(memcmp(&h1, &h2, sizeof h1) == 0, "height at %g %g: %.17g %.17g", x, z, h1, h2);
        double n1[3], n2[3];
        pm_heightfield_normal(&hd, x, z, n1);
        pm_heightfield_normal(&hf, x, z, n2);
        cr_assert(memcmp(n1, n2, sizeof n1) == 0, "normal at %g %g", x, z);
    }
    pm_arena_destroy(a);
}

/* The draped road takes its vertices' heights and normals from one cell
 * lookup: exactly the height and the normal (rounded to float) that the
 * two separate lookups give, for either storage, inside, on the border
 * and outside the grid. */
Test(terrain, height_normalf_gives_the_bits_of_both_lookups) {
    pm_arena *a = pm_arena_create(0);
    pm_heightfield hd, hf;
    both_ways(a, &hd, &hf);
    const pm_heightfield *hs[2] = {&hd, &hf};
    pm_rng r;
    pm_rng_seed(&r, 11);
    for (int i = 0; i < 20000; i++) {
        double x = -40.0 + 160.0 * pm_rng_unit(&r), z = -80.0 + 120.0 * pm_rng_unit(&r);
        if (i % 10 == 0) x = hd.origin[0] + hd.cell * (double)(i % 61);
        if (i % 10 == 1) z = hd.origin[1] + hd.cell * (double)(i % 41);
        for (int s = 0; s < 2; s++) {
            double h1 = pm_heightfield_height(hs[s], x, z), nd[3];
            pm_heightfield_normal(hs[s], x, z, nd);
            float n2[3], n1[3] = {(float)nd[0], (float)nd[1], (float)nd[2]};
            double h2 = pm_heightfield_height_normalf(hs[s], x, z, n2);
            cr_assert(memcmp(&h1, &h2, sizeof h1) == 0, "height at %g %g: %.17g %.17g", x, z, h1, h2);
            cr_assert(memcmp(n1, n2, sizeof n1) == 0, "normal at %g %g", x, z);
        }
    }
    pm_arena_destroy(a);
}

static pm_scene *road_on(pm_arena *a, const pm_heightfield *h, bool flatten) {
    static const double pts[] = {-30, 0, -50, 10, 0, -30, 40, 0, -45, 70, 0, -20, 120, 0, -25};
    static const pm_road_prop props[] = {{"lamp", 5.0, 6.0, PM_ROAD_SIDE_BOTH, PM_ROAD_ALIGN_TERRAIN},
                                         {"rail", 3.0, 4.0, PM_ROAD_SIDE_RIGHT, PM_ROAD_ALIGN_TANGENT}};
    pm_road_params p;
    pm_road_params_default(&p);
    p.points = pts;
    p.npoints = 5;
    p.terrain = h;
    p.terrain_mesh = true;
    p.flatten = flatten;
    p.props = props;
    p.nprops = 2;
    pm_scene *s = NULL;
    pm_road_failure f;
    cr_assert_eq(pm_road_generate(a, &p, &s, &f), PM_OK);
    return s;
}

static void assert_same_scene(const pm_scene *s1, const pm_scene *s2) {
    cr_assert_eq(s1->nprims, s2->nprims);
    for (uint32_t i = 0; i < s1->nprims; i++) {
        const pm_prim *p = &s1->prims[i], *q = &s2->prims[i];
        cr_assert_str_eq(p->name, q->name);
        cr_assert(p->vcount == q->vcount && p->icount == q->icount, "%s", p->name);
        cr_assert(memcmp(p->positions, q->positions, p->vcount * 12u) == 0, "%s", p->name);
        cr_assert(memcmp(p->normals, q->normals, p->vcount * 12u) == 0, "%s", p->name);
        cr_assert(memcmp(p->indices, q->indices, p->icount * 4u) == 0, "%s", p->name);
    }
    cr_assert_eq(s1->nprops, s2->nprops);
    for (uint32_t i = 0; i < s1->nprops; i++) {
        const pm_props *p = &s1->props[i], *q = &s2->props[i];
        cr_assert(p->count == q->count && p->count > 0, "%s", p->name);
        cr_assert(memcmp(p->translations, q->translations, p->count * 12u) == 0, "%s", p->name);
        cr_assert(memcmp(p->rotations, q->rotations, p->count * 16u) == 0, "%s", p->name);
    }
}

Test(terrain, roads_on_float32_heights_are_the_same_scene) {
    pm_arena *a = pm_arena_create(0);
    pm_heightfield hd, hf;
    both_ways(a, &hd, &hf);
    for (int flatten = 0; flatten <= 1; flatten++)
        assert_same_scene(road_on(a, &hd, flatten), road_on(a, &hf, flatten));
    pm_arena_destroy(a);
}

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

/* A draped section's columns take their heights and normals from one
 * call (pm_heightfield_drape): exactly what one pm_heightfield_height_normalf
 * per point gives, on random heightfields of either storage (from 2 x 2,
 * where every cell is on the border, up), at points inside, on node lines,
 * at the corners and edges, and outside (clamped). */
Test(terrain, drape_gives_the_bits_of_single_lookups) {
    pm_arena *a = pm_arena_create(0);
    pm_rng r;
    pm_rng_seed(&r, 29);
    enum { N = 64 };
    for (int t = 0; t < 300; t++) {
        pm_heightfield hd = {.origin = {-50.0 + 100.0 * pm_rng_unit(&r), -50.0 + 100.0 * pm_rng_unit(&r)},
                             .cell = 0.25 + 8.0 * pm_rng_unit(&r),
                             .cols = 2 + (uint32_t)(t % 7 == 0 ? t % 3 : pm_rng_unit(&r) * 40),
                             .rows = 2 + (uint32_t)(t % 5 == 0 ? t % 3 : pm_rng_unit(&r) * 40)};
        size_t nn = (size_t)hd.cols * hd.rows;
        hd.h = pm_arena_alloc(a, nn * sizeof(double));
        float *h32 = pm_arena_alloc(a, nn * sizeof(float));
        for (size_t k = 0; k < nn; k++) {
            h32[k] = (float)(40.0 * pm_rng_unit(&r) - 20.0);
            if (k % 11 == 3) h32[k] = -0.0f;
            hd.h[k] = t % 2 ? h32[k] : 40.0 * pm_rng_unit(&r) - 20.0;   /* doubles not float-exact too */
        }
        pm_heightfield hf = hd;
        hf.h = NULL;
        hf.h32 = h32;
        const pm_heightfield *hs[2] = {&hd, &hf};
        double w = hd.cell * (hd.cols - 1), h = hd.cell * (hd.rows - 1);
        double p[3 * N], q[3 * N];
        for (int i = 0; i < N; i++) {
            double x = hd.origin[0] - 0.3 * w + 1.6 * w * pm_rng_unit(&r);
            double z = hd.origin[1] - 0.3 * h + 1.6 * h * pm_rng_unit(&r);
            switch (i % 8) {
            case 0: x = hd.origin[0] + hd.cell * (double)(i % hd.cols); break;   /* node columns */
            case 1: z = hd.origin[1] + hd.cell * (double)(i % hd.rows); break;   /* node rows */
            case 2: x = hd.origin[0] + (i & 8 ? w : 0.0), z = hd.origin[1] + (i & 16 ? h : 0.0); break;
            case 3: x = i & 8 ? -1e9 : 1e9; break;   /* far outside */
            case 4: x = hd.origin[0] + w * (1.0 - 1e-15); break;
            default: break;
            }
            p[3 * i] = x, p[3 * i + 1] = NAN, p[3 * i + 2] = z;
        }
        for (int s = 0; s < 2; s++) {
            memcpy(q, p, sizeof p);
            float nf[3 * N];
            int cnt = N - t % 19;   /* blocks of 16, pairs and a single one left over */
            pm_heightfield_drape(hs[s], q, nf, (size_t)cnt);
            for (int i = 0; i < cnt; i++) {
                float n1[3];
                double h1 = pm_heightfield_height_normalf(hs[s], p[3 * i], p[3 * i + 2], n1);
                cr_assert(memcmp(&h1, q + 3 * i + 1, sizeof h1) == 0, "height at %g %g", p[3 * i], p[3 * i + 2]);
                cr_assert(q[3 * i] == p[3 * i] && q[3 * i + 2] == p[3 * i + 2], "plan point kept");
                cr_assert(memcmp(n1, nf + 3 * i, sizeof n1) == 0, "normal at %g %g", p[3 * i], p[3 * i + 2]);
            }
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

/* road_mesh.c's fast paths (whole sections' grid rows and vertices, the
 * bands' tests on widened plan positions) give the bytes of its plain
 * paths (pm__road_generate_plain): thousands of random roads, open and
 * closed, straight and hairpin (folds, fans, slivers), banked, on terrain
 * (drape and bank), with shoulders, wide cross-sections (banded, fetch
 * order), props and LODs, with and without the self-overlap check,
 * compared primitive by primitive, bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "pm_test_road.h"
#include "pm_test_scene.h"
#include "road/road_internal.h"
#include "scene/arena.h"
#include "scene/meta.h"
#include "scene/result.h"
#include "scene/rng.h"

/* A random road in a: a wandering or hairpinned polyline, or a loop. */
static void random_road(pm_arena *a, pm_rng *g, pm_road_params *p) {
    pm_road_params_default(p);
    size_t n = 2 + pm_rng_below(g, 12);
    bool closed = n >= 3 && pm_rng_chance(g, 0.25);
    double *pts = pm_arena_alloc(a, 3 * n * sizeof(double));
    double h = pm_rng_unit(g) * 6.28, x = 0.0, z = 0.0, R = pm_rng_range(g, 12.0, 120.0);
    bool sharp = pm_rng_chance(g, 0.5);
    for (size_t i = 0; i < n; i++) {
        if (closed) {
            double t = 6.283185307179586 * (double)i / (double)n + pm_rng_range(g, -0.2, 0.2);
            x = R * pm_rng_range(g, 0.7, 1.3) * cos(t);
            z = R * pm_rng_range(g, 0.7, 1.3) * sin(t);
        }
        pts[3 * i] = x;
        pts[3 * i + 1] = pm_rng_chance(g, 0.5) ? pm_rng_range(g, -4.0, 4.0) : 0.0;
        pts[3 * i + 2] = z;
        h += sharp ? pm_rng_range(g, -2.6, 2.6) : pm_rng_range(g, -0.3, 0.3);
        double len = pm_rng_range(g, 3.0, 60.0);
        x += len * cos(h);
        z += len * sin(h);
    }
    p->points = pts;
    p->npoints = n;
    p->closed = closed;
    if (pm_rng_chance(g, 0.3)) p->curve = PM_CURVE_LINEAR;
    p->width = pm_rng_range(g, 2.0, 16.0);
    static const double shoulders[] = {0.0, 0.0, 0.3, 1.0, 2.5, 6.0};
    p->shoulder = shoulders[pm_rng_below(g, 6)];
    static const uint32_t cs[] = {1, 2, 2, 3, 4, 4, 5, 7, 8, 12, 20};
    p->cross_segments = cs[pm_rng_below(g, 11)];
    static const double errs[] = {0.01, 0.05, 0.05, 0.2, 1.0};
    p->max_error = errs[pm_rng_below(g, 5)];
    static const double segs[] = {0.7, 2.0, 5.0, 5.0, 20.0, 1000.0};
    p->max_segment = segs[pm_rng_below(g, 6)];
    if (pm_rng_chance(g, 0.4)) {
        p->bank_max_degrees = pm_rng_range(g, 1.0, 45.0);
        p->bank_radius = pm_rng_range(g, 5.0, 100.0);
        p->bank_transition = pm_rng_chance(g, 0.3) ? 0.0 : pm_rng_range(g, 1.0, 40.0);
    }
    if (pm_rng_chance(g, 0.2)) {
        double *roll = pm_arena_alloc(a, n * sizeof(double));
        for (size_t i = 0; i < n; i++) roll[i] = pm_rng_range(g, -10.0, 10.0);
        p->roll = roll;
    }
    if (pm_rng_chance(g, 0.3)) {
        pm_heightfield *hf = pm_test_terrain_under(a, g, pts, n);
        cr_assert(hf);
        p->terrain = hf;
        p->terrain_mesh = pm_rng_chance(g, 0.3);
        p->conform = pm_rng_chance(g, 0.5) ? PM_ROAD_DRAPE : PM_ROAD_BANK;
        p->up = pm_rng_chance(g, 0.2) ? PM_ROAD_UP_TERRAIN : PM_ROAD_UP_WORLD;
        p->flatten = pm_rng_chance(g, 0.2);
    }
    if (pm_rng_chance(g, 0.2)) {
        pm_road_prop *pr = pm_arena_calloc(a, 1, sizeof *pr);
        pr->name = "lamp";
        pr->spacing = pm_rng_range(g, 3.0, 30.0);
        pr->offset = pm_rng_range(g, 0.0, 6.0);
        pr->side = PM_ROAD_SIDE_BOTH;
        p->props = pr;
        p->nprops = 1;
    }
    if (pm_rng_chance(g, 0.25)) {
        double *l = pm_arena_alloc(a, 2 * sizeof(double));
        l[0] = p->max_error * pm_rng_range(g, 2.0, 10.0);
        l[1] = l[0] * pm_rng_range(g, 2.0, 8.0);
        p->lods = l;
        p->nlods = 2;
    }
    p->uv_scale = pm_rng_chance(g, 0.2) ? pm_rng_range(g, 0.1, 3.0) : 0.25;
    p->max_vertices = 2000000;
    /* As a network builds its roads: no self-overlap check, no sections kept. */
    p->overlaps_checked_by_caller = pm_rng_chance(g, 0.25);
}

/* Some roads run along an axis (every row's x or z the same in a
 * column), half of them far out (1.6e7 m: a float's step is 2 m there,
 * so consecutive rows 0.7 m apart repeat x and z: the whole rows' vertex
 * by vertex path, and slivers). */
static void axis_road(pm_rng *g, pm_road_params *p) {
    double *pts = (double *)p->points;
    bool along_z = pm_rng_chance(g, 0.5), far = pm_rng_chance(g, 0.5);
    double at = pm_rng_chance(g, 0.5) ? 0.0 : pm_rng_range(g, -50.0, 50.0), base = far ? 1.6e7 : 0.0;
    for (size_t i = 0; i < p->npoints; i++) {
        pts[3 * i + (along_z ? 0 : 2)] = at;
        pts[3 * i + (along_z ? 2 : 0)] = base + 30.0 * (double)i + pm_rng_range(g, 0.0, 3.0);
    }
    p->closed = false;
    if (far) {
        p->max_segment = 0.7;
        p->terrain = NULL;   /* not under the road any more */
    }
}

static bool same_floats(const float *a, const float *b, size_t n) {
    return n == 0 || (a && b && memcmp(a, b, n * sizeof(float)) == 0);
}

static int64_t meta_int(const pm_scene *s, const char *key) {
    const pm_meta *m = pm_meta_get(s->meta, key);
    return m ? m->u.i : -1;
}

/* Every primitive of fast the same as plain's, bit for bit. */
static void assert_same_prims(const pm_scene *fast, const pm_scene *plain, int trial) {
    cr_assert_eq(fast->nprims, plain->nprims, "trial %d", trial);
    for (uint32_t k = 0; k < fast->nprims; k++) {
        const pm_prim *f = &fast->prims[k], *q = &plain->prims[k];
        cr_assert_str_eq(f->name, q->name);
        cr_assert_eq(f->vcount, q->vcount, "trial %d %s", trial, f->name);
        cr_assert_eq(f->icount, q->icount, "trial %d %s", trial, f->name);
        cr_assert_eq(f->normals_unit, q->normals_unit, "trial %d %s", trial, f->name);
        size_t nv = f->vcount;
        cr_assert(same_floats(f->positions, q->positions, 3 * nv), "trial %d %s", trial, f->name);
        cr_assert(same_floats(f->normals, q->normals, 3 * nv), "trial %d %s", trial, f->name);
        cr_assert(same_floats(f->uvs, q->uvs, (f->uvs ? 2 : 0) * nv), "trial %d %s", trial, f->name);
        cr_assert(f->icount == 0 || memcmp(f->indices, q->indices, f->icount * sizeof(uint32_t)) == 0,
                  "trial %d %s", trial, f->name);
    }
}

Test(road_mesh_fast, same_bytes_as_the_plain_paths) {
    pm_rng g;
    pm_rng_seed(&g, 20261202);
    int ok = 0, folded = 0, slivers = 0, refused = 0, draped = 0, banded = 0, axis = 0;
    for (int trial = 0; trial < 1500; trial++) {
        pm_arena *a = pm_arena_create(0);
        pm_road_params p;
        random_road(a, &g, &p);
        if (pm_rng_chance(&g, 0.08)) axis_road(&g, &p);
        pm_scene *fast = NULL, *plain = NULL;
        pm_road_failure ff, fp;
        int rf = pm_road_generate(a, &p, &fast, &ff);
        int rp = pm__road_generate_plain(a, &p, &plain, &fp);
        cr_assert_eq(rf, rp, "trial %d: %d fast, %d plain", trial, rf, rp);
        if (rf == PM_ERR_GEOMETRY) cr_assert_eq(memcmp(&ff.overlaps, &fp.overlaps, sizeof ff.overlaps), 0);
        if (rf != PM_OK) {
            refused++;
            pm_arena_destroy(a);
            continue;
        }
        ok++;
        assert_same_prims(fast, plain, trial);
        cr_assert_eq(meta_int(fast, "triangles"), meta_int(plain, "triangles"));
        cr_assert_eq(meta_int(fast, "triangles_collapsed"), meta_int(plain, "triangles_collapsed"));
        /* all of it: lengths, edges, min_radius, max_bank_degrees, folds, LODs, props, warnings */
        cr_assert(pm_test_meta_same(a, fast->meta, plain->meta), "trial %d: metadata", trial);
        cr_assert_eq(fast->nprops, plain->nprops, "trial %d", trial);
        for (uint32_t k = 0; k < fast->nprops; k++) {
            const pm_props *f = &fast->props[k], *q = &plain->props[k];
            cr_assert(strcmp(f->name, q->name) == 0 && f->count == q->count, "trial %d props", trial);
            cr_assert(same_floats(f->translations, q->translations, 3 * (size_t)f->count) &&
                          same_floats(f->rotations, q->rotations, 4 * (size_t)f->count) &&
                          same_floats(f->scales, q->scales, 3 * (size_t)f->count),
                      "trial %d props", trial);
        }
        axis += p.npoints > 0 && (p.points[0] == p.points[3] || p.points[2] == p.points[5]);
        const pm_meta *fo = pm_meta_get(fast->meta, "folds");
        folded += fo && fo->u.kids.count > 0;
        slivers += meta_int(fast, "triangles_collapsed") > 0;
        draped += p.terrain && p.conform == PM_ROAD_DRAPE;
        banded += p.cross_segments > 7;
        pm_arena_destroy(a);
    }
    cr_log_info("ok %d folded %d slivers %d draped %d banded %d refused %d axis %d", ok, folded, slivers, draped,
                banded, refused, axis);
    /* Not vacuous: every kind of road occurs often. */
    cr_assert_gt(ok, 1000, "ok %d", ok);
    cr_assert_gt(folded, 200, "folded %d", folded);
    cr_assert_gt(slivers, 200, "slivers %d", slivers);
    cr_assert_gt(draped, 100, "draped %d", draped);
    cr_assert_gt(banded, 200, "banded %d", banded);
    cr_assert_gt(refused, 100, "refused %d", refused);
    cr_assert_gt(axis, 40, "axis %d", axis);
}

/* Rows that repeat the previous row's vertices (the same float position
 * and UV: control points a hair apart, 1e-7 m, far below a float's step
 * at these coordinates): the whole rows' pair test must see them, as the
 * plain path's vertex-by-vertex test does, whatever the width (2 and 3
 * columns unrolled, others, more than 32 on wide shoulders) and heading. */
Test(road_mesh_fast, rows_that_repeat_the_previous_row) {
    pm_rng g;
    pm_rng_seed(&g, 20261203);
    int repeated = 0, wide = 0;
    for (int trial = 0; trial < 300; trial++) {
        pm_arena *a = pm_arena_create(0);
        pm_road_params p;
        pm_road_params_default(&p);
        size_t n = 3 + pm_rng_below(&g, 6);
        double *pts = pm_arena_alloc(a, 3 * n * sizeof(double));
        double h = pm_rng_unit(&g) * 6.283185307179586, c = cos(h), s = sin(h);
        double x0 = pm_rng_range(&g, 50.0, 5000.0), z0 = pm_rng_range(&g, -5000.0, -50.0), along = 0.0;
        for (size_t i = 0; i < n; i++) {
            pts[3 * i] = x0 + along * c;
            pts[3 * i + 1] = 0.0;
            pts[3 * i + 2] = z0 + along * s;
            along += (i % 2 && i + 2 < n) ? 1e-7 : pm_rng_range(&g, 20.0, 60.0);
        }
        p.points = pts;
        p.npoints = n;
        p.curve = pm_rng_chance(&g, 0.5) ? PM_CURVE_LINEAR : PM_CURVE_CATMULL_ROM;
        static const uint32_t cs[] = {1, 2, 2, 3, 4, 5, 8, 12};
        p.cross_segments = cs[pm_rng_below(&g, 8)];
        p.width = pm_rng_range(&g, 3.0, 12.0);
        p.shoulder = pm_rng_chance(&g, 0.3) ? 0.0 : pm_rng_range(&g, 0.5, 30.0);
        p.uv_scale = pm_rng_range(&g, 0.05, 0.5);
        p.max_segment = pm_rng_chance(&g, 0.5) ? 1000.0 : 5.0;
        p.overlaps_checked_by_caller = true;
        pm_scene *fast = NULL, *plain = NULL;
        int rf = pm_road_generate(a, &p, &fast, NULL), rp = pm__road_generate_plain(a, &p, &plain, NULL);
        cr_assert_eq(rf, rp, "trial %d", trial);
        if (rf == PM_OK) {
            assert_same_prims(fast, plain, trial);
            /* fewer vertices than rows times columns: some row repeated */
            int64_t rows = meta_int(fast, "samples");
            uint32_t carriage = p.cross_segments + 1 + p.cross_segments % 2;
            uint32_t ss = (pm_road_columns(&p) - carriage) / 2;   /* shoulder strips a side */
            for (uint32_t k = 0; k < fast->nprims; k++) {
                const pm_prim *pr = &fast->prims[k];
                bool asphalt = strcmp(pr->name, "asphalt") == 0;
                int64_t full = rows * (asphalt ? carriage : 2 * (ss + 1));
                repeated += asphalt && (int64_t)pr->vcount < full;
                wide += !asphalt && ss + 1 > 32 && (int64_t)pr->vcount < full;
            }
        }
        pm_arena_destroy(a);
    }
    cr_log_info("repeated %d wide %d", repeated, wide);
    cr_assert_gt(repeated, 50, "repeated %d", repeated);
    cr_assert_gt(wide, 5, "wide %d", wide);
}

/* A network's road (pm_road_generate_base, overlaps checked by the
 * caller: pm__road_grid_emit's one pass where the road is open, off
 * terrain, 3 columns wide and fold free) against the plain paths' asphalt,
 * bit for bit: straight streets at any heading (some far out, their rows
 * repeating vertices), wandering and hairpinned ones (folds: the two
 * passes), control points a hair apart (repeated rows), two or three
 * columns, Catmull-Rom and linear. */
Test(road_mesh_fast, network_roads_in_one_pass) {
    pm_rng g;
    pm_rng_seed(&g, 20261215);
    int ok = 0, clean = 0, folded = 0, repeated = 0, slivers = 0;
    for (int trial = 0; trial < 4000; trial++) {
        pm_arena *a = pm_arena_create(0);
        pm_road_params p;
        pm_road_params_default(&p);
        size_t n = 2 + pm_rng_below(&g, 8);
        double *pts = pm_arena_alloc(a, 3 * n * sizeof(double));
        int kind = (int)pm_rng_below(&g, 4);   /* 0 straight, 1 far straight, 2 wandering, 3 hairpins */
        double h = pm_rng_unit(&g) * 6.283185307179586, x = pm_rng_range(&g, -3000.0, 3000.0),
               z = pm_rng_range(&g, -3000.0, 3000.0);
        if (pm_rng_chance(&g, 0.3)) h = 1.5707963267948966 * (double)pm_rng_below(&g, 4);   /* along an axis */
        if (kind == 1) {   /* far out along x, z or both */
            int axes = 1 + (int)pm_rng_below(&g, 3);
            if (axes & 1) x += 1.6e7;
            if (axes & 2) z -= 1.6e7;
        }
        bool hair = pm_rng_chance(&g, 0.15);   /* a point a hair from the one before */
        for (size_t i = 0; i < n; i++) {
            pts[3 * i] = x;
            pts[3 * i + 1] = pm_rng_chance(&g, 0.3) ? pm_rng_range(&g, -3.0, 3.0) : 0.0;
            pts[3 * i + 2] = z;
            if (kind >= 2) h += kind == 2 ? pm_rng_range(&g, -0.4, 0.4) : pm_rng_range(&g, -2.7, 2.7);
            double len = hair && i % 2 && i + 2 < n ? 1e-7 : pm_rng_range(&g, 3.0, 120.0);
            x += len * cos(h);
            z += len * sin(h);
        }
        p.points = pts;
        p.npoints = n;
        if (pm_rng_chance(&g, 0.15)) p.curve = PM_CURVE_LINEAR;
        if (pm_rng_chance(&g, 0.3)) p.alpha = pm_rng_unit(&g);
        p.width = pm_rng_range(&g, 2.0, 20.0);
        p.shoulder = 0.0;
        p.cross_segments = pm_rng_chance(&g, 0.8) ? 1 : 2;
        static const double errs[] = {0.01, 0.05, 0.05, 0.2};
        p.max_error = errs[pm_rng_below(&g, 4)];
        static const double segs[] = {0.7, 5.0, 5.0, 5.0, 20.0, 1000.0};
        p.max_segment = segs[pm_rng_below(&g, 6)];
        p.uv_scale = pm_rng_chance(&g, 0.5) ? 0.25 : pm_rng_range(&g, 0.05, 3.0);
        p.max_vertices = 2000000;
        p.overlaps_checked_by_caller = true;
        pm_scene *base = NULL, *plain = NULL;
        pm_road_base rb;
        int rf = pm_road_generate_base(a, &p, &base, &rb, NULL), rp = pm__road_generate_plain(a, &p, &plain, NULL);
        cr_assert_eq(rf, rp, "trial %d: %d base, %d plain", trial, rf, rp);
        if (rf == PM_OK) {
            ok++;
            cr_assert_eq(base->nprims, 1, "trial %d", trial);
            const pm_prim *q = &plain->prims[0];
            cr_assert_str_eq(q->name, "asphalt");
            pm_scene one = *plain;
            one.nprims = 1;
            assert_same_prims(base, &one, trial);
            cr_assert_eq(rb.samples, meta_int(plain, "samples"), "trial %d", trial);
            const pm_meta *fo = pm_meta_get(plain->meta, "folds");
            bool fold = fo && fo->u.kids.count > 0;
            folded += fold;
            clean += !fold && rb.samples >= 3;
            repeated += !fold && (int64_t)q->vcount < 3 * rb.samples;
            slivers += !fold && meta_int(plain, "triangles_collapsed") > 0;
        }
        pm_arena_destroy(a);
    }
    cr_log_info("ok %d clean %d folded %d repeated %d slivers %d", ok, clean, folded, repeated, slivers);
    cr_assert_gt(clean, 2000, "clean %d", clean);
    cr_assert_gt(folded, 200, "folded %d", folded);
    cr_assert_gt(repeated, 100, "repeated %d", repeated);
    cr_assert_gt(slivers, 20, "slivers %d", slivers);
}

/* A road request's base level (pm_road_generate: metadata, with or
 * without the self-overlap check) where the grid and the asphalt go in one
 * pass (pm__road_grid_emit: open, off terrain, 3 columns, fold free; the
 * positions kept for the overlap check's outline proof) against the plain
 * paths: random roads without a shoulder, one or two carriageway strips,
 * mostly off terrain, hairpins among them (refused by the overlap check,
 * or folded: the two passes), compared primitive by primitive, metadata
 * and refusals too. */
Test(road_mesh_fast, fused_base_level_as_the_plain_paths) {
    pm_rng g;
    pm_rng_seed(&g, 20261204);
    int fused = 0, refused = 0, checked = 0;
    for (int trial = 0; trial < 3000; trial++) {
        pm_arena *a = pm_arena_create(0);
        pm_road_params p;
        random_road(a, &g, &p);
        if (pm_rng_chance(&g, 0.08)) axis_road(&g, &p);
        p.shoulder = 0.0;
        p.cross_segments = pm_rng_chance(&g, 0.5) ? 1 : 2;
        if (pm_rng_chance(&g, 0.85)) p.terrain = NULL;
        pm_scene *fast = NULL, *plain = NULL;
        pm_road_failure ff, fp;
        int rf = pm_road_generate(a, &p, &fast, &ff);
        int rp = pm__road_generate_plain(a, &p, &plain, &fp);
        cr_assert_eq(rf, rp, "trial %d: %d fast, %d plain", trial, rf, rp);
        if (rf == PM_ERR_GEOMETRY) {
            cr_assert_eq(memcmp(&ff.overlaps, &fp.overlaps, sizeof ff.overlaps), 0, "trial %d", trial);
            refused++;
        }
        if (rf == PM_OK) {
            assert_same_prims(fast, plain, trial);
            cr_assert(pm_test_meta_same(a, fast->meta, plain->meta), "trial %d: metadata", trial);
            const pm_meta *fo = pm_meta_get(fast->meta, "folds");
            bool took = !p.closed && !p.terrain && !(fo && fo->u.kids.count > 0);
            fused += took;
            checked += took && !p.overlaps_checked_by_caller;
        }
        pm_arena_destroy(a);
    }
    cr_log_info("fused %d (overlaps checked %d) refused %d", fused, checked, refused);
    cr_assert_gt(fused, 1200, "fused %d", fused);
    cr_assert_gt(checked, 900, "checked %d", checked);
    cr_assert_gt(refused, 50, "refused %d", refused);
}

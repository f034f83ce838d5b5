/* The scene model: primitives and props that grow past their reserve. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "scene/rng.h"
#include "scene/scene.h"

Test(scene, create_is_empty_with_meta_object) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    cr_assert_not_null(s);
    cr_assert_eq(s->nprims, 0);
    cr_assert_eq(s->nprops, 0);
    cr_assert_not_null(s->meta);
    cr_assert_eq(s->meta->kind, PM_META_OBJ);
    cr_assert_eq(pm_scene_vertex_count(s), 0);
    cr_assert_eq(pm_scene_triangle_count(s), 0);
    pm_arena_destroy(a);
}

Test(scene, prim_grows_and_keeps_attributes) {
    pm_arena *a = pm_arena_create(1024);
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = pm_scene_add_prim(s, "road", "asphalt", PM_PRIM_UV | PM_PRIM_COLOR, 2, 3);
    cr_assert_not_null(p);
    const uint32_t n = 50000;
    for (uint32_t i = 0; i < n; i++) {
        float pos[3] = {(float)i, 1, 2}, nrm[3] = {0, 1, 0}, uv[2] = {(float)i, 0.5f};
        float rgba[4] = {1, 0, 0, (float)(i % 7)};
        cr_assert_eq(pm_prim_add_vertex(s, p, pos, nrm, uv, rgba), (int64_t)i);
    }
    for (uint32_t i = 0; i + 2 < n; i += 3) cr_assert_eq(pm_prim_add_tri(s, p, i, i + 1, i + 2), 0);
    cr_assert_eq(p->vcount, n);
    cr_assert_geq(p->vcap, n);
    for (uint32_t i = 0; i < n; i++) {
        cr_assert_eq(p->positions[3 * i], (float)i);
        cr_assert_eq(p->normals[3 * i + 1], 1.0f);
        cr_assert_eq(p->uvs[2 * i], (float)i);
        cr_assert_eq(p->colors[4 * i + 3], (float)(i % 7));
    }
    for (uint32_t t = 0; t < p->icount; t++) cr_assert_eq(p->indices[t], t);
    cr_assert_eq(pm_scene_vertex_count(s), n);
    cr_assert_eq(pm_scene_triangle_count(s), n / 3);
    pm_arena_destroy(a);
}

Test(scene, optional_attributes_default_to_zero) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    pm_prim *plain = pm_scene_add_prim(s, "p", "m", 0, 0, 0);
    float pos[3] = {1, 2, 3};
    cr_assert_eq(pm_prim_add_vertex(s, plain, pos, NULL, NULL, NULL), 0);
    cr_assert_null(plain->uvs);
    cr_assert_null(plain->colors);
    cr_assert_eq(plain->normals[0] + plain->normals[1] + plain->normals[2], 0.0f);
    pm_prim *uv = pm_scene_add_prim(s, "u", "m", PM_PRIM_UV, 0, 0);
    cr_assert_eq(pm_prim_add_vertex(s, uv, pos, NULL, NULL, NULL), 0);
    cr_assert_eq(uv->uvs[0], 0.0f);
    cr_assert_eq(uv->uvs[1], 0.0f);
    pm_arena_destroy(a);
}

/* Primitives are stored by value in a growing array: keep indices, and the
 * earlier primitives' content survives every growth. */
/* A PM_PRIM_LATE_UVS primitive holds no UVs while it is built (vertices
 * added and primitives appended store none), then pm_prim_late_uvs gives
 * it room for every vertex it can hold and clears the flag; again, it
 * does nothing. */
Test(scene, late_uvs_come_when_asked) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    pm_prim *src = pm_scene_add_prim(s, "src", "m", PM_PRIM_UV, 0, 0);
    const float uv[2] = {0.25f, 0.75f};
    for (int i = 0; i < 3; i++) {
        const float pos[3] = {(float)i, 0, (float)(i * i)};
        cr_assert_eq(pm_prim_add_vertex(s, src, pos, NULL, uv, NULL), i);
    }
    cr_assert_eq(pm_prim_add_tri(s, src, 0, 2, 1), 0);
    pm_prim *p = pm_scene_add_prim(s, "late", "m", PM_PRIM_UV | PM_PRIM_LATE_UVS, 0, 0);
    cr_assert_not_null(p);
    p = &s->prims[1];
    src = &s->prims[0];
    cr_assert_null(p->uvs);
    for (int k = 0; k < 40; k++) cr_assert_geq(pm_prim_append(s, p, src), 0);
    cr_assert_null(p->uvs, "grown, still none");
    cr_assert_eq(p->vcount, 120);
    cr_assert_eq(pm_prim_late_uvs(s, p), 0);
    cr_assert_not_null(p->uvs);
    cr_assert_eq(p->flags, PM_PRIM_UV);
    for (uint32_t v = 0; v < p->vcap; v++) p->uvs[2 * v] = p->uvs[2 * v + 1] = (float)v;   /* room for all */
    float *kept = p->uvs;
    cr_assert_eq(pm_prim_late_uvs(s, p), 0);
    cr_assert_eq(p->uvs, kept, "a second call changes nothing");
    cr_assert_eq(pm_scene_validate(s), 0);
    pm_arena_destroy(a);
}

Test(scene, many_prims_and_copied_names) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    char name[32];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "prim%d", i);
        pm_prim *p = pm_scene_add_prim(s, name, "mat", 0, 0, 0);
        cr_assert_not_null(p);
        float pos[3] = {(float)i, 0, 0};
        for (int k = 0; k <= i % 5; k++) cr_assert_geq(pm_prim_add_vertex(s, p, pos, NULL, NULL, NULL), 0);
    }
    strcpy(name, "overwritten");
    cr_assert_eq(s->nprims, 100);
    uint64_t total = 0;
    for (int i = 0; i < 100; i++) {
        char want[32];
        snprintf(want, sizeof want, "prim%d", i);
        cr_assert_str_eq(s->prims[i].name, want);
        cr_assert_str_eq(s->prims[i].material, "mat");
        cr_assert_eq(s->prims[i].vcount, (uint32_t)(i % 5 + 1));
        cr_assert_eq(s->prims[i].positions[0], (float)i);
        total += (uint64_t)(i % 5 + 1);
    }
    cr_assert_eq(pm_scene_vertex_count(s), total);
    pm_arena_destroy(a);
}

Test(scene, props_grow) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    pm_props *lamps = pm_scene_add_props(s, "lamp");
    cr_assert_not_null(lamps);
    for (int i = 0; i < 1000; i++) {
        float t[3] = {(float)i, 0, 0}, r[4] = {0, 0, 0, 1}, sc[3] = {1, 1, (float)i};
        cr_assert_eq(pm_props_add(s, lamps, t, r, sc), 0);
    }
    pm_props *trees = pm_scene_add_props(s, "tree");
    lamps = &s->props[0];
    cr_assert_not_null(trees);
    cr_assert_eq(s->nprops, 2);
    cr_assert_str_eq(lamps->name, "lamp");
    cr_assert_eq(lamps->count, 1000);
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(lamps->translations[3 * i], (float)i);
        cr_assert_eq(lamps->rotations[4 * i + 3], 1.0f);
        cr_assert_eq(lamps->scales[3 * i + 2], (float)i);
    }
    pm_arena_destroy(a);
}

Test(scene, out_of_memory_is_reported) {
    pm_arena *a = pm_arena_create(4096);
    pm_arena_set_limit(a, 64 * 1024);
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = pm_scene_add_prim(s, "p", "m", PM_PRIM_UV, 0, 0);
    cr_assert_not_null(p);
    float pos[3] = {0, 0, 0};
    int64_t r = 0;
    uint32_t added = 0;
    while (r >= 0 && added < 1000000) {
        r = pm_prim_add_vertex(s, p, pos, NULL, NULL, NULL);
        if (r >= 0) added++;
    }
    cr_assert_eq(r, -1);
    cr_assert_eq(p->vcount, added);
    cr_assert_leq(pm_arena_reserved(a), (size_t)64 * 1024);
    pm_arena_destroy(a);
}

/* ---- pm_scene_validate: the contract checked once, where it is made ---- */

static pm_scene *tri_scene(pm_arena *a, unsigned flags) {
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = pm_scene_add_prim(s, "t", "m", flags, 0, 0);
    const float pos[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, up[3] = {0, 1, 0};
    const float c[4] = {0.5f, 0.5f, 0.5f, 1};
    for (int i = 0; i < 3; i++) cr_assert_geq(pm_prim_add_vertex(s, p, pos[i], up, NULL, c), 0);
    cr_assert_eq(pm_prim_add_tri(s, p, 0, 2, 1), 0);
    return s;
}

Test(scene, validate_sets_the_flag_and_adding_clears_it) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = tri_scene(a, PM_PRIM_COLOR);
    cr_assert_not(s->validated);
    cr_assert_eq(pm_scene_validate(s), 0);
    cr_assert(s->validated);
    const float p[3] = {2, 0, 2};
    cr_assert_geq(pm_prim_add_vertex(s, &s->prims[0], p, NULL, NULL, NULL), 0);
    cr_expect_not(s->validated, "a new vertex is unchecked");
    cr_assert_eq(pm_scene_validate(s), 0, "the zero normal is fixed, not refused");
    cr_expect_eq(s->prims[0].normals[3 * 3 + 1], 1.0f);
    cr_assert_eq(pm_prim_add_tri(s, &s->prims[0], 0, 1, 3), 0);
    cr_expect_not(s->validated);
    cr_assert_eq(pm_scene_validate(s), 0);
    pm_props *pr = pm_scene_add_props(s, "x");
    cr_expect_not(s->validated);
    cr_assert_eq(pm_scene_validate(s), 0);
    const float t[3] = {0, 0, 0}, r[4] = {0, 0, 0, 1}, sc[3] = {1, 1, 1};
    cr_assert_eq(pm_props_add(s, pr, t, r, sc), 0);
    cr_expect_not(s->validated);
    cr_assert_eq(pm_scene_add_prim(s, "u", "m", 0, 0, 0) != NULL, 1);
    cr_expect_not(s->validated);
    pm_arena_destroy(a);
}

Test(scene, validate_refuses_a_broken_contract) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = tri_scene(a, PM_PRIM_UV | PM_PRIM_COLOR);
    pm_prim *p = &s->prims[0];
    float *fields[] = {p->positions + 4, p->normals + 2, p->uvs + 5, p->colors + 11};
    for (int i = 0; i < 4; i++) {
        float keep = *fields[i];
        *fields[i] = i % 2 ? INFINITY : NAN;
        cr_expect_eq(pm_scene_validate(s), -1, "non-finite number in array %d", i);
        cr_expect_not(s->validated);
        *fields[i] = keep;
    }
    p->indices[1] = 3;
    cr_expect_eq(pm_scene_validate(s), -1, "index past the vertices");
    p->indices[1] = 2;
    p->icount = 2;
    cr_expect_eq(pm_scene_validate(s), -1, "index count not a multiple of 3");
    p->icount = 3;
    cr_expect_eq(pm_scene_validate(s), 0);
    pm_props *pr = pm_scene_add_props(s, "x");
    const float t[3] = {0, 0, 0}, r[4] = {0, 0, 0, 1}, sc[3] = {1, 1, 1};
    cr_assert_eq(pm_props_add(s, pr, t, r, sc), 0);
    s->props[0].rotations[3] = -INFINITY;
    cr_expect_eq(pm_scene_validate(s), -1, "non-finite prop");
    cr_expect_not(s->validated);
    pm_arena_destroy(a);
}

/* Every element is checked, whichever of the vectorized checks' lanes or
 * tail it falls in: one bad number or index anywhere is refused. */
Test(scene, validate_checks_every_element) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = pm_scene_add_prim(s, "t", "m", PM_PRIM_UV | PM_PRIM_COLOR, 0, 0);
    const float up[3] = {0, 1, 0}, uv[2] = {0.5f, 0.5f}, c[4] = {0.5f, 0.5f, 0.5f, 1};
    for (int i = 0; i < 11; i++) {
        const float pos[3] = {(float)i, 0, (float)(i % 2)};
        cr_assert_geq(pm_prim_add_vertex(s, p, pos, up, uv, c), 0);
    }
    for (uint32_t i = 0; i + 2 < 11; i++) cr_assert_eq(pm_prim_add_tri(s, p, i, i + 1, i + 2), 0);
    cr_assert_eq(pm_scene_validate(s), 0);
    float *arrays[] = {p->positions, p->normals, p->uvs, p->colors};
    const size_t sizes[] = {33, 33, 22, 44};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < sizes[k]; i++) {
            float keep = arrays[k][i];
            arrays[k][i] = i % 2 ? -INFINITY : NAN;
            cr_assert_eq(pm_scene_validate(s), -1, "array %d, element %zu", k, i);
            arrays[k][i] = keep;
        }
    for (uint32_t i = 0; i < p->icount; i++) {
        uint32_t keep = p->indices[i];
        p->indices[i] = 11 + i % 3;
        cr_assert_eq(pm_scene_validate(s), -1, "index %u", i);
        p->indices[i] = keep;
    }
    cr_assert_eq(pm_scene_validate(s), 0);
    pm_arena_destroy(a);
}

Test(scene, validate_fixes_normals_and_colours_in_place) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = tri_scene(a, PM_PRIM_COLOR);
    pm_prim *p = &s->prims[0];
    p->normals[0] = 0, p->normals[1] = 0, p->normals[2] = 0;   /* zero: +Y */
    p->normals[3] = 3, p->normals[4] = 0, p->normals[5] = 4;   /* length 5 */
    p->normals[7] = 1.00004f;                                  /* within 1e-4: kept */
    p->colors[0] = 1.5f, p->colors[6] = -0.25f;
    cr_assert_eq(pm_scene_validate(s), 0);
    cr_expect_eq(p->normals[0], 0.0f);
    cr_expect_eq(p->normals[1], 1.0f);
    cr_expect_eq(p->normals[3], 0.6f);
    cr_expect_eq(p->normals[5], 0.8f);
    cr_expect_eq(p->normals[7], 1.00004f);
    cr_expect_eq(p->colors[0], 1.0f);
    cr_expect_eq(p->colors[6], 0.0f);
    cr_expect_eq(p->colors[1], 0.5f);
    for (int v = 0; v < 3; v++) cr_expect(pm_normal_is_unit(p->normals + 3 * v));
    pm_arena_destroy(a);
}

/* A copy lives in its own arena: exact arrays, metadata and props kept,
 * the source's arena freed after. */
Test(scene, copy_outlives_the_source_arena) {
    pm_arena *src = pm_arena_create(0), *dst = pm_arena_create(0);
    pm_scene *s = tri_scene(src, PM_PRIM_UV | PM_PRIM_COLOR);
    cr_assert_eq(pm_prim_set_mesh(s, &s->prims[0], "group"), 0);
    cr_assert_not_null(pm_scene_add_prim(s, "empty", "m", 0, 0, 0));
    pm_props *pr = pm_scene_add_props(s, "lamp");
    const float t[3] = {1, 2, 3}, r[4] = {0, 0, 0, 1}, sc[3] = {1, 1, 1};
    cr_assert_eq(pm_props_add(s, pr, t, r, sc), 0);
    pm_meta *arr = pm_meta_arr(src);
    cr_assert_eq(pm_meta_push(arr, pm_meta_str(src, "x")), 0);
    cr_assert_eq(pm_meta_push(arr, pm_meta_num(src, 1.5)), 0);
    cr_assert_eq(pm_meta_set(src, s->meta, "list", arr), 0);
    cr_assert_eq(pm_meta_set(src, s->meta, "n", pm_meta_int(src, -7)), 0);
    cr_assert_eq(pm_scene_validate(s), 0);
    pm_scene *c = pm_scene_copy(dst, s);
    cr_assert_not_null(c);
    pm_arena_destroy(src);
    cr_assert_eq(c->nprims, 2);
    cr_assert(c->validated);
    const pm_prim *p = &c->prims[0];
    cr_assert_str_eq(p->name, "t");
    cr_assert_str_eq(p->mesh, "group");
    cr_assert_eq(p->vcount, 3);
    cr_assert_eq(p->icount, 3);
    cr_assert_eq(p->positions[3], 1.0f);
    cr_assert_eq(p->indices[1], 2);
    cr_assert_eq(p->colors[4], 0.5f);
    cr_assert_eq(c->prims[1].vcount, 0);
    cr_assert_null(c->prims[1].uvs);
    cr_assert_eq(c->nprops, 1);
    cr_assert_eq(c->props[0].translations[2], 3.0f);
    const pm_meta *l = pm_meta_get(c->meta, "list");
    cr_assert_not_null(l);
    cr_assert_eq(l->u.kids.count, 2);
    cr_assert_str_eq(l->u.kids.first->u.s, "x");
    cr_assert_eq(l->u.kids.last->u.n, 1.5);
    cr_assert_eq(pm_meta_get(c->meta, "n")->u.i, -7);
    /* The copy grows like any scene. */
    const float q[3] = {5, 0, 5};
    cr_assert_eq(pm_prim_add_vertex(c, &c->prims[0], q, NULL, NULL, NULL), 3);
    cr_assert_eq(c->prims[0].positions[3], 1.0f);
    pm_arena_destroy(dst);
}

/* ---- pm_prim_append / pm_prim_reserve: the bulk paths ---- */

/* A random source primitive: some vertices (positions, normals, UVs when
 * uv, colours), triangles over them. */
static pm_prim *random_prim(pm_scene *s, pm_rng *r, bool uv) {
    pm_prim *p = pm_scene_add_prim(s, "src", "m", (uv ? PM_PRIM_UV : 0) | PM_PRIM_COLOR, 0, 0);
    cr_assert_not_null(p);
    uint32_t nv = 1 + (uint32_t)pm_rng_below(r, 300), nt = (uint32_t)pm_rng_below(r, 400);
    for (uint32_t v = 0; v < nv; v++) {
        float f[12];
        for (int k = 0; k < 12; k++) f[k] = (float)pm_rng_range(r, -1e4, 1e4);
        cr_assert_eq(pm_prim_add_vertex(s, p, f, f + 3, f + 6, f + 8), (int64_t)v);
    }
    for (uint32_t t = 0; t < nt; t++)
        cr_assert_eq(pm_prim_add_tri(s, p, (uint32_t)pm_rng_below(r, nv), (uint32_t)pm_rng_below(r, nv), (uint32_t)pm_rng_below(r, nv)), 0);
    return p;
}

static void assert_same_prim(const pm_prim *a, const pm_prim *b) {
    cr_assert_eq(a->vcount, b->vcount);
    cr_assert_eq(a->icount, b->icount);
    size_t n = a->vcount;
    cr_assert_eq(memcmp(a->positions, b->positions, 3 * n * sizeof(float)), 0);
    cr_assert_eq(memcmp(a->normals, b->normals, 3 * n * sizeof(float)), 0);
    cr_assert_eq(!a->uvs, !b->uvs);
    if (a->uvs) cr_assert_eq(memcmp(a->uvs, b->uvs, 2 * n * sizeof(float)), 0);
    cr_assert_eq(!a->colors, !b->colors);
    if (a->colors) cr_assert_eq(memcmp(a->colors, b->colors, 4 * n * sizeof(float)), 0);
    cr_assert_eq(memcmp(a->indices, b->indices, a->icount * sizeof(uint32_t)), 0);
}

/* pm_prim_append against the plain path it stands for (pm_prim_add_vertex
 * with the source's positions and UVs, then pm_prim_add_tri offset), on
 * random sources into destinations with and without UVs and colours,
 * some reserved exactly and some growing. */
Test(scene, append_matches_vertex_by_vertex) {
    pm_rng r;
    pm_rng_seed(&r, 20261201);
    for (int round = 0; round < 200; round++) {
        pm_arena *a = pm_arena_create(0);
        pm_scene *s = pm_scene_create(a);
        unsigned flags = (round & 1 ? PM_PRIM_UV : 0) | (round & 2 ? PM_PRIM_COLOR : 0);
        cr_assert_not_null(pm_scene_add_prim(s, "fast", "m", flags, 0, 0));
        cr_assert_not_null(pm_scene_add_prim(s, "plain", "m", flags, 0, 0));
        if (round & 4) cr_assert_eq(pm_prim_reserve(s, &s->prims[0], 700, 2400), 0);
        for (int k = 0; k < 1 + round % 4; k++) {
            pm_prim *src = random_prim(s, &r, round & 8);
            uint32_t si = s->nprims - 1;
            pm_prim *plain = &s->prims[1];
            uint32_t off = plain->vcount;
            src = &s->prims[si];
            for (uint32_t v = 0; v < src->vcount; v++)
                cr_assert_eq(pm_prim_add_vertex(s, plain, src->positions + 3 * v, NULL,
                                                src->uvs ? src->uvs + 2 * v : NULL, NULL),
                             (int64_t)(off + v));
            for (uint32_t t = 0; t < src->icount; t += 3)
                cr_assert_eq(pm_prim_add_tri(s, plain, off + src->indices[t], off + src->indices[t + 1],
                                             off + src->indices[t + 2]), 0);
            s->validated = true;
            cr_assert_eq(pm_prim_append(s, &s->prims[0], &s->prims[si]), (int64_t)off);
            cr_assert_eq(s->validated, false);
        }
        assert_same_prim(&s->prims[0], &s->prims[1]);
        pm_arena_destroy(a);
    }
}

Test(scene, reserve_is_exact_and_keeps_content) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = pm_scene_add_prim(s, "p", "m", PM_PRIM_UV, 0, 0);
    const float pos[3] = {1, 2, 3}, uv[2] = {4, 5};
    for (int i = 0; i < 20; i++) cr_assert_eq(pm_prim_add_vertex(s, p, pos, NULL, uv, NULL), i);
    cr_assert_eq(pm_prim_add_tri(s, p, 0, 1, 2), 0);
    cr_assert_eq(pm_prim_reserve(s, p, 1000, 999), 0);
    cr_assert_eq(p->vcap, 1000);
    cr_assert_eq(p->icap, 999);
    cr_assert_eq(pm_prim_reserve(s, p, 10, 3), 0);   /* never shrinks */
    cr_assert_eq(p->vcap, 1000);
    for (int i = 0; i < 20; i++) {
        cr_assert_eq(memcmp(p->positions + 3 * i, pos, sizeof pos), 0);
        cr_assert_eq(memcmp(p->uvs + 2 * i, uv, sizeof uv), 0);
    }
    cr_assert_eq(p->indices[2], 2u);
    for (int i = 20; i < 1000; i++) cr_assert_eq(pm_prim_add_vertex(s, p, pos, NULL, uv, NULL), i);
    cr_assert_eq(p->vcap, 1000);   /* filled without growing */
    pm_arena_destroy(a);
}

/* Appending past the arena's limit fails cleanly and leaves the content. */
Test(scene, append_out_of_memory_leaves_dst) {
    pm_arena *a = pm_arena_create(4096);
    pm_arena_set_limit(a, 256 * 1024);
    pm_scene *s = pm_scene_create(a);
    pm_prim *d = pm_scene_add_prim(s, "d", "m", 0, 0, 0);
    pm_prim *src = pm_scene_add_prim(s, "s", "m", 0, 2000, 0);
    d = &s->prims[0];
    const float pos[3] = {1, 2, 3};
    for (int i = 0; i < 2000; i++) cr_assert_geq(pm_prim_add_vertex(s, src, pos, NULL, NULL, NULL), 0);
    int64_t r = 0;
    uint32_t rounds = 0;
    while ((r = pm_prim_append(s, d, src)) >= 0) {
        cr_assert_eq(r, (int64_t)rounds * 2000);
        rounds++;
        cr_assert_lt(rounds, 1000);
    }
    cr_assert_eq(d->vcount, rounds * 2000);
    for (uint32_t i = 0; i < d->vcount; i++) cr_assert_eq(d->positions[3 * i + 2], 3.0f);
    pm_arena_destroy(a);
}

/* ---- pm_scene_validate against an independent reference ---- */

/* The contract spelled out element by element with isfinite. */
static bool reference_contract(const pm_prim *p) {
    if (p->icount % 3) return false;
    for (uint32_t i = 0; i < p->icount; i++)
        if (p->indices[i] >= p->vcount) return false;
    for (uint32_t v = 0; v < p->vcount; v++) {
        for (int k = 0; k < 3; k++)
            if (!isfinite(p->positions[3 * v + k]) || !isfinite(p->normals[3 * v + k])) return false;
        for (int k = 0; p->uvs && k < 2; k++)
            if (!isfinite(p->uvs[2 * v + k])) return false;
        for (int k = 0; p->colors && k < 4; k++)
            if (!isfinite(p->colors[4 * v + k])) return false;
    }
    return true;
}

/* Random scenes, some with one element broken (infinite or NaN anywhere,
 * an index out of range: just past the vertices, or 2^31 or more past,
 * where a signed compare would take it for small; an index count not a
 * multiple of 3) and some with normals off unit length (far off, or just
 * either side of the 1e-4 bound, where the vector arithmetic must round
 * as the plain one does: the AVX2 build where the CPU has it): the
 * verdict is the reference's, and a scene that passes has every normal
 * as pm_normal_fix leaves it (or untouched when it was unit). */
Test(scene, validate_matches_the_reference_on_random_scenes) {
    pm_rng r;
    pm_rng_seed(&r, 14);
    const float odd[] = {INFINITY, -INFINITY, NAN, 3e38f, 0.0f, 1e-30f, -0.0f};
    int refused = 0, fixed = 0;
    for (int round = 0; round < 1500; round++) {
        pm_arena *a = pm_arena_create(0);
        pm_scene *s = pm_scene_create(a);
        uint32_t np = 1 + (uint32_t)pm_rng_below(&r, 3);
        for (uint32_t i = 0; i < np; i++) {
            pm_prim *p = random_prim(s, &r, pm_rng_chance(&r, 0.5));
            for (uint32_t v = 0; v < p->vcount; v++) {
                float *n = p->normals + 3 * v;   /* mostly unit, as generators leave them */
                n[0] = 0, n[1] = 1, n[2] = 0;
                if (pm_rng_chance(&r, 0.3)) {
                    for (int k = 0; k < 3; k++) n[k] = (float)pm_rng_range(&r, -1, 1);
                    pm_normal_fix(n);
                }
            }
            for (uint32_t v = 0; v < p->vcount; v++)
                for (int k = 0; k < 4; k++) p->colors[4 * v + k] = (float)pm_rng_unit(&r);
        }
        int what = (int)pm_rng_below(&r, 11);
        pm_prim *p = &s->prims[pm_rng_below(&r, np)];
        uint32_t v = (uint32_t)pm_rng_below(&r, p->vcount);
        float x = odd[pm_rng_below(&r, sizeof odd / sizeof *odd)];
        switch (what) {
        case 0: p->positions[3 * v + pm_rng_below(&r, 3)] = x; break;
        case 1: p->normals[3 * v + pm_rng_below(&r, 3)] = x; break;
        case 2: if (p->uvs) p->uvs[2 * v + pm_rng_below(&r, 2)] = x; break;
        case 3: p->colors[4 * v + pm_rng_below(&r, 4)] = x; break;
        case 4: if (p->icount) p->indices[pm_rng_below(&r, p->icount)] = p->vcount; break;
        case 5: p->normals[3 * v + pm_rng_below(&r, 3)] *= 1.5f; break;
        case 6:
            if (p->icount) p->indices[pm_rng_below(&r, p->icount)] = p->vcount + 0x80000000u + (uint32_t)pm_rng_below(&r, 1000);
            break;
        case 7:
            for (int k = 0; k < 3; k++) p->normals[3 * v + k] *= 1.0f + (float)pm_rng_range(&r, -6e-5, 6e-5);
            break;
        case 8: if (p->icount) p->icount -= 1 + (uint32_t)pm_rng_below(&r, 2); break;
        default: break;
        }
        bool want = true;
        for (uint32_t i = 0; i < s->nprims; i++) {
            cr_assert_eq(pm_prim_contract_ok(&s->prims[i]), reference_contract(&s->prims[i]));
            want = want && reference_contract(&s->prims[i]);
        }
        float *expect = NULL;
        size_t total = 0;
        for (uint32_t i = 0; i < s->nprims; i++) total += 3 * (size_t)s->prims[i].vcount;
        expect = malloc(total * sizeof *expect);
        for (uint32_t i = 0, at = 0; i < s->nprims; i++)
            for (uint32_t w = 0; w < s->prims[i].vcount; w++, at += 3) {
                memcpy(expect + at, s->prims[i].normals + 3 * w, 3 * sizeof(float));
                if (!pm_normal_is_unit(expect + at)) pm_normal_fix(expect + at);
            }
        int rc = pm_scene_validate(s);
        cr_assert_eq(rc, want ? 0 : -1, "round %d: what %d", round, what);
        cr_assert_eq(s->validated, want);
        if (want) {
            for (uint32_t i = 0, at = 0; i < s->nprims; i++) {
                size_t n = 3 * (size_t)s->prims[i].vcount;
                cr_assert_eq(memcmp(s->prims[i].normals, expect + at, n * sizeof(float)), 0);
                at += (uint32_t)n;
            }
            fixed += what == 5 || what == 1 || what == 7;
        }
        refused += !want;
        free(expect);
        pm_arena_destroy(a);
    }
    cr_assert_gt(refused, 300);
    cr_assert_gt(fixed, 100);
}

/* ---- normals_unit: pm_prim_compute_normals' unit normals, trusted ---- */

/* Whatever the positions (flat or not, faces up or down, degenerate,
 * huge, tiny, infinite or NaN), pm_prim_compute_normals writes normals
 * that pm_normal_is_unit accepts, so pm_scene_validate may skip measuring
 * them (normals_unit): the same verdicts and the same bytes as measuring. */
Test(scene, computed_normals_are_unit_and_trusted) {
    pm_rng r;
    pm_rng_seed(&r, 1401);
    const double scales[] = {1e-30, 1e-6, 1, 1e3, 1e5, 1e19, 3e38};
    for (int round = 0; round < 300; round++) {
        pm_arena *a = pm_arena_create(0);
        pm_scene *s = pm_scene_create(a);
        pm_prim *p = random_prim(s, &r, true);
        double sc = scales[pm_rng_below(&r, sizeof scales / sizeof *scales)];
        bool flat = pm_rng_chance(&r, 0.4);
        for (uint32_t v = 0; v < p->vcount; v++)
            for (int k = 0; k < 3; k++)
                p->positions[3 * v + k] = flat && k == 1 ? 2.5f : (float)(pm_rng_range(&r, -1, 1) * sc);
        if (pm_rng_chance(&r, 0.1)) p->positions[3 * pm_rng_below(&r, p->vcount)] = NAN;
        if (pm_rng_chance(&r, 0.1)) p->positions[3 * pm_rng_below(&r, p->vcount) + 2] = INFINITY;
        cr_assert_eq(pm_prim_add_vertex(s, p, p->positions, NULL, NULL, NULL), (int64_t)p->vcount - 1);
        cr_assert_eq(p->normals_unit, false);
        pm_prim_compute_normals(p);
        cr_assert_eq(p->normals_unit, true);
        for (uint32_t v = 0; v < p->vcount; v++)
            cr_assert(pm_normal_is_unit(p->normals + 3 * v), "round %d vertex %u", round, v);
        /* Trusted or measured: the same verdict, the same normals. */
        bool want = reference_contract(p);
        pm_scene *c = pm_scene_copy(a, s);
        cr_assert_eq(c->prims[0].normals_unit, true);
        c->prims[0].normals_unit = false;
        size_t nb = 3 * (size_t)p->vcount * sizeof(float);
        cr_assert_eq(pm_scene_validate(s), want ? 0 : -1);
        cr_assert_eq(pm_scene_validate(c), want ? 0 : -1);
        cr_assert_eq(memcmp(s->prims[0].normals, c->prims[0].normals, nb), 0);
        pm_arena_destroy(a);
    }
}

Test(scene, writing_vertices_clears_normals_unit) {
    pm_arena *a = pm_arena_create(0);
    pm_scene *s = pm_scene_create(a);
    pm_prim *p = pm_scene_add_prim(s, "p", "m", 0, 0, 0);
    pm_prim *q = pm_scene_add_prim(s, "q", "m", 0, 0, 0);
    p = &s->prims[0];
    const float pos[3][3] = {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}};
    for (int i = 0; i < 3; i++) cr_assert_eq(pm_prim_add_vertex(s, q, pos[i], NULL, NULL, NULL), i);
    cr_assert_eq(pm_prim_add_tri(s, q, 0, 1, 2), 0);
    pm_prim_compute_normals(q);
    cr_assert(q->normals_unit);
    cr_assert_eq(pm_prim_append(s, p, q), 0);   /* zero normals: not unit */
    cr_assert_not(p->normals_unit);
    cr_assert_eq(pm_scene_validate(s), 0);
    cr_assert_eq(p->normals[1], 1.0f);        /* measured and fixed to +Y */
    pm_prim_compute_normals(p);
    cr_assert(p->normals_unit);
    cr_assert_geq(pm_prim_add_vertex(s, p, pos[0], NULL, NULL, NULL), 0);
    cr_assert_not(p->normals_unit);
    pm_arena_destroy(a);
}


#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scene/scene.h"
#include "pm_api/encode.h"
#include "pm_test_validator.h"

/* A descriptor for the encoders (name and version); no generation. */
static const pm_api_generator gen = {.name = "test", .version = "0.0.1", .path = "/v1/test"};
static const char key[] = "0123456789abcdef0123456789abcdef";

/* An nx x nz grid of quads on y = h, +Y up, CCW seen from above. */
static void add_grid(pm_scene *s, const char *name, const char *material, unsigned flags,
                     uint32_t nx, uint32_t nz, float h) {
    pm_prim *p = pm_scene_add_prim(s, name, material, flags, (nx + 1) * (nz + 1), nx * nz * 6);
    cr_assert_not_null(p);
    const float up[3] = {0, 1, 0};
    for (uint32_t j = 0; j <= nz; j++) {
        for (uint32_t i = 0; i <= nx; i++) {
            float pos[3] = {(float)i * 0.1f - 3.0f, h, (float)j * 0.3f + 0.05f};
            float uv[2] = {(float)i / (float)nx, (float)j / (float)nz};
            float rgba[4] = {uv[0], uv[1], 0.5f, 1.0f};
            cr_assert_geq(pm_prim_add_vertex(s, p, pos, up, uv, rgba), 0);
        }
    }
    for (uint32_t j = 0; j < nz; j++) {
        for (uint32_t i = 0; i < nx; i++) {
            uint32_t a = j * (nx + 1) + i, b = a + nx + 1;
            cr_assert_eq(pm_prim_add_tri(s, p, a, b, a + 1), 0);
            cr_assert_eq(pm_prim_add_tri(s, p, a + 1, b, b + 1), 0);
        }
    }
}

static void add_meta(pm_scene *s) {
    pm_arena *a = s->arena;
    pm_meta *arms = pm_meta_arr(a);
    for (int i = 0; i < 3; i++) {
        pm_meta *arm = pm_meta_obj(a);
        pm_meta_set(a, arm, "angle", pm_meta_num(a, i * 2.0943951023931953));
        pm_meta_set(a, arm, "lanes", pm_meta_int(a, 2 + i));
        pm_meta_push(arms, arm);
    }
    pm_meta_set(a, s->meta, "arms", arms);
    pm_meta_set(a, s->meta, "name", pm_meta_str(a, "t\"e\\st\n"));
    pm_meta_set(a, s->meta, "closed", pm_meta_bool(a, true));
    pm_meta_set(a, s->meta, "nothing", pm_meta_null(a));
    pm_meta_set(a, s->meta, "area", pm_meta_num(a, 0.1));
}

static void add_props(pm_scene *s, const char *name, uint32_t n) {
    pm_props *pr = pm_scene_add_props(s, name);
    cr_assert_not_null(pr);
    for (uint32_t i = 0; i < n; i++) {
        float t[3] = {(float)i, 0, -(float)i * 0.5f};
        float half = (float)i * 0.3f;
        float r[4] = {0, sinf(half), 0, cosf(half)};
        float sc[3] = {1, 1.5f, 1};
        cr_assert_eq(pm_props_add(s, pr, t, r, sc), 0);
    }
}

typedef struct fixture { pm_arena *arena; pm_scene *scene; } fixture;

static pm_scene *new_scene(fixture *f) {
    f->arena = pm_arena_create(0);
    f->scene = pm_scene_create(f->arena);
    cr_assert_not_null(f->scene);
    return f->scene;
}

static pm_api_buf encode(const pm_scene *s, pm_api_format fmt) {
    pm_api_buf b;
    cr_assert_eq(pm_api_encode(s, &gen, key, fmt, &b), 0, "encoding as %s failed",
                 pm_api_format_name(fmt));
    return b;
}

/* The JSON of a GLB or .gltf. */
static json_t *gltf_json(const pm_api_buf *b, bool glb) {
    json_error_t e;
    json_t *j;
    if (glb) {
        uint32_t jlen;
        memcpy(&jlen, b->data + 12, 4);
        j = json_loadb((const char *)b->data + 20, jlen, JSON_REJECT_DUPLICATES, &e);
    } else {
        j = json_loadb((const char *)b->data, b->len, JSON_REJECT_DUPLICATES, &e);
    }
    cr_assert_not_null(j, "glTF JSON does not parse: %s", e.text);
    return j;
}

/* Both glTF outputs pass the validator, twice encoded gives equal bytes,
 * and the JSON mesh reads back to the scene. */
static void expect_valid(const pm_scene *s) {
    for (int f = 0; f < 3; f++) {
        pm_api_buf a = encode(s, (pm_api_format)f), b = encode(s, (pm_api_format)f);
        cr_expect_eq(a.len, b.len);
        cr_expect(a.len == b.len && memcmp(a.data, b.data, a.len) == 0,
                  "%s output is not deterministic", pm_api_format_name(f));
        if (f == PM_API_FMT_JSON) {
            cr_expect_eq(pm_test_check_json_mesh(a.data, a.len, s), 0);
        } else {
            char report[8192];
            int r = pm_test_gltf_validate(a.data, a.len, f == PM_API_FMT_GLB, report,
                                          sizeof report);
            cr_expect_eq(r, 0, "%s: validator errors+warnings %d:\n%s", pm_api_format_name(f),
                         r, report);
        }
        free(a.data);
        free(b.data);
    }
}

Test(encode, plain_scene_validates) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "road", "asphalt", PM_PRIM_UV, 8, 5, 0);
    add_grid(s, "kerb", "curb", 0, 3, 1, 0.15f);
    add_grid(s, "odd", "unknown-material", PM_PRIM_UV, 1, 1, 0.2f);
    add_meta(s);
    expect_valid(s);
    cr_expect_eq(pm_test_validate_scene(s, &gen), 0);
    pm_arena_destroy(f.arena);
}

/* Consecutive primitives naming the same mesh become one glTF mesh and
 * node with several primitives; the JSON mesh names the group. */
Test(encode, primitive_groups_become_one_mesh) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "asphalt_lod1", "asphalt", PM_PRIM_UV, 4, 2, 0);
    add_grid(s, "shoulder_lod1", "shoulder", PM_PRIM_UV, 4, 1, 0.01f);
    add_grid(s, "terrain", "terrain", 0, 2, 2, -0.5f);
    cr_assert_eq(pm_prim_set_mesh(s, &s->prims[0], "road_lod1"), 0);
    cr_assert_eq(pm_prim_set_mesh(s, &s->prims[1], "road_lod1"), 0);
    expect_valid(s);
    for (int glb = 0; glb < 2; glb++) {
        pm_api_buf b = encode(s, glb ? PM_API_FMT_GLB : PM_API_FMT_GLTF);
        json_t *j = gltf_json(&b, glb);
        json_t *meshes = json_object_get(j, "meshes"), *nodes = json_object_get(j, "nodes");
        cr_assert_eq(json_array_size(meshes), 2);
        cr_assert_eq(json_array_size(nodes), 2);
        json_t *m0 = json_array_get(meshes, 0), *m1 = json_array_get(meshes, 1);
        cr_expect_str_eq(json_string_value(json_object_get(m0, "name")), "road_lod1");
        cr_expect_eq(json_array_size(json_object_get(m0, "primitives")), 2);
        cr_expect_str_eq(json_string_value(json_object_get(m1, "name")), "terrain");
        cr_expect_eq(json_array_size(json_object_get(m1, "primitives")), 1);
        cr_expect_str_eq(json_string_value(json_object_get(json_array_get(nodes, 0), "name")),
                         "road_lod1");
        json_decref(j);
        free(b.data);
    }
    pm_api_buf b = encode(s, PM_API_FMT_JSON);
    json_t *j = json_loadb((const char *)b.data, b.len, 0, NULL);
    json_t *m = json_object_get(j, "meshes");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(m, 1), "mesh")), "road_lod1");
    cr_expect_null(json_object_get(json_array_get(m, 2), "mesh"));
    json_decref(j);
    free(b.data);
    pm_arena_destroy(f.arena);
}

Test(encode, vertex_colors_validate) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "cells", "grid", PM_PRIM_UV | PM_PRIM_COLOR, 6, 6, 0);
    add_grid(s, "cells2", "grid", PM_PRIM_COLOR, 2, 3, 1);
    expect_valid(s);
    pm_api_buf b = encode(s, PM_API_FMT_GLTF);
    json_t *j = gltf_json(&b, false);
    json_t *attrs = json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(j, "meshes"), 0),
                                       "primitives"), 0),
        "attributes");
    cr_expect(json_is_integer(json_object_get(attrs, "COLOR_0")));
    cr_expect(json_is_integer(json_object_get(attrs, "TEXCOORD_0")));
    cr_expect_eq(json_array_size(json_object_get(j, "materials")), 1, "one material per name");
    json_decref(j);
    free(b.data);
    pm_arena_destroy(f.arena);
}

Test(encode, props_use_gpu_instancing_and_marker_meshes) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "road", "asphalt", PM_PRIM_UV, 4, 4, 0);
    add_props(s, "lamp", 5);
    add_props(s, "tree", 3);
    add_props(s, "lamp", 2);      /* a second set with the same name */
    add_props(s, "bench", 0);     /* empty: no node */
    expect_valid(s);
    pm_api_buf b = encode(s, PM_API_FMT_GLB);
    json_t *j = gltf_json(&b, true);
    cr_expect_str_eq(json_string_value(json_array_get(json_object_get(j, "extensionsUsed"), 0)),
                     "EXT_mesh_gpu_instancing");
    cr_expect_null(json_object_get(j, "extensionsRequired"));
    json_t *nodes = json_object_get(j, "nodes"), *meshes = json_object_get(j, "meshes");
    cr_assert_eq(json_array_size(nodes), 4, "road + three non-empty prop sets");
    cr_expect_eq(json_array_size(meshes), 3, "road + markers for lamp and tree");
    json_t *lamp2 = json_array_get(nodes, 3);
    cr_expect_str_eq(json_string_value(json_object_get(lamp2, "name")), "lamp");
    json_t *lamp_mesh = json_array_get(meshes, json_integer_value(json_object_get(lamp2, "mesh")));
    cr_expect_str_eq(json_string_value(json_object_get(lamp_mesh, "name")), "lamp");
    json_t *ext = json_object_get(json_object_get(lamp2, "extensions"), "EXT_mesh_gpu_instancing");
    json_t *accs = json_object_get(j, "accessors");
    const char *sem[] = {"TRANSLATION", "ROTATION", "SCALE"}, *type[] = {"VEC3", "VEC4", "VEC3"};
    for (int k = 0; k < 3; k++) {
        json_t *a = json_array_get(
            accs, json_integer_value(json_object_get(json_object_get(ext, "attributes"), sem[k])));
        cr_expect_eq(json_integer_value(json_object_get(a, "count")), 2);
        cr_expect_str_eq(json_string_value(json_object_get(a, "type")), type[k]);
        cr_expect_eq(json_integer_value(json_object_get(a, "componentType")), 5126);
    }
    json_decref(j);
    free(b.data);
    pm_arena_destroy(f.arena);
}

Test(encode, props_only_scene_validates) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_props(s, "rock", 4);
    expect_valid(s);
    pm_arena_destroy(f.arena);
}

/* Index width follows the vertex count: 65535 still fits uint16. */
static int index_ctype(const pm_scene *s, uint32_t prim) {
    pm_api_buf b = encode(s, PM_API_FMT_GLB);
    json_t *j = gltf_json(&b, true);
    json_t *prim0 = json_array_get(
        json_object_get(json_array_get(json_object_get(j, "meshes"), prim), "primitives"), 0);
    json_t *acc = json_array_get(json_object_get(j, "accessors"),
                                 json_integer_value(json_object_get(prim0, "indices")));
    int ct = (int)json_integer_value(json_object_get(acc, "componentType"));
    json_decref(j);
    free(b.data);
    return ct;
}

Test(encode, large_primitive_uses_uint32_indices) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "big", "terrain", PM_PRIM_UV, 300, 220, 0);   /* 301*221 = 66521 vertices */
    add_grid(s, "small", "curb", 0, 2, 2, 0);
    cr_assert_gt(s->prims[0].vcount, 65535);
    expect_valid(s);
    cr_expect_eq(index_ctype(s, 0), 5125);
    cr_expect_eq(index_ctype(s, 1), 5123);
    pm_arena_destroy(f.arena);
}

Test(encode, index_width_boundary) {
    fixture f;
    pm_scene *s = new_scene(&f);
    /* 65535 = 255 * 257 and 65536 = 256 * 256 vertices. */
    add_grid(s, "a", "floor", 0, 254, 256, 0);
    add_grid(s, "b", "wall", 0, 255, 255, 0);
    cr_assert_eq(s->prims[0].vcount, 65535);
    cr_assert_eq(s->prims[1].vcount, 65536);
    cr_expect_eq(index_ctype(s, 0), 5123);
    cr_expect_eq(index_ctype(s, 1), 5125);
    pm_arena_destroy(f.arena);
}

Test(encode, empty_metadata_and_empty_scene_validate) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "floor", "floor", PM_PRIM_UV, 2, 2, 0);
    expect_valid(s);
    pm_api_buf b = encode(s, PM_API_FMT_JSON);
    json_t *j = json_loadb((const char *)b.data, b.len, 0, NULL);
    cr_assert_not_null(j);
    cr_expect(json_is_object(json_object_get(j, "metadata")));
    cr_expect_eq(json_object_size(json_object_get(j, "metadata")), 0);
    json_decref(j);
    free(b.data);
    pm_arena_destroy(f.arena);

    s = new_scene(&f);       /* nothing at all */
    expect_valid(s);
    b = encode(s, PM_API_FMT_GLB);
    cr_expect_eq(b.len % 4, 0);
    uint32_t chunk;
    memcpy(&chunk, b.data + 12, 4);
    cr_expect_eq(b.len, 20 + chunk, "no BIN chunk without data");
    free(b.data);
    pm_arena_destroy(f.arena);
}

/* A primitive without triangles has no valid glTF accessor: it is left
 * out of glTF but stays in the JSON mesh. */
Test(encode, empty_primitives_are_skipped_in_gltf) {
    fixture f;
    pm_scene *s = new_scene(&f);
    pm_scene_add_prim(s, "nothing", "wall", 0, 0, 0);
    add_grid(s, "floor", "floor", 0, 1, 1, 0);
    expect_valid(s);
    pm_api_buf b = encode(s, PM_API_FMT_GLTF);
    json_t *j = gltf_json(&b, false);
    cr_expect_eq(json_array_size(json_object_get(j, "meshes")), 1);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "nodes"),
                                                                      0), "name")), "floor");
    json_decref(j);
    free(b.data);
    pm_arena_destroy(f.arena);
}

static uint32_t u32_at(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t b64_decode(const char *in, size_t n, unsigned char *out) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n && in[i] != '='; i++) {
        acc = acc << 6 | (uint32_t)(strchr(tab, in[i]) - tab);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    return o;
}

Test(encode, glb_layout_and_gltf_buffer_agree) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "odd", "asphalt", 0, 1, 1, 0);   /* 6 uint16 indices: 12 bytes */
    pm_prim *p = pm_scene_add_prim(s, "tri", "curb", 0, 3, 3);
    const float up[3] = {0, 1, 0};
    for (int i = 0; i < 3; i++) {
        float pos[3] = {(float)(i == 1), 0, (float)(i == 2) * -1.0f};
        pm_prim_add_vertex(s, p, pos, up, NULL, NULL);
    }
    pm_prim_add_tri(s, p, 0, 1, 2);             /* 3 uint16 indices: 6 bytes + 2 padding */
    add_meta(s);
    pm_api_buf glb = encode(s, PM_API_FMT_GLB), gltf = encode(s, PM_API_FMT_GLTF);
    cr_assert_geq(glb.len, 28);
    cr_expect_eq(u32_at(glb.data), 0x46546C67);
    cr_expect_eq(u32_at(glb.data + 4), 2);
    cr_expect_eq(u32_at(glb.data + 8), glb.len);
    uint32_t jlen = u32_at(glb.data + 12);
    cr_expect_eq(u32_at(glb.data + 16), 0x4E4F534A);
    cr_expect_eq(jlen % 4, 0);
    const char *js = (const char *)glb.data + 20;
    size_t end = jlen;
    while (end > 0 && js[end - 1] == ' ') end--;
    cr_expect_eq(js[end - 1], '}', "JSON chunk padded with spaces only");
    const unsigned char *bin = glb.data + 20 + jlen;
    uint32_t blen = u32_at(bin);
    cr_expect_eq(u32_at(bin + 4), 0x004E4942);
    cr_expect_eq(blen % 4, 0);
    cr_expect_eq(20 + jlen + 8 + blen, glb.len);

    json_t *j = gltf_json(&glb, true);
    size_t i;
    json_t *bv;
    json_array_foreach(json_object_get(j, "bufferViews"), i, bv) {
        size_t off = (size_t)json_integer_value(json_object_get(bv, "byteOffset"));
        size_t len = (size_t)json_integer_value(json_object_get(bv, "byteLength"));
        cr_expect_eq(off % 4, 0, "bufferView %zu at %zu", i, off);
        for (size_t k = len; k < ((len + 3) & ~(size_t)3); k++)
            cr_expect_eq(bin[8 + off + k], 0, "padding after view %zu is zero", i);
    }
    json_decref(j);

    /* The .gltf's data URI holds the same bytes as the GLB's BIN chunk. */
    j = gltf_json(&gltf, false);
    const char *uri = json_string_value(json_object_get(json_array_get(json_object_get(j,
                                                                       "buffers"), 0), "uri"));
    const char *prefix = "data:application/octet-stream;base64,";
    cr_assert(uri && strncmp(uri, prefix, strlen(prefix)) == 0);
    unsigned char *dec = malloc(strlen(uri));
    size_t dlen = b64_decode(uri + strlen(prefix), strlen(uri) - strlen(prefix), dec);
    cr_expect_eq(dlen, blen);
    cr_expect(dlen == blen && memcmp(dec, bin + 8, blen) == 0);
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(json_object_get(j, "buffers"),
                                                                   0), "byteLength")), blen);
    free(dec);
    json_decref(j);
    free(glb.data);
    free(gltf.data);
    pm_arena_destroy(f.arena);
}

/* min/max are the float32 values written, exactly. */
Test(encode, position_bounds_are_exact) {
    fixture f;
    pm_scene *s = new_scene(&f);
    pm_prim *p = pm_scene_add_prim(s, "t", "wall", 0, 3, 3);
    const float up[3] = {0, 1, 0};
    const float pts[3][3] = {{0.1f, 1.0f / 3.0f, -0.7f}, {2.2f, -0.0f, 1e-7f}, {-5.5f, 7.3f, 0}};
    for (int i = 0; i < 3; i++) pm_prim_add_vertex(s, p, pts[i], up, NULL, NULL);
    pm_prim_add_tri(s, p, 0, 1, 2);
    expect_valid(s);
    pm_api_buf b = encode(s, PM_API_FMT_GLTF);
    json_t *j = gltf_json(&b, false);
    json_t *acc = json_array_get(json_object_get(j, "accessors"), 0);
    for (int k = 0; k < 3; k++) {
        float lo = fminf(fminf(pts[0][k], pts[1][k]), pts[2][k]);
        float hi = fmaxf(fmaxf(pts[0][k], pts[1][k]), pts[2][k]);
        double jmin = json_number_value(json_array_get(json_object_get(acc, "min"), k));
        double jmax = json_number_value(json_array_get(json_object_get(acc, "max"), k));
        cr_expect_eq(jmin, (double)lo, "min[%d] %.17g vs %.17g", k, jmin, (double)lo);
        cr_expect_eq(jmax, (double)hi, "max[%d] %.17g vs %.17g", k, jmax, (double)hi);
    }
    json_decref(j);
    free(b.data);
    pm_arena_destroy(f.arena);
}

Test(encode, materials_get_base_colours) {
    fixture f;
    pm_scene *s = new_scene(&f);
    const char *names[] = {"asphalt", "curb", "sidewalk", "shoulder", "terrain", "floor", "wall",
                           "grid", "island", "corridor", "shaft", "mystery"};
    for (int i = 0; i < 12; i++) add_grid(s, names[i], names[i], 0, 1, 1, (float)i);
    add_grid(s, "again", "asphalt", 0, 1, 1, 20);
    expect_valid(s);
    pm_api_buf b = encode(s, PM_API_FMT_GLTF);
    json_t *j = gltf_json(&b, false);
    json_t *mats = json_object_get(j, "materials");
    cr_assert_eq(json_array_size(mats), 12);
    json_t *base[12];
    for (int i = 0; i < 12; i++) {
        json_t *m = json_array_get(mats, i);
        cr_expect_str_eq(json_string_value(json_object_get(m, "name")), names[i]);
        base[i] = json_object_get(json_object_get(m, "pbrMetallicRoughness"), "baseColorFactor");
        cr_expect_eq(json_array_size(base[i]), 4);
    }
    cr_expect_not(json_equal(base[0], base[4]), "asphalt and terrain differ");
    json_t *again = json_array_get(
        json_object_get(json_array_get(json_object_get(j, "meshes"), 12), "primitives"), 0);
    cr_expect_eq(json_integer_value(json_object_get(again, "material")), 0, "shared by name");
    json_decref(j);
    free(b.data);
    pm_arena_destroy(f.arena);
}

/* ---- the JSON mesh ---- */

Test(encode, json_mesh_shape_and_numbers) {
    fixture f;
    pm_scene *s = new_scene(&f);
    pm_prim *p = pm_scene_add_prim(s, "road", "asphalt", PM_PRIM_UV, 3, 3);
    const float n[3] = {0, 1, 0}, uv[2] = {0.5f, 1};
    const float pts[3][3] = {{0.1f, -0.0f, 2}, {1.0f / 3.0f, 0, 1e-7f}, {-1234567.0f, 0, 16777216.0f}};
    for (int i = 0; i < 3; i++) pm_prim_add_vertex(s, p, pts[i], n, uv, NULL);
    pm_prim_add_tri(s, p, 0, 2, 1);
    add_props(s, "lamp", 2);
    pm_meta_set(s->arena, s->meta, "pi", pm_meta_num(s->arena, 3.141592653589793));
    pm_meta_set(s->arena, s->meta, "big", pm_meta_int(s->arena, -9007199254740993LL));
    pm_api_buf b = encode(s, PM_API_FMT_JSON);
    char *text = strndup((const char *)b.data, b.len);
    cr_expect(strstr(text, "{\"generator\":\"test\",\"version\":\"0.0.1\",\"key\":\"") == text,
              "starts with generator, version, key: %.80s", text);
    cr_expect(strstr(text, "\"meshes\":[{\"name\":\"road\",\"material\":\"asphalt\","
                           "\"positions\":[0.1,0,2,0.33333334,0,1e-07,-1234567,0,16777216],"
                           "\"normals\":[0,1,0,0,1,0,0,1,0],\"uvs\":[0.5,1,0.5,1,0.5,1],"
                           "\"indices\":[0,2,1]}]") != NULL,
              "%s", text);
    cr_expect(strstr(text, "\"instances\":[{\"prop\":\"lamp\",\"translations\":[[0,0,0],"
                           "[1,0,-0.5]],\"rotations\":[[0,0,0,1],[0,0.29552022,0,0.9553365]],"
                           "\"scales\":[[1,1.5,1],[1,1.5,1]]}]") != NULL,
              "%s", text);
    cr_expect(strstr(text, "\"metadata\":{\"pi\":3.141592653589793,\"big\":-9007199254740993},"
                           "\"stats\":{\"vertices\":3,\"triangles\":1}}") != NULL,
              "%s", text);
    cr_expect_eq(pm_test_check_json_mesh(b.data, b.len, s), 0);
    free(text);
    free(b.data);
    pm_arena_destroy(f.arena);
}

Test(encode, metadata_is_shared_by_json_and_gltf) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "g", "grid", 0, 1, 1, 0);
    add_meta(s);
    pm_api_buf bj = encode(s, PM_API_FMT_JSON), bg = encode(s, PM_API_FMT_GLB);
    json_t *mj = json_loadb((const char *)bj.data, bj.len, 0, NULL);
    json_t *mg = gltf_json(&bg, true);
    json_t *extras = json_object_get(json_array_get(json_object_get(mg, "scenes"), 0), "extras");
    cr_assert_not_null(extras);
    cr_expect(json_equal(json_object_get(mj, "metadata"), json_object_get(extras, "metadata")));
    cr_expect(json_equal(json_object_get(mj, "stats"), json_object_get(extras, "stats")));
    cr_expect_str_eq(json_string_value(json_object_get(extras, "key")), key);
    cr_expect_str_eq(json_string_value(json_object_get(extras, "generator")), "test");
    char *meta = json_dumps(json_object_get(mj, "metadata"), JSON_COMPACT | JSON_PRESERVE_ORDER);
    cr_expect_str_eq(meta, "{\"arms\":[{\"angle\":0,\"lanes\":2},{\"angle\":2.0943951023931953,"
                           "\"lanes\":3},{\"angle\":4.1887902047863905,\"lanes\":4}],"
                           "\"name\":\"t\\\"e\\\\st\\n\",\"closed\":true,\"nothing\":null,"
                           "\"area\":0.10000000000000001}");
    free(meta);
    json_decref(mj);
    json_decref(mg);
    free(bj.data);
    free(bg.data);
    pm_arena_destroy(f.arena);
}

/* ---- scenes that break the contract, and fixes that keep output valid ---- */

Test(encode, broken_scenes_are_refused) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "g", "grid", 0, 1, 1, 0);
    s->prims[0].positions[4] = NAN;
    pm_api_buf b;
    for (int fmt = 0; fmt < 3; fmt++)
        cr_expect_eq(pm_api_encode(s, &gen, key, (pm_api_format)fmt, &b), -2);
    s->prims[0].positions[4] = 0;
    s->prims[0].indices[2] = 4;
    cr_expect_eq(pm_api_encode(s, &gen, key, PM_API_FMT_GLB, &b), -2);
    s->prims[0].indices[2] = 1;
    s->prims[0].icount = 5;
    cr_expect_eq(pm_api_encode(s, &gen, key, PM_API_FMT_JSON, &b), -2);
    s->prims[0].icount = 6;
    add_props(s, "p", 1);
    s->props[0].scales[1] = INFINITY;
    cr_expect_eq(pm_api_encode(s, &gen, key, PM_API_FMT_GLTF, &b), -2);
    pm_arena_destroy(f.arena);
}

Test(encode, bad_normals_and_colours_are_fixed) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "g", "grid", PM_PRIM_COLOR, 2, 1, 0);
    pm_prim *p = &s->prims[0];
    memset(p->normals, 0, 3 * sizeof(float));            /* zero: becomes +Y */
    p->normals[3] = 0, p->normals[4] = 2, p->normals[5] = 0;  /* too long */
    p->colors[0] = 1.5f;
    p->colors[5] = -0.25f;
    expect_valid(s);
    pm_api_buf b = encode(s, PM_API_FMT_JSON);
    json_t *j = json_loadb((const char *)b.data, b.len, 0, NULL);
    json_t *m = json_array_get(json_object_get(j, "meshes"), 0);
    json_t *nrm = json_object_get(m, "normals"), *col = json_object_get(m, "colors");
    cr_expect_eq(json_number_value(json_array_get(nrm, 1)), 1.0);
    cr_expect_eq(json_number_value(json_array_get(nrm, 4)), 1.0);
    cr_expect_eq(json_number_value(json_array_get(col, 0)), 1.0);
    cr_expect_eq(json_number_value(json_array_get(col, 5)), 0.0);
    cr_expect_eq(p->normals[4], 2.0f, "the scene itself is not modified");
    json_decref(j);
    free(b.data);
    pm_arena_destroy(f.arena);
}

/* The validator harness itself must see errors, or every test above
 * would pass vacuously. */
Test(encode, validator_reports_errors) {
    const char *bad = "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[]}],"
                      "\"accessors\":[{\"componentType\":5126,\"count\":0,\"type\":\"VEC3\"}]}";
    char report[4096];
    cr_expect_gt(pm_test_gltf_validate(bad, strlen(bad), 0, report, sizeof report), 0);
    cr_expect(strstr(report, "EMPTY_ENTITY") != NULL, "%s", report);
    const unsigned char junk[12] = {'g', 'l', 'T', 'F', 2, 0, 0, 0, 99, 0, 0, 0};
    cr_expect_gt(pm_test_gltf_validate(junk, sizeof junk, 1, NULL, 0), 0);
    /* A wrong POSITION bound is an error: the check above is meaningful. */
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "g", "grid", 0, 1, 1, 0);
    pm_api_buf b = encode(s, PM_API_FMT_GLTF);
    json_t *j = gltf_json(&b, false);
    json_array_set_new(json_object_get(json_array_get(json_object_get(j, "accessors"), 0), "max"),
                       0, json_real(1000));
    char *text = json_dumps(j, JSON_COMPACT);
    cr_expect_gt(pm_test_gltf_validate(text, strlen(text), 0, report, sizeof report), 0);
    cr_expect(strstr(report, "ACCESSOR_MAX_MISMATCH") != NULL, "%s", report);
    free(text);
    json_decref(j);
    free(b.data);
    pm_arena_destroy(f.arena);
}

/* ---- number printing ---- */

#include "../../api/encode_writer.h"
#include "scene/copy.h"

/* The fast float32 printer gives exactly the reference text (shortest
 * "%.Ng", N = 6..9, that reads back) on random bit patterns and on
 * mesh-like values, and the text reads back through float and double. */
Test(encode, float_printing_matches_reference) {
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 300000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t bits = (uint32_t)x;
        float f;
        memcpy(&f, &bits, 4);
        if (i % 2) f = (float)((int64_t)(x >> 40) % 2000000 - 1000000) * 0.001f;
        if (!isfinite(f)) continue;
        char a[32], r[32];
        a[pm_api__fmt_f32(a, f)] = '\0';
        r[pm_api__fmt_f32_ref(r, f)] = '\0';
        cr_assert_str_eq(a, r, "float %a", (double)f);
        cr_assert_eq(strtof(a, NULL), f, "%s", a);
        cr_assert_eq((float)strtod(a, NULL), f, "%s", a);
    }
    const float cases[] = {0.1f, -0.0f, 1e6f, 123456.5f, 1e-7f, 3.4028235e38f, 1.4e-45f,
                           117760704.0f, 0.000123f, -2.5e-5f, 9.9999986e-10f};
    const char *want[] = {"0.1", "0", "1e+06", "123456.5", "1e-07", "3.4028235e+38",
                          "1.4013e-45", "1.177607e+08", "0.000123", "-2.5e-05", "9.999999e-10"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char a[32];
        a[pm_api__fmt_f32(a, cases[i])] = '\0';
        cr_expect_str_eq(a, want[i]);
        cr_expect_eq((float)strtod(a, NULL), cases[i], "%s", a);
    }
}

/* One double of the families metadata and bounds carry, by case i. */
static double fmt_case(uint64_t x, uint64_t y, int i) {
    double d;
    switch (i % 12) {
    case 0: memcpy(&d, &x, 8); return d;                          /* any bit pattern */
    case 1: return ldexp((double)(x >> 11), (int)(y % 300) - 200); /* any magnitude */
    case 2: return (double)((int64_t)(x % 2000000001) - 1000000000) * 0.001; /* mm */
    case 3: {                                                     /* float32 positions */
        uint32_t b = (uint32_t)x;
        float f;
        memcpy(&f, &b, 4);
        return y & 1 ? (double)f : (double)(float)((double)(int32_t)b * 1e-4);
    }
    case 4: return (double)(x % 100000) * 0.1 + (double)(y % 1000) * 0.01; /* 0.1 + 0.2 */
    case 5: return hypot((double)(x % 100000) * 0.01, (double)(y % 100000) * 0.01);
    case 6: return ldexp((double)(x >> 11), -(int)(y % 8));       /* halves, quarters: ties */
    case 7: return (double)(x >> (y % 40));                       /* integers, big ones */
    case 8: return nextafter(pow(10, (double)(int)(y % 60) - 20), x & 1 ? INFINITY : 0);
    case 9: return (double)(x % 1000000000000000ull) * pow(10, (double)(int)(y % 40) - 30);
    case 10: return -(double)(x % 100000000) / (double)(y % 99999 + 1);
    default: return (double)(x % 10000) / 16.0 + (double)(int64_t)(y % 7 - 3);
    }
}

/* The fast double printer gives exactly the reference text (shortest
 * "%.Ng", N = 15..17, that reads back, by snprintf and strtod) on random
 * doubles of every family above, -0, ties and the fallback's range, and
 * the text reads back. PM_FMT_CASES=N runs N cases (default 400000). */
Test(encode, double_printing_matches_reference) {
    const char *env = getenv("PM_FMT_CASES");
    long cases = env ? atol(env) : 400000;
    uint64_t x = 0x9E3779B97F4A7C15ull, y = 88172645463325252ull;
    for (long i = 0; i < cases; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        y ^= y << 13, y ^= y >> 7, y ^= y << 17;
        double d = fmt_case(x, y, (int)i);
        if (!isfinite(d)) continue;
        if ((i / 12) % 2) d = -d;
        char a[40], r[40];
        a[pm_api__fmt_f64(a, d)] = '\0';
        r[pm_api__fmt_f64_ref(r, d)] = '\0';
        cr_assert_str_eq(a, r, "double %a", d);
        cr_assert(strtod(a, NULL) == d || d == 0, "%s %a", a, d);
    }
    const double cs[] = {0.1 + 0.2, -0.0, 0.1, 1e15 + 0.5, 2251799813685246.25, 2251799813685247.75,
                         1e16, 123456789012345678.0, 1e-10, 9.999999999999999e-11, 1e38,
                         9.999999999999999e37, 5e-324, 1.7976931348623157e308, 1e6, -999999.5,
                         100.0 / 3, 0.30000000000000004, 9007199254740993.0, 1e21, 1e22, 1e23};
    const char *want[] = {"0.30000000000000004", "0", "0.1", "1000000000000000.5",
                          "2251799813685246.2", "2251799813685247.8", "1e+16",
                          "1.2345678901234568e+17", "1e-10", "9.999999999999999e-11", "1e+38",
                          "1e+38", "4.94065645841247e-324",
                          "1.7976931348623157e+308", "1000000", "-999999.5", "33.333333333333336",
                          "0.30000000000000004", "9007199254740992", "1e+21", "1e+22", "1e+23"};
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        char a[40];
        a[pm_api__fmt_f64(a, cs[i])] = '\0';
        cr_expect_str_eq(a, want[i], "%a", cs[i]);
        char r[40];
        r[pm_api__fmt_f64_ref(r, cs[i])] = '\0';
        cr_expect_str_eq(r, want[i], "%a", cs[i]);
    }
}

/* The metadata writer's exact text: keys copied, literal and needing
 * escapes, arrays made in one block and pushed to later, every scalar
 * kind, a number made non-finite after the fact (null), nesting. */
Test(encode, metadata_text_is_exact) {
    pm_arena *a = pm_arena_create(0);
    pm_meta *root = pm_meta_obj(a);
    double v[3] = {0.5, -0.0, 1e300};
    pm_meta *nums = pm_meta_nums(a, v, 3);
    pm_meta_push(nums, pm_meta_int(a, INT64_MIN));
    pm_meta_push(nums, pm_meta_obj(a));
    pm_meta_push(nums, pm_meta_arr(a));
    cr_assert_eq(pm_meta_set(a, root, "k\"e\\y\x01", nums), 0);
    cr_assert_eq(pm_meta_set_lit(root, "lit", pm_meta_bool(a, false)), 0);
    pm_meta *bad = pm_meta_num(a, 1);
    bad->u.n = NAN;
    pm_meta_set_lit(root, "", bad);
    int64_t iv[2] = {-7, 12345678901};
    pm_meta *inner = pm_meta_obj(a);
    pm_meta_set_lit(inner, "ints", pm_meta_ints(a, iv, 2));
    pm_meta_set_lit(inner, "s", pm_meta_str(a, "\t\"x\""));
    pm_meta_set_lit(root, "inner", inner);
    pm_api__w w;
    pm_api__w_init(&w, 1);
    pm_api__w_meta(&w, root);
    const char *want = "{\"k\\\"e\\\\y\\u0001\":[0.5,0,1e+300,-9223372036854775808,{},[]],"
                       "\"lit\":false,\"\":null,\"inner\":{\"ints\":[-7,12345678901],"
                       "\"s\":\"\\u0009\\\"x\\\"\"}}";
    cr_assert_eq(w.len, strlen(want), "%.*s", (int)w.len, w.data);
    cr_assert_eq(memcmp(w.data, want, w.len), 0, "%.*s", (int)w.len, w.data);
    pm_api__w_free(&w);
    pm_arena_destroy(a);
}

/* Strings (and keys) are escaped byte by byte as JSON needs, whatever
 * the position of a quote, backslash or control byte in the 8-byte runs
 * the writer copies whole, UTF-8 bytes passed through. */
Test(encode, string_escaping_matches_bytewise) {
    uint64_t x = 0x2545F4914F6CDD1Dull;
    const unsigned char pick[] = {'"', '\\', 1, 0x1f, '\n', ' ', 'a', 0x7f, 0x80, 0xc3, 0xa9, 0xff, '~'};
    for (int t = 0; t < 20000; t++) {
        char in[48], want[6 * 48 + 3];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = x % 41, k = 0;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            in[i] = (char)(x % 4 ? 'a' + (char)(x % 26) : pick[(x >> 8) % sizeof pick]);
        }
        in[n] = '\0';
        want[k++] = '"';
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)in[i];
            if (c == '"' || c == '\\') want[k++] = '\\', want[k++] = (char)c;
            else if (c < 0x20) k += (size_t)snprintf(want + k, 7, "\\u%04x", c);
            else want[k++] = (char)c;
        }
        want[k++] = '"';
        pm_api__w w;
        pm_api__w_init(&w, 1);
        pm_api__w_str(&w, in);
        cr_assert_eq(w.len, k, "case %d", t);
        cr_assert_eq(memcmp(w.data, want, k), 0, "case %d", t);
        pm_api__w_free(&w);
    }
}

/* Integers are written as printf writes them, the extremes included. */
Test(encode, integer_printing_matches_printf) {
    const int64_t cases[] = {0, 1, -1, 9, 10, -10, 123456789, INT64_MAX, INT64_MIN, INT64_MIN + 1,
                             (int64_t)UINT32_MAX, -(int64_t)UINT32_MAX};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char want[64];
        pm_api__w w;
        pm_api__w_init(&w, 8);
        pm_api__w_i64(&w, cases[i]);
        pm_api__w_char(&w, ' ');
        pm_api__w_u64(&w, (uint64_t)cases[i]);
        snprintf(want, sizeof want, "%" PRId64 " %" PRIu64, cases[i], (uint64_t)cases[i]);
        cr_assert_eq(w.len, strlen(want));
        cr_assert_eq(memcmp(w.data, want, w.len), 0, "%s", want);
        pm_api__w_free(&w);
    }
    /* Every digit count's edges (10^k - 1, 10^k, 2^k - 1, 2^k) and random
     * values, through the index writer too. */
    uint64_t x = 0x853C49E6748FEA9Bull;
    for (int i = 0; i < 20000; i++) {
        uint64_t v;
        if (i < 64) v = (1ull << i) - (i % 2);
        else if (i < 104) {
            v = 1;
            for (int k = 0; k < (i - 64) / 2; k++) v *= 10;
            v -= (uint64_t)(i % 2);
        } else {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            v = x >> (x % 64);
        }
        char want[64];
        uint32_t u32[2] = {(uint32_t)v, 7};
        snprintf(want, sizeof want, "%" PRIu64 " %" PRIu32 ",7", v, u32[0]);
        pm_api__w w;
        pm_api__w_init(&w, 1);
        pm_api__w_u64(&w, v);
        pm_api__w_char(&w, ' ');
        pm_api__w_u32s(&w, u32, 2);
        cr_assert_eq(w.len, strlen(want), "%s", want);
        cr_assert_eq(memcmp(w.data, want, w.len), 0, "%s", want);
        pm_api__w_free(&w);
    }
}

/* ---- scenes validated where they are made (pm_scene_validate) ---- */

/* Two copies of one scene with bad normals and colours (fixed by the
 * encoder's private copies in one, by pm_scene_validate in the other), a
 * prop set and metadata; large enough that its GLB takes the huge-page
 * output path (over 8 MiB). */
static pm_scene *fix_me_scene(fixture *f) {
    pm_scene *s = new_scene(f);
    add_grid(s, "g", "grid", PM_PRIM_UV | PM_PRIM_COLOR, 420, 420, 0.5f);
    add_grid(s, "h", "grid", 0, 3, 2, 1.0f);
    add_props(s, "lamp", 3);
    add_meta(s);
    pm_prim *p = &s->prims[0];
    memset(p->normals, 0, 3 * sizeof(float));
    p->normals[3] = 0, p->normals[4] = 2, p->normals[5] = 0.5f;
    p->colors[0] = 1.5f;
    p->colors[9] = -0.25f;
    return s;
}

Test(encode, validated_scene_encodes_the_same_bytes) {
    fixture a, b;
    pm_scene *raw = fix_me_scene(&a), *val = fix_me_scene(&b);
    cr_assert_eq(pm_scene_validate(val), 0);
    cr_assert(val->validated);
    cr_assert_not(raw->validated, "built with pm_prim_add_*: not validated");
    cr_expect_eq(val->prims[0].normals[1], 1.0f, "fixed in place");
    const pm_api_output outs[] = {
        pm_api_output_default(PM_API_FMT_JSON), pm_api_output_default(PM_API_FMT_GLTF),
        pm_api_output_default(PM_API_FMT_GLB),
        {PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, true, PM_API_META_SUMMARY},
        {PM_API_FMT_GLTF, PM_API_COMPRESS_NONE, true, PM_API_META_NONE}};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        pm_api_buf x, y;
        cr_assert_eq(pm_api_encode_output(raw, &gen, key, &outs[i], &x), 0);
        cr_assert_eq(pm_api_encode_output(val, &gen, key, &outs[i], &y), 0);
        cr_expect_eq(x.len, y.len, "output %zu", i);
        cr_expect(x.len == y.len && memcmp(x.data, y.data, x.len) == 0, "output %zu differs", i);
        if (i == 2) cr_expect_gt(x.len, (size_t)8 << 20, "the big-output path is taken");
        free(x.data);
        free(y.data);
    }
    pm_api_buf g = encode(val, PM_API_FMT_GLB);
    char report[8192];
    int r = pm_test_gltf_validate(g.data, g.len, true, report, sizeof report);
    cr_expect_eq(r, 0, "validator errors+warnings %d:\n%s", r, report);
    free(g.data);
    pm_arena_destroy(a.arena);
    pm_arena_destroy(b.arena);
}

/* The encoder trusts the flag (that is the point: no pass over the
 * numbers), and checks everything once the flag is down again. */
Test(encode, the_validated_flag_decides_who_checks) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "g", "grid", 0, 2, 2, 0);
    cr_assert_eq(pm_scene_validate(s), 0);
    s->prims[0].indices[2] = 1000;   /* a write behind the producer's back */
    pm_api_buf b;
    cr_expect_eq(pm_api_encode(s, &gen, key, PM_API_FMT_GLB, &b), 0, "validated: not rechecked");
    free(b.data);
    s->validated = false;
    cr_expect_eq(pm_api_encode(s, &gen, key, PM_API_FMT_GLB, &b), -2);
    cr_expect_eq(pm_scene_validate(s), -1);
    cr_expect_not(s->validated);
    cr_expect_eq(pm_api_encode(s, &gen, key, PM_API_FMT_JSON, &b), -2, "still refused");
    s->prims[0].indices[2] = 1;
    cr_expect_eq(pm_scene_validate(s), 0);
    s->prims[0].positions[7] = NAN;
    s->validated = false;
    for (int fmt = 0; fmt < 3; fmt++)
        cr_expect_eq(pm_api_encode(s, &gen, key, (pm_api_format)fmt, &b), -2);
    pm_arena_destroy(f.arena);
}

/* The POSITION bounds, four vertices at a time (eight with AVX, from 16
 * vertices), against the plain scalar pass: every count (tails of 0 to 7
 * vertices after up to 7 steps), random values, and zeros
 * of both signs in every order (which zero the scalar pass keeps shows in
 * the text: "-0" or "0"). */
static void scalar_bounds(const float *p, uint32_t n, double mn[3], double mx[3]) {
    for (int k = 0; k < 3; k++) mn[k] = INFINITY, mx[k] = -INFINITY;
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double x = p[3 * i + k];
            if (x < mn[k]) mn[k] = x;
            if (x > mx[k]) mx[k] = x;
        }
}

Test(encode, position_bounds_match_the_scalar_pass) {
    static float p[3 * 64];
    uint64_t r = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 4000; round++) {
        uint32_t n = (uint32_t)(round % 61);
        for (uint32_t i = 0; i < 3 * n; i++) {
            r = r * 6364136223846793005u + 1442695040888963407u;
            uint32_t u = (uint32_t)(r >> 33);
            /* mostly zeros of either sign and small values, so the bound
             * is often a zero */
            p[i] = u % 5 == 0 ? 0.0f : u % 5 == 1 ? -0.0f
                   : (float)((int)(u % 2001) - 1000) / (round % 3 ? 1.0f : 1e4f) *
                         (round % 2 ? 1.0f : (float)(u % 3));
            if (round % 4 == 3) p[i] = fabsf(p[i]) * (round % 8 == 3 ? 1.0f : -1.0f);
        }
        double a[3], b[3], c[3], d[3];
        pm_api__f32_bounds3(p, n, a, b);
        scalar_bounds(p, n, c, d);
        for (int k = 0; k < 3; k++)
            cr_assert(memcmp(&a[k], &c[k], sizeof a[k]) == 0 && memcmp(&b[k], &d[k], sizeof b[k]) == 0,
                      "round %d n %u axis %d: %g %g vs %g %g", round, n, k, a[k], b[k], c[k], d[k]);
    }
}

/* pm_scene_validate finds the POSITION bounds in its finiteness pass
 * (eight vertices a step, in the AVX2 or the baseline build picked at
 * load), and a validated scene's GLB takes them from there: against the
 * scalar pass on the same random values as above, every count from 0 to 60
 * vertices and a few long ones, the positions starting at every float
 * offset of a 32-byte line; and the GLB of each scene, validated, is the
 * GLB of the same scene unvalidated (whose bounds the encoder finds). */
Test(encode, validated_bounds_match_the_scalar_pass) {
    uint64_t r = 0x2545f4914f6cdd1du;
    for (int round = 0; round < 1200; round++) {
        uint32_t n = round % 61 == 60 ? 1000 + (uint32_t)round % 37 : (uint32_t)(round % 61);
        fixture f;
        pm_scene *s = new_scene(&f);
        pm_prim *p = pm_scene_add_prim(s, "soup", "asphalt", 0, n + 8, 3 * n);
        cr_assert_not_null(p);
        for (uint32_t v = 0; v < n; v++) {
            float pos[3];
            for (int k = 0; k < 3; k++) {
                r = r * 6364136223846793005u + 1442695040888963407u;
                uint32_t u = (uint32_t)(r >> 33);
                pos[k] = u % 5 == 0 ? 0.0f : u % 5 == 1 ? -0.0f
                         : (float)((int)(u % 2001) - 1000) / (round % 3 ? 1.0f : 1e4f) *
                               (round % 2 ? 1.0f : (float)(u % 3));
                if (round % 4 == 3) pos[k] = fabsf(pos[k]) * (round % 8 == 3 ? 1.0f : -1.0f);
            }
            const float up[3] = {0, 1, 0};
            cr_assert_geq(pm_prim_add_vertex(s, p, pos, up, NULL, NULL), 0);
        }
        /* Shift the positions by round % 8 floats within their block. */
        uint32_t shift = (uint32_t)round % 8;
        float *moved = pm_arena_alloc(s->arena, (3 * (size_t)n + 8) * sizeof(float) + 32);
        cr_assert_not_null(moved);
        moved = (float *)(((uintptr_t)moved + 31) & ~(uintptr_t)31) + shift;
        memcpy(moved, p->positions, 3 * (size_t)n * sizeof(float));
        p->positions = moved;
        for (uint32_t t = 0; n >= 3 && t < n / 3; t++)
            cr_assert_eq(pm_prim_add_tri(s, p, 3 * t, 3 * t + 1, 3 * t + 2), 0);
        pm_api_buf raw = {0};
        if (n >= 3) raw = encode(s, PM_API_FMT_GLB);   /* not validated: the encoder's bounds */
        cr_assert_eq(pm_scene_validate(s), 0);
        double c[3], d[3];
        scalar_bounds(p->positions, n, c, d);
        for (int k = 0; k < 3; k++) {
            double a = p->pos_min[k], b = p->pos_max[k];
            cr_assert(memcmp(&a, &c[k], sizeof a) == 0 && memcmp(&b, &d[k], sizeof b) == 0,
                      "round %d n %u axis %d: %g %g vs %g %g", round, n, k, a, b, c[k], d[k]);
        }
        if (n >= 3) {
            pm_api_buf val = encode(s, PM_API_FMT_GLB);
            cr_assert(val.len == raw.len && memcmp(val.data, raw.data, raw.len) == 0,
                      "round %d n %u: validated GLB differs", round, n);
            free(val.data);
            free(raw.data);
        }
        pm_arena_destroy(f.arena);
    }
}

/* The bounds kept by pm_scene_validate go with the positions they were
 * measured on: a copy of the scene (pm_scene_copy) keeps them, a prim
 * given other positions after validation (its array moved) does not pass
 * them off: the encoder measures those itself. */
Test(encode, validated_bounds_follow_their_positions) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "g", "asphalt", PM_PRIM_UV, 9, 7, 0.5f);
    cr_assert_eq(pm_scene_validate(s), 0);
    pm_api_buf a = encode(s, PM_API_FMT_GLB);
    pm_scene *c = pm_scene_copy(f.arena, s);
    cr_assert_not_null(c);
    cr_assert(c->validated && c->prims[0].bounds_of == c->prims[0].positions);
    pm_api_buf b = encode(c, PM_API_FMT_GLB);
    cr_assert(a.len == b.len && memcmp(a.data, b.data, a.len) == 0, "the copy's GLB differs");
    /* Other positions (every one moved up 2 m) in a new array, the flag left. */
    pm_prim *p = &s->prims[0];
    float *moved = pm_arena_alloc(f.arena, 3 * (size_t)p->vcount * sizeof *moved);
    cr_assert_not_null(moved);
    for (uint32_t i = 0; i < 3 * p->vcount; i++) moved[i] = p->positions[i] + (i % 3 == 1 ? 2.0f : 0.0f);
    p->positions = moved;
    pm_api_buf m = encode(s, PM_API_FMT_GLB);
    s->validated = false;
    pm_api_buf u = encode(s, PM_API_FMT_GLB);
    cr_assert(m.len == u.len && memcmp(m.data, u.data, m.len) == 0, "stale bounds were written");
    free(a.data);
    free(b.data);
    free(m.data);
    free(u.data);
    pm_arena_destroy(f.arena);
}

/* pm_copy_stream (non-temporal stores from the first 64-byte line of the
 * destination, head and tail by memcpy) writes what memcpy writes, and
 * nothing beside: random bytes, every length up to 300 and some long
 * ones, every source and destination offset within a line. */
Test(encode, stream_copy_matches_memcpy) {
    enum { N = 5000, PAD = 64 };
    static unsigned char src[N + 2 * PAD], dst[N + 2 * PAD], ref[N + 2 * PAD];
    uint64_t r = 12345;
    for (size_t i = 0; i < sizeof src; i++) {
        r = r * 6364136223846793005u + 1442695040888963407u;
        src[i] = (unsigned char)(r >> 56);
    }
    static const size_t longs[] = {511, 512, 513, 1000, 4095, 4096, 4097, N};
    for (size_t li = 0; li < 300 + sizeof longs / sizeof *longs; li++) {
        size_t n = li < 300 ? li : longs[li - 300];
        for (size_t so = 0; so < 64; so += li < 300 ? 7 : 1)
            for (size_t d0 = 0; d0 < 64; d0 += li < 300 ? 5 : 1) {
                memset(dst, 0xa5, sizeof dst);
                memset(ref, 0xa5, sizeof ref);
                pm_copy_stream(dst + d0, src + so, n);
                memcpy(ref + d0, src + so, n);
                cr_assert(memcmp(dst, ref, sizeof dst) == 0, "n %zu src +%zu dst +%zu", n, so, d0);
            }
    }
}

/* A GLB whose buffer lands on resident pages (here: a block written
 * before, from the caller's allocator) is copied with non-temporal
 * stores (glb_assemble), one on fresh pages (malloc's) with ordinary ones:
 * the same bytes. 24 MB of vertices and indices, over the 16 MiB from
 * which the streaming starts; pm_api__resident tells the two apart. */
typedef struct warm_block { unsigned char *p; size_t cap; bool used; } warm_block;
static void *warm_realloc(void *ctx, void *p, size_t old_size, size_t n) {
    warm_block *w = ctx;
    if (!p && !w->used && n >= ((size_t)16 << 20) && n <= w->cap) {   /* the output: the warm block */
        w->used = true;
        return w->p;
    }
    if (p == w->p) return n <= w->cap ? p : NULL;
    (void)old_size;
    return realloc(p, n);
}
static void warm_free(void *ctx, void *p, size_t size) {
    warm_block *w = ctx;
    (void)size;
    if (p == w->p) w->used = false;
    else free(p);
}

Test(encode, streamed_glb_is_the_plain_one) {
    fixture f;
    pm_scene *s = new_scene(&f);
    add_grid(s, "big", "terrain", PM_PRIM_UV | PM_PRIM_COLOR, 520, 520, 0.25f);
    cr_assert_eq(pm_scene_validate(s), 0);
    pm_api_buf plain = encode(s, PM_API_FMT_GLB);
    cr_assert_gt(plain.len, (size_t)16 << 20);
    warm_block w = {malloc(plain.len + 4096), plain.len + 4096, true};
    cr_assert_not_null(w.p);
    memset(w.p, 0x5a, w.cap);   /* resident, and not the output's bytes */
    cr_assert(pm_api__resident(w.p, w.cap));
    w.used = false;
    pm_api_alloc al = {warm_realloc, warm_free, &w, NULL};
    pm_api_output o = pm_api_output_default(PM_API_FMT_GLB);
    pm_api_buf streamed;
    cr_assert_eq(pm_api_encode_with(s, &gen, key, &o, &al, &streamed), 0);
    cr_assert_eq(streamed.len, plain.len);
    cr_assert(streamed.data == w.p, "the output is not on the warm block");
    cr_assert(memcmp(streamed.data, plain.data, plain.len) == 0, "streamed GLB differs");
    free(plain.data);
    free(w.p);
    pm_arena_destroy(f.arena);
}

/* 16-bit indices are written 16 to a vector step (an AVX2 pack where the
 * CPU has it) and the rest one by one: for every count of triangles up to
 * a few steps past a multiple of 16, with random indices up to 65534, the
 * GLB's index bytes read back to the scene's indices, padding zero. */
Test(encode, uint16_indices_read_back_for_every_count) {
    uint64_t st = 77;
    for (uint32_t nt = 1; nt <= 40; nt++) {
        fixture f;
        pm_scene *s = new_scene(&f);
        pm_prim *p = pm_scene_add_prim(s, "soup", "asphalt", 0, 65535, 3 * nt);
        const float up[3] = {0, 1, 0};
        for (uint32_t v = 0; v < 65535; v++) {
            const float pos[3] = {(float)(v % 256), 0, (float)(v / 256)};
            cr_assert_geq(pm_prim_add_vertex(s, p, pos, up, NULL, NULL), 0);
        }
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t ix[3];
            for (int k = 0; k < 3; k++) {
                st = st * 6364136223846793005ull + 1442695040888963407ull;
                ix[k] = t == 0 && k == 0 ? 65534 : (uint32_t)(st >> 33) % 65535;
            }
            cr_assert_eq(pm_prim_add_tri(s, p, ix[0], ix[1], ix[2]), 0);
        }
        pm_api_buf glb = encode(s, PM_API_FMT_GLB);
        json_t *j = gltf_json(&glb, true);
        json_t *prim = json_array_get(json_object_get(json_array_get(json_object_get(j, "meshes"), 0), "primitives"), 0);
        json_t *acc = json_array_get(json_object_get(j, "accessors"), json_integer_value(json_object_get(prim, "indices")));
        cr_assert_eq(json_integer_value(json_object_get(acc, "componentType")), 5123);
        cr_assert_eq(json_integer_value(json_object_get(acc, "count")), 3 * nt);
        json_t *view = json_array_get(json_object_get(j, "bufferViews"),
                                      json_integer_value(json_object_get(acc, "bufferView")));
        size_t off = (size_t)json_integer_value(json_object_get(view, "byteOffset")) +
                     (size_t)json_integer_value(json_object_get(acc, "byteOffset"));
        const unsigned char *bin = glb.data + 20 + u32_at(glb.data + 12) + 8;
        for (uint32_t i = 0; i < 3 * nt; i++) {
            uint16_t x;
            memcpy(&x, bin + off + 2 * i, 2);
            cr_assert_eq(x, p->indices[i], "%u triangles, index %u", nt, i);
        }
        if (nt % 2) cr_assert_eq(bin[off + 6 * nt] | bin[off + 6 * nt + 1], 0, "padding");
        json_decref(j);
        free(glb.data);
        pm_arena_destroy(f.arena);
    }
}

/* The glTF encoder's material texts are written out in its source; each
 * must be what printing its colour gives. */
Test(encode, material_texts_are_the_printed_colours) {
    cr_expect(pm_api__gltf_material_texts_ok());
}

/* The glTF encoder on random scenes, against references that share none
 * of its writing code:
 *  - its text is compact JSON whose every number is the reference
 *    printer's text for that value (pm_api__fmt_f64_ref, %lld; floats of
 *    the JSON mesh: pm_api__fmt_f32_ref) and every string escaped as the
 *    writer promises: the text is parsed (jansson) and printed again here,
 *    and the two must be equal byte for byte;
 *  - a plain GLB's accessors hold the scene's arrays (normals fixed and
 *    colours clamped as pm_scene_validate does, indices as uint16 below
 *    65536 vertices), with min/max of a scalar pass, in the meshes, nodes
 *    and materials the scene names;
 *  - the GLB given to a sink piece by piece is the built one, and an
 *    unvalidated copy of the scene encodes to the same bytes.
 * Scenes: 0-6 primitives (empty ones too) with random attribute sets,
 * groups, LOD names, materials and names that need escapes, 0-3 prop
 * sets, a random metadata tree; every format with quantize, meshopt and
 * the metadata modes. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/encode_writer.h"
#include "pm_api/encode.h"
#include "pm_test_jsontext.h"
#include "pm_test_validator.h"
#include "scene/scene.h"

static const char *const omit[] = {"bulk", "deep.list", NULL};
static const pm_api_generator gen = {
    .name = "rand", .version = "9.9.9", .path = "/v1/rand", .summary_omit = omit};
static const char key[] = "00112233445566778899aabbccddeeff";

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {   /* 0 .. n-1 (splitmix64) */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) % n);
}
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)rnd(1000001) / 1e6f; }

static const char *const names[] = {"asphalt", "curb", "terrain", "mystery", "road",
                                    "road_lod1", "road_lod2", "q\"uote", "back\\slash",
                                    "tab\there", "caf\xc3\xa9", "a_rather_long_primitive_name_0123"};
static const char *pick_name(void) { return names[rnd(sizeof names / sizeof *names)]; }

/* A number of the kinds metadata and geometry hold. */
static double rnd_double(void) {
    switch (rnd(8)) {
    case 0: return (double)(int)rnd(2000) - 1000;
    case 1: return ((double)rnd(4000) - 2000) / 2;
    case 2: return ((double)rnd(200000) - 100000) / 1000;
    case 3: return (double)rndf(-1e4f, 1e4f);
    case 4: return ldexp((double)rnd(1u << 30) + 1, (int)rnd(120) - 90);
    case 5: return rnd(2) ? -0.0 : 1e300 * 10;   /* -0, and infinity (null) */
    case 6: return 1.0 / 3.0 * (rnd(2) ? 1 : -1);
    default: return (double)rnd(1000) * 1e-7;
    }
}

static pm_meta *rnd_meta(pm_arena *a, int depth) {
    switch (depth > 2 ? rnd(5) : rnd(7)) {
    case 0: return pm_meta_null(a);
    case 1: return pm_meta_bool(a, rnd(2));
    case 2: return pm_meta_int(a, (int64_t)rnd(100000) * (rnd(2) ? 1 : -1) * (rnd(4) ? 1 : 4000000000));
    case 3: return pm_meta_num(a, rnd_double());
    case 4: return pm_meta_str(a, pick_name());
    case 5: {
        pm_meta *arr = pm_meta_arr(a);
        for (uint32_t i = rnd(5); i > 0; i--) pm_meta_push(arr, rnd_meta(a, depth + 1));
        return arr;
    }
    default: {
        pm_meta *obj = pm_meta_obj(a);
        static const char *const keys[] = {"a", "length", "edges", "bulk", "deep", "list", "k\"q", "x"};
        for (uint32_t i = 0, n = rnd(5), at = rnd(8); i < n; i++)   /* distinct keys */
            pm_meta_set(a, obj, keys[(at + i) % 8], rnd_meta(a, depth + 1));
        return obj;
    }
    }
}

static void rnd_prim(pm_scene *s, const char *group) {
    unsigned flags = (rnd(2) ? PM_PRIM_UV : 0) | (rnd(4) == 0 ? PM_PRIM_COLOR : 0);
    uint32_t big = rnd(60) == 0 ? 65530 + rnd(12) : 0;   /* around the uint16 index limit */
    uint32_t nv = big ? big : rnd(5) == 0 ? 0 : 1 + rnd(120);
    uint32_t nt = nv && rnd(8) ? 1 + rnd(big ? 50 : 150) : 0;
    pm_prim *p = pm_scene_add_prim(s, pick_name(), pick_name(), flags, nv, 3 * nt);
    cr_assert_not_null(p);
    float scale = rnd(3) ? 100.0f : 20000.0f;
    for (uint32_t v = 0; v < nv; v++) {
        float pos[3] = {rndf(-scale, scale), rnd(3) ? 0.0f : rndf(-5, 5), rndf(-scale, scale)};
        if (rnd(50) == 0) pos[1] = -0.0f;
        float n[3] = {rndf(-1, 1), rndf(0.1f, 1), rndf(-1, 1)};
        if (rnd(3)) {   /* mostly unit, as generators write them */
            double l = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
            for (int k = 0; k < 3; k++) n[k] = (float)(n[k] / l);
        }
        float uv[2] = {rndf(rnd(2) ? 0 : -3, 1), rndf(0, rnd(2) ? 1 : 40)};
        float c[4] = {rndf(-0.2f, 1.2f), rndf(0, 1), rndf(0, 1), 1};
        cr_assert_geq(pm_prim_add_vertex(s, p, pos, n, uv, c), 0);
    }
    for (uint32_t t = 0; t < nt; t++)
        cr_assert_eq(pm_prim_add_tri(s, p, rnd(nv), rnd(nv), rnd(nv)), 0);
    if (group) cr_assert_eq(pm_prim_set_mesh(s, p, group), 0);
}

static pm_scene *rnd_scene(pm_arena *a) {
    pm_scene *s = pm_scene_create(a);
    cr_assert_not_null(s);
    const char *group = NULL;
    for (uint32_t i = rnd(7); i > 0; i--) {
        if (rnd(3) == 0) group = rnd(2) ? pick_name() : NULL;   /* runs of one mesh name */
        rnd_prim(s, group);
    }
    for (uint32_t i = rnd(4); i > 0; i--) {
        pm_props *pr = pm_scene_add_props(s, rnd(2) ? "lamp" : "guard\"rail");
        cr_assert_not_null(pr);
        for (uint32_t k = rnd(12); k > 0; k--) {
            float t[3] = {rndf(-50, 50), 0, rndf(-50, 50)}, h = rndf(0, 3);
            float r[4] = {0, sinf(h), 0, cosf(h)}, sc[3] = {1, rndf(0.5f, 2), 1};
            cr_assert_eq(pm_props_add(s, pr, t, r, sc), 0);
        }
    }
    static const char *const keys[] = {"length", "bulk", "deep", "samples", "name"};
    for (uint32_t i = 0, n = rnd(6), at = rnd(5); i < n; i++)
        pm_meta_set(a, s->meta, keys[(at + i) % 5], rnd_meta(a, 0));
    return s;
}

/* ---- the reference printer ---- */

/* v printed again; f32: reals are float32 values (the JSON mesh's arrays,
 * whose texts read back as the float, not as the double). */
static void reprint(pm_test_text *t, const json_t *v, bool f32) {
    char b[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        pm_test_put(t, "{", 1);
        const char *k;
        json_t *x;
        bool first = true;
        json_object_foreach((json_t *)v, k, x) {
            if (!first) pm_test_put(t, ",", 1);
            first = false;
            pm_test_put_str(t, k, strlen(k));
            pm_test_put(t, ":", 1);
            /* the JSON mesh: meshes[] and instances[] hold float32 arrays */
            reprint(t, x, f32 || !strcmp(k, "meshes") || !strcmp(k, "instances"));
        }
        pm_test_put(t, "}", 1);
        return;
    }
    case JSON_ARRAY: {
        pm_test_put(t, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) pm_test_put(t, ",", 1);
            reprint(t, json_array_get(v, i), f32);
        }
        pm_test_put(t, "]", 1);
        return;
    }
    case JSON_STRING: pm_test_put_str(t, json_string_value(v), json_string_length(v)); return;
    case JSON_INTEGER: pm_test_put(t, b, (size_t)snprintf(b, sizeof b, "%" JSON_INTEGER_FORMAT, json_integer_value(v))); return;
    case JSON_REAL: {
        double d = json_real_value(v);
        int n = f32 ? pm_api__fmt_f32_ref(b, (float)d) : pm_api__fmt_f64_ref(b, d);
        pm_test_put(t, b, (size_t)n);
        return;
    }
    case JSON_TRUE: pm_test_put(t, "true", 4); return;
    case JSON_FALSE: pm_test_put(t, "false", 5); return;
    case JSON_NULL: pm_test_put(t, "null", 4); return;
    }
}

/* s[0..n) is compact JSON that prints again to itself. */
static json_t *expect_canonical(const char *s, size_t n, const char *what) {
    json_error_t e;
    json_t *j = json_loadb(s, n, JSON_REJECT_DUPLICATES, &e);
    cr_assert_not_null(j, "%s: does not parse: %s (line %d col %d)", what, e.text, e.line, e.column);
    pm_test_text t = {0};
    reprint(&t, j, false);
    size_t k = 0;
    while (k < n && k < t.len && s[k] == t.s[k]) k++;
    cr_expect(k == n && k == t.len, "%s: text differs from its reprint at byte %zu: ...%.60s... vs ...%.60s...",
              what, k, s + (k > 20 ? k - 20 : 0), t.s + (k > 20 ? k - 20 : 0));
    free(t.s);
    return j;
}

/* ---- the GLB against the scene ---- */

static uint32_t u32_at(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static json_int_t geti(const json_t *o, const char *k) {
    const json_t *v = json_object_get(o, k);
    cr_assert(json_is_integer(v), "member %s is an integer", k);
    return json_integer_value(v);
}

/* Accessor i's bytes equal want (n bytes), its count, type and view. */
static void expect_accessor(const json_t *j, const unsigned char *bin, json_int_t i, const void *want,
                            size_t count, int ctype, const char *type, size_t esize) {
    const json_t *a = json_array_get(json_object_get(j, "accessors"), (size_t)i);
    cr_assert_not_null(a);
    cr_expect_eq(geti(a, "count"), (json_int_t)count);
    cr_expect_eq(geti(a, "componentType"), ctype);
    cr_expect_str_eq(json_string_value(json_object_get(a, "type")), type);
    const json_t *bv = json_array_get(json_object_get(j, "bufferViews"), (size_t)geti(a, "bufferView"));
    cr_assert_not_null(bv);
    cr_expect_eq(geti(bv, "byteLength"), (json_int_t)(count * esize));
    size_t off = (size_t)geti(bv, "byteOffset");
    cr_expect(memcmp(bin + off, want, count * esize) == 0, "accessor %d holds the scene's array", (int)i);
}

static void expect_bounds(const json_t *j, json_int_t i, const float *p, uint32_t n) {
    const json_t *a = json_array_get(json_object_get(j, "accessors"), (size_t)i);
    for (int k = 0; k < 3; k++) {
        float lo = INFINITY, hi = -INFINITY;
        for (uint32_t v = 0; v < n; v++) {
            if (p[3 * v + k] < lo) lo = p[3 * v + k];
            if (p[3 * v + k] > hi) hi = p[3 * v + k];
        }
        double jlo = json_number_value(json_array_get(json_object_get(a, "min"), (size_t)k));
        double jhi = json_number_value(json_array_get(json_object_get(a, "max"), (size_t)k));
        cr_expect(jlo == lo, "min[%d] %.9g vs %.9g", k, jlo, (double)lo);   /* -0 prints as 0 */
        cr_expect(jhi == hi, "max[%d] %.9g vs %.9g", k, jhi, (double)hi);
    }
}

/* A plain GLB holds the validated scene s. */
static void expect_scene(const pm_api_buf *b, const pm_scene *s) {
    uint32_t jlen = u32_at(b->data + 12);
    const unsigned char *bin = b->data + 20 + jlen + 8;
    json_error_t e;
    json_t *j = json_loadb((const char *)b->data + 20, jlen, 0, &e);
    cr_assert_not_null(j);
    const json_t *meshes = json_object_get(j, "meshes"), *mats = json_object_get(j, "materials");
    size_t mesh = SIZE_MAX, prim = 0;
    const pm_prim *prev = NULL;
    for (uint32_t i = 0; i < s->nprims; i++) {
        const pm_prim *p = &s->prims[i];
        if (!p->vcount || !p->icount) continue;
        if (!(prev && prev->mesh && p->mesh && !strcmp(prev->mesh, p->mesh))) mesh++, prim = 0;
        prev = p;
        const json_t *m = json_array_get(meshes, mesh);
        cr_assert_not_null(m, "mesh %zu", mesh);
        cr_expect_str_eq(json_string_value(json_object_get(m, "name")), pm_prim_mesh(p));
        const json_t *pr = json_array_get(json_object_get(m, "primitives"), prim++);
        cr_assert_not_null(pr);
        const json_t *at = json_object_get(pr, "attributes");
        const json_t *mat = json_array_get(mats, (size_t)geti(pr, "material"));
        cr_expect_str_eq(json_string_value(json_object_get(mat, "name")), p->material);
        expect_accessor(j, bin, geti(at, "POSITION"), p->positions, p->vcount, 5126, "VEC3", 12);
        expect_bounds(j, geti(at, "POSITION"), p->positions, p->vcount);
        expect_accessor(j, bin, geti(at, "NORMAL"), p->normals, p->vcount, 5126, "VEC3", 12);
        cr_expect_eq(json_object_get(at, "TEXCOORD_0") != NULL, p->uvs != NULL);
        if (p->uvs) expect_accessor(j, bin, geti(at, "TEXCOORD_0"), p->uvs, p->vcount, 5126, "VEC2", 8);
        cr_expect_eq(json_object_get(at, "COLOR_0") != NULL, p->colors != NULL);
        if (p->colors) expect_accessor(j, bin, geti(at, "COLOR_0"), p->colors, p->vcount, 5126, "VEC4", 16);
        if (p->vcount <= 65535) {
            uint16_t *i16 = malloc(2 * (size_t)p->icount);
            for (uint32_t k = 0; k < p->icount; k++) i16[k] = (uint16_t)p->indices[k];
            expect_accessor(j, bin, geti(pr, "indices"), i16, p->icount, 5123, "SCALAR", 2);
            free(i16);
        } else {
            expect_accessor(j, bin, geti(pr, "indices"), p->indices, p->icount, 5125, "SCALAR", 4);
        }
    }
    const json_t *ex = json_object_get(json_array_get(json_object_get(j, "scenes"), 0), "extras");
    cr_expect_str_eq(json_string_value(json_object_get(ex, "key")), key);
    cr_expect_eq(geti(json_object_get(ex, "stats"), "vertices"), (json_int_t)pm_scene_vertex_count(s));
    cr_expect_eq(geti(json_object_get(ex, "stats"), "triangles"), (json_int_t)pm_scene_triangle_count(s));
    /* each prop set's node: its translations, rotations and scales */
    size_t node = 0;
    for (uint32_t i = 0; i < s->nprops; i++) {
        const pm_props *pr = &s->props[i];
        if (!pr->count) continue;
        const json_t *n = NULL;
        for (; !n && node < json_array_size(json_object_get(j, "nodes")); node++) {
            const json_t *c = json_array_get(json_object_get(j, "nodes"), node);
            if (json_object_get(c, "extensions")) n = c;
        }
        cr_assert_not_null(n, "a node for prop set %u", i);
        cr_expect_str_eq(json_string_value(json_object_get(n, "name")), pr->name);
        const json_t *at = json_object_get(json_object_get(json_object_get(n, "extensions"),
                                                           "EXT_mesh_gpu_instancing"), "attributes");
        expect_accessor(j, bin, geti(at, "TRANSLATION"), pr->translations, pr->count, 5126, "VEC3", 12);
        expect_accessor(j, bin, geti(at, "ROTATION"), pr->rotations, pr->count, 5126, "VEC4", 16);
        expect_accessor(j, bin, geti(at, "SCALE"), pr->scales, pr->count, 5126, "VEC3", 12);
    }
    json_decref(j);
}

typedef struct sink_buf { unsigned char *p; size_t n; } sink_buf;
static int sink_write(void *ctx, const void *d, size_t n) {
    sink_buf *b = ctx;
    b->p = realloc(b->p, b->n + n + 1);
    cr_assert_not_null(b->p);
    memcpy(b->p + b->n, d, n);
    b->n += n;
    return 0;
}

static pm_api_buf encode(const pm_scene *s, const pm_api_output *o) {
    pm_api_buf b;
    cr_assert_eq(pm_api_encode_output(s, &gen, key, o, &b), 0);
    return b;
}

static const pm_api_output outputs[] = {
    {PM_API_FMT_GLB, PM_API_COMPRESS_NONE, false, PM_API_META_FULL},
    {PM_API_FMT_GLTF, PM_API_COMPRESS_NONE, false, PM_API_META_FULL},
    {PM_API_FMT_JSON, PM_API_COMPRESS_NONE, false, PM_API_META_FULL},
    {PM_API_FMT_GLB, PM_API_COMPRESS_NONE, true, PM_API_META_SUMMARY},
    {PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, false, PM_API_META_NONE},
    {PM_API_FMT_GLTF, PM_API_COMPRESS_MESHOPT, true, PM_API_META_SUMMARY},
    {PM_API_FMT_JSON, PM_API_COMPRESS_NONE, false, PM_API_META_SUMMARY},
};
#define NOUT (sizeof outputs / sizeof *outputs)

Test(encode_random, text_and_buffer_against_references, .timeout = 300) {
    int validated = 0;
    for (int t = 0; t < 120; t++) {
        rng_state = 0xC0FFEEull * (uint64_t)(t + 1);
        pm_arena *a = pm_arena_create(0);
        pm_scene *s = rnd_scene(a);
        /* unvalidated first (the encoder fixes normals and colours in
         * copies), then validated (fixed in place): the same bytes */
        pm_api_buf before[NOUT];
        for (size_t k = 0; k < NOUT; k++) before[k] = encode(s, &outputs[k]);
        bool ok = pm_scene_validate(s) == 0;
        cr_assert(ok, "scene %d is valid", t);
        validated++;
        for (size_t k = 0; k < NOUT; k++) {
            const pm_api_output *o = &outputs[k];
            pm_api_buf b = encode(s, o);
            cr_expect(b.len == before[k].len && memcmp(b.data, before[k].data, b.len) == 0,
                      "scene %d output %zu: validated and unvalidated scenes differ", t, k);
            char what[64];
            snprintf(what, sizeof what, "scene %d output %zu", t, k);
            json_t *j;
            if (o->format == PM_API_FMT_GLB) {
                uint32_t jlen = u32_at(b.data + 12);
                size_t n = jlen;
                while (n && b.data[20 + n - 1] == ' ') n--;
                j = expect_canonical((const char *)b.data + 20, n, what);
                sink_buf sb = {0};
                pm_api_sink sink = {.write = sink_write, .ctx = &sb};
                cr_assert_eq(pm_api_encode_to(s, &gen, key, o, NULL, &sink), 0);
                cr_expect(sb.n == b.len && memcmp(sb.p, b.data, b.len) == 0, "%s: streamed GLB differs", what);
                free(sb.p);
                if (!o->quantize && o->compress == PM_API_COMPRESS_NONE) expect_scene(&b, s);
            } else {
                cr_assert(b.len && b.data[b.len - 1] == '\n');
                j = expect_canonical((const char *)b.data, b.len - 1, what);
            }
            json_decref(j);
            /* the validator on a few, glTF and GLB */
            if (t % 60 == 0 && o->format != PM_API_FMT_JSON) {
                char report[4096];
                int r = pm_test_gltf_validate(b.data, b.len, o->format == PM_API_FMT_GLB, report, sizeof report);
                cr_expect_eq(r, 0, "%s: validator: %s", what, report);
            }
            free(b.data);
            free(before[k].data);
        }
        pm_arena_destroy(a);
    }
    cr_expect_eq(validated, 120);
}

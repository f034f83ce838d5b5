/* Black box: GET and POST /v1/dungeons through the real procmesh binary.
 * Same seed -> same bytes (with and without the cache), GET equals POST,
 * the three formats, 422s with pointers, and the GLB through the Khronos
 * validator. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "pm_test_server.h"
#include "pm_test_validator.h"

static pm_test_server srv;

static void start(void) {
    const char *args[] = {"--workers", "2", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
}
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0); }

TestSuite(http_dungeon, .init = start, .fini = stop, .timeout = 120);

static const char *body3 = "{\"seed\": 42, \"generate\": {\"count\": 20, \"extent\": [80, 80], \"floors\": 3}}";

Test(http_dungeon, post_same_seed_same_bytes) {
    pm_http_response a, b, c;
    cr_assert_eq(pm_http_post_json(&srv, "/v1/dungeons?format=glb", body3, &a), 0);
    cr_assert_eq(a.status, 200, "%s", a.body);
    char etag_a[128], etag_b[128], xc[16];
    cr_assert_not_null(pm_http_header(&a, "ETag", etag_a, sizeof etag_a));
    /* A second identical request: served from the cache, same bytes. */
    cr_assert_eq(pm_http_post_json(&srv, "/v1/dungeons?format=glb", body3, &b), 0);
    cr_assert_eq(b.status, 200);
    cr_assert_not_null(pm_http_header(&b, "ETag", etag_b, sizeof etag_b));
    cr_assert_str_eq(etag_a, etag_b);
    cr_assert_not_null(pm_http_header(&b, "X-Cache", xc, sizeof xc));
    cr_assert_str_eq(xc, "HIT");
    cr_assert_eq(a.body_len, b.body_len);
    cr_assert_eq(memcmp(a.body, b.body, a.body_len), 0);
    /* The same request spelled differently (key order, stated defaults)
     * is the same dungeon. */
    cr_assert_eq(pm_http_post_json(&srv, "/v1/dungeons?format=glb",
                                   "{\"generate\": {\"floors\": 3, \"extent\": [80, 80], \"count\": 20, \"spacing\": 2},"
                                   " \"obstacles\": \"detour\", \"seed\": 42}", &c), 0);
    cr_assert_eq(c.status, 200);
    cr_assert_eq(c.body_len, a.body_len);
    cr_assert_eq(memcmp(c.body, a.body, a.body_len), 0);
    cr_assert_eq(pm_test_gltf_validate(a.body, a.body_len, 1, NULL, 0), 0, "GLB passes the validator");
    pm_http_response_free(&a);
    pm_http_response_free(&b);
    pm_http_response_free(&c);
}

Test(http_dungeon, get_equals_post) {
    pm_http_response g, p;
    cr_assert_eq(pm_http_get(&srv, "/v1/dungeons?seed=42&count=20&floors=3&extent=80x80&format=glb", &g), 0);
    cr_assert_eq(g.status, 200, "%s", g.body);
    cr_assert_eq(pm_http_post_json(&srv, "/v1/dungeons?format=glb", body3, &p), 0);
    cr_assert_eq(p.status, 200);
    char eg[128], ep[128];
    cr_assert_str_eq(pm_http_header(&g, "ETag", eg, sizeof eg), pm_http_header(&p, "ETag", ep, sizeof ep));
    cr_assert_eq(g.body_len, p.body_len);
    cr_assert_eq(memcmp(g.body, p.body, g.body_len), 0);
    pm_http_response_free(&g);
    pm_http_response_free(&p);
}

Test(http_dungeon, json_mesh_carries_the_layout) {
    pm_http_response r;
    cr_assert_eq(pm_http_get(&srv, "/v1/dungeons?seed=7&count=15&obstacles=break", &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    json_error_t err;
    json_t *doc = json_loadb((const char *)r.body, r.body_len, 0, &err);
    cr_assert_not_null(doc, "%s", err.text);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "generator")), "dungeon");
    cr_assert_str_eq(json_string_value(json_object_get(doc, "version")), "1.0.0");
    json_t *meta = json_object_get(doc, "metadata");
    cr_assert_eq(json_array_size(json_object_get(meta, "rooms")), 15);
    json_t *main_path = json_object_get(meta, "main_path");
    cr_assert_geq(json_array_size(main_path), 2);
    json_t *rooms = json_object_get(meta, "rooms");
    size_t first = (size_t)json_integer_value(json_array_get(main_path, 0));
    size_t last = (size_t)json_integer_value(json_array_get(main_path, json_array_size(main_path) - 1));
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(rooms, first), "role")), "rest");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(rooms, last), "role")), "boss");
    cr_assert(json_is_array(json_object_get(meta, "edges")));
    cr_assert(json_is_array(json_object_get(meta, "corridors")));
    cr_assert(json_is_array(json_object_get(meta, "shafts")));
    json_t *meshes = json_object_get(doc, "meshes");
    bool floor = false, wall = false;
    size_t i;
    json_t *m;
    json_array_foreach(meshes, i, m) {
        const char *mat = json_string_value(json_object_get(m, "material"));
        floor |= strcmp(mat, "floor") == 0;
        wall |= strcmp(mat, "wall") == 0;
    }
    cr_assert(floor && wall);
    json_decref(doc);
    pm_http_response_free(&r);
}

Test(http_dungeon, gltf_passes_the_validator) {
    pm_http_response r;
    cr_assert_eq(pm_http_get(&srv, "/v1/dungeons?seed=11&count=30&floors=2&extent=60x60&format=gltf", &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, 0, NULL, 0), 0);
    pm_http_response_free(&r);
}

static void expect_422(const char *path, const char *body, const char *pointer) {
    pm_http_response r;
    if (body) cr_assert_eq(pm_http_post_json(&srv, path, body, &r), 0);
    else cr_assert_eq(pm_http_get(&srv, path, &r), 0);
    cr_assert_eq(r.status, 422, "%s %s: %ld %s", path, body ? body : "", r.status, r.body);
    char ct[128];
    cr_assert_not_null(pm_http_header(&r, "Content-Type", ct, sizeof ct));
    cr_assert(strstr(ct, "application/problem+json"));
    char want[160];
    snprintf(want, sizeof want, "\"pointer\":\"%s\"", pointer);
    json_t *doc = json_loadb((const char *)r.body, r.body_len, 0, NULL);
    char *compact = json_dumps(doc, JSON_COMPACT);
    cr_assert(strstr(compact, want), "want %s in %s", want, compact);
    free(compact);
    json_decref(doc);
    pm_http_response_free(&r);
}

Test(http_dungeon, bad_requests_are_422_with_pointers) {
    expect_422("/v1/dungeons", "{\"generate\": {\"count\": 5}}", "/seed");
    expect_422("/v1/dungeons",
               "{\"seed\": 1, \"rooms\": [{\"x\":0,\"z\":0,\"w\":5,\"d\":5},{\"x\":3,\"z\":3,\"w\":5,\"d\":5}]}",
               "/rooms/1");
    expect_422("/v1/dungeons", "{\"seed\": 1, \"rooms\": [{\"x\":0,\"z\":0,\"w\":2,\"d\":5}]}", "/rooms/0/w");
    expect_422("/v1/dungeons", "{\"seed\": 1, \"generate\": {\"count\": 400, \"extent\": [30, 30]}}",
               "/generate/count");
    expect_422("/v1/dungeons?seed=1&count=100000", NULL, "/generate/count");
    expect_422("/v1/dungeons?seed=1&extent=banana", NULL, "/extent");
    expect_422("/v1/dungeons?count=3", NULL, "/seed");
}

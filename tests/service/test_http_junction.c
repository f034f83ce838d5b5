/* Black box: POST /v1/junctions against the real binary. Status, headers,
 * the JSON mesh's shape and metadata, GLB and glTF through the validator,
 * the cache (MISS then HIT, one key for equal requests), 422s with
 * pointers from the parser and from the generator, 405 for GET. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "svc_fixtures.h"
#include "pm_test_validator.h"

static pm_test_server srv;

static void start(void) { cr_assert_eq(pm_test_server_start(&srv, NULL), 0); }
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_junction, .init = start, .fini = stop, .timeout = 120);

#define CROSS_SW                                                                                 \
    "{\"arms\": [{\"direction\": [1, 0], \"width\": 7}, {\"direction\": [0, 1], \"width\": 7},"  \
    " {\"direction\": [-1, 0], \"width\": 7}, {\"direction\": [0, -1], \"width\": 7}],"          \
    " \"sidewalk\": {\"width\": 2, \"curb_height\": 0.15}}"

Test(http_junction, post_gives_a_json_mesh) {
    pm_http_response r = svc_post(&srv, "/v1/junctions", CROSS_SW, NULL);
    char buf[256];
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "application/json");
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "MISS");
    cr_assert_str_eq(svc_header(&r, "Cache-Control", buf, sizeof buf), "public, max-age=3600");
    cr_assert_not_null(strstr(svc_header(&r, "Vary", buf, sizeof buf), "Accept"));
    cr_assert_not_null(strstr(svc_header(&r, "Server-Timing", buf, sizeof buf), "gen;dur="));
    char etag[128];
    cr_assert_eq(strlen(svc_header(&r, "ETag", etag, sizeof etag)), 34, "a quoted 32-digit key: %s", etag);
    json_t *j = svc_json(&r);
    cr_assert_str_eq(json_string_value(json_object_get(j, "generator")), "junction");
    cr_assert_str_eq(json_string_value(json_object_get(j, "version")), "1.2.0");
    cr_assert_eq(strncmp(json_string_value(json_object_get(j, "key")), etag + 1, 32), 0);
    json_t *meshes = json_object_get(j, "meshes");
    cr_assert_eq(json_array_size(meshes), 3);
    const char *names[] = {"asphalt", "curb", "sidewalk"};
    size_t total_v = 0, total_t = 0;
    for (size_t i = 0; i < 3; i++) {
        json_t *m = json_array_get(meshes, i);
        cr_assert_str_eq(json_string_value(json_object_get(m, "name")), names[i]);
        cr_assert_str_eq(json_string_value(json_object_get(m, "material")), names[i]);
        size_t nv = json_array_size(json_object_get(m, "positions")) / 3;
        cr_assert_eq(json_array_size(json_object_get(m, "normals")), 3 * nv);
        cr_assert_eq(json_array_size(json_object_get(m, "uvs")), 2 * nv);
        size_t ni = json_array_size(json_object_get(m, "indices"));
        cr_assert_eq(ni % 3, 0);
        total_v += nv;
        total_t += ni / 3;
    }
    json_t *stats = json_object_get(j, "stats");
    cr_assert_eq((size_t)json_integer_value(json_object_get(stats, "vertices")), total_v);
    cr_assert_eq((size_t)json_integer_value(json_object_get(stats, "triangles")), total_t);
    /* Mouths: one per arm, in request order, vertex indices into the asphalt. */
    json_t *meta = json_object_get(j, "metadata");
    json_t *arms = json_object_get(meta, "arms");
    cr_assert_eq(json_array_size(arms), 4);
    json_t *asphalt_pos = json_object_get(json_array_get(meshes, 0), "positions");
    for (size_t i = 0; i < 4; i++) {
        json_t *a = json_array_get(arms, i), *m = json_object_get(a, "mouth");
        cr_assert_eq(json_integer_value(json_object_get(a, "index")), (json_int_t)i);
        json_int_t li = json_integer_value(json_object_get(m, "left_index"));
        json_t *left = json_object_get(m, "left");
        for (size_t k = 0; k < 3; k++)
            cr_assert_eq(json_number_value(json_array_get(left, k)),
                         json_number_value(json_array_get(asphalt_pos, 3 * (size_t)li + k)));
    }
    json_decref(j);
    pm_http_response_free(&r);
    /* The same request again, written differently: a hit with the same key. */
    r = svc_post(&srv, "/v1/junctions", "{\"sidewalk\": {\"curb_height\": 0.15, \"width\": 2.0}, \"arms\": "
             "[{\"width\": 7.0, \"direction\": [3, 0]}, {\"direction\": [0, 1], \"width\": 7}, "
             "{\"direction\": [-1, 0], \"width\": 7}, {\"direction\": [0, -1], \"width\": 7}], "
             "\"corner_radius\": 3}", NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT");
    cr_assert_str_eq(svc_header(&r, "ETag", buf, sizeof buf), etag);
    pm_http_response_free(&r);
}

Test(http_junction, glb_and_gltf_pass_the_validator) {
    pm_http_response r = svc_post(&srv, "/v1/junctions?format=glb", CROSS_SW, NULL);
    char buf[256], report[4096];
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "model/gltf-binary");
    cr_assert_eq(memcmp(r.body, "glTF", 4), 0);
    cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, 1, report, sizeof report), 0, "%s", report);
    pm_http_response_free(&r);
    r = svc_post(&srv, "/v1/junctions", "{\"arms\": [{\"direction\": [1, 0], \"width\": 8}, {\"direction\": "
             "[0, 1], \"width\": 8}, {\"direction\": [-1, 0.2], \"width\": 8}], \"roundabout\": "
             "{\"radius\": 16, \"island_radius\": 8}}", "Accept: model/gltf+json");
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "model/gltf+json");
    cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, 0, report, sizeof report), 0, "%s", report);
    json_t *j = svc_json(&r);
    json_t *extras = json_object_get(json_array_get(json_object_get(j, "scenes"), 0), "extras");
    cr_assert_not_null(json_object_get(json_object_get(extras, "metadata"), "roundabout"),
                       "metadata in scene.extras");
    json_decref(j);
    pm_http_response_free(&r);
}

Test(http_junction, invalid_requests_are_422_with_pointers) {
    pm_http_response r = svc_post(&srv, "/v1/junctions", "{\"arms\": [{\"direction\": [1, 0], \"width\": 7}, "
                              "{\"direction\": [0, 1], \"width\": -7}], \"colour\": 1}", NULL);
    svc_expect_problem(&r, "/arms/1/width");
    svc_expect_problem(&r, "/colour");
    pm_http_response_free(&r);
    /* Valid numbers, no junction: arms 0.3 degrees apart, named by the generator. */
    r = svc_post(&srv, "/v1/junctions", "{\"arms\": [{\"direction\": [1, 0], \"width\": 7}, {\"direction\": "
             "[0.999986, 0.005236], \"width\": 7}, {\"direction\": [-1, 0], \"width\": 7}]}", NULL);
    svc_expect_problem(&r, "/arms/0");
    svc_expect_problem(&r, "/arms/1");
    pm_http_response_free(&r);
    /* 3 degrees apart they build, their mouths out where their edges part. */
    r = svc_post(&srv, "/v1/junctions", "{\"arms\": [{\"direction\": [1, 0], \"width\": 7}, {\"direction\": "
             "[0.99863, 0.05234], \"width\": 7}, {\"direction\": [-1, 0], \"width\": 7}]}", NULL);
    cr_assert_eq(r.status, 200, "%ld %s", r.status, (const char *)r.body);
    pm_http_response_free(&r);
}

Test(http_junction, get_is_405) {
    pm_http_response r;
    char buf[128];
    cr_assert_eq(pm_http_get(&srv, "/v1/junctions", &r), 0);
    cr_assert_eq(r.status, 405);
    cr_assert_str_eq(svc_header(&r, "Allow", buf, sizeof buf), "POST, OPTIONS");
    pm_http_response_free(&r);
}

/* Black box: POST /v1/networks against the real binary. The JSON mesh and
 * its metadata (seams on the junction's own vertices), GLB and glTF through
 * the validator, the cache (MISS then HIT for the same network written
 * differently), 422s with pointers from the parser and the generator, 405
 * for GET. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "svc_fixtures.h"
#include "pm_test_validator.h"

static pm_test_server srv;

static void start(void) { cr_assert_eq(pm_test_server_start(&srv, NULL), 0); }
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_network, .init = start, .fini = stop, .timeout = 120);

/* The T of docs/network.md. */
#define TEE                                                                                       \
    "{\"nodes\": [{\"id\": \"c\", \"position\": [0, 0]}, {\"id\": \"e\", \"position\": [60, 0]},"  \
    " {\"id\": \"w\", \"position\": [-60, 0]}, {\"id\": \"s\", \"position\": [0, 0.5, 50]}],"      \
    " \"edges\": [{\"from\": \"c\", \"to\": \"e\"}, {\"from\": \"w\", \"to\": \"c\"},"              \
    " {\"from\": \"c\", \"to\": \"s\", \"width\": 6, \"points\": [[8, 25]]}],"                      \
    " \"sidewalk\": {\"width\": 2}}"

Test(http_network, post_gives_a_stitched_json_mesh_and_a_hit_on_repeat) {
    pm_http_response r = svc_post(&srv, "/v1/networks", TEE, NULL);
    char buf[256], etag[128];
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "application/json");
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "MISS");
    cr_assert_eq(strlen(svc_header(&r, "ETag", etag, sizeof etag)), 34);
    json_t *j = svc_json(&r);
    cr_assert_str_eq(json_string_value(json_object_get(j, "generator")), "network");
    json_t *meshes = json_object_get(j, "meshes");
    cr_assert_eq(json_array_size(meshes), 3);
    const char *names[] = {"asphalt", "curb", "sidewalk"};
    for (size_t i = 0; i < 3; i++)
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(meshes, i), "name")), names[i]);
    json_t *meta = json_object_get(j, "metadata");
    cr_assert_eq(json_integer_value(json_object_get(meta, "junctions")), 1);
    cr_assert_eq(json_integer_value(json_object_get(meta, "roads_count")), 3);
    json_t *nodes = json_object_get(meta, "nodes");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(nodes, 0), "id")), "c");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(nodes, 0), "kind")), "junction");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(nodes, 3), "kind")), "end");
    /* Each seam's vertices are the junction mouth's own, and the road's
     * triangles use them. */
    json_t *seams = json_object_get(meta, "seams");
    cr_assert_eq(json_array_size(seams), 3);
    json_t *asphalt = json_array_get(meshes, 0);
    json_t *pos = json_object_get(asphalt, "positions"), *idx = json_object_get(asphalt, "indices");
    json_t *mouths = json_object_get(json_array_get(nodes, 0), "mouths");
    for (size_t s = 0; s < 3; s++) {
        json_t *seam = json_array_get(seams, s);
        size_t edge = (size_t)json_integer_value(json_object_get(seam, "edge"));
        json_t *mouth = json_array_get(mouths, edge);
        json_int_t li = json_integer_value(json_object_get(seam, "left_index"));
        cr_assert_eq(li, json_integer_value(json_object_get(mouth, "left_index")));
        json_t *left = json_object_get(mouth, "left");
        /* Positions are float32: the JSON mesh writes each float's shortest
         * spelling, the metadata its exact double. */
        for (size_t k = 0; k < 3; k++)
            cr_assert_eq((float)json_number_value(json_array_get(left, k)),
                         (float)json_number_value(json_array_get(pos, 3 * (size_t)li + k)));
        json_t *road = json_array_get(json_object_get(meta, "roads"),
                                      (size_t)json_integer_value(json_object_get(seam, "road")));
        json_int_t t0 = json_integer_value(json_array_get(json_object_get(road, "triangles"), 0));
        json_int_t tn = json_integer_value(json_array_get(json_object_get(road, "triangles"), 1));
        bool used = false;
        for (json_int_t t = 3 * t0; t < 3 * (t0 + tn); t++)
            used |= json_integer_value(json_array_get(idx, (size_t)t)) == li;
        cr_assert(used, "road %zu does not use its seam vertex", s);
    }
    json_decref(j);
    pm_http_response_free(&r);
    /* The same network written differently: a hit, the same key. */
    r = svc_post(&srv, "/v1/networks", "{\"sidewalk\": {\"curb_height\": 0.15, \"width\": 2.0}, \"corner_radius\": 3.0,"
             " \"edges\": [{\"to\": \"e\", \"from\": \"c\", \"width\": 7}, {\"from\": \"w\", \"to\": \"c\"},"
             " {\"from\": \"c\", \"to\": \"s\", \"width\": 6.0, \"points\": [[8.0, 25]]}],"
             " \"nodes\": [{\"position\": [0, 0], \"id\": \"c\"}, {\"id\": \"e\", \"position\": [60, 0.0]},"
             " {\"id\": \"w\", \"position\": [-60, 0]}, {\"id\": \"s\", \"position\": [0, 0.5, 50]}]}", NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT");
    cr_assert_str_eq(svc_header(&r, "ETag", buf, sizeof buf), etag);
    pm_http_response_free(&r);
}

Test(http_network, glb_and_gltf_pass_the_validator) {
    char buf[256], report[4096];
    pm_http_response r = svc_post(&srv, "/v1/networks?format=glb", TEE, NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "model/gltf-binary");
    cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, 1, report, sizeof report), 0, "%s", report);
    pm_http_response_free(&r);
    r = svc_post(&srv, "/v1/networks", TEE, "Accept: model/gltf+json");
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "model/gltf+json");
    cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, 0, report, sizeof report), 0, "%s", report);
    json_t *j = svc_json(&r);
    json_t *extras = json_object_get(json_array_get(json_object_get(j, "scenes"), 0), "extras");
    cr_assert_not_null(json_object_get(json_object_get(extras, "metadata"), "seams"), "metadata in scene.extras");
    json_decref(j);
    pm_http_response_free(&r);
}

Test(http_network, invalid_networks_are_422_with_pointers) {
    /* Parser: an unknown id, a self-loop, an unknown field, in one answer. */
    pm_http_response r = svc_post(&srv, "/v1/networks", "{\"nodes\": [{\"id\": 1, \"position\": [0, 0]},"
                              " {\"id\": 2, \"position\": [30, 0]}], \"edges\": [{\"from\": 1, \"to\": 3},"
                              " {\"from\": 2, \"to\": 2}], \"colour\": 1}", NULL);
    svc_expect_problem(&r, "/edges/0/to");
    svc_expect_problem(&r, "/edges/1/to");
    svc_expect_problem(&r, "/colour");
    pm_http_response_free(&r);
    /* Crossing edges: both named. */
    r = svc_post(&srv, "/v1/networks", "{\"nodes\": [{\"id\": 0, \"position\": [0, 0]}, {\"id\": 1, \"position\": [40, 40]},"
             " {\"id\": 2, \"position\": [0, 40]}, {\"id\": 3, \"position\": [40, 0]}],"
             " \"edges\": [{\"from\": 0, \"to\": 1}, {\"from\": 2, \"to\": 3}]}", NULL);
    svc_expect_problem(&r, "/edges/0");
    svc_expect_problem(&r, "/edges/1");
    pm_http_response_free(&r);
    /* Generator: two 7 m roads 6 m apart lie on each other (sidewalks
     * would be cut back; asphalt cannot be). */
    r = svc_post(&srv, "/v1/networks", "{\"nodes\": [{\"id\": 0, \"position\": [0, 0]},"
             " {\"id\": 1, \"position\": [40, 0]}, {\"id\": 2, \"position\": [0, 6]}, {\"id\": 3, \"position\": [40, 6]}],"
             " \"edges\": [{\"from\": 0, \"to\": 1}, {\"from\": 2, \"to\": 3}]}", NULL);
    svc_expect_problem(&r, "/edges/0");
    svc_expect_problem(&r, "/edges/1");
    cr_assert_not_null(strstr((const char *)r.body, "overlaps"), "%s", r.body);
    pm_http_response_free(&r);
}

Test(http_network, sidewalks_with_no_room_between_roads_are_cut_back_and_said_so) {
    /* Two T junctions 8 m apart, joined by a shortened road, whose north
     * roads' 2 m sidewalks would lie on each other: built without the two
     * between them, each stretch named in the warnings. */
    pm_http_response r = svc_post(&srv, "/v1/networks", "{\"sidewalk\": {\"width\": 2}, \"nodes\": [{\"id\": 0, \"position\": [0, 0]},"
             " {\"id\": 1, \"position\": [8, 0]}, {\"id\": 2, \"position\": [-40, 0]}, {\"id\": 3, \"position\": [0, 40]},"
             " {\"id\": 4, \"position\": [8, 40]}, {\"id\": 5, \"position\": [48, 0]}],"
             " \"edges\": [{\"from\": 0, \"to\": 1}, {\"from\": 0, \"to\": 2}, {\"from\": 0, \"to\": 3},"
             " {\"from\": 1, \"to\": 4}, {\"from\": 1, \"to\": 5}]}", NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    json_error_t err;
    json_t *doc = json_loadb((const char *)r.body, r.body_len, 0, &err);
    cr_assert_not_null(doc);
    json_t *w = json_object_get(json_object_get(doc, "metadata"), "warnings");
    size_t i, cut = 0;
    json_t *it;
    json_array_foreach(w, i, it) {
        const char *m = json_string_value(json_object_get(it, "message"));
        if (m && strstr(m, "would lie on another road, junction or sidewalk")) {
            cr_assert_str_eq(json_string_value(json_object_get(it, "code")), "sidewalk_interrupted");
            cut++;
        }
    }
    cr_assert_eq(cut, 2, "%s", r.body);
    json_decref(doc);
    pm_http_response_free(&r);
}

Test(http_network, get_is_405) {
    pm_http_response r;
    char buf[128];
    cr_assert_eq(pm_http_get(&srv, "/v1/networks", &r), 0);
    cr_assert_eq(r.status, 405);
    cr_assert_str_eq(svc_header(&r, "Allow", buf, sizeof buf), "POST, OPTIONS");
    pm_http_response_free(&r);
}

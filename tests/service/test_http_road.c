/* Black box: POST /v1/roads against the real binary. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc_fixtures.h"
#include "pm_test_overlap.h"
#include "pm_test_validator.h"

static pm_test_server srv;

static void start(void) {
    const char *args[] = {"--workers", "1", "--max-vertices", "200000", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
}
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_road, .init = start, .fini = stop);

/* The request of docs/road.md's curl example. */
#define ROAD_DOC_BODY                                                                             \
    "{\"points\": [[0,0,0],[60,0,25],[120,0,-15],[190,0,10]], \"width\": 8, \"shoulder\": 1.5,"    \
    " \"conform\": \"bank\", \"banking\": {\"max_degrees\": 6},"                                   \
    " \"terrain\": {\"origin\": [-30,-70], \"cell\": 2, \"cols\": 131, \"rows\": 71,"              \
    "   \"noise\": {\"seed\": 5, \"amplitude\": 12, \"wavelength\": 70}},"                         \
    " \"flatten\": {\"margin\": 1.5, \"falloff\": 10},"                                            \
    " \"props\": [{\"name\": \"guardrail\", \"spacing\": 4, \"offset\": 5.5, \"side\": \"both\"},"  \
    "   {\"name\": \"lamp\", \"spacing\": 30, \"offset\": 6.5, \"side\": \"left\", \"align\": \"terrain\"}]," \
    " \"lods\": [0.5, 2]}"

static const char *header(const pm_http_response *r, const char *name, char *buf, size_t cap) {
    const char *v = pm_http_header(r, name, buf, cap);
    cr_assert_not_null(v, "header %s missing", name);
    return v;
}

static int has_mesh(const json_t *doc, const char *name) {
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(doc, "meshes"), i, m) {
        if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0) return 1;
    }
    return 0;
}

Test(http_road, json_mesh_with_metadata_then_a_cache_hit) {
    pm_http_response r, r2;
    char a[128], b[128];
    cr_assert_eq(pm_http_post_json(&srv, "/v1/roads", ROAD_DOC_BODY, &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(header(&r, "Content-Type", a, sizeof a), "application/json");
    cr_assert_str_eq(header(&r, "X-Cache", a, sizeof a), "MISS");
    json_t *doc = svc_json(&r);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "generator")), "road");
    cr_assert_str_eq(json_string_value(json_object_get(doc, "version")), "1.6.0");
    const char *names[] = {"asphalt", "shoulder", "terrain", "asphalt_lod1", "shoulder_lod2"};
    for (int i = 0; i < 5; i++) cr_assert(has_mesh(doc, names[i]), "mesh %s", names[i]);
    json_t *md = json_object_get(doc, "metadata");
    cr_assert_gt(json_number_value(json_object_get(md, "length")), 190.0);
    cr_assert_leq(json_number_value(json_object_get(md, "max_chord_error")), 0.05);
    cr_assert(json_is_object(json_object_get(md, "edges")));
    json_t *terrain = json_object_get(md, "terrain");
    cr_assert(json_is_true(json_object_get(terrain, "flattened")));
    cr_assert_eq(json_array_size(json_object_get(terrain, "heights")), 131 * 71);
    cr_assert_eq(json_array_size(json_object_get(md, "lods")), 2);
    cr_assert_eq(json_array_size(json_object_get(doc, "instances")), 2);
    json_decref(doc);
    cr_assert_eq(pm_http_post_json(&srv, "/v1/roads", ROAD_DOC_BODY, &r2), 0);
    cr_assert_eq(r2.status, 200);
    cr_assert_str_eq(header(&r2, "X-Cache", b, sizeof b), "HIT");
    cr_assert_str_eq(header(&r, "ETag", a, sizeof a), header(&r2, "ETag", b, sizeof b));
    cr_assert_eq(r.body_len, r2.body_len);
    cr_assert_eq(memcmp(r.body, r2.body, r.body_len), 0);
    pm_http_response_free(&r);
    pm_http_response_free(&r2);
}

Test(http_road, glb_and_gltf_pass_the_validator) {
    const char *paths[] = {"/v1/roads?format=glb", "/v1/roads?format=gltf"};
    for (int k = 0; k < 2; k++) {
        pm_http_response r;
        char ct[64], report[4096];
        cr_assert_eq(pm_http_post_json(&srv, paths[k], ROAD_DOC_BODY, &r), 0);
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_str_eq(header(&r, "Content-Type", ct, sizeof ct), k ? "model/gltf+json" : "model/gltf-binary");
        cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, !k, report, sizeof report), 0, "%s", report);
        pm_http_response_free(&r);
    }
}

Test(http_road, canonical_form_gives_one_etag) {
    pm_http_response r1, r2;
    char a[128], b[128];
    pm_http_post_json(&srv, "/v1/roads", "{\"points\": [[0,0,0],[50,0,20],[100,0,0]]}", &r1);
    pm_http_post_json(&srv, "/v1/roads",
                      "{\"width\": 7.0, \"points\": [[0,0.0,0],[5e1,0,20],[100,0,0]], \"alpha\": 0.5,"
                      " \"terrain\": null, \"lods\": []}", &r2);
    cr_assert_eq(r1.status, 200, "%s", r1.body);
    cr_assert_eq(r2.status, 200, "%s", r2.body);
    cr_assert_str_eq(header(&r1, "ETag", a, sizeof a), header(&r2, "ETag", b, sizeof b));
    cr_assert_str_eq(header(&r2, "X-Cache", b, sizeof b), "HIT");
    pm_http_response_free(&r1);
    pm_http_response_free(&r2);
}

static void expect_problem(const char *body, long status, const char *pointer) {
    pm_http_response r;
    char ct[64];
    cr_assert_eq(pm_http_post_json(&srv, "/v1/roads", body, &r), 0);
    cr_assert_eq(r.status, status, "%s -> %ld %s", body, r.status, r.body);
    cr_assert_str_eq(header(&r, "Content-Type", ct, sizeof ct), "application/problem+json");
    json_t *j = svc_json(&r);
    int found = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(j, "errors"), i, e) {
        found |= strcmp(json_string_value(json_object_get(e, "pointer")), pointer) == 0;
    }
    cr_assert(found, "no error at %s in %s", pointer, r.body);
    json_decref(j);
    pm_http_response_free(&r);
}

Test(http_road, invalid_requests_are_422_with_pointers) {
    expect_problem("{\"points\": [[0,0,0]]}", 422, "/points");
    expect_problem("{\"points\": [[0,0,0],[0,0,0]]}", 422, "/points/1");
    expect_problem("{\"points\": [[0,0,0],[9,0,0]], \"width\": -2}", 422, "/width");
    expect_problem("{\"points\": [[0,0,0],[9,0,0]], \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2,"
                   " \"heights\": [1,2,3]}}", 422, "/terrain/heights");
    expect_problem("{\"points\": [[0,0,0],[9,0,0]], \"colour\": \"red\"}", 422, "/colour");
    /* The server's --max-vertices 200000: 2,000 km of 5 m chords. */
    expect_problem("{\"points\": [[0,0,0],[99000,0,0],[99000,0,99000]]}", 422, "/max_segment");
}

/* The README's hairpin: 8 m wide, apex radius 2.23 m, legs 12 m apart
 * (2 m clear of each other). */
#define README_HAIRPIN "{\"points\": [[0,0,0],[40,0,0],[46,0,6],[40,0,12],[0,0,12]], \"width\": 8}"

/* Plan triangles of every mesh of a JSON mesh document (oracle input). */
static ptri *json_plan_tris(json_t *doc, size_t *n) {
    size_t cap = 1, i;
    json_t *m;
    json_array_foreach(json_object_get(doc, "meshes"), i, m) cap += json_array_size(json_object_get(m, "indices")) / 3;
    ptri *t = malloc(cap * sizeof *t);
    *n = 0;
    json_array_foreach(json_object_get(doc, "meshes"), i, m) {
        json_t *pos = json_object_get(m, "positions"), *idx = json_object_get(m, "indices");
        for (size_t k = 0; k + 2 < json_array_size(idx); k += 3) {
            double q[3][2];
            for (int c = 0; c < 3; c++) {
                size_t v = (size_t)json_integer_value(json_array_get(idx, k + c));
                q[c][0] = (double)(float)json_number_value(json_array_get(pos, 3 * v));
                q[c][1] = (double)(float)json_number_value(json_array_get(pos, 3 * v + 2));
            }
            if (ptri_make(q[0], q[1], q[2], &t[*n])) (*n)++;
        }
    }
    return t;
}

Test(http_road, readme_hairpin_builds_its_inner_side_as_one_fan) {
    pm_http_response r;
    cr_assert_eq(pm_http_post_json(&srv, "/v1/roads", README_HAIRPIN, &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    json_t *doc = svc_json(&r);
    json_t *folds = json_object_get(json_object_get(doc, "metadata"), "folds");
    cr_assert_eq(json_array_size(folds), 1, "%s", json_dumps(folds, 0));
    json_t *f = json_array_get(folds, 0);
    cr_assert_str_eq(json_string_value(json_object_get(f, "side")), "right");
    cr_assert(json_is_true(json_object_get(f, "fan")));
    cr_assert_float_eq(json_number_value(json_object_get(f, "min_radius")), 2.227, 1e-3);
    /* The pivot: inside the turn, between the legs' inner shoulder edges. */
    json_t *at = json_object_get(f, "at");
    double ax = json_number_value(json_array_get(at, 0)), az = json_number_value(json_array_get(at, 2));
    cr_assert(ax > 38 && ax < 44 && fabs(az - 6.0) < 1.0, "pivot at (%g, %g)", ax, az);
    size_t nt;
    ptri *t = json_plan_tris(doc, &nt);
    cr_assert_gt(nt, 400);
    cr_assert_eq(ptri_count_overlaps(t, nt), 0, "no two triangles overlap in plan");
    free(t);
    json_decref(doc);
    pm_http_response_free(&r);
    const char *paths[] = {"/v1/roads?format=glb", "/v1/roads?format=gltf"};
    for (int k = 0; k < 2; k++) {
        char report[4096];
        cr_assert_eq(pm_http_post_json(&srv, paths[k], README_HAIRPIN, &r), 0);
        cr_assert_eq(r.status, 200, "%s", r.body);
        cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, !k, report, sizeof report), 0, "%s", report);
        pm_http_response_free(&r);
    }
}

Test(http_road, roads_lying_on_themselves_are_422_naming_their_points) {
    /* Legs 6 m apart on a 10 m road. */
    expect_problem("{\"points\": [[0,0,0],[40,0,0],[43,0,3],[40,0,6],[0,0,6]], \"width\": 10}", 422,
                   "/points/1");
    /* A loop crossing its own first leg. */
    expect_problem("{\"points\": [[0,0,0],[60,0,0],[60,0,30],[30,0,-30]], \"width\": 6}", 422,
                   "/points/1");
}

Test(http_road, get_is_405) {
    pm_http_response r;
    char allow[64];
    pm_http_get(&srv, "/v1/roads", &r);
    cr_assert_eq(r.status, 405);
    cr_assert_str_eq(header(&r, "Allow", allow, sizeof allow), "POST, OPTIONS");
    pm_http_response_free(&r);
}

/* Black box: POST /v1/networks with GeoJSON (application/geo+json) against
 * the real binary: the projection in the JSON mesh's metadata and in the
 * glTF's scene.extras, GLB and glTF through the validator, the cache (the
 * same GeoJSON written differently is a HIT), 422s with pointers into the
 * GeoJSON. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "svc_fixtures.h"
#include "pm_test_validator.h"

static pm_test_server srv;

static void start(void) { cr_assert_eq(pm_test_server_start(&srv, NULL), 0); }
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_network_geojson, .init = start, .fini = stop, .timeout = 120);

/* A T at (10, 50): a street with a bend east, one west, one north with sidewalks. */
#define TEE_GJ                                                                                    \
    "{\"type\": \"FeatureCollection\", \"origin\": [10, 50, 300], \"features\": ["                \
    "{\"type\": \"Feature\", \"properties\": {\"width\": 8},"                                     \
    " \"geometry\": {\"type\": \"LineString\", \"coordinates\": [[10, 50, 300], [10.0004, 50.00003, 301],"\
    " [10.0008, 50, 302]]}},"                                                                     \
    "{\"type\": \"Feature\", \"properties\": {\"name\": \"Weg\"},"                                 \
    " \"geometry\": {\"type\": \"LineString\", \"coordinates\": [[9.9992, 50, 300], [10, 50, 300]]}},"\
    "{\"type\": \"Feature\", \"properties\": {\"sidewalk\": true, \"width\": 6},"                 \
    " \"geometry\": {\"type\": \"LineString\", \"coordinates\": [[10, 50, 300], [10, 50.0005, 303]]}}]}"

static pm_http_response post_geo(const char *path, const char *body) {
    const char *h[] = {"Content-Type: application/geo+json", NULL};
    pm_http_request req = {.method = "POST", .path = path, .headers = h, .body = body};
    pm_http_response r;
    cr_assert_eq(pm_http(&srv, &req, &r), 0, "no response from %s", path);
    return r;
}

static void check_geo(json_t *geo) {
    cr_assert_not_null(geo);
    json_t *o = json_object_get(geo, "origin"), *p = json_object_get(geo, "projection");
    cr_assert_eq(json_number_value(json_object_get(o, "lon")), 10.0);
    cr_assert_eq(json_number_value(json_object_get(o, "lat")), 50.0);
    cr_assert_eq(json_number_value(json_object_get(o, "height")), 300.0);
    cr_assert_str_eq(json_string_value(json_object_get(p, "name")), "local_tangent_plane");
    json_t *axes = json_object_get(p, "axes");
    cr_assert_str_eq(json_string_value(json_object_get(axes, "z")), "south");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(p, "ellipsoid"), "name")), "WGS84");
    cr_assert_eq(json_array_size(json_object_get(geo, "edges")), 3);
}

Test(http_network_geojson, json_mesh_carries_the_projection_and_repeats_hit) {
    pm_http_response r = post_geo("/v1/networks", TEE_GJ);
    char buf[128], etag[128];
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "MISS");
    svc_header(&r, "ETag", etag, sizeof etag);
    json_t *j = svc_json(&r);
    json_t *meta = json_object_get(j, "metadata");
    check_geo(json_object_get(meta, "geo"));
    /* the north end: about 55.6 m north (-z), 3 m up, of the origin */
    json_t *nodes = json_object_get(meta, "nodes");
    bool seen = false;
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        json_t *n = json_array_get(nodes, i);
        if (strcmp(json_string_value(json_object_get(n, "id")), "/features/2/geometry/coordinates/1"))
            continue;
        json_t *pos = json_object_get(n, "position");
        cr_assert(fabs(json_number_value(json_array_get(pos, 0))) < 1e-6);
        cr_assert_float_eq(json_number_value(json_array_get(pos, 1)), 3.0, 0.01);
        cr_assert_float_eq(json_number_value(json_array_get(pos, 2)), -55.6, 0.1);
        seen = true;
    }
    cr_assert(seen, "no node for the north end");
    json_decref(j);
    pm_http_response_free(&r);
    /* the same GeoJSON, members reordered, foreign members added: a hit */
    r = post_geo("/v1/networks", "{\"features\": ["
        "{\"properties\": {\"width\": 8.0, \"highway\": \"primary\"}, \"type\": \"Feature\", \"id\": \"a\","
        " \"geometry\": {\"coordinates\": [[10, 50, 300], [10.0004, 50.00003, 301], [10.0008, 50, 302]],"
        " \"type\": \"LineString\"}},"
        "{\"type\": \"Feature\", \"properties\": {},"
        " \"geometry\": {\"type\": \"LineString\", \"coordinates\": [[9.9992, 50, 300], [10, 50, 300]]}},"
        "{\"type\": \"Feature\", \"properties\": {\"width\": 6e0, \"sidewalk\": true},"
        " \"geometry\": {\"type\": \"LineString\", \"coordinates\": [[10, 50, 300], [10, 50.0005, 303]]}}],"
        " \"origin\": [10.0, 50.0, 300.0], \"type\": \"FeatureCollection\"}");
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT");
    cr_assert_str_eq(svc_header(&r, "ETag", buf, sizeof buf), etag);
    pm_http_response_free(&r);
    /* summary metadata keeps the projection */
    r = post_geo("/v1/networks?metadata=summary", TEE_GJ);
    cr_assert_eq(r.status, 200, "%s", r.body);
    j = svc_json(&r);
    check_geo(json_object_get(json_object_get(j, "metadata"), "geo"));
    json_decref(j);
    pm_http_response_free(&r);
}

Test(http_network_geojson, glb_and_gltf_pass_the_validator_with_the_projection_in_extras) {
    char report[4096];
    pm_http_response r = post_geo("/v1/networks?format=glb", TEE_GJ);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, 1, report, sizeof report), 0, "%s", report);
    pm_http_response_free(&r);
    r = post_geo("/v1/networks?format=gltf", TEE_GJ);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, 0, report, sizeof report), 0, "%s", report);
    json_t *j = svc_json(&r);
    json_t *scene = json_array_get(json_object_get(j, "scenes"), 0);
    check_geo(json_object_get(json_object_get(json_object_get(scene, "extras"), "metadata"), "geo"));
    json_decref(j);
    pm_http_response_free(&r);
}

Test(http_network_geojson, bad_geojson_gets_pointers_into_it) {
    pm_http_response r = post_geo("/v1/networks", "{\"type\": \"FeatureCollection\", \"features\": ["
        "{\"type\": \"Feature\", \"properties\": {}, \"geometry\": {\"type\": \"LineString\","
        " \"coordinates\": [[10, 50], [10.001, 50]]}},"
        "{\"type\": \"Feature\", \"properties\": {\"width\": 0}, \"geometry\": {\"type\": \"LineString\","
        " \"coordinates\": [[10, 50], [10, 95]]}},"
        "{\"type\": \"Feature\", \"properties\": {}, \"geometry\": {\"type\": \"Polygon\","
        " \"coordinates\": [[[10, 50], [10.001, 50], [10, 50.001], [10, 50]]]}}], \"colour\": 1}");
    svc_expect_problem(&r, "/features/1/geometry/coordinates/1/1");
    svc_expect_problem(&r, "/features/2/geometry/type");
    svc_expect_problem(&r, "/colour");
    pm_http_response_free(&r);
    /* errors found on the derived network point back too */
    r = post_geo("/v1/networks", "{\"type\": \"FeatureCollection\", \"features\": ["
        "{\"type\": \"Feature\", \"properties\": {}, \"geometry\": {\"type\": \"LineString\","
        " \"coordinates\": [[10, 50], [10.001, 50]]}},"
        "{\"type\": \"Feature\", \"properties\": {\"width\": 0}, \"geometry\": {\"type\": \"LineString\","
        " \"coordinates\": [[10, 50], [10, 50.001]]}}]}");
    svc_expect_problem(&r, "/features/1/properties/width");
    pm_http_response_free(&r);
}

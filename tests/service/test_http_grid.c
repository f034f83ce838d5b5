/* Black box: GET and POST /v1/grids through the real binary. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "svc_fixtures.h"
#include "pm_test_validator.h"

static pm_test_server srv;

static void start(void) {
    const char *args[] = {"--max-grid-size", "40", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
}
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_grid, .init = start, .fini = stop, .timeout = 120);

static const char *hdr(const pm_http_response *r, const char *name) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    return pm_http_header(r, name, buf[k], sizeof buf[k]);
}

Test(http_grid, get_json_mesh_with_quads_and_quality) {
    pm_http_response r;
    cr_assert_eq(pm_http_get(&srv, "/v1/grids?seed=7&size=4", &r), 0);
    cr_assert_eq(r.status, 200, "status %ld: %.300s", r.status, r.body);
    cr_assert_str_eq(hdr(&r, "Content-Type"), "application/json");
    cr_assert_str_eq(hdr(&r, "X-Cache"), "MISS");
    json_t *j = svc_json(&r);
    cr_assert_str_eq(json_string_value(json_object_get(j, "generator")), "grid");
    cr_assert_str_eq(json_string_value(json_object_get(j, "version")), "1.0.0");
    json_t *mesh = json_array_get(json_object_get(j, "meshes"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(mesh, "material")), "grid");
    json_t *meta = json_object_get(j, "metadata");
    size_t nquads = json_array_size(json_object_get(meta, "quads"));
    size_t nverts = json_array_size(json_object_get(mesh, "positions")) / 3;
    cr_assert_gt(nquads, 100);
    cr_assert_eq(json_array_size(json_object_get(mesh, "indices")), 6 * nquads);
    cr_assert_eq(json_array_size(json_object_get(meta, "neighbors")), nverts);
    json_t *q = json_object_get(meta, "quality");
    cr_assert_eq(json_integer_value(json_object_get(q, "inverted_quads")), 0);
    cr_assert_geq(json_real_value(json_object_get(q, "p05_scaled_jacobian")), 0.8);
    json_decref(j);
    pm_http_response_free(&r);
}

/* GET with defaults and the equivalent POST are one request: same ETag, and
 * the second is a cache hit with the same bytes. */
Test(http_grid, get_and_post_share_the_cache_key) {
    pm_http_response g, p;
    cr_assert_eq(pm_http_get(&srv, "/v1/grids?seed=3&size=5&shape=disk", &g), 0);
    cr_assert_eq(g.status, 200);
    cr_assert_eq(pm_http_post_json(&srv, "/v1/grids",
                                   "{\"size\":5,\"shape\":\"disk\",\"seed\":3,\"points\":\"lattice\","
                                   "\"relax\":{\"mode\":\"square\"}}", &p), 0);
    cr_assert_eq(p.status, 200, "status %ld: %.300s", p.status, p.body);
    cr_assert_str_eq(hdr(&g, "ETag"), hdr(&p, "ETag"));
    cr_assert_str_eq(hdr(&p, "X-Cache"), "HIT");
    cr_assert_eq(g.body_len, p.body_len);
    cr_assert(memcmp(g.body, p.body, g.body_len) == 0);
    pm_http_response_free(&g);
    pm_http_response_free(&p);
}

Test(http_grid, glb_passes_the_validator) {
    const char *paths[] = {"/v1/grids?seed=1&size=6&format=glb",
                           "/v1/grids?seed=2&size=6&points=poisson&shape=square&format=glb"};
    for (int i = 0; i < 2; i++) {
        pm_http_response r;
        cr_assert_eq(pm_http_get(&srv, paths[i], &r), 0);
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(hdr(&r, "Content-Type"), "model/gltf-binary");
        cr_assert(r.body_len > 12 && memcmp(r.body, "glTF", 4) == 0);
        char report[2048];
        cr_assert_eq(pm_test_gltf_validate(r.body, r.body_len, 1, report, sizeof report), 0, "%s", report);
        pm_http_response_free(&r);
    }
}

/* 422 from server s with the pointer and message for field at pointer. */
static void expect_422_on(pm_test_server *s, const char *method_body, const char *path,
                          const char *pointer, const char *text) {
    pm_http_response r;
    if (method_body) cr_assert_eq(pm_http_post_json(s, path, method_body, &r), 0);
    else cr_assert_eq(pm_http_get(s, path, &r), 0);
    cr_assert_eq(r.status, 422, "%s %s: status %ld", path, method_body ? method_body : "",
                 r.status);
    cr_assert_str_eq(hdr(&r, "Content-Type"), "application/problem+json");
    json_t *j = svc_json(&r), *e;
    size_t i;
    bool found = false;
    json_array_foreach(json_object_get(j, "errors"), i, e) {
        if (strcmp(json_string_value(json_object_get(e, "pointer")), pointer) == 0) {
            found = true;
            cr_assert(strstr(json_string_value(json_object_get(e, "message")), text),
                      "%s: message %s", pointer, json_string_value(json_object_get(e, "message")));
        }
    }
    cr_assert(found, "no error at %s: %.300s", pointer, r.body);
    json_decref(j);
    pm_http_response_free(&r);
}
static void expect_422(const char *method_body, const char *path, const char *pointer,
                       const char *text) {
    expect_422_on(&srv, method_body, path, pointer, text);
}

Test(http_grid, bad_input_is_422) {
    expect_422(NULL, "/v1/grids?seed=1&size=41", "/size", "max_grid_size");
    expect_422(NULL, "/v1/grids?seed=1&size=0", "/size", ">= 1");
    expect_422(NULL, "/v1/grids?seed=1&size=big", "/size", "integer");
    expect_422(NULL, "/v1/grids?seed=1&colour=red", "/colour", "unknown");
    expect_422(NULL, "/v1/grids?seed=-4", "/seed", "");
    expect_422("{\"spacing\":0}", "/v1/grids", "/spacing", "");
    expect_422("{\"relax\":{\"iterations\":100000}}", "/v1/grids", "/relax/iterations", "1000");
    expect_422("{\"shape\":\"star\"}", "/v1/grids", "/shape", "");
    expect_422("{\"merge_min_angle\":120,\"merge_max_angle\":60}", "/v1/grids", "/merge_max_angle",
               "merge_min_angle");
}

/* Point-count limit below the size limit: the server's --max-points. */
Test(http_grid, point_limit_from_the_command_line) {
    pm_test_server small;
    const char *args[] = {"--max-points", "200", NULL};
    cr_assert_eq(pm_test_server_start(&small, args), 0);
    pm_http_response r;
    cr_assert_eq(pm_http_get(&small, "/v1/grids?seed=1&size=9", &r), 0);
    cr_assert_eq(r.status, 422);
    cr_assert(strstr((const char *)r.body, "max_points"), "%s", r.body);
    pm_http_response_free(&r);
    cr_assert_eq(pm_http_get(&small, "/v1/grids?seed=1&size=7", &r), 0);  /* 169 points */
    cr_assert_eq(r.status, 200);
    pm_http_response_free(&r);
    cr_assert_eq(pm_test_server_stop(&small), 0);
}

/* The sizes README.md (--max-grid-size) and docs/grid.md promise with the
 * server's default limits: the largest size of each shape and point set
 * builds (a GLB, not only a parsed request), the next one is a 422 at
 * /size naming max_points, and past max_grid_size (64) a 422 naming it. */
Test(http_grid, documented_largest_sizes_build_with_the_defaults) {
    static const struct { const char *shape, *points; int largest; } doc[] = {
        {"hexagon", "lattice", 57}, {"disk", "lattice", 57}, {"hexagon", "poisson", 54},
        {"disk", "poisson", 49},    {"square", "lattice", 45}, {"square", "poisson", 43},
    };
    pm_test_server dflt;
    cr_assert_eq(pm_test_server_start(&dflt, NULL), 0);
    for (size_t i = 0; i < sizeof doc / sizeof *doc; i++) {
        char path[160];
        snprintf(path, sizeof path, "/v1/grids?seed=1&shape=%s&points=%s&size=%d&format=glb&metadata=none",
                 doc[i].shape, doc[i].points, doc[i].largest);
        pm_http_response r;
        cr_assert_eq(pm_http_get(&dflt, path, &r), 0);
        cr_expect_eq(r.status, 200, "%s: status %ld: %.300s", path, r.status, r.body);
        cr_expect(r.body_len > 12 && memcmp(r.body, "glTF", 4) == 0, "%s", path);
        pm_http_response_free(&r);
        snprintf(path, sizeof path, "/v1/grids?seed=1&shape=%s&points=%s&size=%d", doc[i].shape,
                 doc[i].points, doc[i].largest + 1);
        expect_422_on(&dflt, NULL, path, "/size", "max_points");
    }
    expect_422_on(&dflt, NULL, "/v1/grids?seed=1&size=65", "/size", "max_grid_size");
    cr_assert_eq(pm_test_server_stop(&dflt), 0);
}

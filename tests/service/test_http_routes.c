/* Black box: routes, status codes, problem+json, request ids, CORS, the
 * access log, against the real binary. */
#include <jansson.h>

#include "pm_api/generator.h"

#include "svc_fixtures.h"

static pm_test_server srv;

static void start_default(void) { cr_assert_eq(pm_test_server_start(&srv, NULL), 0); }
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

/* Checks r is a problem document as DESIGN.md section 3 describes and
 * returns it (caller decrefs). */
static json_t *problem(const pm_http_response *r, long status) {
    char buf[256], rid[256];
    cr_assert_eq(r->status, status, "status %ld, body %s", r->status, r->body);
    cr_assert_str_eq(svc_header(r, "Content-Type", buf, sizeof buf), "application/problem+json");
    json_error_t err;
    json_t *j = json_loadb((const char *)r->body, r->body_len, 0, &err);
    cr_assert_not_null(j, "not JSON: %s", r->body);
    const char *type = json_string_value(json_object_get(j, "type"));
    cr_assert_not_null(type);
    cr_assert_eq(strncmp(type, "urn:procmesh:problem:", 21), 0, "type %s", type);
    cr_assert(json_is_string(json_object_get(j, "title")));
    cr_assert(json_is_string(json_object_get(j, "detail")));
    cr_assert_eq(json_integer_value(json_object_get(j, "status")), status);
    cr_assert_str_eq(json_string_value(json_object_get(j, "instance")),
                     svc_header(r, "X-Request-Id", rid, sizeof rid), "instance = request id");
    cr_assert_str_eq(svc_header(r, "Cache-Control", buf, sizeof buf), "no-store");
    return j;
}

static pm_http_response post(const char *path, const char *ctype, const char *body) {
    const char *h[] = {ctype, NULL};
    pm_http_request req = {.method = "POST", .path = path, .headers = ctype ? h : NULL,
                           .body = body};
    pm_http_response r;
    cr_assert_eq(pm_http(&srv, &req, &r), 0);
    return r;
}

TestSuite(http_routes, .init = start_default, .fini = stop);

Test(http_routes, healthz_readyz) {
    pm_http_response r;
    char buf[128];
    pm_http_get(&srv, "/healthz", &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq((char *)r.body, "{\"status\":\"ok\"}");
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "application/json");
    pm_http_response_free(&r);
    pm_http_get(&srv, "/readyz", &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq((char *)r.body, "{\"status\":\"ready\",\"tier\":\"none\"}");
    pm_http_response_free(&r);
    pm_http_request head = {.method = "HEAD", .path = "/healthz"};
    pm_http(&srv, &head, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_eq(r.body_len, 0);
    pm_http_response_free(&r);
}

Test(http_routes, openapi_is_the_contract_file) {
    pm_http_response r;
    char buf[128];
    pm_http_get(&srv, "/openapi.yaml", &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "application/yaml");
    FILE *f = fopen(PM_SOURCE_DIR "/api/openapi.yaml", "rb");
    cr_assert_not_null(f);
    static char file[1 << 20];
    size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    cr_assert_eq(r.body_len, n);
    cr_assert_eq(memcmp(r.body, file, n), 0);
    pm_http_response_free(&r);
}

Test(http_routes, metrics_count_requests_by_route_and_status) {
    pm_http_response r;
    for (int i = 0; i < 3; i++) {
        pm_http_get(&srv, "/healthz", &r);
        pm_http_response_free(&r);
    }
    pm_http_get(&srv, "/no/such/route", &r);
    pm_http_response_free(&r);
    /* The access line (and the count) is written once the response is out. */
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_http_requests_total{route=\"/healthz\",status=\"200\"}", 4), 4,
                 "3 + the start-up probe");
    cr_assert_eq(pm_test_metric(&srv, "procmesh_http_requests_total{route=\"unmatched\",status=\"404\"}"), 1);
    pm_http_get(&srv, "/metrics", &r);
    char buf[128];
    cr_assert_eq(r.status, 200);
    cr_assert_not_null(strstr(svc_header(&r, "Content-Type", buf, sizeof buf), "text/plain"));
    const char *names[] = {"procmesh_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"0.005\"}",
                           "procmesh_http_requests_in_flight ", "procmesh_cache_hits_total ",
                           "procmesh_cache_misses_total ", "procmesh_cache_evictions_total ",
                           "procmesh_cache_bytes ", "procmesh_cache_entries ",
                           "procmesh_cache_singleflight_joins_total ", "procmesh_queue_depth ",
                           "procmesh_workers_busy ", "procmesh_generations_total{generator=\""};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        cr_assert_not_null(strstr((char *)r.body, names[i]), "no %s", names[i]);
    pm_http_response_free(&r);
}

Test(http_routes, unknown_route_is_404) {
    pm_http_response r;
    pm_http_get(&srv, "/v2/junctions", &r);
    json_t *j = problem(&r, 404);
    cr_assert_not_null(strstr(json_string_value(json_object_get(j, "detail")), "/v2/junctions"));
    json_decref(j);
    pm_http_response_free(&r);
}

Test(http_routes, wrong_method_is_405_with_allow) {
    pm_http_response r;
    char buf[128];
    pm_http_request put = {.method = "PUT", .path = SVC_ROUTE};
    pm_http(&srv, &put, &r);
    json_decref(problem(&r, 405));
    cr_assert_str_eq(svc_header(&r, "Allow", buf, sizeof buf), "GET, HEAD, POST, OPTIONS");
    pm_http_response_free(&r);
    r = post("/healthz", "Content-Type: application/json", "{}");
    json_decref(problem(&r, 405));
    cr_assert_str_eq(svc_header(&r, "Allow", buf, sizeof buf), "GET, HEAD, OPTIONS");
    pm_http_response_free(&r);
    pm_http_request del = {.method = "DELETE", .path = SVC_ROUTE};
    pm_http(&srv, &del, &r);
    json_decref(problem(&r, 405));
    pm_http_response_free(&r);
}

Test(http_routes, a_post_that_is_not_json_is_415) {
    pm_http_response r = post(SVC_ROUTE, "Content-Type: text/plain", SVC_BODY);
    json_decref(problem(&r, 415));
    pm_http_response_free(&r);
    r = post(SVC_ROUTE, NULL, SVC_BODY);   /* curl sends form-urlencoded */
    json_decref(problem(&r, 415));
    pm_http_response_free(&r);
    r = post(SVC_ROUTE, "Content-Type: application/json; charset=utf-8", SVC_BODY);
    cr_assert_eq(r.status, 200);
    pm_http_response_free(&r);
}

Test(http_routes, an_unsatisfiable_accept_is_406) {
    const char *h[] = {"Content-Type: application/json", "Accept: text/html, image/*", NULL};
    pm_http_request req = {.method = "POST", .path = SVC_ROUTE, .headers = h, .body = SVC_BODY};
    pm_http_response r;
    pm_http(&srv, &req, &r);
    json_decref(problem(&r, 406));
    pm_http_response_free(&r);
}

Test(http_routes, format_and_accept_choose_the_encoding) {
    char buf[128];
    pm_http_response r = post(SVC_ROUTE "?format=glb", "Content-Type: application/json", SVC_BODY);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "model/gltf-binary");
    cr_assert_eq(memcmp(r.body, "glTF", 4), 0);
    pm_http_response_free(&r);
    const char *h[] = {"Content-Type: application/json", "Accept: model/gltf+json", NULL};
    pm_http_request req = {.method = "POST", .path = SVC_ROUTE, .headers = h, .body = SVC_BODY};
    pm_http(&srv, &req, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "model/gltf+json");
    json_t *g = json_loadb((const char *)r.body, r.body_len, 0, NULL);
    cr_assert_not_null(json_object_get(g, "asset"));
    json_decref(g);
    pm_http_response_free(&r);
    r = post(SVC_ROUTE, "Content-Type: application/json", SVC_BODY);
    cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "application/json");
    json_t *m = json_loadb((const char *)r.body, r.body_len, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(m, "generator")), SVC_GENERATOR);
    json_decref(m);
    pm_http_response_free(&r);
    r = post(SVC_ROUTE "?format=obj", "Content-Type: application/json", SVC_BODY);
    json_t *j = problem(&r, 422);
    json_t *e = json_array_get(json_object_get(j, "errors"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(e, "pointer")), "/format");
    json_decref(j);
    pm_http_response_free(&r);
}

Test(http_routes, get_and_head_share_the_post_entry) {
    char a[128], b[128], buf[128];
    pm_http_response p = post(SVC_ROUTE, "Content-Type: application/json", SVC_BODY);
    cr_assert_eq(p.status, 200);
    svc_header(&p, "ETag", a, sizeof a);
    pm_http_response g;
    pm_http_get(&srv, SVC_QUERY, &g);
    cr_assert_eq(g.status, 200);
    cr_assert_str_eq(svc_header(&g, "ETag", b, sizeof b), a, "one canonical form, one key");
    cr_assert_str_eq(svc_header(&g, "X-Cache", buf, sizeof buf), "HIT");
    cr_assert_eq(g.body_len, p.body_len);
    cr_assert_eq(memcmp(g.body, p.body, p.body_len), 0);
    pm_http_response_free(&g);
    pm_http_request head = {.method = "HEAD", .path = SVC_QUERY};
    pm_http(&srv, &head, &g);
    cr_assert_eq(g.status, 200);
    cr_assert_eq(g.body_len, 0);
    cr_assert_str_eq(svc_header(&g, "ETag", b, sizeof b), a);
    pm_http_response_free(&g);
    pm_http_get(&srv, SVC_ROUTE "?seed=42&colour=red", &g);
    json_t *j = problem(&g, 422);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "errors"), 0), "pointer")),
                     "/colour");
    json_decref(j);
    pm_http_response_free(&g);
    pm_http_response_free(&p);
}

Test(http_routes, every_generator_in_the_table_is_routed) {
    /* Nothing per generator in the service: each line of api/generators.c
     * is a route with the usual answers. */
    char buf[256];
    for (size_t i = 0; pm_api_generators[i]; i++) {
        const pm_api_generator *g = pm_api_generators[i];
        const char *allow = g->from_query ? "GET, HEAD, POST, OPTIONS" : "POST, OPTIONS";
        pm_http_request opt = {.method = "OPTIONS", .path = g->path};
        pm_http_response r;
        pm_http(&srv, &opt, &r);
        cr_assert_eq(r.status, 204, "%s", g->path);
        cr_assert_str_eq(svc_header(&r, "Allow", buf, sizeof buf), allow, "%s", g->path);
        pm_http_response_free(&r);
        r = post(g->path, "Content-Type: application/json", "{\"no_such_field\":1}");
        json_t *j = problem(&r, 422);
        int named = 0;
        json_t *errors = json_object_get(j, "errors");
        for (size_t k = 0; k < json_array_size(errors); k++)
            named |= strcmp(json_string_value(json_object_get(json_array_get(errors, k), "pointer")),
                            "/no_such_field") == 0;
        cr_assert(named, "%s: %s", g->path, r.body);
        json_decref(j);
        pm_http_response_free(&r);
        r = post(g->path, "Content-Type: application/json", "{");
        json_decref(problem(&r, 400));
        pm_http_response_free(&r);
        pm_http_request put = {.method = "PUT", .path = g->path};
        pm_http(&srv, &put, &r);
        json_decref(problem(&r, 405));
        cr_assert_str_eq(svc_header(&r, "Allow", buf, sizeof buf), allow);
        pm_http_response_free(&r);
    }
}

Test(http_routes, malformed_json_is_400_with_line_and_column) {
    pm_http_response r = post(SVC_ROUTE, "Content-Type: application/json", "{\"seed\": 1,\n  \"generate\": {\"count\": 3,}\n}");
    json_t *j = problem(&r, 400);
    const char *d = json_string_value(json_object_get(j, "detail"));
    cr_assert_not_null(strstr(d, "line 2"), "detail: %s", d);
    cr_assert_not_null(strstr(d, "column"), "detail: %s", d);
    json_decref(j);
    pm_http_response_free(&r);
    r = post(SVC_ROUTE, "Content-Type: application/json", "{\"seed\":1,\"seed\":2}");
    j = problem(&r, 400);
    cr_assert_not_null(strstr(json_string_value(json_object_get(j, "detail")), "seed"),
                       "a duplicate key is named");
    json_decref(j);
    pm_http_response_free(&r);
    r = post(SVC_ROUTE, "Content-Type: application/json", "");
    json_decref(problem(&r, 400));
    pm_http_response_free(&r);
}

Test(http_routes, invalid_parameters_are_422_with_pointers) {
    pm_http_response r = post(SVC_ROUTE, "Content-Type: application/json", SVC_BODY_INVALID);
    json_t *j = problem(&r, 422);
    json_t *errors = json_object_get(j, "errors");
    cr_assert_geq(json_array_size(errors), 2, "every bad field is listed: %s", r.body);
    int seed = 0, colour = 0;
    for (size_t i = 0; i < json_array_size(errors); i++) {
        const char *p = json_string_value(json_object_get(json_array_get(errors, i), "pointer"));
        cr_assert(json_is_string(json_object_get(json_array_get(errors, i), "message")));
        seed |= strcmp(p, "/seed") == 0;
        colour |= strcmp(p, "/colour") == 0;
    }
    cr_assert(seed && colour, "%s", r.body);
    json_decref(j);
    pm_http_response_free(&r);
    r = post(SVC_ROUTE, "Content-Type: application/json", "[1,2]");
    json_decref(problem(&r, 422));
    pm_http_response_free(&r);
}

Test(http_routes, request_ids_are_echoed_when_sane) {
    char buf[256];
    const char *h[] = {"X-Request-Id: trace-42.a:b_c", NULL};
    pm_http_request req = {.method = "GET", .path = "/healthz", .headers = h};
    pm_http_response r;
    pm_http(&srv, &req, &r);
    cr_assert_str_eq(svc_header(&r, "X-Request-Id", buf, sizeof buf), "trace-42.a:b_c");
    pm_http_response_free(&r);
    const char *bad[] = {"X-Request-Id: <script>", NULL};
    req.headers = bad;
    pm_http(&srv, &req, &r);
    svc_header(&r, "X-Request-Id", buf, sizeof buf);
    cr_assert_eq(strlen(buf), 36, "replaced by a UUID: %s", buf);
    cr_assert_eq(buf[14], '4');
    pm_http_response_free(&r);
    pm_http_get(&srv, "/nowhere", &r);
    cr_assert_eq(strlen(svc_header(&r, "X-Request-Id", buf, sizeof buf)), 36, "errors too");
    pm_http_response_free(&r);
}

Test(http_routes, one_json_access_line_per_request) {
    const char *h[] = {"X-Request-Id: access-line-test", "Content-Type: application/json", NULL};
    pm_http_request req = {.method = "POST", .path = SVC_ROUTE, .headers = h, .body = SVC_BODY};
    pm_http_response r;
    pm_http(&srv, &req, &r);
    size_t len = r.body_len;
    pm_http_response_free(&r);
    char *log = NULL;
    json_t *line = NULL;
    for (int tries = 0; tries < 200 && !line; tries++) {
        free(log);
        log = pm_test_server_log(&srv);
        for (char *l = log; l && *l;) {
            char *eol = strchr(l, '\n');
            if (!eol) break;
            json_t *j = json_loadb(l, (size_t)(eol - l), 0, NULL);
            cr_assert_not_null(j, "every log line is JSON: %.*s", (int)(eol - l), l);
            const char *rid = json_string_value(json_object_get(j, "request_id"));
            if (rid && strcmp(rid, "access-line-test") == 0) {
                cr_assert_null(line, "exactly one line for the request");
                line = j;
            } else {
                json_decref(j);
            }
            l = eol + 1;
        }
        if (!line) svc_sleep_ms(10);
    }
    free(log);
    cr_assert_not_null(line);
    cr_assert_str_eq(json_string_value(json_object_get(line, "msg")), "access");
    cr_assert_str_eq(json_string_value(json_object_get(line, "method")), "POST");
    cr_assert_str_eq(json_string_value(json_object_get(line, "path")), SVC_ROUTE);
    cr_assert_eq(json_integer_value(json_object_get(line, "status")), 200);
    cr_assert_eq((size_t)json_integer_value(json_object_get(line, "bytes")), len);
    cr_assert_str_eq(json_string_value(json_object_get(line, "cache")), "MISS");
    cr_assert(json_is_number(json_object_get(line, "duration_ms")));
    json_decref(line);
}

Test(http_routes, cors_preflight_and_exposed_headers) {
    char buf[256];
    const char *h[] = {"Origin: https://editor.example", "Access-Control-Request-Method: POST",
                       "Access-Control-Request-Headers: content-type", NULL};
    pm_http_request req = {.method = "OPTIONS", .path = SVC_ROUTE, .headers = h};
    pm_http_response r;
    pm_http(&srv, &req, &r);
    cr_assert_eq(r.status, 204);
    cr_assert_str_eq(svc_header(&r, "Access-Control-Allow-Origin", buf, sizeof buf), "*");
    cr_assert_str_eq(svc_header(&r, "Access-Control-Allow-Methods", buf, sizeof buf),
                     "GET, HEAD, POST, OPTIONS");
    cr_assert_not_null(strstr(svc_header(&r, "Access-Control-Allow-Headers", buf, sizeof buf), "Content-Type"));
    cr_assert_str_eq(svc_header(&r, "Access-Control-Max-Age", buf, sizeof buf), "86400");
    pm_http_response_free(&r);
    r = post(SVC_ROUTE, "Content-Type: application/json", SVC_BODY);
    svc_header(&r, "Access-Control-Expose-Headers", buf, sizeof buf);
    const char *exposed[] = {"ETag", "X-Cache", "X-Request-Id", "Server-Timing"};
    for (int i = 0; i < 4; i++) cr_assert_not_null(strstr(buf, exposed[i]), "%s", exposed[i]);
    pm_http_response_free(&r);
    req.path = "/nope";
    pm_http(&srv, &req, &r);
    cr_assert_eq(r.status, 404);
    pm_http_response_free(&r);
}

Test(http_routes_cors, a_configured_origin_list, .fini = stop) {
    const char *args[] = {"--cors-origin", "https://a.example, https://b.example", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char buf[256];
    const char *ok[] = {"Origin: https://b.example", NULL};
    pm_http_request req = {.method = "OPTIONS", .path = SVC_ROUTE, .headers = ok};
    pm_http_response r;
    pm_http(&srv, &req, &r);
    cr_assert_eq(r.status, 204);
    cr_assert_str_eq(svc_header(&r, "Access-Control-Allow-Origin", buf, sizeof buf), "https://b.example");
    cr_assert_not_null(strstr(svc_header(&r, "Vary", buf, sizeof buf), "Origin"));
    pm_http_response_free(&r);
    const char *no[] = {"Origin: https://evil.example", NULL};
    req.headers = no;
    pm_http(&srv, &req, &r);
    cr_assert_eq(r.status, 204);
    cr_assert_null(pm_http_header(&r, "Access-Control-Allow-Origin", buf, sizeof buf));
    pm_http_response_free(&r);
}

Test(http_routes_cors, cors_off, .fini = stop) {
    const char *env[] = {"PROCMESH_CORS_ORIGIN=", NULL};
    cr_assert_eq(pm_test_server_start_env(&srv, NULL, env), 0);
    char buf[64];
    pm_http_response r;
    pm_http_get(&srv, "/healthz", &r);
    cr_assert_null(pm_http_header(&r, "Access-Control-Allow-Origin", buf, sizeof buf));
    pm_http_response_free(&r);
}

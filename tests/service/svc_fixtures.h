/* Requests and helpers shared by the black-box service tests
 * (tests/service/test_http_*.c). The route under test is the first real
 * generator, POST /v1/junctions; everything generator-specific is here. */
#ifndef SVC_FIXTURES_H
#define SVC_FIXTURES_H
#include <criterion/criterion.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pm_test_raw.h"
#include "pm_test_server.h"

#define SVC_ROUTE "/v1/dungeons"
#define SVC_GENERATOR "dungeon"

/* A small valid request. */
#define SVC_BODY "{\"seed\":42,\"generate\":{\"count\":12,\"extent\":[64,64]}}"
/* The same request: other key order, other number spellings. */
#define SVC_BODY_REORDERED \
    "{ \"generate\" : {\"extent\":[64.0,6.4e1],\"count\":1.2e1},\n  \"seed\":42.0 }"
/* The same request with defaults stated explicitly. */
#define SVC_BODY_EXPLICIT_DEFAULT \
    "{\"seed\":42,\"generate\":{\"count\":12,\"extent\":[64,64],\"floors\":1,\"spacing\":2}," \
    "\"loops\":0,\"obstacles\":\"detour\"}"
/* The same request as a GET query (same route, same canonical form). */
#define SVC_QUERY SVC_ROUTE "?seed=42&count=12&extent=64x64"
/* Valid JSON the generator refuses: 422 naming /seed, /generate/count and
 * the unknown /colour. */
#define SVC_BODY_INVALID "{\"seed\":-1,\"generate\":{\"count\":0},\"colour\":\"red\"}"

/* Flags that let a test ask for heavy jobs (more rooms than the default
 * limit allows, and the memory they take: some 300 MiB each, counted as
 * the arena reserves it). */
#define SVC_HEAVY_FLAGS "--max-rooms", "3000", "--max-job-mb", "1024", "--max-inflight-mb", "8192"

/* A request that keeps a worker busy for a while, a few hundred ms to a
 * second on one core: 3000 rooms on four 1024 x 1024 floors in an optimized
 * build, a tenth of that work when the server is built with sanitizers or
 * without optimization (the test is compiled with the same flags), encoded
 * as GLB. variant makes distinct requests (distinct cache keys). Needs
 * SVC_HEAVY_FLAGS. */
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
#define SVC__SLOW "{\"seed\":%d,\"generate\":{\"count\":500,\"extent\":[512,512],\"floors\":2}}"
#else
#define SVC__SLOW "{\"seed\":%d,\"generate\":{\"count\":3000,\"extent\":[1024,1024],\"floors\":4}}"
#endif
static inline void svc_slow_body(char *buf, size_t cap, int variant) {
    snprintf(buf, cap, SVC__SLOW, 1000 + variant);
}
#define SVC_SLOW_PATH SVC_ROUTE "?format=glb"

static inline void svc_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline double svc_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls a /metrics series until it reaches at least want (or 10 s pass). */
static inline double svc_wait_metric(const pm_test_server *s, const char *series, double want) {
    double v = -1, give_up = svc_now() + 10;
    while ((v = pm_test_metric(s, series)) < want && svc_now() < give_up) svc_sleep_ms(5);
    return v;
}

/* Polls a /metrics series until it is at most want (or 10 s pass). */
static inline double svc_wait_metric_below(const pm_test_server *s, const char *series,
                                           double want) {
    double v = -1, give_up = svc_now() + 10;
    while (((v = pm_test_metric(s, series)) > want || v < 0) && svc_now() < give_up)
        svc_sleep_ms(5);
    return v;
}

/* A request run on its own thread (for concurrency tests). */
typedef struct svc_call {
    const pm_test_server *s;
    const char *path;
    char body[512];
    const char *const *headers;
    pm_http_response r;
    pthread_t t;
} svc_call;

static inline void *svc__call_run(void *arg) {
    svc_call *c = arg;
    const char *json[] = {"Content-Type: application/json", NULL};
    pm_http_request req = {.method = "POST", .path = c->path, .headers = c->headers ? c->headers : json,
                           .body = c->body, .timeout_ms = 60000};
    pm_http(c->s, &req, &c->r);
    return NULL;
}

/* headers: "Name: value" lines, NULL-terminated (NULL: JSON's Content-Type). */
static inline void svc_call_start_with(svc_call *c, const pm_test_server *s, const char *path,
                                       const char *body, const char *const *headers) {
    memset(c, 0, sizeof *c);
    c->s = s;
    c->path = path;
    c->headers = headers;
    snprintf(c->body, sizeof c->body, "%s", body);
    pthread_create(&c->t, NULL, svc__call_run, c);
}

static inline void svc_call_start(svc_call *c, const pm_test_server *s, const char *path,
                                  const char *body) {
    svc_call_start_with(c, s, path, body, NULL);
}

static inline void svc_call_join(svc_call *c) { pthread_join(c->t, NULL); }

/* The value of header name, or "" (a static buffer per call site is
 * avoided: the caller passes buf). */
static inline const char *svc_header(const pm_http_response *r, const char *name, char *buf,
                                     size_t cap) {
    const char *v = pm_http_header(r, name, buf, cap);
    return v ? v : "";
}

/* POST body as application/json, plus one extra header line (or NULL);
 * fails the test when no response arrives. */
static inline pm_http_response svc_post(const pm_test_server *s, const char *path,
                                        const char *body, const char *extra) {
    const char *h[] = {"Content-Type: application/json", extra, NULL};
    pm_http_request req = {.method = "POST", .path = path, .headers = h, .body = body};
    pm_http_response r;
    cr_assert_eq(pm_http(s, &req, &r), 0, "no response from %s", path);
    return r;
}

/* The response body as JSON (fails the test when it is not). */
static inline json_t *svc_json(const pm_http_response *r) {
    json_error_t e;
    json_t *j = json_loadb((const char *)r->body, r->body_len, 0, &e);
    cr_assert_not_null(j, "not JSON (%s): %.200s", e.text, r->body);
    return j;
}

/* Fails the test unless r is a 422 problem+json with an error at pointer. */
static inline void svc_expect_problem(const pm_http_response *r, const char *pointer) {
    char buf[256];
    cr_assert_eq(r->status, 422, "%s", r->body);
    cr_assert_str_eq(svc_header(r, "Content-Type", buf, sizeof buf), "application/problem+json");
    json_t *j = svc_json(r);
    cr_assert_eq(json_integer_value(json_object_get(j, "status")), 422);
    json_t *errs = json_object_get(j, "errors");
    int found = 0;
    for (size_t i = 0; i < json_array_size(errs) && !found; i++) {
        const char *p = json_string_value(json_object_get(json_array_get(errs, i), "pointer"));
        found = p && strcmp(p, pointer) == 0;
    }
    cr_assert(found, "no error at %s in %s", pointer, r->body);
    json_decref(j);
}
/* Fails the test unless r (a raw-socket answer) is status as problem+json
 * of that status with a detail, CORS headers and a request id, came within
 * within_s, and the server closed the connection after it. The problem's
 * type (after urn:procmesh:problem:) and detail go to type and detail
 * (cap bytes each). */
static inline void svc_expect_raw_problem(const char *what, const pm_raw_reply *r, long status,
                                          double within_s, char *type, char *detail, size_t cap) {
    cr_assert_eq(r->status, status, "%s: %ld, not %ld: %.300s", what, r->status, status, r->text);
    cr_assert_lt(r->seconds, within_s, "%s: answered after %.2f s", what, r->seconds);
    char buf[256];
    cr_assert_str_eq(pm_raw_header(r, "Content-Type", buf, sizeof buf) ? buf : "",
                     "application/problem+json", "%s: %.300s", what, r->text);
    cr_assert_str_eq(pm_raw_header(r, "Access-Control-Allow-Origin", buf, sizeof buf) ? buf : "",
                     "*", "%s: no CORS header", what);
    cr_assert_not_null(pm_raw_header(r, "X-Request-Id", buf, sizeof buf), "%s", what);
    json_error_t e;
    json_t *j = json_loads(pm_raw_body(r), 0, &e);
    cr_assert_not_null(j, "%s: body is not one JSON document: %s", what, pm_raw_body(r));
    cr_assert_eq(json_integer_value(json_object_get(j, "status")), status, "%s", what);
    const char *t = json_string_value(json_object_get(j, "type"));
    const char *d = json_string_value(json_object_get(j, "detail"));
    cr_assert(t && d, "%s: no type or detail: %s", what, pm_raw_body(r));
    snprintf(type, cap, "%s", strncmp(t, "urn:procmesh:problem:", 21) == 0 ? t + 21 : t);
    snprintf(detail, cap, "%s", d);
    json_decref(j);
    cr_assert(r->closed, "%s: the connection must close", what);
}
#endif

/* Black box: body limits, the bounded queue, deadlines, and the listener
 * staying responsive while every worker is busy. */
#include <jansson.h>

#include "svc_fixtures.h"

static pm_test_server srv;

static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

static const char *problem_detail(const pm_http_response *r, char *buf, size_t cap) {
    json_t *j = json_loadb((const char *)r->body, r->body_len, 0, NULL);
    snprintf(buf, cap, "%s", j ? json_string_value(json_object_get(j, "detail")) : "");
    json_decref(j);
    return buf;
}

/* A valid request padded with blanks to len bytes. */
static char *padded_body(size_t len) {
    char *b = malloc(len + 1);
    size_t n = strlen(SVC_BODY);
    memset(b, ' ', len);
    memcpy(b + len - n, SVC_BODY, n);
    b[len] = '\0';
    return b;
}

Test(http_limits, body_over_the_limit_is_413, .fini = stop) {
    const char *args[] = {"--body-limit", "16K", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char *big = padded_body(40000);
    const char *h[] = {"Content-Type: application/json", NULL};
    char buf[256];
    for (int chunked = 0; chunked <= 1; chunked++) {
        pm_http_request req = {.method = "POST", .path = SVC_ROUTE, .headers = h, .body = big,
                               .chunked = chunked};
        pm_http_response r;
        pm_http(&srv, &req, &r);
        cr_assert_eq(r.status, 413, "chunked=%d: %ld", chunked, r.status);
        cr_assert_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf), "application/problem+json");
        cr_assert_not_null(strstr(problem_detail(&r, buf, sizeof buf), "16384"), "%s", buf);
        cr_assert_eq(strlen(svc_header(&r, "X-Request-Id", buf, sizeof buf)), 36);
        pm_http_response_free(&r);
    }
    free(big);
    /* Within the limit both ways work, and the server is still fine. */
    char *ok = padded_body(12000);
    for (int chunked = 0; chunked <= 1; chunked++) {
        pm_http_request req = {.method = "POST", .path = SVC_ROUTE, .headers = h, .body = ok,
                               .chunked = chunked};
        pm_http_response r;
        pm_http(&srv, &req, &r);
        cr_assert_eq(r.status, 200, "chunked=%d: %ld %s", chunked, r.status, r.body);
        pm_http_response_free(&r);
    }
    free(ok);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_http_requests_total{route=\"" SVC_ROUTE "\",status=\"413\"}"), 2);
}

Test(http_limits, large_bodies_are_parsed_by_a_worker, .fini = stop) {
    const char *args[] = {"--body-limit", "1M", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char *b = padded_body(300000);
    char buf[64];
    pm_http_response r;
    cr_assert_eq(pm_http_post_json(&srv, SVC_ROUTE, b, &r), 0);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "MISS");
    pm_http_response_free(&r);
    pm_http_post_json(&srv, SVC_ROUTE, b, &r);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT");
    pm_http_response_free(&r);
    pm_http_post_json(&srv, SVC_ROUTE, SVC_BODY, &r);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT", "same key as unpadded");
    pm_http_response_free(&r);
    b[0] = '[';   /* and the errors of that path are the usual ones */
    pm_http_post_json(&srv, SVC_ROUTE, b, &r);
    cr_assert_eq(r.status, 400);
    pm_http_response_free(&r);
    free(b);
}

Test(http_limits, a_full_queue_is_503_with_retry_after, .fini = stop) {
    const char *args[] = {"--workers", "1", "--queue", "1", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char body[512];
    svc_call a, b;
    svc_slow_body(body, sizeof body, 1500, 1);
    svc_call_start(&a, &srv, SVC_ROUTE, body);
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_workers_busy", 1), 1);
    svc_slow_body(body, sizeof body, 1500, 2);
    svc_call_start(&b, &srv, SVC_ROUTE, body);
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_queue_depth", 1), 1);
    svc_slow_body(body, sizeof body, 1500, 3);
    pm_http_response r;
    pm_http_post_json(&srv, SVC_ROUTE, body, &r);
    char buf[256];
    cr_assert_eq(r.status, 503);
    cr_assert_str_eq(svc_header(&r, "Retry-After", buf, sizeof buf), "1");
    cr_assert_not_null(strstr(problem_detail(&r, buf, sizeof buf), "queue"), "%s", buf);
    pm_http_response_free(&r);
    /* A cached answer still comes while the pool is full. */
    svc_call_join(&a);
    svc_call_join(&b);
    cr_assert_eq(a.r.status, 200);
    cr_assert_eq(b.r.status, 200);
    pm_http_response_free(&a.r);
    pm_http_response_free(&b.r);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_queue_rejections_total"), 1);
}

Test(http_limits, past_the_deadline_is_503, .fini = stop) {
    const char *args[] = {"--deadline-ms", "300", "--workers", "1", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char body[512], buf[256];
    svc_slow_body(body, sizeof body, 5000, 1);
    double t0 = svc_now();
    pm_http_response r;
    pm_http_post_json(&srv, SVC_ROUTE, body, &r);
    double took = svc_now() - t0;
    cr_assert_eq(r.status, 503);
    cr_assert_str_eq(svc_header(&r, "Retry-After", buf, sizeof buf), "1");
    cr_assert_not_null(strstr(problem_detail(&r, buf, sizeof buf), "deadline"), "%s", buf);
    cr_assert_geq(took, 0.29);
    cr_assert_lt(took, 2.5, "answered at the deadline, not when the job ends (%.2f s)", took);
    pm_http_response_free(&r);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_deadline_exceeded_total"), 1);
    /* The cancelled job frees its worker: the next request is served. */
    cr_assert_eq(pm_http_post_json(&srv, SVC_ROUTE, SVC_BODY, &r), 0);
    cr_assert_eq(r.status, 200);
    pm_http_response_free(&r);
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_generations_total{generator=\"junction\",result=\"cancelled\"}", 1), 1);
}

Test(http_limits, health_and_hits_are_served_while_every_worker_is_busy, .fini = stop) {
    const char *args[] = {"--workers", "1", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    pm_http_response r;
    pm_http_post_json(&srv, SVC_ROUTE, SVC_BODY, &r);   /* cached for later */
    pm_http_response_free(&r);
    char body[512], buf[64];
    svc_call slow;
    svc_slow_body(body, sizeof body, 2000, 1);
    svc_call_start(&slow, &srv, SVC_ROUTE, body);
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_workers_busy", 1), 1);
    for (int i = 0; i < 20; i++) {
        pm_http_get(&srv, "/healthz", &r);
        cr_assert_eq(r.status, 200);
        cr_assert_lt(r.seconds, 0.5, "healthz took %.3f s", r.seconds);
        pm_http_response_free(&r);
    }
    pm_http_post_json(&srv, SVC_ROUTE, SVC_BODY, &r);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT");
    cr_assert_lt(r.seconds, 0.5);
    pm_http_response_free(&r);
    pm_http_get(&srv, "/metrics", &r);
    cr_assert_eq(r.status, 200);
    pm_http_response_free(&r);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_workers_busy"), 1, "the slow job still runs");
    svc_call_join(&slow);
    cr_assert_eq(slow.r.status, 200);
    pm_http_response_free(&slow.r);
}

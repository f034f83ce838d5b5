/* Black box: body limits, the bounded queue, deadlines, and the listener
 * staying responsive while every worker is busy. */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* Streams chunks to path on a raw socket without ever ending the body;
 * returns how many body bytes went out before the first response bytes came
 * back (-1 if none came), with the status line in line. */
static long endless_chunked(int port, const char *path, char *line, size_t cap) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char head[256];
    int n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n", path);
    cr_assert_eq(send(fd, head, (size_t)n, MSG_NOSIGNAL), n);
    static char chunk[4096 + 16];
    n = snprintf(chunk, sizeof chunk, "1000\r\n");
    memset(chunk + n, ' ', 4096);
    memcpy(chunk + n + 4096, "\r\n", 2);
    size_t clen = (size_t)n + 4098;
    long sent = 0, at = -1;
    line[0] = '\0';
    for (int i = 0; i < 1024 && at < 0; i++) {   /* at most 4 MiB */
        if (send(fd, chunk, clen, MSG_NOSIGNAL) <= 0) break;
        sent += 4096;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5) == 1) at = sent;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (at < 0 && poll(&p, 1, 2000) == 1) at = sent;
    char buf[512];
    ssize_t got = at >= 0 ? recv(fd, buf, sizeof buf - 1, 0) : -1;
    if (got > 0) {
        buf[got] = '\0';
        snprintf(line, cap, "%.*s", (int)strcspn(buf, "\r"), buf);
    }
    close(fd);
    return at;
}

Test(http_limits, an_endless_chunked_body_is_answered_early, .fini = stop) {
    const char *args[] = {"--body-limit", "16K", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char line[128];
    long at = endless_chunked(srv.port, SVC_ROUTE, line, sizeof line);
    cr_assert_str_eq(line, "HTTP/1.1 413 Content Too Large");
    cr_assert_geq(at, 16384);
    cr_assert_lt(at, 1 << 20, "answered while the body still came (after %ld bytes)", at);
    /* Also when the answer was known from the headers (no such route). */
    at = endless_chunked(srv.port, "/no/such/route", line, sizeof line);
    cr_assert_str_eq(line, "HTTP/1.1 404 Not Found");
    cr_assert_lt(at, 1 << 20);
    pm_http_response r;
    pm_http_get(&srv, "/healthz", &r);
    cr_assert_eq(r.status, 200, "and the server carries on");
    pm_http_response_free(&r);
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
    /* One worker, one waiting slot, five distinct heavy jobs at once: two
     * are taken, the others are refused at once with 503 + Retry-After. */
    enum { N = 5 };
    const char *args[] = {"--workers", "1", "--queue", "1", "--deadline-ms", "300000",
                          SVC_HEAVY_FLAGS, NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    svc_call c[N];
    char body[512], buf[256];
    for (int i = 0; i < N; i++) {
        svc_slow_body(body, sizeof body, i);
        svc_call_start(&c[i], &srv, SVC_SLOW_PATH, body);
    }
    int ok = 0, full = 0;
    for (int i = 0; i < N; i++) {
        svc_call_join(&c[i]);
        if (c[i].r.status == 200) ok++;
        if (c[i].r.status == 503) {
            full++;
            cr_assert_str_eq(svc_header(&c[i].r, "Retry-After", buf, sizeof buf), "1");
            cr_assert_not_null(strstr(problem_detail(&c[i].r, buf, sizeof buf), "queue"), "%s", buf);
            cr_assert_lt(c[i].r.seconds, 0.25, "refused at once, not after waiting");
        }
        pm_http_response_free(&c[i].r);
    }
    cr_assert_eq(ok + full, N);
    cr_assert_geq(ok, 2, "the running job and the queued one");
    cr_assert_geq(full, 1);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_queue_rejections_total"), full);
}

Test(http_limits, past_the_deadline_is_503, .fini = stop) {
    /* Two heavy jobs on one worker with a short deadline: the first is
     * cancelled at its deadline, the second expires while still queued.
     * Both are answered at the deadline, not when a job ends. */
    const char *args[] = {"--deadline-ms", "150", "--workers", "1", SVC_HEAVY_FLAGS, NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char body[512], buf[256];
    svc_call c[2];
    for (int i = 0; i < 2; i++) {
        svc_slow_body(body, sizeof body, i);
        svc_call_start(&c[i], &srv, SVC_SLOW_PATH, body);
    }
    for (int i = 0; i < 2; i++) {
        svc_call_join(&c[i]);
        cr_assert_eq(c[i].r.status, 503, "call %d: %ld", i, c[i].r.status);
        cr_assert_str_eq(svc_header(&c[i].r, "Retry-After", buf, sizeof buf), "1");
        cr_assert_not_null(strstr(problem_detail(&c[i].r, buf, sizeof buf), "deadline"), "%s", buf);
        cr_assert_geq(c[i].r.seconds, 0.14);
        cr_assert_lt(c[i].r.seconds, 2.0, "took %.2f s", c[i].r.seconds);
        pm_http_response_free(&c[i].r);
    }
    cr_assert_eq(pm_test_metric(&srv, "procmesh_deadline_exceeded_total"), 2);
    /* The cancelled job frees its worker promptly; then a small request
     * is served. */
    cr_assert_eq(svc_wait_metric_below(&srv, "procmesh_workers_busy", 0), 0);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_queue_depth"), 0);
    pm_http_response r;
    cr_assert_eq(pm_http_post_json(&srv, SVC_ROUTE, SVC_BODY, &r), 0);
    cr_assert_eq(r.status, 200);
    pm_http_response_free(&r);
    /* The first job ran (its generator saw the cancel flag, or finished
     * first: either way it ended); the second expired in the queue (or, if
     * the worker took it in the same instant, was cancelled at once). */
    double cancelled = pm_test_metric(&srv, "procmesh_generations_total{generator=\"" SVC_GENERATOR "\",result=\"cancelled\"}");
    double ok = pm_test_metric(&srv, "procmesh_generations_total{generator=\"" SVC_GENERATOR "\",result=\"ok\"}");
    cr_assert(cancelled + ok >= 2 && cancelled + ok <= 3, "%g cancelled + %g ok", cancelled, ok);
}

Test(http_limits, health_and_hits_are_served_while_every_worker_is_busy, .fini = stop) {
    /* A deadline long enough for every heavy job even on a loaded host. */
    const char *args[] = {"--workers", "1", "--deadline-ms", "300000", SVC_HEAVY_FLAGS, NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    pm_http_response r;
    pm_http_post_json(&srv, SVC_ROUTE, SVC_BODY, &r);   /* cached for later */
    pm_http_response_free(&r);
    /* Keep the worker busy: heavy jobs one after another. */
    enum { N = 4 };
    svc_call slow[N];
    char body[512], buf[64];
    for (int i = 0; i < N; i++) {
        svc_slow_body(body, sizeof body, i);
        svc_call_start(&slow[i], &srv, SVC_SLOW_PATH, body);
    }
    cr_assert_eq(svc_wait_metric(&srv, "procmesh_workers_busy", 1), 1);
    /* and the others waiting behind it (their requests may still be on the
     * way: hits are answered faster than they arrive) */
    cr_assert_geq(svc_wait_metric(&srv, "procmesh_queue_depth", N - 1), N - 1);
    double worst = 0;
    for (int i = 0; i < 10; i++) {
        pm_http_get(&srv, "/healthz", &r);
        cr_assert_eq(r.status, 200);
        worst = r.seconds > worst ? r.seconds : worst;
        pm_http_response_free(&r);
        pm_http_post_json(&srv, SVC_ROUTE, SVC_BODY, &r);
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT");
        worst = r.seconds > worst ? r.seconds : worst;
        pm_http_response_free(&r);
    }
    double busy = pm_test_metric(&srv, "procmesh_workers_busy");
    double queued = pm_test_metric(&srv, "procmesh_queue_depth");
    cr_assert_eq(busy, 1, "still generating while health and hits were answered");
    cr_assert_geq(queued, 1);
    cr_assert_lt(worst, 0.25, "slowest health / hit answer: %.3f s", worst);
    for (int i = 0; i < N; i++) {
        svc_call_join(&slow[i]);
        cr_assert_eq(slow[i].r.status, 200);
        pm_http_response_free(&slow[i].r);
    }
}

/* Black box, raw sockets: strict HTTP/1.1 framing. Requests libmicrohttpd
 * 0.9.75 would take leniently (two Content-Length headers, a
 * Transfer-Encoding it cannot decode, %00 in the path, HTTP/1.1 without
 * Host) are refused at once with problem+json and CORS headers; a head or a
 * body that stops short gets a 408 after its (here short) deadline. */
#include <unistd.h>

#include "svc_fixtures.h"

static pm_test_server srv;

static void start(void) {
    const char *args[] = {"--header-timeout-ms", "400", "--body-timeout-ms", "400", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
}

static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_strict, .init = start, .fini = stop, .timeout = 60);

/* Sends req on a fresh connection; the answer must be status with a
 * problem+json body of that status and CORS headers, within within_s. */
static void expect_problem(const char *what, const char *req, long status, double within_s) {
    pm_raw_reply r;
    pm_raw_exchange(srv.port, req, strlen(req), 3000, &r);
    char type[256], detail[256];
    svc_expect_raw_problem(what, &r, status, within_s, type, detail, sizeof type);
}

static void alive(void) {
    pm_http_response h;
    cr_assert_eq(pm_http_get(&srv, "/healthz", &h), 0);
    cr_assert_eq(h.status, 200);
    pm_http_response_free(&h);
}

#define POST_HEAD "POST " SVC_ROUTE " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"

Test(http_strict, two_content_lengths_are_400) {
    expect_problem("conflicting", POST_HEAD "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}", 400, 1);
    expect_problem("repeated", POST_HEAD "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400, 1);
    expect_problem("with Transfer-Encoding",
                   POST_HEAD "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                   400, 1);
    alive();
}

Test(http_strict, unsupported_transfer_encoding_is_501_at_once) {
    expect_problem("gzip, chunked", POST_HEAD "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                   501, 1);
    expect_problem("identity", POST_HEAD "Transfer-Encoding: identity\r\n\r\n{}", 501, 1);
    expect_problem("chunked twice",
                   POST_HEAD "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                   501, 1);
    /* Plain chunked still works. */
    pm_raw_reply r;
    const char *ok = POST_HEAD "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                               "34\r\n" SVC_BODY "\r\n0\r\n\r\n";
    cr_assert_eq(strlen(SVC_BODY), 0x34);
    pm_raw_exchange(srv.port, ok, strlen(ok), 10000, &r);
    cr_assert_eq(r.status, 200, "%.300s", r.text);
}

Test(http_strict, control_bytes_in_the_path_are_400) {
    expect_problem("%00", "GET " SVC_ROUTE "%00 HTTP/1.1\r\nHost: x\r\n\r\n", 400, 1);
    expect_problem("%00 before a query", "GET " SVC_ROUTE "%00?seed=1 HTTP/1.1\r\nHost: x\r\n\r\n", 400, 1);
    expect_problem("%0a", "GET /healthz%0a HTTP/1.1\r\nHost: x\r\n\r\n", 400, 1);
    expect_problem("%1F", "GET /healthz%1F HTTP/1.1\r\nHost: x\r\n\r\n", 400, 1);
    expect_problem("%7f", "GET /healthz%7f HTTP/1.1\r\nHost: x\r\n\r\n", 400, 1);
    expect_problem("raw tab", "GET /heal\tthz HTTP/1.1\r\nHost: x\r\n\r\n", 400, 1);
    alive();
}

Test(http_strict, http_1_1_needs_one_host) {
    expect_problem("no Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, 1);
    expect_problem("two Hosts", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, 1);
    pm_raw_reply r;
    const char *v10 = "GET /healthz HTTP/1.0\r\n\r\n";
    pm_raw_exchange(srv.port, v10, strlen(v10), 3000, &r);
    cr_assert_eq(r.status, 200, "HTTP/1.0 has no Host requirement: %.200s", r.text);
}

Test(http_strict, a_body_that_stops_short_is_408) {
    double t0 = svc_now();
    expect_problem("short body", POST_HEAD "Content-Length: 40\r\n\r\n{\"seed\":", 408, 2);
    cr_assert_geq(svc_now() - t0, 0.35, "not before the body deadline");
    /* A chunked body that stops in the middle of a chunk. */
    expect_problem("short chunk", POST_HEAD "Transfer-Encoding: chunked\r\n\r\n40\r\n{\"seed\"", 408, 2);
    /* A chunk size far past the body limit is no short body: it is refused
     * at once (test_http_chunks.c has the rest). */
    expect_problem("absurd chunk", POST_HEAD "Transfer-Encoding: chunked\r\n\r\nffffffffff\r\n{}", 413, 0.3);
    cr_assert_geq(pm_test_metric(&srv, "procmesh_connections_cut_total{reason=\"body\"}"), 2);
    alive();
}

Test(http_strict, a_head_sent_slowly_is_408_however_steady) {
    /* One header line every 100 ms: the idle timer never fires, the head's
     * total deadline (400 ms) does. */
    int fd = pm_raw_connect(srv.port);
    cr_assert_geq(fd, 0);
    double t0 = svc_now();
    pm_raw_send_str(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
    int sent = 0;
    pm_raw_reply r;
    for (int i = 0; i < 30; i++) {
        if (pm_raw_send_str(fd, "X-Slow: 1\r\n") < 0) break;
        sent++;
        if (pm_raw_read(fd, 100, &r) == 0 || r.closed || r.reset) break;
    }
    if (!r.status && !r.closed) pm_raw_read(fd, 1000, &r);
    close(fd);
    cr_assert_eq(r.status, 408, "after %d header lines: %.300s", sent, r.text);
    double took = svc_now() - t0;
    cr_assert(took >= 0.35 && took < 2.0, "408 after %.2f s", took);
    char buf[128];
    cr_assert_str_eq(pm_raw_header(&r, "Content-Type", buf, sizeof buf) ? buf : "",
                     "application/problem+json");
    /* A connection that never sends a byte gets the same. */
    fd = pm_raw_connect(srv.port);
    pm_raw_read(fd, 2000, &r);
    close(fd);
    cr_assert_eq(r.status, 408, "silent connection: %.200s", r.text);
    cr_assert_geq(pm_test_metric(&srv, "procmesh_connections_cut_total{reason=\"head\"}"), 2);
    alive();
}

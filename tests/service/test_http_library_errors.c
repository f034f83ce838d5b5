/* Black box, raw sockets: the requests libmicrohttpd 0.9.75 would answer
 * on its own (an HTML 400, 413, 414, 431 or 505 without CORS headers, a
 * 400 whose head it writes twice for a bad Content-Length, a silent close
 * for a request line without a space) or serve wrongly (a raw NUL byte
 * cuts the path: "/healthz\0x" was served as /healthz) are answered by the
 * server, as problem+json with CORS headers and a request id, at once. */
#include <unistd.h>

#include "svc_fixtures.h"

static pm_test_server srv;

static void start(void) {
    const char *args[] = {"--header-timeout-ms", "5000", "--body-timeout-ms", "5000", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
}

static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_library_errors, .init = start, .fini = stop, .timeout = 60);

static void expect_problem(const char *what, const char *req, size_t len, long status,
                           const char *type) {
    pm_raw_reply r;
    pm_raw_exchange(srv.port, req, len, 3000, &r);
    char got[256], detail[256];
    svc_expect_raw_problem(what, &r, status, 1.0, got, detail, sizeof got);
    cr_assert_str_eq(got, type, "%s", what);
}

#define PROBLEM(what, lit, status, type) expect_problem(what, lit, sizeof lit - 1, status, type)

static void alive(void) {
    pm_http_response h;
    cr_assert_eq(pm_http_get(&srv, "/healthz", &h), 0);
    cr_assert_eq(h.status, 200);
    pm_http_response_free(&h);
}

static char *repeat(const char *head, char c, size_t n, const char *tail) {
    size_t hl = strlen(head), tl = strlen(tail);
    char *s = malloc(hl + n + tl + 1);
    memcpy(s, head, hl);
    memset(s + hl, c, n);
    memcpy(s + hl + n, tail, tl + 1);
    return s;
}

Test(http_library_errors, a_nul_byte_in_the_head_is_400) {
    PROBLEM("NUL in the path", "GET /healthz\0x HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad-request");
    PROBLEM("NUL before ../", "GET " SVC_ROUTE "\0/../healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400,
            "bad-request");
    PROBLEM("NUL in a header value", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n", 400,
            "bad-request");
    PROBLEM("NUL starting a header line", "GET /healthz HTTP/1.1\r\nHost: x\r\n\0X: 1\r\n\r\n", 400,
            "bad-request");
    alive();
}

Test(http_library_errors, malformed_request_lines_and_versions) {
    PROBLEM("no space", "GARBAGE\r\nHost: x\r\n\r\n", 400, "bad-request");
    PROBLEM("no version", "GET /healthz\r\nHost: x\r\n\r\n", 400, "bad-request");
    PROBLEM("bad version", "GET /healthz HTTX/1.1\r\nHost: x\r\n\r\n", 400, "bad-request");
    PROBLEM("HTTP/0.9", "GET /healthz HTTP/0.9\r\nHost: x\r\n\r\n", 505, "http-version-not-supported");
    PROBLEM("HTTP/2.0", "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505, "http-version-not-supported");
    PROBLEM("header without colon", "GET /healthz HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", 400,
            "bad-request");
    /* HTTP/1.0 and 1.x minor versions are served. */
    pm_raw_reply r;
    const char *v19 = "GET /healthz HTTP/1.9\r\nHost: x\r\nConnection: close\r\n\r\n";
    pm_raw_exchange(srv.port, v19, strlen(v19), 3000, &r);
    cr_assert_eq(r.status, 200, "%.200s", r.text);
    alive();
}

Test(http_library_errors, unreadable_content_length) {
    PROBLEM("not a number",
            "POST " SVC_ROUTE " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 12abc\r\n\r\n{}",
            400, "bad-request");
    PROBLEM("a list",
            "POST " SVC_ROUTE " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 2, 2\r\n\r\n{}",
            400, "bad-request");
    PROBLEM("past 64 bits",
            "POST " SVC_ROUTE " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 99999999999999999999999\r\n\r\n{}",
            413, "payload-too-large");
    alive();
}

Test(http_library_errors, request_lines_and_heads_too_long) {
    /* 8192 bytes of request line are served (a 404 here), one more is 414. */
    char *ok = repeat("GET /", 'a', 8192 - 14, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    pm_raw_reply r;
    pm_raw_exchange(srv.port, ok, strlen(ok), 3000, &r);
    cr_assert_eq(r.status, 404, "%.200s", r.text);
    free(ok);
    char *uri = repeat("GET /healthz?x=", 'a', 8192, " HTTP/1.1\r\nHost: x\r\n\r\n");
    expect_problem("request line over 8 KiB", uri, strlen(uri), 414, "uri-too-long");
    free(uri);
    char *big = repeat("GET /healthz?x=", 'a', 200000, " HTTP/1.1\r\nHost: x\r\n\r\n");
    expect_problem("200 KB request line", big, strlen(big), 414, "uri-too-long");
    free(big);
    char *hdr = repeat("GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: ", 'a', 13000, "\r\n\r\n");
    expect_problem("head over 12 KiB", hdr, strlen(hdr), 431, "request-header-fields-too-large");
    free(hdr);
    char many[8192];
    int n = snprintf(many, sizeof many, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 100; i++) n += snprintf(many + n, sizeof many - (size_t)n, "X-%d: 1\r\n", i);
    n += snprintf(many + n, sizeof many - (size_t)n, "\r\n");
    expect_problem("101 header lines", many, (size_t)n, 431, "request-header-fields-too-large");
    cr_assert_geq(pm_test_metric(&srv, "procmesh_framing_refused_total{status=\"414\"}"), 2);
    cr_assert_geq(pm_test_metric(&srv, "procmesh_framing_refused_total{status=\"431\"}"), 2);
    alive();
}

Test(http_library_errors, a_bad_head_pipelined_behind_a_good_request) {
    /* The good request is answered first, then the refusal, in order. */
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                              "GET /healthz\0 HTTP/1.1\r\nHost: x\r\n\r\n";
    pm_raw_reply r;
    pm_raw_exchange(srv.port, req, sizeof req - 1, 3000, &r);
    cr_assert_eq(r.status, 200, "%.300s", r.text);
    const char *second = strstr(r.text + 1, "HTTP/1.1 ");
    cr_assert_not_null(second, "no second answer: %.600s", r.text);
    cr_assert_eq(strncmp(second, "HTTP/1.1 400 ", 13), 0, "%.300s", second);
    cr_assert_not_null(strstr(second, "application/problem+json"), "%.500s", second);
    cr_assert(r.closed);
}

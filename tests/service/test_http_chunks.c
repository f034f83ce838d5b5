/* Black box, raw sockets: a chunked request body is judged from its chunk
 * framing as it arrives, before its data. A chunk declared past what is
 * left of --body-limit is a 413 and malformed framing a 400, both at once
 * and as problem+json with CORS headers, whether the bad size line comes
 * with the head or after it (the two ways the server sees it, guard.h).
 * Valid chunked bodies keep working however they are cut: byte by byte,
 * one-byte chunks, extensions, trailers, bare LF, pipelined and kept-alive
 * requests, Expect: 100-continue. */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "svc_fixtures.h"

/* Long deadlines: an answer within a second cannot be the 408. */
#define LIMIT 4096
static pm_test_server srv;

static void start(void) {
    const char *args[] = {"--body-limit", "4096", "--header-timeout-ms", "8000",
                          "--body-timeout-ms", "8000", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
}

static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_chunks, .init = start, .fini = stop, .timeout = 120);

#define CHUNKED_HEAD(path)                                                                  \
    "POST " path " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"              \
    "Transfer-Encoding: chunked\r\n\r\n"

static int connect_nodelay(void) {
    int fd = pm_raw_connect(srv.port);
    cr_assert_geq(fd, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Sends head, then (after a pause when apart, so the server has handled
 * the head before the body comes) body; returns the answer. */
static void send_apart(const char *head, const char *body, size_t body_len, int apart,
                       pm_raw_reply *r) {
    int fd = connect_nodelay();
    if (apart) {
        pm_raw_send_str(fd, head);
        svc_sleep_ms(150);
        pm_raw_send(fd, body, body_len);
    } else {
        char req[8192];
        size_t hl = strlen(head);
        cr_assert_lt(hl + body_len, sizeof req);
        memcpy(req, head, hl);
        memcpy(req + hl, body, body_len);
        pm_raw_send(fd, req, hl + body_len);
    }
    pm_raw_read(fd, 3000, r);
    close(fd);
}

/* The answer must be status as problem+json with CORS, within a second of
 * the body's first bytes, and the connection closed. detail_has: a part
 * of the problem's detail. */
static void expect_refusal(const char *what, const pm_raw_reply *r, long status,
                           const char *detail_has) {
    char type[256], detail[256];
    svc_expect_raw_problem(what, r, status, 1.0, type, detail, sizeof type);
    cr_assert(strstr(detail, detail_has), "%s: detail %s lacks \"%s\"", what, detail, detail_has);
}

static void expect_both_ways(const char *what, const char *path_head, const char *body,
                             size_t body_len, long status, const char *detail_has) {
    for (int apart = 0; apart < 2; apart++) {
        char label[160];
        snprintf(label, sizeof label, "%s (%s)", what, apart ? "after the head" : "with the head");
        pm_raw_reply r;
        send_apart(path_head, body, body_len, apart, &r);
        expect_refusal(label, &r, status, detail_has);
    }
}

#define BOTH(what, body, status, has) \
    expect_both_ways(what, CHUNKED_HEAD(SVC_ROUTE), body, sizeof body - 1, status, has)

static void alive(void) {
    pm_http_response h;
    cr_assert_eq(pm_http_get(&srv, "/healthz", &h), 0);
    cr_assert_eq(h.status, 200);
    pm_http_response_free(&h);
}

Test(http_chunks, a_chunk_declared_past_the_limit_is_413_at_once) {
    BOTH("7fffffff with no data", "7fffffff\r\n", 413, "--body-limit");
    BOTH("7fffffff with a little data", "7fffffff\r\n{\"seed\":", 413, "--body-limit");
    BOTH("one byte over", "1001\r\n", 413, "--body-limit");
    BOTH("a size line still arriving", "100000", 413, "--body-limit");
    /* A first chunk of 2048 bytes, then one of 2049. */
    char two[2048 + 32];
    int n = snprintf(two, sizeof two, "800\r\n");
    memset(two + n, ' ', 2048);
    strcpy(two + n + 2048, "\r\n801\r\n");
    expect_both_ways("past what is left after a first chunk", CHUNKED_HEAD(SVC_ROUTE), two,
                     strlen(two), 413, "2048 bytes left");
    BOTH("17 hex digits (past 64 bits)", "11111111111111111\r\n", 413, "--body-limit");
    cr_assert_geq(pm_test_metric(&srv, "procmesh_framing_refused_total{status=\"413\"}"), 12);
    alive();
}

Test(http_chunks, malformed_chunk_framing_is_400_at_once) {
    BOTH("no hex number", "zz\r\n{}", 400, "hexadecimal");
    BOTH("negative", "-5\r\n{}", 400, "hexadecimal");
    BOTH("space before the CRLF", "5 \r\n{}", 400, "hexadecimal");
    BOTH("no size", "\r\n{}", 400, "chunk size");
    BOTH("only an extension", ";a=b\r\n{}", 400, "hexadecimal");
    BOTH("CR without LF", "2\r{}\r\n", 400, "CR without LF");
    BOTH("data longer than its size", "2\r\n{}XX\r\n", 400, "longer than its size");
    BOTH("a trailer that is no field", "2\r\n{}\r\n0\r\nnot a field\r\n\r\n", 400, "trailer");
    char ext[1200 + 64];
    int n = snprintf(ext, sizeof ext, "2;e=");
    memset(ext + n, 'a', 1100);
    strcpy(ext + n + 1100, "\r\n{}\r\n0\r\n\r\n");
    expect_both_ways("extensions over 1024 bytes", CHUNKED_HEAD(SVC_ROUTE), ext, strlen(ext), 400,
                     "1024 bytes");
    cr_assert_geq(pm_test_metric(&srv, "procmesh_framing_refused_total{status=\"400\"}"), 18);
    alive();
}

/* Sends req on a fresh connection in pieces of step bytes (each its own
 * segment, a pause every few) and returns the answer. */
static void send_in_pieces(const char *req, size_t len, size_t step, pm_raw_reply *r) {
    int fd = connect_nodelay();
    for (size_t off = 0; off < len; off += step) {
        size_t n = len - off < step ? len - off : step;
        cr_assert_eq(pm_raw_send(fd, req + off, n), 0);
        if ((off / step) % 8 == 7) svc_sleep_ms(1);
    }
    pm_raw_read(fd, 10000, r);
    close(fd);
}

#define CLOSE_HEAD(path)                                                                    \
    "POST " path " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"              \
    "Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n"

Test(http_chunks, valid_chunked_bodies_cut_anyhow_are_served) {
    cr_assert_eq(strlen(SVC_BODY), 0x34);
    static const char *const reqs[] = {
        CLOSE_HEAD(SVC_ROUTE) "34\r\n" SVC_BODY "\r\n0\r\n\r\n",
        /* extensions, upper-case hex, leading zeros, a trailer */
        CLOSE_HEAD(SVC_ROUTE) "0034;name=\"v;x\";flag\r\n" SVC_BODY "\r\n000;last\r\n"
                              "X-Trailer: 1\r\n\r\n",
        CLOSE_HEAD(SVC_ROUTE) "1A\r\n{\"seed\":42,\"generate\":{\"co\r\n1a\r\nunt\":12,\"extent\":[64,64]}}\r\n"
                              "0\r\n\r\n",
        /* bare LF line ends (the library takes them) */
        CLOSE_HEAD(SVC_ROUTE) "34\n" SVC_BODY "\n0\n\n",
        /* empty lines before the request line are skipped */
        "\r\n\r\n" CLOSE_HEAD(SVC_ROUTE) "34\r\n" SVC_BODY "\r\n0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        static const size_t steps[] = {1, 3, 7, 4096};
        for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            pm_raw_reply r;
            send_in_pieces(reqs[i], strlen(reqs[i]), steps[s], &r);
            cr_assert_eq(r.status, 200, "request %zu in pieces of %zu: %.300s", i, steps[s], r.text);
        }
    }
    /* One chunk per byte, and a body of exactly the limit in two chunks. */
    char req[16384];
    int n = snprintf(req, sizeof req, CLOSE_HEAD(SVC_ROUTE));
    for (const char *b = SVC_BODY; *b; b++) n += snprintf(req + n, sizeof req - (size_t)n, "1\r\n%c\r\n", *b);
    n += snprintf(req + n, sizeof req - (size_t)n, "0\r\n\r\n");
    pm_raw_reply r;
    send_in_pieces(req, (size_t)n, 5, &r);
    cr_assert_eq(r.status, 200, "one-byte chunks: %.300s", r.text);
    n = snprintf(req, sizeof req, CLOSE_HEAD(SVC_ROUTE) "800\r\n%s", SVC_BODY);
    memset(req + n, ' ', 2048 - strlen(SVC_BODY));
    n += (int)(2048 - strlen(SVC_BODY));
    n += snprintf(req + n, sizeof req - (size_t)n, "\r\n800\r\n");
    memset(req + n, ' ', 2048);
    n += 2048;
    n += snprintf(req + n, sizeof req - (size_t)n, "\r\n0\r\n\r\n");
    send_in_pieces(req, (size_t)n, 1000, &r);
    cr_assert_eq(r.status, 200, "a body of exactly the limit: %.300s", r.text);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_framing_refused_total{status=\"400\"}"), 0);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_framing_refused_total{status=\"413\"}"), 0);
}

static int count(const char *text, const char *what) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++) n++;
    return n;
}

Test(http_chunks, pipelined_and_kept_alive_requests) {
    /* Four requests in one send: chunked, Content-Length, GET, chunked
     * (bodies the route refuses with a short 422: the framing is what is
     * tested). */
    char req[4096];
    size_t bl = strlen(SVC_BODY_INVALID);
    int n = snprintf(req, sizeof req,
                     CHUNKED_HEAD(SVC_ROUTE) "%zx\r\n" SVC_BODY_INVALID "\r\n0\r\n\r\n"
                     "POST " SVC_ROUTE " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n" SVC_BODY_INVALID
                     "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                     CLOSE_HEAD(SVC_ROUTE) "%zx\r\n" SVC_BODY_INVALID "\r\n0\r\n\r\n",
                     bl, bl, bl);
    for (size_t step = 1; step <= 4096; step *= 64) {
        pm_raw_reply r;
        send_in_pieces(req, (size_t)n, step, &r);
        cr_assert_eq(count(r.text, "HTTP/1.1 422 "), 3, "pieces of %zu: %.3000s", step, r.text);
        cr_assert_eq(count(r.text, "HTTP/1.1 200 OK"), 1, "pieces of %zu: %.3000s", step, r.text);
        cr_assert(r.closed);
    }
    /* A bad chunk on the second request of a kept-alive connection is
     * refused at once too, whether it comes with that head or after it. */
    for (int apart = 0; apart < 2; apart++) {
        int fd = connect_nodelay();
        pm_raw_send_str(fd, CHUNKED_HEAD(SVC_ROUTE) "31\r\n" SVC_BODY_INVALID "\r\n0\r\n\r\n");
        pm_raw_reply first;
        pm_raw_read(fd, 700, &first);
        cr_assert_eq(first.status, 422, "%.300s", first.text);
        cr_assert(!first.closed, "kept alive");
        pm_raw_send_str(fd, CHUNKED_HEAD(SVC_ROUTE));
        if (apart) svc_sleep_ms(150);
        pm_raw_send_str(fd, "fffff\r\n{}");
        pm_raw_reply r;
        pm_raw_read(fd, 3000, &r);
        close(fd);
        expect_refusal(apart ? "second request, after its head" : "second request, with its head",
                       &r, 413, "--body-limit");
    }
    /* Pipelined behind a good request, in the same send. */
    pm_raw_reply r;
    snprintf(req, sizeof req,
             CHUNKED_HEAD(SVC_ROUTE) "%zx\r\n" SVC_BODY_INVALID "\r\n0\r\n\r\n"
             CHUNKED_HEAD(SVC_ROUTE) "zz\r\n", bl);
    pm_raw_exchange(srv.port, req, strlen(req), 3000, &r);
    cr_assert_eq(r.status, 422, "%.300s", r.text);
    const char *second = strstr(r.text + 1, "HTTP/1.1 ");
    cr_assert_not_null(second, "no second answer: %.1000s", r.text);
    cr_assert_eq(strncmp(second, "HTTP/1.1 400", 12), 0, "%.300s", second);
    cr_assert_not_null(strstr(second, "application/problem+json"), "%.500s", second);
}

Test(http_chunks, expect_100_continue) {
    const char *head = "POST " SVC_ROUTE " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       "Expect: 100-continue\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int bad = 0; bad < 2; bad++) {
        int fd = connect_nodelay();
        pm_raw_send_str(fd, head);
        pm_raw_reply c;
        pm_raw_read(fd, 500, &c);
        cr_assert_eq(c.status, 100, "%.300s", c.text);
        pm_raw_send_str(fd, bad ? "7fffffff\r\n" : "34\r\n" SVC_BODY "\r\n0\r\n\r\n");
        pm_raw_reply r;
        pm_raw_read(fd, 5000, &r);
        close(fd);
        if (bad) expect_refusal("after 100 Continue", &r, 413, "--body-limit");
        else cr_assert_eq(r.status, 200, "%.300s", r.text);
    }
}

Test(http_chunks, a_head_refusal_comes_first) {
    /* What the head alone decides is answered, not the body's 413: an
     * unknown route is a 404 at once (the body could not be read under the
     * limit anyway). A malformed body is a 400 whatever the head said. */
    pm_raw_reply r;
    const char *nf = CHUNKED_HEAD("/no/such/route") "7fffffff\r\n";
    pm_raw_exchange(srv.port, nf, strlen(nf), 3000, &r);
    cr_assert_eq(r.status, 404, "%.300s", r.text);
    cr_assert_lt(r.seconds, 1.0);
    cr_assert(r.closed);
    const char *bad = CHUNKED_HEAD("/no/such/route") "zz\r\n";
    pm_raw_exchange(srv.port, bad, strlen(bad), 3000, &r);
    expect_refusal("malformed on an unknown route", &r, 400, "hexadecimal");
}

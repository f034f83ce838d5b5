/* Revalidation (issue 12): the compiled-in files (the playground page, its
 * scripts, the contract) carry a strong ETag per coding and answer
 * If-None-Match with a 304; a 304 on the wire is a head alone (no body, no
 * Transfer-Encoding, no Content-Length, see docs/svc.md) and the
 * connection stays usable. */
#define _GNU_SOURCE   /* memmem */
#include <criterion/criterion.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pm_test_raw.h"
#include "pm_test_server.h"
#include "svc_fixtures.h"

static pm_test_server srv;
static void start(void) { cr_assert_eq(pm_test_server_start(&srv, NULL), 0); }
static void stop(void) { pm_test_server_stop(&srv); }
TestSuite(http_revalidate, .init = start, .fini = stop, .timeout = 120);

static pm_http_response get(const char *method, const char *path, const char *ae,
                            const char *inm) {
    char h1[128], h2[160];
    const char *h[3] = {NULL, NULL, NULL};
    int n = 0;
    if (ae) snprintf(h1, sizeof h1, "Accept-Encoding: %s", ae), h[n++] = h1;
    if (inm) snprintf(h2, sizeof h2, "If-None-Match: %s", inm), h[n++] = h2;
    pm_http_request req = {.method = method ? method : "GET", .path = path, .headers = h};
    pm_http_response r;
    cr_assert_eq(pm_http(&srv, &req, &r), 0, "no response from %s", path);
    return r;
}

static int tag_ok(const char *t) {
    size_t n = strlen(t);
    if (n < 34 || t[0] != '"' || t[n - 1] != '"') return 0;
    for (int i = 1; i <= 32; i++)
        if (!strchr("0123456789abcdef", t[i])) return 0;
    return n == 34 || (n == 37 && (strncmp(t + 33, ".gz", 3) == 0 || strncmp(t + 33, ".br", 3) == 0));
}

Test(http_revalidate, compiled_in_files_have_a_tag_per_coding_and_304) {
    const char *paths[] = {"/", "/playground/app.js", "/openapi.yaml"};
    const char *codings[] = {NULL, "gzip", "br"};
    for (size_t p = 0; p < 3; p++) {
        char tags[3][64], buf[128];
        for (int c = 0; c < 3; c++) {
            pm_http_response r = get(NULL, paths[p], codings[c], NULL);
            cr_assert_eq(r.status, 200, "%s", paths[p]);
            svc_header(&r, "ETag", tags[c], sizeof tags[c]);
            cr_assert(tag_ok(tags[c]), "%s: ETag %s", paths[p], tags[c]);
            cr_expect_str_eq(svc_header(&r, "Cache-Control", buf, sizeof buf), "public, no-cache");
            pm_http_response h = get("HEAD", paths[p], codings[c], NULL);
            cr_expect_str_eq(svc_header(&h, "ETag", buf, sizeof buf), tags[c], "HEAD %s", paths[p]);
            pm_http_response_free(&h);
            pm_http_response_free(&r);
        }
        cr_assert_str_neq(tags[0], tags[1]);
        cr_assert_str_neq(tags[1], tags[2]);
        for (int c = 0; c < 3; c++)
            for (int t = 0; t < 3; t++) {
                pm_http_response r = get(NULL, paths[p], codings[c], tags[t]);
                if (c != t) {   /* another form's tag: this form in full */
                    cr_expect_eq(r.status, 200, "%s %s with %s", paths[p], codings[c], tags[t]);
                    pm_http_response_free(&r);
                    continue;
                }
                cr_assert_eq(r.status, 304, "%s %s", paths[p], tags[t]);
                cr_expect_eq(r.body_len, 0);
                cr_expect_str_eq(svc_header(&r, "ETag", buf, sizeof buf), tags[t]);
                cr_expect_str_eq(svc_header(&r, "Cache-Control", buf, sizeof buf),
                                 "public, no-cache");
                cr_expect_null(pm_http_header(&r, "Content-Type", buf, sizeof buf));
                cr_expect_null(pm_http_header(&r, "Content-Encoding", buf, sizeof buf));
                pm_http_response_free(&r);
            }
        /* weak comparison and lists, as for generated results */
        char list[200];
        snprintf(list, sizeof list, "\"x\", W/%s", tags[0]);
        pm_http_response r = get(NULL, paths[p], NULL, list);
        cr_expect_eq(r.status, 304, "%s: If-None-Match %s", paths[p], list);
        pm_http_response_free(&r);
    }
}

/* ---- one connection, several requests ---- */

/* Reads one response head (through its blank line) from fd into buf, and
 * as much of the body as Content-Length says (none for a 304). Returns the
 * head's length; *body_len gets the body bytes read. */
static size_t read_response(int fd, char *buf, size_t cap, size_t *body_len) {
    size_t n = 0;
    char *end = NULL;
    while (!end) {
        struct pollfd p = {fd, POLLIN, 0};
        cr_assert_gt(poll(&p, 1, 10000), 0, "no response within 10 s");
        ssize_t got = recv(fd, buf + n, cap - 1 - n, 0);
        cr_assert_gt(got, 0, "the server closed the connection");
        n += (size_t)got;
        buf[n] = 0;
        end = memmem(buf, n, "\r\n\r\n", 4);
    }
    size_t head = (size_t)(end - buf) + 4, want = 0;
    const char *cl = strcasestr(buf, "\r\nContent-Length:");
    if (cl && cl < end && strncmp(buf, "HTTP/1.1 304", 12) != 0) want = strtoull(cl + 17, NULL, 10);
    cr_assert_lt(head + want, cap, "response too large for the test buffer");
    while (n < head + want) {
        ssize_t got = recv(fd, buf + n, cap - 1 - n, 0);
        cr_assert_gt(got, 0, "the body stopped short");
        n += (size_t)got;
    }
    cr_assert_eq(n, head + want, "bytes after the message: %.*s", (int)(n - head - want),
                 buf + head + want);
    *body_len = want;
    buf[head] = 0;
    return head;
}

static long head_length(const char *head) {
    const char *cl = strcasestr(head, "\r\nContent-Length:");
    return cl ? strtol(cl + 17, NULL, 10) : -1;
}

Test(http_revalidate, a_304_is_a_head_alone_and_the_connection_goes_on) {
    const char *paths[] = {"/v1/grids?seed=5&size=5&format=glb", "/playground/app.js"};
    static char buf[1 << 22];
    for (size_t p = 0; p < 2; p++) {
        int fd = pm_raw_connect(srv.port);
        cr_assert_geq(fd, 0);
        char req[512], etag[80];
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", paths[p]);
        pm_raw_send_str(fd, req);
        size_t body;
        read_response(fd, buf, sizeof buf, &body);
        cr_assert(strncmp(buf, "HTTP/1.1 200", 12) == 0, "%s", buf);
        long full = head_length(buf);
        cr_assert_eq((size_t)full, body);
        const char *t = strcasestr(buf, "\r\nETag: ");
        cr_assert_not_null(t, "%s", buf);
        snprintf(etag, sizeof etag, "%.*s", (int)strcspn(t + 8, "\r"), t + 8);
        /* the 304 on the same connection, then a third request on it */
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nIf-None-Match: %s\r\n\r\n",
                 paths[p], etag);
        pm_raw_send_str(fd, req);
        read_response(fd, buf, sizeof buf, &body);
        cr_assert(strncmp(buf, "HTTP/1.1 304", 12) == 0, "%s", buf);
        cr_expect_null(strcasestr(buf, "Transfer-Encoding"), "%s", buf);
        cr_expect_null(strcasestr(buf, "Content-Type"), "%s", buf);
        /* no Content-Length (libmicrohttpd writes one, the guard leaves it
         * out: docs/svc.md) */
        cr_expect_eq(head_length(buf), -1, "%s: a Content-Length on the 304: %s", paths[p], buf);
        cr_expect_gt(full, 0);
        struct pollfd pf = {fd, POLLIN, 0};
        cr_expect_eq(poll(&pf, 1, 200), 0, "%s: bytes after the 304's head", paths[p]);
        snprintf(req, sizeof req, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        pm_raw_send_str(fd, req);
        read_response(fd, buf, sizeof buf, &body);
        cr_assert(strncmp(buf, "HTTP/1.1 200", 12) == 0, "%s", buf);
        close(fd);
    }
}

/* The framing follower (strict.h): where requests, heads and chunks begin
 * and end in a connection's byte stream, and the verdicts on chunked
 * bodies, whatever way the stream is cut into reads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strict.h"

#define H "POST /v1/dungeons HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
#define H_LEN (sizeof H - 1)

typedef struct fed {
    int status;
    size_t at;          /* offset of the byte that decided, or the length */
    unsigned requests;
    uint64_t last_head_len;
    int on;
} fed;

/* Feeds s cut at the given places (cuts ascending, n_cuts of them). */
static fed feed_cut(const char *s, size_t len, uint64_t limit, const size_t *cuts, size_t n_cuts) {
    pm_svc_framing f;
    pm_svc_framing_init(&f, limit, limit);
    fed out = {0, len, 0, 0, 0};
    size_t from = 0;
    for (size_t k = 0; k <= n_cuts; k++) {
        size_t to = k < n_cuts ? cuts[k] : len;
        size_t used = pm_svc_framing_feed(&f, s + from, to - from);
        if (f.status && out.at == len) out.at = from + used;
        from = to;
    }
    out.status = f.status;
    out.requests = f.requests;
    out.last_head_len = f.last_head_len;
    out.on = pm_svc_framing_on(&f);
    return out;
}

/* The same result in one read, in every two reads, and byte by byte. */
static fed feed_all_ways(const char *s, size_t len, uint64_t limit) {
    fed one = feed_cut(s, len, limit, NULL, 0);
    for (size_t c = 1; c < len; c++) {
        fed two = feed_cut(s, len, limit, &c, 1);
        cr_assert(two.status == one.status && two.at == one.at && two.requests == one.requests &&
                      two.last_head_len == one.last_head_len && two.on == one.on,
                  "cut at %zu: status %d at %zu vs %d at %zu: %s", c, two.status, two.at,
                  one.status, one.at, s);
    }
    size_t *cuts = malloc(len * sizeof *cuts);
    for (size_t c = 1; c < len; c++) cuts[c - 1] = c;
    fed bytes = feed_cut(s, len, limit, cuts, len ? len - 1 : 0);
    free(cuts);
    cr_assert(bytes.status == one.status && bytes.at == one.at && bytes.requests == one.requests,
              "byte by byte differs: %s", s);
    return one;
}

#define FEED(lit, limit) feed_all_ways(lit, sizeof lit - 1, limit)

Test(framing, valid_streams_pass_and_heads_are_measured) {
    fed r = FEED(H "34\r\n0123456789012345678901234567890123456789012345678901\r\n0\r\n\r\n", 1000);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(r.requests, 1);
    cr_assert_eq(r.last_head_len, H_LEN, "the library's header_size: request line to blank line");
    cr_assert(r.on);
    /* Empty lines before a request line are no part of its head. */
    r = FEED("\r\n\n" H "0\r\n\r\n", 1000);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(r.last_head_len, H_LEN);
    /* Extensions, trailers, bare LF, upper-case hex and leading zeros. */
    r = FEED(H "0002;a=\"b;c\"\r\n{}\r\n00A\n0123456789\n0;end\r\nX-T: 1\r\nX-U: 2\r\n\r\n", 12);
    cr_assert_eq(r.status, 0, "exactly the limit is allowed");
    /* Pipelined: chunked, Content-Length, no body, chunked. */
    r = FEED(H "2\r\n{}\r\n0\r\n\r\n"
               "POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\n12345"
               "GET /b HTTP/1.1\r\n\r\n" H "0\r\n\r\n",
             1000);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(r.requests, 4);
    cr_assert(r.on);
    /* A Content-Length body is data, whatever it holds. */
    r = FEED("POST /a HTTP/1.1\r\nContent-length: 12\r\n\r\nzz\r\n\r\nGET / " H "1\r\nx\r\n0\r\n\r\n",
             1000);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(r.requests, 2);
}

Test(framing, a_chunk_past_the_limit_is_413_at_its_first_digit_too_many) {
    fed r = FEED(H "7fffffff\r\n", 4096);
    cr_assert_eq(r.status, 413);
    cr_assert_eq(r.at, H_LEN + 3, "0x7fff > 4096: decided at the fourth digit");
    r = FEED(H "1000\r\n", 4096);
    cr_assert_eq(r.status, 0);
    r = FEED(H "1001\r\n", 4096);
    cr_assert_eq(r.status, 413);
    cr_assert_eq(r.at, H_LEN + 3);
    /* What is left after earlier chunks counts. */
    r = FEED(H "8\r\n12345678\r\n9\r\n", 16);
    cr_assert_eq(r.status, 413);
    r = FEED(H "8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n", 16);
    cr_assert_eq(r.status, 0);
    /* Past 64 bits, and leading zeros do not count. */
    r = FEED(H "ffffffffffffffffff\r\n", UINT64_MAX);
    cr_assert_eq(r.status, 413);
    r = FEED(H "000000000000000000000001\r\nx\r\n0\r\n\r\n", 1);
    cr_assert_eq(r.status, 0);
    /* Each request has the whole limit. */
    r = FEED(H "8\r\n12345678\r\n0\r\n\r\n" H "8\r\n12345678\r\n0\r\n\r\n", 8);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(r.requests, 2);
}

Test(framing, malformed_chunk_framing_is_400_at_the_byte_that_shows_it) {
    static const struct {
        const char *body;
        size_t at;   /* offset in body of the deciding byte */
    } bad[] = {
        {"zz\r\n", 0},          {"-5\r\n", 0},        {"5 \r\n", 1},       {"\r\n", 0},
        {"\n", 0},              {";x\r\n", 0},        {"2\rx", 2},         {"2\r\n{}XY", 5},
        {"2\r\n{}\rX", 6},      {"0x10\r\n", 1},      {"2\r\n{}\r\n0\r\nbad\r\n\r\n", 14},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char s[256];
        int n = snprintf(s, sizeof s, H "%s", bad[i].body);
        fed r = feed_all_ways(s, (size_t)n, 1000);
        cr_assert_eq(r.status, 400, "%s", bad[i].body);
        cr_assert_eq(r.at, H_LEN + bad[i].at, "%s: decided at %zu", bad[i].body, r.at - H_LEN);
        cr_assert_eq(r.requests, 1);
    }
    /* A size line with its extensions may have 1024 bytes, not more. */
    char s[2048];
    int n = snprintf(s, sizeof s, H "1;");
    memset(s + n, 'e', 1021);
    strcpy(s + n + 1021, "\r\nx\r\n0\r\n\r\n");
    cr_assert_eq(feed_all_ways(s, strlen(s), 1000).status, 0);
    memset(s + n, 'e', 1022);
    strcpy(s + n + 1022, "\r\nx\r\n0\r\n\r\n");
    fed r = feed_all_ways(s, strlen(s), 1000);
    cr_assert_eq(r.status, 400);
    cr_assert_eq(r.at, H_LEN + 1024);
}

Test(framing, unsure_framing_turns_it_off) {
    /* The head checks or the library answer these; the follower judges
     * nothing after them. */
    static const char *const heads[] = {
        "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding:\r\n chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: x\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        char s[512];
        int n = snprintf(s, sizeof s, "%szz\r\n", heads[i]);
        fed r = feed_all_ways(s, (size_t)n, 1000);
        cr_assert_eq(r.status, 0, "%s", heads[i]);
        cr_assert(!r.on, "%s", heads[i]);
    }
    /* A name the library does not take for the framing header is no
     * framing header here either ("Transfer-Encoding :"). */
    fed r = FEED("POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\nGET / HTTP/1.1\r\n\r\n", 10);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(r.requests, 2);
    cr_assert(r.on);
    /* Off on request, and once off it stays off. */
    pm_svc_framing f;
    pm_svc_framing_init(&f, 10, 10);
    pm_svc_framing_off(&f);
    cr_assert_eq(pm_svc_framing_feed(&f, H "zz\r\n", H_LEN + 4), H_LEN + 4);
    cr_assert_eq(f.status, 0);
}

Test(framing, a_verdict_names_its_request) {
    pm_svc_framing f;
    pm_svc_framing_init(&f, 100, 100);
    const char *s = "GET / HTTP/1.1\r\n\r\n" H "zz";
    size_t n = strlen(s);
    cr_assert_eq(pm_svc_framing_feed(&f, s, n), n - 2);
    cr_assert_eq(f.verdict_request, 2);
    cr_assert_eq(f.verdict_head_len, H_LEN);
    pm_svc_strict_verdict v;
    pm_svc_framing_verdict(&f, &v);
    cr_assert_eq(v.status, 400);
    cr_assert_str_eq(v.type, "bad-request");
    cr_assert(!pm_svc_framing_on(&f));
}

/* Heads the library would refuse itself (or serve wrongly): judged at the
 * byte that shows it, on the request whose head it is. */
Test(framing, heads_the_library_would_refuse) {
    static const struct {
        const char *head;
        int status;
        long at;   /* offset of the deciding byte; -1: the end of the head */
    } bad[] = {
        {"GET /healthz\0x HTTP/1.1\r\nHost: x\r\n\r\n", 400, -1},
        {"GET /healthz HTTP/1.1\r\nX-A: a\0b\r\n\r\n", 400, -1},
        {"GET /healthz HTTP/1.1\r\n\0x\r\n\r\n", 400, 26},
        {"GARBAGE\r\n\r\n", 400, 8},
        {"GET /healthz\r\n\r\n", 400, 13},
        {"GET  \r\n\r\n", 400, 6},
        {"GET /healthz HTTP/1.1 \r\n\r\n", 400, 23},
        {"GET /healthz HTTX/1.1\r\n\r\n", 400, 22},
        {"GET /healthz HTTP/1.10\r\n\r\n", 400, 23},
        {"GET /healthz HTTP/0.9\r\n\r\n", 505, 22},
        {"GET /healthz HTTP/2.0\n\n", 505, 21},
        {"GET /healthz HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", 400, 41},
        {"GET /healthz HTTP/1.1\r\n folded first: x\r\nno colon\r\n\r\n", 400, 50},
        {"POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 400, -1},
        {"POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", 400, -1},
        {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413, -1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = strlen(bad[i].head);
        if (i < 3) len = strlen(bad[i].head) + 1 + strlen(bad[i].head + strlen(bad[i].head) + 1);
        fed r = feed_all_ways(bad[i].head, len, 100);
        cr_assert_eq(r.status, bad[i].status, "%zu: %d", i, r.status);
        size_t at = bad[i].at < 0 ? len - 1 : (size_t)bad[i].at;
        cr_assert_eq(r.at, at, "%zu: decided at %zu, not %zu", i, r.at, at);
        cr_assert_eq(r.requests, i < 3 ? 1 : 0, "%zu: a NUL is judged on the complete head", i);
    }
    /* A NUL that starts a line before the request line: an empty line. */
    static const char nul_first[] = "\0\r\nGET / HTTP/1.1\r\n\r\n";
    fed r = feed_all_ways(nul_first, sizeof nul_first - 1, 100);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(r.requests, 1);
    /* Continuation lines, HTTP/1.0 and 1.9 pass. */
    r = FEED("GET / HTTP/1.0\r\nX-A: a\r\n  b\r\n\tc\r\n\r\nGET / HTTP/1.9\r\n\r\n", 100);
    cr_assert_eq(r.status, 0);
    cr_assert_eq(r.requests, 2);
    /* Sizes: the request line, the head, its lines. */
    char s[20000];
    int n = snprintf(s, sizeof s, "GET /");
    memset(s + n, 'a', PM_SVC_REQUEST_LINE_MAX - 14);
    n += PM_SVC_REQUEST_LINE_MAX - 14;
    n += snprintf(s + n, sizeof s - (size_t)n, " HTTP/1.1\r\n\r\n");
    cr_assert_eq(feed_cut(s, (size_t)n, 100, NULL, 0).status, 0, "a request line of 8192 bytes");
    n = snprintf(s, sizeof s, "GET /");
    memset(s + n, 'a', PM_SVC_REQUEST_LINE_MAX);
    n += PM_SVC_REQUEST_LINE_MAX;
    r = feed_cut(s, (size_t)n, 100, NULL, 0);
    cr_assert_eq(r.status, 414);
    cr_assert_eq(r.at, PM_SVC_REQUEST_LINE_MAX);
    n = snprintf(s, sizeof s, "GET / HTTP/1.1\r\n");
    for (int k = 0; k < 99; k++) n += snprintf(s + n, sizeof s - (size_t)n, "X-%d: 1\r\n", k);
    n += snprintf(s + n, sizeof s - (size_t)n, "X-A: ");
    int room = PM_SVC_HEAD_MAX - n - 4;
    memset(s + n, 'v', (size_t)room);
    n += room;
    n += snprintf(s + n, sizeof s - (size_t)n, "\r\n\r\n");
    cr_assert_eq(n, PM_SVC_HEAD_MAX);
    r = feed_cut(s, (size_t)n, 100, NULL, 0);
    cr_assert_eq(r.status, 0, "100 lines, 12288 bytes: %d", r.status);
    s[n - 4] = 'v';
    strcpy(s + n - 3, "\r\n\r\n");
    r = feed_cut(s, (size_t)n + 1, 100, NULL, 0);
    cr_assert_eq(r.status, 431);
    cr_assert_eq(r.at, PM_SVC_HEAD_MAX);
    n = snprintf(s, sizeof s, "GET / HTTP/1.1\r\n");
    for (int k = 0; k < 101; k++) n += snprintf(s + n, sizeof s - (size_t)n, "X-%d: 1\r\n", k);
    r = feed_cut(s, (size_t)n, 100, NULL, 0);
    cr_assert_eq(r.status, 431);
    cr_assert_eq(r.at, (size_t)n - 1);
    /* A verdict on a head names the request whose head it is. */
    pm_svc_framing f;
    pm_svc_framing_init(&f, 100, 100);
    static const char two[] = "GET / HTTP/1.1\r\n\r\nGET / HTTP/2.0\r\n\r\n";
    pm_svc_framing_feed(&f, two, sizeof two - 1);
    cr_assert_eq(f.status, 505);
    cr_assert_eq(f.requests, 1);
    cr_assert_eq(f.verdict_request, 2);
    cr_assert(f.verdict_in_head);
    /* A NUL: a verdict on the complete head, the library's view of it (a
     * line starting with NUL ends it). */
    pm_svc_framing_init(&f, 100, 100);
    static const char nul[] = "GET / HTTP/1.1\r\n\r\nGET /a HTTP/1.1\r\n\0X: 1\r\nY: 2\r\n\r\n";
    pm_svc_framing_feed(&f, nul, sizeof nul - 1);
    cr_assert_eq(f.status, 400);
    cr_assert_eq(f.requests, 2);
    cr_assert_eq(f.verdict_request, 2);
    cr_assert(!f.verdict_in_head && f.verdict_on_head);
    cr_assert_eq(f.verdict_head_len, strlen("GET /a HTTP/1.1\r\n") + 7);
}

/* A multipart body has the larger limit (--binary-body-limit), another
 * body the smaller (--body-limit), decided per request on one connection. */
Test(framing, multipart_bodies_have_their_own_limit) {
    static const char both[] =
        "POST /v1/roads HTTP/1.1\r\nHost: x\r\nContent-Type: Multipart/Form-Data; boundary=b\r\n"
        "Transfer-Encoding: chunked\r\n\r\n40\r\n";
    static const char json_after[] =
        "POST /v1/roads HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
        "Transfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"
        "POST /v1/roads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n40\r\n";
    pm_svc_framing f;
    pm_svc_framing_init(&f, 16, 100);
    pm_svc_framing_feed(&f, both, sizeof both - 1);
    cr_assert_eq(f.status, 0, "a 64-byte chunk within the multipart limit of 100: %d", f.status);
    pm_svc_framing_init(&f, 16, 100);
    pm_svc_framing_feed(&f, json_after, sizeof json_after - 1);
    cr_assert_eq(f.status, 413, "the JSON request after it has the limit of 16: %d", f.status);
    pm_svc_strict_verdict v;
    pm_svc_framing_verdict(&f, &v);
    cr_assert(strstr(v.detail, "--body-limit") && !strstr(v.detail, "binary"), "%s", v.detail);
    pm_svc_framing_init(&f, 16, 32);
    pm_svc_framing_feed(&f, both, sizeof both - 1);
    cr_assert_eq(f.status, 413, "past the multipart limit of 32: %d", f.status);
    pm_svc_framing_verdict(&f, &v);
    cr_assert(strstr(v.detail, "--binary-body-limit"), "%s", v.detail);
}

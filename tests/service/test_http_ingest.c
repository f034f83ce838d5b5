/* Black box: heightfields as JSON text and as multipart/form-data float32
 * parts (docs/road.md "Binary heightfields"), against the real binary. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/request.h"
#include "pm_test_multipart.h"
#include "pm_test_png.h"
#include "svc_fixtures.h"

extern const pm_api_generator pm_api_gen_road;

static pm_test_server srv;

static void start(void) {
    const char *args[] = {"--workers", "1", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
}
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_ingest, .init = start, .fini = stop);

#define COLS 48
#define ROWS 40
#define HEAD "{\"points\": [[2,0,2],[60,0,30],[90,0,35]], \"terrain\": {\"cell\": 2, \"cols\": 48, \"rows\": 40"

static float heights[COLS * ROWS];
static char text[COLS * ROWS * 16 + 512], body[COLS * ROWS * 4 + 1024];

static void fill(void) {
    for (int i = 0; i < COLS * ROWS; i++) heights[i] = (float)((i * 29) % 400) / 16.0f - 12.0f;
}

static pm_http_response post(const char *path, const char *ctype, const void *data, size_t len) {
    char ct[128];
    snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
    const char *h[] = {ct, NULL};
    pm_http_request req = {.method = "POST", .path = path, .headers = h, .body = data, .body_len = len};
    pm_http_response r;
    cr_assert_eq(pm_http(&srv, &req, &r), 0, "no response from %s", path);
    return r;
}

/* The same heights as text and as float32: one key, so the binary request
 * is a cache hit with the same ETag and the same GLB bytes. */
Test(http_ingest, binary_heights_same_etag_and_bytes_as_json) {
    fill();
    size_t n = (size_t)snprintf(text, sizeof text, HEAD ", \"heights\": [");
    for (int i = 0; i < COLS * ROWS; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%g", i ? "," : "", (double)heights[i]);
    snprintf(text + n, sizeof text - n, "]}}");
    pm_http_response a = post("/v1/roads?format=glb", "application/json", text, strlen(text));
    cr_assert_eq(a.status, 200, "%s", a.body);
    size_t blen = pm_test_multipart(body, sizeof body, HEAD "}}", heights, COLS * ROWS,
                                    "/terrain/heights");
    pm_http_response b = post("/v1/roads?format=glb", PM_TEST_MULTIPART_TYPE, body, blen);
    cr_assert_eq(b.status, 200, "%s", b.body);
    char ea[128], eb[128], xc[32];
    cr_expect_str_eq(svc_header(&a, "ETag", ea, sizeof ea), svc_header(&b, "ETag", eb, sizeof eb));
    cr_expect_str_eq(svc_header(&b, "X-Cache", xc, sizeof xc), "HIT");
    cr_expect(a.body_len == b.body_len && memcmp(a.body, b.body, a.body_len) == 0, "same GLB");
    pm_http_response_free(&a);
    pm_http_response_free(&b);
    /* One height changed: a new key, generated (MISS). */
    heights[100] += 1.0f;
    blen = pm_test_multipart(body, sizeof body, HEAD "}}", heights, COLS * ROWS, "/terrain/heights");
    b = post("/v1/roads?format=glb", PM_TEST_MULTIPART_TYPE, body, blen);
    cr_assert_eq(b.status, 200, "%s", b.body);
    cr_expect_str_neq(svc_header(&b, "ETag", eb, sizeof eb), ea);
    cr_expect_str_eq(svc_header(&b, "X-Cache", xc, sizeof xc), "MISS");
    pm_http_response_free(&b);
}

/* Over 64 KiB a body is read on a worker, and the service keeps a
 * multipart body until the job is read (its float32 part is referred to,
 * not copied): the same ETag and GLB as the same heights in JSON, each
 * way generated once (the second a HIT), and the body's charge released. */
#define WSIDE 160
#define WSIDE_HEAD "{\"points\": [[5,0,5],[150,0,90],[300,0,250]], \"terrain\": {\"cell\": 2, " \
                 "\"cols\": 160, \"rows\": 160"
Test(http_ingest, worker_read_binary_heights_same_etag_and_bytes_as_json) {
    static float h[WSIDE * WSIDE];
    static char mtext[WSIDE * WSIDE * 16 + 512], mbody[WSIDE * WSIDE * 4 + 1024];
    for (int i = 0; i < WSIDE * WSIDE; i++) h[i] = (float)((i * 53) % 640) / 32.0f - 7.5f;
    size_t n = (size_t)snprintf(mtext, sizeof mtext, WSIDE_HEAD ", \"heights\": [");
    for (int i = 0; i < WSIDE * WSIDE; i++)
        n += (size_t)snprintf(mtext + n, sizeof mtext - n, "%s%.9g", i ? "," : "", (double)h[i]);
    snprintf(mtext + n, sizeof mtext - n, "]}}");
    size_t blen = pm_test_multipart(mbody, sizeof mbody, WSIDE_HEAD "}}", h, WSIDE * WSIDE,
                                    "/terrain/heights");
    cr_assert_gt(blen, (size_t)64 * 1024, "read on a worker");
    pm_http_response b = post("/v1/roads?format=glb", PM_TEST_MULTIPART_TYPE, mbody, blen);
    cr_assert_eq(b.status, 200, "%s", b.body);
    memset(mbody, 0, blen);   /* the client's copy: nothing the server holds */
    pm_http_response a = post("/v1/roads?format=glb", "application/json", mtext, strlen(mtext));
    cr_assert_eq(a.status, 200, "%s", a.body);
    char ea[128], eb[128], xc[32];
    cr_expect_str_eq(svc_header(&a, "ETag", ea, sizeof ea), svc_header(&b, "ETag", eb, sizeof eb));
    cr_expect_str_eq(svc_header(&a, "X-Cache", xc, sizeof xc), "HIT");
    cr_expect(a.body_len == b.body_len && memcmp(a.body, b.body, a.body_len) == 0, "same GLB");
    pm_http_response_free(&a);
    pm_http_response_free(&b);
    /* 1024 x 1024 heights (4 MiB): a body mapped on its own, so a read
     * after it was unmapped would take the server down. */
    enum { BIG = 1024 };
    static float hb[BIG * BIG];
    static char bbody[BIG * BIG * 4 + 1024];
    for (int i = 0; i < BIG * BIG; i++) hb[i] = (float)(i % 1000) / 16.0f;
    blen = pm_test_multipart(bbody, sizeof bbody, "{\"points\": [[5,0,5],[900,0,700]], \"terrain\": "
                             "{\"cell\": 1, \"cols\": 1024, \"rows\": 1024, \"mesh\": false}}",
                             hb, BIG * BIG, "/terrain/heights");
    /* What the API makes of it in this process, the body alive throughout. */
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_output o = pm_api_output_default(PM_API_FMT_GLB);
    pm_api_request rq = {.gen = &pm_api_gen_road, .body = bbody, .body_len = blen,
                         .content_type = PM_TEST_MULTIPART_TYPE};
    pm_api_run run = {.lim = &lim, .outputs = &o, .noutputs = 1};
    pm_api_buf want;
    pm_api_key key;
    cr_assert_eq(pm_api_request_run(&rq, &run, &want, &key, &p), 0, "%s", p.detail);
    char hex[33], etag[40];
    pm_api_key_hex(key, hex);
    snprintf(etag, sizeof etag, "\"%s\"", hex);
    for (int k = 0; k < 2; k++) {
        b = post("/v1/roads?format=glb", PM_TEST_MULTIPART_TYPE, bbody, blen);
        cr_expect_eq(b.status, 200, "%s", b.body);
        cr_expect_str_eq(svc_header(&b, "X-Cache", xc, sizeof xc), k ? "HIT" : "MISS");
        cr_expect_str_eq(svc_header(&b, "ETag", eb, sizeof eb), etag);
        cr_expect(b.body_len == want.len && memcmp(b.body, want.data, want.len) == 0,
                  "the GLB of the heights sent");
        pm_http_response_free(&b);
    }
    free(want.data);
    pm_api_problem_free(&p);
    cr_expect_eq(svc_wait_metric_below(&srv, "procmesh_memory_inflight_bytes", 0), 0,
                 "the upload's charge is released");
}

Test(http_ingest, binary_errors_are_problems) {
    fill();
    heights[7] = 1e9f;
    size_t blen = pm_test_multipart(body, sizeof body, HEAD "}}", heights, COLS * ROWS,
                                    "/terrain/heights");
    pm_http_response r = post("/v1/roads", PM_TEST_MULTIPART_TYPE, body, blen);
    svc_expect_problem(&r, "/terrain/heights/7");
    pm_http_response_free(&r);
    blen = pm_test_multipart(body, sizeof body, HEAD "}}", heights, COLS * ROWS - 1,
                             "/terrain/heights");
    r = post("/v1/roads", PM_TEST_MULTIPART_TYPE, body, blen);
    svc_expect_problem(&r, "/terrain/heights");
    pm_http_response_free(&r);
    /* No boundary, or not the one the parts use: 400. */
    r = post("/v1/roads", "multipart/form-data", body, blen);
    cr_expect_eq(r.status, 400, "%s", r.body);
    cr_expect(strstr((const char *)r.body, "malformed-multipart") != NULL, "%s", r.body);
    pm_http_response_free(&r);
    r = post("/v1/roads", "multipart/form-data; boundary=other", body, blen);
    cr_expect_eq(r.status, 400, "%s", r.body);
    pm_http_response_free(&r);
    /* Other media types are still refused. */
    r = post("/v1/roads", "application/octet-stream", body, blen);
    cr_expect_eq(r.status, 415, "%s", r.body);
    pm_http_response_free(&r);
}

/* ---- the body limit of binary uploads (docs/road.md "Binary heightfields") ---- */

#define SIDE 512
#define BIG_HEAD "{\"points\": [[10,0,10],[500,0,300],[1000,0,900]], \"terrain\": {\"cell\": 2, " \
                 "\"cols\": 512, \"rows\": 512, \"mesh\": false"

/* A raw POST that declares len body bytes and sends none: the answer a
 * body of that size gets from its headers alone (a client would stop
 * sending once it arrives). Returns the status; the body goes into out. */
static int declared_post_wait(int port, const char *ctype, size_t len, char *out, size_t cap,
                              int wait_ms) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char head[512];
    int n = snprintf(head, sizeof head,
                     "POST /v1/roads HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\n\r\n", ctype, len);
    cr_assert_eq(send(fd, head, (size_t)n, MSG_NOSIGNAL), n);
    size_t got = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (got + 1 < cap && poll(&p, 1, wait_ms) == 1) {
        ssize_t k = recv(fd, out + got, cap - 1 - got, 0);
        if (k <= 0) break;
        got += (size_t)k;
    }
    out[got] = '\0';
    close(fd);
    int status = 0;
    sscanf(out, "HTTP/1.1 %d", &status);
    return status;
}
static int declared_post(int port, const char *ctype, size_t len, char *out, size_t cap) {
    return declared_post_wait(port, ctype, len, out, cap, 5000);
}

/* The documented goal input, 512 x 512 float32 heights (1 MiB, over the
 * 1 MiB --body-limit with the request part), works with every default;
 * the memory it took while it arrived is given back. */
Test(http_ingest, default_limits_take_512x512_float32) {
    static float h[SIDE * SIDE];
    static char big[SIDE * SIDE * 4 + 4096];
    for (int i = 0; i < SIDE * SIDE; i++) h[i] = (float)((i * 13) % 512) / 64.0f;
    size_t n = pm_test_multipart(big, sizeof big, BIG_HEAD "}}", h, SIDE * SIDE, "/terrain/heights");
    cr_assert_gt(n, (size_t)1 << 20, "over the JSON body limit");
    pm_http_response r = post("/v1/roads?format=glb", PM_TEST_MULTIPART_TYPE, big, n);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_expect(r.body_len > 12 && memcmp(r.body, "glTF", 4) == 0);
    pm_http_response_free(&r);
    r = post("/v1/roads?format=glb", PM_TEST_MULTIPART_TYPE, big, n);
    char xc[32];
    cr_expect_str_eq(svc_header(&r, "X-Cache", xc, sizeof xc), "HIT");
    pm_http_response_free(&r);
    cr_expect_eq(svc_wait_metric_below(&srv, "procmesh_memory_inflight_bytes", 0), 0,
                 "the upload's charge is released");
    /* The same size as JSON is still refused: the larger cap is for
     * binary bodies only. */
    char out[2048];
    cr_expect_eq(declared_post(srv.port, "application/json", n, out, sizeof out), 413, "%s", out);
    cr_expect(strstr(out, "(--body-limit)") != NULL, "%s", out);
}

/* Past the binary cap (17M by default): 413 problem+json naming the limit,
 * from the declared length, before any of the body is read. */
Test(http_ingest, over_the_binary_limit_is_413_naming_it) {
    char out[2048];
    int st = declared_post(srv.port, PM_TEST_MULTIPART_TYPE, 17 * 1048576 + 1, out, sizeof out);
    cr_expect_eq(st, 413, "%s", out);
    cr_expect(strstr(out, "application/problem+json") != NULL, "%s", out);
    cr_expect(strstr(out, "the limit of 17825792 bytes (--binary-body-limit") != NULL, "%s", out);
    /* Exactly at the limit: no answer yet, the server waits for the body. */
    st = declared_post_wait(srv.port, PM_TEST_MULTIPART_TYPE, 17 * 1048576, out, sizeof out, 300);
    cr_expect_eq(st, 0, "%s", out);
}

static pm_test_server own;
static void own_stop(void) { cr_assert_eq(pm_test_server_stop(&own), 0, "clean exit"); }

static pm_http_response own_post(const char *ctype, const void *data, size_t len, int chunked) {
    char ct[128];
    snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
    const char *hd[] = {ct, NULL};
    pm_http_request req = {.method = "POST", .path = "/v1/roads", .headers = hd, .body = data,
                           .body_len = len, .chunked = chunked};
    pm_http_response r;
    cr_assert_eq(pm_http(&own, &req, &r), 0);
    return r;
}

/* The request part stays within --body-limit; the whole body within
 * --binary-body-limit, also when it comes chunked (no declared length). */
Test(http_ingest_limits, each_part_of_a_binary_body_has_its_limit, .fini = own_stop) {
    const char *args[] = {"--body-limit", "16K", "--binary-body-limit", "64K", NULL};
    cr_assert_eq(pm_test_server_start(&own, args), 0);
    static float h[COLS * ROWS];
    static char req[20000], b[40000];
    /* 7.7 KB of float32 and a 2 KB request: over 16K? no; within both. */
    size_t n = pm_test_multipart(b, sizeof b, HEAD "}}", h, COLS * ROWS, "/terrain/heights");
    pm_http_response r = own_post(PM_TEST_MULTIPART_TYPE, b, n, 0);
    cr_expect_eq(r.status, 200, "%s", r.body);
    pm_http_response_free(&r);
    /* A request part over 16K (blanks) is refused though the body is
     * within 64K. */
    memset(req, ' ', sizeof req - 1);
    memcpy(req + sizeof req - 1 - strlen(HEAD "}}"), HEAD "}}", strlen(HEAD "}}"));
    n = pm_test_multipart(b, sizeof b, req, h, COLS * ROWS, "/terrain/heights");
    r = own_post(PM_TEST_MULTIPART_TYPE, b, n, 0);
    cr_expect_eq(r.status, 413, "%s", r.body);
    cr_expect(strstr((const char *)r.body, "request part") &&
              strstr((const char *)r.body, "(--body-limit)"), "%s", r.body);
    pm_http_response_free(&r);
    /* 80K of heights: past 64K, declared or chunked. */
    static float hh[20000];
    static char bb[20000 * 4 + 4096];
    n = pm_test_multipart(bb, sizeof bb, HEAD "}}", hh, 20000, "/terrain/heights");
    for (int chunked = 0; chunked <= 1; chunked++) {
        r = own_post(PM_TEST_MULTIPART_TYPE, bb, n, chunked);
        cr_expect_eq(r.status, 413, "chunked %d: %s", chunked, r.body);
        cr_expect(strstr((const char *)r.body, "the limit of 65536 bytes (--binary-body-limit"),
                  "%s", r.body);
        pm_http_response_free(&r);
    }
    cr_expect_eq(svc_wait_metric_below(&own, "procmesh_memory_inflight_bytes", 0), 0);
}

/* A binary body is charged to --max-inflight-mb as it arrives: one that is
 * more than the whole cap is refused before it is read, naming it. */
Test(http_ingest_limits, a_binary_body_is_charged_to_the_memory_budget, .fini = own_stop) {
    const char *args[] = {"--max-inflight-mb", "1", NULL};
    cr_assert_eq(pm_test_server_start(&own, args), 0);
    char out[2048];
    int st = declared_post(own.port, PM_TEST_MULTIPART_TYPE, 1536 * 1024, out, sizeof out);
    cr_expect_eq(st, 413, "%s", out);
    cr_expect(strstr(out, "max_inflight_mb (1 MiB, --max-inflight-mb)") != NULL, "%s", out);
    /* A JSON body of that size is not charged so: refused by its own limit. */
    st = declared_post(own.port, "application/json", 1536 * 1024, out, sizeof out);
    cr_expect(st == 413 && strstr(out, "(--body-limit)"), "%s", out);
}

/* ---- PNG heightmaps ---- */

/* A 16-bit grey heightmap with ?png_scale and ?png_offset: the same key,
 * ETag and bytes as the same heights sent as JSON. */
Test(http_ingest, png_heightmap_same_etag_as_json) {
    static unsigned s[COLS * ROWS];
    for (int i = 0; i < COLS * ROWS; i++) s[i] = (unsigned)((i * 7919) % 60000);
    size_t n = (size_t)snprintf(text, sizeof text, HEAD ", \"heights\": [");
    for (int i = 0; i < COLS * ROWS; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%.17g", i ? "," : "",
                              -5.0 + 0.0009765625 * s[i]);
    snprintf(text + n, sizeof text - n, "]}}");
    pm_http_response a = post("/v1/roads?format=glb", "application/json", text, strlen(text));
    cr_assert_eq(a.status, 200, "%s", a.body);
    pm_test_png png;
    pm_test_png_make(&png, COLS, ROWS, 16, PNG_COLOR_TYPE_GRAY, 0, s);
    size_t blen = pm_test_multipart_part(body, sizeof body, HEAD "}}", png.data, png.len,
                                         "/terrain/heights", "image/png");
    pm_http_response b = post("/v1/roads?format=glb&png_scale=0.0009765625&png_offset=-5",
                              PM_TEST_MULTIPART_TYPE, body, blen);
    cr_assert_eq(b.status, 200, "%s", b.body);
    char ea[128], eb[128];
    cr_expect_str_eq(svc_header(&a, "ETag", ea, sizeof ea), svc_header(&b, "ETag", eb, sizeof eb));
    cr_expect(a.body_len == b.body_len && memcmp(a.body, b.body, a.body_len) == 0, "same GLB");
    pm_http_response_free(&a);
    pm_http_response_free(&b);
    /* The options are checked, and only go with a PNG part. */
    const char *bad[] = {"/v1/roads?png_scale=abc", "/v1/roads?png_scale=0",
                         "/v1/roads?png_offset=1&png_offset=2"};
    for (int i = 0; i < 3; i++) {
        b = post(bad[i], PM_TEST_MULTIPART_TYPE, body, blen);
        svc_expect_problem(&b, i == 2 ? "/png_offset" : "/png_scale");
        pm_http_response_free(&b);
    }
    b = post("/v1/roads?png_scale=2", "application/json", text, strlen(text));
    svc_expect_problem(&b, "/png_scale");
    pm_http_response_free(&b);
    /* Colour images are refused at the part. */
    static unsigned rgb[COLS * ROWS * 3];
    pm_test_png bad_png;
    pm_test_png_make(&bad_png, COLS, ROWS, 8, PNG_COLOR_TYPE_RGB, 0, rgb);
    blen = pm_test_multipart_part(body, sizeof body, HEAD "}}", bad_png.data, bad_png.len,
                                  "/terrain/heights", "image/png");
    b = post("/v1/roads", PM_TEST_MULTIPART_TYPE, body, blen);
    svc_expect_problem(&b, "/terrain/heights");
    cr_expect(strstr((const char *)b.body, "grayscale") != NULL, "%s", b.body);
    pm_http_response_free(&b);
    free(bad_png.data);
    free(png.data);
}

/* The same PNG body with another scale is another road: the query takes
 * part in what the body means (a large body, read by a worker, too). */
Test(http_ingest, png_scale_changes_the_key) {
    enum { MID = 256 };
    static unsigned s[MID * MID];
    uint64_t x = 88172645463325252u;   /* noise: the PNG stays over 64 KiB */
    for (int i = 0; i < MID * MID; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        s[i] = (unsigned)(x >> 52);
    }
    pm_test_png png;
    pm_test_png_make(&png, MID, MID, 16, PNG_COLOR_TYPE_GRAY, 0, s);
    static char big[MID * MID * 4 + 4096];
    size_t n = pm_test_multipart_part(big, sizeof big,
                                      "{\"points\": [[10,0,10],[300,0,200],[500,0,450]], \"terrain\": "
                                      "{\"cell\": 2, \"cols\": 256, \"rows\": 256, \"mesh\": false}}",
                                      png.data, png.len,
                                      "/terrain/heights", "image/png");
    cr_assert_gt(n, 64 * 1024, "parsed by a worker");
    const char *paths[] = {"/v1/roads?format=glb&png_scale=0.01", "/v1/roads?format=glb&png_scale=0.02",
                           "/v1/roads?format=glb&png_scale=0.01"};
    char e[3][128], xc[32];
    for (int i = 0; i < 3; i++) {
        pm_http_response r = post(paths[i], PM_TEST_MULTIPART_TYPE, big, n);
        cr_assert_eq(r.status, 200, "%s", r.body);
        svc_header(&r, "ETag", e[i], sizeof e[i]);
        cr_expect_str_eq(svc_header(&r, "X-Cache", xc, sizeof xc), i == 2 ? "HIT" : "MISS", "%d", i);
        pm_http_response_free(&r);
    }
    cr_expect_str_neq(e[0], e[1]);
    cr_expect_str_eq(e[0], e[2]);
    free(png.data);
}

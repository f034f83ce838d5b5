/* Black box: heightfields as JSON text and as multipart/form-data float32
 * parts (docs/road.md "Binary heightfields"), against the real binary. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_test_multipart.h"
#include "svc_fixtures.h"

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

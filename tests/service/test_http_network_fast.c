/* Black box: POST /v1/networks through the network's fast reader
 * (api/req_network_fast.c), on the HTTP thread (small bodies) and on a
 * worker (bodies over 64 KiB), against the document path run here in
 * process (pm_api_parse_body, then parse): the same status, ETag and
 * answer bytes, or the same problem (all but its request id). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc_fixtures.h"
#include "pm_api/reader.h"
#include "pm_api/request.h"

extern const pm_api_generator pm_api_gen_network;

static pm_test_server srv;

static void start(void) { cr_assert_eq(pm_test_server_start(&srv, NULL), 0); }
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_network_fast, .init = start, .fini = stop, .timeout = 120);

/* A problem+json without its request id, as sorted compact text. */
static char *problem_text(json_t *j) {
    json_object_del(j, "instance");
    char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(j);
    return s;
}

/* body over HTTP (JSON answer) against the document path in process. */
static void same(const char *body) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_arena *a = pm_arena_create(0);
    pm_api_job job = {0};
    json_t *doc = NULL;
    pm_api_buf out = {0};
    pm_scene *scene = NULL;
    char hex[33] = "";
    const pm_api_output o = pm_api_output_default(PM_API_FMT_JSON);
    int rc = pm_api_parse_body(body, strlen(body), &doc, &p) == 0 &&
                     pm_api_job_parse(&job, &pm_api_gen_network, &lim, a, doc, &p) == 0
                 ? 0
                 : -1;
    if (rc == 0) {
        pm_api_job_key(&job, &o, hex);
        rc = pm_api_job_generate(&job, NULL, &scene, &p) == 0 &&
                     pm_api_job_encode(&job, scene, &o, hex, NULL, &out, &p) == 0
                 ? 0
                 : -1;
    }
    pm_http_response r = svc_post(&srv, "/v1/networks?format=json", body, NULL);
    char etag[128];
    if (rc == 0) {
        char want[40];
        snprintf(want, sizeof want, "\"%s\"", hex);
        cr_expect_eq(r.status, 200, "%.200s: %.300s", body, r.body);
        cr_expect_str_eq(svc_header(&r, "ETag", etag, sizeof etag), want, "%.200s", body);
        cr_expect(r.body_len == out.len && memcmp(r.body, out.data, out.len) == 0,
                  "%.200s: the answer's bytes differ", body);
    } else {
        cr_expect_eq(r.status, p.status, "%.200s: %ld, want %d", body, r.status, p.status);
        char *want = problem_text(pm_api_problem_json(&p, "x")), *got = problem_text(svc_json(&r));
        cr_expect_str_eq(got, want, "%.200s", body);
        free(want);
        free(got);
    }
    pm_http_response_free(&r);
    free(out.data);
    pm_api_job_end(&job);
    json_decref(doc);
    pm_arena_destroy(a);
    pm_api_problem_free(&p);
}

/* A crossroads with a bend, mixed ids, one edge without its sidewalk. */
#define CROSS                                                                                     \
    "{\"nodes\": [{\"id\": 0, \"position\": [0, 0]}, {\"id\": \"n\", \"position\": [0, 1, -70]}," \
    " {\"id\": \"s\", \"position\": [0, 70]}, {\"id\": 3, \"position\": [70, 0]},"             \
    " {\"id\": 4, \"position\": [-70, 0.5, 0]}], \"edges\": [{\"from\": 0, \"to\": \"n\"},"       \
    " {\"from\": \"s\", \"to\": 0, \"width\": 8}, {\"from\": 0, \"to\": 3, \"sidewalk\": null},"    \
    " {\"from\": 4, \"to\": 0, \"points\": [[-35, 4]]}], \"sidewalk\": {\"curb_height\": 0.2}}"

/* An n x n grid town at 60 m with ids long enough for a body over 64 KiB
 * at n = 20; tail (may be "") goes before the closing brace. */
static char *grid(int n, const char *tail) {
    size_t cap = 1 << 20, len = 0;
    char *b = malloc(cap);
    cr_assert_not_null(b);
    len += (size_t)snprintf(b + len, cap - len, "{\"nodes\": [");
    for (int i = 0; i < n * n; i++)
        len += (size_t)snprintf(b + len, cap - len, "%s{\"id\": \"node-%04d-%s\", \"position\": [%d, %d]}",
                                i ? ", " : "", i, "abcdefghijklmnopqrstuvwxyz", 60 * (i % n), 60 * (i / n));
    len += (size_t)snprintf(b + len, cap - len, "], \"edges\": [");
    int e = 0;
    for (int i = 0; i < n * n; i++)
        for (int d = 0; d < 2; d++) {
            int j = d ? i + n : i + 1;
            if ((!d && i % n == n - 1) || j >= n * n) continue;
            len += (size_t)snprintf(b + len, cap - len,
                                    "%s{\"from\": \"node-%04d-%s\", \"to\": \"node-%04d-%s\", \"width\": %g}",
                                    e++ ? ", " : "", i, "abcdefghijklmnopqrstuvwxyz", j,
                                    "abcdefghijklmnopqrstuvwxyz", 6 + (i % 3) * 0.5);
        }
    len += (size_t)snprintf(b + len, cap - len, "]%s}", tail);
    cr_assert_lt(len + 1, cap);
    return b;
}

Test(http_network_fast, small_bodies_read_on_the_http_thread) {
    same(CROSS);
    same("{\"nodes\": [{\"id\": 1, \"position\": [0, 0]}, {\"id\": 2, \"position\": [50, 0]}], "
         "\"edges\": [{\"from\": 1, \"to\": 2, \"sidewalk\": null}], \"max_segment\": 1000}");
    /* Refused after reading (the fast reader's own problem), and refused
     * while reading (the document path's). */
    same("{\"nodes\": [{\"id\": 1, \"position\": [0, 0]}, {\"id\": 1, \"position\": [50, 0]}], "
         "\"edges\": [{\"from\": 1, \"to\": 2}]}");
    same("{\"nodes\": [{\"id\": 1, \"position\": [0, 0]}, {\"id\": 2, \"position\": [50, 0]}], "
         "\"edges\": [{\"from\": 1, \"to\": 2, \"lanes\": 2}], \"width\": 0}");
    same("{\"nodes\": [{\"id\": 1, \"position\": [0, 0]}], \"edges\": [");
    same("{\"type\": \"FeatureCollection\", \"features\": [{\"type\": \"Feature\", \"geometry\": "
         "{\"type\": \"LineString\", \"coordinates\": [[10.17, 49.37], [10.171, 49.37]]}}]}");
}

Test(http_network_fast, bodies_over_64_kib_read_on_a_worker) {
    char *ok = grid(20, ", \"sidewalk\": {\"width\": 1.5}");
    cr_assert_gt(strlen(ok), 64 * 1024);
    same(ok);
    char *dup = grid(20, ", \"width\": 5, \"snap\": 0.9");   /* widths under 10 x snap */
    same(dup);
    char *bad = grid(20, ", \"colour\": \"red\"");
    same(bad);
    free(ok);
    free(dup);
    free(bad);
}

/* Black box: the cache as clients see it: MISS then HIT with identical
 * bytes, ETag / 304, canonical keys, single-flight. */
#include <jansson.h>

#include "svc_fixtures.h"

static pm_test_server srv;

static void start_default(void) { cr_assert_eq(pm_test_server_start(&srv, NULL), 0); }
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_cache, .init = start_default, .fini = stop);

Test(http_cache, miss_then_hit_with_identical_bytes_and_etag) {
    char a[128], b[128], buf[128];
    pm_http_response m = svc_post(&srv, SVC_ROUTE, SVC_BODY, NULL);
    cr_assert_eq(m.status, 200);
    cr_assert_str_eq(svc_header(&m, "X-Cache", buf, sizeof buf), "MISS");
    svc_header(&m, "ETag", a, sizeof a);
    cr_assert_eq(strlen(a), 34, "a strong ETag of 32 hex digits: %s", a);
    cr_assert_eq(a[0], '"');
    cr_assert_str_eq(svc_header(&m, "Cache-Control", buf, sizeof buf), "public, max-age=3600");
    cr_assert_str_eq(svc_header(&m, "Vary", buf, sizeof buf), "Accept, Accept-Encoding");
    const char *st = svc_header(&m, "Server-Timing", buf, sizeof buf);
    cr_assert(strncmp(st, "gen;dur=", 8) == 0 && strstr(st, ", enc;dur=") != NULL, "%s", st);
    /* The key in the JSON mesh is the ETag. */
    json_t *j = json_loadb((const char *)m.body, m.body_len, 0, NULL);
    cr_assert_eq(strncmp(json_string_value(json_object_get(j, "key")), a + 1, 32), 0);
    json_decref(j);

    pm_http_response h = svc_post(&srv, SVC_ROUTE, SVC_BODY, NULL);
    cr_assert_eq(h.status, 200);
    cr_assert_str_eq(svc_header(&h, "X-Cache", buf, sizeof buf), "HIT");
    cr_assert_str_eq(svc_header(&h, "ETag", b, sizeof b), a);
    cr_assert_null(pm_http_header(&h, "Server-Timing", buf, sizeof buf), "no timing on a hit");
    cr_assert_eq(h.body_len, m.body_len);
    cr_assert_eq(memcmp(h.body, m.body, m.body_len), 0);
    pm_http_response_free(&m);
    pm_http_response_free(&h);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_cache_hits_total"), 1);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_cache_misses_total"), 1);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_cache_entries"), 1);
    cr_assert_gt(pm_test_metric(&srv, "procmesh_cache_bytes"), 0);
}

Test(http_cache, equivalent_requests_share_one_entry) {
    char a[128], b[128], buf[128];
    pm_http_response m = svc_post(&srv, SVC_ROUTE, SVC_BODY, NULL);
    svc_header(&m, "ETag", a, sizeof a);
    const char *same[] = {SVC_BODY_REORDERED, SVC_BODY_EXPLICIT_DEFAULT};
    for (int i = 0; i < 2; i++) {
        pm_http_response h = svc_post(&srv, SVC_ROUTE, same[i], NULL);
        cr_assert_eq(h.status, 200, "%s", h.body);
        cr_assert_str_eq(svc_header(&h, "X-Cache", buf, sizeof buf), "HIT", "variant %d", i);
        cr_assert_str_eq(svc_header(&h, "ETag", b, sizeof b), a);
        cr_assert_eq(h.body_len, m.body_len);
        cr_assert_eq(memcmp(h.body, m.body, m.body_len), 0);
        pm_http_response_free(&h);
    }
    /* Another format is another entry. */
    pm_http_response g = svc_post(&srv, SVC_ROUTE "?format=glb", SVC_BODY, NULL);
    cr_assert_str_eq(svc_header(&g, "X-Cache", buf, sizeof buf), "MISS");
    cr_assert_str_neq(svc_header(&g, "ETag", b, sizeof b), a);
    pm_http_response_free(&g);
    pm_http_response_free(&m);
}

/* A repeated request is answered from the request memo (no parse); an
 * equivalent but differently written one is parsed once, then remembered
 * too; a GET and a POST of the same request share the entry, not the memo. */
Test(http_cache, repeated_requests_skip_the_parse) {
    char a[128], b[128], buf[64];
    pm_http_response m = svc_post(&srv, SVC_ROUTE, SVC_BODY, NULL);
    svc_header(&m, "ETag", a, sizeof a);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_hits_total"), 0);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_misses_total"), 1);
    const char *seq[] = {SVC_BODY, SVC_BODY_REORDERED, SVC_BODY_REORDERED, SVC_BODY};
    const double memo_hits[] = {1, 1, 2, 3};
    for (int i = 0; i < 4; i++) {
        pm_http_response h = svc_post(&srv, SVC_ROUTE, seq[i], NULL);
        cr_assert_eq(h.status, 200);
        cr_assert_str_eq(svc_header(&h, "X-Cache", buf, sizeof buf), "HIT", "request %d", i);
        cr_assert_str_eq(svc_header(&h, "ETag", b, sizeof b), a, "request %d", i);
        cr_assert_eq(h.body_len, m.body_len);
        cr_assert_eq(memcmp(h.body, m.body, m.body_len), 0, "request %d", i);
        pm_http_response_free(&h);
        cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_hits_total"), memo_hits[i],
                     "after request %d", i);
    }
    for (int i = 0; i < 2; i++) {
        pm_http_response g;
        cr_assert_eq(pm_http_get(&srv, SVC_QUERY "&format=json", &g), 0);
        cr_assert_eq(g.status, 200);
        cr_assert_str_eq(svc_header(&g, "ETag", b, sizeof b), a);
        cr_assert_str_eq(svc_header(&g, "X-Cache", buf, sizeof buf), "HIT");
        pm_http_response_free(&g);
    }
    cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_hits_total"), 4);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_misses_total"), 3);
    /* The same body asking for another format is another request. */
    pm_http_response g = svc_post(&srv, SVC_ROUTE, SVC_BODY, "Accept: model/gltf-binary");
    cr_assert_str_eq(svc_header(&g, "X-Cache", buf, sizeof buf), "MISS");
    cr_assert_str_neq(svc_header(&g, "ETag", b, sizeof b), a);
    pm_http_response_free(&g);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_misses_total"), 4);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_cache_misses_total"), 2);
    pm_http_response_free(&m);
}

/* A body too big to parse on the HTTP thread is hashed on a worker: the
 * second time it is answered without a parse too. */
Test(http_cache, big_repeated_bodies_skip_the_parse) {
    size_t pad = 80 * 1024, n = strlen(SVC_BODY);
    char *big = malloc(n + pad + 1);
    memcpy(big, SVC_BODY, n);
    memset(big + n, ' ', pad);   /* trailing white space: the same request */
    big[n + pad] = '\0';
    char a[128], b[128], buf[64];
    pm_http_response small = svc_post(&srv, SVC_ROUTE, SVC_BODY, NULL);
    svc_header(&small, "ETag", a, sizeof a);
    for (int i = 0; i < 2; i++) {
        pm_http_response h = svc_post(&srv, SVC_ROUTE, big, NULL);
        cr_assert_eq(h.status, 200);
        cr_assert_str_eq(svc_header(&h, "X-Cache", buf, sizeof buf), "HIT");
        cr_assert_str_eq(svc_header(&h, "ETag", b, sizeof b), a);
        cr_assert_eq(h.body_len, small.body_len);
        cr_assert_eq(memcmp(h.body, small.body, h.body_len), 0);
        pm_http_response_free(&h);
        cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_hits_total"), i,
                     "request %d", i);
    }
    cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_misses_total"), 2);
    pm_http_response_free(&small);
    free(big);
}

Test(http_cache, if_none_match_gives_304) {
    char etag[128], buf[256], hdr[300];
    pm_http_response m = svc_post(&srv, SVC_ROUTE, SVC_BODY, NULL);
    svc_header(&m, "ETag", etag, sizeof etag);
    pm_http_response_free(&m);
    const char *forms[] = {"%s", "W/%s", "\"0000\", %s", "*"};
    for (int i = 0; i < 4; i++) {
        char value[200];
        snprintf(value, sizeof value, forms[i], etag);
        snprintf(hdr, sizeof hdr, "If-None-Match: %s", value);
        pm_http_response r = svc_post(&srv, SVC_ROUTE, SVC_BODY, hdr);
        cr_assert_eq(r.status, 304, "form %s", value);
        cr_assert_eq(r.body_len, 0);
        cr_assert_str_eq(svc_header(&r, "ETag", buf, sizeof buf), etag);
        cr_assert_str_eq(svc_header(&r, "Cache-Control", buf, sizeof buf),
                         "public, max-age=3600");
        cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT");
        pm_http_response_free(&r);
    }
    pm_http_response r = svc_post(&srv, SVC_ROUTE, SVC_BODY, "If-None-Match: \"0123\"");
    cr_assert_eq(r.status, 200);
    pm_http_response_free(&r);
}

Test(http_cache, a_miss_that_resolves_also_gives_304) {
    /* The key is a pure function of the request: learn it from one server,
     * then ask a fresh one (empty cache) with If-None-Match. */
    char etag[128], buf[128], hdr[200];
    pm_http_response m = svc_post(&srv, SVC_ROUTE, SVC_BODY, NULL);
    svc_header(&m, "ETag", etag, sizeof etag);
    pm_http_response_free(&m);
    pm_test_server fresh;
    cr_assert_eq(pm_test_server_start(&fresh, NULL), 0);
    snprintf(hdr, sizeof hdr, "If-None-Match: %s", etag);
    pm_http_response r = svc_post(&fresh, SVC_ROUTE, SVC_BODY, hdr);
    cr_assert_eq(r.status, 304);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "MISS");
    cr_assert_str_eq(svc_header(&r, "ETag", buf, sizeof buf), etag);
    pm_http_response_free(&r);
    r = svc_post(&fresh, SVC_ROUTE, SVC_BODY, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT", "the 304 stored it");
    pm_http_response_free(&r);
    cr_assert_eq(pm_test_server_stop(&fresh), 0);
}

Test(http_cache_heavy, concurrent_identical_requests_generate_once, .fini = stop) {
    enum { N = 8 };
    const char *args[] = {"--deadline-ms", "300000", SVC_HEAVY_FLAGS, NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char body[512];
    svc_slow_body(body, sizeof body, 1);
    svc_call c[N];
    for (int i = 0; i < N; i++) svc_call_start(&c[i], &srv, SVC_SLOW_PATH, body);
    for (int i = 0; i < N; i++) svc_call_join(&c[i]);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(c[i].r.status, 200, "call %d: %ld %s", i, c[i].r.status, c[i].r.body);
        cr_assert_eq(c[i].r.body_len, c[0].r.body_len);
        cr_assert_eq(memcmp(c[i].r.body, c[0].r.body, c[0].r.body_len), 0);
    }
    for (int i = 0; i < N; i++) pm_http_response_free(&c[i].r);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_generations_total{generator=\"" SVC_GENERATOR "\",result=\"ok\"}"), 1);
    double joins = pm_test_metric(&srv, "procmesh_cache_singleflight_joins_total");
    double hits = pm_test_metric(&srv, "procmesh_cache_hits_total");
    cr_assert_eq(joins + hits, N - 1);
    cr_assert_geq(joins, 1, "at least one request joined the one in flight");
    cr_assert_eq(pm_test_metric(&srv, "procmesh_cache_misses_total"), 1);
}

Test(http_cache_off, without_memory_every_request_generates, .fini = stop) {
    const char *args[] = {"--cache-mb", "0", NULL};
    cr_assert_eq(pm_test_server_start(&srv, args), 0);
    char buf[64];
    pm_http_response first = svc_post(&srv, SVC_ROUTE, SVC_BODY, NULL);
    for (int i = 0; i < 2; i++) {
        pm_http_response r = svc_post(&srv, SVC_ROUTE, SVC_BODY, NULL);
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "MISS");
        cr_assert_eq(r.body_len, first.body_len);
        cr_assert_eq(memcmp(r.body, first.body, r.body_len), 0);
        pm_http_response_free(&r);
    }
    pm_http_response_free(&first);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_generations_total{generator=\"" SVC_GENERATOR "\",result=\"ok\"}"), 3);
    /* The memo knew the key every time; the entry was gone, so it generated. */
    cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_hits_total"), 2);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_cache_misses_total"), 3);
}

Test(http_cache, errors_are_not_cached) {
    for (int i = 0; i < 2; i++) {
        pm_http_response r = svc_post(&srv, SVC_ROUTE, SVC_BODY_INVALID, NULL);
        cr_assert_eq(r.status, 422);
        char buf[64];
        cr_assert_null(pm_http_header(&r, "ETag", buf, sizeof buf));
        cr_assert_null(pm_http_header(&r, "X-Cache", buf, sizeof buf));
        pm_http_response_free(&r);
    }
    cr_assert_eq(pm_test_metric(&srv, "procmesh_cache_entries"), 0);
    /* nor remembered: each one is read and refused again */
    cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_hits_total"), 0);
    cr_assert_eq(pm_test_metric(&srv, "procmesh_request_memo_misses_total"), 2);
}

/* Header rules: request ids, If-None-Match, JSON content types, CORS. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

Test(headers, request_ids_that_may_be_echoed) {
    cr_assert(pm_svc_request_id_ok("abc-123_X.y:z"));
    cr_assert(pm_svc_request_id_ok("0e4f5b8a-9b2c-4d3e-8f00-112233445566"));
    char long_ok[129], too_long[130];
    memset(long_ok, 'a', 128);
    long_ok[128] = '\0';
    memset(too_long, 'a', 129);
    too_long[129] = '\0';
    cr_assert(pm_svc_request_id_ok(long_ok));
    cr_assert_not(pm_svc_request_id_ok(too_long));
    cr_assert_not(pm_svc_request_id_ok(""));
    cr_assert_not(pm_svc_request_id_ok("a b"));
    cr_assert_not(pm_svc_request_id_ok("a\"b"));
    cr_assert_not(pm_svc_request_id_ok("x\r\nSet-Cookie: y"));
    cr_assert_not(pm_svc_request_id_ok("caf\xc3\xa9"));
}

Test(headers, new_request_ids_are_v4_uuids) {
    char a[37], b[37];
    pm_svc_request_id_new(a);
    pm_svc_request_id_new(b);
    cr_assert_eq(strlen(a), 36);
    cr_assert_str_neq(a, b);
    cr_assert_eq(a[14], '4', "version nibble: %s", a);
    cr_assert(strchr("89ab", a[19]) != NULL, "variant: %s", a);
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            cr_assert_eq(a[i], '-');
        else
            cr_assert(strchr("0123456789abcdef", a[i]) != NULL);
    }
    cr_assert(pm_svc_request_id_ok(a));
}

/* Ids are drawn in batches per thread: across batch boundaries and across
 * threads every id must still be a distinct, well-formed v4 UUID. */
#define IDS_PER_THREAD 1000
static char ids[2 * IDS_PER_THREAD][37];

static void *make_ids(void *arg) {
    char (*out)[37] = arg;
    for (int i = 0; i < IDS_PER_THREAD; i++) pm_svc_request_id_new(out[i]);
    return NULL;
}

static int cmp_id(const void *a, const void *b) { return strcmp(a, b); }

Test(headers, request_ids_stay_distinct_across_batches_and_threads) {
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, make_ids, ids + IDS_PER_THREAD), 0);
    make_ids(ids[0]);
    pthread_join(t, NULL);
    for (int i = 0; i < 2 * IDS_PER_THREAD; i++) {
        cr_assert_eq(strlen(ids[i]), 36);
        cr_assert_eq(ids[i][14], '4', "version nibble: %s", ids[i]);
        cr_assert(strchr("89ab", ids[i][19]) != NULL, "variant: %s", ids[i]);
        cr_assert(pm_svc_request_id_ok(ids[i]));
    }
    qsort(ids, 2 * IDS_PER_THREAD, sizeof ids[0], cmp_id);
    for (int i = 1; i < 2 * IDS_PER_THREAD; i++)
        cr_assert_str_neq(ids[i - 1], ids[i], "id %d repeats", i);
}

Test(headers, if_none_match_follows_rfc_9110) {
    const char *k = "0123456789abcdef0123456789abcdef";
    cr_assert(pm_svc_etag_match("\"0123456789abcdef0123456789abcdef\"", k));
    cr_assert(pm_svc_etag_match("W/\"0123456789abcdef0123456789abcdef\"", k), "weak comparison");
    cr_assert(pm_svc_etag_match("*", k));
    cr_assert(pm_svc_etag_match("  * ", k));
    cr_assert(pm_svc_etag_match("\"aaa\", \"0123456789abcdef0123456789abcdef\"", k));
    cr_assert(pm_svc_etag_match("\"a,b\" ,W/\"0123456789abcdef0123456789abcdef\"", k));
    cr_assert(pm_svc_etag_match("garbage, \"0123456789abcdef0123456789abcdef\"", k));
    cr_assert_not(pm_svc_etag_match("\"0123456789abcdef0123456789abcdee\"", k));
    cr_assert_not(pm_svc_etag_match("0123456789abcdef0123456789abcdef", k), "unquoted");
    cr_assert_not(pm_svc_etag_match("\"0123456789abcdef0123456789abcdef", k), "unterminated");
    cr_assert_not(pm_svc_etag_match("\"0123456789abcdef\"", k));
    cr_assert_not(pm_svc_etag_match("", k));
    cr_assert_not(pm_svc_etag_match("\"x\", *", k), "* only alone");
    cr_assert_not(pm_svc_etag_match(NULL, k));
}

Test(headers, json_content_types) {
    cr_assert(pm_svc_is_json_type("application/json"));
    cr_assert(pm_svc_is_json_type("Application/JSON; charset=utf-8"));
    cr_assert(pm_svc_is_json_type(" application/json ;charset=UTF-8"));
    cr_assert(pm_svc_is_json_type("application/merge-patch+json"));
    cr_assert_not(pm_svc_is_json_type("text/plain"));
    cr_assert_not(pm_svc_is_json_type("application/x-www-form-urlencoded"));
    cr_assert_not(pm_svc_is_json_type("application/jsonp"));
    cr_assert_not(pm_svc_is_json_type("application/+json"));
    cr_assert_not(pm_svc_is_json_type("text/+json"));
    cr_assert_not(pm_svc_is_json_type(""));
    cr_assert_not(pm_svc_is_json_type(NULL));
}

Test(headers, cors_origin_from_configuration) {
    char out[256];
    cr_assert(pm_svc_cors_origin("*", NULL, out, sizeof out));
    cr_assert_str_eq(out, "*");
    cr_assert(pm_svc_cors_origin("*", "https://a.example", out, sizeof out));
    cr_assert_str_eq(out, "*");
    cr_assert_not(pm_svc_cors_origin("", "https://a.example", out, sizeof out));
    const char *list = "https://a.example, https://b.example:8443";
    cr_assert(pm_svc_cors_origin(list, "https://b.example:8443", out, sizeof out));
    cr_assert_str_eq(out, "https://b.example:8443");
    cr_assert(pm_svc_cors_origin(list, "https://a.example", out, sizeof out));
    cr_assert_str_eq(out, "https://a.example");
    cr_assert_not(pm_svc_cors_origin(list, "https://c.example", out, sizeof out));
    cr_assert_not(pm_svc_cors_origin(list, "https://a.exampl", out, sizeof out));
    cr_assert_not(pm_svc_cors_origin(list, NULL, out, sizeof out));
}

/* Black box: hostile HTTP input to every route. Each answer must be a 4xx
 * problem+json (or a 2xx where the input is in fact valid), the server must
 * stay up after each (GET /healthz), and it must still drain cleanly on
 * SIGTERM (exit 0). Run it under -DPM_SANITIZE=ON to catch memory errors
 * and leaks on these paths. */
#include <jansson.h>

#include "svc_fixtures.h"

static pm_test_server srv;

static const char *const routes[] = {
    "/v1/junctions", "/v1/roads",   "/v1/dungeons", "/v1/grids", "/v1/networks",
    "/healthz",      "/readyz",     "/metrics",     "/openapi.yaml",
};
#define NROUTES (sizeof routes / sizeof routes[0])

/* Where each generator expects a small array; 10k elements go there. */
static const char *const small_array_fmt[] = {
    "{\"arms\":%s}",
    "{\"points\":%s,\"width\":8}",
    "{\"seed\":1,\"rooms\":%s}",
    "{\"seed\":1,\"size\":%s}",
    "{\"nodes\":%s,\"edges\":[{\"from\":1,\"to\":2}]}",
};
#define NGENERATORS (sizeof small_array_fmt / sizeof small_array_fmt[0])

typedef struct {
    int checked, ok2xx;
} tally;
static tally t;

static char *repeat(const char *head, const char *unit, size_t n, const char *tail) {
    size_t h = strlen(head), u = strlen(unit), tl = strlen(tail);
    char *s = malloc(h + u * n + tl + 1);
    cr_assert_not_null(s);
    memcpy(s, head, h);
    for (size_t i = 0; i < n; i++) memcpy(s + h + i * u, unit, u);
    memcpy(s + h + u * n, tail, tl + 1);
    return s;
}

/* [e,e,...,e] with n elements. */
static char *big_array(const char *elem, size_t n) {
    size_t e = strlen(elem);
    char *s = malloc(n * (e + 1) + 3);
    cr_assert_not_null(s);
    size_t k = 0;
    s[k++] = '[';
    for (size_t i = 0; i < n; i++) {
        if (i) s[k++] = ',';
        memcpy(s + k, elem, e);
        k += e;
    }
    s[k++] = ']';
    s[k] = '\0';
    return s;
}

static void assert_alive(const char *what) {
    pm_http_response h;
    int rc = pm_http_get(&srv, "/healthz", &h);
    cr_assert(rc == 0 && h.status == 200, "server down after %s (healthz %ld)", what, h.status);
    pm_http_response_free(&h);
}

/* The answer to req is a 4xx problem+json whose status matches, or a 2xx;
 * want, when not 0, is the one status accepted. A hang shows up as no
 * answer within 10 s (the slowest answer here takes well under one). */
static void check_status(const char *what, const pm_http_request *in, long want) {
    pm_http_request req_copy = *in;
    const pm_http_request *req = &req_copy;
    if (!req_copy.timeout_ms) req_copy.timeout_ms = 10000;
    pm_http_response r;
    int rc = pm_http(&srv, req, &r);
    cr_assert_eq(rc, 0, "%s %s: no answer", what, req->path);
    char ct[128] = "";
    pm_http_header(&r, "Content-Type", ct, sizeof ct);
    if (want)
        cr_assert_eq(r.status, want, "%s %.80s: %ld, not %ld: %.300s", what, req->path, r.status,
                     want, r.body);
    if (r.status >= 200 && r.status < 300) {
        t.ok2xx++;
    } else {
        cr_assert(r.status >= 400 && r.status < 500, "%s %.80s: status %ld: %.300s", what,
                  req->path, r.status, r.body);
        cr_assert_str_eq(ct, "application/problem+json", "%s %.80s: %ld with %s: %.200s", what,
                         req->path, r.status, ct, r.body);
        json_error_t e;
        json_t *j = json_loadb((const char *)r.body, r.body_len, 0, &e);
        cr_assert_not_null(j, "%s %.80s: %ld body is not JSON (%s): %.200s", what, req->path,
                           r.status, e.text, r.body);
        cr_assert_eq(json_integer_value(json_object_get(j, "status")), r.status, "%s", what);
        cr_assert(json_is_string(json_object_get(j, "type")), "%s", what);
        cr_assert(json_is_string(json_object_get(j, "detail")), "%s", what);
        json_decref(j);
    }
    pm_http_response_free(&r);
    t.checked++;
    assert_alive(what);
}

static void check(const char *what, const pm_http_request *req) { check_status(what, req, 0); }

static void get_status(const char *what, const char *path, long want) {
    pm_http_request req = {.method = "GET", .path = path};
    check_status(what, &req, want);
}

static void post_as(const char *what, const char *path, const char *ctype, const void *body,
                    size_t len) {
    const char *h[] = {ctype, NULL};
    pm_http_request req = {.method = "POST", .path = path, .headers = ctype ? h : NULL,
                           .body = body, .body_len = len};
    check(what, &req);
}

static void post(const char *what, const char *path, const void *body, size_t len) {
    post_as(what, path, "Content-Type: application/json", body, len);
}

static void get(const char *what, const char *path) {
    pm_http_request req = {.method = "GET", .path = path};
    check(what, &req);
}

static void start(void) {
    cr_assert_eq(pm_test_server_start(&srv, NULL), 0);
    memset(&t, 0, sizeof t);
}

static void stop(void) {
    cr_assert_eq(pm_test_server_stop(&srv), 0, "exit 0 on SIGTERM after hostile input");
}

TestSuite(http_hostile, .init = start, .fini = stop, .timeout = 120);

Test(http_hostile, deeply_nested_json) {
    char *arrays = repeat("", "[", 100000, "");
    char *in_field = repeat("{\"seed\":", "[", 100000, "");
    char *objects = repeat("", "{\"a\":", 50000, "1");
    char *closed = repeat("{\"seed\":", "[", 3000, "");   /* closed below: valid JSON */
    size_t n = strlen(closed);
    closed = realloc(closed, n + 3000 + 2);
    memset(closed + n, ']', 3000);
    memcpy(closed + n + 3000, "}", 2);
    for (size_t i = 0; i < NROUTES; i++) {
        post("100k [", routes[i], arrays, 0);
        post("seed: 100k [", routes[i], in_field, 0);
        post("50k {", routes[i], objects, 0);
        post("3000 balanced [", routes[i], closed, 0);
    }
    free(arrays);
    free(in_field);
    free(objects);
    free(closed);
}

Test(http_hostile, numbers_out_of_range) {
    static const char *const bodies[] = {
        "{\"seed\":1e400}", "{\"seed\":-1e400}", "{\"seed\":1e-400}",
        "{\"seed\":123456789012345678901234567890123456789}",
        "{\"seed\":18446744073709551616}", "{\"seed\":-9223372036854775809}",
        "{\"seed\":1.7976931348623157e308}", "{\"seed\":NaN}", "{\"seed\":nan}",
        "{\"seed\":Infinity}", "{\"seed\":-Infinity}", "{\"seed\":inf}",
        "{\"seed\":0x10}", "{\"seed\":1,\"size\":1e308}", "{\"seed\":1,\"size\":-0}",
        "{\"arms\":[{\"direction\":[1e308,1e308],\"width\":1e308}]}",
        "{\"arms\":[{\"direction\":[NaN,0],\"width\":7}]}",
        "{\"points\":[[1e308,0,0],[-1e308,0,0]],\"width\":8}",
        "{\"points\":[[0,0,0],[5e-324,0,5e-324]],\"width\":8}",
        "{\"seed\":1,\"generate\":{\"count\":2147483648,\"extent\":[1e308,1e308]}}",
        "{\"seed\":1,\"generate\":{\"count\":-2147483649,\"extent\":[64,64]}}",
    };
    for (size_t i = 0; i < NROUTES; i++)
        for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++)
            post(bodies[k], routes[i], bodies[k], 0);
}

Test(http_hostile, bad_strings) {
    /* Raw bytes: invalid UTF-8 (lone continuation, truncated sequence,
     * overlong '/', a surrogate, past U+10FFFF), lone surrogate escapes,
     * and NUL inside a string, raw and escaped. */
#define B(s) {s, sizeof s - 1}
    static const struct {
        const char *b;
        size_t len;
    } bodies[] = {
        B("{\"seed\":1,\"shape\":\"\x80\"}"),
        B("{\"seed\":1,\"shape\":\"\xc3\"}"),
        B("{\"seed\":1,\"shape\":\"\xc0\xaf\"}"),
        B("{\"seed\":1,\"shape\":\"\xed\xa0\x80\"}"),
        B("{\"seed\":1,\"shape\":\"\xf4\x90\x80\x80\"}"),
        B("{\"seed\":1,\"\xff\xfe\":1}"),
        B("{\"seed\":1,\"shape\":\"\\ud800\"}"),
        B("{\"seed\":1,\"shape\":\"\\udc00x\"}"),
        B("{\"seed\":1,\"shape\":\"a\\u0000b\"}"),
        B("{\"seed\":1,\"a\\u0000b\":1}"),
        B("{\"seed\":1,\"shape\":\"a\0b\"}"),
        B("{\"seed\":1}\0garbage"),
        B("\0\0\0\0"),
        B("\xef\xbb\xbf{\"seed\":1}"),
        B("{\"seed\":1,\"\xc3\xa9\xc3\xa9\xc3\xa9\":1}"),
    };
    for (size_t i = 0; i < NROUTES; i++)
        for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++)
            post("bad string", routes[i], bodies[k].b, bodies[k].len);
    /* A valid multi-byte key whose error message gets cut: the cut must
     * not split a character. */
    char *wide = repeat("{\"seed\":1,\"", "\xc3\xa9", 600, "\":1}");
    for (size_t i = 0; i < NROUTES; i++) post("long UTF-8 key", routes[i], wide, 0);
    free(wide);
}

Test(http_hostile, huge_arrays_where_small_ones_belong) {
    char *nums = big_array("1", 10000);
    char *pairs = big_array("[1,2]", 10000);
    char *triples = big_array("[1,2,3]", 10000);
    char *arms = big_array("{\"direction\":[1,0],\"width\":7}", 10000);
    char *rooms = big_array("{\"x\":0,\"z\":0,\"w\":4,\"d\":4}", 10000);
    char *nodes = big_array("{\"id\":1,\"position\":[0,0]}", 10000);
    const char *per_route[] = {arms, triples, rooms, nums, nodes};
    for (size_t g = 0; g < NGENERATORS; g++) {
        size_t cap = strlen(per_route[g]) + 64;
        char *b = malloc(cap);
        snprintf(b, cap, small_array_fmt[g], per_route[g]);
        post("10k elements", routes[g], b, 0);
        snprintf(b, cap, small_array_fmt[g], nums);
        post("10k numbers", routes[g], b, 0);
        free(b);
    }
    size_t cap = strlen(pairs) + strlen(nums) * 2 + 256;
    char *b = malloc(cap);
    snprintf(b, cap, "{\"arms\":[{\"direction\":%s,\"width\":7},{\"direction\":[0,1],\"width\":7}]}", nums);
    post("10k direction", "/v1/junctions", b, 0);
    snprintf(b, cap, "{\"points\":[%s,[1,0,1]],\"width\":8}", nums);
    post("10k point", "/v1/roads", b, 0);
    snprintf(b, cap, "{\"seed\":1,\"generate\":{\"count\":4,\"extent\":%s}}", nums);
    post("10k extent", "/v1/dungeons", b, 0);
    snprintf(b, cap, "{\"nodes\":[{\"id\":1,\"position\":[0,0]},{\"id\":2,\"position\":[50,0]}],"
                     "\"edges\":[{\"from\":1,\"to\":2,\"points\":[%s]}]}", pairs);
    post("10k edge points", "/v1/networks", b, 0);
    snprintf(b, cap, "{\"nodes\":[{\"id\":%s,\"position\":[0,0]}],\"edges\":[]}", nums);
    post("array as node id", "/v1/networks", b, 0);
    snprintf(b, cap, "%s", nums);
    for (size_t i = 0; i < NROUTES; i++) post("top-level array", routes[i], b, 0);
    free(b);
    free(nums);
    free(pairs);
    free(triples);
    free(arms);
    free(rooms);
    free(nodes);
}

Test(http_hostile, empty_and_mistyped_bodies) {
    for (size_t i = 0; i < NROUTES; i++) {
        post("empty body", routes[i], "", 0);
        pm_http_request bare = {.method = "POST", .path = routes[i]};
        check("POST without a body", &bare);
        post("blank body", routes[i], " \r\n\t ", 0);
        post("null", routes[i], "null", 0);
        post("string", routes[i], "\"x\"", 0);
        post("truncated", routes[i], "{\"seed\":", 0);
        post("trailing garbage", routes[i], "{\"seed\":1} {", 0);
        post("duplicate key", routes[i], "{\"seed\":1,\"seed\":2}", 0);
        post_as("text/plain", routes[i], "Content-Type: text/plain", "{\"seed\":1}", 0);
        post_as("xml", routes[i], "Content-Type: application/xml", "<a/>", 0);
        post_as("form", routes[i], NULL, "seed=1", 0);
        post_as("no type", routes[i], "Content-Type:", "{\"seed\":1}", 0);
        post_as("json prefix", routes[i], "Content-Type: application/jsonx", "{\"seed\":1}", 0);
        post_as("+json only", routes[i], "Content-Type: application/+json", "{\"seed\":1}", 0);
        post_as("huge type", routes[i], "Content-Type: application/json; charset=\"\xff\xfe\"",
                "{\"seed\":1}", 0);
    }
}

Test(http_hostile, long_urls_and_queries) {
    size_t n = 16000;
    char *path = repeat("/v1/", "a", n, "");
    get("long path", path);
    post("long path", path, "{}", 0);
    free(path);
    path = repeat("/v1/", "\xc3\xa9", 3000, "");   /* raw UTF-8 in the path */
    get("long UTF-8 path", path);
    free(path);
    path = repeat("/v1/", "%ff", 3000, "");   /* decodes to invalid UTF-8 */
    get("long %ff path", path);
    free(path);
    for (size_t i = 0; i < NROUTES; i++) {
        char head[128];
        snprintf(head, sizeof head, "%s?seed=1&x=", routes[i]);
        char *q = repeat(head, "b", n, "");
        get("long query value", q);
        post("long query value", q, "{\"seed\":1}", 0);
        free(q);
        snprintf(head, sizeof head, "%s?seed=1&", routes[i]);
        q = repeat(head, "k", n, "=1");
        get("long query key", q);
        free(q);
        q = repeat(head, "%ff", 3000, "=1");
        get("long %ff query key", q);
        free(q);
        q = repeat(head, "\xc3\xa9", 3000, "=1");
        get("long UTF-8 query key", q);
        free(q);
        snprintf(head, sizeof head, "%s?seed=1&format=", routes[i]);
        q = repeat(head, "%ff", 3000, "");
        get("long %ff format", q);
        free(q);
    }
    /* Past any sane header buffer: an answer, not a crash. */
    path = repeat("/v1/grids?seed=", "9", 200000, "");
    pm_http_request req = {.method = "GET", .path = path};
    pm_http_response r;
    pm_http(&srv, &req, &r);
    cr_assert(r.status == 0 || (r.status >= 400 && r.status < 500), "200k URL: %ld", r.status);
    pm_http_response_free(&r);
    assert_alive("200k URL");
    free(path);
}

Test(http_hostile, repeated_query_parameters) {
    static const char *const queries[] = {
        "?seed=1&seed=1", "?seed=1&seed=2", "?seed=1&size=4&size=5", "?format=glb&format=json",
        "?format=json&format=xml", "?seed", "?seed=", "?=1", "?&&&", "?seed=1&&seed=2",
        "?seed=%00", "?seed=1%002", "?shape=%00", "?shape=a%00b", "?%00=1", "?seed=%ff",
        "?shape=%c3", "?seed=1e400", "?seed=-1", "?seed=18446744073709551616", "?size=nan",
        "?size=inf", "?spacing=nan", "?spacing=1e400", "?extent=1e400x1", "?extent=x",
        "?extent=1x", "?extent=nanxnan", "?count=99999999999999999999",
    };
    for (size_t i = 0; i < NROUTES; i++)
        for (size_t k = 0; k < sizeof queries / sizeof queries[0]; k++) {
            char p[256];
            snprintf(p, sizeof p, "%s%s", routes[i], queries[k]);
            get(queries[k], p);
        }
    /* 100 pairs, and the same key 1000 times. */
    for (size_t i = 0; i < NROUTES; i++) {
        char head[64];
        snprintf(head, sizeof head, "%s?", routes[i]);
        char *q = repeat(head, "seed=1&", 100, "");
        get("100 seeds", q);
        free(q);
        q = repeat(head, "size=2&", 1000, "");
        get_status("1000 sizes", q, 414);
        free(q);
    }
    /* Where a repeated parameter is read, it is refused by name. */
    static const char *const read_twice[] = {
        "/v1/grids?seed=1&seed=1", "/v1/dungeons?seed=1&count=4&count=4",
        "/v1/grids?format=json&format=json", "/v1/dungeons?seed=1&format=glb&format=json",
    };
    for (size_t k = 0; k < sizeof read_twice / sizeof read_twice[0]; k++)
        get_status("repeated", read_twice[k], 422);
    cr_assert_gt(t.checked, 0);
}

/* Black box: ?compress=, ?quantize=, ?metadata= and the strict ?format=
 * through the real binary, on GET and POST (issue 12). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "svc_fixtures.h"
#include "pm_test_validator.h"

static pm_test_server srv;

static void start(void) { cr_assert_eq(pm_test_server_start(&srv, NULL), 0); }
static void stop(void) { cr_assert_eq(pm_test_server_stop(&srv), 0, "clean exit"); }

TestSuite(http_compact, .init = start, .fini = stop, .timeout = 120);

static pm_http_response get(const char *path) {
    pm_http_response r;
    cr_assert_eq(pm_http_get(&srv, path, &r), 0, "no response from %s", path);
    return r;
}

/* The GLB's JSON chunk. */
static json_t *glb_json(const pm_http_response *r) {
    cr_assert_gt(r->body_len, 20);
    cr_assert_eq(memcmp(r->body, "glTF", 4), 0);
    uint32_t n;
    memcpy(&n, r->body + 12, 4);
    json_error_t e;
    json_t *j = json_loadb((const char *)r->body + 20, n, 0, &e);
    cr_assert_not_null(j, "%s", e.text);
    return j;
}

static bool lists(json_t *arr, const char *name) {
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (strcmp(json_string_value(v), name) == 0) return true;
    return false;
}

/* Each option is its own representation: its own ETag (and cache entry);
 * asking again (the request memo's path) gives the same ETag and bytes. */
Test(http_compact, options_are_representations_on_get) {
    static const char *const paths[] = {
        SVC_QUERY "&format=glb",
        SVC_QUERY "&format=glb&compress=meshopt",
        SVC_QUERY "&format=glb&quantize=true",
        SVC_QUERY "&format=glb&compress=meshopt&quantize=true",
        SVC_QUERY "&format=glb&metadata=summary",
        SVC_QUERY "&format=glb&metadata=none",
        SVC_QUERY "&metadata=summary",
    };
    enum { N = sizeof paths / sizeof *paths };
    char etags[N][128];
    size_t lens[N];
    for (int i = 0; i < N; i++) {
        pm_http_response r = get(paths[i]);
        cr_assert_eq(r.status, 200, "%s: %ld %.300s", paths[i], r.status, r.body);
        svc_header(&r, "ETag", etags[i], sizeof etags[i]);
        lens[i] = r.body_len;
        for (int k = 0; k < i; k++)
            cr_assert_str_neq(etags[i], etags[k], "%s and %s share an ETag", paths[i], paths[k]);
        pm_http_response again = get(paths[i]);
        char etag[128], cache[16];
        cr_assert_str_eq(svc_header(&again, "ETag", etag, sizeof etag), etags[i]);
        cr_assert_str_eq(svc_header(&again, "X-Cache", cache, sizeof cache), "HIT");
        cr_assert_eq(again.body_len, r.body_len);
        cr_assert_eq(memcmp(again.body, r.body, r.body_len), 0);
        pm_http_response_free(&again);
        pm_http_response_free(&r);
    }
    cr_assert_lt(lens[3], lens[0], "meshopt + quantize is smaller than plain GLB");
    cr_assert_lt(lens[5], lens[4]);
    cr_assert_lt(lens[4], lens[0]);
}

/* POST with the options in the query: the body memo keeps them apart too. */
Test(http_compact, options_on_post) {
    pm_http_response plain = svc_post(&srv, SVC_ROUTE "?format=glb", SVC_BODY, NULL);
    pm_http_response mo = svc_post(&srv, SVC_ROUTE "?format=glb&compress=meshopt&quantize=true",
                                   SVC_BODY, NULL);
    pm_http_response mo2 = svc_post(&srv, SVC_ROUTE "?format=glb&compress=meshopt&quantize=true",
                                    SVC_BODY, NULL);
    cr_assert_eq(plain.status, 200);
    cr_assert_eq(mo.status, 200, "%ld %.300s", mo.status, mo.body);
    char a[128], b[128], c[128], x[16];
    cr_assert_str_neq(svc_header(&plain, "ETag", a, sizeof a), svc_header(&mo, "ETag", b, sizeof b));
    cr_assert_str_eq(svc_header(&mo2, "ETag", c, sizeof c), b);
    cr_assert_str_eq(svc_header(&mo2, "X-Cache", x, sizeof x), "HIT");
    json_t *j = glb_json(&mo);
    json_t *req = json_object_get(j, "extensionsRequired");
    cr_assert(lists(req, "EXT_meshopt_compression") && lists(req, "KHR_mesh_quantization"));
    json_decref(j);
    char report[4096];
    cr_assert_eq(pm_test_gltf_validate(mo.body, mo.body_len, 1, report, sizeof report), 0, "%s",
                 report);
    /* the same options on GET name the same representation as on POST */
    pm_http_response g = get(SVC_QUERY "&format=glb&compress=meshopt&quantize=true");
    cr_assert_str_eq(svc_header(&g, "ETag", c, sizeof c), b);
    pm_http_response_free(&g);
    pm_http_response_free(&plain);
    pm_http_response_free(&mo);
    pm_http_response_free(&mo2);
}

Test(http_compact, json_mesh_metadata_modes) {
    pm_http_response full = get(SVC_QUERY);
    pm_http_response none = get(SVC_QUERY "&metadata=none");
    pm_http_response sum = get(SVC_QUERY "&metadata=summary");
    cr_assert_eq(none.status, 200);
    json_t *jf = svc_json(&full), *jn = svc_json(&none), *js = svc_json(&sum);
    cr_assert_not_null(json_object_get(jf, "metadata"));
    cr_assert_null(json_object_get(jn, "metadata"));
    cr_assert_not_null(json_object_get(jn, "stats"));
    json_t *ms = json_object_get(js, "metadata");
    cr_assert_not_null(json_object_get(ms, "rooms"));
    cr_assert_not_null(json_object_get(json_object_get(ms, "omitted"), "corridors[].cells"));
    json_decref(jf);
    json_decref(jn);
    json_decref(js);
    pm_http_response_free(&full);
    pm_http_response_free(&none);
    pm_http_response_free(&sum);
}

/* Bad values are 422 naming the parameter; query enums are exact
 * (lowercase), ?format= included. */
Test(http_compact, strict_values_and_pointers) {
    static const char *const bad[][2] = {
        {SVC_QUERY "&format=GLB", "/format"},
        {SVC_QUERY "&format=Json", "/format"},
        {SVC_QUERY "&format=glb&compress=draco", "/compress"},
        {SVC_QUERY "&format=glb&compress=MESHOPT", "/compress"},
        {SVC_QUERY "&format=glb&quantize=1", "/quantize"},
        {SVC_QUERY "&format=glb&metadata=partial", "/metadata"},
        {SVC_QUERY "&format=glb&metadata=summary&metadata=none", "/metadata"},
        {SVC_QUERY "&format=glb&compress=meshopt&compress=none", "/compress"},
        {SVC_QUERY "&compress=meshopt", "/compress"},          /* the JSON mesh */
        {SVC_QUERY "&format=json&quantize=true", "/quantize"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pm_http_response r = get(bad[i][0]);
        svc_expect_problem(&r, bad[i][1]);
        pm_http_response_free(&r);
    }
    pm_http_response p = svc_post(&srv, SVC_ROUTE "?format=glb&quantize=yes", SVC_BODY, NULL);
    svc_expect_problem(&p, "/quantize");
    pm_http_response_free(&p);
    /* the options are the service's: the generator's own table never sees
     * them as unknown parameters */
    pm_http_response ok = get(SVC_QUERY "&format=gltf&compress=none&quantize=false&metadata=full");
    cr_assert_eq(ok.status, 200, "%.300s", ok.body);
    pm_http_response_free(&ok);
}

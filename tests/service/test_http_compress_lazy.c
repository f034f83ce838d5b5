/* Each form of a result is made when a request first negotiates it, black
 * box: a miss compresses only the form its requester gets (none for
 * identity), a later request for another form makes that one once, also
 * when many ask for it at the same time, and hits make none; every form
 * still decodes to the identity bytes under its own ETag. The compression
 * counters of /metrics tell what was made. */
#include "pm_test_decode.h"
#include "svc_fixtures.h"

#define GZ_RESULTS "procmesh_compressions_total{coding=\"gzip\",kind=\"result\"}"
#define BR_RESULTS "procmesh_compressions_total{coding=\"br\",kind=\"result\"}"
/* A dungeon GLB of some hundred KB: brotli 9 takes tens of ms on it. */
#define LAZY_BODY "{\"seed\":7,\"generate\":{\"count\":200,\"extent\":[256,256]}}"
#define LAZY_PATH SVC_ROUTE "?format=glb"

static pm_test_server srv;

static void start(void) {
    cr_assert_eq(pm_test_server_start(&srv, (const char *[]){"--log-level", "warn", NULL}), 0);
}
static void stop(void) { pm_test_server_stop(&srv); }

TestSuite(http_compress_lazy, .init = start, .fini = stop, .timeout = 120);

/* POST LAZY_BODY with Accept-Encoding ae (NULL: none). */
static pm_http_response ask(const char *ae) {
    char line[128];
    snprintf(line, sizeof line, "Accept-Encoding: %s", ae ? ae : "");
    return svc_post(&srv, LAZY_PATH, LAZY_BODY, ae ? line : NULL);
}

static void expect_made(double gz, double br, const char *when) {
    cr_assert_eq(pm_test_metric(&srv, GZ_RESULTS), gz, "gzip compressions %s", when);
    cr_assert_eq(pm_test_metric(&srv, BR_RESULTS), br, "br compressions %s", when);
}

/* r is ae's form of the identity body id, under id's tag with its suffix. */
static void expect_form(const pm_http_response *r, const pm_http_response *id, const char *ae,
                        const char *cache) {
    char buf[128], tag[128], want[140];
    cr_assert_eq(r->status, 200, "%s", r->body);
    cr_assert_str_eq(svc_header(r, "X-Cache", buf, sizeof buf), cache, "%s", ae);
    cr_assert_str_eq(svc_header(r, "Content-Encoding", buf, sizeof buf), ae);
    cr_assert_str_eq(svc_header(r, "Vary", buf, sizeof buf), "Accept, Accept-Encoding");
    svc_header(id, "ETag", tag, sizeof tag);
    snprintf(want, sizeof want, "%.*s%s\"", (int)strlen(tag) - 1, tag,
             strcmp(ae, "gzip") == 0 ? ".gz" : ".br");
    cr_assert_str_eq(svc_header(r, "ETag", buf, sizeof buf), want);
    size_t n = 0;
    unsigned char *plain = strcmp(ae, "gzip") == 0 ? pm_test_gunzip(r->body, r->body_len, &n)
                                                   : pm_test_unbrotli(r->body, r->body_len, &n);
    cr_assert_not_null(plain, "%s: not a whole stream", ae);
    cr_assert_eq(n, id->body_len, "%s decodes to %zu bytes, not %zu", ae, n, id->body_len);
    cr_assert_eq(memcmp(plain, id->body, n), 0, "%s decodes to other bytes", ae);
    cr_assert_lt(r->body_len, id->body_len / 2);
    free(plain);
}

Test(http_compress_lazy, an_identity_miss_compresses_nothing) {
    double gz0 = pm_test_metric(&srv, GZ_RESULTS), br0 = pm_test_metric(&srv, BR_RESULTS);
    cr_assert_geq(gz0, 0, "no compression counter in /metrics");
    pm_http_response id = ask(NULL);
    char buf[128];
    cr_assert_eq(id.status, 200, "%s", id.body);
    cr_assert_gt(id.body_len, 64 * 1024, "the test wants a body worth compressing");
    cr_assert_str_eq(svc_header(&id, "X-Cache", buf, sizeof buf), "MISS");
    cr_assert_null(pm_http_header(&id, "Content-Encoding", buf, sizeof buf));
    expect_made(gz0, br0, "after an identity miss");
    pm_http_response again = ask("identity");
    cr_assert_str_eq(svc_header(&again, "X-Cache", buf, sizeof buf), "HIT");
    expect_made(gz0, br0, "after an identity hit");
    pm_http_response_free(&id);
    pm_http_response_free(&again);
}

Test(http_compress_lazy, each_form_once_when_first_asked) {
    double gz0 = pm_test_metric(&srv, GZ_RESULTS), br0 = pm_test_metric(&srv, BR_RESULTS);
    pm_http_response gz = ask("gzip");
    expect_made(gz0 + 1, br0, "after a gzip miss");
    pm_http_response id = ask(NULL);
    expect_form(&gz, &id, "gzip", "MISS");
    pm_http_response br = ask("br");
    expect_form(&br, &id, "br", "HIT");
    expect_made(gz0 + 1, br0 + 1, "after a br request");
    /* Steady state: hits in every coding make nothing, and send the same bytes. */
    static const char *const ae[] = {"gzip", "br", "gzip, br", NULL, "*", "br;q=0.5, gzip"};
    for (int i = 0; i < 12; i++) {
        pm_http_response h = ask(ae[i % 6]);
        char buf[64];
        cr_assert_str_eq(svc_header(&h, "X-Cache", buf, sizeof buf), "HIT");
        const char *ce = pm_http_header(&h, "Content-Encoding", buf, sizeof buf);
        const pm_http_response *same = !ce ? &id : strcmp(ce, "gzip") == 0 ? &gz : &br;
        cr_assert_eq(h.body_len, same->body_len, "%s", ae[i % 6] ? ae[i % 6] : "(none)");
        cr_assert_eq(memcmp(h.body, same->body, h.body_len), 0);
        pm_http_response_free(&h);
    }
    expect_made(gz0 + 1, br0 + 1, "after hits");
    pm_http_response_free(&gz);
    pm_http_response_free(&br);
    pm_http_response_free(&id);
}

Test(http_compress_lazy, concurrent_requests_for_a_new_form_compress_once) {
    pm_http_response id = ask(NULL);
    cr_assert_eq(id.status, 200);
    double gz0 = pm_test_metric(&srv, GZ_RESULTS), br0 = pm_test_metric(&srv, BR_RESULTS);
    enum { N = 8 };
    svc_call calls[N];
    const char *br[] = {"Content-Type: application/json", "Accept-Encoding: br", NULL};
    const char *gz[] = {"Content-Type: application/json", "Accept-Encoding: gzip", NULL};
    for (int i = 0; i < N; i++)
        svc_call_start_with(&calls[i], &srv, LAZY_PATH, LAZY_BODY, i % 2 ? gz : br);
    for (int i = 0; i < N; i++) svc_call_join(&calls[i]);
    for (int i = 0; i < N; i++) {
        expect_form(&calls[i].r, &id, i % 2 ? "gzip" : "br", "HIT");
        pm_http_response_free(&calls[i].r);
    }
    expect_made(gz0 + 1, br0 + 1, "after concurrent requests for two new forms");
    pm_http_response_free(&id);
}

Test(http_compress_lazy, joiners_of_a_miss_get_their_own_form) {
    double gz0 = pm_test_metric(&srv, GZ_RESULTS), br0 = pm_test_metric(&srv, BR_RESULTS);
    enum { N = 6 };
    svc_call calls[N];
    static const char *const h[3][3] = {
        {"Content-Type: application/json", "Accept-Encoding: br", NULL},
        {"Content-Type: application/json", "Accept-Encoding: gzip", NULL},
        {"Content-Type: application/json", NULL, NULL},
    };
    for (int i = 0; i < N; i++)
        svc_call_start_with(&calls[i], &srv, LAZY_PATH, LAZY_BODY, h[i % 3]);
    for (int i = 0; i < N; i++) svc_call_join(&calls[i]);
    pm_http_response id = ask(NULL);
    char buf[64];
    for (int i = 0; i < N; i++) {
        pm_http_response *r = &calls[i].r;
        cr_assert_eq(r->status, 200);
        if (i % 3 == 2) {
            cr_assert_null(pm_http_header(r, "Content-Encoding", buf, sizeof buf));
            cr_assert_eq(r->body_len, id.body_len);
            cr_assert_eq(memcmp(r->body, id.body, id.body_len), 0);
        } else {
            expect_form(r, &id, i % 3 ? "gzip" : "br", svc_header(r, "X-Cache", buf, sizeof buf));
        }
        pm_http_response_free(r);
    }
    expect_made(gz0 + 1, br0 + 1, "after a miss asked for in three codings at once");
    pm_http_response_free(&id);
}

Test(http_compress_lazy, a_406_names_the_forms_a_result_can_have) {
    double gz0 = pm_test_metric(&srv, GZ_RESULTS), br0 = pm_test_metric(&srv, BR_RESULTS);
    pm_http_response r = ask("identity;q=0");
    cr_assert_eq(r.status, 406, "%s", r.body);
    cr_assert_not_null(strstr((const char *)r.body, "identity, gzip, br"), "%s", r.body);
    expect_made(gz0, br0, "for a 406");
    pm_http_response_free(&r);
}

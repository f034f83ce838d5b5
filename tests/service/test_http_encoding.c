/* Content-Encoding and cache headers, black box: gzip and br forms that
 * decode to the identity bytes, Accept-Encoding q-values, Vary, one strong
 * ETag per form and its 304, compression once per result (never per hit,
 * also across replicas through Redis), Cache-Control with and without
 * ?v=<generator version>. */
#define _GNU_SOURCE   /* memmem */
#include <hiredis.h>

#include "pm_test_decode.h"
#include "procs.h"
#include "svc_fixtures.h"

#define GZ_RESULTS "procmesh_compressions_total{coding=\"gzip\",kind=\"result\"}"
#define BR_RESULTS "procmesh_compressions_total{coding=\"br\",kind=\"result\"}"

static pm_test_server srv;

static void start_default(void) {
    cr_assert_eq(pm_test_server_start(&srv, (const char *[]){"--log-level", "warn", NULL}), 0);
}
static void stop(void) { pm_test_server_stop(&srv); }

TestSuite(http_encoding, .init = start_default, .fini = stop, .timeout = 120);

/* GET path with an Accept-Encoding (NULL: none) and one more header line. */
static pm_http_response get_ae(const pm_test_server *s, const char *method, const char *path,
                               const char *ae, const char *extra) {
    char line[256];
    snprintf(line, sizeof line, "Accept-Encoding: %s", ae ? ae : "");
    const char *h[3] = {NULL, NULL, NULL};
    int n = 0;
    if (ae) h[n++] = line;
    if (extra) h[n++] = extra;
    pm_http_request req = {.method = method ? method : "GET", .path = path, .headers = h};
    pm_http_response r;
    cr_assert_eq(pm_http(s, &req, &r), 0, "no response from %s", path);
    return r;
}

static unsigned char *gunzip(const unsigned char *z, size_t zlen, size_t *n) {
    unsigned char *out = pm_test_gunzip(z, zlen, n);
    cr_assert_not_null(out, "not one whole gzip stream");
    return out;
}

static unsigned char *unbrotli(const unsigned char *z, size_t zlen, size_t *n) {
    unsigned char *out = pm_test_unbrotli(z, zlen, n);
    cr_assert_not_null(out, "not a brotli stream");
    return out;
}

/* The identity body of path, then its gzip and br forms checked against it. */
static void expect_forms_decode(const pm_test_server *s, const char *path) {
    char buf[256], tag[128];
    pm_http_response id = get_ae(s, NULL, path, NULL, NULL);
    cr_assert_eq(id.status, 200, "%s", id.body);
    cr_assert_null(pm_http_header(&id, "Content-Encoding", buf, sizeof buf));
    cr_assert_str_eq(svc_header(&id, "Vary", buf, sizeof buf), "Accept, Accept-Encoding");
    svc_header(&id, "ETag", tag, sizeof tag);
    static const char *const ae[] = {"gzip", "br"};
    for (int i = 0; i < 2; i++) {
        pm_http_response z = get_ae(s, NULL, path, ae[i], NULL);
        cr_assert_eq(z.status, 200);
        cr_assert_str_eq(svc_header(&z, "Content-Encoding", buf, sizeof buf), ae[i]);
        cr_assert_str_eq(svc_header(&z, "Vary", buf, sizeof buf), "Accept, Accept-Encoding");
        cr_assert_lt(z.body_len, id.body_len / 2, "%s: %zu of %zu bytes", ae[i], z.body_len,
                     id.body_len);
        size_t n;
        unsigned char *plain = i == 0 ? gunzip(z.body, z.body_len, &n)
                                      : unbrotli(z.body, z.body_len, &n);
        cr_assert_eq(n, id.body_len, "%s decodes to %zu bytes, not %zu", ae[i], n, id.body_len);
        cr_assert_eq(memcmp(plain, id.body, n), 0, "%s decodes to other bytes", ae[i]);
        free(plain);
        /* Its own strong tag: the identity tag with a suffix. */
        char want[140];
        snprintf(want, sizeof want, "%.*s%s\"", (int)strlen(tag) - 1, tag, i == 0 ? ".gz" : ".br");
        cr_assert_str_eq(svc_header(&z, "ETag", buf, sizeof buf), want);
        pm_http_response_free(&z);
    }
    pm_http_response_free(&id);
}

Test(http_encoding, gzip_and_br_decode_to_the_identical_bytes) {
    expect_forms_decode(&srv, SVC_QUERY);                   /* JSON mesh */
    expect_forms_decode(&srv, SVC_QUERY "&format=glb");     /* GLB */
    expect_forms_decode(&srv, SVC_QUERY "&format=gltf");
    /* POST results too. */
    pm_http_response r = svc_post(&srv, SVC_ROUTE, SVC_BODY, "Accept-Encoding: br");
    char buf[64];
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(svc_header(&r, "Content-Encoding", buf, sizeof buf), "br");
    pm_http_response_free(&r);
}

/* The coding answered for an Accept-Encoding: "identity", "gzip", "br" or
 * the status when it is not 200. */
static void expect_coding(const char *ae, const char *want) {
    pm_http_response r = get_ae(&srv, NULL, SVC_QUERY, ae, NULL);
    char buf[64], got[64];
    if (r.status != 200) snprintf(got, sizeof got, "%ld", r.status);
    else snprintf(got, sizeof got, "%s",
                  pm_http_header(&r, "Content-Encoding", buf, sizeof buf) ? buf : "identity");
    cr_expect_str_eq(got, want, "Accept-Encoding: %s gave %s, not %s", ae ? ae : "(none)", got,
                     want);
    if (r.status == 406) {
        cr_expect_str_eq(svc_header(&r, "Content-Type", buf, sizeof buf),
                         "application/problem+json");
        cr_expect_str_eq(svc_header(&r, "Vary", buf, sizeof buf), "Accept-Encoding");
    }
    pm_http_response_free(&r);
}

Test(http_encoding, accept_encoding_q_values) {
    expect_coding(NULL, "identity");
    expect_coding("", "identity");
    expect_coding("gzip", "gzip");
    expect_coding("gzip, deflate, br", "br");
    expect_coding("br;q=0.5, gzip;q=0.9", "gzip");
    expect_coding("br;q=0, gzip", "gzip");
    expect_coding("gzip;q=0, br;q=0", "identity");
    expect_coding("identity, gzip;q=0.5", "identity");
    expect_coding("X-GZIP", "gzip");
    expect_coding("*", "br");
    expect_coding("*;q=0.1, identity;q=0.5", "identity");
    expect_coding("zstd, compress", "identity");
    expect_coding("gzip, identity;q=0", "gzip");
    /* Identity refused and nothing else offered: 406 (RFC 9110 12.5.3). */
    expect_coding("identity;q=0", "406");
    expect_coding("*;q=0", "406");
    expect_coding("zstd, *;q=0", "406");
}

Test(http_encoding, etag_per_form_and_304s) {
    char buf[128], id_tag[128], gz_tag[128], br_tag[128], h[400];
    pm_http_response a = get_ae(&srv, NULL, SVC_QUERY, NULL, NULL);
    pm_http_response g = get_ae(&srv, NULL, SVC_QUERY, "gzip", NULL);
    pm_http_response b = get_ae(&srv, NULL, SVC_QUERY, "br", NULL);
    svc_header(&a, "ETag", id_tag, sizeof id_tag);
    svc_header(&g, "ETag", gz_tag, sizeof gz_tag);
    svc_header(&b, "ETag", br_tag, sizeof br_tag);
    cr_assert_str_neq(id_tag, gz_tag);
    cr_assert_str_neq(gz_tag, br_tag);
    const struct { const char *ae, *tag; const pm_http_response *full; } forms[] = {
        {NULL, id_tag, &a}, {"gzip", gz_tag, &g}, {"br", br_tag, &b}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            snprintf(h, sizeof h, "If-None-Match: %s", forms[j].tag);
            pm_http_response r = get_ae(&srv, NULL, SVC_QUERY, forms[i].ae, h);
            if (i != j) {   /* another form's tag: the full answer in this form */
                cr_expect_eq(r.status, 200, "AE %s with the tag of form %d", forms[i].ae, j);
                pm_http_response_free(&r);
                continue;
            }
            cr_assert_eq(r.status, 304, "AE %s, If-None-Match %s", forms[i].ae, forms[j].tag);
            cr_expect_eq(r.body_len, 0);
            cr_expect_str_eq(svc_header(&r, "ETag", buf, sizeof buf), forms[i].tag);
            cr_expect_str_eq(svc_header(&r, "Vary", buf, sizeof buf), "Accept, Accept-Encoding");
            cr_expect_str_eq(svc_header(&r, "Cache-Control", buf, sizeof buf),
                             "public, max-age=3600");
            cr_expect_null(pm_http_header(&r, "Content-Type", buf, sizeof buf));
            cr_expect_null(pm_http_header(&r, "Content-Encoding", buf, sizeof buf));
            /* no Content-Length (docs/svc.md) */
            cr_expect_null(pm_http_header(&r, "Content-Length", buf, sizeof buf),
                           "304 Content-Length %s, the 200 had %zu", buf, forms[i].full->body_len);
            pm_http_response_free(&r);
        }
    /* A list naming several forms matches the one being answered. */
    snprintf(h, sizeof h, "If-None-Match: %s, %s", id_tag, br_tag);
    pm_http_response r = get_ae(&srv, NULL, SVC_QUERY, "br", h);
    cr_expect_eq(r.status, 304);
    pm_http_response_free(&r);
    pm_http_response_free(&a);
    pm_http_response_free(&g);
    pm_http_response_free(&b);
}

Test(http_encoding, head_has_the_coded_length) {
    char buf[64];
    pm_http_response b = get_ae(&srv, NULL, SVC_QUERY, "br", NULL);
    pm_http_response h = get_ae(&srv, "HEAD", SVC_QUERY, "br", NULL);
    cr_assert_eq(h.status, 200);
    cr_expect_str_eq(svc_header(&h, "Content-Encoding", buf, sizeof buf), "br");
    cr_expect_eq(strtoull(svc_header(&h, "Content-Length", buf, sizeof buf), NULL, 10),
                 b.body_len);
    cr_expect_eq(h.body_len, 0);
    pm_http_response_free(&b);
    pm_http_response_free(&h);
}

Test(http_encoding, a_result_is_compressed_once_not_per_hit) {
    double gz0 = pm_test_metric(&srv, GZ_RESULTS), br0 = pm_test_metric(&srv, BR_RESULTS);
    cr_assert_geq(gz0, 0, "no compression counter in /metrics");
    pm_http_response m = get_ae(&srv, NULL, SVC_QUERY "&format=glb", "br", NULL);
    char buf[128];
    cr_assert_str_eq(svc_header(&m, "X-Cache", buf, sizeof buf), "MISS");
    cr_assert_not_null(strstr(svc_header(&m, "Server-Timing", buf, sizeof buf), ", zip;dur="));
    pm_http_response_free(&m);
    /* The miss makes only the form its requester gets; the first gzip hit
     * below makes gzip (test_http_compress_lazy.c). */
    cr_assert_eq(pm_test_metric(&srv, GZ_RESULTS), gz0);
    cr_assert_eq(pm_test_metric(&srv, BR_RESULTS), br0 + 1);
    static const char *const ae[] = {"gzip", "br", "gzip, br", NULL, "*"};
    for (int i = 0; i < 10; i++) {
        pm_http_response h = get_ae(&srv, NULL, SVC_QUERY "&format=glb", ae[i % 5], NULL);
        cr_assert_eq(h.status, 200);
        cr_assert_str_eq(svc_header(&h, "X-Cache", buf, sizeof buf), "HIT");
        pm_http_response_free(&h);
    }
    cr_expect_eq(pm_test_metric(&srv, GZ_RESULTS), gz0 + 1, "a hit compressed again");
    cr_expect_eq(pm_test_metric(&srv, BR_RESULTS), br0 + 1, "a hit compressed again");
}

Test(http_encoding, other_bodies) {
    char buf[128];
    /* Too small to pay: no coding, no Vary on the encoding. */
    pm_http_response hz = get_ae(&srv, NULL, "/healthz", "gzip, br", NULL);
    cr_expect_null(pm_http_header(&hz, "Content-Encoding", buf, sizeof buf));
    cr_expect_null(pm_http_header(&hz, "Vary", buf, sizeof buf));
    pm_http_response_free(&hz);
    /* The contract, compressed once at start. */
    pm_http_response id = get_ae(&srv, NULL, "/openapi.yaml", NULL, NULL);
    pm_http_response oa = get_ae(&srv, NULL, "/openapi.yaml", "gzip", NULL);
    cr_expect_str_eq(svc_header(&oa, "Content-Encoding", buf, sizeof buf), "gzip");
    cr_expect_str_eq(svc_header(&oa, "Vary", buf, sizeof buf), "Accept-Encoding");
    size_t n;
    unsigned char *plain = gunzip(oa.body, oa.body_len, &n);
    cr_assert_eq(n, id.body_len);
    cr_assert_eq(memcmp(plain, id.body, n), 0);
    free(plain);
    pm_http_response_free(&id);
    pm_http_response_free(&oa);
    /* Metrics, compressed per response (as Prometheus asks). */
    pm_http_response me = get_ae(&srv, NULL, "/metrics", "gzip", NULL);
    cr_expect_str_eq(svc_header(&me, "Content-Encoding", buf, sizeof buf), "gzip");
    plain = gunzip(me.body, me.body_len, &n);
    cr_expect_not_null(memmem(plain, n, "procmesh_compressions_total", 27));
    free(plain);
    pm_http_response_free(&me);
}

Test(http_encoding, cache_control_default_and_versioned) {
    char buf[256], path[256];
    pm_http_response j = get_ae(&srv, NULL, SVC_QUERY, NULL, NULL);
    cr_assert_eq(j.status, 200);
    cr_expect_str_eq(svc_header(&j, "Cache-Control", buf, sizeof buf), "public, max-age=3600",
                     "no immutable on an unversioned URL");
    json_t *doc = svc_json(&j);
    const char *version = json_string_value(json_object_get(json_object_get(doc, "metadata"),
                                                            "version"));
    if (!version) version = json_string_value(json_object_get(doc, "version"));
    cr_assert_not_null(version, "the JSON mesh names its generator version");
    snprintf(path, sizeof path, SVC_QUERY "&v=%s", version);
    pm_http_response v = get_ae(&srv, NULL, path, NULL, NULL);
    cr_assert_eq(v.status, 200, "%s", v.body);
    cr_expect_str_eq(svc_header(&v, "Cache-Control", buf, sizeof buf),
                     "public, max-age=31536000, immutable");
    cr_expect_eq(v.body_len, j.body_len, "?v= does not change the bytes");
    cr_expect_eq(memcmp(v.body, j.body, j.body_len), 0);
    pm_http_response_free(&v);
    /* POST may pin the version too. */
    snprintf(path, sizeof path, SVC_ROUTE "?v=%s", version);
    v = svc_post(&srv, path, SVC_BODY, NULL);
    cr_expect_str_eq(svc_header(&v, "Cache-Control", buf, sizeof buf),
                     "public, max-age=31536000, immutable");
    pm_http_response_free(&v);
    /* Another version: 422 at /v, never the bytes of this one. */
    pm_http_response o = get_ae(&srv, NULL, SVC_QUERY "&v=0.0.1", NULL, NULL);
    svc_expect_problem(&o, "/v");
    cr_expect_str_eq(svc_header(&o, "Cache-Control", buf, sizeof buf), "no-store");
    pm_http_response_free(&o);
    o = get_ae(&srv, NULL, SVC_QUERY "&v=1&v=1", NULL, NULL);
    svc_expect_problem(&o, "/v");
    pm_http_response_free(&o);
    json_decref(doc);
    pm_http_response_free(&j);
}

Test(http_encoding_flags, cache_control_is_configurable) {
    pm_test_server s;
    const char *args[] = {"--cache-control", "no-cache", "--log-level", "warn", NULL};
    const char *env[] = {"PROCMESH_CACHE_CONTROL_VERSIONED=public, max-age=600", NULL};
    cr_assert_eq(pm_test_server_start_env(&s, args, env), 0);
    pm_http_response r = get_ae(&s, NULL, SVC_QUERY, NULL, NULL);
    char buf[128];
    cr_expect_str_eq(svc_header(&r, "Cache-Control", buf, sizeof buf), "no-cache");
    json_t *doc = svc_json(&r);
    char path[256];
    snprintf(path, sizeof path, SVC_QUERY "&v=%s",
             json_string_value(json_object_get(doc, "version")));
    json_decref(doc);
    pm_http_response v = get_ae(&s, NULL, path, NULL, NULL);
    cr_expect_str_eq(svc_header(&v, "Cache-Control", buf, sizeof buf), "public, max-age=600");
    pm_http_response_free(&v);
    pm_http_response_free(&r);
    cr_assert_eq(pm_test_server_stop(&s), 0);
}

/* ---- the Redis tier keeps every form ---- */

Test(http_encoding_redis, replicas_share_the_compressed_forms, .timeout = 120) {
    pm_tp_redis rd;
    memset(&rd, 0, sizeof rd);
    cr_assert_eq(pm_tp_redis_start(&rd), 0, "redis-server did not start");
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", rd.port);
    const char *args[] = {"--redis", url, "--redis-timeout-ms", "500", "--log-level", "warn", NULL};
    pm_test_server a, b;
    cr_assert_eq(pm_test_server_start(&a, args), 0);
    cr_assert_eq(pm_test_server_start(&b, args), 0);
    const char *path = SVC_QUERY "&format=glb";
    pm_http_response ma = get_ae(&a, NULL, path, "br", NULL);
    cr_assert_eq(ma.status, 200);
    /* The stored value holds the three forms. */
    redisContext *c = redisConnect("127.0.0.1", rd.port);
    cr_assert(c && !c->err);
    redisReply *val = NULL;
    for (int i = 0; i < 200 && !val; i++) {   /* stored after the answer: poll */
        redisReply *keys = redisCommand(c, "KEYS procmesh:*");
        if (keys && keys->elements > 0)
            val = redisCommand(c, "GET %s", keys->element[0]->str);
        freeReplyObject(keys);
        if (!val) pm_tp_sleep_ms(20);
    }
    cr_assert(val && val->type == REDIS_REPLY_STRING, "nothing stored in Redis");
    cr_assert_eq(memcmp(val->str, "pmblob02", 8), 0);
    unsigned long long len[3] = {0, 0, 0};
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 8; i++)
            len[f] |= (unsigned long long)(unsigned char)val->str[8 + 8 * f + i] << (8 * i);
    /* The forms the entry has: br, made for the miss; gzip once asked. */
    cr_expect_eq(len[1], 0, "a gzip form made for a br miss");
    cr_expect_eq(len[2], ma.body_len, "the br form in Redis is not the one served");
    cr_expect_eq((size_t)val->len, 32 + len[0] + len[1] + len[2]);
    freeReplyObject(val);
    pm_http_response ga = get_ae(&a, NULL, path, "gzip", NULL);
    cr_assert_eq(ga.status, 200);
    redisReply *keys = redisCommand(c, "KEYS procmesh:*");
    cr_assert(keys && keys->elements == 1);
    val = redisCommand(c, "GET %s", keys->element[0]->str);
    freeReplyObject(keys);
    cr_assert(val && val->type == REDIS_REPLY_STRING);
    for (int f = 0; f < 3; f++) {
        len[f] = 0;
        for (int i = 0; i < 8; i++)
            len[f] |= (unsigned long long)(unsigned char)val->str[8 + 8 * f + i] << (8 * i);
    }
    cr_expect_eq(len[1], ga.body_len, "the gzip form made later is not in Redis");
    cr_expect_eq(len[2], ma.body_len);
    cr_expect_eq((size_t)val->len, 32 + len[0] + len[1] + len[2]);
    freeReplyObject(val);
    redisFree(c);
    pm_http_response_free(&ga);

    /* Replica b: a tier hit, served in each coding, none compressed by b. */
    double gz0 = pm_test_metric(&b, GZ_RESULTS), br0 = pm_test_metric(&b, BR_RESULTS);
    pm_http_response mb = get_ae(&b, NULL, path, "br", NULL);
    char buf[64];
    cr_assert_eq(mb.status, 200);
    cr_expect_str_eq(svc_header(&mb, "X-Cache", buf, sizeof buf), "HIT");
    cr_expect_str_eq(svc_header(&mb, "Content-Encoding", buf, sizeof buf), "br");
    cr_assert_eq(mb.body_len, ma.body_len);
    cr_assert_eq(memcmp(mb.body, ma.body, ma.body_len), 0, "replicas serve other br bytes");
    pm_http_response gb = get_ae(&b, NULL, path, "gzip", NULL);
    pm_http_response ib = get_ae(&b, NULL, path, NULL, NULL);
    size_t n;
    unsigned char *plain = gunzip(gb.body, gb.body_len, &n);
    cr_assert_eq(n, ib.body_len);
    cr_assert_eq(memcmp(plain, ib.body, n), 0);
    free(plain);
    cr_expect_eq(pm_test_metric(&b, GZ_RESULTS), gz0, "replica b compressed a tier hit");
    cr_expect_eq(pm_test_metric(&b, BR_RESULTS), br0, "replica b compressed a tier hit");
    /* A tier hit lacking a form: made once, by the replica that is asked. */
    const char *other = SVC_ROUTE "?seed=43&count=12&extent=64x64&format=glb";
    pm_http_response ia = get_ae(&a, NULL, other, NULL, NULL);
    cr_assert_eq(ia.status, 200);
    c = redisConnect("127.0.0.1", rd.port);
    cr_assert(c && !c->err);
    size_t stored = 0;
    for (int i = 0; i < 200 && stored < 2; i++) {   /* stored after the answer: poll */
        redisReply *k = redisCommand(c, "KEYS procmesh:*");
        stored = k ? k->elements : 0;
        freeReplyObject(k);
        if (stored < 2) pm_tp_sleep_ms(20);
    }
    redisFree(c);
    cr_assert_eq(stored, 2, "the identity-only entry never reached Redis");
    double ga0 = pm_test_metric(&a, BR_RESULTS);
    for (int i = 0; i < 3; i++) {
        pm_http_response r = get_ae(&b, NULL, other, "br", NULL);
        cr_assert_eq(r.status, 200);
        cr_expect_str_eq(svc_header(&r, "X-Cache", buf, sizeof buf), "HIT");
        cr_expect_str_eq(svc_header(&r, "Content-Encoding", buf, sizeof buf), "br");
        pm_http_response_free(&r);
    }
    cr_expect_eq(pm_test_metric(&b, BR_RESULTS), br0 + 1, "br of a tier hit: not made once");
    cr_expect_eq(pm_test_metric(&a, BR_RESULTS), ga0);
    pm_http_response_free(&ia);
    pm_http_response_free(&ma);
    pm_http_response_free(&mb);
    pm_http_response_free(&gb);
    pm_http_response_free(&ib);
    pm_test_server_stop(&a);
    pm_test_server_stop(&b);
    pm_tp_redis_cleanup(&rd);
}

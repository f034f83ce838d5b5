/* pm_api_request_run (api/request.c): one request through every stage
 * with no sockets, as the CLI, the fuzzers and the benchmarks run it. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pm_api/encode.h"
#include "pm_api/key.h"
#include "pm_api/request.h"
#include "pm_test_api.h"
#include "pm_test_multipart.h"

extern const pm_api_generator pm_api_gen_grid, pm_api_gen_road, pm_api_gen_junction;

typedef struct stages { int seen[4], order[8], n; int scene_from; } stages;

static void on_stage(void *cls, pm_api_stage st, const pm_scene *scene) {
    stages *s = cls;
    s->seen[st]++;
    s->order[s->n++] = (int)st;
    if (scene && !s->scene_from) s->scene_from = (int)st + 1;
}

/* Runs body (or, with get, the query pairs) into n outputs; returns what
 * pm_api_request_run returns, the problem in *p (caller frees). */
static int run(const pm_api_generator *gen, const char *body, size_t len, const char *ctype,
               const pm_api_output *o, size_t n, pm_api_buf *out, pm_api_key *keys,
               stages *st, pm_api_problem *p) {
    static pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_api_problem_init(p);
    pm_api_request rq = {.gen = gen, .body = body, .body_len = len, .content_type = ctype};
    pm_api_run r = {.lim = &lim, .outputs = o, .noutputs = n, .stage_done = on_stage, .cls = st};
    return pm_api_request_run(&rq, &r, out, keys, p);
}

/* Several outputs of one generation: each the bytes and key of the
 * stages run by hand, the stages reported in order. */
Test(request, outputs_are_the_stages_bytes_and_keys) {
    const char *body = "{\"seed\": 7, \"size\": 5}";
    pm_api_output o[3] = {pm_api_output_default(PM_API_FMT_JSON),
                          pm_api_output_default(PM_API_FMT_GLB),
                          {PM_API_FMT_GLB, PM_API_COMPRESS_MESHOPT, true, PM_API_META_SUMMARY}};
    pm_api_buf out[3];
    pm_api_key keys[3];
    stages st = {0};
    pm_api_problem p;
    cr_assert_eq(run(&pm_api_gen_grid, body, strlen(body), NULL, o, 3, out, keys, &st, &p), 0,
                 "%s", p.detail);
    int want[4] = {PM_API_STAGE_DOCUMENT, PM_API_STAGE_PARSE, PM_API_STAGE_GENERATE,
                   PM_API_STAGE_ENCODE};
    cr_assert_eq(st.n, 4);
    for (int i = 0; i < 4; i++) cr_expect_eq(st.order[i], want[i]);
    cr_expect_eq(st.scene_from, PM_API_STAGE_GENERATE + 1, "the scene comes with GENERATE");
    pm_test_api_run r;
    pm_test_api_build(&r, &pm_api_gen_grid, body, NULL);
    for (int i = 0; i < 3; i++) {
        pm_api_key k = pm_api_cache_key_output(&pm_api_gen_grid, r.canon, &o[i]);
        cr_assert(k.hi == keys[i].hi && k.lo == keys[i].lo, "output %d: key", i);
        char hex[33];
        pm_api_key_hex(k, hex);
        pm_api_buf b;
        cr_assert_eq(pm_api_encode_output(r.scene, &pm_api_gen_grid, hex, &o[i], &b), 0);
        cr_assert(b.len == out[i].len && memcmp(b.data, out[i].data, b.len) == 0,
                  "output %d: bytes", i);
        free(b.data);
        free(out[i].data);
    }
    pm_test_api_done(&r);
    pm_api_problem_free(&p);
}

/* A refusal at each stage: its status and pointer, no output, no later
 * stage reported. */
Test(request, refusals_stop_at_their_stage) {
    pm_api_output glb = pm_api_output_default(PM_API_FMT_GLB);
    static const struct { const char *body; long status; int stages; const char *ptr; } cases[] = {
        {"{\"seed\": 7,", 400, 0, NULL},                     /* the document */
        {"{\"seed\": 7, \"size\": -2}", 422, 1, "/size"},    /* the parse */
        {"{\"seed\": 7, \"size\": 5, \"sise\": 1}", 422, 1, "/sise"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pm_api_buf out = {(void *)1, 1};
        stages st = {0};
        pm_api_problem p;
        cr_assert_eq(run(&pm_api_gen_grid, cases[i].body, strlen(cases[i].body), NULL, &glb, 1,
                         &out, NULL, &st, &p), -1, "case %zu", i);
        cr_expect_eq(p.status, cases[i].status, "case %zu: %ld %s", i, (long)p.status, p.detail);
        cr_expect(out.data == NULL && out.len == 0, "case %zu: no output", i);
        cr_expect_eq(st.n, cases[i].stages, "case %zu", i);
        if (cases[i].ptr) cr_expect(pm_test_api_has_error(&p, cases[i].ptr, NULL), "case %zu", i);
        pm_api_problem_free(&p);
    }
    /* a query on a route with no GET */
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_query_pair q[] = {{"seed", "1"}};
    pm_api_request rq = {.gen = &pm_api_gen_junction, .get = true, .query = q, .nquery = 1};
    json_t *doc = (json_t *)1;
    cr_expect_eq(pm_api_request_document(&rq, &doc, &p), -1);
    cr_expect_eq(p.status, 405);
    cr_expect_null(doc);
    pm_api_problem_free(&p);
}

/* The document by media type: float32 heights as multipart give the key
 * and bytes of the same heights as JSON text. */
Test(request, multipart_reads_as_the_json_text) {
    enum { C = 12, R = 10 };
    static float h[C * R];
    static char text[C * R * 24 + 256], body[C * R * 4 + 1024];
    const char *head = "{\"points\": [[1,0,1],[10,0,8],[20,0,9]], \"terrain\": {\"cell\": 2, "
                       "\"cols\": 12, \"rows\": 10";
    size_t n = (size_t)snprintf(text, sizeof text, "%s, \"heights\": [", head);
    for (int i = 0; i < C * R; i++) {
        h[i] = (float)((i * 13) % 50) / 8.0f;
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%.9g", i ? "," : "", (double)h[i]);
    }
    snprintf(text + n, sizeof text - n, "]}}");
    char req[256];
    snprintf(req, sizeof req, "%s}}", head);
    size_t blen = pm_test_multipart(body, sizeof body, req, h, C * R, "/terrain/heights");
    pm_api_output glb = pm_api_output_default(PM_API_FMT_GLB);
    pm_api_buf a, b;
    pm_api_key ka, kb;
    stages sa = {0}, sb = {0};
    pm_api_problem p;
    cr_assert_eq(run(&pm_api_gen_road, text, strlen(text), "application/json", &glb, 1, &a, &ka,
                     &sa, &p), 0, "%s", p.detail);
    pm_api_problem_free(&p);
    cr_assert_eq(run(&pm_api_gen_road, body, blen, PM_TEST_MULTIPART_TYPE, &glb, 1, &b, &kb, &sb,
                     &p), 0, "%s", p.detail);
    pm_api_problem_free(&p);
    cr_expect(ka.hi == kb.hi && ka.lo == kb.lo, "one key");
    cr_expect(a.len == b.len && memcmp(a.data, b.data, a.len) == 0, "the same GLB");
    free(a.data);
    free(b.data);
}

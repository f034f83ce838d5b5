#include "pm_test_api.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_api/encode.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"

#include <xxhash.h>

static const pm_api_limits *or_default(const pm_api_limits *lim, pm_api_limits *store) {
    if (lim) return lim;
    pm_api_limits_default(store);
    return store;
}

void pm_test_api_parse(pm_test_api_run *r, const pm_api_generator *gen, const char *text,
                       const pm_api_limits *lim) {
    pm_api_limits def;
    lim = or_default(lim, &def);
    *r = (pm_test_api_run){.gen = gen, .arena = pm_arena_create(0)};
    pm_api_problem_init(&r->prob);
    json_t *doc = NULL;
    cr_assert_eq(pm_api_parse_body(text, strlen(text), &doc, &r->prob), 0, "test JSON must parse: %s (%s)",
                 text, r->prob.detail);
    r->rc = gen->parse(doc, lim, r->arena, &r->params, &r->canon, &r->prob);
    json_decref(doc);
    r->parsed = r->rc == 0;
    if (r->parsed) r->canon_text = json_dumps(r->canon, JSON_SORT_KEYS | JSON_COMPACT);
}

void pm_test_api_generate(pm_test_api_run *r, const pm_api_limits *lim) {
    pm_api_limits def;
    lim = or_default(lim, &def);
    cr_assert(r->parsed, "generate needs a parsed request");
    volatile int cancel = 0;
    r->rc = r->gen->generate(r->params, lim, r->arena, &cancel, &r->scene, &r->prob);
    r->generated = r->rc == 0;
}

void pm_test_api_build(pm_test_api_run *r, const pm_api_generator *gen, const char *text,
                       const pm_api_limits *lim) {
    pm_test_api_parse(r, gen, text, lim);
    if (r->parsed) pm_test_api_generate(r, lim);
}

void pm_test_api_done(pm_test_api_run *r) {
    free(r->canon_text);
    json_decref(r->canon);
    pm_api_problem_free(&r->prob);
    pm_arena_destroy(r->arena);
    *r = (pm_test_api_run){0};
}

const char *pm_test_api_msg_at(const pm_api_problem *p, const char *pointer) {
    size_t i;
    json_t *e;
    json_array_foreach(p->errors, i, e) {
        const char *ptr = json_string_value(json_object_get(e, "pointer"));
        if (ptr && strcmp(ptr, pointer) == 0) return json_string_value(json_object_get(e, "message"));
    }
    return NULL;
}

bool pm_test_api_has_error(const pm_api_problem *p, const char *pointer, const char *word) {
    size_t i;
    json_t *e;
    json_array_foreach(p->errors, i, e) {
        const char *ptr = json_string_value(json_object_get(e, "pointer"));
        const char *m = json_string_value(json_object_get(e, "message"));
        if (ptr && m && strcmp(ptr, pointer) == 0 && (!word || strstr(m, word))) return true;
    }
    return false;
}

void pm_test_api_assert_422(const pm_test_api_run *r, const char *what, const char *pointer,
                            const char *word) {
    cr_assert_eq(r->prob.status, 422, "%s: status %d (%s)", what, r->prob.status, r->prob.detail);
    if (pm_test_api_has_error(&r->prob, pointer, word)) return;
    char *dump = r->prob.errors ? json_dumps(r->prob.errors, 0) : NULL;
    cr_assert_fail("%s: want %s (%s), got %s", what, pointer, word ? word : "", dump ? dump : "no errors");
    free(dump);
}

void pm_test_api_expect_422(const pm_api_generator *gen, const char *body, const pm_api_limits *lim,
                            bool generate, const char *pointer, const char *word) {
    pm_test_api_run r;
    if (generate)
        pm_test_api_build(&r, gen, body, lim);
    else
        pm_test_api_parse(&r, gen, body, lim);
    cr_assert_eq(r.rc, -1, "%s should fail", body);
    pm_test_api_assert_422(&r, body, pointer, word);
    pm_test_api_done(&r);
}

uint64_t pm_test_api_glb_hash(const pm_api_generator *gen, const char *text) {
    pm_test_api_run r;
    pm_test_api_build(&r, gen, text, NULL);
    cr_assert(r.parsed && r.generated && r.rc == 0, "%s: %s", text, r.prob.detail);
    char hex[33];
    pm_api_key_hex(pm_api_cache_key(gen, r.canon, PM_API_FMT_GLB), hex);
    pm_api_buf out;
    cr_assert_eq(pm_api_encode(r.scene, gen, hex, PM_API_FMT_GLB, &out), 0);
    uint64_t h = XXH3_64bits(out.data, out.len);
    free(out.data);
    pm_test_api_done(&r);
    return h;
}

void pm_test_api_check_goldens(const pm_api_generator *gen, const pm_test_golden *g, size_t n,
                               const char *print_env) {
    const char *mode = getenv(print_env);
    bool print = mode && strcmp(mode, "print") == 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = pm_test_api_glb_hash(gen, g[i].body);
        cr_assert_eq(h, pm_test_api_glb_hash(gen, g[i].body), "%s: two runs differ", g[i].name);
        if (print) {
            fprintf(stderr, "golden %s: 0x%016llxull\n", g[i].name, (unsigned long long)h);
            continue;
        }
        cr_assert_eq(h, g[i].hash, "%s: GLB hash 0x%016llx, golden 0x%016llx (%s=print prints "
                     "the new ones)", g[i].name, (unsigned long long)h,
                     (unsigned long long)g[i].hash, print_env);
    }
}

typedef struct pm_test__bytes { char *b; size_t n; } pm_test__bytes;

static int pm_test__bytes_cb(const char *s, size_t n, void *d) {
    pm_test__bytes *o = d;
    o->b = realloc(o->b, o->n + n);
    cr_assert_not_null(o->b);
    memcpy(o->b + o->n, s, n);
    o->n += n;
    return 0;
}

char *pm_test_api_canonical_bytes(const json_t *canon, size_t *len) {
    pm_test__bytes o = {malloc(1), 0};
    cr_assert_eq(pm_api_canonical_dump(canon, pm_test__bytes_cb, &o), 0);
    *len = o.n;
    return o.b;
}

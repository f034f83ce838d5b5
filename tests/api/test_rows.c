#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/arena.h"
#include "scene/rng.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"
#include "pm_api/rows.h"

/* Row blocks (pm_api/rows.h): a road's points read as one block of doubles
 * must give what the JSON arrays give, byte for byte: the same canonical
 * form (so the same cache key), the same errors with the same pointers. */

extern const pm_api_generator pm_api_gen_road;

typedef struct seen {
    int rc;
    char *canon;     /* the canonical dump (binary: the points' doubles), or NULL */
    size_t canon_len;
    char *problem;   /* the problem+json, or NULL */
    pm_api_key key;
} seen;

typedef struct sink { char *s; size_t len; } sink;

static int sink_cb(const char *buf, size_t n, void *data) {
    sink *k = data;
    k->s = realloc(k->s, k->len + n + 1);
    cr_assert_not_null(k->s);
    memcpy(k->s + k->len, buf, n);
    k->len += n;
    k->s[k->len] = '\0';
    return 0;
}

/* text through the road's parse, its document read with or without row
 * blocks; *had_rows: the document held a row block. */
static seen road(const char *text, bool rows, bool *had_rows) {
    seen r = {0};
    pm_api_problem p;
    pm_api_problem_init(&p);
    json_t *doc = NULL;
    int prc = rows ? pm_api_parse_body_rows(text, strlen(text), &doc, &p)
                   : pm_api_parse_body(text, strlen(text), &doc, &p);
    cr_assert_eq(prc, 0, "%s: %s", text, p.detail);
    if (had_rows) *had_rows = pm_api_rows_is(json_object_get(doc, "points"));
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    lim.max_points = 6;
    pm_arena *a = pm_arena_create(0);
    void *params = NULL;
    json_t *canon = NULL;
    r.rc = pm_api_gen_road.parse(doc, &lim, a, &params, &canon, &p);
    if (canon) {
        sink k = {0};
        cr_assert_eq(pm_api_canonical_dump(canon, sink_cb, &k), 0);
        r.canon = k.s;
        r.canon_len = k.len;
        r.key = pm_api_cache_key(&pm_api_gen_road, canon, PM_API_FMT_GLB);
    }
    if (pm_api_problem_failed(&p)) {
        json_t *j = pm_api_problem_json(&p, "x");
        r.problem = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
        json_decref(j);
    }
    json_decref(canon);
    json_decref(doc);
    pm_arena_destroy(a);
    pm_api_problem_free(&p);
    return r;
}

static void same(const char *text, bool want_rows) {
    bool had = false;
    seen a = road(text, false, NULL), b = road(text, true, &had);
    cr_expect_eq(had, want_rows, "%s: row block %s", text, had ? "made" : "not made");
    cr_expect_eq(a.rc, b.rc, "%s", text);
    cr_expect(a.canon_len == b.canon_len && (a.canon == NULL) == (b.canon == NULL) &&
                  (!a.canon || memcmp(a.canon, b.canon, a.canon_len) == 0),
              "%s: canonical forms differ", text);
    cr_expect_str_eq(a.problem ? a.problem : "(none)", b.problem ? b.problem : "(none)", "%s", text);
    cr_expect(a.key.hi == b.key.hi && a.key.lo == b.key.lo, "%s: keys differ", text);
    free(a.canon), free(a.problem), free(b.canon), free(b.problem);
}

Test(rows, valid_points_give_the_same_canonical_text_and_key) {
    same("{\"points\": [[0, 0, 0], [10.5, -0.0, 3], [20, 1e-3, -7.25]]}", true);
    same("{\"width\": 8, \"points\": [[ 1 , 2 , 3 ] , [4,5,6]], \"max_error\": 0.05}", true);
    same("{\"points\": [[0.1, 0.2, 0.30000000000000004], [123456.789e-3, 9007199254740992, 1]]}",
         true);   /* 2^53 is out of range: then read as JSON arrays are */
    same("{\"points\": [[99999.99999999999, -99999.99999999999, 5e-324], [1, 2, 3]]}", true);
}

Test(rows, every_error_reads_as_from_json_arrays) {
    same("{\"points\": [[0, 0, 0], [0, 0, 0]]}", true);            /* coincide: after reading */
    same("{\"points\": [[0, 0], [1, 1]]}", true);                  /* two columns, not three */
    same("{\"points\": [[0, 0, 0], [1e6, 0, 0]]}", true);          /* out of range */
    same("{\"points\": [[0, 0, 0]]}", true);                       /* too few */
    same("{\"points\": [[0,0,0],[1,0,0],[2,0,0],[3,0,0],[4,0,0],[5,0,0],[6,0,0]]}", true); /* max_points */
    same("{\"points\": [[0, 0, 0], [1, 0]]}", false);              /* ragged: JSON arrays */
    same("{\"points\": [[0, 0, 0], [1, 0, 0, 0]]}", false);
    same("{\"points\": [[0, 0, 0], [1, 0, \"z\"]]}", false);
    same("{\"points\": [[0, 0, 0], [1, 0, 9007199254740993]]}", true);
    same("{\"points\": [[0, 0, 0], []]}", false);
    same("{\"points\": [[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17], [1,2,3]]}", false);
    /* Row blocks where no rows are wanted read as the arrays they are. */
    same("{\"points\": [[0, 0, 0], [5, 0, 0]], \"props\": [[1, 2]]}", true);
    same("{\"points\": [[0, 0, 0], [5, 0, 0]], \"props\": [{\"name\": [[1]], \"spacing\": 2}]}", true);
    same("{\"points\": [[0, 0, 0], [5, 0, 0]], \"curve\": [[1]], \"width\": [[2]]}", true);
    same("{\"points\": [[0, 0, 0], [5, 0, 0]], \"terrain\": {\"origin\": [[1, 2]], \"cell\": 1, "
         "\"cols\": 2, \"rows\": 2, \"heights\": [1, 2, 3, 4]}}", true);
    same("{\"points\": [[0, 0, 0], [5, 0, 0]], \"lods\": [[1]], \"banking\": {\"roll\": [[1], [2]]}}",
         true);
    same("{\"points\": [[0, 0, 0], [5, 0, 0]], \"typo\": [[1, 2], [3, 4]]}", true);
}

Test(rows, random_roads_give_the_same_key) {
    pm_rng r;
    pm_rng_seed(&r, 14);
    char text[4096];
    for (int t = 0; t < 300; t++) {
        int n = 2 + (int)(pm_rng_u64(&r) % 5), len = snprintf(text, sizeof text, "{\"points\": [");
        for (int i = 0; i < n; i++) {
            double x = pm_rng_range(&r, -2e5, 2e5) * (t % 3 ? 1e-3 : 1);
            len += snprintf(text + len, sizeof text - (size_t)len, "%s[%.*g, %d, %.17g]", i ? "," : "",
                            1 + (int)(pm_rng_u64(&r) % 17), x, (int)(pm_rng_u64(&r) % 7) - 3,
                            pm_rng_range(&r, -500, 500));
        }
        snprintf(text + len, sizeof text - (size_t)len, "], \"width\": %d}", 1 + t % 9);
        same(text, true);
    }
}

/* Points that do not fit the job's memory are a 503 on either path, not
 * a road read from nothing (nor a crash in the checks that follow). */
Test(rows, points_past_the_memory_limit_are_a_503) {
    static char text[300 * 40 + 64];
    int len = snprintf(text, sizeof text, "{\"points\": [");
    for (int i = 0; i < 300; i++)
        len += snprintf(text + len, sizeof text - (size_t)len, "%s[%d.5, 0, %d]", i ? "," : "", 10 * i, i % 7);
    snprintf(text + len, sizeof text - (size_t)len, "]}");
    for (int rows = 0; rows < 2; rows++) {
        pm_api_problem p;
        pm_api_problem_init(&p);
        json_t *doc = NULL;
        cr_assert_eq(rows ? pm_api_parse_body_rows(text, strlen(text), &doc, &p)
                          : pm_api_parse_body(text, strlen(text), &doc, &p), 0);
        pm_api_limits lim;
        pm_api_limits_default(&lim);
        pm_arena *a = pm_arena_create(1024);
        pm_arena_set_limit(a, 4096);   /* the request's struct fits, 300 points do not */
        void *params = NULL;
        json_t *canon = NULL;
        cr_expect_eq(pm_api_gen_road.parse(doc, &lim, a, &params, &canon, &p), -1);
        cr_expect_eq(p.status, 503, "%s: %d %s", rows ? "row block" : "JSON arrays", p.status, p.detail);
        cr_expect_null(canon);
        json_decref(doc);
        pm_arena_destroy(a);
        pm_api_problem_free(&p);
    }
}

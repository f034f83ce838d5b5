#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_api/key.h"
#include "pm_api/reader.h"
#include "pm_api/request.h"
#include "pm_test_fast.h"

void pm_test_text_add(pm_test_text *t, const char *buf, size_t n) {
    t->s = realloc(t->s, t->len + n + 1);
    cr_assert_not_null(t->s);
    memcpy(t->s + t->len, buf, n);
    t->len += n;
    t->s[t->len] = '\0';
}

void pm_test_text_str(pm_test_text *t, const char *s) { pm_test_text_add(t, s, strlen(s)); }

int pm_test_text_cb(const char *buf, size_t n, void *data) {
    pm_test_text_add(data, buf, n);
    return 0;
}

void pm_test_text_printf(pm_test_text *t, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cr_assert(n >= 0 && (size_t)n < sizeof buf);
    pm_test_text_add(t, buf, (size_t)n);
}

typedef struct pm_test__seen {
    int rc;              /* 0, -1; 1: the fast reader did not take it */
    pm_test_text canon;  /* the canonical dump (may hold NULs: bulk arrays) */
    char *problem;       /* the problem+json, or NULL */
    char *params;
    pm_api_key key;
} pm_test__seen;

static pm_test__seen pm_test__read(const pm_api_generator *gen, bool rows,
                                   pm_test_params_print print, const char *body, size_t len,
                                   bool fast, const pm_api_limits *lim) {
    pm_test__seen r = {0};
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_arena *a = pm_arena_create(0);
    pm_api_job job = {0};
    if (fast) {
        r.rc = pm_api_job_parse_text(&job, gen, lim, a, body, len, &p);
    } else {
        json_t *doc = NULL;
        int got = rows ? pm_api_parse_body_rows(body, len, &doc, &p)
                       : pm_api_parse_body(body, len, &doc, &p);
        r.rc = got == 0 ? pm_api_job_parse(&job, gen, lim, a, doc, &p) : -1;
        json_decref(doc);
    }
    if (r.rc == 0) {
        cr_assert_eq(pm_api_canonical_dump(job.canonical, pm_test_text_cb, &r.canon), 0);
        r.key = pm_api_job_key(&job, &(pm_api_output){.format = PM_API_FMT_GLB}, NULL);
        r.params = print(job.params);
    }
    if (pm_api_problem_failed(&p)) {
        json_t *j = pm_api_problem_json(&p, "x");
        r.problem = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
        json_decref(j);
    }
    pm_api_job_end(&job);
    pm_arena_destroy(a);
    pm_api_problem_free(&p);
    return r;
}

static void pm_test__seen_free(pm_test__seen *s) {
    free(s->canon.s);
    free(s->problem);
    free(s->params);
}

#define PM_TEST__NONE(s) ((s) ? (s) : "(none)")

bool pm_test_fast_same(const pm_api_generator *gen, bool rows, pm_test_params_print print,
                       const char *body, const pm_api_limits *lim) {
    size_t len = strlen(body);
    pm_test__seen a = pm_test__read(gen, rows, print, body, len, false, lim),
                  b = pm_test__read(gen, rows, print, body, len, true, lim);
    bool taken = b.rc != 1;
    if (taken) {
        cr_expect_eq(a.rc, b.rc, "%.300s: rc %d / %d (%s)", body, a.rc, b.rc,
                     PM_TEST__NONE(a.problem));
        bool same_canon = a.canon.len == b.canon.len &&
                          (a.canon.len == 0 || memcmp(a.canon.s, b.canon.s, a.canon.len) == 0);
        cr_expect(same_canon, "%.300s\n%.400s\n%.400s", body, PM_TEST__NONE(a.canon.s),
                  PM_TEST__NONE(b.canon.s));
        cr_expect_str_eq(PM_TEST__NONE(a.problem), PM_TEST__NONE(b.problem), "%.300s", body);
        cr_expect_str_eq(PM_TEST__NONE(a.params), PM_TEST__NONE(b.params), "%.300s", body);
        cr_expect(a.key.hi == b.key.hi && a.key.lo == b.key.lo, "%.300s: keys differ", body);
    } else {
        cr_expect_null(b.problem, "%.300s: not taken, yet a problem: %s", body, b.problem);
    }
    pm_test__seen_free(&a);
    pm_test__seen_free(&b);
    return taken;
}

static int pm_test__rnd(pm_rng *r, int n) { return (int)(pm_rng_u64(r) % (uint64_t)n); }

void pm_test_fast_real(pm_test_text *t, pm_rng *r, double x) {
    if (x == 0) {
        static const char *const zeros[] = {"0", "-0", "0.0", "-0.0", "0e0", "-0E+3", "0.000", "-0.0e-7"};
        pm_test_text_str(t, zeros[pm_test__rnd(r, 8)]);
        return;
    }
    switch (pm_test__rnd(r, 6)) {
    case 0: pm_test_text_printf(t, "%.*g", 1 + pm_test__rnd(r, 17), x); break;
    case 1: pm_test_text_printf(t, "%.*f", pm_test__rnd(r, 8), x); break;
    case 2: pm_test_text_printf(t, "%.*e", pm_test__rnd(r, 17), x); break;
    case 3: pm_test_text_printf(t, "%.*E", pm_test__rnd(r, 10), x); break;
    case 4: pm_test_text_printf(t, "%.*fe-3", pm_test__rnd(r, 5), x * 1000); break;   /* 1234.5e-3 */
    default: pm_test_text_printf(t, "%.17g", x); break;
    }
}

void pm_test_fast_coord(pm_test_text *t, pm_rng *r, double x) {
    int style = pm_test__rnd(r, 8);
    if (style < 4) pm_test_text_printf(t, "%.3f", x);
    else if (style < 6) pm_test_text_printf(t, "%.*f", pm_test__rnd(r, 8), x);
    else pm_test_fast_real(t, r, x);
}

void pm_test_fast_height(pm_test_text *t, pm_rng *r) {
    static const char *const odd[] = {"5e-324", "4.9406564584124654e-324", "2.2250738585072014e-308",
                                      "1e-300", "-1E-300", "1e-7", "0.00001234", "-0.000099",
                                      "1.7976931348623157e-300", "123456789e-12"};
    int k = pm_test__rnd(r, 4);
    if (k == 0) pm_test_fast_real(t, r, 0);
    else if (k == 1) pm_test_text_str(t, odd[pm_test__rnd(r, 10)]);
    else pm_test_fast_real(t, r, pm_rng_range(r, -5, 5));
}

const char *pm_test_fast_blank(pm_rng *r) {
    static const char *const s[] = {"", " ", " ", " ", "\n", "  ", "\t "};
    return s[pm_test__rnd(r, 7)];
}

const char *const pm_test_fast_refused[PM_TEST_FAST_REFUSED] = {
    "2e5", "-100000.00000000001", "1e6", "\"1.5\"", "null", "true", "[1]", "{}", "100001", "-1E+5"};
const char *const pm_test_fast_malformed[PM_TEST_FAST_MALFORMED] = {
    "01", "1.", ".5", "+1", "-", "1e", "1e+", "NaN", "Infinity", "-Infinity", "1e999", "-1e400",
    "0x10", "1.5.2", "--1", "1_0", "- 1", "1.e5", "00.5"};

void pm_test_fast_bad_token(const pm_api_generator *gen, const char *body, size_t at,
                            const char *tok, const char *ptr, bool taken) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_api_output out = pm_api_output_default(PM_API_FMT_GLB);
    pm_api_run run = {.lim = &lim, .outputs = &out, .noutputs = 1};
    pm_api_request rq = {.gen = gen, .body = body, .body_len = strlen(body)};
    pm_api_buf buf = {0};
    pm_api_problem p;
    pm_api_problem_init(&p);
    if (pm_api_request_run(&rq, &run, &buf, NULL, &p) == 0) free(buf.data);
    bool malformed = false;
    for (size_t i = 0; i < PM_TEST_FAST_MALFORMED; i++) malformed |= strcmp(tok, pm_test_fast_malformed[i]) == 0;
    const char *first = json_string_value(json_object_get(json_array_get(p.errors, 0), "pointer"));
    if (strcmp(tok, "-1E+5") == 0) {   /* in range (the geometry may still be refused, both paths alike) */
        bool at_ptr = false;
        for (size_t i = 0; i < json_array_size(p.errors); i++)
            at_ptr |= strcmp(json_string_value(json_object_get(json_array_get(p.errors, i), "pointer")), ptr) == 0;
        cr_expect(taken && !at_ptr, "%.400s: %d %s", body, p.status, p.detail);
    } else if (!malformed) {
        cr_expect(!taken, "taken: %.400s", body);
        cr_expect(p.status == 422 && first && strcmp(first, ptr) == 0 && json_array_size(p.errors) == 1,
                  "%.400s: %d %s, expected %s", body, p.status, p.detail, ptr);
    } else {
        cr_expect(!taken, "taken: %.400s", body);
        const char *col = strstr(p.detail, "at line 1, column ");
        long c = col ? strtol(col + 18, NULL, 10) : 0;
        cr_expect(p.status == 400 && c > (long)at && c <= (long)(at + strlen(tok)),
                  "%.400s: %d %s (the token at column %zu)", body, p.status, p.detail, at + 1);
    }
    pm_api_problem_free(&p);
}

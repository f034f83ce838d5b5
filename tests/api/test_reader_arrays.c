#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/arena.h"
#include "pm_api/generator.h"
#include "pm_api/bulk.h"
#include "pm_api/reader.h"
#include "pm_test_api.h"

/* Large numeric arrays (the fast path of pm_api_vec) and arrays of the
 * wrong length, whose elements are still checked. */

extern const pm_api_generator pm_api_gen_road;

#define BIG 100000

typedef struct grammar {
    double h[BIG];
    size_t nh;
    double w[4];
    size_t narms;
} grammar;

/* {"h": [BIG numbers], "arms": [2..4 {"w": >0}], "v": [2 numbers in [0,1]]} */
static json_t *read_doc(const json_t *doc, grammar *g, pm_api_problem *p) {
    pm_api_node root, arms, arm;
    double v[2];
    pm_api_problem_init(p);
    pm_api_begin(&root, doc, p);
    pm_api_vec(&root, "h", 0, 1, BIG, PM_API_RANGE(-1e5, 1e5), (const double[]){0}, g->h,
               &g->nh);
    g->narms = 0;
    if (json_object_get(doc, "arms")) /* absent would be too short */
        g->narms = pm_api_array(&root, "arms", 0, PM_API_IRANGE(2, 4), &arms);
    for (size_t i = 0; i < g->narms; i++) {
        pm_api_object(&arms, NULL, PM_API_REQUIRED, &arm);
        pm_api_num(&arm, "w", PM_API_REQUIRED, PM_API_GT(0), 1, &g->w[i]);
        pm_api_end(&arm);
    }
    if (json_object_get(doc, "arms")) pm_api_end(&arms);
    pm_api_vec(&root, "v", 0, 2, 2, PM_API_RANGE(0, 1), (const double[]){0, 0}, v, NULL);
    return pm_api_finish(&root);
}

static json_t *heights(size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, i % 3 ? json_real((double)i * 0.001 - 40.0)
                                       : json_integer((json_int_t)i % 1000 - 500));
    return a;
}

/* The pointers of every error, in order, joined by spaces. */
static void pointers(const pm_api_problem *p, char *out, size_t cap) {
    size_t i, n = 0;
    json_t *e;
    out[0] = '\0';
    json_array_foreach(p->errors, i, e)
        n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", i ? " " : "",
                              json_string_value(json_object_get(e, "pointer")));
}

static grammar g;

Test(reader_arrays, every_bad_element_named_by_its_own_pointer) {
    json_t *h = heights(BIG);
    json_array_set_new(h, 1234, json_string("1.5"));
    json_array_set_new(h, 5000, json_real(2e5));
    json_array_set_new(h, BIG - 1, json_null());
    json_t *doc = json_pack("{s:o}", "h", h);
    pm_api_problem p;
    json_t *c = read_doc(doc, &g, &p);
    cr_expect_null(c);
    char ptrs[256];
    pointers(&p, ptrs, sizeof ptrs);
    cr_expect_str_eq(ptrs, "/h/1234 /h/5000 /h/99999");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(p.errors, 1), "message")),
                     "must be <= 100000");
    cr_expect_eq(g.nh, 1, "a failed read leaves the default");
    cr_expect_float_eq(g.h[0], 0.0, 0);
    pm_api_problem_free(&p);
    json_decref(doc);
}

/* A long canonical array is a bulk array (pm_api/bulk.h, hashed as its
 * doubles): the values read, -0 as 0, integers as reals; it lives on after
 * the input is gone. */
Test(reader_arrays, canonical_array_is_bulk) {
    json_t *h = heights(BIG);
    json_array_set_new(h, 7, json_real(-0.0));
    json_array_set_new(h, 8, json_integer(0));
    json_array_set_new(h, 9, json_real(1e-300));
    json_t *doc = json_pack("{s:O}", "h", h);
    pm_api_problem p;
    json_t *c = read_doc(doc, &g, &p);
    cr_assert_not_null(c, "%s", p.detail);
    cr_expect_eq(g.nh, BIG);
    json_decref(doc);
    const json_t *ch = json_object_get(c, "h");
    cr_assert(pm_api_bulk_is(ch));
    cr_assert_eq(pm_api_bulk_len(ch), BIG);
    for (size_t i = 0; i < BIG; i++) {
        double x = json_number_value(json_array_get(h, i)), y = pm_api_bulk_at(ch, i);
        cr_assert(g.h[i] == x && y == x && (y != 0 || !signbit(y)) && (g.h[i] != 0 || !signbit(g.h[i])),
                  "h[%zu]", i);
    }
    json_decref(h);
    json_decref(c);
    pm_api_problem_free(&p);
}

static void expect_pointers(const char *text, const char *want) {
    json_error_t e;
    json_t *doc = json_loads(text, 0, &e);
    cr_assert_not_null(doc, "%s: %s", text, e.text);
    pm_api_problem p;
    json_t *c = read_doc(doc, &g, &p);
    cr_expect_null(c, "%s", text);
    char ptrs[256];
    pointers(&p, ptrs, sizeof ptrs);
    cr_expect_str_eq(ptrs, want, "%s", text);
    pm_api_problem_free(&p);
    json_decref(doc);
}

Test(reader_arrays, wrong_length_still_reads_the_elements) {
    expect_pointers("{\"arms\": [{\"w\": -1}]}", "/arms /arms/0/w");
    expect_pointers("{\"arms\": [{\"w\": 1, \"x\": 2}]}", "/arms /arms/0/x");
    expect_pointers("{\"arms\": [{\"w\": 1}, {}, {\"w\": 1}, {\"w\": 0}, {\"w\": \"a\"}]}",
                    "/arms /arms/1/w /arms/3/w");
    expect_pointers("{\"v\": [0.5, 2, 0.5]}", "/v /v/1");
    expect_pointers("{\"v\": [\"a\"]}", "/v /v/0");
    expect_pointers("{\"v\": 3}", "/v");
    expect_pointers("{\"arms\": [{\"w\": 1}]}", "/arms");
    expect_pointers("{\"arms\": 5}", "/arms");
}

/* The road request: a bad height is named by its index. */
Test(reader_arrays, road_heights) {
    json_t *h = heights(64 * 64);
    json_array_set_new(h, 1234, json_string("x"));
    json_array_set_new(h, 4000, json_real(1e6));
    json_t *doc = json_pack("{s:[[f,f,f],[f,f,f]], s:{s:f, s:i, s:i, s:o}}", "points", 1.0, 0.0,
                            1.0, 50.0, 0.0, 50.0, "terrain", "cell", 1.0, "cols", 64, "rows", 64,
                            "heights", h);
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_arena *a = pm_arena_create(1 << 16);
    pm_api_problem p;
    pm_api_problem_init(&p);
    void *params;
    json_t *canon = NULL;
    cr_expect_eq(pm_api_gen_road.parse(doc, &lim, a, &params, &canon, &p), -1);
    char ptrs[256];
    pointers(&p, ptrs, sizeof ptrs);
    cr_expect_str_eq(ptrs, "/terrain/heights/1234 /terrain/heights/4000");
    pm_api_problem_free(&p);
    /* The wrong count, and the bad element too. */
    json_array_remove(h, 0);
    pm_api_problem_init(&p);
    cr_expect_eq(pm_api_gen_road.parse(doc, &lim, a, &params, &canon, &p), -1);
    pointers(&p, ptrs, sizeof ptrs);
    cr_expect_str_eq(ptrs, "/terrain/heights /terrain/heights/1233 /terrain/heights/3999");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(p.errors, 0), "message")),
                     "must be an array of 4096 numbers");
    pm_api_problem_free(&p);
    pm_arena_destroy(a);
    json_decref(doc);
}

/* A bulk array (binary or fast-parsed input) is checked in one branch-free
 * pass: every value that fails is still named, wherever it sits (in a
 * block of four or in the tail), with exclusive bounds exact to the last
 * double; values that pass are copied as they are, -0 as 0. */
static void bulk_read_as(bool f32, const double *v, size_t n, pm_api_range r, double *out,
                         char *ptrs, size_t cap) {
    json_t *doc = json_object();
    if (f32) {   /* binary uploads: the same values as float32 */
        char *buf = malloc(PM_API_BULK_TAG_LEN + n * sizeof(float));
        for (size_t i = 0; i < n; i++) {
            float f = (float)v[i];
            memcpy(buf + PM_API_BULK_TAG_LEN + i * sizeof f, &f, sizeof f);
        }
        json_object_set_new(doc, "a", pm_api_bulk_adopt_f32(buf, n));
        free(buf);
    } else {
        json_object_set_new(doc, "a", pm_api_bulk_new(v, n));
    }
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_node root;
    pm_api_begin(&root, doc, &p);
    size_t count = 0;
    pm_api_vec(&root, "a", PM_API_REQUIRED, n, n, r, NULL, out, &count);
    json_decref(pm_api_finish(&root));
    pointers(&p, ptrs, cap);
    pm_api_problem_free(&p);
    json_decref(doc);
}

/* The next value of the kind the bulk array holds from x towards to. */
static double past(bool f32, double x, double to) {
    return f32 ? (double)nextafterf((float)x, (float)to) : nextafter(x, to);
}

/* pm_api_vec's one pass over a bulk array of doubles or of float32 (the
 * values below are exact in both). */
static void checked_in_one_pass(bool f32) {
    enum { N = 4099 };   /* blocks of four or eight and a tail of three */
    static double v[N], out[N];
    char ptrs[512];
    for (size_t i = 0; i < N; i++) v[i] = (double)i * 0.25 - 512.0;
    v[10] = -0.0;
    v[N - 2] = -0.0;
    bulk_read_as(f32, v, N, PM_API_RANGE(-1e5, 1e5), out, ptrs, sizeof ptrs);
    cr_expect_str_eq(ptrs, "");
    for (size_t i = 0; i < N; i++)
        cr_assert(out[i] == v[i] && !(out[i] == 0 && signbit(out[i])), "out[%zu] = %g", i, out[i]);
    /* Exactly at the bounds passes; one value past them fails. */
    v[0] = 1e5;
    v[1] = -1e5;
    v[2] = past(f32, 1e5, HUGE_VAL);
    v[5] = past(f32, -1e5, -HUGE_VAL);
    v[7] = NAN;
    v[N - 1] = HUGE_VAL;
    v[N - 3] = -HUGE_VAL;
    bulk_read_as(f32, v, N, PM_API_RANGE(-1e5, 1e5), out, ptrs, sizeof ptrs);
    cr_expect_str_eq(ptrs, "/a/2 /a/5 /a/7 /a/4096 /a/4098");
    /* Any range: infinities and NaN still fail. */
    bulk_read_as(f32, v, N, PM_API_ANY, out, ptrs, sizeof ptrs);
    cr_expect_str_eq(ptrs, "/a/7 /a/4096 /a/4098");
    /* Exclusive bounds: the bound itself fails, the next value passes. */
    for (size_t i = 0; i < N; i++) v[i] = 1.0 + (double)i;
    v[3] = 0.0;
    v[4] = past(f32, 0.0, 1.0);
    v[N - 1] = 0.0;
    bulk_read_as(f32, v, N, PM_API_GT(0), out, ptrs, sizeof ptrs);
    cr_expect_str_eq(ptrs, "/a/3 /a/4098");
    pm_api_range below = {0, 10, false, true, NULL};   /* [0, 10) */
    for (size_t i = 0; i < N; i++) v[i] = 9.5;
    v[6] = 10.0;
    v[8] = past(f32, 10.0, 0.0);
    bulk_read_as(f32, v, N, below, out, ptrs, sizeof ptrs);
    cr_expect_str_eq(ptrs, "/a/6");
}

Test(reader_arrays, bulk_values_checked_in_one_pass) { checked_in_one_pass(false); }

Test(reader_arrays, float32_values_converted_and_checked_in_one_pass) { checked_in_one_pass(true); }

/* Whether a and b have the same canonical dump (pm_api_vec_f32 refers to
 * its output where pm_api_vec shares its input: other jansson strings). */
static bool same_dump(const json_t *a, const json_t *b) {
    size_t na, nb;
    char *da = pm_test_api_canonical_bytes(a, &na), *db = pm_test_api_canonical_bytes(b, &nb);
    bool same = na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}

/* pm_api_vec_f32 on a float32 bulk array of the n values v: the floats
 * read (into out32), the pointers of every error, and the canonical form
 * compared with pm_api_vec's for the same input. */
static void f32_read(const double *v, size_t n, size_t count, pm_api_range r, float *out32,
                     char *ptrs, size_t cap, bool *same_canon) {
    char *buf = malloc(PM_API_BULK_TAG_LEN + n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        float f = (float)v[i];
        memcpy(buf + PM_API_BULK_TAG_LEN + i * sizeof f, &f, sizeof f);
    }
    json_t *doc = json_object(), *doc2 = json_object();
    json_object_set_new(doc, "a", pm_api_bulk_adopt_f32(buf, n));
    json_object_set_new(doc2, "a", pm_api_bulk_adopt_f32(buf, n));
    free(buf);
    pm_api_problem p, p2;
    pm_api_problem_init(&p);
    pm_api_problem_init(&p2);
    pm_api_node root, root2;
    pm_api_begin(&root, doc, &p);
    pm_api_vec_f32(&root, "a", count, r, out32);
    json_t *c1 = pm_api_finish(&root);
    double *out = malloc((count ? count : 1) * sizeof *out);
    pm_api_begin(&root2, doc2, &p2);
    pm_api_vec(&root2, "a", PM_API_REQUIRED, count, count, r, NULL, out, NULL);
    json_t *c2 = pm_api_finish(&root2);
    *same_canon = (c1 == NULL) == (c2 == NULL) && (!c1 || same_dump(c1, c2));
    for (size_t i = 0; c1 && i < count; i++) *same_canon &= (double)out32[i] == out[i];
    char ptrs2[512];
    pointers(&p, ptrs, cap);
    pointers(&p2, ptrs2, sizeof ptrs2);
    *same_canon &= strcmp(ptrs, ptrs2) == 0;
    json_decref(c1);
    json_decref(c2);
    free(out);
    pm_api_problem_free(&p);
    pm_api_problem_free(&p2);
    json_decref(doc);
    json_decref(doc2);
}

Test(reader_arrays, float32_heights_kept_as_float32) {
    enum { N = 2051 };   /* blocks of eight and a tail of three */
    static double v[N];
    static float out[N];
    char ptrs[512];
    bool same;
    for (size_t i = 0; i < N; i++) v[i] = (double)i * 0.125 - 100.0;
    v[9] = -0.0;
    v[N - 1] = -0.0;
    f32_read(v, N, N, PM_API_RANGE(-1e5, 1e5), out, ptrs, sizeof ptrs, &same);
    cr_expect_str_eq(ptrs, "");
    cr_expect(same, "the same canonical form and values as pm_api_vec");
    for (size_t i = 0; i < N; i++)
        cr_assert(out[i] == (float)v[i] && !(out[i] == 0 && signbit(out[i])), "out[%zu]", i);
    /* Bounds that are no float32: 0.1 rounds up to a float32 above it. */
    for (size_t i = 0; i < N; i++) v[i] = 0.05;
    v[3] = 0.1;                                    /* (float)0.1 > 0.1: fails */
    v[4] = nextafterf((float)0.1, 0.0f);           /* the float32 below passes */
    v[11] = -0.1;
    v[12] = NAN;
    v[N - 2] = HUGE_VAL;
    f32_read(v, N, N, PM_API_RANGE(-0.1, 0.1), out, ptrs, sizeof ptrs, &same);
    cr_expect_str_eq(ptrs, "/a/3 /a/11 /a/12 /a/2049");
    cr_expect(same);
    /* Any range: only NaN and the infinities fail. */
    v[N - 3] = -HUGE_VAL;
    f32_read(v, N, N, PM_API_ANY, out, ptrs, sizeof ptrs, &same);
    cr_expect_str_eq(ptrs, "/a/12 /a/2048 /a/2049");
    cr_expect(same);
    /* An exclusive bound: 0 fails, the smallest float32 above passes. */
    for (size_t i = 0; i < N; i++) v[i] = 1.0;
    v[5] = 0.0;
    v[6] = nextafterf(0.0f, 1.0f);
    f32_read(v, N, N, PM_API_GT(0), out, ptrs, sizeof ptrs, &same);
    cr_expect_str_eq(ptrs, "/a/5");
    cr_expect(same);
    /* The wrong count: said once, and the elements there still checked. */
    v[5] = 1.0;
    v[7] = NAN;
    f32_read(v, N, N + 1, PM_API_GT(0), out, ptrs, sizeof ptrs, &same);
    cr_expect_str_eq(ptrs, "/a /a/7");
    cr_expect(same);
    /* Few values: a canonical array of reals, as pm_api_vec gives. */
    f32_read(v, 6, 6, PM_API_GT(0), out, ptrs, sizeof ptrs, &same);
    cr_expect_str_eq(ptrs, "");
    cr_expect(same);
}

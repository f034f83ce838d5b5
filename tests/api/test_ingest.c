#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/arena.h"
#include "pm_api/bulk.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/multipart.h"
#include "pm_api/reader.h"
#include "pm_test_multipart.h"
#include "pm_test_png.h"

/* Request ingest: the fast JSON reader (bulk arrays, exact numbers, the
 * same trees as jansson), multipart float32 parts, and cache keys that do
 * not depend on how the numbers arrived. */

extern const pm_api_generator pm_api_gen_road;

static uint64_t rng = 0x243f6a8885a308d3u;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A random JSON number token: short decimals, 17-digit dumps, long
 * mantissas, exponents, tiny and huge magnitudes, integers. */
static void token(char *out, size_t cap) {
    uint64_t r = next();
    double x;
    memcpy(&x, &r, sizeof x);
    switch (next() % 6) {
    case 0: snprintf(out, cap, "%.3f", (double)(int64_t)(next() % 2000000) / 1000.0 - 1000.0); break;
    case 1:
        if (!isfinite(x)) x = 1.5;
        snprintf(out, cap, "%.17g", x);
        /* A large integral double has neither '.' nor 'e': that would be an
         * integer beyond 2^53, which keeps an array out of bulk form. */
        if (!strpbrk(out, ".e")) strcat(out, ".0");
        break;
    case 2: snprintf(out, cap, "%.17g", (double)(next() % 100000) / 7.0 - 5000.0); break;
    case 3: snprintf(out, cap, "%llu.%llue%d", (unsigned long long)(next() % 100000000000ull),
                     (unsigned long long)(next() % 1000000000000ull), (int)(next() % 60) - 30); break;
    case 4: snprintf(out, cap, "-0.%018llu%llu", (unsigned long long)(next() % 1000000000000000000ull),
                     (unsigned long long)(next() % 1000)); break;
    default: snprintf(out, cap, "%lld", (long long)(next() % 18000000000000000ull) - 9000000000000000ll); break;
    }
}

/* Every number of a bulk array is bit for bit what strtod reads. */
Test(ingest, numbers_are_exactly_strtod) {
    enum { N = 4096, ROUNDS = 40 };
    static char text[N * 48 + 32], toks[N][48];
    for (int round = 0; round < ROUNDS; round++) {
        size_t len = (size_t)snprintf(text, sizeof text, "{\"h\":[");
        for (int i = 0; i < N; i++) {
            token(toks[i], sizeof toks[i]);
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", i ? ", " : "", toks[i]);
        }
        len += (size_t)snprintf(text + len, sizeof text - len, "]}");
        json_t *doc;
        pm_api_problem p;
        pm_api_problem_init(&p);
        cr_assert_eq(pm_api_parse_body(text, len, &doc, &p), 0, "%s", p.detail);
        const json_t *h = json_object_get(doc, "h");
        cr_assert(pm_api_bulk_is(h), "a long numeric array is read in bulk");
        cr_assert_eq(pm_api_bulk_len(h), N);
        for (int i = 0; i < N; i++) {
            double want = strchr(toks[i], '.') || strchr(toks[i], 'e')
                              ? strtod(toks[i], NULL) : (double)strtoll(toks[i], NULL, 10);
            double got = pm_api_bulk_at(h, (size_t)i);
            cr_assert(memcmp(&want, &got, sizeof got) == 0, "%s: %.17g, strtod %.17g", toks[i],
                      got, want);
        }
        json_decref(doc);
        pm_api_problem_free(&p);
    }
}

/* Apart from bulk arrays, the fast reader builds jansson's tree: integers
 * stay integers in short arrays, escapes and UTF-8 are decoded the same. */
Test(ingest, same_tree_as_jansson) {
    const char *texts[] = {
        "{\"a\": [1, 2.0, -0, -0.0, 1e2, 9007199254740993], \"b\": {\"c\": [[1,2,3],[4.5,5,6]]},"
        " \"s\": \"caf\xc3\xa9 \\\"q\\\" \\\\ \\/ \\n\\t\", \"t\": true, \"f\": false, \"n\": null,"
        " \"e\": {}, \"ea\": [], \"big\": 9223372036854775807, \"neg\": -9223372036854775808}",
        "  {\"x\":\"\\u00e9\\ud83d\\ude00\"}  ",   /* \u escapes: jansson reads it */
        NULL,   /* 100 nested arrays: jansson reads it */
    };
    char deep[256] = "{\"d\": ";
    for (int i = 0; i < 100; i++) strcat(deep, "[");
    strcat(deep, "1");
    for (int i = 0; i < 100; i++) strcat(deep, "]");
    strcat(deep, "}");
    texts[2] = deep;
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        json_t *doc;
        pm_api_problem p;
        pm_api_problem_init(&p);
        cr_assert_eq(pm_api_parse_body(texts[i], strlen(texts[i]), &doc, &p), 0, "%s", p.detail);
        json_error_t e;
        json_t *want = json_loads(texts[i], JSON_REJECT_DUPLICATES, &e);
        cr_assert_not_null(want);
        cr_expect(json_equal(doc, want), "tree %zu differs", i);
        cr_expect(json_is_integer(json_array_get(json_object_get(want, "a"), 2)) ==
                  json_is_integer(json_array_get(json_object_get(doc, "a"), 2)));
        json_decref(doc);
        json_decref(want);
        pm_api_problem_free(&p);
    }
}

/* Malformed bodies keep jansson's 400s (line and column), also when the
 * error sits in or after a long numeric array. */
Test(ingest, errors_keep_line_and_column) {
    static char text[8192];
    size_t len = (size_t)snprintf(text, sizeof text, "{\"h\": [");
    for (int i = 0; i < 200; i++) len += (size_t)snprintf(text + len, sizeof text - len, "%d.5,\n", i);
    struct { const char *tail, *want; } cases[] = {
        {"1e999]}", "line 201"},
        {"01]}", "line 201"},
        {"1, ]}", "line 201"},
        {"NaN]}", "line 201"},
        {"1], \"h\": 2}", "duplicate key \"h\" at line 201"},
        {"1] \"x\"}", "line 201"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(text + len, sizeof text - len, "%s", cases[i].tail);
        json_t *doc;
        pm_api_problem p;
        pm_api_problem_init(&p);
        cr_expect_eq(pm_api_parse_body(text, strlen(text), &doc, &p), -1, "%s", cases[i].tail);
        cr_expect_eq(p.status, 400);
        cr_expect(p.detail && strstr(p.detail, cases[i].want), "%s: %s", cases[i].tail, p.detail);
        pm_api_problem_free(&p);
    }
}

/* A road request, its heights as text or as multipart float32: the same
 * params and the same key, because the key hashes the doubles. */
#define ROAD_HEAD "{\"points\": [[1,0,1],[50,0,40]], \"terrain\": {\"cell\": 1, \"cols\": 40, \"rows\": 30"

static pm_api_key road_key(json_t *doc, double *h0) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_arena *a = pm_arena_create(0);
    pm_api_problem p;
    pm_api_problem_init(&p);
    void *params;
    json_t *canon = NULL;
    cr_assert_eq(pm_api_gen_road.parse(doc, &lim, a, &params, &canon, &p), 0, "%s", p.detail);
    pm_api_key k = pm_api_cache_key(&pm_api_gen_road, canon, PM_API_FMT_GLB);
    *h0 = json_number_value(json_object_get(json_object_get(canon, "terrain"), "cell"));
    json_decref(canon);
    pm_api_problem_free(&p);
    pm_arena_destroy(a);
    return k;
}

Test(ingest, json_and_binary_heights_give_one_key) {
    enum { N = 40 * 30 };
    static float h[N];
    static char text[N * 16 + 256], body[N * 4 + 1024];
    size_t len = (size_t)snprintf(text, sizeof text, ROAD_HEAD ", \"heights\": [");
    for (int i = 0; i < N; i++) {
        h[i] = (float)((i * 37) % 1000) / 8.0f - 60.0f;   /* exact in float32 and in text */
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%g", i ? "," : "", (double)h[i]);
    }
    snprintf(text + len, sizeof text - len, "]}}");
    json_t *a, *b, *c;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_assert_eq(pm_api_parse_body(text, strlen(text), &a, &p), 0, "%s", p.detail);
    json_error_t e;
    c = json_loads(text, 0, &e);   /* no bulk arrays at all */
    size_t blen = pm_test_multipart(body, sizeof body, ROAD_HEAD "}}", h, N, "/terrain/heights");
    cr_assert_eq(pm_api_parse_request(body, blen, PM_TEST_MULTIPART_TYPE, &b, &p), 0,
                 "%s", p.detail);
    cr_assert(pm_api_bulk_is(json_object_get(json_object_get(b, "terrain"), "heights")));
    double x;
    pm_api_key ka = road_key(a, &x), kb = road_key(b, &x), kc = road_key(c, &x);
    cr_expect(ka.hi == kb.hi && ka.lo == kb.lo, "text and float32 heights: one key");
    cr_expect(ka.hi == kc.hi && ka.lo == kc.lo, "bulk or node-per-number input: one key");
    /* A different height is a different key. */
    h[77] += 0.5f;
    blen = pm_test_multipart(body, sizeof body, ROAD_HEAD "}}", h, N, "/terrain/heights");
    json_decref(b);
    cr_assert_eq(pm_api_parse_request(body, blen, PM_TEST_MULTIPART_TYPE, &b, &p), 0);
    pm_api_key kd = road_key(b, &x);
    cr_expect(!(ka.hi == kd.hi && ka.lo == kd.lo));
    json_decref(a);
    json_decref(b);
    json_decref(c);
    pm_api_problem_free(&p);
}

static void expect_multipart_error(const char *body, size_t len, int status, const char *want) {
    json_t *doc = NULL;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_expect_eq(pm_api_parse_request(body, len, PM_TEST_MULTIPART_TYPE, &doc, &p), -1);
    cr_expect_null(doc);
    cr_expect_eq(p.status, status, "%s", p.detail);
    json_t *j = pm_api_problem_json(&p, "t");
    char *s = json_dumps(j, 0);
    cr_expect(strstr(s, want) != NULL, "%s lacks %s", s, want);
    free(s);
    json_decref(j);
    pm_api_problem_free(&p);
}

Test(ingest, multipart_errors) {
    static char body[4096];
    float h[3] = {1, 2, 3};
    size_t n = pm_test_multipart(body, sizeof body, ROAD_HEAD "}}", h, 3, "/nothere/heights");
    expect_multipart_error(body, n, 422, "\"pointer\": \"/nothere/heights\"");
    n = pm_test_multipart(body, sizeof body, ROAD_HEAD ", \"heights\": [1]}}", h, 3, "/terrain/heights");
    expect_multipart_error(body, n, 422, "is given both");
    n = pm_test_multipart(body, sizeof body, ROAD_HEAD "}}", h, 3, "heights");
    expect_multipart_error(body, n, 422, "neither");
    n = pm_test_multipart(body, sizeof body, ROAD_HEAD "}}", h, 3, "/terrain/heights");
    memmove(body + n - 12, body + n - 11, 11);   /* 11 bytes of data: not whole floats */
    expect_multipart_error(body, n - 1, 422, "not a multiple of 4");
    n = pm_test_multipart(body, sizeof body, ROAD_HEAD "}}", h, 3, "/terrain/heights");
    expect_multipart_error(body, n - 12, 400, "closing boundary");
    n = pm_test_multipart(body, sizeof body, "{\"a\": ", h, 3, "/terrain/heights");
    expect_multipart_error(body, n, 400, "line 1");
    const char *noreq = "--XyZ\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nabc\r\n--XyZ--\r\n";
    expect_multipart_error(noreq, strlen(noreq), 400, "no part is named");
    json_t *doc;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_expect_eq(pm_api_parse_request(noreq, strlen(noreq), "multipart/form-data", &doc, &p), -1);
    cr_expect(strstr(p.detail, "boundary") != NULL, "%s", p.detail);
    pm_api_problem_free(&p);
}

/* The road reader's errors on doc (it must refuse it), as JSON text to
 * free. */
static char *road_errors(json_t *doc, pm_api_problem *p) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_arena *a = pm_arena_create(0);
    void *params;
    json_t *canon = NULL;
    cr_expect_eq(pm_api_gen_road.parse(doc, &lim, a, &params, &canon, p), -1);
    pm_arena_destroy(a);
    return json_dumps(p->errors, 0);
}

/* A non-finite float32 is named at its own pointer, as in JSON. */
Test(ingest, binary_heights_checked_per_element) {
    static float h[40 * 30];
    static char body[40 * 30 * 4 + 1024];
    h[5] = NAN;
    h[9] = 2e5f;
    size_t n = pm_test_multipart(body, sizeof body, ROAD_HEAD "}}", h, 40 * 30, "/terrain/heights");
    json_t *doc;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_assert_eq(pm_api_parse_request(body, n, "multipart/form-data; boundary=\"XyZ\"", &doc, &p), 0);
    char *s = road_errors(doc, &p);
    cr_expect(strstr(s, "/terrain/heights/5") && strstr(s, "must be finite"), "%s", s);
    cr_expect(strstr(s, "/terrain/heights/9") && strstr(s, "must be <= 100000"), "%s", s);
    free(s);
    json_decref(doc);
    pm_api_problem_free(&p);
}

/* ---- PNG heightmaps (docs/road.md "PNG heightmaps") ---- */

#define PW 40
#define PH 30

/* Samples of a PW x PH grey image, below 2^depth. */
static void png_samples(unsigned *s, int depth) {
    for (int i = 0; i < PW * PH; i++) s[i] = (unsigned)(i * 2654435761u >> 7) % (1u << depth);
}

/* The road request with heights from a PNG part, read with o. */
static int png_request(const pm_test_png *png, const char *head, const pm_api_ingest *o,
                       json_t **doc, pm_api_problem *p) {
    static char body[1 << 20];
    size_t n = pm_test_multipart_part(body, sizeof body, head, png->data, png->len,
                                      "/terrain/heights", "image/png");
    pm_api_problem_init(p);
    return pm_api_parse_request_with(body, n, PM_TEST_MULTIPART_TYPE, o, doc, p);
}

/* The same heights as JSON numbers: offset + scale x sample. */
static json_t *json_heights(const unsigned *s, double scale, double offset) {
    static char text[PW * PH * 32 + 256];
    size_t len = (size_t)snprintf(text, sizeof text, ROAD_HEAD ", \"heights\": [");
    for (int i = 0; i < PW * PH; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%.17g", i ? "," : "",
                                offset + scale * (double)s[i]);
    snprintf(text + len, sizeof text - len, "]}}");
    json_t *d;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_assert_eq(pm_api_parse_body(text, strlen(text), &d, &p), 0, "%s", p.detail);
    pm_api_problem_free(&p);
    return d;
}

/* 16- and 8-bit, interlaced or not: the heights are offset + scale x
 * sample, row by row from the image's top row, and the key is the key of
 * the same heights sent as JSON. */
Test(ingest, png_heights_are_scaled_samples) {
    static unsigned s[PW * PH];
    for (int depth = 8; depth <= 16; depth += 8)
        for (int interlace = 0; interlace <= 1; interlace++) {
            png_samples(s, depth);
            pm_test_png png;
            pm_test_png_make(&png, PW, PH, depth, PNG_COLOR_TYPE_GRAY, interlace, s);
            pm_api_ingest o;
            pm_api_problem p;
            pm_api_problem_init(&p);
            cr_assert_eq(pm_api_ingest_query("0.015625", "-200.5", &o, &p), 0);
            json_t *doc, *ref = json_heights(s, 0.015625, -200.5);
            cr_assert_eq(png_request(&png, ROAD_HEAD "}}", &o, &doc, &p), 0, "%s", p.detail);
            const json_t *h = json_object_get(json_object_get(doc, "terrain"), "heights");
            cr_assert(pm_api_bulk_is(h) && pm_api_bulk_len(h) == PW * PH);
            for (int i = 0; i < PW * PH; i++)
                cr_assert_eq(pm_api_bulk_at(h, (size_t)i), -200.5 + 0.015625 * s[i],
                             "depth %d interlace %d: [%d]", depth, interlace, i);
            double x;
            pm_api_key a = road_key(doc, &x), b = road_key(ref, &x);
            cr_expect(a.hi == b.hi && a.lo == b.lo, "PNG and JSON: one key");
            json_decref(doc);
            json_decref(ref);
            pm_api_problem_free(&p);
            free(png.data);
        }
}

/* Without ?png_scale / ?png_offset the samples are the heights. */
Test(ingest, png_without_options_gives_the_samples) {
    static unsigned s[PW * PH];
    png_samples(s, 16);
    pm_test_png png;
    pm_test_png_make(&png, PW, PH, 16, PNG_COLOR_TYPE_GRAY, 0, s);
    pm_api_ingest o = PM_API_INGEST_DEFAULT;
    json_t *doc;
    pm_api_problem p;
    cr_assert_eq(png_request(&png, ROAD_HEAD "}}", &o, &doc, &p), 0, "%s", p.detail);
    const json_t *h = json_object_get(json_object_get(doc, "terrain"), "heights");
    for (int i = 0; i < PW * PH; i++) cr_assert_eq(pm_api_bulk_at(h, (size_t)i), (double)s[i]);
    json_decref(doc);
    pm_api_problem_free(&p);
    free(png.data);
}

static void expect_png_error(const pm_test_png *png, const char *head, const pm_api_ingest *o,
                             const char *pointer, const char *want) {
    json_t *doc = NULL;
    pm_api_problem p;
    cr_expect_eq(png_request(png, head, o, &doc, &p), -1, "%s", want);
    cr_expect_null(doc);
    cr_expect_eq(p.status, 422, "%d %s", p.status, p.detail);
    char *s = json_dumps(p.errors, 0);
    cr_expect(s && strstr(s, pointer) && strstr(s, want), "%s lacks %s / %s", s, pointer, want);
    free(s);
    pm_api_problem_free(&p);
}

/* Colour, alpha, palette, other depths, another shape, not a PNG, a cut or
 * corrupted one, no cols/rows to check against: each a 422 at the part. */
Test(ingest, png_strictly_checked) {
    static unsigned s[PW * PH * 4];
    for (size_t i = 0; i < PW * PH * 4; i++) s[i] = (unsigned)i % 16;
    pm_api_ingest o = PM_API_INGEST_DEFAULT;
    pm_test_png png;
    pm_test_png_make(&png, PW, PH, 8, PNG_COLOR_TYPE_RGB, 0, s);
    expect_png_error(&png, ROAD_HEAD "}}", &o, "/terrain/heights", "not RGB (colour type 2)");
    free(png.data);
    pm_test_png_make(&png, PW, PH, 16, PNG_COLOR_TYPE_GRAY_ALPHA, 0, s);
    expect_png_error(&png, ROAD_HEAD "}}", &o, "/terrain/heights", "grayscale with alpha");
    free(png.data);
    pm_test_png_make(&png, PW, PH, 8, PNG_COLOR_TYPE_PALETTE, 0, s);
    expect_png_error(&png, ROAD_HEAD "}}", &o, "/terrain/heights", "palette");
    free(png.data);
    pm_test_png_make(&png, PW, PH, 4, PNG_COLOR_TYPE_GRAY, 0, s);
    expect_png_error(&png, ROAD_HEAD "}}", &o, "/terrain/heights", "8 or 16 bits per sample, not 4");
    free(png.data);
    pm_test_png_make(&png, PH, PW, 16, PNG_COLOR_TYPE_GRAY, 0, s);   /* 30 x 40: transposed */
    expect_png_error(&png, ROAD_HEAD "}}", &o, "/terrain/heights",
                     "is a 30 x 40 image, but cols x rows in the request is 40 x 30");
    free(png.data);
    pm_test_png_make(&png, PW, PH, 16, PNG_COLOR_TYPE_GRAY, 0, s);
    expect_png_error(&png, "{\"points\": [[1,0,1],[50,0,40]], \"terrain\": {\"cell\": 1}}", &o,
                     "/terrain/heights", "needs integer cols and rows");
    pm_test_png cut = png;
    cut.len = png.len / 2;
    expect_png_error(&cut, ROAD_HEAD "}}", &o, "/terrain/heights", "not a readable PNG");
    png.data[png.len / 2] ^= 0x55;   /* inside the image data: a CRC or inflate error */
    expect_png_error(&png, ROAD_HEAD "}}", &o, "/terrain/heights", "not a readable PNG");
    memcpy(png.data, "GIF89a", 6);
    expect_png_error(&png, ROAD_HEAD "}}", &o, "/terrain/heights", "not a PNG image");
    free(png.data);
}

/* The query options: finite numbers, a scale that is not 0, and only with
 * a PNG part; heights out of range after scaling are named each. */
Test(ingest, png_options_checked) {
    pm_api_ingest o;
    pm_api_problem p;
    const char *bad[][3] = {{"abc", NULL, "/png_scale"}, {"0", NULL, "/png_scale"},
                            {"inf", NULL, "/png_scale"}, {"", NULL, "/png_scale"},
                            {NULL, "nan", "/png_offset"}, {NULL, "1e999", "/png_offset"},
                            {"1", "2x", "/png_offset"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pm_api_problem_init(&p);
        cr_expect_eq(pm_api_ingest_query(bad[i][0], bad[i][1], &o, &p), -1, "%zu", i);
        char *s = json_dumps(p.errors, 0);
        cr_expect(s && strstr(s, bad[i][2]), "%zu: %s", i, s);
        free(s);
        pm_api_problem_free(&p);
    }
    /* Given with float32 heights or a JSON body: refused, not ignored. */
    pm_api_problem_init(&p);
    cr_assert_eq(pm_api_ingest_query(NULL, "5", &o, &p), 0);
    static float h[PW * PH];
    static char body[PW * PH * 4 + 1024];
    size_t n = pm_test_multipart(body, sizeof body, ROAD_HEAD "}}", h, PW * PH, "/terrain/heights");
    json_t *doc = NULL;
    cr_expect_eq(pm_api_parse_request_with(body, n, PM_TEST_MULTIPART_TYPE, &o, &doc, &p), -1);
    char *es = json_dumps(p.errors, 0);
    cr_expect(es && strstr(es, "/png_offset"), "%s", p.detail);
    free(es);
    pm_api_problem_free(&p);
    pm_api_problem_init(&p);
    const char *js = ROAD_HEAD "}}";
    cr_expect_eq(pm_api_parse_request_with(js, strlen(js), "application/json", &o, &doc, &p), -1);
    cr_expect_eq(p.status, 422);
    pm_api_problem_free(&p);
    /* Scaled past the range of heights: each one named by the reader. */
    static unsigned s[PW * PH];
    png_samples(s, 16);
    s[3] = 65535;
    pm_test_png png;
    pm_test_png_make(&png, PW, PH, 16, PNG_COLOR_TYPE_GRAY, 0, s);
    pm_api_problem_init(&p);
    cr_assert_eq(pm_api_ingest_query("2", NULL, &o, &p), 0);
    cr_assert_eq(png_request(&png, ROAD_HEAD "}}", &o, &doc, &p), 0, "%s", p.detail);
    char *e = road_errors(doc, &p);
    cr_expect(strstr(e, "/terrain/heights/3") && strstr(e, "must be <= 100000"), "%s", e);
    free(e);
    json_decref(doc);
    pm_api_problem_free(&p);
    free(png.data);
}

/* float32 parts stay float32 in the document (half the bytes of doubles,
 * referred to where they lie in the body); the canonical form refers to
 * the reader's checked copy, where -0 is 0: the key of the same heights
 * with 0 and of the same heights as JSON text. */
Test(ingest, float32_parts_are_kept_and_shared) {
    enum { N = 40 * 30 };
    static float h[N];
    static char body[N * 4 + 1024];
    for (int i = 0; i < N; i++) h[i] = (float)(i % 50) * 0.25f - 3.0f;
    h[12] = 0.0f;
    size_t n = pm_test_multipart(body, sizeof body, ROAD_HEAD "}}", h, N, "/terrain/heights");
    json_t *a, *b;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_assert_eq(pm_api_parse_request(body, n, PM_TEST_MULTIPART_TYPE, &a, &p), 0, "%s", p.detail);
    static char body2[N * 4 + 1024];
    h[12] = -0.0f;
    n = pm_test_multipart(body2, sizeof body2, ROAD_HEAD "}}", h, N, "/terrain/heights");
    cr_assert_eq(pm_api_parse_request(body2, n, PM_TEST_MULTIPART_TYPE, &b, &p), 0, "%s", p.detail);
    const json_t *hb = json_object_get(json_object_get(b, "terrain"), "heights");
    cr_assert(pm_api_bulk_is_f32(hb) && pm_api_bulk_len(hb) == N);
    /* The canonical heights are float32 too, -0 made 0 by the one pass
     * that checks the values (the input is only read). */
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_arena *ar = pm_arena_create(0);
    void *params;
    json_t *canon = NULL;
    cr_assert_eq(pm_api_gen_road.parse(b, &lim, ar, &params, &canon, &p), 0, "%s", p.detail);
    const json_t *ch = json_object_get(json_object_get(canon, "terrain"), "heights");
    cr_expect(pm_api_bulk_is_f32(ch) && pm_api_bulk_len(ch) == N);
    cr_expect(pm_api_bulk_at(ch, 12) == 0.0 && !signbit(pm_api_bulk_at(ch, 12)), "-0 stored as 0");
    cr_expect(signbit(pm_api_bulk_at(hb, 12)), "the input is not written");
    json_decref(canon);
    pm_arena_destroy(ar);
    double x;
    pm_api_key ka = road_key(a, &x), kb = road_key(b, &x);
    cr_expect(ka.hi == kb.hi && ka.lo == kb.lo, "-0 and 0: one key");
    json_decref(a);
    json_decref(b);
    pm_api_problem_free(&p);
}

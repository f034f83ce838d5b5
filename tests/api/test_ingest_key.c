/* The cache key of heights (api/canon.c, pm_api/bulk.h): the same values
 * give one key whichever way they came (JSON text, a node per number,
 * multipart float32, a PNG heightmap), hashed as float32 when every value
 * is one; a value that is no float32 never shares a key with its rounding.
 * And binary float32 parts are referred to, not copied: the document points
 * into the body, the canonical form into the job's memory. */
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
#include "pm_api/request.h"
#include "pm_test_api.h"
#include "pm_test_multipart.h"
#include "pm_test_png.h"

extern const pm_api_generator pm_api_gen_road;

#define COLS 40
#define ROWS 30
#define N (COLS * ROWS)
#define HEAD "{\"points\": [[1,0,1],[30,0,12],[50,0,25]], \"terrain\": {\"cell\": 1.5, \"cols\": 40, \"rows\": 30"

static char text[N * 32 + 512], body[N * 4 + 1024];

/* The road request with heights h as JSON text (%.17g: the doubles exactly). */
static size_t json_text(const double *h, size_t n) {
    size_t len = (size_t)snprintf(text, sizeof text, HEAD ", \"heights\": [");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%.17g", i ? "," : "", h[i]);
    len += (size_t)snprintf(text + len, sizeof text - len, "]}}");
    return len;
}

/* Runs the road request (b, len, ctype) as the service does
 * (pm_api_request_run) into *glb and *key; returns its result, p set. */
static int request(const char *b, size_t len, const char *ctype, const pm_api_ingest *ing,
                   pm_api_buf *glb, pm_api_key *key, pm_api_problem *p) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_api_problem_init(p);
    pm_api_output o = pm_api_output_default(PM_API_FMT_GLB);
    pm_api_request rq = {.gen = &pm_api_gen_road, .body = b, .body_len = len,
                         .content_type = ctype, .ingest = ing};
    pm_api_run r = {.lim = &lim, .outputs = &o, .noutputs = 1};
    return pm_api_request_run(&rq, &r, glb, key, p);
}

/* The request's key and GLB, which it must have. */
static pm_api_key run(const char *b, size_t len, const char *ctype, const pm_api_ingest *ing,
                      pm_api_buf *glb) {
    pm_api_problem p;
    pm_api_key k = {0, 0};
    cr_assert_eq(request(b, len, ctype, ing, glb, &k, &p), 0, "%s", p.detail);
    pm_api_problem_free(&p);
    return k;
}

/* The road's canonical form of request document doc (read in arena a). */
static json_t *road_canon(const json_t *doc, pm_arena *a) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_api_problem p;
    pm_api_problem_init(&p);
    void *params;
    json_t *canon = NULL;
    cr_assert_eq(pm_api_gen_road.parse(doc, &lim, a, &params, &canon, &p), 0, "%s", p.detail);
    pm_api_problem_free(&p);
    return canon;
}

/* The key of request document doc (GLB), read by the road's parser. */
static pm_api_key key_of(const json_t *doc) {
    pm_arena *a = pm_arena_create(0);
    json_t *canon = road_canon(doc, a);
    pm_api_key k = pm_api_cache_key(&pm_api_gen_road, canon, PM_API_FMT_GLB);
    json_decref(canon);
    pm_arena_destroy(a);
    return k;
}

static bool same_key(pm_api_key a, pm_api_key b) { return a.hi == b.hi && a.lo == b.lo; }

static bool same_buf(const pm_api_buf *a, const pm_api_buf *b) {
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* Heights on a quarter-metre lattice: exact in float32, in text and as
 * PNG samples (scale 0.25, offset -100). */
static unsigned sample(int i) { return (unsigned)(i * 2654435761u >> 9) % 4000u; }

Test(ingest_key, one_key_and_one_glb_for_json_float32_and_png) {
    static double h[N];
    static float f[N];
    static unsigned s[N];
    for (int i = 0; i < N; i++) {
        s[i] = sample(i);
        h[i] = -100.0 + 0.25 * s[i];
        f[i] = (float)h[i];
    }
    pm_api_buf g[4];
    size_t len = json_text(h, N);
    pm_api_key kj = run(text, len, NULL, NULL, &g[0]);
    /* jansson's tree, a node per number (no bulk array at all). */
    json_error_t e;
    json_t *tree = json_loadb(text, len, 0, &e);
    cr_assert_not_null(tree);
    pm_api_key kt = key_of(tree);
    json_decref(tree);
    len = pm_test_multipart(body, sizeof body, HEAD "}}", f, N, "/terrain/heights");
    pm_api_key kb = run(body, len, PM_TEST_MULTIPART_TYPE, NULL, &g[2]);
    pm_test_png png;
    pm_test_png_make(&png, COLS, ROWS, 16, PNG_COLOR_TYPE_GRAY, 0, s);
    static char pbody[1 << 20];
    len = pm_test_multipart_part(pbody, sizeof pbody, HEAD "}}", png.data, png.len,
                                 "/terrain/heights", "image/png");
    pm_api_ingest ing = {0.25, -100.0, 3};
    pm_api_key kp = run(pbody, len, PM_TEST_MULTIPART_TYPE, &ing, &g[3]);
    cr_expect(same_key(kj, kt), "JSON text, bulk or node per number: one key");
    cr_expect(same_key(kj, kb), "JSON text and float32: one key");
    cr_expect(same_key(kj, kp), "JSON text and PNG: one key");
    for (int i = 2; i < 4; i++) cr_expect(same_buf(&g[0], &g[i]), "GLB %d as JSON's", i);
    for (int i = 0; i < 4; i += i ? 1 : 2) free(g[i].data);
    free(png.data);
}

/* The canonical dump (what the key hashes) of the road request b. */
typedef struct dump { char *b; size_t n; } dump;
static dump canonical_of(const char *b, size_t len, const char *ctype) {
    json_t *doc;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_assert_eq(pm_api_parse_request(b, len, ctype, &doc, &p), 0, "%s", p.detail);
    pm_arena *a = pm_arena_create(0);
    json_t *canon = road_canon(doc, a);
    dump d;
    d.b = pm_test_api_canonical_bytes(canon, &d.n);
    json_decref(canon);
    pm_arena_destroy(a);
    json_decref(doc);
    pm_api_problem_free(&p);
    return d;
}

/* Where the heights sit in a dump: after their tag, the count, then n
 * values of size bytes. */
static const char *heights_at(const dump *d, const char *tag) {
    for (size_t i = 0; i + PM_API_BULK_TAG_LEN <= d->n; i++)
        if (memcmp(d->b + i, tag, PM_API_BULK_TAG_LEN) == 0) return d->b + i;
    return NULL;
}

/* All float32: hashed as float32 (4 bytes each, the float32 tag). One value
 * that is no float32, anywhere (a vector block, the tail): doubles, under
 * the other tag, so never the key of its rounding. */
Test(ingest_key, float32_values_hashed_as_float32_others_as_doubles) {
    static double h[N];
    static float f[N];
    for (int i = 0; i < N; i++) h[i] = (double)(float)(sin(i * 0.01) * 40.0);
    size_t len = json_text(h, N);
    dump d = canonical_of(text, len, NULL);
    const char *at = heights_at(&d, pm_api_bulk_tag_f32);
    cr_assert_not_null(at, "float32 heights under the float32 tag");
    cr_expect_null(heights_at(&d, pm_api_bulk_tag));
    uint64_t count;
    memcpy(&count, at + PM_API_BULK_TAG_LEN, sizeof count);
    cr_expect_eq(count, (uint64_t)N);
    for (int i = 0; i < N; i++) {
        float v;
        memcpy(&v, at + 2 * PM_API_BULK_TAG_LEN + 4 * (size_t)i, sizeof v);
        cr_assert(v == (float)h[i], "value %d hashed as its float32", i);
    }
    free(d.b);
    for (int i = 0; i < N; i++) f[i] = (float)h[i];
    len = pm_test_multipart(body, sizeof body, HEAD "}}", f, N, "/terrain/heights");
    pm_api_buf g;
    pm_api_key kb = run(body, len, PM_TEST_MULTIPART_TYPE, NULL, &g);
    free(g.data);
    const int where[] = {0, 5, 517, N - 3, N - 1};   /* blocks of four, the last block, the tail */
    for (size_t w = 0; w < sizeof where / sizeof *where; w++) {
        double keep = h[where[w]];
        h[where[w]] = keep == 0.0 ? 1e-50 : keep + keep * 0x1p-40;   /* no float32; rounds to keep */
        cr_assert((float)h[where[w]] == (float)keep && (double)(float)h[where[w]] != h[where[w]]);
        len = json_text(h, N);
        d = canonical_of(text, len, NULL);
        cr_expect_not_null(heights_at(&d, pm_api_bulk_tag), "[%d]: doubles", where[w]);
        cr_expect_null(heights_at(&d, pm_api_bulk_tag_f32), "[%d]: not as float32", where[w]);
        free(d.b);
        pm_api_key kj = run(text, len, NULL, NULL, &g);
        free(g.data);
        cr_expect(!same_key(kj, kb), "[%d]: not the key of its float32 rounding", where[w]);
        h[where[w]] = keep;
    }
    len = json_text(h, N);
    pm_api_key kj = run(text, len, NULL, NULL, &g);
    free(g.data);
    cr_expect(same_key(kj, kb), "restored: the float32 key again");
}

/* A float32 part is read where it lies in the body; the canonical form
 * refers to the job's checked copy (-0 made 0), not to the body: the key
 * stays the same when the body is gone after the parse. */
Test(ingest_key, float32_part_referred_to_not_copied) {
    static float f[N];
    for (int i = 0; i < N; i++) f[i] = (float)(i % 97) * 0.5f - 20.0f;
    f[3] = -0.0f;
    size_t len = pm_test_multipart(body, sizeof body, HEAD "}}", f, N, "/terrain/heights");
    json_t *doc;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_assert_eq(pm_api_parse_request(body, len, PM_TEST_MULTIPART_TYPE, &doc, &p), 0, "%s", p.detail);
    const json_t *in = json_object_get(json_object_get(doc, "terrain"), "heights");
    cr_assert(pm_api_bulk_is_ref(in) && pm_api_bulk_is_f32(in) && pm_api_bulk_len(in) == N);
    const unsigned char *d = pm_api_bulk_data(in);
    cr_expect(d > (const unsigned char *)body && d + 4 * N < (const unsigned char *)body + len,
              "the values are the body's bytes");
    cr_expect_eq(memcmp(d, f, sizeof f), 0);
    pm_arena *a = pm_arena_create(0);
    json_t *canon = road_canon(doc, a);
    const json_t *ch = json_object_get(json_object_get(canon, "terrain"), "heights");
    const unsigned char *cd = pm_api_bulk_data(ch);
    cr_expect(cd + 4 * N <= (const unsigned char *)body || cd >= (const unsigned char *)body + len,
              "the canonical heights are not the body's");
    cr_expect(pm_api_bulk_at(ch, 3) == 0.0 && !signbit(pm_api_bulk_at(ch, 3)), "-0 is 0 there");
    uint32_t neg0;
    memcpy(&neg0, d + 12, sizeof neg0);
    cr_expect_eq(neg0, 0x80000000u, "the body is only read");
    pm_api_key before = pm_api_cache_key(&pm_api_gen_road, canon, PM_API_FMT_GLB);
    json_decref(doc);
    memset(body, 0x5a, len);   /* the body gone */
    pm_api_key after = pm_api_cache_key(&pm_api_gen_road, canon, PM_API_FMT_GLB);
    cr_expect(same_key(before, after));
    json_decref(canon);
    pm_arena_destroy(a);
    /* And it is the key of 0 in place of -0, sent as JSON. */
    static double h[N];
    for (int i = 0; i < N; i++) h[i] = f[i] == 0.0f ? 0.0 : (double)f[i];
    len = json_text(h, N);
    pm_api_buf g;
    pm_api_key kj = run(text, len, NULL, NULL, &g);
    free(g.data);
    cr_expect(same_key(kj, before));
    pm_api_problem_free(&p);
}

/* The road's errors for a multipart body of the n float32 values f and
 * the request part head, as "pointer: message" lines. */
static char *binary_errors(const char *head, const float *f, size_t n) {
    size_t len = pm_test_multipart(body, sizeof body, head, f, n, "/terrain/heights");
    pm_api_problem p;
    pm_api_buf g;
    cr_assert_neq(request(body, len, PM_TEST_MULTIPART_TYPE, NULL, &g, NULL, &p), 0, "refused");
    cr_expect_eq(p.status, 422);
    char *s = p.errors ? json_dumps(p.errors, JSON_COMPACT) : strdup(p.detail);
    pm_api_problem_free(&p);
    return s;
}

/* NaN and infinities at their own pointers (in a block of eight and in the
 * tail); the wrong shape (cols x rows against the part's values) at the
 * array's pointer, with the count it must have. */
Test(ingest_key, bad_float32_values_and_shapes_named) {
    static float f[N];
    for (int i = 0; i < N; i++) f[i] = (float)(i % 13);
    f[2] = INFINITY;
    f[9] = -INFINITY;
    f[N - 1] = NAN;
    char *e = binary_errors(HEAD "}}", f, N);
    cr_expect(strstr(e, "\"/terrain/heights/2\",\"message\":\"must be finite\"") != NULL, "%s", e);
    cr_expect(strstr(e, "\"/terrain/heights/9\",\"message\":\"must be finite\"") != NULL, "%s", e);
    cr_expect(strstr(e, "\"/terrain/heights/1199\",\"message\":\"must be finite\"") != NULL, "%s", e);
    free(e);
    f[2] = f[9] = f[N - 1] = 1.0f;
    e = binary_errors(HEAD "}}", f, N - 40);   /* a row short */
    cr_expect(strstr(e, "\"/terrain/heights\",\"message\":\"must be an array of 1200 numbers\"") != NULL,
              "%s", e);
    free(e);
    e = binary_errors("{\"points\": [[1,0,1],[30,0,12]], \"terrain\": {\"cell\": 1.5, \"cols\": 30, "
                      "\"rows\": 40}}", f, N + 1);   /* transposed, and one more */
    cr_expect(strstr(e, "must be an array of 1200 numbers") != NULL, "%s", e);
    free(e);
    e = binary_errors("{\"points\": [[1,0,1],[30,0,12]], \"terrain\": {\"cell\": 1.5, \"cols\": 1, "
                      "\"rows\": 1200}}", f, N);   /* the right count, an impossible shape */
    cr_expect(strstr(e, "\"/terrain/cols\"") != NULL, "%s", e);
    free(e);
}

#include <criterion/criterion.h>
#include <string.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "pm_api/key.h"
#include "pm_api/reader.h"

/* Descriptors only (no generate): the key hashes name, version and path. */
static const pm_api_generator gen_a = {.name = "demo", .version = "1.0.0", .path = "/v1/demo"};
static const pm_api_generator gen_b = {.name = "demo", .version = "1.0.1", .path = "/v1/demo"};
static const pm_api_generator gen_c = {.name = "demo", .version = "1.0.0", .path = "/v1/other"};

/* A small request grammar read the way generators read theirs. */
static json_t *canon_of(const char *text) {
    pm_api_problem p;
    pm_api_problem_init(&p);
    json_t *doc;
    if (pm_api_parse_body(text, strlen(text), &doc, &p) < 0) return NULL;
    pm_api_node root, pts;
    double w, pt[2];
    int64_t n;
    uint64_t seed;
    pm_api_begin(&root, doc, &p);
    pm_api_num(&root, "width", 0, PM_API_GT(0), 3.5, &w);
    pm_api_int(&root, "count", 0, PM_API_IRANGE(1, 9), 4, &n);
    pm_api_u64(&root, "seed", 0, 0, &seed);
    size_t np = pm_api_array(&root, "points", 0, PM_API_IRANGE(0, 8), &pts);
    for (size_t i = 0; i < np; i++) pm_api_vec(&pts, NULL, 0, 2, 2, PM_API_ANY, NULL, pt, NULL);
    pm_api_end(&pts);
    json_t *c = pm_api_finish(&root);
    json_decref(doc);
    pm_api_problem_free(&p);
    return c;
}

static pm_api_key key_of(const char *text, const pm_api_generator *g, pm_api_format f) {
    json_t *c = canon_of(text);
    cr_assert_not_null(c, "%s did not parse", text);
    pm_api_key k = pm_api_cache_key(g, c, f);
    json_decref(c);
    return k;
}

static bool key_eq(pm_api_key a, pm_api_key b) { return a.hi == b.hi && a.lo == b.lo; }

Test(key, invariant_to_order_spelling_and_defaults) {
    const char *same[] = {
        "{\"seed\": 5, \"points\": [[1, 2]]}",
        "{\"points\": [[1.0, 2e0]], \"seed\": 5}",
        "{\"points\": [[10e-1, 0.2E1]], \"seed\": \"5\", \"width\": 3.50, \"count\": 4.0}",
        "{\"count\": 4, \"width\": 3.5, \"seed\": 5.0, \"points\": [[1, 2]]}",
    };
    for (int f = 0; f < 3; f++) {
        pm_api_key k0 = key_of(same[0], &gen_a, (pm_api_format)f);
        for (size_t i = 1; i < sizeof same / sizeof *same; i++)
            cr_expect(key_eq(k0, key_of(same[i], &gen_a, (pm_api_format)f)),
                      "document %zu has another key in format %d", i, f);
    }
}

Test(key, differs_by_value_format_version_route) {
    const char *doc = "{\"seed\": 5}";
    pm_api_key k = key_of(doc, &gen_a, PM_API_FMT_JSON);
    cr_expect_not(key_eq(k, key_of("{\"seed\": 6}", &gen_a, PM_API_FMT_JSON)));
    cr_expect_not(key_eq(k, key_of("{\"seed\": 5, \"width\": 3.5000001}", &gen_a,
                                   PM_API_FMT_JSON)));
    cr_expect_not(key_eq(k, key_of(doc, &gen_a, PM_API_FMT_GLB)));
    cr_expect_not(key_eq(k, key_of(doc, &gen_a, PM_API_FMT_GLTF)));
    cr_expect_not(key_eq(key_of(doc, &gen_a, PM_API_FMT_GLB),
                         key_of(doc, &gen_a, PM_API_FMT_GLTF)));
    cr_expect_not(key_eq(k, key_of(doc, &gen_b, PM_API_FMT_JSON)));
    cr_expect_not(key_eq(k, key_of(doc, &gen_c, PM_API_FMT_JSON)));
}

Test(key, negative_zero_is_zero) {
    json_t *a = json_pack("{s:f, s:[f]}", "x", 0.0, "v", 0.0);
    json_t *b = json_pack("{s:f, s:[f]}", "x", -0.0, "v", -0.0);
    pm_api_key ka = pm_api_cache_key(&gen_a, a, PM_API_FMT_GLB);
    pm_api_key kb = pm_api_cache_key(&gen_a, b, PM_API_FMT_GLB);
    cr_expect(key_eq(ka, kb));
    cr_expect(signbit(json_real_value(json_object_get(b, "x"))), "input left untouched");
    json_decref(a);
    json_decref(b);
}

static void part(XXH3_state_t *st, const char *s, size_t n) {
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    XXH3_128bits_update(st, len, 8);
    XXH3_128bits_update(st, s, n);
}

/* Recomputes the key from its documented definition (docs/api.md), so the
 * framing cannot drift silently. */
Test(key, matches_its_definition) {
    json_t *c = canon_of("{\"seed\": 1, \"points\": [[0.1, -3]]}");
    cr_assert_not_null(c);
    char *dump = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17));
    cr_expect_str_eq(dump, "{\"count\":4,\"points\":[[0.10000000000000001,-3.0]],\"seed\":1,"
                           "\"width\":3.5}");
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_128bits_reset(&st);
    const char *parts[] = {"procmesh-key-1", PM_VERSION, "demo", "1.0.0", "/v1/demo"};
    for (int i = 0; i < 5; i++) part(&st, parts[i], strlen(parts[i]));
    XXH3_128bits_update(&st, dump, strlen(dump));
    char len[24];
    snprintf(len, sizeof len, "%zu", strlen(dump));
    part(&st, len, strlen(len));
    part(&st, "glb", 3);
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    pm_api_key k = pm_api_cache_key(&gen_a, c, PM_API_FMT_GLB);
    cr_expect_eq(k.hi, h.high64);
    cr_expect_eq(k.lo, h.low64);
    free(dump);
    json_decref(c);
}

Test(key, hex_is_32_lowercase_digits) {
    char hex[33];
    pm_api_key_hex((pm_api_key){0x0123456789abcdefULL, 0xfedcba9876543210ULL}, hex);
    cr_expect_str_eq(hex, "0123456789abcdeffedcba9876543210");
    pm_api_key_hex((pm_api_key){0, 1}, hex);
    cr_expect_str_eq(hex, "00000000000000000000000000000001");
    /* printf's spelling for any key (a multiplicative walk over both halves) */
    uint64_t a = 0x9e3779b97f4a7c15ULL, b = 1;
    for (int i = 0; i < 10000; i++) {
        a = a * 6364136223846793005ULL + 1442695040888963407ULL;
        b = b * 2862933555777941757ULL + 3037000493ULL;
        pm_api_key k = {i % 7 ? a : a >> (i % 61), i % 5 ? b : b >> (i % 59)};
        char want[40];
        snprintf(want, sizeof want, "%016" PRIx64 "%016" PRIx64, k.hi, k.lo);
        memset(hex, '#', sizeof hex);
        pm_api_key_hex(k, hex);
        cr_assert_str_eq(hex, want);
    }
}

/* The long blocks of a key go through the AVX2 build of XXH3 when the CPU
 * has it: the digest is the library's, for every length and split. */
void pm_api__hash_update(XXH3_state_t *st, const void *buf, size_t size);

Test(key, simd_hashing_gives_the_library_digest) {
    enum { N = 3 << 20 };
    unsigned char *b = malloc(N);
    uint64_t x = 0x2545f4914f6cdd1du;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = (unsigned char)(x >> 56);
    }
    const size_t cuts[][3] = {{0, 4096, N}, {1, 4095, N - 1}, {7, 100000, N},
                              {8, 2 << 20, N - 3}, {64, 4160, 4161}, {0, 0, 1 << 20}};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        XXH3_state_t a, s;
        XXH3_INITSTATE(&a);
        XXH3_INITSTATE(&s);
        XXH3_128bits_reset(&a);
        XXH3_128bits_reset(&s);
        size_t prev = 0;
        for (int k = 0; k < 3; k++) {   /* three updates: prev..cuts[c][k] */
            XXH3_128bits_update(&a, b + prev, cuts[c][k] - prev);
            pm_api__hash_update(&s, b + prev, cuts[c][k] - prev);
            prev = cuts[c][k];
        }
        XXH128_hash_t ha = XXH3_128bits_digest(&a), hs = XXH3_128bits_digest(&s);
        cr_assert(ha.high64 == hs.high64 && ha.low64 == hs.low64, "split %zu", c);
    }
    free(b);
}

#include <criterion/criterion.h>
#include <string.h>

#include "pm_api/reader.h"
#include "pm_test_api.h"

/* A parser written the way a generator writes one, so the tests exercise
 * the reader through the calls generators make. */
typedef struct demo {
    uint64_t seed;
    int64_t lanes;
    double radius, slope;
    bool lit;
    int kind;
    char name[17];
    double center[2];
    size_t narms;
    struct { double width, dir[3]; size_t ndir; int has_sidewalk; double sidewalk; } arms[8];
    int terrain;             /* 1 on, 0 off */
    double amplitude;
    int64_t tags[4];
} demo;

static const char *const kinds[] = {"cross", "tee", "roundabout", NULL};

static json_t *demo_parse(const json_t *doc, demo *d, pm_api_problem *p) {
    pm_api_node root, arms, arm, sw, ter, tags;
    memset(d, 0, sizeof *d);
    pm_api_begin(&root, doc, p);
    pm_api_u64(&root, "seed", 0, 7, &d->seed);
    pm_api_int(&root, "lanes", 0, PM_API_ILIMIT(1, 6, "max_lanes"), 2, &d->lanes);
    pm_api_num(&root, "radius", 0, PM_API_GT(0), 6.0, &d->radius);
    pm_api_num(&root, "slope", 0, (pm_api_range){0, 1, false, true, NULL}, 0.5, &d->slope);
    pm_api_bool(&root, "lit", 0, true, &d->lit);
    pm_api_enum(&root, "kind", 0, kinds, 0, &d->kind);
    pm_api_str(&root, "name", 0, 16, "junction", d->name, sizeof d->name);
    pm_api_vec(&root, "center", 0, 2, 2, PM_API_ANY, (const double[]){0, 0}, d->center, NULL);
    d->narms = pm_api_array(&root, "arms", PM_API_REQUIRED, PM_API_ILIMIT(1, 8, "max_arms"),
                            &arms);
    for (size_t i = 0; i < d->narms; i++) {
        pm_api_object(&arms, NULL, PM_API_REQUIRED, &arm);
        pm_api_num(&arm, "width", PM_API_REQUIRED, PM_API_GT(0), 0, &d->arms[i].width);
        pm_api_vec(&arm, "dir", 0, 2, 3, PM_API_RANGE(-1, 1), (const double[]){1, 0},
                   d->arms[i].dir, &d->arms[i].ndir);
        d->arms[i].has_sidewalk = pm_api_object(&arm, "sidewalk", PM_API_NULLABLE, &sw);
        if (d->arms[i].has_sidewalk == 1) {
            pm_api_num(&sw, "width", 0, PM_API_GT(0), 2.0, &d->arms[i].sidewalk);
            pm_api_end(&sw);
        }
        pm_api_end(&arm);
    }
    pm_api_end(&arms);
    d->terrain = pm_api_object(&root, "terrain", PM_API_NULLABLE | PM_API_ABSENT_OFF, &ter);
    if (d->terrain == 1) {
        pm_api_num(&ter, "amplitude", 0, PM_API_GE(0), 1.0, &d->amplitude);
        pm_api_end(&ter);
    }
    size_t nt = pm_api_array(&root, "tags", 0, PM_API_IRANGE(0, 4), &tags);
    for (size_t i = 0; i < nt; i++) pm_api_int(&tags, NULL, 0, PM_API_IANY, 0, &d->tags[i]);
    pm_api_end(&tags);
    return pm_api_finish(&root);
}

/* Parses text as a body and runs demo_parse on it. */
static json_t *run(const char *text, demo *d, pm_api_problem *p) {
    json_t *doc;
    pm_api_problem_init(p);
    if (pm_api_parse_body(text, strlen(text), &doc, p) < 0) return NULL;
    json_t *c = demo_parse(doc, d, p);
    json_decref(doc);
    return c;
}

/* The message recorded at pointer, or NULL. */
static const char *msg_at(const pm_api_problem *p, const char *pointer) { return pm_test_api_msg_at(p, pointer); }

static void expect_error(const char *text, const char *pointer, const char *message) {
    demo d;
    pm_api_problem p;
    json_t *c = run(text, &d, &p);
    cr_expect_null(c, "%s should fail", text);
    json_decref(c);
    cr_expect_eq(p.status, 422, "%s: status %d", text, p.status);
    const char *m = msg_at(&p, pointer);
    cr_expect(m != NULL, "%s: no error at '%s' (detail: %s)", text, pointer, p.detail);
    if (m) cr_expect_str_eq(m, message, "%s at %s", text, pointer);
    pm_api_problem_free(&p);
}

#define MIN_DOC "{\"arms\":[{\"width\":3}]}"

Test(reader, body_malformed_gives_line_and_column) {
    json_t *doc;
    pm_api_problem p;
    pm_api_problem_init(&p);
    const char *text = "{\"a\": 1,\n  \"b\": }";
    cr_assert_eq(pm_api_parse_body(text, strlen(text), &doc, &p), -1);
    cr_expect_eq(p.status, 400);
    cr_expect_str_eq(p.type, "urn:procmesh:problem:malformed-json");
    cr_expect(strstr(p.detail, "line 2, column") != NULL, "detail: %s", p.detail);
    pm_api_problem_free(&p);
}

Test(reader, body_duplicate_key_names_the_key) {
    json_t *doc;
    pm_api_problem p;
    pm_api_problem_init(&p);
    const char *text = "{\"arms\": [], \"radius\": 1, \"radius\": 2}";
    cr_assert_eq(pm_api_parse_body(text, strlen(text), &doc, &p), -1);
    cr_expect_eq(p.status, 400);
    cr_expect(strstr(p.detail, "duplicate key \"radius\"") != NULL, "detail: %s", p.detail);
    cr_expect(strstr(p.detail, "line 1") != NULL, "detail: %s", p.detail);
    pm_api_problem_free(&p);
}

Test(reader, body_duplicate_key_nested) {
    json_t *doc;
    pm_api_problem p;
    pm_api_problem_init(&p);
    const char *text = "{\"arms\": [{\"width\": 1, \"width\": 1}]}";
    cr_assert_eq(pm_api_parse_body(text, strlen(text), &doc, &p), -1);
    cr_expect_eq(p.status, 400);
    cr_expect(strstr(p.detail, "\"width\"") != NULL, "detail: %s", p.detail);
    pm_api_problem_free(&p);
}

Test(reader, body_empty_trailing_garbage_and_non_object) {
    json_t *doc;
    pm_api_problem p;
    const char *bad400[] = {"", "  \n", "{} x", "{\"a\":NaN}", "{\"a\":1e999}"};
    for (size_t i = 0; i < sizeof bad400 / sizeof *bad400; i++) {
        pm_api_problem_init(&p);
        cr_expect_eq(pm_api_parse_body(bad400[i], strlen(bad400[i]), &doc, &p), -1);
        cr_expect_eq(p.status, 400, "'%s' gave %d", bad400[i], p.status);
        pm_api_problem_free(&p);
    }
    const char *bad422[] = {"[1,2]", "3", "\"x\"", "null"};
    for (size_t i = 0; i < sizeof bad422 / sizeof *bad422; i++) {
        pm_api_problem_init(&p);
        cr_expect_eq(pm_api_parse_body(bad422[i], strlen(bad422[i]), &doc, &p), -1);
        cr_expect_eq(p.status, 422, "'%s' gave %d", bad422[i], p.status);
        cr_expect_str_eq(msg_at(&p, ""), "must be a JSON object");
        pm_api_problem_free(&p);
    }
    /* NUL bytes are not blanks: a body of them is malformed, not empty. */
    pm_api_problem_init(&p);
    cr_expect_eq(pm_api_parse_body("\0\0\0", 3, &doc, &p), -1);
    cr_expect_eq(p.status, 400);
    cr_expect_null(strstr(p.detail, "empty"), "%s", p.detail);
    pm_api_problem_free(&p);
    pm_api_problem_init(&p);
    cr_expect_eq(pm_api_parse_body(" {} ", 4, &doc, &p), 0);
    cr_expect(json_is_object(doc));
    json_decref(doc);
    pm_api_problem_free(&p);
}

Test(reader, defaults_fill_the_canonical_form) {
    demo d;
    pm_api_problem p;
    json_t *c = run(MIN_DOC, &d, &p);
    cr_assert_not_null(c, "detail: %s", p.detail);
    cr_expect_eq(d.seed, 7);
    cr_expect_eq(d.lanes, 2);
    cr_expect_float_eq(d.radius, 6.0, 0);
    cr_expect(d.lit);
    cr_expect_eq(d.kind, 0);
    cr_expect_str_eq(d.name, "junction");
    cr_expect_eq(d.narms, 1);
    cr_expect_eq(d.arms[0].ndir, 2);
    cr_expect_eq(d.arms[0].has_sidewalk, 1);
    cr_expect_float_eq(d.arms[0].sidewalk, 2.0, 0);
    cr_expect_eq(d.terrain, 0);
    char *s = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT);
    cr_expect_str_eq(s, "{\"arms\":[{\"dir\":[1.0,0.0],\"sidewalk\":{\"width\":2.0},"
                        "\"width\":3.0}],\"center\":[0.0,0.0],\"kind\":\"cross\","
                        "\"lanes\":2,\"lit\":true,\"name\":\"junction\",\"radius\":6.0,"
                        "\"seed\":7,\"slope\":0.5,\"tags\":[],\"terrain\":null}");
    free(s);
    json_decref(c);
    pm_api_problem_free(&p);
}

/* Documents that differ in key order, number spelling and stated defaults. */
Test(reader, canonical_equal_across_spellings) {
    const char *same[] = {
        MIN_DOC,
        "{\"arms\":[{\"width\":3.0}], \"radius\": 6}",
        "{\"radius\": 6e0, \"arms\":[{\"width\":0.3e1, \"dir\": [1, 0]}], \"seed\": 7}",
        "{\"seed\": \"7\", \"lanes\": 2.0, \"lit\": true, \"kind\": \"cross\", \"tags\": [],"
        " \"name\": \"junction\", \"center\": [0, -0.0], \"slope\": 0.50, \"terrain\": null,"
        " \"arms\":[{\"sidewalk\": {}, \"width\":3}]}",
        "{\"arms\":[{\"sidewalk\": {\"width\": 2}, \"width\":3}], \"center\": [-0, 0]}",
    };
    demo d;
    pm_api_problem p;
    json_t *first = run(same[0], &d, &p);
    cr_assert_not_null(first);
    for (size_t i = 1; i < sizeof same / sizeof *same; i++) {
        pm_api_problem pi;
        json_t *c = run(same[i], &d, &pi);
        cr_assert_not_null(c, "%s: %s", same[i], pi.detail);
        char *a = json_dumps(first, JSON_SORT_KEYS | JSON_COMPACT);
        char *b = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT);
        cr_expect_str_eq(a, b, "document %zu differs", i);
        free(a);
        free(b);
        json_decref(c);
    }
    json_decref(first);
}

Test(reader, canonical_differs_when_values_differ) {
    demo d;
    pm_api_problem p1, p2;
    json_t *a = run(MIN_DOC, &d, &p1);
    json_t *b = run("{\"arms\":[{\"width\":3, \"sidewalk\": null}]}", &d, &p2);
    cr_assert(a && b);
    cr_expect_eq(d.arms[0].has_sidewalk, 0);
    cr_expect_not(json_equal(a, b));
    json_decref(a);
    json_decref(b);
}

Test(reader, numbers) {
    expect_error("{\"arms\":[{\"width\":3}], \"radius\": \"6\"}", "/radius", "must be a number");
    expect_error("{\"arms\":[{\"width\":3}], \"radius\": 0}", "/radius", "must be > 0");
    expect_error("{\"arms\":[{\"width\":3}], \"radius\": -1.5}", "/radius", "must be > 0");
    expect_error("{\"arms\":[{\"width\":3}], \"slope\": 1}", "/slope", "must be < 1");
    expect_error("{\"arms\":[{\"width\":3}], \"slope\": -0.1}", "/slope", "must be >= 0");
    expect_error("{\"arms\":[{\"width\":3}], \"radius\": null}", "/radius", "must be a number");
    expect_error("{\"arms\":[{}]}", "/arms/0/width", "is required");
    demo d;
    pm_api_problem p;
    json_t *c = run("{\"arms\":[{\"width\":3}], \"slope\": 0}", &d, &p);
    cr_expect_not_null(c, "slope 0 is inside [0, 1)");
    json_decref(c);
}

Test(reader, integers) {
    expect_error("{\"arms\":[{\"width\":3}], \"lanes\": 2.5}", "/lanes", "must be an integer");
    expect_error("{\"arms\":[{\"width\":3}], \"lanes\": true}", "/lanes", "must be an integer");
    expect_error("{\"arms\":[{\"width\":3}], \"lanes\": 0}", "/lanes", "must be >= 1");
    expect_error("{\"arms\":[{\"width\":3}], \"lanes\": 7}", "/lanes",
                 "must be <= 6 (limit max_lanes)");
    expect_error("{\"arms\":[{\"width\":3}], \"lanes\": 1e300}", "/lanes", "must be an integer");
    demo d;
    pm_api_problem p;
    json_t *c = run("{\"arms\":[{\"width\":3}], \"lanes\": 3.0}", &d, &p);
    cr_assert_not_null(c);
    cr_expect_eq(d.lanes, 3);
    cr_expect(json_is_integer(json_object_get(c, "lanes")));
    json_decref(c);
}

Test(reader, seeds) {
    expect_error("{\"arms\":[{\"width\":3}], \"seed\": -1}", "/seed", "must be >= 0");
    expect_error("{\"arms\":[{\"width\":3}], \"seed\": 1.5}", "/seed",
                 "must be an integer >= 0 (or a decimal string above 2^63-1)");
    expect_error("{\"arms\":[{\"width\":3}], \"seed\": \"18446744073709551616\"}", "/seed",
                 "must be a decimal string of digits up to 18446744073709551615");
    expect_error("{\"arms\":[{\"width\":3}], \"seed\": \"-3\"}", "/seed",
                 "must be a decimal string of digits up to 18446744073709551615");
    expect_error("{\"arms\":[{\"width\":3}], \"seed\": \"\"}", "/seed",
                 "must be a decimal string of digits up to 18446744073709551615");
    demo d;
    pm_api_problem p;
    json_t *c = run("{\"arms\":[{\"width\":3}], \"seed\": \"18446744073709551615\"}", &d, &p);
    cr_assert_not_null(c);
    cr_expect_eq(d.seed, UINT64_MAX);
    cr_expect_str_eq(json_string_value(json_object_get(c, "seed")), "18446744073709551615");
    json_decref(c);
    c = run("{\"arms\":[{\"width\":3}], \"seed\": 9223372036854775807}", &d, &p);
    cr_assert_not_null(c);
    cr_expect_eq(d.seed, (uint64_t)INT64_MAX);
    json_decref(c);
    /* Both spellings of a value that fits in int64 give the same canonical form. */
    json_t *a = run("{\"arms\":[{\"width\":3}], \"seed\": \"9223372036854775807\"}", &d, &p);
    json_t *b = run("{\"arms\":[{\"width\":3}], \"seed\": 9223372036854775807}", &d, &p);
    cr_assert(a && b);
    cr_expect(json_equal(a, b));
    json_decref(a);
    json_decref(b);
}

Test(reader, bools_enums_strings) {
    expect_error("{\"arms\":[{\"width\":3}], \"lit\": 1}", "/lit", "must be a boolean");
    expect_error("{\"arms\":[{\"width\":3}], \"kind\": \"star\"}", "/kind",
                 "must be one of: cross, tee, roundabout");
    expect_error("{\"arms\":[{\"width\":3}], \"kind\": 2}", "/kind",
                 "must be one of: cross, tee, roundabout");
    expect_error("{\"arms\":[{\"width\":3}], \"name\": 5}", "/name", "must be a string");
    expect_error("{\"arms\":[{\"width\":3}], \"name\": \"abcdefghijklmnopq\"}", "/name",
                 "must be at most 16 bytes long");
    demo d;
    pm_api_problem p;
    json_t *c = run("{\"arms\":[{\"width\":3}], \"kind\": \"tee\", \"lit\": false,"
                    " \"name\": \"abcdefghijklmnop\"}", &d, &p);
    cr_assert_not_null(c);
    cr_expect_eq(d.kind, 1);
    cr_expect_not(d.lit);
    cr_expect_str_eq(d.name, "abcdefghijklmnop");
    json_decref(c);
}

Test(reader, vectors) {
    expect_error("{\"arms\":[{\"width\":3}], \"center\": [1]}", "/center",
                 "must be an array of 2 numbers");
    expect_error("{\"arms\":[{\"width\":3}], \"center\": 4}", "/center",
                 "must be an array of 2 numbers");
    expect_error("{\"arms\":[{\"width\":3}], \"center\": [1, \"a\"]}", "/center/1",
                 "must be a number");
    expect_error("{\"arms\":[{\"width\":3, \"dir\": [1,2,3,4]}]}", "/arms/0/dir",
                 "must be an array of 2 to 3 numbers");
    expect_error("{\"arms\":[{\"width\":3, \"dir\": [0.5, 2]}]}", "/arms/0/dir/1",
                 "must be <= 1");
    demo d;
    pm_api_problem p;
    json_t *c = run("{\"arms\":[{\"width\":3, \"dir\": [0, 1, 0]}], \"center\": [5, -2]}", &d, &p);
    cr_assert_not_null(c);
    cr_expect_eq(d.arms[0].ndir, 3);
    cr_expect_float_eq(d.arms[0].dir[1], 1.0, 0);
    cr_expect_float_eq(d.center[1], -2.0, 0);
    json_decref(c);
}

Test(reader, objects_nullable_and_off) {
    expect_error("{\"arms\":[{\"width\":3, \"sidewalk\": 2}]}", "/arms/0/sidewalk",
                 "must be an object or null");
    expect_error("{\"arms\":[5]}", "/arms/0", "must be an object");
    expect_error("{\"arms\":[{\"width\":3}], \"terrain\": {\"amplitude\": -1}}",
                 "/terrain/amplitude", "must be >= 0");
    demo d;
    pm_api_problem p;
    json_t *c = run("{\"arms\":[{\"width\":3}], \"terrain\": {}}", &d, &p);
    cr_assert_not_null(c);
    cr_expect_eq(d.terrain, 1);
    cr_expect_float_eq(d.amplitude, 1.0, 0);
    cr_expect(json_is_object(json_object_get(c, "terrain")));
    json_decref(c);
}

Test(reader, arrays_name_their_limits) {
    expect_error("{\"arms\":[]}", "/arms", "must have at least 1 item");
    expect_error("{}", "/arms", "is required");
    expect_error("{\"arms\": {}}", "/arms", "must be an array");
    expect_error("{\"arms\":[{\"width\":1},{\"width\":1},{\"width\":1},{\"width\":1},"
                 "{\"width\":1},{\"width\":1},{\"width\":1},{\"width\":1},{\"width\":1}]}",
                 "/arms", "must have at most 8 items (limit max_arms)");
    expect_error("{\"arms\":[{\"width\":3}], \"tags\": [1, 2.5]}", "/tags/1",
                 "must be an integer");
    expect_error("{\"arms\":[{\"width\":3}], \"tags\": [1,2,3,4,5]}", "/tags",
                 "must have at most 4 items");
}

Test(reader, unknown_fields_everywhere) {
    expect_error("{\"arms\":[{\"width\":3}], \"raduis\": 5}", "/raduis", "unknown field");
    expect_error("{\"arms\":[{\"width\":3, \"widht\": 2}]}", "/arms/0/widht", "unknown field");
    expect_error("{\"arms\":[{\"width\":3, \"sidewalk\": {\"w\": 1}}]}", "/arms/0/sidewalk/w",
                 "unknown field");
    expect_error("{\"arms\":[{\"width\":3}], \"a/b~c\": 1}", "/a~1b~0c", "unknown field");
}

Test(reader, collects_every_error_in_one_document) {
    demo d;
    pm_api_problem p;
    json_t *c = run("{\"radius\": -1, \"lanes\": 2.5, \"kind\": \"x\", \"bogus\": 1,"
                    " \"arms\":[{\"width\":3}, {\"width\": 0}, {\"dir\": [9, 0]}]}",
                    &d, &p);
    cr_assert_null(c);
    cr_expect_eq(p.status, 422);
    cr_expect_str_eq(p.type, "urn:procmesh:problem:validation");
    cr_expect_eq(json_array_size(p.errors), 7, "got %zu errors", json_array_size(p.errors));
    cr_expect_str_eq(msg_at(&p, "/radius"), "must be > 0");
    cr_expect_str_eq(msg_at(&p, "/lanes"), "must be an integer");
    cr_expect_str_eq(msg_at(&p, "/kind"), "must be one of: cross, tee, roundabout");
    cr_expect_str_eq(msg_at(&p, "/bogus"), "unknown field");
    cr_expect_str_eq(msg_at(&p, "/arms/1/width"), "must be > 0");
    cr_expect_str_eq(msg_at(&p, "/arms/2/width"), "is required");
    cr_expect_str_eq(msg_at(&p, "/arms/2/dir/0"), "must be <= 1");
    cr_expect_str_eq(p.detail, "lanes must be an integer",
                     "the first error read becomes the detail: %s", p.detail);
    json_t *j = pm_api_problem_json(&p, "req-1");
    cr_assert_not_null(j);
    cr_expect_str_eq(json_string_value(json_object_get(j, "detail")),
                     "lanes must be an integer (and 6 more errors)");
    cr_expect_str_eq(json_string_value(json_object_get(j, "instance")), "req-1");
    cr_expect_eq(json_integer_value(json_object_get(j, "status")), 422);
    cr_expect_str_eq(json_string_value(json_object_get(j, "title")), "Invalid request");
    json_decref(j);
    pm_api_problem_free(&p);
}

Test(reader, detail_reads_as_a_path) {
    demo d;
    pm_api_problem p;
    json_t *c = run("{\"arms\":[{\"width\":3}, {\"width\":3}, {\"width\": -2}]}", &d, &p);
    cr_assert_null(c);
    cr_expect_str_eq(p.detail, "arms[2].width must be > 0");
    pm_api_problem_free(&p);
}

Test(reader, error_count_is_capped) {
    json_t *doc = json_object();
    for (int i = 0; i < PM_API_MAX_ERRORS + 20; i++) {
        char k[16];
        snprintf(k, sizeof k, "x%d", i);
        json_object_set_new(doc, k, json_integer(i));
    }
    json_object_set_new(doc, "arms", json_pack("[{s:i}]", "width", 1));
    demo d;
    pm_api_problem p;
    pm_api_problem_init(&p);
    json_t *c = demo_parse(doc, &d, &p);
    cr_expect_null(c);
    cr_expect_eq(json_array_size(p.errors), PM_API_MAX_ERRORS);
    cr_expect_eq(p.dropped, 20);
    json_t *j = pm_api_problem_json(&p, NULL);
    cr_expect_null(json_object_get(j, "instance"));
    cr_expect(strstr(json_string_value(json_object_get(j, "detail")), "69 more errors"));
    json_decref(j);
    json_decref(doc);
    pm_api_problem_free(&p);
}

Test(reader, non_field_problem_wins) {
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_problem_field(&p, "/a", "must be a number");
    pm_api_problem_set(&p, 503, "overloaded", "Service Unavailable", "queue full (%d)", 64);
    pm_api_problem_field(&p, "/b", "must be a number");
    cr_expect_eq(p.status, 503);
    cr_expect_str_eq(p.type, "urn:procmesh:problem:overloaded");
    cr_expect_str_eq(p.detail, "queue full (64)");
    cr_expect_null(p.errors);
    json_t *j = pm_api_problem_json(&p, "id");
    cr_expect_null(json_object_get(j, "errors"));
    json_decref(j);
    pm_api_problem_free(&p);
}

Test(reader, pointer_escaping_and_truncation) {
    char out[16];
    cr_expect_eq(pm_api_pointer_join(out, sizeof out, "/a", "b/c~d"), 0);
    cr_expect_str_eq(out, "/a/b~1c~0d");
    cr_expect_eq(pm_api_pointer_index(out, sizeof out, "/arms", 12), 0);
    cr_expect_str_eq(out, "/arms/12");
    cr_expect_eq(pm_api_pointer_join(out, sizeof out, "/abcdefgh", "ijklmnopq"), -1);
    cr_expect_lt(strlen(out), sizeof out);
}

/* ---- GET query strings ---- */

static const pm_api_qparam qtable[] = {
    {"seed", PM_API_Q_U64}, {"rooms", PM_API_Q_INT}, {"scale", PM_API_Q_NUM},
    {"style", PM_API_Q_STR}, {"size", PM_API_Q_PAIR},
};
#define NQ (sizeof qtable / sizeof *qtable)

Test(reader, query_builds_a_document) {
    pm_api_query_pair q[] = {{"seed", "18446744073709551615"}, {"rooms", "12"},
                             {"scale", "2.5"}, {"style", "organic"}, {"size", "10x20.5"},
                             {"format", "glb"}};
    pm_api_problem p;
    pm_api_problem_init(&p);
    json_t *doc = pm_api_query_doc(qtable, NQ, q, 6, &p);
    cr_assert_not_null(doc, "detail: %s", p.detail);
    char *s = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
    cr_expect_str_eq(s, "{\"rooms\":12,\"scale\":2.5,\"seed\":\"18446744073709551615\","
                        "\"size\":[10,20.5],\"style\":\"organic\"}");
    free(s);
    json_decref(doc);
    pm_api_query_pair q2[] = {{"seed", "42"}};
    doc = pm_api_query_doc(qtable, NQ, q2, 1, &p);
    cr_assert_not_null(doc);
    cr_expect_eq(json_integer_value(json_object_get(doc, "seed")), 42);
    json_decref(doc);
}

Test(reader, query_errors_name_the_parameter) {
    pm_api_query_pair q[] = {{"seed", "-1"},  {"rooms", "2.5"}, {"scale", "inf"},
                             {"size", "10"},  {"sede", "1"},    {"rooms", "3"},
                             {"size", "x4"},  {"scale", "0x10"}};
    pm_api_problem p;
    pm_api_problem_init(&p);
    json_t *doc = pm_api_query_doc(qtable, NQ, q, 8, &p);
    cr_assert_null(doc);
    cr_expect_eq(p.status, 422);
    cr_expect_str_eq(msg_at(&p, "/seed"), "must be an integer from 0 to 18446744073709551615");
    cr_expect_str_eq(msg_at(&p, "/rooms"), "must be an integer");
    cr_expect_str_eq(msg_at(&p, "/scale"), "must be a number");
    cr_expect_str_eq(msg_at(&p, "/size"), "must be two numbers written WxD, such as 10x20");
    cr_expect_str_eq(msg_at(&p, "/sede"), "unknown query parameter");
    /* rooms=2.5 failed, so rooms=3 is the first good one; scale failed twice. */
    cr_expect_eq(json_array_size(p.errors), 7, "got %zu", json_array_size(p.errors));
    pm_api_problem_free(&p);

    pm_api_query_pair dup[] = {{"rooms", "3"}, {"rooms", "4"}};
    pm_api_problem_init(&p);
    cr_expect_null(pm_api_query_doc(qtable, NQ, dup, 2, &p));
    cr_expect_str_eq(msg_at(&p, "/rooms"), "is given more than once");
    pm_api_problem_free(&p);
}

/* A query document goes through the same reader as a body: range errors
 * then name the query parameter through the same pointer. */
Test(reader, query_document_feeds_the_reader) {
    pm_api_query_pair q[] = {{"rooms", "0"}};
    pm_api_problem p;
    pm_api_problem_init(&p);
    json_t *doc = pm_api_query_doc(qtable, NQ, q, 1, &p);
    cr_assert_not_null(doc);
    pm_api_node root;
    int64_t rooms;
    pm_api_begin(&root, doc, &p);
    pm_api_int(&root, "rooms", 0, PM_API_IRANGE(1, 100), 10, &rooms);
    cr_expect_null(pm_api_finish(&root));
    cr_expect_str_eq(msg_at(&p, "/rooms"), "must be >= 1");
    json_decref(doc);
    pm_api_problem_free(&p);
}

Test(reader, cross_field_errors) {
    const char *text = "{\"arms\":[{\"width\":3}, {\"width\":5}]}";
    json_t *doc;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_assert_eq(pm_api_parse_body(text, strlen(text), &doc, &p), 0);
    pm_api_node root, arms, arm;
    double w[2];
    pm_api_begin(&root, doc, &p);
    size_t n = pm_api_array(&root, "arms", 0, PM_API_IRANGE(0, 4), &arms);
    for (size_t i = 0; i < n; i++) {
        pm_api_object(&arms, NULL, 0, &arm);
        pm_api_num(&arm, "width", 0, PM_API_GT(0), 1, &w[i]);
        if (i == 1 && w[1] > w[0]) pm_api_fail(&arm, "width", "must be <= arms[0].width");
        pm_api_end(&arm);
    }
    pm_api_end(&arms);
    pm_api_fail(&arms, NULL, "must be symmetric");
    cr_expect_null(pm_api_finish(&root));
    cr_expect_str_eq(msg_at(&p, "/arms/1/width"), "must be <= arms[0].width");
    cr_expect_str_eq(msg_at(&p, "/arms"), "must be symmetric");
    json_decref(doc);
    pm_api_problem_free(&p);
}

/* Bad input never crashes, hangs or leaks: random mutations of a valid
 * document always end in success or a 400/422 with a pointer. */
Test(reader, random_documents_never_crash) {
    const char *seed_doc = "{\"seed\": \"12\", \"lanes\": 3, \"radius\": 2.5, \"kind\": \"tee\","
                           " \"name\": \"x\", \"center\": [1, 2], \"tags\": [1, 2],"
                           " \"terrain\": {\"amplitude\": 2}, \"arms\": [{\"width\": 3,"
                           " \"dir\": [0, 1, 0], \"sidewalk\": null}, {\"width\": 1}]}";
    const char alphabet[] = "{}[],:\"0123456789.-eE tnulrfas\\/x";
    size_t len = strlen(seed_doc);
    char buf[512];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int ok = 0, e400 = 0, e422 = 0;
    for (int it = 0; it < 20000; it++) {
        memcpy(buf, seed_doc, len + 1);
        int edits = 1 + it % 4;
        for (int k = 0; k < edits; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[x % len] = alphabet[(x >> 32) % (sizeof alphabet - 1)];
        }
        demo d;
        pm_api_problem p;
        json_t *c = run(buf, &d, &p);
        if (c) ok++;
        else if (p.status == 400) e400++;
        else if (p.status == 422) {
            e422++;
            cr_assert(json_array_size(p.errors) > 0, "%s", buf);
        } else {
            cr_assert_fail("status %d for %s", p.status, buf);
        }
        json_decref(c);
        pm_api_problem_free(&p);
    }
    cr_expect_gt(ok, 0);
    cr_expect_gt(e400, 0);
    cr_expect_gt(e422, 0);
}

/* pm_api_peek: the value without reading it; the next read of the key takes
 * it (one read only: a later read of the same key looks it up again). */
Test(reader, peek_then_read) {
    json_t *doc = json_pack("{s:s,s:i}", "id", "a7", "n", 3);
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_node root;
    pm_api_begin(&root, doc, &p);
    const char *id = "id", *n = "n", *gone = "gone";
    cr_assert_str_eq(json_string_value(pm_api_peek(&root, id)), "a7");
    cr_assert_null(pm_api_peek(&root, gone), "an absent member peeks as NULL");
    cr_assert_not_null(pm_api_peek(&root, n));
    char buf[8];
    cr_assert_eq(pm_api_str(&root, id, PM_API_REQUIRED, 7, "", buf, sizeof buf), 0,
                 "a peek of another key leaves this read its own lookup");
    cr_assert_str_eq(buf, "a7");
    cr_assert_null(pm_api_peek(&root, gone));
    int64_t v = 0;
    cr_assert_lt(pm_api_int(&root, gone, PM_API_REQUIRED, PM_API_IANY, 0, &v), 0);
    cr_assert_not_null(pm_api_peek(&root, n));
    cr_assert_eq(pm_api_int(&root, n, PM_API_REQUIRED, PM_API_IANY, 0, &v), 0);
    cr_assert_eq(v, 3);
    json_t *c = pm_api_finish(&root);
    cr_assert_null(c, "the missing member failed the request");
    cr_assert_str_eq(msg_at(&p, "/gone"), "is required");
    cr_assert_null(msg_at(&p, "/id"));
    pm_api_problem_free(&p);
    json_decref(doc);
}

/* pm_api_end skips its search for unknown members only when every input
 * member was stored: a member read twice counts once. */
Test(reader, unknown_member_after_a_member_read_twice) {
    json_t *doc = json_pack("{s:f,s:i}", "a", 1.5, "zzz", 2);
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_node root;
    pm_api_begin(&root, doc, &p);
    double x;
    pm_api_num(&root, "a", 0, PM_API_ANY, 0, &x);
    pm_api_num(&root, "a", 0, PM_API_ANY, 0, &x);
    cr_assert_null(pm_api_finish(&root));
    cr_assert_str_eq(msg_at(&p, "/zzz"), "unknown field");
    pm_api_problem_free(&p);
    json_decref(doc);
}

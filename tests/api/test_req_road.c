#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm/arena.h"
#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "pm_api/reader.h"
#include "pm_test_validator.h"

extern const pm_api_generator pm_api_gen_road;

typedef struct run {
    pm_arena *arena;
    pm_api_problem prob;
    void *params;
    json_t *canon;
    pm_scene *scene;
    int parsed, generated;
} run;

static pm_api_limits limits(void) {
    pm_api_limits l;
    pm_api_limits_default(&l);
    return l;
}

/* Parses (and, when it parsed, generates) a request given as JSON text. */
static run road(const char *body, const pm_api_limits *lim) {
    run r = {.arena = pm_arena_create(0)};
    pm_api_problem_init(&r.prob);
    json_t *doc = NULL;
    cr_assert_eq(pm_api_parse_body(body, strlen(body), &doc, &r.prob), 0, "body: %s", r.prob.detail);
    r.parsed = pm_api_gen_road.parse(doc, lim, r.arena, &r.params, &r.canon, &r.prob) == 0;
    json_decref(doc);
    if (r.parsed) {
        volatile int cancel = 0;
        r.generated = pm_api_gen_road.generate(r.params, lim, r.arena, &cancel, &r.scene, &r.prob) == 0;
    }
    return r;
}

static void done(run *r) {
    json_decref(r->canon);
    pm_api_problem_free(&r->prob);
    pm_arena_destroy(r->arena);
}

/* The problem lists an error at exactly this pointer. */
static void assert_error_at(const run *r, const char *pointer) {
    cr_assert_eq(r->prob.status, 422, "status %d (%s)", r->prob.status, r->prob.detail);
    size_t i;
    json_t *e;
    json_array_foreach(r->prob.errors, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "pointer")), pointer) == 0) return;
    }
    char *all = json_dumps(r->prob.errors, 0);
    cr_assert_fail("no error at %s: %s", pointer, all);
}

static void expect_422(const char *body, const char *pointer) {
    pm_api_limits l = limits();
    run r = road(body, &l);
    cr_assert_not(r.parsed && r.generated, "%s should fail", body);
    assert_error_at(&r, pointer);
    done(&r);
}

/* ---- parsing ---- */

Test(req_road, defaults_fill_the_canonical_form) {
    pm_api_limits l = limits();
    run r = road("{\"points\": [[0,0,0],[10,0,0]]}", &l);
    cr_assert(r.parsed, "%s", r.prob.detail);
    cr_assert(r.generated, "%s", r.prob.detail);
    const char *keys[] = {"closed", "curve", "alpha", "max_error", "max_segment", "width", "shoulder",
                          "cross_segments", "banking", "terrain", "conform", "up", "flatten", "props",
                          "lods", "uv_scale"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cr_assert_not_null(json_object_get(r.canon, keys[i]), "canonical lacks %s", keys[i]);
    cr_assert_str_eq(json_string_value(json_object_get(r.canon, "curve")), "catmull-rom");
    cr_assert_float_eq(json_real_value(json_object_get(r.canon, "alpha")), 0.5, 0);
    cr_assert_float_eq(json_real_value(json_object_get(r.canon, "max_error")), 0.05, 0);
    cr_assert(json_is_null(json_object_get(r.canon, "terrain")));
    cr_assert(json_is_null(json_object_get(r.canon, "flatten")));
    done(&r);
}

Test(req_road, spelling_and_order_do_not_change_the_canonical_form) {
    pm_api_limits l = limits();
    run a = road("{\"points\": [[0,0,0],[10,0,0]], \"width\": 7}", &l);
    run b = road("{\"width\": 7.0, \"uv_scale\": 0.25, \"points\": [[0,0.0,0],[1e1,0,0]], \"closed\": false,"
                 " \"banking\": {\"max_degrees\": 0}}", &l);
    cr_assert(a.parsed && b.parsed);
    cr_assert(json_equal(a.canon, b.canon));
    done(&a);
    done(&b);
}

Test(req_road, full_request_parses_and_generates) {
    pm_api_limits l = limits();
    run r = road("{\"points\": [[0,0,0],[60,0,20],[120,0,-10],[200,0,0]], \"curve\": \"catmull-rom\","
                 " \"alpha\": 0.5, \"max_error\": 0.05, \"max_segment\": 5, \"width\": 8, \"shoulder\": 1.5,"
                 " \"cross_segments\": 4, \"banking\": {\"max_degrees\": 6, \"radius\": 80,"
                 " \"transition\": 30, \"roll\": [0, 2, -2, 0]},"
                 " \"terrain\": {\"origin\": [-20, -60], \"cell\": 4, \"cols\": 60, \"rows\": 30,"
                 "   \"noise\": {\"seed\": 7, \"amplitude\": 8, \"wavelength\": 80, \"octaves\": 3}},"
                 " \"conform\": \"bank\", \"up\": \"world\", \"flatten\": {\"margin\": 1, \"falloff\": 6},"
                 " \"props\": [{\"name\": \"guardrail\", \"spacing\": 4, \"offset\": 5.5, \"side\": \"both\"},"
                 "            {\"name\": \"lamp\", \"spacing\": 30, \"offset\": 6, \"side\": \"left\","
                 "             \"align\": \"terrain\"}],"
                 " \"lods\": [0.5, 2], \"uv_scale\": 0.2}", &l);
    cr_assert(r.parsed, "%s", r.prob.detail);
    cr_assert(r.generated, "%s", r.prob.detail);
    const char *names[] = {"asphalt", "shoulder", "terrain", "asphalt_lod1", "shoulder_lod1",
                           "asphalt_lod2", "shoulder_lod2"};
    cr_assert_eq(r.scene->nprims, 7);
    for (int i = 0; i < 7; i++) cr_assert_str_eq(r.scene->prims[i].name, names[i]);
    cr_assert_eq(r.scene->nprops, 2);
    cr_assert_eq(pm_test_validate_scene(r.scene, &pm_api_gen_road), 0);
    done(&r);
}

/* ---- 422 with pointers ---- */

Test(req_road, fewer_than_two_points) {
    expect_422("{\"points\": [[0,0,0]]}", "/points");
    expect_422("{\"points\": []}", "/points");
    expect_422("{}", "/points");
}

Test(req_road, coincident_consecutive_points) {
    expect_422("{\"points\": [[0,0,0],[10,0,0],[10,0,0],[20,0,0]]}", "/points/2");
    /* Same plan point at another height: a vertical road. */
    expect_422("{\"points\": [[0,0,0],[10,0,0],[10,5,0]]}", "/points/2");
    /* A closed road must not repeat its first point. */
    expect_422("{\"points\": [[0,0,0],[10,0,0],[10,0,10],[0,0,0]], \"closed\": true}", "/points/3");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"closed\": true}", "/points");
}

Test(req_road, non_finite_and_out_of_range_numbers) {
    expect_422("{\"points\": [[0,0,0],[1e6,0,0]]}", "/points/1/0");
    expect_422("{\"points\": [[0,0,0],[10,\"a\",0]]}", "/points/1/1");
    expect_422("{\"points\": [[0,0,0],[10,0]]}", "/points/1");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"alpha\": 1.5}", "/alpha");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"max_error\": 0}", "/max_error");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"cross_segments\": 0}", "/cross_segments");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"uv_scale\": -1}", "/uv_scale");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"banking\": {\"max_degrees\": 60}}", "/banking/max_degrees");
}

Test(req_road, negative_widths) {
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"width\": -3}", "/width");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"shoulder\": -0.5}", "/shoulder");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"props\": [{\"name\": \"a\", \"spacing\": 5,"
               " \"offset\": -1}]}", "/props/0/offset");
}

Test(req_road, heightfield_size_must_match) {
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"terrain\": {\"cell\": 1, \"cols\": 3, \"rows\": 2,"
               " \"heights\": [0,0,0,0,0]}}", "/terrain/heights");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2,"
               " \"heights\": [0,0,0,0], \"noise\": {\"seed\": 1}}}", "/terrain");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"terrain\": {\"cell\": 1, \"cols\": 2, \"rows\": 2}}",
               "/terrain/noise");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"terrain\": {\"cell\": 0, \"cols\": 2, \"rows\": 2,"
               " \"heights\": [0,0,0,0]}}", "/terrain/cell");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"flatten\": {}}", "/flatten");
}

Test(req_road, other_fields) {
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"colour\": 1}", "/colour");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"curve\": \"bezier\"}", "/curve");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"conform\": \"float\"}", "/conform");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"lods\": [0.5, 0.2]}", "/lods/1");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"lods\": [0.01]}", "/lods/0");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"banking\": {\"roll\": [1, 2, 3]}}", "/banking/roll");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"props\": [{\"name\": \"\", \"spacing\": 5}]}",
               "/props/0/name");
    expect_422("{\"points\": [[0,0,0],[10,0,0]], \"props\": [{\"name\": \"a\", \"spacing\": 5,"
               " \"side\": \"middle\"}]}", "/props/0/side");
}

Test(req_road, limits_exceeded) {
    pm_api_limits l = limits();
    l.max_points = 3;
    run r = road("{\"points\": [[0,0,0],[10,0,0],[20,0,0],[30,0,0]]}", &l);
    cr_assert_not(r.parsed);
    assert_error_at(&r, "/points");
    cr_assert(strstr(r.prob.detail, "max_points"), "%s", r.prob.detail);
    done(&r);
    /* Known up front: 10 km cut into 5 m chords. */
    l = limits();
    l.max_vertices = 10000;
    r = road("{\"points\": [[0,0,0],[10000,0,0]]}", &l);
    cr_assert_not(r.parsed);
    assert_error_at(&r, "/max_segment");
    cr_assert(strstr(r.prob.detail, "max_vertices"), "%s", r.prob.detail);
    done(&r);
    /* Known while sampling: a tight error on a wiggly road. */
    l.max_vertices = 3000;
    r = road("{\"points\": [[0,0,0],[100,0,80],[200,0,-80],[300,0,80],[400,0,-80]],"
             " \"max_error\": 0.001, \"max_segment\": 50}", &l);
    cr_assert(r.parsed, "%s", r.prob.detail);
    cr_assert_not(r.generated);
    assert_error_at(&r, "/max_error");
    done(&r);
    l.max_vertices = 10000;
    /* Terrain nodes count as vertices. */
    r = road("{\"points\": [[0,0,0],[10,0,0]], \"terrain\": {\"cell\": 1, \"cols\": 1000, \"rows\": 1000,"
             " \"noise\": {\"seed\": 1}}}", &l);
    cr_assert_not(r.parsed);
    assert_error_at(&r, "/terrain/cols");
    done(&r);
    /* Instances count too. */
    r = road("{\"points\": [[0,0,0],[1000,0,0]], \"max_segment\": 50,"
             " \"props\": [{\"name\": \"p\", \"spacing\": 0.1}]}", &l);
    cr_assert(r.parsed, "%s", r.prob.detail);
    cr_assert_not(r.generated);
    assert_error_at(&r, "/props/0/spacing");
    done(&r);
}

Test(req_road, cancelled_job_is_503) {
    pm_api_limits l = limits();
    run r = road("{\"points\": [[0,0,0],[100,0,0]]}", &l);
    cr_assert(r.parsed);
    volatile int cancel = 1;
    pm_scene *s;
    pm_api_problem p;
    pm_api_problem_init(&p);
    cr_assert_neq(pm_api_gen_road.generate(r.params, &l, r.arena, &cancel, &s, &p), 0);
    cr_assert_eq(p.status, 503);
    pm_api_problem_free(&p);
    done(&r);
}

/* ---- outputs through the glTF validator ---- */

static void validate(const char *body) {
    pm_api_limits l = limits();
    run r = road(body, &l);
    cr_assert(r.parsed && r.generated, "%s: %s", body, r.prob.detail);
    cr_assert_eq(pm_test_validate_scene(r.scene, &pm_api_gen_road), 0, "%s", body);
    done(&r);
}

Test(req_road, validator_straight_scurve_loop) {
    validate("{\"points\": [[0,0,0],[100,0,0]]}");
    validate("{\"points\": [[0,0,0],[40,1,0],[60,2,30],[80,1,60],[120,0,60]], \"shoulder\": 0}");
    validate("{\"points\": [[0,0,0],[100,0,0],[100,0,100],[0,0,100]], \"closed\": true,"
             " \"banking\": {\"max_degrees\": 8}}");
}

Test(req_road, validator_hairpin_and_linear) {
    validate("{\"points\": [[0,0,0],[40,0,0],[43,0,3],[40,0,6],[0,0,6]], \"width\": 10,"
             " \"conform\": \"bank\", \"banking\": {\"max_degrees\": 10}}");
    validate("{\"points\": [[0,0,0],[30,0,0],[30,0,30],[5,0,2]], \"curve\": \"linear\", \"width\": 6}");
}

Test(req_road, validator_terrain_drape_bank_flatten) {
    char body[4096];
    int n = snprintf(body, sizeof body, "{\"points\": [[0,0,0],[30,0,10],[60,0,0]], \"terrain\":"
                     " {\"origin\": [-10,-20], \"cell\": 5, \"cols\": 16, \"rows\": 9, \"heights\": [");
    for (int i = 0; i < 16 * 9; i++)
        n += snprintf(body + n, sizeof body - n, "%s%d", i ? "," : "", (i * 7) % 11 - 5);
    snprintf(body + n, sizeof body - n, "]}, \"flatten\": {\"margin\": 1, \"falloff\": 5}}");
    validate(body);
    validate("{\"points\": [[0,0,0],[80,0,30],[160,0,0]], \"conform\": \"drape\", \"terrain\":"
             " {\"origin\": [-20,-40], \"cell\": 4, \"cols\": 50, \"rows\": 25,"
             " \"noise\": {\"seed\": 3, \"amplitude\": 20, \"wavelength\": 40}}}");
    validate("{\"points\": [[0,0,0],[80,0,30],[160,0,0]], \"conform\": \"bank\", \"up\": \"terrain\","
             " \"terrain\": {\"origin\": [-20,-40], \"cell\": 4, \"cols\": 50, \"rows\": 25,"
             " \"noise\": {\"seed\": 3, \"amplitude\": 20, \"wavelength\": 40}, \"mesh\": false}}");
}

Test(req_road, validator_props_and_lods) {
    validate("{\"points\": [[0,0,0],[50,0,20],[100,0,0]], \"props\": ["
             "{\"name\": \"guardrail\", \"spacing\": 4, \"offset\": 5, \"side\": \"both\"},"
             "{\"name\": \"lamp\", \"spacing\": 25, \"offset\": 6, \"side\": \"right\"}],"
             " \"lods\": [0.3, 1, 4]}");
}

Test(req_road, output_bytes_repeat) {
    const char *body = "{\"points\": [[0,0,0],[50,0,20],[100,0,0]], \"lods\": [0.5],"
                       " \"props\": [{\"name\": \"p\", \"spacing\": 7}]}";
    pm_api_limits l = limits();
    pm_api_buf out[2];
    for (int k = 0; k < 2; k++) {
        run r = road(body, &l);
        cr_assert(r.generated);
        cr_assert_eq(pm_api_encode(r.scene, &pm_api_gen_road, "0123456789abcdef0123456789abcdef",
                                   PM_API_FMT_GLB, &out[k]), 0);
        done(&r);
    }
    cr_assert_eq(out[0].len, out[1].len);
    cr_assert_eq(memcmp(out[0].data, out[1].data, out[0].len), 0);
    free(out[0].data);
    free(out[1].data);
}

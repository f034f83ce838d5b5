#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/arena.h"
#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "pm_api/reader.h"
#include "scene/rng.h"
#include "pm_test_api.h"
#include "pm_test_validator.h"
#include "pm_test_overlap.h"

extern const pm_api_generator pm_api_gen_road;

typedef pm_test_api_run run;

static pm_api_limits limits(void) {
    pm_api_limits l;
    pm_api_limits_default(&l);
    return l;
}

/* Parses (and, when it parsed, generates) a request given as JSON text. */
static run road(const char *body, const pm_api_limits *lim) {
    run r;
    pm_test_api_build(&r, &pm_api_gen_road, body, lim);
    return r;
}

static void done(run *r) { pm_test_api_done(r); }

/* The problem lists an error at exactly this pointer. */
static void assert_error_at(const run *r, const char *pointer) { pm_test_api_assert_422(r, "request", pointer, NULL); }

static void expect_422(const char *body, const char *pointer) {
    pm_test_api_expect_422(&pm_api_gen_road, body, NULL, true, pointer, NULL);
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
    const char *meshes[] = {"asphalt", "shoulder", "terrain", "road_lod1", "road_lod1",
                            "road_lod2", "road_lod2"};
    for (int i = 0; i < 7; i++) {
        cr_assert_str_eq(r.scene->prims[i].name, names[i]);
        cr_assert_str_eq(pm_prim_mesh(&r.scene->prims[i]), meshes[i], "glTF mesh of %s", names[i]);
    }
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
    /* Within 1 mm, not equal: a later pair, the closing pair. */
    expect_422("{\"points\": [[0,0,0],[10,0,0],[20,0,0],[20.0005,3,0.0002],[30,0,0]]}", "/points/3");
    expect_422("{\"points\": [[0,0,0],[10,0,0],[10,0,10],[0.0001,0,0.0003]], \"closed\": true}",
               "/points/3");
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
    /* Folds that collapse (a tight apex, right-angle corners); hairpins
     * whose legs lie on each other are refused (test_http_road.c). */
    validate("{\"points\": [[0,0,0],[40,0,0],[50,0,10],[40,0,20],[0,0,20]], \"width\": 6,"
             " \"conform\": \"bank\", \"banking\": {\"max_degrees\": 10}}");
    validate("{\"points\": [[0,0,0],[30,0,0],[30,0,30],[0,0,30]], \"curve\": \"linear\", \"width\": 6}");
    /* Turns tighter than the half width: the inner side fans onto one
     * pivot (a banked hairpin with LODs, a linear road turning back
     * 146 degrees, a closed loop with a tight corner, draped on terrain). */
    validate("{\"points\": [[0,0,0],[40,0,0],[46,0,6],[40,0,12],[0,0,12]], \"width\": 8,"
             " \"conform\": \"bank\", \"banking\": {\"max_degrees\": 12}, \"lods\": [0.3, 2]}");
    validate("{\"points\": [[0,0,0],[30,0,0],[0,0,20]], \"curve\": \"linear\", \"width\": 6}");
    validate("{\"points\": [[0,0,0],[60,0,0],[64,0,4],[60,0,8],[20,0,40]], \"closed\": true, \"width\": 7,"
             " \"terrain\": {\"origin\": [-20,-20], \"cell\": 4, \"cols\": 30, \"rows\": 20,"
             " \"noise\": {\"seed\": 2, \"amplitude\": 6, \"wavelength\": 40}}}");
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

/* ---- adversarial input: never a crash, a hang or a leak ---- */

static double pick(pm_rng *r, const double *v, int n) { return v[pm_rng_below(r, (uint64_t)n)]; }

Test(req_road, adversarial_requests_answer_200_or_problem) {
    pm_rng r;
    pm_rng_seed(&r, 99);
    const double widths[] = {0.1, 3, 8, 60, 200}, errs[] = {0.001, 0.05, 5, 100};
    const double segs[] = {0.05, 1, 5, 1000}, spans[] = {0.001, 0.01, 1, 30, 5000};
    const char *curves[] = {"catmull-rom", "linear"}, *conf[] = {"drape", "bank"};
    pm_api_limits l = limits();
    l.max_vertices = 200000;
    int ok = 0, refused = 0, overlapping = 0;
    for (int iter = 0; iter < 300; iter++) {
        json_t *doc = json_object(), *pts = json_array();
        int n = 2 + (int)pm_rng_below(&r, 12);
        double x = 0, z = 0, span = pick(&r, spans, 5);
        for (int i = 0; i < n; i++) {
            json_array_append_new(pts, json_pack("[f,f,f]", x, pm_rng_range(&r, -50, 50), z));
            /* Sometimes straight back: 180-degree reversals and cusps. */
            double a = pm_rng_chance(&r, 0.3) ? 3.14159 * (double)(i % 2) : pm_rng_range(&r, 0, 6.3);
            x += span * cos(a);
            z += span * sin(a);
        }
        json_object_set_new(doc, "points", pts);
        json_object_set_new(doc, "closed", json_boolean(n >= 3 && pm_rng_chance(&r, 0.3)));
        json_object_set_new(doc, "curve", json_string(curves[pm_rng_below(&r, 2)]));
        json_object_set_new(doc, "alpha", json_real(pm_rng_chance(&r, 0.5) ? 0.0 : pm_rng_unit(&r)));
        json_object_set_new(doc, "max_error", json_real(pick(&r, errs, 4)));
        json_object_set_new(doc, "max_segment", json_real(pick(&r, segs, 4)));
        json_object_set_new(doc, "width", json_real(pick(&r, widths, 5)));
        json_object_set_new(doc, "shoulder", json_real(pm_rng_range(&r, 0, 20)));
        json_object_set_new(doc, "cross_segments", json_integer(1 + (json_int_t)pm_rng_below(&r, 64)));
        json_object_set_new(doc, "banking", json_pack("{s:f, s:f, s:f}", "max_degrees", pm_rng_range(&r, 0, 45),
                                                      "radius", pm_rng_range(&r, 0.1, 500), "transition",
                                                      pm_rng_range(&r, 0, 100)));
        if (pm_rng_chance(&r, 0.4)) {
            json_object_set_new(doc, "terrain",
                                json_pack("{s:[f,f], s:f, s:i, s:i, s:{s:i, s:f, s:f}}", "origin", -100.0, -100.0,
                                          "cell", pm_rng_range(&r, 0.5, 20), "cols", 2 + (int)pm_rng_below(&r, 60),
                                          "rows", 2 + (int)pm_rng_below(&r, 60), "noise", "seed", iter,
                                          "amplitude", pm_rng_range(&r, 0, 300), "wavelength",
                                          pm_rng_range(&r, 0.5, 100)));
            json_object_set_new(doc, "conform", json_string(conf[pm_rng_below(&r, 2)]));
            json_object_set_new(doc, "up", json_string(pm_rng_chance(&r, 0.5) ? "terrain" : "world"));
            if (pm_rng_chance(&r, 0.5))
                json_object_set_new(doc, "flatten", json_pack("{s:f, s:f}", "margin", pm_rng_range(&r, 0, 50),
                                                              "falloff", pm_rng_range(&r, 0, 50)));
        }
        if (pm_rng_chance(&r, 0.5))
            json_object_set_new(doc, "props", json_pack("[{s:s, s:f, s:f}]", "name", "p", "spacing",
                                                        pm_rng_range(&r, 0.1, 50), "offset", pm_rng_range(&r, 0, 300)));
        if (pm_rng_chance(&r, 0.3)) json_object_set_new(doc, "lods", json_pack("[f, f]", 101.0, 500.0));
        char *body = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        run rr = road(body, &l);
        if (rr.parsed && rr.generated) {
            ok++;
            /* Never a surface lying on itself: each level checked by the
             * brute-force oracle (asphalt and shoulder together). */
            for (int lv = 0; lv <= 2; lv++) {
                char an[32], sn[32];
                snprintf(an, sizeof an, lv ? "asphalt_lod%d" : "asphalt", lv);
                snprintf(sn, sizeof sn, lv ? "shoulder_lod%d" : "shoulder", lv);
                const char *names[] = {an, sn, NULL};
                size_t nt;
                ptri *t = ptri_from_prims(rr.scene, names, &nt);
                size_t over = ptri_count_overlaps(t, nt);
                free(t);
                cr_assert_eq(over, 0, "iter %d: level %d overlaps itself (%zu pairs): %s", iter, lv, over, body);
            }
            /* Every triangle faces up, whatever came in. */
            for (uint32_t i = 0; i < rr.scene->nprims; i++) {
                const pm_prim *p = &rr.scene->prims[i];
                for (uint32_t t = 0; t < p->icount; t += 3) {
                    const float *A = p->positions + 3 * p->indices[t], *B = p->positions + 3 * p->indices[t + 1],
                                *C = p->positions + 3 * p->indices[t + 2];
                    double ny = (double)(B[2] - A[2]) * (C[0] - A[0]) - (double)(B[0] - A[0]) * (C[2] - A[2]);
                    cr_assert_gt(ny, 0.0, "iter %d: %s", iter, body);
                }
            }
        } else {
            refused++;
            cr_assert(rr.prob.status == 422 || rr.prob.status == 503, "iter %d: status %d", iter, rr.prob.status);
            cr_assert(rr.prob.status != 422 || json_array_size(rr.prob.errors) > 0, "iter %d: no pointer", iter);
            /* A road lying on itself is refused naming an existing point. */
            json_t *e0 = json_array_get(rr.prob.errors, 0);
            const char *ptr = json_string_value(json_object_get(e0, "pointer"));
            const char *det = json_string_value(json_object_get(e0, "message"));
            if (det && strstr(det, "overlaps itself")) {
                overlapping++;
                size_t npts = 0;
                cr_assert(ptr && sscanf(ptr, "/points/%zu", &npts) == 1, "iter %d: pointer %s", iter, ptr);
                cr_assert(strstr(det, "centre-line radius of"), "iter %d: %s", iter, det);
            }
        }
        free(body);
        done(&rr);
    }
    fprintf(stderr, "adversarial: %d generated, %d refused (%d lying on themselves)\n", ok, refused,
            overlapping);
    cr_assert_gt(overlapping, 5, "%d refused for overlap", overlapping);
    cr_assert_gt(ok, 20, "%d generated, %d refused", ok, refused);
    cr_assert_gt(refused, 5, "%d generated, %d refused", ok, refused);
}

/* The up-front vertex count is exact at the limit (the cheap |dx| + |dz|
 * bound only skips it far from the limit): the smallest max_vertices that
 * a road parses under is a whole number of sections, one less is a 422. */
Test(req_road, up_front_count_exact_at_the_limit) {
    const char *roads[] = {"{\"points\": [[0,0,0],[60,0,80]]}",                     /* |dx| + |dz| 140, 100 m */
                           "{\"points\": [[0,0,0],[60,0,80],[0,0,160]], \"closed\": true}"};
    for (int k = 0; k < 2; k++) {
        pm_api_limits l = limits();
        uint64_t first = 0;
        for (l.max_vertices = 50; l.max_vertices < 1000 && !first; l.max_vertices++) {
            pm_test_api_run r;
            pm_test_api_parse(&r, &pm_api_gen_road, roads[k], &l);
            if (r.parsed) first = l.max_vertices;
            else cr_assert(pm_test_api_has_error(&r.prob, "/max_segment", "max_vertices"), "%s", roads[k]);
            pm_test_api_done(&r);
        }
        /* 100 m (closed: 360 m) in 5 m chords: 22 (75) sections. */
        uint64_t sections = k ? 75 : 22;
        cr_expect(first > 0 && first % sections == 0, "%s: first accepted at %llu", roads[k],
                  (unsigned long long)first);
    }
}

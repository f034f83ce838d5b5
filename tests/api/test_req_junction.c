/* api/req_junction.c: parsing, defaults, canonical form, every 422 with its
 * JSON pointer, core refusals as 422s naming the arms, the glTF validator
 * on generated junctions, and golden hashes of GLB bytes.
 *
 * Golden hashes: when a deliberate change moves the output, bump the
 * generator's version in api/req_junction.c, run
 *     PM_JUNCTION_GOLDEN=print build/api_test_req_junction --filter 'req_junction/golden*'
 * and paste the printed hashes into `goldens` below. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "junction/junction.h"
#include "pm_api/encode.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"
#include "pm_test_api.h"
#include "pm_test_validator.h"

extern const pm_api_generator pm_api_gen_junction;
#define GEN pm_api_gen_junction

typedef pm_test_api_run run;

static void parse_lim(run *r, const char *text, const pm_api_limits *lim) { pm_test_api_parse(r, &GEN, text, lim); }
static void parse(run *r, const char *text) { pm_test_api_parse(r, &GEN, text, NULL); }
static void done(run *r) { pm_test_api_done(r); }

/* Parses and generates; rc is generate's result. */
static void build(run *r, const char *text) {
    parse(r, text);
    cr_assert_eq(r->rc, 0, "%s: %s", text, r->prob.detail);
    pm_test_api_generate(r, NULL);
}

static bool has_error(const run *r, const char *pointer, const char *word) {
    return pm_test_api_has_error(&r->prob, pointer, word);
}

static void expect_422(const char *body, const char *pointer, const char *word) {
    pm_test_api_expect_422(&GEN, body, NULL, false, pointer, word);
}

#define ARM_X "{\"direction\": [1, 0], \"width\": 7}"
#define ARM_Z "{\"direction\": [0, 1], \"width\": 7}"
#define ARM_NX "{\"direction\": [-1, 0], \"width\": 7}"
#define ARM_NZ "{\"direction\": [0, -1], \"width\": 7}"
#define CROSS "\"arms\": [" ARM_X "," ARM_Z "," ARM_NX "," ARM_NZ "]"

Test(req_junction, identity) {
    cr_assert_str_eq(GEN.name, "junction");
    cr_assert_str_eq(GEN.version, "1.2.0");
    cr_assert_str_eq(GEN.path, "/v1/junctions");
    cr_assert_null(GEN.from_query, "POST only");
    cr_assert_eq(pm_api_find_generator("/v1/junctions"), &GEN);
}

Test(req_junction, defaults_fill_in) {
    run r;
    parse(&r, "{" CROSS "}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    /* The parsed parameters start with pm_junction_params. */
    const pm_junction_params *p = r.params;
    cr_assert_eq(p->narms, 4);
    cr_assert_eq(p->corner_radius, 3);
    cr_assert_eq(p->corner_segments, 4);
    cr_assert_eq(p->uv_scale, 0.1);
    cr_assert_eq(p->snap, 0.001);
    cr_assert_not(p->has_center);
    cr_assert_not(p->has_roundabout);
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(p->arms[i].width, 7);
        cr_assert_eq(p->arms[i].elevation, 0);
        cr_assert_eq(p->arms[i].length, 0);
        cr_assert_not(p->arms[i].has_sidewalk);
        cr_assert_null(p->arms[i].centerline);
    }
    char *c = json_dumps(r.canon, JSON_SORT_KEYS | JSON_COMPACT);
    cr_assert_str_eq(c, "{\"arms\":[{\"direction\":[1.0,0.0],\"elevation\":0.0,\"length\":null,"
                        "\"sidewalk\":null,\"width\":7.0},{\"direction\":[0.0,1.0],\"elevation\":0.0,"
                        "\"length\":null,\"sidewalk\":null,\"width\":7.0},{\"direction\":[-1.0,0.0],"
                        "\"elevation\":0.0,\"length\":null,\"sidewalk\":null,\"width\":7.0},"
                        "{\"direction\":[0.0,-1.0],\"elevation\":0.0,\"length\":null,\"sidewalk\":"
                        "null,\"width\":7.0}],\"center\":null,\"corner_radius\":3.0,"
                        "\"corner_segments\":4,\"roundabout\":null,\"sidewalk\":null,\"snap\":0.001,"
                        "\"uv_scale\":0.10000000000000001}");
    free(c);
    done(&r);
}

/* Equal meaning, equal key: key order, number spelling, stated defaults,
 * direction length, inherited versus stated sidewalks. */
Test(req_junction, canonical_form_gives_one_key) {
    const char *a = "{\"arms\": [{\"direction\": [2, 0], \"width\": 7}, {\"direction\": [0, 3], "
                    "\"width\": 7.0}, {\"direction\": [-1, 0], \"width\": 7}], "
                    "\"sidewalk\": {\"width\": 2}}";
    const char *b = "{\"corner_segments\": 4.0, \"uv_scale\": 1e-1, \"snap\": 0.001, "
                    "\"corner_radius\": 3, \"center\": null, \"roundabout\": null, "
                    "\"sidewalk\": {\"curb_height\": 0.15, \"width\": 2.0}, "
                    "\"arms\": [{\"width\": 7, \"direction\": [1, 0], \"elevation\": 0, "
                    "\"sidewalk\": {\"width\": 2, \"curb_height\": 0.15}}, {\"direction\": [0, 1], "
                    "\"width\": 7, \"length\": null}, {\"direction\": [-5, 0], \"width\": 7}]}";
    run ra, rb;
    parse(&ra, a);
    parse(&rb, b);
    cr_assert_eq(ra.rc, 0, "%s", ra.prob.detail);
    cr_assert_eq(rb.rc, 0, "%s", rb.prob.detail);
    char *ca = json_dumps(ra.canon, JSON_SORT_KEYS), *cb = json_dumps(rb.canon, JSON_SORT_KEYS);
    cr_assert_str_eq(ca, cb);
    free(ca);
    free(cb);
    pm_api_key ka = pm_api_cache_key(&GEN, ra.canon, PM_API_FMT_GLB);
    pm_api_key kb = pm_api_cache_key(&GEN, rb.canon, PM_API_FMT_GLB);
    cr_assert(ka.hi == kb.hi && ka.lo == kb.lo);
    done(&ra);
    done(&rb);
}

Test(req_junction, sidewalk_inheritance_and_override) {
    run r;
    parse(&r, "{\"sidewalk\": {\"width\": 3, \"curb_height\": 0.2}, \"arms\": ["
              ARM_X ", {\"direction\": [0, 1], \"width\": 7, \"sidewalk\": null},"
              "{\"direction\": [-1, 0], \"width\": 7, \"sidewalk\": {\"width\": 1.5}}]}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    const pm_junction_params *p = r.params;
    cr_assert(p->arms[0].has_sidewalk);
    cr_assert_eq(p->arms[0].sidewalk.width, 3);
    cr_assert_not(p->arms[1].has_sidewalk);
    cr_assert(p->arms[2].has_sidewalk);
    cr_assert_eq(p->arms[2].sidewalk.width, 1.5);
    cr_assert_eq(p->arms[2].sidewalk.curb_height, 0.2, "unset members come from the global sidewalk");
    json_t *arms = json_object_get(r.canon, "arms");
    cr_assert_eq(json_real_value(json_object_get(json_object_get(json_array_get(arms, 0), "sidewalk"), "width")), 3);
    cr_assert(json_is_null(json_object_get(json_array_get(arms, 1), "sidewalk")));
    done(&r);
}

Test(req_junction, centerlines_and_elevation_from_3d_points) {
    run r;
    parse(&r, "{\"arms\": [{\"centerline\": [[30, 1.5, 0], [10, 2, 0], [0, 2.5, 0]], \"width\": 7},"
              "{\"centerline\": [[0, 40], [0, 5]], \"width\": 7},"
              "{\"centerline\": [[-40, 9, 0], [-5, 9, 0]], \"width\": 7, \"elevation\": 1}]}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    const pm_junction_params *p = r.params;
    cr_assert_eq(p->arms[0].centerline_len, 3);
    cr_assert_eq(p->arms[0].centerline[4], 0);
    cr_assert_eq(p->arms[0].centerline[5], 0);
    cr_assert_eq(p->arms[0].elevation, 2.5, "the last point's y");
    cr_assert_eq(p->arms[1].elevation, 0);
    cr_assert_eq(p->arms[2].elevation, 1, "an explicit elevation wins");
    json_t *a0 = json_array_get(json_object_get(r.canon, "arms"), 0);
    cr_assert_eq(json_real_value(json_object_get(a0, "elevation")), 2.5);
    done(&r);
}

Test(req_junction, roundabout_defaults) {
    run r;
    parse(&r, "{" CROSS ", \"roundabout\": {}}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    const pm_junction_params *p = r.params;
    cr_assert(p->has_roundabout);
    cr_assert_eq(p->roundabout.radius, 15);
    cr_assert_eq(p->roundabout.island_radius, 8);
    cr_assert_eq(p->roundabout.segments, 32);
    cr_assert_eq(p->roundabout.island_height, 0.15);
    done(&r);
}

/* ---- 422s, each with its pointer ------------------------------------------------- */

Test(req_junction, invalid_arms) {
    expect_422("{}", "/arms", "required");
    expect_422("{\"arms\": [" ARM_X "]}", "/arms", "at least 2");
    expect_422("{\"arms\": 3}", "/arms", "array");
    expect_422("{\"arms\": [" ARM_X ", 5]}", "/arms/1", "object");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1]}]}", "/arms/1/width", "required");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1], \"width\": 0}]}", "/arms/1/width", "> 0");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1], \"width\": -2}]}", "/arms/1/width", "> 0");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1], \"width\": 1001}]}", "/arms/1/width", "1000");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1], \"width\": \"7\"}]}", "/arms/1/width", "number");
    expect_422("{\"arms\": [" ARM_X ", {\"width\": 7}]}", "/arms/1", "direction or a centerline");
    expect_422("{\"arms\": [" ARM_X ", {\"width\": 7, \"direction\": [0, 1], \"centerline\": "
               "[[0, 9], [0, 1]]}]}", "/arms/1", "not both");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 0], \"width\": 7}]}", "/arms/1/direction", "[0, 0]");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1, 2], \"width\": 7}]}", "/arms/1/direction", NULL);
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1], \"width\": 7, \"elevation\": 1e5}]}",
               "/arms/1/elevation", "10000");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1], \"width\": 7, \"lanes\": 2}]}",
               "/arms/1/lanes", "unknown field");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1], \"width\": 7, \"length\": 0}]}",
               "/arms/1/length", "> 0");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1], \"width\": 7, \"sidewalk\": 3}]}",
               "/arms/1/sidewalk", "object or null");
    expect_422("{\"arms\": [" ARM_X ", {\"direction\": [0, 1], \"width\": 7, \"sidewalk\": "
               "{\"width\": 0}}]}", "/arms/1/sidewalk/width", "> 0");
}

Test(req_junction, invalid_centerlines) {
    expect_422("{\"arms\": [" ARM_X ", {\"centerline\": [[0, 1]], \"width\": 7}]}",
               "/arms/1/centerline", "at least 2");
    expect_422("{\"arms\": [" ARM_X ", {\"centerline\": [[0, 9], [0, 1, 2, 3]], \"width\": 7}]}",
               "/arms/1/centerline/1", NULL);
    expect_422("{\"arms\": [" ARM_X ", {\"centerline\": [[0, 9], [1]], \"width\": 7}]}",
               "/arms/1/centerline/1", NULL);
    expect_422("{\"arms\": [" ARM_X ", {\"centerline\": [[0, 9], [0, 1], [0, 1]], \"width\": 7}]}",
               "/arms/1/centerline", "last two points");
    expect_422("{\"arms\": [" ARM_X ", {\"centerline\": [[0, 9], [0, 1]], \"width\": 7, "
               "\"length\": 5}]}", "/arms/1/length", "centerline");
    expect_422("{\"arms\": [" ARM_X ", {\"centerline\": [[0, 9], [0, 2e5]], \"width\": 7}]}",
               "/arms/1/centerline/1/1", "100000");
}

Test(req_junction, invalid_options) {
    expect_422("{" CROSS ", \"corner_radius\": -1}", "/corner_radius", ">= 0");
    expect_422("{" CROSS ", \"corner_segments\": 1}", "/corner_segments", ">= 2");
    expect_422("{" CROSS ", \"corner_segments\": 65}", "/corner_segments", "<= 64");
    expect_422("{" CROSS ", \"corner_segments\": 2.5}", "/corner_segments", "integer");
    expect_422("{" CROSS ", \"uv_scale\": 0}", "/uv_scale", "> 0");
    expect_422("{" CROSS ", \"snap\": 0}", "/snap", ">=");
    expect_422("{" CROSS ", \"snap\": 2}", "/snap", "<= 1");
    expect_422("{" CROSS ", \"center\": [1]}", "/center", NULL);
    expect_422("{" CROSS ", \"center\": \"middle\"}", "/center", NULL);
    expect_422("{" CROSS ", \"colour\": \"red\"}", "/colour", "unknown field");
    expect_422("{" CROSS ", \"sidewalk\": {\"width\": 0}}", "/sidewalk/width", "> 0");
    expect_422("{" CROSS ", \"sidewalk\": {\"curb_height\": 3}}", "/sidewalk/curb_height", "<= 2");
    expect_422("{" CROSS ", \"sidewalk\": {\"kerb\": 3}}", "/sidewalk/kerb", "unknown field");
    expect_422("{" CROSS ", \"roundabout\": {\"radius\": 10, \"island_radius\": 10}}",
               "/roundabout/island_radius", "less than radius");
    expect_422("{" CROSS ", \"roundabout\": {\"segments\": 7}}", "/roundabout/segments", ">= 8");
    expect_422("{" CROSS ", \"roundabout\": {\"radius\": 20, \"island_radius\": 19, "
               "\"segments\": 8}}", "/roundabout/island_radius", "chords");
    expect_422("{" CROSS ", \"roundabout\": {\"radius\": 0}}", "/roundabout/radius", "> 0");
    expect_422("{" CROSS ", \"roundabout\": {\"radius\": 3, \"island_radius\": 1}}", "/arms/0/width",
               "diameter");
    expect_422("{" CROSS ", \"roundabout\": 5}", "/roundabout", "object or null");
}

/* Sizes below a few snap steps would collapse when snapped. */
Test(req_junction, invalid_against_snap) {
    expect_422("{\"snap\": 1, " CROSS "}", "/arms/0/width", "snap");
    expect_422("{\"snap\": 0.1, " CROSS ", \"sidewalk\": {\"width\": 2, \"curb_height\": 0.15}}",
               "/arms/0/sidewalk", "snap");
    expect_422("{\"snap\": 0.1, " CROSS ", \"roundabout\": {\"radius\": 15, \"island_radius\": 14.5}}",
               "/roundabout/island_radius", "snap");
}

Test(req_junction, every_error_at_once) {
    run r;
    parse(&r, "{\"arms\": [{\"width\": -1, \"direction\": [1, 0]}, {\"width\": 5}], "
              "\"corner_segments\": 0, \"snap\": -1, \"typo\": 1}");
    cr_assert_eq(r.rc, -1);
    cr_assert(has_error(&r, "/arms/0/width", NULL));
    cr_assert(has_error(&r, "/arms/1", NULL));
    cr_assert(has_error(&r, "/corner_segments", NULL));
    cr_assert(has_error(&r, "/snap", NULL));
    cr_assert(has_error(&r, "/typo", NULL));
    done(&r);
}

Test(req_junction, arm_limit_names_the_limit) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    lim.max_arms = 3;
    run r;
    parse_lim(&r, "{" CROSS "}", &lim);
    cr_assert_eq(r.rc, -1);
    cr_assert(has_error(&r, "/arms", "max_arms"));
    done(&r);
}

/* ---- core refusals ---------------------------------------------------------------- */

static void expect_generate_422(const char *body, const char *p0, const char *p1) {
    run r;
    build(&r, body);
    cr_assert_eq(r.rc, -1, "%s should be refused", body);
    pm_test_api_assert_422(&r, body, p0, NULL);
    if (p1) pm_test_api_assert_422(&r, body, p1, NULL);
    done(&r);
}

Test(req_junction, geometry_refusals_name_arms) {
    expect_generate_422("{\"arms\": [" ARM_X ", {\"direction\": [0.999986, 0.005236], \"width\": 7}, "
                        ARM_NX "]}", "/arms/0", "/arms/1");
    expect_generate_422("{\"arms\": [{\"direction\": [1, 0], \"width\": 8, \"length\": 2}, "
                        "{\"direction\": [0, 1], \"width\": 8}]}", "/arms/0", "/arms/1");
    expect_generate_422("{\"arms\": [{\"direction\": [1, 0], \"width\": 10}, "
                        "{\"direction\": [0.94, -0.342], \"width\": 10}, " ARM_NX "], "
                        "\"roundabout\": {\"radius\": 12, \"island_radius\": 6}}", "/arms/0", "/roundabout");
}

/* ---- outputs ---------------------------------------------------------------------- */

static const char *const validated[] = {
    "{" CROSS "}",
    "{\"arms\": [" ARM_X "," ARM_Z "," ARM_NX "]}",
    "{" CROSS ", \"roundabout\": {\"radius\": 16, \"island_radius\": 8}}",
    "{" CROSS ", \"sidewalk\": {\"width\": 2, \"curb_height\": 0.15}}",
    "{" CROSS ", \"sidewalk\": {\"width\": 2.5}, \"roundabout\": {\"radius\": 18}, "
    "\"corner_radius\": 5}",
    "{\"arms\": [{\"centerline\": [[30, 1, 3], [0, 0, 0]], \"width\": 8}, "
    "{\"centerline\": [[0, 2, 30], [0, 0.5, 0]], \"width\": 6}, "
    "{\"direction\": [-1, -0.3], \"width\": 10, \"elevation\": -1}], "
    "\"sidewalk\": {\"width\": 2}}",
    /* Sloped with sidewalks: refined asphalt, closed slabs. */
    "{\"arms\": [{\"direction\": [1, 0], \"width\": 8}, {\"direction\": [0, 1], \"width\": 7, "
    "\"elevation\": 3}, {\"direction\": [-1, 0], \"width\": 8, \"elevation\": 0.5}, "
    "{\"direction\": [0, -1], \"width\": 7, \"elevation\": -2}], "
    "\"sidewalk\": {\"width\": 2.5, \"curb_height\": 0.15}, \"corner_radius\": 5}",
    "{\"arms\": [{\"direction\": [1, 0], \"width\": 8}, {\"direction\": [0, 1], \"width\": 7, "
    "\"elevation\": 2.5}, {\"direction\": [-1, 0], \"width\": 8, \"elevation\": -1}], "
    "\"sidewalk\": {\"width\": 2, \"curb_height\": 0.15}, \"corner_radius\": 6}",
    "{\"arms\": [{\"direction\": [1, 0], \"width\": 8, \"elevation\": 1.5}, {\"direction\": [0, 1], "
    "\"width\": 7}, {\"direction\": [-1, 0.1], \"width\": 8, \"elevation\": -1}, "
    "{\"direction\": [0, -1], \"width\": 7, \"elevation\": 0.4}], \"roundabout\": {\"radius\": 16, "
    "\"island_radius\": 8}, \"corner_radius\": 5, \"sidewalk\": {\"width\": 2.5}}",
};

Test(req_junction, outputs_pass_the_gltf_validator, .timeout = 300) {
    for (size_t i = 0; i < sizeof validated / sizeof *validated; i++) {
        run r;
        build(&r, validated[i]);
        cr_assert_eq(r.rc, 0, "%s: %s", validated[i], r.prob.detail);
        cr_assert_eq(pm_test_validate_scene(r.scene, &GEN), 0, "%s", validated[i]);
        done(&r);
    }
}

Test(req_junction, json_mesh_carries_metadata) {
    run r;
    build(&r, "{" CROSS ", \"sidewalk\": {\"width\": 2}}");
    cr_assert_eq(r.rc, 0);
    pm_api_buf out;
    cr_assert_eq(pm_api_encode(r.scene, &GEN, "0123456789abcdef0123456789abcdef", PM_API_FMT_JSON, &out), 0);
    json_error_t err;
    json_t *doc = json_loadb((const char *)out.data, out.len, 0, &err);
    free(out.data);
    cr_assert_not_null(doc, "%s", err.text);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "generator")), "junction");
    json_t *meshes = json_object_get(doc, "meshes");
    cr_assert_eq(json_array_size(meshes), 3);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(meshes, 0), "name")), "asphalt");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(meshes, 1), "name")), "curb");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(meshes, 2), "name")), "sidewalk");
    json_t *meta = json_object_get(doc, "metadata");
    json_t *arms = json_object_get(meta, "arms");
    cr_assert_eq(json_array_size(arms), 4);
    json_t *mouth = json_object_get(json_array_get(arms, 0), "mouth");
    cr_assert_eq(json_array_size(json_object_get(mouth, "left")), 3);
    cr_assert(json_is_integer(json_object_get(mouth, "left_index")));
    cr_assert_eq(json_array_size(json_object_get(meta, "corners")), 4);
    cr_assert(json_is_array(json_object_get(meta, "warnings")));
    cr_assert(json_is_array(json_object_get(meta, "contour")));
    cr_assert_eq(json_array_size(json_object_get(meta, "center")), 2);
    json_decref(doc);
    done(&r);
}

Test(req_junction, warnings_reach_the_metadata) {
    run r;
    build(&r, "{\"corner_radius\": 10, \"arms\": [{\"direction\": [1, 0], \"width\": 8, "
              "\"length\": 8}, {\"direction\": [0, -1], \"width\": 8}, {\"direction\": [-1, 0], "
              "\"width\": 8}]}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    const pm_meta *w = pm_meta_get(r.scene->meta, "warnings");
    cr_assert_eq(w->u.kids.count, 1);
    cr_assert_str_eq(pm_meta_get(w->u.kids.first, "code")->u.s, "corner_radius_reduced");
    done(&r);
}

/* ---- golden hashes of GLB bytes ----------------------------------------------------- */

static const pm_test_golden goldens[] = {
    {"cross", "{" CROSS "}", 0x3315016958035c0full},
    {"tee_sidewalks", "{\"arms\": [" ARM_X "," ARM_Z "," ARM_NX "], \"sidewalk\": {\"width\": 2}}",
     0x719f998c8096bc31ull},
    {"five_sloped", "{\"arms\": [{\"direction\": [1, 0.2], \"width\": 8, \"elevation\": 1}, "
                    "{\"direction\": [0.3, 1], \"width\": 6}, {\"direction\": [-1, 0.5], \"width\": 7, "
                    "\"elevation\": -0.5}, {\"direction\": [-0.6, -1], \"width\": 9}, "
                    "{\"direction\": [0.7, -0.8], \"width\": 5, \"elevation\": 2}], "
                    "\"corner_radius\": 4, \"corner_segments\": 6}", 0xc0aea36eec4b86ebull},
    {"roundabout", "{" CROSS ", \"roundabout\": {\"radius\": 16, \"island_radius\": 8}, "
                   "\"sidewalk\": {\"width\": 2.5}}", 0x29f2e7c7c38f6293ull},
};

Test(req_junction, golden_glb_hashes) {
    pm_test_api_check_goldens(&GEN, goldens, sizeof goldens / sizeof *goldens, "PM_JUNCTION_GOLDEN");
}

/* ---- golden hashes of the output without version and key ----------------------------- */

/* The JSON mesh with "version" and "key" removed, dumped with sorted keys:
 * every coordinate, index, UV and metadata value, but not the version
 * string, so a version bump alone does not move it (the GLB goldens above
 * embed both). The flat cases' asphalt hashes date from 1.0.0: refining
 * sloped junctions (1.1.0) left flat ones byte for byte as they were. */
static uint64_t doc_hash(const json_t *doc) {
    char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    uint64_t h = XXH3_64bits(text, strlen(text));
    free(text);
    return h;
}

/* Sets out[0] to the hash of the whole output, out[1] to that of the
 * asphalt and the metadata alone (what the heights may move, not the
 * sidewalks). */
static void geometry_hash(const char *body, uint64_t out_h[2]) {
    run r;
    build(&r, body);
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    pm_api_buf out;
    cr_assert_eq(pm_api_encode(r.scene, &GEN, "-", PM_API_FMT_JSON, &out), 0);
    json_error_t err;
    json_t *doc = json_loadb((const char *)out.data, out.len, 0, &err);
    free(out.data);
    cr_assert_not_null(doc, "%s", err.text);
    json_object_del(doc, "version");
    json_object_del(doc, "key");
    out_h[0] = doc_hash(doc);
    json_t *meshes = json_object_get(doc, "meshes");
    for (size_t i = json_array_size(meshes); i-- > 0;)
        if (strcmp(json_string_value(json_object_get(json_array_get(meshes, i), "name")), "asphalt"))
            json_array_remove(meshes, i);
    json_object_del(doc, "stats");
    out_h[1] = doc_hash(doc);
    json_decref(doc);
    done(&r);
}

typedef struct geo_golden { const char *name, *body; uint64_t hash, asphalt; } geo_golden;

static const geo_golden geo_goldens[] = {
    {"cross", "{" CROSS "}", 0xafe87227b58d5770ull, 0xd99cefec62a52c48ull},
    {"cross_sidewalks", "{" CROSS ", \"sidewalk\": {\"width\": 2.5, \"curb_height\": 0.15}, "
                        "\"corner_radius\": 5}", 0xf68cfc0af8abbb3dull, 0xa8ef7b06507aee37ull},
    {"tee_sidewalks", "{\"arms\": [" ARM_X "," ARM_Z "," ARM_NX "], \"sidewalk\": {\"width\": 2}}", 0x54f2ff45d2ef3adbull, 0x7d8f3bf3b2faa6eaull},
    {"five_level", "{\"arms\": [{\"direction\": [1, 0.2], \"width\": 8, \"elevation\": 1}, "
                   "{\"direction\": [0.3, 1], \"width\": 6, \"elevation\": 1}, {\"direction\": [-1, 0.5], "
                   "\"width\": 7, \"elevation\": 1}, {\"direction\": [-0.6, -1], \"width\": 9, "
                   "\"elevation\": 1}], \"corner_radius\": 4, \"corner_segments\": 6, "
                   "\"sidewalk\": {\"width\": 3, \"curb_height\": 0.2}}", 0x3824586a81a04070ull, 0x0c94df5357a084e4ull},
    {"roundabout", "{" CROSS ", \"roundabout\": {\"radius\": 16, \"island_radius\": 8}, "
                   "\"sidewalk\": {\"width\": 2.5}}", 0xa5b4ca0773917e9eull, 0x5cb9685a1c37be61ull},
    /* Sloped: refined asphalt and island top, densified curb runs. */
    {"roundabout_sloped", "{\"arms\": [{\"direction\": [1, 0], \"width\": 8, \"elevation\": 1.5}, "
                          "{\"direction\": [0, 1], \"width\": 7}, {\"direction\": [-1, 0.1], "
                          "\"width\": 8, \"elevation\": -1}, {\"direction\": [0, -1], \"width\": 7, "
                          "\"elevation\": 0.4}], \"roundabout\": {\"radius\": 16, \"island_radius\": 8}, "
                          "\"corner_radius\": 5, \"sidewalk\": {\"width\": 2.5}}", 0xabe2f04a3da72f1aull, 0xe8b867ac24ff171dull},
    {"cross_sloped", "{\"arms\": [{\"direction\": [1, 0], \"width\": 8}, {\"direction\": [0, 1], "
                     "\"width\": 7, \"elevation\": 3}, {\"direction\": [-1, 0], \"width\": 8, "
                     "\"elevation\": 0.5}, {\"direction\": [0, -1], \"width\": 7, \"elevation\": -2}], "
                     "\"sidewalk\": {\"width\": 2.5, \"curb_height\": 0.15}, \"corner_radius\": 5}", 0x733c7a121c7c7d84ull, 0x6062e5ce878f2515ull},
};

Test(req_junction, golden_geometry_hashes) {
    bool print = getenv("PM_JUNCTION_GOLDEN") && strcmp(getenv("PM_JUNCTION_GOLDEN"), "print") == 0;
    for (size_t i = 0; i < sizeof geo_goldens / sizeof *geo_goldens; i++) {
        uint64_t h[2];
        geometry_hash(geo_goldens[i].body, h);
        if (print) {
            fprintf(stderr, "geometry %s: 0x%016llxull, 0x%016llxull\n", geo_goldens[i].name,
                    (unsigned long long)h[0], (unsigned long long)h[1]);
            continue;
        }
        cr_assert_eq(h[1], geo_goldens[i].asphalt, "%s: asphalt hash 0x%016llx, golden 0x%016llx",
                     geo_goldens[i].name, (unsigned long long)h[1],
                     (unsigned long long)geo_goldens[i].asphalt);
        cr_assert_eq(h[0], geo_goldens[i].hash, "%s: output hash 0x%016llx, golden 0x%016llx (see "
                     "the top of this file)", geo_goldens[i].name, (unsigned long long)h[0],
                     (unsigned long long)geo_goldens[i].hash);
    }
}

/* api/req_dungeon.c: parsing, defaults, canonical form, 422s with pointers,
 * GET query documents, and the glTF validator on generated dungeons. */
#include <criterion/criterion.h>
#include <string.h>

#include "dungeon/dungeon.h"
#include "pm_api/generator.h"
#include "pm_api/key.h"
#include "pm_api/reader.h"
#include "pm_test_api.h"
#include "pm_test_validator.h"

extern const pm_api_generator pm_api_gen_dungeon;

typedef pm_test_api_run run;

static void parse(run *r, const char *text) { pm_test_api_parse(r, &pm_api_gen_dungeon, text, NULL); }
static void done(run *r) { pm_test_api_done(r); }

static void expect_422(const char *body, const char *pointer, const char *word) {
    pm_test_api_expect_422(&pm_api_gen_dungeon, body, NULL, false, pointer, word);
}

Test(req_dungeon, identity) {
    cr_assert_str_eq(pm_api_gen_dungeon.name, "dungeon");
    cr_assert_str_eq(pm_api_gen_dungeon.version, "1.0.0");
    cr_assert_str_eq(pm_api_gen_dungeon.path, "/v1/dungeons");
    cr_assert_eq(pm_api_find_generator("/v1/dungeons"), &pm_api_gen_dungeon);
}

Test(req_dungeon, defaults_fill_in) {
    run r;
    parse(&r, "{\"seed\": 7}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    const pm_dungeon_params *p = r.params;
    cr_assert_eq(p->seed, 7);
    cr_assert_null(p->rooms);
    cr_assert_eq(p->gen.count, 12);
    cr_assert_eq(p->gen.extent_w, 64);
    cr_assert_eq(p->gen.floors, 1);
    cr_assert_float_eq(p->branch_probability, 0.2, 1e-12);
    cr_assert_float_eq(p->dead_end_probability, 0.5, 1e-12);
    cr_assert_float_eq(p->dead_end_extend_probability, 0.6, 1e-12);
    cr_assert_float_eq(p->loop_probability, 0.0, 1e-12);
    cr_assert_eq(p->obstacles, PM_DUNGEON_DETOUR);
    cr_assert_float_eq(p->cell_size, 1.0, 1e-12);
    cr_assert_float_eq(p->wall_height, 3.0, 1e-12);
    cr_assert_float_eq(p->floor_height, 4.0, 1e-12);
    /* Canonical: every field explicit. */
    cr_assert(json_is_null(json_object_get(r.canon, "rooms")));
    json_t *g = json_object_get(r.canon, "generate");
    cr_assert(json_is_object(g));
    cr_assert_eq(json_integer_value(json_object_get(g, "count")), 12);
    cr_assert_str_eq(json_string_value(json_object_get(r.canon, "obstacles")), "detour");
    done(&r);
}

Test(req_dungeon, same_request_same_key) {
    run a, b;
    parse(&a, "{\"seed\": 7, \"generate\": {\"count\": 12}, \"obstacles\": \"detour\"}");
    parse(&b, "{\"obstacles\":\"detour\",\"generate\":{\"extent\":[64,64.0]},\"seed\":7.0}");
    cr_assert_eq(a.rc, 0);
    cr_assert_eq(b.rc, 0, "%s", b.prob.detail);
    pm_api_key ka = pm_api_cache_key(&pm_api_gen_dungeon, a.canon, PM_API_FMT_GLB);
    pm_api_key kb = pm_api_cache_key(&pm_api_gen_dungeon, b.canon, PM_API_FMT_GLB);
    cr_assert(ka.hi == kb.hi && ka.lo == kb.lo, "defaults stated or not: one key");
    done(&a);
    done(&b);
}

Test(req_dungeon, explicit_rooms) {
    run r;
    parse(&r, "{\"seed\": 1, \"rooms\": [{\"x\":0,\"z\":0,\"w\":5,\"d\":5},"
              "{\"x\":10,\"z\":0,\"w\":6,\"d\":4,\"floor\":1}], \"obstacles\": \"break\"}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    const pm_dungeon_params *p = r.params;
    cr_assert_eq(p->nrooms, 2);
    cr_assert_eq(p->rooms[1].x, 10);
    cr_assert_eq(p->rooms[1].floor, 1);
    cr_assert_eq(p->obstacles, PM_DUNGEON_BREAK);
    cr_assert(json_is_null(json_object_get(r.canon, "generate")));
    done(&r);
}

Test(req_dungeon, bad_input_names_the_field) {
    expect_422("{}", "/seed", "required");
    expect_422("{\"seed\": -1}", "/seed", NULL);
    expect_422("{\"seed\": 1, \"branch_probability\": 1.5}", "/branch_probability", NULL);
    expect_422("{\"seed\": 1, \"dead_end_probability\": -0.1}", "/dead_end_probability", NULL);
    expect_422("{\"seed\": 1, \"dead_end_extend_probability\": 2}", "/dead_end_extend_probability", NULL);
    expect_422("{\"seed\": 1, \"loops\": 3}", "/loops", NULL);
    expect_422("{\"seed\": 1, \"obstacles\": \"smash\"}", "/obstacles", NULL);
    expect_422("{\"seed\": 1, \"cell_size\": 0}", "/cell_size", NULL);
    expect_422("{\"seed\": 1, \"wall_height\": -3}", "/wall_height", NULL);
    expect_422("{\"seed\": 1, \"floor_height\": 0}", "/floor_height", NULL);
    expect_422("{\"seed\": 1, \"colour\": \"red\"}", "/colour", "unknown");
    expect_422("{\"seed\": 1, \"generate\": {\"count\": 501}}", "/generate/count", "max_rooms");
    expect_422("{\"seed\": 1, \"generate\": {\"extent\": [2000, 10]}}", "/generate/extent/0", NULL);
    expect_422("{\"seed\": 1, \"generate\": {\"extent\": [10.5, 10]}}", "/generate/extent/0", "integer");
    expect_422("{\"seed\": 1, \"generate\": {\"extent\": [1024, 1024], \"floors\": 8}}", "/generate/extent", "cells");
    expect_422("{\"seed\": 1, \"generate\": {\"min_size\": 9, \"max_size\": 5}}", "/generate/max_size", NULL);
    expect_422("{\"seed\": 1, \"generate\": {\"min_size\": 2}}", "/generate/min_size", NULL);
    expect_422("{\"seed\": 1, \"generate\": {\"spacing\": 0}}", "/generate/spacing", NULL);
    expect_422("{\"seed\": 1, \"generate\": {\"floors\": 0}}", "/generate/floors", NULL);
    expect_422("{\"seed\": 1, \"rooms\": []}", "/rooms", NULL);
    expect_422("{\"seed\": 1, \"rooms\": [{\"x\":0,\"z\":0,\"w\":2,\"d\":5}]}", "/rooms/0/w", NULL);
    expect_422("{\"seed\": 1, \"rooms\": [{\"x\":0,\"z\":0,\"w\":5}]}", "/rooms/0/d", "required");
    expect_422("{\"seed\": 1, \"rooms\": [{\"x\":0,\"z\":0,\"w\":5,\"d\":5}], \"generate\": {}}", "/generate", NULL);
}

Test(req_dungeon, overlapping_rooms_name_both) {
    const char *body = "{\"seed\": 1, \"rooms\": [{\"x\":0,\"z\":0,\"w\":5,\"d\":5},"
                       "{\"x\":20,\"z\":0,\"w\":5,\"d\":5},{\"x\":4,\"z\":4,\"w\":5,\"d\":5}]}";
    expect_422(body, "/rooms/2", "/rooms/0");
    expect_422(body, "/rooms/0", "/rooms/2");
    /* Same cells on different floors do not overlap. */
    run r;
    parse(&r, "{\"seed\": 1, \"rooms\": [{\"x\":0,\"z\":0,\"w\":5,\"d\":5},{\"x\":0,\"z\":0,\"w\":5,\"d\":5,\"floor\":1}]}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    done(&r);
}

Test(req_dungeon, impossible_packing_is_422) {
    expect_422("{\"seed\": 1, \"generate\": {\"count\": 400, \"extent\": [40, 40]}}", "/generate/count",
               "cannot be placed");
}

Test(req_dungeon, walled_in_room_is_422_naming_rooms) {
    run r;
    parse(&r, "{\"seed\": 1, \"rooms\": [{\"x\":5,\"z\":5,\"w\":3,\"d\":3},{\"x\":3,\"z\":2,\"w\":4,\"d\":3},"
              "{\"x\":8,\"z\":3,\"w\":3,\"d\":4},{\"x\":6,\"z\":8,\"w\":4,\"d\":3},{\"x\":2,\"z\":6,\"w\":3,\"d\":4}]}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    pm_test_api_generate(&r, NULL);
    cr_assert_eq(r.rc, -1);
    cr_assert_eq(r.prob.status, 422);
    cr_assert(pm_test_api_has_error(&r.prob, "/rooms/0", "wall"), "%s", r.prob.detail);
    done(&r);
}

Test(req_dungeon, query_document) {
    pm_api_query_pair q[] = {{"seed", "42"}, {"count", "20"}, {"floors", "2"}, {"extent", "80x60"},
                             {"obstacles", "break"}};
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    json_t *doc = pm_api_gen_dungeon.from_query(q, 5, &prob);
    cr_assert_not_null(doc, "%s", prob.detail);
    json_t *g = json_object_get(doc, "generate");
    cr_assert_eq(json_integer_value(json_object_get(g, "count")), 20);
    cr_assert_eq(json_integer_value(json_object_get(g, "floors")), 2);
    cr_assert_float_eq(json_number_value(json_array_get(json_object_get(g, "extent"), 0)), 80, 1e-12);
    cr_assert_float_eq(json_number_value(json_array_get(json_object_get(g, "extent"), 1)), 60, 1e-12);
    cr_assert_null(json_object_get(doc, "count"));
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_arena *a = pm_arena_create(0);
    void *params;
    json_t *canon;
    cr_assert_eq(pm_api_gen_dungeon.parse(doc, &lim, a, &params, &canon, &prob), 0, "%s", prob.detail);
    const pm_dungeon_params *p = params;
    cr_assert_eq(p->gen.extent_w, 80);
    cr_assert_eq(p->gen.extent_d, 60);
    cr_assert_eq(p->obstacles, PM_DUNGEON_BREAK);
    json_decref(canon);
    json_decref(doc);
    pm_arena_destroy(a);
    pm_api_problem_free(&prob);
    /* Shapes are checked by the query reader, pointers name the parameter. */
    pm_api_query_pair bad[] = {{"seed", "1"}, {"extent", "80by60"}};
    pm_api_problem_init(&prob);
    cr_assert_null(pm_api_gen_dungeon.from_query(bad, 2, &prob));
    cr_assert_eq(prob.status, 422);
    cr_assert(pm_test_api_has_error(&prob, "/extent", NULL), "%s", prob.detail);
    pm_api_problem_free(&prob);
}

static void validate(const char *body, int min_floors) {
    run r;
    parse(&r, body);
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    pm_test_api_generate(&r, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    const pm_scene *s = r.scene;
    pm_meta *rooms = pm_meta_get(s->meta, "rooms");
    cr_assert_not_null(rooms);
    int32_t top = 0;
    for (pm_meta *m = rooms->u.kids.first; m; m = m->next) {
        int64_t f = pm_meta_get(m, "floor")->u.i;
        top = f > top ? (int32_t)f : top;
    }
    cr_assert_geq(top + 1, min_floors);
    for (const char *k = "edges"; k; k = strcmp(k, "edges") == 0 ? "main_path" : strcmp(k, "main_path") == 0 ? "corridors" : strcmp(k, "corridors") == 0 ? "shafts" : NULL)
        cr_assert_not_null(pm_meta_get(s->meta, k), "metadata %s", k);
    cr_assert_eq(pm_test_validate_scene(s, &pm_api_gen_dungeon), 0, "validator on %s", body);
    done(&r);
}

Test(req_dungeon, gltf_validator_one_floor) {
    validate("{\"seed\": 3, \"generate\": {\"count\": 25, \"extent\": [80, 80]}}", 1);
}

Test(req_dungeon, gltf_validator_three_floors) {
    validate("{\"seed\": 11, \"generate\": {\"count\": 40, \"extent\": [70, 70], \"floors\": 3}, \"loops\": 0.2}", 3);
}

Test(req_dungeon, gltf_validator_break_and_rooms) {
    validate("{\"seed\": 5, \"obstacles\": \"break\", \"cell_size\": 2, \"rooms\": [{\"x\":0,\"z\":0,\"w\":5,\"d\":5},"
             "{\"x\":14,\"z\":0,\"w\":5,\"d\":5},{\"x\":7,\"z\":-0,\"w\":5,\"d\":40},{\"x\":3,\"z\":3,\"w\":6,\"d\":6,\"floor\":2}]}",
             3);
}

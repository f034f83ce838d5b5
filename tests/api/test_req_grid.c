#include <criterion/criterion.h>
#include <string.h>

#include "grid/grid.h"
#include "pm_api/generator.h"
#include "pm_api/reader.h"
#include "pm_test_api.h"
#include "pm_test_validator.h"

extern const pm_api_generator pm_api_gen_grid;

typedef pm_test_api_run parsed;

static parsed parse_with(const char *text, const pm_api_limits *lim) {
    parsed r;
    pm_test_api_parse(&r, &pm_api_gen_grid, text, lim);
    return r;
}

static parsed parse(const char *text) { return parse_with(text, NULL); }
static void done(parsed *r) { pm_test_api_done(r); }
static const pm_grid_params *gp(const parsed *r) { return r->params; }
static const char *msg_at(const pm_api_problem *p, const char *pointer) { return pm_test_api_msg_at(p, pointer); }

/* A 422 whose error at pointer contains the text. */
static void expect_422(const char *body, const char *pointer, const char *text) {
    pm_test_api_expect_422(&pm_api_gen_grid, body, NULL, false, pointer, text);
}

static const char canon_defaults[] =
    "{\"merge\":1.0,\"merge_max_angle\":135.0,\"merge_min_angle\":45.0,\"points\":\"lattice\","
    "\"relax\":{\"iterations\":40,\"lock_boundary\":true,\"mode\":\"square\",\"strength\":0.5},"
    "\"seed\":0,\"shape\":\"hexagon\",\"size\":8,\"spacing\":1.0}";

Test(req_grid, defaults_and_canonical_form) {
    parsed r = parse("{}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    pm_grid_params d;
    pm_grid_defaults(&d);
    cr_expect(memcmp(gp(&r), &d, sizeof d) == 0);
    cr_expect_str_eq(r.canon_text, canon_defaults);
    done(&r);
    /* Explicit defaults, another key order and number spellings: same form. */
    r = parse("{\"spacing\":1,\"relax\":{\"strength\":5e-1,\"mode\":\"square\"},\"size\":8.0,"
              "\"shape\":\"hexagon\",\"seed\":\"0\",\"merge\":1}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    cr_expect_str_eq(r.canon_text, canon_defaults);
    done(&r);
}

Test(req_grid, every_field_read) {
    parsed r = parse("{\"seed\":\"18446744073709551615\",\"size\":5,\"shape\":\"disk\","
                     "\"points\":\"poisson\",\"spacing\":2.5,\"merge\":0.25,"
                     "\"merge_min_angle\":30,\"merge_max_angle\":150,"
                     "\"relax\":{\"mode\":\"laplacian\",\"iterations\":7,\"strength\":1,"
                     "\"lock_boundary\":false}}");
    cr_assert_eq(r.rc, 0, "%s", r.prob.detail);
    cr_expect_eq(gp(&r)->seed, UINT64_MAX);
    cr_expect_eq(gp(&r)->size, 5);
    cr_expect_eq(gp(&r)->shape, PM_GRID_DISK);
    cr_expect_eq(gp(&r)->points, PM_GRID_POISSON);
    cr_expect_eq(gp(&r)->spacing, 2.5);
    cr_expect_eq(gp(&r)->merge, 0.25);
    cr_expect_eq(gp(&r)->merge_min_angle, 30);
    cr_expect_eq(gp(&r)->merge_max_angle, 150);
    cr_expect_eq(gp(&r)->relax.mode, PM_GRID_RELAX_LAPLACIAN);
    cr_expect_eq(gp(&r)->relax.iterations, 7);
    cr_expect_eq(gp(&r)->relax.strength, 1);
    cr_expect(!gp(&r)->relax.lock_boundary);
    done(&r);
}

Test(req_grid, invalid_fields_are_422_with_pointers) {
    expect_422("{\"size\":0}", "/size", ">= 1");
    expect_422("{\"size\":65}", "/size", "max_grid_size");
    expect_422("{\"size\":2.5}", "/size", "integer");
    expect_422("{\"shape\":\"triangle\"}", "/shape", "hexagon");
    expect_422("{\"points\":\"random\"}", "/points", "poisson");
    expect_422("{\"spacing\":0}", "/spacing", "0.001");
    expect_422("{\"spacing\":-1}", "/spacing", "0.001");
    expect_422("{\"spacing\":\"1\"}", "/spacing", "number");
    expect_422("{\"merge\":1.5}", "/merge", "1");
    expect_422("{\"merge_min_angle\":-1}", "/merge_min_angle", "0");
    expect_422("{\"merge_max_angle\":181}", "/merge_max_angle", "180");
    expect_422("{\"merge_min_angle\":100,\"merge_max_angle\":90}", "/merge_max_angle",
               "greater than merge_min_angle");
    expect_422("{\"relax\":{\"iterations\":1001}}", "/relax/iterations", "1000");
    expect_422("{\"relax\":{\"strength\":0}}", "/relax/strength", "");
    expect_422("{\"relax\":{\"mode\":\"smooth\"}}", "/relax/mode", "laplacian");
    expect_422("{\"relax\":{\"lock_boundary\":1}}", "/relax/lock_boundary", "");
    expect_422("{\"relax\":{\"colour\":1}}", "/relax/colour", "unknown field");
    expect_422("{\"sise\":8}", "/sise", "unknown field");
    expect_422("{\"seed\":-1}", "/seed", "");
    expect_422("{\"relax\":[]}", "/relax", "");
}

/* Size within max_grid_size but too many points for max_points. */
Test(req_grid, point_and_vertex_limits) {
    expect_422("{\"size\":60}", "/size", "max_points");
    parsed ok = parse("{\"size\":57}");  /* 3*57*58+1 = 9919 points */
    cr_expect_eq(ok.rc, 0, "%s", ok.prob.detail);
    done(&ok);
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    lim.max_vertices = 1000;
    parsed r = parse_with("{\"size\":10}", &lim);
    cr_expect_eq(r.rc, -1);
    cr_expect(msg_at(&r.prob, "/size") && strstr(msg_at(&r.prob, "/size"), "max_vertices"));
    done(&r);
    lim.max_vertices = 4000000;
    lim.max_points = 50;
    r = parse_with("{\"size\":4,\"points\":\"poisson\"}", &lim);
    cr_expect_eq(r.rc, -1);
    cr_expect(msg_at(&r.prob, "/size") && strstr(msg_at(&r.prob, "/size"), "max_points"));
    done(&r);
}

Test(req_grid, all_errors_in_one_response) {
    parsed r = parse("{\"size\":0,\"shape\":\"x\",\"spacing\":0,\"relax\":{\"iterations\":-1}}");
    cr_assert_eq(r.rc, -1);
    cr_expect_eq(json_array_size(r.prob.errors), 4);
    done(&r);
}

static json_t *query(const pm_api_query_pair *q, size_t n, pm_api_problem *p) {
    return pm_api_gen_grid.from_query(q, n, p);
}

Test(req_grid, get_query) {
    pm_api_query_pair q[] = {{"seed", "42"}, {"size", "3"}, {"shape", "disk"}, {"format", "glb"}};
    pm_api_problem p;
    pm_api_problem_init(&p);
    json_t *doc = query(q, 4, &p);
    cr_assert_not_null(doc, "%s", p.detail);
    pm_arena *a = pm_arena_create(0);
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    void *params;
    json_t *canon;
    cr_assert_eq(pm_api_gen_grid.parse(doc, &lim, a, &params, &canon, &p), 0, "%s", p.detail);
    const pm_grid_params *gp = params;
    cr_expect_eq(gp->seed, 42);
    cr_expect_eq(gp->size, 3);
    cr_expect_eq(gp->shape, PM_GRID_DISK);
    cr_expect_eq(gp->points, PM_GRID_LATTICE);
    /* The same request as a POST body has the same canonical form. */
    parsed r = parse("{\"seed\":42,\"size\":3,\"shape\":\"disk\"}");
    char *s = json_dumps(canon, JSON_SORT_KEYS | JSON_COMPACT);
    cr_expect_str_eq(s, r.canon_text);
    free(s);
    done(&r);
    json_decref(canon);
    json_decref(doc);
    pm_arena_destroy(a);
    pm_api_problem_free(&p);

    pm_api_query_pair bad[] = {{"size", "big"}, {"relax", "1"}};
    pm_api_problem_init(&p);
    cr_expect_null(query(bad, 2, &p));
    cr_expect_eq(p.status, 422);
    cr_expect_not_null(msg_at(&p, "/size"));
    cr_expect_str_eq(msg_at(&p, "/relax"), "unknown query parameter");
    pm_api_problem_free(&p);
}

/* Every shape and point mode passes the glTF validator (no errors or
 * warnings) in .gltf and GLB, and the JSON mesh reads back. */
Test(req_grid, outputs_validate, .timeout = 300) {
    const char *shapes[] = {"hexagon", "square", "disk"}, *points[] = {"lattice", "poisson"};
    const char *modes[] = {"square", "laplacian"};
    for (int s = 0; s < 3; s++)
        for (int m = 0; m < 2; m++) {
            char body[256];
            snprintf(body, sizeof body,
                     "{\"seed\":%d,\"size\":4,\"shape\":\"%s\",\"points\":\"%s\",\"relax\":{\"mode\":\"%s\"}}",
                     s * 2 + m, shapes[s], points[m], modes[(s + m) % 2]);
            parsed r;
            pm_test_api_build(&r, &pm_api_gen_grid, body, NULL);
            cr_assert(r.parsed && r.generated, "%s: %s", body, r.prob.detail);
            cr_expect_eq(pm_test_validate_scene(r.scene, &pm_api_gen_grid), 0, "%s", body);
            done(&r);
        }
}

Test(req_grid, cancelled_job_is_503) {
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    pm_grid_params p;
    pm_grid_defaults(&p);
    pm_arena *a = pm_arena_create(0);
    pm_api_problem prob;
    pm_api_problem_init(&prob);
    volatile int cancel = 1;
    pm_scene *s = NULL;
    cr_expect_eq(pm_api_gen_grid.generate(&p, &lim, a, &cancel, &s, &prob), -1);
    cr_expect_eq(prob.status, 503);
    pm_api_problem_free(&prob);
    pm_arena_destroy(a);
}

Test(req_grid, descriptor) {
    cr_expect_str_eq(pm_api_gen_grid.name, "grid");
    cr_expect_str_eq(pm_api_gen_grid.version, "1.0.0");
    cr_expect_eq(pm_api_find_generator("/v1/grids"), &pm_api_gen_grid);
}

/* The sizes README.md ("--max-grid-size") and docs/grid.md promise: with
 * the default limits, the largest size of each shape and point set parses
 * and the next one is a 422 naming max_points; with --max-points 27000
 * every shape reaches max_grid_size (64). */
Test(req_grid, documented_largest_sizes) {
    static const struct { const char *shape, *points; int largest; } doc[] = {
        {"hexagon", "lattice", 57}, {"disk", "lattice", 57}, {"hexagon", "poisson", 54},
        {"disk", "poisson", 49},    {"square", "lattice", 45}, {"square", "poisson", 43},
    };
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    for (size_t i = 0; i < sizeof doc / sizeof *doc; i++) {
        char text[128];
        snprintf(text, sizeof text, "{\"shape\":\"%s\",\"points\":\"%s\",\"size\":%d}", doc[i].shape,
                 doc[i].points, doc[i].largest);
        parsed ok = parse_with(text, &lim);
        cr_expect_eq(ok.rc, 0, "%s: %s", text, ok.prob.detail);
        done(&ok);
        snprintf(text, sizeof text, "{\"shape\":\"%s\",\"points\":\"%s\",\"size\":%d}", doc[i].shape,
                 doc[i].points, doc[i].largest + 1);
        parsed over = parse_with(text, &lim);
        cr_expect_eq(over.rc, -1, "%s", text);
        cr_expect(msg_at(&over.prob, "/size") && strstr(msg_at(&over.prob, "/size"), "max_points"),
                  "%s", text);
        done(&over);
    }
    pm_api_limits big = lim;
    big.max_points = 27000;
    for (size_t i = 0; i < sizeof doc / sizeof *doc; i++) {
        char text[128];
        snprintf(text, sizeof text, "{\"shape\":\"%s\",\"points\":\"%s\",\"size\":%u}", doc[i].shape,
                 doc[i].points, big.max_grid_size);
        parsed ok = parse_with(text, &big);
        cr_expect_eq(ok.rc, 0, "%s: %s", text, ok.prob.detail);
        done(&ok);
    }
}
